//! [`Timestamp`] (16 bytes) and [`Duration`] (12 bytes).

use core::fmt;

use crate::{Decode, Encode, Error, ErrorKind, FixedSize, Reader, Sink, WireSize};

const NANOS_PER_SEC: i32 = 1_000_000_000;
/// The largest UTC offset a timestamp may carry: one day, in milliseconds.
pub const MAX_OFFSET_MS: i32 = 86_400_000;

/// A point in time: seconds and nanoseconds since the Unix epoch (UTC), with the UTC offset
/// of the clock that recorded it, in milliseconds.
///
/// Wire form: `i64` seconds, `i32` nanoseconds (0..=999 999 999), `i32` offset
/// (-86 400 000..=86 400 000). The offset is informational: two timestamps are the same
/// instant when seconds and nanoseconds agree.
///
/// ```
/// use bebop_core::{Decode, Encode, Timestamp};
///
/// let t = Timestamp::new(1_700_000_000, 500, 3_600_000)?;
/// let mut buf = [0u8; 16];
/// t.encode_into(&mut buf)?;
/// assert_eq!(Timestamp::from_bytes(&buf)?, t);
///
/// // Out-of-range nanoseconds are rejected when decoding.
/// buf[8..12].copy_from_slice(&1_000_000_000i32.to_le_bytes());
/// assert!(Timestamp::from_bytes(&buf).is_err());
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Timestamp {
    seconds: i64,
    nanos: i32,
    offset_ms: i32,
}

impl Timestamp {
    /// The Unix epoch in UTC.
    pub const UNIX_EPOCH: Timestamp = Timestamp {
        seconds: 0,
        nanos: 0,
        offset_ms: 0,
    };

    /// A timestamp from its parts, checking their ranges.
    pub const fn new(seconds: i64, nanos: i32, offset_ms: i32) -> Result<Self, Error> {
        if nanos < 0
            || nanos >= NANOS_PER_SEC
            || offset_ms < -MAX_OFFSET_MS
            || offset_ms > MAX_OFFSET_MS
        {
            return Err(Error::new(ErrorKind::InvalidTimestamp, 0));
        }
        Ok(Timestamp {
            seconds,
            nanos,
            offset_ms,
        })
    }

    /// [`new`](Self::new) for constants: fails to compile when out of range.
    pub const fn new_const(seconds: i64, nanos: i32, offset_ms: i32) -> Self {
        match Self::new(seconds, nanos, offset_ms) {
            Ok(t) => t,
            Err(_) => panic!("timestamp parts out of range"),
        }
    }

    /// A UTC timestamp from whole seconds since the epoch.
    pub const fn from_unix_seconds(seconds: i64) -> Self {
        Timestamp {
            seconds,
            nanos: 0,
            offset_ms: 0,
        }
    }

    /// A UTC timestamp from milliseconds since the epoch (the unit of the HTTP
    /// `bebop-deadline` header).
    pub const fn from_unix_millis(millis: i64) -> Self {
        Timestamp {
            seconds: millis.div_euclid(1000),
            nanos: (millis.rem_euclid(1000) * 1_000_000) as i32,
            offset_ms: 0,
        }
    }

    /// Whole seconds since the epoch (floor).
    pub const fn seconds(&self) -> i64 {
        self.seconds
    }

    /// Nanoseconds past [`seconds`](Self::seconds), 0..=999 999 999.
    pub const fn nanos(&self) -> i32 {
        self.nanos
    }

    /// The recording clock's UTC offset in milliseconds.
    pub const fn offset_ms(&self) -> i32 {
        self.offset_ms
    }

    /// The same instant with another UTC offset.
    pub const fn with_offset_ms(self, offset_ms: i32) -> Result<Self, Error> {
        Self::new(self.seconds, self.nanos, offset_ms)
    }

    /// Milliseconds since the epoch (floor), saturating at the `i64` range.
    pub const fn unix_millis(&self) -> i64 {
        self.seconds
            .saturating_mul(1000)
            .saturating_add((self.nanos / 1_000_000) as i64)
    }

    /// The signed span since the Unix epoch.
    pub const fn since_epoch(&self) -> Duration {
        // seconds may be negative while nanos is not: normalise to a same-sign duration.
        if self.seconds < 0 && self.nanos > 0 {
            Duration {
                seconds: self.seconds + 1,
                nanos: self.nanos - NANOS_PER_SEC,
            }
        } else {
            Duration {
                seconds: self.seconds,
                nanos: self.nanos,
            }
        }
    }

    /// The UTC timestamp a signed span after the epoch; `None` below `i64::MIN` seconds.
    pub const fn from_since_epoch(d: Duration) -> Option<Self> {
        if d.nanos < 0 {
            match d.seconds.checked_sub(1) {
                Some(seconds) => Some(Timestamp {
                    seconds,
                    nanos: d.nanos + NANOS_PER_SEC,
                    offset_ms: 0,
                }),
                None => None,
            }
        } else {
            Some(Timestamp {
                seconds: d.seconds,
                nanos: d.nanos,
                offset_ms: 0,
            })
        }
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Timestamp({}.{:09}s, offset {}ms)",
            self.seconds, self.nanos, self.offset_ms
        )
    }
}

/// The span since the epoch; fails before the epoch.
impl TryFrom<Timestamp> for core::time::Duration {
    type Error = Error;
    fn try_from(t: Timestamp) -> Result<Self, Error> {
        core::time::Duration::try_from(t.since_epoch())
    }
}

/// The UTC timestamp this long after the epoch; fails past `i64::MAX` seconds.
impl TryFrom<core::time::Duration> for Timestamp {
    type Error = Error;
    fn try_from(d: core::time::Duration) -> Result<Self, Error> {
        Duration::try_from(d).and_then(|d| {
            Timestamp::from_since_epoch(d).ok_or(Error::new(ErrorKind::InvalidTimestamp, 0))
        })
    }
}

impl WireSize for Timestamp {
    const FIXED_SIZE: Option<usize> = Some(16);
    const MIN_SIZE: usize = 16;
}

impl FixedSize for Timestamp {
    const SIZE: usize = 16;
}

impl<'a> Decode<'a> for Timestamp {
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let at = reader.offset();
        let b = reader.read_array::<16>()?;
        let [s @ .., _, _, _, _, _, _, _, _] = *b;
        let seconds = i64::from_le_bytes(s);
        let nanos = i32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        let offset_ms = i32::from_le_bytes([b[12], b[13], b[14], b[15]]);
        Timestamp::new(seconds, nanos, offset_ms)
            .map_err(|_| Error::new(ErrorKind::InvalidTimestamp, at))
    }
}

impl Encode for Timestamp {
    #[inline]
    fn encoded_size(&self) -> usize {
        16
    }
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.seconds.to_le_bytes());
        b[8..12].copy_from_slice(&self.nanos.to_le_bytes());
        b[12..].copy_from_slice(&self.offset_ms.to_le_bytes());
        sink.write(&b)
    }
}

/// A signed span of time: seconds and nanoseconds, both <= 0 for negative spans.
///
/// Wire form: `i64` seconds, `i32` nanoseconds (-999 999 999..=999 999 999, same sign as the
/// seconds). Converts losslessly to and from `core::time::Duration` when non-negative.
///
/// ```
/// use bebop_core::Duration;
///
/// let d = Duration::new(-1, -500_000_000)?; // -1.5 s
/// assert_eq!(d.as_nanos(), -1_500_000_000);
/// assert!(Duration::new(1, -5).is_err()); // signs disagree
/// let std_d = core::time::Duration::from_millis(1500);
/// assert_eq!(core::time::Duration::try_from(Duration::try_from(std_d)?)?, std_d);
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Duration {
    seconds: i64,
    nanos: i32,
}

impl Duration {
    /// The empty span.
    pub const ZERO: Duration = Duration {
        seconds: 0,
        nanos: 0,
    };

    /// A duration from its parts, checking the nanosecond range and that the signs agree.
    pub const fn new(seconds: i64, nanos: i32) -> Result<Self, Error> {
        let in_range = nanos > -NANOS_PER_SEC && nanos < NANOS_PER_SEC;
        let mixed_signs = (seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0);
        if !in_range || mixed_signs {
            return Err(Error::new(ErrorKind::InvalidDuration, 0));
        }
        Ok(Duration { seconds, nanos })
    }

    /// [`new`](Self::new) for constants: fails to compile when invalid.
    pub const fn new_const(seconds: i64, nanos: i32) -> Self {
        match Self::new(seconds, nanos) {
            Ok(d) => d,
            Err(_) => panic!("duration parts out of range"),
        }
    }

    /// A duration of whole seconds.
    pub const fn from_secs(seconds: i64) -> Self {
        Duration { seconds, nanos: 0 }
    }

    /// A duration from signed milliseconds.
    pub const fn from_millis(millis: i64) -> Self {
        Duration {
            seconds: millis / 1000,
            nanos: ((millis % 1000) * 1_000_000) as i32,
        }
    }

    /// A duration from signed nanoseconds, `None` when the seconds overflow `i64`.
    pub const fn from_nanos(nanos: i128) -> Option<Self> {
        let secs = nanos / NANOS_PER_SEC as i128;
        if secs > i64::MAX as i128 || secs < i64::MIN as i128 {
            return None;
        }
        Some(Duration {
            seconds: secs as i64,
            nanos: (nanos % NANOS_PER_SEC as i128) as i32,
        })
    }

    /// Whole seconds (truncated toward zero).
    pub const fn seconds(&self) -> i64 {
        self.seconds
    }

    /// Nanoseconds past the whole seconds, with the same sign.
    pub const fn nanos(&self) -> i32 {
        self.nanos
    }

    /// The whole span in nanoseconds.
    pub const fn as_nanos(&self) -> i128 {
        self.seconds as i128 * NANOS_PER_SEC as i128 + self.nanos as i128
    }

    /// True for spans below zero.
    pub const fn is_negative(&self) -> bool {
        self.seconds < 0 || self.nanos < 0
    }
}

impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.is_negative() { "-" } else { "" };
        write!(
            f,
            "Duration({sign}{}.{:09}s)",
            self.seconds.unsigned_abs(),
            self.nanos.unsigned_abs()
        )
    }
}

impl TryFrom<Duration> for core::time::Duration {
    type Error = Error;
    /// Fails for negative spans.
    fn try_from(d: Duration) -> Result<Self, Error> {
        if d.is_negative() {
            return Err(Error::new(ErrorKind::InvalidDuration, 0));
        }
        Ok(core::time::Duration::new(d.seconds as u64, d.nanos as u32))
    }
}

impl TryFrom<core::time::Duration> for Duration {
    type Error = Error;
    /// Fails past `i64::MAX` seconds.
    fn try_from(d: core::time::Duration) -> Result<Self, Error> {
        let seconds =
            i64::try_from(d.as_secs()).map_err(|_| Error::new(ErrorKind::InvalidDuration, 0))?;
        Ok(Duration {
            seconds,
            nanos: d.subsec_nanos() as i32,
        })
    }
}

impl WireSize for Duration {
    const FIXED_SIZE: Option<usize> = Some(12);
    const MIN_SIZE: usize = 12;
}

impl FixedSize for Duration {
    const SIZE: usize = 12;
}

impl<'a> Decode<'a> for Duration {
    #[inline]
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let at = reader.offset();
        let b = reader.read_array::<12>()?;
        let [s @ .., _, _, _, _] = *b;
        let seconds = i64::from_le_bytes(s);
        let nanos = i32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        Duration::new(seconds, nanos).map_err(|_| Error::new(ErrorKind::InvalidDuration, at))
    }
}

impl Encode for Duration {
    #[inline]
    fn encoded_size(&self) -> usize {
        12
    }
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        let mut b = [0u8; 12];
        b[..8].copy_from_slice(&self.seconds.to_le_bytes());
        b[8..].copy_from_slice(&self.nanos.to_le_bytes());
        sink.write(&b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_ranges() {
        assert!(Timestamp::new(0, 999_999_999, MAX_OFFSET_MS).is_ok());
        assert!(Timestamp::new(0, 999_999_999, -MAX_OFFSET_MS).is_ok());
        assert!(Timestamp::new(0, 1_000_000_000, 0).is_err());
        assert!(Timestamp::new(0, -1, 0).is_err());
        assert!(Timestamp::new(0, 0, MAX_OFFSET_MS + 1).is_err());
        assert!(Timestamp::new(i64::MIN, 0, 0).is_ok());
    }

    #[test]
    fn timestamp_wire_layout() {
        let t = Timestamp::new(-2, 3, -4).unwrap();
        let mut buf = [0u8; 16];
        t.encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..8], &(-2i64).to_le_bytes());
        assert_eq!(&buf[8..12], &3i32.to_le_bytes());
        assert_eq!(&buf[12..], &(-4i32).to_le_bytes());
        assert_eq!(Timestamp::from_bytes(&buf), Ok(t));
        buf[12..].copy_from_slice(&(MAX_OFFSET_MS + 1).to_le_bytes());
        let err = Timestamp::from_bytes(&buf).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidTimestamp);
    }

    #[test]
    fn timestamps_before_the_epoch_convert_through_signed_spans() {
        let t = Timestamp::from_unix_millis(-1500);
        assert_eq!((t.seconds(), t.nanos()), (-2, 500_000_000));
        assert_eq!(t.unix_millis(), -1500);
        let d = t.since_epoch();
        assert_eq!(d.as_nanos(), -1_500_000_000);
        assert_eq!(Timestamp::from_since_epoch(d), Some(t));
        assert_eq!(
            Timestamp::from_since_epoch(Duration::new(i64::MIN, -1).unwrap()),
            None
        );
        assert!(core::time::Duration::try_from(t).is_err());
        let later = Timestamp::try_from(core::time::Duration::new(5, 7)).unwrap();
        assert_eq!(
            core::time::Duration::try_from(later),
            Ok(core::time::Duration::new(5, 7))
        );
    }

    #[test]
    fn duration_signs_must_agree() {
        assert!(Duration::new(-1, -1).is_ok());
        assert!(Duration::new(0, -1).is_ok());
        assert!(Duration::new(0, 1).is_ok());
        assert!(Duration::new(1, -1).is_err());
        assert!(Duration::new(-1, 1).is_err());
        assert!(Duration::new(0, 1_000_000_000).is_err());
        assert!(Duration::new(0, -1_000_000_000).is_err());
        let mut buf = [0u8; 12];
        Duration::from_millis(-2500).encode_into(&mut buf).unwrap();
        assert_eq!(
            Duration::from_bytes(&buf),
            Ok(Duration::new(-2, -500_000_000).unwrap())
        );
        buf[8..].copy_from_slice(&5i32.to_le_bytes());
        let err = Duration::from_bytes(&buf).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidDuration);
    }

    #[test]
    fn duration_nanos_round_trip() {
        let d = Duration::from_nanos(-1_234_567_890_123).unwrap();
        assert_eq!(d.as_nanos(), -1_234_567_890_123);
        assert!(Duration::from_nanos(i128::MAX).is_none());
        assert!(core::time::Duration::try_from(d).is_err());
    }
}

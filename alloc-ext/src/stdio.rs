//! `std` integration: a [`Sink`] over `std::io::Write` and `SystemTime` conversions.

use std::time::{Duration as StdDuration, SystemTime, UNIX_EPOCH};

use bebop_core::{Duration, Error, ErrorKind, IoError, Sink, Timestamp};

/// A [`Sink`] over any `std::io::Write`. Message lengths are computed before their bodies,
/// since a writer cannot seek back.
#[derive(Debug)]
pub struct StdWriter<'w, W> {
    inner: &'w mut W,
    written: usize,
}

impl<'w, W: std::io::Write> StdWriter<'w, W> {
    /// A sink writing into `inner`.
    pub fn new(inner: &'w mut W) -> Self {
        StdWriter { inner, written: 0 }
    }

    /// How many bytes have been written.
    pub fn written(&self) -> usize {
        self.written
    }
}

impl<W: std::io::Write> Sink for StdWriter<'_, W> {
    type Error = IoError<std::io::Error>;

    #[inline]
    fn write(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.inner.write_all(bytes).map_err(IoError::Io)?;
        self.written += bytes.len();
        Ok(())
    }

    fn write_prefixed(
        &mut self,
        body_size: impl FnOnce() -> usize,
        body: impl FnOnce(&mut Self) -> Result<(), Self::Error>,
    ) -> Result<(), Self::Error> {
        let promised = body_size();
        self.write_len(promised)?;
        let start = self.written;
        body(self)?;
        if self.written - start != promised {
            return Err(IoError::Encode(
                Error::new(ErrorKind::SizeMismatch, start).with_detail(promised as u64),
            ));
        }
        Ok(())
    }
}

/// Flattens an encode failure into a `std::io::Error` (wire errors become `InvalidData`).
pub(crate) fn into_io_error(e: IoError<std::io::Error>) -> std::io::Error {
    match e {
        IoError::Io(e) => e,
        IoError::Encode(e) => std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    }
}

/// The `SystemTime` of a timestamp (its UTC offset is dropped: it names the same instant).
///
/// ```
/// use bebop_runtime::{Timestamp, timestamp_to_system_time, system_time_to_timestamp};
///
/// let t = Timestamp::from_unix_millis(-1500);
/// let st = timestamp_to_system_time(t).unwrap();
/// assert_eq!(system_time_to_timestamp(st), Some(t));
/// ```
pub fn timestamp_to_system_time(t: Timestamp) -> Option<SystemTime> {
    let d = t.since_epoch();
    let magnitude = StdDuration::new(d.seconds().unsigned_abs(), d.nanos().unsigned_abs());
    if d.is_negative() {
        UNIX_EPOCH.checked_sub(magnitude)
    } else {
        UNIX_EPOCH.checked_add(magnitude)
    }
}

/// The UTC timestamp of a `SystemTime`, `None` outside the `i64` seconds range.
pub fn system_time_to_timestamp(st: SystemTime) -> Option<Timestamp> {
    let (magnitude, negative) = match st.duration_since(UNIX_EPOCH) {
        Ok(d) => (d, false),
        Err(e) => (e.duration(), true),
    };
    let seconds = i64::try_from(magnitude.as_secs()).ok()?;
    let nanos = magnitude.subsec_nanos() as i32;
    let d = if negative {
        Duration::new(-seconds, -nanos).ok()?
    } else {
        Duration::new(seconds, nanos).ok()?
    };
    Timestamp::from_since_epoch(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeExt;

    #[test]
    fn std_writer_matches_vec_output() {
        let v: Vec<Vec<u8>> = vec![vec![1, 2], vec![], vec![3]];
        let mut out = Vec::new();
        let n = v.write_to(&mut out).unwrap();
        assert_eq!(n, out.len());
        assert_eq!(out, v.encode_to_vec().unwrap());
    }

    #[test]
    fn io_errors_pass_through() {
        struct Full;
        impl std::io::Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let err = "x".write_to(&mut Full).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::StorageFull);
    }

    #[test]
    fn system_time_round_trips() {
        for t in [
            Timestamp::new(1_700_000_000, 123_456_789, 0).unwrap(),
            Timestamp::from_unix_millis(-1),
            Timestamp::UNIX_EPOCH,
        ] {
            let st = timestamp_to_system_time(t).unwrap();
            assert_eq!(system_time_to_timestamp(st), Some(t));
        }
    }
}

//! Frames on the wire: encoding ([`encode_frame`]), checking ([`parse_frame`]) and
//! splitting a byte stream into frames ([`Deframer`]).

use core::fmt;

use bebop_core::{Decode, Encode, Error, ErrorKind, Sink};

use crate::Crc32;
use crate::cobs::{self, Step};
use bebop_core::rpc::{FrameFlags, FrameHeader, HEADER_SIZE};

/// Bytes a frame adds around its payload before COBS: the header and the CRC.
pub const OVERHEAD: usize = HEADER_SIZE + 4;

/// The size of the cursor that follows the payload when [`FrameFlags::CURSOR`] is set.
pub const CURSOR_SIZE: usize = 8;

/// The most bytes [`encode_frame`] writes for a payload of `payload_len` bytes: COBS of
/// header + payload + cursor + CRC, then the terminating zero.
pub const fn max_wire_len(payload_len: usize) -> usize {
    cobs::max_encoded_len(OVERHEAD + payload_len + CURSOR_SIZE) + 1
}

/// One checked frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Frame<'a> {
    /// Its header.
    pub header: FrameHeader,
    /// The payload: `header.length` bytes, usually one Bebop-encoded value.
    pub payload: &'a [u8],
    /// The cursor, when [`FrameFlags::CURSOR`] is set.
    pub cursor: Option<u64>,
}

impl<'a> Frame<'a> {
    /// Decodes the payload as exactly one `T`.
    pub fn decode<T: Decode<'a>>(&self) -> Result<T, Error> {
        T::from_bytes(self.payload)
    }
}

/// Why a frame was rejected. After any of these the receiver continues with the next frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FrameError {
    /// The frame was longer than the receive buffer; it was dropped whole.
    Overflow {
        /// The buffer size.
        limit: usize,
    },
    /// The frame ended early: its COBS blocks were cut off, it was too short to hold a
    /// header and a CRC, or its header announces more bytes than arrived.
    Truncated {
        /// The payload length its header announced, when a header arrived.
        declared: Option<u32>,
        /// The bytes that arrived (after COBS decoding).
        received: usize,
    },
    /// The CRC does not match: bytes were changed in transit.
    Corrupted {
        /// The CRC the frame carries.
        carried: u32,
        /// The CRC of the bytes that arrived.
        computed: u32,
    },
    /// The CRC matches but the header's length disagrees with the bytes (a sender bug).
    LengthMismatch {
        /// The payload length the header announced.
        declared: u32,
        /// The payload bytes present.
        actual: usize,
    },
    /// A flag combination the protocol forbids (a protocol error; `docs/rpc.md`, "Frame flags").
    InvalidFlags(u8),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FrameError::Overflow { limit } => write!(f, "frame longer than {limit} bytes"),
            FrameError::Truncated {
                declared: Some(declared),
                received,
            } => write!(
                f,
                "truncated: header announces {declared} payload bytes, only {received} frame bytes arrived"
            ),
            FrameError::Truncated {
                declared: None,
                received,
            } => write!(f, "truncated: frame cut off after {received} bytes"),
            FrameError::Corrupted { carried, computed } => write!(
                f,
                "corrupted: CRC-32 {computed:#010x} of the bytes received, frame says {carried:#010x}"
            ),
            FrameError::LengthMismatch { declared, actual } => write!(
                f,
                "length mismatch: header announces {declared} payload bytes, frame holds {actual}"
            ),
            FrameError::InvalidFlags(bits) => write!(f, "invalid flag combination {bits:#04x}"),
        }
    }
}

impl core::error::Error for FrameError {}

/// Checks one COBS-decoded frame (`header | payload | [cursor] | crc32`).
pub fn parse_frame(bytes: &[u8]) -> Result<Frame<'_>, FrameError> {
    let received = bytes.len();
    let header = bytes
        .get(..HEADER_SIZE)
        .and_then(|h| <[u8; HEADER_SIZE]>::try_from(h).ok())
        .map(FrameHeader::from_wire);
    if received < OVERHEAD {
        return Err(FrameError::Truncated {
            declared: header.map(|h| h.length),
            received,
        });
    }
    let (body, crc_bytes) = bytes.split_at(received - 4);
    let carried = u32::from_le_bytes([crc_bytes[0], crc_bytes[1], crc_bytes[2], crc_bytes[3]]);
    let mut crc = Crc32::new();
    crc.update(body);
    let computed = crc.finish();
    let Some(header) = header else {
        // Unreachable: `received >= OVERHEAD` leaves room for a header, and every 9-byte
        // pattern is a valid header.
        return Err(FrameError::Truncated {
            declared: None,
            received,
        });
    };
    let extra = if header.flags.contains(FrameFlags::CURSOR) {
        CURSOR_SIZE
    } else {
        0
    };
    let declared_total = (header.length as usize)
        .saturating_add(OVERHEAD)
        .saturating_add(extra);
    if carried != computed {
        if declared_total > received {
            return Err(FrameError::Truncated {
                declared: Some(header.length),
                received,
            });
        }
        return Err(FrameError::Corrupted { carried, computed });
    }
    if declared_total != received {
        return Err(FrameError::LengthMismatch {
            declared: header.length,
            actual: received.saturating_sub(OVERHEAD + extra),
        });
    }
    if !header.flags.is_valid_combination() {
        return Err(FrameError::InvalidFlags(header.flags.bits()));
    }
    let payload_end = HEADER_SIZE + header.length as usize;
    let payload = &body[HEADER_SIZE..payload_end];
    let cursor = (extra != 0).then(|| {
        let mut c = [0u8; 8];
        c.copy_from_slice(&body[payload_end..payload_end + 8]);
        u64::from_le_bytes(c)
    });
    Ok(Frame {
        header,
        payload,
        cursor,
    })
}

/// A [`Sink`] that checksums what it is given and COBS-encodes it into a buffer.
struct FrameSink<'d> {
    cobs: cobs::Encoder<'d>,
    crc: Crc32,
}

impl Sink for FrameSink<'_> {
    type Error = Error;

    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.crc.update(bytes);
        self.cobs
            .write(bytes)
            .map_err(|_| Error::new(ErrorKind::BufferTooSmall, 0))
    }
}

/// Encodes `payload` as one frame on `stream_id` into `out` and returns the bytes written,
/// terminating zero included.
///
/// The value is encoded straight into the frame (no intermediate buffer); its
/// `encoded_size` gives the header's length. Fails with [`ErrorKind::BufferTooSmall`] when
/// `out` is too small ([`max_wire_len`] is always enough), or [`ErrorKind::TooLarge`] for a
/// payload over 4 GiB.
///
/// ```
/// use serial_link::{encode_frame, parse_frame, cobs, FrameFlags};
///
/// let mut wire = [0u8; 64];
/// let n = encode_frame(FrameFlags::END_STREAM, 2, &"hi", None, &mut wire)?;
/// assert_eq!(wire[n - 1], 0, "every frame ends with a zero");
/// assert!(!wire[..n - 1].contains(&0));
///
/// let mut plain = [0u8; 64];
/// let m = cobs::decode(&wire[..n - 1], &mut plain).unwrap();
/// let frame = parse_frame(&plain[..m]).unwrap();
/// assert_eq!(frame.header.stream_id, 2);
/// assert_eq!(frame.decode::<&str>(), Ok("hi"));
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub fn encode_frame<T: Encode + ?Sized>(
    flags: FrameFlags,
    stream_id: u32,
    payload: &T,
    cursor: Option<u64>,
    out: &mut [u8],
) -> Result<usize, Error> {
    let size = payload.encoded_size();
    let length = u32::try_from(size)
        .map_err(|_| Error::new(ErrorKind::TooLarge, 0).with_detail(size as u64))?;
    let flags = match cursor {
        Some(_) => flags | FrameFlags::CURSOR,
        None => FrameFlags::from_bits_truncate(flags.bits() & !FrameFlags::CURSOR.bits()),
    };
    let too_small =
        || Error::new(ErrorKind::BufferTooSmall, 0).with_detail(max_wire_len(size) as u64);
    let (body, _) = out
        .split_at_mut_checked(out.len().saturating_sub(1))
        .ok_or_else(too_small)?;
    let mut sink = FrameSink {
        cobs: cobs::Encoder::new(body).map_err(|_| too_small())?,
        crc: Crc32::new(),
    };
    let header = FrameHeader {
        length,
        flags,
        stream_id,
    };
    let written = (|| {
        header.encode(&mut sink)?;
        payload.encode(&mut sink)?;
        if let Some(c) = cursor {
            sink.write(&c.to_le_bytes())?;
        }
        let crc = sink.crc.finish();
        sink.cobs
            .write(&crc.to_le_bytes())
            .map_err(|_| Error::new(ErrorKind::BufferTooSmall, 0))?;
        Ok::<_, Error>(sink.cobs.finish())
    })()
    .map_err(|e: Error| match e.kind() {
        ErrorKind::BufferTooSmall => too_small(),
        _ => e,
    })?;
    out[written] = 0;
    Ok(written + 1)
}

/// Splits a byte stream into frames, one byte at a time, in a fixed buffer of `N` bytes
/// (the largest COBS-decoded frame accepted: header + payload + CRC).
///
/// Every zero byte ends a frame, good or bad, so after any error the next frame is read
/// normally: a corrupted or truncated frame costs only itself. Zero bytes with nothing before
/// them are ignored, so a sender can emit one to flush a receiver that joined mid-frame.
///
/// ```
/// use serial_link::{encode_frame, Deframer, FrameError, FrameFlags};
///
/// let mut wire = [0u8; 64];
/// let n = encode_frame(FrameFlags::NONE, 1, &42u32, None, &mut wire)?;
/// let mut deframer = Deframer::<32>::new();
/// // Garbage from joining mid-stream, ended by a zero: reported, then the frame is read.
/// let mut results = [b'x', b'y', 0].iter().chain(&wire[..n]).filter_map(|&b| {
///     deframer.push(b).map(|r| r.map(|f| f.decode::<u32>()))
/// });
/// assert!(matches!(results.next(), Some(Err(FrameError::Truncated { .. }))));
/// assert_eq!(results.next(), Some(Ok(Ok(42))));
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Deframer<const N: usize> {
    buf: [u8; N],
    len: usize,
    overflow: bool,
    cobs: cobs::Decoder,
}

impl<const N: usize> Deframer<N> {
    /// An empty deframer.
    pub const fn new() -> Self {
        Deframer {
            buf: [0; N],
            len: 0,
            overflow: false,
            cobs: cobs::Decoder::new(),
        }
    }

    /// Feeds one byte; returns a frame or an error when this byte ended one.
    pub fn push(&mut self, byte: u8) -> Option<Result<Frame<'_>, FrameError>> {
        match self.cobs.feed(byte) {
            Step::Pending => None,
            Step::Byte(b) => {
                match self.buf.get_mut(self.len) {
                    Some(slot) => {
                        *slot = b;
                        self.len += 1;
                    }
                    None => self.overflow = true,
                }
                None
            }
            Step::Empty => None,
            Step::Malformed => {
                let received = self.len;
                let declared = self.declared_length();
                self.len = 0;
                Some(Err(if self.overflow_then_clear() {
                    FrameError::Overflow { limit: N }
                } else {
                    FrameError::Truncated { declared, received }
                }))
            }
            Step::End => {
                let len = self.len;
                self.len = 0;
                if self.overflow_then_clear() {
                    return Some(Err(FrameError::Overflow { limit: N }));
                }
                Some(parse_frame(&self.buf[..len]))
            }
        }
    }

    /// The first `len` bytes of the buffer: right after [`push`](Self::push) returned a frame,
    /// that frame's COBS-decoded bytes.
    pub(crate) fn last_frame(&self, len: usize) -> &[u8] {
        &self.buf[..len.min(N)]
    }

    /// The bytes of a frame started but not finished.
    pub fn pending(&self) -> usize {
        self.len
    }

    fn declared_length(&self) -> Option<u32> {
        self.buf
            .get(..HEADER_SIZE)
            .filter(|_| self.len >= HEADER_SIZE)
            .and_then(|h| <[u8; HEADER_SIZE]>::try_from(h).ok())
            .map(FrameHeader::from_wire)
            .map(|h| h.length)
    }

    fn overflow_then_clear(&mut self) -> bool {
        core::mem::take(&mut self.overflow)
    }
}

impl<const N: usize> Default for Deframer<N> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn wire(flags: FrameFlags, stream: u32, payload: &str) -> Vec<u8> {
        let mut out = [0u8; 512];
        let n = encode_frame(flags, stream, &payload, None, &mut out).unwrap();
        assert!(n <= max_wire_len(payload.len() + 5));
        out[..n].to_vec()
    }

    fn collect(stream: &[u8]) -> Vec<Result<(u32, std::string::String), FrameError>> {
        let mut d = Deframer::<256>::new();
        stream
            .iter()
            .filter_map(|&b| {
                d.push(b).map(|r| {
                    r.map(|f| {
                        (
                            f.header.stream_id,
                            std::string::String::from(f.decode::<&str>().unwrap()),
                        )
                    })
                })
            })
            .collect()
    }

    #[test]
    fn frames_roundtrip_back_to_back() {
        let mut s = wire(FrameFlags::NONE, 1, "one");
        s.extend(wire(FrameFlags::NONE, 1, "two\0with zero"));
        s.extend(wire(FrameFlags::END_STREAM, 1, ""));
        let got = collect(&s);
        assert_eq!(
            got,
            [
                Ok((1, "one".into())),
                Ok((1, "two\0with zero".into())),
                Ok((1, "".into()))
            ]
        );
    }

    #[test]
    fn corrupted_frame_is_reported_and_the_next_one_read() {
        let good = wire(FrameFlags::NONE, 1, "payload bytes");
        let mut bad = good.clone();
        // Flip a payload byte (a COBS data byte: no zero in this payload, so position 14
        // is inside the first block).
        bad[14] ^= 0x20;
        let mut s = bad;
        s.extend(&good);
        let got = collect(&s);
        assert!(
            matches!(got[0], Err(FrameError::Corrupted { .. })),
            "{got:?}"
        );
        assert_eq!(got[1], Ok((1, "payload bytes".into())));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn truncated_frame_is_reported_and_the_next_one_read() {
        let good = wire(FrameFlags::NONE, 3, "a longer payload to cut in half");
        let mut s = good[..good.len() / 2].to_vec();
        s.push(0);
        s.extend(&good);
        let got = collect(&s);
        assert!(
            matches!(got[0], Err(FrameError::Truncated { .. })),
            "{got:?}"
        );
        assert_eq!(got[1], Ok((3, "a longer payload to cut in half".into())));
    }

    #[test]
    fn truncation_that_keeps_cobs_intact_is_still_truncation() {
        // A payload with zeros makes short COBS blocks; cut right after one.
        let payload = "ab\0cd\0ef\0gh\0ij\0kl";
        let good = wire(FrameFlags::NONE, 1, payload);
        let mut found = false;
        for cut in 2..good.len() - 1 {
            let mut s = good[..cut].to_vec();
            s.push(0);
            let mut d = Deframer::<128>::new();
            let r = s
                .iter()
                .filter_map(|&b| d.push(b).map(|r| r.map(|_| ())))
                .next();
            match r {
                Some(Err(FrameError::Truncated { declared, .. })) => {
                    found |= declared == Some((payload.len() + 5) as u32);
                }
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        assert!(found, "some cut kept the header and reported its length");
    }

    #[test]
    fn overflow_drops_the_frame_only() {
        let long = "x".repeat(300);
        let mut s = wire(FrameFlags::NONE, 1, &long);
        s.extend(wire(FrameFlags::NONE, 1, "short"));
        let got = collect(&s);
        assert_eq!(got[0], Err(FrameError::Overflow { limit: 256 }));
        assert_eq!(got[1], Ok((1, "short".into())));
    }

    #[test]
    fn garbage_and_idle_zeros_between_frames() {
        let mut s = std::vec![0, 0, 0xAA, 0xBB, 0xCC, 0, 0];
        s.extend(wire(FrameFlags::NONE, 9, "ok"));
        let got = collect(&s);
        assert!(matches!(got[0], Err(FrameError::Truncated { .. })));
        assert_eq!(got[1], Ok((9, "ok".into())));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn invalid_flags_and_length_mismatch_are_protocol_errors() {
        let s = wire(FrameFlags::ERROR, 1, "x");
        assert_eq!(collect(&s), [Err(FrameError::InvalidFlags(0x02))]);

        // A frame whose CRC is right but whose header lies about the length.
        let mut plain = std::vec![5, 0, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3];
        let crc = crate::crc32(&plain);
        plain.extend(crc.to_le_bytes());
        assert_eq!(
            parse_frame(&plain),
            Err(FrameError::LengthMismatch {
                declared: 5,
                actual: 3
            })
        );
    }

    #[test]
    fn cursor_follows_the_payload() {
        let mut out = [0u8; 64];
        let n = encode_frame(
            FrameFlags::NONE,
            1,
            &7u16,
            Some(0x0102_0304_0506_0708),
            &mut out,
        )
        .unwrap();
        let mut d = Deframer::<64>::new();
        let mut frames = out[..n].iter().filter_map(|&b| {
            d.push(b)
                .map(|r| r.map(|f| (f.header.flags, f.decode::<u16>().unwrap(), f.cursor)))
        });
        assert_eq!(
            frames.next(),
            Some(Ok((FrameFlags::CURSOR, 7, Some(0x0102_0304_0506_0708))))
        );
    }

    #[test]
    fn too_small_output_is_an_error_with_the_size_needed() {
        let mut out = [0u8; 10];
        let err = encode_frame(FrameFlags::NONE, 1, &"hello", None, &mut out).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BufferTooSmall);
        assert_eq!(err.needed(), Some(max_wire_len(10)));
        let mut out = [0u8; 40];
        assert!(encode_frame(FrameFlags::NONE, 1, &"hello", None, &mut out).is_ok());
    }
}

//! The serial link layer: protocol elements over a line that loses and damages bytes (a UART).
//!
//! A byte stream such as TCP delivers call headers and frames back to back
//! ([`StreamChannel`](super::StreamChannel)). A serial line does not: bytes are lost, flipped
//! or invented, and nothing marks where an element begins. On such a line every protocol
//! element (a length-prefixed call header or a whole frame, cursor included) travels in its
//! own **packet**:
//!
//! ```text
//! COBS( element | CRC-32 of element, 4 bytes LE ) 0x00
//! ```
//!
//! - The **CRC-32** is the IEEE 802.3 / zlib checksum ([`crc32`]), little-endian.
//! - **COBS** ([`cobs`]) rewrites element and checksum without any `0x00` byte (one byte of
//!   overhead per 254, plus one), so that a single `0x00` ends every packet.
//! - **Resynchronisation**: a receiver collects bytes up to the next `0x00`, whatever came
//!   before. A packet with a damaged byte fails its checksum, a packet cut short fails its
//!   COBS structure or its checksum; either way that one packet is dropped
//!   ([`LinkError::Damaged`]) and the next is read normally. Lone zeros (an idle line, a
//!   sender flushing the receiver) are ignored.
//! - A packet larger than the receiver's buffer is not kept, but its checksum is still
//!   computed as it streams past, so the receiver can tell an intact oversized element
//!   ([`LinkError::TooLarge`], answered `RESOURCE_EXHAUSTED`) from line noise.
//!
//! The pieces: [`encode_packet`] (into a buffer), [`write_packet`] (to an `embedded_io`
//! writer, no buffer), [`PacketDecoder`] (bytes in one at a time, as a UART interrupt
//! delivers them; checked elements out) and [`PacketChannel`], the [`Channel`](super::Channel)
//! the blocking server and client use over such a line.
//!
//! ```
//! use bebop_core::rpc::link::{PacketDecoder, LinkError, encode_packet};
//! use bebop_core::rpc::{encode_frame, parse_frame_exact, FrameFlags};
//!
//! let mut frame = [0u8; 32];
//! let n = encode_frame(&mut frame, FrameFlags::END_STREAM, 1, &"hi", None)?;
//! let mut wire = [0u8; 48];
//! let m = encode_packet(&frame[..n], &mut wire)?;
//! assert_eq!(wire[m - 1], 0);
//!
//! let mut decoder = PacketDecoder::<32>::new();
//! // Noise on the line, then the packet.
//! let mut got = [b'x', 0x07, 0].iter().chain(&wire[..m]).filter_map(|&b| {
//!     decoder.push(b).map(|r| r.map(|element| element.len()))
//! });
//! assert_eq!(got.next(), Some(Err(LinkError::Damaged)));
//! assert_eq!(got.next(), Some(Ok(n)));
//! # Ok::<(), bebop_core::Error>(())
//! ```

pub mod cobs;
mod crc;

use core::fmt;

pub use crc::{Crc32, crc32};

use super::frame::HEADER_SIZE;
use crate::{Error, ErrorKind};

/// Bytes of the checksum at the end of every packet's content.
pub const CRC_SIZE: usize = 4;

/// The most bytes an element of `element_len` bytes takes on the line, terminating zero
/// included.
pub const fn max_packet_len(element_len: usize) -> usize {
    cobs::max_encoded_len(element_len + CRC_SIZE) + 1
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum LinkError {
    /// Damaged in transit: broken COBS structure (a packet cut short), a checksum mismatch,
    /// or too short to hold a checksum.
    Damaged,
    /// An intact packet whose element is larger than the receiver's buffer. Nothing of it
    /// beyond the buffer was kept.
    TooLarge {
        /// The element's length.
        len: usize,
        /// The largest element the receiver holds.
        limit: usize,
        /// The element's first bytes (a frame's header), zero-padded.
        head: [u8; HEADER_SIZE],
    },
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Damaged => f.write_str("packet damaged in transit"),
            LinkError::TooLarge { len, limit, .. } => write!(
                f,
                "packet holds a {len}-byte element, over the receiver's limit of {limit}"
            ),
        }
    }
}

impl core::error::Error for LinkError {}

/// Encodes `element` as one packet (terminating zero included) into the front of `out`;
/// returns the packet's length. Fails with [`ErrorKind::BufferTooSmall`] (detail: the size
/// that always suffices, [`max_packet_len`]) when `out` is too small.
pub fn encode_packet(element: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    let too_small = || {
        Error::new(ErrorKind::BufferTooSmall, 0).with_detail(max_packet_len(element.len()) as u64)
    };
    let crc = crc32(element).to_le_bytes();
    let (body, _) = out
        .split_at_mut_checked(out.len().saturating_sub(1))
        .ok_or_else(too_small)?;
    let mut encoder = cobs::Encoder::new(body).map_err(|_| too_small())?;
    encoder.write(element).map_err(|_| too_small())?;
    encoder.write(&crc).map_err(|_| too_small())?;
    let n = encoder.finish();
    *out.get_mut(n).ok_or_else(too_small)? = 0;
    Ok(n + 1)
}

/// Writes `element` as one packet to `writer`, COBS-encoding it on the fly through a
/// 255-byte block on the stack (no buffer for the whole packet).
#[cfg(feature = "embedded-io")]
pub fn write_packet<W: embedded_io::Write>(writer: &mut W, element: &[u8]) -> Result<(), W::Error> {
    let crc = crc32(element).to_le_bytes();
    // block[0] is the open block's code byte; its data follow.
    let mut block = [0u8; 255];
    let mut n = 1;
    for &b in element.iter().chain(&crc) {
        if b == 0 {
            block[0] = n as u8;
            writer.write_all(&block[..n])?;
            n = 1;
            continue;
        }
        block[n] = b;
        n += 1;
        if n == 255 {
            block[0] = 0xFF;
            writer.write_all(&block)?;
            n = 1;
        }
    }
    block[0] = n as u8;
    writer.write_all(&block[..n])?;
    writer.write_all(&[0])
}

/// Turns bytes from the line into checked elements, one byte at a time, in a buffer of `N`
/// bytes (the largest element it keeps). `const`-constructible, so it can live in a
/// `static` fed by an interrupt handler.
#[derive(Clone, Debug)]
pub struct PacketDecoder<const N: usize> {
    buf: [u8; N],
    /// Decoded bytes of the packet so far (element and checksum; may exceed `N`).
    total: usize,
    /// The last four decoded bytes, oldest at `total % 4`.
    window: [u8; CRC_SIZE],
    /// Checksum of every decoded byte that has left the window.
    crc: Crc32,
    cobs: cobs::Decoder,
}

impl<const N: usize> Default for PacketDecoder<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> PacketDecoder<N> {
    /// A decoder between packets.
    pub const fn new() -> Self {
        PacketDecoder {
            buf: [0; N],
            total: 0,
            window: [0; CRC_SIZE],
            crc: Crc32::new(),
            cobs: cobs::Decoder::new(),
        }
    }

    /// Feeds one byte from the line. When it ends a packet: the packet's element (checksum
    /// removed, borrowed from the decoder until the next call), or why it was dropped.
    pub fn push(&mut self, byte: u8) -> Option<Result<&[u8], LinkError>> {
        match self.push_len(byte)? {
            Ok(len) => Some(Ok(&self.buf[..len])),
            Err(e) => Some(Err(e)),
        }
    }

    /// As [`push`](Self::push), returning the element's length; the element is
    /// [`element(len)`](Self::element) until the next byte.
    pub fn push_len(&mut self, byte: u8) -> Option<Result<usize, LinkError>> {
        match self.cobs.feed(byte) {
            cobs::Step::Pending | cobs::Step::Empty => None,
            cobs::Step::Byte(b) => {
                let slot = self.total % CRC_SIZE;
                if self.total >= CRC_SIZE {
                    self.crc.update(&[self.window[slot]]);
                }
                self.window[slot] = b;
                if let Some(dst) = self.buf.get_mut(self.total) {
                    *dst = b;
                }
                self.total = self.total.saturating_add(1);
                None
            }
            cobs::Step::Malformed => {
                self.restart();
                Some(Err(LinkError::Damaged))
            }
            cobs::Step::End => {
                let result = self.finish_packet();
                self.restart();
                Some(result)
            }
        }
    }

    /// The first `len` bytes of the buffer: after [`push_len`](Self::push_len) returned
    /// `Ok(len)`, that element.
    pub fn element(&self, len: usize) -> &[u8] {
        &self.buf[..len.min(N)]
    }

    /// Whether bytes of an unfinished packet are held.
    pub fn is_idle(&self) -> bool {
        self.total == 0 && self.cobs == cobs::Decoder::new()
    }

    /// Forgets any unfinished packet.
    pub fn reset(&mut self) {
        self.restart();
        self.cobs = cobs::Decoder::new();
    }

    fn restart(&mut self) {
        self.total = 0;
        self.crc = Crc32::new();
    }

    fn finish_packet(&self) -> Result<usize, LinkError> {
        if self.total < CRC_SIZE {
            return Err(LinkError::Damaged);
        }
        let mut sent = [0u8; CRC_SIZE];
        for (i, b) in sent.iter_mut().enumerate() {
            *b = self.window[(self.total + i) % CRC_SIZE];
        }
        if u32::from_le_bytes(sent) != self.crc.finish() {
            return Err(LinkError::Damaged);
        }
        let len = self.total - CRC_SIZE;
        if len > N {
            let mut head = [0u8; HEADER_SIZE];
            let n = HEADER_SIZE.min(N);
            head[..n].copy_from_slice(&self.buf[..n]);
            return Err(LinkError::TooLarge {
                len,
                limit: N,
                head,
            });
        }
        Ok(len)
    }
}

#[cfg(feature = "embedded-io")]
mod channel;
#[cfg(feature = "embedded-io")]
pub use channel::{LinkCounters, PacketChannel};

#[cfg(test)]
mod tests;

//! [`Channel`]: how the blocking server and client move whole protocol elements (call headers
//! and frames), over a reliable byte stream ([`StreamChannel`]) or a packet link that
//! delimits and checks each element (the serial link layer of the firmware).

use core::fmt;

use super::frame::ProtocolError;
#[cfg(feature = "embedded-io")]
use super::frame::StreamDecoder;

/// Which element the receiver expects next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Expect {
    /// A length-prefixed `CallHeader` (the start of a call).
    CallHeader,
    /// A frame.
    Frame,
}

/// Why a [`Channel`] could not deliver an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ChannelError {
    /// The peer closed the connection (end of stream), or the link is gone.
    Closed,
    /// The element was refused (too large, invalid flags, damaged in transit...). Its bytes
    /// were consumed; the channel is ready for the next element.
    Refused(ProtocolError),
    /// The transport failed; the channel should not be used again.
    Io,
    /// A packet was damaged in transit (checksum or packet framing); it was dropped and the
    /// channel is ready for the next one.
    Damaged,
}

impl fmt::Display for ChannelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelError::Closed => f.write_str("connection closed"),
            ChannelError::Refused(e) => write!(f, "element refused: {e}"),
            ChannelError::Io => f.write_str("transport failed"),
            ChannelError::Damaged => f.write_str("packet damaged in transit"),
        }
    }
}

impl core::error::Error for ChannelError {}

/// A transport of whole protocol elements for the blocking [`Server`](super::Server) and
/// [`Client`](super::Client). Object safe: handlers see it as `dyn Channel`.
pub trait Channel {
    /// Blocks until the next element arrives and copies all of it (frame header or length
    /// prefix included) into the front of `buf`; returns its length. An element larger than
    /// `buf` is refused ([`ChannelError::Refused`]) and its bytes dropped.
    fn recv(&mut self, expect: Expect, buf: &mut [u8]) -> Result<usize, ChannelError>;

    /// Sends one whole element.
    fn send(&mut self, element: &[u8]) -> Result<(), ChannelError>;

    /// Whether an element has arrived that nobody asked for yet, without blocking. A server
    /// streaming responses treats one as the client giving up on the call (a cancelling
    /// `END_STREAM` frame, or the next call). Transports that cannot tell say `false`.
    fn has_incoming(&mut self) -> bool {
        false
    }
}

impl<C: Channel + ?Sized> Channel for &mut C {
    fn recv(&mut self, expect: Expect, buf: &mut [u8]) -> Result<usize, ChannelError> {
        (**self).recv(expect, buf)
    }
    fn send(&mut self, element: &[u8]) -> Result<(), ChannelError> {
        (**self).send(element)
    }
    fn has_incoming(&mut self) -> bool {
        (**self).has_incoming()
    }
}

/// A [`Channel`] over a reliable byte stream (TCP, a pipe, a pty, a UART without losses):
/// call headers and frames back to back, as the binary transport lays them out (`docs/rpc.md`,
/// "Binary transport"). Reads go through a
/// [`StreamDecoder`], so the stream may deliver bytes in pieces of any size; its buffer of
/// `N` bytes bounds the largest element (header included), and a larger one is refused and
/// skipped without being buffered.
#[cfg(feature = "embedded-io")]
pub struct StreamChannel<T, const N: usize> {
    io: T,
    decoder: StreamDecoder<[u8; N]>,
    ahead: ReadAhead<64>,
}

/// Bytes read from a stream and not yet taken: channels read in chunks and hand the bytes
/// to their decoders as these want them.
#[cfg(feature = "embedded-io")]
pub(crate) struct ReadAhead<const N: usize> {
    buf: [u8; N],
    start: usize,
    end: usize,
}

#[cfg(feature = "embedded-io")]
impl<const N: usize> ReadAhead<N> {
    pub(crate) const fn new() -> Self {
        ReadAhead {
            buf: [0; N],
            start: 0,
            end: 0,
        }
    }

    /// The bytes waiting.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Marks `n` waiting bytes taken.
    pub(crate) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Forgets the waiting bytes.
    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Reads the next chunk from `io` (blocking until it has one); end of stream is
    /// [`ChannelError::Closed`], a read error [`ChannelError::Io`].
    pub(crate) fn refill<T: embedded_io::Read>(&mut self, io: &mut T) -> Result<(), ChannelError> {
        let n = io.read(&mut self.buf).map_err(|_| ChannelError::Io)?;
        if n == 0 {
            return Err(ChannelError::Closed);
        }
        self.start = 0;
        self.end = n;
        Ok(())
    }
}

#[cfg(feature = "embedded-io")]
impl<T: embedded_io::Read + embedded_io::Write, const N: usize> StreamChannel<T, N> {
    /// A channel over `io`.
    pub fn new(io: T) -> Self {
        StreamChannel {
            io,
            decoder: StreamDecoder::new([0; N]),
            ahead: ReadAhead::new(),
        }
    }

    /// The stream, back.
    pub fn into_inner(self) -> T {
        self.io
    }

    /// The stream.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.io
    }
}

#[cfg(feature = "embedded-io")]
impl<T: embedded_io::Read + embedded_io::Write, const N: usize> Channel for StreamChannel<T, N> {
    fn recv(&mut self, expect: Expect, buf: &mut [u8]) -> Result<usize, ChannelError> {
        // Elements larger than the caller's buffer are refused as soon as their size is
        // known, and skipped.
        self.decoder.limit_to(buf.len());
        loop {
            if self.ahead.pending().is_empty() {
                self.ahead.refill(&mut self.io)?;
            }
            let mut input = self.ahead.pending();
            let before = input.len();
            let done = match expect {
                Expect::Frame => self.decoder.next_frame(&mut input).map(|f| f.is_some()),
                Expect::CallHeader => self
                    .decoder
                    .next_call_header(&mut input)
                    .map(|h| h.is_some()),
            };
            let taken = before - input.len();
            self.ahead.consume(taken);
            if !done.map_err(ChannelError::Refused)? {
                continue;
            }
            let bytes = self.decoder.element_bytes();
            let Some(dst) = buf.get_mut(..bytes.len()) else {
                return Err(ChannelError::Refused(ProtocolError::Incomplete {
                    needed: bytes.len() - buf.len(),
                }));
            };
            dst.copy_from_slice(bytes);
            return Ok(bytes.len());
        }
    }

    fn send(&mut self, element: &[u8]) -> Result<(), ChannelError> {
        self.io.write_all(element).map_err(|_| ChannelError::Io)?;
        self.io.flush().map_err(|_| ChannelError::Io)
    }
}

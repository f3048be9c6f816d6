//! [`PacketChannel`]: the blocking server's and client's [`Channel`] over a serial line.

use super::{LinkError, PacketDecoder, write_packet};
use crate::rpc::channel::{Channel, ChannelError, Expect, ReadAhead};
use crate::rpc::frame::{HEADER_SIZE, ProtocolError};
use crate::rpc::types::FrameHeader;

/// What a [`PacketChannel`] has seen on its line, for logs and for the device's own status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LinkCounters {
    /// Intact packets received.
    pub packets: u32,
    /// Packets dropped as damaged in transit.
    pub damaged: u32,
    /// Intact packets refused as larger than the buffer.
    pub too_large: u32,
    /// Packets sent.
    pub sent: u32,
}

/// A [`Channel`] over a serial line: every call header and frame in its own COBS packet with
/// a CRC-32 (see [the module](super)). Elements of up to `N` bytes are received; a larger
/// intact one is refused (`RESOURCE_EXHAUSTED` for the server to send), a damaged one is
/// dropped ([`ChannelError::Damaged`]).
///
/// `T` is the line: `embedded_io::Read` (blocking until at least one byte), `Write` and
/// `ReadReady`, which lets a streaming server notice, between two responses, that the
/// client has sent something (a cancel or its next call) without blocking.
///
/// Before its first packet the channel sends one `0x00`, which ends whatever partial packet
/// the receiver was holding (noise from before the line came up).
///
/// ```
/// use bebop_core::rpc::{Channel, Expect, encode_frame, FrameFlags};
/// use bebop_core::rpc::link::PacketChannel;
///
/// // A line that loops back what is written (embedded_io for a byte slice and a Vec-less
/// // buffer: a tiny in-memory line).
/// struct Loop { buf: [u8; 128], head: usize, tail: usize }
/// impl embedded_io::ErrorType for Loop { type Error = core::convert::Infallible; }
/// impl embedded_io::Write for Loop {
///     fn write(&mut self, b: &[u8]) -> Result<usize, Self::Error> {
///         self.buf[self.tail..self.tail + b.len()].copy_from_slice(b);
///         self.tail += b.len();
///         Ok(b.len())
///     }
///     fn flush(&mut self) -> Result<(), Self::Error> { Ok(()) }
/// }
/// impl embedded_io::Read for Loop {
///     fn read(&mut self, b: &mut [u8]) -> Result<usize, Self::Error> {
///         let n = b.len().min(self.tail - self.head);
///         b[..n].copy_from_slice(&self.buf[self.head..self.head + n]);
///         self.head += n;
///         Ok(n)
///     }
/// }
/// impl embedded_io::ReadReady for Loop {
///     fn read_ready(&mut self) -> Result<bool, Self::Error> { Ok(self.head < self.tail) }
/// }
///
/// let mut channel = PacketChannel::<_, 64>::new(Loop { buf: [0; 128], head: 0, tail: 0 });
/// let mut frame = [0u8; 32];
/// let n = encode_frame(&mut frame, FrameFlags::END_STREAM, 1, &7u32, None)?;
/// channel.send(&frame[..n]).unwrap();
/// assert!(channel.has_incoming());
/// let mut buf = [0u8; 64];
/// assert_eq!(channel.recv(Expect::Frame, &mut buf), Ok(n));
/// assert_eq!(&buf[..n], &frame[..n]);
/// assert_eq!(channel.counters().packets, 1);
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub struct PacketChannel<T, const N: usize> {
    line: T,
    decoder: PacketDecoder<N>,
    /// Bytes read from the line and not yet fed to the decoder.
    ahead: ReadAhead<32>,
    /// A packet that [`Channel::has_incoming`] completed and nobody has received yet.
    held: Option<Result<usize, LinkError>>,
    flushed: bool,
    counters: LinkCounters,
}

impl<T, const N: usize> PacketChannel<T, N> {
    /// A channel over `line`.
    pub fn new(line: T) -> Self {
        PacketChannel {
            line,
            decoder: PacketDecoder::new(),
            ahead: ReadAhead::new(),
            held: None,
            flushed: false,
            counters: LinkCounters::default(),
        }
    }

    /// What the channel has counted so far.
    pub fn counters(&self) -> LinkCounters {
        self.counters
    }

    /// The line.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.line
    }

    /// The line, back.
    pub fn into_inner(self) -> T {
        self.line
    }

    /// Forgets any partial or held packet and buffered bytes (after the line was
    /// re-established, say); the next send flushes the receiver again.
    pub fn reset(&mut self) {
        self.decoder.reset();
        self.ahead.clear();
        self.held = None;
        self.flushed = false;
    }

    /// Feeds buffered bytes to the decoder until a packet ends; counts it.
    fn feed_buffered(&mut self) -> Option<Result<usize, LinkError>> {
        while let Some(&byte) = self.ahead.pending().first() {
            self.ahead.consume(1);
            if let Some(result) = self.decoder.push_len(byte) {
                match result {
                    Ok(_) => self.counters.packets = self.counters.packets.wrapping_add(1),
                    Err(LinkError::Damaged) => {
                        self.counters.damaged = self.counters.damaged.wrapping_add(1)
                    }
                    Err(LinkError::TooLarge { .. }) => {
                        self.counters.too_large = self.counters.too_large.wrapping_add(1)
                    }
                }
                return Some(result);
            }
        }
        None
    }

    /// Hands a finished packet to the caller of `recv`.
    fn deliver(
        &self,
        result: Result<usize, LinkError>,
        expect: Expect,
        buf: &mut [u8],
    ) -> Result<usize, ChannelError> {
        match result {
            Ok(len) => {
                let element = self.decoder.element(len);
                if let Some(e) = refuse(element, len, expect, buf.len()) {
                    return Err(ChannelError::Refused(e));
                }
                buf[..len].copy_from_slice(element);
                Ok(len)
            }
            Err(LinkError::Damaged) => Err(ChannelError::Damaged),
            Err(LinkError::TooLarge { len, limit, head }) => {
                Err(ChannelError::Refused(too_large(&head, len, limit, expect)))
            }
        }
    }
}

/// Why an intact element of `len` bytes cannot go into a buffer of `cap` bytes, if it cannot.
/// A frame is also refused when its header declares more payload than the buffer holds,
/// however few bytes the packet carried.
fn refuse(element: &[u8], len: usize, expect: Expect, cap: usize) -> Option<ProtocolError> {
    // (No let chain: the crates build with Rust 1.85.)
    let head = match expect {
        Expect::Frame => element.first_chunk::<HEADER_SIZE>(),
        _ => None,
    };
    if let Some(head) = head {
        let header = FrameHeader::from_wire(*head);
        if header.body_len() > cap.saturating_sub(HEADER_SIZE) as u64 {
            return Some(ProtocolError::FrameTooLarge {
                stream_id: header.stream_id,
                declared: header.length,
                limit: cap.saturating_sub(HEADER_SIZE) as u32,
            });
        }
    }
    (len > cap).then(|| too_large(&[], len, cap, expect))
}

fn too_large(head: &[u8], len: usize, limit: usize, expect: Expect) -> ProtocolError {
    match (expect, head.first_chunk::<HEADER_SIZE>()) {
        (Expect::Frame, Some(h)) => {
            let header = FrameHeader::from_wire(*h);
            ProtocolError::FrameTooLarge {
                stream_id: header.stream_id,
                declared: header.length,
                limit: limit.saturating_sub(HEADER_SIZE) as u32,
            }
        }
        _ => ProtocolError::CallHeaderTooLarge {
            declared: len as u32,
            limit: limit as u32,
        },
    }
}

impl<T, const N: usize> Channel for PacketChannel<T, N>
where
    T: embedded_io::Read + embedded_io::Write + embedded_io::ReadReady,
{
    fn recv(&mut self, expect: Expect, buf: &mut [u8]) -> Result<usize, ChannelError> {
        if let Some(result) = self.held.take() {
            return self.deliver(result, expect, buf);
        }
        loop {
            if let Some(result) = self.feed_buffered() {
                return self.deliver(result, expect, buf);
            }
            self.ahead.refill(&mut self.line)?;
        }
    }

    fn send(&mut self, element: &[u8]) -> Result<(), ChannelError> {
        if !self.flushed {
            self.line.write_all(&[0]).map_err(|_| ChannelError::Io)?;
            self.flushed = true;
        }
        write_packet(&mut self.line, element).map_err(|_| ChannelError::Io)?;
        self.line.flush().map_err(|_| ChannelError::Io)?;
        self.counters.sent = self.counters.sent.wrapping_add(1);
        Ok(())
    }

    /// True when an intact element (or an intact oversized one) has arrived; damaged
    /// packets do not count. Reads only what the line already has.
    fn has_incoming(&mut self) -> bool {
        loop {
            if self.held.is_some() {
                return true;
            }
            match self.feed_buffered() {
                Some(Err(LinkError::Damaged)) => continue,
                Some(result) => {
                    self.held = Some(result);
                    return true;
                }
                None => {}
            }
            if !self.line.read_ready().unwrap_or(false) {
                return false;
            }
            // Closed or failed: the next receive says so.
            if self.ahead.refill(&mut self.line).is_err() {
                return false;
            }
        }
    }
}

//! Frames (a 9-byte [`FrameHeader`], the payload, and an optional 8-byte cursor) and the
//! length-prefixed [`CallHeader`]: encoding into caller buffers or an `embedded_io::Write`,
//! whole-slice parsing, and [`StreamDecoder`], which takes a byte stream in chunks of any
//! size.

use core::fmt;

use super::types::{CallHeader, FrameFlags, FrameHeader, StatusCode};
use crate::{Decode, Encode, Error, ErrorKind, Reader, Sink, WireSize};

/// The size of a frame header on the wire.
pub const HEADER_SIZE: usize = 9;
/// The size of the cursor that follows the payload of a frame with [`FrameFlags::CURSOR`].
pub const CURSOR_SIZE: usize = 8;
/// The size of the length prefix in front of a [`CallHeader`].
pub const CALL_HEADER_PREFIX: usize = 4;

impl FrameFlags {
    /// Whether the combination is allowed: `ERROR` and `TRAILER` each need `END_STREAM`,
    /// and they never come together (`docs/rpc.md`, "Frame flags"). Reserved bits play no part.
    ///
    /// ```
    /// use bebop_core::rpc::FrameFlags as F;
    /// assert!((F::END_STREAM | F::ERROR).is_valid_combination());
    /// assert!(!F::TRAILER.is_valid_combination());
    /// assert!(!(F::END_STREAM | F::ERROR | F::TRAILER).is_valid_combination());
    /// ```
    pub const fn is_valid_combination(self) -> bool {
        let end = self.contains(Self::END_STREAM);
        let error = self.contains(Self::ERROR);
        let trailer = self.contains(Self::TRAILER);
        !((error || trailer) && !end) && !(error && trailer)
    }
}

impl FrameHeader {
    /// Reads a header from its 9 bytes. Reserved flag bits (0x20 and up) are dropped, as the
    /// protocol requires of receivers; no combination is checked here.
    pub const fn from_wire(bytes: [u8; HEADER_SIZE]) -> Self {
        FrameHeader {
            length: u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            flags: FrameFlags::from_bits_truncate(bytes[4]),
            stream_id: u32::from_le_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]),
        }
    }

    /// The header's 9 bytes; reserved flag bits are sent as zero.
    pub const fn to_wire(&self) -> [u8; HEADER_SIZE] {
        let l = self.length.to_le_bytes();
        let s = self.stream_id.to_le_bytes();
        let f = self.flags.bits() & FrameFlags::all().bits();
        [l[0], l[1], l[2], l[3], f, s[0], s[1], s[2], s[3]]
    }

    /// The bytes that follow the header: the payload and, with `CURSOR`, the cursor.
    pub const fn body_len(&self) -> u64 {
        self.length as u64
            + if self.flags.contains(FrameFlags::CURSOR) {
                CURSOR_SIZE as u64
            } else {
                0
            }
    }
}

/// One frame: its header, its payload and its cursor, borrowed from the bytes it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Frame<'a> {
    /// The header, reserved flag bits dropped.
    pub header: FrameHeader,
    /// `header.length` bytes: a Bebop value, an `RpcError` (`ERROR`) or a `TrailingMetadata`
    /// (`TRAILER`).
    pub payload: &'a [u8],
    /// The cursor, when `CURSOR` is set.
    pub cursor: Option<u64>,
}

impl<'a> Frame<'a> {
    /// The frame's flags.
    pub const fn flags(&self) -> FrameFlags {
        self.header.flags
    }

    /// The frame's stream id.
    pub const fn stream_id(&self) -> u32 {
        self.header.stream_id
    }

    /// Whether the sender sends nothing more on this stream.
    pub const fn is_end(&self) -> bool {
        self.header.flags.contains(FrameFlags::END_STREAM)
    }

    /// Decodes the payload as exactly one `T`.
    pub fn decode<T: Decode<'a>>(&self) -> Result<T, Error> {
        T::from_bytes(self.payload)
    }
}

/// A protocol element that cannot be accepted. After any of these, a [`StreamDecoder`] has
/// skipped the element's bytes (when it knew how many) and reads the next one normally; a
/// connection-oriented server usually answers and closes, a packet link just answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ProtocolError {
    /// A frame's declared payload is larger than the receiver accepts. Nothing of it was
    /// buffered.
    FrameTooLarge {
        /// The frame's stream.
        stream_id: u32,
        /// The payload length the header declares.
        declared: u32,
        /// The largest payload accepted.
        limit: u32,
    },
    /// A frame's flags break the rules of `docs/rpc.md`, "Frame flags".
    InvalidFlags {
        /// The frame's stream.
        stream_id: u32,
        /// The flag bits (reserved bits dropped).
        flags: u8,
    },
    /// A frame has `COMPRESSED` set, but no compression was negotiated: this
    /// implementation offers none (`docs/rpc.md`, "Not implemented"), so a sender may not
    /// compress.
    Compressed {
        /// The frame's stream.
        stream_id: u32,
    },
    /// A call header's declared length is larger than the receiver accepts.
    CallHeaderTooLarge {
        /// The message length its prefix declares.
        declared: u32,
        /// The largest accepted.
        limit: u32,
    },
    /// A call header's bytes do not decode as a `CallHeader`.
    InvalidCallHeader(Error),
    /// The input ends inside an element (whole-slice parsing only; a [`StreamDecoder`]
    /// waits for more input instead).
    Incomplete {
        /// How many more bytes the element needs at least.
        needed: usize,
    },
    /// Bytes are left over after a complete element (packet links carry one element per
    /// packet).
    TrailingBytes {
        /// How many.
        extra: usize,
    },
}

impl ProtocolError {
    /// The status an answer to this error carries: `RESOURCE_EXHAUSTED` for the size limits,
    /// `UNIMPLEMENTED` for a compressed frame, `INVALID_ARGUMENT` for the rest.
    pub const fn status_code(&self) -> StatusCode {
        match self {
            ProtocolError::FrameTooLarge { .. } | ProtocolError::CallHeaderTooLarge { .. } => {
                StatusCode::ResourceExhausted
            }
            ProtocolError::Compressed { .. } => StatusCode::Unimplemented,
            _ => StatusCode::InvalidArgument,
        }
    }

    /// The stream the element belonged to, when it was a frame whose header arrived.
    pub const fn stream_id(&self) -> Option<u32> {
        match self {
            ProtocolError::FrameTooLarge { stream_id, .. }
            | ProtocolError::InvalidFlags { stream_id, .. }
            | ProtocolError::Compressed { stream_id } => Some(*stream_id),
            _ => None,
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::FrameTooLarge {
                stream_id,
                declared,
                limit,
            } => write!(
                f,
                "frame on stream {stream_id} declares {declared} payload bytes, over the limit of {limit}"
            ),
            ProtocolError::InvalidFlags { stream_id, flags } => write!(
                f,
                "frame on stream {stream_id} has the invalid flag combination {flags:#04x}"
            ),
            ProtocolError::Compressed { stream_id } => write!(
                f,
                "frame on stream {stream_id} is compressed, but no compression was negotiated"
            ),
            ProtocolError::CallHeaderTooLarge { declared, limit } => write!(
                f,
                "call header declares {declared} bytes, over the limit of {limit}"
            ),
            ProtocolError::InvalidCallHeader(e) => write!(f, "invalid call header: {e}"),
            ProtocolError::Incomplete { needed } => {
                write!(f, "element incomplete: {needed} more bytes needed")
            }
            ProtocolError::TrailingBytes { extra } => {
                write!(f, "{extra} bytes left over after the element")
            }
        }
    }
}

impl core::error::Error for ProtocolError {}

/// Bytes that are already Bebop-encoded, written as they are: a payload passed through, or
/// one encoded ahead of time.
///
/// ```
/// use bebop_core::{Encode, rpc::Encoded};
/// let mut out = [0u8; 4];
/// assert_eq!(Encoded(&[1, 2, 3]).encode_into(&mut out)?, 3);
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoded<'a>(pub &'a [u8]);

impl WireSize for Encoded<'_> {
    const MIN_SIZE: usize = 0;
}

impl Encode for Encoded<'_> {
    fn encoded_size(&self) -> usize {
        self.0.len()
    }
    fn encode<S: Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write(self.0)
    }
}

/// The number of bytes a frame with `payload_len` payload bytes takes on the wire.
pub const fn frame_len(payload_len: usize, with_cursor: bool) -> usize {
    HEADER_SIZE + payload_len + if with_cursor { CURSOR_SIZE } else { 0 }
}

/// Encodes a frame carrying `payload` into the front of `out` and returns its length.
///
/// The payload is encoded straight into place, in one pass; the header's length is written
/// afterwards.
/// `CURSOR` is set exactly when `cursor` is `Some`; reserved flag bits are dropped. Fails with
/// [`ErrorKind::BufferTooSmall`] (detail: the size needed) when `out` is too small, writing
/// nothing useful.
///
/// ```
/// use bebop_core::rpc::{encode_frame, parse_frame, FrameFlags};
///
/// // docs/rpc.md, "Example: a unary call on the wire": the request frame of
/// // `HelloRequest { name: "Alice" }`.
/// let mut out = [0u8; 32];
/// let n = encode_frame(&mut out, FrameFlags::END_STREAM, 0, &"Alice", None)?;
/// assert_eq!(&out[..9], [0x0a, 0, 0, 0, 0x01, 0, 0, 0, 0]);
/// assert_eq!(&out[9..n], b"\x05\0\0\0Alice\0");
///
/// let (frame, used) = parse_frame(&out[..n], 1024).unwrap();
/// assert_eq!(used, n);
/// assert_eq!(frame.decode::<&str>()?, "Alice");
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub fn encode_frame<T: Encode + ?Sized>(
    out: &mut [u8],
    flags: FrameFlags,
    stream_id: u32,
    payload: &T,
    cursor: Option<u64>,
) -> Result<usize, Error> {
    // One pass over the payload: it is encoded in place, and its size is what it took. (An
    // `out` shorter than a header gives an empty body, which fails like a short one.)
    let too_small = |payload_len: usize| {
        Error::new(ErrorKind::BufferTooSmall, 0)
            .with_detail(frame_len(payload_len, cursor.is_some()) as u64)
    };
    let body = out.get_mut(HEADER_SIZE..).unwrap_or_default();
    let size = payload.encode_into(body).map_err(|e| match e.needed() {
        Some(n) if e.kind() == ErrorKind::BufferTooSmall => too_small(n),
        _ => e,
    })?;
    let header = header_for(size, flags, stream_id, cursor.is_some())?;
    let total = frame_len(size, cursor.is_some());
    let Some(dst) = out.get_mut(..total) else {
        return Err(too_small(size));
    };
    let (head, rest) = dst.split_at_mut(HEADER_SIZE);
    head.copy_from_slice(&header);
    if let Some(c) = cursor {
        rest[size..].copy_from_slice(&c.to_le_bytes());
    }
    Ok(total)
}

/// Appends a frame carrying `payload` to `out` and returns its length: [`encode_frame`] for
/// a growing buffer.
///
/// The payload is encoded in one pass, appended after a placeholder header that is filled in
/// afterwards; nothing sizes it first. On an error (a payload over 4 GiB), `out` is left as
/// it was.
///
/// ```
/// use bebop_core::rpc::{append_frame, parse_frame, FrameFlags};
///
/// let mut out = vec![0xEE];
/// let n = append_frame(&mut out, FrameFlags::END_STREAM, 0, &"Alice", Some(7))?;
/// assert_eq!(n, out.len() - 1);
/// let (frame, used) = parse_frame(&out[1..], 1024).unwrap();
/// assert_eq!((used, frame.cursor), (n, Some(7)));
/// assert_eq!(frame.decode::<&str>()?, "Alice");
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub fn append_frame<T: Encode + ?Sized>(
    out: &mut alloc::vec::Vec<u8>,
    flags: FrameFlags,
    stream_id: u32,
    payload: &T,
    cursor: Option<u64>,
) -> Result<usize, Error> {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER_SIZE]);
    let encoded = payload
        .encode(out)
        .map(|()| out.len() - start - HEADER_SIZE)
        .and_then(|size| Ok((size, header_for(size, flags, stream_id, cursor.is_some())?)))
        .inspect_err(|_| out.truncate(start));
    let (size, header) = encoded?;
    out[start..start + HEADER_SIZE].copy_from_slice(&header);
    if let Some(c) = cursor {
        out.extend_from_slice(&c.to_le_bytes());
    }
    Ok(frame_len(size, cursor.is_some()))
}

/// Writes a frame carrying `payload` to an `embedded_io::Write`, without an intermediate
/// buffer (the payload's size is computed first). Returns the bytes written.
#[cfg(feature = "embedded-io")]
pub fn write_frame<W: embedded_io::Write, T: Encode + ?Sized>(
    writer: &mut W,
    flags: FrameFlags,
    stream_id: u32,
    payload: &T,
    cursor: Option<u64>,
) -> Result<usize, crate::IoError<W::Error>> {
    let size = payload.encoded_size();
    let header = header_for(size, flags, stream_id, cursor.is_some())?;
    writer.write_all(&header).map_err(crate::IoError::Io)?;
    payload.encode_to_io(writer)?;
    if let Some(c) = cursor {
        writer
            .write_all(&c.to_le_bytes())
            .map_err(crate::IoError::Io)?;
    }
    Ok(frame_len(size, cursor.is_some()))
}

/// The header of a frame whose payload takes `size` bytes, `CURSOR` set exactly when `cursor`
/// is; [`ErrorKind::TooLarge`] for a payload over `u32::MAX` bytes.
fn header_for(
    size: usize,
    flags: FrameFlags,
    stream_id: u32,
    cursor: bool,
) -> Result<[u8; HEADER_SIZE], Error> {
    let length = u32::try_from(size)
        .map_err(|_| Error::new(ErrorKind::TooLarge, 0).with_detail(size as u64))?;
    let header = FrameHeader {
        length,
        flags: with_cursor_flag(flags, cursor),
        stream_id,
    };
    Ok(header.to_wire())
}

fn with_cursor_flag(flags: FrameFlags, cursor: bool) -> FrameFlags {
    let flags = flags.intersection(FrameFlags::all());
    if cursor {
        flags.union(FrameFlags::CURSOR)
    } else {
        flags.difference(FrameFlags::CURSOR)
    }
}

/// Encodes a call header (its length prefix included: a `CallHeader` is a message) into the
/// front of `out` and returns its length.
///
/// ```
/// use bebop_core::rpc::{encode_call_header, CallHeader};
///
/// // docs/rpc.md, "Example: a unary call on the wire": a call of method 0x1a2b3c4d.
/// let header = CallHeader { method_id: Some(0x1a2b_3c4d), ..Default::default() };
/// let mut out = [0u8; 16];
/// let n = encode_call_header(&mut out, &header)?;
/// assert_eq!(&out[..n], [0x06, 0, 0, 0, 0x01, 0x4d, 0x3c, 0x2b, 0x1a, 0x00]);
/// # Ok::<(), bebop_core::Error>(())
/// ```
pub fn encode_call_header(out: &mut [u8], header: &CallHeader<'_>) -> Result<usize, Error> {
    header.encode_into(out)
}

/// Parses one frame from the front of `bytes`; returns it and the bytes it took.
///
/// Checks, in order: a whole header, the declared payload against `max_payload`
/// ([`ProtocolError::FrameTooLarge`]), the flag rules ([`ProtocolError::InvalidFlags`]), and a
/// whole body ([`ProtocolError::Incomplete`] with the bytes missing).
pub fn parse_frame(bytes: &[u8], max_payload: usize) -> Result<(Frame<'_>, usize), ProtocolError> {
    let Some(head) = bytes.first_chunk::<HEADER_SIZE>() else {
        return Err(ProtocolError::Incomplete {
            needed: HEADER_SIZE - bytes.len(),
        });
    };
    let header = FrameHeader::from_wire(*head);
    check_header(&header, max_payload)?;
    let body = &bytes[HEADER_SIZE..];
    let length = header.length as usize;
    let body_len = header.body_len() as usize;
    if body.len() < body_len {
        return Err(ProtocolError::Incomplete {
            needed: body_len - body.len(),
        });
    }
    let cursor = cursor_of(&header, &body[length..body_len]);
    Ok((
        Frame {
            header,
            payload: &body[..length],
            cursor,
        },
        HEADER_SIZE + body_len,
    ))
}

/// Parses a packet that holds exactly one frame (a packet link's unit).
pub fn parse_frame_exact(bytes: &[u8], max_payload: usize) -> Result<Frame<'_>, ProtocolError> {
    let (frame, used) = parse_frame(bytes, max_payload)?;
    match bytes.len() - used {
        0 => Ok(frame),
        extra => Err(ProtocolError::TrailingBytes { extra }),
    }
}

/// Parses one length-prefixed call header from the front of `bytes`; returns it and the
/// bytes it took. `limit` bounds the message length the prefix may declare.
pub fn parse_call_header(
    bytes: &[u8],
    limit: usize,
) -> Result<(CallHeader<'_>, usize), ProtocolError> {
    let Some(prefix) = bytes.first_chunk::<CALL_HEADER_PREFIX>() else {
        return Err(ProtocolError::Incomplete {
            needed: CALL_HEADER_PREFIX - bytes.len(),
        });
    };
    let declared = u32::from_le_bytes(*prefix);
    if declared as usize > limit {
        return Err(ProtocolError::CallHeaderTooLarge {
            declared,
            limit: clamp_u32(limit),
        });
    }
    // The decoder tells a header that has not fully arrived (more bytes will complete it)
    // from a corrupt one.
    let mut reader = Reader::new(bytes);
    match CallHeader::decode(&mut reader) {
        Ok(header) => Ok((header, reader.offset())),
        Err(e) if e.is_incomplete() => Err(ProtocolError::Incomplete {
            needed: e.bytes_missing().unwrap_or(1),
        }),
        Err(e) => Err(ProtocolError::InvalidCallHeader(e)),
    }
}

/// Parses a packet that holds exactly one call header.
pub fn parse_call_header_exact(
    bytes: &[u8],
    limit: usize,
) -> Result<CallHeader<'_>, ProtocolError> {
    let (header, used) = parse_call_header(bytes, limit)?;
    match bytes.len() - used {
        0 => Ok(header),
        extra => Err(ProtocolError::TrailingBytes { extra }),
    }
}

fn decode_call_header(element: &[u8]) -> Result<CallHeader<'_>, ProtocolError> {
    CallHeader::from_bytes(element).map_err(ProtocolError::InvalidCallHeader)
}

fn check_header(header: &FrameHeader, max_payload: usize) -> Result<(), ProtocolError> {
    if header.length as usize > max_payload {
        return Err(ProtocolError::FrameTooLarge {
            stream_id: header.stream_id,
            declared: header.length,
            limit: clamp_u32(max_payload),
        });
    }
    if !header.flags.is_valid_combination() {
        return Err(ProtocolError::InvalidFlags {
            stream_id: header.stream_id,
            flags: header.flags.bits(),
        });
    }
    if header.flags.contains(FrameFlags::COMPRESSED) {
        return Err(ProtocolError::Compressed {
            stream_id: header.stream_id,
        });
    }
    Ok(())
}

fn cursor_of(header: &FrameHeader, bytes: &[u8]) -> Option<u64> {
    if !header.flags.contains(FrameFlags::CURSOR) {
        return None;
    }
    bytes
        .first_chunk::<CURSOR_SIZE>()
        .map(|c| u64::from_le_bytes(*c))
}

const fn clamp_u32(n: usize) -> u32 {
    if n > u32::MAX as usize {
        u32::MAX
    } else {
        n as u32
    }
}

/// What a [`StreamDecoder`] is in the middle of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between elements.
    Idle,
    /// Collecting a frame header (bytes so far in `head`).
    FrameHead { have: usize },
    /// Collecting a frame's payload and cursor into the buffer.
    FrameBody { header: FrameHeader, have: usize },
    /// Collecting a call header's prefix.
    CallPrefix { have: usize },
    /// Collecting a call header's message into the buffer (prefix included).
    CallBody { total: usize, have: usize },
    /// Dropping the body of an element that was refused.
    Skip { remaining: u64 },
    /// An element of `len` bytes was returned; the next call starts afresh.
    Done { len: usize },
}

/// Which element a [`StreamDecoder`] call asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    Frame,
    CallHeader,
}

/// Splits a byte stream into call headers and frames, taking input in chunks of any size
/// (down to the single bytes a UART interrupt delivers) and keeping each element in a buffer
/// the caller supplies: an array on a microcontroller, a `Vec` on a host.
///
/// Limits: a whole frame (header, payload, cursor) and a whole call header must fit the
/// buffer, and a
/// frame's payload must not exceed the configured maximum. Anything larger is refused as soon
/// as its header arrives ([`ProtocolError::FrameTooLarge`] or
/// [`ProtocolError::CallHeaderTooLarge`], status `RESOURCE_EXHAUSTED`) and its bytes are
/// skipped as they come, never buffered. A frame with an invalid flag combination is refused
/// and skipped the same way.
///
/// ```
/// use bebop_core::rpc::{encode_frame, FrameFlags, StreamDecoder};
///
/// let mut wire = [0u8; 64];
/// let n = encode_frame(&mut wire, FrameFlags::NONE, 1, &"one", Some(100))?;
/// let m = encode_frame(&mut wire[n..], FrameFlags::END_STREAM, 1, &"two", None)?;
///
/// let mut decoder = StreamDecoder::new([0u8; 32]);
/// let mut seen = 0;
/// // One byte at a time, as from an interrupt.
/// for byte in &wire[..n + m] {
///     let mut input = core::slice::from_ref(byte);
///     if let Some(frame) = decoder.next_frame(&mut input).unwrap() {
///         let text: &str = frame.decode()?;
///         assert_eq!((text, frame.cursor), if seen == 0 { ("one", Some(100)) } else { ("two", None) });
///         seen += 1;
///     }
/// }
/// assert_eq!(seen, 2);
/// # Ok::<(), bebop_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct StreamDecoder<B> {
    buf: B,
    max_payload: usize,
    max_call_header: usize,
    /// The caller's buffer for the elements now coming ([`Self::limit_to`]).
    cap: usize,
    head: [u8; HEADER_SIZE],
    state: State,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> StreamDecoder<B> {
    /// A decoder keeping elements in `buf`; the payload limit is what the buffer holds.
    pub fn new(buf: B) -> Self {
        let own = buf.as_ref().len();
        StreamDecoder {
            buf,
            max_payload: own.saturating_sub(HEADER_SIZE),
            max_call_header: own,
            cap: usize::MAX,
            head: [0; HEADER_SIZE],
            state: State::Idle,
        }
    }

    /// Lowers the largest frame payload accepted (it never exceeds the buffer).
    pub fn with_max_payload(mut self, max: usize) -> Self {
        self.max_payload = max.min(self.buf.as_ref().len());
        self
    }

    /// Sets the largest call header accepted, prefix included (it never exceeds the
    /// buffer).
    pub fn with_max_call_header(mut self, max: usize) -> Self {
        self.max_call_header = max.min(self.buf.as_ref().len());
        self
    }

    /// Limits the elements that start from now on to what a buffer of `len` bytes holds (a
    /// whole frame or a whole call header), on top of the decoder's own buffer and limits
    /// (which a later call with a larger `len` restores).
    pub fn limit_to(&mut self, len: usize) {
        self.cap = len;
    }

    fn payload_limit(&self) -> usize {
        self.max_payload.min(self.cap.saturating_sub(HEADER_SIZE))
    }

    fn call_header_limit(&self) -> usize {
        self.max_call_header.min(self.cap)
    }

    /// The largest frame payload accepted.
    pub fn max_payload(&self) -> usize {
        self.max_payload
    }

    /// Whether the decoder is between elements (nothing partial held, nothing to skip).
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle | State::Done { .. })
    }

    /// Forgets any partial element (after a reconnect, say).
    pub fn reset(&mut self) {
        self.state = State::Idle;
    }

    /// Takes bytes from the front of `input` (advancing it) until a frame is complete, and
    /// returns it, borrowed from the buffer. `Ok(None)`: `input` was used up and more is
    /// needed. An error refuses one frame; its remaining bytes are skipped on later calls.
    pub fn next_frame(&mut self, input: &mut &[u8]) -> Result<Option<Frame<'_>>, ProtocolError> {
        if !self.advance(input, Want::Frame)? {
            return Ok(None);
        }
        let bytes = self.element_bytes();
        let header = FrameHeader::from_wire(self.head);
        let length = header.length as usize;
        let body = &bytes[HEADER_SIZE..];
        Ok(Some(Frame {
            header,
            payload: &body[..length],
            cursor: cursor_of(&header, &body[length..]),
        }))
    }

    /// Takes bytes from the front of `input` until a call header (prefix and message) is
    /// complete, and returns it decoded, borrowed from the buffer. `Ok(None)`: more input is
    /// needed.
    pub fn next_call_header(
        &mut self,
        input: &mut &[u8],
    ) -> Result<Option<CallHeader<'_>>, ProtocolError> {
        if !self.advance(input, Want::CallHeader)? {
            return Ok(None);
        }
        decode_call_header(self.element_bytes()).map(Some)
    }

    /// The whole last element returned (frame header or length prefix included); empty
    /// when none was.
    pub fn element_bytes(&self) -> &[u8] {
        match self.state {
            State::Done { len } => &self.buf.as_ref()[..len],
            _ => &[],
        }
    }

    /// Runs the state machine; `Ok(true)` when an element of the wanted kind is complete.
    fn advance(&mut self, input: &mut &[u8], want: Want) -> Result<bool, ProtocolError> {
        loop {
            match self.state {
                State::Done { .. } | State::Idle => {
                    self.state = match want {
                        Want::Frame => State::FrameHead { have: 0 },
                        Want::CallHeader => State::CallPrefix { have: 0 },
                    };
                }
                State::Skip { remaining } => {
                    let n = remaining.min(input.len() as u64) as usize;
                    *input = &input[n..];
                    let remaining = remaining - n as u64;
                    if remaining > 0 {
                        self.state = State::Skip { remaining };
                        return Ok(false);
                    }
                    self.state = State::Idle;
                }
                State::FrameHead { have } if want == Want::Frame => {
                    let have = take_into(&mut self.head[have..HEADER_SIZE], input) + have;
                    if have < HEADER_SIZE {
                        self.state = State::FrameHead { have };
                        return Ok(false);
                    }
                    let header = FrameHeader::from_wire(self.head);
                    let fits =
                        HEADER_SIZE as u64 + header.body_len() <= self.buf.as_ref().len() as u64;
                    let checked = check_header(&header, self.payload_limit()).and_then(|()| {
                        if fits {
                            Ok(())
                        } else {
                            Err(ProtocolError::FrameTooLarge {
                                stream_id: header.stream_id,
                                declared: header.length,
                                limit: clamp_u32(self.payload_limit()),
                            })
                        }
                    });
                    if let Err(e) = checked {
                        self.state = State::Skip {
                            remaining: header.body_len(),
                        };
                        return Err(e);
                    }
                    self.buf.as_mut()[..HEADER_SIZE].copy_from_slice(&self.head);
                    self.state = State::FrameBody {
                        header,
                        have: HEADER_SIZE,
                    };
                }
                State::FrameBody { header, have } if want == Want::Frame => {
                    let total = HEADER_SIZE + header.body_len() as usize;
                    let have = take_into(&mut self.buf.as_mut()[have..total], input) + have;
                    if have < total {
                        self.state = State::FrameBody { header, have };
                        return Ok(false);
                    }
                    self.state = State::Done { len: total };
                    return Ok(true);
                }
                State::CallPrefix { have } if want == Want::CallHeader => {
                    let have = take_into(&mut self.head[have..CALL_HEADER_PREFIX], input) + have;
                    if have < CALL_HEADER_PREFIX {
                        self.state = State::CallPrefix { have };
                        return Ok(false);
                    }
                    let declared = u32::from_le_bytes([
                        self.head[0],
                        self.head[1],
                        self.head[2],
                        self.head[3],
                    ]);
                    let total = CALL_HEADER_PREFIX as u64 + u64::from(declared);
                    if total > self.call_header_limit() as u64 {
                        self.state = State::Skip {
                            remaining: u64::from(declared),
                        };
                        return Err(ProtocolError::CallHeaderTooLarge {
                            declared,
                            limit: clamp_u32(
                                self.call_header_limit().saturating_sub(CALL_HEADER_PREFIX),
                            ),
                        });
                    }
                    let prefix = [self.head[0], self.head[1], self.head[2], self.head[3]];
                    self.buf.as_mut()[..CALL_HEADER_PREFIX].copy_from_slice(&prefix);
                    self.state = State::CallBody {
                        total: total as usize,
                        have: CALL_HEADER_PREFIX,
                    };
                }
                State::CallBody { total, have } if want == Want::CallHeader => {
                    let have = take_into(&mut self.buf.as_mut()[have..total], input) + have;
                    if have < total {
                        self.state = State::CallBody { total, have };
                        return Ok(false);
                    }
                    self.state = State::Done { len: total };
                    return Ok(true);
                }
                // A partial element of the other kind: the caller changed its mind midway.
                // That element is abandoned and the wanted one starts here.
                _ => self.state = State::Idle,
            }
        }
    }
}

/// Copies as much of `input` as fits into `dst`, advances `input`, returns the count.
fn take_into(dst: &mut [u8], input: &mut &[u8]) -> usize {
    let n = dst.len().min(input.len());
    dst[..n].copy_from_slice(&input[..n]);
    *input = &input[n..];
    n
}

#[cfg(test)]
mod tests;

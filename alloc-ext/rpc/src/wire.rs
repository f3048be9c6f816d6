//! Protocol elements on an async byte stream: encoding frames and call headers into
//! buffers, and reading them back with limits and a per-element time limit.

use std::io;
use std::time::{Duration, SystemTime};

use bebop_runtime::rpc::{
    CALL_HEADER_PREFIX, CURSOR_SIZE, CallHeader, Encoded, FrameFlags, FrameHeader, HEADER_SIZE,
    TrailingMetadata, append_frame,
};
use bebop_runtime::{Decode, Encode, Map, system_time_to_timestamp, timestamp_to_system_time};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::metadata::Metadata;
use crate::status::Status;

/// The metadata key a multiplexing client puts in its connection preface.
pub(crate) const MUX_KEY: &str = "bebop-mux";

/// A frame read from the wire, owning its payload.
#[derive(Debug)]
pub(crate) struct OwnedFrame {
    pub header: FrameHeader,
    pub payload: Vec<u8>,
    pub cursor: Option<u64>,
}

impl OwnedFrame {
    pub fn stream_id(&self) -> u32 {
        self.header.stream_id
    }
    pub fn is_end(&self) -> bool {
        self.header.flags.contains(FrameFlags::END_STREAM)
    }
    pub fn is_error(&self) -> bool {
        self.header.flags.contains(FrameFlags::ERROR)
    }
    pub fn is_trailer(&self) -> bool {
        self.header.flags.contains(FrameFlags::TRAILER)
    }
}

/// A call header read from the wire.
#[derive(Debug, Default)]
pub(crate) struct OwnedCallHeader {
    pub method_id: Option<u32>,
    pub deadline: Option<SystemTime>,
    pub metadata: Metadata,
    pub cursor: u64,
    /// The deadline field was present but outside `SystemTime`'s range.
    pub bad_deadline: bool,
}

impl OwnedCallHeader {
    pub fn from_message(bytes: &[u8]) -> Result<Self, bebop_runtime::Error> {
        let h = CallHeader::from_bytes(bytes)?;
        let deadline = h.deadline.map(timestamp_to_system_time);
        Ok(OwnedCallHeader {
            method_id: h.method_id,
            bad_deadline: matches!(deadline, Some(None)),
            deadline: deadline.flatten(),
            metadata: h.metadata.map(Metadata::from_view).unwrap_or_default(),
            cursor: h.cursor.unwrap_or(0),
        })
    }
}

/// Encodes a call header message (with its length prefix).
pub(crate) fn call_header_bytes(
    method_id: Option<u32>,
    deadline: Option<SystemTime>,
    metadata: &Metadata,
    cursor: u64,
) -> Vec<u8> {
    let pairs = metadata.as_pairs();
    let header = CallHeader {
        method_id,
        deadline: deadline.and_then(system_time_to_timestamp),
        metadata: (!pairs.is_empty()).then(|| Map::from_slice(&pairs)),
        cursor: (cursor != 0).then_some(cursor),
    };
    bebop_runtime::encode_to_vec(&header).unwrap_or_default()
}

/// Appends a frame carrying `payload` to `out`.
pub(crate) fn push_frame<T: Encode + ?Sized>(
    out: &mut Vec<u8>,
    flags: FrameFlags,
    stream_id: u32,
    payload: &T,
    cursor: Option<u64>,
) -> Result<(), Status> {
    // One pass over the payload (`append_frame` leaves `out` as it was on an error).
    match append_frame(out, flags, stream_id, payload, cursor) {
        Ok(_) => Ok(()),
        Err(e) => Err(Status::internal(format!("encoding a frame failed: {e}"))),
    }
}

/// A frame carrying `payload`.
pub(crate) fn frame<T: Encode + ?Sized>(
    flags: FrameFlags,
    stream_id: u32,
    payload: &T,
    cursor: Option<u64>,
) -> Result<Vec<u8>, Status> {
    let mut out = Vec::new();
    push_frame(&mut out, flags, stream_id, payload, cursor)?;
    Ok(out)
}

/// An `END_STREAM | ERROR` frame carrying `status`.
pub(crate) fn error_frame(stream_id: u32, status: &Status) -> Vec<u8> {
    let payload = status.to_error_payload();
    frame(
        FrameFlags::END_STREAM | FrameFlags::ERROR,
        stream_id,
        &Encoded(&payload),
        None,
    )
    .unwrap_or_default()
}

/// An `END_STREAM | TRAILER` frame carrying `metadata`.
pub(crate) fn push_trailer(out: &mut Vec<u8>, stream_id: u32, metadata: &Metadata) {
    let pairs = metadata.as_pairs();
    let trailer = TrailingMetadata {
        metadata: Some(Map::from_slice(&pairs)),
    };
    // Encoding owned metadata into a Vec cannot fail short of exceeding 4 GiB.
    let _ = push_frame(
        out,
        FrameFlags::END_STREAM | FrameFlags::TRAILER,
        stream_id,
        &trailer,
        None,
    );
}

/// Decodes a `TRAILER` payload.
pub(crate) fn trailer_metadata(payload: &[u8]) -> Result<Metadata, Status> {
    TrailingMetadata::from_bytes(payload)
        .map(|t| t.metadata.map(Metadata::from_view).unwrap_or_default())
        .map_err(|e| Status::internal(format!("the peer sent an undecodable trailer: {e}")))
}

/// Writes what `outbox` holds to `wr` until the outbox is closed and empty, or `stop` is
/// raised (then what is queued is written once more, briefly). Everything queued since the
/// last write goes out in one write. With `stall`, a write that makes no progress for that
/// long fails the loop (a peer that stopped reading).
/// Below this many queued bytes the writer yields once before writing.
const SMALL_BATCH: usize = 16 << 10;

pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    mut wr: W,
    outbox: &crate::queue::Outbox,
    stall: Option<Duration>,
    stop: &tokio_util::sync::CancellationToken,
) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let taken = tokio::select! {
            t = outbox.take(&mut buf) => t,
            _ = stop.cancelled() => {
                // Write what is already queued (the last calls' cancel frames, say).
                outbox.close();
                buf.clear();
                if outbox.take(&mut buf).await.is_some() {
                    let brief = Some(stall.unwrap_or(Duration::from_secs(1)).min(Duration::from_secs(1)));
                    let _ = write_all(&mut wr, &buf, brief).await;
                    let _ = with_stall(brief, wr.flush()).await;
                }
                return Ok(());
            }
        };
        if taken.is_none() {
            return Ok(());
        }
        if buf.len() < SMALL_BATCH {
            // Let the tasks that are about to queue more (a streaming handler, callers in a
            // burst) run once before the write: one system call for many small frames.
            tokio::task::yield_now().await;
            outbox.take_more(&mut buf);
        }
        write_all(&mut wr, &buf, stall).await?;
        with_stall(stall, wr.flush()).await?;
        buf.clear();
        if buf.capacity() > 1 << 20 {
            // Do not keep a buffer sized for one huge frame.
            buf = Vec::new();
        }
    }
}

async fn write_all<W: AsyncWrite + Unpin>(
    wr: &mut W,
    mut bytes: &[u8],
    stall: Option<Duration>,
) -> io::Result<()> {
    while !bytes.is_empty() {
        let n = with_stall(stall, wr.write(bytes)).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[n..];
    }
    Ok(())
}

async fn with_stall<T>(
    stall: Option<Duration>,
    io: impl std::future::Future<Output = io::Result<T>>,
) -> io::Result<T> {
    match stall {
        None => io.await,
        Some(d) => tokio::time::timeout(d, io).await.unwrap_or_else(|_| {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer stopped reading",
            ))
        }),
    }
}

/// Why reading an element failed.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The stream ended cleanly between elements.
    Closed,
    /// An I/O error, or the stream ended inside an element.
    Io(io::Error),
    /// The rest of an element did not arrive within the element time limit.
    Stalled,
    /// The element breaks a limit or the protocol: answer with this status and close.
    Refused { stream_id: u32, status: Status },
}

/// Reads protocol elements from an async reader through its own buffer.
pub(crate) struct ElementReader<R> {
    pub inner: tokio::io::BufReader<R>,
    pub max_payload: usize,
    pub max_call_header: usize,
    pub element_timeout: Duration,
}

impl<R: tokio::io::AsyncRead + Unpin> ElementReader<R> {
    /// Waits until at least one byte is buffered; `false` at a clean end of stream.
    /// Cancel-safe: nothing is consumed.
    pub async fn ready(&mut self) -> Result<bool, ReadError> {
        match self.inner.fill_buf().await {
            Ok(b) => Ok(!b.is_empty()),
            Err(e) => Err(ReadError::Io(e)),
        }
    }

    /// Reads `buf` full before `deadline` (one deadline for all the parts of an element,
    /// set when its first byte arrived).
    async fn exact(
        &mut self,
        buf: &mut [u8],
        deadline: tokio::time::Instant,
    ) -> Result<(), ReadError> {
        match tokio::time::timeout_at(deadline, self.inner.read_exact(buf)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(ReadError::Io(e)),
            Err(_) => Err(ReadError::Stalled),
        }
    }

    /// Waits for an element's first byte; returns the deadline for the whole element.
    async fn first(&mut self) -> Result<tokio::time::Instant, ReadError> {
        if self.ready().await? {
            Ok(tokio::time::Instant::now() + self.element_timeout)
        } else {
            Err(ReadError::Closed)
        }
    }

    /// Reads one call header message (its length prefix included) and returns its bytes.
    pub async fn call_header(&mut self) -> Result<Vec<u8>, ReadError> {
        let deadline = self.first().await?;
        let mut prefix = [0u8; CALL_HEADER_PREFIX];
        self.exact(&mut prefix, deadline).await?;
        let declared = u32::from_le_bytes(prefix) as usize;
        if declared > self.max_call_header {
            return Err(ReadError::Refused {
                stream_id: 0,
                status: Status::resource_exhausted(format!(
                    "call header of {declared} bytes is over the limit of {}",
                    self.max_call_header
                )),
            });
        }
        let mut bytes = vec![0u8; CALL_HEADER_PREFIX + declared];
        bytes[..CALL_HEADER_PREFIX].copy_from_slice(&prefix);
        self.exact(&mut bytes[CALL_HEADER_PREFIX..], deadline)
            .await?;
        Ok(bytes)
    }

    /// Reads one frame.
    pub async fn frame(&mut self) -> Result<OwnedFrame, ReadError> {
        if let Some(frame) = self.buffered_frame()? {
            return Ok(frame);
        }
        let deadline = self.first().await?;
        let mut head = [0u8; HEADER_SIZE];
        self.exact(&mut head, deadline).await?;
        let header = FrameHeader::from_wire(head);
        self.check(&header)?;
        let mut payload = vec![0u8; header.length as usize];
        self.exact(&mut payload, deadline).await?;
        let cursor = if header.flags.contains(FrameFlags::CURSOR) {
            let mut c = [0u8; CURSOR_SIZE];
            self.exact(&mut c, deadline).await?;
            Some(u64::from_le_bytes(c))
        } else {
            None
        };
        Ok(OwnedFrame {
            header,
            payload,
            cursor,
        })
    }

    /// A frame taken whole from what is already buffered (no I/O, no timer), if there is
    /// one.
    fn buffered_frame(&mut self) -> Result<Option<OwnedFrame>, ReadError> {
        let buf = self.inner.buffer();
        let Some(head) = buf.first_chunk::<HEADER_SIZE>() else {
            return Ok(None);
        };
        let header = FrameHeader::from_wire(*head);
        self.check(&header)?;
        let buf = self.inner.buffer();
        let len = header.length as usize;
        let has_cursor = header.flags.contains(FrameFlags::CURSOR);
        let total = HEADER_SIZE + len + if has_cursor { CURSOR_SIZE } else { 0 };
        let Some(element) = buf.get(..total) else {
            return Ok(None);
        };
        let payload = element[HEADER_SIZE..HEADER_SIZE + len].to_vec();
        let cursor = element[HEADER_SIZE + len..]
            .first_chunk::<CURSOR_SIZE>()
            .filter(|_| has_cursor)
            .map(|c| u64::from_le_bytes(*c));
        std::pin::Pin::new(&mut self.inner).consume(total);
        Ok(Some(OwnedFrame {
            header,
            payload,
            cursor,
        }))
    }

    fn check(&self, header: &FrameHeader) -> Result<(), ReadError> {
        let stream_id = header.stream_id;
        if header.length as usize > self.max_payload {
            return Err(ReadError::Refused {
                stream_id,
                status: Status::resource_exhausted(format!(
                    "frame payload of {} bytes is over the limit of {}",
                    header.length, self.max_payload
                )),
            });
        }
        if !header.flags.is_valid_combination() {
            return Err(ReadError::Refused {
                stream_id,
                status: Status::invalid_argument(format!(
                    "invalid frame flags {:#04x}",
                    header.flags.bits()
                )),
            });
        }
        if header.flags.contains(FrameFlags::COMPRESSED) {
            // No compression is offered, so none may be used (docs/rpc.md, "Frame flags").
            return Err(ReadError::Refused {
                stream_id,
                status: Status::unimplemented(
                    "a compressed frame, but no compression was negotiated",
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unary_exchange_of_rpc_section_7_1() {
        // The call header and both frames, byte for byte.
        let header = call_header_bytes(Some(0x1a2b_3c4d), None, &Metadata::new(), 0);
        assert_eq!(header, [0x06, 0, 0, 0, 0x01, 0x4d, 0x3c, 0x2b, 0x1a, 0x00]);
        let request = frame(FrameFlags::END_STREAM, 0, "Alice", None).unwrap();
        assert_eq!(request.len(), 19);
        assert_eq!(&request[..9], &[0x0a, 0, 0, 0, 0x01, 0, 0, 0, 0]);
        let response = frame(FrameFlags::END_STREAM, 0, "Hello, Alice!", None).unwrap();
        assert_eq!(&response[..9], &[0x12, 0, 0, 0, 0x01, 0, 0, 0, 0]);
        assert_eq!(header.len() + request.len() + response.len(), 56);
    }

    #[test]
    fn cursor_frames_of_rpc_section_11() {
        let f = frame(FrameFlags::NONE, 1, &Encoded(b"x"), Some(200)).unwrap();
        assert_eq!(f[4], 0x10);
        assert_eq!(&f[..4], &[1, 0, 0, 0]);
        assert_eq!(&f[10..], &200u64.to_le_bytes());
    }

    #[tokio::test]
    async fn reader_refuses_oversized_frames_and_bad_flags_without_reading_them() {
        let mut bytes = vec![0xff, 0xff, 0xff, 0xff, 0x01, 3, 0, 0, 0];
        bytes.extend_from_slice(&[0; 16]);
        let mut r = ElementReader {
            inner: tokio::io::BufReader::new(&bytes[..]),
            max_payload: 1024,
            max_call_header: 64,
            element_timeout: Duration::from_secs(1),
        };
        match r.frame().await {
            Err(ReadError::Refused {
                stream_id: 3,
                status,
            }) => {
                assert_eq!(
                    status.code(),
                    bebop_runtime::rpc::StatusCode::ResourceExhausted
                )
            }
            other => panic!("{other:?}"),
        }
        let bytes = [0u8, 0, 0, 0, 0x02, 1, 0, 0, 0];
        let mut r = ElementReader {
            inner: tokio::io::BufReader::new(&bytes[..]),
            max_payload: 1024,
            max_call_header: 64,
            element_timeout: Duration::from_secs(1),
        };
        assert!(matches!(
            r.frame().await,
            Err(ReadError::Refused { stream_id: 1, .. })
        ));
        // COMPRESSED: no compression was negotiated.
        let bytes = [0u8, 0, 0, 0, 0x05, 9, 0, 0, 0];
        let mut r = ElementReader {
            inner: tokio::io::BufReader::new(&bytes[..]),
            max_payload: 1024,
            max_call_header: 64,
            element_timeout: Duration::from_secs(1),
        };
        match r.frame().await {
            Err(ReadError::Refused {
                stream_id: 9,
                status,
            }) => assert_eq!(status.code(), bebop_runtime::rpc::StatusCode::Unimplemented),
            other => panic!("{other:?}"),
        }
        let bytes = [0x00u8, 0x10, 0, 0];
        let mut r = ElementReader {
            inner: tokio::io::BufReader::new(&bytes[..]),
            max_payload: 1024,
            max_call_header: 64,
            element_timeout: Duration::from_secs(1),
        };
        assert!(matches!(
            r.call_header().await,
            Err(ReadError::Refused { stream_id: 0, .. })
        ));
        let mut r = ElementReader {
            inner: tokio::io::BufReader::new(&[][..]),
            max_payload: 1024,
            max_call_header: 64,
            element_timeout: Duration::from_secs(1),
        };
        assert!(matches!(r.frame().await, Err(ReadError::Closed)));
        let bytes = [5u8, 0, 0, 0, 0, 1, 0];
        let mut r = ElementReader {
            inner: tokio::io::BufReader::new(&bytes[..]),
            max_payload: 1024,
            max_call_header: 64,
            element_timeout: Duration::from_secs(1),
        };
        assert!(matches!(r.frame().await, Err(ReadError::Io(_))));
    }
}

/// A payload kept as its bytes, undecoded: for proxies, gateways and tools that call or
/// serve methods without their schema (discovery responses, say).
///
/// ```
/// use bebop_runtime::{Decode, EncodeExt};
/// use bebop_rpc::RawMessage;
///
/// let raw = RawMessage(b"\x02\0\0\0hi\0".to_vec());
/// assert_eq!(raw.encode_to_vec()?, raw.0);
/// assert_eq!(RawMessage::from_bytes(&raw.0)?.0, raw.0);
/// # Ok::<(), bebop_runtime::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawMessage(pub Vec<u8>);

impl bebop_runtime::WireSize for RawMessage {
    const MIN_SIZE: usize = 0;
}

impl<'a> Decode<'a> for RawMessage {
    fn decode(reader: &mut bebop_runtime::Reader<'a>) -> Result<Self, bebop_runtime::Error> {
        Ok(RawMessage(reader.take_rest().to_vec()))
    }
}

impl Encode for RawMessage {
    fn encoded_size(&self) -> usize {
        self.0.len()
    }

    fn encode<S: bebop_runtime::Sink>(&self, sink: &mut S) -> Result<(), S::Error> {
        sink.write(&self.0)
    }
}

//! Serving calls over a carrier of your own: HTTP, WebSocket, a message queue. The carrier
//! turns what arrives into a [`CallStart`] and request messages, and what
//! [`Server::start_call`] hands back into whatever its wire needs; the server runs the call
//! exactly as it runs one from a binary connection (the same checks, interceptors, handler,
//! deadline and cancellation).
//!
//! ```
//! use std::sync::Arc;
//! use bebop_rpc::transport::{CallStart, ResponseKind};
//! use bebop_rpc::{Peer, Server, StatusCode};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder().build();
//! let peer = Arc::new(Peer::new(None, None));
//!
//! // Discovery (method 0) takes an empty request and answers one message.
//! let call = server.start_call(CallStart::new(0, peer.clone())).unwrap();
//! let (mut requests, mut responses) = call.into_parts();
//! requests.send(Vec::new(), true).await.unwrap();
//! let first = responses.next().await.unwrap();
//! assert_eq!(first.kind(), ResponseKind::Message);
//! assert!(first.is_end());
//!
//! // An unknown method never starts.
//! let refused = server.start_call(CallStart::new(0x1234_5678, peer)).err().unwrap();
//! assert_eq!(refused.code(), StatusCode::NotFound);
//! # }
//! ```

use std::sync::Arc;
use std::time::SystemTime;

use bebop_runtime::MethodInfo;
use bebop_runtime::rpc::{FrameFlags, FrameHeader, HEADER_SIZE, parse_frame};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::context::Peer;
use crate::metadata::Metadata;
use crate::queue::Outbox;
use crate::server::Server;
use crate::status::Status;
use crate::wire::{self, OwnedCallHeader, OwnedFrame};

/// What a carrier knows when a call begins: the binary transport's `CallHeader`, and the
/// peer.
#[derive(Debug)]
pub struct CallStart {
    header: OwnedCallHeader,
    peer: Arc<Peer>,
}

impl CallStart {
    /// A call of `method_id` from `peer`, without metadata, deadline or cursor.
    pub fn new(method_id: u32, peer: Arc<Peer>) -> Self {
        CallStart {
            header: OwnedCallHeader {
                method_id: Some(method_id),
                ..OwnedCallHeader::default()
            },
            peer,
        }
    }

    /// The request metadata.
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.header.metadata = metadata;
        self
    }

    /// The call's deadline.
    pub fn deadline(mut self, deadline: Option<SystemTime>) -> Self {
        self.header.deadline = deadline;
        self.header.bad_deadline = false;
        self
    }

    /// The caller gave a deadline the carrier could not read (not a number, out of range):
    /// the call is refused `INVALID_ARGUMENT` in its turn among the checks of `docs/rpc.md`
    /// ("Starting a call").
    pub fn invalid_deadline(mut self) -> Self {
        self.header.deadline = None;
        self.header.bad_deadline = true;
        self
    }

    /// Where to resume a server stream (0: from the start).
    pub fn cursor(mut self, cursor: u64) -> Self {
        self.header.cursor = cursor;
        self
    }
}

impl Server {
    /// The method `method_id` routes to, if the server serves it: what a carrier needs to
    /// know before it reads a request (an HTTP transport picks the body's shape by the
    /// method's kind). Discovery (0) and batches (1) are unary; on a server with futures,
    /// dispatch (2) and cancel (4) are unary and resolve (3) a server stream.
    pub fn method(&self, method_id: u32) -> Option<MethodInfo> {
        let shared = self.shared();
        match method_id {
            bebop_runtime::rpc::DISCOVERY_METHOD_ID | bebop_runtime::rpc::BATCH_METHOD_ID => {
                Some(shared.method_of(method_id))
            }
            2..=4 if shared.futures.is_some() => Some(shared.method_of(method_id)),
            id => shared.routes.get(&id).map(|r| r.info),
        }
    }

    /// Starts one call carried by something other than the binary transport. The call
    /// runs on its own task; the [`TransportCall`] delivers its requests and hands back its
    /// responses. A call that may not start (the server is shutting down, too much
    /// metadata, a passed or unreadable deadline, a reserved or unknown method) is refused
    /// with its status and nothing runs.
    ///
    /// Dropping the [`ResponseStream`] before the response ended cancels the call, as a
    /// client going away does.
    pub fn start_call(&self, start: CallStart) -> Result<TransportCall, Status> {
        let shared = self.shared();
        if shared.draining.is_cancelled() {
            return Err(Status::unavailable("the server is shutting down"));
        }
        self.start_admitted(start, shared.limits.response_buffer)
    }

    /// [`start_call`](Self::start_call) without the shutdown check, its responses queued in
    /// at most about `response_buffer` bytes: the calls of a batch, which belong to a call
    /// already in flight (`docs/rpc.md`, "Batches").
    pub(crate) fn start_admitted(
        &self,
        start: CallStart,
        response_buffer: usize,
    ) -> Result<TransportCall, Status> {
        let shared = self.shared();
        let admitted = shared.admit(&start.header)?;
        let method = admitted.info;
        let out = Arc::new(Outbox::new(response_buffer));
        let closer = out.clone();
        let launched = shared.launch(
            admitted,
            start.header,
            0,
            start.peer,
            out.clone(),
            shared.stop.child_token(),
            move || closer.close(),
        );
        Ok(TransportCall {
            method,
            requests: RequestSender {
                tx: Some(launched.requests),
                cancel: launched.cancel.clone(),
            },
            responses: ResponseStream {
                out,
                buf: Vec::new(),
                pos: 0,
                ended: false,
                cancel: launched.cancel,
            },
        })
    }
}

impl Server {
    /// The server's resource limits, for a carrier to apply its own way (an HTTP server
    /// bounds request headers and bodies with them).
    pub fn limits(&self) -> &crate::Limits {
        &self.shared().limits
    }

    /// Whether [`shutdown`](Self::shutdown) has begun: new connections and calls are
    /// refused.
    pub fn is_shutting_down(&self) -> bool {
        self.shared().draining.is_cancelled()
    }

    /// Resolves once [`shutdown`](Self::shutdown) has begun: a carrier's accept loop
    /// stops, and its connections that carry no call close.
    pub fn shutting_down(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.shared().draining.clone().cancelled_owned()
    }

    /// Admits one connection a carrier accepted itself (an HTTP or WebSocket server): it
    /// takes one of [`Limits::max_connections`](crate::Limits::max_connections), runs the
    /// identity hook on `peer`, and keeps [`shutdown`](Self::shutdown) waiting until the
    /// returned [`ConnectionSlot`] is dropped. Refused with `UNAVAILABLE` once shutdown has
    /// begun and `RESOURCE_EXHAUSTED` when every slot is taken.
    pub fn open_connection(&self, peer: Peer) -> Result<ConnectionSlot, Status> {
        let shared = self.shared();
        if shared.draining.is_cancelled() {
            return Err(Status::unavailable("the server is shutting down"));
        }
        let Ok(permit) = shared.connections.clone().try_acquire_owned() else {
            return Err(Status::resource_exhausted(format!(
                "the server serves at most {} connections",
                shared.limits.max_connections
            )));
        };
        if let Some(hook) = &shared.identity {
            if let Some(identity) = hook(&peer) {
                peer.set_identity(identity);
            }
        }
        Ok(ConnectionSlot {
            peer: Arc::new(peer),
            _permit: permit,
            _token: shared.tracker.token(),
            draining: shared.draining.clone(),
            stop: shared.stop.clone(),
        })
    }
}

/// A connection admitted by [`Server::open_connection`]. While it lives it counts
/// against `max_connections` and [`Server::shutdown`] waits for it; the carrier drains the
/// connection when [`draining`](Self::draining) resolves and drops it at the latest when
/// [`stopped`](Self::stopped) does.
pub struct ConnectionSlot {
    peer: Arc<Peer>,
    _permit: tokio::sync::OwnedSemaphorePermit,
    _token: tokio_util::task::task_tracker::TaskTrackerToken,
    draining: CancellationToken,
    stop: CancellationToken,
}

impl ConnectionSlot {
    /// The peer, with the identity the server's hook gave it.
    pub fn peer(&self) -> &Arc<Peer> {
        &self.peer
    }

    /// Resolves once shutdown has begun: finish the calls in flight, take no new ones.
    pub async fn draining(&self) {
        self.draining.cancelled().await
    }

    /// Resolves once shutdown's grace period is over: close the connection now.
    pub async fn stopped(&self) {
        self.stop.cancelled().await
    }
}

impl std::fmt::Debug for ConnectionSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionSlot")
            .field("peer", &self.peer)
            .field("draining", &self.draining.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// A call started with [`Server::start_call`].
#[derive(Debug)]
pub struct TransportCall {
    method: MethodInfo,
    requests: RequestSender,
    responses: ResponseStream,
}

impl TransportCall {
    /// The method called.
    pub fn method(&self) -> MethodInfo {
        self.method
    }

    /// The two directions of the call.
    pub fn into_parts(self) -> (RequestSender, ResponseStream) {
        (self.requests, self.responses)
    }
}

/// Delivers a call's request messages. It waits while the handler's request queue is full,
/// so a carrier that awaits it pushes back on its peer.
#[derive(Debug)]
pub struct RequestSender {
    tx: Option<mpsc::Sender<OwnedFrame>>,
    cancel: CancellationToken,
}

impl RequestSender {
    /// Delivers one request message; with `end`, it is the last (an empty payload with
    /// `end` only ends the stream, the way an empty `END_STREAM` frame does: see
    /// `docs/rpc.md`, "Decisions"). Fails with `CANCELLED` once the call is over or the
    /// stream was ended.
    pub async fn send(&mut self, payload: Vec<u8>, end: bool) -> Result<(), Status> {
        let flags = if end {
            FrameFlags::END_STREAM
        } else {
            FrameFlags::NONE
        };
        self.deliver(flags, payload, None).await
    }

    /// Delivers a request frame the carrier read from its wire (a streaming HTTP body, a
    /// WebSocket message): its payload and whether it ends the stream. A client's
    /// `END_STREAM | ERROR` frame cancels the call; a `TRAILER` frame or invalid flags are
    /// `INVALID_ARGUMENT`, which the carrier should answer and close with (`docs/rpc.md`,
    /// "Frames").
    pub async fn send_frame(
        &mut self,
        flags: FrameFlags,
        payload: Vec<u8>,
        cursor: Option<u64>,
    ) -> Result<(), Status> {
        if !flags.is_valid_combination() {
            return Err(Status::invalid_argument(format!(
                "invalid frame flags {:#04x}",
                flags.bits()
            )));
        }
        if flags.contains(FrameFlags::ERROR) {
            self.cancel();
            return Ok(());
        }
        if flags.contains(FrameFlags::TRAILER) {
            return Err(Status::invalid_argument("a client sends no TRAILER frames"));
        }
        self.deliver(flags, payload, cursor).await
    }

    async fn deliver(
        &mut self,
        flags: FrameFlags,
        payload: Vec<u8>,
        cursor: Option<u64>,
    ) -> Result<(), Status> {
        let Some(tx) = &self.tx else {
            return Err(Status::cancelled("the request stream already ended"));
        };
        let end = flags.contains(FrameFlags::END_STREAM);
        let frame = OwnedFrame {
            header: FrameHeader {
                length: u32::try_from(payload.len()).unwrap_or(u32::MAX),
                flags,
                stream_id: 0,
            },
            payload,
            cursor,
        };
        let sent = tokio::select! {
            r = tx.send(frame) => r.is_ok(),
            _ = self.cancel.cancelled() => false,
        };
        if end || !sent {
            self.tx = None;
        }
        if sent {
            Ok(())
        } else {
            Err(Status::cancelled("the call is over"))
        }
    }

    /// Whether the call stopped taking requests (it ended, failed or was cancelled).
    pub fn is_closed(&self) -> bool {
        self.tx.as_ref().is_none_or(|tx| tx.is_closed()) || self.cancel.is_cancelled()
    }

    /// Cancels the call: the client went away (`docs/rpc.md`, "Cancellation"). Nothing more
    /// is sent on it.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}

/// The kind of a [`ResponseFrame`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseKind {
    /// A response message (the last one when the frame also ends the stream).
    Message,
    /// An empty `END_STREAM` frame: the stream ended without metadata.
    End,
    /// `END_STREAM | TRAILER`: the stream ended with response metadata.
    Trailer,
    /// `END_STREAM | ERROR`: the call failed.
    Error,
}

/// One frame of a call's response, as the binary transport would send it (stream id 0).
#[derive(Clone, PartialEq, Eq)]
pub struct ResponseFrame {
    bytes: Vec<u8>,
    header: FrameHeader,
}

impl ResponseFrame {
    /// The frame's flags.
    pub fn flags(&self) -> FrameFlags {
        self.header.flags
    }

    /// Whether this is the last frame of the response.
    pub fn is_end(&self) -> bool {
        self.header.flags.contains(FrameFlags::END_STREAM)
    }

    /// What the frame carries.
    pub fn kind(&self) -> ResponseKind {
        let flags = self.header.flags;
        if flags.contains(FrameFlags::ERROR) {
            ResponseKind::Error
        } else if flags.contains(FrameFlags::TRAILER) {
            ResponseKind::Trailer
        } else if flags.contains(FrameFlags::END_STREAM) && self.header.length == 0 {
            ResponseKind::End
        } else {
            ResponseKind::Message
        }
    }

    /// The payload: a response message, an `RpcError` or a `TrailingMetadata`.
    pub fn payload(&self) -> &[u8] {
        let end = HEADER_SIZE + self.header.length as usize;
        self.bytes.get(HEADER_SIZE..end).unwrap_or_default()
    }

    /// The resume cursor the handler attached, if any.
    pub fn cursor(&self) -> Option<u64> {
        if !self.header.flags.contains(FrameFlags::CURSOR) {
            return None;
        }
        let start = HEADER_SIZE + self.header.length as usize;
        let bytes = self.bytes.get(start..start + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// The call's status, for an [`Error`](ResponseKind::Error) frame.
    pub fn status(&self) -> Option<Status> {
        (self.kind() == ResponseKind::Error).then(|| Status::from_error_payload(self.payload()))
    }

    /// The response metadata, for a [`Trailer`](ResponseKind::Trailer) frame.
    pub fn trailer_metadata(&self) -> Option<Metadata> {
        if self.kind() != ResponseKind::Trailer {
            return None;
        }
        wire::trailer_metadata(self.payload()).ok()
    }

    /// The whole frame, header included, as the binary transport sends it.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The whole frame.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

impl std::fmt::Debug for ResponseFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFrame")
            .field("kind", &self.kind())
            .field("flags", &self.header.flags)
            .field("length", &self.header.length)
            .field("cursor", &self.cursor())
            .finish()
    }
}

/// A call's response frames, in order. The stream ends after the frame that ends the
/// response, or without one when the call was cancelled. Dropped earlier, it cancels the
/// call.
pub struct ResponseStream {
    out: Arc<Outbox>,
    buf: Vec<u8>,
    pos: usize,
    ended: bool,
    cancel: CancellationToken,
}

impl ResponseStream {
    /// The next response frame; `None` once the response has ended.
    pub async fn next(&mut self) -> Option<ResponseFrame> {
        loop {
            if self.ended {
                return None;
            }
            if let Some(frame) = self.parse() {
                if frame.is_end() {
                    self.ended = true;
                }
                return Some(frame);
            }
            // What is left is less than a frame: the server queues whole frames, so take
            // what follows and go on.
            let mut more = Vec::new();
            if self.out.take(&mut more).await.is_none() {
                self.ended = true;
                return None;
            }
            if self.pos == self.buf.len() {
                self.buf = more;
            } else {
                self.buf.drain(..self.pos);
                self.buf.extend_from_slice(&more);
            }
            self.pos = 0;
        }
    }

    fn parse(&mut self) -> Option<ResponseFrame> {
        let rest = self.buf.get(self.pos..)?;
        let (frame, used) = parse_frame(rest, usize::MAX).ok()?;
        let header = frame.header;
        let bytes = rest[..used].to_vec();
        self.pos += used;
        Some(ResponseFrame { bytes, header })
    }

    /// Whether the response has ended.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Cancels the call (the same as dropping the stream).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}

impl Drop for ResponseStream {
    fn drop(&mut self) {
        if !self.ended {
            self.cancel.cancel();
        }
        self.out.close();
    }
}

impl std::fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseStream")
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

/// A carrier of client calls other than the binary connection: an HTTP client, a WebSocket
/// client. [`Client::over`](crate::Client::over) hands it every call, and the typed clients
/// generated for a schema then work over it unchanged.
pub trait Connector: Send + Sync + 'static {
    /// Carries one call: sends what [`OutgoingCall::requests`] yields, and pushes what the
    /// server answers into [`OutgoingCall::responses`] until the response has ended. The
    /// returned future runs on a task of its own; when it ends without having pushed an
    /// ending frame (or a failure), the call fails with `UNAVAILABLE`.
    fn carry(&self, call: OutgoingCall) -> crate::BoxFuture<'static, ()>;
}

/// One call for a [`Connector`] to carry.
#[derive(Debug)]
#[non_exhaustive]
pub struct OutgoingCall {
    /// The method: its id always, and its service and method names when a generated client
    /// described it ([`Client::describe`](crate::Client::describe)); empty names otherwise.
    pub method: MethodInfo,
    /// How the caller calls it (which client function it used).
    pub kind: bebop_runtime::MethodKind,
    /// The request metadata.
    pub metadata: Metadata,
    /// The call's deadline (the client enforces it too).
    pub deadline: Option<SystemTime>,
    /// Where to resume a server stream.
    pub cursor: u64,
    /// The request frames, as the client sends them.
    pub requests: OutgoingRequests,
    /// Where the connector delivers the response.
    pub responses: IncomingResponses,
}

/// One request frame of an [`OutgoingCall`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestFrame {
    /// `NONE` for a message, `END_STREAM` for the last (an empty one only ends the stream),
    /// `END_STREAM | ERROR` when the caller cancels the call.
    pub flags: FrameFlags,
    /// The request message (or, with `ERROR`, an `RpcError` with `CANCELLED`).
    pub payload: Vec<u8>,
    /// The frame as the binary transport sends it (stream id 0).
    pub bytes: Vec<u8>,
}

impl RequestFrame {
    /// Whether the caller cancelled the call: nothing more should be sent or awaited.
    pub fn is_cancel(&self) -> bool {
        self.flags.contains(FrameFlags::ERROR)
    }

    /// Whether this is the last request frame.
    pub fn is_end(&self) -> bool {
        self.flags.contains(FrameFlags::END_STREAM)
    }
}

/// The request frames of an [`OutgoingCall`]: a unary or server-stream call yields exactly
/// one `END_STREAM` frame; a streaming call, one frame per request and then an `END_STREAM`
/// frame. A caller that gives up yields a cancel frame ([`RequestFrame::is_cancel`]); the
/// stream then ends.
pub struct OutgoingRequests {
    call: Arc<crate::client::Shared>,
    buf: Vec<u8>,
    pos: usize,
}

impl OutgoingRequests {
    pub(crate) fn new(call: Arc<crate::client::Shared>) -> Self {
        OutgoingRequests {
            call,
            buf: Vec::new(),
            pos: 0,
        }
    }

    /// The next request frame; `None` when the caller is gone or has nothing more to
    /// send.
    pub async fn next(&mut self) -> Option<RequestFrame> {
        loop {
            if let Some(rest) = self.buf.get(self.pos..) {
                if let Ok((frame, used)) = parse_frame(rest, usize::MAX) {
                    let request = RequestFrame {
                        flags: frame.flags(),
                        payload: frame.payload.to_vec(),
                        bytes: rest[..used].to_vec(),
                    };
                    self.pos += used;
                    return Some(request);
                }
            }
            let mut more = Vec::new();
            self.call.out.take(&mut more).await?;
            if self.pos == self.buf.len() {
                self.buf = more;
            } else {
                self.buf.drain(..self.pos);
                self.buf.extend_from_slice(&more);
            }
            self.pos = 0;
        }
    }
}

impl std::fmt::Debug for OutgoingRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingRequests").finish_non_exhaustive()
    }
}

/// Where a [`Connector`] delivers a call's response: frames as the binary transport would
/// carry them, or a failure.
pub struct IncomingResponses {
    call: Arc<crate::client::Shared>,
    queue: Arc<crate::queue::FrameQueue<OwnedFrame>>,
}

impl IncomingResponses {
    pub(crate) fn new(
        call: Arc<crate::client::Shared>,
        queue: Arc<crate::queue::FrameQueue<OwnedFrame>>,
    ) -> Self {
        IncomingResponses { call, queue }
    }

    /// Delivers one response frame (a message, the end, a `TRAILER` or an `ERROR` frame),
    /// waiting while the caller's queue is full. Fails once the caller is gone: the
    /// connector should then stop (and cancel the call on its wire).
    pub async fn push(
        &self,
        flags: FrameFlags,
        payload: Vec<u8>,
        cursor: Option<u64>,
    ) -> Result<(), Status> {
        let size = payload.len() + HEADER_SIZE;
        let frame = OwnedFrame {
            header: FrameHeader {
                length: u32::try_from(payload.len()).unwrap_or(u32::MAX),
                flags,
                stream_id: 0,
            },
            payload,
            cursor,
        };
        self.queue
            .push(frame, size)
            .await
            .map_err(|_| Status::cancelled("the caller went away"))
    }

    /// Delivers a response message.
    pub async fn message(&self, payload: Vec<u8>, cursor: Option<u64>) -> Result<(), Status> {
        let flags = if cursor.is_some() {
            FrameFlags::CURSOR
        } else {
            FrameFlags::NONE
        };
        self.push(flags, payload, cursor).await
    }

    /// Ends the response with `metadata` (a `TRAILER`, or a bare end when it is empty).
    pub async fn finish(&self, metadata: &Metadata) -> Result<(), Status> {
        let mut bytes = Vec::new();
        if metadata.is_empty() {
            return self.push(FrameFlags::END_STREAM, Vec::new(), None).await;
        }
        wire::push_trailer(&mut bytes, 0, metadata);
        let payload = bytes.get(HEADER_SIZE..).unwrap_or_default().to_vec();
        self.push(FrameFlags::END_STREAM | FrameFlags::TRAILER, payload, None)
            .await
    }

    /// Fails the call with `status`: the caller receives it after the responses delivered
    /// before.
    pub async fn fail(&self, status: &Status) -> Result<(), Status> {
        self.push(
            FrameFlags::END_STREAM | FrameFlags::ERROR,
            status.to_error_payload(),
            None,
        )
        .await
    }

    /// Fails the call because the carrier broke (the connection dropped, the peer spoke
    /// something else): the caller receives `status` once the responses already delivered
    /// are read.
    pub fn close(&self, status: Status) {
        self.call.close(status);
    }

    /// Whether the caller is gone (it cancelled, or dropped the call).
    pub fn is_closed(&self) -> bool {
        self.call.out.is_closed()
    }
}

impl std::fmt::Debug for IncomingResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IncomingResponses").finish_non_exhaustive()
    }
}

/// Calls a [`Server`] in the same process, without a socket: every call goes through
/// [`Server::start_call`] and back. For tests of handlers and interceptors, and for
/// services that are local today and remote tomorrow.
///
/// ```
/// use bebop_rpc::transport::InProcess;
/// use bebop_rpc::{CallOptions, Client, Server, StatusCode};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder().build();
/// let client = Client::over(InProcess::new(server));
/// let err = client.unary::<str, String>(0x1234_5678, "x", CallOptions::new()).await.unwrap_err();
/// assert_eq!(err.code(), StatusCode::NotFound);
/// # }
/// ```
#[derive(Clone)]
pub struct InProcess {
    server: Server,
    peer: Arc<Peer>,
}

impl InProcess {
    /// Calls `server` as a peer without addresses.
    pub fn new(server: Server) -> Self {
        InProcess::with_peer(server, Peer::new(None, None))
    }

    /// Calls `server` as `peer`.
    pub fn with_peer(server: Server, peer: Peer) -> Self {
        InProcess {
            server,
            peer: Arc::new(peer),
        }
    }
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl Connector for InProcess {
    fn carry(&self, call: OutgoingCall) -> crate::BoxFuture<'static, ()> {
        let OutgoingCall {
            method,
            metadata,
            deadline,
            cursor,
            mut requests,
            responses,
            ..
        } = call;
        let start = CallStart::new(method.id, self.peer.clone())
            .metadata(metadata)
            .deadline(deadline)
            .cursor(cursor);
        let started = self.server.start_call(start);
        Box::pin(async move {
            let (mut sender, mut stream) = match started {
                Ok(c) => c.into_parts(),
                Err(status) => {
                    let _ = responses.fail(&status).await;
                    return;
                }
            };
            let forward = async {
                let mut ended = false;
                while let Some(frame) = requests.next().await {
                    if frame.is_cancel() {
                        break;
                    }
                    if ended {
                        continue;
                    }
                    ended = frame.is_end();
                    if sender.send(frame.payload, ended).await.is_err() {
                        // The call stopped taking requests (it answered early); a cancel may
                        // still come.
                        ended = true;
                    }
                }
                // A cancel frame, or the caller gone while the response was still coming:
                // either way the caller gave up.
                sender.cancel();
            };
            let back = async {
                while let Some(frame) = stream.next().await {
                    let cursor = frame.cursor();
                    let flags = frame.flags();
                    let payload = frame.payload().to_vec();
                    if responses.push(flags, payload, cursor).await.is_err() {
                        stream.cancel();
                        return;
                    }
                }
            };
            let back = std::pin::pin!(back);
            let forward = std::pin::pin!(forward);
            // The call is over when the response is; requests still unsent are moot.
            match futures_util::future::select(back, forward).await {
                futures_util::future::Either::Left(((), _)) => {}
                futures_util::future::Either::Right(((), back)) => back.await,
            }
        })
    }
}

#[cfg(test)]
mod tests;

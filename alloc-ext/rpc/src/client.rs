//! The client: [`Client`] multiplexes any number of concurrent calls over one connection,
//! each on its own odd stream id; [`Response`] and [`Streaming`] carry what comes back.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use bebop_runtime::rpc::{Encoded, FrameFlags, HEADER_SIZE};
use bebop_runtime::{Decode, Encode, MethodInfo, MethodKind};
use futures_core::Stream;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::context::{CallOptions, instant_of};
use crate::metadata::Metadata;
use crate::queue::{FrameQueue, Outbox};
use crate::status::Status;
use crate::transport::{Connector, IncomingResponses, OutgoingCall, OutgoingRequests};
use crate::wire::{self, ElementReader, MUX_KEY, OwnedFrame, ReadError};

/// Limits and queue sizes of a [`Client`] connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientLimits {
    /// The largest response frame payload accepted; a larger one closes the connection.
    pub max_frame_payload: usize,
    /// Bytes of response frames waiting per call for the caller to read them; past that,
    /// the connection stops reading.
    pub response_buffer: usize,
    /// Bytes of encoded requests waiting to be written; past that, callers wait.
    pub request_buffer: usize,
    /// How long the rest of a frame may take once its first byte arrived.
    pub element_timeout: Duration,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            max_frame_payload: 4 << 20,
            response_buffer: 256 << 10,
            request_buffer: 256 << 10,
            element_timeout: Duration::from_secs(30),
        }
    }
}

pub(crate) struct Shared {
    pub(crate) out: Outbox,
    streams: Mutex<HashMap<u32, Arc<FrameQueue<OwnedFrame>>>>,
    /// Taken inside the outbox's lock, so that ids reach the wire in increasing order.
    next_stream: AtomicU32,
    closed: CancellationToken,
    reason: Mutex<Option<Status>>,
    limits: ClientLimits,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn gone(&self) -> Status {
        lock(&self.reason)
            .clone()
            .unwrap_or_else(|| Status::unavailable("the connection closed"))
    }

    pub(crate) fn close(&self, reason: Status) {
        lock(&self.reason).get_or_insert(reason);
        self.closed.cancel();
        self.out.close();
        for (_, queue) in lock(&self.streams).drain() {
            queue.close();
        }
    }
}

/// A client connection. Cheap to clone: clones share the connection, and calls from any
/// number of tasks run concurrently over it. Generated `AsyncClient`s wrap one.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use bebop_rpc::{CallOptions, Client};
///
/// let client = Client::connect_tcp("127.0.0.1:7700").await?;
/// let reply = client
///     .unary::<str, String>(0x4d62_beb5, "Ada", CallOptions::new().timeout(Duration::from_secs(1)))
///     .await?;
/// println!("{}", reply.into_inner());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    handle: Arc<Handle>,
    /// A carrier other than the binary connection (`Client::over`).
    connector: Option<Arc<dyn Connector>>,
    /// The methods generated clients described (`Client::describe`), for carriers that
    /// route by name.
    methods: Arc<RwLock<HashMap<u32, MethodInfo>>>,
}

/// Closes the connection when the last client clone and call are gone (the connection's
/// own tasks hold `Shared`, not this).
struct Handle(CancellationToken);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects over TCP (with `TCP_NODELAY`).
    pub async fn connect_tcp(addr: impl tokio::net::ToSocketAddrs) -> std::io::Result<Self> {
        Client::connect_tcp_with(addr, ClientLimits::default()).await
    }

    /// Connects over TCP with `limits`.
    pub async fn connect_tcp_with(
        addr: impl tokio::net::ToSocketAddrs,
        limits: ClientLimits,
    ) -> std::io::Result<Self> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Client::with_limits(stream, limits))
    }

    /// Connects to a Unix socket.
    #[cfg(unix)]
    pub async fn connect_unix(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Ok(Client::new(tokio::net::UnixStream::connect(path).await?))
    }

    /// A client over any byte stream (a child process's pipes joined with
    /// `tokio::io::join`, say), with default limits. Must be called within a tokio runtime:
    /// it spawns the connection's reader and writer.
    pub fn new<IO: AsyncRead + AsyncWrite + Send + 'static>(io: IO) -> Self {
        Client::with_limits(io, ClientLimits::default())
    }

    /// A client with `limits`.
    pub fn with_limits<IO: AsyncRead + AsyncWrite + Send + 'static>(
        io: IO,
        limits: ClientLimits,
    ) -> Self {
        let (rd, wr) = tokio::io::split(io);
        let out = Outbox::new(limits.request_buffer);
        let mut preface = Metadata::new();
        preface.insert(MUX_KEY, "1");
        // A new outbox is open: this cannot fail.
        let _ = out.force(&wire::call_header_bytes(None, None, &preface, 0));
        let shared = Arc::new(Shared {
            out,
            streams: Mutex::new(HashMap::new()),
            next_stream: AtomicU32::new(1),
            closed: CancellationToken::new(),
            reason: Mutex::new(None),
            limits,
        });
        tokio::spawn(write_loop(wr, shared.clone()));
        tokio::spawn(read_loop(rd, shared.clone()));
        let handle = Arc::new(Handle(shared.closed.clone()));
        Client {
            shared,
            handle,
            connector: None,
            methods: Arc::default(),
        }
    }

    /// A client whose calls travel over `connector` (an HTTP or WebSocket transport, say)
    /// instead of a binary connection: each call is handed to the connector, which carries
    /// its request frames out and the response frames back. Generated `AsyncClient`s work
    /// over it unchanged. Must be called within a tokio runtime.
    pub fn over(connector: impl Connector) -> Self {
        Client::over_with(connector, ClientLimits::default())
    }

    /// [`over`](Self::over) with `limits` (`response_buffer` and `request_buffer` apply per
    /// call).
    pub fn over_with(connector: impl Connector, limits: ClientLimits) -> Self {
        let shared = Arc::new(Shared {
            out: Outbox::new(1),
            streams: Mutex::new(HashMap::new()),
            next_stream: AtomicU32::new(0),
            closed: CancellationToken::new(),
            reason: Mutex::new(None),
            limits,
        });
        shared.out.close();
        let handle = Arc::new(Handle(CancellationToken::new()));
        Client {
            shared,
            handle,
            connector: Some(Arc::new(connector)),
            methods: Arc::default(),
        }
    }

    /// Tells the client the names of `methods` (a generated service's `METHODS`), for
    /// carriers that route by name rather than id (HTTP's `POST /Service/Method`).
    /// Generated `AsyncClient::new` does this.
    pub fn describe(&self, methods: &[MethodInfo]) {
        let mut known = self.methods.write().unwrap_or_else(PoisonError::into_inner);
        for m in methods {
            known.insert(m.id, *m);
        }
    }

    /// The method `method_id` as described, or with its id alone.
    fn method_info(&self, method_id: u32, kind: MethodKind) -> MethodInfo {
        let known = self.methods.read().unwrap_or_else(PoisonError::into_inner);
        known.get(&method_id).copied().unwrap_or(MethodInfo {
            service: "",
            name: "",
            id: method_id,
            kind,
        })
    }

    /// Whether the connection has closed; every call then fails with `UNAVAILABLE` (or
    /// the error the server closed it with).
    pub fn is_closed(&self) -> bool {
        self.connector.is_none() && self.shared.closed.is_cancelled()
    }

    /// Resolves when the connection has closed.
    pub async fn closed(&self) {
        if self.connector.is_some() {
            return std::future::pending().await;
        }
        self.shared.closed.cancelled().await
    }

    /// Opens a call: takes the next stream id and queues the frame carrying the call
    /// header, followed by the request `first` in an `END_STREAM` frame if given (a unary
    /// or server-stream call: its whole request stream).
    async fn open<T: Encode + Sync + ?Sized>(
        &self,
        method_id: u32,
        kind: MethodKind,
        options: &CallOptions,
        first: Option<&T>,
    ) -> Result<CallHandle, Status> {
        if let Some(connector) = &self.connector {
            return self.open_over(connector, method_id, kind, options, first);
        }
        let header = wire::call_header_bytes(
            Some(method_id),
            options.deadline,
            &options.metadata,
            options.cursor,
        );
        let queue = Arc::new(FrameQueue::new(self.shared.limits.response_buffer));
        let shared = &self.shared;
        let pushed = tokio::select! {
            r = shared.out.push(|buf| {
                let id = shared.next_stream.fetch_add(2, Ordering::Relaxed);
                if id > u32::MAX - 2 {
                    return Err(Status::unavailable(
                        "this connection has used all its stream ids; open a new one",
                    ));
                }
                let start = buf.len();
                wire::push_frame(buf, FrameFlags::NONE, id, &Encoded(&header), None)?;
                if let Some(first) = first {
                    if let Err(e) = wire::push_frame(buf, FrameFlags::END_STREAM, id, first, None) {
                        buf.truncate(start);
                        return Err(e);
                    }
                }
                lock(&shared.streams).insert(id, queue.clone());
                Ok(id)
            }) => r,
            _ = shared.closed.cancelled() => return Err(shared.gone()),
        };
        let stream_id = pushed.map_err(|_| shared.gone())??;
        Ok(CallHandle {
            shared: self.shared.clone(),
            _handle: self.handle.clone(),
            stream_id,
            queue,
            finished: false,
            sent_end: Arc::new(AtomicBool::new(first.is_some())),
            own_carrier: false,
        })
    }

    /// Opens a call on the connector: the call gets a connection of its own, in effect (its
    /// own outbox of request frames and queue of responses, on stream 0).
    fn open_over<T: Encode + Sync + ?Sized>(
        &self,
        connector: &Arc<dyn Connector>,
        method_id: u32,
        kind: MethodKind,
        options: &CallOptions,
        first: Option<&T>,
    ) -> Result<CallHandle, Status> {
        let limits = self.shared.limits.clone();
        let queue = Arc::new(FrameQueue::new(limits.response_buffer));
        let call = Arc::new(Shared {
            out: Outbox::new(limits.request_buffer),
            streams: Mutex::new(HashMap::from([(0, queue.clone())])),
            next_stream: AtomicU32::new(0),
            closed: CancellationToken::new(),
            reason: Mutex::new(None),
            limits,
        });
        if let Some(first) = first {
            let frame = wire::frame(FrameFlags::END_STREAM, 0, first, None)?;
            // A new outbox is open: this cannot fail.
            let _ = call.out.force(&frame);
        }
        let outgoing = OutgoingCall {
            method: self.method_info(method_id, kind),
            kind,
            metadata: options.metadata.clone(),
            deadline: options.deadline,
            cursor: options.cursor,
            requests: OutgoingRequests::new(call.clone()),
            responses: IncomingResponses::new(call.clone(), queue.clone()),
        };
        let carried = connector.carry(outgoing);
        let ended = call.clone();
        tokio::spawn(async move {
            carried.await;
            ended.close(Status::unavailable(
                "the transport ended the call without a response",
            ));
        });
        Ok(CallHandle {
            shared: call,
            _handle: self.handle.clone(),
            stream_id: 0,
            queue,
            finished: false,
            sent_end: Arc::new(AtomicBool::new(first.is_some())),
            own_carrier: true,
        })
    }

    /// Calls a unary method.
    pub async fn unary<Req, Resp>(
        &self,
        method_id: u32,
        request: &Req,
        options: CallOptions,
    ) -> Result<Response<Resp>, Status>
    where
        Req: Encode + Sync + ?Sized,
        Resp: for<'a> Decode<'a>,
    {
        let deadline = options.deadline.map(instant_of);
        within(deadline, async {
            let mut call = self
                .open(method_id, MethodKind::Unary, &options, Some(request))
                .await?;
            call.read_unary().await
        })
        .await
    }

    /// Runs `batch` on the server in one round trip: a unary call of method 1
    /// (`docs/rpc.md`, "Batches"), so it works over every carrier. `options` are the batch
    /// call's: its deadline bounds every call inside (the server keeps a little of it back
    /// to answer in time; calls it cut short fail `DEADLINE_EXCEEDED`, the others keep
    /// their results), and its metadata reaches the batch call's interceptors but not the
    /// calls inside (those get [`Batch::metadata`](crate::Batch::metadata)).
    ///
    /// The whole batch fails (an `Err` here) when the server refuses it: `INVALID_ARGUMENT`
    /// for a negative or repeated call id or an `input_from` that names no earlier call,
    /// `RESOURCE_EXHAUSTED` for more calls than the server's limit. A call that fails is an
    /// `Err` of its own in the [`BatchResults`](crate::BatchResults).
    ///
    /// ```
    /// use bebop_rpc::{Batch, CallOptions, Client, Server, StatusCode};
    /// use bebop_rpc::transport::InProcess;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let client = Client::over(InProcess::new(Server::builder().build()));
    /// let mut batch = Batch::new();
    /// let a = batch.call(0xdead_beefu32, "x").unwrap();
    /// let results = client.batch(&batch, CallOptions::new()).await.unwrap();
    /// assert_eq!(results.get::<String>(a).unwrap_err().code(), StatusCode::NotFound);
    /// # }
    /// ```
    pub async fn batch(
        &self,
        batch: &crate::Batch,
        options: CallOptions,
    ) -> Result<crate::BatchResults, Status> {
        let request = batch.to_bytes()?;
        let response = self
            .unary::<Encoded<'_>, wire::RawMessage>(
                bebop_runtime::rpc::BATCH_METHOD_ID,
                &Encoded(&request),
                options,
            )
            .await?;
        let results = crate::BatchResults::from_bytes(&response.into_inner().0)?;
        results.check(batch)?;
        Ok(results)
    }

    /// Calls a server-stream method; read the responses from the returned [`Streaming`].
    pub async fn server_stream<Req, Resp>(
        &self,
        method_id: u32,
        request: &Req,
        options: CallOptions,
    ) -> Result<Streaming<Resp>, Status>
    where
        Req: Encode + Sync + ?Sized,
        Resp: for<'a> Decode<'a>,
    {
        let first = bebop_runtime::encode_to_vec(request)
            .map_err(|e| Status::internal(format!("encoding the request failed: {e}")))?;
        let deadline = options.deadline.map(instant_of);
        let call = within(
            deadline,
            self.open(
                method_id,
                MethodKind::ServerStream,
                &options,
                Some(&Encoded(&first)),
            ),
        )
        .await?;
        Ok(Streaming {
            call,
            deadline,
            timer: None,
            last_cursor: options.cursor,
            trailers: None,
            done: false,
            resume: Some(Resume {
                method_id,
                request: first,
                options,
            }),
            pump: None,
            _item: PhantomData,
        })
    }

    /// Calls a client-stream method with the requests `requests` yields. The server may
    /// answer before the stream is over; sending then stops.
    pub async fn client_stream<Req, Resp, S>(
        &self,
        method_id: u32,
        requests: S,
        options: CallOptions,
    ) -> Result<Response<Resp>, Status>
    where
        Req: Encode + Send,
        Resp: for<'a> Decode<'a>,
        S: Stream<Item = Req> + Send,
    {
        let deadline = options.deadline.map(instant_of);
        within(deadline, async {
            let mut call = self
                .open::<Encoded<'_>>(method_id, MethodKind::ClientStream, &options, None)
                .await?;
            let mut requests = std::pin::pin!(requests);
            loop {
                tokio::select! {
                    biased;
                    frame = call.queue.pop() => {
                        // The server answered early (or failed): stop sending.
                        return call.unary_from(frame).await;
                    }
                    item = requests.next() => match item {
                        Some(item) => {
                            // A carrier that ends the call once it answered closes the
                            // outbox: the answer, not the closed outbox, is the outcome.
                            let sender = call.sender();
                            tokio::select! {
                                biased;
                                frame = call.queue.pop() => return call.unary_from(frame).await,
                                sent = sender.send(FrameFlags::NONE, item) => {
                                    if let Err(e) = sent {
                                        return match call.queue.pop().await {
                                            Some(frame) => call.unary_from(Some(frame)).await,
                                            None => Err(e),
                                        };
                                    }
                                }
                            }
                        }
                        None => {
                            // Sent or not (the answer may have come and the carrier ended),
                            // what the server answered is the outcome.
                            let _ = call.sender().send(FrameFlags::END_STREAM, Encoded(&[])).await;
                            return call.read_unary().await;
                        }
                    },
                }
            }
        })
        .await
    }

    /// Calls a duplex method: `requests` is sent as it yields (from a task of its own),
    /// and the responses arrive on the returned [`Streaming`]. Dropping the `Streaming`
    /// cancels the call.
    pub async fn duplex<Req, Resp, S>(
        &self,
        method_id: u32,
        requests: S,
        options: CallOptions,
    ) -> Result<Streaming<Resp>, Status>
    where
        Req: Encode + Send + 'static,
        Resp: for<'a> Decode<'a>,
        S: Stream<Item = Req> + Send + 'static,
    {
        let deadline = options.deadline.map(instant_of);
        let call = within(
            deadline,
            self.open::<Encoded<'_>>(method_id, MethodKind::DuplexStream, &options, None),
        )
        .await?;
        let sender = call.sender();
        let stop = CancellationToken::new();
        let pump_stop = stop.clone();
        tokio::spawn(async move {
            let mut requests = std::pin::pin!(requests);
            loop {
                let item = tokio::select! {
                    item = requests.next() => item,
                    _ = pump_stop.cancelled() => return,
                };
                let sent = match item {
                    Some(item) => sender.send(FrameFlags::NONE, item).await,
                    None => {
                        let _ = sender.send(FrameFlags::END_STREAM, Encoded(&[])).await;
                        return;
                    }
                };
                if sent.is_err() {
                    return;
                }
            }
        });
        Ok(Streaming {
            call,
            deadline,
            timer: None,
            last_cursor: options.cursor,
            trailers: None,
            done: false,
            resume: None,
            pump: Some(stop.drop_guard()),
            _item: PhantomData,
        })
    }
}

async fn within<T>(
    deadline: Option<Instant>,
    work: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    match deadline {
        None => work.await,
        Some(at) => match tokio::time::timeout_at(at.into(), work).await {
            Ok(r) => r,
            Err(_) => Err(Status::deadline_exceeded(
                "the deadline passed while waiting for the server",
            )),
        },
    }
}

use std::future::Future;

/// Sends request frames of one call.
#[derive(Clone)]
struct CallSender {
    shared: Arc<Shared>,
    stream_id: u32,
    sent_end: Arc<AtomicBool>,
}

impl CallSender {
    /// Encodes `item` in a frame straight into the outbox, waiting for room.
    async fn send<T: Encode + Send>(&self, flags: FrameFlags, item: T) -> Result<(), Status> {
        let id = self.stream_id;
        let sent = tokio::select! {
            r = self.shared.out.push(move |buf| wire::push_frame(buf, flags, id, &item, None)) => {
                r.map_err(|_| self.shared.gone())?
            }
            _ = self.shared.closed.cancelled() => Err(self.shared.gone()),
        };
        if flags.contains(FrameFlags::END_STREAM) && sent.is_ok() {
            self.sent_end.store(true, Ordering::Release);
        }
        sent
    }
}

/// One open call: its stream id and the frames the server sends on it. Dropped before the
/// server ended the call, it cancels the call (an `END_STREAM | ERROR` frame with
/// `CANCELLED`) and never waits for an answer.
struct CallHandle {
    shared: Arc<Shared>,
    _handle: Arc<Handle>,
    stream_id: u32,
    queue: Arc<FrameQueue<OwnedFrame>>,
    /// The server ended the call.
    finished: bool,
    /// The client ended its requests.
    sent_end: Arc<AtomicBool>,
    /// The call has a carrier of its own (`Client::over`), which stops once the handle is
    /// gone.
    own_carrier: bool,
}

impl CallHandle {
    fn sender(&self) -> CallSender {
        CallSender {
            shared: self.shared.clone(),
            stream_id: self.stream_id,
            sent_end: self.sent_end.clone(),
        }
    }

    fn poll_next_frame(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<OwnedFrame, Status>> {
        match self.queue.poll_pop(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(f)) => {
                if f.is_end() {
                    self.finished = true;
                }
                Poll::Ready(Ok(f))
            }
            Poll::Ready(None) => {
                self.finished = true;
                Poll::Ready(Err(self.shared.gone()))
            }
        }
    }

    async fn next_frame(&mut self) -> Result<OwnedFrame, Status> {
        std::future::poll_fn(|cx| self.poll_next_frame(cx)).await
    }

    async fn read_unary<Resp: for<'a> Decode<'a>>(&mut self) -> Result<Response<Resp>, Status> {
        let frame = self.queue.pop().await;
        self.unary_from(frame).await
    }

    async fn unary_from<Resp: for<'a> Decode<'a>>(
        &mut self,
        frame: Option<OwnedFrame>,
    ) -> Result<Response<Resp>, Status> {
        let Some(frame) = frame else {
            self.finished = true;
            return Err(self.shared.gone());
        };
        if frame.is_end() {
            self.finished = true;
        }
        if frame.is_error() {
            return Err(Status::from_error_payload(&frame.payload));
        }
        if frame.is_trailer() {
            return Err(Status::internal(
                "the server sent trailers without a response",
            ));
        }
        let message = Resp::from_bytes(&frame.payload)
            .map_err(|e| Status::internal(format!("the response does not decode: {e}")))?;
        if frame.is_end() {
            return Ok(Response {
                message,
                metadata: Metadata::new(),
            });
        }
        let next = self.next_frame().await?;
        if next.is_error() {
            return Err(Status::from_error_payload(&next.payload));
        }
        if next.is_trailer() {
            return Ok(Response {
                message,
                metadata: wire::trailer_metadata(&next.payload)?,
            });
        }
        Err(Status::internal(
            "the server sent more than one response to a unary call",
        ))
    }
}

impl Drop for CallHandle {
    fn drop(&mut self) {
        lock(&self.shared.streams).remove(&self.stream_id);
        self.queue.close();
        let sent_end = self.sent_end.load(Ordering::Acquire);
        if (self.finished && sent_end) || self.shared.closed.is_cancelled() {
            return;
        }
        let bytes = if self.finished {
            // The server answered before the requests ended (docs/rpc.md, "Calls"): end them,
            // so the server can forget the stream.
            match wire::frame(FrameFlags::END_STREAM, self.stream_id, &Encoded(&[]), None) {
                Ok(b) => b,
                Err(_) => return,
            }
        } else {
            wire::error_frame(
                self.stream_id,
                &Status::cancelled("the client cancelled the call"),
            )
        };
        // A small frame that must not wait: it goes in whatever the outbox's budget.
        let _ = self.shared.out.force(&bytes);
        if self.own_carrier {
            self.shared.out.close();
        }
    }
}

/// A unary or client-stream call's response and the response metadata the server sent
/// with it (`TRAILER`).
#[derive(Clone, Debug, PartialEq)]
pub struct Response<T> {
    message: T,
    metadata: Metadata,
}

impl<T> Response<T> {
    pub(crate) fn from_parts(message: T, metadata: Metadata) -> Self {
        Response { message, metadata }
    }

    /// The response message.
    pub fn into_inner(self) -> T {
        self.message
    }

    /// The response message, borrowed.
    pub fn get_ref(&self) -> &T {
        &self.message
    }

    /// The response metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// Both parts.
    pub fn into_parts(self) -> (T, Metadata) {
        (self.message, self.metadata)
    }
}

/// A stream's next item with its cursor, `None` at the end.
type NextItem<T> = Result<Option<(T, Option<u64>)>, Status>;

struct Resume {
    method_id: u32,
    request: Vec<u8>,
    options: CallOptions,
}

/// The responses of a server-stream or duplex call, in order, with their cursors.
///
/// The client enforces the call's deadline on every read. Dropping the stream before its
/// end cancels the call. A server stream that broke (the connection dropped) resumes
/// from the last cursor received with [`resume`](Self::resume).
pub struct Streaming<T> {
    call: CallHandle,
    deadline: Option<Instant>,
    /// The deadline's timer, armed on the first read.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    last_cursor: u64,
    trailers: Option<Metadata>,
    done: bool,
    resume: Option<Resume>,
    pump: Option<tokio_util::sync::DropGuard>,
    _item: PhantomData<fn() -> T>,
}

impl<T: for<'a> Decode<'a>> Streaming<T> {
    /// The next response; `Ok(None)` at the end of the stream. An `ERROR` frame, a passed
    /// deadline or a broken connection is an `Err`, after the responses before it.
    pub async fn message(&mut self) -> Result<Option<T>, Status> {
        Ok(self.message_with_cursor().await?.map(|(item, _)| item))
    }

    /// The next response and the cursor it carried, if any.
    pub async fn message_with_cursor(&mut self) -> Result<Option<(T, Option<u64>)>, Status> {
        std::future::poll_fn(|cx| self.poll_message(cx)).await
    }

    fn poll_message(&mut self, cx: &mut TaskContext<'_>) -> Poll<NextItem<T>> {
        if self.done {
            return Poll::Ready(Ok(None));
        }
        if let Some(at) = self.deadline {
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at.into())));
            if timer.as_mut().poll(cx).is_ready() {
                self.done = true;
                return Poll::Ready(Err(Status::deadline_exceeded(
                    "the deadline passed while waiting for the server",
                )));
            }
        }
        let frame = match self.call.poll_next_frame(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(f)) => f,
            Poll::Ready(Err(s)) => {
                self.done = true;
                return Poll::Ready(Err(s));
            }
        };
        Poll::Ready(self.take(frame))
    }

    fn take(&mut self, frame: OwnedFrame) -> NextItem<T> {
        if frame.is_end() {
            self.done = true;
            self.pump = None;
        }
        if frame.is_error() {
            return Err(Status::from_error_payload(&frame.payload));
        }
        if frame.is_trailer() {
            self.trailers = Some(wire::trailer_metadata(&frame.payload)?);
            return Ok(None);
        }
        if frame.is_end() && frame.payload.is_empty() {
            return Ok(None);
        }
        let item = T::from_bytes(&frame.payload)
            .map_err(|e| Status::internal(format!("a response does not decode: {e}")))?;
        if let Some(c) = frame.cursor {
            self.last_cursor = c;
        }
        Ok(Some((item, frame.cursor)))
    }

    /// The last cursor received (or the one the call started from).
    pub fn cursor(&self) -> u64 {
        self.last_cursor
    }

    /// The response metadata, once the stream has ended with a `TRAILER`.
    pub fn trailers(&self) -> Option<&Metadata> {
        self.trailers.as_ref()
    }

    /// Calls the same server-stream method again on `client` (a new connection, usually),
    /// starting after the last cursor received: one call to pick up a broken stream.
    /// Duplex calls cannot be resumed (their requests are gone): `FAILED_PRECONDITION`
    /// does not exist in Bebop, so that is `INVALID_ARGUMENT`.
    pub async fn resume(&self, client: &Client) -> Result<Streaming<T>, Status> {
        let Some(resume) = &self.resume else {
            return Err(Status::invalid_argument(
                "only server streams can be resumed",
            ));
        };
        let options = resume.options.clone().cursor(self.last_cursor);
        let call = within(
            self.deadline,
            client.open(
                resume.method_id,
                MethodKind::ServerStream,
                &options,
                Some(&Encoded(&resume.request)),
            ),
        )
        .await?;
        Ok(Streaming {
            call,
            deadline: self.deadline,
            timer: None,
            last_cursor: self.last_cursor,
            trailers: None,
            done: false,
            resume: Some(Resume {
                method_id: resume.method_id,
                request: resume.request.clone(),
                options,
            }),
            pump: None,
            _item: PhantomData,
        })
    }

    /// Cancels the call now (the same as dropping the stream).
    pub fn cancel(self) {}
}

impl<T: for<'a> Decode<'a>> Stream for Streaming<T> {
    type Item = Result<T, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.poll_message(cx)
            .map(|r| r.map(|o| o.map(|(item, _)| item)).transpose())
    }
}

impl<T> Unpin for Streaming<T> {}

async fn write_loop<W: AsyncWrite + Unpin + Send + 'static>(mut wr: W, shared: Arc<Shared>) {
    if let Err(e) = wire::write_loop(&mut wr, &shared.out, None, &shared.closed).await {
        shared.close(Status::unavailable(format!(
            "writing to the server failed: {e}"
        )));
        return;
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), wr.shutdown()).await;
}

async fn read_loop<R: AsyncRead + Unpin + Send + 'static>(rd: R, shared: Arc<Shared>) {
    let mut reader = ElementReader {
        inner: BufReader::with_capacity(64 << 10, rd),
        max_payload: shared.limits.max_frame_payload,
        max_call_header: 0,
        element_timeout: shared.limits.element_timeout,
    };
    let mut last: Option<(u32, Arc<FrameQueue<OwnedFrame>>)> = None;
    let reason = loop {
        let frame = tokio::select! {
            f = reader.frame() => f,
            _ = shared.closed.cancelled() => break None,
        };
        let frame = match frame {
            Ok(f) => f,
            Err(ReadError::Closed) => {
                break Some(Status::unavailable("the server closed the connection"));
            }
            Err(ReadError::Io(e)) => {
                break Some(Status::unavailable(format!(
                    "reading from the server failed: {e}"
                )));
            }
            Err(ReadError::Stalled) => {
                break Some(Status::unavailable("the server stalled inside a frame"));
            }
            Err(ReadError::Refused { status, .. }) => break Some(status),
        };
        let id = frame.stream_id();
        if id == 0 && frame.is_error() {
            // A connection-level error: the server is closing the connection.
            break Some(Status::from_error_payload(&frame.payload));
        }
        let end = frame.is_end();
        // Consecutive frames are usually of the same stream: keep its queue at hand.
        let queue = match &last {
            Some((last_id, q)) if *last_id == id && !end => Some(q.clone()),
            _ => {
                let mut streams = lock(&shared.streams);
                if end {
                    streams.remove(&id)
                } else {
                    streams.get(&id).cloned()
                }
            }
        };
        last = match (&queue, end) {
            (Some(q), false) => Some((id, q.clone())),
            _ => None,
        };
        if let Some(queue) = queue {
            // A call that stopped reading closes its queue, which ends this wait.
            let size = frame.payload.len() + HEADER_SIZE;
            let _ = queue.push(frame, size).await;
        }
    };
    shared.close(reason.unwrap_or_else(|| Status::unavailable("the connection closed")));
}

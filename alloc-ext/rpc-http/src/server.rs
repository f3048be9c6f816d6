//! The server side: [`HttpService`], the `tower::Service` that turns HTTP requests into
//! calls of a [`bebop_rpc::Server`], and [`HttpServer`], which serves it over HTTP/1.1 and
//! HTTP/2 on TCP listeners, Unix sockets or any byte stream.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bebop_rpc::transport::{CallStart, RequestSender, ResponseKind, ResponseStream};
use bebop_rpc::{Address, Metadata, Peer, Server, Status, StatusCode};
use bebop_runtime::MethodKind;
use bebop_runtime::rpc::{FrameFlags, FrameHeader, ProtocolError, parse_frame};
use bytes::{Buf, Bytes, BytesMut};
use futures_util::FutureExt;
use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use http::{Method, Request, Response, Version};
use http_body::Frame;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::body::{Body, ResponseBody};
use crate::mapping::{
    CONTENT_TYPE_STREAM, CONTENT_TYPE_UNARY, CURSOR_HEADER, DEADLINE_HEADER, STATUS_HEADER,
    fits_headers, header_of, http_status, media_type, metadata_from_headers, parse_deadline,
    status_header_value,
};
use crate::read_ahead::{HTTP2_CONNECTION_WINDOW, READ_AHEAD, ReadAhead};

/// The error type request bodies are converted to.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type RequestBody = UnsyncBoxBody<Bytes, BoxError>;

/// How long the request of a call whose response has ended is still read (and dropped)
/// before it is abandoned, so that an HTTP/1.1 connection can stay in step.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// The most request bytes read and dropped after the call stopped taking requests.
const DRAIN_LIMIT: usize = 1 << 20;
/// The most response bytes gathered into one data chunk of a streaming response (the
/// frames already waiting; a frame is never held back for more).
const CHUNK: usize = 64 << 10;
/// The longest path quoted back in a `NOT_FOUND` detail.
const QUOTED_PATH: usize = 128;

/// A Bebop [`Server`] as a `tower::Service` of HTTP requests (`docs/rpc.md`, "HTTP
/// transport"): `POST /Service/Method` calls a method, `/_bebop/discovery` (also `GET`) lists
/// the services, `/_bebop/batch` is method 1, and `/_bebop/dispatch`, `/_bebop/resolve` and
/// `/_bebop/cancel` are methods 2 to 4. Mount it in an axum `Router` (`fallback_service`,
/// `nest_service`) or any hyper stack; [`HttpServer`] serves it on its own.
///
/// Calls run exactly as on the binary transport (the same checks, interceptors, deadlines
/// and limits). A request extension `Arc<Peer>` names the caller (its addresses and
/// identity); otherwise the service's own peer, if [`with_peer`](Self::with_peer) gave one,
/// or a peer without addresses.
///
/// ```
/// use bebop_rpc::Server;
/// use bebop_rpc_http::HttpService;
/// use http_body_util::{BodyExt, Full};
/// use tower_service::Service;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut service = HttpService::new(Server::builder().build());
/// let request = http::Request::get("/_bebop/discovery")
///     .body(Full::new(bytes::Bytes::new()))
///     .unwrap();
/// let response = service.call(request).await.unwrap();
/// assert_eq!(response.status(), 200);
/// assert_eq!(response.headers()["content-type"], "application/bebop");
/// // A DiscoveryResponse without services: an empty array in a 4-byte length.
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(&body[..], [0, 0, 0, 0]);
/// # }
/// ```
#[derive(Clone)]
pub struct HttpService {
    server: Server,
    peer: Option<Arc<Peer>>,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService")
            .field("server", &self.server)
            .field("peer", &self.peer)
            .finish()
    }
}

/// How a request body is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RequestShape {
    /// One bare payload.
    Bare,
    /// Binary frames, the last with `END_STREAM`.
    Frames,
}

/// Where a request goes.
struct Target {
    id: u32,
    kind: MethodKind,
}

impl HttpService {
    /// Serves the calls of `server`.
    pub fn new(server: Server) -> Self {
        HttpService { server, peer: None }
    }

    /// Calls come from `peer` (a connection's), unless a request carries an `Arc<Peer>`
    /// extension.
    pub fn with_peer(mut self, peer: Arc<Peer>) -> Self {
        self.peer = Some(peer);
        self
    }

    /// The server whose calls this serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Answers one HTTP request. Never fails: every problem is an HTTP response
    /// (`docs/rpc.md`, "HTTP transport").
    pub async fn handle<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = request.into_parts();
        // Mapping the frames forgets the size hint: take it first.
        let declared = http_body::Body::size_hint(&body).lower();
        let body: RequestBody = body
            .map_frame(|f| f.map_data(|mut d| d.copy_to_bytes(d.remaining())))
            .map_err(Into::into)
            .boxed_unsync();
        let peer = parts
            .extensions
            .get::<Arc<Peer>>()
            .cloned()
            .or_else(|| self.peer.clone())
            .unwrap_or_else(|| Arc::new(Peer::new(None, None)));
        match self.serve(parts, body, declared, peer).await {
            Ok(response) => response,
            Err(refusal) => refusal.into_response(),
        }
    }

    async fn serve(
        &self,
        parts: http::request::Parts,
        mut body: RequestBody,
        declared: u64,
        peer: Arc<Peer>,
    ) -> Result<Response<ResponseBody>, Refusal> {
        let target = self.route(&parts.method, parts.uri.path())?;
        let framed = match media_type(&parts.headers).as_deref() {
            None | Some(CONTENT_TYPE_UNARY) => false,
            Some(CONTENT_TYPE_STREAM) => true,
            Some(other) => {
                return Err(Refusal::new(
                    Status::invalid_argument(format!(
                        "content-type `{}` is neither {CONTENT_TYPE_UNARY} nor {CONTENT_TYPE_STREAM}",
                        quoted(other)
                    )),
                    http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ));
            }
        };
        let shape = match (target.kind, framed) {
            (MethodKind::Unary, true) => {
                return Err(Status::unimplemented(format!(
                    "method {:#010x} is unary: it takes one request ({CONTENT_TYPE_UNARY}), not a stream",
                    target.id
                ))
                .into());
            }
            (MethodKind::ClientStream | MethodKind::DuplexStream, true) => RequestShape::Frames,
            _ => RequestShape::Bare,
        };
        let h2 = parts.version >= Version::HTTP_2;
        if target.kind == MethodKind::DuplexStream && !h2 {
            return Err(Status::unimplemented(
                "duplex calls need HTTP/2; this request came over HTTP/1",
            )
            .into());
        }
        let limit = self.server.limits().max_frame_payload;
        let stall = self.server.limits().element_timeout;
        if shape == RequestShape::Bare && declared > limit as u64 {
            return Err(Status::resource_exhausted(format!(
                "the request body of {declared} bytes is over the limit of {limit} bytes"
            ))
            .into());
        }
        let start = call_start(target.id, &parts.headers, peer)?;
        let call = self.server.start_call(start)?;
        let (requests, responses) = call.into_parts();
        if target.kind == MethodKind::Unary {
            return Ok(unary(requests, responses, &mut body, limit, stall).await);
        }
        match shape {
            RequestShape::Bare => {
                let (requests, responses, early) =
                    send_bare(requests, responses, &mut body, limit, stall).await?;
                drop(requests);
                Ok(streaming(responses, early, None, h2))
            }
            RequestShape::Frames => {
                let (abort_tx, abort_rx) = oneshot::channel();
                tokio::spawn(forward_frames(body, requests, abort_tx, limit, stall));
                Ok(streaming(responses, None, Some(abort_rx), h2))
            }
        }
    }

    /// The method a request names: `/Service/Method` or one of the `/_bebop/` endpoints.
    fn route(&self, method: &Method, path: &str) -> Result<Target, Refusal> {
        let reserved = match path {
            "/_bebop/discovery" => Some((0, MethodKind::Unary)),
            "/_bebop/batch" => Some((1, MethodKind::Unary)),
            "/_bebop/dispatch" => Some((2, MethodKind::Unary)),
            "/_bebop/resolve" => Some((3, MethodKind::ServerStream)),
            "/_bebop/cancel" => Some((4, MethodKind::Unary)),
            _ => None,
        };
        let allowed = method == Method::POST
            || (method == Method::GET && reserved.is_some_and(|(id, _)| id == 0));
        if !allowed {
            let mut refusal = Refusal::new(
                Status::unimplemented(format!(
                    "Bebop calls are POST requests, not {}",
                    quoted(method.as_str())
                )),
                http::StatusCode::METHOD_NOT_ALLOWED,
            );
            refusal.allow = true;
            return Err(refusal);
        }
        if let Some((id, kind)) = reserved {
            return Ok(Target { id, kind });
        }
        let not_found = || Status::not_found(format!("no method {}", quoted(path)));
        let rest = path.strip_prefix('/').ok_or_else(not_found)?;
        let (service, name) = rest.split_once('/').ok_or_else(not_found)?;
        if service.is_empty() || name.is_empty() || name.contains('/') {
            return Err(not_found().into());
        }
        let id = bebop_runtime::method_id_parts(service, name);
        match self.server.method(id) {
            // The names must match too: a path that merely hashes to a served id is not it.
            Some(info) if info.service == service && info.name == name => Ok(Target {
                id,
                kind: info.kind,
            }),
            _ => Err(not_found().into()),
        }
    }
}

impl<B> tower_service::Service<Request<B>> for HttpService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Response<ResponseBody>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

/// A call refused before it started, answered as a unary error.
struct Refusal {
    status: Status,
    http: http::StatusCode,
    /// Add `allow: POST` (a 405).
    allow: bool,
}

impl Refusal {
    fn new(status: Status, http: http::StatusCode) -> Self {
        Refusal {
            status,
            http,
            allow: false,
        }
    }

    fn into_response(self) -> Response<ResponseBody> {
        let mut response = error_response(self.status.code(), self.status.to_error_payload());
        *response.status_mut() = self.http;
        if self.allow {
            response
                .headers_mut()
                .insert(http::header::ALLOW, HeaderValue::from_static("GET, POST"));
        }
        response
    }
}

impl From<Status> for Refusal {
    fn from(status: Status) -> Self {
        let http = http_status(status.code());
        Refusal::new(status, http)
    }
}

/// At most [`QUOTED_PATH`] bytes of untrusted text, cut on a character boundary.
fn quoted(text: &str) -> String {
    if text.len() <= QUOTED_PATH {
        return text.to_owned();
    }
    let mut end = QUOTED_PATH;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// The call's metadata, deadline and cursor from its request headers.
fn call_start(id: u32, headers: &HeaderMap, peer: Arc<Peer>) -> Result<CallStart, Refusal> {
    let mut start = CallStart::new(id, peer).metadata(metadata_from_headers(headers));
    if let Some(value) = headers.get(DEADLINE_HEADER) {
        start = match value.to_str().ok().and_then(parse_deadline) {
            Some(deadline) => start.deadline(Some(deadline)),
            // Refused INVALID_ARGUMENT by start_call, in its turn among the checks.
            None => start.invalid_deadline(),
        };
    }
    if let Some(value) = headers.get(CURSOR_HEADER) {
        let Some(cursor) = value.to_str().ok().and_then(|v| v.parse::<u64>().ok()) else {
            return Err(Status::invalid_argument(format!(
                "{CURSOR_HEADER} must be a decimal uint64"
            ))
            .into());
        };
        start = start.cursor(cursor);
    }
    Ok(start)
}

/// An HTTP error carrying a Bebop error: the mapped status, `bebop-status` and the
/// `RpcError` bytes.
fn error_response(code: StatusCode, rpc_error: impl Into<Bytes>) -> Response<ResponseBody> {
    let mut response = Response::new(Body::full(rpc_error));
    *response.status_mut() = http_status(code);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_UNARY));
    headers.insert(STATUS_HEADER, status_header_value(code));
    response
}

fn status_response(status: &Status) -> Response<ResponseBody> {
    error_response(status.code(), status.to_error_payload())
}

fn stalled() -> Status {
    Status::unavailable("the request body stalled for longer than the element timeout")
}

/// Reads a whole bare request body, refusing it as soon as it grows over `limit` or stops
/// arriving for `stall`.
async fn read_bare(
    body: &mut RequestBody,
    limit: usize,
    stall: Duration,
) -> Result<Vec<u8>, Status> {
    let mut out = Vec::new();
    loop {
        let Ok(frame) = tokio::time::timeout(stall, body.frame()).await else {
            return Err(stalled());
        };
        let Some(frame) = frame else {
            break;
        };
        let frame = frame
            .map_err(|e| Status::cancelled(format!("reading the request body failed: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > limit {
                return Err(Status::resource_exhausted(format!(
                    "the request body is over the limit of {limit} bytes"
                )));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// Reads the bare request and delivers it as the call's only request, unless the call
/// answers first (an interceptor refused it): then that first response frame is returned.
async fn send_bare(
    mut requests: RequestSender,
    mut responses: ResponseStream,
    body: &mut RequestBody,
    limit: usize,
    stall: Duration,
) -> Result<
    (
        RequestSender,
        ResponseStream,
        Option<Option<bebop_rpc::transport::ResponseFrame>>,
    ),
    Refusal,
> {
    let early = {
        let read = read_bare(body, limit, stall);
        tokio::pin!(read);
        tokio::select! {
            biased;
            r = &mut read => match r {
                Ok(payload) => {
                    // A call that already ended refuses it; its answer is on its way.
                    let _ = requests.send(payload, true).await;
                    None
                }
                Err(status) => {
                    responses.cancel();
                    return Err(status.into());
                }
            },
            first = responses.next() => Some(first),
        }
    };
    Ok((requests, responses, early))
}

/// A unary call: the bare request in, the bare response (or the error) out.
async fn unary(
    requests: RequestSender,
    responses: ResponseStream,
    body: &mut RequestBody,
    limit: usize,
    stall: Duration,
) -> Response<ResponseBody> {
    let (_requests, mut responses, early) =
        match send_bare(requests, responses, body, limit, stall).await {
            Ok(parts) => parts,
            Err(refusal) => return refusal.into_response(),
        };
    let first = match early {
        Some(first) => first,
        None => responses.next().await,
    };
    let Some(first) = first else {
        return status_response(&Status::unavailable(
            "the call was cancelled before it answered",
        ));
    };
    match first.kind() {
        ResponseKind::Error => {
            let code = first.status().map_or(StatusCode::Unknown, |s| s.code());
            error_response(code, Bytes::copy_from_slice(first.payload()))
        }
        ResponseKind::Message if first.is_end() => ok_response(first.payload(), &Metadata::new()),
        ResponseKind::Message => match responses.next().await {
            Some(next) if next.kind() == ResponseKind::Trailer => {
                let metadata = next.trailer_metadata().unwrap_or_default();
                ok_response(first.payload(), &metadata)
            }
            Some(next) if next.kind() == ResponseKind::Error => {
                let code = next.status().map_or(StatusCode::Unknown, |s| s.code());
                error_response(code, Bytes::copy_from_slice(next.payload()))
            }
            _ => status_response(&Status::internal(
                "the handler sent more than one response to a unary call",
            )),
        },
        // An empty response message (`bebop.Empty`) travels as an empty `END_STREAM`
        // frame, or as the trailer alone when the handler set response metadata.
        ResponseKind::End => ok_response(&[], &Metadata::new()),
        ResponseKind::Trailer => ok_response(&[], &first.trailer_metadata().unwrap_or_default()),
    }
}

/// `200`, the bare response, and the response metadata as headers (entries HTTP cannot
/// carry are left out, with a warning).
fn ok_response(payload: &[u8], metadata: &Metadata) -> Response<ResponseBody> {
    let mut response = Response::new(Body::full(Bytes::copy_from_slice(payload)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_UNARY));
    for (k, v) in metadata.iter() {
        match header_of(k, v) {
            Ok((name, value)) => {
                headers.insert(name, value);
            }
            Err(why) => tracing::warn!(%why, "response metadata left out of the HTTP response"),
        }
    }
    response
}

/// The bytes of a frame with an empty or given payload, stream id 0.
fn frame_bytes(flags: FrameFlags, payload: &[u8]) -> Bytes {
    let header = FrameHeader {
        length: u32::try_from(payload.len()).unwrap_or(u32::MAX),
        flags,
        stream_id: 0,
    };
    let mut bytes = Vec::with_capacity(9 + payload.len());
    bytes.extend_from_slice(&header.to_wire());
    bytes.extend_from_slice(payload);
    Bytes::from(bytes)
}

fn error_frame(status: &Status) -> Bytes {
    frame_bytes(
        FrameFlags::END_STREAM | FrameFlags::ERROR,
        &status.to_error_payload(),
    )
}

/// What the streaming response body holds between two frames.
struct Pump {
    responses: ResponseStream,
    /// The first response frame, when it came before the request was delivered.
    first: Option<Option<bebop_rpc::transport::ResponseFrame>>,
    /// A request stream that broke: answer with its status and stop.
    abort: Option<oneshot::Receiver<Status>>,
    h2: bool,
    trailers: Option<HeaderMap>,
    done: bool,
}

/// Waits for the request forwarder's verdict; pending forever once it finished without one.
async fn aborted(abort: &mut Option<oneshot::Receiver<Status>>) -> Status {
    let verdict = match abort.as_mut() {
        Some(rx) => rx.await,
        None => return std::future::pending().await,
    };
    match verdict {
        Ok(status) => status,
        Err(_) => {
            *abort = None;
            std::future::pending().await
        }
    }
}

impl Pump {
    /// The next data chunk (every response frame already waiting, up to [`CHUNK`] bytes),
    /// or the trailers after the last.
    async fn next(&mut self) -> Option<Frame<Bytes>> {
        if let Some(trailers) = self.trailers.take() {
            return Some(Frame::trailers(trailers));
        }
        if self.done {
            return None;
        }
        let mut chunk = Vec::new();
        match self.first.take() {
            Some(first) => self.take(first, &mut chunk),
            None => tokio::select! {
                biased;
                status = aborted(&mut self.abort) => {
                    self.responses.cancel();
                    self.done = true;
                    return Some(Frame::data(error_frame(&status)));
                }
                frame = self.responses.next() => self.take(frame, &mut chunk),
            },
        }
        while !self.done && chunk.len() < CHUNK {
            match self.responses.next().now_or_never() {
                Some(frame) => self.take(frame, &mut chunk),
                None => break,
            }
        }
        Some(Frame::data(Bytes::from(chunk)))
    }

    /// Appends what `frame` puts on the wire to `chunk`.
    fn take(&mut self, frame: Option<bebop_rpc::transport::ResponseFrame>, chunk: &mut Vec<u8>) {
        let Some(frame) = frame else {
            self.done = true;
            chunk.extend_from_slice(&error_frame(&Status::unavailable(
                "the call was cancelled before its response ended",
            )));
            return;
        };
        if frame.is_end() {
            self.done = true;
        }
        if self.h2 && frame.kind() == ResponseKind::Trailer {
            // HTTP/2: the response metadata travels as HTTP trailers after an empty
            // END_STREAM frame, unless some entry cannot be a header.
            let metadata = frame.trailer_metadata().unwrap_or_default();
            let mut headers = HeaderMap::new();
            if fits_headers(&metadata)
                && crate::mapping::metadata_into_headers(&metadata, &mut headers).is_ok()
            {
                self.trailers = Some(headers);
                chunk.extend_from_slice(&frame_bytes(FrameFlags::END_STREAM, &[]));
                return;
            }
        }
        chunk.extend_from_slice(frame.as_bytes());
    }
}

/// `200` and the call's response frames, as they come.
fn streaming(
    responses: ResponseStream,
    first: Option<Option<bebop_rpc::transport::ResponseFrame>>,
    abort: Option<oneshot::Receiver<Status>>,
    h2: bool,
) -> Response<ResponseBody> {
    let pump = Pump {
        responses,
        first,
        abort,
        h2,
        trailers: None,
        done: false,
    };
    let stream = futures_util::stream::unfold(pump, |mut pump| async move {
        let frame = pump.next().await?;
        Some((Ok::<_, Infallible>(frame), pump))
    });
    let mut response = Response::new(Body::stream(stream));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_STREAM));
    response
}

/// The status a broken request frame is refused with, naming where it started.
fn frame_refusal(error: ProtocolError, offset: u64) -> Status {
    Status::new(
        error.status_code(),
        format!("{error} (the frame at byte {offset} of the request body)"),
    )
}

/// Reads the frames of a streaming request body and delivers them to the call, until the
/// body ends or breaks. A broken stream (a frame over the limit, invalid flags, a body that
/// ends inside a frame or without `END_STREAM`, or stalls inside a frame) is reported on `abort`, which answers it
/// with an `ERROR` frame and cancels the call; a body that fails (the client went away, an
/// HTTP/2 reset) cancels the call.
async fn forward_frames(
    body: RequestBody,
    mut requests: RequestSender,
    mut abort: oneshot::Sender<Status>,
    limit: usize,
    stall: Duration,
) {
    // Read on while the call is busy, so that small DATA frames do not pile up in HTTP/2.
    let mut body = ReadAhead::new(body, READ_AHEAD);
    let mut buf = BytesMut::new();
    // Bytes of the body before `buf`.
    let mut offset: u64 = 0;
    let mut frames: u64 = 0;
    // The call takes no more requests (END_STREAM, a reset, or the call is over).
    let mut ended = false;
    let mut drained = 0usize;
    let mut response_gone = false;
    let refuse = |abort: oneshot::Sender<Status>, requests: &RequestSender, status: Status| {
        if abort.send(status).is_err() {
            requests.cancel();
        }
    };
    loop {
        let frame = if response_gone {
            match tokio::time::timeout(DRAIN_GRACE, body.frame()).await {
                Ok(f) => f,
                Err(_) => return,
            }
        } else if !buf.is_empty() {
            // Inside a frame: the rest must come within the element timeout.
            tokio::select! {
                f = tokio::time::timeout(stall, body.frame()) => match f {
                    Ok(f) => f,
                    Err(_) => {
                        refuse(abort, &requests, stalled());
                        return;
                    }
                },
                _ = abort.closed() => {
                    response_gone = true;
                    ended = true;
                    continue;
                }
            }
        } else {
            tokio::select! {
                f = body.frame() => f,
                _ = abort.closed() => {
                    // The response is over (or its client gone): the requests no longer
                    // matter; read what follows for a moment so HTTP/1.1 stays in step.
                    response_gone = true;
                    ended = true;
                    continue;
                }
            }
        };
        let data = match frame {
            None => {
                if !ended {
                    let status = if buf.is_empty() {
                        Status::invalid_argument(format!(
                            "the request body ended after {frames} frames without an END_STREAM frame"
                        ))
                    } else {
                        Status::invalid_argument(format!(
                            "the request body ended inside a frame: {} bytes of the frame at byte {offset}",
                            buf.len()
                        ))
                    };
                    refuse(abort, &requests, status);
                }
                return;
            }
            Some(Err(e)) => {
                tracing::debug!(error = %e, "the request body broke; cancelling the call");
                requests.cancel();
                return;
            }
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                // Request trailers mean nothing here.
                Err(_) => continue,
            },
        };
        if ended {
            drained += data.len();
            if drained > DRAIN_LIMIT {
                return;
            }
            continue;
        }
        buf.extend_from_slice(&data);
        loop {
            let parsed = match parse_frame(&buf, limit) {
                Ok((frame, used)) => {
                    Ok((frame.flags(), frame.payload.to_vec(), frame.cursor, used))
                }
                Err(e) => Err(e),
            };
            let (flags, payload, cursor, used) = match parsed {
                Ok(p) => p,
                Err(ProtocolError::Incomplete { .. }) => break,
                Err(e) => {
                    refuse(abort, &requests, frame_refusal(e, offset));
                    return;
                }
            };
            buf.advance(used);
            let at = offset;
            offset += used as u64;
            frames += 1;
            if flags.contains(FrameFlags::ERROR) && flags.is_valid_combination() {
                // The client reset its call (`END_STREAM | ERROR`): the response ends with
                // CANCELLED, and the call with it.
                let status = Status::cancelled(format!(
                    "the client cancelled the call (the frame at byte {at} of the request body)"
                ));
                refuse(abort, &requests, status);
                return;
            }
            match body
                .during(requests.send_frame(flags, payload, cursor))
                .await
            {
                Ok(()) => {
                    if flags.contains(FrameFlags::END_STREAM) {
                        ended = true;
                    }
                }
                // The call is over (it answered early, or was cancelled).
                Err(s) if s.code() == StatusCode::Cancelled => ended = true,
                Err(s) => {
                    let status = Status::new(
                        s.code(),
                        format!(
                            "{} (the frame at byte {at} of the request body)",
                            s.detail()
                        ),
                    );
                    refuse(abort, &requests, status);
                    return;
                }
            }
            if ended {
                drained += buf.len();
                buf.clear();
                break;
            }
        }
    }
}

/// Serves an [`HttpService`] over HTTP/1.1 and HTTP/2 (prior knowledge, told apart by the
/// connection preface, on the same port), on TCP, Unix sockets, any byte stream and, with
/// the `tls` feature, TLS (ALPN `h2` and `http/1.1`).
///
/// Tied to the Bebop server: every connection takes one of its `max_connections` (more
/// are answered `429`/`RESOURCE_EXHAUSTED` and closed), [`Server::shutdown`] stops the
/// accept loop, drains the connections (HTTP/2 `GOAWAY`, HTTP/1.1 closes once the call in
/// flight is answered), waits for them and closes what is left after the grace period.
/// Request headers are bounded by `max_call_header` (at least 8 KiB on HTTP/1.1), bodies by
/// `max_frame_payload`, the time to send request headers by `element_timeout`, and HTTP/2
/// streams per connection by `max_concurrent_calls`.
///
/// ```
/// use bebop_rpc::{CallOptions, Client, Server};
/// use bebop_rpc_http::{HttpConnector, HttpServer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder().build();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let url = format!("http://{}", listener.local_addr()?);
/// let serving = tokio::spawn(HttpServer::new(server.clone()).serve(listener));
///
/// let client = Client::over(HttpConnector::new(&url)?);
/// let discovery = client
///     .unary::<bebop_runtime::rpc::Empty, bebop_rpc::RawMessage>(0, &bebop_runtime::rpc::Empty {}, CallOptions::new())
///     .await?;
/// assert_eq!(discovery.into_inner().0, [0, 0, 0, 0]); // no services
///
/// server.shutdown(std::time::Duration::from_secs(1)).await;
/// serving.await??;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct HttpServer {
    service: HttpService,
}

impl HttpServer {
    /// Serves `server`'s calls.
    pub fn new(server: Server) -> Self {
        HttpServer {
            service: HttpService::new(server),
        }
    }

    /// The `tower::Service` this serves, to mount elsewhere.
    pub fn service(&self) -> HttpService {
        self.service.clone()
    }

    /// Accepts TCP connections until the Bebop server shuts down, serving each on its own
    /// task. Returns when shutdown begins (connections are then still finishing) or when
    /// accepting fails for good.
    pub async fn serve(self, listener: TcpListener) -> io::Result<()> {
        let server = self.service.server.clone();
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = server.shutting_down() => return Ok(()),
            };
            match accepted {
                Ok((stream, remote)) => {
                    let _ = stream.set_nodelay(true);
                    let local = stream.local_addr().ok().map(Address::Tcp);
                    let peer = Peer::new(Some(Address::Tcp(remote)), local);
                    let this = self.clone();
                    tokio::spawn(async move { this.serve_connection(stream, peer).await });
                }
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Accepts Unix socket connections until the Bebop server shuts down.
    #[cfg(unix)]
    pub async fn serve_unix(self, listener: tokio::net::UnixListener) -> io::Result<()> {
        let server = self.service.server.clone();
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = server.shutting_down() => return Ok(()),
            };
            match accepted {
                Ok((stream, _)) => {
                    let credentials = stream.peer_cred().ok().map(|c| bebop_rpc::Credentials {
                        uid: c.uid(),
                        gid: c.gid(),
                        pid: c.pid(),
                    });
                    let peer = Peer::new(
                        Some(Address::Unix {
                            path: None,
                            credentials,
                        }),
                        None,
                    );
                    let this = self.clone();
                    tokio::spawn(async move { this.serve_connection(stream, peer).await });
                }
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Serves one connection over any byte stream (a TLS stream, an in-memory pipe) until
    /// the peer closes it or the server shuts down.
    pub async fn serve_connection<IO>(&self, io: IO, peer: Peer)
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let server = &self.service.server;
        let limits = server.limits().clone();
        let slot = match server.open_connection(peer) {
            Ok(slot) => slot,
            Err(status) => return refuse(io, status, &limits).await,
        };
        let service = self.service.clone().with_peer(slot.peer().clone());
        let builder = builder(&limits, true);
        let connection =
            builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
        tokio::pin!(connection);
        tokio::select! {
            r = connection.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "HTTP connection ended with an error");
                }
                return;
            }
            _ = slot.draining() => {}
        }
        connection.as_mut().graceful_shutdown();
        tokio::select! {
            _ = connection.as_mut() => {}
            _ = slot.stopped() => {}
        }
    }
}

/// The hyper connection builder for `limits`.
fn builder(limits: &bebop_rpc::Limits, keep_alive: bool) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.element_timeout)
        .keep_alive(keep_alive)
        .max_buf_size(limits.max_call_header.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .initial_connection_window_size(HTTP2_CONNECTION_WINDOW)
        .max_header_list_size(u32::try_from(limits.max_call_header).unwrap_or(u32::MAX))
        .max_concurrent_streams(u32::try_from(limits.max_concurrent_calls).unwrap_or(u32::MAX));
    builder
}

/// Answers every request of a connection the server cannot take with `status`, for up to
/// `element_timeout`, then closes it.
async fn refuse<IO>(io: IO, status: Status, limits: &bebop_rpc::Limits)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |_request: Request<hyper::body::Incoming>| {
        let response = status_response(&status);
        std::future::ready(Ok::<_, Infallible>(response))
    });
    let builder = builder(limits, false);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    let _ = tokio::time::timeout(limits.element_timeout, connection).await;
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    ) || e.raw_os_error().is_some_and(|n| n == 24 || n == 23) // EMFILE, ENFILE
}

/// Serves `server` over HTTP on `listener`: [`HttpServer::serve`].
pub async fn serve(server: Server, listener: TcpListener) -> io::Result<()> {
    HttpServer::new(server).serve(listener).await
}

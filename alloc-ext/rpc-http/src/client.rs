//! The client side: [`HttpConnector`], a [`Connector`] that carries the calls of a
//! [`bebop_rpc::Client`] as HTTP requests.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bebop_rpc::transport::{Connector, IncomingResponses, OutgoingCall, OutgoingRequests};
use bebop_rpc::{Metadata, Status, StatusCode};
use bebop_runtime::rpc::{FrameFlags, ProtocolError, RpcError, parse_frame};
use bebop_runtime::{Decode, MethodInfo, MethodKind};
use bytes::{Buf, Bytes, BytesMut};
use futures_util::FutureExt;
use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use http::uri::{Authority, Scheme};
use http::{Method, Request, Response, Uri};
use http_body::Frame;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::client::legacy;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::body::Body;
use crate::mapping::{
    CONTENT_TYPE_STREAM, CONTENT_TYPE_UNARY, CURSOR_HEADER, DEADLINE_HEADER, STATUS_HEADER,
    format_deadline, is_reserved_header, media_type, metadata_into_headers,
    status_of_foreign_error,
};
use crate::read_ahead::{HTTP2_CONNECTION_WINDOW, READ_AHEAD, ReadAhead};
use crate::server::BoxError;

/// The most request bytes gathered into one chunk of a streaming request body.
const CHUNK: usize = 64 << 10;
/// The most bytes of a non-Bebop error body read, for its text in the status detail.
const FOREIGN_BODY: usize = 4096;
/// The most characters of a non-Bebop error body quoted in the status detail.
const FOREIGN_SNIPPET: usize = 200;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type RequestBody = Body<BoxError>;

/// Carries the calls of a [`bebop_rpc::Client`] over HTTP (`docs/rpc.md`, "HTTP
/// transport"): each call is one request, `POST {base}/{Service}/{Method}`, on pooled
/// connections. HTTP/1.1 by default; [`http2_prior_knowledge`](HttpConnectorBuilder::http2_prior_knowledge)
/// for h2c, and `https://` with the `tls` feature (ALPN picks HTTP/2 when the server has it).
///
/// The generated `AsyncClient` works over it unchanged for all four kinds of method, since
/// it describes its methods to the client ([`Client::describe`](bebop_rpc::Client::describe)):
/// HTTP routes by name. Duplex calls need HTTP/2; over HTTP/1.1 the server answers them
/// `UNIMPLEMENTED`. Dropping a call aborts its request (HTTP/2 `RST_STREAM`, or closing the
/// HTTP/1.1 connection).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use bebop_rpc::Client;
/// use bebop_rpc_http::HttpConnector;
///
/// let http1 = Client::over(HttpConnector::new("http://127.0.0.1:8080")?);
/// let h2c = Client::over(
///     HttpConnector::builder("http://127.0.0.1:8080").http2_prior_knowledge().build()?,
/// );
/// // let lab = lab::AsyncClient::new(h2c); // a generated client
/// # drop((http1, h2c)); Ok(()) }
/// ```
#[derive(Clone)]
pub struct HttpConnector {
    inner: Arc<Inner>,
}

struct Inner {
    scheme: Scheme,
    authority: Authority,
    /// The base URL's path without its trailing `/` (empty for the root).
    prefix: String,
    client: legacy::Client<Connect, RequestBody>,
    max_response: usize,
}

impl std::fmt::Debug for HttpConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConnector")
            .field(
                "base",
                &format_args!(
                    "{}://{}{}",
                    self.inner.scheme, self.inner.authority, self.inner.prefix
                ),
            )
            .finish_non_exhaustive()
    }
}

/// Builds an [`HttpConnector`].
#[derive(Clone)]
pub struct HttpConnectorBuilder {
    url: String,
    http2: bool,
    max_response: usize,
    #[cfg(feature = "tls")]
    tls: Option<Arc<tokio_rustls::rustls::ClientConfig>>,
}

impl std::fmt::Debug for HttpConnectorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConnectorBuilder")
            .field("url", &self.url)
            .field("http2", &self.http2)
            .field("max_response", &self.max_response)
            .finish_non_exhaustive()
    }
}

impl HttpConnectorBuilder {
    /// Speaks HTTP/2 from the first byte (h2c on `http://`, or HTTP/2 whatever ALPN says on
    /// `https://`), which duplex calls need.
    pub fn http2_prior_knowledge(mut self) -> Self {
        self.http2 = true;
        self
    }

    /// The largest response accepted: a unary response body, or one frame's payload of a
    /// streaming response (default 4 MiB, the server's default `max_frame_payload`).
    pub fn max_response_payload(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }

    /// The TLS configuration for `https://` URLs (its root certificates, client
    /// certificate); its ALPN protocols are set to `h2` and `http/1.1` when it has none.
    #[cfg(feature = "tls")]
    pub fn tls_config(mut self, config: Arc<tokio_rustls::rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
    }

    /// The connector; `INVALID_ARGUMENT` when the URL is not an `http://` (or, with the
    /// `tls` feature and a TLS configuration, `https://`) URL with a host, without a query.
    pub fn build(self) -> Result<HttpConnector, Status> {
        let bad = |why: &str| Status::invalid_argument(format!("base URL `{}`: {why}", self.url));
        let uri: Uri = self.url.parse().map_err(|e| bad(&format!("{e}")))?;
        let scheme = uri
            .scheme()
            .cloned()
            .ok_or_else(|| bad("no scheme (http:// or https://)"))?;
        let authority = uri.authority().cloned().ok_or_else(|| bad("no host"))?;
        if uri.query().is_some() {
            return Err(bad("a base URL has no query"));
        }
        let prefix = uri.path().trim_end_matches('/').to_owned();
        let mut http = legacy::connect::HttpConnector::new();
        http.set_nodelay(true);
        http.enforce_http(false);
        let connect = match scheme.as_str() {
            "http" => Connect::plain(http),
            #[cfg(feature = "tls")]
            "https" => {
                let Some(config) = self.tls.clone() else {
                    return Err(bad(
                        "https needs a TLS configuration (HttpConnectorBuilder::tls_config)",
                    ));
                };
                Connect::tls(http, config, self.http2)
            }
            #[cfg(not(feature = "tls"))]
            "https" => return Err(bad("https needs the `tls` feature of bebop-rpc-http")),
            other => return Err(bad(&format!("the scheme is `{other}`, not http or https"))),
        };
        let client = legacy::Client::builder(TokioExecutor::new())
            .http2_only(self.http2)
            .http2_initial_connection_window_size(HTTP2_CONNECTION_WINDOW)
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .build(connect);
        Ok(HttpConnector {
            inner: Arc::new(Inner {
                scheme,
                authority,
                prefix,
                client,
                max_response: self.max_response,
            }),
        })
    }
}

impl HttpConnector {
    /// A connector for the server at `url` (`http://host:port`, with a path prefix when
    /// the service is mounted under one), speaking HTTP/1.1.
    pub fn new(url: &str) -> Result<Self, Status> {
        HttpConnector::builder(url).build()
    }

    /// A builder for the server at `url`.
    pub fn builder(url: &str) -> HttpConnectorBuilder {
        HttpConnectorBuilder {
            url: url.to_owned(),
            http2: false,
            max_response: 4 << 20,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// The URL path of `method`: `/Service/Method`, or the `/_bebop/` endpoint of a
    /// reserved id; an undescribed method has none.
    fn path_of(&self, method: &MethodInfo) -> Result<String, Status> {
        let path = if !method.service.is_empty() && !method.name.is_empty() {
            format!("/{}/{}", method.service, method.name)
        } else {
            let endpoint = match method.id {
                0 => "discovery",
                1 => "batch",
                2 => "dispatch",
                3 => "resolve",
                4 => "cancel",
                id => {
                    return Err(Status::invalid_argument(format!(
                        "the HTTP transport routes by name: method {id:#010x} was not described \
                         to the client (Client::describe, which generated clients call)"
                    )));
                }
            };
            format!("/_bebop/{endpoint}")
        };
        Ok(format!("{}{path}", self.inner.prefix))
    }

    fn request(&self, call: &CallParts, body: RequestBody) -> Result<Request<RequestBody>, Status> {
        let path = self.path_of(&call.method)?;
        let uri = Uri::builder()
            .scheme(self.inner.scheme.clone())
            .authority(self.inner.authority.clone())
            .path_and_query(path.as_str())
            .build()
            .map_err(|e| Status::invalid_argument(format!("the URL path `{path}`: {e}")))?;
        let mut request = Request::new(body);
        *request.method_mut() = Method::POST;
        *request.uri_mut() = uri;
        let headers = request.headers_mut();
        let content_type = match call.kind {
            MethodKind::Unary => CONTENT_TYPE_UNARY,
            _ => CONTENT_TYPE_STREAM,
        };
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        metadata_into_headers(&call.metadata, headers).map_err(Status::invalid_argument)?;
        if let Some(deadline) = call.deadline {
            let value = HeaderValue::from_str(&format_deadline(deadline))
                .map_err(|e| Status::invalid_argument(format!("the deadline: {e}")))?;
            headers.insert(DEADLINE_HEADER, value);
        }
        if call.cursor != 0 {
            headers.insert(CURSOR_HEADER, HeaderValue::from(call.cursor));
        }
        Ok(request)
    }
}

/// Where the carrier watches for the caller giving up.
enum Watch {
    /// The request frames are at hand (a unary or server-stream call, whose one request
    /// went in the body).
    Now(OutgoingRequests),
    /// The request frames come back once the streaming request body has sent its last.
    Later(oneshot::Receiver<OutgoingRequests>),
}

impl Watch {
    /// Resolves when the caller cancels the call or goes away.
    async fn cancelled(self) {
        let mut requests = match self {
            Watch::Now(r) => r,
            Watch::Later(rx) => match rx.await {
                Ok(r) => r,
                // The request body is gone without ending: the request failed or was
                // aborted, which the response side reports.
                Err(_) => return std::future::pending().await,
            },
        };
        loop {
            match requests.next().await {
                None => return,
                Some(f) if f.is_cancel() => return,
                Some(_) => {}
            }
        }
    }
}

/// What a request is made of, besides its body.
struct CallParts {
    method: MethodInfo,
    kind: MethodKind,
    metadata: Metadata,
    deadline: Option<std::time::SystemTime>,
    cursor: u64,
}

impl Connector for HttpConnector {
    fn carry(&self, call: OutgoingCall) -> bebop_rpc::BoxFuture<'static, ()> {
        let OutgoingCall {
            method,
            kind,
            metadata,
            deadline,
            cursor,
            mut requests,
            responses,
            ..
        } = call;
        let parts = CallParts {
            method,
            kind,
            metadata,
            deadline,
            cursor,
        };
        let this = self.clone();
        Box::pin(async move {
            let (body, watch) = match parts.kind {
                MethodKind::Unary | MethodKind::ServerStream => {
                    let Some(first) = requests.next().await else {
                        return;
                    };
                    if first.is_cancel() {
                        return;
                    }
                    (Body::full(first.payload), Watch::Now(requests))
                }
                MethodKind::ClientStream | MethodKind::DuplexStream => {
                    let (tx, rx) = oneshot::channel();
                    (streaming_body(requests, tx), Watch::Later(rx))
                }
            };
            let request = match this.request(&parts, body) {
                Ok(r) => r,
                Err(status) => {
                    let _ = responses.fail(&status).await;
                    return;
                }
            };
            let work = async {
                let uri = request.uri().clone();
                let response = match this.inner.client.request(request).await {
                    Ok(r) => r,
                    Err(e) => {
                        return Err(Status::unavailable(format!(
                            "the HTTP request to {uri} failed: {}",
                            error_chain(&e)
                        )));
                    }
                };
                deliver(response, &responses, this.inner.max_response).await
            };
            tokio::select! {
                biased;
                outcome = work => {
                    if let Err(status) = outcome {
                        let _ = responses.fail(&status).await;
                    }
                }
                // The caller gave up: dropping the request aborts it.
                _ = watch.cancelled() => {}
            }
        })
    }
}

/// The error and its sources, for a status detail.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The request body of a client-stream or duplex call: the request frames as they come,
/// those already waiting sent together in one chunk (up to [`CHUNK`] bytes: HTTP/2 servers
/// count tiny DATA frames against a budget and close connections that send too many). The
/// requests go back on `give_back` once the last frame is out, so the carrier can keep
/// watching for a cancel; a cancel (or the caller gone) fails the body, which aborts the
/// request.
fn streaming_body(
    requests: OutgoingRequests,
    give_back: oneshot::Sender<OutgoingRequests>,
) -> RequestBody {
    enum State {
        Sending(OutgoingRequests, oneshot::Sender<OutgoingRequests>),
        Done,
    }
    let stream =
        futures_util::stream::unfold(State::Sending(requests, give_back), |state| async move {
            let State::Sending(mut requests, give_back) = state else {
                return None;
            };
            let mut chunk = Vec::new();
            let mut next = requests.next().await;
            loop {
                match next {
                    None => return Some((Err(cancelled_body()), State::Done)),
                    Some(f) if f.is_cancel() => return Some((Err(cancelled_body()), State::Done)),
                    Some(f) if f.is_end() => {
                        chunk.extend_from_slice(&f.bytes);
                        let _ = give_back.send(requests);
                        return Some((Ok(Frame::data(Bytes::from(chunk))), State::Done));
                    }
                    Some(f) => chunk.extend_from_slice(&f.bytes),
                }
                if chunk.len() >= CHUNK {
                    break;
                }
                match requests.next().now_or_never() {
                    Some(more) => next = more,
                    None => break,
                }
            }
            Some((
                Ok(Frame::data(Bytes::from(chunk))),
                State::Sending(requests, give_back),
            ))
        });
    Body::stream(stream)
}

fn cancelled_body() -> BoxError {
    "the caller cancelled the call".into()
}

/// Reads at most `limit` bytes of `body`; with `truncate`, what is over is dropped instead of
/// failing.
async fn collect(body: &mut Incoming, limit: usize, truncate: bool) -> Result<Vec<u8>, Status> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            Status::unavailable(format!("reading the response failed: {}", error_chain(&e)))
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if out.len() + data.len() > limit {
            if truncate {
                let room = limit - out.len();
                out.extend_from_slice(&data[..room]);
                return Ok(out);
            }
            return Err(Status::resource_exhausted(format!(
                "the response is over the client's limit of {limit} bytes"
            )));
        }
        out.extend_from_slice(&data);
    }
    Ok(out)
}

/// Response metadata from a unary response's headers.
fn metadata_of(headers: &HeaderMap) -> Metadata {
    let mut md = Metadata::new();
    for (name, value) in headers {
        if is_reserved_header(name.as_str()) {
            continue;
        }
        if let Ok(text) = std::str::from_utf8(value.as_bytes()) {
            md.insert(name.as_str(), text);
        }
    }
    md
}

/// Hands the response to the caller. `Err`: the status to fail the call with; a caller
/// that went away ends it quietly.
async fn deliver(
    response: Response<Incoming>,
    responses: &IncomingResponses,
    max: usize,
) -> Result<(), Status> {
    let (parts, mut body) = response.into_parts();
    if parts.status != http::StatusCode::OK {
        return Err(error_of(&parts, &mut body, max).await);
    }
    match media_type(&parts.headers).as_deref() {
        Some(CONTENT_TYPE_UNARY) => {
            let payload = collect(&mut body, max, false).await?;
            let metadata = metadata_of(&parts.headers);
            if metadata.is_empty() {
                let _ = responses.push(FrameFlags::END_STREAM, payload, None).await;
            } else if responses
                .push(FrameFlags::NONE, payload, None)
                .await
                .is_ok()
            {
                let _ = responses.finish(&metadata).await;
            }
            Ok(())
        }
        Some(CONTENT_TYPE_STREAM) => frames(&mut body, responses, max).await,
        other => Err(Status::unknown(format!(
            "the server answered 200 with content-type {}, not a Bebop body",
            other.unwrap_or("(none)")
        ))),
    }
}

/// The status of a non-200 response: its `RpcError` when it has one, else mapped from
/// the HTTP status.
async fn error_of(parts: &http::response::Parts, body: &mut Incoming, max: usize) -> Status {
    let code = parts
        .headers
        .get(STATUS_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u8>().ok())
        .map(StatusCode::from);
    let bebop = media_type(&parts.headers).as_deref() == Some(CONTENT_TYPE_UNARY);
    if bebop && code.is_some() {
        match collect(body, max, false).await {
            Ok(bytes) if RpcError::from_bytes(&bytes).is_ok() => {
                return Status::from_error_payload(&bytes);
            }
            Ok(_) => {}
            Err(status) => return status,
        }
        return status_of_foreign_error(parts.status, code, "");
    }
    let bytes = collect(body, FOREIGN_BODY, true).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let snippet: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(FOREIGN_SNIPPET)
        .collect();
    status_of_foreign_error(parts.status, code, &snippet)
}

/// Reads the frames of a streaming response and hands them over. The stream ends at the
/// frame that ends it; an empty `END_STREAM` frame waits for the body's end, since HTTP/2
/// carries the response metadata as trailers after it.
async fn frames(
    body: &mut Incoming,
    responses: &IncomingResponses,
    max: usize,
) -> Result<(), Status> {
    // Read on while the caller is slow, so that small DATA frames do not pile up in HTTP/2.
    let mut body = ReadAhead::new(body, READ_AHEAD);
    let mut buf = BytesMut::new();
    let mut offset: u64 = 0;
    let mut ended = false;
    let mut trailers: Option<Metadata> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            Status::unavailable(format!("reading the response failed: {}", error_chain(&e)))
        })?;
        let data = match frame.into_data() {
            Ok(data) => data,
            Err(frame) => {
                if let Ok(t) = frame.into_trailers() {
                    trailers = Some(metadata_of(&t));
                }
                continue;
            }
        };
        if ended {
            continue;
        }
        buf.extend_from_slice(&data);
        loop {
            let parsed = match parse_frame(&buf, max) {
                Ok((f, used)) => Ok((f.flags(), f.payload.to_vec(), f.cursor, used)),
                Err(e) => Err(e),
            };
            let (flags, payload, cursor, used) = match parsed {
                Ok(p) => p,
                Err(ProtocolError::Incomplete { .. }) => break,
                Err(e) => {
                    return Err(Status::new(
                        if matches!(e, ProtocolError::FrameTooLarge { .. }) {
                            StatusCode::ResourceExhausted
                        } else {
                            StatusCode::Internal
                        },
                        format!(
                            "the server sent a bad frame at byte {offset} of the response: {e}"
                        ),
                    ));
                }
            };
            buf.advance(used);
            offset += used as u64;
            let bare_end = flags.contains(FrameFlags::END_STREAM)
                && !flags.intersects(FrameFlags::ERROR | FrameFlags::TRAILER)
                && payload.is_empty();
            if bare_end {
                ended = true;
                break;
            }
            if body
                .during(responses.push(flags, payload, cursor))
                .await
                .is_err()
            {
                return Ok(());
            }
            if flags.contains(FrameFlags::END_STREAM) {
                return Ok(());
            }
        }
    }
    if ended {
        let metadata = trailers.unwrap_or_default();
        let _ = responses.finish(&metadata).await;
        return Ok(());
    }
    Err(Status::unavailable(if buf.is_empty() {
        "the response ended before its stream did".to_owned()
    } else {
        format!("the response ended inside a frame, at byte {offset}")
    }))
}

/// Opens connections: TCP, and TLS over it for `https://`.
#[derive(Clone)]
struct Connect {
    http: legacy::connect::HttpConnector,
    #[cfg(feature = "tls")]
    tls: Option<tokio_rustls::TlsConnector>,
}

impl Connect {
    fn plain(http: legacy::connect::HttpConnector) -> Self {
        Connect {
            http,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    #[cfg(feature = "tls")]
    fn tls(
        http: legacy::connect::HttpConnector,
        config: Arc<tokio_rustls::rustls::ClientConfig>,
        http2_only: bool,
    ) -> Self {
        let config = if config.alpn_protocols.is_empty() {
            let mut c = (*config).clone();
            c.alpn_protocols = if http2_only {
                vec![b"h2".to_vec()]
            } else {
                vec![b"h2".to_vec(), b"http/1.1".to_vec()]
            };
            Arc::new(c)
        } else {
            config
        };
        Connect {
            http,
            tls: Some(tokio_rustls::TlsConnector::from(config)),
        }
    }
}

impl tower_service::Service<Uri> for Connect {
    type Response = Io;
    type Error = BoxError;
    type Future = BoxFuture<Result<Io, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        tower_service::Service::<Uri>::poll_ready(&mut self.http, cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = tower_service::Service::<Uri>::call(&mut self.http, uri.clone());
        #[cfg(feature = "tls")]
        let tls = self.tls.clone();
        Box::pin(async move {
            let tcp = connecting.await?;
            #[cfg(feature = "tls")]
            if uri.scheme_str() == Some("https") {
                let Some(tls) = tls else {
                    return Err("https needs a TLS configuration".into());
                };
                let host = uri
                    .host()
                    .unwrap_or_default()
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.to_owned())?;
                let stream = tls.connect(name, tcp.into_inner()).await?;
                return Ok(Io::Tls(Box::new(TokioIo::new(stream))));
            }
            let _ = &uri;
            Ok(Io::Plain(tcp))
        })
    }
}

/// A client connection: plain TCP or TLS.
enum Io {
    Plain(TokioIo<TcpStream>),
    #[cfg(feature = "tls")]
    Tls(Box<TokioIo<tokio_rustls::client::TlsStream<TcpStream>>>),
}

impl Connection for Io {
    fn connected(&self) -> Connected {
        match self {
            Io::Plain(s) => s.connected(),
            #[cfg(feature = "tls")]
            Io::Tls(s) => {
                let (tcp, session) = s.inner().get_ref();
                let connected = tcp.connected();
                if session.alpn_protocol() == Some(b"h2") {
                    connected.negotiated_h2()
                } else {
                    connected
                }
            }
        }
    }
}

impl hyper::rt::Read for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl hyper::rt::Write for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "tls")]
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Io::Plain(s) => s.is_write_vectored(),
            #[cfg(feature = "tls")]
            Io::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            #[cfg(feature = "tls")]
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }
}

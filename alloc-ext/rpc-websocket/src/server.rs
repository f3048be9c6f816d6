//! The server side: [`serve`] accepts WebSocket connections, [`serve_socket`] serves one
//! upgraded elsewhere; each connection carries one call through
//! [`Server::start_call`](bebop_rpc::Server::start_call).

use std::io;
use std::time::Duration;

use bebop_rpc::transport::{CallStart, ConnectionSlot, RequestSender, ResponseStream};
use bebop_rpc::{Address, Limits, Metadata, Peer, Server, Status, StatusCode};
use bebop_runtime::rpc::{
    Encoded, FrameFlags, ProtocolError, encode_frame, frame_len, parse_call_header_exact,
    parse_frame_exact,
};
use bebop_runtime::timestamp_to_system_time;
use futures_util::{FutureExt, SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Error as WsError, Message};

use crate::{parse_one_frame, websocket_config};

/// How long a closing connection waits for the peer's side of the closing handshake.
const CLOSE_LINGER: Duration = Duration::from_secs(2);
/// Bytes of response frames written in one go at most.
const BATCH: usize = 64 << 10;
/// While skipping what a peer still sends after a broken message, this long without a byte
/// ends the wait.
const QUIET: Duration = Duration::from_millis(100);

/// Accepts WebSocket connections on `listener` until [`Server::shutdown`], serving each on a
/// task of its own: the opening handshake (on any request path), then one call. Returns
/// `Ok` when shutdown begins (connections still finishing keep `shutdown` waiting), or the
/// error when accepting fails for good.
///
/// The server's [`Limits`] hold: `max_connections` (counted together with the server's other
/// listeners; a connection over it is answered `RESOURCE_EXHAUSTED` and closed),
/// `max_call_header` and `max_frame_payload` (WebSocket messages larger than the largest
/// element are refused from their WebSocket frame header, unread), `element_timeout` (for
/// the handshake, then for the call header), `write_timeout` and the call limits of
/// [`Server::start_call`].
///
/// ```
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let server = bebop_rpc::Server::builder().build(); // .add_service(...)
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let serving = tokio::spawn(bebop_rpc_websocket::serve(server.clone(), listener));
/// // ... later: stop accepting, give calls five seconds to finish.
/// server.shutdown(Duration::from_secs(5)).await;
/// serving.await??;
/// # Ok(()) }
/// ```
pub async fn serve(server: Server, listener: TcpListener) -> io::Result<()> {
    let shutting_down = server.shutting_down();
    tokio::pin!(shutting_down);
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = &mut shutting_down => return Ok(()),
        };
        match accepted {
            Ok((stream, remote)) => {
                let _ = stream.set_nodelay(true);
                let local = stream.local_addr().ok().map(Address::Tcp);
                let peer = Peer::new(Some(Address::Tcp(remote)), local);
                // Admitted before its task starts, so that a shutdown begun meanwhile waits
                // for it.
                let admitted = server.open_connection(peer);
                let server = server.clone();
                tokio::spawn(async move {
                    let limits = server.limits();
                    let Some(socket) = accept(stream, limits).await else {
                        return;
                    };
                    match admitted {
                        Ok(connection) => run(&server, socket, connection).await,
                        Err(status) => refuse(socket, &status, limits).await,
                    }
                });
            }
            Err(e) if is_transient(&e) => {
                tracing::warn!(error = %e, "accept failed; retrying");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The WebSocket opening handshake, within `element_timeout`.
async fn accept(stream: TcpStream, limits: &Limits) -> Option<WebSocketStream<TcpStream>> {
    let config = websocket_config(limits);
    let handshake = tokio_tungstenite::accept_async_with_config(stream, Some(config));
    match tokio::time::timeout(limits.element_timeout, handshake).await {
        Ok(Ok(socket)) => Some(socket),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "the WebSocket handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!("the WebSocket handshake timed out");
            None
        }
    }
}

/// Serves one call on a WebSocket connection that has already been upgraded (by an HTTP
/// server, say), from `peer`, until the call is over and the WebSocket closed. The
/// connection counts against `Limits::max_connections` and keeps [`Server::shutdown`]
/// waiting while it runs. Build `socket` with [`websocket_config`](crate::websocket_config)
/// so that oversized messages are refused unread; larger ones it lets through are still
/// refused, after they were read. The request path is the HTTP server's business.
///
/// ```
/// use bebop_rpc::{Peer, Server};
/// use bebop_rpc_websocket::tokio_tungstenite::WebSocketStream;
/// use bebop_rpc_websocket::tokio_tungstenite::tungstenite::{Message, protocol::Role};
/// use futures_util::{SinkExt, StreamExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::builder().build();
/// // Stands in for a connection an HTTP server upgraded (hyper's `Upgraded`, say).
/// let (upgraded, other_end) = tokio::io::duplex(4096);
/// let config = bebop_rpc_websocket::websocket_config(server.limits());
/// let socket = WebSocketStream::from_raw_socket(upgraded, Role::Server, Some(config)).await;
/// tokio::spawn(bebop_rpc_websocket::serve_socket(server, socket, Peer::new(None, None)));
///
/// // The client calls method 0x1a2b3c4d, which the server does not have.
/// let mut client = WebSocketStream::from_raw_socket(other_end, Role::Client, None).await;
/// let header = vec![0x06, 0, 0, 0, 0x01, 0x4d, 0x3c, 0x2b, 0x1a, 0x00];
/// client.send(Message::binary(header)).await.unwrap();
/// let Some(Ok(Message::Binary(answer))) = client.next().await else { panic!() };
/// assert_eq!(answer[4], 0x03); // END_STREAM | ERROR: NOT_FOUND
/// # }
/// ```
pub async fn serve_socket<S>(server: Server, socket: WebSocketStream<S>, peer: Peer)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    match server.open_connection(peer) {
        Ok(connection) => run(&server, socket, connection).await,
        Err(status) => refuse(socket, &status, server.limits()).await,
    }
}

/// Answers `status` on a connection the server does not serve, and closes it.
async fn refuse<S>(mut socket: WebSocketStream<S>, status: &Status, limits: &Limits)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let code = match status.code() {
        StatusCode::Unavailable => CloseCode::Away,
        _ => CloseCode::Again,
    };
    close(&mut socket, Some(status), code, limits, false).await;
}

/// How the reading side of a call ended.
enum ReadEnd {
    /// The client closed the WebSocket or the connection, or cancelled the call.
    Gone,
    /// The client broke the protocol: answer, then close with this code. `broken`: the
    /// WebSocket itself cannot be read any further.
    Refuse(Status, CloseCode, bool),
}

/// How the writing side of a call ended.
enum WriteEnd {
    /// The last frame of the response was sent.
    Ended,
    /// The call stopped without a last frame: the server cancelled it after the shutdown's
    /// grace period.
    Stopped,
    /// The client stopped reading for `write_timeout`, or the connection broke.
    Failed,
}

async fn run<S>(server: &Server, mut socket: WebSocketStream<S>, connection: ConnectionSlot)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let limits = server.limits();
    // 1. The call header, within element_timeout (docs/rpc.md, "WebSocket transport").
    let first = tokio::select! {
        r = tokio::time::timeout(limits.element_timeout, next_message(&mut socket)) => r,
        _ = server.shutting_down() => {
            let status = Status::unavailable("the server is shutting down");
            close(&mut socket, Some(&status), CloseCode::Away, limits, false).await;
            return;
        }
    };
    let bytes = match first {
        Err(_) => {
            let status = Status::unavailable(format!(
                "no call header arrived within {:?} of the WebSocket opening",
                limits.element_timeout
            ));
            close(&mut socket, Some(&status), CloseCode::Policy, limits, false).await;
            return;
        }
        Ok(Incoming::Binary(bytes)) => bytes,
        Ok(Incoming::Gone) => return,
        Ok(Incoming::Refuse(status, code, broken)) => {
            close(&mut socket, Some(&status), code, limits, broken).await;
            return;
        }
    };
    let start = match call_start(&bytes, limits, &connection) {
        Ok(start) => start,
        Err((status, code)) => {
            close(&mut socket, Some(&status), code, limits, false).await;
            return;
        }
    };
    drop(bytes);
    // 2. The call: requests in, responses out, at the same time.
    let (mut requests, mut responses) = match server.start_call(start) {
        Ok(call) => call.into_parts(),
        Err(status) => {
            close(&mut socket, Some(&status), CloseCode::Normal, limits, false).await;
            return;
        }
    };
    let (mut sink, mut stream) = socket.split();
    let ended = {
        let reading = read_requests(&mut stream, &mut requests, limits.max_frame_payload);
        let writing = write_responses(&mut sink, &mut responses, limits.write_timeout);
        tokio::select! {
            end = reading => Err(end),
            end = writing => Ok(end),
        }
    };
    let Ok(mut socket) = sink.reunite(stream) else {
        return;
    };
    // 3. The close.
    match ended {
        Ok(WriteEnd::Ended) => close(&mut socket, None, CloseCode::Normal, limits, false).await,
        Ok(WriteEnd::Stopped) => close(&mut socket, None, CloseCode::Away, limits, false).await,
        Ok(WriteEnd::Failed) => {}
        Err(ReadEnd::Gone) => {
            requests.cancel();
            drop(responses);
            // Send our side of a closing handshake the client started.
            close(&mut socket, None, CloseCode::Normal, limits, false).await;
        }
        Err(ReadEnd::Refuse(status, code, broken)) => {
            requests.cancel();
            drop(responses);
            tracing::debug!(peer = ?connection.peer().remote(), %status, "refusing a WebSocket call");
            close(&mut socket, Some(&status), code, limits, broken).await;
        }
    }
}

/// What a message read from the client is.
enum Incoming {
    Binary(tokio_tungstenite::tungstenite::Bytes),
    Gone,
    Refuse(Status, CloseCode, bool),
}

/// The next data message; pings and pongs are answered and skipped.
async fn next_message<S>(stream: &mut S) -> Incoming
where
    S: futures_util::Stream<Item = Result<Message, WsError>> + Unpin,
{
    loop {
        match stream.next().await {
            None => return Incoming::Gone,
            Some(Ok(Message::Binary(bytes))) => return Incoming::Binary(bytes),
            Some(Ok(Message::Text(_))) => {
                return Incoming::Refuse(
                    Status::invalid_argument(
                        "a text message: Bebop over WebSocket uses binary messages only",
                    ),
                    CloseCode::Unsupported,
                    false,
                );
            }
            Some(Ok(Message::Close(_))) => return Incoming::Gone,
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
            Some(Err(WsError::Capacity(e))) => {
                return Incoming::Refuse(
                    Status::resource_exhausted(format!("a WebSocket message over the limit: {e}")),
                    CloseCode::Size,
                    true,
                );
            }
            Some(Err(WsError::Protocol(
                tungstenite::error::ProtocolError::ResetWithoutClosingHandshake,
            ))) => {
                return Incoming::Gone;
            }
            Some(Err(WsError::Protocol(e))) => {
                return Incoming::Refuse(
                    Status::invalid_argument(format!("WebSocket protocol error: {e}")),
                    CloseCode::Protocol,
                    true,
                );
            }
            Some(Err(WsError::Utf8(e))) => {
                return Incoming::Refuse(
                    Status::invalid_argument(format!("a text message that is not UTF-8: {e}")),
                    CloseCode::Invalid,
                    true,
                );
            }
            Some(Err(e)) => {
                tracing::debug!(error = %e, "the WebSocket broke");
                return Incoming::Gone;
            }
        }
    }
}

/// The call the first message opens: it must be exactly one `CallHeader`.
fn call_start(
    bytes: &[u8],
    limits: &Limits,
    connection: &ConnectionSlot,
) -> Result<CallStart, (Status, CloseCode)> {
    let header = match parse_call_header_exact(bytes, limits.max_call_header) {
        Ok(h) => h,
        Err(e @ ProtocolError::CallHeaderTooLarge { .. }) => {
            return Err((Status::resource_exhausted(e.to_string()), CloseCode::Size));
        }
        Err(_) if parse_frame_exact(bytes, usize::MAX).is_ok() => {
            return Err((
                Status::invalid_argument(
                    "a frame before the call header: the first message of a WebSocket call \
                     is its CallHeader",
                ),
                CloseCode::Protocol,
            ));
        }
        Err(e) => {
            return Err((
                Status::invalid_argument(format!(
                    "the first message must be exactly one CallHeader ({} bytes: {e})",
                    bytes.len()
                )),
                CloseCode::Protocol,
            ));
        }
    };
    // A call header without a method id calls discovery (docs/rpc.md, "Decisions").
    let mut start = CallStart::new(header.method_id.unwrap_or(0), connection.peer().clone())
        .metadata(header.metadata.map(Metadata::from_view).unwrap_or_default())
        .cursor(header.cursor.unwrap_or(0));
    if let Some(deadline) = header.deadline {
        start = match timestamp_to_system_time(deadline) {
            Some(at) => start.deadline(Some(at)),
            None => start.invalid_deadline(),
        };
    }
    Ok(start)
}

/// Delivers the client's request frames until it goes away or breaks the protocol. After
/// the request stream ended it goes on reading, for a close (a cancel).
async fn read_requests<S>(
    stream: &mut S,
    requests: &mut RequestSender,
    max_payload: usize,
) -> ReadEnd
where
    S: futures_util::Stream<Item = Result<Message, WsError>> + Unpin,
{
    let mut ended = false;
    loop {
        let bytes = match next_message(stream).await {
            Incoming::Binary(bytes) => bytes,
            Incoming::Gone => return ReadEnd::Gone,
            Incoming::Refuse(status, code, broken) => return ReadEnd::Refuse(status, code, broken),
        };
        let frame = match parse_one_frame(&bytes, max_payload) {
            Ok(f) => f,
            Err(status) => {
                let code = if status.code() == StatusCode::ResourceExhausted {
                    CloseCode::Size
                } else {
                    CloseCode::Protocol
                };
                return ReadEnd::Refuse(status, code, false);
            }
        };
        let flags = frame.flags();
        // END_STREAM | ERROR is a reset: the client gives up, as with a close.
        if flags.contains(FrameFlags::ERROR) && flags.is_valid_combination() {
            return ReadEnd::Gone;
        }
        if ended {
            // A second END_STREAM is a cancel, as on a binary connection carrying one call
            // (docs/rpc.md, "Cancellation"); anything else has no stream to go to.
            if flags.contains(FrameFlags::END_STREAM) && frame.payload.is_empty() {
                return ReadEnd::Gone;
            }
            return ReadEnd::Refuse(
                Status::invalid_argument("a request frame after the end of the request stream"),
                CloseCode::Protocol,
                false,
            );
        }
        ended = flags.contains(FrameFlags::END_STREAM);
        match requests
            .send_frame(flags, frame.payload.to_vec(), frame.cursor)
            .await
        {
            Ok(()) => {}
            Err(status) if status.code() == StatusCode::InvalidArgument => {
                return ReadEnd::Refuse(status, CloseCode::Protocol, false);
            }
            // The call stopped taking requests (it answered early): the frame is dropped
            // (docs/rpc.md, "Calls").
            Err(_) => {}
        }
    }
}

/// Sends the call's response frames, one message each. Frames that are ready together go
/// out in one write.
async fn write_responses<S>(
    sink: &mut S,
    responses: &mut ResponseStream,
    write_timeout: Duration,
) -> WriteEnd
where
    S: futures_util::Sink<Message, Error = WsError> + Unpin,
{
    loop {
        let Some(frame) = responses.next().await else {
            return WriteEnd::Stopped;
        };
        let mut end = frame.is_end();
        let mut stopped = false;
        let batch = async {
            sink.feed(Message::binary(frame.into_bytes())).await?;
            let mut batched = 0;
            // `ResponseStream::next` takes only whole frames, so one not ready yet is not
            // lost by giving up on it.
            while !end && batched < BATCH {
                match responses.next().now_or_never() {
                    Some(Some(frame)) => {
                        end = frame.is_end();
                        batched += frame.as_bytes().len();
                        sink.feed(Message::binary(frame.into_bytes())).await?;
                    }
                    Some(None) => {
                        stopped = true;
                        break;
                    }
                    None => break,
                }
            }
            sink.flush().await
        };
        match tokio::time::timeout(write_timeout, batch).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "writing to the WebSocket failed");
                return WriteEnd::Failed;
            }
            Err(_) => {
                tracing::debug!("the WebSocket client stopped reading");
                return WriteEnd::Failed;
            }
        }
        if end {
            return WriteEnd::Ended;
        }
        if stopped {
            return WriteEnd::Stopped;
        }
    }
}

/// An `END_STREAM | ERROR` frame carrying `status`.
fn error_frame(status: &Status) -> Vec<u8> {
    let payload = status.to_error_payload();
    let mut out = vec![0; frame_len(payload.len(), false)];
    match encode_frame(
        &mut out,
        FrameFlags::END_STREAM | FrameFlags::ERROR,
        0,
        &Encoded(&payload),
        None,
    ) {
        Ok(n) => {
            out.truncate(n);
            out
        }
        Err(_) => Vec::new(),
    }
}

/// Answers `status` (if any) in an `ERROR` frame, closes the WebSocket with `code`, and
/// waits a little for the client's side of the closing handshake, so that what was sent is
/// not lost to a reset. When the WebSocket cannot be read any further (`broken`: a message
/// over the limit, a WebSocket protocol error), what the client still sends is skipped
/// unread until it closes or pauses.
async fn close<S>(
    socket: &mut WebSocketStream<S>,
    status: Option<&Status>,
    code: CloseCode,
    limits: &Limits,
    broken: bool,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let write = async {
        if let Some(status) = status {
            let frame = error_frame(status);
            if !frame.is_empty() {
                socket.feed(Message::binary(frame)).await?;
            }
        }
        let reason = match code {
            CloseCode::Normal => "",
            CloseCode::Away => "the server is going away",
            CloseCode::Size => "message too big",
            CloseCode::Again => "try again later",
            _ => "protocol error",
        };
        socket
            .send(Message::Close(Some(CloseFrame {
                code,
                reason: reason.into(),
            })))
            .await
    };
    match tokio::time::timeout(limits.write_timeout, write).await {
        Ok(Ok(())) => {}
        Ok(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => return,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "closing the WebSocket failed");
            return;
        }
        Err(_) => return,
    }
    let linger = CLOSE_LINGER.min(limits.element_timeout);
    if broken {
        let raw = socket.get_mut();
        let _ = tokio::time::timeout(linger, skip_until_quiet(raw)).await;
    } else {
        let _ = tokio::time::timeout(linger, async {
            while let Some(Ok(_)) = socket.next().await {}
        })
        .await;
    }
}

/// Reads and drops bytes until the peer closes, errs or sends nothing for [`QUIET`].
async fn skip_until_quiet<S: AsyncRead + Unpin>(raw: &mut S) {
    let mut buf = [0u8; 8192];
    while let Ok(Ok(n)) = tokio::time::timeout(QUIET, raw.read(&mut buf)).await {
        if n == 0 {
            return;
        }
    }
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

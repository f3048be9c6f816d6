//! The client side: [`WebSocketConnector`] carries each call of a
//! [`Client`](bebop_rpc::Client) over a WebSocket connection of its own.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bebop_rpc::transport::{Connector, IncomingResponses, OutgoingCall, RequestFrame};
use bebop_rpc::{BoxFuture, Status, StatusCode};
use bebop_runtime::rpc::CallHeader;
use bebop_runtime::{Map, system_time_to_timestamp};
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::{parse_one_frame, sized_config};

/// While connecting, at most this many request frames are taken from the caller (the rest
/// wait in the client's bounded request buffer).
const EARLY_FRAMES: usize = 16;
/// How long a finished or cancelled call waits for the server's side of the closing
/// handshake.
const CLOSE_LINGER: Duration = Duration::from_secs(2);

/// Carries the calls of a [`Client`](bebop_rpc::Client) over WebSocket: every call opens
/// its own connection to the URL, sends its `CallHeader` in the first binary message and
/// each request frame in one more, and reads one response frame per message. A caller that
/// gives up (drops the call, or its deadline passes) closes the WebSocket, which cancels the
/// call on the server (`docs/rpc.md`, "WebSocket transport").
///
/// ```
/// use std::time::Duration;
/// use bebop_rpc::{CallOptions, Client, Server, StatusCode};
/// use bebop_rpc_websocket::WebSocketConnector;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// # let url = format!("ws://{}/_bebop/ws", listener.local_addr()?);
/// # tokio::spawn(bebop_rpc_websocket::serve(Server::builder().build(), listener));
/// let connector = WebSocketConnector::new(&url)?
///     .connect_timeout(Duration::from_secs(2))
///     .max_frame_payload(1 << 20);
/// let client = Client::over(connector);
/// // A generated AsyncClient would wrap `client`; here, a method the server does not have.
/// let err = client
///     .unary::<str, String>(0x4d62_beb5, "Ada", CallOptions::new())
///     .await
///     .unwrap_err();
/// assert_eq!(err.code(), StatusCode::NotFound);
///
/// // Only ws:// URLs.
/// assert!(WebSocketConnector::new("wss://example.com/").is_err());
/// assert!(WebSocketConnector::new("not a URL").is_err());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct WebSocketConnector {
    inner: Arc<Settings>,
}

#[derive(Clone)]
struct Settings {
    url: String,
    max_frame_payload: usize,
    connect_timeout: Duration,
}

impl std::fmt::Debug for WebSocketConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketConnector")
            .field("url", &self.inner.url)
            .field("max_frame_payload", &self.inner.max_frame_payload)
            .field("connect_timeout", &self.inner.connect_timeout)
            .finish()
    }
}

impl WebSocketConnector {
    /// A connector to `url`, a `ws://host:port/path` URL (the path is sent as is; `serve`
    /// accepts any). `wss://` is refused: this crate builds in no TLS. Fails with
    /// `INVALID_ARGUMENT` when the URL does not parse.
    pub fn new(url: impl AsRef<str>) -> Result<Self, Status> {
        let url = url.as_ref();
        let request = url
            .into_client_request()
            .map_err(|e| Status::invalid_argument(format!("not a WebSocket URL {url:?}: {e}")))?;
        match request.uri().scheme_str() {
            Some("ws") => {}
            Some("wss") => {
                return Err(Status::invalid_argument(format!(
                    "{url:?}: wss:// needs TLS, which bebop-rpc-websocket does not build in"
                )));
            }
            _ => {
                return Err(Status::invalid_argument(format!(
                    "{url:?} is not a ws:// URL"
                )));
            }
        }
        Ok(WebSocketConnector {
            inner: Arc::new(Settings {
                url: url.to_string(),
                max_frame_payload: 4 << 20,
                connect_timeout: Duration::from_secs(10),
            }),
        })
    }

    /// The largest response frame payload accepted (default 4 MiB, as `ClientLimits`): a
    /// larger message fails the call with `RESOURCE_EXHAUSTED` before it is read.
    pub fn max_frame_payload(mut self, bytes: usize) -> Self {
        Arc::make_mut(&mut self.inner).max_frame_payload = bytes;
        self
    }

    /// How long opening a connection (TCP and the WebSocket handshake) may take (default
    /// 10 s); past it the call fails with `UNAVAILABLE`.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        Arc::make_mut(&mut self.inner).connect_timeout = timeout;
        self
    }

    /// The URL calls connect to.
    pub fn url(&self) -> &str {
        &self.inner.url
    }
}

impl Connector for WebSocketConnector {
    fn carry(&self, call: OutgoingCall) -> BoxFuture<'static, ()> {
        let settings = self.inner.clone();
        Box::pin(carry(settings, call))
    }
}

/// The first message of a call: its `CallHeader`, with its length prefix.
fn call_header(call: &OutgoingCall) -> Vec<u8> {
    let pairs: Vec<(&str, &str)> = call.metadata.iter().collect();
    let header = CallHeader {
        method_id: Some(call.method.id),
        deadline: call.deadline.and_then(system_time_to_timestamp),
        metadata: (!pairs.is_empty()).then(|| Map::from_slice(&pairs)),
        cursor: (call.cursor != 0).then_some(call.cursor),
    };
    bebop_runtime::encode_to_vec(&header).unwrap_or_default()
}

/// How the response side of a call ended.
enum Back {
    /// The last frame arrived.
    Ended,
    /// The caller went away.
    CallerGone,
    /// The connection failed before the response ended.
    Failed(Status),
}

async fn carry(settings: Arc<Settings>, call: OutgoingCall) {
    let header = call_header(&call);
    let OutgoingCall {
        mut requests,
        responses,
        ..
    } = call;
    let config = sized_config(
        settings
            .max_frame_payload
            .saturating_add(bebop_runtime::rpc::HEADER_SIZE + bebop_runtime::rpc::CURSOR_SIZE),
    );
    // 1. Connect, taking the first request frames meanwhile, and watching for a cancel.
    let connect = tokio::time::timeout(
        settings.connect_timeout,
        tokio_tungstenite::connect_async_with_config(settings.url.as_str(), Some(config), true),
    );
    tokio::pin!(connect);
    let mut early: VecDeque<RequestFrame> = VecDeque::new();
    let socket = loop {
        tokio::select! {
            r = &mut connect => match r {
                Ok(Ok((socket, _))) => break socket,
                Ok(Err(e)) => {
                    responses.close(connect_failed(&settings.url, &e));
                    return;
                }
                Err(_) => {
                    responses.close(Status::unavailable(format!(
                        "connecting to {} took longer than {:?}",
                        settings.url, settings.connect_timeout
                    )));
                    return;
                }
            },
            f = requests.next(), if early.len() < EARLY_FRAMES => match f {
                Some(f) if !f.is_cancel() => early.push_back(f),
                // The caller gave up before the call reached the wire.
                _ => return,
            },
        }
    };
    let (mut sink, mut stream) = socket.split();
    // 2. The call header and the requests out, the responses back.
    let forward = async {
        let mut sending = true;
        let first = std::iter::once(header).chain(early.into_iter().map(|f| f.bytes));
        for bytes in first {
            if sink.feed(Message::binary(bytes)).await.is_err() {
                sending = false;
                break;
            }
        }
        if sending && sink.flush().await.is_err() {
            sending = false;
        }
        loop {
            match requests.next().await {
                // A cancel, or the caller gone: close the WebSocket (docs/rpc.md,
                // "Cancellation").
                None => return,
                Some(f) if f.is_cancel() => return,
                Some(f) => {
                    // The server may answer early and close: the rest of the requests are
                    // moot, and the response tells how the call went.
                    if sending && sink.send(Message::binary(f.bytes)).await.is_err() {
                        sending = false;
                    }
                }
            }
        }
    };
    let back = receive(&mut stream, &responses, settings.max_frame_payload);
    let outcome = tokio::select! {
        b = back => b,
        () = forward => Back::CallerGone,
    };
    let Ok(mut socket) = sink.reunite(stream) else {
        return;
    };
    // 3. The close.
    match outcome {
        Back::Ended => {
            // The server closes after its last frame; answer its close and wait for the end.
            let drained = tokio::time::timeout(CLOSE_LINGER, async {
                while let Some(Ok(_)) = socket.next().await {}
            })
            .await;
            if drained.is_err() {
                let _ = tokio::time::timeout(CLOSE_LINGER, socket.close(None)).await;
            }
        }
        Back::CallerGone => {
            let close = CloseFrame {
                code: CloseCode::Normal,
                reason: "cancelled".into(),
            };
            let _ = tokio::time::timeout(CLOSE_LINGER, async {
                socket.close(Some(close)).await?;
                while let Some(Ok(_)) = socket.next().await {}
                Ok::<(), WsError>(())
            })
            .await;
        }
        Back::Failed(status) => {
            responses.close(status);
            let _ = tokio::time::timeout(CLOSE_LINGER, socket.close(None)).await;
        }
    }
}

/// Pushes the server's frames to the caller until the last one.
async fn receive<S>(stream: &mut S, responses: &IncomingResponses, max_payload: usize) -> Back
where
    S: futures_util::Stream<Item = Result<Message, WsError>> + Unpin,
{
    loop {
        let message = match stream.next().await {
            None => {
                return Back::Failed(Status::unavailable(
                    "the server closed the connection before the response ended",
                ));
            }
            Some(Err(WsError::Capacity(e))) => {
                return Back::Failed(Status::resource_exhausted(format!(
                    "a response message over the limit: {e}"
                )));
            }
            Some(Err(e)) => {
                return Back::Failed(Status::unavailable(format!(
                    "the WebSocket connection failed: {e}"
                )));
            }
            Some(Ok(m)) => m,
        };
        let bytes = match message {
            Message::Binary(bytes) => bytes,
            Message::Text(_) => {
                return Back::Failed(Status::unavailable(
                    "the server sent a text message; Bebop over WebSocket uses binary messages",
                ));
            }
            Message::Close(frame) => {
                let why = frame
                    .map(|f| format!(" ({}: {})", u16::from(f.code), f.reason))
                    .unwrap_or_default();
                return Back::Failed(Status::unavailable(format!(
                    "the server closed the WebSocket before the response ended{why}"
                )));
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        };
        let frame = match parse_one_frame(&bytes, max_payload) {
            Ok(f) => f,
            Err(status) => {
                let code = match status.code() {
                    StatusCode::ResourceExhausted => StatusCode::ResourceExhausted,
                    _ => StatusCode::Unavailable,
                };
                return Back::Failed(Status::new(
                    code,
                    format!("a message from the server: {}", status.detail()),
                ));
            }
        };
        let end = frame.is_end();
        let pushed = responses
            .push(frame.flags(), frame.payload.to_vec(), frame.cursor)
            .await;
        if pushed.is_err() {
            return Back::CallerGone;
        }
        if end {
            return Back::Ended;
        }
    }
}

fn connect_failed(url: &str, e: &WsError) -> Status {
    match e {
        WsError::Http(response) => Status::unavailable(format!(
            "the WebSocket handshake with {url} was refused: HTTP {}",
            response.status()
        )),
        e => Status::unavailable(format!("connecting to {url} failed: {e}")),
    }
}

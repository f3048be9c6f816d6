//! Bebop RPC over WebSocket (`docs/rpc.md`, "WebSocket transport"): the Lab server behind
//! `bebop_rpc_websocket::serve`, spoken to byte for byte by a raw tokio-tungstenite client
//! (one protocol element per binary message, one call per connection, cancellation by a
//! close frame, protocol errors, limits, timeouts, random messages) and by a small
//! browser-style client in plain JavaScript run by Node. The call semantics over
//! `WebSocketConnector` run with the other carriers in `rpc_tokio.rs`. Loopback only; every
//! test is bounded in time.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bebop_rpc::{CallOptions, Limits, Status, StatusCode};
use bebop_rpc_websocket::tokio_tungstenite::tungstenite::Message;
use bebop_rpc_websocket::tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use bebop_rpc_websocket::tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use bebop_rpc_websocket::tokio_tungstenite::{self as tokio_tungstenite, WebSocketStream};
use bebop_runtime::rpc::{FrameFlags, HEADER_SIZE, parse_frame_exact};
use common::*;
use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `test` against a fresh Lab server on WebSocket with `limits`, within a minute, then
/// checks that the server closed every connection and still serves.
fn with_server<F, Fut>(limits: Limits, test: F)
where
    F: FnOnce(Arc<Running>, String, Arc<Probe>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running =
            Arc::new(Running::start(Transport::WebSocket, lab_server(&probe).limits(limits)).await);
        let Endpoint::WebSocket(url) = running.endpoint.clone() else {
            unreachable!("a WebSocket server")
        };
        tokio::time::timeout(Duration::from_secs(60), test(running.clone(), url, probe))
            .await
            .expect("the test timed out");
        still_serves(&running).await;
        Arc::into_inner(running)
            .expect("the test kept the server")
            .stop()
            .await;
    });
}

async fn still_serves(running: &Running) {
    eventually("the server closed every connection", || {
        running.server.connections() == 0
    })
    .await;
    let lab = Running::lab(&running.client().await);
    let reply = lab
        .echo(&note("still here"), CallOptions::new())
        .await
        .unwrap();
    assert_eq!(reply.into_inner().text, "still here");
}

fn note(text: &str) -> Note {
    Note { text: text.into() }
}

type Raw = WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn raw(url: &str) -> Raw {
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// A call header message for `method_id`, nothing else set: `06000000 01 <id LE> 00`.
fn header(method_id: u32) -> Vec<u8> {
    let mut h = vec![0x06, 0, 0, 0, 0x01];
    h.extend_from_slice(&method_id.to_le_bytes());
    h.push(0x00);
    h
}

/// A frame on stream 0.
fn frame(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_le_bytes().to_vec();
    f.push(flags);
    f.extend_from_slice(&[0, 0, 0, 0]);
    f.extend_from_slice(payload);
    f
}

/// A Bebop string: length, UTF-8 bytes, NUL.
fn string(s: &str) -> Vec<u8> {
    let mut b = (s.len() as u32).to_le_bytes().to_vec();
    b.extend_from_slice(s.as_bytes());
    b.push(0);
    b
}

/// `Settings { interval_ms: count, label }` as a message (its length prefix, then each
/// field's tag and value, then the end marker 0).
fn settings_message(count: u32, label: Option<&str>) -> Vec<u8> {
    let mut body = vec![0x01];
    body.extend_from_slice(&count.to_le_bytes());
    if let Some(label) = label {
        body.push(0x02);
        body.extend_from_slice(&string(label));
    }
    body.push(0x00);
    let mut m = (body.len() as u32).to_le_bytes().to_vec();
    m.extend_from_slice(&body);
    m
}

async fn send(ws: &mut Raw, bytes: Vec<u8>) {
    ws.send(Message::binary(bytes)).await.unwrap();
}

/// The next message other than pings and pongs, within five seconds.
async fn next(ws: &mut Raw) -> Option<Message> {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("no message within five seconds");
        match m {
            None => return None,
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(m)) => return Some(m),
            // The server may close the TCP connection before we read everything it sent
            // only after its close frame; a reset then ends the stream.
            Some(Err(_)) => return None,
        }
    }
}

async fn next_binary(ws: &mut Raw) -> Vec<u8> {
    match next(ws).await {
        Some(Message::Binary(b)) => b.to_vec(),
        other => panic!("expected a binary message, got {other:?}"),
    }
}

/// The next message is an `END_STREAM | ERROR` frame: its status.
async fn expect_error(ws: &mut Raw) -> Status {
    let bytes = next_binary(ws).await;
    let frame = parse_frame_exact(&bytes, usize::MAX).unwrap();
    assert_eq!(frame.flags(), FrameFlags::END_STREAM | FrameFlags::ERROR);
    assert_eq!(frame.stream_id(), 0);
    Status::from_error_payload(frame.payload)
}

/// The server closes the WebSocket with `code` and then the connection.
async fn expect_close(ws: &mut Raw, code: CloseCode) {
    match next(ws).await {
        Some(Message::Close(Some(CloseFrame { code: got, .. }))) => assert_eq!(got, code),
        other => panic!("expected a close frame with {code:?}, got {other:?}"),
    }
    assert!(next(ws).await.is_none(), "the connection stayed open");
}

#[test]
fn unary_call_of_section_7_1_byte_for_byte() {
    with_server(Limits::default(), |_, url, probe| async move {
        let mut ws = raw(&url).await;
        // docs/rpc.md, "Example: a unary call on the wire", on the Lab's Echo: the call
        // header, then the request frame, each in its own binary message.
        let id = svc::ECHO.id;
        let call_header = header(id);
        assert_eq!(call_header[..5], [0x06, 0x00, 0x00, 0x00, 0x01]);
        assert_eq!(call_header[5..9], id.to_le_bytes());
        assert_eq!(call_header[9], 0x00);
        send(&mut ws, call_header).await;
        let request: [u8; 19] = [
            0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
            0x00, // 10 bytes, END_STREAM, stream 0
            0x05, 0x00, 0x00, 0x00, b'A', b'l', b'i', b'c', b'e', 0x00, // "Alice"
        ];
        send(&mut ws, request.to_vec()).await;
        // Echo answers the request itself: the same 19 bytes, in one message.
        assert_eq!(next_binary(&mut ws).await, request);
        expect_close(&mut ws, CloseCode::Normal).await;
        assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn every_element_travels_in_its_own_message() {
    with_server(Limits::default(), |_, url, _| async move {
        // A server stream: one message per sample (with its cursor), then the end.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::SAMPLES.id)).await;
        let request = settings_message(3, None);
        assert_eq!(request, [0x06, 0, 0, 0, 0x01, 0x03, 0, 0, 0, 0x00]);
        send(&mut ws, frame(0x01, &request)).await;
        for seq in 1..=3u32 {
            let mut expected = frame(0x10, &[]);
            expected[..4].copy_from_slice(&8u32.to_le_bytes());
            expected.extend_from_slice(&seq.to_le_bytes());
            expected.extend_from_slice(&(seq as f32 / 2.0).to_le_bytes());
            expected.extend_from_slice(&u64::from(seq).to_le_bytes());
            assert_eq!(next_binary(&mut ws).await, expected, "sample {seq}");
        }
        assert_eq!(next_binary(&mut ws).await, frame(0x01, &[]));
        expect_close(&mut ws, CloseCode::Normal).await;

        // Response metadata: the response, then a TRAILER frame.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x01, &string("meta"))).await;
        assert_eq!(next_binary(&mut ws).await, frame(0x00, &string("meta")));
        let trailer = next_binary(&mut ws).await;
        let trailer = parse_frame_exact(&trailer, usize::MAX).unwrap();
        assert_eq!(
            trailer.flags(),
            FrameFlags::END_STREAM | FrameFlags::TRAILER
        );
        expect_close(&mut ws, CloseCode::Normal).await;

        // A duplex call, request by request: each response comes before the next request.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::SHOUT.id)).await;
        for word in ["ada", "grace"] {
            send(&mut ws, frame(0x00, &string(word))).await;
            let upper = word.to_uppercase();
            assert_eq!(next_binary(&mut ws).await, frame(0x00, &string(&upper)));
        }
        send(&mut ws, frame(0x01, &[])).await;
        assert_eq!(next_binary(&mut ws).await, frame(0x01, &[]));
        expect_close(&mut ws, CloseCode::Normal).await;

        // A refused call: an ERROR frame, then a normal close.
        let mut ws = raw(&url).await;
        send(&mut ws, header(0xdead_beef)).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::NotFound);
        assert_eq!(e.detail(), "no method 0xdeadbeef");
        expect_close(&mut ws, CloseCode::Normal).await;
    });
}

#[test]
fn a_close_frame_or_a_dropped_connection_cancels_the_call() {
    with_server(Limits::default(), |_, url, probe| async move {
        // A server stream, cancelled by a close frame after a few samples.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::SAMPLES.id)).await;
        let settings = settings_message(100_000, Some("slow:2"));
        send(&mut ws, frame(0x01, &settings)).await;
        for _ in 0..5 {
            next_binary(&mut ws).await;
        }
        ws.close(None).await.unwrap();
        eventually("the stream handler was cancelled", || {
            probe.dropped.load(Ordering::SeqCst) == 1
        })
        .await;
        let sent = probe.sent.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            probe.sent.load(Ordering::SeqCst),
            sent,
            "the handler kept sending"
        );
        // The server answered the close: the stream ends without another data message.
        loop {
            match next(&mut ws).await {
                Some(Message::Binary(_)) => {} // samples already on their way
                Some(Message::Close(_)) | None => break,
                Some(other) => panic!("{other:?}"),
            }
        }

        // A unary call, cancelled by a close frame while its handler sleeps.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x01, &string("sleep:10000"))).await;
        eventually("the handler started", || {
            probe.calls.load(Ordering::SeqCst) == 2
        })
        .await;
        ws.close(None).await.unwrap();
        // The server drops the handler's future (it ignores cancellation on purpose).
        eventually("the unary handler was dropped", || {
            probe.dropped.load(Ordering::SeqCst) == 2
        })
        .await;

        // Closing the TCP connection without a close frame does the same.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x01, &string("sleep:10000"))).await;
        eventually("the handler started", || {
            probe.calls.load(Ordering::SeqCst) == 3
        })
        .await;
        drop(ws);
        eventually("the third handler was dropped", || {
            probe.dropped.load(Ordering::SeqCst) == 3
        })
        .await;
    });
}

#[test]
fn one_call_per_connection_a_second_call_header_is_refused() {
    with_server(Limits::default(), |_, url, probe| async move {
        // During a call.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::SHOUT.id)).await;
        send(&mut ws, frame(0x00, &string("one"))).await;
        assert_eq!(next_binary(&mut ws).await, frame(0x00, &string("ONE")));
        send(&mut ws, header(svc::ECHO.id)).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        assert!(e.detail().contains("second call header"), "{e}");
        expect_close(&mut ws, CloseCode::Protocol).await;

        // After a call: the server closes after the last frame and never answers a
        // second call sent on the same socket.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x01, &string("first"))).await;
        assert_eq!(next_binary(&mut ws).await, frame(0x01, &string("first")));
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x01, &string("second"))).await;
        expect_close(&mut ws, CloseCode::Normal).await;

        // A second header sent before the first call's response is refused, and the first
        // call with it: whatever came first, the last frame is the error.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x01, &string("sleep:200"))).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        let e = expect_error(&mut ws).await;
        assert!(e.detail().contains("second call header"), "{e}");
        expect_close(&mut ws, CloseCode::Protocol).await;
        // Its handler may or may not have started before the second header was read.
        assert!((2..=3).contains(&probe.calls.load(Ordering::SeqCst)));
    });
}

#[test]
fn text_messages_and_a_frame_before_the_header_are_refused() {
    with_server(Limits::default(), |_, url, probe| async move {
        // A text message where the call header belongs.
        let mut ws = raw(&url).await;
        ws.send(Message::text("hello")).await.unwrap();
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        assert!(e.detail().contains("text message"), "{e}");
        expect_close(&mut ws, CloseCode::Unsupported).await;

        // A text message during a call.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::SHOUT.id)).await;
        ws.send(Message::text("a note")).await.unwrap();
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        expect_close(&mut ws, CloseCode::Unsupported).await;

        // A frame first.
        let mut ws = raw(&url).await;
        send(&mut ws, frame(0x01, &string("Alice"))).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        assert!(e.detail().contains("a frame before the call header"), "{e}");
        expect_close(&mut ws, CloseCode::Protocol).await;

        // Two elements in one message.
        let mut ws = raw(&url).await;
        let mut both = header(svc::ECHO.id);
        both.extend_from_slice(&frame(0x01, &string("Alice")));
        send(&mut ws, both).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        assert!(e.detail().contains("exactly one CallHeader"), "{e}");
        expect_close(&mut ws, CloseCode::Protocol).await;

        // A frame with invalid flags (TRAILER without END_STREAM).
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x08, &[])).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        expect_close(&mut ws, CloseCode::Protocol).await;
        // Only the duplex call started its handler (before its text message arrived).
        assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn oversized_messages_are_refused_without_being_read() {
    let limits = Limits {
        max_frame_payload: 1024,
        max_call_header: 64,
        ..Limits::default()
    };
    with_server(limits, |_, url, probe| async move {
        // A WebSocket frame that declares a megabyte: the server answers after its header
        // and a few bytes, though the rest never comes.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        let mut head = vec![0x82, 0x80 | 127]; // FIN, binary; masked, 64-bit length
        head.extend_from_slice(&(1u64 << 20).to_be_bytes());
        head.extend_from_slice(&[1, 2, 3, 4]); // the mask
        head.extend_from_slice(&[0u8; 100]);
        let started = Instant::now();
        ws.get_mut().write_all(&head).await.unwrap();
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        expect_close(&mut ws, CloseCode::Size).await;
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );

        // A whole message one byte over the largest frame (1024 + 9 + 8 bytes).
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, vec![0; 1024 + HEADER_SIZE + 8 + 1]).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        expect_close(&mut ws, CloseCode::Size).await;

        // A frame within the message size but over max_frame_payload.
        let mut ws = raw(&url).await;
        send(&mut ws, header(svc::ECHO.id)).await;
        send(&mut ws, frame(0x01, &string(&"x".repeat(1020)))).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        assert!(e.detail().contains("over the limit of 1024"), "{e}");
        expect_close(&mut ws, CloseCode::Size).await;

        // A call header over max_call_header.
        let mut ws = raw(&url).await;
        let mut big = vec![100, 0, 0, 0];
        big.extend_from_slice(&[0; 100]);
        send(&mut ws, big).await;
        let e = expect_error(&mut ws).await;
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        expect_close(&mut ws, CloseCode::Size).await;
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn a_client_that_never_sends_its_header_is_closed() {
    let limits = Limits {
        element_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    with_server(limits, |_, url, _| async move {
        let started = Instant::now();
        let mut ws = raw(&url).await;
        let e = expect_error(&mut ws).await;
        let waited = started.elapsed();
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");
        assert!(e.detail().contains("no call header"), "{e}");
        expect_close(&mut ws, CloseCode::Policy).await;
        assert!(
            waited >= Duration::from_millis(250) && waited < Duration::from_secs(3),
            "{waited:?}"
        );
        // Nor does a TCP connection that never finishes its handshake stay.
        let stalled = tokio::net::TcpStream::connect(
            url.trim_start_matches("ws://").trim_end_matches("/lab"),
        )
        .await
        .unwrap();
        let mut stalled = stalled;
        stalled.write_all(b"GET /lab HTTP/1.1\r\n").await.unwrap();
        let mut sink = Vec::new();
        let read = tokio::time::timeout(
            Duration::from_secs(3),
            tokio::io::AsyncReadExt::read_to_end(&mut stalled, &mut sink),
        )
        .await;
        assert!(read.is_ok(), "the half-open handshake was not closed");
    });
}

#[test]
fn max_connections_and_graceful_shutdown() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let limits = Limits {
            max_connections: 2,
            ..Limits::default()
        };
        let running = Running::start(Transport::WebSocket, lab_server(&probe).limits(limits)).await;
        let Endpoint::WebSocket(url) = running.endpoint.clone() else {
            unreachable!()
        };
        // Two connections: one waits to send its header, one runs a slow call.
        let mut idle = raw(&url).await;
        let lab = Running::lab(&running.client().await);
        let in_flight = tokio::spawn({
            let lab = lab.clone();
            async move { lab.echo(&note("sleep:400"), CallOptions::new()).await }
        });
        eventually("the call started", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        assert_eq!(running.server.connections(), 2);
        // A third is answered RESOURCE_EXHAUSTED and closed.
        let mut third = raw(&url).await;
        let e = expect_error(&mut third).await;
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        expect_close(&mut third, CloseCode::Again).await;
        let e = lab.echo(&note("x"), CallOptions::new()).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");

        // Shutdown: the idle connection is told, the call in flight finishes.
        let server = running.server.clone();
        let shutdown = tokio::spawn(async move { server.shutdown(Duration::from_secs(5)).await });
        let e = expect_error(&mut idle).await;
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");
        expect_close(&mut idle, CloseCode::Away).await;
        assert_eq!(
            in_flight.await.unwrap().unwrap().into_inner().text,
            "sleep:400"
        );
        tokio::time::timeout(Duration::from_secs(10), shutdown)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(probe.dropped.load(Ordering::SeqCst), 0);
        assert_eq!(running.server.connections(), 0);
        // Nothing listens any more.
        let e = lab
            .echo(&note("late"), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");
        running.stop().await;
    });
}

#[test]
fn shutdown_cancels_calls_that_outlive_the_grace_period() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::WebSocket, lab_server(&probe)).await;
        let lab = Running::lab(&running.client().await);
        let call =
            tokio::spawn(async move { lab.echo(&note("sleep:30000"), CallOptions::new()).await });
        eventually("the call started", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        let started = Instant::now();
        running.server.shutdown(Duration::from_millis(200)).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(probe.dropped.load(Ordering::SeqCst), 1);
        // The server closed the WebSocket (going away) without a last frame.
        let e = call.await.unwrap().unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");
        assert!(e.detail().contains("1001"), "{e}");
        running.stop().await;
    });
}

#[test]
fn connector_failures_are_statuses() {
    with_server(Limits::default(), |_, url, _| async move {
        // A response over the connector's limit.
        let connector = bebop_rpc_websocket::WebSocketConnector::new(&url)
            .unwrap()
            .max_frame_payload(16);
        let lab = svc::AsyncClient::new(bebop_rpc::Client::over(connector));
        let e = lab
            .echo(&note(&"x".repeat(100)), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        lab.echo(&note("short"), CallOptions::new()).await.unwrap();

        // Nothing listening.
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let nowhere = format!("ws://{}/", closed.local_addr().unwrap());
        drop(closed);
        let client = bebop_rpc::Client::over(
            bebop_rpc_websocket::WebSocketConnector::new(&nowhere).unwrap(),
        );
        let e = Running::lab(&client)
            .echo(&note("x"), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");

        // An HTTP server that refuses the upgrade.
        let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let refusing = format!("ws://{}/", http.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut s, _) = http.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut s, &mut buf).await;
            let _ = s
                .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                .await;
        });
        let client = bebop_rpc::Client::over(
            bebop_rpc_websocket::WebSocketConnector::new(&refusing).unwrap(),
        );
        let e = Running::lab(&client)
            .echo(&note("x"), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");
        assert!(e.detail().contains("HTTP 404"), "{e}");

        // URLs other than ws://.
        for bad in ["wss://127.0.0.1/", "http://127.0.0.1/", "not a URL"] {
            let e = bebop_rpc_websocket::WebSocketConnector::new(bad).unwrap_err();
            assert_eq!(e.code(), StatusCode::InvalidArgument, "{bad}: {e}");
        }
    });
}

#[test]
fn websocket_peers_have_tcp_addresses_for_an_identity_hook() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let builder = lab_server(&probe).identity(|peer| match peer.remote() {
            Some(bebop_rpc::Address::Tcp(a)) if a.ip().is_loopback() => Some("loopback".into()),
            _ => None,
        });
        let running = Running::start(Transport::WebSocket, builder).await;
        let lab = Running::lab(&running.client().await);
        let id = lab
            .identify(&schema::bebop::Empty {}, CallOptions::new())
            .await
            .unwrap();
        assert_eq!(id.into_inner().model, "loopback");
        running.stop().await;
    });
}

/// `serve_socket` serves a WebSocket upgraded elsewhere: here an in-memory pipe, set up
/// without a handshake.
#[test]
fn serve_socket_takes_an_upgraded_connection() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let server = lab_server(&probe).build();
        let (a, b) = tokio::io::duplex(4096);
        let config = bebop_rpc_websocket::websocket_config(server.limits());
        let socket = WebSocketStream::from_raw_socket(a, Role::Server, Some(config)).await;
        let peer = bebop_rpc::Peer::new(Some(bebop_rpc::Address::Other("pipe".into())), None);
        let serving = tokio::spawn(bebop_rpc_websocket::serve_socket(
            server.clone(),
            socket,
            peer,
        ));
        let mut ws = WebSocketStream::from_raw_socket(b, Role::Client, None).await;
        ws.send(Message::binary(header(svc::ECHO.id)))
            .await
            .unwrap();
        ws.send(Message::binary(frame(0x01, &string("piped"))))
            .await
            .unwrap();
        let reply = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap();
        match reply {
            Some(Ok(Message::Binary(b))) => assert_eq!(b.to_vec(), frame(0x01, &string("piped"))),
            other => panic!("{other:?}"),
        }
        // The server closes; answering its close ends the connection.
        while let Ok(Some(Ok(_))) = tokio::time::timeout(Duration::from_secs(5), ws.next()).await {}
        tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(server.connections(), 0);
    });
}

/// Random binary (and text) messages, before or after a valid call header: the server
/// never panics or hangs, answers with well-formed frames only, and always ends the
/// connection (with a close frame) once the client closes or it refuses.
#[test]
fn random_messages_end_the_connection_cleanly() {
    use proptest::prelude::*;

    static PANICS: AtomicUsize = AtomicUsize::new(0);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // The server's tasks run on runtime workers; the other tests' own assertions on
        // their test threads are not counted.
        let thread = std::thread::current();
        if thread
            .name()
            .is_some_and(|n| n.starts_with("tokio-runtime-worker"))
        {
            PANICS.fetch_add(1, Ordering::SeqCst);
        }
        previous(info);
    }));

    let runtime = rt();
    let probe = Arc::new(Probe::default());
    let limits = Limits {
        max_frame_payload: 256,
        max_call_header: 64,
        ..Limits::default()
    };
    let running = runtime.block_on(Running::start(
        Transport::WebSocket,
        lab_server(&probe).limits(limits),
    ));
    let Endpoint::WebSocket(url) = running.endpoint.clone() else {
        unreachable!()
    };
    let method = prop_oneof![
        Just(svc::ECHO.id),
        Just(svc::SHOUT.id),
        Just(svc::UPLOAD.id),
        Just(0),
        any::<u32>()
    ];
    let message = prop_oneof![
        // Anything at all.
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Message::binary),
        // A frame header with random flags and length over random bytes.
        (
            any::<u8>(),
            0u32..300,
            proptest::collection::vec(any::<u8>(), 0..40)
        )
            .prop_map(|(flags, len, body)| {
                let mut m = len.to_le_bytes().to_vec();
                m.push(flags);
                m.extend_from_slice(&[0, 0, 0, 0]);
                m.extend_from_slice(&body);
                Message::binary(m)
            }),
        // A well-formed frame with random flags.
        (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..20))
            .prop_map(|(flags, payload)| Message::binary(frame(flags, &payload))),
        "[a-z]{0,8}".prop_map(Message::text),
    ];
    let case = (
        proptest::option::of(method),
        proptest::collection::vec(message, 0..5),
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&case, |(method, messages)| {
            runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(20), async {
                    let mut ws = raw(&url).await;
                    if let Some(id) = method {
                        let _ = ws.send(Message::binary(header(id))).await;
                    }
                    for m in messages {
                        if ws.send(m).await.is_err() {
                            break;
                        }
                    }
                    let _ = ws.close(None).await;
                    let mut ends = 0;
                    while let Some(Ok(m)) = ws.next().await {
                        match m {
                            Message::Binary(b) => {
                                let f = parse_frame_exact(&b, usize::MAX)
                                    .unwrap_or_else(|e| panic!("not one frame: {e} {b:?}"));
                                assert!(f.flags().is_valid_combination());
                                assert_eq!(ends, 0, "a frame after the last one");
                                ends += usize::from(f.is_end());
                            }
                            Message::Close(_) | Message::Ping(_) | Message::Pong(_) => {}
                            other => panic!("the server sent {other:?}"),
                        }
                    }
                })
                .await
                .expect("the connection did not end");
            });
            Ok(())
        })
        .unwrap();
    runtime.block_on(async {
        still_serves(&running).await;
        running.stop().await;
    });
    let _ = std::panic::take_hook();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "something panicked");
}

/// A browser-style client: `js/ws_client.mjs`, plain JavaScript on Node's built-ins (its own
/// WebSocket handshake and framing over `net`, the Bebop wire format by hand), makes a unary
/// call and a server stream against the Lab.
#[test]
fn a_javascript_client_in_node() {
    if !node_or_skip("a_javascript_client_in_node") {
        return;
    }
    with_server(Limits::default(), |_, url, probe| async move {
        let args = [url, svc::ECHO.id.to_string(), svc::SAMPLES.id.to_string()];
        let lines = run_node("ws_client.mjs", &args).await;
        assert_eq!(
            lines,
            [
                "echo: \"Hello from Node\" flags=0x01",
                "close: 1000",
                "sample: seq=1 value=0.5 cursor=1",
                "sample: seq=2 value=1 cursor=2",
                "sample: seq=3 value=1.5 cursor=3",
                "end: flags=0x01 length=0",
                "close: 1000",
            ],
            "{lines:#?}"
        );
        assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
    });
}

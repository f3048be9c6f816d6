//! The HTTP transport (`bebop-rpc-http`, `docs/rpc.md` "HTTP transport", upstream §17) end
//! to end: the exact bytes of its requests and responses over raw HTTP/1.1 and HTTP/2, the
//! status table, deadlines, metadata as headers, trailers on both versions, streaming as it
//! is produced, cancellation, the reserved endpoints, axum mounting, TLS, limits and hostile
//! input. The call semantics of `rpc_tokio.rs` run over HTTP as well (`Transport::Http1`,
//! `H2c`, `Https`).

mod common;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bebop_rpc::{CallOptions, Client, Context, Limits, Metadata, Status, StatusCode};
use bebop_rpc_http::{HttpConnector, HttpServer, HttpService};
use bebop_runtime::Decode;
use bebop_runtime::rpc::{FrameFlags, RpcError, TrailingMetadata, parse_frame};
use bytes::Bytes;
use common::*;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper_util::client::legacy;
use hyper_util::rt::TokioExecutor;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `test` on a fresh runtime, bounded to a minute.
fn run<F: std::future::Future<Output = ()>>(test: F) {
    rt().block_on(async {
        tokio::time::timeout(Duration::from_secs(60), test)
            .await
            .expect("the test timed out")
    });
}

fn note(text: &str) -> Note {
    Note { text: text.into() }
}

fn settings(count: u32, label: &str) -> Settings {
    Settings {
        interval_ms: Some(count),
        label: Some(label.into()),
    }
}

fn encode<T: bebop_runtime::Encode + ?Sized>(value: &T) -> Vec<u8> {
    bebop_runtime::encode_to_vec(value).unwrap()
}

/// The address of an HTTP test server.
fn addr(running: &Running) -> SocketAddr {
    let url = running.endpoint.url().unwrap();
    url.rsplit("//").next().unwrap().parse().unwrap()
}

/// An HTTP test server (HTTP/1.1 and h2c on one port) serving `builder`.
async fn http(builder: bebop_rpc::ServerBuilder) -> Running {
    Running::start(Transport::Http1, builder).await
}

/// What the tests' interceptor does, by request metadata: `x-status: N` fails the call with
/// code N, `x-set: K=V` sets response metadata K to V, `x-want-deadline` puts the deadline
/// (Unix ms) in response metadata `x-deadline`, and every call's method id is recorded.
fn instrumented(probe: &Arc<Probe>, seen: Arc<Mutex<Vec<u32>>>) -> bebop_rpc::ServerBuilder {
    lab_server(probe).interceptor(move |ctx: &Context| {
        seen.lock().unwrap().push(ctx.method().id);
        if let Some(n) = ctx.metadata().get("x-status") {
            let n: u8 = n.parse().unwrap();
            return Err(Status::new(StatusCode::from(n), "asked for"));
        }
        if let Some((k, v)) = ctx
            .metadata()
            .get("x-set")
            .and_then(|kv| kv.split_once('='))
        {
            ctx.set_response_metadata(k, v);
        }
        if ctx.metadata().get("x-want-deadline").is_some() {
            let ms = ctx
                .deadline()
                .map(|d| {
                    d.duration_since(UNIX_EPOCH)
                        .unwrap()
                        .as_millis()
                        .to_string()
                })
                .unwrap_or_else(|| "none".into());
            ctx.set_response_metadata("x-deadline", ms);
        }
        Ok(())
    })
}

/// An HTTP/1.1 response read off a raw socket.
#[derive(Debug)]
struct RawResponse {
    status_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl RawResponse {
    fn status(&self) -> u16 {
        self.status_line.split(' ').nth(1).unwrap().parse().unwrap()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Decodes a chunked body (no trailers expected).
fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = bytes.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&bytes[..line_end]).unwrap(), 16).unwrap();
        bytes = &bytes[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&bytes[..size]);
        assert_eq!(&bytes[size..size + 2], b"\r\n");
        bytes = &bytes[size + 2..];
    }
}

fn parse_response(all: &[u8]) -> RawResponse {
    let head_end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(all)));
    let head = std::str::from_utf8(&all[..head_end]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap().to_owned();
    let headers: Vec<_> = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let rest = &all[head_end + 4..];
    let mut response = RawResponse {
        status_line,
        headers,
        body: Vec::new(),
    };
    response.body = if response.header("transfer-encoding") == Some("chunked") {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    response
}

/// Sends raw bytes on a new connection and reads until the server closes it.
async fn raw_h1(addr: SocketAddr, request: &[u8]) -> RawResponse {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut all))
        .await
        .expect("the server did not close the connection")
        .unwrap();
    parse_response(&all)
}

/// Reads one response with a `content-length` body, leaving the connection open.
async fn read_one_response(s: &mut tokio::net::TcpStream) -> RawResponse {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(at) = all.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = parse_response(&all[..at + 4]);
            let len: usize = head.header("content-length").unwrap().parse().unwrap();
            if all.len() >= at + 4 + len {
                return parse_response(&all[..at + 4 + len]);
            }
        }
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "the connection closed before the response");
        all.extend_from_slice(&buf[..n]);
    }
}

/// An HTTP/1.1 POST with `connection: close`, its head and body.
fn post(path: &str, content_type: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// The frames of a streaming body, as (flags, payload, cursor).
fn frames(mut body: &[u8]) -> Vec<(FrameFlags, Vec<u8>, Option<u64>)> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let (f, used) = parse_frame(body, usize::MAX).unwrap();
        out.push((f.flags(), f.payload.to_vec(), f.cursor));
        body = &body[used..];
    }
    out
}

fn h1_client() -> legacy::Client<legacy::connect::HttpConnector, Full<Bytes>> {
    legacy::Client::builder(TokioExecutor::new()).build_http()
}

fn h2_client() -> legacy::Client<legacy::connect::HttpConnector, Full<Bytes>> {
    legacy::Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

fn request(
    addr: SocketAddr,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> http::Request<Full<Bytes>> {
    http::Request::post(format!("http://{addr}{path}"))
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

/// The `NOT_FOUND` "no method /Lab/Nope" error of an HTTP/1.1 request, byte for byte.
#[test]
fn unary_success_and_error_bytes_over_raw_http1() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        // "Alice" in, "Alice" out: bare payloads, no framing (upstream §17.4).
        let alice = [0x05, 0, 0, 0, b'A', b'l', b'i', b'c', b'e', 0];
        assert_eq!(encode(&note("Alice")), alice);
        let r = raw_h1(a, &post("/Lab/Echo", "application/bebop", &[], &alice)).await;
        assert_eq!(r.status_line, "HTTP/1.1 200 OK");
        assert_eq!(r.header("content-type"), Some("application/bebop"));
        assert_eq!(r.header("content-length"), Some("10"));
        assert_eq!(r.header("bebop-status"), None);
        assert_eq!(r.body, alice);
        // An unknown method: 404, bebop-status 5 and the RpcError bytes.
        let r = raw_h1(a, &post("/Lab/Nope", "application/bebop", &[], &alice)).await;
        assert_eq!(r.status_line, "HTTP/1.1 404 Not Found");
        assert_eq!(r.header("content-type"), Some("application/bebop"));
        assert_eq!(r.header("bebop-status"), Some("5"));
        let mut expected = vec![0x1c, 0, 0, 0, 0x01, 0x05, 0x02, 0x13, 0, 0, 0];
        expected.extend_from_slice(b"no method /Lab/Nope");
        expected.extend_from_slice(&[0, 0]);
        assert_eq!(r.body, expected);
        // A handler's error: its code mapped, and RpcError with detail and metadata.
        let fail = encode(&note("fail"));
        let r = raw_h1(a, &post("/Lab/Echo", "application/bebop", &[], &fail)).await;
        assert_eq!(r.status_line, "HTTP/1.1 400 Bad Request");
        assert_eq!(r.header("bebop-status"), Some("3"));
        let e = RpcError::from_bytes(&r.body).unwrap();
        assert_eq!(e.code, Some(StatusCode::InvalidArgument));
        assert_eq!(e.detail, Some("fail was asked for"));
        let md = Metadata::from_view(e.metadata.unwrap());
        assert_eq!(md.get("attempt"), Some("1"));
        assert_eq!(md.get("hint"), Some("try again"));
        assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
        running.stop().await;
    });
}

/// The examples of upstream §17.3 and §17.4: metadata as headers, `bebop-deadline`, and a
/// success whose response metadata is a header.
#[test]
fn the_examples_of_section_17() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(instrumented(&probe, Arc::default())).await;
        let a = addr(&running);
        let headers = [
            ("authorization", "Bearer tok_abc123"),
            ("x-request-id", "abc-123"),
            ("x-set", "x-pagination-cursor=abc123"),
        ];
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &headers,
                &encode(&note("md:x-request-id")),
            ),
        )
        .await;
        assert_eq!(r.status_line, "HTTP/1.1 200 OK");
        assert_eq!(r.header("content-type"), Some("application/bebop"));
        assert_eq!(r.header("x-pagination-cursor"), Some("abc123"));
        assert_eq!(r.body, encode(&note("abc-123")));
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &headers,
                &encode(&note("md:authorization")),
            ),
        )
        .await;
        assert_eq!(r.body, encode(&note("Bearer tok_abc123")));
        // `bebop-deadline: 1739412345678` is February 2025: passed.
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &[("bebop-deadline", "1739412345678")],
                &encode(&note("x")),
            ),
        )
        .await;
        assert_eq!(r.status_line, "HTTP/1.1 408 Request Timeout");
        assert_eq!(r.header("bebop-status"), Some("4"));
        assert_eq!(
            Status::from_error_payload(&r.body).code(),
            StatusCode::DeadlineExceeded
        );
        assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
        running.stop().await;
    });
}

#[test]
fn unary_response_metadata_travels_as_headers() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        let meta = encode(&note("meta"));
        let r = raw_h1(a, &post("/Lab/Echo", "application/bebop", &[], &meta)).await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.header("rows"), Some("3"));
        assert_eq!(r.header("cache"), Some("miss"));
        assert_eq!(r.body, meta);
        // The client reads them back as the response's metadata.
        let lab = Running::lab(&running.client().await);
        let r = lab.echo(&note("meta"), CallOptions::new()).await.unwrap();
        assert_eq!(r.metadata().get("rows"), Some("3"));
        assert_eq!(r.metadata().get("cache"), Some("miss"));
        assert_eq!(r.metadata().len(), 2, "{:?}", r.metadata());
        running.stop().await;
    });
}

#[test]
fn request_metadata_travels_as_headers_without_transport_headers() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        let ask = |key: &str| encode(&note(&format!("md:{key}")));
        let headers = [
            ("x-trace-id", "abc-123"),
            ("user-agent", "curl/8"),
            ("accept", "*/*"),
        ];
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &headers,
                &ask("x-trace-id"),
            ),
        )
        .await;
        assert_eq!(r.body, encode(&note("abc-123")));
        for transport_header in [
            "user-agent",
            "accept",
            "host",
            "content-type",
            "content-length",
        ] {
            let r = raw_h1(
                a,
                &post(
                    "/Lab/Echo",
                    "application/bebop",
                    &headers,
                    &ask(transport_header),
                ),
            )
            .await;
            assert_eq!(r.body, encode(&note("<none>")), "{transport_header}");
        }
        // A repeated header's values are joined, as HTTP combines them.
        let twice = [("x-tag", "a"), ("x-tag", "b")];
        let r = raw_h1(
            a,
            &post("/Lab/Echo", "application/bebop", &twice, &ask("x-tag")),
        )
        .await;
        assert_eq!(r.body, encode(&note("a, b")));
        // The connector sends metadata as headers, and refuses what HTTP cannot carry.
        let lab = Running::lab(&running.client().await);
        let r = lab
            .echo(
                &note("md:authorization"),
                CallOptions::new().metadata("authorization", "Bearer t"),
            )
            .await
            .unwrap();
        assert_eq!(r.into_inner().text, "Bearer t");
        for (k, v) in [
            ("content-type", "x"),
            ("X-Upper", "x"),
            ("bad key", "x"),
            ("k", "line\nbreak"),
        ] {
            let e = lab
                .echo(&note("x"), CallOptions::new().metadata(k, v))
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::InvalidArgument, "{k}: {e}");
        }
        running.stop().await;
    });
}

/// Every row of the table of upstream §17.4, and the codes it does not name, driven by an
/// interceptor: unary calls answer the mapped HTTP status with `bebop-status`; streaming
/// calls answer 200 with the error in an `ERROR` frame.
#[test]
fn the_status_table() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(instrumented(&probe, Arc::default())).await;
        let a = addr(&running);
        let table: [(u8, u16); 13] = [
            (1, 499),
            (2, 500),
            (3, 400),
            (4, 408),
            (5, 404),
            (7, 403),
            (8, 429),
            (12, 501),
            (13, 500),
            (14, 503),
            (16, 401),
            (6, 500),  // reserved
            (42, 500), // an application code
        ];
        let client = running.client().await;
        let lab = Running::lab(&client);
        for (code, http_status) in table {
            let n = code.to_string();
            let r = raw_h1(
                a,
                &post(
                    "/Lab/Echo",
                    "application/bebop",
                    &[("x-status", &n)],
                    &encode(&note("x")),
                ),
            )
            .await;
            assert_eq!(r.status(), http_status, "code {code}");
            assert_eq!(r.header("bebop-status"), Some(n.as_str()), "code {code}");
            assert_eq!(r.header("content-type"), Some("application/bebop"));
            let e = RpcError::from_bytes(&r.body).unwrap();
            assert_eq!(e.code, Some(StatusCode::from(code)));
            // The connector turns it back into the same status.
            let e = lab
                .echo(
                    &note("x"),
                    CallOptions::new().metadata("x-status", n.as_str()),
                )
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::from(code));
            assert_eq!(e.detail(), "asked for");
            // A streaming call: 200, one ERROR frame.
            let r = raw_h1(
                a,
                &post(
                    "/Lab/Samples",
                    "application/bebop",
                    &[("x-status", &n)],
                    &encode(&settings(3, "")),
                ),
            )
            .await;
            assert_eq!(r.status(), 200, "code {code}");
            assert_eq!(r.header("content-type"), Some("application/bebop+stream"));
            assert_eq!(r.header("bebop-status"), None);
            let f = frames(&r.body);
            assert_eq!(f.len(), 1);
            assert_eq!(f[0].0, FrameFlags::END_STREAM | FrameFlags::ERROR);
            assert_eq!(
                Status::from_error_payload(&f[0].1).code(),
                StatusCode::from(code)
            );
        }
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
        running.stop().await;
    });
}

#[test]
fn bebop_deadline_header() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(instrumented(&probe, Arc::default())).await;
        let a = addr(&running);
        let body = encode(&note("x"));
        // Passed: 408, DEADLINE_EXCEEDED, the handler never runs.
        let past = (SystemTime::now() - Duration::from_secs(5))
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis()
            .to_string();
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &[("bebop-deadline", &past)],
                &body,
            ),
        )
        .await;
        assert_eq!(r.status(), 408);
        assert_eq!(r.header("bebop-status"), Some("4"));
        // Malformed: 400, INVALID_ARGUMENT.
        for bad in ["soon", "1.5", "-", "99999999999999999999999"] {
            let r = raw_h1(
                a,
                &post(
                    "/Lab/Echo",
                    "application/bebop",
                    &[("bebop-deadline", bad)],
                    &body,
                ),
            )
            .await;
            assert_eq!(r.status(), 400, "{bad}");
            assert_eq!(r.header("bebop-status"), Some("3"), "{bad}");
            let e = Status::from_error_payload(&r.body);
            assert!(e.detail().contains("deadline"), "{e}");
        }
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
        // In the future: the handler sees it, to the millisecond.
        let ms = (SystemTime::now() + Duration::from_secs(60))
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis()
            .to_string();
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &[("bebop-deadline", &ms), ("x-want-deadline", "1")],
                &body,
            ),
        )
        .await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.header("x-deadline"), Some(ms.as_str()));
        // The connector sends the call's deadline the same way (rounded down).
        let lab = Running::lab(&running.client().await);
        let deadline = UNIX_EPOCH
            + Duration::from_millis(ms.parse::<u64>().unwrap() + 1)
            + Duration::from_micros(300);
        let r = lab
            .echo(
                &note("x"),
                CallOptions::new()
                    .deadline_at(deadline)
                    .metadata("x-want-deadline", "1"),
            )
            .await
            .unwrap();
        let expected = (ms.parse::<u64>().unwrap() + 1).to_string();
        assert_eq!(r.metadata().get("x-deadline"), Some(expected.as_str()));
        running.stop().await;
    });
}

/// HTTP/2: frames in DATA frames, and the response metadata as HTTP trailers after an
/// empty END_STREAM frame (upstream §17.5).
#[test]
fn http2_trailers_carry_stream_metadata() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        let response = h2_client()
            .request(request(
                a,
                "/Lab/Samples",
                "application/bebop+stream",
                encode(&settings(2, "trailer")),
            ))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.version(), http::Version::HTTP_2);
        assert_eq!(
            response.headers()["content-type"],
            "application/bebop+stream"
        );
        let collected = response.into_body().collect().await.unwrap();
        let trailers = collected.trailers().cloned().unwrap();
        assert_eq!(trailers["count"], "2");
        let body = collected.to_bytes();
        let f = frames(&body);
        assert_eq!(f.len(), 3);
        for (i, seq) in [1u32, 2].into_iter().enumerate() {
            assert_eq!(f[i].0, FrameFlags::CURSOR);
            assert_eq!(f[i].1, encode(&sample(seq)));
            assert_eq!(f[i].2, Some(u64::from(seq)));
        }
        // The stream ends with a bare END_STREAM frame: 9 bytes, stream 0.
        assert_eq!(&body[body.len() - 9..], [0, 0, 0, 0, 0x01, 0, 0, 0, 0]);
        // The connector reads the trailers as the stream's metadata.
        let lab = Running::lab(&Client::over(
            HttpConnector::builder(running.endpoint.url().unwrap())
                .http2_prior_knowledge()
                .build()
                .unwrap(),
        ));
        let mut s = lab
            .samples(&settings(2, "trailer"), CallOptions::new())
            .await
            .unwrap();
        while s.message().await.unwrap().is_some() {}
        assert_eq!(s.trailers().and_then(|t| t.get("count")), Some("2"));
        running.stop().await;
    });
}

/// HTTP/1.1: chunked, and the response metadata as a TRAILER frame at the end of the body.
#[test]
fn http1_trailer_frame_ends_a_chunked_body() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        let r = raw_h1(
            a,
            &post(
                "/Lab/Samples",
                "application/bebop+stream",
                &[],
                &encode(&settings(2, "trailer")),
            ),
        )
        .await;
        assert_eq!(r.status_line, "HTTP/1.1 200 OK");
        assert_eq!(r.header("content-type"), Some("application/bebop+stream"));
        assert_eq!(r.header("transfer-encoding"), Some("chunked"));
        let f = frames(&r.body);
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].0, f[0].2), (FrameFlags::CURSOR, Some(1)));
        assert_eq!(f[1].1, encode(&sample(2)));
        assert_eq!(f[2].0, FrameFlags::END_STREAM | FrameFlags::TRAILER);
        let t = TrailingMetadata::from_bytes(&f[2].1).unwrap();
        assert_eq!(
            Metadata::from_view(t.metadata.unwrap()).get("count"),
            Some("2")
        );
        // A server stream without metadata ends with a bare END_STREAM frame.
        let r = raw_h1(
            a,
            &post(
                "/Lab/Samples",
                "application/bebop",
                &[],
                &encode(&settings(1, "")),
            ),
        )
        .await;
        let f = frames(&r.body);
        assert_eq!(f.len(), 2);
        assert_eq!((f[1].0, f[1].1.len()), (FrameFlags::END_STREAM, 0));
        running.stop().await;
    });
}

/// A handler whose `Samples` waits at a gate after its first sample.
struct Gated {
    lab: Lab,
    gate: Arc<tokio::sync::Semaphore>,
}

impl svc::AsyncHandler for Gated {
    async fn identify(&self, ctx: &Context, r: schema::bebop::Empty) -> Result<Identity, Status> {
        svc::AsyncHandler::identify(&self.lab, ctx, r).await
    }
    async fn echo(&self, ctx: &Context, r: Note) -> Result<Note, Status> {
        svc::AsyncHandler::echo(&self.lab, ctx, r).await
    }
    async fn configure(&self, ctx: &Context, r: Settings) -> Result<Settings, Status> {
        svc::AsyncHandler::configure(&self.lab, ctx, r).await
    }
    async fn samples(
        &self,
        _ctx: &Context,
        _r: Settings,
        mut responses: bebop_rpc::ResponseSink<Sample>,
    ) -> Result<(), Status> {
        responses.send(&sample(1)).await?;
        self.gate.acquire().await.unwrap().forget();
        responses.send(&sample(2)).await?;
        Ok(())
    }
    async fn upload(&self, ctx: &Context, r: bebop_rpc::Requests<Sample>) -> Result<Total, Status> {
        svc::AsyncHandler::upload(&self.lab, ctx, r).await
    }
    async fn shout(
        &self,
        ctx: &Context,
        r: bebop_rpc::Requests<Note>,
        s: bebop_rpc::ResponseSink<Note>,
    ) -> Result<(), Status> {
        svc::AsyncHandler::shout(&self.lab, ctx, r, s).await
    }
}

/// Server-stream responses are written as the handler produces them: the first sample
/// arrives while the handler waits to send the second.
#[test]
fn http1_server_stream_arrives_as_it_is_produced() {
    run(async {
        let probe = Arc::new(Probe::default());
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let builder = bebop_rpc::Server::builder().add_service(svc::AsyncServer::new(Gated {
            lab: Lab {
                probe: probe.clone(),
            },
            gate: gate.clone(),
        }));
        let running = http(builder).await;
        let mut s = tokio::net::TcpStream::connect(addr(&running))
            .await
            .unwrap();
        s.write_all(&post(
            "/Lab/Samples",
            "application/bebop+stream",
            &[],
            &encode(&settings(2, "")),
        ))
        .await
        .unwrap();
        let first_frame = 9 + encode(&sample(1)).len();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // Read until the head and the first frame's chunk are in; the gate is still shut.
        loop {
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "the server closed early");
            got.extend_from_slice(&buf[..n]);
            if let Some(at) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let chunks = &got[at + 4..];
                if let Some(line) = chunks.windows(2).position(|w| w == b"\r\n") {
                    let size =
                        usize::from_str_radix(std::str::from_utf8(&chunks[..line]).unwrap(), 16)
                            .unwrap();
                    if chunks.len() >= line + 2 + size {
                        assert_eq!(size, first_frame);
                        let frame = &chunks[line + 2..line + 2 + size];
                        assert_eq!(
                            frames(frame),
                            [(FrameFlags::NONE, encode(&sample(1)), None)]
                        );
                        break;
                    }
                }
            }
        }
        assert_eq!(gate.available_permits(), 0);
        gate.add_permits(1);
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).await.unwrap();
        got.extend_from_slice(&rest);
        let r = parse_response(&got);
        let f = frames(&r.body);
        assert_eq!(f.len(), 3);
        assert_eq!(f[1].1, encode(&sample(2)));
        assert_eq!(f[2].0, FrameFlags::END_STREAM);
        running.stop().await;
    });
}

#[test]
fn duplex_needs_http2() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        // Over HTTP/1.1: 501, UNIMPLEMENTED, before any handler runs.
        let body = [
            request_frame(0, &encode(&note("a"))),
            request_frame(0, &encode(&note("b"))),
            request_frame(0x01, &[]),
        ]
        .concat();
        let r = raw_h1(
            a,
            &post("/Lab/Shout", "application/bebop+stream", &[], &body),
        )
        .await;
        assert_eq!(r.status(), 501);
        assert_eq!(r.header("bebop-status"), Some("12"));
        assert!(
            Status::from_error_payload(&r.body)
                .detail()
                .contains("HTTP/2")
        );
        // Over h2c: frames both ways.
        let response = h2_client()
            .request(request(a, "/Lab/Shout", "application/bebop+stream", body))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let f = frames(&body);
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].1, encode(&note("A")));
        assert_eq!(f[1].1, encode(&note("B")));
        assert_eq!(f[2].0, FrameFlags::END_STREAM);
        assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
        running.stop().await;
    });
}

/// The batch endpoint is unary method 1, the futures endpoints methods 2 to 4, discovery
/// method 0 (also `GET`).
#[test]
fn reserved_endpoints_route_to_their_ids() {
    run(async {
        let probe = Arc::new(Probe::default());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let running = http(instrumented(&probe, seen.clone())).await;
        let a = addr(&running);
        // Discovery, by GET and by POST.
        let r = raw_h1(
            a,
            b"GET /_bebop/discovery HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(r.status(), 200);
        assert_eq!(r.header("content-type"), Some("application/bebop"));
        let d = bebop_runtime::rpc::DiscoveryResponse::from_bytes(&r.body).unwrap();
        assert_eq!(d.services.iter().next().unwrap().name, "Lab");
        let r = raw_h1(a, &post("/_bebop/discovery", "application/bebop", &[], &[])).await;
        assert_eq!(r.status(), 200);
        // A batch reaches method 1 as a unary call: whatever it answers, it is a Bebop
        // answer (with the stub, UNIMPLEMENTED).
        // An empty BatchRequest message: its length, then the end marker.
        let batch = [1, 0, 0, 0, 0];
        let r = raw_h1(a, &post("/_bebop/batch", "application/bebop", &[], &batch)).await;
        assert_eq!(r.header("content-type"), Some("application/bebop"));
        if r.status() != 200 {
            let code: u8 = r.header("bebop-status").unwrap().parse().unwrap();
            assert_eq!(
                Status::from_error_payload(&r.body).code(),
                StatusCode::from(code)
            );
        }
        assert_eq!(seen.lock().unwrap().as_slice(), [0, 0, 1]);
        // The futures endpoints are not served: UNIMPLEMENTED, as a client sees it.
        for path in ["/_bebop/dispatch", "/_bebop/resolve", "/_bebop/cancel"] {
            let r = raw_h1(a, &post(path, "application/bebop", &[], &[])).await;
            assert_eq!(r.status(), 501, "{path}");
            assert_eq!(r.header("bebop-status"), Some("12"), "{path}");
        }
        let client = running.client().await;
        for id in 2..=4 {
            let e = client
                .unary::<str, String>(id, "x", CallOptions::new())
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::Unimplemented, "method {id}");
        }
        running.stop().await;
    });
}

/// A client that goes away cancels its call: an HTTP/2 reset, or a closed HTTP/1.1
/// connection.
#[test]
fn client_going_away_cancels_the_handler() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        // HTTP/2: drop the response body mid-stream (RST_STREAM).
        let response = h2_client()
            .request(request(
                a,
                "/Lab/Samples",
                "application/bebop",
                encode(&settings(100_000, "slow:1")),
            ))
            .await
            .unwrap();
        let mut body = response.into_body();
        let mut seen = 0;
        while seen < 3 * 9 {
            seen += body
                .frame()
                .await
                .unwrap()
                .unwrap()
                .into_data()
                .unwrap()
                .len();
        }
        drop(body);
        eventually("the h2 stream's handler was dropped", || {
            probe.dropped.load(Ordering::SeqCst) == 1
        })
        .await;
        // HTTP/1.1: close the socket mid-stream.
        let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
        s.write_all(&post(
            "/Lab/Samples",
            "application/bebop",
            &[],
            &encode(&settings(100_000, "slow:1")),
        ))
        .await
        .unwrap();
        let mut buf = [0u8; 256];
        assert!(s.read(&mut buf).await.unwrap() > 0);
        // The response head comes before the handler runs: wait for it to run.
        eventually("the h1 stream's handler runs", || {
            probe.calls.load(Ordering::SeqCst) == 2
        })
        .await;
        drop(s);
        eventually("the h1 stream's handler was dropped", || {
            probe.dropped.load(Ordering::SeqCst) == 2
        })
        .await;
        // A unary call whose client hangs up while the handler runs.
        let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
        s.write_all(&post(
            "/Lab/Echo",
            "application/bebop",
            &[],
            &encode(&note("sleep:10000")),
        ))
        .await
        .unwrap();
        eventually("the unary call started", || {
            probe.calls.load(Ordering::SeqCst) == 3
        })
        .await;
        drop(s);
        eventually("the unary handler was dropped", || {
            probe.dropped.load(Ordering::SeqCst) == 3
        })
        .await;
        // Through the connector, on both versions: dropping the stream.
        for h2 in [false, true] {
            let mut b = HttpConnector::builder(running.endpoint.url().unwrap());
            if h2 {
                b = b.http2_prior_knowledge();
            }
            let lab = Running::lab(&Client::over(b.build().unwrap()));
            let mut stream = lab
                .samples(&settings(100_000, "slow:1"), CallOptions::new())
                .await
                .unwrap();
            stream.message().await.unwrap().unwrap();
            let before = probe.dropped.load(Ordering::SeqCst);
            drop(stream);
            eventually("the connector's call was cancelled", || {
                probe.dropped.load(Ordering::SeqCst) == before + 1
            })
            .await;
        }
        running.stop().await;
    });
}

/// The service mounted in an axum app next to its own routes: as the fallback, and nested
/// under a prefix.
#[test]
fn mounts_in_axum() {
    run(async {
        let probe = Arc::new(Probe::default());
        let server = lab_server(&probe).build();
        let app = axum::Router::new()
            .route("/health", axum::routing::get(|| async { "ok" }))
            .nest_service("/rpc", HttpService::new(server.clone()))
            .fallback_service(HttpService::new(server.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = listener.local_addr().unwrap();
        let serving = tokio::spawn(async move { axum::serve(listener, app).await });
        let r = raw_h1(
            a,
            b"GET /health HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n",
        )
        .await;
        assert_eq!((r.status(), r.body.as_slice()), (200, b"ok".as_slice()));
        for base in [format!("http://{a}"), format!("http://{a}/rpc")] {
            for h2 in [false, true] {
                let mut b = HttpConnector::builder(&base);
                if h2 {
                    b = b.http2_prior_knowledge();
                }
                let lab = Running::lab(&Client::over(b.build().unwrap()));
                let r = lab
                    .echo(&note("through axum"), CallOptions::new())
                    .await
                    .unwrap();
                assert_eq!(r.into_inner().text, "through axum", "{base}");
                let r = lab.echo(&note("meta"), CallOptions::new()).await.unwrap();
                assert_eq!(r.metadata().get("rows"), Some("3"));
                let s = lab
                    .samples(&settings(5, "trailer"), CallOptions::new())
                    .await
                    .unwrap();
                let items: Vec<_> = s.map(Result::unwrap).collect().await;
                assert_eq!(items, (1..=5).map(sample).collect::<Vec<_>>());
                let total = lab
                    .upload(
                        futures_util::stream::iter((1..=10).map(sample)),
                        CallOptions::new(),
                    )
                    .await
                    .unwrap();
                assert_eq!(total.into_inner().count, 10);
            }
        }
        // Axum's own 404s are not involved: unknown methods are Bebop's.
        let r = raw_h1(a, &post("/Nope/Nope", "application/bebop", &[], &[])).await;
        assert_eq!((r.status(), r.header("bebop-status")), (404, Some("5")));
        serving.abort();
        server.shutdown(Duration::from_secs(5)).await;
    });
}

/// HTTPS with ALPN: HTTP/2 when both offer it (duplex works), HTTP/1.1 when the client only
/// speaks that (duplex is then UNIMPLEMENTED).
#[test]
fn tls_with_alpn() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::Https, lab_server(&probe)).await;
        let Endpoint::Https { url, tls } = running.endpoint.clone() else {
            unreachable!()
        };
        let lab = Running::lab(&running.client().await);
        let s = lab
            .shout(
                futures_util::stream::iter(["tls"].map(note)),
                CallOptions::new(),
            )
            .await
            .unwrap();
        let got: Vec<_> = s.map(|n| n.unwrap().text).collect().await;
        assert_eq!(got, ["TLS"]);
        let mut h1_only = (*tls).clone();
        h1_only.alpn_protocols = vec![b"http/1.1".to_vec()];
        let lab = Running::lab(&Client::over(
            HttpConnector::builder(&url)
                .tls_config(Arc::new(h1_only))
                .build()
                .unwrap(),
        ));
        assert_eq!(
            lab.echo(&note("h1"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "h1"
        );
        let mut s = lab
            .shout(
                futures_util::stream::iter(["tls"].map(note)),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(
            s.message().await.unwrap_err().code(),
            StatusCode::Unimplemented
        );
        // A client that does not trust the certificate fails cleanly.
        let provider = Arc::new(bebop_rpc_http::rustls::crypto::ring::default_provider());
        let untrusting = bebop_rpc_http::rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(bebop_rpc_http::rustls::RootCertStore::empty())
            .with_no_client_auth();
        let lab = Running::lab(&Client::over(
            HttpConnector::builder(&url)
                .tls_config(Arc::new(untrusting))
                .build()
                .unwrap(),
        ));
        let e = lab.echo(&note("x"), CallOptions::new()).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");
        running.stop().await;
    });
}

#[test]
fn resume_cursor_header() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let lab = Running::lab(&running.client().await);
        let mut s = lab
            .samples(&settings(10, ""), CallOptions::new())
            .await
            .unwrap();
        for _ in 0..4 {
            s.message().await.unwrap().unwrap();
        }
        // HTTP routes by name: the new client must know the method (a generated client
        // made from it describes its service).
        let second = running.client().await;
        let _ = Running::lab(&second);
        let mut s = s.resume(&second).await.unwrap();
        let rest: Vec<_> = (&mut s).map(|r| r.unwrap().seq).collect().await;
        assert_eq!(rest, (5..=10).collect::<Vec<_>>());
        let r = raw_h1(
            addr(&running),
            &post(
                "/Lab/Samples",
                "application/bebop",
                &[("bebop-cursor", "soon")],
                &encode(&settings(3, "")),
            ),
        )
        .await;
        assert_eq!((r.status(), r.header("bebop-status")), (400, Some("3")));
        running.stop().await;
    });
}

/// Errors that do not come from a Bebop server (a proxy's own pages) map from the HTTP
/// status, with it in the detail.
#[test]
fn foreign_errors_map_from_the_http_status() {
    run(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = listener.local_addr().unwrap();
        let answers: [&[u8]; 4] = [
            b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: 39\r\nconnection: close\r\n\r\n<html><b>upstream is down</b>   </html>",
            b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi",
            b"HTTP/1.1 418 I'm a teapot\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        ];
        tokio::spawn(async move {
            for answer in answers {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                s.write_all(answer).await.unwrap();
            }
        });
        let lab = Running::lab(&Client::over(
            HttpConnector::new(&format!("http://{a}")).unwrap(),
        ));
        let e = lab.echo(&note("x"), CallOptions::new()).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable);
        assert!(
            e.detail().contains("502 Bad Gateway") && e.detail().contains("upstream is down"),
            "{e}"
        );
        let e = lab.echo(&note("x"), CallOptions::new()).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::Unauthenticated, "{e}");
        assert!(e.detail().contains("401"), "{e}");
        let e = lab.echo(&note("x"), CallOptions::new()).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::Unknown, "{e}");
        assert!(e.detail().contains("text/html"), "{e}");
        let e = lab.echo(&note("x"), CallOptions::new()).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::Unknown, "{e}");
        // Nothing listening: UNAVAILABLE.
        drop(lab);
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let lab = Running::lab(&Client::over(HttpConnector::new(&url).unwrap()));
        assert_eq!(
            lab.echo(&note("x"), CallOptions::new())
                .await
                .unwrap_err()
                .code(),
            StatusCode::Unavailable
        );
        // Bad base URLs and undescribed methods are INVALID_ARGUMENT.
        for bad in ["127.0.0.1:80", "ftp://x", "http://x/?q=1", "https://x"] {
            assert_eq!(
                HttpConnector::new(bad).unwrap_err().code(),
                StatusCode::InvalidArgument,
                "{bad}"
            );
        }
    });
}

/// The HTTP server counts against `max_connections` and shuts down with the Bebop server:
/// calls in flight finish, then the listener is gone.
#[test]
fn connection_limit_and_graceful_shutdown() {
    run(async {
        let probe = Arc::new(Probe::default());
        let builder = lab_server(&probe).limits(Limits {
            max_connections: 1,
            ..Limits::default()
        });
        let running = http(builder).await;
        let a = addr(&running);
        let first = tokio::net::TcpStream::connect(a).await.unwrap();
        eventually("the first connection is served", || {
            running.server.connections() == 1
        })
        .await;
        let r = raw_h1(
            a,
            &post("/Lab/Echo", "application/bebop", &[], &encode(&note("x"))),
        )
        .await;
        assert_eq!((r.status(), r.header("bebop-status")), (429, Some("8")));
        drop(first);
        eventually("the slot is free", || running.server.connections() == 0).await;
        // A call in flight when shutdown begins finishes.
        let lab = Running::lab(&running.client().await);
        let call =
            tokio::spawn(async move { lab.echo(&note("sleep:300"), CallOptions::new()).await });
        eventually("the call started", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        let started = std::time::Instant::now();
        running.server.shutdown(Duration::from_secs(5)).await;
        assert!(started.elapsed() < Duration::from_secs(4));
        assert_eq!(call.await.unwrap().unwrap().into_inner().text, "sleep:300");
        assert!(tokio::net::TcpStream::connect(a).await.is_err());
        running.stop().await;
    });
}

#[test]
fn the_identity_hook_sees_http_peers() {
    run(async {
        let probe = Arc::new(Probe::default());
        let builder =
            lab_server(&probe).identity(|peer| peer.remote().map(|a| format!("peer {a}")));
        let running = http(builder).await;
        let lab = Running::lab(&running.client().await);
        let id = lab
            .identify(&schema::bebop::Empty {}, CallOptions::new())
            .await
            .unwrap();
        assert!(id.into_inner().model.starts_with("peer 127.0.0.1:"));
        running.stop().await;
    });
}

// ---- hostile input ----

fn small_limits() -> Limits {
    Limits {
        max_frame_payload: 1024,
        max_call_header: 8192,
        ..Limits::default()
    }
}

#[test]
fn oversized_headers_and_bodies_are_refused_without_buffering() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe).limits(small_limits())).await;
        let a = addr(&running);
        // Headers over the limit: 431 from HTTP/1.1 itself.
        let big = "v".repeat(20_000);
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &[("x-big", &big)],
                &encode(&note("x")),
            ),
        )
        .await;
        assert_eq!(r.status(), 431);
        // HTTP/2: the request fails cleanly; the server goes on.
        let mut req = request(a, "/Lab/Echo", "application/bebop", encode(&note("x")));
        req.headers_mut().insert("x-big", big.parse().unwrap());
        // (a 431, or a reset stream: either is clean)
        if let Ok(r) = h2_client().request(req).await {
            assert!(r.status().is_client_error(), "{}", r.status());
        }
        // A declared body over the limit: refused at once, the body never sent.
        let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
        s.write_all(b"POST /Lab/Echo HTTP/1.1\r\nhost: t\r\ncontent-type: application/bebop\r\ncontent-length: 100000000\r\n\r\n")
            .await
            .unwrap();
        let mut all = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut all))
            .await
            .unwrap()
            .unwrap();
        let r = parse_response(&all);
        assert_eq!((r.status(), r.header("bebop-status")), (429, Some("8")));
        assert!(
            Status::from_error_payload(&r.body)
                .detail()
                .contains("100000000 bytes")
        );
        // A chunked body that grows over the limit.
        let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
        s.write_all(b"POST /Lab/Echo HTTP/1.1\r\nhost: t\r\ncontent-type: application/bebop\r\ntransfer-encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        let chunk = format!("400\r\n{}\r\n", "x".repeat(0x400));
        for _ in 0..3 {
            if s.write_all(chunk.as_bytes()).await.is_err() {
                break;
            }
        }
        let r = tokio::time::timeout(Duration::from_secs(10), read_one_response(&mut s))
            .await
            .unwrap();
        assert_eq!((r.status(), r.header("bebop-status")), (429, Some("8")));
        // None of the refused calls reached a handler.
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
        // A streaming request frame over the limit: an ERROR frame, refused from its header.
        let mut body = vec![0x00, 0x10, 0, 0, 0x00, 0, 0, 0, 0]; // 4096 bytes declared
        body.extend_from_slice(&[0; 16]);
        let r = raw_h1(
            a,
            &post("/Lab/Upload", "application/bebop+stream", &[], &body),
        )
        .await;
        let f = frames(&r.body);
        assert_eq!(
            f.last().unwrap().0,
            FrameFlags::END_STREAM | FrameFlags::ERROR
        );
        let e = Status::from_error_payload(&f.last().unwrap().1);
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        assert!(e.detail().contains("byte 0"), "{e}");
        // Still serving.
        let lab = Running::lab(&running.client().await);
        assert_eq!(
            lab.echo(&note("ok"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "ok"
        );
        running.stop().await;
    });
}

/// The frame of a request stream, stream id 0.
fn request_frame(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_le_bytes().to_vec();
    f.push(flags);
    f.extend_from_slice(&[0; 4]);
    f.extend_from_slice(payload);
    f
}

#[test]
fn broken_request_streams_end_in_clean_errors() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        let one = request_frame(0, &encode(&sample(1)));
        let cases: [(Vec<u8>, StatusCode, &str); 4] = [
            // Ends inside a frame.
            (
                [one.clone(), one[..5].to_vec()].concat(),
                StatusCode::InvalidArgument,
                "inside a frame",
            ),
            // Ends without END_STREAM.
            (
                [one.clone(), one.clone()].concat(),
                StatusCode::InvalidArgument,
                "without an END_STREAM",
            ),
            // TRAILER without END_STREAM: invalid flags.
            (
                [one.clone(), request_frame(0x08, &[])].concat(),
                StatusCode::InvalidArgument,
                "flag",
            ),
            // A client never sends TRAILER.
            (
                [one.clone(), request_frame(0x09, &[])].concat(),
                StatusCode::InvalidArgument,
                "TRAILER",
            ),
        ];
        for (body, code, words) in cases {
            let r = raw_h1(
                a,
                &post("/Lab/Upload", "application/bebop+stream", &[], &body),
            )
            .await;
            assert_eq!(r.status(), 200);
            let f = frames(&r.body);
            let (flags, payload, _) = f.last().unwrap();
            assert_eq!(*flags, FrameFlags::END_STREAM | FrameFlags::ERROR);
            let e = Status::from_error_payload(payload);
            assert_eq!(e.code(), code, "{e}");
            assert!(e.detail().contains(words), "{e}");
        }
        // A whole stream with END_STREAM works, the same bytes the binary transport sends.
        let body = [
            one.clone(),
            request_frame(0, &encode(&sample(2))),
            request_frame(0x01, &[]),
        ]
        .concat();
        let r = raw_h1(
            a,
            &post("/Lab/Upload", "application/bebop+stream", &[], &body),
        )
        .await;
        let f = frames(&r.body);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].0, FrameFlags::END_STREAM);
        assert_eq!(Total::from_bytes(&f[0].1).unwrap().count, 2);
        // A client-stream method given one bare request takes it as a stream of one.
        let r = raw_h1(
            a,
            &post("/Lab/Upload", "application/bebop", &[], &encode(&sample(3))),
        )
        .await;
        assert_eq!(Total::from_bytes(&frames(&r.body)[0].1).unwrap().count, 1);
        // A unary method given a stream of requests is UNIMPLEMENTED.
        let r = raw_h1(
            a,
            &post("/Lab/Echo", "application/bebop+stream", &[], &body),
        )
        .await;
        assert_eq!((r.status(), r.header("bebop-status")), (501, Some("12")));
        running.stop().await;
    });
}

/// A client that sends each small request frame as a DATA frame of its own, to a handler
/// that pauses: HTTP/2 closes a connection whose peer has too many small DATA frames unread
/// (`h2`'s `too_many_data_frames`, about 2,000 at the default window), so the server reads
/// on while the call is busy (64 KiB at most) instead of leaving them in HTTP/2.
#[test]
fn many_small_data_frames_to_a_slow_handler_keep_the_connection() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        const FRAMES: u32 = 5_000;
        let pause = Sample {
            seq: PAUSE,
            value: 300.0,
        };
        let chunks: Vec<Result<hyper::body::Frame<Bytes>, std::convert::Infallible>> =
            std::iter::once(request_frame(0, &encode(&pause)))
                .chain((1..=FRAMES).map(|seq| request_frame(0, &encode(&sample(seq)))))
                .chain(std::iter::once(request_frame(0x01, &[])))
                .map(|frame| Ok(hyper::body::Frame::data(Bytes::from(frame))))
                .collect();
        let client = legacy::Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build_http::<StreamBody<_>>();
        let body = StreamBody::new(futures_util::stream::iter(chunks));
        let response = client
            .request(
                http::Request::post(format!("http://{a}/Lab/Upload"))
                    .header("content-type", "application/bebop+stream")
                    .body(body)
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let f = frames(&bytes);
        assert_eq!(f[0].0, FrameFlags::END_STREAM);
        let total = Total::from_bytes(&f[0].1).unwrap();
        assert_eq!(total.count, FRAMES);
        running.stop().await;
    });
}

/// The same from the other side: a server that sends each small response frame as a DATA
/// frame of its own to a caller that reads slowly; the client reads on (64 KiB at most)
/// while the caller's queue is full, and the connection stays up.
#[test]
fn many_small_data_frames_to_a_slow_caller_keep_the_connection() {
    run(async {
        const FRAMES: u32 = 5_000;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = listener.local_addr().unwrap();
        let serving = tokio::spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            let service = hyper::service::service_fn(|_request| async {
                let chunks: Vec<Result<hyper::body::Frame<Bytes>, std::convert::Infallible>> = (1
                    ..=FRAMES)
                    .map(|seq| request_frame(0, &encode(&sample(seq))))
                    .chain(std::iter::once(request_frame(0x01, &[])))
                    .map(|frame| Ok(hyper::body::Frame::data(Bytes::from(frame))))
                    .collect();
                http::Response::builder()
                    .header("content-type", "application/bebop+stream")
                    .body(StreamBody::new(futures_util::stream::iter(chunks)))
            });
            hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(hyper_util::rt::TokioIo::new(s), service)
                .await
        });
        let client = Client::over(
            HttpConnector::builder(&format!("http://{a}"))
                .http2_prior_knowledge()
                .build()
                .unwrap(),
        );
        let lab = Running::lab(&client);
        let mut s = lab
            .samples(&settings(FRAMES, ""), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(s.message().await.unwrap(), Some(sample(1)));
        // A caller busy elsewhere while the rest arrives.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut seen = 1;
        while let Some(item) = s.message().await.unwrap() {
            seen += 1;
            assert_eq!(item.seq, seen);
        }
        assert_eq!(seen, FRAMES);
        drop((s, lab, client));
        serving.await.unwrap().unwrap();
    });
}

#[test]
fn bad_paths_methods_content_types_and_payloads() {
    run(async {
        let probe = Arc::new(Probe::default());
        let running = http(lab_server(&probe)).await;
        let a = addr(&running);
        let body = encode(&note("x"));
        let long = format!("/Lab/{}", "E".repeat(5000));
        for path in [
            "/",
            "/Lab",
            "/Lab/",
            "//Echo",
            "/Lab/Echo/more",
            "/lab/echo",
            "/_bebop/nope",
            "/Lab/Echo%20",
            long.as_str(),
        ] {
            let r = raw_h1(a, &post(path, "application/bebop", &[], &body)).await;
            assert_eq!(
                (r.status(), r.header("bebop-status")),
                (404, Some("5")),
                "{path}"
            );
            assert!(Status::from_error_payload(&r.body).detail().len() < 200);
        }
        // Not POST: 405 with allow.
        let r = raw_h1(
            a,
            b"GET /Lab/Echo HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n",
        )
        .await;
        assert_eq!((r.status(), r.header("bebop-status")), (405, Some("12")));
        assert_eq!(r.header("allow"), Some("GET, POST"));
        // Not a Bebop content type: 415, INVALID_ARGUMENT.
        for ct in [
            "application/json",
            "text/plain; charset=utf-8",
            "application/bebop-ish",
        ] {
            let r = raw_h1(a, &post("/Lab/Echo", ct, &[], &body)).await;
            assert_eq!(
                (r.status(), r.header("bebop-status")),
                (415, Some("3")),
                "{ct}"
            );
        }
        // Parameters and case do not matter.
        let r = raw_h1(a, &post("/Lab/Echo", "Application/Bebop; v=1", &[], &body)).await;
        assert_eq!(r.status(), 200);
        // A body that is not the request: INVALID_ARGUMENT naming the decode error.
        let r = raw_h1(
            a,
            &post(
                "/Lab/Echo",
                "application/bebop",
                &[],
                b"\xff\xff\xff\xffjunk",
            ),
        )
        .await;
        assert_eq!((r.status(), r.header("bebop-status")), (400, Some("3")));
        let e = Status::from_error_payload(&r.body);
        assert!(
            e.detail().contains("offset") || e.detail().contains("byte"),
            "{e}"
        );
        // Not HTTP at all: the connection is closed, the server goes on.
        let r = tokio::time::timeout(Duration::from_secs(10), async {
            let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
            s.write_all(b"\x00\x01\x02garbage\r\n\r\n").await.unwrap();
            let mut all = Vec::new();
            let _ = s.read_to_end(&mut all).await;
            all
        })
        .await
        .unwrap();
        assert!(
            r.is_empty() || r.starts_with(b"HTTP/1.1 400"),
            "{:?}",
            String::from_utf8_lossy(&r)
        );
        let lab = Running::lab(&running.client().await);
        assert_eq!(
            lab.echo(&note("ok"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "ok"
        );
        running.stop().await;
    });
}

/// Random bytes as a streaming request body, over HTTP/1.1 and HTTP/2: always a clean
/// answer (an `ERROR` frame or the call's response), never a panic or a hang.
#[test]
fn random_stream_bodies_end_in_clean_responses() {
    use proptest::prelude::*;
    let rt = rt();
    let probe = Arc::new(Probe::default());
    let running = rt.block_on(http(lab_server(&probe).limits(small_limits())));
    let a = addr(&running);
    let (h1, h2) = (h1_client(), h2_client());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let framed = prop::collection::vec(
        (any::<u8>(), prop::collection::vec(any::<u8>(), 0..12)),
        0..6,
    )
    .prop_map(|frames| {
        frames
            .into_iter()
            .flat_map(|(flags, payload)| request_frame(flags & 0x1f, &payload))
            .collect::<Vec<u8>>()
    });
    let bodies = prop_oneof![prop::collection::vec(any::<u8>(), 0..200), framed];
    runner
        .run(
            &(bodies, any::<bool>(), any::<bool>()),
            |(body, on_h2, duplex)| {
                let path = if duplex { "/Lab/Shout" } else { "/Lab/Upload" };
                let client = if on_h2 { &h2 } else { &h1 };
                let outcome = rt.block_on(async {
                    tokio::time::timeout(Duration::from_secs(10), async {
                        let response = client
                            .request(request(a, path, "application/bebop+stream", body.clone()))
                            .await
                            .unwrap();
                        let status = response.status();
                        let bytes = response.into_body().collect().await.unwrap().to_bytes();
                        (status, bytes)
                    })
                    .await
                });
                let (status, bytes) = outcome.expect("the server hung");
                if duplex && !on_h2 {
                    prop_assert_eq!(status.as_u16(), 501);
                    return Ok(());
                }
                prop_assert_eq!(status.as_u16(), 200);
                let f = frames(&bytes);
                prop_assert!(!f.is_empty());
                let (flags, payload, _) = f.last().unwrap();
                prop_assert!(flags.contains(FrameFlags::END_STREAM));
                if flags.contains(FrameFlags::ERROR) {
                    let e = Status::from_error_payload(payload);
                    prop_assert!(
                        matches!(
                            e.code(),
                            StatusCode::InvalidArgument
                                | StatusCode::ResourceExhausted
                                | StatusCode::Cancelled
                                // A COMPRESSED frame: no compression was negotiated.
                                | StatusCode::Unimplemented
                        ),
                        "{}",
                        e
                    );
                }
                Ok(())
            },
        )
        .unwrap();
    rt.block_on(async {
        let lab = Running::lab(&running.client().await);
        assert_eq!(
            lab.echo(&note("ok"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "ok"
        );
        running.stop().await;
    });
}

// ---- bebop-discover ----

#[test]
fn bebop_discover_lists_services_from_discovery_alone() {
    run(async {
        let probe = Arc::new(Probe::default());
        let over_http = http(lab_server(&probe)).await;
        let over_tcp = Running::start(Transport::Tcp, lab_server(&probe)).await;
        let Endpoint::Tcp(tcp) = over_tcp.endpoint.clone() else {
            unreachable!()
        };
        let url = over_http.endpoint.url().unwrap().to_owned();
        let bin = env!("CARGO_BIN_EXE_bebop-discover");
        let mut outputs = Vec::new();
        for args in [
            vec![url.clone()],
            vec!["--http2".into(), url.clone()],
            vec![tcp.to_string()],
        ] {
            let out = tokio::time::timeout(
                Duration::from_secs(20),
                tokio::process::Command::new(bin).args(&args).output(),
            )
            .await
            .unwrap()
            .unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            outputs.push(String::from_utf8(out.stdout).unwrap());
        }
        let text = &outputs[0];
        assert!(text.starts_with("service Lab: 6 methods\n"), "{text}");
        let echo = format!(
            "  {:#010x}  unary          Echo(type.bebop.sh/lab.Note) -> type.bebop.sh/lab.Note\n",
            svc::ECHO.id
        );
        assert!(text.contains(&echo), "{text}");
        assert!(text.contains("server-stream  Samples(type.bebop.sh/lab.Settings) -> stream type.bebop.sh/lab.Sample"), "{text}");
        assert!(
            text.contains(
                "client-stream  Upload(stream type.bebop.sh/lab.Sample) -> type.bebop.sh/lab.Total"
            ),
            "{text}"
        );
        assert!(text.contains("duplex         Shout(stream type.bebop.sh/lab.Note) -> stream type.bebop.sh/lab.Note"), "{text}");
        assert_eq!(outputs[0], outputs[1]);
        assert_eq!(outputs[0], outputs[2]);
        // Nothing there: a status on stderr and exit code 1.
        over_http.stop().await;
        let out = tokio::process::Command::new(bin)
            .arg(&url)
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("UNAVAILABLE"));
        over_tcp.stop().await;
    });
}

#[test]
fn http_server_serves_unix_sockets() {
    run(async {
        let probe = Arc::new(Probe::default());
        let server = lab_server(&probe).build();
        let dir = TempDir::new();
        let path = dir.0.join("http.sock");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let serving = tokio::spawn(HttpServer::new(server.clone()).serve_unix(listener));
        let mut s = tokio::net::UnixStream::connect(&path).await.unwrap();
        s.write_all(&post(
            "/Lab/Echo",
            "application/bebop",
            &[],
            &encode(&note("unix")),
        ))
        .await
        .unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).await.unwrap();
        let r = parse_response(&all);
        assert_eq!(r.body, encode(&note("unix")));
        server.shutdown(Duration::from_secs(5)).await;
        serving.await.unwrap().unwrap();
    });
}

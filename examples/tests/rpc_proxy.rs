//! Bebop RPC over HTTP/1.1 behind a real reverse proxy, and from a browser-style client.
//!
//! - nginx (started by the test on loopback, with its own configuration in a temporary
//!   directory, stopped at the end) in front of the HTTP server: unary calls with metadata
//!   both ways, errors with their HTTP status, a server stream that reaches the client item
//!   by item (the proxy does not buffer it), a client stream, and a batch pass through it.
//! - `js/http_client.mjs` in Node.js, with `fetch` only, as a page in a browser would call:
//!   a unary call, request metadata, an error's status mapping and a server stream read as
//!   it arrives, against the server directly and through nginx.
//!
//! nginx and Node.js are installed by `scripts/test-services`; without them these tests say
//! so and pass, unless `CI` is set.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bebop_rpc::{Batch, CallOptions, Client, StatusCode};
use common::nginx::{Nginx, nginx_or_skip};
use common::*;
use futures_util::StreamExt;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A Lab server on HTTP/1.1 (`bebop_rpc_http::serve` on 127.0.0.1:0), stopped when `test`
/// returns.
fn with_http_server<F, Fut>(test: F)
where
    F: FnOnce(std::net::SocketAddr, Arc<Probe>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let server = lab_server(&probe).build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let serving = tokio::spawn(bebop_rpc_http::serve(server.clone(), listener));
        tokio::time::timeout(Duration::from_secs(60), test(addr, probe))
            .await
            .expect("the test timed out");
        server.shutdown(Duration::from_secs(5)).await;
        serving.await.unwrap().unwrap();
    });
}

fn client_for(base: &str) -> Client {
    Client::over(bebop_rpc_http::HttpConnector::new(base).unwrap())
}

fn note(text: &str) -> Note {
    Note { text: text.into() }
}

#[test]
fn calls_pass_through_nginx() {
    let Some(nginx_bin) = nginx_or_skip("calls_pass_through_nginx") else {
        return;
    };
    with_http_server(|upstream, probe| async move {
        let proxy = Nginx::start(&nginx_bin, upstream);
        let base = format!("http://{}", proxy.addr);
        let lab = svc::AsyncClient::new(client_for(&base));

        // Unary, with request metadata in and response metadata out (as headers).
        let options = CallOptions::new().metadata("x-trace", "t-1");
        let r = lab.echo(&note("md:x-trace"), options).await.unwrap();
        assert_eq!(r.into_inner().text, "t-1");
        let r = lab.echo(&note("meta"), CallOptions::new()).await.unwrap();
        assert_eq!(r.metadata().get("rows"), Some("3"));
        assert_eq!(r.metadata().get("cache"), Some("miss"));

        // An error keeps its code, detail and metadata through the proxy.
        let e = lab
            .echo(&note("fail"), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        assert_eq!(e.detail(), "fail was asked for");
        assert_eq!(e.metadata().get("hint"), Some("try again"));

        // A server stream arrives item by item: the first sample is read while the handler,
        // which waits 300 ms between samples, has sent only the first few of five. A proxy
        // that buffered the response would deliver nothing before the handler finished.
        let settings = Settings {
            interval_ms: Some(5),
            label: Some("slow:300".into()),
        };
        let mut stream = lab.samples(&settings, CallOptions::new()).await.unwrap();
        let (first, cursor) = stream.message_with_cursor().await.unwrap().unwrap();
        assert_eq!((first.seq, cursor), (1, Some(1)));
        let sent = probe.sent.load(Ordering::SeqCst);
        assert!(
            sent < 5,
            "the proxy held the stream back: {sent} of 5 sent before the first arrived"
        );
        let mut rest = Vec::new();
        while let Some(s) = stream.message().await.unwrap() {
            rest.push(s.seq);
        }
        assert_eq!(rest, [2, 3, 4, 5]);

        // A client stream (a chunked request body passed through unbuffered).
        let samples = futures_util::stream::iter((1..=100).map(sample));
        let total = lab
            .upload(samples, CallOptions::new())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(total.count, 100);
        assert_eq!(
            total.sum,
            (1..=100).map(|i| f64::from(i) / 2.0).sum::<f64>()
        );

        // A batch: three dependent echoes in one round trip through the proxy.
        let mut batch = Batch::new();
        let a = batch.call(svc::ECHO, &note("chained")).unwrap();
        let b = batch.call_from(svc::ECHO, a);
        let c = batch.call_from(svc::ECHO, b);
        let results = lab.0.batch(&batch, CallOptions::new()).await.unwrap();
        for call in [a, b, c] {
            assert_eq!(results.get::<Note>(call).unwrap().text, "chained");
        }

        // Many calls at once share the proxy's upstream connections.
        let calls = futures_util::stream::iter(0..64)
            .map(|i| {
                let lab = lab.clone();
                async move {
                    let text = format!("n{i}");
                    let r = lab.echo(&note(&text), CallOptions::new()).await.unwrap();
                    assert_eq!(r.into_inner().text, text);
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>();
        calls.await;
        let log = proxy.log();
        assert!(!log.contains("[error]"), "nginx logged errors:\n{log}");
    });
}

/// `js/http_client.mjs`: a unary call, metadata, an error and a server stream from Node's
/// `fetch`, against the server itself and through nginx.
#[test]
fn a_javascript_client_over_http() {
    if !node_or_skip("a_javascript_client_over_http") {
        return;
    }
    let nginx_bin = nginx_or_skip("a_javascript_client_over_http (through nginx)");
    with_http_server(|upstream, probe| async move {
        let proxy = nginx_bin.as_deref().map(|bin| Nginx::start(bin, upstream));
        let mut bases = vec![format!("http://{upstream}")];
        bases.extend(proxy.as_ref().map(|p| format!("http://{}", p.addr)));
        for base in &bases {
            let lines = run_node("http_client.mjs", std::slice::from_ref(base)).await;
            assert_eq!(
                lines,
                [
                    "echo: 200 application/bebop \"Hello from fetch\"",
                    "metadata: node",
                    "error: 400 bebop-status=3",
                    "stream: 200 application/bebop+stream",
                    "sample: seq=1 value=0.5 cursor=1",
                    "sample: seq=2 value=1 cursor=2",
                    "sample: seq=3 value=1.5 cursor=3",
                    "end: flags=0x01 length=0",
                ],
                "against {base}: {lines:#?}"
            );
        }
        assert_eq!(probe.calls.load(Ordering::SeqCst), 4 * bases.len());
    });
}

//! `bebop-rpc` end to end: the generated Lab service on a tokio `Server`, called through the
//! generated `AsyncClient`, over real TCP loopback and Unix sockets. Every kind of call of
//! `docs/rpc.md` ("Calls") runs on both transports, with deadlines, cancellation, metadata,
//! cursors, interceptors, panics, limits, multiplexing and graceful shutdown.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use bebop_rpc::{CallOptions, Client, Context, Limits, Status, StatusCode};
use common::*;
use futures_util::StreamExt;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `test` once per binary transport against a fresh Lab server.
fn each_transport<F, Fut>(test: F)
where
    F: Fn(Transport, Running, Arc<Probe>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    on_transports(&TRANSPORTS, test)
}

/// Runs `test` once per carrier of calls (binary connections and the transport API).
fn each_carrier<F, Fut>(test: F)
where
    F: Fn(Transport, Running, Arc<Probe>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    on_transports(&CALL_TRANSPORTS, test)
}

fn on_transports<F, Fut>(transports: &[Transport], test: F)
where
    F: Fn(Transport, Running, Arc<Probe>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for &transport in transports {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let running = Running::start(transport, lab_server(&probe)).await;
            tokio::time::timeout(Duration::from_secs(60), test(transport, running, probe))
                .await
                .unwrap_or_else(|_| panic!("{transport:?}: the test timed out"));
        });
    }
}

fn note(text: &str) -> Note {
    Note { text: text.into() }
}

#[test]
fn unary_lifecycle_with_and_without_trailer() {
    each_carrier(|t, running, probe| async move {
        let client = running.client().await;
        let lab = Running::lab(&client);
        let r = lab.echo(&note("hello"), CallOptions::new()).await.unwrap();
        assert!(r.metadata().is_empty(), "{t:?}");
        assert_eq!(r.into_inner().text, "hello");
        // Response metadata travels in a TRAILER frame after the response.
        let r = lab.echo(&note("meta"), CallOptions::new()).await.unwrap();
        assert_eq!(r.metadata().get("rows"), Some("3"));
        assert_eq!(r.metadata().get("cache"), Some("miss"));
        // Identify takes bebop.Empty: an empty request frame.
        let id = lab
            .identify(&schema::bebop::Empty {}, CallOptions::new())
            .await
            .unwrap();
        assert_eq!(id.into_inner().serial, 4242);
        assert_eq!(probe.calls.load(Ordering::SeqCst), 3);
        running.stop().await;
    });
}

#[test]
fn errors_carry_code_detail_and_metadata() {
    each_carrier(|_, running, _| async move {
        let lab = Running::lab(&running.client().await);
        let e = lab
            .echo(&note("fail"), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        assert_eq!(e.detail(), "fail was asked for");
        // Response metadata set before the error goes in RpcError.metadata.
        assert_eq!(e.metadata().get("attempt"), Some("1"));
        assert_eq!(e.metadata().get("hint"), Some("try again"));
        let e = lab
            .configure(
                &Settings {
                    interval_ms: Some(5),
                    label: None,
                },
                CallOptions::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "INVALID_ARGUMENT: interval_ms must be 10..=60000, not 5"
        );
        running.stop().await;
    });
}

#[test]
fn request_metadata_reaches_the_handler() {
    each_carrier(|_, running, _| async move {
        let lab = Running::lab(&running.client().await);
        let r = lab
            .echo(
                &note("md:x-trace-id"),
                CallOptions::new().metadata("x-trace-id", "abc-123"),
            )
            .await
            .unwrap();
        assert_eq!(r.into_inner().text, "abc-123");
        let r = lab
            .echo(&note("md:x-trace-id"), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(r.into_inner().text, "<none>");
        // The multiplexing preface's key is the protocol's, not the call's.
        let r = lab
            .echo(&note("md:bebop-mux"), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(r.into_inner().text, "<none>");
        running.stop().await;
    });
}

fn settings(count: u32, label: &str) -> Settings {
    Settings {
        interval_ms: Some(count),
        label: Some(label.into()),
    }
}

#[test]
fn server_stream_lifecycle_with_cursors_and_trailer() {
    each_carrier(|_, running, _| async move {
        let lab = Running::lab(&running.client().await);
        let mut s = lab
            .samples(&settings(5, ""), CallOptions::new())
            .await
            .unwrap();
        let mut seen = Vec::new();
        while let Some((item, cursor)) = s.message_with_cursor().await.unwrap() {
            assert_eq!(cursor, Some(u64::from(item.seq)));
            seen.push(item);
        }
        assert_eq!(seen, (1..=5).map(sample).collect::<Vec<_>>());
        assert_eq!(s.cursor(), 5);
        assert!(s.trailers().is_none());
        // The stream ends with a TRAILER frame when the handler set metadata.
        let mut s = lab
            .samples(&settings(3, "trailer"), CallOptions::new())
            .await
            .unwrap();
        let items: Vec<_> = (&mut s).map(Result::unwrap).collect().await;
        assert_eq!(items.len(), 3);
        assert_eq!(s.trailers().and_then(|t| t.get("count")), Some("3"));
        // An empty stream.
        let mut s = lab
            .samples(&settings(0, ""), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(s.message().await.unwrap(), None);
        running.stop().await;
    });
}

#[test]
fn server_stream_error_after_partial_results() {
    each_carrier(|_, running, _| async move {
        let lab = Running::lab(&running.client().await);
        let mut s = lab
            .samples(&settings(10, "fail:4"), CallOptions::new())
            .await
            .unwrap();
        for seq in 1..=3 {
            assert_eq!(s.message().await.unwrap(), Some(sample(seq)));
        }
        let e = s.message().await.unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable);
        assert_eq!(e.detail(), "sensor failed at 4");
        assert_eq!(s.message().await.unwrap(), None);
        running.stop().await;
    });
}

#[test]
fn client_stream_lifecycle_and_early_response() {
    each_carrier(|_, running, _| async move {
        let lab = Running::lab(&running.client().await);
        let total = lab
            .upload(
                futures_util::stream::iter((1..=100).map(sample)),
                CallOptions::new(),
            )
            .await
            .unwrap()
            .into_inner();
        assert_eq!(total.count, 100);
        assert_eq!(
            total.sum,
            (1..=100).map(|s| f64::from(s) / 2.0).sum::<f64>()
        );
        // No requests at all.
        let total = lab
            .upload(futures_util::stream::empty(), CallOptions::new())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(total.count, 0);
        // The server answers after seq 0 while the client still has (endless) requests:
        // the client stops sending and gets the response (docs/rpc.md, "Calls").
        let endless = futures_util::stream::iter(1..=3)
            .map(sample)
            .chain(futures_util::stream::iter([sample(0)]))
            .chain(futures_util::stream::repeat_with(|| sample(7)));
        let total = lab
            .upload(endless, CallOptions::new())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(total.count, 3);
        // The connection still serves.
        assert_eq!(
            lab.echo(&note("after"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "after"
        );
        running.stop().await;
    });
}

#[test]
fn duplex_lifecycle() {
    each_carrier(|t, running, probe| async move {
        let lab = Running::lab(&running.client().await);
        let words = ["alpha", "beta", "gamma"];
        if !t.has_duplex() {
            // Duplex needs HTTP/2 (docs/rpc.md, "HTTP transport"): over HTTP/1.1 the
            // server answers UNIMPLEMENTED and the handler never runs.
            let mut s = lab
                .shout(
                    futures_util::stream::iter(words.map(note)),
                    CallOptions::new(),
                )
                .await
                .unwrap();
            let e = s.message().await.unwrap_err();
            assert_eq!(e.code(), StatusCode::Unimplemented, "{e}");
            assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
            running.stop().await;
            return;
        }
        let mut s = lab
            .shout(
                futures_util::stream::iter(words.map(note)),
                CallOptions::new(),
            )
            .await
            .unwrap();
        for w in words {
            assert_eq!(s.message().await.unwrap().unwrap().text, w.to_uppercase());
        }
        assert_eq!(s.message().await.unwrap(), None);
        // Interleaved: each response arrives before the next request is sent.
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let mut s = lab
            .shout(
                tokio_stream::wrappers::ReceiverStream::new(rx),
                CallOptions::new(),
            )
            .await
            .unwrap();
        for i in 0..20 {
            tx.send(note(&format!("n{i}"))).await.unwrap();
            assert_eq!(s.message().await.unwrap().unwrap().text, format!("N{i}"));
        }
        drop(tx);
        assert_eq!(s.message().await.unwrap(), None);
        // The server ends early on `stop`.
        let mut s = lab
            .shout(
                futures_util::stream::iter(["a", "stop", "never"].map(note)),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(s.message().await.unwrap().unwrap().text, "A");
        assert_eq!(s.message().await.unwrap(), None);
        running.stop().await;
    });
}

#[test]
fn expired_deadline_never_reaches_the_handler() {
    each_carrier(|_, running, probe| async move {
        let lab = Running::lab(&running.client().await);
        let past = SystemTime::now() - Duration::from_secs(1);
        // The client gives up at once too, so send it raw: a client deadline in the past.
        let e = lab
            .echo(&note("x"), CallOptions::new().deadline_at(past))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::DeadlineExceeded);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(probe.calls.load(Ordering::SeqCst), 0);
        running.stop().await;
    });
}

#[test]
fn deadline_during_the_call_cancels_the_handler() {
    each_carrier(|_, running, probe| async move {
        let lab = Running::lab(&running.client().await);
        let started = Instant::now();
        let e = lab
            .echo(
                &note("sleep:5000"),
                CallOptions::new().timeout(Duration::from_millis(200)),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::DeadlineExceeded);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        // The handler's future was dropped by the server, though it ignored cancellation.
        eventually("the handler was dropped", || {
            probe.dropped.load(Ordering::SeqCst) == 1
        })
        .await;
        running.stop().await;
    });
}

#[test]
fn server_sends_deadline_exceeded_while_the_stream_is_writable() {
    each_carrier(|_, running, _| async move {
        let lab = Running::lab(&running.client().await);
        // A server stream with a deadline: items arrive, then DEADLINE_EXCEEDED.
        let mut s = lab
            .samples(
                &settings(1000, "slow:20"),
                CallOptions::new().timeout(Duration::from_millis(300)),
            )
            .await
            .unwrap();
        let mut n = 0;
        let e = loop {
            match s.message().await {
                Ok(Some(_)) => n += 1,
                Ok(None) => panic!("the stream ended without an error"),
                Err(e) => break e,
            }
        };
        assert_eq!(e.code(), StatusCode::DeadlineExceeded);
        assert!(n > 0 && n < 1000, "{n}");
        running.stop().await;
    });
}

#[test]
fn client_enforces_the_deadline_without_the_server() {
    rt().block_on(async {
        // A peer that accepts and reads but never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut s, &mut sink).await;
        });
        let lab = svc::AsyncClient::new(Client::connect_tcp(addr).await.unwrap());
        let started = Instant::now();
        let e = lab
            .echo(
                &note("x"),
                CallOptions::new().timeout(Duration::from_millis(150)),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::DeadlineExceeded);
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(140) && waited < Duration::from_secs(2),
            "{waited:?}"
        );
    });
}

#[test]
fn dropping_a_stream_cancels_the_handler() {
    each_carrier(|_, running, probe| async move {
        let client = running.client().await;
        let lab = Running::lab(&client);
        let mut s = lab
            .samples(&settings(100_000, "slow:1"), CallOptions::new())
            .await
            .unwrap();
        for _ in 0..10 {
            s.message().await.unwrap().unwrap();
        }
        drop(s);
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
        // Other calls on the same connection are unaffected.
        assert_eq!(
            lab.echo(&note("ok"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "ok"
        );
        // Cancelling a unary call by dropping its future.
        let request = note("sleep:10000");
        let slow = lab.echo(&request, CallOptions::new());
        assert!(
            tokio::time::timeout(Duration::from_millis(100), slow)
                .await
                .is_err()
        );
        eventually("the unary handler was cancelled", || {
            probe.dropped.load(Ordering::SeqCst) == 2
        })
        .await;
        running.stop().await;
    });
}

#[test]
fn closing_the_connection_cancels_its_calls() {
    each_transport(|_, running, probe| async move {
        let client = running.client().await;
        let lab = Running::lab(&client);
        let call =
            tokio::spawn(async move { lab.echo(&note("sleep:10000"), CallOptions::new()).await });
        eventually("the call started", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        call.abort();
        drop(client);
        eventually("the handler was cancelled", || {
            probe.dropped.load(Ordering::SeqCst) == 1
        })
        .await;
        running.stop().await;
    });
}

#[test]
fn resume_a_broken_stream_by_cursor() {
    each_transport(|_, running, _| async move {
        let first = running.client().await;
        let lab = Running::lab(&first);
        let mut s = lab
            .samples(&settings(50, ""), CallOptions::new())
            .await
            .unwrap();
        let mut seen = Vec::new();
        for _ in 0..20 {
            seen.push(s.message().await.unwrap().unwrap().seq);
        }
        // The connection goes away; a new one resumes after cursor 20.
        drop(first);
        let second = running.client().await;
        let mut s = s.resume(&second).await.unwrap();
        while let Some(item) = s.message().await.unwrap() {
            seen.push(item.seq);
        }
        assert_eq!(seen, (1..=50).collect::<Vec<_>>());
        running.stop().await;
    });
}

#[test]
fn interceptors_run_in_order_and_can_refuse() {
    for transport in TRANSPORTS {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let order = Arc::new(std::sync::Mutex::new(Vec::new()));
            let (o1, o2) = (order.clone(), order.clone());
            let builder = lab_server(&probe)
                .interceptor(move |ctx: &Context| {
                    o1.lock().unwrap().push("auth");
                    match ctx.metadata().get("authorization") {
                        None => Err(Status::unauthenticated("no credentials")),
                        Some("Bearer reader") | Some("Bearer admin") => {
                            ctx.peer().set_identity(
                                ctx.metadata()
                                    .get("authorization")
                                    .unwrap_or("")
                                    .trim_start_matches("Bearer "),
                            );
                            Ok(())
                        }
                        Some(_) => Err(Status::unauthenticated("unknown token")),
                    }
                })
                .interceptor(move |ctx: &Context| {
                    o2.lock().unwrap().push("acl");
                    ctx.set_response_metadata("checked-by", "acl");
                    if ctx.method().name == "Configure"
                        && ctx.peer().identity().as_deref() != Some("admin")
                    {
                        return Err(Status::permission_denied("Configure needs admin"));
                    }
                    Ok(())
                });
            let running = Running::start(transport, builder).await;
            let lab = Running::lab(&running.client().await);
            let e = lab.echo(&note("x"), CallOptions::new()).await.unwrap_err();
            assert_eq!(e.code(), StatusCode::Unauthenticated);
            assert_eq!(*order.lock().unwrap(), ["auth"]);
            let reader = CallOptions::new().metadata("authorization", "Bearer reader");
            let r = lab.echo(&note("x"), reader.clone()).await.unwrap();
            assert_eq!(r.metadata().get("checked-by"), Some("acl"));
            assert_eq!(*order.lock().unwrap(), ["auth", "auth", "acl"]);
            let e = lab.configure(&settings(100, ""), reader).await.unwrap_err();
            assert_eq!(e.code(), StatusCode::PermissionDenied);
            let admin = CallOptions::new().metadata("authorization", "Bearer admin");
            lab.configure(&settings(100, ""), admin).await.unwrap();
            // Interceptors run on discovery too.
            let e = running
                .client()
                .await
                .unary::<schema::bebop::Empty, bebop_rpc::RawMessage>(
                    0,
                    &schema::bebop::Empty {},
                    CallOptions::new(),
                )
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::Unauthenticated);
            // Handlers ran only for the two calls that passed.
            assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
            running.stop().await;
        });
    }
}

#[test]
fn a_panicking_handler_is_internal_and_the_server_lives_on() {
    each_carrier(|_, running, _| async move {
        let client = running.client().await;
        let lab = Running::lab(&client);
        let e = lab
            .echo(&note("panic"), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Internal);
        assert_eq!(e.detail(), "the handler panicked");
        assert_eq!(
            lab.echo(&note("alive"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "alive"
        );
        let other = Running::lab(&running.client().await);
        assert_eq!(
            other
                .echo(&note("alive"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "alive"
        );
        running.stop().await;
    });
}

#[test]
fn unknown_and_reserved_methods_and_discovery() {
    each_carrier(|t, running, _| async move {
        let client = running.client().await;
        let e = client
            .unary::<str, String>(0xdead_beef, "x", CallOptions::new())
            .await
            .unwrap_err();
        if t.is_http() {
            // HTTP routes by name: an id nobody described has no URL (rpc_http.rs checks
            // unknown paths).
            assert_eq!(e.code(), StatusCode::InvalidArgument, "{e}");
            assert!(e.detail().contains("routes by name"), "{e}");
            client.describe(svc::METHODS);
        } else {
            assert_eq!(e.code(), StatusCode::NotFound);
            assert_eq!(e.detail(), "no method 0xdeadbeef");
        }
        // Method 1 is a batch: "x" is no `BatchRequest`.
        let e = client
            .unary::<str, String>(1, "x", CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument);
        assert!(
            e.detail().starts_with("the batch request does not decode"),
            "{e}"
        );
        // An empty batch is answered with no results.
        let empty = client
            .batch(&bebop_rpc::Batch::new(), CallOptions::new())
            .await
            .unwrap();
        assert!(empty.is_empty());
        // Futures (2 to 4) are not served.
        for id in 2..=4 {
            let e = client
                .unary::<str, String>(id, "x", CallOptions::new())
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::Unimplemented, "method {id}");
        }
        // A unary method called as a stream of requests is UNIMPLEMENTED.
        let e = client
            .client_stream::<Note, Note, _>(
                svc::ECHO.id,
                futures_util::stream::iter([note("a"), note("b")]),
                CallOptions::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unimplemented);
        // Discovery lists the Lab and its six methods.
        let raw = client
            .unary::<schema::bebop::Empty, bebop_rpc::RawMessage>(
                0,
                &schema::bebop::Empty {},
                CallOptions::new(),
            )
            .await
            .unwrap()
            .into_inner();
        let d =
            <bebop_runtime::rpc::DiscoveryResponse as bebop_runtime::Decode>::from_bytes(&raw.0)
                .unwrap();
        let services: Vec<_> = d.services.iter().collect();
        assert_eq!(services.len(), 1);
        assert_eq!(services[0].name, "Lab");
        let names: Vec<_> = services[0].methods.iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "Identify",
                "Echo",
                "Configure",
                "Samples",
                "Upload",
                "Shout"
            ]
        );
        running.stop().await;
    });
}

#[test]
fn many_concurrent_calls_multiplex_over_one_connection() {
    each_carrier(|t, running, _| async move {
        let client = running.client().await;
        let mut tasks = Vec::new();
        for i in 0..200u32 {
            let lab = Running::lab(&client);
            tasks.push(tokio::spawn(async move {
                match i % 4 {
                    0 => {
                        let t = format!("call {i}");
                        assert_eq!(
                            lab.echo(&note(&t), CallOptions::new())
                                .await
                                .unwrap()
                                .into_inner()
                                .text,
                            t
                        );
                    }
                    1 => {
                        let s = lab
                            .samples(&settings(20, ""), CallOptions::new())
                            .await
                            .unwrap();
                        let items: Vec<_> = s.map(Result::unwrap).collect().await;
                        assert_eq!(items, (1..=20).map(sample).collect::<Vec<_>>());
                    }
                    2 => {
                        let t = lab
                            .upload(
                                futures_util::stream::iter((1..=i).map(sample)),
                                CallOptions::new(),
                            )
                            .await
                            .unwrap()
                            .into_inner();
                        assert_eq!(t.count, i);
                    }
                    _ => {
                        let mut s = lab
                            .shout(
                                futures_util::stream::iter([note("x"), note(&i.to_string())]),
                                CallOptions::new(),
                            )
                            .await
                            .unwrap();
                        if !t.has_duplex() {
                            let e = s.message().await.unwrap_err();
                            assert_eq!(e.code(), StatusCode::Unimplemented, "{e}");
                            return;
                        }
                        let got: Vec<_> = s.map(|n| n.unwrap().text).collect().await;
                        assert_eq!(got, ["X".to_string(), i.to_string()]);
                    }
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        running.stop().await;
    });
}

#[test]
fn concurrent_call_limit_is_resource_exhausted() {
    for transport in TRANSPORTS {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let builder = lab_server(&probe).limits(Limits {
                max_concurrent_calls: 2,
                ..Limits::default()
            });
            let running = Running::start(transport, builder).await;
            let client = running.client().await;
            let lab = Running::lab(&client);
            let a = lab
                .samples(&settings(1000, "slow:5"), CallOptions::new())
                .await
                .unwrap();
            let b = lab
                .samples(&settings(1000, "slow:5"), CallOptions::new())
                .await
                .unwrap();
            let e = lab
                .echo(&note("third"), CallOptions::new())
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::ResourceExhausted);
            drop((a, b));
            eventually("both streams were cancelled", || {
                probe.dropped.load(Ordering::SeqCst) == 2
            })
            .await;
            // Slots free again.
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert_eq!(
                lab.echo(&note("now"), CallOptions::new())
                    .await
                    .unwrap()
                    .into_inner()
                    .text,
                "now"
            );
            running.stop().await;
        });
    }
}

#[test]
fn metadata_and_frame_limits_are_resource_exhausted() {
    for transport in TRANSPORTS {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let builder = lab_server(&probe).limits(Limits {
                max_metadata: 256,
                max_frame_payload: 1024,
                ..Limits::default()
            });
            let running = Running::start(transport, builder).await;
            let client = running.client().await;
            let lab = Running::lab(&client);
            let big = "v".repeat(300);
            let e = lab
                .echo(&note("x"), CallOptions::new().metadata("k", big))
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::ResourceExhausted);
            assert!(e.detail().contains("metadata"), "{e}");
            // A frame over the limit closes the connection (its bytes are never buffered).
            let e = lab
                .echo(&note(&"x".repeat(2000)), CallOptions::new())
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
            client.closed().await;
            // A new connection serves.
            let lab = Running::lab(&running.client().await);
            lab.echo(&note("small"), CallOptions::new()).await.unwrap();
            assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
            running.stop().await;
        });
    }
}

#[test]
fn graceful_shutdown_lets_calls_finish_and_refuses_new_ones() {
    each_transport(|_, running, probe| async move {
        let client = running.client().await;
        let lab = Running::lab(&client);
        let in_flight = tokio::spawn({
            let lab = lab.clone();
            async move { lab.echo(&note("sleep:300"), CallOptions::new()).await }
        });
        eventually("the call started", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        let server = running.server.clone();
        let shutdown = tokio::spawn(async move { server.shutdown(Duration::from_secs(5)).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        // New calls on the open connection are refused while the old one finishes.
        let e = lab
            .echo(&note("late"), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unavailable, "{e}");
        assert_eq!(
            in_flight.await.unwrap().unwrap().into_inner().text,
            "sleep:300"
        );
        shutdown.await.unwrap();
        assert_eq!(probe.dropped.load(Ordering::SeqCst), 0);
        // No new connections are served.
        match &running.endpoint {
            Endpoint::Tcp(addr) => assert!(tokio::net::TcpStream::connect(addr).await.is_err()),
            Endpoint::Unix(path) => {
                if let Ok(c) = Client::connect_unix(path).await {
                    assert!(
                        c.unary::<str, String>(1, "x", CallOptions::new())
                            .await
                            .is_err()
                    );
                }
            }
            _ => unreachable!("a binary transport"),
        }
        running.stop().await;
    });
}

#[test]
fn shutdown_cancels_calls_that_outlive_the_grace_period() {
    each_transport(|_, running, probe| async move {
        let lab = Running::lab(&running.client().await);
        let call =
            tokio::spawn(async move { lab.echo(&note("sleep:30000"), CallOptions::new()).await });
        eventually("the call started", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        let started = Instant::now();
        running.server.shutdown(Duration::from_millis(200)).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(probe.dropped.load(Ordering::SeqCst), 1);
        assert!(call.await.unwrap().is_err());
        running.stop().await;
    });
}

#[test]
fn serves_any_byte_stream() {
    rt().block_on(async {
        // An in-memory pipe standing in for a child process's stdin/stdout.
        let probe = Arc::new(Probe::default());
        let server = lab_server(&probe).build();
        let (a, b) = tokio::io::duplex(4096);
        let s = server.clone();
        let serving = tokio::spawn(async move {
            s.serve_connection(
                a,
                bebop_rpc::Peer::new(Some(bebop_rpc::Address::Other("pipe".into())), None),
            )
            .await
        });
        let lab = svc::AsyncClient::new(Client::new(b));
        assert_eq!(
            lab.echo(&note("piped"), CallOptions::new())
                .await
                .unwrap()
                .into_inner()
                .text,
            "piped"
        );
        let s = lab
            .samples(&settings(500, ""), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(s.count().await, 500);
        drop(lab);
        serving.await.unwrap();
    });
}

#[test]
fn unix_peers_carry_credentials_for_an_identity_hook() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let builder = lab_server(&probe).identity(|peer| match peer.remote() {
            Some(bebop_rpc::Address::Unix {
                credentials: Some(c),
                ..
            }) => Some(format!("uid:{}", c.uid)),
            _ => None,
        });
        let running = Running::start(Transport::Unix, builder).await;
        let lab = Running::lab(&running.client().await);
        let id = lab
            .identify(&schema::bebop::Empty {}, CallOptions::new())
            .await
            .unwrap();
        let uid = std::fs::metadata("/proc/self")
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
            .unwrap();
        assert_eq!(id.into_inner().model, format!("uid:{uid}"));
        running.stop().await;
    });
}

#[test]
fn forwarding_never_extends_the_deadline() {
    let ctx = Context::for_test(
        CallOptions::new()
            .metadata("authorization", "t")
            .timeout(Duration::from_secs(2)),
    );
    let down = ctx.forwarding().timeout(Duration::from_secs(60));
    assert_eq!(down.deadline(), ctx.deadline());
    let down = ctx
        .deriving([("caller", "svc")])
        .timeout(Duration::from_millis(10));
    assert!(down.deadline() < ctx.deadline());
    assert_eq!(down.get_metadata().get("authorization"), Some("t"));
    assert_eq!(down.get_metadata().get("caller"), Some("svc"));
}

/// The blocking, heap-free client of `bebop-core` (what firmware and simple hosts use) calls
/// the tokio server on a sequential connection: one call at a time, each opened by a bare
/// call header, stream ids 1, 3, 5, ...
#[test]
fn the_blocking_core_client_calls_the_tokio_server() {
    for transport in TRANSPORTS {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let running = Running::start(transport, lab_server(&probe)).await;
            let endpoint = running.endpoint.clone();
            tokio::task::spawn_blocking(move || match endpoint {
                Endpoint::Tcp(addr) => {
                    let s = std::net::TcpStream::connect(addr).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    blocking_session(svc::Client::new(
                        bebop_runtime::std_channel(s),
                        vec![0; 4096],
                        vec![0; 4096],
                    ))
                }
                Endpoint::Unix(path) => {
                    let s = std::os::unix::net::UnixStream::connect(path).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    blocking_session(svc::Client::new(
                        bebop_runtime::std_channel(s),
                        vec![0; 4096],
                        vec![0; 4096],
                    ))
                }
                _ => unreachable!("a binary transport"),
            })
            .await
            .unwrap();
            assert_eq!(probe.calls.load(Ordering::SeqCst), 6);
            running.stop().await;
        });
    }
}

fn blocking_session<T: std::io::Read + std::io::Write>(
    mut c: svc::Client<bebop_runtime::rpc::StreamChannel<bebop_runtime::StdIo<T>, 4096>, Vec<u8>>,
) {
    use schema::lab::{Note as NoteView, Settings as SettingsView};
    let none = bebop_runtime::rpc::CallOptions::new();
    let n = c.echo(&NoteView { text: "blocking" }, &none).unwrap();
    assert_eq!(n.text, "blocking");
    let all = SettingsView {
        interval_ms: Some(5),
        label: None,
    };
    let mut stream = c.samples(&all, &none).unwrap();
    let mut got = Vec::new();
    while let Some(item) = stream.next::<Sample>() {
        got.push(item.unwrap().value.seq);
    }
    assert_eq!(got, [1, 2, 3, 4, 5]);
    let mut upload = c.upload(&none).unwrap();
    for seq in 1..=4 {
        upload.send(&sample(seq)).unwrap();
    }
    let total: Total = upload.finish().unwrap();
    assert_eq!(total.count, 4);
    let mut shout = c.shout(&none).unwrap();
    shout.send(&NoteView { text: "duplex" }).unwrap();
    let back: NoteView = shout.next().unwrap().unwrap();
    assert_eq!(back.text, "DUPLEX");
    shout.close().unwrap();
    assert!(shout.next::<NoteView>().is_none());
    match c.echo(&NoteView { text: "fail" }, &none) {
        Err(bebop_runtime::rpc::ClientError::Status(s)) => {
            assert_eq!(s.code(), StatusCode::InvalidArgument)
        }
        other => panic!("{other:?}"),
    }
    let n = c.echo(&NoteView { text: "still here" }, &none).unwrap();
    assert_eq!(n.text, "still here");
}

/// A client stream answered early ends its requests afterwards, so the server forgets the
/// stream: early answers do not eat into the concurrent-call limit.
#[test]
fn early_answers_do_not_leak_call_slots() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let builder = lab_server(&probe).limits(Limits {
            max_concurrent_calls: 2,
            ..Limits::default()
        });
        let running = Running::start(Transport::Tcp, builder).await;
        let lab = Running::lab(&running.client().await);
        for _ in 0..20 {
            let requests = futures_util::stream::iter([sample(1), sample(0)])
                .chain(futures_util::stream::iter((0..200).map(|_| sample(5))));
            let total = lab.upload(requests, CallOptions::new()).await.unwrap();
            assert_eq!(total.into_inner().count, 1);
        }
        running.stop().await;
    });
}

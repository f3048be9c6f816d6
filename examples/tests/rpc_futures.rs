//! Futures (methods 2 to 4, `docs/rpc.md`, "Futures") end to end on every carrier of calls,
//! on a `MemoryStore`, and across a restart on SQLite: dispatch returns a handle at once,
//! resolve pushes and replays results, cancel reaches the handler, owners are isolated,
//! idempotency keys dedup, the dispatch deadline bounds the inner call, interceptors run on
//! 2 to 4 and on the inner call, and hostile requests are refused cleanly.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bebop_rpc::futures::{FutureStore, MemoryStore, StoreConfig};
use bebop_rpc::{
    Batch, BatchResults, CallOptions, Client, Context, FuturesConfig, Limits, RawMessage,
    ServerBuilder, Status, StatusCode, Streaming,
};
use bebop_runtime::rpc::{
    Empty, FutureCancelRequest, FutureDispatchRequest, FutureHandle, FutureOutcome,
    FutureResolveRequest, FutureResult,
};
use bebop_runtime::{Array, Decode, Map, Uuid};
use common::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The method ids the interceptor saw, in order.
type Seen = Arc<Mutex<Vec<u32>>>;

/// The Lab with futures on `store`, and an interceptor that logs every call's method id,
/// makes the `authorization` metadata value the peer's identity, and refuses calls that
/// carry `refuse`.
fn builder(probe: &Arc<Probe>, store: Arc<dyn FutureStore>, seen: &Seen) -> ServerBuilder {
    let seen = seen.clone();
    lab_server(probe)
        .interceptor(move |ctx: &Context| {
            seen.lock().unwrap().push(ctx.method().id);
            if let Some(who) = ctx.metadata().get("authorization") {
                ctx.peer().set_identity(who);
            }
            if ctx.metadata().get("refuse").is_some() {
                return Err(Status::permission_denied("refused by the interceptor"));
            }
            Ok(())
        })
        .futures_shared(store, FuturesConfig::default())
}

struct Fixture {
    transport: Transport,
    running: Running,
    probe: Arc<Probe>,
    seen: Seen,
    alice: Caller,
    bob: Caller,
}

impl Fixture {
    async fn start(transport: Transport) -> Fixture {
        Fixture::start_with(transport, Limits::default()).await
    }

    async fn start_with(transport: Transport, limits: Limits) -> Fixture {
        let probe = Arc::new(Probe::default());
        let seen = Seen::default();
        let store: Arc<dyn FutureStore> = Arc::new(MemoryStore::new());
        let running = Running::start(transport, builder(&probe, store, &seen).limits(limits)).await;
        let alice = Caller::new(running.client().await, "alice");
        let bob = Caller::new(running.client().await, "bob");
        Fixture {
            transport,
            running,
            probe,
            seen,
            alice,
            bob,
        }
    }
}

/// A client calling as one owner.
struct Caller {
    client: Client,
    who: &'static str,
}

fn note(text: &str) -> Vec<u8> {
    bebop_runtime::encode_to_vec(&Note { text: text.into() }).unwrap()
}

fn request(method_id: u32, payload: &[u8]) -> FutureDispatchRequest<'_> {
    FutureDispatchRequest {
        method_id: Some(method_id),
        payload: Some(payload),
        ..Default::default()
    }
}

impl Caller {
    fn new(client: Client, who: &'static str) -> Caller {
        Caller { client, who }
    }

    fn options(&self) -> CallOptions {
        CallOptions::new().metadata("authorization", self.who)
    }

    async fn dispatch(&self, request: &FutureDispatchRequest<'_>) -> Result<Uuid, Status> {
        self.dispatch_with(request, self.options()).await
    }

    async fn dispatch_with(
        &self,
        request: &FutureDispatchRequest<'_>,
        options: CallOptions,
    ) -> Result<Uuid, Status> {
        let handle = self
            .client
            .unary::<_, FutureHandle>(2, request, options)
            .await?;
        Ok(handle.into_inner().id)
    }

    /// Dispatches Echo of `text`.
    async fn echo(&self, text: &str) -> Uuid {
        let payload = note(text);
        self.dispatch(&request(svc::ECHO.id, &payload))
            .await
            .unwrap_or_else(|e| panic!("dispatch of echo {text:?}: {e}"))
    }

    async fn resolve(&self, ids: &[Uuid]) -> Result<Streaming<RawMessage>, Status> {
        let request = FutureResolveRequest {
            ids: (!ids.is_empty()).then(|| Array::from_slice(ids)),
        };
        self.client
            .server_stream::<_, RawMessage>(3, &request, self.options())
            .await
    }

    /// Every result of a resolve stream of `ids`, to its end.
    async fn results(&self, ids: &[Uuid]) -> Vec<Owned> {
        let mut stream = self.resolve(ids).await.unwrap();
        let mut out = Vec::new();
        while let Some(raw) = stream.message().await.unwrap() {
            out.push(Owned::of(&raw.0));
        }
        out
    }

    /// The result of one future, waiting for it.
    async fn result(&self, id: Uuid) -> Owned {
        let mut all = self.results(&[id]).await;
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    async fn cancel(&self, id: Uuid) -> Result<(), Status> {
        self.client
            .unary::<_, Empty>(4, &FutureCancelRequest { id }, self.options())
            .await
            .map(|_| ())
    }
}

/// Metadata as pairs.
type Pairs = Vec<(String, String)>;

/// A `FutureResult`, owned.
#[derive(Debug, Clone, PartialEq)]
struct Owned {
    id: Uuid,
    outcome: Result<(Vec<u8>, Pairs), (StatusCode, String, Pairs)>,
}

impl Owned {
    fn of(bytes: &[u8]) -> Owned {
        let r = FutureResult::from_bytes(bytes).unwrap();
        let pairs = |m: Map<'_, &str, &str>| {
            m.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>()
        };
        let outcome = match r.outcome {
            FutureOutcome::Success(s) => Ok((s.payload.to_vec(), pairs(s.metadata))),
            FutureOutcome::Error(e) => Err((
                e.code.unwrap_or(StatusCode::Unknown),
                e.detail.unwrap_or_default().to_string(),
                e.metadata.map(pairs).unwrap_or_default(),
            )),
        };
        Owned { id: r.id, outcome }
    }

    fn text(&self) -> String {
        match &self.outcome {
            Ok((payload, _)) => Note::from_bytes(payload).unwrap().text,
            Err(e) => panic!("future {} failed: {e:?}", self.id),
        }
    }

    fn code(&self) -> StatusCode {
        match &self.outcome {
            Ok(_) => StatusCode::Ok,
            Err((code, ..)) => *code,
        }
    }
}

fn each_carrier<F, Fut>(test: F)
where
    F: Fn(Fixture) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for transport in CALL_TRANSPORTS {
        rt().block_on(async {
            let fixture = Fixture::start(transport).await;
            tokio::time::timeout(Duration::from_secs(60), test(fixture))
                .await
                .unwrap_or_else(|_| panic!("{transport:?}: the test timed out"));
        });
    }
}

#[test]
fn dispatch_returns_at_once_and_resolve_pushes_and_replays() {
    each_carrier(|f| async move {
        let t = f.transport;
        let started = Instant::now();
        let slow = f.alice.echo("sleep:300").await;
        assert!(
            started.elapsed() < Duration::from_millis(250),
            "{t:?}: dispatch waited for the work"
        );
        assert_eq!(slow.as_bytes()[6] >> 4, 4, "{t:?}: a version 4 id");
        let meta = f.alice.echo("meta").await;
        let fail = f.alice.echo("fail").await;
        // Pushed as it completes.
        let r = f.alice.result(slow).await;
        assert_eq!(r.text(), "sleep:300", "{t:?}");
        assert!(started.elapsed() >= Duration::from_millis(300), "{t:?}");
        // Replayed on a new stream, in one stream with the others, which then ends.
        let mut all = f.alice.results(&[fail, slow, meta, slow]).await;
        all.sort_by_key(|r| r.id);
        let mut want = vec![slow, meta, fail];
        want.sort();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), want, "{t:?}");
        let by_id = |id| all.iter().find(|r| r.id == id).unwrap().clone();
        match by_id(meta).outcome {
            Ok((payload, md)) => {
                assert_eq!(Note::from_bytes(&payload).unwrap().text, "meta");
                assert!(md.contains(&("rows".into(), "3".into())), "{t:?}: {md:?}");
            }
            Err(e) => panic!("{t:?}: {e:?}"),
        }
        match by_id(fail).outcome {
            Err((code, detail, md)) => {
                assert_eq!(code, StatusCode::InvalidArgument, "{t:?}");
                assert_eq!(detail, "fail was asked for");
                assert!(md.contains(&("hint".into(), "try again".into())), "{md:?}");
            }
            Ok(_) => panic!("{t:?}: fail succeeded"),
        }
        // Without ids: every completed future of the caller, then each as it completes.
        let mut stream = f.alice.resolve(&[]).await.unwrap();
        let mut replayed = Vec::new();
        for _ in 0..3 {
            replayed.push(Owned::of(&stream.message().await.unwrap().unwrap().0).id);
        }
        replayed.sort();
        assert_eq!(replayed, want, "{t:?}");
        let late = f.alice.echo("late").await;
        let pushed = Owned::of(&stream.message().await.unwrap().unwrap().0);
        assert_eq!((pushed.id, pushed.text()), (late, "late".into()), "{t:?}");
        drop(stream);
        f.running.stop().await;
    });
}

#[test]
fn the_work_outlives_the_dispatching_connection() {
    each_carrier(|f| async move {
        let t = f.transport;
        let id = f.alice.echo("sleep:300").await;
        // The connection that dispatched goes away before the work is done.
        let Fixture {
            running,
            alice,
            probe,
            ..
        } = f;
        drop(alice);
        let alice = Caller::new(running.client().await, "alice");
        assert_eq!(alice.result(id).await.text(), "sleep:300", "{t:?}");
        assert_eq!(
            probe.dropped.load(Ordering::SeqCst),
            0,
            "{t:?}: the work was stopped"
        );
        drop(alice);
        running.stop().await;
    });
}

#[test]
fn owners_are_isolated() {
    each_carrier(|f| async move {
        let t = f.transport;
        let key = Uuid::from_u128(0xa11ce);
        let payload = note("secret");
        let mut keyed = request(svc::ECHO.id, &payload);
        keyed.idempotency_key = Some(key);
        let id = f.alice.dispatch(&keyed).await.unwrap();
        assert_eq!(f.alice.result(id).await.text(), "secret", "{t:?}");
        // Bob never sees it: resolving it ends without a result.
        assert!(f.bob.results(&[id]).await.is_empty(), "{t:?}");
        // Nor with a subscription to all his futures.
        let mut all = f.bob.resolve(&[]).await.unwrap();
        let own = f.bob.echo("bob's").await;
        let first = Owned::of(&all.message().await.unwrap().unwrap().0);
        assert_eq!(first.id, own, "{t:?}");
        drop(all);
        // His cancel and his use of Alice's key are refused.
        let e = f.bob.cancel(id).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::PermissionDenied, "{t:?}: {e}");
        let e = f.bob.dispatch(&keyed).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::PermissionDenied, "{t:?}: {e}");
        // Alice's result is untouched.
        assert_eq!(f.alice.result(id).await.text(), "secret", "{t:?}");
        f.running.stop().await;
    });
}

#[test]
fn idempotency_keys_dedup_dispatches() {
    each_carrier(|f| async move {
        let t = f.transport;
        let key = Uuid::from_u128(42);
        let payload = note("sleep:100");
        let mut keyed = request(svc::ECHO.id, &payload);
        keyed.idempotency_key = Some(key);
        let dispatches = (0..50).map(|_| f.alice.dispatch(&keyed));
        let ids: Vec<Uuid> = futures_util::future::join_all(dispatches)
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert!(ids.iter().all(|&i| i == ids[0]), "{t:?}: {ids:?}");
        assert_eq!(f.alice.result(ids[0]).await.text(), "sleep:100");
        // Completed: still the same future, nothing runs again.
        assert_eq!(f.alice.dispatch(&keyed).await.unwrap(), ids[0]);
        assert_eq!(
            f.probe.calls.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "{t:?}"
        );
        // Another key, another future.
        keyed.idempotency_key = Some(Uuid::from_u128(43));
        assert_ne!(f.alice.dispatch(&keyed).await.unwrap(), ids[0]);
        f.running.stop().await;
    });
}

#[test]
fn the_dispatch_deadline_applies_to_the_inner_call() {
    each_carrier(|f| async move {
        let t = f.transport;
        let payload = note("sleep:5000");
        let mut short = request(svc::ECHO.id, &payload);
        short.deadline =
            bebop_runtime::system_time_to_timestamp(SystemTime::now() + Duration::from_millis(150));
        let started = Instant::now();
        let id = f.alice.dispatch(&short).await.unwrap();
        let r = f.alice.result(id).await;
        assert_eq!(r.code(), StatusCode::DeadlineExceeded, "{t:?}: {r:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{t:?}");
        // Passed already: the dispatch is fine, the inner call never starts.
        short.deadline =
            bebop_runtime::system_time_to_timestamp(SystemTime::now() - Duration::from_secs(1));
        let id = f.alice.dispatch(&short).await.unwrap();
        assert_eq!(
            f.alice.result(id).await.code(),
            StatusCode::DeadlineExceeded
        );
        f.running.stop().await;
    });
}

#[test]
fn cancel_reaches_the_handler() {
    each_carrier(|f| async move {
        use std::sync::atomic::Ordering;
        let t = f.transport;
        let id = f.alice.echo("sleep:5000").await;
        let probe = f.probe.clone();
        eventually("the handler runs", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        let started = Instant::now();
        f.alice.cancel(id).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{t:?}: cancel waited"
        );
        let r = f.alice.result(id).await;
        assert_eq!(r.code(), StatusCode::Cancelled, "{t:?}: {r:?}");
        // The handler's future was dropped (it ignores cancellation once it saw it).
        eventually("the handler is stopped", || {
            probe.dropped.load(Ordering::SeqCst) == 1
        })
        .await;
        // Cancelling it again (completed) is fine; an unknown future is NOT_FOUND.
        f.alice.cancel(id).await.unwrap();
        let e = f.alice.cancel(Uuid::from_u128(7)).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::NotFound, "{t:?}: {e}");
        // A cancelled future's key is released.
        let payload = note("x");
        let mut keyed = request(svc::ECHO.id, &payload);
        keyed.idempotency_key = Some(Uuid::from_u128(9));
        let first = f.alice.dispatch(&keyed).await.unwrap();
        f.alice.result(first).await;
        f.running.stop().await;
    });
}

#[test]
fn interceptors_run_on_futures_and_the_inner_call_sees_the_caller() {
    each_carrier(|f| async move {
        let t = f.transport;
        let payload = bebop_runtime::encode_to_vec(&Empty {}).unwrap();
        let id = f
            .alice
            .dispatch(&request(svc::IDENTIFY.id, &payload))
            .await
            .unwrap();
        let r = f.alice.result(id).await;
        match &r.outcome {
            Ok((payload, _)) => {
                assert_eq!(
                    Identity::from_bytes(payload).unwrap().model,
                    "alice",
                    "{t:?}"
                )
            }
            Err(e) => panic!("{t:?}: {e:?}"),
        }
        f.alice.cancel(id).await.unwrap();
        // (The inner call and the resolve call may pass the interceptor in either order.)
        let mut seen = f.seen.lock().unwrap().clone();
        assert_eq!(
            (seen.first(), seen.last()),
            (Some(&2), Some(&4)),
            "{t:?}: {seen:?}"
        );
        seen.sort_unstable();
        let mut want = vec![2, 3, 4, svc::IDENTIFY.id];
        want.sort_unstable();
        assert_eq!(seen, want, "{t:?}");
        // Refused on the dispatch itself, or on the inner call (its own metadata).
        let e = f
            .alice
            .dispatch_with(
                &request(svc::IDENTIFY.id, &payload),
                f.alice.options().metadata("refuse", "1"),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::PermissionDenied, "{t:?}");
        let md = [("refuse", "1")];
        let mut inner = request(svc::IDENTIFY.id, &payload);
        inner.metadata = Some(Map::from_slice(&md));
        let id = f.alice.dispatch(&inner).await.unwrap();
        assert_eq!(
            f.alice.result(id).await.code(),
            StatusCode::PermissionDenied,
            "{t:?}"
        );
        f.running.stop().await;
    });
}

#[test]
fn what_cannot_be_dispatched() {
    each_carrier(|f| async move {
        let t = f.transport;
        let payload = note("x");
        for (method, code) in [
            (svc::SAMPLES.id, StatusCode::InvalidArgument),
            (svc::UPLOAD.id, StatusCode::InvalidArgument),
            (svc::SHOUT.id, StatusCode::InvalidArgument),
            (2, StatusCode::InvalidArgument),
            (3, StatusCode::InvalidArgument),
            (4, StatusCode::InvalidArgument),
            (0xdead_beef, StatusCode::NotFound),
        ] {
            let e = f
                .alice
                .dispatch(&request(method, &payload))
                .await
                .unwrap_err();
            assert_eq!(e.code(), code, "{t:?}: method {method:#x}: {e}");
        }
        let e = f
            .alice
            .dispatch(&FutureDispatchRequest::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument, "{t:?}: {e}");
        let e = f
            .alice
            .client
            .unary::<_, FutureHandle>(2, &Map::from_slice(&[("x", "y")]), f.alice.options())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument, "{t:?}: {e}");
        f.running.stop().await;
    });
}

#[test]
fn a_batch_dispatched_as_a_future_resolves_with_its_response() {
    each_carrier(|f| async move {
        let t = f.transport;
        let mut batch = Batch::new();
        let a = batch.call(svc::ECHO, &Note { text: "one".into() }).unwrap();
        let b = batch.call_from(svc::ECHO, a);
        let bytes = batch.to_bytes().unwrap();
        let id = f.alice.dispatch(&request(1, &bytes)).await.unwrap();
        let r = f.alice.result(id).await;
        let Ok((payload, _)) = &r.outcome else {
            panic!("{t:?}: {r:?}")
        };
        let results = BatchResults::from_bytes(payload).unwrap();
        assert_eq!(results.get::<Note>(a).unwrap().text, "one", "{t:?}");
        assert_eq!(results.get::<Note>(b).unwrap().text, "one", "{t:?}");
        f.running.stop().await;
    });
}

#[test]
fn hostile_ids_are_refused_or_skipped() {
    rt().block_on(async {
        for transport in [Transport::Tcp, Transport::Http1] {
            let f = Fixture::start(transport).await;
            // An array of one id whose bytes stop short.
            let short: &[u8] = &[1, 0, 0, 0, 1, 2, 3];
            let e = f
                .alice
                .client
                .server_stream::<_, RawMessage>(
                    3,
                    &bebop_runtime::rpc::Encoded(short),
                    f.alice.options(),
                )
                .await;
            let e = match e {
                Err(e) => e,
                Ok(mut s) => s.message().await.unwrap_err(),
            };
            assert_eq!(e.code(), StatusCode::InvalidArgument, "{transport:?}: {e}");
            let e = f
                .alice
                .client
                .unary::<_, Empty>(4, &bebop_runtime::rpc::Encoded(&[0; 15]), f.alice.options())
                .await
                .unwrap_err();
            assert_eq!(e.code(), StatusCode::InvalidArgument, "{transport:?}: {e}");
            // Unknown ids: nothing to wait for.
            let unknown: Vec<Uuid> = (1..=100).map(Uuid::from_u128).collect();
            assert!(f.alice.results(&unknown).await.is_empty(), "{transport:?}");
            f.running.stop().await;
        }
    });
}

#[test]
fn a_million_ids_resolve_in_bounded_time() {
    rt().block_on(async {
        let limits = Limits {
            max_frame_payload: 32 << 20,
            ..Limits::default()
        };
        let f = Fixture::start_with(Transport::InProcess, limits).await;
        let done = f.alice.echo("done").await;
        let pending = f.alice.echo("sleep:300").await;
        let mut ids: Vec<Uuid> = (1..=1_000_000u128).map(Uuid::from_u128).collect();
        ids[500_000] = done;
        ids[999_999] = pending;
        let started = Instant::now();
        let mut results = f.alice.results(&ids).await;
        results.sort_by_key(|r| r.id);
        let mut want = vec![done, pending];
        want.sort();
        assert_eq!(results.iter().map(|r| r.id).collect::<Vec<_>>(), want);
        assert!(started.elapsed() < Duration::from_secs(20));
        // At the default limits, such a request does not even arrive.
        let small = Fixture::start(Transport::Tcp).await;
        let e = match small.alice.resolve(&ids).await {
            Err(e) => e,
            Ok(mut s) => s.message().await.unwrap_err(),
        };
        assert!(
            matches!(
                e.code(),
                StatusCode::ResourceExhausted | StatusCode::Unavailable
            ),
            "{e}"
        );
        small.running.stop().await;
        f.running.stop().await;
    });
}

#[test]
fn servers_without_futures_answer_unimplemented() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let running = Running::start(Transport::InProcess, lab_server(&probe)).await;
        let client = running.client().await;
        let payload = note("x");
        let e = client
            .unary::<_, FutureHandle>(2, &request(svc::ECHO.id, &payload), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unimplemented);
        running.stop().await;
    });
}

#[test]
fn results_survive_a_restart_on_sqlite() {
    rt().block_on(async {
        let dir = TempDir::new();
        let path = dir.0.join("futures.db");
        let open = || async {
            let store =
                bebop_rpc_sqlite::SqliteStore::open_with_config(&path, StoreConfig::new("node-1"))
                    .await
                    .unwrap();
            Arc::new(store) as Arc<dyn FutureStore>
        };
        let probe = Arc::new(Probe::default());
        let seen = Seen::default();
        let running = Running::start(Transport::Tcp, builder(&probe, open().await, &seen)).await;
        let alice = Caller::new(running.client().await, "alice");
        let done = alice.echo("kept").await;
        assert_eq!(alice.result(done).await.text(), "kept");
        let cut = alice.echo("sleep:10000").await;
        eventually("the handler runs", || {
            probe.calls.load(std::sync::atomic::Ordering::SeqCst) == 2
        })
        .await;
        drop(alice);
        running.server.shutdown(Duration::from_millis(100)).await;

        let running = Running::start(Transport::Tcp, builder(&probe, open().await, &seen)).await;
        let alice = Caller::new(running.client().await, "alice");
        let mut results = alice.results(&[done, cut]).await;
        results.sort_by_key(|r| r.id != done);
        assert_eq!(results.len(), 2, "{results:?}");
        assert_eq!(results[0].text(), "kept");
        assert_eq!(results[1].code(), StatusCode::Unavailable, "{results:?}");
        running.stop().await;
    });
}

#[test]
fn discard_result_delivers_to_open_streams_then_discards() {
    each_carrier(|f| async move {
        let t = f.transport;
        let payload = note("sleep:200");
        let mut fire = request(svc::ECHO.id, &payload);
        fire.discard_result = Some(true);
        fire.idempotency_key = Some(Uuid::from_u128(5));
        let mut all = f.alice.resolve(&[]).await.unwrap();
        let id = f.alice.dispatch(&fire).await.unwrap();
        let mut one = f.alice.resolve(&[id]).await.unwrap();
        for (i, stream) in [&mut all, &mut one].into_iter().enumerate() {
            let m = stream.message().await.unwrap();
            let r = Owned::of(&m.unwrap_or_else(|| panic!("{t:?}: stream {i} ended")).0);
            assert_eq!((r.id, r.text()), (id, "sleep:200".into()), "{t:?}");
        }
        assert!(one.message().await.unwrap().is_none(), "{t:?}");
        drop(all);
        // Nothing left to replay once the runner discarded it (right after it handed the
        // result to the streams); the key still dedups.
        let mut tries = 0;
        while !f.alice.results(&[id]).await.is_empty() {
            tries += 1;
            assert!(tries < 100, "{t:?}: the result was never discarded");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(f.alice.dispatch(&fire).await.unwrap(), id, "{t:?}");
        f.running.stop().await;
    });
}

#[test]
fn the_pending_limit_is_resource_exhausted() {
    rt().block_on(async {
        let probe = Arc::new(Probe::default());
        let seen = Seen::default();
        let store = MemoryStore::with_config(StoreConfig {
            max_pending: 1,
            ..StoreConfig::default()
        });
        let running = Running::start(
            Transport::InProcess,
            builder(&probe, Arc::new(store), &seen),
        )
        .await;
        let alice = Caller::new(running.client().await, "alice");
        let first = alice.echo("sleep:200").await;
        let payload = note("x");
        let e = alice
            .dispatch(&request(svc::ECHO.id, &payload))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::ResourceExhausted, "{e}");
        alice.result(first).await;
        alice.echo("now there is room").await;
        // No identity and no address: no owner.
        let anonymous = Caller::new(running.client().await, "");
        let e = anonymous
            .client
            .unary::<_, FutureHandle>(2, &request(svc::ECHO.id, &payload), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unauthenticated, "{e}");
        running.stop().await;
    });
}

//! The typed client API of futures (`docs/rpc.md`, "Futures from the client side") end to
//! end on every carrier of calls: `Client::dispatch`, `dispatch_batch`, `resolve`,
//! `resolve_all`, `resolve_one`, `cancel`, `Dispatched::take`, and a generated client's
//! `dispatch_<method>`.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bebop_rpc::futures::{FutureStore, MemoryStore};
use bebop_rpc::{
    Batch, BatchResults, CallOptions, Client, Context, DispatchOptions, Dispatched, FuturesConfig,
    Resolved, ServerBuilder, StatusCode,
};
use bebop_runtime::Uuid;
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

/// The Lab with futures on a `MemoryStore`; the `authorization` metadata value is the
/// caller's identity.
fn builder(probe: &Arc<Probe>, seen: &Seen) -> ServerBuilder {
    let seen = seen.clone();
    let store: Arc<dyn FutureStore> = Arc::new(MemoryStore::new());
    lab_server(probe)
        .interceptor(move |ctx: &Context| {
            seen.lock().unwrap().push(ctx.method().id);
            if let Some(who) = ctx.metadata().get("authorization") {
                ctx.peer().set_identity(who);
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
    client: Client,
}

/// The call options of `who`.
fn call(who: &str) -> CallOptions {
    CallOptions::new().metadata("authorization", who)
}

/// Dispatch options calling as `who`.
fn as_(who: &str) -> DispatchOptions {
    DispatchOptions::new().call_options(call(who))
}

fn note(text: &str) -> Note {
    Note { text: text.into() }
}

impl Fixture {
    async fn echo(&self, who: &str, text: &str) -> Dispatched<Note> {
        self.client
            .dispatch(svc::ECHO.id, &note(text), as_(who))
            .await
            .unwrap_or_else(|e| panic!("{:?}: dispatch of echo {text:?}: {e}", self.transport))
    }

    /// Every result of a resolve of `ids`, to its end.
    async fn resolve(&self, who: &str, ids: &[Uuid]) -> Vec<Resolved> {
        let mut results = self.client.resolve(ids, call(who)).await.unwrap();
        let mut out = Vec::new();
        while let Some(r) = results.next().await.unwrap() {
            out.push(r);
        }
        out
    }
}

fn each_carrier<F, Fut>(test: F)
where
    F: Fn(Fixture) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for transport in CALL_TRANSPORTS {
        rt().block_on(async {
            let probe = Arc::new(Probe::default());
            let seen = Seen::default();
            let running = Running::start(transport, builder(&probe, &seen)).await;
            let client = running.client().await;
            let fixture = Fixture {
                transport,
                running,
                probe,
                seen,
                client,
            };
            tokio::time::timeout(Duration::from_secs(60), test(fixture))
                .await
                .unwrap_or_else(|_| panic!("{transport:?}: the test timed out"));
        });
    }
}

#[test]
fn dispatch_and_resolve_one_round_trip_with_metadata() {
    each_carrier(|f| async move {
        let t = f.transport;
        let handle = f.echo("alice", "meta").await;
        let response = f.client.resolve_one(handle, call("alice")).await.unwrap();
        assert_eq!(response.get_ref().text, "meta", "{t:?}");
        assert_eq!(response.metadata().get("rows"), Some("3"), "{t:?}");
        assert_eq!(response.metadata().get("cache"), Some("miss"), "{t:?}");
        // The inner call gets the dispatch options' metadata, not the dispatch call's.
        let handle: Dispatched<Note> = f
            .client
            .dispatch(
                svc::ECHO.id,
                &note("md:tenant"),
                as_("alice").metadata("tenant", "acme"),
            )
            .await
            .unwrap();
        let r = f.client.resolve_one(handle, call("alice")).await.unwrap();
        assert_eq!(r.into_inner().text, "acme", "{t:?}");
        let handle: Dispatched<Note> = f
            .client
            .dispatch(svc::ECHO.id, &note("md:authorization"), as_("alice"))
            .await
            .unwrap();
        let r = f.client.resolve_one(handle, call("alice")).await.unwrap();
        assert_eq!(r.into_inner().text, "<none>", "{t:?}");
        // A stored and reloaded handle resolves the same.
        let reloaded = Dispatched::<Note>::from_id(handle.id());
        let r = f.client.resolve_one(reloaded, call("alice")).await.unwrap();
        assert_eq!(r.into_inner().text, "<none>", "{t:?}");
        // Another caller's future is not found.
        let e = f.client.resolve_one(handle, call("bob")).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::NotFound, "{t:?}: {e}");
        f.running.stop().await;
    });
}

#[test]
fn resolve_of_several_handles_delivers_each_outcome() {
    each_carrier(|f| async move {
        let t = f.transport;
        let a = f.echo("alice", "a").await;
        let failing = f.echo("alice", "fail").await;
        let b = f.echo("alice", "sleep:50").await;
        let results = f.resolve("alice", &[a.id(), failing.id(), b.id()]).await;
        assert_eq!(results.len(), 3, "{t:?}: {results:?}");
        let mut by_id: HashMap<Uuid, Resolved> = results.into_iter().map(|r| (r.id, r)).collect();
        let take = |h: Dispatched<Note>, by_id: &mut HashMap<Uuid, Resolved>| {
            h.take(by_id.remove(&h.id()).expect("delivered"))
        };
        assert_eq!(take(a, &mut by_id).unwrap().into_inner().text, "a");
        assert_eq!(take(b, &mut by_id).unwrap().into_inner().text, "sleep:50");
        let e = take(failing, &mut by_id).unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument, "{t:?}: {e}");
        assert_eq!(e.detail(), "fail was asked for", "{t:?}");
        assert_eq!(e.metadata().get("hint"), Some("try again"), "{t:?}");
        f.running.stop().await;
    });
}

#[test]
fn resolve_of_no_ids_ends_at_once_without_a_call() {
    each_carrier(|f| async move {
        let t = f.transport;
        let before = f.seen.lock().unwrap().len();
        let started = Instant::now();
        let mut none = f.client.resolve(&[], call("alice")).await.unwrap();
        assert!(none.next().await.unwrap().is_none(), "{t:?}");
        assert!(none.next().await.unwrap().is_none(), "{t:?}");
        assert!(started.elapsed() < Duration::from_millis(100), "{t:?}");
        assert_eq!(
            f.seen.lock().unwrap().len(),
            before,
            "{t:?}: a call was made"
        );
        // Even once the server is gone.
        f.running.stop().await;
        let mut none = f.client.resolve(&[], CallOptions::new()).await.unwrap();
        assert!(none.next().await.unwrap().is_none(), "{t:?}");
    });
}

#[test]
fn resolve_all_returns_only_the_callers_futures() {
    each_carrier(|f| async move {
        let t = f.transport;
        let mine = [f.echo("alice", "one").await, f.echo("alice", "two").await];
        let theirs = f.echo("bob", "three").await;
        for h in mine {
            f.client.resolve_one(h, call("alice")).await.unwrap();
        }
        f.client.resolve_one(theirs, call("bob")).await.unwrap();
        let mut all = f.client.resolve_all(call("alice")).await.unwrap();
        let mut got = HashSet::new();
        for _ in 0..2 {
            let r = all.next().await.unwrap().expect("a result");
            assert!(r.outcome.is_ok(), "{t:?}: {r:?}");
            got.insert(r.id);
        }
        assert_eq!(got, mine.iter().map(|h| h.id()).collect(), "{t:?}");
        // Nothing else comes: bob's future is not alice's.
        let more = tokio::time::timeout(Duration::from_millis(300), all.next()).await;
        assert!(more.is_err(), "{t:?}: {more:?}");
        // A future completing later arrives on the open stream.
        let late = f.echo("alice", "late").await;
        let r = all.next().await.unwrap().expect("the late result");
        assert_eq!(late.take(r).unwrap().into_inner().text, "late", "{t:?}");
        drop(all);
        f.running.stop().await;
    });
}

#[test]
fn cancel_by_the_owner_reaches_the_handler_and_by_another_is_denied() {
    each_carrier(|f| async move {
        let t = f.transport;
        let handle = f.echo("alice", "sleep:5000").await;
        let probe = f.probe.clone();
        eventually("the handler runs", || {
            probe.calls.load(Ordering::SeqCst) == 1
        })
        .await;
        let e = f.client.cancel(handle, call("bob")).await.unwrap_err();
        assert_eq!(e.code(), StatusCode::PermissionDenied, "{t:?}: {e}");
        f.client.cancel(handle, call("alice")).await.unwrap();
        let e = f
            .client
            .resolve_one(handle, call("alice"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Cancelled, "{t:?}: {e}");
        eventually("the handler is stopped", || {
            probe.dropped.load(Ordering::SeqCst) == 1
        })
        .await;
        // By id too; an unknown one is NOT_FOUND.
        f.client.cancel(handle.id(), call("alice")).await.unwrap();
        let e = f
            .client
            .cancel(Uuid::from_u128(7), call("alice"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::NotFound, "{t:?}: {e}");
        f.running.stop().await;
    });
}

#[test]
fn an_idempotency_key_returns_the_same_handle() {
    each_carrier(|f| async move {
        let t = f.transport;
        let key = Uuid::from_u128(0x5eed);
        let first: Dispatched<Note> = f
            .client
            .dispatch(
                svc::ECHO.id,
                &note("once"),
                as_("alice").idempotency_key(key),
            )
            .await
            .unwrap();
        let again: Dispatched<Note> = f
            .client
            .dispatch(
                svc::ECHO.id,
                &note("twice"),
                as_("alice").idempotency_key(key),
            )
            .await
            .unwrap();
        assert_eq!(first, again, "{t:?}");
        let r = f.client.resolve_one(again, call("alice")).await.unwrap();
        assert_eq!(r.into_inner().text, "once", "{t:?}");
        let e = f
            .client
            .dispatch::<_, Note>(svc::ECHO.id, &note("x"), as_("bob").idempotency_key(key))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::PermissionDenied, "{t:?}: {e}");
        f.running.stop().await;
    });
}

#[test]
fn the_inner_deadline_gives_deadline_exceeded() {
    each_carrier(|f| async move {
        let t = f.transport;
        let started = Instant::now();
        let handle: Dispatched<Note> = f
            .client
            .dispatch(
                svc::ECHO.id,
                &note("sleep:5000"),
                as_("alice").timeout(Duration::from_millis(150)),
            )
            .await
            .unwrap();
        let e = f
            .client
            .resolve_one(handle, call("alice"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::DeadlineExceeded, "{t:?}: {e}");
        assert!(started.elapsed() < Duration::from_secs(3), "{t:?}");
        f.running.stop().await;
    });
}

#[test]
fn a_dispatched_batch_resolves_to_its_results() {
    each_carrier(|f| async move {
        let t = f.transport;
        let mut batch = Batch::new();
        let a = batch.call(svc::ECHO, &note("one")).unwrap();
        let b = batch.call_from(svc::ECHO, a);
        let c = batch.call(svc::ECHO, &note("fail")).unwrap();
        let handle: Dispatched<BatchResults> =
            f.client.dispatch_batch(&batch, as_("alice")).await.unwrap();
        let results = f
            .client
            .resolve_one(handle, call("alice"))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(results.get::<Note>(a).unwrap().text, "one", "{t:?}");
        assert_eq!(results.get::<Note>(b).unwrap().text, "one", "{t:?}");
        let e = results.get::<Note>(c).unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument, "{t:?}: {e}");
        f.running.stop().await;
    });
}

#[test]
fn a_mismatched_take_is_an_error_not_a_panic() {
    each_carrier(|f| async move {
        let t = f.transport;
        let a = f.echo("alice", "a").await;
        let b = f.echo("alice", "b").await;
        let mut results = f.resolve("alice", &[b.id()]).await;
        assert_eq!(results.len(), 1, "{t:?}");
        let resolved = results.remove(0);
        let e = a.take(resolved.clone()).unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument, "{t:?}: {e}");
        // A payload that is not the handle's type is INTERNAL.
        let wrong = Dispatched::<Uuid>::from_id(b.id());
        let e = wrong.take(resolved.clone()).unwrap_err();
        assert_eq!(e.code(), StatusCode::Internal, "{t:?}: {e}");
        assert_eq!(b.take(resolved).unwrap().into_inner().text, "b", "{t:?}");
        f.running.stop().await;
    });
}

#[test]
fn a_generated_client_dispatches_its_unary_methods() {
    each_carrier(|f| async move {
        let t = f.transport;
        let lab = Running::lab(&f.client);
        let handle: Dispatched<Note> = lab
            .dispatch_echo(&note("meta"), as_("alice"))
            .await
            .unwrap();
        let r = f.client.resolve_one(handle, call("alice")).await.unwrap();
        assert_eq!(r.metadata().get("rows"), Some("3"), "{t:?}");
        assert_eq!(r.into_inner().text, "meta", "{t:?}");
        let failing = lab
            .dispatch_echo(&note("fail"), as_("alice"))
            .await
            .unwrap();
        let e = f
            .client
            .resolve_one(failing, call("alice"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::InvalidArgument, "{t:?}: {e}");
        // A server without futures: the dispatch itself is UNIMPLEMENTED.
        let bare = Running::start(t, lab_server(&f.probe)).await;
        let client = bare.client().await;
        let e = Running::lab(&client)
            .dispatch_echo(&note("x"), as_("alice"))
            .await
            .unwrap_err();
        assert_eq!(e.code(), StatusCode::Unimplemented, "{t:?}: {e}");
        bare.stop().await;
        f.running.stop().await;
    });
}

//! Futures on PostgreSQL across two servers sharing one database (`docs/rpc.md`,
//! "Futures"): a future dispatched on one resolves on the other, its cancel from the other
//! reaches the handler through `LISTEN`/`NOTIFY`, and another caller is refused. Skipped
//! when no PostgreSQL binaries are installed (`scripts/test-services` installs them).

mod common;
#[path = "../../alloc-ext/rpc-postgres/tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bebop_rpc::futures::{FutureStore, StoreConfig};
use bebop_rpc::{CallOptions, Client, Context, FuturesConfig, RawMessage, Status, StatusCode};
use bebop_rpc_postgres::{PostgresOptions, PostgresStore};
use bebop_runtime::rpc::{
    Empty, FutureCancelRequest, FutureDispatchRequest, FutureHandle, FutureOutcome,
    FutureResolveRequest, FutureResult,
};
use bebop_runtime::{Array, Decode, Uuid};
use common::*;

async fn server(pg: &tokio_postgres::Config, runner: &str, probe: &Arc<Probe>) -> Running {
    let store = PostgresStore::connect_with(PostgresOptions {
        table: "futures".to_owned(),
        connections: 2,
        store: StoreConfig::new(runner),
        ..PostgresOptions::new(pg.clone())
    })
    .await
    .unwrap();
    let builder = lab_server(probe)
        .interceptor(|ctx: &Context| {
            if let Some(who) = ctx.metadata().get("authorization") {
                ctx.peer().set_identity(who);
            }
            Ok::<(), Status>(())
        })
        .futures_shared(
            Arc::new(store) as Arc<dyn FutureStore>,
            FuturesConfig::default(),
        );
    Running::start(Transport::Tcp, builder).await
}

fn options(who: &str) -> CallOptions {
    CallOptions::new().metadata("authorization", who)
}

async fn dispatch(client: &Client, who: &str, text: &str) -> Uuid {
    let payload = bebop_runtime::encode_to_vec(&Note { text: text.into() }).unwrap();
    let request = FutureDispatchRequest {
        method_id: Some(svc::ECHO.id),
        payload: Some(&payload),
        ..Default::default()
    };
    client
        .unary::<_, FutureHandle>(2, &request, options(who))
        .await
        .unwrap()
        .into_inner()
        .id
}

/// The results of a resolve stream of `ids`, to its end: each id with its text or code.
async fn resolve(
    client: &Client,
    who: &str,
    ids: &[Uuid],
) -> Vec<(Uuid, Result<String, StatusCode>)> {
    let request = FutureResolveRequest {
        ids: Some(Array::from_slice(ids)),
    };
    let mut stream = client
        .server_stream::<_, RawMessage>(3, &request, options(who))
        .await
        .unwrap();
    let mut out = Vec::new();
    while let Some(raw) = stream.message().await.unwrap() {
        let r = FutureResult::from_bytes(&raw.0).unwrap();
        let outcome = match r.outcome {
            FutureOutcome::Success(s) => Ok(Note::from_bytes(s.payload).unwrap().text),
            FutureOutcome::Error(e) => Err(e.code.unwrap_or(StatusCode::Unknown)),
        };
        out.push((r.id, outcome));
    }
    out
}

async fn cancel(client: &Client, who: &str, id: Uuid) -> Result<(), Status> {
    client
        .unary::<_, Empty>(4, &FutureCancelRequest { id }, options(who))
        .await
        .map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_futures_on_postgres() {
    let pg = match support::TempPostgres::start().await {
        Ok(Some(pg)) => pg,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    let db = pg.create_database("rpc_futures").await.unwrap();
    let (probe_a, probe_b) = (Arc::new(Probe::default()), Arc::new(Probe::default()));
    let a = server(&db, "a", &probe_a).await;
    let b = server(&db, "b", &probe_b).await;
    let (on_a, on_b) = (a.client().await, b.client().await);

    // Dispatched on A, resolved on B.
    let id = dispatch(&on_a, "alice", "hello").await;
    assert_eq!(
        resolve(&on_b, "alice", &[id]).await,
        vec![(id, Ok("hello".to_string()))]
    );
    // Another caller sees nothing and may not cancel.
    assert!(resolve(&on_b, "bob", &[id]).await.is_empty());
    let e = cancel(&on_b, "bob", id).await.unwrap_err();
    assert_eq!(e.code(), StatusCode::PermissionDenied, "{e}");

    // Running on A, cancelled from B: A's handler is stopped.
    let slow = dispatch(&on_a, "alice", "sleep:10000").await;
    let probe = probe_a.clone();
    eventually("A runs the handler", || {
        probe.calls.load(Ordering::SeqCst) == 2
    })
    .await;
    cancel(&on_b, "alice", slow).await.unwrap();
    eventually("A drops the handler", || {
        probe.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(
        resolve(&on_a, "alice", &[slow]).await,
        vec![(slow, Err(StatusCode::Cancelled))]
    );
    assert_eq!(probe_b.calls.load(Ordering::SeqCst), 0);
    tokio::time::timeout(Duration::from_secs(20), async {
        a.stop().await;
        b.stop().await;
    })
    .await
    .unwrap();
}

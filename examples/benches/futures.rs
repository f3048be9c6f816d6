//! RPC futures end to end on loopback, with the in-memory, SQLite and PostgreSQL stores side
//! by side in one run: the latency of a dispatch call (client to handle), the latency from
//! dispatch until the result arrives on an open resolve stream, and completed futures per
//! second with many callers at once. A plain unary call of the same job is the baseline
//! row. (`alloc-ext/rpc-postgres/benches/stores.rs` measures the stores alone.)
//!
//! `cargo bench -p bebop-examples --features futures-server --bench futures` measures; run
//! without `--bench` (as `cargo test --all-targets` does) or with `--quick`, it is a smoke
//! run of a few seconds. PostgreSQL is a server of its own in a temporary directory (see
//! `alloc-ext/rpc-postgres/tests/support`), with `fsync` off; SQLite is a file in WAL mode.

#[path = "../../alloc-ext/rpc-postgres/tests/support/mod.rs"]
mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bebop_rpc::futures::{FutureStore, MemoryStore, StoreConfig};
use bebop_rpc::{CallOptions, Client, Context, FuturesConfig, RawMessage, Server, Status};
use bebop_rpc_postgres::{PostgresOptions, PostgresStore};
use bebop_rpc_sqlite::SqliteStore;
use bebop_runtime::Decode;
use bebop_runtime::rpc::{
    FutureDispatchRequest, FutureHandle, FutureOutcome, FutureResolveRequest, FutureResult,
};

#[allow(dead_code, clippy::all)]
mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

use schema::jobs::jobs as svc;
use schema::owned::jobs::{Job, JobResult};

struct Sizes {
    sequential: usize,
    callers: usize,
    per_caller: usize,
}

/// Jobs that finish at once: what is measured is the futures machinery.
struct Instant0;

impl svc::AsyncHandler for Instant0 {
    async fn run(&self, _ctx: &Context, job: Job) -> Result<JobResult, Status> {
        Ok(JobResult {
            name: job.name,
            runner: "bench".into(),
        })
    }
}

struct Row {
    what: String,
    /// Sequential latencies of the call (dispatch, or the plain call).
    call: Vec<Duration>,
    /// Sequential latencies from dispatch to the result on the resolve stream.
    result: Vec<Duration>,
    per_second: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn job_payload(i: usize) -> Vec<u8> {
    bebop_runtime::encode_to_vec(&Job {
        name: format!("job-{i}"),
        millis: 0,
    })
    .unwrap()
}

async fn dispatch(client: &Client, payload: &[u8]) -> bebop_runtime::Uuid {
    let request = FutureDispatchRequest {
        method_id: Some(svc::RUN.id),
        payload: Some(payload),
        ..Default::default()
    };
    client
        .unary::<_, FutureHandle>(2, &request, CallOptions::new())
        .await
        .unwrap()
        .into_inner()
        .id
}

/// The next result on a resolve stream: its id, checked to be a success.
async fn next_result(stream: &mut bebop_rpc::Streaming<RawMessage>) -> bebop_runtime::Uuid {
    let raw = tokio::time::timeout(Duration::from_secs(60), stream.message())
        .await
        .expect("a result within a minute")
        .unwrap()
        .expect("the resolve stream stays open");
    let r = FutureResult::from_bytes(&raw.0).unwrap();
    assert!(matches!(r.outcome, FutureOutcome::Success(_)), "{r:?}");
    r.id
}

async fn resolve_all(client: &Client) -> bebop_rpc::Streaming<RawMessage> {
    client
        .server_stream::<_, RawMessage>(3, &FutureResolveRequest { ids: None }, CallOptions::new())
        .await
        .unwrap()
}

async fn serve(store: Option<Arc<dyn FutureStore>>) -> (Server, String) {
    let mut builder = Server::builder().add_service(svc::AsyncServer::new(Instant0));
    if let Some(store) = store {
        builder = builder.futures_shared(store, FuturesConfig::default());
    }
    let server = builder.build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let s = server.clone();
    tokio::spawn(async move { s.serve_tcp(listener).await });
    (server, addr)
}

/// The baseline: the same job as a plain unary call.
async fn measure_plain(sizes: &Sizes) -> Row {
    let (server, addr) = serve(None).await;
    let client = Client::connect_tcp(addr.as_str()).await.unwrap();
    let mut call = Vec::with_capacity(sizes.sequential);
    for i in 0..sizes.sequential {
        let job = Job {
            name: format!("job-{i}"),
            millis: 0,
        };
        let t = Instant::now();
        let r = client
            .unary::<_, JobResult>(svc::RUN.id, &job, CallOptions::new())
            .await
            .unwrap();
        call.push(t.elapsed());
        assert_eq!(r.get_ref().name, job.name);
    }
    call.sort();
    let started = Instant::now();
    let callers: Vec<_> = (0..sizes.callers)
        .map(|_| {
            let addr = addr.clone();
            let n = sizes.per_caller;
            tokio::spawn(async move {
                let client = Client::connect_tcp(addr.as_str()).await.unwrap();
                for i in 0..n {
                    let job = Job {
                        name: format!("job-{i}"),
                        millis: 0,
                    };
                    client
                        .unary::<_, JobResult>(svc::RUN.id, &job, CallOptions::new())
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for c in callers {
        c.await.unwrap();
    }
    let per_second = (sizes.callers * sizes.per_caller) as f64 / started.elapsed().as_secs_f64();
    server.shutdown(Duration::from_secs(5)).await;
    Row {
        what: "plain unary call (baseline)".into(),
        call,
        result: Vec::new(),
        per_second,
    }
}

async fn measure_futures(name: &str, store: Arc<dyn FutureStore>, sizes: &Sizes) -> Row {
    let (server, addr) = serve(Some(store)).await;
    let client = Client::connect_tcp(addr.as_str()).await.unwrap();
    let mut stream = resolve_all(&client).await;
    let mut call = Vec::with_capacity(sizes.sequential);
    let mut result = Vec::with_capacity(sizes.sequential);
    for i in 0..sizes.sequential {
        let payload = job_payload(i);
        let t = Instant::now();
        let id = dispatch(&client, &payload).await;
        call.push(t.elapsed());
        assert_eq!(next_result(&mut stream).await, id);
        result.push(t.elapsed());
    }
    call.sort();
    result.sort();
    drop(stream);
    // Throughput: every caller dispatches its jobs while its resolve stream collects them.
    let started = Instant::now();
    let callers: Vec<_> = (0..sizes.callers)
        .map(|_| {
            let addr = addr.clone();
            let n = sizes.per_caller;
            tokio::spawn(async move {
                let client = Client::connect_tcp(addr.as_str()).await.unwrap();
                let mut stream = resolve_all(&client).await;
                let collect = tokio::spawn(async move {
                    let mut seen = HashSet::new();
                    while seen.len() < n {
                        assert!(seen.insert(next_result(&mut stream).await));
                    }
                    seen
                });
                let mut mine = HashSet::new();
                for i in 0..n {
                    mine.insert(dispatch(&client, &job_payload(i)).await);
                }
                assert_eq!(collect.await.unwrap(), mine);
            })
        })
        .collect();
    for c in callers {
        c.await.unwrap();
    }
    let per_second = (sizes.callers * sizes.per_caller) as f64 / started.elapsed().as_secs_f64();
    server.shutdown(Duration::from_secs(5)).await;
    Row {
        what: format!("future, {name} store"),
        call,
        result,
        per_second,
    }
}

fn config(sizes: &Sizes) -> StoreConfig {
    StoreConfig {
        max_pending: sizes.callers * sizes.per_caller + 10,
        event_capacity: 4 * sizes.callers * sizes.per_caller + 16,
        ..StoreConfig::new("bench")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--quick");
    let sizes = if quick {
        Sizes {
            sequential: 100,
            callers: 8,
            per_caller: 25,
        }
    } else {
        Sizes {
            sequential: 2000,
            callers: 64,
            per_caller: 200,
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut rows = vec![measure_plain(&sizes).await];
        let memory = MemoryStore::with_config(config(&sizes));
        rows.push(measure_futures("memory", Arc::new(memory), &sizes).await);
        let dir = std::env::temp_dir().join(format!("bebop-futures-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sqlite = SqliteStore::open_with_config(dir.join("futures.db"), config(&sizes))
            .await
            .unwrap();
        rows.push(measure_futures("SQLite", Arc::new(sqlite), &sizes).await);
        let pg = support::TempPostgres::start().await.unwrap();
        if let Some(pg) = &pg {
            let db = pg.create_database("bench").await.unwrap();
            let store = PostgresStore::connect_with(PostgresOptions {
                store: config(&sizes),
                ..PostgresOptions::new(db)
            })
            .await
            .unwrap();
            rows.push(measure_futures("PostgreSQL", Arc::new(store), &sizes).await);
        }
        println!(
            "\nRPC futures on 127.0.0.1 ({} mode): {} sequential jobs, then {} callers x {} jobs at once",
            if quick { "quick" } else { "full" },
            sizes.sequential,
            sizes.callers,
            sizes.per_caller
        );
        println!(
            "{:<28} {:>11} {:>11} {:>13} {:>11} {:>13} {:>10}",
            "", "call p50", "call p99", "result p50", "result p99", "completed/s", "vs plain"
        );
        let baseline = rows[0].per_second;
        for r in &rows {
            let result = |p| {
                if r.result.is_empty() {
                    "-".to_string()
                } else {
                    format!("{:.1?}", percentile(&r.result, p))
                }
            };
            println!(
                "{:<28} {:>11.1?} {:>11.1?} {:>13} {:>11} {:>13.0} {:>10.2}",
                r.what,
                percentile(&r.call, 0.5),
                percentile(&r.call, 0.99),
                result(0.5),
                result(0.99),
                r.per_second,
                r.per_second / baseline
            );
        }
        drop(pg);
        let _ = std::fs::remove_dir_all(&dir);
    });
}

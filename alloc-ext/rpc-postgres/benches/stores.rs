//! The three future stores side by side: the latency of a dispatch's insert plus its
//! completion, the latency until a subscriber hears of the completion, and completions per
//! second with many tasks at once.
//!
//! `cargo bench -p bebop-rpc-postgres --bench stores` measures; run without `--bench` (as
//! `cargo test --all-targets` does) or with `--quick`, it is a smoke run of a few seconds.
//! PostgreSQL is a server of its own in a temporary directory (see `tests/support`), with
//! `fsync` and `synchronous_commit` off, as in the tests; SQLite is a file in WAL mode with
//! `synchronous = NORMAL`, as the store opens it.
#![allow(clippy::unwrap_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bebop_rpc::futures::{
    Event, FutureStore, Insertion, MemoryStore, NewFuture, Outcome, StoreConfig,
};
use bebop_rpc_postgres::{PostgresOptions, PostgresStore};
use bebop_rpc_sqlite::SqliteStore;
use futures_util::StreamExt;

struct Sizes {
    sequential: usize,
    tasks: usize,
    per_task: usize,
}

struct Row {
    store: &'static str,
    insert_complete: Vec<Duration>,
    event: Vec<Duration>,
    per_second: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn config(sizes: &Sizes) -> StoreConfig {
    StoreConfig {
        max_pending: sizes.tasks * 2 + 10,
        event_capacity: 2 * sizes.tasks * sizes.per_task + 16,
        ..StoreConfig::new("bench")
    }
}

async fn measure(name: &'static str, store: Arc<dyn FutureStore>, sizes: &Sizes) -> Row {
    let payload = vec![0x5a; 256];
    // Latency, one at a time.
    let mut events = store.subscribe();
    let mut insert_complete = Vec::with_capacity(sizes.sequential);
    let mut event = Vec::with_capacity(sizes.sequential);
    for _ in 0..sizes.sequential {
        let start = Instant::now();
        let Insertion::Inserted(id) = store.insert(NewFuture::new("alice", 7)).await.unwrap()
        else {
            panic!("not inserted")
        };
        assert!(
            store
                .complete(id, Outcome::success(payload.clone()))
                .await
                .unwrap()
        );
        insert_complete.push(start.elapsed());
        loop {
            match events.next().await {
                Some(Event::Completed { id: done, .. }) if done == id => break,
                Some(_) => {}
                None => panic!("the event stream ended"),
            }
        }
        event.push(start.elapsed());
    }
    drop(events);
    // Throughput: many tasks, until every completion has been heard of.
    let total = sizes.tasks * sizes.per_task;
    let mut events = store.subscribe();
    let listener = tokio::spawn(async move {
        let mut seen = 0;
        while seen < total {
            match events.next().await {
                Some(Event::Completed { .. }) => seen += 1,
                Some(Event::Lagged) => panic!("lagged"),
                Some(_) => {}
                None => break,
            }
        }
        seen
    });
    let start = Instant::now();
    let per_task = sizes.per_task;
    let workers: Vec<_> = (0..sizes.tasks)
        .map(|t| {
            let store = store.clone();
            let payload = payload.clone();
            tokio::spawn(async move {
                let owner = format!("owner-{t}");
                let mut ids = HashSet::new();
                for _ in 0..per_task {
                    let Insertion::Inserted(id) = store
                        .insert(NewFuture::new(owner.clone(), 7))
                        .await
                        .unwrap()
                    else {
                        panic!("not inserted")
                    };
                    assert!(
                        store
                            .complete(id, Outcome::success(payload.clone()))
                            .await
                            .unwrap()
                    );
                    ids.insert(id);
                }
                ids.len()
            })
        })
        .collect();
    let mut done = 0;
    for w in workers {
        done += w.await.unwrap();
    }
    let seen = tokio::time::timeout(Duration::from_secs(120), listener)
        .await
        .unwrap()
        .unwrap();
    let took = start.elapsed();
    assert_eq!(done, total);
    assert_eq!(seen, total);
    insert_complete.sort();
    event.sort();
    Row {
        store: name,
        insert_complete,
        event,
        per_second: total as f64 / took.as_secs_f64(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--quick");
    let sizes = if quick {
        Sizes {
            sequential: 200,
            tasks: 32,
            per_task: 40,
        }
    } else {
        Sizes {
            sequential: 3000,
            tasks: 64,
            per_task: 500,
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut rows = Vec::new();
        rows.push(
            measure(
                "memory",
                Arc::new(MemoryStore::with_config(config(&sizes))),
                &sizes,
            )
            .await,
        );
        let dir = tempfile::tempdir().unwrap();
        let sqlite = SqliteStore::open_with_config(dir.path().join("futures.db"), config(&sizes))
            .await
            .unwrap();
        rows.push(measure("sqlite", Arc::new(sqlite), &sizes).await);
        let server = support::TempPostgres::start().await.unwrap();
        if let Some(server) = &server {
            let pg = server.create_database("bench").await.unwrap();
            let store = PostgresStore::connect_with(PostgresOptions {
                store: config(&sizes),
                ..PostgresOptions::new(pg)
            })
            .await
            .unwrap();
            rows.push(measure("postgres", Arc::new(store), &sizes).await);
        }
        println!(
            "\nfuture stores ({} mode): {} sequential dispatches (insert + complete), then {} tasks x {} at once; payloads of 256 bytes",
            if quick { "quick" } else { "full" },
            sizes.sequential,
            sizes.tasks,
            sizes.per_task
        );
        println!(
            "{:<10} {:>14} {:>14} {:>14} {:>14} {:>16}",
            "store", "insert+compl.", "p99", "event heard", "p99", "completions/s"
        );
        for r in &rows {
            println!(
                "{:<10} {:>14.1?} {:>14.1?} {:>14.1?} {:>14.1?} {:>16.0}",
                r.store,
                percentile(&r.insert_complete, 0.5),
                percentile(&r.insert_complete, 0.99),
                percentile(&r.event, 0.5),
                percentile(&r.event, 0.99),
                r.per_second
            );
        }
        drop(server);
    });
}

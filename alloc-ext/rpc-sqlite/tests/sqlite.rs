//! The SQLite store: the conformance suite, a restart in a new process, schema versions and
//! files that are not what they should be.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bebop_rpc::futures::conformance::{self, StoreFactory};
use bebop_rpc::futures::{
    BoxFuture, FutureId, FutureState, FutureStore, Insertion, NewFuture, Outcome, RESTARTED_DETAIL,
    StoreConfig, StoreError,
};
use bebop_rpc::{Metadata, StatusCode};
use bebop_rpc_sqlite::{SCHEMA_VERSION, SqliteStore};

/// Every location is a new file in one temporary directory.
struct Files {
    dir: tempfile::TempDir,
    next: AtomicUsize,
}

impl StoreFactory for Files {
    fn create(&self) -> BoxFuture<'_, Result<String, StoreError>> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.path().join(format!("futures-{n}.db"));
        Box::pin(async move { Ok(path.to_string_lossy().into_owned()) })
    }

    fn open<'a>(
        &'a self,
        name: &'a str,
        config: StoreConfig,
    ) -> BoxFuture<'a, Result<Arc<dyn FutureStore>, StoreError>> {
        Box::pin(async move {
            let store = SqliteStore::open_with_config(name, config).await?;
            Ok(Arc::new(store) as Arc<dyn FutureStore>)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_passes_the_conformance_suite() {
    let files = Files {
        dir: tempfile::tempdir().unwrap(),
        next: AtomicUsize::new(0),
    };
    let report = conformance::run_all(&files).await;
    println!("{report}");
    assert!(report.passed(), "{report}");
}

const CHILD_ENV: &str = "BEBOP_SQLITE_CHILD_FILE";

/// The child process of `results_survive_a_restart_of_the_process`: dispatches two futures,
/// completes one, prints their ids and exits at once (no store is dropped, no connection
/// closed: as a crash would leave the file). Run alone, it does nothing.
#[tokio::test]
async fn child_process_of_the_restart_test() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = SqliteStore::open_with_config(&path, StoreConfig::new("node-1"))
        .await
        .unwrap();
    let key = bebop_runtime::Uuid::from_u128(42);
    let Insertion::Inserted(done) = store
        .insert(NewFuture::new("alice", 0x1234).with_key(key))
        .await
        .unwrap()
    else {
        panic!("not inserted")
    };
    let md: Metadata = [("x-result", "yes")].into_iter().collect();
    assert!(
        store
            .complete(
                done,
                Outcome::Succeeded {
                    payload: b"the response".to_vec(),
                    metadata: md
                }
            )
            .await
            .unwrap()
    );
    let Insertion::Inserted(running) = store.insert(NewFuture::new("bob", 0x1234)).await.unwrap()
    else {
        panic!("not inserted")
    };
    println!("done={done} running={running}");
    std::process::exit(0);
}

#[tokio::test]
async fn results_survive_a_restart_of_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("futures.db");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process_of_the_restart_test",
            "--nocapture",
        ])
        .env(CHILD_ENV, &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("done="))
        .unwrap_or_else(|| panic!("no ids in {stdout}"));
    let mut ids = line
        .split(' ')
        .map(|kv| kv.split_once('=').unwrap().1.parse::<FutureId>().unwrap());
    let (done, running) = (ids.next().unwrap(), ids.next().unwrap());

    // The same server, started again.
    let store = SqliteStore::open_with_config(&path, StoreConfig::new("node-1"))
        .await
        .unwrap();
    let record = store.get(done).await.unwrap().unwrap();
    let (payload, md) = record.result().unwrap().unwrap();
    assert_eq!(payload, b"the response");
    assert_eq!(md.get("x-result"), Some("yes"));
    assert_eq!(record.owner, "alice");
    assert_eq!(record.method_id, 0x1234);
    // A retried dispatch still finds it.
    assert_eq!(
        store
            .insert(NewFuture::new("alice", 0x1234).with_key(bebop_runtime::Uuid::from_u128(42)))
            .await
            .unwrap(),
        Insertion::Existing(done)
    );
    // What the crashed run left pending fails, once.
    assert_eq!(
        store.get(running).await.unwrap().unwrap().state,
        FutureState::Pending
    );
    assert_eq!(store.fail_runner("node-1").await.unwrap(), 1);
    assert_eq!(
        store.get(running).await.unwrap().unwrap().state,
        FutureState::Failed {
            code: StatusCode::Unavailable,
            detail: RESTARTED_DETAIL.into(),
            metadata: Metadata::new()
        }
    );
    let fetched: Vec<_> = {
        use futures_util::StreamExt;
        store
            .fetch_completed("alice", &[done, running])
            .map(|r| r.unwrap().id)
            .collect()
            .await
    };
    assert_eq!(fetched, vec![done]);
}

fn sqlite(path: &PathBuf) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

#[tokio::test]
async fn the_schema_is_versioned_and_a_newer_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("futures.db");
    drop(SqliteStore::open(&path).await.unwrap());
    let conn = sqlite(&path);
    let version: i64 = conn
        .query_row("SELECT version FROM bebop_schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // Opening again migrates nothing and keeps one version row.
    drop(SqliteStore::open(&path).await.unwrap());
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM bebop_schema_version", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(rows, 1);
    conn.execute("UPDATE bebop_schema_version SET version = 99", [])
        .unwrap();
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    assert!(err.to_string().contains("newer"), "{err}");
}

#[tokio::test]
async fn unreadable_rows_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("futures.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let conn = sqlite(&path);
    let bad = [
        // An unknown state.
        "UPDATE futures SET state = 9",
        // A failure without a status code.
        "UPDATE futures SET state = 2, code = NULL",
        // A status code beyond a byte.
        "UPDATE futures SET state = 2, code = 300",
        // Metadata that does not decode.
        "UPDATE futures SET state = 1, payload = x'00', metadata = x'ffffffff'",
        // A method id beyond 32 bits.
        "UPDATE futures SET method_id = 5000000000",
        // Text where bytes belong.
        "UPDATE futures SET state = 1, payload = 'text', metadata = NULL",
        // Text where a time belongs.
        "UPDATE futures SET created_at = 'yesterday'",
        // Bytes where text belongs.
        "UPDATE futures SET owner = x'ff00'",
    ];
    for sql in bad {
        let Insertion::Inserted(id) = store.insert(NewFuture::new("alice", 7)).await.unwrap()
        else {
            panic!()
        };
        conn.execute(&format!("{sql} WHERE id = ?1"), [&id.as_bytes()[..]])
            .unwrap();
        match store.get(id).await {
            Err(StoreError::Corrupt(_)) => {}
            other => panic!("{sql}: {other:?}"),
        }
        assert!(store.delete(id).await.unwrap());
    }
    // The rest of the store works on.
    let Insertion::Inserted(id) = store.insert(NewFuture::new("alice", 7)).await.unwrap() else {
        panic!()
    };
    assert!(store.complete(id, Outcome::success(vec![])).await.unwrap());
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("futures.db");
    std::fs::write(&path, vec![0x42; 8192]).unwrap();
    let err = SqliteStore::open(&path).await.unwrap_err();
    println!("{err}");
    let err = SqliteStore::open(dir.path().join("no/such/dir/f.db"))
        .await
        .unwrap_err();
    println!("{err}");
    let err = SqliteStore::open_with_config(dir.path().join("x.db"), StoreConfig::new(""))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidArgument(_)), "{err}");
}

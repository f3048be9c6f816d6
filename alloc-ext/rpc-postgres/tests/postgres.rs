//! The PostgreSQL store against a real server (one for the whole binary, started here and
//! stopped at the end, a failure included): the conformance suite, two stores as two server
//! processes, a lost listening connection, lost query connections, schema versions and
//! rows that are not what they should be.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bebop_rpc::futures::conformance::{self, StoreFactory};
use bebop_rpc::futures::{
    BoxFuture, Cancellation, Event, EventStream, FutureStore, Insertion, NewFuture, Outcome,
    StoreConfig, StoreError,
};
use bebop_rpc_postgres::{PostgresOptions, PostgresStore};
use futures_util::StreamExt;
use support::TempPostgres;

/// Every location is a new table of one database.
struct Tables {
    pg: tokio_postgres::Config,
    next: AtomicUsize,
}

impl StoreFactory for Tables {
    fn create(&self) -> BoxFuture<'_, Result<String, StoreError>> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move { Ok(format!("futures_{n}")) })
    }

    fn open<'a>(
        &'a self,
        name: &'a str,
        config: StoreConfig,
    ) -> BoxFuture<'a, Result<Arc<dyn FutureStore>, StoreError>> {
        Box::pin(async move {
            let store = PostgresStore::connect_with(PostgresOptions {
                table: name.to_owned(),
                connections: 2,
                store: config,
                ..PostgresOptions::new(self.pg.clone())
            })
            .await?;
            Ok(Arc::new(store) as Arc<dyn FutureStore>)
        })
    }
}

async fn store(pg: &tokio_postgres::Config, table: &str, runner: &str) -> PostgresStore {
    PostgresStore::connect_with(PostgresOptions {
        table: table.to_owned(),
        connections: 2,
        store: StoreConfig::new(runner),
        ..PostgresOptions::new(pg.clone())
    })
    .await
    .unwrap()
}

async fn next(events: &mut EventStream) -> Event {
    tokio::time::timeout(Duration::from_secs(15), events.next())
        .await
        .expect("an event in time")
        .expect("the stream goes on")
}

async fn inserted(store: &PostgresStore, new: NewFuture) -> bebop_rpc::futures::FutureId {
    match store.insert(new).await.unwrap() {
        Insertion::Inserted(id) => id,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store() {
    let server = match TempPostgres::start().await {
        Ok(Some(server)) => server,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    // The server stops when `server` is dropped: at the end, or while a failed assertion
    // unwinds.
    let pg = server.create_database("conformance").await.unwrap();
    let report = conformance::run_all(&Tables {
        pg: pg.clone(),
        next: AtomicUsize::new(0),
    })
    .await;
    println!("{report}");

    let db = server.create_database("extra").await.unwrap();
    two_servers_share_one_database(&db).await;
    a_lost_listening_connection_is_reestablished(&server, &db).await;
    lost_query_connections_are_replaced(&server, &db).await;
    the_schema_is_versioned_and_a_newer_one_refused(&server, &db).await;
    unreadable_rows_are_errors_not_panics(&server, &db).await;
    hostile_options_are_refused(&db).await;
    assert!(report.passed(), "{report}");
    drop(server);
}

/// Two stores on one table as two server processes: each sees the other's completions and
/// cancel requests.
async fn two_servers_share_one_database(db: &tokio_postgres::Config) {
    let a = store(db, "shared", "server-a").await;
    let b = store(db, "shared", "server-b").await;
    let mut a_events = a.subscribe();
    let mut b_events = b.subscribe();

    // Dispatched and completed on A: B's resolve streams learn of it.
    let id = inserted(&a, NewFuture::new("alice", 7)).await;
    assert!(
        a.complete(id, Outcome::success(b"from a".to_vec()))
            .await
            .unwrap()
    );
    assert_eq!(
        next(&mut b_events).await,
        Event::Completed {
            id,
            owner: "alice".into()
        }
    );
    assert_eq!(
        b.get(id)
            .await
            .unwrap()
            .unwrap()
            .result()
            .unwrap()
            .unwrap()
            .0,
        b"from a"
    );
    assert_eq!(
        next(&mut a_events).await,
        Event::Completed {
            id,
            owner: "alice".into()
        }
    );

    // Dispatched on A, cancelled through B: A is told to stop the task.
    let running = inserted(&a, NewFuture::new("alice", 7)).await;
    assert_eq!(
        b.cancel("alice", running).await.unwrap(),
        Cancellation::Cancelled {
            runner: "server-a".into()
        }
    );
    let expected = vec![
        Event::Completed {
            id: running,
            owner: "alice".into(),
        },
        Event::CancelRequested {
            id: running,
            runner: "server-a".into(),
        },
    ];
    let mut got = vec![next(&mut a_events).await, next(&mut a_events).await];
    got.sort_by_key(|e| matches!(e, Event::CancelRequested { .. }));
    assert_eq!(got, expected);
    // B saw the same, once each.
    let mut got = vec![next(&mut b_events).await, next(&mut b_events).await];
    got.sort_by_key(|e| matches!(e, Event::CancelRequested { .. }));
    assert_eq!(got, expected);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), b_events.next())
            .await
            .is_err(),
        "no duplicate"
    );

    // Another table is another store: no events cross.
    let other = store(db, "elsewhere", "server-c").await;
    let mut other_events = other.subscribe();
    let id = inserted(&a, NewFuture::new("alice", 7)).await;
    assert!(a.complete(id, Outcome::Cancelled).await.unwrap());
    next(&mut b_events).await;
    assert!(
        tokio::time::timeout(Duration::from_millis(200), other_events.next())
            .await
            .is_err()
    );
}

/// Terminates the backends whose application name is `name`; returns how many.
async fn terminate(server: &TempPostgres, db: &str, name: &str) -> i64 {
    let (client, connection) = server
        .config(db)
        .connect(tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = $1",
            &[&name],
        )
        .await
        .unwrap();
    drop(client);
    let _ = driver.await;
    row.get(0)
}

async fn a_lost_listening_connection_is_reestablished(
    server: &TempPostgres,
    db: &tokio_postgres::Config,
) {
    let a = store(db, "relisten", "server-a").await;
    let b = store(db, "relisten", "server-b").await;
    let mut a_events = a.subscribe();
    // Both stores' listeners on the table.
    let dbname = db.get_dbname().unwrap();
    assert_eq!(
        terminate(server, dbname, "bebop-futures relisten listener").await,
        2
    );
    // A learns that it may have missed events...
    assert_eq!(next(&mut a_events).await, Event::Lagged);
    // ...and hears the next ones again.
    let id = inserted(&b, NewFuture::new("alice", 7)).await;
    assert!(b.complete(id, Outcome::success(vec![])).await.unwrap());
    assert_eq!(
        next(&mut a_events).await,
        Event::Completed {
            id,
            owner: "alice".into()
        }
    );
}

async fn lost_query_connections_are_replaced(server: &TempPostgres, db: &tokio_postgres::Config) {
    let a = store(db, "reconnect", "server-a").await;
    // Open both pool connections.
    for _ in 0..4 {
        a.counts().await.unwrap();
    }
    let dbname = db.get_dbname().unwrap();
    assert!(terminate(server, dbname, "bebop-futures reconnect").await >= 1);
    tokio::time::sleep(Duration::from_millis(100)).await;
    // An operation may fail once per broken connection, as unavailable; then they work.
    let mut failures = 0;
    let mut ok = 0;
    for _ in 0..10 {
        match a.insert(NewFuture::new("alice", 7)).await {
            Ok(Insertion::Inserted(_)) => ok += 1,
            Err(StoreError::Unavailable(_)) => failures += 1,
            other => panic!("{other:?}"),
        }
    }
    assert!(failures <= 2, "{failures} failures");
    assert!(ok >= 8);
    assert_eq!(a.counts().await.unwrap().pending, ok);
}

async fn the_schema_is_versioned_and_a_newer_one_refused(
    server: &TempPostgres,
    db: &tokio_postgres::Config,
) {
    let dbname = db.get_dbname().unwrap();
    drop(store(db, "versioned", "r").await);
    // Connecting again, and many at once, migrates nothing twice.
    let stores = futures_util::future::join_all((0..5).map(|_| store(db, "versioned", "r"))).await;
    drop(stores);
    let (client, connection) = server
        .config(dbname)
        .connect(tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    let rows = client
        .query("SELECT version FROM versioned_schema", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, i32>(0), bebop_rpc_postgres::SCHEMA_VERSION);
    client
        .batch_execute("UPDATE versioned_schema SET version = 99")
        .await
        .unwrap();
    drop(client);
    let _ = driver.await;
    let err = PostgresStore::connect_with(PostgresOptions {
        table: "versioned".into(),
        ..PostgresOptions::new(db.clone())
    })
    .await
    .unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    assert!(err.to_string().contains("newer"), "{err}");
}

async fn unreadable_rows_are_errors_not_panics(server: &TempPostgres, db: &tokio_postgres::Config) {
    let dbname = db.get_dbname().unwrap();
    let s = store(db, "damaged", "r").await;
    for sql in [
        "UPDATE damaged SET state = 9",
        "UPDATE damaged SET state = 2, code = NULL",
        "UPDATE damaged SET state = 2, code = 300",
        "UPDATE damaged SET state = 1, payload = '\\x00', metadata = '\\xffffffff'",
        "UPDATE damaged SET method_id = 5000000000",
        "UPDATE damaged SET state = 1, payload = NULL",
    ] {
        let id = inserted(&s, NewFuture::new("alice", 7)).await;
        server
            .execute(dbname, &format!("{sql} WHERE id = '{id}'"))
            .await
            .unwrap();
        match s.get(id).await {
            Err(StoreError::Corrupt(_)) => {}
            other => panic!("{sql}: {other:?}"),
        }
        // A fetch reports it too, rather than skipping it silently.
        if !sql.contains("method_id") {
            let mut stream = s.fetch_completed("alice", std::slice::from_ref(&id));
            if let Some(r) = stream.next().await {
                assert!(matches!(r, Err(StoreError::Corrupt(_))), "{sql}: {r:?}");
            }
        }
        assert!(s.delete(id).await.unwrap());
    }
    // A notification on the channel that the store did not send is ignored.
    let mut events = s.subscribe();
    server
        .execute(dbname, "NOTIFY damaged, 'garbage'")
        .await
        .unwrap();
    let id = inserted(&s, NewFuture::new("alice", 7)).await;
    assert!(s.complete(id, Outcome::success(vec![])).await.unwrap());
    assert_eq!(
        next(&mut events).await,
        Event::Completed {
            id,
            owner: "alice".into()
        }
    );
}

async fn hostile_options_are_refused(db: &tokio_postgres::Config) {
    for table in ["futures; DROP TABLE x", "Futures", "\"q\""] {
        let err = PostgresStore::connect_with(PostgresOptions {
            table: table.into(),
            ..PostgresOptions::new(db.clone())
        })
        .await
        .unwrap_err();
        assert!(matches!(err, StoreError::InvalidArgument(_)), "{err}");
    }
    // A database that is not there: an error, not a hang or a panic.
    let mut nowhere = db.clone();
    nowhere.dbname("no_such_database");
    let err = PostgresStore::connect(nowhere).await.unwrap_err();
    println!("{err}");
}

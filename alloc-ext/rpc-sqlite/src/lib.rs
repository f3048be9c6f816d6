//! # bebop-rpc-sqlite
//!
//! A [`FutureStore`] in a SQLite file, [`SqliteStore`]: the futures of one Bebop RPC server
//! process (`bebop-rpc`), whose results survive a restart of the server (`docs/rpc.md`,
//! "Futures storage").
//!
//! - One connection per store, on a dedicated thread: the async operations send it jobs and
//!   await their answers, so no tokio worker ever blocks on the database. The thread runs
//!   the jobs waiting for it in one transaction (`BEGIN IMMEDIATE`, then one commit for up to
//!   256 of them: a group commit) and answers each only once the commit is done.
//! - WAL mode with `synchronous = NORMAL`: a crash of the process loses nothing that was
//!   answered; a power loss may lose the last transactions.
//! - The schema is created or migrated when the file is opened, recorded in the table
//!   `bebop_schema_version`; a file from a newer version is refused.
//! - Events ([`FutureStore::subscribe`]) reach every store of the process opened on the same
//!   file; other processes sharing the file see its futures but not its events (the
//!   PostgreSQL store, `bebop-rpc-postgres`, is the one for several server processes).
//!
//! ```
//! use bebop_rpc::futures::{FutureStore, Insertion, NewFuture, Outcome, StoreConfig};
//! use bebop_rpc_sqlite::SqliteStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::env::temp_dir().join(format!("bebop-sqlite-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("futures.db");
//!
//! let store = SqliteStore::open_with_config(&path, StoreConfig::new("node-1")).await?;
//! let Insertion::Inserted(id) = store.insert(NewFuture::new("alice", 0x1234)).await? else {
//!     unreachable!()
//! };
//! store.complete(id, Outcome::success(b"result".to_vec())).await?;
//! drop(store);
//!
//! // After a restart: the result is still there.
//! let store = SqliteStore::open_with_config(&path, StoreConfig::new("node-1")).await?;
//! store.fail_runner("node-1").await?; // what the previous run left pending
//! let record = store.get(id).await?.expect("kept");
//! assert_eq!(record.result().unwrap().unwrap().0, b"result");
//! # drop(store);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak, mpsc};
use std::time::{Duration, SystemTime};

use bebop_rpc::futures::{
    Batch, BoxFuture, BoxStream, Cancellation, Counts, Event, EventStream, FETCH_BUDGET,
    FETCH_CHUNK, FutureId, FutureRecord, FutureStore, Insertion, MAX_PAGE, NewFuture, Outcome,
    OutcomeColumns, Page, RESTARTED_DETAIL, Retention, StoreConfig, StoreError, broadcast_stream,
    fetch_in_batches, from_micros, to_micros,
};
use bebop_runtime::rpc::StatusCode;
use rusqlite::types::FromSql;
use rusqlite::{Connection, OptionalExtension, Row, ToSql};
use tokio::sync::{broadcast, oneshot};

/// The schema version this crate writes (table `bebop_schema_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// The migrations, the first from an empty file to version 1.
const MIGRATIONS: &[&str] = &[r"
CREATE TABLE futures (
    id BLOB NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    owner TEXT NOT NULL,
    idempotency_key BLOB CHECK (idempotency_key IS NULL OR length(idempotency_key) = 16),
    method_id INTEGER NOT NULL,
    state INTEGER NOT NULL,           -- 0 pending, 1 succeeded, 2 failed, 3 cancelled, 4 discarded
    payload BLOB,
    metadata BLOB,                    -- a Bebop map[string, string]
    code INTEGER,
    detail TEXT,
    result_bytes INTEGER NOT NULL DEFAULT 0,
    discard_result INTEGER NOT NULL,
    runner TEXT NOT NULL,
    created_at INTEGER NOT NULL,      -- microseconds since 1970
    completed_at INTEGER
);
-- One holder per key: cancelled futures release theirs.
CREATE UNIQUE INDEX futures_key ON futures (idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state <> 3;
CREATE INDEX futures_owner ON futures (owner, id) WHERE state IN (1, 2, 3);
CREATE INDEX futures_pending ON futures (runner) WHERE state = 0;
CREATE INDEX futures_completed ON futures (completed_at) WHERE state <> 0;
"];

/// The most jobs one transaction runs.
const MAX_BATCH: usize = 256;

/// How many rows one eviction job deletes.
const EVICT_BATCH: i64 = 5000;

/// How long an operation waits for another connection's lock on the file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const COLUMNS: &str = "id, owner, idempotency_key, method_id, state, payload, metadata, code, \
                       detail, result_bytes, discard_result, runner, created_at, completed_at";

type Reply = Box<dyn FnOnce(Result<(), String>) + Send>;
type Job = Box<dyn FnOnce(Result<&Connection, String>) -> Reply + Send>;
type Bus = broadcast::Sender<Event>;

/// A [`FutureStore`] in a SQLite file (see the [crate] documentation). Cheap to
/// clone: clones share the connection.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    jobs: mpsc::Sender<Job>,
    bus: Arc<Bus>,
    config: StoreConfig,
    path: PathBuf,
    fetch_sql: String,
    page_sql: String,
}

/// The event channels of the files open in this process, so that every store on one file
/// shares one.
static BUSES: Mutex<Vec<(PathBuf, Weak<Bus>)>> = Mutex::new(Vec::new());

fn bus_for(path: &Path, capacity: usize) -> Arc<Bus> {
    let mut buses = BUSES.lock().unwrap_or_else(PoisonError::into_inner);
    buses.retain(|(_, bus)| bus.strong_count() > 0);
    if let Some(bus) = buses
        .iter()
        .find(|(p, _)| p == path)
        .and_then(|(_, b)| b.upgrade())
    {
        return bus;
    }
    let (sender, _) = broadcast::channel(capacity.max(1));
    let bus = Arc::new(sender);
    buses.push((path.to_path_buf(), Arc::downgrade(&bus)));
    bus
}

fn backend(e: rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            StoreError::Unavailable(format!("the SQLite file is locked: {e}"))
        }
        e => StoreError::backend(e),
    }
}

fn stopped() -> StoreError {
    StoreError::Unavailable("the SQLite store's thread stopped".to_owned())
}

impl SqliteStore {
    /// Opens (creating it if needed) the store in the SQLite file at `path`, with the
    /// default settings.
    ///
    /// # Errors
    ///
    /// When the file cannot be opened or is not a SQLite database, when its schema is from
    /// a newer version of this crate, or when the migration fails.
    pub async fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        Self::open_with_config(path, StoreConfig::default()).await
    }

    /// Opens (creating it if needed) the store in the SQLite file at `path`.
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open); also [`StoreError::InvalidArgument`] for an empty runner
    /// name.
    pub async fn open_with_config(
        path: impl AsRef<Path>,
        config: StoreConfig,
    ) -> Result<SqliteStore, StoreError> {
        if config.runner.is_empty() {
            return Err(StoreError::InvalidArgument(
                "the runner name is empty".to_owned(),
            ));
        }
        let path = path.as_ref().to_path_buf();
        let (ready_tx, ready_rx) = oneshot::channel::<Result<PathBuf, StoreError>>();
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let thread_path = path.clone();
        std::thread::Builder::new()
            .name("bebop-futures-sqlite".to_owned())
            .spawn(move || match open_connection(&thread_path) {
                Ok(conn) => {
                    let canonical = std::fs::canonicalize(&thread_path).unwrap_or(thread_path);
                    if ready_tx.send(Ok(canonical)).is_ok() {
                        worker(conn, jobs_rx);
                    }
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            })
            .map_err(|e| StoreError::Unavailable(format!("cannot start a thread: {e}")))?;
        let canonical = ready_rx.await.map_err(|_| stopped())??;
        let bus = bus_for(&canonical, config.event_capacity);
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                jobs: jobs_tx,
                bus,
                config,
                path,
                fetch_sql: fetch_sql(),
                page_sql: page_sql(),
            }),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the store's thread, inside the current transaction; its events are
    /// published once the transaction commits.
    fn call<T, F>(&self, f: F) -> BoxFuture<'static, Result<T, StoreError>>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<(T, Vec<Event>), StoreError> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let bus = self.inner.bus.clone();
        let job: Job = Box::new(move |conn| {
            let result = match conn {
                Ok(conn) => f(conn),
                Err(e) => Err(StoreError::Unavailable(format!(
                    "cannot begin a transaction: {e}"
                ))),
            };
            Box::new(move |commit: Result<(), String>| {
                let out = match (result, commit) {
                    (Ok((value, events)), Ok(())) => {
                        for event in events {
                            let _ = bus.send(event);
                        }
                        Ok(value)
                    }
                    (Ok(_), Err(e)) => Err(StoreError::backend(format!(
                        "the transaction did not commit: {e}"
                    ))),
                    (Err(e), _) => Err(e),
                };
                let _ = tx.send(out);
            })
        });
        let sent = self.inner.jobs.send(job).is_ok();
        Box::pin(async move {
            if !sent {
                return Err(stopped());
            }
            rx.await.unwrap_or_else(|_| Err(stopped()))
        })
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .field("runner", &self.inner.config.runner)
            .finish_non_exhaustive()
    }
}

fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path).map_err(backend)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(backend)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Unavailable(format!(
            "SQLite did not switch {} to WAL mode (it is in {mode} mode)",
            path.display()
        )));
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL")
        .map_err(backend)?;
    migrate(&conn)?;
    Ok(conn)
}

/// Creates the schema or brings it to [`SCHEMA_VERSION`], in one transaction.
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(backend)?;
    let result = (|| {
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS bebop_schema_version (version INTEGER NOT NULL)",
        )
        .map_err(backend)?;
        let version: Option<i64> = conn
            .query_row("SELECT max(version) FROM bebop_schema_version", [], |r| {
                r.get(0)
            })
            .map_err(backend)?;
        let version = version.unwrap_or(0);
        if version > SCHEMA_VERSION {
            return Err(StoreError::Corrupt(format!(
                "the file has futures schema version {version}, from a newer bebop-rpc-sqlite; \
                 this one knows versions up to {SCHEMA_VERSION}"
            )));
        }
        let from = usize::try_from(version)
            .map_err(|_| StoreError::Corrupt(format!("futures schema version {version}")))?;
        for (n, sql) in MIGRATIONS.iter().enumerate().skip(from) {
            conn.execute_batch(sql).map_err(backend)?;
            conn.execute("DELETE FROM bebop_schema_version", [])
                .map_err(backend)?;
            conn.execute(
                "INSERT INTO bebop_schema_version (version) VALUES (?1)",
                [n as i64 + 1],
            )
            .map_err(backend)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT").map_err(backend),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// The store's thread: runs the jobs waiting, up to [`MAX_BATCH`] per transaction, until
/// every store handle is dropped.
fn worker(conn: Connection, jobs: mpsc::Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        run_batch(&conn, batch);
    }
}

fn run_batch(conn: &Connection, batch: Vec<Job>) {
    let mut jobs = batch.into_iter();
    let mut replies: Vec<Reply> = Vec::new();
    let begin = |replies: &mut Vec<Reply>, jobs: &mut std::vec::IntoIter<Job>| match conn
        .execute_batch("BEGIN IMMEDIATE")
    {
        Ok(()) => true,
        Err(e) => {
            let e = e.to_string();
            for reply in replies.drain(..) {
                reply(Err(e.clone()));
            }
            for job in jobs.by_ref() {
                job(Err(e.clone()))(Err(e.clone()));
            }
            false
        }
    };
    if !begin(&mut replies, &mut jobs) {
        return;
    }
    while let Some(job) = jobs.next() {
        replies.push(job(Ok(conn)));
        if conn.is_autocommit() {
            // SQLite rolled the transaction back (an I/O error, a full disk): nothing done
            // in it is kept.
            for reply in replies.drain(..) {
                reply(Err("SQLite rolled the transaction back".to_owned()));
            }
            if !begin(&mut replies, &mut jobs) {
                return;
            }
        }
    }
    let commit = conn.execute_batch("COMMIT").map_err(|e| e.to_string());
    if commit.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    for reply in replies {
        reply(commit.clone());
    }
}

fn col<T: FromSql>(row: &Row<'_>, i: usize) -> Result<T, StoreError> {
    row.get(i)
        .map_err(|e| StoreError::Corrupt(format!("column {i} of a future: {e}")))
}

fn record(row: &Row<'_>) -> Result<FutureRecord, StoreError> {
    let id = FutureId::from_slice(&col::<Vec<u8>>(row, 0)?)
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let key = match col::<Option<Vec<u8>>>(row, 2)? {
        None => None,
        Some(bytes) => Some(
            FutureId::from_slice(&bytes)
                .map_err(|e| StoreError::Corrupt(format!("idempotency key: {e}")))?
                .uuid(),
        ),
    };
    let method_id = u32::try_from(col::<i64>(row, 3)?)
        .map_err(|_| StoreError::Corrupt("a method id beyond 32 bits".to_owned()))?;
    let state = i16::try_from(col::<i64>(row, 4)?)
        .map_err(|_| StoreError::Corrupt("a state beyond 16 bits".to_owned()))?;
    let code = match col::<Option<i64>>(row, 7)? {
        None => None,
        Some(c) => {
            Some(i16::try_from(c).map_err(|_| StoreError::Corrupt(format!("status code {c}")))?)
        }
    };
    let state = OutcomeColumns {
        state,
        payload: col(row, 5)?,
        metadata: col(row, 6)?,
        code,
        detail: col(row, 8)?,
        size: col(row, 9)?,
    }
    .into_state()?;
    Ok(FutureRecord {
        id,
        owner: col(row, 1)?,
        idempotency_key: key,
        method_id,
        state,
        discard_result: col(row, 10)?,
        runner: col(row, 11)?,
        created_at: from_micros(col(row, 12)?)?,
        completed_at: col::<Option<i64>>(row, 13)?.map(from_micros).transpose()?,
    })
}

fn now_micros() -> i64 {
    to_micros(SystemTime::now())
}

fn fetch_sql() -> String {
    let ids: Vec<String> = (0..FETCH_CHUNK).map(|n| format!("?{}", n + 3)).collect();
    let budget = FETCH_CHUNK + 3;
    let cols: Vec<String> = COLUMNS.split(", ").map(|c| format!("f.{c}")).collect();
    format!(
        "SELECT {cols}, c.total FROM futures f JOIN (\
            SELECT id, sum(result_bytes) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) - result_bytes AS before, \
                   count(*) OVER () AS total \
            FROM futures WHERE owner = ?1 AND state IN (1, 2, 3) AND id > ?2 AND id IN ({ids})\
         ) c ON c.id = f.id WHERE c.before < ?{budget} ORDER BY f.id",
        cols = cols.join(", "),
        ids = ids.join(", "),
    )
}

fn page_sql() -> String {
    let cols: Vec<String> = COLUMNS.split(", ").map(|c| format!("f.{c}")).collect();
    format!(
        "SELECT {cols}, c.total FROM futures f JOIN (\
            SELECT id, sum(result_bytes) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) - result_bytes AS before, \
                   count(*) OVER () AS total \
            FROM (SELECT id, result_bytes FROM futures \
                  WHERE owner = ?1 AND state IN (1, 2, 3) AND id > ?2 ORDER BY id LIMIT ?3)\
         ) c ON c.id = f.id WHERE c.before < ?4 ORDER BY f.id",
        cols = cols.join(", "),
    )
}

/// Reads the rows of a fetch or page query: the records and the `total` column.
fn records_with_total(
    rows: &mut rusqlite::Rows<'_>,
) -> Result<(Vec<FutureRecord>, i64), StoreError> {
    let mut records = Vec::new();
    let mut total = 0i64;
    while let Some(row) = rows.next().map_err(backend)? {
        records.push(record(row)?);
        total = col(row, 14)?;
    }
    Ok((records, total))
}

fn insert_job(
    conn: &Connection,
    config: &StoreConfig,
    new: &NewFuture,
) -> Result<Insertion, StoreError> {
    if let Some(key) = new.idempotency_key {
        let holder = conn
            .prepare_cached(
                "SELECT owner, id FROM futures WHERE idempotency_key = ?1 AND state <> 3",
            )
            .map_err(backend)?
            .query_row([&key.as_bytes()[..]], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .optional()
            .map_err(backend)?;
        if let Some((owner, id)) = holder {
            if owner != new.owner {
                return Ok(Insertion::KeyOfAnotherOwner);
            }
            let id = FutureId::from_slice(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            return Ok(Insertion::Existing(id));
        }
    }
    let limit = i64::try_from(config.max_pending).unwrap_or(i64::MAX);
    let pending: i64 = conn
        .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM futures WHERE state = 0 LIMIT ?1)")
        .map_err(backend)?
        .query_row([limit], |r| r.get(0))
        .map_err(backend)?;
    if pending >= limit {
        return Ok(Insertion::Full {
            limit: config.max_pending,
        });
    }
    let id = FutureId::random()?;
    let key = new.idempotency_key.map(|k| *k.as_bytes());
    conn.prepare_cached(
        "INSERT INTO futures (id, owner, idempotency_key, method_id, state, discard_result, \
         runner, created_at) VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7)",
    )
    .map_err(backend)?
    .execute(rusqlite::params![
        &id.as_bytes()[..],
        new.owner,
        key.as_ref().map(|k| &k[..]),
        i64::from(new.method_id),
        new.discard_result,
        config.runner,
        now_micros(),
    ])
    .map_err(backend)?;
    Ok(Insertion::Inserted(id))
}

impl FutureStore for SqliteStore {
    fn config(&self) -> &StoreConfig {
        &self.inner.config
    }

    fn insert(&self, future: NewFuture) -> BoxFuture<'_, Result<Insertion, StoreError>> {
        if let Err(e) = self.inner.config.check_owner(&future.owner) {
            return Box::pin(std::future::ready(Err(e)));
        }
        let config = self.inner.config.clone();
        self.call(move |conn| Ok((insert_job(conn, &config, &future)?, Vec::new())))
    }

    fn complete(&self, id: FutureId, outcome: Outcome) -> BoxFuture<'_, Result<bool, StoreError>> {
        if let Err(e) = self.inner.config.check_outcome(&outcome) {
            return Box::pin(std::future::ready(Err(e)));
        }
        let c = OutcomeColumns::of(outcome);
        self.call(move |conn| {
            let owner: Option<String> = conn
                .prepare_cached(
                    "UPDATE futures SET state = ?2, payload = ?3, metadata = ?4, code = ?5, \
                     detail = ?6, result_bytes = ?7, completed_at = ?8 \
                     WHERE id = ?1 AND state = 0 RETURNING owner",
                )
                .map_err(backend)?
                .query_row(
                    rusqlite::params![
                        &id.as_bytes()[..],
                        c.state,
                        c.payload,
                        c.metadata,
                        c.code,
                        c.detail,
                        c.size,
                        now_micros()
                    ],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?;
            Ok(match owner {
                Some(owner) => (true, vec![Event::Completed { id, owner }]),
                None => (false, Vec::new()),
            })
        })
    }

    fn get(&self, id: FutureId) -> BoxFuture<'_, Result<Option<FutureRecord>, StoreError>> {
        self.call(move |conn| {
            let mut stmt = conn
                .prepare_cached(&format!("SELECT {COLUMNS} FROM futures WHERE id = ?1"))
                .map_err(backend)?;
            let mut rows = stmt.query([&id.as_bytes()[..]]).map_err(backend)?;
            let found = match rows.next().map_err(backend)? {
                Some(row) => Some(record(row)?),
                None => None,
            };
            Ok((found, Vec::new()))
        })
    }

    fn fetch_completed<'a>(
        &'a self,
        owner: &'a str,
        ids: &'a [FutureId],
    ) -> BoxStream<'a, Result<FutureRecord, StoreError>> {
        fetch_in_batches(ids, move |chunk, after| {
            let owner = owner.to_owned();
            let inner = self.inner.clone();
            self.call(move |conn| {
                let mut stmt = conn.prepare_cached(&inner.fetch_sql).map_err(backend)?;
                let pad = chunk.last().copied().unwrap_or(FutureId::NIL);
                let budget = FETCH_BUDGET as i64;
                let mut params: Vec<&dyn ToSql> = Vec::with_capacity(FETCH_CHUNK + 3);
                params.push(&owner);
                let after_bytes = &after.as_bytes()[..];
                params.push(&after_bytes);
                let id_bytes: Vec<&[u8]> = (0..FETCH_CHUNK)
                    .map(|n| &chunk.get(n).unwrap_or(&pad).as_bytes()[..])
                    .collect();
                for b in &id_bytes {
                    params.push(b);
                }
                params.push(&budget);
                let mut rows = stmt.query(&params[..]).map_err(backend)?;
                let (records, total) = records_with_total(&mut rows)?;
                let more = (records.len() as i64) < total;
                Ok((Batch { records, more }, Vec::new()))
            })
        })
    }

    fn completed_page<'a>(
        &'a self,
        owner: &'a str,
        after: Option<FutureId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Page, StoreError>> {
        let owner = owner.to_owned();
        let inner = self.inner.clone();
        let limit = limit.clamp(1, MAX_PAGE) as i64;
        let after = after.unwrap_or(FutureId::NIL);
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(&inner.page_sql).map_err(backend)?;
            let mut rows = stmt
                .query(rusqlite::params![
                    owner,
                    &after.as_bytes()[..],
                    limit,
                    FETCH_BUDGET as i64
                ])
                .map_err(backend)?;
            let (records, total) = records_with_total(&mut rows)?;
            let more = (records.len() as i64) < total || total == limit;
            let next = if more {
                records.last().map(|r| r.id)
            } else {
                None
            };
            Ok((Page { records, next }, Vec::new()))
        })
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a str,
        id: FutureId,
    ) -> BoxFuture<'a, Result<Cancellation, StoreError>> {
        let owner = owner.to_owned();
        self.call(move |conn| {
            let found: Option<(String, i64, String)> = conn
                .prepare_cached("SELECT owner, state, runner FROM futures WHERE id = ?1")
                .map_err(backend)?
                .query_row([&id.as_bytes()[..]], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()
                .map_err(backend)?;
            let Some((holder, state, runner)) = found else {
                return Ok((Cancellation::NotFound, Vec::new()));
            };
            if holder != owner {
                return Ok((Cancellation::NotOwner, Vec::new()));
            }
            if state != 0 {
                return Ok((Cancellation::AlreadyCompleted, Vec::new()));
            }
            conn.prepare_cached(
                "UPDATE futures SET state = 3, completed_at = ?2 WHERE id = ?1 AND state = 0",
            )
            .map_err(backend)?
            .execute(rusqlite::params![&id.as_bytes()[..], now_micros()])
            .map_err(backend)?;
            let events = vec![
                Event::Completed { id, owner },
                Event::CancelRequested {
                    id,
                    runner: runner.clone(),
                },
            ];
            Ok((Cancellation::Cancelled { runner }, events))
        })
    }

    fn discard(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.call(move |conn| {
            let n = conn
                .prepare_cached(
                    "UPDATE futures SET state = 4, payload = NULL, metadata = NULL, code = NULL, \
                     detail = NULL, result_bytes = 0 WHERE id = ?1 AND state IN (1, 2)",
                )
                .map_err(backend)?
                .execute([&id.as_bytes()[..]])
                .map_err(backend)?;
            Ok((n > 0, Vec::new()))
        })
    }

    fn delete(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.call(move |conn| {
            let n = conn
                .prepare_cached("DELETE FROM futures WHERE id = ?1")
                .map_err(backend)?
                .execute([&id.as_bytes()[..]])
                .map_err(backend)?;
            Ok((n > 0, Vec::new()))
        })
    }

    fn evict(&self, retention: Retention) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            let mut evicted = 0u64;
            let age = i64::try_from(retention.max_age.as_micros()).unwrap_or(i64::MAX);
            loop {
                let n = self
                    .call(move |conn| {
                        let cutoff = now_micros().saturating_sub(age);
                        let n = conn
                            .prepare_cached(
                                "DELETE FROM futures WHERE rowid IN (SELECT rowid FROM futures \
                                 WHERE state <> 0 AND completed_at < ?1 LIMIT ?2)",
                            )
                            .map_err(backend)?
                            .execute([cutoff, EVICT_BATCH])
                            .map_err(backend)?;
                        Ok((n as u64, Vec::new()))
                    })
                    .await?;
                evicted += n;
                if n < EVICT_BATCH as u64 {
                    break;
                }
            }
            if let Some(max) = retention.max_completed {
                let max = i64::try_from(max).unwrap_or(i64::MAX);
                loop {
                    let n = self
                        .call(move |conn| {
                            let completed: i64 = conn
                                .prepare_cached("SELECT count(*) FROM futures WHERE state <> 0")
                                .map_err(backend)?
                                .query_row([], |r| r.get(0))
                                .map_err(backend)?;
                            let excess = (completed - max).clamp(0, EVICT_BATCH);
                            if excess == 0 {
                                return Ok((0, Vec::new()));
                            }
                            let n = conn
                                .prepare_cached(
                                    "DELETE FROM futures WHERE rowid IN (SELECT rowid FROM \
                                     futures WHERE state <> 0 ORDER BY completed_at, id LIMIT ?1)",
                                )
                                .map_err(backend)?
                                .execute([excess])
                                .map_err(backend)?;
                            Ok((n as u64, Vec::new()))
                        })
                        .await?;
                    evicted += n;
                    if n < EVICT_BATCH as u64 {
                        break;
                    }
                }
            }
            Ok(evicted)
        })
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, StoreError>> {
        self.call(|conn| {
            let count = |sql: &str| -> Result<u64, StoreError> {
                let n: i64 = conn
                    .prepare_cached(sql)
                    .map_err(backend)?
                    .query_row([], |r| r.get(0))
                    .map_err(backend)?;
                Ok(n.max(0) as u64)
            };
            let counts = Counts {
                pending: count("SELECT count(*) FROM futures WHERE state = 0")?,
                completed: count("SELECT count(*) FROM futures WHERE state <> 0")?,
            };
            Ok((counts, Vec::new()))
        })
    }

    fn fail_runner<'a>(&'a self, runner: &'a str) -> BoxFuture<'a, Result<u64, StoreError>> {
        let runner = runner.to_owned();
        self.call(move |conn| {
            let code = i64::from(u8::from(StatusCode::Unavailable));
            let mut stmt = conn
                .prepare_cached(
                    "UPDATE futures SET state = 2, code = ?2, detail = ?3, payload = NULL, \
                     metadata = NULL, result_bytes = ?4, completed_at = ?5 \
                     WHERE runner = ?1 AND state = 0 RETURNING id, owner",
                )
                .map_err(backend)?;
            let mut rows = stmt
                .query(rusqlite::params![
                    runner,
                    code,
                    RESTARTED_DETAIL,
                    RESTARTED_DETAIL.len() as i64,
                    now_micros()
                ])
                .map_err(backend)?;
            let mut events = Vec::new();
            while let Some(row) = rows.next().map_err(backend)? {
                let id = FutureId::from_slice(&col::<Vec<u8>>(row, 0)?)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                events.push(Event::Completed {
                    id,
                    owner: col(row, 1)?,
                });
            }
            Ok((events.len() as u64, events))
        })
    }

    fn subscribe(&self) -> EventStream {
        broadcast_stream(self.inner.bus.subscribe())
    }
}

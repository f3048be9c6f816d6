//! # bebop-rpc-postgres
//!
//! A [`FutureStore`] in PostgreSQL, [`PostgresStore`]: the futures of several Bebop RPC
//! server processes (`bebop-rpc`) sharing one database, each seeing the others' completions
//! and cancel requests (`docs/rpc.md`, "Futures storage").
//!
//! - One table (`bebop_futures` unless [`PostgresOptions::table`] says otherwise), created
//!   with its indexes when absent, under an advisory lock so that servers starting together
//!   do not race; its schema version is kept in the table `<table>_schema`.
//! - Every operation is one statement, so atomic without explicit transactions: a dispatch
//!   is an `INSERT ... ON CONFLICT DO NOTHING` on a partial unique index over the
//!   idempotency keys of the futures not cancelled; a completion, a cancellation and a
//!   restart's failures are `UPDATE ... WHERE state = 0` that notify in the same statement.
//! - Events cross processes with `LISTEN`/`NOTIFY` on a channel named after the table: each
//!   store keeps one connection that only listens. When it breaks, the store reconnects
//!   (after 100 ms, doubling up to 5 s), listens again and sends its subscribers
//!   [`Event::Lagged`]: what was notified in between is lost, and a subscriber reads the
//!   store for what matters to it. Notifications are sent at commit and reach every
//!   listener, this process's included, exactly once each.
//! - The other operations share a few connections ([`PostgresOptions::connections`]),
//!   pipelining concurrent queries; a broken one is replaced by the next operation that
//!   picks it (the operation that saw it break fails with [`StoreError::Unavailable`]).
//! - Times are the database's (`now()`), so that retention is measured on one clock for all
//!   the servers.
//! - Connections are made without TLS (`tokio_postgres::NoTls`): a local socket, or a
//!   network the operator trusts.
//!
//! ```no_run
//! use bebop_rpc::futures::{FutureStore, StoreConfig};
//! use bebop_rpc_postgres::{PostgresOptions, PostgresStore};
//!
//! # async fn run() -> Result<(), bebop_rpc::futures::StoreError> {
//! let pg: tokio_postgres::Config = "host=/run/postgresql user=app dbname=app".parse().expect("valid");
//! let store = PostgresStore::connect_with(PostgresOptions {
//!     store: StoreConfig::new("node-1"),
//!     ..PostgresOptions::new(pg)
//! })
//! .await?;
//! // At startup: what a previous run of node-1 left pending will never complete.
//! store.fail_runner("node-1").await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use bebop_rpc::futures::{
    Batch, BoxFuture, BoxStream, Cancellation, Counts, Event, EventStream, FETCH_BUDGET, FutureId,
    FutureRecord, FutureStore, Insertion, MAX_PAGE, NewFuture, Outcome, OutcomeColumns, Page,
    RESTARTED_DETAIL, Retention, StoreConfig, StoreError, broadcast_stream, fetch_in_batches,
};
use bebop_runtime::rpc::StatusCode;
use futures_util::StreamExt;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, NoTls, Row, Statement};

/// The schema version this crate writes.
pub const SCHEMA_VERSION: i32 = 1;

/// The longest owner a PostgreSQL store accepts: an event carries it in a notification,
/// whose payload PostgreSQL limits to 8000 bytes.
pub const MAX_OWNER_BYTES: usize = 7000;

/// How many rows one eviction statement deletes.
const EVICT_BATCH: i64 = 5000;

/// How often an insert that lost a race on its idempotency key is tried again.
const INSERT_ATTEMPTS: usize = 5;

const COLUMNS: &str = "id, owner, idempotency_key, method_id, state, payload, metadata, code, \
                       detail, result_bytes, discard_result, runner, created_at, completed_at";

/// How to connect, and to which table.
#[derive(Clone, Debug)]
pub struct PostgresOptions {
    /// The database.
    pub pg: tokio_postgres::Config,
    /// The table of futures, also the name of the notification channel: lowercase ASCII
    /// letters, digits and `_`, starting with a letter or `_`, at most 40 bytes. Stores on
    /// different tables of one database are independent.
    pub table: String,
    /// How many connections the operations share (besides the listening one); at least 1.
    pub connections: usize,
    /// The store's settings; [`StoreConfig::max_owner_bytes`] may not exceed
    /// [`MAX_OWNER_BYTES`].
    pub store: StoreConfig,
}

impl PostgresOptions {
    /// Table `bebop_futures`, 4 connections, the default settings.
    pub fn new(pg: tokio_postgres::Config) -> Self {
        PostgresOptions {
            pg,
            table: "bebop_futures".to_owned(),
            connections: 4,
            store: StoreConfig::default(),
        }
    }

    fn check(&self) -> Result<(), StoreError> {
        let t = self.table.as_bytes();
        let valid = !t.is_empty()
            && t.len() <= 40
            && (t[0].is_ascii_lowercase() || t[0] == b'_')
            && t.iter()
                .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
        if !valid {
            return Err(StoreError::InvalidArgument(format!(
                "{:?} is not a table name this store uses: lowercase ASCII letters, digits \
                 and _, starting with a letter or _, at most 40 bytes",
                self.table
            )));
        }
        if self.connections == 0 {
            return Err(StoreError::InvalidArgument(
                "a PostgreSQL store needs at least one connection".to_owned(),
            ));
        }
        if self.store.runner.is_empty() || self.store.runner.len() > MAX_OWNER_BYTES {
            return Err(StoreError::InvalidArgument(format!(
                "the runner name must have 1 to {MAX_OWNER_BYTES} bytes"
            )));
        }
        if self.store.max_owner_bytes > MAX_OWNER_BYTES {
            return Err(StoreError::InvalidArgument(format!(
                "max_owner_bytes {} is more than a notification carries ({MAX_OWNER_BYTES})",
                self.store.max_owner_bytes
            )));
        }
        Ok(())
    }
}

/// The SQL of every statement, for one table.
struct Sql {
    insert: String,
    complete: String,
    get: String,
    fetch: String,
    page: String,
    cancel: String,
    owner_of: String,
    discard: String,
    delete: String,
    evict_age: String,
    evict_oldest: String,
    count_completed: String,
    counts: String,
    fail_runner: String,
}

impl Sql {
    fn new(t: &str) -> Sql {
        let prefixed = || {
            let mut s = String::new();
            for (i, c) in COLUMNS.split(", ").enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                let _ = write!(s, "f.{c}");
            }
            s
        };
        let notify_completed = "pg_notify($CH, 'c' || u.id::text || ' ' || u.owner)";
        Sql {
            insert: format!(
                "WITH existing AS (\
                    SELECT id, owner FROM {t} \
                    WHERE $3::uuid IS NOT NULL AND idempotency_key = $3::uuid AND state <> 3\
                 ), room AS (\
                    SELECT count(*) < $7::bigint AS ok \
                    FROM (SELECT 1 FROM {t} WHERE state = 0 LIMIT $7::bigint) p\
                 ), ins AS (\
                    INSERT INTO {t} (id, owner, idempotency_key, method_id, state, \
                                     discard_result, runner, created_at) \
                    SELECT $1::uuid, $2::text, $3::uuid, $4::bigint, 0, $5::boolean, $6::text, now() \
                    WHERE NOT EXISTS (SELECT 1 FROM existing) AND (SELECT ok FROM room) \
                    ON CONFLICT (idempotency_key) \
                        WHERE idempotency_key IS NOT NULL AND state <> 3 DO NOTHING \
                    RETURNING id\
                 ) \
                 SELECT 0::smallint, id, NULL::text FROM ins \
                 UNION ALL SELECT 1::smallint, id, owner FROM existing \
                 UNION ALL SELECT 2::smallint, NULL::uuid, NULL::text FROM room \
                    WHERE NOT ok AND NOT EXISTS (SELECT 1 FROM existing)"
            ),
            complete: format!(
                "WITH u AS (\
                    UPDATE {t} SET state = $2::smallint, payload = $3::bytea, metadata = $4::bytea, \
                        code = $5::smallint, detail = $6::text, result_bytes = $7::bigint, \
                        completed_at = now() \
                    WHERE id = $1::uuid AND state = 0 RETURNING id, owner\
                 ) SELECT u.id, {} FROM u",
                notify_completed.replace("$CH", "$8::text")
            ),
            get: format!("SELECT {COLUMNS} FROM {t} WHERE id = $1::uuid"),
            fetch: format!(
                "SELECT {cols}, c.total FROM {t} f JOIN (\
                    SELECT id, (sum(result_bytes) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING))::bigint \
                               - result_bytes AS before, \
                           count(*) OVER () AS total \
                    FROM {t} WHERE owner = $1::text AND id = ANY($2::uuid[]) AND id > $3::uuid \
                        AND state IN (1, 2, 3)\
                 ) c ON c.id = f.id WHERE c.before < $4::bigint ORDER BY f.id",
                cols = prefixed()
            ),
            page: format!(
                "SELECT {cols}, c.total FROM {t} f JOIN (\
                    SELECT id, (sum(result_bytes) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING))::bigint \
                               - result_bytes AS before, \
                           count(*) OVER () AS total \
                    FROM (SELECT id, result_bytes FROM {t} \
                          WHERE owner = $1::text AND state IN (1, 2, 3) AND id > $2::uuid \
                          ORDER BY id LIMIT $3::bigint) p\
                 ) c ON c.id = f.id WHERE c.before < $4::bigint ORDER BY f.id",
                cols = prefixed()
            ),
            cancel: format!(
                "WITH u AS (\
                    UPDATE {t} SET state = 3, completed_at = now() \
                    WHERE id = $1::uuid AND owner = $2::text AND state = 0 \
                    RETURNING id, owner, runner\
                 ) SELECT u.runner, {}, pg_notify($3::text, 'x' || u.id::text || ' ' || u.runner) \
                   FROM u",
                notify_completed.replace("$CH", "$3::text")
            ),
            owner_of: format!("SELECT owner FROM {t} WHERE id = $1::uuid"),
            discard: format!(
                "UPDATE {t} SET state = 4, payload = NULL, metadata = NULL, code = NULL, \
                 detail = NULL, result_bytes = 0 WHERE id = $1::uuid AND state IN (1, 2)"
            ),
            delete: format!("DELETE FROM {t} WHERE id = $1::uuid"),
            evict_age: format!(
                "DELETE FROM {t} WHERE id IN (SELECT id FROM {t} WHERE state <> 0 \
                 AND completed_at < now() - $1::bigint * interval '1 microsecond' LIMIT $2::bigint)"
            ),
            evict_oldest: format!(
                "DELETE FROM {t} WHERE id IN (SELECT id FROM {t} WHERE state <> 0 \
                 ORDER BY completed_at, id LIMIT $1::bigint)"
            ),
            count_completed: format!("SELECT count(*) FROM {t} WHERE state <> 0"),
            counts: format!(
                "SELECT (SELECT count(*) FROM {t} WHERE state = 0), \
                        (SELECT count(*) FROM {t} WHERE state <> 0)"
            ),
            fail_runner: format!(
                "WITH u AS (\
                    UPDATE {t} SET state = 2, code = $2::smallint, detail = $3::text, payload = NULL, \
                        metadata = NULL, result_bytes = octet_length($3::text), completed_at = now() \
                    WHERE runner = $1::text AND state = 0 RETURNING id, owner\
                 ) SELECT u.id, {} FROM u",
                notify_completed.replace("$CH", "$4::text")
            ),
        }
    }

    fn all(&self) -> [&str; 14] {
        [
            &self.insert,
            &self.complete,
            &self.get,
            &self.fetch,
            &self.page,
            &self.cancel,
            &self.owner_of,
            &self.discard,
            &self.delete,
            &self.evict_age,
            &self.evict_oldest,
            &self.count_completed,
            &self.counts,
            &self.fail_runner,
        ]
    }
}

fn migrations(t: &str) -> Vec<String> {
    vec![format!(
        "CREATE TABLE IF NOT EXISTS {t} (\
            id uuid PRIMARY KEY, \
            owner text NOT NULL, \
            idempotency_key uuid, \
            method_id bigint NOT NULL, \
            state smallint NOT NULL, \
            payload bytea, \
            metadata bytea, \
            code smallint, \
            detail text, \
            result_bytes bigint NOT NULL DEFAULT 0, \
            discard_result boolean NOT NULL, \
            runner text NOT NULL, \
            created_at timestamptz NOT NULL, \
            completed_at timestamptz\
         );\
         COMMENT ON COLUMN {t}.state IS '0 pending, 1 succeeded, 2 failed, 3 cancelled, 4 discarded';\
         CREATE UNIQUE INDEX IF NOT EXISTS {t}_key ON {t} (idempotency_key) \
            WHERE idempotency_key IS NOT NULL AND state <> 3;\
         CREATE INDEX IF NOT EXISTS {t}_owner ON {t} (owner, id) WHERE state IN (1, 2, 3);\
         CREATE INDEX IF NOT EXISTS {t}_pending ON {t} (runner) WHERE state = 0;\
         CREATE INDEX IF NOT EXISTS {t}_completed ON {t} (completed_at) WHERE state <> 0;"
    )]
}

fn pg_error(e: tokio_postgres::Error) -> StoreError {
    let transient = e.is_closed()
        || e.code().is_some_and(|c| {
            let c = c.code();
            // Connection exceptions, serialization failures and deadlocks, operator
            // intervention (shutdown, cannot connect now).
            c.starts_with("08") || c.starts_with("40") || c.starts_with("57P")
        })
        || std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>());
    if transient {
        StoreError::Unavailable(format!("PostgreSQL: {}", PgError(e)))
    } else {
        StoreError::backend(PgError(e))
    }
}

/// A PostgreSQL error whose text includes the server's message (`tokio_postgres::Error`
/// says only "db error" for those).
#[derive(Debug)]
struct PgError(tokio_postgres::Error);

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_db_error() {
            Some(db) => write!(
                f,
                "{} {}: {}",
                db.severity(),
                db.code().code(),
                db.message()
            ),
            None => write!(f, "{}", self.0),
        }
    }
}

impl std::error::Error for PgError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

fn col<'a, T: tokio_postgres::types::FromSql<'a>>(row: &'a Row, i: usize) -> Result<T, StoreError> {
    row.try_get(i)
        .map_err(|e| StoreError::Corrupt(format!("column {i} of a future: {e}")))
}

fn to_pg(id: FutureId) -> uuid::Uuid {
    uuid::Uuid::from_bytes(*id.as_bytes())
}

fn from_pg(id: uuid::Uuid) -> FutureId {
    FutureId::from_array(*id.as_bytes())
}

fn record(row: &Row) -> Result<FutureRecord, StoreError> {
    let method_id = u32::try_from(col::<i64>(row, 3)?)
        .map_err(|_| StoreError::Corrupt("a method id beyond 32 bits".to_owned()))?;
    let state = OutcomeColumns {
        state: col(row, 4)?,
        payload: col(row, 5)?,
        metadata: col(row, 6)?,
        code: col(row, 7)?,
        detail: col(row, 8)?,
        size: col(row, 9)?,
    }
    .into_state()?;
    Ok(FutureRecord {
        id: from_pg(col(row, 0)?),
        owner: col(row, 1)?,
        idempotency_key: col::<Option<uuid::Uuid>>(row, 2)?
            .map(|k| bebop_runtime::Uuid::from_array(*k.as_bytes())),
        method_id,
        state,
        discard_result: col(row, 10)?,
        runner: col(row, 11)?,
        created_at: col::<SystemTime>(row, 12)?,
        completed_at: col(row, 13)?,
    })
}

/// Reads the rows of a fetch or page query: the records and the `total` column.
fn records_with_total(rows: &[Row]) -> Result<(Vec<FutureRecord>, i64), StoreError> {
    let mut records = Vec::with_capacity(rows.len());
    let mut total = 0;
    for row in rows {
        records.push(record(row)?);
        total = col(row, 14)?;
    }
    Ok((records, total))
}

/// The event of a notification on the store's channel: `c<id> <owner>` for a completion,
/// `x<id> <runner>` for a cancel request.
fn parse_notification(payload: &str) -> Option<Event> {
    let kind = payload.get(..1)?;
    let id = payload.get(1..37)?.parse::<FutureId>().ok()?;
    let rest = payload.get(37..)?.strip_prefix(' ')?.to_owned();
    match kind {
        "c" => Some(Event::Completed { id, owner: rest }),
        "x" => Some(Event::CancelRequested { id, runner: rest }),
        _ => None,
    }
}

/// One connection of the pool, with its prepared statements (in the order of
/// [`Sql::all`]).
struct Conn {
    client: Client,
    stmts: Vec<Statement>,
}

impl Conn {
    async fn open(options: &PostgresOptions, sql: &Sql) -> Result<Conn, StoreError> {
        let mut pg = options.pg.clone();
        pg.application_name(format!("bebop-futures {}", options.table));
        let (client, connection) = pg.connect(NoTls).await.map_err(pg_error)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "a connection of the futures store failed");
            }
        });
        let prepared =
            futures_util::future::join_all(sql.all().iter().map(|s| client.prepare(s))).await;
        let mut stmts = Vec::with_capacity(prepared.len());
        for p in prepared {
            stmts.push(p.map_err(pg_error)?);
        }
        Ok(Conn { client, stmts })
    }
}

#[derive(Clone, Copy)]
enum Stmt {
    Insert,
    Complete,
    Get,
    Fetch,
    Page,
    Cancel,
    OwnerOf,
    Discard,
    Delete,
    EvictAge,
    EvictOldest,
    CountCompleted,
    Counts,
    FailRunner,
}

type Bus = broadcast::Sender<Event>;

/// A [`FutureStore`] in PostgreSQL (see the [crate] documentation). Cheap to clone:
/// clones share the connections. Dropping the last clone closes them.
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

struct Inner {
    options: PostgresOptions,
    sql: Sql,
    /// The connections; the lock is held while one is (re)connected, so that a burst of
    /// operations on a broken connection opens one new connection, not one each.
    pool: Vec<tokio::sync::Mutex<Option<Arc<Conn>>>>,
    next: AtomicUsize,
    bus: Arc<Bus>,
    listener: JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl PostgresStore {
    /// Connects to the database of `pg` with the default [`PostgresOptions`], creating the
    /// table if absent.
    ///
    /// # Errors
    ///
    /// When the database cannot be reached, the table cannot be created, or its schema is
    /// from a newer version of this crate.
    pub async fn connect(pg: tokio_postgres::Config) -> Result<PostgresStore, StoreError> {
        Self::connect_with(PostgresOptions::new(pg)).await
    }

    /// Connects with `options`, creating the table if absent. Must be called within a tokio
    /// runtime, which runs the store's connections.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect); also [`StoreError::InvalidArgument`] for options out
    /// of range.
    pub async fn connect_with(options: PostgresOptions) -> Result<PostgresStore, StoreError> {
        options.check()?;
        migrate(&options).await?;
        let sql = Sql::new(&options.table);
        let opened = futures_util::future::join_all(
            (0..options.connections).map(|_| Conn::open(&options, &sql)),
        )
        .await;
        let mut pool = Vec::with_capacity(opened.len());
        for conn in opened {
            pool.push(tokio::sync::Mutex::new(Some(Arc::new(conn?))));
        }
        let (bus, _) = broadcast::channel(options.store.event_capacity.max(1));
        let bus = Arc::new(bus);
        // Listening before the store is handed out: no event after this call is missed.
        let (client, driver) = listen(&options, bus.clone()).await?;
        let listener = tokio::spawn(keep_listening(options.clone(), bus.clone(), client, driver));
        Ok(PostgresStore {
            inner: Arc::new(Inner {
                options,
                sql,
                pool,
                next: AtomicUsize::new(0),
                bus,
                listener,
            }),
        })
    }

    /// The options.
    pub fn options(&self) -> &PostgresOptions {
        &self.inner.options
    }

    /// A connection of the pool, round robin; a broken or missing one is (re)connected.
    async fn conn(&self) -> Result<Arc<Conn>, StoreError> {
        let pool = &self.inner.pool;
        let slot = &pool[self.inner.next.fetch_add(1, Ordering::Relaxed) % pool.len()];
        let mut current = slot.lock().await;
        if let Some(conn) = current.as_ref().filter(|c| !c.client.is_closed()) {
            return Ok(conn.clone());
        }
        let conn = Arc::new(Conn::open(&self.inner.options, &self.inner.sql).await?);
        *current = Some(conn.clone());
        Ok(conn)
    }

    async fn query(
        &self,
        stmt: Stmt,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let conn = self.conn().await?;
        conn.client
            .query(&conn.stmts[stmt as usize], params)
            .await
            .map_err(pg_error)
    }

    async fn execute(
        &self,
        stmt: Stmt,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        let conn = self.conn().await?;
        conn.client
            .execute(&conn.stmts[stmt as usize], params)
            .await
            .map_err(pg_error)
    }

    fn channel(&self) -> &str {
        &self.inner.options.table
    }

    async fn insert_now(&self, new: NewFuture) -> Result<Insertion, StoreError> {
        self.inner.options.store.check_owner(&new.owner)?;
        let config = &self.inner.options.store;
        let key = new
            .idempotency_key
            .map(|k| uuid::Uuid::from_bytes(*k.as_bytes()));
        let method = i64::from(new.method_id);
        let limit = i64::try_from(config.max_pending).unwrap_or(i64::MAX);
        for _ in 0..INSERT_ATTEMPTS {
            let id = to_pg(FutureId::random()?);
            let rows = self
                .query(
                    Stmt::Insert,
                    &[
                        &id,
                        &new.owner,
                        &key,
                        &method,
                        &new.discard_result,
                        &config.runner,
                        &limit,
                    ],
                )
                .await?;
            let Some(row) = rows.first() else {
                // Another insert took the key between this statement's snapshot and its
                // insert: the next attempt sees it.
                continue;
            };
            return Ok(match col::<i16>(row, 0)? {
                0 => Insertion::Inserted(from_pg(col(row, 1)?)),
                1 if col::<String>(row, 2)? == new.owner => {
                    Insertion::Existing(from_pg(col(row, 1)?))
                }
                1 => Insertion::KeyOfAnotherOwner,
                _ => Insertion::Full {
                    limit: config.max_pending,
                },
            });
        }
        Err(StoreError::Unavailable(format!(
            "the insert lost {INSERT_ATTEMPTS} races on its idempotency key"
        )))
    }

    async fn complete_now(&self, id: FutureId, outcome: Outcome) -> Result<bool, StoreError> {
        self.inner.options.store.check_outcome(&outcome)?;
        let c = OutcomeColumns::of(outcome);
        let rows = self
            .query(
                Stmt::Complete,
                &[
                    &to_pg(id),
                    &c.state,
                    &c.payload,
                    &c.metadata,
                    &c.code,
                    &c.detail,
                    &c.size,
                    &self.channel(),
                ],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    async fn cancel_now(&self, owner: &str, id: FutureId) -> Result<Cancellation, StoreError> {
        let pid = to_pg(id);
        let rows = self
            .query(Stmt::Cancel, &[&pid, &owner, &self.channel()])
            .await?;
        if let Some(row) = rows.first() {
            return Ok(Cancellation::Cancelled {
                runner: col(row, 0)?,
            });
        }
        // Nothing changed; a future never goes back to pending, so this tells why.
        let rows = self.query(Stmt::OwnerOf, &[&pid]).await?;
        Ok(match rows.first() {
            None => Cancellation::NotFound,
            Some(row) if col::<String>(row, 0)? == owner => Cancellation::AlreadyCompleted,
            Some(_) => Cancellation::NotOwner,
        })
    }

    async fn evict_now(&self, retention: Retention) -> Result<u64, StoreError> {
        let mut evicted = 0;
        let age = i64::try_from(retention.max_age.as_micros()).unwrap_or(i64::MAX);
        loop {
            let n = self.execute(Stmt::EvictAge, &[&age, &EVICT_BATCH]).await?;
            evicted += n;
            if n < EVICT_BATCH as u64 {
                break;
            }
        }
        if let Some(max) = retention.max_completed {
            let max = i64::try_from(max).unwrap_or(i64::MAX);
            loop {
                let rows = self.query(Stmt::CountCompleted, &[]).await?;
                let completed: i64 = rows.first().map(|r| col(r, 0)).transpose()?.unwrap_or(0);
                let excess = (completed - max).clamp(0, EVICT_BATCH);
                if excess == 0 {
                    break;
                }
                let n = self.execute(Stmt::EvictOldest, &[&excess]).await?;
                evicted += n;
                if n < excess as u64 {
                    break;
                }
            }
        }
        Ok(evicted)
    }
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("table", &self.inner.options.table)
            .field("runner", &self.inner.options.store.runner)
            .finish_non_exhaustive()
    }
}

/// Creates the table or brings it to [`SCHEMA_VERSION`], in one transaction under an
/// advisory lock.
async fn migrate(options: &PostgresOptions) -> Result<(), StoreError> {
    let t = &options.table;
    let mut pg = options.pg.clone();
    pg.application_name(format!("bebop-futures {t} setup"));
    let (mut client, connection) = pg.connect(NoTls).await.map_err(pg_error)?;
    let driver = tokio::spawn(connection);
    let result = async {
        let tx = client.transaction().await.map_err(pg_error)?;
        tx.execute("SELECT pg_advisory_xact_lock(hashtext($1::text))", &[t])
            .await
            .map_err(pg_error)?;
        tx.batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {t}_schema (version integer NOT NULL)"
        ))
        .await
        .map_err(pg_error)?;
        let row = tx
            .query_one(&format!("SELECT max(version) FROM {t}_schema"), &[])
            .await
            .map_err(pg_error)?;
        let version: i32 = col::<Option<i32>>(&row, 0)?.unwrap_or(0);
        if version > SCHEMA_VERSION {
            return Err(StoreError::Corrupt(format!(
                "table {t} has futures schema version {version}, from a newer \
                 bebop-rpc-postgres; this one knows versions up to {SCHEMA_VERSION}"
            )));
        }
        let from = usize::try_from(version)
            .map_err(|_| StoreError::Corrupt(format!("futures schema version {version}")))?;
        for (n, sql) in migrations(t).iter().enumerate().skip(from) {
            tx.batch_execute(sql).await.map_err(pg_error)?;
            tx.execute(&format!("DELETE FROM {t}_schema"), &[])
                .await
                .map_err(pg_error)?;
            let v = n as i32 + 1;
            tx.execute(
                &format!("INSERT INTO {t}_schema (version) VALUES ($1)"),
                &[&v],
            )
            .await
            .map_err(pg_error)?;
        }
        tx.commit().await.map_err(pg_error)
    }
    .await;
    drop(client);
    let _ = driver.await;
    result
}

/// Opens the listening connection and listens on the store's channel; the driver task
/// forwards notifications to `bus` until the connection ends.
async fn listen(
    options: &PostgresOptions,
    bus: Arc<Bus>,
) -> Result<(Client, JoinHandle<()>), StoreError> {
    let mut pg = options.pg.clone();
    pg.application_name(format!("bebop-futures {} listener", options.table));
    let (client, mut connection) = pg.connect(NoTls).await.map_err(pg_error)?;
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => match parse_notification(n.payload()) {
                    Some(event) => {
                        let _ = bus.send(event);
                    }
                    None => tracing::warn!(
                        channel = n.channel(),
                        "ignoring a notification the futures store did not send"
                    ),
                },
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "the futures store's listening connection failed");
                    break;
                }
            }
        }
    });
    match client
        .batch_execute(&format!("LISTEN \"{}\"", options.table))
        .await
    {
        Ok(()) => Ok((client, driver)),
        Err(e) => {
            driver.abort();
            Err(pg_error(e))
        }
    }
}

/// Keeps a listening connection: when it ends, reconnects with backoff and tells the
/// subscribers they may have missed events.
async fn keep_listening(
    options: PostgresOptions,
    bus: Arc<Bus>,
    client: Client,
    driver: JoinHandle<()>,
) {
    let mut current = Some((client, driver));
    loop {
        if let Some((client, driver)) = current.take() {
            let _ = driver.await;
            drop(client);
        }
        let mut backoff = Duration::from_millis(100);
        loop {
            tokio::time::sleep(backoff).await;
            match listen(&options, bus.clone()).await {
                Ok(listening) => {
                    tracing::info!(table = %options.table, "the futures store listens again");
                    current = Some(listening);
                    let _ = bus.send(Event::Lagged);
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the futures store cannot listen yet");
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

impl FutureStore for PostgresStore {
    fn config(&self) -> &StoreConfig {
        &self.inner.options.store
    }

    fn insert(&self, future: NewFuture) -> BoxFuture<'_, Result<Insertion, StoreError>> {
        Box::pin(self.insert_now(future))
    }

    fn complete(&self, id: FutureId, outcome: Outcome) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(self.complete_now(id, outcome))
    }

    fn get(&self, id: FutureId) -> BoxFuture<'_, Result<Option<FutureRecord>, StoreError>> {
        Box::pin(async move {
            let rows = self.query(Stmt::Get, &[&to_pg(id)]).await?;
            rows.first().map(record).transpose()
        })
    }

    fn fetch_completed<'a>(
        &'a self,
        owner: &'a str,
        ids: &'a [FutureId],
    ) -> BoxStream<'a, Result<FutureRecord, StoreError>> {
        fetch_in_batches(ids, move |chunk, after| {
            Box::pin(async move {
                let ids: Vec<uuid::Uuid> = chunk.iter().map(|&id| to_pg(id)).collect();
                let budget = FETCH_BUDGET as i64;
                let rows = self
                    .query(Stmt::Fetch, &[&owner, &ids, &to_pg(after), &budget])
                    .await?;
                let (records, total) = records_with_total(&rows)?;
                let more = (records.len() as i64) < total;
                Ok(Batch { records, more })
            })
        })
    }

    fn completed_page<'a>(
        &'a self,
        owner: &'a str,
        after: Option<FutureId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Page, StoreError>> {
        Box::pin(async move {
            let limit = limit.clamp(1, MAX_PAGE) as i64;
            let after = to_pg(after.unwrap_or(FutureId::NIL));
            let budget = FETCH_BUDGET as i64;
            let rows = self
                .query(Stmt::Page, &[&owner, &after, &limit, &budget])
                .await?;
            let (records, total) = records_with_total(&rows)?;
            let more = (records.len() as i64) < total || total == limit;
            let next = if more {
                records.last().map(|r| r.id)
            } else {
                None
            };
            Ok(Page { records, next })
        })
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a str,
        id: FutureId,
    ) -> BoxFuture<'a, Result<Cancellation, StoreError>> {
        Box::pin(self.cancel_now(owner, id))
    }

    fn discard(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move { Ok(self.execute(Stmt::Discard, &[&to_pg(id)]).await? > 0) })
    }

    fn delete(&self, id: FutureId) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move { Ok(self.execute(Stmt::Delete, &[&to_pg(id)]).await? > 0) })
    }

    fn evict(&self, retention: Retention) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(self.evict_now(retention))
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, StoreError>> {
        Box::pin(async move {
            let rows = self.query(Stmt::Counts, &[]).await?;
            let row = rows
                .first()
                .ok_or_else(|| StoreError::Corrupt("no counts".to_owned()))?;
            Ok(Counts {
                pending: col::<i64>(row, 0)?.max(0) as u64,
                completed: col::<i64>(row, 1)?.max(0) as u64,
            })
        })
    }

    fn fail_runner<'a>(&'a self, runner: &'a str) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let code = i16::from(u8::from(StatusCode::Unavailable));
            let rows = self
                .query(
                    Stmt::FailRunner,
                    &[&runner, &code, &RESTARTED_DETAIL, &self.channel()],
                )
                .await?;
            Ok(rows.len() as u64)
        })
    }

    fn subscribe(&self) -> EventStream {
        broadcast_stream(self.inner.bus.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_parse_and_garbage_is_ignored() {
        let id = FutureId::random().unwrap();
        assert_eq!(
            parse_notification(&format!("c{id} tcp:[::1]:5 O'Brien")),
            Some(Event::Completed {
                id,
                owner: "tcp:[::1]:5 O'Brien".into()
            })
        );
        assert_eq!(
            parse_notification(&format!("x{id} node-1")),
            Some(Event::CancelRequested {
                id,
                runner: "node-1".into()
            })
        );
        assert_eq!(
            parse_notification(&format!("c{id} ")),
            Some(Event::Completed {
                id,
                owner: String::new()
            })
        );
        for bad in [
            "",
            "c",
            "q550e8400-e29b-41d4-a716-446655440000 x",
            "c550e8400-e29b-41d4-a716-44665544000 x",
            "c550e8400-e29b-41d4-a716-446655440000",
            "c550e8400-e29b-41d4-a716-446655440000x",
            "cé50e8400-e29b-41d4-a716-446655440000 x",
        ] {
            assert_eq!(parse_notification(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn table_names_are_checked() {
        let ok = |t: &str| {
            PostgresOptions {
                table: t.into(),
                ..PostgresOptions::new(tokio_postgres::Config::new())
            }
            .check()
            .is_ok()
        };
        assert!(ok("bebop_futures"));
        assert!(ok("_t1"));
        for bad in [
            "",
            "1t",
            "Futures",
            "t-1",
            "t; DROP TABLE x",
            "t\"",
            &"t".repeat(41),
        ] {
            assert!(!ok(bad), "{bad:?}");
        }
        let opts = PostgresOptions {
            connections: 0,
            ..PostgresOptions::new(tokio_postgres::Config::new())
        };
        assert!(opts.check().is_err());
        let opts = PostgresOptions {
            store: StoreConfig {
                max_owner_bytes: 8000,
                ..StoreConfig::default()
            },
            ..PostgresOptions::new(tokio_postgres::Config::new())
        };
        assert!(opts.check().is_err());
    }
}

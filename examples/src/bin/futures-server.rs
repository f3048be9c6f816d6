//! Background jobs served as RPC futures (`docs/rpc.md`, "Futures"): the `Jobs` service of
//! `schemas/jobs.bop`, whose calls clients dispatch, resolve and cancel with the futures
//! methods. Results live in a SQLite file (they survive a restart of this process) or in a
//! PostgreSQL database that several of these servers share (a job dispatched on one resolves
//! on any other; cancels reach the process that runs the job).
//!
//! ```text
//! cargo run -p bebop-examples --features futures-server --bin futures-server -- \
//!     --sqlite /tmp/jobs.db --user alice:s3cret
//! cargo run -p bebop-examples --features futures-server --bin futures-server -- \
//!     --postgres "host=127.0.0.1 port=5432 user=jobs dbname=jobs" --runner node-2
//! ```
//!
//! Options: `--listen ADDR` (default `127.0.0.1:7800`; port 0 picks one); `--sqlite PATH` or
//! `--postgres CONFIG` (a libpq-style connection string) for the store, else futures are
//! kept in memory; `--runner NAME` (default `futures-server`), the name under which this
//! process records the jobs it runs: give every server sharing a database its own, and a
//! restarted server the one it had, so that it fails what its previous run left pending;
//! `--user NAME:TOKEN` (repeatable) to authenticate connections by `authorization: Bearer
//! TOKEN` (their futures belong to NAME; an unknown token is UNAUTHENTICATED; without
//! `--user` futures belong to the caller's address); `--grace SECS` (5) for the shutdown on Ctrl-C
//! or SIGTERM. The address actually bound is printed on the first line of standard output.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bebop_rpc::futures::{FutureStore, MemoryStore, StoreConfig};
use bebop_rpc::{Context, FuturesConfig, Server, Status};
use bebop_rpc_postgres::{PostgresOptions, PostgresStore};
use bebop_rpc_sqlite::SqliteStore;

#[allow(dead_code)]
mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

use schema::jobs::jobs as svc;
use schema::owned::jobs::{Job, JobResult};

/// The longest job accepted.
const MAX_MILLIS: u32 = 600_000;

/// Where futures are kept.
enum StoreArg {
    Memory,
    Sqlite(String),
    Postgres(String),
}

struct Args {
    listen: String,
    store: StoreArg,
    runner: String,
    /// Bearer token -> user name.
    users: HashMap<String, String>,
    grace: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        listen: "127.0.0.1:7800".into(),
        store: StoreArg::Memory,
        runner: "futures-server".into(),
        users: HashMap::new(),
        grace: Duration::from_secs(5),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => args.listen = value()?,
            "--sqlite" => args.store = StoreArg::Sqlite(value()?),
            "--postgres" => args.store = StoreArg::Postgres(value()?),
            "--runner" => args.runner = value()?,
            "--user" => {
                let v = value()?;
                let (name, token) = v
                    .split_once(':')
                    .filter(|(n, t)| !n.is_empty() && !t.is_empty())
                    .ok_or_else(|| format!("--user wants NAME:TOKEN, not {v:?}"))?;
                args.users.insert(token.to_owned(), name.to_owned());
            }
            "--grace" => {
                let v = value()?;
                args.grace =
                    Duration::from_secs(v.parse().map_err(|_| format!("bad --grace {v}"))?);
            }
            "-h" | "--help" => {
                return Err("usage: futures-server [--listen ADDR] \
                            [--sqlite PATH | --postgres CONFIG] [--runner NAME] \
                            [--user NAME:TOKEN]... [--grace SECS]"
                    .into());
            }
            other => return Err(format!("unknown option {other} (try --help)")),
        }
    }
    Ok(args)
}

/// The jobs themselves: wait, then answer with the name of this process.
struct Worker {
    runner: String,
}

impl svc::AsyncHandler for Worker {
    async fn run(&self, ctx: &Context, job: Job) -> Result<JobResult, Status> {
        if job.millis > MAX_MILLIS {
            return Err(Status::invalid_argument(format!(
                "millis is at most {MAX_MILLIS}, not {}",
                job.millis
            )));
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(u64::from(job.millis))) => {}
            _ = ctx.cancelled() => return Err(Status::cancelled("the job was cancelled")),
        }
        if job.name == "fail" {
            return Err(Status::unknown("the job failed, as its name asked"));
        }
        tracing::info!(name = %job.name, "job done");
        Ok(JobResult {
            name: job.name,
            runner: self.runner.clone(),
        })
    }
}

/// With users configured, a connection authenticates with a known bearer token, once: its
/// first call carries `authorization: Bearer TOKEN`, later calls may leave it out, and the
/// futures it dispatches belong to that token's user. The background call of a future runs
/// with the peer of the connection that dispatched it, so it passes here without a token
/// (the token is not stored with the future). One connection is one user: a token of
/// another user on it is PERMISSION_DENIED.
fn authenticate(
    users: HashMap<String, String>,
) -> impl Fn(&Context) -> Result<(), Status> + Send + Sync + 'static {
    move |ctx: &Context| {
        if users.is_empty() {
            return Ok(());
        }
        let token = ctx.metadata().get("authorization").map(|v| {
            v.strip_prefix("Bearer ")
                .ok_or_else(|| Status::unauthenticated("authorization wants `Bearer TOKEN`"))
        });
        let current = ctx.peer().identity();
        match (token, current) {
            (Some(token), current) => {
                let user = users
                    .get(token?)
                    .ok_or_else(|| Status::unauthenticated("unknown bearer token"))?;
                if current.is_some_and(|c| c != *user) {
                    return Err(Status::permission_denied(
                        "this connection is authenticated as another user",
                    ));
                }
                ctx.peer().set_identity(user);
                Ok(())
            }
            (None, Some(_)) => Ok(()),
            (None, None) => Err(Status::unauthenticated("a bearer token is required")),
        }
    }
}

async fn open_store(args: &Args) -> Result<Arc<dyn FutureStore>, String> {
    let config = StoreConfig::new(args.runner.as_str());
    Ok(match &args.store {
        StoreArg::Memory => Arc::new(MemoryStore::with_config(config)),
        StoreArg::Sqlite(path) => Arc::new(
            SqliteStore::open_with_config(path, config)
                .await
                .map_err(|e| format!("cannot open {path}: {e}"))?,
        ),
        StoreArg::Postgres(conn) => {
            let pg: tokio_postgres::Config = conn
                .parse()
                .map_err(|e| format!("bad --postgres {conn:?}: {e}"))?;
            Arc::new(
                PostgresStore::connect_with(PostgresOptions {
                    store: config,
                    ..PostgresOptions::new(pg)
                })
                .await
                .map_err(|e| format!("cannot use PostgreSQL: {e}"))?,
            )
        }
    })
}

async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let store = open_store(&args).await.unwrap_or_else(|e| fail(e));
    let server = Server::builder()
        .add_service(svc::AsyncServer::new(Worker {
            runner: args.runner.clone(),
        }))
        .interceptor(authenticate(args.users.clone()))
        .futures_shared(store, FuturesConfig::default())
        .build();
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .unwrap_or_else(|e| fail(format_args!("cannot bind {}: {e}", args.listen)));
    match listener.local_addr() {
        Ok(a) => println!("listening on {a}"),
        Err(e) => fail(format_args!("listening (address unknown: {e})")),
    }
    let serving = {
        let server = server.clone();
        tokio::spawn(async move { server.serve_tcp(listener).await })
    };
    tracing::info!(runner = %args.runner, "serving jobs.Jobs with futures");
    shutdown_signal().await;
    tracing::info!(grace = ?args.grace, "shutting down");
    server.shutdown(args.grace).await;
    match serving.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("accepting failed: {e}"),
        Err(e) => eprintln!("the server task failed: {e}"),
    }
}

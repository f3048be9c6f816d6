//! A key-value store served over Bebop RPC with `bebop-rpc` on tokio: the service generated
//! from `schemas/kv.bop`, bearer-token authentication in an interceptor, watchers that resume
//! by cursor, `tracing` logs, and a graceful shutdown on Ctrl-C (or SIGTERM).
//!
//! ```text
//! cargo run -p bebop-examples --bin kv-server -- --listen 127.0.0.1:7700 --token s3cret
//! cargo run -p bebop-examples --bin kv-server -- --unix /tmp/kv.sock
//! ```
//!
//! Options: `--listen ADDR` (TCP, default `127.0.0.1:7700`; port 0 picks one) or `--unix
//! PATH`; `--token T` to require `authorization: Bearer T` on writes (`--read-token R` for a
//! token that may only read); `--grace SECS` (5) for the shutdown. The address actually
//! bound is printed on the first line of standard output.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use bebop_rpc::{Context, Requests, ResponseSink, Server, Status};
use tokio::sync::Notify;

#[allow(dead_code)]
mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

use schema::kv::{Change, Written, key_value as svc};
use schema::owned::kv::{
    DeleteRequest, Entry, Event, GetRequest, GetResponse, PutRequest, WatchRequest,
};

/// How many past changes a watcher can resume from.
const HISTORY: usize = 10_000;

#[derive(Default)]
struct State {
    entries: BTreeMap<String, Entry>,
    revision: u64,
    /// The last `HISTORY` changes, oldest first.
    history: VecDeque<Event>,
}

#[derive(Default)]
struct Store {
    state: Mutex<State>,
    changed: Notify,
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(state: &mut State, change: Change, entry: Entry) {
        if state.history.len() == HISTORY {
            state.history.pop_front();
        }
        state.history.push_back(Event { change, entry });
    }

    fn put(&self, key: String, value: String) -> u64 {
        let mut state = self.lock();
        state.revision += 1;
        let entry = Entry {
            key: key.clone(),
            value,
            revision: state.revision,
        };
        state.entries.insert(key, entry.clone());
        Self::record(&mut state, Change::Put, entry);
        state.revision
    }
}

fn check_key(key: &str) -> Result<(), Status> {
    if key.is_empty() || key.len() > 256 {
        return Err(Status::invalid_argument("keys are 1 to 256 bytes"));
    }
    Ok(())
}

impl svc::AsyncHandler for Store {
    async fn get(&self, _ctx: &Context, request: GetRequest) -> Result<GetResponse, Status> {
        Ok(GetResponse {
            entry: self.lock().entries.get(&request.key).cloned(),
        })
    }

    async fn put(&self, _ctx: &Context, request: PutRequest) -> Result<Written, Status> {
        check_key(&request.key)?;
        let revision = self.put(request.key, request.value);
        self.changed.notify_waiters();
        Ok(Written { revision, count: 1 })
    }

    async fn delete(&self, _ctx: &Context, request: DeleteRequest) -> Result<Written, Status> {
        let revision = {
            let mut state = self.lock();
            let Some(mut entry) = state.entries.remove(&request.key) else {
                return Err(Status::not_found(format!("no key {:?}", request.key)));
            };
            state.revision += 1;
            entry.revision = state.revision;
            Self::record(&mut state, Change::Delete, entry);
            state.revision
        };
        self.changed.notify_waiters();
        Ok(Written { revision, count: 1 })
    }

    async fn watch(
        &self,
        ctx: &Context,
        request: WatchRequest,
        mut responses: ResponseSink<Event>,
    ) -> Result<(), Status> {
        let mut after = ctx.cursor();
        loop {
            // Register for the next change before looking, so none slips between.
            let changed = self.changed.notified();
            let pending: Vec<Event> = {
                let state = self.lock();
                if let Some(oldest) = state.history.front() {
                    if after + 1 < oldest.entry.revision && after != 0 {
                        return Err(Status::resource_exhausted(format!(
                            "revision {after} is older than the history kept (from {})",
                            oldest.entry.revision
                        )));
                    }
                }
                state
                    .history
                    .iter()
                    .filter(|e| {
                        e.entry.revision > after && e.entry.key.starts_with(&request.prefix)
                    })
                    .cloned()
                    .collect()
            };
            for event in pending {
                after = event.entry.revision;
                responses.send_with_cursor(&event, after).await?;
            }
            changed.await;
        }
    }

    async fn load(
        &self,
        _ctx: &Context,
        mut requests: Requests<PutRequest>,
    ) -> Result<Written, Status> {
        let mut count = 0u32;
        let mut revision = self.lock().revision;
        while let Some(put) = requests.message().await? {
            check_key(&put.key)?;
            revision = self.put(put.key, put.value);
            count += 1;
        }
        self.changed.notify_waiters();
        Ok(Written { revision, count })
    }
}

struct Args {
    listen: String,
    unix: Option<String>,
    token: Option<String>,
    read_token: Option<String>,
    grace: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        listen: "127.0.0.1:7700".into(),
        unix: None,
        token: None,
        read_token: None,
        grace: Duration::from_secs(5),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => args.listen = value()?,
            "--unix" => args.unix = Some(value()?),
            "--token" => args.token = Some(value()?),
            "--read-token" => args.read_token = Some(value()?),
            "--grace" => {
                let v = value()?;
                args.grace =
                    Duration::from_secs(v.parse().map_err(|_| format!("bad --grace {v}"))?);
            }
            "-h" | "--help" => {
                return Err(
                    "usage: kv-server [--listen ADDR | --unix PATH] [--token T] \
                            [--read-token R] [--grace SECS]"
                        .into(),
                );
            }
            other => return Err(format!("unknown option {other} (try --help)")),
        }
    }
    Ok(args)
}

/// Who may do what: writes need the write token; reads either token. Without `--token`
/// everything is open.
fn authorize(args: &Args) -> impl Fn(&Context) -> Result<(), Status> + Send + Sync + 'static {
    let write = args.token.clone();
    let read = args.read_token.clone();
    move |ctx: &Context| {
        let Some(write) = &write else { return Ok(()) };
        let presented = ctx
            .metadata()
            .get("authorization")
            .and_then(|v| v.strip_prefix("Bearer "));
        let Some(token) = presented else {
            return Err(Status::unauthenticated(
                "send `authorization: Bearer <token>`",
            ));
        };
        let reading = matches!(ctx.method().name, "Get" | "Watch" | "discovery");
        if token == write {
            ctx.peer().set_identity("writer");
            Ok(())
        } else if read.as_deref() == Some(token) {
            ctx.peer().set_identity("reader");
            if reading {
                Ok(())
            } else {
                Err(Status::permission_denied(format!(
                    "{} needs the write token",
                    ctx.method().name
                )))
            }
        } else {
            Err(Status::unauthenticated("unknown token"))
        }
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
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
    let server = Server::builder()
        .add_service(svc::AsyncServer::new(Store::default()))
        .interceptor(authorize(&args))
        .build();
    let serving = {
        let server = server.clone();
        match &args.unix {
            Some(path) => {
                let _ = std::fs::remove_file(path);
                let listener = match tokio::net::UnixListener::bind(path) {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("cannot bind {path}: {e}");
                        std::process::exit(1);
                    }
                };
                println!("listening on unix:{path}");
                tokio::spawn(async move { server.serve_unix(listener).await })
            }
            None => {
                let listener = match tokio::net::TcpListener::bind(&args.listen).await {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("cannot bind {}: {e}", args.listen);
                        std::process::exit(1);
                    }
                };
                match listener.local_addr() {
                    Ok(a) => println!("listening on {a}"),
                    Err(e) => eprintln!("listening (address unknown: {e})"),
                }
                tokio::spawn(async move { server.serve_tcp(listener).await })
            }
        }
    };
    tracing::info!("serving kv.KeyValue");
    shutdown_signal().await;
    tracing::info!(grace = ?args.grace, "shutting down");
    server.shutdown(args.grace).await;
    match serving.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("accepting failed: {e}"),
        Err(e) => eprintln!("the server task failed: {e}"),
    }
    if let Some(path) = &args.unix {
        let _ = std::fs::remove_file(path);
    }
}

//! Futures across real server processes (`futures-server`, `docs/rpc.md` "Futures"): a
//! result survives a SIGKILL of the server on SQLite, two servers share futures on one
//! PostgreSQL, and many concurrent callers each get their own results exactly once.
//! The PostgreSQL tests are skipped when no PostgreSQL binaries are installed
//! (`scripts/test-services` installs them; under `CI` their absence is a failure).

#[path = "../../alloc-ext/rpc-postgres/tests/support/mod.rs"]
mod support;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bebop_rpc::{CallOptions, Client, RawMessage, Status, StatusCode};
use bebop_runtime::rpc::{
    Empty, FutureCancelRequest, FutureDispatchRequest, FutureHandle, FutureOutcome,
    FutureResolveRequest, FutureResult,
};
use bebop_runtime::{Array, Decode, Uuid};

#[allow(dead_code, clippy::all)]
mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

use schema::jobs::jobs as svc;
use schema::owned::jobs::{Job, JobResult};

/// A `futures-server` process, killed when dropped.
struct ServerProcess {
    child: Child,
    addr: String,
}

impl ServerProcess {
    fn start(args: &[&str]) -> ServerProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_futures-server"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start futures-server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the address");
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        ServerProcess { child, addr }
    }

    async fn client(&self) -> Client {
        Client::connect_tcp(self.addr.as_str()).await.unwrap()
    }

    /// SIGKILL: the process gets no chance to clean up.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then a clean exit within 10 seconds.
    fn terminate(mut self) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "futures-server exited with {status}");
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "futures-server did not stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn as_user(token: &str) -> CallOptions {
    CallOptions::new().metadata("authorization", format!("Bearer {token}"))
}

/// Dispatches job `name` working `millis`, with an idempotency key when given.
async fn dispatch(
    client: &Client,
    token: &str,
    name: &str,
    millis: u32,
    key: Option<Uuid>,
) -> Result<Uuid, Status> {
    let payload = bebop_runtime::encode_to_vec(&Job {
        name: name.into(),
        millis,
    })
    .unwrap();
    let request = FutureDispatchRequest {
        method_id: Some(svc::RUN.id),
        payload: Some(&payload),
        idempotency_key: key,
        ..Default::default()
    };
    let handle = client
        .unary::<_, FutureHandle>(2, &request, as_user(token))
        .await?;
    Ok(handle.into_inner().id)
}

type Outcome = Result<JobResult, (StatusCode, String)>;

fn outcome(raw: &RawMessage) -> (Uuid, Outcome) {
    let r = FutureResult::from_bytes(&raw.0).unwrap();
    let outcome = match r.outcome {
        FutureOutcome::Success(s) => Ok(JobResult::from_bytes(s.payload).unwrap()),
        FutureOutcome::Error(e) => Err((
            e.code.unwrap_or(StatusCode::Unknown),
            e.detail.unwrap_or_default().to_owned(),
        )),
    };
    (r.id, outcome)
}

/// A resolve stream of `ids` (of every future of the caller when `None`).
async fn resolve_stream(
    client: &Client,
    token: &str,
    ids: Option<&[Uuid]>,
) -> bebop_rpc::Streaming<RawMessage> {
    let request = FutureResolveRequest {
        ids: ids.map(Array::from_slice),
    };
    client
        .server_stream::<_, RawMessage>(3, &request, as_user(token))
        .await
        .unwrap()
}

/// The results of `ids`, to the end of the stream.
async fn resolve(client: &Client, token: &str, ids: &[Uuid]) -> HashMap<Uuid, Outcome> {
    let mut stream = resolve_stream(client, token, Some(ids)).await;
    let mut out = HashMap::new();
    let all = async {
        while let Some(raw) = stream.message().await.unwrap() {
            let (id, o) = outcome(&raw);
            assert!(out.insert(id, o).is_none(), "{id} delivered twice");
        }
    };
    tokio::time::timeout(Duration::from_secs(30), all)
        .await
        .expect("the resolve stream ends");
    out
}

async fn cancel(client: &Client, token: &str, id: Uuid) -> Result<(), Status> {
    client
        .unary::<_, Empty>(4, &FutureCancelRequest { id }, as_user(token))
        .await
        .map(|_| ())
}

fn done(name: &str, runner: &str) -> Outcome {
    Ok(JobResult {
        name: name.into(),
        runner: runner.into(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_survives_sigkill_of_the_server_on_sqlite() {
    let dir = tempdir("sigkill");
    let db = dir.join("jobs.db");
    let db = db.to_str().unwrap();
    let args = [
        "--sqlite",
        db,
        "--runner",
        "node-1",
        "--user",
        "alice:tok-a",
    ];

    let server = ServerProcess::start(&args);
    let client = server.client().await;
    let quick = dispatch(&client, "tok-a", "quick", 0, None).await.unwrap();
    let slow = dispatch(&client, "tok-a", "slow", 600_000, None)
        .await
        .unwrap();
    // The quick job completed (and was recorded) before the kill.
    assert_eq!(
        resolve(&client, "tok-a", &[quick]).await,
        HashMap::from([(quick, done("quick", "node-1"))])
    );
    drop(client);
    server.kill();

    let server = ServerProcess::start(&args);
    let client = server.client().await;
    let results = resolve(&client, "tok-a", &[quick, slow]).await;
    assert_eq!(results[&quick], done("quick", "node-1"));
    // The job the killed process was running fails instead of hanging forever.
    let (code, detail) = results[&slow].clone().unwrap_err();
    assert_eq!(code, StatusCode::Unavailable);
    assert_eq!(detail, bebop_rpc::futures::RESTARTED_DETAIL);
    // The restarted server takes new work.
    let again = dispatch(&client, "tok-a", "again", 0, None).await.unwrap();
    assert_eq!(
        resolve(&client, "tok-a", &[again]).await[&again],
        done("again", "node-1")
    );
    drop(client);
    server.terminate();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_callers_get_their_own_results_exactly_once() {
    const CLIENTS: usize = 100;
    const EACH: usize = 100;
    let dir = tempdir("many");
    let db = dir.join("jobs.db");
    let users: Vec<String> = (0..CLIENTS).map(|i| format!("u{i}:tok-{i}")).collect();
    let mut args = vec!["--sqlite", db.to_str().unwrap()];
    for u in &users {
        args.extend(["--user", u.as_str()]);
    }
    let server = ServerProcess::start(&args);
    let started = Instant::now();
    let callers = (0..CLIENTS).map(|i| {
        let addr = server.addr.clone();
        tokio::spawn(async move {
            let token = format!("tok-{i}");
            let client = Client::connect_tcp(addr.as_str()).await.unwrap();
            // Every future of this caller, from before the first dispatch on.
            let mut stream = resolve_stream(&client, &token, None).await;
            let mut mine = HashMap::new();
            for j in 0..EACH {
                let name = format!("{i}/{j}");
                let id = dispatch(&client, &token, &name, (j % 7) as u32, None)
                    .await
                    .unwrap();
                mine.insert(id, name);
            }
            let mut seen = HashSet::new();
            while seen.len() < EACH {
                let raw = tokio::time::timeout(Duration::from_secs(60), stream.message())
                    .await
                    .expect("every result arrives")
                    .unwrap()
                    .expect("the stream stays open");
                let (id, outcome) = outcome(&raw);
                let name = mine
                    .get(&id)
                    .unwrap_or_else(|| panic!("caller {i} got a result not its own"));
                assert_eq!(outcome.unwrap().name, *name);
                assert!(seen.insert(id), "caller {i} got {id} twice");
            }
            // Nothing else arrives: no duplicate, nobody else's result.
            let extra = tokio::time::timeout(Duration::from_millis(300), stream.message()).await;
            assert!(extra.is_err(), "caller {i} got more: {extra:?}");
        })
    });
    let callers: Vec<_> = callers.collect();
    for c in callers {
        c.await.unwrap();
    }
    eprintln!(
        "{} futures from {CLIENTS} callers dispatched and resolved in {:?}",
        CLIENTS * EACH,
        started.elapsed()
    );
    server.terminate();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_authenticate_once_as_one_user() {
    let server = ServerProcess::start(&["--user", "alice:tok-a", "--user", "bob:tok-b"]);
    let client = server.client().await;
    let no_token = client
        .unary::<_, FutureHandle>(
            4,
            &FutureCancelRequest { id: Uuid::NIL },
            CallOptions::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(no_token.code(), StatusCode::Unauthenticated, "{no_token}");
    let wrong = dispatch(&client, "tok-x", "job", 0, None)
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), StatusCode::Unauthenticated, "{wrong}");
    let id = dispatch(&client, "tok-a", "job", 0, None).await.unwrap();
    // Later calls of the connection run as alice without the token; bob's is refused.
    let ids = [id];
    let request = FutureResolveRequest {
        ids: Some(Array::from_slice(&ids)),
    };
    let mut stream = client
        .server_stream::<_, RawMessage>(3, &request, CallOptions::new())
        .await
        .unwrap();
    let (got, outcome) = outcome(&stream.message().await.unwrap().unwrap());
    assert_eq!((got, outcome), (id, done("job", "futures-server")));
    let other = cancel(&client, "tok-b", id).await.unwrap_err();
    assert_eq!(other.code(), StatusCode::PermissionDenied, "{other}");
    drop((stream, client));
    server.terminate();
}

/// A libpq connection string for the test database `dbname`.
fn conninfo(pg: &support::TempPostgres, dbname: &str) -> String {
    let config = pg.config(dbname);
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        tokio_postgres::config::Host::Tcp(host) => host.clone(),
    };
    format!(
        "host={host} port={} user=postgres dbname={dbname}",
        config.get_ports()[0]
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_server_processes_share_futures_on_postgres() {
    let pg = match support::TempPostgres::start().await {
        Ok(Some(pg)) => pg,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    pg.create_database("fleet").await.unwrap();
    let conn = conninfo(&pg, "fleet");
    let server = |runner: &'static str| {
        ServerProcess::start(&[
            "--postgres",
            &conn,
            "--runner",
            runner,
            "--user",
            "alice:tok-a",
            "--user",
            "bob:tok-b",
        ])
    };
    let (a, b) = (server("a"), server("b"));
    let (on_a, on_b) = (a.client().await, b.client().await);

    // Dispatched on A, resolved through B; A ran it.
    let id = dispatch(&on_a, "tok-a", "hello", 0, None).await.unwrap();
    assert_eq!(
        resolve(&on_b, "tok-a", &[id]).await,
        HashMap::from([(id, done("hello", "a"))])
    );

    // Running on A; a third connection of another owner may neither see nor cancel it.
    let slow = dispatch(&on_a, "tok-a", "slow", 600_000, None)
        .await
        .unwrap();
    let third = b.client().await;
    let e = cancel(&third, "tok-b", slow).await.unwrap_err();
    assert_eq!(e.code(), StatusCode::PermissionDenied, "{e}");
    let mut bobs = resolve_stream(&third, "tok-b", Some(&[slow])).await;
    assert!(
        bobs.message().await.unwrap().is_none(),
        "bob saw alice's future"
    );
    // Its owner cancels it through B; A stops the job.
    cancel(&on_b, "tok-a", slow).await.unwrap();
    let results = resolve(&on_a, "tok-a", &[slow]).await;
    assert_eq!(
        results[&slow].as_ref().unwrap_err().0,
        StatusCode::Cancelled
    );

    // The same idempotency key sent 50 times at once, half to each server: one future.
    let key = Uuid::from_array([7; 16]);
    let racers: Vec<_> = (0..50)
        .map(|i| {
            let addr = if i % 2 == 0 { &a.addr } else { &b.addr }.clone();
            tokio::spawn(async move {
                let client = Client::connect_tcp(addr.as_str()).await.unwrap();
                dispatch(&client, "tok-a", "once", 50, Some(key))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut ids = HashSet::new();
    for r in racers {
        ids.insert(r.await.unwrap());
    }
    assert_eq!(ids.len(), 1, "one future for one key: {ids:?}");
    let once = *ids.iter().next().unwrap();
    let results = resolve(&on_b, "tok-a", &[once]).await;
    assert_eq!(results[&once].as_ref().unwrap().name, "once");
    // The key belongs to alice: bob using it is refused.
    let e = dispatch(&on_b, "tok-b", "once", 0, Some(key))
        .await
        .unwrap_err();
    assert_eq!(e.code(), StatusCode::PermissionDenied, "{e}");

    drop((on_a, on_b, third, bobs));
    a.terminate();
    b.terminate();
}

/// A fresh directory under the system's temporary directory, named by test, process and
/// time so that concurrent and repeated runs do not share one.
fn tempdir(what: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!(
        "bebop-futures-{what}-{}-{nanos:x}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

//! A tokio Lab service for the `bebop-rpc` tests, and servers on real loopback sockets.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bebop_rpc::{Client, Context, Requests, ResponseSink, Server, ServerBuilder, Status};

pub mod nginx;

#[allow(dead_code, clippy::all)]
pub mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

pub use schema::lab::lab as svc;
pub use schema::lab::{Sample, Total};
pub use schema::owned::lab::{Identity, Note, Settings};

/// What the handlers saw, for tests to check.
#[derive(Default)]
pub struct Probe {
    /// Handler invocations.
    pub calls: AtomicUsize,
    /// Handler futures dropped before they finished (cancelled by the runtime).
    pub dropped: AtomicUsize,
    /// Handlers that saw `ctx.is_cancelled()` become true.
    pub saw_cancel: AtomicUsize,
    /// Items the stream handlers sent.
    pub sent: AtomicUsize,
}

/// Counts a handler future dropped before its end.
struct DropProbe<'a>(&'a Probe, bool);

impl Drop for DropProbe<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The Lab instrument on tokio.
pub struct Lab {
    pub probe: Arc<Probe>,
}

impl svc::AsyncHandler for Lab {
    async fn identify(
        &self,
        ctx: &Context,
        _request: schema::bebop::Empty,
    ) -> Result<Identity, Status> {
        self.probe.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Identity {
            model: ctx.peer().identity().unwrap_or_else(|| "LAB-9".into()),
            serial: 4242,
        })
    }

    /// `sleep:MS` sleeps (and notices cancellation), `panic` panics, `fail` fails with
    /// metadata, `meta` sets response metadata, `md:KEY` returns the request metadata value.
    async fn echo(&self, ctx: &Context, request: Note) -> Result<Note, Status> {
        self.probe.calls.fetch_add(1, Ordering::SeqCst);
        let text = request.text.as_str();
        if let Some(ms) = text.strip_prefix("sleep:") {
            let mut guard = DropProbe(&self.probe, false);
            let ms: u64 = ms.parse().unwrap_or(0);
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                _ = ctx.cancelled() => {
                    self.probe.saw_cancel.fetch_add(1, Ordering::SeqCst);
                    // Keep going as a badly-behaved handler would: the runtime must stop it.
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
            }
            guard.1 = true;
            return Ok(request);
        }
        match text {
            "panic" => panic!("the handler panicked on purpose"),
            "fail" => {
                ctx.set_response_metadata("attempt", "1");
                Err(Status::invalid_argument("fail was asked for")
                    .with_metadata("hint", "try again"))
            }
            "meta" => {
                ctx.set_response_metadata("rows", "3");
                ctx.set_response_metadata("cache", "miss");
                Ok(request)
            }
            _ => match text.strip_prefix("md:") {
                Some(key) => Ok(Note {
                    text: ctx.metadata().get(key).unwrap_or("<none>").to_string(),
                }),
                None => Ok(request),
            },
        }
    }

    async fn configure(&self, _ctx: &Context, request: Settings) -> Result<Settings, Status> {
        self.probe.calls.fetch_add(1, Ordering::SeqCst);
        match request.interval_ms {
            Some(ms) if !(10..=60_000).contains(&ms) => Err(Status::invalid_argument(format!(
                "interval_ms must be 10..=60000, not {ms}"
            ))),
            _ => Ok(request),
        }
    }

    /// `interval_ms` samples numbered from 1, each with its number as cursor, starting
    /// after the call's cursor; label `slow:MS` waits between samples, `trailer` ends with
    /// response metadata, `fail:N` fails after sample N.
    async fn samples(
        &self,
        ctx: &Context,
        request: Settings,
        mut responses: ResponseSink<Sample>,
    ) -> Result<(), Status> {
        self.probe.calls.fetch_add(1, Ordering::SeqCst);
        let mut guard = DropProbe(&self.probe, false);
        let count = request.interval_ms.unwrap_or(0);
        let label = request.label.unwrap_or_default();
        let slow = label.strip_prefix("slow:").and_then(|ms| ms.parse().ok());
        let fail_at: Option<u32> = label.strip_prefix("fail:").and_then(|n| n.parse().ok());
        let start = u32::try_from(ctx.cursor()).unwrap_or(u32::MAX);
        for seq in start.saturating_add(1)..=count {
            if fail_at == Some(seq) {
                guard.1 = true;
                return Err(Status::unavailable(format!("sensor failed at {seq}")));
            }
            responses
                .send_with_cursor(&sample(seq), u64::from(seq))
                .await?;
            self.probe.sent.fetch_add(1, Ordering::SeqCst);
            if let Some(ms) = slow {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
        }
        if label == "trailer" {
            ctx.set_response_metadata("count", count.to_string());
        }
        guard.1 = true;
        Ok(())
    }

    /// Sums samples; a sample with `seq == 0` ends the upload early, one with
    /// `seq == PAUSE` (not counted) makes the handler wait `value` milliseconds before it reads
    /// on (a consumer slower than its producer).
    async fn upload(
        &self,
        _ctx: &Context,
        mut requests: Requests<Sample>,
    ) -> Result<Total, Status> {
        self.probe.calls.fetch_add(1, Ordering::SeqCst);
        let mut total = Total { count: 0, sum: 0.0 };
        while let Some(s) = requests.message().await? {
            if s.seq == 0 {
                break;
            }
            if s.seq == PAUSE {
                tokio::time::sleep(Duration::from_millis(s.value as u64)).await;
                continue;
            }
            total.count += 1;
            total.sum += f64::from(s.value);
        }
        Ok(total)
    }

    /// Upper-cases each note; `stop` ends the stream early.
    async fn shout(
        &self,
        _ctx: &Context,
        mut requests: Requests<Note>,
        mut responses: ResponseSink<Note>,
    ) -> Result<(), Status> {
        self.probe.calls.fetch_add(1, Ordering::SeqCst);
        while let Some(note) = requests.message().await? {
            if note.text == "stop" {
                break;
            }
            responses
                .send(&Note {
                    text: note.text.to_uppercase(),
                })
                .await?;
        }
        Ok(())
    }
}

/// The `seq` of a sample that pauses the upload handler (see `upload`).
pub const PAUSE: u32 = u32::MAX;

/// Sample `seq`: value `seq / 2`.
pub fn sample(seq: u32) -> Sample {
    Sample {
        seq,
        value: seq as f32 / 2.0,
    }
}

/// A builder serving the Lab with `probe`.
pub fn lab_server(probe: &Arc<Probe>) -> ServerBuilder {
    Server::builder().add_service(svc::AsyncServer::new(Lab {
        probe: probe.clone(),
    }))
}

/// Where a test server listens.
#[derive(Clone, Debug)]
pub enum Endpoint {
    Tcp(std::net::SocketAddr),
    Unix(PathBuf),
    /// No socket: calls go through `Server::start_call` in this process.
    InProcess(Server),
    /// A `ws://` URL served by `bebop_rpc_websocket::serve`.
    WebSocket(String),
    /// An HTTP server (`bebop-rpc-http`) at this base URL, called over HTTP/1.1, or h2c
    /// with prior knowledge.
    Http {
        url: String,
        h2: bool,
    },
    /// An HTTPS server whose self-signed certificate `tls` trusts (ALPN picks HTTP/2).
    Https {
        url: String,
        tls: Arc<bebop_rpc_http::rustls::ClientConfig>,
    },
}

impl Endpoint {
    pub async fn connect(&self) -> Client {
        match self {
            Endpoint::Tcp(a) => Client::connect_tcp(*a).await.unwrap(),
            Endpoint::Unix(p) => Client::connect_unix(p).await.unwrap(),
            Endpoint::InProcess(server) => {
                Client::over(bebop_rpc::transport::InProcess::new(server.clone()))
            }
            Endpoint::WebSocket(url) => {
                Client::over(bebop_rpc_websocket::WebSocketConnector::new(url).unwrap())
            }
            Endpoint::Http { url, h2 } => {
                let mut builder = bebop_rpc_http::HttpConnector::builder(url);
                if *h2 {
                    builder = builder.http2_prior_knowledge();
                }
                Client::over(builder.build().unwrap())
            }
            Endpoint::Https { url, tls } => Client::over(
                bebop_rpc_http::HttpConnector::builder(url)
                    .tls_config(tls.clone())
                    .build()
                    .unwrap(),
            ),
        }
    }

    /// The base URL of an HTTP endpoint.
    pub fn url(&self) -> Option<&str> {
        match self {
            Endpoint::Http { url, .. } | Endpoint::Https { url, .. } => Some(url),
            _ => None,
        }
    }
}

/// The carriers the tests run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Unix,
    /// `Client::over(InProcess)`: the transport API of `bebop_rpc::transport`, no socket.
    InProcess,
    /// `Client::over(WebSocketConnector)`: one WebSocket connection per call.
    WebSocket,
    /// `bebop-rpc-http` over HTTP/1.1 (duplex calls are `UNIMPLEMENTED` there).
    Http1,
    /// `bebop-rpc-http` over HTTP/2 without TLS, prior knowledge.
    H2c,
    /// `bebop-rpc-http` over TLS with a self-signed certificate, HTTP/2 by ALPN.
    Https,
}

impl Transport {
    /// Whether calls travel over HTTP.
    pub fn is_http(self) -> bool {
        matches!(self, Transport::Http1 | Transport::H2c | Transport::Https)
    }

    /// Whether duplex calls work (not over HTTP/1.1, docs/rpc.md "HTTP transport").
    pub fn has_duplex(self) -> bool {
        self != Transport::Http1
    }
}

/// The binary connections: every test of connection behaviour runs on both.
pub const TRANSPORTS: [Transport; 2] = [Transport::Tcp, Transport::Unix];

/// Every carrier of calls: the tests of call semantics (the conformance list) run on each.
pub const CALL_TRANSPORTS: [Transport; 7] = [
    Transport::Tcp,
    Transport::Unix,
    Transport::InProcess,
    Transport::WebSocket,
    Transport::Http1,
    Transport::H2c,
    Transport::Https,
];

/// A server listening on loopback (or a Unix socket in a fresh temporary directory),
/// serving until dropped.
pub struct Running {
    pub server: Server,
    pub endpoint: Endpoint,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    _dir: Option<TempDir>,
}

impl Running {
    pub async fn start(transport: Transport, builder: ServerBuilder) -> Running {
        let server = builder.build();
        match transport {
            Transport::Tcp => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let endpoint = Endpoint::Tcp(listener.local_addr().unwrap());
                let s = server.clone();
                let task = tokio::spawn(async move { s.serve_tcp(listener).await });
                Running {
                    server,
                    endpoint,
                    task,
                    _dir: None,
                }
            }
            Transport::Unix => {
                let dir = TempDir::new();
                let path = dir.0.join("lab.sock");
                let listener = tokio::net::UnixListener::bind(&path).unwrap();
                let s = server.clone();
                let task = tokio::spawn(async move { s.serve_unix(listener).await });
                Running {
                    server,
                    endpoint: Endpoint::Unix(path),
                    task,
                    _dir: Some(dir),
                }
            }
            Transport::InProcess => Running {
                endpoint: Endpoint::InProcess(server.clone()),
                server,
                task: tokio::spawn(async { Ok(()) }),
                _dir: None,
            },
            Transport::WebSocket => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let url = format!("ws://{}/lab", listener.local_addr().unwrap());
                let task = tokio::spawn(bebop_rpc_websocket::serve(server.clone(), listener));
                Running {
                    server,
                    endpoint: Endpoint::WebSocket(url),
                    task,
                    _dir: None,
                }
            }
            Transport::Http1 | Transport::H2c => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let url = format!("http://{}", listener.local_addr().unwrap());
                let task = tokio::spawn(bebop_rpc_http::serve(server.clone(), listener));
                Running {
                    server,
                    endpoint: Endpoint::Http {
                        url,
                        h2: transport == Transport::H2c,
                    },
                    task,
                    _dir: None,
                }
            }
            Transport::Https => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let url = format!("https://{}", listener.local_addr().unwrap());
                let (server_tls, client_tls) = self_signed_tls();
                let task = tokio::spawn(bebop_rpc_http::serve_tls(
                    server.clone(),
                    listener,
                    server_tls,
                ));
                Running {
                    server,
                    endpoint: Endpoint::Https {
                        url,
                        tls: client_tls,
                    },
                    task,
                    _dir: None,
                }
            }
        }
    }

    pub async fn client(&self) -> Client {
        self.endpoint.connect().await
    }

    pub fn lab(client: &Client) -> svc::AsyncClient {
        svc::AsyncClient::new(client.clone())
    }

    pub async fn stop(self) {
        self.server.shutdown(Duration::from_secs(5)).await;
        self.task.await.unwrap().unwrap();
    }
}

/// A self-signed certificate for 127.0.0.1: the server's TLS configuration, and a client's
/// that trusts it (both on the ring provider).
pub fn self_signed_tls() -> (
    Arc<bebop_rpc_http::rustls::ServerConfig>,
    Arc<bebop_rpc_http::rustls::ClientConfig>,
) {
    use bebop_rpc_http::rustls;
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = certified.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    (Arc::new(server), Arc::new(client))
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "bebop-rpc-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Waits up to five seconds for `f` to hold.
pub async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..500 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// Whether Node.js is installed (`scripts/test-services` installs it); without it a test
/// that needs it is skipped with a notice, unless CI is set, where that is a failure.
pub fn node_or_skip(test: &str) -> bool {
    let node = std::process::Command::new("node").arg("--version").output();
    match node.ok().filter(|o| o.status.success()) {
        Some(version) => {
            eprintln!("node {}", String::from_utf8_lossy(&version.stdout).trim());
            true
        }
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{test}: node is not installed, and CI needs it (scripts/test-services)"
            );
            eprintln!("SKIPPED {test}: node is not installed");
            false
        }
    }
}

/// Runs `node tests/js/SCRIPT ARGS...` (at most 30 s) and returns what it printed, line by
/// line; a failing script fails the test with its output.
pub async fn run_node(script: &str, args: &[String]) -> Vec<String> {
    let path = format!("{}/tests/js/{script}", env!("CARGO_MANIFEST_DIR"));
    let run = tokio::process::Command::new("node")
        .arg(&path)
        .args(args)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("node took longer than 30 s")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node {script} {args:?} failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_string).collect()
}

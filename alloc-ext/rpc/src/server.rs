//! The server: [`Service`] (implemented by generated code), [`Interceptor`], [`Limits`],
//! and [`Server`], which serves TCP and Unix listeners or any byte stream.

mod batch;
mod call;
mod connection;
pub(crate) mod dispatch;
mod futures;

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bebop_runtime::rpc::{DiscoveryResponse, ServiceInfo};
use bebop_runtime::{Array, MethodInfo};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use call::{BoxFuture, Requests, ResponseSink, ServerCall};
pub use futures::FuturesConfig;

use crate::context::{Address, Context, Credentials, Peer};
use crate::status::Status;

/// A service the server routes calls to: implemented by the generated `AsyncServer` of
/// every schema service.
pub trait Service: Send + Sync + 'static {
    /// The discovery record of the service (method 0).
    fn info(&self) -> ServiceInfo<'static>;

    /// Every method of the service.
    fn methods(&self) -> &'static [MethodInfo];

    /// Runs one call of `method` (one of [`methods`](Self::methods)).
    fn call(&self, method: MethodInfo, call: ServerCall) -> BoxFuture<'static, ()>;
}

/// Runs before every call's handler, in registration order (the first registered runs
/// first), and may refuse the call. Interceptors see the same [`Context`] as the handler:
/// they can read metadata, set response metadata, set the peer's identity and attach values.
///
/// A plain closure `Fn(&Context) -> Result<(), Status>` is an interceptor:
///
/// ```
/// use bebop_rpc::{Context, Server, Status};
///
/// let server = Server::builder()
///     .interceptor(|ctx: &Context| match ctx.metadata().get("authorization") {
///         None => Err(Status::unauthenticated("no credentials")),
///         Some("Bearer admin") => Ok(()),
///         Some(_) => Err(Status::permission_denied("not an admin")),
///     })
///     .build();
/// # drop(server);
/// ```
pub trait Interceptor: Send + Sync + 'static {
    /// Checks or decorates the call; an `Err` fails the call with that status and the
    /// handler does not run.
    fn intercept<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<(), Status>>;
}

impl<F> Interceptor for F
where
    F: Fn(&Context) -> Result<(), Status> + Send + Sync + 'static,
{
    fn intercept<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<(), Status>> {
        let result = self(ctx);
        Box::pin(std::future::ready(result))
    }
}

/// The server's resource limits (`docs/rpc.md`, "Resource limits"). What breaks one is answered
/// `RESOURCE_EXHAUSTED`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest frame payload accepted; a larger frame is refused as soon as its header
    /// arrives and the connection is closed (nothing of it is buffered).
    pub max_frame_payload: usize,
    /// The largest call header message accepted.
    pub max_call_header: usize,
    /// The most bytes of request metadata (as encoded) a call may carry.
    pub max_metadata: usize,
    /// The most calls open at once on one connection (calls whose response ended but whose
    /// client is still sending count too).
    pub max_concurrent_calls: usize,
    /// The most connections served at once; more are answered and closed.
    pub max_connections: usize,
    /// Request frames waiting for a slow streaming handler, per call; when full, the
    /// connection stops reading.
    pub request_queue: usize,
    /// Bytes of encoded responses waiting to be written, per connection; past that,
    /// handlers sending responses wait.
    pub response_buffer: usize,
    /// How long the rest of an element may take to arrive once its first byte has.
    pub element_timeout: Duration,
    /// How long a connection without calls may stay silent.
    pub idle_timeout: Option<Duration>,
    /// How long a write may make no progress (a client that stopped reading) before the
    /// connection is closed.
    pub write_timeout: Duration,
    /// The most calls one batch (method 1) may hold; a larger batch is refused whole.
    pub max_batch_calls: usize,
    /// The most bytes a batch's encoded `BatchResponse` may take. A call whose results
    /// (the elements of a server stream, say) would take it past this fails alone.
    pub max_batch_response: usize,
    /// At most how much of a batch's time is kept back for sending its response: the calls
    /// of a batch get the batch's deadline less the smaller of this and a tenth of the time
    /// the batch has left when it starts (`docs/rpc.md`, "Batches").
    pub batch_deadline_reserve: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_payload: 4 << 20,
            max_call_header: 16 << 10,
            max_metadata: 8 << 10,
            max_concurrent_calls: 256,
            max_connections: 10_000,
            request_queue: 16,
            response_buffer: 256 << 10,
            element_timeout: Duration::from_secs(10),
            idle_timeout: Some(Duration::from_secs(300)),
            write_timeout: Duration::from_secs(30),
            max_batch_calls: 1000,
            max_batch_response: 4 << 20,
            batch_deadline_reserve: Duration::from_millis(100),
        }
    }
}

type IdentityHook = Arc<dyn Fn(&Peer) -> Option<String> + Send + Sync>;

pub(crate) struct Route {
    pub service: Arc<dyn Service>,
    pub info: MethodInfo,
}

pub(crate) struct Shared {
    pub routes: HashMap<u32, Route>,
    pub interceptors: Vec<Arc<dyn Interceptor>>,
    pub limits: Limits,
    pub discovery: Vec<u8>,
    pub identity: Option<IdentityHook>,
    pub tracker: TaskTracker,
    /// Raised by `shutdown`: stop accepting connections and calls.
    pub draining: CancellationToken,
    /// Raised when the grace period is over: cancel every call.
    pub stop: CancellationToken,
    pub connections: Arc<Semaphore>,
    /// Methods 2 to 4, when the server runs futures.
    pub futures: Option<Arc<futures::Futures>>,
}

/// Builds a [`Server`].
#[derive(Default)]
pub struct ServerBuilder {
    services: Vec<Arc<dyn Service>>,
    interceptors: Vec<Arc<dyn Interceptor>>,
    limits: Limits,
    identity: Option<IdentityHook>,
    futures: Option<(Arc<dyn crate::futures::FutureStore>, FuturesConfig)>,
}

impl ServerBuilder {
    /// Serves `service` (a generated `AsyncServer`). Several services share a server,
    /// routed by method id.
    ///
    /// # Panics
    ///
    /// When a method id is already served by an earlier service: two methods would share
    /// a route (a schema mistake the compiler reports for one schema, but not across
    /// schemas).
    pub fn add_service(mut self, service: impl Service) -> Self {
        self.services.push(Arc::new(service));
        self
    }

    /// Adds an interceptor; interceptors run in the order they are added.
    pub fn interceptor(mut self, interceptor: impl Interceptor) -> Self {
        self.interceptors.push(Arc::new(interceptor));
        self
    }

    /// Sets the resource limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets a hook that derives the authenticated identity of a connection's peer (from
    /// Unix socket credentials, say) when it connects. Interceptors can set or replace it
    /// per call.
    pub fn identity(
        mut self,
        hook: impl Fn(&Peer) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.identity = Some(Arc::new(hook));
        self
    }

    /// Serves futures (methods 2 to 4: dispatch, resolve, cancel; `docs/rpc.md`,
    /// "Futures") on `store`, with the default [`FuturesConfig`]. A server built without
    /// answers them `UNIMPLEMENTED`.
    ///
    /// Before the first futures call is answered, the server fails the futures its runner
    /// ([`StoreConfig::runner`](crate::futures::StoreConfig::runner)) left pending in an
    /// earlier run ([`FutureStore::fail_runner`](crate::futures::FutureStore::fail_runner)),
    /// and starts a task that applies the retention policy and cancels the local tasks of
    /// futures cancelled through the store; it ends with [`Server::shutdown`]. Built inside
    /// a tokio runtime, the server does this at once; otherwise with its first futures call.
    ///
    /// ```
    /// use bebop_rpc::futures::MemoryStore;
    /// use bebop_rpc::transport::InProcess;
    /// use bebop_rpc::{CallOptions, Client, Peer, Server};
    /// use bebop_runtime::rpc::{FutureDispatchRequest, FutureHandle};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = Server::builder().futures(MemoryStore::new()).build();
    /// // A future belongs to its caller: the peer's identity, else its remote address.
    /// let peer = Peer::new(None, None);
    /// peer.set_identity("alice");
    /// let client = Client::over(InProcess::with_peer(server, peer));
    /// // Dispatch discovery (method 0) in the background.
    /// let request = FutureDispatchRequest { method_id: Some(0), ..Default::default() };
    /// let handle = client
    ///     .unary::<_, FutureHandle>(2, &request, CallOptions::new())
    ///     .await
    ///     .unwrap();
    /// assert_eq!(handle.into_inner().id.as_bytes()[6] >> 4, 4); // a random UUID
    /// # }
    /// ```
    pub fn futures(self, store: impl crate::futures::FutureStore) -> Self {
        self.futures_shared(Arc::new(store), FuturesConfig::default())
    }

    /// [`futures`](Self::futures) with a shared store and settings.
    pub fn futures_shared(
        mut self,
        store: Arc<dyn crate::futures::FutureStore>,
        config: FuturesConfig,
    ) -> Self {
        self.futures = Some((store, config));
        self
    }

    /// The server.
    pub fn build(self) -> Server {
        let mut routes = HashMap::new();
        let mut infos: Vec<ServiceInfo<'static>> = Vec::new();
        for service in &self.services {
            infos.push(service.info());
            for m in service.methods() {
                if let Some(earlier) = routes.insert(
                    m.id,
                    Route {
                        service: service.clone(),
                        info: *m,
                    },
                ) {
                    panic!(
                        "{}.{} and {}.{} have the same method id {:#010x}",
                        earlier.info.service, earlier.info.name, m.service, m.name, m.id
                    );
                }
            }
        }
        let discovery = bebop_runtime::encode_to_vec(&DiscoveryResponse {
            services: Array::from_slice(&infos),
        })
        .unwrap_or_default();
        let connections = Arc::new(Semaphore::new(self.limits.max_connections));
        let server = Server {
            shared: Arc::new(Shared {
                routes,
                interceptors: self.interceptors,
                limits: self.limits,
                discovery,
                identity: self.identity,
                tracker: TaskTracker::new(),
                draining: CancellationToken::new(),
                stop: CancellationToken::new(),
                connections,
                futures: self
                    .futures
                    .map(|(store, config)| Arc::new(futures::Futures::new(store, config))),
            }),
        };
        if server.shared.futures.is_some() {
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                let shared = server.shared.clone();
                handle.spawn(async move {
                    if let Err(status) = shared.futures_ready().await {
                        tracing::warn!(%status, "futures are not available");
                    }
                });
            }
        }
        server
    }
}

/// A Bebop RPC server on tokio. Cheap to clone; clones serve the same services and shut
/// down together.
///
/// ```no_run
/// # async fn run(service: impl bebop_rpc::Service) -> std::io::Result<()> {
/// use std::time::Duration;
/// use bebop_rpc::Server;
///
/// let server = Server::builder().add_service(service).build();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:7700").await?;
/// let serving = tokio::spawn({
///     let server = server.clone();
///     async move { server.serve_tcp(listener).await }
/// });
/// // ... later: stop accepting, give calls five seconds to finish.
/// server.shutdown(Duration::from_secs(5)).await;
/// serving.await??;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl Server {
    /// A builder.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Accepts TCP connections until [`shutdown`](Self::shutdown), serving each on its own
    /// task. Returns when shutdown begins (connections are then still finishing) or when
    /// accepting fails for good.
    pub async fn serve_tcp(&self, listener: TcpListener) -> io::Result<()> {
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = self.shared.draining.cancelled() => return Ok(()),
            };
            match accepted {
                Ok((stream, remote)) => {
                    let _ = stream.set_nodelay(true);
                    let local = stream.local_addr().ok().map(Address::Tcp);
                    let peer = Peer::new(Some(Address::Tcp(remote)), local);
                    self.spawn_connection(stream, peer);
                }
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Accepts Unix socket connections until [`shutdown`](Self::shutdown). The peer's
    /// credentials are in its [`Address`].
    #[cfg(unix)]
    pub async fn serve_unix(&self, listener: tokio::net::UnixListener) -> io::Result<()> {
        let local_path = listener
            .local_addr()
            .ok()
            .and_then(|a| a.as_pathname().map(|p| p.to_path_buf()));
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = self.shared.draining.cancelled() => return Ok(()),
            };
            match accepted {
                Ok((stream, _)) => {
                    let credentials = stream.peer_cred().ok().map(|c| Credentials {
                        uid: c.uid(),
                        gid: c.gid(),
                        pid: c.pid(),
                    });
                    let peer = Peer::new(
                        Some(Address::Unix {
                            path: None,
                            credentials,
                        }),
                        Some(Address::Unix {
                            path: local_path.clone(),
                            credentials: None,
                        }),
                    );
                    self.spawn_connection(stream, peer);
                }
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn spawn_connection<IO>(&self, io: IO, peer: Peer)
    where
        IO: AsyncRead + AsyncWrite + Send + 'static,
    {
        let server = self.clone();
        match self.shared.connections.clone().try_acquire_owned() {
            Ok(permit) => {
                self.shared.tracker.spawn(async move {
                    server.serve_connection(io, peer).await;
                    drop(permit);
                });
            }
            Err(_) => {
                let limit = self.shared.limits.max_connections;
                self.shared.tracker.spawn(async move {
                    connection::refuse(
                        io,
                        Status::resource_exhausted(format!(
                            "the server serves at most {limit} connections"
                        )),
                    )
                    .await;
                });
            }
        }
    }

    /// Serves one connection over any byte stream (a child process's stdin and stdout
    /// joined with `tokio::io::join`, a named pipe, a TLS stream) until the peer closes it,
    /// it breaks a limit, or the server shuts down.
    pub async fn serve_connection<IO>(&self, io: IO, peer: Peer)
    where
        IO: AsyncRead + AsyncWrite + Send + 'static,
    {
        if let Some(hook) = &self.shared.identity {
            if let Some(identity) = hook(&peer) {
                peer.set_identity(identity);
            }
        }
        connection::serve(self.shared.clone(), io, Arc::new(peer)).await
    }

    /// Shuts down gracefully: stops accepting connections and calls (new calls are
    /// answered `UNAVAILABLE`), lets calls in flight finish for up to `grace`, then cancels
    /// the rest, and returns when every connection has closed.
    pub async fn shutdown(&self, grace: Duration) {
        self.shared.draining.cancel();
        self.shared.tracker.close();
        if tokio::time::timeout(grace, self.shared.tracker.wait())
            .await
            .is_err()
        {
            self.shared.stop.cancel();
            self.shared.tracker.wait().await;
        }
    }

    /// The number of connections being served.
    pub fn connections(&self) -> usize {
        self.shared.limits.max_connections - self.shared.connections.available_permits()
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("methods", &self.shared.routes.len())
            .field("connections", &self.connections())
            .field("shutting_down", &self.shared.draining.is_cancelled())
            .finish_non_exhaustive()
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    ) || e.raw_os_error().is_some_and(|n| n == 24 || n == 23) // EMFILE, ENFILE
}

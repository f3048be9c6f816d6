//! # bebop-rpc-compare
//!
//! A side-by-side benchmark of `bebop-rpc` against tonic (gRPC over HTTP/2, prost
//! messages) on loopback. The systems ([`System`]) are bebop-rpc over each of its carriers
//! — the binary transport on TCP, HTTP/1.1 and h2c (`bebop-rpc-http`), WebSocket
//! (`bebop-rpc-websocket`) — and tonic, the reference. One bebop-rpc server listens on
//! three ports of `127.0.0.1` (binary, HTTP/1.1 and h2c on one port, WebSocket) and a
//! tonic server on a fourth, all in this process, in one tokio multi-thread runtime of two
//! workers; every client calls them with the same payload values. Every response is
//! decoded and compared with what was sent or asked for, so no system can skip work.
//!
//! Connections: binary TCP, h2c and tonic carry every call of a client on one connection;
//! HTTP/1.1 takes a connection from hyper's pool per call in flight (so one for sequential
//! calls, up to one per caller with concurrent callers), reused; WebSocket opens a
//! connection per call, as its specification has it (one call per WebSocket connection),
//! so its rows include the cost of a TCP connection and a WebSocket handshake per call.
//!
//! Measured, per system:
//!
//! - unary latency (p50, p99) of sequential calls, for a small record (`PersonSmall`) and a
//!   64 KiB blob;
//! - unary calls per second with 64 concurrent callers sharing one client;
//! - server-stream messages per second: one stream of N items, records or blobs;
//! - bebop-rpc over binary TCP alone: a chain of five dependent calls (each call's request is the previous
//!   call's response), made as five sequential unary calls and as one batch (method 1, each
//!   call taking its input from the one before), through a proxy on loopback that delays
//!   the bytes in each direction by [`PROXY_DELAY`], as a slow network would
//!   ([`BatchRow`]).
//!
//! The systems are interleaved: every measurement runs in rounds that alternate the order
//! of the systems (A B C D E, E D C B A, A B C D E, ...), each system's turn preceded by a
//! warm-up of its own.
//!
//! [`run`] does it all and returns a [`Report`]; the `rpc-compare` binary prints it.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The Bebop side: generated from `schemas/bench.bop` by bebop-build.
#[allow(dead_code, missing_docs, clippy::all)]
pub mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

/// The tonic side: generated from `proto/bench.proto` by tonic-prost-build.
#[allow(missing_docs, clippy::all)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/bench.rs"));
}

use schema::bench::bench as bsvc;
use schema::owned::bench as bowned;

/// An error of the benchmark: a failed call, a wrong response, a server that did not start.
pub type Error = String;

// ---------------------------------------------------------------------------------------
// Payloads

/// The size of the blob payload.
pub const BLOB_SIZE: usize = 64 << 10;

/// The payload values every system sends: built once, converted into each system's types.
#[derive(Clone, Debug)]
pub struct Payloads {
    person: Person,
    blob: Vec<u8>,
}

/// The small record, independent of either system's types.
#[derive(Clone, Debug)]
struct Person {
    name: String,
    email: String,
    age: u32,
    active: bool,
    tags: Vec<String>,
}

impl Payloads {
    /// The benchmark's payloads: a small record and 64 KiB of pseudo-random bytes.
    pub fn new() -> Payloads {
        // xorshift64*: deterministic, incompressible-looking bytes.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let blob = (0..BLOB_SIZE)
            .map(|_| {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect();
        Payloads {
            person: Person {
                name: "Ada Lovelace".into(),
                email: "ada.lovelace@analytical-engine.org".into(),
                age: 36,
                active: true,
                tags: vec!["mathematics".into(), "engines".into(), "poetry".into()],
            },
            blob,
        }
    }

    fn bebop_person(&self, id: u64) -> bowned::PersonSmall {
        let p = &self.person;
        bowned::PersonSmall {
            id,
            name: p.name.clone(),
            email: p.email.clone(),
            age: p.age,
            active: p.active,
            tags: p.tags.clone(),
        }
    }

    fn bebop_blob(&self, id: u64) -> bowned::Blob {
        bowned::Blob {
            id: Some(id),
            data: Some(self.blob.clone()),
        }
    }

    fn pb_person(&self, id: u64) -> pb::PersonSmall {
        let p = &self.person;
        pb::PersonSmall {
            id,
            name: p.name.clone(),
            email: p.email.clone(),
            age: p.age,
            active: p.active,
            tags: p.tags.clone(),
        }
    }

    fn pb_blob(&self, id: u64) -> pb::Blob {
        pb::Blob {
            id,
            data: prost::bytes::Bytes::from(self.blob.clone()),
        }
    }

    /// The encoded sizes of the record and the blob in each system's message encoding
    /// (without framing): `(bebop person, bebop blob, protobuf person, protobuf blob)`.
    pub fn encoded_sizes(&self) -> (usize, usize, usize, usize) {
        use bebop_runtime::Encode;
        use prost::Message;
        (
            self.bebop_person(1).encoded_size(),
            self.bebop_blob(1).encoded_size(),
            self.pb_person(1).encoded_len(),
            self.pb_blob(1).encoded_len(),
        )
    }
}

impl Default for Payloads {
    fn default() -> Self {
        Payloads::new()
    }
}

/// Which payload a measurement carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The small record.
    Person,
    /// The 64 KiB blob.
    Blob,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Person => "PersonSmall",
            Kind::Blob => "64 KiB blob",
        }
    }
}

// ---------------------------------------------------------------------------------------
// The servers

/// The bebop-rpc handler: echoes, and streams copies of the payloads.
struct BebopBench {
    payloads: Arc<Payloads>,
}

impl bsvc::AsyncHandler for BebopBench {
    async fn echo_person(
        &self,
        _ctx: &bebop_rpc::Context,
        request: bowned::PersonSmall,
    ) -> Result<bowned::PersonSmall, bebop_rpc::Status> {
        Ok(request)
    }

    async fn echo_blob(
        &self,
        _ctx: &bebop_rpc::Context,
        request: bowned::Blob,
    ) -> Result<bowned::Blob, bebop_rpc::Status> {
        Ok(request)
    }

    async fn stream(
        &self,
        _ctx: &bebop_rpc::Context,
        request: schema::bench::StreamRequest,
        mut responses: bebop_rpc::ResponseSink<bowned::Item>,
    ) -> Result<(), bebop_rpc::Status> {
        let first = request.first;
        match request.payload {
            schema::bench::Payload::Person => {
                let mut item = bowned::Item {
                    person: Some(self.payloads.bebop_person(first)),
                    blob: None,
                };
                for i in 0..u64::from(request.count) {
                    if let Some(p) = item.person.as_mut() {
                        p.id = first + i;
                    }
                    responses.send(&item).await?;
                }
            }
            schema::bench::Payload::Blob => {
                let mut item = bowned::Item {
                    person: None,
                    blob: Some(self.payloads.bebop_blob(first)),
                };
                for i in 0..u64::from(request.count) {
                    if let Some(b) = item.blob.as_mut() {
                        b.id = Some(first + i);
                    }
                    responses.send(&item).await?;
                }
            }
            schema::bench::Payload::Unspecified => {
                return Err(bebop_rpc::Status::invalid_argument("no payload kind"));
            }
        }
        Ok(())
    }
}

/// The tonic handler: the same.
struct TonicBench {
    payloads: Arc<Payloads>,
}

type ItemStream = Pin<Box<dyn futures_util::Stream<Item = Result<pb::Item, tonic::Status>> + Send>>;

#[tonic::async_trait]
impl pb::bench_server::Bench for TonicBench {
    async fn echo_person(
        &self,
        request: tonic::Request<pb::PersonSmall>,
    ) -> Result<tonic::Response<pb::PersonSmall>, tonic::Status> {
        Ok(tonic::Response::new(request.into_inner()))
    }

    async fn echo_blob(
        &self,
        request: tonic::Request<pb::Blob>,
    ) -> Result<tonic::Response<pb::Blob>, tonic::Status> {
        Ok(tonic::Response::new(request.into_inner()))
    }

    type StreamStream = ItemStream;

    async fn stream(
        &self,
        request: tonic::Request<pb::StreamRequest>,
    ) -> Result<tonic::Response<ItemStream>, tonic::Status> {
        let request = request.into_inner();
        let first = request.first;
        let count = u64::from(request.count);
        let stream: ItemStream = match request.payload() {
            pb::Payload::Person => {
                let person = self.payloads.pb_person(first);
                Box::pin(futures_util::stream::iter((0..count).map(move |i| {
                    Ok(pb::Item {
                        person: Some(pb::PersonSmall {
                            id: first + i,
                            ..person.clone()
                        }),
                        blob: None,
                    })
                })))
            }
            pb::Payload::Blob => {
                // `Bytes` clones share the buffer, as bebop's sink encodes from a reference.
                let blob = self.payloads.pb_blob(first);
                Box::pin(futures_util::stream::iter((0..count).map(move |i| {
                    Ok(pb::Item {
                        person: None,
                        blob: Some(pb::Blob {
                            id: first + i,
                            data: blob.data.clone(),
                        }),
                    })
                })))
            }
            pb::Payload::Unspecified => {
                return Err(tonic::Status::invalid_argument("no payload kind"));
            }
        };
        Ok(tonic::Response::new(stream))
    }
}

/// The servers, listening on loopback, and a client of each system.
struct Systems {
    bebop_server: bebop_rpc::Server,
    /// The bebop-rpc server's binary TCP listener.
    bebop_addr: SocketAddr,
    /// The bebop-rpc server's listeners (binary TCP, HTTP, WebSocket), by carrier.
    bebop_tasks: Vec<(&'static str, tokio::task::JoinHandle<std::io::Result<()>>)>,
    tonic_stop: tokio::sync::oneshot::Sender<()>,
    tonic_task: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    bebop_tcp: bsvc::AsyncClient,
    bebop_http1: bsvc::AsyncClient,
    bebop_h2c: bsvc::AsyncClient,
    bebop_websocket: bsvc::AsyncClient,
    tonic: pb::bench_client::BenchClient<tonic::transport::Channel>,
}

async fn loopback() -> Result<(tokio::net::TcpListener, SocketAddr), Error> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("binding 127.0.0.1:0 failed: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("local_addr failed: {e}"))?;
    Ok((listener, addr))
}

impl Systems {
    async fn start(payloads: &Arc<Payloads>) -> Result<Systems, Error> {
        // bebop-rpc: one server on three listeners, one per carrier.
        let (listener, bebop_addr) = loopback().await?;
        let (http_listener, http_addr) = loopback().await?;
        let (ws_listener, ws_addr) = loopback().await?;
        let bebop_server = bebop_rpc::Server::builder()
            .add_service(bsvc::AsyncServer::new(BebopBench {
                payloads: payloads.clone(),
            }))
            .build();
        let bebop_tasks = vec![
            (
                "binary TCP",
                tokio::spawn({
                    let server = bebop_server.clone();
                    async move { server.serve_tcp(listener).await }
                }),
            ),
            (
                "HTTP",
                tokio::spawn(bebop_rpc_http::serve(bebop_server.clone(), http_listener)),
            ),
            (
                "WebSocket",
                tokio::spawn(bebop_rpc_websocket::serve(
                    bebop_server.clone(),
                    ws_listener,
                )),
            ),
        ];
        let bebop_tcp = bsvc::AsyncClient::new(
            bebop_rpc::Client::connect_tcp(bebop_addr)
                .await
                .map_err(|e| format!("connecting to bebop-rpc failed: {e}"))?,
        );
        // The HTTP and WebSocket clients connect on their first call (a warm-up's).
        let http_url = format!("http://{http_addr}");
        let bebop_http1 = bsvc::AsyncClient::new(bebop_rpc::Client::over(
            bebop_rpc_http::HttpConnector::new(&http_url)
                .map_err(|e| format!("the HTTP/1.1 connector failed: {e}"))?,
        ));
        let bebop_h2c = bsvc::AsyncClient::new(bebop_rpc::Client::over(
            bebop_rpc_http::HttpConnector::builder(&http_url)
                .http2_prior_knowledge()
                .build()
                .map_err(|e| format!("the h2c connector failed: {e}"))?,
        ));
        let bebop_websocket = bsvc::AsyncClient::new(bebop_rpc::Client::over(
            bebop_rpc_websocket::WebSocketConnector::new(format!("ws://{ws_addr}/"))
                .map_err(|e| format!("the WebSocket connector failed: {e}"))?,
        ));

        // tonic, with its default HTTP/2 settings and TCP_NODELAY on both ends (as bebop-rpc).
        let (listener, tonic_addr) = loopback().await?;
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let (tonic_stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = pb::bench_server::BenchServer::new(TonicBench {
            payloads: payloads.clone(),
        });
        let tonic_task = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                }),
        );
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{tonic_addr}"))
            .map_err(|e| format!("bad tonic endpoint: {e}"))?
            .tcp_nodelay(true)
            .connect()
            .await
            .map_err(|e| format!("connecting to tonic failed: {e}"))?;
        let tonic = pb::bench_client::BenchClient::new(channel);
        Ok(Systems {
            bebop_server,
            bebop_addr,
            bebop_tasks,
            tonic_stop,
            tonic_task,
            bebop_tcp,
            bebop_http1,
            bebop_h2c,
            bebop_websocket,
            tonic,
        })
    }

    fn caller(&self, system: System, payloads: &Arc<Payloads>) -> Caller {
        let client = match system {
            System::BebopTcp => &self.bebop_tcp,
            System::BebopHttp1 => &self.bebop_http1,
            System::BebopH2c => &self.bebop_h2c,
            System::BebopWebSocket => &self.bebop_websocket,
            System::Tonic => {
                return Caller::Tonic {
                    client: self.tonic.clone(),
                    person: payloads.pb_person(0),
                    blob: payloads.pb_blob(0),
                    payloads: payloads.clone(),
                };
            }
        };
        Caller::Bebop {
            system,
            client: client.clone(),
            person: payloads.bebop_person(0),
            blob: payloads.bebop_blob(0),
            payloads: payloads.clone(),
        }
    }

    async fn stop(self) -> Result<(), Error> {
        drop(self.bebop_tcp);
        drop(self.bebop_http1);
        drop(self.bebop_h2c);
        drop(self.bebop_websocket);
        drop(self.tonic);
        self.bebop_server.shutdown(Duration::from_secs(5)).await;
        for (carrier, task) in self.bebop_tasks {
            task.await
                .map_err(|e| format!("the bebop-rpc {carrier} server task failed: {e}"))?
                .map_err(|e| format!("the bebop-rpc {carrier} server failed: {e}"))?;
        }
        let _ = self.tonic_stop.send(());
        match tokio::time::timeout(Duration::from_secs(5), self.tonic_task).await {
            Ok(r) => r
                .map_err(|e| format!("the tonic server task failed: {e}"))?
                .map_err(|e| format!("the tonic server failed: {e}"))?,
            Err(_) => return Err("the tonic server did not stop within 5 s".into()),
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// The callers

/// The number of systems under test.
pub const SYSTEMS: usize = 5;

/// A system under test: bebop-rpc over one of its carriers, or tonic (the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    /// bebop-rpc over its binary transport on TCP: one connection.
    BebopTcp,
    /// bebop-rpc over HTTP/1.1 (`bebop-rpc-http`): hyper's pool, a connection per call in
    /// flight, reused.
    BebopHttp1,
    /// bebop-rpc over HTTP/2 with prior knowledge (`bebop-rpc-http`): one connection.
    BebopH2c,
    /// bebop-rpc over WebSocket (`bebop-rpc-websocket`): a new connection per call.
    BebopWebSocket,
    /// tonic: gRPC over HTTP/2, one connection; the reference the ratios compare with.
    Tonic,
}

impl System {
    /// Every system, in the order of the report's columns (and of [`Row::values`]).
    pub const ALL: [System; SYSTEMS] = [
        System::BebopTcp,
        System::BebopHttp1,
        System::BebopH2c,
        System::BebopWebSocket,
        System::Tonic,
    ];

    /// The system's name in the report.
    pub fn label(self) -> &'static str {
        match self {
            System::BebopTcp => "bebop TCP",
            System::BebopHttp1 => "bebop HTTP/1.1",
            System::BebopH2c => "bebop h2c",
            System::BebopWebSocket => "bebop WebSocket",
            System::Tonic => "tonic",
        }
    }

    /// The system's place in [`System::ALL`].
    pub fn index(self) -> usize {
        match self {
            System::BebopTcp => 0,
            System::BebopHttp1 => 1,
            System::BebopH2c => 2,
            System::BebopWebSocket => 3,
            System::Tonic => 4,
        }
    }
}

/// One caller of one system: its client (shared with the system's other callers, and
/// with them its connections) and its own copies of the payloads, whose ids it sets per
/// call.
enum Caller {
    Bebop {
        system: System,
        client: bsvc::AsyncClient,
        person: bowned::PersonSmall,
        blob: bowned::Blob,
        payloads: Arc<Payloads>,
    },
    Tonic {
        client: pb::bench_client::BenchClient<tonic::transport::Channel>,
        person: pb::PersonSmall,
        blob: pb::Blob,
        payloads: Arc<Payloads>,
    },
}

fn mismatch(system: &str, what: &str, id: u64) -> Error {
    format!("{system}: the {what} response to call {id} differs from the request")
}

impl Caller {
    /// One unary echo of `kind` with id `id`, its response checked field by field.
    async fn echo(&mut self, kind: Kind, id: u64) -> Result<(), Error> {
        match self {
            Caller::Bebop {
                system,
                client,
                person,
                blob,
                ..
            } => match kind {
                Kind::Person => {
                    person.id = id;
                    let r = client
                        .echo_person(person, bebop_rpc::CallOptions::new())
                        .await
                        .map_err(|e| format!("{} EchoPerson failed: {e}", system.label()))?
                        .into_inner();
                    if r != *person {
                        return Err(mismatch(system.label(), "EchoPerson", id));
                    }
                }
                Kind::Blob => {
                    blob.id = Some(id);
                    let r = client
                        .echo_blob(blob, bebop_rpc::CallOptions::new())
                        .await
                        .map_err(|e| format!("{} EchoBlob failed: {e}", system.label()))?
                        .into_inner();
                    if r.id != Some(id) || r.data != blob.data {
                        return Err(mismatch(system.label(), "EchoBlob", id));
                    }
                }
            },
            Caller::Tonic {
                client,
                person,
                blob,
                ..
            } => match kind {
                Kind::Person => {
                    // tonic takes its requests by value.
                    person.id = id;
                    let r = client
                        .echo_person(person.clone())
                        .await
                        .map_err(|e| format!("tonic EchoPerson failed: {e}"))?
                        .into_inner();
                    if r != *person {
                        return Err(mismatch("tonic", "EchoPerson", id));
                    }
                }
                Kind::Blob => {
                    blob.id = id;
                    let r = client
                        .echo_blob(blob.clone())
                        .await
                        .map_err(|e| format!("tonic EchoBlob failed: {e}"))?
                        .into_inner();
                    if r.id != id || r.data != blob.data {
                        return Err(mismatch("tonic", "EchoBlob", id));
                    }
                }
            },
        }
        Ok(())
    }

    /// One server stream of `count` items of `kind`, ids from `first`, every item checked;
    /// returns how long it took from the call to the end of the stream.
    async fn stream(&mut self, kind: Kind, count: u32, first: u64) -> Result<Duration, Error> {
        let started = Instant::now();
        let mut seen = 0u64;
        match self {
            Caller::Bebop {
                system,
                client,
                payloads,
                ..
            } => {
                let name = system.label();
                let request = schema::bench::StreamRequest {
                    count,
                    payload: match kind {
                        Kind::Person => schema::bench::Payload::Person,
                        Kind::Blob => schema::bench::Payload::Blob,
                    },
                    first,
                };
                let mut s = client
                    .stream(&request, bebop_rpc::CallOptions::new())
                    .await
                    .map_err(|e| format!("{name} Stream failed: {e}"))?;
                let mut want_person = payloads.bebop_person(first);
                while let Some(item) = s
                    .message()
                    .await
                    .map_err(|e| format!("{name} Stream failed after {seen} items: {e}"))?
                {
                    let id = first + seen;
                    let ok = match kind {
                        Kind::Person => {
                            want_person.id = id;
                            item.blob.is_none() && item.person.as_ref() == Some(&want_person)
                        }
                        Kind::Blob => {
                            item.person.is_none()
                                && item.blob.as_ref().is_some_and(|b| {
                                    b.id == Some(id)
                                        && b.data.as_deref() == Some(payloads.blob.as_slice())
                                })
                        }
                    };
                    if !ok {
                        return Err(format!("{name}: stream item {seen} is wrong"));
                    }
                    seen += 1;
                }
            }
            Caller::Tonic {
                client, payloads, ..
            } => {
                let request = pb::StreamRequest {
                    count,
                    payload: match kind {
                        Kind::Person => pb::Payload::Person,
                        Kind::Blob => pb::Payload::Blob,
                    } as i32,
                    first,
                };
                let mut s = client
                    .stream(request)
                    .await
                    .map_err(|e| format!("tonic Stream failed: {e}"))?
                    .into_inner();
                let mut want_person = payloads.pb_person(first);
                while let Some(item) = s
                    .message()
                    .await
                    .map_err(|e| format!("tonic Stream failed after {seen} items: {e}"))?
                {
                    let id = first + seen;
                    let ok = match kind {
                        Kind::Person => {
                            want_person.id = id;
                            item.blob.is_none() && item.person.as_ref() == Some(&want_person)
                        }
                        Kind::Blob => {
                            item.person.is_none()
                                && item.blob.as_ref().is_some_and(|b| {
                                    b.id == id && b.data.as_ref() == payloads.blob.as_slice()
                                })
                        }
                    };
                    if !ok {
                        return Err(format!("tonic: stream item {seen} is wrong"));
                    }
                    seen += 1;
                }
            }
        }
        if seen != u64::from(count) {
            return Err(format!(
                "{}: the stream ended after {seen} of {count} items",
                self.name()
            ));
        }
        Ok(started.elapsed())
    }

    fn name(&self) -> &'static str {
        match self {
            Caller::Bebop { system, .. } => system.label(),
            Caller::Tonic { .. } => System::Tonic.label(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Settings and measurements

/// How much work one measurement does: for a time, or a number of calls.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// Calls until this much time has passed.
    Time(Duration),
    /// This many calls (per caller, with concurrent callers).
    Count(u64),
}

impl Budget {
    fn until(self, started: Instant, done: u64) -> bool {
        match self {
            Budget::Time(d) => started.elapsed() < d,
            Budget::Count(n) => done < n,
        }
    }
}

/// What [`run`] measures and for how long.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Rounds of every measurement; each round runs every system, in an order that
    /// alternates (forwards, backwards).
    pub rounds: usize,
    /// The warm-up of each system before each measurement.
    pub warmup: Budget,
    /// Sequential unary calls per round (latency).
    pub sequential: Budget,
    /// Concurrent unary calls per round (per caller if a count).
    pub concurrent: Budget,
    /// The concurrent callers sharing one client (of each system).
    pub callers: usize,
    /// Items of a `PersonSmall` stream (one stream per round).
    pub stream_persons: u32,
    /// Items of a blob stream (one stream per round).
    pub stream_blobs: u32,
    /// Dependent chains of calls made each way (sequential calls, one batch) through the
    /// delaying proxy, after two of each to warm up.
    pub batch_chains: usize,
    /// Runs only the measurements whose name contains this (`latency`, `calls/s`,
    /// `stream`, `PersonSmall`, `blob`, ...).
    pub only: Option<String>,
}

impl Settings {
    fn wanted(&self, measurement: &str) -> bool {
        self.only.as_deref().is_none_or(|o| measurement.contains(o))
    }

    /// The smoke mode: a few calls of everything, every response checked.
    pub fn quick() -> Settings {
        Settings {
            rounds: 2,
            warmup: Budget::Count(1),
            sequential: Budget::Count(30),
            concurrent: Budget::Count(1),
            callers: 64,
            stream_persons: 500,
            stream_blobs: 40,
            batch_chains: 5,
            only: None,
        }
    }

    /// The full run: about two minutes on two cores (five systems).
    pub fn full() -> Settings {
        Settings {
            rounds: 4,
            warmup: Budget::Time(Duration::from_millis(200)),
            sequential: Budget::Time(Duration::from_millis(800)),
            concurrent: Budget::Time(Duration::from_millis(800)),
            callers: 64,
            stream_persons: 200_000,
            stream_blobs: 10_000,
            batch_chains: 200,
            only: None,
        }
    }
}

/// One measurement of every system.
#[derive(Clone, Debug)]
pub struct Row {
    /// What was measured.
    pub name: String,
    /// The unit of the values.
    pub unit: Unit,
    /// Each system's value, in the order of [`System::ALL`].
    pub values: [f64; SYSTEMS],
}

/// The unit of a [`Row`], which also says which way is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Microseconds: lower is better.
    Micros,
    /// Operations per second: higher is better.
    PerSecond,
}

impl Row {
    /// `system`'s value.
    pub fn value(&self, system: System) -> f64 {
        self.values[system.index()]
    }

    /// How many times better `system` is than tonic (below 1: worse; tonic's own is 1).
    pub fn ratio(&self, system: System) -> f64 {
        let (v, tonic) = (self.value(system), self.value(System::Tonic));
        match self.unit {
            Unit::Micros => tonic / v,
            Unit::PerSecond => v / tonic,
        }
    }

    fn format(&self, v: f64) -> String {
        match self.unit {
            Unit::Micros => format!("{v:.1} µs"),
            Unit::PerSecond => format!("{}/s", group(v.round() as u64)),
        }
    }
}

fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What [`run`] found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The settings it ran with.
    pub settings: Settings,
    /// Every measured row, in order.
    pub rows: Vec<Row>,
    /// The batch measurement (bebop-rpc over binary TCP only), when it was asked for.
    pub batch: Option<BatchRow>,
    /// Calls and stream items made and checked, over every system, warm-ups included.
    pub checked: u64,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Report {
    /// The rows as a markdown table: a column per system, each bebop-rpc value followed by
    /// how many times better than tonic it is.
    pub fn table(&self) -> String {
        let mut out = String::new();
        if !self.rows.is_empty() {
            out.push_str("| row |");
            for system in System::ALL {
                out.push_str(&format!(" {} |", system.label()));
            }
            out.push_str("\n|---|");
            out.push_str(&"---:|".repeat(SYSTEMS));
            out.push('\n');
        }
        for r in &self.rows {
            out.push_str(&format!("| {} |", r.name));
            for system in System::ALL {
                if system == System::Tonic {
                    out.push_str(&format!(" {} |", r.format(r.value(system))));
                } else {
                    out.push_str(&format!(
                        " {} ({:.2}x) |",
                        r.format(r.value(system)),
                        r.ratio(system)
                    ));
                }
            }
            out.push('\n');
        }
        if let Some(b) = &self.batch {
            out.push_str(&format!(
                "{}| bebop TCP, {CHAIN} dependent EchoPerson calls, proxy delaying {} µs each way \
                 | {CHAIN} sequential unary calls | 1 batch | speed-up |\n|---|---:|---:|---:|\n\
                 | median of {} chains (one unary call: {:.2} ms) | {:.2} ms | {:.2} ms | {:.2}x |\n",
                if self.rows.is_empty() { "" } else { "\n" },
                b.delay.as_micros(),
                b.chains,
                ms(b.round_trip),
                ms(b.sequential),
                ms(b.batched),
                b.speedup()
            ));
        }
        out
    }
}

/// How each system connects, and how to read the table: for the report's readers.
pub const NOTES: &str = "\
Each bebop-rpc cell is followed by how many times better than tonic it is (above 1x: \
better, below: worse; lower latency and more per second are better). Connections: bebop \
TCP, bebop h2c and tonic carry every call of a client on one connection; bebop HTTP/1.1 \
takes a connection from hyper's pool per call in flight (one for sequential calls, up to \
one per caller with concurrent callers), reused; bebop WebSocket opens a new connection \
per call, as the WebSocket transport has it (one call per connection), so its unary rows \
include a TCP connection and a WebSocket handshake per call, and its stream rows one per \
stream.";

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The order of the systems in round `round`: A B C D E, E D C B A, A B C D E, ...
fn order(round: usize) -> [System; SYSTEMS] {
    let mut systems = System::ALL;
    if round % 2 == 1 {
        systems.reverse();
    }
    systems
}

/// Hands out call ids that no other call of the run uses.
struct Ids(u64);

impl Ids {
    fn block(&mut self, size: u64) -> u64 {
        let first = self.0;
        self.0 += size;
        first
    }
}

/// Runs sequential echoes for `budget`; returns the latency of each call.
async fn sequential(
    caller: &mut Caller,
    kind: Kind,
    budget: Budget,
    ids: &mut Ids,
) -> Result<Vec<Duration>, Error> {
    let mut samples = Vec::with_capacity(match budget {
        Budget::Count(n) => n as usize,
        Budget::Time(_) => 1 << 16,
    });
    let started = Instant::now();
    let first = ids.block(1 << 40);
    while budget.until(started, samples.len() as u64) {
        let id = first + samples.len() as u64;
        let t = Instant::now();
        caller.echo(kind, id).await?;
        samples.push(t.elapsed());
    }
    Ok(samples)
}

/// Runs `callers` concurrent echo loops on clones of one client for `budget`; returns the
/// calls made and the time from the start until the last caller finished.
async fn concurrent(
    systems: &Systems,
    system: System,
    payloads: &Arc<Payloads>,
    kind: Kind,
    callers: usize,
    budget: Budget,
    ids: &mut Ids,
) -> Result<(u64, Duration), Error> {
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(callers);
    for _ in 0..callers {
        let mut caller = systems.caller(system, payloads);
        let first = ids.block(1 << 40);
        tasks.push(tokio::spawn(async move {
            let mut done = 0u64;
            while budget.until(started, done) {
                caller.echo(kind, first + done).await?;
                done += 1;
            }
            Ok::<u64, Error>(done)
        }));
    }
    let mut calls = 0;
    for t in tasks {
        calls += t
            .await
            .map_err(|e| format!("a caller task failed: {e}"))??;
    }
    Ok((calls, started.elapsed()))
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1].as_secs_f64() * 1e6
}

/// Per system, the results of every round of one measurement.
struct PerSystem<T>([T; SYSTEMS]);

impl<T: Default> Default for PerSystem<T> {
    fn default() -> Self {
        PerSystem(std::array::from_fn(|_| T::default()))
    }
}

impl<T> PerSystem<T> {
    fn get(&mut self, system: System) -> &mut T {
        &mut self.0[system.index()]
    }

    /// A row's values: `f` of each system's results.
    fn values(&self, f: impl Fn(&T) -> f64) -> [f64; SYSTEMS] {
        std::array::from_fn(|i| f(&self.0[i]))
    }
}

async fn measure(
    settings: &Settings,
    payloads: &Arc<Payloads>,
    systems: &Systems,
    checked: &mut u64,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Row>, Option<BatchRow>), Error> {
    let mut ids = Ids(1);
    let mut rows = Vec::new();

    // Unary latency: sequential calls on one connection.
    for kind in [Kind::Person, Kind::Blob] {
        let name = format!("unary latency, {}", kind.label());
        if !settings.wanted(&name) {
            continue;
        }
        progress(&name);
        let mut samples = PerSystem::<Vec<Duration>>::default();
        for round in 0..settings.rounds {
            for system in order(round) {
                let mut caller = systems.caller(system, payloads);
                *checked += sequential(&mut caller, kind, settings.warmup, &mut ids)
                    .await?
                    .len() as u64;
                let s = sequential(&mut caller, kind, settings.sequential, &mut ids).await?;
                *checked += s.len() as u64;
                samples.get(system).extend(s);
            }
        }
        for s in &mut samples.0 {
            s.sort_unstable();
        }
        for p in [50.0, 99.0] {
            rows.push(Row {
                name: format!("unary latency p{p}, {}, sequential", kind.label()),
                unit: Unit::Micros,
                values: samples.values(|s| percentile(s, p)),
            });
        }
    }

    // Unary throughput: concurrent callers on one client.
    for kind in [Kind::Person, Kind::Blob] {
        let name = format!(
            "unary calls/s, {} callers, {}",
            settings.callers,
            kind.label()
        );
        if !settings.wanted(&name) {
            continue;
        }
        progress(&name);
        let mut totals = PerSystem::<(u64, Duration)>::default();
        for round in 0..settings.rounds {
            for system in order(round) {
                let (calls, _) = concurrent(
                    systems,
                    system,
                    payloads,
                    kind,
                    settings.callers,
                    settings.warmup,
                    &mut ids,
                )
                .await?;
                *checked += calls;
                let (calls, took) = concurrent(
                    systems,
                    system,
                    payloads,
                    kind,
                    settings.callers,
                    settings.concurrent,
                    &mut ids,
                )
                .await?;
                *checked += calls;
                let t = totals.get(system);
                t.0 += calls;
                t.1 += took;
            }
        }
        rows.push(Row {
            name: format!(
                "unary calls/s, {} callers, {}",
                settings.callers,
                kind.label()
            ),
            unit: Unit::PerSecond,
            values: totals.values(|(calls, took)| *calls as f64 / took.as_secs_f64()),
        });
    }

    // Server streams: one stream of N items per round.
    for (kind, count) in [
        (Kind::Person, settings.stream_persons),
        (Kind::Blob, settings.stream_blobs),
    ] {
        let name = format!("server-stream msgs/s, {} x {count}", kind.label());
        if !settings.wanted(&name) {
            continue;
        }
        progress(&name);
        let warm_count = match settings.warmup {
            Budget::Count(n) => n.clamp(1, u64::from(count)) as u32,
            Budget::Time(_) => (count / 10).max(1),
        };
        let mut took = PerSystem::<Duration>::default();
        for round in 0..settings.rounds {
            for system in order(round) {
                let mut caller = systems.caller(system, payloads);
                caller
                    .stream(kind, warm_count, ids.block(u64::from(warm_count)))
                    .await?;
                *checked += u64::from(warm_count);
                let t = caller
                    .stream(kind, count, ids.block(u64::from(count)))
                    .await?;
                *checked += u64::from(count);
                *took.get(system) += t;
            }
        }
        let items = (count as usize * settings.rounds) as f64;
        rows.push(Row {
            name: format!(
                "server-stream msgs/s, {}, 1 stream of {count}",
                kind.label()
            ),
            unit: Unit::PerSecond,
            values: took.values(|t| items / t.as_secs_f64()),
        });
    }

    // Batches: bebop-rpc alone (binary TCP), through the delaying proxy.
    let name = format!("batch vs {CHAIN} sequential calls, through a delaying proxy");
    let batch = if settings.wanted(&name) {
        progress(&name);
        Some(batch_chains(settings, payloads, systems, &mut ids, checked).await?)
    } else {
        None
    };
    Ok((rows, batch))
}

// ---------------------------------------------------------------------------------------
// Batches through a delaying proxy

/// How long the benchmark's proxy holds the bytes of each direction before it forwards
/// them (the report gives one unary call's time through the proxy, which adds the time the
/// operating system takes to wake its threads).
pub const PROXY_DELAY: Duration = Duration::from_micros(500);

/// The calls of one dependent chain.
pub const CHAIN: usize = 5;

/// The batch measurement: the median time of a chain of [`CHAIN`] dependent calls.
#[derive(Clone, Debug)]
pub struct BatchRow {
    /// The proxy's delay in each direction.
    pub delay: Duration,
    /// The chains measured each way.
    pub chains: usize,
    /// The median time of one unary call through the proxy.
    pub round_trip: Duration,
    /// The median time of a chain made as sequential unary calls.
    pub sequential: Duration,
    /// The median time of a chain made as one batch.
    pub batched: Duration,
}

impl BatchRow {
    /// How many times faster the batch is.
    pub fn speedup(&self) -> f64 {
        self.sequential.as_secs_f64() / self.batched.as_secs_f64()
    }
}

/// A TCP proxy on 127.0.0.1 in front of `target` that forwards what it reads in each
/// direction `delay` after reading it, as a slow link would. It runs on threads of its own
/// (a thread's sleep is precise to tens of microseconds, tokio's timer to a millisecond, and
/// the proxy takes no time from the runtime under test). Dropping it stops accepting;
/// each connection's threads end when its sockets close.
struct DelayProxy {
    addr: SocketAddr,
    stop: Arc<std::sync::atomic::AtomicBool>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl DelayProxy {
    fn start(target: SocketAddr, delay: Duration) -> Result<DelayProxy, Error> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("binding the proxy failed: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("local_addr failed: {e}"))?;
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = stop.clone();
        let accept = std::thread::Builder::new()
            .name("delay-proxy".into())
            .spawn(move || {
                for inbound in listener.incoming() {
                    if stopping.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    let Ok(inbound) = inbound else { continue };
                    let Ok(outbound) = std::net::TcpStream::connect(target) else {
                        continue;
                    };
                    let _ = inbound.set_nodelay(true);
                    let _ = outbound.set_nodelay(true);
                    delay_line(&inbound, &outbound, delay);
                    delay_line(&outbound, &inbound, delay);
                }
            })
            .map_err(|e| format!("starting the proxy failed: {e}"))?;
        Ok(DelayProxy {
            addr,
            stop,
            accept: Some(accept),
        })
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accepting thread, which sees the flag and ends.
        let _ = std::net::TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Forwards `from` to `to` on two threads, each chunk `delay` after it was read (chunks
/// read meanwhile wait their own turn, so the link's throughput is not cut). At the end of
/// `from`, the writing side of `to` is shut down.
fn delay_line(from: &std::net::TcpStream, to: &std::net::TcpStream, delay: Duration) {
    use std::io::{Read, Write};
    let (Ok(mut rd), Ok(mut wr)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Instant, Vec<u8>)>(256);
    let reader = std::thread::Builder::new()
        .name("delay-proxy-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            while let Ok(n @ 1..) = rd.read(&mut buf) {
                if tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
                {
                    break;
                }
            }
        });
    if reader.is_err() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("delay-proxy-write".into())
        .spawn(move || {
            for (due, bytes) in rx {
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                if wr.write_all(&bytes).is_err() {
                    break;
                }
            }
            let _ = wr.shutdown(std::net::Shutdown::Write);
        });
}

/// One chain as sequential unary calls: each call echoes the previous call's response.
async fn sequential_chain(
    client: &bsvc::AsyncClient,
    person: &bowned::PersonSmall,
) -> Result<(), Error> {
    let mut p = person.clone();
    for _ in 0..CHAIN {
        p = client
            .echo_person(&p, bebop_rpc::CallOptions::new())
            .await
            .map_err(|e| format!("bebop-rpc EchoPerson failed: {e}"))?
            .into_inner();
    }
    if p != *person {
        return Err(mismatch("bebop-rpc", "chained EchoPerson", person.id));
    }
    Ok(())
}

/// One chain as one batch: every call after the first takes its input from the one before.
async fn batch_chain(
    client: &bebop_rpc::Client,
    person: &bowned::PersonSmall,
) -> Result<(), Error> {
    let mut batch = bebop_rpc::Batch::new();
    let mut last = batch
        .call(bsvc::ECHO_PERSON, person)
        .map_err(|e| format!("building the batch failed: {e}"))?;
    let mut calls = vec![last];
    for _ in 1..CHAIN {
        last = batch.call_from(bsvc::ECHO_PERSON, last);
        calls.push(last);
    }
    let results = client
        .batch(&batch, bebop_rpc::CallOptions::new())
        .await
        .map_err(|e| format!("the bebop-rpc batch failed: {e}"))?;
    for call in calls {
        let r: bowned::PersonSmall = results
            .get(call)
            .map_err(|e| format!("call {} of the batch failed: {e}", call.call_id()))?;
        if r != *person {
            return Err(mismatch("bebop-rpc", "batched EchoPerson", person.id));
        }
    }
    Ok(())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Chains of dependent calls through the delaying proxy, both ways, alternating.
async fn batch_chains(
    settings: &Settings,
    payloads: &Arc<Payloads>,
    systems: &Systems,
    ids: &mut Ids,
    checked: &mut u64,
) -> Result<BatchRow, Error> {
    let proxy = DelayProxy::start(systems.bebop_addr, PROXY_DELAY)?;
    let client = bebop_rpc::Client::connect_tcp(proxy.addr)
        .await
        .map_err(|e| format!("connecting through the proxy failed: {e}"))?;
    let typed = bsvc::AsyncClient::new(client.clone());
    let warmup = 2;
    let mut single = Vec::new();
    let mut sequential = Vec::new();
    let mut batched = Vec::new();
    for round in 0..warmup + settings.batch_chains {
        let person = payloads.bebop_person(ids.block(1));
        let t = Instant::now();
        let echoed = typed
            .echo_person(&person, bebop_rpc::CallOptions::new())
            .await
            .map_err(|e| format!("bebop-rpc EchoPerson failed: {e}"))?
            .into_inner();
        let one = t.elapsed();
        if echoed != person {
            return Err(mismatch("bebop-rpc", "EchoPerson", person.id));
        }
        // Alternate which way goes first.
        let (s, b) = if round % 2 == 0 {
            let t = Instant::now();
            sequential_chain(&typed, &person).await?;
            let s = t.elapsed();
            let t = Instant::now();
            batch_chain(&client, &person).await?;
            (s, t.elapsed())
        } else {
            let t = Instant::now();
            batch_chain(&client, &person).await?;
            let b = t.elapsed();
            let t = Instant::now();
            sequential_chain(&typed, &person).await?;
            (t.elapsed(), b)
        };
        *checked += 1 + 2 * CHAIN as u64;
        if round >= warmup {
            single.push(one);
            sequential.push(s);
            batched.push(b);
        }
    }
    drop(typed);
    drop(client);
    drop(proxy);
    Ok(BatchRow {
        delay: PROXY_DELAY,
        chains: settings.batch_chains,
        round_trip: median(single),
        sequential: median(sequential),
        batched: median(batched),
    })
}

/// Starts the servers, measures everything `settings` asks for, checks every response,
/// and stops the servers. `progress` is told what is being measured.
pub fn run(settings: &Settings, progress: &mut dyn FnMut(&str)) -> Result<Report, Error> {
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("building the runtime failed: {e}"))?;
    let payloads = Arc::new(Payloads::new());
    runtime.block_on(async {
        let systems = Systems::start(&payloads).await?;
        let mut checked = 0;
        let measured = measure(settings, &payloads, &systems, &mut checked, progress).await;
        let stopped = systems.stop().await;
        let (rows, batch) = measured?;
        stopped?;
        Ok(Report {
            settings: settings.clone(),
            rows,
            batch,
            checked,
            elapsed: started.elapsed(),
        })
    })
}

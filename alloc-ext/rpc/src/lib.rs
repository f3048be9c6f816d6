//! # bebop-rpc
//!
//! Bebop RPC on tokio: servers and clients for the binary transport (`docs/rpc.md`, "Binary
//! transport") over TCP, Unix sockets, or any `AsyncRead + AsyncWrite` pair (a child
//! process's stdin and stdout, a named pipe), on the frame codec of `bebop-core` and the
//! types and services `bebopc` generates.
//!
//! - [`Server`]: several services per server routed by method id, all four method kinds,
//!   many calls at once on one connection (multiplexed by stream id) as well as one call
//!   at a time, deadlines (an expired call never reaches its handler; one that expires
//!   during the call is cancelled and answered `DEADLINE_EXCEEDED`), cancellation,
//!   [`Interceptor`]s, resource [`Limits`], graceful shutdown and a `tracing` span per call.
//! - [`Client`]: one connection shared by any number of tasks, deadlines enforced locally
//!   too, cancellation by dropping, response metadata, and server streams that resume from
//!   their last cursor.
//! - Batches (method 1): the server runs a [`Batch`] of unary and server-stream calls in one
//!   round trip, independent calls at once and each call given another's response as its
//!   request after it ([`Client::batch`], [`BatchResults`]).
//! - Futures (methods 2 to 4): calls the server runs in the background, on a store of
//!   [`futures`]; [`Client::dispatch`] returns a typed [`Dispatched`] handle,
//!   [`Client::resolve`] streams [`Resolved`] results and [`Client::cancel`] cancels one.
//! - [`Context`]: what a handler knows about its call (`docs/rpc.md`, "Call context").
//!
//! Generated code (`bebopc` with the Rust generator's `async_rpc` option) gives every
//! service an `AsyncHandler` trait to implement, an `AsyncServer` to register and a typed
//! `AsyncClient`. The multiplexing rules this crate adds to the protocol are in the repository's
//! `docs/rpc.md` ("Two kinds of connection").
//!
//! ```
//! use bebop_rpc::{CallOptions, Client, Server};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A server with no services still answers discovery (method 0), listing none.
//! let server = Server::builder().build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let addr = listener.local_addr()?;
//! tokio::spawn({
//!     let server = server.clone();
//!     async move { server.serve_tcp(listener).await }
//! });
//!
//! let client = Client::connect_tcp(addr).await?;
//! let discovery = client
//!     .unary::<bebop_runtime::rpc::Empty, bebop_rpc::RawMessage>(0, &bebop_runtime::rpc::Empty {}, CallOptions::new())
//!     .await?
//!     .into_inner();
//! let services = <bebop_runtime::rpc::DiscoveryResponse as bebop_runtime::Decode>::from_bytes(&discovery.0)?;
//! assert_eq!(services.services.len(), 0);
//!
//! // Unknown methods are NOT_FOUND.
//! let err = client.unary::<str, String>(0x1234_5678, "x", CallOptions::new()).await.unwrap_err();
//! assert_eq!(err.code(), bebop_rpc::StatusCode::NotFound);
//! server.shutdown(std::time::Duration::from_secs(1)).await;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

mod batch;
mod client;
mod context;
pub mod futures;
mod metadata;
mod queue;
mod server;
mod status;
pub mod transport;
mod wire;

pub use batch::{Batch, BatchResults, CallRef, MethodRef};
pub use bebop_runtime::rpc::StatusCode;
pub use client::{Client, ClientLimits, Response, Streaming};
pub use context::{Address, CallOptions, Context, Credentials, Peer};
pub use futures::{DispatchOptions, Dispatched, FutureResponse, Resolutions, Resolved};
pub use futures_core::Stream;
pub use metadata::Metadata;
pub use server::{
    BoxFuture, FuturesConfig, Interceptor, Limits, Requests, ResponseSink, Server, ServerBuilder,
    ServerCall, Service,
};
pub use status::Status;
pub use tokio_util::sync::CancellationToken;
pub use wire::RawMessage;

#[doc(hidden)]
pub mod __private {
    //! What generated code needs and users do not.
    pub use std::sync::Arc;
}

//! # bebop-rpc-http
//!
//! The HTTP transport of Bebop RPC (upstream §17; `docs/rpc.md`, "HTTP transport") for
//! [`bebop_rpc`]: the same servers, handlers, interceptors and generated clients, carried
//! over HTTP/1.1 and HTTP/2.
//!
//! - [`HttpServer`] (or [`serve`]) serves a [`bebop_rpc::Server`] over HTTP/1.1 and h2c on
//!   one port, and with the `tls` feature over HTTPS (`HttpServer::serve_tls`), with
//!   graceful shutdown and connection limits taken from the Bebop server.
//! - [`HttpService`] is the same as a `tower::Service`, to mount in an axum `Router` or any
//!   hyper stack.
//! - [`HttpConnector`] carries the calls of a [`bebop_rpc::Client`]
//!   (`Client::over(HttpConnector::new(url)?)`), so generated `AsyncClient`s call over HTTP.
//! - [`mapping`]: the content types, headers and status table.
//!
//! On the wire: `POST /{Service}/{Method}`; unary calls carry bare Bebop values
//! (`application/bebop`) and fail with a mapped HTTP status, a `bebop-status` header and
//! the `RpcError`; streaming calls answer `200` with binary frames
//! (`application/bebop+stream`), errors in `ERROR` frames, response metadata in HTTP/2
//! trailers or, on HTTP/1.1, a `TRAILER` frame. Request metadata travels as headers, the
//! deadline as `bebop-deadline` (Unix milliseconds).
//!
//! ```
//! use bebop_rpc::{CallOptions, Client, Server, StatusCode};
//! use bebop_rpc_http::{HttpConnector, HttpServer};
//! use bebop_runtime::{MethodInfo, MethodKind};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder().build(); // add_service(...) for generated services
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let url = format!("http://{}", listener.local_addr()?);
//! tokio::spawn(HttpServer::new(server.clone()).serve(listener));
//!
//! // h2c; HttpConnector::new(&url) speaks HTTP/1.1.
//! let connector = HttpConnector::builder(&url).http2_prior_knowledge().build()?;
//! let client = Client::over(connector);
//! // HTTP routes by name: generated clients describe their methods (this one is served by
//! // nobody, so it is NOT_FOUND: `POST /Greeter/SayHello`, answered 404).
//! const SAY_HELLO: MethodInfo = MethodInfo::new("Greeter", "SayHello", MethodKind::Unary);
//! client.describe(&[SAY_HELLO]);
//! let err = client
//!     .unary::<str, String>(SAY_HELLO.id, "Ada", CallOptions::new())
//!     .await
//!     .unwrap_err();
//! assert_eq!(err.code(), StatusCode::NotFound);
//! assert_eq!(err.detail(), "no method /Greeter/SayHello");
//! server.shutdown(std::time::Duration::from_secs(1)).await;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

mod body;
mod client;
pub mod mapping;
mod read_ahead;
mod server;
#[cfg(feature = "tls")]
mod tls;

pub use body::{Body, ResponseBody};
pub use client::{HttpConnector, HttpConnectorBuilder};
pub use server::{BoxError, HttpServer, HttpService, serve};
#[cfg(feature = "tls")]
pub use tls::serve_tls;
/// The rustls crate this one is built with, for its `ServerConfig` and `ClientConfig`.
#[cfg(feature = "tls")]
pub use tokio_rustls::rustls;

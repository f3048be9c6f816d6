//! # bebop-rpc-websocket
//!
//! Bebop RPC over WebSocket (`docs/rpc.md`, "WebSocket transport"), for `bebop-rpc`'s
//! [`Server`](bebop_rpc::Server) and [`Client`](bebop_rpc::Client):
//!
//! - every binary WebSocket message carries exactly one protocol element: the first the
//!   call's `CallHeader` (with its 4-byte length prefix, as on the binary transport), every
//!   later one a single frame (9-byte header, payload, and the 8-byte cursor with `CURSOR`);
//! - one call per WebSocket connection (a client multiplexes by opening several);
//! - a client cancels by closing the WebSocket; the server sends the call's last frame and
//!   then closes the WebSocket normally.
//!
//! [`serve`] accepts WebSocket connections on a TCP listener (any request path),
//! [`serve_socket`] serves one already upgraded by an HTTP server, and
//! [`WebSocketConnector`] carries a client's calls, so that generated `AsyncClient`s work over
//! WebSocket unchanged: `Client::over(WebSocketConnector::new(url)?)`.
//!
//! ```
//! use bebop_rpc::{CallOptions, Client, Server, StatusCode};
//! use bebop_rpc_websocket::WebSocketConnector;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A server with no services still answers discovery (method 0).
//! let server = Server::builder().build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let url = format!("ws://{}/", listener.local_addr()?);
//! let serving = tokio::spawn(bebop_rpc_websocket::serve(server.clone(), listener));
//!
//! let client = Client::over(WebSocketConnector::new(&url)?);
//! let discovery = client
//!     .unary::<bebop_runtime::rpc::Empty, bebop_rpc::RawMessage>(0, &bebop_runtime::rpc::Empty {}, CallOptions::new())
//!     .await?
//!     .into_inner();
//! let services = <bebop_runtime::rpc::DiscoveryResponse as bebop_runtime::Decode>::from_bytes(&discovery.0)?;
//! assert_eq!(services.services.len(), 0);
//!
//! // Unknown methods are NOT_FOUND, as on every transport.
//! let err = client.unary::<str, String>(0x1234_5678, "x", CallOptions::new()).await.unwrap_err();
//! assert_eq!(err.code(), StatusCode::NotFound);
//!
//! server.shutdown(std::time::Duration::from_secs(1)).await;
//! serving.await??;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod client;
mod server;

use bebop_rpc::{Limits, Status};
use bebop_runtime::rpc::{
    CALL_HEADER_PREFIX, CURSOR_SIZE, Frame, HEADER_SIZE, ProtocolError, parse_frame_exact,
};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

pub use client::WebSocketConnector;
pub use server::{serve, serve_socket};
/// The WebSocket implementation this crate speaks through (for building a
/// [`WebSocketStream`](tokio_tungstenite::WebSocketStream) to hand to [`serve_socket`]).
pub use tokio_tungstenite;

/// The largest WebSocket message that can carry one protocol element within `limits`: a
/// frame of `max_frame_payload` bytes with a cursor, or a call header of `max_call_header`
/// bytes with its prefix.
pub fn max_message_size(limits: &Limits) -> usize {
    let frame = limits
        .max_frame_payload
        .saturating_add(HEADER_SIZE + CURSOR_SIZE);
    let header = limits.max_call_header.saturating_add(CALL_HEADER_PREFIX);
    frame.max(header)
}

/// The WebSocket configuration a server with `limits` reads with: no message or WebSocket
/// frame larger than [`max_message_size`] is accepted (one that declares more is refused as
/// soon as its WebSocket frame header arrives, before its payload is read). An HTTP server
/// that upgrades connections itself should build its
/// [`WebSocketStream`](tokio_tungstenite::WebSocketStream)s with it before handing them to
/// [`serve_socket`].
pub fn websocket_config(limits: &Limits) -> WebSocketConfig {
    sized_config(max_message_size(limits))
}

fn sized_config(max_message: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(64 << 10)
        .write_buffer_size(64 << 10)
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message))
}

/// Whether `bytes` has the shape of a length-prefixed call header: its prefix counts exactly
/// the bytes after it. A frame's length field never does (a frame is 9 or 17 bytes longer
/// than its `length`), so the two are told apart by size alone.
fn is_call_header_shaped(bytes: &[u8]) -> bool {
    bytes
        .first_chunk::<CALL_HEADER_PREFIX>()
        .is_some_and(|p| u32::from_le_bytes(*p) as usize == bytes.len() - CALL_HEADER_PREFIX)
}

/// Reads a message that must hold exactly one frame of at most `max_payload` bytes.
fn parse_one_frame(bytes: &[u8], max_payload: usize) -> Result<Frame<'_>, Status> {
    parse_frame_exact(bytes, max_payload).map_err(|e| match e {
        ProtocolError::FrameTooLarge { .. } => Status::resource_exhausted(e.to_string()),
        ProtocolError::InvalidFlags { .. } => Status::invalid_argument(e.to_string()),
        ProtocolError::Compressed { .. } => Status::unimplemented(e.to_string()),
        _ if is_call_header_shaped(bytes) => Status::invalid_argument(
            "a second call header: a WebSocket connection carries one call; open another \
             connection for the next",
        ),
        _ => Status::invalid_argument(format!(
            "a WebSocket message must carry exactly one frame ({} bytes: {e})",
            bytes.len()
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_headers_and_frames_are_told_apart_by_size() {
        // docs/rpc.md, "Call header": method 0x1a2b3c4d.
        let header = [0x06, 0, 0, 0, 0x01, 0x4d, 0x3c, 0x2b, 0x1a, 0x00];
        assert!(is_call_header_shaped(&header));
        let e = parse_one_frame(&header, 1024).unwrap_err();
        assert_eq!(e.code(), bebop_rpc::StatusCode::InvalidArgument);
        assert!(e.detail().contains("second call header"), "{e}");
        // An empty END_STREAM frame.
        let frame = [0, 0, 0, 0, 0x01, 0, 0, 0, 0];
        assert!(!is_call_header_shaped(&frame));
        assert!(parse_one_frame(&frame, 1024).unwrap().is_end());
        assert!(!is_call_header_shaped(&[1, 2]));
        // Over the limit: refused from the header.
        let big = [0xff, 0xff, 0, 0, 0x01, 0, 0, 0, 0];
        let e = parse_one_frame(&big, 1024).unwrap_err();
        assert_eq!(e.code(), bebop_rpc::StatusCode::ResourceExhausted);
        // Two frames in one message.
        let two = [frame, frame].concat();
        let e = parse_one_frame(&two, 1024).unwrap_err();
        assert!(e.detail().contains("exactly one frame"), "{e}");
    }

    #[test]
    fn the_message_limit_fits_the_largest_element() {
        let limits = Limits {
            max_frame_payload: 1000,
            max_call_header: 100,
            ..Limits::default()
        };
        assert_eq!(max_message_size(&limits), 1017);
        let limits = Limits {
            max_frame_payload: 10,
            max_call_header: 100,
            ..Limits::default()
        };
        assert_eq!(max_message_size(&limits), 104);
        assert_eq!(
            websocket_config(&limits).max_message_size,
            Some(max_message_size(&limits))
        );
    }
}

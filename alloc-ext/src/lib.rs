//! # bebop-runtime
//!
//! The Bebop runtime for Rust: the one crate a program depends on, on a microcontroller
//! without a heap as on a server. Generated code refers to it as `::bebop_runtime` by
//! default, so a `build.rs` with `bebop-build` needs no path setting.
//!
//! Without features it is [`bebop_core`] re-exported: `no_std`, no allocator, borrowed views
//! for decoding and caller-supplied buffers for encoding. Features add layers:
//!
//! | feature | adds |
//! |---|---|
//! | `alloc` | owned types (`Vec`, `String`, `Box`, `BTreeMap` implement [`Encode`] and [`Decode`]), [`EncodeExt::encode_to_vec`] |
//! | `std` | `alloc`, plus encoding into any `std::io::Write`, `SystemTime` conversions, the system clock and `std::io` channels of the blocking RPC |
//! | `defmt` | `defmt::Format` for errors and public types |
//! | `heapless` | decoding into `heapless::String` / `heapless::Vec` (Rust 1.87, as heapless 0.9 needs) |
//! | `embedded-io` | encoding into any `embedded_io::Write` |
//! | `serde` | `serde` impls for the runtime's types (`Uuid`, `Timestamp`, `Duration`, half floats), for generated code with `Config::serde` |
//!
//! ```toml
//! [dependencies]
//! bebop-runtime = { version = "0.1", features = ["std"] }   # a std program
//! # bebop-runtime = "0.1"                                    # no_std, no alloc
//! ```
//!
//! With `alloc`:
//!
//! ```
//! # #[cfg(feature = "alloc")]
//! # fn main() -> Result<(), bebop_runtime::Error> {
//! use bebop_runtime::{Decode, EncodeExt};
//! use std::collections::BTreeMap;
//!
//! let mut scores = BTreeMap::new();
//! scores.insert(String::from("ada"), 3u32);
//! scores.insert(String::from("bob"), 1);
//!
//! let bytes = scores.encode_to_vec()?;
//! // Owned maps encode in ascending key order.
//! assert_eq!(&bytes[..4], &[2, 0, 0, 0]);
//! assert_eq!(BTreeMap::<String, u32>::from_bytes(&bytes)?, scores);
//!
//! // The same bytes also decode as a borrowed view.
//! let view = bebop_runtime::Map::<&str, u32>::from_bytes(&bytes)?;
//! assert_eq!(view.get("bob"), Some(1));
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "alloc"))]
//! # fn main() {}
//! ```
#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub use bebop_core::*;

#[cfg(feature = "std")]
mod rpc_std;
#[cfg(feature = "std")]
mod stdio;
#[cfg(feature = "alloc")]
mod vec_output;

#[cfg(feature = "std")]
pub use rpc_std::{StdIo, SystemClock, packet_channel, std_channel};
#[cfg(feature = "std")]
pub use stdio::{StdWriter, system_time_to_timestamp, timestamp_to_system_time};
#[cfg(feature = "alloc")]
pub use vec_output::{EncodeExt, encode_to_vec};

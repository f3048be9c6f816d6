//! # bebop-core
//!
//! The [Bebop](https://github.com/betwixt-labs/bebop) wire format for `#![no_std]` targets
//! without an allocator: decoding into **borrowed views** over `&[u8]` and encoding into
//! **caller-supplied buffers** or an `embedded_io::Write`. Nothing here allocates, and no input
//! can make it panic.
//!
//! ```
//! use bebop_core::{Array, Decode, Encode, Reader, Sink, WireSize};
//!
//! // struct Reading { sensor: string; samples: int16[]; }
//! #[derive(Clone, Copy, Debug, PartialEq)]
//! struct Reading<'a> {
//!     sensor: &'a str,
//!     samples: Array<'a, i16>,
//! }
//!
//! impl WireSize for Reading<'_> {
//!     const MIN_SIZE: usize = 5 + 4;
//! }
//! impl<'a> Decode<'a> for Reading<'a> {
//!     fn decode(r: &mut Reader<'a>) -> Result<Self, bebop_core::Error> {
//!         Ok(Reading { sensor: r.read()?, samples: r.read()? })
//!     }
//! }
//! impl Encode for Reading<'_> {
//!     fn encoded_size(&self) -> usize {
//!         self.sensor.encoded_size() + self.samples.encoded_size()
//!     }
//!     fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
//!         self.sensor.encode(s)?;
//!         self.samples.encode(s)
//!     }
//! }
//!
//! // Encode into a stack buffer...
//! let reading = Reading { sensor: "t0", samples: Array::from_slice(&[-1, 2, 300]) };
//! let mut buf = [0u8; 32];
//! let n = reading.encode_into(&mut buf)?;
//! assert_eq!(n, 7 + 4 + 6);
//!
//! // ...and decode a view that borrows it: no copies, no allocation.
//! let view = Reading::from_bytes(&buf[..n])?;
//! assert_eq!(view.sensor, "t0");
//! assert_eq!(view.samples.get(2), Some(300));
//! assert_eq!(view, reading);
//! # Ok::<(), bebop_core::Error>(())
//! ```
//!
//! Generated code (from `bebopc`) implements these traits for every schema type; the impls
//! here cover the building blocks:
//!
//! | Bebop | decodes to | encodes from |
//! |---|---|---|
//! | `bool`, `byte`, `int8`..`uint128`, `float32/64` | the Rust scalar | the Rust scalar |
//! | `float16`, `bfloat16` | [`half::f16`], [`half::bf16`] | same |
//! | `uuid`, `timestamp`, `duration` | [`Uuid`], [`Timestamp`], [`Duration`] | same |
//! | `string` | `&'a str` | `str`, `&str` |
//! | `byte[]` | `&'a [u8]` or [`Array<'a, u8>`] | `[u8]`, [`Array`] |
//! | `T[]` | [`Array<'a, T>`] | `[T]`, [`Array`] |
//! | `T[N]` | [`FixedArray<'a, T, N>`], `[T; N]`, `&'a [u8; N]` | same |
//! | `map[K, V]` | [`Map<'a, K, V>`] | [`Map`] |
//!
//! ## Validation and limits
//!
//! [`Decode::from_bytes`] validates the whole value in one pass: bounds, UTF-8 and NUL
//! terminators of strings, enum values, union discriminators, timestamp and duration ranges,
//! nesting depth and a budget of zero-sized elements ([`Limits`]). Afterwards, reading a view
//! cannot fail: [`Array::iter`] yields plain values. Arrays of scalars are not visited at all,
//! so creating a view of a million floats costs the same as one of three.
//!
//! ## Features
//!
//! - `defmt`: `defmt::Format` for errors and public types.
//! - `heapless`: decode into `heapless::String`/`Vec`, `copy_str`, `Array::to_heapless`.
//!   Needs Rust 1.87 (heapless 0.9's own requirement); everything else builds with 1.85.
//! - `embedded-io`: [`Encode::encode_to_io`] into any `embedded_io::Write`.
//! - `alloc`: impls for `Vec`, `String`, `Box`, `BTreeMap` (programs enable `alloc` or `std`
//!   of `bebop-runtime` instead).
//! - `serde`: `serde::Serialize`/`Deserialize` for [`Uuid`], [`Timestamp`], [`Duration`] and
//!   the half floats, and the `with` helpers of `serde_support` that generated code with
//!   serde support uses.
//!
//! Only `alloc` pulls in `alloc`.
#![no_std]
// Unsafe code is denied everywhere but in `utf8` (one block, for speed) and `lent` (type
// erasure that keeps views covariant); both justify each block.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

mod array;
mod bytes;
mod codec;
mod error;
mod float16;
mod lazy;
mod lend;
mod lent;
mod map;
mod method_id;
pub mod once;
mod reader;
pub mod rpc;
mod scalar;
mod time;
mod tuple;
mod utf8;
pub mod uuid;
mod writer;

#[cfg(feature = "heapless")]
mod fixed_capacity;
#[cfg(feature = "embedded-io")]
mod io;
#[cfg(feature = "alloc")]
mod owned;
#[cfg(feature = "serde")]
pub mod serde_support;

pub use array::{Array, Chunks as ArrayChunks, FixedArray, Iter as ArrayIter};
pub use codec::{Decode, Encode, FixedSize, WireSize, field_size};
pub use error::{Error, ErrorKind, IoError};
pub use float16::{bf16_from_f32_slice, f16_from_f32_slice};
pub use lazy::Lazy;
pub use lend::{AsView, Lend, LendElements, ToOwnedValue};
pub use map::{Iter as MapIter, Map};
pub use method_id::{METHOD_ID_SEED, method_id, method_id_parts};
pub use reader::{Limits, Reader};
pub use rpc::{MethodInfo, MethodKind};
pub use scalar::Scalar;
pub use time::{Duration, MAX_OFFSET_MS, Timestamp};
pub use uuid::Uuid;
pub use writer::{Sink, SizeCounter, SliceWriter};

#[cfg(feature = "heapless")]
pub use fixed_capacity::copy_str;
#[cfg(feature = "embedded-io")]
pub use io::IoWriter;

pub use half::{bf16, f16};

/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The interface version generated code is written against. Generated files assert at compile
/// time that it equals the version they were generated for, so a generator/runtime mismatch is
/// a clear compile error rather than confusing type errors.
pub const CODEGEN_ABI: u32 = 1;

/// `alloc` types under stable paths for generated owned code (feature `alloc`), so that it needs
/// no `extern crate alloc` in the including crate.
#[cfg(feature = "alloc")]
pub mod alloc_types {
    pub use alloc::boxed::Box;
    pub use alloc::collections::BTreeMap;
    pub use alloc::string::String;
    pub use alloc::vec::Vec;
}

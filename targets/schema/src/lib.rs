//! The Bebop types the firmware images and the serial demo use, and the benchmark data.
//!
//! Each module holds the types of one schema, written by hand in the style of the generated
//! code (`bebop-conformance` is the model) until `bebopc` generates them:
//!
//! - [`benchmark`]: the records of `shared/bench/benchmark.bop` the firmware tests use
//!   (`Person`, `Order`, `TreeNode`, `EmbeddingBF16`);
//! - [`telemetry`]: the serial demo's messages (telemetry records, configuration,
//!   acknowledgement, end-of-stream summary);
//! - [`fixtures`]: fixed benchmark values (PersonSmall/Medium, OrderLarge, Embedding768,
//!   TreeDeep), built at compile time so that they live in flash, not RAM.
//!
//! Swapping in generated code means replacing the bodies of `benchmark` and `telemetry` with
//! the generated modules; the images only name types through these module paths.
#![no_std]
#![forbid(unsafe_code)]

pub mod benchmark;
pub mod fixtures;
pub mod telemetry;

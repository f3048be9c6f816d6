//! Code generated at build time by `bebop-build` (see `build.rs`), compiled and tested:
//!
//! - [`benchmark`]: `benches/workloads/schemas/workloads.bop`, the paper's workloads;
//! - [`standard`]: the standard schemas built into the compiler (`bebop/descriptor.bop`,
//!   `bebop/plugin.bop`, `bebop/rpc.bop`, `bebop/decorators.bop`, `bebop/empty.bop`,
//!   `bebop/any.bop`, `bebop/json.bop`), one module each (holding package `bebop`), with
//!   `Vec<(K, V)>` owned maps;
//! - [`spec`]: `schemas/spec.bop`, the types of the golden vectors of `docs/wire-format.md`;
//! - [`recursion`]: `schemas/recursion.bop`, a struct that holds an array of itself.
//! - [`runs`]: `schemas/runs.bop`, structs with runs of fixed-size fields.
//! - [`once`]: `schemas/once.bop`, every shape one-pass reading hands out (`one_pass`),
//!   and [`once_readers`] (with `owned`): readers of it in one pass that read all, some or
//!   none of it, held to `from_bytes` by `tests/once.rs` and the fuzz target `read_once`.
//!
//! The reference fixtures are not compiled here a second time: `bebop-build`'s output for
//! every one of them must equal the golden file `codegen/rust/tests/expected/NAME.rs` (test
//! `every_valid_fixture_generates_its_golden_file` of `bebop-build`, in
//! `codegen/build/tests/fixtures.rs`), which `bebop-rust-fixtures` compiles and tests.
//!
//! The views need `core` alone; the owned types (module `owned` of each) are behind the
//! feature `owned` (on by default). Without it the crate is `no_std` without `alloc`, which
//! the bare-metal check builds (from the repository root):
//!
//! ```text
//! scripts/build-std thumbv6m-none-eabi -q -p bebop-rust-build-tests --no-default-features
//! ```
//!
//! The tests (`tests/`) check the golden vectors byte for byte (`spec_vectors.rs`),
//! round-trip every benchmark type with random values (`roundtrip.rs`), feed random,
//! mutated, truncated and deeply nested bytes to every benchmark type (`hostile.rs`), and
//! decode and re-encode the reference descriptors with the generated `bebop.DescriptorSet`
//! and `bebop.CodeGeneratorRequest` (`descriptors.rs`). The benchmark
//! (`benches/generated.rs`) compares generated and hand-written encoders and decoders:
//!
//! ```text
//! cargo bench -p bebop-rust-build-tests --bench generated -- --warm-up-time 1 --measurement-time 2
//! ```
#![no_std]

/// Generated from `benches/workloads/schemas/workloads.bop`.
pub mod benchmark {
    include!(concat!(env!("OUT_DIR"), "/benchmark.rs"));
}

/// Generated from the standard schemas, one module per `bebop/NAME.bop`.
pub mod standard {
    include!(concat!(env!("OUT_DIR"), "/standard.rs"));
}

/// Generated from `schemas/spec.bop`.
pub mod spec {
    include!(concat!(env!("OUT_DIR"), "/spec.rs"));
}

/// Generated from `schemas/recursion.bop`.
pub mod recursion {
    include!(concat!(env!("OUT_DIR"), "/recursion.rs"));
}

/// Generated from `schemas/runs.bop`.
pub mod runs {
    include!(concat!(env!("OUT_DIR"), "/runs.rs"));
}

/// Generated from `schemas/once.bop`, with one-pass reading.
pub mod once {
    include!(concat!(env!("OUT_DIR"), "/once.rs"));
}

#[cfg(feature = "owned")]
extern crate alloc;

#[cfg(feature = "owned")]
pub mod once_readers;

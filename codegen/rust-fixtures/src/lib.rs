//! Compiles the code `bebop-codegen-rust` generates for every reference fixture
//! (`../rust/tests/expected/NAME.rs`, one module per fixture) and for the synthetic schemas
//! (`extra`), so that building, `cargo clippy -p bebop-rust-fixtures --all-targets -- -D
//! warnings` and the tests of this crate check the generated code.
//!
//! - Default build: views and owned types (feature `alloc`, on by default).
//! - `--no-default-features`: views only, `no_std` without `alloc`.
//! - Feature `defmt`: views implement `defmt::Format`.
//!
//! The tests (`tests/`) round-trip every generated type with random canonical encodings
//! (`roundtrip.rs`, cases listed by `build.rs` from the generator's own type list), check the
//! golden vectors of `docs/wire-format.md` and the hand-written types of `tests/src/lib.rs`
//! (`spec_vectors.rs`), the decoding rules (`behaviour.rs`), and other generator options
//! (`variants.rs`), and serde derives, type and field attributes and extern paths through
//! JSON round trips (`serde_attrs.rs`). They need `alloc` (the default).
//!
//! ## Bare metal, no allocator
//!
//! The views compile for a Cortex-M0 with `core` alone (run from the repository root; the
//! first build of `core` takes a few minutes):
//!
//! ```text
//! CARGO_TARGET_DIR=target scripts/build-std thumbv6m-none-eabi \
//!     -p bebop-rust-fixtures --no-default-features [--features defmt]
//! ```
//!
//! `scripts/build-std` builds `core` and nothing else from source, so any use of `alloc` or
//! `std` in the generated views fails to compile.
#![no_std]

/// Generated from `album.bop`.
pub mod album {
    include!("../../rust/tests/expected/album.rs");
}

/// Generated from `array_of_strings.bop`.
pub mod array_of_strings {
    include!("../../rust/tests/expected/array_of_strings.rs");
}

/// Generated from `basic_arrays.bop`.
pub mod basic_arrays {
    include!("../../rust/tests/expected/basic_arrays.rs");
}

/// Generated from `basic_types.bop`.
pub mod basic_types {
    include!("../../rust/tests/expected/basic_types.rs");
}

/// Generated from `bitflags.bop`.
pub mod bitflags {
    include!("../../rust/tests/expected/bitflags.rs");
}

/// Generated from `codegen_all.bop`.
pub mod codegen_all {
    include!("../../rust/tests/expected/codegen_all.rs");
}

/// Generated from `codegen_base.bop`.
pub mod codegen_base {
    include!("../../rust/tests/expected/codegen_base.rs");
}

/// Generated from `const.bop`.
pub mod r#const {
    include!("../../rust/tests/expected/const.rs");
}

/// Generated from `dec_ambig_a.bop`.
pub mod dec_ambig_a {
    include!("../../rust/tests/expected/dec_ambig_a.rs");
}

/// Generated from `dec_ambig_b.bop`.
pub mod dec_ambig_b {
    include!("../../rust/tests/expected/dec_ambig_b.rs");
}

/// Generated from `dec_app.bop`.
pub mod dec_app {
    include!("../../rust/tests/expected/dec_app.rs");
}

/// Generated from `dec_qualified.bop`.
pub mod dec_qualified {
    include!("../../rust/tests/expected/dec_qualified.rs");
}

/// Generated from `dec_validate_export.bop`.
pub mod dec_validate_export {
    include!("../../rust/tests/expected/dec_validate_export.rs");
}

/// Generated from `dec_validators.bop`.
pub mod dec_validators {
    include!("../../rust/tests/expected/dec_validators.rs");
}

/// Generated from `document.bop`.
pub mod document {
    include!("../../rust/tests/expected/document.rs");
}

/// Generated from `documentation.bop`.
pub mod documentation {
    include!("../../rust/tests/expected/documentation.rs");
}

/// Generated from `empty.bop`.
pub mod empty {
    include!("../../rust/tests/expected/empty.rs");
}

/// Generated from `enum.bop`.
pub mod r#enum {
    include!("../../rust/tests/expected/enum.rs");
}

/// Generated from `enum_size.bop`.
pub mod enum_size {
    include!("../../rust/tests/expected/enum_size.rs");
}

/// Generated from `fixed_arrays.bop`.
pub mod fixed_arrays {
    include!("../../rust/tests/expected/fixed_arrays.rs");
}

/// Generated from `imports.bop`.
pub mod imports {
    include!("../../rust/tests/expected/imports.rs");
}

/// Generated from `jazz.bop`.
pub mod jazz {
    include!("../../rust/tests/expected/jazz.rs");
}

/// Generated from `lab.bop`.
pub mod lab {
    include!("../../rust/tests/expected/lab.rs");
}

/// Generated from `map_types.bop`.
pub mod map_types {
    include!("../../rust/tests/expected/map_types.rs");
}

/// Generated from `message.bop`.
pub mod message {
    include!("../../rust/tests/expected/message.rs");
}

/// Generated from `msgpack_comparison.bop`.
pub mod msgpack_comparison {
    include!("../../rust/tests/expected/msgpack_comparison.rs");
}

/// Generated from `nested.bop`.
pub mod nested {
    include!("../../rust/tests/expected/nested.rs");
}

/// Generated from `nested_message.bop`.
pub mod nested_message {
    include!("../../rust/tests/expected/nested_message.rs");
}

/// Generated from `package.bop`.
pub mod package {
    include!("../../rust/tests/expected/package.rs");
}

/// Generated from `pkg_app.bop`.
pub mod pkg_app {
    include!("../../rust/tests/expected/pkg_app.rs");
}

/// Generated from `pkg_import_nested.bop`.
pub mod pkg_import_nested {
    include!("../../rust/tests/expected/pkg_import_nested.rs");
}

/// Generated from `pkg_nested.bop`.
pub mod pkg_nested {
    include!("../../rust/tests/expected/pkg_nested.rs");
}

/// Generated from `pkg_types.bop`.
pub mod pkg_types {
    include!("../../rust/tests/expected/pkg_types.rs");
}

/// Generated from `reflection.bop`.
pub mod reflection {
    include!("../../rust/tests/expected/reflection.rs");
}

/// Generated from `request.bop`.
pub mod request {
    include!("../../rust/tests/expected/request.rs");
}

/// Generated from `struct.bop`.
pub mod r#struct {
    include!("../../rust/tests/expected/struct.rs");
}

/// Generated from `toposort.bop`.
pub mod toposort {
    include!("../../rust/tests/expected/toposort.rs");
}

/// Generated from `tree.bop`.
pub mod tree {
    include!("../../rust/tests/expected/tree.rs");
}

/// Generated from `union.bop`.
pub mod r#union {
    include!("../../rust/tests/expected/union.rs");
}

/// Generated from `union_perf_a.bop`.
pub mod union_perf_a {
    include!("../../rust/tests/expected/union_perf_a.rs");
}

/// Generated from `union_perf_b.bop`.
pub mod union_perf_b {
    include!("../../rust/tests/expected/union_perf_b.rs");
}

/// Generated from `union_perf_c.bop`.
pub mod union_perf_c {
    include!("../../rust/tests/expected/union_perf_c.rs");
}

/// Generated from `union_refs.bop`.
pub mod union_refs {
    include!("../../rust/tests/expected/union_refs.rs");
}

/// Generated from `visibility.bop`.
pub mod visibility {
    include!("../../rust/tests/expected/visibility.rs");
}

/// Code generated from hand-built descriptors (`../rust/tests/common/synthetic.rs`) for what
/// the reference fixtures do not cover: the hand-written model types, by-value recursion,
/// forward compatibility, naming collisions, consts.
pub mod extra {
    /// Generated from the synthetic `spec.bop`.
    pub mod spec {
        include!("../../rust/tests/expected/extra/spec.rs");
    }

    /// Generated from the synthetic `recursion.bop`.
    pub mod recursion {
        include!("../../rust/tests/expected/extra/recursion.rs");
    }

    /// Generated from the synthetic `forward.bop`.
    pub mod forward {
        include!("../../rust/tests/expected/extra/forward.rs");
    }

    /// Generated from the synthetic `naming.bop`.
    pub mod naming {
        include!("../../rust/tests/expected/extra/naming.rs");
    }

    /// Generated from the synthetic `consts.bop`.
    pub mod consts {
        include!("../../rust/tests/expected/extra/consts.rs");
    }
}

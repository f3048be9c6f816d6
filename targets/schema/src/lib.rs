//! The Bebop types the firmware images and the serial demo use, and the benchmark data.
//!
//! Every type is generated at build time by `bebop-build` (`build.rs`), one module per schema:
//!
//! - [`benchmark`]: `benches/workloads/schemas/workloads.bop` of the main workspace, the
//!   paper's workloads (`Person`, `Order`, `TreeNode`, `EmbeddingBF16`, the `JsonValue`
//!   union, ...);
//! - [`telemetry`]: `schemas/telemetry.bop`, the serial demo's messages (telemetry records,
//!   configuration, acknowledgement, end-of-stream summary) and stream ids; with the feature
//!   `owned`, also their owned forms (`telemetry::owned`) for the host program;
//! - [`device`]: `schemas/device.bop`, the `Device` RPC service the demo firmware serves
//!   and the host calls (owned forms under `owned`);
//! - [`spec`]: `schemas/spec.bop`, the types of the golden vectors of
//!   `docs/wire-format.md` ("Golden vectors");
//! - [`edge_cases`]: `schemas/edge_cases.bop`, a forward-compatible union and a recursive
//!   message;
//! - [`fixtures`]: fixed benchmark values (PersonSmall/Medium, OrderLarge, Embedding768,
//!   TreeDeep), built at compile time so that they live in flash, not RAM.
//!
//! The views need `core` alone (no allocator). With the feature `defmt` every view
//! implements `defmt::Format`.
#![no_std]
#![forbid(unsafe_code)]

/// Generated from `benches/workloads/schemas/workloads.bop` (the benchmark records).
pub mod benchmark {
    include!(concat!(env!("OUT_DIR"), "/benchmark.rs"));
}

/// Generated from `schemas/telemetry.bop` (the serial demo).
pub mod telemetry {
    include!(concat!(env!("OUT_DIR"), "/telemetry.rs"));
}

/// Generated from `schemas/device.bop` (the serial demo's RPC service: the firmware serves
/// it, the host calls it).
pub mod device {
    include!(concat!(env!("OUT_DIR"), "/device.rs"));
}

/// Generated from `schemas/spec.bop` (the types of the golden vectors of
/// `docs/wire-format.md`, "Golden vectors").
pub mod spec {
    include!(concat!(env!("OUT_DIR"), "/spec.rs"));
}

/// Generated from `schemas/edge_cases.bop` (a forward-compatible union, a recursive message).
pub mod edge_cases {
    include!(concat!(env!("OUT_DIR"), "/edge_cases.rs"));
}

pub mod fixtures;

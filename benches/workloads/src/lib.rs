//! The Bebop paper's benchmark workloads, measured on our generated code and on peers.
//!
//! [`data::Dataset::build`] makes every workload's value as the reference harness does;
//! [`suite::for_each_workload`] hands each to a visitor with its type; [`suite::Prepared`]
//! makes every format's form and bytes, checks that they round-trip ([`suite::Prepared::verify`])
//! and hands out the timed closures ([`suite::Prepared::cases`]) that both the `bench-report`
//! runner ([`runner::run`], [`report::write`], checked against the previous run by
//! [`compare::Comparison`], with ratios to rkyv also measured in alternating pairs by
//! [`paired::measure_pair`]) and the criterion bench time.
//!
//! ```
//! use bebop_workloads::data::Dataset;
//! use bebop_workloads::suite::verify_all;
//!
//! // Every workload round-trips through every format.
//! verify_all(&Dataset::build())?;
//! # Ok::<(), String>(())
//! ```
#![forbid(unsafe_code)]

/// Generated from `schemas/workloads.bop`.
#[allow(missing_docs)]
pub mod bop {
    include!(concat!(env!("OUT_DIR"), "/benchmark.rs"));
}

/// Generated from `proto/benchmark.proto`.
#[allow(missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/bench.rs"));
}

pub mod compare;
pub mod data;
pub mod instructions;
pub mod model;
pub mod one_pass;
pub mod paired;
pub mod plot;
pub mod read_once;
pub mod report;
pub mod runner;
pub mod scaling;
pub mod shape;
pub mod suite;
pub mod text;
pub mod timing;
pub mod walk;

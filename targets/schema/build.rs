//! Generates the crate's types with `bebop-build` (`bebopc` and `bebop-codegen-rust`), one
//! file per schema in `OUT_DIR`, each included in its own module by `src/lib.rs`:
//!
//! - `benchmark.rs` from `../../benches/workloads/schemas/workloads.bop` (the workloads'
//!   schema of the main workspace, reached by a path relative to this package);
//! - `telemetry.rs` from `schemas/telemetry.bop` (the serial demo), with owned types under
//!   `cfg(feature = "owned")` for the host program;
//! - `device.rs` from `schemas/device.bop` (the RPC service of the serial demo), with owned
//!   types under `cfg(feature = "owned")` for the host program;
//! - `spec.rs` from `schemas/spec.bop` (the types of the golden vectors of docs/wire-format.md);
//! - `edge_cases.rs` from `schemas/edge_cases.bop` (a forward-compatible union, a recursive
//!   message).
//!
//! The views are `no_std` without `alloc`; every type derives `defmt::Format` under
//! `cfg(feature = "defmt")`. The output is not piped through rustfmt (prettyplease formats
//! it), so the build does not depend on which rustfmt is on `PATH`.

use std::path::{Path, PathBuf};

use bebop_build::Config;

/// A configuration writing `file` into `out_dir`: views with `defmt` derives.
fn config(out_dir: &Path, file: &str) -> Config {
    let mut c = Config::new();
    c.out_dir(out_dir)
        .file_name(file)
        .runtime_path("::bebop_core")
        .defmt(Some(r#"feature = "defmt""#))
        .rustfmt(false)
        .lua(false);
    c
}

fn main() -> Result<(), bebop_build::Error> {
    // Cargo runs build scripts in the package's directory: the schema paths below are
    // relative to it, and so are the paths the generated docs name.
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=schemas");

    // targets/schema -> targets -> the repository root -> benches/workloads/schemas.
    let workloads = Path::new("../../benches/workloads/schemas");
    config(&out_dir, "benchmark.rs")
        .include(workloads)
        .compile(&[workloads.join("workloads.bop")])?;

    config(&out_dir, "telemetry.rs")
        .include("schemas")
        .owned_types(true)
        .owned_cfg(Some(r#"feature = "owned""#))
        .compile(&["schemas/telemetry.bop"])?;
    config(&out_dir, "device.rs")
        .include("schemas")
        .owned_types(true)
        .owned_cfg(Some(r#"feature = "owned""#))
        .compile(&["schemas/device.bop"])?;
    config(&out_dir, "spec.rs")
        .include("schemas")
        .compile(&["schemas/spec.bop"])?;
    config(&out_dir, "edge_cases.rs")
        .include("schemas")
        .compile(&["schemas/edge_cases.bop"])?;
    Ok(())
}

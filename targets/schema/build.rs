//! Generates the crate's types with `bebop-build` (`bebopc` and `bebop-codegen-rust`), one
//! file per schema in `OUT_DIR`, each included in its own module by `src/lib.rs`:
//!
//! - `benchmark.rs` from `../shared/bench/benchmark.bop` (resolved relative to the repository
//!   root; the build fails with a clear message when it is missing);
//! - `telemetry.rs` from `schemas/telemetry.bop` (the serial demo), with owned types under
//!   `cfg(feature = "owned")` for the host program;
//! - `device.rs` from `schemas/device.bop` (the RPC service of the serial demo), with owned
//!   types under `cfg(feature = "owned")` for the host program;
//! - `spec.rs` from `schemas/spec.bop` (the SPEC.md section 3 golden vector types);
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

    // targets/schema -> targets -> the repository root -> ../shared.
    let bench = Path::new("../../../shared/bench");
    let benchmark = bench.join("benchmark.bop");
    assert!(
        benchmark.is_file(),
        "the benchmark schema is missing: expected {} (../shared/bench/benchmark.bop relative \
         to the repository root, i.e. a `shared` directory next to the checkout; SPEC.md section 6)",
        std::env::current_dir()
            .map(|d| d.join(&benchmark))
            .unwrap_or(benchmark.clone())
            .display()
    );
    // Its warnings (`uint8`, a deprecated alias) are not ours to fix: not printed.
    config(&out_dir, "benchmark.rs")
        .include(bench)
        .emit_warnings(false)
        .compile(&[&benchmark])?;

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

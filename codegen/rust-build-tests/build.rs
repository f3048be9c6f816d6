//! Generates, with `bebop-build` (so through `bebopc` and `bebop-codegen-rust`), the code this
//! crate compiles and tests:
//!
//! - `benchmark.rs` from `../../benches/workloads/schemas/workloads.bop` (the workloads'
//!   schema; module `benchmark`);
//! - `standard/NAME.rs` from each standard schema built into the compiler
//!   (`bebop/descriptor.bop`, ..., compiled without any include directory; one file each, as
//!   `bebop/rpc.bop` and `bebop/descriptor.bop` both define `bebop.MethodType`), with
//!   `Vec<(K, V)>` maps so that decoded descriptors re-encode byte for byte, and
//!   `standard.rs` declaring their modules;
//! - `spec.rs` from `schemas/spec.bop` (the types of the golden vectors of docs/wire-format.md);
//! - `recursion.rs` from `schemas/recursion.bop` (a struct that holds an array of itself);
//! - `runs.rs` from `schemas/runs.bop` (structs with runs of fixed-size fields);
//! - `once.rs` from `schemas/once.bop` (every shape one-pass reading hands out, generated
//!   with `one_pass`).
//!
//! Every file has owned types under `cfg(feature = "owned")`.
//!
//! The reference fixtures are not compiled here: `bebop-build`'s code for each of them is
//! checked to equal the golden file of `bebop-codegen-rust` (`codegen/build/tests/fixtures.rs`),
//! which `bebop-rust-fixtures` compiles and tests.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bebop_build::{Config, OwnedMap};

/// The standard schemas, by name (`bebop/NAME.bop`).
const STANDARD: &[&str] = &[
    "descriptor",
    "plugin",
    "rpc",
    "decorators",
    "empty",
    "any",
    "json",
];

fn config(out_dir: &Path, file: &str) -> Config {
    let mut c = Config::new();
    c.out_dir(out_dir)
        .file_name(file)
        .runtime_path("::bebop_core")
        .owned_types(true)
        .owned_cfg(Some(r#"feature = "owned""#))
        .emit_warnings(false);
    c
}

/// Appends `pub mod NAME { include!(OUT_DIR/DIR/NAME.rs) }` to `out`.
fn module(out: &mut String, name: &str, from: &str, dir: &str) {
    writeln!(
        out,
        "\n/// Generated from {from}.\npub mod {name} {{\n    \
         include!(concat!(env!(\"OUT_DIR\"), \"/{dir}/{name}.rs\"));\n}}"
    )
    .expect("write to a String");
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn main() -> Result<(), bebop_build::Error> {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=schemas");

    // The workloads' schema, in the repository (`benches/workloads`).
    let workloads = std::fs::canonicalize(manifest.join("../../benches/workloads/schemas"))
        .expect("canonical path of benches/workloads/schemas");
    config(&out_dir, "benchmark.rs")
        .include(&workloads)
        .emit_warnings(true)
        .compile(&[workloads.join("workloads.bop")])?;

    let mut modules = String::from("// Written by build.rs: one module per standard schema.\n");
    for name in STANDARD {
        config(&out_dir, &format!("standard/{name}.rs"))
            .owned_map(OwnedMap::Vec)
            .compile(&[format!("bebop/{name}.bop")])?;
        module(
            &mut modules,
            name,
            &format!("`bebop/{name}.bop`"),
            "standard",
        );
    }
    write_if_changed(&out_dir.join("standard.rs"), &modules);

    config(&out_dir, "spec.rs")
        .include(manifest.join("schemas"))
        .compile(&["schemas/spec.bop"])?;
    config(&out_dir, "recursion.rs")
        .include(manifest.join("schemas"))
        .compile(&["schemas/recursion.bop"])?;
    config(&out_dir, "runs.rs")
        .include(manifest.join("schemas"))
        .compile(&["schemas/runs.bop"])?;
    config(&out_dir, "once.rs")
        .include(manifest.join("schemas"))
        .one_pass(true)
        .compile(&["schemas/once.bop"])?;
    Ok(())
}

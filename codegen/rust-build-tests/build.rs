//! Generates, with `bebop-build` (so through `bebopc` and `bebop-codegen-rust`), the code this
//! crate compiles and tests:
//!
//! - `benchmark.rs` from `../shared/bench/benchmark.bop`;
//! - `fixtures/NAME.rs` from every `../shared/conformance/reference-fixtures/valid/NAME.bop`
//!   (one file and module per fixture: fixtures may define the same names), and
//!   `fixtures.rs` declaring their modules;
//! - `standard/NAME.rs` from each standard schema built into the compiler
//!   (`bebop/descriptor.bop`, ..., compiled without any include directory; one file each, as
//!   `bebop/rpc.bop` and `bebop/descriptor.bop` both define `bebop.MethodType`), with
//!   `Vec<(K, V)>` maps so that decoded descriptors re-encode byte for byte, and
//!   `standard.rs` declaring their modules;
//! - `spec.rs` from `schemas/spec.bop` (the SPEC.md §3 golden vector types).
//!
//! Every file has owned types under `cfg(feature = "owned")`. `../shared` is resolved
//! relative to the repository root; the build fails when it is missing. The compiler's
//! warnings are not printed: the fixtures use deprecated aliases (`guid`, `uint8`) on purpose.

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

/// Rust keywords that fixture names can be (module names need `r#` then).
const KEYWORDS: &[&str] = &[
    "as", "const", "enum", "fn", "impl", "mod", "struct", "type", "use", "where", "match", "loop",
];

fn config(out_dir: &Path, file: &str) -> Config {
    let mut c = Config::new();
    c.out_dir(out_dir)
        .file_name(file)
        .owned_types(true)
        .owned_cfg(Some(r#"feature = "owned""#))
        .emit_warnings(false);
    c
}

fn require_dir(dir: &Path, what: &str) {
    assert!(
        dir.is_dir(),
        "{what} missing: expected {} (../shared relative to the repository root; see \
         ../shared/conformance/README.md)",
        dir.display()
    );
}

/// Appends `pub mod NAME { include!(OUT_DIR/DIR/NAME.rs) }` to `out`.
fn module(out: &mut String, name: &str, from: &str, dir: &str) {
    let module = if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    };
    writeln!(
        out,
        "\n/// Generated from {from}.\npub mod {module} {{\n    \
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
    let shared = manifest.join("../../../shared");
    require_dir(&shared, "the shared data");
    let shared = std::fs::canonicalize(&shared).expect("canonical path of ../shared");
    let bench = shared.join("bench");
    let valid = shared.join("conformance/reference-fixtures/valid");
    require_dir(&bench, "the benchmark schema");
    require_dir(&valid, "the conformance fixtures");
    println!("cargo:rerun-if-changed=build.rs");
    // New fixtures appear as changes of the directory.
    println!("cargo:rerun-if-changed={}", valid.display());
    println!("cargo:rerun-if-changed=schemas");

    config(&out_dir, "benchmark.rs")
        .include(&bench)
        .compile(&[bench.join("benchmark.bop")])?;

    let mut names: Vec<String> = std::fs::read_dir(&valid)
        .expect("read the fixtures directory")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".bop").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no fixtures in {}", valid.display());
    let mut modules = String::from("// Written by build.rs: one module per reference fixture.\n");
    for name in &names {
        config(&out_dir, &format!("fixtures/{name}.rs"))
            .include(&valid)
            .compile(&[valid.join(format!("{name}.bop"))])?;
        module(
            &mut modules,
            name,
            &format!("the reference fixture `{name}.bop`"),
            "fixtures",
        );
    }
    write_if_changed(&out_dir.join("fixtures.rs"), &modules);

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
    Ok(())
}

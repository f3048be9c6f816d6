//! Encodes the benchmark fixtures on the host (`fixture-bytes`: the same generated types and
//! the same bebop-core) into `OUT_DIR`; the firmware checks that it produces exactly these
//! bytes on the target (32-bit, and for the Cortex-M0 without unaligned access) and decodes
//! them from flash. Also adds defmt's linker script when the `defmt` feature is on.

use std::{env, path::PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_DEFMT").is_some() {
        println!("cargo::rustc-link-arg-bins=-Tdefmt.x");
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    if let Err(e) = fixture_bytes::write_all(&out) {
        panic!("{e}");
    }
}

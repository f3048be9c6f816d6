//! Encodes the benchmark fixtures on the host, with the same generated types and the same
//! bebop-core, into `OUT_DIR`; the firmware checks that it produces exactly these bytes on the target
//! (32-bit, and for the Cortex-M0 without unaligned access) and decodes them from flash.
//! Also adds defmt's linker script when the `defmt` feature is on.

use std::{
    env, fs,
    path::{Path, PathBuf},
};

use bebop_core::Encode;
use target_schema::fixtures;

fn write<T: Encode>(out: &Path, name: &str, value: &T) {
    let mut buf = vec![0u8; value.encoded_size()];
    let n = value
        .encode_into(&mut buf)
        .unwrap_or_else(|e| panic!("encoding {name} on the host: {e}"));
    assert_eq!(n, buf.len(), "{name}: encoded_size disagrees with encode");
    fs::write(out.join(name), &buf).unwrap_or_else(|e| panic!("writing {name}: {e}"));
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_DEFMT").is_some() {
        println!("cargo::rustc-link-arg-bins=-Tdefmt.x");
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    write(&out, "person_small.bin", &fixtures::PERSON_SMALL);
    write(&out, "person_medium.bin", &fixtures::PERSON_MEDIUM);
    write(&out, "order_large.bin", &fixtures::ORDER_LARGE);
    write(&out, "embedding_768.bin", &fixtures::EMBEDDING_768);
    write(&out, "tree_deep.bin", &fixtures::tree_deep());
    write(&out, "json_small.bin", &fixtures::JSON_SMALL);
}

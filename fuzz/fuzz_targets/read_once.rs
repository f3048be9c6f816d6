//! One-pass reading against `from_bytes`, on `once.bop`'s `Shape` (every shape one-pass
//! reading hands out): readers that read everything, nothing or some of the input, and one
//! that also ignores the errors of walks, must each get `from_bytes`'s verdict and error
//! (`bebop_rust_build_tests::once_readers::agree`).
//!
//! An input whose first byte is odd edits a valid sample instead of being read as it is:
//! each further 3 bytes set the byte at a position (2 bytes, little-endian, modulo the
//! sample's length) to a value, so that corruptions deep inside valid structure are
//! reached at once.
#![no_main]

use std::sync::OnceLock;

use bebop_rust_build_tests::once_readers::{agree, encode, sample};

/// A valid `Shape` with every field set, two levels of children deep.
fn sample_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| encode(&sample(1)))
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let edited: Vec<u8>;
    let bytes = match data.split_first() {
        Some((first, edits)) if first % 2 == 1 => {
            let mut v = sample_bytes().to_vec();
            for edit in edits.chunks_exact(3) {
                let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % v.len();
                v[at] = edit[2];
            }
            edited = v;
            &edited[..]
        }
        _ => data,
    };
    if let Err(disagreement) = agree(bytes) {
        panic!("one-pass reading disagrees with from_bytes: {disagreement}");
    }
});

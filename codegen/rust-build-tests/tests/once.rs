//! One-pass reading of generated code (`schemas/once.bop`, generated with `one_pass`): a
//! reader that reads every part reads what the view holds, and whatever a reader does
//! (reads everything, reads nothing, leaves or abandons some values, ignores the errors of
//! walks) its verdict on any input is `from_bytes`'s, the same error at the same position.
//! The readers are in the library (`src/once_readers.rs`), shared with the fuzz target
//! `read_once`.

use bebop_core::Decode;
use bebop_rust_build_tests::once as schema;
use bebop_rust_build_tests::once_readers::{
    Mode, Trace, agree, encode, read_shape, sample, trace_view,
};
use proptest::prelude::*;

#[test]
fn reading_every_part_sees_what_the_view_holds() {
    for depth in 0..3 {
        let bytes = encode(&sample(depth));
        let view = schema::Shape::from_bytes(&bytes).expect("decodes");
        let mut expected = Trace::new();
        trace_view(&view, &mut expected);
        assert_eq!(read_shape(&bytes, Mode::All), Ok(expected), "depth {depth}");
        assert!(read_shape(&bytes, Mode::Skim).is_ok());
    }
}

#[test]
fn an_unknown_branch_of_a_forward_compatible_union_is_handed_out_as_read() {
    // Shape { style(7): union of 3 bytes, discriminator 9, body [1, 2] }.
    let bytes = [9, 0, 0, 0, 7, 3, 0, 0, 0, 9, 1, 2, 0];
    let view = schema::Shape::from_bytes(&bytes).expect("decodes");
    let mut expected = Trace::new();
    trace_view(&view, &mut expected);
    assert_eq!(expected, ["unknown 9 [1, 2]"]);
    assert_eq!(read_shape(&bytes, Mode::All), Ok(expected));
}

#[test]
fn every_prefix_and_corrupted_byte_gets_the_views_verdict() {
    let bytes = encode(&sample(1));
    let mut failures = Vec::new();
    for n in 0..bytes.len() {
        failures.extend(agree(&bytes[..n]).err());
    }
    for i in 0..bytes.len() {
        for b in [
            0x00,
            0x01,
            0x02,
            0x7f,
            0x80,
            0xff,
            bytes[i] ^ 0x80,
            bytes[i].wrapping_add(1),
        ] {
            let mut v = bytes.clone();
            v[i] = b;
            failures.extend(agree(&v).err());
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements, the first: {}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn nesting_past_the_depth_limit_fails_where_the_view_fails() {
    let mut deep = schema::owned::Shape::default();
    for _ in 0..80 {
        deep = schema::owned::Shape {
            children: Some(vec![deep]),
            ..Default::default()
        };
    }
    let bytes = encode(&deep);
    assert!(
        schema::Shape::from_bytes(&bytes).is_err(),
        "deeper than the limit"
    );
    agree(&bytes).unwrap_or_else(|e| panic!("{e}"));
}

/// The sample's bytes, built once.
fn sample_bytes() -> &'static Vec<u8> {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| encode(&sample(2)))
}

proptest! {
    #[test]
    fn arbitrary_bytes_get_the_views_verdict(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        agree(&bytes).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn mutated_shapes_get_the_views_verdict(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = sample_bytes().clone();
        for (at, b) in &edits {
            let i = at.index(bytes.len());
            bytes[i] = *b;
        }
        agree(&bytes).map_err(TestCaseError::fail)?;
    }
}

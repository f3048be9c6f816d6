//! Generated struct decoders read consecutive fields of integers, floats and uuids as one
//! run, with one bounds check (`Reader::take_run`). The values, the errors and their
//! positions must be exactly those of reading the fields one by one: this compares the generated view and owned
//! decoders of `schemas/runs.bop` with a decoder written here field by field, on a valid
//! encoding, every prefix of it, every byte of it changed, and random bytes.

#![allow(clippy::unwrap_used)]

use bebop_core::{Array, Decode, Duration, Error, Reader, Timestamp, Uuid, f16};
use bebop_rust_build_tests::runs::{self, owned};
use proptest::prelude::*;

/// Every field of a `Reading`, in wire order (in two tuples: `Debug` stops at 12).
type Fields<'a> = (
    (u32, i64, &'a str, bool, runs::Source, Timestamp, f32),
    (f64, Array<'a, i16>, Duration, Uuid, u16, f16),
);

/// `Reading` read one field at a time, the way decoders read before runs.
fn one_by_one(bytes: &[u8]) -> Result<Fields<'_>, Error> {
    let mut r = Reader::new(bytes);
    let front = (
        r.read()?,
        r.read()?,
        r.read()?,
        r.read()?,
        r.read()?,
        r.read()?,
        r.read()?,
    );
    let back = (
        r.read()?,
        r.read()?,
        r.read()?,
        r.read()?,
        r.read()?,
        r.read()?,
    );
    let fields = (front, back);
    r.finish()?;
    Ok(fields)
}

fn view_fields<'a>(v: &runs::Reading<'a>) -> Fields<'a> {
    (
        (
            v.sensor,
            v.seq,
            v.site,
            v.calibrated,
            v.source,
            v.at,
            v.value,
        ),
        (
            v.scale,
            v.samples,
            v.after,
            v.checked_by,
            v.revision,
            v.weight,
        ),
    )
}

/// The generated decoders agree with [`one_by_one`] on `bytes`: the same fields, or the same
/// error at the same position.
fn agree(bytes: &[u8]) {
    let expected = one_by_one(bytes);
    let view = runs::Reading::from_bytes(bytes);
    match (&expected, &view) {
        (Ok(fields), Ok(view)) => {
            // Compared as bits: a float field may hold a NaN.
            assert_eq!(format!("{:?}", view_fields(view)), format!("{fields:?}"));
        }
        (Err(e), Err(v)) => assert_eq!(e, v, "view, bytes {bytes:?}"),
        _ => panic!("view: {view:?}, one by one: {expected:?}, bytes {bytes:?}"),
    }
    let owned = owned::Reading::from_bytes(bytes);
    match (&expected, &owned) {
        (Ok(_), Ok(_)) => {}
        (Err(e), Err(o)) => assert_eq!(e, o, "owned, bytes {bytes:?}"),
        _ => panic!("owned: {owned:?}, one by one: {expected:?}, bytes {bytes:?}"),
    }
}

/// A valid encoding of a `Reading`.
fn valid() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(7u32.to_le_bytes());
    b.extend((-3i64).to_le_bytes());
    b.extend(5u32.to_le_bytes());
    b.extend(b"shelf\0");
    b.push(1);
    b.extend(2u16.to_le_bytes());
    b.extend(1_700_000_000i64.to_le_bytes());
    b.extend(250_000_000i32.to_le_bytes());
    b.extend([0u8; 4]);
    b.extend(21.5f32.to_le_bytes());
    b.extend(0.25f64.to_le_bytes());
    b.extend(3u32.to_le_bytes());
    for s in [1i16, -2, 300] {
        b.extend(s.to_le_bytes());
    }
    b.extend(90i64.to_le_bytes());
    b.extend(5i32.to_le_bytes());
    b.extend([0xAB; 16]);
    b.extend(4u16.to_le_bytes());
    b.extend(f16::from_f32(0.5).to_le_bytes());
    b
}

#[test]
fn the_valid_encoding_decodes_to_its_fields() {
    let bytes = valid();
    let view = runs::Reading::from_bytes(&bytes).unwrap();
    assert_eq!((view.sensor, view.seq, view.site), (7, -3, "shelf"));
    assert_eq!((view.value, view.scale), (21.5, 0.25));
    assert_eq!((view.revision, view.weight), (4, f16::from_f32(0.5)));
    assert_eq!((view.calibrated, view.source), (true, runs::Source::Manual));
    assert_eq!(view.samples.iter().collect::<Vec<_>>(), [1, -2, 300]);
    agree(&bytes);
}

#[test]
fn every_prefix_and_every_changed_byte_fail_where_field_by_field_reading_does() {
    let bytes = valid();
    for end in 0..bytes.len() {
        agree(&bytes[..end]);
    }
    for at in 0..bytes.len() {
        for flip in [0x01, 0x80, 0xFF] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            agree(&bad);
        }
    }
}

proptest! {
    #[test]
    fn any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        agree(&bytes);
    }

    #[test]
    fn a_valid_encoding_with_changes(
        changes in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let mut bytes = valid();
        for (at, value) in changes {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        let keep = bytes.len() - cut % 8;
        agree(&bytes[..keep]);
    }
}

//! Every golden vector of `docs/wire-format.md` ("Golden vectors") through the types
//! `bebop-build` generated from `schemas/spec.bop`: views and owned forms encode to exactly
//! the listed bytes and decode from them to the same values.

#![allow(clippy::unwrap_used)]

use bebop_runtime::{Array, Decode, Encode, EncodeExt, FixedArray, Map, Uuid, bf16};
use bebop_rust_build_tests::spec::{self, owned, shape};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `value` encodes to `hex` (through `encode_to_vec` and into an exact-size buffer) and
/// decodes from it to an equal value.
fn assert_vector<'a, T>(value: &T, hex: &str, bytes: &'a [u8])
where
    T: Encode + Decode<'a> + PartialEq + core::fmt::Debug,
{
    assert_eq!(value.encoded_size(), bytes.len(), "size of {value:?}");
    assert_eq!(
        value.encode_to_vec().unwrap(),
        bytes,
        "encoding of {value:?} != {hex}"
    );
    let mut exact = vec![0u8; bytes.len()];
    assert_eq!(value.encode_into(&mut exact).unwrap(), bytes.len());
    assert_eq!(exact, bytes);
    assert_eq!(&T::from_bytes(bytes).unwrap(), value, "decoding {hex}");
}

/// Both forms of a type with a separate owned form: the view and the owned value give the
/// vector, the decoded view converts to the owned value.
macro_rules! both {
    ($view:expr, $owned:expr, $hex:expr) => {{
        let hex: &str = $hex;
        let bytes = unhex(hex);
        let view = $view;
        let owned = $owned;
        assert_vector(&view, hex, &bytes);
        assert_vector(&owned, hex, &bytes);
        assert_eq!(owned.encode_to_vec().unwrap(), bytes);
        assert_eq!(
            Decode::from_bytes(&bytes)
                .map(|v| view_of(&view, v))
                .unwrap()
                .to_owned_value(),
            owned
        );
    }};
}

/// Gives `decoded` the type of `_like` (so `Decode::from_bytes` picks the view type).
fn view_of<T>(_like: &T, decoded: T) -> T {
    decoded
}

#[test]
fn strings() {
    both!(
        spec::Text { value: "hello" },
        owned::Text {
            value: "hello".into()
        },
        "05000000 68656c6c6f 00"
    );
    both!(
        spec::Text { value: "" },
        owned::Text {
            value: String::new()
        },
        "0000000000"
    );
}

#[test]
fn scalar_arrays() {
    both!(
        spec::Ints {
            values: Array::from_slice(&[1, 2, 3])
        },
        owned::Ints {
            values: vec![1, 2, 3]
        },
        "03000000 01000000 02000000 03000000"
    );
    both!(
        spec::Magic {
            bytes: &[0xde, 0xad, 0xbe, 0xef]
        },
        owned::Magic {
            bytes: [0xde, 0xad, 0xbe, 0xef]
        },
        "deadbeef"
    );
}

#[test]
fn maps() {
    both!(
        spec::SmallMap {
            entries: Map::from_slice(&[(1u8, 100i32), (2, 200)])
        },
        owned::SmallMap {
            entries: [(1u8, 100i32), (2, 200)].into_iter().collect()
        },
        "02000000 01 64000000 02 c8000000"
    );
}

#[test]
fn point() {
    let hex = "0000803f 00000040";
    let bytes = unhex(hex);
    let p = spec::Point { x: 1.0, y: 2.0 };
    assert_vector(&p, hex, &bytes);
    // No borrowed data: the owned form is the same type.
    let o: owned::Point = p;
    assert_eq!(o.encode_to_vec().unwrap(), bytes);
    assert_eq!(spec::Point::ENCODED_SIZE, 8);
    assert_eq!(<spec::Point as bebop_runtime::FixedSize>::SIZE, 8);
    const { assert!(<spec::Point as Decode<'static>>::ALWAYS_VALID) };
}

#[test]
fn user_request() {
    for (value, hex) in [
        (
            spec::UserRequest {
                user_id: Some(42),
                include_profile: Some(true),
            },
            "08000000 01 2a000000 02 01 00",
        ),
        (
            spec::UserRequest {
                user_id: Some(42),
                include_profile: None,
            },
            "06000000 01 2a000000 00",
        ),
        (spec::UserRequest::default(), "01000000 00"),
    ] {
        let bytes = unhex(hex);
        assert_vector(&value, hex, &bytes);
        let o: owned::UserRequest = value;
        assert_eq!(o.encode_to_vec().unwrap(), bytes);
    }
}

#[test]
fn shape() {
    let circle = spec::Shape::Circle(shape::Circle { radius: 5.0 });
    assert_vector(
        &circle,
        "05000000 01 0000a040",
        &unhex("05000000 01 0000a040"),
    );
    let hex = "09000000 02 00004040 00008040";
    let rect = spec::Shape::Rectangle(shape::Rectangle {
        width: 3.0,
        height: 4.0,
    });
    assert_vector(&rect, hex, &unhex(hex));
    let o: owned::Shape = rect;
    assert_eq!(o.encode_to_vec().unwrap(), unhex(hex));
    // An undeclared discriminator is an error (Shape is not @forward_compatible).
    let err = spec::Shape::from_bytes(&unhex("05000000 03 0000a040")).unwrap_err();
    assert_eq!(err.kind(), bebop_runtime::ErrorKind::InvalidDiscriminator);
}

#[test]
fn nested_arrays() {
    let inner = [Array::from_slice(&[1, 2]), Array::from_slice(&[3])];
    both!(
        spec::NestedInts {
            values: Array::from_slice(&inner)
        },
        owned::NestedInts {
            values: vec![vec![1, 2], vec![3]]
        },
        "02000000 02000000 01000000 02000000 01000000 03000000"
    );
    both!(
        spec::Words {
            values: Array::from_slice(&["ab", "cde"])
        },
        owned::Words {
            values: vec!["ab".into(), "cde".into()]
        },
        "02000000 02000000 616200 03000000 63646500"
    );
    let three = [
        Array::from_slice(&[1, 2]),
        Array::from_slice(&[]),
        Array::from_slice(&[3]),
    ];
    both!(
        spec::ThreeLists {
            values: FixedArray::from_array(&three)
        },
        owned::ThreeLists {
            values: [vec![1, 2], vec![], vec![3]]
        },
        "02000000 01000000 02000000 00000000 01000000 03000000"
    );
}

#[test]
fn uuid_and_bfloat16_array() {
    let id = Uuid::parse_const("550e8400-e29b-41d4-a716-446655440000");
    let vector = [1.0f32, 2.0, 3.0, 4.0].map(bf16::from_f32);
    let hex = "550e8400e29b41d4a716446655440000 04000000 803f 0040 4040 8040";
    both!(
        spec::TaggedVector {
            id,
            vector: Array::from_slice(&vector)
        },
        owned::TaggedVector {
            id,
            vector: vector.to_vec()
        },
        hex
    );
    // The owned value lends a view that encodes the same.
    let o = owned::TaggedVector {
        id,
        vector: vector.to_vec(),
    };
    assert_eq!(o.as_view().encode_to_vec().unwrap(), unhex(hex));
}

/// A message whose declared length ends before its end marker ends there (docs/decisions.md D15),
/// length 0 included, for generated views and owned types alike; a field cut off by the
/// length is still an error.
#[test]
fn messages_without_an_end_marker_end_at_their_length() {
    let cut = unhex("05000000 01 2a000000");
    let view = spec::UserRequest::from_bytes(&cut).unwrap();
    assert_eq!((view.user_id, view.include_profile), (Some(42), None));
    let o = owned::UserRequest::from_bytes(&cut).unwrap();
    assert_eq!(o.user_id, Some(42));
    assert_eq!(
        spec::UserRequest::from_bytes(&unhex("00000000")).unwrap(),
        spec::UserRequest::default()
    );
    let err = spec::UserRequest::from_bytes(&unhex("03000000 01 2a00")).unwrap_err();
    assert_eq!(err.kind(), bebop_runtime::ErrorKind::UnexpectedEnd);
}

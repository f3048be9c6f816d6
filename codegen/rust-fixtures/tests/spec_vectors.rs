//! The golden vectors of `docs/wire-format.md` through generated types, and the generated
//! types against the hand-written ones of `tests/src/lib.rs` (`bebop-conformance`): same
//! values, same bytes.
//!
//! No reference fixture defines `UserRequest` or `Shape` exactly as `docs/wire-format.md`
//! does; the synthetic `spec.bop` (`extra::spec`, descriptors built in
//! `codegen/rust/tests/common/synthetic.rs`) defines every hand-written type with the same
//! schema, and the reference fixtures are used where they match (`base.Point`,
//! `reflection.Point`, `ArrayOfStrings`, `TestInt32Array`, nested arrays).
#![allow(clippy::unwrap_used)]

mod support;

use bebop_conformance as hand;
use bebop_runtime::{Array, Decode, Encode, EncodeExt, FixedArray, Map, Uuid, bf16};
use bebop_rust_fixtures as fx;
use fx::extra::spec as generated;

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn assert_vector<'a, T>(value: &T, hex: &str, bytes: &'a [u8])
where
    T: Encode + Decode<'a> + PartialEq + core::fmt::Debug,
{
    assert_eq!(
        value.encode_to_vec().unwrap(),
        bytes,
        "encoding of {value:?} != {hex}"
    );
    assert_eq!(&T::from_bytes(bytes).unwrap(), value, "decoding {hex}");
}

#[test]
fn point() {
    let hex = "0000803f 00000040";
    let bytes = unhex(hex);
    assert_vector(&generated::Point { x: 1.0, y: 2.0 }, hex, &bytes);
    assert_vector(
        &fx::codegen_base::base::Point { x: 1.0, y: 2.0 },
        hex,
        &bytes,
    );
    assert_vector(
        &fx::reflection::reflection::Point { x: 1.0, y: 2.0 },
        hex,
        &bytes,
    );
    assert_vector(
        &fx::package::my::test::package::Point { x: 1.0, y: 2.0 },
        hex,
        &bytes,
    );
    assert_eq!(generated::Point::ENCODED_SIZE, 8);
    assert_eq!(<generated::Point as bebop_runtime::FixedSize>::SIZE, 8);
    const { assert!(<generated::Point as Decode<'static>>::ALWAYS_VALID) };
}

#[test]
fn user_request() {
    for (value, hex) in [
        (
            generated::UserRequest {
                user_id: Some(42),
                include_profile: Some(true),
            },
            "08000000 01 2a000000 02 01 00",
        ),
        (
            generated::UserRequest {
                user_id: Some(42),
                include_profile: None,
            },
            "06000000 01 2a000000 00",
        ),
        (generated::UserRequest::default(), "01000000 00"),
    ] {
        assert_vector(&value, hex, &unhex(hex));
    }
}

#[test]
fn shape() {
    let circle = generated::Shape::Circle(generated::shape::Circle { radius: 5.0 });
    assert_vector(
        &circle,
        "05000000 01 0000a040",
        &unhex("05000000 01 0000a040"),
    );
    let rect = generated::Shape::Rectangle(generated::shape::Rectangle {
        width: 3.0,
        height: 4.0,
    });
    let hex = "09000000 02 00004040 00008040";
    assert_vector(&rect, hex, &unhex(hex));
}

#[test]
fn arrays_and_strings() {
    // string[] ["ab", "cde"], as the only field of a struct (no prefix of its own).
    let strings = ["ab", "cde"];
    let hex = "02000000 02000000 616200 03000000 63646500";
    assert_vector(
        &fx::array_of_strings::ArrayOfStrings {
            strings: Array::from_slice(&strings),
        },
        hex,
        &unhex(hex),
    );
    // int32[] [1, 2, 3].
    let hex = "03000000 01000000 02000000 03000000";
    assert_vector(
        &fx::basic_arrays::TestInt32Array {
            a: Array::from_slice(&[1, 2, 3]),
        },
        hex,
        &unhex(hex),
    );
    // int32[][] [[1, 2], [3]] as `matrix`, then two empty arrays.
    let rows = [Array::from_slice(&[1, 2][..]), Array::from_slice(&[3][..])];
    let hex = "02000000 02000000 01000000 02000000 01000000 03000000 00000000 00000000";
    assert_vector(
        &fx::codegen_all::codegen::all::NestedArrays {
            matrix: Array::from_slice(&rows),
            table: Array::default(),
            point_grid: Array::default(),
        },
        hex,
        &unhex(hex),
    );
    // int32[][3] [[1, 2], [], [3]] between two empty arrays.
    let cols = [
        Array::from_slice(&[1, 2][..]),
        Array::from_slice(&[][..]),
        Array::from_slice(&[3][..]),
    ];
    let hex = "00000000 02000000 01000000 02000000 00000000 01000000 03000000 00000000";
    assert_vector(
        &fx::fixed_arrays::MixedArrays {
            dynamic_of_fixed: Array::default(),
            fixed_of_dynamic: FixedArray::from_array(&cols),
            dynamic_of_fixed_strings: Array::default(),
        },
        hex,
        &unhex(hex),
    );
    // "hello" inside a struct.
    let hex = "07000000 05000000 68656c6c6f00 00000000 00 09000000";
    assert_vector(
        &generated::Person {
            id: 7,
            name: "hello",
            email: "",
            age: 9,
        },
        hex,
        &unhex(hex),
    );
}

#[test]
fn uuid_and_bfloat16_array() {
    let hex = "550e8400e29b41d4a716446655440000 04000000 803f 0040 4040 8040";
    let vector: Vec<bf16> = [1.0f32, 2.0, 3.0, 4.0].map(bf16::from_f32).to_vec();
    let value = generated::Embedding {
        id: Uuid::from_u128(0x550e8400_e29b_41d4_a716_446655440000),
        vector: Array::from_slice(&vector),
    };
    assert_vector(&value, hex, &unhex(hex));
    let owned = generated::owned::Embedding::from_bytes(&unhex(hex)).unwrap();
    assert_eq!(owned.vector, vector);
    assert_eq!(owned.as_view(), value);
}

/// Random encodings of `fqn` decode through the hand-written and the generated type, and
/// both re-encode to the same bytes; values built from the same data encode alike.
macro_rules! same_as_hand_written {
    ($fqn:literal, $hand:ty, $gen:ty) => {
        support::Fixture::extra("spec").check($fqn, |bytes| {
            let h = <$hand as Decode>::from_bytes(bytes).map_err(|e| format!("hand: {e}"))?;
            let g = <$gen as Decode>::from_bytes(bytes).map_err(|e| format!("generated: {e}"))?;
            let (hb, gb) = (h.encode_to_vec().unwrap(), g.encode_to_vec().unwrap());
            if hb != gb || gb != bytes {
                return Err(format!(
                    "hand-written {} / generated {}",
                    support::hex(&hb),
                    support::hex(&gb)
                ));
            }
            if h.encoded_size() != g.encoded_size() {
                return Err("encoded sizes differ".into());
            }
            Ok(())
        })
    };
}

#[test]
fn generated_decodes_and_encodes_like_hand_written() {
    same_as_hand_written!("Point", hand::Point, generated::Point);
    same_as_hand_written!("UserRequest", hand::UserRequest, generated::UserRequest);
    same_as_hand_written!("Shape", hand::Shape, generated::Shape);
    same_as_hand_written!("Event", hand::Event, generated::Event);
    same_as_hand_written!("TreeNode", hand::TreeNode, generated::TreeNode);
    same_as_hand_written!("Chain", hand::Chain, generated::Chain);
    same_as_hand_written!("Person", hand::Person, generated::Person);
    same_as_hand_written!("Embedding", hand::Embedding, generated::Embedding);
    same_as_hand_written!("Level", hand::Level, generated::Level);
    same_as_hand_written!("Empty", hand::Empty, generated::Empty);
    same_as_hand_written!("Log", hand::Log, generated::Log);
}

#[test]
fn built_values_encode_like_hand_written() {
    let enc = |v: &dyn Fn(&mut Vec<u8>)| {
        let mut out = Vec::new();
        v(&mut out);
        out
    };
    let same = |a: Vec<u8>, b: Vec<u8>| assert_eq!(a, b);
    same(
        enc(&|o| hand::Point { x: 1.5, y: -2.0 }.encode(o).unwrap()),
        enc(&|o| generated::Point { x: 1.5, y: -2.0 }.encode(o).unwrap()),
    );
    same(
        hand::Shape::Rectangle(hand::Rectangle {
            width: 3.0,
            height: 4.0,
        })
        .encode_to_vec()
        .unwrap(),
        generated::Shape::Rectangle(generated::shape::Rectangle {
            width: 3.0,
            height: 4.0,
        })
        .encode_to_vec()
        .unwrap(),
    );
    same(
        hand::Event::Text { body: Some("hi") }
            .encode_to_vec()
            .unwrap(),
        generated::Event::Text(generated::event::Text { body: Some("hi") })
            .encode_to_vec()
            .unwrap(),
    );
    same(
        hand::Event::Unknown {
            discriminator: 9,
            body: &[1, 2, 3],
        }
        .encode_to_vec()
        .unwrap(),
        generated::Event::Unknown {
            discriminator: 9,
            body: &[1, 2, 3],
        }
        .encode_to_vec()
        .unwrap(),
    );
    let tags = [("k", "v"), ("a", "b")];
    let lines = ["x", ""];
    let grid = [
        Array::from_slice(&[1][..]),
        Array::from_slice(&[][..]),
        Array::from_slice(&[2, 3][..]),
    ];
    same(
        hand::Log {
            level: hand::Level::Warn,
            tags: Map::from_slice(&tags),
            lines: Array::from_slice(&lines),
            grid: FixedArray::from_array(&grid),
        }
        .encode_to_vec()
        .unwrap(),
        generated::Log {
            level: generated::Level::Warn,
            tags: Map::from_slice(&tags),
            lines: Array::from_slice(&lines),
            grid: FixedArray::from_array(&grid),
        }
        .encode_to_vec()
        .unwrap(),
    );
    // Recursion: the hand-written Chain and the generated one agree on a 3-link chain.
    let bytes = hand::Chain {
        value: Some(1),
        next: None,
    }
    .encode_to_vec()
    .unwrap();
    let tail = generated::Chain::from_bytes(&bytes).unwrap();
    let mid = generated::Chain {
        value: Some(2),
        next: Some(bebop_runtime::Lazy::from_ref(&tail)),
    };
    let head = generated::Chain {
        value: Some(3),
        next: Some(bebop_runtime::Lazy::from_ref(&mid)),
    };
    let bytes = head.encode_to_vec().unwrap();
    assert_eq!(hand::Chain::from_bytes(&bytes).unwrap().link_count(), 3);
    let decoded = generated::Chain::from_bytes(&bytes).unwrap();
    assert_eq!(decoded, head);
    let owned = decoded.to_owned_value();
    assert_eq!(
        owned
            .next
            .as_ref()
            .and_then(|n| n.next.as_ref())
            .and_then(|n| n.value),
        Some(1)
    );
    assert_eq!(owned.encode_to_vec().unwrap(), bytes);
    // The owned chain (Box inside Box) lends the same chain back, encoding the same bytes.
    assert_eq!(owned.as_view(), decoded);
    assert_eq!(owned.as_view().encode_to_vec().unwrap(), bytes);
}

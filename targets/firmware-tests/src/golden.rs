//! Every golden vector of `docs/wire-format.md` ("Golden vectors"), as a generated type of
//! `schemas/spec.bop` (a one-field struct encodes exactly as its field), encoded and compared
//! byte for byte, then decoded from the expected bytes and compared with the value.

use bebop_core::{Array, Decode, Encode, FixedArray, Map, Uuid, bf16};

use crate::checks::{Checks, hex};
use crate::schema::{
    Ints, Magic, NestedInts, Point, Shape, SmallMap, TaggedVector, Text, ThreeLists, UserRequest,
    Words, shape,
};

/// Encodes `$value` (of type `$ty`), compares with `$hex`, decodes `$hex` as `$ty` and
/// compares with `$value`.
macro_rules! golden {
    ($c:expr, $name:expr, $ty:ty, $value:expr, $hex:expr) => {{
        let c: &mut Checks = $c;
        let name: &str = $name;
        let mut want_buf = [0u8; 64];
        match hex($hex, &mut want_buf) {
            None => {
                c.check(format_args!("golden {}: bad hex in the test", name), false);
            }
            Some(want) => {
                let value: $ty = $value;
                let mut out = [0u8; 64];
                match value.encode_into(&mut out) {
                    Ok(n) => {
                        c.bytes(format_args!("golden {} encode", name), &out[..n], want);
                    }
                    Err(e) => {
                        c.eq(
                            format_args!("golden {} encode", name),
                            Err(e),
                            Ok(want.len()),
                        );
                    }
                }
                c.eq(
                    format_args!("golden {} encoded_size", name),
                    value.encoded_size(),
                    want.len(),
                );
                c.eq(
                    format_args!("golden {} decode", name),
                    <$ty>::from_bytes(want),
                    Ok(value),
                );
            }
        }
    }};
}

/// `[[1, 2], [3]]` for the `int32[][]` vector.
const NESTED: &[Array<'static, i32>] = &[Array::from_slice(&[1, 2]), Array::from_slice(&[3])];

/// `[[1, 2], [], [3]]` for the `int32[][3]` vector.
const THREE: &[Array<'static, i32>; 3] = &[
    Array::from_slice(&[1, 2]),
    Array::from_slice(&[]),
    Array::from_slice(&[3]),
];

pub fn run(c: &mut Checks) {
    golden!(
        c,
        "string \"hello\"",
        Text,
        Text { value: "hello" },
        "05000000 68656c6c6f 00"
    );
    golden!(c, "empty string", Text, Text { value: "" }, "0000000000");
    golden!(
        c,
        "int32[] [1,2,3]",
        Ints,
        Ints {
            values: Array::from_slice(&[1, 2, 3]),
        },
        "03000000 01000000 02000000 03000000"
    );
    golden!(
        c,
        "byte[4] DEADBEEF",
        Magic,
        Magic {
            bytes: &[0xde, 0xad, 0xbe, 0xef],
        },
        "deadbeef"
    );
    golden!(
        c,
        "map[uint8,int32] {1:100, 2:200}",
        SmallMap,
        SmallMap {
            entries: Map::from_slice(&[(1, 100), (2, 200)]),
        },
        "02000000 01 64000000 02 c8000000"
    );
    golden!(
        c,
        "struct Point (1, 2)",
        Point,
        Point { x: 1.0, y: 2.0 },
        "0000803f 00000040"
    );
    golden!(
        c,
        "message UserRequest {42, true}",
        UserRequest,
        UserRequest {
            user_id: Some(42),
            include_profile: Some(true),
        },
        "08000000 01 2a000000 02 01 00"
    );
    golden!(
        c,
        "message UserRequest {42}",
        UserRequest,
        UserRequest {
            user_id: Some(42),
            include_profile: None,
        },
        "06000000 01 2a000000 00"
    );
    golden!(
        c,
        "message UserRequest {}",
        UserRequest,
        UserRequest::default(),
        "01000000 00"
    );
    golden!(
        c,
        "union Shape Circle 5",
        Shape,
        Shape::Circle(shape::Circle { radius: 5.0 }),
        "05000000 01 0000a040"
    );
    golden!(
        c,
        "union Shape Rectangle 3x4",
        Shape,
        Shape::Rectangle(shape::Rectangle {
            width: 3.0,
            height: 4.0,
        }),
        "09000000 02 00004040 00008040"
    );
    golden!(
        c,
        "int32[][] [[1,2],[3]]",
        NestedInts,
        NestedInts {
            values: Array::from_slice(NESTED),
        },
        "02000000 02000000 01000000 02000000 01000000 03000000"
    );
    golden!(
        c,
        "string[] [ab, cde]",
        Words,
        Words {
            values: Array::from_slice(&["ab", "cde"]),
        },
        "02000000 02000000 616200 03000000 63646500"
    );
    golden!(
        c,
        "int32[][3] [[1,2],[],[3]]",
        ThreeLists,
        ThreeLists {
            values: FixedArray::from_array(THREE),
        },
        "02000000 01000000 02000000 00000000 01000000 03000000"
    );
    let vector = [
        bf16::from_f32(1.0),
        bf16::from_f32(2.0),
        bf16::from_f32(3.0),
        bf16::from_f32(4.0),
    ];
    golden!(
        c,
        "uuid + bfloat16[] [1,2,3,4]",
        TaggedVector,
        TaggedVector {
            id: Uuid::parse_const("550e8400-e29b-41d4-a716-446655440000"),
            vector: Array::from_slice(&vector),
        },
        "550e8400e29b41d4a716446655440000 04000000 803f 0040 4040 8040"
    );
}

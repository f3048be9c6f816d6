//! Every golden byte vector of `docs/wire-format.md` ("Golden vectors"), encoded and decoded
//! byte for byte, through the
//! slice writer, the embedded-io writer and the Vec output.

use bebop_conformance::{Circle, Embedding, Point, Rectangle, Shape, UserRequest};
use bebop_core::{Array, Decode, Encode, FixedArray, Map, SizeCounter, Uuid, bf16};
use bebop_runtime::EncodeExt;

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// Encodes `value` every way the crates offer and checks each gives `expected`.
fn assert_encodes<T: Encode + ?Sized>(value: &T, expected: &[u8]) {
    assert_eq!(value.encoded_size(), expected.len(), "encoded_size");
    // Caller buffer, exactly sized and oversized.
    let mut buf = vec![0xAAu8; expected.len() + 8];
    let n = value.encode_into(&mut buf).unwrap();
    assert_eq!(&buf[..n], expected, "encode_into");
    assert!(buf[n..].iter().all(|&b| b == 0xAA), "wrote past the value");
    // One byte short: an error naming the exact size. (What was written before the space ran
    // out stays in the buffer: garbage, since length prefixes are filled in last.)
    if !expected.is_empty() {
        let mut short = vec![0xAAu8; expected.len() - 1];
        let err = value.encode_into(&mut short).unwrap_err();
        assert_eq!(err.kind(), bebop_core::ErrorKind::BufferTooSmall);
        assert_eq!(err.needed(), Some(expected.len()));
    }
    // Vec output and std::io output.
    assert_eq!(value.encode_to_vec().unwrap(), expected, "encode_to_vec");
    let mut io_out = Vec::new();
    value.write_to(&mut io_out).unwrap();
    assert_eq!(io_out, expected, "write_to");
    // embedded-io writer (computes prefixes up front instead of patching them).
    let mut eio = vec![0u8; expected.len()];
    let mut eio_slice: &mut [u8] = &mut eio;
    assert_eq!(value.encode_to_io(&mut eio_slice).unwrap(), expected.len());
    assert_eq!(eio, expected, "encode_to_io");
    // The size promises of prefixed regions hold.
    let mut counter = SizeCounter::default();
    value.encode(&mut counter).unwrap();
    assert_eq!(counter.count, expected.len());
}

#[test]
fn string_hello_and_empty() {
    let hello = hex("05000000 68656c6c6f 00");
    assert_encodes("hello", &hello);
    assert_eq!(<&str>::from_bytes(&hello), Ok("hello"));
    let empty = hex("0000000000");
    assert_encodes("", &empty);
    assert_eq!(<&str>::from_bytes(&empty), Ok(""));
}

#[test]
fn int32_array() {
    let bytes = hex("03000000 01000000 02000000 03000000");
    assert_encodes(&[1i32, 2, 3][..], &bytes);
    assert_encodes(&Array::from_slice(&[1i32, 2, 3]), &bytes);
    let view = Array::<i32>::from_bytes(&bytes).unwrap();
    assert_eq!(view.iter().collect::<Vec<_>>(), [1, 2, 3]);
    assert_encodes(&view, &bytes);
    assert_eq!(Vec::<i32>::from_bytes(&bytes).unwrap(), [1, 2, 3]);
}

#[test]
fn fixed_byte_array() {
    let bytes = hex("deadbeef");
    assert_encodes(&[0xdeu8, 0xad, 0xbe, 0xef], &bytes);
    assert_eq!(
        <&[u8; 4]>::from_bytes(&bytes),
        Ok(&[0xde, 0xad, 0xbe, 0xef])
    );
    assert_eq!(<[u8; 4]>::from_bytes(&bytes), Ok([0xde, 0xad, 0xbe, 0xef]));
    let view = FixedArray::<u8, 4>::from_bytes(&bytes).unwrap();
    assert_eq!(view.to_array(), [0xde, 0xad, 0xbe, 0xef]);
}

#[test]
fn map_uint8_int32() {
    let bytes = hex("02000000 01 64000000 02 c8000000");
    let entries = [(1u8, 100i32), (2, 200)];
    assert_encodes(&Map::from_slice(&entries), &bytes);
    let view = Map::<u8, i32>::from_bytes(&bytes).unwrap();
    assert_eq!(view.iter().collect::<Vec<_>>(), entries);
    assert_encodes(&view, &bytes);
    let owned: std::collections::BTreeMap<u8, i32> = entries.into_iter().collect();
    assert_encodes(&owned, &bytes);
}

#[test]
fn struct_point() {
    let bytes = hex("0000803f 00000040");
    let p = Point { x: 1.0, y: 2.0 };
    assert_encodes(&p, &bytes);
    assert_eq!(Point::from_bytes(&bytes), Ok(p));
}

#[test]
fn message_user_request() {
    let full = UserRequest {
        user_id: Some(42),
        include_profile: Some(true),
    };
    let bytes = hex("08000000 01 2a000000 02 01 00");
    assert_encodes(&full, &bytes);
    assert_eq!(UserRequest::from_bytes(&bytes), Ok(full));

    let partial = UserRequest {
        user_id: Some(42),
        include_profile: None,
    };
    let bytes = hex("06000000 01 2a000000 00");
    assert_encodes(&partial, &bytes);
    assert_eq!(UserRequest::from_bytes(&bytes), Ok(partial));

    let bytes = hex("01000000 00");
    assert_encodes(&UserRequest::default(), &bytes);
    assert_eq!(UserRequest::from_bytes(&bytes), Ok(UserRequest::default()));
}

#[test]
fn union_shape() {
    let circle = Shape::Circle(Circle { radius: 5.0 });
    let bytes = hex("05000000 01 0000a040");
    assert_encodes(&circle, &bytes);
    assert_eq!(Shape::from_bytes(&bytes), Ok(circle));

    let rect = Shape::Rectangle(Rectangle {
        width: 3.0,
        height: 4.0,
    });
    let bytes = hex("09000000 02 00004040 00008040");
    assert_encodes(&rect, &bytes);
    assert_eq!(Shape::from_bytes(&bytes), Ok(rect));
}

#[test]
fn nested_int32_arrays() {
    let bytes = hex("02000000 02000000 01000000 02000000 01000000 03000000");
    let inner = [Array::from_slice(&[1i32, 2]), Array::from_slice(&[3])];
    assert_encodes(&Array::from_slice(&inner), &bytes);
    let view = Array::<Array<i32>>::from_bytes(&bytes).unwrap();
    let collected: Vec<Vec<i32>> = view.iter().map(|a| a.iter().collect()).collect();
    assert_eq!(collected, [vec![1, 2], vec![3]]);
    assert_eq!(view, Array::from_slice(&inner));
    assert_eq!(Vec::<Vec<i32>>::from_bytes(&bytes).unwrap(), collected);
}

#[test]
fn string_array() {
    let bytes = hex("02000000 02000000 616200 03000000 63646500");
    assert_encodes(&["ab", "cde"][..], &bytes);
    let view = Array::<&str>::from_bytes(&bytes).unwrap();
    assert_eq!(view.iter().collect::<Vec<_>>(), ["ab", "cde"]);
    assert_eq!(view.get(1), Some("cde"));
    assert_eq!(view.get(2), None);
}

#[test]
fn fixed_array_of_dynamic_arrays() {
    let bytes = hex("02000000 01000000 02000000 00000000 01000000 03000000");
    let inner = [
        Array::from_slice(&[1i32, 2]),
        Array::default(),
        Array::from_slice(&[3]),
    ];
    assert_encodes(&FixedArray::from_array(&inner), &bytes);
    assert_encodes(&inner, &bytes);
    let view = FixedArray::<Array<i32>, 3>::from_bytes(&bytes).unwrap();
    assert_eq!(view, FixedArray::from_array(&inner));
    assert_eq!(view.get(1).map(|a| a.len()), Some(0));
}

#[test]
fn uuid_and_bfloat16_array() {
    let bytes = hex("550e8400e29b41d4a716446655440000 04000000 803f 0040 4040 8040");
    let values = [1.0f32, 2.0, 3.0, 4.0].map(bf16::from_f32);
    let e = Embedding {
        id: "550e8400-e29b-41d4-a716-446655440000".parse().unwrap(),
        vector: Array::from_slice(&values),
    };
    assert_encodes(&e, &bytes);
    let view = Embedding::from_bytes(&bytes).unwrap();
    assert_eq!(view, e);
    assert_eq!(
        view.id,
        Uuid::from_array(hex("550e8400e29b41d4a716446655440000").try_into().unwrap())
    );
    let mut out = [bf16::ZERO; 4];
    assert_eq!(view.vector.copy_to_slice(&mut out), 4);
    assert_eq!(out, values);
}

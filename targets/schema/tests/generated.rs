//! The generated benchmark, golden-vector and edge-case types on the host: layouts, the
//! union branches, and the recursive message.

use bebop_core::{Array, Decode, Encode, ErrorKind, Lazy};
use target_schema::benchmark::{JsonNull, JsonValue, Order, json_value};
use target_schema::edge_cases::{Chain, Event, event};
use target_schema::spec::{Shape, UserRequest, shape};

#[test]
fn order_layout_is_fields_back_to_back() {
    let ids = [101i64, 102, 103];
    let qty = [1i32, 2, 1];
    let order = Order {
        order_id: 7,
        customer_id: 9,
        item_ids: Array::from_slice(&ids),
        quantities: Array::from_slice(&qty),
        total: 12.5,
        timestamp: 1_704_067_200_000,
    };
    let mut buf = [0u8; 128];
    let n = order.encode_into(&mut buf).unwrap();
    assert_eq!(n, 8 + 8 + 4 + 24 + 4 + 12 + 8 + 8);
    assert_eq!(&buf[..8], &7i64.to_le_bytes());
    assert_eq!(&buf[16..20], &3u32.to_le_bytes());
    assert_eq!(&buf[20..28], &101i64.to_le_bytes());
    assert_eq!(&buf[n - 8..n], &1_704_067_200_000i64.to_le_bytes());
    let back = Order::from_bytes(&buf[..n]).unwrap();
    assert_eq!(back, order);
    assert_eq!(back.item_ids.iter().sum::<i64>(), 306);
}

#[test]
fn json_value_union_branches() {
    let mut buf = [0u8; 64];
    let cases: [(JsonValue<'_>, &[u8]); 3] = [
        (JsonValue::Null(JsonNull {}), &[1, 0, 0, 0, 1]),
        (
            JsonValue::Bool(json_value::Bool { value: Some(true) }),
            &[8, 0, 0, 0, 2, 3, 0, 0, 0, 1, 1, 0],
        ),
        (
            JsonValue::String(json_value::String { value: None }),
            &[6, 0, 0, 0, 4, 1, 0, 0, 0, 0],
        ),
    ];
    for (value, bytes) in cases {
        let n = value.encode_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], bytes, "{value:?}");
        assert_eq!(JsonValue::from_bytes(bytes), Ok(value));
    }
    let err = JsonValue::from_bytes(&[1, 0, 0, 0, 7]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::InvalidDiscriminator, 4)
    );
}

#[test]
fn golden_union_and_message() {
    let mut buf = [0u8; 32];
    let n = Shape::Circle(shape::Circle { radius: 5.0 })
        .encode_into(&mut buf)
        .unwrap();
    assert_eq!(&buf[..n], &[5, 0, 0, 0, 1, 0, 0, 0xa0, 0x40]);
    let n = UserRequest {
        user_id: Some(42),
        include_profile: None,
    }
    .encode_into(&mut buf)
    .unwrap();
    assert_eq!(&buf[..n], &[6, 0, 0, 0, 1, 42, 0, 0, 0, 0]);
}

#[test]
fn forward_compatible_union_keeps_unknown_branches() {
    let unknown = [3, 0, 0, 0, 9, 0xaa, 0xbb];
    let v = Event::from_bytes(&unknown).unwrap();
    assert_eq!(
        v,
        Event::Unknown {
            discriminator: 9,
            body: &[0xaa, 0xbb]
        }
    );
    let mut buf = [0u8; 16];
    let n = v.encode_into(&mut buf).unwrap();
    assert_eq!(&buf[..n], &unknown);
    let n = Event::Ping(event::Ping { seq: 7 })
        .encode_into(&mut buf)
        .unwrap();
    assert_eq!(&buf[..n], &[5, 0, 0, 0, 1, 7, 0, 0, 0]);
}

#[test]
fn recursive_message_round_trips() {
    let last = Chain {
        value: Some(3),
        next: None,
    };
    let first = Chain {
        value: Some(1),
        next: Some(Lazy::from_ref(&last)),
    };
    let mut buf = [0u8; 32];
    let n = first.encode_into(&mut buf).unwrap();
    assert_eq!(n, first.encoded_size());
    let back = Chain::from_bytes(&buf[..n]).unwrap();
    assert_eq!(back, first);
    let next = back.next.unwrap().get();
    assert_eq!(next.value, Some(3));
}

//! Message, union, enum and limit semantics of `docs/wire-format.md` and `docs/decisions.md`,
//! through the hand-written types.

use bebop_conformance::{Chain, Empty, Event, Level, Log, Shape, TreeNode, UserRequest};
use bebop_core::{Array, Decode, ErrorKind, FixedArray, Lazy, Limits, Map};
use bebop_runtime::EncodeExt;

#[test]
fn unknown_tag_stops_the_message_and_decoding_continues_after_it() {
    // UserRequest{user_id: 42}, then an unknown tag 9 with bytes the decoder cannot parse,
    // then include_profile after it (never reached), all inside one declared length; an array
    // of two of them shows the decoder resynchronises on the length.
    let msg = [
        13, 0, 0, 0, 1, 42, 0, 0, 0, 9, 0xff, 0xff, 0xff, 2, 1, 0xee, 0,
    ];
    let mut bytes = vec![2, 0, 0, 0];
    bytes.extend_from_slice(&msg);
    bytes.extend_from_slice(&msg);
    let arr = Array::<UserRequest>::from_bytes(&bytes).unwrap();
    let all: Vec<_> = arr.iter().collect();
    assert_eq!(
        all,
        [UserRequest {
            user_id: Some(42),
            include_profile: None
        }; 2]
    );
}

#[test]
fn duplicate_tags_keep_the_last_value() {
    let bytes = [11, 0, 0, 0, 1, 1, 0, 0, 0, 1, 2, 0, 0, 0, 0];
    assert_eq!(
        UserRequest::from_bytes(&bytes),
        Ok(UserRequest {
            user_id: Some(2),
            include_profile: None
        })
    );
    // Out-of-order tags are fine too.
    let bytes = [8, 0, 0, 0, 2, 1, 1, 7, 0, 0, 0, 0];
    assert_eq!(
        UserRequest::from_bytes(&bytes),
        Ok(UserRequest {
            user_id: Some(7),
            include_profile: Some(true)
        })
    );
}

#[test]
fn message_errors() {
    // Body shorter than a field: the error points into the body.
    let err = UserRequest::from_bytes(&[3, 0, 0, 0, 1, 42, 0]).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::UnexpectedEnd, 5));
    // Missing end marker: the declared length ends the message (docs/decisions.md D15).
    let ok = UserRequest::from_bytes(&[5, 0, 0, 0, 1, 42, 0, 0, 0]).unwrap();
    assert_eq!((ok.user_id, ok.include_profile), (Some(42), None));
    // Length past the end of the input.
    let err = UserRequest::from_bytes(&[0xfe, 0xff, 0xff, 0xff, 0]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::LengthOutOfBounds, 0)
    );
    // Zero length: an empty message, for a type with fields as for one without.
    let ok = UserRequest::from_bytes(&[0, 0, 0, 0]).unwrap();
    assert_eq!((ok.user_id, ok.include_profile), (None, None));
    // Trailing bytes after the message.
    let err = UserRequest::from_bytes(&[1, 0, 0, 0, 0, 0]).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::TrailingBytes, 5));
}

#[test]
fn union_discriminators() {
    // Unknown discriminator on a plain union: an error at the discriminator.
    let err = Shape::from_bytes(&[5, 0, 0, 0, 7, 0, 0, 0, 0]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset(), err.detail()),
        (ErrorKind::InvalidDiscriminator, 4, 7)
    );
    // A longer body than the branch needs is skipped.
    let bytes = [9, 0, 0, 0, 1, 0, 0, 0xa0, 0x40, 1, 2, 3, 4];
    assert!(matches!(Shape::from_bytes(&bytes), Ok(Shape::Circle(_))));
    // Forward compatible: kept with its raw bytes, re-encoded unchanged.
    let bytes = [4, 0, 0, 0, 9, 0xaa, 0xbb, 0xcc];
    let ev = Event::from_bytes(&bytes).unwrap();
    assert_eq!(
        ev,
        Event::Unknown {
            discriminator: 9,
            body: &[0xaa, 0xbb, 0xcc]
        }
    );
    assert_eq!(ev.encode_to_vec().unwrap(), bytes);
    // Inline message branch: the union length wraps the message's own length.
    let text = Event::Text { body: Some("hi") };
    let bytes = text.encode_to_vec().unwrap();
    assert_eq!(
        bytes,
        [14, 0, 0, 0, 2, 9, 0, 0, 0, 1, 2, 0, 0, 0, b'h', b'i', 0, 0]
    );
    assert_eq!(Event::from_bytes(&bytes), Ok(text));
}

#[test]
fn inline_message_branch_has_its_own_length() {
    // docs/decisions.md D5: `06000000 02 01000000 00` is an empty inline-message branch.
    let bytes = [6, 0, 0, 0, 2, 1, 0, 0, 0, 0];
    assert_eq!(Event::from_bytes(&bytes), Ok(Event::Text { body: None }));
    assert_eq!(Event::Text { body: None }.encode_to_vec().unwrap(), bytes);
}

#[test]
fn enums_reject_undeclared_values() {
    assert_eq!(Level::from_bytes(&[3]), Ok(Level::Error));
    let err = Level::from_bytes(&[4]).unwrap_err();
    assert_eq!((err.kind(), err.detail()), (ErrorKind::InvalidEnumValue, 4));
    // Inside an array the offset is that of the bad element.
    let err = Array::<Level>::from_bytes(&[3, 0, 0, 0, 0, 1, 9]).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::InvalidEnumValue, 6));
}

#[test]
fn arrays_of_empty_structs_are_charged_to_the_budget() {
    // Four billion empty structs in four bytes.
    let bytes = [0xff, 0xff, 0xff, 0xff];
    let err = Array::<Empty>::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BudgetExhausted);
    let err = Vec::<Empty>::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BudgetExhausted);
    // Within the budget they decode, in O(1).
    let ok = Array::<Empty>::from_bytes(&[0, 0, 1, 0]).unwrap();
    assert_eq!(ok.len(), 65536);
    // The budget is shared by all arrays of one decode: 3 arrays of 2^19 exceed 2^20.
    let mut bytes = vec![3, 0, 0, 0];
    for _ in 0..3 {
        bytes.extend_from_slice(&(1u32 << 19).to_le_bytes());
    }
    let err = Array::<Array<Empty>>::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BudgetExhausted);
    let roomy = Limits {
        max_empty_elements: 3 << 19,
        ..Limits::DEFAULT
    };
    assert!(Array::<Array<Empty>>::from_bytes_with_limits(&bytes, roomy).is_ok());
    // Fixed arrays of empty structs count too.
    let err = FixedArray::<Empty, 2>::from_bytes_with_limits(
        &[],
        Limits {
            max_empty_elements: 1,
            ..Limits::DEFAULT
        },
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BudgetExhausted);
}

#[test]
fn arrays_claiming_more_than_the_input_fail_at_once() {
    // u32::MAX strings in 9 bytes: rejected at the count, before reading any element.
    let bytes = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0];
    let err = Array::<&str>::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::LengthOutOfBounds, 0)
    );
    let err = Map::<u8, u8>::from_bytes(&[0xff, 0xff, 0xff, 0x7f, 1, 2]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LengthOutOfBounds);
    let err = Array::<u64>::from_bytes(&[2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LengthOutOfBounds);
}

fn deep_tree(depth: usize) -> Vec<u8> {
    // Level k from the inside is `len | 01 value | 02 count=1 | <level k-1> | 00`; the
    // innermost node is `len | 01 value | 00`. Lengths first, then the bytes in one pass.
    let innermost = TreeNode {
        value: Some(1),
        children: None,
    }
    .encode_to_vec()
    .unwrap();
    let mut lengths = Vec::with_capacity(depth);
    let mut inner_total = innermost.len();
    for _ in 1..depth {
        let body = 5 + 5 + inner_total + 1;
        lengths.push(body as u32);
        inner_total = 4 + body;
    }
    let mut out = Vec::with_capacity(inner_total);
    for len in lengths.iter().rev() {
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&[1, 1, 0, 0, 0, 2, 1, 0, 0, 0]);
    }
    out.extend_from_slice(&innermost);
    out.resize(out.len() + lengths.len(), 0);
    out
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // A message holding an array of messages uses two levels per tree level.
    let ok = deep_tree(32);
    let tree = TreeNode::from_bytes(&ok).unwrap();
    assert_eq!(tree.count_nodes(), 32);
    assert_eq!(tree.sum_values(), 32);
    let too_deep = deep_tree(33);
    let err = TreeNode::from_bytes(&too_deep).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooDeep);
    // 100,000 levels: still a clean error.
    let very_deep = deep_tree(100_000);
    let err = TreeNode::from_bytes(&very_deep).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooDeep);
    // And a caller may allow more.
    let limits = Limits {
        max_depth: 80,
        ..Limits::DEFAULT
    };
    assert!(TreeNode::from_bytes_with_limits(&deep_tree(40), limits).is_ok());
}

#[test]
fn self_referential_messages_via_lazy() {
    let c = Chain {
        value: Some(3),
        next: None,
    };
    let c2 = Chain {
        value: Some(2),
        next: Some(Lazy::from_ref(&c)),
    };
    let c1 = Chain {
        value: Some(1),
        next: Some(Lazy::from_ref(&c2)),
    };
    let bytes = c1.encode_to_vec().unwrap();
    let view = Chain::from_bytes(&bytes).unwrap();
    assert_eq!(view, c1);
    assert_eq!(view.link_count(), 3);
    let second = view.next.unwrap().get();
    assert_eq!(second.value, Some(2));
    // Re-encoding a decoded view copies its bytes.
    assert_eq!(view.encode_to_vec().unwrap(), bytes);
}

#[test]
fn mixed_struct_round_trip() {
    let tags = [("host", "a"), ("zone", "eu")];
    let lines = ["one", "", "three"];
    let rows = [
        Array::from_slice(&[1i32]),
        Array::default(),
        Array::from_slice(&[2, 3]),
    ];
    let log = Log {
        level: Level::Warn,
        tags: Map::from_slice(&tags),
        lines: Array::from_slice(&lines),
        grid: FixedArray::from_array(&rows),
    };
    let bytes = log.encode_to_vec().unwrap();
    let view = Log::from_bytes(&bytes).unwrap();
    assert_eq!(view, log);
    assert_eq!(view.tags.get("zone"), Some("eu"));
    assert_eq!(view.lines.get(2), Some("three"));
    assert_eq!(view.grid.get(2).unwrap().get(1), Some(3));
    assert_eq!(format!("{:?}", view.tags), r#"{"host": "a", "zone": "eu"}"#);
}

#[test]
fn scalar_array_views_borrow_and_copy() {
    // Unaligned input: start at an odd offset.
    let mut bytes = vec![0xEE];
    bytes.extend_from_slice(&[3, 0, 0, 0]);
    for v in [1.5f32, -2.0, 1e9] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let view = Array::<f32>::from_bytes(&bytes[1..]).unwrap();
    assert!(std::ptr::eq(
        view.wire_bytes().unwrap().as_ptr(),
        bytes[5..].as_ptr()
    ));
    assert_eq!(view.iter().collect::<Vec<_>>(), [1.5, -2.0, 1e9]);
    assert_eq!(view.get(2), Some(1e9));
    assert_eq!(view.iter().nth(1), Some(-2.0));
    assert_eq!(view.last(), Some(1e9));
    let mut out = [0f32; 2];
    assert_eq!(view.copy_to_slice(&mut out), 2);
    assert_eq!(out, [1.5, -2.0]);
    // heapless copies with a capacity check.
    let hv: heapless::Vec<f32, 3> = view.to_heapless().unwrap();
    assert_eq!(hv.as_slice(), &[1.5, -2.0, 1e9]);
    assert_eq!(
        view.to_heapless::<2>().unwrap_err().kind(),
        ErrorKind::CapacityExceeded
    );
}

#[test]
fn heapless_owned_decoding() {
    let bytes = ["ab", "cde"][..].encode_to_vec().unwrap();
    let v = heapless::Vec::<heapless::String<4>, 2>::from_bytes(&bytes).unwrap();
    assert_eq!(v[1], "cde");
    let err = heapless::Vec::<heapless::String<2>, 2>::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::CapacityExceeded, 11)
    );
    let err = heapless::Vec::<heapless::String<4>, 1>::from_bytes(&bytes).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::CapacityExceeded, 0));
    assert_eq!(v.encode_to_vec().unwrap(), bytes);
}

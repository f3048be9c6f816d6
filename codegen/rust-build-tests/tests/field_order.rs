//! A generated message view validates its fields two ways: `decode` reads them in a loop,
//! and `check` (what an array of messages runs on each element) takes them in declaration
//! order first and leaves the rest to a loop (docs/decisions.md D43). Both must accept the
//! same bytes and read the same values, whatever order the fields come in, repeated or
//! followed by unknown tags, with or without the end marker.
//!
//! Each case builds messages from random fields (declared and unknown tags, valid and
//! invalid values), puts them in an array, and compares `Array::from_bytes` (which checks
//! every element) with decoding each message on its own (which does not check).

#![allow(clippy::unwrap_used)]

use bebop_runtime::{Array, Decode, Error, ErrorKind};
use bebop_rust_build_tests::benchmark as bm;
use bebop_rust_build_tests::spec;
use proptest::prelude::*;

/// One field of a message body, as the bytes after its tag.
#[derive(Clone, Debug)]
struct Field {
    tag: u8,
    value: Vec<u8>,
}

/// A message: its fields, and whether the body ends with the end marker 0.
#[derive(Clone, Debug)]
struct Message {
    fields: Vec<Field>,
    end_marker: bool,
}

impl Message {
    /// The length-prefixed encoding.
    fn bytes(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for f in &self.fields {
            body.push(f.tag);
            body.extend_from_slice(&f.value);
        }
        if self.end_marker {
            body.push(0);
        }
        let mut out = (body.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&body);
        out
    }
}

fn u32_prefixed(count: usize, parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out = (count as u32).to_le_bytes().to_vec();
    for p in parts {
        out.extend_from_slice(p);
    }
    out
}

/// `UserRequest { user_id(1): int32; include_profile(2): bool; }` (any non-zero byte is
/// `true`): tags 3 and 9 are unknown, and an `int32` may be cut short.
fn user_request_field() -> impl Strategy<Value = Field> {
    prop_oneof![
        4 => any::<i32>().prop_map(|v| Field { tag: 1, value: v.to_le_bytes().to_vec() }),
        4 => (0u8..3).prop_map(|b| Field { tag: 2, value: vec![b] }),
        1 => prop::collection::vec(any::<u8>(), 0..6).prop_map(|value| Field { tag: 3, value }),
        1 => prop::collection::vec(any::<u8>(), 0..6).prop_map(|value| Field { tag: 9, value }),
        1 => Just(Field { tag: 1, value: vec![7, 7] }),
    ]
}

/// `TreeNode { value(1): int32; children(2): TreeNode[]; }`, children of depth 1 at most.
fn tree_node_field(depth: u32) -> BoxedStrategy<Field> {
    let value = any::<i32>().prop_map(|v| Field {
        tag: 1,
        value: v.to_le_bytes().to_vec(),
    });
    if depth == 0 {
        return value.boxed();
    }
    let children = prop::collection::vec(tree_node(depth - 1), 0..3).prop_map(|kids| {
        let parts: Vec<Vec<u8>> = kids.iter().map(Message::bytes).collect();
        Field {
            tag: 2,
            value: u32_prefixed(parts.len(), &parts),
        }
    });
    prop_oneof![
        4 => value,
        3 => children,
        1 => prop::collection::vec(any::<u8>(), 0..6).prop_map(|value| Field { tag: 5, value }),
    ]
    .boxed()
}

fn tree_node(depth: u32) -> BoxedStrategy<Message> {
    (
        prop::collection::vec(tree_node_field(depth), 0..5),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(fields, end_marker)| Message { fields, end_marker })
        .boxed()
}

/// `Document { title(1): string; body(2): string; metadata(3): map[string, JsonValue]; }`
/// with strings that may lack their NUL or hold invalid UTF-8, and empty maps.
fn document_field() -> impl Strategy<Value = Field> {
    let text = (
        prop::collection::vec(prop_oneof![Just(b'a'), Just(0xE2), Just(0x80)], 0..6),
        any::<bool>(),
    )
        .prop_map(|(text, nul)| {
            let mut value = (text.len() as u32).to_le_bytes().to_vec();
            value.extend_from_slice(&text);
            value.push(if nul { 0 } else { 1 });
            value
        });
    prop_oneof![
        3 => text.clone().prop_map(|value| Field { tag: 1, value }),
        3 => text.prop_map(|value| Field { tag: 2, value }),
        2 => Just(Field { tag: 3, value: vec![0, 0, 0, 0] }),
        1 => Just(Field { tag: 4, value: vec![] }),
    ]
}

fn messages(field: impl Strategy<Value = Field>) -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(
        (
            prop::collection::vec(field, 0..6),
            prop::bool::weighted(0.8),
        )
            .prop_map(|(fields, end_marker)| Message { fields, end_marker }),
        0..4,
    )
}

/// What a run of views yields, for comparison: their debug form, or the error's kind.
fn outcome<T: core::fmt::Debug>(r: Result<Vec<T>, Error>) -> Result<Vec<String>, ErrorKind> {
    r.map(|views| views.iter().map(|v| format!("{v:?}")).collect())
        .map_err(|e| e.kind())
}

/// Checks that the array (checked element by element) and the messages decoded one by one
/// agree: both fail, or both yield the same views.
fn agree<'a, T>(array: &'a [u8], singles: &'a [Vec<u8>]) -> Result<(), TestCaseError>
where
    T: Decode<'a> + Clone + core::fmt::Debug + 'a,
{
    let checked = Array::<T>::from_bytes(array).map(|a| a.iter().collect::<Vec<_>>());
    let decoded: Result<Vec<T>, Error> = singles.iter().map(|m| T::from_bytes(m)).collect();
    let (checked, decoded) = (outcome(checked), outcome(decoded));
    prop_assert_eq!(checked, decoded);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn user_request_check_agrees_with_decode(msgs in messages(user_request_field())) {
        let singles: Vec<Vec<u8>> = msgs.iter().map(Message::bytes).collect();
        let array = u32_prefixed(singles.len(), &singles);
        agree::<spec::UserRequest>(&array, &singles)?;
    }

    #[test]
    fn tree_node_check_agrees_with_decode(msgs in prop::collection::vec(tree_node(2), 0..4)) {
        let singles: Vec<Vec<u8>> = msgs.iter().map(Message::bytes).collect();
        let array = u32_prefixed(singles.len(), &singles);
        agree::<bm::TreeNode>(&array, &singles)?;
    }

    #[test]
    fn document_check_agrees_with_decode(msgs in messages(document_field())) {
        let singles: Vec<Vec<u8>> = msgs.iter().map(Message::bytes).collect();
        let array = u32_prefixed(singles.len(), &singles);
        agree::<bm::Document>(&array, &singles)?;
    }
}

/// The cases the property test draws only by chance, spelled out: fields in declaration
/// order, reversed, repeated (the last wins), after an unknown tag (ignored, as is whatever
/// follows it, even a value cut short), and a value cut short by the message's end.
#[test]
fn user_request_orders() {
    let id = |v: i32| Field {
        tag: 1,
        value: v.to_le_bytes().to_vec(),
    };
    let flag = |b: u8| Field {
        tag: 2,
        value: vec![b],
    };
    let unknown = Field {
        tag: 7,
        value: vec![],
    };
    let short = Field {
        tag: 1,
        value: vec![1, 2],
    };
    type Want = Option<(Option<i32>, Option<bool>)>;
    let cases: Vec<(Vec<Field>, bool, Want)> = vec![
        (vec![id(5), flag(1)], true, Some((Some(5), Some(true)))),
        (vec![flag(0), id(6)], true, Some((Some(6), Some(false)))),
        (
            vec![id(1), flag(1), id(2)],
            true,
            Some((Some(2), Some(true))),
        ),
        (
            vec![flag(1), flag(0), flag(9)],
            true,
            Some((None, Some(true))),
        ),
        (
            vec![id(3), unknown.clone(), flag(1)],
            true,
            Some((Some(3), None)),
        ),
        (vec![unknown, short.clone()], true, Some((None, None))),
        (vec![id(5), flag(0)], false, Some((Some(5), Some(false)))),
        (vec![], false, Some((None, None))),
        (vec![flag(1), short], false, None),
    ];
    for (fields, end_marker, want) in cases {
        let msg = Message { fields, end_marker }.bytes();
        let array = u32_prefixed(1, std::slice::from_ref(&msg));
        let checked = Array::<spec::UserRequest>::from_bytes(&array).map(|a| {
            a.iter()
                .map(|v| (v.user_id, v.include_profile))
                .collect::<Vec<_>>()
        });
        let decoded = spec::UserRequest::from_bytes(&msg).map(|v| (v.user_id, v.include_profile));
        match want {
            Some(want) => {
                assert_eq!(checked.unwrap(), vec![want], "{msg:?}");
                assert_eq!(decoded.unwrap(), want, "{msg:?}");
            }
            None => {
                let (c, d) = (checked.unwrap_err(), decoded.unwrap_err());
                assert_eq!(c.kind(), d.kind(), "{msg:?}");
            }
        }
    }
}

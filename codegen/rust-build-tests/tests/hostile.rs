//! Hostile input into every type generated from `benches/workloads/schemas/workloads.bop`:
//! random bytes, valid encodings with bytes flipped, inserted or removed, and truncated encodings
//! never make `from_bytes` panic, for the view and for the owned type. Moreover the two
//! decoders agree (both accept or both reject, with the same error), and whatever is
//! accepted can be read in full (`to_owned_value`), re-encodes, and decodes again to the
//! same value.

#![allow(clippy::unwrap_used)]

use bebop_runtime::{Decode, ErrorKind, Limits};
use bebop_rust_build_tests::benchmark::{self as bm, owned};
use proptest::prelude::*;

/// Feeds `bytes` to the view type `$view` and the owned type `$owned`, checking the
/// properties of the module docs.
macro_rules! hostile {
    ($bytes:expr, $view:ty, $owned:ty) => {{
        let bytes: &[u8] = $bytes;
        let view = <$view>::from_bytes(bytes);
        let direct = <$owned>::from_bytes(bytes);
        match (view, direct) {
            (Ok(view), Ok(direct)) => {
                let owned: $owned = view.to_owned_value();
                if owned == owned {
                    assert_eq!(owned, direct, "view and owned decoders disagree");
                }
                let again = bebop_runtime::encode_to_vec(&view).unwrap();
                let reread = <$owned>::from_bytes(&again).unwrap();
                if owned == owned {
                    assert_eq!(reread, owned, "re-encoded view decodes differently");
                }
                true
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "view and owned decoders fail differently");
                assert!(a.offset() <= bytes.len(), "error offset past the input");
                false
            }
            (a, b) => panic!(
                "view and owned decoders disagree: view {:?}, owned {:?}",
                a.map(drop),
                b.map(drop)
            ),
        }
    }};
}

/// Same for a type whose owned form is the view type.
macro_rules! hostile_plain {
    ($bytes:expr, $ty:ty) => {{
        let bytes: &[u8] = $bytes;
        match <$ty>::from_bytes(bytes) {
            Ok(v) => {
                let again = bebop_runtime::encode_to_vec(&v).unwrap();
                let reread = <$ty>::from_bytes(&again).unwrap();
                if v == v {
                    assert_eq!(reread, v, "re-encoded value decodes differently");
                }
                true
            }
            Err(e) => {
                assert!(e.offset() <= bytes.len());
                false
            }
        }
    }};
}

/// Runs `bytes` through every type of the schema; returns how many accepted it.
fn every_type(bytes: &[u8]) -> usize {
    let accepted = [
        hostile!(bytes, bm::Person, owned::Person),
        hostile!(bytes, bm::Order, owned::Order),
        hostile!(bytes, bm::Event, owned::Event),
        hostile!(bytes, bm::TreeNode, owned::TreeNode),
        hostile!(bytes, bm::JsonValue, owned::JsonValue),
        hostile!(bytes, bm::json_value::String, owned::json_value::String),
        hostile!(bytes, bm::json_value::List, owned::json_value::List),
        hostile!(bytes, bm::json_value::Object, owned::json_value::Object),
        hostile!(bytes, bm::Document, owned::Document),
        hostile!(bytes, bm::ChunkedText, owned::ChunkedText),
        hostile!(bytes, bm::EmbeddingBF16, owned::EmbeddingBF16),
        hostile!(bytes, bm::EmbeddingF32, owned::EmbeddingF32),
        hostile!(bytes, bm::EmbeddingBatch, owned::EmbeddingBatch),
        hostile!(bytes, bm::TokenLogprob, owned::TokenLogprob),
        hostile!(bytes, bm::TokenAlternatives, owned::TokenAlternatives),
        hostile!(bytes, bm::LLMStreamChunk, owned::LLMStreamChunk),
        hostile!(bytes, bm::TensorShard, owned::TensorShard),
        hostile!(bytes, bm::InferenceResponse, owned::InferenceResponse),
        hostile_plain!(bytes, bm::JsonNull),
        hostile_plain!(bytes, bm::json_value::Bool),
        hostile_plain!(bytes, bm::json_value::Number),
        hostile_plain!(bytes, bm::ChunkKind),
        hostile_plain!(bytes, bm::TextSpan),
        hostile_plain!(bytes, bm::InferenceTiming),
    ];
    accepted.iter().filter(|&&a| a).count()
}

fn u32le(n: u32) -> [u8; 4] {
    n.to_le_bytes()
}

/// Valid encodings of several types: seeds for the mutations.
fn seeds() -> Vec<Vec<u8>> {
    use owned::json_value as j;
    let leaf = |v| owned::TreeNode {
        value: Some(v),
        children: None,
    };
    let list = owned::JsonValue::List(j::List {
        values: Some(vec![
            owned::JsonValue::Bool(j::Bool { value: Some(true) }),
            owned::JsonValue::String(j::String {
                value: Some("hi".into()),
            }),
            owned::JsonValue::Null(bm::JsonNull {}),
            owned::JsonValue::Object(j::Object {
                fields: Some(
                    [(
                        "k".to_string(),
                        owned::JsonValue::Number(j::Number { value: Some(1.5) }),
                    )]
                    .into(),
                ),
            }),
        ]),
    });
    vec![
        owned::Person {
            id: 7,
            name: "John".into(),
            email: "j@x.co".into(),
            age: 30,
        }
        .encode_to_vec()
        .unwrap(),
        owned::Order {
            order_id: 1,
            customer_id: 2,
            item_ids: vec![3, 4],
            quantities: vec![5],
            total: 6.5,
            timestamp: 8,
        }
        .encode_to_vec()
        .unwrap(),
        owned::TreeNode {
            value: Some(1),
            children: Some(vec![
                leaf(2),
                owned::TreeNode {
                    value: None,
                    children: Some(vec![leaf(3)]),
                },
            ]),
        }
        .encode_to_vec()
        .unwrap(),
        list.encode_to_vec().unwrap(),
        owned::Document {
            title: Some("t".into()),
            body: None,
            metadata: Some([("m".to_string(), list)].into()),
        }
        .encode_to_vec()
        .unwrap(),
        owned::ChunkedText {
            source: "abc".into(),
            spans: vec![bm::TextSpan {
                start: 0,
                len: 3,
                kind: bm::ChunkKind::Heading,
            }],
        }
        .encode_to_vec()
        .unwrap(),
        owned::LLMStreamChunk {
            chunk_id: 1,
            tokens: vec!["a".into(), "bc".into()],
            logprobs: vec![owned::TokenAlternatives {
                top_tokens: vec![owned::TokenLogprob {
                    token: "a".into(),
                    token_id: 9,
                    logprob: -0.5,
                }],
            }],
            finish_reason: "stop".into(),
        }
        .encode_to_vec()
        .unwrap(),
        owned::InferenceResponse {
            request_id: bebop_runtime::Uuid::NIL,
            embeddings: vec![owned::EmbeddingBF16 {
                id: bebop_runtime::Uuid::NIL,
                vector: vec![bebop_runtime::bf16::ONE; 3],
            }],
            timing: bm::InferenceTiming {
                queue_time: bebop_runtime::Duration::from_millis(2),
                inference_time: bebop_runtime::Duration::from_millis(-3),
                tokens_per_second: 1.0,
            },
        }
        .encode_to_vec()
        .unwrap(),
    ]
}

/// A mutation of a valid encoding.
#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the byte at (index mod len).
    Set(usize, u8),
    /// Insert a byte at (index mod len + 1).
    Insert(usize, u8),
    /// Remove the byte at (index mod len).
    Remove(usize),
    /// Overwrite four bytes with a little-endian u32 (a length or count).
    Length(usize, u32),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
        (
            any::<usize>(),
            prop_oneof![
                Just(0u32),
                Just(1),
                Just(u32::MAX),
                Just(0x8000_0000),
                0u32..64
            ]
        )
            .prop_map(|(i, n)| Mutation::Length(i, n)),
    ]
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match *m {
        Mutation::Set(i, b) => bytes[i % len] = b,
        Mutation::Insert(i, b) => bytes.insert(i % (len + 1), b),
        Mutation::Remove(i) => {
            bytes.remove(i % len);
        }
        Mutation::Length(i, n) => {
            let at = i % len;
            for (k, b) in u32le(n).into_iter().enumerate() {
                if let Some(slot) = bytes.get_mut(at + k) {
                    *slot = b;
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        every_type(&bytes);
    }

    #[test]
    fn mutated_encodings_never_panic(
        seed in 0usize..8,
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut bytes = seeds()[seed % 8].clone();
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        every_type(&bytes);
    }
}

/// Every valid seed is accepted by its own type, and every strict prefix of it by none of
/// the types that need the whole value (each prefix is still fed to every type).
#[test]
fn truncations_never_panic() {
    let seeds = seeds();
    assert!(bm::Person::from_bytes(&seeds[0]).is_ok());
    assert!(bm::Order::from_bytes(&seeds[1]).is_ok());
    assert!(bm::TreeNode::from_bytes(&seeds[2]).is_ok());
    assert!(bm::JsonValue::from_bytes(&seeds[3]).is_ok());
    assert!(bm::Document::from_bytes(&seeds[4]).is_ok());
    assert!(bm::ChunkedText::from_bytes(&seeds[5]).is_ok());
    assert!(bm::LLMStreamChunk::from_bytes(&seeds[6]).is_ok());
    assert!(bm::InferenceResponse::from_bytes(&seeds[7]).is_ok());
    for seed in &seeds {
        assert!(every_type(seed) >= 1);
        for cut in 0..seed.len() {
            every_type(&seed[..cut]);
        }
    }
    for cut in 0..seeds[0].len() {
        let err = bm::Person::from_bytes(&seeds[0][..cut]).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::UnexpectedEnd | ErrorKind::LengthOutOfBounds
            ),
            "{err:?}"
        );
    }
}

/// Nesting far past the depth limit fails with `TooDeep` (no stack overflow) in both
/// recursive types, for views and owned types alike.
#[test]
fn deep_nesting_is_refused() {
    const LEVELS: usize = 5_000;
    // TreeNode { children: [TreeNode { children: [ ... ] }] }: each level is a message
    // (len, tag 2, count 1, child..., 0).
    let mut tree = vec![0u8; 0];
    let mut inner = owned::TreeNode::default().encode_to_vec().unwrap();
    for _ in 0..LEVELS {
        tree.clear();
        tree.extend_from_slice(&u32le(inner.len() as u32 + 6));
        tree.push(2);
        tree.extend_from_slice(&u32le(1));
        tree.extend_from_slice(&inner);
        tree.push(0);
        std::mem::swap(&mut tree, &mut inner);
    }
    let err = bm::TreeNode::from_bytes(&inner).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooDeep);
    assert_eq!(
        owned::TreeNode::from_bytes(&inner).unwrap_err().kind(),
        ErrorKind::TooDeep
    );

    // JsonValue::List([JsonValue::List([...])]): union(len, 5, message(len, tag 1, count 1,
    // value..., 0)).
    let mut json = owned::JsonValue::Null(bm::JsonNull {})
        .encode_to_vec()
        .unwrap();
    for _ in 0..LEVELS {
        let mut message = Vec::with_capacity(json.len() + 16);
        message.extend_from_slice(&u32le(json.len() as u32 + 6));
        message.push(1);
        message.extend_from_slice(&u32le(1));
        message.extend_from_slice(&json);
        message.push(0);
        json.clear();
        json.extend_from_slice(&u32le(message.len() as u32 + 1));
        json.push(5);
        json.extend_from_slice(&message);
    }
    assert_eq!(
        bm::JsonValue::from_bytes(&json).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    assert_eq!(
        owned::JsonValue::from_bytes(&json).unwrap_err().kind(),
        ErrorKind::TooDeep
    );

    // Under the limit, the same shapes decode and convert.
    let limits = Limits {
        max_depth: 1000,
        ..Limits::DEFAULT
    };
    let mut shallow = owned::TreeNode::default().encode_to_vec().unwrap();
    for _ in 0..200 {
        let mut next = u32le(shallow.len() as u32 + 6).to_vec();
        next.push(2);
        next.extend_from_slice(&u32le(1));
        next.extend_from_slice(&shallow);
        next.push(0);
        shallow = next;
    }
    let view = bm::TreeNode::from_bytes_with_limits(&shallow, limits).unwrap();
    let owned = view.to_owned_value();
    assert_eq!(owned.encode_to_vec().unwrap(), shallow);
    assert_eq!(
        bm::TreeNode::from_bytes(&shallow).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
}

/// A struct that holds an array of itself (its element check is inlined into its own
/// decoding, docs/decisions.md D40): outlines nested within the limit round-trip through
/// view and owned forms; nested far past it, both fail with `TooDeep` and the stack holds.
#[test]
fn a_struct_holding_an_array_of_itself_nests_within_the_limits() {
    use bebop_rust_build_tests::recursion::{Outline, owned as rec};
    // One outline per level: title "t", one section (the next level), innermost none.
    let nest = |levels: usize| -> Vec<u8> {
        let mut bytes = rec::Outline {
            title: "leaf".into(),
            sections: Vec::new(),
        }
        .encode_to_vec()
        .unwrap();
        for _ in 0..levels {
            let mut next = u32le(1).to_vec();
            next.extend_from_slice(b"t\0");
            next.extend_from_slice(&u32le(1));
            next.extend_from_slice(&bytes);
            bytes = next;
        }
        bytes
    };
    // An outline of 30 levels: the array and the struct inside it are one level each.
    let bytes = nest(30);
    let view = Outline::from_bytes(&bytes).unwrap();
    let mut depth = 0;
    let mut at = view;
    while let Some(inner) = at.sections.iter().next() {
        assert_eq!(at.title, "t");
        depth += 1;
        at = inner;
    }
    assert_eq!((depth, at.title), (30, "leaf"));
    let owned = rec::Outline::from_bytes(&bytes).unwrap();
    assert_eq!(owned.encode_to_vec().unwrap(), bytes);
    assert_eq!(view.to_owned_value(), owned);
    // Nested 64 deep: past the default limit of 64 levels, not past a higher one.
    let deep = nest(64);
    assert_eq!(
        Outline::from_bytes(&deep).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    assert_eq!(
        rec::Outline::from_bytes(&deep).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    let limits = Limits {
        max_depth: 200,
        ..Limits::DEFAULT
    };
    assert!(Outline::from_bytes_with_limits(&deep, limits).is_ok());
    // Far past any limit: refused, not a stack overflow.
    let hostile = nest(20_000);
    assert_eq!(
        Outline::from_bytes(&hostile).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    assert_eq!(
        rec::Outline::from_bytes(&hostile).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
}

/// Every single-byte change of every seed, at every position: some are accepted (so the
/// checks on accepted input run) and some rejected, and none panics.
#[test]
fn every_single_byte_change_of_the_seeds() {
    let (mut accepted, mut tried) = (0, 0);
    for seed in seeds() {
        for at in 0..seed.len() {
            for value in [0u8, 1, 2, 0x7F, 0xFF, seed[at] ^ 1, seed[at] ^ 0x80] {
                let mut bytes = seed.clone();
                bytes[at] = value;
                accepted += every_type(&bytes);
                tried += 1;
            }
        }
    }
    assert!(accepted > 0, "no mutation was accepted by any type");
    assert!(
        accepted < tried * 24,
        "every mutation was accepted by every type"
    );
}

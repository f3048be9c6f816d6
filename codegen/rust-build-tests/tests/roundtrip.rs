//! Property tests of the types generated from `benches/workloads/schemas/workloads.bop` (and
//! of the struct of `schemas/recursion.bop` that holds an array of itself): for random owned
//! values of every struct, message and union of the schema,
//!
//! - `encoded_size` is the length `encode_to_vec` writes;
//! - the bytes decode to a view whose `to_owned_value` equals the original, and to an equal
//!   owned value directly;
//! - the view re-encodes to the same bytes (and reports the same size);
//! - where the owned type lends a view (`as_view`), that view encodes to the same bytes.
//!
//! Floats are drawn from all bit patterns, NaNs included: values holding a NaN are not
//! equal to themselves, so for them only the byte-level properties are checked.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use bebop_runtime::{Decode, Duration, Encode, EncodeExt, Uuid, bf16};
use bebop_rust_build_tests::benchmark::{self as bm, owned};
use proptest::prelude::*;

/// Checks the round-trip properties of `$value` (an owned value) through the view type
/// `$view`; with `as_view`, also the owned type's borrowed view.
macro_rules! round_trip {
    ($value:expr, $view:ty) => {{
        let value = &$value;
        let bytes = round_trip_common!(value, $view);
        bytes
    }};
    ($value:expr, $view:ty, as_view) => {{
        let value = &$value;
        let bytes = round_trip_common!(value, $view);
        let lent = value.as_view();
        prop_assert_eq!(lent.encoded_size(), bytes.len());
        prop_assert_eq!(lent.encode_to_vec().unwrap(), bytes.clone());
        bytes
    }};
}

macro_rules! round_trip_common {
    ($value:expr, $view:ty) => {{
        let value = $value;
        let bytes = value.encode_to_vec().unwrap();
        prop_assert_eq!(value.encoded_size(), bytes.len(), "encoded_size");
        let view = <$view>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.encoded_size(), bytes.len(), "view encoded_size");
        prop_assert_eq!(
            view.encode_to_vec().unwrap(),
            bytes.clone(),
            "view re-encode"
        );
        let back = view.to_owned_value();
        let decoded = Decode::from_bytes(&bytes)
            .map(|v| same_type(value, v))
            .unwrap();
        prop_assert_eq!(
            decoded.encode_to_vec().unwrap(),
            bytes.clone(),
            "owned re-encode"
        );
        if value == value {
            prop_assert_eq!(&back, value, "view to_owned_value");
            prop_assert_eq!(&decoded, value, "owned decode");
        }
        bytes
    }};
}

/// Gives `decoded` the type of `_like`.
fn same_type<T>(_like: &T, decoded: T) -> T {
    decoded
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 _.-]{0,12}",
        1 => any::<String>(),
    ]
}

fn uuid() -> impl Strategy<Value = Uuid> {
    any::<[u8; 16]>().prop_map(Uuid::from_array)
}

fn bf16s(max: usize) -> impl Strategy<Value = Vec<bf16>> {
    prop::collection::vec(any::<u16>().prop_map(bf16::from_bits), 0..max)
}

fn f32_bits() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits)
}

fn f64_bits() -> impl Strategy<Value = f64> {
    any::<u64>().prop_map(f64::from_bits)
}

fn duration() -> impl Strategy<Value = Duration> {
    (-(1i128 << 90)..(1i128 << 90)).prop_filter_map("duration in range", Duration::from_nanos)
}

fn person() -> impl Strategy<Value = owned::Person> {
    (any::<i32>(), text(), text(), any::<i32>()).prop_map(|(id, name, email, age)| owned::Person {
        id,
        name,
        email,
        age,
    })
}

fn order() -> impl Strategy<Value = owned::Order> {
    (
        any::<i64>(),
        any::<i64>(),
        prop::collection::vec(any::<i64>(), 0..40),
        prop::collection::vec(any::<i32>(), 0..40),
        f64_bits(),
        any::<i64>(),
    )
        .prop_map(
            |(order_id, customer_id, item_ids, quantities, total, timestamp)| owned::Order {
                order_id,
                customer_id,
                item_ids,
                quantities,
                total,
                timestamp,
            },
        )
}

fn event() -> impl Strategy<Value = owned::Event> {
    (
        any::<i64>(),
        text(),
        text(),
        any::<i64>(),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(id, r#type, source, timestamp, payload)| owned::Event {
            id,
            r#type,
            source,
            timestamp,
            payload,
        })
}

fn tree() -> impl Strategy<Value = owned::TreeNode> {
    let leaf = prop::option::of(any::<i32>()).prop_map(|value| owned::TreeNode {
        value,
        children: None,
    });
    leaf.prop_recursive(5, 64, 4, |inner| {
        (
            prop::option::of(any::<i32>()),
            prop::option::of(prop::collection::vec(inner, 0..4)),
        )
            .prop_map(|(value, children)| owned::TreeNode { value, children })
    })
}

/// Outlines (`schemas/recursion.bop`: a struct holding an array of itself), up to 5 deep.
fn outline() -> impl Strategy<Value = bebop_rust_build_tests::recursion::owned::Outline> {
    use bebop_rust_build_tests::recursion::owned::Outline;
    let leaf = text().prop_map(|title| Outline {
        title,
        sections: Vec::new(),
    });
    leaf.prop_recursive(5, 64, 4, |inner| {
        (text(), prop::collection::vec(inner, 0..4))
            .prop_map(|(title, sections)| Outline { title, sections })
    })
}

fn json() -> impl Strategy<Value = owned::JsonValue> {
    use owned::json_value as j;
    let leaf = prop_oneof![
        Just(owned::JsonValue::Null(bm::JsonNull {})),
        prop::option::of(any::<bool>()).prop_map(|value| owned::JsonValue::Bool(j::Bool { value })),
        prop::option::of(f64_bits())
            .prop_map(|value| owned::JsonValue::Number(j::Number { value })),
        prop::option::of(text()).prop_map(|value| owned::JsonValue::String(j::String { value })),
    ];
    leaf.prop_recursive(4, 48, 4, |inner| {
        prop_oneof![
            prop::option::of(prop::collection::vec(inner.clone(), 0..4))
                .prop_map(|values| owned::JsonValue::List(j::List { values })),
            prop::option::of(prop::collection::btree_map(text(), inner, 0..4))
                .prop_map(|fields| owned::JsonValue::Object(j::Object { fields })),
        ]
    })
}

fn document() -> impl Strategy<Value = owned::Document> {
    (
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(prop::collection::btree_map(text(), json(), 0..4)),
    )
        .prop_map(|(title, body, metadata)| owned::Document {
            title,
            body,
            metadata,
        })
}

fn chunk_kind() -> impl Strategy<Value = bm::ChunkKind> {
    prop_oneof![
        Just(bm::ChunkKind::Unknown),
        Just(bm::ChunkKind::Paragraph),
        Just(bm::ChunkKind::Chapter),
        Just(bm::ChunkKind::Heading),
    ]
}

fn text_span() -> impl Strategy<Value = bm::TextSpan> {
    (any::<u32>(), any::<u32>(), chunk_kind()).prop_map(|(start, len, kind)| bm::TextSpan {
        start,
        len,
        kind,
    })
}

fn chunked_text() -> impl Strategy<Value = owned::ChunkedText> {
    (text(), prop::collection::vec(text_span(), 0..16))
        .prop_map(|(source, spans)| owned::ChunkedText { source, spans })
}

fn embedding_bf16() -> impl Strategy<Value = owned::EmbeddingBF16> {
    (uuid(), bf16s(48)).prop_map(|(id, vector)| owned::EmbeddingBF16 { id, vector })
}

fn embedding_f32() -> impl Strategy<Value = owned::EmbeddingF32> {
    (uuid(), prop::collection::vec(f32_bits(), 0..48))
        .prop_map(|(id, vector)| owned::EmbeddingF32 { id, vector })
}

fn embedding_batch() -> impl Strategy<Value = owned::EmbeddingBatch> {
    (
        text(),
        prop::collection::vec(embedding_bf16(), 0..6),
        any::<u32>(),
    )
        .prop_map(|(model, embeddings, usage_tokens)| owned::EmbeddingBatch {
            model,
            embeddings,
            usage_tokens,
        })
}

fn token_logprob() -> impl Strategy<Value = owned::TokenLogprob> {
    (text(), any::<u32>(), f32_bits()).prop_map(|(token, token_id, logprob)| owned::TokenLogprob {
        token,
        token_id,
        logprob,
    })
}

fn token_alternatives() -> impl Strategy<Value = owned::TokenAlternatives> {
    prop::collection::vec(token_logprob(), 0..6)
        .prop_map(|top_tokens| owned::TokenAlternatives { top_tokens })
}

fn llm_chunk() -> impl Strategy<Value = owned::LLMStreamChunk> {
    (
        any::<u32>(),
        prop::collection::vec(text(), 0..8),
        prop::collection::vec(token_alternatives(), 0..6),
        text(),
    )
        .prop_map(
            |(chunk_id, tokens, logprobs, finish_reason)| owned::LLMStreamChunk {
                chunk_id,
                tokens,
                logprobs,
                finish_reason,
            },
        )
}

fn tensor_shard() -> impl Strategy<Value = owned::TensorShard> {
    (
        text(),
        prop::collection::vec(any::<u32>(), 0..6),
        text(),
        bf16s(64),
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(
            |(name, shape, dtype, data, offset, total_elements)| owned::TensorShard {
                name,
                shape,
                dtype,
                data,
                offset,
                total_elements,
            },
        )
}

fn inference_timing() -> impl Strategy<Value = bm::InferenceTiming> {
    (duration(), duration(), f32_bits()).prop_map(
        |(queue_time, inference_time, tokens_per_second)| bm::InferenceTiming {
            queue_time,
            inference_time,
            tokens_per_second,
        },
    )
}

fn inference_response() -> impl Strategy<Value = owned::InferenceResponse> {
    (
        uuid(),
        prop::collection::vec(embedding_bf16(), 0..4),
        inference_timing(),
    )
        .prop_map(
            |(request_id, embeddings, timing)| owned::InferenceResponse {
                request_id,
                embeddings,
                timing,
            },
        )
}

/// Round trip of a type whose owned form is its view type (no borrowed data).
macro_rules! plain_round_trip {
    ($value:expr, $ty:ty) => {{
        let value: $ty = $value;
        let bytes = value.encode_to_vec().unwrap();
        prop_assert_eq!(value.encoded_size(), bytes.len());
        prop_assert_eq!(<$ty as bebop_runtime::FixedSize>::SIZE, bytes.len());
        let back = <$ty>::from_bytes(&bytes).unwrap();
        prop_assert_eq!(back.encode_to_vec().unwrap(), bytes);
        if value == value {
            prop_assert_eq!(back, value);
        }
    }};
}

proptest! {
    #[test]
    fn person_round_trips(v in person()) {
        let bytes = round_trip!(v, bm::Person, as_view);
        // 4 + (4 + name + 1) + (4 + email + 1) + 4.
        prop_assert_eq!(bytes.len(), 18 + v.name.len() + v.email.len());
    }

    #[test]
    fn order_round_trips(v in order()) {
        let bytes = round_trip!(v, bm::Order, as_view);
        prop_assert_eq!(bytes.len(), 40 + 8 * v.item_ids.len() + 4 * v.quantities.len());
    }

    #[test]
    fn event_round_trips(v in event()) {
        round_trip!(v, bm::Event, as_view);
    }

    #[test]
    fn tree_round_trips(v in tree()) {
        round_trip!(v, bm::TreeNode);
    }

    #[test]
    fn outline_round_trips(v in outline()) {
        round_trip!(v, bebop_rust_build_tests::recursion::Outline);
    }

    #[test]
    fn json_value_round_trips(v in json()) {
        round_trip!(v, bm::JsonValue);
    }

    #[test]
    fn json_string_branch_lends_a_view(value in prop::option::of(text())) {
        round_trip!(owned::json_value::String { value }, bm::json_value::String, as_view);
    }

    #[test]
    fn document_round_trips(v in document()) {
        round_trip!(v, bm::Document);
    }

    #[test]
    fn text_span_round_trips(v in text_span()) {
        plain_round_trip!(v, bm::TextSpan);
    }

    #[test]
    fn chunked_text_round_trips(v in chunked_text()) {
        round_trip!(v, bm::ChunkedText, as_view);
    }

    #[test]
    fn embedding_bf16_round_trips(v in embedding_bf16()) {
        let bytes = round_trip!(v, bm::EmbeddingBF16, as_view);
        prop_assert_eq!(bytes.len(), 20 + 2 * v.vector.len());
    }

    #[test]
    fn embedding_f32_round_trips(v in embedding_f32()) {
        round_trip!(v, bm::EmbeddingF32, as_view);
    }

    #[test]
    fn embedding_batch_round_trips(v in embedding_batch()) {
        round_trip!(v, bm::EmbeddingBatch);
    }

    #[test]
    fn token_logprob_round_trips(v in token_logprob()) {
        round_trip!(v, bm::TokenLogprob, as_view);
    }

    #[test]
    fn token_alternatives_round_trip(v in token_alternatives()) {
        round_trip!(v, bm::TokenAlternatives);
    }

    #[test]
    fn llm_chunk_round_trips(v in llm_chunk()) {
        round_trip!(v, bm::LLMStreamChunk);
    }

    #[test]
    fn tensor_shard_round_trips(v in tensor_shard()) {
        round_trip!(v, bm::TensorShard, as_view);
    }

    #[test]
    fn inference_timing_round_trips(v in inference_timing()) {
        plain_round_trip!(v, bm::InferenceTiming);
    }

    #[test]
    fn inference_response_round_trips(v in inference_response()) {
        round_trip!(v, bm::InferenceResponse);
    }
}

/// Owned maps encode in ascending key order whatever order they were built in, so equal
/// maps give equal bytes.
#[test]
fn document_metadata_encodes_in_key_order() {
    use owned::json_value::Number;
    let number = |n: f64| owned::JsonValue::Number(Number { value: Some(n) });
    let mut a = BTreeMap::new();
    a.insert("b".to_string(), number(2.0));
    a.insert("a".to_string(), number(1.0));
    let doc = owned::Document {
        title: None,
        body: None,
        metadata: Some(a),
    };
    let bytes = doc.encode_to_vec().unwrap();
    let view = bm::Document::from_bytes(&bytes).unwrap();
    let keys: Vec<&str> = view.metadata.unwrap().iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["a", "b"]);
}

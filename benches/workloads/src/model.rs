//! The workloads' data as plain owned Rust types: what the builders in [`crate::data`] make,
//! what every format's result is compared against, and the natural decoded form of the serde
//! peers (rmp-serde, serde_json, simd-json, postcard, bincode) and of rkyv.
//!
//! Field for field these follow `schemas/workloads.bop`. A few representation choices, made
//! the way a user of each library would:
//!
//! - `bfloat16[]` is a `Vec<u16>` of raw bits. Binary serde formats write it as one byte string
//!   (little-endian pairs, like protobuf `bytes`); JSON writes the numbers as floats.
//! - `uuid` is `[u8; 16]`: a byte string in binary formats, the hyphenated text form in JSON
//!   (what the `uuid` crate does).
//! - `byte[]` payloads are byte strings in binary formats and base64 text in JSON.
//! - [`JsonValue`] is plain JSON in the JSON formats and serde's externally tagged enum in the
//!   binary ones (which cannot decode untagged data).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

// `bfloat16[]` byte strings are the little-endian bytes of the `u16` bits, taken as they lie
// in memory.
const _: () = assert!(
    cfg!(target_endian = "little"),
    "the serde byte-string form of bfloat16[] assumes a little-endian target"
);

/// `struct Person`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct Person {
    /// `id: int32`
    pub id: i32,
    /// `name: string`
    pub name: String,
    /// `email: string`
    pub email: String,
    /// `age: int32`
    pub age: i32,
}

/// `struct Order`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct Order {
    /// `order_id: int64`
    pub order_id: i64,
    /// `customer_id: int64`
    pub customer_id: i64,
    /// `item_ids: int64[]`
    pub item_ids: Vec<i64>,
    /// `quantities: int32[]`
    pub quantities: Vec<i32>,
    /// `total: float64`
    pub total: f64,
    /// `timestamp: int64`
    pub timestamp: i64,
}

/// `struct Event`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct Event {
    /// `id: int64`
    pub id: i64,
    /// `type: string`
    pub r#type: String,
    /// `source: string`
    pub source: String,
    /// `timestamp: int64`
    pub timestamp: i64,
    /// `payload: byte[]`
    #[serde(with = "byte_string")]
    pub payload: Vec<u8>,
}

/// `message TreeNode`; the reference harness leaves `children` out when it is empty.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
#[rkyv(serialize_bounds(
    __S: rkyv::ser::Writer + rkyv::ser::Allocator,
    __S::Error: rkyv::rancor::Source,
))]
#[rkyv(deserialize_bounds(__D::Error: rkyv::rancor::Source))]
#[rkyv(bytecheck(bounds(
    __C: rkyv::validation::ArchiveContext,
    __C::Error: rkyv::rancor::Source,
)))]
pub struct TreeNode {
    /// `value(1): int32`
    pub value: i32,
    /// `children(2): TreeNode[]`
    #[rkyv(omit_bounds)]
    pub children: Vec<TreeNode>,
}

/// `union JsonValue`: a JSON value.
#[derive(Clone, Debug, PartialEq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
#[rkyv(serialize_bounds(
    __S: rkyv::ser::Writer + rkyv::ser::Allocator,
    __S::Error: rkyv::rancor::Source,
))]
#[rkyv(deserialize_bounds(__D::Error: rkyv::rancor::Source))]
#[rkyv(bytecheck(bounds(
    __C: rkyv::validation::ArchiveContext,
    __C::Error: rkyv::rancor::Source,
)))]
pub enum JsonValue {
    /// `Null(1)`
    Null,
    /// `Bool(2)`
    Bool(bool),
    /// `Number(3)`
    Number(f64),
    /// `String(4)`
    String(String),
    /// `List(5)`
    List(#[rkyv(omit_bounds)] Vec<JsonValue>),
    /// `Object(6)`; keys in ascending order.
    Object(#[rkyv(omit_bounds)] BTreeMap<String, JsonValue>),
}

/// `message Document`; the reference harness leaves empty fields out.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct Document {
    /// `title(1): string`
    pub title: String,
    /// `body(2): string`
    pub body: String,
    /// `metadata(3): map[string, JsonValue]`
    pub metadata: BTreeMap<String, JsonValue>,
}

/// `enum ChunkKind : uint8`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
#[rkyv(derive(Clone, Copy))]
#[repr(u8)]
pub enum ChunkKind {
    /// 0
    Unknown = 0,
    /// 1
    Paragraph = 1,
    /// 2
    Chapter = 2,
    /// 3
    Heading = 3,
}

/// `struct TextSpan`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct TextSpan {
    /// `start: uint32`
    pub start: u32,
    /// `len: uint32`
    pub len: u32,
    /// `kind: ChunkKind`
    pub kind: ChunkKind,
}

/// `struct ChunkedText`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct ChunkedText {
    /// `source: string`
    pub source: String,
    /// `spans: TextSpan[]`
    pub spans: Vec<TextSpan>,
}

/// `struct EmbeddingBF16`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct EmbeddingBf16 {
    /// `id: uuid`
    #[serde(with = "uuid_bytes")]
    pub id: [u8; 16],
    /// `vector: bfloat16[]`, as raw bits.
    #[serde(with = "bf16_bits")]
    pub vector: Vec<u16>,
}

/// `struct EmbeddingF32`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct EmbeddingF32 {
    /// `id: uuid`
    #[serde(with = "uuid_bytes")]
    pub id: [u8; 16],
    /// `vector: float32[]`
    pub vector: Vec<f32>,
}

/// `struct EmbeddingBatch`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct EmbeddingBatch {
    /// `model: string`
    pub model: String,
    /// `embeddings: EmbeddingBF16[]`
    pub embeddings: Vec<EmbeddingBf16>,
    /// `usage_tokens: uint32`
    pub usage_tokens: u32,
}

/// `struct TokenLogprob`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct TokenLogprob {
    /// `token: string`
    pub token: String,
    /// `token_id: uint32`
    pub token_id: u32,
    /// `logprob: float32`
    pub logprob: f32,
}

/// `struct TokenAlternatives`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct TokenAlternatives {
    /// `top_tokens: TokenLogprob[]`
    pub top_tokens: Vec<TokenLogprob>,
}

/// `struct LLMStreamChunk`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct LlmStreamChunk {
    /// `chunk_id: uint32`
    pub chunk_id: u32,
    /// `tokens: string[]`
    pub tokens: Vec<String>,
    /// `logprobs: TokenAlternatives[]`
    pub logprobs: Vec<TokenAlternatives>,
    /// `finish_reason: string`
    pub finish_reason: String,
}

/// `struct TensorShard`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct TensorShard {
    /// `name: string`
    pub name: String,
    /// `shape: uint32[]`
    pub shape: Vec<u32>,
    /// `dtype: string`
    pub dtype: String,
    /// `data: bfloat16[]`, as raw bits.
    #[serde(with = "bf16_bits")]
    pub data: Vec<u16>,
    /// `offset: uint64`
    pub offset: u64,
    /// `total_elements: uint64`
    pub total_elements: u64,
}

/// `duration`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct Duration {
    /// Whole seconds.
    pub seconds: i64,
    /// Nanoseconds, same sign as `seconds`.
    pub nanos: i32,
}

/// `struct InferenceTiming`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct InferenceTiming {
    /// `queue_time: duration`
    pub queue_time: Duration,
    /// `inference_time: duration`
    pub inference_time: Duration,
    /// `tokens_per_second: float32`
    pub tokens_per_second: f32,
}

/// `struct InferenceResponse`.
#[derive(
    Clone,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct InferenceResponse {
    /// `request_id: uuid`
    #[serde(with = "uuid_bytes")]
    pub request_id: [u8; 16],
    /// `embeddings: EmbeddingBF16[]`
    pub embeddings: Vec<EmbeddingBf16>,
    /// `timing: InferenceTiming`
    pub timing: InferenceTiming,
}

/// The float a bfloat16 bit pattern stands for.
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// `byte[]`: a byte string, or base64 text in human-readable formats.
mod byte_string {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserializer, Serializer, de};
    use std::fmt;

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&STANDARD.encode(bytes))
        } else {
            s.serialize_bytes(bytes)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a byte string or base64 text")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Vec<u8>, E> {
                STANDARD.decode(s).map_err(E::custom)
            }
            fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Vec<u8>, E> {
                Ok(b.to_vec())
            }
            fn visit_byte_buf<E: de::Error>(self, b: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(b)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element()? {
                    out.push(b);
                }
                Ok(out)
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(V)
        } else {
            d.deserialize_byte_buf(V)
        }
    }
}

/// `uuid`: 16 bytes, or the hyphenated text form in human-readable formats.
mod uuid_bytes {
    use serde::{Deserializer, Serializer, de};
    use std::fmt;

    pub fn serialize<S: Serializer>(id: &[u8; 16], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            let mut text = [0u8; 36];
            s.serialize_str(bebop_runtime::Uuid::from_array(*id).encode_hyphenated(&mut text))
        } else {
            s.serialize_bytes(id)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 16], D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = [u8; 16];
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("16 bytes or a hyphenated uuid")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<[u8; 16], E> {
                bebop_runtime::Uuid::parse(s)
                    .map(|u| *u.as_bytes())
                    .map_err(|_| E::custom(format_args!("bad uuid {s:?}")))
            }
            fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<[u8; 16], E> {
                b.try_into().map_err(|_| E::invalid_length(b.len(), &self))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<[u8; 16], A::Error> {
                let mut out = [0u8; 16];
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = seq
                        .next_element()?
                        .ok_or_else(|| de::Error::invalid_length(i, &self))?;
                }
                Ok(out)
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(V)
        } else {
            d.deserialize_bytes(V)
        }
    }
}

/// `bfloat16[]` as raw bits: one little-endian byte string, or a list of floats in
/// human-readable formats.
mod bf16_bits {
    use serde::ser::SerializeSeq;
    use serde::{Deserializer, Serializer, de};
    use std::fmt;

    pub fn serialize<S: Serializer>(bits: &[u16], s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            let mut seq = s.serialize_seq(Some(bits.len()))?;
            for &b in bits {
                seq.serialize_element(&super::bf16_to_f32(b))?;
            }
            seq.end()
        } else {
            s.serialize_bytes(bytemuck::cast_slice(bits))
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u16>, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Vec<u16>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a byte string of bfloat16 values or a list of floats")
            }
            fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Vec<u16>, E> {
                if b.len() % 2 != 0 {
                    return Err(E::invalid_length(b.len(), &"an even number of bytes"));
                }
                Ok(b.chunks_exact(2)
                    .map(|p| u16::from_le_bytes([p[0], p[1]]))
                    .collect())
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u16>, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(f) = seq.next_element::<f32>()? {
                    out.push((f.to_bits() >> 16) as u16);
                }
                Ok(out)
            }
        }
        if d.is_human_readable() {
            d.deserialize_seq(V)
        } else {
            d.deserialize_bytes(V)
        }
    }
}

const JSON_VARIANTS: &[&str] = &["Null", "Bool", "Number", "String", "List", "Object"];

impl Serialize for JsonValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            match self {
                JsonValue::Null => s.serialize_unit(),
                JsonValue::Bool(b) => s.serialize_bool(*b),
                JsonValue::Number(n) => s.serialize_f64(*n),
                JsonValue::String(v) => s.serialize_str(v),
                JsonValue::List(v) => s.collect_seq(v),
                JsonValue::Object(v) => s.collect_map(v),
            }
        } else {
            const N: &str = "JsonValue";
            match self {
                JsonValue::Null => s.serialize_unit_variant(N, 0, "Null"),
                JsonValue::Bool(b) => s.serialize_newtype_variant(N, 1, "Bool", b),
                JsonValue::Number(n) => s.serialize_newtype_variant(N, 2, "Number", n),
                JsonValue::String(v) => s.serialize_newtype_variant(N, 3, "String", v),
                JsonValue::List(v) => s.serialize_newtype_variant(N, 4, "List", v),
                JsonValue::Object(v) => s.serialize_newtype_variant(N, 5, "Object", v),
            }
        }
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            d.deserialize_any(json_de::Plain)
        } else {
            d.deserialize_enum("JsonValue", JSON_VARIANTS, json_de::Tagged)
        }
    }
}

mod json_de {
    use super::{JSON_VARIANTS, JsonValue};
    use serde::de::{self, Deserialize, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
    use std::collections::BTreeMap;
    use std::fmt;

    /// Plain JSON.
    pub struct Plain;

    impl<'de> Visitor<'de> for Plain {
        type Value = JsonValue;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_unit<E: de::Error>(self) -> Result<JsonValue, E> {
            Ok(JsonValue::Null)
        }
        fn visit_none<E: de::Error>(self) -> Result<JsonValue, E> {
            Ok(JsonValue::Null)
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<JsonValue, E> {
            Ok(JsonValue::Bool(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<JsonValue, E> {
            Ok(JsonValue::Number(v as f64))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsonValue, E> {
            Ok(JsonValue::Number(v as f64))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsonValue, E> {
            Ok(JsonValue::Number(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<JsonValue, E> {
            Ok(JsonValue::String(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<JsonValue, E> {
            Ok(JsonValue::String(v))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonValue, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
            while let Some(v) = seq.next_element()? {
                out.push(v);
            }
            Ok(JsonValue::List(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonValue, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((k, v)) = map.next_entry::<String, JsonValue>()? {
                out.insert(k, v);
            }
            Ok(JsonValue::Object(out))
        }
    }

    /// Serde's externally tagged enum form.
    pub struct Tagged;

    enum Variant {
        Null,
        Bool,
        Number,
        String,
        List,
        Object,
    }

    impl Variant {
        fn from_index(i: u64) -> Option<Variant> {
            Some(match i {
                0 => Variant::Null,
                1 => Variant::Bool,
                2 => Variant::Number,
                3 => Variant::String,
                4 => Variant::List,
                5 => Variant::Object,
                _ => return None,
            })
        }
    }

    impl<'de> Deserialize<'de> for Variant {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = Variant;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JsonValue variant")
                }
                fn visit_u64<E: de::Error>(self, i: u64) -> Result<Variant, E> {
                    Variant::from_index(i)
                        .ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(i), &self))
                }
                fn visit_str<E: de::Error>(self, s: &str) -> Result<Variant, E> {
                    JSON_VARIANTS
                        .iter()
                        .position(|v| *v == s)
                        .and_then(|i| Variant::from_index(i as u64))
                        .ok_or_else(|| E::unknown_variant(s, JSON_VARIANTS))
                }
                fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Variant, E> {
                    match std::str::from_utf8(b) {
                        Ok(s) => self.visit_str(s),
                        Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(b), &self)),
                    }
                }
            }
            d.deserialize_identifier(V)
        }
    }

    impl<'de> Visitor<'de> for Tagged {
        type Value = JsonValue;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JsonValue")
        }
        fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<JsonValue, A::Error> {
            let (variant, access) = data.variant::<Variant>()?;
            Ok(match variant {
                Variant::Null => {
                    access.unit_variant()?;
                    JsonValue::Null
                }
                Variant::Bool => JsonValue::Bool(access.newtype_variant()?),
                Variant::Number => JsonValue::Number(access.newtype_variant()?),
                Variant::String => JsonValue::String(access.newtype_variant()?),
                Variant::List => JsonValue::List(access.newtype_variant()?),
                Variant::Object => JsonValue::Object(access.newtype_variant()?),
            })
        }
    }
}

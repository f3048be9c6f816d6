//! [`Shape`]: how each workload type maps to the other forms the suite measures (the
//! generated Bebop owned type and view, the prost message), with the conversions, none of which
//! is timed.

use std::collections::BTreeMap;
use std::fmt::Debug;

use bebop_runtime::{Array, Map, Uuid, bf16};
use bumpalo::Bump;
use rkyv::api::high::{HighDeserializer, HighSerializer, HighValidator};
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor;
use rkyv::ser::allocator::ArenaHandle;
use rkyv::util::AlignedVec;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bop::{self, owned};
use crate::model::{self as m};
use crate::pb;
use crate::walk::Walk;

/// What rkyv needs of a workload type: serialising with the high-level API, validating access
/// (`bytecheck`) and deserialising back.
pub trait RkyvShape:
    Sized
    + rkyv::Archive<
        Archived: Walk
                      + for<'a> CheckBytes<HighValidator<'a, rancor::Error>>
                      + rkyv::Deserialize<Self, HighDeserializer<rancor::Error>>,
    > + for<'a> rkyv::Serialize<HighSerializer<AlignedVec, ArenaHandle<'a>, rancor::Error>>
{
}

impl<T> RkyvShape for T where
    T: rkyv::Archive<
            Archived: Walk
                          + for<'a> CheckBytes<HighValidator<'a, rancor::Error>>
                          + rkyv::Deserialize<T, HighDeserializer<rancor::Error>>,
        > + for<'a> rkyv::Serialize<HighSerializer<AlignedVec, ArenaHandle<'a>, rancor::Error>>
{
}

/// A workload type (the model form, which the serde peers and rkyv use directly) and its
/// other forms.
pub trait Shape:
    Clone + PartialEq + Debug + Serialize + DeserializeOwned + Walk + RkyvShape + 'static
{
    /// The prost message.
    type Pb: prost::Message + Default + Clone + Walk;
    /// The generated Bebop owned type (`String`, `Vec`, `BTreeMap`).
    type Owned: bebop_runtime::Encode + for<'a> bebop_runtime::Decode<'a> + Clone + Walk;
    /// The generated Bebop view.
    type View<'a>: bebop_runtime::Encode + bebop_runtime::Decode<'a> + Copy + Walk;

    /// The Bebop schema type's name.
    const SCHEMA_TYPE: &'static str;

    /// To the prost message.
    fn to_pb(&self) -> Self::Pb;
    /// From the prost message.
    fn from_pb(pb: &Self::Pb) -> Self;
    /// To the Bebop owned type.
    fn to_owned_bebop(&self) -> Self::Owned;
    /// From the Bebop owned type.
    fn from_owned_bebop(o: &Self::Owned) -> Self;
    /// A Bebop view of `self`, with whatever element storage it needs in `arena` (the way the
    /// reference harness points its C structs at the test data before encoding).
    fn view<'a>(&'a self, arena: &'a Bump) -> Self::View<'a>;
    /// The view's owned copy (the generated `to_owned_value`).
    fn view_to_owned(view: Self::View<'_>) -> Self::Owned;
}

fn bf16s(bits: &[u16]) -> &[bf16] {
    bytemuck::cast_slice(bits)
}

fn bf16_vec(bits: &[u16]) -> Vec<bf16> {
    bits.iter().map(|&b| bf16::from_bits(b)).collect()
}

fn bits_of(values: &[bf16]) -> Vec<u16> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn le_bytes(bits: &[u16]) -> Vec<u8> {
    bits.iter().flat_map(|b| b.to_le_bytes()).collect()
}

fn from_le_bytes(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect()
}

fn uuid16(bytes: &[u8]) -> [u8; 16] {
    let mut id = [0u8; 16];
    if let Some(src) = bytes.get(..16) {
        id.copy_from_slice(src);
    }
    id
}

fn slice<'a, T: Copy>(arena: &'a Bump, items: impl Iterator<Item = T>) -> Array<'a, T> {
    let items: Vec<T> = items.collect();
    Array::from_slice(arena.alloc_slice_copy(&items))
}

impl Shape for m::Person {
    type Pb = pb::Person;
    type Owned = owned::Person;
    type View<'a> = bop::Person<'a>;
    const SCHEMA_TYPE: &'static str = "Person";

    fn to_pb(&self) -> pb::Person {
        pb::Person {
            id: self.id,
            name: self.name.clone(),
            email: self.email.clone(),
            age: self.age,
        }
    }
    fn from_pb(p: &pb::Person) -> Self {
        m::Person {
            id: p.id,
            name: p.name.clone(),
            email: p.email.clone(),
            age: p.age,
        }
    }
    fn to_owned_bebop(&self) -> owned::Person {
        owned::Person {
            id: self.id,
            name: self.name.clone(),
            email: self.email.clone(),
            age: self.age,
        }
    }
    fn from_owned_bebop(o: &owned::Person) -> Self {
        m::Person {
            id: o.id,
            name: o.name.clone(),
            email: o.email.clone(),
            age: o.age,
        }
    }
    fn view<'a>(&'a self, _arena: &'a Bump) -> bop::Person<'a> {
        bop::Person {
            id: self.id,
            name: &self.name,
            email: &self.email,
            age: self.age,
        }
    }
    fn view_to_owned(v: bop::Person<'_>) -> owned::Person {
        v.to_owned_value()
    }
}

impl Shape for m::Order {
    type Pb = pb::Order;
    type Owned = owned::Order;
    type View<'a> = bop::Order<'a>;
    const SCHEMA_TYPE: &'static str = "Order";

    fn to_pb(&self) -> pb::Order {
        pb::Order {
            order_id: self.order_id,
            customer_id: self.customer_id,
            item_ids: self.item_ids.clone(),
            quantities: self.quantities.clone(),
            total: self.total,
            timestamp: self.timestamp,
        }
    }
    fn from_pb(p: &pb::Order) -> Self {
        m::Order {
            order_id: p.order_id,
            customer_id: p.customer_id,
            item_ids: p.item_ids.clone(),
            quantities: p.quantities.clone(),
            total: p.total,
            timestamp: p.timestamp,
        }
    }
    fn to_owned_bebop(&self) -> owned::Order {
        owned::Order {
            order_id: self.order_id,
            customer_id: self.customer_id,
            item_ids: self.item_ids.clone(),
            quantities: self.quantities.clone(),
            total: self.total,
            timestamp: self.timestamp,
        }
    }
    fn from_owned_bebop(o: &owned::Order) -> Self {
        m::Order {
            order_id: o.order_id,
            customer_id: o.customer_id,
            item_ids: o.item_ids.clone(),
            quantities: o.quantities.clone(),
            total: o.total,
            timestamp: o.timestamp,
        }
    }
    fn view<'a>(&'a self, _arena: &'a Bump) -> bop::Order<'a> {
        bop::Order {
            order_id: self.order_id,
            customer_id: self.customer_id,
            item_ids: Array::from_slice(&self.item_ids),
            quantities: Array::from_slice(&self.quantities),
            total: self.total,
            timestamp: self.timestamp,
        }
    }
    fn view_to_owned(v: bop::Order<'_>) -> owned::Order {
        v.to_owned_value()
    }
}

impl Shape for m::Event {
    type Pb = pb::Event;
    type Owned = owned::Event;
    type View<'a> = bop::Event<'a>;
    const SCHEMA_TYPE: &'static str = "Event";

    fn to_pb(&self) -> pb::Event {
        pb::Event {
            id: self.id,
            r#type: self.r#type.clone(),
            source: self.source.clone(),
            timestamp: self.timestamp,
            payload: self.payload.clone(),
        }
    }
    fn from_pb(p: &pb::Event) -> Self {
        m::Event {
            id: p.id,
            r#type: p.r#type.clone(),
            source: p.source.clone(),
            timestamp: p.timestamp,
            payload: p.payload.clone(),
        }
    }
    fn to_owned_bebop(&self) -> owned::Event {
        owned::Event {
            id: self.id,
            r#type: self.r#type.clone(),
            source: self.source.clone(),
            timestamp: self.timestamp,
            payload: self.payload.clone(),
        }
    }
    fn from_owned_bebop(o: &owned::Event) -> Self {
        m::Event {
            id: o.id,
            r#type: o.r#type.clone(),
            source: o.source.clone(),
            timestamp: o.timestamp,
            payload: o.payload.clone(),
        }
    }
    fn view<'a>(&'a self, _arena: &'a Bump) -> bop::Event<'a> {
        bop::Event {
            id: self.id,
            r#type: &self.r#type,
            source: &self.source,
            timestamp: self.timestamp,
            payload: &self.payload,
        }
    }
    fn view_to_owned(v: bop::Event<'_>) -> owned::Event {
        v.to_owned_value()
    }
}

impl Shape for m::TreeNode {
    type Pb = pb::TreeNode;
    type Owned = owned::TreeNode;
    type View<'a> = bop::TreeNode<'a>;
    const SCHEMA_TYPE: &'static str = "TreeNode";

    fn to_pb(&self) -> pb::TreeNode {
        pb::TreeNode {
            value: self.value,
            children: self.children.iter().map(Shape::to_pb).collect(),
        }
    }
    fn from_pb(p: &pb::TreeNode) -> Self {
        m::TreeNode {
            value: p.value,
            children: p.children.iter().map(m::TreeNode::from_pb).collect(),
        }
    }
    fn to_owned_bebop(&self) -> owned::TreeNode {
        owned::TreeNode {
            value: Some(self.value),
            children: (!self.children.is_empty())
                .then(|| self.children.iter().map(Shape::to_owned_bebop).collect()),
        }
    }
    fn from_owned_bebop(o: &owned::TreeNode) -> Self {
        m::TreeNode {
            value: o.value.unwrap_or_default(),
            children: o
                .children
                .iter()
                .flatten()
                .map(m::TreeNode::from_owned_bebop)
                .collect(),
        }
    }
    fn view<'a>(&'a self, arena: &'a Bump) -> bop::TreeNode<'a> {
        bop::TreeNode {
            value: Some(self.value),
            children: (!self.children.is_empty())
                .then(|| slice(arena, self.children.iter().map(|c| c.view(arena)))),
        }
    }
    fn view_to_owned(v: bop::TreeNode<'_>) -> owned::TreeNode {
        v.to_owned_value()
    }
}

fn json_to_owned(v: &m::JsonValue) -> owned::JsonValue {
    use owned::json_value as oj;
    match v {
        m::JsonValue::Null => owned::JsonValue::Null(bop::JsonNull {}),
        m::JsonValue::Bool(b) => owned::JsonValue::Bool(bop::json_value::Bool { value: Some(*b) }),
        m::JsonValue::Number(n) => {
            owned::JsonValue::Number(bop::json_value::Number { value: Some(*n) })
        }
        m::JsonValue::String(s) => owned::JsonValue::String(oj::String {
            value: Some(s.clone()),
        }),
        m::JsonValue::List(items) => owned::JsonValue::List(oj::List {
            values: Some(items.iter().map(json_to_owned).collect()),
        }),
        m::JsonValue::Object(fields) => owned::JsonValue::Object(oj::Object {
            fields: Some(object_to_owned(fields)),
        }),
    }
}

fn object_to_owned(fields: &BTreeMap<String, m::JsonValue>) -> BTreeMap<String, owned::JsonValue> {
    fields
        .iter()
        .map(|(k, v)| (k.clone(), json_to_owned(v)))
        .collect()
}

fn json_from_owned(v: &owned::JsonValue) -> m::JsonValue {
    match v {
        owned::JsonValue::Null(_) => m::JsonValue::Null,
        owned::JsonValue::Bool(b) => m::JsonValue::Bool(b.value.unwrap_or_default()),
        owned::JsonValue::Number(n) => m::JsonValue::Number(n.value.unwrap_or_default()),
        owned::JsonValue::String(s) => m::JsonValue::String(s.value.clone().unwrap_or_default()),
        owned::JsonValue::List(l) => {
            m::JsonValue::List(l.values.iter().flatten().map(json_from_owned).collect())
        }
        owned::JsonValue::Object(o) => m::JsonValue::Object(object_from_owned(o.fields.as_ref())),
    }
}

fn object_from_owned(
    fields: Option<&BTreeMap<String, owned::JsonValue>>,
) -> BTreeMap<String, m::JsonValue> {
    fields
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), json_from_owned(v)))
        .collect()
}

fn json_view<'a>(v: &'a m::JsonValue, arena: &'a Bump) -> bop::JsonValue<'a> {
    use bop::json_value as vj;
    match v {
        m::JsonValue::Null => bop::JsonValue::Null(bop::JsonNull {}),
        m::JsonValue::Bool(b) => bop::JsonValue::Bool(vj::Bool { value: Some(*b) }),
        m::JsonValue::Number(n) => bop::JsonValue::Number(vj::Number { value: Some(*n) }),
        m::JsonValue::String(s) => bop::JsonValue::String(vj::String { value: Some(s) }),
        m::JsonValue::List(items) => bop::JsonValue::List(vj::List {
            values: Some(slice(arena, items.iter().map(|i| json_view(i, arena)))),
        }),
        m::JsonValue::Object(fields) => bop::JsonValue::Object(vj::Object {
            fields: Some(object_view(fields, arena)),
        }),
    }
}

fn object_view<'a>(
    fields: &'a BTreeMap<String, m::JsonValue>,
    arena: &'a Bump,
) -> Map<'a, &'a str, bop::JsonValue<'a>> {
    let entries: Vec<(&str, bop::JsonValue<'_>)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), json_view(v, arena)))
        .collect();
    Map::from_slice(arena.alloc_slice_copy(&entries))
}

fn json_to_pb(v: &m::JsonValue) -> pb::JsonValue {
    use pb::json_value::Kind;
    let kind = match v {
        m::JsonValue::Null => Kind::NullValue(pb::NullValue::NullValue as i32),
        m::JsonValue::Bool(b) => Kind::BoolValue(*b),
        m::JsonValue::Number(n) => Kind::NumberValue(*n),
        m::JsonValue::String(s) => Kind::StringValue(s.clone()),
        m::JsonValue::List(items) => Kind::ListValue(pb::JsonList {
            values: items.iter().map(json_to_pb).collect(),
        }),
        m::JsonValue::Object(fields) => Kind::ObjectValue(pb::JsonObject {
            fields: object_to_pb(fields),
        }),
    };
    pb::JsonValue { kind: Some(kind) }
}

fn object_to_pb(fields: &BTreeMap<String, m::JsonValue>) -> BTreeMap<String, pb::JsonValue> {
    fields
        .iter()
        .map(|(k, v)| (k.clone(), json_to_pb(v)))
        .collect()
}

fn json_from_pb(v: &pb::JsonValue) -> m::JsonValue {
    use pb::json_value::Kind;
    match &v.kind {
        None | Some(Kind::NullValue(_)) => m::JsonValue::Null,
        Some(Kind::BoolValue(b)) => m::JsonValue::Bool(*b),
        Some(Kind::NumberValue(n)) => m::JsonValue::Number(*n),
        Some(Kind::StringValue(s)) => m::JsonValue::String(s.clone()),
        Some(Kind::ListValue(l)) => m::JsonValue::List(l.values.iter().map(json_from_pb).collect()),
        Some(Kind::ObjectValue(o)) => m::JsonValue::Object(object_from_pb(&o.fields)),
    }
}

fn object_from_pb(fields: &BTreeMap<String, pb::JsonValue>) -> BTreeMap<String, m::JsonValue> {
    fields
        .iter()
        .map(|(k, v)| (k.clone(), json_from_pb(v)))
        .collect()
}

impl Shape for m::JsonValue {
    type Pb = pb::JsonValue;
    type Owned = owned::JsonValue;
    type View<'a> = bop::JsonValue<'a>;
    const SCHEMA_TYPE: &'static str = "JsonValue";

    fn to_pb(&self) -> pb::JsonValue {
        json_to_pb(self)
    }
    fn from_pb(p: &pb::JsonValue) -> Self {
        json_from_pb(p)
    }
    fn to_owned_bebop(&self) -> owned::JsonValue {
        json_to_owned(self)
    }
    fn from_owned_bebop(o: &owned::JsonValue) -> Self {
        json_from_owned(o)
    }
    fn view<'a>(&'a self, arena: &'a Bump) -> bop::JsonValue<'a> {
        json_view(self, arena)
    }
    fn view_to_owned(v: bop::JsonValue<'_>) -> owned::JsonValue {
        v.to_owned_value()
    }
}

impl Shape for m::Document {
    type Pb = pb::Document;
    type Owned = owned::Document;
    type View<'a> = bop::Document<'a>;
    const SCHEMA_TYPE: &'static str = "Document";

    fn to_pb(&self) -> pb::Document {
        pb::Document {
            title: self.title.clone(),
            body: self.body.clone(),
            metadata: object_to_pb(&self.metadata),
        }
    }
    fn from_pb(p: &pb::Document) -> Self {
        m::Document {
            title: p.title.clone(),
            body: p.body.clone(),
            metadata: object_from_pb(&p.metadata),
        }
    }
    fn to_owned_bebop(&self) -> owned::Document {
        owned::Document {
            title: (!self.title.is_empty()).then(|| self.title.clone()),
            body: (!self.body.is_empty()).then(|| self.body.clone()),
            metadata: (!self.metadata.is_empty()).then(|| object_to_owned(&self.metadata)),
        }
    }
    fn from_owned_bebop(o: &owned::Document) -> Self {
        m::Document {
            title: o.title.clone().unwrap_or_default(),
            body: o.body.clone().unwrap_or_default(),
            metadata: object_from_owned(o.metadata.as_ref()),
        }
    }
    fn view<'a>(&'a self, arena: &'a Bump) -> bop::Document<'a> {
        bop::Document {
            title: (!self.title.is_empty()).then_some(self.title.as_str()),
            body: (!self.body.is_empty()).then_some(self.body.as_str()),
            metadata: (!self.metadata.is_empty()).then(|| object_view(&self.metadata, arena)),
        }
    }
    fn view_to_owned(v: bop::Document<'_>) -> owned::Document {
        v.to_owned_value()
    }
}

fn kind_to_bop(k: m::ChunkKind) -> bop::ChunkKind {
    match k {
        m::ChunkKind::Unknown => bop::ChunkKind::Unknown,
        m::ChunkKind::Paragraph => bop::ChunkKind::Paragraph,
        m::ChunkKind::Chapter => bop::ChunkKind::Chapter,
        m::ChunkKind::Heading => bop::ChunkKind::Heading,
    }
}

fn kind_from_bop(k: bop::ChunkKind) -> m::ChunkKind {
    match k {
        bop::ChunkKind::Unknown => m::ChunkKind::Unknown,
        bop::ChunkKind::Paragraph => m::ChunkKind::Paragraph,
        bop::ChunkKind::Chapter => m::ChunkKind::Chapter,
        bop::ChunkKind::Heading => m::ChunkKind::Heading,
    }
}

fn kind_from_pb(k: i32) -> m::ChunkKind {
    match pb::ChunkKind::try_from(k) {
        Ok(pb::ChunkKind::Paragraph) => m::ChunkKind::Paragraph,
        Ok(pb::ChunkKind::Chapter) => m::ChunkKind::Chapter,
        Ok(pb::ChunkKind::Heading) => m::ChunkKind::Heading,
        Ok(pb::ChunkKind::Unknown) | Err(_) => m::ChunkKind::Unknown,
    }
}

fn span_to_bop(s: &m::TextSpan) -> bop::TextSpan {
    bop::TextSpan {
        start: s.start,
        len: s.len,
        kind: kind_to_bop(s.kind),
    }
}

fn span_from_bop(s: &bop::TextSpan) -> m::TextSpan {
    m::TextSpan {
        start: s.start,
        len: s.len,
        kind: kind_from_bop(s.kind),
    }
}

impl Shape for m::ChunkedText {
    type Pb = pb::ChunkedText;
    type Owned = owned::ChunkedText;
    type View<'a> = bop::ChunkedText<'a>;
    const SCHEMA_TYPE: &'static str = "ChunkedText";

    fn to_pb(&self) -> pb::ChunkedText {
        pb::ChunkedText {
            source: self.source.clone(),
            spans: self
                .spans
                .iter()
                .map(|s| pb::TextSpan {
                    start: s.start,
                    len: s.len,
                    kind: s.kind as i32,
                })
                .collect(),
        }
    }
    fn from_pb(p: &pb::ChunkedText) -> Self {
        m::ChunkedText {
            source: p.source.clone(),
            spans: p
                .spans
                .iter()
                .map(|s| m::TextSpan {
                    start: s.start,
                    len: s.len,
                    kind: kind_from_pb(s.kind),
                })
                .collect(),
        }
    }
    fn to_owned_bebop(&self) -> owned::ChunkedText {
        owned::ChunkedText {
            source: self.source.clone(),
            spans: self.spans.iter().map(span_to_bop).collect(),
        }
    }
    fn from_owned_bebop(o: &owned::ChunkedText) -> Self {
        m::ChunkedText {
            source: o.source.clone(),
            spans: o.spans.iter().map(span_from_bop).collect(),
        }
    }
    fn view<'a>(&'a self, arena: &'a Bump) -> bop::ChunkedText<'a> {
        bop::ChunkedText {
            source: &self.source,
            spans: slice(arena, self.spans.iter().map(span_to_bop)),
        }
    }
    fn view_to_owned(v: bop::ChunkedText<'_>) -> owned::ChunkedText {
        v.to_owned_value()
    }
}

fn emb_to_pb(e: &m::EmbeddingBf16) -> pb::EmbeddingBf16 {
    pb::EmbeddingBf16 {
        id: e.id.to_vec(),
        vector: le_bytes(&e.vector),
    }
}

fn emb_from_pb(p: &pb::EmbeddingBf16) -> m::EmbeddingBf16 {
    m::EmbeddingBf16 {
        id: uuid16(&p.id),
        vector: from_le_bytes(&p.vector),
    }
}

fn emb_to_owned(e: &m::EmbeddingBf16) -> owned::EmbeddingBF16 {
    owned::EmbeddingBF16 {
        id: Uuid::from_array(e.id),
        vector: bf16_vec(&e.vector),
    }
}

fn emb_from_owned(o: &owned::EmbeddingBF16) -> m::EmbeddingBf16 {
    m::EmbeddingBf16 {
        id: *o.id.as_bytes(),
        vector: bits_of(&o.vector),
    }
}

fn emb_view(e: &m::EmbeddingBf16) -> bop::EmbeddingBF16<'_> {
    bop::EmbeddingBF16 {
        id: Uuid::from_array(e.id),
        vector: Array::from_slice(bf16s(&e.vector)),
    }
}

impl Shape for m::EmbeddingBf16 {
    type Pb = pb::EmbeddingBf16;
    type Owned = owned::EmbeddingBF16;
    type View<'a> = bop::EmbeddingBF16<'a>;
    const SCHEMA_TYPE: &'static str = "EmbeddingBF16";

    fn to_pb(&self) -> pb::EmbeddingBf16 {
        emb_to_pb(self)
    }
    fn from_pb(p: &pb::EmbeddingBf16) -> Self {
        emb_from_pb(p)
    }
    fn to_owned_bebop(&self) -> owned::EmbeddingBF16 {
        emb_to_owned(self)
    }
    fn from_owned_bebop(o: &owned::EmbeddingBF16) -> Self {
        emb_from_owned(o)
    }
    fn view<'a>(&'a self, _arena: &'a Bump) -> bop::EmbeddingBF16<'a> {
        emb_view(self)
    }
    fn view_to_owned(v: bop::EmbeddingBF16<'_>) -> owned::EmbeddingBF16 {
        v.to_owned_value()
    }
}

impl Shape for m::EmbeddingF32 {
    type Pb = pb::EmbeddingF32;
    type Owned = owned::EmbeddingF32;
    type View<'a> = bop::EmbeddingF32<'a>;
    const SCHEMA_TYPE: &'static str = "EmbeddingF32";

    fn to_pb(&self) -> pb::EmbeddingF32 {
        pb::EmbeddingF32 {
            id: self.id.to_vec(),
            vector: self.vector.clone(),
        }
    }
    fn from_pb(p: &pb::EmbeddingF32) -> Self {
        m::EmbeddingF32 {
            id: uuid16(&p.id),
            vector: p.vector.clone(),
        }
    }
    fn to_owned_bebop(&self) -> owned::EmbeddingF32 {
        owned::EmbeddingF32 {
            id: Uuid::from_array(self.id),
            vector: self.vector.clone(),
        }
    }
    fn from_owned_bebop(o: &owned::EmbeddingF32) -> Self {
        m::EmbeddingF32 {
            id: *o.id.as_bytes(),
            vector: o.vector.clone(),
        }
    }
    fn view<'a>(&'a self, _arena: &'a Bump) -> bop::EmbeddingF32<'a> {
        bop::EmbeddingF32 {
            id: Uuid::from_array(self.id),
            vector: Array::from_slice(&self.vector),
        }
    }
    fn view_to_owned(v: bop::EmbeddingF32<'_>) -> owned::EmbeddingF32 {
        v.to_owned_value()
    }
}

impl Shape for m::EmbeddingBatch {
    type Pb = pb::EmbeddingBatch;
    type Owned = owned::EmbeddingBatch;
    type View<'a> = bop::EmbeddingBatch<'a>;
    const SCHEMA_TYPE: &'static str = "EmbeddingBatch";

    fn to_pb(&self) -> pb::EmbeddingBatch {
        pb::EmbeddingBatch {
            model: self.model.clone(),
            embeddings: self.embeddings.iter().map(emb_to_pb).collect(),
            usage_tokens: self.usage_tokens,
        }
    }
    fn from_pb(p: &pb::EmbeddingBatch) -> Self {
        m::EmbeddingBatch {
            model: p.model.clone(),
            embeddings: p.embeddings.iter().map(emb_from_pb).collect(),
            usage_tokens: p.usage_tokens,
        }
    }
    fn to_owned_bebop(&self) -> owned::EmbeddingBatch {
        owned::EmbeddingBatch {
            model: self.model.clone(),
            embeddings: self.embeddings.iter().map(emb_to_owned).collect(),
            usage_tokens: self.usage_tokens,
        }
    }
    fn from_owned_bebop(o: &owned::EmbeddingBatch) -> Self {
        m::EmbeddingBatch {
            model: o.model.clone(),
            embeddings: o.embeddings.iter().map(emb_from_owned).collect(),
            usage_tokens: o.usage_tokens,
        }
    }
    fn view<'a>(&'a self, arena: &'a Bump) -> bop::EmbeddingBatch<'a> {
        bop::EmbeddingBatch {
            model: &self.model,
            embeddings: slice(arena, self.embeddings.iter().map(emb_view)),
            usage_tokens: self.usage_tokens,
        }
    }
    fn view_to_owned(v: bop::EmbeddingBatch<'_>) -> owned::EmbeddingBatch {
        v.to_owned_value()
    }
}

impl Shape for m::LlmStreamChunk {
    type Pb = pb::LlmStreamChunk;
    type Owned = owned::LLMStreamChunk;
    type View<'a> = bop::LLMStreamChunk<'a>;
    const SCHEMA_TYPE: &'static str = "LLMStreamChunk";

    fn to_pb(&self) -> pb::LlmStreamChunk {
        pb::LlmStreamChunk {
            chunk_id: self.chunk_id,
            tokens: self.tokens.clone(),
            logprobs: self
                .logprobs
                .iter()
                .map(|a| pb::TokenAlternatives {
                    top_tokens: a
                        .top_tokens
                        .iter()
                        .map(|t| pb::TokenLogprob {
                            token: t.token.clone(),
                            token_id: t.token_id,
                            logprob: t.logprob,
                        })
                        .collect(),
                })
                .collect(),
            finish_reason: self.finish_reason.clone(),
        }
    }
    fn from_pb(p: &pb::LlmStreamChunk) -> Self {
        m::LlmStreamChunk {
            chunk_id: p.chunk_id,
            tokens: p.tokens.clone(),
            logprobs: p
                .logprobs
                .iter()
                .map(|a| m::TokenAlternatives {
                    top_tokens: a
                        .top_tokens
                        .iter()
                        .map(|t| m::TokenLogprob {
                            token: t.token.clone(),
                            token_id: t.token_id,
                            logprob: t.logprob,
                        })
                        .collect(),
                })
                .collect(),
            finish_reason: p.finish_reason.clone(),
        }
    }
    fn to_owned_bebop(&self) -> owned::LLMStreamChunk {
        owned::LLMStreamChunk {
            chunk_id: self.chunk_id,
            tokens: self.tokens.clone(),
            logprobs: self
                .logprobs
                .iter()
                .map(|a| owned::TokenAlternatives {
                    top_tokens: a
                        .top_tokens
                        .iter()
                        .map(|t| owned::TokenLogprob {
                            token: t.token.clone(),
                            token_id: t.token_id,
                            logprob: t.logprob,
                        })
                        .collect(),
                })
                .collect(),
            finish_reason: self.finish_reason.clone(),
        }
    }
    fn from_owned_bebop(o: &owned::LLMStreamChunk) -> Self {
        m::LlmStreamChunk {
            chunk_id: o.chunk_id,
            tokens: o.tokens.clone(),
            logprobs: o
                .logprobs
                .iter()
                .map(|a| m::TokenAlternatives {
                    top_tokens: a
                        .top_tokens
                        .iter()
                        .map(|t| m::TokenLogprob {
                            token: t.token.clone(),
                            token_id: t.token_id,
                            logprob: t.logprob,
                        })
                        .collect(),
                })
                .collect(),
            finish_reason: o.finish_reason.clone(),
        }
    }
    fn view<'a>(&'a self, arena: &'a Bump) -> bop::LLMStreamChunk<'a> {
        bop::LLMStreamChunk {
            chunk_id: self.chunk_id,
            tokens: slice(arena, self.tokens.iter().map(String::as_str)),
            logprobs: slice(
                arena,
                self.logprobs.iter().map(|a| bop::TokenAlternatives {
                    top_tokens: slice(
                        arena,
                        a.top_tokens.iter().map(|t| bop::TokenLogprob {
                            token: &t.token,
                            token_id: t.token_id,
                            logprob: t.logprob,
                        }),
                    ),
                }),
            ),
            finish_reason: &self.finish_reason,
        }
    }
    fn view_to_owned(v: bop::LLMStreamChunk<'_>) -> owned::LLMStreamChunk {
        v.to_owned_value()
    }
}

impl Shape for m::TensorShard {
    type Pb = pb::TensorShard;
    type Owned = owned::TensorShard;
    type View<'a> = bop::TensorShard<'a>;
    const SCHEMA_TYPE: &'static str = "TensorShard";

    fn to_pb(&self) -> pb::TensorShard {
        pb::TensorShard {
            name: self.name.clone(),
            shape: self.shape.clone(),
            dtype: self.dtype.clone(),
            data: le_bytes(&self.data),
            offset: self.offset,
            total_elements: self.total_elements,
        }
    }
    fn from_pb(p: &pb::TensorShard) -> Self {
        m::TensorShard {
            name: p.name.clone(),
            shape: p.shape.clone(),
            dtype: p.dtype.clone(),
            data: from_le_bytes(&p.data),
            offset: p.offset,
            total_elements: p.total_elements,
        }
    }
    fn to_owned_bebop(&self) -> owned::TensorShard {
        owned::TensorShard {
            name: self.name.clone(),
            shape: self.shape.clone(),
            dtype: self.dtype.clone(),
            data: bf16_vec(&self.data),
            offset: self.offset,
            total_elements: self.total_elements,
        }
    }
    fn from_owned_bebop(o: &owned::TensorShard) -> Self {
        m::TensorShard {
            name: o.name.clone(),
            shape: o.shape.clone(),
            dtype: o.dtype.clone(),
            data: bits_of(&o.data),
            offset: o.offset,
            total_elements: o.total_elements,
        }
    }
    fn view<'a>(&'a self, _arena: &'a Bump) -> bop::TensorShard<'a> {
        bop::TensorShard {
            name: &self.name,
            shape: Array::from_slice(&self.shape),
            dtype: &self.dtype,
            data: Array::from_slice(bf16s(&self.data)),
            offset: self.offset,
            total_elements: self.total_elements,
        }
    }
    fn view_to_owned(v: bop::TensorShard<'_>) -> owned::TensorShard {
        v.to_owned_value()
    }
}

fn duration_to_bop(d: m::Duration) -> bebop_runtime::Duration {
    bebop_runtime::Duration::new_const(d.seconds, d.nanos)
}

fn duration_from_bop(d: bebop_runtime::Duration) -> m::Duration {
    m::Duration {
        seconds: d.seconds(),
        nanos: d.nanos(),
    }
}

fn timing_to_bop(t: &m::InferenceTiming) -> bop::InferenceTiming {
    bop::InferenceTiming {
        queue_time: duration_to_bop(t.queue_time),
        inference_time: duration_to_bop(t.inference_time),
        tokens_per_second: t.tokens_per_second,
    }
}

fn timing_from_bop(t: &bop::InferenceTiming) -> m::InferenceTiming {
    m::InferenceTiming {
        queue_time: duration_from_bop(t.queue_time),
        inference_time: duration_from_bop(t.inference_time),
        tokens_per_second: t.tokens_per_second,
    }
}

fn duration_from_pb(d: Option<&pb::Duration>) -> m::Duration {
    d.map_or(
        m::Duration {
            seconds: 0,
            nanos: 0,
        },
        |d| m::Duration {
            seconds: d.seconds,
            nanos: d.nanos,
        },
    )
}

impl Shape for m::InferenceResponse {
    type Pb = pb::InferenceResponse;
    type Owned = owned::InferenceResponse;
    type View<'a> = bop::InferenceResponse<'a>;
    const SCHEMA_TYPE: &'static str = "InferenceResponse";

    fn to_pb(&self) -> pb::InferenceResponse {
        let d = |d: m::Duration| pb::Duration {
            seconds: d.seconds,
            nanos: d.nanos,
        };
        pb::InferenceResponse {
            request_id: self.request_id.to_vec(),
            embeddings: self.embeddings.iter().map(emb_to_pb).collect(),
            timing: Some(pb::InferenceTiming {
                queue_time: Some(d(self.timing.queue_time)),
                inference_time: Some(d(self.timing.inference_time)),
                tokens_per_second: self.timing.tokens_per_second,
            }),
        }
    }
    fn from_pb(p: &pb::InferenceResponse) -> Self {
        let timing = p.timing.unwrap_or_default();
        m::InferenceResponse {
            request_id: uuid16(&p.request_id),
            embeddings: p.embeddings.iter().map(emb_from_pb).collect(),
            timing: m::InferenceTiming {
                queue_time: duration_from_pb(timing.queue_time.as_ref()),
                inference_time: duration_from_pb(timing.inference_time.as_ref()),
                tokens_per_second: timing.tokens_per_second,
            },
        }
    }
    fn to_owned_bebop(&self) -> owned::InferenceResponse {
        owned::InferenceResponse {
            request_id: Uuid::from_array(self.request_id),
            embeddings: self.embeddings.iter().map(emb_to_owned).collect(),
            timing: timing_to_bop(&self.timing),
        }
    }
    fn from_owned_bebop(o: &owned::InferenceResponse) -> Self {
        m::InferenceResponse {
            request_id: *o.request_id.as_bytes(),
            embeddings: o.embeddings.iter().map(emb_from_owned).collect(),
            timing: timing_from_bop(&o.timing),
        }
    }
    fn view<'a>(&'a self, arena: &'a Bump) -> bop::InferenceResponse<'a> {
        bop::InferenceResponse {
            request_id: Uuid::from_array(self.request_id),
            embeddings: slice(arena, self.embeddings.iter().map(emb_view)),
            timing: timing_to_bop(&self.timing),
        }
    }
    fn view_to_owned(v: bop::InferenceResponse<'_>) -> owned::InferenceResponse {
        v.to_owned_value()
    }
}

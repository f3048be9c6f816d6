//! Reading every field of a decoded value ("walk"), for the "decode + walk" measurements.
//!
//! Every form of a workload (model, prost message, Bebop owned type, Bebop view, rkyv archive)
//! feeds the same sequence of numbers into a [`Hasher`], so the checksum of any decoded form
//! equals the checksum of the original value: the tests use that to check the walks read
//! everything. What is read:
//! - every scalar field;
//! - every element of every array, scalar arrays included (summed, so the compiler may
//!   vectorise the loop; arrays of 16-bit values block by block, see [`Hasher::halves`]);
//! - of every string, its length and its first and last bytes (reading a string field means
//!   getting hold of a `&str`; hashing its text would only add the same cost to every format).

use std::collections::BTreeMap;

use crate::bop::{self, owned};
use crate::model::{self as m};
use crate::pb;

/// Accumulates what a walk reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hasher(pub u64);

impl Hasher {
    /// Mixes in one number.
    #[inline]
    pub fn int(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x0000_0100_0000_01B3);
    }

    /// Mixes in a string's length and first and last bytes.
    #[inline]
    pub fn str(&mut self, s: &str) {
        let b = s.as_bytes();
        self.int(b.len() as u64);
        self.int(b.first().map_or(0x100, |&c| u64::from(c)));
        self.int(b.last().map_or(0x100, |&c| u64::from(c)));
    }

    /// Mixes in a scalar array: its length and the wrapping sum of its elements.
    #[inline]
    pub fn scalars(&mut self, len: usize, elements: impl Iterator<Item = u64>) {
        self.int(len as u64);
        self.int(elements.fold(0u64, u64::wrapping_add));
    }

    /// Mixes in an array of 16-bit values (bfloat16 bits) given in blocks of at most
    /// [`HALVES_BLOCK`] elements: its length and the wrapping sum of its elements, the same
    /// number [`Hasher::scalars`] gives. Each block is summed in 32-bit lanes, which cannot
    /// overflow for such a block (65,536 × 65,535 < 2³²) and vectorise four or eight to a
    /// register where 64-bit lanes need widening twice; every form of a workload reads its
    /// arrays this way.
    #[inline]
    pub fn halves<B: Iterator<Item = u16>>(&mut self, len: usize, blocks: impl Iterator<Item = B>) {
        self.int(len as u64);
        self.int(sum_halves(blocks));
    }

    /// Mixes in a uuid.
    #[inline]
    pub fn uuid(&mut self, id: &[u8; 16]) {
        let (lo, hi) = id.split_at(8);
        self.int(u64::from_le_bytes(lo.try_into().unwrap_or_default()));
        self.int(u64::from_le_bytes(hi.try_into().unwrap_or_default()));
    }
}

/// Reads every field of a value.
pub trait Walk {
    /// Feeds every field into `h`.
    fn walk(&self, h: &mut Hasher);
}

/// The checksum of a walk over `value`.
pub fn checksum<T: Walk + ?Sized>(value: &T) -> u64 {
    let mut h = Hasher::default();
    value.walk(&mut h);
    h.0
}

impl<T: Walk + ?Sized> Walk for &T {
    fn walk(&self, h: &mut Hasher) {
        (**self).walk(h);
    }
}

/// The most elements of a block given to [`Hasher::halves`].
pub const HALVES_BLOCK: usize = 65_536;

/// The wrapping sum of 16-bit values given in blocks of at most [`HALVES_BLOCK`], each
/// summed in 32-bit lanes ([`Hasher::halves`]).
#[inline]
pub fn sum_halves<B: Iterator<Item = u16>>(blocks: impl Iterator<Item = B>) -> u64 {
    blocks
        .map(|block| u64::from(block.fold(0u32, |a, x| a.wrapping_add(u32::from(x)))))
        .fold(0u64, u64::wrapping_add)
}

/// Little-endian 16-bit values in blocks of at most [`HALVES_BLOCK`] (prost's `bytes`).
pub fn halves_le(bytes: &[u8]) -> impl Iterator<Item = impl Iterator<Item = u16> + '_> + '_ {
    bytes.chunks(2 * HALVES_BLOCK).map(|block| {
        block
            .chunks_exact(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
    })
}

// ---- Person ----

impl Walk for m::Person {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.id as u64);
        h.str(&self.name);
        h.str(&self.email);
        h.int(self.age as u64);
    }
}
impl Walk for pb::Person {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.id as u64);
        h.str(&self.name);
        h.str(&self.email);
        h.int(self.age as u64);
    }
}
impl Walk for owned::Person {
    fn walk(&self, h: &mut Hasher) {
        self.as_view().walk(h);
    }
}
impl Walk for bop::Person<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.id as u64);
        h.str(self.name);
        h.str(self.email);
        h.int(self.age as u64);
    }
}
impl Walk for m::ArchivedPerson {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.id.to_native() as u64);
        h.str(&self.name);
        h.str(&self.email);
        h.int(self.age.to_native() as u64);
    }
}

// ---- Order ----

macro_rules! walk_order {
    ($self:ident, $h:ident, $ids:expr, $qty:expr, $get:expr) => {{
        $h.int($get($self.order_id) as u64);
        $h.int($get($self.customer_id) as u64);
        $h.scalars($ids.len(), $ids);
        $h.scalars($qty.len(), $qty);
        $h.int($get($self.total).to_bits());
        $h.int($get($self.timestamp) as u64);
    }};
}

fn same<T>(x: T) -> T {
    x
}

impl Walk for m::Order {
    fn walk(&self, h: &mut Hasher) {
        walk_order!(
            self,
            h,
            self.item_ids.iter().map(|&x| x as u64),
            self.quantities.iter().map(|&x| x as u64),
            same
        );
    }
}
impl Walk for pb::Order {
    fn walk(&self, h: &mut Hasher) {
        walk_order!(
            self,
            h,
            self.item_ids.iter().map(|&x| x as u64),
            self.quantities.iter().map(|&x| x as u64),
            same
        );
    }
}
impl Walk for owned::Order {
    fn walk(&self, h: &mut Hasher) {
        self.as_view().walk(h);
    }
}
impl Walk for bop::Order<'_> {
    fn walk(&self, h: &mut Hasher) {
        walk_order!(
            self,
            h,
            self.item_ids.iter().map(|x| x as u64),
            self.quantities.iter().map(|x| x as u64),
            same
        );
    }
}
impl Walk for m::ArchivedOrder {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.order_id.to_native() as u64);
        h.int(self.customer_id.to_native() as u64);
        h.scalars(
            self.item_ids.len(),
            self.item_ids.iter().map(|x| x.to_native() as u64),
        );
        h.scalars(
            self.quantities.len(),
            self.quantities.iter().map(|x| x.to_native() as u64),
        );
        h.int(self.total.to_native().to_bits());
        h.int(self.timestamp.to_native() as u64);
    }
}

// ---- Event ----

fn walk_event(h: &mut Hasher, id: i64, ty: &str, source: &str, ts: i64, payload: &[u8]) {
    h.int(id as u64);
    h.str(ty);
    h.str(source);
    h.int(ts as u64);
    h.scalars(payload.len(), payload.iter().map(|&b| u64::from(b)));
}

impl Walk for m::Event {
    fn walk(&self, h: &mut Hasher) {
        walk_event(
            h,
            self.id,
            &self.r#type,
            &self.source,
            self.timestamp,
            &self.payload,
        );
    }
}
impl Walk for pb::Event {
    fn walk(&self, h: &mut Hasher) {
        walk_event(
            h,
            self.id,
            &self.r#type,
            &self.source,
            self.timestamp,
            &self.payload,
        );
    }
}
impl Walk for owned::Event {
    fn walk(&self, h: &mut Hasher) {
        walk_event(
            h,
            self.id,
            &self.r#type,
            &self.source,
            self.timestamp,
            &self.payload,
        );
    }
}
impl Walk for bop::Event<'_> {
    fn walk(&self, h: &mut Hasher) {
        walk_event(
            h,
            self.id,
            self.r#type,
            self.source,
            self.timestamp,
            self.payload,
        );
    }
}
impl Walk for m::ArchivedEvent {
    fn walk(&self, h: &mut Hasher) {
        walk_event(
            h,
            self.id.to_native(),
            &self.r#type,
            &self.source,
            self.timestamp.to_native(),
            &self.payload,
        );
    }
}

// ---- TreeNode ----

impl Walk for m::TreeNode {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.value as u64);
        h.int(self.children.len() as u64);
        for c in &self.children {
            c.walk(h);
        }
    }
}
impl Walk for pb::TreeNode {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.value as u64);
        h.int(self.children.len() as u64);
        for c in &self.children {
            c.walk(h);
        }
    }
}
impl Walk for owned::TreeNode {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.value.unwrap_or_default() as u64);
        let children = self.children.as_deref().unwrap_or_default();
        h.int(children.len() as u64);
        for c in children {
            c.walk(h);
        }
    }
}
impl Walk for bop::TreeNode<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.value.unwrap_or_default() as u64);
        let children = self.children.unwrap_or_default();
        h.int(children.len() as u64);
        for c in children.iter() {
            c.walk(h);
        }
    }
}
impl Walk for m::ArchivedTreeNode {
    fn walk(&self, h: &mut Hasher) {
        h.int(self.value.to_native() as u64);
        h.int(self.children.len() as u64);
        for c in self.children.iter() {
            c.walk(h);
        }
    }
}

// ---- JsonValue ----

impl Walk for m::JsonValue {
    fn walk(&self, h: &mut Hasher) {
        match self {
            m::JsonValue::Null => h.int(1),
            m::JsonValue::Bool(b) => {
                h.int(2);
                h.int(u64::from(*b));
            }
            m::JsonValue::Number(n) => {
                h.int(3);
                h.int(n.to_bits());
            }
            m::JsonValue::String(s) => {
                h.int(4);
                h.str(s);
            }
            m::JsonValue::List(items) => {
                h.int(5);
                h.int(items.len() as u64);
                for i in items {
                    i.walk(h);
                }
            }
            m::JsonValue::Object(fields) => {
                h.int(6);
                walk_object(h, fields);
            }
        }
    }
}

fn walk_object<V: Walk>(h: &mut Hasher, fields: &BTreeMap<String, V>) {
    h.int(fields.len() as u64);
    for (k, v) in fields {
        h.str(k);
        v.walk(h);
    }
}

impl Walk for pb::JsonValue {
    fn walk(&self, h: &mut Hasher) {
        use pb::json_value::Kind;
        match &self.kind {
            None | Some(Kind::NullValue(_)) => h.int(1),
            Some(Kind::BoolValue(b)) => {
                h.int(2);
                h.int(u64::from(*b));
            }
            Some(Kind::NumberValue(n)) => {
                h.int(3);
                h.int(n.to_bits());
            }
            Some(Kind::StringValue(s)) => {
                h.int(4);
                h.str(s);
            }
            Some(Kind::ListValue(l)) => {
                h.int(5);
                h.int(l.values.len() as u64);
                for i in &l.values {
                    i.walk(h);
                }
            }
            Some(Kind::ObjectValue(o)) => {
                h.int(6);
                walk_object(h, &o.fields);
            }
        }
    }
}

impl Walk for owned::JsonValue {
    fn walk(&self, h: &mut Hasher) {
        match self {
            owned::JsonValue::Null(_) => h.int(1),
            owned::JsonValue::Bool(b) => {
                h.int(2);
                h.int(u64::from(b.value.unwrap_or_default()));
            }
            owned::JsonValue::Number(n) => {
                h.int(3);
                h.int(n.value.unwrap_or_default().to_bits());
            }
            owned::JsonValue::String(s) => {
                h.int(4);
                h.str(s.value.as_deref().unwrap_or_default());
            }
            owned::JsonValue::List(l) => {
                h.int(5);
                let items = l.values.as_deref().unwrap_or_default();
                h.int(items.len() as u64);
                for i in items {
                    i.walk(h);
                }
            }
            owned::JsonValue::Object(o) => {
                h.int(6);
                match &o.fields {
                    Some(fields) => walk_object(h, fields),
                    None => h.int(0),
                }
            }
        }
    }
}

fn walk_map_view(h: &mut Hasher, fields: Option<bebop_runtime::Map<'_, &str, bop::JsonValue<'_>>>) {
    match fields {
        Some(fields) => {
            h.int(fields.len() as u64);
            // The entry is bound by reference, not destructured by value: moved out of the
            // entry, the 40-byte value got a second stack slot, filled by a wide copy of
            // the narrow stores that had just written the first, a store-forwarding stall
            // per entry (JsonLarge decode + walk 2.24 µs that way, 2.00 this way, for 3%
            // more instructions; docs/decisions.md D50). rkyv's walks get references from
            // their archive.
            for entry in fields.iter() {
                let (k, v) = &entry;
                h.str(k);
                v.walk(h);
            }
        }
        None => h.int(0),
    }
}

impl Walk for bop::JsonValue<'_> {
    fn walk(&self, h: &mut Hasher) {
        match self {
            bop::JsonValue::Null(_) => h.int(1),
            bop::JsonValue::Bool(b) => {
                h.int(2);
                h.int(u64::from(b.value.unwrap_or_default()));
            }
            bop::JsonValue::Number(n) => {
                h.int(3);
                h.int(n.value.unwrap_or_default().to_bits());
            }
            bop::JsonValue::String(s) => {
                h.int(4);
                h.str(s.value.unwrap_or_default());
            }
            bop::JsonValue::List(l) => {
                h.int(5);
                let items = l.values.unwrap_or_default();
                h.int(items.len() as u64);
                for i in items.iter() {
                    i.walk(h);
                }
            }
            bop::JsonValue::Object(o) => {
                h.int(6);
                walk_map_view(h, o.fields);
            }
        }
    }
}

impl Walk for m::ArchivedJsonValue {
    fn walk(&self, h: &mut Hasher) {
        match self {
            m::ArchivedJsonValue::Null => h.int(1),
            m::ArchivedJsonValue::Bool(b) => {
                h.int(2);
                h.int(u64::from(*b));
            }
            m::ArchivedJsonValue::Number(n) => {
                h.int(3);
                h.int(n.to_native().to_bits());
            }
            m::ArchivedJsonValue::String(s) => {
                h.int(4);
                h.str(s);
            }
            m::ArchivedJsonValue::List(items) => {
                h.int(5);
                h.int(items.len() as u64);
                for i in items.iter() {
                    i.walk(h);
                }
            }
            m::ArchivedJsonValue::Object(fields) => {
                h.int(6);
                h.int(fields.len() as u64);
                for (k, v) in fields.iter() {
                    h.str(k);
                    v.walk(h);
                }
            }
        }
    }
}

// ---- Document ----

impl Walk for m::Document {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.title);
        h.str(&self.body);
        walk_object(h, &self.metadata);
    }
}
impl Walk for pb::Document {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.title);
        h.str(&self.body);
        walk_object(h, &self.metadata);
    }
}
impl Walk for owned::Document {
    fn walk(&self, h: &mut Hasher) {
        h.str(self.title.as_deref().unwrap_or_default());
        h.str(self.body.as_deref().unwrap_or_default());
        match &self.metadata {
            Some(fields) => walk_object(h, fields),
            None => h.int(0),
        }
    }
}
impl Walk for bop::Document<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.str(self.title.unwrap_or_default());
        h.str(self.body.unwrap_or_default());
        walk_map_view(h, self.metadata);
    }
}
impl Walk for m::ArchivedDocument {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.title);
        h.str(&self.body);
        h.int(self.metadata.len() as u64);
        for (k, v) in self.metadata.iter() {
            h.str(k);
            v.walk(h);
        }
    }
}

// ---- ChunkedText ----

fn span(h: &mut Hasher, start: u32, len: u32, kind: u64) {
    h.int(u64::from(start));
    h.int(u64::from(len));
    h.int(kind);
}

impl Walk for m::ChunkedText {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.source);
        h.int(self.spans.len() as u64);
        for s in &self.spans {
            span(h, s.start, s.len, s.kind as u64);
        }
    }
}
impl Walk for pb::ChunkedText {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.source);
        h.int(self.spans.len() as u64);
        for s in &self.spans {
            span(h, s.start, s.len, s.kind as u64);
        }
    }
}
impl Walk for owned::ChunkedText {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.source);
        h.int(self.spans.len() as u64);
        for s in &self.spans {
            span(h, s.start, s.len, u64::from(u8::from(s.kind)));
        }
    }
}
impl Walk for bop::ChunkedText<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.str(self.source);
        h.int(self.spans.len() as u64);
        for s in self.spans.iter() {
            span(h, s.start, s.len, u64::from(u8::from(s.kind)));
        }
    }
}
impl Walk for m::ArchivedChunkedText {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.source);
        h.int(self.spans.len() as u64);
        for s in self.spans.iter() {
            let kind = match s.kind {
                m::ArchivedChunkKind::Unknown => 0,
                m::ArchivedChunkKind::Paragraph => 1,
                m::ArchivedChunkKind::Chapter => 2,
                m::ArchivedChunkKind::Heading => 3,
            };
            span(h, s.start.to_native(), s.len.to_native(), kind);
        }
    }
}

// ---- EmbeddingBF16 ----

impl Walk for m::EmbeddingBf16 {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(&self.id);
        h.halves(
            self.vector.len(),
            self.vector.chunks(HALVES_BLOCK).map(|c| c.iter().copied()),
        );
    }
}
impl Walk for pb::EmbeddingBf16 {
    fn walk(&self, h: &mut Hasher) {
        let mut id = [0u8; 16];
        if let Some(src) = self.id.get(..16) {
            id.copy_from_slice(src);
        }
        h.uuid(&id);
        h.halves(self.vector.len() / 2, halves_le(&self.vector));
    }
}
impl Walk for owned::EmbeddingBF16 {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(self.id.as_bytes());
        h.halves(
            self.vector.len(),
            self.vector
                .chunks(HALVES_BLOCK)
                .map(|c| c.iter().map(|b| b.to_bits())),
        );
    }
}
impl Walk for bop::EmbeddingBF16<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(self.id.as_bytes());
        h.halves(
            self.vector.len(),
            self.vector
                .chunks(HALVES_BLOCK)
                .map(|c| c.map(|b| b.to_bits())),
        );
    }
}
impl Walk for m::ArchivedEmbeddingBf16 {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(&self.id);
        h.halves(
            self.vector.len(),
            self.vector
                .chunks(HALVES_BLOCK)
                .map(|c| c.iter().map(|b| b.to_native())),
        );
    }
}

// ---- EmbeddingF32 ----

impl Walk for m::EmbeddingF32 {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(&self.id);
        h.scalars(
            self.vector.len(),
            self.vector.iter().map(|f| u64::from(f.to_bits())),
        );
    }
}
impl Walk for pb::EmbeddingF32 {
    fn walk(&self, h: &mut Hasher) {
        let mut id = [0u8; 16];
        if let Some(src) = self.id.get(..16) {
            id.copy_from_slice(src);
        }
        h.uuid(&id);
        h.scalars(
            self.vector.len(),
            self.vector.iter().map(|f| u64::from(f.to_bits())),
        );
    }
}
impl Walk for owned::EmbeddingF32 {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(self.id.as_bytes());
        h.scalars(
            self.vector.len(),
            self.vector.iter().map(|f| u64::from(f.to_bits())),
        );
    }
}
impl Walk for bop::EmbeddingF32<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(self.id.as_bytes());
        h.scalars(
            self.vector.len(),
            self.vector.iter().map(|f| u64::from(f.to_bits())),
        );
    }
}
impl Walk for m::ArchivedEmbeddingF32 {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(&self.id);
        h.scalars(
            self.vector.len(),
            self.vector
                .iter()
                .map(|f| u64::from(f.to_native().to_bits())),
        );
    }
}

// ---- EmbeddingBatch ----

impl Walk for m::EmbeddingBatch {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.model);
        h.int(self.embeddings.len() as u64);
        for e in &self.embeddings {
            e.walk(h);
        }
        h.int(u64::from(self.usage_tokens));
    }
}
impl Walk for pb::EmbeddingBatch {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.model);
        h.int(self.embeddings.len() as u64);
        for e in &self.embeddings {
            e.walk(h);
        }
        h.int(u64::from(self.usage_tokens));
    }
}
impl Walk for owned::EmbeddingBatch {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.model);
        h.int(self.embeddings.len() as u64);
        for e in &self.embeddings {
            e.walk(h);
        }
        h.int(u64::from(self.usage_tokens));
    }
}
impl Walk for bop::EmbeddingBatch<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.str(self.model);
        h.int(self.embeddings.len() as u64);
        for e in self.embeddings.iter() {
            e.walk(h);
        }
        h.int(u64::from(self.usage_tokens));
    }
}
impl Walk for m::ArchivedEmbeddingBatch {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.model);
        h.int(self.embeddings.len() as u64);
        for e in self.embeddings.iter() {
            e.walk(h);
        }
        h.int(u64::from(self.usage_tokens.to_native()));
    }
}

// ---- LLMStreamChunk ----

fn logprob(h: &mut Hasher, token: &str, id: u32, lp: f32) {
    h.str(token);
    h.int(u64::from(id));
    h.int(u64::from(lp.to_bits()));
}

impl Walk for m::LlmStreamChunk {
    fn walk(&self, h: &mut Hasher) {
        h.int(u64::from(self.chunk_id));
        h.int(self.tokens.len() as u64);
        for t in &self.tokens {
            h.str(t);
        }
        h.int(self.logprobs.len() as u64);
        for a in &self.logprobs {
            h.int(a.top_tokens.len() as u64);
            for t in &a.top_tokens {
                logprob(h, &t.token, t.token_id, t.logprob);
            }
        }
        h.str(&self.finish_reason);
    }
}
impl Walk for pb::LlmStreamChunk {
    fn walk(&self, h: &mut Hasher) {
        h.int(u64::from(self.chunk_id));
        h.int(self.tokens.len() as u64);
        for t in &self.tokens {
            h.str(t);
        }
        h.int(self.logprobs.len() as u64);
        for a in &self.logprobs {
            h.int(a.top_tokens.len() as u64);
            for t in &a.top_tokens {
                logprob(h, &t.token, t.token_id, t.logprob);
            }
        }
        h.str(&self.finish_reason);
    }
}
impl Walk for owned::LLMStreamChunk {
    fn walk(&self, h: &mut Hasher) {
        h.int(u64::from(self.chunk_id));
        h.int(self.tokens.len() as u64);
        for t in &self.tokens {
            h.str(t);
        }
        h.int(self.logprobs.len() as u64);
        for a in &self.logprobs {
            h.int(a.top_tokens.len() as u64);
            for t in &a.top_tokens {
                logprob(h, &t.token, t.token_id, t.logprob);
            }
        }
        h.str(&self.finish_reason);
    }
}
impl Walk for bop::LLMStreamChunk<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.int(u64::from(self.chunk_id));
        h.int(self.tokens.len() as u64);
        for t in self.tokens.iter() {
            h.str(t);
        }
        h.int(self.logprobs.len() as u64);
        for a in self.logprobs.iter() {
            h.int(a.top_tokens.len() as u64);
            for t in a.top_tokens.iter() {
                logprob(h, t.token, t.token_id, t.logprob);
            }
        }
        h.str(self.finish_reason);
    }
}
impl Walk for m::ArchivedLlmStreamChunk {
    fn walk(&self, h: &mut Hasher) {
        h.int(u64::from(self.chunk_id.to_native()));
        h.int(self.tokens.len() as u64);
        for t in self.tokens.iter() {
            h.str(t);
        }
        h.int(self.logprobs.len() as u64);
        for a in self.logprobs.iter() {
            h.int(a.top_tokens.len() as u64);
            for t in a.top_tokens.iter() {
                logprob(h, &t.token, t.token_id.to_native(), t.logprob.to_native());
            }
        }
        h.str(&self.finish_reason);
    }
}

// ---- TensorShard ----

impl Walk for m::TensorShard {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.name);
        h.scalars(self.shape.len(), self.shape.iter().map(|&x| u64::from(x)));
        h.str(&self.dtype);
        h.halves(
            self.data.len(),
            self.data.chunks(HALVES_BLOCK).map(|c| c.iter().copied()),
        );
        h.int(self.offset);
        h.int(self.total_elements);
    }
}
impl Walk for pb::TensorShard {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.name);
        h.scalars(self.shape.len(), self.shape.iter().map(|&x| u64::from(x)));
        h.str(&self.dtype);
        h.halves(self.data.len() / 2, halves_le(&self.data));
        h.int(self.offset);
        h.int(self.total_elements);
    }
}
impl Walk for owned::TensorShard {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.name);
        h.scalars(self.shape.len(), self.shape.iter().map(|&x| u64::from(x)));
        h.str(&self.dtype);
        h.halves(
            self.data.len(),
            self.data
                .chunks(HALVES_BLOCK)
                .map(|c| c.iter().map(|b| b.to_bits())),
        );
        h.int(self.offset);
        h.int(self.total_elements);
    }
}
impl Walk for bop::TensorShard<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.str(self.name);
        h.scalars(self.shape.len(), self.shape.iter().map(u64::from));
        h.str(self.dtype);
        h.halves(
            self.data.len(),
            self.data
                .chunks(HALVES_BLOCK)
                .map(|c| c.map(|b| b.to_bits())),
        );
        h.int(self.offset);
        h.int(self.total_elements);
    }
}
impl Walk for m::ArchivedTensorShard {
    fn walk(&self, h: &mut Hasher) {
        h.str(&self.name);
        h.scalars(
            self.shape.len(),
            self.shape.iter().map(|x| u64::from(x.to_native())),
        );
        h.str(&self.dtype);
        h.halves(
            self.data.len(),
            self.data
                .chunks(HALVES_BLOCK)
                .map(|c| c.iter().map(|b| b.to_native())),
        );
        h.int(self.offset.to_native());
        h.int(self.total_elements.to_native());
    }
}

// ---- InferenceResponse ----

fn timing(h: &mut Hasher, q: (i64, i32), i: (i64, i32), tps: f32) {
    h.int(q.0 as u64);
    h.int(q.1 as u64);
    h.int(i.0 as u64);
    h.int(i.1 as u64);
    h.int(u64::from(tps.to_bits()));
}

impl Walk for m::InferenceResponse {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(&self.request_id);
        h.int(self.embeddings.len() as u64);
        for e in &self.embeddings {
            e.walk(h);
        }
        let t = &self.timing;
        timing(
            h,
            (t.queue_time.seconds, t.queue_time.nanos),
            (t.inference_time.seconds, t.inference_time.nanos),
            t.tokens_per_second,
        );
    }
}
impl Walk for pb::InferenceResponse {
    fn walk(&self, h: &mut Hasher) {
        let mut id = [0u8; 16];
        if let Some(src) = self.request_id.get(..16) {
            id.copy_from_slice(src);
        }
        h.uuid(&id);
        h.int(self.embeddings.len() as u64);
        for e in &self.embeddings {
            e.walk(h);
        }
        let t = self.timing.unwrap_or_default();
        let d = |d: Option<pb::Duration>| d.map_or((0, 0), |d| (d.seconds, d.nanos));
        timing(h, d(t.queue_time), d(t.inference_time), t.tokens_per_second);
    }
}
/// Hashes a timing as every walk of an `InferenceResponse` does.
pub(crate) fn bop_timing(h: &mut Hasher, t: &bop::InferenceTiming) {
    timing(
        h,
        (t.queue_time.seconds(), t.queue_time.nanos()),
        (t.inference_time.seconds(), t.inference_time.nanos()),
        t.tokens_per_second,
    );
}
impl Walk for owned::InferenceResponse {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(self.request_id.as_bytes());
        h.int(self.embeddings.len() as u64);
        for e in &self.embeddings {
            e.walk(h);
        }
        bop_timing(h, &self.timing);
    }
}
impl Walk for bop::InferenceResponse<'_> {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(self.request_id.as_bytes());
        h.int(self.embeddings.len() as u64);
        for e in self.embeddings.iter() {
            e.walk(h);
        }
        bop_timing(h, &self.timing);
    }
}
impl Walk for m::ArchivedInferenceResponse {
    fn walk(&self, h: &mut Hasher) {
        h.uuid(&self.request_id);
        h.int(self.embeddings.len() as u64);
        for e in self.embeddings.iter() {
            e.walk(h);
        }
        let t = &self.timing;
        timing(
            h,
            (
                t.queue_time.seconds.to_native(),
                t.queue_time.nanos.to_native(),
            ),
            (
                t.inference_time.seconds.to_native(),
                t.inference_time.nanos.to_native(),
            ),
            t.tokens_per_second.to_native(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block sums in 32-bit lanes give the 64-bit sum, for arrays of the largest values
    /// across block boundaries, from every form that reads them in blocks.
    #[test]
    fn halves_sum_like_scalars_across_blocks() {
        for len in [
            0,
            1,
            HALVES_BLOCK - 1,
            HALVES_BLOCK,
            HALVES_BLOCK + 1,
            3 * HALVES_BLOCK + 7,
        ] {
            let values: Vec<u16> = (0..len).map(|i| u16::MAX - (i % 3) as u16).collect();
            let mut want = Hasher::default();
            want.scalars(len, values.iter().map(|&v| u64::from(v)));
            let mut from_slice = Hasher::default();
            from_slice.halves(len, values.chunks(HALVES_BLOCK).map(|c| c.iter().copied()));
            assert_eq!(from_slice, want, "slice of {len}");
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            let mut from_bytes = Hasher::default();
            from_bytes.halves(len, halves_le(&bytes));
            assert_eq!(from_bytes, want, "bytes of {len}");
            let mut wire = (len as u32).to_le_bytes().to_vec();
            wire.extend_from_slice(&bytes);
            let view = <bebop_runtime::Array<'_, u16> as bebop_runtime::Decode>::from_bytes(&wire)
                .expect("an array of u16");
            let mut from_view = Hasher::default();
            from_view.halves(len, view.chunks(HALVES_BLOCK));
            assert_eq!(from_view, want, "view of {len}");
        }
    }
}

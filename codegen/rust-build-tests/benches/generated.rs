//! Generated code against hand-written core paths, on four of the paper's workloads
//! (`benches/workloads/schemas/workloads.bop`, `docs/decisions.md` D30):
//!
//! | workload | schema type | data |
//! |---|---|---|
//! | `PersonSmall` | `struct Person` | the reference harness's record (12345, "John", "j@x.co", 30) |
//! | `OrderLarge` | `struct Order` | 100 item ids and quantities |
//! | `TreeDeep` | `message TreeNode` | a full binary tree of depth 10 (1023 nodes, leaves without `children`) |
//! | `Embedding768` | `struct EmbeddingBF16` | a uuid and 768 bfloat16 values in [-1, 1) |
//!
//! For each, the view type `bebop-build` generated (module [`benchmark`]) and a hand-written
//! implementation of the same schema type on the `bebop-core` primitives
//! ([`bebop_runtime::Reader`], [`bebop_runtime::Sink`], [`bebop_runtime::Array`]):
//! `bebop_conformance::{Person, TreeNode, Embedding}`, whose schemas are exactly the
//! benchmark's, and [`hand::Order`] below. `TreeDeep` has a third side,
//! `hand_skip`: [`hand::TreeNode`], the conformance crate's node plus a `Decode::skip` that
//! hops over a node by its length prefix as generated messages do (without it, iterating a
//! decoded array of nodes decodes each node's subtree again to find the next node). All are
//! timed on the same value and bytes for:
//!
//! - `encode`: a value built from borrowed data, into a caller-supplied slice;
//! - `decode`: `from_bytes` to a view (which validates everything: after it no read can fail);
//! - `decode+walk`: `from_bytes`, then reading every field (every array element, every node).
//!
//! Before timing, each workload checks that both implementations encode to the same bytes,
//! that each decodes the other's bytes, and that the walks agree. The data is built
//! deterministically (a fixed-seed generator), with the reference harness's shapes and sizes
//! (values drawn differently; wire sizes depend only on the shapes).
//!
//! ```text
//! cargo bench -p bebop-rust-build-tests --bench generated -- --warm-up-time 1 --measurement-time 2
//! ```
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use bebop_runtime::{Array, Decode, Encode, EncodeExt, Uuid, bf16};
use bebop_rust_build_tests::benchmark;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};

/// Hand-written implementations of benchmark types that `bebop-conformance` does not have.
mod hand {
    use bebop_runtime::{Array, Decode, Encode, Error, Reader, Sink, WireSize, field_size};

    /// ```bebop
    /// struct Order {
    ///     order_id: int64; customer_id: int64; item_ids: int64[]; quantities: int32[];
    ///     total: float64; timestamp: int64;
    /// }
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Default)]
    pub struct Order<'a> {
        /// `order_id: int64`
        pub order_id: i64,
        /// `customer_id: int64`
        pub customer_id: i64,
        /// `item_ids: int64[]`
        pub item_ids: Array<'a, i64>,
        /// `quantities: int32[]`
        pub quantities: Array<'a, i32>,
        /// `total: float64`
        pub total: f64,
        /// `timestamp: int64`
        pub timestamp: i64,
    }

    impl WireSize for Order<'_> {
        const MIN_SIZE: usize = 8 + 8 + 4 + 4 + 8 + 8;
    }

    impl<'a> Decode<'a> for Order<'a> {
        #[inline]
        fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
            Ok(Order {
                order_id: r.read()?,
                customer_id: r.read()?,
                item_ids: r.read()?,
                quantities: r.read()?,
                total: r.read()?,
                timestamp: r.read()?,
            })
        }
    }

    impl Encode for Order<'_> {
        #[inline]
        fn encoded_size(&self) -> usize {
            32 + self.item_ids.encoded_size() + self.quantities.encoded_size()
        }
        #[inline]
        fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
            self.order_id.encode(s)?;
            self.customer_id.encode(s)?;
            self.item_ids.encode(s)?;
            self.quantities.encode(s)?;
            self.total.encode(s)?;
            self.timestamp.encode(s)
        }
    }

    /// ```bebop
    /// message TreeNode { value(1): int32; children(2): TreeNode[]; }
    /// ```
    /// `bebop_conformance::TreeNode` plus a [`Decode::skip`] that hops over the message by
    /// its length prefix (as generated messages do), so that iterating a decoded array of
    /// nodes does not decode each node's subtree again to find where the next one starts.
    #[derive(Clone, Copy, Debug, PartialEq, Default)]
    pub struct TreeNode<'a> {
        /// `value(1): int32`
        pub value: Option<i32>,
        /// `children(2): TreeNode[]`
        pub children: Option<Array<'a, TreeNode<'a>>>,
    }

    impl TreeNode<'_> {
        fn body_size(&self) -> usize {
            field_size(&self.value) + field_size(&self.children) + 1
        }
    }

    impl WireSize for TreeNode<'_> {
        const MIN_SIZE: usize = 5;
    }

    impl<'a> Decode<'a> for TreeNode<'a> {
        #[inline]
        fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
            r.message(|r| {
                let mut out = TreeNode::default();
                loop {
                    match r.read_tag()? {
                        1 => out.value = Some(r.read()?),
                        2 => out.children = Some(r.read()?),
                        _ => break,
                    }
                }
                Ok(out)
            })
        }
        #[inline]
        fn skip(r: &mut Reader<'a>) -> Result<(), Error> {
            r.skip_prefixed()
        }
    }

    impl Encode for TreeNode<'_> {
        #[inline]
        fn encoded_size(&self) -> usize {
            4 + self.body_size()
        }
        #[inline]
        fn encode<S: Sink>(&self, s: &mut S) -> Result<(), S::Error> {
            s.write_prefixed(
                || self.body_size(),
                |s| {
                    if let Some(v) = &self.value {
                        s.write_field(1, v)?;
                    }
                    if let Some(v) = &self.children {
                        s.write_field(2, v)?;
                    }
                    s.write(&[0])
                },
            )
        }
    }
}

/// SplitMix64: the deterministic source of the workloads' values.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An integer in `lo..=hi` (the slight modulo bias does not matter here).
    fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    /// A float in `lo..hi`.
    fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// The reference harness's timestamp constant.
const TIMESTAMP: i64 = 1_704_067_200_000;

/// OrderLarge's data: ids, customer, 100 items with quantities 1..=10, and the total.
struct OrderData {
    order_id: i64,
    customer_id: i64,
    item_ids: Vec<i64>,
    quantities: Vec<i32>,
    total: f64,
}

fn order_data(rng: &mut Rng) -> OrderData {
    let mut d = OrderData {
        order_id: rng.int_in(1, 1_000_000),
        customer_id: rng.int_in(1, 1_000_000),
        item_ids: Vec::with_capacity(100),
        quantities: Vec::with_capacity(100),
        total: 0.0,
    };
    for _ in 0..100 {
        d.item_ids.push(rng.int_in(1, 1_000_000));
        let qty = rng.int_in(1, 10) as i32;
        d.quantities.push(qty);
        d.total += rng.f64_in(10.0, 10_000.0) * f64::from(qty);
    }
    d
}

/// Embedding768's data: a version-4 uuid and 768 bfloat16 values in [-1, 1).
fn embedding_data(rng: &mut Rng) -> (Uuid, Vec<bf16>) {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&rng.next().to_le_bytes());
    id[8..].copy_from_slice(&rng.next().to_le_bytes());
    id[6] = (id[6] & 0x0F) | 0x40;
    id[8] = (id[8] & 0x3F) | 0x80;
    let id = Uuid::from_array(id);
    let vector = (0..768)
        .map(|_| bf16::from_f64(rng.f64_in(-1.0, 1.0)))
        .collect();
    (id, vector)
}

/// TreeDeep as a view built from borrowed nodes: a full binary tree of depth 10 whose node
/// at depth `d` and position `i` holds `d * 100 + i`; leaves have no `children` field.
///
/// Views borrow their children, so each level is built from the one below and leaked (a
/// few kilobytes, once per process).
fn deep_tree<T: Copy + 'static>(node: impl Fn(i32, Option<&'static [T]>) -> T) -> T {
    let mut level: &'static [T] = Vec::leak((0..512).map(|i| node(900 + i, None)).collect());
    for depth in (0..9).rev() {
        let below = level;
        level = Vec::leak(
            (0..1i32 << depth)
                .map(|i| {
                    let at = 2 * i as usize;
                    node(depth * 100 + i, Some(&below[at..at + 2]))
                })
                .collect(),
        );
    }
    level[0]
}

/// Reads every field of a person; returns a checksum.
macro_rules! walk_person {
    ($p:expr) => {{
        let p = $p;
        black_box(p.name);
        black_box(p.email);
        (p.id as u64) ^ (p.age as u64) ^ (p.name.len() + p.email.len()) as u64
    }};
}

/// Reads every field and every array element of an order; returns a checksum.
macro_rules! walk_order {
    ($o:expr) => {{
        let o = $o;
        let mut sum = (o.order_id ^ o.customer_id ^ o.timestamp) as u64 ^ o.total.to_bits();
        for id in o.item_ids.iter() {
            sum = sum.wrapping_add(id as u64);
        }
        for q in o.quantities.iter() {
            sum = sum.wrapping_add(q as u64);
        }
        sum
    }};
}

/// Reads the id and every vector element of an embedding; returns a checksum.
macro_rules! walk_embedding {
    ($e:expr) => {{
        let e = $e;
        let sum: f32 = e.vector.iter().map(f32::from).sum();
        (e.id.as_u128() as u64) ^ u64::from(sum.to_bits())
    }};
}

/// Defines a function visiting every node of a tree view type: (node count, sum of values).
macro_rules! tree_walker {
    ($name:ident, $ty:ty) => {
        fn $name(node: &$ty) -> (u64, i64) {
            let mut acc = (1, i64::from(node.value.unwrap_or(0)));
            if let Some(children) = node.children {
                for child in children.iter() {
                    let (n, s) = $name(&child);
                    acc.0 += n;
                    acc.1 += s;
                }
            }
            acc
        }
    };
}

tree_walker!(walk_tree_generated, benchmark::TreeNode<'_>);
tree_walker!(walk_tree_hand, bebop_conformance::TreeNode<'_>);
tree_walker!(walk_tree_hand_skip, hand::TreeNode<'_>);

/// Checks, before timing, that the two implementations agree: same encoded size and bytes,
/// each decodes the other's bytes to a value that re-encodes identically, same walk.
macro_rules! check_agreement {
    ($name:expr, $generated:expr, $hand:expr, $generated_ty:ty, $hand_ty:ty, $walk_generated:expr, $walk_hand:expr) => {{
        let gen_bytes = $generated.encode_to_vec().unwrap();
        let hand_bytes = $hand.encode_to_vec().unwrap();
        assert_eq!(
            gen_bytes, hand_bytes,
            "{}: generated and hand-written bytes differ",
            $name
        );
        assert_eq!(
            $generated.encoded_size(),
            gen_bytes.len(),
            "{}: generated size",
            $name
        );
        assert_eq!(
            $hand.encoded_size(),
            hand_bytes.len(),
            "{}: hand-written size",
            $name
        );
        let g = <$generated_ty>::from_bytes(&hand_bytes).unwrap();
        let h = <$hand_ty>::from_bytes(&gen_bytes).unwrap();
        assert_eq!(
            g.encode_to_vec().unwrap(),
            gen_bytes,
            "{}: generated re-encode",
            $name
        );
        assert_eq!(
            h.encode_to_vec().unwrap(),
            hand_bytes,
            "{}: hand re-encode",
            $name
        );
        assert_eq!(
            $walk_generated(&g),
            $walk_hand(&h),
            "{}: walks differ",
            $name
        );
        gen_bytes
    }};
}

/// Times encode, decode and decode+walk of one implementation under `label/...`.
macro_rules! bench_side {
    ($group:expr, $label:literal, $value:expr, $ty:ty, $bytes:expr, $walk:expr) => {{
        let value = $value;
        let bytes: &[u8] = $bytes;
        let mut out = vec![0u8; bytes.len()];
        $group.bench_function(concat!($label, "/encode"), |b| {
            b.iter(|| black_box(&value).encode_into(black_box(&mut out)).unwrap())
        });
        $group.bench_function(concat!($label, "/decode"), |b| {
            b.iter(|| <$ty>::from_bytes(black_box(bytes)).unwrap())
        });
        $group.bench_function(concat!($label, "/decode+walk"), |b| {
            b.iter(|| $walk(&<$ty>::from_bytes(black_box(bytes)).unwrap()))
        });
    }};
}

fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    bytes: usize,
) -> BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(bytes as u64));
    g
}

fn person_small(c: &mut Criterion) {
    let generated = benchmark::Person {
        id: 12345,
        name: "John",
        email: "j@x.co",
        age: 30,
    };
    let hand = bebop_conformance::Person {
        id: generated.id,
        name: generated.name,
        email: generated.email,
        age: generated.age,
    };
    let walk_gen = |p: &benchmark::Person<'_>| walk_person!(p);
    let walk_hand = |p: &bebop_conformance::Person<'_>| walk_person!(p);
    let bytes = check_agreement!(
        "PersonSmall",
        generated,
        hand,
        benchmark::Person,
        bebop_conformance::Person,
        walk_gen,
        walk_hand
    );
    let mut g = group(c, "PersonSmall", bytes.len());
    bench_side!(
        g,
        "generated",
        generated,
        benchmark::Person,
        &bytes,
        walk_gen
    );
    bench_side!(
        g,
        "hand",
        hand,
        bebop_conformance::Person,
        &bytes,
        walk_hand
    );
    g.finish();
}

fn order_large(c: &mut Criterion) {
    let d = order_data(&mut Rng(42));
    let generated = benchmark::Order {
        order_id: d.order_id,
        customer_id: d.customer_id,
        item_ids: Array::from_slice(&d.item_ids),
        quantities: Array::from_slice(&d.quantities),
        total: d.total,
        timestamp: TIMESTAMP,
    };
    let hand = hand::Order {
        order_id: d.order_id,
        customer_id: d.customer_id,
        item_ids: Array::from_slice(&d.item_ids),
        quantities: Array::from_slice(&d.quantities),
        total: d.total,
        timestamp: TIMESTAMP,
    };
    let walk_gen = |o: &benchmark::Order<'_>| walk_order!(o);
    let walk_hand = |o: &hand::Order<'_>| walk_order!(o);
    let bytes = check_agreement!(
        "OrderLarge",
        generated,
        hand,
        benchmark::Order,
        hand::Order,
        walk_gen,
        walk_hand
    );
    let mut g = group(c, "OrderLarge", bytes.len());
    bench_side!(
        g,
        "generated",
        generated,
        benchmark::Order,
        &bytes,
        walk_gen
    );
    bench_side!(g, "hand", hand, hand::Order, &bytes, walk_hand);
    g.finish();
}

fn tree_deep(c: &mut Criterion) {
    let generated = deep_tree(|value, children| benchmark::TreeNode {
        value: Some(value),
        children: children.map(Array::from_slice),
    });
    let hand = deep_tree(|value, children| bebop_conformance::TreeNode {
        value: Some(value),
        children: children.map(Array::from_slice),
    });
    let hand_skip = deep_tree(|value, children| hand::TreeNode {
        value: Some(value),
        children: children.map(Array::from_slice),
    });
    // 1023 nodes; level d holds 2^d nodes valued 100 d + i for i in 0..2^d.
    let expected: i64 = (0..10)
        .map(|d| ((100 * d) << d) + ((1i64 << d) * ((1 << d) - 1)) / 2)
        .sum();
    assert_eq!(walk_tree_generated(&generated), (1023, expected));
    let bytes = check_agreement!(
        "TreeDeep",
        generated,
        hand,
        benchmark::TreeNode,
        bebop_conformance::TreeNode,
        walk_tree_generated,
        walk_tree_hand
    );
    check_agreement!(
        "TreeDeep (hand_skip)",
        generated,
        hand_skip,
        benchmark::TreeNode,
        hand::TreeNode,
        walk_tree_generated,
        walk_tree_hand_skip
    );
    let mut g = group(c, "TreeDeep", bytes.len());
    bench_side!(
        g,
        "generated",
        generated,
        benchmark::TreeNode,
        &bytes,
        walk_tree_generated
    );
    bench_side!(
        g,
        "hand",
        hand,
        bebop_conformance::TreeNode,
        &bytes,
        walk_tree_hand
    );
    bench_side!(
        g,
        "hand_skip",
        hand_skip,
        hand::TreeNode,
        &bytes,
        walk_tree_hand_skip
    );
    g.finish();
}

fn embedding_768(c: &mut Criterion) {
    let (id, vector) = embedding_data(&mut Rng(7));
    let generated = benchmark::EmbeddingBF16 {
        id,
        vector: Array::from_slice(&vector),
    };
    let hand = bebop_conformance::Embedding {
        id,
        vector: Array::from_slice(&vector),
    };
    let walk_gen = |e: &benchmark::EmbeddingBF16<'_>| walk_embedding!(e);
    let walk_hand = |e: &bebop_conformance::Embedding<'_>| walk_embedding!(e);
    let bytes = check_agreement!(
        "Embedding768",
        generated,
        hand,
        benchmark::EmbeddingBF16,
        bebop_conformance::Embedding,
        walk_gen,
        walk_hand
    );
    let mut g = group(c, "Embedding768", bytes.len());
    bench_side!(
        g,
        "generated",
        generated,
        benchmark::EmbeddingBF16,
        &bytes,
        walk_gen
    );
    bench_side!(
        g,
        "hand",
        hand,
        bebop_conformance::Embedding,
        &bytes,
        walk_hand
    );
    g.finish();
}

criterion_group!(benches, person_small, order_large, tree_deep, embedding_768);
criterion_main!(benches);

//! The benchmark values the firmware encodes and decodes, as compile-time constants.
//!
//! They follow the shapes of the reference harness (`lab/benchmark/c`, `harness.cpp`):
//! PersonSmall and PersonMedium with its strings, OrderLarge with 100 item ids and
//! quantities, a 768-element bfloat16 embedding, JsonSmall (an object of three scalars, a
//! union holding messages and a map), and TreeDeep, a complete binary tree of
//! depth 10 (1023 nodes) whose node at depth `d`, index `i` within its level holds
//! `d * 100 + i`, leaves having no `children` field. Random parts come from a SplitMix64
//! generator evaluated at compile time, not from the reference's `mt19937_64`, so the bytes
//! match the reference's shapes and sizes but not its values.
//!
//! Everything is `const` or `static` without interior mutability, so it is placed in flash:
//! the 1023-node tree (24 KiB of views) costs no RAM, which matters on the micro:bit's 16 KiB.

use bebop_core::{Array, Map, Uuid, bf16};

use crate::benchmark::{EmbeddingBF16, JsonValue, Order, Person, TreeNode, json_value};

/// One step of SplitMix64: returns the next state and its output.
const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

/// `PersonSmall`: `{ 12345, "John", "j@x.co", 30 }`.
pub const PERSON_SMALL: Person<'static> = Person {
    id: 12345,
    name: "John",
    email: "j@x.co",
    age: 30,
};

/// `PersonMedium`: the reference's long name and e-mail address.
pub const PERSON_MEDIUM: Person<'static> = Person {
    id: 987_654_321,
    name: "Alexander Maximilian Henderson-Worthington III",
    email: "alexander.henderson.worthington@enterprise-corporation.example.com",
    age: 47,
};

/// Items in [`ORDER_LARGE`].
pub const ORDER_ITEMS: usize = 100;

const ORDER_SEED: u64 = 0x0DDE_5EED;

/// `(item_ids, quantities, total)` of [`ORDER_LARGE`].
const fn order_parts() -> ([i64; ORDER_ITEMS], [i32; ORDER_ITEMS], f64) {
    let mut ids = [0i64; ORDER_ITEMS];
    let mut qty = [0i32; ORDER_ITEMS];
    let mut total = 0.0f64;
    let mut state = ORDER_SEED;
    let mut i = 0;
    while i < ORDER_ITEMS {
        let (s, a) = splitmix64(state);
        let (s, b) = splitmix64(s);
        let (s, c) = splitmix64(s);
        state = s;
        ids[i] = (a % 1_000_000) as i64 + 1;
        qty[i] = (b % 10) as i32 + 1;
        // A price of 10.00 to 9999.99, in cents, times the quantity.
        total += ((c % 999_000) as f64 / 100.0 + 10.0) * qty[i] as f64;
        i += 1;
    }
    (ids, qty, total)
}

const ORDER_PARTS: ([i64; ORDER_ITEMS], [i32; ORDER_ITEMS], f64) = order_parts();

/// The item ids of [`ORDER_LARGE`].
pub static ORDER_ITEM_IDS: [i64; ORDER_ITEMS] = ORDER_PARTS.0;
/// The quantities of [`ORDER_LARGE`].
pub static ORDER_QUANTITIES: [i32; ORDER_ITEMS] = ORDER_PARTS.1;

/// `OrderLarge`: 100 items.
pub const ORDER_LARGE: Order<'static> = Order {
    order_id: 771_234,
    customer_id: 55_012,
    item_ids: Array::from_slice(&ORDER_ITEM_IDS),
    quantities: Array::from_slice(&ORDER_QUANTITIES),
    total: ORDER_PARTS.2,
    timestamp: 1_704_067_200_000,
};

/// Dimensions of [`EMBEDDING_768`].
pub const EMBEDDING_DIM: usize = 768;

/// Rounds an `f32` to the nearest bfloat16, ties to even (finite inputs).
const fn to_bf16(f: f32) -> bf16 {
    let bits = f.to_bits();
    let rounded = bits.wrapping_add(0x7FFF + ((bits >> 16) & 1));
    bf16::from_bits((rounded >> 16) as u16)
}

const fn embedding_values() -> [bf16; EMBEDDING_DIM] {
    let mut out = [bf16::ZERO; EMBEDDING_DIM];
    let mut state = 0xE3B0_C442_98FC_1C14;
    let mut i = 0;
    while i < EMBEDDING_DIM {
        let (s, r) = splitmix64(state);
        state = s;
        // Uniform in [-1, 1): 24 random bits.
        let unit = (r >> 40) as f32 / (1u32 << 24) as f32;
        out[i] = to_bf16(unit * 2.0 - 1.0);
        i += 1;
    }
    out
}

/// The vector of [`EMBEDDING_768`]: values in [-1, 1].
pub static EMBEDDING_VALUES: [bf16; EMBEDDING_DIM] = embedding_values();

/// `Embedding768`: a random version-4 uuid and 768 bfloat16 values.
pub const EMBEDDING_768: EmbeddingBF16<'static> = EmbeddingBF16 {
    id: Uuid::parse_const("3f2a9c1e-7b4d-4e8a-9c61-d0b5a7e21f43"),
    vector: Array::from_slice(&EMBEDDING_VALUES),
};

/// The entries of [`JSON_SMALL`]'s object.
pub static JSON_SMALL_FIELDS: [(&str, JsonValue<'static>); 3] = [
    (
        "name",
        JsonValue::String(json_value::String {
            value: Some("John Doe"),
        }),
    ),
    (
        "age",
        JsonValue::Number(json_value::Number { value: Some(30.0) }),
    ),
    (
        "active",
        JsonValue::Bool(json_value::Bool { value: Some(true) }),
    ),
];

/// `JsonSmall`: `{"name": "John Doe", "age": 30, "active": true}`.
pub const JSON_SMALL: JsonValue<'static> = JsonValue::Object(json_value::Object {
    fields: Some(Map::from_slice(&JSON_SMALL_FIELDS)),
});

/// Levels of [`tree_deep`] (depths 0 to 9).
pub const TREE_LEVELS: u32 = 10;
/// Nodes of [`tree_deep`]: 2^10 - 1.
pub const TREE_NODES: usize = 1023;

/// The nodes at `depth`: node `i` holds `depth * 100 + i` and, above the leaves, the two
/// nodes `2i` and `2i + 1` of `below` as children.
const fn tree_level<const N: usize>(
    depth: i32,
    below: &'static [TreeNode<'static>],
) -> [TreeNode<'static>; N] {
    let mut out = [TreeNode {
        value: None,
        children: None,
    }; N];
    let mut i = 0;
    while i < N {
        out[i].value = Some(depth * 100 + i as i32);
        if !below.is_empty() {
            let (_, rest) = below.split_at(2 * i);
            let (pair, _) = rest.split_at(2);
            out[i].children = Some(Array::from_slice(pair));
        }
        i += 1;
    }
    out
}

static TREE_9: [TreeNode<'static>; 512] = tree_level(9, &[]);
static TREE_8: [TreeNode<'static>; 256] = tree_level(8, &TREE_9);
static TREE_7: [TreeNode<'static>; 128] = tree_level(7, &TREE_8);
static TREE_6: [TreeNode<'static>; 64] = tree_level(6, &TREE_7);
static TREE_5: [TreeNode<'static>; 32] = tree_level(5, &TREE_6);
static TREE_4: [TreeNode<'static>; 16] = tree_level(4, &TREE_5);
static TREE_3: [TreeNode<'static>; 8] = tree_level(3, &TREE_4);
static TREE_2: [TreeNode<'static>; 4] = tree_level(2, &TREE_3);
static TREE_1: [TreeNode<'static>; 2] = tree_level(1, &TREE_2);
static TREE_0: [TreeNode<'static>; 1] = tree_level(0, &TREE_1);

/// `TreeDeep`: the root of the 1023-node tree.
pub fn tree_deep() -> TreeNode<'static> {
    TREE_0[0]
}

/// The encoded size of [`tree_deep`]: 511 inner nodes of 4 + 5 + 5 + 1 bytes plus two
/// children each, and 512 leaves of 4 + 5 + 1 bytes.
pub const TREE_DEEP_ENCODED_SIZE: usize = 511 * 15 + 512 * 10;

/// The nodes of the tree under `node`, `node` included.
pub fn count_nodes(node: &TreeNode<'_>) -> usize {
    1 + node
        .children
        .iter()
        .flat_map(|c| c.iter())
        .map(|c| count_nodes(&c))
        .sum::<usize>()
}

/// Checks that `node` is the node at `depth`, index `index` of [`tree_deep`], and all of its
/// subtree: values, child counts, leaves without `children`. Returns the nodes visited, or
/// the first wrong `(depth, index)`.
pub fn check_tree(node: &TreeNode<'_>, depth: u32, index: u32) -> Result<usize, (u32, u32)> {
    let expected = (depth * 100 + index) as i32;
    if node.value != Some(expected) {
        return Err((depth, index));
    }
    match (&node.children, depth + 1 < TREE_LEVELS) {
        (None, false) => Ok(1),
        (Some(children), true) if children.len() == 2 => {
            let mut visited = 1;
            for (k, child) in children.iter().enumerate() {
                visited += check_tree(&child, depth + 1, index * 2 + k as u32)?;
            }
            Ok(visited)
        }
        _ => Err((depth, index)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bebop_core::{Decode, Encode};

    extern crate std;

    #[test]
    fn tree_is_complete_and_encodes_to_the_computed_size() {
        let root = tree_deep();
        assert_eq!(count_nodes(&root), TREE_NODES);
        assert_eq!(check_tree(&root, 0, 0), Ok(TREE_NODES));
        assert_eq!(root.encoded_size(), TREE_DEEP_ENCODED_SIZE);
        let mut buf = std::vec![0u8; TREE_DEEP_ENCODED_SIZE];
        root.encode_into(&mut buf).unwrap();
        let back = TreeNode::from_bytes(&buf).unwrap();
        assert_eq!(check_tree(&back, 0, 0), Ok(TREE_NODES));
        // A wrong value deep down is found.
        // The last leaf's value: before it come its end marker and those of its 9 ancestors.
        let pos = buf.len() - 9 - 5;
        buf[pos] ^= 1;
        let back = TreeNode::from_bytes(&buf).unwrap();
        assert_eq!(check_tree(&back, 0, 0), Err((9, 511)));
    }

    #[test]
    fn order_and_embedding_have_the_benchmark_shapes() {
        assert_eq!(ORDER_LARGE.item_ids.len(), 100);
        assert!(
            ORDER_ITEM_IDS
                .iter()
                .all(|&id| (1..=1_000_000).contains(&id))
        );
        assert!(ORDER_QUANTITIES.iter().all(|&q| (1..=10).contains(&q)));
        // Every item costs at least 10.00 and there are 100 of them, at least one each.
        let order = core::hint::black_box(ORDER_LARGE);
        assert!(order.total >= 100.0 * 10.0);
        assert_eq!(
            ORDER_LARGE.encoded_size(),
            8 + 8 + 4 + 800 + 4 + 400 + 8 + 8
        );
        assert_eq!(EMBEDDING_768.encoded_size(), 16 + 4 + 2 * 768);
        assert!(
            EMBEDDING_VALUES
                .iter()
                .all(|v| (-1.0..=1.0).contains(&v.to_f32()))
        );
        // Not all equal: the generator runs.
        assert!(EMBEDDING_VALUES.windows(2).any(|w| w[0] != w[1]));
        assert_eq!(to_bf16(1.0), bf16::from_f32(1.0));
        assert_eq!(to_bf16(-0.3), bf16::from_f32(-0.3));
    }

    #[test]
    fn json_small_size() {
        // A union (u32 length + discriminator) holding an Object message with one map field
        // of three entries, each value a union holding a one-field message.
        let union = |body: usize| 4 + 1 + body;
        let message = |fields: usize| 4 + fields + 1;
        let string = |s: &str| 4 + s.len() + 1;
        let entries = string("name")
            + union(message(1 + string("John Doe")))
            + string("age")
            + union(message(1 + 8))
            + string("active")
            + union(message(1 + 1));
        assert_eq!(JSON_SMALL.encoded_size(), union(message(1 + 4 + entries)));
        let mut buf = [0u8; 128];
        let n = JSON_SMALL.encode_into(&mut buf).unwrap();
        assert_eq!(JsonValue::from_bytes(&buf[..n]), Ok(JSON_SMALL));
    }

    #[test]
    fn person_sizes() {
        assert_eq!(PERSON_SMALL.encoded_size(), 4 + 9 + 11 + 4);
    }
}

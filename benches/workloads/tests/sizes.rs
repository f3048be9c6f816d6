//! Wire sizes are what the formats' rules give when computed by hand.

use bebop_workloads::data::Dataset;
use bebop_workloads::model::{EmbeddingBf16, Person, TensorShard, TreeNode};
use bebop_workloads::shape::Shape;
use bebop_workloads::suite::{Format, Prepared, WORKLOADS, WorkloadInfo};

fn info(name: &str) -> WorkloadInfo {
    WORKLOADS
        .iter()
        .copied()
        .find(|w| w.name == name)
        .unwrap_or_else(|| panic!("no workload {name}"))
}

fn bytes<S: Shape>(name: &str, value: &S, format: Format) -> Vec<u8> {
    let arena = bumpalo::Bump::new();
    let p = Prepared::new(info(name), value, &arena).unwrap_or_else(|e| panic!("{e}"));
    p.bytes(format).to_vec()
}

/// string = u32 length + UTF-8 + NUL.
fn string(s: &str) -> usize {
    4 + s.len() + 1
}

#[test]
fn person_small_is_byte_exact() {
    let d = Dataset::build();
    let got = bytes("PersonSmall", &d.person_small, Format::Bebop);
    let mut want = Vec::new();
    want.extend_from_slice(&12345i32.to_le_bytes());
    want.extend_from_slice(&[4, 0, 0, 0, b'J', b'o', b'h', b'n', 0]);
    want.extend_from_slice(&[6, 0, 0, 0, b'j', b'@', b'x', b'.', b'c', b'o', 0]);
    want.extend_from_slice(&30i32.to_le_bytes());
    assert_eq!(got, want);
    assert_eq!(got.len(), 28, "the paper's Bebop PersonSmall size");
}

#[test]
fn bebop_struct_sizes_follow_the_wire_rules() {
    let d = Dataset::build();
    let person = |p: &Person| 4 + string(&p.name) + string(&p.email) + 4;
    assert_eq!(
        bytes("PersonMedium", &d.person_medium, Format::Bebop).len(),
        person(&d.person_medium)
    );
    // Order: two int64, int64[] and int32[] (u32 count + elements), float64, int64.
    let order = |n: usize| 8 + 8 + (4 + 8 * n) + (4 + 4 * n) + 8 + 8;
    assert_eq!(
        bytes("OrderSmall", &d.order_small, Format::Bebop).len(),
        order(3)
    );
    assert_eq!(
        bytes("OrderLarge", &d.order_large, Format::Bebop).len(),
        order(100)
    );
    let e = &d.event_large;
    assert_eq!(
        bytes("EventLarge", e, Format::Bebop).len(),
        8 + string(&e.r#type) + string(&e.source) + 8 + 4 + e.payload.len()
    );
    // uuid (16) + bfloat16[] (u32 count + 2 bytes each).
    let emb = |e: &EmbeddingBf16| 16 + 4 + 2 * e.vector.len();
    assert_eq!(
        bytes("Embedding768", &d.embedding_768, Format::Bebop).len(),
        emb(&d.embedding_768)
    );
    let b = &d.embedding_batch;
    assert_eq!(
        bytes("EmbeddingBatch", b, Format::Bebop).len(),
        string(&b.model) + 4 + b.embeddings.iter().map(emb).sum::<usize>() + 4
    );
    let shard = |t: &TensorShard| {
        string(&t.name) + 4 + 4 * t.shape.len() + string(&t.dtype) + 4 + 2 * t.data.len() + 16
    };
    assert_eq!(
        bytes("TensorShardLarge", &d.tensor_shard_large, Format::Bebop).len(),
        shard(&d.tensor_shard_large)
    );
    // InferenceResponse: uuid, EmbeddingBF16[], and InferenceTiming (two 12-byte durations
    // and a float32).
    let r = &d.inference_response;
    assert_eq!(
        bytes("InferenceResponse", r, Format::Bebop).len(),
        16 + 4 + r.embeddings.iter().map(emb).sum::<usize>() + 12 + 12 + 4
    );
    // ChunkedText: TextSpan is 4 + 4 + 1 bytes.
    let c = &d.chunked_text;
    assert_eq!(
        bytes("ChunkedText", c, Format::Bebop).len(),
        string(&c.source) + 4 + 9 * c.spans.len()
    );
}

#[test]
fn bebop_message_sizes_follow_the_wire_rules() {
    let d = Dataset::build();
    // A node: u32 length, tag + int32, [tag + u32 count + children], end marker.
    fn node(t: &TreeNode) -> usize {
        let children = if t.children.is_empty() {
            0
        } else {
            1 + 4 + t.children.iter().map(node).sum::<usize>()
        };
        4 + 1 + 4 + children + 1
    }
    assert_eq!(
        bytes("TreeDeep", &d.tree_deep, Format::Bebop).len(),
        node(&d.tree_deep)
    );
    assert_eq!(node(&d.tree_deep), 12_785);
    assert_eq!(
        bytes("TreeWide", &d.tree_wide, Format::Bebop).len(),
        node(&d.tree_wide)
    );
    // DocumentSmall: title and body present, metadata absent.
    let doc = &d.document_small;
    assert_eq!(
        bytes("DocumentSmall", doc, Format::Bebop).len(),
        4 + 1 + string(&doc.title) + 1 + string(&doc.body) + 1
    );
    // JsonSmall: a union (u32 length + discriminator) holding an Object message with one
    // map field of three entries.
    let union = |body: usize| 4 + 1 + body;
    let message = |fields: usize| 4 + fields + 1;
    let entries = string("name")
        + union(message(1 + string("John Doe")))
        + string("age")
        + union(message(1 + 8))
        + string("active")
        + union(message(1 + 1));
    assert_eq!(
        bytes("JsonSmall", &d.json_small, Format::Bebop).len(),
        union(message(1 + 4 + entries))
    );
}

#[test]
fn the_paper_sizes_that_depend_only_on_lengths() {
    // Table "Wire size in bytes" of the paper (Bebop and MessagePack columns, and protobuf for
    // PersonSmall, where our .proto matches the paper's).
    let d = Dataset::build();
    for (name, bebop, msgpack) in [
        ("PersonSmall", 28, 35),
        ("PersonMedium", 130, 141),
        ("EventLarge", 4_170, 4_193),
        ("Embedding768", 1_556, 1_568),
        ("Embedding1536", 3_092, 3_104),
    ] {
        let (b, m) = match name {
            "PersonSmall" => (
                bytes(name, &d.person_small, Format::Bebop),
                bytes(name, &d.person_small, Format::MsgPack),
            ),
            "PersonMedium" => (
                bytes(name, &d.person_medium, Format::Bebop),
                bytes(name, &d.person_medium, Format::MsgPack),
            ),
            "EventLarge" => (
                bytes(name, &d.event_large, Format::Bebop),
                bytes(name, &d.event_large, Format::MsgPack),
            ),
            "Embedding768" => (
                bytes(name, &d.embedding_768, Format::Bebop),
                bytes(name, &d.embedding_768, Format::MsgPack),
            ),
            _ => (
                bytes(name, &d.embedding_1536, Format::Bebop),
                bytes(name, &d.embedding_1536, Format::MsgPack),
            ),
        };
        assert_eq!(b.len(), bebop, "{name} bebop");
        assert_eq!(m.len(), msgpack, "{name} msgpack");
    }
    for (name, bebop) in [
        ("OrderSmall", 76),
        ("OrderLarge", 1_240),
        ("TensorShardSmall", 2_132),
        ("TensorShardLarge", 65_624),
    ] {
        let b = match name {
            "OrderSmall" => bytes(name, &d.order_small, Format::Bebop),
            "OrderLarge" => bytes(name, &d.order_large, Format::Bebop),
            "TensorShardSmall" => bytes(name, &d.tensor_shard_small, Format::Bebop),
            _ => bytes(name, &d.tensor_shard_large, Format::Bebop),
        };
        assert_eq!(b.len(), bebop, "{name}");
    }
    assert_eq!(
        bytes("PersonSmall", &d.person_small, Format::Prost).len(),
        19
    );
}

#[test]
fn peer_sizes_follow_their_rules() {
    let d = Dataset::build();
    let p = &d.person_small;
    // postcard: zigzag varints (12345 → 3 bytes, 30 → 1) and varint-prefixed strings.
    assert_eq!(
        bytes("PersonSmall", p, Format::Postcard).len(),
        3 + (1 + 4) + (1 + 6) + 1
    );
    // protobuf: tag + varint for each non-zero int, tag + length + bytes for strings.
    assert_eq!(
        bytes("PersonSmall", p, Format::Prost).len(),
        (1 + 2) + (1 + 1 + 4) + (1 + 1 + 6) + (1 + 1)
    );
    // serde_json writes the struct as an object with field names.
    assert_eq!(
        String::from_utf8(bytes("PersonSmall", p, Format::SerdeJson)).unwrap_or_default(),
        r#"{"id":12345,"name":"John","email":"j@x.co","age":30}"#
    );
}

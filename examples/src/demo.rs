//! The host-side example: types generated at build time from `schemas/demo.bop` (see
//! `build.rs`), encoded into a stack buffer, printed, decoded back as borrowed views and as
//! owned values, and fed corrupted input.
//!
//! ```text
//! cargo run -p bebop-examples --bin demo
//! ```

use bebop_runtime::{Array, Decode, Encode, Uuid, bf16};

/// The generated code: views in `demo`, owned types in `owned::demo`, method metadata in
/// `demo::directory`. A binary uses only part of what a schema defines, so, as with any
/// generated code included privately, unused items are allowed.
#[allow(dead_code)]
mod schema {
    include!(concat!(env!("OUT_DIR"), "/bebop.rs"));
}

use schema::demo::{self, Embedding, Person, Shape, TreeNode, UserRequest, shape};

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Encodes `value` into `buf`, prints it, and returns the encoded bytes.
fn show<'b, T: Encode + std::fmt::Debug>(
    label: &str,
    value: &T,
    buf: &'b mut [u8],
) -> Result<&'b [u8], bebop_runtime::Error> {
    let bytes = value.encode_to_slice(buf)?;
    println!("{label}: {value:?}");
    println!("  {} bytes: {}", bytes.len(), hex(bytes));
    Ok(bytes)
}

/// Counts the nodes of a decoded tree and sums their values, walking the view.
fn walk(node: &TreeNode<'_>) -> (usize, i64) {
    let mut acc = (1, i64::from(node.value.unwrap_or(0)));
    for child in node.children.unwrap_or_default() {
        let (n, sum) = walk(&child);
        acc.0 += n;
        acc.1 += sum;
    }
    acc
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut buf = [0u8; 2048];

    let req = UserRequest {
        user_id: Some(42),
        include_profile: Some(true),
    };
    let bytes = show("message UserRequest", &req, &mut buf)?;
    let back = UserRequest::from_bytes(bytes)?;
    println!("  decoded: {back:?}");
    assert_eq!(back, req);
    let lookup = demo::directory::LOOKUP;
    println!(
        "  sent as the request of {}.{} (method id {:#010x})",
        lookup.service, lookup.name, lookup.id
    );

    let person = Person {
        id: 7,
        name: "Ada Lovelace",
        email: "ada@example.com",
        age: 36,
    };
    let bytes = show("struct Person", &person, &mut buf)?;
    let view = Person::from_bytes(bytes)?;
    let borrowed = std::ptr::eq(view.name.as_ptr(), bytes[8..].as_ptr());
    println!(
        "  decoded name {:?} borrows the buffer: {borrowed}",
        view.name
    );
    let owned: schema::owned::demo::Person = view.to_owned_value();
    println!("  as an owned value (String fields): {owned:?}");
    assert_eq!(owned.encode_to_vec()?, bytes);

    let shape = Shape::Circle(shape::Circle { radius: 5.0 });
    let bytes = show("union Shape", &shape, &mut buf)?;
    println!("  decoded: {:?}", Shape::from_bytes(bytes)?);

    let leaves = [
        TreeNode {
            value: Some(2),
            children: None,
        },
        TreeNode {
            value: Some(3),
            children: None,
        },
    ];
    let tree = TreeNode {
        value: Some(1),
        children: Some(Array::from_slice(&leaves)),
    };
    let bytes = show("message TreeNode (recursive)", &tree, &mut buf)?;
    let (nodes, sum) = walk(&TreeNode::from_bytes(bytes)?);
    println!("  decoded {nodes} nodes, values summing to {sum}");

    let vector: Vec<bf16> = (0..8).map(|i| bf16::from_f32(i as f32 / 4.0)).collect();
    let emb = Embedding {
        id: "550e8400-e29b-41d4-a716-446655440000".parse::<Uuid>()?,
        vector: Array::from_slice(&vector),
    };
    let bytes = show("struct Embedding (uuid + bfloat16[])", &emb, &mut buf)?;
    let view = Embedding::from_bytes(bytes)?;
    println!(
        "  decoded id {} and {} floats without copying: {:?}",
        view.id,
        view.vector.len(),
        view.vector.iter().map(f32::from).collect::<Vec<_>>()
    );

    // Hostile input: corrupt the message's length prefix, truncate the struct, and encode
    // into a buffer that is too small.
    let mut corrupt = [0u8; 16];
    let n = req.encode_into(&mut corrupt)?;
    corrupt[0] = 0xff;
    println!(
        "corrupted UserRequest: {}",
        UserRequest::from_bytes(&corrupt[..n]).unwrap_err()
    );
    let n = person.encode_into(&mut buf)?;
    println!(
        "truncated Person:      {}",
        Person::from_bytes(&buf[..n - 3]).unwrap_err()
    );
    let err = person.encode_into(&mut corrupt).unwrap_err();
    println!("Person into 16 bytes:  {err}");
    Ok(())
}

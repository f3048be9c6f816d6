//! Generated code with one-pass reading (`codegen/rust/tests/expected/variants/*_one_pass.rs`,
//! `Generator::one_pass`): every synthetic schema compiles warning-free with it, and a
//! recursive message read in one pass sees what its view holds and fails where
//! `from_bytes` fails.
#![allow(clippy::unwrap_used)]

/// `spec.bop` with one-pass reading.
pub mod spec {
    include!("../../rust/tests/expected/variants/spec_one_pass.rs");
}

/// `recursion.bop` with one-pass reading.
pub mod recursion {
    include!("../../rust/tests/expected/variants/recursion_one_pass.rs");
}

/// `forward.bop` with one-pass reading.
pub mod forward {
    include!("../../rust/tests/expected/variants/forward_one_pass.rs");
}

/// `naming.bop` with one-pass reading.
pub mod naming {
    include!("../../rust/tests/expected/variants/naming_one_pass.rs");
}

/// `consts.bop` with one-pass reading.
pub mod consts {
    include!("../../rust/tests/expected/variants/consts_one_pass.rs");
}

use bebop_runtime::once::{self, Record};
use bebop_runtime::{Decode, Error};
use spec::{TreeNode, TreeNodePart};

/// The values of a tree in wire order, read in one pass.
fn values<'a>(node: Record<'a, '_, TreeNode<'a>>, out: &mut Vec<i32>) -> Result<(), Error> {
    node.read(|part| {
        match part {
            TreeNodePart::Value(v) => out.push(v),
            TreeNodePart::Children(mut children) => {
                while let Some(child) = children.next()? {
                    values(child, out)?;
                }
            }
        }
        Ok::<_, Error>(())
    })
}

/// The values of a tree in field order, from its view.
fn view_values(node: &TreeNode<'_>, out: &mut Vec<i32>) {
    out.extend(node.value);
    for child in node.children.iter().flat_map(|c| c.iter()) {
        view_values(&child, out);
    }
}

/// Reads `bytes` as a `TreeNode` in one pass.
fn read(bytes: &[u8]) -> Result<Vec<i32>, Error> {
    let mut out = Vec::new();
    once::read_once::<TreeNode, Error>(bytes, |part| {
        match part {
            TreeNodePart::Value(v) => out.push(v),
            TreeNodePart::Children(mut children) => {
                while let Some(child) = children.next()? {
                    values(child, &mut out)?;
                }
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// TreeNode { value: 1, children: [{ value: 2 }, { value: 3, children: [{ value: 4 }] }] }.
fn tree() -> Vec<u8> {
    let leaf = |v: u8| vec![6, 0, 0, 0, 1, v, 0, 0, 0, 0];
    let mut three = vec![1, 3, 0, 0, 0, 2, 1, 0, 0, 0];
    three.extend(leaf(4));
    three.push(0);
    let mut body = vec![1, 1, 0, 0, 0, 2, 2, 0, 0, 0];
    body.extend(leaf(2));
    body.extend((three.len() as u32).to_le_bytes());
    body.extend(three);
    body.push(0);
    let mut bytes = (body.len() as u32).to_le_bytes().to_vec();
    bytes.extend(body);
    bytes
}

#[test]
fn a_tree_read_in_one_pass_holds_what_its_view_holds() {
    let bytes = tree();
    let view = TreeNode::from_bytes(&bytes).unwrap();
    let mut expected = Vec::new();
    view_values(&view, &mut expected);
    assert_eq!(expected, [1, 2, 3, 4]);
    assert_eq!(read(&bytes), Ok(expected));
}

#[test]
fn a_damaged_tree_fails_where_from_bytes_fails() {
    let bytes = tree();
    for n in 0..bytes.len() {
        let cut = &bytes[..n];
        assert_eq!(
            read(cut).err(),
            TreeNode::from_bytes(cut).err(),
            "cut at {n}"
        );
    }
    for i in 0..bytes.len() {
        for b in [0, 1, 2, 0x80, 0xff] {
            let mut v = bytes.clone();
            v[i] = b;
            assert_eq!(
                read(&v).err(),
                TreeNode::from_bytes(&v).err(),
                "byte {i} = {b}"
            );
        }
    }
}

//! Trees, JSON values and documents read in one pass with [`Reader`], validating as they go.
//!
//! A view decodes a message in an array again when a walk reaches it, and hops over that
//! message's own arrays to find where they end, so walking a tree reads every node about
//! three times (docs/performance.md, "Reading a view"). The readers here read every node
//! once: they check what the generated decoders check (bounds, UTF-8, union discriminators,
//! nesting depth, the budget of empty elements) and feed a [`Hasher`] what [`Walk`] feeds it
//! from the view, in wire order. They are written by hand against `Reader`'s public API, as
//! an application that needs every field of a large recursive value once would write them.
//!
//! Fields are hashed as they arrive. Every encoder we know of writes a message's fields in
//! tag order, and for such input the checksum is the view walk's (`tests/one_pass.rs` holds
//! them to that, and to rejecting exactly what `Decode::from_bytes` rejects, with the same
//! error). Input with fields out of order is validated all the same, but hashes differently.
//!
//! ```
//! use bebop_workloads::data::Dataset;
//! use bebop_workloads::one_pass;
//! use bebop_workloads::shape::Shape;
//! use bebop_workloads::walk::checksum;
//! use bebop_runtime::{Decode, EncodeExt};
//!
//! let data = Dataset::build();
//! let bytes = data.json_small.to_owned_bebop().encode_to_vec()?;
//! let view = bebop_workloads::bop::JsonValue::from_bytes(&bytes)?;
//! assert_eq!(one_pass::json(&bytes)?, checksum(&view));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Walk`]: crate::walk::Walk

use bebop_runtime::{Error, Reader, WireSize};

use crate::bop;
use crate::walk::Hasher;

/// Reads one value of a type from a reader, hashing it.
pub type ReadFn = for<'a> fn(&mut Reader<'a>, &mut Hasher) -> Result<(), Error>;

/// Reads all of `bytes` as one value with `read` and returns its checksum: the error of the
/// first thing that is wrong otherwise, bytes left over included.
pub fn read_all(bytes: &[u8], read: ReadFn) -> Result<u64, Error> {
    let mut h = Hasher::default();
    let mut r = Reader::new(bytes);
    read(&mut r, &mut h)?;
    r.finish()?;
    Ok(h.0)
}

/// The checksum of the `TreeNode` in `bytes`, read in one pass.
pub fn tree(bytes: &[u8]) -> Result<u64, Error> {
    read_all(bytes, read_tree)
}

/// The checksum of the `JsonValue` in `bytes`, read in one pass.
pub fn json(bytes: &[u8]) -> Result<u64, Error> {
    read_all(bytes, read_json)
}

/// The checksum of the `Document` in `bytes`, read in one pass.
pub fn document(bytes: &[u8]) -> Result<u64, Error> {
    read_all(bytes, read_document)
}

/// One `TreeNode`, its subtrees included: the value, the number of children, then each
/// child.
#[inline(never)]
pub fn read_tree(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    r.message(|r| {
        let mut value = 0i32;
        let mut children = false;
        loop {
            match r.read_tag()? {
                1 => value = r.read()?,
                2 => {
                    let count = r.read_length(<bop::TreeNode<'_>>::MIN_SIZE)?;
                    h.int(value as u64);
                    h.int(count as u64);
                    children = true;
                    r.nested(|r| (0..count).try_for_each(|_| read_tree(r, h)))?;
                }
                _ => break,
            }
        }
        if !children {
            h.int(value as u64);
            h.int(0);
        }
        Ok(())
    })
}

/// One `JsonValue`. Scalar branches are decoded as the generated views of their messages;
/// lists and objects element by element.
#[inline(never)]
pub fn read_json(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    use bop::json_value as jv;
    r.union(|r, discriminator| match discriminator {
        1 => {
            r.read::<bop::JsonNull>()?;
            h.int(1);
            Ok(())
        }
        2 => {
            let b = r.read::<jv::Bool>()?;
            h.int(2);
            h.int(u64::from(b.value.unwrap_or_default()));
            Ok(())
        }
        3 => {
            let n = r.read::<jv::Number>()?;
            h.int(3);
            h.int(n.value.unwrap_or_default().to_bits());
            Ok(())
        }
        4 => {
            let s = r.read::<jv::String<'_>>()?;
            h.int(4);
            h.str(s.value.unwrap_or_default());
            Ok(())
        }
        5 => {
            h.int(5);
            r.message(|r| {
                let mut seen = false;
                while r.read_tag()? == 1 {
                    let count = r.read_length(<bop::JsonValue<'_>>::MIN_SIZE)?;
                    h.int(count as u64);
                    seen = true;
                    r.nested(|r| (0..count).try_for_each(|_| read_json(r, h)))?;
                }
                if !seen {
                    h.int(0);
                }
                Ok(())
            })
        }
        6 => {
            h.int(6);
            r.message(|r| {
                let mut seen = false;
                while r.read_tag()? == 1 {
                    read_entries(r, h)?;
                    seen = true;
                }
                if !seen {
                    h.int(0);
                }
                Ok(())
            })
        }
        _ => Err(r.unknown_discriminator(discriminator)),
    })
}

/// The entries of a `map[string, JsonValue]`: their count, then each key and value.
fn read_entries(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    let count = r.read_length(<&str>::MIN_SIZE + <bop::JsonValue<'_>>::MIN_SIZE)?;
    h.int(count as u64);
    r.nested(|r| {
        (0..count).try_for_each(|_| {
            h.str(r.read()?);
            read_json(r, h)
        })
    })
}

/// One `Document`: its title, its body and its metadata, each hashed as it arrives, and an
/// absent field as its default where it would have been.
pub fn read_document(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    /// Hashes the default of field `tag`: an empty string, or an empty map.
    fn absent(tag: u8, h: &mut Hasher) {
        match tag {
            1 | 2 => h.str(""),
            _ => h.int(0),
        }
    }
    r.message(|r| {
        let mut next = 1;
        loop {
            let tag = r.read_tag()?;
            if !(1..=3).contains(&tag) {
                break;
            }
            (next..tag).for_each(|t| absent(t, h));
            match tag {
                1 | 2 => h.str(r.read()?),
                _ => read_entries(r, h)?,
            }
            next = next.max(tag + 1);
        }
        (next..=3).for_each(|t| absent(t, h));
        Ok(())
    })
}

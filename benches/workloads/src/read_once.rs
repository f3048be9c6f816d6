//! Trees, JSON values and documents read in one pass through `bebop_runtime::once`: the
//! handles ([`Record`], [`Records`], [`Entries`]) that generated code will hand out, over
//! [`ReadOnce`] implementations written here the way the generator is to write them.
//!
//! [`one_pass`](crate::one_pass) reads the same values with `Reader` alone, by hand; these
//! readers hash exactly what those hash, in the same order, so the two can be timed against
//! each other and held to the same verdicts (`tests/one_pass.rs`). What they measure is
//! what the handles cost over reading by hand.
//!
//! ```
//! use bebop_workloads::data::Dataset;
//! use bebop_workloads::{one_pass, read_once};
//! use bebop_workloads::shape::Shape;
//! use bebop_runtime::EncodeExt;
//!
//! let data = Dataset::build();
//! let bytes = data.tree_wide.to_owned_bebop().encode_to_vec()?;
//! assert_eq!(one_pass::read_all(&bytes, read_once::read_tree)?, one_pass::tree(&bytes)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use bebop_runtime::once::{self, Entries, Part, Parts, ReadOnce, Record, Records, Slot};
use bebop_runtime::{Error, Reader};

use crate::bop;
use crate::bop::json_value as jv;
use crate::walk::Hasher;

// ---- What the generator is to write for these types ----

/// The parts of a `TreeNode` read in one pass.
pub enum TreeNodePart<'a, 'r> {
    /// `value(1): int32`
    Value(i32),
    /// `children(2): TreeNode[]`
    Children(Records<'a, 'r, bop::TreeNode<'a>>),
}

impl<'a, 'r> Parts<'r> for bop::TreeNode<'a> {
    type Part = TreeNodePart<'a, 'r>;
}

impl<'a> ReadOnce<'a> for bop::TreeNode<'a> {
    #[inline]
    fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
    where
        E: From<Error>,
        F: FnMut(Part<'_, Self>) -> Result<(), E>,
    {
        once::message(reader, |reader, tag| {
            let mut slot = Slot::new();
            let part = match tag {
                1 => TreeNodePart::Value(reader.read()?),
                2 => TreeNodePart::Children(slot.records(reader)?),
                _ => return Ok(false),
            };
            f(part)?;
            slot.finish(reader)?;
            Ok(true)
        })
    }
}

/// The branch of a `JsonValue` read in one pass.
pub enum JsonValuePart<'a, 'r> {
    /// `Null(1): JsonNull`
    Null(Record<'a, 'r, bop::JsonNull>),
    /// `Bool(2)`: an inline message.
    Bool(Record<'a, 'r, jv::Bool>),
    /// `Number(3)`: an inline message.
    Number(Record<'a, 'r, jv::Number>),
    /// `String(4)`: an inline message.
    String(Record<'a, 'r, jv::String<'a>>),
    /// `List(5)`: an inline message.
    List(Record<'a, 'r, jv::List<'a>>),
    /// `Object(6)`: an inline message.
    Object(Record<'a, 'r, jv::Object<'a>>),
}

impl<'a, 'r> Parts<'r> for bop::JsonValue<'a> {
    type Part = JsonValuePart<'a, 'r>;
}

impl<'a> ReadOnce<'a> for bop::JsonValue<'a> {
    #[inline]
    fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
    where
        E: From<Error>,
        F: FnMut(Part<'_, Self>) -> Result<(), E>,
    {
        once::union(reader, |reader, discriminator| {
            let mut slot = Slot::new();
            let part = match discriminator {
                1 => JsonValuePart::Null(slot.record(reader)),
                2 => JsonValuePart::Bool(slot.record(reader)),
                3 => JsonValuePart::Number(slot.record(reader)),
                4 => JsonValuePart::String(slot.record(reader)),
                5 => JsonValuePart::List(slot.record(reader)),
                6 => JsonValuePart::Object(slot.record(reader)),
                _ => return Err(reader.unknown_discriminator(discriminator).into()),
            };
            f(part)?;
            slot.finish(reader)?;
            Ok(())
        })
    }
}

/// The parts of a JSON list read in one pass.
pub enum ListPart<'a, 'r> {
    /// `values(1): JsonValue[]`
    Values(Records<'a, 'r, bop::JsonValue<'a>>),
}

impl<'a, 'r> Parts<'r> for jv::List<'a> {
    type Part = ListPart<'a, 'r>;
}

impl<'a> ReadOnce<'a> for jv::List<'a> {
    #[inline]
    fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
    where
        E: From<Error>,
        F: FnMut(Part<'_, Self>) -> Result<(), E>,
    {
        once::message(reader, |reader, tag| {
            let mut slot = Slot::new();
            let part = match tag {
                1 => ListPart::Values(slot.records(reader)?),
                _ => return Ok(false),
            };
            f(part)?;
            slot.finish(reader)?;
            Ok(true)
        })
    }
}

/// The parts of a JSON object read in one pass.
pub enum ObjectPart<'a, 'r> {
    /// `fields(1): map[string, JsonValue]`
    Fields(Entries<'a, 'r, &'a str, bop::JsonValue<'a>>),
}

impl<'a, 'r> Parts<'r> for jv::Object<'a> {
    type Part = ObjectPart<'a, 'r>;
}

impl<'a> ReadOnce<'a> for jv::Object<'a> {
    #[inline]
    fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
    where
        E: From<Error>,
        F: FnMut(Part<'_, Self>) -> Result<(), E>,
    {
        once::message(reader, |reader, tag| {
            let mut slot = Slot::new();
            let part = match tag {
                1 => ObjectPart::Fields(slot.entries(reader)?),
                _ => return Ok(false),
            };
            f(part)?;
            slot.finish(reader)?;
            Ok(true)
        })
    }
}

/// The parts of a `Document` read in one pass.
pub enum DocumentPart<'a, 'r> {
    /// `title(1): string`
    Title(&'a str),
    /// `body(2): string`
    Body(&'a str),
    /// `metadata(3): map[string, JsonValue]`
    Metadata(Entries<'a, 'r, &'a str, bop::JsonValue<'a>>),
}

impl<'a, 'r> Parts<'r> for bop::Document<'a> {
    type Part = DocumentPart<'a, 'r>;
}

impl<'a> ReadOnce<'a> for bop::Document<'a> {
    #[inline]
    fn read_once<E, F>(reader: &mut Reader<'a>, mut f: F) -> Result<(), E>
    where
        E: From<Error>,
        F: FnMut(Part<'_, Self>) -> Result<(), E>,
    {
        once::message(reader, |reader, tag| {
            let mut slot = Slot::new();
            let part = match tag {
                1 => DocumentPart::Title(reader.read()?),
                2 => DocumentPart::Body(reader.read()?),
                3 => DocumentPart::Metadata(slot.entries(reader)?),
                _ => return Ok(false),
            };
            f(part)?;
            slot.finish(reader)?;
            Ok(true)
        })
    }
}

// ---- Readers over the parts, hashing what `one_pass` hashes ----

/// The readers of this module, for [`one_pass::cases_with`](crate::one_pass::cases_with).
pub const THROUGH_HANDLES: crate::one_pass::Readers = crate::one_pass::Readers {
    tree: read_tree,
    json: read_json,
    document: read_document,
};

/// One `TreeNode`, its subtrees included: the value, the number of children, then each
/// child (a [`ReadFn`](crate::one_pass::ReadFn)).
pub fn read_tree(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    let mut slot = Slot::new();
    tree(slot.record(r), h)?;
    slot.finish(r)
}

/// A node and its subtrees, through its handle.
#[inline(never)]
fn tree<'a>(node: Record<'a, '_, bop::TreeNode<'a>>, h: &mut Hasher) -> Result<(), Error> {
    let (mut value, mut children) = (0i32, false);
    node.read(|part| {
        match part {
            TreeNodePart::Value(v) => value = v,
            TreeNodePart::Children(mut nodes) => {
                h.int(value as u64);
                h.int(nodes.len() as u64);
                children = true;
                while let Some(node) = nodes.next()? {
                    tree(node, h)?;
                }
            }
        }
        Ok::<_, Error>(())
    })?;
    if !children {
        h.int(value as u64);
        h.int(0);
    }
    Ok(())
}

/// One `JsonValue` (a [`ReadFn`](crate::one_pass::ReadFn)). Scalar branches are decoded as
/// views of their messages; lists and objects element by element.
pub fn read_json(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    bop::JsonValue::read_once(r, |part| json(part, h))
}

/// Hashes a `JsonValue`'s branch.
#[inline(never)]
fn json(part: JsonValuePart<'_, '_>, h: &mut Hasher) -> Result<(), Error> {
    match part {
        JsonValuePart::Null(r) => {
            r.view()?;
            h.int(1);
        }
        JsonValuePart::Bool(r) => {
            let b = r.view()?;
            h.int(2);
            h.int(u64::from(b.value.unwrap_or_default()));
        }
        JsonValuePart::Number(r) => {
            let n = r.view()?;
            h.int(3);
            h.int(n.value.unwrap_or_default().to_bits());
        }
        JsonValuePart::String(r) => {
            let s = r.view()?;
            h.int(4);
            h.str(s.value.unwrap_or_default());
        }
        JsonValuePart::List(r) => {
            h.int(5);
            let mut seen = false;
            r.read(|ListPart::Values(mut values)| {
                seen = true;
                h.int(values.len() as u64);
                while let Some(value) = values.next()? {
                    value.read(|part| json(part, h))?;
                }
                Ok::<_, Error>(())
            })?;
            if !seen {
                h.int(0);
            }
        }
        JsonValuePart::Object(r) => {
            h.int(6);
            let mut seen = false;
            r.read(|ObjectPart::Fields(fields)| {
                seen = true;
                entries(fields, h)
            })?;
            if !seen {
                h.int(0);
            }
        }
    }
    Ok(())
}

/// The entries of a `map[string, JsonValue]`: their count, then each key and value.
fn entries<'a>(
    mut fields: Entries<'a, '_, &'a str, bop::JsonValue<'a>>,
    h: &mut Hasher,
) -> Result<(), Error> {
    h.int(fields.len() as u64);
    while let Some((key, value)) = fields.next()? {
        h.str(key);
        value.read(|part| json(part, h))?;
    }
    Ok(())
}

/// One `Document` (a [`ReadFn`](crate::one_pass::ReadFn)): its title, its body and its
/// metadata, each hashed as it arrives, and an absent field as its default where it would
/// have been.
pub fn read_document(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    /// Hashes the default of field `tag`: an empty string, or an empty map.
    fn absent(tag: u8, h: &mut Hasher) {
        match tag {
            1 | 2 => h.str(""),
            _ => h.int(0),
        }
    }
    let mut next = 1;
    bop::Document::read_once(r, |part| {
        let tag = match part {
            DocumentPart::Title(_) => 1,
            DocumentPart::Body(_) => 2,
            DocumentPart::Metadata(_) => 3,
        };
        (next..tag).for_each(|t| absent(t, h));
        match part {
            DocumentPart::Title(s) | DocumentPart::Body(s) => h.str(s),
            DocumentPart::Metadata(fields) => entries(fields, h)?,
        }
        next = next.max(tag + 1);
        Ok::<_, Error>(())
    })?;
    (next..=3).for_each(|t| absent(t, h));
    Ok(())
}

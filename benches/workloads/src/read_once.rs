//! Trees, JSON values, documents and arrays of embeddings read in one pass through
//! `bebop_runtime::once`: the generated [`ReadOnce`] implementations (`Generator::one_pass`)
//! and the handles they hand out ([`Record`], [`Records`], [`Entries`]).
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

use bebop_runtime::once::{self, Entries, ReadOnce, Record, Records};
use bebop_runtime::{Error, Reader};

use crate::bop::json_value::{BoolPart, ListPart, NumberPart, ObjectPart, StringPart};
use crate::bop::{
    self, DocumentPart, EmbeddingBatchPart, InferenceResponsePart, JsonValuePart, TreeNodePart,
};
use crate::walk::{Hasher, Walk, bop_timing};

// ---- Readers over the parts, hashing what `one_pass` hashes ----

/// The name the suite's case runners (`instr-report`) know these readers by, as a format
/// whose one operation is `decode_walk`.
pub const FORMAT: &str = "bebop-read-once";

/// The readers of this module, for [`one_pass::cases_with`](crate::one_pass::cases_with).
pub const THROUGH_HANDLES: crate::one_pass::Readers = crate::one_pass::Readers {
    tree: read_tree,
    json: read_json,
    document: read_document,
    embedding_batch: read_embedding_batch,
    inference_response: read_inference_response,
};

/// One `TreeNode`, its subtrees included: the value, the number of children, then each
/// child (a [`ReadFn`](crate::one_pass::ReadFn)).
pub fn read_tree(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    once::record(r, |node| tree(node, h))
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

/// One `JsonValue` (a [`ReadFn`](crate::one_pass::ReadFn)), every branch read in one pass.
pub fn read_json(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    once::record(r, |value| json(value, h))
}

/// A `JsonValue`, its elements and fields included, through its handle. The
/// recursion crosses calls with the value's record, not its branch's: the branch's record
/// points at the union's own reader, which a call would then keep in memory (with the
/// branch handed to a function out of line, JsonLarge took 15% more instructions).
#[inline(never)]
fn json<'a>(value: Record<'a, '_, bop::JsonValue<'a>>, h: &mut Hasher) -> Result<(), Error> {
    value.read(|part| branch(part, h))
}

/// Hashes a `JsonValue`'s branch (for [`json`], inlined into it); lists and objects
/// through [`json`] for each value.
#[inline(always)]
fn branch(part: JsonValuePart<'_, '_>, h: &mut Hasher) -> Result<(), Error> {
    match part {
        JsonValuePart::Null(r) => {
            r.read(|part| match part {})?;
            h.int(1);
        }
        JsonValuePart::Bool(r) => {
            let mut value = false;
            r.read(|BoolPart::Value(v)| {
                value = v;
                Ok::<_, Error>(())
            })?;
            h.int(2);
            h.int(u64::from(value));
        }
        JsonValuePart::Number(r) => {
            let mut value = 0f64;
            r.read(|NumberPart::Value(v)| {
                value = v;
                Ok::<_, Error>(())
            })?;
            h.int(3);
            h.int(value.to_bits());
        }
        JsonValuePart::String(r) => {
            let mut value = "";
            r.read(|StringPart::Value(v)| {
                value = v;
                Ok::<_, Error>(())
            })?;
            h.int(4);
            h.str(value);
        }
        JsonValuePart::List(r) => {
            h.int(5);
            let mut seen = false;
            r.read(|ListPart::Values(mut values)| {
                seen = true;
                h.int(values.len() as u64);
                while let Some(value) = values.next()? {
                    json(value, h)?;
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
        json(value, h)?;
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

/// One `EmbeddingBatch` (a [`ReadFn`](crate::one_pass::ReadFn)): its model, its embeddings
/// ([`embeddings`]) and the tokens billed, as they arrive.
pub fn read_embedding_batch(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    bop::EmbeddingBatch::read_once(r, |part| {
        match part {
            EmbeddingBatchPart::Model(model) => h.str(model),
            EmbeddingBatchPart::Embeddings(list) => embeddings(list, h)?,
            EmbeddingBatchPart::UsageTokens(tokens) => h.int(u64::from(tokens)),
        }
        Ok::<_, Error>(())
    })
}

/// One `InferenceResponse` (a [`ReadFn`](crate::one_pass::ReadFn)): its request id, its
/// embeddings ([`embeddings`]) and its timing, as they arrive.
pub fn read_inference_response(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    bop::InferenceResponse::read_once(r, |part| {
        match part {
            InferenceResponsePart::RequestId(id) => h.uuid(id.as_bytes()),
            InferenceResponsePart::Embeddings(list) => embeddings(list, h)?,
            InferenceResponsePart::Timing(timing) => bop_timing(h, &timing.view()?),
        }
        Ok::<_, Error>(())
    })
}

/// An array of `EmbeddingBF16`: its count, then each element, handed out as the reading
/// reaches it, decoded as its view and walked.
fn embeddings<'a>(
    mut list: Records<'a, '_, bop::EmbeddingBF16<'a>>,
    h: &mut Hasher,
) -> Result<(), Error> {
    h.int(list.len() as u64);
    while let Some(embedding) = list.next()? {
        embedding.view()?.walk(h);
    }
    Ok(())
}

//! Trees, JSON values, documents and arrays of embeddings read in one pass with [`Reader`],
//! validating as they go.
//!
//! A view decodes a message in an array again when a walk reaches it, and hops over that
//! message's own arrays to find where they end, so walking a tree reads every node about
//! three times (docs/performance.md, "Reading a view"); a struct in an array is checked
//! when the array is decoded and decoded again when the walk reaches it. The readers here
//! read every node once: they check what the generated decoders check (bounds, UTF-8, union
//! discriminators, nesting depth, the budget of empty elements) and feed a [`Hasher`] what
//! [`Walk`] feeds it from the view, in wire order. They are written by hand against
//! `Reader`'s public API, as an application that needs every field of a large recursive
//! value once would write them.
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

use std::hint::black_box;

use bebop_runtime::{EncodeExt, Error, Reader, WireSize};

use crate::bop;
use crate::data::Dataset;
use crate::shape::Shape;
use crate::suite::{TimedRun, ascii_row_of, timed};
use crate::walk::{Hasher, Walk, checksum};

/// The name the suite's case runners (`with_case`, `instr-report`) know the one-pass readers
/// by, as a format whose one operation is `decode_walk`.
pub const FORMAT: &str = "bebop-one-pass";

/// A workload read in one pass: its name as the report gives it, its Bebop bytes and its
/// reader.
#[derive(Clone, Debug)]
pub struct Case {
    /// The workload.
    pub workload: &'static str,
    /// Its Bebop encoding.
    pub bytes: Vec<u8>,
    /// Its type's reader.
    pub read: ReadFn,
}

impl Case {
    fn new<S: Shape>(workload: &'static str, value: &S, read: ReadFn) -> Result<Case, String> {
        let bytes = value
            .to_owned_bebop()
            .encode_to_vec()
            .map_err(|e| format!("{workload}: {e}"))?;
        let sum = read_all(&bytes, read).map_err(|e| format!("{workload}: {e}"))?;
        let walk = checksum(value);
        if sum != walk {
            return Err(format!(
                "{workload}: reading in one pass read {sum:#x}, the walk {walk:#x}"
            ));
        }
        Ok(Case {
            workload,
            bytes,
            read,
        })
    }

    /// The timed closure: runs the reader over the bytes `iters` times.
    pub fn timed(&self) -> Box<TimedRun<'_>> {
        timed(move || read_all(black_box(&self.bytes), self.read).unwrap_or(0))
    }
}

/// Every workload that has a one-pass reader (trees, JSON values, documents, arrays of
/// embeddings), in the report's
/// order: the ASCII rows ([`ascii_row_of`]) of `ascii`, where its text differs from `mixed`'s,
/// after the others. Each is checked to read the checksum of the value's walk.
pub fn cases(mixed: &Dataset, ascii: &Dataset) -> Result<Vec<Case>, String> {
    cases_with(mixed, ascii, &BY_HAND)
}

/// A reader for each type that has one.
#[derive(Clone, Copy, Debug)]
pub struct Readers {
    /// For `TreeNode`.
    pub tree: ReadFn,
    /// For `JsonValue`.
    pub json: ReadFn,
    /// For `Document`.
    pub document: ReadFn,
    /// For `EmbeddingBatch`.
    pub embedding_batch: ReadFn,
    /// For `InferenceResponse`.
    pub inference_response: ReadFn,
}

/// The readers of this module, written by hand over `Reader`.
pub const BY_HAND: Readers = Readers {
    tree: read_tree,
    json: read_json,
    document: read_document,
    embedding_batch: read_embedding_batch,
    inference_response: read_inference_response,
};

/// [`cases`] read by `readers`.
pub fn cases_with(
    mixed: &Dataset,
    ascii: &Dataset,
    readers: &Readers,
) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    let mut rows = Vec::new();
    let (m, a, o, r) = (mixed, ascii, &mut out, &mut rows);
    let Readers {
        tree,
        json,
        document,
        embedding_batch,
        inference_response,
    } = *readers;
    let (eb, ir) = ("EmbeddingBatch", "InferenceResponse");
    both(
        o,
        r,
        eb,
        &m.embedding_batch,
        &a.embedding_batch,
        embedding_batch,
    )?;
    both(
        o,
        r,
        ir,
        &m.inference_response,
        &a.inference_response,
        inference_response,
    )?;
    both(o, r, "TreeWide", &m.tree_wide, &a.tree_wide, tree)?;
    both(o, r, "TreeDeep", &m.tree_deep, &a.tree_deep, tree)?;
    both(o, r, "JsonSmall", &m.json_small, &a.json_small, json)?;
    both(o, r, "JsonLarge", &m.json_large, &a.json_large, json)?;
    let (ds, dl) = ("DocumentSmall", "DocumentLarge");
    both(o, r, ds, &m.document_small, &a.document_small, document)?;
    both(o, r, dl, &m.document_large, &a.document_large, document)?;
    out.extend(rows);
    Ok(out)
}

/// Adds the case of workload `name` to `out`, and its ASCII row to `rows` if it has one and
/// the text differs.
fn both<S: Shape>(
    out: &mut Vec<Case>,
    rows: &mut Vec<Case>,
    name: &'static str,
    mixed: &S,
    ascii: &S,
    read: ReadFn,
) -> Result<(), String> {
    out.push(Case::new(name, mixed, read)?);
    if let Some(row) = ascii_row_of(name).filter(|_| mixed != ascii) {
        rows.push(Case::new(row, ascii, read)?);
    }
    Ok(())
}

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

/// The checksum of the `EmbeddingBatch` in `bytes`, read in one pass.
pub fn embedding_batch(bytes: &[u8]) -> Result<u64, Error> {
    read_all(bytes, read_embedding_batch)
}

/// The checksum of the `InferenceResponse` in `bytes`, read in one pass.
pub fn inference_response(bytes: &[u8]) -> Result<u64, Error> {
    read_all(bytes, read_inference_response)
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
                    deeper(r, |r| (0..count).try_for_each(|_| read_tree(r, h)))?;
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
            collection(r, h, |r, h| {
                let count = r.read_length(<bop::JsonValue<'_>>::MIN_SIZE)?;
                h.int(count as u64);
                r.nested(|r| (0..count).try_for_each(|_| read_json(r, h)))
            })
        }
        6 => {
            h.int(6);
            collection(r, h, read_entries)
        }
        _ => Err(r.unknown_discriminator(discriminator)),
    })
}

/// A list's or an object's message, whose one field (1) holds the elements: `field` reads
/// and hashes them, count first; an absent field hashes as an empty count.
#[inline(always)]
fn collection<'a>(
    r: &mut Reader<'a>,
    h: &mut Hasher,
    field: impl Fn(&mut Reader<'a>, &mut Hasher) -> Result<(), Error>,
) -> Result<(), Error> {
    r.message(|r| {
        let mut seen = false;
        while r.read_tag()? == 1 {
            field(r, h)?;
            seen = true;
        }
        if !seen {
            h.int(0);
        }
        Ok(())
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

/// Runs `f` one nesting level deeper ([`Reader::nested`]) on a copy of `r`, then moves `r`
/// to where the copy got. `f` recurses out of line; were `r`'s own address passed to it, the
/// compiler would keep `r` in memory, and every read of the caller's field loop would store
/// and load its position: TreeWide took 12% longer, TreeDeep 5%. JSON lists and objects do
/// without it; their loop reads one tag, and the copy made JsonLarge 10% slower.
#[inline(always)]
fn deeper<'a>(
    r: &mut Reader<'a>,
    f: impl FnOnce(&mut Reader<'a>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut copy = r.clone();
    copy.nested(f)?;
    *r = copy;
    Ok(())
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

/// One `EmbeddingBatch`: its model, then its embeddings ([`embeddings`]), then the tokens
/// billed.
pub fn read_embedding_batch(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    h.str(r.read()?);
    embeddings(r, h)?;
    h.int(u64::from(r.read::<u32>()?));
    Ok(())
}

/// One `InferenceResponse`: its request id, its embeddings ([`embeddings`]), then its
/// timing, a struct of fixed size decoded as its view.
pub fn read_inference_response(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    h.uuid(r.read::<bebop_runtime::Uuid>()?.as_bytes());
    embeddings(r, h)?;
    crate::walk::bop_timing(h, &r.read()?);
    Ok(())
}

/// An array of `EmbeddingBF16`: its count, then each element decoded as its view as the
/// reading reaches it, and walked. Each element is decoded once, where walking the view of
/// the array decodes it when the array is decoded and again when the walk reaches it.
fn embeddings(r: &mut Reader<'_>, h: &mut Hasher) -> Result<(), Error> {
    let count = r.read_length(<bop::EmbeddingBF16<'_>>::MIN_SIZE)?;
    h.int(count as u64);
    (0..count).try_for_each(|_| {
        r.read::<bop::EmbeddingBF16<'_>>()?.walk(h);
        Ok(())
    })
}

//! The one-pass readers, by hand over `Reader` (`bebop_workloads::one_pass`) and through the
//! handles of `bebop_runtime::once` (`bebop_workloads::read_once`), against the generated
//! views: the same checksum as a view's walk on every tree, JSON, document and embedding
//! array workload, and
//! on hostile input the same verdict and the same error as `from_bytes`, also when a reader
//! leaves values unread or abandons them half read.

use bebop_runtime::once::{self, Record, RecordSlot};
use bebop_runtime::{Decode, EncodeExt, Error, Limits, Reader};
use bebop_workloads::bop;
use bebop_workloads::bop::json_value::{ListPart, ObjectPart};
use bebop_workloads::bop::{JsonValuePart, TreeNodePart};
use bebop_workloads::data::Dataset;
use bebop_workloads::one_pass::{self, read_all};
use bebop_workloads::read_once;
use bebop_workloads::shape::Shape;
use bebop_workloads::walk::checksum;
use proptest::prelude::*;

/// The Bebop bytes of a workload's value.
fn bytes_of<S: Shape>(value: &S) -> Vec<u8> {
    value
        .to_owned_bebop()
        .encode_to_vec()
        .expect("workload encodes")
}

/// What the view says of `bytes`: its walk's checksum, or the error of `from_bytes`.
type ByView = fn(&[u8]) -> Result<u64, Error>;

fn tree_view(bytes: &[u8]) -> Result<u64, Error> {
    bop::TreeNode::from_bytes(bytes).map(|v| checksum(&v))
}
fn json_view(bytes: &[u8]) -> Result<u64, Error> {
    bop::JsonValue::from_bytes(bytes).map(|v| checksum(&v))
}
fn document_view(bytes: &[u8]) -> Result<u64, Error> {
    bop::Document::from_bytes(bytes).map(|v| checksum(&v))
}
fn batch_view(bytes: &[u8]) -> Result<u64, Error> {
    bop::EmbeddingBatch::from_bytes(bytes).map(|v| checksum(&v))
}
fn inference_view(bytes: &[u8]) -> Result<u64, Error> {
    bop::InferenceResponse::from_bytes(bytes).map(|v| checksum(&v))
}

/// Whether `bytes` is what its own owned decode encodes back to: fields in tag order, no
/// duplicates, nothing unknown. Only on such input must the checksums agree.
fn canonical<O: for<'a> Decode<'a> + bebop_runtime::Encode>(bytes: &[u8]) -> bool {
    O::from_bytes(bytes)
        .ok()
        .and_then(|o| o.encode_to_vec().ok())
        .is_some_and(|again| again == bytes)
}

/// Compares the one-pass reader `read` with the view (`view`, owned type `O`) on `bytes`.
fn agree<O>(bytes: &[u8], read: ByView, view: ByView) -> Result<(), String>
where
    O: for<'a> Decode<'a> + bebop_runtime::Encode,
{
    match (read(bytes), view(bytes)) {
        (Ok(a), Ok(b)) if a != b && canonical::<O>(bytes) => {
            Err(format!("checksums differ on canonical input {bytes:02x?}"))
        }
        (Ok(_), Ok(_)) => Ok(()),
        (a, b) if a.as_ref().err() == b.as_ref().err() => Ok(()),
        (a, b) => Err(format!(
            "one pass {a:?}, view {b:?} on {} bytes {bytes:02x?}",
            bytes.len()
        )),
    }
}

fn agree_tree(bytes: &[u8]) -> Result<(), String> {
    agree::<bop::owned::TreeNode>(bytes, one_pass::tree, tree_view)?;
    agree::<bop::owned::TreeNode>(bytes, |b| read_all(b, read_once::read_tree), tree_view)?;
    verdict(bytes, skim_tree, tree_view)
}
fn agree_json(bytes: &[u8]) -> Result<(), String> {
    agree::<bop::owned::JsonValue>(bytes, one_pass::json, json_view)?;
    agree::<bop::owned::JsonValue>(bytes, |b| read_all(b, read_once::read_json), json_view)?;
    verdict(bytes, skim_json, json_view)
}
fn agree_document(bytes: &[u8]) -> Result<(), String> {
    agree::<bop::owned::Document>(bytes, one_pass::document, document_view)?;
    agree::<bop::owned::Document>(
        bytes,
        |b| read_all(b, read_once::read_document),
        document_view,
    )
}

fn agree_batch(bytes: &[u8]) -> Result<(), String> {
    type O = bop::owned::EmbeddingBatch;
    agree::<O>(bytes, one_pass::embedding_batch, batch_view)?;
    let handles = |b: &[u8]| read_all(b, read_once::read_embedding_batch);
    agree::<O>(bytes, handles, batch_view)?;
    verdict(bytes, skim_batch, batch_view)
}
fn agree_inference(bytes: &[u8]) -> Result<(), String> {
    type O = bop::owned::InferenceResponse;
    agree::<O>(bytes, one_pass::inference_response, inference_view)?;
    let handles = |b: &[u8]| read_all(b, read_once::read_inference_response);
    agree::<O>(bytes, handles, inference_view)
}

/// Compares the verdict (not the checksum) of a reader that skims with the view's.
fn verdict(bytes: &[u8], skim: ByView, view: ByView) -> Result<(), String> {
    match (skim(bytes), view(bytes)) {
        (Ok(_), Ok(_)) => Ok(()),
        (a, b) if a.as_ref().err() == b.as_ref().err() => Ok(()),
        (a, b) => Err(format!("skimmed {a:?}, view {b:?} on {bytes:02x?}")),
    }
}

/// The caller's own error, which a skimming reader raises inside a value and then swallows.
#[derive(Debug)]
struct Enough;
impl From<Error> for Enough {
    fn from(_: Error) -> Self {
        Enough
    }
}

/// What a skimming reader does with the `i`-th value it is handed: reads it whole, leaves
/// it unread, or starts reading it and gives up at its first part (an error of its own,
/// which it then ignores). The handles must leave the input validated all the same.
fn skim<'a, T: once::ReadOnce<'a>>(
    i: usize,
    value: Record<'a, '_, T>,
    whole: impl FnOnce(Record<'a, '_, T>) -> Result<(), Error>,
) -> Result<(), Error> {
    match i % 3 {
        0 => whole(value),
        1 => Ok(()),
        _ => {
            let _ = value.read(|_| Err(Enough));
            Ok(())
        }
    }
}

/// Reads a tree, skimming its children: [`skim`].
fn skim_tree(bytes: &[u8]) -> Result<u64, Error> {
    fn node<'a>(n: Record<'a, '_, bop::TreeNode<'a>>) -> Result<(), Error> {
        n.read(|part| {
            if let TreeNodePart::Children(mut nodes) = part {
                let mut i = 0;
                while let Some(child) = nodes.next()? {
                    skim(i, child, node)?;
                    i += 1;
                }
            }
            Ok::<_, Error>(())
        })
    }
    let (mut r, mut slot) = (Reader::new(bytes), RecordSlot::new());
    node(slot.record(&mut r))?;
    slot.finish(&mut r)?;
    r.finish()?;
    Ok(0)
}

/// Reads a JSON value, skimming list elements and object values: [`skim`].
fn skim_json(bytes: &[u8]) -> Result<u64, Error> {
    fn value<'a>(v: Record<'a, '_, bop::JsonValue<'a>>) -> Result<(), Error> {
        v.read(|part| {
            match part {
                JsonValuePart::List(list) => list.read(|ListPart::Values(mut values)| {
                    let mut i = 0;
                    while let Some(v) = values.next()? {
                        skim(i, v, value)?;
                        i += 1;
                    }
                    Ok::<_, Error>(())
                })?,
                JsonValuePart::Object(object) => {
                    object.read(|ObjectPart::Fields(mut fields)| {
                        let mut i = 0;
                        while let Some((_, v)) = fields.next()? {
                            skim(i, v, value)?;
                            i += 1;
                        }
                        Ok::<_, Error>(())
                    })?
                }
                _ => {}
            }
            Ok::<_, Error>(())
        })
    }
    let (mut r, mut slot) = (Reader::new(bytes), RecordSlot::new());
    value(slot.record(&mut r))?;
    slot.finish(&mut r)?;
    r.finish()?;
    Ok(0)
}

/// Reads an `EmbeddingBatch`, skimming its embeddings: [`skim`].
fn skim_batch(bytes: &[u8]) -> Result<u64, Error> {
    let mut r = Reader::new(bytes);
    <bop::EmbeddingBatch<'_> as once::ReadOnce>::read_once(&mut r, |part| {
        if let bop::EmbeddingBatchPart::Embeddings(mut list) = part {
            let mut i = 0;
            while let Some(e) = list.next()? {
                skim(i, e, |e| e.view().map(drop))?;
                i += 1;
            }
        }
        Ok::<_, Error>(())
    })?;
    r.finish()?;
    Ok(0)
}

#[test]
fn checksums_are_the_walks_on_every_workload() {
    let data = Dataset::build();
    for (name, tree) in [("TreeWide", &data.tree_wide), ("TreeDeep", &data.tree_deep)] {
        let bytes = bytes_of(tree);
        let view = bop::TreeNode::from_bytes(&bytes).expect("decodes");
        assert_eq!(one_pass::tree(&bytes), Ok(checksum(&view)), "{name}");
        let handles = read_all(&bytes, read_once::read_tree);
        assert_eq!(handles, Ok(checksum(&view)), "{name} through handles");
    }
    for (name, json) in [
        ("JsonSmall", &data.json_small),
        ("JsonLarge", &data.json_large),
    ] {
        let bytes = bytes_of(json);
        let view = bop::JsonValue::from_bytes(&bytes).expect("decodes");
        assert_eq!(one_pass::json(&bytes), Ok(checksum(&view)), "{name}");
        let handles = read_all(&bytes, read_once::read_json);
        assert_eq!(handles, Ok(checksum(&view)), "{name} through handles");
    }
    for (name, doc) in [
        ("DocumentSmall", &data.document_small),
        ("DocumentLarge", &data.document_large),
    ] {
        let bytes = bytes_of(doc);
        let view = bop::Document::from_bytes(&bytes).expect("decodes");
        assert_eq!(one_pass::document(&bytes), Ok(checksum(&view)), "{name}");
        let handles = read_all(&bytes, read_once::read_document);
        assert_eq!(handles, Ok(checksum(&view)), "{name} through handles");
    }
    let bytes = bytes_of(&data.embedding_batch);
    let view = bop::EmbeddingBatch::from_bytes(&bytes).expect("decodes");
    assert_eq!(one_pass::embedding_batch(&bytes), Ok(checksum(&view)));
    let handles = read_all(&bytes, read_once::read_embedding_batch);
    assert_eq!(
        handles,
        Ok(checksum(&view)),
        "EmbeddingBatch through handles"
    );
    let bytes = bytes_of(&data.inference_response);
    let view = bop::InferenceResponse::from_bytes(&bytes).expect("decodes");
    assert_eq!(one_pass::inference_response(&bytes), Ok(checksum(&view)));
    let handles = read_all(&bytes, read_once::read_inference_response);
    assert_eq!(
        handles,
        Ok(checksum(&view)),
        "InferenceResponse through handles"
    );
}

/// The dataset's `EmbeddingBatch` and `InferenceResponse` cut down to three embeddings of
/// five elements, small enough to corrupt byte by byte.
fn small_embeddings(data: &Dataset) -> (Vec<u8>, Vec<u8>) {
    let cut = |list: &mut Vec<bebop_workloads::model::EmbeddingBf16>| {
        list.truncate(3);
        list.iter_mut().for_each(|e| e.vector.truncate(5));
    };
    let (mut batch, mut inference) = (
        data.embedding_batch.clone(),
        data.inference_response.clone(),
    );
    cut(&mut batch.embeddings);
    cut(&mut inference.embeddings);
    (bytes_of(&batch), bytes_of(&inference))
}

/// Every prefix of `bytes`, and `bytes` with each byte replaced by a few others.
fn corruptions(bytes: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let prefixes = (0..bytes.len()).map(|n| bytes[..n].to_vec());
    let replaced = (0..bytes.len()).flat_map(move |i| {
        [
            0x00,
            0x01,
            0x7f,
            0x80,
            0xff,
            bytes[i] ^ 0x80,
            bytes[i].wrapping_add(1),
        ]
        .into_iter()
        .map(move |b| {
            let mut v = bytes.to_vec();
            v[i] = b;
            v
        })
    });
    prefixes.chain(replaced)
}

#[test]
fn every_prefix_and_corrupted_byte_gets_the_views_verdict() {
    let data = Dataset::build();
    let mut failures = Vec::new();
    let mut check = |r: Result<(), String>| {
        if let Err(e) = r {
            failures.push(e);
        }
    };
    for b in corruptions(&bytes_of(&data.json_small)) {
        check(agree_json(&b));
    }
    for b in corruptions(&bytes_of(&data.document_small)) {
        check(agree_document(&b));
    }
    let (batch, inference) = small_embeddings(&data);
    for b in corruptions(&batch) {
        check(agree_batch(&b));
    }
    for b in corruptions(&inference) {
        check(agree_inference(&b));
    }
    // The wide tree is 1,000 nodes; its first kilobyte holds every kind of field.
    let tree = bytes_of(&data.tree_wide);
    for b in corruptions(&tree).filter(|b| b.len() < 1024 || b.len() == tree.len()) {
        check(agree_tree(&b));
    }
    assert!(
        failures.is_empty(),
        "{} disagreements, the first: {}",
        failures.len(),
        failures[0]
    );
}

/// A chain of `depth` nodes, each the only child of the one before.
fn chain(depth: usize) -> Vec<u8> {
    let mut node = bop::owned::TreeNode {
        value: Some(0),
        children: None,
    };
    for i in 1..depth {
        node = bop::owned::TreeNode {
            value: Some(i as i32),
            children: Some(vec![node]),
        };
    }
    node.encode_to_vec().expect("encodes")
}

#[test]
fn nesting_past_the_limit_fails_where_the_view_fails() {
    let max = Limits::DEFAULT.max_depth as usize;
    for depth in [max - 1, max, max + 1, max + 10] {
        let bytes = chain(depth);
        agree_tree(&bytes).unwrap_or_else(|e| panic!("depth {depth}: {e}"));
    }
    assert!(one_pass::tree(&chain(max + 10)).is_err());
    assert!(read_all(&chain(max + 10), read_once::read_tree).is_err());
    assert!(skim_tree(&chain(max + 10)).is_err());
}

/// JsonSmall's and DocumentSmall's bytes and [`small_embeddings`], built once.
fn small_samples() -> &'static [Vec<u8>; 4] {
    static SAMPLES: std::sync::OnceLock<[Vec<u8>; 4]> = std::sync::OnceLock::new();
    SAMPLES.get_or_init(|| {
        let data = Dataset::build();
        let (batch, inference) = small_embeddings(&data);
        [
            bytes_of(&data.json_small),
            bytes_of(&data.document_small),
            batch,
            inference,
        ]
    })
}

proptest! {
    #[test]
    fn arbitrary_bytes_get_the_views_verdict(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        agree_json(&bytes).map_err(TestCaseError::fail)?;
        agree_tree(&bytes).map_err(TestCaseError::fail)?;
        agree_document(&bytes).map_err(TestCaseError::fail)?;
        agree_batch(&bytes).map_err(TestCaseError::fail)?;
        agree_inference(&bytes).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn mutated_workloads_get_the_views_verdict(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let [mut json, mut doc, mut batch, mut inference] = small_samples().clone();
        for (at, b) in &edits {
            for sample in [&mut json, &mut doc, &mut batch, &mut inference] {
                let i = at.index(sample.len());
                sample[i] = *b;
            }
        }
        agree_json(&json).map_err(TestCaseError::fail)?;
        agree_document(&doc).map_err(TestCaseError::fail)?;
        agree_batch(&batch).map_err(TestCaseError::fail)?;
        agree_inference(&inference).map_err(TestCaseError::fail)?;
    }
}

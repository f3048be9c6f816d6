//! Hostile input: truncations, byte flips and deep nesting give errors, never panics, hangs
//! or stack overflows.

use bebop_descriptor::{
    CodeGeneratorRequest, CodeGeneratorResponse, DescriptorSet, TypeDescriptor,
};
use bebop_runtime::{Decode, ErrorKind};
use proptest::prelude::*;

/// The reference descriptors and requests; `None` (the test is skipped) when the conformance
/// data is missing and `CI` is unset (see `bebop-shared-data`).
fn reference_files() -> Option<Vec<(String, Vec<u8>)>> {
    let dir = bebop_shared_data::conformance_dir("reference-descriptors")?;
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let mut files: Vec<_> = entries
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .map(|p| {
            let name = p
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            (name, std::fs::read(&p).expect("read reference file"))
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 80,
        "expected ~90 reference files, found {}",
        files.len()
    );
    Some(files)
}

/// Decodes `bytes` as what the file holds; on success, checks that re-encoding reaches a
/// fixed point (decode(encode(x)) encodes to the same bytes).
fn decode_any(name: &str, bytes: &[u8]) -> bool {
    fn fixpoint<T: for<'a> Decode<'a> + bebop_runtime::Encode>(v: &T) {
        let once = bebop_runtime::encode_to_vec(v).expect("re-encode");
        let back = T::from_bytes(&once).expect("re-encoded bytes decode");
        assert_eq!(bebop_runtime::encode_to_vec(&back).expect("encode"), once);
    }
    if name.ends_with(".request.bin") {
        let r = CodeGeneratorRequest::from_bytes(bytes);
        if let Ok(v) = &r {
            fixpoint(v);
        }
        r.is_ok()
    } else {
        let r = DescriptorSet::from_bytes(bytes);
        if let Ok(v) = &r {
            fixpoint(v);
        }
        r.is_ok()
    }
}

#[test]
fn every_truncation_is_an_error() {
    let Some(files) = reference_files() else {
        return;
    };
    for (name, bytes) in files {
        for len in 0..bytes.len() {
            assert!(
                !decode_any(&name, &bytes[..len]),
                "{name} truncated to {len} decoded"
            );
        }
    }
}

/// Truncations whose outer length prefix is patched to fit, so the decoder has to walk into
/// the body and meet the inner lengths that no longer fit.
#[test]
fn truncations_with_a_fitting_outer_length_never_panic() {
    let Some(files) = reference_files() else {
        return;
    };
    let mut decoded = 0;
    let mut tried = 0;
    for (name, bytes) in files {
        for len in 5..bytes.len() {
            let mut cut = bytes[..len].to_vec();
            cut[..4].copy_from_slice(&((len - 4) as u32).to_le_bytes());
            tried += 1;
            if decode_any(&name, &cut) {
                decoded += 1;
            }
        }
    }
    // Most cuts land inside a nested value and fail; a few end exactly where a field ends.
    assert!(
        decoded < tried / 2,
        "{decoded} of {tried} cut inputs decoded"
    );
}

/// `levels` TypeDescriptors each holding the next as `array_element`, the innermost an int32.
fn nested_type_bytes(levels: usize) -> Vec<u8> {
    // Innermost: len 3, kind(1) = INT32, end. Each wrapper adds 4 (len) + 3 (tag 1, kind,
    // tag 2) + 1 (end).
    let inner_total = 7usize;
    let mut out = Vec::with_capacity(inner_total + 8 * levels);
    for level in (1..=levels).rev() {
        let total = inner_total + 8 * level;
        out.extend_from_slice(&((total - 4) as u32).to_le_bytes());
        out.extend_from_slice(&[1, 20, 2]);
    }
    out.extend_from_slice(&[3, 0, 0, 0, 1, 6, 0]);
    out.resize(out.len() + levels, 0);
    out
}

#[test]
fn deeply_nested_types_hit_the_depth_limit() {
    // Sanity check of the builder: a few levels decode.
    let t = TypeDescriptor::from_bytes(&nested_type_bytes(3)).expect("3 levels");
    assert_eq!(
        t.array_element
            .and_then(|e| e.array_element)
            .and_then(|e| e.array_element)
            .map(|e| e.kind),
        Some(Some(bebop_descriptor::TypeKind::Int32))
    );
    let bytes = nested_type_bytes(100_000);
    let err = TypeDescriptor::from_bytes(&bytes).expect_err("100k levels must be rejected");
    assert_eq!(err.kind(), ErrorKind::TooDeep, "{err}");
    // Also inside a whole request, on a thread with a small stack.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            // CodeGeneratorRequest { schemas(4): [ SchemaDescriptor { definitions(5): [
            //   DefinitionDescriptor { const_def(13): ConstDef { type(1): <deep> } } ] } ] }
            let mut const_def = vec![1];
            const_def.extend_from_slice(&bytes);
            const_def.push(0);
            let mut def = vec![13];
            def.extend_from_slice(&message(&const_def));
            def.push(0);
            let mut schema = vec![5, 1, 0, 0, 0];
            schema.extend_from_slice(&message(&def));
            schema.push(0);
            let mut request = vec![4, 1, 0, 0, 0];
            request.extend_from_slice(&message(&schema));
            request.push(0);
            CodeGeneratorRequest::from_bytes(&message(&request)).map(|_| ())
        })
        .expect("spawn");
    let err = handle
        .join()
        .expect("no stack overflow")
        .expect_err("too deep");
    assert_eq!(err.kind(), ErrorKind::TooDeep);
}

fn message(body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

#[test]
fn deeply_nested_definitions_hit_the_depth_limit() {
    // DefinitionDescriptor { nested(7): [ DefinitionDescriptor { nested(7): [ ... ] } ] }
    let mut def = message(&[0]);
    for _ in 0..2_000 {
        let mut body = vec![7, 1, 0, 0, 0];
        body.extend_from_slice(&def);
        body.push(0);
        def = message(&body);
    }
    let mut schema = vec![5, 1, 0, 0, 0];
    schema.extend_from_slice(&def);
    schema.push(0);
    let mut set = vec![1, 1, 0, 0, 0];
    set.extend_from_slice(&message(&schema));
    set.push(0);
    let err = DescriptorSet::from_bytes(&message(&set)).expect_err("too deep");
    assert_eq!(err.kind(), ErrorKind::TooDeep);
}

#[test]
fn garbage_responses_are_errors() {
    assert!(CodeGeneratorResponse::from_bytes(b"").is_err());
    assert!(CodeGeneratorResponse::from_bytes(b"hello, world").is_err());
    assert!(CodeGeneratorResponse::from_bytes(&[0xff; 64]).is_err());
    // A huge declared array in a short input fails before allocating.
    let mut bytes = vec![2];
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    bytes.push(0);
    let err = CodeGeneratorResponse::from_bytes(&message(&bytes)).expect_err("huge count");
    assert_eq!(err.kind(), ErrorKind::LengthOutOfBounds);
    // An empty message is a valid, empty response.
    assert_eq!(
        CodeGeneratorResponse::from_bytes(&[1, 0, 0, 0, 0]),
        Ok(CodeGeneratorResponse::default())
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Flipping bytes of a reference file gives a value or an error, never a panic; values
    /// that do decode re-encode to a fixed point.
    #[test]
    fn byte_flips_never_panic(
        file in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1..=255u8), 1..8),
    ) {
        let Some(files) = reference_files_cached() else {
            return Ok(());
        };
        let (name, bytes) = &files[file.index(files.len())];
        let mut bytes = bytes.clone();
        for (at, mask) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= mask;
        }
        decode_any(name, &bytes);
    }
}

/// (file name, bytes) of every reference file.
type Files = Vec<(String, Vec<u8>)>;

fn reference_files_cached() -> Option<&'static [(String, Vec<u8>)]> {
    static FILES: std::sync::OnceLock<Option<Files>> = std::sync::OnceLock::new();
    FILES.get_or_init(reference_files).as_deref()
}

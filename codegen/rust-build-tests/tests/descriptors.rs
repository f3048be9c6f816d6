//! The reference compiler's descriptor sets and plugin requests
//! (`../shared/conformance/reference-descriptors/NAME.{desc,request}.bin`) through the types
//! generated from the standard schemas `bebop/descriptor.bop` and `bebop/plugin.bop`: each
//! decodes to a view (converted to an owned value) and straight to an owned value (with
//! `Vec<(K, V)>` maps), all three re-encode to the same bytes, and they agree with the `bebop-descriptor` crate on the schemas they hold.
//! Without the conformance data beside the clone they are skipped (an error when `CI` is
//! set; see `bebop-shared-data`).

#![allow(clippy::unwrap_used)]

use bebop_runtime::{Decode, Encode, EncodeExt};
use bebop_rust_build_tests::standard::{descriptor, plugin};

/// The reference files ending in `suffix`; `None` (after a notice) when the conformance data
/// is missing and `CI` is unset.
fn reference_files(suffix: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let dir = bebop_shared_data::conformance_dir("reference-descriptors")?;
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path
                .file_name()?
                .to_str()?
                .strip_suffix(suffix)?
                .to_string();
            Some((name, std::fs::read(&path).unwrap()))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 40, "only {} *{suffix} files", files.len());
    Some(files)
}

#[test]
fn descriptor_sets_round_trip_byte_for_byte() {
    let Some(files) = reference_files(".desc.bin") else {
        return;
    };
    for (name, bytes) in files {
        let view = descriptor::bebop::DescriptorSet::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(view.encoded_size(), bytes.len(), "{name}");
        assert!(view.encode_to_vec().unwrap() == bytes, "{name}: view");
        let owned = view.to_owned_value();
        assert!(owned.encode_to_vec().unwrap() == bytes, "{name}: owned");
        let direct = descriptor::owned::bebop::DescriptorSet::from_bytes(&bytes).unwrap();
        // Compared through their bytes: some descriptors hold a NaN constant.
        assert!(
            direct.encode_to_vec().unwrap() == bytes,
            "{name}: owned decode"
        );
        let crate_set = bebop_descriptor::DescriptorSet::from_bytes(&bytes).unwrap();
        let schemas = owned.schemas.as_deref().unwrap_or_default();
        assert_eq!(schemas.len(), crate_set.schema_list().len(), "{name}");
        for (ours, theirs) in schemas.iter().zip(crate_set.schema_list()) {
            assert_eq!(ours.path, theirs.path, "{name}");
        }
    }
}

#[test]
fn plugin_requests_round_trip_byte_for_byte() {
    let Some(files) = reference_files(".request.bin") else {
        return;
    };
    for (name, bytes) in files {
        let view = plugin::bebop::CodeGeneratorRequest::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(view.encoded_size(), bytes.len(), "{name}");
        assert!(view.encode_to_vec().unwrap() == bytes, "{name}: view");
        let owned = view.to_owned_value();
        assert!(owned.encode_to_vec().unwrap() == bytes, "{name}: owned");
        let direct = plugin::owned::bebop::CodeGeneratorRequest::from_bytes(&bytes).unwrap();
        // Compared through their bytes: some descriptors hold a NaN constant.
        assert!(
            direct.encode_to_vec().unwrap() == bytes,
            "{name}: owned decode"
        );
        let crate_request = bebop_descriptor::CodeGeneratorRequest::from_bytes(&bytes).unwrap();
        assert_eq!(
            owned.files_to_generate, crate_request.files_to_generate,
            "{name}"
        );
        let schemas = owned.schemas.as_deref().unwrap_or_default();
        assert_eq!(schemas.len(), crate_request.schema_list().len(), "{name}");
    }
}

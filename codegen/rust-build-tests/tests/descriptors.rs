//! The reference compiler's descriptor sets and plugin requests
//! (`../shared/conformance/reference-descriptors/NAME.{desc,request}.bin`) through the types
//! generated from the standard schemas `bebop/descriptor.bop` and `bebop/plugin.bop`: each
//! decodes to a view (converted to an owned value) and straight to an owned value (with
//! `Vec<(K, V)>` maps), all three re-encode to the same bytes, and they agree with the `bebop-descriptor` crate on the schemas they hold.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use bebop::{Decode, Encode, EncodeExt};
use bebop_rust_build_tests::standard::{descriptor, plugin};

fn reference_files(suffix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/reference-descriptors");
    assert!(
        dir.is_dir(),
        "reference descriptors missing at {} (see ../shared/conformance/README.md)",
        dir.display()
    );
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
    files
}

#[test]
fn descriptor_sets_round_trip_byte_for_byte() {
    for (name, bytes) in reference_files(".desc.bin") {
        let view = descriptor::bebop::DescriptorSet::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(view.encoded_size(), bytes.len(), "{name}");
        assert!(view.encode_to_vec().unwrap() == bytes, "{name}: view");
        let owned = view.to_owned_value().unwrap();
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
    for (name, bytes) in reference_files(".request.bin") {
        let view = plugin::bebop::CodeGeneratorRequest::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(view.encoded_size(), bytes.len(), "{name}");
        assert!(view.encode_to_vec().unwrap() == bytes, "{name}: view");
        let owned = view.to_owned_value().unwrap();
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

//! Shared helpers of the integration tests: the reference conformance data (optional: see
//! `bebop-shared-data`) and the options the golden files are generated with.
#![allow(dead_code)]

pub mod synthetic;

use std::path::{Path, PathBuf};

use bebop_codegen_rust::Generator;
use bebop_descriptor::CodeGeneratorRequest;

/// `../shared/conformance/reference-descriptors` relative to the repository root; `None`
/// (after a notice) when it is missing and `CI` is unset, a panic when `CI` is set (see
/// `bebop-shared-data`).
pub fn reference_descriptors() -> Option<PathBuf> {
    bebop_shared_data::conformance_dir("reference-descriptors")
}

/// Every `NAME.request.bin`, as (NAME, request), sorted by name; `None` as
/// [`reference_descriptors`].
pub fn reference_requests() -> Option<Vec<(String, CodeGeneratorRequest)>> {
    let dir = reference_descriptors()?;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read the descriptor directory") {
        let path = entry.expect("directory entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".request.bin"))
        else {
            continue;
        };
        let bytes = std::fs::read(&path).expect("read request");
        let request = CodeGeneratorRequest::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push((name.to_string(), request));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(
        out.len() >= 40,
        "expected the reference requests in {}, found {}",
        dir.display(),
        out.len()
    );
    Some(out)
}

/// The generator options of the checked-in expected files: views over `::bebop_core`,
/// owned types under `feature = "alloc"`, defmt under `feature = "defmt"`, rustfmt.
pub fn golden_generator() -> Generator {
    Generator::new()
        .runtime_path("::bebop_core")
        .owned_types(true)
        .owned_cfg(Some(r#"feature = "alloc""#))
        .defmt(Some(r#"feature = "defmt""#))
}

/// The parameter string equivalent to [`golden_generator`], for the plugin binary.
pub const GOLDEN_PARAMETER: &str =
    r#"runtime=::bebop_core,owned=true,owned_cfg=feature = "alloc",defmt=feature = "defmt""#;

pub fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected")
}

/// The plugin request for one schema file, `name` holding `text`; panics with the
/// diagnostics when it does not compile.
pub fn request_for(name: &str, text: &str) -> CodeGeneratorRequest {
    let compiled = bebopc::Compiler::new().compile_source(name, text);
    assert!(
        !compiled.has_errors(),
        "{}",
        compiled.render_terminal(false)
    );
    compiled
        .code_generator_request(&Default::default(), None, &[])
        .expect("request")
}

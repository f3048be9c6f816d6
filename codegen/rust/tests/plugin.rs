//! The `bebopc-gen-rust` binary end to end: a reference request on stdin, a response on
//! stdout whose file equals the checked-in expected output; errors in the response's
//! `error` field; a garbage request is a plugin failure (non-zero exit, message on stderr).

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use bebop_descriptor::{CodeGeneratorRequest, CodeGeneratorResponse, DiagnosticSeverity};

fn run(input: &[u8], args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bebopc-gen-rust"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn bebopc-gen-rust");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write request");
    child.wait_with_output().expect("wait for bebopc-gen-rust")
}

/// The reference request of fixture `name`; `None` (the test is skipped) without the
/// conformance data, unless `CI` is set (see `bebop-shared-data`).
fn reference_request(name: &str) -> Option<CodeGeneratorRequest> {
    let (_, request) = common::reference_requests()?
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no reference request {name}"));
    Some(request)
}

fn respond(request: &CodeGeneratorRequest) -> CodeGeneratorResponse {
    let out = run(&request.to_vec().expect("encode request"), &[], &[]);
    assert!(
        out.status.success(),
        "exit {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    CodeGeneratorResponse::from_bytes(&out.stdout).expect("decode response")
}

#[test]
fn reference_requests_produce_the_expected_files() {
    let expected = common::expected_dir();
    for name in ["codegen_all", "union", "document", "tree"] {
        let Some(mut request) = reference_request(name) else {
            return;
        };
        request.parameter = Some(common::GOLDEN_PARAMETER.into());
        let response = respond(&request);
        assert_eq!(response.error, None, "{name}");
        assert!(
            response.diagnostics.is_none(),
            "{name}: {:?}",
            response.diagnostics
        );
        let files = response.files.expect("files");
        assert_eq!(files.len(), 1);
        assert_eq!(
            files[0].name.as_deref(),
            Some(format!("{name}.rs").as_str())
        );
        let want =
            std::fs::read_to_string(expected.join(format!("{name}.rs"))).expect("expected file");
        assert!(
            files[0].content.as_deref() == Some(want.as_str()),
            "{name}: plugin output differs from tests/expected/{name}.rs"
        );
    }
}

#[test]
fn the_reference_request_as_sent_needs_no_options() {
    // The reference compiler sends no parameter: views only, for ::bebop_core.
    let Some(request) = reference_request("message") else {
        return;
    };
    let response = respond(&request);
    let content = response.files.expect("files")[0]
        .content
        .clone()
        .expect("content");
    assert!(content.contains("pub struct OuterM3"));
    assert!(!content.contains("pub mod owned"));
}

#[test]
fn host_options_apply_and_the_parameter_wins() {
    let Some(mut request) = reference_request("tree") else {
        return;
    };
    request.host_options = Some(vec![
        ("rust.owned".into(), "true".into()),
        ("rust.runtime".into(), "::bebop_runtime".into()),
        ("other.key".into(), "ignored".into()),
    ]);
    request.parameter = Some("runtime=crate::rt,file=gen/tree.rs".into());
    let response = respond(&request);
    assert_eq!(response.error, None);
    let files = response.files.expect("files");
    assert_eq!(files[0].name.as_deref(), Some("gen/tree.rs"));
    let content = files[0].content.as_deref().expect("content");
    assert!(content.contains("pub mod owned"));
    assert!(content.contains("crate::rt::CODEGEN_ABI"));
    assert!(!content.contains("::bebop_runtime::"));
}

#[test]
fn schema_and_option_problems_go_into_the_error_field() {
    let Some(mut request) = reference_request("tree") else {
        return;
    };
    request.parameter = Some("owned=perhaps".into());
    let response = respond(&request);
    assert!(response.files.is_none());
    assert!(
        response
            .error
            .as_deref()
            .is_some_and(|e| e.contains("owned")),
        "{:?}",
        response.error
    );
    request.parameter = None;
    request.files_to_generate = Some(vec!["missing.bop".into()]);
    let response = respond(&request);
    assert!(
        response
            .error
            .as_deref()
            .is_some_and(|e| e.contains("missing.bop"))
    );
}

#[test]
fn a_missing_rustfmt_is_a_warning_diagnostic() {
    let Some(request) = reference_request("tree") else {
        return;
    };
    let out = run(
        &request.to_vec().expect("encode"),
        &[],
        &[("RUSTFMT", "/nonexistent/rustfmt")],
    );
    assert!(out.status.success());
    let response = CodeGeneratorResponse::from_bytes(&out.stdout).expect("decode");
    let diagnostics = response.diagnostics.expect("a diagnostic");
    assert_eq!(diagnostics[0].severity, Some(DiagnosticSeverity::Warning));
    assert!(
        diagnostics[0]
            .text
            .as_deref()
            .is_some_and(|t| t.contains("rustfmt"))
    );
    // The prettyplease output still compiles in shape: one file with the types.
    let content = response.files.expect("files")[0]
        .content
        .clone()
        .expect("content");
    assert!(content.contains("pub struct TreeNode<'a>"));
}

#[test]
fn garbage_on_stdin_is_a_plugin_failure() {
    let out = run(b"\xff\xff\xff\xff not a request", &[], &[]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("CodeGeneratorRequest"), "{stderr}");
}

#[test]
fn version_and_help() {
    let out = run(b"", &["--version"], &[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("bebopc-gen-rust "));
    let out = run(b"", &["--help"], &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("owned_cfg"));
    assert!(!run(b"", &["--bogus"], &[]).status.success());
}

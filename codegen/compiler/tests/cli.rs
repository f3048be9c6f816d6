//! The `bebopc` binary: exit codes, formats and flags.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/reference-fixtures");
    assert!(
        dir.is_dir(),
        "conformance fixtures missing at {}",
        dir.display()
    );
    dir
}

fn bebopc(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bebopc"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run bebopc")
}

#[test]
fn check_valid_schema_succeeds() {
    let valid = fixtures().join("valid");
    let out = bebopc(
        &["check", "imports.bop", "-I", ".", "--color", "never"],
        &valid,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.ends_with("no errors\n"), "{err}");
    let quiet = bebopc(&["check", "-q", "imports.bop", "-I", "."], &valid);
    assert!(quiet.stderr.is_empty());
}

#[test]
fn check_invalid_schema_fails_with_diagnostics() {
    let dir = fixtures().join("should_fail");
    let out = bebopc(&["check", "enum_zero.bop", "--color", "never"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "enum_zero.bop:2:6: error[E050]: enum 'MissingZero' has no member with value 0\n"
        ),
        "{err}"
    );
    assert!(err.contains("  |      ^^^^^^^^^^^\n"), "{err}");
    assert!(!err.contains('\x1b'), "no colour when asked not to");
    let colored = bebopc(&["check", "enum_zero.bop", "--color", "always"], &dir);
    assert!(String::from_utf8_lossy(&colored.stderr).contains("\x1b[1;31m"));
}

#[test]
fn json_format_prints_one_object_per_line() {
    let dir = fixtures().join("should_fail");
    let out = bebopc(&["check", "multiple_errors.bop", "--format", "json"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    assert!(lines.len() >= 11);
    assert_eq!(lines[0]["code"], "E010");
    assert_eq!(lines[0]["line"], 2);
    assert_eq!(lines[0]["file"], "multiple_errors.bop");
}

#[test]
fn warnings_can_be_hidden() {
    let valid = fixtures().join("valid");
    let shown = bebopc(&["check", "basic_types.bop", "--color", "never"], &valid);
    assert_eq!(shown.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&shown.stderr).contains("warning[W003]"));
    let hidden = bebopc(&["check", "basic_types.bop", "--no-warn"], &valid);
    assert!(!String::from_utf8_lossy(&hidden.stderr).contains("warning"));
}

#[test]
fn usage_errors_and_missing_files() {
    let valid = fixtures().join("valid");
    assert_eq!(bebopc(&["check"], &valid).status.code(), Some(2));
    assert_eq!(bebopc(&["frobnicate"], &valid).status.code(), Some(2));
    let missing = bebopc(&["check", "no_such_file.bop", "--color", "never"], &valid);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("error[E030]"));
}

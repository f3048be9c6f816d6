//! The reference compiler's own fixtures: every `valid/` schema compiles, every
//! `should_fail/` schema is rejected with the right first diagnostic.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::path::{Path, PathBuf};

use bebopc::{Code, Compilation, Compiler};

/// `../shared/conformance/reference-fixtures`; `None` (the test is skipped) when the
/// conformance data is missing and `CI` is unset (see `bebop-shared-data`).
fn fixtures() -> Option<PathBuf> {
    let dir = bebop_shared_data::conformance_dir("reference-fixtures")?;
    assert!(
        dir.join("valid").is_dir() && dir.join("should_fail").is_dir(),
        "{}: no valid/ and should_fail/ directories",
        dir.display()
    );
    Some(dir)
}

fn bop_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bop"))
        .collect();
    files.sort();
    files
}

fn line_of(result: &Compilation, index: usize) -> u32 {
    let d = &result.diagnostics[index];
    result.sources.line_col(d.span.source, d.span.start).line
}

#[test]
fn every_valid_fixture_compiles() {
    let Some(fixtures) = fixtures() else { return };
    let valid = fixtures.join("valid");
    let files = bop_files(&valid);
    assert!(
        files.len() >= 40,
        "expected the 44 valid fixtures, found {}",
        files.len()
    );
    for file in files {
        let result = Compiler::new().include_dir(&valid).compile(&[&file]);
        assert!(
            !result.has_errors(),
            "{} should compile:\n{}",
            file.display(),
            result.render_terminal(false)
        );
        let model = result.model.as_ref().expect("a model without errors");
        assert!(model.schemas[0].is_root);
    }
}

/// `(file, code of the first diagnostic, its line)`.
const SHOULD_FAIL: &[(&str, Code, u32)] = &[
    ("bad_comment.bop", Code::E003, 1),
    ("dec_ambig_user.bop", Code::E041, 6),
    ("enum_zero.bop", Code::E050, 2),
    ("invalid_map_keys.bop", Code::E060, 2),
    ("invalid_syntax.bop", Code::E010, 1),
    ("invalid_union_reference.bop", Code::E040, 8),
    ("multiple_errors.bop", Code::E010, 2),
    ("nested_union.bop", Code::E059, 2),
    ("package_after_def.bop", Code::E016, 8),
    ("package_after_import.bop", Code::E015, 6),
    ("rpc.bop", Code::E010, 8),
    ("union_ref_union.bop", Code::E059, 11),
];

#[test]
fn every_should_fail_fixture_is_rejected_for_the_right_reason() {
    let Some(root) = fixtures() else { return };
    let dir = root.join("should_fail");
    let files = bop_files(&dir);
    assert_eq!(
        files.len(),
        SHOULD_FAIL.len(),
        "a should_fail fixture was added or removed; update SHOULD_FAIL"
    );
    for (name, code, line) in SHOULD_FAIL {
        let path = dir.join(name);
        // As the reference was run: the fixture's folder and the valid folder (for imports).
        let result = Compiler::new()
            .include_dir(&dir)
            .include_dir(root.join("valid"))
            .compile(&[&path]);
        let text = result.render_terminal(false);
        assert!(result.has_errors(), "{name} should be rejected");
        assert!(result.model.is_none());
        let first = &result.diagnostics[0];
        assert_eq!(first.code, *code, "{name}: wrong first diagnostic:\n{text}");
        assert_eq!(line_of(&result, 0), *line, "{name}: wrong line:\n{text}");
    }
}

#[test]
fn multiple_errors_reports_every_error() {
    let Some(fixtures) = fixtures() else { return };
    let dir = fixtures.join("should_fail");
    let result = Compiler::new().compile(&[dir.join("multiple_errors.bop")]);
    let text = result.render_terminal(false);
    let mut lines: Vec<(u32, Code)> = (0..result.diagnostics.len())
        .filter(|&i| result.diagnostics[i].is_error())
        .map(|i| (line_of(&result, i), result.diagnostics[i].code))
        .collect();
    lines.sort();
    // Every independent mistake of the file, by line.
    let expected = [
        (2, Code::E010),  // `Sxxxx(f)`: a discriminator must be a number
        (3, Code::E020),  // `Syyyx(2x)`: malformed number
        (7, Code::E010),  // message field without a tag
        (9, Code::E040),  // unknown type `wtf`
        (13, Code::E040), // unknown type `int24`
        (16, Code::E010), // `mesage`
        (21, Code::E060), // `bool[]` as a map key
        (24, Code::E058), // empty union
        (28, Code::E018), // `readonly message`
        (38, Code::E057), // discriminator 1 used twice
        (46, Code::E040), // `S` is internal to union U
    ];
    for e in expected {
        assert!(lines.contains(&e), "missing {e:?} in:\n{text}");
    }
}

#[test]
fn terminal_rendering_snapshot() {
    let Some(fixtures) = fixtures() else { return };
    let dir = fixtures.join("should_fail");
    let result = Compiler::new().compile(&[dir.join("enum_zero.bop")]);
    let shown = result.diagnostics[0].render(&result.sources, false);
    let path = dir.join("enum_zero.bop").to_string_lossy().into_owned();
    let expected = format!(
        "{path}:2:6: error[E050]: enum 'MissingZero' has no member with value 0\n\
         2 | enum MissingZero {{\n\
         \x20 |      ^^^^^^^^^^^\n\
         \x20  = help: add a member for the default state, e.g. `MISSINGZERO_UNSPECIFIED = 0;`\n"
    );
    assert_eq!(shown, expected);
}

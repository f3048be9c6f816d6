//! `Config::compile` on every valid reference fixture, with the options of the golden files of
//! `bebop-codegen-rust` (`golden_generator()` in `codegen/rust/tests/common/mod.rs`), must
//! write exactly `codegen/rust/tests/expected/NAME.rs`: the code generated from the reference
//! compiler's descriptors, which `bebop-rust-fixtures` compiles and tests. So what a build
//! script gets from `bebop-build` (our `bebopc`, then the generator) for the fixtures compiles
//! and works as well, without compiling it a second time.
//!
//! One kind of line is normalised before comparing, provenance that only the compilation from
//! the `.bop` files has: the goldens come from requests without source info, so their item docs
//! read ``/// From `NAME.bop`: `struct Name`.`` where `bebop-build` (which always keeps source
//! positions) writes ``/// From `NAME.bop` (line 3): `struct Name`.``; the ` (line N)` of such
//! doc lines is removed. Nothing else is, except in the fixtures of [`OUR_STANDARD_DOCS`].
//!
//! Those import a standard schema (`bebop/json.bop`, `bebop/any.bop`), whose doc comments are
//! our own, not the reference's (SPEC.md: "Their doc comments are our own"): the reference's
//! descriptors carry the reference's texts, bebopc ours. For them every doc-comment line
//! (`///`) is left out on both sides, so the code itself must still be identical; the doc
//! texts of the standard schemas are compiled (and linted) with the rest of them, in
//! `bebop-rust-build-tests` (module `standard`). A listed fixture that matches exactly fails
//! the test, so the list cannot go stale.
//!
//! The fixtures are `../shared/conformance/reference-fixtures/valid/` (see
//! `bebop-shared-data`: skipped with a notice when missing, an error when `CI` is set).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::path::{Path, PathBuf};

/// Fixtures whose doc comments differ because they import standard schemas (see the top).
const OUR_STANDARD_DOCS: &[&str] = &["document", "reflection"];

/// The options of `golden_generator()`, on a `Config` writing `NAME.rs` into `out`.
fn golden_config(valid: &Path, out: &Path, name: &str) -> bebop_build::Config {
    let mut c = bebop_build::Config::new();
    c.include(valid)
        .out_dir(out)
        .file_name(format!("{name}.rs"))
        .runtime_path("::bebop_core")
        .owned_types(true)
        .owned_cfg(Some(r#"feature = "alloc""#))
        .defmt(Some(r#"feature = "defmt""#))
        .rustfmt(true)
        .emit_rerun_if_changed(false)
        .emit_warnings(false);
    c
}

/// `line` without the ` (line N)` of an item's ``/// From `FILE` (line N): `...`.`` doc line;
/// any other line unchanged.
fn normalise_line(line: &str) -> String {
    let doc = line.trim_start();
    let Some(rest) = doc.strip_prefix("/// From `") else {
        return line.to_string();
    };
    let Some(close) = rest.find('`') else {
        return line.to_string();
    };
    let after = &rest[close + 1..];
    let Some(tail) = after.strip_prefix(" (line ") else {
        return line.to_string();
    };
    let Some((digits, tail)) = tail.split_once(')') else {
        return line.to_string();
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || !tail.starts_with(": `")
    {
        return line.to_string();
    }
    let indent = &line[..line.len() - doc.len()];
    format!("{indent}/// From `{}`{tail}", &rest[..close])
}

fn normalise(code: &str) -> String {
    let mut out: String = code
        .lines()
        .map(normalise_line)
        .collect::<Vec<_>>()
        .join("\n");
    if code.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `code` without its doc-comment lines (`///`, after indentation).
fn without_doc_lines(code: &str) -> String {
    code.lines()
        .filter(|l| !l.trim_start().starts_with("///"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first line where `expected` and `got` differ, as a failure message.
fn first_difference(name: &str, expected: &str, got: &str) -> String {
    let (n, want, have) = expected
        .lines()
        .map(Some)
        .chain(std::iter::repeat(None))
        .zip(got.lines().map(Some).chain(std::iter::repeat(None)))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a.unwrap_or("<end>"), b.unwrap_or("<end>")))
        .unwrap_or((0, "<same lines>", "<different line endings>"));
    format!("{name}: differs first at line {n}\n  expected: {want}\n  bebop-build: {have}")
}

#[test]
fn normalisation_drops_only_source_lines_of_item_docs() {
    assert_eq!(
        normalise_line("    /// From `a.bop` (line 12): `struct pkg.A`."),
        "    /// From `a.bop`: `struct pkg.A`."
    );
    for kept in [
        "/// From `a.bop`: `struct A`.",
        "/// From `a.bop` (line x): `struct A`.",
        "/// From `a.bop` (line 3) and more",
        "// From `a.bop` (line 3): `struct A`.",
        "let s = \"From `a.bop` (line 3): `struct A`.\";",
    ] {
        assert_eq!(normalise_line(kept), kept);
    }
    assert_eq!(
        normalise("a\n/// From `b` (line 1): `c`.\n"),
        "a\n/// From `b`: `c`.\n"
    );
}

#[test]
fn every_valid_fixture_generates_its_golden_file() {
    let Some(valid) = bebop_shared_data::conformance_dir("reference-fixtures/valid") else {
        return;
    };
    let expected_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rust/tests/expected");
    let names = bebop_shared_data::names_with_suffix(&valid, ".bop");
    assert!(
        names.len() >= 40,
        "expected the valid fixtures in {}, found {}",
        valid.display(),
        names.len()
    );

    let out = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for name in &names {
        let output = golden_config(&valid, out.path(), name)
            .compile(&[valid.join(format!("{name}.bop"))])
            .unwrap_or_else(|e| panic!("{name}.bop: {e}"));
        // The compiler's warnings are expected (deprecated aliases on purpose); the
        // generator's would mean other code than the goldens' (rustfmt not found).
        let rustfmt: Vec<&String> = output
            .warnings
            .iter()
            .filter(|w| w.starts_with("rustfmt was not used"))
            .collect();
        assert!(rustfmt.is_empty(), "{name}: {rustfmt:?}");
        let got = std::fs::read_to_string(&output.path).unwrap();
        let path = expected_dir.join(format!("{name}.rs"));
        let expected = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        let (got, expected) = (normalise(&got), normalise(&expected));
        if OUR_STANDARD_DOCS.contains(&name.as_str()) {
            if got == expected {
                failures.push(format!(
                    "{name}: matches exactly; remove it from OUR_STANDARD_DOCS"
                ));
            } else if !expected
                .lines()
                .next()
                .is_some_and(|l| l.contains("`bebop/"))
            {
                failures.push(format!(
                    "{name}: in OUR_STANDARD_DOCS but imports no standard schema"
                ));
            } else {
                let (got, expected) = (without_doc_lines(&got), without_doc_lines(&expected));
                if got != expected {
                    failures.push(first_difference(
                        &format!("{name} (doc lines left out)"),
                        &expected,
                        &got,
                    ));
                }
            }
        } else if got != expected {
            failures.push(first_difference(name, &expected, &got));
        }
    }
    assert!(
        failures.is_empty(),
        "bebop-build's code for the fixtures differs from the golden files of \
         bebop-codegen-rust ({} of {}):\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}

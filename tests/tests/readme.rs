//! The README's Rust code is real: the blocks of its usage example (between the
//! `readme-example` markers) are built as a crate by `scripts/readme-example`, for a host and
//! for a Cortex-M3; every other Rust block must be an excerpt of a file of the repository that
//! says where it is from (`// From PATH (excerpt)` as its first line), and each of its lines
//! must appear in that file, in order. `// ...` lines stand for left-out code.

use std::path::Path;

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fenced blocks of `text`: (info string, body, line of the opening fence).
fn blocks(text: &str) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), String::new(), i + 1)),
            (Some(_), Some("")) => out.extend(open.take()),
            (Some((_, body, _)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README: a code block is not closed");
    out
}

/// Checks that the lines of `excerpt` appear in `file` in order.
fn check_excerpt(excerpt: &str, file: &str, what: &str) {
    let file_lines: Vec<&str> = file.lines().map(str::trim).collect();
    let mut at = 0;
    for line in excerpt.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("// ...") {
            continue;
        }
        // A comment added at the end of a line in the README only.
        let code = line.split(" // ").next().unwrap_or(line).trim_end();
        match file_lines[at..]
            .iter()
            .position(|l| *l == line || *l == code)
        {
            Some(i) => at += i + 1,
            None => panic!("{what}: `{line}` is not in the file (after line {at})"),
        }
    }
}

#[test]
fn rust_blocks_are_built_or_excerpts_of_real_files() {
    let text = readme();
    let example_start = text
        .find("<!-- readme-example:start -->")
        .expect("the README marks its usage example");
    let example_end = text
        .find("<!-- readme-example:end -->")
        .expect("the README marks the end of its usage example");
    let first_line = |offset: usize| text[..offset].lines().count();
    let (from, to) = (first_line(example_start), first_line(example_end));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut excerpts = 0;
    let mut built = 0;
    for (info, body, line) in blocks(&text) {
        if !info.starts_with("rust") {
            continue;
        }
        if (from..to).contains(&line) {
            built += 1;
            continue;
        }
        let what = format!("README.md:{line}");
        let first = body.lines().next().unwrap_or_default();
        let Some(path) = first
            .strip_prefix("// From ")
            .and_then(|p| p.strip_suffix(" (excerpt)"))
        else {
            panic!(
                "{what}: a Rust block outside the built example must start with `// From PATH (excerpt)`"
            );
        };
        let file = std::fs::read_to_string(root.join(path))
            .unwrap_or_else(|e| panic!("{what}: {path}: {e}"));
        check_excerpt(&body[first.len()..], &file, &what);
        excerpts += 1;
    }
    assert_eq!(
        built, 2,
        "the usage example has a build.rs and a src/lib.rs"
    );
    assert!(excerpts >= 3, "{excerpts} excerpts");
}

#[test]
fn the_excerpt_check_catches_lines_that_are_not_there() {
    let file = "fn a() {\n    one();\n    two();\n}\n";
    check_excerpt("fn a() {\n    // ...\n    two(); // note\n}\n", file, "ok");
    let wrong_order = std::panic::catch_unwind(|| check_excerpt("two();\none();\n", file, "x"));
    assert!(wrong_order.is_err());
    let missing = std::panic::catch_unwind(|| check_excerpt("three();\n", file, "x"));
    assert!(missing.is_err());
}

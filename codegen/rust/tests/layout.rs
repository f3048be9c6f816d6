//! The code the generator writes as text is already in rustfmt's layout: for schemas whose
//! definitions are all of the kinds written as text, the output without rustfmt is exactly
//! what rustfmt makes of it. The schemas stretch every width rustfmt decides by: names from
//! 1 to 60 characters, modules nested 0 to 4 deep, long deprecation notes, long runtime
//! paths and `cfg` predicates, type and field attribute rules (a user derive merges with
//! the generated one, as rustfmt merges them).
//!
//! Needs `rustfmt` (as the golden files do).

use std::io::Write;
use std::process::{Command, Stdio};

mod common;

use bebop_codegen_rust::Generator;

/// An identifier of `len` characters (at least its prefix) starting with `head` and `i`.
fn name(head: char, i: usize, len: usize) -> String {
    let mut s = format!("{head}{i}");
    while s.len() < len {
        s.push(if s.len() % 7 == 0 { 'Q' } else { 'x' });
    }
    s
}

/// Enums, forward-compatible enums and flags with names of length `len`, in a package
/// `depth` levels deep.
fn schema(depth: usize, lens: &[usize]) -> String {
    let mut out = String::from("edition = \"2026\"\n");
    let mut body = String::from("import \"bebop/decorators.bop\"\n\n");
    if depth > 0 {
        let pkg: Vec<String> = (0..depth).map(|d| format!("p{d}")).collect();
        out.push_str(&format!("package {}\n", pkg.join(".")));
    }
    out.push('\n');
    out.push_str(&std::mem::take(&mut body));
    let bases = ["byte", "int16", "uint32", "int64", "uint64"];
    for (i, &len) in lens.iter().enumerate() {
        let base = bases[i % bases.len()];
        let e = name('E', i, len);
        let m = |k: usize| name('M', k, len.saturating_sub(k % 3));
        out.push_str(&format!(
            "/// Enum of width {len}.\nenum {e} : {base} {{\n    {} = 0;\n    @deprecated(\"{}\")\n    {} = 1;\n    {} = 2;\n}}\n\n",
            m(0),
            "note ".repeat(len / 4 + 1).trim_end(),
            m(1),
            m(2)
        ));
        let f = name('F', i, len);
        out.push_str(&format!(
            "@forward_compatible\nenum {f} : {base} {{\n    {} = 0;\n    {} = 7;\n}}\n\n",
            m(3),
            m(4)
        ));
        let g = name('G', i, len);
        let fc = if i % 2 == 0 {
            "@forward_compatible\n"
        } else {
            ""
        };
        out.push_str(&format!(
            "@flags\n{fc}enum {g} : {base} {{\n    {} = 0;\n    {} = 1;\n    {} = 4;\n    {} = 64;\n}}\n\n",
            m(5),
            m(6),
            m(7),
            m(8)
        ));
        if i % 3 == 0 {
            let h = name('H', i, len);
            out.push_str(&format!(
                "@deprecated(\"{}\")\n@flags\nenum {h} : {base} {{\n    {} = 0;\n    {} = 1;\n}}\n\n",
                "old ".repeat(len / 3 + 1).trim_end(),
                m(10),
                m(9)
            ));
        }
    }
    out
}

fn rustfmt(source: &str) -> String {
    let mut child = Command::new(std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into()))
        .args(["--edition", "2024", "--quiet"])
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("rustfmt runs (install it with `rustup component add rustfmt`)");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = source.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("rustfmt output");
    writer.join().expect("writer").expect("write to rustfmt");
    assert!(out.status.success(), "rustfmt failed on the generated code");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The first line where `a` and `b` differ, with a few lines of context from both.
fn first_difference(a: &str, b: &str) -> String {
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = al
        .iter()
        .zip(&bl)
        .position(|(x, y)| x != y)
        .unwrap_or(al.len().min(bl.len()));
    let from = i.saturating_sub(3);
    format!(
        "line {}:\n--- generated\n{}\n--- rustfmt\n{}",
        i + 1,
        al[from..(i + 6).min(al.len())].join("\n"),
        bl[from..(i + 6).min(bl.len())].join("\n")
    )
}

fn generators() -> Vec<(&'static str, Generator)> {
    vec![
        (
            "defmt and owned under cfgs",
            Generator::new()
                .runtime_path("::bebop_core")
                .owned_types(true)
                .owned_cfg(Some(r#"feature = "alloc""#))
                .defmt(Some(r#"feature = "defmt""#))
                .rustfmt(false),
        ),
        (
            "long runtime path, serde under a long cfg, attribute rules",
            Generator::new()
                .runtime_path("::my_company_protocol::bebop_runtime")
                .owned_types(true)
                .serde(true)
                .serde_cfg(Some(
                    r#"all(feature = "serde", not(target_os = "none"), feature = "long_feature_name")"#,
                ))
                .defmt(Some(
                    r#"all(feature = "defmt", target_os = "none", feature = "another_feature")"#,
                ))
                .type_attribute(".", "#[derive(::core::hash::Hash)]")
                .type_attribute(
                    ".",
                    r#"#[cfg_attr(feature = "schemars_support", derive(::schemars::JsonSchema))]"#,
                )
                .field_attribute(".", r#"#[serde(rename = "a_fairly_long_renamed_member")]"#)
                .rustfmt(false),
        ),
        ("plain", Generator::new().rustfmt(false)),
    ]
}

/// Adds to `failures` where the output for the schema `text` (named `file`, in a package
/// `depth` levels deep) differs from what rustfmt makes of it, for every generator but,
/// when `skip_long`, those with a long runtime path.
fn differences(depth: usize, file: &str, text: &str, skip_long: bool, failures: &mut Vec<String>) {
    let request = common::request_for(file, text);
    for (what, generator) in generators() {
        if skip_long && what.starts_with("long") {
            continue;
        }
        let code = generator.generate_request(&request).expect("generates");
        let out = &code.files[0].content;
        let formatted = rustfmt(out);
        if &formatted != out {
            failures.push(format!(
                "depth {depth}, {what}: {}",
                first_difference(out, &formatted)
            ));
        }
    }
}

#[test]
fn enums_and_flags_are_written_in_rustfmt_layout() {
    let lens = [1, 4, 9, 16, 23, 30, 37, 44, 51, 55, 60];
    let mut failures = Vec::new();
    for depth in [0, 1, 2, 3, 4] {
        // Four modules deep, 60-character names break impl headers inside generics, which
        // the text writer does not do (the code is still valid; rustfmt, when it runs,
        // lays it out).
        let lens = if depth < 4 { &lens[..] } else { &lens[..8] };
        let text = schema(depth, lens);
        differences(depth, "layout.bop", &text, false, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Structs, messages and unions (with an enum they use) with names of length `len`, in a
/// package `depth` levels deep: every field kind (scalars, strings, arrays, maps, fixed
/// arrays, nested records, half floats, lazy recursion), inline and forward-compatible unions.
///
/// Not covered, because the writer lays them out more simply than rustfmt (the code is the
/// same, and rustfmt, when it runs, lays them out): conversions whose closures nest a
/// closure or a tuple that does not fit on its line (an optional map with string keys, a
/// map of strings to records, a lazy field deep in modules), qualified paths
/// (`<Array<'a, T> as Decode<'a>>::skip`) too long for their line, which rustfmt lays out in
/// ways that depend on what it is given, and sums
/// of calls too wide for a line.
fn record_schema(depth: usize, lens: &[usize]) -> String {
    let mut out = String::from("edition = \"2026\"\n");
    if depth > 0 {
        let pkg: Vec<String> = (0..depth).map(|d| format!("p{d}")).collect();
        out.push_str(&format!("package {}\n", pkg.join(".")));
    }
    out.push_str(
        "\nimport \"bebop/decorators.bop\"\n\nenum Color : uint16 { Red = 0; Green = 1; }\n",
    );
    out.push_str("struct Point { x: float32; y: float32; }\n");
    for (i, &len) in lens.iter().enumerate() {
        let f = |k: usize| name('f', k, len.saturating_sub(k % 3)).to_lowercase();
        let s = name('S', i, len);
        out.push_str(&format!(
            "struct {s} {{ {}: string; {}: string[]; {}: map[string, int32]; {}: Point; {}: Point[3]; {}: byte[16]; {}: uuid[]; {}: uint32; {}: float64; {}: uuid; }}\n",
            f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), f(9)
        ));
        let m = name('M', i, len);
        out.push_str(&format!(
            "message {m} {{ {}(1): uint64; {}(2): string; {}(3): {s}[]; {}(4): Color; {}(5): int32[]; {}(6): float16; {}(7): bfloat16[]; {}(8): {m}; }}\n",
            f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7)
        ));
        let u = name('U', i, len);
        out.push_str(&format!(
            "union {u} {{ A(1): {{ {}: float32; }}; B(2): {{ {}: Point[]; {}: string; }}; C(3): {s}; }}\n",
            f(0), f(1), f(2)
        ));
        let w = name('W', i, len);
        out.push_str(&format!(
            "@forward_compatible\nunion {w} {{ Ping(1): {{ at: uint64; }}; Text(2): {{ {}: map[string, int32]; }}; }}\n",
            f(3)
        ));
    }
    out
}

#[test]
fn records_are_written_in_rustfmt_layout() {
    let lens = [1, 5, 12];
    let mut failures = Vec::new();
    for depth in [0, 1] {
        let text = record_schema(depth, &lens);
        // Twenty-character names after a long runtime path make sums of calls that
        // rustfmt breaks inside the calls, which the writer does not do.
        differences(depth, "records.bop", &text, true, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Services with names of length `len`, in a package `depth` levels deep: every method
/// kind, requests and responses that borrow and that do not, a deprecated method, a service
/// without methods.
fn service_schema(depth: usize, lens: &[usize]) -> String {
    let mut out = String::from("edition = \"2026\"\n");
    if depth > 0 {
        let pkg: Vec<String> = (0..depth).map(|d| format!("p{d}")).collect();
        out.push_str(&format!("package {}\n", pkg.join(".")));
    }
    out.push_str("\nimport \"bebop/decorators.bop\"\n\n");
    out.push_str("struct Point { x: float32; y: float32; }\nstruct Label { text: string; }\n");
    out.push_str("service Nothing {}\n");
    for (i, &len) in lens.iter().enumerate() {
        let r = name('R', i, len);
        out.push_str(&format!("message {r} {{ name(1): string; }}\n"));
        let m = |k: usize| name('M', k, len.saturating_sub(k % 3));
        out.push_str(&format!(
            "/// Service of width {len}.\nservice {} {{\n    {}(Point): {r};\n    {}({r}): stream Point;\n    @deprecated(\"{}\")\n    {}(stream Label): Point;\n    {}(stream {r}): stream Label;\n    {}(Point): Point;\n}}\n",
            name('S', i, len),
            m(0),
            m(1),
            "gone ".repeat(len / 4 + 1).trim_end(),
            m(2),
            m(3),
            m(4),
        ));
    }
    out
}

#[test]
fn services_are_written_in_rustfmt_layout() {
    let lens = [1, 5, 12, 20, 30];
    let mut failures = Vec::new();
    for depth in [0, 1, 2, 3] {
        let text = service_schema(depth, &lens);
        // A long runtime path breaks the parameter types of the service's fixed methods
        // (`describe`), which the writer does not do.
        differences(depth, "services.bop", &text, true, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

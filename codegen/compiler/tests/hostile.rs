//! Garbage, truncated, deeply nested and very large inputs: the compiler must answer with
//! errors or a model, never panic, hang or overflow the stack. These tests run on the
//! default 2 MiB test-thread stack on purpose.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::path::PathBuf;
use std::time::Instant;

use bebopc::{Code, Compilation, Compiler};
use proptest::prelude::*;

fn compile_bytes(bytes: &[u8]) -> Compilation {
    Compiler::new()
        .env_var("X", "1")
        .compile_in_memory(&[("fuzz.bop", bytes)], &["fuzz.bop"])
}

fn compile(src: &str) -> Compilation {
    compile_bytes(src.as_bytes())
}

/// The valid reference fixtures; `None` (the test is skipped) when the conformance data is
/// missing and `CI` is unset (see `bebop-shared-data`).
fn valid_fixtures() -> Option<Vec<(PathBuf, String)>> {
    let dir = bebop_shared_data::conformance_dir("reference-fixtures/valid")?;
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bop"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    out.sort();
    Some(out)
}

const TOKENS: &[&str] = &[
    "enum",
    "struct",
    "message",
    "union",
    "service",
    "const",
    "mut",
    "export",
    "local",
    "map",
    "array",
    "stream",
    "import",
    "edition",
    "package",
    "true",
    "false",
    "with",
    "readonly",
    "A",
    "b",
    "int32",
    "uint8",
    "string",
    "byte",
    "float64",
    "timestamp",
    "uuid",
    "0",
    "1",
    "255",
    "0xFF",
    "-",
    "1.5e3",
    "inf",
    "nan",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    ";",
    ",",
    ".",
    "=",
    "@",
    "#",
    "!",
    "?",
    "|",
    "&",
    "~",
    "<<",
    ">>",
    "+",
    "\"s\"",
    "'q'",
    "b\"\\x00\"",
    "[[ x ]]",
    "decorator",
    "targets",
    "ALL",
    "param",
    "validate",
    "/// doc\n",
    "/* c */",
    "\n",
    "$(X)",
    "\"$(X)\"",
    "\"\\u{41}\"",
    "deprecated",
    "flags",
    "\"bebop/decorators.bop\"",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = compile_bytes(&bytes);
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        let _ = compile(&text);
    }

    #[test]
    fn token_soup_never_panics(picks in proptest::collection::vec(0..TOKENS.len(), 0..300)) {
        let text: Vec<&str> = picks.iter().map(|&i| TOKENS[i]).collect();
        let _ = compile(&text.join(" "));
    }

    #[test]
    fn mutated_fixtures_never_panic(
        index in 0usize..44,
        edits in proptest::collection::vec((any::<u16>(), 0u8..3, 0..TOKENS.len()), 1..8),
    ) {
        let Some(fixtures) = valid_fixtures() else {
            return Ok(());
        };
        let (_, text) = &fixtures[index % fixtures.len()];
        let mut s = text.clone();
        for (at, op, tok) in edits {
            if s.is_empty() {
                s.push_str(TOKENS[tok]);
                continue;
            }
            let mut pos = at as usize % s.len();
            while !s.is_char_boundary(pos) {
                pos -= 1;
            }
            match op {
                0 => s.insert_str(pos, TOKENS[tok]),
                1 => {
                    let mut end = (pos + 1 + tok % 7).min(s.len());
                    while !s.is_char_boundary(end) {
                        end += 1;
                    }
                    s.replace_range(pos..end, "");
                }
                _ => s.replace_range(pos..pos, "\u{0}"),
            }
        }
        let _ = compile(&s);
    }
}

#[test]
fn every_prefix_of_small_fixtures_and_samples_of_large_ones() {
    let mut checked = 0;
    let Some(fixtures) = valid_fixtures() else {
        return;
    };
    for (path, text) in fixtures {
        let len = text.len();
        let step = if len <= 3000 { 1 } else { len / 300 };
        let mut cut = 0;
        while cut <= len {
            let mut at = cut;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let r = compile(&text[..at]);
            // A prefix either compiles or reports errors with positions inside it.
            for d in &r.diagnostics {
                assert!(
                    d.span.end as usize <= at.max(1),
                    "{}: span past the end at {at}",
                    path.display()
                );
            }
            checked += 1;
            cut += step.max(1);
        }
    }
    assert!(checked > 5_000, "checked {checked} prefixes");
}

fn has(r: &Compilation, code: Code) -> bool {
    r.diagnostics.iter().any(|d| d.code == code)
}

#[test]
fn deep_nesting_is_reported() {
    let n = 10_000;
    let parens = format!("enum E {{ A = {}0{}; }}", "(".repeat(n), ")".repeat(n));
    assert!(has(&compile(&parens), Code::E012));
    let unary = format!("enum E {{ A = {}0; }}", "~".repeat(n));
    assert!(has(&compile(&unary), Code::E012));
    let blocks = format!("{}{}", "struct A { ".repeat(n), "}".repeat(n));
    assert!(has(&compile(&blocks), Code::E012));
    let unions = format!("{}{}", "union U { ".repeat(n), "}".repeat(n));
    assert!(has(&compile(&unions), Code::E012));
    let braces = format!("{}{}", "{".repeat(n), "}".repeat(n));
    assert!(compile(&braces).has_errors());
    let brackets = format!("struct S {{ x: {}; }}", "[".repeat(n));
    assert!(compile(&brackets).has_errors());
    let maps = format!(
        "struct S {{ x: {}int32{}; }}",
        "map[int32, ".repeat(n),
        "]".repeat(n)
    );
    assert!(has(&compile(&maps), Code::E012));
    let arrays = format!("struct S {{ x: int32{}; }}", "[]".repeat(n));
    assert!(has(&compile(&arrays), Code::E012));
    let fixed = format!("struct S {{ x: int32{}; }}", "[2]".repeat(n));
    assert!(has(&compile(&fixed), Code::E012));
    let decorators = format!("struct S {{ {}x: int32; }}", "@a(".repeat(n));
    assert!(compile(&decorators).has_errors());
    let comments = "/*".repeat(n);
    assert!(has(&compile(&comments), Code::E003));
}

#[test]
fn long_chains_are_handled_iteratively() {
    let n = 10_000;
    // Struct i contains struct i-1: fixed sizes are computed without recursion.
    let mut chain = String::from("struct S0 { x: int32; }\n");
    for i in 1..n {
        chain.push_str(&format!("struct S{i} {{ x: S{}; y: byte; }}\n", i - 1));
    }
    let r = compile(&chain);
    assert!(!r.has_errors(), "{}", r.render_terminal(false));
    let m = r.model.unwrap();
    match &m.find(&format!("S{}", n - 1)).unwrap().body {
        bebopc::model::DefBody::Struct(s) => assert_eq!(s.fixed_size, 4 + (n as u32 - 1)),
        _ => panic!(),
    }
    // The same chain closed into a cycle.
    let cycle = chain.replacen(
        "struct S0 { x: int32; }",
        &format!("struct S0 {{ x: S{}; }}", n - 1),
        1,
    );
    let r = compile(&cycle);
    assert_eq!(r.errors().filter(|d| d.code == Code::E061).count(), 1);
    // Services mixing each other in a long chain, then a cycle.
    let mut svcs = String::from("struct R {}\nservice V0 { M0(R): R; }\n");
    for i in 1..n {
        svcs.push_str(&format!("service V{i} with V{} {{ M{i}(R): R; }}\n", i - 1));
    }
    assert!(!compile(&svcs).has_errors());
    let svc_cycle = svcs.replacen("service V0 {", &format!("service V0 with V{} {{", n - 1), 1);
    assert!(has(&compile(&svc_cycle), Code::E073));
    // A long enum expression.
    let expr = format!("enum E {{ Z = 0; A = 1{}; }}", " + 1".repeat(n));
    assert!(!compile(&expr).has_errors());
}

#[test]
fn huge_literals() {
    let digits = "9".repeat(10_000);
    for src in [
        format!("const uint128 X = {digits};"),
        format!("const int32 X = -{digits};"),
        format!("const float64 X = {digits};"),
        format!("enum E {{ Z = 0; A = {digits}; }}"),
        format!("struct S {{ x: byte[{digits}]; }}"),
        format!("message M {{ x({digits}): int32; }}"),
        format!("union U {{ A({digits}): {{}}; }}"),
        format!("const float64 X = 1e{digits};"),
        format!("const duration X = \"{digits}h\";"),
        format!("const timestamp X = \"{digits}\";"),
        format!("const string X = \"{}\";", "x".repeat(1_000_000)),
    ] {
        let r = compile(&src);
        let _ = r.render_terminal(false);
        let _ = r.render_json();
    }
    assert!(has(
        &compile(&format!("const uint128 X = {digits};")),
        Code::E021
    ));
    assert!(has(
        &compile(&format!("const float64 X = 1e{digits};")),
        Code::E022
    ));
}

fn generated_schema(definitions: usize) -> String {
    let mut s = String::from("edition = \"2026\"\npackage gen\nimport \"bebop/decorators.bop\"\n");
    for i in 0..definitions {
        match i % 5 {
            0 => s.push_str(&format!(
                "/// Enum {i}.\nenum E{i} : uint16 {{ ZERO = 0; ONE = 1; TWO = ONE << 1; }}\n"
            )),
            1 => s.push_str(&format!(
                "struct S{i} {{ a: int32; b: E{}; c: string[]; d: map[string, float64]; }}\n",
                i - 1
            )),
            2 => s.push_str(&format!(
                "message M{i} {{ @deprecated a(1): S{}; b(2): M{i}[]; c(3): timestamp; }}\n",
                i - 1
            )),
            3 => s.push_str(&format!(
                "union U{i} {{ A(1): {{ x: M{}; }}; B(2): S{}; C(3): message {{ y(1): int64; }}; }}\n",
                i - 1,
                i - 2
            )),
            _ => s.push_str(&format!(
                "service V{i} {{ Get(S{}): M{}; Watch(M{}): stream U{}; }}\nconst int64 K{i} = {i};\n",
                i - 3,
                i - 2,
                i - 2,
                i - 1
            )),
        }
    }
    s
}

#[test]
fn ten_thousand_definitions() {
    let src = generated_schema(10_000);
    let start = Instant::now();
    let r = compile(&src);
    let elapsed = start.elapsed();
    assert!(!r.has_errors(), "{}", r.render_terminal(false));
    let m = r.model.unwrap();
    assert_eq!(m.schemas[0].definitions.len(), 12_000);
    eprintln!(
        "10,000-definition schema ({} KiB): compiled in {elapsed:?} (debug build)",
        src.len() / 1024
    );
    // Many errors in a big file are capped, not unbounded.
    let broken = src.replace("int32", "int24");
    let r = compile(&broken);
    assert!(r.has_errors());
    assert!(r.diagnostics.len() <= bebopc::diag::MAX_DIAGNOSTICS_PER_FILE + 20);
}

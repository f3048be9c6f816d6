//! The formatter (`bebopc::format`, behind `bebopc fmt`): over every reference fixture and
//! every `.bop` file of the repository, and over generated schemas with random whitespace
//! and comments between their tokens, formatting
//!
//! - is idempotent: `fmt(fmt(x)) == fmt(x)`;
//! - changes no meaning: the DescriptorSet compiled from the formatted text equals the
//!   original's byte for byte (the files of one directory are compiled together, formatted
//!   or not, so imports between them are formatted too);
//! - keeps every comment: as many comments before and after, with the same text (up to the
//!   indentation of block comments' lines and trailing whitespace, which the formatter
//!   normalises).
//!
//! Golden files (`tests/format/NAME.in.bop` formatted is `tests/format/NAME.out.bop`) fix the
//! style on deliberately messy inputs. After an intended change of the style, regenerate
//! them with `BEBOP_BLESS=1 cargo test -p bebopc --test format` and review the diff.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bebopc::Compiler;
use bebopc::descriptor::DescriptorOptions;
use bebopc::format::{FormatError, FormatOptions, comments, format_source, normalize_comment};
use bebopc::source::SourceId;
use proptest::prelude::*;

fn fmt(text: &str) -> String {
    fmt_with(text, &FormatOptions::default())
}

fn fmt_with(text: &str, options: &FormatOptions) -> String {
    match format_source(SourceId(0), text, options) {
        Ok(s) => s,
        Err(e) => panic!("{e}: {e:?}\n--- input\n{text}"),
    }
}

/// The DescriptorSet of `root` compiled with `files` (by name), or the error codes.
fn compile(files: &BTreeMap<String, String>, root: &str) -> Result<Vec<u8>, Vec<String>> {
    let files: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_bytes()))
        .collect();
    let result = Compiler::new()
        .env_var("BEBOP_FMT_TEST", "x")
        .compile_in_memory(&files, &[root]);
    match result.descriptor_set(&DescriptorOptions::default()) {
        Some(set) => Ok(set.to_vec().expect("encode")),
        None => Err(result
            .errors()
            .map(|d| d.code.as_str().to_string())
            .collect()),
    }
}

/// Checks the three properties on the files of one directory (`name -> text`); returns how
/// many compiled without errors.
fn check_group(label: &str, files: &BTreeMap<String, String>) -> usize {
    let mut formatted = BTreeMap::new();
    for (name, text) in files {
        let once = fmt(text);
        let twice = fmt(&once);
        assert!(
            once == twice,
            "{label}/{name}: formatting is not idempotent\n--- once\n{once}\n--- twice\n{twice}"
        );
        let before = comments(text);
        let after = comments(&once);
        assert_eq!(
            before.len(),
            after.len(),
            "{label}/{name}: {} comments became {}",
            before.len(),
            after.len()
        );
        for (a, b) in before.iter().zip(&after) {
            assert_eq!(
                normalize_comment(a),
                normalize_comment(b),
                "{label}/{name}: a comment changed"
            );
            // The comment's text is there, as written (its first line for block comments,
            // whose other lines may be re-indented).
            let first = a.lines().next().unwrap_or("").trim_end();
            assert!(once.contains(first), "{label}/{name}: lost {a:?}");
        }
        formatted.insert(name.clone(), once);
    }
    let mut compiled = 0;
    for name in files.keys() {
        let original = compile(files, name);
        let new = compile(&formatted, name);
        compiled += usize::from(original.is_ok());
        assert!(
            original == new,
            "{label}/{name}: the descriptor set changed (or the diagnostics: {:?} vs {:?})",
            original.as_ref().err(),
            new.as_ref().err()
        );
    }
    compiled
}

fn read_bop_files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_file() && path.extension().is_some_and(|e| e == "bop") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).expect("read schema");
            out.insert(name, text);
        }
    }
    out
}

#[test]
fn every_reference_fixture() {
    let Some(dir) = bebop_shared_data::conformance_dir("reference-fixtures/valid") else {
        return;
    };
    let files = read_bop_files(&dir);
    assert!(files.len() >= 40, "expected ~44 fixtures");
    let compiled = check_group("reference-fixtures/valid", &files);
    assert!(compiled >= 40, "only {compiled} fixtures compiled");
}

/// The repository's root.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every directory of the repository holding `.bop` files (not under `target` or hidden
/// directories).
fn schema_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut has_bop = false;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && !name.starts_with("target-") {
                schema_dirs(&path, out);
            }
        } else if name.ends_with(".bop") {
            has_bop = true;
        }
    }
    if has_bop {
        out.push(dir.to_path_buf());
    }
}

#[test]
fn every_repository_schema() {
    let root = repository();
    let mut dirs = Vec::new();
    schema_dirs(&root, &mut dirs);
    let mut files = 0;
    for dir in &dirs {
        let group = read_bop_files(dir);
        files += group.len();
        let label = dir.strip_prefix(&root).unwrap_or(dir).display().to_string();
        check_group(&label, &group);
    }
    // The standard schemas, the examples, the targets' and the benchmarks' schemas, and the
    // golden inputs below.
    assert!(
        files >= 17,
        "found only {files} schemas under {}",
        root.display()
    );
}

#[test]
fn golden_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/format");
    let bless = std::env::var_os("BEBOP_BLESS").is_some_and(|v| v != "0");
    let mut count = 0;
    for (name, text) in read_bop_files(&dir) {
        let Some(stem) = name.strip_suffix(".in.bop") else {
            continue;
        };
        count += 1;
        let options = if stem.starts_with("indent2") {
            FormatOptions {
                indent: 2,
                line_width: 60,
            }
        } else {
            FormatOptions::default()
        };
        let out = fmt_with(&text, &options);
        let expected_path = dir.join(format!("{stem}.out.bop"));
        if bless {
            std::fs::write(&expected_path, &out).expect("write golden file");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (create it with BEBOP_BLESS=1)",
                expected_path.display()
            )
        });
        assert!(
            out == expected,
            "{stem}: the formatted text differs from {}\n--- got\n{out}",
            expected_path.display()
        );
        // The golden output is a fixed point.
        assert_eq!(fmt_with(&expected, &options), expected, "{stem}");
    }
    assert!(count >= 5, "expected at least five golden inputs");
}

#[test]
fn syntax_errors_are_reported_not_formatted() {
    for bad in [
        "struct A { x: int32 }",
        "enum E { A = 0; B = ; }",
        "struct A { x: int32; /* open",
        "const string S = \"unterminated;",
        "message M { x: int32; }",
        "#decorator(d) { targets = FIELD validate [[ x",
    ] {
        match format_source(SourceId(7), bad, &FormatOptions::default()) {
            Err(FormatError::Syntax(d)) => {
                assert!(d.iter().any(|d| d.is_error()), "{bad}");
                assert!(d.iter().all(|d| d.span.source == SourceId(7)));
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn options_change_indentation_and_wrapping() {
    let src = "struct S { @deprecated(\"a reason that is long enough\") x: int32; }";
    let narrow = FormatOptions {
        indent: 2,
        line_width: 30,
    };
    assert_eq!(
        fmt_with(src, &narrow),
        "struct S {\n  @deprecated(\n    \"a reason that is long enough\"\n  )\n  x: int32;\n}\n"
    );
    assert_eq!(
        fmt(src),
        "struct S {\n    @deprecated(\"a reason that is long enough\")\n    x: int32;\n}\n"
    );
}

#[test]
fn crlf_input_gives_lf_output() {
    let src =
        "/**\r\n * Doc.\r\n */\r\nstruct A {\r\n  x: int32; // c\r\n\r\n\r\n  y: int32;\r\n}\r\n";
    assert_eq!(
        fmt(src),
        "/**\n * Doc.\n */\nstruct A {\n    x: int32; // c\n\n    y: int32;\n}\n"
    );
}

// ---- generated schemas ---------------------------------------------------------------

/// What goes between two generated tokens: whitespace or comments (the index picks one).
const SEPARATORS: &[&str] = &[
    " ",
    "\n",
    "\n\n\n",
    "\t",
    "  \n    ",
    " /* block */ ",
    "/* x */",
    " // line\n",
    "\n// own line\n",
    "\n/// doc\n",
    "\n/** doc\n   * block\n   */\n",
    "\n  /* a\n     b */\n",
    "",
];

/// Tokens that may touch anything without being lexed differently.
fn glue_safe(token: &str) -> bool {
    matches!(token, ";" | "{" | "}" | "(" | ")" | "," | ":" | "=")
}

#[derive(Clone, Debug)]
enum Ty {
    Scalar(usize),
    Array(Box<Ty>),
    Fixed(Box<Ty>, u16),
    Map(usize, Box<Ty>),
}

const SCALARS: &[&str] = &[
    "bool",
    "byte",
    "int32",
    "uint64",
    "float32",
    "string",
    "uuid",
    "guid",
    "timestamp",
];
const KEYS: &[&str] = &["string", "int32", "uuid", "bool"];

fn ty() -> impl Strategy<Value = Ty> {
    let leaf = (0..SCALARS.len()).prop_map(Ty::Scalar);
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Ty::Array(Box::new(t))),
            (inner.clone(), 1u16..40).prop_map(|(t, n)| Ty::Fixed(Box::new(t), n)),
            (0..KEYS.len(), inner).prop_map(|(k, t)| Ty::Map(k, Box::new(t))),
        ]
    })
}

fn ty_tokens(t: &Ty, out: &mut Vec<String>) {
    match t {
        Ty::Scalar(i) => out.push(SCALARS[*i].into()),
        Ty::Array(inner) => {
            ty_tokens(inner, out);
            out.extend(["[".into(), "]".into()]);
        }
        Ty::Fixed(inner, n) => {
            ty_tokens(inner, out);
            out.extend(["[".into(), n.to_string(), "]".into()]);
        }
        Ty::Map(k, v) => {
            out.extend(["map".into(), "[".into(), KEYS[*k].into(), ",".into()]);
            ty_tokens(v, out);
            out.push("]".into());
        }
    }
}

#[derive(Clone, Debug)]
enum Def {
    Enum {
        base: Option<usize>,
        values: Vec<u8>,
        deprecated: Option<usize>,
    },
    Struct {
        mutable: bool,
        fields: Vec<Ty>,
        nested_enum: bool,
    },
    Message {
        fields: Vec<(Ty, bool)>,
    },
    Union {
        branches: Vec<u8>,
    },
    Const(usize),
    Service {
        methods: Vec<(bool, bool)>,
    },
}

const CONSTS: &[&str] = &[
    "int32 = 0x7F",
    "int32 = -42",
    "float64 = 1.5e3",
    "float64 = -inf",
    "float32 = nan",
    "bool = true",
    "string = \"a\\tb \"\"q\"\" \\u{1F600}\"",
    "string = 'it''s'",
    "string = \"line one\nline two\"",
    "byte[] = b\"\\x89PNG\\r\\n\"",
    "uuid = \"550e8400-e29b-41d4-a716-446655440000\"",
    "duration = \"1h30m\"",
    "string = \"$(BEBOP_FMT_TEST)\"",
];

fn def() -> impl Strategy<Value = Def> {
    prop_oneof![
        (
            proptest::option::of(0usize..3),
            proptest::collection::vec(0u8..6, 0..5),
            proptest::option::of(0usize..5)
        )
            .prop_map(|(base, values, deprecated)| Def::Enum {
                base,
                values,
                deprecated
            }),
        (
            any::<bool>(),
            proptest::collection::vec(ty(), 0..4),
            any::<bool>()
        )
            .prop_map(|(mutable, fields, nested_enum)| Def::Struct {
                mutable,
                fields,
                nested_enum
            }),
        proptest::collection::vec((ty(), any::<bool>()), 0..4)
            .prop_map(|fields| Def::Message { fields }),
        proptest::collection::vec(0u8..5, 1..4).prop_map(|branches| Def::Union { branches }),
        (0..CONSTS.len()).prop_map(Def::Const),
        proptest::collection::vec((any::<bool>(), any::<bool>()), 0..3)
            .prop_map(|methods| Def::Service { methods }),
    ]
}

fn tokens_of(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_string).collect()
}

/// The schema's tokens (string literals are single tokens even when they hold spaces).
fn schema_tokens(defs: &[Def]) -> Vec<String> {
    let mut t: Vec<String> = tokens_of("edition = \"2026\" package fmt . test");
    t.extend(tokens_of("import \"bebop/decorators.bop\""));
    t.extend(tokens_of("struct Req { } struct Res { id : int32 ; }"));
    for (i, d) in defs.iter().enumerate() {
        match d {
            Def::Enum {
                base,
                values,
                deprecated,
            } => {
                if i % 2 == 0 {
                    t.extend(["@".into(), "flags".into()]);
                }
                t.extend(["enum".into(), format!("E{i}")]);
                if let Some(b) = base {
                    t.extend([":".into(), ["uint8", "int32", "uint64"][*b].into()]);
                }
                t.push("{".into());
                t.extend(tokens_of("ZERO = 0x0 ;"));
                for (k, v) in values.iter().enumerate() {
                    if *deprecated == Some(k) {
                        t.extend(tokens_of("@ deprecated ("));
                        // Long enough, with the indentation, to be wrapped at width 40.
                        t.push(if k % 2 == 0 {
                            "\"gone\"".into()
                        } else {
                            "\"gone for a reason that takes some words\"".into()
                        });
                        t.push(")".into());
                    }
                    t.extend([format!("M{k}"), "=".into()]);
                    // Distinct values, written in different ways.
                    let n = 20 + 20 * k;
                    match v % 4 {
                        0 => t.push(n.to_string()),
                        1 => t.push(format!("0x{n:X}")),
                        2 => t.extend(
                            ["(", "ZERO", "|", &n.to_string(), ")", "+", "0"].map(str::to_string),
                        ),
                        _ => t.extend([(n / 2).to_string(), "<<".into(), "1".into()]),
                    }
                    t.push(";".into());
                }
                t.push("}".into());
            }
            Def::Struct {
                mutable,
                fields,
                nested_enum,
            } => {
                if *mutable {
                    t.push("mut".into());
                }
                t.extend(["struct".into(), format!("S{i}"), "{".into()]);
                for (k, f) in fields.iter().enumerate() {
                    if k == 1 {
                        t.extend(tokens_of("@ tag ( name : \"m\" )"));
                    }
                    t.extend([format!("f{k}"), ":".into()]);
                    ty_tokens(f, &mut t);
                    t.push(";".into());
                }
                if *nested_enum {
                    t.extend(tokens_of("export enum Kind : int8 { A = 0 ; B = - 1 ; }"));
                }
                t.push("}".into());
            }
            Def::Message { fields } => {
                t.extend(["message".into(), format!("M{i}"), "{".into()]);
                for (k, (f, deprecated)) in fields.iter().enumerate() {
                    if *deprecated {
                        t.extend(tokens_of("@ deprecated"));
                    }
                    t.extend([format!("f{k}"), "(".into(), (k + 1).to_string(), ")".into()]);
                    t.push(":".into());
                    ty_tokens(f, &mut t);
                    t.push(";".into());
                }
                t.push("}".into());
            }
            Def::Union { branches } => {
                t.extend(["union".into(), format!("U{i}"), "{".into()]);
                for (k, b) in branches.iter().enumerate() {
                    let head = [format!("B{k}"), "(".into(), (k + 1).to_string(), ")".into()];
                    if *b == 3 {
                        t.push("export".into());
                    }
                    t.extend(head);
                    t.push(":".into());
                    match b {
                        0 => t.extend(tokens_of("{ x : int32 ; }")),
                        1 => t.extend(tokens_of("mut { }")),
                        2 => t.extend(tokens_of("message { y ( 1 ) : string ; }")),
                        3 => t.extend(tokens_of("{ z : bool ; }")),
                        _ => t.push("Res".into()),
                    }
                    t.push(";".into());
                }
                t.push("}".into());
            }
            Def::Const(k) => {
                let spec = CONSTS[*k];
                let (ty, value) = spec.split_once(" = ").unwrap_or((spec, "0"));
                t.push("const".into());
                if let Some(elem) = ty.strip_suffix("[]") {
                    t.extend([elem.to_string(), "[".into(), "]".into()]);
                } else {
                    t.push(ty.into());
                }
                t.extend([format!("C{i}"), "=".into()]);
                if let Some(rest) = value.strip_prefix('-') {
                    t.extend(["-".into(), rest.to_string()]);
                } else {
                    t.push(value.to_string());
                }
                t.push(";".into());
            }
            Def::Service { methods } => {
                t.extend(["service".into(), format!("Svc{i}"), "{".into()]);
                for (k, (stream_in, stream_out)) in methods.iter().enumerate() {
                    t.extend([format!("Call{k}"), "(".into()]);
                    if *stream_in {
                        t.push("stream".into());
                    }
                    t.extend(["Req".into(), ")".into(), ":".into()]);
                    if *stream_out {
                        t.push("stream".into());
                    }
                    t.extend(["fmt".into(), ".".into(), "test".into(), ".".into()]);
                    t.extend(["Res".into(), ";".into()]);
                }
                t.push("}".into());
            }
        }
    }
    t.extend(tokens_of(
        "#decorator ( tag ) { targets = FIELD | MEMBER param name ? : string = \"n\" in [ \"n\" , \"m\" ] validate [[\n  if name == \"\" then\n    error(\"empty\")\n  end\n]] }",
    ));
    t
}

fn join(tokens: &[String], seps: &[usize]) -> String {
    let mut out = String::new();
    for (i, tok) in tokens.iter().enumerate() {
        if i > 0 {
            let mut sep = SEPARATORS[seps[i % seps.len()] % SEPARATORS.len()];
            let prev = tokens[i - 1].as_str();
            if sep.is_empty() && !(glue_safe(prev) || glue_safe(tok)) {
                sep = " ";
            }
            out.push_str(sep);
        }
        out.push_str(tok);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn generated_schemas(
        defs in proptest::collection::vec(def(), 0..7),
        seps in proptest::collection::vec(0usize..64, 1..40),
    ) {
        let tokens = schema_tokens(&defs);
        let text = join(&tokens, &seps);
        let mut files = BTreeMap::new();
        files.insert("gen.bop".to_string(), text.clone());
        prop_assert!(compile(&files, "gen.bop").is_ok(), "the generated schema does not compile:\n{}", text);
        check_group("generated", &files);
        // Also with another layout.
        let two = FormatOptions { indent: 2, line_width: 40 };
        let once = fmt_with(&text, &two);
        prop_assert_eq!(fmt_with(&once, &two), once);
    }
}

#[test]
fn large_files_on_one_line_format_in_linear_time() {
    // 20,000 fields and as many comments on a single line: no work per token may depend on
    // the length of the line.
    let mut text = String::from("struct Big {");
    for i in 0..20_000 {
        text.push_str(&format!(" /* {i} */ f{i}: int32;"));
    }
    text.push_str(" }");
    let start = std::time::Instant::now();
    let out = fmt(&text);
    assert_eq!(out.lines().count(), 20_002);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

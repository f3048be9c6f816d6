//! Golden descriptor tests: for every valid fixture with a reference descriptor, the
//! DescriptorSet and CodeGeneratorRequest this compiler builds equal the reference compiler's
//! (`shared/conformance/reference-descriptors/NAME.{desc,request}.bin`) byte for byte.
//!
//! Two parts are compared differently, as `docs/decisions.md` D18 and D23 decide:
//! - the standard `bebop/*.bop` schemas carry this project's own doc comments, so they are
//!   compared with every `documentation`/`description` removed, and also without decorator
//!   Lua sources: the reference's `bebop/decorators.bop` checks "`@deprecated` is not for
//!   struct fields" in a Lua validate block, this compiler natively (E090). Everything else
//!   of them is compared byte for byte, and the user's schemas exactly;
//! - `dec_validate_export.bop` has Lua export blocks; this crate runs no Lua, so the fixture
//!   is compiled with [`FixtureExports`], a runtime computing those three blocks' tables in
//!   Rust from the usage's arguments, in the order the reference's Lua yielded them;
//! - the request's `compiler_version` is this compiler's, not `2026.0.0-alpha.3`: it is
//!   checked separately and everything else of the request is compared byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bebop_descriptor::{
    CodeGeneratorRequest, DecoratorDef, DefinitionDescriptor, DescriptorSet, SchemaDescriptor,
};
use bebopc::Compiler;
use bebopc::decorator::{DecoratorCall, DecoratorOutcome, DecoratorRuntime};
use bebopc::descriptor::{DescriptorOptions, compiler_version};
use bebopc::model::Value;

/// The export blocks of `dec_validate_export.bop`, evaluated in Rust from each usage's
/// arguments (standing in for the Lua runtime, which lives in another crate). Entries come
/// in the order the reference's Lua table iteration produced them.
struct FixtureExports;

impl DecoratorRuntime for FixtureExports {
    fn run(&self, call: &DecoratorCall<'_>) -> DecoratorOutcome {
        let arg = |name: &str| {
            call.usage
                .args
                .iter()
                .find(|a| a.name == name)
                .map(|a| a.value.clone())
        };
        let int = |name: &str| arg(name).and_then(|v| v.as_i128()).expect("int argument");
        let string = |s: &str| Value::String {
            value: s.to_string(),
            raw: None,
        };
        let export = match call.definition.name.as_str() {
            "range" => vec![
                ("width", Value::Int(int("max") - int("min"))),
                ("range_min", Value::Int(int("min"))),
                ("range_max", Value::Int(int("max"))),
                ("constraint", string("range")),
            ],
            "indexed" => vec![
                ("index_key", arg("key").expect("key")),
                ("is_unique", arg("unique").unwrap_or(Value::Bool(false))),
            ],
            "computed" => vec![("expression", arg("formula").expect("formula"))],
            _ => Vec::new(),
        };
        DecoratorOutcome {
            messages: Vec::new(),
            export: export
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }
}

/// `../shared/conformance`; `None` (the test is skipped) when the conformance data is
/// missing and `CI` is unset (see `bebop-shared-data`).
fn conformance_dir() -> Option<PathBuf> {
    let dir = bebop_shared_data::conformance_dir("")?;
    assert!(
        dir.join("reference-descriptors").is_dir() && dir.join("reference-fixtures/valid").is_dir(),
        "conformance data incomplete under {}",
        dir.display()
    );
    Some(dir)
}

/// Every valid fixture, by file name.
fn valid_files(conformance: &Path) -> BTreeMap<String, Vec<u8>> {
    let dir = conformance.join("reference-fixtures/valid");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("read valid fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "bop") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.insert(name, std::fs::read(&path).expect("read fixture"));
        }
    }
    out
}

/// The names of the fixtures that have reference descriptors.
fn reference_names(conformance: &Path) -> Vec<String> {
    let dir = conformance.join("reference-descriptors");
    let names = bebop_shared_data::names_with_suffix(&dir, ".desc.bin");
    assert!(
        names.len() >= 40,
        "expected ~44 reference descriptors, found {}",
        names.len()
    );
    names
}

fn read_reference(conformance: &Path, name: &str, ext: &str) -> Vec<u8> {
    let path = conformance.join(format!("reference-descriptors/{name}.{ext}.bin"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn is_standard(schema: &SchemaDescriptor) -> bool {
    schema
        .path
        .as_deref()
        .is_some_and(|p| p.starts_with("bebop/"))
}

fn strip_docs_def(def: &mut DefinitionDescriptor) {
    def.documentation = None;
    for n in def.nested.iter_mut().flatten() {
        strip_docs_def(n);
    }
    if let Some(e) = &mut def.enum_def {
        for m in e.members.iter_mut().flatten() {
            m.documentation = None;
        }
    }
    for f in def
        .struct_def
        .iter_mut()
        .flat_map(|s| s.fields.iter_mut().flatten())
        .chain(
            def.message_def
                .iter_mut()
                .flat_map(|m| m.fields.iter_mut().flatten()),
        )
    {
        f.documentation = None;
    }
    if let Some(u) = &mut def.union_def {
        for b in u.branches.iter_mut().flatten() {
            b.documentation = None;
        }
    }
    if let Some(s) = &mut def.service_def {
        for m in s.methods.iter_mut().flatten() {
            m.documentation = None;
        }
    }
    if let Some(DecoratorDef {
        params,
        validate_source,
        export_source,
        ..
    }) = &mut def.decorator_def
    {
        for p in params.iter_mut().flatten() {
            p.description = None;
        }
        *validate_source = None;
        *export_source = None;
    }
}

fn without_docs(schema: &SchemaDescriptor) -> SchemaDescriptor {
    let mut s = schema.clone();
    for d in s.definitions.iter_mut().flatten() {
        strip_docs_def(d);
    }
    s
}

fn encode(schemas: Vec<SchemaDescriptor>) -> Vec<u8> {
    DescriptorSet {
        schemas: Some(schemas),
    }
    .to_vec()
    .expect("encode")
}

fn first_difference(reference: &[u8], ours: &[u8]) -> String {
    let at = reference
        .iter()
        .zip(ours)
        .position(|(x, y)| x != y)
        .unwrap_or(reference.len().min(ours.len()));
    let show = |v: &[u8]| {
        v.get(at.saturating_sub(16)..(at + 24).min(v.len()))
            .map(|s| String::from_utf8_lossy(s).escape_debug().to_string())
            .unwrap_or_default()
    };
    format!(
        "lengths {} (reference) vs {} (ours), first difference at byte {at}:\n    reference: {}\n    ours:      {}",
        reference.len(),
        ours.len(),
        show(reference),
        show(ours)
    )
}

/// Compares two schema lists: the same paths in the same order, user schemas byte for byte,
/// standard schemas byte for byte without documentation.
fn compare_schemas(
    what: &str,
    reference: &[SchemaDescriptor],
    ours: &[SchemaDescriptor],
) -> Vec<String> {
    let mut failures = Vec::new();
    let paths = |s: &[SchemaDescriptor]| {
        s.iter()
            .map(|s| s.path.clone().unwrap_or_default())
            .collect::<Vec<_>>()
    };
    if paths(reference) != paths(ours) {
        failures.push(format!(
            "{what}: schema order differs: reference {:?}, ours {:?}",
            paths(reference),
            paths(ours)
        ));
        return failures;
    }
    for (r, o) in reference.iter().zip(ours) {
        let (r_bytes, o_bytes) = if is_standard(r) {
            (encode(vec![without_docs(r)]), encode(vec![without_docs(o)]))
        } else {
            (encode(vec![r.clone()]), encode(vec![o.clone()]))
        };
        if r_bytes != o_bytes {
            failures.push(format!(
                "{what} schema {}: {}",
                r.path.as_deref().unwrap_or("?"),
                first_difference(&r_bytes, &o_bytes)
            ));
        }
    }
    failures
}

#[test]
fn every_valid_fixture_matches_the_reference_descriptors() {
    let Some(conformance) = conformance_dir() else {
        return;
    };
    let files = valid_files(&conformance);
    let inputs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    let mut failures = Vec::new();
    let mut exact = Vec::new();
    for name in reference_names(&conformance) {
        let root = format!("{name}.bop");
        assert!(
            files.contains_key(&root),
            "{root} missing from valid fixtures"
        );
        let compiler = if name == "dec_validate_export" {
            Compiler::new().decorator_runtime(FixtureExports)
        } else {
            Compiler::new()
        };
        let result = compiler.compile_in_memory(&inputs, &[root.as_str()]);
        assert!(
            !result.has_errors(),
            "{root}:\n{}",
            result.render_terminal(false)
        );
        let options = DescriptorOptions::default();

        // The DescriptorSet.
        let reference = DescriptorSet::from_bytes(&read_reference(&conformance, &name, "desc"))
            .expect("decode reference");
        let ours = result.descriptor_set(&options).expect("descriptor set");
        let ours_bytes = ours.to_vec().expect("encode");
        assert_eq!(
            DescriptorSet::from_bytes(&ours_bytes).map(|s| s.to_vec().expect("re-encode")),
            Ok(ours_bytes.clone()),
            "{name}: our own bytes must round-trip"
        );
        let set_failures = compare_schemas(
            &format!("{name}.desc"),
            reference.schema_list(),
            ours.schema_list(),
        );
        if set_failures.is_empty() && ours_bytes == read_reference(&conformance, &name, "desc") {
            exact.push(name.clone());
        }
        failures.extend(set_failures);

        // The CodeGeneratorRequest.
        let reference =
            CodeGeneratorRequest::from_bytes(&read_reference(&conformance, &name, "request"))
                .expect("decode reference request");
        let mut ours = result
            .code_generator_request(&options, None, &[])
            .expect("request");
        assert_eq!(ours.compiler_version, Some(compiler_version()));
        failures.extend(compare_schemas(
            &format!("{name}.request"),
            reference.schemas.as_deref().unwrap_or_default(),
            ours.schemas.as_deref().unwrap_or_default(),
        ));
        // Everything but the schemas and the version, byte for byte.
        ours.compiler_version = reference.compiler_version.clone();
        let strip = |r: &CodeGeneratorRequest| CodeGeneratorRequest {
            schemas: r
                .schemas
                .as_ref()
                .map(|s| s.iter().filter(|s| !is_standard(s)).cloned().collect()),
            ..r.clone()
        };
        let (r_bytes, o_bytes) = (
            strip(&reference).to_vec().expect("encode"),
            strip(&ours).to_vec().expect("encode"),
        );
        if r_bytes != o_bytes {
            failures.push(format!(
                "{name}.request: {}",
                first_difference(&r_bytes, &o_bytes)
            ));
        }
    }
    eprintln!(
        "whole DescriptorSet identical to the reference's for: {}",
        exact.join(", ")
    );
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The lines of `text` that end inside a string literal: the reference counts each such line
/// break twice (SPEC.md, "source info": the one place we deliberately differ).
fn lines_ending_in_strings(text: &str) -> Vec<i32> {
    let lexed = bebopc::lexer::lex(bebopc::source::SourceId(0), text);
    let mut out = Vec::new();
    for t in &lexed.tokens {
        if matches!(
            t.kind,
            bebopc::lexer::TokenKind::String | bebopc::lexer::TokenKind::Bytes
        ) {
            let start = t.span.start as usize;
            let body = text.get(start..t.span.end as usize).unwrap_or("");
            for (i, _) in body.match_indices('\n') {
                let line = text[..start + i].matches('\n').count() as i32 + 1;
                out.push(line);
            }
        }
    }
    out
}

/// Our line `line` as the reference numbers it.
fn reference_line(line: i32, in_strings: &[i32]) -> i32 {
    line + in_strings.iter().filter(|&&l| l < line).count() as i32
}

/// `--emit-source-info`: the `SourceCodeInfo` of every user schema equals the reference's
/// (`NAME.request_srcinfo.bin`), location by location and byte for byte, once our line
/// numbers are shifted the way the reference miscounts line breaks inside string literals.
#[test]
fn source_info_matches_the_reference() {
    let Some(conformance) = conformance_dir() else {
        return;
    };
    let files = valid_files(&conformance);
    let inputs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    let mut failures = Vec::new();
    let (mut checked, mut locations, mut shifted) = (0, 0, 0);
    for name in reference_names(&conformance) {
        let root = format!("{name}.bop");
        let compiler = if name == "dec_validate_export" {
            Compiler::new().decorator_runtime(FixtureExports)
        } else {
            Compiler::new()
        };
        let result = compiler.compile_in_memory(&inputs, &[root.as_str()]);
        assert!(!result.has_errors(), "{root}");
        let options = DescriptorOptions { source_info: true };
        let reference = CodeGeneratorRequest::from_bytes(&read_reference(
            &conformance,
            &name,
            "request_srcinfo",
        ))
        .expect("decode reference request");
        let ours = result
            .code_generator_request(&options, None, &[])
            .expect("request");
        let user = |r: &CodeGeneratorRequest| -> Vec<SchemaDescriptor> {
            r.schemas
                .iter()
                .flatten()
                // (These requests name the standard schemas by an absolute path.)
                .filter(|s| !is_standard(s) && !s.path.as_deref().unwrap_or("").contains("/bebop/"))
                .cloned()
                .collect()
        };
        let (reference, mut ours) = (user(&reference), user(&ours));
        let paths = |v: &[SchemaDescriptor]| v.iter().map(|s| s.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&reference), paths(&ours), "{name}: user schemas");
        for (r, o) in reference.iter().zip(ours.iter_mut()) {
            checked += 1;
            let path = r.path.clone().unwrap_or_default();
            assert_eq!(r.path, o.path, "{name}: schema order");
            let text = std::str::from_utf8(&files[&path]).expect("utf-8 fixture");
            let in_strings = lines_ending_in_strings(text);
            for loc in o
                .source_code_info
                .iter_mut()
                .flat_map(|i| i.locations.iter_mut().flatten())
            {
                if let Some(span) = &mut loc.span {
                    let adjusted = [
                        reference_line(span[0], &in_strings),
                        span[1],
                        reference_line(span[2], &in_strings),
                        span[3],
                    ];
                    if adjusted != *span {
                        shifted += 1;
                    }
                    *span = adjusted;
                }
            }
            let locs = |s: &SchemaDescriptor| {
                s.source_code_info
                    .as_ref()
                    .and_then(|i| i.locations.clone())
                    .unwrap_or_default()
            };
            let (rl, ol) = (locs(r), locs(o));
            locations += rl.len();
            if rl.len() != ol.len() {
                failures.push(format!(
                    "{path}: {} locations (reference) vs {} (ours)",
                    rl.len(),
                    ol.len()
                ));
            }
            for (a, b) in rl.iter().zip(&ol) {
                if a != b {
                    failures.push(format!("{path}:\n    reference {a:?}\n    ours      {b:?}"));
                }
            }
            // The source info's bytes (the rest of the schema is compared by the test above).
            let only_info = |s: &SchemaDescriptor| SchemaDescriptor {
                path: s.path.clone(),
                source_code_info: s.source_code_info.clone(),
                ..SchemaDescriptor::default()
            };
            let (rb, ob) = (encode(vec![only_info(r)]), encode(vec![only_info(o)]));
            if rb != ob {
                failures.push(format!("{path}: {}", first_difference(&rb, &ob)));
            }
        }
    }
    eprintln!(
        "source info of {checked} user schemas, {locations} locations ({shifted} shifted for line breaks in strings)"
    );
    assert!(checked >= 40, "only {checked} user schemas compared");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

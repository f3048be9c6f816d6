//! The bootstrap checks: `src/generated.rs` is exactly what `bebop-codegen-rust` generates from
//! the project's own `codegen/compiler/schemas/bebop/descriptor.bop` and `plugin.bop`, and
//! `core/src/rpc/generated.rs` (the RPC protocol types of `bebop-core`) exactly what it
//! generates from `rpc.bop` and `empty.bop`, all compiled by `bebopc`.
//!
//! After changing those schemas or the generator, rewrite the files with
//!
//! ```text
//! BEBOP_BLESS=1 cargo test -p bebop-descriptor --test generated_code
//! ```
//!
//! and review the diff. Both `bebopc` and the generator depend on this crate (they are
//! dev-dependencies here, which Cargo allows), so the regeneration runs on the checked-in
//! `src/generated.rs`: if a change leaves that file uncompilable, restore it from version
//! control, regenerate, and only then change what depends on the new shape.

use std::path::{Path, PathBuf};

use bebop_codegen_rust::{Generator, OwnedMap};
use bebop_runtime::Decode;

/// The schema files, as `(import path, file on disk)`. `descriptor.bop` imports
/// `bebop/decorators.bop`; it is read from the same directory so that the compiler's built-in
/// copies are not used at all.
const SCHEMAS: &[&str] = &[
    "bebop/descriptor.bop",
    "bebop/plugin.bop",
    "bebop/decorators.bop",
];

/// The files to generate code for (the third is only imported; it holds decorator
/// definitions, which generate no code).
const ROOTS: &[&str] = &["bebop/descriptor.bop", "bebop/plugin.bop"];

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../compiler/schemas")
}

fn generated_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/generated.rs")
}

fn rpc_generated_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../core/src/rpc/generated.rs")
}

/// The RPC protocol schema and what it imports, and the files to generate code for.
const RPC_SCHEMAS: &[&str] = &["bebop/rpc.bop", "bebop/empty.bop", "bebop/decorators.bop"];
const RPC_ROOTS: &[&str] = &["bebop/rpc.bop", "bebop/empty.bop"];

/// Compiles the schemas with `bebopc`, under the paths `bebop/....bop` (so the generated
/// file names no machine-specific path).
fn compile() -> bebop_descriptor::DescriptorSet {
    let set = compile_files(SCHEMAS, ROOTS);
    let paths: Vec<_> = set
        .schema_list()
        .iter()
        .map(|s| s.path.as_deref().unwrap_or_default())
        .collect();
    assert_eq!(
        paths,
        [
            "bebop/descriptor.bop",
            "bebop/plugin.bop",
            "bebop/decorators.bop"
        ],
        "every schema is read from codegen/compiler/schemas, none from the compiler's built-in copies"
    );
    set
}

fn compile_files(schemas: &[&str], roots: &[&str]) -> bebop_descriptor::DescriptorSet {
    let dir = schema_dir();
    let texts: Vec<(&str, Vec<u8>)> = schemas
        .iter()
        .map(|path| {
            let file = dir.join(path);
            let text = std::fs::read(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            (*path, text)
        })
        .collect();
    let files: Vec<(&str, &[u8])> = texts.iter().map(|(p, t)| (*p, t.as_slice())).collect();
    let compilation = bebopc::Compiler::new().compile_in_memory(&files, roots);
    assert!(
        !compilation.has_errors(),
        "the project's schemas do not compile:\n{}",
        compilation.render_terminal(false)
    );
    compilation
        .descriptor_set(&Default::default())
        .expect("a model without errors lowers to a descriptor")
}

/// The generator options of `src/generated.rs`: the `bebop-runtime` crate (std), owned types
/// (what the crate exports) with maps as `Vec<(K, V)>` in wire order (byte-exact round
/// trips), and no rustfmt, so the output depends only on the locked prettyplease version and
/// not on the toolchain's rustfmt.
fn generator() -> Generator {
    Generator::new()
        .runtime_path("::bebop_runtime")
        .owned_types(true)
        .owned_map(OwnedMap::Vec)
        .rustfmt(false)
}

fn generate() -> String {
    generate_with(generator(), &compile(), ROOTS)
}

/// The generator options of `core/src/rpc/generated.rs`: views only (no alloc), the runtime
/// reached as `crate` (the file is part of `bebop-core`), defmt behind the crate's feature.
fn rpc_generator() -> Generator {
    Generator::new()
        .runtime_path("crate")
        .defmt(Some("feature = \"defmt\""))
        .rustfmt(false)
}

fn generate_rpc() -> String {
    generate_with(
        rpc_generator(),
        &compile_files(RPC_SCHEMAS, RPC_ROOTS),
        RPC_ROOTS,
    )
}

fn generate_with(
    generator: Generator,
    set: &bebop_descriptor::DescriptorSet,
    roots: &[&str],
) -> String {
    let code = generator
        .generate(set, roots)
        .unwrap_or_else(|e| panic!("generating from the project's schemas: {e}"));
    assert!(code.warnings.is_empty(), "warnings: {:?}", code.warnings);
    assert_eq!(code.files.len(), 1);
    code.files
        .into_iter()
        .next()
        .map(|f| f.content)
        .unwrap_or_default()
}

#[test]
fn regenerating_gives_the_checked_in_file() {
    check_or_bless(&generate(), &generated_path());
}

#[test]
fn regenerating_the_rpc_types_gives_the_checked_in_file() {
    check_or_bless(&generate_rpc(), &rpc_generated_path());
}

fn check_or_bless(fresh: &str, path: &Path) {
    if std::env::var_os("BEBOP_BLESS").is_some_and(|v| v != "0") {
        std::fs::write(path, fresh)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let checked_in = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    if checked_in != fresh {
        let line = checked_in
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || checked_in.lines().count().min(fresh.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "{} is out of date (first difference at line {line}, {} vs {} lines); \
             regenerate it with `BEBOP_BLESS=1 cargo test -p bebop-descriptor --test \
             generated_code` and review the diff",
            path.display(),
            checked_in.lines().count(),
            fresh.lines().count()
        );
    }
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(generate(), generate());
    assert_eq!(generate_rpc(), generate_rpc());
}

/// The compiler's descriptor of the descriptor schema itself, through the generated types:
/// owned and view decode agree, and both re-encode to the same bytes.
#[test]
fn the_descriptor_schema_round_trips_through_its_own_types() {
    let set = compile();
    let bytes = set.to_vec().expect("encode");
    let owned = bebop_descriptor::DescriptorSet::from_bytes(&bytes).expect("decode owned");
    assert_eq!(owned.to_vec().expect("re-encode"), bytes);
    let view = bebop_descriptor::views::DescriptorSet::from_bytes(&bytes).expect("decode view");
    assert_eq!(
        bebop_runtime::encode_to_vec(&view).expect("encode view"),
        bytes
    );
    assert_eq!(view.to_owned_value(), owned);

    // The schema describes the types that decoded it.
    let index = owned.index();
    let type_descriptor = index.get("bebop.TypeDescriptor").expect("TypeDescriptor");
    let Some(bebop_descriptor::DefinitionBody::Message(body)) = type_descriptor.definition.body()
    else {
        panic!("TypeDescriptor is a message")
    };
    let fields: Vec<_> = body
        .fields
        .iter()
        .flatten()
        .map(|f| (f.name.as_deref().unwrap_or_default(), f.index))
        .collect();
    assert_eq!(
        fields,
        [
            ("kind", Some(1)),
            ("array_element", Some(2)),
            ("fixed_array_element", Some(3)),
            ("fixed_array_size", Some(4)),
            ("map_key", Some(5)),
            ("map_value", Some(6)),
            ("defined_fqn", Some(7)),
        ]
    );
}

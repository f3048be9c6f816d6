//! `Config::compile` end to end against scratch directories: output, options, standard
//! schemas, imports, warnings, errors, decorators and the descriptor set.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::path::{Path, PathBuf};

use bebop_build::{Config, Error, ItemKind, OwnedForm, OwnedMap};
use bebop_codegen_rust::Generator;
use bebop_descriptor::DescriptorSet;

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A config writing into `out/`, printing no cargo directives.
    fn config(&self) -> Config {
        let mut c = Config::new();
        c.out_dir(self.path("out"))
            .emit_rerun_if_changed(false)
            .emit_warnings(false);
        c
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

const RANGE: &str = r#"
#decorator(range) {
    targets = FIELD
    param min!: int32
    param max!: int32
    validate [[
        if min >= max then error("min must be less than max", self.min.span) end
    ]]
}
struct Product {
    @range(min: 5, max: 1)
    price: int32;
}
"#;

#[test]
fn the_file_is_what_the_generator_makes_of_the_same_descriptors() {
    let s = Scratch::new();
    let schema = s.write(
        "schemas/shop.bop",
        "package shop\nstruct Item { id: uint32; name: string; }\nmessage Cart { items(1): Item[]; }\n",
    );
    let mut config = s.config();
    config
        .include(s.path("schemas"))
        .owned_types(true)
        .rustfmt(false)
        .descriptor_set_path(s.path("out/shop.desc"))
        .emit_source_info(true);
    let out = config.compile(&[&schema]).unwrap();
    assert_eq!(out.path, s.path("out/bebop.rs"));
    let set = DescriptorSet::from_bytes(&std::fs::read(s.path("out/shop.desc")).unwrap()).unwrap();
    // The schema, given by its absolute path, is named relative to its include directory.
    assert_eq!(set.schema_list()[0].path.as_deref(), Some("shop.bop"));
    let expected = Generator::new()
        .owned_types(true)
        .rustfmt(false)
        .generate(&set, &["shop.bop"])
        .unwrap();
    assert_eq!(read(&out.path), expected.files[0].content);
    assert_eq!(out.types, expected.types);
    let cart = out.types.iter().find(|t| t.fqn == "shop.Cart").unwrap();
    assert_eq!(cart.kind, ItemKind::Message);
    assert_eq!(cart.path, "shop::Cart");
    assert_eq!(cart.owned_form, OwnedForm::Converted);
    assert_eq!(out.schema_files, [std::fs::canonicalize(&schema).unwrap()]);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn every_generator_option_reaches_the_generator() {
    let s = Scratch::new();
    let schema = s.write(
        "a.bop",
        "message M { tags(1): map[string, int32]; h(2): float16; }",
    );
    let out = s
        .config()
        .runtime_path("::bebop_core")
        .owned_types(true)
        .owned_cfg(Some(r#"feature = "alloc""#))
        .owned_map(OwnedMap::Vec)
        .defmt(Some(r#"feature = "defmt""#))
        .rustfmt(false)
        .file_name("gen/types.rs")
        .compile(&[&schema])
        .unwrap();
    assert_eq!(out.path, s.path("out/gen/types.rs"));
    let code = read(&out.path);
    assert!(
        code.contains("::bebop_core::Map<'a, &'a str, i32>"),
        "{code}"
    );
    assert!(!code.contains("::bebop_runtime"), "{code}");
    assert!(
        code.contains("#[cfg(feature = \"alloc\")]\npub mod owned"),
        "{code}"
    );
    assert!(
        code.contains("::bebop_core::alloc_types::Vec<(::bebop_core::alloc_types::String, i32)>"),
        "{code}"
    );
    assert!(code.contains("#[cfg(feature = \"defmt\")]"), "{code}");

    // The same through `generator_options`, and rustfmt changes the layout only.
    let options = bebop_build::Options::from_parameter(
        r#"runtime=::bebop_core, owned=true, owned_cfg=feature = "alloc", map=vec, defmt=feature = "defmt", rustfmt=false"#,
    )
    .unwrap();
    let again = s
        .config()
        .generator_options(options)
        .file_name("again.rs")
        .compile(&[&schema])
        .unwrap();
    assert_eq!(read(&again.path), code);
}

#[test]
fn bad_options_fail_before_compiling() {
    let s = Scratch::new();
    let err = s
        .config()
        .runtime_path("bebop")
        .compile(&["does-not-exist.bop"])
        .unwrap_err();
    assert!(matches!(err, Error::Generate(_)), "{err}");
    assert!(err.to_string().contains("option `runtime`"), "{err}");
    let err = s
        .config()
        .file_name("../escape.rs")
        .compile(&["does-not-exist.bop"])
        .unwrap_err();
    assert!(err.to_string().contains("option `file`"), "{err}");
    assert!(!s.path("out").exists());
}

#[test]
fn standard_schemas_compile_without_include_directories() {
    let s = Scratch::new();
    let out = s
        .config()
        .rustfmt(false)
        .compile(&["bebop/plugin.bop", "bebop/empty.bop"])
        .unwrap();
    let code = read(&out.path);
    assert!(
        code.starts_with("// Generated by bebopc-gen-rust"),
        "{}",
        &code[..200]
    );
    for name in [
        "pub struct CodeGeneratorRequest<'a>",
        "pub struct DescriptorSet<'a>",
        "pub struct Empty",
        "pub mod bebop",
    ] {
        assert!(code.contains(name), "{name} missing");
    }
    // Only the standard schemas are named: the generated import file is not.
    let header = code.lines().next().unwrap();
    assert!(header.contains("`bebop/plugin.bop`"), "{header}");
    assert!(!header.contains("imports.bop"), "{header}");
    // Nothing was read from disk, and the import file is gone.
    assert!(out.schema_files.is_empty(), "{:?}", out.schema_files);
    let left: Vec<_> = std::fs::read_dir(s.path("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["bebop.rs"]);
    assert!(out.types.iter().any(|t| t.fqn == "bebop.DescriptorSet"));
}

#[test]
fn standard_and_disk_schemas_mix() {
    let s = Scratch::new();
    let schema = s.write(
        "mine.bop",
        "import \"bebop/empty.bop\"\nstruct Holder { e: bebop.Empty; }",
    );
    let out = s
        .config()
        .rustfmt(false)
        .compile(&[schema.to_str().unwrap(), "bebop/any.bop"])
        .unwrap();
    let fqns: Vec<&str> = out.types.iter().map(|t| t.fqn.as_str()).collect();
    assert!(fqns.contains(&"Holder"), "{fqns:?}");
    assert!(fqns.contains(&"bebop.Empty"), "{fqns:?}");
    assert!(fqns.contains(&"bebop.Any"), "{fqns:?}");
    assert_eq!(out.schema_files, [std::fs::canonicalize(&schema).unwrap()]);
}

#[test]
fn imports_found_in_include_directories_are_reported_as_read() {
    let s = Scratch::new();
    let common = s.write("vendor/common/ids.bop", "struct Id { v: uuid; }");
    let root = s.write(
        "schemas/app.bop",
        "import \"common/ids.bop\"\nstruct User { id: Id; }",
    );
    // The first include directory does not have the import; the second does.
    let out = s
        .config()
        .include(s.path("schemas"))
        .include(s.path("vendor"))
        .rustfmt(false)
        .compile(&[&root])
        .unwrap();
    assert_eq!(
        out.schema_files,
        [
            std::fs::canonicalize(&root).unwrap(),
            std::fs::canonicalize(&common).unwrap()
        ]
    );
}

#[test]
fn errors_are_rendered_like_bebopc_and_files_are_not_written() {
    let s = Scratch::new();
    let bad = s.write(
        "bad.bop",
        "struct A { x: int32; }\nstruct B { y: Missing; z: AlsoMissing; }\n",
    );
    let err = s.config().compile(&[&bad]).unwrap_err();
    let Error::Schema { errors, rendered } = &err else {
        panic!("expected schema errors, got {err}");
    };
    assert_eq!(*errors, 2);
    let text = err.to_string();
    assert!(
        text.starts_with("bebop-build: 2 errors in the schemas\n\n"),
        "{text}"
    );
    assert!(text.contains("bad.bop:2:15: error[E"), "{text}");
    assert!(
        text.contains("struct B { y: Missing; z: AlsoMissing; }"),
        "{text}"
    );
    assert!(text.contains("^^^^^^^"), "{text}");
    assert!(rendered.contains("AlsoMissing"));
    // Debug shows the same readable text (what `main() -> Result` prints).
    assert_eq!(format!("{err:?}"), text);
    assert!(!s.path("out/bebop.rs").exists());

    let err = s.config().compile(&["nowhere/missing.bop"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot read 'nowhere/missing.bop'"),
        "{err}"
    );
}

#[test]
fn warnings_are_returned_rendered() {
    let s = Scratch::new();
    s.write("dep.bop", "struct D { x: int32; }");
    let root = s.write(
        "root.bop",
        "import \"dep.bop\"\nimport \"dep.bop\"\nstruct R { d: D; }",
    );
    let out = s
        .config()
        .include(s.dir.path())
        .rustfmt(false)
        .compile(&[&root])
        .unwrap();
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    let w = &out.warnings[0];
    assert!(w.contains("root.bop:2:8: warning[W006]"), "{w}");
    assert!(w.contains("imported more than once"), "{w}");
}

#[test]
fn decorator_lua_blocks_run_by_default_and_can_be_turned_off() {
    let s = Scratch::new();
    let schema = s.write("product.bop", RANGE);
    let err = s.config().compile(&[&schema]).unwrap_err();
    assert!(
        err.to_string().contains("min must be less than max"),
        "{err}"
    );
    let out = s
        .config()
        .lua(false)
        .rustfmt(false)
        .compile(&[&schema])
        .unwrap();
    assert!(read(&out.path).contains("pub struct Product"));
}

#[test]
fn env_vars_replace_the_process_environment() {
    let s = Scratch::new();
    let schema = s.write("c.bop", "const string WHO = \"$(BEBOP_BUILD_TEST_WHO)\";");
    let out = s
        .config()
        .env_var("BEBOP_BUILD_TEST_WHO", "world")
        .rustfmt(false)
        .compile(&[&schema])
        .unwrap();
    assert!(read(&out.path).contains("\"world\""));
}

#[test]
fn the_output_is_rewritten_only_when_it_changes() {
    let s = Scratch::new();
    let schema = s.write("a.bop", "struct A { x: int32; }");
    let first = s.config().rustfmt(false).compile(&[&schema]).unwrap();
    let stamp = std::fs::metadata(&first.path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.config().rustfmt(false).compile(&[&schema]).unwrap();
    assert_eq!(
        std::fs::metadata(&first.path).unwrap().modified().unwrap(),
        stamp
    );
    s.write("a.bop", "struct A { x: int64; }");
    s.config().rustfmt(false).compile(&[&schema]).unwrap();
    assert!(read(&first.path).contains("pub x: i64"));
}

#[test]
fn compile_schemas_uses_out_dir_from_the_config_or_fails_clearly() {
    // cargo sets OUT_DIR for build scripts, not when running tests.
    assert!(
        std::env::var_os("OUT_DIR").is_none(),
        "this test expects OUT_DIR to be unset"
    );
    let err = bebop_build::compile_schemas(&["a.bop"], &["."]).unwrap_err();
    assert!(matches!(err, Error::NoOutDir), "{err}");
    assert!(err.to_string().contains("OUT_DIR is not set"), "{err}");
}

#[test]
fn generated_code_names_no_absolute_path_and_gives_lines() {
    let s = Scratch::new();
    s.write(
        "vendor/geo/point.bop",
        "/// A point.\nstruct Point { x: int32; }\n",
    );
    let root = s.write(
        "schemas/shop.bop",
        "import \"geo/point.bop\"\n\n/// An order.\nmessage Order { at(1): Point; }\n",
    );
    let loose = s.write("elsewhere/loose.bop", "enum Kind : byte { A = 0; }\n");
    assert!(root.is_absolute() && loose.is_absolute());
    let out = s
        .config()
        .include(s.path("schemas"))
        .include(s.path("vendor"))
        .rustfmt(false)
        .descriptor_set_path(s.path("out/set.desc"))
        .compile(&[&root, &loose])
        .unwrap();
    let code = read(&out.path);
    // Roots given by absolute path are named relative to their include directory, or by
    // file name when no include directory (or the manifest directory) holds them; imports
    // as imported.
    let dir = s.dir.path().to_string_lossy().into_owned();
    let canonical = std::fs::canonicalize(s.dir.path()).unwrap();
    for text in [
        dir.as_str(),
        &*canonical.to_string_lossy(),
        "/home/",
        "/tmp/",
    ] {
        assert!(!code.contains(text), "`{text}` in:\n{code}");
    }
    let header = code.lines().next().unwrap();
    assert!(
        header.contains("from `shop.bop`, `loose.bop`, `geo/point.bop`"),
        "{header}"
    );
    // The default settings name the file and the line of every item.
    assert!(
        code.contains("From `shop.bop` (line 4): `message Order`."),
        "{code}"
    );
    assert!(
        code.contains("From `geo/point.bop` (line 2): `struct Point`."),
        "{code}"
    );
    assert!(
        code.contains("From `loose.bop` (line 1): `enum Kind`."),
        "{code}"
    );
    // The descriptor set written names the same paths (and no source positions by default).
    let set = DescriptorSet::from_bytes(&std::fs::read(s.path("out/set.desc")).unwrap()).unwrap();
    for schema in set.schema_list() {
        let path = schema.path.as_deref().unwrap();
        if path.ends_with("bebop-build-imports.bop") {
            continue;
        }
        assert!(!Path::new(path).is_absolute(), "{path}");
        assert!(schema.source_code_info.is_none(), "{path}");
    }
    // What cargo should watch is still the real files.
    assert!(out.schema_files.iter().all(|f| f.is_absolute()));

    // A file name shared by two roots outside the include directories keeps enough of its
    // path to tell them apart.
    let a = s.write("x/one/same.bop", "package one\nstruct A { v: int32; }\n");
    let b = s.write("x/two/same.bop", "package two\nstruct B { v: int32; }\n");
    let out = s
        .config()
        .rustfmt(false)
        .file_name("same.rs")
        .compile(&[&a, &b])
        .unwrap();
    let header = read(&out.path).lines().next().unwrap().to_string();
    assert!(
        header.contains("from `same.bop`, `two/same.bop`"),
        "{header}"
    );
}

#[test]
fn serde_attributes_and_extern_paths_reach_the_generator() {
    let s = Scratch::new();
    s.write(
        "schemas/common.bop",
        "package common\nmessage Label { text(1): string; }\n",
    );
    let app = s.write(
        "schemas/app.bop",
        "package app\nimport \"common.bop\"\nstruct Tagged { label: common.Label; n: int32; }\nenum Kind : byte { A = 0; }\n",
    );
    let out = s
        .config()
        .include(s.path("schemas"))
        .owned_types(true)
        .serde(true)
        .serde_cfg(Some(r#"feature = "serde""#))
        .type_attribute(".app", "#[derive(PartialOrd)]")
        .view_type_attribute("Tagged", "#[doc(alias = \"view\")]")
        .owned_type_attribute("Tagged", "#[doc(alias = \"owned\")]")
        .field_attribute("Tagged.n", "#[doc(alias = \"number\")]")
        .owned_field_attribute(".app.Tagged.label", "#[doc(alias = \"tag\")]")
        .view_field_attribute(".app.Kind.A", "#[doc(alias = \"first\")]")
        .extern_path(".common", "::common_types::common")
        .rustfmt(false)
        .compile(&[&app])
        .unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let code = read(&out.path);
    assert!(!code.contains("pub struct Label"), "{code}");
    assert!(code.contains("pub label: ::common_types::common::Label<'a>,"));
    assert!(code.contains("pub label: ::common_types::owned::common::Label,"));
    assert_eq!(
        code.matches(
            r#"#[cfg_attr(feature = "serde", derive(::serde::Serialize, ::serde::Deserialize))]"#
        )
        .count(),
        2,
        "the owned Tagged and Kind: {code}"
    );
    for (attr, n) in [
        // On its own or merged into the generated derive (as rustfmt merges derives).
        ("PartialOrd)]", 3),
        ("#[doc(alias = \"view\")]", 1),
        ("#[doc(alias = \"owned\")]", 1),
        ("#[doc(alias = \"number\")]", 2),
        ("#[doc(alias = \"tag\")]", 1),
        ("#[doc(alias = \"first\")]", 1),
    ] {
        assert_eq!(code.matches(attr).count(), n, "{attr}");
    }
    assert!(out.types.iter().all(|t| t.fqn != "common.Label"));

    // Paths that match nothing are warned about; bad attributes fail before compiling.
    let out = s
        .config()
        .include(s.path("schemas"))
        .type_attribute(".nope", "#[derive(Hash)]")
        .rustfmt(false)
        .compile(&[&app])
        .unwrap();
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(out.warnings[0].contains("matches no generated type"));
    for (config, key) in [
        (
            s.config().type_attribute(".", "derive(Hash)").clone(),
            "type_attribute",
        ),
        (
            s.config().field_attribute("a..b", "#[doc = \"x\"]").clone(),
            "field_attribute",
        ),
        (
            s.config().extern_path("common", "::c").clone(),
            "extern_path",
        ),
        (
            s.config().extern_path(".common", "c::d").clone(),
            "extern_path",
        ),
    ] {
        let err = config.compile(&["does-not-exist.bop"]).unwrap_err();
        assert!(matches!(err, Error::Generate(_)), "{err}");
        assert!(
            err.to_string().contains(&format!("option `{key}`")),
            "{err}"
        );
    }
}

//! Type and field attributes, extern paths and serde: where the generator puts what, and the
//! errors for bad input. (`tests/expected/variants/serde_*.rs`, compiled and run by
//! `bebop-rust-fixtures`, show the same options in compiling code.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use bebop_codegen_rust::{
    AttributeForm, AttributeRule, ExternPath, GenerateError, Generator, Options,
};
use bebop_descriptor::DescriptorSet;

/// Compiles in-memory schemas (the first is the one to generate).
fn compile(files: &[(&str, &str)]) -> DescriptorSet {
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    let root = files[0].0;
    let c = bebopc::Compiler::new().compile_in_memory(&files, &[root]);
    assert!(!c.has_errors(), "{}", c.render_terminal(false));
    c.descriptor_set(&Default::default()).unwrap()
}

const SHOP: &str = r#"
package shop
import "bebop/decorators.bop"

struct Point { x: int32; y: int32; }
struct Item { id: uint32; name: string; }
message Order { id(1): uint32; items(2): Item[]; note(3): string; }
union Shape { Circle(1): { r: float32; }; Named(2): message { name(1): string; }; }
enum Kind : byte { A = 0; B = 1; }
@flags enum Perms : byte { NONE = 0; READ = 1; }
"#;

/// Generates `shop.bop` (with owned types, no rustfmt, so that attributes stay on lines of
/// their own) and returns the code.
fn shop(generator: Generator) -> (String, Vec<String>) {
    let code = generator
        .owned_types(true)
        .rustfmt(false)
        .generate(&compile(&[("shop.bop", SHOP)]), &["shop.bop"])
        .unwrap();
    (code.files[0].content.clone(), code.warnings)
}

/// `s` without whitespace, to find code whatever its line breaks.
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The attributes right above `pub struct NAME` / `pub enum NAME` (the lines up to the
/// previous blank or `}` line, attributes broken over several lines included), for each
/// occurrence.
fn attrs_of(code: &str, item: &str) -> Vec<String> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        let Some(rest) = t.strip_prefix(item) else {
            continue;
        };
        if !(rest.starts_with(' ') || rest.starts_with('<') || rest.starts_with('(')) {
            continue;
        }
        let mut attrs = Vec::new();
        // Inside an attribute broken over lines, read from its `)]` up to its `#[`.
        let mut inside = false;
        for prev in lines[..i].iter().rev() {
            let p = prev.trim();
            if inside || p == ")]" {
                inside = !p.starts_with("#[");
                attrs.push(p.to_string());
            } else if p.starts_with("#[") || p.starts_with("///") {
                attrs.push(p.to_string());
            } else {
                break;
            }
        }
        attrs.reverse();
        out.push(attrs.join("\n"));
    }
    out
}

#[test]
fn type_attributes_go_on_the_forms_asked_for() {
    let (code, warnings) = shop(
        Generator::new()
            .type_attribute(".", "#[doc(alias = \"everything\")]")
            .type_attribute(".shop.Item", "#[derive(PartialOrd)]")
            .view_type_attribute("Order", "#[doc(alias = \"order_view\")]")
            .owned_type_attribute("Order", "#[doc(alias = \"order_owned\")]")
            .owned_type_attribute("Kind", r#"#[cfg_attr(feature = "x", doc = "kind")]"#)
            .view_type_attribute("Perms", "#[doc(alias = \"perms\")]")
            .type_attribute(
                "Shape",
                "#[doc(alias = \"shape\")] #[doc(alias = \"form\")]",
            ),
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    // Both forms of a record with borrowed data; its view and owned form separately.
    let item = attrs_of(&code, "pub struct Item");
    assert_eq!(item.len(), 2, "{item:?}");
    assert!(item.iter().all(|a| a.contains("#[derive(PartialOrd)]")));
    let order = attrs_of(&code, "pub struct Order");
    assert!(order[0].contains("order_view") && !order[0].contains("order_owned"));
    assert!(order[1].contains("order_owned") && !order[1].contains("order_view"));
    // Types that are their own owned form take rules of either form.
    assert!(
        attrs_of(&code, "pub enum Kind")[0].contains(r#"#[cfg_attr(feature = "x", doc = "kind")]"#)
    );
    assert!(attrs_of(&code, "pub struct Perms")[0].contains("#[doc(alias = \"perms\")]"));
    // Several attributes in one rule; `.` reaches every type, nested ones included.
    for shape in attrs_of(&code, "pub enum Shape") {
        assert!(shape.contains("#[doc(alias = \"shape\")]\n#[doc(alias = \"form\")]"));
    }
    for name in ["Point", "Item", "Order", "Circle", "Named"] {
        for attrs in attrs_of(&code, &format!("pub struct {name}")) {
            assert!(attrs.contains("everything"), "{name}: {attrs}");
        }
    }
    // Attributes come after the generator's derives.
    let derive = item[0].find("#[derive(Clone").unwrap();
    assert!(item[0].find("#[derive(PartialOrd)]").unwrap() > derive);
    // The owned alias of a record without borrowed data gets nothing.
    assert!(code.contains("pub type Point = super::super::shop::Point;"));
    assert_eq!(
        attrs_of(&code, "pub type Point")[0]
            .matches("everything")
            .count(),
        0
    );
}

#[test]
fn field_attributes_reach_fields_branches_and_variants() {
    let (code, warnings) = shop(
        Generator::new()
            .field_attribute(".shop.Item.name", "#[doc(alias = \"title\")]")
            .owned_field_attribute("Order.note", "#[doc(alias = \"comment\")]")
            .view_field_attribute("items", "#[doc(alias = \"lines\")]")
            .field_attribute("Shape.Named", "#[doc(alias = \"by_name\")]")
            .field_attribute(".shop.Kind.B", "#[doc(alias = \"second\")]")
            .field_attribute(".shop.Point", "#[doc(alias = \"coordinate\")]"),
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    let flat: String = code.lines().map(str::trim).collect::<Vec<_>>().join("\n");
    let count = |attr: &str| flat.matches(attr).count();
    assert_eq!(count("#[doc(alias = \"title\")]\npub name:"), 2);
    assert_eq!(count("#[doc(alias = \"comment\")]"), 1);
    assert_eq!(count("#[doc(alias = \"lines\")]"), 1);
    // The union's variants in both forms (and the fields of the inline type, which has the
    // branch's path).
    assert_eq!(count("#[doc(alias = \"by_name\")]\nNamed("), 2);
    assert_eq!(count("#[doc(alias = \"second\")]\nB = 1,"), 1);
    // A type's path reaches all of its fields.
    assert_eq!(count("#[doc(alias = \"coordinate\")]"), 2);

    // Flags members are constants: a rule for one matches nothing, which is reported.
    let (_, warnings) =
        shop(Generator::new().field_attribute(".shop.Perms.READ", "#[doc = \"x\"]"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("matches no generated field"),
        "{warnings:?}"
    );
}

#[test]
fn bad_rules_are_option_errors() {
    let set = compile(&[("shop.bop", SHOP)]);
    let bad_attributes = [
        "derive(Hash)",
        "",
        "#![allow(dead_code)]",
        "#[derive(Hash)",
        "#[derive(Hash)] struct X;",
        "/* nothing */",
        "#[",
        "\"#[x]\"",
    ];
    for attr in bad_attributes {
        for generator in [
            Generator::new().type_attribute(".", attr),
            Generator::new().owned_field_attribute("Item.id", attr),
        ] {
            let err = generator.generate(&set, &[]).unwrap_err();
            assert!(
                matches!(err, GenerateError::InvalidOption { .. }),
                "{attr:?}: {err}"
            );
            assert!(
                err.to_string().contains("is not an outer attribute"),
                "{err}"
            );
        }
    }
    for path in ["", "..", "a..b", ".a.", "a b", "a-b", "a::b", "."] {
        let result = Generator::new()
            .field_attribute(path, "#[doc = \"x\"]")
            .generate(&set, &[]);
        if path == "." {
            assert!(result.is_ok());
            continue;
        }
        let err = result.unwrap_err();
        assert!(
            err.to_string().contains("is not a schema path"),
            "{path:?}: {err}"
        );
    }
    for (bebop, rust) in [
        ("shop", "::x"),
        (".", "::x"),
        (".shop", "x::y"),
        (".shop", "::x<T>"),
        (".shop", ""),
    ] {
        let err = Generator::new()
            .extern_path(bebop, rust)
            .generate(&set, &[])
            .unwrap_err();
        assert!(
            matches!(&err, GenerateError::InvalidOption { key, .. } if key == "extern_path"),
            "{bebop} {rust}: {err}"
        );
    }
    // The same through the parameter.
    for parameter in [
        "type_attribute=.shop",
        "type_attribute=.shop=derive(Hash)",
        "field_attribute==#[doc = \"x\"]",
        "extern_path=.shop",
        "extern_path=.shop=::a=::b=::c",
        "serde=maybe",
        "serde_cfg=all(",
    ] {
        let result = Options::from_parameter(parameter).and_then(|o| o.validate());
        assert!(result.is_err(), "{parameter}");
    }
}

#[test]
fn rules_parse_from_parameters_and_build_options() {
    let o = Options::from_parameter(
        r#"owned=true, serde=true, serde_cfg=feature = "serde", type_attribute=.=#[derive(Hash, PartialOrd)], view_type_attribute=A=#[doc = "a,b"], owned_type_attribute=B=#[cfg_attr(x, derive(Eq))], field_attribute=A.x=#[doc(alias = "y")], view_field_attribute=f=#[doc = "v"], owned_field_attribute=g=#[doc = "o"], extern_path=.p=::c::p, extern_path=.q=::c::q=::c::owned::q"#,
    )
    .unwrap();
    assert!(o.serde);
    assert_eq!(o.serde_cfg.as_deref(), Some(r#"feature = "serde""#));
    assert!(!o.one_pass, "one-pass reading is off unless asked for");
    assert!(Options::from_parameter("one_pass=true").unwrap().one_pass);
    assert!(Options::from_parameter("one_pass=maybe").is_err());
    let forms: Vec<(&str, &str, AttributeForm)> = o
        .type_attributes
        .iter()
        .chain(&o.field_attributes)
        .map(|r| (r.path.as_str(), r.attribute.as_str(), r.form))
        .collect();
    assert_eq!(
        forms,
        [
            (".", "#[derive(Hash, PartialOrd)]", AttributeForm::Both),
            ("A", r#"#[doc = "a,b"]"#, AttributeForm::View),
            ("B", "#[cfg_attr(x, derive(Eq))]", AttributeForm::Owned),
            ("A.x", r#"#[doc(alias = "y")]"#, AttributeForm::Both),
            ("f", r#"#[doc = "v"]"#, AttributeForm::View),
            ("g", r#"#[doc = "o"]"#, AttributeForm::Owned),
        ]
    );
    assert_eq!(
        o.extern_paths,
        [
            ExternPath::new(".p", "::c::p"),
            ExternPath::new(".q", "::c::q").with_owned_path("::c::owned::q"),
        ]
    );
    // Options can be built without the parameter: `Default`, fields, rules.
    let mut built = Options::default();
    built.owned_types = true;
    built.serde = true;
    built.serde_cfg = Some(r#"feature = "serde""#.into());
    built.type_attributes = o.type_attributes.clone();
    built.field_attributes = o.field_attributes.clone();
    built.extern_paths = o.extern_paths.clone();
    assert_eq!(built, o);
    let mut pushed = Options::default();
    pushed.type_attributes.push(AttributeRule::new(
        ".",
        "#[derive(Hash)]",
        AttributeForm::Both,
    ));
    assert!(pushed.validate().is_ok());
}

const COMMON: &str = "package common\n\
    struct Point { x: int32; }\n\
    message Label { text(1): string; }\n\
    struct Outer { inner: Outer.Inner; export struct Inner { s: string; } }\n\
    const int32 LIMIT = 5;\n";

const APP: &str = "package app\n\
    import \"common.bop\"\n\
    struct Uses { p: common.Point; l: common.Label; i: common.Outer.Inner; o: common.Outer; }\n";

fn app(generator: Generator) -> Result<bebop_codegen_rust::GeneratedCode, GenerateError> {
    let set = compile(&[("app.bop", APP), ("common.bop", COMMON)]);
    generator.rustfmt(false).generate(&set, &["app.bop"])
}

#[test]
fn extern_paths_replace_definitions_by_paths() {
    let code = app(Generator::new()
        .owned_types(true)
        .extern_path(".common", "::c::common"))
    .unwrap();
    assert!(code.warnings.is_empty(), "{:?}", code.warnings);
    let text = &code.files[0].content;
    for absent in [
        "pub struct Point",
        "pub struct Label",
        "pub struct Inner",
        "LIMIT",
    ] {
        assert!(!text.contains(absent), "{absent}");
    }
    for view in [
        "pub p: ::c::common::Point,",
        "pub l: ::c::common::Label<'a>,",
        "pub i: ::c::common::outer::Inner<'a>,",
        "pub o: ::c::common::Outer<'a>,",
    ] {
        assert!(text.contains(view), "{view}\n{text}");
    }
    // Owned forms: in the other crate's `owned` tree; a type without borrowed data is its
    // own owned form.
    for owned in [
        "pub p: ::c::common::Point,",
        "pub l: ::c::owned::common::Label,",
        "pub i: ::c::owned::common::outer::Inner,",
        "pub o: ::c::owned::common::Outer,",
    ] {
        assert_eq!(
            text.matches(owned).count(),
            if owned.contains("Point") { 2 } else { 1 },
            "{owned}"
        );
    }
    assert!(text.contains("// Generated elsewhere, not here: `.common` at `::c::common`."));
    let fqns: Vec<&str> = code.types.iter().map(|t| t.fqn.as_str()).collect();
    assert_eq!(fqns, ["app.Uses"]);

    // One type (and what is nested in it), the most specific path winning, and explicit
    // owned paths.
    let code = app(Generator::new()
        .owned_types(true)
        .extern_path(".common", "::c::common")
        .extern_path_with_owned(".common.Outer", "::d::Renamed", "::d::owned::RenamedOwned")
        .extern_path_with_owned(".common.Label", "::e::L", "::e::owned::LabelOwned"))
    .unwrap();
    let text = &code.files[0].content;
    for expected in [
        "pub o: ::d::Renamed<'a>,",
        "pub i: ::d::outer::Inner<'a>,",
        "pub o: ::d::owned::RenamedOwned,",
        "pub i: ::d::owned::outer::Inner,",
        "pub l: ::e::L<'a>,",
        "pub l: ::e::owned::LabelOwned,",
        "pub p: ::c::common::Point,",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }

    // An owned path that cannot be derived is an error when owned code needs it, not before.
    let err = app(Generator::new()
        .owned_types(true)
        .extern_path(".common", "::c::types"))
    .unwrap_err();
    assert!(err.to_string().contains("cannot be derived"), "{err}");
    let views = app(Generator::new().extern_path(".common", "::c::types")).unwrap();
    assert!(
        views.files[0]
            .content
            .contains("pub l: ::c::types::Label<'a>,")
    );
    let only_point = app(Generator::new()
        .owned_types(true)
        .extern_path(".common", "::c::common")
        .extern_path(".common.Point", "::p::P"))
    .unwrap();
    assert!(only_point.files[0].content.contains("pub p: ::p::P,"));

    // A path that matches nothing is a warning.
    let code = app(Generator::new().extern_path(".nothing", "::n")).unwrap();
    assert_eq!(code.warnings.len(), 1, "{:?}", code.warnings);
    assert!(code.warnings[0].contains("matches no definition"));
}

const SERDE: &str = r#"
import "bebop/decorators.bop"
struct Plain { a: int32; long: int16[40]; }
struct Borrowed { s: string; fixed: int64[33]; }
message Msg { long(1): uint32[40]; short(2): byte[32]; }
enum Kind : byte { A = 0; }
@flags enum Perms : byte { NONE = 0; READ = 1; }
@flags @forward_compatible enum Open : byte { NONE = 0; READ = 1; }
"#;

#[test]
fn serde_goes_on_the_types_that_own_their_data() {
    let set = compile(&[("s.bop", SERDE)]);
    let generate = |g: Generator| {
        g.rustfmt(false).generate(&set, &[]).unwrap().files[0]
            .content
            .clone()
    };
    // The serde traits in a derive, whatever its layout (an enum's merges with the
    // generated derive, as rustfmt merges them).
    let derive = squash("::serde::Serialize, ::serde::Deserialize");
    let text = generate(Generator::new().owned_types(true).serde(true));
    assert!(text.contains("// Types owning their data implement serde's traits"));
    // Plain (no borrowed data), Kind, and the owned Borrowed and Msg.
    assert_eq!(squash(&text).matches(&derive).count(), 4);
    for (item, n) in [
        ("pub struct Plain", 1),
        ("pub enum Kind", 1),
        ("pub struct Borrowed", 1),
        ("pub struct Msg", 1),
    ] {
        let with = attrs_of(&text, item)
            .iter()
            .filter(|a| squash(a).contains(&derive))
            .count();
        assert_eq!(with, n, "{item}");
    }
    // Long fixed arrays go through the runtime's helpers, in every form that derives.
    assert_eq!(
        text.matches(r#"#[serde(with = "::bebop_runtime::serde_support::fixed_array")]"#)
            .count(),
        2
    );
    assert_eq!(
        text.matches(
            r#"#[serde(default, with = "::bebop_runtime::serde_support::optional_fixed_array")]"#
        )
        .count(),
        1
    );
    // Flags: by hand, closed ones rejecting undeclared bits.
    assert_eq!(text.matches("impl ::serde::Serialize for Perms").count(), 1);
    assert_eq!(
        text.matches("impl<'de> ::serde::Deserialize<'de> for Open")
            .count(),
        1
    );
    assert!(text.contains("sets bits that no flag of `Perms` declares"));

    // Without owned types, only what owns its data already; under a cfg when asked.
    let text = generate(
        Generator::new()
            .serde(true)
            .serde_cfg(Some(r#"feature = "serde""#)),
    );
    let gated =
        r#"#[cfg_attr(feature = "serde", derive(::serde::Serialize, ::serde::Deserialize))]"#;
    assert_eq!(text.matches(gated).count(), 2);
    // Every serde derive is the gated one.
    assert_eq!(squash(&text).matches(&derive).count(), 2);
    assert_eq!(text.matches("#[cfg(feature = \"serde\")]\nimpl").count(), 4);
    assert!(text.contains(r#"serde(with = "::bebop_runtime::serde_support::fixed_array")"#));
    assert!(!text.contains("#[serde("));

    // Off by default: no trace of serde.
    assert!(!generate(Generator::new().owned_types(true)).contains("serde"));

    // A long fixed array inside another array has no serde impl: a clear error.
    let nested = compile(&[("n.bop", "struct N { grid: map[string, int32[40]]; }")]);
    let err = Generator::new()
        .owned_types(true)
        .serde(true)
        .generate(&nested, &[])
        .unwrap_err();
    assert!(matches!(err, GenerateError::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("more than 32 elements"), "{err}");
    // Without serde it is fine.
    assert!(
        Generator::new()
            .owned_types(true)
            .generate(&nested, &[])
            .is_ok()
    );
}

#[test]
fn the_plugin_takes_the_new_options_as_parameters() {
    let set = compile(&[("shop.bop", SHOP)]);
    let request = bebop_descriptor::CodeGeneratorRequest {
        files_to_generate: Some(vec!["shop.bop".into()]),
        parameter: Some(
            r#"owned=true, serde=true, rustfmt=false, owned_type_attribute=.shop.Order=#[serde(rename_all = "camelCase")], field_attribute=Item.id=#[doc(alias = "key")]"#
                .into(),
        ),
        schemas: set.schemas.clone(),
        ..Default::default()
    };
    let response = bebop_codegen_rust::respond(&request);
    assert_eq!(response.error, None);
    let content = response.files.unwrap()[0].content.clone().unwrap();
    // The serde derive is merged into the generated one, as rustfmt merges derives.
    assert!(content.contains(", ::serde::Serialize, ::serde::Deserialize)]"));
    assert_eq!(
        content
            .matches(r#"#[serde(rename_all = "camelCase")]"#)
            .count(),
        1
    );
    assert_eq!(content.matches(r#"#[doc(alias = "key")]"#).count(), 2);

    let bad = bebop_descriptor::CodeGeneratorRequest {
        parameter: Some("type_attribute=.shop=derive(Hash)".into()),
        ..request
    };
    let error = bebop_codegen_rust::respond(&bad).error.unwrap();
    assert!(error.contains("option `type_attribute`"), "{error}");
}

#[test]
fn the_plugin_guide_documents_every_option_key() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/plugins.md"
    ))
    .expect("docs/plugins.md");
    let missing: Vec<&str> = bebop_codegen_rust::OPTION_KEYS
        .iter()
        .copied()
        .filter(|key| !guide.contains(&format!("`{key}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/plugins.md does not name {missing:?}"
    );
}

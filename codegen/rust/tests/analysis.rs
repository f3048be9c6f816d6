//! The analyses and checks of the generator through its public API: lifetimes, by-value
//! recursion, sizes, derivable traits, owned-form conversions, names, and the errors for
//! schemas and options it cannot handle.

mod common;

use bebop_codegen_rust::{GenerateError, Generator, ItemKind, OwnedForm, OwnedMap, TypeInfo};
use bebop_descriptor::{DescriptorSet, TypeKind};
use common::synthetic::*;

fn owned_gen() -> Generator {
    Generator::new().owned_types(true).rustfmt(false)
}

fn type_infos(set: &DescriptorSet) -> Vec<TypeInfo> {
    owned_gen().generate(set, &[]).expect("generate").types
}

fn info<'a>(types: &'a [TypeInfo], fqn: &str) -> &'a TypeInfo {
    types
        .iter()
        .find(|t| t.fqn == fqn)
        .unwrap_or_else(|| panic!("no {fqn}"))
}

fn one(defs: Vec<bebop_descriptor::DefinitionDescriptor>) -> DescriptorSet {
    DescriptorSet {
        schemas: Some(vec![schema("t.bop", None, defs)]),
    }
}

/// The `#[derive(..)]` list right above `pub struct NAME` / `pub enum NAME`.
fn derives(content: &str, item: &str) -> String {
    let at = content.find(item).unwrap_or_else(|| panic!("no `{item}`"));
    let before = &content[..at];
    let d = before.rfind("#[derive(").expect("a derive");
    before[d..].lines().next().expect("line").to_string()
}

#[test]
fn spec_types() {
    let all = common::synthetic::all();
    let types = type_infos(&all[0].1);
    let point = info(&types, "Point");
    assert_eq!(point.kind, ItemKind::Struct);
    assert!(!point.has_lifetime);
    assert_eq!(point.fixed_size, Some(8));
    assert_eq!(point.owned_form, OwnedForm::Same);
    assert_eq!(point.owned_path.as_deref(), Some("owned::Point"));
    let person = info(&types, "Person");
    assert!(person.has_lifetime);
    assert_eq!(person.fixed_size, None);
    assert_eq!(person.owned_form, OwnedForm::Converted);
    // Recursive through an array (the owned Vec<TreeNode> lends its elements) and by value
    // (Lazy in the view, Box in the owned form): converted both ways like any other.
    for name in ["TreeNode", "Chain"] {
        assert_eq!(
            info(&types, name).owned_form,
            OwnedForm::Converted,
            "{name}"
        );
    }
    // A forward-compatible union borrows its unknown branch.
    assert!(info(&types, "Event").has_lifetime);
    assert!(!info(&types, "Shape").has_lifetime);
    assert_eq!(info(&types, "Level").kind, ItemKind::Enum);
    assert_eq!(info(&types, "Level").owned_form, OwnedForm::Same);
    assert_eq!(info(&types, "Empty").fixed_size, Some(0));
    assert_eq!(info(&types, "Shape.Circle").path, "shape::Circle");
}

#[test]
fn recursion_picks_the_fields_that_close_cycles() {
    let set = &common::synthetic::all()[1].1;
    let code = owned_gen().generate(set, &[]).unwrap();
    let c = &code.files[0].content;
    assert!(c.contains("pub next: ::core::option::Option<::bebop_runtime::Lazy<'a, Chain<'a>>>"));
    assert!(c.contains("pub left: ::bebop_runtime::Lazy<'a, Node<'a>>"));
    assert!(c.contains("pub inner: ::bebop_runtime::Lazy<'a, Expr<'a>>"));
    // Arrays and maps break cycles: no Lazy there.
    assert!(c.contains("pub trees: ::core::option::Option<::bebop_runtime::Array<'a, Expr<'a>>>"));
    assert!(
        c.contains("pub next: ::core::option::Option<::bebop_runtime::alloc_types::Box<Chain>>")
    );
    // Lazy has no Eq: neither do the types holding it outside an Option. It has a Default
    // when its value type does, as the owned form's Box does.
    assert_eq!(
        derives(c, "pub struct Pair<'a>"),
        "#[derive(Clone, Copy, Debug, PartialEq, Default)]"
    );
    assert!(derives(c, "pub struct Pair {").ends_with("Default)]"));
    assert_eq!(
        derives(c, "pub struct Chain<'a>"),
        "#[derive(Clone, Copy, Debug, PartialEq, Default)]"
    );
    let types = type_infos(set);
    assert!(info(&types, "rec.Pair").has_lifetime);
    assert_eq!(info(&types, "rec.Pair").fixed_size, None);
}

#[test]
fn derives_follow_the_fields() {
    let set = one(vec![
        strukt(
            "Ints",
            vec![
                field("a", "int32"),
                field("b", "uuid"),
                field("c", "byte[4]"),
            ],
        ),
        strukt("Floats", vec![field("a", "float32")]),
        strukt("Maps", vec![field("m", "map[int32, int32]")]),
        strukt("Arrays", vec![field("a", "int32[]"), field("s", "string")]),
        strukt("Big", vec![field("a", "int16[33]")]),
        strukt("Views", vec![field("a", "string[2]")]),
        enumeration("NoZero", TypeKind::Byte, &[("One", 1)], false),
        strukt("UsesNoZero", vec![field("a", "NoZero[2]")]),
        union("U", vec![Branch::Ref(1, "Ints", "Ints")]),
    ]);
    let code = Generator::new().rustfmt(false).generate(&set, &[]).unwrap();
    let c = &code.files[0].content;
    // &[u8; 4] has no Default: the struct's is written out, so that the view has one as its
    // owned form ([u8; 4]) does.
    assert_eq!(
        derives(c, "pub struct Ints"),
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]"
    );
    assert!(c.contains("impl ::core::default::Default for Ints<'_>"));
    assert!(c.contains("c: &[0; 4],"));
    // FixedArray has a Default when its elements do.
    assert_eq!(
        derives(c, "pub struct Views"),
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]"
    );
    assert_eq!(
        derives(c, "pub struct Floats"),
        "#[derive(Clone, Copy, Debug, PartialEq, Default)]"
    );
    assert_eq!(
        derives(c, "pub struct Maps"),
        "#[derive(Clone, Copy, Debug, PartialEq, Default)]"
    );
    assert_eq!(
        derives(c, "pub struct Arrays"),
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]"
    );
    // [i16; 33] has no Default (arrays implement it up to 32).
    assert_eq!(
        derives(c, "pub struct Big"),
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]"
    );
    assert!(c.contains("pub a: [i16; 33]"));
    assert!(c.contains("pub a: ::bebop_runtime::FixedArray<'a, &'a str, 2>"));
    // An enum without a zero member has no Default, so T[N] of it stays a view.
    assert!(c.contains("pub a: ::bebop_runtime::FixedArray<'a, NoZero, 2>"));
    assert!(!derives(c, "pub enum NoZero").contains("Default"));
    assert_eq!(
        derives(c, "pub enum U"),
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]"
    );
}

#[test]
fn both_owned_map_choices_lend_views() {
    let set = one(vec![strukt("M", vec![field("m", "map[int32, float32]")])]);
    let btree = owned_gen().generate(&set, &[]).unwrap();
    assert_eq!(info(&btree.types, "M").owned_form, OwnedForm::Converted);
    let content = &btree.files[0].content;
    assert!(content.contains("BTreeMap<i32, f32>"));
    assert!(
        content.contains("Map::from_btree_map(&self.m)"),
        "{content}"
    );
    let vec = owned_gen()
        .owned_map(OwnedMap::Vec)
        .generate(&set, &[])
        .unwrap();
    assert_eq!(info(&vec.types, "M").owned_form, OwnedForm::Converted);
    let content = &vec.files[0].content;
    assert!(content.contains("Vec<(i32, f32)>"));
    // The same types in both forms: the vector is the slice the view borrows.
    assert!(content.contains("Map::from_slice(&self.m)"), "{content}");
}

#[test]
fn names_are_converted_and_deduplicated() {
    let set = &common::synthetic::all()[3].1;
    let types = type_infos(set);
    assert_eq!(info(&types, "type.self.type").path, "r#type::self_::Type");
    assert_eq!(
        info(&types, "type.self.Owned.Inner").path,
        "r#type::self_::owned::Inner"
    );
    let consts = &common::synthetic::all()[4].1;
    let consts_types = type_infos(consts);
    // At the include root, `owned` is reserved for the owned types.
    assert_eq!(info(&consts_types, "Owned.Inner").path, "owned_::Inner");
    assert_eq!(
        info(&consts_types, "Owned.Inner").owned_path.as_deref(),
        Some("owned::owned_::Inner")
    );
}

fn err(set: &DescriptorSet) -> GenerateError {
    owned_gen()
        .generate(set, &[])
        .expect_err("generation should fail")
}

#[test]
fn impossible_schemas_are_errors() {
    let e = err(&one(vec![strukt("A", vec![field("b", "Missing")])]));
    assert!(
        matches!(&e, GenerateError::UnknownType { fqn, .. } if fqn == "Missing"),
        "{e}"
    );
    assert!(e.to_string().contains("A.b"));

    let e = err(&one(vec![strukt("A", vec![field("a", "A")])]));
    assert!(matches!(e, GenerateError::Unsupported { .. }), "{e}");
    let e = err(&one(vec![
        strukt("A", vec![field("b", "B")]),
        strukt("B", vec![field("a", "A[2]")]),
    ]));
    assert!(e.to_string().contains("no finite encoding"), "{e}");

    let e = err(&one(vec![message("M", vec![tagged("a", 0, "int32")])]));
    assert!(e.to_string().contains("tag 0"), "{e}");
    let e = err(&one(vec![message(
        "M",
        vec![tagged("a", 1, "int32"), tagged("b", 1, "int32")],
    )]));
    assert!(e.to_string().contains("used twice"), "{e}");

    let e = err(&one(vec![
        enumeration("E", TypeKind::Byte, &[("A", 0)], false),
        union("U", vec![Branch::Ref(1, "E", "E")]),
    ]));
    assert!(e.to_string().contains("not a struct or message"), "{e}");

    let e = err(&one(vec![enumeration(
        "E",
        TypeKind::Byte,
        &[("A", 300)],
        false,
    )]));
    assert!(e.to_string().contains("does not fit"), "{e}");

    let e = err(&one(vec![konst(
        "C",
        "int8",
        bebop_descriptor::LiteralValue {
            kind: Some(bebop_descriptor::LiteralKind::Int),
            int_value: Some(200),
            ..Default::default()
        },
    )]));
    assert!(e.to_string().contains("does not fit"), "{e}");

    // Owned forms of fixed arrays need a default element.
    let set = one(vec![
        strukt("P", vec![field("x", "int32")]),
        union("U", vec![Branch::Ref(1, "P", "P")]),
        strukt("S", vec![field("us", "U[2]"), field("s", "string")]),
    ]);
    assert!(matches!(err(&set), GenerateError::Unsupported { .. }));
    assert!(
        Generator::new().rustfmt(false).generate(&set, &[]).is_ok(),
        "fine as views"
    );

    // A method id the descriptor got wrong.
    let mut svc = service("S", &[("M", "P", "P", bebop_descriptor::MethodType::Unary)]);
    svc.service_def.as_mut().unwrap().methods.as_mut().unwrap()[0].id = Some(1);
    let e = err(&one(vec![strukt("P", vec![field("x", "int32")]), svc]));
    assert!(e.to_string().contains("method id"), "{e}");

    let e = owned_gen()
        .generate(&one(vec![]), &["other.bop"])
        .unwrap_err();
    assert_eq!(e, GenerateError::UnknownFile("other.bop".into()));
}

#[test]
fn bad_options_are_errors() {
    let set = one(vec![strukt("P", vec![field("x", "int32")])]);
    for g in [
        Generator::new().runtime_path("bebop"),
        Generator::new().defmt(Some("feature =")),
        Generator::new().owned_cfg(Some("all(")),
        Generator::new().file_name("../x.rs"),
    ] {
        assert!(
            matches!(
                g.generate(&set, &[]),
                Err(GenerateError::InvalidOption { .. })
            ),
            "{:?}",
            g.options()
        );
    }
}

#[test]
fn file_names() {
    let two = DescriptorSet {
        schemas: Some(vec![
            schema("a/x.bop", None, vec![]),
            schema("y.bop", None, vec![]),
        ]),
    };
    let g = Generator::new().rustfmt(false);
    assert_eq!(
        g.generate(&two, &[]).unwrap().files[0].name,
        "bebop_generated.rs"
    );
    assert_eq!(
        g.generate(&two, &["a/x.bop"]).unwrap().files[0].name,
        "a/x.rs"
    );
    assert_eq!(
        g.clone()
            .file_name("out.rs")
            .generate(&two, &[])
            .unwrap()
            .files[0]
            .name,
        "out.rs"
    );
}

#[test]
fn prettyplease_only_output_is_deterministic_and_complete() {
    let set = &common::synthetic::all()[0].1;
    let a = Generator::new().rustfmt(false).generate(set, &[]).unwrap();
    let b = Generator::new().rustfmt(false).generate(set, &[]).unwrap();
    assert_eq!(a, b);
    let formatted = Generator::new().generate(set, &[]).unwrap();
    let items = |s: &str| s.lines().filter(|l| l.starts_with("pub ")).count();
    assert_eq!(
        items(&a.files[0].content),
        items(&formatted.files[0].content)
    );
}

#[test]
fn docs_name_the_schema_file_and_line() {
    let mut s = schema(
        "lined.bop",
        None,
        vec![
            doc(
                strukt("P", vec![field("x", "int32")]),
                "A point.\n\n```\nstruct P { x: int32; }\n```",
            ),
            strukt("Q", vec![field("y", "int32")]),
        ],
    );
    s.source_code_info = Some(bebop_descriptor::SourceCodeInfo {
        locations: Some(vec![bebop_descriptor::Location {
            path: Some(vec![5, 0]),
            span: Some([12, 1, 14, 2]),
            ..Default::default()
        }]),
    });
    let set = DescriptorSet {
        schemas: Some(vec![s]),
    };
    let code = Generator::new().generate(&set, &[]).unwrap();
    let c = &code.files[0].content;
    assert!(
        c.contains("/// A point.\n///\n/// ```text\n/// struct P { x: int32; }\n/// ```\n///\n/// From `lined.bop` (line 12): `struct P`.\n"),
        "{c}"
    );
    assert!(c.contains("/// From `lined.bop`: `struct Q`.\n"), "{c}");
    assert!(c.contains("/// `x: int32`\n    pub x: i32,"), "{c}");
}

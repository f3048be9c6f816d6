//! One small passing and one failing schema per language rule and literal form.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

use std::cell::RefCell;
use std::rc::Rc;

use bebopc::decorator::{
    DecoratorCall, DecoratorMessage, DecoratorOutcome, DecoratorRuntime, TargetKind,
};
use bebopc::model::*;
use bebopc::{Code, Compilation, Compiler, Severity};

fn compile(src: &str) -> Compilation {
    Compiler::new()
        .env_var("HOST", "example.org")
        .compile_source("test.bop", src)
}

fn errors(src: &str) -> Vec<Code> {
    compile(src).errors().map(|d| d.code).collect()
}

fn warnings(src: &str) -> Vec<Code> {
    compile(src).warnings().map(|d| d.code).collect()
}

#[track_caller]
fn ok(src: &str) -> Model {
    let r = compile(src);
    assert!(
        !r.has_errors(),
        "expected no errors:\n{}",
        r.render_terminal(false)
    );
    r.model.unwrap()
}

#[track_caller]
fn fails(src: &str, code: Code) {
    let e = errors(src);
    assert!(e.contains(&code), "expected {code} in {e:?} for:\n{src}");
}

fn files(files: &[(&str, &str)], root: &str) -> Compilation {
    let bytes: Vec<(&str, &[u8])> = files.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    Compiler::new().compile_in_memory(&bytes, &[root])
}

fn def<'m>(model: &'m Model, fqn: &str) -> &'m Definition {
    model
        .find(fqn)
        .unwrap_or_else(|| panic!("no definition {fqn}"))
}

fn const_value(model: &Model, name: &str) -> Value {
    match &def(model, name).body {
        DefBody::Const(c) => c.value.clone(),
        _ => panic!("{name} is not a constant"),
    }
}

// ---- enums ----------------------------------------------------------------------------

#[test]
fn enum_needs_zero() {
    ok("enum E { A = 0; B = 1; }");
    fails("enum E { A = 1; B = 2; }", Code::E050);
    fails(
        "import \"bebop/decorators.bop\"\n@flags enum F { A = 1; B = 2; }",
        Code::E050,
    );
}

#[test]
fn enum_values_unique_unless_flags() {
    fails("enum E { A = 0; B = 1; C = 1; }", Code::E051);
    ok(
        "import \"bebop/decorators.bop\"\n@flags enum F { N = 0; A = 1; B = 2; AB = 3; ALL = A | B; }",
    );
}

#[test]
fn enum_values_in_base_range_and_sign_extended() {
    fails("enum E : uint8 { A = 0; B = 256; }", Code::E053);
    fails("enum E : int8 { A = 0; B = -129; }", Code::E053);
    fails("enum E : uint32 { A = 0; B = -1; }", Code::E053);
    fails("enum E : int128 { A = 0; }", Code::E052);
    let m = ok(
        "enum E : int16 { A = 0; B = -2; C = 0x7FFF; }\nenum U : uint64 { Z = 0; BIG = 0xFFFFFFFFFFFFFFFF; }",
    );
    let DefBody::Enum(e) = &def(&m, "E").body else {
        panic!()
    };
    assert_eq!(e.base, ScalarType::Int16);
    assert_eq!(e.members[1].value, u64::MAX - 1);
    assert_eq!(e.members[2].value, 0x7FFF);
    let DefBody::Enum(u) = &def(&m, "U").body else {
        panic!()
    };
    assert_eq!(u.members[1].value, u64::MAX);
    let m = ok("enum D { A = 0; B = A + 4 >> 1; }");
    let DefBody::Enum(d) = &def(&m, "D").body else {
        panic!()
    };
    assert_eq!(d.base, ScalarType::Uint32);
    assert_eq!(d.members[1].value, 2);
    assert_eq!(d.members[1].value_expr.as_deref(), Some("A + 4 >> 1"));
    assert_eq!(d.members[0].value_expr, None);
}

// ---- structs and messages -------------------------------------------------------------

#[test]
fn message_tags_unique_and_in_range() {
    ok("message M { a(1): int32; b(255): int32; }");
    fails("message M { a(1): int32; b(1): int32; }", Code::E055);
    fails("message M { a(0): int32; }", Code::E054);
    fails("message M { a(256): int32; }", Code::E054);
}

#[test]
fn member_names_unique() {
    fails("struct S { a: int32; a: bool; }", Code::E044);
    fails("message M { a(1): int32; a(2): bool; }", Code::E044);
    fails("enum E { A = 0; A = 1; }", Code::E044);
    fails("union U { A(1): {}; A(2): {}; }", Code::E044);
    fails("struct R {}\nservice S { M(R): R; M(R): R; }", Code::E044);
    fails(
        "#decorator(d) { targets = ALL param a?: int32 param a?: bool }",
        Code::E044,
    );
    fails("struct A {}\nenum A { Z = 0; }", Code::E043);
    fails("struct A { struct B {} enum B { Z = 0; } }", Code::E043);
}

#[test]
fn keywords_as_field_names() {
    ok(
        "struct S { service: int32; const: int32; map: int32; stream: int32; import: int32; package: int32; local: int32; export: int32; edition: int32; true: bool; array: int32; }",
    );
    for kw in ["enum", "struct", "message", "union", "mut", "with"] {
        assert_eq!(
            errors(&format!("struct S {{ {kw}: int32; }}")),
            vec![Code::E011],
            "'{kw}' should not be a field name"
        );
        assert_eq!(
            errors(&format!("message M {{ {kw}(1): int32; }}")),
            vec![Code::E011]
        );
    }
    ok("enum E { message = 0; struct = 1; }");
    fails("struct service {}", Code::E011);
}

#[test]
fn structs_cannot_contain_themselves() {
    fails("struct A { a: A; }", Code::E061);
    fails("struct A { b: B; }\nstruct B { a: A; }", Code::E061);
    fails("struct A { b: B[2]; }\nstruct B { a: A[3]; }", Code::E061);
    ok("struct A { a: A[]; m: map[string, A]; }");
    ok("struct A { m: M; }\nmessage M { a(1): A; }");
    ok("struct A { u: U; }\nunion U { X(1): { a: A[]; }; }");
    ok("message T { children(1): T[]; parent(2): T; }");
}

#[test]
fn fixed_sizes() {
    let m = ok("enum E : uint16 { Z = 0; }\n\
                struct P { x: float32; y: float32; }\n\
                struct S { p: P; e: E; h: byte[16]; t: int32[2][3]; b: bool; d: duration; u: uuid; }\n\
                struct V { s: string; }\n\
                struct W { p: P[]; }\n\
                struct Empty {}\n\
                struct HasEmpty { e: Empty; x: int32; }");
    let size = |n: &str| match &def(&m, n).body {
        DefBody::Struct(s) => s.fixed_size,
        _ => panic!(),
    };
    assert_eq!(size("P"), 8);
    assert_eq!(size("S"), 8 + 2 + 16 + 24 + 1 + 12 + 16);
    assert_eq!(size("V"), 0);
    assert_eq!(size("W"), 0);
    assert_eq!(size("Empty"), 0);
    assert_eq!(size("HasEmpty"), 0);
}

#[test]
fn fixed_array_sizes() {
    ok("struct S { a: byte[1]; b: byte[65535]; }");
    fails("struct S { a: byte[0]; }", Code::E062);
    fails("struct S { a: byte[65536]; }", Code::E062);
    fails("struct S { a: byte[0x1_0]; }", Code::E062);
}

#[test]
fn map_keys() {
    ok(
        "struct S { a: map[bool, int32]; b: map[int128, int32]; c: map[uuid, string]; d: map[string, map[uint8, bool]]; }",
    );
    for key in [
        "float32",
        "float64",
        "timestamp",
        "duration",
        "bool[]",
        "map[string, int32]",
        "E",
        "T",
    ] {
        fails(
            &format!("enum E {{ Z = 0; }}\nstruct T {{}}\nstruct S {{ m: map[{key}, int32]; }}"),
            Code::E060,
        );
    }
}

// ---- unions ---------------------------------------------------------------------------

#[test]
fn union_rules() {
    let m = ok(
        "struct P {}\nmessage Q {}\nunion U { A(1): {}; B(255): mut { x: int32; }; C(2): message { y(1): bool; }; D(3): P; E(4): Q; }",
    );
    let DefBody::Union(u) = &def(&m, "U").body else {
        panic!()
    };
    assert_eq!(u.branches.len(), 5);
    assert!(matches!(&u.branches[0].target, BranchTarget::Inline { fqn, .. } if fqn == "U.A"));
    assert!(matches!(&u.branches[3].target, BranchTarget::Reference { fqn, .. } if fqn == "P"));
    assert_eq!(def(&m, "U").nested.len(), 3);
    fails("union U { A(1): {}; B(1): {}; }", Code::E057);
    fails("union U { A(0): {}; }", Code::E056);
    fails("union U { }", Code::E058);
    fails("union V { A(1): {}; }\nunion U { B(1): V; }", Code::E059);
    fails("enum E { Z = 0; }\nunion U { B(1): E; }", Code::E059);
    fails("union U { B(1): int32; }", Code::E059);
    fails("union U { B(1): union { C(1): {}; }; }", Code::E059);
}

#[test]
fn union_internal_types() {
    ok("union U { A(1): { x: int32; }; B(2): { a: A; }; }");
    fails("union U { A(1): {}; }\nstruct S { a: A; }", Code::E040);
    fails("union U { A(1): {}; }\nstruct S { a: U.A; }", Code::E042);
    ok("union U { export A(1): {}; }\nstruct S { a: U.A; }");
}

// ---- services -------------------------------------------------------------------------

#[test]
fn services() {
    let m = ok("struct R {}\nmessage Q {}\nunion U { A(1): {}; }\n\
                service Base { Get(R): Q; }\n\
                service S with Base { A(R): Q; B(stream Q): U; C(U): stream R; D(stream R): stream R; }");
    let DefBody::Service(s) = &def(&m, "S").body else {
        panic!()
    };
    assert_eq!(s.methods.len(), 4, "mixin methods are not copied");
    assert_eq!(s.mixins.len(), 1);
    let kinds: Vec<MethodKind> = s.methods.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        vec![
            MethodKind::Unary,
            MethodKind::ClientStream,
            MethodKind::ServerStream,
            MethodKind::DuplexStream
        ]
    );
    assert_eq!(s.methods[0].id, bebop_core::method_id("/S/A"));
    fails("service S { M(int32): int32; }", Code::E070);
    fails("enum E { Z = 0; }\nservice S { M(E): E; }", Code::E070);
    fails("struct R {}\nservice S { M(R[]): R; }", Code::E070);
    fails("struct R {}\nservice S with R { M(R): R; }", Code::E072);
    fails(
        "struct R {}\nservice A with B { X(R): R; }\nservice B with A { Y(R): R; }",
        Code::E073,
    );
    fails(
        "struct R {}\nservice A { X(R): R; }\nservice B with A { X(R): R; }",
        Code::E074,
    );
    fails(
        "struct R {}\nservice A { X(R): R; }\nservice C { X(R): R; }\nservice B with A, C { Y(R): R; }",
        Code::E074,
    );
    // Diamonds are fine.
    ok(
        "struct R {}\nservice D { X(R): R; }\nservice A with D {}\nservice C with D {}\nservice B with A, C { Y(R): R; }",
    );
    fails(
        "struct R {}\nconst int32 C = 1;\nstruct S { r: C; }",
        Code::E045,
    );
}

#[test]
fn method_id_collisions() {
    assert_eq!(
        bebop_core::method_id("/S/M82190"),
        bebop_core::method_id("/S/M109893")
    );
    fails(
        "struct R {}\nservice S { M82190(R): R; M109893(R): R; }",
        Code::E071,
    );
    ok("struct R {}\nservice T { M82190(R): R; M109893(R): R; }");
}

// ---- constants and literal forms ------------------------------------------------------

#[test]
fn constant_types() {
    ok("const byte[] B = b\"\\x89PNG\";");
    fails("struct S {}\nconst S X = 1;", Code::E063);
    fails("const int32[] X = 1;", Code::E063);
    fails("const map[string, int32] X = 1;", Code::E063);
}

#[test]
fn integer_literals() {
    let m = ok(
        "const byte A = 0xFF;\nconst int32 B = -2147483648;\nconst uint64 C = 18446744073709551615;\n\
                const int128 D = -170141183460469231731687303715884105728;\n\
                const uint128 E = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF;\nconst int64 F = 9223372036854775807;",
    );
    assert_eq!(const_value(&m, "A"), Value::UInt(255));
    assert_eq!(const_value(&m, "B"), Value::Int(-2147483648));
    assert_eq!(const_value(&m, "C"), Value::UInt(u64::MAX as u128));
    assert_eq!(const_value(&m, "D"), Value::Int(i128::MIN));
    assert_eq!(const_value(&m, "E"), Value::UInt(u128::MAX));
    fails("const byte A = 256;", Code::E021);
    fails("const int8 A = -129;", Code::E021);
    fails("const uint16 A = -1;", Code::E021);
    fails("const int32 A = 2147483648;", Code::E021);
    fails("const uint64 A = 18446744073709551616;", Code::E021);
    fails(
        "const uint128 A = 999999999999999999999999999999999999999999999999;",
        Code::E021,
    );
    fails("const int32 A = 1.5;", Code::E023);
    fails("const int32 A = 12abc;", Code::E020);
    fails("const int32 A = \"1\";", Code::E023);
}

#[test]
fn float_literals() {
    let m = ok(
        "const float64 A = 1.23e10;\nconst float64 B = -inf;\nconst float32 C = nan;\n\
                const float64 D = 42;\nconst float16 E = 65504;\nconst bfloat16 F = -1.5;",
    );
    assert_eq!(const_value(&m, "A"), Value::Float(1.23e10));
    assert_eq!(const_value(&m, "B"), Value::Float(f64::NEG_INFINITY));
    assert!(matches!(const_value(&m, "C"), Value::Float(f) if f.is_nan()));
    assert_eq!(const_value(&m, "D"), Value::Float(42.0));
    fails("const float16 A = 70000;", Code::E022);
    fails("const float32 A = 1e40;", Code::E022);
    fails("const float64 A = true;", Code::E023);
}

#[test]
fn string_literals() {
    let m = ok(
        "const string A = \"tab\\tnul\\0end\";\nconst string B = 'It''s';\n\
                const string C = \"He said \"\"hi\"\"\";\nconst string D = \"line one\nline two\";\n\
                const string E = \"\\u{1F600}\";\nconst string F = \"host=$(HOST);\";\nconst string G = \"\";",
    );
    let s = |n: &str| const_value(&m, n);
    assert_eq!(
        s("A"),
        Value::String {
            value: "tab\tnul\0end".into(),
            raw: None
        }
    );
    assert_eq!(s("B").as_str(), Some("It's"));
    assert_eq!(s("C").as_str(), Some("He said \"hi\""));
    assert_eq!(s("D").as_str(), Some("line one\nline two"));
    assert_eq!(s("E").as_str(), Some("😀"));
    assert_eq!(
        s("F"),
        Value::String {
            value: "host=example.org;".into(),
            raw: Some("host=$(HOST);".into())
        }
    );
    fails("const string A = \"$(NOT_SET_ANYWHERE)\";", Code::E027);
    fails("const string A = \"$(HOST\";", Code::E028);
    fails("const string A = \"\\u{D800}\";", Code::E005);
    fails("const string A = \"\\x41\";", Code::E005);
    fails("const string A = \"open", Code::E004);
    fails("const string A = b\"bytes\";", Code::E023);
}

#[test]
fn uuid_timestamp_duration_bytes() {
    let m = ok("const uuid A = \"550e8400-e29b-41d4-a716-446655440000\";\n\
                const guid B = \"550E8400E29B41D4A716446655440000\";\n\
                const timestamp T = \"2024-02-29T12:00:00.123456789+12:00:01.133\";\n\
                const duration D = \"1h30m45s500ms\";\nconst duration E = \"1.5s\";\n\
                const duration F = \"10us\";\nconst byte[] G = b\"\\x00\\xff\\n\";");
    let Value::Uuid(a) = const_value(&m, "A") else {
        panic!()
    };
    assert_eq!(a.as_bytes()[..4], [0x55, 0x0e, 0x84, 0x00]);
    assert_eq!(const_value(&m, "B"), Value::Uuid(a));
    let Value::Timestamp(t) = const_value(&m, "T") else {
        panic!()
    };
    assert_eq!(t.offset_ms(), 43_201_133);
    // 123_456_789 ns minus the offset's 133 ms, borrowing a second.
    assert_eq!(t.nanos(), 990_456_789);
    let Value::Duration(d) = const_value(&m, "D") else {
        panic!()
    };
    assert_eq!((d.seconds(), d.nanos()), (5445, 500_000_000));
    let Value::Duration(e) = const_value(&m, "E") else {
        panic!()
    };
    assert_eq!((e.seconds(), e.nanos()), (1, 500_000_000));
    let Value::Duration(f) = const_value(&m, "F") else {
        panic!()
    };
    assert_eq!(f.as_nanos(), 10_000);
    assert_eq!(const_value(&m, "G"), Value::Bytes(vec![0, 0xff, b'\n']));
    fails("const uuid A = \"not-a-uuid\";", Code::E024);
    fails("const timestamp A = \"2023-02-29T00:00:00Z\";", Code::E025);
    fails("const timestamp A = \"2024-01-01T00:00:00\";", Code::E025);
    fails("const duration A = \"5 minutes\";", Code::E026);
    fails("const duration A = 5;", Code::E023);
    fails("const byte[] A = b\"\\xZZ\";", Code::E005);
}

// ---- header, imports, visibility ------------------------------------------------------

#[test]
fn file_order() {
    ok("edition = \"2026\"\npackage a.b\nimport \"bebop/empty.bop\"\nstruct S { e: bebop.Empty; }");
    assert_eq!(
        warnings("struct S {}\nimport \"bebop/empty.bop\""),
        vec![Code::W001]
    );
    fails("import \"bebop/empty.bop\"\npackage p", Code::E015);
    fails("struct S {}\npackage p", Code::E016);
    fails("package p\nedition = \"2026\"", Code::E014);
    fails("edition = \"1999\"", Code::E013);
}

#[test]
fn packages_and_fully_qualified_names() {
    let r = files(
        &[
            (
                "app.bop",
                "package my.app\nimport \"lib/types.bop\"\nstruct Box { p: geo.Point; q: Point; n: geo.Shape.Corner; }\nstruct Point { z: int32; }",
            ),
            (
                "lib/types.bop",
                "package geo\nstruct Point { x: int32; }\nstruct Shape { export struct Corner { p: Point; } }",
            ),
        ],
        "app.bop",
    );
    assert!(!r.has_errors(), "{}", r.render_terminal(false));
    let m = r.model.unwrap();
    assert_eq!(m.schemas.len(), 2);
    assert_eq!(m.schemas[1].path, "lib/types.bop");
    assert!(!m.schemas[1].is_root);
    let DefBody::Struct(b) = &def(&m, "my.app.Box").body else {
        panic!()
    };
    let fqns: Vec<String> = b.fields.iter().map(|f| f.ty.to_string()).collect();
    assert_eq!(fqns, vec!["geo.Point", "my.app.Point", "geo.Shape.Corner"]);
    assert_eq!(
        def(&m, "geo.Shape.Corner").parent,
        Some(def(&m, "geo.Shape").id)
    );
}

#[test]
fn imports_resolution() {
    let ambiguous = files(
        &[
            (
                "main.bop",
                "import \"a.bop\"\nimport \"b.bop\"\nstruct S { t: T; }",
            ),
            ("a.bop", "package a\nstruct T {}"),
            ("b.bop", "package b\nstruct T {}"),
        ],
        "main.bop",
    );
    assert_eq!(ambiguous.errors().next().map(|d| d.code), Some(Code::E041));
    let qualified = files(
        &[
            (
                "main.bop",
                "import \"a.bop\"\nimport \"b.bop\"\nstruct S { t: a.T; u: b.T; }",
            ),
            ("a.bop", "package a\nstruct T {}"),
            ("b.bop", "package b\nstruct T {}"),
        ],
        "main.bop",
    );
    assert!(
        !qualified.has_errors(),
        "{}",
        qualified.render_terminal(false)
    );
    let cycle = files(
        &[
            ("a.bop", "import \"b.bop\"\nstruct A { b: B[]; }"),
            ("b.bop", "import \"a.bop\"\nstruct B { a: A[]; }"),
        ],
        "a.bop",
    );
    assert!(!cycle.has_errors(), "{}", cycle.render_terminal(false));
    assert_eq!(cycle.model.unwrap().schemas.len(), 2);
    let not_imported = files(
        &[
            ("a.bop", "import \"b.bop\"\nstruct A { c: C; }"),
            ("b.bop", "import \"c.bop\"\nstruct B {}"),
            ("c.bop", "struct C {}"),
        ],
        "a.bop",
    );
    let e = not_imported.errors().next().unwrap();
    assert_eq!(e.code, Code::E040);
    assert!(e.notes.iter().any(|n| n.contains("c.bop")), "{:?}", e.notes);
    fails("import \"../x.bop\"", Code::E032);
    fails("import \"/etc/x.bop\"", Code::E032);
    fails("import \"missing.bop\"", Code::E031);
    let dup = files(
        &[
            ("a.bop", "import \"b.bop\"\nimport \"./b.bop\""),
            ("b.bop", ""),
        ],
        "a.bop",
    );
    assert_eq!(
        dup.warnings().map(|d| d.code).collect::<Vec<_>>(),
        vec![Code::W006]
    );
    let same_fqn = files(
        &[
            ("a.bop", "import \"b.bop\"\npackage p\nstruct X {}"),
            ("b.bop", "package p\nstruct X {}"),
        ],
        "a.bop",
    );
    assert!(same_fqn.errors().any(|d| d.code == Code::E043));
}

#[test]
fn standard_schemas_import_without_include_dirs() {
    let m = ok(
        "import \"bebop/rpc.bop\"\nimport \"bebop/any.bop\"\nimport \"bebop/json.bop\"\n\
                struct S { c: bebop.CallHeader; a: bebop.Any; v: bebop.Value; }",
    );
    assert!(
        m.schemas
            .iter()
            .any(|s| s.path == "bebop/rpc.bop" && s.is_builtin)
    );
    let m = ok("import \"bebop/plugin.bop\"\nstruct S { r: bebop.CodeGeneratorRequest; }");
    let DefBody::Enum(t) = &def(&m, "bebop.TypeKind").body else {
        panic!()
    };
    assert_eq!(t.members.len(), 24);
    let DefBody::Enum(d) = &def(&m, "bebop.DecoratorTarget").body else {
        panic!()
    };
    assert!(d.is_flags);
    assert_eq!(d.members.last().map(|m| m.value), Some(255));
    let DefBody::Message(l) = &def(&m, "bebop.LiteralValue").body else {
        panic!()
    };
    assert_eq!(
        l.fields.last().map(|f| (f.name.as_str(), f.index)),
        Some(("duration_value", 10))
    );
}

#[test]
fn visibility() {
    let r = files(
        &[
            ("a.bop", "import \"b.bop\"\nstruct A { x: Hidden; }"),
            ("b.bop", "local struct Hidden {}"),
        ],
        "a.bop",
    );
    assert_eq!(r.errors().next().map(|d| d.code), Some(Code::E042));
    let r = files(
        &[
            (
                "a.bop",
                "import \"b.bop\"\nstruct A { x: Outer.In; y: Outer.Out; }",
            ),
            (
                "b.bop",
                "struct Outer { struct In {} export struct Out {} }",
            ),
        ],
        "a.bop",
    );
    let codes: Vec<Code> = r.errors().map(|d| d.code).collect();
    assert_eq!(codes, vec![Code::E042]);
    // Same file: nested definitions are usable anywhere.
    let m = ok(
        "struct Outer { struct In {} }\nstruct A { x: Outer.In; }\nlocal struct L {}\nstruct B { l: L; }",
    );
    assert_eq!(def(&m, "Outer.In").visibility, Visibility::Default);
    assert_eq!(def(&m, "L").visibility, Visibility::Local);
    assert_eq!(warnings("export struct S {}"), vec![Code::W002]);
    assert_eq!(warnings("struct S { local struct T {} }"), vec![Code::W002]);
}

#[test]
fn invalid_utf8_is_rejected() {
    let r =
        Compiler::new().compile_in_memory(&[("bad.bop", b"struct S {}\n\xff\xfe")], &["bad.bop"]);
    let first = r.diagnostics.first().unwrap();
    assert_eq!(first.code, Code::E001);
    assert_eq!(
        r.sources.line_col(first.span.source, first.span.start).line,
        2
    );
}

/// Invalid UTF-8 inside a comment (line or block, doc or not) is an error too
/// (docs/decisions.md D22), at the comment's line.
#[test]
fn invalid_utf8_in_comments_is_rejected() {
    for text in [
        &b"struct S {}\n// caf\xe9\n"[..],
        &b"struct S {}\n/* caf\xe9 */\n"[..],
        &b"/// caf\xe9\nstruct S {}\n"[..],
    ] {
        let r = Compiler::new().compile_in_memory(&[("bad.bop", text)], &["bad.bop"]);
        let first = r.diagnostics.first().expect("an error");
        assert_eq!(first.code, Code::E001, "{text:?}");
        let line = r.sources.line_col(first.span.source, first.span.start).line;
        assert_eq!(
            line,
            if text.starts_with(b"///") { 1 } else { 2 },
            "{text:?}"
        );
    }
}

#[test]
fn deprecated_aliases_and_readonly() {
    assert_eq!(
        warnings("struct S { a: uint8; b: guid; c: half; d: bf16; e: sbyte; f: uint8; }").len(),
        5
    );
    assert_eq!(warnings("readonly struct S {}"), vec![Code::W004]);
    fails("readonly enum E { Z = 0; }", Code::E018);
    fails("mut message M {}", Code::E018);
}

// ---- decorators -----------------------------------------------------------------------

const DECS: &str = "import \"bebop/decorators.bop\"\n";

#[test]
fn builtin_decorators() {
    let m = ok(&format!(
        "{DECS}@deprecated(\"old\") struct S {{}}\nmessage M {{ @deprecated a(1): int32; }}\n\
         @forward_compatible enum E {{ @deprecated(reason: \"x\") Z = 0; }}\n\
         union U {{ @deprecated A(1): {{}}; }}\nservice V {{ @deprecated X(S): S; }}"
    ));
    let s = def(&m, "S");
    assert_eq!(s.decorators[0].name, "deprecated");
    assert_eq!(s.decorators[0].fqn, "bebop.deprecated");
    assert_eq!(s.decorators[0].args[0].name, "reason");
    assert_eq!(s.decorators[0].args[0].value.as_str(), Some("old"));
    fails("@deprecated struct S {}", Code::E080);
    fails(
        &format!("{DECS}struct S {{ @deprecated a: int32; }}"),
        Code::E090,
    );
    fails(&format!("{DECS}@flags struct S {{}}"), Code::E081);
    fails(
        &format!("{DECS}@forward_compatible struct S {{}}"),
        Code::E081,
    );
    fails(&format!("{DECS}@deprecated const int32 X = 1;"), Code::E081);
    fails(
        &format!("{DECS}@deprecated @deprecated struct S {{}}"),
        Code::E087,
    );
    fails(&format!("{DECS}@deprecated(1) struct S {{}}"), Code::E084);
    fails(
        &format!("{DECS}@deprecated(\"a\", \"b\") struct S {{}}"),
        Code::E086,
    );
    fails(
        &format!("{DECS}@deprecated(why: \"a\") struct S {{}}"),
        Code::E082,
    );
    fails(
        &format!("{DECS}struct Flags {{}}\n@Flags struct S {{}}"),
        Code::E080,
    );
}

const RANGE: &str = "#decorator(range) {\n targets = FIELD | MEMBER\n multiple = true\n param min!: int32\n param max?: int32 = 100\n param mode?: string in [\"strict\", \"lenient\"]\n}\n";

#[test]
fn user_decorators() {
    let m = ok(&format!(
        "{RANGE}struct S {{ @range(1) a: int32; @range(min: 0, max: 5, mode: \"strict\") @range(2) b: int32; }}\n\
         enum E {{ @range(0) Z = 0; }}"
    ));
    let DefBody::Struct(s) = &def(&m, "S").body else {
        panic!()
    };
    assert_eq!(s.fields[1].decorators.len(), 2);
    let args: Vec<(&str, Value)> = s.fields[1].decorators[0]
        .args
        .iter()
        .map(|a| (a.name.as_str(), a.value.clone()))
        .collect();
    assert_eq!(args[0], ("min", Value::Int(0)));
    assert_eq!(args[2].1.as_str(), Some("strict"));
    let DefBody::Decorator(d) = &def(&m, "range").body else {
        panic!()
    };
    assert_eq!(d.targets, DecoratorTargets::FIELD);
    assert!(d.allow_multiple);
    assert_eq!(d.params[1].default, Some(Value::Int(100)));
    assert_eq!(d.params[2].allowed_values.len(), 2);
    fails(
        &format!("{RANGE}struct S {{ @range a: int32; }}"),
        Code::E083,
    );
    fails(
        &format!("{RANGE}struct S {{ @range(1, mode: \"loose\") a: int32; }}"),
        Code::E085,
    );
    fails(
        &format!("{RANGE}struct S {{ @range(\"1\") a: int32; }}"),
        Code::E084,
    );
    fails(
        &format!("{RANGE}struct S {{ @range(1, min: 2) a: int32; }}"),
        Code::E086,
    );
    fails(&format!("{RANGE}@range(1) struct S {{}}"), Code::E081);
    fails(
        "#decorator(d) { targets = ALL param a!: int32 = 3 }",
        Code::E088,
    );
    fails(
        "#decorator(d) { targets = ALL param a?: int32 = \"x\" }",
        Code::E023,
    );
    fails(
        "#decorator(d) { targets = ALL param a?: string = \"z\" in [\"x\", \"y\"] }",
        Code::E088,
    );
    fails("#decorator(d) { param a?: int32 }", Code::E088);
    fails("struct S { #decorator(d) { targets = ALL } }", Code::E019);
}

#[test]
fn qualified_and_ambiguous_decorators() {
    let lib_a = "package va\n#decorator(check) { targets = ALL }";
    let lib_b = "package vb\n#decorator(check) { targets = ALL }";
    let r = files(
        &[
            (
                "m.bop",
                "import \"a.bop\"\nimport \"b.bop\"\n@check struct S {}",
            ),
            ("a.bop", lib_a),
            ("b.bop", lib_b),
        ],
        "m.bop",
    );
    assert_eq!(r.errors().next().map(|d| d.code), Some(Code::E041));
    let r = files(
        &[
            (
                "m.bop",
                "import \"a.bop\"\nimport \"b.bop\"\n@va.check @vb.check struct S {}",
            ),
            ("a.bop", lib_a),
            ("b.bop", lib_b),
        ],
        "m.bop",
    );
    assert!(!r.has_errors(), "{}", r.render_terminal(false));
    let m = r.model.unwrap();
    let names: Vec<(&str, &str)> = def(&m, "S")
        .decorators
        .iter()
        .map(|d| (d.name.as_str(), d.fqn.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![("va.check", "va.check"), ("vb.check", "vb.check")]
    );
}

/// A runtime that records calls, rejects `bad` and exports the argument count.
#[derive(Clone, Default)]
struct Recorder {
    calls: Rc<RefCell<Vec<String>>>,
}

impl DecoratorRuntime for Recorder {
    fn run(&self, call: &DecoratorCall<'_>) -> DecoratorOutcome {
        self.calls.borrow_mut().push(format!(
            "{}:{}:{}:{:?}",
            call.definition.name,
            call.target.kind.as_str(),
            call.target.name,
            call.target.parent_kind
        ));
        let mut out = DecoratorOutcome {
            export: vec![(
                "args".to_string(),
                Value::Int(call.usage.args.len() as i128),
            )],
            ..Default::default()
        };
        if call.target.name == "bad" {
            out.messages.push(DecoratorMessage {
                severity: Severity::Error,
                message: "bad target".into(),
                span: call.usage.args.first().map(|a| a.span),
            });
        }
        if call.target.kind == TargetKind::Member {
            out.messages.push(DecoratorMessage {
                severity: Severity::Warning,
                message: "member".into(),
                span: None,
            });
        }
        out
    }
}

#[test]
fn decorator_runtime_hook() {
    let src = "#decorator(v) { targets = ALL param n?: int32 validate [[ return ]] export [[ return {} ]] }\n\
               #decorator(plain) { targets = ALL }\n\
               @v(1) struct good { @v x: int32; @plain y: int32; }\nstruct S { @v(2) bad: int32; }\nenum E { @v Z = 0; }";
    let rec = Recorder::default();
    let r = Compiler::new()
        .decorator_runtime(rec.clone())
        .compile_source("t.bop", src);
    let calls = rec.calls.borrow().clone();
    assert_eq!(
        calls,
        vec![
            "v:struct:good:None",
            "v:field:x:Some(Struct)",
            "v:field:bad:Some(Struct)",
            "v:member:Z:Some(Enum)"
        ]
    );
    let codes: Vec<Code> = r.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec![Code::E089, Code::W007]);
    assert_eq!(r.diagnostics[0].message, "bad target");
    // The default runtime reports nothing.
    let plain = Compiler::new().compile_source("t.bop", src);
    assert!(!plain.has_errors());
    let m = plain.model.unwrap();
    assert!(def(&m, "good").decorators[0].export_data.is_empty());
    let ok_src = "#decorator(v) { targets = ALL export [[ return {} ]] }\n@v struct A {}";
    let r = Compiler::new()
        .decorator_runtime(Recorder::default())
        .compile_source("t.bop", ok_src);
    let m = r.model.unwrap();
    assert_eq!(
        def(&m, "A").decorators[0].export_data,
        vec![("args".to_string(), Value::Int(0))]
    );
}

#[test]
fn documentation_is_attached() {
    let m = ok(
        "/// The point.\n/// Second line.\nstruct P {\n  /// X coordinate.\n  x: float32;\n}\n\
                /** Block\n * doc */\nenum E { /// zero\n Z = 0; }\n\
                service S {\n /// ping\n Ping(P): P; }\nunion U {\n /// first\n A(1): {}; }\n\
                union V { /// trailing, not documentation\n B(1): {}; }",
    );
    assert_eq!(
        def(&m, "P").documentation.as_deref(),
        Some("The point.\nSecond line.")
    );
    let DefBody::Struct(p) = &def(&m, "P").body else {
        panic!()
    };
    assert_eq!(p.fields[0].documentation.as_deref(), Some("X coordinate."));
    assert_eq!(def(&m, "E").documentation.as_deref(), Some("Block\ndoc"));
    let DefBody::Union(u) = &def(&m, "U").body else {
        panic!()
    };
    assert_eq!(u.branches[0].documentation.as_deref(), Some("first"));
    assert_eq!(def(&m, "U.A").documentation.as_deref(), Some("first"));
    let DefBody::Service(sv) = &def(&m, "S").body else {
        panic!()
    };
    assert_eq!(sv.methods[0].documentation.as_deref(), Some("ping"));
    assert_eq!(def(&m, "V.B").documentation, None);
}

#[test]
fn standard_schemas_compile_without_any_diagnostic() {
    for (path, _) in bebopc::stdlib::STANDARD_SCHEMAS {
        let r = compile(&format!("import \"{path}\""));
        assert!(
            r.diagnostics.is_empty(),
            "{path}:\n{}",
            r.render_terminal(false)
        );
    }
    // Two standard schemas both define `bebop.MethodType` (as the reference's do).
    fails(
        "import \"bebop/rpc.bop\"\nimport \"bebop/descriptor.bop\"",
        Code::E043,
    );
}

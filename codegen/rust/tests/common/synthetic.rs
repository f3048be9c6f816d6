//! Descriptors built by hand for what the reference fixtures do not cover: the hand-written
//! model types of `tests/src/lib.rs` (so generated and hand-written code can be compared),
//! by-value recursion (`Lazy`/`Box`), `@forward_compatible` types, name collisions and
//! keywords, and consts of every type.
//!
//! The golden test writes their generated code to `tests/expected/extra/NAME.rs` and the
//! descriptors to `tests/expected/extra/NAME.desc.bin` (so other crates can drive tests from
//! them).

use bebop_descriptor::{
    DecoratorArg, DecoratorUsage, DefinitionDescriptor, DefinitionKind, DescriptorSet, EnumDef,
    EnumMemberDescriptor, FieldDescriptor, LiteralKind, LiteralValue, MessageDef, MethodDescriptor,
    MethodType, SchemaDescriptor, ServiceDef, StructDef, TypeDescriptor, TypeKind,
    UnionBranchDescriptor, UnionDef, Visibility,
};
use bebop_runtime::{Duration, Timestamp, Uuid};

/// Parses schema type text: `int32`, `string[]`, `byte[16]`, `map[string, int32[]]`,
/// `pkg.Name`.
pub fn ty(text: &str) -> TypeDescriptor {
    let text = text.trim();
    if let Some(rest) = text.strip_suffix(']') {
        // The last `[` at bracket depth 0 starts the suffix.
        let mut depth = 0;
        let mut open = None;
        for (i, c) in rest.char_indices().rev() {
            match c {
                ']' => depth += 1,
                '[' if depth == 0 => {
                    open = Some(i);
                    break;
                }
                '[' => depth -= 1,
                _ => {}
            }
        }
        let open = open.expect("balanced brackets");
        let (head, size) = (&rest[..open], &rest[open + 1..]);
        if head == "map" {
            let (k, v) = split_top_comma(size);
            return TypeDescriptor::map(ty(k), ty(v));
        }
        return if size.is_empty() {
            TypeDescriptor::array(ty(head))
        } else {
            TypeDescriptor::fixed_array(ty(head), size.parse().expect("fixed array size"))
        };
    }
    let kind = match text {
        "bool" => TypeKind::Bool,
        "byte" | "uint8" => TypeKind::Byte,
        "int8" => TypeKind::Int8,
        "int16" => TypeKind::Int16,
        "uint16" => TypeKind::Uint16,
        "int32" => TypeKind::Int32,
        "uint32" => TypeKind::Uint32,
        "int64" => TypeKind::Int64,
        "uint64" => TypeKind::Uint64,
        "int128" => TypeKind::Int128,
        "uint128" => TypeKind::Uint128,
        "float16" => TypeKind::Float16,
        "bfloat16" => TypeKind::Bfloat16,
        "float32" => TypeKind::Float32,
        "float64" => TypeKind::Float64,
        "string" => TypeKind::String,
        "uuid" | "guid" => TypeKind::Uuid,
        "timestamp" => TypeKind::Timestamp,
        "duration" => TypeKind::Duration,
        name => return TypeDescriptor::defined(name),
    };
    TypeDescriptor::scalar(kind)
}

fn split_top_comma(s: &str) -> (&str, &str) {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => return (&s[..i], &s[i + 1..]),
            _ => {}
        }
    }
    panic!("map without comma: {s}")
}

fn short(fqn: &str) -> String {
    fqn.rsplit('.').next().unwrap_or(fqn).to_string()
}

fn def(kind: DefinitionKind, fqn: &str) -> DefinitionDescriptor {
    DefinitionDescriptor {
        kind: Some(kind),
        name: Some(short(fqn)),
        fqn: Some(fqn.to_string()),
        visibility: Some(Visibility::Default),
        ..Default::default()
    }
}

fn usage(name: &str, reason: Option<&str>) -> DecoratorUsage {
    DecoratorUsage {
        fqn: Some(name.to_string()),
        args: reason.map(|r| {
            vec![DecoratorArg {
                name: "reason".into(),
                value: LiteralValue {
                    kind: Some(LiteralKind::String),
                    string_value: Some(r.into()),
                    ..Default::default()
                },
            }]
        }),
        export_data: None,
    }
}

/// Adds decorators and docs to a definition.
pub trait Decorate: Sized {
    fn decorators_mut(&mut self) -> &mut Option<Vec<DecoratorUsage>>;
    fn deprecated(mut self, reason: Option<&str>) -> Self {
        self.decorators_mut()
            .get_or_insert_with(Vec::new)
            .push(usage("deprecated", reason));
        self
    }
    fn forward_compatible(mut self) -> Self {
        self.decorators_mut()
            .get_or_insert_with(Vec::new)
            .push(usage("forward_compatible", None));
        self
    }
}

impl Decorate for DefinitionDescriptor {
    fn decorators_mut(&mut self) -> &mut Option<Vec<DecoratorUsage>> {
        &mut self.decorators
    }
}

impl Decorate for FieldDescriptor {
    fn decorators_mut(&mut self) -> &mut Option<Vec<DecoratorUsage>> {
        &mut self.decorators
    }
}

pub fn doc(mut d: DefinitionDescriptor, text: &str) -> DefinitionDescriptor {
    d.documentation = Some(text.into());
    d
}

pub fn field(name: &str, t: &str) -> FieldDescriptor {
    FieldDescriptor {
        name: Some(name.into()),
        r#type: Some(ty(t)),
        index: Some(0),
        ..Default::default()
    }
}

pub fn tagged(name: &str, tag: u32, t: &str) -> FieldDescriptor {
    FieldDescriptor {
        index: Some(tag),
        ..field(name, t)
    }
}

fn fields_opt(fields: Vec<FieldDescriptor>) -> Option<Vec<FieldDescriptor>> {
    (!fields.is_empty()).then_some(fields)
}

pub fn strukt(fqn: &str, fields: Vec<FieldDescriptor>) -> DefinitionDescriptor {
    DefinitionDescriptor {
        struct_def: Some(StructDef {
            fields: fields_opt(fields),
            is_mutable: Some(false),
            fixed_size: Some(0),
        }),
        ..def(DefinitionKind::Struct, fqn)
    }
}

pub fn message(fqn: &str, fields: Vec<FieldDescriptor>) -> DefinitionDescriptor {
    DefinitionDescriptor {
        message_def: Some(MessageDef {
            fields: fields_opt(fields),
        }),
        ..def(DefinitionKind::Message, fqn)
    }
}

/// A union branch: an inline definition (added to the union's nested definitions) or a
/// reference to a type.
#[allow(clippy::large_enum_variant)]
pub enum Branch {
    Inline(u8, DefinitionDescriptor),
    Ref(u8, &'static str, &'static str),
}

pub fn union(fqn: &str, branches: Vec<Branch>) -> DefinitionDescriptor {
    let mut nested = Vec::new();
    let mut out = Vec::new();
    for b in branches {
        match b {
            Branch::Inline(d, def) => {
                out.push(UnionBranchDescriptor {
                    discriminator: Some(d),
                    inline_fqn: def.fqn.clone(),
                    ..Default::default()
                });
                nested.push(def);
            }
            Branch::Ref(d, name, target) => out.push(UnionBranchDescriptor {
                discriminator: Some(d),
                type_ref_fqn: Some(target.into()),
                name: Some(name.into()),
                ..Default::default()
            }),
        }
    }
    DefinitionDescriptor {
        nested: (!nested.is_empty()).then_some(nested),
        union_def: Some(UnionDef {
            branches: Some(out),
        }),
        ..def(DefinitionKind::Union, fqn)
    }
}

pub fn with_nested(
    mut d: DefinitionDescriptor,
    nested: Vec<DefinitionDescriptor>,
) -> DefinitionDescriptor {
    d.nested.get_or_insert_with(Vec::new).extend(nested);
    d
}

pub fn enumeration(
    fqn: &str,
    base: TypeKind,
    members: &[(&str, i64)],
    flags: bool,
) -> DefinitionDescriptor {
    let mut d = DefinitionDescriptor {
        enum_def: Some(EnumDef {
            base_type: Some(base),
            members: Some(
                members
                    .iter()
                    .map(|(name, value)| EnumMemberDescriptor {
                        name: Some((*name).into()),
                        value: Some(*value as u64),
                        ..Default::default()
                    })
                    .collect(),
            ),
            is_flags: Some(flags),
        }),
        ..def(DefinitionKind::Enum, fqn)
    };
    if flags {
        d.decorators = Some(vec![usage("flags", None)]);
    }
    d
}

pub fn deprecate_member(
    mut d: DefinitionDescriptor,
    member: &str,
    reason: Option<&str>,
) -> DefinitionDescriptor {
    for m in d
        .enum_def
        .as_mut()
        .and_then(|e| e.members.as_mut())
        .into_iter()
        .flatten()
    {
        if m.name.as_deref() == Some(member) {
            m.decorators = Some(vec![usage("deprecated", reason)]);
        }
    }
    d
}

pub fn konst(fqn: &str, t: &str, value: LiteralValue) -> DefinitionDescriptor {
    DefinitionDescriptor {
        const_def: Some(bebop_descriptor::ConstDef {
            r#type: Some(ty(t)),
            value: Some(value),
        }),
        ..def(DefinitionKind::Const, fqn)
    }
}

pub fn service(fqn: &str, methods: &[(&str, &str, &str, MethodType)]) -> DefinitionDescriptor {
    let service = short(fqn);
    DefinitionDescriptor {
        service_def: Some(ServiceDef {
            methods: Some(
                methods
                    .iter()
                    .map(|(name, req, res, kind)| MethodDescriptor {
                        name: Some((*name).into()),
                        request_type: Some(ty(req)),
                        response_type: Some(ty(res)),
                        method_type: Some(*kind),
                        id: Some(bebop_runtime::method_id(&format!("/{service}/{name}"))),
                        ..Default::default()
                    })
                    .collect(),
            ),
        }),
        ..def(DefinitionKind::Service, fqn)
    }
}

pub fn schema(
    path: &str,
    package: Option<&str>,
    defs: Vec<DefinitionDescriptor>,
) -> SchemaDescriptor {
    SchemaDescriptor {
        path: Some(path.into()),
        package: package.map(Into::into),
        edition: Some(bebop_descriptor::Edition::Edition2026),
        imports: None,
        definitions: Some(defs),
        source_code_info: None,
    }
}

fn lit_int(v: i64) -> LiteralValue {
    LiteralValue {
        kind: Some(LiteralKind::Int),
        int_value: Some(v),
        ..Default::default()
    }
}

fn lit_float(v: f64) -> LiteralValue {
    LiteralValue {
        kind: Some(LiteralKind::Float),
        float_value: Some(v),
        ..Default::default()
    }
}

/// The synthetic schemas, by name.
pub fn all() -> Vec<(&'static str, DescriptorSet)> {
    vec![
        ("spec", set(spec())),
        ("recursion", set(recursion())),
        ("forward", set(forward())),
        ("naming", set(naming())),
        ("consts", set(consts())),
    ]
}

fn set(schema: SchemaDescriptor) -> DescriptorSet {
    DescriptorSet {
        schemas: Some(vec![schema]),
    }
}

/// The hand-written types of `tests/src/lib.rs`, exactly.
fn spec() -> SchemaDescriptor {
    schema(
        "spec.bop",
        None,
        vec![
            strukt("Point", vec![field("x", "float32"), field("y", "float32")]),
            message(
                "UserRequest",
                vec![
                    tagged("user_id", 1, "int32"),
                    tagged("include_profile", 2, "bool"),
                ],
            ),
            union(
                "Shape",
                vec![
                    Branch::Inline(1, strukt("Shape.Circle", vec![field("radius", "float32")])),
                    Branch::Inline(
                        2,
                        strukt(
                            "Shape.Rectangle",
                            vec![field("width", "float32"), field("height", "float32")],
                        ),
                    ),
                ],
            ),
            union(
                "Event",
                vec![
                    Branch::Inline(1, strukt("Event.Ping", vec![field("seq", "uint32")])),
                    Branch::Inline(2, message("Event.Text", vec![tagged("body", 1, "string")])),
                ],
            )
            .forward_compatible(),
            message(
                "TreeNode",
                vec![
                    tagged("value", 1, "int32"),
                    tagged("children", 2, "TreeNode[]"),
                ],
            ),
            message(
                "Chain",
                vec![tagged("value", 1, "int32"), tagged("next", 2, "Chain")],
            ),
            strukt(
                "Person",
                vec![
                    field("id", "int32"),
                    field("name", "string"),
                    field("email", "string"),
                    field("age", "int32"),
                ],
            ),
            strukt(
                "Embedding",
                vec![field("id", "uuid"), field("vector", "bfloat16[]")],
            ),
            enumeration(
                "Level",
                TypeKind::Byte,
                &[("Debug", 0), ("Info", 1), ("Warn", 2), ("Error", 3)],
                false,
            ),
            strukt("Empty", vec![]),
            strukt(
                "Log",
                vec![
                    field("level", "Level"),
                    field("tags", "map[string, string]"),
                    field("lines", "string[]"),
                    field("grid", "int32[][3]"),
                ],
            ),
        ],
    )
}

/// By-value recursion in every shape: through a message field, a struct field and a union.
fn recursion() -> SchemaDescriptor {
    schema(
        "recursion.bop",
        Some("rec"),
        vec![
            doc(
                message(
                    "rec.Chain",
                    vec![tagged("value", 1, "int32"), tagged("next", 2, "rec.Chain")],
                ),
                "A linked list: `next` is held lazily in views and boxed when owned.",
            ),
            strukt(
                "rec.Pair",
                vec![field("left", "rec.Node"), field("right", "int32")],
            ),
            message(
                "rec.Node",
                vec![tagged("pair", 1, "rec.Pair"), tagged("label", 2, "string")],
            ),
            union(
                "rec.Expr",
                vec![
                    Branch::Inline(1, strukt("rec.Expr.Lit", vec![field("value", "int64")])),
                    Branch::Inline(
                        2,
                        message(
                            "rec.Expr.Add",
                            vec![
                                tagged("left", 1, "rec.Expr"),
                                tagged("right", 2, "rec.Expr"),
                            ],
                        ),
                    ),
                    Branch::Ref(3, "Neg", "rec.Negation"),
                ],
            ),
            strukt("rec.Negation", vec![field("inner", "rec.Expr")]),
            message(
                "rec.Forest",
                vec![
                    tagged("trees", 1, "rec.Expr[]"),
                    tagged("named", 2, "map[string, rec.Chain]"),
                    tagged("rows", 3, "rec.Expr[][]"),
                    tagged("groves", 4, "map[string, rec.Expr[]]"),
                    tagged("layers", 5, "map[string, rec.Chain][]"),
                    tagged("atlas", 6, "map[string, map[int32, rec.Chain]]"),
                ],
            ),
        ],
    )
}

/// `@forward_compatible` enums, flags and unions; flags with signed bases; enum aliases.
fn forward() -> SchemaDescriptor {
    schema(
        "forward.bop",
        Some("fwd"),
        vec![
            enumeration(
                "fwd.Status",
                TypeKind::Byte,
                &[("Ok", 0), ("Failed", 1)],
                false,
            )
            .forward_compatible(),
            enumeration(
                "fwd.Code",
                TypeKind::Int16,
                &[("Low", -5), ("High", 7)],
                false,
            )
            .forward_compatible(),
            enumeration(
                "fwd.Perms",
                TypeKind::Uint16,
                &[("None", 0), ("Read", 1), ("Write", 2), ("Exec", 4)],
                true,
            )
            .forward_compatible(),
            enumeration(
                "fwd.Signed",
                TypeKind::Int8,
                &[("A", 1), ("B", 2), ("Sign", -128)],
                true,
            ),
            enumeration("fwd.Full", TypeKind::Byte, &[("All", 255)], true),
            enumeration(
                "fwd.Aliased",
                TypeKind::Uint32,
                &[("First", 1), ("Second", 2), ("Primary", 1)],
                false,
            ),
            union(
                "fwd.Event",
                vec![
                    Branch::Inline(1, strukt("fwd.Event.Ping", vec![field("seq", "uint32")])),
                    Branch::Inline(
                        2,
                        message("fwd.Event.Text", vec![tagged("body", 1, "string")]),
                    ),
                    Branch::Ref(3, "Unknown", "fwd.Holder"),
                ],
            )
            .forward_compatible(),
            strukt(
                "fwd.Holder",
                vec![
                    field("status", "fwd.Status"),
                    field("code", "fwd.Code"),
                    field("perms", "fwd.Perms"),
                    field("signed", "fwd.Signed"),
                    field("full", "fwd.Full"),
                    field("aliased", "fwd.Aliased"),
                    field("statuses", "fwd.Status[4]"),
                    field("perm_list", "fwd.Perms[]"),
                ],
            ),
            message(
                "fwd.Envelope",
                vec![
                    tagged("event", 1, "fwd.Event"),
                    tagged("events", 2, "fwd.Event[]"),
                    tagged("holder", 3, "fwd.Holder"),
                ],
            ),
        ],
    )
}

/// Keywords, names that collide after conversion, names of std types, deprecated types in
/// use, nested modules that collide with reserved ones.
fn naming() -> SchemaDescriptor {
    let deprecated_field = tagged("gone", 3, "int32").deprecated(Some("no longer sent"));
    schema(
        "naming.bop",
        Some("type.self"),
        vec![
            strukt(
                "type.self.type",
                vec![
                    field("type", "int32"),
                    field("self", "bool"),
                    field("fooBar", "string"),
                    field("foo_bar", "string"),
                    field("match", "byte[]"),
                ],
            ),
            strukt("type.self.Option", vec![field("some", "int32")]),
            strukt("type.self.String", vec![field("value", "string")]),
            message(
                "type.self.Vec",
                vec![
                    tagged("items", 1, "type.self.String[]"),
                    tagged("Self", 2, "type.self.Option"),
                    deprecated_field,
                ],
            ),
            union(
                "type.self.Result",
                vec![
                    Branch::Inline(
                        1,
                        strukt("type.self.Result.Ok", vec![field("value", "int32")]),
                    ),
                    Branch::Inline(
                        2,
                        message("type.self.Result.Err", vec![tagged("why", 1, "string")]),
                    ),
                    Branch::Ref(3, "ok", "type.self.Option"),
                    Branch::Ref(4, "Old", "type.self.Old"),
                ],
            ),
            enumeration(
                "type.self.Edition",
                TypeKind::Int32,
                &[
                    ("EDITION_2026", 1000),
                    ("edition2026", 2026),
                    ("MAX", 0x7fff_ffff),
                ],
                false,
            ),
            with_nested(
                strukt(
                    "type.self.Owned",
                    vec![field("inner", "type.self.Owned.Inner")],
                ),
                vec![strukt("type.self.Owned.Inner", vec![field("x", "int32")])],
            ),
            strukt("type.self.Old", vec![field("x", "int32")]).deprecated(Some("use New")),
            strukt(
                "type.self.UsesOld",
                vec![
                    field("old", "type.self.Old"),
                    field("olds", "type.self.Old[]"),
                ],
            ),
            deprecate_member(
                enumeration(
                    "type.self.Mode",
                    TypeKind::Byte,
                    &[("Fast", 0), ("Slow", 1)],
                    false,
                ),
                "Slow",
                None,
            ),
            konst("type.self.MAX", "int32", lit_int(5)),
            konst("type.self.max", "int32", lit_int(6)),
            service(
                "type.self.Api",
                &[
                    (
                        "Get",
                        "type.self.Option",
                        "type.self.String",
                        MethodType::Unary,
                    ),
                    (
                        "get",
                        "type.self.Old",
                        "type.self.Vec",
                        MethodType::ServerStream,
                    ),
                    (
                        "Put",
                        "type.self.Vec",
                        "type.self.Option",
                        MethodType::ClientStream,
                    ),
                    (
                        "Talk",
                        "type.self.Result",
                        "type.self.Result",
                        MethodType::DuplexStream,
                    ),
                    // Named like the methods the generator derives from `Get` (its owned
                    // client method and its async dispatch) and like the constructor.
                    (
                        "GetOwned",
                        "type.self.Option",
                        "type.self.String",
                        MethodType::Unary,
                    ),
                    (
                        "DispatchGet",
                        "type.self.Option",
                        "type.self.Option",
                        MethodType::Unary,
                    ),
                    (
                        "New",
                        "type.self.Option",
                        "type.self.Old",
                        MethodType::Unary,
                    ),
                ],
            ),
        ],
    )
}

/// A const of every type, with the awkward values: NaN payloads, negative zero, extremes.
fn consts() -> SchemaDescriptor {
    let string = |s: &str| LiteralValue {
        kind: Some(LiteralKind::String),
        string_value: Some(s.into()),
        ..Default::default()
    };
    schema(
        "consts.bop",
        None,
        vec![
            // A nested-definition module that collides with the reserved `owned` module.
            with_nested(
                strukt("Owned", vec![field("inner", "Owned.Inner")]),
                vec![strukt("Owned.Inner", vec![field("x", "int32")])],
            ),
            konst("MinI8", "int8", lit_int(-128)),
            konst("MaxU64", "uint64", lit_int(-1)),
            konst("MinI64", "int64", lit_int(i64::MIN)),
            konst(
                "Big128",
                "int128",
                LiteralValue {
                    raw_value: Some("-170141183460469231731687303715884105728".into()),
                    ..lit_int(0)
                },
            ),
            konst(
                "BigU128",
                "uint128",
                LiteralValue {
                    raw_value: Some("0xFFFF_FFFF_FFFF_FFFF_FFFF".into()),
                    ..lit_int(0)
                },
            ),
            konst("Pi", "float64", lit_float(std::f64::consts::PI)),
            konst("Tenth32", "float32", lit_float(0.1)),
            konst("NegZero", "float64", lit_float(-0.0)),
            konst(
                "Payload",
                "float64",
                lit_float(f64::from_bits(0x7ff8_0000_0000_0001)),
            ),
            konst("NegNan32", "float32", lit_float(-f64::NAN)),
            konst("Half", "float16", lit_float(1.5)),
            konst("BHalf", "bfloat16", lit_float(-2.0)),
            konst("Inf32", "float32", lit_float(f64::INFINITY)),
            konst(
                "Yes",
                "bool",
                LiteralValue {
                    kind: Some(LiteralKind::Bool),
                    bool_value: Some(true),
                    ..Default::default()
                },
            ),
            konst(
                "Quote",
                "string",
                string("tab\there \"quoted\" \\ and \u{0} nul"),
            ),
            konst(
                "Id",
                "uuid",
                LiteralValue {
                    kind: Some(LiteralKind::Uuid),
                    uuid_value: Some(Uuid::from_u128(0x550e8400_e29b_41d4_a716_446655440000)),
                    ..Default::default()
                },
            ),
            konst(
                "Bytes",
                "byte[]",
                LiteralValue {
                    kind: Some(LiteralKind::Bytes),
                    bytes_value: Some(vec![0, 1, 0xfe, b'"']),
                    ..Default::default()
                },
            ),
            konst(
                "When",
                "timestamp",
                LiteralValue {
                    kind: Some(LiteralKind::Timestamp),
                    timestamp_value: Some(
                        Timestamp::new(1_620_891_336, 123_456_789, -28_800_000).expect("valid"),
                    ),
                    ..Default::default()
                },
            ),
            konst(
                "Timeout",
                "duration",
                LiteralValue {
                    kind: Some(LiteralKind::Duration),
                    duration_value: Some(Duration::new(-1, -500_000_000).expect("valid")),
                    ..Default::default()
                },
            ),
        ],
    )
}

/// Two schemas for serde, type and field attributes and extern paths
/// (`tests/expected/variants/serde_common.rs` and `serde_app.rs`): `common.bop` (package
/// `common`) generated on its own, and `app.bop` (package `app`), which imports it, generated
/// with `.common` as an extern path. Every kind of type, every runtime value type, maps,
/// arrays (one of more than 32 elements), absent message fields, recursion and nesting.
pub fn serde_set() -> DescriptorSet {
    let common = schema(
        "common.bop",
        Some("common"),
        vec![
            strukt(
                "common.Stamp",
                vec![field("id", "uuid"), field("at", "timestamp")],
            ),
            message(
                "common.Label",
                vec![tagged("text", 1, "string"), tagged("color", 2, "uint32")],
            ),
        ],
    );
    let mut app = schema(
        "app.bop",
        Some("app"),
        vec![
            enumeration(
                "app.Level",
                TypeKind::Byte,
                &[("Debug", 0), ("Info", 1), ("Warn", 2)],
                false,
            ),
            enumeration(
                "app.Code",
                TypeKind::Uint16,
                &[("Ok", 0), ("Bad", 1)],
                false,
            )
            .forward_compatible(),
            enumeration(
                "app.Perms",
                TypeKind::Byte,
                &[("None", 0), ("Read", 1), ("Write", 2)],
                true,
            ),
            enumeration(
                "app.Bits",
                TypeKind::Uint16,
                &[("Low", 1), ("High", 256)],
                true,
            )
            .forward_compatible(),
            strukt(
                "app.Point",
                vec![
                    field("x", "float32"),
                    field("y", "float64"),
                    field("h", "float16"),
                    field("b", "bfloat16"),
                ],
            ),
            strukt(
                "app.Samples",
                vec![field("small", "int16[4]"), field("long", "int32[40]")],
            ),
            strukt(
                "app.Record",
                vec![
                    field("id", "uuid"),
                    field("at", "timestamp"),
                    field("took", "duration"),
                    field("name", "string"),
                    field("tags", "string[]"),
                    field("scores", "map[string, int32]"),
                    field("by_id", "map[uuid, app.Level]"),
                    field("perms", "app.Perms"),
                    field("level", "app.Level"),
                    field("point", "app.Point"),
                    field("grid", "byte[4]"),
                    field("blob", "byte[]"),
                    field("big", "uint128"),
                    field("neg", "int64"),
                    field("stamp", "common.Stamp"),
                    field("label", "common.Label"),
                ],
            ),
            message(
                "app.Event",
                vec![
                    tagged("level", 1, "app.Level"),
                    tagged("record", 2, "app.Record"),
                    tagged("note", 3, "string"),
                    tagged("code", 4, "app.Code"),
                    tagged("window", 5, "int16[40]"),
                    tagged("bits", 6, "app.Bits"),
                    tagged("labels", 7, "common.Label[]"),
                    tagged("old", 8, "int32").deprecated(Some("unused")),
                ],
            ),
            union(
                "app.Shape",
                vec![
                    Branch::Inline(
                        1,
                        strukt("app.Shape.Circle", vec![field("radius", "float32")]),
                    ),
                    Branch::Inline(
                        2,
                        message("app.Shape.Poly", vec![tagged("points", 1, "app.Point[]")]),
                    ),
                    Branch::Ref(3, "Stamped", "common.Stamp"),
                ],
            )
            .forward_compatible(),
            message(
                "app.Tree",
                vec![
                    tagged("value", 1, "int32"),
                    tagged("children", 2, "app.Tree[]"),
                    tagged("shape", 3, "app.Shape"),
                ],
            ),
            message(
                "app.Chain",
                vec![tagged("value", 1, "int32"), tagged("next", 2, "app.Chain")],
            ),
            with_nested(
                strukt("app.Outer", vec![field("inner", "app.Outer.Inner")]),
                vec![strukt("app.Outer.Inner", vec![field("text", "string")])],
            ),
        ],
    );
    app.imports = Some(vec!["common.bop".into()]);
    DescriptorSet {
        schemas: Some(vec![app, common]),
    }
}

//! Lowering the resolved [`Model`] to the compiled-schema format of `bebop/descriptor.bop`
//! ([`DescriptorSet`]) and to the plugin protocol's [`CodeGeneratorRequest`].
//!
//! The output matches the reference compiler byte for byte for the user's schemas (the
//! project's standard `bebop/*.bop` schemas carry their own doc comments, so theirs differ in
//! documentation only). What that takes, field by field:
//!
//! - Schemas: the files named by the user first, in the order given, then their imports
//!   breadth first (the [`Model`]'s order). `path` as given, `package` only when declared,
//!   `edition` always, `imports` as written (omitted when there are none).
//! - Definitions in source order, nested ones (inline union branches included) in their
//!   parent's `nested`. `kind`, `name`, `fqn` and `visibility` always (0 for a definition
//!   without a modifier, top-level or nested); `documentation` only when there is some;
//!   `decorators` and `nested` only when non-empty.
//! - Bodies: an enum writes `base_type`, its `members` (each with `value` as 64 bits; a
//!   negative value of a signed base is sign-extended) and `is_flags`; a struct its `fields`
//!   (each with `index` 0), `is_mutable` and `fixed_size` (0 when the size varies); a message
//!   its `fields` with their tags; a union its branches (`inline_fqn` for an inline branch,
//!   `type_ref_fqn` and `name` for a type reference); a service only its own methods (mixins
//!   leave no trace) with `method_type` and `id`; a constant its `type` and `value`; a
//!   decorator its `targets`, `allow_multiple`, `params` and Lua sources (only non-empty
//!   ones). `value_expr` is never written.
//! - Decorator usages carry the name as written after `@` in `fqn` (`flags`,
//!   `validators.range`), their arguments in source order named after their parameters,
//!   and `export_data` (when non-empty) in the order the [`crate::decorator`] runtime
//!   returned it.
//! - A literal writes `kind` and the one value field of that kind, even when zero or
//!   false. An empty byte string writes no `bytes_value` (as the reference). A string built
//!   with `$(VAR)` also writes `raw_value`. Integers are `int_value` (`i64`): a `uint64`
//!   above `i64::MAX` is stored as its two's-complement bits; a 128-bit value outside the 64-bit
//!   ranges keeps its low 64 bits in `int_value` and its exact decimal text in `raw_value`
//!   (the reference cannot express such literals).
//! - `source_code_info` only on request ([`DescriptorOptions::source_info`]; see
//!   [`crate::source_info`]).
//!
//! ```
//! use bebopc::Compiler;
//! use bebopc::descriptor::DescriptorOptions;
//!
//! let result = Compiler::new().compile_source("point.bop", "struct Point { x: float32; y: float32; }");
//! let set = result.descriptor_set(&DescriptorOptions::default()).expect("no errors");
//! let point = set.find_definition("Point").expect("defined");
//! assert_eq!(point.definition.name.as_deref(), Some("Point"));
//! let bytes = set.to_vec().expect("encodes");
//! assert_eq!(bebop_descriptor::DescriptorSet::from_bytes(&bytes).expect("decodes"), set);
//! ```

use bebop_descriptor as d;
use bebop_descriptor::{
    CodeGeneratorRequest, DefinitionDescriptor, DescriptorSet, SchemaDescriptor, TypeDescriptor,
    TypeKind,
};

use crate::model::{
    BranchTarget, DecoratorTargets, DecoratorUsage, DefBody, DefId, Definition, Edition,
    MethodKind, Model, ParamType, ScalarType, Schema, Type, Value, Visibility,
};
use crate::source::SourceMap;

/// What to put into descriptors beyond the reference's defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DescriptorOptions {
    /// Write `source_code_info` (positions and comments) for every schema
    /// (`--emit-source-info`).
    pub source_info: bool,
}

/// The compiler version sent to plugins: this crate's version.
pub fn compiler_version() -> d::Version {
    let version = env!("CARGO_PKG_VERSION");
    let (core, suffix) = version.split_once('-').unwrap_or((version, ""));
    let mut parts = core.split('.').map(|p| p.parse::<i32>().unwrap_or(0));
    d::Version {
        major: parts.next().unwrap_or(0),
        minor: parts.next().unwrap_or(0),
        patch: parts.next().unwrap_or(0),
        suffix: suffix.to_string(),
    }
}

/// Lowers a whole model: one [`SchemaDescriptor`] per schema, in the model's order.
pub fn descriptor_set(
    model: &Model,
    sources: &SourceMap,
    options: &DescriptorOptions,
) -> DescriptorSet {
    DescriptorSet {
        schemas: Some(
            model
                .schemas
                .iter()
                .map(|s| schema_descriptor(model, s, sources, options))
                .collect(),
        ),
    }
}

/// Lowers one schema of `model`.
pub fn schema_descriptor(
    model: &Model,
    schema: &Schema,
    sources: &SourceMap,
    options: &DescriptorOptions,
) -> SchemaDescriptor {
    let definitions: Vec<DefinitionDescriptor> = schema
        .definitions
        .iter()
        .map(|id| definition(model, *id))
        .collect();
    let imports: Vec<String> = schema.imports.iter().map(|i| i.path.clone()).collect();
    SchemaDescriptor {
        path: Some(schema.path.clone()),
        package: schema.package.clone(),
        edition: Some(edition(schema.edition)),
        imports: non_empty(imports),
        definitions: non_empty(definitions),
        source_code_info: if options.source_info {
            crate::source_info::source_code_info(model, schema, sources)
        } else {
            None
        },
    }
}

/// Builds the request sent to a plugin: `files_to_generate` are the paths of the schemas the
/// user named (in order), `schemas` the whole [`descriptor_set`], `parameter` and
/// `host_options` as given (absent when `None` or empty, as the reference sends them).
pub fn code_generator_request(
    model: &Model,
    sources: &SourceMap,
    options: &DescriptorOptions,
    parameter: Option<String>,
    host_options: &[(String, String)],
) -> CodeGeneratorRequest {
    let set = descriptor_set(model, sources, options);
    request_from_set(&set, files_to_generate(model), parameter, host_options)
}

/// The paths of the schemas the user named, in order: a request's `files_to_generate`.
pub fn files_to_generate(model: &Model) -> Vec<String> {
    model
        .schemas
        .iter()
        .filter(|s| s.is_root)
        .map(|s| s.path.clone())
        .collect()
}

/// [`code_generator_request`] from an already lowered set (to build requests for several
/// plugins without lowering again).
pub fn request_from_set(
    set: &DescriptorSet,
    files_to_generate: Vec<String>,
    parameter: Option<String>,
    host_options: &[(String, String)],
) -> CodeGeneratorRequest {
    CodeGeneratorRequest {
        files_to_generate: Some(files_to_generate),
        parameter,
        compiler_version: Some(compiler_version()),
        schemas: set.schemas.clone(),
        host_options: non_empty(host_options.to_vec()),
    }
}

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    if v.is_empty() { None } else { Some(v) }
}

fn edition(e: Edition) -> d::Edition {
    match e {
        Edition::E2026 => d::Edition::Edition2026,
    }
}

fn visibility(v: Visibility) -> d::Visibility {
    match v {
        Visibility::Default => d::Visibility::Default,
        Visibility::Export => d::Visibility::Export,
        Visibility::Local => d::Visibility::Local,
    }
}

/// The descriptor `TypeKind` of a scalar.
pub fn scalar_kind(s: ScalarType) -> TypeKind {
    match s {
        ScalarType::Bool => TypeKind::Bool,
        ScalarType::Byte => TypeKind::Byte,
        ScalarType::Int8 => TypeKind::Int8,
        ScalarType::Int16 => TypeKind::Int16,
        ScalarType::Uint16 => TypeKind::Uint16,
        ScalarType::Int32 => TypeKind::Int32,
        ScalarType::Uint32 => TypeKind::Uint32,
        ScalarType::Int64 => TypeKind::Int64,
        ScalarType::Uint64 => TypeKind::Uint64,
        ScalarType::Int128 => TypeKind::Int128,
        ScalarType::Uint128 => TypeKind::Uint128,
        ScalarType::Float16 => TypeKind::Float16,
        ScalarType::Float32 => TypeKind::Float32,
        ScalarType::Float64 => TypeKind::Float64,
        ScalarType::Bfloat16 => TypeKind::Bfloat16,
        ScalarType::String => TypeKind::String,
        ScalarType::Uuid => TypeKind::Uuid,
        ScalarType::Timestamp => TypeKind::Timestamp,
        ScalarType::Duration => TypeKind::Duration,
    }
}

/// Lowers a resolved type.
pub fn type_descriptor(t: &Type) -> TypeDescriptor {
    match t {
        Type::Scalar(s) => TypeDescriptor::scalar(scalar_kind(*s)),
        Type::Array(e) => TypeDescriptor::array(type_descriptor(e)),
        Type::FixedArray(e, n) => TypeDescriptor::fixed_array(type_descriptor(e), *n),
        Type::Map(k, v) => TypeDescriptor::map(type_descriptor(k), type_descriptor(v)),
        Type::Defined { fqn, .. } => TypeDescriptor::defined(fqn.clone()),
    }
}

fn literal_base(kind: d::LiteralKind) -> d::LiteralValue {
    d::LiteralValue {
        kind: Some(kind),
        ..Default::default()
    }
}

/// Lowers a literal value (see the module docs for integers beyond 64 bits).
pub fn literal(v: &Value) -> d::LiteralValue {
    match v {
        Value::Bool(b) => d::LiteralValue {
            bool_value: Some(*b),
            ..literal_base(d::LiteralKind::Bool)
        },
        Value::Int(i) => int_literal(
            *i as u128 as u64 as i64,
            i64::try_from(*i).is_err().then(|| i.to_string()),
        ),
        Value::UInt(u) => int_literal(
            *u as u64 as i64,
            u64::try_from(*u).is_err().then(|| u.to_string()),
        ),
        Value::Float(f) => d::LiteralValue {
            float_value: Some(*f),
            ..literal_base(d::LiteralKind::Float)
        },
        Value::String { value, raw } => d::LiteralValue {
            string_value: Some(value.clone()),
            raw_value: raw.clone(),
            ..literal_base(d::LiteralKind::String)
        },
        Value::Bytes(b) => d::LiteralValue {
            bytes_value: (!b.is_empty()).then(|| b.clone()),
            ..literal_base(d::LiteralKind::Bytes)
        },
        Value::Uuid(u) => d::LiteralValue {
            uuid_value: Some(*u),
            ..literal_base(d::LiteralKind::Uuid)
        },
        Value::Timestamp(t) => d::LiteralValue {
            timestamp_value: Some(*t),
            ..literal_base(d::LiteralKind::Timestamp)
        },
        Value::Duration(t) => d::LiteralValue {
            duration_value: Some(*t),
            ..literal_base(d::LiteralKind::Duration)
        },
    }
}

fn int_literal(bits: i64, exact: Option<String>) -> d::LiteralValue {
    d::LiteralValue {
        int_value: Some(bits),
        raw_value: exact,
        ..literal_base(d::LiteralKind::Int)
    }
}

fn decorators(usages: &[DecoratorUsage]) -> Option<Vec<d::DecoratorUsage>> {
    non_empty(
        usages
            .iter()
            .map(|u| d::DecoratorUsage {
                fqn: Some(u.name.clone()),
                args: non_empty(
                    u.args
                        .iter()
                        .map(|a| d::DecoratorArg {
                            name: a.name.clone(),
                            value: literal(&a.value),
                        })
                        .collect(),
                ),
                export_data: non_empty(
                    u.export_data
                        .iter()
                        .map(|(k, v)| (k.clone(), literal(v)))
                        .collect(),
                ),
            })
            .collect(),
    )
}

fn targets(t: DecoratorTargets) -> d::DecoratorTarget {
    d::DecoratorTarget::from_bits_retain(t.0)
}

/// Lowers one definition and, recursively, the definitions nested in it.
pub fn definition(model: &Model, id: DefId) -> DefinitionDescriptor {
    let def: &Definition = model.def(id);
    let nested: Vec<DefinitionDescriptor> =
        def.nested.iter().map(|n| definition(model, *n)).collect();
    let mut out = DefinitionDescriptor {
        kind: Some(definition_kind(def)),
        name: Some(def.name.clone()),
        fqn: Some(def.fqn.clone()),
        documentation: def.documentation.clone(),
        visibility: Some(visibility(def.visibility)),
        decorators: decorators(&def.decorators),
        nested: non_empty(nested),
        ..Default::default()
    };
    match &def.body {
        DefBody::Enum(e) => {
            out.enum_def = Some(d::EnumDef {
                base_type: Some(scalar_kind(e.base)),
                members: non_empty(
                    e.members
                        .iter()
                        .map(|m| d::EnumMemberDescriptor {
                            name: Some(m.name.clone()),
                            documentation: m.documentation.clone(),
                            value: Some(m.value),
                            decorators: decorators(&m.decorators),
                            value_expr: None,
                        })
                        .collect(),
                ),
                is_flags: Some(e.is_flags),
            });
        }
        DefBody::Struct(s) => {
            out.struct_def = Some(d::StructDef {
                fields: fields(&s.fields),
                is_mutable: Some(s.is_mutable),
                fixed_size: Some(s.fixed_size),
            });
        }
        DefBody::Message(m) => {
            out.message_def = Some(d::MessageDef {
                fields: fields(&m.fields),
            });
        }
        DefBody::Union(u) => {
            out.union_def = Some(d::UnionDef {
                branches: non_empty(
                    u.branches
                        .iter()
                        .map(|b| {
                            let (inline_fqn, type_ref_fqn, name) = match &b.target {
                                BranchTarget::Inline { fqn, .. } => (Some(fqn.clone()), None, None),
                                BranchTarget::Reference { fqn, .. } => {
                                    (None, Some(fqn.clone()), Some(b.name.clone()))
                                }
                            };
                            d::UnionBranchDescriptor {
                                discriminator: Some(b.discriminator),
                                documentation: b.documentation.clone(),
                                inline_fqn,
                                type_ref_fqn,
                                name,
                                decorators: decorators(&b.decorators),
                            }
                        })
                        .collect(),
                ),
            });
        }
        DefBody::Service(s) => {
            out.service_def = Some(d::ServiceDef {
                methods: non_empty(
                    s.methods
                        .iter()
                        .map(|m| d::MethodDescriptor {
                            name: Some(m.name.clone()),
                            documentation: m.documentation.clone(),
                            request_type: Some(type_descriptor(&m.request)),
                            response_type: Some(type_descriptor(&m.response)),
                            method_type: Some(method_type(m.kind)),
                            id: Some(m.id),
                            decorators: decorators(&m.decorators),
                        })
                        .collect(),
                ),
            });
        }
        DefBody::Const(c) => {
            out.const_def = Some(d::ConstDef {
                r#type: Some(type_descriptor(&c.ty)),
                value: Some(literal(&c.value)),
            });
        }
        DefBody::Decorator(dec) => {
            out.decorator_def = Some(d::DecoratorDef {
                targets: Some(targets(dec.targets)),
                allow_multiple: Some(dec.allow_multiple),
                params: non_empty(
                    dec.params
                        .iter()
                        .map(|p| d::DecoratorParamDef {
                            name: Some(p.name.clone()),
                            description: p.description.clone(),
                            r#type: Some(match p.ty {
                                ParamType::Scalar(s) => scalar_kind(s),
                                // A type name, passed as a string: the reference has no
                                // such parameters; DEFINED marks them.
                                ParamType::Type => TypeKind::Defined,
                            }),
                            required: Some(p.required),
                            default_value: p.default.as_ref().map(literal),
                            allowed_values: non_empty(
                                p.allowed_values.iter().map(literal).collect(),
                            ),
                        })
                        .collect(),
                ),
                validate_source: dec.validate_source.clone().filter(|s| !s.is_empty()),
                export_source: dec.export_source.clone().filter(|s| !s.is_empty()),
            });
        }
    }
    out
}

fn fields(fields: &[crate::model::Field]) -> Option<Vec<d::FieldDescriptor>> {
    non_empty(
        fields
            .iter()
            .map(|f| d::FieldDescriptor {
                name: Some(f.name.clone()),
                documentation: f.documentation.clone(),
                r#type: Some(type_descriptor(&f.ty)),
                index: Some(f.index),
                decorators: decorators(&f.decorators),
            })
            .collect(),
    )
}

fn definition_kind(def: &Definition) -> d::DefinitionKind {
    match def.body {
        DefBody::Enum(_) => d::DefinitionKind::Enum,
        DefBody::Struct(_) => d::DefinitionKind::Struct,
        DefBody::Message(_) => d::DefinitionKind::Message,
        DefBody::Union(_) => d::DefinitionKind::Union,
        DefBody::Service(_) => d::DefinitionKind::Service,
        DefBody::Const(_) => d::DefinitionKind::Const,
        DefBody::Decorator(_) => d::DefinitionKind::Decorator,
    }
}

fn method_type(k: MethodKind) -> d::MethodType {
    match k {
        MethodKind::Unary => d::MethodType::Unary,
        MethodKind::ServerStream => d::MethodType::ServerStream,
        MethodKind::ClientStream => d::MethodType::ClientStream,
        MethodKind::DuplexStream => d::MethodType::DuplexStream,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Compiler;
    use crate::decorator::{DecoratorCall, DecoratorOutcome, DecoratorRuntime};

    fn set_of(text: &str) -> DescriptorSet {
        let result = Compiler::new()
            .env_var("BEBOP_TEST_DIR", "/srv")
            .compile_source("t.bop", text);
        assert!(!result.has_errors(), "{}", result.render_terminal(false));
        result
            .descriptor_set(&DescriptorOptions::default())
            .expect("model")
    }

    fn const_value(set: &DescriptorSet, name: &str) -> d::LiteralValue {
        let def = set.find_definition(name).expect("defined").definition;
        def.const_def
            .as_ref()
            .and_then(|c| c.value.clone())
            .expect("const value")
    }

    #[test]
    fn literals_write_kind_and_one_value() {
        let set = set_of(
            "const bool F = false;\n\
             const uint64 BIG = 18446744073709551615;\n\
             const int128 HUGE = -170141183460469231731687303715884105728;\n\
             const uint128 UHUGE = 340282366920938463463374607431768211455;\n\
             const int64 SMALL = -5;\n\
             const byte[] EMPTY = b\"\";\n\
             const byte[] SOME = b\"\\x01\\x02\";\n\
             const string PATH = \"$(BEBOP_TEST_DIR)/data\";\n\
             const string PLAIN = \"\";\n",
        );
        let f = const_value(&set, "F");
        assert_eq!(
            (f.kind, f.bool_value),
            (Some(d::LiteralKind::Bool), Some(false))
        );
        assert_eq!(f.int_value, None);
        let big = const_value(&set, "BIG");
        assert_eq!((big.int_value, big.raw_value.as_deref()), (Some(-1), None));
        let huge = const_value(&set, "HUGE");
        assert_eq!(huge.int_value, Some(0));
        assert_eq!(
            huge.raw_value.as_deref(),
            Some("-170141183460469231731687303715884105728")
        );
        let uhuge = const_value(&set, "UHUGE");
        assert_eq!(uhuge.int_value, Some(-1));
        assert_eq!(
            uhuge.raw_value.as_deref(),
            Some("340282366920938463463374607431768211455")
        );
        assert_eq!(const_value(&set, "SMALL").int_value, Some(-5));
        let empty = const_value(&set, "EMPTY");
        assert_eq!(
            (empty.kind, empty.bytes_value),
            (Some(d::LiteralKind::Bytes), None)
        );
        assert_eq!(const_value(&set, "SOME").bytes_value, Some(vec![1, 2]));
        let path = const_value(&set, "PATH");
        assert_eq!(path.string_value.as_deref(), Some("/srv/data"));
        assert_eq!(path.raw_value.as_deref(), Some("$(BEBOP_TEST_DIR)/data"));
        let plain = const_value(&set, "PLAIN");
        assert_eq!(
            (plain.string_value.as_deref(), plain.raw_value),
            (Some(""), None)
        );
    }

    #[test]
    fn definitions_visibility_nesting_and_mixins() {
        let set = set_of(
            "message Outer { export struct In { x: int32; } message Priv { y(1): In; } a(1): In; }\n\
             local enum L : int8 { Z = 0; M = -1; }\n\
             service Base { Ping(Outer): Outer; }\n\
             service Full with Base { Pong(Outer): Outer; }\n",
        );
        let outer = set.find_definition("Outer").expect("Outer").definition;
        assert_eq!(outer.visibility, Some(d::Visibility::Default));
        let nested = outer.nested.as_ref().expect("nested");
        assert_eq!(nested[0].fqn.as_deref(), Some("Outer.In"));
        assert_eq!(nested[0].visibility, Some(d::Visibility::Export));
        assert_eq!(nested[1].visibility, Some(d::Visibility::Default));
        let l = set.find_definition("L").expect("L").definition;
        assert_eq!(l.visibility, Some(d::Visibility::Local));
        let members = l
            .enum_def
            .as_ref()
            .and_then(|e| e.members.clone())
            .expect("members");
        assert_eq!(members[1].value, Some(u64::MAX), "sign-extended to 64 bits");
        assert_eq!(members[1].value_expr, None);
        let full = set.find_definition("Full").expect("Full").definition;
        let methods = full
            .service_def
            .as_ref()
            .and_then(|s| s.methods.clone())
            .expect("methods");
        assert_eq!(methods.len(), 1, "mixin methods leave no trace");
        assert_eq!(methods[0].id, Some(bebop_core::method_id("/Full/Pong")));
    }

    struct Exporter;

    impl DecoratorRuntime for Exporter {
        fn run(&self, call: &DecoratorCall<'_>) -> DecoratorOutcome {
            DecoratorOutcome {
                messages: Vec::new(),
                export: vec![
                    ("zeta".to_string(), Value::Int(1)),
                    ("alpha".to_string(), call.usage.args[0].value.clone()),
                ],
            }
        }
    }

    #[test]
    fn decorator_definitions_and_export_data_in_runtime_order() {
        let text = "#decorator(mark) {\n    targets = STRUCT\n    param kind!: type\n    param n?: int32 = 3\n    \
                    export [[ return {} ]]\n}\n@mark(kind: \"int32\")\nstruct S { x: int32; }\n";
        let result = Compiler::new()
            .decorator_runtime(Exporter)
            .compile_source("t.bop", text);
        assert!(!result.has_errors(), "{}", result.render_terminal(false));
        let set = result
            .descriptor_set(&DescriptorOptions::default())
            .expect("model");
        let mark = set.find_definition("mark").expect("mark").definition;
        let def = mark.decorator_def.as_ref().expect("decorator body");
        let params = def.params.as_ref().expect("params");
        assert_eq!(params[0].r#type, Some(TypeKind::Defined));
        assert_eq!(
            params[1].default_value.as_ref().and_then(|v| v.int_value),
            Some(3)
        );
        assert_eq!(def.validate_source, None);
        assert_eq!(def.export_source.as_deref(), Some(" return {} "));
        let s = set.find_definition("S").expect("S").definition;
        let usage = &s.decorators.as_ref().expect("decorators")[0];
        assert_eq!(usage.fqn.as_deref(), Some("mark"));
        let keys: Vec<&str> = usage
            .export_data
            .iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["zeta", "alpha"]);
    }

    #[test]
    fn requests_and_versions() {
        let result = Compiler::new().compile_source("t.bop", "struct S { x: int32; }");
        let model = result.model.as_ref().expect("model");
        let plain = code_generator_request(
            model,
            &result.sources,
            &DescriptorOptions::default(),
            None,
            &[],
        );
        assert_eq!(plain.files_to_generate, Some(vec!["t.bop".to_string()]));
        assert_eq!(plain.parameter, None);
        assert_eq!(plain.host_options, None);
        let with = code_generator_request(
            model,
            &result.sources,
            &DescriptorOptions { source_info: true },
            Some("p".into()),
            &[("k".into(), "v".into())],
        );
        assert_eq!(with.parameter.as_deref(), Some("p"));
        assert_eq!(with.host_options, Some(vec![("k".into(), "v".into())]));
        assert!(
            with.schemas.as_ref().expect("schemas")[0]
                .source_code_info
                .is_some()
        );
        let v = compiler_version();
        assert_eq!(
            format!("{}.{}.{}", v.major, v.minor, v.patch),
            env!("CARGO_PKG_VERSION")
                .split('-')
                .next()
                .unwrap_or_default()
        );
        let bytes = with.to_vec().expect("encode");
        assert_eq!(
            CodeGeneratorRequest::from_bytes(&bytes).expect("decode"),
            with
        );
    }
}

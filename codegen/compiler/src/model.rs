//! The resolved, validated schema model: what descriptors and code generators are built
//! from.
//!
//! A [`Model`] holds every schema of a compilation (the files named by the user first, in
//! the order given, then the files they import, breadth first) and every definition in one
//! arena indexed by [`DefId`]. Each schema lists its top-level definitions in source order;
//! each definition lists the definitions nested in it (including inline union branches) in
//! source order. Type references are resolved to fully qualified names and ids.
//!
//! Spans are kept for everything so that source positions can be reported later.

use std::fmt;

use bebop_core::{Duration, Timestamp, Uuid};

use crate::source::{SourceId, Span};

/// Index of a definition in [`Model::definitions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefId(pub u32);

/// Index of a schema in [`Model::schemas`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SchemaId(pub u32);

/// The built-in scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    /// `bool`
    Bool,
    /// `byte` (alias `uint8`)
    Byte,
    /// `int8` (alias `sbyte`)
    Int8,
    /// `int16`
    Int16,
    /// `uint16`
    Uint16,
    /// `int32`
    Int32,
    /// `uint32`
    Uint32,
    /// `int64`
    Int64,
    /// `uint64`
    Uint64,
    /// `int128`
    Int128,
    /// `uint128`
    Uint128,
    /// `float16` (alias `half`)
    Float16,
    /// `float32`
    Float32,
    /// `float64`
    Float64,
    /// `bfloat16` (alias `bf16`)
    Bfloat16,
    /// `string`
    String,
    /// `uuid` (alias `guid`)
    Uuid,
    /// `timestamp`
    Timestamp,
    /// `duration`
    Duration,
}

impl ScalarType {
    /// Every scalar type, in descriptor `TypeKind` order.
    pub const ALL: [ScalarType; 19] = [
        ScalarType::Bool,
        ScalarType::Byte,
        ScalarType::Int8,
        ScalarType::Int16,
        ScalarType::Uint16,
        ScalarType::Int32,
        ScalarType::Uint32,
        ScalarType::Int64,
        ScalarType::Uint64,
        ScalarType::Int128,
        ScalarType::Uint128,
        ScalarType::Float16,
        ScalarType::Float32,
        ScalarType::Float64,
        ScalarType::Bfloat16,
        ScalarType::String,
        ScalarType::Uuid,
        ScalarType::Timestamp,
        ScalarType::Duration,
    ];

    /// The canonical name, as written in schemas.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::Byte => "byte",
            ScalarType::Int8 => "int8",
            ScalarType::Int16 => "int16",
            ScalarType::Uint16 => "uint16",
            ScalarType::Int32 => "int32",
            ScalarType::Uint32 => "uint32",
            ScalarType::Int64 => "int64",
            ScalarType::Uint64 => "uint64",
            ScalarType::Int128 => "int128",
            ScalarType::Uint128 => "uint128",
            ScalarType::Float16 => "float16",
            ScalarType::Float32 => "float32",
            ScalarType::Float64 => "float64",
            ScalarType::Bfloat16 => "bfloat16",
            ScalarType::String => "string",
            ScalarType::Uuid => "uuid",
            ScalarType::Timestamp => "timestamp",
            ScalarType::Duration => "duration",
        }
    }

    /// Looks up a type name. Returns the type and, for a deprecated alias, `true`.
    pub fn from_name(name: &str) -> Option<(ScalarType, bool)> {
        if let Some(t) = ScalarType::ALL.iter().find(|t| t.name() == name) {
            return Some((*t, false));
        }
        let alias = match name {
            "uint8" => ScalarType::Byte,
            "sbyte" => ScalarType::Int8,
            "guid" => ScalarType::Uuid,
            "half" => ScalarType::Float16,
            "bf16" => ScalarType::Bfloat16,
            _ => return None,
        };
        Some((alias, true))
    }

    /// The descriptor `TypeKind` value (1..=19).
    pub fn type_kind(self) -> u8 {
        ScalarType::ALL
            .iter()
            .position(|t| *t == self)
            .map(|i| i as u8 + 1)
            .unwrap_or(0)
    }

    /// Size on the wire, `None` for `string`. Timestamps are 16 bytes (docs/decisions.md D1).
    pub fn wire_size(self) -> Option<u32> {
        Some(match self {
            ScalarType::Bool | ScalarType::Byte | ScalarType::Int8 => 1,
            ScalarType::Int16 | ScalarType::Uint16 | ScalarType::Float16 | ScalarType::Bfloat16 => {
                2
            }
            ScalarType::Int32 | ScalarType::Uint32 | ScalarType::Float32 => 4,
            ScalarType::Int64 | ScalarType::Uint64 | ScalarType::Float64 => 8,
            ScalarType::Int128 | ScalarType::Uint128 | ScalarType::Uuid => 16,
            ScalarType::Timestamp => 16,
            ScalarType::Duration => 12,
            ScalarType::String => return None,
        })
    }

    /// Whether this is one of the integer types (`byte` through `uint128`).
    pub fn is_integer(self) -> bool {
        self.int_range().is_some()
    }

    /// Whether this is one of the four floating-point types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::Float16 | ScalarType::Float32 | ScalarType::Float64 | ScalarType::Bfloat16
        )
    }

    /// Whether the integer type is signed.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarType::Int8
                | ScalarType::Int16
                | ScalarType::Int32
                | ScalarType::Int64
                | ScalarType::Int128
        )
    }

    /// `(min, max)` of an integer type; `None` for other types.
    pub fn int_range(self) -> Option<(i128, u128)> {
        Some(match self {
            ScalarType::Byte => (0, u8::MAX as u128),
            ScalarType::Int8 => (i8::MIN as i128, i8::MAX as u128),
            ScalarType::Int16 => (i16::MIN as i128, i16::MAX as u128),
            ScalarType::Uint16 => (0, u16::MAX as u128),
            ScalarType::Int32 => (i32::MIN as i128, i32::MAX as u128),
            ScalarType::Uint32 => (0, u32::MAX as u128),
            ScalarType::Int64 => (i64::MIN as i128, i64::MAX as u128),
            ScalarType::Uint64 => (0, u64::MAX as u128),
            ScalarType::Int128 => (i128::MIN, i128::MAX as u128),
            ScalarType::Uint128 => (0, u128::MAX),
            _ => return None,
        })
    }

    /// Width in bits of an integer type.
    pub fn bits(self) -> Option<u32> {
        match self {
            ScalarType::Byte | ScalarType::Int8 => Some(8),
            ScalarType::Int16 | ScalarType::Uint16 => Some(16),
            ScalarType::Int32 | ScalarType::Uint32 => Some(32),
            ScalarType::Int64 | ScalarType::Uint64 => Some(64),
            ScalarType::Int128 | ScalarType::Uint128 => Some(128),
            _ => None,
        }
    }

    /// Whether the type may be a map key.
    pub fn is_valid_map_key(self) -> bool {
        self.is_integer()
            || matches!(
                self,
                ScalarType::Bool | ScalarType::String | ScalarType::Uuid
            )
    }

    /// Whether the type may be an enum base type.
    pub fn is_valid_enum_base(self) -> bool {
        self.is_integer() && !matches!(self, ScalarType::Int128 | ScalarType::Uint128)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A resolved type.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// A scalar.
    Scalar(ScalarType),
    /// `T[]`
    Array(Box<Type>),
    /// `T[N]`
    FixedArray(Box<Type>, u32),
    /// `map[K, V]`
    Map(Box<Type>, Box<Type>),
    /// A user definition.
    Defined {
        /// Its fully qualified name.
        fqn: String,
        /// Its id.
        def: DefId,
    },
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Array(e) => write!(f, "{e}[]"),
            Type::FixedArray(e, n) => write!(f, "{e}[{n}]"),
            Type::Map(k, v) => write!(f, "map[{k}, {v}]"),
            Type::Defined { fqn, .. } => f.write_str(fqn),
        }
    }
}

/// Visibility as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Visibility {
    /// No modifier: top-level definitions are exported, nested ones are local.
    #[default]
    Default = 0,
    /// `export`
    Export = 1,
    /// `local`
    Local = 2,
}

/// Kinds of definitions (values as in the descriptor's `DefinitionKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefKind {
    /// `enum`
    Enum = 1,
    /// `struct`
    Struct = 2,
    /// `message`
    Message = 3,
    /// `union`
    Union = 4,
    /// `service`
    Service = 5,
    /// `const`
    Const = 6,
    /// `#decorator`
    Decorator = 7,
}

impl DefKind {
    /// The keyword, for messages.
    pub fn name(self) -> &'static str {
        match self {
            DefKind::Enum => "enum",
            DefKind::Struct => "struct",
            DefKind::Message => "message",
            DefKind::Union => "union",
            DefKind::Service => "service",
            DefKind::Const => "const",
            DefKind::Decorator => "decorator",
        }
    }

    /// The kind's name with its article, for messages: "an enum", "a struct".
    pub fn with_article(self) -> &'static str {
        match self {
            DefKind::Enum => "an enum",
            DefKind::Struct => "a struct",
            DefKind::Message => "a message",
            DefKind::Union => "a union",
            DefKind::Service => "a service",
            DefKind::Const => "a const",
            DefKind::Decorator => "a decorator",
        }
    }
}

/// Streaming modes of service methods (values as in the descriptor's `MethodType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// `M(Req): Res`
    Unary = 1,
    /// `M(Req): stream Res`
    ServerStream = 2,
    /// `M(stream Req): Res`
    ClientStream = 3,
    /// `M(stream Req): stream Res`
    DuplexStream = 4,
}

/// Schema language editions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Edition {
    /// `edition = "2026"` (descriptor value 1000).
    #[default]
    E2026,
}

impl Edition {
    /// The descriptor value.
    pub fn value(self) -> i32 {
        match self {
            Edition::E2026 => 1000,
        }
    }
}

/// A literal value: a constant, a decorator argument, a parameter default.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `true` / `false`
    Bool(bool),
    /// A value of a signed integer type.
    Int(i128),
    /// A value of an unsigned integer type.
    UInt(u128),
    /// A floating-point value (any float type).
    Float(f64),
    /// A string after `$(VAR)` substitution; `raw` keeps the text before substitution when
    /// it contained references.
    String {
        /// The value.
        value: String,
        /// The text before substitution, only when it had `$(...)` references.
        raw: Option<String>,
    },
    /// A byte string.
    Bytes(Vec<u8>),
    /// A UUID.
    Uuid(Uuid),
    /// A point in time.
    Timestamp(Timestamp),
    /// A span of time.
    Duration(Duration),
}

impl Value {
    /// The value as `i128` when it is an integer that fits.
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(*v),
            Value::UInt(v) => i128::try_from(*v).ok(),
            _ => None,
        }
    }

    /// The string value, when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String { value, .. } => Some(value),
            _ => None,
        }
    }
}

/// Where decorators may be used (bit values as in the descriptor's `DecoratorTarget`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DecoratorTargets(pub u8);

impl DecoratorTargets {
    /// Nothing.
    pub const NONE: DecoratorTargets = DecoratorTargets(0);
    /// Enums.
    pub const ENUM: DecoratorTargets = DecoratorTargets(1);
    /// Structs.
    pub const STRUCT: DecoratorTargets = DecoratorTargets(2);
    /// Messages.
    pub const MESSAGE: DecoratorTargets = DecoratorTargets(4);
    /// Unions.
    pub const UNION: DecoratorTargets = DecoratorTargets(8);
    /// Struct and message fields, and enum members.
    pub const FIELD: DecoratorTargets = DecoratorTargets(16);
    /// Services.
    pub const SERVICE: DecoratorTargets = DecoratorTargets(32);
    /// Service methods.
    pub const METHOD: DecoratorTargets = DecoratorTargets(64);
    /// Union branches.
    pub const BRANCH: DecoratorTargets = DecoratorTargets(128);
    /// Everything.
    pub const ALL: DecoratorTargets = DecoratorTargets(255);

    /// The bit for a target name used in `targets = ...` (`MEMBER` shares `FIELD`'s bit).
    pub fn from_name(name: &str) -> Option<DecoratorTargets> {
        Some(match name {
            "ENUM" => Self::ENUM,
            "STRUCT" => Self::STRUCT,
            "MESSAGE" => Self::MESSAGE,
            "UNION" => Self::UNION,
            "FIELD" | "MEMBER" => Self::FIELD,
            "SERVICE" => Self::SERVICE,
            "METHOD" => Self::METHOD,
            "BRANCH" => Self::BRANCH,
            "ALL" => Self::ALL,
            _ => return None,
        })
    }

    /// Whether all bits of `other` are set.
    pub fn contains(self, other: DecoratorTargets) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }
}

/// The type of a decorator parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A scalar.
    Scalar(ScalarType),
    /// `type`: a type name (passed as a string).
    Type,
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Scalar(s) => write!(f, "{s}"),
            ParamType::Type => f.write_str("type"),
        }
    }
}

/// All schemas and definitions of a compilation.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// Schemas: the files named by the user first, then imports breadth first.
    pub schemas: Vec<Schema>,
    /// Every definition, top-level and nested.
    pub definitions: Vec<Definition>,
}

impl Model {
    /// A definition by id.
    ///
    /// # Panics
    /// When the id is not from this model.
    pub fn def(&self, id: DefId) -> &Definition {
        &self.definitions[id.0 as usize]
    }

    /// A schema by id.
    ///
    /// # Panics
    /// When the id is not from this model.
    pub fn schema(&self, id: SchemaId) -> &Schema {
        &self.schemas[id.0 as usize]
    }

    /// The definition with this fully qualified name.
    pub fn find(&self, fqn: &str) -> Option<&Definition> {
        self.definitions.iter().find(|d| d.fqn == fqn)
    }

    /// The schema whose path is `path`.
    pub fn schema_by_path(&self, path: &str) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.path == path)
    }
}

/// One source file.
#[derive(Clone, Debug)]
pub struct Schema {
    /// Its id.
    pub id: SchemaId,
    /// The path: as given on the command line, or the import path as written.
    pub path: String,
    /// The file in the source map.
    pub source: SourceId,
    /// Whether the user named this file (as opposed to it being imported).
    pub is_root: bool,
    /// Whether this is one of the built-in standard schemas.
    pub is_builtin: bool,
    /// `package` declaration.
    pub package: Option<String>,
    /// The edition (2026 when not declared).
    pub edition: Edition,
    /// Whether `edition = ...` was written.
    pub edition_declared: bool,
    /// Imports in source order.
    pub imports: Vec<Import>,
    /// Top-level definitions in source order.
    pub definitions: Vec<DefId>,
}

/// One `import` line.
#[derive(Clone, Debug)]
pub struct Import {
    /// The path as written.
    pub path: String,
    /// The imported schema.
    pub schema: SchemaId,
    /// Where the path is written.
    pub span: Span,
}

/// A definition: enum, struct, message, union, service, const or decorator.
#[derive(Clone, Debug)]
pub struct Definition {
    /// Its id.
    pub id: DefId,
    /// The schema it is written in.
    pub schema: SchemaId,
    /// The definition it is nested in.
    pub parent: Option<DefId>,
    /// Simple name.
    pub name: String,
    /// Fully qualified name: package, parents and name joined by dots.
    pub fqn: String,
    /// Visibility as written (nested definitions without a modifier are `Default`).
    pub visibility: Visibility,
    /// Text of the doc comments before it.
    pub documentation: Option<String>,
    /// Decorators applied to it.
    pub decorators: Vec<DecoratorUsage>,
    /// Definitions nested in it, in source order (inline union branches included).
    pub nested: Vec<DefId>,
    /// The body.
    pub body: DefBody,
    /// The whole definition.
    pub span: Span,
    /// The name.
    pub name_span: Span,
}

impl Definition {
    /// The kind of definition.
    pub fn kind(&self) -> DefKind {
        match &self.body {
            DefBody::Enum(_) => DefKind::Enum,
            DefBody::Struct(_) => DefKind::Struct,
            DefBody::Message(_) => DefKind::Message,
            DefBody::Union(_) => DefKind::Union,
            DefBody::Service(_) => DefKind::Service,
            DefBody::Const(_) => DefKind::Const,
            DefBody::Decorator(_) => DefKind::Decorator,
        }
    }

    /// Whether it can be reached from other files: top-level definitions unless `local`,
    /// nested ones only when `export` (and their parents are reachable too; see
    /// [`crate::resolve`]).
    pub fn is_exported(&self) -> bool {
        match self.visibility {
            Visibility::Export => true,
            Visibility::Local => false,
            Visibility::Default => self.parent.is_none(),
        }
    }
}

/// The body of a definition.
#[derive(Clone, Debug)]
pub enum DefBody {
    /// An enum.
    Enum(EnumDef),
    /// A struct (also inline union branches written `{ ... }`).
    Struct(StructDef),
    /// A message (also inline union branches written `message { ... }`).
    Message(MessageDef),
    /// A union.
    Union(UnionDef),
    /// A service.
    Service(ServiceDef),
    /// A constant.
    Const(ConstDef),
    /// A decorator definition.
    Decorator(DecoratorDef),
}

/// An enum body.
#[derive(Clone, Debug)]
pub struct EnumDef {
    /// The integer type (`uint32` when not written).
    pub base: ScalarType,
    /// Members in source order.
    pub members: Vec<EnumMember>,
    /// Whether `@flags` is applied.
    pub is_flags: bool,
}

/// An enum member.
#[derive(Clone, Debug)]
pub struct EnumMember {
    /// Name.
    pub name: String,
    /// Doc comment.
    pub documentation: Option<String>,
    /// The value as 64 bits; negative values of signed bases are sign-extended.
    pub value: u64,
    /// The expression as written when it was more than a plain number.
    pub value_expr: Option<String>,
    /// Decorators.
    pub decorators: Vec<DecoratorUsage>,
    /// The whole member.
    pub span: Span,
}

/// A struct body.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// Fields in order.
    pub fields: Vec<Field>,
    /// Declared `mut`.
    pub is_mutable: bool,
    /// Wire size when every field has a fixed size; 0 when variable (or empty).
    pub fixed_size: u32,
}

/// A message body.
#[derive(Clone, Debug)]
pub struct MessageDef {
    /// Fields in source order.
    pub fields: Vec<Field>,
}

/// A struct or message field.
#[derive(Clone, Debug)]
pub struct Field {
    /// Name.
    pub name: String,
    /// Doc comment.
    pub documentation: Option<String>,
    /// Type.
    pub ty: Type,
    /// Message tag (1..=255); 0 for struct fields.
    pub index: u32,
    /// Decorators.
    pub decorators: Vec<DecoratorUsage>,
    /// The whole field.
    pub span: Span,
    /// The name.
    pub name_span: Span,
}

/// A union body.
#[derive(Clone, Debug)]
pub struct UnionDef {
    /// Branches in source order.
    pub branches: Vec<Branch>,
}

/// A union branch.
#[derive(Clone, Debug)]
pub struct Branch {
    /// Wire discriminator (1..=255).
    pub discriminator: u8,
    /// Branch name.
    pub name: String,
    /// Doc comment.
    pub documentation: Option<String>,
    /// Inline definition or referenced type.
    pub target: BranchTarget,
    /// Decorators.
    pub decorators: Vec<DecoratorUsage>,
    /// The whole branch.
    pub span: Span,
}

/// What a union branch carries.
#[derive(Clone, Debug)]
pub enum BranchTarget {
    /// A struct or message written inside the union (it is in the union's `nested` list).
    Inline {
        /// The inline definition.
        def: DefId,
        /// Its fully qualified name.
        fqn: String,
    },
    /// A reference to a struct or message defined elsewhere.
    Reference {
        /// The referenced definition.
        def: DefId,
        /// Its fully qualified name.
        fqn: String,
    },
}

/// A service body.
#[derive(Clone, Debug)]
pub struct ServiceDef {
    /// The service's own methods (mixin methods are not copied here).
    pub methods: Vec<Method>,
    /// Services named after `with`, in order.
    pub mixins: Vec<DefId>,
}

/// A service method.
#[derive(Clone, Debug)]
pub struct Method {
    /// Name.
    pub name: String,
    /// Doc comment.
    pub documentation: Option<String>,
    /// Request type (a struct, message or union).
    pub request: Type,
    /// Response type (a struct, message or union).
    pub response: Type,
    /// Streaming mode.
    pub kind: MethodKind,
    /// `method_id("/Service/Method")`.
    pub id: u32,
    /// Decorators.
    pub decorators: Vec<DecoratorUsage>,
    /// The whole method.
    pub span: Span,
}

/// A constant.
#[derive(Clone, Debug)]
pub struct ConstDef {
    /// Declared type (a scalar, or `byte[]`).
    pub ty: Type,
    /// The value.
    pub value: Value,
}

/// A decorator definition.
#[derive(Clone, Debug)]
pub struct DecoratorDef {
    /// Where it may be used.
    pub targets: DecoratorTargets,
    /// Whether it may appear more than once on one element.
    pub allow_multiple: bool,
    /// Parameters in order.
    pub params: Vec<DecoratorParam>,
    /// Lua source of the `validate [[ ... ]]` block.
    pub validate_source: Option<String>,
    /// Lua source of the `export [[ ... ]]` block.
    pub export_source: Option<String>,
    /// Where the validate block's text is.
    pub validate_span: Option<Span>,
    /// Where the export block's text is.
    pub export_span: Option<Span>,
}

/// A decorator parameter.
#[derive(Clone, Debug)]
pub struct DecoratorParam {
    /// Name.
    pub name: String,
    /// Doc comment before `param`.
    pub description: Option<String>,
    /// Type.
    pub ty: ParamType,
    /// `!` (required) or `?` (optional).
    pub required: bool,
    /// Default for optional parameters.
    pub default: Option<Value>,
    /// Allowed values from `in [...]` (empty: any).
    pub allowed_values: Vec<Value>,
    /// Where it is declared.
    pub span: Span,
}

/// A decorator applied to an element.
#[derive(Clone, Debug)]
pub struct DecoratorUsage {
    /// The name as written after `@` (`flags`, `validators.range`).
    pub name: String,
    /// Fully qualified name of the decorator definition.
    pub fqn: String,
    /// The decorator definition.
    pub def: DefId,
    /// Arguments in the order written, each named after its parameter.
    pub args: Vec<DecoratorArg>,
    /// Data produced by the decorator's export block (filled by a
    /// [`crate::decorator::DecoratorRuntime`]).
    pub export_data: Vec<(String, Value)>,
    /// The whole usage (`@name(...)`).
    pub span: Span,
}

/// One decorator argument.
#[derive(Clone, Debug)]
pub struct DecoratorArg {
    /// The parameter it binds to.
    pub name: String,
    /// The value, converted to the parameter's type.
    pub value: Value,
    /// Where it is written.
    pub span: Span,
}

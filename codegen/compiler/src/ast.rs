//! The syntax tree of one schema file, as written (names not yet resolved).
//!
//! Produced by [`crate::parser`]. Enum member values are already computed (the parser
//! evaluates value expressions, which may only refer to earlier members); other literals
//! are kept as written and evaluated against their declared types later.

use crate::model::{ParamType, ScalarType, Visibility};
use crate::source::{SourceId, Span};

/// A name and where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A possibly qualified name: `Point`, `base.Point`, `Outer.Inner`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// The dot-separated parts.
    pub parts: Vec<Ident>,
    /// The whole name.
    pub span: Span,
}

impl Path {
    /// The name joined with dots.
    pub fn joined(&self) -> String {
        let mut s = String::new();
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                s.push('.');
            }
            s.push_str(&p.name);
        }
        s
    }
}

/// One parsed file.
#[derive(Clone, Debug)]
pub struct File {
    /// The source.
    pub source: SourceId,
    /// `edition = "..."`
    pub edition: Option<(String, Span)>,
    /// `package a.b.c`
    pub package: Option<(String, Span)>,
    /// `import "..."` in order.
    pub imports: Vec<ImportDecl>,
    /// Top-level definitions in order.
    pub items: Vec<Item>,
}

/// An import.
#[derive(Clone, Debug)]
pub struct ImportDecl {
    /// The path as written.
    pub path: String,
    /// Where the path string is.
    pub span: Span,
}

/// A definition.
#[derive(Clone, Debug)]
pub struct Item {
    /// Its name.
    pub name: Ident,
    /// What it is.
    pub kind: ItemKind,
    /// Visibility as written.
    pub visibility: Visibility,
    /// Where the visibility modifier is.
    pub visibility_span: Option<Span>,
    /// Decorators.
    pub decorators: Vec<DecoratorUse>,
    /// Documentation.
    pub doc: Option<String>,
    /// The whole definition.
    pub span: Span,
}

/// The kinds of definitions.
#[derive(Clone, Debug)]
pub enum ItemKind {
    /// `enum`
    Enum(EnumItem),
    /// `struct`
    Struct(StructItem),
    /// `message`
    Message(MessageItem),
    /// `union`
    Union(UnionItem),
    /// `service`
    Service(ServiceItem),
    /// `const`
    Const(ConstItem),
    /// `#decorator`
    Decorator(DecoratorItem),
}

impl ItemKind {
    /// The definitions nested in this one.
    pub fn nested(&self) -> &[Item] {
        match self {
            ItemKind::Struct(s) => &s.nested,
            ItemKind::Message(m) => &m.nested,
            ItemKind::Union(u) => &u.nested,
            _ => &[],
        }
    }
}

/// An enum.
#[derive(Clone, Debug)]
pub struct EnumItem {
    /// The base type (`uint32` when not written or invalid).
    pub base: ScalarType,
    /// Where the base type is written.
    pub base_span: Option<Span>,
    /// Members.
    pub members: Vec<EnumMemberItem>,
}

/// An enum member.
#[derive(Clone, Debug)]
pub struct EnumMemberItem {
    /// Name.
    pub name: Ident,
    /// The computed value; `None` when the expression had an error.
    pub value: Option<i128>,
    /// Where the value expression is.
    pub value_span: Span,
    /// Whether the value was more than a single (possibly negative) number.
    pub is_expression: bool,
    /// Decorators.
    pub decorators: Vec<DecoratorUse>,
    /// Documentation.
    pub doc: Option<String>,
    /// The whole member.
    pub span: Span,
}

/// A struct (also used for inline union branches).
#[derive(Clone, Debug)]
pub struct StructItem {
    /// `mut`
    pub mutable: bool,
    /// Fields.
    pub fields: Vec<FieldItem>,
    /// Nested definitions.
    pub nested: Vec<Item>,
}

/// A message (also used for inline union branches).
#[derive(Clone, Debug)]
pub struct MessageItem {
    /// Fields.
    pub fields: Vec<FieldItem>,
    /// Nested definitions.
    pub nested: Vec<Item>,
}

/// A struct or message field.
#[derive(Clone, Debug)]
pub struct FieldItem {
    /// Name.
    pub name: Ident,
    /// Message tag; `None` for struct fields or when invalid.
    pub tag: Option<(u8, Span)>,
    /// Type.
    pub ty: TypeExpr,
    /// Decorators.
    pub decorators: Vec<DecoratorUse>,
    /// Documentation.
    pub doc: Option<String>,
    /// The whole field.
    pub span: Span,
}

/// A union.
#[derive(Clone, Debug)]
pub struct UnionItem {
    /// Branches.
    pub branches: Vec<BranchItem>,
    /// Nested definitions, including inline branch definitions, in source order.
    pub nested: Vec<Item>,
    /// Whether a branch failed to parse (so an empty union is not reported again).
    pub had_errors: bool,
}

/// A union branch.
#[derive(Clone, Debug)]
pub struct BranchItem {
    /// Name.
    pub name: Ident,
    /// Discriminator; `None` when invalid.
    pub discriminator: Option<u8>,
    /// Where the discriminator is.
    pub discriminator_span: Span,
    /// Inline definition or type reference.
    pub target: BranchTargetItem,
    /// Decorators.
    pub decorators: Vec<DecoratorUse>,
    /// Documentation.
    pub doc: Option<String>,
    /// The whole branch.
    pub span: Span,
}

/// What a branch carries.
#[derive(Clone, Debug)]
pub enum BranchTargetItem {
    /// Index of the inline definition in the union's `nested` list.
    Inline(usize),
    /// A type reference.
    Reference(TypeExpr),
}

/// A service.
#[derive(Clone, Debug)]
pub struct ServiceItem {
    /// `with A, B`
    pub mixins: Vec<Path>,
    /// Methods.
    pub methods: Vec<MethodItem>,
}

/// A service method.
#[derive(Clone, Debug)]
pub struct MethodItem {
    /// Name.
    pub name: Ident,
    /// Request type.
    pub request: TypeExpr,
    /// `stream` before the request type.
    pub request_stream: bool,
    /// Response type.
    pub response: TypeExpr,
    /// `stream` before the response type.
    pub response_stream: bool,
    /// Decorators.
    pub decorators: Vec<DecoratorUse>,
    /// Documentation.
    pub doc: Option<String>,
    /// The whole method.
    pub span: Span,
}

/// A constant.
#[derive(Clone, Debug)]
pub struct ConstItem {
    /// Declared type.
    pub ty: TypeExpr,
    /// Value as written.
    pub value: Literal,
}

/// A decorator definition.
#[derive(Clone, Debug)]
pub struct DecoratorItem {
    /// `targets = ...` with the combined bits.
    pub targets: Option<(u8, Span)>,
    /// `multiple = true`
    pub multiple: bool,
    /// Parameters.
    pub params: Vec<ParamItem>,
    /// `validate [[ ... ]]` text and where it is.
    pub validate: Option<(String, Span)>,
    /// `export [[ ... ]]` text and where it is.
    pub export: Option<(String, Span)>,
}

/// A decorator parameter.
#[derive(Clone, Debug)]
pub struct ParamItem {
    /// Name.
    pub name: Ident,
    /// `!` or `?`.
    pub required: bool,
    /// Type.
    pub ty: ParamType,
    /// Where the type is written.
    pub ty_span: Span,
    /// `= default`
    pub default: Option<Literal>,
    /// `in [...]`
    pub allowed: Vec<Literal>,
    /// Documentation.
    pub doc: Option<String>,
    /// The whole parameter.
    pub span: Span,
}

/// A decorator usage `@name(args)`.
#[derive(Clone, Debug)]
pub struct DecoratorUse {
    /// The name as written.
    pub name: Path,
    /// Arguments.
    pub args: Vec<ArgItem>,
    /// The whole usage.
    pub span: Span,
}

/// A decorator argument.
#[derive(Clone, Debug)]
pub struct ArgItem {
    /// `name:` when given.
    pub name: Option<Ident>,
    /// The value.
    pub value: Literal,
    /// The whole argument.
    pub span: Span,
}

/// A type as written.
#[derive(Clone, Debug)]
pub enum TypeExpr {
    /// A scalar.
    Scalar(ScalarType, Span),
    /// `T[]`
    Array(Box<TypeExpr>, Span),
    /// `T[N]`
    FixedArray(Box<TypeExpr>, u32, Span),
    /// `map[K, V]`
    Map(Box<TypeExpr>, Box<TypeExpr>, Span),
    /// A name to resolve.
    Named(Path),
}

impl TypeExpr {
    /// Where the type is written.
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Scalar(_, s)
            | TypeExpr::Array(_, s)
            | TypeExpr::FixedArray(_, _, s)
            | TypeExpr::Map(_, _, s) => *s,
            TypeExpr::Named(p) => p.span,
        }
    }
}

/// A literal as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    /// The value.
    pub kind: LiteralKind,
    /// Where.
    pub span: Span,
}

/// Literal forms.
#[derive(Clone, Debug, PartialEq)]
pub enum LiteralKind {
    /// `true` / `false`
    Bool(bool),
    /// A number as written, with a leading `-` when `negative`.
    Number {
        /// The digits (decimal, `0x` hex, or a float form).
        text: String,
        /// Written with a leading `-`.
        negative: bool,
    },
    /// `inf`, `-inf`
    Infinity {
        /// Written `-inf`.
        negative: bool,
    },
    /// `nan`
    Nan,
    /// A string, escapes decoded, `$(VAR)` not yet substituted.
    String(String),
    /// A byte string.
    Bytes(Vec<u8>),
}

impl LiteralKind {
    /// How the kind is named in messages.
    pub fn describe(&self) -> &'static str {
        match self {
            LiteralKind::Bool(_) => "a boolean",
            LiteralKind::Number { .. } => "a number",
            LiteralKind::Infinity { .. } | LiteralKind::Nan => "a float",
            LiteralKind::String(_) => "a string",
            LiteralKind::Bytes(_) => "a byte string",
        }
    }
}

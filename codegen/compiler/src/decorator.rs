//! The hook through which decorator `validate [[ ... ]]` and `export [[ ... ]]` blocks run.
//!
//! The compiler itself does not execute Lua. It checks every decorator usage against its
//! definition (targets, parameters, argument types, allowed values) and then, for usages of
//! decorators that have a validate or export block, calls a [`DecoratorRuntime`]. The
//! default, [`NoDecoratorRuntime`], does nothing. A runtime reports problems as
//! [`DecoratorMessage`]s (turned into `E089`/`W007` diagnostics) and returns the exported
//! key/value pairs, which end up in [`DecoratorUsage::export_data`].

use crate::diag::Severity;
use crate::model::{DecoratorDef, DecoratorUsage, DefKind, Definition, Value};
use crate::source::{LineCol, SourceMap, Span};

/// What a decorator is applied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// An enum.
    Enum,
    /// A struct.
    Struct,
    /// A message.
    Message,
    /// A union.
    Union,
    /// A service.
    Service,
    /// A struct or message field.
    Field,
    /// An enum member.
    Member,
    /// A union branch.
    Branch,
    /// A service method.
    Method,
    /// A constant (no decorator may target one).
    Const,
}

impl TargetKind {
    /// The name used in messages and given to runtimes (`"field"`, `"enum"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Enum => "enum",
            TargetKind::Struct => "struct",
            TargetKind::Message => "message",
            TargetKind::Union => "union",
            TargetKind::Service => "service",
            TargetKind::Field => "field",
            TargetKind::Member => "member",
            TargetKind::Branch => "branch",
            TargetKind::Method => "method",
            TargetKind::Const => "const",
        }
    }
}

/// The element a decorator usage is attached to.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// What it is.
    pub kind: TargetKind,
    /// Its name.
    pub name: &'a str,
    /// For fields, members, branches and methods: the kind of the containing definition.
    pub parent_kind: Option<DefKind>,
    /// For definitions: the fully qualified name.
    pub fqn: Option<&'a str>,
    /// For definitions: the definition kind.
    pub def_kind: Option<DefKind>,
}

/// A position handed to runtimes (the fields Lua blocks see as `span`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanInfo {
    /// The span itself.
    pub span: Span,
    /// Byte offset.
    pub offset: u32,
    /// Length in bytes.
    pub len: u32,
    /// 1-based line and column of the start.
    pub start: LineCol,
}

impl SpanInfo {
    /// Describes a span of `sources`.
    pub fn new(sources: &SourceMap, span: Span) -> SpanInfo {
        SpanInfo {
            span,
            offset: span.start,
            len: span.len(),
            start: sources.line_col(span.source, span.start),
        }
    }
}

/// One decorator usage handed to a runtime.
#[derive(Clone, Copy, Debug)]
pub struct DecoratorCall<'a> {
    /// The decorator's definition (name, FQN, documentation).
    pub definition: &'a Definition,
    /// Its body: parameters and Lua sources.
    pub decorator: &'a DecoratorDef,
    /// The usage, with arguments bound to parameters.
    pub usage: &'a DecoratorUsage,
    /// What it is applied to.
    pub target: Target<'a>,
    /// The sources, to turn spans into lines and columns (see [`SpanInfo`]).
    pub sources: &'a SourceMap,
}

/// A problem reported by a runtime.
#[derive(Clone, Debug, PartialEq)]
pub struct DecoratorMessage {
    /// Error (`E089`) or warning (`W007`).
    pub severity: Severity,
    /// Text.
    pub message: String,
    /// Where; the usage itself when `None`.
    pub span: Option<Span>,
}

/// What a runtime returns for one usage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DecoratorOutcome {
    /// Problems found by the validate block.
    pub messages: Vec<DecoratorMessage>,
    /// Key/value pairs produced by the export block.
    pub export: Vec<(String, Value)>,
}

/// Runs decorator blocks at compile time.
pub trait DecoratorRuntime {
    /// Runs the validate and export blocks of one usage.
    fn run(&self, call: &DecoratorCall<'_>) -> DecoratorOutcome;
}

/// The default runtime: reports nothing and exports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDecoratorRuntime;

impl DecoratorRuntime for NoDecoratorRuntime {
    fn run(&self, _call: &DecoratorCall<'_>) -> DecoratorOutcome {
        DecoratorOutcome::default()
    }
}

//! Diagnostics: errors and warnings with stable codes, spans, labels and notes, rendered for a
//! terminal or as JSON lines.
//!
//! Every problem found in a run is collected (the compiler never stops at the first one), in
//! the order the phases run: lexing and parsing of each file, then imports and name
//! resolution, then validation.
//!
//! # Codes
//!
//! Codes are stable: tools may match on them. Errors start with `E`, warnings with `W`.
//!
//! | code | meaning |
//! |------|---------|
//! | E001 | the file is not valid UTF-8 |
//! | E002 | a character that cannot start any token |
//! | E003 | unterminated block comment |
//! | E004 | unterminated string or byte string |
//! | E005 | invalid escape sequence in a string (unknown escape, bad `\u{..}` code point, bad `\xHH`) |
//! | E006 | unterminated Lua block (`[[` without `]]`) |
//! | E010 | unexpected token (the message says what was expected) |
//! | E011 | a keyword used where a name is required |
//! | E012 | nesting too deep (definitions, types, expressions or parentheses) |
//! | E013 | unsupported or repeated `edition` |
//! | E014 | `edition` after the package, imports or definitions |
//! | E015 | `package` after imports |
//! | E016 | `package` after definitions |
//! | E017 | more than one `package` |
//! | E018 | a modifier where it is not allowed (`mut`, `readonly`, `export`, `local`) |
//! | E019 | a definition kind that cannot be nested there (services, constants, decorators) |
//! | E020 | malformed number |
//! | E021 | integer out of range for its type |
//! | E022 | floating-point value out of range for its type |
//! | E023 | literal of the wrong kind for its type |
//! | E024 | invalid UUID |
//! | E025 | invalid or impossible timestamp |
//! | E026 | invalid duration |
//! | E027 | environment variable not set |
//! | E028 | malformed `$(NAME)` reference |
//! | E029 | invalid enum value expression (unknown member, overflow, bad shift) |
//! | E030 | a file named on the command line cannot be read |
//! | E031 | import not found |
//! | E032 | invalid import path (absolute or with `..`) |
//! | E033 | input limit exceeded (file size, number of files, number of diagnostics) |
//! | E040 | unknown type |
//! | E041 | ambiguous name: several imported definitions match |
//! | E042 | the definition exists but is not visible from here (`local`) |
//! | E043 | duplicate definition (same scope, or same fully qualified name in two files) |
//! | E044 | duplicate field, member, branch, method or parameter name |
//! | E045 | a definition of the wrong kind where a type is expected |
//! | E050 | enum without a member of value 0 |
//! | E051 | two enum members with the same value (allowed with `@flags`) |
//! | E052 | invalid enum base type |
//! | E053 | enum member value out of range for the base type |
//! | E054 | message field tag outside 1..=255 |
//! | E055 | duplicate message field tag |
//! | E056 | union discriminator outside 1..=255 |
//! | E057 | duplicate union discriminator |
//! | E058 | union without branches |
//! | E059 | invalid union branch (a union, or a reference to something other than a struct or message) |
//! | E060 | invalid map key type |
//! | E061 | a struct that contains itself (only through structs and fixed arrays) |
//! | E062 | fixed array size outside 1..=65535 |
//! | E063 | invalid constant type |
//! | E070 | service request/response type is not a struct, message or union |
//! | E071 | two methods of a service hash to the same id |
//! | E072 | a `with` mixin that is not a service |
//! | E073 | cyclic service mixins |
//! | E074 | method name defined both by the service and a mixin, or by two mixins |
//! | E080 | unknown decorator |
//! | E081 | decorator not allowed on this kind of element |
//! | E082 | unknown decorator parameter |
//! | E083 | missing required decorator argument |
//! | E084 | decorator argument of the wrong type |
//! | E085 | decorator argument not in the parameter's allowed values |
//! | E086 | too many or repeated decorator arguments |
//! | E087 | the same decorator twice on one element (without `multiple = true`) |
//! | E088 | invalid decorator definition |
//! | E089 | error reported by a decorator's validate block |
//! | E090 | `@deprecated` on a struct field |
//! | E100 | an error reported by a code generator plugin (about a schema location) |
//! | W001 | import after definitions (accepted) |
//! | W002 | redundant visibility modifier |
//! | W003 | deprecated type alias (`uint8`, `sbyte`, `guid`, `half`, `bf16`) |
//! | W004 | deprecated `readonly` modifier |
//! | W005 | doc comment that is not attached to anything |
//! | W006 | the same file imported twice |
//! | W007 | warning reported by a decorator's validate block |
//! | W100 | a warning reported by a code generator plugin (about a schema location) |
//!
//! # Rendering
//!
//! ```
//! use bebopc::diag::{Code, Diagnostic};
//! use bebopc::source::{SourceMap, Span};
//!
//! let mut map = SourceMap::new();
//! let id = map.add("a.bop", "enum E { A = 1; }\n".to_string());
//! let d = Diagnostic::error(Code::E050, Span::new(id, 5, 6), "enum 'E' has no member with value 0");
//! let text = d.render(&map, false);
//! assert!(text.starts_with("a.bop:1:6: error[E050]: enum 'E' has no member with value 0\n"));
//! ```

use std::fmt;
use std::io::IsTerminal;

use crate::source::{SourceMap, Span};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Something worth knowing; compilation succeeds.
    Warning,
    /// Compilation fails.
    Error,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// A stable diagnostic code (see the [module documentation](self) for the list).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($(#[$doc])* $name,)*
        }

        impl Code {
            /// The code as text, e.g. `"E012"`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$name => stringify!($name),)*
                }
            }

            /// Every code, in order.
            pub const ALL: &'static [Code] = &[$(Code::$name,)*];
        }
    };
}

codes! {
    /// Invalid UTF-8.
    E001,
    /// Unexpected character.
    E002,
    /// Unterminated block comment.
    E003,
    /// Unterminated string.
    E004,
    /// Invalid escape.
    E005,
    /// Unterminated Lua block.
    E006,
    /// Unexpected token.
    E010,
    /// Keyword used as a name.
    E011,
    /// Nesting too deep.
    E012,
    /// Invalid edition.
    E013,
    /// Misplaced edition.
    E014,
    /// Package after imports.
    E015,
    /// Package after definitions.
    E016,
    /// Duplicate package.
    E017,
    /// Misplaced modifier.
    E018,
    /// Definition that cannot be nested.
    E019,
    /// Malformed number.
    E020,
    /// Integer out of range.
    E021,
    /// Float out of range.
    E022,
    /// Literal kind mismatch.
    E023,
    /// Invalid UUID.
    E024,
    /// Invalid timestamp.
    E025,
    /// Invalid duration.
    E026,
    /// Environment variable not set.
    E027,
    /// Malformed environment reference.
    E028,
    /// Invalid enum expression.
    E029,
    /// Unreadable input file.
    E030,
    /// Import not found.
    E031,
    /// Invalid import path.
    E032,
    /// Input limit exceeded.
    E033,
    /// Unknown type.
    E040,
    /// Ambiguous name.
    E041,
    /// Not visible.
    E042,
    /// Duplicate definition.
    E043,
    /// Duplicate member name.
    E044,
    /// Wrong kind of definition.
    E045,
    /// Enum without zero.
    E050,
    /// Duplicate enum value.
    E051,
    /// Invalid enum base type.
    E052,
    /// Enum value out of range.
    E053,
    /// Invalid field tag.
    E054,
    /// Duplicate field tag.
    E055,
    /// Invalid discriminator.
    E056,
    /// Duplicate discriminator.
    E057,
    /// Empty union.
    E058,
    /// Invalid union branch.
    E059,
    /// Invalid map key.
    E060,
    /// Recursive struct.
    E061,
    /// Invalid fixed array size.
    E062,
    /// Invalid constant type.
    E063,
    /// Invalid method type.
    E070,
    /// Duplicate method id.
    E071,
    /// Mixin is not a service.
    E072,
    /// Cyclic mixins.
    E073,
    /// Conflicting mixin method.
    E074,
    /// Unknown decorator.
    E080,
    /// Decorator target mismatch.
    E081,
    /// Unknown decorator parameter.
    E082,
    /// Missing decorator argument.
    E083,
    /// Decorator argument type.
    E084,
    /// Decorator argument not allowed.
    E085,
    /// Too many decorator arguments.
    E086,
    /// Duplicate decorator.
    E087,
    /// Invalid decorator definition.
    E088,
    /// Decorator validate error.
    E089,
    /// Deprecated struct field.
    E090,
    /// Error from a code generator plugin.
    E100,
    /// Import after definitions.
    W001,
    /// Redundant visibility.
    W002,
    /// Deprecated alias.
    W003,
    /// Deprecated readonly.
    W004,
    /// Detached doc comment.
    W005,
    /// Duplicate import.
    W006,
    /// Decorator validate warning.
    W007,
    /// Warning from a code generator plugin.
    W100,
}

impl Code {
    /// The severity this code always has.
    pub fn severity(self) -> Severity {
        if self.as_str().starts_with('W') {
            Severity::Warning
        } else {
            Severity::Error
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A secondary location with a short message ("first defined here").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What it is.
    pub message: String,
}

/// One error or warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable code.
    pub code: Code,
    /// One-line description.
    pub message: String,
    /// The main location.
    pub span: Span,
    /// Text shown under the primary underline (may be empty).
    pub span_label: String,
    /// Other related locations.
    pub labels: Vec<Label>,
    /// Extra lines (`= note: ...` / `= help: ...`).
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's own severity.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: code.severity(),
            code,
            message: message.into(),
            span,
            span_label: String::new(),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// An error (the code should be an `E` code).
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(code, span, message);
        d.severity = Severity::Error;
        d
    }

    /// A warning (the code should be a `W` code).
    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(code, span, message);
        d.severity = Severity::Warning;
        d
    }

    /// Adds the text shown under the primary span.
    pub fn with_span_label(mut self, text: impl Into<String>) -> Diagnostic {
        self.span_label = text.into();
        self
    }

    /// Adds a secondary labelled location.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Adds a note line (shown as `= note: ...`).
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(format!("note: {}", note.into()));
        self
    }

    /// Adds a help line (shown as `= help: ...`).
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.notes.push(format!("help: {}", help.into()));
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders for a terminal: `file:line:col: error[CODE]: message`, the source line with a
    /// `^^^` underline, labels and notes. `color` adds ANSI colours.
    pub fn render(&self, sources: &SourceMap, color: bool) -> String {
        let style = Style { on: color };
        let mut out = String::new();
        let pos = sources.line_col(self.span.source, self.span.start);
        let head_color = match self.severity {
            Severity::Error => RED,
            Severity::Warning => YELLOW,
        };
        out.push_str(&style.paint(
            BOLD,
            &format!(
                "{}:{}:{}: ",
                escape_controls(sources.display_path(self.span.source)),
                pos.line,
                pos.column
            ),
        ));
        out.push_str(&style.paint(
            head_color,
            &format!("{}[{}]", self.severity.as_str(), self.code),
        ));
        out.push_str(&style.paint(BOLD, &format!(": {}", self.message)));
        out.push('\n');
        let primary_line = sources.line_col(self.span.source, self.span.start).line;
        let same_line = |l: &Label| {
            l.span.source == self.span.source
                && sources.line_col(l.span.source, l.span.start).line == primary_line
        };
        render_snippet(
            &mut out,
            sources,
            self.span,
            '^',
            &self.span_label,
            head_color,
            style,
            true,
        );
        for label in self.labels.iter().filter(|l| same_line(l)) {
            render_snippet(
                &mut out,
                sources,
                label.span,
                '-',
                &label.message,
                BLUE,
                style,
                false,
            );
        }
        // Labels on other lines in source order: the primary file first, then by file and
        // position, whatever order the checks added them in.
        let mut others: Vec<&Label> = self.labels.iter().filter(|l| !same_line(l)).collect();
        others.sort_by_key(|l| {
            (
                l.span.source != self.span.source,
                l.span.source,
                l.span.start,
            )
        });
        for label in others {
            if label.span.source != self.span.source {
                let p = sources.line_col(label.span.source, label.span.start);
                out.push_str(&format!(
                    "  --> {}:{}:{}\n",
                    escape_controls(sources.display_path(label.span.source)),
                    p.line,
                    p.column
                ));
            }
            render_snippet(
                &mut out,
                sources,
                label.span,
                '-',
                &label.message,
                BLUE,
                style,
                true,
            );
        }
        for note in &self.notes {
            out.push_str(&format!("   = {note}\n"));
        }
        out
    }

    /// Renders as one JSON object (no trailing newline).
    pub fn to_json(&self, sources: &SourceMap) -> String {
        self.json_value(sources).to_string()
    }

    fn json_value(&self, sources: &SourceMap) -> serde_json::Value {
        let labels: Vec<serde_json::Value> = self
            .labels
            .iter()
            .map(|l| {
                let mut v = span_json(sources, l.span);
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("message".into(), l.message.clone().into());
                }
                v
            })
            .collect();
        let mut v = span_json(sources, self.span);
        if let Some(obj) = v.as_object_mut() {
            obj.insert("severity".into(), self.severity.as_str().into());
            obj.insert("code".into(), self.code.as_str().into());
            obj.insert("message".into(), self.message.clone().into());
            if !self.span_label.is_empty() {
                obj.insert("label".into(), self.span_label.clone().into());
            }
            obj.insert("labels".into(), labels.into());
            obj.insert("notes".into(), self.notes.clone().into());
        }
        v
    }
}

fn span_json(sources: &SourceMap, span: Span) -> serde_json::Value {
    let start = sources.line_col(span.source, span.start);
    let end = sources.line_col(span.source, span.end);
    serde_json::json!({
        "file": sources.display_path(span.source),
        "line": start.line,
        "column": start.column,
        "end_line": end.line,
        "end_column": end.column,
        "offset": span.start,
        "length": span.len(),
    })
}

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const BLUE: &str = "\x1b[1;34m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

#[derive(Clone, Copy)]
struct Style {
    on: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.on {
            format!("{code}{text}{RESET}")
        } else {
            text.to_string()
        }
    }
}

/// The most columns of a source line a snippet shows; a longer line is cut around the span.
pub const MAX_SNIPPET_COLUMNS: usize = 120;
/// Columns shown before the span when a long line is cut.
const SNIPPET_CONTEXT: usize = 40;

/// The largest char boundary of `text` at or before `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// How one character of a source line is shown: tabs as four spaces, control characters
/// (NUL, escape, ...) as `\u{..}` escapes so they cannot act on the terminal.
fn shown_char<'t>(ch: char, text: &'t str) -> std::borrow::Cow<'t, str> {
    if ch == '\t' {
        "    ".into()
    } else if ch.is_control() {
        ch.escape_unicode().to_string().into()
    } else {
        text.into()
    }
}

/// `text` with control characters escaped, for paths and other names printed in a
/// diagnostic.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        text.into()
    }
}

/// Renders the source line of `span` (when `with_line`) and a row of marks under the span.
#[allow(clippy::too_many_arguments)]
fn render_snippet(
    out: &mut String,
    sources: &SourceMap,
    span: Span,
    mark: char,
    label: &str,
    color: &str,
    style: Style,
    with_line: bool,
) {
    let Some(file) = sources.get(span.source) else {
        return;
    };
    if file.text().is_empty() {
        // Nothing to show (e.g. a file that could not be read).
        return;
    }
    let start = file.line_col(span.start);
    let line_text = file.line_text(start.line);
    // Each character as shown (tabs expanded so the underline lines up, control characters
    // escaped), with the columns it takes.
    let line_start = file.line_start(start.line) as usize;
    let span_start = span.start as usize;
    let span_end = (span.end as usize).max(span_start);
    // On a long line only the bytes around the span are looked at (a few hundred, however
    // long the line), so each snippet costs the same on a 4 MiB line as on a short one.
    let (lo, hi) = if line_text.len() > MAX_SNIPPET_COLUMNS * 4 {
        let lo = span_start
            .saturating_sub(line_start)
            .saturating_sub(SNIPPET_CONTEXT * 4);
        let hi = (lo + MAX_SNIPPET_COLUMNS * 8).min(line_text.len());
        (floor_boundary(line_text, lo), floor_boundary(line_text, hi))
    } else {
        (0, line_text.len())
    };
    let mut pieces: Vec<(std::borrow::Cow<'_, str>, usize)> = Vec::new();
    let mut col_before = 0usize;
    let mut width = 0usize;
    let mut total = 0usize;
    for (i, ch) in line_text[lo..hi].char_indices() {
        let i = lo + i;
        let at = line_start + i;
        let piece = shown_char(ch, &line_text[i..i + ch.len_utf8()]);
        let w = piece.chars().count();
        if at < span_start {
            col_before += w;
        } else if at < span_end {
            width += w;
        }
        total += w;
        pieces.push((piece, w));
    }
    // A long line is cut to a window around the span, marked with `...`.
    let (from, to) = if total > MAX_SNIPPET_COLUMNS {
        let from = col_before.saturating_sub(SNIPPET_CONTEXT);
        (from, (from + MAX_SNIPPET_COLUMNS).min(total))
    } else {
        (0, total)
    };
    let mut shown = String::new();
    let cut_before = from > 0 || lo > 0;
    if cut_before {
        shown.push_str("...");
    }
    let mut col = 0usize;
    for (piece, w) in &pieces {
        if col >= from && col + w <= to {
            shown.push_str(piece);
        }
        col += w;
        if col >= to {
            break;
        }
    }
    if to < total || hi < line_text.len() {
        shown.push_str("...");
    }
    let lead = if cut_before { 3 } else { 0 };
    let width = width.min(to.saturating_sub(col_before).max(1));
    let col_before = col_before - from + lead;
    let width = width.max(1);
    let number = start.line.to_string();
    let pad = " ".repeat(number.len());
    if with_line {
        out.push_str(&style.paint(BLUE, &format!("{number} | ")));
        out.push_str(&shown);
        out.push('\n');
    }
    out.push_str(&style.paint(BLUE, &format!("{pad} | ")));
    out.push_str(&" ".repeat(col_before));
    let marks: String = std::iter::repeat_n(mark, width).collect();
    if label.is_empty() {
        out.push_str(&style.paint(color, &marks));
    } else {
        out.push_str(&style.paint(color, &format!("{marks} {label}")));
    }
    out.push('\n');
}

/// When to colour terminal output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Color {
    /// Colour when stderr is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl Color {
    /// Decides for output going to stderr.
    pub fn resolve_for_stderr(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
            }
        }
    }
}

/// Output formats for diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Human-readable text with source snippets.
    #[default]
    Terminal,
    /// One JSON object per line.
    Json,
}

/// Renders a list of diagnostics in the given format.
pub fn render_all(
    diagnostics: &[Diagnostic],
    sources: &SourceMap,
    format: Format,
    color: bool,
) -> String {
    let mut out = String::new();
    for d in diagnostics {
        match format {
            Format::Terminal => {
                out.push_str(&d.render(sources, color));
                out.push('\n');
            }
            Format::Json => {
                out.push_str(&d.to_json(sources));
                out.push('\n');
            }
        }
    }
    out
}

/// The most diagnostics kept for one file; more are dropped with a final note.
pub const MAX_DIAGNOSTICS_PER_FILE: usize = 500;

/// Collects diagnostics of one run.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
    per_file: std::collections::HashMap<u32, usize>,
    dropped: bool,
}

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    /// Adds one diagnostic (dropped past [`MAX_DIAGNOSTICS_PER_FILE`] for its file).
    pub fn push(&mut self, d: Diagnostic) {
        let count = self.per_file.entry(d.span.source.0).or_insert(0);
        *count += 1;
        if *count == MAX_DIAGNOSTICS_PER_FILE + 1 {
            self.dropped = true;
            self.list.push(Diagnostic::error(
                Code::E033,
                Span::point(d.span.source, 0),
                format!("too many diagnostics in this file; only the first {MAX_DIAGNOSTICS_PER_FILE} are shown"),
            ));
        }
        if *count > MAX_DIAGNOSTICS_PER_FILE {
            return;
        }
        self.list.push(d);
    }

    /// Whether any error was added.
    pub fn has_errors(&self) -> bool {
        self.list.iter().any(Diagnostic::is_error)
    }

    /// Number of errors.
    pub fn error_count(&self) -> usize {
        self.list.iter().filter(|d| d.is_error()).count()
    }

    /// The diagnostics so far.
    pub fn as_slice(&self) -> &[Diagnostic] {
        &self.list
    }

    /// Number collected.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether none was collected.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Sorts the diagnostics added since `from` by file and position (stable), so that each
    /// phase reports in source order.
    pub fn sort_from(&mut self, from: usize) {
        if let Some(tail) = self.list.get_mut(from..) {
            tail.sort_by_key(|d| (d.span.source, d.span.start));
        }
    }

    /// The collected diagnostics.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceMap;

    #[test]
    fn codes_are_unique_and_severity_follows_prefix() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()));
            assert_eq!(c.as_str().len(), 4);
        }
        assert_eq!(Code::E001.severity(), Severity::Error);
        assert_eq!(Code::W003.severity(), Severity::Warning);
    }

    #[test]
    fn renders_label_in_other_line_and_notes() {
        let mut map = SourceMap::new();
        let id = map.add("x.bop", "struct A {}\nstruct A {}\n".to_string());
        let d = Diagnostic::error(
            Code::E043,
            Span::new(id, 19, 20),
            "duplicate definition 'A'",
        )
        .with_span_label("defined again here")
        .with_label(Span::new(id, 7, 8), "first defined here")
        .with_help("rename one of them");
        let text = d.render(&map, false);
        let expected = "x.bop:2:8: error[E043]: duplicate definition 'A'\n\
                        2 | struct A {}\n  |        ^ defined again here\n\
                        1 | struct A {}\n  |        - first defined here\n   = help: rename one of them\n";
        assert_eq!(text, expected);
        let colored = d.render(&map, true);
        assert!(colored.contains("\x1b[1;31merror[E043]"));
    }

    #[test]
    fn same_line_labels_share_the_source_line() {
        let mut map = SourceMap::new();
        let id = map.add("e.bop", "enum E : byte { B = 300; }\n".to_string());
        let d = Diagnostic::error(Code::E053, Span::new(id, 20, 23), "out of range")
            .with_label(Span::new(id, 9, 13), "base type");
        let text = d.render(&map, false);
        let expected = "e.bop:1:21: error[E053]: out of range\n\
                        1 | enum E : byte { B = 300; }\n  |                     ^^^\n\
                        \x20 |          ---- base type\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn json_has_positions_and_escapes() {
        let mut map = SourceMap::new();
        let id = map.add("q\"uote.bop", "a\tb\n".to_string());
        let d = Diagnostic::warning(Code::W003, Span::new(id, 2, 3), "say \"hi\"");
        let v: serde_json::Value = serde_json::from_str(&d.to_json(&map)).unwrap();
        assert_eq!(v["file"], "q\"uote.bop");
        assert_eq!(v["line"], 1);
        assert_eq!(v["column"], 3);
        assert_eq!(v["severity"], "warning");
        assert_eq!(v["code"], "W003");
        assert_eq!(v["message"], "say \"hi\"");
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let mut map = SourceMap::new();
        let line = format!("struct S {{ {} x: int24; }}\n", "a: int32; ".repeat(40_000));
        let at = line.find("int24").unwrap() as u32;
        let id = map.add("t.bop", line);
        let d = Diagnostic::error(
            Code::E040,
            Span::new(id, at, at + 5),
            "unknown type 'int24'",
        );
        let text = d.render(&map, false);
        assert!(text.len() < 400, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        let (source, marks) = (lines[1], lines[2]);
        assert!(
            source.starts_with("1 | ...") && source.ends_with("x: int24; }"),
            "{source}"
        );
        let col = marks.find('^').unwrap();
        assert_eq!(&source[col..col + 5], "int24", "{text}");
        assert_eq!(marks.matches('^').count(), 5);
    }

    #[test]
    fn labels_on_other_lines_come_in_source_order() {
        let mut map = SourceMap::new();
        let id = map.add("t.bop", "a\nb\nc\nd\n".to_string());
        let d = Diagnostic::error(Code::E040, Span::new(id, 2, 3), "at b")
            .with_label(Span::new(id, 6, 7), "at d")
            .with_label(Span::new(id, 0, 1), "at a")
            .with_label(Span::new(id, 4, 5), "at c");
        let text = d.render(&map, false);
        let (a, c, dd) = (
            text.find("at a").unwrap(),
            text.find("at c").unwrap(),
            text.find("at d").unwrap(),
        );
        assert!(a < c && c < dd, "{text}");
    }

    #[test]
    fn control_characters_are_escaped() {
        let mut map = SourceMap::new();
        let id = map.add(
            "t\u{1b}[31m.bop",
            "struct S { x\u{0}: int32; }\n".to_string(),
        );
        let d = Diagnostic::error(Code::E040, Span::new(id, 11, 13), "bad name");
        let text = d.render(&map, false);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{0}'),
            "{text:?}"
        );
        assert!(text.starts_with("t\\u{1b}[31m.bop:1:12"), "{text}");
        assert!(text.contains("1 | struct S { x\\u{0}: int32; }"), "{text}");
        // The underline covers the escaped form.
        assert!(text.contains("  |            ^^^^^^\n"), "{text}");
    }

    #[test]
    fn tab_expansion_keeps_underline_aligned() {
        let mut map = SourceMap::new();
        let id = map.add("t.bop", "\tx: int24;\n".to_string());
        let d = Diagnostic::error(Code::E040, Span::new(id, 4, 9), "unknown type 'int24'");
        let text = d.render(&map, false);
        assert!(
            text.contains("1 |     x: int24;\n  |        ^^^^^\n"),
            "{text}"
        );
    }

    #[test]
    fn caps_diagnostics_per_file() {
        let mut map = SourceMap::new();
        let id = map.add("t.bop", String::new());
        let mut diags = Diagnostics::new();
        for _ in 0..(MAX_DIAGNOSTICS_PER_FILE + 50) {
            diags.push(Diagnostic::error(Code::E002, Span::point(id, 0), "x"));
        }
        assert_eq!(diags.len(), MAX_DIAGNOSTICS_PER_FILE + 1);
        assert_eq!(diags.as_slice().last().map(|d| d.code), Some(Code::E033));
    }
}

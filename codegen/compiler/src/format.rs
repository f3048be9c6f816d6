//! The canonical schema formatter behind `bebopc fmt`.
//!
//! [`format_source`] re-lays a schema out and changes nothing else: the formatted text has
//! exactly the same tokens, spelled exactly as written (hex stays hex, string escapes and
//! quotes stay as written, deprecated aliases stay), and exactly the same comments, each still
//! attached to the token it was attached to, so documentation and everything compiled from
//! the schema are unchanged. Only whitespace moves. Before returning, the result is lexed
//! again and compared with the input token by token and comment by comment; a difference
//! (a bug of the formatter) is a [`FormatError::Internal`], never a silently changed schema.
//! A file with errors is not formatted: [`FormatError::Syntax`] carries the diagnostics of the
//! lexer and parser (syntax errors, and the few rules checked while parsing, such as tag
//! ranges and enum value expressions); later checks (names, types) do not matter here.
//!
//! # The style
//!
//! - One statement per line: `edition`, `package`, each `import`, each definition, field,
//!   enum member, union branch, service method, decorator-definition entry (`targets`,
//!   `multiple`, each `param`, `validate`, `export`).
//! - Bodies are always written on several lines, indented by [`FormatOptions::indent`]
//!   spaces per level (4 by default); an empty body with no comment in it is `{}`.
//! - Each decorator on its own line, directly before what it decorates, at its indentation
//!   (the layout nearly every reference fixture uses):
//!   `@deprecated("use B")` / `B = 1;`. A decorator whose arguments would make its line longer
//!   than [`FormatOptions::line_width`] (or that has comments between its arguments) gets one
//!   argument per line. Nothing else is wrapped: other long lines (a method, a long `with`
//!   list, `in [...]` values) are left long.
//! - Spacing: `name: Type`, `name(1): Type`, `enum Name : uint8 {`, `A = 1 << 2;`,
//!   `@range(min: 0, max: 10)`, `param min!: int32 = 0 in [0, 1]`, `map[string, int32]`,
//!   `Type[]`, `byte[16]`, `Get(Request): stream Response;`, `with A, B {`, `targets = A | B`;
//!   no space before `;`, `,`, `)`, `]`, or after `(`, `[`, `@`, `#`, a unary `-` or `~`.
//! - Every comment is kept, in its place: a comment after a token on the same line stays
//!   there (one space before it); a comment on its own line stays on its own line, indented
//!   like the code it precedes (comments before a `}` like the body's contents), and code that
//!   followed a block comment on its line (`/* note */ x: int32;`) still does. A comment
//!   between a definition's modifiers and its keyword (documentation after `mut`, which is
//!   where it must be to document the definition) puts the keyword on a line of its own. The
//!   continuation lines of a block comment (`/* */`, `/** */`) move with its first line when
//!   they were indented at least as much, so ` * ` columns stay aligned; otherwise they are
//!   copied as written. Trailing whitespace is removed from line comments and blank lines in
//!   block comments; a block comment's other text is copied as written.
//! - Blank lines: a run of blank lines becomes one; blank lines are kept between statements
//!   and between comments (where the author had one), and removed at the start and the end of
//!   the file and of a body, between a decorator and what it decorates, and inside a
//!   statement. No blank line is added.
//! - Lua blocks (`validate [[ ... ]]`, `export [[ ... ]]`), string and byte-string literals
//!   (also those spanning lines) are copied verbatim: their lines are not re-indented.
//! - Any other comment between the tokens of one statement, when it ends its line, puts the
//!   rest of the statement on further lines (indented one level more); tokens never move
//!   across a comment.
//! - The output uses `\n` line endings, ends with one newline (an empty file stays empty) and
//!   drops a byte order mark.
//!
//! ```
//! use bebopc::format::{format_source, FormatOptions};
//! use bebopc::source::SourceId;
//!
//! let messy = "struct  Point{x:float32;   // across\n\n\n  y : float32;}";
//! let tidy = format_source(SourceId(0), messy, &FormatOptions::default()).unwrap();
//! assert_eq!(tidy, "struct Point {\n    x: float32; // across\n\n    y: float32;\n}\n");
//! // Formatting is idempotent.
//! assert_eq!(format_source(SourceId(0), &tidy, &FormatOptions::default()).unwrap(), tidy);
//! ```

use std::fmt;

use crate::diag::Diagnostic;
use crate::lexer::{Lexed, Token, TokenKind, TriviaKind, lex};
use crate::parser::parse;
use crate::source::SourceId;

/// Layout settings (`format:` in `bebop.yml`, `--indent` and `--line-width` of `bebopc fmt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatOptions {
    /// Spaces per indentation level (default 4).
    pub indent: usize,
    /// The longest line wanted (default 100); only decorator argument lists are wrapped to
    /// stay within it.
    pub line_width: usize,
}

impl FormatOptions {
    /// The largest accepted [`FormatOptions::indent`].
    pub const MAX_INDENT: usize = 16;
}

impl Default for FormatOptions {
    fn default() -> Self {
        FormatOptions {
            indent: 4,
            line_width: 100,
        }
    }
}

/// Why a schema was not formatted.
#[derive(Clone, Debug)]
pub enum FormatError {
    /// The schema has syntax errors: every diagnostic of the lexer and parser (errors and
    /// warnings), positioned in the given source.
    Syntax(Vec<Diagnostic>),
    /// The formatter could not lay the schema out without changing it (a bug of the
    /// formatter; the text says where). The input is to be left as it is.
    Internal(String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Syntax(d) => {
                let errors = d.iter().filter(|d| d.is_error()).count();
                write!(
                    f,
                    "the schema has {errors} syntax error(s); it was not formatted"
                )
            }
            FormatError::Internal(why) => write!(f, "internal formatter error: {why}"),
        }
    }
}

impl std::error::Error for FormatError {}

/// Formats one schema. `source` names the file in the diagnostics of a
/// [`FormatError::Syntax`].
///
/// ```
/// use bebopc::format::{format_source, FormatError, FormatOptions};
/// use bebopc::source::SourceId;
///
/// let options = FormatOptions { indent: 2, ..FormatOptions::default() };
/// let out = format_source(SourceId(0), "enum E{A=0x0;B=A|0x2;}", &options).unwrap();
/// assert_eq!(out, "enum E {\n  A = 0x0;\n  B = A | 0x2;\n}\n");
///
/// match format_source(SourceId(0), "struct A { x int32; }", &options) {
///     Err(FormatError::Syntax(diagnostics)) => assert_eq!(diagnostics[0].code.as_str(), "E010"),
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn format_source(
    source: SourceId,
    text: &str,
    options: &FormatOptions,
) -> Result<String, FormatError> {
    let parsed = parse(source, text);
    if parsed.diagnostics.iter().any(Diagnostic::is_error) {
        return Err(FormatError::Syntax(parsed.diagnostics));
    }
    let lexed = lex(source, text);
    let out = Formatter::new(text, &lexed, options)
        .and_then(Formatter::run)
        .map_err(FormatError::Internal)?;
    verify(source, text, &lexed, &out).map_err(FormatError::Internal)?;
    Ok(out)
}

/// Every comment of a schema, in order, with its markers, as the formatter sees them. A
/// schema and its formatted text have the same comments, up to the whitespace that
/// [`format_source`] changes (see [`normalize_comment`]). The text must lex without errors.
///
/// ```
/// use bebopc::format::comments;
///
/// let found = comments("/// A.\nstruct A { /* x */ x: int32; // y\n}\n");
/// assert_eq!(found, vec!["/// A.", "/* x */", "// y"]);
/// ```
pub fn comments(text: &str) -> Vec<&str> {
    let lexed = lex(SourceId(0), text);
    let mut out = Vec::new();
    for gap in gaps(text, &lexed.tokens).unwrap_or_default() {
        for c in gap.trailing.iter().chain(&gap.leading) {
            out.push(text.get(c.start..c.end).unwrap_or(""));
        }
    }
    out
}

/// A comment's text with the whitespace [`format_source`] may change taken out: trailing
/// whitespace of a line comment; `\r\n` and the indentation of every line of a block comment.
///
/// ```
/// use bebopc::format::normalize_comment;
///
/// assert_eq!(normalize_comment("// a  "), "// a");
/// assert_eq!(normalize_comment("/**\r\n     * a\n  \n     */"), "/**\n* a\n\n*/");
/// ```
pub fn normalize_comment(text: &str) -> String {
    if text.starts_with("//") {
        return text.trim_end_matches([' ', '\t']).to_string();
    }
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    text.split('\n')
        .map(|l| l.trim_start_matches([' ', '\t']))
        .collect::<Vec<_>>()
        .join("\n")
}

// ---- the text between tokens ---------------------------------------------------------

/// A comment in the text between two tokens.
#[derive(Clone, Debug, Default)]
struct Comment {
    start: usize,
    end: usize,
    /// `//` (ends at the end of the line) rather than `/* */`.
    line: bool,
    /// Line breaks between the previous comment or token and this one.
    newlines_before: usize,
    /// Where the comment's line starts, when only spaces and tabs precede the comment on it.
    line_start: Option<usize>,
}

/// What is between the previous token and a token: comments on the previous token's line
/// (which the lexer attaches to the previous token), then comments on lines of their own
/// (attached to this token).
#[derive(Clone, Debug, Default)]
struct Gap {
    trailing: Vec<Comment>,
    leading: Vec<Comment>,
    /// Line breaks between the last comment (or the previous token) and this token.
    newlines_before_token: usize,
}

impl Gap {
    fn has_comments(&self) -> bool {
        !self.trailing.is_empty() || !self.leading.is_empty()
    }
}

/// The gap before every token (the last is the one before the end of the file).
fn gaps(text: &str, tokens: &[Token]) -> Result<Vec<Gap>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(tokens.len());
    let mut start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    for (i, t) in tokens.iter().enumerate() {
        let end = t.span.start as usize;
        if end < start || end > bytes.len() {
            return Err(format!("token {i} is out of order"));
        }
        out.push(scan_gap(bytes, start, end, i > 0)?);
        start = t.span.end as usize;
    }
    Ok(out)
}

fn scan_gap(bytes: &[u8], start: usize, end: usize, after_token: bool) -> Result<Gap, String> {
    let mut gap = Gap::default();
    let mut newlines = 0usize;
    // Whether a line break was seen since the previous token (comments before the first one
    // belong to the previous token).
    let mut broke = !after_token;
    // Where the current line starts, when only blanks precede on it: at the start of the
    // file (after a byte order mark), or after a line break of this gap. After a token
    // (which never ends with a line break) there is code before the gap on its line.
    let mut line_start = start;
    let mut only_blanks = !after_token;
    let mut i = start;
    while i < end {
        match bytes.get(i) {
            Some(b' ' | b'\t') => i += 1,
            Some(b'\n') => {
                newlines += 1;
                broke = true;
                i += 1;
                line_start = i;
                only_blanks = true;
            }
            Some(b'\r') => {
                newlines += 1;
                broke = true;
                i += 1;
                if bytes.get(i) == Some(&b'\n') {
                    i += 1;
                }
                line_start = i;
                only_blanks = true;
            }
            Some(b'/') if matches!(bytes.get(i + 1), Some(b'/' | b'*')) => {
                let line = bytes.get(i + 1) == Some(&b'/');
                let c_start = i;
                i += 2;
                if line {
                    while i < end && !matches!(bytes.get(i), Some(b'\n' | b'\r')) {
                        i += 1;
                    }
                } else {
                    loop {
                        if i >= end {
                            return Err(format!("unterminated block comment at byte {c_start}"));
                        }
                        if bytes.get(i) == Some(&b'*') && bytes.get(i + 1) == Some(&b'/') {
                            i += 2;
                            break;
                        }
                        i += 1;
                    }
                }
                let comment = Comment {
                    start: c_start,
                    end: i,
                    line,
                    newlines_before: newlines,
                    line_start: only_blanks.then_some(line_start),
                };
                newlines = 0;
                only_blanks = false;
                if broke {
                    gap.leading.push(comment);
                } else {
                    gap.trailing.push(comment);
                }
            }
            _ => return Err(format!("unexpected text between tokens at byte {i}")),
        }
    }
    gap.newlines_before_token = newlines;
    Ok(gap)
}

// ---- output --------------------------------------------------------------------------

/// What goes before a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sep {
    /// Nothing: `a;`, `f(`.
    None,
    /// One space.
    Space,
    /// One space, or a new line at the current indentation when comments come between
    /// (`mut` / `/// doc` / `struct S {`: a modifier, a definition's doc, its keyword).
    Soft,
    /// A new line at the current indentation.
    Line {
        /// A blank line of the input may be kept before the first comment (or before the
        /// token when there is no comment).
        blank_first: bool,
        /// A blank line of the input may be kept between the last comment and the token.
        blank_token: bool,
        /// Comments before the token are indented this many levels more (the contents of a
        /// body before its `}`).
        comment_extra: usize,
    },
}

/// A new line where no blank line is kept.
const LINE: Sep = Sep::Line {
    blank_first: false,
    blank_token: false,
    comment_extra: 0,
};

/// The start of a statement: blank lines are kept unless it is the first of its body.
fn stmt(first: bool) -> Sep {
    Sep::Line {
        blank_first: !first,
        blank_token: true,
        comment_extra: 0,
    }
}

/// The kinds of braced bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    Enum,
    Fields,
    Union,
    Service,
    Decorator,
}

type R = Result<(), String>;

struct Formatter<'a> {
    text: &'a str,
    lexed: &'a Lexed,
    gaps: Vec<Gap>,
    /// The next token to write.
    pos: usize,
    out: String,
    /// Indentation level of the current statements.
    level: usize,
    indent: usize,
    line_width: usize,
    /// The output ends with a line comment: a line break must follow.
    after_line_comment: bool,
}

impl<'a> Formatter<'a> {
    fn new(text: &'a str, lexed: &'a Lexed, options: &FormatOptions) -> Result<Self, String> {
        Ok(Formatter {
            text,
            lexed,
            gaps: gaps(text, &lexed.tokens)?,
            pos: 0,
            out: String::with_capacity(text.len() + text.len() / 4),
            level: 0,
            indent: options.indent.min(FormatOptions::MAX_INDENT),
            line_width: options.line_width,
            after_line_comment: false,
        })
    }

    fn run(mut self) -> Result<String, String> {
        self.file()?;
        let end = self.out.trim_end_matches([' ', '\t', '\n']).len();
        self.out.truncate(end);
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        Ok(self.out)
    }

    // ---- tokens ----

    fn token(&self, n: usize) -> Option<&'a Token> {
        self.lexed.tokens.get(self.pos + n)
    }

    fn kind(&self, n: usize) -> TokenKind {
        self.token(n).map_or(TokenKind::Eof, |t| t.kind)
    }

    fn word(&self, n: usize) -> &'a str {
        match self.token(n) {
            Some(t) if t.kind == TokenKind::Ident => self.lexed.text(t),
            _ => "",
        }
    }

    fn unexpected(&self, what: &str) -> String {
        let at = self
            .token(0)
            .map_or(self.text.len(), |t| t.span.start as usize);
        format!(
            "unexpected {} at byte {at} (expected {what})",
            self.kind(0).describe()
        )
    }

    /// Writes the next token after `sep` (and the comments before it).
    fn tok(&mut self, sep: Sep) -> R {
        if self.kind(0) == TokenKind::Eof {
            return Err(self.unexpected("more tokens"));
        }
        self.emit(sep);
        Ok(())
    }

    /// Writes the next token, which must be a `kind`.
    fn expect(&mut self, kind: TokenKind, sep: Sep) -> R {
        if self.kind(0) != kind {
            return Err(self.unexpected(kind.describe()));
        }
        self.tok(sep)
    }

    fn opt(&mut self, kind: TokenKind, sep: Sep) -> R {
        if self.kind(0) == kind {
            self.tok(sep)?;
        }
        Ok(())
    }

    // ---- writing ----

    fn newline(&mut self, blank: bool) {
        self.after_line_comment = false;
        if self.out.is_empty() {
            return;
        }
        let end = self.out.trim_end_matches([' ', '\t']).len();
        self.out.truncate(end);
        self.out.push('\n');
        if blank {
            self.out.push('\n');
        }
    }

    fn push_indent(&mut self, level: usize) {
        if self.out.is_empty() {
            return;
        }
        for _ in 0..level * self.indent {
            self.out.push(' ');
        }
    }

    /// Writes a comment; `indent` is the indentation it is written at when it starts a line.
    fn push_comment(&mut self, c: &Comment, indent: Option<usize>) {
        let raw = self.text.get(c.start..c.end).unwrap_or("");
        if c.line {
            self.out.push_str(raw.trim_end_matches([' ', '\t']));
            self.after_line_comment = true;
            return;
        }
        let raw = raw.replace("\r\n", "\n").replace('\r', "\n");
        let mut lines = raw.split('\n');
        self.out.push_str(lines.next().unwrap_or(""));
        let rest: Vec<&str> = lines.collect();
        // The indentation of the comment's first line in the input, when it starts its line.
        let old = c
            .line_start
            .and_then(|s| self.text.get(s..c.start))
            .filter(|_| indent.is_some());
        let shift = old.filter(|old| {
            rest.iter()
                .all(|l| l.trim_start_matches([' ', '\t']).is_empty() || l.starts_with(old))
        });
        let new = " ".repeat(indent.unwrap_or(0) * self.indent);
        for line in rest {
            self.out.push('\n');
            if line.trim_start_matches([' ', '\t']).is_empty() {
                continue;
            }
            match shift {
                Some(old) => {
                    self.out.push_str(&new);
                    self.out.push_str(line.get(old.len()..).unwrap_or(""));
                }
                None => self.out.push_str(line),
            }
        }
        self.after_line_comment = false;
    }

    /// Writes the comments before the next token, then the token after `sep`.
    fn emit(&mut self, sep: Sep) {
        let gap = self
            .gaps
            .get_mut(self.pos)
            .map(std::mem::take)
            .unwrap_or_default();
        let sep = match sep {
            Sep::Soft if !gap.leading.is_empty() || gap.trailing.last().is_some_and(|c| c.line) => {
                LINE
            }
            Sep::Soft => Sep::Space,
            other => other,
        };
        let level = self.level;
        let cont = level + 1;
        let mut after_comment = false;
        for c in &gap.trailing {
            self.out.push(' ');
            self.push_comment(c, None);
            after_comment = true;
        }
        let (line, blank_first, blank_token, comment_level) = match sep {
            Sep::Line {
                blank_first,
                blank_token,
                comment_extra,
            } => (true, blank_first, blank_token, level + comment_extra),
            _ => (false, false, false, cont),
        };
        for (k, c) in gap.leading.iter().enumerate() {
            if k == 0 || c.newlines_before > 0 || self.after_line_comment {
                let blank = c.newlines_before >= 2 && if k == 0 { blank_first } else { line };
                self.newline(blank);
                self.push_indent(comment_level);
                self.push_comment(c, Some(comment_level));
            } else {
                self.out.push(' ');
                self.push_comment(c, None);
            }
            after_comment = true;
        }
        let has_leading = !gap.leading.is_empty();
        // `/* note */ field: T;` on one line stays so (not before a `}`).
        let inline_comment =
            has_leading && gap.newlines_before_token == 0 && comment_level == level;
        if (line && !inline_comment)
            || self.after_line_comment
            || (has_leading && gap.newlines_before_token > 0)
        {
            let blank_allowed = if has_leading {
                blank_token
            } else {
                blank_first
            };
            let blank = line && blank_allowed && gap.newlines_before_token >= 2;
            self.newline(blank);
            self.push_indent(if line { level } else { cont });
        } else if after_comment || sep == Sep::Space {
            self.out.push(' ');
        }
        if let Some(t) = self.lexed.tokens.get(self.pos) {
            self.out.push_str(self.lexed.text(t));
        }
        self.after_line_comment = false;
        self.pos += 1;
    }

    // ---- the grammar ----

    fn file(&mut self) -> R {
        use TokenKind::*;
        let mut first = true;
        loop {
            match self.kind(0) {
                Eof => break,
                Semi => self.tok(if first { stmt(true) } else { Sep::None })?,
                Edition => {
                    self.tok(stmt(first))?;
                    self.expect(Eq, Sep::Space)?;
                    self.expect(String, Sep::Space)?;
                    self.opt(Semi, Sep::None)?;
                }
                Package => {
                    self.tok(stmt(first))?;
                    self.expect(Ident, Sep::Space)?;
                    while self.kind(0) == Dot {
                        self.tok(Sep::None)?;
                        self.tok(Sep::None)?;
                    }
                    self.opt(Semi, Sep::None)?;
                }
                Import => {
                    self.tok(stmt(first))?;
                    self.expect(String, Sep::Space)?;
                    self.opt(Semi, Sep::None)?;
                }
                _ => self.definition(stmt(first))?,
            }
            first = false;
        }
        // The comments at the end of the file.
        self.emit(Sep::Line {
            blank_first: !first,
            blank_token: false,
            comment_extra: 0,
        });
        Ok(())
    }

    /// Decorators, then a definition.
    fn definition(&mut self, sep: Sep) -> R {
        let sep = self.decorators(sep)?;
        if self.kind(0) == TokenKind::Hash {
            self.decorator_definition(sep)
        } else {
            self.item(sep)
        }
    }

    /// Writes the decorators at the current token, if any; returns what goes before the
    /// token after them.
    fn decorators(&mut self, mut sep: Sep) -> Result<Sep, String> {
        while self.kind(0) == TokenKind::At {
            self.decorator(sep)?;
            sep = LINE;
        }
        Ok(sep)
    }

    fn decorator(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        // Find its extent: `@ a . b ( ... )`.
        let mut n = 1;
        while self.kind(n) == Ident && self.kind(n + 1) == Dot {
            n += 2;
        }
        let has_args = self.kind(n + 1) == LParen;
        let mut last = n;
        if has_args {
            last = n + 1;
            while !matches!(self.kind(last), RParen | Eof) {
                last += 1;
            }
        }
        let broken = has_args && {
            let range = self.pos..=self.pos + last;
            let commented = (self.pos + 1..=self.pos + last)
                .any(|k| self.gaps.get(k).is_some_and(Gap::has_comments));
            let width: usize = self.lexed.tokens.get(range).map_or(0, |tokens| {
                tokens
                    .iter()
                    .map(|t| {
                        self.lexed.text(t).chars().count()
                            + usize::from(matches!(t.kind, Comma | Colon))
                    })
                    .sum()
            });
            commented || self.level * self.indent + width > self.line_width
        };
        self.expect(At, sep)?;
        self.path(Sep::None)?;
        if !has_args {
            return Ok(());
        }
        self.expect(LParen, Sep::None)?;
        if broken {
            self.level += 1;
        }
        let mut first = true;
        loop {
            if self.kind(0) == RParen {
                if broken {
                    self.level -= 1;
                    return self.tok(LINE);
                }
                return self.tok(Sep::None);
            }
            let arg_sep = match (broken, first) {
                (true, _) => LINE,
                (false, true) => Sep::None,
                (false, false) => Sep::Space,
            };
            first = false;
            let named =
                (self.kind(0) == Ident || self.kind(0).is_keyword()) && self.kind(1) == Colon;
            if named {
                self.tok(arg_sep)?;
                self.tok(Sep::None)?;
                self.literal(Sep::Space)?;
            } else {
                self.literal(arg_sep)?;
            }
            match self.kind(0) {
                Comma => self.tok(Sep::None)?,
                RParen => {}
                _ => return Err(self.unexpected("',' or ')'")),
            }
        }
    }

    fn literal(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        match self.kind(0) {
            Minus => {
                self.tok(sep)?;
                match self.kind(0) {
                    Number | Ident => self.tok(Sep::None),
                    _ => Err(self.unexpected("a number")),
                }
            }
            True | False | Number | String | Bytes | Ident => self.tok(sep),
            _ => Err(self.unexpected("a literal")),
        }
    }

    /// `A.B.C`
    fn path(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        self.expect(Ident, sep)?;
        while self.kind(0) == Dot && self.kind(1) == Ident {
            self.tok(Sep::None)?;
            self.tok(Sep::None)?;
        }
        Ok(())
    }

    fn ty(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        match self.kind(0) {
            Map => {
                self.tok(sep)?;
                self.expect(LBracket, Sep::None)?;
                self.ty(Sep::None)?;
                self.expect(Comma, Sep::None)?;
                self.ty(Sep::Space)?;
                self.expect(RBracket, Sep::None)?;
            }
            Ident => self.path(sep)?,
            _ => return Err(self.unexpected("a type")),
        }
        while self.kind(0) == LBracket {
            self.tok(Sep::None)?;
            self.opt(Number, Sep::None)?;
            self.expect(RBracket, Sep::None)?;
        }
        Ok(())
    }

    fn is_def_keyword(&self, n: usize) -> bool {
        use TokenKind::*;
        matches!(
            self.kind(n),
            Enum | Struct | Message | Union | Service | Const | Mut
        )
    }

    /// The parser's rule for a nested definition (rather than a field or branch) in a body.
    fn nested_definition_starts(&self) -> bool {
        use TokenKind::*;
        match self.kind(0) {
            Enum | Struct | Message | Union | Mut => !matches!(self.kind(1), Colon | LParen),
            Hash => true,
            Export | Local => self.is_def_keyword(1) || self.word(1) == "readonly",
            Service | Const => self.kind(1) == Ident,
            Ident => self.word(0) == "readonly" && self.is_def_keyword(1),
            _ => false,
        }
    }

    /// A definition after its decorators: modifiers, keyword, name, body.
    fn item(&mut self, mut sep: Sep) -> R {
        use TokenKind::*;
        loop {
            let modifier = match self.kind(0) {
                Export | Local | Mut => true,
                Ident => self.word(0) == "readonly" && self.is_def_keyword(1),
                _ => false,
            };
            if !modifier {
                break;
            }
            self.tok(sep)?;
            sep = Sep::Soft;
        }
        match self.kind(0) {
            Enum => {
                self.tok(sep)?;
                self.tok(Sep::Space)?;
                if self.kind(0) == Colon {
                    self.tok(Sep::Space)?;
                    self.ty(Sep::Space)?;
                }
                self.body(Body::Enum)
            }
            Struct | Message => {
                self.tok(sep)?;
                self.tok(Sep::Space)?;
                self.body(Body::Fields)
            }
            Union => {
                self.tok(sep)?;
                self.tok(Sep::Space)?;
                self.body(Body::Union)
            }
            Service => {
                self.tok(sep)?;
                self.tok(Sep::Space)?;
                if self.kind(0) == With {
                    self.tok(Sep::Space)?;
                    self.path(Sep::Space)?;
                    while self.kind(0) == Comma {
                        self.tok(Sep::None)?;
                        self.path(Sep::Space)?;
                    }
                }
                self.body(Body::Service)
            }
            Const => {
                self.tok(sep)?;
                self.ty(Sep::Space)?;
                self.tok(Sep::Space)?;
                self.expect(Eq, Sep::Space)?;
                self.literal(Sep::Space)?;
                self.expect(Semi, Sep::None)
            }
            _ => Err(self.unexpected("a definition")),
        }
    }

    /// `{ ... }`
    fn body(&mut self, body: Body) -> R {
        use TokenKind::*;
        self.expect(LBrace, Sep::Space)?;
        let commented = self.gaps.get(self.pos).is_some_and(Gap::has_comments);
        if self.kind(0) == RBrace && !commented {
            return self.tok(Sep::None);
        }
        self.level += 1;
        let mut first = true;
        loop {
            match self.kind(0) {
                RBrace => break,
                Eof => return Err(self.unexpected("'}'")),
                Semi => self.tok(if first { stmt(true) } else { Sep::None })?,
                Comma if body == Body::Decorator => {
                    self.tok(if first { stmt(true) } else { Sep::None })?;
                }
                _ => {
                    let sep = stmt(first);
                    match body {
                        Body::Enum => self.enum_member(sep)?,
                        Body::Fields => self.field_or_definition(sep)?,
                        Body::Union => self.branch_or_definition(sep)?,
                        Body::Service => self.method(sep)?,
                        Body::Decorator => self.decorator_entry(sep)?,
                    }
                }
            }
            first = false;
        }
        self.level -= 1;
        self.tok(Sep::Line {
            blank_first: !first,
            blank_token: false,
            comment_extra: 1,
        })
    }

    fn enum_member(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        let sep = self.decorators(sep)?;
        self.tok(sep)?;
        self.expect(Eq, Sep::Space)?;
        let mut prev = Eq;
        let mut unary = false;
        loop {
            let k = self.kind(0);
            if k == Semi {
                return self.tok(Sep::None);
            }
            if !matches!(
                k,
                Number | Ident | LParen | RParen | Pipe | Amp | Shl | Shr | Plus | Minus | Tilde
            ) {
                return Err(self.unexpected("an enum value expression"));
            }
            let glued = matches!(prev, LParen | Tilde) || (prev == Minus && unary);
            let sep = if prev == Eq || (!glued && k != RParen) {
                Sep::Space
            } else {
                Sep::None
            };
            unary = k == Minus && !matches!(prev, Number | Ident | RParen);
            self.tok(sep)?;
            prev = k;
        }
    }

    fn field_or_definition(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        let sep = self.decorators(sep)?;
        if self.nested_definition_starts() {
            return self.item(sep);
        }
        self.tok(sep)?;
        if self.kind(0) == LParen {
            self.tok(Sep::None)?;
            self.expect(Number, Sep::None)?;
            self.expect(RParen, Sep::None)?;
        }
        self.expect(Colon, Sep::None)?;
        self.ty(Sep::Space)?;
        self.expect(Semi, Sep::None)
    }

    fn branch_or_definition(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        let mut sep = self.decorators(sep)?;
        if self.nested_definition_starts() {
            return self.item(sep);
        }
        if matches!(self.kind(0), Export | Local) {
            self.tok(sep)?;
            sep = Sep::Soft;
        }
        self.tok(sep)?;
        self.expect(LParen, Sep::None)?;
        self.expect(Number, Sep::None)?;
        self.expect(RParen, Sep::None)?;
        self.expect(Colon, Sep::None)?;
        match self.kind(0) {
            LBrace => self.body(Body::Fields)?,
            Mut | Message => {
                self.tok(Sep::Space)?;
                self.body(Body::Fields)?;
            }
            _ => self.ty(Sep::Space)?,
        }
        self.expect(Semi, Sep::None)
    }

    fn method(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        let sep = self.decorators(sep)?;
        self.tok(sep)?;
        self.expect(LParen, Sep::None)?;
        if self.kind(0) == Stream {
            self.tok(Sep::None)?;
            self.ty(Sep::Space)?;
        } else {
            self.ty(Sep::None)?;
        }
        self.expect(RParen, Sep::None)?;
        self.expect(Colon, Sep::None)?;
        if self.kind(0) == Stream {
            self.tok(Sep::Space)?;
        }
        self.ty(Sep::Space)?;
        self.expect(Semi, Sep::None)
    }

    /// `#decorator(name) { ... }`
    fn decorator_definition(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        self.expect(Hash, sep)?;
        self.expect(Ident, Sep::None)?;
        self.expect(LParen, Sep::None)?;
        self.tok(Sep::None)?;
        self.expect(RParen, Sep::None)?;
        self.body(Body::Decorator)
    }

    fn decorator_entry(&mut self, sep: Sep) -> R {
        use TokenKind::*;
        match (self.kind(0), self.word(0)) {
            (Ident, "targets") => {
                self.tok(sep)?;
                self.expect(Eq, Sep::Space)?;
                self.expect(Ident, Sep::Space)?;
                while self.kind(0) == Pipe {
                    self.tok(Sep::Space)?;
                    self.expect(Ident, Sep::Space)?;
                }
                Ok(())
            }
            (Ident, "multiple") => {
                self.tok(sep)?;
                self.expect(Eq, Sep::Space)?;
                match self.kind(0) {
                    True | False => self.tok(Sep::Space),
                    _ => Err(self.unexpected("'true' or 'false'")),
                }
            }
            (Ident, "param") => {
                self.tok(sep)?;
                self.tok(Sep::Space)?;
                match self.kind(0) {
                    Bang | Question => self.tok(Sep::None)?,
                    _ => return Err(self.unexpected("'!' or '?'")),
                }
                self.expect(Colon, Sep::None)?;
                self.expect(Ident, Sep::Space)?;
                if self.kind(0) == Eq {
                    self.tok(Sep::Space)?;
                    self.literal(Sep::Space)?;
                }
                if self.word(0) == "in" {
                    self.tok(Sep::Space)?;
                    self.expect(LBracket, Sep::Space)?;
                    let mut first = true;
                    while self.kind(0) != RBracket {
                        self.literal(if first { Sep::None } else { Sep::Space })?;
                        first = false;
                        match self.kind(0) {
                            Comma => self.tok(Sep::None)?,
                            RBracket => {}
                            _ => return Err(self.unexpected("',' or ']'")),
                        }
                    }
                    self.tok(Sep::None)?;
                }
                Ok(())
            }
            (Ident, "validate") | (Export, _) => {
                self.tok(sep)?;
                self.expect(LuaBlock, Sep::Space)
            }
            _ => Err(self.unexpected("a decorator definition entry")),
        }
    }
}

// ---- the safety net ------------------------------------------------------------------

/// Checks that `out` has the tokens and comments of `text`, each comment attached as before.
fn verify(source: SourceId, text: &str, before: &Lexed, out: &str) -> R {
    let after = lex(source, out);
    if let Some(d) = after.diagnostics.first() {
        return Err(format!(
            "the formatted text does not lex: {} at byte {}",
            d.message, d.span.start
        ));
    }
    if before.tokens.len() != after.tokens.len() {
        return Err(format!(
            "{} tokens became {}",
            before.tokens.len(),
            after.tokens.len()
        ));
    }
    let trivia = |lexed: &Lexed, src: &str, t: &Token| -> Vec<(TriviaKind, String)> {
        lexed
            .leading_trivia(t)
            .iter()
            .map(|c| {
                let raw = src
                    .get(c.span.start as usize..c.span.end as usize)
                    .unwrap_or("");
                (c.kind, normalize_comment(raw))
            })
            .collect()
    };
    for (a, b) in before.tokens.iter().zip(&after.tokens) {
        if a.kind != b.kind || before.text(a) != after.text(b) {
            return Err(format!(
                "the token at byte {} ({}) changed",
                a.span.start,
                a.kind.describe()
            ));
        }
        if trivia(before, text, a) != trivia(&after, out, b)
            || before.doc_before(a) != after.doc_before(b)
        {
            return Err(format!(
                "the comments before the token at byte {} changed",
                a.span.start
            ));
        }
    }
    let old = gaps(text, &before.tokens)?;
    let new = gaps(out, &after.tokens)?;
    let texts = |src: &str, list: &[Comment]| -> Vec<String> {
        list.iter()
            .map(|c| normalize_comment(src.get(c.start..c.end).unwrap_or("")))
            .collect()
    };
    for (k, (a, b)) in old.iter().zip(&new).enumerate() {
        if texts(text, &a.trailing) != texts(out, &b.trailing)
            || texts(text, &a.leading) != texts(out, &b.leading)
        {
            let at = before.tokens.get(k).map_or(0, |t| t.span.start);
            return Err(format!("the comments before byte {at} changed"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(src: &str) -> String {
        match format_source(SourceId(0), src, &FormatOptions::default()) {
            Ok(s) => s,
            Err(e) => panic!("{e}: {e:?}\n{src}"),
        }
    }

    #[test]
    fn empty_and_comment_only_files() {
        assert_eq!(f(""), "");
        assert_eq!(f("\n\n  \n"), "");
        assert_eq!(
            f("/** I am an empty file */"),
            "/** I am an empty file */\n"
        );
        assert_eq!(f("\u{feff}// a\n\n\n// b  \n"), "// a\n\n// b\n");
    }

    #[test]
    fn header_and_blank_lines() {
        assert_eq!(
            f(
                "edition=\"2026\"\npackage a . b;\n\n\n\nimport 'x.bop'   import \"y.bop\";\nstruct A{}"
            ),
            "edition = \"2026\"\npackage a.b;\n\nimport 'x.bop'\nimport \"y.bop\";\nstruct A {}\n"
        );
    }

    #[test]
    fn decorators_get_their_own_lines() {
        assert_eq!(
            f("@flags enum E:uint8{@deprecated(\"x\") A=1;NONE=0;}"),
            "@flags\nenum E : uint8 {\n    @deprecated(\"x\")\n    A = 1;\n    NONE = 0;\n}\n"
        );
        let long = format!(
            "struct S {{ @range(min: 0, max: 100, label: \"{}\") x: int32; }}",
            "x".repeat(80)
        );
        let out = f(&long);
        assert!(
            out.contains("    @range(\n        min: 0,\n        max: 100,\n        label: \""),
            "{out}"
        );
        assert!(out.contains("\"\n    )\n    x: int32;\n"), "{out}");
    }

    #[test]
    fn expressions_and_literals() {
        assert_eq!(
            f("enum E{A=0;B=-1;C=~(A|B)<<2;D=(1+2)-  -3;}"),
            "enum E {\n    A = 0;\n    B = -1;\n    C = ~(A | B) << 2;\n    D = (1 + 2) - -3;\n}\n"
        );
        assert_eq!(
            f("const float64 X=-inf;const byte[] B=b'\\x00';const int32 H=0XfF;"),
            "const float64 X = -inf;\nconst byte[] B = b'\\x00';\nconst int32 H = 0XfF;\n"
        );
    }

    #[test]
    fn unions_services_and_nesting() {
        assert_eq!(
            f(
                "union U{A(1):{x:int32;};export B(2):mut{};C(3):message{y(1):map[string,int32[]];};D(4):Point;}struct Point{}"
            ),
            "union U {\n    A(1): {\n        x: int32;\n    };\n    export B(2): mut {};\n    C(3): message {\n        y(1): map[string, int32[]];\n    };\n    D(4): Point;\n}\nstruct Point {}\n"
        );
        assert_eq!(
            f("service S with A,B{Get(stream Req):stream Res;}"),
            "service S with A, B {\n    Get(stream Req): stream Res;\n}\n"
        );
    }

    #[test]
    fn decorator_definitions_keep_lua_verbatim() {
        let src = "#decorator(r){targets=FIELD|METHOD multiple=true\nparam min!:int32=0 in[0,1]\n  validate [[\n  if x then\n error() end ]]}";
        assert_eq!(
            f(src),
            "#decorator(r) {\n    targets = FIELD | METHOD\n    multiple = true\n    param min!: int32 = 0 in [0, 1]\n    validate [[\n  if x then\n error() end ]]\n}\n"
        );
    }

    #[test]
    fn comments_stay_attached() {
        assert_eq!(
            f("struct A { // open\n  x: // odd\n int32; /* b */ y: int32;\n\n\n  // last\n\n}"),
            "struct A { // open\n    x: // odd\n        int32; /* b */\n    y: int32;\n\n    // last\n}\n"
        );
        assert_eq!(
            f("  /**\n   * Doc.\n   */\nstruct A {}"),
            "/**\n * Doc.\n */\nstruct A {}\n"
        );
        // Documentation between modifiers and the keyword stays attached to the keyword.
        assert_eq!(
            f("mut\n  /// Doc.\n  struct A { x: int32; }"),
            "mut\n/// Doc.\nstruct A {\n    x: int32;\n}\n"
        );
        assert_eq!(
            f("union U { export // c\n A(1): {}; }"),
            "union U {\n    export // c\n    A(1): {};\n}\n"
        );
        assert_eq!(
            f("struct A {\n\t/* a\n  b */\n x: int32;}"),
            "struct A {\n    /* a\n  b */\n    x: int32;\n}\n"
        );
    }

    #[test]
    fn syntax_errors_are_not_formatted() {
        match format_source(SourceId(3), "struct {", &FormatOptions::default()) {
            Err(FormatError::Syntax(d)) => assert_eq!(d[0].span.source, SourceId(3)),
            other => panic!("{other:?}"),
        }
    }
}

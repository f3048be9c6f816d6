//! `SourceCodeInfo` for descriptors (`--emit-source-info`): where each definition, field,
//! enum member, union branch and service method is written, and the comments before it.
//!
//! The bytes match the reference compiler's for the same schema (SPEC.md, "source info"), so
//! its rules are followed here even where they are odd; each is checked against the reference's
//! output by `tests/golden_descriptors.rs`.
//!
//! Locations come in the order the reference writes them: a definition, then its fields
//! (members, branches, methods), then the definitions nested in it, depth first. Each has a
//! `path` of (field tag, index) pairs leading from the `SchemaDescriptor`:
//!
//! | element | path |
//! |---|---|
//! | `definitions[i]` | `[5, i]` |
//! | `nested[k]` of a definition | parent + `[5, k]` (tag 5 again, as the reference writes it, not `nested`'s own tag 7) |
//! | a field of a struct or message, a union branch, a service method | parent + `[1, j]` |
//! | an enum member | parent + `[2, j]` |
//!
//! A member of a definition nested two levels deep or more (a parent path longer than four)
//! has no path at all, as in the reference. A schema without definitions has no source info.
//!
//! `span` is `[start_line, start_column, end_line, end_column]`, 1-based, columns counted in
//! bytes (a tab is one column), the end column just past the element's last byte. A
//! definition's span starts after its decorators and its `export`, `local` and `mut`
//! modifiers; a member's (field, enum member, branch, method) where it is written, decorators
//! and modifiers included.
//! (The reference counts every newline inside a string literal twice; this compiler counts it
//! once, the one deliberate difference.)
//!
//! Comments are read from the trivia before the element's first token, the way the
//! reference's scanner splits it: a token's trailing trivia runs to the end of its line (the
//! newline included), and everything after that up to the next token is that token's
//! leading trivia. In the leading trivia, comments form groups separated by blank lines; a
//! group's text is its *last* comment; `leading_comments` is the last group and
//! `detached_comments` the groups before it. `trailing_comments` is the first `//` or `/* */`
//! comment (not a doc comment) in the trailing trivia of the element's first token. A comment's
//! text is without its `///`, `//` or `/* */` markers (a `/** */` comment keeps its markers),
//! leading spaces and tabs, and trailing whitespace.

use bebop_descriptor::{Location, SourceCodeInfo};

use crate::lexer::{self, TokenKind};
use crate::model::{DefBody, DefId, Model, Schema};
use crate::source::{SourceFile, SourceMap, Span};

/// The most comment groups the reference keeps before one element.
const MAX_GROUPS: usize = 32;

/// Builds the source info of one schema of `model`; `None` for a schema without
/// definitions.
pub fn source_code_info(
    model: &Model,
    schema: &Schema,
    sources: &SourceMap,
) -> Option<SourceCodeInfo> {
    if schema.definitions.is_empty() {
        return None;
    }
    let file = sources.get(schema.source)?;
    let comments = FileComments::new(file, schema.source);
    let mut out = Vec::new();
    for (i, id) in schema.definitions.iter().enumerate() {
        let mut path = vec![5, i as i32];
        definition_locations(model, *id, &mut path, &comments, &mut out);
    }
    Some(SourceCodeInfo {
        locations: Some(out),
    })
}

fn definition_locations(
    model: &Model,
    id: DefId,
    path: &mut Vec<i32>,
    comments: &FileComments<'_>,
    out: &mut Vec<Location>,
) {
    let def = model.def(id);
    out.push(comments.location(Some(path.clone()), def.span, true));
    let (tag, spans): (i32, Vec<Span>) = match &def.body {
        DefBody::Struct(s) => (1, s.fields.iter().map(|f| f.span).collect()),
        DefBody::Message(m) => (1, m.fields.iter().map(|f| f.span).collect()),
        DefBody::Enum(e) => (2, e.members.iter().map(|m| m.span).collect()),
        DefBody::Union(u) => (1, u.branches.iter().map(|b| b.span).collect()),
        DefBody::Service(s) => (1, s.methods.iter().map(|m| m.span).collect()),
        DefBody::Const(_) | DefBody::Decorator(_) => (0, Vec::new()),
    };
    for (j, span) in spans.into_iter().enumerate() {
        let member_path = (path.len() <= 4).then(|| {
            let mut p = path.clone();
            p.extend([tag, j as i32]);
            p
        });
        out.push(comments.location(member_path, span, false));
    }
    for (k, nested) in def.nested.iter().enumerate() {
        path.extend([5, k as i32]);
        definition_locations(model, *nested, path, comments, out);
        path.truncate(path.len() - 2);
    }
}

/// What lies between two tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TriviaKind {
    /// Spaces and tabs.
    Whitespace,
    /// One line break (`\n`, `\r\n` or `\r`).
    Newline,
    /// `// ...`
    Line,
    /// `/// ...`, or `/** ... */`
    Doc,
    /// `/* ... */`
    Block,
}

#[derive(Clone, Copy, Debug)]
struct Trivia {
    kind: TriviaKind,
    start: u32,
    end: u32,
}

/// A file's tokens and lines, to place elements and find the comments around them.
struct FileComments<'a> {
    file: &'a SourceFile,
    /// `(start, end, kind)` of every token but the end of file, in order.
    tokens: Vec<(u32, u32, TokenKind)>,
    /// Byte offsets where lines start (after `\n`, or a `\r` not followed by `\n`), as
    /// [`SourceFile`] counts them.
    line_starts: Vec<u32>,
}

impl<'a> FileComments<'a> {
    fn new(file: &'a SourceFile, source: crate::source::SourceId) -> FileComments<'a> {
        let lexed = lexer::lex(source, file.text());
        let tokens = lexed
            .tokens
            .iter()
            .filter(|t| t.kind != TokenKind::Eof)
            .map(|t| (t.span.start, t.span.end, t.kind))
            .collect();
        let bytes = file.text().as_bytes();
        let mut line_starts = vec![0u32];
        for (i, b) in bytes.iter().enumerate() {
            let next = bytes.get(i + 1);
            if *b == b'\n' || (*b == b'\r' && next != Some(&b'\n')) {
                line_starts.push(i as u32 + 1);
            }
        }
        FileComments {
            file,
            tokens,
            line_starts,
        }
    }

    /// The 1-based line of `offset`.
    fn line(&self, offset: u32) -> u32 {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i.max(1) as u32,
        }
    }

    /// The 1-based column of `offset`, in bytes.
    fn column(&self, offset: u32) -> u32 {
        let line = self.line(offset) as usize;
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        offset.saturating_sub(start) + 1
    }

    /// The index of the token starting at `offset`, else of the last token before it.
    fn token_at(&self, offset: u32) -> Option<usize> {
        match self.tokens.binary_search_by_key(&offset, |t| t.0) {
            Ok(k) => Some(k),
            Err(0) => (!self.tokens.is_empty()).then_some(0),
            Err(k) => Some(k - 1),
        }
    }

    /// The first token of an element written at `start`, past its decorators (`@name`,
    /// `@a.b(args)`) and modifiers (`export`, `local`, `mut`).
    fn element_start(&self, start: u32) -> Option<usize> {
        let mut k = self.token_at(start)?;
        loop {
            match self.tokens.get(k).map(|t| t.2) {
                Some(TokenKind::Export | TokenKind::Local | TokenKind::Mut) => k += 1,
                Some(TokenKind::At) => {
                    k += 1;
                    // The decorator's (dotted) name.
                    while let Some(TokenKind::Ident | TokenKind::Dot) =
                        self.tokens.get(k).map(|t| t.2)
                    {
                        k += 1;
                    }
                    if self.tokens.get(k).map(|t| t.2) == Some(TokenKind::LParen) {
                        let mut depth = 0usize;
                        while let Some(t) = self.tokens.get(k) {
                            k += 1;
                            match t.2 {
                                TokenKind::LParen => depth += 1,
                                TokenKind::RParen => {
                                    depth = depth.saturating_sub(1);
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
                _ => return Some(k),
            }
        }
    }

    /// The location of an element written at `span`; a definition's starts after its
    /// decorators and modifiers (`definition`), a member's where it is written.
    fn location(&self, path: Option<Vec<i32>>, span: Span, definition: bool) -> Location {
        let first = if definition {
            self.element_start(span.start)
        } else {
            self.token_at(span.start)
        };
        let start = first
            .and_then(|k| self.tokens.get(k))
            .map_or(span.start, |t| t.0.min(span.end));
        let (leading, detached) = first.map(|k| self.leading(k)).unwrap_or_default();
        Location {
            path,
            span: Some([
                self.line(start) as i32,
                self.column(start) as i32,
                self.line(span.end) as i32,
                self.column(span.end) as i32,
            ]),
            leading_comments: leading,
            trailing_comments: first.and_then(|k| self.trailing(k)),
            detached_comments: (!detached.is_empty()).then_some(detached),
        }
    }

    /// The trivia in `[from, to)`, which holds nothing else.
    fn trivia(&self, from: u32, to: u32) -> Vec<Trivia> {
        let bytes = self.file.text().as_bytes();
        let to = (to as usize).min(bytes.len());
        let mut i = from as usize;
        let mut out = Vec::new();
        while i < to {
            let start = i;
            let kind = match bytes[i] {
                b' ' | b'\t' => {
                    while i < to && matches!(bytes[i], b' ' | b'\t') {
                        i += 1;
                    }
                    TriviaKind::Whitespace
                }
                b'\r' => {
                    i += if bytes.get(i + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    };
                    TriviaKind::Newline
                }
                b'\n' => {
                    i += 1;
                    TriviaKind::Newline
                }
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    let doc = bytes.get(i + 2) == Some(&b'/');
                    while i < to && !matches!(bytes[i], b'\n' | b'\r') {
                        i += 1;
                    }
                    if doc {
                        TriviaKind::Doc
                    } else {
                        TriviaKind::Line
                    }
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    let doc = bytes.get(i + 2) == Some(&b'*') && bytes.get(i + 3) != Some(&b'/');
                    i += 2;
                    while i < to && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                        i += 1;
                    }
                    i = (i + 2).min(to);
                    if doc {
                        TriviaKind::Doc
                    } else {
                        TriviaKind::Block
                    }
                }
                _ => {
                    // Not trivia (cannot happen between two tokens): stop.
                    break;
                }
            };
            out.push(Trivia {
                kind,
                start: start as u32,
                end: i as u32,
            });
        }
        out
    }

    /// The trivia after token `k` up to the next token.
    fn after(&self, k: usize) -> Vec<Trivia> {
        let Some(token) = self.tokens.get(k) else {
            return Vec::new();
        };
        let to = self
            .tokens
            .get(k + 1)
            .map_or(self.file.text().len() as u32, |t| t.0);
        self.trivia(token.1, to)
    }

    /// Token `k`'s trailing trivia: up to the end of its line, the newline included.
    fn trailing_trivia(&self, k: usize) -> Vec<Trivia> {
        let mut out = Vec::new();
        for t in self.after(k) {
            out.push(t);
            if t.kind == TriviaKind::Newline {
                break;
            }
        }
        out
    }

    /// Token `k`'s leading trivia: after the previous token's trailing trivia.
    fn leading_trivia(&self, k: usize) -> Vec<Trivia> {
        let Some(token) = self.tokens.get(k) else {
            return Vec::new();
        };
        let from = match k.checked_sub(1) {
            None => 0,
            Some(prev) => self
                .trailing_trivia(prev)
                .last()
                .map_or_else(|| self.tokens[prev].1, |t| t.end),
        };
        self.trivia(from, token.0)
    }

    /// The leading comment and the detached comment groups before token `k`.
    fn leading(&self, k: usize) -> (Option<String>, Vec<String>) {
        let mut groups: Vec<String> = Vec::new();
        let mut new_group = true;
        let mut newlines = 0;
        for t in self.leading_trivia(k) {
            match t.kind {
                TriviaKind::Newline => {
                    newlines += 1;
                    if newlines >= 2 && !groups.is_empty() {
                        new_group = true;
                    }
                }
                TriviaKind::Line | TriviaKind::Doc | TriviaKind::Block => {
                    let text = self.comment_text(t);
                    if !text.is_empty() && groups.len() < MAX_GROUPS {
                        match groups.last_mut() {
                            Some(last) if !new_group => *last = text,
                            _ => {
                                groups.push(text);
                                new_group = false;
                            }
                        }
                    }
                    newlines = 0;
                }
                TriviaKind::Whitespace => {}
            }
        }
        let leading = groups.pop();
        (leading, groups)
    }

    /// The first `//` or `/* */` comment in token `k`'s trailing trivia.
    fn trailing(&self, k: usize) -> Option<String> {
        self.trailing_trivia(k)
            .into_iter()
            .find(|t| matches!(t.kind, TriviaKind::Line | TriviaKind::Block))
            .map(|t| self.comment_text(t))
            .filter(|text| !text.is_empty())
    }

    /// A comment without its markers and the blanks around it.
    fn comment_text(&self, t: Trivia) -> String {
        let raw = self
            .file
            .text()
            .get(t.start as usize..t.end as usize)
            .unwrap_or("");
        let inner = match t.kind {
            TriviaKind::Doc => raw.strip_prefix("///").unwrap_or(raw),
            TriviaKind::Line => raw.strip_prefix("//").unwrap_or(raw),
            TriviaKind::Block if raw.len() >= 4 => raw.get(2..raw.len() - 2).unwrap_or(""),
            _ => raw,
        };
        inner
            .trim_start_matches([' ', '\t'])
            .trim_end_matches([' ', '\t', '\n', '\r'])
            .to_string()
    }
}

#[cfg(test)]
mod tests;

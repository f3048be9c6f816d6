//! `SourceCodeInfo` for descriptors (`--emit-source-info`): where each definition, field,
//! enum member, union branch and service method is written, and the comments around it.
//!
//! Locations come in the order the reference compiler writes them: a definition, then its
//! fields (members, branches, methods), then the definitions nested in it, depth first.
//! Each has a `path` of (field tag, index) pairs leading from the `SchemaDescriptor`:
//!
//! | element | path |
//! |---|---|
//! | `definitions[i]` | `[5, i]` |
//! | a field of a struct or message, a union branch, a service method | parent + `[1, j]` |
//! | an enum member | parent + `[2, j]` |
//! | `nested[k]` of a definition | parent + `[7, k]` |
//!
//! (Struct, message, union and service bodies keep their list at tag 1, enums theirs at tag
//! 2; the body's own tag in `DefinitionDescriptor` is left out, as `bebop/descriptor.bop`
//! documents. For nested definitions the reference writes tag 5 again; this compiler writes
//! `nested`'s real tag, 7.)
//!
//! `span` is `[start_line, start_column, end_line, end_column]`, 1-based, tabs advancing the
//! column to the next multiple of 4, the end column just past the element's last character.
//! `leading_comments` is the group of comment lines directly above the element (no blank line
//! between), `detached_comments` the earlier groups between it and the previous token,
//! `trailing_comments` the comment after the element on its last line. Comment markers
//! (`//`, `///`, `/* */`, `/** */`, a leading `*` on block comment lines) are removed and
//! lines trimmed; a group's lines are joined with `\n`.

use bebop_descriptor::{Location, SourceCodeInfo};

use crate::lexer::{self, TokenKind};
use crate::model::{DefBody, DefId, Model, Schema};
use crate::source::{SourceFile, SourceMap, Span};

/// Builds the source info of one schema of `model`.
pub fn source_code_info(model: &Model, schema: &Schema, sources: &SourceMap) -> SourceCodeInfo {
    let Some(file) = sources.get(schema.source) else {
        return SourceCodeInfo {
            locations: Some(Vec::new()),
        };
    };
    let comments = FileComments::new(file, schema.source);
    let mut out = Vec::new();
    for (i, id) in schema.definitions.iter().enumerate() {
        let mut path = vec![5, i as i32];
        definition_locations(model, *id, &mut path, &comments, &mut out);
    }
    SourceCodeInfo {
        locations: Some(out),
    }
}

fn definition_locations(
    model: &Model,
    id: DefId,
    path: &mut Vec<i32>,
    comments: &FileComments<'_>,
    out: &mut Vec<Location>,
) {
    let def = model.def(id);
    out.push(comments.location(path.clone(), def.span));
    let (tag, spans): (i32, Vec<Span>) = match &def.body {
        DefBody::Struct(s) => (1, s.fields.iter().map(|f| f.span).collect()),
        DefBody::Message(m) => (1, m.fields.iter().map(|f| f.span).collect()),
        DefBody::Enum(e) => (2, e.members.iter().map(|m| m.span).collect()),
        DefBody::Union(u) => (1, u.branches.iter().map(|b| b.span).collect()),
        DefBody::Service(s) => (1, s.methods.iter().map(|m| m.span).collect()),
        DefBody::Const(_) | DefBody::Decorator(_) => (0, Vec::new()),
    };
    for (j, span) in spans.into_iter().enumerate() {
        let mut p = path.clone();
        p.extend([tag, j as i32]);
        out.push(comments.location(p, span));
    }
    for (k, nested) in def.nested.iter().enumerate() {
        path.extend([7, k as i32]);
        definition_locations(model, *nested, path, comments, out);
        path.truncate(path.len() - 2);
    }
}

/// A file's token boundaries, to find the comments between tokens.
struct FileComments<'a> {
    file: &'a SourceFile,
    /// `(start, end, kind)` of every token but the end of file, in order.
    tokens: Vec<(u32, u32, TokenKind)>,
    /// Byte offsets where lines start (after `\n`, or a `\r` not followed by `\n`), as
    /// [`SourceFile`] counts them.
    line_starts: Vec<u32>,
}

/// One comment found between two tokens.
struct Comment {
    start_line: u32,
    end_line: u32,
    text: String,
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

    /// The 1-based column of `offset`, tabs advancing to the next multiple of 4.
    fn column(&self, offset: u32) -> u32 {
        let line = self.line(offset) as usize;
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0) as usize;
        let text = self.file.text().get(start..offset as usize).unwrap_or("");
        if text.bytes().all(|b| b.is_ascii() && b != b'\t') {
            return text.len() as u32 + 1;
        }
        let mut col = 0u32;
        for c in text.chars() {
            if c == '\t' {
                col = (col / 4 + 1) * 4;
            } else {
                col += 1;
            }
        }
        col + 1
    }

    fn location(&self, path: Vec<i32>, span: Span) -> Location {
        let (leading, detached) = self.leading(span.start);
        Location {
            path: Some(path),
            span: Some([
                self.line(span.start) as i32,
                self.column(span.start) as i32,
                self.line(span.end) as i32,
                self.column(span.end) as i32,
            ]),
            leading_comments: leading,
            trailing_comments: self.trailing(span.end),
            detached_comments: if detached.is_empty() {
                None
            } else {
                Some(detached)
            },
        }
    }

    /// Comments in the gap between the token ending at or before `start` and `start`.
    fn leading(&self, start: u32) -> (Option<String>, Vec<String>) {
        let Ok(k) = self.tokens.binary_search_by_key(&start, |t| t.0) else {
            return (None, Vec::new());
        };
        let (gap_start, prev_line) = match k.checked_sub(1).and_then(|p| self.tokens.get(p)) {
            Some(prev) => (prev.1, Some(self.line(prev.1))),
            None => (0, None),
        };
        let element_line = self.line(start);
        let mut groups: Vec<(u32, Vec<Comment>)> = Vec::new();
        for c in self.comments_in(gap_start, start) {
            if Some(c.start_line) == prev_line {
                continue; // a trailing comment of the previous element
            }
            match groups.last_mut() {
                Some((end, group)) if c.start_line <= *end + 1 => {
                    *end = c.end_line;
                    group.push(c);
                }
                _ => groups.push((c.end_line, vec![c])),
            }
        }
        let join = |group: &[Comment]| {
            group
                .iter()
                .map(|c| c.text.as_str())
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let leading = match groups.last() {
            Some((end, group)) if *end + 1 >= element_line => {
                let text = join(group);
                groups.pop();
                (!text.is_empty()).then_some(text)
            }
            _ => None,
        };
        let detached = groups
            .iter()
            .map(|(_, g)| join(g))
            .filter(|t| !t.is_empty())
            .collect();
        (leading, detached)
    }

    /// The first comment after the element's last token (and any `;` or `,` right after
    /// it) that starts on the element's last line.
    fn trailing(&self, end: u32) -> Option<String> {
        let mut k = self.tokens.binary_search_by_key(&end, |t| t.1).ok()?;
        let end_line = self.line(end);
        while let Some(next) = self.tokens.get(k + 1) {
            if matches!(next.2, TokenKind::Semi | TokenKind::Comma) && self.line(next.0) == end_line
            {
                k += 1;
            } else {
                break;
            }
        }
        let from = self.tokens.get(k)?.1;
        let to = self
            .tokens
            .get(k + 1)
            .map(|t| t.0)
            .unwrap_or(self.file.text().len() as u32);
        self.comments_in(from, to)
            .into_iter()
            .find(|c| c.start_line == end_line)
            .map(|c| c.text)
            .filter(|t| !t.is_empty())
    }

    /// The comments in `[from, to)`, which holds only whitespace and comments.
    fn comments_in(&self, from: u32, to: u32) -> Vec<Comment> {
        let text = self.file.text();
        let bytes = text.as_bytes();
        let to = (to as usize).min(bytes.len());
        let mut i = from as usize;
        let mut out = Vec::new();
        while i < to {
            if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'/') {
                let start = i;
                while i < to && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
                let raw = text.get(start..i).unwrap_or("");
                let body = raw
                    .strip_prefix("///")
                    .or_else(|| raw.strip_prefix("//"))
                    .unwrap_or(raw);
                out.push(Comment {
                    start_line: self.line(start as u32),
                    end_line: self.line(start as u32),
                    text: body.trim().to_string(),
                });
            } else if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                let start = i;
                i += 2;
                while i < to && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(to);
                let raw = text.get(start..i).unwrap_or("");
                out.push(Comment {
                    start_line: self.line(start as u32),
                    end_line: self.line(i.saturating_sub(1) as u32),
                    text: block_text(raw),
                });
            } else {
                i += 1;
            }
        }
        out
    }
}

/// The text of a `/* */` or `/** */` comment: markers removed, each line trimmed and
/// stripped of a leading `*`, blank first and last lines dropped.
fn block_text(raw: &str) -> String {
    let inner = raw
        .strip_prefix("/**")
        .or_else(|| raw.strip_prefix("/*"))
        .unwrap_or(raw);
    let inner = inner.strip_suffix("*/").unwrap_or(inner);
    let lines: Vec<&str> = inner
        .lines()
        .map(|l| {
            let l = l.trim();
            let l = l.strip_prefix('*').map(str::trim_start).unwrap_or(l);
            l.trim_end()
        })
        .collect();
    let first = lines.iter().position(|l| !l.is_empty());
    let last = lines.iter().rposition(|l| !l.is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Compiler;

    fn locations(text: &str) -> Vec<Location> {
        let result = Compiler::new().compile_source("s.bop", text);
        assert!(!result.has_errors(), "{}", result.render_terminal(false));
        let model = result.model.as_ref().expect("model");
        source_code_info(model, &model.schemas[0], &result.sources)
            .locations
            .expect("locations")
    }

    #[test]
    fn paths_spans_and_order() {
        let locs = locations(
            "struct A {\n    x: int32;\n\ty: int32;\n}\nenum E { Z = 0; O = 1; }\nunion U { P(1): { a: int32; }; }\n",
        );
        let paths: Vec<Vec<i32>> = locs.iter().map(|l| l.path.clone().expect("path")).collect();
        assert_eq!(
            paths,
            vec![
                vec![5, 0],
                vec![5, 0, 1, 0],
                vec![5, 0, 1, 1],
                vec![5, 1],
                vec![5, 1, 2, 0],
                vec![5, 1, 2, 1],
                vec![5, 2],
                vec![5, 2, 1, 0],
                vec![5, 2, 7, 0],
                vec![5, 2, 7, 0, 1, 0],
            ]
        );
        assert_eq!(locs[0].span, Some([1, 1, 4, 2]));
        assert_eq!(locs[1].span.map(|s| s[..2].to_vec()), Some(vec![2, 5]));
        // A tab advances to column 5 (the next multiple of 4, 1-based).
        assert_eq!(locs[2].span.map(|s| s[..2].to_vec()), Some(vec![3, 5]));
    }

    #[test]
    fn lines_and_columns_agree_with_the_source_map_without_tabs() {
        let text = "a\r\nbé c\rd\n\nxyz é\u{1F600} w";
        let file = SourceFile::new("x.bop", text.to_string());
        let fc = FileComments::new(&file, crate::source::SourceId(0));
        for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let lc = file.line_col(offset as u32);
            assert_eq!(fc.line(offset as u32), lc.line, "line at {offset}");
            assert_eq!(fc.column(offset as u32), lc.column, "column at {offset}");
        }
        let tabbed = SourceFile::new("t.bop", "\tx\n ab\ty".to_string());
        let fc = FileComments::new(&tabbed, crate::source::SourceId(0));
        assert_eq!(fc.column(1), 5);
        assert_eq!(fc.column(6), 4);
        assert_eq!(
            fc.column(7),
            5,
            "' ab' is 3 columns, the tab goes to the 4th"
        );
        assert_eq!(fc.column(8), 6);
    }

    #[test]
    fn leading_trailing_and_detached_comments() {
        let locs = locations(
            "// file header\n\n/* detached\n * block */\n\n/// Doc one\n/// Doc two\nstruct A {\n    // about x\n    x: int32; // x trailing\n    y: int32;\n} // after A\n",
        );
        assert_eq!(
            locs[0].leading_comments.as_deref(),
            Some("Doc one\nDoc two")
        );
        assert_eq!(
            locs[0].detached_comments,
            Some(vec![
                "file header".to_string(),
                "detached\nblock".to_string()
            ])
        );
        assert_eq!(locs[0].trailing_comments.as_deref(), Some("after A"));
        assert_eq!(locs[1].leading_comments.as_deref(), Some("about x"));
        assert_eq!(locs[1].trailing_comments.as_deref(), Some("x trailing"));
        // The trailing comment of x does not lead y.
        assert_eq!(locs[2].leading_comments, None);
        assert_eq!(locs[2].trailing_comments, None);
    }
}

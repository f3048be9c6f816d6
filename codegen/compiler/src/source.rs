//! Source files, byte spans and line/column lookup.
//!
//! Every schema the compiler reads is stored once in a [`SourceMap`] and named by a
//! [`SourceId`]. Positions are byte offsets into the file's text, carried as a [`Span`];
//! [`SourceMap::line_col`] turns an offset into a 1-based line and column for people.
//!
//! ```
//! use bebopc::source::SourceMap;
//!
//! let mut map = SourceMap::new();
//! let id = map.add("a.bop", "struct A {\n  x: int32;\n}\n".to_string());
//! let pos = map.line_col(id, 13);
//! assert_eq!((pos.line, pos.column), (2, 3));
//! ```

use std::fmt;

/// Names one file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(pub u32);

/// A byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// The file.
    pub source: SourceId,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` in `source`.
    pub const fn new(source: SourceId, start: u32, end: u32) -> Span {
        Span { source, start, end }
    }

    /// An empty span at `offset`.
    pub const fn point(source: SourceId, offset: u32) -> Span {
        Span {
            source,
            start: offset,
            end: offset,
        }
    }

    /// The span covering both `self` and `other` (which must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            source: self.source,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// Length in bytes.
    pub const fn len(&self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the span covers no bytes.
    pub const fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// A 1-based line and column. Columns count characters (not bytes) from the line start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    /// Line number, starting at 1.
    pub line: u32,
    /// Column number in characters, starting at 1.
    pub column: u32,
}

impl fmt::Display for LineCol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One source file: the path as given and its text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    path: String,
    /// Where the file opens from the working directory, when that differs from `path`
    /// (an import found in an include directory).
    display: Option<String>,
    text: String,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// A file from its path (as given by the user) and text.
    pub fn new(path: impl Into<String>, text: String) -> SourceFile {
        let line_starts = compute_line_starts(&text);
        SourceFile {
            path: path.into(),
            display: None,
            text,
            line_starts,
        }
    }

    /// The path as given (for an import, as the schema names it: relative to its include
    /// directory).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The path to show the user: one that opens from the working directory (an import
    /// found in an include directory is shown under that directory).
    pub fn display_path(&self) -> &str {
        self.display.as_deref().unwrap_or(&self.path)
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Number of lines (a file without a final newline still counts its last line).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The 1-based line and column of a byte offset. Offsets past the end clamp to the end;
    /// offsets inside a multi-byte character count that character.
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = (offset as usize).min(self.text.len());
        let line_index = match self.line_starts.binary_search(&(offset as u32)) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(line_index).copied().unwrap_or(0) as usize;
        let column = self
            .text
            .get(start..)
            .map(|rest| {
                rest.char_indices()
                    .take_while(|(i, _)| start + i < offset)
                    .count()
            })
            .unwrap_or(0);
        LineCol {
            line: line_index as u32 + 1,
            column: column as u32 + 1,
        }
    }

    /// The text of a 1-based line, without its line terminator.
    pub fn line_text(&self, line: u32) -> &str {
        let index = (line as usize).saturating_sub(1);
        let Some(&start) = self.line_starts.get(index) else {
            return "";
        };
        let end = self
            .line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len() as u32);
        let raw = self.text.get(start as usize..end as usize).unwrap_or("");
        raw.trim_end_matches(['\n', '\r'])
    }

    /// The byte offset where a 1-based line starts.
    pub fn line_start(&self, line: u32) -> u32 {
        let index = (line as usize).saturating_sub(1);
        self.line_starts
            .get(index)
            .copied()
            .unwrap_or(self.text.len() as u32)
    }

    /// The text covered by a span of this file (empty when out of range).
    pub fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }
}

fn compute_line_starts(text: &str) -> Vec<u32> {
    let mut starts = vec![0u32];
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => starts.push(i as u32 + 1),
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i as u32 + 1),
            _ => {}
        }
        i += 1;
    }
    starts
}

/// All files of one compilation.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, path: impl Into<String>, text: String) -> SourceId {
        let id = SourceId(self.files.len() as u32);
        self.files.push(SourceFile::new(path, text));
        id
    }

    /// The file with this id.
    ///
    /// # Panics
    /// When the id did not come from this map.
    pub fn file(&self, id: SourceId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// The file with this id, if it exists.
    pub fn get(&self, id: SourceId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// Line and column of an offset in a file (1:1 when the id is unknown).
    pub fn line_col(&self, id: SourceId, offset: u32) -> LineCol {
        self.get(id)
            .map(|f| f.line_col(offset))
            .unwrap_or(LineCol { line: 1, column: 1 })
    }

    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        self.get(span.source).map(|f| f.slice(span)).unwrap_or("")
    }

    /// The path of a file (empty when the id is unknown).
    pub fn path(&self, id: SourceId) -> &str {
        self.get(id).map(|f| f.path()).unwrap_or("")
    }

    /// The path to show for a file in messages ([`SourceFile::display_path`]; empty when the
    /// id is unknown).
    pub fn display_path(&self, id: SourceId) -> &str {
        self.get(id).map(|f| f.display_path()).unwrap_or("")
    }

    /// Sets where a file opens from the working directory, when that differs from its path.
    pub fn set_display_path(&mut self, id: SourceId, display: impl Into<String>) {
        if let Some(f) = self.files.get_mut(id.0 as usize) {
            let display = display.into();
            f.display = (display != f.path).then_some(display);
        }
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file was added.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Iterates over `(id, file)`.
    pub fn iter(&self) -> impl Iterator<Item = (SourceId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (SourceId(i as u32), f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let f = SourceFile::new("x", "ab\nçd\r\nef\rg".to_string());
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(2), LineCol { line: 1, column: 3 });
        assert_eq!(f.line_col(3), LineCol { line: 2, column: 1 });
        // 'ç' is two bytes: the 'd' after it is column 2.
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 2 });
        assert_eq!(f.line_col(8), LineCol { line: 3, column: 1 });
        assert_eq!(f.line_col(11), LineCol { line: 4, column: 1 });
        assert_eq!(f.line_text(2), "çd");
        assert_eq!(f.line_text(3), "ef");
        assert_eq!(f.line_count(), 4);
        // Past the end clamps.
        assert_eq!(f.line_col(1000), LineCol { line: 4, column: 2 });
        assert_eq!(f.line_text(99), "");
    }

    #[test]
    fn spans_join_and_slice() {
        let mut map = SourceMap::new();
        let id = map.add("a.bop", "hello world".to_string());
        let a = Span::new(id, 0, 5);
        let b = Span::new(id, 6, 11);
        assert_eq!(map.slice(a.to(b)), "hello world");
        assert_eq!(a.len(), 5);
        assert!(Span::point(id, 3).is_empty());
        assert_eq!(map.path(id), "a.bop");
    }
}

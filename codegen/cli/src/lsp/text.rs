//! Positions and URIs: byte offsets of the compiler to LSP positions (0-based lines,
//! columns in UTF-16 code units) and back, and `file://` URIs to paths and back.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Position, Range, Uri};

/// Where each line of a text starts, to convert offsets and positions.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`. Lines end at `\n`, `\r\n` or a lone `\r`, as the compiler counts them.
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        let bytes = text.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
        }
        LineIndex { text, starts }
    }

    /// The LSP position of a byte offset (clamped to the text; an offset inside a character
    /// counts from that character's start).
    pub fn position(&self, offset: u32) -> Position {
        let offset = (offset as usize).min(self.text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.starts.get(line).copied().unwrap_or(0);
        let mut units = 0u32;
        if let Some(rest) = self.text.get(start..) {
            for (i, c) in rest.char_indices() {
                if start + i >= offset {
                    break;
                }
                units += c.len_utf16() as u32;
            }
        }
        Position::new(line as u32, units)
    }

    /// The LSP range of a byte span.
    pub fn range(&self, start: u32, end: u32) -> Range {
        Range::new(self.position(start), self.position(end.max(start)))
    }

    /// The byte offset of an LSP position: a line past the end is the end of the text, a
    /// column past the end of its line the end of the line, and a column inside a surrogate
    /// pair the start of that character.
    pub fn offset(&self, pos: Position) -> u32 {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len() as u32;
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .copied()
            .unwrap_or(self.text.len());
        let line = self.text.get(start..end).unwrap_or("");
        let line = line.trim_end_matches(['\n', '\r']);
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            let next = units + c.len_utf16() as u32;
            if next > pos.character {
                return (start + i) as u32;
            }
            units = next;
        }
        (start + line.len()) as u32
    }

    /// The range of the whole text.
    pub fn whole(&self) -> Range {
        Range::new(Position::new(0, 0), self.position(self.text.len() as u32))
    }
}

/// The path of a `file://` URI (percent escapes decoded); `None` for other schemes.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    // `file:///path` or `file://localhost/path`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = percent_decode(rest)?;
    String::from_utf8(bytes).ok().map(PathBuf::from)
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The `file://` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let text = path.to_str()?;
    let mut s = String::from("file://");
    if !text.starts_with('/') {
        s.push('/');
    }
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns() {
        // 'é' is 2 bytes and 1 UTF-16 unit; '😀' is 4 bytes and 2 units.
        let text = "aé😀b\r\nx\ry";
        let idx = LineIndex::new(text);
        assert_eq!(idx.position(0), Position::new(0, 0));
        assert_eq!(idx.position(1), Position::new(0, 1));
        assert_eq!(idx.position(3), Position::new(0, 2));
        assert_eq!(idx.position(7), Position::new(0, 4));
        assert_eq!(idx.position(10), Position::new(1, 0));
        assert_eq!(idx.position(12), Position::new(2, 0));
        assert_eq!(idx.offset(Position::new(0, 4)), 7);
        assert_eq!(
            idx.offset(Position::new(0, 3)),
            3,
            "inside the surrogate pair"
        );
        assert_eq!(idx.offset(Position::new(0, 99)), 8);
        assert_eq!(idx.offset(Position::new(9, 0)), text.len() as u32);
        assert_eq!(idx.position(999), Position::new(2, 1));
    }

    #[test]
    fn uris() {
        let p = Path::new("/tmp/a b/ü.bop");
        let uri = path_to_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%BC.bop");
        assert_eq!(uri_to_path(&uri).unwrap(), p);
        let other = Uri::from_str("untitled:Untitled-1").unwrap();
        assert_eq!(uri_to_path(&other), None);
    }
}

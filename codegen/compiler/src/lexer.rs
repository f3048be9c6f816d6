//! Splits schema text into tokens.
//!
//! Comments are kept as trivia attached to the following token so that the parser can
//! extract `///` and `/** */` documentation (see [`Lexed::doc_before`]). A comment on the same
//! line after a token belongs to that token and never documents the next item.
//!
//! String and byte-string escapes are decoded here; problems (unterminated strings and
//! comments, bad escapes, stray characters) become diagnostics and lexing goes on, so the
//! parser still sees the rest of the file.
//!
//! ```
//! use bebopc::lexer::{lex, TokenKind};
//! use bebopc::source::SourceId;
//!
//! let lexed = lex(SourceId(0), "const string S = \"a\\tb\";");
//! let kinds: Vec<_> = lexed.tokens.iter().map(|t| t.kind).collect();
//! assert_eq!(kinds[0], TokenKind::Const);
//! assert_eq!(lexed.string_value(&lexed.tokens[4]), Some("a\tb"));
//! assert!(lexed.diagnostics.is_empty());
//! ```

use crate::diag::{Code, Diagnostic};
use crate::source::{SourceId, Span};

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A name that is not a keyword.
    Ident,
    /// `enum`
    Enum,
    /// `struct`
    Struct,
    /// `message`
    Message,
    /// `union`
    Union,
    /// `service`
    Service,
    /// `const`
    Const,
    /// `mut`
    Mut,
    /// `export`
    Export,
    /// `local`
    Local,
    /// `map`
    Map,
    /// `array`
    Array,
    /// `stream`
    Stream,
    /// `import`
    Import,
    /// `edition`
    Edition,
    /// `package`
    Package,
    /// `true`
    True,
    /// `false`
    False,
    /// `with`
    With,
    /// A number as written (decimal, hex, float); the parser interprets it.
    Number,
    /// A string literal; its decoded value is in [`Lexed::string_value`].
    String,
    /// A byte-string literal `b"..."`; its bytes are in [`Lexed::bytes_value`].
    Bytes,
    /// A Lua block `[[ ... ]]`; its text is in [`Lexed::string_value`].
    LuaBlock,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `:`
    Colon,
    /// `;`
    Semi,
    /// `,`
    Comma,
    /// `.`
    Dot,
    /// `?`
    Question,
    /// `=`
    Eq,
    /// `@`
    At,
    /// `#`
    Hash,
    /// `!`
    Bang,
    /// `~`
    Tilde,
    /// `&`
    Amp,
    /// `|`
    Pipe,
    /// `^`
    Caret,
    /// `-`
    Minus,
    /// `+`
    Plus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `->`
    Arrow,
    /// `$`
    Dollar,
    /// End of input.
    Eof,
}

impl TokenKind {
    /// How the token is shown in messages.
    pub fn describe(self) -> &'static str {
        use TokenKind::*;
        match self {
            Ident => "identifier",
            Enum => "'enum'",
            Struct => "'struct'",
            Message => "'message'",
            Union => "'union'",
            Service => "'service'",
            Const => "'const'",
            Mut => "'mut'",
            Export => "'export'",
            Local => "'local'",
            Map => "'map'",
            Array => "'array'",
            Stream => "'stream'",
            Import => "'import'",
            Edition => "'edition'",
            Package => "'package'",
            True => "'true'",
            False => "'false'",
            With => "'with'",
            Number => "number",
            String => "string literal",
            Bytes => "byte string",
            LuaBlock => "Lua block",
            LParen => "'('",
            RParen => "')'",
            LBrace => "'{'",
            RBrace => "'}'",
            LBracket => "'['",
            RBracket => "']'",
            Lt => "'<'",
            Gt => "'>'",
            Shl => "'<<'",
            Shr => "'>>'",
            Colon => "':'",
            Semi => "';'",
            Comma => "','",
            Dot => "'.'",
            Question => "'?'",
            Eq => "'='",
            At => "'@'",
            Hash => "'#'",
            Bang => "'!'",
            Tilde => "'~'",
            Amp => "'&'",
            Pipe => "'|'",
            Caret => "'^'",
            Minus => "'-'",
            Plus => "'+'",
            Star => "'*'",
            Slash => "'/'",
            Arrow => "'->'",
            Dollar => "'$'",
            Eof => "end of file",
        }
    }

    /// Whether this is one of the reserved words.
    pub fn is_keyword(self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            Enum | Struct
                | Message
                | Union
                | Service
                | Const
                | Mut
                | Export
                | Local
                | Map
                | Array
                | Stream
                | Import
                | Edition
                | Package
                | True
                | False
                | With
        )
    }
}

/// The keyword for a word, if it is one.
pub fn keyword(word: &str) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match word {
        "enum" => Enum,
        "struct" => Struct,
        "message" => Message,
        "union" => Union,
        "service" => Service,
        "const" => Const,
        "mut" => Mut,
        "export" => Export,
        "local" => Local,
        "map" => Map,
        "array" => Array,
        "stream" => Stream,
        "import" => Import,
        "edition" => Edition,
        "package" => Package,
        "true" => True,
        "false" => False,
        "with" => With,
        _ => return None,
    })
}

/// One token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
    /// Index of the first comment before it in [`Lexed::trivia`].
    pub trivia_start: u32,
    /// One past the last comment before it.
    pub trivia_end: u32,
    /// Index into the literal values for strings, byte strings and Lua blocks.
    pub value: u32,
}

/// Kinds of comments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriviaKind {
    /// `// ...`
    Line,
    /// `/* ... */`
    Block,
    /// `/// ...`
    DocLine,
    /// `/** ... */`
    DocBlock,
}

/// A comment before a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trivia {
    /// Which kind.
    pub kind: TriviaKind,
    /// Where, including the comment markers.
    pub span: Span,
}

#[derive(Clone, Debug)]
enum Value {
    Text(String),
    Bytes(Vec<u8>),
}

/// The result of lexing one file.
#[derive(Clone, Debug)]
pub struct Lexed {
    /// The tokens, ending with [`TokenKind::Eof`].
    pub tokens: Vec<Token>,
    /// Comments, in order; each token names the range before it.
    pub trivia: Vec<Trivia>,
    /// Problems found.
    pub diagnostics: Vec<Diagnostic>,
    values: Vec<Value>,
    text: String,
}

impl Lexed {
    /// The decoded value of a string token or the text of a Lua block.
    pub fn string_value(&self, token: &Token) -> Option<&str> {
        match (token.kind, self.values.get(token.value as usize)) {
            (TokenKind::String | TokenKind::LuaBlock, Some(Value::Text(s))) => Some(s),
            _ => None,
        }
    }

    /// The bytes of a byte-string token.
    pub fn bytes_value(&self, token: &Token) -> Option<&[u8]> {
        match (token.kind, self.values.get(token.value as usize)) {
            (TokenKind::Bytes, Some(Value::Bytes(b))) => Some(b),
            _ => None,
        }
    }

    /// The source text of a token.
    pub fn text(&self, token: &Token) -> &str {
        self.text
            .get(token.span.start as usize..token.span.end as usize)
            .unwrap_or("")
    }

    /// The source text of a span of this file.
    pub fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    /// The comments directly before a token.
    pub fn leading_trivia(&self, token: &Token) -> &[Trivia] {
        self.trivia
            .get(token.trivia_start as usize..token.trivia_end as usize)
            .unwrap_or(&[])
    }

    /// The documentation carried by the doc comments directly before `token`: the last run
    /// of `///` lines (or one `/** */` block) not interrupted by an ordinary comment.
    /// `///` lines lose the marker and one space, blank lines are dropped, lines are joined
    /// with `\n`; a `/** */` block loses its markers and the leading ` * ` of each line.
    pub fn doc_before(&self, token: &Token) -> Option<String> {
        let trivia = self.leading_trivia(token);
        let mut first = trivia.len();
        for (i, t) in trivia.iter().enumerate().rev() {
            match t.kind {
                TriviaKind::DocLine | TriviaKind::DocBlock => first = i,
                TriviaKind::Line | TriviaKind::Block => break,
            }
        }
        let docs = trivia.get(first..)?;
        let head = docs.first()?;
        if head.kind == TriviaKind::DocBlock {
            return block_doc(self.slice(head.span));
        }
        let mut out = String::new();
        for t in docs {
            let raw = self.slice(t.span);
            let mut line = raw.strip_prefix("///").unwrap_or(raw);
            line = line.strip_prefix(' ').unwrap_or(line);
            let line = line.trim_end_matches([' ', '\t']);
            if line.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line);
        }
        if out.is_empty() { None } else { Some(out) }
    }

    /// Whether doc comments precede `token` (used to warn when they are not attached).
    pub fn has_doc_before(&self, token: &Token) -> bool {
        self.leading_trivia(token)
            .iter()
            .any(|t| matches!(t.kind, TriviaKind::DocLine | TriviaKind::DocBlock))
    }
}

fn block_doc(raw: &str) -> Option<String> {
    if raw.len() < 5 || !raw.ends_with("*/") {
        return None;
    }
    let inner = raw.get(3..raw.len() - 2)?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    let mut at_line_start = true;
    while chars.peek().is_some() {
        if at_line_start {
            while matches!(chars.peek(), Some(' ' | '\t')) {
                chars.next();
            }
            if chars.peek() == Some(&'*') {
                chars.next();
                if chars.peek() == Some(&' ') {
                    chars.next();
                }
            }
            at_line_start = false;
        }
        match chars.next() {
            Some('\r') => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
                at_line_start = true;
            }
            Some('\n') => {
                out.push('\n');
                at_line_start = true;
            }
            Some(c) => out.push(c),
            None => break,
        }
    }
    let trimmed = out.trim_end_matches([' ', '\t', '\n', '\r']);
    if trimmed.is_empty() {
        None
    } else {
        Some(trimmed.to_string())
    }
}

struct Lexer<'a> {
    source: SourceId,
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    tokens: Vec<Token>,
    trivia: Vec<Trivia>,
    values: Vec<Value>,
    diagnostics: Vec<Diagnostic>,
}

/// Lexes one file. `text` must already be valid UTF-8 (see
/// [`crate::compiler`] for how invalid files are rejected).
pub fn lex(source: SourceId, text: &str) -> Lexed {
    let mut lx = Lexer {
        source,
        text,
        bytes: text.as_bytes(),
        pos: 0,
        tokens: Vec::new(),
        trivia: Vec::new(),
        values: Vec::new(),
        diagnostics: Vec::new(),
    };
    // A byte order mark is not part of the schema.
    if text.starts_with('\u{feff}') {
        lx.pos = 3;
    }
    lx.run();
    Lexed {
        tokens: lx.tokens,
        trivia: lx.trivia,
        diagnostics: lx.diagnostics,
        values: lx.values,
        text: text.to_string(),
    }
}

impl<'a> Lexer<'a> {
    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.source, start as u32, end as u32)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.bytes.get(self.pos + n).copied()
    }

    fn error(&mut self, code: Code, start: usize, end: usize, message: impl Into<String>) {
        let span = self.span(start, end);
        self.diagnostics
            .push(Diagnostic::error(code, span, message));
    }

    fn run(&mut self) {
        loop {
            let trivia_start = self.trivia.len() as u32;
            self.skip_leading_trivia();
            let trivia_end = self.trivia.len() as u32;
            let Some(kind_and_value) = self.next_token() else {
                let span = self.span(self.bytes.len(), self.bytes.len());
                self.tokens.push(Token {
                    kind: TokenKind::Eof,
                    span,
                    trivia_start,
                    trivia_end,
                    value: 0,
                });
                return;
            };
            let (kind, start, value) = kind_and_value;
            let span = self.span(start, self.pos);
            self.tokens.push(Token {
                kind,
                span,
                trivia_start,
                trivia_end,
                value,
            });
            self.skip_trailing_trivia();
        }
    }

    fn skip_leading_trivia(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.peek_at(1) == Some(b'/') => self.line_comment(true),
                Some(b'/') if self.peek_at(1) == Some(b'*') => self.block_comment(true),
                _ => return,
            }
        }
    }

    /// Comments after a token on the same line belong to it; stop after the newline.
    fn skip_trailing_trivia(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\n') => {
                    self.pos += 1;
                    return;
                }
                Some(b'\r') => {
                    self.pos += 1;
                    if self.peek() == Some(b'\n') {
                        self.pos += 1;
                    }
                    return;
                }
                Some(b'/') if self.peek_at(1) == Some(b'/') => self.line_comment(false),
                Some(b'/') if self.peek_at(1) == Some(b'*') => self.block_comment(false),
                _ => return,
            }
        }
    }

    fn line_comment(&mut self, record: bool) {
        let start = self.pos;
        let doc = self.peek_at(2) == Some(b'/');
        while let Some(c) = self.peek() {
            if c == b'\n' || c == b'\r' {
                break;
            }
            self.pos += 1;
        }
        if record {
            let kind = if doc {
                TriviaKind::DocLine
            } else {
                TriviaKind::Line
            };
            let span = self.span(start, self.pos);
            self.trivia.push(Trivia { kind, span });
        }
    }

    fn block_comment(&mut self, record: bool) {
        let start = self.pos;
        let doc = self.peek_at(2) == Some(b'*') && self.peek_at(3) != Some(b'/');
        self.pos += 2;
        let mut closed = false;
        while let Some(c) = self.peek() {
            if c == b'*' && self.peek_at(1) == Some(b'/') {
                self.pos += 2;
                closed = true;
                break;
            }
            self.pos += 1;
        }
        if !closed {
            self.error(
                Code::E003,
                start,
                (start + 2).min(self.bytes.len()),
                "unterminated block comment",
            );
            if let Some(d) = self.diagnostics.last_mut() {
                d.notes.push(
                    "note: the comment runs to the end of the file; close it with `*/`".into(),
                );
            }
        }
        if record {
            let kind = if doc {
                TriviaKind::DocBlock
            } else {
                TriviaKind::Block
            };
            let span = self.span(start, self.pos);
            self.trivia.push(Trivia { kind, span });
        }
    }

    fn push_value(&mut self, v: Value) -> u32 {
        self.values.push(v);
        (self.values.len() - 1) as u32
    }

    /// Returns `(kind, start, value)`, or `None` at the end.
    fn next_token(&mut self) -> Option<(TokenKind, usize, u32)> {
        loop {
            let start = self.pos;
            let c = self.peek()?;
            if c.is_ascii_alphabetic() || c == b'_' {
                if c == b'b' && matches!(self.peek_at(1), Some(b'"' | b'\'')) {
                    self.pos += 1;
                    let v = self.quoted(true, start);
                    let value = self.push_value(v);
                    return Some((TokenKind::Bytes, start, value));
                }
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
                    self.pos += 1;
                }
                let word = self.text.get(start..self.pos).unwrap_or("");
                let kind = keyword(word).unwrap_or(TokenKind::Ident);
                return Some((kind, start, 0));
            }
            if c.is_ascii_digit() {
                self.number();
                return Some((TokenKind::Number, start, 0));
            }
            if c == b'"' || c == b'\'' {
                let v = self.quoted(false, start);
                let value = self.push_value(v);
                return Some((TokenKind::String, start, value));
            }
            self.pos += 1;
            let kind = match c {
                b'(' => TokenKind::LParen,
                b')' => TokenKind::RParen,
                b'{' => TokenKind::LBrace,
                b'}' => TokenKind::RBrace,
                b'[' if self.peek() == Some(b'[') => {
                    self.pos += 1;
                    return Some(self.lua_block(start));
                }
                b'[' => TokenKind::LBracket,
                b']' => TokenKind::RBracket,
                b'<' if self.peek() == Some(b'<') => {
                    self.pos += 1;
                    TokenKind::Shl
                }
                b'<' => TokenKind::Lt,
                b'>' if self.peek() == Some(b'>') => {
                    self.pos += 1;
                    TokenKind::Shr
                }
                b'>' => TokenKind::Gt,
                b':' => TokenKind::Colon,
                b';' => TokenKind::Semi,
                b',' => TokenKind::Comma,
                b'.' => TokenKind::Dot,
                b'?' => TokenKind::Question,
                b'=' => TokenKind::Eq,
                b'@' => TokenKind::At,
                b'#' => TokenKind::Hash,
                b'!' => TokenKind::Bang,
                b'~' => TokenKind::Tilde,
                b'&' => TokenKind::Amp,
                b'|' => TokenKind::Pipe,
                b'^' => TokenKind::Caret,
                b'-' if self.peek() == Some(b'>') => {
                    self.pos += 1;
                    TokenKind::Arrow
                }
                b'-' => TokenKind::Minus,
                b'+' => TokenKind::Plus,
                b'*' => TokenKind::Star,
                b'/' => TokenKind::Slash,
                b'$' => TokenKind::Dollar,
                _ => {
                    // Skip the whole (possibly multi-byte) character.
                    let ch = self.text.get(start..).and_then(|s| s.chars().next());
                    let len = ch.map(char::len_utf8).unwrap_or(1);
                    self.pos = start + len;
                    let shown = match ch {
                        Some(c) if c.is_control() => format!("U+{:04X}", c as u32),
                        Some(c) => format!("'{c}'"),
                        None => "byte".to_string(),
                    };
                    self.error(
                        Code::E002,
                        start,
                        self.pos,
                        format!("unexpected character {shown}"),
                    );
                    // Skip trivia that may follow and try again.
                    self.skip_leading_trivia();
                    continue;
                }
            };
            return Some((kind, start, 0));
        }
    }

    fn number(&mut self) {
        let start = self.pos;
        let hex = self.peek() == Some(b'0') && matches!(self.peek_at(1), Some(b'x' | b'X'));
        while let Some(c) = self.peek() {
            let sign_of_exponent = (c == b'-' || c == b'+')
                && !hex
                && self.pos > start
                && matches!(self.bytes.get(self.pos - 1), Some(b'e' | b'E'));
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || sign_of_exponent {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn lua_block(&mut self, start: usize) -> (TokenKind, usize, u32) {
        let content_start = self.pos;
        while let Some(c) = self.peek() {
            if c == b']' && self.peek_at(1) == Some(b']') {
                let content = self.text.get(content_start..self.pos).unwrap_or("");
                let value = self.push_value(Value::Text(content.to_string()));
                self.pos += 2;
                return (TokenKind::LuaBlock, start, value);
            }
            self.pos += 1;
        }
        self.error(
            Code::E006,
            start,
            start + 2,
            "unterminated Lua block: expected ']]'",
        );
        let content = self.text.get(content_start..).unwrap_or("");
        let value = self.push_value(Value::Text(content.to_string()));
        (TokenKind::LuaBlock, start, value)
    }

    /// Lexes a quoted literal starting at the quote. `start` is where the token began (the
    /// `b` of a byte string).
    fn quoted(&mut self, bytes: bool, start: usize) -> Value {
        let quote = self.peek().unwrap_or(b'"');
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                let what = if bytes { "byte string" } else { "string" };
                self.error(
                    Code::E004,
                    start,
                    (start + 1 + usize::from(bytes)).min(self.bytes.len()),
                    format!("unterminated {what} literal"),
                );
                if let Some(d) = self.diagnostics.last_mut() {
                    d.notes.push(format!(
                        "note: the literal runs to the end of the file; close it with {}",
                        quote as char
                    ));
                }
                break;
            };
            if c == quote {
                if self.peek_at(1) == Some(quote) {
                    out.push(quote);
                    self.pos += 2;
                    continue;
                }
                self.pos += 1;
                break;
            }
            match c {
                b'\\' => self.escape(bytes, &mut out),
                b'\r' => {
                    self.pos += 1;
                    if self.peek() == Some(b'\n') {
                        self.pos += 1;
                    }
                    out.push(b'\n');
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        if bytes {
            Value::Bytes(out)
        } else {
            // Only whole characters of valid UTF-8 input and valid escapes were copied.
            Value::Text(
                String::from_utf8(out)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            )
        }
    }

    fn escape(&mut self, bytes: bool, out: &mut Vec<u8>) {
        let esc_start = self.pos;
        self.pos += 1;
        let Some(c) = self.peek() else {
            return;
        };
        self.pos += 1;
        match c {
            b'\\' => out.push(b'\\'),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'0' => out.push(0),
            b'"' => out.push(b'"'),
            b'\'' => out.push(b'\''),
            b'x' if bytes => {
                let hi = self.peek().and_then(hex_value);
                let lo = self.peek_at(1).and_then(hex_value);
                match (hi, lo) {
                    (Some(h), Some(l)) => {
                        self.pos += 2;
                        out.push(h * 16 + l);
                    }
                    _ => self.error(
                        Code::E005,
                        esc_start,
                        self.pos,
                        "invalid byte escape: '\\x' needs two hex digits",
                    ),
                }
            }
            b'u' if !bytes => self.unicode_escape(esc_start, out),
            _ => {
                // Step over a whole character so the next one starts on a boundary.
                let ch = self.text.get(self.pos - 1..).and_then(|s| s.chars().next());
                if let Some(ch) = ch {
                    self.pos = self.pos - 1 + ch.len_utf8();
                }
                let shown = ch.map(|c| c.to_string()).unwrap_or_default();
                let known = if bytes {
                    "\\\\ \\n \\r \\t \\0 \\\" \\' \\xHH"
                } else {
                    "\\\\ \\n \\r \\t \\0 \\\" \\' \\u{XXXX}"
                };
                self.error(
                    Code::E005,
                    esc_start,
                    self.pos,
                    format!("unknown escape sequence '\\{shown}'"),
                );
                if let Some(d) = self.diagnostics.last_mut() {
                    d.notes.push(format!("note: valid escapes are {known}"));
                }
            }
        }
    }

    fn unicode_escape(&mut self, esc_start: usize, out: &mut Vec<u8>) {
        if self.peek() != Some(b'{') {
            self.error(
                Code::E005,
                esc_start,
                self.pos,
                "invalid unicode escape: expected '{' after '\\u'",
            );
            return;
        }
        self.pos += 1;
        let digits_start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_hexdigit()) {
            self.pos += 1;
        }
        let digits = self.text.get(digits_start..self.pos).unwrap_or("");
        if self.peek() != Some(b'}') {
            self.error(
                Code::E005,
                esc_start,
                self.pos,
                "invalid unicode escape: expected 1 to 6 hex digits and '}'",
            );
            return;
        }
        self.pos += 1;
        if digits.is_empty() || digits.len() > 6 {
            self.error(
                Code::E005,
                esc_start,
                self.pos,
                "invalid unicode escape: expected 1 to 6 hex digits",
            );
            return;
        }
        let value = u32::from_str_radix(digits, 16).unwrap_or(u32::MAX);
        match char::from_u32(value) {
            Some(ch) => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            None => {
                let why = if (0xD800..=0xDFFF).contains(&value) {
                    "a surrogate code point"
                } else {
                    "above U+10FFFF"
                };
                self.error(
                    Code::E005,
                    esc_start,
                    self.pos,
                    format!("invalid unicode escape: U+{value:X} is {why}"),
                );
            }
        }
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        lex(SourceId(0), src)
            .tokens
            .iter()
            .map(|t| t.kind)
            .collect()
    }

    fn one_string(src: &str) -> (Option<String>, Vec<Code>) {
        let l = lex(SourceId(0), src);
        let v = l
            .tokens
            .first()
            .and_then(|t| l.string_value(t).map(str::to_string));
        (v, l.diagnostics.iter().map(|d| d.code).collect())
    }

    #[test]
    fn keywords_idents_and_punctuation() {
        use TokenKind::*;
        assert_eq!(
            kinds("mut struct A_1 { x: map[int32, B.C]; } << >> -> @ # ! ~ & | + - ; ( )"),
            vec![
                Mut, Struct, Ident, LBrace, Ident, Colon, Map, LBracket, Ident, Comma, Ident, Dot,
                Ident, RBracket, Semi, RBrace, Shl, Shr, Arrow, At, Hash, Bang, Tilde, Amp, Pipe,
                Plus, Minus, Semi, LParen, RParen, Eof
            ]
        );
        assert_eq!(kinds("readonly with"), vec![Ident, With, Eof]);
    }

    #[test]
    fn numbers() {
        let l = lex(SourceId(0), "0xFF 1.5e-3 2x 12 0x1E-1 7E+2");
        let texts: Vec<&str> = l.tokens.iter().map(|t| l.text(t)).collect();
        assert_eq!(
            texts,
            vec!["0xFF", "1.5e-3", "2x", "12", "0x1E", "-", "1", "7E+2", ""]
        );
    }

    #[test]
    fn string_escapes() {
        assert_eq!(
            one_string(r#""a\\b\n\r\t\0\"\'""#).0.as_deref(),
            Some("a\\b\n\r\t\0\"'")
        );
        assert_eq!(one_string(r#""\u{1F600}\u{41}""#).0.as_deref(), Some("😀A"));
        assert_eq!(
            one_string(r#""He said ""hi""""#).0.as_deref(),
            Some("He said \"hi\"")
        );
        assert_eq!(one_string("'It''s'").0.as_deref(), Some("It's"));
        assert_eq!(one_string("\"a\r\nb\"").0.as_deref(), Some("a\nb"));
        assert_eq!(one_string("'é'").0.as_deref(), Some("é"));
        assert_eq!(one_string(r#""\\u{41}""#).0.as_deref(), Some("\\u{41}"));
    }

    #[test]
    fn bad_escapes_are_reported() {
        assert_eq!(one_string(r#""\u{D800}""#).1, vec![Code::E005]);
        assert_eq!(one_string(r#""\u{110000}""#).1, vec![Code::E005]);
        assert_eq!(one_string(r#""\u{1234567}""#).1, vec![Code::E005]);
        assert_eq!(one_string(r#""\u{}""#).1, vec![Code::E005]);
        assert_eq!(one_string(r#""\u41""#).1, vec![Code::E005]);
        assert_eq!(one_string(r#""\q""#).1, vec![Code::E005]);
        assert_eq!(one_string(r#""\é""#).1, vec![Code::E005]);
        assert_eq!(one_string("\"abc").1, vec![Code::E004]);
    }

    #[test]
    fn byte_strings() {
        let l = lex(SourceId(0), r#"b"\x89PNG\r\n\x1a\n" b'a''b' b"\xZZ""#);
        assert_eq!(l.bytes_value(&l.tokens[0]), Some(&b"\x89PNG\r\n\x1a\n"[..]));
        assert_eq!(l.bytes_value(&l.tokens[1]), Some(&b"a'b"[..]));
        assert_eq!(l.diagnostics.len(), 1);
        assert_eq!(l.diagnostics[0].code, Code::E005);
    }

    #[test]
    fn comments_and_docs() {
        let src = "/// one\n///\n///  two  \nstruct A {} // trailing\n/// three\nx /** not doc of y */ y\n/**\n * Block\n *  doc\n */\nz\n// plain\n/// kept\nw";
        let l = lex(SourceId(0), src);
        let find = |name: &str| *l.tokens.iter().find(|t| l.text(t) == name).unwrap();
        assert_eq!(l.doc_before(&find("struct")).as_deref(), Some("one\n two"));
        assert_eq!(l.doc_before(&find("x")).as_deref(), Some("three"));
        // A comment after a token on its line belongs to that token.
        assert_eq!(l.doc_before(&find("y")), None);
        assert_eq!(l.doc_before(&find("z")).as_deref(), Some("\nBlock\n doc"));
        assert_eq!(l.doc_before(&find("w")).as_deref(), Some("kept"));
        assert!(l.diagnostics.is_empty());
    }

    #[test]
    fn unterminated_comment_and_lua() {
        let l = lex(SourceId(0), "/** I didn't close the block comment");
        assert_eq!(l.diagnostics[0].code, Code::E003);
        assert_eq!(l.tokens.len(), 1);
        let l = lex(SourceId(0), "validate [[ if x then\n end ]] export [[ nope");
        assert_eq!(l.string_value(&l.tokens[1]), Some(" if x then\n end "));
        assert_eq!(l.diagnostics[0].code, Code::E006);
    }

    #[test]
    fn stray_characters() {
        let l = lex(SourceId(0), "a ü \u{0} b");
        assert_eq!(l.tokens.len(), 3);
        assert_eq!(l.diagnostics.len(), 2);
        assert!(l.diagnostics.iter().all(|d| d.code == Code::E002));
    }

    #[test]
    fn bom_is_skipped() {
        assert_eq!(
            kinds("\u{feff}struct"),
            vec![TokenKind::Struct, TokenKind::Eof]
        );
    }
}

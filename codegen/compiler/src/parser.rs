//! Recursive-descent parser from tokens to the [`ast`](crate::ast).
//!
//! Errors do not stop the parser: after a syntax error it skips to a point where parsing
//! can resume (the end of the current member at `;`, the end of a braced block, or the
//! start of the next top-level definition), so one run reports every independent problem.
//! Nesting is limited to [`MAX_DEPTH`] levels (definitions, types, parentheses), and all
//! skipping is iterative, so hostile input cannot overflow the stack.
//!
//! Enum member values are evaluated here (operators `| & ~ << >> + -` with the usual
//! precedence, parentheses, and references to earlier members of the same enum).
//!
//! ```
//! use bebopc::parser::parse;
//! use bebopc::source::SourceId;
//!
//! let parsed = parse(SourceId(0), "package demo\nstruct Point { x: float32; y: float32; }");
//! assert!(parsed.diagnostics.is_empty());
//! assert_eq!(parsed.file.items[0].name.name, "Point");
//! ```

use crate::ast::*;
use crate::diag::{Code, Diagnostic};
use crate::lexer::{Lexed, Token, TokenKind, lex};
use crate::literal::{Number, classify_number, parse_unsigned};
use crate::model::{DecoratorTargets, ParamType, ScalarType, Visibility};
use crate::source::{SourceId, Span};

/// How deeply definitions, types and expressions may nest.
pub const MAX_DEPTH: u32 = 64;

/// The parse of one file.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The tree (partial when there were errors).
    pub file: File,
    /// Problems found while lexing and parsing, in source order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Lexes and parses one file.
pub fn parse(source: SourceId, text: &str) -> Parsed {
    let lexed = lex(source, text);
    let mut p = Parser {
        lx: &lexed,
        pos: 0,
        source,
        diags: lexed.diagnostics.clone(),
        depth: 0,
        aliases: Vec::new(),
    };
    let file = p.file();
    for (_, index, count) in &p.aliases {
        if *count > 1 {
            if let Some(d) = p.diags.get_mut(*index) {
                d.notes.push(format!(
                    "note: used {} times in this file; only the first is shown",
                    count
                ));
            }
        }
    }
    let mut diagnostics = p.diags;
    diagnostics.sort_by_key(|d| d.span.start);
    Parsed { file, diagnostics }
}

/// What kind of body a nested definition is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Context {
    TopLevel,
    Nested,
}

struct Parser<'a> {
    lx: &'a Lexed,
    pos: usize,
    source: SourceId,
    diags: Vec<Diagnostic>,
    depth: u32,
    /// Deprecated aliases seen: (alias, index of its warning, number of uses).
    aliases: Vec<(String, usize, usize)>,
}

/// Ordering of the file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Start,
    Edition,
    Package,
    Imports,
    Definitions,
}

impl<'a> Parser<'a> {
    // ---- token access ----------------------------------------------------------------

    fn tok(&self) -> Token {
        self.tok_at(self.pos)
    }

    fn tok_at(&self, i: usize) -> Token {
        match self.lx.tokens.get(i) {
            Some(t) => *t,
            None => self.eof_token(),
        }
    }

    fn eof_token(&self) -> Token {
        match self.lx.tokens.last() {
            Some(t) => *t,
            None => Token {
                kind: TokenKind::Eof,
                span: Span::point(self.source, 0),
                trivia_start: 0,
                trivia_end: 0,
                value: 0,
            },
        }
    }

    fn kind(&self) -> TokenKind {
        self.tok().kind
    }

    fn peek(&self, n: usize) -> TokenKind {
        self.tok_at(self.pos + n).kind
    }

    fn at(&self, k: TokenKind) -> bool {
        self.kind() == k
    }

    fn at_word(&self, word: &str) -> bool {
        self.at(TokenKind::Ident) && self.lx.text(&self.tok()) == word
    }

    fn word_at(&self, n: usize, word: &str) -> bool {
        let t = self.tok_at(self.pos + n);
        t.kind == TokenKind::Ident && self.lx.text(&t) == word
    }

    fn advance(&mut self) -> Token {
        let t = self.tok();
        if t.kind != TokenKind::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, k: TokenKind) -> bool {
        if self.at(k) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            return Span::point(self.source, 0);
        }
        self.tok_at(self.pos - 1).span
    }

    fn prev_kind(&self) -> Option<TokenKind> {
        self.pos.checked_sub(1).map(|i| self.tok_at(i).kind)
    }

    fn span_from(&self, start: Span) -> Span {
        let end = self.prev_span();
        if end.end < start.start {
            start
        } else {
            start.to(end)
        }
    }

    fn text(&self, t: &Token) -> &'a str {
        self.lx.text(t)
    }

    // ---- diagnostics -----------------------------------------------------------------

    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn error(&mut self, code: Code, span: Span, msg: impl Into<String>) {
        self.push(Diagnostic::error(code, span, msg));
    }

    fn found(&self) -> String {
        let t = self.tok();
        match t.kind {
            TokenKind::Ident => format!("'{}'", self.text(&t)),
            TokenKind::Number => format!("number '{}'", self.text(&t)),
            k => k.describe().to_string(),
        }
    }

    /// Reports "expected X, found Y" at the current token.
    fn unexpected(&mut self, expected: &str) {
        let span = self.tok().span;
        let msg = format!("expected {expected}, found {}", self.found());
        self.error(Code::E010, span, msg);
    }

    fn expect(&mut self, k: TokenKind, expected: &str) -> Option<Token> {
        if self.at(k) {
            Some(self.advance())
        } else {
            self.unexpected(expected);
            None
        }
    }

    /// A `;` that may be missing: reported, but parsing goes on.
    fn expect_semi(&mut self, after: &str) {
        if !self.eat(TokenKind::Semi) {
            let span = self.prev_span();
            let span = Span::point(span.source, span.end);
            let msg = format!("expected ';' after {after}, found {}", self.found());
            self.error(Code::E010, span, msg);
        }
    }

    // ---- depth -----------------------------------------------------------------------

    fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            let span = self.tok().span;
            self.error(
                Code::E012,
                span,
                format!("nesting is too deep (the limit is {MAX_DEPTH} levels)"),
            );
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ---- recovery --------------------------------------------------------------------

    /// Skips the rest of a member after an error: up to and including a `;`, or past a
    /// braced group, or up to a `}` that closes the enclosing block.
    fn recover_member(&mut self, started_at: usize) {
        if self.pos == started_at {
            if matches!(self.kind(), TokenKind::RBrace | TokenKind::Eof) {
                return;
            }
            // Always make progress.
            if !matches!(
                self.kind(),
                TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket
            ) {
                let k = self.advance().kind;
                if k == TokenKind::Semi {
                    return;
                }
            }
        } else if matches!(self.prev_kind(), Some(TokenKind::Semi | TokenKind::RBrace)) {
            return;
        }
        self.skip(false);
    }

    /// Skips to the next top-level definition.
    fn recover_top(&mut self, started_at: usize) {
        if self.pos == started_at && !self.at(TokenKind::Eof) {
            let k = self.advance().kind;
            if matches!(k, TokenKind::Semi | TokenKind::RBrace) {
                return;
            }
            if matches!(
                k,
                TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket
            ) {
                self.pos -= 1;
            }
        } else if matches!(self.prev_kind(), Some(TokenKind::Semi | TokenKind::RBrace))
            && self.pos != started_at
        {
            return;
        }
        self.skip(true);
    }

    /// The iterative skipper behind both recoveries.
    fn skip(&mut self, top: bool) {
        let mut depth: u32 = 0;
        loop {
            let k = self.kind();
            match k {
                TokenKind::Eof => return,
                TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket => {
                    depth += 1;
                    self.advance();
                }
                TokenKind::RBrace if depth == 0 => {
                    if top {
                        self.advance();
                        return;
                    }
                    return;
                }
                TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => {
                    self.advance();
                    if depth > 0 {
                        depth -= 1;
                        if depth == 0 && k == TokenKind::RBrace {
                            return;
                        }
                    }
                }
                TokenKind::Semi if depth == 0 => {
                    self.advance();
                    return;
                }
                TokenKind::At if depth == 0 => return,
                _ if depth == 0 && top && self.starts_top_level() => return,
                _ => {
                    self.advance();
                }
            }
        }
    }

    fn starts_top_level(&self) -> bool {
        use TokenKind::*;
        match self.kind() {
            Enum | Struct | Message | Union | Service | Const | Mut | Export | Local | Import
            | Package | Edition | At | Hash => true,
            Ident => self.at_word("readonly") && self.is_def_keyword(1),
            _ => false,
        }
    }

    fn is_def_keyword(&self, n: usize) -> bool {
        use TokenKind::*;
        matches!(
            self.peek(n),
            Enum | Struct | Message | Union | Service | Const | Mut
        )
    }

    /// Skips a whole definition whose parsing cannot start (too deep): to the end of its
    /// braced body, or past a `;`.
    fn skip_definition(&mut self) {
        loop {
            match self.kind() {
                TokenKind::Eof => return,
                TokenKind::Semi => {
                    self.advance();
                    return;
                }
                TokenKind::LBrace => {
                    self.skip_group();
                    return;
                }
                TokenKind::RBrace => return,
                _ => {
                    self.advance();
                }
            }
        }
    }

    /// Skips a balanced `{...}`, `(...)` or `[...]` group starting at the current token.
    fn skip_group(&mut self) {
        let mut depth: u32 = 0;
        loop {
            match self.kind() {
                TokenKind::Eof => return,
                TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket => depth += 1,
                TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.advance();
                        return;
                    }
                }
                _ => {}
            }
            self.advance();
        }
    }

    // ---- names -----------------------------------------------------------------------

    fn ident_from(&self, t: &Token) -> Ident {
        Ident {
            name: self.text(t).to_string(),
            span: t.span,
        }
    }

    /// A definition name: an identifier (a keyword is reported and accepted).
    fn def_name(&mut self, what: &str) -> Option<Ident> {
        let t = self.tok();
        if t.kind == TokenKind::Ident {
            self.advance();
            return Some(self.ident_from(&t));
        }
        if t.kind.is_keyword() {
            self.advance();
            let id = self.ident_from(&t);
            self.error(
                Code::E011,
                t.span,
                format!(
                    "'{}' is a keyword and cannot be used as {what} name",
                    id.name
                ),
            );
            return Some(id);
        }
        self.unexpected(&format!("{what} name"));
        None
    }

    /// A member name (field, enum member, branch, method, parameter): an identifier or a
    /// keyword, except the ones that open nested definitions.
    fn member_name(&mut self, what: &str) -> Option<Ident> {
        use TokenKind::*;
        let t = self.tok();
        match t.kind {
            Ident => {
                self.advance();
                Some(self.ident_from(&t))
            }
            Enum | Struct | Message | Union | Mut | With => {
                self.advance();
                let id = self.ident_from(&t);
                self.error(
                    Code::E011,
                    t.span,
                    format!(
                        "'{}' is a keyword and cannot be used as {what} name",
                        id.name
                    ),
                );
                Some(id)
            }
            k if k.is_keyword() => {
                self.advance();
                Some(self.ident_from(&t))
            }
            _ => {
                self.unexpected(&format!("{what} name"));
                None
            }
        }
    }

    /// `A.B.C` (identifiers only).
    fn path(&mut self, what: &str) -> Option<Path> {
        let first = self.expect(TokenKind::Ident, what)?;
        let mut parts = vec![self.ident_from(&first)];
        while self.at(TokenKind::Dot) && self.peek(1) == TokenKind::Ident {
            self.advance();
            let t = self.advance();
            parts.push(self.ident_from(&t));
        }
        if self.at(TokenKind::Dot) {
            self.advance();
            self.unexpected("a name after '.'");
            return None;
        }
        let span = self.span_from(first.span);
        Some(Path { parts, span })
    }

    // ---- documentation ---------------------------------------------------------------

    /// Documentation for an item that starts at token `first`, taken from the doc comments
    /// directly before token `anchor` (the reference compiler's placement rule). Doc
    /// comments before `first` that this rule does not pick up are reported (W005).
    fn doc(&mut self, first: usize, anchor: Option<usize>, what: &str) -> Option<String> {
        let doc = anchor.and_then(|a| self.lx.doc_before(&self.tok_at(a)));
        if anchor != Some(first) {
            let first_tok = self.tok_at(first);
            if self.lx.has_doc_before(&first_tok) {
                let trivia = self.lx.leading_trivia(&first_tok);
                let span = trivia
                    .iter()
                    .rev()
                    .find(|t| {
                        matches!(
                            t.kind,
                            crate::lexer::TriviaKind::DocLine | crate::lexer::TriviaKind::DocBlock
                        )
                    })
                    .map(|t| t.span)
                    .unwrap_or(first_tok.span);
                self.push(
                    Diagnostic::warning(
                        Code::W005,
                        span,
                        "this doc comment is not attached to anything",
                    )
                    .with_help(what.to_string()),
                );
            }
        }
        doc
    }

    // ---- file ------------------------------------------------------------------------

    fn file(&mut self) -> File {
        let mut file = File {
            source: self.source,
            edition: None,
            package: None,
            imports: Vec::new(),
            items: Vec::new(),
        };
        let mut stage = Stage::Start;
        loop {
            let start = self.pos;
            match self.kind() {
                TokenKind::Eof => break,
                TokenKind::Semi => {
                    self.advance();
                }
                TokenKind::Edition => {
                    if self.edition(&mut file, stage).is_none() {
                        self.recover_top(start);
                    }
                    stage = stage.max(Stage::Edition);
                }
                TokenKind::Package => {
                    if self.package(&mut file, stage).is_none() {
                        self.recover_top(start);
                    }
                    stage = stage.max(Stage::Package);
                }
                TokenKind::Import => {
                    if stage == Stage::Definitions {
                        let span = self.tok().span;
                        self.push(
                            Diagnostic::warning(Code::W001, span, "import after definitions")
                                .with_help("move imports above the first definition"),
                        );
                    }
                    if self.import(&mut file).is_none() {
                        self.recover_top(start);
                    }
                    stage = stage.max(Stage::Imports);
                }
                TokenKind::RBrace => {
                    let span = self.tok().span;
                    self.error(Code::E010, span, "unexpected '}' (no block is open here)");
                    self.advance();
                }
                _ => {
                    stage = Stage::Definitions;
                    match self.definition(Context::TopLevel) {
                        Some(item) => file.items.push(item),
                        None => self.recover_top(start),
                    }
                }
            }
        }
        file
    }

    fn edition(&mut self, file: &mut File, stage: Stage) -> Option<()> {
        let kw = self.advance();
        if stage > Stage::Start {
            let msg = if file.edition.is_some() {
                "the edition is declared more than once"
            } else {
                "the edition must be declared before the package, imports and definitions"
            };
            let code = if file.edition.is_some() {
                Code::E013
            } else {
                Code::E014
            };
            self.error(code, kw.span, msg);
        }
        self.expect(TokenKind::Eq, "'=' after 'edition'")?;
        let value = self.expect(TokenKind::String, "the edition as a string, e.g. \"2026\"")?;
        let text = self.lx.string_value(&value).unwrap_or_default().to_string();
        if text != "2026" {
            self.push(
                Diagnostic::error(
                    Code::E013,
                    value.span,
                    format!("unsupported edition \"{text}\""),
                )
                .with_note("the supported edition is \"2026\""),
            );
        }
        if file.edition.is_none() {
            file.edition = Some((text, kw.span.to(value.span)));
        }
        self.eat(TokenKind::Semi);
        Some(())
    }

    fn package(&mut self, file: &mut File, stage: Stage) -> Option<()> {
        let kw = self.advance();
        if let Some((_, first)) = &file.package {
            let first = *first;
            self.push(
                Diagnostic::error(
                    Code::E017,
                    kw.span,
                    "the package is declared more than once",
                )
                .with_label(first, "first declared here"),
            );
        } else if stage == Stage::Definitions {
            self.push(
                Diagnostic::error(
                    Code::E016,
                    kw.span,
                    "the package must be declared before definitions",
                )
                .with_help("move the package declaration to the top of the file (after `edition`)"),
            );
        } else if stage == Stage::Imports {
            self.push(
                Diagnostic::error(
                    Code::E015,
                    kw.span,
                    "the package must be declared before imports",
                )
                .with_help("move the package declaration above the imports"),
            );
        }
        let first = self.expect(TokenKind::Ident, "a package name")?;
        let mut name = self.text(&first).to_string();
        while self.eat(TokenKind::Dot) {
            let t = self.tok();
            if t.kind == TokenKind::Ident || t.kind.is_keyword() {
                self.advance();
                name.push('.');
                name.push_str(self.text(&t));
            } else {
                self.unexpected("a name after '.'");
                return None;
            }
        }
        let span = self.span_from(kw.span);
        if file.package.is_none() {
            file.package = Some((name, span));
        }
        self.eat(TokenKind::Semi);
        Some(())
    }

    fn import(&mut self, file: &mut File) -> Option<()> {
        self.advance();
        let t = self.expect(TokenKind::String, "the imported file's path as a string")?;
        let path = self.lx.string_value(&t).unwrap_or_default().to_string();
        file.imports.push(ImportDecl { path, span: t.span });
        self.eat(TokenKind::Semi);
        Some(())
    }

    // ---- definitions -----------------------------------------------------------------

    /// Whether the current token starts a nested definition (in a struct, message or
    /// union body) rather than a field or branch.
    fn nested_definition_starts(&self) -> bool {
        use TokenKind::*;
        match self.kind() {
            // `enum: int32;` is a (rejected) field named with a keyword, not a definition.
            Enum | Struct | Message | Union | Mut => !matches!(self.peek(1), Colon | LParen),
            Hash => true,
            Export | Local => self.is_def_keyword(1) || self.word_at(1, "readonly"),
            Service | Const => self.peek(1) == Ident,
            Ident => self.at_word("readonly") && self.is_def_keyword(1),
            _ => false,
        }
    }

    /// Decorators, then a definition. Returns `None` after an error that needs recovery.
    fn definition(&mut self, ctx: Context) -> Option<Item> {
        let first = self.pos;
        let decorators = self.decorators()?;
        if self.at(TokenKind::Hash) {
            if let Some(d) = decorators.first() {
                self.error(
                    Code::E018,
                    d.span,
                    "decorators cannot be applied to decorator definitions",
                );
            }
            return self.decorator_definition(first, ctx);
        }
        self.item(decorators, first, ctx)
    }

    /// A definition after its decorators; `first` is the index of its first token.
    fn item(&mut self, decorators: Vec<DecoratorUse>, first: usize, ctx: Context) -> Option<Item> {
        if !self.enter() {
            self.skip_definition();
            return None;
        }
        let r = self.item_inner(decorators, first, ctx);
        self.leave();
        r
    }

    fn item_inner(
        &mut self,
        decorators: Vec<DecoratorUse>,
        first: usize,
        ctx: Context,
    ) -> Option<Item> {
        use TokenKind::*;
        let start_span = self.tok_at(first).span;
        let mut visibility = Visibility::Default;
        let mut visibility_span = None;
        if matches!(self.kind(), Export | Local) {
            let t = self.advance();
            visibility = if t.kind == Export {
                Visibility::Export
            } else {
                Visibility::Local
            };
            visibility_span = Some(t.span);
            let redundant = match (ctx, visibility) {
                (Context::TopLevel, Visibility::Export) => {
                    Some("'export' is redundant: top-level definitions are exported by default")
                }
                (Context::Nested, Visibility::Local) => {
                    Some("'local' is redundant: nested definitions are local by default")
                }
                _ => None,
            };
            if let Some(msg) = redundant {
                self.push(Diagnostic::warning(Code::W002, t.span, msg));
            }
        }
        let mut mutable = None;
        let mut readonly = None;
        loop {
            if self.at(Mut) {
                mutable = Some(self.advance().span);
            } else if self.at_word("readonly") && self.is_def_keyword(1) {
                readonly = Some(self.advance().span);
            } else {
                break;
            }
        }
        let kw_index = self.pos;
        let kw = self.tok();
        let is_struct = kw.kind == Struct;
        if let Some(span) = mutable.filter(|_| !is_struct) {
            let msg = format!("'mut' cannot be applied to {}", kw.kind.describe());
            self.error(Code::E018, span, msg);
        }
        if let Some(span) = readonly {
            if is_struct {
                self.push(
                    Diagnostic::warning(
                        Code::W004,
                        span,
                        "'readonly' is deprecated: structs are immutable by default",
                    )
                    .with_help("remove 'readonly' (use 'mut' for mutable structs)"),
                );
            } else {
                let msg = format!(
                    "'readonly' cannot be applied to {} (and is deprecated for structs)",
                    kw.kind.describe()
                );
                self.error(Code::E018, span, msg);
            }
        }
        let what = format!(
            "documentation is kept only when it comes right before '{}', after any decorators and modifiers",
            self.text(&kw)
        );
        let kind = match kw.kind {
            Enum | Struct | Message | Union | Service | Const => kw.kind,
            _ => {
                self.unexpected_definition();
                return None;
            }
        };
        if ctx == Context::Nested && matches!(kind, Service | Const) {
            let msg = format!("{} cannot be nested in another definition", kind.describe());
            self.error(Code::E019, kw.span, msg);
        }
        let doc = self.doc(first, Some(kw_index), &what);
        self.advance();
        let (name, item_kind) = match kind {
            Enum => {
                let name = self.def_name("an enum")?;
                (name, ItemKind::Enum(self.enum_body()?))
            }
            Struct => {
                let name = self.def_name("a struct")?;
                let (fields, nested) = self.fields_body(false)?;
                (
                    name,
                    ItemKind::Struct(StructItem {
                        mutable: mutable.is_some(),
                        fields,
                        nested,
                    }),
                )
            }
            Message => {
                let name = self.def_name("a message")?;
                let (fields, nested) = self.fields_body(true)?;
                (name, ItemKind::Message(MessageItem { fields, nested }))
            }
            Union => {
                let name = self.def_name("a union")?;
                (name, ItemKind::Union(self.union_body()?))
            }
            Service => {
                let name = self.def_name("a service")?;
                (name, ItemKind::Service(self.service_body()?))
            }
            _ => {
                let ty = self.ty()?;
                let name = self.def_name("a constant")?;
                self.expect(Eq, "'=' and the constant's value")?;
                let value = self.literal()?;
                self.expect_semi("the constant");
                (name, ItemKind::Const(ConstItem { ty, value }))
            }
        };
        if ctx == Context::Nested && matches!(kind, Service | Const) {
            // Reported above; the definition was parsed only to skip it cleanly.
            return None;
        }
        Some(Item {
            name,
            kind: item_kind,
            visibility,
            visibility_span,
            decorators,
            doc,
            span: self.span_from(start_span),
        })
    }

    fn unexpected_definition(&mut self) {
        let t = self.tok();
        let mut d = Diagnostic::error(
            Code::E010,
            t.span,
            format!(
                "expected a definition (enum, struct, message, union, service or const), found {}",
                self.found()
            ),
        );
        if t.kind == TokenKind::Ident {
            let word = self.text(&t);
            const WORDS: [&str; 12] = [
                "enum", "struct", "message", "union", "service", "const", "mut", "import",
                "package", "edition", "export", "local",
            ];
            if let Some(best) = WORDS
                .iter()
                .filter(|w| edit_distance(word, w) <= 2)
                .min_by_key(|w| edit_distance(word, w))
            {
                d = d.with_help(format!("did you mean '{best}'?"));
            }
        } else if t.kind == TokenKind::Number {
            d = d.with_help(
                "service methods are written `Name(Request): Response;` (the `1 -> ...` syntax is gone)",
            );
        }
        self.push(d);
    }

    // ---- decorators ------------------------------------------------------------------

    fn decorators(&mut self) -> Option<Vec<DecoratorUse>> {
        let mut out = Vec::new();
        while self.at(TokenKind::At) {
            let at = self.advance();
            let name = self.path("a decorator name after '@'")?;
            let mut args = Vec::new();
            if self.eat(TokenKind::LParen) {
                loop {
                    if self.eat(TokenKind::RParen) {
                        break;
                    }
                    let start = self.tok().span;
                    let t = self.tok();
                    let named = (t.kind == TokenKind::Ident || t.kind.is_keyword())
                        && self.peek(1) == TokenKind::Colon;
                    let arg_name = if named {
                        self.advance();
                        self.advance();
                        Some(self.ident_from(&t))
                    } else {
                        None
                    };
                    let value = self.literal()?;
                    args.push(ArgItem {
                        name: arg_name,
                        value,
                        span: self.span_from(start),
                    });
                    if self.eat(TokenKind::Comma) {
                        continue;
                    }
                    if self.eat(TokenKind::RParen) {
                        break;
                    }
                    self.unexpected("',' or ')' in the decorator arguments");
                    return None;
                }
            }
            out.push(DecoratorUse {
                name,
                args,
                span: self.span_from(at.span),
            });
        }
        Some(out)
    }

    // ---- literals --------------------------------------------------------------------

    fn literal(&mut self) -> Option<Literal> {
        let t = self.tok();
        let kind = match t.kind {
            TokenKind::True => LiteralKind::Bool(true),
            TokenKind::False => LiteralKind::Bool(false),
            TokenKind::Number => LiteralKind::Number {
                text: self.text(&t).to_string(),
                negative: false,
            },
            TokenKind::String => {
                LiteralKind::String(self.lx.string_value(&t).unwrap_or_default().to_string())
            }
            TokenKind::Bytes => {
                LiteralKind::Bytes(self.lx.bytes_value(&t).unwrap_or_default().to_vec())
            }
            TokenKind::Ident if self.text(&t).eq_ignore_ascii_case("inf") => {
                LiteralKind::Infinity { negative: false }
            }
            TokenKind::Ident if self.text(&t).eq_ignore_ascii_case("nan") => LiteralKind::Nan,
            TokenKind::Minus => {
                self.advance();
                let n = self.tok();
                let kind = match n.kind {
                    TokenKind::Number => LiteralKind::Number {
                        text: self.text(&n).to_string(),
                        negative: true,
                    },
                    TokenKind::Ident if self.text(&n).eq_ignore_ascii_case("inf") => {
                        LiteralKind::Infinity { negative: true }
                    }
                    _ => {
                        self.unexpected("a number after '-'");
                        return None;
                    }
                };
                self.advance();
                return Some(Literal {
                    kind,
                    span: t.span.to(n.span),
                });
            }
            _ => {
                self.unexpected("a literal value");
                return None;
            }
        };
        self.advance();
        Some(Literal { kind, span: t.span })
    }

    // ---- types -----------------------------------------------------------------------

    fn ty(&mut self) -> Option<TypeExpr> {
        if !self.enter() {
            return None;
        }
        let r = self.ty_inner();
        self.leave();
        r
    }

    fn ty_inner(&mut self) -> Option<TypeExpr> {
        let start = self.tok();
        let mut t = match start.kind {
            TokenKind::Map => {
                self.advance();
                self.expect(TokenKind::LBracket, "'[' after 'map'")?;
                let key = self.ty()?;
                self.expect(
                    TokenKind::Comma,
                    "',' between the map's key and value types",
                )?;
                let value = self.ty()?;
                self.expect(TokenKind::RBracket, "']' after the map's value type")?;
                TypeExpr::Map(Box::new(key), Box::new(value), self.span_from(start.span))
            }
            TokenKind::Array => {
                self.push(
                    Diagnostic::error(Code::E010, start.span, "'array[T]' is not a type")
                        .with_help("write arrays as `T[]`"),
                );
                return None;
            }
            TokenKind::Ident => {
                let text = self.text(&start);
                match ScalarType::from_name(text) {
                    Some((scalar, alias)) => {
                        if alias {
                            self.alias_warning(start.span, text, scalar);
                        }
                        self.advance();
                        TypeExpr::Scalar(scalar, start.span)
                    }
                    None => TypeExpr::Named(self.path("a type")?),
                }
            }
            _ => {
                self.unexpected("a type");
                return None;
            }
        };
        let mut levels = 0;
        while self.at(TokenKind::LBracket) {
            levels += 1;
            if self.depth + levels > MAX_DEPTH {
                let span = self.tok().span;
                self.error(
                    Code::E012,
                    span,
                    format!("type nesting is too deep (the limit is {MAX_DEPTH} levels)"),
                );
                while self.at(TokenKind::LBracket) {
                    self.skip_group();
                }
                return None;
            }
            self.advance();
            if self.at(TokenKind::Number) {
                let n = self.advance();
                let size = match parse_unsigned(self.text(&n)) {
                    Ok(v) if (1..=65535).contains(&v) => v as u32,
                    Ok(v) => {
                        self.error(
                            Code::E062,
                            n.span,
                            format!("fixed array size {v} is out of range (1..=65535)"),
                        );
                        1
                    }
                    Err(why) => {
                        let msg = format!("invalid fixed array size '{}': {why}", self.text(&n));
                        self.error(Code::E062, n.span, msg);
                        1
                    }
                };
                self.expect(TokenKind::RBracket, "']' after the array size")?;
                t = TypeExpr::FixedArray(Box::new(t), size, self.span_from(start.span));
            } else {
                self.expect(TokenKind::RBracket, "']' or an array size")?;
                t = TypeExpr::Array(Box::new(t), self.span_from(start.span));
            }
        }
        Some(t)
    }

    fn alias_warning(&mut self, span: Span, alias: &str, scalar: ScalarType) {
        if let Some(entry) = self.aliases.iter_mut().find(|a| a.0 == alias) {
            entry.2 += 1;
            return;
        }
        self.aliases.push((alias.to_string(), self.diags.len(), 1));
        self.push(
            Diagnostic::warning(
                Code::W003,
                span,
                format!("'{alias}' is a deprecated alias of '{scalar}'"),
            )
            .with_help(format!(
                "write '{scalar}'; aliases may be removed in future editions"
            )),
        );
    }

    // ---- enums -----------------------------------------------------------------------

    fn enum_body(&mut self) -> Option<EnumItem> {
        let mut base = ScalarType::Uint32;
        let mut base_span = None;
        if self.eat(TokenKind::Colon) {
            let t = self.ty()?;
            base_span = Some(t.span());
            match t {
                TypeExpr::Scalar(s, _) if s.is_valid_enum_base() => base = s,
                other => {
                    self.push(
                        Diagnostic::error(
                            Code::E052,
                            other.span(),
                            "invalid enum base type",
                        )
                        .with_note(
                            "the base type must be byte, int8, int16, uint16, int32, uint32, int64 or uint64",
                        ),
                    );
                }
            }
        }
        self.expect(TokenKind::LBrace, "'{' to open the enum body")?;
        let mut members: Vec<EnumMemberItem> = Vec::new();
        loop {
            let start = self.pos;
            match self.kind() {
                TokenKind::RBrace => {
                    self.advance();
                    break;
                }
                TokenKind::Eof => {
                    self.unexpected("'}' to close the enum");
                    break;
                }
                TokenKind::Semi => {
                    self.advance();
                    continue;
                }
                _ => {}
            }
            match self.enum_member(base, &members, start) {
                Some(m) => members.push(m),
                None => self.recover_member(start),
            }
        }
        Some(EnumItem {
            base,
            base_span,
            members,
        })
    }

    fn enum_member(
        &mut self,
        base: ScalarType,
        earlier: &[EnumMemberItem],
        first: usize,
    ) -> Option<EnumMemberItem> {
        let decorators = self.decorators()?;
        let name_index = self.pos;
        let start_span = self.tok_at(first).span;
        // Enum bodies hold no nested definitions, so every keyword can name a member.
        let t = self.tok();
        let name = if t.kind.is_keyword() {
            self.advance();
            self.ident_from(&t)
        } else {
            self.member_name("an enum member")?
        };
        let doc = self.doc(
            first,
            Some(name_index),
            "documentation of a member is kept only when it comes right before its name, after any decorators",
        );
        self.expect(TokenKind::Eq, "'=' and the member's value")?;
        let expr_start = self.pos;
        let value_start = self.tok().span;
        let value = self.expr_or(base, earlier)?;
        let value_span = self.span_from(value_start);
        let consumed = self.pos - expr_start;
        let simple_negative = consumed == 2
            && self.tok_at(expr_start).kind == TokenKind::Minus
            && self.tok_at(expr_start + 1).kind == TokenKind::Number;
        let is_expression = !(consumed == 1 || simple_negative);
        self.expect_semi("the enum member");
        Some(EnumMemberItem {
            name,
            value,
            value_span,
            is_expression,
            decorators,
            doc,
            span: self.span_from(start_span),
        })
    }

    // Enum value expressions, evaluated while parsing. `Option<i128>` is `None` when a
    // semantic error was already reported; the outer `Option` is `None` on a syntax error.

    fn expr_or(&mut self, base: ScalarType, e: &[EnumMemberItem]) -> Option<Option<i128>> {
        let mut acc = self.expr_and(base, e)?;
        while self.eat(TokenKind::Pipe) {
            let rhs = self.expr_and(base, e)?;
            acc = acc.zip(rhs).map(|(a, b)| a | b);
        }
        Some(acc)
    }

    fn expr_and(&mut self, base: ScalarType, e: &[EnumMemberItem]) -> Option<Option<i128>> {
        let mut acc = self.expr_shift(base, e)?;
        while self.eat(TokenKind::Amp) {
            let rhs = self.expr_shift(base, e)?;
            acc = acc.zip(rhs).map(|(a, b)| a & b);
        }
        Some(acc)
    }

    fn expr_shift(&mut self, base: ScalarType, e: &[EnumMemberItem]) -> Option<Option<i128>> {
        let start = self.tok().span;
        let mut acc = self.expr_add(base, e)?;
        while matches!(self.kind(), TokenKind::Shl | TokenKind::Shr) {
            let left = self.advance().kind == TokenKind::Shl;
            let rhs = self.expr_add(base, e)?;
            acc = match acc.zip(rhs) {
                None => None,
                Some((a, b)) => {
                    let span = self.span_from(start);
                    if !(0..128).contains(&b) {
                        self.error(
                            Code::E029,
                            span,
                            format!("shift amount {b} is out of range (0..=127)"),
                        );
                        None
                    } else if left {
                        let r = a << b;
                        if r >> b != a {
                            self.error(Code::E029, span, "the shifted value overflows");
                            None
                        } else {
                            Some(r)
                        }
                    } else {
                        Some(a >> b)
                    }
                }
            };
        }
        Some(acc)
    }

    fn expr_add(&mut self, base: ScalarType, e: &[EnumMemberItem]) -> Option<Option<i128>> {
        let start = self.tok().span;
        let mut acc = self.expr_unary(base, e)?;
        while matches!(self.kind(), TokenKind::Plus | TokenKind::Minus) {
            let plus = self.advance().kind == TokenKind::Plus;
            let rhs = self.expr_unary(base, e)?;
            acc = match acc.zip(rhs) {
                None => None,
                Some((a, b)) => {
                    let r = if plus {
                        a.checked_add(b)
                    } else {
                        a.checked_sub(b)
                    };
                    if r.is_none() {
                        let span = self.span_from(start);
                        self.error(Code::E029, span, "the value overflows");
                    }
                    r
                }
            };
        }
        Some(acc)
    }

    fn expr_unary(&mut self, base: ScalarType, e: &[EnumMemberItem]) -> Option<Option<i128>> {
        match self.kind() {
            TokenKind::Minus | TokenKind::Tilde => {
                if !self.enter() {
                    return None;
                }
                let op = self.advance();
                let inner = self.expr_unary(base, e);
                self.leave();
                let v = inner?;
                Some(v.and_then(|v| {
                    if op.kind == TokenKind::Minus {
                        v.checked_neg()
                    } else {
                        Some(bitwise_not(v, base))
                    }
                }))
            }
            _ => self.expr_primary(base, e),
        }
    }

    fn expr_primary(&mut self, base: ScalarType, e: &[EnumMemberItem]) -> Option<Option<i128>> {
        let t = self.tok();
        match t.kind {
            TokenKind::Number => {
                self.advance();
                let text = self.text(&t);
                match classify_number(text) {
                    Number::Integer(v) => match i128::try_from(v) {
                        Ok(v) => Some(Some(v)),
                        Err(_) => {
                            self.error(
                                Code::E021,
                                t.span,
                                format!("'{text}' is too large for an enum value"),
                            );
                            Some(None)
                        }
                    },
                    Number::IntegerTooLarge => {
                        self.error(
                            Code::E021,
                            t.span,
                            format!("'{text}' is too large for an enum value"),
                        );
                        Some(None)
                    }
                    Number::Float(_) => {
                        self.error(
                            Code::E029,
                            t.span,
                            format!("enum values must be integers, found '{text}'"),
                        );
                        Some(None)
                    }
                    Number::Malformed => {
                        self.error(Code::E020, t.span, format!("malformed number '{text}'"));
                        Some(None)
                    }
                }
            }
            TokenKind::Ident => {
                self.advance();
                let name = self.text(&t);
                match e.iter().rev().find(|m| m.name.name == name) {
                    Some(m) => Some(m.value),
                    None => {
                        self.push(
                            Diagnostic::error(
                                Code::E029,
                                t.span,
                                format!("unknown enum member '{name}'"),
                            )
                            .with_note(
                                "a value can refer to members declared before it in the same enum",
                            ),
                        );
                        Some(None)
                    }
                }
            }
            TokenKind::LParen => {
                if !self.enter() {
                    return None;
                }
                self.advance();
                let inner = self.expr_or(base, e);
                let close = inner.is_some() && self.expect(TokenKind::RParen, "')'").is_some();
                self.leave();
                if close { inner } else { None }
            }
            _ => {
                self.unexpected("a number, an earlier member's name or '('");
                None
            }
        }
    }

    // ---- structs and messages --------------------------------------------------------

    /// `{ fields and nested definitions }`.
    fn fields_body(&mut self, message: bool) -> Option<(Vec<FieldItem>, Vec<Item>)> {
        let what = if message { "message" } else { "struct" };
        self.expect(TokenKind::LBrace, &format!("'{{' to open the {what} body"))?;
        let mut fields = Vec::new();
        let mut nested = Vec::new();
        loop {
            let start = self.pos;
            match self.kind() {
                TokenKind::RBrace => {
                    self.advance();
                    break;
                }
                TokenKind::Eof => {
                    self.unexpected(&format!("'}}' to close the {what}"));
                    break;
                }
                TokenKind::Semi => {
                    self.advance();
                    continue;
                }
                _ => {}
            }
            let Some(decorators) = self.decorators() else {
                self.recover_member(start);
                continue;
            };
            if self.nested_definition_starts() {
                let r = if self.at(TokenKind::Hash) {
                    let span = self.tok().span;
                    self.error(
                        Code::E019,
                        span,
                        "decorator definitions must be at the top level",
                    );
                    let _ = self.decorator_definition(start, Context::Nested);
                    None
                } else {
                    self.item(decorators, start, Context::Nested)
                };
                match r {
                    Some(item) => nested.push(item),
                    None => self.recover_member(start),
                }
            } else {
                match self.field(decorators, message, start) {
                    Some(f) => fields.push(f),
                    None => self.recover_member(start),
                }
            }
        }
        Some((fields, nested))
    }

    fn field(
        &mut self,
        decorators: Vec<DecoratorUse>,
        message: bool,
        first: usize,
    ) -> Option<FieldItem> {
        let start_span = self.tok_at(first).span;
        let name_index = self.pos;
        let name = self.member_name("a field")?;
        let doc = self.doc(
            first,
            Some(name_index),
            "documentation of a field is kept only when it comes right before its name, after any decorators",
        );
        let mut tag = None;
        if message {
            if !self.at(TokenKind::LParen) {
                let span = self.tok().span;
                let msg = format!(
                    "expected '(' and a tag after the message field name, found {}",
                    self.found()
                );
                self.push(Diagnostic::error(Code::E010, span, msg).with_help(format!(
                    "message fields are written `{}(1): type;`",
                    name.name
                )));
                return None;
            }
            self.advance();
            let t = self.expect(TokenKind::Number, "the field's tag (1..=255)")?;
            match parse_unsigned(self.text(&t)) {
                Ok(v) if (1..=255).contains(&v) => tag = Some((v as u8, t.span)),
                Ok(v) => self.error(
                    Code::E054,
                    t.span,
                    format!("field tag {v} is out of range (1..=255)"),
                ),
                Err(why) => {
                    let msg = format!("invalid field tag '{}': {why}", self.text(&t));
                    self.error(Code::E020, t.span, msg)
                }
            }
            self.expect(TokenKind::RParen, "')' after the tag")?;
        } else if self.at(TokenKind::LParen) {
            let span = self.tok().span;
            self.push(
                Diagnostic::error(Code::E010, span, "struct fields have no tags")
                    .with_help(format!("write `{}: type;` or use a message", name.name)),
            );
            return None;
        }
        self.expect(TokenKind::Colon, "':' and the field's type")?;
        let ty = self.ty()?;
        self.expect_semi("the field");
        Some(FieldItem {
            name,
            tag,
            ty,
            decorators,
            doc,
            span: self.span_from(start_span),
        })
    }

    // ---- unions ----------------------------------------------------------------------

    fn union_body(&mut self) -> Option<UnionItem> {
        self.expect(TokenKind::LBrace, "'{' to open the union body")?;
        let mut item = UnionItem {
            branches: Vec::new(),
            nested: Vec::new(),
            had_errors: false,
        };
        loop {
            let start = self.pos;
            match self.kind() {
                TokenKind::RBrace => {
                    self.advance();
                    break;
                }
                TokenKind::Eof => {
                    self.unexpected("'}' to close the union");
                    item.had_errors = true;
                    break;
                }
                TokenKind::Semi => {
                    self.advance();
                    continue;
                }
                _ => {}
            }
            let Some(decorators) = self.decorators() else {
                item.had_errors = true;
                self.recover_member(start);
                continue;
            };
            if self.nested_definition_starts() {
                let r = if self.at(TokenKind::Hash) {
                    let span = self.tok().span;
                    self.error(
                        Code::E019,
                        span,
                        "decorator definitions must be at the top level",
                    );
                    let _ = self.decorator_definition(start, Context::Nested);
                    None
                } else {
                    self.item(decorators, start, Context::Nested)
                };
                match r {
                    Some(i) => item.nested.push(i),
                    None => self.recover_member(start),
                }
            } else if self.branch(decorators, start, &mut item).is_none() {
                item.had_errors = true;
                self.recover_member(start);
            }
        }
        Some(item)
    }

    fn branch(
        &mut self,
        decorators: Vec<DecoratorUse>,
        first: usize,
        union: &mut UnionItem,
    ) -> Option<()> {
        let start_span = self.tok_at(first).span;
        let mut visibility = Visibility::Default;
        let mut visibility_span = None;
        if matches!(self.kind(), TokenKind::Export | TokenKind::Local) {
            let t = self.advance();
            visibility_span = Some(t.span);
            if t.kind == TokenKind::Export {
                visibility = Visibility::Export;
            } else {
                visibility = Visibility::Local;
                self.push(Diagnostic::warning(
                    Code::W002,
                    t.span,
                    "'local' is redundant: union branches are local by default",
                ));
            }
        }
        let anchor = decorators.is_empty().then_some(first);
        let doc = self.doc(
            first,
            anchor,
            "documentation of a decorated union branch is not kept; document the branch's type instead",
        );
        let name = self.member_name("a branch")?;
        self.expect(TokenKind::LParen, "'(' and the branch's discriminator")?;
        let d = self.expect(TokenKind::Number, "the branch's discriminator (1..=255)")?;
        let discriminator = match parse_unsigned(self.text(&d)) {
            Ok(v) if (1..=255).contains(&v) => Some(v as u8),
            Ok(v) => {
                self.error(
                    Code::E056,
                    d.span,
                    format!("union discriminator {v} is out of range (1..=255)"),
                );
                None
            }
            Err(why) => {
                let msg = format!("invalid discriminator '{}': {why}", self.text(&d));
                self.error(Code::E020, d.span, msg);
                None
            }
        };
        self.expect(TokenKind::RParen, "')' after the discriminator")?;
        self.expect(TokenKind::Colon, "':' and the branch's type")?;
        let body_start = self.tok();
        let mut mutable = None;
        if self.at(TokenKind::Mut) {
            mutable = Some(self.advance().span);
        }
        let target = match self.kind() {
            TokenKind::LBrace => {
                let (fields, nested) = self.fields_body(false)?;
                let inline = Item {
                    name: name.clone(),
                    kind: ItemKind::Struct(StructItem {
                        mutable: mutable.is_some(),
                        fields,
                        nested,
                    }),
                    visibility,
                    visibility_span,
                    decorators: Vec::new(),
                    doc: doc.clone(),
                    span: self.span_from(body_start.span),
                };
                union.nested.push(inline);
                BranchTargetItem::Inline(union.nested.len() - 1)
            }
            TokenKind::Message => {
                if let Some(span) = mutable {
                    self.error(Code::E018, span, "'mut' cannot be applied to a message");
                }
                self.advance();
                let (fields, nested) = self.fields_body(true)?;
                let inline = Item {
                    name: name.clone(),
                    kind: ItemKind::Message(MessageItem { fields, nested }),
                    visibility,
                    visibility_span,
                    decorators: Vec::new(),
                    doc: doc.clone(),
                    span: self.span_from(body_start.span),
                };
                union.nested.push(inline);
                BranchTargetItem::Inline(union.nested.len() - 1)
            }
            TokenKind::Union => {
                let span = self.tok().span;
                self.push(
                    Diagnostic::error(Code::E059, span, "unions cannot be nested")
                        .with_help("a branch can be an inline struct (`{ ... }`), an inline message (`message { ... }`) or a struct or message type"),
                );
                self.advance();
                if self.at(TokenKind::LBrace) {
                    self.skip_group();
                }
                self.eat(TokenKind::Semi);
                return None;
            }
            TokenKind::Ident => {
                if let Some(span) = mutable {
                    self.error(
                        Code::E018,
                        span,
                        "'mut' cannot be applied to a type reference branch",
                    );
                }
                if let Some(span) = visibility_span {
                    self.error(
                        Code::E018,
                        span,
                        "visibility modifiers cannot be applied to type reference branches",
                    );
                }
                let ty = self.ty()?;
                BranchTargetItem::Reference(ty)
            }
            _ => {
                self.unexpected("'{', 'mut {', 'message {' or a type name");
                return None;
            }
        };
        self.expect_semi("the union branch");
        union.branches.push(BranchItem {
            name,
            discriminator,
            discriminator_span: d.span,
            target,
            decorators,
            doc,
            span: self.span_from(start_span),
        });
        Some(())
    }

    // ---- services --------------------------------------------------------------------

    fn service_body(&mut self) -> Option<ServiceItem> {
        let mut mixins = Vec::new();
        if self.eat(TokenKind::With) {
            loop {
                mixins.push(self.path("a service name after 'with'")?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect(TokenKind::LBrace, "'{' to open the service body")?;
        let mut methods = Vec::new();
        loop {
            let start = self.pos;
            match self.kind() {
                TokenKind::RBrace => {
                    self.advance();
                    break;
                }
                TokenKind::Eof => {
                    self.unexpected("'}' to close the service");
                    break;
                }
                TokenKind::Semi => {
                    self.advance();
                    continue;
                }
                _ => {}
            }
            let Some(decorators) = self.decorators() else {
                self.recover_member(start);
                continue;
            };
            if self.nested_definition_starts() && !self.at(TokenKind::Hash) {
                let span = self.tok().span;
                self.error(
                    Code::E019,
                    span,
                    "definitions cannot be nested in a service",
                );
                let _ = self.item(decorators, start, Context::Nested);
                self.recover_member(start);
                continue;
            }
            match self.method(decorators, start) {
                Some(m) => methods.push(m),
                None => self.recover_member(start),
            }
        }
        Some(ServiceItem { mixins, methods })
    }

    fn method(&mut self, decorators: Vec<DecoratorUse>, first: usize) -> Option<MethodItem> {
        let start_span = self.tok_at(first).span;
        if self.at(TokenKind::Number) {
            self.unexpected_definition_in_service();
            return None;
        }
        let name_index = self.pos;
        let name = self.member_name("a method")?;
        let doc = self.doc(
            first,
            Some(name_index),
            "documentation of a method is kept only when it comes right before its name, after any decorators",
        );
        self.expect(TokenKind::LParen, "'(' and the request type")?;
        let request_stream = self.eat(TokenKind::Stream);
        let request = self.ty()?;
        self.expect(TokenKind::RParen, "')' after the request type")?;
        self.expect(TokenKind::Colon, "':' and the response type")?;
        let response_stream = self.eat(TokenKind::Stream);
        let response = self.ty()?;
        self.expect_semi("the method");
        Some(MethodItem {
            name,
            request,
            request_stream,
            response,
            response_stream,
            decorators,
            doc,
            span: self.span_from(start_span),
        })
    }

    fn unexpected_definition_in_service(&mut self) {
        let span = self.tok().span;
        let msg = format!("expected a method name, found {}", self.found());
        self.push(Diagnostic::error(Code::E010, span, msg).with_help(
            "methods are written `Name(Request): Response;` (the `1 -> Type name(args)` syntax is gone)",
        ));
    }

    // ---- decorator definitions -------------------------------------------------------

    fn decorator_definition(&mut self, first: usize, ctx: Context) -> Option<Item> {
        let hash = self.advance();
        let doc = self.doc(first, Some(first), "");
        if !self.at_word("decorator") {
            self.unexpected("'decorator' after '#'");
            return None;
        }
        self.advance();
        self.expect(TokenKind::LParen, "'(' and the decorator's name")?;
        let name = self.def_name("a decorator")?;
        self.expect(TokenKind::RParen, "')' after the decorator's name")?;
        self.expect(TokenKind::LBrace, "'{' to open the decorator body")?;
        let mut def = DecoratorItem {
            targets: None,
            multiple: false,
            params: Vec::new(),
            validate: None,
            export: None,
        };
        loop {
            let start = self.pos;
            match self.kind() {
                TokenKind::RBrace => {
                    self.advance();
                    break;
                }
                TokenKind::Eof => {
                    self.unexpected("'}' to close the decorator definition");
                    break;
                }
                TokenKind::Semi | TokenKind::Comma => {
                    self.advance();
                    continue;
                }
                _ => {}
            }
            if self.decorator_body_item(&mut def).is_none() {
                if self.pos == start {
                    self.advance();
                }
                self.skip_decorator_item();
            }
        }
        if def.targets.is_none() {
            self.push(
                Diagnostic::error(
                    Code::E088,
                    name.span,
                    format!("decorator '{}' does not declare its targets", name.name),
                )
                .with_help("add e.g. `targets = FIELD | METHOD` (or `targets = ALL`)"),
            );
        }
        if ctx == Context::Nested {
            return None;
        }
        Some(Item {
            name,
            kind: ItemKind::Decorator(def),
            visibility: Visibility::Default,
            visibility_span: None,
            decorators: Vec::new(),
            doc,
            span: self.span_from(hash.span),
        })
    }

    fn skip_decorator_item(&mut self) {
        loop {
            match self.kind() {
                TokenKind::Eof | TokenKind::RBrace | TokenKind::Export => return,
                TokenKind::Ident
                    if ["targets", "multiple", "param", "validate"]
                        .iter()
                        .any(|w| self.at_word(w)) =>
                {
                    return;
                }
                TokenKind::LBrace => self.skip_group(),
                _ => {
                    self.advance();
                }
            }
        }
    }

    fn decorator_body_item(&mut self, def: &mut DecoratorItem) -> Option<()> {
        let t = self.tok();
        let word = if t.kind == TokenKind::Ident || t.kind == TokenKind::Export {
            self.text(&t)
        } else {
            ""
        };
        match word {
            "targets" => {
                self.advance();
                self.expect(TokenKind::Eq, "'=' after 'targets'")?;
                let start = self.tok().span;
                let mut bits = 0u8;
                loop {
                    let n = self.expect(TokenKind::Ident, "a target (ENUM, STRUCT, MESSAGE, UNION, FIELD, MEMBER, SERVICE, METHOD, BRANCH or ALL)")?;
                    match DecoratorTargets::from_name(self.text(&n)) {
                        Some(b) => bits |= b.0,
                        None => {
                            let msg = format!("unknown decorator target '{}'", self.text(&n));
                            self.push(Diagnostic::error(Code::E088, n.span, msg).with_note(
                                "targets are ENUM, STRUCT, MESSAGE, UNION, FIELD, MEMBER, SERVICE, METHOD, BRANCH and ALL",
                            ));
                        }
                    }
                    if !self.eat(TokenKind::Pipe) {
                        break;
                    }
                }
                let span = self.span_from(start);
                if def.targets.is_some() {
                    self.error(Code::E088, t.span, "'targets' is declared more than once");
                }
                def.targets = Some((bits, span));
            }
            "multiple" => {
                self.advance();
                self.expect(TokenKind::Eq, "'=' after 'multiple'")?;
                match self.kind() {
                    TokenKind::True => def.multiple = true,
                    TokenKind::False => def.multiple = false,
                    _ => {
                        self.unexpected("'true' or 'false'");
                        return None;
                    }
                }
                self.advance();
            }
            "param" => {
                let param = self.param()?;
                if def.params.iter().any(|p| p.name.name == param.name.name) {
                    let msg = format!("parameter '{}' is declared more than once", param.name.name);
                    self.error(Code::E044, param.name.span, msg);
                } else {
                    def.params.push(param);
                }
            }
            "validate" | "export" => {
                self.advance();
                let block = self.expect(
                    TokenKind::LuaBlock,
                    &format!("a Lua block `[[ ... ]]` after '{word}'"),
                )?;
                let text = self.lx.string_value(&block).unwrap_or_default().to_string();
                let span = Span::new(
                    block.span.source,
                    block.span.start + 2,
                    block.span.start + 2 + text.len() as u32,
                );
                let slot = if word == "validate" {
                    &mut def.validate
                } else {
                    &mut def.export
                };
                if slot.is_some() {
                    self.error(
                        Code::E088,
                        t.span,
                        format!("'{word}' is declared more than once"),
                    );
                }
                *slot = Some((text, span));
            }
            _ => {
                let msg = format!("unexpected {} in a decorator definition", self.found());
                self.push(Diagnostic::error(Code::E088, t.span, msg).with_note(
                    "a decorator definition holds `targets = ...`, `multiple = ...`, `param ...`, `validate [[ ... ]]` and `export [[ ... ]]`",
                ));
                return None;
            }
        }
        Some(())
    }

    fn param(&mut self) -> Option<ParamItem> {
        let kw_index = self.pos;
        let kw = self.advance();
        let doc = self.lx.doc_before(&self.tok_at(kw_index));
        let name = self.member_name("a parameter")?;
        let required = match self.kind() {
            TokenKind::Bang => true,
            TokenKind::Question => false,
            _ => {
                self.unexpected("'!' (required) or '?' (optional) after the parameter name");
                return None;
            }
        };
        self.advance();
        self.expect(TokenKind::Colon, "':' and the parameter's type")?;
        let t = self.expect(TokenKind::Ident, "the parameter's type")?;
        let tn = self.text(&t);
        let ty = if tn == "type" {
            ParamType::Type
        } else {
            match ScalarType::from_name(tn) {
                Some((s, alias)) => {
                    if alias {
                        self.alias_warning(t.span, tn, s);
                    }
                    ParamType::Scalar(s)
                }
                None => {
                    self.push(
                        Diagnostic::error(
                            Code::E088,
                            t.span,
                            format!("unknown parameter type '{tn}'"),
                        )
                        .with_note(
                            "parameter types are scalar types (bool, int32, string, ...) or `type`",
                        ),
                    );
                    return None;
                }
            }
        };
        let mut default = None;
        if self.eat(TokenKind::Eq) {
            default = Some(self.literal()?);
        }
        let mut allowed = Vec::new();
        if self.at_word("in") {
            self.advance();
            self.expect(TokenKind::LBracket, "'[' after 'in'")?;
            loop {
                if self.eat(TokenKind::RBracket) {
                    break;
                }
                allowed.push(self.literal()?);
                if self.eat(TokenKind::Comma) {
                    continue;
                }
                self.expect(TokenKind::RBracket, "',' or ']' in the allowed values")?;
                break;
            }
        }
        Some(ParamItem {
            name,
            required,
            ty,
            ty_span: t.span,
            default,
            allowed,
            doc,
            span: self.span_from(kw.span),
        })
    }
}

/// `~v` in the width of the enum's base type.
fn bitwise_not(v: i128, base: ScalarType) -> i128 {
    if base.is_signed() {
        !v
    } else {
        let bits = base.bits().unwrap_or(64);
        let mask: i128 = if bits >= 127 {
            i128::MAX
        } else {
            (1i128 << bits) - 1
        };
        !v & mask
    }
}

/// Levenshtein distance (for "did you mean" hints on short words).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(src: &str) -> Parsed {
        parse(SourceId(0), src)
    }

    fn codes(src: &str) -> Vec<Code> {
        p(src).diagnostics.iter().map(|d| d.code).collect()
    }

    fn errors(src: &str) -> Vec<Code> {
        p(src)
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.code)
            .collect()
    }

    fn enum_values(src: &str) -> Vec<Option<i128>> {
        let parsed = p(src);
        match &parsed.file.items[0].kind {
            ItemKind::Enum(e) => e.members.iter().map(|m| m.value).collect(),
            _ => panic!("not an enum"),
        }
    }

    #[test]
    fn header_ordering() {
        assert!(codes("edition = \"2026\"\npackage a.b\nimport \"x.bop\"\nstruct A {}").is_empty());
        assert_eq!(errors("import \"x.bop\"\npackage a;"), vec![Code::E015]);
        assert_eq!(errors("struct A {}\npackage a;"), vec![Code::E016]);
        assert_eq!(errors("package a\npackage b"), vec![Code::E017]);
        assert_eq!(errors("package a\nedition = \"2026\""), vec![Code::E014]);
        assert_eq!(errors("edition = \"2025\""), vec![Code::E013]);
        assert_eq!(codes("struct A {}\nimport \"x.bop\""), vec![Code::W001]);
        // Keywords are allowed in package name parts after the first.
        let parsed = p("package my.package;");
        assert_eq!(
            parsed.file.package.map(|p| p.0).as_deref(),
            Some("my.package")
        );
    }

    #[test]
    fn enum_expressions() {
        assert_eq!(
            enum_values(
                "enum F : int32 { None = 0; Read = 0x0001; Write = 1 << 1; RW = Read | Write; \
                 C = (Read | Write) | 0xF0 & 0x1F; M = -0x8; S = 16 >> 2; P = 1 + 2 - 4; N = ~0; }"
            ),
            vec![
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(0x13),
                Some(-8),
                Some(4),
                Some(-1),
                Some(-1)
            ]
        );
        assert_eq!(
            enum_values("enum U : uint8 { Z = 0; A = ~0; }"),
            vec![Some(0), Some(255)]
        );
        assert_eq!(
            enum_values("enum U : uint64 { A = ~1; }"),
            vec![Some(u64::MAX as i128 - 1)]
        );
        // Precedence: + - bind tighter than shifts, shifts than &, & than |:
        // 1 | (6 & (7 << (1 - 1))) = 7; read left to right it would be 13.
        assert_eq!(
            enum_values("enum E { A = 1 | 6 & 7 << 1 - 1; }"),
            vec![Some(7)]
        );
    }

    #[test]
    fn enum_expression_errors() {
        assert_eq!(errors("enum E { A = B; B = 0; }"), vec![Code::E029]);
        assert_eq!(errors("enum E { A = 1 << 200; }"), vec![Code::E029]);
        assert_eq!(errors("enum E { A = 1.5; }"), vec![Code::E029]);
        assert_eq!(errors("enum E { A = (1; B = 2; }"), vec![Code::E010]);
        assert_eq!(
            errors("enum E { A = 170141183460469231731687303715884105727 + 1; }"),
            vec![Code::E029]
        );
        assert_eq!(errors("enum E : int128 { A = 0; }"), vec![Code::E052]);
        assert_eq!(errors("enum E : string { A = 0; }"), vec![Code::E052]);
        let parsed = p("enum E { A = 1; B = A | 2; C = 3; }");
        match &parsed.file.items[0].kind {
            ItemKind::Enum(e) => {
                let exprs: Vec<bool> = e.members.iter().map(|m| m.is_expression).collect();
                assert_eq!(exprs, vec![false, true, false]);
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn structs_messages_and_nesting() {
        let parsed = p(
            "mut struct A { x: int32; map: string; struct B { y: A.B[]; } export enum C { Z = 0; } }\n\
             message M { a(1): map[string, int32[4][]]; const(2): bool; }",
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let ItemKind::Struct(s) = &parsed.file.items[0].kind else {
            panic!()
        };
        assert!(s.mutable);
        assert_eq!(s.fields.len(), 2);
        assert_eq!(s.nested.len(), 2);
        assert_eq!(s.nested[1].visibility, Visibility::Export);
        let ItemKind::Message(m) = &parsed.file.items[1].kind else {
            panic!()
        };
        assert_eq!(m.fields[1].tag.map(|t| t.0), Some(2));
    }

    #[test]
    fn field_tag_and_keyword_rules() {
        assert_eq!(errors("message M { a(0): int32; }"), vec![Code::E054]);
        assert_eq!(errors("message M { a(256): int32; }"), vec![Code::E054]);
        assert_eq!(errors("message M { a: int32; }"), vec![Code::E010]);
        assert_eq!(errors("struct S { a(1): int32; }"), vec![Code::E010]);
        assert_eq!(errors("struct S { with: int32; }"), vec![Code::E011]);
        assert_eq!(errors("struct enum {}"), vec![Code::E011]);
        assert!(errors("struct S { service: int32; stream: bool; local: bool; }").is_empty());
        assert_eq!(errors("struct S { x: int32[0]; }"), vec![Code::E062]);
        assert_eq!(errors("struct S { x: int32[65536]; }"), vec![Code::E062]);
        assert!(errors("struct S { x: byte[65535]; }").is_empty());
        assert_eq!(errors("struct S { x: array[int32]; }"), vec![Code::E010]);
        assert_eq!(codes("struct S { x: guid; }"), vec![Code::W003]);
    }

    #[test]
    fn unions() {
        let parsed = p(
            "union U { struct T {} A(1): { x: int32; }; export B(2): mut {}; C(3): message { m(1): T; }; D(4): T; }",
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let ItemKind::Union(u) = &parsed.file.items[0].kind else {
            panic!()
        };
        assert_eq!(u.branches.len(), 4);
        let names: Vec<&str> = u.nested.iter().map(|i| i.name.name.as_str()).collect();
        assert_eq!(names, vec!["T", "A", "B", "C"]);
        assert_eq!(u.nested[2].visibility, Visibility::Export);
        assert!(matches!(
            u.branches[3].target,
            BranchTargetItem::Reference(_)
        ));
        assert_eq!(errors("union U { A(0): {}; }"), vec![Code::E056]);
        assert_eq!(
            errors("union U { A(1): union { B(1): {}; }; }"),
            vec![Code::E059]
        );
        assert_eq!(
            errors("union U { A(1): mut message {}; }"),
            vec![Code::E018]
        );
        assert_eq!(errors("union U { export A(1): T; }"), vec![Code::E018]);
    }

    #[test]
    fn services_and_consts() {
        let parsed = p(
            "service S with A, b.C { M(Req): Res; N(stream Req): stream Res; @x O(R): stream R; }\n\
             const int64 X = -5; const byte[] B = b\"\\x00\"; local const string S = 'hi';",
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let ItemKind::Service(s) = &parsed.file.items[0].kind else {
            panic!()
        };
        assert_eq!(s.mixins.len(), 2);
        assert!(s.methods[1].request_stream && s.methods[1].response_stream);
        assert_eq!(parsed.file.items[3].visibility, Visibility::Local);
        assert_eq!(errors("service S { 1 -> void world(); }"), vec![Code::E010]);
        assert_eq!(errors("struct S { service T {} }"), vec![Code::E019]);
    }

    #[test]
    fn decorators_and_definitions() {
        let parsed = p(
            "/// Range check.\n#decorator(range) {\n targets = FIELD | MEMBER\n multiple = true\n \
             /// lower bound\n param min!: int32\n param mode?: string = \"a\" in [\"a\", \"b\"]\n \
             validate [[ if min > 0 then end ]]\n export [[ return {} ]]\n}\n\
             struct S { @range(1, mode: \"b\") @pkg.other x: int32; }",
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let item = &parsed.file.items[0];
        assert_eq!(item.doc.as_deref(), Some("Range check."));
        let ItemKind::Decorator(d) = &item.kind else {
            panic!()
        };
        assert_eq!(d.targets.map(|t| t.0), Some(16));
        assert!(d.multiple);
        assert_eq!(d.params.len(), 2);
        assert_eq!(d.params[0].doc.as_deref(), Some("lower bound"));
        assert_eq!(d.params[1].allowed.len(), 2);
        assert_eq!(
            d.validate.as_ref().map(|v| v.0.as_str()),
            Some(" if min > 0 then end ")
        );
        let ItemKind::Struct(s) = &parsed.file.items[1].kind else {
            panic!()
        };
        let decs = &s.fields[0].decorators;
        assert_eq!(decs[0].args.len(), 2);
        assert_eq!(decs[1].name.joined(), "pkg.other");
        assert_eq!(errors("#decorator(x) { }"), vec![Code::E088]);
        assert_eq!(errors("#decorator(x) { targets = NOPE }"), vec![Code::E088]);
        assert_eq!(
            errors("#decorator(x) { targets = ALL param y!: nope }"),
            vec![Code::E088]
        );
        assert_eq!(
            errors("#decorator(x) { targets = ALL bogus }"),
            vec![Code::E088]
        );
    }

    #[test]
    fn docs_follow_the_reference_placement() {
        let parsed = p(
            "/// lost\n@flags\nenum E { Z = 0; }\n@deprecated\n/// kept\nstruct S {}\n/// doc\nstruct T {}",
        );
        assert_eq!(parsed.file.items[0].doc, None);
        assert_eq!(parsed.file.items[1].doc.as_deref(), Some("kept"));
        assert_eq!(parsed.file.items[2].doc.as_deref(), Some("doc"));
        assert_eq!(
            parsed
                .diagnostics
                .iter()
                .map(|d| d.code)
                .collect::<Vec<_>>(),
            vec![Code::W005]
        );
    }

    #[test]
    fn recovery_reports_independent_errors() {
        let src = "struct A { x: ; y: int32; }\nmesage B {}\nstruct C { z: int32 }\nstruct D { w: bool; }";
        let parsed = p(src);
        let lines: Vec<u32> = parsed
            .diagnostics
            .iter()
            .map(|d| {
                let f = crate::source::SourceFile::new("x", src.to_string());
                f.line_col(d.span.start).line
            })
            .collect();
        assert_eq!(lines, vec![1, 2, 3]);
        let names: Vec<&str> = parsed
            .file
            .items
            .iter()
            .map(|i| i.name.name.as_str())
            .collect();
        assert_eq!(names, vec!["A", "C", "D"]);
        assert!(
            parsed.diagnostics[1]
                .notes
                .iter()
                .any(|n| n.contains("message"))
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep_types = format!(
            "struct S {{ x: {}int32{}; }}",
            "map[string, ".repeat(10_000),
            "]".repeat(10_000)
        );
        assert!(errors(&deep_types).contains(&Code::E012));
        let deep_arrays = format!("struct S {{ x: int32{}; }}", "[]".repeat(10_000));
        assert!(errors(&deep_arrays).contains(&Code::E012));
        let deep_parens = format!(
            "enum E {{ A = {}1{}; }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        assert!(errors(&deep_parens).contains(&Code::E012));
        let deep_unary = format!("enum E {{ A = {}1; }}", "-".repeat(10_000));
        assert!(errors(&deep_unary).contains(&Code::E012));
        let deep_structs = format!("{}{}", "struct A { ".repeat(10_000), "}".repeat(10_000));
        assert!(errors(&deep_structs).contains(&Code::E012));
        let deep_braces = format!("{}{}", "{".repeat(10_000), "}".repeat(10_000));
        assert!(!errors(&deep_braces).is_empty());
        let long_chain = format!("enum E {{ A = 1{}; }}", " | 1".repeat(10_000));
        assert!(errors(&long_chain).is_empty());
    }

    #[test]
    fn edit_distance_works() {
        assert_eq!(edit_distance("mesage", "message"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}

//! What the server answers: diagnostics, hover, definitions, references, document symbols,
//! completion, formatting and rename, all from the compiler's [`bebopc::index`].

use std::collections::HashMap;

use bebopc::diag::Severity;
use bebopc::index::{IndexedDef, Member, MemberKind, RefKind};
use bebopc::model::{DefBody, DefId, DefKind, ScalarType};
use bebopc::source::{SourceId, Span};
use lsp_types as lsp;
use lsp_types::{Position, Uri};

use crate::lsp::text::LineIndex;
use crate::lsp::workspace::{Compiled, Workspace};

/// The keywords offered by completion.
const KEYWORDS: &[&str] = &[
    "enum", "struct", "message", "union", "service", "const", "mut", "export", "local", "map",
    "stream", "import", "edition", "package", "true", "false", "with",
];

/// A request that cannot be answered, with the message for the editor.
pub struct Refused(pub String);

/// The LSP diagnostics of every file of a compilation that is one of `keys`.
pub fn diagnostics(compiled: &Compiled, keys: &[String]) -> Vec<(String, Vec<lsp::Diagnostic>)> {
    let mut by_key: HashMap<&str, Vec<lsp::Diagnostic>> =
        keys.iter().map(|k| (k.as_str(), Vec::new())).collect();
    let mut indexes: HashMap<SourceId, LineIndex<'_>> = HashMap::new();
    let comp = &compiled.analysis.compilation;
    for d in &comp.diagnostics {
        let Some(key) = compiled.key_of_source(d.span.source) else {
            continue;
        };
        let Some(list) = by_key.get_mut(key) else {
            continue;
        };
        let range = range_in(&mut indexes, compiled, d.span);
        let mut message = d.message.clone();
        if !d.span_label.is_empty() {
            message.push_str(&format!(" ({})", d.span_label));
        }
        for note in &d.notes {
            message.push('\n');
            message.push_str(note);
        }
        let related: Vec<lsp::DiagnosticRelatedInformation> = d
            .labels
            .iter()
            .filter_map(|l| {
                let key = compiled.key_of_source(l.span.source)?;
                let uri = compiled.uri_of_key(key)?;
                Some(lsp::DiagnosticRelatedInformation {
                    location: lsp::Location::new(uri, range_in(&mut indexes, compiled, l.span)),
                    message: l.message.clone(),
                })
            })
            .collect();
        list.push(lsp::Diagnostic {
            range,
            severity: Some(match d.severity {
                Severity::Error => lsp::DiagnosticSeverity::ERROR,
                Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            }),
            code: Some(lsp::NumberOrString::String(d.code.as_str().to_string())),
            source: Some("bebopc".to_string()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..lsp::Diagnostic::default()
        });
    }
    let mut out: Vec<(String, Vec<lsp::Diagnostic>)> = by_key
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn range_in<'a>(
    indexes: &mut HashMap<SourceId, LineIndex<'a>>,
    compiled: &'a Compiled,
    span: Span,
) -> lsp::Range {
    indexes
        .entry(span.source)
        .or_insert_with(|| LineIndex::new(compiled.text_of_source(span.source)))
        .range(span.start, span.end)
}

/// A position in a file of the compilation: its source and byte offset.
fn locate(compiled: &Compiled, key: &str, pos: Position) -> Option<(SourceId, u32)> {
    let file = *compiled.by_key.get(key)?;
    let source = compiled.analysis.index.files.get(file)?.source;
    let offset = LineIndex::new(compiled.text_of_source(source)).offset(pos);
    Some((source, offset))
}

fn location(compiled: &Compiled, span: Span) -> Option<lsp::Location> {
    let key = compiled.key_of_source(span.source)?;
    let uri = compiled.uri_of_key(key)?;
    let range = LineIndex::new(compiled.text_of_source(span.source)).range(span.start, span.end);
    Some(lsp::Location::new(uri, range))
}

/// The definition named at a position: by a reference to it or by its own name.
fn target_at(compiled: &Compiled, source: SourceId, offset: u32) -> Option<DefId> {
    let index = &compiled.analysis.index;
    if let Some(r) = index.reference_at(source, offset) {
        return Some(r.target);
    }
    index.definition_named_at(source, offset).map(|d| d.id)
}

/// `textDocument/hover`.
pub fn hover(ws: &mut Workspace, key: &str, pos: Position) -> Option<lsp::Hover> {
    let compiled = ws.around(key);
    let (source, offset) = locate(compiled, key, pos)?;
    let index = &compiled.analysis.index;
    let (text, span) = if let Some(r) = index.reference_at(source, offset) {
        (describe(compiled, index.def(r.target)?), r.span)
    } else if let Some(d) = index.definition_named_at(source, offset) {
        (describe(compiled, d), d.name_span)
    } else if let Some((d, m)) = index.member_named_at(source, offset) {
        (describe_member(compiled, d, m), m.name_span)
    } else {
        return None;
    };
    let range = LineIndex::new(compiled.text_of_source(source)).range(span.start, span.end);
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: text,
        }),
        range: Some(range),
    })
}

fn describe(compiled: &Compiled, d: &IndexedDef) -> String {
    let model = &compiled.analysis.partial_model;
    let mut out = format!("```bebop\n{} {}", d.kind.name(), d.fqn);
    let body = model.definitions.get(d.id.0 as usize).map(|m| &m.body);
    if let Some(DefBody::Enum(e)) = body {
        out.push_str(&format!(" : {}", e.base));
    }
    out.push_str("\n```");
    if let Some(doc) = &d.doc {
        out.push_str(&format!("\n\n{}", doc.trim()));
    }
    let mut facts: Vec<String> = Vec::new();
    match body {
        Some(DefBody::Struct(s)) => {
            if s.fixed_size > 0 {
                facts.push(format!("fixed size: {} bytes", s.fixed_size));
            } else if !s.fields.is_empty() {
                facts.push("variable size".to_string());
            }
            if s.is_mutable {
                facts.push("mutable".to_string());
            }
        }
        Some(DefBody::Service(s)) => {
            for m in &s.methods {
                facts.push(format!(
                    "`{}({}): {}` method id `0x{:08x}`",
                    m.name, m.request, m.response, m.id
                ));
            }
        }
        Some(DefBody::Const(c)) => facts.push(format!("type: `{}`", c.ty)),
        _ => {}
    }
    if d.kind == DefKind::Decorator {
        for m in &d.members {
            facts.push(param_line(m));
        }
    }
    if let Some(f) = compiled.analysis.index.files.get(d.file) {
        facts.push(format!("defined in `{}`", f.path));
    }
    if !facts.is_empty() {
        out.push_str("\n\n---\n");
        for f in facts {
            out.push_str(&format!("\n- {f}"));
        }
    }
    out
}

fn param_line(m: &Member) -> String {
    let mut s = format!("param `{}: {}`", m.name, m.detail);
    if let Some(doc) = &m.doc {
        s.push_str(&format!(": {}", doc.trim()));
    }
    s
}

fn describe_member(compiled: &Compiled, d: &IndexedDef, m: &Member) -> String {
    let model = &compiled.analysis.partial_model;
    let body = model.definitions.get(d.id.0 as usize).map(|m| &m.body);
    let mut out = String::from("```bebop\n");
    let mut facts = Vec::new();
    match m.kind {
        MemberKind::Field => {
            out.push_str(&format!("{}.{}: {}", d.name, m.name, m.detail));
            match (m.index, d.kind) {
                (Some(tag), _) => facts.push(format!("index {tag}")),
                (None, DefKind::Struct) => {
                    let pos = d.members.iter().position(|x| x.name_span == m.name_span);
                    if let Some(pos) = pos {
                        facts.push(format!("field {} of struct {}", pos, d.name));
                    }
                }
                _ => {}
            }
        }
        MemberKind::EnumMember => {
            out.push_str(&format!("{}.{} = {}", d.name, m.name, m.detail));
        }
        MemberKind::Branch => {
            out.push_str(&format!("{}.{}: {}", d.name, m.name, m.detail));
            if let Some(i) = m.index {
                facts.push(format!("discriminator {i}"));
            }
        }
        MemberKind::Method => {
            out.push_str(&format!("{}.{}{}", d.name, m.name, m.detail));
            if let Some(DefBody::Service(s)) = body {
                if let Some(method) = s.methods.iter().find(|x| x.name == m.name) {
                    facts.push(format!("method id `0x{:08x}`", method.id));
                }
            }
            if let Some(r) = &m.request {
                facts.push(format!("request: `{r}`"));
            }
            if let Some(r) = &m.response {
                facts.push(format!("response: `{r}`"));
            }
        }
        MemberKind::Param => out.push_str(&format!("param {}: {}", m.name, m.detail)),
    }
    out.push_str("\n```");
    if let Some(doc) = &m.doc {
        out.push_str(&format!("\n\n{}", doc.trim()));
    }
    if !facts.is_empty() {
        out.push_str("\n\n---\n");
        for f in facts {
            out.push_str(&format!("\n- {f}"));
        }
    }
    out
}

/// `textDocument/definition`.
pub fn definition(ws: &mut Workspace, key: &str, pos: Position) -> Option<lsp::Location> {
    let compiled = ws.around(key);
    let (source, offset) = locate(compiled, key, pos)?;
    let index = &compiled.analysis.index;
    // On an import's path: the imported file.
    if let Some(file) = compiled.by_key.get(key).and_then(|&f| index.files.get(f)) {
        let hit = file
            .import_spans
            .iter()
            .find(|(span, _)| span.start <= offset && offset <= span.end);
        if let Some(&(_, target)) = hit {
            let key = compiled.keys.get(target)?.as_deref()?;
            let uri = compiled.uri_of_key(key)?;
            return Some(lsp::Location::new(uri, lsp::Range::default()));
        }
    }
    let target = target_at(compiled, source, offset)?;
    let def = index.def(target)?;
    location(compiled, def.name_span)
}

/// `textDocument/references`.
pub fn references(
    ws: &mut Workspace,
    key: &str,
    pos: Position,
    include_declaration: bool,
) -> Vec<lsp::Location> {
    let compiled = ws.whole();
    let Some((source, offset)) = locate(compiled, key, pos) else {
        return Vec::new();
    };
    let Some(target) = target_at(compiled, source, offset) else {
        return Vec::new();
    };
    let index = &compiled.analysis.index;
    let mut out = Vec::new();
    if include_declaration {
        if let Some(d) = index.def(target) {
            out.extend(location(compiled, d.name_span));
        }
    }
    for r in index.references_to(target) {
        out.extend(location(compiled, r.span));
    }
    out
}

/// `textDocument/documentSymbol`.
#[allow(deprecated)] // `DocumentSymbol::deprecated` must be given
pub fn document_symbols(ws: &mut Workspace, key: &str) -> Vec<lsp::DocumentSymbol> {
    let compiled = ws.around(key);
    let Some(&file) = compiled.by_key.get(key) else {
        return Vec::new();
    };
    let index = &compiled.analysis.index;
    let Some(f) = index.files.get(file) else {
        return Vec::new();
    };
    let lines = LineIndex::new(compiled.text_of_source(f.source));
    fn symbol(
        index: &bebopc::index::SymbolIndex,
        lines: &LineIndex<'_>,
        id: DefId,
        depth: usize,
    ) -> Option<lsp::DocumentSymbol> {
        let d = index.def(id)?;
        let mut children: Vec<lsp::DocumentSymbol> = Vec::new();
        for m in &d.members {
            let span = m.span.to(m.name_span);
            children.push(lsp::DocumentSymbol {
                name: m.name.clone(),
                detail: (!m.detail.is_empty()).then(|| m.detail.clone()),
                kind: match m.kind {
                    MemberKind::Field => lsp::SymbolKind::FIELD,
                    MemberKind::EnumMember => lsp::SymbolKind::ENUM_MEMBER,
                    MemberKind::Branch => lsp::SymbolKind::ENUM_MEMBER,
                    MemberKind::Method => lsp::SymbolKind::METHOD,
                    MemberKind::Param => lsp::SymbolKind::PROPERTY,
                },
                tags: None,
                deprecated: None,
                range: lines.range(span.start, span.end),
                selection_range: lines.range(m.name_span.start, m.name_span.end),
                children: None,
            });
        }
        if depth < 64 {
            for &n in &d.nested {
                if let Some(nested) = symbol(index, lines, n, depth + 1) {
                    // An inline union branch is both a branch and a definition: it is shown
                    // once, as the definition (with its fields).
                    children.retain(|c| c.selection_range != nested.selection_range);
                    children.push(nested);
                }
            }
        }
        children.sort_by_key(|c| (c.range.start.line, c.range.start.character));
        let span = d.span.to(d.name_span);
        Some(lsp::DocumentSymbol {
            name: d.name.clone(),
            detail: Some(d.kind.name().to_string()),
            kind: match d.kind {
                DefKind::Enum => lsp::SymbolKind::ENUM,
                DefKind::Struct => lsp::SymbolKind::STRUCT,
                DefKind::Message => lsp::SymbolKind::CLASS,
                DefKind::Union => lsp::SymbolKind::ENUM,
                DefKind::Service => lsp::SymbolKind::INTERFACE,
                DefKind::Const => lsp::SymbolKind::CONSTANT,
                DefKind::Decorator => lsp::SymbolKind::FUNCTION,
            },
            tags: None,
            deprecated: None,
            range: lines.range(span.start, span.end),
            selection_range: lines.range(d.name_span.start, d.name_span.end),
            children: Some(children),
        })
    }
    f.definitions
        .iter()
        .filter_map(|&id| symbol(index, &lines, id, 0))
        .collect()
}

/// `textDocument/completion`: decorators (and their parameters) after `@`, else the type
/// names in scope, the built-in scalars and the keywords.
pub fn completion(ws: &mut Workspace, key: &str, pos: Position) -> Vec<lsp::CompletionItem> {
    let Some(text) = ws.text(key) else {
        return Vec::new();
    };
    let lines = LineIndex::new(text);
    let offset = lines.offset(pos) as usize;
    let line_start = lines.offset(Position::new(pos.line, 0)) as usize;
    let before = text.get(line_start..offset).unwrap_or("").to_string();
    let compiled = ws.around(key);
    let index = &compiled.analysis.index;
    let file = compiled.by_key.get(key).copied();
    let source = file.and_then(|f| index.files.get(f)).map(|f| f.source);
    let visible: Vec<usize> = file.map(|f| index.visible_files(f)).unwrap_or_default();
    // Top-level definitions that the file may name, and those of the standard schemas
    // loaded anywhere (for decorators not imported yet).
    let in_view = |d: &&IndexedDef| {
        d.parent.is_none()
            && visible.contains(&d.file)
            && (Some(d.file) == file || d.visibility != bebopc::model::Visibility::Local)
    };
    let prefix_char = before
        .chars()
        .rev()
        .find(|&c| !(c.is_alphanumeric() || c == '_' || c == '.'));
    if prefix_char == Some('@') {
        return index
            .definitions
            .iter()
            .filter(in_view)
            .filter(|d| d.kind == DefKind::Decorator)
            .map(|d| {
                let params: Vec<String> = d
                    .members
                    .iter()
                    .map(|m| format!("{}: {}", m.name, m.detail))
                    .collect();
                let mut doc = d.doc.clone().unwrap_or_default();
                for m in &d.members {
                    doc.push_str(&format!("\n\n{}", param_line(m)));
                }
                lsp::CompletionItem {
                    label: d.name.clone(),
                    kind: Some(lsp::CompletionItemKind::FUNCTION),
                    detail: Some(format!("@{}({})", d.name, params.join(", "))),
                    documentation: Some(lsp::Documentation::MarkupContent(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: doc.trim().to_string(),
                    })),
                    ..lsp::CompletionItem::default()
                }
            })
            .collect();
    }
    // Inside `@name(` ... : the parameters of that decorator.
    if let Some(name) = open_decorator_call(&before) {
        let params = index
            .definitions
            .iter()
            .filter(in_view)
            .filter(|d| d.kind == DefKind::Decorator && d.name == name)
            .flat_map(|d| d.members.iter())
            .map(|m| lsp::CompletionItem {
                label: m.name.clone(),
                kind: Some(lsp::CompletionItemKind::PROPERTY),
                detail: Some(m.detail.clone()),
                documentation: m.doc.clone().map(lsp::Documentation::String),
                insert_text: Some(format!("{}: ", m.name)),
                ..lsp::CompletionItem::default()
            })
            .collect::<Vec<_>>();
        if !params.is_empty() {
            return params;
        }
    }
    let mut items: Vec<lsp::CompletionItem> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |label: String, kind, detail: String, doc: Option<String>| {
        if seen.insert(label.clone()) {
            items.push(lsp::CompletionItem {
                label,
                kind: Some(kind),
                detail: Some(detail),
                documentation: doc.map(lsp::Documentation::String),
                ..lsp::CompletionItem::default()
            });
        }
    };
    // Definitions nested in the ones around the cursor.
    if let Some(source) = source {
        let mut around = index.definition_around(source, offset as u32).map(|d| d.id);
        while let Some(id) = around {
            let Some(d) = index.def(id) else { break };
            for &n in &d.nested {
                if let Some(n) = index.def(n) {
                    add(
                        n.name.clone(),
                        kind_of(n.kind),
                        n.fqn.clone(),
                        n.doc.clone(),
                    );
                }
            }
            around = d.parent;
        }
    }
    for d in index.definitions.iter().filter(in_view) {
        if matches!(d.kind, DefKind::Decorator) {
            continue;
        }
        add(
            d.name.clone(),
            kind_of(d.kind),
            d.fqn.clone(),
            d.doc.clone(),
        );
    }
    for s in ScalarType::ALL {
        add(
            s.name().to_string(),
            lsp::CompletionItemKind::TYPE_PARAMETER,
            "built-in type".to_string(),
            None,
        );
    }
    for k in KEYWORDS {
        add(
            k.to_string(),
            lsp::CompletionItemKind::KEYWORD,
            "keyword".to_string(),
            None,
        );
    }
    items
}

/// The decorator whose argument list is open at the end of `before` (`@range(min: 1, `).
fn open_decorator_call(before: &str) -> Option<&str> {
    let open = before.rfind('(')?;
    if before[open..].contains(')') {
        return None;
    }
    let head = before[..open].trim_end();
    let at = head.rfind('@')?;
    let name = &head[at + 1..];
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    valid.then(|| name.rsplit('.').next().unwrap_or(name))
}

fn kind_of(kind: DefKind) -> lsp::CompletionItemKind {
    match kind {
        DefKind::Enum => lsp::CompletionItemKind::ENUM,
        DefKind::Struct => lsp::CompletionItemKind::STRUCT,
        DefKind::Message => lsp::CompletionItemKind::CLASS,
        DefKind::Union => lsp::CompletionItemKind::ENUM,
        DefKind::Service => lsp::CompletionItemKind::INTERFACE,
        DefKind::Const => lsp::CompletionItemKind::CONSTANT,
        DefKind::Decorator => lsp::CompletionItemKind::FUNCTION,
    }
}

/// `textDocument/formatting`: the whole document in the canonical layout; `None` when it
/// has syntax errors (nothing to change).
pub fn formatting(ws: &Workspace, key: &str) -> Option<Vec<lsp::TextEdit>> {
    let text = ws.text(key)?;
    let formatted = bebopc::format::format_source(SourceId(0), text, &ws.format).ok()?;
    if formatted == text {
        return Some(Vec::new());
    }
    Some(vec![lsp::TextEdit::new(
        LineIndex::new(text).whole(),
        formatted,
    )])
}

/// Whether `name` can name a definition.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
        && ScalarType::from_name(name).is_none()
}

/// `textDocument/rename`: the definition at the position and every reference to it, in
/// every file of the workspace.
// `WorkspaceEdit` keys its changes by `Uri`, whose hash is its text (the cell inside is a
// parsing cache of `fluent-uri` that equality and hashing do not look at).
#[allow(clippy::mutable_key_type)]
pub fn rename(
    ws: &mut Workspace,
    key: &str,
    pos: Position,
    new_name: &str,
) -> Result<lsp::WorkspaceEdit, Refused> {
    if !valid_name(new_name) {
        return Err(Refused(format!(
            "'{new_name}' is not a valid name (a letter or '_', then letters, digits or '_'; not a keyword or built-in type)"
        )));
    }
    let compiled = ws.whole();
    let (source, offset) = locate(compiled, key, pos)
        .ok_or_else(|| Refused("the document is not known".to_string()))?;
    let Some(target) = target_at(compiled, source, offset) else {
        let text = compiled.text_of_source(source);
        let word = word_at(text, offset as usize);
        if ScalarType::from_name(word).is_some() {
            return Err(Refused(format!(
                "'{word}' is a built-in type and cannot be renamed"
            )));
        }
        return Err(Refused("there is no definition to rename here".to_string()));
    };
    let index = &compiled.analysis.index;
    let def = index
        .def(target)
        .ok_or_else(|| Refused("there is no definition to rename here".to_string()))?;
    if index.files.get(def.file).is_none_or(|f| f.builtin) {
        return Err(Refused(format!(
            "'{}' is defined in a built-in schema and cannot be renamed",
            def.fqn
        )));
    }
    let mut spans: Vec<Span> = vec![def.name_span];
    spans.extend(
        index
            .references_to(target)
            .filter(|r| r.kind != RefKind::Decorator || def.kind == DefKind::Decorator)
            .map(|r| r.name_span),
    );
    let mut changes: HashMap<Uri, Vec<lsp::TextEdit>> = HashMap::new();
    for span in spans {
        if let Some(loc) = location(compiled, span) {
            changes
                .entry(loc.uri)
                .or_default()
                .push(lsp::TextEdit::new(loc.range, new_name.to_string()));
        }
    }
    Ok(lsp::WorkspaceEdit {
        changes: Some(changes),
        ..lsp::WorkspaceEdit::default()
    })
}

fn word_at(text: &str, offset: usize) -> &str {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let offset = offset.min(text.len());
    let mut start = offset;
    while start > 0 {
        match text.get(..start).and_then(|t| t.chars().next_back()) {
            Some(c) if is_word(c) => start -= c.len_utf8(),
            _ => break,
        }
    }
    let end = text
        .get(offset..)
        .unwrap_or("")
        .find(|c: char| !is_word(c))
        .map(|i| offset + i)
        .unwrap_or(text.len());
    text.get(start..end).unwrap_or("")
}

/// The token types of semantic tokens, in legend order.
pub const TOKEN_TYPES: &[lsp::SemanticTokenType] = &[
    lsp::SemanticTokenType::KEYWORD,
    lsp::SemanticTokenType::TYPE,
    lsp::SemanticTokenType::STRUCT,
    lsp::SemanticTokenType::ENUM,
    lsp::SemanticTokenType::CLASS,
    lsp::SemanticTokenType::INTERFACE,
    lsp::SemanticTokenType::FUNCTION,
    lsp::SemanticTokenType::VARIABLE,
    lsp::SemanticTokenType::PROPERTY,
    lsp::SemanticTokenType::ENUM_MEMBER,
    lsp::SemanticTokenType::METHOD,
    lsp::SemanticTokenType::PARAMETER,
    lsp::SemanticTokenType::NUMBER,
    lsp::SemanticTokenType::STRING,
    lsp::SemanticTokenType::COMMENT,
    lsp::SemanticTokenType::DECORATOR,
];

/// The token modifiers of semantic tokens, in legend order (bit 0 first).
pub const TOKEN_MODIFIERS: &[lsp::SemanticTokenModifier] = &[
    lsp::SemanticTokenModifier::DECLARATION,
    lsp::SemanticTokenModifier::DOCUMENTATION,
    lsp::SemanticTokenModifier::DEFAULT_LIBRARY,
];

const T_KEYWORD: u32 = 0;
const T_TYPE: u32 = 1;
const T_VARIABLE: u32 = 7;
const T_PROPERTY: u32 = 8;
const T_ENUM_MEMBER: u32 = 9;
const T_METHOD: u32 = 10;
const T_PARAMETER: u32 = 11;
const T_NUMBER: u32 = 12;
const T_STRING: u32 = 13;
const T_COMMENT: u32 = 14;
const T_DECORATOR: u32 = 15;
const M_DECLARATION: u32 = 1;
const M_DOCUMENTATION: u32 = 2;
const M_DEFAULT_LIBRARY: u32 = 4;

fn def_token(kind: DefKind) -> u32 {
    match kind {
        DefKind::Struct => 2,
        DefKind::Enum => 3,
        DefKind::Message | DefKind::Union => 4,
        DefKind::Service => 5,
        DefKind::Decorator => T_DECORATOR,
        DefKind::Const => T_VARIABLE,
    }
}

/// `textDocument/semanticTokens/full`: keywords, scalars, definitions and their members,
/// resolved names (by what they name), numbers, strings and comments.
pub fn semantic_tokens(ws: &mut Workspace, key: &str) -> Option<lsp::SemanticTokens> {
    use bebopc::lexer::{TokenKind as K, TriviaKind, lex};
    let compiled = ws.around(key);
    let index = &compiled.analysis.index;
    let file = index.files.get(*compiled.by_key.get(key)?)?;
    let source = file.source;
    let text = compiled.text_of_source(source);
    let mut known: HashMap<u32, (u32, u32)> = HashMap::new();
    for d in index
        .definitions
        .iter()
        .filter(|d| d.name_span.source == source)
    {
        known.insert(d.name_span.start, (def_token(d.kind), M_DECLARATION));
        for m in &d.members {
            let t = match m.kind {
                MemberKind::Field => T_PROPERTY,
                MemberKind::EnumMember | MemberKind::Branch => T_ENUM_MEMBER,
                MemberKind::Method => T_METHOD,
                MemberKind::Param => T_PARAMETER,
            };
            known.insert(m.name_span.start, (t, M_DECLARATION));
        }
    }
    for r in index.references.iter().filter(|r| r.span.source == source) {
        if let Some(d) = index.def(r.target) {
            let lib = if index.files.get(d.file).is_some_and(|f| f.builtin) {
                M_DEFAULT_LIBRARY
            } else {
                0
            };
            known.insert(r.name_span.start, (def_token(d.kind), lib));
        }
    }
    let lexed = lex(source, text);
    // (start, end, type, modifiers)
    let mut spans: Vec<(u32, u32, u32, u32)> = Vec::new();
    for t in &lexed.tokens {
        let (start, end) = (t.span.start, t.span.end);
        let class = match t.kind {
            K::Enum
            | K::Struct
            | K::Message
            | K::Union
            | K::Service
            | K::Const
            | K::Mut
            | K::Export
            | K::Local
            | K::Map
            | K::Array
            | K::Stream
            | K::Import
            | K::Edition
            | K::Package
            | K::True
            | K::False
            | K::With => Some((T_KEYWORD, 0)),
            K::Number => Some((T_NUMBER, 0)),
            K::String | K::Bytes => Some((T_STRING, 0)),
            K::Ident => known.get(&start).copied().or_else(|| {
                let word = text.get(start as usize..end as usize).unwrap_or("");
                ScalarType::from_name(word).map(|_| (T_TYPE, M_DEFAULT_LIBRARY))
            }),
            _ => None,
        };
        if let Some((ty, mods)) = class {
            spans.push((start, end, ty, mods));
        }
    }
    for c in &lexed.trivia {
        let mods = match c.kind {
            TriviaKind::DocLine | TriviaKind::DocBlock => M_DOCUMENTATION,
            TriviaKind::Line | TriviaKind::Block => 0,
        };
        spans.push((c.span.start, c.span.end, T_COMMENT, mods));
    }
    spans.sort_unstable();
    let lines = LineIndex::new(text);
    let mut data: Vec<lsp::SemanticToken> = Vec::new();
    let (mut last_line, mut last_start) = (0u32, 0u32);
    let mut emitted_to = 0u32;
    for (start, end, ty, mods) in spans {
        if start < emitted_to {
            continue; // overlapping (cannot happen with a consistent lexer)
        }
        emitted_to = end;
        // One token per line: multi-line comments and strings are split.
        let mut piece_start = start;
        while piece_start < end {
            let slice = text.get(piece_start as usize..end as usize).unwrap_or("");
            let piece_end = match slice.find(['\n', '\r']) {
                Some(i) => piece_start + i as u32,
                None => end,
            };
            let a = lines.position(piece_start);
            let b = lines.position(piece_end);
            if b.line == a.line && b.character > a.character {
                let delta_line = a.line - last_line;
                let delta_start = if delta_line == 0 {
                    a.character - last_start
                } else {
                    a.character
                };
                data.push(lsp::SemanticToken {
                    delta_line,
                    delta_start,
                    length: b.character - a.character,
                    token_type: ty,
                    token_modifiers_bitset: mods,
                });
                last_line = a.line;
                last_start = a.character;
            }
            // Past the line break.
            let rest = text.get(piece_end as usize..end as usize).unwrap_or("");
            let skip = rest
                .chars()
                .take_while(|c| *c == '\n' || *c == '\r')
                .map(char::len_utf8)
                .sum::<usize>();
            if skip == 0 {
                break;
            }
            piece_start = piece_end + skip as u32;
        }
    }
    Some(lsp::SemanticTokens {
        result_id: None,
        data,
    })
}

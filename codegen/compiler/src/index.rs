//! A symbol index of a compilation, for editors (`bebopc lsp`): every definition with its
//! members and where they are written, and every name that refers to a definition (type
//! references, decorator usages, service mixins) with the definition it resolves to.
//!
//! Unlike the [`Model`](crate::model::Model), the index is built even when the schemas have
//! errors: whatever parsed is indexed, and names that do not resolve are left out.
//!
//! ```
//! use bebopc::Compiler;
//! use bebopc::index::RefKind;
//!
//! let files: &[(&str, &[u8])] = &[
//!     ("a.bop", b"struct Point { x: int32; }"),
//!     ("b.bop", b"import \"a.bop\"\nmessage M { p(1): Point; }"),
//! ];
//! let analysis = Compiler::new().analyze_in_memory(files, &["b.bop"]);
//! let index = &analysis.index;
//! let point = index.definitions.iter().find(|d| d.name == "Point").unwrap();
//! let uses: Vec<_> = index.references_to(point.id).collect();
//! assert_eq!(uses.len(), 1);
//! assert_eq!(uses[0].kind, RefKind::Type);
//! assert_eq!(analysis.compilation.sources.slice(uses[0].span), "Point");
//! ```

use crate::ast::{self, Item, ItemKind, TypeExpr};
use crate::model::{DefId, DefKind, Visibility};
use crate::resolve::{LoadedFile, Symbols};
use crate::source::{SourceId, Span};

/// The index of one compilation.
#[derive(Clone, Debug, Default)]
pub struct SymbolIndex {
    /// Every loaded file, in load order (roots first).
    pub files: Vec<IndexedFile>,
    /// Every definition, indexed by [`DefId`] (the ids of the model, when there is one).
    pub definitions: Vec<IndexedDef>,
    /// Every name that resolved to a definition, in file and source order.
    pub references: Vec<Reference>,
}

/// One loaded file.
#[derive(Clone, Debug)]
pub struct IndexedFile {
    /// The path as given or imported.
    pub path: String,
    /// Its text in the compilation's source map.
    pub source: SourceId,
    /// A built-in standard schema.
    pub builtin: bool,
    /// One of the files compiled (not only imported).
    pub root: bool,
    /// The files it imports (indices into [`SymbolIndex::files`]), in order.
    pub imports: Vec<usize>,
    /// Each import's path string (its span, quotes included) and the file it loaded.
    pub import_spans: Vec<(Span, usize)>,
    /// `package`, when declared.
    pub package: Option<String>,
    /// Its top-level definitions in source order.
    pub definitions: Vec<DefId>,
}

/// One definition.
#[derive(Clone, Debug)]
pub struct IndexedDef {
    /// Its id.
    pub id: DefId,
    /// The file (index into [`SymbolIndex::files`]).
    pub file: usize,
    /// The definition it is nested in.
    pub parent: Option<DefId>,
    /// Simple name.
    pub name: String,
    /// Fully qualified name.
    pub fqn: String,
    /// What it is.
    pub kind: DefKind,
    /// Visibility as written.
    pub visibility: Visibility,
    /// Doc comment.
    pub doc: Option<String>,
    /// The name.
    pub name_span: Span,
    /// The whole definition.
    pub span: Span,
    /// Nested definitions, in source order.
    pub nested: Vec<DefId>,
    /// Fields, enum members, union branches, service methods or decorator parameters.
    pub members: Vec<Member>,
}

/// What a [`Member`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberKind {
    /// A struct or message field.
    Field,
    /// An enum member.
    EnumMember,
    /// A union branch.
    Branch,
    /// A service method.
    Method,
    /// A decorator parameter.
    Param,
}

/// A field, enum member, union branch, method or decorator parameter.
#[derive(Clone, Debug)]
pub struct Member {
    /// What it is.
    pub kind: MemberKind,
    /// Name.
    pub name: String,
    /// The name.
    pub name_span: Span,
    /// The whole member.
    pub span: Span,
    /// Doc comment.
    pub doc: Option<String>,
    /// The type as written (fields, parameters, branch references), the value (enum
    /// members), or `(Req): Res` (methods).
    pub detail: String,
    /// The message tag, union discriminator or enum value, when there is one.
    pub index: Option<i128>,
    /// For methods: the request and response types as written.
    pub request: Option<String>,
    /// For methods: the response type as written.
    pub response: Option<String>,
}

/// What kind of name a [`Reference`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefKind {
    /// A type: a field, element, map value, union branch, method request or response.
    Type,
    /// The name after `@`.
    Decorator,
    /// A service named after `with`.
    Mixin,
}

/// A name that resolved to a definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The whole name as written (`base.Point`).
    pub span: Span,
    /// The last part of the name (`Point`): what a rename replaces.
    pub name_span: Span,
    /// The definition it names.
    pub target: DefId,
    /// What kind of name it is.
    pub kind: RefKind,
}

impl SymbolIndex {
    /// The definition with this id.
    pub fn def(&self, id: DefId) -> Option<&IndexedDef> {
        self.definitions.get(id.0 as usize)
    }

    /// The file with this source.
    pub fn file_of_source(&self, source: SourceId) -> Option<usize> {
        self.files.iter().position(|f| f.source == source)
    }

    /// The references to a definition.
    pub fn references_to(&self, id: DefId) -> impl Iterator<Item = &Reference> {
        self.references.iter().filter(move |r| r.target == id)
    }

    /// The reference whose name covers `offset` in `source` (its end included, so that a
    /// cursor just after a name finds it).
    pub fn reference_at(&self, source: SourceId, offset: u32) -> Option<&Reference> {
        self.references
            .iter()
            .filter(|r| r.span.source == source && r.span.start <= offset && offset <= r.span.end)
            .min_by_key(|r| r.span.len())
    }

    /// The definition whose name covers `offset` in `source`.
    pub fn definition_named_at(&self, source: SourceId, offset: u32) -> Option<&IndexedDef> {
        self.definitions.iter().find(|d| {
            d.name_span.source == source && d.name_span.start <= offset && offset <= d.name_span.end
        })
    }

    /// The member whose name covers `offset` in `source`, with its definition.
    pub fn member_named_at(&self, source: SourceId, offset: u32) -> Option<(&IndexedDef, &Member)> {
        self.definitions.iter().find_map(|d| {
            d.members
                .iter()
                .find(|m| {
                    m.name_span.source == source
                        && m.name_span.start <= offset
                        && offset <= m.name_span.end
                })
                .map(|m| (d, m))
        })
    }

    /// The innermost definition whose span covers `offset` in `source`.
    pub fn definition_around(&self, source: SourceId, offset: u32) -> Option<&IndexedDef> {
        self.definitions
            .iter()
            .filter(|d| d.span.source == source && d.span.start <= offset && offset <= d.span.end)
            .min_by_key(|d| d.span.len())
    }

    /// Files whose top-level definitions `file` may name: itself and its direct imports.
    pub fn visible_files(&self, file: usize) -> Vec<usize> {
        let mut v = vec![file];
        if let Some(f) = self.files.get(file) {
            for &t in &f.imports {
                if !v.contains(&t) {
                    v.push(t);
                }
            }
        }
        v
    }
}

/// Builds the index from the loaded files and their symbol table.
pub(crate) fn build(files: &[LoadedFile], syms: &Symbols<'_>) -> SymbolIndex {
    let mut index = SymbolIndex {
        files: files
            .iter()
            .enumerate()
            .map(|(i, f)| IndexedFile {
                path: f.path.clone(),
                source: f.source,
                builtin: f.builtin,
                root: f.root,
                imports: f.imports.iter().flatten().copied().collect(),
                import_spans: f
                    .ast
                    .imports
                    .iter()
                    .zip(&f.imports)
                    .filter_map(|(decl, t)| t.map(|t| (decl.span, t)))
                    .collect(),
                package: f.ast.package.as_ref().map(|p| p.0.clone()),
                definitions: syms
                    .top_order
                    .get(i)
                    .map(|ids| ids.iter().map(|&d| DefId(d as u32)).collect())
                    .unwrap_or_default(),
            })
            .collect(),
        definitions: Vec::with_capacity(syms.syms.len()),
        references: Vec::new(),
    };
    let mut refs = Refs {
        syms,
        out: Vec::new(),
    };
    for (id, sym) in syms.syms.iter().enumerate() {
        let item: &Item = sym.item;
        index.definitions.push(IndexedDef {
            id: DefId(id as u32),
            file: sym.file,
            parent: sym.parent.map(|p| DefId(p as u32)),
            name: sym.name.to_string(),
            fqn: sym.fqn.clone(),
            kind: sym.kind,
            visibility: sym.visibility,
            doc: item.doc.clone(),
            name_span: item.name.span,
            span: item.span,
            nested: sym.nested.iter().map(|&n| DefId(n as u32)).collect(),
            members: members(item),
        });
        refs.item(sym.file, id, item);
    }
    refs.out
        .sort_by_key(|r| (r.span.source, r.span.start, r.span.end));
    refs.out.dedup();
    index.references = refs.out;
    index
}

fn members(item: &Item) -> Vec<Member> {
    let mut out = Vec::new();
    let member = |kind, name: &ast::Ident, span, doc: &Option<String>, detail: String| Member {
        kind,
        name: name.name.clone(),
        name_span: name.span,
        span,
        doc: doc.clone(),
        detail,
        index: None,
        request: None,
        response: None,
    };
    match &item.kind {
        ItemKind::Struct(s) => {
            for f in &s.fields {
                out.push(member(
                    MemberKind::Field,
                    &f.name,
                    f.span,
                    &f.doc,
                    type_text(&f.ty),
                ));
            }
        }
        ItemKind::Message(m) => {
            for f in &m.fields {
                let mut x = member(MemberKind::Field, &f.name, f.span, &f.doc, type_text(&f.ty));
                x.index = f.tag.map(|(t, _)| t as i128);
                out.push(x);
            }
        }
        ItemKind::Enum(e) => {
            for m in &e.members {
                let detail = m.value.map(|v| v.to_string()).unwrap_or_default();
                let mut x = member(MemberKind::EnumMember, &m.name, m.span, &m.doc, detail);
                x.index = m.value;
                out.push(x);
            }
        }
        ItemKind::Union(u) => {
            for b in &u.branches {
                let detail = match &b.target {
                    ast::BranchTargetItem::Reference(t) => type_text(t),
                    ast::BranchTargetItem::Inline(i) => u
                        .nested
                        .get(*i)
                        .map(|n| n.name.name.clone())
                        .unwrap_or_default(),
                };
                let mut x = member(MemberKind::Branch, &b.name, b.span, &b.doc, detail);
                x.index = b.discriminator.map(i128::from);
                out.push(x);
            }
        }
        ItemKind::Service(s) => {
            for m in &s.methods {
                let req = format!(
                    "{}{}",
                    if m.request_stream { "stream " } else { "" },
                    type_text(&m.request)
                );
                let res = format!(
                    "{}{}",
                    if m.response_stream { "stream " } else { "" },
                    type_text(&m.response)
                );
                let mut x = member(
                    MemberKind::Method,
                    &m.name,
                    m.span,
                    &m.doc,
                    format!("({req}): {res}"),
                );
                x.request = Some(req);
                x.response = Some(res);
                out.push(x);
            }
        }
        ItemKind::Decorator(d) => {
            for p in &d.params {
                let detail = format!("{}{}", p.ty, if p.required { "!" } else { "?" });
                out.push(member(MemberKind::Param, &p.name, p.span, &p.doc, detail));
            }
        }
        ItemKind::Const(_) => {}
    }
    out
}

/// A type as written, rebuilt from the syntax tree.
pub fn type_text(t: &TypeExpr) -> String {
    match t {
        TypeExpr::Scalar(s, _) => s.name().to_string(),
        TypeExpr::Array(e, _) => format!("{}[]", type_text(e)),
        TypeExpr::FixedArray(e, n, _) => format!("{}[{n}]", type_text(e)),
        TypeExpr::Map(k, v, _) => format!("map[{}, {}]", type_text(k), type_text(v)),
        TypeExpr::Named(p) => p.joined(),
    }
}

struct Refs<'s, 'a> {
    syms: &'s Symbols<'a>,
    out: Vec<Reference>,
}

impl Refs<'_, '_> {
    fn push(&mut self, file: usize, scope: Option<usize>, path: &ast::Path, kind: RefKind) {
        let what = match kind {
            RefKind::Type => "type",
            RefKind::Decorator => "decorator",
            RefKind::Mixin => "service",
        };
        // The leading parts of a qualified name (`Outer` of `Outer.Inner`) name definitions
        // too, when they resolve on their own (a package prefix does not).
        for end in 1..path.parts.len() {
            let prefix = ast::Path {
                parts: path.parts[..end].to_vec(),
                span: path.span,
            };
            let (Some(first), Some(last)) = (prefix.parts.first(), prefix.parts.last()) else {
                continue;
            };
            let span = Span::new(path.span.source, first.span.start, last.span.end);
            if let Ok(target) = self.syms.resolve(file, scope, &prefix, "type") {
                self.out.push(Reference {
                    span,
                    name_span: last.span,
                    target: DefId(target as u32),
                    kind,
                });
            }
        }
        if let Ok(target) = self.syms.resolve(file, scope, path, what) {
            let name_span = path.parts.last().map(|p| p.span).unwrap_or(path.span);
            self.out.push(Reference {
                span: path.span,
                name_span,
                target: DefId(target as u32),
                kind,
            });
        }
    }

    fn ty(&mut self, file: usize, scope: usize, t: &TypeExpr) {
        match t {
            TypeExpr::Scalar(..) => {}
            TypeExpr::Array(e, _) | TypeExpr::FixedArray(e, _, _) => self.ty(file, scope, e),
            TypeExpr::Map(k, v, _) => {
                self.ty(file, scope, k);
                self.ty(file, scope, v);
            }
            TypeExpr::Named(p) => self.push(file, Some(scope), p, RefKind::Type),
        }
    }

    fn decorators(&mut self, file: usize, uses: &[ast::DecoratorUse]) {
        for u in uses {
            self.push(file, None, &u.name, RefKind::Decorator);
        }
    }

    /// The names used directly in one definition (nested definitions are their own).
    fn item(&mut self, file: usize, id: usize, item: &Item) {
        self.decorators(file, &item.decorators);
        match &item.kind {
            ItemKind::Struct(s) => {
                for f in &s.fields {
                    self.decorators(file, &f.decorators);
                    self.ty(file, id, &f.ty);
                }
            }
            ItemKind::Message(m) => {
                for f in &m.fields {
                    self.decorators(file, &f.decorators);
                    self.ty(file, id, &f.ty);
                }
            }
            ItemKind::Enum(e) => {
                for m in &e.members {
                    self.decorators(file, &m.decorators);
                }
            }
            ItemKind::Union(u) => {
                for b in &u.branches {
                    self.decorators(file, &b.decorators);
                    if let ast::BranchTargetItem::Reference(t) = &b.target {
                        self.ty(file, id, t);
                    }
                }
            }
            ItemKind::Service(s) => {
                for m in &s.mixins {
                    self.push(file, Some(id), m, RefKind::Mixin);
                }
                for m in &s.methods {
                    self.decorators(file, &m.decorators);
                    self.ty(file, id, &m.request);
                    self.ty(file, id, &m.response);
                }
            }
            ItemKind::Const(c) => self.ty(file, id, &c.ty),
            ItemKind::Decorator(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Compiler;
    use crate::index::{MemberKind, RefKind};

    fn files<'a>(list: &'a [(&'a str, &'a str)]) -> Vec<(&'a str, &'a [u8])> {
        list.iter().map(|(p, t)| (*p, t.as_bytes())).collect()
    }

    #[test]
    fn indexes_definitions_members_and_references_despite_errors() {
        let text = "struct Outer { export struct Inner { v: int32; } }\n\
                    message M { a(1): Outer.Inner; b(2): Nope; c(3): Outer; }\n\
                    service S { get(M): M; }\n";
        let list = [("a.bop", text)];
        let analysis = Compiler::new().analyze_in_memory(&files(&list), &["a.bop"]);
        assert!(analysis.compilation.has_errors(), "Nope is unknown");
        let index = &analysis.index;
        let sources = &analysis.compilation.sources;
        let by_name = |n: &str| index.definitions.iter().find(|d| d.name == n).unwrap();
        let outer = by_name("Outer");
        let inner = by_name("Inner");
        assert_eq!(inner.parent, Some(outer.id));
        assert_eq!(outer.nested, vec![inner.id]);
        // `Outer.Inner` names both: its first part Outer, the whole Inner.
        let outer_refs: Vec<&str> = index
            .references_to(outer.id)
            .map(|r| sources.slice(r.name_span))
            .collect();
        assert_eq!(outer_refs, ["Outer", "Outer"]);
        let inner_refs: Vec<_> = index.references_to(inner.id).collect();
        assert_eq!(inner_refs.len(), 1);
        assert_eq!(sources.slice(inner_refs[0].span), "Outer.Inner");
        assert_eq!(sources.slice(inner_refs[0].name_span), "Inner");
        // The unknown name is not a reference; the fields are all members.
        let m = by_name("M");
        let fields: Vec<(&str, Option<i128>, &str)> = m
            .members
            .iter()
            .map(|f| (f.name.as_str(), f.index, f.detail.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                ("a", Some(1), "Outer.Inner"),
                ("b", Some(2), "Nope"),
                ("c", Some(3), "Outer")
            ]
        );
        let s = by_name("S");
        assert_eq!(s.members[0].kind, MemberKind::Method);
        assert_eq!(s.members[0].detail, "(M): M");
        let m_refs: Vec<_> = index.references_to(m.id).collect();
        assert_eq!(m_refs.len(), 2);
        assert!(m_refs.iter().all(|r| r.kind == RefKind::Type));
        // Lookups by position.
        let at = inner_refs[0].name_span.start + 1;
        assert_eq!(
            index
                .reference_at(inner_refs[0].span.source, at)
                .map(|r| r.target),
            Some(inner.id)
        );
        let at = outer.name_span.start;
        assert_eq!(
            index
                .definition_named_at(outer.name_span.source, at)
                .map(|d| d.id),
            Some(outer.id)
        );
    }

    #[test]
    fn analysis_reports_what_compilation_reports() {
        // Many unknown names: the spelling suggestions are bounded per compilation, and
        // indexing after the analysis must not change which ones get one.
        let mut text = String::from("struct Point { x: int32; }\n");
        for i in 0..80 {
            text.push_str(&format!("struct S{i} {{ p: Poimt; q: Pont{i}; }}\n"));
        }
        let list = [("a.bop", text.as_str())];
        let plain = Compiler::new().compile_in_memory(&files(&list), &["a.bop"]);
        let analysis = Compiler::new().analyze_in_memory(&files(&list), &["a.bop"]);
        assert_eq!(plain.diagnostics, analysis.compilation.diagnostics);
        assert!(analysis.partial_model.definitions.len() > 80);
    }
}

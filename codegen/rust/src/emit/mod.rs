//! Turning the analysed [`Model`] into Rust tokens: shared helpers (paths, types, docs,
//! attributes) and the module tree. Each definition kind has its own submodule.

mod consts;
mod defmt;
mod enums;
mod once;
mod owned;
mod records;
mod services;

use std::collections::BTreeMap;
use std::str::FromStr;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::analysis::{FixedRepr, fixed_repr};
use crate::layout::{Code, Meta, TyText, tokens_text};
use crate::model::{Body, Def, DefId, Deprecation, Field, Model, OWNED_MODULE, Ty};
use crate::names::{ident, ident_text};
use crate::rules::{AttributeRules, ExternTarget, ItemForm, def_path};
use crate::{GenerateError, Options, OwnedMap};

/// The longest fixed array serde implements its traits for; longer ones in serde-derived
/// types go through the runtime's `serde_support` helpers.
const SERDE_MAX_ARRAY: usize = 32;

/// Where one item of the output comes from: a definition's view side or owned side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The view type of a definition (or its enum, constant, service), in its module.
    View(DefId),
    /// The owned form of a type, in the `owned` module.
    Owned(DefId),
}

/// The layout of one generated file: which items go in which module, in order. The items
/// are emitted and formatted one by one ([`Emitter::emit_source`]), then put together
/// ([`Emitter::assemble`]); no token tree of the whole file is ever built.
pub(crate) struct Plan {
    views: ModNode,
    owned: ModNode,
    /// Every item, in the order of the output.
    pub sources: Vec<Source>,
}

impl Plan {
    /// The module depth of `source`'s items (0: the file's top level).
    pub(crate) fn depth(&self, model: &Model<'_>, source: Source) -> usize {
        match source {
            Source::View(id) => model.defs[id].module.len(),
            Source::Owned(id) => 1 + model.defs[id].module.len(),
        }
    }
}

/// The code of one [`Source`]: tokens (formatted by prettyplease) or text already in
/// rustfmt's layout (see [`crate::layout`]).
pub(crate) enum Item {
    Tokens(TokenStream),
    Text(String),
}

pub(crate) struct Emitter<'m, 'd> {
    pub model: &'m Model<'d>,
    pub opts: &'m Options,
    pub rt: TokenStream,
    /// The runtime path as text (`::bebop_core`).
    pub rt_text: String,
    pub owned_cfg: Option<TokenStream>,
    pub defmt: Option<TokenStream>,
    /// The async runtime path and its cfg gate, when async services are generated.
    pub async_rpc: Option<(TokenStream, Option<TokenStream>)>,
    /// The cfg gate of the serde derives.
    pub serde_cfg: Option<TokenStream>,
    /// Definitions generated elsewhere ([`Options::extern_paths`]).
    pub externs: &'m BTreeMap<DefId, ExternTarget>,
    pub type_rules: AttributeRules,
    pub field_rules: AttributeRules,
}

/// A module of the output, with its items (indices into [`Plan::sources`]) and child modules
/// in first-use order.
#[derive(Default)]
struct ModNode {
    items: Vec<usize>,
    children: Vec<(String, ModNode)>,
}

impl ModNode {
    fn at(&mut self, path: &[String]) -> &mut ModNode {
        let mut node = self;
        for seg in path {
            let i = match node.children.iter().position(|(n, _)| n == seg) {
                Some(i) => i,
                None => {
                    node.children.push((seg.clone(), ModNode::default()));
                    node.children.len() - 1
                }
            };
            node = &mut node.children[i].1;
        }
        node
    }

    /// Whether the module would hold nothing: no item with text, no child that is not empty.
    fn is_empty(&self, texts: &[String]) -> bool {
        self.items.iter().all(|&i| texts[i].is_empty())
            && self.children.iter().all(|(_, c)| c.is_empty(texts))
    }
}

pub(crate) fn parse_tokens(what: &str, s: &str) -> Result<TokenStream, GenerateError> {
    TokenStream::from_str(s)
        .map_err(|e| GenerateError::option(what, format!("`{s}` does not tokenize: {e}")))
}

impl<'m, 'd> Emitter<'m, 'd> {
    pub(crate) fn new(
        model: &'m Model<'d>,
        opts: &'m Options,
        externs: &'m BTreeMap<DefId, ExternTarget>,
    ) -> Result<Self, GenerateError> {
        let rt = parse_tokens("runtime", &opts.runtime_path)?;
        Ok(Emitter {
            model,
            opts,
            rt_text: tokens_text(&rt),
            rt,
            owned_cfg: opts
                .owned_cfg
                .as_deref()
                .map(|p| parse_tokens("owned_cfg", p))
                .transpose()?,
            defmt: opts
                .defmt
                .as_deref()
                .map(|p| parse_tokens("defmt", p))
                .transpose()?,
            async_rpc: match &opts.async_rpc {
                Some(path) if opts.owned_types => Some((
                    parse_tokens("async_rpc", path)?,
                    opts.async_rpc_cfg
                        .as_deref()
                        .map(|p| parse_tokens("async_rpc_cfg", p))
                        .transpose()?,
                )),
                _ => None,
            },
            serde_cfg: opts
                .serde_cfg
                .as_deref()
                .map(|p| parse_tokens("serde_cfg", p))
                .transpose()?,
            externs,
            type_rules: AttributeRules::new("type_attribute", &opts.type_attributes)?,
            field_rules: AttributeRules::new("field_attribute", &opts.field_attributes)?,
        })
    }

    pub(crate) fn def(&self, id: DefId) -> &'m Def<'d> {
        &self.model.defs[id]
    }

    /// Lays out the whole file: the items of every definition, in order, and their modules.
    pub(crate) fn plan(&self) -> Result<Plan, GenerateError> {
        if self.opts.owned_types {
            if let Some(id) = crate::analysis::owned_fixed_array_cycle(self.model) {
                return Err(GenerateError::unsupported(
                    &self.def(id).fqn,
                    "holds a fixed array of a type that contains it; its owned form would be infinitely large (generate without owned types)",
                ));
            }
        }
        if self.opts.serde {
            self.check_serde_arrays()?;
        }
        let mut plan = Plan {
            views: ModNode::default(),
            owned: ModNode::default(),
            sources: Vec::new(),
        };
        for (id, def) in self.model.defs.iter().enumerate() {
            if self.externs.contains_key(&id) || matches!(def.body, Body::Decorator) {
                continue;
            }
            plan.views.at(&def.module).items.push(plan.sources.len());
            plan.sources.push(Source::View(id));
            if self.opts.owned_types && def.is_type() {
                plan.owned.at(&def.module).items.push(plan.sources.len());
                plan.sources.push(Source::Owned(id));
            }
        }
        Ok(plan)
    }

    /// The items of one [`Source`] (empty when the definition needs none there).
    pub(crate) fn emit_source(&self, source: Source, depth: usize) -> Result<Item, GenerateError> {
        let text = |f: &dyn Fn(&mut Code)| {
            let mut code = Code::new(depth);
            f(&mut code);
            Ok(Item::Text(code.into_text()))
        };
        let tokens = |t: Result<TokenStream, GenerateError>| t.map(Item::Tokens);
        match source {
            Source::View(id) => match &self.def(id).body {
                Body::Struct { .. } | Body::Message { .. } | Body::Union { .. } => {
                    let mut code = Code::new(depth);
                    self.record_view(&mut code, id);
                    self.one_pass(&mut code, id)?;
                    Ok(Item::Text(code.into_text()))
                }
                Body::Enum { .. } => text(&|c| self.enumeration(c, id)),
                Body::Flags { .. } => text(&|c| self.flags(c, id)),
                Body::Const { .. } => tokens(self.constant(id)),
                Body::Service { .. } => {
                    let mut code = Code::new(depth);
                    self.service(&mut code, id)?;
                    Ok(Item::Text(code.into_text()))
                }
                Body::Decorator => Ok(Item::Text(String::new())),
            },
            Source::Owned(id) => {
                let def = self.def(id);
                let mut path = vec![OWNED_MODULE.to_string()];
                path.extend(def.module.iter().cloned());
                if def.is_record() {
                    let mut code = Code::new(depth);
                    self.record_owned(&mut code, id, &path)?;
                    Ok(Item::Text(code.into_text()))
                } else {
                    text(&|c| self.same_owned(c, id, &path))
                }
            }
        }
    }

    /// Puts the file together from the formatted text of every item of `plan` (`texts`,
    /// in the order of [`Plan::sources`]): the ABI check, then the modules with their items,
    /// modules that would be empty left out.
    pub(crate) fn assemble(
        &self,
        plan: &Plan,
        texts: &mut [String],
    ) -> Result<String, GenerateError> {
        let abi_message = format!(
            "this code was generated by bebopc-gen-rust {} for runtime ABI {}; regenerate it or use a matching bebop-core",
            env!("CARGO_PKG_VERSION"),
            crate::CODEGEN_ABI
        );
        let mut code = Code::new(0);
        code.line("const _: () = ::core::assert!(");
        code.push_depth();
        code.line(format_args!(
            "{}::CODEGEN_ABI == {},",
            self.rt_text,
            crate::CODEGEN_ABI
        ));
        code.line(Literal::string(&abi_message));
        code.pop_depth();
        code.line(");");
        let mut out = code.into_text();
        let docs = self.module_docs();
        self.render_children(&plan.views, &[], &docs, false, texts, 0, &mut out);
        if self.opts.owned_types && !plan.owned.is_empty(texts) {
            let mut code = Code::new(0);
            code.docs(&[
                "Owned forms of the types of this file (`String`, `Vec`, maps, `Box` for",
                "recursion), with `Encode`/`Decode` and conversions from and to the views",
                "(`ToOwnedValue`, `AsView`). Enums, flags and records without borrowed data",
                "are their own owned forms and appear here as aliases.",
            ]);
            if let Some(p) = &self.owned_cfg {
                code.attr("cfg", &Meta::parse_list(p));
            }
            code.open(format_args!("pub mod {}", ident(OWNED_MODULE)));
            out.push_str(&code.into_text());
            self.render_children(&plan.owned, &[], &docs, true, texts, 1, &mut out);
            out.push_str("}\n");
        }
        Ok(out)
    }

    fn module_docs(&self) -> BTreeMap<Vec<String>, String> {
        let mut docs = BTreeMap::new();
        for (path, pkg) in &self.model.packages {
            docs.insert(path.clone(), format!("Definitions of package `{pkg}`."));
        }
        for def in &self.model.defs {
            if let Some(m) = &def.nested_module {
                let mut path = def.module.clone();
                path.push(m.clone());
                docs.insert(
                    path,
                    format!(
                        "Definitions nested in `{}` ({} `{}`).",
                        def.name,
                        def.kind_word(),
                        def.fqn
                    ),
                );
            }
        }
        docs
    }

    #[allow(clippy::too_many_arguments)]
    fn render_children(
        &self,
        node: &ModNode,
        path: &[String],
        docs: &BTreeMap<Vec<String>, String>,
        owned: bool,
        texts: &mut [String],
        depth: usize,
        out: &mut String,
    ) {
        for &item in &node.items {
            // Each item's text is moved into the file and freed: the file's text is held
            // about once, not twice.
            out.push_str(&std::mem::take(&mut texts[item]));
        }
        for (name, child) in &node.children {
            if child.is_empty(texts) {
                continue;
            }
            let mut child_path = path.to_vec();
            child_path.push(name.clone());
            let doc = match docs.get(&child_path) {
                Some(d) if owned => format!("Owned forms of: {}", lower_first(d)),
                Some(d) => d.clone(),
                None => format!("Module `{}`.", child_path.join("::")),
            };
            let parent_name = if path.is_empty() && owned {
                Some(OWNED_MODULE)
            } else {
                path.last().map(String::as_str)
            };
            let mut code = Code::new(depth);
            code.docs(&[doc]);
            if path.is_empty() || parent_name == Some(name.as_str()) {
                code.line("#[allow(clippy::module_inception)]");
            }
            code.open(format_args!("pub mod {}", ident(name)));
            out.push_str(&code.into_text());
            self.render_children(child, &child_path, docs, owned, texts, depth + 1, out);
            let mut code = Code::new(depth);
            code.line("}");
            out.push_str(&code.into_text());
        }
    }

    // ----- paths and types -------------------------------------------------------------

    /// The path from module `from` to item `name` in module `to`: `super::` up to the
    /// common ancestor, then down.
    pub(crate) fn rel_path(&self, from: &[String], to: &[String], name: &str) -> TokenStream {
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        let mut out = TokenStream::new();
        for _ in common..from.len() {
            out.extend(quote!(super::));
        }
        for seg in &to[common..] {
            let s = ident(seg);
            out.extend(quote!(#s::));
        }
        let n = ident(name);
        out.extend(quote!(#n));
        out
    }

    /// The path of a definition's view type (without lifetime) from module `from`.
    pub(crate) fn view_path(&self, from: &[String], id: DefId) -> TokenStream {
        if let Some(e) = self.externs.get(&id) {
            return e.view.clone();
        }
        let d = self.def(id);
        self.rel_path(from, &d.module, &d.name)
    }

    /// The module path of a definition's owned form.
    pub(crate) fn owned_module(&self, id: DefId) -> Vec<String> {
        let mut m = vec![OWNED_MODULE.to_string()];
        m.extend(self.def(id).module.iter().cloned());
        m
    }

    /// The path of a definition's owned type from module `from` (inside the owned tree):
    /// the owned form for records with borrowed data, the view type otherwise.
    pub(crate) fn owned_path(&self, from: &[String], id: DefId) -> TokenStream {
        if let Some(e) = self.externs.get(&id) {
            // `resolve_externs` made sure that the paths generated code uses are known.
            return e.owned.clone().unwrap_or_else(|| e.view.clone());
        }
        let d = self.def(id);
        if d.is_record() && d.lifetime {
            self.rel_path(from, &self.owned_module(id), &d.name)
        } else {
            self.rel_path(from, &d.module, &d.name)
        }
    }

    /// `Name<'a>` or `Name`.
    pub(crate) fn view_type_of(&self, from: &[String], id: DefId) -> TokenStream {
        let p = self.view_path(from, id);
        if self.def(id).lifetime {
            quote!(#p<'a>)
        } else {
            p
        }
    }

    pub(crate) fn view_ty(&self, from: &[String], ty: &Ty) -> TokenStream {
        let rt = &self.rt;
        match ty {
            Ty::Bool => quote!(bool),
            Ty::U8 => quote!(u8),
            Ty::I8 => quote!(i8),
            Ty::I16 => quote!(i16),
            Ty::U16 => quote!(u16),
            Ty::I32 => quote!(i32),
            Ty::U32 => quote!(u32),
            Ty::I64 => quote!(i64),
            Ty::U64 => quote!(u64),
            Ty::I128 => quote!(i128),
            Ty::U128 => quote!(u128),
            Ty::F16 => quote!(#rt::f16),
            Ty::BF16 => quote!(#rt::bf16),
            Ty::F32 => quote!(f32),
            Ty::F64 => quote!(f64),
            Ty::Str => quote!(&'a str),
            Ty::Uuid => quote!(#rt::Uuid),
            Ty::Timestamp => quote!(#rt::Timestamp),
            Ty::Duration => quote!(#rt::Duration),
            Ty::Array(el) if **el == Ty::U8 => quote!(&'a [u8]),
            Ty::Array(el) => {
                let el = self.view_ty(from, el);
                quote!(#rt::Array<'a, #el>)
            }
            Ty::Fixed(el, n) => {
                let lit = Literal::usize_unsuffixed(*n);
                let elt = self.view_ty(from, el);
                match fixed_repr(self.model, el, *n) {
                    FixedRepr::Bytes => quote!(&'a [u8; #lit]),
                    FixedRepr::Inline => quote!([#elt; #lit]),
                    FixedRepr::View => quote!(#rt::FixedArray<'a, #elt, #lit>),
                }
            }
            Ty::Map(k, v) => {
                let k = self.view_ty(from, k);
                let v = self.view_ty(from, v);
                quote!(#rt::Map<'a, #k, #v>)
            }
            Ty::Def(d) => self.view_type_of(from, *d),
        }
    }

    pub(crate) fn owned_ty(&self, from: &[String], ty: &Ty) -> TokenStream {
        let rt = &self.rt;
        match ty {
            Ty::Str => quote!(#rt::alloc_types::String),
            Ty::Array(el) => {
                let el = self.owned_ty(from, el);
                quote!(#rt::alloc_types::Vec<#el>)
            }
            Ty::Fixed(el, n) => {
                let el = self.owned_ty(from, el);
                let n = Literal::usize_unsuffixed(*n);
                quote!([#el; #n])
            }
            Ty::Map(k, v) => {
                let k = self.owned_ty(from, k);
                let v = self.owned_ty(from, v);
                match self.opts.owned_map {
                    OwnedMap::BTreeMap => quote!(#rt::alloc_types::BTreeMap<#k, #v>),
                    OwnedMap::Vec => quote!(#rt::alloc_types::Vec<(#k, #v)>),
                }
            }
            Ty::Def(d) => self.owned_path(from, *d),
            scalar => self.view_ty(from, scalar),
        }
    }

    // ----- paths and types, as text -------------------------------------------------------

    /// [`Self::rel_path`] as text.
    pub(crate) fn rel_path_text(&self, from: &[String], to: &[String], name: &str) -> String {
        let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        let mut out = String::new();
        for _ in common..from.len() {
            out.push_str("super::");
        }
        for seg in &to[common..] {
            out.push_str(&ident_text(seg));
            out.push_str("::");
        }
        out.push_str(&ident_text(name));
        out
    }

    /// [`Self::view_path`] as text.
    pub(crate) fn view_path_text(&self, from: &[String], id: DefId) -> String {
        if let Some(e) = self.externs.get(&id) {
            return tokens_text(&e.view);
        }
        let d = self.def(id);
        self.rel_path_text(from, &d.module, &d.name)
    }

    /// [`Self::owned_path`] as text.
    pub(crate) fn owned_path_text(&self, from: &[String], id: DefId) -> String {
        if let Some(e) = self.externs.get(&id) {
            return tokens_text(e.owned.as_ref().unwrap_or(&e.view));
        }
        let d = self.def(id);
        if d.is_record() && d.lifetime {
            self.rel_path_text(from, &self.owned_module(id), &d.name)
        } else {
            self.rel_path_text(from, &d.module, &d.name)
        }
    }

    /// [`Self::view_type_of`] as text.
    pub(crate) fn view_type_text(&self, from: &[String], id: DefId) -> TyText {
        let p = self.view_path_text(from, id);
        if self.def(id).lifetime {
            TyText::generic(p, vec![TyText::leaf("'a")])
        } else {
            TyText::leaf(p)
        }
    }

    /// `{rt}::{name}`.
    fn rt_item(&self, name: &str) -> String {
        format!("{}::{name}", self.rt_text)
    }

    /// [`Self::view_ty`] as text.
    pub(crate) fn view_ty_text(&self, from: &[String], ty: &Ty) -> TyText {
        fn leaf(s: impl Into<String>) -> TyText {
            TyText::leaf(s)
        }
        let a = || leaf("'a");
        match ty {
            Ty::F16 => leaf(self.rt_item("f16")),
            Ty::BF16 => leaf(self.rt_item("bf16")),
            Ty::Str => leaf("&'a str"),
            Ty::Uuid => leaf(self.rt_item("Uuid")),
            Ty::Timestamp => leaf(self.rt_item("Timestamp")),
            Ty::Duration => leaf(self.rt_item("Duration")),
            Ty::Array(el) if **el == Ty::U8 => leaf("&'a [u8]"),
            Ty::Array(el) => TyText::generic(
                self.rt_item("Array"),
                vec![a(), self.view_ty_text(from, el)],
            ),
            Ty::Fixed(el, n) => match fixed_repr(self.model, el, *n) {
                FixedRepr::Bytes => leaf(format!("&'a [u8; {n}]")),
                FixedRepr::Inline => leaf(format!("[{}; {n}]", self.view_ty_text(from, el))),
                FixedRepr::View => TyText::generic(
                    self.rt_item("FixedArray"),
                    vec![a(), self.view_ty_text(from, el), leaf(n.to_string())],
                ),
            },
            Ty::Map(k, v) => TyText::generic(
                self.rt_item("Map"),
                vec![a(), self.view_ty_text(from, k), self.view_ty_text(from, v)],
            ),
            Ty::Def(d) => self.view_type_text(from, *d),
            Ty::Bool => leaf("bool"),
            Ty::U8 => leaf("u8"),
            Ty::I8 => leaf("i8"),
            Ty::I16 => leaf("i16"),
            Ty::U16 => leaf("u16"),
            Ty::I32 => leaf("i32"),
            Ty::U32 => leaf("u32"),
            Ty::I64 => leaf("i64"),
            Ty::U64 => leaf("u64"),
            Ty::I128 => leaf("i128"),
            Ty::U128 => leaf("u128"),
            Ty::F32 => leaf("f32"),
            Ty::F64 => leaf("f64"),
        }
    }

    /// [`Self::view_field_ty`] as text.
    pub(crate) fn view_field_ty_text(&self, from: &[String], f: &Field, message: bool) -> TyText {
        let inner = self.view_ty_text(from, &f.ty);
        let inner = if f.lazy {
            TyText::generic(self.rt_item("Lazy"), vec![TyText::leaf("'a"), inner])
        } else {
            inner
        };
        if message {
            TyText::generic("::core::option::Option", vec![inner])
        } else {
            inner
        }
    }

    /// [`Self::owned_ty`] as text.
    pub(crate) fn owned_ty_text(&self, from: &[String], ty: &Ty) -> TyText {
        let alloc = |name: &str| format!("{}::alloc_types::{name}", self.rt_text);
        match ty {
            Ty::Str => TyText::leaf(alloc("String")),
            Ty::Array(el) => TyText::generic(alloc("Vec"), vec![self.owned_ty_text(from, el)]),
            Ty::Fixed(el, n) => TyText::leaf(format!("[{}; {n}]", self.owned_ty_text(from, el))),
            Ty::Map(k, v) => {
                let (k, v) = (self.owned_ty_text(from, k), self.owned_ty_text(from, v));
                match self.opts.owned_map {
                    OwnedMap::BTreeMap => TyText::generic(alloc("BTreeMap"), vec![k, v]),
                    OwnedMap::Vec => {
                        TyText::generic(alloc("Vec"), vec![TyText::leaf(format!("({k}, {v})"))])
                    }
                }
            }
            Ty::Def(d) => TyText::leaf(self.owned_path_text(from, *d)),
            scalar => self.view_ty_text(from, scalar),
        }
    }

    /// [`Self::owned_field_ty`] as text.
    pub(crate) fn owned_field_ty_text(&self, from: &[String], f: &Field, message: bool) -> TyText {
        let inner = self.owned_ty_text(from, &f.ty);
        let inner = if f.lazy {
            TyText::generic(format!("{}::alloc_types::Box", self.rt_text), vec![inner])
        } else {
            inner
        };
        if message {
            TyText::generic("::core::option::Option", vec![inner])
        } else {
            inner
        }
    }

    // ----- docs and attributes ---------------------------------------------------------

    /// `#[doc]` attributes for lines of text.
    pub(crate) fn doc_lines(lines: &[String]) -> TokenStream {
        let mut out = TokenStream::new();
        for line in lines {
            let text = if line.is_empty() {
                String::new()
            } else {
                format!(" {line}")
            };
            out.extend(quote!(#[doc = #text]));
        }
        out
    }

    /// Doc text from the schema, with unlabelled code fences marked `text` so rustdoc does
    /// not run schema snippets as doctests.
    pub(crate) fn schema_doc(doc: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        let mut in_fence = false;
        for line in doc.unwrap_or_default().lines() {
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix("```") {
                if !in_fence && rest.trim().is_empty() {
                    out.push(format!("{}```text", &line[..line.len() - trimmed.len()]));
                } else {
                    out.push(line.to_string());
                }
                in_fence = !in_fence;
            } else {
                out.push(line.to_string());
            }
        }
        if in_fence {
            out.push("```".into());
        }
        out
    }

    pub(crate) fn def_doc_lines(&self, id: DefId) -> Vec<String> {
        let d = self.def(id);
        let mut lines = Self::schema_doc(d.doc.as_deref());
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(self.source_line(id));
        lines
    }

    /// ``From `file.bop` (line 3): `struct pkg.Name`.``
    pub(crate) fn source_line(&self, id: DefId) -> String {
        let d = self.def(id);
        let file = d.schema.path.as_deref().unwrap_or("<schema>");
        let line = d
            .schema
            .source_code_info
            .as_ref()
            .and_then(|i| i.locations.as_deref())
            .unwrap_or_default()
            .iter()
            .find(|l| l.path.as_deref() == Some(d.loc_path.as_slice()))
            .and_then(|l| l.span)
            .map(|s| format!(" (line {})", s[0]))
            .unwrap_or_default();
        format!("From `{file}`{line}: `{} {}`.", d.kind_word(), d.fqn)
    }

    /// The docs of a field: its schema doc, then its declaration.
    pub(crate) fn field_doc_lines(f: &Field, message: bool) -> Vec<String> {
        let mut lines = Self::schema_doc(f.doc.as_deref());
        if !lines.is_empty() {
            lines.push(String::new());
        }
        if message {
            lines.push(format!("`{}({}): {}`", f.src_name, f.tag, f.ty_text));
            if f.deprecated.is_some() {
                lines.push(String::new());
                lines.push("Deprecated: decoded when present, never encoded.".into());
            }
        } else {
            lines.push(format!("`{}: {}`", f.src_name, f.ty_text));
        }
        lines
    }

    pub(crate) fn deprecated_attr(dep: Option<&Deprecation>) -> TokenStream {
        match dep {
            None => TokenStream::new(),
            Some(Deprecation(None)) => quote!(#[deprecated]),
            Some(Deprecation(Some(note))) => quote!(#[deprecated(note = #note)]),
        }
    }

    /// True when the item or its impls mention something deprecated (the definition itself,
    /// a member, or a type it refers to), so they need `#[allow(deprecated)]`.
    pub(crate) fn touches_deprecated(&self, id: DefId) -> bool {
        let d = self.def(id);
        if d.deprecated.is_some() {
            return true;
        }
        let ty_dep = |ty: &Ty| self.ty_touches_deprecated(ty);
        match &d.body {
            Body::Struct { fields, .. } | Body::Message { fields } => fields
                .iter()
                .any(|f| f.deprecated.is_some() || ty_dep(&f.ty)),
            Body::Union { branches, .. } => branches
                .iter()
                .any(|b| self.def(b.target).deprecated.is_some()),
            Body::Enum { members, .. } | Body::Flags { members, .. } => {
                members.iter().any(|m| m.deprecated.is_some())
            }
            Body::Service { methods } => methods
                .iter()
                .any(|m| m.deprecated.is_some() || ty_dep(&m.request) || ty_dep(&m.response)),
            Body::Const { .. } | Body::Decorator => false,
        }
    }

    pub(crate) fn ty_touches_deprecated(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Array(el) | Ty::Fixed(el, _) => self.ty_touches_deprecated(el),
            Ty::Map(k, v) => self.ty_touches_deprecated(k) || self.ty_touches_deprecated(v),
            Ty::Def(d) => self.def(*d).deprecated.is_some(),
            _ => false,
        }
    }

    /// Which Rust type a record's emission in `mode` is.
    pub(crate) fn record_form(&self, id: DefId, owned: bool) -> ItemForm {
        match (self.def(id).lifetime, owned) {
            (false, _) => ItemForm::Same,
            (true, false) => ItemForm::View,
            (true, true) => ItemForm::Owned,
        }
    }

    /// The attributes the type attribute rules add to definition `id` in `form`.
    pub(crate) fn user_type_attrs(&self, id: DefId, form: ItemForm) -> TokenStream {
        self.type_rules.for_path(&def_path(self.model, id), form)
    }

    /// The attributes the field attribute rules add to member `member` (its schema name) of
    /// definition `id` in `form`.
    pub(crate) fn user_member_attrs(&self, id: DefId, member: &str, form: ItemForm) -> TokenStream {
        let path = format!("{}.{member}", def_path(self.model, id));
        self.field_rules.for_path(&path, form)
    }

    /// `#[serde(..)]` (under the serde cfg) for a field of a serde-derived type: fixed arrays
    /// longer than serde supports go through the runtime's helpers.
    pub(crate) fn serde_field_attrs(
        &self,
        f: &Field,
        message: bool,
        form: ItemForm,
    ) -> TokenStream {
        if !self.opts.serde || !form.owns_data() || f.lazy {
            return TokenStream::new();
        }
        let Ty::Fixed(_, n) = &f.ty else {
            return TokenStream::new();
        };
        if *n <= SERDE_MAX_ARRAY {
            return TokenStream::new();
        }
        let helper = if message {
            "optional_fixed_array"
        } else {
            "fixed_array"
        };
        let with = format!("{}::serde_support::{helper}", self.opts.runtime_path);
        let inner = if message {
            quote!(serde(default, with = #with))
        } else {
            quote!(serde(with = #with))
        };
        match &self.serde_cfg {
            Some(p) => quote!(#[cfg_attr(#p, #inner)]),
            None => quote!(#[#inner]),
        }
    }

    /// [`Self::serde_field_attrs`] as a line.
    pub(crate) fn serde_field_attr_line(
        &self,
        code: &mut Code,
        f: &Field,
        message: bool,
        form: ItemForm,
    ) {
        let attrs = self.serde_field_attrs(f, message, form);
        if !attrs.is_empty() {
            Self::attr_lines(code, &attrs);
        }
    }

    /// Serde derives need every fixed array longer than 32 elements to be a field's own type
    /// (which the runtime's helpers handle), not inside another array or a map.
    fn check_serde_arrays(&self) -> Result<(), GenerateError> {
        fn nested_long(ty: &Ty) -> bool {
            match ty {
                Ty::Array(el) => long_anywhere(el),
                Ty::Fixed(el, _) => long_anywhere(el),
                Ty::Map(k, v) => long_anywhere(k) || long_anywhere(v),
                _ => false,
            }
        }
        fn long_anywhere(ty: &Ty) -> bool {
            matches!(ty, Ty::Fixed(_, n) if *n > SERDE_MAX_ARRAY) || nested_long(ty)
        }
        for (id, d) in self.model.defs.iter().enumerate() {
            if self.externs.contains_key(&id) {
                continue;
            }
            for f in d.fields() {
                let form = self.record_form(id, self.opts.owned_types);
                if form.owns_data() && nested_long(&f.ty) {
                    return Err(GenerateError::unsupported(
                        format!("{}.{}", d.fqn, f.src_name),
                        format!(
                            "serde: `{}` holds a fixed array of more than {SERDE_MAX_ARRAY} elements inside an array, map or fixed array, which serde has no impls for (only a field's own fixed array can be that long)",
                            f.ty_text
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    // ----- the same, as text --------------------------------------------------------------

    /// `#[deprecated]` or `#[deprecated(note = "..")]`.
    pub(crate) fn deprecated_line(code: &mut Code, dep: Option<&Deprecation>) {
        match dep {
            None => {}
            Some(Deprecation(None)) => code.line("#[deprecated]"),
            Some(Deprecation(Some(note))) => {
                let arg = format!("note = {}", Literal::string(note));
                code.attr_words("deprecated", &[&arg]);
            }
        }
    }

    /// `#[allow(deprecated)]` when definition `id` touches something deprecated.
    pub(crate) fn allow_deprecated_line(&self, code: &mut Code, id: DefId) {
        if self.touches_deprecated(id) {
            code.line("#[allow(deprecated)]");
        }
    }

    /// The `cfg_attr` deriving `defmt::Format`, when defmt support is on.
    pub(crate) fn defmt_derive_line(&self, code: &mut Code) {
        if let Some(p) = &self.defmt {
            let mut args = Meta::parse_list(p);
            args.push(Meta::List(
                "derive".into(),
                vec![Meta::Word("::defmt::Format".into())],
            ));
            code.attr("cfg_attr", &args);
        }
    }

    /// `attrs` (whole attributes, `#[..]`), one per line.
    pub(crate) fn attr_lines(code: &mut Code, attrs: &TokenStream) {
        for tree in attrs.clone() {
            let proc_macro2::TokenTree::Group(g) = tree else {
                // The `#` of each attribute.
                continue;
            };
            match Meta::parse_item(g.stream().into_iter().collect()) {
                Meta::List(name, args) if name == "derive" => {
                    code.derive(&args.iter().map(Meta::flat).collect::<Vec<_>>())
                }
                Meta::List(name, args) => code.attr(&name, &args),
                Meta::Word(w) => code.line(format_args!("#[{w}]")),
            }
        }
    }

    /// The type attribute rules' attributes of definition `id` in `form`, one per line.
    pub(crate) fn user_type_attr_lines(&self, code: &mut Code, id: DefId, form: ItemForm) {
        Self::attr_lines(code, &self.user_type_attrs(id, form));
    }

    /// The field attribute rules' attributes of member `member` of `id` in `form`.
    pub(crate) fn user_member_attr_lines(
        &self,
        code: &mut Code,
        id: DefId,
        member: &str,
        form: ItemForm,
    ) {
        Self::attr_lines(code, &self.user_member_attrs(id, member, form));
    }

    /// `#[derive(::serde::Serialize, ::serde::Deserialize)]` (under the serde cfg) for a
    /// type in `form`, when serde support is on and the type owns its data.
    pub(crate) fn serde_derive_line(&self, code: &mut Code, form: ItemForm) {
        if !self.opts.serde || !form.owns_data() {
            return;
        }
        let traits = ["::serde::Serialize", "::serde::Deserialize"];
        match &self.serde_cfg {
            Some(p) => {
                let mut args = Meta::parse_list(p);
                let traits = traits.iter().map(|t| Meta::Word(t.to_string())).collect();
                args.push(Meta::List("derive".into(), traits));
                code.attr("cfg_attr", &args);
            }
            None => code.derive(&traits),
        }
    }

    /// The `#[cfg(..)]` of hand-written serde impls, when serde has a cfg.
    pub(crate) fn serde_cfg_line(&self, code: &mut Code) {
        if let Some(p) = &self.serde_cfg {
            code.attr("cfg", &Meta::parse_list(p));
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// An unsuffixed integer literal, with a separate minus sign for negative values.
pub(crate) fn int_lit(v: i128) -> TokenStream {
    if v < 0 {
        let l = Literal::u128_unsuffixed(v.unsigned_abs());
        quote!(-#l)
    } else {
        let l = Literal::u128_unsuffixed(v as u128);
        quote!(#l)
    }
}

/// [`var`] as text.
pub(crate) fn var_text(depth: usize) -> String {
    format!("v{depth}")
}

//! Turns the parsed files into the [`Model`], resolving names and
//! checking every rule of the language.
//!
//! Rules checked here (codes in [`crate::diag`]):
//! - enums: a member with value 0 (E050), distinct values unless `@flags` (E051), values in
//!   the base type's range (E053);
//! - messages: distinct tags (E055); unions: distinct discriminators (E057), at least one
//!   branch (E058), branches are structs or messages (E059);
//! - map keys are bool, integers, string or uuid (E060);
//! - no struct contains itself through structs and fixed arrays only (E061);
//! - constants have a scalar type or `byte[]` (E063) and a value of that type;
//! - unique names of fields, members, branches and methods (E044);
//! - service methods take and return structs, messages or unions (E070), have distinct ids
//!   (E071); mixins are services (E072), without cycles (E073) or clashing names (E074);
//! - decorators: known (E080), allowed on the element (E081), arguments matching the
//!   parameters (E082 to E086), not repeated unless `multiple = true` (E087); the built-in
//!   `@deprecated` is not allowed on struct fields (E090).
//!
//! Struct fixed sizes are computed here as well.

use std::collections::{HashMap, HashSet};

use crate::ast::{self, Item, ItemKind, TypeExpr};
use crate::decorator::{
    DecoratorCall, DecoratorOutcome, DecoratorRuntime, Target as RtTarget, TargetKind,
};
use crate::diag::{Code, Diagnostic, Severity};
use crate::literal::{self, Target};
use crate::model::*;
use crate::resolve::{LoadedFile, Symbols};
use crate::source::{SourceMap, Span};
use crate::stdlib::builtin;

type Env<'e> = &'e dyn Fn(&str) -> Option<String>;

struct Lower<'a, 'e> {
    syms: &'a Symbols<'a>,
    sources: &'a SourceMap,
    env: Env<'e>,
    diags: Vec<Diagnostic>,
    /// Spans of each service's `with` names, for later checks.
    mixin_spans: HashMap<DefId, Vec<Span>>,
}

/// Builds the model (complete only when no error was reported).
pub(crate) fn analyze(
    files: &[LoadedFile],
    syms: &Symbols<'_>,
    env: Env<'_>,
    runtime: &dyn DecoratorRuntime,
    sources: &SourceMap,
) -> (Model, Vec<Diagnostic>) {
    let mut lower = Lower {
        syms,
        sources,
        env,
        diags: Vec::new(),
        mixin_spans: HashMap::new(),
    };
    let mut model = Model::default();
    for (i, f) in files.iter().enumerate() {
        let imports = f
            .ast
            .imports
            .iter()
            .zip(&f.imports)
            .filter_map(|(decl, target)| {
                target.map(|t| Import {
                    path: decl.path.clone(),
                    schema: SchemaId(t as u32),
                    span: decl.span,
                })
            })
            .collect();
        model.schemas.push(Schema {
            id: SchemaId(i as u32),
            path: f.path.clone(),
            source: f.source,
            is_root: f.root,
            is_builtin: f.builtin,
            package: f.ast.package.as_ref().map(|p| p.0.clone()),
            edition: Edition::E2026,
            edition_declared: f.ast.edition.is_some(),
            imports,
            definitions: syms.top_order[i].iter().map(|&d| DefId(d as u32)).collect(),
        });
    }
    for id in 0..syms.syms.len() {
        let def = lower.definition(id);
        model.definitions.push(def);
    }
    let mut diags = lower.diags;
    let mixin_spans = lower.mixin_spans;
    struct_layouts(&mut model, &mut diags);
    services(&model, &mixin_spans, &mut diags);
    run_decorators(&mut model, runtime, sources, &mut diags);
    (model, diags)
}

impl<'a> Lower<'a, '_> {
    fn err(&mut self, code: Code, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(code, span, msg));
    }

    fn definition(&mut self, id: usize) -> Definition {
        let sym = &self.syms.syms[id];
        let item: &Item = sym.item;
        let file = sym.file;
        let def_id = DefId(id as u32);
        let target = match sym.kind {
            DefKind::Enum => TargetKind::Enum,
            DefKind::Struct => TargetKind::Struct,
            DefKind::Message => TargetKind::Message,
            DefKind::Union => TargetKind::Union,
            DefKind::Service => TargetKind::Service,
            DefKind::Const | DefKind::Decorator => TargetKind::Const,
        };
        let element = format!("{} '{}'", sym.kind.name(), sym.name);
        let decorators = self.decorators(file, &item.decorators, target, None, &element);
        let body = match &item.kind {
            ItemKind::Enum(e) => DefBody::Enum(self.enum_def(id, e, &decorators)),
            ItemKind::Struct(s) => DefBody::Struct(StructDef {
                fields: self.fields(id, &s.fields, DefKind::Struct),
                is_mutable: s.mutable,
                fixed_size: 0,
            }),
            ItemKind::Message(m) => DefBody::Message(MessageDef {
                fields: self.fields(id, &m.fields, DefKind::Message),
            }),
            ItemKind::Union(u) => DefBody::Union(self.union_def(id, u)),
            ItemKind::Service(s) => DefBody::Service(self.service_def(id, s)),
            ItemKind::Const(c) => DefBody::Const(self.const_def(id, c)),
            ItemKind::Decorator(d) => DefBody::Decorator(self.decorator_def(d)),
        };
        let sym = &self.syms.syms[id];
        Definition {
            id: def_id,
            schema: SchemaId(sym.file as u32),
            parent: sym.parent.map(|p| DefId(p as u32)),
            name: sym.name.to_string(),
            fqn: sym.fqn.clone(),
            visibility: sym.visibility,
            documentation: item.doc.clone(),
            decorators,
            nested: sym.nested.iter().map(|&n| DefId(n as u32)).collect(),
            body,
            span: item.span,
            name_span: item.name.span,
        }
    }

    // ---- types -----------------------------------------------------------------------

    /// A type used for a field, element, key or value.
    fn ty(&mut self, file: usize, scope: usize, t: &TypeExpr) -> Option<Type> {
        match t {
            TypeExpr::Scalar(s, _) => Some(Type::Scalar(*s)),
            TypeExpr::Array(e, _) => Some(Type::Array(Box::new(self.ty(file, scope, e)?))),
            TypeExpr::FixedArray(e, n, _) => {
                Some(Type::FixedArray(Box::new(self.ty(file, scope, e)?), *n))
            }
            TypeExpr::Map(k, v, _) => {
                let key = self.ty(file, scope, k);
                let value = self.ty(file, scope, v);
                let key = key?;
                let valid = matches!(&key, Type::Scalar(s) if s.is_valid_map_key());
                if !valid {
                    self.diags.push(
                        Diagnostic::error(
                            Code::E060,
                            k.span(),
                            format!("'{key}' cannot be a map key"),
                        )
                        .with_note("map keys must be bool, an integer type, string or uuid"),
                    );
                    return None;
                }
                Some(Type::Map(Box::new(key), Box::new(value?)))
            }
            TypeExpr::Named(path) => {
                let id = match self.syms.resolve(file, Some(scope), path, "type") {
                    Ok(id) => id,
                    Err(d) => {
                        self.diags.push(d);
                        return None;
                    }
                };
                let sym = &self.syms.syms[id];
                match sym.kind {
                    DefKind::Enum | DefKind::Struct | DefKind::Message | DefKind::Union => {
                        Some(Type::Defined {
                            fqn: sym.fqn.clone(),
                            def: DefId(id as u32),
                        })
                    }
                    kind => {
                        let d = Diagnostic::error(
                            Code::E045,
                            path.span,
                            format!(
                                "'{}' is {} and cannot be used as a type",
                                sym.fqn,
                                kind.with_article()
                            ),
                        )
                        .with_label(sym.item.name.span, "defined here");
                        self.diags.push(d);
                        None
                    }
                }
            }
        }
    }

    // ---- decorators ------------------------------------------------------------------

    fn decorators(
        &mut self,
        file: usize,
        uses: &[ast::DecoratorUse],
        target: TargetKind,
        parent_kind: Option<DefKind>,
        element: &str,
    ) -> Vec<DecoratorUsage> {
        let mut out: Vec<DecoratorUsage> = Vec::new();
        for u in uses {
            let id = match self.syms.resolve(file, None, &u.name, "decorator") {
                Ok(id) => id,
                Err(mut d) => {
                    if d.code == Code::E040 {
                        d.code = Code::E080;
                        d.message = format!("unknown decorator '@{}'", u.name.joined());
                        let name = u.name.joined();
                        if matches!(name.as_str(), "deprecated" | "flags" | "forward_compatible") {
                            d = d.with_help("add `import \"bebop/decorators.bop\"`");
                        }
                    }
                    self.diags.push(d);
                    continue;
                }
            };
            let sym = &self.syms.syms[id];
            let ItemKind::Decorator(def) = &sym.item.kind else {
                let d = Diagnostic::error(
                    Code::E080,
                    u.name.span,
                    format!(
                        "'{}' is {}, not a decorator",
                        sym.fqn,
                        sym.kind.with_article()
                    ),
                )
                .with_label(sym.item.name.span, "defined here");
                self.diags.push(d);
                continue;
            };
            let fqn = sym.fqn.clone();
            let bits = def.targets.map(|t| t.0).unwrap_or(0);
            let bit = target_bit(target);
            if bits & bit == 0 {
                let mut d = Diagnostic::error(
                    Code::E081,
                    u.span,
                    format!("'@{}' cannot be applied to {element}", u.name.joined()),
                );
                d = if target == TargetKind::Const {
                    d.with_note("decorators cannot be applied to constants")
                } else {
                    d.with_note(format!("it applies to: {}", describe_targets(bits)))
                };
                self.diags
                    .push(d.with_label(sym.item.name.span, "decorator defined here"));
                continue;
            }
            if out.iter().any(|o| o.def == DefId(id as u32)) && !def.multiple {
                self.diags.push(
                    Diagnostic::error(
                        Code::E087,
                        u.span,
                        format!("'@{}' is applied more than once", u.name.joined()),
                    )
                    .with_note("the decorator does not declare `multiple = true`"),
                );
                continue;
            }
            if fqn == builtin::DEPRECATED
                && target == TargetKind::Field
                && parent_kind == Some(DefKind::Struct)
            {
                self.diags.push(
                    Diagnostic::error(
                        Code::E090,
                        u.span,
                        "struct fields cannot be deprecated",
                    )
                    .with_note("struct fields are encoded by position, so they can never be removed; use a message for fields that may go away"),
                );
                continue;
            }
            let args = self.bind_args(u, def);
            out.push(DecoratorUsage {
                name: u.name.joined(),
                fqn,
                def: DefId(id as u32),
                args,
                export_data: Vec::new(),
                span: u.span,
            });
        }
        out
    }

    fn bind_args(&mut self, u: &ast::DecoratorUse, def: &ast::DecoratorItem) -> Vec<DecoratorArg> {
        let name = u.name.joined();
        let mut bound: Vec<bool> = vec![false; def.params.len()];
        let mut args = Vec::new();
        for (i, arg) in u.args.iter().enumerate() {
            let pi = match &arg.name {
                Some(n) => match def.params.iter().position(|p| p.name.name == n.name) {
                    Some(pi) => pi,
                    None => {
                        let mut d = Diagnostic::error(
                            Code::E082,
                            n.span,
                            format!("'@{name}' has no parameter '{}'", n.name),
                        );
                        if let Some(best) = def
                            .params
                            .iter()
                            .map(|p| p.name.name.as_str())
                            .filter(|p| crate::parser::edit_distance(&n.name, p) <= 2)
                            .min_by_key(|p| crate::parser::edit_distance(&n.name, p))
                        {
                            d = d.with_help(format!("did you mean '{best}'?"));
                        } else if !def.params.is_empty() {
                            let all: Vec<&str> =
                                def.params.iter().map(|p| p.name.name.as_str()).collect();
                            d = d.with_note(format!("its parameters are {}", all.join(", ")));
                        }
                        self.diags.push(d);
                        continue;
                    }
                },
                None if i < def.params.len() => i,
                None => {
                    self.err(
                        Code::E086,
                        arg.span,
                        format!(
                            "too many arguments: '@{name}' takes {} parameter(s)",
                            def.params.len()
                        ),
                    );
                    continue;
                }
            };
            let Some(param) = def.params.get(pi) else {
                continue;
            };
            if bound[pi] {
                self.err(
                    Code::E086,
                    arg.span,
                    format!("parameter '{}' is given more than once", param.name.name),
                );
                continue;
            }
            bound[pi] = true;
            let value = match literal::evaluate(&arg.value, Target::from(param.ty), self.env) {
                Ok(v) => v,
                Err(ds) => {
                    for mut d in ds {
                        if d.code == Code::E023 {
                            d.code = Code::E084;
                            d.message = format!(
                                "parameter '{}' expects {}",
                                param.name.name,
                                describe_param(param.ty)
                            );
                        }
                        self.diags.push(d);
                    }
                    continue;
                }
            };
            if !param.allowed.is_empty() {
                let allowed: Vec<Value> = param
                    .allowed
                    .iter()
                    .filter_map(|l| literal::evaluate(l, Target::from(param.ty), self.env).ok())
                    .collect();
                if !allowed.iter().any(|a| values_equal(a, &value)) {
                    let shown: Vec<String> = param
                        .allowed
                        .iter()
                        .map(|l| literal_text(&l.kind))
                        .collect();
                    self.diags.push(
                        Diagnostic::error(
                            Code::E085,
                            arg.span,
                            format!(
                                "this value is not allowed for parameter '{}'",
                                param.name.name
                            ),
                        )
                        .with_note(format!("allowed values: {}", shown.join(", "))),
                    );
                    continue;
                }
            }
            args.push(DecoratorArg {
                name: param.name.name.clone(),
                value,
                span: arg.span,
            });
        }
        for (pi, p) in def.params.iter().enumerate() {
            if p.required && !bound.get(pi).copied().unwrap_or(false) {
                self.diags.push(
                    Diagnostic::error(
                        Code::E083,
                        u.span,
                        format!("'@{name}' needs the argument '{}'", p.name.name),
                    )
                    .with_label(p.name.span, "required parameter declared here"),
                );
            }
        }
        args
    }

    fn decorator_def(&mut self, d: &ast::DecoratorItem) -> DecoratorDef {
        let mut params = Vec::new();
        for p in &d.params {
            let target = Target::from(p.ty);
            let default = p.default.as_ref().and_then(|lit| {
                if p.required {
                    self.err(
                        Code::E088,
                        lit.span,
                        format!("required parameter '{}' cannot have a default", p.name.name),
                    );
                }
                match literal::evaluate(lit, target, self.env) {
                    Ok(v) => Some(v),
                    Err(ds) => {
                        self.diags.extend(ds);
                        None
                    }
                }
            });
            let mut allowed = Vec::new();
            for lit in &p.allowed {
                match literal::evaluate(lit, target, self.env) {
                    Ok(v) => allowed.push(v),
                    Err(ds) => self.diags.extend(ds),
                }
            }
            if let (Some(def), false) = (&default, allowed.is_empty()) {
                if !allowed.iter().any(|a| values_equal(a, def)) {
                    let span = p.default.as_ref().map(|l| l.span).unwrap_or(p.span);
                    self.err(
                        Code::E088,
                        span,
                        format!(
                            "the default of '{}' is not one of its allowed values",
                            p.name.name
                        ),
                    );
                }
            }
            params.push(DecoratorParam {
                name: p.name.name.clone(),
                description: p.doc.clone(),
                ty: p.ty,
                required: p.required,
                default,
                allowed_values: allowed,
                span: p.span,
            });
        }
        DecoratorDef {
            targets: DecoratorTargets(d.targets.map(|t| t.0).unwrap_or(0)),
            allow_multiple: d.multiple,
            params,
            validate_source: d.validate.as_ref().map(|v| v.0.clone()),
            export_source: d.export.as_ref().map(|v| v.0.clone()),
            validate_span: d.validate.as_ref().map(|v| v.1),
            export_span: d.export.as_ref().map(|v| v.1),
        }
    }

    // ---- enums -----------------------------------------------------------------------

    fn enum_def(&mut self, id: usize, e: &ast::EnumItem, decorators: &[DecoratorUsage]) -> EnumDef {
        let sym = &self.syms.syms[id];
        let file = sym.file;
        let enum_name = sym.name;
        let item_name_span = sym.item.name.span;
        let is_flags = decorators.iter().any(|d| d.fqn == builtin::FLAGS);
        let (min, max) = e.base.int_range().unwrap_or((0, u32::MAX as u128));
        let mut members = Vec::new();
        let mut names: HashMap<&str, Span> = HashMap::new();
        let mut values: HashMap<i128, (&str, Span)> = HashMap::new();
        let mut complete = true;
        let mut has_zero = false;
        for m in &e.members {
            if let Some(first) = names.get(m.name.name.as_str()) {
                let first = *first;
                self.diags.push(
                    Diagnostic::error(
                        Code::E044,
                        m.name.span,
                        format!("enum member '{}' is declared more than once", m.name.name),
                    )
                    .with_label(first, "first declared here"),
                );
            } else {
                names.insert(&m.name.name, m.name.span);
            }
            let element = format!("member '{}' of enum '{enum_name}'", m.name.name);
            let decs = self.decorators(
                file,
                &m.decorators,
                TargetKind::Member,
                Some(DefKind::Enum),
                &element,
            );
            let Some(v) = m.value else {
                complete = false;
                continue;
            };
            let in_range = v >= min && (v < 0 || (v as u128) <= max);
            if !in_range {
                complete = false;
                self.diags.push(
                    Diagnostic::error(
                        Code::E053,
                        m.value_span,
                        format!(
                            "value {v} of '{}' is out of range for '{}' ({min}..={max})",
                            m.name.name, e.base
                        ),
                    )
                    .with_label(e.base_span.unwrap_or(item_name_span), "base type"),
                );
                continue;
            }
            if v == 0 {
                has_zero = true;
            }
            if !is_flags {
                if let Some((other, span)) = values.get(&v) {
                    let (other, span) = (*other, *span);
                    self.diags.push(
                        Diagnostic::error(
                            Code::E051,
                            m.value_span,
                            format!("'{}' has the same value ({v}) as '{other}'", m.name.name),
                        )
                        .with_label(span, "same value here")
                        .with_help("use @flags for bit flags, whose members may share values"),
                    );
                } else {
                    values.insert(v, (&m.name.name, m.name.span));
                }
            }
            members.push(EnumMember {
                name: m.name.name.clone(),
                documentation: m.doc.clone(),
                value: if e.base.is_signed() {
                    v as i64 as u64
                } else {
                    v as u64
                },
                value_expr: m
                    .is_expression
                    .then(|| self.sources.slice(m.value_span).to_string()),
                decorators: decs,
                span: m.span,
            });
        }
        if complete && !has_zero {
            let mut d = Diagnostic::error(
                Code::E050,
                item_name_span,
                format!("enum '{enum_name}' has no member with value 0"),
            );
            d = d.with_help(format!(
                "add a member for the default state, e.g. `{}_UNSPECIFIED = 0;`",
                enum_name.to_uppercase()
            ));
            self.diags.push(d);
        }
        EnumDef {
            base: e.base,
            members,
            is_flags,
        }
    }

    // ---- structs and messages --------------------------------------------------------

    fn fields(&mut self, id: usize, fields: &[ast::FieldItem], kind: DefKind) -> Vec<Field> {
        let sym = &self.syms.syms[id];
        let file = sym.file;
        let owner = sym.name;
        let mut out = Vec::new();
        let mut names: HashMap<&str, Span> = HashMap::new();
        let mut tags: HashMap<u8, (&str, Span)> = HashMap::new();
        for f in fields {
            if let Some(first) = names.get(f.name.name.as_str()) {
                let first = *first;
                self.diags.push(
                    Diagnostic::error(
                        Code::E044,
                        f.name.span,
                        format!("field '{}' is declared more than once", f.name.name),
                    )
                    .with_label(first, "first declared here"),
                );
            } else {
                names.insert(&f.name.name, f.name.span);
            }
            if let Some((tag, span)) = f.tag {
                if let Some((other, first)) = tags.get(&tag) {
                    let (other, first) = (*other, *first);
                    self.diags.push(
                        Diagnostic::error(
                            Code::E055,
                            span,
                            format!("tag {tag} is already used by field '{other}'"),
                        )
                        .with_label(first, "first used here"),
                    );
                } else {
                    tags.insert(tag, (&f.name.name, span));
                }
            }
            let element = format!("field '{}' of {} '{owner}'", f.name.name, kind.name());
            let decorators =
                self.decorators(file, &f.decorators, TargetKind::Field, Some(kind), &element);
            let Some(ty) = self.ty(file, id, &f.ty) else {
                continue;
            };
            if kind == DefKind::Message && f.tag.is_none() {
                continue;
            }
            out.push(Field {
                name: f.name.name.clone(),
                documentation: f.doc.clone(),
                ty,
                index: f.tag.map(|t| t.0 as u32).unwrap_or(0),
                decorators,
                span: f.span,
                name_span: f.name.span,
            });
        }
        out
    }

    // ---- unions ----------------------------------------------------------------------

    fn union_def(&mut self, id: usize, u: &ast::UnionItem) -> UnionDef {
        let sym = &self.syms.syms[id];
        let file = sym.file;
        let union_name = sym.name;
        let nested = sym.nested.clone();
        let name_span = sym.item.name.span;
        let mut branches = Vec::new();
        let mut names: HashMap<&str, Span> = HashMap::new();
        let mut discs: HashMap<u8, (&str, Span)> = HashMap::new();
        if u.branches.is_empty() && !u.had_errors {
            self.diags.push(
                Diagnostic::error(
                    Code::E058,
                    name_span,
                    format!("union '{union_name}' has no branches"),
                )
                .with_help("add a branch such as `Empty(1): {};`"),
            );
        }
        for b in &u.branches {
            if let Some(first) = names.get(b.name.name.as_str()) {
                let first = *first;
                self.diags.push(
                    Diagnostic::error(
                        Code::E044,
                        b.name.span,
                        format!("branch '{}' is declared more than once", b.name.name),
                    )
                    .with_label(first, "first declared here"),
                );
            } else {
                names.insert(&b.name.name, b.name.span);
            }
            if let Some(d) = b.discriminator {
                if let Some((other, first)) = discs.get(&d) {
                    let (other, first) = (*other, *first);
                    self.diags.push(
                        Diagnostic::error(
                            Code::E057,
                            b.discriminator_span,
                            format!("discriminator {d} is already used by branch '{other}'"),
                        )
                        .with_label(first, "first used here"),
                    );
                } else {
                    discs.insert(d, (&b.name.name, b.discriminator_span));
                }
            }
            let element = format!("branch '{}' of union '{union_name}'", b.name.name);
            let decorators = self.decorators(
                file,
                &b.decorators,
                TargetKind::Branch,
                Some(DefKind::Union),
                &element,
            );
            let target = match &b.target {
                ast::BranchTargetItem::Inline(i) => match nested.get(*i) {
                    Some(&n) => BranchTarget::Inline {
                        def: DefId(n as u32),
                        fqn: self.syms.syms[n].fqn.clone(),
                    },
                    None => continue,
                },
                ast::BranchTargetItem::Reference(t) => {
                    let TypeExpr::Named(path) = t else {
                        self.diags.push(
                            Diagnostic::error(
                                Code::E059,
                                t.span(),
                                "a union branch must be a struct or message",
                            )
                            .with_help("write an inline struct `{ value: ... }` instead"),
                        );
                        continue;
                    };
                    let target = match self.syms.resolve(file, Some(id), path, "type") {
                        Ok(t) => t,
                        Err(d) => {
                            self.diags.push(d);
                            continue;
                        }
                    };
                    let ts = &self.syms.syms[target];
                    match ts.kind {
                        DefKind::Struct | DefKind::Message => BranchTarget::Reference {
                            def: DefId(target as u32),
                            fqn: ts.fqn.clone(),
                        },
                        kind => {
                            let msg = if kind == DefKind::Union {
                                "a union branch cannot be another union (unions cannot be nested)"
                                    .to_string()
                            } else {
                                format!(
                                    "a union branch must be a struct or message, but '{}' is {}",
                                    ts.fqn,
                                    kind.with_article()
                                )
                            };
                            self.diags.push(
                                Diagnostic::error(Code::E059, path.span, msg)
                                    .with_label(ts.item.name.span, "defined here"),
                            );
                            continue;
                        }
                    }
                }
            };
            let Some(discriminator) = b.discriminator else {
                continue;
            };
            branches.push(Branch {
                discriminator,
                name: b.name.name.clone(),
                documentation: b.doc.clone(),
                target,
                decorators,
                span: b.span,
            });
        }
        UnionDef { branches }
    }

    // ---- services --------------------------------------------------------------------

    fn service_def(&mut self, id: usize, s: &ast::ServiceItem) -> ServiceDef {
        let sym = &self.syms.syms[id];
        let file = sym.file;
        let service_name = sym.name;
        let mut mixins = Vec::new();
        let mut spans = Vec::new();
        for m in &s.mixins {
            match self.syms.resolve(file, Some(id), m, "service") {
                Ok(t) => {
                    let ts = &self.syms.syms[t];
                    if ts.kind == DefKind::Service {
                        mixins.push(DefId(t as u32));
                        spans.push(m.span);
                    } else {
                        let d = Diagnostic::error(
                            Code::E072,
                            m.span,
                            format!("'{}' is {}, not a service", ts.fqn, ts.kind.with_article()),
                        )
                        .with_label(ts.item.name.span, "defined here");
                        self.diags.push(d);
                    }
                }
                Err(d) => self.diags.push(d),
            }
        }
        self.mixin_spans.insert(DefId(id as u32), spans);
        let mut methods = Vec::new();
        let mut names: HashMap<&str, Span> = HashMap::new();
        for m in &s.methods {
            if let Some(first) = names.get(m.name.name.as_str()) {
                let first = *first;
                self.diags.push(
                    Diagnostic::error(
                        Code::E044,
                        m.name.span,
                        format!("method '{}' is declared more than once", m.name.name),
                    )
                    .with_label(first, "first declared here"),
                );
            } else {
                names.insert(&m.name.name, m.name.span);
            }
            let element = format!("method '{}' of service '{service_name}'", m.name.name);
            let decorators = self.decorators(
                file,
                &m.decorators,
                TargetKind::Method,
                Some(DefKind::Service),
                &element,
            );
            let request = self.method_type(file, id, &m.request, "request", &m.name.name);
            let response = self.method_type(file, id, &m.response, "response", &m.name.name);
            let (Some(request), Some(response)) = (request, response) else {
                continue;
            };
            let kind = match (m.request_stream, m.response_stream) {
                (false, false) => MethodKind::Unary,
                (false, true) => MethodKind::ServerStream,
                (true, false) => MethodKind::ClientStream,
                (true, true) => MethodKind::DuplexStream,
            };
            methods.push(Method {
                name: m.name.name.clone(),
                documentation: m.doc.clone(),
                request,
                response,
                kind,
                id: bebop_core::method_id(&format!("/{service_name}/{}", m.name.name)),
                decorators,
                span: m.span,
            });
        }
        ServiceDef { methods, mixins }
    }

    fn method_type(
        &mut self,
        file: usize,
        scope: usize,
        t: &TypeExpr,
        which: &str,
        method: &str,
    ) -> Option<Type> {
        let ty = self.ty(file, scope, t)?;
        let ok = match &ty {
            Type::Defined { def, .. } => matches!(
                self.syms.syms[def.0 as usize].kind,
                DefKind::Struct | DefKind::Message | DefKind::Union
            ),
            _ => false,
        };
        if !ok {
            self.diags.push(
                Diagnostic::error(
                    Code::E070,
                    t.span(),
                    format!(
                        "the {which} type of '{method}' must be a struct, message or union, not '{ty}'"
                    ),
                )
                .with_help("wrap the value in a struct or message"),
            );
            return None;
        }
        Some(ty)
    }

    // ---- constants -------------------------------------------------------------------

    fn const_def(&mut self, _id: usize, c: &ast::ConstItem) -> ConstDef {
        let (ty, target) = match &c.ty {
            TypeExpr::Scalar(s, _) => (Type::Scalar(*s), Some(Target::Scalar(*s))),
            TypeExpr::Array(e, _) if matches!(**e, TypeExpr::Scalar(ScalarType::Byte, _)) => (
                Type::Array(Box::new(Type::Scalar(ScalarType::Byte))),
                Some(Target::ByteArray),
            ),
            other => {
                self.diags.push(
                    Diagnostic::error(
                        Code::E063,
                        other.span(),
                        "a constant must have a scalar type or byte[]",
                    )
                    .with_note("constants can be bool, integers, floats, string, uuid, timestamp, duration or byte[]"),
                );
                (Type::Scalar(ScalarType::Bool), None)
            }
        };
        let value = match target {
            Some(t) => match literal::evaluate(&c.value, t, self.env) {
                Ok(v) => v,
                Err(ds) => {
                    self.diags.extend(ds);
                    Value::Bool(false)
                }
            },
            None => Value::Bool(false),
        };
        ConstDef { ty, value }
    }
}

fn target_bit(t: TargetKind) -> u8 {
    match t {
        TargetKind::Enum => DecoratorTargets::ENUM.0,
        TargetKind::Struct => DecoratorTargets::STRUCT.0,
        TargetKind::Message => DecoratorTargets::MESSAGE.0,
        TargetKind::Union => DecoratorTargets::UNION.0,
        TargetKind::Service => DecoratorTargets::SERVICE.0,
        TargetKind::Field | TargetKind::Member => DecoratorTargets::FIELD.0,
        TargetKind::Method => DecoratorTargets::METHOD.0,
        TargetKind::Branch => DecoratorTargets::BRANCH.0,
        TargetKind::Const => 0,
    }
}

fn describe_targets(bits: u8) -> String {
    const NAMES: [&str; 8] = [
        "enums",
        "structs",
        "messages",
        "unions",
        "fields and enum members",
        "services",
        "methods",
        "union branches",
    ];
    let names: Vec<&str> = (0..8)
        .filter(|i| bits & (1 << i) != 0)
        .map(|i| NAMES[i])
        .collect();
    if names.is_empty() {
        "nothing (its targets are empty)".to_string()
    } else {
        names.join(", ")
    }
}

fn describe_param(t: ParamType) -> String {
    match t {
        ParamType::Scalar(s) if s.is_integer() => format!("an integer ('{s}')"),
        ParamType::Scalar(s) if s.is_float() => format!("a number ('{s}')"),
        ParamType::Scalar(ScalarType::Bool) => "true or false".to_string(),
        ParamType::Scalar(s) => format!("a string ('{s}')"),
        ParamType::Type => "a type name as a string".to_string(),
    }
}

fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String { value: x, .. }, Value::String { value: y, .. }) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

fn literal_text(k: &ast::LiteralKind) -> String {
    match k {
        ast::LiteralKind::Bool(b) => b.to_string(),
        ast::LiteralKind::Number { text, negative } => {
            format!("{}{text}", if *negative { "-" } else { "" })
        }
        ast::LiteralKind::Infinity { negative } => {
            if *negative {
                "-inf".into()
            } else {
                "inf".into()
            }
        }
        ast::LiteralKind::Nan => "nan".into(),
        ast::LiteralKind::String(s) => format!("{s:?}"),
        ast::LiteralKind::Bytes(b) => format!("{} bytes", b.len()),
    }
}

// ---- struct layouts -------------------------------------------------------------------

/// Struct types a struct contains by value (through fixed arrays, not through dynamic
/// arrays, maps, messages or unions).
fn contained_structs(model: &Model, t: &Type, out: &mut Vec<DefId>) {
    let mut t = t;
    loop {
        match t {
            Type::FixedArray(e, _) => t = e,
            Type::Defined { def, .. } => {
                if matches!(
                    model.definitions.get(def.0 as usize).map(|d| &d.body),
                    Some(DefBody::Struct(_))
                ) {
                    out.push(*def);
                }
                return;
            }
            _ => return,
        }
    }
}

/// Finds structs that contain themselves (E061) and computes fixed sizes, dependencies
/// first (iterative Tarjan: strongly connected components come out sinks first).
fn struct_layouts(model: &mut Model, diags: &mut Vec<Diagnostic>) {
    let n = model.definitions.len();
    let mut edges: Vec<Vec<DefId>> = vec![Vec::new(); n];
    for (i, d) in model.definitions.iter().enumerate() {
        if let DefBody::Struct(s) = &d.body {
            for f in &s.fields {
                contained_structs(model, &f.ty, &mut edges[i]);
            }
        }
    }
    const UNVISITED: u32 = u32::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next_index = 0u32;
    let mut sizes: Vec<u32> = vec![0; n];
    let mut cyclic = vec![false; n];
    for root in 0..n {
        if index[root] != UNVISITED || !matches!(model.definitions[root].body, DefBody::Struct(_)) {
            continue;
        }
        // (node, next edge to visit)
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut ei)) = call.last_mut() {
            if let Some(w) = edges[v].get(*ei).map(|d| d.0 as usize) {
                *ei += 1;
                if index[w] == UNVISITED {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                let self_loop = edges[v].iter().any(|d| d.0 as usize == v);
                if component.len() > 1 || self_loop {
                    for &c in &component {
                        cyclic[c] = true;
                    }
                    report_cycle(model, &edges, &component, diags);
                } else {
                    sizes[v] = struct_size(model, v, &sizes);
                }
            }
        }
    }
    for (i, d) in model.definitions.iter_mut().enumerate() {
        if let DefBody::Struct(s) = &mut d.body {
            s.fixed_size = if cyclic[i] { 0 } else { sizes[i] };
        }
    }
}

fn report_cycle(
    model: &Model,
    edges: &[Vec<DefId>],
    component: &[usize],
    diags: &mut Vec<Diagnostic>,
) {
    let Some(&start) = component.iter().min() else {
        return;
    };
    let members: HashSet<usize> = component.iter().copied().collect();
    // A path start -> ... -> start inside the component (breadth first).
    let mut prev: HashMap<usize, usize> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut end = None;
    'search: while let Some(v) = queue.pop_front() {
        for w in edges[v].iter().map(|d| d.0 as usize) {
            if w == start {
                end = Some(v);
                break 'search;
            }
            if members.contains(&w) && !prev.contains_key(&w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut path = vec![start];
    if let Some(mut v) = end {
        let mut back = vec![];
        while v != start {
            back.push(v);
            v = match prev.get(&v) {
                Some(&p) => p,
                None => break,
            };
        }
        back.reverse();
        path.extend(back);
    }
    path.push(start);
    let names: Vec<&str> = path
        .iter()
        .map(|&i| model.definitions[i].name.as_str())
        .collect();
    let def = &model.definitions[start];
    diags.push(
        Diagnostic::error(
            Code::E061,
            def.name_span,
            format!("struct '{}' contains itself: {}", def.name, names.join(" -> ")),
        )
        .with_note("a struct's size would be infinite; break the cycle with a message, a union, an array or a map"),
    );
}

fn struct_size(model: &Model, v: usize, sizes: &[u32]) -> u32 {
    let DefBody::Struct(s) = &model.definitions[v].body else {
        return 0;
    };
    let mut total: u32 = 0;
    for f in &s.fields {
        match type_size(model, &f.ty, sizes) {
            Some(n) if n > 0 => match total.checked_add(n) {
                Some(t) => total = t,
                None => return 0,
            },
            _ => return 0,
        }
    }
    total
}

fn type_size(model: &Model, t: &Type, sizes: &[u32]) -> Option<u32> {
    match t {
        Type::Scalar(s) => s.wire_size(),
        Type::FixedArray(e, n) => type_size(model, e, sizes)?.checked_mul(*n),
        Type::Array(_) | Type::Map(_, _) => None,
        Type::Defined { def, .. } => match &model.definitions.get(def.0 as usize)?.body {
            DefBody::Enum(e) => e.base.wire_size(),
            DefBody::Struct(_) => sizes.get(def.0 as usize).copied().filter(|&s| s > 0),
            _ => None,
        },
    }
}

// ---- services -------------------------------------------------------------------------

fn services(model: &Model, mixin_spans: &HashMap<DefId, Vec<Span>>, diags: &mut Vec<Diagnostic>) {
    let n = model.definitions.len();
    let mixins_of = |i: usize| -> &[DefId] {
        match &model.definitions[i].body {
            DefBody::Service(s) => &s.mixins,
            _ => &[],
        }
    };
    // Cycles, and a post-order to flatten methods dependencies first.
    let mut color = vec![0u8; n];
    let mut order: Vec<usize> = Vec::new();
    let mut cycle_edges: HashSet<(usize, usize)> = HashSet::new();
    for root in 0..n {
        if color[root] != 0 || !matches!(model.definitions[root].body, DefBody::Service(_)) {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        color[root] = 1;
        while let Some(&mut (v, ref mut ei)) = call.last_mut() {
            if let Some(w) = mixins_of(v).get(*ei).map(|d| d.0 as usize) {
                let edge = *ei;
                *ei += 1;
                match color[w] {
                    0 => {
                        color[w] = 1;
                        call.push((w, 0));
                    }
                    1 => {
                        cycle_edges.insert((v, w));
                        let span = mixin_spans
                            .get(&DefId(v as u32))
                            .and_then(|s| s.get(edge))
                            .copied()
                            .unwrap_or(model.definitions[v].name_span);
                        diags.push(Diagnostic::error(
                            Code::E073,
                            span,
                            format!(
                                "service '{}' includes itself through its mixins ('{}' leads back to it)",
                                model.definitions[w].name, model.definitions[v].name
                            ),
                        ));
                    }
                    _ => {}
                }
                continue;
            }
            color[v] = 2;
            order.push(v);
            call.pop();
        }
    }
    // Method ids: a service's own methods must hash to distinct ids.
    for (s, d) in model.definitions.iter().enumerate() {
        let DefBody::Service(svc) = &d.body else {
            continue;
        };
        let mut ids: HashMap<u32, usize> = HashMap::new();
        for (i, m) in svc.methods.iter().enumerate() {
            if let Some(&first) = ids.get(&m.id) {
                diags.push(
                    Diagnostic::error(
                        Code::E071,
                        m.span,
                        format!(
                            "methods '{}' and '{}' of '{}' have the same id 0x{:08x}",
                            svc.methods[first].name, m.name, d.name, m.id
                        ),
                    )
                    .with_label(method_span(model, s, first), "the other method")
                    .with_help("rename one of them"),
                );
            } else {
                ids.insert(m.id, i);
            }
        }
    }
    // Method names across mixins. Only names defined by two or more services can clash; for
    // each such name, the service it comes from is propagated from the defining services to
    // the services that include them (mixins first), so the work stays proportional to the
    // part of the mixin graph that can see the name.
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for &s in &order {
        if let DefBody::Service(svc) = &model.definitions[s].body {
            for m in &svc.methods {
                let list = definers.entry(m.name.as_str()).or_default();
                if list.last() != Some(&s) && !list.contains(&s) {
                    list.push(s);
                }
            }
        }
    }
    let mut position = vec![usize::MAX; n];
    for (i, &s) in order.iter().enumerate() {
        position[s] = i;
    }
    let mut includers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &s in &order {
        for m in mixins_of(s) {
            let w = m.0 as usize;
            if !cycle_edges.contains(&(s, w)) && !includers[w].contains(&s) {
                includers[w].push(s);
            }
        }
    }
    let mut shared: Vec<(&str, &Vec<usize>)> = definers
        .iter()
        .filter(|(_, d)| d.len() >= 2)
        .map(|(k, v)| (*k, v))
        .collect();
    shared.sort();
    #[derive(Clone, Copy, PartialEq)]
    enum Origin {
        One(usize),
        Conflict,
    }
    for (name, defs) in shared {
        let mut nodes: Vec<usize> = defs.clone();
        let mut seen: HashSet<usize> = defs.iter().copied().collect();
        let mut stack = defs.clone();
        while let Some(v) = stack.pop() {
            for &s in &includers[v] {
                if seen.insert(s) {
                    nodes.push(s);
                    stack.push(s);
                }
            }
        }
        nodes.sort_by_key(|&s| position[s]);
        let mut origin: HashMap<usize, Origin> = HashMap::new();
        for s in nodes {
            let DefBody::Service(svc) = &model.definitions[s].body else {
                continue;
            };
            let own = svc.methods.iter().position(|m| m.name == name);
            let spans = mixin_spans.get(&DefId(s as u32));
            let mut inherited: Option<usize> = None;
            let mut conflict = false;
            for (k, mixin) in svc.mixins.iter().enumerate() {
                let w = mixin.0 as usize;
                if cycle_edges.contains(&(s, w)) {
                    continue;
                }
                match origin.get(&w) {
                    None => {}
                    Some(Origin::Conflict) => conflict = true,
                    Some(&Origin::One(o)) => match inherited {
                        None => inherited = Some(o),
                        Some(p) if p == o => {}
                        Some(p) => {
                            conflict = true;
                            if own.is_none() {
                                let span = spans
                                    .and_then(|v| v.get(k))
                                    .copied()
                                    .unwrap_or(model.definitions[s].name_span);
                                diags.push(Diagnostic::error(
                                    Code::E074,
                                    span,
                                    format!(
                                        "method '{name}' comes from both '{}' and '{}'",
                                        model.definitions[p].name, model.definitions[o].name
                                    ),
                                ));
                            }
                        }
                    },
                }
            }
            let value = match own {
                Some(oi) => {
                    if let Some(o) = inherited {
                        diags.push(
                            Diagnostic::error(
                                Code::E074,
                                svc.methods[oi].span,
                                format!(
                                    "method '{name}' is also defined by mixin '{}'",
                                    model.definitions[o].name
                                ),
                            )
                            .with_label(method_span_by_name(model, o, name), "defined here"),
                        );
                    }
                    Origin::One(s)
                }
                None if conflict => Origin::Conflict,
                None => match inherited {
                    Some(o) => Origin::One(o),
                    None => continue,
                },
            };
            origin.insert(s, value);
        }
    }
}

fn method_span_by_name(model: &Model, s: usize, name: &str) -> Span {
    match &model.definitions[s].body {
        DefBody::Service(svc) => svc
            .methods
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.span)
            .unwrap_or(model.definitions[s].name_span),
        _ => model.definitions[s].name_span,
    }
}

fn service_method(model: &Model, s: usize, i: usize) -> Option<&Method> {
    match &model.definitions.get(s)?.body {
        DefBody::Service(svc) => svc.methods.get(i),
        _ => None,
    }
}

fn method_span(model: &Model, s: usize, i: usize) -> Span {
    service_method(model, s, i)
        .map(|m| m.span)
        .unwrap_or(model.definitions[s].name_span)
}

// ---- decorator runtime ----------------------------------------------------------------

/// Where a decorator usage lives.
#[derive(Clone, Copy)]
enum Slot {
    Def(usize, usize),
    Field(usize, usize, usize),
    Member(usize, usize, usize),
    Branch(usize, usize, usize),
    Method(usize, usize, usize),
}

fn run_decorators(
    model: &mut Model,
    runtime: &dyn DecoratorRuntime,
    sources: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    let mut results: Vec<(Slot, DecoratorOutcome, Span)> = Vec::new();
    {
        let m: &Model = model;
        let mut visit = |slot: Slot, usage: &DecoratorUsage, target: RtTarget<'_>| {
            let Some(def) = m.definitions.get(usage.def.0 as usize) else {
                return;
            };
            let DefBody::Decorator(body) = &def.body else {
                return;
            };
            if body.validate_source.is_none() && body.export_source.is_none() {
                return;
            }
            let call = DecoratorCall {
                definition: def,
                decorator: body,
                usage,
                target,
                sources,
            };
            results.push((slot, runtime.run(&call), usage.span));
        };
        for (di, d) in m.definitions.iter().enumerate() {
            let kind = d.kind();
            let tk = match kind {
                DefKind::Enum => TargetKind::Enum,
                DefKind::Struct => TargetKind::Struct,
                DefKind::Message => TargetKind::Message,
                DefKind::Union => TargetKind::Union,
                DefKind::Service => TargetKind::Service,
                _ => TargetKind::Const,
            };
            for (ui, u) in d.decorators.iter().enumerate() {
                let t = RtTarget {
                    kind: tk,
                    name: &d.name,
                    parent_kind: None,
                    fqn: Some(&d.fqn),
                    def_kind: Some(kind),
                };
                visit(Slot::Def(di, ui), u, t);
            }
            match &d.body {
                DefBody::Struct(StructDef { fields, .. })
                | DefBody::Message(MessageDef { fields }) => {
                    for (fi, f) in fields.iter().enumerate() {
                        for (ui, u) in f.decorators.iter().enumerate() {
                            let t = RtTarget {
                                kind: TargetKind::Field,
                                name: &f.name,
                                parent_kind: Some(kind),
                                fqn: None,
                                def_kind: None,
                            };
                            visit(Slot::Field(di, fi, ui), u, t);
                        }
                    }
                }
                DefBody::Enum(e) => {
                    for (mi, mem) in e.members.iter().enumerate() {
                        for (ui, u) in mem.decorators.iter().enumerate() {
                            let t = RtTarget {
                                kind: TargetKind::Member,
                                name: &mem.name,
                                parent_kind: Some(kind),
                                fqn: None,
                                def_kind: None,
                            };
                            visit(Slot::Member(di, mi, ui), u, t);
                        }
                    }
                }
                DefBody::Union(un) => {
                    for (bi, b) in un.branches.iter().enumerate() {
                        for (ui, u) in b.decorators.iter().enumerate() {
                            let t = RtTarget {
                                kind: TargetKind::Branch,
                                name: &b.name,
                                parent_kind: Some(kind),
                                fqn: None,
                                def_kind: None,
                            };
                            visit(Slot::Branch(di, bi, ui), u, t);
                        }
                    }
                }
                DefBody::Service(s) => {
                    for (mi, meth) in s.methods.iter().enumerate() {
                        for (ui, u) in meth.decorators.iter().enumerate() {
                            let t = RtTarget {
                                kind: TargetKind::Method,
                                name: &meth.name,
                                parent_kind: Some(kind),
                                fqn: None,
                                def_kind: None,
                            };
                            visit(Slot::Method(di, mi, ui), u, t);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for (slot, outcome, usage_span) in results {
        for msg in outcome.messages {
            let span = msg.span.unwrap_or(usage_span);
            diags.push(match msg.severity {
                Severity::Error => Diagnostic::error(Code::E089, span, msg.message),
                Severity::Warning => Diagnostic::warning(Code::W007, span, msg.message),
            });
        }
        if outcome.export.is_empty() {
            continue;
        }
        if let Some(u) = usage_mut(model, slot) {
            u.export_data = outcome.export;
        }
    }
}

fn usage_mut(model: &mut Model, slot: Slot) -> Option<&mut DecoratorUsage> {
    match slot {
        Slot::Def(d, u) => model.definitions.get_mut(d)?.decorators.get_mut(u),
        Slot::Field(d, f, u) => match &mut model.definitions.get_mut(d)?.body {
            DefBody::Struct(StructDef { fields, .. }) | DefBody::Message(MessageDef { fields }) => {
                fields.get_mut(f)?.decorators.get_mut(u)
            }
            _ => None,
        },
        Slot::Member(d, m, u) => match &mut model.definitions.get_mut(d)?.body {
            DefBody::Enum(e) => e.members.get_mut(m)?.decorators.get_mut(u),
            _ => None,
        },
        Slot::Branch(d, b, u) => match &mut model.definitions.get_mut(d)?.body {
            DefBody::Union(un) => un.branches.get_mut(b)?.decorators.get_mut(u),
            _ => None,
        },
        Slot::Method(d, m, u) => match &mut model.definitions.get_mut(d)?.body {
            DefBody::Service(s) => s.methods.get_mut(m)?.decorators.get_mut(u),
            _ => None,
        },
    }
}

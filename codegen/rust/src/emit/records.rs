//! Structs, messages and unions, in view and owned form.

use std::collections::BTreeSet;

use super::Emitter;
use crate::GenerateError;
use crate::analysis::{fixed_bytes, fixed_size, owned_ty_traits};
use crate::layout::{self, Code, TyText};
use crate::model::{Body, DefId, Field, Ty};
use crate::names::ident_text;
use crate::rules::ItemForm;

/// Which form of a record is being emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    View,
    Owned,
}

/// `::core::result::Result::Ok`, which every decoder returns through.
const OK: &str = "::core::result::Result::Ok";

/// `::core::option::Option::Some`.
const SOME: &str = "::core::option::Option::Some";

/// `::core::option::Option::None`.
const NONE: &str = "::core::option::Option::None";

impl Emitter<'_, '_> {
    /// The view form of a struct, message or union, with its wire impls.
    pub(crate) fn record_view(&self, code: &mut Code, id: DefId) {
        let from = self.def(id).module.clone();
        let docs = self.def_doc_lines(id);
        self.record(code, id, Mode::View, &from, &docs);
    }

    /// The owned form of an enum or flags type (in the `owned` tree at `from`): an alias, so
    /// that every type of the schema is reachable from the owned tree.
    pub(crate) fn same_owned(&self, code: &mut Code, id: DefId, from: &[String]) {
        let d = self.def(id);
        code.line(format_args!("/// `{}` is its own owned form.", d.fqn));
        self.alias_and_conversions(code, id, from, None);
    }

    /// `pub type Name = view;` in the owned tree (after its docs), inherent methods written
    /// by `methods` (if any), and the `ToOwnedValue`/`AsView` impls of a type that is its own
    /// owned form.
    fn alias_and_conversions(
        &self,
        code: &mut Code,
        id: DefId,
        from: &[String],
        methods: Option<&dyn Fn(&mut Code)>,
    ) {
        let name = ident_text(&self.def(id).name);
        let allow_dep = self.touches_deprecated(id);
        let allow = |code: &mut Code| {
            if allow_dep {
                code.line("#[allow(deprecated)]");
            }
        };
        allow(code);
        code.assign(&format!("pub type {name}"), &self.view_path_text(from, id));
        if let Some(methods) = methods {
            allow(code);
            code.open(format_args!("impl {name}"));
            methods(code);
            code.close();
        }
        let rt = &self.rt_text;
        for (tr, assoc, f) in [
            ("ToOwnedValue", "Owned", "to_owned_value"),
            ("AsView", "View<'a>", "as_view"),
        ] {
            allow(code);
            code.impl_open(&format!("impl {rt}::{tr}"), &name);
            code.line(format_args!("type {assoc} = {name};"));
            code.signature(&format!("fn {f}"), &["&self"], &format!(" -> {name}"), " {");
            code.line("*self");
            code.close();
            code.close();
        }
    }

    /// `encode_to_vec` of an owned type.
    fn encode_to_vec(&self, code: &mut Code) {
        let rt = &self.rt_text;
        code.line("/// Encodes into a new vector of exactly the encoded size.");
        let ret = TyText::generic(
            "::core::result::Result",
            vec![
                TyText::generic(format!("{rt}::alloc_types::Vec"), vec![TyText::leaf("u8")]),
                TyText::leaf(format!("{rt}::Error")),
            ],
        );
        code.signature_ret("pub fn encode_to_vec", &["&self"], &ret, " {");
        let size = format!("{rt}::Encode::encoded_size(self)");
        code.assign_call(
            "let mut out",
            &format!("{rt}::alloc_types::Vec::with_capacity"),
            &[&size],
        );
        code.line(format_args!("{rt}::Encode::encode(self, &mut out)?;"));
        code.line(format_args!("{OK}(out)"));
        code.close();
    }

    /// The owned form (in the `owned` tree at `from`): an alias when the view has no
    /// borrowed data, otherwise a type of its own with conversions.
    pub(crate) fn record_owned(
        &self,
        code: &mut Code,
        id: DefId,
        from: &[String],
    ) -> Result<(), GenerateError> {
        let d = self.def(id);
        if !d.lifetime {
            code.docs(&[format!(
                "`{}` holds no borrowed data, so its owned form is the view type itself.",
                d.fqn
            )]);
            self.alias_and_conversions(code, id, from, Some(&|c| self.encode_to_vec(c)));
            return Ok(());
        }
        self.check_owned_fixed_arrays(id)?;
        let mut lines = self.def_doc_lines(id);
        lines.push(String::new());
        lines.push(
            "Owned form: decodes into heap-allocated data and needs no input buffer; `to_owned_value` on the view converts to it, and `as_view` lends a view of it.".to_string(),
        );
        self.record(code, id, Mode::Owned, from, &lines);
        self.allow_deprecated_line(code, id);
        code.open(format_args!("impl {}", ident_text(&d.name)));
        self.encode_to_vec(code);
        code.close();
        self.conversions(code, id, from);
        Ok(())
    }

    fn check_owned_fixed_arrays(&self, id: DefId) -> Result<(), GenerateError> {
        fn walk(e: &Emitter<'_, '_>, ty: &Ty, at: &str) -> Result<(), GenerateError> {
            match ty {
                Ty::Fixed(el, _) => {
                    if !owned_ty_traits(e.model, el).default {
                        return Err(GenerateError::unsupported(
                            at,
                            "a fixed array of a type without a default value (a union, or an enum without a zero member) has no owned form; generate without owned types",
                        ));
                    }
                    walk(e, el, at)
                }
                Ty::Array(el) => walk(e, el, at),
                Ty::Map(k, v) => {
                    walk(e, k, at)?;
                    walk(e, v, at)
                }
                _ => Ok(()),
            }
        }
        let d = self.def(id);
        for f in d.fields() {
            walk(self, &f.ty, &format!("{}.{}", d.fqn, f.src_name))?;
        }
        Ok(())
    }

    fn record(&self, code: &mut Code, id: DefId, mode: Mode, from: &[String], docs: &[String]) {
        let d = self.def(id);
        match &d.body {
            Body::Struct { fields, .. } => self.structure(code, id, mode, from, docs, fields),
            Body::Message { fields } => self.message(code, id, mode, from, docs, fields),
            Body::Union { .. } => self.union(code, id, mode, from, docs),
            _ => {}
        }
    }

    fn field_ty(&self, mode: Mode, from: &[String], f: &Field, message: bool) -> TyText {
        match mode {
            Mode::View => self.view_field_ty_text(from, f, message),
            Mode::Owned => self.owned_field_ty_text(from, f, message),
        }
    }

    /// Which Rust type the record is in `mode`.
    fn form(&self, id: DefId, mode: Mode) -> ItemForm {
        self.record_form(id, mode == Mode::Owned)
    }

    /// Attributes of the type item: docs, derives (serde's too), the user's type
    /// attributes, deprecation.
    fn type_attrs(&self, code: &mut Code, id: DefId, mode: Mode, docs: &[String]) {
        let d = self.def(id);
        let (mut traits, copy) = match mode {
            Mode::View => (d.view_traits, true),
            Mode::Owned => (d.owned_traits, false),
        };
        if self.written_default(id, mode) {
            traits.default = false;
        }
        code.docs(docs);
        code.derive(&derive_list(traits, copy));
        let form = self.form(id, mode);
        self.serde_derive_line(code, form);
        self.user_type_attr_lines(code, id, form);
        // Records implement defmt::Format by hand (see emit/defmt.rs).
        Self::deprecated_line(code, d.deprecated.as_ref());
        self.allow_deprecated_line(code, id);
        let nests_map = match &d.body {
            Body::Struct { fields, .. } | Body::Message { fields, .. } => {
                fields.iter().any(|f| f.ty.nests_map())
            }
            _ => false,
        };
        if nests_map {
            code.line("#[allow(clippy::type_complexity)]");
        }
    }

    /// `Name<'a>` (or `Name`) and `Name<'_>` (or `Name`) of the record in `mode`.
    fn names(&self, id: DefId, mode: Mode) -> (String, String, String) {
        let d = self.def(id);
        let name = ident_text(&d.name);
        if mode == Mode::View && d.lifetime {
            (format!("{name}<'a>"), format!("{name}<'_>"), name)
        } else {
            (name.clone(), name.clone(), name)
        }
    }

    /// True for a struct view with a `Default` that cannot be derived: a `byte[N]` field is
    /// `&[u8; N]`, which has none, so the impl is written out with `&[0; N]`.
    fn written_default(&self, id: DefId, mode: Mode) -> bool {
        let d = self.def(id);
        mode == Mode::View
            && d.view_traits.default
            && matches!(&d.body, Body::Struct { fields, .. }
                if fields.iter().any(|f| !f.lazy && fixed_bytes(&f.ty).is_some()))
    }

    /// `impl Default` for a struct view [`written_default`](Self::written_default) applies to.
    fn default_impl(&self, code: &mut Code, id: DefId, mode: Mode, fields: &[Field]) {
        if !self.written_default(id, mode) {
            return;
        }
        let (_, name_any, _) = self.names(id, mode);
        self.allow_deprecated_line(code, id);
        code.impl_open("impl ::core::default::Default", &name_any);
        code.open("fn default() -> Self");
        let values: Vec<String> = fields
            .iter()
            .map(|f| {
                let fname = ident_text(&f.name);
                match fixed_bytes(&f.ty) {
                    Some(n) if !f.lazy => format!("{fname}: &[0; {n}]"),
                    _ => format!("{fname}: ::core::default::Default::default()"),
                }
            })
            .collect();
        code.struct_lit("", "Self", &refs(&values), "");
        code.close();
        code.close();
    }

    /// Docs and attributes of a struct or message field, then `pub name: Type,`.
    fn field_def(&self, code: &mut Code, id: DefId, mode: Mode, from: &[String], f: &Field) {
        let message = matches!(self.def(id).body, Body::Message { .. });
        code.docs(&Self::field_doc_lines(f, message));
        let form = self.form(id, mode);
        self.serde_field_attr_line(code, f, message, form);
        self.user_member_attr_lines(code, id, &f.src_name, form);
        if message {
            Self::deprecated_line(code, f.deprecated.as_ref());
        }
        let ty = self.field_ty(mode, from, f, message);
        code.typed(&format!("pub {}: ", ident_text(&f.name)), &ty, ",");
    }

    /// `pub struct Name<'a> { fields }`.
    fn struct_item(
        &self,
        code: &mut Code,
        id: DefId,
        mode: Mode,
        from: &[String],
        fields: &[Field],
    ) {
        let (name_a, _, _) = self.names(id, mode);
        if fields.is_empty() {
            code.line(format_args!("pub struct {name_a} {{}}"));
            return;
        }
        code.open(format_args!("pub struct {name_a}"));
        for f in fields {
            self.field_def(code, id, mode, from, f);
        }
        code.close();
    }

    /// `impl WireSize` with `MIN_SIZE` (and `FIXED_SIZE` when `fixed`).
    fn wire_size_impl(&self, code: &mut Code, id: DefId, mode: Mode, min: usize) {
        let d = self.def(id);
        let (_, name_any, _) = self.names(id, mode);
        self.allow_deprecated_line(code, id);
        code.impl_open(&format!("impl {}::WireSize", self.rt_text), &name_any);
        if let Some(n) = d.fixed_size {
            code.assign(
                "const FIXED_SIZE: ::core::option::Option<usize>",
                &format!("{SOME}({n})"),
            );
            code.blank();
        }
        code.line(format_args!("const MIN_SIZE: usize = {min};"));
        code.close();
    }

    /// `impl<'a> Decode<'a> for Name` opened, `#[inline]` when `inline`, and the `decode`
    /// signature (the parameter named `param`) opened.
    fn open_decode(&self, code: &mut Code, id: DefId, mode: Mode, inline: bool, param: &str) {
        let (name_a, _, _) = self.names(id, mode);
        let rt = &self.rt_text;
        self.allow_deprecated_line(code, id);
        code.impl_open(&format!("impl<'a> {rt}::Decode<'a>"), &name_a);
        if mode == Mode::View && self.own_check(id) {
            code.line("const OWN_CHECK: bool = true;");
            code.blank();
        }
        if inline {
            code.line("#[inline]");
        }
        self.decode_signature_named(code, param);
    }

    /// `fn decode(param: &mut Reader<'a>) -> Result<Self, Error> {`.
    fn decode_signature_named(&self, code: &mut Code, param: &str) {
        let rt = &self.rt_text;
        code.signature(
            "fn decode",
            &[&format!("{param}: &mut {rt}::Reader<'a>")],
            &format!(" -> ::core::result::Result<Self, {rt}::Error>"),
            " {",
        );
    }

    /// `#[inline] fn {name}(reader) -> Result<(), Error> {` opened: `Decode::skip` or
    /// `Decode::check`.
    fn open_reader_fn(&self, code: &mut Code, name: &str) {
        let rt = &self.rt_text;
        code.line("#[inline]");
        code.signature(
            &format!("fn {name}"),
            &[&format!("reader: &mut {rt}::Reader<'a>")],
            &format!(" -> ::core::result::Result<(), {rt}::Error>"),
            " {",
        );
    }

    /// Whether the view of `id` has a `Decode::check` of its own: messages with fields and
    /// unions with branches.
    fn own_check(&self, id: DefId) -> bool {
        match &self.def(id).body {
            Body::Message { fields } => !fields.is_empty(),
            Body::Union { branches, .. } => !branches.is_empty(),
            _ => false,
        }
    }

    /// The runs of a variable-size struct's fields that `decode` reads with one bounds check:
    /// two or more consecutive fields of integers, floats or uuids (whose every bit pattern
    /// is valid), as `(first field, their sizes)`. None for a fixed-size struct, whose
    /// elements are decoded from readers of exactly their size already.
    fn fixed_runs(&self, struct_size: Option<usize>, fields: &[Field]) -> Vec<(usize, Vec<usize>)> {
        let mut runs = Vec::new();
        if struct_size.is_some() {
            return runs;
        }
        let size_of = |f: &Field| match f.ty {
            Ty::Bool | Ty::Timestamp | Ty::Duration => None,
            ref ty => ty.scalar_size(),
        };
        let mut i = 0;
        while i < fields.len() {
            let sizes: Vec<usize> = fields[i..].iter().map_while(size_of).collect();
            let len = sizes.len();
            if len >= 2 {
                runs.push((i, sizes));
            }
            i += len.max(1);
        }
        runs
    }

    /// The body of `decode` for a struct with runs of fixed-size fields ([`Self::fixed_runs`]):
    /// each field into a local `v_{field}` in wire order, each run from a reader of exactly
    /// its size (`Reader::take_run`), whose reads the compiler proves cannot fail. A run that
    /// does not fit is read field by field, to fail where it always did. (An error built out
    /// of line for that case instead stopped `from_bytes` inlining into its callers:
    /// OrderSmall decode + walk took 173 instructions so, 146 this way, 152 before runs.)
    fn decode_with_runs(&self, code: &mut Code, fields: &[Field], runs: &[(usize, Vec<usize>)]) {
        let local = |f: &Field| format!("v_{}", ident_text(&f.name).trim_start_matches("r#"));
        let mut i = 0;
        while i < fields.len() {
            match runs.iter().find(|r| r.0 == i) {
                Some((_, sizes)) => {
                    let run = &fields[i..i + sizes.len()];
                    for f in run {
                        code.line(format_args!("let {};", local(f)));
                    }
                    let total: usize = sizes.iter().sum();
                    code.open(format_args!("match reader.take_run({total})"));
                    for (pat, from) in [
                        (format!("{SOME}(mut run)"), "run"),
                        (NONE.to_string(), "reader"),
                    ] {
                        code.open(format_args!("{pat} =>"));
                        for f in run {
                            code.line(format_args!("{} = {from}.read()?;", local(f)));
                        }
                        code.close();
                    }
                    code.close();
                    i += sizes.len();
                }
                None => {
                    code.line(format_args!("let {} = reader.read()?;", local(&fields[i])));
                    i += 1;
                }
            }
        }
        let values: Vec<String> = fields
            .iter()
            .map(|f| format!("{}: {}", ident_text(&f.name), local(f)))
            .collect();
        code.struct_lit(&format!("{OK}("), "Self", &refs(&values), ")");
    }

    /// `|m: &Self| &m.{field}`: the argument of `Reader::check_field` that names one message
    /// field's type (the closure is never called).
    fn check_field_arg(f: &Field) -> String {
        format!("|m: &Self| &m.{}", ident_text(&f.name))
    }

    /// `Decode::skip` of a message or union view: hop over the length-prefixed body.
    fn skip_prefixed(&self, code: &mut Code, mode: Mode) {
        if mode == Mode::View {
            self.open_reader_fn(code, "skip");
            code.line("reader.skip_prefixed()");
            code.close();
        }
    }

    /// `impl Encode for Name` opened, with `encoded_size` written by `size`.
    fn open_encode(&self, code: &mut Code, id: DefId, mode: Mode, size: impl FnOnce(&mut Code)) {
        let (_, name_any, _) = self.names(id, mode);
        self.allow_deprecated_line(code, id);
        code.impl_open(&format!("impl {}::Encode", self.rt_text), &name_any);
        code.line("#[inline]");
        code.open("fn encoded_size(&self) -> usize");
        size(code);
        code.close();
    }

    /// `#[inline] fn encode<S: Sink>(&self, sink) -> Result<(), S::Error> {` opened, the
    /// sink parameter named `sink`.
    fn open_encode_fn(&self, code: &mut Code, sink: &str) {
        code.line("#[inline]");
        code.signature(
            &format!("fn encode<S: {}::Sink>", self.rt_text),
            &["&self", &format!("{sink}: &mut S")],
            " -> ::core::result::Result<(), S::Error>",
            " {",
        );
    }

    fn structure(
        &self,
        code: &mut Code,
        id: DefId,
        mode: Mode,
        from: &[String],
        docs: &[String],
        fields: &[Field],
    ) {
        let d = self.def(id);
        let rt = &self.rt_text;
        let (_, name_any, _) = self.names(id, mode);
        self.type_attrs(code, id, mode, docs);
        self.struct_item(code, id, mode, from, fields);
        self.default_impl(code, id, mode, fields);
        self.wire_size_impl(code, id, mode, d.min_size);
        if let Some(n) = d.fixed_size {
            self.allow_deprecated_line(code, id);
            code.impl_open(&format!("impl {rt}::FixedSize"), &name_any);
            code.line(format_args!("const SIZE: usize = {n};"));
            code.close();
            let unit = if n == 1 { "byte" } else { "bytes" };
            self.allow_deprecated_line(code, id);
            code.open(format_args!("impl {name_any}"));
            code.line(format_args!(
                "/// The encoded size of every value: {n} {unit}."
            ));
            code.line(format_args!("pub const ENCODED_SIZE: usize = {n};"));
            code.close();
        }
        let param = if fields.is_empty() {
            "_reader"
        } else {
            "reader"
        };
        // ALWAYS_VALID: only fixed-size structs can be; the expression defers to the field
        // types' own answers.
        let (name_a, _, _) = self.names(id, mode);
        self.allow_deprecated_line(code, id);
        code.impl_open(&format!("impl<'a> {rt}::Decode<'a>"), &name_a);
        if d.fixed_size.is_some() {
            let mut seen = BTreeSet::new();
            let terms: Vec<String> = fields
                .iter()
                .map(|f| self.field_ty(mode, from, f, false).to_string())
                .filter(|t| seen.insert(t.clone()))
                .map(|t| format!("<{t} as {rt}::Decode<'a>>::ALWAYS_VALID"))
                .collect();
            let lhs = "const ALWAYS_VALID: bool";
            let flat_len = layout::joined_len(&terms, 4);
            if terms.is_empty() {
                code.line("const ALWAYS_VALID: bool = true;");
            } else if code.fits(lhs.len() + 3 + flat_len + 1)
                || (code.fits(4 + flat_len + 1) && !code.fits(lhs.len() + 3 + flat_len + 1))
                || code.binary_fits(&format!("{lhs} = "), &terms, "&&", ";")
            {
                code.assign_binary(lhs, &terms, "&&");
            } else {
                // rustfmt keeps what it is given when a term does not fit.
                code.pretty(&format!("{lhs} = {};", terms.join(" && ")), true);
            }
        }
        code.line("#[inline]");
        self.decode_signature_named(code, param);
        let runs = self.fixed_runs(d.fixed_size, fields);
        if runs.is_empty() {
            let values: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: reader.read()?", ident_text(&f.name)))
                .collect();
            code.struct_lit(&format!("{OK}("), "Self", &refs(&values), ")");
        } else {
            self.decode_with_runs(code, fields, &runs);
        }
        code.close();
        // skip (views only, variable-size structs): hop over each field, fixed-size runs in
        // one step, so that walking validated bytes reads each byte about once.
        if mode == Mode::View && d.fixed_size.is_none() {
            self.open_reader_fn(code, "skip");
            let mut run = 0usize;
            let trait_tail = format!(" as {rt}::Decode<'a>>::skip");
            for f in fields {
                match (f.lazy, fixed_size(self.model, &f.ty)) {
                    (false, Some(n)) => run += n,
                    _ => {
                        if run > 0 {
                            code.line(format_args!("reader.take({run})?;"));
                            run = 0;
                        }
                        let ty = self.field_ty(mode, from, f, false);
                        let callee = format!("<{ty}{trait_tail}");
                        if code.fits(callee.len() + "(reader)?;".len()) {
                            code.line(format_args!("{callee}(reader)?;"));
                        } else if code.fits(callee.len() + "()?;".len()) {
                            // (rustfmt keeps room for the `?;` on the callee's line: measured
                            // against the golden files.)
                            code.call("", &callee, &["reader"], "?;");
                        } else {
                            // rustfmt keeps some layouts of long qualified paths as it is
                            // given them.
                            code.pretty(&format!("{callee}(reader)?;"), false);
                        }
                    }
                }
            }
            if run > 0 {
                code.line(format_args!("reader.take({run})?;"));
            }
            code.line(format_args!("{OK}(())"));
            code.close();
        }
        code.close();
        // encoded_size: the fixed part as one number, then the variable fields.
        self.open_encode(code, id, mode, |code| match d.fixed_size {
            Some(n) => code.line(n),
            None => {
                let mut constant = 0usize;
                let mut terms = Vec::new();
                for f in fields {
                    match (f.lazy, fixed_size(self.model, &f.ty)) {
                        (false, Some(n)) => constant += n,
                        _ => terms.push(format!(
                            "{rt}::Encode::encoded_size(&self.{})",
                            ident_text(&f.name)
                        )),
                    }
                }
                if constant > 0 {
                    terms.insert(0, constant.to_string());
                }
                code.binary("", &terms, "+", "");
            }
        });
        let sink = if fields.is_empty() { "_sink" } else { "sink" };
        self.open_encode_fn(code, sink);
        // A fixed-size struct is one write, and so is each run of two or more fixed-size
        // scalar fields of a variable-size one: the fields go into a local array first, through
        // a slice writer whose checks the compiler proves true (D53).
        // (first field, number of fields, bytes) of each one-write group.
        let runs: Vec<(usize, usize, usize)> = match d.fixed_size {
            Some(n) if fields.len() > 1 => vec![(0, fields.len(), n)],
            Some(_) => Vec::new(),
            None => self
                .fixed_runs(None, fields)
                .into_iter()
                .map(|(start, sizes)| (start, sizes.len(), sizes.iter().sum()))
                .collect(),
        };
        let mut i = 0;
        while i < fields.len() {
            if let Some(&(_, count, bytes)) = runs.iter().find(|run| run.0 == i) {
                code.line(format_args!("let mut run = [0u8; {bytes}];"));
                code.line(format_args!(
                    "let mut w = {rt}::SliceWriter::new(&mut run);"
                ));
                for f in &fields[i..i + count] {
                    code.line(format_args!(
                        "{rt}::Encode::encode(&self.{}, &mut w)?;",
                        ident_text(&f.name)
                    ));
                }
                i += count;
                code.line(if i == fields.len() {
                    "sink.write(&run)"
                } else {
                    "sink.write(&run)?;"
                });
                continue;
            }
            let f = &fields[i];
            if i + 1 == fields.len() {
                code.call(
                    "",
                    &format!("{rt}::Encode::encode"),
                    &[&format!("&self.{}", ident_text(&f.name)), "sink"],
                    "",
                );
            } else {
                code.line(format_args!(
                    "{rt}::Encode::encode(&self.{}, sink)?;",
                    ident_text(&f.name)
                ));
            }
            i += 1;
        }
        if fields.is_empty() {
            code.line(format_args!("{OK}(())"));
        }
        code.close();
        code.close();
        self.defmt_impl(code, id, mode);
    }

    fn message(
        &self,
        code: &mut Code,
        id: DefId,
        mode: Mode,
        from: &[String],
        docs: &[String],
        fields: &[Field],
    ) {
        let rt = &self.rt_text;
        self.type_attrs(code, id, mode, docs);
        self.struct_item(code, id, mode, from, fields);
        self.wire_size_impl(code, id, mode, self.def(id).min_size);
        // A message holding itself through `Lazy` decodes recursively: inlining that call
        // into itself only grows every level's stack frame (measured on Cortex-M0).
        let inline = !fields.iter().any(|f| f.lazy);
        self.open_decode(code, id, mode, inline, "reader");
        let default = "let mut out = <Self as ::core::default::Default>::default();";
        let read_into = |code: &mut Code, f: &Field, suffix: &str| {
            let lhs = format!("out.{}", ident_text(&f.name));
            let rhs = format!("{SOME}(reader.read()?)");
            if code.fits(lhs.len() + 3 + rhs.len() + suffix.len()) {
                code.line(format_args!("{lhs} = {rhs}{suffix}"));
            } else {
                code.line(format_args!("{lhs} ="));
                code.push_depth();
                code.line(format_args!("{rhs}{suffix}"));
                code.pop_depth();
            }
        };
        match fields {
            [] => code.line(format_args!("reader.message(|_| {OK}(Self {{}}))")),
            [f] => {
                code.open("reader.message(|reader|");
                code.line(default);
                // Tag 0 ends the message; an unknown tag stops reading (the rest of the
                // body is skipped); a repeated tag overwrites.
                code.open(format_args!("while reader.read_tag()? == {}", f.tag));
                read_into(code, f, ";");
                code.close();
                code.line(format_args!("{OK}(out)"));
                code.close_with(")");
            }
            _ => {
                code.open("reader.message(|reader|");
                code.line(default);
                code.open("loop");
                code.open("match reader.read_tag()?");
                for f in fields {
                    let pat = f.tag.to_string();
                    let lhs = format!("out.{}", ident_text(&f.name));
                    let rhs = format!("{SOME}(reader.read()?)");
                    let arm_len = pat.len() + 4 + lhs.len() + 3 + rhs.len() + 1;
                    // An arm of a statement keeps the layout it is given (rustfmt neither
                    // adds nor removes a block holding a statement): on one line where
                    // prettyplease kept it on one (its margin is narrower than rustfmt's).
                    if arm_len <= (86usize.saturating_sub(code.indent_width())).max(61)
                        && code.fits(arm_len)
                    {
                        code.line(format_args!("{pat} => {lhs} = {rhs},"));
                    } else {
                        code.open(format_args!("{pat} =>"));
                        read_into(code, f, ";");
                        code.close();
                    }
                }
                // 0 ends the message; an unknown tag stops reading (the rest of the body
                // is skipped).
                code.line("_ => break,");
                code.close();
                code.close();
                code.line(format_args!("{OK}(out)"));
                code.close_with(")");
            }
        }
        code.close();
        if mode == Mode::View && self.own_check(id) {
            self.message_check(code, fields);
        }
        self.skip_prefixed(code, mode);
        code.close();
        let written: Vec<&Field> = fields.iter().filter(|f| f.deprecated.is_none()).collect();
        self.open_encode(code, id, mode, |code| {
            let mut terms = vec!["5".to_string()];
            terms.extend(
                written
                    .iter()
                    .map(|f| format!("{rt}::field_size(&self.{})", ident_text(&f.name))),
            );
            code.binary("", &terms, "+", "");
        });
        self.open_encode_fn(code, "sink");
        code.line("sink.write_prefixed(");
        code.push_depth();
        code.line(format_args!("|| {rt}::Encode::encoded_size(self) - 4,"));
        self.message_body(code, id, &written);
        code.pop_depth();
        code.line(")");
        code.close();
        code.close();
        self.defmt_impl(code, id, mode);
    }

    /// The closure that writes a message's body (its present fields, then the end marker),
    /// as the second argument of `write_prefixed`.
    ///
    /// The end marker goes after the last field's `if let`, or, where that field is of a
    /// variable size (written out of line or through `memcpy`, so that the writer's position
    /// ends up in memory), in both arms of a `match` on it. Written once after such a field,
    /// the two arms join before that write and the compiler reloads the position from
    /// memory there, though the arm without the field holds it in a register: a
    /// store-to-load round trip on the critical path of every message, a third of
    /// TreeDeep's encode time on Intel (D54). A union's branch keeps the single write: it is
    /// encoded inside the union's encoder, which reloads the position after any branch to
    /// fill in the union's length, and there the second write only grew the code (JsonLarge
    /// encode 6-9% slower).
    fn message_body(&self, code: &mut Code, id: DefId, written: &[&Field]) {
        let Some((last, rest)) = written.split_last() else {
            code.line("|sink| sink.write(&[0]),");
            return;
        };
        let present = |code: &mut Code, f: &Field| {
            code.open(format_args!(
                "if let {SOME}(v) = &self.{}",
                ident_text(&f.name)
            ));
            code.line(format_args!("sink.write_field({}, v)?;", f.tag));
            code.close();
        };
        let branch = self
            .def(id)
            .parent
            .is_some_and(|p| matches!(self.def(p).body, Body::Union { .. }));
        if branch || fixed_size(self.model, &last.ty).is_some() {
            code.open("|sink|");
            rest.iter().for_each(|f| present(code, f));
            present(code, last);
            code.line("sink.write(&[0])");
        } else {
            let last_match = format!("match &self.{}", ident_text(&last.name));
            // A closure of the match alone has no block, as rustfmt writes it.
            if rest.is_empty() {
                code.open(format_args!("|sink| {last_match}"));
            } else {
                code.open("|sink|");
                rest.iter().for_each(|f| present(code, f));
                code.open(last_match);
            }
            code.open(format_args!("{SOME}(v) =>"));
            code.line(format_args!("sink.write_field({}, v)?;", last.tag));
            code.line("sink.write(&[0])");
            code.close();
            code.line(format_args!("{NONE} => sink.write(&[0]),"));
            if !rest.is_empty() {
                code.close();
            }
        }
        code.close_with(",");
    }

    /// `Decode::check` of a message view: the fields of `decode`, each checked as its type
    /// (arrays of this message are validated so, without assembling a view of each element),
    /// first in declaration order and then, for whatever is left, in a loop.
    fn message_check(&self, code: &mut Code, fields: &[Field]) {
        self.open_reader_fn(code, "check");
        code.open("reader.message(|reader|");
        // The statement form (the loop of one field, or an arm too long for one line).
        let statement = |code: &mut Code, f: &Field| {
            code.call("", "reader.check_field", &[&Self::check_field_arg(f)], "?;");
        };
        if let [f] = fields {
            code.open(format_args!("while reader.read_tag()? == {}", f.tag));
            statement(code, f);
            code.close();
        } else {
            // Encoders write the fields in declaration order: one test per field takes them
            // so. Fields out of that order, repeated or unknown leave the rest to the loop
            // below (docs/decisions.md D43).
            code.line("let mut tag = reader.read_tag()?;");
            for f in fields {
                code.open(format_args!("if tag == {}", f.tag));
                statement(code, f);
                code.line("tag = reader.read_tag()?;");
                code.close();
            }
            code.open("while tag != 0");
            code.open("match tag");
            for f in fields {
                let pat = f.tag.to_string();
                let call = format!("reader.check_field({})?", Self::check_field_arg(f));
                if code.fits(pat.len() + 4 + call.len() + 1) {
                    code.line(format_args!("{pat} => {call},"));
                } else {
                    code.open(format_args!("{pat} =>"));
                    statement(code, f);
                    code.close();
                }
            }
            code.line("_ => break,");
            code.close();
            code.line("tag = reader.read_tag()?;");
            code.close();
        }
        code.line(format_args!("{OK}(())"));
        code.close_with(")");
        code.close();
    }

    fn union(&self, code: &mut Code, id: DefId, mode: Mode, from: &[String], docs: &[String]) {
        let d = self.def(id);
        let rt = &self.rt_text;
        let Body::Union { branches, unknown } = &d.body else {
            return;
        };
        let (name_a, _, _) = self.names(id, mode);
        self.type_attrs(code, id, mode, docs);
        code.line("#[allow(clippy::large_enum_variant)]");
        let body_ty = match mode {
            Mode::View => "&'a [u8]".to_string(),
            Mode::Owned => format!("{rt}::alloc_types::Vec<u8>"),
        };
        if branches.is_empty() && unknown.is_none() {
            code.line(format_args!("pub enum {name_a} {{}}"));
        } else {
            code.open(format_args!("pub enum {name_a}"));
            for b in branches {
                let target = self.def(b.target);
                let ty = match mode {
                    Mode::View => self.view_type_text(from, b.target),
                    Mode::Owned => TyText::leaf(self.owned_path_text(from, b.target)),
                };
                let mut lines = Self::schema_doc(b.doc.as_deref());
                if !lines.is_empty() {
                    lines.push(String::new());
                }
                lines.push(if b.inline {
                    format!(
                        "`{}({})`: an inline {}.",
                        b.src_name,
                        b.discriminator,
                        target.kind_word()
                    )
                } else {
                    format!("`{}({}): {}`", b.src_name, b.discriminator, target.fqn)
                });
                code.docs(&lines);
                self.user_member_attr_lines(code, id, &b.src_name, self.form(id, mode));
                code.ty(&format!("{}(", ident_text(&b.name)), &ty, "),");
            }
            if let Some(u) = unknown {
                code.docs(&[
                    "A branch this code does not know (the union is `@forward_compatible`):",
                    "kept as read, and written back unchanged.",
                ]);
                code.open(ident_text(u));
                code.line("/// The discriminator read.");
                code.line("discriminator: u8,");
                code.line("/// The branch body, as read.");
                code.line(format_args!("body: {body_ty},"));
                code.close_with(",");
            }
            code.close();
        }
        self.wire_size_impl(code, id, mode, self.def(id).min_size);
        self.open_decode(code, id, mode, true, "reader");
        let unknown_err =
            "::core::result::Result::Err(reader.unknown_discriminator(discriminator))".to_string();
        if branches.is_empty() && unknown.is_none() {
            let head = "reader.union(|reader, discriminator| ";
            if code.fits(head.len() + unknown_err.len() + 1) {
                code.line(format_args!("{head}{unknown_err})"));
            } else {
                code.line("reader.union(|reader, discriminator| {");
                code.push_depth();
                code.line(&unknown_err);
                code.pop_depth();
                code.line("})");
            }
        } else {
            code.open("reader.union(|reader, discriminator| match discriminator");
            for b in branches {
                let v = ident_text(&b.name);
                code.arm_call(
                    &b.discriminator.to_string(),
                    OK,
                    &[&format!("Self::{v}(reader.read()?)")],
                );
            }
            match unknown {
                Some(u) => {
                    let body_from = match mode {
                        Mode::View => "reader.take_rest()".to_string(),
                        Mode::Owned => format!("{rt}::alloc_types::Vec::from(reader.take_rest())"),
                    };
                    code.struct_lit(
                        &format!("_ => {OK}("),
                        &format!("Self::{}", ident_text(u)),
                        &["discriminator", &format!("body: {body_from}")],
                        "),",
                    );
                }
                None => code.arm("_", &unknown_err),
            }
            code.close_with(")");
        }
        code.close();
        if mode == Mode::View && self.own_check(id) {
            // check: each branch checked as its type; an unknown branch of a
            // forward-compatible union is skipped over, as `decode` keeps it unread.
            self.open_reader_fn(code, "check");
            code.open("reader.union(|reader, discriminator| match discriminator");
            for b in branches {
                code.arm_call(
                    &b.discriminator.to_string(),
                    "reader.check_branch",
                    &[&format!("Self::{}", ident_text(&b.name))],
                );
            }
            match unknown {
                Some(_) => code.arm("_", format_args!("{OK}(())")),
                None => code.arm("_", &unknown_err),
            }
            code.close_with(")");
            code.close();
        }
        self.skip_prefixed(code, mode);
        code.close();
        let has_arms = !branches.is_empty() || unknown.is_some();
        self.open_encode(code, id, mode, |code| {
            if !has_arms {
                code.line("match *self {}");
                return;
            }
            code.open("5 + match self");
            for b in branches {
                code.arm(
                    format_args!("Self::{}(v)", ident_text(&b.name)),
                    format_args!("{rt}::Encode::encoded_size(v)"),
                );
            }
            if let Some(u) = unknown {
                code.arm(
                    format_args!("Self::{} {{ body, .. }}", ident_text(u)),
                    "body.len()",
                );
            }
            code.close();
        });
        self.open_encode_fn(code, "sink");
        if !has_arms {
            code.line("match *self {}");
        } else {
            code.line("sink.write_prefixed(");
            code.push_depth();
            code.line(format_args!("|| {rt}::Encode::encoded_size(self) - 4,"));
            code.open("|sink| match self");
            for b in branches {
                code.arm(
                    format_args!("Self::{}(v)", ident_text(&b.name)),
                    format_args!("sink.write_field({}, v)", b.discriminator),
                );
            }
            if let Some(u) = unknown {
                code.struct_lit(
                    "",
                    &format!("Self::{}", ident_text(u)),
                    &["discriminator", "body"],
                    " => {",
                );
                code.push_depth();
                code.line("sink.write(&[*discriminator])?;");
                code.line("sink.write(body)");
                code.close();
            }
            code.close_with(",");
            code.pop_depth();
            code.line(")");
        }
        code.close();
        code.close();
        self.defmt_impl(code, id, mode);
    }
}

/// The derives of a record: `Clone`, `Copy` for views, `Debug`, `PartialEq`, then what the
/// analysis allows.
pub(crate) fn derive_list(traits: crate::model::Traits, copy: bool) -> Vec<&'static str> {
    let mut list = vec!["Clone"];
    if copy {
        list.push("Copy");
    }
    list.extend(["Debug", "PartialEq"]);
    if traits.eq {
        list.push("Eq");
    }
    if traits.hash {
        list.push("Hash");
    }
    if traits.default {
        list.push("Default");
    }
    list
}

/// `&str`s of owned strings, for the layout functions.
pub(crate) fn refs(items: &[String]) -> Vec<&str> {
    items.iter().map(String::as_str).collect()
}

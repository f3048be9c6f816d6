//! Structs, messages and unions, in view and owned form.

use std::collections::BTreeSet;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{Emitter, lt, lt_anon};
use crate::GenerateError;
use crate::analysis::{fixed_bytes, fixed_size, owned_ty_traits};
use crate::layout::{Code, tokens_text};
use crate::model::{Body, DefId, Field, Ty};
use crate::names::ident;
use crate::rules::ItemForm;

/// Which form of a record is being emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    View,
    Owned,
}

impl Emitter<'_, '_> {
    /// The view form of a struct, message or union, with its wire impls.
    pub(crate) fn record_view(&self, id: DefId) -> Result<TokenStream, GenerateError> {
        let from = self.def(id).module.clone();
        let docs = self.def_docs(id);
        self.record(id, Mode::View, &from, docs)
    }

    /// The owned form of an enum or flags type (in the `owned` tree at `from`): an alias, so
    /// that every type of the schema is reachable from the owned tree.
    pub(crate) fn same_owned(&self, code: &mut Code, id: DefId, from: &[String]) {
        let d = self.def(id);
        let name = ident(&d.name).to_string();
        let allow_dep = self.touches_deprecated(id);
        let allow = |code: &mut Code| {
            if allow_dep {
                code.line("#[allow(deprecated)]");
            }
        };
        code.line(format_args!("/// `{}` is its own owned form.", d.fqn));
        allow(code);
        code.assign(
            &format!("pub type {name}"),
            &tokens_text(&self.view_path(from, id)),
        );
        let rt = &self.rt_text;
        for (i, (tr, assoc, f)) in [
            ("ToOwnedValue", "Owned", "to_owned_value"),
            ("AsView", "View<'a>", "as_view"),
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                code.blank();
            }
            allow(code);
            code.impl_open(&format!("impl {rt}::{tr}"), &name);
            code.line(format_args!("type {assoc} = {name};"));
            code.signature(&format!("fn {f}"), &["&self"], &format!(" -> {name}"), " {");
            code.line("*self");
            code.close();
            code.close();
        }
    }

    /// `pub type Name = view;` in the owned tree with `doc`, inherent `methods` (if any) and
    /// the `ToOwnedValue`/`AsView` impls of a type that is its own owned form.
    fn alias_owned(
        &self,
        id: DefId,
        from: &[String],
        doc: String,
        methods: TokenStream,
    ) -> TokenStream {
        let name = ident(&self.def(id).name);
        let view = self.view_path(from, id);
        let doc = Self::doc_lines(&[doc]);
        let allow_dep = self.allow_deprecated(id);
        let methods = (!methods.is_empty()).then(|| {
            quote! {
                #allow_dep
                impl #name {
                    #methods
                }
            }
        });
        let same = self.same_conversions(id);
        quote! {
            #doc
            #allow_dep
            pub type #name = #view;

            #methods

            #same
        }
    }

    /// The owned form (in the `owned` tree at `from`): an alias when the view has no
    /// borrowed data, otherwise a type of its own with conversions.
    pub(crate) fn record_owned(
        &self,
        id: DefId,
        from: &[String],
    ) -> Result<TokenStream, GenerateError> {
        let d = self.def(id);
        let name = ident(&d.name);
        let rt = &self.rt;
        let encode_to_vec = quote! {
            /// Encodes into a new vector of exactly the encoded size.
            pub fn encode_to_vec(
                &self,
            ) -> ::core::result::Result<#rt::alloc_types::Vec<u8>, #rt::Error> {
                let mut out =
                    #rt::alloc_types::Vec::with_capacity(#rt::Encode::encoded_size(self));
                #rt::Encode::encode(self, &mut out)?;
                ::core::result::Result::Ok(out)
            }
        };
        let allow_dep = self.allow_deprecated(id);
        if !d.lifetime {
            let doc = format!(
                "`{}` holds no borrowed data, so its owned form is the view type itself.",
                d.fqn
            );
            return Ok(self.alias_owned(id, from, doc, encode_to_vec));
        }
        self.check_owned_fixed_arrays(id)?;
        let mut lines = self.def_doc_lines(id);
        lines.push(String::new());
        lines.push(
            "Owned form: decodes into heap-allocated data and needs no input buffer; `to_owned_value` on the view converts to it, and `as_view` lends a view of it.".to_string(),
        );
        let docs = Self::doc_lines(&lines);
        let mut out = self.record(id, Mode::Owned, from, docs)?;
        let conversions = self.conversions(id, from);
        out.extend(quote! {
            #allow_dep
            impl #name {
                #encode_to_vec
            }
            #conversions
        });
        Ok(out)
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

    fn record(
        &self,
        id: DefId,
        mode: Mode,
        from: &[String],
        docs: TokenStream,
    ) -> Result<TokenStream, GenerateError> {
        let d = self.def(id);
        Ok(match &d.body {
            Body::Struct { fields, .. } => self.structure(id, mode, from, docs, fields),
            Body::Message { fields } => self.message(id, mode, from, docs, fields),
            Body::Union { .. } => self.union(id, mode, from, docs),
            _ => TokenStream::new(),
        })
    }

    fn field_ty(&self, mode: Mode, from: &[String], f: &Field, message: bool) -> TokenStream {
        match mode {
            Mode::View => self.view_field_ty(from, f, message),
            Mode::Owned => self.owned_field_ty(from, f, message),
        }
    }

    /// Which Rust type the record is in `mode`.
    fn form(&self, id: DefId, mode: Mode) -> ItemForm {
        self.record_form(id, mode == Mode::Owned)
    }

    /// Attributes shared by the type item: docs, derives (serde's too), the user's type
    /// attributes, deprecation.
    fn type_attrs(&self, id: DefId, mode: Mode, docs: TokenStream) -> TokenStream {
        let d = self.def(id);
        let (mut traits, copy) = match mode {
            Mode::View => (d.view_traits, true),
            Mode::Owned => (d.owned_traits, false),
        };
        if self.written_default(id, mode) {
            traits.default = false;
        }
        let derives = self.derives(traits, copy);
        let form = self.form(id, mode);
        let serde = self.serde_derive(form);
        let user = self.user_type_attrs(id, form);
        // Records implement defmt::Format by hand (see emit/defmt.rs).
        let deprecated = Self::deprecated_attr(d.deprecated.as_ref());
        let allow_dep = self.allow_deprecated(id);
        quote! {
            #docs
            #derives
            #serde
            #user
            #deprecated
            #allow_dep
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
    fn default_impl(&self, id: DefId, mode: Mode, fields: &[Field]) -> TokenStream {
        if !self.written_default(id, mode) {
            return TokenStream::new();
        }
        let name = ident(&self.def(id).name);
        let allow_dep = self.allow_deprecated(id);
        let values = fields.iter().map(|f| {
            let fname = ident(&f.name);
            match fixed_bytes(&f.ty) {
                Some(n) if !f.lazy => {
                    let n = Literal::usize_unsuffixed(n);
                    quote!(#fname: &[0; #n],)
                }
                _ => quote!(#fname: ::core::default::Default::default(),),
            }
        });
        quote! {
            #allow_dep
            impl ::core::default::Default for #name<'_> {
                fn default() -> Self {
                    Self { #(#values)* }
                }
            }
        }
    }

    /// Attributes of a struct or message field: the serde helpers it needs and the user's
    /// field attributes.
    fn field_attrs(&self, id: DefId, mode: Mode, f: &Field, message: bool) -> TokenStream {
        let form = self.form(id, mode);
        let serde = self.serde_field_attrs(f, message, form);
        let user = self.user_member_attrs(id, &f.src_name, form);
        quote!(#serde #user)
    }

    /// `Decode::skip` of a message or union view: hop over the length-prefixed body.
    fn skip_prefixed(&self, mode: Mode) -> TokenStream {
        let rt = &self.rt;
        match mode {
            Mode::View => quote! {
                #[inline]
                fn skip(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<(), #rt::Error> {
                    reader.skip_prefixed()
                }
            },
            Mode::Owned => TokenStream::new(),
        }
    }

    fn structure(
        &self,
        id: DefId,
        mode: Mode,
        from: &[String],
        docs: TokenStream,
        fields: &[Field],
    ) -> TokenStream {
        let d = self.def(id);
        let rt = &self.rt;
        let name = ident(&d.name);
        let has_lt = mode == Mode::View && d.lifetime;
        let (lt_a, lt_any) = (lt(has_lt), lt_anon(has_lt));
        let attrs = self.type_attrs(id, mode, docs);
        let allow_dep = self.allow_deprecated(id);
        let field_defs = fields.iter().map(|f| {
            let fdocs = Self::field_docs(f, false);
            let fattrs = self.field_attrs(id, mode, f, false);
            let fname = ident(&f.name);
            let ty = self.field_ty(mode, from, f, false);
            quote! {
                #fdocs
                #fattrs
                pub #fname: #ty,
            }
        });
        let min = Literal::usize_unsuffixed(d.min_size);
        let fixed = d.fixed_size.map(Literal::usize_unsuffixed);
        let fixed_const = fixed.as_ref().map(|n| {
            quote!(const FIXED_SIZE: ::core::option::Option<usize> = ::core::option::Option::Some(#n);)
        });
        let fixed_impls = fixed.as_ref().map(|n| {
            let unit = if d.fixed_size == Some(1) {
                "byte"
            } else {
                "bytes"
            };
            let doc = Self::doc_lines(&[format!("The encoded size of every value: {n} {unit}.")]);
            quote! {
                #allow_dep
                impl #rt::FixedSize for #name #lt_any {
                    const SIZE: usize = #n;
                }

                #allow_dep
                impl #name #lt_any {
                    #doc
                    pub const ENCODED_SIZE: usize = #n;
                }
            }
        });
        // ALWAYS_VALID: only fixed-size structs can be; the expression defers to the field
        // types' own answers.
        let always_valid = if d.fixed_size.is_some() {
            let mut seen = BTreeSet::new();
            let terms: Vec<TokenStream> = fields
                .iter()
                .map(|f| self.field_ty(mode, from, f, false))
                .filter(|t| seen.insert(t.to_string()))
                .map(|t| quote!(<#t as #rt::Decode<'a>>::ALWAYS_VALID))
                .collect();
            if terms.is_empty() {
                quote!(
                    const ALWAYS_VALID: bool = true;
                )
            } else {
                quote!(const ALWAYS_VALID: bool = #(#terms)&&*;)
            }
        } else {
            TokenStream::new()
        };
        let names: Vec<_> = fields.iter().map(|f| ident(&f.name)).collect();
        let decode_body = if fields.is_empty() {
            quote! {
                #[inline]
                fn decode(_reader: &mut #rt::Reader<'a>) -> ::core::result::Result<Self, #rt::Error> {
                    ::core::result::Result::Ok(Self {})
                }
            }
        } else {
            quote! {
                #[inline]
                fn decode(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<Self, #rt::Error> {
                    ::core::result::Result::Ok(Self {
                        #(#names: reader.read()?,)*
                    })
                }
            }
        };
        // skip (views only, variable-size structs): hop over each field, fixed-size runs in
        // one step, so that walking validated bytes reads each byte about once.
        let skip_body = if mode == Mode::View && d.fixed_size.is_none() {
            let mut steps = Vec::new();
            let mut run = 0usize;
            for f in fields {
                match (f.lazy, fixed_size(self.model, &f.ty)) {
                    (false, Some(n)) => run += n,
                    _ => {
                        if run > 0 {
                            let n = Literal::usize_unsuffixed(run);
                            steps.push(quote!(reader.take(#n)?;));
                            run = 0;
                        }
                        let ty = self.field_ty(mode, from, f, false);
                        steps.push(quote!(<#ty as #rt::Decode<'a>>::skip(reader)?;));
                    }
                }
            }
            if run > 0 {
                let n = Literal::usize_unsuffixed(run);
                steps.push(quote!(reader.take(#n)?;));
            }
            quote! {
                #[inline]
                fn skip(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<(), #rt::Error> {
                    #(#steps)*
                    ::core::result::Result::Ok(())
                }
            }
        } else {
            TokenStream::new()
        };
        // encoded_size: the fixed part as one number, then the variable fields.
        let size_expr = match d.fixed_size {
            Some(n) => {
                let n = Literal::usize_unsuffixed(n);
                quote!(#n)
            }
            None => {
                let mut constant = 0usize;
                let mut terms = Vec::new();
                for f in fields {
                    match (f.lazy, fixed_size(self.model, &f.ty)) {
                        (false, Some(n)) => constant += n,
                        _ => {
                            let fname = ident(&f.name);
                            terms.push(quote!(#rt::Encode::encoded_size(&self.#fname)));
                        }
                    }
                }
                if constant > 0 {
                    let c = Literal::usize_unsuffixed(constant);
                    terms.insert(0, quote!(#c));
                }
                quote!(#(#terms)+*)
            }
        };
        let encode_body = match names.split_last() {
            None => quote! {
                #[inline]
                fn encode<S: #rt::Sink>(&self, _sink: &mut S) -> ::core::result::Result<(), S::Error> {
                    ::core::result::Result::Ok(())
                }
            },
            Some((last, init)) => quote! {
                #[inline]
                fn encode<S: #rt::Sink>(&self, sink: &mut S) -> ::core::result::Result<(), S::Error> {
                    #(#rt::Encode::encode(&self.#init, sink)?;)*
                    #rt::Encode::encode(&self.#last, sink)
                }
            },
        };
        let defmt_impl = self.defmt_impl(id, mode, from);
        let default_impl = self.default_impl(id, mode, fields);
        quote! {
            #attrs
            pub struct #name #lt_a {
                #(#field_defs)*
            }

            #default_impl

            #allow_dep
            impl #rt::WireSize for #name #lt_any {
                #fixed_const
                const MIN_SIZE: usize = #min;
            }

            #fixed_impls

            #allow_dep
            impl<'a> #rt::Decode<'a> for #name #lt_a {
                #always_valid
                #decode_body
                #skip_body
            }

            #allow_dep
            impl #rt::Encode for #name #lt_any {
                #[inline]
                fn encoded_size(&self) -> usize {
                    #size_expr
                }
                #encode_body
            }

            #defmt_impl
        }
    }

    fn message(
        &self,
        id: DefId,
        mode: Mode,
        from: &[String],
        docs: TokenStream,
        fields: &[Field],
    ) -> TokenStream {
        let d = self.def(id);
        let rt = &self.rt;
        let name = ident(&d.name);
        let has_lt = mode == Mode::View && d.lifetime;
        let (lt_a, lt_any) = (lt(has_lt), lt_anon(has_lt));
        let attrs = self.type_attrs(id, mode, docs);
        let allow_dep = self.allow_deprecated(id);
        let field_defs = fields.iter().map(|f| {
            let fdocs = Self::field_docs(f, true);
            let fattrs = self.field_attrs(id, mode, f, true);
            let fname = ident(&f.name);
            let ty = self.field_ty(mode, from, f, true);
            let dep = Self::deprecated_attr(f.deprecated.as_ref());
            quote! {
                #fdocs
                #fattrs
                #dep
                pub #fname: #ty,
            }
        });
        let some = quote!(::core::option::Option::Some);
        // A message holding itself through `Lazy` decodes recursively: inlining that call
        // into itself only grows every level's stack frame (measured on Cortex-M0).
        let inline_decode = if fields.iter().any(|f| f.lazy) {
            TokenStream::new()
        } else {
            quote!(#[inline])
        };
        let decode_body = match fields {
            [] => quote! {
                reader.message(|_| ::core::result::Result::Ok(Self {}))
            },
            [f] => {
                let fname = ident(&f.name);
                let tag = Literal::u8_unsuffixed(f.tag);
                quote! {
                    reader.message(|reader| {
                        let mut out = <Self as ::core::default::Default>::default();
                        // Tag 0 ends the message; an unknown tag stops reading (the rest of
                        // the body is skipped); a repeated tag overwrites.
                        while reader.read_tag()? == #tag {
                            out.#fname = #some(reader.read()?);
                        }
                        ::core::result::Result::Ok(out)
                    })
                }
            }
            _ => {
                let arms = fields.iter().map(|f| {
                    let fname = ident(&f.name);
                    let tag = Literal::u8_unsuffixed(f.tag);
                    quote!(#tag => out.#fname = #some(reader.read()?),)
                });
                quote! {
                    reader.message(|reader| {
                        let mut out = <Self as ::core::default::Default>::default();
                        loop {
                            match reader.read_tag()? {
                                #(#arms)*
                                // 0 ends the message; an unknown tag stops reading (the rest
                                // of the body is skipped).
                                _ => break,
                            }
                        }
                        ::core::result::Result::Ok(out)
                    })
                }
            }
        };
        let written: Vec<&Field> = fields.iter().filter(|f| f.deprecated.is_none()).collect();
        let sizes = written.iter().map(|f| {
            let fname = ident(&f.name);
            quote!(#rt::field_size(&self.#fname))
        });
        let writes = written.iter().map(|f| {
            let fname = ident(&f.name);
            let tag = Literal::u8_unsuffixed(f.tag);
            quote! {
                if let #some(v) = &self.#fname {
                    sink.write_field(#tag, v)?;
                }
            }
        });
        let skip_prefixed = self.skip_prefixed(mode);
        let defmt_impl = self.defmt_impl(id, mode, from);
        quote! {
            #attrs
            pub struct #name #lt_a {
                #(#field_defs)*
            }

            #allow_dep
            impl #rt::WireSize for #name #lt_any {
                const MIN_SIZE: usize = 5;
            }

            #allow_dep
            impl<'a> #rt::Decode<'a> for #name #lt_a {
                #inline_decode
                fn decode(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<Self, #rt::Error> {
                    #decode_body
                }
                #skip_prefixed
            }

            #allow_dep
            impl #rt::Encode for #name #lt_any {
                #[inline]
                fn encoded_size(&self) -> usize {
                    5 #(+ #sizes)*
                }
                #[inline]
                fn encode<S: #rt::Sink>(&self, sink: &mut S) -> ::core::result::Result<(), S::Error> {
                    sink.write_prefixed(
                        || #rt::Encode::encoded_size(self) - 4,
                        |sink| {
                            #(#writes)*
                            sink.write(&[0])
                        },
                    )
                }
            }

            #defmt_impl
        }
    }

    fn union(&self, id: DefId, mode: Mode, from: &[String], docs: TokenStream) -> TokenStream {
        let d = self.def(id);
        let rt = &self.rt;
        let Body::Union { branches, unknown } = &d.body else {
            return TokenStream::new();
        };
        let name = ident(&d.name);
        let has_lt = mode == Mode::View && d.lifetime;
        let (lt_a, lt_any) = (lt(has_lt), lt_anon(has_lt));
        let attrs = self.type_attrs(id, mode, docs);
        let allow_dep = self.allow_deprecated(id);
        let ok = quote!(::core::result::Result::Ok);
        let mut variants = Vec::new();
        let mut decode_arms = Vec::new();
        let mut size_arms = Vec::new();
        let mut encode_arms = Vec::new();
        for b in branches {
            let target = self.def(b.target);
            let ty = match mode {
                Mode::View => self.view_type_of(from, b.target),
                Mode::Owned => self.owned_path(from, b.target),
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
            let vdocs = Self::doc_lines(&lines);
            let vattrs = self.user_member_attrs(id, &b.src_name, self.form(id, mode));
            let v = ident(&b.name);
            let disc = Literal::u8_unsuffixed(b.discriminator);
            variants.push(quote! {
                #vdocs
                #vattrs
                #v(#ty),
            });
            decode_arms.push(quote!(#disc => #ok(Self::#v(reader.read()?)),));
            size_arms.push(quote!(Self::#v(v) => #rt::Encode::encoded_size(v),));
            encode_arms.push(quote!(Self::#v(v) => sink.write_field(#disc, v),));
        }
        let (body_ty, body_from) = match mode {
            Mode::View => (quote!(&'a [u8]), quote!(reader.take_rest())),
            Mode::Owned => (
                quote!(#rt::alloc_types::Vec<u8>),
                quote!(#rt::alloc_types::Vec::from(reader.take_rest())),
            ),
        };
        let fallback = match unknown {
            Some(u) => {
                let u = ident(u);
                variants.push(quote! {
                    /// A branch this code does not know (the union is `@forward_compatible`):
                    /// kept as read, and written back unchanged.
                    #u {
                        /// The discriminator read.
                        discriminator: u8,
                        /// The branch body, as read.
                        body: #body_ty,
                    },
                });
                size_arms.push(quote!(Self::#u { body, .. } => body.len(),));
                encode_arms.push(quote! {
                    Self::#u { discriminator, body } => {
                        sink.write(&[*discriminator])?;
                        sink.write(body)
                    }
                });
                quote!(_ => #ok(Self::#u { discriminator, body: #body_from }),)
            }
            None => {
                quote!(_ => ::core::result::Result::Err(reader.unknown_discriminator(discriminator)),)
            }
        };
        let decode = if branches.is_empty() && unknown.is_none() {
            quote!(
                reader.union(|reader, discriminator| ::core::result::Result::Err(
                    reader.unknown_discriminator(discriminator)
                ))
            )
        } else {
            quote! {
                reader.union(|reader, discriminator| match discriminator {
                    #(#decode_arms)*
                    #fallback
                })
            }
        };
        let (size, encode) = if size_arms.is_empty() {
            (quote!(match *self {}), quote!(match *self {}))
        } else {
            (
                quote!(5 + match self { #(#size_arms)* }),
                quote! {
                    sink.write_prefixed(
                        || #rt::Encode::encoded_size(self) - 4,
                        |sink| match self {
                            #(#encode_arms)*
                        },
                    )
                },
            )
        };
        let skip_prefixed = self.skip_prefixed(mode);
        let defmt_impl = self.defmt_impl(id, mode, from);
        quote! {
            #attrs
            #[allow(clippy::large_enum_variant)]
            pub enum #name #lt_a {
                #(#variants)*
            }

            #allow_dep
            impl #rt::WireSize for #name #lt_any {
                const MIN_SIZE: usize = 5;
            }

            #allow_dep
            impl<'a> #rt::Decode<'a> for #name #lt_a {
                #[inline]
                fn decode(reader: &mut #rt::Reader<'a>) -> ::core::result::Result<Self, #rt::Error> {
                    #decode
                }
                #skip_prefixed
            }

            #allow_dep
            impl #rt::Encode for #name #lt_any {
                #[inline]
                fn encoded_size(&self) -> usize {
                    #size
                }
                #[inline]
                fn encode<S: #rt::Sink>(&self, sink: &mut S) -> ::core::result::Result<(), S::Error> {
                    #encode
                }
            }

            #defmt_impl
        }
    }
}

//! One-pass reading (`Options::one_pass`): for each struct, message and union view, an enum
//! of the parts `ReadOnce::read_once` hands its callback, and the `Parts` and `ReadOnce`
//! impls (the runtime's `once` module, docs/decisions.md D47).
//!
//! Written as tokens: the output is laid out by prettyplease and rustfmt, not by the text
//! layout the other records use.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::Emitter;
use crate::GenerateError;
use crate::layout::{Code, tokens_text};
use crate::model::{Body, DefId, Field, Ty};
use crate::names::ident;

/// How a field or branch is handed to the callback.
enum Handed {
    /// Decoded (validated) with `reader.read()`: its view type.
    Value(TokenStream),
    /// A struct, message or union, as a `Record`.
    Record(TokenStream),
    /// An array of them, as `Records`.
    Records(TokenStream),
    /// A map onto them, as `Entries` (key type, value type).
    Entries(TokenStream, TokenStream),
    /// An array of arrays of them, as `Lists` (the records' type).
    Lists(TokenStream),
    /// A map onto arrays of them, as `ListEntries` (key type, the records' type).
    ListEntries(TokenStream, TokenStream),
    /// An array of maps onto them, as `Maps` (the maps' key type, the records' type).
    Maps(TokenStream, TokenStream),
    /// A map onto maps onto them, as `MapEntries` (key type, the inner maps' key type, the
    /// records' type).
    MapEntries(TokenStream, TokenStream, TokenStream),
}

impl Handed {
    /// Whether the part holds a handle (and so the reader's borrow, `'r`).
    fn is_handle(&self) -> bool {
        !matches!(self, Handed::Value(_))
    }

    /// The type of the part's payload.
    fn ty(&self, rt: &TokenStream) -> TokenStream {
        match self {
            Handed::Value(ty) => ty.clone(),
            Handed::Record(ty) => quote!(#rt::once::Record<'a, 'r, #ty>),
            Handed::Records(ty) => quote!(#rt::once::Records<'a, 'r, #ty>),
            Handed::Entries(k, v) => quote!(#rt::once::Entries<'a, 'r, #k, #v>),
            Handed::Lists(ty) => quote!(#rt::once::Lists<'a, 'r, #ty>),
            Handed::ListEntries(k, v) => quote!(#rt::once::ListEntries<'a, 'r, #k, #v>),
            Handed::Maps(k, v) => quote!(#rt::once::Maps<'a, 'r, #k, #v>),
            Handed::MapEntries(k, k2, v) => {
                quote!(#rt::once::MapEntries<'a, 'r, #k, #k2, #v>)
            }
        }
    }

    /// The expression that makes the payload from `reader` (and `slot`).
    fn make(&self) -> TokenStream {
        match self {
            Handed::Value(_) => quote!(reader.read()?),
            Handed::Record(_) => quote!(one.record(reader)),
            Handed::Records(_) => quote!(many.records(reader)?),
            Handed::Entries(..) => quote!(many.entries(reader)?),
            Handed::Lists(_) => quote!(many.lists(reader)?),
            Handed::ListEntries(..) => quote!(many.list_entries(reader)?),
            Handed::Maps(..) => quote!(many.maps(reader)?),
            Handed::MapEntries(..) => quote!(many.map_entries(reader)?),
        }
    }
}

impl Emitter<'_, '_> {
    /// Whether `ty` is a struct, message or union.
    fn is_record_ty(&self, ty: &Ty) -> bool {
        matches!(ty, Ty::Def(id) if self.def(*id).is_record())
    }

    /// The element type of `ty` when it is an array of structs, messages or unions.
    fn record_elements<'t>(&self, ty: &'t Ty) -> Option<&'t Ty> {
        match ty {
            Ty::Array(el) if self.is_record_ty(el) => Some(el),
            _ => None,
        }
    }

    /// The key and value types of `ty` when it is a map onto structs, messages or unions.
    fn record_map<'t>(&self, ty: &'t Ty) -> Option<(&'t Ty, &'t Ty)> {
        match ty {
            Ty::Map(k, v) if self.is_record_ty(v) => Some((k, v)),
            _ => None,
        }
    }

    /// How field `f` of a record in module `from` is handed out. (A field the view holds
    /// through `Lazy`, for a by-value cycle, is a record like any other here: a handle holds
    /// no value.)
    fn handed(&self, from: &[String], f: &Field) -> Handed {
        let view = |ty: &Ty| self.view_ty(from, ty);
        match &f.ty {
            ty @ Ty::Def(_) if self.is_record_ty(ty) => Handed::Record(view(ty)),
            ty if f.lazy => {
                let rt = &self.rt;
                let inner = view(ty);
                Handed::Value(quote!(#rt::Lazy<'a, #inner>))
            }
            Ty::Array(el) if self.is_record_ty(el) => Handed::Records(view(el)),
            Ty::Array(el) => match (self.record_elements(el), self.record_map(el)) {
                (Some(inner), _) => Handed::Lists(view(inner)),
                (None, Some((k, v))) => Handed::Maps(view(k), view(v)),
                (None, None) => Handed::Value(view(&f.ty)),
            },
            Ty::Map(k, v) if self.is_record_ty(v) => Handed::Entries(view(k), view(v)),
            Ty::Map(k, v) => match (self.record_elements(v), self.record_map(v)) {
                (Some(inner), _) => Handed::ListEntries(view(k), view(inner)),
                (None, Some((k2, v))) => Handed::MapEntries(view(k), view(k2), view(v)),
                (None, None) => Handed::Value(view(&f.ty)),
            },
            ty => Handed::Value(view(ty)),
        }
    }

    /// The part enum, `Parts` and `ReadOnce` of a struct, message or union view, when
    /// one-pass reading is on.
    pub(crate) fn one_pass(&self, code: &mut Code, id: DefId) -> Result<(), GenerateError> {
        if !self.opts.one_pass {
            return Ok(());
        }
        let d = self.def(id);
        let rt = &self.rt;
        let from = &d.module;
        let name = ident(&d.name);
        let part = self.part_ident(id);
        let self_ty = self.view_type_of(from, id);
        let allow = if self.touches_deprecated(id) {
            quote!(#[allow(deprecated)])
        } else {
            TokenStream::new()
        };
        // Variants: (name, docs, payload); a union's unknown branch is written apart.
        let mut variants: Vec<(Ident, String, Handed)> = Vec::new();
        let mut unknown = None;
        match &d.body {
            Body::Struct { fields, .. } | Body::Message { fields } => {
                let message = matches!(d.body, Body::Message { .. });
                for f in fields {
                    let doc = if message {
                        format!(" `{}({}): {}`", f.src_name, f.tag, f.ty_text)
                    } else {
                        format!(" `{}: {}`", f.src_name, f.ty_text)
                    };
                    let mut v = self.variant_ident(&f.name);
                    if variants.iter().any(|(o, _, _)| *o == v) {
                        v = format_ident!("{}{}", v, variants.len());
                    }
                    variants.push((v, doc, self.handed(from, f)));
                }
            }
            Body::Union {
                branches,
                unknown: u,
            } => {
                for b in branches {
                    let doc = format!(" `{}({})`", b.src_name, b.discriminator);
                    let ty = self.view_type_of(from, b.target);
                    variants.push((ident(&b.name), doc, Handed::Record(ty)));
                }
                unknown = u.as_ref().map(|u| ident(u));
            }
            _ => return Ok(()),
        }
        let handles = variants.iter().any(|(_, _, h)| h.is_handle());
        let borrows = handles
            || unknown.is_some()
            || variants
                .iter()
                .any(|(_, _, h)| tokens_text(&h.ty(rt)).contains("'a"));
        let generics = match (borrows, handles) {
            (_, true) => quote!(<'a, 'r>),
            (true, false) => quote!(<'a>),
            (false, false) => TokenStream::new(),
        };
        let arms: Vec<TokenStream> = variants
            .iter()
            .map(|(v, doc, h)| {
                let ty = h.ty(rt);
                quote!(#[doc = #doc] #v(#ty),)
            })
            .collect();
        let unknown_variant = unknown.as_ref().map(|u| {
            quote! {
                /// A branch this code does not know (the union is `@forward_compatible`).
                #u {
                    /// The discriminator read.
                    discriminator: u8,
                    /// The branch body, as read.
                    body: &'a [u8],
                },
            }
        });
        let what = match &d.body {
            Body::Union { .. } => "its branch",
            Body::Message { .. } => "its fields as they arrive",
            _ => "its fields in order",
        };
        let doc = format!(" What reading a [`{name}`] in one pass hands its callback: {what}.");
        let doc_trait = format!(" See [`ReadOnce`]({}::once::ReadOnce).", self.rt_text);
        let body = self.read_once_body(&d.body, &part, &variants, unknown.as_ref());
        let f_param = if variants.is_empty() && unknown.is_none() {
            quote!(_f)
        } else {
            quote!(mut f)
        };
        let reader_param = if variants.is_empty()
            && unknown.is_none()
            && !matches!(d.body, Body::Message { .. } | Body::Union { .. })
        {
            quote!(_reader)
        } else {
            quote!(reader)
        };
        let tokens = quote! {
            #[doc = #doc]
            #[doc = ""]
            #[doc = #doc_trait]
            #allow
            #[allow(clippy::large_enum_variant)]
            pub enum #part #generics {
                #(#arms)*
                #unknown_variant
            }

            #allow
            impl<'a, 'r> #rt::once::Parts<'a, 'r> for #self_ty {
                type Part = #part #generics;
            }

            #allow
            impl<'a> #rt::once::ReadOnce<'a> for #self_ty {
                #[inline]
                fn read_once<E, F>(
                    #reader_param: &mut #rt::Reader<'a>,
                    #f_param: F,
                ) -> ::core::result::Result<(), E>
                where
                    E: ::core::convert::From<#rt::Error>,
                    F: ::core::ops::FnMut(#rt::once::Part<'a, '_, Self>) -> ::core::result::Result<(), E>,
                {
                    #body
                }
            }
        };
        code.blank();
        code.formatted(tokens)
    }

    /// `NamePart`, or `NameReadOncePart` where the schema has a `NamePart` of its own in the
    /// same module.
    fn part_ident(&self, id: DefId) -> Ident {
        let d = self.def(id);
        let name = ident(&d.name);
        let taken = |candidate: &str| {
            self.model
                .defs
                .iter()
                .any(|o| o.module == d.module && ident(&o.name) == candidate)
        };
        let part = format!("{name}Part");
        if taken(&part) {
            format_ident!("{}ReadOncePart", name)
        } else {
            format_ident!("{}", part)
        }
    }

    /// The Rust name of a field's variant: the field name in upper camel case.
    fn variant_ident(&self, field: &str) -> Ident {
        let camel: String = field
            .trim_start_matches("r#")
            .split('_')
            .filter(|s| !s.is_empty())
            .map(|s| {
                let mut c = s.chars();
                c.next()
                    .map(|first| first.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            })
            .collect();
        ident(if camel.is_empty() { "Field" } else { &camel })
    }

    /// The body of `read_once`: the callback called from one place, so that the compiler
    /// inlines it (D47).
    fn read_once_body(
        &self,
        body: &Body,
        part: &Ident,
        variants: &[(Ident, String, Handed)],
        unknown: Option<&Ident>,
    ) -> TokenStream {
        let rt = &self.rt;
        if variants.is_empty() && unknown.is_none() {
            // Nothing to hand out: a message is read to its end, a union's discriminator
            // is unknown whatever it is.
            return match body {
                Body::Message { .. } => {
                    quote!(#rt::once::message(reader, |_, _| ::core::result::Result::Ok(false)))
                }
                Body::Union { .. } => quote! {
                    #rt::once::union(reader, |reader, discriminator| {
                        ::core::result::Result::Err(reader.unknown_discriminator(discriminator).into())
                    })
                },
                _ => quote!(::core::result::Result::Ok(())),
            };
        }
        // A slot for the record a part may hold, one for the elements or entries.
        let mut slot_decl = TokenStream::new();
        let mut finish = TokenStream::new();
        if variants
            .iter()
            .any(|(_, _, h)| matches!(h, Handed::Record(_)))
        {
            slot_decl.extend(quote!(let mut one = #rt::once::RecordSlot::new();));
            finish.extend(quote!(one.finish(reader)?;));
        }
        if variants.iter().any(|(_, _, h)| {
            matches!(
                h,
                Handed::Records(_)
                    | Handed::Entries(..)
                    | Handed::Lists(_)
                    | Handed::ListEntries(..)
                    | Handed::Maps(..)
                    | Handed::MapEntries(..)
            )
        }) {
            slot_decl.extend(quote!(let mut many = #rt::once::Slot::new();));
            finish.extend(quote!(many.finish(reader)?;));
        }
        match body {
            Body::Message { fields } => {
                let arms = fields.iter().zip(variants).map(|(f, (v, _, h))| {
                    let tag = proc_macro2::Literal::u8_unsuffixed(f.tag);
                    let make = h.make();
                    quote!(#tag => #part::#v(#make),)
                });
                quote! {
                    #rt::once::message(reader, |reader, tag| {
                        #slot_decl
                        let part = match tag {
                            #(#arms)*
                            _ => return ::core::result::Result::Ok(false),
                        };
                        f(part)?;
                        #finish
                        ::core::result::Result::Ok(true)
                    })
                }
            }
            Body::Union { branches, .. } => {
                let arms = branches.iter().zip(variants).map(|(b, (v, _, h))| {
                    let d = proc_macro2::Literal::u8_unsuffixed(b.discriminator);
                    let make = h.make();
                    quote!(#d => #part::#v(#make),)
                });
                let other = match unknown {
                    Some(u) => quote! {
                        _ => #part::#u {
                            discriminator,
                            body: reader.take_rest(),
                        },
                    },
                    None => quote! {
                        _ => {
                            return ::core::result::Result::Err(
                                reader.unknown_discriminator(discriminator).into(),
                            );
                        }
                    },
                };
                quote! {
                    #rt::once::union(reader, |reader, discriminator| {
                        #slot_decl
                        let part = match discriminator {
                            #(#arms)*
                            #other
                        };
                        f(part)?;
                        #finish
                        ::core::result::Result::Ok(())
                    })
                }
            }
            _ => match variants {
                [] => quote!(::core::result::Result::Ok(())),
                [(v, _, h)] => {
                    let make = h.make();
                    quote! {
                        #slot_decl
                        f(#part::#v(#make))?;
                        #finish
                        ::core::result::Result::Ok(())
                    }
                }
                _ => {
                    let arms = variants.iter().enumerate().map(|(i, (v, _, h))| {
                        let i = proc_macro2::Literal::usize_unsuffixed(i);
                        let make = h.make();
                        quote!(#i => #part::#v(#make),)
                    });
                    let n = proc_macro2::Literal::usize_unsuffixed(variants.len());
                    quote! {
                        for field in 0..#n {
                            #slot_decl
                            let part = match field {
                                #(#arms)*
                                _ => break,
                            };
                            f(part)?;
                            #finish
                        }
                        ::core::result::Result::Ok(())
                    }
                }
            },
        }
    }
}

//! Conversions between views and owned forms: `View::to_owned_value` and
//! `Owned::as_view`.

use proc_macro2::TokenStream;
use quote::quote;

use super::{Emitter, var};
use crate::GenerateError;
use crate::analysis::{FixedRepr, fixed_repr, ty_lifetime};
use crate::model::{Body, DefId, Field, Ty};
use crate::names::ident;

/// How an element is converted inside `.map(..)` (or applied to a value).
enum Adapter {
    /// No conversion.
    Identity,
    /// `*x` / `.copied()`.
    Deref,
    /// `path(x)` / `.map(path)`.
    Path(TokenStream),
    /// `|vN| body` / `.map(|vN| body)`; `fallible` when body is a `Result`.
    Closure {
        param: proc_macro2::Ident,
        body: TokenStream,
        fallible: bool,
    },
}

impl Adapter {
    fn fallible(&self) -> bool {
        matches!(self, Adapter::Closure { fallible: true, .. })
    }

    /// `.map(..)` (or nothing) to apply to an iterator or option.
    fn map_call(&self) -> TokenStream {
        match self {
            Adapter::Identity => TokenStream::new(),
            Adapter::Deref => quote!(.copied()),
            Adapter::Path(p) => quote!(.map(#p)),
            Adapter::Closure { param, body, .. } => quote!(.map(|#param| #body)),
        }
    }
}

impl Emitter<'_, '_> {
    /// `to_owned_value` on the view and, when possible, `as_view` on the owned form.
    pub(crate) fn conversions(
        &self,
        id: DefId,
        from: &[String],
    ) -> Result<TokenStream, GenerateError> {
        let d = self.def(id);
        let rt = &self.rt;
        let name = ident(&d.name);
        let view = self.view_path(from, id);
        let allow_dep = self.allow_deprecated(id);
        let fallible = d.owned_fallible;
        let ok = |body: TokenStream| {
            if fallible {
                quote!(::core::result::Result::Ok(#body))
            } else {
                body
            }
        };
        let try_ = |fallible: bool| {
            if fallible {
                quote!(?)
            } else {
                TokenStream::new()
            }
        };
        let (to_owned_body, as_view_body) = match &d.body {
            Body::Struct { fields, .. } | Body::Message { fields } => {
                let message = matches!(d.body, Body::Message { .. });
                let mut owned_fields = Vec::new();
                let mut view_fields = Vec::new();
                for f in fields {
                    let fname = ident(&f.name);
                    let place = quote!(self.#fname);
                    let (expr, f_fallible) = self.field_to_owned(f, message, place.clone());
                    let q = try_(f_fallible);
                    owned_fields.push(quote!(#fname: #expr #q,));
                    if d.can_view {
                        let v = self.field_as_view(f, message, place);
                        view_fields.push(quote!(#fname: #v,));
                    }
                }
                let to = ok(quote!(#name { #(#owned_fields)* }));
                let view_body = quote!(#view { #(#view_fields)* });
                (to, view_body)
            }
            Body::Union { branches, unknown } => {
                let mut to_arms = Vec::new();
                let mut view_arms = Vec::new();
                for b in branches {
                    let v = ident(&b.name);
                    let ty = Ty::Def(b.target);
                    let (expr, f_fallible) = self.to_owned_expr(&ty, quote!(v), 1);
                    let q = try_(f_fallible);
                    to_arms.push(quote!(#view::#v(v) => #name::#v(#expr #q),));
                    let ve = self.as_view_expr(&ty, quote!(v), true);
                    view_arms.push(quote!(Self::#v(v) => #view::#v(#ve),));
                }
                if let Some(u) = unknown {
                    let u = ident(u);
                    to_arms.push(quote! {
                        #view::#u { discriminator, body } => #name::#u {
                            discriminator,
                            body: #rt::alloc_types::Vec::from(body),
                        },
                    });
                    view_arms.push(quote! {
                        Self::#u { discriminator, body } => #view::#u {
                            discriminator: *discriminator,
                            body: body.as_slice(),
                        },
                    });
                }
                let to = if to_arms.is_empty() {
                    quote!(match self {})
                } else {
                    ok(quote!(match self { #(#to_arms)* }))
                };
                let view_body = if view_arms.is_empty() {
                    quote!(match *self {})
                } else {
                    quote!(match self { #(#view_arms)* })
                };
                (to, view_body)
            }
            _ => return Ok(TokenStream::new()),
        };
        let ret = if fallible {
            quote!(::core::result::Result<#name, #rt::Error>)
        } else {
            quote!(#name)
        };
        let to_doc = if fallible {
            "Copies the view into its owned form. Fails only if a `Lazy` value inside does not decode, which cannot happen for views produced by decoding."
        } else {
            "Copies the view into its owned form."
        };
        let to_doc = Self::doc_lines(&[to_doc.to_string()]);
        let as_view = d.can_view.then(|| {
            quote! {
                #allow_dep
                impl #name {
                    /// A view borrowing this value, without allocating.
                    pub fn as_view(&self) -> #view<'_> {
                        #as_view_body
                    }
                }
            }
        });
        Ok(quote! {
            #allow_dep
            impl #view<'_> {
                #to_doc
                pub fn to_owned_value(self) -> #ret {
                    #to_owned_body
                }
            }

            #as_view
        })
    }

    /// A field's conversion from `place` (a view value) to its owned form; the bool is
    /// true when the expression is a `Result`.
    fn field_to_owned(&self, f: &Field, message: bool, place: TokenStream) -> (TokenStream, bool) {
        let rt = &self.rt;
        if f.lazy {
            // Lazy<T> -> Box<T::Owned>: decode on access, then convert.
            let inner = |x: TokenStream, depth: usize| {
                let v = var(depth);
                let (conv, fallible) = self.to_owned_expr(&f.ty, quote!(#v), depth + 1);
                if fallible {
                    quote!(#x.get().and_then(|#v| #conv).map(#rt::alloc_types::Box::new))
                } else {
                    quote!(#x.get().map(|#v| #rt::alloc_types::Box::new(#conv)))
                }
            };
            if message {
                let v = var(0);
                let body = inner(quote!(#v), 1);
                return (quote!(#place.map(|#v| #body).transpose()), true);
            }
            return (inner(place, 0), true);
        }
        if message {
            let adapter = self.to_owned_adapter(&f.ty, 0);
            let call = adapter.map_call();
            if adapter.fallible() {
                (quote!(#place #call.transpose()), true)
            } else {
                (quote!(#place #call), false)
            }
        } else {
            self.to_owned_expr(&f.ty, place, 0)
        }
    }

    /// The owned form of the view value `x` of type `ty`.
    fn to_owned_expr(&self, ty: &Ty, x: TokenStream, depth: usize) -> (TokenStream, bool) {
        let rt = &self.rt;
        match ty {
            Ty::Str => (quote!(#rt::alloc_types::String::from(#x)), false),
            Ty::Array(el) if **el == Ty::U8 => (quote!(#rt::alloc_types::Vec::from(#x)), false),
            Ty::Array(el) => {
                let a = self.to_owned_adapter(el, depth + 1);
                let call = a.map_call();
                if a.fallible() {
                    (
                        quote!(#x.iter() #call.collect::<::core::result::Result<_, _>>()),
                        true,
                    )
                } else {
                    (quote!(#x.iter() #call.collect()), false)
                }
            }
            Ty::Fixed(el, n) => match fixed_repr(self.model, el, *n) {
                FixedRepr::Bytes => (quote!(*#x), false),
                FixedRepr::Inline => (x, false),
                FixedRepr::View => {
                    let a = self.to_owned_adapter(el, depth + 1);
                    let call = a.map_call();
                    let items = var(depth + 20);
                    if a.fallible() {
                        let err = var(depth + 40);
                        (
                            quote! {{
                                let mut #items = #x.iter() #call;
                                let mut #err = ::core::option::Option::None;
                                let out = ::core::array::from_fn(|_| match #items.next() {
                                    ::core::option::Option::Some(::core::result::Result::Ok(v)) => v,
                                    ::core::option::Option::Some(::core::result::Result::Err(e)) => {
                                        #err = ::core::option::Option::Some(e);
                                        ::core::default::Default::default()
                                    }
                                    ::core::option::Option::None => ::core::default::Default::default(),
                                });
                                match #err {
                                    ::core::option::Option::Some(e) => ::core::result::Result::Err(e),
                                    ::core::option::Option::None => ::core::result::Result::Ok(out),
                                }
                            }},
                            true,
                        )
                    } else {
                        (
                            quote! {{
                                let mut #items = #x.iter() #call;
                                ::core::array::from_fn(|_| #items.next().unwrap_or_default())
                            }},
                            false,
                        )
                    }
                }
            },
            Ty::Map(k, v) => {
                let ka = self.to_owned_adapter(k, depth + 1);
                let va = self.to_owned_adapter(v, depth + 1);
                if matches!((&ka, &va), (Adapter::Identity, Adapter::Identity)) {
                    return (quote!(#x.iter().collect()), false);
                }
                let kv = var(depth + 1);
                let vv = var(depth + 2);
                let (kx, _) = self.to_owned_expr(k, quote!(#kv), depth + 3);
                let (vx, vfallible) = self.to_owned_expr(v, quote!(#vv), depth + 3);
                if vfallible {
                    (
                        quote!(#x.iter().map(|(#kv, #vv)| #vx.map(|value| (#kx, value))).collect::<::core::result::Result<_, _>>()),
                        true,
                    )
                } else {
                    (
                        quote!(#x.iter().map(|(#kv, #vv)| (#kx, #vx)).collect()),
                        false,
                    )
                }
            }
            Ty::Def(d) if self.def(*d).is_record() && self.def(*d).lifetime => {
                (quote!(#x.to_owned_value()), self.def(*d).owned_fallible)
            }
            _ => (x, false),
        }
    }

    fn to_owned_adapter(&self, ty: &Ty, depth: usize) -> Adapter {
        let rt = &self.rt;
        match ty {
            Ty::Str => Adapter::Path(quote!(#rt::alloc_types::String::from)),
            Ty::Array(el) if **el == Ty::U8 => Adapter::Path(quote!(#rt::alloc_types::Vec::from)),
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::Bytes => {
                Adapter::Deref
            }
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::Inline => {
                Adapter::Identity
            }
            Ty::Array(_) | Ty::Fixed(..) | Ty::Map(..) => {
                let param = var(depth);
                let (body, fallible) = self.to_owned_expr(ty, quote!(#param), depth + 1);
                Adapter::Closure {
                    param,
                    body,
                    fallible,
                }
            }
            Ty::Def(d) if self.def(*d).is_record() && self.def(*d).lifetime => {
                let param = var(depth);
                Adapter::Closure {
                    param: param.clone(),
                    body: quote!(#param.to_owned_value()),
                    fallible: self.def(*d).owned_fallible,
                }
            }
            _ => Adapter::Identity,
        }
    }

    /// A field's view borrowed from the owned value at `place`.
    fn field_as_view(&self, f: &Field, message: bool, place: TokenStream) -> TokenStream {
        if !message {
            return self.as_view_expr(&f.ty, place, false);
        }
        match &f.ty {
            Ty::Str => quote!(#place.as_deref()),
            Ty::Array(el) if **el == Ty::U8 => quote!(#place.as_deref()),
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::Bytes => {
                quote!(#place.as_ref())
            }
            ty if self.is_copy_in_both(ty) => place,
            ty => {
                let v = var(0);
                let body = self.as_view_expr(ty, quote!(#v), true);
                quote!(#place.as_ref().map(|#v| #body))
            }
        }
    }

    /// True when the owned and view forms are the same `Copy` type.
    fn is_copy_in_both(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Str | Ty::Array(_) | Ty::Map(..) => false,
            Ty::Fixed(el, n) => fixed_repr(self.model, el, *n) == FixedRepr::Inline,
            Ty::Def(d) => !self.def(*d).lifetime,
            _ => true,
        }
    }

    /// The view of owned value `x` (a place when `is_ref` is false, a reference otherwise).
    fn as_view_expr(&self, ty: &Ty, x: TokenStream, is_ref: bool) -> TokenStream {
        let rt = &self.rt;
        let borrow = if is_ref { x.clone() } else { quote!(&#x) };
        match ty {
            Ty::Str => quote!(#x.as_str()),
            Ty::Array(el) if **el == Ty::U8 => quote!(#x.as_slice()),
            Ty::Array(el) if !ty_lifetime(self.model, el) => {
                quote!(#rt::Array::from_slice(#borrow))
            }
            Ty::Fixed(el, n) => match fixed_repr(self.model, el, *n) {
                FixedRepr::Bytes => borrow,
                FixedRepr::Inline => {
                    if is_ref {
                        quote!(*#x)
                    } else {
                        x
                    }
                }
                FixedRepr::View => quote!(#rt::FixedArray::from_array(#borrow)),
            },
            Ty::Map(..) => quote!(#rt::Map::from_slice(#borrow)),
            Ty::Def(d) if self.def(*d).lifetime => quote!(#x.as_view()),
            _ => {
                if is_ref {
                    quote!(*#x)
                } else {
                    x
                }
            }
        }
    }
}

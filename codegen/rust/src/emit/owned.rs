//! Conversions between views and owned forms: `View::to_owned_value` and
//! `Owned::as_view`, the runtime's `ToOwnedValue`/`AsView` pair, and `Lend` (which lets
//! collections of owned values lend views of their elements).

use proc_macro2::TokenStream;
use quote::quote;

use super::{Emitter, var};
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
    /// `|vN| body` / `.map(|vN| body)`.
    Closure {
        param: proc_macro2::Ident,
        body: TokenStream,
    },
}

impl Adapter {
    /// `.map(..)` (or nothing) to apply to an iterator or option.
    fn map_call(&self) -> TokenStream {
        match self {
            Adapter::Identity => TokenStream::new(),
            Adapter::Deref => quote!(.copied()),
            Adapter::Path(p) => quote!(.map(#p)),
            Adapter::Closure { param, body } => quote!(.map(|#param| #body)),
        }
    }
}

impl Emitter<'_, '_> {
    /// `to_owned_value` on the view, `as_view` on the owned form, and the runtime's
    /// `ToOwnedValue`, `AsView` and `Lend` impls for the pair.
    pub(crate) fn conversions(&self, id: DefId, from: &[String]) -> TokenStream {
        let d = self.def(id);
        let rt = &self.rt;
        let name = ident(&d.name);
        let view = self.view_path(from, id);
        let allow_dep = self.allow_deprecated(id);
        let (to_owned_body, as_view_body) = match &d.body {
            Body::Struct { fields, .. } | Body::Message { fields } => {
                let message = matches!(d.body, Body::Message { .. });
                let mut owned_fields = Vec::new();
                let mut view_fields = Vec::new();
                for f in fields {
                    let fname = ident(&f.name);
                    let place = quote!(self.#fname);
                    let expr = self.field_to_owned(f, message, place.clone());
                    owned_fields.push(quote!(#fname: #expr,));
                    let v = self.field_as_view(f, message, place);
                    view_fields.push(quote!(#fname: #v,));
                }
                (
                    quote!(#name { #(#owned_fields)* }),
                    quote!(#view { #(#view_fields)* }),
                )
            }
            Body::Union { branches, unknown } => {
                let mut to_arms = Vec::new();
                let mut view_arms = Vec::new();
                for b in branches {
                    let v = ident(&b.name);
                    let ty = Ty::Def(b.target);
                    let expr = self.to_owned_expr(&ty, quote!(v), 1);
                    to_arms.push(quote!(#view::#v(v) => #name::#v(#expr),));
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
                    quote!(match self { #(#to_arms)* })
                };
                let view_body = if view_arms.is_empty() {
                    quote!(match *self {})
                } else {
                    quote!(match self { #(#view_arms)* })
                };
                (to, view_body)
            }
            _ => return TokenStream::new(),
        };
        quote! {
            #allow_dep
            impl #view<'_> {
                /// Copies the view into its owned form.
                pub fn to_owned_value(self) -> #name {
                    #to_owned_body
                }
            }

            #allow_dep
            impl #name {
                /// A view borrowing this value: nothing is copied or encoded.
                pub fn as_view(&self) -> #view<'_> {
                    #as_view_body
                }
            }

            #allow_dep
            impl #rt::ToOwnedValue for #view<'_> {
                type Owned = #name;
                fn to_owned_value(&self) -> #name {
                    #view::to_owned_value(*self)
                }
            }

            #allow_dep
            impl #rt::AsView for #name {
                type View<'a> = #view<'a>;
                fn as_view(&self) -> #view<'_> {
                    #name::as_view(self)
                }
            }

            #allow_dep
            impl<'a> #rt::Lend<'a, #view<'a>> for #name {
                fn lend(&'a self) -> #view<'a> {
                    #name::as_view(self)
                }
            }
        }
    }

    /// `ToOwnedValue` and `AsView` for a type that is its own owned form (an enum, flags, a
    /// record without borrowed data), reached through its alias `name` in the owned tree.
    pub(crate) fn same_conversions(&self, id: DefId) -> TokenStream {
        let rt = &self.rt;
        let name = ident(&self.def(id).name);
        let allow_dep = self.allow_deprecated(id);
        quote! {
            #allow_dep
            impl #rt::ToOwnedValue for #name {
                type Owned = #name;
                fn to_owned_value(&self) -> #name {
                    *self
                }
            }

            #allow_dep
            impl #rt::AsView for #name {
                type View<'a> = #name;
                fn as_view(&self) -> #name {
                    *self
                }
            }
        }
    }

    /// A field's conversion from `place` (a view value) to its owned form.
    fn field_to_owned(&self, f: &Field, message: bool, place: TokenStream) -> TokenStream {
        let rt = &self.rt;
        if f.lazy {
            // Lazy<T> -> Box<T::Owned>: decode on access, then convert.
            let boxed = |x: TokenStream, depth: usize| {
                let conv = self.to_owned_expr(&f.ty, quote!(#x.get()), depth + 1);
                quote!(#rt::alloc_types::Box::new(#conv))
            };
            if message {
                let v = var(0);
                let body = boxed(quote!(#v), 1);
                return quote!(#place.map(|#v| #body));
            }
            return boxed(place, 0);
        }
        if message {
            let call = self.to_owned_adapter(&f.ty, 0).map_call();
            quote!(#place #call)
        } else {
            self.to_owned_expr(&f.ty, place, 0)
        }
    }

    /// The owned form of the view value `x` of type `ty`.
    fn to_owned_expr(&self, ty: &Ty, x: TokenStream, depth: usize) -> TokenStream {
        let rt = &self.rt;
        match ty {
            Ty::Str => quote!(#rt::alloc_types::String::from(#x)),
            Ty::Array(el) if **el == Ty::U8 => quote!(#rt::alloc_types::Vec::from(#x)),
            Ty::Array(el) => {
                let call = self.to_owned_adapter(el, depth + 1).map_call();
                quote!(#x.iter() #call.collect())
            }
            Ty::Fixed(el, n) => match fixed_repr(self.model, el, *n) {
                FixedRepr::Bytes => quote!(*#x),
                FixedRepr::Inline => x,
                FixedRepr::View => {
                    let call = self.to_owned_adapter(el, depth + 1).map_call();
                    let items = var(depth + 20);
                    quote! {{
                        let mut #items = #x.iter() #call;
                        ::core::array::from_fn(|_| #items.next().unwrap_or_default())
                    }}
                }
            },
            Ty::Map(k, v) => {
                let ka = self.to_owned_adapter(k, depth + 1);
                let va = self.to_owned_adapter(v, depth + 1);
                if matches!((&ka, &va), (Adapter::Identity, Adapter::Identity)) {
                    return quote!(#x.iter().collect());
                }
                let kv = var(depth + 1);
                let vv = var(depth + 2);
                let kx = self.to_owned_expr(k, quote!(#kv), depth + 3);
                let vx = self.to_owned_expr(v, quote!(#vv), depth + 3);
                quote!(#x.iter().map(|(#kv, #vv)| (#kx, #vx)).collect())
            }
            Ty::Def(d) if self.def(*d).is_record() && self.def(*d).lifetime => {
                quote!(#x.to_owned_value())
            }
            _ => x,
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
                let body = self.to_owned_expr(ty, quote!(#param), depth + 1);
                Adapter::Closure { param, body }
            }
            Ty::Def(d) if self.def(*d).is_record() && self.def(*d).lifetime => {
                let param = var(depth);
                Adapter::Closure {
                    param: param.clone(),
                    body: quote!(#param.to_owned_value()),
                }
            }
            _ => Adapter::Identity,
        }
    }

    /// A field's view borrowed from the owned value at `place`.
    fn field_as_view(&self, f: &Field, message: bool, place: TokenStream) -> TokenStream {
        let rt = &self.rt;
        if f.lazy {
            // Box<T::Owned> -> Lazy<T>, lent by the boxed value.
            return if message {
                quote!(#place.as_deref().map(#rt::Lazy::from_owned))
            } else {
                quote!(#rt::Lazy::from_owned(&*#place))
            };
        }
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
                // `from_owned` takes the reference as it is: pass the function itself.
                if let Some(lender) = self.lender(ty) {
                    return quote!(#place.as_ref().map(#lender));
                }
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

    /// `Array::from_owned`, `FixedArray::from_owned`, `Map::from_btree_map` or
    /// `Map::from_pairs` when the view of `ty` is lent by its owned collection (elements, keys
    /// or values that borrow, or a `BTreeMap`), rather than a slice the view can point at.
    fn lender(&self, ty: &Ty) -> Option<TokenStream> {
        let rt = &self.rt;
        let lt = |t: &Ty| ty_lifetime(self.model, t);
        match ty {
            Ty::Array(el) if **el != Ty::U8 && lt(el) => Some(quote!(#rt::Array::from_owned)),
            Ty::Fixed(el, n) if fixed_repr(self.model, el, *n) == FixedRepr::View && lt(el) => {
                Some(quote!(#rt::FixedArray::from_owned))
            }
            Ty::Map(..) if self.opts.owned_map == crate::OwnedMap::BTreeMap => {
                Some(quote!(#rt::Map::from_btree_map))
            }
            Ty::Map(k, v) if lt(k) || lt(v) => Some(quote!(#rt::Map::from_pairs)),
            _ => None,
        }
    }

    /// The view of owned value `x` (a place when `is_ref` is false, a reference otherwise).
    fn as_view_expr(&self, ty: &Ty, x: TokenStream, is_ref: bool) -> TokenStream {
        let rt = &self.rt;
        let borrow = if is_ref { x.clone() } else { quote!(&#x) };
        if let Some(lender) = self.lender(ty) {
            return quote!(#lender(#borrow));
        }
        match ty {
            Ty::Str => quote!(#x.as_str()),
            Ty::Array(el) if **el == Ty::U8 => quote!(#x.as_slice()),
            Ty::Array(_) => quote!(#rt::Array::from_slice(#borrow)),
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

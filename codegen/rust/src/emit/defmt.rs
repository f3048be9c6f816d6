//! `defmt::Format` for views. Records get written-out impls rather than
//! `#[derive(defmt::Format)]`: the derive bounds every field type, which makes the trait
//! requirement of recursive types (a union holding an array of itself, as in `bebop/json.bop`)
//! cyclic, and it cannot be told to allow deprecated items. `float16`/`bfloat16` values,
//! which the `half` crate does not make formattable, are printed as `f32`.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::records::Mode;
use super::{Emitter, lt_anon, var};
use crate::analysis::ty_holds_half;
use crate::layout::{Code, Meta};
use crate::model::{Body, DefId, Field, Ty};
use crate::names::ident;

impl Emitter<'_, '_> {
    pub(crate) fn defmt_impl(&self, id: DefId, mode: Mode, _from: &[String]) -> TokenStream {
        let d = self.def(id);
        let Some(pred) = &self.defmt else {
            return TokenStream::new();
        };
        if mode != Mode::View {
            return TokenStream::new();
        }
        let name = ident(&d.name);
        let lt = lt_anon(d.lifetime);
        let allow_dep = self.allow_deprecated(id);
        if let Body::Union { branches, unknown } = &d.body {
            let mut arms: Vec<TokenStream> = branches
                .iter()
                .map(|b| {
                    let v = ident(&b.name);
                    let open = format!("{}(", b.name);
                    quote! {
                        Self::#v(v) => {
                            ::defmt::write!(f, #open);
                            ::defmt::write!(f, "{}", v);
                            ::defmt::write!(f, ")");
                        }
                    }
                })
                .collect();
            if let Some(u) = unknown {
                let uv = ident(u);
                let text = format!("{u} {{{{ discriminator: {{}}, body: {{}} }}}}");
                arms.push(quote! {
                    Self::#uv { discriminator, body } => ::defmt::write!(f, #text, discriminator, body),
                });
            }
            let body = if arms.is_empty() {
                quote!(match *self {})
            } else {
                quote!(match self { #(#arms)* })
            };
            return quote! {
                #[cfg(#pred)]
                #allow_dep
                impl ::defmt::Format for #name #lt {
                    fn format(&self, f: ::defmt::Formatter<'_>) {
                        #body
                    }
                }
            };
        }
        let message = matches!(d.body, Body::Message { .. });
        let fields: &[Field] = d.fields();
        let simple = fields.iter().all(|f| f.lazy || !ty_holds_half(&f.ty));
        if simple {
            // One write: `Name { a: {}, b: {} }`.
            let list: Vec<String> = fields.iter().map(|f| format!("{}: {{}}", f.name)).collect();
            let text = if list.is_empty() {
                format!("{} {{{{}}}}", d.name)
            } else {
                format!("{} {{{{ {} }}}}", d.name, list.join(", "))
            };
            let args = fields.iter().map(|f| {
                let fname = ident(&f.name);
                quote!(self.#fname)
            });
            return quote! {
                #[cfg(#pred)]
                #allow_dep
                impl ::defmt::Format for #name #lt {
                    fn format(&self, f: ::defmt::Formatter<'_>) {
                        ::defmt::write!(f, #text #(, #args)*);
                    }
                }
            };
        }
        let mut body = Vec::new();
        let open = format!("{} {{{{ ", d.name);
        body.push(quote!(::defmt::write!(f, #open);));
        for (i, fd) in fields.iter().enumerate() {
            let label = if i == 0 {
                format!("{}: ", fd.name)
            } else {
                format!(", {}: ", fd.name)
            };
            body.push(quote!(::defmt::write!(f, #label);));
            let fname = ident(&fd.name);
            let value = quote!(self.#fname);
            let inner = if fd.lazy || !ty_holds_half(&fd.ty) {
                quote!(::defmt::write!(f, "{}", #value);)
            } else if message {
                let v = var(0);
                let fmt = self.defmt_value(&fd.ty, quote!(#v), 1);
                quote! {
                    match #value {
                        ::core::option::Option::Some(#v) => { #fmt }
                        ::core::option::Option::None => ::defmt::write!(f, "None"),
                    }
                }
            } else {
                self.defmt_value(&fd.ty, value, 1)
            };
            body.push(inner);
        }
        body.push(quote!(::defmt::write!(f, " }}");));
        quote! {
            #[cfg(#pred)]
            #allow_dep
            impl ::defmt::Format for #name #lt {
                fn format(&self, f: ::defmt::Formatter<'_>) {
                    #(#body)*
                }
            }
        }
    }

    /// The written-out `defmt::Format` impl of an enum or flags type that touches deprecated
    /// items (others derive it, see [`Emitter::defmt_derive_line`]), preceded by an empty
    /// line.
    pub(crate) fn defmt_enum_impl(&self, code: &mut Code, id: DefId) {
        let Some(pred) = &self.defmt else {
            return;
        };
        if !self.touches_deprecated(id) {
            return;
        }
        let d = self.def(id);
        code.blank();
        code.attr("cfg", &Meta::parse_list(pred));
        code.line("#[allow(deprecated)]");
        code.impl_open("impl ::defmt::Format", &ident(&d.name).to_string());
        code.open("fn format(&self, f: ::defmt::Formatter<'_>)");
        match &d.body {
            Body::Enum {
                members,
                unrecognized,
                ..
            } => {
                code.open("match self");
                for m in members.iter().filter(|m| m.alias_of.is_none()) {
                    code.arm_call(
                        &format!("Self::{}", ident(&m.name)),
                        "::defmt::write!",
                        &["f", &Literal::string(&m.name).to_string()],
                    );
                }
                if let Some(u) = unrecognized {
                    code.arm_call(
                        &format!("Self::{}(v)", ident(u)),
                        "::defmt::write!",
                        &[
                            "f",
                            &Literal::string(&format!("{u}({{}})")).to_string(),
                            "v",
                        ],
                    );
                }
                code.close();
            }
            _ => {
                let text = Literal::string(&format!("{}({{}})", d.name)).to_string();
                code.call("", "::defmt::write!", &["f", &text, "self.bits"], "");
            }
        }
        code.close();
        code.close();
    }

    /// Statements formatting the value `x` (of a type holding half floats) into `f`.
    fn defmt_value(&self, ty: &Ty, x: TokenStream, depth: usize) -> TokenStream {
        match ty {
            Ty::F16 | Ty::BF16 => quote!(::defmt::write!(f, "{}", #x.to_f32());),
            Ty::Array(el) | Ty::Fixed(el, _) if ty_holds_half(el) => {
                let i = var(depth);
                let item = var(depth + 1);
                let inner = self.defmt_value(el, quote!(#item), depth + 2);
                // Rust arrays iterate by reference; views by value.
                let iter = match ty {
                    Ty::Fixed(el, n)
                        if crate::analysis::fixed_repr(self.model, el, *n)
                            == crate::analysis::FixedRepr::Inline =>
                    {
                        quote!(#x.iter().copied())
                    }
                    _ => quote!(#x.iter()),
                };
                quote! {
                    ::defmt::write!(f, "[");
                    for (#i, #item) in #iter.enumerate() {
                        if #i > 0 {
                            ::defmt::write!(f, ", ");
                        }
                        #inner
                    }
                    ::defmt::write!(f, "]");
                }
            }
            Ty::Map(k, v) if ty_holds_half(k) || ty_holds_half(v) => {
                let i = var(depth);
                let kv = var(depth + 1);
                let vv = var(depth + 2);
                let kf = self.defmt_value(k, quote!(#kv), depth + 3);
                let vf = self.defmt_value(v, quote!(#vv), depth + 3);
                quote! {
                    ::defmt::write!(f, "{{");
                    for (#i, (#kv, #vv)) in #x.iter().enumerate() {
                        if #i > 0 {
                            ::defmt::write!(f, ", ");
                        }
                        #kf
                        ::defmt::write!(f, ": ");
                        #vf
                    }
                    ::defmt::write!(f, "}}");
                }
            }
            _ => quote!(::defmt::write!(f, "{}", #x);),
        }
    }
}

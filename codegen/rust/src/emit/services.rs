//! Services: a module per service with method metadata, compile-time method ids and
//! request/response type aliases.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::Emitter;
use crate::GenerateError;
use crate::model::{Body, DefId};
use crate::names::ident;
use bebop_descriptor::MethodType;

impl Emitter<'_, '_> {
    pub(crate) fn service(&self, id: DefId) -> Result<TokenStream, GenerateError> {
        let d = self.def(id);
        let Body::Service { methods } = &d.body else {
            return Ok(TokenStream::new());
        };
        let rt = &self.rt;
        let module = ident(&d.name);
        let mut inside = d.module.clone();
        inside.push(d.name.clone());
        let service_name = d.src_name.as_str();
        let mut lines = self.def_doc_lines(id);
        lines.push(String::new());
        lines.push("Method metadata for the RPC layers: ids are computed at compile time.".into());
        let docs = Self::doc_lines(&lines);
        let deprecated = Self::deprecated_attr(d.deprecated.as_ref());
        let allow_dep = self.allow_deprecated(id);
        let name_doc =
            Self::doc_lines(&[format!("The service's name as declared: `{service_name}`.")]);
        let mut items = Vec::new();
        let mut consts = Vec::new();
        for m in methods {
            let c = ident(&m.const_name);
            let kind = match m.method_type {
                MethodType::Unary => quote!(Unary),
                MethodType::ServerStream => quote!(ServerStream),
                MethodType::ClientStream => quote!(ClientStream),
                MethodType::DuplexStream => quote!(DuplexStream),
                MethodType::Unknown => {
                    return Err(GenerateError::invalid(
                        format!("{}.{}", d.fqn, m.src_name),
                        "method of unknown streaming type",
                    ));
                }
            };
            let expected = bebop::method_id(&format!("/{service_name}/{}", m.src_name));
            if let Some(id) = m.id {
                if id != expected {
                    return Err(GenerateError::invalid(
                        format!("{}.{}", d.fqn, m.src_name),
                        format!(
                            "the descriptor's method id {id:#010x} is not method_id(\"/{service_name}/{}\") = {expected:#010x}",
                            m.src_name
                        ),
                    ));
                }
            }
            let stream = |s: bool| if s { "stream " } else { "" };
            let (req_stream, res_stream) = match m.method_type {
                MethodType::ServerStream => (false, true),
                MethodType::ClientStream => (true, false),
                MethodType::DuplexStream => (true, true),
                _ => (false, false),
            };
            let mut mlines = Self::schema_doc(m.doc.as_deref());
            if !mlines.is_empty() {
                mlines.push(String::new());
            }
            mlines.push(format!(
                "`{}({}{}): {}{}`, id `{expected:#010x}`.",
                m.src_name,
                stream(req_stream),
                m.request_text,
                stream(res_stream),
                m.response_text
            ));
            let mdocs = Self::doc_lines(&mlines);
            let mdep = Self::deprecated_attr(m.deprecated.as_ref());
            let method_name = m.src_name.as_str();
            let id_lit = hex_u32(expected);
            items.push(quote! {
                #mdocs
                #mdep
                pub const #c: #rt::MethodInfo =
                    #rt::MethodInfo::new(#service_name, #method_name, #rt::MethodKind::#kind);
                #[allow(deprecated)]
                const _: () = ::core::assert!(#c.id == #id_lit);
            });
            for (suffix, alias, ty, text) in [
                ("Request", &m.request_alias, &m.request, &m.request_text),
                ("Response", &m.response_alias, &m.response, &m.response_text),
            ] {
                let alias = ident(alias);
                let target = self.view_ty(&inside, ty);
                let has_lt = crate::analysis::ty_lifetime(self.model, ty);
                let generics = if has_lt {
                    quote!(<'a>)
                } else {
                    TokenStream::new()
                };
                let doc = Self::doc_lines(&[format!(
                    "The {} type of `{}`: `{text}`.",
                    suffix.to_lowercase(),
                    m.src_name
                )]);
                items.push(quote! {
                    #doc
                    #allow_dep
                    pub type #alias #generics = #target;
                });
            }
            consts.push(c);
        }
        let methods_doc = Self::doc_lines(&["Every method, in declaration order.".to_string()]);
        let list_allow = methods
            .iter()
            .any(|m| m.deprecated.is_some())
            .then(|| quote!(#[allow(deprecated)]));
        Ok(quote! {
            #docs
            #deprecated
            pub mod #module {
                #name_doc
                pub const NAME: &str = #service_name;

                #(#items)*

                #methods_doc
                #list_allow
                pub const METHODS: &[#rt::MethodInfo] = &[#(#consts),*];
            }
        })
    }
}

fn hex_u32(v: u32) -> TokenStream {
    let s = format!("0x{:04x}_{:04x}", v >> 16, v & 0xFFFF);
    s.parse().unwrap_or_else(|_| {
        let l = Literal::u32_unsuffixed(v);
        quote!(#l)
    })
}

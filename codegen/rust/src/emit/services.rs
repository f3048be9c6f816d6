//! Services: a module per service with method metadata, compile-time method ids,
//! request/response type aliases, the discovery record, a blocking `Handler` trait with the
//! `Server` that routes calls to it (no heap), and a typed blocking `Client`.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::Emitter;
use crate::GenerateError;
use crate::model::{Body, DefId, Method};
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
        let mut infos = Vec::new();
        let mut handler_fns = Vec::new();
        let mut arms = Vec::new();
        let mut client_fns = Vec::new();
        let mut owned_client_fns = Vec::new();
        let mut async_parts = Vec::new();
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
            let expected = bebop_runtime::method_id(&format!("/{service_name}/{}", m.src_name));
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
            let fn_name = ident(&m.fn_name);
            let req_alias = ident(&m.request_alias);
            let res_alias = ident(&m.response_alias);
            let req_lt = crate::analysis::ty_lifetime(self.model, &m.request);
            let res_lt = crate::analysis::ty_lifetime(self.model, &m.response);
            let req_a = if req_lt {
                quote!(#req_alias<'a>)
            } else {
                quote!(#req_alias)
            };
            let req_anon = if req_lt {
                quote!(#req_alias<'_>)
            } else {
                quote!(#req_alias)
            };
            let res_a = if res_lt {
                quote!(#res_alias<'a>)
            } else {
                quote!(#res_alias)
            };
            let res_s = if res_lt {
                quote!(#res_alias<'s>)
            } else {
                quote!(#res_alias)
            };
            let res_anon = if res_lt {
                quote!(#res_alias<'_>)
            } else {
                quote!(#res_alias)
            };
            let method_type = match m.method_type {
                MethodType::Unary => quote!(Unary),
                MethodType::ServerStream => quote!(ServerStream),
                MethodType::ClientStream => quote!(ClientStream),
                _ => quote!(DuplexStream),
            };
            let req_url = format!("type.bebop.sh/{}", m.request_text);
            let res_url = format!("type.bebop.sh/{}", m.response_text);
            infos.push(quote! {
                #rt::rpc::types::MethodInfo {
                    name: #method_name,
                    method_id: #id_lit,
                    method_type: #rt::rpc::MethodType::#method_type,
                    request_type_url: #req_url,
                    response_type_url: #res_url,
                }
            });
            let hdoc = Self::doc_lines(&[format!("Handles `{}`.", m.src_name)]);
            let cdoc = Self::doc_lines(&[format!("Calls `{}`.", m.src_name)]);
            let odoc = Self::doc_lines(&[format!("Calls `{}` with owned types.", m.src_name)]);
            let owned_fn = ident(&m.owned_fn_name);
            let owned_req = self.owned_ty(&inside, &m.request);
            let owned_res = self.owned_ty(&inside, &m.response);
            match m.method_type {
                MethodType::Unary => {
                    let (a, self_a) = if res_lt {
                        (quote!(<'a>), quote!(&'a mut self))
                    } else {
                        (TokenStream::new(), quote!(&mut self))
                    };
                    let req_a = if res_lt {
                        req_a.clone()
                    } else {
                        req_anon.clone()
                    };
                    handler_fns.push(quote! {
                        #hdoc
                        fn #fn_name #a(
                            #self_a,
                            ctx: &#rt::rpc::CallContext<'_>,
                            request: #req_a,
                        ) -> ::core::result::Result<#res_a, #rt::rpc::Status>;
                    });
                    arms.push(quote! {
                        #c => {
                            let (request, ctx, reply) = call.unary::<#req_anon>()?;
                            let response = self.0.#fn_name(&ctx, request)?;
                            reply.send(&response)
                        }
                    });
                    let (s_param, self_s) = if res_lt {
                        (quote!(<'s>), quote!(&'s mut self))
                    } else {
                        (TokenStream::new(), quote!(&mut self))
                    };
                    client_fns.push(quote! {
                        #cdoc
                        pub fn #fn_name #s_param(
                            #self_s,
                            request: &#req_anon,
                            options: &#rt::rpc::CallOptions<'_>,
                        ) -> ::core::result::Result<#res_s, #rt::rpc::ClientError> {
                            self.0.unary(#c.id, request, options)
                        }
                    });
                    owned_client_fns.push(quote! {
                        #odoc
                        pub fn #owned_fn(
                            &mut self,
                            request: &#owned_req,
                            options: &#rt::rpc::CallOptions<'_>,
                        ) -> ::core::result::Result<#owned_res, #rt::rpc::ClientError> {
                            self.0.unary(#c.id, request, options)
                        }
                    });
                }
                MethodType::ServerStream => {
                    let hdoc_more = Self::doc_lines(&[
                        format!("Handles `{}`.", m.src_name),
                        String::new(),
                        format!(
                            "Send each `{res_url}` on `responses`; the server ends the stream when this returns."
                        ),
                    ]);
                    handler_fns.push(quote! {
                        #hdoc_more
                        fn #fn_name(
                            &mut self,
                            ctx: &#rt::rpc::CallContext<'_>,
                            request: #req_anon,
                            responses: &mut #rt::rpc::ServerStream<'_>,
                        ) -> ::core::result::Result<(), #rt::rpc::Status>;
                    });
                    arms.push(quote! {
                        #c => {
                            let (request, ctx, mut responses) = call.server_stream::<#req_anon>()?;
                            self.0.#fn_name(&ctx, request, &mut responses)?;
                            responses.finish()
                        }
                    });
                    let sdoc = Self::doc_lines(&[format!(
                        "Calls `{}`; read the responses (`{}`) from the returned stream.",
                        m.src_name, m.response_text
                    )]);
                    client_fns.push(quote! {
                        #sdoc
                        pub fn #fn_name(
                            &mut self,
                            request: &#req_anon,
                            options: &#rt::rpc::CallOptions<'_>,
                        ) -> ::core::result::Result<#rt::rpc::ServerStreamCall<'_, C, B>, #rt::rpc::ClientError> {
                            self.0.server_stream(#c.id, request, options)
                        }
                    });
                }
                MethodType::ClientStream => {
                    let (a, self_a) = if res_lt {
                        (quote!(<'a>), quote!(&'a mut self))
                    } else {
                        (TokenStream::new(), quote!(&mut self))
                    };
                    let hdoc_more = Self::doc_lines(&[
                        format!("Handles `{}`.", m.src_name),
                        String::new(),
                        format!("Read each `{req_url}` from `requests` with `requests.next()`."),
                    ]);
                    handler_fns.push(quote! {
                        #hdoc_more
                        fn #fn_name #a(
                            #self_a,
                            ctx: &#rt::rpc::CallContext<'_>,
                            requests: &mut #rt::rpc::RequestStream<'_>,
                        ) -> ::core::result::Result<#res_a, #rt::rpc::Status>;
                    });
                    arms.push(quote! {
                        #c => {
                            let (ctx, mut requests) = call.client_stream();
                            let response = self.0.#fn_name(&ctx, &mut requests)?;
                            requests.into_reply()?.send(&response)
                        }
                    });
                    let sdoc = Self::doc_lines(&[format!(
                        "Calls `{}`: send the requests (`{}`) on the returned call, then `finish` it for the response.",
                        m.src_name, m.request_text
                    )]);
                    client_fns.push(quote! {
                        #sdoc
                        pub fn #fn_name(
                            &mut self,
                            options: &#rt::rpc::CallOptions<'_>,
                        ) -> ::core::result::Result<#rt::rpc::ClientStreamCall<'_, C, B>, #rt::rpc::ClientError> {
                            self.0.client_stream(#c.id, options)
                        }
                    });
                    let _ = &res_anon;
                }
                _ => {
                    let hdoc_more = Self::doc_lines(&[
                        format!("Handles `{}`.", m.src_name),
                        String::new(),
                        format!(
                            "Read each `{req_url}` with `stream.next()` and send `{res_url}` responses; the server ends the stream when this returns."
                        ),
                    ]);
                    handler_fns.push(quote! {
                        #hdoc_more
                        fn #fn_name(
                            &mut self,
                            ctx: &#rt::rpc::CallContext<'_>,
                            stream: &mut #rt::rpc::DuplexStream<'_>,
                        ) -> ::core::result::Result<(), #rt::rpc::Status>;
                    });
                    arms.push(quote! {
                        #c => {
                            let (ctx, mut stream) = call.duplex();
                            self.0.#fn_name(&ctx, &mut stream)?;
                            stream.finish()
                        }
                    });
                    let sdoc = Self::doc_lines(&[format!(
                        "Calls `{}`: send requests and read responses on the returned call.",
                        m.src_name
                    )]);
                    client_fns.push(quote! {
                        #sdoc
                        pub fn #fn_name(
                            &mut self,
                            options: &#rt::rpc::CallOptions<'_>,
                        ) -> ::core::result::Result<#rt::rpc::DuplexCall<'_, C, B>, #rt::rpc::ClientError> {
                            self.0.duplex(#c.id, options)
                        }
                    });
                }
            }
            if let Some((ar, _)) = &self.async_rpc {
                let owned_req = self.owned_ty(&inside, &m.request);
                let owned_res = self.owned_ty(&inside, &m.response);
                async_parts.push(async_method(ar, m, &c, &fn_name, &owned_req, &owned_res));
            }
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
        // The owned and async clients name the request and response types themselves (not
        // through the aliases), so they also need the allowance when those are deprecated.
        let types_allow =
            (list_allow.is_some() || !allow_dep.is_empty()).then(|| quote!(#[allow(deprecated)]));
        let owned_client = match (&self.opts.owned_types, &self.owned_cfg) {
            (false, _) => TokenStream::new(),
            (true, cfg) if !owned_client_fns.is_empty() => {
                let cfg = cfg.as_ref().map(|p| quote!(#[cfg(#p)]));
                quote! {
                    #cfg
                    #types_allow
                    impl<C: #rt::rpc::Channel, B: ::core::convert::AsMut<[u8]>> Client<C, B> {
                        #(#owned_client_fns)*
                    }
                }
            }
            _ => TokenStream::new(),
        };
        let handler_doc = Self::doc_lines(&[
            format!("The methods of `{service_name}`, to be implemented by the application and served by [`Server`]."),
            String::new(),
            "Blocking and heap-free: requests are views into the server's receive buffer, responses are encoded into its transmit buffer. An `Err` reaches the client as an `ERROR` frame with its status.".to_string(),
        ]);
        let server_doc = Self::doc_lines(&[format!(
            "Serves `{service_name}` with a [`Handler`]: pass it to `Server::serve`; a tuple of such servers serves several services (as a service that mixes in another with `with` is served)."
        )]);
        let client_doc = Self::doc_lines(&[format!(
            "A typed blocking client of `{service_name}` over any channel; unary responses are views into the client's receive buffer."
        )]);
        let info_doc =
            Self::doc_lines(&["The discovery record of this service (method 0).".to_string()]);
        let async_items = self.async_service(service_name, async_parts, types_allow);
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

                #info_doc
                pub const INFO: #rt::rpc::ServiceInfo<'static> = #rt::rpc::ServiceInfo {
                    name: #service_name,
                    methods: #rt::Array::from_slice(&[#(#infos),*]),
                };

                #handler_doc
                #list_allow
                pub trait Handler {
                    #(#handler_fns)*
                }

                #server_doc
                #[derive(Debug, Default)]
                pub struct Server<H>(pub H);

                #list_allow
                impl<H: Handler> #rt::rpc::Service for Server<H> {
                    fn describe(&self, f: &mut dyn FnMut(&#rt::rpc::ServiceInfo<'static>)) {
                        f(&INFO)
                    }

                    fn method(&self, id: u32) -> ::core::option::Option<#rt::MethodInfo> {
                        METHODS.iter().find(|m| m.id == id).copied()
                    }

                    fn dispatch(
                        &mut self,
                        call: #rt::rpc::Call<'_>,
                    ) -> ::core::result::Result<(), #rt::rpc::Status> {
                        match call.context().method() {
                            #(#arms)*
                            other => ::core::result::Result::Err(#rt::rpc::Status::format(
                                #rt::rpc::StatusCode::NotFound,
                                ::core::format_args!("{} has no method {:#010x}", NAME, other.id),
                            )),
                        }
                    }
                }

                #client_doc
                pub struct Client<C, B>(pub #rt::rpc::Client<C, B>);

                #list_allow
                impl<C: #rt::rpc::Channel, B: ::core::convert::AsMut<[u8]>> Client<C, B> {
                    /// A client over `channel`, with buffers bounding the largest response
                    /// (`rx`) and request (`tx`) frame.
                    pub fn new(channel: C, rx: B, tx: B) -> Self {
                        Client(#rt::rpc::Client::new(channel, rx, tx))
                    }

                    #(#client_fns)*
                }

                #owned_client

                #async_items
            }
        })
    }

    /// The tokio side of a service: `AsyncHandler`, `AsyncServer` and `AsyncClient`.
    fn async_service(
        &self,
        service_name: &str,
        parts: Vec<AsyncMethod>,
        list_allow: Option<TokenStream>,
    ) -> TokenStream {
        let Some((ar, async_cfg)) = &self.async_rpc else {
            return TokenStream::new();
        };
        let rt = &self.rt;
        let cfgs = [self.owned_cfg.as_ref(), async_cfg.as_ref()]
            .into_iter()
            .flatten()
            .map(|p| quote!(#[cfg(#p)]))
            .collect::<TokenStream>();
        let handler_fns = parts.iter().map(|p| &p.handler);
        let arms = parts.iter().map(|p| &p.arm);
        let client_fns = parts.iter().map(|p| &p.client);
        let handler_doc = Self::doc_lines(&[
            format!("The methods of `{service_name}` for a tokio server: implement them (with `async fn`) and register [`AsyncServer`] with a `Server`."),
            String::new(),
            "Requests and responses are owned types. An `Err` reaches the client as an `ERROR` frame with its status; a panic as `INTERNAL`.".to_string(),
        ]);
        let server_doc = Self::doc_lines(&[format!(
            "Serves `{service_name}` with an [`AsyncHandler`]: pass it to `ServerBuilder::add_service`."
        )]);
        let client_doc = Self::doc_lines(&[format!(
            "A typed async client of `{service_name}`, sharing one connection with every clone."
        )]);
        quote! {
            #handler_doc
            #cfgs
            #list_allow
            pub trait AsyncHandler: ::core::marker::Send + ::core::marker::Sync + 'static {
                #(#handler_fns)*
            }

            #server_doc
            #cfgs
            #[derive(Debug)]
            pub struct AsyncServer<H>(pub #ar::__private::Arc<H>);

            #cfgs
            impl<H> AsyncServer<H> {
                /// Serves `handler`.
                pub fn new(handler: H) -> Self {
                    AsyncServer(#ar::__private::Arc::new(handler))
                }
            }

            #cfgs
            impl<H> ::core::clone::Clone for AsyncServer<H> {
                fn clone(&self) -> Self {
                    AsyncServer(::core::clone::Clone::clone(&self.0))
                }
            }

            #cfgs
            #list_allow
            impl<H: AsyncHandler> #ar::Service for AsyncServer<H> {
                fn info(&self) -> #rt::rpc::ServiceInfo<'static> {
                    INFO
                }

                fn methods(&self) -> &'static [#rt::MethodInfo] {
                    METHODS
                }

                fn call(
                    &self,
                    method: #rt::MethodInfo,
                    call: #ar::ServerCall,
                ) -> #ar::BoxFuture<'static, ()> {
                    let handler = ::core::clone::Clone::clone(&self.0);
                    match method {
                        #(#arms)*
                        other => ::std::boxed::Box::pin(call.reject(#ar::Status::not_found(
                            ::std::format!("{} has no method {:#010x}", NAME, other.id),
                        ))),
                    }
                }
            }

            #client_doc
            #cfgs
            #[derive(Clone, Debug)]
            pub struct AsyncClient(pub #ar::Client);

            #cfgs
            #list_allow
            impl AsyncClient {
                /// A typed client over `client`'s connection (described with this
                /// service's methods, for carriers that route by name).
                pub fn new(client: #ar::Client) -> Self {
                    client.describe(METHODS);
                    AsyncClient(client)
                }

                #(#client_fns)*
            }
        }
    }
}

/// The generated pieces of one method's async side.
struct AsyncMethod {
    handler: TokenStream,
    arm: TokenStream,
    client: TokenStream,
}

fn async_method(
    ar: &TokenStream,
    m: &Method,
    c: &proc_macro2::Ident,
    fn_name: &proc_macro2::Ident,
    req: &TokenStream,
    res: &TokenStream,
) -> AsyncMethod {
    let (kind, name) = (m.method_type, m.src_name.as_str());
    let result = |ok: TokenStream| quote!(::core::result::Result<#ok, #ar::Status>);
    let future = |ok: TokenStream| {
        let r = result(ok);
        quote!(impl ::core::future::Future<Output = #r> + ::core::marker::Send)
    };
    let hdoc = |extra: &str| {
        let mut lines = vec![format!("Handles `{name}`.")];
        if !extra.is_empty() {
            lines.push(String::new());
            lines.push(extra.to_string());
        }
        Emitter::doc_lines(&lines)
    };
    let cdoc = |extra: &str| Emitter::doc_lines(&[format!("Calls `{name}`{extra}.")]);
    match kind {
        MethodType::ServerStream => {
            let doc = hdoc("Send the responses on `responses`; the stream ends when this returns.");
            let fut = future(quote!(()));
            let cd = cdoc("; read the responses from the returned stream");
            AsyncMethod {
                handler: quote! {
                    #doc
                    fn #fn_name(
                        &self,
                        ctx: &#ar::Context,
                        request: #req,
                        responses: #ar::ResponseSink<#res>,
                    ) -> #fut;
                },
                arm: quote! {
                    #c => call.server_stream(move |ctx, request, responses| async move {
                        handler.#fn_name(&ctx, request, responses).await
                    }),
                },
                client: quote! {
                    #cd
                    pub async fn #fn_name(
                        &self,
                        request: &#req,
                        options: #ar::CallOptions,
                    ) -> ::core::result::Result<#ar::Streaming<#res>, #ar::Status> {
                        self.0.server_stream(#c.id, request, options).await
                    }
                },
            }
        }
        MethodType::ClientStream => {
            let doc = hdoc("Read the requests from `requests` (`requests.message().await`).");
            let fut = future(res.clone());
            let r = result(quote!(#ar::Response<#res>));
            let cd = cdoc(" with the requests `requests` yields");
            AsyncMethod {
                handler: quote! {
                    #doc
                    fn #fn_name(
                        &self,
                        ctx: &#ar::Context,
                        requests: #ar::Requests<#req>,
                    ) -> #fut;
                },
                arm: quote! {
                    #c => call.client_stream(move |ctx, requests| async move {
                        handler.#fn_name(&ctx, requests).await
                    }),
                },
                client: quote! {
                    #cd
                    pub async fn #fn_name<S>(&self, requests: S, options: #ar::CallOptions) -> #r
                    where
                        S: #ar::Stream<Item = #req> + ::core::marker::Send,
                    {
                        self.0.client_stream(#c.id, requests, options).await
                    }
                },
            }
        }
        MethodType::DuplexStream => {
            let doc = hdoc(
                "Read the requests from `requests` and send responses on `responses`; the stream ends when this returns.",
            );
            let fut = future(quote!(()));
            let cd =
                cdoc(": `requests` is sent as it yields; responses arrive on the returned stream");
            AsyncMethod {
                handler: quote! {
                    #doc
                    fn #fn_name(
                        &self,
                        ctx: &#ar::Context,
                        requests: #ar::Requests<#req>,
                        responses: #ar::ResponseSink<#res>,
                    ) -> #fut;
                },
                arm: quote! {
                    #c => call.duplex(move |ctx, requests, responses| async move {
                        handler.#fn_name(&ctx, requests, responses).await
                    }),
                },
                client: quote! {
                    #cd
                    pub async fn #fn_name<S>(
                        &self,
                        requests: S,
                        options: #ar::CallOptions,
                    ) -> ::core::result::Result<#ar::Streaming<#res>, #ar::Status>
                    where
                        S: #ar::Stream<Item = #req> + ::core::marker::Send + 'static,
                    {
                        self.0.duplex(#c.id, requests, options).await
                    }
                },
            }
        }
        _ => {
            let doc = hdoc("");
            let fut = future(res.clone());
            let r = result(quote!(#ar::Response<#res>));
            let cd = cdoc("");
            let dd = Emitter::doc_lines(&[
                format!(
                    "Dispatches `{name}` as a future (method 2): the server runs it in the background;"
                ),
                "resolve the returned handle with `Client::resolve_one` (or `resolve`)."
                    .to_string(),
            ]);
            let dispatch_fn = ident(&m.dispatch_fn_name);
            AsyncMethod {
                handler: quote! {
                    #doc
                    fn #fn_name(&self, ctx: &#ar::Context, request: #req) -> #fut;
                },
                arm: quote! {
                    #c => call.unary(move |ctx, request| async move {
                        handler.#fn_name(&ctx, request).await
                    }),
                },
                client: quote! {
                    #cd
                    pub async fn #fn_name(&self, request: &#req, options: #ar::CallOptions) -> #r {
                        self.0.unary(#c.id, request, options).await
                    }

                    #dd
                    pub async fn #dispatch_fn(
                        &self,
                        request: &#req,
                        options: #ar::DispatchOptions,
                    ) -> ::core::result::Result<#ar::Dispatched<#res>, #ar::Status> {
                        self.0.dispatch(#c.id, request, options).await
                    }
                },
            }
        }
    }
}

fn hex_u32(v: u32) -> TokenStream {
    let s = format!("0x{:04x}_{:04x}", v >> 16, v & 0xFFFF);
    s.parse().unwrap_or_else(|_| {
        let l = Literal::u32_unsuffixed(v);
        quote!(#l)
    })
}

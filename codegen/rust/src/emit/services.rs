//! Services: a module per service with method metadata, compile-time method ids,
//! request/response type aliases, the discovery record, a blocking `Handler` trait with the
//! `Server` that routes calls to it (no heap), and a typed blocking `Client`.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::Emitter;
use crate::GenerateError;
use crate::layout::{Code, Meta, TyText};
use crate::model::{Body, DefId, Method};
use crate::names::{ident, ident_text};
use bebop_descriptor::MethodType;

/// What the items of one method need.
struct MethodSpec {
    /// The method's constant (`GET`).
    c: String,
    /// The `MethodKind`/`MethodType` variant.
    kind: &'static str,
    req_stream: bool,
    res_stream: bool,
    id: u32,
    /// The id as a grouped hex literal (`0x92a2_626a`).
    id_lit: String,
    /// Whether the request and response views borrow (have a lifetime).
    req_lt: bool,
    res_lt: bool,
}

fn stream_word(stream: bool) -> &'static str {
    if stream { "stream " } else { "" }
}

/// A request or response alias, with `lifetime` when the type borrows.
fn alias_ty(alias: &str, borrows: bool, lifetime: &str) -> TyText {
    let name = ident_text(alias);
    if borrows {
        TyText::generic(name, vec![TyText::leaf(lifetime)])
    } else {
        TyText::leaf(name)
    }
}

/// `::core::result::Result<ok, err>`.
fn result_of(ok: TyText, err: TyText) -> TyText {
    TyText::generic("::core::result::Result", vec![ok, err])
}

impl Emitter<'_, '_> {
    /// The module of service `id` at `code`'s depth (nothing for another definition).
    pub(crate) fn service(&self, code: &mut Code, id: DefId) -> Result<(), GenerateError> {
        let d = self.def(id);
        let Body::Service { methods } = &d.body else {
            return Ok(());
        };
        let rt = self.rt_text.as_str();
        let mut inside = d.module.clone();
        inside.push(d.name.clone());
        let service_name = d.src_name.as_str();
        let name_lit = Literal::string(service_name).to_string();
        let mut specs = Vec::with_capacity(methods.len());
        for m in methods {
            specs.push(self.method_spec(d.fqn.as_str(), service_name, m)?);
        }
        let deprecated_alias = self.touches_deprecated(id);
        let list_allow = methods.iter().any(|m| m.deprecated.is_some());
        // The owned and async clients name the request and response types themselves (not
        // through the aliases), so they also need the allowance when those are deprecated.
        let types_allow = list_allow || deprecated_alias;
        let allow = |code: &mut Code, on: bool| {
            if on {
                code.line("#[allow(deprecated)]");
            }
        };

        let mut docs = self.def_doc_lines(id);
        docs.push(String::new());
        docs.push("Method metadata for the RPC layers: ids are computed at compile time.".into());
        code.docs(&docs);
        Self::deprecated_line(code, d.deprecated.as_ref());
        code.open(format_args!("pub mod {}", ident_text(&d.name)));
        code.docs(&[format!("The service's name as declared: `{service_name}`.")]);
        code.assign("pub const NAME: &str", &name_lit);

        for (m, s) in methods.iter().zip(&specs) {
            let mut mdocs = Self::schema_doc(m.doc.as_deref());
            if !mdocs.is_empty() {
                mdocs.push(String::new());
            }
            mdocs.push(format!(
                "`{}({}{}): {}{}`, id `{:#010x}`.",
                m.src_name,
                stream_word(s.req_stream),
                m.request_text,
                stream_word(s.res_stream),
                m.response_text,
                s.id
            ));
            code.docs(&mdocs);
            Self::deprecated_line(code, m.deprecated.as_ref());
            let method_lit = Literal::string(&m.src_name).to_string();
            let kind = format!("{rt}::MethodKind::{}", s.kind);
            code.assign_call(
                &format!("pub const {}: {rt}::MethodInfo", s.c),
                &format!("{rt}::MethodInfo::new"),
                &[&name_lit, &method_lit, &kind],
            );
            // prettyplease wrote this statement over several lines, and an empty line after
            // it; rustfmt keeps that line.
            code.blank();
            code.line("#[allow(deprecated)]");
            code.assign_macro_binary(
                "const _: ()",
                "::core::assert!",
                &[&format!("{}.id", s.c), &s.id_lit],
                "==",
            );
            for (what, alias, ty, text, lt) in [
                (
                    "request",
                    &m.request_alias,
                    &m.request,
                    &m.request_text,
                    s.req_lt,
                ),
                (
                    "response",
                    &m.response_alias,
                    &m.response,
                    &m.response_text,
                    s.res_lt,
                ),
            ] {
                code.docs(&[format!("The {what} type of `{}`: `{text}`.", m.src_name)]);
                allow(code, deprecated_alias);
                let generics = if lt { "<'a>" } else { "" };
                code.assign(
                    &format!("pub type {}{generics}", ident_text(alias)),
                    &self.view_ty_text(&inside, ty).to_string(),
                );
            }
        }

        code.docs(&["Every method, in declaration order."]);
        allow(code, list_allow);
        let consts: Vec<&str> = specs.iter().map(|s| s.c.as_str()).collect();
        code.assign_words(
            &format!("pub const METHODS: &[{rt}::MethodInfo]"),
            "&",
            &consts,
        );

        code.docs(&["The discovery record of this service (method 0)."]);
        self.service_info(code, &name_lit, methods, &specs);
        code.blank();

        code.docs(&[
            format!(
                "The methods of `{service_name}`, to be implemented by the application and served by [`Server`]."
            ),
            String::new(),
            "Blocking and heap-free: requests are views into the server's receive buffer, responses are encoded into its transmit buffer. An `Err` reaches the client as an `ERROR` frame with its status.".to_string(),
        ]);
        allow(code, list_allow);
        if specs.is_empty() {
            code.line("pub trait Handler {}");
        } else {
            code.open("pub trait Handler");
            for (m, s) in methods.iter().zip(&specs) {
                self.handler_fn(code, m, s);
            }
            code.close();
        }

        code.docs(&[format!(
            "Serves `{service_name}` with a [`Handler`]: pass it to `Server::serve`; a tuple of such servers serves several services (as a service that mixes in another with `with` is served)."
        )]);
        code.derive(&["Debug", "Default"]);
        code.line("pub struct Server<H>(pub H);");
        allow(code, list_allow);
        self.server_impl(code, methods, &specs);

        code.docs(&[format!(
            "A typed blocking client of `{service_name}` over any channel; unary responses are views into the client's receive buffer."
        )]);
        code.line(format_args!(
            "pub struct Client<C, B>(pub {rt}::rpc::Client<C, B>);"
        ));
        allow(code, list_allow);
        let client_impl =
            format!("impl<C: {rt}::rpc::Channel, B: ::core::convert::AsMut<[u8]>> Client<C, B>");
        code.open(&client_impl);
        code.docs(&[
            "A client over `channel`, with buffers bounding the largest response",
            "(`rx`) and request (`tx`) frame.",
        ]);
        code.signature(
            "pub fn new",
            &["channel: C", "rx: B", "tx: B"],
            " -> Self",
            " {",
        );
        code.call(
            "",
            "Client",
            &[&format!("{rt}::rpc::Client::new(channel, rx, tx)")],
            "",
        );
        code.close();
        for (m, s) in methods.iter().zip(&specs) {
            self.client_fn(code, m, s);
        }
        code.close();

        let unary: Vec<_> = methods
            .iter()
            .zip(&specs)
            .filter(|(m, _)| m.method_type == MethodType::Unary)
            .collect();
        if self.opts.owned_types && !unary.is_empty() {
            if let Some(p) = &self.owned_cfg {
                code.attr("cfg", &Meta::parse_list(p));
            }
            allow(code, types_allow);
            code.open(&client_impl);
            for (m, s) in unary {
                code.docs(&[format!("Calls `{}` with owned types.", m.src_name)]);
                let req = self.owned_ty_text(&inside, &m.request);
                let res = self.owned_ty_text(&inside, &m.response);
                let options = format!("options: &{rt}::rpc::CallOptions<'_>");
                code.signature_ret(
                    &format!("pub fn {}", ident_text(&m.owned_fn_name)),
                    &["&mut self", &format!("request: &{req}"), &options],
                    &result_of(res, TyText::leaf(format!("{rt}::rpc::ClientError"))),
                    " {",
                );
                code.chain(
                    "self.0",
                    ".unary",
                    &[&format!("{}.id", s.c), "request", "options"],
                    "",
                    "",
                );
                code.close();
            }
            code.close();
        }

        if let Some((ar, _)) = &self.async_rpc {
            let mut parts = Vec::with_capacity(methods.len());
            for (m, s) in methods.iter().zip(&specs) {
                let owned_req = self.owned_ty(&inside, &m.request);
                let owned_res = self.owned_ty(&inside, &m.response);
                let c = ident(&s.c);
                let fn_name = ident(&m.fn_name);
                parts.push(async_method(ar, m, &c, &fn_name, &owned_req, &owned_res));
            }
            let types_allow = types_allow.then(|| quote!(#[allow(deprecated)]));
            let tokens = self.async_service(service_name, parts, types_allow);
            code.formatted(tokens)?;
        }
        code.close();
        Ok(())
    }

    /// What the items of method `m` need: its constant, kind, id and lifetimes.
    fn method_spec(
        &self,
        fqn: &str,
        service_name: &str,
        m: &Method,
    ) -> Result<MethodSpec, GenerateError> {
        let (kind, req_stream, res_stream) = match m.method_type {
            MethodType::Unary => ("Unary", false, false),
            MethodType::ServerStream => ("ServerStream", false, true),
            MethodType::ClientStream => ("ClientStream", true, false),
            MethodType::DuplexStream => ("DuplexStream", true, true),
            MethodType::Unknown => {
                return Err(GenerateError::invalid(
                    format!("{fqn}.{}", m.src_name),
                    "method of unknown streaming type",
                ));
            }
        };
        let id = bebop_runtime::method_id(&format!("/{service_name}/{}", m.src_name));
        if let Some(declared) = m.id {
            if declared != id {
                return Err(GenerateError::invalid(
                    format!("{fqn}.{}", m.src_name),
                    format!(
                        "the descriptor's method id {declared:#010x} is not method_id(\"/{service_name}/{}\") = {id:#010x}",
                        m.src_name
                    ),
                ));
            }
        }
        Ok(MethodSpec {
            c: ident_text(&m.const_name),
            kind,
            req_stream,
            res_stream,
            id,
            id_lit: hex_u32(id),
            req_lt: crate::analysis::ty_lifetime(self.model, &m.request),
            res_lt: crate::analysis::ty_lifetime(self.model, &m.response),
        })
    }

    /// `pub const INFO: ServiceInfo<'static> = ServiceInfo { .. };`, in rustfmt's layout
    /// when every line fits, else as prettyplease lays it out (rustfmt keeps an item with a
    /// line it cannot shorten, such as a long type URL, as it is given).
    fn service_info(
        &self,
        code: &mut Code,
        name_lit: &str,
        methods: &[Method],
        specs: &[MethodSpec],
    ) {
        let rt = self.rt_text.as_str();
        let lhs = format!("pub const INFO: {rt}::rpc::ServiceInfo<'static>");
        let head = format!("{rt}::rpc::ServiceInfo");
        let entry = format!("{rt}::rpc::types::MethodInfo");
        let fields: Vec<Vec<String>> = methods
            .iter()
            .zip(specs)
            .map(|(m, s)| {
                vec![
                    format!("name: {}", Literal::string(&m.src_name)),
                    format!("method_id: {}", s.id_lit),
                    format!("method_type: {rt}::rpc::MethodType::{}", s.kind),
                    format!(
                        "request_type_url: {}",
                        Literal::string(&format!("type.bebop.sh/{}", m.request_text))
                    ),
                    format!(
                        "response_type_url: {}",
                        Literal::string(&format!("type.bebop.sh/{}", m.response_text))
                    ),
                ]
            })
            .collect();
        let slice = format!("{rt}::Array::from_slice");
        let mut c = Code::new(code.depth());
        // rustfmt keeps a column for the `;` after the literal.
        if c.fits(lhs.len() + 3 + head.len() + 2 + 1) {
            c.open(format_args!("{lhs} = {head}"));
        } else {
            c.line(format_args!("{lhs} ="));
            c.push_depth();
            c.open(&head);
        }
        c.line(format_args!("name: {name_lit},"));
        match fields.as_slice() {
            [] => c.line(format_args!("methods: {slice}(&[]),")),
            [one] if c.fits(format!("methods: {slice}(&[{entry} {{").len()) => {
                c.open(format_args!("methods: {slice}(&[{entry}"));
                for f in one {
                    c.line(format_args!("{f},"));
                }
                c.close_with("]),");
            }
            all => {
                c.line(format_args!("methods: {slice}(&["));
                c.push_depth();
                for one in all {
                    c.open(&entry);
                    for f in one {
                        c.line(format_args!("{f},"));
                    }
                    c.close_with(",");
                }
                c.pop_depth();
                c.line("]),");
            }
        }
        c.close_with(";");
        code.raw(&c.into_text());
    }

    /// One method of the blocking `Handler` trait.
    fn handler_fn(&self, code: &mut Code, m: &Method, s: &MethodSpec) {
        let rt = self.rt_text.as_str();
        let req_url = format!("type.bebop.sh/{}", m.request_text);
        let res_url = format!("type.bebop.sh/{}", m.response_text);
        let mut docs = vec![format!("Handles `{}`.", m.src_name)];
        let more = match m.method_type {
            MethodType::ServerStream => format!(
                "Send each `{res_url}` on `responses`; the server ends the stream when this returns."
            ),
            MethodType::ClientStream => {
                format!("Read each `{req_url}` from `requests` with `requests.next()`.")
            }
            MethodType::DuplexStream => format!(
                "Read each `{req_url}` with `stream.next()` and send `{res_url}` responses; the server ends the stream when this returns."
            ),
            _ => String::new(),
        };
        if !more.is_empty() {
            docs.push(String::new());
            docs.push(more);
        }
        code.docs(&docs);
        let fn_name = ident_text(&m.fn_name);
        let ctx = format!("ctx: &{rt}::rpc::CallContext<'_>");
        let req_anon = alias_ty(&m.request_alias, s.req_lt, "'_");
        let (head, self_param) = if s.res_lt {
            (format!("fn {fn_name}<'a>"), "&'a mut self")
        } else {
            (format!("fn {fn_name}"), "&mut self")
        };
        let res = alias_ty(&m.response_alias, s.res_lt, "'a");
        let status = || TyText::leaf(format!("{rt}::rpc::Status"));
        let unit = || TyText::leaf("()");
        match m.method_type {
            MethodType::Unary => {
                let req = alias_ty(
                    &m.request_alias,
                    s.req_lt,
                    if s.res_lt { "'a" } else { "'_" },
                );
                code.signature_ret(
                    &head,
                    &[self_param, &ctx, &format!("request: {req}")],
                    &result_of(res, status()),
                    ";",
                );
            }
            MethodType::ServerStream => code.signature_ret(
                &format!("fn {fn_name}"),
                &[
                    "&mut self",
                    &ctx,
                    &format!("request: {req_anon}"),
                    &format!("responses: &mut {rt}::rpc::ServerStream<'_>"),
                ],
                &result_of(unit(), status()),
                ";",
            ),
            MethodType::ClientStream => code.signature_ret(
                &head,
                &[
                    self_param,
                    &ctx,
                    &format!("requests: &mut {rt}::rpc::RequestStream<'_>"),
                ],
                &result_of(res, status()),
                ";",
            ),
            _ => code.signature_ret(
                &format!("fn {fn_name}"),
                &[
                    "&mut self",
                    &ctx,
                    &format!("stream: &mut {rt}::rpc::DuplexStream<'_>"),
                ],
                &result_of(unit(), status()),
                ";",
            ),
        }
    }

    /// `impl Service for Server<H>`: discovery, method lookup and the dispatch to the
    /// handler.
    fn server_impl(&self, code: &mut Code, methods: &[Method], specs: &[MethodSpec]) {
        let rt = self.rt_text.as_str();
        code.open(format_args!(
            "impl<H: Handler> {rt}::rpc::Service for Server<H>"
        ));
        code.signature(
            "fn describe",
            &[
                "&self",
                &format!("f: &mut dyn FnMut(&{rt}::rpc::ServiceInfo<'static>)"),
            ],
            "",
            " {",
        );
        code.line("f(&INFO)");
        code.close();
        code.signature(
            "fn method",
            &["&self", "id: u32"],
            &format!(" -> ::core::option::Option<{rt}::MethodInfo>"),
            " {",
        );
        code.line("METHODS.iter().find(|m| m.id == id).copied()");
        code.close();
        code.signature_ret(
            "fn dispatch",
            &["&mut self", &format!("call: {rt}::rpc::Call<'_>")],
            &result_of(
                TyText::leaf("()"),
                TyText::leaf(format!("{rt}::rpc::Status")),
            ),
            " {",
        );
        code.open("match call.context().method()");
        for (m, s) in methods.iter().zip(specs) {
            let fn_name = ident_text(&m.fn_name);
            let req = alias_ty(&m.request_alias, s.req_lt, "'_");
            code.open(format_args!("{} =>", s.c));
            match m.method_type {
                MethodType::Unary => {
                    code.assign_try(
                        "let (request, ctx, reply)",
                        &format!("call.unary::<{req}>()?"),
                    );
                    self.let_response(code, &fn_name, "request");
                    code.line("reply.send(&response)");
                }
                MethodType::ServerStream => {
                    code.assign_try(
                        "let (request, ctx, mut responses)",
                        &format!("call.server_stream::<{req}>()?"),
                    );
                    code.chain(
                        "self.0",
                        &format!(".{fn_name}"),
                        &["&ctx", "request", "&mut responses"],
                        "?",
                        ";",
                    );
                    code.line("responses.finish()");
                }
                MethodType::ClientStream => {
                    code.line("let (ctx, mut requests) = call.client_stream();");
                    self.let_response(code, &fn_name, "&mut requests");
                    code.line("requests.into_reply()?.send(&response)");
                }
                _ => {
                    code.line("let (ctx, mut stream) = call.duplex();");
                    code.chain(
                        "self.0",
                        &format!(".{fn_name}"),
                        &["&ctx", "&mut stream"],
                        "?",
                        ";",
                    );
                    code.line("stream.finish()");
                }
            }
            code.close();
        }
        code.arm_call_of_call(
            "other",
            "::core::result::Result::Err",
            &format!("{rt}::rpc::Status::format"),
            &[&format!("{rt}::rpc::StatusCode::NotFound")],
            (
                "::core::format_args!",
                &["\"{} has no method {:#010x}\"", "NAME", "other.id"],
            ),
        );
        code.close();
        code.close();
        code.close();
    }

    /// `let response = self.0.fn_name(&ctx, arg)?;`: a chain wider than rustfmt's chain
    /// width breaks at every element.
    fn let_response(&self, code: &mut Code, fn_name: &str, arg: &str) {
        let call = format!(".{fn_name}(&ctx, {arg})?");
        // rustfmt counts the trailing `?` twice.
        if 6 + call.len() < crate::layout::CHAIN_WIDTH {
            code.assign_try("let response", &format!("self.0{call}"));
        } else {
            code.line("let response = self");
            code.push_depth();
            code.line(".0");
            code.line(format_args!("{call};"));
            code.pop_depth();
        }
    }

    /// One method of the blocking `Client`.
    fn client_fn(&self, code: &mut Code, m: &Method, s: &MethodSpec) {
        let rt = self.rt_text.as_str();
        let fn_name = ident_text(&m.fn_name);
        let options = format!("options: &{rt}::rpc::CallOptions<'_>");
        let error = || TyText::leaf(format!("{rt}::rpc::ClientError"));
        let call = |name: &str| {
            TyText::generic(
                format!("{rt}::rpc::{name}"),
                vec![TyText::leaf("'_"), TyText::leaf("C"), TyText::leaf("B")],
            )
        };
        let id = format!("{}.id", s.c);
        let req_anon = alias_ty(&m.request_alias, s.req_lt, "'_");
        let request = format!("request: &{req_anon}");
        match m.method_type {
            MethodType::Unary => {
                code.docs(&[format!("Calls `{}`.", m.src_name)]);
                let (head, self_param) = if s.res_lt {
                    (format!("pub fn {fn_name}<'s>"), "&'s mut self")
                } else {
                    (format!("pub fn {fn_name}"), "&mut self")
                };
                let res = alias_ty(&m.response_alias, s.res_lt, "'s");
                code.signature_ret(
                    &head,
                    &[self_param, &request, &options],
                    &result_of(res, error()),
                    " {",
                );
                code.chain("self.0", ".unary", &[&id, "request", "options"], "", "");
            }
            MethodType::ServerStream => {
                code.docs(&[format!(
                    "Calls `{}`; read the responses (`{}`) from the returned stream.",
                    m.src_name, m.response_text
                )]);
                code.signature_ret(
                    &format!("pub fn {fn_name}"),
                    &["&mut self", &request, &options],
                    &result_of(call("ServerStreamCall"), error()),
                    " {",
                );
                code.chain(
                    "self.0",
                    ".server_stream",
                    &[&id, "request", "options"],
                    "",
                    "",
                );
            }
            // Client streams and duplex (an unknown kind is served as duplex, as elsewhere).
            _ => {
                let (doc, ty, method) = if m.method_type == MethodType::ClientStream {
                    (
                        format!(
                            "Calls `{}`: send the requests (`{}`) on the returned call, then `finish` it for the response.",
                            m.src_name, m.request_text
                        ),
                        "ClientStreamCall",
                        ".client_stream",
                    )
                } else {
                    (
                        format!(
                            "Calls `{}`: send requests and read responses on the returned call.",
                            m.src_name
                        ),
                        "DuplexCall",
                        ".duplex",
                    )
                };
                code.docs(&[doc]);
                code.signature_ret(
                    &format!("pub fn {fn_name}"),
                    &["&mut self", &options],
                    &result_of(call(ty), error()),
                    " {",
                );
                code.chain("self.0", method, &[&id, "options"], "", "");
            }
        }
        code.close();
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

fn hex_u32(v: u32) -> String {
    format!("0x{:04x}_{:04x}", v >> 16, v & 0xFFFF)
}

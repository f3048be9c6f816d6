//! `bebopc lsp`: a Language Server over standard input and output, on the compiler itself.
//!
//! It keeps the workspace's schemas (every `.bop` file under the directory of `bebop.yml`,
//! else the workspace root, with the configuration's `include` directories for imports) and
//! the open documents, whose text overrides the disk's (full-text sync). It answers:
//!
//! - diagnostics (`textDocument/publishDiagnostics`) after `didOpen`, `didChange`, `didSave`
//!   and `didClose`: the changed document and the open documents that import it, directly or
//!   not, are recompiled (the others are left alone), with each diagnostic's code (`E0xx`,
//!   `W0xx`), severity, notes and related locations;
//! - hover: a definition's kind, name and doc comment, a fixed-size struct's wire size, a
//!   service's method ids; a field's type and index; a method's id, request and response;
//! - go to definition (across imports), find references and rename (every schema of the
//!   workspace; built-in types and the standard schemas' definitions are not renamed);
//! - document symbols (definitions with their fields, members, branches, methods and
//!   nested definitions), completion (type names in scope, the scalars and keywords;
//!   decorators after `@` with their parameters; parameter names inside `@name(`), and
//!   formatting (the whole document, with `format:` of `bebop.yml`), and semantic tokens
//!   (the whole document: keywords, scalars, definitions, members and resolved names by
//!   what they name, numbers, strings, comments).
//!
//! Positions are in UTF-16 code units, as LSP requires. Every request is answered inside a
//! panic guard: a bug answers an error and the server goes on. The protocol runs on
//! `lsp-server`: one thread, one message at a time; diagnostics are computed once the
//! messages that have arrived are handled, so a burst of changes compiles once.

mod features;
mod text;
mod workspace;

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types as lsp;
use lsp_types::notification::Notification as _;
use serde_json::Value;

use crate::exit;
use workspace::Workspace;

/// `bebopc lsp`: serves on standard input and output until `shutdown` and `exit` (exit
/// status 0), or until the input ends (exit status 1, as the protocol asks when `exit`
/// comes without `shutdown`).
pub fn lsp() -> u8 {
    let (connection, io_threads) = Connection::stdio();
    let status = match serve(&connection) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("bebopc lsp: {e}");
            exit::SCHEMA_ERRORS
        }
    };
    drop(connection);
    if let Err(e) = io_threads.join() {
        eprintln!("bebopc lsp: {e}");
    }
    status
}

fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(lsp::PositionEncodingKind::UTF16),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::FULL),
                save: Some(lsp::TextDocumentSyncSaveOptions::SaveOptions(
                    lsp::SaveOptions {
                        include_text: Some(false),
                    },
                )),
                ..lsp::TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec!["@".to_string(), "(".to_string()]),
            ..lsp::CompletionOptions::default()
        }),
        document_formatting_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Left(true)),
        semantic_tokens_provider: Some(
            lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend: lsp::SemanticTokensLegend {
                        token_types: features::TOKEN_TYPES.to_vec(),
                        token_modifiers: features::TOKEN_MODIFIERS.to_vec(),
                    },
                    full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                    range: None,
                    ..lsp::SemanticTokensOptions::default()
                },
            ),
        ),
        ..lsp::ServerCapabilities::default()
    }
}

/// The workspace root an `initialize` names: the first folder, else `rootUri`, else
/// `rootPath`.
#[allow(deprecated)] // `root_uri` and `root_path` are still sent by many clients
fn root_of(params: &lsp::InitializeParams) -> Option<PathBuf> {
    if let Some(folder) = params.workspace_folders.as_ref().and_then(|f| f.first()) {
        if let Some(p) = text::uri_to_path(&folder.uri) {
            return Some(p);
        }
    }
    if let Some(p) = params.root_uri.as_ref().and_then(text::uri_to_path) {
        return Some(p);
    }
    params.root_path.as_ref().map(PathBuf::from)
}

fn serve(connection: &Connection) -> Result<(), String> {
    let caps = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    let init = connection
        .initialize(caps)
        .map_err(|e| format!("initialize: {e}"))?;
    let params: lsp::InitializeParams = serde_json::from_value(init).unwrap_or_default();
    let mut server = Server {
        connection,
        ws: Workspace::new(root_of(&params)),
        pending: BTreeSet::new(),
    };
    if let Some(problem) = server.ws.config_problem.clone() {
        server.show_message(lsp::MessageType::WARNING, &problem);
    }
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if connection
                    .handle_shutdown(&req)
                    .map_err(|e| format!("shutdown: {e}"))?
                {
                    return Ok(());
                }
                server.request(req);
            }
            Message::Notification(n) => {
                if n.method == lsp::notification::Exit::METHOD {
                    return Err("exit without shutdown".to_string());
                }
                server.notification(n);
            }
            Message::Response(_) => {}
        }
        if connection.receiver.is_empty() {
            server.flush_diagnostics();
        }
    }
    Err("the input ended before shutdown".to_string())
}

struct Server<'a> {
    connection: &'a Connection,
    ws: Workspace,
    /// Documents changed since diagnostics were last published.
    pending: BTreeSet<String>,
}

impl Server<'_> {
    fn send(&self, msg: Message) {
        // The writer thread ends only when the client is gone; nothing to do then.
        let _ = self.connection.sender.send(msg);
    }

    fn show_message(&self, typ: lsp::MessageType, message: &str) {
        let params = lsp::ShowMessageParams {
            typ,
            message: format!("bebopc: {message}"),
        };
        self.send(Message::Notification(Notification::new(
            lsp::notification::ShowMessage::METHOD.to_string(),
            params,
        )));
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        let method = req.method.clone();
        let outcome = catch_unwind(AssertUnwindSafe(|| self.answer(req)));
        let response = match outcome {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => {
                // Whatever was cached may be inconsistent.
                self.ws.invalidate();
                Response::new_err(
                    id,
                    ErrorCode::InternalError as i32,
                    format!("bebopc lsp: internal error while answering {method}"),
                )
            }
        };
        self.send(Message::Response(response));
    }

    fn answer(&mut self, req: Request) -> Result<Value, (ErrorCode, String)> {
        use lsp::request::*;
        let bad = |e: serde_json::Error| (ErrorCode::InvalidParams, e.to_string());
        let json = |v: Result<Value, serde_json::Error>| {
            v.map_err(|e| (ErrorCode::InternalError, e.to_string()))
        };
        let ws = &mut self.ws;
        match req.method.as_str() {
            HoverRequest::METHOD => {
                let p: lsp::HoverParams = serde_json::from_value(req.params).map_err(bad)?;
                let pos = p.text_document_position_params;
                let answer = ws
                    .key_of_uri(&pos.text_document.uri)
                    .and_then(|k| features::hover(ws, &k, pos.position));
                json(serde_json::to_value(answer))
            }
            GotoDefinition::METHOD => {
                let p: lsp::GotoDefinitionParams =
                    serde_json::from_value(req.params).map_err(bad)?;
                let pos = p.text_document_position_params;
                let answer = ws
                    .key_of_uri(&pos.text_document.uri)
                    .and_then(|k| features::definition(ws, &k, pos.position))
                    .map(lsp::GotoDefinitionResponse::Scalar);
                json(serde_json::to_value(answer))
            }
            References::METHOD => {
                let p: lsp::ReferenceParams = serde_json::from_value(req.params).map_err(bad)?;
                let pos = p.text_document_position;
                let answer = ws.key_of_uri(&pos.text_document.uri).map(|k| {
                    features::references(ws, &k, pos.position, p.context.include_declaration)
                });
                json(serde_json::to_value(answer))
            }
            DocumentSymbolRequest::METHOD => {
                let p: lsp::DocumentSymbolParams =
                    serde_json::from_value(req.params).map_err(bad)?;
                let answer = ws
                    .key_of_uri(&p.text_document.uri)
                    .map(|k| features::document_symbols(ws, &k))
                    .map(lsp::DocumentSymbolResponse::Nested);
                json(serde_json::to_value(answer))
            }
            Completion::METHOD => {
                let p: lsp::CompletionParams = serde_json::from_value(req.params).map_err(bad)?;
                let pos = p.text_document_position;
                let answer = ws
                    .key_of_uri(&pos.text_document.uri)
                    .map(|k| features::completion(ws, &k, pos.position))
                    .map(lsp::CompletionResponse::Array);
                json(serde_json::to_value(answer))
            }
            Formatting::METHOD => {
                let p: lsp::DocumentFormattingParams =
                    serde_json::from_value(req.params).map_err(bad)?;
                let answer = ws
                    .key_of_uri(&p.text_document.uri)
                    .and_then(|k| features::formatting(ws, &k));
                json(serde_json::to_value(answer))
            }
            Rename::METHOD => {
                let p: lsp::RenameParams = serde_json::from_value(req.params).map_err(bad)?;
                let pos = p.text_document_position;
                let key = ws
                    .key_of_uri(&pos.text_document.uri)
                    .ok_or((ErrorCode::InvalidParams, "not a file URI".to_string()))?;
                match features::rename(ws, &key, pos.position, &p.new_name) {
                    Ok(edit) => json(serde_json::to_value(edit)),
                    Err(features::Refused(why)) => Err((ErrorCode::RequestFailed, why)),
                }
            }
            SemanticTokensFullRequest::METHOD => {
                let p: lsp::SemanticTokensParams =
                    serde_json::from_value(req.params).map_err(bad)?;
                let answer = ws
                    .key_of_uri(&p.text_document.uri)
                    .and_then(|k| features::semantic_tokens(ws, &k))
                    .map(lsp::SemanticTokensResult::Tokens);
                json(serde_json::to_value(answer))
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("bebopc lsp does not answer {other}"),
            )),
        }
    }

    fn notification(&mut self, n: Notification) {
        let method = n.method.clone();
        if catch_unwind(AssertUnwindSafe(|| self.notify(n))).is_err() {
            self.ws.invalidate();
            self.show_message(
                lsp::MessageType::ERROR,
                &format!("internal error while handling {method}"),
            );
        }
    }

    fn notify(&mut self, n: Notification) {
        use lsp::notification::*;
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidOpenTextDocumentParams>(n.params)
                else {
                    return;
                };
                let doc = p.text_document;
                if let Some(key) = self.ws.key_of_uri(&doc.uri) {
                    self.ws.set_open(key.clone(), doc.text, doc.version);
                    self.pending.insert(key);
                }
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeTextDocumentParams>(n.params)
                else {
                    return;
                };
                let Some(key) = self.ws.key_of_uri(&p.text_document.uri) else {
                    return;
                };
                // Full sync: the last change holds the whole text. (A ranged change, which
                // the server does not ask for, is applied too.)
                let mut text = match self.ws.open.get(&key) {
                    Some(d) => d.text.clone(),
                    None => return,
                };
                for change in p.content_changes {
                    match change.range {
                        None => text = change.text,
                        Some(range) => {
                            let lines = text::LineIndex::new(&text);
                            let start = lines.offset(range.start) as usize;
                            let end = (lines.offset(range.end) as usize).max(start);
                            if text.is_char_boundary(start) && text.is_char_boundary(end) {
                                text.replace_range(start..end, &change.text);
                            }
                        }
                    }
                }
                self.ws.set_open(key.clone(), text, p.text_document.version);
                self.pending.insert(key);
            }
            DidSaveTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidSaveTextDocumentParams>(n.params)
                else {
                    return;
                };
                if let Some(key) = self.ws.key_of_uri(&p.text_document.uri) {
                    if let Some(text) = p.text {
                        if let Some(doc) = self.ws.open.get_mut(&key) {
                            doc.text = text;
                        }
                    }
                    self.ws.saved(&key);
                    self.ws.invalidate();
                    self.pending.insert(key);
                }
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidCloseTextDocumentParams>(n.params)
                else {
                    return;
                };
                if let Some(key) = self.ws.key_of_uri(&p.text_document.uri) {
                    // Its dependents see the disk's text again.
                    let dependents = self.ws.affected(&key);
                    self.ws.close(&key);
                    self.pending
                        .extend(dependents.into_iter().filter(|k| *k != key));
                    self.publish(&key, Vec::new(), None);
                }
            }
            DidChangeWatchedFiles::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeWatchedFilesParams>(n.params)
                else {
                    return;
                };
                for change in p.changes {
                    let Some(path) = text::uri_to_path(&change.uri) else {
                        continue;
                    };
                    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if crate::config::FILE_NAMES.contains(&name) {
                        self.reload();
                        return;
                    }
                    let Some(key) = self.ws.key_of_uri(&change.uri) else {
                        continue;
                    };
                    if !self.ws.open.contains_key(&key) {
                        self.ws.refresh(&key);
                        self.pending.insert(key);
                    }
                    // A file that appeared or went away may be what an import was missing
                    // (or now misses): every open document is checked again.
                    if change.typ != lsp::FileChangeType::CHANGED {
                        self.pending.extend(self.ws.open.keys().cloned());
                    }
                }
            }
            _ => {}
        }
    }

    /// Reads the workspace again (its configuration changed), keeping the open documents.
    fn reload(&mut self) {
        // The base directory may move with the configuration: the documents are keyed anew.
        let open: Vec<(lsp::Uri, workspace::Document)> = std::mem::take(&mut self.ws.open)
            .into_iter()
            .filter_map(|(k, d)| Some((self.ws.uri_of_key(&k)?, d)))
            .collect();
        self.ws = Workspace::new(self.ws.root.clone());
        if let Some(problem) = self.ws.config_problem.clone() {
            self.show_message(lsp::MessageType::WARNING, &problem);
        }
        for (uri, doc) in open {
            if let Some(key) = self.ws.key_of_uri(&uri) {
                self.pending.insert(key.clone());
                self.ws.set_open(key, doc.text, doc.version);
            }
        }
    }

    /// Recompiles the documents affected by the pending changes and publishes their
    /// diagnostics.
    fn flush_diagnostics(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let mut roots: BTreeSet<String> = BTreeSet::new();
            for key in &pending {
                roots.extend(self.ws.affected(key));
            }
            let roots: Vec<String> = roots.into_iter().collect();
            if roots.is_empty() {
                return Vec::new();
            }
            let compiled = self.ws.compile(&roots);
            for root in &roots {
                let deps = compiled.closure(root);
                self.ws.deps.insert(root.clone(), deps);
            }
            features::diagnostics(&compiled, &roots)
        }));
        match outcome {
            Ok(lists) => {
                for (key, list) in lists {
                    let version = self.ws.open.get(&key).map(|d| d.version);
                    self.publish(&key, list, version);
                }
            }
            Err(_) => self.show_message(
                lsp::MessageType::ERROR,
                "internal error while computing diagnostics",
            ),
        }
    }

    fn publish(&self, key: &str, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) {
        let Some(uri) = self.ws.uri_of_key(key) else {
            return;
        };
        let params = lsp::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Message::Notification(Notification::new(
            lsp::notification::PublishDiagnostics::METHOD.to_string(),
            params,
        )));
    }
}

//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use bebop_lua::LuaRuntime;
use bebopc::model::{DecoratorUsage, DefBody, Model};
use bebopc::{Compilation, Compiler, Diagnostic};

/// `../shared/conformance` next to the repository; `None` (the test is skipped) when it is
/// missing and `CI` is unset (see `bebop-shared-data`).
pub fn conformance() -> Option<PathBuf> {
    let dir = bebop_shared_data::conformance_dir("")?;
    assert!(
        dir.join("reference-fixtures/valid").is_dir(),
        "{}: no reference-fixtures/valid",
        dir.display()
    );
    Some(dir)
}

/// Compiles one in-memory schema with a Lua runtime.
pub fn compile_with(runtime: LuaRuntime, text: &str) -> Compilation {
    Compiler::new()
        .decorator_runtime(runtime)
        .compile_source("test.bop", text)
}

/// Compiles one in-memory schema with the default Lua runtime.
pub fn compile(text: &str) -> Compilation {
    compile_with(LuaRuntime::new(), text)
}

/// `(code, line, column, message)` of every diagnostic.
pub fn diags(c: &Compilation) -> Vec<(String, u32, u32, String)> {
    c.diagnostics.iter().map(|d| describe(c, d)).collect()
}

pub fn describe(c: &Compilation, d: &Diagnostic) -> (String, u32, u32, String) {
    let at = c.sources.line_col(d.span.source, d.span.start);
    (
        d.code.as_str().to_string(),
        at.line,
        at.column,
        d.message.clone(),
    )
}

/// Every decorator usage of a model with a path naming it: `Def#0`, `Def.field#1`, ...
pub fn usages<'a>(model: &'a Model) -> Vec<(String, &'a DecoratorUsage)> {
    let mut out: Vec<(String, &DecoratorUsage)> = Vec::new();
    for d in &model.definitions {
        let mut push = |path: String, list: &'a [DecoratorUsage]| {
            for (i, u) in list.iter().enumerate() {
                out.push((format!("{path}#{i}"), u));
            }
        };
        push(d.fqn.clone(), &d.decorators);
        match &d.body {
            DefBody::Struct(s) => s
                .fields
                .iter()
                .for_each(|f| push(format!("{}.{}", d.fqn, f.name), &f.decorators)),
            DefBody::Message(m) => m
                .fields
                .iter()
                .for_each(|f| push(format!("{}.{}", d.fqn, f.name), &f.decorators)),
            DefBody::Enum(e) => e
                .members
                .iter()
                .for_each(|m| push(format!("{}.{}", d.fqn, m.name), &m.decorators)),
            DefBody::Union(u) => u
                .branches
                .iter()
                .for_each(|b| push(format!("{}.{}", d.fqn, b.name), &b.decorators)),
            DefBody::Service(s) => s
                .methods
                .iter()
                .for_each(|m| push(format!("{}.{}", d.fqn, m.name), &m.decorators)),
            _ => {}
        }
    }
    out
}

/// The export data of the usage at `path` (see [`usages`]).
pub fn export_of(c: &Compilation, path: &str) -> Vec<(String, bebopc::model::Value)> {
    let model = c
        .model
        .as_ref()
        .unwrap_or_else(|| panic!("compilation failed:\n{}", c.render_terminal(false)));
    usages(model)
        .into_iter()
        .find(|(p, _)| p == path)
        .unwrap_or_else(|| panic!("no usage {path}"))
        .1
        .export_data
        .clone()
}

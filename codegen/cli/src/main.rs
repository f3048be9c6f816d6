//! `bebopc`: the Bebop schema compiler's command line.
//!
//! ```text
//! bebopc build [FILES...] [--NAME_out=DIR]... [--desc_out=FILE] [--plugin NAME=PATH]...
//!              [-D KEY=VAL]... [-I DIR]... [-x GLOB]... [--emit-source-info]
//! bebopc check [FILES...] [-I DIR]... [-x GLOB]...
//! bebopc fmt [FILES...] [--check] [--stdin] [--indent N] [--line-width N] [-x GLOB]...
//! bebopc watch [the options of build...] [--debounce MS]
//! bebopc lsp
//! bebopc init
//! bebopc completion bash|zsh|fish|powershell|elvish
//! global: [-c FILE] [--format terminal|json] [--color auto|always|never] [-q] [-v] [--no-warn]
//! ```
//!
//! Commands and flags follow the reference compiler's where they overlap; `--desc_out`
//! writes the DescriptorSet. The Rust generator (`bebop-codegen-rust`) is built in:
//! `--rust_out=DIR` runs it in-process on the request a `bebopc-gen-rust` plugin would get
//! (with `--rust_opt` and `-D` options) and writes the same files, unless
//! `--plugin rust=PATH` (or `path:` in the configuration) names an executable to run instead.
//! Without FILES, the configuration's `sources` are compiled (see [`config`]).
//!
//! `fmt` rewrites schemas in the canonical layout of `bebopc::format` (every comment and the
//! meaning kept; a file with syntax errors is reported and left alone); `--check` changes
//! nothing and prints a unified diff per file that would change; `--stdin` formats standard
//! input to standard output; the layout comes from `format:` in the configuration (see
//! [`fmt`]). `watch` builds like `build`, then again, debounced, whenever a schema, an import
//! or the configuration changes, reporting errors and going on until Ctrl-C or SIGTERM (see
//! [`watch`]). `lsp` runs the Language Server for editors on standard input and output:
//! diagnostics as you type (the changed file and the open files that import it), hover,
//! go to definition, references, rename, document symbols, completion and formatting (see
//! [`lsp`]; editor support files are in `codegen/editors`).
//!
//! Exit status: 0 success, 1 schema errors (or `init` refusing to overwrite, or files that
//! `fmt --check` would change), 2 usage or configuration errors, 3 code generation failed (or
//! `fmt` could not write a file).
#![forbid(unsafe_code)]

mod args;
mod build;
mod config;
mod diff;
mod fmt;
mod init;
mod lsp;
mod project;
mod report;
mod sources;
mod watch;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::args::{Cli, Command};

/// Exit statuses.
mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// Errors in the schemas (or `init` refusing to overwrite, or `fmt --check` finding
    /// files to reformat).
    pub const SCHEMA_ERRORS: u8 = 1;
    /// A bad command line or configuration.
    pub const USAGE: u8 = 2;
    /// A plugin or an output failed.
    pub const GENERATION: u8 = 3;
}

fn main() -> ExitCode {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let raw = args::insert_implicit_build(raw);
    let (rest, plugin_flags) = match args::extract_plugin_flags(raw) {
        Ok(v) => v,
        Err(e) => {
            let mut cmd = Cli::command();
            cmd.error(clap::error::ErrorKind::ValueValidation, e).exit();
        }
    };
    let cli = Cli::parse_from(rest);
    let status = match cli.command {
        Command::Build(mut build_args) => {
            build_args.outs = plugin_flags.outs;
            build_args.params = plugin_flags.params;
            build::build(&build_args, &cli.global)
        }
        Command::Watch(mut watch_args) => {
            watch_args.build.outs = plugin_flags.outs;
            watch_args.build.params = plugin_flags.params;
            watch::watch(&watch_args, &cli.global)
        }
        Command::Check(check_args) => {
            no_plugin_flags(&plugin_flags);
            build::check(&check_args, &cli.global)
        }
        Command::Fmt(fmt_args) => {
            no_plugin_flags(&plugin_flags);
            fmt::fmt(&fmt_args, &cli.global)
        }
        Command::Lsp => {
            no_plugin_flags(&plugin_flags);
            lsp::lsp()
        }
        Command::Init => init::init(
            std::path::Path::new("."),
            &report::Reporter::new(&cli.global),
        ),
        Command::Completion { shell } => {
            let mut cmd = Cli::command();
            let mut out = std::io::stdout().lock();
            clap_complete::generate(shell, &mut cmd, "bebopc", &mut out);
            exit::OK
        }
    };
    ExitCode::from(status)
}

/// `--NAME_out` and `--NAME_opt` belong to `build` and `watch`: a usage error elsewhere.
fn no_plugin_flags(flags: &args::PluginFlags) {
    if !flags.outs.is_empty() || !flags.params.is_empty() {
        let mut cmd = Cli::command();
        cmd.error(
            clap::error::ErrorKind::ArgumentConflict,
            "--NAME_out and --NAME_opt are for `bebopc build` and `bebopc watch`",
        )
        .exit();
    }
}

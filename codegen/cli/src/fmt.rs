//! `bebopc fmt`: rewrites schemas in the canonical layout of [`bebopc::format`].
//!
//! Files are the arguments (paths or globs) or, without any, the configuration's `sources`.
//! Each is formatted on its own (imports are not followed); a file with syntax errors is
//! reported and left untouched, the others are still formatted. `--check` writes nothing
//! and prints a unified diff per file that would change; `--stdin` formats standard input
//! to standard output. The layout comes from `--indent` and `--line-width`, else from
//! `format:` in the configuration, else the defaults (4 and 100).

use std::io::{Read, Write};
use std::path::Path;

use bebopc::diag::{Code, Diagnostic};
use bebopc::format::{FormatError, FormatOptions, format_source};
use bebopc::resolve::{MAX_FILE_SIZE, read_at_most};
use bebopc::source::{SourceMap, Span};

use crate::args::{FmtArgs, GlobalArgs, InputArgs};
use crate::config::Config;
use crate::diff;
use crate::exit;
use crate::project;
use crate::report::Reporter;

/// What became of one file.
enum Outcome {
    Unchanged,
    /// Formatted (written, or shown as a diff with `--check`).
    Changed,
    /// Not formatted: errors were reported.
    Failed,
    /// Formatted but the result could not be written.
    WriteFailed,
}

/// `bebopc fmt`.
pub fn fmt(args: &FmtArgs, global: &GlobalArgs) -> u8 {
    let reporter = Reporter::new(global);
    if args.stdin {
        let config = match project::load_config(global, &reporter) {
            Ok(c) => c,
            Err(e) => {
                reporter.error(&e);
                return exit::USAGE;
            }
        };
        return stdin(args, &options(args, config.as_ref()), &reporter);
    }
    let input = InputArgs {
        files: args.files.clone(),
        include: Vec::new(),
        exclude: args.exclude.clone(),
    };
    let project = match project::load(global, &input, &reporter) {
        Ok(p) => p,
        Err(e) => {
            reporter.error(&e);
            return exit::USAGE;
        }
    };
    let options = options(args, project.config.as_ref());
    let (mut changed, mut unchanged, mut failed, mut write_failed) = (0, 0, 0, 0);
    for path in &project.files {
        match file(path, args.check, &options, &reporter) {
            Outcome::Unchanged => unchanged += 1,
            Outcome::Changed => changed += 1,
            Outcome::Failed => failed += 1,
            Outcome::WriteFailed => write_failed += 1,
        }
    }
    let mut summary = if args.check {
        format!("{changed} file(s) would be reformatted, {unchanged} already formatted")
    } else {
        format!("{changed} file(s) reformatted, {unchanged} unchanged")
    };
    if failed > 0 {
        summary.push_str(&format!(", {failed} not formatted (errors)"));
    }
    if write_failed > 0 {
        summary.push_str(&format!(", {write_failed} could not be written"));
    }
    reporter.summary(&summary);
    if write_failed > 0 {
        exit::GENERATION
    } else if failed > 0 || (args.check && changed > 0) {
        exit::SCHEMA_ERRORS
    } else {
        exit::OK
    }
}

/// The layout: the command line, else the configuration, else the defaults.
fn options(args: &FmtArgs, config: Option<&Config>) -> FormatOptions {
    let defaults = FormatOptions::default();
    let configured = config.map(|c| c.format).unwrap_or_default();
    FormatOptions {
        indent: args
            .indent
            .map(usize::from)
            .or(configured.indent)
            .unwrap_or(defaults.indent),
        line_width: args
            .line_width
            .or(configured.line_width)
            .unwrap_or(defaults.line_width),
    }
}

/// Formats `text` named `name`, reporting why it was not formatted.
fn format_text(
    name: &str,
    bytes: Vec<u8>,
    options: &FormatOptions,
    reporter: &Reporter,
) -> Option<(String, String)> {
    let mut sources = SourceMap::new();
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let at = e.utf8_error().valid_up_to() as u32;
            let id = sources.add(name, String::from_utf8_lossy(e.as_bytes()).into_owned());
            let d = Diagnostic::error(
                Code::E001,
                Span::new(id, at, at + 1),
                "the file is not valid UTF-8",
            )
            .with_note("schema files must be UTF-8 encoded; the file was not formatted");
            reporter.diagnostics(&[d], &sources);
            return None;
        }
    };
    let id = sources.add(name, text.clone());
    match format_source(id, &text, options) {
        Ok(out) => Some((text, out)),
        Err(FormatError::Syntax(diagnostics)) => {
            reporter.diagnostics(&diagnostics, &sources);
            reporter.error(&format!("{name}: not formatted (syntax errors)"));
            None
        }
        Err(e @ FormatError::Internal(_)) => {
            reporter.error(&format!("{name}: {e}; the file is left as it is"));
            None
        }
    }
}

fn file(path: &str, check: bool, options: &FormatOptions, reporter: &Reporter) -> Outcome {
    let bytes = match read_at_most(Path::new(path), MAX_FILE_SIZE) {
        Ok(b) => b,
        Err(e) => {
            reporter.error(&format!("cannot read {path}: {e}"));
            return Outcome::Failed;
        }
    };
    let Some((text, out)) = format_text(path, bytes, options, reporter) else {
        return Outcome::Failed;
    };
    if text == out {
        reporter.verbose(&format!("{path}: already formatted"));
        return Outcome::Unchanged;
    }
    if check {
        reporter.file_diff(path, &diff::unified(&text, &out, path));
        return Outcome::Changed;
    }
    match std::fs::write(path, out.as_bytes()) {
        Ok(()) => {
            reporter.verbose(&format!("{path}: reformatted"));
            Outcome::Changed
        }
        Err(e) => {
            reporter.error(&format!("cannot write {path}: {e}"));
            Outcome::WriteFailed
        }
    }
}

/// `--stdin`: standard input to standard output (with `--check`: only the diff and the exit
/// status).
fn stdin(args: &FmtArgs, options: &FormatOptions, reporter: &Reporter) -> u8 {
    const NAME: &str = "<stdin>";
    let mut bytes = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_FILE_SIZE as u64 + 1)
        .read_to_end(&mut bytes);
    if let Err(e) = read {
        reporter.error(&format!("cannot read standard input: {e}"));
        return exit::USAGE;
    }
    if bytes.len() > MAX_FILE_SIZE {
        reporter.error(&format!(
            "standard input is larger than {} MiB",
            MAX_FILE_SIZE / (1024 * 1024)
        ));
        return exit::USAGE;
    }
    let Some((text, out)) = format_text(NAME, bytes, options, reporter) else {
        return exit::SCHEMA_ERRORS;
    };
    if args.check {
        if text == out {
            return exit::OK;
        }
        reporter.file_diff(NAME, &diff::unified(&text, &out, NAME));
        return exit::SCHEMA_ERRORS;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        reporter.error(&format!("cannot write standard output: {e}"));
        return exit::GENERATION;
    }
    exit::OK
}

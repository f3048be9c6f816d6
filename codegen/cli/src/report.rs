//! Everything the command line prints: compiler diagnostics, plugin diagnostics, tool errors
//! and progress, in the terminal format (stderr, colour only when asked or on a terminal) or
//! as JSON lines (stdout).

use std::io::Write;

use bebop_descriptor::{Diagnostic as PluginDiagnostic, DiagnosticSeverity};
use bebopc::diag::{self, Code, Color, Diagnostic, Format};
use bebopc::source::{SourceMap, Span};

use crate::args::{ColorArg, FormatArg, GlobalArgs};

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const CYAN: &str = "\x1b[1;36m";
const RESET: &str = "\x1b[0m";

/// How and what to print.
#[derive(Clone, Copy, Debug)]
pub struct Reporter {
    json: bool,
    color: bool,
    quiet: bool,
    verbose: bool,
    no_warn: bool,
    max_errors: usize,
}

impl Reporter {
    /// From the global options.
    pub fn new(global: &GlobalArgs) -> Reporter {
        let color = match global.color {
            ColorArg::Auto => Color::Auto,
            ColorArg::Always => Color::Always,
            ColorArg::Never => Color::Never,
        }
        .resolve_for_stderr();
        Reporter {
            json: global.format == FormatArg::Json,
            color,
            quiet: global.quiet,
            verbose: global.verbose,
            no_warn: global.no_warn,
            max_errors: global.max_errors,
        }
    }

    fn show_warnings(&self) -> bool {
        !(self.quiet || self.no_warn)
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("{code}{text}{RESET}")
        } else {
            text.to_string()
        }
    }

    fn stderr(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
    }

    fn json_line(&self, value: serde_json::Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{value}");
    }

    /// Prints compiler diagnostics (warnings only when wanted).
    /// At most `--max-errors` errors are printed (warnings among them as they come); the
    /// others are counted in a closing line.
    pub fn diagnostics(&self, diagnostics: &[Diagnostic], sources: &SourceMap) {
        let limit = if self.max_errors == 0 {
            usize::MAX
        } else {
            self.max_errors
        };
        let mut errors = 0usize;
        let mut held_back = 0usize;
        let shown: Vec<Diagnostic> = diagnostics
            .iter()
            .filter(|d| d.is_error() || self.show_warnings())
            .filter(|d| {
                if errors >= limit {
                    held_back += usize::from(d.is_error());
                    return false;
                }
                errors += usize::from(d.is_error());
                true
            })
            .cloned()
            .collect();
        if self.json {
            let text = diag::render_all(&shown, sources, Format::Json, false);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
        } else {
            self.stderr(&diag::render_all(
                &shown,
                sources,
                Format::Terminal,
                self.color,
            ));
        }
        if held_back > 0 {
            let s = if held_back == 1 { "" } else { "s" };
            self.stderr(&format!(
                "{}: and {held_back} more error{s} (--max-errors {limit}; 0 shows all)\n",
                self.paint(RED, "error")
            ));
        }
    }

    /// A problem of the tool itself (configuration, plugin, output), not of a schema.
    pub fn error(&self, message: &str) {
        if self.json {
            self.json_line(serde_json::json!({ "severity": "error", "message": message }));
        } else {
            self.stderr(&format!("{}: {message}\n", self.paint(RED, "error")));
        }
    }

    /// A warning of the tool itself.
    pub fn warning(&self, message: &str) {
        if !self.show_warnings() {
            return;
        }
        if self.json {
            self.json_line(serde_json::json!({ "severity": "warning", "message": message }));
        } else {
            self.stderr(&format!("{}: {message}\n", self.paint(YELLOW, "warning")));
        }
    }

    /// `bebopc fmt --check`: the diff that formatting `file` would make; on stdout (in the
    /// JSON format, as the `diff` of an object naming the file).
    pub fn file_diff(&self, file: &str, diff: &str) {
        let mut out = std::io::stdout().lock();
        if self.json {
            let value = serde_json::json!({
                "severity": "error",
                "file": file,
                "message": "the file is not formatted",
                "diff": diff,
            });
            let _ = writeln!(out, "{value}");
        } else {
            let _ = out.write_all(diff.as_bytes());
        }
        let _ = out.flush();
    }

    /// Whether `-v` was given.
    pub fn is_verbose(&self) -> bool {
        self.verbose
    }

    /// Progress shown with `-v` (always on stderr).
    pub fn verbose(&self, message: &str) {
        if self.verbose {
            self.stderr(&format!("{message}\n"));
        }
    }

    /// A closing line for people (terminal format, not with `-q`).
    pub fn summary(&self, message: &str) {
        if !self.quiet && !self.json {
            self.stderr(&format!("{message}\n"));
        }
    }

    /// Text a plugin wrote to stderr, shown when it failed or with `-v`.
    pub fn plugin_stderr(&self, plugin: &str, stderr: &str) {
        let stderr = stderr.trim_end();
        if stderr.is_empty() {
            return;
        }
        if self.json {
            self.json_line(
                serde_json::json!({ "severity": "note", "plugin": plugin, "stderr": stderr }),
            );
        } else {
            let mut text = format!("{} of plugin `{plugin}`:\n", self.paint(CYAN, "stderr"));
            for line in stderr.lines() {
                text.push_str("  | ");
                text.push_str(line);
                text.push('\n');
            }
            self.stderr(&text);
        }
    }

    /// Prints a plugin's diagnostics like compiler diagnostics: with the schema line and an
    /// underline when the diagnostic names a file of this compilation and a span in it.
    /// Returns how many were errors.
    pub fn plugin_diagnostics(
        &self,
        plugin: &str,
        diagnostics: &[PluginDiagnostic],
        sources: &SourceMap,
    ) -> usize {
        let mut errors = 0;
        for d in diagnostics {
            let severity = d.severity.unwrap_or(DiagnosticSeverity::Error);
            let text = d.text.as_deref().unwrap_or("(no text)");
            let is_error = severity == DiagnosticSeverity::Error;
            let shown = match severity {
                DiagnosticSeverity::Error => true,
                DiagnosticSeverity::Warning => self.show_warnings(),
                DiagnosticSeverity::Info | DiagnosticSeverity::Hint => !self.quiet,
            };
            if is_error {
                errors += 1;
            }
            if !shown {
                continue;
            }
            let located = match severity {
                DiagnosticSeverity::Error | DiagnosticSeverity::Warning => d
                    .file
                    .as_deref()
                    .and_then(|file| locate(sources, file, d.span)),
                _ => None,
            };
            if let Some(span) = located {
                let code = if is_error { Code::E100 } else { Code::W100 };
                let mut diag = Diagnostic::new(code, span, format!("[{plugin}] {text}"));
                if let Some(hint) = d.hint.as_deref().filter(|h| !h.is_empty()) {
                    diag = diag.with_help(hint);
                }
                self.diagnostics(&[diag], sources);
                continue;
            }
            let (word, color) = match severity {
                DiagnosticSeverity::Error => ("error", RED),
                DiagnosticSeverity::Warning => ("warning", YELLOW),
                DiagnosticSeverity::Info => ("note", CYAN),
                DiagnosticSeverity::Hint => ("help", CYAN),
            };
            if self.json {
                self.json_line(serde_json::json!({
                    "severity": word,
                    "plugin": plugin,
                    "message": text,
                    "hint": d.hint,
                    "file": d.file,
                    "span": d.span,
                }));
                continue;
            }
            let mut line = String::new();
            if let Some(file) = d.file.as_deref().filter(|f| !f.is_empty()) {
                line.push_str(file);
                if let Some([l, c, ..]) = d.span {
                    line.push_str(&format!(":{l}:{c}"));
                }
                line.push_str(": ");
            }
            line.push_str(&self.paint(color, word));
            line.push_str(&format!(": [{plugin}] {text}\n"));
            if let Some(hint) = d.hint.as_deref().filter(|h| !h.is_empty()) {
                line.push_str(&format!("   = help: {hint}\n"));
            }
            self.stderr(&line);
        }
        errors
    }
}

/// The byte span of `[start_line, start_col, end_line, end_col]` (1-based) in the source
/// named `file`, when there is such a source and the position lies in it.
fn locate(sources: &SourceMap, file: &str, span: Option<[i32; 4]>) -> Option<Span> {
    let [l1, c1, l2, c2] = span?;
    let (id, source) = sources.iter().find(|(_, f)| f.path() == file)?;
    let offset = |line: i32, col: i32| -> Option<u32> {
        let line = u32::try_from(line)
            .ok()
            .filter(|l| *l >= 1 && (*l as usize) <= source.line_count())?;
        let col = usize::try_from(col).ok().filter(|c| *c >= 1)?;
        let start = source.line_start(line);
        let text = source.line_text(line);
        let byte = text
            .char_indices()
            .nth(col - 1)
            .map(|(i, _)| i)
            .unwrap_or(text.len());
        Some(start + byte as u32)
    };
    let start = offset(l1, c1)?;
    let end = offset(l2, c2).unwrap_or(start).max(start);
    Some(Span::new(id, start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_spans_map_to_byte_offsets() {
        let mut map = SourceMap::new();
        let id = map.add("a.bop", "struct A {\n    x: int32;\n}\n".to_string());
        let span = locate(&map, "a.bop", Some([2, 5, 2, 6])).unwrap();
        assert_eq!((span.source, span.start, span.end), (id, 15, 16));
        assert!(locate(&map, "b.bop", Some([1, 1, 1, 1])).is_none());
        assert!(locate(&map, "a.bop", Some([9, 1, 9, 1])).is_none());
        assert!(locate(&map, "a.bop", Some([0, 1, 1, 1])).is_none());
        assert!(locate(&map, "a.bop", None).is_none());
    }
}

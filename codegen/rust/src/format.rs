//! Formatting the generated tokens: prettyplease always, then `rustfmt` when available.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::GenerateError;

/// The name of the modules that wrap an item while it is formatted, so that it is laid out
/// at its real depth (prettyplease breaks lines by the width left after the indentation).
const WRAPPER: &str = "__bebop_fmt";

/// Formats the items `tokens` as prettyplease lays them out at module depth `depth`: the
/// lines they take in the whole file, indentation included. Empty for no tokens.
///
/// Formatting item by item gives the same text as formatting the whole file at once (an
/// item's layout does not depend on its neighbours), without ever holding the syntax tree
/// of the whole file.
pub(crate) fn items(depth: usize, tokens: TokenStream) -> Result<String, GenerateError> {
    if tokens.is_empty() {
        return Ok(String::new());
    }
    let text = unparse(depth, tokens)?;
    let lines: Vec<&str> = text.lines().collect();
    let inner = lines
        .get(depth..lines.len().saturating_sub(depth))
        .ok_or_else(|| GenerateError::Internal("a wrapped item lost its wrapper".into()))?;
    let mut out = String::with_capacity(text.len());
    for line in inner {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// `text`, one statement (`item` false) or one item of a module or impl (`item` true), as
/// prettyplease lays it out at `depth` levels of indentation: the lines it takes there,
/// indentation included.
///
/// The text writer uses this for the few constructs whose layout after rustfmt depends on
/// the layout rustfmt is given (rustfmt keeps a statement as written when it cannot format
/// it, as with long qualified paths), so that the output stays what it was when every item
/// went through prettyplease.
pub(crate) fn pretty_fragment(depth: usize, text: &str, item: bool) -> Result<String, String> {
    let tokens: TokenStream = text.parse().map_err(|e| format!("`{text}`: {e}"))?;
    if item {
        return items(depth, tokens).map_err(|e| e.to_string());
    }
    let wrapper = format_ident!("{}", WRAPPER);
    let f = quote!(fn #wrapper() { #tokens });
    let outer = depth.saturating_sub(1);
    let text = items(outer, f).map_err(|e| e.to_string())?;
    let lines: Vec<&str> = text.lines().collect();
    let inner = lines
        .get(1..lines.len().saturating_sub(1))
        .ok_or_else(|| "a wrapped statement lost its function".to_string())?;
    let mut out = String::with_capacity(text.len());
    for line in inner {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// The whole file: `header` (line comments), then `body` with an empty line between
/// consecutive items.
pub(crate) fn finish(header: &str, body: &str) -> String {
    let mut out = String::with_capacity(header.len() + 1 + body.len() + body.len() / 16);
    out.push_str(header);
    out.push('\n');
    space_items_into(&mut out, body);
    out
}

/// `tokens` wrapped in `depth` modules, formatted by prettyplease.
fn unparse(depth: usize, mut tokens: TokenStream) -> Result<String, GenerateError> {
    let wrapper = format_ident!("{}", WRAPPER);
    for _ in 0..depth {
        tokens = quote!(mod #wrapper { #tokens });
    }
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| GenerateError::Internal(format!("generated code does not parse: {e}")))?;
    Ok(prettyplease::unparse(&file))
}

/// Appends `source` to `out` with an empty line between consecutive items (prettyplease
/// writes them back to back): before a line that starts an item or its docs/attributes when
/// the line before, at the same indentation, ends one.
fn space_items_into(out: &mut String, source: &str) {
    const STARTS: &[&str] = &[
        "///", "#[", "impl ", "impl<", "pub ", "const ", "fn ", "mod ", "struct ", "enum ", "type ",
    ];
    let mut prev: Option<(usize, &str)> = None;
    // Text written in rustfmt's layout brings its own empty lines.
    let mut after_blank = false;
    for line in source.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((pindent, ptrimmed)) = prev.filter(|_| !after_blank) {
            let ends_item =
                (ptrimmed.ends_with('}') || ptrimmed.ends_with("};") || ptrimmed.ends_with(");"))
                    && !ptrimmed.starts_with("//")
                    && !ptrimmed.starts_with("#[");
            let starts_item = STARTS.iter().any(|s| trimmed.starts_with(s));
            if pindent == indent && ends_item && starts_item {
                out.push('\n');
            }
        }
        out.push_str(line);
        out.push('\n');
        after_blank = trimmed.is_empty();
        if !trimmed.is_empty() {
            prev = Some((indent, trimmed));
        }
    }
}

/// The `rustfmt` to run: `$RUSTFMT`, else `rustfmt` on `PATH`.
fn rustfmt_binary() -> PathBuf {
    std::env::var_os("RUSTFMT")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("rustfmt"))
}

/// Pipes `source` through `rustfmt --edition 2024`. `Err` carries why it could not be used
/// (not found, or it failed), so the caller can keep the prettyplease output and say so.
pub(crate) fn rustfmt(source: &str) -> Result<String, String> {
    let bin = rustfmt_binary();
    // Run outside any project so that no rustfmt.toml changes the result.
    let mut child = Command::new(&bin)
        .args(["--edition", "2024", "--quiet"])
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", bin.display()))?;
    // Write on another thread so that a large output cannot deadlock the pipes.
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| "rustfmt has no stdin".to_string())?;
    let input = source.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt failed: {e}"))?;
    match writer.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("cannot write to rustfmt: {e}")),
        Err(_) => return Err("rustfmt writer thread panicked".into()),
    }
    if !output.status.success() {
        return Err(format!(
            "rustfmt exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8(output.stdout).map_err(|_| "rustfmt wrote invalid UTF-8".to_string())
}

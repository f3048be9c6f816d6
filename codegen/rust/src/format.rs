//! Formatting the generated tokens: prettyplease always, then `rustfmt` when available.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use proc_macro2::TokenStream;

use crate::GenerateError;

/// Formats `tokens` with prettyplease and prepends `header` (line comments).
pub(crate) fn pretty(header: &str, tokens: TokenStream) -> Result<String, GenerateError> {
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| GenerateError::Internal(format!("generated code does not parse: {e}")))?;
    let body = space_items(&prettyplease::unparse(&file));
    Ok(format!("{header}\n{body}"))
}

/// Puts an empty line between consecutive items (prettyplease writes them back to back):
/// before a line that starts an item or its docs/attributes when the line before, at the
/// same indentation, ends one.
fn space_items(source: &str) -> String {
    const STARTS: &[&str] = &[
        "///", "#[", "impl ", "impl<", "pub ", "const ", "fn ", "mod ", "struct ", "enum ", "type ",
    ];
    let mut out = String::with_capacity(source.len() + source.len() / 16);
    let mut prev: Option<(usize, &str)> = None;
    for line in source.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((pindent, ptrimmed)) = prev {
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
        if !trimmed.is_empty() {
            prev = Some((indent, trimmed));
        }
    }
    out
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

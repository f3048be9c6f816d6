//! Turning what Lua reports into compiler messages with positions in the `.bop` file.

use bebopc::decorator::{DecoratorCall, DecoratorMessage, TargetKind};
use bebopc::diag::Severity;
use bebopc::source::{SourceMap, Span};

use crate::sandbox::{LimitHit, RawSpan};

/// Name given to decorator chunks; Lua prefixes its messages with `decorator:LINE:`.
pub(crate) const CHUNK_NAME: &str = "decorator";

/// Which block of a decorator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// `validate [[ ... ]]`
    Validate,
    /// `export [[ ... ]]`
    Export,
}

impl Block {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Block::Validate => "validate",
            Block::Export => "export",
        }
    }
}

/// The text of a Lua error without mlua's decorations and Lua's traceback.
pub(crate) fn lua_error_text(err: &mlua::Error) -> String {
    let text = match err {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) | mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::CallbackError { cause, traceback } => {
            let inner = lua_error_text(cause);
            if split_location(&inner).0.is_none() {
                // An error raised in a library function: the traceback knows the Lua line.
                if let Some(line) = traceback_line(traceback) {
                    return format!("{CHUNK_NAME}:{line}: {inner}");
                }
            }
            return inner;
        }
        other => other.to_string(),
    };
    match text.find("\nstack traceback:") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The first `decorator:N:` line in a traceback.
fn traceback_line(traceback: &str) -> Option<usize> {
    traceback.lines().find_map(|l| split_location(l.trim()).0)
}

/// Splits `decorator:N: message` into the line and the message.
pub(crate) fn split_location(text: &str) -> (Option<usize>, &str) {
    let Some(rest) = text
        .strip_prefix(CHUNK_NAME)
        .and_then(|r| r.strip_prefix(':'))
    else {
        return (None, text);
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match (
        rest[..digits].parse::<usize>(),
        rest[digits..].strip_prefix(':'),
    ) {
        (Ok(line), Some(msg)) => (Some(line), msg.trim_start()),
        _ => (None, text),
    }
}

/// The span of line `line` (1-based) of a block: the line's text without surrounding
/// blanks, or its start when it is blank. Lines past the end give the last line.
pub(crate) fn block_line_span(block: Span, text: &str, line: usize) -> Span {
    let mut start = 0usize;
    let mut lines = text.split_inclusive('\n');
    let mut current = lines.next().unwrap_or("");
    for _ in 1..line.max(1) {
        match lines.next() {
            Some(next) => {
                start += current.len();
                current = next;
            }
            None => break,
        }
    }
    let body = current.trim_end_matches(['\n', '\r']);
    let lead = body.len() - body.trim_start().len();
    let trimmed = body.trim();
    let s = block.start + (start + lead) as u32;
    Span::new(block.source, s, s + trimmed.len() as u32)
}

/// Rewrites `at line N)` (Lua's note on an unclosed construct) to the line in the file.
fn rewrite_open_line(message: &str, first_line: u32) -> String {
    const MARK: &str = "at line ";
    let Some(at) = message.find(MARK) else {
        return message.to_string();
    };
    let rest = &message[at + MARK.len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[..digits].parse::<u32>() {
        Ok(n) if n >= 1 => format!(
            "{}{MARK}{}{}",
            &message[..at],
            first_line + n - 1,
            &rest[digits..]
        ),
        _ => message.to_string(),
    }
}

/// Describes the decorated element: `field 'price'`, `struct 'Product'`.
pub(crate) fn describe_target(call: &DecoratorCall<'_>) -> String {
    let what = match call.target.kind {
        TargetKind::Member => "enum member",
        TargetKind::Branch => "union branch",
        other => other.as_str(),
    };
    format!("{what} '{}'", call.target.name)
}

/// `shop.bop:12:5`, where the usage is written.
fn usage_location(call: &DecoratorCall<'_>) -> String {
    let span = call.usage.span;
    let at = call.sources.line_col(span.source, span.start);
    format!("{}:{}", call.sources.path(span.source), at)
}

/// A message for an error Lua raised while loading or running a block.
pub(crate) fn lua_failure(
    call: &DecoratorCall<'_>,
    block: Block,
    block_span: Span,
    source: &str,
    err: &mlua::Error,
) -> DecoratorMessage {
    let text = lua_error_text(err);
    let (line, msg) = split_location(&text);
    let first_line = call
        .sources
        .line_col(block_span.source, block_span.start)
        .line;
    let msg = rewrite_open_line(msg, first_line);
    let kind = if matches!(err, mlua::Error::SyntaxError { .. }) {
        "syntax error"
    } else {
        "error"
    };
    DecoratorMessage {
        severity: Severity::Error,
        message: format!(
            "{kind} in the {} block of decorator '{}' (used on {} at {}): {msg}",
            block.name(),
            call.usage.name,
            describe_target(call),
            usage_location(call)
        ),
        span: Some(block_line_span(block_span, source, line.unwrap_or(1))),
    }
}

/// A message for a block stopped by a limit.
pub(crate) fn limit_failure(
    call: &DecoratorCall<'_>,
    block: Block,
    hit: LimitHit,
    instructions: u64,
    memory: usize,
    budget: &crate::Budget,
) -> DecoratorMessage {
    let what = match hit {
        LimitHit::Budget { line } => {
            let at = line
                .map(|l| format!(" (stopped at line {l} of the block)"))
                .unwrap_or_default();
            format!(
                "used up the Lua budget of the whole compilation{at}: {}; decorators together may run {}",
                budget.spent_text(),
                budget.limit_text()
            )
        }
        LimitHit::Instructions { line } => {
            let at = line
                .map(|l| format!(", stopped at line {l} of the block"))
                .unwrap_or_default();
            format!("ran more than {instructions} Lua instructions{at}; is there an endless loop?")
        }
        LimitHit::Memory => format!(
            "used more than {} of memory",
            if memory % (1 << 20) == 0 {
                format!("{} MiB", memory >> 20)
            } else {
                format!("{memory} bytes")
            }
        ),
    };
    DecoratorMessage {
        severity: Severity::Error,
        message: format!(
            "the {} block of decorator '{}' on {} {what}",
            block.name(),
            call.usage.name,
            describe_target(call)
        ),
        span: Some(call.usage.span),
    }
}

/// Resolves a span given by Lua code. `start_line`/`start_col` decide the position (as in
/// the reference); `off` is used when it names the same position; `len` defaults to 1.
/// Positions outside the file fall back to the usage.
pub(crate) fn resolve_span(raw: RawSpan, usage: Span, sources: &SourceMap) -> Span {
    let Some(file) = sources.get(usage.source) else {
        return usage;
    };
    let text = file.text();
    if raw.line < 1 || raw.col < 1 || raw.line as usize > file.line_count() {
        return usage;
    }
    let line = raw.line as u32;
    let line_start = file.line_start(line) as usize;
    let line_text = file.line_text(line);
    let col_offset = line_text
        .char_indices()
        .nth(raw.col as usize - 1)
        .map_or(line_text.len(), |(i, _)| i);
    let mut start = line_start + col_offset;
    if let Some(off) = raw.off {
        if let Ok(off) = u32::try_from(off) {
            let lc = file.line_col(off);
            if (off as usize) <= text.len() && lc.line == line && lc.column as i64 == raw.col {
                start = off as usize;
            }
        }
    }
    let len = raw.len.unwrap_or(1).clamp(0, text.len() as i64) as usize;
    let mut end = (start + len).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    Span::new(usage.source, start as u32, end as u32)
}

/// A message recorded by `error` or `warn`.
pub(crate) fn recorded(
    call: &DecoratorCall<'_>,
    severity: Severity,
    message: String,
    span: Option<RawSpan>,
) -> DecoratorMessage {
    DecoratorMessage {
        severity,
        message,
        span: Some(span.map_or(call.usage.span, |raw| {
            resolve_span(raw, call.usage.span, call.sources)
        })),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bebopc::source::SourceId;

    #[test]
    fn locations_are_split_off() {
        assert_eq!(
            split_location("decorator:3: attempt to compare"),
            (Some(3), "attempt to compare")
        );
        assert_eq!(split_location("boom"), (None, "boom"));
        assert_eq!(split_location("decorator:x: y"), (None, "decorator:x: y"));
    }

    #[test]
    fn block_lines_are_trimmed() {
        let block = Span::new(SourceId(0), 100, 140);
        let text = "\n    if x then\n        error('y')\n    end\n";
        assert_eq!(
            block_line_span(block, text, 2),
            Span::new(SourceId(0), 105, 114)
        );
        assert_eq!(
            block_line_span(block, text, 3),
            Span::new(SourceId(0), 123, 133)
        );
        assert_eq!(
            block_line_span(block, text, 1),
            Span::new(SourceId(0), 100, 100)
        );
        assert_eq!(
            block_line_span(block, text, 99),
            Span::new(SourceId(0), 138, 141)
        );
    }

    #[test]
    fn open_lines_are_rewritten() {
        assert_eq!(
            rewrite_open_line("'end' expected (to close 'if' at line 2) near <eof>", 10),
            "'end' expected (to close 'if' at line 11) near <eof>"
        );
        assert_eq!(rewrite_open_line("no line here", 10), "no line here");
    }
}

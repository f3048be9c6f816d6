//! Generated code written directly as text, laid out as `rustfmt` (default configuration,
//! edition 2024) lays it out, so that no token tree, syntax tree or external formatter is
//! needed.
//!
//! The generator knows the shape of everything it writes, so the layout decisions are made
//! where the code is written, with the few rules of rustfmt that the generated code meets:
//! an item or statement stays on one line when it fits in [`MAX_WIDTH`] columns, a function
//! signature that does not fit puts one parameter per line, a call whose arguments do not
//! fit in [`CALL_WIDTH`] puts one argument per line, and consecutive `#[derive]`s become
//! one. `tests/layout.rs` checks the output against rustfmt itself.

use std::fmt::{self, Write};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// rustfmt's `max_width`: the longest line, indentation included.
pub(crate) const MAX_WIDTH: usize = 100;

/// rustfmt's `fn_call_width`: the widest argument list a call keeps on one line.
pub(crate) const CALL_WIDTH: usize = 60;

/// rustfmt's `attr_fn_like_width`: the widest argument list of an attribute kept on one line.
pub(crate) const ATTR_WIDTH: usize = 70;

/// rustfmt's `chain_width`: the widest method chain kept on one line.
pub(crate) const CHAIN_WIDTH: usize = 60;

/// rustfmt's `struct_lit_width`: the widest fields of a struct literal kept on one line.
pub(crate) const STRUCT_LIT_WIDTH: usize = 18;

/// rustfmt's `array_width`: the widest items of an array kept on one line.
pub(crate) const ARRAY_WIDTH: usize = 60;

/// One level of indentation.
const INDENT: &str = "    ";

/// Text of generated code being written at an indentation depth: `open("impl Name")`
/// writes `impl Name {` and indents, `line` writes a line, `close` writes `}`.
pub(crate) struct Code {
    text: String,
    depth: usize,
    /// The traits of `#[derive]` attributes written since the last other line: rustfmt
    /// merges consecutive derives into one, so they are written when something else is.
    derives: Vec<String>,
}

impl Code {
    /// An empty text whose lines start at `depth` levels of indentation.
    pub(crate) fn new(depth: usize) -> Self {
        Code {
            text: String::new(),
            depth,
            derives: Vec::new(),
        }
    }

    /// The text written.
    pub(crate) fn into_text(mut self) -> String {
        self.flush_derives();
        self.text
    }

    /// `#[derive(traits)]`, merged with the derives right before or after it.
    pub(crate) fn derive<S: AsRef<str>>(&mut self, traits: &[S]) {
        self.derives
            .extend(traits.iter().map(|t| t.as_ref().to_string()));
    }

    /// The pending derive: on one line when it ends four columns before [`MAX_WIDTH`]
    /// (rustfmt keeps that margin for derives), else its traits on one line between
    /// `#[derive(` and `)]` when they fit there (the comma may reach past the width), else
    /// one trait per line.
    fn flush_derives(&mut self) {
        if self.derives.is_empty() {
            return;
        }
        let traits = std::mem::take(&mut self.derives);
        let len = joined_len(&traits, 2);
        if self.fits(len + "#[derive()]".len() + 4) {
            self.line(format_args!("#[derive({})]", Joined(&traits, ", ")));
            return;
        }
        self.line("#[derive(");
        self.depth += 1;
        if self.fits(len) {
            self.line(format_args!("{},", Joined(&traits, ", ")));
        } else {
            for t in &traits {
                self.line(format_args!("{t},"));
            }
        }
        self.depth -= 1;
        self.line(")]");
    }

    /// The width of the current indentation.
    pub(crate) fn indent_width(&self) -> usize {
        self.depth * INDENT.len()
    }

    /// Whether a line of `len` characters after the indentation fits in [`MAX_WIDTH`].
    pub(crate) fn fits(&self, len: usize) -> bool {
        self.depth * INDENT.len() + len <= MAX_WIDTH
    }

    fn indent(&mut self) {
        self.flush_derives();
        for _ in 0..self.depth {
            self.text.push_str(INDENT);
        }
    }

    /// One line at the current depth.
    pub(crate) fn line(&mut self, text: impl fmt::Display) {
        self.indent();
        // Writing into a `String` cannot fail.
        let _ = write!(self.text, "{text}");
        self.text.push('\n');
    }

    /// An empty line.
    pub(crate) fn blank(&mut self) {
        self.flush_derives();
        self.text.push('\n');
    }

    /// `head {` and one level deeper.
    pub(crate) fn open(&mut self, head: impl fmt::Display) {
        self.indent();
        let _ = write!(self.text, "{head} {{");
        self.text.push('\n');
        self.depth += 1;
    }

    /// One level shallower and `}`.
    pub(crate) fn close(&mut self) {
        self.close_with("");
    }

    /// One level shallower and `}` followed by `tail` (`,`, `)`, `;`).
    pub(crate) fn close_with(&mut self, tail: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.indent();
        self.text.push('}');
        self.text.push_str(tail);
        self.text.push('\n');
    }

    /// `} head {`: closes a block and opens the next one (`else`, `else if x`).
    pub(crate) fn close_open(&mut self, head: impl fmt::Display) {
        self.depth = self.depth.saturating_sub(1);
        self.open(format_args!("}} {head}"));
    }

    /// One level deeper without a line (the continuation of a broken construct).
    pub(crate) fn push_depth(&mut self) {
        self.depth += 1;
    }

    /// One level shallower without a line.
    pub(crate) fn pop_depth(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// `///` lines: one per element, an empty element an empty doc line.
    pub(crate) fn docs<S: AsRef<str>>(&mut self, lines: &[S]) {
        for line in lines {
            let line = line.as_ref().trim_end();
            self.indent();
            self.text.push_str("///");
            if !line.is_empty() {
                self.text.push(' ');
                self.text.push_str(line);
            }
            self.text.push('\n');
        }
    }

    /// A function signature followed by `tail` (` {` opens the body, one level deeper;
    /// `;` declares it): `head(params) ret` on one line when it fits, else one parameter
    /// per line. `ret` is empty or ` -> Type`.
    pub(crate) fn signature(&mut self, head: &str, params: &[&str], ret: &str, tail: &str) {
        let one_line = head.len()
            + 1
            + params.iter().map(|p| p.len()).sum::<usize>()
            + 2 * params.len().saturating_sub(1)
            + 1
            + ret.len()
            + tail.len();
        if self.fits(one_line) {
            self.line(format_args!("{head}({}){ret}{tail}", Joined(params, ", ")));
        } else {
            self.line(format_args!("{head}("));
            self.depth += 1;
            for p in params {
                self.line(format_args!("{p},"));
            }
            self.depth -= 1;
            // rustfmt counts the indentation twice when it decides where the `{` after
            // the return type goes.
            let indent = self.depth * INDENT.len();
            if tail == " {" && !self.fits(indent + 1 + ret.len() + tail.len()) {
                self.line(format_args!("){ret}"));
                self.line("{");
            } else {
                self.line(format_args!("){ret}{tail}"));
            }
        }
        if tail.ends_with('{') {
            self.depth += 1;
        }
    }

    /// [`Code::signature`] of a function returning `ret` and opening its body. When the
    /// return type does not fit after the broken parameters, rustfmt leaves the signature as
    /// prettyplease wrote it: the type's generic arguments one per line, `>{` after them.
    pub(crate) fn signature_returning(&mut self, head: &str, params: &[&str], ret: &TyText) {
        let ret_text = format!(" -> {ret}");
        let one_line = head.len() + 2 + joined_len(params, 2) + ret_text.len() + 2;
        if self.fits(one_line) || self.fits(1 + ret_text.len()) || ret.args.is_empty() {
            self.signature(head, params, &ret_text, " {");
            return;
        }
        self.broken_signature_ret(head, params, ret);
        for a in &ret.args {
            self.line(format_args!("{a},"));
        }
        self.depth -= 1;
        self.line(">{");
        self.depth += 1;
    }

    /// The start of a signature whose parameters and return type both break: `head(`, one
    /// parameter per line, `) -> Head<`, one level deeper for the type's arguments.
    fn broken_signature_ret(&mut self, head: &str, params: &[&str], ret: &TyText) {
        self.line(format_args!("{head}("));
        self.depth += 1;
        for p in params {
            self.line(format_args!("{p},"));
        }
        self.depth -= 1;
        self.line(format_args!(") -> {}<", ret.head));
        self.depth += 1;
    }

    /// `prefix callee(args)suffix`: on one line when it fits and the arguments are one or
    /// at most [`CALL_WIDTH`] wide, else one argument per line with a trailing comma.
    ///
    /// A macro call (`callee` ends in `!`) gets no trailing comma.
    pub(crate) fn call(&mut self, prefix: &str, callee: &str, args: &[&str], suffix: &str) {
        let args_len = joined_len(args, 2);
        let len = prefix.len() + callee.len() + 2 + args_len + suffix.len();
        if (args_len <= CALL_WIDTH || args.len() == 1) && self.fits(len) {
            self.line(format_args!(
                "{prefix}{callee}({}){suffix}",
                Joined(args, ", ")
            ));
        } else {
            self.line(format_args!("{prefix}{callee}("));
            self.depth += 1;
            let last = if callee.ends_with('!') { "" } else { "," };
            for (i, a) in args.iter().enumerate() {
                let comma = if i + 1 < args.len() { "," } else { last };
                self.line(format_args!("{a}{comma}"));
            }
            self.depth -= 1;
            self.line(format_args!("){suffix}"));
        }
    }

    /// `head for self_ty {` (an impl header, `head` being `impl<generics> Trait`), one level
    /// deeper, as rustfmt lays it out:
    ///
    /// * the trait stays after `impl<generics>` when it fits there (indentation counted),
    ///   else it goes on the next line, one level deeper, its generic arguments one per
    ///   line when it does not fit there either;
    /// * `for self_ty` follows the trait's last line when that is at most [`MAX_WIDTH`]
    ///   wide *without* the first line's indentation (rustfmt measures it so: a nested
    ///   header may reach past the width), else it goes on a line of its own;
    /// * `{` ends a header of one line, else it opens the next line.
    pub(crate) fn impl_open(&mut self, head: &str, self_ty: &str) {
        let (generics, trait_ref) = split_impl_head(head);
        let for_self = format!(" for {self_ty}");
        if self.fits(head.len()) {
            if head.len() + for_self.len() + 2 <= MAX_WIDTH {
                self.line(format_args!("{head}{for_self} {{"));
            } else {
                self.line(head);
                self.depth += 1;
                self.line(for_self.trim_start());
                self.depth -= 1;
                self.line("{");
            }
        } else {
            self.line(generics);
            self.depth += 1;
            let ty = TyText::parse(trait_ref);
            let last = if ty.args.is_empty() || self.fits(trait_ref.len()) {
                trait_ref.to_string()
            } else {
                self.line(format_args!("{}<", ty.head));
                self.depth += 1;
                for a in &ty.args {
                    self.ty("", a, ",");
                }
                self.depth -= 1;
                ">".to_string()
            };
            if self.depth * INDENT.len() + last.len() + for_self.len() + 2 <= MAX_WIDTH {
                self.line(format_args!("{last}{for_self}"));
            } else {
                self.line(last);
                self.line(for_self.trim_start());
            }
            self.depth -= 1;
            self.line("{");
        }
        self.depth += 1;
    }

    /// `prefix callee(inner(args))suffix`, a call whose one argument is a call: on one
    /// line when it fits, else the inner call's arguments one per line, the inner call
    /// continuing the outer one's line (`callee(inner(`).
    pub(crate) fn call_of_call(
        &mut self,
        prefix: &str,
        callee: &str,
        inner: &str,
        args: &[&str],
        suffix: &str,
    ) {
        let args_len = joined_len(args, 2);
        let len = prefix.len() + callee.len() + inner.len() + 4 + args_len + suffix.len();
        if (args_len <= CALL_WIDTH || args.len() == 1) && self.fits(len) {
            self.line(format_args!(
                "{prefix}{callee}({inner}({})){suffix}",
                Joined(args, ", ")
            ));
        } else {
            self.call(
                &format!("{prefix}{callee}("),
                inner,
                args,
                &format!("){suffix}"),
            );
        }
    }

    /// A match arm `pat => body,`: on one line when it fits, else the body in a block.
    pub(crate) fn arm(&mut self, pat: impl fmt::Display, body: impl fmt::Display) {
        let (pat, body) = (pat.to_string(), body.to_string());
        if self.fits(pat.len() + 4 + body.len() + 1) {
            self.line(format_args!("{pat} => {body},"));
        } else {
            self.open(format_args!("{pat} =>"));
            self.line(body);
            self.close();
        }
    }

    /// A match arm whose body is the call `callee(args)` (a macro call when `callee` ends
    /// in `!`): on one line when it fits; in a block when the call fits on a line of its
    /// own; else a function call's arguments one per line after `pat => callee(`, a macro
    /// call's in a block.
    pub(crate) fn arm_call(&mut self, pat: &str, callee: &str, args: &[&str]) {
        let args_len = joined_len(args, 2);
        let call_len = callee.len() + 2 + args_len;
        let one_line_args = args_len <= CALL_WIDTH || args.len() == 1;
        if one_line_args && self.fits(pat.len() + 4 + call_len + 1) {
            self.line(format_args!("{pat} => {callee}({}),", Joined(args, ", ")));
        } else if (one_line_args && self.fits(INDENT.len() + call_len)) || callee.ends_with('!') {
            self.open(format_args!("{pat} =>"));
            self.call("", callee, args, "");
            self.close();
        } else {
            self.call(&format!("{pat} => "), callee, args, ",");
        }
    }

    /// `lhs = rhs;` (a `const`, `let` or assignment): on one line when it fits, else the
    /// right-hand side on the next line, one level deeper.
    pub(crate) fn assign(&mut self, lhs: &str, rhs: &str) {
        // When the right-hand side fits on neither line, rustfmt leaves the line as it is.
        if self.fits(lhs.len() + 3 + rhs.len() + 1) || !self.fits(INDENT.len() + rhs.len() + 1) {
            self.line(format_args!("{lhs} = {rhs};"));
        } else {
            self.line(format_args!("{lhs} ="));
            self.depth += 1;
            self.line(format_args!("{rhs};"));
            self.depth -= 1;
        }
    }

    /// `prefix Path { fields }suffix`, a struct literal: on one line when the fields are
    /// at most [`STRUCT_LIT_WIDTH`] wide and the line fits, else one field per line.
    pub(crate) fn struct_lit(&mut self, prefix: &str, path: &str, fields: &[&str], suffix: &str) {
        let fields_len = joined_len(fields, 2);
        if fields.is_empty() {
            self.line(format_args!("{prefix}{path} {{}}{suffix}"));
        } else if fields_len <= STRUCT_LIT_WIDTH
            && self.fits(prefix.len() + path.len() + fields_len + 5 + suffix.len())
        {
            self.line(format_args!(
                "{prefix}{path} {{ {} }}{suffix}",
                Joined(fields, ", ")
            ));
        } else {
            self.line(format_args!("{prefix}{path} {{"));
            self.depth += 1;
            for f in fields {
                self.line(format_args!("{f},"));
            }
            self.depth -= 1;
            self.line(format_args!("}}{suffix}"));
        }
    }

    /// `lhs = Path { fields };`: as [`Code::struct_lit`], except that a literal that
    /// would break but fits on the next line goes there, one level deeper.
    pub(crate) fn assign_struct(&mut self, lhs: &str, path: &str, fields: &[&str]) {
        if let Some((name, ty)) = self.split_typed_lhs(lhs) {
            self.line(format_args!("{name}:"));
            self.depth += 1;
            self.struct_lit(&format!("{ty} = "), path, fields, ";");
            self.depth -= 1;
            return;
        }
        let fields_len = joined_len(fields, 2);
        let one_line = (fields_len <= STRUCT_LIT_WIDTH).then_some(path.len() + fields_len + 5);
        self.assign_with(lhs, one_line, |code, prefix| {
            code.struct_lit(prefix, path, fields, ";")
        });
    }

    /// `lhs = rhs;` where `rhs` is written by `write` after a prefix, and takes
    /// `one_line` columns when it may stay on one line: when it may but does not fit after
    /// `lhs = `, it goes on the next line, one level deeper (rustfmt prefers a right-hand
    /// side on one line of its own to one broken over several).
    fn assign_with(
        &mut self,
        lhs: &str,
        one_line: Option<usize>,
        write: impl FnOnce(&mut Self, &str),
    ) {
        match one_line {
            Some(len)
                if !self.fits(lhs.len() + 3 + len + 1) && self.fits(INDENT.len() + len + 1) =>
            {
                self.line(format_args!("{lhs} ="));
                self.depth += 1;
                write(self, "");
                self.depth -= 1;
            }
            _ => write(self, &format!("{lhs} = ")),
        }
    }

    /// `lhs = rhs;` where `rhs` ends in `?`: as [`Code::assign`], except that rustfmt keeps
    /// two columns free on a one-line `let` ending in `?;` (measured).
    ///
    /// When `rhs` fits on neither line, rustfmt leaves it on the first, except that a call
    /// without arguments (`rhs` ending in `()?`) then breaks between its parentheses on the
    /// next line.
    pub(crate) fn assign_try(&mut self, lhs: &str, rhs: &str) {
        let next_fits = self.fits(INDENT.len() + rhs.len() + 1);
        if let (false, Some(callee)) = (next_fits, rhs.strip_suffix("()?")) {
            self.line(format_args!("{lhs} ="));
            self.depth += 1;
            self.line(format_args!("{callee}("));
            self.line(")?;");
            self.depth -= 1;
        } else if self.fits(lhs.len() + 3 + rhs.len() + 3) || !next_fits {
            self.line(format_args!("{lhs} = {rhs};"));
        } else {
            self.line(format_args!("{lhs} ="));
            self.depth += 1;
            self.line(format_args!("{rhs};"));
            self.depth -= 1;
        }
    }

    /// `root.method(args)tries` (a method chain whose root is short, `self.0`) followed by
    /// `suffix`, as rustfmt lays out a chain of one call after its root:
    ///
    /// * on one line when the chain is at most [`CHAIN_WIDTH`] wide and fits (rustfmt
    ///   counts the `tries`, a trailing `?`, twice);
    /// * else, when the call's arguments must break anyway, the call stays after the root
    ///   and its arguments go one per line ("overflow"), provided `root.method(` is within
    ///   the chain width and the broken call takes at least five lines, or no fewer lines
    ///   than it would take on a line of its own;
    /// * else the call goes on the next line, one level deeper.
    pub(crate) fn chain(
        &mut self,
        root: &str,
        method: &str,
        args: &[&str],
        tries: &str,
        suffix: &str,
    ) {
        let args_len = joined_len(args, 2);
        let flat_args = args_len <= CALL_WIDTH || args.len() == 1;
        let last_flat = method.len() + 2 + args_len;
        let almost = root.len() + tries.len();
        let budget = CHAIN_WIDTH.saturating_sub(almost);
        let tail = tries.len() + suffix.len();
        let overflow = if flat_args && self.fits(root.len() + last_flat + tail) {
            // The call's rewrite includes the tries, which `almost` counts already.
            if last_flat + tries.len() <= budget {
                self.line(format_args!(
                    "{root}{method}({}){tries}{suffix}",
                    Joined(args, ", ")
                ));
                return;
            }
            false
        } else {
            let broken_lines = args.len() + 2;
            if method.len() + 1 > budget {
                false
            } else if broken_lines >= 5 {
                true
            } else {
                let own_flat = flat_args && self.fits(INDENT.len() + last_flat + tail);
                !own_flat
            }
        };
        if overflow {
            self.call(root, method, args, &format!("{tries}{suffix}"));
        } else {
            self.line(root);
            self.depth += 1;
            self.call("", method, args, &format!("{tries}{suffix}"));
            self.depth -= 1;
        }
    }

    /// `name` and `Type` of `lhs` (`pub const name: Type`) when `lhs =` does not fit: rustfmt
    /// then breaks after the colon.
    fn split_typed_lhs<'l>(&self, lhs: &'l str) -> Option<(&'l str, &'l str)> {
        if self.fits(lhs.len() + 2) {
            return None;
        }
        lhs.rsplit_once(": ")
    }

    /// The current depth.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Lines already laid out for the current depth (indentation included).
    pub(crate) fn raw(&mut self, lines: &str) {
        self.flush_derives();
        self.text.push_str(lines);
    }

    /// Items given as tokens, as prettyplease lays them out at the current depth (rustfmt,
    /// when it runs, lays them out again).
    pub(crate) fn formatted(&mut self, tokens: TokenStream) -> Result<(), crate::GenerateError> {
        let lines = crate::format::items(self.depth, tokens)?;
        self.raw(&lines);
        Ok(())
    }

    /// [`Code::signature`] of a function returning `ret`, followed by `tail` (` {` opens the
    /// body, `;` declares it): when even `) -> ret` does not fit after the broken
    /// parameters, the return type's generic arguments go one per line between `Head<` and
    /// `>`, as rustfmt breaks them.
    pub(crate) fn signature_ret(&mut self, head: &str, params: &[&str], ret: &TyText, tail: &str) {
        let ret_text = format!(" -> {ret}");
        let one_line = head.len() + 2 + joined_len(params, 2) + ret_text.len() + tail.len();
        // rustfmt keeps `) -> ret` on one line up to one column past the width.
        if self.fits(one_line) || self.fits(ret_text.len() - 1) || ret.args.is_empty() {
            self.signature(head, params, &ret_text, tail);
            return;
        }
        self.broken_signature_ret(head, params, ret);
        // An argument too long for its line makes rustfmt give up on the signature and keep
        // prettyplease's layout: the arguments whole, `>{` after them.
        let kept = ret.args.iter().any(|a| !self.fits(a.flat_len() + 1));
        for a in &ret.args {
            if kept {
                self.line(format_args!("{a},"));
            } else {
                self.ty("", a, ",");
            }
        }
        self.depth -= 1;
        let tail = if kept { tail.trim_start() } else { tail };
        self.line(format_args!(">{tail}"));
        if tail.ends_with('{') {
            self.depth += 1;
        }
    }

    /// `lhs = callee(t1 op t2);`, a macro call on a binary expression (`assert!(a == b)`):
    /// on one line when it fits, else the call alone on the next line, else the expression
    /// broken before the operator inside the call's parentheses.
    pub(crate) fn assign_macro_binary(
        &mut self,
        lhs: &str,
        callee: &str,
        terms: &[&str],
        op: &str,
    ) {
        let call_len = callee.len() + 2 + joined_len(terms, op.len() + 2);
        if self.fits(lhs.len() + 3 + call_len + 1) {
            self.line(format_args!(
                "{lhs} = {callee}({});",
                Joined(terms, &format!(" {op} "))
            ));
        } else if self.fits(INDENT.len() + call_len + 1) {
            self.line(format_args!("{lhs} ="));
            self.depth += 1;
            self.line(format_args!(
                "{callee}({});",
                Joined(terms, &format!(" {op} "))
            ));
            self.depth -= 1;
        } else {
            self.line(format_args!("{lhs} = {callee}("));
            self.depth += 1;
            self.binary("", terms, op, "");
            self.depth -= 1;
            self.line(");");
        }
    }

    /// `lhs = amp[words];`, an array of plain words (paths, constants): on one line when
    /// the words are at most [`ARRAY_WIDTH`] wide and it fits (on the next line when it
    /// does not fit after `lhs = `), else one word per line.
    pub(crate) fn assign_words(&mut self, lhs: &str, amp: &str, words: &[&str]) {
        let flat_len = joined_len(words, 2);
        let one_line = (flat_len <= ARRAY_WIDTH).then_some(amp.len() + 2 + flat_len);
        self.assign_with(lhs, one_line, |code, prefix| {
            if flat_len <= ARRAY_WIDTH && code.fits(prefix.len() + amp.len() + 2 + flat_len + 1) {
                code.line(format_args!("{prefix}{amp}[{}];", Joined(words, ", ")));
            } else {
                code.line(format_args!("{prefix}{amp}["));
                code.depth += 1;
                for w in words {
                    code.line(format_args!("{w},"));
                }
                code.depth -= 1;
                code.line("];");
            }
        });
    }

    /// A match arm `pat => callee(inner(args, mac!(mac_args))),` (a call of a call whose
    /// last argument is a macro call), as rustfmt lays it out: on one line when it fits,
    /// else in a block when it fits there on one line; else the inner call's arguments one
    /// per line after `pat => callee(inner(` when that fits; else in a block, with the
    /// macro's arguments one per line when it does not fit on its line.
    pub(crate) fn arm_call_of_call(
        &mut self,
        pat: &str,
        callee: &str,
        inner: &str,
        args: &[&str],
        mac: (&str, &[&str]),
    ) {
        let mac_text = format!("{}({})", mac.0, Joined(mac.1, ", "));
        let mut all = args.to_vec();
        all.push(&mac_text);
        let args_len = joined_len(&all, 2);
        let head = callee.len() + 1 + inner.len() + 1;
        let flat = head + args_len + 2;
        let args_fit = |code: &Self| all.iter().all(|a| code.fits(INDENT.len() + a.len() + 1));
        if args_len <= CALL_WIDTH && self.fits(pat.len() + 4 + flat + 1) {
            self.line(format_args!(
                "{pat} => {callee}({inner}({})),",
                Joined(&all, ", ")
            ));
        } else if args_len <= CALL_WIDTH && self.fits(INDENT.len() + flat) {
            self.open(format_args!("{pat} =>"));
            self.line(format_args!("{callee}({inner}({}))", Joined(&all, ", ")));
            self.close();
        } else if self.fits(pat.len() + 4 + head + 2) && args_fit(self) {
            // The first line keeps room for the outer call's `)` and the arm's `,`.
            self.line(format_args!("{pat} => {callee}({inner}("));
            self.depth += 1;
            for a in &all {
                self.line(format_args!("{a},"));
            }
            self.depth -= 1;
            self.line(")),");
        } else {
            self.open(format_args!("{pat} =>"));
            self.line(format_args!("{callee}({inner}("));
            self.depth += 1;
            for a in args {
                self.line(format_args!("{a},"));
            }
            self.call("", mac.0, mac.1, ",");
            self.depth -= 1;
            self.line("))");
            self.close();
        }
    }

    /// `text` (a statement, or an item when `item`) as prettyplease lays it out at the
    /// current depth (see [`crate::format::pretty_fragment`]); on one line when that cannot
    /// be done (the code is the same).
    pub(crate) fn pretty(&mut self, text: &str, item: bool) {
        self.flush_derives();
        match crate::format::pretty_fragment(self.depth, text, item) {
            Ok(lines) => self.text.push_str(&lines),
            Err(_) => self.line(text),
        }
    }

    /// `lhs = callee(args);`: as [`Code::call`], except that a call that would break but
    /// fits on the next line goes there, one level deeper.
    pub(crate) fn assign_call(&mut self, lhs: &str, callee: &str, args: &[&str]) {
        let args_len = joined_len(args, 2);
        if !self.fits(lhs.len() + 3 + callee.len() + 1) {
            // Not even `lhs = callee(` fits: the call goes on the next line.
            self.line(format_args!("{lhs} ="));
            self.depth += 1;
            self.call("", callee, args, ";");
            self.depth -= 1;
            return;
        }
        let one_line =
            (args_len <= CALL_WIDTH || args.len() == 1).then_some(callee.len() + 2 + args_len);
        self.assign_with(lhs, one_line, |code, prefix| {
            code.call(prefix, callee, args, ";")
        });
    }

    /// `lhs = &[items];`: as [`Code::array`], except that an array that would break but
    /// fits on the next line goes there, one level deeper.
    pub(crate) fn assign_array(&mut self, lhs: &str, amp: &str, items: &[Tuple<'_>]) {
        let flat_len = joined_len(&items.iter().map(Tuple::flat).collect::<Vec<_>>(), 2);
        let one_line = (flat_len <= ARRAY_WIDTH).then_some(amp.len() + 2 + flat_len);
        self.assign_with(lhs, one_line, |code, prefix| {
            code.array(prefix, amp, items, ";")
        });
    }

    /// `prefix&[items]suffix` (an array or slice expression of tuples, `amp` is `&` or
    /// empty): on one line when the items are at most [`ARRAY_WIDTH`] wide and the line
    /// fits, else one item per line.
    pub(crate) fn array(&mut self, prefix: &str, amp: &str, items: &[Tuple<'_>], suffix: &str) {
        let flat: Vec<String> = items.iter().map(Tuple::flat).collect();
        let items_len = joined_len(&flat, 2);
        if items_len <= ARRAY_WIDTH
            && self.fits(prefix.len() + amp.len() + 2 + items_len + suffix.len())
        {
            self.line(format_args!(
                "{prefix}{amp}[{}]{suffix}",
                Joined(&flat, ", ")
            ));
        } else if let [Tuple(parts)] = items {
            // A single tuple continues on the line of the bracket.
            self.line(format_args!("{prefix}{amp}[("));
            self.depth += 1;
            for p in *parts {
                self.line(format_args!("{p},"));
            }
            self.depth -= 1;
            self.line(format_args!(")]{suffix}"));
        } else {
            self.line(format_args!("{prefix}{amp}["));
            self.depth += 1;
            for i in items {
                self.call("", "", i.0, ",");
            }
            self.depth -= 1;
            self.line(format_args!("]{suffix}"));
        }
    }

    /// `root.method(arg)suffix` where `root` is `callee(args)`: on one line when it fits;
    /// else `root` (broken as [`Code::call`] breaks it when it must be) and
    /// `.method(arg)suffix` on the next line, one level deeper after a one-line root.
    pub(crate) fn call_then(&mut self, callee: &str, args: &[&str], method: &str, suffix: &str) {
        let args_len = joined_len(args, 2);
        let root_len = callee.len() + 2 + args_len;
        if self.fits(root_len + method.len() + suffix.len()) && args_len <= CALL_WIDTH {
            self.line(format_args!(
                "{callee}({}){method}{suffix}",
                Joined(args, ", ")
            ));
        } else if args_len <= CALL_WIDTH && self.fits(root_len) {
            self.line(format_args!("{callee}({})", Joined(args, ", ")));
            self.depth += 1;
            self.line(format_args!("{method}{suffix}"));
            self.depth -= 1;
        } else {
            self.call("", callee, args, "");
            self.line(format_args!("{method}{suffix}"));
        }
    }

    /// `prefix Type suffix`: on one line when it fits, else the type's generic arguments one
    /// per line (each laid out the same way) between `Head<` and `>`.
    pub(crate) fn ty(&mut self, prefix: &str, ty: &TyText, suffix: &str) {
        if ty.args.is_empty() || self.fits(prefix.len() + ty.flat_len() + suffix.len()) {
            self.line(format_args!("{prefix}{ty}{suffix}"));
        } else {
            self.line(format_args!("{prefix}{}<", ty.head));
            self.depth += 1;
            for a in &ty.args {
                self.ty("", a, ",");
            }
            self.depth -= 1;
            self.line(format_args!(">{suffix}"));
        }
    }

    /// `prefix Type suffix` where the type follows a colon (`pub name: Type,`): on one line
    /// when it fits, else the type alone on the next line, one level deeper, when it fits
    /// there, else broken after `prefix` as [`Code::ty`] breaks it.
    pub(crate) fn typed(&mut self, prefix: &str, ty: &TyText, suffix: &str) {
        let len = ty.flat_len() + suffix.len();
        if self.fits(prefix.len() + len) || ty.args.is_empty() {
            self.line(format_args!("{prefix}{ty}{suffix}"));
        } else if self.fits(INDENT.len() + len) {
            self.line(prefix.trim_end());
            self.depth += 1;
            self.line(format_args!("{ty}{suffix}"));
            self.depth -= 1;
        } else {
            self.ty(prefix, ty, suffix);
        }
    }

    /// `prefix t1 op t2 op t3suffix`, a chain of one binary operator: on one line when it
    /// fits, else one term per line, the first after `prefix` and the others one level
    /// deeper after the operator.
    pub(crate) fn binary<S: AsRef<str> + fmt::Display>(
        &mut self,
        prefix: &str,
        terms: &[S],
        op: &str,
        suffix: &str,
    ) {
        let len = joined_len(terms, op.len() + 2);
        if self.fits(prefix.len() + len + suffix.len()) {
            self.line(format_args!(
                "{prefix}{}{suffix}",
                Joined(terms, &format!(" {op} "))
            ));
            return;
        }
        for (i, line) in binary_lines(terms, op, suffix).iter().enumerate() {
            if i == 0 {
                self.line(format_args!("{prefix}{line}"));
                self.depth += 1;
            } else {
                self.line(line);
            }
        }
        self.depth -= 1;
    }

    /// Whether [`Code::binary`] would write every line within [`MAX_WIDTH`].
    pub(crate) fn binary_fits<S: AsRef<str>>(
        &self,
        prefix: &str,
        terms: &[S],
        op: &str,
        suffix: &str,
    ) -> bool {
        let len = joined_len(terms, op.len() + 2);
        if self.fits(prefix.len() + len + suffix.len()) {
            return true;
        }
        binary_lines(terms, op, suffix)
            .iter()
            .enumerate()
            .all(|(i, l)| {
                if i == 0 {
                    self.fits(prefix.len() + l.len())
                } else {
                    self.fits(INDENT.len() + l.len())
                }
            })
    }

    /// `lhs = t1 op t2 ..;`: as [`Code::binary`], except that a chain that would break but
    /// fits on the next line goes there, one level deeper.
    pub(crate) fn assign_binary<S: AsRef<str> + fmt::Display>(
        &mut self,
        lhs: &str,
        terms: &[S],
        op: &str,
    ) {
        let len = joined_len(terms, op.len() + 2);
        self.assign_with(lhs, Some(len), |code, prefix| {
            code.binary(prefix, terms, op, ";")
        });
    }

    /// An attribute `#[name(args)]` laid out as rustfmt lays out function-like attributes:
    /// one line when the arguments are at most [`ATTR_WIDTH`] wide and the line fits; a
    /// single list argument continued on the same line (`#[cfg(all(`); else one argument
    /// per line without a trailing comma, each laid out the same way.
    pub(crate) fn attr(&mut self, name: &str, args: &[Meta]) {
        self.meta_list(&format!("#[{name}("), args, ")]");
    }

    /// [`Code::attr`] with arguments given as text (words or `key = value`).
    pub(crate) fn attr_words(&mut self, name: &str, args: &[&str]) {
        let args: Vec<Meta> = args.iter().map(|a| Meta::Word(a.to_string())).collect();
        self.attr(name, &args);
    }

    fn meta_list(&mut self, prefix: &str, items: &[Meta], suffix: &str) {
        let flat: Vec<String> = items.iter().map(Meta::flat).collect();
        let flat_len = joined_len(&flat, 2);
        if Meta::one_line(items) && self.fits(prefix.len() + flat_len + suffix.len()) {
            self.line(format_args!("{prefix}{}{suffix}", Joined(&flat, ", ")));
            return;
        }
        if let [Meta::List(path, inner)] = items {
            self.meta_list(&format!("{prefix}{path}("), inner, &format!("){suffix}"));
            return;
        }
        self.line(prefix);
        self.depth += 1;
        for (i, item) in items.iter().enumerate() {
            let comma = if i + 1 < items.len() { "," } else { "" };
            match item {
                Meta::Word(w) => self.line(format_args!("{w}{comma}")),
                Meta::List(path, inner) => {
                    self.meta_list(&format!("{path}("), inner, &format!("){comma}"))
                }
            }
        }
        self.depth -= 1;
        self.line(suffix);
    }
}

/// A type as text, its generic arguments kept apart so that it breaks as rustfmt breaks
/// types that do not fit: `Head<` and one argument per line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TyText {
    /// The path (or a whole type that never breaks: `&'a str`, `[u8; 4]`).
    pub head: String,
    /// The generic arguments, lifetimes included; none for a plain type.
    pub args: Vec<TyText>,
}

impl TyText {
    /// A type that does not break.
    pub(crate) fn leaf(text: impl Into<String>) -> Self {
        TyText {
            head: text.into(),
            args: Vec::new(),
        }
    }

    /// `head<args>`.
    pub(crate) fn generic(head: impl Into<String>, args: Vec<TyText>) -> Self {
        TyText {
            head: head.into(),
            args,
        }
    }

    /// The length of the type on one line.
    pub(crate) fn flat_len(&self) -> usize {
        if self.args.is_empty() {
            return self.head.len();
        }
        self.head.len()
            + 2
            + self.args.iter().map(TyText::flat_len).sum::<usize>()
            + 2 * (self.args.len() - 1)
    }
}

impl TyText {
    /// A type written as text, split into its generic arguments where it ends in `<..>`
    /// after a plain path (references, tuples, arrays and `dyn` types stay whole).
    pub(crate) fn parse(text: &str) -> Self {
        let open = match text.find('<') {
            Some(open) if text.ends_with('>') => open,
            _ => return TyText::leaf(text),
        };
        let head = &text[..open];
        if head.is_empty() || head.contains([' ', '&', '(', '[']) {
            return TyText::leaf(text);
        }
        let inner = &text[open + 1..text.len() - 1];
        let mut args = Vec::new();
        let (mut depth, mut start) = (0usize, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    args.push(TyText::parse(inner[start..i].trim()));
                    start = i + 1;
                }
                _ => {}
            }
        }
        args.push(TyText::parse(inner[start..].trim()));
        TyText::generic(head, args)
    }
}

/// `impl<generics>` and the trait of an impl header `impl<generics> Trait`.
fn split_impl_head(head: &str) -> (&str, &str) {
    if let Some(rest) = head.strip_prefix("impl<") {
        let mut depth = 1usize;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        let end = "impl<".len() + i + 1;
                        return (&head[..end], head[end..].trim_start());
                    }
                }
                _ => {}
            }
        }
    }
    match head.split_once(' ') {
        Some((generics, trait_ref)) => (generics, trait_ref),
        None => (head, ""),
    }
}

impl fmt::Display for TyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.head)?;
        if !self.args.is_empty() {
            f.write_str("<")?;
            Joined(&self.args, ", ").fmt(f)?;
            f.write_str(">")?;
        }
        Ok(())
    }
}

/// A tuple, an element of an array expression; laid out as call arguments are.
pub(crate) struct Tuple<'a>(pub &'a [&'a str]);

impl Tuple<'_> {
    fn flat(&self) -> String {
        format!("({})", Joined(self.0, ", "))
    }
}

/// An argument of an attribute: a word or `key = value`, or a list `path(args)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Meta {
    Word(String),
    List(String, Vec<Meta>),
}

impl Meta {
    /// The comma-separated items of `tokens` (the inside of an attribute's parentheses).
    pub(crate) fn parse_list(tokens: &TokenStream) -> Vec<Meta> {
        let mut items = Vec::new();
        let mut current: Vec<TokenTree> = Vec::new();
        for tree in tokens.clone() {
            if matches!(&tree, TokenTree::Punct(p) if p.as_char() == ',') {
                items.push(Self::parse_item(std::mem::take(&mut current)));
            } else {
                current.push(tree);
            }
        }
        if !current.is_empty() {
            items.push(Self::parse_item(current));
        }
        items
    }

    /// One item: `path(..)` when it ends in parentheses after a path, else a word.
    pub(crate) fn parse_item(mut trees: Vec<TokenTree>) -> Meta {
        let is_path = |t: &TokenTree| match t {
            TokenTree::Ident(_) => true,
            TokenTree::Punct(p) => p.as_char() == ':',
            _ => false,
        };
        if let Some(TokenTree::Group(g)) = trees.last() {
            if g.delimiter() == Delimiter::Parenthesis
                && trees.len() > 1
                && trees[..trees.len() - 1].iter().all(is_path)
            {
                let inner = Self::parse_list(&g.stream());
                trees.pop();
                let path: TokenStream = trees.into_iter().collect();
                return Meta::List(tokens_text(&path), inner);
            }
        }
        Meta::Word(tokens_text(&trees.into_iter().collect()))
    }

    /// Whether rustfmt may keep a list of these items on one line (when it fits): a single
    /// item, or items at most [`ATTR_WIDTH`] wide, and the same for every nested list.
    fn one_line(items: &[Meta]) -> bool {
        let width =
            items.iter().map(|i| i.flat().len()).sum::<usize>() + 2 * items.len().saturating_sub(1);
        (items.len() == 1 || width <= ATTR_WIDTH)
            && items.iter().all(|i| match i {
                Meta::Word(_) => true,
                Meta::List(_, inner) => Self::one_line(inner),
            })
    }

    /// The item on one line.
    pub(crate) fn flat(&self) -> String {
        match self {
            Meta::Word(w) => w.clone(),
            Meta::List(path, inner) => {
                let inner: Vec<String> = inner.iter().map(Meta::flat).collect();
                format!("{path}({})", inner.join(", "))
            }
        }
    }
}

/// The length of `items` joined by a separator of `sep` characters.
pub(crate) fn joined_len<S: AsRef<str>>(items: &[S], sep: usize) -> usize {
    items.iter().map(|s| s.as_ref().len()).sum::<usize>() + sep * items.len().saturating_sub(1)
}

/// The lines of a broken chain of one binary operator: the first term (with the second
/// when the first is no wider than an indentation, as rustfmt joins them), then `op term`
/// for each other term; `suffix` after the last.
fn binary_lines<S: AsRef<str>>(terms: &[S], op: &str, suffix: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::with_capacity(terms.len());
    for (i, t) in terms.iter().enumerate() {
        let t = t.as_ref();
        if i == 0 {
            lines.push(t.to_string());
        } else if i == 1 && terms[0].as_ref().len() <= INDENT.len() {
            lines[0] = format!("{} {op} {t}", lines[0]);
        } else {
            lines.push(format!("{op} {t}"));
        }
    }
    if let Some(last) = lines.last_mut() {
        last.push_str(suffix);
    }
    lines
}

/// Displays a list with a separator.
pub(crate) struct Joined<'a, S>(pub &'a [S], pub &'a str);

impl<S: fmt::Display> fmt::Display for Joined<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(self.1)?;
            }
            item.fmt(f)?;
        }
        Ok(())
    }
}

/// Tokens given by the user (paths, `cfg` predicates, attributes) as rustfmt writes them:
/// no space around `::`, after `#` and `!`, inside brackets and parentheses or before `,`;
/// one space around other operators and between words.
pub(crate) fn tokens_text(tokens: &TokenStream) -> String {
    let mut out = String::new();
    write_tokens(&mut out, tokens.clone());
    out
}

/// What the last token written was, for the spacing of the next one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// Nothing, an opening bracket or a token the next one is glued to (`::`, `#`, `&`).
    Glue,
    /// A word, a literal or a closed group.
    Word,
    /// A comma or an operator: a space follows.
    Space,
}

fn write_tokens(out: &mut String, tokens: TokenStream) {
    let mut prev = Prev::Glue;
    for tree in tokens {
        match tree {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                let space = match prev {
                    Prev::Glue => false,
                    Prev::Space => true,
                    Prev::Word => g.delimiter() == Delimiter::Brace,
                };
                if space {
                    out.push(' ');
                }
                out.push_str(open);
                write_tokens(out, g.stream());
                out.push_str(close);
                prev = Prev::Word;
            }
            TokenTree::Ident(_) | TokenTree::Literal(_) => {
                if prev != Prev::Glue {
                    out.push(' ');
                }
                let _ = write!(out, "{tree}");
                prev = Prev::Word;
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                let space = match prev {
                    Prev::Glue => false,
                    Prev::Space => true,
                    Prev::Word => !matches!(c, ':' | ',' | '.' | '!' | '<' | '>' | '?' | ';'),
                };
                if space {
                    out.push(' ');
                }
                out.push(c);
                prev = if p.spacing() == Spacing::Joint && !matches!(c, '\'') {
                    Prev::Glue
                } else {
                    match c {
                        ':' | '#' | '!' | '&' | '\'' | '<' | '.' | '$' => Prev::Glue,
                        '>' | '?' => Prev::Word,
                        _ => Prev::Space,
                    }
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn text(s: &str) -> String {
        tokens_text(&TokenStream::from_str(s).unwrap())
    }

    #[test]
    fn types_written_as_text_split_into_their_generic_arguments() {
        let ty = TyText::parse("::a::Lend<'a, super::X<'a, (u8, u16)>>");
        assert_eq!(ty.head, "::a::Lend");
        assert_eq!(ty.args.len(), 2);
        assert_eq!(ty.args[1].head, "super::X");
        assert_eq!(ty.args[1].args[1], TyText::leaf("(u8, u16)"));
        assert_eq!(ty.to_string(), "::a::Lend<'a, super::X<'a, (u8, u16)>>");
        for whole in ["&'a str", "[u8; 4]", "(A<u8>, B)", "u32", "&X<u8>"] {
            assert_eq!(TyText::parse(whole), TyText::leaf(whole));
        }
    }

    #[test]
    fn impl_heads_split_after_their_generics() {
        assert_eq!(
            split_impl_head("impl<'a, T: A<B>> Tr<'a, T>"),
            ("impl<'a, T: A<B>>", "Tr<'a, T>")
        );
        assert_eq!(split_impl_head("impl ::x::Tr"), ("impl", "::x::Tr"));
    }

    #[test]
    fn a_long_impl_header_breaks_its_trait_before_its_self_type() {
        let mut code = Code::new(3);
        let view = format!("super::super::super::p0::p1::{}<'a>", "R".repeat(30));
        code.impl_open(&format!("impl<'a> ::bebop_core::Lend<'a, {view}>"), "Short");
        code.close();
        let want = format!(
            "            impl<'a>\n                ::bebop_core::Lend<\n                    'a,\n                    {view},\n                > for Short\n            {{\n            }}\n"
        );
        assert_eq!(code.into_text(), want);
    }

    #[test]
    fn user_tokens_are_spaced_as_rustfmt_spaces_them() {
        assert_eq!(text("::bebop_core"), "::bebop_core");
        assert_eq!(text(":: my :: rt"), "::my::rt");
        assert_eq!(text(r#"feature="alloc""#), r#"feature = "alloc""#);
        assert_eq!(
            text(r#"all( feature = "a" , not(test) )"#),
            r#"all(feature = "a", not(test))"#
        );
        assert_eq!(
            text(r#"#[serde(rename_all = "camelCase")]"#),
            r#"#[serde(rename_all = "camelCase")]"#
        );
        assert_eq!(
            text("#[derive(Hash, ::serde::Serialize)]"),
            "#[derive(Hash, ::serde::Serialize)]"
        );
        assert_eq!(text("a => b, c -> d"), "a => b, c -> d");
        assert_eq!(text("Vec<u8>"), "Vec<u8>");
    }

    #[test]
    fn a_signature_breaks_one_parameter_per_line() {
        let mut c = Code::new(1);
        c.signature("fn f", &["&self", "x: u8"], " -> u8", " {");
        c.close();
        assert_eq!(c.into_text(), "    fn f(&self, x: u8) -> u8 {\n    }\n");
        let long = "x".repeat(90);
        let p = format!("{long}: u8");
        let mut c = Code::new(0);
        c.signature("fn f", &["&self", &p], "", ";");
        assert_eq!(
            c.into_text(),
            format!("fn f(\n    &self,\n    {long}: u8,\n);\n")
        );
    }

    #[test]
    fn a_call_breaks_when_its_arguments_are_wider_than_sixty() {
        let mut c = Code::new(0);
        let a = "a".repeat(30);
        c.call("let x = ", "f", &[&a, &a], ";");
        assert_eq!(
            c.into_text(),
            format!("let x = f(\n    {a},\n    {a},\n);\n")
        );
        let mut c = Code::new(0);
        c.call("", "f", &["a", "b"], ";");
        assert_eq!(c.into_text(), "f(a, b);\n");
    }
}

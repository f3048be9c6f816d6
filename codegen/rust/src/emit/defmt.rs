//! `defmt::Format` for views. Records get written-out impls rather than
//! `#[derive(defmt::Format)]`: the derive bounds every field type, which makes the trait
//! requirement of recursive types (a union holding an array of itself, as in `bebop/json.bop`)
//! cyclic, and it cannot be told to allow deprecated items. `float16`/`bfloat16` values,
//! which the `half` crate does not make formattable, are printed as `f32`.

use proc_macro2::Literal;

use super::records::Mode;
use super::{Emitter, var_text};
use crate::analysis::ty_holds_half;
use crate::layout::{Code, Meta};
use crate::model::{Body, DefId, Field, Ty};
use crate::names::{ident, ident_text};

impl Emitter<'_, '_> {
    /// The written-out `defmt::Format` impl of a record view, when defmt support is on.
    pub(crate) fn defmt_impl(&self, code: &mut Code, id: DefId, mode: Mode) {
        let d = self.def(id);
        let Some(pred) = &self.defmt else {
            return;
        };
        if mode != Mode::View {
            return;
        }
        let name = ident_text(&d.name);
        let name_any = if d.lifetime {
            format!("{name}<'_>")
        } else {
            name
        };
        code.attr("cfg", &Meta::parse_list(pred));
        self.allow_deprecated_line(code, id);
        code.impl_open("impl ::defmt::Format", &name_any);
        code.open("fn format(&self, f: ::defmt::Formatter<'_>)");
        if let Body::Union { branches, unknown } = &d.body {
            if branches.is_empty() && unknown.is_none() {
                code.line("match *self {}");
            } else {
                code.open("match self");
                for b in branches {
                    code.open(format_args!("Self::{}(v) =>", ident_text(&b.name)));
                    write_args(code, &[&lit(&format!("{}(", b.name))]);
                    write_args(code, &["\"{}\"", "v"]);
                    write_args(code, &["\")\""]);
                    code.close();
                }
                if let Some(u) = unknown {
                    let text = lit(&format!("{u} {{{{ discriminator: {{}}, body: {{}} }}}}"));
                    // The pattern and the call never fit on one line: the call goes in a
                    // block, as rustfmt puts a macro call that breaks.
                    code.struct_lit(
                        "",
                        &format!("Self::{}", ident_text(u)),
                        &["discriminator", "body"],
                        " => {",
                    );
                    code.push_depth();
                    code.call(
                        "",
                        "::defmt::write!",
                        &["f", &text, "discriminator", "body"],
                        "",
                    );
                    code.close();
                }
                code.close();
            }
            code.close();
            code.close();
            return;
        }
        let message = matches!(d.body, Body::Message { .. });
        let fields: &[Field] = d.fields();
        let simple = fields.iter().all(|f| f.lazy || !ty_holds_half(&f.ty));
        if simple {
            // One write: `Name { a: {}, b: {} }`.
            let list: Vec<String> = fields.iter().map(|f| format!("{}: {{}}", f.name)).collect();
            let text = if list.is_empty() {
                format!("{} {{{{}}}}", d.name)
            } else {
                format!("{} {{{{ {} }}}}", d.name, list.join(", "))
            };
            let text = lit(&text);
            let values: Vec<String> = fields
                .iter()
                .map(|f| format!("self.{}", ident_text(&f.name)))
                .collect();
            let mut args = vec!["f", text.as_str()];
            args.extend(values.iter().map(String::as_str));
            write_args(code, &args);
        } else {
            write_args(code, &[&lit(&format!("{} {{{{ ", d.name))]);
            for (i, fd) in fields.iter().enumerate() {
                let label = if i == 0 {
                    format!("{}: ", fd.name)
                } else {
                    format!(", {}: ", fd.name)
                };
                write_args(code, &[&lit(&label)]);
                let value = format!("self.{}", ident_text(&fd.name));
                if fd.lazy || !ty_holds_half(&fd.ty) {
                    write_args(code, &["\"{}\"", &value]);
                } else if message {
                    code.open(format_args!("match {value}"));
                    code.open("::core::option::Option::Some(v0) =>");
                    self.defmt_value(code, &fd.ty, "v0", 1);
                    code.close();
                    code.arm_call(
                        "::core::option::Option::None",
                        "::defmt::write!",
                        &["f", "\"None\""],
                    );
                    code.close();
                } else {
                    self.defmt_value(code, &fd.ty, &value, 1);
                }
            }
            write_args(code, &["\" }}\""]);
        }
        code.close();
        code.close();
    }

    /// The written-out `defmt::Format` impl of an enum or flags type that touches deprecated
    /// items (others derive it, see [`Emitter::defmt_derive_line`]), preceded by an empty
    /// line.
    pub(crate) fn defmt_enum_impl(&self, code: &mut Code, id: DefId) {
        let Some(pred) = &self.defmt else {
            return;
        };
        if !self.touches_deprecated(id) {
            return;
        }
        let d = self.def(id);
        code.blank();
        code.attr("cfg", &Meta::parse_list(pred));
        code.line("#[allow(deprecated)]");
        code.impl_open("impl ::defmt::Format", &ident(&d.name).to_string());
        code.open("fn format(&self, f: ::defmt::Formatter<'_>)");
        match &d.body {
            Body::Enum {
                members,
                unrecognized,
                ..
            } => {
                code.open("match self");
                for m in members.iter().filter(|m| m.alias_of.is_none()) {
                    code.arm_call(
                        &format!("Self::{}", ident(&m.name)),
                        "::defmt::write!",
                        &["f", &Literal::string(&m.name).to_string()],
                    );
                }
                if let Some(u) = unrecognized {
                    code.arm_call(
                        &format!("Self::{}(v)", ident(u)),
                        "::defmt::write!",
                        &[
                            "f",
                            &Literal::string(&format!("{u}({{}})")).to_string(),
                            "v",
                        ],
                    );
                }
                code.close();
            }
            _ => {
                let text = Literal::string(&format!("{}({{}})", d.name)).to_string();
                code.call("", "::defmt::write!", &["f", &text, "self.bits"], "");
            }
        }
        code.close();
        code.close();
    }

    /// Statements formatting the value `x` (of a type holding half floats) into `f`.
    fn defmt_value(&self, code: &mut Code, ty: &Ty, x: &str, depth: usize) {
        match ty {
            Ty::F16 | Ty::BF16 => write_args(code, &["\"{}\"", &format!("{x}.to_f32()")]),
            Ty::Array(el) | Ty::Fixed(el, _) if ty_holds_half(el) => {
                let (i, item) = (var_text(depth), var_text(depth + 1));
                // Rust arrays iterate by reference; views by value.
                let iter = match ty {
                    Ty::Fixed(el, n)
                        if crate::analysis::fixed_repr(self.model, el, *n)
                            == crate::analysis::FixedRepr::Inline =>
                    {
                        format!("{x}.iter().copied()")
                    }
                    _ => format!("{x}.iter()"),
                };
                write_args(code, &["\"[\""]);
                code.open(format_args!("for ({i}, {item}) in {iter}.enumerate()"));
                code.open(format_args!("if {i} > 0"));
                write_args(code, &["\", \""]);
                code.close();
                self.defmt_value(code, el, &item, depth + 2);
                code.close();
                write_args(code, &["\"]\""]);
            }
            Ty::Map(k, v) if ty_holds_half(k) || ty_holds_half(v) => {
                let (i, kv, vv) = (var_text(depth), var_text(depth + 1), var_text(depth + 2));
                write_args(code, &["\"{{\""]);
                code.open(format_args!(
                    "for ({i}, ({kv}, {vv})) in {x}.iter().enumerate()"
                ));
                code.open(format_args!("if {i} > 0"));
                write_args(code, &["\", \""]);
                code.close();
                self.defmt_value(code, k, &kv, depth + 3);
                write_args(code, &["\": \""]);
                self.defmt_value(code, v, &vv, depth + 3);
                code.close();
                write_args(code, &["\"}}\""]);
            }
            _ => write_args(code, &["\"{}\"", x]),
        }
    }
}

/// `::defmt::write!(f, args);` (the `f` added unless given first).
fn write_args(code: &mut Code, args: &[&str]) {
    if args.first() == Some(&"f") {
        code.call("", "::defmt::write!", args, ";");
    } else {
        let mut all = vec!["f"];
        all.extend_from_slice(args);
        code.call("", "::defmt::write!", &all, ";");
    }
}

/// A string literal for `s`, escaped as Rust writes it.
fn lit(s: &str) -> String {
    Literal::string(s).to_string()
}

//! Enums (closed and `@forward_compatible`) and `@flags` enums.

use proc_macro2::Literal;

use super::Emitter;
use crate::layout::{Code, Tuple};
use crate::model::{Base, Body, DefId, Member};
use crate::names::ident;
use crate::rules::ItemForm;

impl Emitter<'_, '_> {
    fn member_docs(code: &mut Code, m: &Member) {
        let mut lines = Self::schema_doc(m.doc.as_deref());
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!("`{} = {}`", m.src_name, m.value));
        code.docs(&lines);
    }

    /// `value as u64` (the detail of an error), without a cast for `u64`.
    fn as_u64(base: Base, v: &str) -> String {
        if base == Base::U64 {
            v.to_string()
        } else {
            format!("{v} as u64")
        }
    }

    /// `derive(..)` of an enum: every comparison trait, `Default` when a member is zero.
    fn enum_derive(code: &mut Code, default: bool) {
        let traits = [
            "Clone",
            "Copy",
            "Debug",
            "PartialEq",
            "Eq",
            "PartialOrd",
            "Ord",
            "Hash",
        ];
        code.derive(&traits);
        if default {
            code.derive(&["Default"]);
        }
    }

    /// `impl From<from> for to { fn from(value: from) -> Self { .. } }`, the body written
    /// by `body`, preceded by an empty line and `#[allow(deprecated)]` when `allow_dep`.
    fn from_impl(
        code: &mut Code,
        allow_dep: bool,
        from: &str,
        to: &str,
        body: impl FnOnce(&mut Code),
    ) {
        code.blank();
        if allow_dep {
            code.line("#[allow(deprecated)]");
        }
        code.impl_open(&format!("impl ::core::convert::From<{from}>"), to);
        code.signature("fn from", &[&format!("value: {from}")], " -> Self", " {");
        body(code);
        code.close();
        code.close();
    }

    /// The impl of the aliases of an enum's members (`pub const ALIAS: Self = Self::X;`),
    /// when it has any; preceded by an empty line.
    fn enum_aliases(&self, code: &mut Code, id: DefId, name: &str, members: &[Member]) {
        if members.iter().all(|m| m.alias_of.is_none()) {
            return;
        }
        code.blank();
        self.allow_deprecated_line(code, id);
        code.open(format_args!("impl {name}"));
        for m in members {
            let Some(target) = m.alias_of else { continue };
            Self::member_docs(code, m);
            Self::deprecated_line(code, m.deprecated.as_ref());
            let a = ident(&m.name);
            let t = ident(&members[target].name);
            code.assign(&format!("pub const {a}: Self"), &format!("Self::{t}"));
        }
        code.close();
    }

    /// `WireSize` and `FixedSize` of an enum or flags type of `size` bytes, each preceded by
    /// an empty line.
    fn fixed_size_impls(&self, code: &mut Code, allow_dep: bool, name: &str, size: usize) {
        let rt = &self.rt_text;
        for (head, body) in [
            ("WireSize", None),
            ("FixedSize", Some(format!("const SIZE: usize = {size};"))),
        ] {
            code.blank();
            if allow_dep {
                code.line("#[allow(deprecated)]");
            }
            code.impl_open(&format!("impl {rt}::{head}"), name);
            match body {
                Some(line) => code.line(line),
                None => {
                    code.assign(
                        "const FIXED_SIZE: ::core::option::Option<usize>",
                        &format!("::core::option::Option::Some({size})"),
                    );
                    code.blank();
                    code.line(format_args!("const MIN_SIZE: usize = {size};"));
                }
            }
            code.close();
        }
    }

    /// `fn decode(reader) -> Result<Self, Error> {`, opening the body.
    fn decode_signature(&self, code: &mut Code) {
        let rt = &self.rt_text;
        code.signature(
            "fn decode",
            &[&format!("reader: &mut {rt}::Reader<'a>")],
            &format!(" -> ::core::result::Result<Self, {rt}::Error>"),
            " {",
        );
    }

    /// The `Encode` impl of an enum or flags type of `size` bytes whose wire value is
    /// `value` (an expression of the base type), preceded by an empty line.
    fn fixed_encode_impl(
        &self,
        code: &mut Code,
        allow_dep: bool,
        name: &str,
        size: usize,
        value: &str,
    ) {
        let rt = &self.rt_text;
        code.blank();
        if allow_dep {
            code.line("#[allow(deprecated)]");
        }
        code.impl_open(&format!("impl {rt}::Encode"), name);
        code.line("#[inline]");
        code.open("fn encoded_size(&self) -> usize");
        code.line(size);
        code.close();
        code.blank();
        code.line("#[inline]");
        code.signature(
            &format!("fn encode<S: {rt}::Sink>"),
            &["&self", "sink: &mut S"],
            " -> ::core::result::Result<(), S::Error>",
            " {",
        );
        code.call("", &format!("{rt}::Encode::encode"), &[value, "sink"], "");
        code.close();
        code.close();
    }

    /// `|| { Error::new(kind, at).with_detail(detail) }` closing a call that opened the
    /// closure on the line before (`.map_err(|value| {`).
    fn error_closure_body(&self, code: &mut Code, kind: &str, detail: &str) {
        let rt = &self.rt_text;
        code.push_depth();
        let kind = format!("{rt}::ErrorKind::{kind}");
        code.call_then(
            &format!("{rt}::Error::new"),
            &[&kind, "at"],
            &format!(".with_detail({detail})"),
            "",
        );
        code.close_with(")");
    }

    pub(crate) fn enumeration(&self, code: &mut Code, id: DefId) {
        let d = self.def(id);
        let Body::Enum {
            base,
            members,
            unrecognized,
        } = &d.body
        else {
            return;
        };
        let rt = &self.rt_text;
        let name = ident(&d.name).to_string();
        let name = name.as_str();
        let repr = base.rust();
        let size = base.size();
        let allow_dep = self.touches_deprecated(id);
        let default_member = members
            .iter()
            .position(|m| m.value == 0 && m.alias_of.is_none());
        let variants: Vec<(usize, &Member)> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.alias_of.is_none())
            .collect();
        let mut docs = self.def_doc_lines(id);
        if unrecognized.is_some() {
            docs.push(String::new());
            docs.push(
                "`@forward_compatible`: values no member has decode to the extra variant and"
                    .into(),
            );
            docs.push("encode back unchanged.".into());
        }
        code.docs(&docs);
        Self::enum_derive(code, default_member.is_some());
        if !allow_dep {
            // Else `defmt_enum_impl` writes the impl out, allowing deprecated items.
            self.defmt_derive_line(code);
        }
        self.serde_derive_line(code, ItemForm::Same);
        self.user_type_attr_lines(code, id, ItemForm::Same);
        if unrecognized.is_none() {
            code.line(format_args!("#[repr({repr})]"));
        }
        code.line("#[allow(clippy::enum_variant_names)]");
        Self::deprecated_line(code, d.deprecated.as_ref());
        if allow_dep {
            code.line("#[allow(deprecated)]");
        }
        if variants.is_empty() && unrecognized.is_none() {
            code.line(format_args!("pub enum {name} {{}}"));
        } else {
            code.open(format_args!("pub enum {name}"));
            for (i, m) in &variants {
                Self::member_docs(code, m);
                self.user_member_attr_lines(code, id, &m.src_name, ItemForm::Same);
                Self::deprecated_line(code, m.deprecated.as_ref());
                if Some(*i) == default_member {
                    code.line("#[default]");
                }
                let v = ident(&m.name);
                match unrecognized {
                    None => code.line(format_args!("{v} = {},", m.value)),
                    Some(_) => code.line(format_args!("{v},")),
                }
            }
            if let Some(u) = unrecognized {
                code.line("/// A value no member of this version of the schema has.");
                code.line(format_args!("{}({repr}),", ident(u)));
            }
            code.close();
        }
        self.enum_aliases(code, id, name, members);
        let allow = |code: &mut Code| {
            if allow_dep {
                code.line("#[allow(deprecated)]");
            }
        };
        match unrecognized {
            None => {
                code.blank();
                allow(code);
                code.impl_open(&format!("impl ::core::convert::TryFrom<{repr}>"), name);
                code.line(format_args!("type Error = {repr};"));
                code.line("/// The member with this value; the value itself when there is none.");
                code.signature(
                    "fn try_from",
                    &[&format!("value: {repr}")],
                    &format!(" -> ::core::result::Result<Self, {repr}>"),
                    " {",
                );
                code.open("match value");
                for (_, m) in &variants {
                    code.arm_call(
                        &m.value.to_string(),
                        "::core::result::Result::Ok",
                        &[&format!("Self::{}", ident(&m.name))],
                    );
                }
                code.line("_ => ::core::result::Result::Err(value),");
                code.close();
                code.close();
                code.close();
                Self::from_impl(code, allow_dep, name, repr, |code| {
                    code.line(format_args!("value as {repr}"));
                });
            }
            Some(u) => {
                let u = ident(u);
                Self::from_impl(code, allow_dep, repr, name, |code| {
                    code.open("match value");
                    for (_, m) in &variants {
                        code.arm(m.value, format_args!("Self::{}", ident(&m.name)));
                    }
                    code.line(format_args!("_ => Self::{u}(value),"));
                    code.close();
                });
                Self::from_impl(code, allow_dep, name, repr, |code| {
                    code.open("match value");
                    for (_, m) in &variants {
                        code.arm(format_args!("{name}::{}", ident(&m.name)), m.value);
                    }
                    code.line(format_args!("{name}::{u}(value) => value,"));
                    code.close();
                });
            }
        }
        self.fixed_size_impls(code, allow_dep, name, size);
        code.blank();
        allow(code);
        code.impl_open(&format!("impl<'a> {rt}::Decode<'a>"), name);
        match unrecognized {
            None => {
                code.line("#[inline]");
                self.decode_signature(code);
                code.line("let at = reader.offset();");
                code.line(format_args!("let value: {repr} = reader.read()?;"));
                code.line(format_args!(
                    "<Self as ::core::convert::TryFrom<{repr}>>::try_from(value).map_err(|value| {{"
                ));
                self.error_closure_body(code, "InvalidEnumValue", &Self::as_u64(*base, "value"));
            }
            Some(_) => {
                code.line("const ALWAYS_VALID: bool = true;");
                code.line("#[inline]");
                self.decode_signature(code);
                code.line(format_args!("let value: {repr} = reader.read()?;"));
                code.call_of_call(
                    "",
                    "::core::result::Result::Ok",
                    &format!("<Self as ::core::convert::From<{repr}>>::from"),
                    &["value"],
                    "",
                );
            }
        }
        code.close();
        code.close();
        let value = match unrecognized {
            None => format!("&(*self as {repr})"),
            Some(_) => format!("&<{repr} as ::core::convert::From<Self>>::from(*self)"),
        };
        self.fixed_encode_impl(code, allow_dep, name, size, &value);
        self.defmt_enum_impl(code, id);
    }

    pub(crate) fn flags(&self, code: &mut Code, id: DefId) {
        let d = self.def(id);
        let Body::Flags { base, members } = &d.body else {
            return;
        };
        let rt = &self.rt_text;
        let name = ident(&d.name).to_string();
        let name = name.as_str();
        let repr = base.rust();
        let size = base.size();
        let fc = d.forward_compatible;
        let allow_dep = self.touches_deprecated(id);
        let mut lines = self.def_doc_lines(id);
        lines.push(String::new());
        lines.push(if fc {
            "A set of flags; `@forward_compatible`, so bits no member declares are kept when decoding.".into()
        } else {
            "A set of flags; decoding rejects bits no member declares.".into()
        });
        code.docs(&lines);
        let mask = normalise(*base, members.iter().fold(0i128, |acc, m| acc | m.value));
        let always_valid = fc || mask == base.full_mask();
        code.derive(&[
            "Clone",
            "Copy",
            "PartialEq",
            "Eq",
            "PartialOrd",
            "Ord",
            "Hash",
            "Default",
        ]);
        if !allow_dep {
            // Else `defmt_enum_impl` writes the impl out, allowing deprecated items.
            self.defmt_derive_line(code);
        }
        self.user_type_attr_lines(code, id, ItemForm::Same);
        Self::deprecated_line(code, d.deprecated.as_ref());
        if allow_dep {
            code.line("#[allow(deprecated)]");
        }
        code.open(format_args!("pub struct {name}"));
        code.line(format_args!("bits: {repr},"));
        code.close();
        code.blank();
        if allow_dep {
            code.line("#[allow(deprecated)]");
        }
        code.open(format_args!("impl {name}"));
        for m in members {
            Self::member_docs(code, m);
            Self::deprecated_line(code, m.deprecated.as_ref());
            let bits = format!("bits: {}", m.value);
            code.assign_struct(
                &format!("pub const {}: Self", ident(&m.name)),
                "Self",
                &[&bits],
            );
            code.blank();
        }
        let bits_of = |code: &mut Code, sig: &str, ret: &str, field: &str| {
            code.open(format_args!("{sig} -> {ret}"));
            code.struct_lit("", "Self", &[field], "");
            code.close();
        };
        code.line("/// No flag set.");
        bits_of(code, "pub const fn empty()", "Self", "bits: 0");
        code.blank();
        code.line("/// Every declared flag set.");
        bits_of(code, "pub const fn all()", "Self", &format!("bits: {mask}"));
        code.blank();
        code.line("/// The raw bits.");
        code.open(format_args!("pub const fn bits(self) -> {repr}"));
        code.line("self.bits");
        code.close();
        code.blank();
        code.line(
            "/// The flags with these bits; `None` when a bit is set that no member declares.",
        );
        code.signature(
            "pub const fn from_bits",
            &[&format!("bits: {repr}")],
            " -> ::core::option::Option<Self>",
            " {",
        );
        code.open("if bits & !Self::all().bits == 0");
        code.line("::core::option::Option::Some(Self { bits })");
        code.close_open("else");
        code.line("::core::option::Option::None");
        code.close();
        code.close();
        // (doc, name, parameters, body): `bits: ..` builds a value, anything else is a test.
        let bits_param = format!("bits: {repr}");
        let ops: [(&str, &str, &str, &str); 11] = [
            (
                "The flags with these bits, dropping bits no member declares.",
                "from_bits_truncate",
                &bits_param,
                "bits: bits & Self::all().bits",
            ),
            (
                "The flags with exactly these bits, undeclared ones included.",
                "from_bits_retain",
                &bits_param,
                "bits",
            ),
            (
                "True when no bit is set.",
                "is_empty",
                "self",
                "self.bits == 0",
            ),
            (
                "True when every declared flag is set.",
                "is_all",
                "self",
                "self.bits & Self::all().bits == Self::all().bits",
            ),
            (
                "True when every flag of `other` is set in `self`.",
                "contains",
                "self, other: Self",
                "self.bits & other.bits == other.bits",
            ),
            (
                "True when `self` and `other` have a flag in common.",
                "intersects",
                "self, other: Self",
                "self.bits & other.bits != 0",
            ),
            (
                "The flags set in either.",
                "union",
                "self, other: Self",
                "bits: self.bits | other.bits",
            ),
            (
                "The flags set in both.",
                "intersection",
                "self, other: Self",
                "bits: self.bits & other.bits",
            ),
            (
                "The flags of `self` not in `other`.",
                "difference",
                "self, other: Self",
                "bits: self.bits & !other.bits",
            ),
            (
                "The flags set in exactly one of the two.",
                "symmetric_difference",
                "self, other: Self",
                "bits: self.bits ^ other.bits",
            ),
            (
                "The declared flags not set in `self`.",
                "complement",
                "self",
                "bits: !self.bits & Self::all().bits",
            ),
        ];
        for (doc, f, params, body) in ops {
            code.blank();
            code.line(format_args!("/// {doc}"));
            if body.starts_with("bits") {
                bits_of(code, &format!("pub const fn {f}({params})"), "Self", body);
            } else {
                code.open(format_args!("pub const fn {f}({params}) -> bool"));
                code.line(body);
                code.close();
            }
        }
        for (doc, f, stmt) in [
            (
                "Sets the flags of `other`.",
                "insert",
                "self.bits |= other.bits;",
            ),
            (
                "Clears the flags of `other`.",
                "remove",
                "self.bits &= !other.bits;",
            ),
            (
                "Flips the flags of `other`.",
                "toggle",
                "self.bits ^= other.bits;",
            ),
        ] {
            code.blank();
            code.line(format_args!("/// {doc}"));
            code.open(format_args!("pub fn {f}(&mut self, other: Self)"));
            code.line(stmt);
            code.close();
        }
        code.blank();
        code.line("/// Sets or clears the flags of `other`.");
        code.open("pub fn set(&mut self, other: Self, value: bool)");
        code.open("if value");
        code.line("self.insert(other);");
        code.close_open("else");
        code.line("self.remove(other);");
        code.close();
        code.close();
        code.close();
        for (tr, f, call, doc) in [
            ("BitOr", "bitor", "self.union(other)", None),
            ("BitAnd", "bitand", "self.intersection(other)", None),
            ("BitXor", "bitxor", "self.symmetric_difference(other)", None),
            ("Sub", "sub", "self.difference(other)", None),
            (
                "Not",
                "not",
                "self.complement()",
                Some("/// The declared flags not set (undeclared bits are dropped)."),
            ),
        ] {
            code.blank();
            code.impl_open(&format!("impl ::core::ops::{tr}"), name);
            code.line("type Output = Self;");
            if let Some(doc) = doc {
                code.line(doc);
            }
            let params = if tr == "Not" {
                "self"
            } else {
                "self, other: Self"
            };
            code.open(format_args!("fn {f}({params}) -> Self"));
            code.line(call);
            code.close();
            code.close();
        }
        for (tr, f, stmt) in [
            ("BitOrAssign", "bitor_assign", "self.insert(other);"),
            (
                "BitAndAssign",
                "bitand_assign",
                "*self = self.intersection(other);",
            ),
            ("BitXorAssign", "bitxor_assign", "self.toggle(other);"),
            ("SubAssign", "sub_assign", "self.remove(other);"),
        ] {
            code.blank();
            code.impl_open(&format!("impl ::core::ops::{tr}"), name);
            code.open(format_args!("fn {f}(&mut self, other: Self)"));
            code.line(stmt);
            code.close();
            code.close();
        }
        // Debug: the names of the flags set, then undeclared bits in hex.
        code.blank();
        if allow_dep {
            code.line("#[allow(deprecated)]");
        }
        code.impl_open("impl ::core::fmt::Debug", name);
        code.line(
            "/// The names of the flags set (`Name(A | B)`), then any undeclared bits in hex.",
        );
        code.signature(
            "fn fmt",
            &["&self", "f: &mut ::core::fmt::Formatter<'_>"],
            " -> ::core::fmt::Result",
            " {",
        );
        let named: Vec<[String; 2]> = members
            .iter()
            .filter(|m| m.value != 0)
            .map(|m| [Literal::string(&m.name).to_string(), m.value.to_string()])
            .collect();
        let named: Vec<[&str; 2]> = named
            .iter()
            .map(|[a, b]| [a.as_str(), b.as_str()])
            .collect();
        let named: Vec<Tuple<'_>> = named.iter().map(|p| Tuple(p)).collect();
        code.assign_array(&format!("const NAMED: &[(&str, {repr})]"), "&", &named);
        let open = Literal::string(&format!("{}(", d.name)).to_string();
        code.call("", "f.write_str", &[&open], "?;");
        code.line("let mut rest = self.bits;");
        code.line("let mut first = true;");
        code.open("for &(name, bits) in NAMED");
        code.open("if self.bits & bits == bits && rest & bits != 0");
        code.open("if !first");
        code.line("f.write_str(\" | \")?;");
        code.close();
        code.line("f.write_str(name)?;");
        code.line("rest &= !bits;");
        code.line("first = false;");
        code.close();
        code.close();
        code.open("if rest != 0");
        code.open("if !first");
        code.line("f.write_str(\" | \")?;");
        code.close();
        code.line("::core::write!(f, \"{:#x}\", rest)?;");
        code.close_open("else if first");
        let zero_name = members
            .iter()
            .find(|m| m.value == 0)
            .map_or("empty", |m| m.name.as_str());
        let zero_name = Literal::string(zero_name).to_string();
        code.call("", "f.write_str", &[&zero_name], "?;");
        code.close();
        code.line("f.write_str(\")\")");
        code.close();
        code.close();
        self.fixed_size_impls(code, false, name, size);
        code.blank();
        code.impl_open(&format!("impl<'a> {rt}::Decode<'a>"), name);
        if always_valid {
            code.line("const ALWAYS_VALID: bool = true;");
        }
        code.line("#[inline]");
        self.decode_signature(code);
        if fc {
            code.line(format_args!("let bits: {repr} = reader.read()?;"));
            code.line("::core::result::Result::Ok(Self::from_bits_retain(bits))");
        } else {
            code.line("let at = reader.offset();");
            code.line(format_args!("let bits: {repr} = reader.read()?;"));
            code.line("Self::from_bits(bits).ok_or_else(|| {");
            let detail = Self::as_u64(*base, "(bits & !Self::all().bits)");
            self.error_closure_body(code, "InvalidFlags", &detail);
        }
        code.close();
        code.close();
        self.fixed_encode_impl(code, false, name, size, "&self.bits");
        self.defmt_enum_impl(code, id);
        self.flags_serde(code, id, *base, fc);
    }

    /// `Serialize`/`Deserialize` of a flags type, by hand: the raw bits as the base integer;
    /// deserializing rejects undeclared bits unless the type is `@forward_compatible`.
    fn flags_serde(&self, code: &mut Code, id: DefId, base: Base, forward_compatible: bool) {
        if !self.opts.serde {
            return;
        }
        let d = self.def(id);
        let name = ident(&d.name).to_string();
        let repr = base.rust();
        let allow_dep = self.touches_deprecated(id);
        let head = |code: &mut Code| {
            code.blank();
            self.serde_cfg_line(code);
            if allow_dep {
                code.line("#[allow(deprecated)]");
            }
        };
        head(code);
        code.impl_open("impl ::serde::Serialize", &name);
        code.line("/// The raw bits, as the base integer.");
        code.signature(
            "fn serialize<S: ::serde::Serializer>",
            &["&self", "serializer: S"],
            " -> ::core::result::Result<S::Ok, S::Error>",
            " {",
        );
        code.line("::serde::Serialize::serialize(&self.bits, serializer)");
        code.close();
        code.close();
        head(code);
        code.impl_open("impl<'de> ::serde::Deserialize<'de>", &name);
        code.signature(
            "fn deserialize<D: ::serde::Deserializer<'de>>",
            &["deserializer: D"],
            " -> ::core::result::Result<Self, D::Error>",
            " {",
        );
        code.assign(
            "let bits",
            &format!("<{repr} as ::serde::Deserialize<'de>>::deserialize(deserializer)?"),
        );
        if forward_compatible {
            code.line("::core::result::Result::Ok(Self::from_bits_retain(bits))");
        } else {
            let message = Literal::string(&format!(
                "{{:#x}} sets bits that no flag of `{}` declares",
                d.fqn
            ))
            .to_string();
            code.line("Self::from_bits(bits).ok_or_else(|| {");
            code.push_depth();
            let args = format!("{message}, bits");
            if code.fits(
                "<D::Error as ::serde::de::Error>::custom(::core::format_args!())".len()
                    + args.len(),
            ) {
                code.line(format_args!(
                    "<D::Error as ::serde::de::Error>::custom(::core::format_args!({args}))"
                ));
            } else {
                code.line("<D::Error as ::serde::de::Error>::custom(::core::format_args!(");
                code.push_depth();
                code.line(format_args!("{message},"));
                code.line("bits");
                code.pop_depth();
                code.line("))");
            }
            code.close_with(")");
        }
        code.close();
        code.close();
    }
}

/// `v` as a value of `base` (the OR of members may leave the signed range only through
/// the sign bit, which sign extension already covers).
fn normalise(base: Base, v: i128) -> i128 {
    let bits = base.size() as u32 * 8;
    let m = if bits >= 128 {
        v
    } else {
        v & ((1i128 << bits) - 1)
    };
    if base.signed() && bits < 128 && m >= (1i128 << (bits - 1)) {
        m - (1i128 << bits)
    } else {
        m
    }
}

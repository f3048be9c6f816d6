//! Rust names for schema names: case conversion, keyword escaping and collision handling.
//!
//! Names are kept as plain strings (`type`, not `r#type`) until they become tokens through
//! [`ident`], which escapes keywords.

use std::collections::BTreeSet;

use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, Span};

/// Keywords of Rust 2024 (strict and reserved) that need `r#` to be identifiers.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers; they get a trailing `_` instead.
const UNRAWABLE: &[&str] = &["self", "super", "crate", "Self", "_"];

/// Replaces characters that cannot appear in an identifier and fixes a leading digit, so
/// that no descriptor content can make identifier construction fail.
fn sanitize(name: &str, fallback: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.chars().all(|c| c == '_') {
        return fallback.to_string();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

fn fix_unrawable(mut name: String) -> String {
    if UNRAWABLE.contains(&name.as_str()) {
        name.push('_');
    }
    name
}

/// `UpperCamelCase` for types and variants. A name already in that form is kept as written
/// (`HTTPServer` stays), except fully capitalised ones (`UNSPECIFIED` becomes `Unspecified`,
/// `EDITION_2026` becomes `Edition2026`).
pub(crate) fn upper_camel(name: &str) -> String {
    let keep = name.starts_with(|c: char| c.is_ascii_uppercase())
        && !name.contains('_')
        && name.chars().all(|c| c.is_ascii_alphanumeric())
        && (name.len() == 1 || name.chars().any(|c| c.is_ascii_lowercase()));
    let converted = if keep {
        name.to_string()
    } else {
        sanitize(name, "Unnamed").to_upper_camel_case()
    };
    fix_unrawable(sanitize(&converted, "Unnamed"))
}

/// `snake_case` for fields and modules.
pub(crate) fn snake(name: &str) -> String {
    fix_unrawable(sanitize(
        &sanitize(name, "unnamed").to_snake_case(),
        "unnamed",
    ))
}

/// `SCREAMING_SNAKE_CASE` for constants.
pub(crate) fn shouty(name: &str) -> String {
    fix_unrawable(sanitize(
        &sanitize(name, "UNNAMED").to_shouty_snake_case(),
        "UNNAMED",
    ))
}

/// The identifier token for a converted name, raw (`r#type`) when it is a keyword.
pub(crate) fn ident(name: &str) -> Ident {
    let clean = fix_unrawable(sanitize(name, "unnamed"));
    if KEYWORDS.contains(&clean.as_str()) {
        Ident::new_raw(&clean, Span::call_site())
    } else {
        Ident::new(&clean, Span::call_site())
    }
}

/// [`ident`] as text: the converted name, `r#` before a keyword.
pub(crate) fn ident_text(name: &str) -> String {
    let clean = fix_unrawable(sanitize(name, "unnamed"));
    if KEYWORDS.contains(&clean.as_str()) {
        format!("r#{clean}")
    } else {
        clean
    }
}

/// The names taken in one namespace of one scope. [`claim`](Self::claim) gives each name
/// that collides with an earlier one a `_` suffix (repeated until unique), so the result
/// depends only on the order of claims.
#[derive(Clone, Debug, Default)]
pub(crate) struct Namespace {
    taken: BTreeSet<String>,
}

impl Namespace {
    pub(crate) fn with_reserved(names: &[&str]) -> Self {
        Namespace {
            taken: names.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Takes `wanted`, or the first free `wanted_`, `wanted__`, ...
    pub(crate) fn claim(&mut self, wanted: String) -> String {
        let mut name = wanted;
        while !self.taken.insert(name.clone()) {
            name.push('_');
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_conversion() {
        assert_eq!(upper_camel("HTTPServer"), "HTTPServer");
        assert_eq!(upper_camel("UNSPECIFIED"), "Unspecified");
        assert_eq!(upper_camel("EDITION_2026"), "Edition2026");
        assert_eq!(upper_camel("letters"), "Letters");
        assert_eq!(upper_camel("string_bass"), "StringBass");
        assert_eq!(upper_camel("X"), "X");
        assert_eq!(upper_camel("Self"), "Self_");
        assert_eq!(snake("innerM"), "inner_m");
        assert_eq!(snake("a_int16"), "a_int16");
        assert_eq!(snake("self"), "self_");
        assert_eq!(snake("Type"), "type");
        assert_eq!(shouty("exampleConstInt32"), "EXAMPLE_CONST_INT32");
        assert_eq!(shouty("ReadWrite"), "READ_WRITE");
    }

    #[test]
    fn hostile_names_still_make_identifiers() {
        for s in ["", "_", "9lives", "a-b", "ünï", "__", "crate", "r#x"] {
            let _ = ident(&upper_camel(s));
            let _ = ident(&snake(s));
            let _ = ident(&shouty(s));
        }
        assert_eq!(ident("type").to_string(), "r#type");
        assert_eq!(ident("self").to_string(), "self_");
        for s in ["type", "self", "x", "9", "match"] {
            assert_eq!(ident_text(s), ident(s).to_string());
        }
        assert_eq!(snake("9lives"), "_9lives");
    }

    #[test]
    fn collisions_get_suffixes_in_claim_order() {
        let mut ns = Namespace::with_reserved(&["owned"]);
        assert_eq!(ns.claim("owned".into()), "owned_");
        assert_eq!(ns.claim("x".into()), "x");
        assert_eq!(ns.claim("x".into()), "x_");
        assert_eq!(ns.claim("x".into()), "x__");
        assert_eq!(ns.claim("x_".into()), "x___");
    }
}

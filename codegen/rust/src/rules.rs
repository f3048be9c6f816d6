//! Schema paths of the attribute rules and extern paths: matching them against definitions
//! and members, parsing their attributes, and resolving extern paths to Rust paths.
//!
//! A path is matched against the fully qualified path of a definition (`.pkg.Type`) or of a
//! member (`.pkg.Type.field`), and against each of its ancestors, as prost-build does:
//!
//! - `.` matches everything;
//! - a path with a leading dot is anchored at the root: `.pkg` matches everything in package
//!   `pkg` (and its sub-packages), `.pkg.Type` that type, what is nested in it and its members;
//! - a path without a leading dot is anchored at any segment: `Type` matches every type named
//!   `Type` (and what is under it), `Type.field` that field of every type named `Type`.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::quote;

use crate::GenerateError;
use crate::model::{Body, DefId, Model, OWNED_MODULE, Ty};
use crate::names::ident;
use crate::options::{AttributeForm, AttributeRule, ExternPath, Options, parse_attributes};

/// True when `pattern` matches `path` (`.a.b.c`) or one of its ancestors (`.a.b`, `.a`).
pub(crate) fn matches(pattern: &str, path: &str) -> bool {
    if pattern == "." {
        return true;
    }
    let at_boundary = |end: usize| end == path.len() || path.as_bytes()[end] == b'.';
    if pattern.starts_with('.') {
        return path.starts_with(pattern) && at_boundary(pattern.len());
    }
    let needle = format!(".{pattern}");
    let mut from = 0;
    while let Some(i) = path[from..].find(&needle) {
        let end = from + i + needle.len();
        if at_boundary(end) {
            return true;
        }
        from += i + 1;
    }
    false
}

/// Which Rust type an item being emitted is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ItemForm {
    /// The view of a record that has an owned form of its own.
    View,
    /// The owned form of such a record.
    Owned,
    /// A type that is its own owned form: enums, flags, records without borrowed data.
    Same,
}

impl ItemForm {
    fn takes(self, form: AttributeForm) -> bool {
        matches!(
            (self, form),
            (ItemForm::Same, _)
                | (_, AttributeForm::Both)
                | (ItemForm::View, AttributeForm::View)
                | (ItemForm::Owned, AttributeForm::Owned)
        )
    }

    /// True for the types serde derives go on.
    pub(crate) fn owns_data(self) -> bool {
        self != ItemForm::View
    }
}

/// Attribute rules with their attributes parsed.
pub(crate) struct AttributeRules {
    rules: Vec<(AttributeRule, TokenStream)>,
}

impl AttributeRules {
    pub(crate) fn new(key: &str, rules: &[AttributeRule]) -> Result<Self, GenerateError> {
        let rules = rules
            .iter()
            .map(|rule| {
                let attrs = parse_attributes(key, &rule.attribute)?;
                Ok((rule.clone(), quote!(#(#attrs)*)))
            })
            .collect::<Result<_, GenerateError>>()?;
        Ok(AttributeRules { rules })
    }

    /// The attributes of every rule matching `path` that reaches `form`, in rule order.
    pub(crate) fn for_path(&self, path: &str, form: ItemForm) -> TokenStream {
        let mut out = TokenStream::new();
        for (rule, attrs) in &self.rules {
            if form.takes(rule.form) && matches(&rule.path, path) {
                out.extend(attrs.clone());
            }
        }
        out
    }
}

/// `.fqn`: the path attribute rules and extern paths match a definition by.
pub(crate) fn def_path(model: &Model<'_>, id: DefId) -> String {
    format!(".{}", model.defs[id].fqn)
}

/// The paths of the members of a definition attribute rules can reach: struct and message
/// fields, union branches, enum members that are variants.
pub(crate) fn member_paths(model: &Model<'_>, id: DefId) -> Vec<String> {
    let d = &model.defs[id];
    let base = def_path(model, id);
    let names: Vec<&str> = match &d.body {
        Body::Struct { fields, .. } | Body::Message { fields } => {
            fields.iter().map(|f| f.src_name.as_str()).collect()
        }
        Body::Union { branches, .. } => branches.iter().map(|b| b.src_name.as_str()).collect(),
        Body::Enum { members, .. } => members
            .iter()
            .filter(|m| m.alias_of.is_none())
            .map(|m| m.src_name.as_str())
            .collect(),
        _ => Vec::new(),
    };
    names.into_iter().map(|n| format!("{base}.{n}")).collect()
}

/// Warnings for attribute rules and extern paths that match nothing generated (usually a
/// typo in the path).
pub(crate) fn unmatched(
    model: &Model<'_>,
    opts: &Options,
    externs: &BTreeMap<DefId, ExternTarget>,
) -> Vec<String> {
    let types: Vec<DefId> = (0..model.defs.len())
        .filter(|id| model.defs[*id].is_type() && !externs.contains_key(id))
        .collect();
    let type_paths: Vec<String> = types.iter().map(|id| def_path(model, *id)).collect();
    let member_paths: Vec<String> = types
        .iter()
        .flat_map(|id| member_paths(model, *id))
        .collect();
    let mut out = Vec::new();
    for (what, rules, paths) in [
        ("type", &opts.type_attributes, &type_paths),
        ("field", &opts.field_attributes, &member_paths),
    ] {
        for rule in rules {
            if !paths.iter().any(|p| matches(&rule.path, p)) {
                out.push(format!(
                    "the {what} attribute `{}` for `{}` matches no generated {what}",
                    rule.attribute, rule.path
                ));
            }
        }
    }
    let used: BTreeSet<usize> = externs.values().map(|t| t.rule).collect();
    for (i, e) in opts.extern_paths.iter().enumerate() {
        if !used.contains(&i) {
            out.push(format!(
                "extern_path `{}` matches no definition of the schemas",
                e.bebop_path
            ));
        }
    }
    out
}

/// Where a definition generated elsewhere is.
#[derive(Clone, Debug)]
pub(crate) struct ExternTarget {
    /// The absolute path of its view type (for records with borrowed data, without the
    /// lifetime).
    pub view: TokenStream,
    /// The absolute path of its owned form (the view path when it is the same type); `None`
    /// when it has one of its own that the extern path does not say where to find.
    pub owned: Option<TokenStream>,
    /// The index of the extern path in [`Options::extern_paths`].
    pub rule: usize,
}

/// An absolute Rust path: a leading `::` or not, and its segments.
#[derive(Clone, Debug)]
struct RustPath {
    leading: bool,
    segments: Vec<String>,
}

impl RustPath {
    fn parse(text: &str) -> Result<RustPath, GenerateError> {
        let bad = || {
            GenerateError::option(
                "extern_path",
                format!("`{text}` is not an absolute path like `::other_crate::pkg`"),
            )
        };
        let path: syn::Path = syn::parse_str(text).map_err(|_| bad())?;
        if path.segments.iter().any(|s| !s.arguments.is_none()) {
            return Err(bad());
        }
        Ok(RustPath {
            leading: path.leading_colon.is_some(),
            segments: path.segments.iter().map(|s| s.ident.to_string()).collect(),
        })
    }

    /// This path with its last segment replaced by `tail`.
    fn parent_join(&self, tail: &[String]) -> RustPath {
        let mut segments = self.segments.clone();
        segments.pop();
        RustPath {
            leading: self.leading,
            segments,
        }
        .join(tail)
    }

    /// This path followed by generator names (converted to identifiers).
    fn join(&self, tail: &[String]) -> RustPath {
        let mut segments = self.segments.clone();
        segments.extend(tail.iter().map(|s| ident(s).to_string()));
        RustPath {
            leading: self.leading,
            segments,
        }
    }

    /// The path without `suffix` (generator names) at its end, when it ends with them and
    /// keeps at least one segment of its own.
    fn strip_suffix(&self, suffix: &[String]) -> Option<RustPath> {
        let n = self.segments.len().checked_sub(suffix.len())?;
        if n == 0 {
            return None;
        }
        let tail_matches = self.segments[n..]
            .iter()
            .zip(suffix)
            .all(|(a, b)| ident(b) == a);
        tail_matches.then(|| RustPath {
            leading: self.leading,
            segments: self.segments[..n].to_vec(),
        })
    }

    fn tokens(&self) -> TokenStream {
        let mut out = TokenStream::new();
        if self.leading {
            out.extend(quote!(::));
        }
        for (i, seg) in self.segments.iter().enumerate() {
            if i > 0 {
                out.extend(quote!(::));
            }
            let seg: TokenStream = seg.parse().unwrap_or_default();
            out.extend(seg);
        }
        out
    }
}

/// What an extern path names: a package (by its module path) or a definition.
enum Anchor {
    Package(Vec<String>),
    Def(DefId),
}

/// Resolves the extern paths: every definition they match (the most specific path wins), with
/// the Rust paths of its view and owned form. With owned types on, a generated record that
/// refers to an extern record with borrowed data needs that record's owned path: when the
/// extern path does not give it and it cannot be derived, that is an error.
pub(crate) fn resolve_externs(
    model: &Model<'_>,
    opts: &Options,
) -> Result<BTreeMap<DefId, ExternTarget>, GenerateError> {
    let mut out = BTreeMap::new();
    if opts.extern_paths.is_empty() {
        return Ok(out);
    }
    let by_fqn: BTreeMap<&str, DefId> = model
        .defs
        .iter()
        .enumerate()
        .map(|(id, d)| (d.fqn.as_str(), id))
        .collect();
    let packages: BTreeMap<&str, &Vec<String>> = model
        .packages
        .iter()
        .map(|(path, name)| (name.as_str(), path))
        .collect();
    for id in 0..model.defs.len() {
        let path = def_path(model, id);
        let Some((rule, e)) = opts
            .extern_paths
            .iter()
            .enumerate()
            .filter(|(_, e)| matches(&e.bebop_path, &path))
            .max_by_key(|(i, e)| (e.bebop_path.len(), usize::MAX - i))
        else {
            continue;
        };
        let target = resolve_one(model, id, e, rule, &by_fqn, &packages)?;
        out.insert(id, target);
    }
    if opts.owned_types {
        check_owned_paths(model, opts, &out)?;
    }
    Ok(out)
}

fn resolve_one(
    model: &Model<'_>,
    id: DefId,
    e: &ExternPath,
    rule: usize,
    by_fqn: &BTreeMap<&str, DefId>,
    packages: &BTreeMap<&str, &Vec<String>>,
) -> Result<ExternTarget, GenerateError> {
    let d = &model.defs[id];
    let name = e.bebop_path.strip_prefix('.').unwrap_or(&e.bebop_path);
    let anchor = match (by_fqn.get(name), packages.get(name)) {
        (Some(t), _) => Anchor::Def(*t),
        (None, Some(m)) => Anchor::Package((*m).clone()),
        (None, None) => {
            return Err(GenerateError::option(
                "extern_path",
                format!(
                    "`{}` matches `{}` but is neither a package nor a definition of the schemas",
                    e.bebop_path, d.fqn
                ),
            ));
        }
    };
    let rust = RustPath::parse(&e.rust_path)?;
    let owned_given = e.owned_path.as_deref().map(RustPath::parse).transpose()?;
    let mut own_path = d.module.clone();
    own_path.push(d.name.clone());
    let outside = || {
        GenerateError::invalid(
            &d.fqn,
            format!(
                "is not in the module tree of extern_path `{}`",
                e.bebop_path
            ),
        )
    };
    // `rel`: the definition's path below the anchor's module; `anchor_path`: the anchor's
    // own path from the include root.
    let (view, given, anchor_path) = match &anchor {
        Anchor::Def(t) if *t == id => (rust.clone(), owned_given.clone(), own_path.clone()),
        Anchor::Def(t) => {
            let t = &model.defs[*t];
            if !own_path.starts_with(&t.module) {
                return Err(outside());
            }
            let rel = &own_path[t.module.len()..];
            let mut anchor_path = t.module.clone();
            anchor_path.push(t.name.clone());
            (
                rust.parent_join(rel),
                owned_given.as_ref().map(|o| o.parent_join(rel)),
                anchor_path,
            )
        }
        Anchor::Package(m) => {
            if !d.module.starts_with(m) {
                return Err(outside());
            }
            let rel = &own_path[m.len()..];
            (
                rust.join(rel),
                owned_given.as_ref().map(|o| o.join(rel)),
                m.clone(),
            )
        }
    };
    let owned = if d.is_record() && d.lifetime {
        given
            .or_else(|| {
                let root = rust.strip_suffix(&anchor_path)?;
                let mut tail = vec![OWNED_MODULE.to_string()];
                tail.extend(own_path.iter().cloned());
                Some(root.join(&tail))
            })
            .map(|p| p.tokens())
    } else {
        Some(view.tokens())
    };
    Ok(ExternTarget {
        view: view.tokens(),
        owned,
        rule,
    })
}

/// The definitions a type refers to directly.
fn ty_defs(ty: &Ty, out: &mut Vec<DefId>) {
    match ty {
        Ty::Array(el) | Ty::Fixed(el, _) => ty_defs(el, out),
        Ty::Map(k, v) => {
            ty_defs(k, out);
            ty_defs(v, out);
        }
        Ty::Def(d) => out.push(*d),
        _ => {}
    }
}

fn check_owned_paths(
    model: &Model<'_>,
    opts: &Options,
    externs: &BTreeMap<DefId, ExternTarget>,
) -> Result<(), GenerateError> {
    for (id, d) in model.defs.iter().enumerate() {
        if externs.contains_key(&id) {
            continue;
        }
        let mut refs = Vec::new();
        match &d.body {
            Body::Struct { fields, .. } | Body::Message { fields } => {
                for f in fields {
                    ty_defs(&f.ty, &mut refs);
                }
            }
            Body::Union { branches, .. } => refs.extend(branches.iter().map(|b| b.target)),
            Body::Service { methods } => {
                for m in methods {
                    ty_defs(&m.request, &mut refs);
                    ty_defs(&m.response, &mut refs);
                }
            }
            _ => {}
        }
        for r in refs {
            let Some(target) = externs.get(&r) else {
                continue;
            };
            if target.owned.is_none() {
                let e = &opts.extern_paths[target.rule];
                return Err(GenerateError::option(
                    "extern_path",
                    format!(
                        "`{}` uses `{}`, which extern_path `{}` maps to `{}`; its owned form is a type of its own, and `{}` does not end with the modules this generator gives `{}`, so its path cannot be derived: give it (`extern_path_with_owned`, or `extern_path={}={}=OWNED_PATH`)",
                        d.fqn,
                        model.defs[r].fqn,
                        e.bebop_path,
                        e.rust_path,
                        e.rust_path,
                        e.bebop_path,
                        e.bebop_path,
                        e.rust_path,
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn paths_match_like_prost() {
        // Everything.
        assert!(matches(".", ".pkg.Type"));
        assert!(matches(".", ".Type.field"));
        // Fully qualified: the item and what is under it, on segment boundaries.
        assert!(matches(".pkg", ".pkg.Type"));
        assert!(matches(".pkg", ".pkg.sub.Type.field"));
        assert!(matches(".pkg.Type", ".pkg.Type"));
        assert!(matches(".pkg.Type", ".pkg.Type.field"));
        assert!(!matches(".pkg", ".pkgs.Type"));
        assert!(!matches(".pkg.Type", ".pkg.TypeB"));
        assert!(!matches(".Type", ".pkg.Type"));
        // Without the leading dot: the trailing segments of the item or of an ancestor.
        assert!(matches("Type", ".pkg.Type"));
        assert!(matches("Type", ".Type"));
        assert!(matches("Type", ".pkg.Type.field"));
        assert!(matches("Type.field", ".pkg.Type.field"));
        assert!(matches("field", ".pkg.Type.field"));
        assert!(matches("pkg", ".a.pkg.Type"));
        assert!(!matches("Type", ".pkg.MyType"));
        assert!(!matches("Type.field", ".pkg.Type.fields"));
        assert!(!matches("ype", ".pkg.Type"));
    }
}

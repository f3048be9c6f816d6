//! Generator options: [`Options`], [`OwnedMap`], [`AttributeRule`], [`ExternPath`], and
//! parsing them from a plugin parameter.

use crate::GenerateError;

/// The Rust type owned types use for `map[K, V]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OwnedMap {
    /// `BTreeMap<K, V>`: one value per key (the last one read wins) and encoding in ascending
    /// key order, so equal maps give equal bytes.
    #[default]
    BTreeMap,
    /// `Vec<(K, V)>`: entries in wire order with duplicates, so decoding and re-encoding gives
    /// back the same bytes.
    Vec,
}

/// Which form of a generated type an [`AttributeRule`] adds its attribute to.
///
/// A record with borrowed data has two Rust types, the view (`Name<'a>`) and the owned form
/// (`owned::Name`). Every other type (enums, `@flags` enums, and records without borrowed
/// data, whose owned form is the view type itself) is one Rust type, which every rule that
/// matches it reaches, whatever its form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AttributeForm {
    /// The view and the owned form.
    #[default]
    Both,
    /// The view only.
    View,
    /// The owned form only (for attributes such as `#[derive(serde::Deserialize)]`, which a
    /// view borrowing its input often cannot have).
    Owned,
}

/// An attribute to add to the generated types or fields a path matches: see
/// [`Generator::type_attribute`](crate::Generator::type_attribute) and
/// [`Generator::field_attribute`](crate::Generator::field_attribute) for the path rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AttributeRule {
    /// The schema path: `.` (everything), `.pkg.Type[.field]` (fully qualified: the item and
    /// everything under it) or `Type[.field]` (matched against the trailing segments).
    pub path: String,
    /// One or more outer attributes, such as `#[derive(Hash)]`.
    pub attribute: String,
    /// Which form of a type with two forms gets it.
    pub form: AttributeForm,
}

impl AttributeRule {
    /// A rule adding `attribute` to what `path` matches, in `form`.
    pub fn new(path: impl Into<String>, attribute: impl Into<String>, form: AttributeForm) -> Self {
        AttributeRule {
            path: path.into(),
            attribute: attribute.into(),
            form,
        }
    }
}

/// Definitions generated elsewhere: see [`Generator::extern_path`](crate::Generator::extern_path).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ExternPath {
    /// A fully qualified schema path: a package (`.pkg`, every definition in it and in its
    /// sub-packages) or a definition (`.pkg.Type`, with the definitions nested in it).
    pub bebop_path: String,
    /// The absolute Rust path of the package's module (or of the type) in the other crate,
    /// such as `::other_crate::pkg`.
    pub rust_path: String,
    /// The absolute Rust path of the package's module of owned types (or of the owned type);
    /// `None` to derive it from `rust_path` (see
    /// [`Generator::extern_path`](crate::Generator::extern_path)).
    pub owned_path: Option<String>,
}

impl ExternPath {
    /// `bebop_path` is generated elsewhere and reached at `rust_path`; owned forms where
    /// they usually are.
    pub fn new(bebop_path: impl Into<String>, rust_path: impl Into<String>) -> Self {
        ExternPath {
            bebop_path: bebop_path.into(),
            rust_path: rust_path.into(),
            owned_path: None,
        }
    }

    /// The same with the owned forms at `owned_path`.
    #[must_use]
    pub fn with_owned_path(mut self, owned_path: impl Into<String>) -> Self {
        self.owned_path = Some(owned_path.into());
        self
    }
}

/// What to generate and how. Build one with [`Options::default`] and then assign fields,
/// push rules, or call [`set`](Options::set); parse one from a plugin parameter with
/// [`Options::from_parameter`]; or let [`Generator`](crate::Generator)'s builder methods do
/// it. The struct is `#[non_exhaustive]`: new options are added without breaking callers,
/// which therefore cannot build it with a struct literal.
///
/// ```
/// use bebop_codegen_rust::{Options, OwnedMap};
///
/// let opts = Options::from_parameter(
///     r#"runtime=::bebop_runtime, owned=true, owned_cfg=feature = "alloc", map=vec"#,
/// )?;
/// assert_eq!(opts.runtime_path, "::bebop_runtime");
/// assert!(opts.owned_types);
/// assert_eq!(opts.owned_cfg.as_deref(), Some(r#"feature = "alloc""#));
/// assert_eq!(opts.owned_map, OwnedMap::Vec);
/// # Ok::<(), bebop_codegen_rust::GenerateError>(())
/// ```
///
/// ```
/// use bebop_codegen_rust::{AttributeForm, AttributeRule, Options};
///
/// let mut opts = Options::default();
/// opts.owned_types = true;
/// opts.serde = true;
/// opts.type_attributes.push(AttributeRule::new(
///     ".shop",
///     "#[derive(Hash)]",
///     AttributeForm::Owned,
/// ));
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// The path generated code reaches the runtime by: `::bebop_runtime` (the default: the
    /// crate users depend on, no_std without features) or `::bebop_core` (which it
    /// re-exports, for crates that depend on the core alone). Must be an absolute path
    /// (`::name`, `crate` or `crate::...`; `crate` is how `bebop-core` generates its own RPC
    /// types).
    pub runtime_path: String,
    /// Also generate owned types (`String`, `Vec`, a map type, `Box` for recursion) in a
    /// module tree `owned`, with conversions from and to the views. They need the runtime's
    /// `alloc` feature (`bebop-runtime/alloc`, or `bebop-core/alloc`). Off by default.
    pub owned_types: bool,
    /// A `cfg` predicate gating the `owned` module, such as `feature = "alloc"`; `None` for no
    /// gate.
    pub owned_cfg: Option<String>,
    /// The map type of owned types.
    pub owned_map: OwnedMap,
    /// A `cfg` predicate under which views derive `defmt::Format` (such as
    /// `feature = "defmt"`); `None` for no defmt support. The including crate must then
    /// depend on `defmt` and enable the runtime's `defmt` feature.
    pub defmt: Option<String>,
    /// Pipe the output through `rustfmt --edition 2024` when a `rustfmt` binary is found
    /// (`$RUSTFMT`, else `rustfmt` on `PATH`); otherwise (or when this is off) the output is
    /// formatted by prettyplease alone.
    pub rustfmt: bool,
    /// How many threads format the output of a big schema at most; `None` for as many as
    /// the machine has (up to 8). The output is the same whatever the number.
    pub threads: Option<usize>,
    /// The name of the generated file; by default the one file to generate with `.rs` for
    /// `.bop`, or `bebop_generated.rs` when several files are generated together.
    pub file_name: Option<String>,
    /// Also generate tokio services: an `AsyncHandler` trait, an `AsyncServer` and a typed
    /// `AsyncClient` per service, reaching the async runtime (`bebop-rpc`) by this absolute
    /// path, e.g. `::bebop_rpc`. Needs owned types. `None` (the default) for none.
    pub async_rpc: Option<String>,
    /// A `cfg` predicate gating the async services, such as `feature = "rpc"`; `None` for no
    /// gate (the owned types' gate applies as well).
    pub async_rpc_cfg: Option<String>,
    /// Derive `serde::Serialize` and `serde::Deserialize` on every type that owns its data:
    /// the owned forms, enums, `@flags` enums, and records without borrowed data (see
    /// [`Generator::serde`](crate::Generator::serde)). Off by default.
    pub serde: bool,
    /// A `cfg` predicate gating the serde derives, such as `feature = "serde"`; `None` for no
    /// gate.
    pub serde_cfg: Option<String>,
    /// Also generate one-pass reading for every struct, message and union view: an enum of
    /// its parts and impls of the runtime's `once::Parts` and `once::ReadOnce`
    /// ([`Generator::one_pass`](crate::Generator::one_pass)). Off by default.
    pub one_pass: bool,
    /// Attributes added to generated types, in order
    /// ([`Generator::type_attribute`](crate::Generator::type_attribute)).
    pub type_attributes: Vec<AttributeRule>,
    /// Attributes added to generated fields, union variants and enum variants, in order
    /// ([`Generator::field_attribute`](crate::Generator::field_attribute)).
    pub field_attributes: Vec<AttributeRule>,
    /// Definitions generated elsewhere, reached by Rust path
    /// ([`Generator::extern_path`](crate::Generator::extern_path)).
    pub extern_paths: Vec<ExternPath>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime_path: "::bebop_runtime".into(),
            owned_types: false,
            owned_cfg: None,
            owned_map: OwnedMap::BTreeMap,
            defmt: None,
            rustfmt: true,
            threads: None,
            file_name: None,
            async_rpc: None,
            async_rpc_cfg: None,
            serde: false,
            serde_cfg: None,
            one_pass: false,
            type_attributes: Vec::new(),
            field_attributes: Vec::new(),
            extern_paths: Vec::new(),
        }
    }
}

/// The keys [`Options::from_parameter`] and [`Options::apply_host_options`] understand.
pub const OPTION_KEYS: &[&str] = &[
    "runtime",
    "owned",
    "owned_cfg",
    "map",
    "defmt",
    "rustfmt",
    "file",
    "async_rpc",
    "async_rpc_cfg",
    "serde",
    "serde_cfg",
    "one_pass",
    "type_attribute",
    "view_type_attribute",
    "owned_type_attribute",
    "field_attribute",
    "view_field_attribute",
    "owned_field_attribute",
    "extern_path",
];

impl Options {
    /// Parses a plugin parameter (`--rust_opt=...`): comma-separated `key=value` pairs, keys
    /// from [`OPTION_KEYS`]:
    ///
    /// | key | value |
    /// |---|---|
    /// | `runtime` | the runtime path, e.g. `::bebop` |
    /// | `owned` | `true` / `false` |
    /// | `owned_cfg` | a cfg predicate, or empty for none |
    /// | `map` | `btree` / `vec` |
    /// | `defmt` | a cfg predicate, or empty for none |
    /// | `rustfmt` | `true` / `false` |
    /// | `file` | the output file name |
    /// | `async_rpc` | the async runtime path (`::bebop_rpc`), or empty for none |
    /// | `async_rpc_cfg` | a cfg predicate, or empty for none |
    /// | `serde` | `true` / `false` |
    /// | `serde_cfg` | a cfg predicate, or empty for none |
    /// | `one_pass` | `true` / `false` |
    /// | `type_attribute` | `PATH=ATTRIBUTE`, e.g. `.shop.Item=#[derive(Hash)]` (repeatable) |
    /// | `view_type_attribute`, `owned_type_attribute` | the same, for one form only |
    /// | `field_attribute` | `PATH=ATTRIBUTE`, e.g. `Item.name=#[doc(alias = "title")]` (repeatable) |
    /// | `view_field_attribute`, `owned_field_attribute` | the same, for one form only |
    /// | `extern_path` | `BEBOP_PATH=RUST_PATH` or `BEBOP_PATH=RUST_PATH=OWNED_PATH` (repeatable) |
    ///
    /// Commas inside parentheses, brackets, braces or double quotes do not separate pairs, so
    /// predicates like `all(feature = "a", feature = "b")` and attributes like
    /// `#[derive(Hash, PartialOrd)]` work. The keys of rules add a rule each time they appear;
    /// every other key sets its option (the last value wins). Unknown keys are errors.
    ///
    /// ```
    /// use bebop_codegen_rust::{AttributeForm, Options};
    ///
    /// let opts = Options::from_parameter(
    ///     "owned=true, serde=true, owned_type_attribute=.=#[derive(PartialOrd)], \
    ///      field_attribute=Item.name=#[doc(alias = \"title\")], \
    ///      extern_path=.common=::common_types::common",
    /// )?;
    /// assert!(opts.serde);
    /// assert_eq!(opts.type_attributes[0].path, ".");
    /// assert_eq!(opts.type_attributes[0].attribute, "#[derive(PartialOrd)]");
    /// assert_eq!(opts.type_attributes[0].form, AttributeForm::Owned);
    /// assert_eq!(opts.field_attributes[0].path, "Item.name");
    /// assert_eq!(opts.extern_paths[0].rust_path, "::common_types::common");
    /// # Ok::<(), bebop_codegen_rust::GenerateError>(())
    /// ```
    pub fn from_parameter(parameter: &str) -> Result<Self, GenerateError> {
        let mut options = Options::default();
        options.apply_parameter(parameter)?;
        Ok(options)
    }

    /// Applies the `key=value` pairs of a plugin parameter (see
    /// [`from_parameter`](Self::from_parameter)) on top of these options.
    pub fn apply_parameter(&mut self, parameter: &str) -> Result<(), GenerateError> {
        for pair in split_pairs(parameter) {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let Some((key, value)) = pair.split_once('=') else {
                return Err(GenerateError::option(
                    pair,
                    format!("expected `key=value` (keys: {})", OPTION_KEYS.join(", ")),
                ));
            };
            self.set(key.trim(), value.trim())?;
        }
        Ok(())
    }

    /// Applies compiler host options: keys starting with `rust.` (`rust.runtime`,
    /// `rust.owned`, ...), and the bare option names (`owned`, `map`, ...) too, because
    /// `bebopc` passes a plugin's own `options:` from `bebop.yml` as host options without a
    /// prefix. A `rust.` key wins over the same bare key; other keys belong to other plugins
    /// and are ignored.
    pub fn apply_host_options<'k>(
        &mut self,
        host_options: impl IntoIterator<Item = (&'k str, &'k str)>,
    ) -> Result<(), GenerateError> {
        let mut prefixed = Vec::new();
        for (key, value) in host_options {
            match key.strip_prefix("rust.") {
                Some(key) => prefixed.push((key, value)),
                None if OPTION_KEYS.contains(&key) => self.set(key, value)?,
                None => {}
            }
        }
        for (key, value) in prefixed {
            self.set(key, value)?;
        }
        Ok(())
    }

    /// Sets one option by its parameter key.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), GenerateError> {
        let cfg = |value: &str| (!value.is_empty()).then(|| value.to_string());
        match key {
            "runtime" => {
                check_runtime_path(value)?;
                self.runtime_path = value.to_string();
            }
            "owned" => self.owned_types = parse_bool(key, value)?,
            "owned_cfg" => self.owned_cfg = cfg(value),
            "map" => {
                self.owned_map = match value {
                    "btree" | "btreemap" | "BTreeMap" => OwnedMap::BTreeMap,
                    "vec" | "Vec" => OwnedMap::Vec,
                    _ => return Err(GenerateError::option(key, "expected `btree` or `vec`")),
                }
            }
            "defmt" => self.defmt = cfg(value),
            "async_rpc" => {
                if !value.is_empty() {
                    check_path("async_rpc", value)?;
                }
                self.async_rpc = cfg(value);
            }
            "async_rpc_cfg" => self.async_rpc_cfg = cfg(value),
            "serde" => self.serde = parse_bool(key, value)?,
            "serde_cfg" => self.serde_cfg = cfg(value),
            "one_pass" => self.one_pass = parse_bool(key, value)?,
            "type_attribute"
            | "view_type_attribute"
            | "owned_type_attribute"
            | "field_attribute"
            | "view_field_attribute"
            | "owned_field_attribute" => {
                let Some((path, attribute)) = value.split_once('=') else {
                    return Err(GenerateError::option(
                        key,
                        "expected `PATH=ATTRIBUTE`, such as `.pkg.Type=#[derive(Hash)]`",
                    ));
                };
                let form = if key.starts_with("view_") {
                    AttributeForm::View
                } else if key.starts_with("owned_") {
                    AttributeForm::Owned
                } else {
                    AttributeForm::Both
                };
                let rule = AttributeRule::new(path.trim(), attribute.trim(), form);
                check_attribute_rule(key, &rule)?;
                if key.ends_with("_type_attribute") || key == "type_attribute" {
                    self.type_attributes.push(rule);
                } else {
                    self.field_attributes.push(rule);
                }
            }
            "extern_path" => {
                let mut parts = value.split('=').map(str::trim);
                let (Some(bebop), Some(rust), owned, None) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    return Err(GenerateError::option(
                        key,
                        "expected `BEBOP_PATH=RUST_PATH` or `BEBOP_PATH=RUST_PATH=OWNED_PATH`, such as `.pkg=::other_crate::pkg`",
                    ));
                };
                let mut extern_path = ExternPath::new(bebop, rust);
                if let Some(owned) = owned {
                    extern_path = extern_path.with_owned_path(owned);
                }
                check_extern_path(&extern_path)?;
                self.extern_paths.push(extern_path);
            }
            "rustfmt" => self.rustfmt = parse_bool(key, value)?,
            "file" => {
                if value.is_empty() || value.starts_with('/') || value.split('/').any(|s| s == "..")
                {
                    return Err(GenerateError::option(
                        key,
                        "expected a relative file name without `..`",
                    ));
                }
                self.file_name = Some(value.to_string());
            }
            _ => {
                return Err(GenerateError::option(
                    key,
                    format!("unknown option (known: {})", OPTION_KEYS.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// Checks the options that can be wrong: the runtime path and the cfg predicates must
    /// parse as Rust.
    pub fn validate(&self) -> Result<(), GenerateError> {
        check_runtime_path(&self.runtime_path)?;
        if let Some(path) = &self.async_rpc {
            check_path("async_rpc", path)?;
            if !self.owned_types {
                return Err(GenerateError::option(
                    "async_rpc",
                    "async services take and return owned types: set `owned=true` too",
                ));
            }
        }
        for rule in &self.type_attributes {
            check_attribute_rule(rule_key("type", rule.form), rule)?;
        }
        for rule in &self.field_attributes {
            check_attribute_rule(rule_key("field", rule.form), rule)?;
        }
        for extern_path in &self.extern_paths {
            check_extern_path(extern_path)?;
        }
        for (key, predicate) in [
            ("owned_cfg", &self.owned_cfg),
            ("defmt", &self.defmt),
            ("async_rpc_cfg", &self.async_rpc_cfg),
            ("serde_cfg", &self.serde_cfg),
        ] {
            if let Some(p) = predicate {
                syn::parse_str::<syn::Meta>(p).map_err(|e| {
                    GenerateError::option(key, format!("`{p}` is not a cfg predicate: {e}"))
                })?;
            }
        }
        if let Some(name) = &self.file_name {
            if name.is_empty() || name.starts_with('/') || name.split('/').any(|s| s == "..") {
                return Err(GenerateError::option(
                    "file",
                    "expected a relative file name without `..`",
                ));
            }
        }
        Ok(())
    }
}

/// The parameter key of an attribute rule of `what` (`type` or `field`) in `form`.
fn rule_key(what: &str, form: AttributeForm) -> &'static str {
    match (what, form) {
        ("type", AttributeForm::Both) => "type_attribute",
        ("type", AttributeForm::View) => "view_type_attribute",
        ("type", AttributeForm::Owned) => "owned_type_attribute",
        (_, AttributeForm::Both) => "field_attribute",
        (_, AttributeForm::View) => "view_field_attribute",
        (_, AttributeForm::Owned) => "owned_field_attribute",
    }
}

/// Checks a schema path of a rule: `.`, or dot-separated names with an optional leading dot.
pub(crate) fn check_schema_path(key: &str, path: &str) -> Result<(), GenerateError> {
    if path == "." {
        return Ok(());
    }
    let body = path.strip_prefix('.').unwrap_or(path);
    let ok = !body.is_empty()
        && body.split('.').all(|seg| {
            !seg.is_empty() && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if ok {
        Ok(())
    } else {
        Err(GenerateError::option(
            key,
            format!(
                "`{path}` is not a schema path: expected `.`, `.pkg.Type[.field]` or `Type[.field]`"
            ),
        ))
    }
}

/// Parses one or more outer attributes (`#[derive(Hash)] #[repr(C)]`).
pub(crate) fn parse_attributes(
    key: &str,
    text: &str,
) -> Result<Vec<syn::Attribute>, GenerateError> {
    use syn::parse::Parser as _;
    let bad = |why: String| {
        GenerateError::option(
            key,
            format!("`{text}` is not an outer attribute like `#[derive(Hash)]`: {why}"),
        )
    };
    let attrs = syn::Attribute::parse_outer
        .parse_str(text)
        .map_err(|e| bad(e.to_string()))?;
    if attrs.is_empty() {
        return Err(bad("no attribute given".into()));
    }
    Ok(attrs)
}

fn check_attribute_rule(key: &str, rule: &AttributeRule) -> Result<(), GenerateError> {
    check_schema_path(key, &rule.path)?;
    parse_attributes(key, &rule.attribute).map(drop)
}

fn check_extern_path(e: &ExternPath) -> Result<(), GenerateError> {
    let key = "extern_path";
    check_schema_path(key, &e.bebop_path)?;
    if !e.bebop_path.starts_with('.') || e.bebop_path == "." {
        return Err(GenerateError::option(
            key,
            format!(
                "`{}` is not a fully qualified package or type: expected `.pkg` or `.pkg.Type`",
                e.bebop_path
            ),
        ));
    }
    check_path(key, &e.rust_path)?;
    if let Some(owned) = &e.owned_path {
        check_path(key, owned)?;
    }
    Ok(())
}

fn parse_bool(key: &str, value: &str) -> Result<bool, GenerateError> {
    match value {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(GenerateError::option(key, "expected `true` or `false`")),
    }
}

fn check_runtime_path(value: &str) -> Result<(), GenerateError> {
    check_path("runtime", value)
}

fn check_path(key: &str, value: &str) -> Result<(), GenerateError> {
    let ok = match syn::parse_str::<syn::Path>(value) {
        Ok(path) => {
            path.leading_colon.is_some()
                || path.segments.first().is_some_and(|s| s.ident == "crate")
        }
        Err(_) => false,
    };
    if ok {
        Ok(())
    } else {
        Err(GenerateError::option(
            key,
            format!("`{value}` is not an absolute path like `::bebop_core` or `crate::rt`"),
        ))
    }
}

/// Splits on commas outside parentheses, brackets, braces and double-quoted strings.
fn split_pairs(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_inside_predicates_do_not_split() {
        let o = Options::from_parameter(
            r#"owned=1,owned_cfg=all(feature = "a", feature = "b"),defmt=feature = "x,y""#,
        )
        .unwrap();
        assert_eq!(
            o.owned_cfg.as_deref(),
            Some(r#"all(feature = "a", feature = "b")"#)
        );
        assert_eq!(o.defmt.as_deref(), Some(r#"feature = "x,y""#));
        assert!(o.validate().is_ok());
    }

    #[test]
    fn bad_values_are_reported_by_key() {
        let err = Options::from_parameter("owned=maybe").unwrap_err();
        assert!(matches!(err, GenerateError::InvalidOption { ref key, .. } if key == "owned"));
        let err = Options::from_parameter("colour=blue").unwrap_err();
        assert!(err.to_string().contains("unknown option"));
        assert!(Options::from_parameter("runtime=bebop").is_err());
        assert!(Options::from_parameter("runtime=crate::rt").is_ok());
        assert!(Options::from_parameter("file=../x.rs").is_err());
        assert!(Options::from_parameter("novalue").is_err());
        let o = Options {
            defmt: Some("feature = ".into()),
            ..Options::default()
        };
        assert!(o.validate().is_err());
    }

    #[test]
    fn host_options_prefixed_win_over_bare_ones() {
        let mut o = Options::default();
        o.apply_host_options([("rust.owned", "true"), ("owned", "false"), ("c.x", "1")])
            .unwrap();
        assert!(o.owned_types);
        assert!(o.apply_host_options([("rust.nope", "1")]).is_err());
        // A plugin's own bebop.yml options arrive bare.
        let mut o = Options::default();
        o.apply_host_options([("owned", "true"), ("map", "vec"), ("nope", "1")])
            .unwrap();
        assert!(o.owned_types);
        assert_eq!(o.owned_map, OwnedMap::Vec);
    }
}

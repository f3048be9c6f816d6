//! Generator options: [`Options`], [`OwnedMap`], and parsing them from a plugin parameter.

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

/// What to generate and how. Build one with [`Options::default`] and the setters, or parse
/// it from a plugin parameter with [`Options::from_parameter`].
///
/// ```
/// use bebop_codegen_rust::{Options, OwnedMap};
///
/// let opts = Options::from_parameter(
///     r#"runtime=::bebop, owned=true, owned_cfg=feature = "alloc", map=vec"#,
/// )?;
/// assert_eq!(opts.runtime_path, "::bebop");
/// assert!(opts.owned_types);
/// assert_eq!(opts.owned_cfg.as_deref(), Some(r#"feature = "alloc""#));
/// assert_eq!(opts.owned_map, OwnedMap::Vec);
/// # Ok::<(), bebop_codegen_rust::GenerateError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The path generated code reaches the runtime by: `::bebop_core` (the default; no_std,
    /// no alloc) or `::bebop` (which re-exports it for std users). Must be an absolute path
    /// (`::name`, `crate` or `crate::...`; `crate` is how `bebop-core` generates its own RPC
    /// types).
    pub runtime_path: String,
    /// Also generate owned types (`String`, `Vec`, a map type, `Box` for recursion) in a
    /// module tree `owned`, with conversions from and to the views. They need the runtime's
    /// `alloc` feature (`bebop-core/alloc`, which `bebop` enables). Off by default.
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime_path: "::bebop_core".into(),
            owned_types: false,
            owned_cfg: None,
            owned_map: OwnedMap::BTreeMap,
            defmt: None,
            rustfmt: true,
            file_name: None,
            async_rpc: None,
            async_rpc_cfg: None,
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
    ///
    /// Commas inside parentheses or double quotes do not separate pairs, so predicates like
    /// `all(feature = "a", feature = "b")` work. Unknown keys are errors.
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
                    "expected `key=value` (keys: runtime, owned, owned_cfg, map, defmt, rustfmt, file)",
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
        for (key, predicate) in [
            ("owned_cfg", &self.owned_cfg),
            ("defmt", &self.defmt),
            ("async_rpc_cfg", &self.async_rpc_cfg),
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

/// Splits on commas outside parentheses and double-quoted strings.
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
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
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

//! The configuration file: `bebop.yml` (YAML) or `bebop.json` (JSON), read with `saphyr`.
//!
//! ```yaml
//! sources: ["schemas/**/*.bop"]     # globs of schemas to compile (a list or one string)
//! exclude: ["**/vendor/**"]         # globs left out of `sources`
//! include: ["vendor/bebop-std"]     # import directories
//! plugins:
//!   rust: ./generated/rust          # NAME: output directory, or
//!   ts:                             # NAME: { out, options, path }
//!     out: ./generated/ts
//!     options: { module: esm }
//!     path: ./tools/bebopc-gen-ts   # (an extension: the plugin executable)
//! options:                          # host options for every plugin
//!   namespace: MyApp.Models
//! format:                           # the layout of `bebopc fmt`
//!   indent: 4                       # spaces per level (1 to 16)
//!   line_width: 100                 # decorator arguments are wrapped past it
//! ```
//!
//! `rust` without a `path` is the Rust generator built into bebopc (no executable needed).
//!
//! Paths in the file (include directories, output directories, plugin executables, and the
//! base of the `sources` globs) are relative to the file's directory. Scalar option values
//! are kept as text (`true`, `3`). Unknown top-level keys give a warning; unknown keys inside
//! a plugin or `format`, and wrong types, an error with the file, line and column. A
//! `watch` key (the reference compiler's watch settings) is accepted and ignored: `bebopc
//! watch` watches the sources, their imports and this file.
//!
//! The older JSON layout (`bebop.json` with `include` as source globs and `generators`:
//! `[{ alias, outFile, ...}]`) is recognised by its `generators` key: `include` becomes
//! `sources`, each generator a plugin named after its `alias` writing into the directory of
//! its `outFile`, and its other keys that plugin's options.
//!
//! When no `-c FILE` is given, `bebop.yml`, `bebop.yaml` or `bebop.json` is looked for in the
//! working directory and then in each parent, as the reference compiler does.

use std::fmt;
use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

/// The names looked for, in order, in each directory.
pub const FILE_NAMES: &[&str] = &["bebop.yml", "bebop.yaml", "bebop.json"];

/// Configuration files larger than this are rejected.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Nesting deeper than this is rejected before the file is parsed.
const MAX_NESTING: usize = 64;

/// One plugin of the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginConfig {
    /// The plugin name (`NAME` of `bebopc-gen-NAME`).
    pub name: String,
    /// The output directory.
    pub out: PathBuf,
    /// The executable, when given.
    pub path: Option<PathBuf>,
    /// Options for this plugin only; they override the global ones.
    pub options: Vec<(String, String)>,
}

/// `format:`: what is given of the formatter's layout (the rest is the default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FormatConfig {
    /// `indent`: spaces per indentation level.
    pub indent: Option<usize>,
    /// `line_width`: the longest line wanted.
    pub line_width: Option<usize>,
}

/// A loaded configuration file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The file.
    pub path: PathBuf,
    /// Its directory: the base of relative paths.
    pub root: PathBuf,
    /// Globs of schemas to compile, relative to `root`.
    pub sources: Vec<String>,
    /// Globs to leave out.
    pub exclude: Vec<String>,
    /// Import directories (resolved against `root`).
    pub include: Vec<PathBuf>,
    /// Plugins to run.
    pub plugins: Vec<PluginConfig>,
    /// Host options for every plugin.
    pub options: Vec<(String, String)>,
    /// `plugin_timeout`: seconds a plugin may run before it is killed (0: no limit).
    pub plugin_timeout: Option<u64>,
    /// `format`: the layout of `bebopc fmt`.
    pub format: FormatConfig,
    /// Things worth telling the user (unknown keys, legacy layout).
    pub warnings: Vec<String>,
}

/// A configuration file that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, col)) => {
                write!(f, "{}:{line}:{col}: {}", self.path.display(), self.message)
            }
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The first configuration file in `start` or one of its parents.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    for dir in start.ancestors() {
        for name in FILE_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Reads and parses a configuration file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let err = |message: String| ConfigError {
        path: path.to_path_buf(),
        position: None,
        message,
    };
    let meta = std::fs::metadata(path)
        .map_err(|e| err(format!("cannot read the configuration file: {e}")))?;
    if !meta.is_file() {
        return Err(err("not a file".into()));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(err(format!(
            "the configuration file is {} bytes; the limit is {MAX_CONFIG_BYTES}",
            meta.len()
        )));
    }
    // At most the limit is read, whatever size the file system reported (`/proc` files say 0).
    let bytes = bebopc::resolve::read_at_most(path, MAX_CONFIG_BYTES as usize)
        .map_err(|e| err(format!("cannot read the configuration file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        err(format!(
            "not valid UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let root = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    parse(&text, path, &root)
}

/// Parses configuration text; `path` is for messages, `root` the base of relative paths.
pub fn parse(text: &str, path: &Path, root: &Path) -> Result<Config, ConfigError> {
    let mk = |position: Option<(usize, usize)>, message: String| ConfigError {
        path: path.to_path_buf(),
        position,
        message,
    };
    if let Some((line, col)) = too_deep(text) {
        return Err(mk(
            Some((line, col)),
            format!("nesting deeper than {MAX_NESTING} levels"),
        ));
    }
    let docs = MarkedYaml::load_from_str(text).map_err(|e| {
        mk(
            Some((e.marker().line(), e.marker().col() + 1)),
            e.info().to_string(),
        )
    })?;
    let mut config = Config {
        path: path.to_path_buf(),
        root: root.to_path_buf(),
        ..Config::default()
    };
    if docs.len() > 1 {
        return Err(mk(None, "more than one YAML document".into()));
    }
    let Some(doc) = docs.first() else {
        return Ok(config);
    };
    let doc = untag(doc);
    let map = match &doc.data {
        YamlData::Mapping(m) => m,
        YamlData::Value(Scalar::Null) => return Ok(config),
        _ => {
            return Err(mk(
                pos(doc),
                "the top level must be a mapping (`key: value` lines)".into(),
            ));
        }
    };
    let cx = Cx { mk: &mk };
    let legacy = map.keys().any(|k| key_str(k) == Some("generators"));
    if legacy {
        config.warnings.push(format!(
            "{}: older configuration layout (`generators`): `include` is read as source globs",
            path.display()
        ));
    }
    for (k, v) in map.iter() {
        let Some(key) = key_str(k) else {
            return Err(mk(pos(k), "keys must be strings".into()));
        };
        match (key, legacy) {
            ("sources", _) | ("include", true) => config.sources = cx.strings(v, key)?,
            ("exclude", _) => config.exclude = cx.strings(v, key)?,
            ("include", false) => {
                config.include = cx.strings(v, key)?.into_iter().map(|d| root.join(d)).collect();
            }
            ("plugins", _) => config.plugins.extend(cx.plugins(v, root)?),
            ("generators", true) => config.plugins.extend(cx.generators(v, root, &mut config.warnings)?),
            ("options", _) => config.options = cx.options(v, key)?,
            ("plugin_timeout", _) => {
                config.plugin_timeout = Some(
                    scalar_text(v)
                        .and_then(|t| t.parse::<u64>().ok())
                        .ok_or_else(|| {
                            cx.err(v, "`plugin_timeout` must be a whole number of seconds".into())
                        })?,
                );
            }
            ("format", _) => config.format = cx.format(v)?,
            // The reference's `watch` settings; `bebopc watch` needs none.
            ("watch", _) => {}
            _ => config.warnings.push(format!(
                "{}: unknown key `{key}` ignored (expected sources, exclude, include, plugins, options, plugin_timeout, format)",
                where_(path, k)
            )),
        }
    }
    Ok(config)
}

/// The position of the first bracket nesting deeper than [`MAX_NESTING`], or of a line
/// indented deeper than that many levels of two spaces (block nesting), if any. Guards the
/// YAML loader, which builds (and drops) nested nodes recursively.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    for (line_no, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches([' ', '-']).len();
        if indent / 2 > MAX_NESTING * 2 {
            return Some((line_no + 1, 1));
        }
        let mut quote: Option<char> = None;
        for (col, c) in line.chars().enumerate() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => break,
                (None, '[' | '{') => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Some((line_no + 1, col + 1));
                    }
                }
                (None, ']' | '}') => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    None
}

fn untag<'a, 'b>(node: &'b MarkedYaml<'a>) -> &'b MarkedYaml<'a> {
    match &node.data {
        YamlData::Tagged(_, inner) => untag(inner),
        _ => node,
    }
}

fn pos(node: &MarkedYaml<'_>) -> Option<(usize, usize)> {
    let m = node.span.start;
    (m.line() > 0).then(|| (m.line(), m.col() + 1))
}

fn where_(path: &Path, node: &MarkedYaml<'_>) -> String {
    match pos(node) {
        Some((l, c)) => format!("{}:{l}:{c}", path.display()),
        None => path.display().to_string(),
    }
}

fn key_str<'b>(node: &'b MarkedYaml<'_>) -> Option<&'b str> {
    match &untag(node).data {
        YamlData::Value(Scalar::String(s)) => Some(s.as_ref()),
        _ => None,
    }
}

/// A scalar as text (`true`, `3`, `1.5`, strings as written); `None` for null and
/// collections.
fn scalar_text(node: &MarkedYaml<'_>) -> Option<String> {
    match &untag(node).data {
        YamlData::Value(Scalar::String(s)) => Some(s.to_string()),
        YamlData::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        YamlData::Value(Scalar::Integer(i)) => Some(i.to_string()),
        YamlData::Value(Scalar::FloatingPoint(f)) => Some(f.to_string()),
        YamlData::Representation(s, _, _) => Some(s.to_string()),
        _ => None,
    }
}

struct Cx<'f> {
    mk: &'f dyn Fn(Option<(usize, usize)>, String) -> ConfigError,
}

impl Cx<'_> {
    fn err(&self, node: &MarkedYaml<'_>, message: String) -> ConfigError {
        (self.mk)(pos(node), message)
    }

    /// A list of strings, or one string.
    fn strings(&self, node: &MarkedYaml<'_>, key: &str) -> Result<Vec<String>, ConfigError> {
        match &untag(node).data {
            YamlData::Sequence(items) => items
                .iter()
                .map(|item| {
                    scalar_text(item)
                        .ok_or_else(|| self.err(item, format!("`{key}` entries must be strings")))
                })
                .collect(),
            YamlData::Value(Scalar::Null) => Ok(Vec::new()),
            _ => scalar_text(node)
                .map(|s| vec![s])
                .ok_or_else(|| self.err(node, format!("`{key}` must be a list of strings"))),
        }
    }

    /// A mapping of scalar values, in order.
    fn options(
        &self,
        node: &MarkedYaml<'_>,
        key: &str,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        match &untag(node).data {
            YamlData::Mapping(map) => map
                .iter()
                .map(|(k, v)| {
                    let k = scalar_text(k)
                        .ok_or_else(|| self.err(k, format!("`{key}` keys must be strings")))?;
                    let v = scalar_text(v).ok_or_else(|| {
                        self.err(
                            v,
                            format!("`{key}.{k}` must be a string, number or boolean"),
                        )
                    })?;
                    Ok((k, v))
                })
                .collect(),
            YamlData::Value(Scalar::Null) => Ok(Vec::new()),
            _ => Err(self.err(node, format!("`{key}` must be a mapping of `key: value`"))),
        }
    }

    /// `format: { indent, line_width }`.
    fn format(&self, node: &MarkedYaml<'_>) -> Result<FormatConfig, ConfigError> {
        let map = match &untag(node).data {
            YamlData::Mapping(map) => map,
            YamlData::Value(Scalar::Null) => return Ok(FormatConfig::default()),
            _ => {
                return Err(self.err(
                    node,
                    "`format` must be a mapping (`{ indent: 4, line_width: 100 }`)".into(),
                ));
            }
        };
        let mut out = FormatConfig::default();
        for (k, v) in map.iter() {
            let number = |name: &str, range: std::ops::RangeInclusive<usize>| {
                scalar_text(v)
                    .and_then(|t| t.parse::<usize>().ok())
                    .filter(|n| range.contains(n))
                    .ok_or_else(|| {
                        self.err(
                            v,
                            format!(
                                "`format.{name}` must be a whole number from {} to {}",
                                range.start(),
                                range.end()
                            ),
                        )
                    })
            };
            match key_str(k) {
                Some("indent") => out.indent = Some(number("indent", 1..=16)?),
                Some("line_width") => out.line_width = Some(number("line_width", 1..=10_000)?),
                _ => {
                    return Err(self.err(
                        k,
                        "unknown key in `format` (expected indent, line_width)".into(),
                    ));
                }
            }
        }
        Ok(out)
    }

    fn plugins(
        &self,
        node: &MarkedYaml<'_>,
        root: &Path,
    ) -> Result<Vec<PluginConfig>, ConfigError> {
        let map = match &untag(node).data {
            YamlData::Mapping(map) => map,
            YamlData::Value(Scalar::Null) => return Ok(Vec::new()),
            _ => return Err(self.err(node, "`plugins` must be a mapping of `NAME: DIR`".into())),
        };
        let mut out = Vec::new();
        for (k, v) in map.iter() {
            let name = scalar_text(k)
                .filter(|n| crate::args::is_plugin_name(n))
                .ok_or_else(|| {
                    self.err(k, "plugin names are letters, digits, `_` and `-`".into())
                })?;
            let plugin = match &untag(v).data {
                YamlData::Mapping(body) => {
                    let mut out_dir = None;
                    let mut path = None;
                    let mut options = Vec::new();
                    for (bk, bv) in body.iter() {
                        match key_str(bk) {
                            Some("out") => out_dir = scalar_text(bv),
                            Some("path") => path = scalar_text(bv).map(|p| root.join(p)),
                            Some("options") => options = self.options(bv, "options")?,
                            _ => {
                                return Err(self.err(bk, format!(
                                    "unknown key in plugin `{name}` (expected out, options, path)"
                                )));
                            }
                        }
                    }
                    let out_dir = out_dir.ok_or_else(|| {
                        self.err(
                            v,
                            format!("plugin `{name}` needs an output directory (`out: DIR`)"),
                        )
                    })?;
                    PluginConfig {
                        name,
                        out: root.join(out_dir),
                        path,
                        options,
                    }
                }
                _ => {
                    let dir = scalar_text(v).filter(|d| !d.is_empty()).ok_or_else(|| {
                        self.err(v, format!("plugin `{name}` needs an output directory"))
                    })?;
                    PluginConfig {
                        name,
                        out: root.join(dir),
                        path: None,
                        options: Vec::new(),
                    }
                }
            };
            out.push(plugin);
        }
        Ok(out)
    }

    /// The older `generators: [{ alias, outFile, ... }]` list.
    fn generators(
        &self,
        node: &MarkedYaml<'_>,
        root: &Path,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<PluginConfig>, ConfigError> {
        let YamlData::Sequence(items) = &untag(node).data else {
            return Err(self.err(node, "`generators` must be a list".into()));
        };
        let mut out = Vec::new();
        for item in items {
            let YamlData::Mapping(map) = &untag(item).data else {
                return Err(self.err(
                    item,
                    "each generator must be a mapping with `alias` and `outFile`".into(),
                ));
            };
            let mut alias = None;
            let mut out_file = None;
            let mut options = Vec::new();
            for (k, v) in map.iter() {
                let key = key_str(k).ok_or_else(|| self.err(k, "keys must be strings".into()))?;
                let value = scalar_text(v).ok_or_else(|| {
                    self.err(
                        v,
                        format!("generator `{key}` must be a string, number or boolean"),
                    )
                })?;
                match key {
                    "alias" => alias = Some(value),
                    "outFile" => out_file = Some(value),
                    _ => options.push((key.to_string(), value)),
                }
            }
            let name = alias
                .filter(|a| crate::args::is_plugin_name(a))
                .ok_or_else(|| {
                    self.err(
                        item,
                        "a generator needs an `alias` (the plugin name)".into(),
                    )
                })?;
            let out_file = out_file
                .ok_or_else(|| self.err(item, format!("generator `{name}` needs an `outFile`")))?;
            let dir = Path::new(&out_file)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("."));
            warnings.push(format!(
                "generator `{name}`: plugins write directories; output goes into `{}` (from outFile `{out_file}`)",
                dir.display()
            ));
            out.push(PluginConfig {
                name,
                out: root.join(dir),
                path: None,
                options,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference fixtures' folder, holding their configuration files; `None` (the test
    /// is skipped) without the conformance data, unless `CI` is set (see `bebop-shared-data`).
    fn conformance() -> Option<PathBuf> {
        bebop_shared_data::conformance_dir("reference-fixtures")
    }

    #[test]
    fn reference_yaml_fixture() {
        let Some(root) = conformance() else {
            return;
        };
        let path = root.join("bebop.yml");
        let c = load(&path).unwrap();
        assert_eq!(c.sources, vec!["schemas/**/*.bop", "shared/*.bop"]);
        assert_eq!(c.exclude, vec!["**/vendor/**"]);
        assert_eq!(c.include, vec![root.join("vendor/bebop-std")]);
        let names: Vec<(&str, PathBuf)> = c
            .plugins
            .iter()
            .map(|p| (p.name.as_str(), p.out.clone()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("c", root.join("./generated/c")),
                ("typescript", root.join("./generated/ts"))
            ]
        );
        assert_eq!(
            c.options,
            vec![
                ("namespace".to_string(), "MyApp.Models".to_string()),
                ("emit_source_info".to_string(), "true".to_string())
            ]
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn reference_json_fixture_in_the_older_layout() {
        let Some(root) = conformance() else {
            return;
        };
        let path = root.join("bebop.json");
        let c = load(&path).unwrap();
        assert_eq!(c.sources, vec!["./Valid/*.bop"]);
        assert_eq!(c.exclude, vec!["./ShouldFail"]);
        let plugins: Vec<(&str, PathBuf)> = c
            .plugins
            .iter()
            .map(|p| (p.name.as_str(), p.out.clone()))
            .collect();
        assert_eq!(
            plugins,
            vec![
                ("cs", root.join("csoutput")),
                ("ts", root.join("tsoutput")),
                ("py", root.join("pyoutput"))
            ]
        );
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("older configuration layout"))
        );
    }

    #[test]
    fn plugin_mappings_scalars_and_single_strings() {
        let text = "sources: a.bop\nplugins:\n  rust:\n    out: gen\n    options: { serde: true, level: 3 }\n    path: tools/gen\n";
        let c = parse(text, Path::new("b.yml"), Path::new("/p")).unwrap();
        assert_eq!(c.sources, vec!["a.bop"]);
        assert_eq!(
            c.plugins,
            vec![PluginConfig {
                name: "rust".into(),
                out: PathBuf::from("/p/gen"),
                path: Some(PathBuf::from("/p/tools/gen")),
                options: vec![
                    ("serde".into(), "true".into()),
                    ("level".into(), "3".into())
                ],
            }]
        );
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("sources:\n  - [a, b]\n", Path::new("b.yml"), Path::new(".")).unwrap_err();
        assert_eq!(e.position, Some((2, 5)), "{e}");
        assert!(
            e.to_string()
                .starts_with("b.yml:2:5: `sources` entries must be strings"),
            "{e}"
        );
        let e = parse(
            "plugins:\n  c:\n    options: {}\n",
            Path::new("b.yml"),
            Path::new("."),
        )
        .unwrap_err();
        assert!(e.message.contains("needs an output directory"), "{e}");
        let e = parse("sources: [a\n", Path::new("b.yml"), Path::new(".")).unwrap_err();
        assert!(e.position.is_some(), "{e}");
        let e = parse("- a\n- b\n", Path::new("b.yml"), Path::new(".")).unwrap_err();
        assert!(e.message.contains("mapping"), "{e}");
    }

    #[test]
    fn unknown_keys_warn_and_empty_files_are_empty() {
        let c = parse("colour: red\n", Path::new("b.yml"), Path::new(".")).unwrap();
        assert!(
            c.warnings[0].contains("unknown key `colour`"),
            "{:?}",
            c.warnings
        );
        assert_eq!(
            parse("", Path::new("b.yml"), Path::new("."))
                .unwrap()
                .sources,
            Vec::<String>::new()
        );
        assert!(parse("# only a comment\n", Path::new("b.yml"), Path::new(".")).is_ok());
    }

    #[test]
    fn format_settings() {
        let c = parse(
            "format:\n  indent: 2\n  line_width: 80\nwatch: { anything: 1 }\n",
            Path::new("b.yml"),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(
            c.format,
            FormatConfig {
                indent: Some(2),
                line_width: Some(80)
            }
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let c = parse(
            "{\"format\": {\"indent\": 8}}",
            Path::new("b.json"),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(c.format.indent, Some(8));
        assert_eq!(c.format.line_width, None);
        let e = parse("format:\n  indnet: 2\n", Path::new("b.yml"), Path::new(".")).unwrap_err();
        assert_eq!(e.position, Some((2, 3)), "{e}");
        assert!(e.message.contains("unknown key in `format`"), "{e}");
        let e = parse(
            "format: { indent: 0 }\n",
            Path::new("b.yml"),
            Path::new("."),
        )
        .unwrap_err();
        assert!(e.message.contains("from 1 to 16"), "{e}");
        let e = parse("format: [4]\n", Path::new("b.yml"), Path::new(".")).unwrap_err();
        assert!(e.message.contains("must be a mapping"), "{e}");
    }

    #[test]
    fn hostile_nesting_is_refused_without_recursion() {
        let deep = format!("sources: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(&deep, Path::new("b.yml"), Path::new(".")).unwrap_err();
        assert!(e.message.contains("nesting deeper"), "{e}");
        let mut block = String::new();
        for i in 0..2000 {
            block.push_str(&" ".repeat(i * 2));
            block.push_str("a:\n");
        }
        let e = parse(&block, Path::new("b.yml"), Path::new(".")).unwrap_err();
        assert!(e.message.contains("nesting deeper"), "{e}");
    }
}

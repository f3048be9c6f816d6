//! [`Config`]: what to compile, how to generate, and where to write.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use bebop_codegen_rust::{
    AttributeForm, AttributeRule, ExternPath, Generator, Options, OwnedMap, TypeInfo,
};
use bebopc::Compiler;
use bebopc::descriptor::{DescriptorOptions, descriptor_set};

use crate::Error;
use crate::schemas::{self, Roots, StandardImports};

/// The default name of the generated file in the output directory.
pub const DEFAULT_FILE_NAME: &str = "bebop.rs";

/// Compiles Bebop schemas and generates one Rust file from them. Configure with the builder
/// methods, then call [`compile`](Self::compile).
///
/// Defaults: no include directory, output into `$OUT_DIR/bebop.rs`, the generator's
/// defaults ([`Options::default`]: runtime `::bebop_runtime`, views only, no serde, no extra
/// attributes, no extern paths, rustfmt when found), decorators' Lua blocks run (feature
/// `lua`), `cargo:rerun-if-changed=` and `cargo:warning=` lines printed. The crate docs list
/// every option.
#[derive(Clone, Debug)]
pub struct Config {
    include_dirs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    file_name: String,
    options: Options,
    lua: bool,
    env: Option<HashMap<String, String>>,
    rerun_if_changed: bool,
    cargo_warnings: bool,
    descriptor_set_path: Option<PathBuf>,
    source_info: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

/// What [`Config::compile`] produced.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Output {
    /// The generated Rust file (`include!` it).
    pub path: PathBuf,
    /// Every type the generated code defines, with its Rust path relative to the module the
    /// file is included in.
    pub types: Vec<TypeInfo>,
    /// The compiler's warnings (rendered like `bebopc` does) and the generator's (such as
    /// rustfmt not being found). Unless [`Config::emit_warnings`] is off, they were also
    /// printed as `cargo:warning=` lines.
    pub warnings: Vec<String>,
    /// The schema files read from disk (roots and imports; not the built-in standard
    /// schemas). Unless [`Config::emit_rerun_if_changed`] is off, a
    /// `cargo:rerun-if-changed=` line was printed for each.
    pub schema_files: Vec<PathBuf>,
}

impl Config {
    /// The default configuration.
    pub fn new() -> Config {
        Config {
            include_dirs: Vec::new(),
            out_dir: None,
            file_name: DEFAULT_FILE_NAME.to_string(),
            options: Options::default(),
            lua: cfg!(feature = "lua"),
            env: None,
            rerun_if_changed: true,
            cargo_warnings: true,
            descriptor_set_path: None,
            source_info: false,
        }
    }

    /// Adds a directory in which imports are looked up (`-I`), after those added before.
    /// The standard schemas (`bebop/decorators.bop`, `bebop/descriptor.bop`, ...) need none.
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Config {
        self.include_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds several include directories, in order.
    pub fn includes<I, P>(&mut self, dirs: I) -> &mut Config
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        for dir in dirs {
            self.include(dir);
        }
        self
    }

    /// The directory to write into, instead of `$OUT_DIR`. It is created when missing.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Config {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The name of the generated file in the output directory (default `bebop.rs`); a
    /// relative `/`-separated path without `..`.
    pub fn file_name(&mut self, name: impl Into<String>) -> &mut Config {
        self.file_name = name.into();
        self
    }

    /// The path by which generated code reaches the runtime crate: `::bebop_runtime` (the
    /// default, the crate users depend on), `::bebop_core` for a crate that depends on the
    /// core alone, or any absolute path (`crate::rt`) to a re-export of either.
    pub fn runtime_path(&mut self, path: impl Into<String>) -> &mut Config {
        self.options.runtime_path = path.into();
        self
    }

    /// Also generate owned types (`String`, `Vec`, a map type, `Box` for recursion) in a
    /// module `owned`, with `to_owned_value()`/`as_view()` conversions. They need the
    /// runtime's `alloc` feature. Off by default.
    pub fn owned_types(&mut self, on: bool) -> &mut Config {
        self.options.owned_types = on;
        self
    }

    /// A `cfg` predicate gating the owned types, such as `feature = "alloc"` (so that the
    /// crate builds without `alloc` when the feature is off); `None` for no gate.
    pub fn owned_cfg(&mut self, predicate: Option<&str>) -> &mut Config {
        self.options.owned_cfg = predicate.map(str::to_string);
        self
    }

    /// The map type of owned types: [`OwnedMap::BTreeMap`] (the default; one value per key,
    /// encoded in key order) or [`OwnedMap::Vec`] (`Vec<(K, V)>`: wire order and duplicates
    /// kept, so decoding and re-encoding gives back the same bytes).
    pub fn owned_map(&mut self, map: OwnedMap) -> &mut Config {
        self.options.owned_map = map;
        self
    }

    /// A `cfg` predicate under which the views derive `defmt::Format`, such as
    /// `feature = "defmt"` (the including crate then depends on `defmt` and enables the
    /// runtime's `defmt` feature); `None` (the default) for no defmt support.
    pub fn defmt(&mut self, predicate: Option<&str>) -> &mut Config {
        self.options.defmt = predicate.map(str::to_string);
        self
    }

    /// Also generate tokio services (`AsyncHandler`, `AsyncServer`, `AsyncClient` per
    /// service) reaching `bebop-rpc` by `path` (usually `::bebop_rpc`), gated by `cfg` if
    /// given. Needs [`owned_types`](Self::owned_types).
    ///
    /// ```
    /// let mut config = bebop_build::Config::new();
    /// config.owned_types(true).async_rpc("::bebop_rpc", Some(r#"feature = "rpc""#));
    /// ```
    pub fn async_rpc(&mut self, path: impl Into<String>, cfg: Option<&str>) -> &mut Config {
        self.options.async_rpc = Some(path.into());
        self.options.async_rpc_cfg = cfg.map(str::to_string);
        self
    }

    /// Whether to pipe the output through `rustfmt` (`$RUSTFMT`, else on `PATH`) when it is
    /// found (the default); otherwise the output is formatted by prettyplease alone.
    pub fn rustfmt(&mut self, on: bool) -> &mut Config {
        self.options.rustfmt = on;
        self
    }

    /// Derives `serde::Serialize` and `serde::Deserialize` on the types that own their data:
    /// owned forms (with [`owned_types`](Self::owned_types)), enums, `@flags` enums and
    /// records without borrowed data. Off by default. The crate then depends on `serde` with
    /// the `derive` feature (reached as `::serde`) and enables `bebop-runtime/serde`; see
    /// [`Generator::serde`](bebop_codegen_rust::Generator::serde) for the serialized forms.
    ///
    /// ```toml
    /// [dependencies]
    /// bebop-runtime = { version = "0.1", features = ["std", "serde"] }
    /// serde = { version = "1", features = ["derive"] }
    /// ```
    pub fn serde(&mut self, on: bool) -> &mut Config {
        self.options.serde = on;
        self
    }

    /// Generates one-pass reading (`once::ReadOnce`) for every struct, message and union
    /// view; see [`Generator::one_pass`](bebop_codegen_rust::Generator::one_pass). Off by
    /// default.
    pub fn one_pass(&mut self, on: bool) -> &mut Config {
        self.options.one_pass = on;
        self
    }

    /// A `cfg` predicate gating the serde derives, such as `feature = "serde"`; `None` (the
    /// default) for none.
    pub fn serde_cfg(&mut self, predicate: Option<&str>) -> &mut Config {
        self.options.serde_cfg = predicate.map(str::to_string);
        self
    }

    /// Adds `attribute` to the generated types `path` matches, views and owned forms: see
    /// [`Generator::type_attribute`](bebop_codegen_rust::Generator::type_attribute) for the
    /// path rules (`.`, `.pkg.Type`, `Type`). The attribute must parse as outer attributes
    /// (`#[derive(Hash)]`); otherwise [`compile`](Self::compile) fails naming the option.
    ///
    /// ```
    /// let mut config = bebop_build::Config::new();
    /// config
    ///     .owned_types(true)
    ///     .type_attribute(".shop", "#[derive(PartialOrd)]")
    ///     .owned_type_attribute(".shop.Order", r#"#[cfg_attr(feature = "x", derive(Hash))]"#)
    ///     .field_attribute("Order.id", r#"#[doc(alias = "number")]"#);
    /// ```
    pub fn type_attribute(&mut self, path: &str, attribute: &str) -> &mut Config {
        self.type_rule(path, attribute, AttributeForm::Both)
    }

    /// [`type_attribute`](Self::type_attribute) for view types only (types that are their
    /// own owned form, such as enums, get it too).
    pub fn view_type_attribute(&mut self, path: &str, attribute: &str) -> &mut Config {
        self.type_rule(path, attribute, AttributeForm::View)
    }

    /// [`type_attribute`](Self::type_attribute) for owned forms only (types that are their own
    /// owned form, such as enums, get it too): for derives such as `serde::Deserialize` that a
    /// view borrowing its input cannot have.
    pub fn owned_type_attribute(&mut self, path: &str, attribute: &str) -> &mut Config {
        self.type_rule(path, attribute, AttributeForm::Owned)
    }

    fn type_rule(&mut self, path: &str, attribute: &str, form: AttributeForm) -> &mut Config {
        self.options
            .type_attributes
            .push(AttributeRule::new(path, attribute, form));
        self
    }

    /// Adds `attribute` to the generated fields `path` matches (`.pkg.Type.field`,
    /// `Type.field`, `field`, or a type's path for all its fields): struct and message fields,
    /// union branches and enum variants, in views and owned forms. See
    /// [`Generator::field_attribute`](bebop_codegen_rust::Generator::field_attribute).
    pub fn field_attribute(&mut self, path: &str, attribute: &str) -> &mut Config {
        self.field_rule(path, attribute, AttributeForm::Both)
    }

    /// [`field_attribute`](Self::field_attribute) for the fields of view types only.
    pub fn view_field_attribute(&mut self, path: &str, attribute: &str) -> &mut Config {
        self.field_rule(path, attribute, AttributeForm::View)
    }

    /// [`field_attribute`](Self::field_attribute) for the fields of owned forms only (such as
    /// `#[serde(rename = "..")]` when only owned forms derive serde).
    pub fn owned_field_attribute(&mut self, path: &str, attribute: &str) -> &mut Config {
        self.field_rule(path, attribute, AttributeForm::Owned)
    }

    fn field_rule(&mut self, path: &str, attribute: &str, form: AttributeForm) -> &mut Config {
        self.options
            .field_attributes
            .push(AttributeRule::new(path, attribute, form));
        self
    }

    /// Declares the definitions of a Bebop package (`.common`) or a single definition
    /// (`.common.Point`) generated by another crate and reached at the absolute Rust path
    /// `rust_path`: they are not generated here, and the generated code refers to them there
    /// (views at `rust_path::Point<'a>`, owned forms in the other crate's `owned` tree, found
    /// by putting `owned` in front of the package's modules: `::common_types::common` gives
    /// `::common_types::owned::common`). See
    /// [`Generator::extern_path`](bebop_codegen_rust::Generator::extern_path).
    ///
    /// ```no_run
    /// // build.rs of a crate whose schemas import those of `common-types`, which includes
    /// // its generated file at its crate root.
    /// fn main() -> Result<(), bebop_build::Error> {
    ///     bebop_build::Config::new()
    ///         .include("schemas")
    ///         .include("../common-types/schemas")
    ///         .owned_types(true)
    ///         .extern_path(".common", "::common_types::common")
    ///         .compile(&["schemas/app.bop"])?;
    ///     Ok(())
    /// }
    /// ```
    pub fn extern_path(&mut self, bebop_path: &str, rust_path: &str) -> &mut Config {
        self.options
            .extern_paths
            .push(ExternPath::new(bebop_path, rust_path));
        self
    }

    /// [`extern_path`](Self::extern_path) with the owned forms at `owned_path` (the module of
    /// the package's owned types, or the owned type), for crates that re-export the generated
    /// modules under other names.
    pub fn extern_path_with_owned(
        &mut self,
        bebop_path: &str,
        rust_path: &str,
        owned_path: &str,
    ) -> &mut Config {
        self.options
            .extern_paths
            .push(ExternPath::new(bebop_path, rust_path).with_owned_path(owned_path));
        self
    }

    /// Replaces every generator option at once (the runtime path, owned types, map type,
    /// defmt, rustfmt, serde, attributes, extern paths, ...). The output file name is
    /// [`file_name`](Self::file_name)'s.
    pub fn generator_options(&mut self, options: Options) -> &mut Config {
        self.options = options;
        self
    }

    /// The generator options in use.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Whether to run the Lua `validate` and `export` blocks of user-defined decorators
    /// (sandboxed, with the `bebop-lua` runtime), as `bebopc` does. On by default when the
    /// crate feature `lua` is enabled (the default); turning it on without the feature makes
    /// [`compile`](Self::compile) fail with [`Error::Config`]. When off, decorator usages are
    /// still checked against their definitions.
    pub fn lua(&mut self, on: bool) -> &mut Config {
        self.lua = on;
        self
    }

    /// Uses this value for `$(KEY)` in schema strings. Once one is set, only the variables
    /// set this way are used, not the process environment (which a build script should not
    /// depend on without `cargo:rerun-if-env-changed`).
    pub fn env_var(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Config {
        self.env
            .get_or_insert_with(HashMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// Whether to print a `cargo:rerun-if-changed=` line for every schema file read (on by
    /// default; turn off outside build scripts). Cargo then reruns the build script only when
    /// one of them (or another file named that way) changes.
    pub fn emit_rerun_if_changed(&mut self, on: bool) -> &mut Config {
        self.rerun_if_changed = on;
        self
    }

    /// Whether to print warnings (the compiler's and the generator's) as `cargo:warning=`
    /// lines, one per line of the rendered diagnostic (on by default). They are in
    /// [`Output::warnings`] either way.
    pub fn emit_warnings(&mut self, on: bool) -> &mut Config {
        self.cargo_warnings = on;
        self
    }

    /// Also writes the compiled schemas as a `DescriptorSet` (`bebop/descriptor.bop`,
    /// Bebop-encoded, what `bebopc --desc_out` writes) to this path.
    pub fn descriptor_set_path(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.descriptor_set_path = Some(path.as_ref().to_path_buf());
        self
    }

    /// Whether the descriptor set written by
    /// [`descriptor_set_path`](Self::descriptor_set_path) carries source positions and
    /// comments (`--emit-source-info`). Off by default. The generator is always given them,
    /// so that every item's docs name its schema file and line.
    pub fn emit_source_info(&mut self, on: bool) -> &mut Config {
        self.source_info = on;
        self
    }

    /// Compiles `schemas` (paths of `.bop` files, and whatever they import) and writes the
    /// Rust code for them into one file of the output directory.
    ///
    /// A path that names no file but a standard schema (`bebop/descriptor.bop`) compiles
    /// the copy built into the compiler. The file is only rewritten when its content
    /// changes, so an unchanged schema does not rebuild the crate.
    pub fn compile<P: AsRef<Path>>(&self, schemas: &[P]) -> Result<Output, Error> {
        if self.lua && !cfg!(feature = "lua") {
            return Err(Error::Config(
                "Config::lua(true) needs the crate feature `lua` of bebop-build".into(),
            ));
        }
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => out_dir_from(std::env::var_os("OUT_DIR"))?,
        };
        let mut options = self.options.clone();
        options.file_name = Some(self.file_name.clone());
        // Fails early on bad options (and names the option), before compiling.
        options.validate()?;

        let roots = Roots::new(schemas);
        let standard = if roots.standard.is_empty() {
            None
        } else {
            let name = format!(
                ".{}.bebop-build-imports.bop",
                self.file_name.replace('/', "_")
            );
            Some(StandardImports::write(&out_dir, &name, &roots.standard)?)
        };
        let skip = standard.as_ref().map(StandardImports::path_text);
        let mut compile_paths = roots.disk.clone();
        compile_paths.extend(skip.clone());

        let compilation = self.compiler().compile(&compile_paths);
        drop(standard);

        let schema_files = schemas::files_read(
            &compilation.sources,
            &roots.disk,
            &self.include_dirs,
            skip.as_deref(),
        );
        if self.rerun_if_changed {
            let mut out = std::io::stdout().lock();
            for file in &schema_files {
                let _ = writeln!(out, "cargo:rerun-if-changed={}", file.display());
            }
        }

        if compilation.has_errors() {
            return Err(Error::Schema {
                errors: compilation.errors().count(),
                rendered: compilation.render_terminal(false),
            });
        }
        let mut warnings: Vec<String> = compilation
            .warnings()
            .filter(|d| skip.as_deref() != Some(compilation.sources.path(d.span.source)))
            .map(|d| d.render(&compilation.sources, false))
            .collect();

        let model = compilation.model.as_ref().ok_or_else(|| Error::Schema {
            errors: 0,
            rendered: "the compiler produced no model".into(),
        })?;
        // Source positions for the generator's doc lines (`From `shop.bop` (line 3)`), and
        // schema paths that name no directory of this machine.
        let mut set = descriptor_set(
            model,
            &compilation.sources,
            &DescriptorOptions { source_info: true },
        );
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        let renamed =
            schemas::relative_schema_paths(&mut set, &self.include_dirs, manifest_dir.as_deref());
        if let Some(path) = &self.descriptor_set_path {
            let mut written = set.clone();
            if !self.source_info {
                for schema in written.schemas.iter_mut().flatten() {
                    schema.source_code_info = None;
                }
            }
            let bytes = written
                .to_vec()
                .map_err(|e| Error::Config(format!("cannot encode the descriptor set: {e}")))?;
            write_if_changed(path, &bytes)?;
        }

        let files: Vec<&str> = roots
            .generate
            .iter()
            .map(|f| renamed.get(f).unwrap_or(f).as_str())
            .collect();
        let code = Generator::with_options(options).generate(&set, &files)?;
        warnings.extend(code.warnings);
        let content = code
            .files
            .into_iter()
            .map(|f| f.content)
            .collect::<Vec<_>>()
            .join("\n");
        let path = out_dir.join(&self.file_name);
        write_if_changed(&path, content.as_bytes())?;

        if self.cargo_warnings {
            let mut out = std::io::stdout().lock();
            for warning in &warnings {
                for line in warning.lines().filter(|l| !l.trim().is_empty()) {
                    let _ = writeln!(out, "cargo:warning={line}");
                }
            }
        }
        Ok(Output {
            path,
            types: code.types,
            warnings,
            schema_files,
        })
    }

    fn compiler(&self) -> Compiler {
        let mut compiler = Compiler::new();
        #[cfg(feature = "lua")]
        if self.lua {
            compiler = compiler.decorator_runtime(bebop_lua::LuaRuntime::new());
        }
        for dir in &self.include_dirs {
            compiler = compiler.include_dir(dir);
        }
        if let Some(env) = &self.env {
            compiler = compiler.env_map(env.clone());
        }
        compiler
    }
}

/// The output directory from the value of `OUT_DIR`.
fn out_dir_from(value: Option<std::ffi::OsString>) -> Result<PathBuf, Error> {
    value
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or(Error::NoOutDir)
}

/// Writes `bytes` to `path` (creating its directory) unless it already holds exactly them.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    }
    std::fs::write(path, bytes).map_err(Error::io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_dir_comes_from_the_environment_value() {
        assert_eq!(
            out_dir_from(Some("/tmp/x".into())).unwrap(),
            PathBuf::from("/tmp/x")
        );
        assert!(matches!(out_dir_from(None), Err(Error::NoOutDir)));
        assert!(matches!(
            out_dir_from(Some("".into())),
            Err(Error::NoOutDir)
        ));
    }

    #[test]
    fn unchanged_files_are_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b.rs");
        write_if_changed(&path, b"one").unwrap();
        let before = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_if_changed(&path, b"one").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            before
        );
        write_if_changed(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
    }
}

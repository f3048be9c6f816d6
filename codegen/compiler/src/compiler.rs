//! The entry point: [`Compiler`] compiles schema files (from disk or memory) into a
//! [`Compilation`]: the [`Model`] when there is no error, every diagnostic, and the sources
//! needed to render them.
//!
//! ```
//! use bebopc::Compiler;
//!
//! let result = Compiler::new().compile_source(
//!     "shop.bop",
//!     "import \"bebop/decorators.bop\"\n@flags enum Perm : uint8 { NONE = 0; READ = 1; }\n",
//! );
//! assert!(!result.has_errors(), "{}", result.render_terminal(false));
//! let model = result.model.as_ref().unwrap();
//! assert_eq!(model.schemas[0].path, "shop.bop");
//! assert!(model.find("Perm").is_some());
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::decorator::{DecoratorRuntime, NoDecoratorRuntime};
use crate::diag::{self, Diagnostic, Diagnostics, Format};
use crate::index::{self, SymbolIndex};
use crate::model::Model;
use crate::resolve::{self, FileSystem, Symbols};
use crate::source::SourceMap;
use crate::validate;

/// Compiles schemas. Configure with the builder methods, then call [`Compiler::compile`]
/// (files on disk) or one of the in-memory variants.
pub struct Compiler {
    include_dirs: Vec<PathBuf>,
    env: Option<HashMap<String, String>>,
    runtime: Box<dyn DecoratorRuntime>,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler::new()
    }
}

impl std::fmt::Debug for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiler")
            .field("include_dirs", &self.include_dirs)
            .field("env", &self.env.as_ref().map(|m| m.len()))
            .finish_non_exhaustive()
    }
}

impl Compiler {
    /// A compiler without include directories, reading `$(VAR)` values from the process
    /// environment, and with the no-op decorator runtime.
    pub fn new() -> Compiler {
        Compiler {
            include_dirs: Vec::new(),
            env: None,
            runtime: Box::new(NoDecoratorRuntime),
        }
    }

    /// Adds an include directory (`-I`) in which imports are searched, in order.
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Compiler {
        self.include_dirs.push(dir.into());
        self
    }

    /// Uses only these variables for `$(VAR)` substitution instead of the process
    /// environment.
    pub fn env_map(mut self, vars: HashMap<String, String>) -> Compiler {
        self.env = Some(vars);
        self
    }

    /// Adds one variable for `$(VAR)` substitution; the process environment is then no
    /// longer consulted.
    pub fn env_var(mut self, key: impl Into<String>, value: impl Into<String>) -> Compiler {
        self.env
            .get_or_insert_with(HashMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// Runs decorator validate/export blocks with this runtime.
    pub fn decorator_runtime(mut self, runtime: impl DecoratorRuntime + 'static) -> Compiler {
        self.runtime = Box::new(runtime);
        self
    }

    /// Compiles files from disk. Paths are kept as given in the model and in diagnostics.
    pub fn compile<P: AsRef<Path>>(&self, paths: &[P]) -> Compilation {
        let roots: Vec<String> = paths
            .iter()
            .map(|p| p.as_ref().to_string_lossy().into_owned())
            .collect();
        self.run(&roots, &FileSystem::Disk)
    }

    /// Compiles one in-memory file (it may import the standard schemas).
    pub fn compile_source(&self, path: &str, text: &str) -> Compilation {
        self.compile_in_memory(&[(path, text.as_bytes())], &[path])
    }

    /// Compiles in-memory files: `files` are `(path, contents)`, `roots` the paths to
    /// compile. Imports are looked up among `files` (also under the include directories)
    /// and the standard schemas.
    pub fn compile_in_memory(&self, files: &[(&str, &[u8])], roots: &[&str]) -> Compilation {
        let roots: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
        self.run(&roots, &memory(files))
    }

    /// Compiles in-memory files as [`Compiler::compile_in_memory`] does and also returns,
    /// errors or not, the model as far as it could be built and the [`SymbolIndex`] of every
    /// definition and reference: what an editor needs (`bebopc lsp`).
    pub fn analyze_in_memory(&self, files: &[(&str, &[u8])], roots: &[&str]) -> Analysis {
        let roots: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
        let (compilation, model, index) = self.run_full(&roots, &memory(files), true);
        Analysis {
            compilation,
            partial_model: model.unwrap_or_default(),
            index: index.unwrap_or_default(),
        }
    }

    fn run(&self, roots: &[String], fs: &FileSystem) -> Compilation {
        self.run_full(roots, fs, false).0
    }

    fn run_full(
        &self,
        roots: &[String],
        fs: &FileSystem,
        want_index: bool,
    ) -> (Compilation, Option<Model>, Option<SymbolIndex>) {
        let mut sources = SourceMap::new();
        let loaded = resolve::load(roots, &self.include_dirs, fs, &mut sources);
        let mut diagnostics = Diagnostics::new();
        for d in loaded.parse_diagnostics.iter().cloned() {
            diagnostics.push(d);
        }
        for d in loaded.import_diagnostics.iter().cloned() {
            diagnostics.push(d);
        }
        let lookup = |key: &str| -> Option<String> {
            match &self.env {
                Some(map) => map.get(key).cloned(),
                None => std::env::var(key).ok(),
            }
        };
        let mut analysis: Vec<Diagnostic> = Vec::new();
        let symbols = Symbols::build(&loaded.files, &mut analysis);
        let (model, more) = validate::analyze(
            &loaded.files,
            &symbols,
            &lookup,
            self.runtime.as_ref(),
            &sources,
        );
        analysis.extend(more);
        // After the analysis: looking names up again must not change its diagnostics (the
        // spelling suggestions it makes are bounded per compilation).
        let index = want_index.then(|| index::build(&loaded.files, &symbols));
        analysis.sort_by_key(|d| (d.span.source, d.span.start));
        for d in analysis {
            diagnostics.push(d);
        }
        let ok = !diagnostics.has_errors();
        let (complete, partial) = if want_index {
            (ok.then(|| model.clone()), Some(model))
        } else {
            (ok.then_some(model), None)
        };
        let compilation = Compilation {
            model: complete,
            diagnostics: diagnostics.into_vec(),
            sources,
        };
        (compilation, partial, index)
    }
}

/// In-memory files by normalized path.
fn memory(files: &[(&str, &[u8])]) -> FileSystem {
    let map = files
        .iter()
        .map(|(p, b)| {
            let key = resolve::normalize_import(p).unwrap_or_else(|_| p.to_string());
            (key, b.to_vec())
        })
        .collect();
    FileSystem::Memory(map)
}

/// The outcome of [`Compiler::analyze_in_memory`].
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The compilation, as [`Compiler::compile_in_memory`] returns it.
    pub compilation: Compilation,
    /// The model even when there were errors: every definition is there (indexed as in the
    /// [`SymbolIndex`]), but what had errors may be missing or incomplete (a field whose type
    /// did not resolve, struct sizes after a layout error).
    pub partial_model: Model,
    /// Every definition and resolved reference.
    pub index: SymbolIndex,
}

/// The outcome of a compilation.
#[derive(Clone, Debug)]
pub struct Compilation {
    /// The model, present when there was no error.
    pub model: Option<Model>,
    /// Every error and warning, in phase order (parsing, imports, then analysis).
    pub diagnostics: Vec<Diagnostic>,
    /// The files read, for rendering diagnostics and looking up positions.
    pub sources: SourceMap,
}

impl Compilation {
    /// Whether any error was reported.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }

    /// Renders every diagnostic for a terminal.
    pub fn render_terminal(&self, color: bool) -> String {
        diag::render_all(&self.diagnostics, &self.sources, Format::Terminal, color)
    }

    /// Renders every diagnostic as JSON lines.
    pub fn render_json(&self) -> String {
        diag::render_all(&self.diagnostics, &self.sources, Format::Json, false)
    }

    /// The model lowered to a `DescriptorSet` (see [`crate::descriptor`]); `None` when
    /// there were errors.
    pub fn descriptor_set(
        &self,
        options: &crate::descriptor::DescriptorOptions,
    ) -> Option<bebop_descriptor::DescriptorSet> {
        let model = self.model.as_ref()?;
        Some(crate::descriptor::descriptor_set(
            model,
            &self.sources,
            options,
        ))
    }

    /// The request for a code generator plugin (see
    /// [`crate::descriptor::code_generator_request`]); `None` when there were errors.
    pub fn code_generator_request(
        &self,
        options: &crate::descriptor::DescriptorOptions,
        parameter: Option<String>,
        host_options: &[(String, String)],
    ) -> Option<bebop_descriptor::CodeGeneratorRequest> {
        let model = self.model.as_ref()?;
        Some(crate::descriptor::code_generator_request(
            model,
            &self.sources,
            options,
            parameter,
            host_options,
        ))
    }

    /// The model and the diagnostics.
    pub fn into_parts(self) -> (Option<Model>, Vec<Diagnostic>) {
        (self.model, self.diagnostics)
    }
}

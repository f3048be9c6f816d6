//! What a `build` or `check` run works on: the configuration file (explicit or found), the
//! schema files (arguments, or the configuration's `sources`) and the import directories.

use std::path::{Path, PathBuf};

use bebopc::{Compilation, Compiler};

use crate::args::{GlobalArgs, InputArgs};
use crate::config::{self, Config};
use crate::report::Reporter;
use crate::sources;

/// The inputs of a run.
#[derive(Debug)]
pub struct Project {
    /// The configuration, when one was given or found.
    pub config: Option<Config>,
    /// The schema files to compile, as they will be named in diagnostics and descriptors.
    pub files: Vec<String>,
    /// Import directories: the configuration's, then `-I`.
    pub include: Vec<PathBuf>,
}

/// Loads the configuration: `-c FILE`, or the first `bebop.yml` (`.yaml`, `.json`) in the
/// working directory or a parent. Errors are usage errors.
pub fn load_config(global: &GlobalArgs, reporter: &Reporter) -> Result<Option<Config>, String> {
    let path = match &global.config {
        Some(path) => {
            if !path.is_file() {
                return Err(format!("configuration file not found: {}", path.display()));
            }
            path.clone()
        }
        None => match config::discover(Path::new(".")) {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    let mut config = config::load(&path).map_err(|e| e.to_string())?;
    // A configuration found in the working directory gives paths relative to it.
    if let (Ok(root), Ok(cwd)) = (std::fs::canonicalize(&config.root), std::env::current_dir()) {
        if std::fs::canonicalize(cwd).is_ok_and(|cwd| cwd == root) {
            config.root = PathBuf::from(".");
        }
    }
    reporter.verbose(&format!("configuration: {}", path.display()));
    for w in std::mem::take(&mut config.warnings) {
        reporter.warning(&w);
    }
    Ok(Some(config))
}

/// Works out the files and import directories. Errors are usage errors.
pub fn load(
    global: &GlobalArgs,
    input: &InputArgs,
    reporter: &Reporter,
) -> Result<Project, String> {
    let config = load_config(global, reporter)?;
    let mut exclude: Vec<String> = config
        .as_ref()
        .map(|c| c.exclude.clone())
        .unwrap_or_default();
    exclude.extend(input.exclude.iter().cloned());
    let files = if !input.files.is_empty() {
        let files = sources::resolve(&input.files, &exclude, Path::new("."))?;
        if files.is_empty() {
            return Err(format!("no schema file matches {}", input.files.join(" ")));
        }
        let cwd = std::env::current_dir().ok();
        files
            .into_iter()
            .map(|f| relative_to(cwd.as_deref(), f))
            .collect()
    } else {
        match &config {
            Some(c) if !c.sources.is_empty() => {
                let files = sources::resolve(&c.sources, &exclude, &c.root)?;
                if files.is_empty() {
                    return Err(format!(
                        "no schema file matches the `sources` of {} ({})",
                        c.path.display(),
                        c.sources.join(", ")
                    ));
                }
                files
            }
            _ => {
                return Err(
                    "no schemas to compile: name them (bebopc build FILES...) or list `sources` in bebop.yml"
                        .to_string(),
                );
            }
        }
    };
    let mut include: Vec<PathBuf> = config
        .as_ref()
        .map(|c| c.include.clone())
        .unwrap_or_default();
    include.extend(input.include.iter().cloned());
    for dir in &include {
        if !dir.is_dir() {
            reporter.warning(&format!(
                "import directory {} does not exist",
                dir.display()
            ));
        }
    }
    Ok(Project {
        config,
        files,
        include,
    })
}

impl Project {
    /// Compiles the files.
    pub fn compile(&self, reporter: &Reporter) -> Compilation {
        let mut compiler = Compiler::new();
        #[cfg(feature = "lua")]
        {
            compiler = compiler.decorator_runtime(bebop_lua::LuaRuntime::new());
        }
        for dir in &self.include {
            compiler = compiler.include_dir(dir);
        }
        reporter.verbose(&format!("compiling {}", self.files.join(", ")));
        compiler.compile(&self.files)
    }
}

/// An absolute schema path inside the working directory `cwd`, made relative to it, so that
/// diagnostics, descriptors and output files name it as `schemas/a.bop` rather than by the
/// whole path. Anything else is returned unchanged.
fn relative_to(cwd: Option<&Path>, file: String) -> String {
    let path = Path::new(&file);
    let Some(cwd) = cwd.filter(|_| path.is_absolute()) else {
        return file;
    };
    match path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        _ => file,
    }
}

#[cfg(test)]
mod tests {
    use super::relative_to;
    use std::path::Path;

    #[test]
    fn absolute_paths_inside_the_working_directory_become_relative() {
        let cwd = Some(Path::new("/work/proj"));
        assert_eq!(
            relative_to(cwd, "/work/proj/schemas/a.bop".into()),
            "schemas/a.bop"
        );
        assert_eq!(
            relative_to(cwd, "/elsewhere/a.bop".into()),
            "/elsewhere/a.bop"
        );
        assert_eq!(relative_to(cwd, "schemas/a.bop".into()), "schemas/a.bop");
        assert_eq!(
            relative_to(None, "/work/proj/a.bop".into()),
            "/work/proj/a.bop"
        );
        // The working directory itself is not a schema name.
        assert_eq!(relative_to(cwd, "/work/proj".into()), "/work/proj");
    }
}

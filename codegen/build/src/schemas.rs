//! Which schemas to compile and which files a compilation read.
//!
//! A schema path names a file on disk (relative to the working directory, which for a build
//! script is the package root). A path that names no file but one of the standard schemas
//! built into the compiler (`bebop/descriptor.bop`, ...) compiles the built-in copy: the
//! compiler only reads roots from disk, so such roots are imported by a small schema written
//! next to the output (and removed after compiling) and passed to the generator by their
//! import path.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use bebop_descriptor::DescriptorSet;
use bebopc::source::SourceMap;

use crate::Error;

/// The schemas of one [`Config::compile`](crate::Config::compile) call, sorted out.
#[derive(Debug, Default)]
pub(crate) struct Roots {
    /// Paths of files on disk, as given (deduplicated, in order).
    pub disk: Vec<String>,
    /// Import paths of built-in standard schemas (deduplicated, in order).
    pub standard: Vec<String>,
    /// Every schema to generate code for, in the order given: a request's
    /// `files_to_generate`.
    pub generate: Vec<String>,
}

impl Roots {
    /// Sorts `schemas` into files on disk and standard schemas.
    pub fn new<P: AsRef<Path>>(schemas: &[P]) -> Roots {
        let mut roots = Roots::default();
        for schema in schemas {
            let path = schema.as_ref();
            let text = path.to_string_lossy().into_owned();
            if roots.generate.contains(&text) {
                continue;
            }
            if !path.exists() {
                if let Some(import) = standard_import(&text) {
                    if !roots.generate.contains(&import) {
                        roots.standard.push(import.clone());
                        roots.generate.push(import);
                    }
                    continue;
                }
            }
            roots.disk.push(text.clone());
            roots.generate.push(text);
        }
        roots
    }
}

/// The import path of a standard schema named by `path`, when it names one.
fn standard_import(path: &str) -> Option<String> {
    let normalized = bebopc::resolve::normalize_import(path).ok()?;
    bebopc::stdlib::lookup(&normalized).map(|_| normalized)
}

/// A schema file importing the standard schemas to compile, removed when dropped.
#[derive(Debug)]
pub(crate) struct StandardImports {
    path: PathBuf,
}

impl StandardImports {
    /// Writes `dir/name` importing every path of `imports`.
    pub fn write(dir: &Path, name: &str, imports: &[String]) -> Result<StandardImports, Error> {
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
        let path = dir.join(name);
        let mut text = String::from(
            "// Written by bebop-build to compile standard schemas; removed after compiling.\n",
        );
        for import in imports {
            text.push_str(&format!("import \"{import}\"\n"));
        }
        std::fs::write(&path, text).map_err(Error::io(&path))?;
        Ok(StandardImports { path })
    }

    /// The path to hand the compiler (and to recognise in its source map).
    pub fn path_text(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }
}

impl Drop for StandardImports {
    fn drop(&mut self) {
        // Best effort: a leftover file in the output directory harms nothing.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The files on disk a compilation read: the roots as given, and every import found under
/// an include directory (searched as the compiler does: the first directory holding the
/// file). Built-in standard schemas and the generated `skip` file are left out. Paths are
/// absolute when they can be made so.
pub(crate) fn files_read(
    sources: &SourceMap,
    disk_roots: &[String],
    include_dirs: &[PathBuf],
    skip: Option<&str>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for (_, file) in sources.iter() {
        let path = file.path();
        if Some(path) == skip {
            continue;
        }
        let found = if disk_roots.iter().any(|r| r == path) {
            Some(PathBuf::from(path))
        } else {
            include_dirs
                .iter()
                .map(|dir| dir.join(path))
                .find(|candidate| candidate.is_file())
        };
        if let Some(found) = found {
            let found = std::fs::canonicalize(&found).unwrap_or(found);
            if !out.contains(&found) {
                out.push(found);
            }
        }
    }
    out
}

/// Makes the paths of schemas given as absolute paths relative, so that the generated code
/// (its header and every item's docs) and the descriptor set name no directory of the build
/// machine: relative to the first include directory holding the file, else to the crate's
/// manifest directory, else the file name alone (with as many parent directories as keep it
/// apart from the other schemas' paths). Relative paths are kept as given; imports are
/// written relative to an include directory already. Returns the old and new paths.
pub(crate) fn relative_schema_paths(
    set: &mut DescriptorSet,
    include_dirs: &[PathBuf],
    manifest_dir: Option<&Path>,
) -> HashMap<String, String> {
    let schemas = set.schemas.get_or_insert_with(Vec::new);
    let bases: Vec<PathBuf> = include_dirs
        .iter()
        .map(PathBuf::as_path)
        .chain(manifest_dir)
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf()))
        .collect();
    let mut taken: HashSet<String> = schemas
        .iter()
        .filter_map(|s| s.path.clone())
        .filter(|p| !Path::new(p).is_absolute())
        .collect();
    let mut renamed = HashMap::new();
    for schema in schemas.iter_mut() {
        let Some(old) = schema.path.clone().filter(|p| Path::new(p).is_absolute()) else {
            continue;
        };
        let file = std::fs::canonicalize(&old).unwrap_or_else(|_| PathBuf::from(&old));
        let relative = bases
            .iter()
            .find_map(|base| file.strip_prefix(base).ok())
            .map(slash_path)
            .filter(|p| !p.is_empty() && !taken.contains(p));
        let new = relative.unwrap_or_else(|| {
            // The shortest tail of the path that no other schema has.
            let parts: Vec<String> = file
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect();
            (1..=parts.len())
                .map(|n| parts[parts.len() - n..].join("/"))
                .find(|tail| !taken.contains(tail))
                .unwrap_or_else(|| parts.join("/"))
        });
        taken.insert(new.clone());
        schema.path = Some(new.clone());
        renamed.insert(old, new);
    }
    for schema in schemas.iter_mut() {
        for import in schema.imports.iter_mut().flatten() {
            if let Some(new) = renamed.get(import.as_str()) {
                *import = new.clone();
            }
        }
    }
    renamed
}

/// A relative path with `/` separators.
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_schemas_are_recognised_when_no_file_has_their_path() {
        let roots = Roots::new(&[
            "bebop/descriptor.bop",
            "./bebop//plugin.bop",
            "bebop/descriptor.bop",
            "no/such/file.bop",
            "bebop/nope.bop",
        ]);
        assert_eq!(roots.standard, ["bebop/descriptor.bop", "bebop/plugin.bop"]);
        assert_eq!(roots.disk, ["no/such/file.bop", "bebop/nope.bop"]);
        assert_eq!(
            roots.generate,
            [
                "bebop/descriptor.bop",
                "bebop/plugin.bop",
                "no/such/file.bop",
                "bebop/nope.bop"
            ]
        );
    }

    #[test]
    fn a_file_on_disk_wins_over_the_standard_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bebop/empty.bop");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "struct Mine {}").unwrap();
        let roots = Roots::new(&[&path]);
        assert!(roots.standard.is_empty());
        assert_eq!(roots.disk, [path.to_string_lossy()]);
    }

    #[test]
    fn imports_are_found_in_the_first_include_dir_that_has_them() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::write(b.path().join("dep.bop"), "").unwrap();
        std::fs::write(a.path().join("root.bop"), "").unwrap();
        let root = a.path().join("root.bop").to_string_lossy().into_owned();
        let mut map = SourceMap::new();
        map.add(root.clone(), String::new());
        map.add("dep.bop", String::new());
        map.add("bebop/decorators.bop", String::new());
        map.add("generated.bop", String::new());
        let read = files_read(
            &map,
            std::slice::from_ref(&root),
            &[a.path().to_path_buf(), b.path().to_path_buf()],
            Some("generated.bop"),
        );
        assert_eq!(
            read,
            [
                std::fs::canonicalize(&root).unwrap(),
                std::fs::canonicalize(b.path().join("dep.bop")).unwrap()
            ]
        );
    }
}

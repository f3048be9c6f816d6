//! Writing generated files under an output directory, with insertion points.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bebop_descriptor::GeneratedFile;

use crate::PluginError;

/// The marker an insertion point `NAME` is written as in a generated file, usually inside a
/// comment: `// @@bebopc_insertion_point(NAME)`.
///
/// ```
/// assert_eq!(
///     bebop_plugin_host::insertion_marker("imports"),
///     "@@bebopc_insertion_point(imports)"
/// );
/// ```
pub fn insertion_marker(point: &str) -> String {
    format!("@@bebopc_insertion_point({point})")
}

/// Checks that a generated file's name is a relative, `/`-separated path that stays inside
/// the output directory, and returns it normalised (`.` and empty components removed).
///
/// ```
/// use bebop_plugin_host::normalize_file_name;
///
/// assert_eq!(normalize_file_name("gen/./types.rs"), Ok("gen/types.rs".to_string()));
/// assert!(normalize_file_name("../evil.rs").is_err());
/// assert!(normalize_file_name("/etc/passwd").is_err());
/// ```
pub fn normalize_file_name(name: &str) -> Result<String, &'static str> {
    if name.is_empty() {
        return Err("the name is empty");
    }
    if name.contains('\0') {
        return Err("the name contains a NUL character");
    }
    if name.contains('\\') {
        return Err("names use `/` as separator, not `\\`");
    }
    if name.starts_with('/') {
        return Err("absolute names are not allowed");
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("names with a drive prefix are not allowed");
    }
    let mut parts = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("`..` components are not allowed"),
            _ => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err("the name names no file");
    }
    Ok(parts.join("/"))
}

/// Inserts `content` immediately above the line holding the marker of `point` in `text`
/// (the first such line), so that several insertions at one point appear in the order they
/// were made and the marker stays in place for later ones. A newline is added to `content`
/// when it lacks one, so the marker keeps its own line. `None` when there is no marker.
///
/// ```
/// use bebop_plugin_host::insert_at_point;
///
/// let file = "fn a() {}\n    // @@bebopc_insertion_point(more)\n";
/// let once = insert_at_point(file, "more", "    fn b() {}\n").unwrap();
/// let twice = insert_at_point(&once, "more", "    fn c() {}").unwrap();
/// assert_eq!(
///     twice,
///     "fn a() {}\n    fn b() {}\n    fn c() {}\n    // @@bebopc_insertion_point(more)\n"
/// );
/// assert_eq!(insert_at_point(file, "other", "x"), None);
/// ```
pub fn insert_at_point(text: &str, point: &str, content: &str) -> Option<String> {
    let at = text.find(&insertion_marker(point))?;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut out = String::with_capacity(text.len() + content.len() + 1);
    out.push_str(&text[..line_start]);
    out.push_str(content);
    if !content.is_empty() && !content.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&text[line_start..]);
    Some(out)
}

/// The files generated for one output directory, assembled in memory and then written.
///
/// Apply the responses of the plugins that write to the directory in the order they ran;
/// [`write`](Self::write) then creates the directories and files. Within and across
/// responses, files are applied in order:
///
/// - a file with a name and no insertion point creates (or replaces) that file;
/// - a file without a name appends its content to the file before it in the same response
///   (how generators stream large files in chunks);
/// - a file with an insertion point inserts its content at the marker
///   `@@bebopc_insertion_point(POINT)` (see [`insert_at_point`]) of the named file, which an
///   earlier file of this run produced or, failing that, the output directory already holds.
///   An empty insertion point counts as none.
#[derive(Clone, Debug, Default)]
pub struct OutputTree {
    root: PathBuf,
    files: BTreeMap<String, String>,
}

impl OutputTree {
    /// An empty set of files for the directory `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        OutputTree {
            root: root.into(),
            files: BTreeMap::new(),
        }
    }

    /// The output directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The files assembled so far: normalised name and content, sorted by name.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The content of the file `name` (a normalised name) assembled so far.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.files.get(name).map(String::as_str)
    }

    /// Applies the files of plugin `plugin`'s response, in order. On error, the files applied
    /// before the failing one stay applied.
    pub fn apply(&mut self, plugin: &str, files: &[GeneratedFile]) -> Result<(), PluginError> {
        let mut previous: Option<String> = None;
        for file in files {
            let content = file.content.as_deref().unwrap_or_default();
            let point = file.insertion_point.as_deref().filter(|p| !p.is_empty());
            let Some(raw_name) = file.name.as_deref() else {
                let bad = |reason| PluginError::BadFileName {
                    plugin: plugin.to_string(),
                    name: String::new(),
                    reason,
                };
                if point.is_some() {
                    return Err(bad("an insertion must name its target file"));
                }
                let Some(prev) = &previous else {
                    return Err(bad("a file without a name must follow a file to append to"));
                };
                if let Some(text) = self.files.get_mut(prev) {
                    text.push_str(content);
                }
                continue;
            };
            let name =
                normalize_file_name(raw_name).map_err(|reason| PluginError::BadFileName {
                    plugin: plugin.to_string(),
                    name: raw_name.to_string(),
                    reason,
                })?;
            match point {
                None => {
                    self.files.insert(name.clone(), content.to_string());
                }
                Some(point) => {
                    let target = match self.files.get(&name) {
                        Some(text) => text.clone(),
                        None => self.read_existing(plugin, &name, point)?,
                    };
                    let updated = insert_at_point(&target, point, content).ok_or_else(|| {
                        PluginError::MissingInsertionPoint {
                            plugin: plugin.to_string(),
                            file: name.clone(),
                            point: point.to_string(),
                        }
                    })?;
                    self.files.insert(name.clone(), updated);
                }
            }
            previous = Some(name);
        }
        Ok(())
    }

    /// Reads the insertion target `name` from the output directory.
    fn read_existing(&self, plugin: &str, name: &str, point: &str) -> Result<String, PluginError> {
        let path = self.root.join(name);
        let missing = || PluginError::InsertionTargetMissing {
            plugin: plugin.to_string(),
            file: name.to_string(),
            point: point.to_string(),
        };
        if !path.is_file() {
            return Err(missing());
        }
        self.check_inside(plugin, name, &path)?;
        std::fs::read_to_string(&path).map_err(|source| PluginError::Write { path, source })
    }

    /// Fails when `path` (which exists) resolves outside the output directory, through a
    /// symbolic link.
    fn check_inside(&self, plugin: &str, name: &str, path: &Path) -> Result<(), PluginError> {
        let root = std::fs::canonicalize(&self.root).map_err(|source| PluginError::Write {
            path: self.root.clone(),
            source,
        })?;
        let real = std::fs::canonicalize(path).map_err(|source| PluginError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        if real.starts_with(&root) {
            Ok(())
        } else {
            Err(PluginError::BadFileName {
                plugin: plugin.to_string(),
                name: name.to_string(),
                reason: "it leads out of the output directory through a symbolic link",
            })
        }
    }

    /// Creates the output directory and writes every file, creating their directories.
    /// Returns the paths written, sorted.
    pub fn write(&self) -> Result<Vec<PathBuf>, PluginError> {
        self.write_as("bebopc")
    }

    /// [`write`](Self::write), naming `plugin` in errors.
    pub fn write_as(&self, plugin: &str) -> Result<Vec<PathBuf>, PluginError> {
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PluginError::Write { path, source }
        };
        std::fs::create_dir_all(&self.root).map_err(io_err(&self.root))?;
        let mut written = Vec::with_capacity(self.files.len());
        for (name, content) in &self.files {
            // Create the file's directories one level at a time, checking each existing one
            // before going into it, so a symbolic link cannot lead the writes elsewhere.
            let mut dir = self.root.clone();
            let mut components: Vec<&str> = name.split('/').collect();
            components.pop();
            for component in components {
                dir.push(component);
                match std::fs::symlink_metadata(&dir) {
                    Ok(_) => self.check_inside(plugin, name, &dir)?,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        std::fs::create_dir(&dir).map_err(io_err(&dir))?;
                    }
                    Err(e) => return Err(io_err(&dir)(e)),
                }
            }
            let path = self.root.join(name);
            if std::fs::symlink_metadata(&path).is_ok() {
                self.check_inside(plugin, name, &path)?;
            }
            std::fs::write(&path, content).map_err(io_err(&path))?;
            written.push(path);
        }
        Ok(written)
    }
}

/// Applies one plugin's files to `out_dir` and writes them: an [`OutputTree`] for a single
/// response. Returns the paths written.
pub fn write_generated_files(
    out_dir: &Path,
    plugin: &str,
    files: &[GeneratedFile],
) -> Result<Vec<PathBuf>, PluginError> {
    let mut tree = OutputTree::new(out_dir);
    tree.apply(plugin, files)?;
    tree.write_as(plugin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: Option<&str>, point: Option<&str>, content: &str) -> GeneratedFile {
        GeneratedFile {
            name: name.map(Into::into),
            insertion_point: point.map(Into::into),
            content: Some(content.into()),
            generated_code_info: None,
        }
    }

    #[test]
    fn names_are_checked_and_normalised() {
        assert_eq!(normalize_file_name("a/b.rs"), Ok("a/b.rs".into()));
        assert_eq!(normalize_file_name("./a//b.rs"), Ok("a/b.rs".into()));
        for bad in [
            "", "/", "/abs", "a/../b", "..", "../evil", "a\\b", "C:/x", "c:x", "./", "a\0b",
        ] {
            assert!(normalize_file_name(bad).is_err(), "{bad:?} accepted");
        }
        // A name merely containing dots is fine.
        assert_eq!(normalize_file_name("a..b/..c"), Ok("a..b/..c".into()));
    }

    #[test]
    fn insertions_go_above_the_marker_line_in_order() {
        let base = "head\n  # @@bebopc_insertion_point(p)\ntail\n";
        let a = insert_at_point(base, "p", "one\n").unwrap();
        let b = insert_at_point(&a, "p", "two").unwrap();
        assert_eq!(b, "head\none\ntwo\n  # @@bebopc_insertion_point(p)\ntail\n");
        // A marker on the first line.
        assert_eq!(
            insert_at_point("// @@bebopc_insertion_point(p)", "p", "x\n").unwrap(),
            "x\n// @@bebopc_insertion_point(p)"
        );
        // Names must match exactly.
        assert_eq!(insert_at_point(base, "", "x"), None);
        assert_eq!(
            insert_at_point("@@bebopc_insertion_point(pp)", "p", "x"),
            None
        );
    }

    #[test]
    fn chunks_append_and_insertions_apply_in_order() {
        let mut tree = OutputTree::new("/unused");
        tree.apply(
            "t",
            &[
                file(Some("a.txt"), None, "1\n// @@bebopc_insertion_point(x)\n"),
                file(None, None, "2\n"),
                file(Some("a.txt"), Some("x"), "ins1\n"),
                file(Some("./a.txt"), Some("x"), "ins2\n"),
                file(Some("b.txt"), Some(""), "plain"),
            ],
        )
        .unwrap();
        assert_eq!(
            tree.get("a.txt"),
            Some("1\nins1\nins2\n// @@bebopc_insertion_point(x)\n2\n")
        );
        assert_eq!(tree.get("b.txt"), Some("plain"));
    }

    #[test]
    fn bad_sequences_are_errors() {
        let mut tree = OutputTree::new("/nonexistent-output-dir");
        let err = tree.apply("t", &[file(None, None, "x")]).unwrap_err();
        assert!(matches!(err, PluginError::BadFileName { .. }), "{err}");
        let err = tree.apply("t", &[file(None, Some("p"), "x")]).unwrap_err();
        assert!(matches!(err, PluginError::BadFileName { .. }), "{err}");
        let err = tree
            .apply("t", &[file(Some("nope.txt"), Some("p"), "x")])
            .unwrap_err();
        assert!(
            matches!(err, PluginError::InsertionTargetMissing { .. }),
            "{err}"
        );
        let err = tree
            .apply(
                "t",
                &[
                    file(Some("a"), None, "no marker"),
                    file(Some("a"), Some("p"), "x"),
                ],
            )
            .unwrap_err();
        assert!(
            matches!(err, PluginError::MissingInsertionPoint { .. }),
            "{err}"
        );
        assert!(
            err.to_string().contains("@@bebopc_insertion_point(p)"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_output_directory_are_refused() {
        let outside = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), out.path().join("link")).unwrap();
        for name in ["link/x.txt", "link/sub/x.txt"] {
            let err =
                write_generated_files(out.path(), "t", &[file(Some(name), None, "x")]).unwrap_err();
            assert!(matches!(err, PluginError::BadFileName { .. }), "{err}");
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // A link to a file outside is not written through either.
        std::fs::write(outside.path().join("target"), "keep").unwrap();
        std::os::unix::fs::symlink(outside.path().join("target"), out.path().join("f")).unwrap();
        assert!(write_generated_files(out.path(), "t", &[file(Some("f"), None, "x")]).is_err());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("target")).unwrap(),
            "keep"
        );
    }
}

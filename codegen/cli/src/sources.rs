//! Which schema files to compile: file arguments as given, glob patterns expanded (with
//! `globset`, walking only the directory each pattern starts with), exclude globs applied
//! to what the globs found.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// Whether `s` is a glob pattern rather than a plain path.
pub fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

fn glob(pattern: &str) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob `{pattern}`: {e}"))
}

fn clean(pattern: &str) -> &str {
    let mut p = pattern;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

fn set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        builder.add(glob(clean(p))?);
        // `dir/**` also matches what is under `dir`, and a plain `dir` excludes its contents.
        if !is_pattern(p) {
            builder.add(glob(&format!("{}/**", clean(p).trim_end_matches('/')))?);
        }
    }
    builder.build().map_err(|e| e.to_string())
}

/// The directory a pattern's matches must lie under: its leading components without glob
/// characters.
pub fn base_dir(pattern: &str) -> PathBuf {
    let mut base = PathBuf::new();
    let parts: Vec<&str> = clean(pattern).split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        if is_pattern(part) {
            break;
        }
        base.push(part);
    }
    base
}

/// Resolves `items` (plain paths and glob patterns, relative to `root`) to files. Plain
/// paths are kept (a missing one is reported by the compiler); patterns are expanded to the
/// files they match (sorted) that no `exclude` glob matches. Results are `root`-joined, and
/// left relative when `root` is `.`.
pub fn resolve(items: &[String], exclude: &[String], root: &Path) -> Result<Vec<String>, String> {
    let excludes = set(exclude)?;
    let at_root = |rel: String| {
        if root == Path::new(".") || root.as_os_str().is_empty() {
            rel
        } else {
            root.join(&rel).to_string_lossy().into_owned()
        }
    };
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for item in items {
        if !is_pattern(item) {
            let shown = at_root(item.clone());
            if seen.insert(shown.clone()) {
                out.push(shown);
            }
            continue;
        }
        let matcher = glob(clean(item))?.compile_matcher();
        let base = base_dir(item);
        let start = root.join(&base);
        let mut found = Vec::new();
        for entry in walkdir::WalkDir::new(&start)
            .follow_links(true)
            .max_depth(64)
        {
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_file() {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if matcher.is_match(&rel) && !excludes.is_match(&rel) {
                found.push(rel);
            }
        }
        found.sort();
        for rel in found {
            let shown = at_root(rel);
            if seen.insert(shown.clone()) {
                out.push(shown);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_excludes_and_plain_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "schemas/a.bop",
            "schemas/sub/b.bop",
            "schemas/vendor/c.bop",
            "schemas/x.txt",
            "other/d.bop",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let found = resolve(
            &["schemas/**/*.bop".into(), "missing.bop".into()],
            &["**/vendor/**".into()],
            root,
        )
        .unwrap();
        let r = |f: &str| root.join(f).to_string_lossy().into_owned();
        assert_eq!(
            found,
            vec![r("schemas/a.bop"), r("schemas/sub/b.bop"), r("missing.bop")]
        );
        // `*` does not cross directories.
        let found = resolve(&["./schemas/*.bop".into()], &[], root).unwrap();
        assert_eq!(found, vec![r("schemas/a.bop")]);
        // A plain directory excludes everything under it.
        let found = resolve(&["**/*.bop".into()], &["schemas".into()], root).unwrap();
        assert_eq!(found, vec![r("other/d.bop")]);
        assert!(resolve(&["a[.bop".into()], &[], root).is_err());
    }
}

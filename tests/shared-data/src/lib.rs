//! # bebop-shared-data
//!
//! The one place that decides what a test or build script does about the reference's
//! conformance data (and the reference's workload schema), which is not part of the
//! repository: it lives in a `shared` directory beside the clone (`../shared/conformance/...`
//! and `../shared/bench/...` from the repository root).
//!
//! The rule:
//!
//! - **present**: the path is returned and the test runs as usual;
//! - **absent, `CI` unset or empty**: one notice per test naming the missing path goes to
//!   stderr (to the real stderr, past the test harness's capture, so it shows in `cargo
//!   test` output; a build script emits it as `cargo:warning=`), and the caller skips:
//!   `None`;
//! - **absent, `CI` set**: a panic with a clear message, so that CI cannot pass without the
//!   data by accident.
//!
//! Tests:
//!
//! ```no_run
//! let Some(dir) = bebop_shared_data::conformance_dir("reference-descriptors") else {
//!     return; // the notice is printed
//! };
//! # let _ = dir;
//! ```
//!
//! Build scripts use [`build::conformance_dir`], which also tells cargo to rerun the script
//! when `CI` or the directory changes, and generate fewer cases when it returns `None`.
//!
//! The rule itself is [`resolve`], a pure function of the path and the value of `CI`.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// The environment variable that makes missing data an error.
pub const CI_VAR: &str = "CI";

/// What [`resolve`] decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The data is there.
    Present(PathBuf),
    /// The data is missing and `CI` is unset: skip, after printing `notice`.
    Skip {
        /// One line naming the missing path and what is skipped.
        notice: String,
    },
    /// The data is missing and `CI` is set: fail with `message`.
    Fail {
        /// Names the missing path and why this is an error.
        message: String,
    },
}

/// Whether a value of `CI` counts as set: present and not empty.
pub fn ci_is_set(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// The rule: `path` (a file or directory of the shared data), given the value of `CI`.
/// `skipped` says what is left out when it is missing, as a clause (for example "test
/// `foo` skips what needs it", or "the generated cases are left out").
pub fn resolve(path: &Path, ci: Option<&OsStr>, skipped: &str) -> Outcome {
    if path.exists() {
        return Outcome::Present(path.to_path_buf());
    }
    if ci_is_set(ci) {
        Outcome::Fail {
            message: format!(
                "shared reference data missing: {} does not exist, and {CI_VAR} is set, so \
                 this is an error (the reference's conformance data lives beside the clone, in \
                 ../shared; without {CI_VAR}: {skipped})",
                path.display()
            ),
        }
    } else {
        Outcome::Skip {
            notice: format!(
                "{} does not exist (shared reference data, expected beside the clone in \
                 ../shared): {skipped}; with {CI_VAR} set this is an error",
                path.display()
            ),
        }
    }
}

/// The repository root: the nearest ancestor of the running package (`CARGO_MANIFEST_DIR`
/// of the test or build script, as cargo sets it when running them) that holds this crate,
/// else this crate's own location when it was compiled.
///
/// Asking at run time matters: cargo hashes path packages relative to the workspace, so two
/// copies of the repository sharing one target directory share this crate's compiled
/// artifact, and a path fixed at compile time could point into the other copy.
pub fn repo_root() -> PathBuf {
    let compiled = || normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let Some(running) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return compiled();
    };
    let running = normalize(Path::new(&running));
    running
        .ancestors()
        .find(|dir| dir.join("tests/shared-data/Cargo.toml").is_file())
        .map_or_else(compiled, Path::to_path_buf)
}

/// The shared data directory beside the clone: `../shared` from the repository root.
pub fn shared_root() -> PathBuf {
    normalize(&repo_root().join("../shared"))
}

/// `rel` under the shared data directory, whether it exists or not.
pub fn shared_path(rel: &str) -> PathBuf {
    if rel.is_empty() {
        shared_root()
    } else {
        shared_root().join(rel)
    }
}

/// `../shared/conformance/SUB` (`sub` may be empty: the conformance directory itself),
/// whether it exists or not.
pub fn conformance_path(sub: &str) -> PathBuf {
    if sub.is_empty() {
        shared_path("conformance")
    } else {
        shared_path(&format!("conformance/{sub}"))
    }
}

/// For a test: `../shared/REL` when it exists; else, following the rule, prints a notice
/// and returns `None` (`CI` unset) or panics (`CI` set; the panic names the caller).
#[track_caller]
pub fn shared_data(rel: &str) -> Option<PathBuf> {
    let what = match std::thread::current().name() {
        Some(name) if name != "main" => format!("test `{name}` skips what needs it"),
        _ => "the test skips what needs it".to_string(),
    };
    let ci = std::env::var_os(CI_VAR);
    match resolve(&shared_path(rel), ci.as_deref(), &what) {
        Outcome::Present(path) => Some(path),
        Outcome::Skip { notice } => {
            // Once per test and path (a property test asks once per case), and past the test
            // harness's capture of `eprintln!`, so that it shows up.
            static SHOWN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
            let first = SHOWN
                .lock()
                .map(|mut shown| shown.insert(notice.clone()))
                .unwrap_or(true);
            if first {
                let _ = writeln!(std::io::stderr(), "note: {notice}");
            }
            None
        }
        Outcome::Fail { message } => panic!("{message}"),
    }
}

/// For a test: `../shared/conformance/SUB` (see [`shared_data`]).
#[track_caller]
pub fn conformance_dir(sub: &str) -> Option<PathBuf> {
    let rel = if sub.is_empty() {
        "conformance".to_string()
    } else {
        format!("conformance/{sub}")
    };
    shared_data(&rel)
}

/// The same rule for build scripts: notices become `cargo:warning=` lines.
pub mod build {
    use std::path::PathBuf;

    use super::{CI_VAR, Outcome, resolve, shared_path};

    /// `../shared/REL` when it exists (and cargo is told to rerun the build script when it
    /// changes); else, following the rule, emits a `cargo:warning=` and returns `None` (`CI`
    /// unset), or panics (`CI` set). Cargo reruns the script when `CI` changes.
    ///
    /// A missing path is not watched (cargo would rerun the script on every build): after
    /// adding `../shared`, touch the build script or `cargo clean -p` the crate.
    #[track_caller]
    pub fn shared_data(rel: &str, skipped: &str) -> Option<PathBuf> {
        println!("cargo:rerun-if-env-changed={CI_VAR}");
        let ci = std::env::var_os(CI_VAR);
        match resolve(&shared_path(rel), ci.as_deref(), skipped) {
            Outcome::Present(path) => {
                println!("cargo:rerun-if-changed={}", path.display());
                Some(path)
            }
            Outcome::Skip { notice } => {
                println!("cargo:warning={notice}");
                None
            }
            Outcome::Fail { message } => panic!("{message}"),
        }
    }

    /// `../shared/conformance/SUB` (see [`shared_data`]).
    #[track_caller]
    pub fn conformance_dir(sub: &str, skipped: &str) -> Option<PathBuf> {
        let rel = if sub.is_empty() {
            "conformance".to_string()
        } else {
            format!("conformance/{sub}")
        };
        shared_data(&rel, skipped)
    }
}

/// `path` without `.` and `a/..` components (lexically; no symbolic links are resolved).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The names of the files in `dir` that end with `suffix`, the suffix removed, sorted: the
/// cases of a data directory (`NAME.bop`, `NAME.request.bin`, ...). Panics when `dir` cannot
/// be read (callers pass a directory [`conformance_dir`] found).
pub fn names_with_suffix(dir: &Path, suffix: &str) -> Vec<String> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut names: Vec<String> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(suffix).map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn present() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
    }

    fn absent() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("no-such-directory")
    }

    #[test]
    fn present_data_is_used_whatever_ci_says() {
        for ci in [None, Some(""), Some("1"), Some("true")] {
            assert_eq!(
                resolve(&present(), ci.map(OsStr::new), "test `t`"),
                Outcome::Present(present()),
                "CI = {ci:?}"
            );
        }
    }

    #[test]
    fn absent_data_without_ci_is_skipped_with_a_notice() {
        for ci in [None, Some("")] {
            let Outcome::Skip { notice } =
                resolve(&absent(), ci.map(OsStr::new), "test `t` skips it")
            else {
                panic!("CI = {ci:?}: not skipped");
            };
            assert!(notice.contains(&absent().display().to_string()), "{notice}");
            assert!(notice.contains("test `t` skips it"), "{notice}");
            assert_eq!(notice.lines().count(), 1, "{notice}");
        }
    }

    #[test]
    fn absent_data_with_ci_fails() {
        for ci in ["1", "true", "yes"] {
            let Outcome::Fail { message } = resolve(&absent(), Some(OsStr::new(ci)), "test") else {
                panic!("CI = {ci}: did not fail");
            };
            assert!(
                message.contains(&absent().display().to_string()),
                "{message}"
            );
            assert!(message.contains("CI is set"), "{message}");
        }
    }

    #[test]
    fn ci_counts_as_set_when_not_empty() {
        assert!(!ci_is_set(None));
        assert!(!ci_is_set(Some(OsStr::new(""))));
        assert!(ci_is_set(Some(OsStr::new("1"))));
        assert!(ci_is_set(Some(OsStr::new("false"))));
    }

    #[test]
    fn paths_are_beside_the_clone() {
        let root = repo_root();
        assert!(
            root.join("tests/shared-data/Cargo.toml").is_file(),
            "{root:?}"
        );
        assert_eq!(shared_root().parent(), root.parent());
        assert_eq!(shared_root().file_name(), Some(OsStr::new("shared")));
        assert_eq!(
            conformance_path("reference-descriptors"),
            shared_root().join("conformance/reference-descriptors")
        );
        assert_eq!(conformance_path(""), shared_root().join("conformance"));
    }

    #[test]
    fn normalize_drops_dot_and_dot_dot() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(normalize(Path::new("a/../../b")), PathBuf::from("../b"));
    }
}

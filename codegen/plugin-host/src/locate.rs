//! Finding a plugin's executable: `bebopc-gen-NAME`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::PluginError;

/// The executable file name of plugin `name`: `bebopc-gen-NAME`, with `.exe` on Windows.
///
/// ```
/// # if cfg!(unix) {
/// assert_eq!(bebop_plugin_host::executable_name("rust"), "bebopc-gen-rust");
/// # }
/// ```
pub fn executable_name(name: &str) -> String {
    format!("bebopc-gen-{name}{}", std::env::consts::EXE_SUFFIX)
}

/// Where to look for plugins: an ordered list of directories.
///
/// [`from_env`](Self::from_env) gives the compiler's default, the directory of the running
/// executable first (so a distribution that ships plugins next to `bebopc` uses them, as the
/// reference compiler does), then every directory of `PATH`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PluginLocator {
    dirs: Vec<PathBuf>,
}

impl PluginLocator {
    /// Looks in exactly these directories, in order.
    pub fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        PluginLocator {
            dirs: dirs.into_iter().collect(),
        }
    }

    /// The directory of the running executable, then the directories of `PATH`. Empty `PATH`
    /// entries (which some shells read as the current directory) are skipped.
    pub fn from_env() -> Self {
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf));
        let path = std::env::var_os("PATH").unwrap_or_default();
        Self::from_parts(exe_dir, &path)
    }

    /// [`from_env`](Self::from_env) with the executable's directory and the `PATH` value given.
    pub fn from_parts(exe_dir: Option<PathBuf>, path_var: &OsString) -> Self {
        let mut dirs: Vec<PathBuf> = exe_dir.into_iter().collect();
        dirs.extend(std::env::split_paths(path_var).filter(|d| !d.as_os_str().is_empty()));
        PluginLocator { dirs }
    }

    /// The directories searched, in order.
    pub fn search_dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Finds plugin `name`: `explicit` when given (`--plugin NAME=PATH`; it must exist),
    /// otherwise the first `bebopc-gen-NAME` in the search directories that is a file (and,
    /// on Unix, executable).
    pub fn locate(&self, name: &str, explicit: Option<&Path>) -> Result<PathBuf, PluginError> {
        if name.is_empty()
            || name.contains(['/', '\\'])
            || name == "."
            || name == ".."
            || name.contains('\0')
        {
            return Err(PluginError::InvalidName {
                name: name.to_string(),
            });
        }
        let executable = executable_name(name);
        if let Some(path) = explicit {
            if is_executable_file(path) {
                return Ok(path.to_path_buf());
            }
            return Err(PluginError::NotFound {
                plugin: name.to_string(),
                executable,
                searched: vec![path.to_path_buf()],
            });
        }
        for dir in &self.dirs {
            let candidate = dir.join(&executable);
            if is_executable_file(&candidate) {
                return Ok(candidate);
            }
        }
        Err(PluginError::NotFound {
            plugin: name.to_string(),
            executable,
            searched: self.dirs.clone(),
        })
    }
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_entries_follow_the_exe_dir_and_empty_ones_are_skipped() {
        let path = std::env::join_paths(["/a", "", "/b"]).unwrap();
        let loc = PluginLocator::from_parts(Some(PathBuf::from("/exe")), &path);
        assert_eq!(
            loc.search_dirs(),
            [
                PathBuf::from("/exe"),
                PathBuf::from("/a"),
                PathBuf::from("/b")
            ]
        );
    }

    #[test]
    fn bad_names_are_rejected_before_searching() {
        let loc = PluginLocator::new([PathBuf::from("/nowhere")]);
        for name in ["", "a/b", "..", "a\\b"] {
            assert!(
                matches!(loc.locate(name, None), Err(PluginError::InvalidName { .. })),
                "{name:?}"
            );
        }
    }

    #[test]
    fn not_found_lists_every_directory() {
        let loc = PluginLocator::new([PathBuf::from("/no/such/dir"), PathBuf::from("/neither")]);
        let err = loc.locate("zzz", None).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("plugin `zzz` not found"), "{msg}");
        assert!(msg.contains(&executable_name("zzz")), "{msg}");
        assert!(msg.contains("/no/such/dir, /neither"), "{msg}");
        assert!(msg.contains("--plugin zzz=PATH"), "{msg}");
        let err = loc
            .locate("zzz", Some(Path::new("/no/such/plugin")))
            .unwrap_err();
        assert!(err.to_string().contains("/no/such/plugin"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn non_executable_files_do_not_shadow_later_directories() {
        use std::os::unix::fs::PermissionsExt;
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        let name = executable_name("x");
        std::fs::write(first.path().join(&name), "not executable").unwrap();
        let exe = second.path().join(&name);
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let loc = PluginLocator::new([first.path().to_path_buf(), second.path().to_path_buf()]);
        assert_eq!(loc.locate("x", None).unwrap(), exe);
    }
}

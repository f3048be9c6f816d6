//! Helpers shared by the end-to-end tests: the built `bebopc` and test plugin, the
//! conformance fixtures, and scratch project directories.

#![allow(dead_code)] // each test file uses a part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared/conformance/reference-fixtures`; `None` (the test is skipped) when the
/// conformance data is missing and `CI` is unset (see `bebop-shared-data`).
pub fn fixtures() -> Option<PathBuf> {
    bebop_shared_data::conformance_dir("reference-fixtures")
}

/// `../shared/conformance/reference-descriptors`; `None` as [`fixtures`].
pub fn reference_descriptors() -> Option<PathBuf> {
    bebop_shared_data::conformance_dir("reference-descriptors")
}

/// The test plugin executable.
#[cfg(feature = "test-plugins")]
pub fn testplugin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bebopc-gen-testplugin"))
}

/// A scratch directory to run `bebopc` in. It holds an empty `bebop.yml` so that no
/// configuration of a parent directory is picked up (tests that want one overwrite it).
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Project {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("bebop.yml"), "").expect("write bebop.yml");
        Project { dir }
    }

    /// A scratch directory without any configuration file.
    pub fn bare() -> Project {
        Project {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) -> &Project {
        let p = self.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
        self
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Copies every valid fixture into `dir` (relative to the project); `None` (skip the
    /// test) without the conformance data, as [`fixtures`].
    #[must_use = "without the conformance data the test must return"]
    pub fn copy_valid_fixtures(&self, dir: &str) -> Option<&Project> {
        let target = self.join(dir);
        let fixtures = fixtures()?;
        std::fs::create_dir_all(&target).expect("mkdir");
        for e in std::fs::read_dir(fixtures.join("valid")).expect("read fixtures") {
            let p = e.expect("entry").path();
            std::fs::copy(&p, target.join(p.file_name().expect("name"))).expect("copy");
        }
        Some(self)
    }

    /// Copies one fixture (`valid/NAME.bop` or `should_fail/NAME.bop`) to `rel`; `None`
    /// (skip the test) without the conformance data, as [`fixtures`].
    #[must_use = "without the conformance data the test must return"]
    pub fn copy_fixture(&self, fixture: &str, rel: &str) -> Option<&Project> {
        let text = std::fs::read_to_string(fixtures()?.join(fixture)).expect("read fixture");
        Some(self.write(rel, &text))
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }

    pub fn run_env(&self, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bebopc"));
        cmd.args(args)
            .current_dir(self.path())
            .env_remove("NO_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run bebopc")
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts the exit status, showing the output when it differs.
pub fn assert_status(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "expected exit status {code}\n--- stdout\n{}\n--- stderr\n{}",
        stdout(o),
        stderr(o)
    );
}

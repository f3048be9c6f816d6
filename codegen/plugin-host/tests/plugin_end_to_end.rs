//! End to end: the test plugin `bebopc-gen-echo` (built from `src/bin/`) is installed under
//! several names in a temporary directory, found, run with real reference requests (skipped
//! without the conformance data; see `bebop-shared-data`) or a small request built here, and
//! its output written; every error path is exercised. The plugin is built with the
//! `test-plugins` feature (`cargo test -p bebop-plugin-host --features test-plugins`; CI tests
//! with `--all-features`).
#![cfg(feature = "test-plugins")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bebop_descriptor::{
    CodeGeneratorRequest, DefinitionDescriptor, DefinitionKind, DiagnosticSeverity, Edition,
    FieldDescriptor, SchemaDescriptor, StructDef, TypeDescriptor, TypeKind,
};
use bebop_plugin_host::{
    OutputTree, Plugin, PluginError, PluginLocator, RunOptions, executable_name, run_plugin,
    write_generated_files,
};

const ECHO: &str = env!("CARGO_BIN_EXE_bebopc-gen-echo");

/// A directory holding the test plugin as `bebopc-gen-MODE` for each mode.
struct Plugins {
    dir: tempfile::TempDir,
}

impl Plugins {
    fn install(modes: &[&str]) -> Plugins {
        let dir = tempfile::tempdir().expect("tempdir");
        for mode in modes {
            let target = dir.path().join(executable_name(mode));
            #[cfg(unix)]
            std::os::unix::fs::symlink(ECHO, &target).expect("symlink plugin");
            #[cfg(not(unix))]
            std::fs::copy(ECHO, &target).expect("copy plugin");
        }
        Plugins { dir }
    }

    fn locator(&self) -> PluginLocator {
        PluginLocator::new([self.dir.path().to_path_buf()])
    }

    fn plugin(&self, mode: &str) -> Plugin {
        let path = self.locator().locate(mode, None).expect("installed plugin");
        Plugin::new(mode, path)
    }
}

/// The reference compiler's request for fixture `name`; `None` (the test is skipped) when the
/// conformance data is missing and `CI` is unset (see `bebop-shared-data`).
fn reference_request(name: &str) -> Option<Vec<u8>> {
    let path = bebop_shared_data::conformance_dir("reference-descriptors")?
        .join(format!("{name}.request.bin"));
    Some(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// A small valid request (one schema with one struct), for the plugin modes that only decode
/// the request: built here, so those tests need no conformance data.
fn small_request() -> Vec<u8> {
    let schema = SchemaDescriptor {
        path: Some("point.bop".into()),
        edition: Some(Edition::Edition2026),
        definitions: Some(vec![DefinitionDescriptor {
            kind: Some(DefinitionKind::Struct),
            name: Some("Point".into()),
            fqn: Some("Point".into()),
            struct_def: Some(StructDef {
                fields: Some(vec![FieldDescriptor {
                    name: Some("x".into()),
                    r#type: Some(TypeDescriptor::scalar(TypeKind::Int32)),
                    index: Some(0),
                    ..Default::default()
                }]),
                is_mutable: Some(false),
                fixed_size: Some(4),
            }),
            ..Default::default()
        }]),
        ..Default::default()
    };
    CodeGeneratorRequest {
        files_to_generate: Some(vec!["point.bop".into()]),
        schemas: Some(vec![schema]),
        ..Default::default()
    }
    .to_vec()
    .expect("encode the request")
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn echo_plugin_round_trip_with_a_reference_request() {
    let Some(request) = reference_request("union") else {
        return;
    };
    let plugins = Plugins::install(&["echo", "insert"]);
    let output = plugins
        .plugin("echo")
        .run_with_bytes(request.clone(), &RunOptions::default())
        .expect("echo runs");

    assert_eq!(output.diagnostics.len(), 1);
    let warning = &output.diagnostics[0];
    assert_eq!(warning.severity, Some(DiagnosticSeverity::Warning));
    assert_eq!(warning.file.as_deref(), Some("union.bop"));
    assert_eq!(warning.span, Some([1, 1, 1, 1]));

    let out = tempfile::tempdir().expect("tempdir");
    let root = out.path().join("gen");
    let written = write_generated_files(&root, "echo", &output.files).expect("write");
    assert_eq!(written.len(), 3);

    // The definitions of union.bop, nested ones included, in pre-order, written in two
    // chunks that were joined.
    let listing = read(&root, "definitions.txt");
    let expected = "InnerM2 Message\nU Union\nU.A Message\nU.B Struct\nU.C Struct\nU.D Struct\n\
                    WeirdOrder Union\nWeirdOrder.TwoComesFirst Struct\n\
                    WeirdOrder.ThreeIsSkipped Struct\nWeirdOrder.OneComesLast Struct\n";
    assert_eq!(listing, expected);
    assert_eq!(
        warning.text.as_deref(),
        Some(format!("echoed {} definitions", expected.lines().count()).as_str())
    );

    // The insertion landed above its marker, which stays.
    let summary = read(&root, "summary.txt");
    assert_eq!(
        summary,
        "files: union.bop\ncompiler: 2026.0.0-alpha.3\nparameter: (none)\n\
         schemas: 1\n\
         // @@bebopc_insertion_point(extra)\n\
         # @@bebopc_insertion_point(later)\nend\n"
    );
    assert_eq!(
        read(&root, "nested/dir/info.txt"),
        "made by bebopc-gen-echo\n"
    );

    // A second plugin inserts into the file already on disk.
    let second = plugins
        .plugin("insert")
        .run_with_bytes(request, &RunOptions::default())
        .expect("insert runs");
    write_generated_files(&root, "insert", &second.files).expect("insert into disk file");
    let summary = read(&root, "summary.txt");
    assert!(
        summary.ends_with("inserted by a second plugin\n# @@bebopc_insertion_point(later)\nend\n"),
        "{summary}"
    );
}

#[test]
fn plugins_of_one_run_share_an_output_tree() {
    let Some(request) = reference_request("codegen_all") else {
        return;
    };
    let plugins = Plugins::install(&["echo", "insert"]);
    let request = CodeGeneratorRequest::from_bytes(&request).expect("request");
    let out = tempfile::tempdir().expect("tempdir");
    let mut tree = OutputTree::new(out.path());
    for name in ["echo", "insert"] {
        let output = run_plugin(
            &plugins.locator(),
            name,
            None,
            &request,
            &RunOptions::default(),
        )
        .expect("plugin runs");
        tree.apply(name, &output.files).expect("apply");
    }
    // The insertion went into the in-memory file of the first plugin; nothing is on disk yet.
    assert!(
        tree.get("summary.txt")
            .is_some_and(|s| s.contains("inserted by a second plugin"))
    );
    assert!(!out.path().join("summary.txt").exists());
    tree.write().expect("write");
    // Every definition of the schema named on the command line is listed, with the FQNs the
    // descriptor API computes, and none of the imported schemas'.
    let listing = read(out.path(), "definitions.txt");
    let expected: Vec<String> = request
        .schemas_to_generate()
        .flat_map(|s| s.all_definitions())
        .map(|e| e.fqn.into_owned())
        .collect();
    let listed: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(listed, expected);
    assert!(
        listed.len() > 50,
        "codegen_all.bop has many definitions, got {}",
        listed.len()
    );
    assert!(listed.iter().all(|f| f.starts_with("codegen.all.")));
}

#[test]
fn explicit_paths_win_and_missing_plugins_say_where_they_looked() {
    let plugins = Plugins::install(&["echo"]);
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let locator = PluginLocator::new([elsewhere.path().to_path_buf(), plugins.dir.path().into()]);
    assert!(locator.locate("echo", None).is_ok());
    // `--plugin custom=PATH` needs no `bebopc-gen-custom` anywhere.
    assert_eq!(
        locator
            .locate("custom", Some(Path::new(ECHO)))
            .expect("explicit"),
        PathBuf::from(ECHO)
    );
    let err = locator
        .locate("typescript", None)
        .expect_err("not installed");
    assert!(matches!(err, PluginError::NotFound { .. }));
    let msg = err.to_string();
    assert!(msg.contains("bebopc-gen-typescript"), "{msg}");
    assert!(
        msg.contains(&elsewhere.path().display().to_string()),
        "{msg}"
    );
    assert!(
        msg.contains(&plugins.dir.path().display().to_string()),
        "{msg}"
    );
}

#[test]
fn a_plugin_that_cannot_start_is_a_spawn_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(executable_name("broken"));
    std::fs::write(&path, b"\x7fELF not really").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let err = Plugin::new("broken", &path)
        .run_with_bytes(small_request(), &RunOptions::default())
        .expect_err("cannot start");
    assert!(matches!(err, PluginError::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("failed to start"), "{err}");
}

#[test]
fn a_crashing_plugin_reports_its_status_and_the_end_of_its_stderr() {
    let plugins = Plugins::install(&["crash"]);
    let options = RunOptions {
        max_stderr_bytes: 2000,
        ..RunOptions::default()
    };
    let err = plugins
        .plugin("crash")
        .run_with_bytes(small_request(), &options)
        .expect_err("crashes");
    let PluginError::Exited { status, stderr, .. } = &err else {
        panic!("expected Exited, got {err}")
    };
    assert_eq!(status.code(), Some(3));
    assert!(
        stderr.ends_with("fatal: the echo plugin crashed on purpose\n"),
        "{stderr}"
    );
    assert!(
        stderr.starts_with("[... "),
        "truncated: {}",
        &stderr[..80.min(stderr.len())]
    );
    assert!(stderr.len() < 2200, "kept {} bytes", stderr.len());
    let msg = err.to_string();
    assert!(msg.contains("plugin `crash`"), "{msg}");
    assert!(msg.contains("exit status: 3"), "{msg}");
    assert!(msg.contains("crashed on purpose"), "{msg}");
}

#[test]
fn garbage_and_empty_output_are_undecodable() {
    let plugins = Plugins::install(&["garbage", "empty"]);
    for mode in ["garbage", "empty"] {
        let err = plugins
            .plugin(mode)
            .run_with_bytes(small_request(), &RunOptions::default())
            .expect_err("undecodable");
        assert!(
            matches!(err, PluginError::Undecodable { .. }),
            "{mode}: {err}"
        );
        assert!(
            err.to_string().contains("not a CodeGeneratorResponse"),
            "{err}"
        );
    }
}

#[test]
fn the_error_field_fails_the_run_with_its_diagnostics() {
    let plugins = Plugins::install(&["error"]);
    let err = plugins
        .plugin("error")
        .run_with_bytes(small_request(), &RunOptions::default())
        .expect_err("reported");
    let PluginError::Reported {
        message,
        diagnostics,
        ..
    } = &err
    else {
        panic!("expected Reported, got {err}")
    };
    assert_eq!(
        message,
        "schema uses a feature this generator does not support"
    );
    assert_eq!(diagnostics.len(), 1);
    assert!(err.to_string().contains("reported an error"), "{err}");
}

#[test]
fn escaping_file_names_are_rejected_and_nothing_is_written() {
    let plugins = Plugins::install(&["evil", "absolute"]);
    let out = tempfile::tempdir().expect("tempdir");
    let root = out.path().join("gen");
    for (mode, bad) in [
        ("evil", "../evil.txt"),
        ("absolute", "/tmp/bebopc-gen-absolute.txt"),
    ] {
        let output = plugins
            .plugin(mode)
            .run_with_bytes(small_request(), &RunOptions::default())
            .expect("the plugin itself succeeds");
        let err = write_generated_files(&root, mode, &output.files).expect_err("bad name");
        let PluginError::BadFileName { name, .. } = &err else {
            panic!("expected BadFileName, got {err}")
        };
        assert_eq!(name, bad);
    }
    assert!(!out.path().join("evil.txt").exists());
    // Files are only written once the whole response applied: `fine.txt` is not there either.
    assert!(!root.exists());
}

#[test]
fn an_insertion_at_an_unknown_point_fails() {
    let plugins = Plugins::install(&["missing-point"]);
    let output = plugins
        .plugin("missing-point")
        .run_with_bytes(small_request(), &RunOptions::default())
        .expect("runs");
    let out = tempfile::tempdir().expect("tempdir");
    let err =
        write_generated_files(out.path(), "missing-point", &output.files).expect_err("no marker");
    assert!(
        matches!(err, PluginError::MissingInsertionPoint { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("nowhere"), "{err}");
}

#[test]
fn a_flooding_plugin_is_cut_off() {
    let plugins = Plugins::install(&["flood"]);
    let options = RunOptions {
        max_response_bytes: 1 << 20,
        timeout: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let err = plugins
        .plugin("flood")
        .run_with_bytes(small_request(), &options)
        .expect_err("too large");
    assert!(
        matches!(err, PluginError::ResponseTooLarge { limit, .. } if limit == 1 << 20),
        "{err}"
    );
}

/// Runs the test plugin in `mode` with a time limit of `ms`; returns its error, checking
/// that it came as a time-out well within 10 s.
fn run_until_timeout(mode: &str, ms: u64) -> PluginError {
    let plugins = Plugins::install(&[mode]);
    let options = RunOptions {
        timeout: Some(Duration::from_millis(ms)),
        ..RunOptions::default()
    };
    let started = Instant::now();
    let err = plugins
        .plugin(mode)
        .run_with_bytes(small_request(), &options)
        .expect_err("times out");
    assert!(matches!(err, PluginError::TimedOut { .. }), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    err
}

#[test]
fn a_hanging_plugin_times_out() {
    let err = run_until_timeout("hang", 500);
    assert!(
        err.to_string().contains("did not finish within 500ms"),
        "{err}"
    );
}

/// The plugin writes a 4 MiB response before reading a request of 4 MiB: with both pipes
/// full, a host that wrote the request before reading would wait forever.
#[test]
fn large_requests_and_responses_do_not_deadlock() {
    let plugins = Plugins::install(&["bigwrite"]);
    let mut request = CodeGeneratorRequest::from_bytes(&small_request()).expect("request");
    request.parameter = Some("p".repeat(4 << 20));
    let options = RunOptions {
        timeout: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let output = plugins
        .plugin("bigwrite")
        .run(&request, &options)
        .expect("no deadlock");
    assert_eq!(output.files.len(), 1);
    assert_eq!(
        output.files[0].content.as_ref().map(String::len),
        Some(4 << 20)
    );
    assert!(
        output
            .stderr
            .contains(&format!("parameter of {} bytes", 4 << 20)),
        "{}",
        output.stderr
    );
}

/// A plugin that closes its output but never exits is killed at the time limit.
#[test]
fn a_plugin_that_closes_stdout_and_lingers_times_out() {
    run_until_timeout("linger", 500);
}

/// A plugin that exits leaving a process behind that holds its output pipe: the run ends at
/// the time limit, and that process is killed with the plugin's process group.
#[cfg(target_os = "linux")]
#[test]
fn a_leftover_process_holding_the_pipe_is_killed() {
    let err = run_until_timeout("orphan", 800);
    let PluginError::TimedOut { stderr, .. } = &err else {
        panic!("expected a time-out, got {err}");
    };
    let pid: u32 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("orphan pid "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in stderr {stderr:?}"));
    // Killed: gone, or a zombie waiting for its parent (init) to reap it.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let alive = state
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|s| s != "Z" && s != "X");
        if !alive {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "process {pid} still runs: {state}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The default options carry a time limit, so no plugin can hang a build for ever.
#[test]
fn runs_have_a_time_limit_by_default() {
    assert_eq!(
        RunOptions::default().timeout,
        Some(RunOptions::DEFAULT_TIMEOUT)
    );
    assert_eq!(RunOptions::DEFAULT_TIMEOUT, Duration::from_secs(60));
}

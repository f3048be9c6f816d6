//! `bebopc build`: descriptor output, plugins (options, insertion points, diagnostics,
//! failures), configuration files and exit codes, running the built binaries.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// test code: failures should panic
// Most of these tests run the test plugin, which is built with the `test-plugins` feature
// (`cargo test -p bebopc-cli --features test-plugins`; CI tests with `--all-features`).
#![cfg(feature = "test-plugins")]

mod common;

use bebop_descriptor::{CodeGeneratorRequest, DescriptorSet};
use common::{Project, assert_status, reference_descriptors, stderr, stdout, testplugin};

fn plugin_arg(name: &str) -> String {
    format!("{name}={}", testplugin().display())
}

#[test]
fn desc_out_matches_the_reference_bytes() {
    let Some(reference_descriptors) = reference_descriptors() else {
        return;
    };
    let p = Project::new();
    let Some(_) = p.copy_valid_fixtures(".") else {
        return;
    };
    for name in [
        "jazz",
        "union",
        "const",
        "toposort",
        "pkg_app",
        "visibility",
        "dec_app",
    ] {
        let out = p.run(&[
            "build",
            &format!("{name}.bop"),
            "-I",
            ".",
            &format!("--desc_out=out/{name}.desc"),
        ]);
        assert_status(&out, 0);
        let ours = std::fs::read(p.join(&format!("out/{name}.desc"))).unwrap();
        let reference =
            std::fs::read(reference_descriptors.join(format!("{name}.desc.bin"))).unwrap();
        assert!(
            ours == reference,
            "{name}: --desc_out differs from the reference's DescriptorSet"
        );
    }
    // With a standard schema import, the user's schema is byte-identical (docs/decisions.md D18).
    let out = p.run(&["build", "enum.bop", "--desc_out", "enum.desc"]);
    assert_status(&out, 0);
    let ours = DescriptorSet::from_bytes(&std::fs::read(p.join("enum.desc")).unwrap()).unwrap();
    let reference = DescriptorSet::from_bytes(
        &std::fs::read(reference_descriptors.join("enum.desc.bin")).unwrap(),
    )
    .unwrap();
    assert_eq!(ours.schema_list().len(), reference.schema_list().len());
    assert_eq!(ours.schema_list()[0], reference.schema_list()[0]);
    assert_eq!(
        ours.schema_list()[1].path.as_deref(),
        Some("bebop/decorators.bop")
    );
}

#[test]
fn emit_source_info_adds_positions() {
    let p = Project::new();
    p.write(
        "a.bop",
        "/// A point.\nstruct Point {\n    x: float32; // across\n}\n",
    );
    assert_status(&p.run(&["build", "a.bop", "--desc_out=plain.desc"]), 0);
    assert_status(
        &p.run(&[
            "build",
            "a.bop",
            "--desc_out=info.desc",
            "--emit-source-info",
        ]),
        0,
    );
    let plain = DescriptorSet::from_bytes(&std::fs::read(p.join("plain.desc")).unwrap()).unwrap();
    let info = DescriptorSet::from_bytes(&std::fs::read(p.join("info.desc")).unwrap()).unwrap();
    assert!(plain.schema_list()[0].source_code_info.is_none());
    let locs = info.schema_list()[0]
        .source_code_info
        .as_ref()
        .and_then(|i| i.locations.clone())
        .expect("locations");
    assert_eq!(locs.len(), 2);
    assert_eq!(locs[0].path, Some(vec![5, 0]));
    assert_eq!(locs[0].span, Some([2, 1, 4, 2]));
    assert_eq!(locs[0].leading_comments.as_deref(), Some("A point."));
    assert_eq!(locs[1].path, Some(vec![5, 0, 1, 0]));
    // As in the reference's source info, a comment after the `;` belongs to the `;`, not to
    // the field (codegen/compiler/src/source_info.rs).
    assert_eq!(locs[1].trailing_comments, None);
    assert_eq!(locs[1].span, Some([3, 5, 3, 16]));
}

#[test]
fn plugin_round_trip_with_options_parameter_and_insertion_points() {
    let p = Project::new();
    let Some(_) = p.copy_fixture("valid/jazz.bop", "jazz.bop") else {
        return;
    };
    let out = p.run(&[
        "build",
        "jazz.bop",
        "--test_out=gen",
        "--test_opt=param-text",
        "--plugin",
        &plugin_arg("test"),
        "-D",
        "first=1",
        "--option=second=two=2",
        "-D",
        "first=overridden",
        "--color",
        "never",
    ]);
    assert_status(&out, 0);
    let request = p.read("gen/request.txt");
    assert!(request.contains("files=jazz.bop\n"), "{request}");
    assert!(request.contains("parameter=param-text\n"), "{request}");
    // -D options in order; a repeated key keeps its place and takes the last value.
    assert!(
        request.contains("option first=overridden\noption second=two=2\n"),
        "{request}"
    );
    let v = bebopc::descriptor::compiler_version();
    let version = format!("version={}.{}.{}-{}\n", v.major, v.minor, v.patch, v.suffix);
    assert!(request.contains(&version), "{request}");
    assert!(
        request.contains("schema jazz.bop source_info=false"),
        "{request}"
    );
    let defs = p.read("gen/definitions.txt");
    assert!(
        defs.starts_with("// @@bebopc_insertion_point(top)\nInstrument\n"),
        "{defs}"
    );
    assert!(defs.contains("Library\n"), "{defs}");
    assert!(
        defs.ends_with("inserted at bottom\n// @@bebopc_insertion_point(bottom)\n"),
        "{defs}"
    );
    // The plugin's warning is shown like a compiler diagnostic, with the schema line.
    let err = stderr(&out);
    assert!(
        err.contains("jazz.bop:1:1: warning[W100]: [test] first definition seen"),
        "{err}"
    );
    assert!(
        err.contains("   = help: hint for: first definition seen"),
        "{err}"
    );
    assert!(
        err.contains("note: [test] generated by the test plugin"),
        "{err}"
    );
    assert!(err.contains("test: 2 file(s) written to gen"), "{err}");

    // A second plugin inserts into the first one's file in the same directory.
    let out = p.run(&[
        "build",
        "jazz.bop",
        "--test_out=gen",
        "--second_out=gen",
        "--plugin",
        &plugin_arg("test"),
        "--plugin",
        &plugin_arg("second"),
        "-D",
        "unused=x",
    ]);
    assert_status(&out, 0);
    let out = p.run_env(
        &["build", "jazz.bop", "--insert_out=gen", "-q"],
        &[("PATH", plugin_path_with("insert", &p).as_os_str())],
    );
    assert_status(&out, 0);
    assert!(
        out.stderr.is_empty(),
        "-q prints nothing on success: {}",
        stderr(&out)
    );
    let defs = p.read("gen/definitions.txt");
    assert!(
        defs.starts_with("inserted at top by a second plugin\n// @@bebopc_insertion_point(top)\n"),
        "{defs}"
    );
}

/// A PATH whose first directory holds the test plugin installed as `bebopc-gen-NAME`.
fn plugin_path_with(name: &str, p: &Project) -> std::path::PathBuf {
    let bin = p.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let target = bin.join(format!("bebopc-gen-{name}"));
    if !target.exists() {
        std::fs::copy(testplugin(), &target).unwrap();
    }
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::path::PathBuf::from(std::env::join_paths(dirs).unwrap())
}

#[test]
fn plugins_are_found_on_path_and_source_info_reaches_them() {
    let p = Project::new();
    p.write("a.bop", "\n\nstruct A { x: int32; }\n");
    // A name no other binary in the target directory has: bebopc looks next to itself first,
    // where cargo may have put other packages' plugins (bebop-plugin-host's `bebopc-gen-echo`).
    let path = plugin_path_with("pathecho", &p);
    let out = p.run_env(
        &[
            "build",
            "a.bop",
            "--pathecho_out=out",
            "-D",
            "mode=echo",
            "--emit-source-info",
            "--color",
            "never",
        ],
        &[("PATH", path.as_os_str())],
    );
    assert_status(&out, 0);
    assert!(
        p.read("out/request.txt")
            .contains("schema a.bop source_info=true")
    );
    // The warning is placed at the definition's position taken from the source info.
    assert!(
        stderr(&out).contains("a.bop:3:1: warning[W100]: [pathecho] first definition seen"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn missing_plugin_says_where_it_looked() {
    let p = Project::new();
    p.write("a.bop", "struct A { x: int32; }\n");
    let empty = p.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let out = p.run_env(
        &[
            "build",
            "a.bop",
            "--nosuch_out=gen",
            "--desc_out=a.desc",
            "--color",
            "never",
        ],
        &[("PATH", empty.as_os_str())],
    );
    assert_status(&out, 3);
    let err = stderr(&out);
    assert!(
        err.contains("error: plugin `nosuch` not found: no executable `bebopc-gen-nosuch`"),
        "{err}"
    );
    assert!(
        err.contains(&empty.display().to_string()),
        "lists the PATH directory: {err}"
    );
    assert!(err.contains("--plugin nosuch=PATH"), "{err}");
    // The descriptor is still written; nothing else.
    assert!(p.join("a.desc").is_file());
    assert!(!p.join("gen").exists());
    // An explicit path that does not exist is named.
    let out = p.run(&[
        "build",
        "a.bop",
        "--x_out=gen",
        "--plugin",
        "x=./nope/bebopc-gen-x",
    ]);
    assert_status(&out, 3);
    assert!(
        stderr(&out).contains("nope/bebopc-gen-x"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn crashing_and_misbehaving_plugins_fail_clearly() {
    let p = Project::new();
    p.write("a.bop", "struct A { x: int32; }\n");
    let plugin = plugin_arg("t");
    let run = |mode: &str| {
        p.run(&[
            "build",
            "a.bop",
            "--t_out=gen",
            "--plugin",
            &plugin,
            "-D",
            &format!("mode={mode}"),
            "--color",
            "never",
        ])
    };
    let crash = run("crash");
    assert_status(&crash, 3);
    let err = stderr(&crash);
    assert!(err.contains("plugin `t`"), "{err}");
    assert!(
        err.contains("testplugin: simulated crash while generating a.bop"),
        "shows stderr: {err}"
    );

    let reported = run("error");
    assert_status(&reported, 3);
    let err = stderr(&reported);
    assert!(
        err.contains("a.bop:1:1: error[E100]: [t] unsupported definition"),
        "{err}"
    );
    assert!(
        err.contains("plugin `t` reported an error: these schemas are not supported"),
        "{err}"
    );

    let diag_error = run("diag-error");
    assert_status(&diag_error, 3);
    assert!(
        stderr(&diag_error).contains("error[E100]: [t] cannot generate this"),
        "{}",
        stderr(&diag_error)
    );
    assert!(
        !p.join("gen/request.txt").exists(),
        "no files after an error diagnostic"
    );

    let evil = run("evil");
    assert_status(&evil, 3);
    assert!(stderr(&evil).contains("../escape.txt"), "{}", stderr(&evil));
    assert!(!p.path().join("escape.txt").exists());

    let garbage = run("garbage");
    assert_status(&garbage, 3);
    assert!(
        stderr(&garbage).contains("not a CodeGeneratorResponse"),
        "{}",
        stderr(&garbage)
    );

    // JSON format: failures are JSON lines too.
    let json = p.run(&[
        "build",
        "a.bop",
        "--t_out=gen",
        "--plugin",
        &plugin,
        "-D",
        "mode=crash",
        "--format",
        "json",
    ]);
    assert_status(&json, 3);
    let lines: Vec<serde_json::Value> = stdout(&json)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert!(
        lines.iter().any(|l| l["severity"] == "error"
            && l["message"]
                .as_str()
                .unwrap_or("")
                .contains("simulated crash")),
        "{lines:?}"
    );
}

#[test]
fn schema_errors_stop_before_any_output() {
    let p = Project::new();
    let Some(_) = p.copy_fixture("should_fail/enum_zero.bop", "bad.bop") else {
        return;
    };
    let out = p.run(&[
        "build",
        "bad.bop",
        "--desc_out=bad.desc",
        "--t_out=gen",
        "--plugin",
        &plugin_arg("t"),
    ]);
    assert_status(&out, 1);
    assert!(!p.join("bad.desc").exists());
    assert!(!p.join("gen").exists());
    let json = p.run(&[
        "build",
        "bad.bop",
        "--desc_out=bad.desc",
        "--format",
        "json",
    ]);
    assert_status(&json, 1);
    let first: serde_json::Value =
        serde_json::from_str(stdout(&json).lines().next().unwrap()).unwrap();
    assert_eq!(first["code"], "E050");
    assert_eq!(first["file"], "bad.bop");
}

#[test]
fn implicit_build_and_usage_errors() {
    let p = Project::new();
    p.write("a.bop", "struct A { x: int32; }\n");
    let out = p.run(&["a.bop", "--desc_out=a.desc"]);
    assert_status(&out, 0);
    assert!(p.join("a.desc").is_file());
    assert_status(&p.run(&["build", "a.bop", "--t_out"]), 2);
    assert_status(&p.run(&["build", "a.bop", "-D", "novalue"]), 2);
    assert_status(&p.run(&["build", "a.bop", "--plugin", "noequals"]), 2);
    assert_status(&p.run(&["build", "a.bop", "-c", "missing.yml"]), 2);
    std::fs::write(p.join("file-not-dir"), "").unwrap();
    assert_status(
        &p.run(&[
            "build",
            "a.bop",
            "--t_out=file-not-dir",
            "--plugin",
            &plugin_arg("t"),
        ]),
        2,
    );
    let nothing = p.run(&["build", "a.bop", "--color", "never"]);
    assert_status(&nothing, 0);
    assert!(
        stderr(&nothing).contains("warning: nothing to generate"),
        "{}",
        stderr(&nothing)
    );
}

#[test]
fn configuration_file_drives_the_build() {
    let p = Project::new();
    p.write(
        "bebop.yml",
        &format!(
            "sources:\n  - \"schemas/**/*.bop\"\nexclude:\n  - \"**/vendor/**\"\ninclude:\n  - shared\n\
             plugins:\n  test: ./generated/test\n  other:\n    out: generated/other\n    path: {}\n    \
             options:\n      flavour: other-only\noptions:\n  namespace: MyApp.Models\n  flavour: global\n",
            testplugin().display()
        ),
    )
    .write("schemas/app.bop", "import \"common.bop\"\nstruct App { c: Common; }\n")
    .write("schemas/vendor/broken.bop", "this is not bebop\n")
    .write("shared/common.bop", "struct Common { x: int32; }\n");
    let out = p.run(&[
        "build",
        "--plugin",
        &plugin_arg("test"),
        "-D",
        "extra=1",
        "-v",
        "--desc_out=all.desc",
    ]);
    assert_status(&out, 0);
    let test = p.read("generated/test/request.txt");
    assert!(test.contains("files=schemas/app.bop\n"), "{test}");
    assert!(
        test.contains("option namespace=MyApp.Models\noption flavour=global\noption extra=1\n"),
        "{test}"
    );
    let other = p.read("generated/other/request.txt");
    assert!(
        other.contains("option flavour=other-only\n"),
        "plugin options override: {other}"
    );
    let set = DescriptorSet::from_bytes(&std::fs::read(p.join("all.desc")).unwrap()).unwrap();
    let paths: Vec<_> = set
        .schema_list()
        .iter()
        .map(|s| s.path.clone().unwrap())
        .collect();
    assert_eq!(paths, vec!["schemas/app.bop", "common.bop"]);
    let err = stderr(&out);
    assert!(
        err.contains("configuration:"),
        "-v names the configuration: {err}"
    );

    // From a subdirectory the configuration is found in the parent, and its paths stay
    // relative to it.
    std::fs::create_dir_all(p.join("deep/er")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bebopc"))
        .args(["check", "-q"])
        .current_dir(p.join("deep/er"))
        .output()
        .unwrap();
    assert_status(&out, 0);

    // An explicit configuration (JSON works too) replaces the discovered one.
    p.write(
        "alt.json",
        "{ \"sources\": [\"schemas/app.bop\"], \"include\": [\"shared\"], \"plugins\": { \"x\": \"gen-x\" } }",
    );
    let out = p.run(&["build", "-c", "alt.json", "--plugin", &plugin_arg("x")]);
    assert_status(&out, 0);
    assert!(p.join("gen-x/request.txt").is_file());

    // A broken configuration is a usage error with a position.
    p.write("bad.yml", "sources:\n  - [nested]\n");
    let out = p.run(&["check", "-c", "bad.yml"]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("bad.yml:2:5: `sources` entries must be strings"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn request_bytes_match_the_reference_except_the_version() {
    // A plugin that saves its request (the echo mode writes text; the raw bytes are what
    // the library builds, checked here through the descriptor of the same run).
    let Some(reference_descriptors) = reference_descriptors() else {
        return;
    };
    let p = Project::new();
    let Some(_) = p.copy_valid_fixtures(".") else {
        return;
    };
    let out = p.run(&["build", "union.bop", "-I", ".", "--desc_out=u.desc"]);
    assert_status(&out, 0);
    let set = DescriptorSet::from_bytes(&std::fs::read(p.join("u.desc")).unwrap()).unwrap();
    let reference = CodeGeneratorRequest::from_bytes(
        &std::fs::read(reference_descriptors.join("union.request.bin")).unwrap(),
    )
    .unwrap();
    let ours = bebopc::descriptor::request_from_set(&set, vec!["union.bop".into()], None, &[]);
    let mut ours_fixed = ours.clone();
    ours_fixed.compiler_version = reference.compiler_version.clone();
    assert_eq!(
        ours_fixed.to_vec().unwrap(),
        std::fs::read(reference_descriptors.join("union.request.bin")).unwrap()
    );
    assert_ne!(ours.compiler_version, reference.compiler_version);
}

#[test]
fn no_warn_and_quiet_with_plugins() {
    let p = Project::new();
    let Some(_) = p.copy_fixture("valid/basic_types.bop", "b.bop") else {
        return;
    };
    let out = p.run(&[
        "build",
        "b.bop",
        "--t_out=gen",
        "--plugin",
        &plugin_arg("t"),
        "--no-warn",
        "--color",
        "never",
    ]);
    assert_status(&out, 0);
    let err = stderr(&out);
    assert!(!err.contains("warning"), "{err}");
    assert!(
        err.contains("note: [t]"),
        "notes stay with --no-warn: {err}"
    );
    let out = p.run(&[
        "build",
        "b.bop",
        "--t_out=gen",
        "--plugin",
        &plugin_arg("t"),
        "-q",
    ]);
    assert_status(&out, 0);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

/// With the Lua runtime, a fixture with validate and export blocks gives the reference's
/// bytes exactly, export data included.
#[cfg(feature = "lua")]
#[test]
fn lua_export_blocks_match_the_reference() {
    let Some(reference_descriptors) = reference_descriptors() else {
        return;
    };
    let p = Project::new();
    let Some(_) = p.copy_fixture("valid/dec_validate_export.bop", "dec_validate_export.bop") else {
        return;
    };
    let out = p.run(&["build", "dec_validate_export.bop", "--desc_out=d.desc"]);
    assert_status(&out, 0);
    let ours = std::fs::read(p.join("d.desc")).unwrap();
    let reference =
        std::fs::read(reference_descriptors.join("dec_validate_export.desc.bin")).unwrap();
    assert!(
        ours == reference,
        "export data differs from the reference's"
    );
    // A validate block's error() fails the build.
    p.write(
        "bad.bop",
        "#decorator(range) {\n    targets = FIELD\n    param min!: int32\n    param max!: int32\n    \
         validate [[\n        if min >= max then error(\"min must be less than max\") end\n    ]]\n}\n\
         struct S { @range(min: 5, max: 1) x: int32; }\n",
    );
    let out = p.run(&[
        "build",
        "bad.bop",
        "--desc_out=bad.desc",
        "--color",
        "never",
    ]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains("min must be less than max"),
        "{}",
        stderr(&out)
    );
}

/// A plugin that never finishes is killed at the time limit (`--plugin-timeout`, or
/// `plugin_timeout` in bebop.yml), reported, and bebopc exits with status 3.
#[test]
fn a_hanging_plugin_is_killed_at_the_time_limit() {
    let p = Project::new();
    p.write("a.bop", "struct A { x: int32; }\n");
    let plugin = plugin_arg("t");
    let args = |extra: &[&'static str]| {
        let mut v = vec![
            "build",
            "a.bop",
            "--t_out=gen",
            "-D",
            "mode=hang",
            "--color",
            "never",
        ];
        v.extend_from_slice(extra);
        v
    };
    let started = std::time::Instant::now();
    let mut a = args(&["--plugin-timeout", "1", "--plugin"]);
    a.push(&plugin);
    let out = p.run(&a);
    assert_status(&out, 3);
    let err = stderr(&out);
    assert!(err.contains("did not finish within 1s"), "{err}");
    assert!(err.contains("hanging on purpose"), "shows stderr: {err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));

    // The same limit from bebop.yml; the command line wins over it.
    p.write("bebop.yml", "plugin_timeout: 1\n");
    let mut a = args(&["--plugin"]);
    a.push(&plugin);
    let out = p.run(&a);
    assert_status(&out, 3);
    assert!(
        stderr(&out).contains("did not finish within 1s"),
        "{}",
        stderr(&out)
    );
    p.write("bebop.yml", "plugin_timeout: 600\n");
    let mut a = args(&["--plugin-timeout", "1", "--plugin"]);
    a.push(&plugin);
    let out = p.run(&a);
    assert!(
        stderr(&out).contains("did not finish within 1s"),
        "{}",
        stderr(&out)
    );
    p.write("bebop.yml", "plugin_timeout: soon\n");
    let out = p.run(&["check", "a.bop"]);
    assert!(
        stderr(&out).contains("`plugin_timeout` must be a whole number of seconds"),
        "{}",
        stderr(&out)
    );
}

/// `--plugin-max-response` caps what is read of a plugin's answer.
#[test]
fn a_plugin_response_over_the_limit_fails() {
    let p = Project::new();
    p.write("a.bop", "struct A { x: int32; }\n");
    let plugin = plugin_arg("t");
    let run = |limit: &str| {
        p.run(&[
            "build",
            "a.bop",
            "--t_out=gen",
            "--plugin",
            &plugin,
            "--plugin-max-response",
            limit,
            "--color",
            "never",
        ])
    };
    let out = run("16");
    assert_status(&out, 3);
    assert!(stderr(&out).contains("16"), "{}", stderr(&out));
    assert_status(&run("1000000"), 0);
}

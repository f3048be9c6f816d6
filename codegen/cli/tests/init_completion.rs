//! `bebopc init` and `bebopc completion`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

mod common;

use common::{Project, assert_status, stderr, stdout};

#[test]
fn init_writes_a_project_that_checks_and_builds() {
    let p = Project::bare();
    let out = p.run(&["init"]);
    assert_status(&out, 0);
    assert!(p.join("bebop.yml").is_file());
    assert!(p.join("schemas/example.bop").is_file());
    let check = p.run(&["check", "--color", "never"]);
    assert_status(&check, 0);
    // The template is clean: no warning either (not even a deprecated alias).
    assert_eq!(stderr(&check), "no errors\n");
    let build = p.run(&["build", "--desc_out=example.desc"]);
    assert_status(&build, 0);
    let set = bebop_descriptor::DescriptorSet::from_bytes(
        &std::fs::read(p.join("example.desc")).unwrap(),
    )
    .unwrap();
    assert!(set.find_definition("example.Greeting").is_some());
    assert!(set.find_definition("example.Greeter").is_some());
    // The starter schema is formatted.
    let fmt = p.run(&["fmt", "--check"]);
    assert_status(&fmt, 0);
    assert_eq!(stdout(&fmt), "");
}

#[test]
fn init_refuses_to_overwrite() {
    let p = Project::bare();
    p.write("bebop.yml", "sources: [mine.bop]\n");
    let out = p.run(&["init", "--color", "never"]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains("bebop.yml already exists"),
        "{}",
        stderr(&out)
    );
    assert_eq!(p.read("bebop.yml"), "sources: [mine.bop]\n");
    assert!(!p.join("schemas").exists());
    let q = Project::bare();
    q.write("schemas/example.bop", "// mine\n");
    assert_status(&q.run(&["init"]), 1);
    assert_eq!(q.read("schemas/example.bop"), "// mine\n");
    assert!(!q.join("bebop.yml").exists());
}

#[test]
fn completion_scripts() {
    let p = Project::new();
    for (shell, marker) in [
        ("bash", "_bebopc()"),
        ("zsh", "#compdef bebopc"),
        ("fish", "complete -c bebopc"),
    ] {
        let out = p.run(&["completion", shell]);
        assert_status(&out, 0);
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script}");
        for word in [
            "build",
            "check",
            "fmt",
            "watch",
            "debounce",
            "line-width",
            "desc_out",
            "emit-source-info",
            "no-warn",
        ] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    assert_status(&p.run(&["completion", "tcsh"]), 2);
}

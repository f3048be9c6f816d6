//! `bebopc fmt`: in place, `--check` (diffs and the exit status), `--stdin`, the
//! configuration's sources and `format:` settings, and files that are not formatted (syntax
//! errors, invalid UTF-8), running the built binary. The layout itself is tested in the
//! `bebopc` crate (`codegen/compiler/tests/format.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{Project, assert_status, stderr, stdout};

const MESSY: &str = "struct  Point{x:float32;   // across\n\n\n  y : float32;}\n";
const TIDY: &str = "struct Point {\n    x: float32; // across\n\n    y: float32;\n}\n";

#[test]
fn formats_files_in_place() {
    let p = Project::new();
    p.write("a.bop", MESSY).write("b.bop", TIDY);
    let out = p.run(&["fmt", "a.bop", "b.bop", "--color", "never"]);
    assert_status(&out, 0);
    assert_eq!(p.read("a.bop"), TIDY);
    assert_eq!(p.read("b.bop"), TIDY);
    assert!(
        stderr(&out).contains("1 file(s) reformatted, 1 unchanged"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
    let again = p.run(&["fmt", "a.bop", "b.bop"]);
    assert_status(&again, 0);
    assert!(stderr(&again).contains("0 file(s) reformatted, 2 unchanged"));
}

#[test]
fn check_prints_a_diff_and_changes_nothing() {
    let p = Project::new();
    p.write("a.bop", MESSY).write("ok.bop", TIDY);
    let out = p.run(&["fmt", "--check", "a.bop", "ok.bop"]);
    assert_status(&out, 1);
    assert_eq!(p.read("a.bop"), MESSY);
    assert_eq!(
        stdout(&out),
        "--- a.bop\n+++ a.bop\t(formatted)\n@@ -1,4 +1,5 @@\n\
         -struct  Point{x:float32;   // across\n-\n+struct Point {\n+    x: float32; // across\n \n\
         -  y : float32;}\n+    y: float32;\n+}\n"
    );
    assert!(
        stderr(&out).contains("1 file(s) would be reformatted, 1 already formatted"),
        "{}",
        stderr(&out)
    );
    // Formatted files pass.
    let out = p.run(&["fmt", "--check", "ok.bop"]);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "");
    // In the JSON format, one object per file on stdout.
    let out = p.run(&["fmt", "--check", "a.bop", "--format", "json"]);
    assert_status(&out, 1);
    let line: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(line["file"], "a.bop");
    assert!(line["diff"].as_str().unwrap().starts_with("--- a.bop\n"));
}

fn run_stdin(p: &Project, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bebopc"))
        .args(args)
        .current_dir(p.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bebopc");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("wait for bebopc")
}

#[test]
fn stdin_to_stdout() {
    let p = Project::new();
    let out = run_stdin(&p, &["fmt", "--stdin"], MESSY.as_bytes());
    assert_status(&out, 0);
    assert_eq!(stdout(&out), TIDY);
    let out = run_stdin(&p, &["fmt", "--stdin", "--indent", "2"], MESSY.as_bytes());
    assert_eq!(stdout(&out), TIDY.replace("    ", "  "));
    let out = run_stdin(&p, &["fmt", "--stdin", "--check"], TIDY.as_bytes());
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "");
    let out = run_stdin(&p, &["fmt", "--stdin", "--check"], MESSY.as_bytes());
    assert_status(&out, 1);
    assert!(
        stdout(&out).starts_with("--- <stdin>\n"),
        "{}",
        stdout(&out)
    );
    // A syntax error: diagnostics on stderr, nothing on stdout.
    let out = run_stdin(
        &p,
        &["fmt", "--stdin", "--color", "never"],
        b"struct A {\n    x int32;\n}\n",
    );
    assert_status(&out, 1);
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("<stdin>:2:7: error[E010]"),
        "{}",
        stderr(&out)
    );
    assert_status(&p.run(&["fmt", "--stdin", "a.bop"]), 2);
}

#[test]
fn files_with_errors_are_left_untouched() {
    let p = Project::new();
    let bad = "struct A {\n  x: int32\n}\n";
    p.write("bad.bop", bad).write("good.bop", MESSY);
    std::fs::write(p.join("latin1.bop"), b"// caf\xe9\nstruct  B {}\n").unwrap();
    let out = p.run(&[
        "fmt",
        "bad.bop",
        "good.bop",
        "latin1.bop",
        "--color",
        "never",
    ]);
    assert_status(&out, 1);
    assert_eq!(p.read("bad.bop"), bad);
    assert_eq!(p.read("good.bop"), TIDY);
    assert_eq!(
        std::fs::read(p.join("latin1.bop")).unwrap(),
        b"// caf\xe9\nstruct  B {}\n"
    );
    let err = stderr(&out);
    assert!(err.contains("bad.bop:2:11: error[E010]"), "{err}");
    assert!(err.contains("latin1.bop:1:7: error[E001]"), "{err}");
    assert!(
        err.contains("1 file(s) reformatted, 0 unchanged, 2 not formatted (errors)"),
        "{err}"
    );
    // A missing file is an error too.
    let out = p.run(&["fmt", "missing.bop"]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("cannot read missing.bop"));
}

#[test]
fn configuration_sources_and_layout() {
    let p = Project::new();
    p.write(
        "bebop.yml",
        "sources: [\"schemas/**/*.bop\"]\nexclude: [\"**/vendor/**\"]\nformat:\n  indent: 2\n",
    )
    .write("schemas/a.bop", MESSY)
    .write("schemas/sub/b.bop", MESSY)
    .write("schemas/vendor/c.bop", MESSY)
    .write("other.bop", MESSY);
    let out = p.run(&["fmt"]);
    assert_status(&out, 0);
    let two = TIDY.replace("    ", "  ");
    assert_eq!(p.read("schemas/a.bop"), two);
    assert_eq!(p.read("schemas/sub/b.bop"), two);
    assert_eq!(p.read("schemas/vendor/c.bop"), MESSY);
    assert_eq!(p.read("other.bop"), MESSY);
    // The command line wins over the configuration.
    let out = p.run(&["fmt", "--indent", "4", "other.bop"]);
    assert_status(&out, 0);
    assert_eq!(p.read("other.bop"), TIDY);
    // A bad `format` is a configuration error.
    p.write("bebop.yml", "format: { tabs: true }\n");
    let out = p.run(&["fmt", "other.bop", "--color", "never"]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("bebop.yml:1:11: unknown key in `format`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_fixture_formats_and_then_checks() {
    let p = Project::new();
    if p.copy_valid_fixtures("fx").is_none() {
        return;
    }
    let out = p.run(&["fmt", "fx/*.bop"]);
    assert_status(&out, 0);
    let out = p.run(&["fmt", "--check", "fx/*.bop"]);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "");
    // The formatted fixtures still build.
    let out = p.run(&[
        "build",
        "fx/union.bop",
        "fx/imports.bop",
        "-I",
        "fx",
        "--desc_out=x.desc",
    ]);
    assert_status(&out, 0);
}

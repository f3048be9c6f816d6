//! `bebopc check`: exit codes, formats and flags.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

mod common;

use common::{Project, assert_status, stderr, stdout};

#[test]
fn check_valid_schema_succeeds() {
    let p = Project::new();
    let Some(_) = p.copy_valid_fixtures("valid") else {
        return;
    };
    let out = p.run(&[
        "check",
        "valid/imports.bop",
        "-I",
        "valid",
        "--color",
        "never",
    ]);
    assert_status(&out, 0);
    let err = stderr(&out);
    assert!(err.ends_with("no errors\n"), "{err}");
    let quiet = p.run(&["check", "-q", "valid/imports.bop", "-I", "valid"]);
    assert_status(&quiet, 0);
    assert!(quiet.stderr.is_empty(), "{}", stderr(&quiet));
}

#[test]
fn check_invalid_schema_fails_with_diagnostics() {
    let p = Project::new();
    let Some(_) = p.copy_fixture("should_fail/enum_zero.bop", "enum_zero.bop") else {
        return;
    };
    let out = p.run(&["check", "enum_zero.bop", "--color", "never"]);
    assert_status(&out, 1);
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "enum_zero.bop:2:6: error[E050]: enum 'MissingZero' has no member with value 0\n"
        ),
        "{err}"
    );
    assert!(err.contains("  |      ^^^^^^^^^^^\n"), "{err}");
    assert!(!err.contains('\x1b'), "no colour when asked not to");
    let colored = p.run(&["check", "enum_zero.bop", "--color", "always"]);
    assert!(stderr(&colored).contains("\x1b[1;31m"));
    // Not a terminal: `auto` means no colour.
    let auto = p.run(&["check", "enum_zero.bop"]);
    assert!(!stderr(&auto).contains('\x1b'), "{}", stderr(&auto));
}

#[test]
fn json_format_prints_one_object_per_line() {
    let p = Project::new();
    let Some(_) = p.copy_fixture("should_fail/multiple_errors.bop", "multiple_errors.bop") else {
        return;
    };
    let out = p.run(&["check", "multiple_errors.bop", "--format", "json"]);
    assert_status(&out, 1);
    let text = stdout(&out);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    assert!(lines.len() >= 11, "{text}");
    assert_eq!(lines[0]["code"], "E010");
    assert_eq!(lines[0]["line"], 2);
    assert_eq!(lines[0]["file"], "multiple_errors.bop");
    assert!(
        out.stderr.is_empty(),
        "nothing for people on stderr: {}",
        stderr(&out)
    );
}

#[test]
fn warnings_can_be_hidden() {
    let p = Project::new();
    let Some(_) = p.copy_fixture("valid/basic_types.bop", "basic_types.bop") else {
        return;
    };
    let shown = p.run(&["check", "basic_types.bop", "--color", "never"]);
    assert_status(&shown, 0);
    assert!(stderr(&shown).contains("warning[W003]"));
    let hidden = p.run(&["check", "basic_types.bop", "--no-warn"]);
    assert_status(&hidden, 0);
    assert!(!stderr(&hidden).contains("warning"), "{}", stderr(&hidden));
    // Options may come before the command too.
    let before = p.run(&["--no-warn", "check", "basic_types.bop"]);
    assert!(!stderr(&before).contains("warning"), "{}", stderr(&before));
    let json = p.run(&["check", "basic_types.bop", "--format", "json", "--no-warn"]);
    assert_status(&json, 0);
    assert_eq!(stdout(&json), "");
}

#[test]
fn usage_errors_and_missing_files() {
    let p = Project::new();
    let none = p.run(&["check"]);
    assert_status(&none, 2);
    assert!(
        stderr(&none).contains("no schemas to compile"),
        "{}",
        stderr(&none)
    );
    assert_status(&p.run(&["frobnicate"]), 2);
    assert_status(&p.run(&["check", "a.bop", "--color", "purple"]), 2);
    assert_status(&p.run(&["check", "a.bop", "-q", "-v"]), 2);
    assert_status(&p.run(&["check", "a.bop", "--c_out=x"]), 2);
    assert_status(&p.run(&["check", "*.bop"]), 2);
    let missing = p.run(&["check", "no_such_file.bop", "--color", "never"]);
    assert_status(&missing, 1);
    assert!(stderr(&missing).contains("error[E030]"));
    assert_status(&p.run(&["--version"]), 0);
    assert_status(&p.run(&["help"]), 0);
}

#[test]
fn globs_and_excludes() {
    let p = Project::new();
    p.write("s/a.bop", "struct A { x: int32; }\n")
        .write("s/bad/b.bop", "struct B { x: nope; }\n")
        .write("s/c.bop", "struct C { x: int32; }\n");
    let all = p.run(&["check", "s/**/*.bop", "--color", "never"]);
    assert_status(&all, 1);
    let excluded = p.run(&["check", "s/**/*.bop", "-x", "**/bad/**", "-v"]);
    assert_status(&excluded, 0);
    assert!(
        stderr(&excluded).contains("compiling s/a.bop, s/c.bop"),
        "{}",
        stderr(&excluded)
    );
}

//! Hostile input through the whole binary: huge schemas, garbage, deep nesting.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: failures should panic

mod common;

use bebop_descriptor::DescriptorSet;
use common::{Project, assert_status, stderr};

/// 10,000 definitions of every kind, each referring to earlier ones.
fn big_schema(n: usize) -> String {
    let mut s = String::from("package big;\n");
    for i in 0..n {
        match i % 7 {
            0 => s.push_str(&format!("enum E{i} : uint16 {{ Z = 0; A = 1; B = 2; }}\n")),
            1 => s.push_str(&format!(
                "struct S{i} {{ a: int32; b: E{}; c: float64[4]; }}\n",
                i - 1
            )),
            2 => s.push_str(&format!(
                "message M{i} {{ s(1): S{}; m(2): map[string, int64]; }}\n",
                i - 1
            )),
            3 => s.push_str(&format!(
                "union U{i} {{ A(1): S{}; B(2): {{ x: string; }}; }}\n",
                i - 2
            )),
            4 => s.push_str(&format!(
                "service Svc{i} {{ Get(M{}): S{}; }}\n",
                i - 2,
                i - 3
            )),
            5 => s.push_str(&format!("const int64 K{i} = {i};\n")),
            _ => s.push_str(&format!("mut struct N{i} {{ e: E{}[]; }}\n", i - 6)),
        }
    }
    s
}

#[test]
fn ten_thousand_definitions_through_build() {
    let p = Project::new();
    p.write("big.bop", &big_schema(10_000));
    let started = std::time::Instant::now();
    let out = p.run(&[
        "build",
        "big.bop",
        "--desc_out=big.desc",
        "--emit-source-info",
    ]);
    assert_status(&out, 0);
    eprintln!("10,000 definitions: {:?} (debug build)", started.elapsed());
    let set = DescriptorSet::from_bytes(&std::fs::read(p.join("big.desc")).unwrap()).unwrap();
    let schema = &set.schema_list()[0];
    assert_eq!(schema.definitions.as_ref().map(Vec::len), Some(10_000));
    assert!(set.find_definition("big.Svc9993").is_some());
    let locations = schema
        .source_code_info
        .as_ref()
        .and_then(|i| i.locations.as_ref())
        .unwrap();
    assert!(locations.len() > 10_000 * 2);
}

#[test]
fn garbage_and_deep_nesting_are_errors_not_crashes() {
    let p = Project::new();
    let mut garbage: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    garbage.extend_from_slice(b"struct { { { ] ) \xff\xfe");
    std::fs::write(p.join("garbage.bop"), &garbage).unwrap();
    let out = p.run(&[
        "build",
        "garbage.bop",
        "--desc_out=g.desc",
        "--color",
        "never",
    ]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("error["), "{}", stderr(&out));

    let deep = format!(
        "struct A {{ x: {}int32{}; }}\n",
        "map[string, ".repeat(50_000),
        "]".repeat(50_000)
    );
    p.write("deep.bop", &deep);
    let out = p.run(&["build", "deep.bop", "--desc_out=d.desc", "--color", "never"]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("error[E012]"), "{}", stderr(&out));

    let nested = format!("{}{}", "struct A { ".repeat(20_000), "}".repeat(20_000));
    p.write("nested.bop", &nested);
    let out = p.run(&["check", "nested.bop", "--color", "never"]);
    assert_status(&out, 1);
    assert!(!p.join("d.desc").exists());

    // A configuration file nested a hundred thousand levels deep.
    p.write(
        "bebop.yml",
        &format!("sources: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    );
    let out = p.run(&["check", "--color", "never"]);
    assert_status(&out, 2);
    assert!(stderr(&out).contains("nesting deeper"), "{}", stderr(&out));
}

/// A schema "file" that never ends (a device) is read up to the size limit and refused,
/// instead of growing without bound: the reported size (0) is not trusted.
#[cfg(target_os = "linux")]
#[test]
fn an_endless_device_file_is_refused_at_the_size_limit() {
    let p = Project::new();
    let started = std::time::Instant::now();
    let out = p.run(&["check", "/dev/zero", "--color", "never"]);
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(err.contains("larger than 64 MiB"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    // The same for a configuration file.
    let out = p.run(&["check", "--config", "/dev/zero", "--color", "never"]);
    assert_ne!(out.status.code(), Some(0));
}

/// One 4 MiB line holding thousands of errors: at most `--max-errors` (100) are printed, each
/// with a shortened snippet, and the rest counted; `--max-errors 0` prints every error.
#[test]
fn many_errors_on_one_huge_line_stay_bounded() {
    let p = Project::new();
    let line = "struct S { a: nope; } ".repeat(4 << 20 >> 5);
    p.write("big.bop", &format!("{line}\n"));
    let out = p.run(&["check", "big.bop", "--color", "never"]);
    assert_status(&out, 1);
    let err = stderr(&out);
    assert!(err.len() < 200_000, "{} bytes of diagnostics", err.len());
    assert_eq!(
        err.matches("error[E").count(),
        100,
        "{}",
        &err[..2000.min(err.len())]
    );
    assert!(
        err.contains("more errors (--max-errors 100; 0 shows all)"),
        "{}",
        &err[err.len().saturating_sub(500)..]
    );
    let out = p.run(&["check", "big.bop", "--color", "never", "--max-errors", "3"]);
    assert_eq!(stderr(&out).matches("error[E").count(), 3);
    let out = p.run(&["check", "big.bop", "--color", "never", "--max-errors", "0"]);
    assert!(stderr(&out).matches("error[E").count() > 100);
}

/// A diagnostic in an imported file names it by a path that opens from the working
/// directory (its include directory joined with the import), not by the import alone.
#[test]
fn diagnostics_in_imports_show_a_path_that_opens() {
    let p = Project::new();
    p.write("sub/a.bop", "import \"inc/b.bop\"\nstruct A { b: B; }\n")
        .write("sub/inc/b.bop", "struct B { x: int33; }\n");
    let out = p.run(&["check", "-I", "sub", "sub/a.bop"]);
    assert_status(&out, 1);
    let err = stderr(&out);
    assert!(err.contains("sub/inc/b.bop:1:15: error[E040]"), "{err}");
    assert!(p.join("sub/inc/b.bop").is_file());
    // From inside the include directory itself, the import's own path opens.
    let inside = std::process::Command::new(env!("CARGO_BIN_EXE_bebopc"))
        .current_dir(p.join("sub"))
        .args(["check", "-I", ".", "a.bop"])
        .output()
        .unwrap();
    let err = stderr(&inside);
    assert!(err.starts_with("inc/b.bop:1:15: error[E040]"), "{err}");
    // The descriptor still names an imported schema by its import path.
    p.write("sub/inc/b.bop", "struct B { x: int32; }\n");
    let out = p.run(&["build", "-I", "sub", "sub/a.bop", "--desc_out=out.desc"]);
    assert_status(&out, 0);
    let bytes = std::fs::read(p.join("out.desc")).unwrap();
    let set = DescriptorSet::from_bytes(&bytes).unwrap();
    let paths: Vec<_> = set.schema_list().iter().map(|s| s.path.clone()).collect();
    assert!(paths.contains(&Some("inc/b.bop".to_string())), "{paths:?}");
}

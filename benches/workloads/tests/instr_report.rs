//! `instr-report` under a real callgrind: counts come out, repeat exactly, and a row that
//! executes more than its baseline is flagged. Needs valgrind (scripts/test-services installs it); without it
//! the test says so and passes, unless CI is set.

use std::path::Path;
use std::process::Command;

use bebop_workloads::instructions::{Counts, changes};
use bebop_workloads::suite::{Format, Op};

fn valgrind_present() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(out: &Path, extra: &[&str]) -> (String, Counts) {
    let output = Command::new(env!("CARGO_BIN_EXE_instr-report"))
        .args(["--only", "PersonSmall", "--jobs", "2", "--quiet", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("instr-report: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let json = std::fs::read_to_string(out.join("instructions.json"))
        .unwrap_or_else(|e| panic!("instructions.json: {e}"));
    let counts = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    (stdout, counts)
}

#[test]
fn counts_repeat_exactly_and_a_rise_is_flagged() {
    if !valgrind_present() {
        assert!(
            std::env::var_os("CI").is_none(),
            "valgrind is not installed (scripts/test-services installs it) and CI is set"
        );
        eprintln!("note: valgrind is not installed: skipping instr-report's test");
        return;
    }
    let dir = std::env::temp_dir().join(format!("bebop-instr-test-{}", std::process::id()));
    let (first, second) = (dir.join("first"), dir.join("second"));
    let (_, counts) = run(&first, &["--no-baseline"]);

    // Both formats, every operation; PersonSmall's names drew no multi-byte character, so
    // its ASCII row does not exist and is left out rather than failing.
    assert_eq!(counts.counts.len(), 6, "{counts:?}");
    for format in [Format::Bebop, Format::Rkyv] {
        for op in [Op::Decode, Op::DecodeWalk, Op::Encode] {
            let n = counts
                .per_op("PersonSmall", format, op)
                .unwrap_or_else(|| panic!("no count for {format:?} {op:?}"));
            // More than the loop alone, far less than a pass over the whole dataset.
            assert!((20.0..100_000.0).contains(&n), "{format:?} {op:?}: {n}");
        }
    }
    assert!(counts.counts.iter().all(|c| c.operations == 2_000));
    let md = std::fs::read_to_string(first.join("instructions.md")).unwrap_or_default();
    assert!(md.contains("| PersonSmall |"), "{md}");

    // Against a baseline whose Bebop decode took half the instructions: the second run
    // counts exactly what the first did, so that row, now twice the baseline, is the only
    // one that moved, and it is flagged.
    let mut halved = counts.clone();
    for c in &mut halved.counts {
        if c.format == "bebop" && c.op == "decode" {
            c.instructions /= 2;
        }
    }
    std::fs::create_dir_all(&second).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        second.join("instructions.json"),
        serde_json::to_string(&halved).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (stdout, again) = run(&second, &[]);
    assert_eq!(
        again
            .counts
            .iter()
            .map(|c| c.instructions)
            .collect::<Vec<_>>(),
        counts
            .counts
            .iter()
            .map(|c| c.instructions)
            .collect::<Vec<_>>()
    );
    assert_eq!(changes(&halved, &again).len(), 1);
    assert!(
        stdout.contains("1 rows of ours moved, 1 by more than 2%"),
        "{stdout}"
    );
    assert!(stdout.contains("PersonSmall · bebop · decode"), "{stdout}");
    let md = std::fs::read_to_string(second.join("instructions.md")).unwrap_or_default();
    assert!(md.contains("| ⚑ PersonSmall · bebop · decode |"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

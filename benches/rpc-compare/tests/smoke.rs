//! The quick mode end to end: both servers start, every kind of call runs a few times on
//! each, every response is checked, and the table has every row; and the binary runs it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn quick_mode_runs_both_systems_and_checks_every_response() {
    let report = bebop_rpc_compare::run(&bebop_rpc_compare::Settings::quick(), &mut |_| {})
        .unwrap_or_else(|e| panic!("the quick run failed: {e}"));
    assert_eq!(report.rows.len(), 8);
    for row in &report.rows {
        assert!(
            row.bebop.is_finite() && row.bebop > 0.0 && row.tonic.is_finite() && row.tonic > 0.0,
            "{row:?}"
        );
    }
    assert!(report.checked > 1000, "{}", report.checked);
    let batch = report.batch.expect("the batch measurement");
    assert_eq!(batch.chains, 5);
    assert!(batch.batched > std::time::Duration::ZERO, "{batch:?}");
    assert!(batch.sequential > batch.batched, "{batch:?}");
}

#[test]
fn the_binary_prints_the_table_of_the_rows_asked_for() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpc-compare"))
        .args(["--quick", "--only", "latency, PersonSmall"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("rpc-compare --quick did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(status.success(), "{status}\n{out}");
    assert!(
        out.contains("| row | bebop-rpc | tonic |"),
        "no table in:\n{out}"
    );
    for row in [
        "unary latency p50, PersonSmall",
        "unary latency p99, PersonSmall",
    ] {
        assert!(out.contains(row), "no row {row:?} in:\n{out}");
    }
    assert!(
        !out.contains("64 KiB blob, sequential"),
        "--only was ignored:\n{out}"
    );
}

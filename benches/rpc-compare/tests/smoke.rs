//! The quick mode end to end: the servers start, every kind of call runs a few times on
//! every system (bebop-rpc over binary TCP, HTTP/1.1, h2c and WebSocket, and tonic), every
//! response is checked, and the table has every row and column; and the binary runs it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bebop_rpc_compare::{SYSTEMS, System, Unit};

#[test]
fn quick_mode_runs_every_system_and_checks_every_response() {
    let started = Instant::now();
    let report = bebop_rpc_compare::run(&bebop_rpc_compare::Settings::quick(), &mut |_| {})
        .unwrap_or_else(|e| panic!("the quick run failed: {e}"));
    let names: Vec<&str> = report.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "unary latency p50, PersonSmall, sequential",
            "unary latency p99, PersonSmall, sequential",
            "unary latency p50, 64 KiB blob, sequential",
            "unary latency p99, 64 KiB blob, sequential",
            "unary calls/s, 64 callers, PersonSmall",
            "unary calls/s, 64 callers, 64 KiB blob",
            "server-stream msgs/s, PersonSmall, 1 stream of 500",
            "server-stream msgs/s, 64 KiB blob, 1 stream of 40",
        ]
    );
    let elapsed = started.elapsed().as_secs_f64();
    for row in &report.rows {
        assert_eq!(row.values.len(), SYSTEMS);
        for system in System::ALL {
            let v = row.value(system);
            assert!(v.is_finite() && v > 0.0, "{} of {row:?}", system.label());
            let ratio = row.ratio(system);
            assert!(
                ratio.is_finite() && ratio > 0.0,
                "{} of {row:?}",
                system.label()
            );
            match row.unit {
                // No call takes longer than the whole run, nor less than a nanosecond.
                Unit::Micros => assert!(v > 1e-3 && v < elapsed * 1e6, "{row:?}"),
                // Nor more than a billion a second.
                Unit::PerSecond => assert!(v < 1e9, "{row:?}"),
            }
        }
        assert_eq!(row.ratio(System::Tonic), 1.0, "{row:?}");
    }
    // Of every latency measurement, p99 is at least p50, on every system.
    for pair in report.rows[..4].chunks(2) {
        for system in System::ALL {
            assert!(pair[1].value(system) >= pair[0].value(system), "{pair:?}");
        }
    }
    assert!(report.checked > 5000, "{}", report.checked);
    let table = report.table();
    assert!(
        table.starts_with(
            "| row | bebop TCP | bebop HTTP/1.1 | bebop h2c | bebop WebSocket | tonic |\n"
        ),
        "{table}"
    );
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| unary")).count(),
        6
    );
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
        out.contains("| row | bebop TCP | bebop HTTP/1.1 | bebop h2c | bebop WebSocket | tonic |"),
        "no table in:\n{out}"
    );
    assert!(
        out.contains("one call per connection"),
        "no notes in:\n{out}"
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

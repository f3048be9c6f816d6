//! The report runner's quick mode runs every workload and format and writes a complete report.

use bebop_workloads::compare::Comparison;
use bebop_workloads::report;
use bebop_workloads::runner::{PAIRED, RunOptions, run};
use bebop_workloads::suite::{ASCII_WORKLOADS, Format, Op, WORKLOADS};
use bebop_workloads::timing::TimingConfig;

#[test]
fn quick_mode_covers_everything_and_writes_the_report() {
    let options = RunOptions {
        quick: true,
        timing: TimingConfig::FULL,
        only: Vec::new(),
        progress: false,
    };
    let results = run(&options).unwrap_or_else(|e| panic!("{e}"));
    assert!(results.meta.quick);
    // Every workload, and the pure-ASCII row of every text workload whose realistic text
    // drew a multi-byte character (ChunkedText and the documents always do).
    let ascii_rows: Vec<_> = ASCII_WORKLOADS
        .iter()
        .filter(|w| results.meta.workloads.iter().any(|v| v.name == w.name))
        .collect();
    for must in [
        "ChunkedText (ASCII)",
        "DocumentLarge (ASCII)",
        "JsonLarge (ASCII)",
    ] {
        assert!(ascii_rows.iter().any(|w| w.name == must), "{must} missing");
    }
    assert_eq!(
        results.cases.len(),
        (WORKLOADS.len() + ascii_rows.len()) * Format::ALL.len() * Op::ALL.len()
    );
    for w in WORKLOADS.iter().chain(ascii_rows.iter().copied()) {
        for f in Format::ALL {
            for op in Op::ALL {
                assert!(
                    results.timing(w.name, f, op).is_some(),
                    "{} {f:?} {op:?}",
                    w.name
                );
            }
        }
    }
    assert_eq!(
        results.sizes.len(),
        WORKLOADS.len() * (Format::ALL.len() - 1)
    );
    assert!(!results.scaling.is_empty() && !results.bandwidth.is_empty());
    // Decode + walk against rkyv and encode against bincode and rkyv in pairs: one row of
    // each per workload, two pairs each in quick mode.
    assert_eq!(
        results.pairs.len(),
        PAIRED.len() * results.meta.workloads.len()
    );
    for kind in PAIRED {
        let rows: Vec<_> = results
            .pairs
            .iter()
            .filter(|r| (r.op, r.ours, r.peer) == kind)
            .map(|r| r.workload)
            .collect();
        let names: Vec<_> = results.meta.workloads.iter().map(|w| w.name).collect();
        assert_eq!(rows, names, "{kind:?}");
    }
    for row in &results.pairs {
        assert_eq!(row.timing.pairs, 2, "{}", row.workload);
        assert!(row.timing.median > 0.0, "{}", row.workload);
    }

    let dir = std::env::temp_dir().join(format!("bebop-workloads-test-{}", std::process::id()));
    // Against the results checked into the repository, as a full run would compare.
    let checked_in = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("report/results.json");
    let now = serde_json::to_value(&results).unwrap_or_default();
    let comparison = Comparison::from_file(&checked_in, &now).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        comparison.rows.len() > 500,
        "{} rows matched",
        comparison.rows.len()
    );
    report::write(&results, Some(&comparison), &dir).unwrap_or_else(|e| panic!("{e}"));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap_or_default();
    assert!(md.contains("Quick mode"));
    assert!(md.contains("## Against the previous run"));
    assert!(md.contains("### Against rkyv, measured in pairs"));
    assert!(md.contains("### Encode against bincode and rkyv, measured in pairs"));
    assert!(md.contains("| workload (encode) | bincode / bebop |"));
    for w in WORKLOADS {
        assert!(
            md.contains(&format!("| {} |", w.name)),
            "{} missing",
            w.name
        );
    }
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(
        json["cases"].as_array().map(Vec::len),
        Some(results.cases.len())
    );
    assert_eq!(
        json["pairs"].as_array().map(Vec::len),
        Some(results.pairs.len())
    );
    for svg in [
        "decode_walk.svg",
        "encode.svg",
        "sizes.svg",
        "scaling.svg",
        "bandwidth.svg",
    ] {
        let text = std::fs::read_to_string(dir.join(svg)).unwrap_or_default();
        assert!(text.starts_with("<svg"), "{svg}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! Runs every workload in every format and writes `results.json`, `report.md` and SVG charts.
//!
//! ```text
//! cargo run --release -p bebop-workloads --bin bench-report -- [--quick] [--out DIR] [--only NAME]...
//!     [--baseline FILE | --no-baseline]
//! ```
//!
//! - `--quick`: run every operation once or twice and check every round trip; no timing
//!   claims (for CI). Writes to a temporary folder unless `--out` is given.
//! - `--out DIR`: where to write (default `benches/workloads/report/` for the full run).
//! - `--only NAME`: only workloads whose name contains NAME (repeatable).
//! - `--baseline FILE`: compare against this earlier `results.json`. By default a full run
//!   compares against the `results.json` already in the output folder (for the default folder,
//!   the one checked into the repository), read before it is overwritten; a quick run compares
//!   against nothing unless this is given. Rows of ours more than 10% slower are flagged in
//!   the report and on the terminal; the exit status does not change.
//! - `--no-baseline`: no comparison.
//! - `--quiet`: no progress lines.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use bebop_workloads::compare::{Comparison, THRESHOLD};
use bebop_workloads::report;
use bebop_workloads::runner::{RunOptions, run};
use bebop_workloads::timing::TimingConfig;

const USAGE: &str = "usage: bench-report [--quick] [--out DIR] [--only WORKLOAD]... \
                     [--baseline FILE | --no-baseline] [--quiet]";

fn main() -> ExitCode {
    let mut options = RunOptions {
        quick: false,
        timing: TimingConfig::FULL,
        only: Vec::new(),
        progress: true,
    };
    let mut out: Option<PathBuf> = None;
    let mut baseline: Option<PathBuf> = None;
    let mut no_baseline = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--quiet" => options.progress = false,
            "--out" => match args.next() {
                Some(dir) => out = Some(dir.into()),
                None => {
                    eprintln!("error: --out needs a folder\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--baseline" => match args.next() {
                Some(file) => baseline = Some(file.into()),
                None => {
                    eprintln!("error: --baseline needs a results.json\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--no-baseline" => no_baseline = true,
            "--only" => match args.next() {
                Some(name) => options.only.push(name),
                None => {
                    eprintln!("error: --only needs a workload name\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--bench" => {} // passed by `cargo bench`; ignored
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("error: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let out = out.unwrap_or_else(|| {
        if options.quick {
            std::env::temp_dir().join("bebop-workloads-quick")
        } else {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("report")
        }
    });
    if no_baseline && baseline.is_some() {
        eprintln!("error: --baseline and --no-baseline together\n{USAGE}");
        return ExitCode::from(2);
    }
    // Read before the run overwrites it.
    let baseline = match baseline {
        Some(file) => Some(file),
        None if no_baseline || options.quick => None,
        None => Some(out.join("results.json")).filter(|f| f.is_file()),
    };
    let before = match baseline.as_deref().map(std::fs::read_to_string) {
        None => None,
        Some(Ok(text)) => Some(text),
        Some(Err(e)) => {
            eprintln!("error: cannot read the baseline: {e}");
            return ExitCode::FAILURE;
        }
    };
    if cfg!(debug_assertions) && !options.quick {
        eprintln!("warning: a debug build; timings need --release");
    }
    let results = match run(&options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let comparison = match before.map(|text| compare(&text, &results)) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => {
            // A broken baseline must not cost the run: report without the comparison.
            eprintln!("warning: no comparison with the previous run: {e}");
            None
        }
    };
    if let Err(e) = report::write(&results, comparison.as_ref(), &out) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "{} cases over {} workloads, every workload round-trips in every format; {} in {:.1} s; \
         report in {}",
        results.cases.len(),
        results.meta.workloads.len(),
        if options.quick {
            "quick mode (no timing claims)"
        } else {
            "measured"
        },
        results.meta.seconds,
        out.display()
    );
    if let Some(c) = &comparison {
        let flagged: Vec<_> = c.flagged().collect();
        println!(
            "against the previous run: {} of {} rows of ours more than {:.0}% slower{}",
            flagged.len(),
            c.rows.iter().filter(|r| r.ours).count(),
            THRESHOLD * 100.0,
            c.drift
                .map_or_else(String::new, |d| format!(" (the peers moved by ×{d:.2})")),
        );
        for r in flagged {
            println!("  ×{:.2}  {}", r.ratio(), r.label);
        }
    }
    ExitCode::SUCCESS
}

/// The comparison of `results` with the earlier run whose `results.json` is `before`.
fn compare(before: &str, results: &bebop_workloads::runner::Results) -> Result<Comparison, String> {
    let now = serde_json::to_value(results).map_err(|e| e.to_string())?;
    Comparison::from_json(before, &now).map_err(|e| format!("the baseline: {e}"))
}

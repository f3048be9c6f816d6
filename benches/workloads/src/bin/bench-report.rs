//! Runs every workload in every format and writes `results.json`, `report.md` and SVG charts.
//!
//! ```text
//! cargo run --release -p bebop-workloads --bin bench-report -- [--quick] [--out DIR] [--only NAME]...
//! ```
//!
//! - `--quick`: run every operation once or twice and check every round trip; no timing
//!   claims (for CI). Writes to a temporary folder unless `--out` is given.
//! - `--out DIR`: where to write (default `benches/workloads/report/` for the full run).
//! - `--only NAME`: only workloads whose name contains NAME (repeatable).
//! - `--quiet`: no progress lines.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use bebop_workloads::report;
use bebop_workloads::runner::{RunOptions, run};
use bebop_workloads::timing::TimingConfig;

const USAGE: &str = "usage: bench-report [--quick] [--out DIR] [--only WORKLOAD]... [--quiet]";

fn main() -> ExitCode {
    let mut options = RunOptions {
        quick: false,
        timing: TimingConfig::FULL,
        only: Vec::new(),
        progress: true,
    };
    let mut out: Option<PathBuf> = None;
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
    if let Err(e) = report::write(&results, &out) {
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
    ExitCode::SUCCESS
}

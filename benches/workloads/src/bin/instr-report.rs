//! Counts the instructions each Bebop and rkyv case executes per operation, under callgrind,
//! and writes `instructions.json` and `instructions.md` (see `bebop_workloads::instructions`).
//!
//! ```text
//! cargo build --release -p bebop-workloads --bin instr-report
//! ./target/release/instr-report [--out DIR] [--only NAME]... [--baseline FILE | --no-baseline]
//!     [--jobs N] [--quiet]
//! ```
//!
//! - `--out DIR`: where to write (default `benches/workloads/report/`).
//! - `--only NAME`: only workloads whose name contains NAME (repeatable).
//! - `--baseline FILE`: compare against this earlier `instructions.json`. By default the one
//!   already in the output folder is read before it is overwritten.
//! - `--no-baseline`: no comparison.
//! - `--jobs N`: cases counted at once (default: the number of CPUs). The counts do not
//!   depend on it.
//!
//! Needs `valgrind` on the `PATH` (Debian package `valgrind`; `scripts/instr-report`
//! installs it). Each case runs in a process of its own: this program again, as
//! `instr-report --case WORKLOAD FORMAT OP`, under valgrind.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bebop_workloads::instructions::{
    COLLECT, CaseRun, Count, Counts, FORMATS, Meta, OPS, THRESHOLD, changes, markdown,
    one_pass_workloads, parse_callgrind, run_case, workload_names,
};
use bebop_workloads::one_pass::FORMAT as ONE_PASS;
use bebop_workloads::read_once::FORMAT as READ_ONCE;
use bebop_workloads::runner::cpu_model;
use bebop_workloads::suite::Op;

const USAGE: &str = "usage: instr-report [--out DIR] [--only WORKLOAD]... \
                     [--baseline FILE | --no-baseline] [--jobs N] [--quiet]\n       \
                     instr-report --case WORKLOAD FORMAT OP";

/// The exit status of `--case` for a case the workload does not have.
const ABSENT: u8 = 3;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, workload, format, op] = args.as_slice() {
        if flag == "--case" {
            return case(workload, format, op);
        }
    }
    let mut out: Option<PathBuf> = None;
    let mut baseline: Option<PathBuf> = None;
    let mut no_baseline = false;
    let mut only = Vec::new();
    let mut quiet = false;
    let mut jobs = std::thread::available_parallelism().map_or(1, usize::from);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |what: &str| {
            args.next()
                .ok_or_else(|| format!("error: {arg} needs {what}\n{USAGE}"))
        };
        let parsed = match arg.as_str() {
            "--out" => value("a folder").map(|v| out = Some(v.into())),
            "--baseline" => value("an instructions.json").map(|v| baseline = Some(v.into())),
            "--no-baseline" => {
                no_baseline = true;
                Ok(())
            }
            "--only" => value("a workload name").map(|v| only.push(v)),
            "--jobs" => value("a number").and_then(|v| match v.parse::<usize>() {
                Ok(n @ 1..) => {
                    jobs = n;
                    Ok(())
                }
                _ => Err(format!("error: --jobs needs a number from 1 up\n{USAGE}")),
            }),
            "--quiet" => {
                quiet = true;
                Ok(())
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => Err(format!("error: unknown argument {other:?}\n{USAGE}")),
        };
        if let Err(e) = parsed {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    }
    if no_baseline && baseline.is_some() {
        eprintln!("error: --baseline and --no-baseline together\n{USAGE}");
        return ExitCode::from(2);
    }
    let out = out.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("report"));
    let baseline = match baseline {
        Some(file) => Some(file),
        None if no_baseline => None,
        None => Some(out.join("instructions.json")).filter(|f| f.is_file()),
    };
    // Read before this run overwrites it.
    let before = match baseline.as_deref().map(read_counts) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => {
            eprintln!("warning: no comparison with the previous run: {e}");
            None
        }
    };
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; the counts of interest are a release build's");
    }
    let now = match count_all(&only, jobs, quiet) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = write(&out, &now, before.as_ref()) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "{} cases counted in {:.0} s; instructions.md and instructions.json in {}",
        now.counts.len(),
        now.meta.seconds,
        out.display()
    );
    if let Some(before) = &before {
        let moved = changes(before, &now);
        let flagged: Vec<_> = moved.iter().filter(|c| c.flagged()).collect();
        println!(
            "against the previous run: {} rows of ours moved, {} by more than {:.0}% more \
             instructions",
            moved.len(),
            flagged.len(),
            THRESHOLD * 100.0
        );
        for c in flagged {
            println!("  ×{:.3}  {}", c.ratio(), c.label);
        }
    }
    ExitCode::SUCCESS
}

/// `--case`: runs one case for the parent's valgrind and prints how many operations ran.
fn case(workload: &str, format: &str, op: &str) -> ExitCode {
    match run_case(workload, format, op) {
        Ok(CaseRun::Ran(n)) => {
            println!("{n}");
            ExitCode::SUCCESS
        }
        Ok(CaseRun::Absent) => ExitCode::from(ABSENT),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_counts(file: &Path) -> Result<Counts, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))
}

fn write(dir: &Path, now: &Counts, before: Option<&Counts>) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(now).map_err(|e| e.to_string())?;
    for (name, text) in [
        ("instructions.json", json + "\n"),
        ("instructions.md", markdown(now, before)),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(())
}

/// Every case of the workloads named in `only`, `jobs` at a time.
fn count_all(only: &[String], jobs: usize, quiet: bool) -> Result<Counts, String> {
    let valgrind = Command::new("valgrind")
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run valgrind ({e}); scripts/instr-report installs it"))?;
    let valgrind = String::from_utf8_lossy(&valgrind.stdout).trim().to_owned();
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let scratch = std::env::temp_dir().join(format!("bebop-instr-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let started = Instant::now();
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());

    let mut cases = Vec::new();
    let one_pass = one_pass_workloads()?;
    for workload in workload_names(only) {
        for format in FORMATS {
            for op in OPS {
                cases.push((workload, format.name(), op.id()));
            }
        }
        if one_pass.contains(&workload) {
            cases.push((workload, ONE_PASS, Op::DecodeWalk.id()));
            cases.push((workload, READ_ONCE, Op::DecodeWalk.id()));
        }
    }
    if cases.is_empty() {
        return Err(format!("no workload matches {only:?}"));
    }
    let total = cases.len();
    let queue = Mutex::new(cases.into_iter().enumerate());
    let results = Mutex::new(Vec::new());
    let first_error = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(total) {
            s.spawn(|| {
                loop {
                    let next = queue.lock().map(|mut q| q.next()).ok().flatten();
                    let Some((i, (workload, format, op))) = next else {
                        break;
                    };
                    let file = scratch.join(format!("{i}.out"));
                    match count_one(&exe, &file, workload, format, op) {
                        Ok(Some(count)) => {
                            if !quiet {
                                eprintln!(
                                    "[{:>3}/{total}] {workload} · {format} · {op}: {:.0}",
                                    i + 1,
                                    count.per_op()
                                );
                            }
                            if let Ok(mut r) = results.lock() {
                                r.push((i, count));
                            }
                        }
                        Ok(None) => {}
                        Err(e) => {
                            if let Ok(mut slot) = first_error.lock() {
                                slot.get_or_insert(e);
                            }
                            // The others stop at their next case.
                            if let Ok(mut q) = queue.lock() {
                                q.by_ref().for_each(drop);
                            }
                        }
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut counted = results
        .into_inner()
        .map_err(|_| "a worker panicked".to_owned())?;
    counted.sort_by_key(|&(i, _)| i);
    Ok(Counts {
        meta: Meta {
            cpu: cpu_model(),
            valgrind,
            started_unix,
            seconds: started.elapsed().as_secs_f64(),
        },
        counts: counted.into_iter().map(|(_, c)| c).collect(),
    })
}

/// Runs one case under callgrind; `None` when the workload has no such case.
fn count_one(
    exe: &Path,
    file: &Path,
    workload: &str,
    format: &str,
    op: &str,
) -> Result<Option<Count>, String> {
    let what = format!("{workload} · {format} · {op}");
    let output = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", file.display()))
        .arg(format!("--toggle-collect={COLLECT}"))
        .arg(exe)
        .args(["--case", workload, format, op])
        .output()
        .map_err(|e| format!("{what}: cannot run valgrind: {e}"))?;
    if output.status.code() == Some(i32::from(ABSENT)) {
        return Ok(None);
    }
    if !output.status.success() {
        return Err(format!(
            "{what}: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let operations: u64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("{what}: the operation count printed: {e}"))?;
    let text = std::fs::read_to_string(file).map_err(|e| format!("{what}: {e}"))?;
    let instructions = parse_callgrind(&text).map_err(|e| format!("{what}: {e}"))?;
    let _ = std::fs::remove_file(file);
    if instructions == 0 {
        return Err(format!(
            "{what}: callgrind counted nothing inside {COLLECT} (were the symbols renamed?)"
        ));
    }
    Ok(Some(Count {
        workload: workload.to_owned(),
        format: format.to_owned(),
        op: op.to_owned(),
        operations,
        instructions,
    }))
}

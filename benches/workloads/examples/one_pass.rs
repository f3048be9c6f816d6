//! Times reading trees, JSON values, documents and arrays of embeddings in one pass with `Reader`
//! ([`bebop_workloads::one_pass`]) against the suite's Bebop decode + walk (a view decoded,
//! then walked) and rkyv's, in alternating batches of one run.
//!
//! A view decodes a message in an array again when the walk reaches it, and hops over that
//! message's own arrays to find where they end, so a tree's every node is read about three
//! times (docs/performance.md, "Reading a view"). Read in one pass, every node is read once.
//! The checksums are compared with the views' walks before anything is timed.
//!
//! ```text
//! cargo run --release -p bebop-workloads --example one_pass           # 3 seconds a case
//! cargo run --release -p bebop-workloads --example one_pass -- 10     # 10 seconds a case
//! valgrind --tool=callgrind --toggle-collect='bebop_workloads::one_pass::read_*' \
//!     target/release/examples/one_pass TreeDeep x1000                  # instructions
//! ```
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use bebop_workloads::data::Dataset;
use bebop_workloads::one_pass::{cases, cases_with, read_all};
use bebop_workloads::read_once::THROUGH_HANDLES;
use bebop_workloads::suite::{TimedRun, with_case};
use bebop_workloads::text::TextMode;

/// Runs each closure for about `batch` at a time, in turn, until `seconds` have passed, and
/// returns each one's fastest batch in ns per operation.
fn race(runs: &mut [&mut TimedRun<'_>], seconds: u64) -> Vec<f64> {
    let batch = Duration::from_millis(2);
    let iters: Vec<u64> = runs
        .iter_mut()
        .map(|run| {
            let mut n = 1u64;
            while run(n) < batch {
                n *= 2;
            }
            n
        })
        .collect();
    let mut best = vec![f64::INFINITY; runs.len()];
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(seconds) {
        for ((run, &n), best) in runs.iter_mut().zip(&iters).zip(&mut best) {
            let ns = run(n).as_nanos() as f64 / n as f64;
            *best = best.min(ns);
        }
    }
    best
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Each case is checked to read the checksum of its value's walk as it is built.
    let (mixed, ascii) = (Dataset::build(), Dataset::build_with(TextMode::Ascii));
    let cases = cases(&mixed, &ascii)?;
    let handles = cases_with(&mixed, &ascii, &THROUGH_HANDLES)?;

    // `WORKLOAD xN`: exactly N one-pass reads, untimed, for an instruction count.
    if let [workload, count] = args.as_slice() {
        let n: u64 = count
            .strip_prefix('x')
            .and_then(|n| n.parse().ok())
            .ok_or("usage: one_pass [SECONDS | WORKLOAD xN]")?;
        let (workload, all) = match workload.strip_suffix("+handles") {
            Some(w) => (w, &handles),
            None => (workload.as_str(), &cases),
        };
        let c = all
            .iter()
            .find(|c| c.workload == workload)
            .ok_or_else(|| format!("no workload {workload}"))?;
        for _ in 0..n {
            black_box(read_all(black_box(&c.bytes), c.read).map_err(|e| e.to_string())?);
        }
        return Ok(());
    }
    let seconds = args.first().and_then(|s| s.parse().ok()).unwrap_or(3);

    println!(
        "| workload | bebop view decode + walk, ns | bebop one pass, ns | through handles, ns \
         | rkyv decode + walk, ns | one pass / view | handles / one pass | rkyv / one pass |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (c, h) in cases.iter().zip(&handles) {
        let mut one = c.timed();
        let mut through = h.timed();
        let mut row = None;
        let found = with_case(c.workload, "bebop", "decode_walk", &mut |_, view| {
            let found = with_case(c.workload, "rkyv", "decode_walk", &mut |_, rkyv| {
                row = Some(race(
                    &mut [
                        view,
                        &mut *one as &mut TimedRun<'_>,
                        &mut *through as &mut TimedRun<'_>,
                        rkyv,
                    ],
                    seconds,
                ));
            });
            if !matches!(found, Ok(true)) {
                row = None;
            }
        })?;
        let best = row
            .filter(|_| found)
            .ok_or_else(|| format!("{}: no view or rkyv case", c.workload))?;
        let [view, one, through, rkyv] = best[..] else {
            return Err("four timings expected".into());
        };
        println!(
            "| {} | {view:.0} | {one:.0} | {through:.0} | {rkyv:.0} | ×{:.2} | ×{:.2} | ×{:.2} |",
            c.workload,
            one / view,
            through / one,
            rkyv / one
        );
    }
    Ok(())
}

//! Runs one case of the suite in a loop, for profiling: `perf record` (or `perf stat`) it and
//! read where the time goes. Prints the fastest of its one-second rounds, in ns per operation.
//!
//! ```text
//! cargo build --release -p bebop-workloads --example profile
//! perf record -g ./target/release/examples/profile ChunkedText bebop decode 5
//! ./target/release/examples/profile 'ChunkedText (ASCII)' bebop decode_walk
//! valgrind --tool=callgrind --toggle-collect='bebop_workloads::suite::timed::*' \
//!     ./target/release/examples/profile TreeDeep bebop decode_walk x1000
//! ```
//!
//! Arguments: workload (exact name, as in the report), format (`bebop`, `rkyv`, ...),
//! operation (`encode`, `decode`, `decode_walk`, `round_trip`), then seconds (default 3) or
//! `xN`: exactly N operations, untimed, so that an instruction count (callgrind's total
//! with collection only inside the timed closure, as above) divides by N. Instruction counts
//! repeat exactly from run to run, whatever else the machine is doing; times do not.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use bebop_workloads::suite::with_case;

/// Runs one case: exactly `count` operations, untimed, or else rounds of one second for
/// `seconds`, printing the fastest in ns per operation.
fn profile(name: &str, seconds: u64, count: Option<u64>, run: &mut dyn FnMut(u64) -> Duration) {
    if let Some(n) = count {
        run(n);
        println!("{name}: {n} operations");
        return;
    }
    // Iterations that take about 10 ms.
    let mut iters = 1u64;
    while run(iters) < Duration::from_millis(10) {
        iters *= 2;
    }
    let started = Instant::now();
    let mut best = f64::INFINITY;
    while started.elapsed() < Duration::from_secs(seconds) {
        let mut took = Duration::ZERO;
        let mut n = 0;
        while took < Duration::from_secs(1) {
            took += run(iters);
            n += iters;
        }
        best = best.min(took.as_nanos() as f64 / n as f64);
    }
    println!("{name}: {best:.2} ns");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, format, op, rest @ ..] = args.as_slice() else {
        eprintln!("usage: profile WORKLOAD FORMAT OPERATION [SECONDS | xCOUNT]");
        std::process::exit(2);
    };
    let seconds = rest.first().and_then(|s| s.parse().ok()).unwrap_or(3);
    let count = rest
        .first()
        .and_then(|s| s.strip_prefix('x'))
        .and_then(|n| n.parse().ok());
    let name = format!("{workload} · {format} · {op}");
    match with_case(workload, format, op, &mut |_, run| {
        profile(&name, seconds, count, run)
    }) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("no case {name}");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

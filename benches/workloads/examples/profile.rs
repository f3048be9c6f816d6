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

use bebop_workloads::data::Dataset;
use bebop_workloads::shape::Shape;
use bebop_workloads::suite::{
    CaseSink, Format, Op, Prepared, WorkloadInfo, WorkloadVisitor, for_each_ascii_workload,
    for_each_workload,
};
use bebop_workloads::text::TextMode;

struct Target {
    workload: String,
    format: String,
    op: String,
    seconds: u64,
    /// Exactly this many operations, untimed (`xN`).
    count: Option<u64>,
    found: bool,
}

impl CaseSink for Target {
    fn case(
        &mut self,
        workload: WorkloadInfo,
        format: Format,
        op: Op,
        _wire_bytes: usize,
        run: &mut dyn FnMut(u64) -> Duration,
    ) {
        if workload.name != self.workload || format.name() != self.format || op.id() != self.op {
            return;
        }
        self.found = true;
        if let Some(n) = self.count {
            run(n);
            println!(
                "{} · {} · {}: {n} operations",
                self.workload, self.format, self.op
            );
            return;
        }
        // Iterations that take about 10 ms.
        let mut iters = 1u64;
        while run(iters) < Duration::from_millis(10) {
            iters *= 2;
        }
        let started = Instant::now();
        let mut best = f64::INFINITY;
        while started.elapsed() < Duration::from_secs(self.seconds) {
            let mut took = Duration::ZERO;
            let mut n = 0;
            while took < Duration::from_secs(1) {
                took += run(iters);
                n += iters;
            }
            best = best.min(took.as_nanos() as f64 / n as f64);
        }
        println!(
            "{} · {} · {}: {best:.2} ns",
            self.workload, self.format, self.op
        );
    }
}

impl WorkloadVisitor for Target {
    fn visit<S: Shape>(&mut self, info: WorkloadInfo, value: &S) {
        if info.name != self.workload {
            return;
        }
        let arena = bumpalo::Bump::new();
        let prepared = Prepared::new(info, value, &arena).unwrap_or_else(|e| panic!("{e}"));
        prepared.verify().unwrap_or_else(|e| panic!("{e}"));
        prepared.cases(self);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, format, op, rest @ ..] = args.as_slice() else {
        eprintln!("usage: profile WORKLOAD FORMAT OPERATION [SECONDS | xCOUNT]");
        std::process::exit(2);
    };
    let mut target = Target {
        workload: workload.clone(),
        format: format.clone(),
        op: op.clone(),
        seconds: rest.first().and_then(|s| s.parse().ok()).unwrap_or(3),
        count: rest
            .first()
            .and_then(|s| s.strip_prefix('x'))
            .and_then(|n| n.parse().ok()),
        found: false,
    };
    let data = Dataset::build();
    if workload.ends_with("(ASCII)") {
        let ascii = Dataset::build_with(TextMode::Ascii);
        for_each_ascii_workload(&data, &ascii, &mut target);
    } else {
        for_each_workload(&data, &mut target);
    }
    if !target.found {
        eprintln!("no case {workload} · {format} · {op}");
        std::process::exit(1);
    }
}

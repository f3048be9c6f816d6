//! Every workload round-trips through every format, with the same builders the benchmarks use.

use bebop_workloads::data::Dataset;
use bebop_workloads::shape::Shape;
use bebop_workloads::suite::{Prepared, WorkloadInfo, WorkloadVisitor, for_each_workload};

struct Check {
    visited: usize,
    failures: Vec<String>,
}

impl WorkloadVisitor for Check {
    fn visit<S: Shape>(&mut self, info: WorkloadInfo, value: &S) {
        self.visited += 1;
        let arena = bumpalo::Bump::new();
        if let Err(e) = Prepared::new(info, value, &arena).and_then(|p| p.verify()) {
            self.failures.push(e);
        }
    }
}

#[test]
fn every_workload_round_trips_through_every_format() {
    let data = Dataset::build();
    let mut check = Check {
        visited: 0,
        failures: Vec::new(),
    };
    for_each_workload(&data, &mut check);
    assert_eq!(check.visited, 23);
    assert!(check.failures.is_empty(), "{}", check.failures.join("\n"));
}

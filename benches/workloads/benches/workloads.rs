//! Criterion benches of every workload × format × operation: the same closures the report
//! runner times (`bench-report`), under criterion's statistics. Filter as usual, e.g.
//! `cargo bench -p bebop-workloads -- PersonSmall/bebop`.
#![forbid(unsafe_code)]
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

use bebop_workloads::data::Dataset;
use bebop_workloads::shape::Shape;
use bebop_workloads::suite::{
    CaseSink, Format, Op, Prepared, WorkloadInfo, WorkloadVisitor, for_each_ascii_workload,
    for_each_workload,
};
use bebop_workloads::text::TextMode;

struct Benches<'c> {
    c: &'c mut Criterion,
}

impl CaseSink for Benches<'_> {
    fn case(
        &mut self,
        workload: WorkloadInfo,
        format: Format,
        op: Op,
        _wire_bytes: usize,
        run: &mut dyn FnMut(u64) -> Duration,
    ) {
        let id = format!("{}/{}/{}", workload.name, format.name(), op.id());
        self.c.bench_function(&id, |b| b.iter_custom(&mut *run));
    }
}

impl WorkloadVisitor for Benches<'_> {
    fn visit<S: Shape>(&mut self, info: WorkloadInfo, value: &S) {
        let arena = bumpalo::Bump::new();
        let prepared = Prepared::new(info, value, &arena).unwrap_or_else(|e| panic!("{e}"));
        prepared.verify().unwrap_or_else(|e| panic!("{e}"));
        prepared.cases(self);
    }
}

fn workloads(c: &mut Criterion) {
    let data = Dataset::build();
    let ascii = Dataset::build_with(TextMode::Ascii);
    for_each_workload(&data, &mut Benches { c });
    for_each_ascii_workload(&data, &ascii, &mut Benches { c });
}

criterion_group! {
    name = benches;
    // 828 benchmarks: short windows keep a full `cargo bench` under ten minutes on two cores.
    // The report runner (`bench-report`, about 2.5 minutes) is the faster way to measure
    // everything; these are for looking closer at a few with criterion's statistics.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(250))
        .sample_size(10);
    targets = workloads
}
criterion_main!(benches);

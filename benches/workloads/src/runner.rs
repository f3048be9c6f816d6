//! Runs the whole suite and collects [`Results`]: every workload × format × operation, the
//! wire sizes, the O(1) and bandwidth sections, and the one-pass readers against the view and
//! rkyv.

use std::time::{Duration, Instant};

use bumpalo::Bump;
use serde::Serialize;

use crate::data::Dataset;
use crate::one_pass;
use crate::paired::{PairConfig, PairSamples, PairTiming, PairedRow, measure_pair};
use crate::scaling::{self, BandwidthRow, ScalingRow};
use crate::shape::Shape;
use crate::suite::{
    CaseSink, Format, Op, Prepared, WorkloadInfo, WorkloadVisitor, for_each_ascii_workload,
    for_each_workload, is_chosen, with_case,
};
use crate::text::TextMode;
use crate::timing::{Timing, TimingConfig, measure, smoke};

/// One timed format × operation on one workload.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// Workload name.
    pub workload: &'static str,
    /// Format.
    pub format: Format,
    /// Operation.
    pub op: Op,
    /// Size of the format's encoding of the workload.
    pub wire_bytes: usize,
    /// The timing.
    pub timing: Timing,
}

/// Wire sizes of one workload in one encoding.
#[derive(Clone, Debug, Serialize)]
pub struct SizeRow {
    /// Workload name.
    pub workload: &'static str,
    /// Format (Bebop's owned form is left out: its bytes are the view's).
    pub format: Format,
    /// Encoded size.
    pub raw: usize,
    /// After zstd (level 3).
    pub zstd: usize,
    /// After LZ4 (block format, no size prefix).
    pub lz4: usize,
}

/// Facts about the run.
#[derive(Clone, Debug, Serialize)]
pub struct Meta {
    /// Quick mode: every operation ran once; the times are not measurements.
    pub quick: bool,
    /// CPU model, from `/proc/cpuinfo` when there is one.
    pub cpu: String,
    /// Logical CPUs.
    pub cpus: usize,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
    /// Wall time of the whole run, in seconds.
    pub seconds: f64,
    /// The workloads that ran (all of them unless `--only` chose some), in order; each was
    /// checked to round-trip in every format.
    pub workloads: Vec<WorkloadInfo>,
}

/// Everything a run found.
#[derive(Clone, Debug, Serialize)]
pub struct Results {
    /// Facts about the run.
    pub meta: Meta,
    /// Every workload × format × operation.
    pub cases: Vec<CaseResult>,
    /// Wire sizes.
    pub sizes: Vec<SizeRow>,
    /// Decode cost against embedding length.
    pub scaling: Vec<ScalingRow>,
    /// Bandwidth against memcpy.
    pub bandwidth: Vec<BandwidthRow>,
    /// Decode + walk against rkyv and encode against bincode and rkyv, measured in
    /// alternating pairs ([`PAIRED`]).
    pub pairs: Vec<PairedRow>,
    /// Trees, JSON values, documents and arrays of embeddings read in one pass, against the view's decode + walk
    /// and rkyv's, in alternating pairs.
    pub one_pass: Vec<OnePassRow>,
}

/// One workload read in one pass ([`crate::one_pass`]), in pairs against two rivals. Ratios
/// are the rival's time over the one pass's: above 1, the one pass is faster.
#[derive(Clone, Debug, Serialize)]
pub struct OnePassRow {
    /// Workload name.
    pub workload: &'static str,
    /// Against the Bebop view's decode + walk.
    pub view: PairTiming,
    /// Against rkyv's decode + walk.
    pub rkyv: PairTiming,
    /// The same read through the generated one-pass code ([`crate::read_once`]), against
    /// rkyv's decode + walk.
    pub generated: PairTiming,
}

/// The one-pass rows: every chosen workload's one pass in `rounds` rounds of pairs against
/// the view's decode + walk and against rkyv's. The rivals' closures come from [`with_case`],
/// which prepares the workload once for both.
fn one_pass_rows(
    options: &RunOptions,
    rounds: usize,
    mixed: &Dataset,
    ascii: &Dataset,
) -> Result<Vec<OnePassRow>, String> {
    let config = if options.quick {
        PairConfig::QUICK
    } else {
        PairConfig::FULL
    };
    let cases: Vec<(one_pass::Case, one_pass::Case)> = one_pass::cases(mixed, ascii)?
        .into_iter()
        .zip(one_pass::cases_with(
            mixed,
            ascii,
            &crate::read_once::THROUGH_HANDLES,
        )?)
        .filter(|(c, _)| is_chosen(c.workload, &options.only))
        .collect();
    let mut passes: Vec<[Vec<PairSamples>; 3]> = Vec::new();
    for (case, through) in &cases {
        let mut one = case.timed();
        let mut generated = through.timed();
        let (mut views, mut rkyvs, mut gens) = (Vec::new(), Vec::new(), Vec::new());
        let decode_walk = Op::DecodeWalk.id();
        let mut rkyv_found = Ok(false);
        let view_found = with_case(case.workload, "bebop", decode_walk, &mut |_, view| {
            rkyv_found = with_case(case.workload, "rkyv", decode_walk, &mut |_, rkyv| {
                for _ in 0..rounds {
                    views.push(measure_pair(&mut *one, view, &config));
                    rkyvs.push(measure_pair(&mut *one, rkyv, &config));
                    gens.push(measure_pair(&mut *generated, rkyv, &config));
                }
            });
        })?;
        if !(view_found && rkyv_found?) {
            return Err(format!("{}: no view or rkyv decode + walk", case.workload));
        }
        passes.push([views, rkyvs, gens]);
    }
    Ok(cases
        .iter()
        .zip(&passes)
        .map(|((case, _), [views, rkyvs, gens])| OnePassRow {
            workload: case.workload,
            view: PairTiming::of(views),
            rkyv: PairTiming::of(rkyvs),
            generated: PairTiming::of(gens),
        })
        .collect())
}

impl Results {
    /// The timing of one case.
    pub fn timing(&self, workload: &str, format: Format, op: Op) -> Option<&Timing> {
        self.cases
            .iter()
            .find(|c| c.workload == workload && c.format == format && c.op == op)
            .map(|c| &c.timing)
    }

    /// The wire sizes of one workload and format.
    pub fn size(&self, workload: &str, format: Format) -> Option<&SizeRow> {
        self.sizes
            .iter()
            .find(|s| s.workload == workload && s.format == format)
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Run every operation once, check every round trip, claim no timings.
    pub quick: bool,
    /// Timing settings for the full run.
    pub timing: TimingConfig,
    /// Only workloads whose name contains one of these (all when empty).
    pub only: Vec<String>,
    /// Print progress to stderr.
    pub progress: bool,
}

struct Collector<'o> {
    options: &'o RunOptions,
    round: usize,
    /// Every pass's timing of every case, in the order first seen.
    cases: Vec<(CaseResult, Vec<Timing>)>,
    sizes: Vec<SizeRow>,
    error: Option<String>,
    index: usize,
    visited: Vec<WorkloadInfo>,
    /// Each workload's pairs of every kind in [`PAIRED`], one entry per pass.
    pairs: Vec<(&'static str, Paired, Vec<PairSamples>)>,
}

/// An operation, our format and a peer's, measured in pairs.
type Paired = (Op, Format, Format);

/// What is measured in pairs, for every workload: decode + walk against rkyv, the fastest
/// reader among the peers, and encode against bincode and rkyv, the fastest writers (each is
/// the fastest peer's encode on some rows of the main table).
pub const PAIRED: [Paired; 3] = [
    (Op::DecodeWalk, Format::Bebop, Format::Rkyv),
    (Op::Encode, Format::Bebop, Format::Bincode),
    (Op::Encode, Format::Bebop, Format::Rkyv),
];

impl Collector<'_> {
    /// One pass's pairs of `prepared`'s workload, of every kind in [`PAIRED`].
    fn pairs<S: Shape>(&mut self, prepared: &Prepared<'_, S>) {
        let config = if self.options.quick {
            PairConfig::QUICK
        } else {
            PairConfig::FULL
        };
        let name = prepared.info.name;
        for kind in PAIRED {
            let (op, ours, peer) = kind;
            let samples = measure_pair(
                &mut *prepared.runner(ours, op),
                &mut *prepared.runner(peer, op),
                &config,
            );
            match self
                .pairs
                .iter_mut()
                .find(|(w, k, _)| *w == name && *k == kind)
            {
                Some((_, _, passes)) => passes.push(samples),
                None => self.pairs.push((name, kind, vec![samples])),
            }
        }
    }
}

impl CaseSink for Collector<'_> {
    fn case(
        &mut self,
        workload: WorkloadInfo,
        format: Format,
        op: Op,
        wire_bytes: usize,
        run: &mut dyn FnMut(u64) -> Duration,
    ) {
        let timing = if self.options.quick {
            // Twice, so that anything that only breaks on reuse of a buffer shows.
            smoke(run);
            smoke(run)
        } else {
            measure(run, &self.options.timing)
        };
        match self
            .cases
            .iter_mut()
            .find(|(c, _)| c.workload == workload.name && c.format == format && c.op == op)
        {
            Some((_, rounds)) => rounds.push(timing),
            None => self.cases.push((
                CaseResult {
                    workload: workload.name,
                    format,
                    op,
                    wire_bytes,
                    timing,
                },
                vec![timing],
            )),
        }
    }
}

fn compressed_sizes(bytes: &[u8]) -> Result<(usize, usize), String> {
    let zstd = zstd::bulk::compress(bytes, 3).map_err(|e| format!("zstd: {e}"))?;
    let lz4 = lz4_flex::block::compress(bytes);
    Ok((zstd.len(), lz4.len()))
}

impl WorkloadVisitor for Collector<'_> {
    fn visit<S: Shape>(&mut self, info: WorkloadInfo, value: &S) {
        self.index += 1;
        if self.error.is_some() || !crate::suite::is_chosen(info.name, &self.options.only) {
            return;
        }
        let started = Instant::now();
        let arena = Bump::new();
        let prepared = match Prepared::new(info, value, &arena) {
            Ok(p) => p,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        if self.round > 0 {
            prepared.cases(self);
            self.pairs(&prepared);
            if self.options.progress {
                eprintln!(
                    "[round {}] {:<18} {:.1}s",
                    self.round + 1,
                    info.name,
                    started.elapsed().as_secs_f64()
                );
            }
            return;
        }
        if let Err(e) = prepared.verify() {
            self.error = Some(e);
            return;
        }
        self.visited.push(info);
        for &format in &Format::ALL {
            // An ASCII row has the sizes of the row it repeats (byte lengths are kept).
            if format == Format::BebopOwned || crate::suite::is_ascii_row(info.name) {
                continue;
            }
            let bytes = prepared.bytes(format);
            match compressed_sizes(bytes) {
                Ok((zstd, lz4)) => self.sizes.push(SizeRow {
                    workload: info.name,
                    format,
                    raw: bytes.len(),
                    zstd,
                    lz4,
                }),
                Err(e) => {
                    self.error = Some(format!("{}: {e}", info.name));
                    return;
                }
            }
        }
        prepared.cases(self);
        self.pairs(&prepared);
        if self.options.progress {
            eprintln!(
                "[{:>2}/{}] {:<18} round-trips in every format; {} cases in {:.1}s",
                self.index,
                crate::suite::WORKLOADS.len() + crate::suite::ASCII_WORKLOADS.len(),
                info.name,
                Format::ALL.len() * Op::ALL.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
}

/// The CPU model, from `/proc/cpuinfo` when there is one (else the architecture).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

/// Combines passes that each made the same rows, row by row.
fn by_row<R: Clone>(passes: &[Vec<R>], combine: fn(&[R]) -> Option<R>) -> Vec<R> {
    let rows = passes.first().map_or(0, Vec::len);
    (0..rows)
        .filter_map(|i| {
            let same: Vec<R> = passes.iter().filter_map(|p| p.get(i).cloned()).collect();
            combine(&same)
        })
        .collect()
}

/// Runs the suite.
pub fn run(options: &RunOptions) -> Result<Results, String> {
    let started = Instant::now();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let data = Dataset::build();
    let ascii = Dataset::build_with(TextMode::Ascii);
    let mut collector = Collector {
        options,
        round: 0,
        cases: Vec::new(),
        sizes: Vec::new(),
        error: None,
        index: 0,
        visited: Vec::new(),
        pairs: Vec::new(),
    };
    for_each_workload(&data, &mut collector);
    for_each_ascii_workload(&data, &ascii, &mut collector);
    if let Some(e) = collector.error {
        return Err(e);
    }
    let rounds = if options.quick {
        1
    } else {
        options.timing.rounds.max(1)
    };
    for round in 1..rounds {
        collector.round = round;
        collector.index = 0;
        for_each_workload(&data, &mut collector);
        for_each_ascii_workload(&data, &ascii, &mut collector);
    }
    if collector.visited.is_empty() {
        return Err(format!(
            "no workload matches {:?} (workloads: {})",
            options.only,
            crate::suite::WORKLOADS
                .iter()
                .map(|w| w.name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if options.progress {
        eprintln!("O(1) decode of large scalar arrays...");
    }
    let mut scaling_passes = Vec::new();
    let mut bandwidth_passes = Vec::new();
    for _ in 0..rounds {
        scaling_passes.push(scaling::scaling(options.quick, &options.timing)?);
    }
    if options.progress {
        eprintln!("bandwidth against memcpy...");
    }
    for _ in 0..rounds {
        bandwidth_passes.push(scaling::bandwidth(options.quick, &options.timing)?);
    }
    if options.progress {
        eprintln!("reading in one pass...");
    }
    let one_pass = one_pass_rows(options, rounds, &data, &ascii)?;
    let scaling = by_row(&scaling_passes, ScalingRow::combine);
    let bandwidth = by_row(&bandwidth_passes, BandwidthRow::combine);
    Ok(Results {
        meta: Meta {
            quick: options.quick,
            cpu: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
            started_unix,
            seconds: started.elapsed().as_secs_f64(),
            workloads: collector.visited,
        },
        cases: collector
            .cases
            .into_iter()
            .map(|(case, rounds)| CaseResult {
                timing: Timing::combine(&rounds),
                ..case
            })
            .collect(),
        sizes: collector.sizes,
        scaling,
        bandwidth,
        pairs: collector
            .pairs
            .iter()
            .map(|&(workload, (op, ours, peer), ref passes)| PairedRow {
                workload,
                op,
                ours,
                peer,
                timing: PairTiming::of(passes),
            })
            .collect(),
        one_pass,
    })
}

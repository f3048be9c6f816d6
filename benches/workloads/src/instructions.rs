//! Instructions per operation, counted by callgrind: the steady figure beside the timings.
//!
//! The timed report moves with the machine. On one 2-vCPU host, before the repository's
//! builds aligned loops (docs/decisions.md D42), Bebop's and rkyv's Embedding768
//! decode + walk, whose hot loops are the same nine instructions, measured ×0.72 and ×1.38
//! against each other in alternating pairs minutes apart. An instruction count does not
//! move unless the code does, so `instr-report` counts them. It runs each
//! case (workload × format × operation) once under
//! `valgrind --tool=callgrind`, collecting only inside the suite's timed closure
//! (`bebop_workloads::suite::timed::*`), for [`operations_for`] operations, and divides.
//! Instructions are not time: a cache miss or a branch mispredicted costs no instruction,
//! and a vector instruction counts as one. Read the counts with the timed report, not
//! instead of it.
//!
//! Against the previous `instructions.json`, every row of ours that executes more than
//! [`THRESHOLD`] more instructions is flagged. The same binary repeats its counts exactly;
//! a new compiler, or a `memcpy` that glibc chose for another CPU, moves them.
//!
//! ```
//! use bebop_workloads::instructions::{parse_callgrind, operations_for};
//!
//! let out = "events: Ir\nsummary: 123400\n";
//! assert_eq!(parse_callgrind(out), Ok(123_400));
//! assert_eq!(operations_for(30), 2_000); // a small record: many operations
//! assert_eq!(operations_for(2_000_000), 10); // a large one: few
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::data::Dataset;
use crate::one_pass::{self, FORMAT as ONE_PASS};
use crate::read_once::{FORMAT as READ_ONCE, THROUGH_HANDLES};
use crate::report::{fmt_ratio, thousands, utc_date};
use crate::suite::{ASCII_WORKLOADS, Format, Op, WORKLOADS, is_chosen, with_case};
use crate::text::TextMode;

/// The formats counted: ours and the zero-copy peer the issue measures it against.
pub const FORMATS: [Format; 2] = [Format::Bebop, Format::Rkyv];

/// The operations counted, in the table's column order.
pub const OPS: [Op; 3] = [Op::Decode, Op::DecodeWalk, Op::Encode];

/// How many more instructions a row of ours may execute before it is flagged: 2%. (Counts
/// repeat exactly, so any change is a change of code; this keeps small ones unflagged.)
pub const THRESHOLD: f64 = 0.02;

/// How much a row of ours must move, either way, to be listed against the previous run:
/// 0.5%.
pub const MOVED: f64 = 0.005;

/// The symbol pattern callgrind collects inside: the suite's timed closure and what it calls.
pub const COLLECT: &str = "bebop_workloads::suite::timed::*";

/// How many operations to count for an encoding of `wire_bytes` bytes: about 4 MB of input
/// in all, from 10 up to 2,000 operations. The closure's fixed cost (two clock reads, about
/// 150 instructions) then adds at most 15 instructions per operation, and that only to the
/// largest rows, which execute millions each.
pub fn operations_for(wire_bytes: usize) -> u64 {
    (4_000_000 / (wire_bytes as u64).saturating_add(64)).clamp(10, 2_000)
}

/// The total instruction count of a callgrind output file: its `summary:` line (or, from
/// older versions, `totals:`).
pub fn parse_callgrind(text: &str) -> Result<u64, String> {
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .ok_or_else(|| "no summary line in the callgrind output".to_owned())?
        .split_whitespace()
        .next()
        .ok_or_else(|| "an empty summary line in the callgrind output".to_owned())?
        .parse()
        .map_err(|e| format!("the callgrind summary: {e}"))
}

/// One case counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Count {
    /// The workload, as the report names it.
    pub workload: String,
    /// [`Format::name`].
    pub format: String,
    /// [`Op::id`].
    pub op: String,
    /// How many operations ran.
    pub operations: u64,
    /// The instructions they executed, together.
    pub instructions: u64,
}

impl Count {
    /// Instructions per operation.
    pub fn per_op(&self) -> f64 {
        self.instructions as f64 / self.operations.max(1) as f64
    }
}

/// Where and how the counts were taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// CPU model (glibc picks its `memcpy` by CPU features, which moves the counts of
    /// copy-bound rows).
    pub cpu: String,
    /// `valgrind --version`.
    pub valgrind: String,
    /// When the run started, Unix seconds.
    pub started_unix: u64,
    /// How long it took.
    pub seconds: f64,
}

/// A run of `instr-report`: what `instructions.json` holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Where and how.
    pub meta: Meta,
    /// Every case counted, in workload, format and operation order.
    pub counts: Vec<Count>,
}

impl Counts {
    /// The instructions per operation of one case.
    pub fn per_op(&self, workload: &str, format: Format, op: Op) -> Option<f64> {
        self.counts
            .iter()
            .find(|c| c.workload == workload && c.format == format.name() && c.op == op.id())
            .map(Count::per_op)
    }

    /// The instructions per operation of reading a workload in one pass: by hand
    /// ([`ONE_PASS`]) or through the generated handles ([`READ_ONCE`]).
    pub fn one_pass_per_op(&self, workload: &str, format: &str) -> Option<f64> {
        self.counts
            .iter()
            .find(|c| c.workload == workload && c.format == format)
            .map(Count::per_op)
    }

    /// The workloads counted, in order of first appearance.
    pub fn workloads(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in &self.counts {
            if !out.contains(&c.workload.as_str()) {
                out.push(&c.workload);
            }
        }
        out
    }
}

/// Every workload name, the ASCII rows after the others, narrowed to those `only` asks for
/// ([`is_chosen`]).
pub fn workload_names(only: &[String]) -> Vec<&'static str> {
    WORKLOADS
        .iter()
        .chain(ASCII_WORKLOADS.iter())
        .map(|w| w.name)
        .filter(|name| is_chosen(name, only))
        .collect()
}

/// What [`run_case`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseRun {
    /// Ran this many operations.
    Ran(u64),
    /// The workload has no such case: an ASCII row whose text drew no multi-byte
    /// character has no second row, and an unknown name or format has none either.
    Absent,
}

/// Runs the case `workload` · `format` · `op` ([`with_case`]) [`operations_for`] its wire
/// size times, inside the timed closure that callgrind counts.
pub fn run_case(workload: &str, format: &str, op: &str) -> Result<CaseRun, String> {
    if format == ONE_PASS || format == READ_ONCE {
        return run_one_pass(workload, format, op);
    }
    let mut ran = CaseRun::Absent;
    with_case(workload, format, op, &mut |wire_bytes, run| {
        let n = operations_for(wire_bytes);
        run(n);
        ran = CaseRun::Ran(n);
    })?;
    Ok(ran)
}

/// [`run_case`] for a one-pass reader, by hand ([`ONE_PASS`]) or through the generated
/// handles ([`READ_ONCE`]), whose one operation is `decode_walk`.
fn run_one_pass(workload: &str, format: &str, op: &str) -> Result<CaseRun, String> {
    if op != Op::DecodeWalk.id() {
        return Ok(CaseRun::Absent);
    }
    let readers = if format == READ_ONCE {
        &THROUGH_HANDLES
    } else {
        &one_pass::BY_HAND
    };
    let (mixed, ascii) = (Dataset::build(), Dataset::build_with(TextMode::Ascii));
    let cases = one_pass::cases_with(&mixed, &ascii, readers)?;
    let Some(case) = cases.iter().find(|c| c.workload == workload) else {
        return Ok(CaseRun::Absent);
    };
    let n = operations_for(case.bytes.len());
    case.timed()(n);
    Ok(CaseRun::Ran(n))
}

/// The workloads that have a one-pass reader ([`one_pass::cases`]), ASCII rows included.
pub fn one_pass_workloads() -> Result<Vec<&'static str>, String> {
    let cases = one_pass::cases(&Dataset::build(), &Dataset::build_with(TextMode::Ascii))?;
    Ok(cases.iter().map(|c| c.workload).collect())
}

/// A row of ours whose count moved since the previous run.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `workload · format · op`.
    pub label: String,
    /// Instructions per operation before.
    pub before: f64,
    /// And now.
    pub now: f64,
}

impl Change {
    /// Now over before: above 1, more instructions now.
    pub fn ratio(&self) -> f64 {
        self.now / self.before
    }

    /// More than [`THRESHOLD`] more instructions.
    pub fn flagged(&self) -> bool {
        self.ratio() > 1.0 + THRESHOLD
    }
}

/// The rows of ours (Bebop's) present in both runs whose count moved by more than
/// [`MOVED`], either way, in `now`'s order.
pub fn changes(before: &Counts, now: &Counts) -> Vec<Change> {
    let earlier: BTreeMap<(&str, &str, &str), f64> = before
        .counts
        .iter()
        .map(|c| {
            (
                (c.workload.as_str(), c.format.as_str(), c.op.as_str()),
                c.per_op(),
            )
        })
        .collect();
    now.counts
        .iter()
        .filter(|c| [Format::Bebop.name(), ONE_PASS, READ_ONCE].contains(&c.format.as_str()))
        .filter_map(|c| {
            let before = *earlier.get(&(c.workload.as_str(), c.format.as_str(), c.op.as_str()))?;
            let now = c.per_op();
            let moved = before > 0.0 && ((now / before) - 1.0).abs() > MOVED;
            moved.then(|| Change {
                label: format!("{} · {} · {}", c.workload, c.format, c.op),
                before,
                now,
            })
        })
        .collect()
}

fn cell(per_op: Option<f64>) -> String {
    per_op.map_or_else(|| "–".to_owned(), |n| thousands(n.round() as u64))
}

/// `instructions.md`: the counts, Bebop against rkyv, and against the previous run.
pub fn markdown(now: &Counts, before: Option<&Counts>) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Instructions per operation\n");
    let _ = writeln!(
        md,
        "Counted by callgrind (`scripts/instr-report`; {}, on {}, {}, {:.0} s). Each case ran \
         alone under `valgrind --tool=callgrind`, collecting only inside the suite's timed \
         closure, for 10 to 2,000 operations (about 4 MB of input), and each figure is its \
         total divided by the operations. These counts repeat exactly from run to run of one \
         build, where the timed report (`report.md`) moves with the machine. They are not \
         time: a cache miss costs no instruction and a vector instruction counts once. Both \
         formats are compiled into one binary, so a change to our crates can move rkyv's \
         counts too, through what the compiler inlines: compare commits by our rows, as the \
         check below does. `×r` is rkyv's count over ours (above 1, Bebop executes fewer).\n",
        now.meta.valgrind,
        now.meta.cpu,
        utc_date(now.meta.started_unix),
        now.meta.seconds,
    );
    let workloads = now.workloads();
    let _ = writeln!(
        md,
        "| workload | decode, bebop | rkyv | | decode + walk, bebop | rkyv | | encode, bebop | rkyv | |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut fewer = [0usize; 3];
    let mut both = [0usize; 3];
    for w in &workloads {
        let _ = write!(md, "| {w} |");
        for (i, op) in OPS.into_iter().enumerate() {
            let ours = now.per_op(w, Format::Bebop, op);
            let peer = now.per_op(w, Format::Rkyv, op);
            let ratio = match (ours, peer) {
                (Some(o), Some(p)) if o > 0.0 => {
                    both[i] += 1;
                    if o <= p {
                        fewer[i] += 1;
                    }
                    fmt_ratio(p / o)
                }
                _ => String::new(),
            };
            let _ = write!(md, " {} | {} | {ratio} |", cell(ours), cell(peer));
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "\nBebop executes at most as many instructions as rkyv in decode on {} of {} \
         workloads, in decode + walk on {} of {}, in encode on {} of {}.",
        fewer[0], both[0], fewer[1], both[1], fewer[2], both[2]
    );
    let one_pass: Vec<(&str, f64)> = workloads
        .iter()
        .filter_map(|w| Some((*w, now.one_pass_per_op(w, ONE_PASS)?)))
        .collect();
    if !one_pass.is_empty() {
        let _ = writeln!(
            md,
            "\n## Reading in one pass\n\nTrees, JSON values, documents and arrays of embeddings read in one pass \
             with `Reader` (`src/one_pass.rs`, `{ONE_PASS}`) and through the generated \
             one-pass code (`src/read_once.rs`, `{READ_ONCE}`), against the view's decode + \
             walk and rkyv's; each `×r` is the rival's count over the one pass's by hand \
             (above 1, the one pass executes fewer).\n\n\
             | workload | one pass | generated | | view decode + walk | | rkyv decode + walk | |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|"
        );
        for (w, ours) in one_pass {
            let ratio = |rival: Option<f64>| rival.map_or(String::new(), |r| fmt_ratio(r / ours));
            let view = now.per_op(w, Format::Bebop, Op::DecodeWalk);
            let rkyv = now.per_op(w, Format::Rkyv, Op::DecodeWalk);
            let generated = now.one_pass_per_op(w, READ_ONCE);
            let _ = writeln!(
                md,
                "| {w} | {} | {} | {} | {} | {} | {} | {} |",
                cell(Some(ours)),
                cell(generated),
                ratio(generated),
                cell(view),
                ratio(view),
                cell(rkyv),
                ratio(rkyv)
            );
        }
    }
    if let Some(before) = before {
        let moved = changes(before, now);
        let flagged = moved.iter().filter(|c| c.flagged()).count();
        let _ = writeln!(
            md,
            "\n## Against the previous run\n\nThe previous counts: {}, on {}, {}. Rows of ours \
             whose count moved by more than {}%; ⚑ marks more than {:.0}% more \
             instructions ({flagged} of them).\n",
            before.meta.valgrind,
            before.meta.cpu,
            utc_date(before.meta.started_unix),
            MOVED * 100.0,
            THRESHOLD * 100.0,
        );
        if moved.is_empty() {
            let _ = writeln!(md, "No row of ours moved.");
        } else {
            let _ = writeln!(md, "| row | before | now | change |");
            let _ = writeln!(md, "|---|---:|---:|---:|");
            for c in &moved {
                let _ = writeln!(
                    md,
                    "| {}{} | {} | {} | {:+.1}% |",
                    if c.flagged() { "⚑ " } else { "" },
                    c.label,
                    thousands(c.before.round() as u64),
                    thousands(c.now.round() as u64),
                    (c.ratio() - 1.0) * 100.0
                );
            }
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(rows: &[(&str, Format, Op, u64)]) -> Counts {
        Counts {
            meta: Meta {
                cpu: "Test CPU".into(),
                valgrind: "valgrind-3.19.0".into(),
                started_unix: 1_800_000_000,
                seconds: 12.0,
            },
            counts: rows
                .iter()
                .map(|&(w, f, op, per_op)| Count {
                    workload: w.into(),
                    format: f.name().into(),
                    op: op.id().into(),
                    operations: 100,
                    instructions: per_op * 100,
                })
                .collect(),
        }
    }

    #[test]
    fn the_summary_line_is_read_and_a_missing_one_is_an_error() {
        let out = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\n\nsummary: 9876543\n";
        assert_eq!(parse_callgrind(out), Ok(9_876_543));
        assert_eq!(parse_callgrind("events: Ir\ntotals: 42\n"), Ok(42));
        assert!(parse_callgrind("events: Ir\n").is_err());
        assert!(parse_callgrind("summary:\n").is_err());
        assert!(parse_callgrind("summary: many\n").is_err());
    }

    #[test]
    fn operations_shrink_with_the_record_within_bounds() {
        assert_eq!(operations_for(0), 2_000);
        assert_eq!(operations_for(10_000), 397);
        assert_eq!(operations_for(usize::MAX), 10);
        let mut last = u64::MAX;
        for bytes in [0, 100, 1_000, 10_000, 100_000, 1_000_000] {
            let n = operations_for(bytes);
            assert!(n <= last && (10..=2_000).contains(&n));
            last = n;
        }
    }

    #[test]
    fn only_moved_rows_of_ours_are_listed_and_big_rises_flagged() {
        let before = counts(&[
            ("TreeDeep", Format::Bebop, Op::Decode, 1_000),
            ("TreeDeep", Format::Bebop, Op::Encode, 1_000),
            ("TreeDeep", Format::Bebop, Op::DecodeWalk, 1_000),
            ("TreeDeep", Format::Rkyv, Op::Decode, 1_000),
            ("Gone", Format::Bebop, Op::Decode, 1_000),
        ]);
        let now = counts(&[
            ("TreeDeep", Format::Bebop, Op::Decode, 1_030),
            ("TreeDeep", Format::Bebop, Op::Encode, 1_004),
            ("TreeDeep", Format::Bebop, Op::DecodeWalk, 900),
            ("TreeDeep", Format::Rkyv, Op::Decode, 2_000),
            ("New", Format::Bebop, Op::Decode, 1_000),
        ]);
        let moved = changes(&before, &now);
        let labels: Vec<_> = moved
            .iter()
            .map(|c| (c.label.as_str(), c.flagged()))
            .collect();
        assert_eq!(
            labels,
            [
                ("TreeDeep · bebop · decode", true),
                ("TreeDeep · bebop · decode_walk", false)
            ]
        );
        let md = markdown(&now, Some(&before));
        assert!(
            md.contains("| ⚑ TreeDeep · bebop · decode | 1,000 | 1,030 | +3.0% |"),
            "{md}"
        );
        assert!(md.contains("(1 of them)"), "{md}");
    }

    #[test]
    fn the_table_puts_rkyv_beside_ours_and_counts_where_we_execute_fewer() {
        let now = counts(&[
            ("PersonSmall", Format::Bebop, Op::Decode, 40),
            ("PersonSmall", Format::Rkyv, Op::Decode, 80),
            ("PersonSmall", Format::Bebop, Op::DecodeWalk, 100),
            ("PersonSmall", Format::Rkyv, Op::DecodeWalk, 100),
            ("PersonSmall", Format::Bebop, Op::Encode, 60),
            ("PersonSmall", Format::Rkyv, Op::Encode, 30),
            ("TreeDeep", Format::Bebop, Op::DecodeWalk, 2_000),
            ("TreeDeep", Format::Rkyv, Op::DecodeWalk, 1_000),
        ]);
        let md = markdown(&now, None);
        assert!(
            md.contains("| PersonSmall | 40 | 80 | ×2.00 | 100 | 100 | ×1.00 | 60 | 30 | ×0.50 |"),
            "{md}"
        );
        assert!(
            md.contains("| TreeDeep | – | – |  | 2,000 | 1,000 | ×0.50 | – | – |  |"),
            "{md}"
        );
        assert!(
            md.contains(
                "in decode on 1 of 1 workloads, in decode + walk on 1 of 2, in encode on 0 of 1."
            ),
            "{md}"
        );
        assert!(!md.contains("Against the previous run"));
    }

    #[test]
    fn counts_survive_json() {
        let now = counts(&[("PersonSmall", Format::Bebop, Op::Decode, 40)]);
        let text = serde_json::to_string(&now).unwrap_or_default();
        let back: Counts = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(back, now);
        assert_eq!(
            back.per_op("PersonSmall", Format::Bebop, Op::Decode),
            Some(40.0)
        );
        assert_eq!(back.per_op("PersonSmall", Format::Rkyv, Op::Decode), None);
    }

    #[test]
    fn names_narrow_to_those_asked_for() {
        assert_eq!(
            workload_names(&[]).len(),
            WORKLOADS.len() + ASCII_WORKLOADS.len()
        );
        assert_eq!(
            workload_names(&["TreeDeep".into(), "JsonSmall".into()]),
            ["TreeDeep", "JsonSmall", "JsonSmall (ASCII)"]
        );
    }

    #[test]
    fn a_case_runs_natively_and_an_absent_one_says_so() {
        // PersonSmall's encoding is far below the 1,936 bytes where the count starts to
        // shrink.
        assert_eq!(
            run_case("PersonSmall", "bebop", "decode"),
            Ok(CaseRun::Ran(2_000))
        );
        assert_eq!(
            run_case("PersonSmall", "bebop", "no-such-op"),
            Ok(CaseRun::Absent)
        );
        assert_eq!(
            run_case("NoSuchWorkload", "bebop", "decode"),
            Ok(CaseRun::Absent)
        );
    }
}

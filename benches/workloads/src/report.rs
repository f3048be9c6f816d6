//! Writing [`Results`] out: `results.json`, `report.md` with tables, and SVG charts.

use std::fmt::Write as _;
use std::path::Path;

use crate::compare::Comparison;
use crate::paired::{PairTiming, PairedRow};
use crate::plot::{self, PALETTE, Series};
use crate::runner::Results;
use crate::scaling::BandwidthRow;
use crate::suite::{Format, Op, WORKLOADS, ascii_row_of};
use crate::timing::Timing;

/// The paper's published decode latencies (C runtimes on an Apple M3 Ultra, Table "Decode
/// latency comparison"), in ns: Bebop C, protobuf-c, msgpack-c. For context only: another
/// machine, another language, and the reference decode loop never resets its arena.
pub const PAPER_DECODE_NS: [(&str, f64, f64, f64); 19] = [
    ("Embedding768", 2.91, 98.34, 62.93),
    ("Embedding1536", 2.80, 111.12, 63.07),
    ("EmbeddingBatch", 25.75, 1140.0, 270.96),
    ("TensorShardLarge", 6.86, 1460.0, 107.90),
    ("InferenceResponse", 17.65, 646.69, 231.95),
    ("LLMChunkLarge", 677.15, 14_720.0, 5280.0),
    ("ChunkedText", 3160.0, 50_760.0, 13_590.0),
    ("EventSmall", 5.94, 104.41, 84.44),
    ("EventLarge", 6.02, 175.20, 85.23),
    ("PersonSmall", 4.10, 78.40, 72.45),
    ("PersonMedium", 4.21, 85.68, 78.08),
    ("OrderSmall", 6.14, 112.10, 112.55),
    ("OrderLarge", 5.85, 557.82, 757.16),
    ("DocumentSmall", 4.89, 71.78, 65.54),
    ("DocumentLarge", 52.0, 862.73, 105.80),
    ("TreeDeep", 5260.0, 55_000.0, 23_210.0),
    ("TreeWide", 451.0, 4080.0, 1950.0),
    ("JsonSmall", 40.10, 521.75, 66.16),
    ("JsonLarge", 1090.0, 13_770.0, 830.15),
];

/// Nanoseconds for a table cell: two significant decimals below 10, none from 100 up, with
/// thousands separators.
pub fn fmt_ns(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.2}")
    } else if ns < 100.0 {
        format!("{ns:.1}")
    } else {
        thousands(ns.round() as u64)
    }
}

/// An integer with `,` between thousands.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A ratio `peer / ours` as `×r`.
pub fn fmt_ratio(ratio: f64) -> String {
    if ratio >= 100.0 {
        format!("×{ratio:.0}")
    } else if ratio >= 10.0 {
        format!("×{ratio:.1}")
    } else {
        format!("×{ratio:.2}")
    }
}

fn gbps(bytes_per_sec: f64) -> String {
    format!("{:.2}", bytes_per_sec / 1e9)
}

fn cell(t: Option<&Timing>, base: Option<&Timing>) -> String {
    match (t, base) {
        (Some(t), Some(b)) if b.min_ns > 0.0 => {
            format!("{} ({})", fmt_ns(t.min_ns), fmt_ratio(t.min_ns / b.min_ns))
        }
        (Some(t), _) => fmt_ns(t.min_ns),
        (None, _) => "–".into(),
    }
}

/// The workloads with results, each followed by its pure-ASCII row when there is one.
fn workloads(results: &Results) -> Vec<&'static str> {
    WORKLOADS
        .iter()
        .flat_map(|w| [Some(w.name), ascii_row_of(w.name)])
        .flatten()
        .filter(|w| results.cases.iter().any(|c| c.workload == *w))
        .collect()
}

fn header(out: &mut String, first: &str, columns: &[String]) {
    let _ = writeln!(out, "| {first} | {} |", columns.join(" | "));
    let _ = writeln!(
        out,
        "|---|{}|",
        columns.iter().map(|_| "---:").collect::<Vec<_>>().join("|")
    );
}

/// A table of one operation: every format's time and its ratio to Bebop's.
pub fn op_table(results: &Results, op: Op, base_op: Op) -> String {
    let mut out = String::new();
    let columns: Vec<String> = Format::ALL.iter().map(|f| f.name().to_owned()).collect();
    header(&mut out, "workload", &columns);
    for w in workloads(results) {
        let base = results.timing(w, Format::Bebop, base_op);
        let cells: Vec<String> = Format::ALL
            .iter()
            .map(|&f| {
                let t = results.timing(w, f, op);
                if f == Format::Bebop && op == base_op {
                    t.map_or("–".into(), |t| fmt_ns(t.min_ns))
                } else {
                    cell(t, base)
                }
            })
            .collect();
        let _ = writeln!(out, "| {w} | {} |", cells.join(" | "));
    }
    out
}

/// The summary: our encode, decode and decode+walk, and every other format's decode+walk with
/// its ratio to ours.
pub fn summary_table(results: &Results) -> String {
    let mut out = String::new();
    let mut columns = vec![
        "bebop encode".to_owned(),
        "bebop decode".to_owned(),
        "bebop decode+walk".to_owned(),
    ];
    columns.extend(
        Format::ALL[1..]
            .iter()
            .map(|f| format!("{} decode+walk", f.name())),
    );
    header(&mut out, "workload", &columns);
    for w in workloads(results) {
        let ns = |f, op| {
            results
                .timing(w, f, op)
                .map_or("–".into(), |t: &Timing| fmt_ns(t.min_ns))
        };
        let base = results.timing(w, Format::Bebop, Op::DecodeWalk);
        let mut cells = vec![
            ns(Format::Bebop, Op::Encode),
            ns(Format::Bebop, Op::Decode),
            ns(Format::Bebop, Op::DecodeWalk),
        ];
        cells.extend(
            Format::ALL[1..]
                .iter()
                .map(|&f| cell(results.timing(w, f, Op::DecodeWalk), base)),
        );
        let _ = writeln!(out, "| {w} | {} |", cells.join(" | "));
    }
    out
}

/// The pairs of one operation against one peer, in the order they were measured.
fn paired(results: &Results, op: Op, peer: Format) -> Vec<&PairedRow> {
    results
        .pairs
        .iter()
        .filter(|r| r.op == op && r.peer == peer)
        .collect()
}

/// Decode + walk against rkyv in alternating pairs ([`crate::paired`]): per workload the
/// median ratio and the middle half of the pairs' ratios.
pub fn pairs_table(results: &Results) -> String {
    let mut out = String::new();
    let rows = paired(results, Op::DecodeWalk, Format::Rkyv);
    let Some(first) = rows.first() else {
        return out;
    };
    let pairs = first.timing.pairs;
    let at_least = rows.iter().filter(|r| r.timing.median >= 1.0).count();
    let _ = writeln!(
        out,
        "The ratios above divide figures taken apart in time. Here one batch of each (about \
         1 ms) runs after the other, in alternating order, {pairs} times per workload (spread \
         over the passes), and each ratio is the median over those pairs: a slow phase of the \
         machine slows both sides of a pair. `×r` is rkyv's time over ours (above 1, Bebop is \
         faster); the middle half of the pairs lies between the two bounds shown. Bebop is at \
         least as fast on {at_least} of {} workloads. Pairs cancel slow phases, not where the \
         linker put each format's hot loops: the repository's x86-64 builds align loops to 64 \
         bytes (`.cargo/config.toml`), without which Embedding768, whose hot loop is the same \
         nine instructions in both formats, measured ×0.70 here (docs/decisions.md D42). The \
         instruction counts in [instructions.md](instructions.md) (`scripts/instr-report`) \
         repeat exactly.\n",
        rows.len()
    );
    let columns = [
        "rkyv / bebop".to_owned(),
        "middle half".to_owned(),
        "bebop, ns".to_owned(),
        "rkyv, ns".to_owned(),
    ];
    header(&mut out, "workload (decode + walk)", &columns);
    for w in workloads(results) {
        let Some(row) = rows.iter().find(|r| r.workload == w) else {
            continue;
        };
        let t = &row.timing;
        let _ = writeln!(
            out,
            "| {w} | {} | {:.2}-{:.2} | {} | {} |",
            fmt_ratio(t.median),
            t.p25,
            t.p75,
            fmt_ns(t.ours_ns),
            fmt_ns(t.peer_ns)
        );
    }
    out
}

/// Encode against bincode and rkyv, the fastest writers among the peers, in alternating
/// pairs ([`crate::paired`]): per workload each median ratio, the middle half of its pairs'
/// ratios, and the three median times.
pub fn encode_pairs_table(results: &Results) -> String {
    let mut out = String::new();
    let bincode = paired(results, Op::Encode, Format::Bincode);
    let rkyv = paired(results, Op::Encode, Format::Rkyv);
    let Some(first) = bincode.first() else {
        return out;
    };
    let rows: Vec<(&str, &PairTiming, &PairTiming)> = workloads(results)
        .into_iter()
        .filter_map(|w| {
            let b = bincode.iter().find(|r| r.workload == w)?;
            let r = rkyv.iter().find(|r| r.workload == w)?;
            Some((w, &b.timing, &r.timing))
        })
        .collect();
    let ahead = |pick: fn(&(&str, &PairTiming, &PairTiming)) -> bool| {
        rows.iter().filter(|row| pick(row)).count()
    };
    let _ = writeln!(
        out,
        "Bebop's encode (a view into a caller's buffer) in pairs as above, {} times per \
         workload, against bincode and rkyv, whose encodes are the fastest of the peers in the \
         main table (bincode's into a caller's buffer too, rkyv's into a reused aligned \
         buffer). Encode times move with where the linker puts each format's code: \
         bincode's encode of trees and JSON has changed by 15-20% between builds with no \
         change to it. Bebop is at least as fast as bincode on {} of {} workloads, as rkyv on \
         {}, and as both on {}.\n",
        first.timing.pairs,
        ahead(|(_, b, _)| b.median >= 1.0),
        rows.len(),
        ahead(|(_, _, r)| r.median >= 1.0),
        ahead(|(_, b, r)| b.median >= 1.0 && r.median >= 1.0),
    );
    let columns = [
        "bincode / bebop".to_owned(),
        "middle half".to_owned(),
        "rkyv / bebop".to_owned(),
        "middle half".to_owned(),
        "bebop, ns".to_owned(),
        "bincode, ns".to_owned(),
        "rkyv, ns".to_owned(),
    ];
    header(&mut out, "workload (encode)", &columns);
    for (w, b, r) in rows {
        let _ = writeln!(
            out,
            "| {w} | {} | {:.2}-{:.2} | {} | {:.2}-{:.2} | {} | {} | {} |",
            fmt_ratio(b.median),
            b.p25,
            b.p75,
            fmt_ratio(r.median),
            r.p25,
            r.p75,
            fmt_ns(b.ours_ns),
            fmt_ns(b.peer_ns),
            fmt_ns(r.peer_ns)
        );
    }
    out
}

/// Trees, JSON values, documents and arrays of embeddings read in one pass, against the view's decode + walk and
/// rkyv's, in alternating pairs ([`crate::one_pass`]).
pub fn one_pass_table(results: &Results) -> String {
    let mut out = String::new();
    let Some(first) = results.one_pass.first() else {
        return out;
    };
    let ahead = results
        .one_pass
        .iter()
        .filter(|r| r.rkyv.median >= 1.0)
        .count();
    let generated_ahead = results
        .one_pass
        .iter()
        .filter(|r| r.generated.median >= 1.0)
        .count();
    let _ = writeln!(
        out,
        "A view decodes a message in an array again when a walk reaches it, so walking a tree \
         or a JSON value reads every node about three times (docs/performance.md), and a \
         struct in an array twice (EmbeddingBatch, InferenceResponse). Read in \
         one pass with `Reader` (`src/one_pass.rs`: the same checks as the generated \
         decoders, the same checksum as the walk, held to both by `tests/one_pass.rs`), \
         every node is read once. Each ratio is the rival's time over the one pass's, the \
         median of {} alternating pairs of batches of about 1 ms (above 1, the one pass is faster). The one \
         pass is at least as fast as rkyv's decode + walk on {ahead} of {}. The generated \
         one-pass code (`one_pass` option; `src/read_once.rs` reads through it, held to the \
         views by the same tests) is timed in pairs against rkyv too: at least as fast on \
         {generated_ahead} of {}.\n",
        first.view.pairs,
        results.one_pass.len(),
        results.one_pass.len()
    );
    let columns = [
        "one pass, ns".to_owned(),
        "view decode + walk, ns".to_owned(),
        "view / one pass".to_owned(),
        "rkyv decode + walk, ns".to_owned(),
        "rkyv / one pass".to_owned(),
        "middle half".to_owned(),
        "generated, ns".to_owned(),
        "rkyv / generated".to_owned(),
    ];
    header(&mut out, "workload", &columns);
    for w in workloads(results) {
        let Some(row) = results.one_pass.iter().find(|r| r.workload == w) else {
            continue;
        };
        let _ = writeln!(
            out,
            "| {w} | {} | {} | {} | {} | {} | {:.2}-{:.2} | {} | {} |",
            fmt_ns(row.rkyv.ours_ns),
            fmt_ns(row.view.peer_ns),
            fmt_ratio(row.view.median),
            fmt_ns(row.rkyv.peer_ns),
            fmt_ratio(row.rkyv.median),
            row.rkyv.p25,
            row.rkyv.p75,
            fmt_ns(row.generated.ours_ns),
            fmt_ratio(row.generated.median)
        );
    }
    out
}

fn sizes_table(results: &Results, pick: fn(&crate::runner::SizeRow) -> usize) -> String {
    let mut out = String::new();
    let formats: Vec<Format> = Format::ALL
        .iter()
        .copied()
        .filter(|&f| f != Format::BebopOwned)
        .collect();
    let columns: Vec<String> = formats.iter().map(|f| f.wire().to_owned()).collect();
    header(&mut out, "workload", &columns);
    for w in workloads(results) {
        let cells: Vec<String> = formats
            .iter()
            .map(|&f| {
                results
                    .size(w, f)
                    .map_or("–".into(), |s| thousands(pick(s) as u64))
            })
            .collect();
        let _ = writeln!(out, "| {w} | {} |", cells.join(" | "));
    }
    out
}

fn paper_table(results: &Results) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "workload",
        &[
            "bebop (Rust, this run)".into(),
            "prost (this run)".into(),
            "rmp-serde (this run)".into(),
            "Bebop C (paper)".into(),
            "protobuf-c (paper)".into(),
            "msgpack-c (paper)".into(),
        ],
    );
    for (w, c, pbc, mpc) in PAPER_DECODE_NS {
        let ns = |f| {
            results
                .timing(w, f, Op::Decode)
                .map_or("–".into(), |t| fmt_ns(t.min_ns))
        };
        let _ = writeln!(
            out,
            "| {w} | {} | {} | {} | {} | {} | {} |",
            ns(Format::Bebop),
            ns(Format::Prost),
            ns(Format::MsgPack),
            fmt_ns(c),
            fmt_ns(pbc),
            fmt_ns(mpc)
        );
    }
    out
}

fn bandwidth_table(rows: &[BandwidthRow]) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "record",
        &[
            "wire bytes".into(),
            "memcpy GB/s".into(),
            "decode + read every element (`iter`) GB/s (% memcpy)".into(),
            "decode + read every element (`wire_bytes`) GB/s (% memcpy)".into(),
            "decode + copy_to_slice GB/s (% memcpy)".into(),
            "decode + to_f32_slice GB/s (% memcpy)".into(),
            "encode (view → buffer) GB/s (% memcpy)".into(),
            "owned decode GB/s (% memcpy)".into(),
            "decode alone, ns".into(),
        ],
    );
    for r in rows {
        let pct = |t: &Timing| {
            format!(
                "{} ({:.0}%)",
                gbps(r.bytes_per_sec(t)),
                r.percent_of_memcpy(t)
            )
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            size_label(r.payload_bytes),
            thousands(r.wire_bytes as u64),
            gbps(r.bytes_per_sec(&r.memcpy)),
            pct(&r.decode_read),
            pct(&r.decode_read_wire),
            pct(&r.decode_copy_out),
            pct(&r.decode_to_f32),
            pct(&r.encode),
            pct(&r.owned_decode),
            fmt_ns(r.decode.min_ns)
        );
    }
    out
}

fn scaling_table(results: &Results) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "bfloat16 elements",
        &[
            "wire bytes".into(),
            "bebop decode".into(),
            "bebop decode + read every element".into(),
            "bebop-owned decode".into(),
            "prost decode".into(),
            "rkyv access".into(),
        ],
    );
    for r in &results.scaling {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            thousands(r.dim as u64),
            thousands(r.wire_bytes as u64),
            fmt_ns(r.bebop_decode.min_ns),
            fmt_ns(r.bebop_decode_walk.min_ns),
            fmt_ns(r.bebop_owned_decode.min_ns),
            fmt_ns(r.prost_decode.min_ns),
            fmt_ns(r.rkyv_access.min_ns)
        );
    }
    out
}

/// The embeddings of the O(1) table widened to `f32` and narrowed back.
fn float16_table(results: &Results) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "bfloat16 elements",
        &[
            "bebop decode + `to_f32_slice`".into(),
            "rkyv access + `to_f32` per element".into(),
            "bebop-owned decode + `half` `convert_to_f32_slice`".into(),
            "`bf16_from_f32_slice`".into(),
            "`half` `convert_from_f32_slice`".into(),
        ],
    );
    for r in &results.scaling {
        let ratio = |peer: &Timing, ours: &Timing| {
            format!(
                "{} ({})",
                fmt_ns(peer.min_ns),
                fmt_ratio(peer.min_ns / ours.min_ns)
            )
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            thousands(r.dim as u64),
            fmt_ns(r.bebop_decode_to_f32.min_ns),
            ratio(&r.rkyv_access_to_f32, &r.bebop_decode_to_f32),
            ratio(&r.bebop_owned_decode_to_f32, &r.bebop_decode_to_f32),
            fmt_ns(r.bebop_from_f32.min_ns),
            ratio(&r.half_from_f32, &r.bebop_from_f32)
        );
    }
    out
}

fn op_chart(results: &Results, op: Op, title: &str) -> String {
    let names = workloads(results);
    let series: Vec<Series<'_>> = Format::ALL
        .iter()
        .enumerate()
        .map(|(i, &f)| Series {
            label: f.name(),
            color: PALETTE[i % PALETTE.len()],
            values: names
                .iter()
                .map(|w| results.timing(w, f, op).map(|t| t.min_ns))
                .collect(),
        })
        .collect();
    plot::grouped_bars(title, "ns per operation", &names, &series)
}

fn size_chart(results: &Results) -> String {
    let names = workloads(results);
    let series: Vec<Series<'_>> = Format::ALL
        .iter()
        .filter(|&&f| f != Format::BebopOwned)
        .enumerate()
        .map(|(i, &f)| Series {
            label: f.wire(),
            color: PALETTE[i % PALETTE.len()],
            values: names
                .iter()
                .map(|w| results.size(w, f).map(|s| s.raw as f64))
                .collect(),
        })
        .collect();
    plot::grouped_bars("Wire size", "bytes", &names, &series)
}

fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

fn bandwidth_chart(rows: &[BandwidthRow]) -> String {
    let xs: Vec<(f64, String)> = rows
        .iter()
        .map(|r| (r.wire_bytes as f64, size_label(r.payload_bytes)))
        .collect();
    let line = |label, color, pick: fn(&BandwidthRow) -> &Timing| Series {
        label,
        color,
        values: rows
            .iter()
            .map(|r| Some(r.bytes_per_sec(pick(r)) / 1e9))
            .collect(),
    };
    let series = [
        line("memcpy", PALETTE[7], |r| &r.memcpy),
        line("decode + read all (iter)", PALETTE[0], |r| &r.decode_read),
        line("decode + read all (wire_bytes)", PALETTE[5], |r| {
            &r.decode_read_wire
        }),
        line("decode + copy_to_slice", PALETTE[1], |r| &r.decode_copy_out),
        line("encode", PALETTE[2], |r| &r.encode),
        line("owned decode", PALETTE[3], |r| &r.owned_decode),
    ];
    plot::lines(
        "TensorShard bandwidth against memcpy",
        "bfloat16 payload of the record",
        "GB/s",
        &xs,
        &series,
    )
}

fn scaling_chart(results: &Results) -> String {
    let rows = &results.scaling;
    let xs: Vec<(f64, String)> = rows
        .iter()
        .map(|r| (r.dim as f64, thousands(r.dim as u64)))
        .collect();
    let line = |label, color, pick: fn(&crate::scaling::ScalingRow) -> &Timing| Series {
        label,
        color,
        values: rows.iter().map(|r| Some(pick(r).min_ns)).collect(),
    };
    let series = [
        line("bebop decode", PALETTE[0], |r| &r.bebop_decode),
        line("bebop decode + read all", PALETTE[1], |r| {
            &r.bebop_decode_walk
        }),
        line("bebop-owned decode", PALETTE[3], |r| &r.bebop_owned_decode),
        line("prost decode", PALETTE[2], |r| &r.prost_decode),
        line("rkyv access", PALETTE[4], |r| &r.rkyv_access),
    ];
    plot::lines(
        "EmbeddingBF16 decode against vector length",
        "bfloat16 elements",
        "ns",
        &xs,
        &series,
    )
}

/// The Markdown report.
///
/// With `comparison`, a section compares this run against an earlier one ([`Comparison`]).
pub fn markdown(results: &Results, comparison: Option<&Comparison>) -> String {
    let m = &results.meta;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Bebop workloads: generated Rust code against peers\n"
    );
    if m.quick {
        let _ = writeln!(
            out,
            "> **Quick mode**: every operation ran once or twice to prove it works and every \
             workload was checked to round-trip in every format. The times below are single \
             cold runs, **not measurements**.\n"
        );
    }
    let _ = writeln!(
        out,
        "Made by `cargo run --release -p bebop-workloads --bin bench-report{}` on {} ({} \
         logical CPUs) on {}; the run took {:.0} s. Each time is the fastest \
         of up to {} samples taken in {} passes over the suite (batches of about 2 ms; on a \
         shared machine other processes only add time, so the minimum is the steadiest figure; \
         medians are in `results.json`), in **nanoseconds per operation**, on data built like the \
         reference harness's (see [Data](#data)). A ratio `×r` is that format's time divided \
         by Bebop's for the same operation: above 1, Bebop is faster. Every number is from one \
         run on a shared machine; the ratios are steadier than the absolute times.\n",
        if m.quick { " -- --quick" } else { "" },
        m.cpu,
        m.cpus,
        utc_date(m.started_unix),
        m.seconds,
        crate::timing::TimingConfig::FULL.samples * crate::timing::TimingConfig::FULL.rounds,
        crate::timing::TimingConfig::FULL.rounds,
    );
    out.push_str(METHOD);
    let _ = writeln!(out, "\n## Summary: decode + walk\n");
    let _ = writeln!(
        out,
        "Our encode (view → caller's buffer), decode (validated view) and decode + walk, and \
         every other format's decode + walk (decode into its natural form, then read every \
         field), with its ratio to Bebop's decode + walk.\n"
    );
    out.push_str(&summary_table(results));
    let _ = writeln!(out, "\n![decode + walk](decode_walk.svg)\n");
    if !results.pairs.is_empty() {
        let _ = writeln!(out, "\n### Against rkyv, measured in pairs\n");
        out.push_str(&pairs_table(results));
        let _ = writeln!(
            out,
            "\n### Encode against bincode and rkyv, measured in pairs\n"
        );
        out.push_str(&encode_pairs_table(results));
    }
    if !results.one_pass.is_empty() {
        let _ = writeln!(out, "\n### Reading in one pass\n");
        out.push_str(&one_pass_table(results));
    }
    if let Some(c) = comparison {
        let _ = writeln!(out, "\n## Against the previous run\n");
        out.push_str(&c.markdown());
    }
    for (op, file, text) in [
        (
            Op::Encode,
            "encode.svg",
            "Value to bytes. Bebop encodes a view into a caller's buffer; bebop-owned encodes \
             the owned value into a reused `Vec`.",
        ),
        (
            Op::Decode,
            "decode.svg",
            "Bytes to the natural decoded form (see the table of formats). For Bebop that is a \
             view validated in one pass (UTF-8, enums, nesting): every field can then be read \
             without further checks; arrays of records are decoded again as they are iterated, \
             which is what decode + walk adds. For rkyv it is validated access.",
        ),
        (
            Op::DecodeWalk,
            "decode_walk.svg",
            "Decode, then read every field (every array element; of each string its length and \
             first and last bytes).",
        ),
        (
            Op::RoundTrip,
            "round_trip.svg",
            "Encode, then decode what was written.",
        ),
    ] {
        let _ = writeln!(out, "\n## {}\n\n{text}\n", capitalise(op.name()));
        out.push_str(&op_table(results, op, op));
        if op != Op::DecodeWalk {
            let _ = writeln!(out, "\n![{}]({file})", op.name());
        }
    }
    let _ = writeln!(
        out,
        "\n### Against the paper's published decode figures\n\n\
         The paper's C figures were measured on an Apple M3 Ultra and the reference decode loop \
         never resets its arena (which inflates its allocation-heavy rows about 3×); they are \
         here for scale, not for a ratio. The C harness was not run on this machine.\n"
    );
    out.push_str(&paper_table(results));
    let _ = writeln!(
        out,
        "\n## Wire size\n\nBytes of each encoding. Bebop's owned and view forms write the same \
         bytes. rkyv's archive includes its alignment padding and relative pointers.\n"
    );
    out.push_str(&sizes_table(results, |s| s.raw));
    let _ = writeln!(
        out,
        "\n![wire size](sizes.svg)\n\n### After zstd (level 3)\n"
    );
    out.push_str(&sizes_table(results, |s| s.zstd));
    let _ = writeln!(out, "\n### After LZ4 (block format)\n");
    out.push_str(&sizes_table(results, |s| s.lz4));
    let _ = writeln!(
        out,
        "\n## Large scalar arrays: decode is O(1) in the array length\n\n\
         A Bebop view of a scalar array checks the length against the input and keeps a \
         pointer: no element is visited, so decoding an EmbeddingBF16 costs the same for 384 \
         elements as for a million. Reading the elements then costs what it costs; the owned \
         decode and prost copy them, and rkyv's validation is O(1) for plain scalars too.\n"
    );
    out.push_str(&scaling_table(results));
    let _ = writeln!(
        out,
        "\n### bfloat16 to and from f32\n\n\
         The same embeddings widened to `f32` into a caller's buffer, the first thing a model \
         or a vector search does with them: the view's `Array::to_f32_slice` (branch-free \
         conversion straight from the wire bytes, which vectorises), rkyv's archive element \
         by element through `half`'s `to_f32` (whose NaN branch keeps the compiler from \
         vectorising), and the owned `Vec<bf16>` through `half`'s `convert_to_f32_slice` (the \
         same element loop). Then the other way, as the writer of an embedding does: `f32` \
         values narrowed to bfloat16 (round to nearest, ties to even) by \
         `bebop_core::bf16_from_f32_slice` and by `half`'s `convert_from_f32_slice`. Every \
         conversion gives `half`'s bits, which is checked before timing. `×r` is that \
         column's time over ours in the same run (above 1, ours is faster).\n"
    );
    out.push_str(&float16_table(results));
    let _ = writeln!(
        out,
        "\n![scaling](scaling.svg)\n\n## Bandwidth against memcpy\n\n\
         A TensorShard whose bfloat16 payload is 64 KiB to 16 MiB (Embedding1536 and \
         TensorShardLarge are 3 KiB and 64 KiB). Bytes per second are the record's wire bytes \
         divided by the time; memcpy is `copy_from_slice` of the same bytes into another \
         buffer (warm caches, single thread). Decoding alone is O(1) (last column). Every \
         element is read two ways: through `Array::chunks` and `iter` (which slice \
         fixed-size elements straight out of the input), and by hand from \
         `Array::wire_bytes()` in two-byte chunks, as a yardstick for `iter`. Both sum the \
         bfloat16 bits as every walk in this report does: in blocks of 65,536 elements, \
         each summed in 32-bit lanes (which cannot overflow for such a block) and the block \
         sums in 64 bits. `to_f32_slice` writes twice the bytes it reads (one `f32` per \
         bfloat16).\n"
    );
    out.push_str(&bandwidth_table(&results.bandwidth));
    let _ = writeln!(out, "\n![bandwidth](bandwidth.svg)\n");
    out.push_str(DATA_NOTES);
    out.push_str(&text_table());
    out
}

/// `YYYY-MM-DD HH:MM UTC` for seconds since the Unix epoch.
pub fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from a day count (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// How many characters of each text workload are multi-byte.
fn text_table() -> String {
    let data = crate::data::Dataset::build();
    let mut out =
        String::from("\n| workload | characters | multi-byte characters |\n|---|---:|---:|\n");
    fn json<T: serde::Serialize>(value: &T) -> String {
        serde_json::to_string(value).unwrap_or_default()
    }
    let rows: [(&str, String); 9] = [
        ("LLMChunkSmall", json(&data.llm_chunk_small)),
        ("LLMChunkLarge", json(&data.llm_chunk_large)),
        ("ChunkedText", data.chunked_text.source.clone()),
        ("PersonSmall", data.person_small.name.clone()),
        ("PersonMedium", data.person_medium.name.clone()),
        ("DocumentSmall", json(&data.document_small)),
        ("DocumentLarge", json(&data.document_large)),
        ("JsonSmall", json(&data.json_small)),
        ("JsonLarge", json(&data.json_large)),
    ];
    for (name, text) in rows {
        let _ = writeln!(
            out,
            "| {name} | {} | {} |",
            thousands(text.chars().count() as u64),
            crate::text::non_ascii_chars(&text)
        );
    }
    out.push_str(
        "\nCharacters are those of the workload's serde_json form (for Person, of the name; for \
         ChunkedText, of the source text).\n",
    );
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

const METHOD: &str = "\
## Formats

| format | decoded form | encode writes into | data model |
|---|---|---|---|
| bebop | generated view over the input, validated in one pass | caller's byte slice | code generated by `bebop-codegen-rust` from `schemas/workloads.bop` |
| bebop-owned | generated owned type (`String`, `Vec`, `BTreeMap`) decoded straight from bytes, as the earlier Rust plugin did | reused `Vec<u8>` | same generated code, `owned` module |
| prost | prost message | reused `Vec<u8>` | `proto/benchmark.proto`: uuid and bfloat16[] as `bytes`, JsonValue as a oneof like `google.protobuf.Value` |
| rkyv | archived value through `rkyv::access` (bytecheck validation), zero-copy | reused `AlignedVec` | the serde model types, derived |
| postcard | owned serde type | caller's byte slice | serde model: uuid and bfloat16[] as byte strings |
| bincode | owned serde type (bincode 2, standard config) | caller's byte slice | serde model |
| rmp-serde | owned serde type; structs as maps with field names | reused `Vec<u8>` | serde model |
| serde_json | owned serde type | reused `Vec<u8>` | serde model: uuid as text, bytes as base64, bfloat16 as numbers, JsonValue as plain JSON |
| simd-json | owned serde type; parsing needs a mutable copy of the input, whose copying is timed | reused `Vec<u8>` | serde model, as serde_json |

Every workload is checked to round-trip in every format before it is timed: each format's bytes \
decode to a value equal to the original, whose walk reads the same checksum.

serde_json is built with its `float_roundtrip` feature: its default float parser is best-effort \
in the last bit, which the round-trip check does not accept (the feature costs about twice the \
parsing time per float, by its documentation). simd-json's serializer writes float32 values with \
float64 digits, so its JSON for float arrays is longer than serde_json's.
";

const DATA_NOTES: &str = "\
## Data

Built like the reference harness (`lab/benchmark/c/src/harness.cpp`): the same shapes, string \
lengths, counts, constants and random engine (MT19937-64 seeded with 42, draws in the same order). \
What differs:

- Values the harness draws through C++ distributions (ids, ages, prices, random strings, \
  bfloat16 and float vectors, the large LLM chunk's token ids and logprobs) use this suite's own \
  mapping from the engine's output, so they are different values of the same kind; raw draws \
  (`rng() & 0xFF` for uuid bytes and the event payload, `rng() % 10 + 1`, `rng() % 50000`) are \
  the same expressions. Bebop's uncompressed sizes depend only on lengths and are the paper's \
  (PersonSmall 28, OrderLarge 1,240, Embedding768 1,556, TensorShardLarge 65,624 bytes); \
  varint and compressed sizes depend on the values.
- ChunkedText: the harness reads \"Alice's Adventures in Wonderland\" from a file that is not \
  available here; this suite generates a deterministic Markdown text of the same kind and size \
  (about 150 KB: twelve `## Chapter` headings, other `##` headings, paragraphs) and splits it \
  with the harness's span rules.
- Text: the harness's strings are ASCII except its ChunkedText input, which has a few hundred \
  multi-byte characters (mostly em dashes) in 153 KB. Every text-bearing field here (names, \
  titles, bodies, tokens, JSON string values, the ChunkedText source) carries a seeded mix at \
  that rate: about one character in 200 is multi-byte, 80% of them 3-byte punctuation, 15% \
  2-byte accented letters, 5% 4-byte emoji. Each replaces as many ASCII bytes as it is long, so \
  lengths, spans and wire sizes are those of the ASCII text. Identifiers (event types, tensor \
  names, model names, JSON keys, emails) stay ASCII. The rows marked `(ASCII)` repeat a \
  workload on its pure-ASCII text, the fast path of every UTF-8 validator (a short string that \
  drew no multi-byte character has no such row).
- Object keys are written in ascending order (the harness's hash maps write them in hash order).
- EmbeddingBatch has 8 vectors of 1536 and EventLarge a 4 KiB payload, as the harness builds \
  them (the paper's table of workloads says 32 vectors and 8 KB).
- The paper's protobuf schema carries uuids as 36-character strings; here they are 16-byte \
  `bytes`, as a protobuf user would choose.
";

/// Writes `results.json`, `report.md` (with the section of `comparison`, when there is one)
/// and the charts into `dir`.
pub fn write(results: &Results, comparison: Option<&Comparison>, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let put = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let json = serde_json::to_string_pretty(results).map_err(|e| e.to_string())?;
    put("results.json", &json)?;
    put("report.md", &markdown(results, comparison))?;
    put(
        "decode_walk.svg",
        &op_chart(results, Op::DecodeWalk, "Decode + walk (every field read)"),
    )?;
    put("decode.svg", &op_chart(results, Op::Decode, "Decode"))?;
    put("encode.svg", &op_chart(results, Op::Encode, "Encode"))?;
    put(
        "round_trip.svg",
        &op_chart(results, Op::RoundTrip, "Round trip"),
    )?;
    put("sizes.svg", &size_chart(results))?;
    put("scaling.svg", &scaling_chart(results))?;
    put("bandwidth.svg", &bandwidth_chart(&results.bandwidth))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(fmt_ns(2.345), "2.35");
        assert_eq!(fmt_ns(45.67), "45.7");
        assert_eq!(fmt_ns(1_234_567.4), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(fmt_ratio(0.456), "×0.46");
        assert_eq!(fmt_ratio(12.34), "×12.3");
        assert_eq!(fmt_ratio(1234.0), "×1234");
        assert_eq!(utc_date(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_date(951_782_400 + 3_661), "2000-02-29 01:01 UTC");
        assert_eq!(utc_date(1_704_067_200), "2024-01-01 00:00 UTC");
        assert_eq!(size_label(64 << 10), "64 KiB");
        assert_eq!(size_label(16 << 20), "16 MiB");
    }
}

//! A run against an earlier one: by default the `results.json` checked into the repository,
//! read before the run overwrites it. Every timed row of both runs (workload × format ×
//! operation, the bandwidth and O(1) tables) is matched by name; a row of ours that became
//! more than [`THRESHOLD`] slower is flagged. That is a report, not a failing test: one run on
//! a shared machine can be slow as a whole, so the median ratio of the peers' rows (code that
//! did not change) is shown beside it as the machine's drift.
//!
//! ```
//! use bebop_workloads::compare::{Comparison, THRESHOLD};
//!
//! let before = r#"{"meta": {"quick": false, "cpu": "X", "started_unix": 0},
//!     "cases": [
//!         {"workload": "PersonSmall", "format": "Bebop", "op": "Decode", "timing": {"min_ns": 6.0}},
//!         {"workload": "PersonSmall", "format": "Prost", "op": "Decode", "timing": {"min_ns": 20.0}}
//!     ]}"#;
//! let now = r#"{"meta": {"quick": false, "cpu": "X", "started_unix": 1},
//!     "cases": [
//!         {"workload": "PersonSmall", "format": "Bebop", "op": "Decode", "timing": {"min_ns": 7.0}},
//!         {"workload": "PersonSmall", "format": "Prost", "op": "Decode", "timing": {"min_ns": 20.0}}
//!     ]}"#;
//! let c = Comparison::new(&serde_json::from_str(before)?, &serde_json::from_str(now)?)
//!     .map_err(|e| e.to_string())?;
//! assert_eq!(c.flagged().count(), 1); // 7 / 6 = 1.17 > 1 + THRESHOLD
//! assert_eq!(c.drift, Some(1.0)); // prost did not move
//! assert!(THRESHOLD == 0.10);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::report::{fmt_ns, utc_date};

/// How much slower a row of ours may get before it is flagged: 10%.
pub const THRESHOLD: f64 = 0.10;

/// One timed row present in both runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What was timed, as the report names it (`PersonSmall · Bebop · Decode`).
    pub label: String,
    /// Whether the row times our code (Bebop's formats, our bandwidth and O(1) columns);
    /// the others are the yardstick for the machine's drift.
    pub ours: bool,
    /// The earlier run's time, ns (fastest sample, as the report shows).
    pub before_ns: f64,
    /// This run's time, ns.
    pub now_ns: f64,
}

impl Row {
    /// This run's time over the earlier one's: above 1, slower now.
    pub fn ratio(&self) -> f64 {
        self.now_ns / self.before_ns
    }

    /// Ours and more than [`THRESHOLD`] slower.
    pub fn is_regression(&self) -> bool {
        self.ours && self.ratio() > 1.0 + THRESHOLD
    }
}

/// What the earlier run was.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    /// When it started (seconds since the Unix epoch).
    pub started_unix: u64,
    /// Its CPU model.
    pub cpu: String,
    /// Whether it was a quick run (its times are not measurements).
    pub quick: bool,
}

/// The rows of two runs side by side.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The earlier run.
    pub before: RunInfo,
    /// Whether this run is on the same CPU model as the earlier one.
    pub same_cpu: bool,
    /// Every row timed in both runs, in the report's order.
    pub rows: Vec<Row>,
    /// Rows of the earlier run that this one did not time (workloads left out by `--only`,
    /// or rows that no longer exist).
    pub only_before: usize,
    /// Rows of this run the earlier one did not have.
    pub only_now: usize,
    /// The median ratio of the peers' rows (none when there are none): how much slower or
    /// faster the machine was as a whole.
    pub drift: Option<f64>,
}

/// Why a results file cannot be compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareError(pub String);

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CompareError {}

impl Comparison {
    /// Matches the rows of `before` and `now`, both in the shape of `results.json`.
    pub fn new(before: &Value, now: &Value) -> Result<Comparison, CompareError> {
        let old = rows_of(before)?;
        let new = rows_of(now)?;
        let by_label: BTreeMap<&str, &TimedRow> =
            old.iter().map(|r| (r.label.as_str(), r)).collect();
        let mut rows = Vec::new();
        for r in &new {
            if let Some(b) = by_label.get(r.label.as_str()) {
                rows.push(Row {
                    label: r.label.clone(),
                    ours: r.ours,
                    before_ns: b.ns,
                    now_ns: r.ns,
                });
            }
        }
        let only_now = new.len() - rows.len();
        let only_before = old.len() - rows.len();
        let mut peers: Vec<f64> = rows.iter().filter(|r| !r.ours).map(Row::ratio).collect();
        peers.sort_by(f64::total_cmp);
        let drift = match peers.len() {
            0 => None,
            n if n % 2 == 1 => Some(peers[n / 2]),
            n => Some((peers[n / 2 - 1] + peers[n / 2]) / 2.0),
        };
        let info = |v: &Value| RunInfo {
            started_unix: v["meta"]["started_unix"].as_u64().unwrap_or(0),
            cpu: v["meta"]["cpu"].as_str().unwrap_or("").to_string(),
            quick: v["meta"]["quick"].as_bool().unwrap_or(false),
        };
        let before_info = info(before);
        let same_cpu = before_info.cpu == info(now).cpu;
        Ok(Comparison {
            before: before_info,
            same_cpu,
            rows,
            only_before,
            only_now,
            drift,
        })
    }

    /// Compares `now` with the earlier run whose `results.json` text is `before`.
    pub fn from_json(before: &str, now: &Value) -> Result<Comparison, CompareError> {
        let before: Value =
            serde_json::from_str(before).map_err(|e| CompareError(format!("not JSON: {e}")))?;
        Comparison::new(&before, now)
    }

    /// Reads the earlier run from `path` and compares it with `now`.
    pub fn from_file(path: &Path, now: &Value) -> Result<Comparison, CompareError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CompareError(format!("cannot read {}: {e}", path.display())))?;
        Comparison::from_json(&text, now)
            .map_err(|e| CompareError(format!("{}: {e}", path.display())))
    }

    /// Our rows more than [`THRESHOLD`] slower, in the report's order.
    pub fn flagged(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.is_regression())
    }

    /// The report's section: what was compared, the drift, every flagged row.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let ours = self.rows.iter().filter(|r| r.ours).count();
        let flagged: Vec<&Row> = self.flagged().collect();
        let faster = self
            .rows
            .iter()
            .filter(|r| r.ours && r.ratio() < 1.0 - THRESHOLD)
            .count();
        let _ = writeln!(
            out,
            "Each of our {ours} rows timed in both runs against the run of {} on {} (the \
             `results.json` this run replaced); a row more than {:.0}% slower is flagged. \
             {} flagged, {faster} more than {:.0}% faster, the rest within {:.0}%.",
            utc_date(self.before.started_unix),
            if self.before.cpu.is_empty() {
                "an unknown CPU"
            } else {
                &self.before.cpu
            },
            THRESHOLD * 100.0,
            flagged.len(),
            THRESHOLD * 100.0,
            THRESHOLD * 100.0,
        );
        if let Some(d) = self.drift {
            let _ = writeln!(
                out,
                "The peers' rows (code that did not change) moved by a median ×{d:.2}: that \
                 much of any change is the machine. The last column divides it out."
            );
        }
        if !self.same_cpu {
            let _ = writeln!(
                out,
                "\n> The earlier run was on another CPU model: the ratios compare machines as \
                 much as code."
            );
        }
        if self.before.quick {
            let _ = writeln!(
                out,
                "\n> The earlier run was a quick run: its times are not measurements."
            );
        }
        if self.only_before + self.only_now > 0 {
            let _ = writeln!(
                out,
                "\n{} rows of the earlier run were not timed in this one and {} rows are new.",
                self.only_before, self.only_now
            );
        }
        if !flagged.is_empty() {
            let _ = writeln!(
                out,
                "\n| row | before, ns | now, ns | now / before | after drift |\n|---|---:|---:|---:|---:|"
            );
            for r in flagged {
                let adjusted = self
                    .drift
                    .map_or_else(|| "-".to_string(), |d| format!("×{:.2}", r.ratio() / d));
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | ×{:.2} | {adjusted} |",
                    r.label,
                    fmt_ns(r.before_ns),
                    fmt_ns(r.now_ns),
                    r.ratio()
                );
            }
        }
        out
    }
}

/// One timed row of a results file.
struct TimedRow {
    label: String,
    ours: bool,
    ns: f64,
}

/// The fastest-sample time of a timing object, when it is a usable number.
fn min_ns(timing: &Value) -> Option<f64> {
    timing["min_ns"]
        .as_f64()
        .filter(|ns| ns.is_finite() && *ns > 0.0)
}

/// Every timed row of a results file (`results.json`'s shape), labelled as the report
/// names it. Rows whose time is missing or not a positive number are left out.
fn rows_of(results: &Value) -> Result<Vec<TimedRow>, CompareError> {
    let cases = results["cases"]
        .as_array()
        .ok_or_else(|| CompareError("no \"cases\" list".into()))?;
    let mut rows = Vec::new();
    for case in cases {
        let (Some(workload), Some(format), Some(op)) = (
            case["workload"].as_str(),
            case["format"].as_str(),
            case["op"].as_str(),
        ) else {
            return Err(CompareError(format!(
                "a case without workload, format and op: {case}"
            )));
        };
        if let Some(ns) = min_ns(&case["timing"]) {
            rows.push(TimedRow {
                label: format!("{workload} · {format} · {op}"),
                ours: format.starts_with("Bebop"),
                ns,
            });
        }
    }
    // The bandwidth and O(1) tables: one row per size, one timing per column.
    for (section, key, peers) in [
        ("bandwidth", "payload_bytes", &["memcpy"][..]),
        (
            "scaling",
            "dim",
            &[
                "prost_decode",
                "rkyv_access",
                "rkyv_access_to_f32",
                "half_from_f32",
            ][..],
        ),
    ] {
        for row in results[section].as_array().into_iter().flatten() {
            let Some(size) = row[key].as_u64() else {
                continue;
            };
            let Some(fields) = row.as_object() else {
                continue;
            };
            for (column, timing) in fields {
                if let Some(ns) = min_ns(timing) {
                    rows.push(TimedRow {
                        label: format!("{section} {key}={size} · {column}"),
                        ours: !peers.contains(&column.as_str()),
                        ns,
                    });
                }
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case(workload: &str, format: &str, op: &str, ns: f64) -> Value {
        json!({"workload": workload, "format": format, "op": op, "timing": {"min_ns": ns}})
    }

    fn run(cases: Vec<Value>, bandwidth: Vec<Value>) -> Value {
        json!({
            "meta": {"quick": false, "cpu": "Test CPU", "started_unix": 1_796_012_726u64},
            "cases": cases,
            "bandwidth": bandwidth,
        })
    }

    #[test]
    fn flags_only_our_rows_beyond_the_threshold() {
        let before = run(
            vec![
                case("A", "Bebop", "Decode", 10.0),
                case("A", "BebopOwned", "Decode", 10.0),
                case("A", "Bebop", "Encode", 10.0),
                case("A", "Prost", "Decode", 10.0),
                case("B", "Rkyv", "Decode", 10.0),
            ],
            vec![],
        );
        let now = run(
            vec![
                case("A", "Bebop", "Decode", 11.5),      // 15% slower: flagged
                case("A", "BebopOwned", "Decode", 10.9), // 9%: not
                case("A", "Bebop", "Encode", 5.0),       // faster
                case("A", "Prost", "Decode", 20.0),      // a peer: never flagged
                case("B", "Rkyv", "Decode", 10.0),
            ],
            vec![],
        );
        let c = Comparison::new(&before, &now).unwrap();
        let flagged: Vec<&str> = c.flagged().map(|r| r.label.as_str()).collect();
        assert_eq!(flagged, ["A · Bebop · Decode"]);
        assert_eq!(c.rows.len(), 5);
        assert_eq!(c.drift, Some(1.5)); // median of 2.0 and 1.0
        assert!(c.same_cpu);
        let md = c.markdown();
        assert!(md.contains("1 flagged, 1 more than 10% faster"), "{md}");
        assert!(
            md.contains("| A · Bebop · Decode | 10.0 | 11.5 | ×1.15 | ×0.77 |"),
            "{md}"
        );
        assert!(md.contains("median ×1.50"), "{md}");
    }

    #[test]
    fn rows_are_matched_by_name_and_the_rest_counted() {
        let before = run(
            vec![
                case("A", "Bebop", "Decode", 10.0),
                case("Gone", "Bebop", "Decode", 1.0),
            ],
            vec![],
        );
        let now = run(
            vec![
                case("New", "Bebop", "Decode", 100.0),
                case("A", "Bebop", "Decode", 10.0),
            ],
            vec![],
        );
        let c = Comparison::new(&before, &now).unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!((c.only_before, c.only_now), (1, 1));
        assert_eq!(c.flagged().count(), 0);
        assert_eq!(c.drift, None);
        assert!(
            c.markdown()
                .contains("1 rows of the earlier run were not timed")
        );
    }

    #[test]
    fn bandwidth_columns_are_rows_and_memcpy_is_a_peer() {
        let t = |ns: f64| json!({"min_ns": ns, "median_ns": ns * 2.0});
        let before = run(
            vec![],
            vec![json!({"payload_bytes": 65536, "wire_bytes": 65597,
                "memcpy": t(1000.0), "decode_read": t(5000.0)})],
        );
        let now = run(
            vec![],
            vec![json!({"payload_bytes": 65536, "wire_bytes": 65597,
                "memcpy": t(2000.0), "decode_read": t(6000.0)})],
        );
        let c = Comparison::new(&before, &now).unwrap();
        assert_eq!(c.rows.len(), 2);
        let flagged: Vec<&str> = c.flagged().map(|r| r.label.as_str()).collect();
        assert_eq!(flagged, ["bandwidth payload_bytes=65536 · decode_read"]);
        assert_eq!(c.drift, Some(2.0));
    }

    #[test]
    fn unusable_times_are_left_out_and_broken_files_are_errors() {
        let before = run(vec![case("A", "Bebop", "Decode", 0.0)], vec![]);
        let now = run(vec![case("A", "Bebop", "Decode", 5.0)], vec![]);
        let c = Comparison::new(&before, &now).unwrap();
        assert!(c.rows.is_empty());
        assert_eq!(c.only_now, 1);
        assert!(Comparison::new(&json!({"meta": {}}), &now).is_err());
        assert!(Comparison::new(&json!({"cases": [{"workload": 1}]}), &now).is_err());
    }

    #[test]
    fn another_cpu_and_a_quick_baseline_are_said() {
        let mut before = run(vec![case("A", "Bebop", "Decode", 10.0)], vec![]);
        before["meta"]["cpu"] = json!("Other CPU");
        before["meta"]["quick"] = json!(true);
        let now = run(vec![case("A", "Bebop", "Decode", 10.0)], vec![]);
        let c = Comparison::new(&before, &now).unwrap();
        assert!(!c.same_cpu);
        let md = c.markdown();
        assert!(md.contains("another CPU model"), "{md}");
        assert!(md.contains("quick run"), "{md}");
    }

    /// The file checked into the repository is the default baseline: it must stay readable.
    #[test]
    fn the_checked_in_results_are_a_usable_baseline() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("report/results.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let c = Comparison::from_file(&path, &value).unwrap();
        assert!(c.rows.len() > 500, "{} rows", c.rows.len());
        assert_eq!(c.flagged().count(), 0);
        assert_eq!(c.drift, Some(1.0));
        assert!(c.rows.iter().any(|r| r.label.starts_with("bandwidth ")));
        assert!(c.rows.iter().any(|r| r.label.starts_with("scaling ")));
    }
}

//! Ratios measured in pairs: two formats' batches run alternately, so that both see the same
//! state of the machine, and the report keeps the median of the per-pair ratios.
//!
//! The main tables time each case on its own, keep its fastest batch, and divide one case's
//! figure by another's. On the shared two-vCPU machines these numbers come from, speed moves
//! in phases that last from milliseconds to seconds: rkyv's LLMChunkSmall decode + walk ran at
//! 62 ns in some processes and at 101 ns in others, with the same binary and address layout
//! (`setarch -R`), and a whole `--only` run could fall into a slow phase. Two figures taken
//! minutes apart then divide one phase by another. Here each pair runs one batch of each
//! format back to back, about a millisecond each, in alternating order; a phase that slows
//! one slows the other, and the median ratio over many pairs is what the code costs, side by
//! side.
//!
//! Pairing does not remove everything: the core's other hyperthread, shared with other
//! tenants, slows some code more than other code, and such phases outlast a pair. So the
//! runner takes pairs in each of its passes over the suite, minutes apart, and pools them;
//! the report shows the middle half of the ratios beside their median.
//!
//! ```
//! use std::time::Duration;
//! use bebop_workloads::paired::{PairConfig, PairTiming, measure_pair};
//!
//! // Stand-ins that report 100 and 250 ns per iteration.
//! let mut ours = |iters: u64| Duration::from_nanos(100 * iters);
//! let mut peer = |iters: u64| Duration::from_nanos(250 * iters);
//! let config = PairConfig { batch: Duration::from_micros(100), pairs: 9 };
//! let pass = measure_pair(&mut ours, &mut peer, &config);
//! let t = PairTiming::of(&[pass.clone(), pass]);
//! assert_eq!(t.median, 2.5); // the peer takes 2.5 times as long: we are faster
//! assert_eq!(t.pairs, 18);
//! ```

use std::time::Duration;

use serde::Serialize;

use crate::suite::{Format, Op};
use crate::timing::calibrate;

/// How pairs are taken.
#[derive(Clone, Copy, Debug)]
pub struct PairConfig {
    /// Target duration of one batch of either format.
    pub batch: Duration,
    /// Pairs to take.
    pub pairs: usize,
}

impl PairConfig {
    /// The full run's settings for one pass: 15 pairs of batches of about 1 ms.
    pub const FULL: PairConfig = PairConfig {
        batch: Duration::from_millis(1),
        pairs: 15,
    };

    /// Quick mode: two pairs of one iteration each, to prove the code runs.
    pub const QUICK: PairConfig = PairConfig {
        batch: Duration::ZERO,
        pairs: 2,
    };
}

/// The pairs of one pass, per operation: our time and the peer's, ns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairSamples {
    /// Our time in each pair.
    pub ours_ns: Vec<f64>,
    /// The peer's time in each pair.
    pub peer_ns: Vec<f64>,
}

/// What the pairs of one or more passes found. Ratios are the peer's time over ours: above 1,
/// we are faster.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PairTiming {
    /// Pairs taken.
    pub pairs: usize,
    /// Median of the per-pair ratios.
    pub median: f64,
    /// The ratio a quarter of the pairs are below.
    pub p25: f64,
    /// The ratio three quarters of the pairs are below.
    pub p75: f64,
    /// Our median time per operation over the pairs, ns.
    pub ours_ns: f64,
    /// The peer's median time per operation over the pairs, ns.
    pub peer_ns: f64,
}

impl PairTiming {
    /// Summarises the pairs of every pass together.
    pub fn of(passes: &[PairSamples]) -> PairTiming {
        let mut ratios = Vec::new();
        let mut ours = Vec::new();
        let mut peer = Vec::new();
        for pass in passes {
            for (&a, &b) in pass.ours_ns.iter().zip(&pass.peer_ns) {
                if a > 0.0 && b > 0.0 {
                    ratios.push(b / a);
                }
                ours.push(a);
                peer.push(b);
            }
        }
        let quantile = |values: &mut Vec<f64>, q: usize| -> f64 {
            values.sort_by(f64::total_cmp);
            values.get(values.len() * q / 4).copied().unwrap_or(0.0)
        };
        PairTiming {
            pairs: ours.len(),
            median: quantile(&mut ratios, 2),
            p25: quantile(&mut ratios, 1),
            p75: quantile(&mut ratios, 3),
            ours_ns: quantile(&mut ours, 2),
            peer_ns: quantile(&mut peer, 2),
        }
    }
}

/// One workload's pairs: our format against a peer on one operation.
#[derive(Clone, Debug, Serialize)]
pub struct PairedRow {
    /// Workload name.
    pub workload: &'static str,
    /// The operation.
    pub op: Op,
    /// Our format.
    pub ours: Format,
    /// The peer's format.
    pub peer: Format,
    /// What the pairs found.
    pub timing: PairTiming,
}

/// Times `ours` and `peer` (each runs its operation `iters` times and returns the elapsed
/// time) in alternating batches: pair `k` runs ours first when `k` is even, the peer first
/// when it is odd, so that neither always runs on a cache the other just warmed or cooled.
pub fn measure_pair(
    ours: &mut dyn FnMut(u64) -> Duration,
    peer: &mut dyn FnMut(u64) -> Duration,
    config: &PairConfig,
) -> PairSamples {
    let ours_iters = calibrate(ours, config.batch);
    let peer_iters = calibrate(peer, config.batch);
    let per_op = |took: Duration, iters: u64| took.as_nanos() as f64 / iters as f64;
    let mut samples = PairSamples::default();
    for k in 0..config.pairs {
        let (a, b) = if k % 2 == 0 {
            let a = per_op(ours(ours_iters), ours_iters);
            (a, per_op(peer(peer_iters), peer_iters))
        } else {
            let b = per_op(peer(peer_iters), peer_iters);
            (per_op(ours(ours_iters), ours_iters), b)
        };
        samples.ours_ns.push(a);
        samples.peer_ns.push(b);
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn slow_phases_cancel_within_a_pair() {
        // The machine runs three times slower for pairs 3 to 6: both formats slow down.
        let calls = RefCell::new(Vec::new());
        let phase = |call: usize| if (6..14).contains(&call) { 3 } else { 1 };
        let mut ours = |iters: u64| {
            let mut c = calls.borrow_mut();
            let n = c.len();
            c.push('o');
            Duration::from_nanos(100 * iters * phase(n))
        };
        let mut peer = |iters: u64| {
            let mut c = calls.borrow_mut();
            let n = c.len();
            c.push('p');
            Duration::from_nanos(150 * iters * phase(n))
        };
        let config = PairConfig {
            batch: Duration::ZERO,
            pairs: 10,
        };
        let t = PairTiming::of(&[measure_pair(&mut ours, &mut peer, &config)]);
        assert_eq!((t.pairs, t.p25, t.median, t.p75), (10, 1.5, 1.5, 1.5));
        // Medians per format see the slow phase; the ratio does not.
        assert_eq!((t.ours_ns, t.peer_ns), (100.0, 150.0));
        // Calibration, then alternating order.
        let order: String = calls.borrow().iter().collect();
        assert_eq!(&order[..2], "op");
        assert_eq!(&order[2..10], "oppooppo");
    }

    #[test]
    fn quartiles_of_uneven_ratios() {
        // Ratios 1, 2, ..., 8 in turn.
        let k = RefCell::new(0u64);
        let mut ours = |iters: u64| Duration::from_nanos(10 * iters);
        let mut peer = |iters: u64| {
            let mut k = k.borrow_mut();
            *k += 1;
            // The first call calibrates; the pairs' calls get 1, 2, ..., 8.
            Duration::from_nanos(10 * iters * ((*k + 6) % 8 + 1))
        };
        let config = PairConfig {
            batch: Duration::ZERO,
            pairs: 8,
        };
        let pass = measure_pair(&mut ours, &mut peer, &config);
        let t = PairTiming::of(std::slice::from_ref(&pass));
        assert_eq!((t.p25, t.median, t.p75), (3.0, 5.0, 7.0));
        // Passes are pooled: a second pass of ratio 1 throughout pulls the median down.
        let flat = PairSamples {
            ours_ns: vec![10.0; 8],
            peer_ns: vec![10.0; 8],
        };
        let t = PairTiming::of(&[pass, flat]);
        assert_eq!((t.pairs, t.p25, t.median, t.p75), (16, 1.0, 1.0, 5.0));
    }
}

//! A small timing loop for the report runner: calibrate a batch size, take samples, keep the
//! median.

use std::time::{Duration, Instant};

use serde::Serialize;

/// How long to measure.
#[derive(Clone, Copy, Debug)]
pub struct TimingConfig {
    /// Target duration of one sample (a batch of iterations).
    pub batch: Duration,
    /// Samples to take.
    pub samples: usize,
    /// Stop taking samples after this long (once at least 3 are taken).
    pub max_case: Duration,
    /// Passes over the whole suite; each case keeps its best pass. A machine shared with other
    /// work has slow phases lasting seconds, which one pass can fall into as a whole.
    pub rounds: usize,
}

impl TimingConfig {
    /// The full run's settings.
    pub const FULL: TimingConfig = TimingConfig {
        batch: Duration::from_millis(2),
        samples: 15,
        max_case: Duration::from_millis(150),
        rounds: 3,
    };
}

/// What one measurement found, per iteration. The report uses the fastest sample: on a shared
/// machine other processes only ever add time, so the minimum is the steadiest estimate of
/// what the operation itself costs (the median is kept in `results.json`).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Timing {
    /// Median over the samples, in nanoseconds.
    pub median_ns: f64,
    /// Fastest sample, in nanoseconds.
    pub min_ns: f64,
    /// Coefficient of variation of the samples (standard deviation / mean).
    pub cv: f64,
    /// Iterations per sample.
    pub iters: u64,
    /// Samples taken.
    pub samples: usize,
}

/// Times `run` (which runs its operation `iters` times and returns the elapsed time).
pub fn measure(run: &mut dyn FnMut(u64) -> Duration, config: &TimingConfig) -> Timing {
    let started = Instant::now();
    let iters = calibrate(run, config.batch);
    let mut per_iter = Vec::with_capacity(config.samples);
    for _ in 0..config.samples {
        let took = run(iters);
        per_iter.push(took.as_nanos() as f64 / iters as f64);
        if per_iter.len() >= 3 && started.elapsed() >= config.max_case {
            break;
        }
    }
    summarise(&per_iter, iters)
}

/// Warms `run` up and finds how many iterations of it fill a batch of `batch` (at least 1;
/// 1 for a zero batch).
pub fn calibrate(run: &mut dyn FnMut(u64) -> Duration, batch: Duration) -> u64 {
    let mut iters = 1u64;
    loop {
        let took = run(iters);
        if took >= batch || iters >= 1 << 32 {
            return iters;
        }
        let factor = if took.is_zero() {
            100
        } else {
            (batch.as_nanos() / took.as_nanos()).clamp(2, 100) as u64
        };
        iters = iters.saturating_mul(factor);
    }
}

/// Runs `run` once with one iteration, for the quick mode (no timing claims).
pub fn smoke(run: &mut dyn FnMut(u64) -> Duration) -> Timing {
    let took = run(1);
    summarise(&[took.as_nanos() as f64], 1)
}

impl Timing {
    /// Combines the passes of one case: the fastest sample of any pass, the median of the
    /// passes' medians, the largest variation, all the samples.
    pub fn combine(rounds: &[Timing]) -> Timing {
        let mut medians: Vec<f64> = rounds.iter().map(|t| t.median_ns).collect();
        medians.sort_by(f64::total_cmp);
        let median_ns = match medians.len() {
            0 => 0.0,
            n if n % 2 == 1 => medians[n / 2],
            n => (medians[n / 2 - 1] + medians[n / 2]) / 2.0,
        };
        Timing {
            median_ns,
            min_ns: rounds
                .iter()
                .map(|t| t.min_ns)
                .fold(f64::INFINITY, f64::min),
            cv: rounds.iter().map(|t| t.cv).fold(0.0, f64::max),
            iters: rounds.iter().map(|t| t.iters).max().unwrap_or(0),
            samples: rounds.iter().map(|t| t.samples).sum(),
        }
    }
}

fn summarise(per_iter: &[f64], iters: u64) -> Timing {
    let mut sorted = per_iter.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len().max(1) as f64;
    let median = match sorted.len() {
        0 => 0.0,
        len if len % 2 == 1 => sorted[len / 2],
        len => (sorted[len / 2 - 1] + sorted[len / 2]) / 2.0,
    };
    let mean = sorted.iter().sum::<f64>() / n;
    let var = sorted.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    Timing {
        median_ns: median,
        min_ns: sorted.first().copied().unwrap_or(0.0),
        cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
        iters,
        samples: per_iter.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_statistics() {
        let t = summarise(&[3.0, 1.0, 2.0, 10.0], 5);
        assert_eq!(t.median_ns, 2.5);
        assert_eq!(t.min_ns, 1.0);
        assert_eq!(t.samples, 4);
        assert!(t.cv > 0.5);
        let t = summarise(&[4.0, 4.0, 4.0], 1);
        assert_eq!((t.median_ns, t.cv), (4.0, 0.0));
        let c = Timing::combine(&[
            summarise(&[5.0, 6.0, 7.0], 10),
            summarise(&[2.0, 9.0, 9.0], 20),
            summarise(&[4.0, 4.0, 4.0], 10),
        ]);
        assert_eq!(
            (c.min_ns, c.median_ns, c.samples, c.iters),
            (2.0, 6.0, 9, 20)
        );
    }

    #[test]
    fn measure_calibrates_to_the_batch() {
        let config = TimingConfig {
            batch: Duration::from_millis(2),
            samples: 3,
            max_case: Duration::from_secs(1),
            rounds: 1,
        };
        let mut run = |iters: u64| {
            let start = Instant::now();
            let mut x = 0u64;
            for i in 0..iters * 100 {
                x = std::hint::black_box(x.wrapping_add(i));
            }
            start.elapsed()
        };
        let t = measure(&mut run, &config);
        assert_eq!(t.samples, 3);
        assert!(t.iters > 1);
        assert!(t.median_ns > 0.0);
    }
}

//! Percentiles and per-benchmark summaries.

use crate::workloads::Sample;
use serde::{Deserialize, Serialize};

/// The `p`-th percentile (0–100) of `values` by nearest rank; 0 for no values.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Latency percentiles of a set of measurements, in µs.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Percentiles {
    pub fn of(values: &[f64]) -> Self {
        let mean = if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        };
        Self {
            count: values.len(),
            p50: percentile(values, 50.0),
            p90: percentile(values, 90.0),
            p99: percentile(values, 99.0),
            max: values.iter().copied().fold(0.0, f64::max),
            mean,
        }
    }
}

/// What the report shows for one workload × mode.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub workload: String,
    pub mode: String,
    /// Client round-trip latency.
    pub e2e: Percentiles,
    /// Server execution time (when reported).
    pub server: Percentiles,
    /// Longest single transaction of each query (procedures only).
    pub max_hold: Percentiles,
    /// Sum of a query's transaction hold times.
    pub total_hold: Percentiles,
    pub transactions_p50: f64,
    pub yields_p50: f64,
    pub edges_scanned_p50: f64,
    /// The longest transaction of any query in the benchmark, µs.
    pub worst_hold_us: u64,
    /// Transactions of all queries, and those that held longer than 5 ms.
    #[serde(default)]
    pub transactions: u64,
    #[serde(default)]
    pub slow_transactions: u64,
    /// Queries answered from the module's in-memory snapshot rather than the indexes.
    #[serde(default)]
    pub from_snapshot: u64,
}

impl Summary {
    pub fn of(workload: &str, mode: &str, samples: &[Sample]) -> Self {
        let e2e: Vec<f64> = samples.iter().map(|s| s.e2e_us).collect();
        let server: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.server_us)
            .map(|v| v as f64)
            .collect();
        let stats: Vec<_> = samples.iter().filter_map(|s| s.stats).collect();
        let of = |f: &dyn Fn(&graph_client::graph::QueryStats) -> u64| -> Vec<f64> {
            stats.iter().map(|s| f(s) as f64).collect()
        };
        Self {
            workload: workload.to_string(),
            mode: mode.to_string(),
            e2e: Percentiles::of(&e2e),
            server: Percentiles::of(&server),
            max_hold: Percentiles::of(&of(&|s| s.max_hold_us)),
            total_hold: Percentiles::of(&of(&|s| s.total_hold_us)),
            transactions_p50: percentile(&of(&|s| s.transactions as u64), 50.0),
            yields_p50: percentile(&of(&|s| s.yields as u64), 50.0),
            edges_scanned_p50: percentile(&of(&|s| s.edges_scanned), 50.0),
            worst_hold_us: stats.iter().map(|s| s.max_hold_us).max().unwrap_or(0),
            transactions: stats.iter().map(|s| s.transactions as u64).sum(),
            slow_transactions: stats.iter().map(|s| s.slow_transactions as u64).sum(),
            from_snapshot: stats.iter().filter(|s| s.from_snapshot).count() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
        let p = Percentiles::of(&[3.0, 1.0, 2.0]);
        assert_eq!((p.p50, p.max, p.mean, p.count), (2.0, 3.0, 2.0, 3));
    }
}

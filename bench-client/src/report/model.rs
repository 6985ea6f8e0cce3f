//! The report's data: plain serde types for what a run measured, and the statistics computed
//! from its samples. The renderers (`markdown`, `charts`) read these; nothing here knows them.

use crate::workloads::Sample;
use serde::{Deserialize, Serialize};

/// The systems, in report column order, as `--systems` names them, with the `mode` their rows
/// carry in reports.
pub const SYSTEMS: [(&str, &str); 6] = [
    ("stdb", "stage2"),
    ("stdb-stage1", "stage1"),
    ("stdb-stage1-reducer", "stage1-reducer"),
    ("neo4j", "neo4j"),
    ("neo4j-apoc", "neo4j-apoc"),
    ("postgres", "postgres"),
];

/// The report `mode` of a system's rows.
pub fn mode_of(system: &str) -> Option<&'static str> {
    SYSTEMS.iter().find(|(s, _)| *s == system).map(|(_, m)| *m)
}

/// Whether `system` is another product (not one of SpacetimeDB's modes).
pub fn is_peer(system: &str) -> bool {
    !system.starts_with("stdb")
}

/// Where and how the run happened, so that a result can be reproduced and compared.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Environment {
    pub command: String,
    pub dataset: String,
    pub seed: u64,
    pub vertices: u64,
    pub edges: u64,
    pub max_degree: u64,
    pub mean_degree: f64,
    pub direction: String,
    pub server_url: String,
    pub server_kind: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub date_utc: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Load {
    pub edges_sent: u64,
    pub seconds: f64,
    pub edges_per_second: f64,
}

/// One system's load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SystemLoad {
    pub system: String,
    pub load: Load,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub environment: Environment,
    /// SpacetimeDB's load (all its modes share one).
    pub load: Option<Load>,
    /// Each peer's load (neo4j and neo4j-apoc share one store, so one load).
    #[serde(default)]
    pub peer_loads: Vec<SystemLoad>,
    /// Each peer's product, version and settings.
    #[serde(default)]
    pub peers: Vec<String>,
    pub results: Vec<Summary>,
    pub contention: Vec<Contention>,
}

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

/// Writers versus traversals: single-edge insert latency from another client, idle and while
/// a traversal loop runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Contention {
    /// What ran in the background loop.
    pub traversal: String,
    /// Writer latency (µs) with nothing else running.
    pub idle: Percentiles,
    /// Writer latency (µs) while the traversal loop ran.
    pub busy: Percentiles,
    /// Traversals completed during the busy phase.
    pub traversals: usize,
}

/// A small report to render and write in tests.
#[cfg(test)]
pub mod fixtures {
    use super::*;

    pub fn percentiles(count: usize, [p50, p90, p99, max]: [f64; 4]) -> Percentiles {
        Percentiles {
            count,
            p50,
            p90,
            p99,
            max,
            mean: p50,
        }
    }

    /// A result row; `hold` makes it a procedure's (with transaction hold times).
    pub fn row(workload: &str, mode: &str, e2e: [f64; 4], hold: Option<[f64; 4]>) -> Summary {
        let hold = hold.map_or_else(Percentiles::default, |h| percentiles(10, h));
        Summary {
            workload: workload.into(),
            mode: mode.into(),
            e2e: percentiles(10, e2e),
            server: Percentiles::default(),
            max_hold: hold,
            total_hold: hold,
            transactions_p50: 1.0,
            yields_p50: 0.0,
            edges_scanned_p50: 0.0,
            worst_hold_us: hold.max as u64,
            transactions: 10,
            slow_transactions: 0,
            from_snapshot: 0,
        }
    }

    /// A report on the dataset `tiny`.
    pub fn report(results: Vec<Summary>, contention: Vec<Contention>) -> Report {
        Report {
            environment: Environment {
                command: "graph-bench --dataset tiny".into(),
                dataset: "tiny".into(),
                seed: 42,
                vertices: 4039,
                edges: 88234,
                max_degree: 1045,
                mean_degree: 43.7,
                direction: "both".into(),
                server_url: "http://127.0.0.1:3000".into(),
                server_kind: "test".into(),
                cores: 2,
                memory_gib: 8.0,
                date_utc: "2026-01-01T00:00:00Z".into(),
            },
            load: None,
            peer_loads: Vec::new(),
            peers: Vec::new(),
            results,
            contention,
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

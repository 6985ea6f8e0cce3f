//! The report's data: plain serde types for what a run measured, and the statistics computed
//! from its samples. The renderers (`markdown`, `charts`) read these; nothing here knows them.

use crate::system::TxStats;
use serde::{Deserialize, Serialize};

/// The systems, in report column order, as `--systems` names them, with the `mode` their rows
/// carry in reports.
pub const SYSTEMS: [(&str, &str); 10] = [
    ("stdb", "stage2"),
    ("stdb-http", "stage2-http"),
    ("stdb-stage1", "stage1"),
    ("stdb-stage1-reducer", "stage1-reducer"),
    ("neo4j", "neo4j"),
    ("neo4j-apoc", "neo4j-apoc"),
    ("postgres", "postgres"),
    ("kuzu", "kuzu"),
    ("falkordb", "falkordb"),
    ("native", "native"),
];

/// The report `mode` of a system's rows.
pub fn mode_of(system: &str) -> Option<&'static str> {
    SYSTEMS.iter().find(|(s, _)| *s == system).map(|(_, m)| *m)
}

/// Whether `system` is one of SpacetimeDB's modes.
pub fn is_stdb(system: &str) -> bool {
    system.starts_with("stdb")
}

/// The native floor (the module's operator run natively in the benchmark): a limit to measure
/// against, neither SpacetimeDB nor a peer.
pub const NATIVE: &str = "native";

/// Whether `system` is another product (not one of SpacetimeDB's modes, nor the native floor).
pub fn is_peer(system: &str) -> bool {
    !is_stdb(system) && system != NATIVE
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
    /// The quiet before every call (`--idle-ms`; 0: back to back); absent from older reports.
    #[serde(default)]
    pub idle_ms: Option<f64>,
    /// What the shortest-path pairs ask (absent when that workload did not run).
    #[serde(default)]
    pub path_pairs: Option<PairMix>,
}

/// How many of the shortest-path pairs join two vertices with a path, two without one, or
/// name a vertex the graph does not have: the sampler fills with the last kind where it finds
/// too few of the others (a graph of self-loops has no pair with a path), so the figures of
/// such a run mostly time lookups of unknown vertices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairMix {
    pub reachable: u64,
    pub unreachable: u64,
    pub unknown: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Load {
    pub edges_sent: u64,
    pub seconds: f64,
    pub edges_per_second: f64,
}

/// The load of one store, by the system that loaded it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SystemLoad {
    pub system: String,
    pub load: Load,
    /// The other systems that read the same store (SpacetimeDB's modes, Neo4j's), measured on
    /// this load.
    #[serde(default)]
    pub shared_by: Vec<String>,
}

impl SystemLoad {
    /// Whether `system` read the store this load filled.
    pub fn serves(&self, system: &str) -> bool {
        self.system == system || self.shared_by.iter().any(|s| s == system)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "StoredReport")]
pub struct Report {
    pub environment: Environment,
    /// One load per store, in the order the run loaded them (none with `--skip-load`).
    pub loads: Vec<SystemLoad>,
    /// Each system's product, version and settings, as `system: description`.
    pub systems: Vec<String>,
    pub results: Vec<Summary>,
    pub contention: Vec<Contention>,
    /// Write → subscriber latency over the WebSocket.
    #[serde(default)]
    pub propagation: Vec<Propagation>,
    /// Single-edge inserts per second from many WebSocket connections.
    #[serde(default)]
    pub throughput: Vec<Throughput>,
    /// Traversals while a writer changes the graph at fixed rates.
    #[serde(default)]
    pub under_writes: Vec<UnderWrites>,
    /// The in-memory snapshots the module's instances held at the end of the run (else, when
    /// none is listed then, after the last SpacetimeDB system's workloads).
    #[serde(default)]
    pub snapshots: Vec<SnapshotMemory>,
    /// Concurrent writers and readers for a fixed time (agdb's social-network shape).
    #[serde(default)]
    pub mixed: Vec<Mixed>,
}

/// A report as this version or an older one stored it. Older reports kept SpacetimeDB's load
/// (`load`) apart from the peers' (`peer_loads`, one per peer) and described only the peers
/// (`peers`).
#[derive(Deserialize)]
struct StoredReport {
    environment: Environment,
    #[serde(default)]
    loads: Vec<SystemLoad>,
    #[serde(default)]
    load: Option<Load>,
    #[serde(default)]
    peer_loads: Vec<SystemLoad>,
    #[serde(default, alias = "peers")]
    systems: Vec<String>,
    results: Vec<Summary>,
    #[serde(default)]
    contention: Vec<Contention>,
    #[serde(default)]
    propagation: Vec<Propagation>,
    #[serde(default)]
    throughput: Vec<Throughput>,
    #[serde(default)]
    under_writes: Vec<UnderWrites>,
    #[serde(default)]
    snapshots: Vec<SnapshotMemory>,
    #[serde(default)]
    mixed: Vec<Mixed>,
}

impl From<StoredReport> for Report {
    fn from(stored: StoredReport) -> Self {
        let stdb = stored.load.map(|load| SystemLoad {
            system: "stdb".into(),
            load,
            shared_by: Vec::new(),
        });
        Report {
            environment: stored.environment,
            loads: stdb
                .into_iter()
                .chain(stored.peer_loads)
                .chain(stored.loads)
                .collect(),
            systems: stored.systems,
            results: stored.results,
            contention: stored.contention,
            propagation: stored.propagation,
            throughput: stored.throughput,
            under_writes: stored.under_writes,
            snapshots: stored.snapshots,
            mixed: stored.mixed,
        }
    }
}

/// One measured call, as the raw samples files beside a report hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The system as `--systems` names it.
    pub system: String,
    pub workload: String,
    /// The call's position among its benchmark's measured calls, from 0 (warm-up calls are
    /// not recorded).
    pub index: usize,
    /// The query's vertices: the start, and a shortest path's target (none for the empty
    /// calls of the round-trip floor).
    pub a: Option<u64>,
    pub b: Option<u64>,
    /// The call's time in µs: the client's clock around the call alone, or for an embedded
    /// engine reached through a worker process (Kuzu), the engine's own in-process time.
    pub e2e_us: f64,
    /// The time the system measured itself, in µs: a server's execution time, or an embedded
    /// engine's in-process time.
    pub server_us: Option<u64>,
    /// The client's clock around the call, µs, when `e2e_us` is the engine's in-process time:
    /// the difference is the worker's pipe.
    #[serde(default)]
    pub client_us: Option<f64>,
    /// When the call began, seconds after the workload started: the mixed workload's calls,
    /// whose clients run at once (none for the benchmarks that call one at a time).
    #[serde(default)]
    pub at_s: Option<f64>,
    /// The module's account of the query's transactions (SpacetimeDB procedures only).
    #[serde(flatten)]
    pub stats: Option<TxStats>,
}

impl Sample {
    /// SpacetimeDB's call `index` of one of the phases that time calls other than the
    /// benchmark's queries (writes, or traversals while others write): its time in µs, and when
    /// it began in seconds after the phase started, for calls made while others run.
    pub fn call(workload: String, index: usize, e2e_us: f64, at_s: Option<f64>) -> Sample {
        Sample {
            system: "stdb".into(),
            workload,
            index,
            a: None,
            b: None,
            e2e_us,
            server_us: None,
            client_us: None,
            at_s,
            stats: None,
        }
    }
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

/// What the report shows for one workload × system.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub workload: String,
    /// The system as `--systems` names it (empty in reports older than this field).
    #[serde(default)]
    pub system: String,
    /// The system's name in tables and charts (`stage2` for `stdb`; see [`SYSTEMS`]).
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
    /// The summary of `samples`, measured on `system` (shown as `mode`).
    pub fn of(workload: &str, system: &str, mode: &str, samples: &[Sample]) -> Self {
        let e2e: Vec<f64> = samples.iter().map(|s| s.e2e_us).collect();
        let server: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.server_us)
            .map(|v| v as f64)
            .collect();
        let stats: Vec<_> = samples.iter().filter_map(|s| s.stats).collect();
        let of = |f: &dyn Fn(&TxStats) -> u64| -> Vec<f64> {
            stats.iter().map(|s| f(s) as f64).collect()
        };
        Self {
            workload: workload.to_string(),
            system: system.to_string(),
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

/// A run of the mixed workload (see `mixed`) on one system.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mixed {
    /// The system (reports written before the peers ran it only ran `stdb`).
    #[serde(default = "stdb")]
    pub system: String,
    /// How writers draw the loaded vertices their edges point to.
    pub keys: String,
    /// Seconds the clients ran before the counted `seconds` (0 in reports written before).
    #[serde(default)]
    pub warmup_s: f64,
    pub seconds: f64,
    pub writers: usize,
    pub readers: usize,
    pub write_delay_ms: f64,
    pub ops: Vec<OpStats>,
    /// Writes acknowledged (all accounted for at the end by the edge count, the edges left in
    /// place each read back, or the run fails).
    pub acked_writes: u64,
    /// The server's memory, bytes, at the start and end, and sampled during the run (seconds,
    /// bytes): PSS of its process tree (`footprint`); the RSS of its one process in reports
    /// written before. Absent when the server's process is not known.
    #[serde(alias = "rss_start")]
    pub memory_start: Option<u64>,
    #[serde(alias = "rss_end")]
    pub memory_end: Option<u64>,
    #[serde(alias = "rss_curve")]
    pub memory_curve: Vec<(f64, u64)>,
    /// The server's data directory at the end, bytes on disk; absent when it is not known or
    /// the server keeps its data in memory.
    #[serde(default)]
    pub disk_bytes: Option<u64>,
}

fn stdb() -> String {
    "stdb".to_string()
}

/// One kind of operation in a mixed run; latencies in µs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpStats {
    pub op: String,
    pub count: usize,
    pub min: f64,
    pub latency: Percentiles,
    /// Time spent in this operation, summed over threads, s.
    pub total_s: f64,
    pub per_second: f64,
}

/// A module instance's in-memory snapshot, as `graph_info` reported it: sizes measured by the
/// instance's allocator.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotMemory {
    pub version: u64,
    pub edges: u64,
    pub bytes: u64,
    pub instance_memory_bytes: u64,
}

/// A traversal in a loop while a writer on another connection adds and removes edges at `rate`
/// per second (see `under_writes`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnderWrites {
    /// The traversal, as the query prints.
    pub traversal: String,
    /// Edges changed per second that the writer aimed for, and achieved.
    pub rate: u32,
    pub changes_per_second: f64,
    /// The traversal's latency, µs, and the writer's calls' latency, µs.
    pub latency: Percentiles,
    pub writer: Percentiles,
    /// Traversals answered from the snapshot, and answered exactly for one version.
    pub from_snapshot: usize,
    pub pinned: usize,
    /// Logged changes each traversal applied to the snapshot, and the µs that took.
    pub changes_applied: Percentiles,
    pub catch_up_us: Percentiles,
}

/// How soon a single-edge insert on one WebSocket connection reaches a subscriber of the
/// graph's meta row on another, in µs from the writer's call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Propagation {
    /// The subscriber's confirmed-reads setting: on, it is sent only durable changes.
    pub confirmed_reads: bool,
    pub latency: Percentiles,
}

/// Calls of one reducer from many WebSocket connections at once: single-edge inserts, or the
/// empty reducer (what the engine and the transport allow when the reducer does nothing).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Throughput {
    /// `add_edges` (one edge per call) or `noop_reducer`.
    #[serde(default = "add_edges")]
    pub reducer: String,
    pub connections: usize,
    /// Calls each connection had in flight at once (1: each waited for the previous answer).
    #[serde(default = "one")]
    pub in_flight: usize,
    /// How sources were drawn: `uniform` or `zipf s=…` (`–` for the empty reducer).
    pub keys: String,
    /// Share of inserts whose source is among the hottest 1% of candidates (0 for the empty
    /// reducer).
    pub hot_share: f64,
    /// The connections' confirmed-reads setting (each call is answered once durable when on).
    pub confirmed_reads: bool,
    /// Calls acknowledged; for inserts, the graph's edge count grew by exactly this many.
    pub inserts: u64,
    pub seconds: f64,
    pub per_second: f64,
    /// Per-call latency, µs.
    pub latency: Percentiles,
}

fn one() -> usize {
    1
}

/// Reports written before the empty-reducer phase existed timed inserts only.
fn add_edges() -> String {
    "add_edges".into()
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
            system: SYSTEMS
                .iter()
                .find(|(_, m)| *m == mode)
                .map_or("stdb", |(s, _)| *s)
                .into(),
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
                idle_ms: Some(0.0),
                path_pairs: None,
            },
            loads: Vec::new(),
            systems: Vec::new(),
            results,
            contention,
            propagation: Vec::new(),
            throughput: Vec::new(),
            under_writes: Vec::new(),
            snapshots: Vec::new(),
            mixed: Vec::new(),
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

    /// The shape `graph-bench` wrote before loads were kept per store (trimmed from
    /// `results/fb/fb.json` of that version).
    const OLDER_REPORT: &str = r#"{
      "environment": {"command": "graph-bench --dataset fb", "dataset": "fb", "seed": 42,
        "vertices": 4039, "edges": 88234, "max_degree": 1053, "mean_degree": 43.69,
        "direction": "both", "server_url": "http://127.0.0.1:3000", "server_kind": "embedded",
        "cores": 2, "memory_gib": 23.5, "date_utc": "2026-11-22T00:04:40Z"},
      "load": {"edges_sent": 88234, "seconds": 0.387, "edges_per_second": 227801.4},
      "peer_loads": [
        {"system": "neo4j", "load": {"edges_sent": 88234, "seconds": 4.4, "edges_per_second": 19839.2}},
        {"system": "postgres", "load": {"edges_sent": 88234, "seconds": 0.16, "edges_per_second": 533776.2}}],
      "peers": ["neo4j: Neo4j 5.26.0 community", "postgres: PostgreSQL 15.14"],
      "results": [{"workload": "path", "mode": "stage2",
        "e2e": {"count": 50, "p50": 700.0, "p90": 900.0, "p99": 1200.0, "max": 1300.0, "mean": 750.0},
        "server": {"count": 0, "p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0, "mean": 0.0},
        "max_hold": {"count": 50, "p50": 90.0, "p90": 100.0, "p99": 150.0, "max": 160.0, "mean": 95.0},
        "total_hold": {"count": 50, "p50": 90.0, "p90": 100.0, "p99": 150.0, "max": 160.0, "mean": 95.0},
        "transactions_p50": 1.0, "yields_p50": 0.0, "edges_scanned_p50": 2000.0, "worst_hold_us": 160}],
      "contention": []
    }"#;

    #[test]
    fn older_reports_still_read() {
        let report: Report = serde_json::from_str(OLDER_REPORT).unwrap();
        let loads: Vec<(&str, f64)> = report
            .loads
            .iter()
            .map(|l| (l.system.as_str(), l.load.seconds))
            .collect();
        assert_eq!(loads, [("stdb", 0.387), ("neo4j", 4.4), ("postgres", 0.16)]);
        assert_eq!(report.systems.len(), 2);
        assert_eq!(report.results[0].mode, "stage2");
        assert_eq!(report.results[0].transactions, 0);
        // And what this version writes reads back as it was.
        let again: Report = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(again.loads.len(), 3);
        assert_eq!(again.systems, report.systems);
    }

    #[test]
    fn samples_flatten_the_module_stats_into_their_record() {
        let sample = Sample {
            system: "stdb".into(),
            workload: "path".into(),
            index: 3,
            a: Some(1),
            b: Some(2),
            e2e_us: 812.5,
            server_us: Some(640),
            client_us: None,
            at_s: None,
            stats: Some(TxStats {
                transactions: 2,
                edges_scanned: 90,
                ..TxStats::default()
            }),
        };
        let json = serde_json::to_value(&sample).unwrap();
        assert_eq!(json["transactions"], 2);
        assert_eq!(json["edges_scanned"], 90);
        assert_eq!(serde_json::from_value::<Sample>(json).unwrap(), sample);
        let bare = Sample {
            stats: None,
            b: None,
            ..sample
        };
        let json = serde_json::to_value(&bare).unwrap();
        assert!(json.get("transactions").is_none(), "{json}");
        assert_eq!(serde_json::from_value::<Sample>(json).unwrap(), bare);
    }
}

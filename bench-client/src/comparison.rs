//! The cross-system table in the reference's shape: load, neighbor count, full BFS and shortest
//! path (p50) per system, and how SpacetimeDB's Stage 2 compares with the fastest peer.

use crate::report::{Load, fmt_us};
use crate::summary::Summary;
use std::fmt::Write as _;

/// The systems, in column order, as `--systems` names them, with the report `mode` of their rows.
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

/// One system's load, for the table.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SystemLoad {
    pub system: String,
    pub load: Load,
}

/// Markdown table: rows are metrics, columns the systems present, then "stdb vs best peer"
/// (the best peer's p50 divided by Stage 2's: above 1× Stage 2 is faster). Empty if no peer ran.
pub fn table(results: &[Summary], loads: &[SystemLoad]) -> String {
    let present: Vec<&str> = SYSTEMS
        .iter()
        .filter(|(s, m)| {
            results.iter().any(|r| r.mode == *m) || loads.iter().any(|l| l.system == *s)
        })
        .map(|(s, _)| *s)
        .collect();
    if !present.iter().any(|s| is_peer(s)) {
        return String::new();
    }
    let mut t = String::from("| metric (p50) |");
    for s in &present {
        let _ = write!(t, " {s} |");
    }
    t.push_str(" stdb vs best peer |\n|---|");
    t.push_str(&"---:|".repeat(present.len() + 1));
    t.push('\n');

    let load_us = |system: &str| {
        loads
            .iter()
            .find(|l| l.system == system)
            .map(|l| l.load.seconds * 1e6)
    };
    let mut row = |name: &str, value: &dyn Fn(&str) -> Option<f64>| {
        let _ = write!(t, "| {name} |");
        for s in &present {
            let cell = value(s).map_or_else(|| "–".to_string(), fmt_us);
            let _ = write!(t, " {cell} |");
        }
        let best_peer = present
            .iter()
            .filter(|s| is_peer(s))
            .filter_map(|s| value(s))
            .fold(None, |best: Option<f64>, v| {
                Some(best.map_or(v, |b| b.min(v)))
            });
        let ratio = match (value("stdb"), best_peer) {
            (Some(ours), Some(peer)) if ours > 0.0 => format!("{:.2}×", peer / ours),
            _ => "–".to_string(),
        };
        let _ = writeln!(t, " {ratio} |");
    };
    row("load", &load_us);
    for (workload, name) in [
        ("neighbors", "neighbor count"),
        ("bfs", "BFS full"),
        ("bfs-depth", "BFS depth-bounded"),
        ("path", "shortest path"),
    ] {
        row(name, &|system: &str| {
            let mode = mode_of(system)?;
            results
                .iter()
                .find(|r| r.workload == workload && r.mode == mode)
                .map(|r| r.e2e.p50)
        });
    }
    t
}

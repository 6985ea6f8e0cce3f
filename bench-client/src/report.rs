//! The benchmark report: a terminal table, and Markdown + JSON files with PNG charts.

use crate::charts;
use crate::comparison::{self, SystemLoad};
use crate::contention::Contention;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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

/// Human-friendly duration from µs.
pub fn fmt_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

impl Report {
    /// The results table (Markdown, which also reads well in a terminal).
    pub fn table(&self) -> String {
        let mut t = String::new();
        t.push_str("| workload | mode | runs | p50 | p90 | p99 | max | server p50 | longest tx (max) | tx over 5 ms | tx p50 | yields p50 | edges scanned p50 | from snapshot |\n");
        t.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in &self.results {
            let procedure = s.max_hold.count > 0;
            let opt = |v: String| if procedure { v } else { "–".to_string() };
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.workload,
                s.mode,
                s.e2e.count,
                fmt_us(s.e2e.p50),
                fmt_us(s.e2e.p90),
                fmt_us(s.e2e.p99),
                fmt_us(s.e2e.max),
                if s.server.count > 0 {
                    fmt_us(s.server.p50)
                } else {
                    "–".into()
                },
                opt(fmt_us(s.worst_hold_us as f64)),
                opt(format!("{} of {}", s.slow_transactions, s.transactions)),
                opt(format!("{}", s.transactions_p50)),
                opt(format!("{}", s.yields_p50)),
                opt(format!("{}", s.edges_scanned_p50)),
                opt(format!("{} of {}", s.from_snapshot, s.e2e.count)),
            );
        }
        let mut loads = self.peer_loads.clone();
        if let Some(load) = &self.load {
            loads.insert(
                0,
                SystemLoad {
                    system: "stdb".into(),
                    load: load.clone(),
                },
            );
        }
        let systems = comparison::table(&self.results, &loads);
        if !systems.is_empty() {
            t.push('\n');
            t.push_str(&systems);
        }
        if !self.contention.is_empty() {
            t.push_str("\n| writer (single-edge insert) while | traversals done | p50 | p99 | max | idle p50 | idle p99 |\n");
            t.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
            for c in &self.contention {
                let _ = writeln!(
                    t,
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    c.traversal,
                    c.traversals,
                    fmt_us(c.busy.p50),
                    fmt_us(c.busy.p99),
                    fmt_us(c.busy.max),
                    fmt_us(c.idle.p50),
                    fmt_us(c.idle.p99)
                );
            }
        }
        t
    }

    /// The heading lines: dataset, load rate, machine.
    pub fn heading(&self) -> String {
        let e = &self.environment;
        let mut h = format!(
            "dataset {} (seed {}): {} vertices, {} edges, max degree {}, mean degree {:.2}; direction {}\n",
            e.dataset, e.seed, e.vertices, e.edges, e.max_degree, e.mean_degree, e.direction
        );
        if let Some(load) = &self.load {
            let _ = writeln!(
                h,
                "load: {} edges in {:.2} s = {:.0} edges/s",
                load.edges_sent, load.seconds, load.edges_per_second
            );
        }
        for l in &self.peer_loads {
            let _ = writeln!(
                h,
                "load ({}): {} edges in {:.2} s = {:.0} edges/s",
                l.system, l.load.edges_sent, l.load.seconds, l.load.edges_per_second
            );
        }
        for peer in &self.peers {
            let _ = writeln!(h, "peer {peer}");
        }
        let _ = writeln!(
            h,
            "server: {} at {}; machine: {} cores, {:.1} GiB; {}",
            e.server_kind, e.server_url, e.cores, e.memory_gib, e.date_utc
        );
        h
    }

    /// Writes `<dir>/<dataset>.json`, the charts, and `<dir>/<dataset>.md` showing them; returns
    /// their paths. Charts are secondary: when they fail (no font installed, say) this warns and
    /// writes the rest, so that a long run never loses its numbers.
    pub fn write(&self, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let stem = dir.join(&self.environment.dataset);
        let md = stem.with_extension("md");
        let json = stem.with_extension("json");
        std::fs::write(&json, serde_json::to_string_pretty(self)?)?;
        let charts = charts::write(self, dir).unwrap_or_else(|e| {
            eprintln!("warning: no charts: {e:#}");
            Vec::new()
        });
        let mut text = format!(
            "# Benchmark: {}\n\n```\n{}\n{}```\n\n{}",
            self.environment.dataset,
            self.environment.command,
            self.heading(),
            self.table()
        );
        for chart in &charts {
            let name = chart.file_name().unwrap_or_default().to_string_lossy();
            let alt = name.trim_end_matches(".png");
            let _ = write!(text, "\n![{alt}]({})\n", name.replace(' ', "%20"));
        }
        std::fs::write(&md, text)?;
        let mut paths = vec![md, json];
        paths.extend(charts);
        Ok(paths)
    }
}

/// The command line as the report records it: the `--token` value (a secret that would sign
/// requests as its identity) is replaced by `<token>`.
pub fn recorded_command(args: impl IntoIterator<Item = String>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut hide_next = false;
    for arg in args {
        if std::mem::take(&mut hide_next) {
            out.push("<token>".into());
        } else if arg.starts_with("--token=") {
            out.push("--token=<token>".into());
        } else {
            hide_next = arg == "--token";
            out.push(arg);
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::recorded_command;

    #[test]
    fn recorded_commands_hide_the_token() {
        let args = [
            "graph-bench",
            "--token",
            "secret",
            "--runs",
            "3",
            "--token=other",
        ];
        assert_eq!(
            recorded_command(args.map(String::from)),
            "graph-bench --token <token> --runs 3 --token=<token>"
        );
    }
}

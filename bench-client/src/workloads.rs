//! Measured workloads. Every answer is checked against the reference before its timing counts:
//! a wrong answer is an error that fails the run.

use anyhow::{Context, bail, ensure};
use graph_client::graph::{
    Answer, ClientError, Direction, GraphDb, GraphError, Mode, PathResult, PathStatus, QueryStats,
    TxOptions,
};
use graph_reference::ReferenceGraph;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

/// A kind of query the benchmark measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Workload {
    NeighborCount,
    BfsFull,
    BfsDepth,
    ShortestPath,
}

impl Workload {
    pub const ALL: [Workload; 4] = [
        Workload::NeighborCount,
        Workload::BfsFull,
        Workload::BfsDepth,
        Workload::ShortestPath,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Workload::NeighborCount => "neighbors",
            Workload::BfsFull => "bfs",
            Workload::BfsDepth => "bfs-depth",
            Workload::ShortestPath => "path",
        }
    }
}

impl Workload {
    /// The `(a, b)` queries of this workload: the pairs for shortest paths, `(v, v)` for the
    /// single-vertex queries.
    pub fn inputs(self, vertices: &[u64], pairs: &[(u64, u64)]) -> Vec<(u64, u64)> {
        match self {
            Workload::ShortestPath => pairs.to_vec(),
            _ => vertices.iter().map(|&v| (v, v)).collect(),
        }
    }

    /// Runs `query(call, a, b)` on each input after `warmup` unmeasured calls (cycling through
    /// the inputs) and returns the measured results; `label` names the system in errors.
    pub fn measure<T>(
        self,
        vertices: &[u64],
        pairs: &[(u64, u64)],
        warmup: usize,
        label: &str,
        mut query: impl FnMut(u64, u64, u64) -> anyhow::Result<T>,
    ) -> anyhow::Result<Vec<T>> {
        let inputs = self.inputs(vertices, pairs);
        let mut measured = Vec::with_capacity(inputs.len());
        let calls = inputs.iter().cycle().take(warmup + inputs.len());
        for (i, &(a, b)) in calls.enumerate() {
            let result =
                query(i as u64, a, b).with_context(|| format!("{self} ({label}) on {a} → {b}"))?;
            if i >= warmup {
                measured.push(result);
            }
        }
        Ok(measured)
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.as_str() == s)
            .ok_or_else(|| format!("workload `{s}`: expected neighbors, bfs, bfs-depth or path"))
    }
}

/// One measured query.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Client-side round trip, in µs.
    pub e2e_us: f64,
    /// The server's `spacetime-execution-duration-micros`, when it sent one.
    pub server_us: Option<u64>,
    /// The module's own stats (procedures only).
    pub stats: Option<QueryStats>,
}

/// Everything one benchmark (workload × mode) needs to ask and check.
pub struct Bench<'a> {
    pub db: &'a GraphDb,
    pub reference: &'a ReferenceGraph,
    pub dir: Direction,
    pub depth: u32,
    pub tx: TxOptions,
}

impl Bench<'_> {
    /// Runs `inputs` (after `warmup` unmeasured ones) and returns the verified samples; `None`
    /// if `mode` has no implementation of `workload`.
    pub fn run(
        &self,
        workload: Workload,
        mode: Mode,
        warmup: usize,
        vertices: &[u64],
        pairs: &[(u64, u64)],
    ) -> anyhow::Result<Option<Vec<Sample>>> {
        if workload == Workload::NeighborCount && mode == Mode::Stage1Reducer {
            return Ok(None);
        }
        let samples = workload.measure(vertices, pairs, warmup, mode.as_str(), |i, a, b| {
            self.query(workload, mode, a, b, i)
        })?;
        Ok(Some(samples))
    }

    fn query(
        &self,
        workload: Workload,
        mode: Mode,
        a: u64,
        b: u64,
        query_id: u64,
    ) -> anyhow::Result<Sample> {
        let (db, dir) = (self.db, self.dir);
        let depth = (workload == Workload::BfsDepth).then_some(self.depth);
        let started = Instant::now();
        let timed = |answer_us: Option<u64>, stats: Option<QueryStats>| Sample {
            e2e_us: started.elapsed().as_secs_f64() * 1e6,
            server_us: answer_us,
            stats,
        };
        match workload {
            Workload::NeighborCount => {
                let answer = match mode {
                    Mode::Stage2 => db.neighbor_count(a, dir),
                    _ => db.neighbor_count_stage1(a, dir),
                }?;
                let sample = timed(answer.execution_us, Some(answer.value.stats));
                let want = self
                    .reference
                    .degree(a, dir)
                    .context("vertex from the reference")?;
                ensure!(
                    answer.value.count == want,
                    "count {} but the reference says {want}",
                    answer.value.count
                );
                Ok(sample)
            }
            Workload::BfsFull | Workload::BfsDepth => {
                let (levels, sample) = match mode {
                    Mode::Stage2 => {
                        let answer = db.bfs(a, dir, depth, 0, self.tx)?;
                        let sample = timed(answer.execution_us, Some(answer.value.stats));
                        (answer.value.levels, sample)
                    }
                    Mode::Stage1Procedure => {
                        let answer = db.bfs_stage1(a, dir, depth)?;
                        let sample = timed(answer.execution_us, Some(answer.value.stats));
                        (answer.value.levels, sample)
                    }
                    Mode::Stage1Reducer => {
                        let levels = db.bfs_stage1_reducer(query_id, a, dir, depth)?;
                        (levels, timed(None, None))
                    }
                };
                let want = self
                    .reference
                    .bfs_levels(a, dir, depth)
                    .context("vertex from the reference")?;
                ensure!(
                    levels == want,
                    "levels {levels:?} but the reference says {want:?}"
                );
                Ok(sample)
            }
            Workload::ShortestPath => {
                let answer = match mode {
                    Mode::Stage2 => db.shortest_path(a, b, dir, None, self.tx),
                    Mode::Stage1Procedure => db.shortest_path_stage1(a, b, dir, None),
                    Mode::Stage1Reducer => db
                        .shortest_path_stage1_reducer(query_id, a, b, dir, None)
                        .map(|path| reducer_path(a, b, path)),
                };
                let sample = match &answer {
                    // Reducer answers come back as rows, without the module's stats.
                    Ok(answer) => timed(
                        answer.execution_us,
                        (mode != Mode::Stage1Reducer).then_some(answer.value.stats),
                    ),
                    Err(_) => timed(None, None),
                };
                self.verify_path(a, b, answer.map(|a| a.value))?;
                Ok(sample)
            }
        }
    }

    fn verify_path(
        &self,
        a: u64,
        b: u64,
        got: Result<PathResult, ClientError>,
    ) -> anyhow::Result<()> {
        let want = self.reference.distance(a, b, self.dir, None);
        match (got, want) {
            (Err(ClientError::Graph(GraphError::UnknownVertex(v))), None)
                if !self.reference.contains(v) =>
            {
                Ok(())
            }
            (Err(ClientError::Server(e)), None) if e.to_string().contains("unknown vertex") => {
                Ok(())
            }
            (Ok(p), Some(None)) if p.status == PathStatus::Unreachable || p.path.is_empty() => {
                Ok(())
            }
            (Ok(p), Some(Some(d))) => {
                ensure!(
                    p.path.len() == d as usize + 1,
                    "path {:?} has {} hops, the distance is {d}",
                    p.path,
                    p.path.len().saturating_sub(1)
                );
                ensure!(
                    p.path.first() == Some(&a) && p.path.last() == Some(&b),
                    "path {:?} does not join {a} and {b}",
                    p.path
                );
                ensure!(
                    self.reference.is_path(&p.path, self.dir),
                    "{:?} is not a path",
                    p.path
                );
                Ok(())
            }
            (got, want) => bail!("got {got:?}, the reference distance is {want:?}"),
        }
    }
}

/// The reducer baseline returns bare path rows; give them the shape of a procedure answer.
fn reducer_path(source: u64, target: u64, path: Vec<u64>) -> Answer<PathResult> {
    let status = if path.is_empty() {
        PathStatus::Unreachable
    } else {
        PathStatus::Found
    };
    Answer {
        value: PathResult {
            source,
            target,
            status,
            path,
            stats: QueryStats::default(),
        },
        execution_us: None,
    }
}

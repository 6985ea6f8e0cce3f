//! The kinds of query the benchmark measures, and the queries each asks of every system.

use crate::system::Query;
use graph_client::graph::Direction;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

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

    /// This workload's queries: one per pair for shortest paths (`source → target`), one per
    /// vertex for the others; `depth` bounds the depth-bounded BFS.
    pub fn queries(
        self,
        vertices: &[u64],
        pairs: &[(u64, u64)],
        dir: Direction,
        depth: u32,
    ) -> Vec<Query> {
        match self {
            Workload::NeighborCount => vertices
                .iter()
                .map(|&vertex| Query::NeighborCount { vertex, dir })
                .collect(),
            Workload::BfsFull | Workload::BfsDepth => {
                let max_depth = (self == Workload::BfsDepth).then_some(depth);
                vertices
                    .iter()
                    .map(|&start| Query::Bfs {
                        start,
                        dir,
                        max_depth,
                    })
                    .collect()
            }
            Workload::ShortestPath => pairs
                .iter()
                .map(|&(source, target)| Query::ShortestPath {
                    source,
                    target,
                    dir,
                })
                .collect(),
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
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

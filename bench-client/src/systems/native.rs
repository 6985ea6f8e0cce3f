//! The native floor: the module's own traversal operator (`graph-traverse`), compiled natively
//! and run in the benchmark's process on an in-memory graph built from the same edges. No
//! server, no wasm, no transactions, no serialization: what Stage 2's answers would cost if
//! nothing stood between the caller and the algorithm. It answers through the same driver and
//! is verified like every system, so a report can say how far Stage 2 is from its limit. It is
//! not a peer: the comparison lists it apart (`stdb ÷ native floor`).

use crate::system::{Answer, ArcAttrs, Query, Reply, System};
use crate::workloads::Workload;
use graph_traverse::{
    AdjacencyGraph, BfsOutcome, BfsQuery, DirectionOptimizingBfs, NeighborSource, PathOutcome,
    PathQuery, ShortestPath,
};

/// The system's name in `--systems` and in reports.
pub const NAME: &str = "native";

#[derive(Default)]
pub struct Native {
    graph: AdjacencyGraph,
}

impl Native {
    pub fn new() -> Self {
        Self::default()
    }
}

impl System for Native {
    fn name(&self) -> &'static str {
        NAME
    }

    fn store(&self) -> &'static str {
        NAME
    }

    fn describe(&mut self) -> anyhow::Result<String> {
        Ok(
            "the native floor: Stage 2's operator (graph-traverse: direction-optimizing BFS, \
            balanced bidirectional shortest path) compiled natively, in the benchmark's process, \
            on an in-memory snapshot of the same edges (no server, wasm or transactions)"
                .into(),
        )
    }

    fn clear(&mut self) -> anyhow::Result<()> {
        self.graph = AdjacencyGraph::default();
        Ok(())
    }

    /// Drops the in-memory graph.
    fn release(&mut self) -> anyhow::Result<()> {
        self.clear()
    }

    /// Builds the snapshot, with the edges' labels (ids from 1 in `label_names` order) and
    /// weights when the dataset has them, as the module's snapshot keeps them.
    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> anyhow::Result<()> {
        self.graph = if attrs.has_labels() || attrs.has_weights() {
            let arcs = edges.iter().enumerate().map(|(i, &(s, d))| {
                let label = attrs.label_id(i);
                let weight = attrs.weight(i);
                (s, d, graph_traverse::ArcAttrs { label, weight })
            });
            AdjacencyGraph::with_attrs(vertices.iter().copied(), arcs)
        } else {
            AdjacencyGraph::new(vertices.iter().copied(), edges)
        };
        progress(edges.len());
        Ok(())
    }

    fn counts(&mut self) -> anyhow::Result<(u64, u64)> {
        Ok((
            self.graph.vertex_count() as u64,
            self.graph.arc_count() as u64,
        ))
    }

    fn supports(&self, workload: Workload) -> bool {
        matches!(
            workload,
            Workload::NeighborCount
                | Workload::BfsFull
                | Workload::BfsDepth
                | Workload::ShortestPath
        )
    }

    fn skip_reason(&self, workload: Workload) -> String {
        format!("the native floor runs the unlabelled workloads only, not {workload}")
    }

    fn answer(&mut self, query: &Query) -> anyhow::Result<Answer> {
        let g = &self.graph;
        let reply = match *query {
            Query::NeighborCount { vertex, dir } => {
                if !g.contains(vertex) {
                    Reply::UnknownVertex
                } else {
                    let mut found = Vec::new();
                    g.neighbors(vertex, dir, &mut found);
                    let mut ids: Vec<u64> = found.iter().map(|n| n.id).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    Reply::Count(ids.len() as u64)
                }
            }
            Query::Bfs {
                start,
                dir,
                max_depth,
            } => {
                let q = BfsQuery {
                    start,
                    dir,
                    max_depth,
                    target: None,
                    collect_limit: 0,
                };
                match DirectionOptimizingBfs::new(q, g).run(g).0 {
                    BfsOutcome::UnknownStart => Reply::UnknownVertex,
                    BfsOutcome::Visited { levels, .. } => Reply::Levels(levels),
                }
            }
            Query::ShortestPath {
                source,
                target,
                dir,
            } => {
                let q = PathQuery {
                    source,
                    target,
                    dir,
                    max_depth: None,
                };
                match ShortestPath::over_slots(q).run(g).0 {
                    PathOutcome::Found(path) => Reply::Path(path),
                    PathOutcome::Unreachable => Reply::Unreachable,
                    PathOutcome::UnknownSource | PathOutcome::UnknownTarget => Reply::UnknownVertex,
                    PathOutcome::BeyondMaxDepth => {
                        anyhow::bail!("{query}: beyond max depth, though none was set")
                    }
                }
            }
            _ => anyhow::bail!("the native floor does not run {query}"),
        };
        Ok(reply.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::verify;
    use graph_client::graph::Direction;
    use graph_reference::ReferenceGraph;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// On seeded random graphs (the first empty; sparse ids, self-loops, several components),
    /// every answer of the floor agrees with the reference: neighbor counts, full and
    /// depth-bounded BFS levels (depth 0 included) and shortest paths, unknown vertices too.
    #[test]
    fn the_floor_answers_as_the_reference_does() {
        for seed in 0..40u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = if seed == 0 {
                0
            } else {
                rng.gen_range(1..40u64)
            };
            let id = |i: u64| i * 7 + 3;
            let mut edges: Vec<(u64, u64)> = (0..n * 2)
                .map(|_| (id(rng.gen_range(0..n)), id(rng.gen_range(0..n))))
                .collect();
            edges.sort_unstable();
            edges.dedup();
            let reference = ReferenceGraph::new(edges.iter().copied());
            let vertices = reference.vertices().to_vec();
            let mut native = Native::new();
            native
                .load(&vertices, &edges, &ArcAttrs::default(), &mut |_| {})
                .unwrap();
            assert_eq!(
                native.counts().unwrap(),
                (vertices.len() as u64, edges.len() as u64)
            );
            let mut probes = vertices.clone();
            probes.truncate(8);
            probes.push(1); // no vertex has this id
            let mut queries = Vec::new();
            for &v in &probes {
                for dir in [Direction::Out, Direction::In, Direction::Both] {
                    queries.push(Query::NeighborCount { vertex: v, dir });
                    for max_depth in [None, Some(0), Some(1), Some(3)] {
                        queries.push(Query::Bfs {
                            start: v,
                            dir,
                            max_depth,
                        });
                    }
                    for &w in &probes {
                        queries.push(Query::ShortestPath {
                            source: v,
                            target: w,
                            dir,
                        });
                    }
                }
            }
            for q in &queries {
                let answer = native.answer(q).unwrap();
                verify(&reference, q, &answer.reply)
                    .unwrap_or_else(|e| panic!("seed {seed}: {q}: {e:#}"));
            }
        }
    }
}

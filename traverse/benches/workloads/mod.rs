//! The benchmark workloads, shared by the criterion bench (`benches/algorithms.rs`) and the
//! table printer (`examples/algo_table.rs`), so both measure the same thing.
//!
//! - Rings of successors (`graph_reference::generate::ring`: vertex `i` has arcs to `i+1..=i+3`),
//!   followed `Out` from vertex 1, as the earlier module's algorithm table measured them.
//! - The native floor: the DBLP-sized and (with `GRAPH_BENCH_LJ=1`) LiveJournal-sized Chung-Lu
//!   stand-ins (`chung_lu(_, 42)`), undirected (`Direction::Both`), from fixed starts and pairs.
//! - What a label filter costs: the DBLP-sized stand-in with [`LABELS`] random edge labels,
//!   each traversal unfiltered and through a filter that names every label (the same visited
//!   set, every arc's label read and tested).

#![allow(dead_code)] // each user takes what it needs

use graph_reference::generate::{ChungLu, DBLP, LIVEJOURNAL, chung_lu, ring};
use graph_traverse::{
    AdjacencyGraph, ArcAttrs, ArcFilter, Bfs, BfsQuery, DenseSource, Dfs, DfsQuery, Direction,
    DirectionOptimizingBfs, FilteredGraph, PathOutcome, PathQuery, ShortestPath, Switching, Work,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Ring sizes of the table, and the sizes its depth-bounded rows use.
pub const RING_SIZES: [u64; 3] = [100, 1_000, 10_000];
pub const BOUNDED_SIZES: [u64; 2] = [100, 10_000];
pub const DEPTHS: [u32; 3] = [3, 5, 10];

pub fn ring_graph(n: u64) -> AdjacencyGraph {
    AdjacencyGraph::new([], &ring(n))
}

/// BFS from vertex 1 over the ring (top-down, as the module runs it through its indexes).
pub fn ring_bfs(g: &AdjacencyGraph, n: u64, max_depth: Option<u32>) -> (u64, Work) {
    let q = BfsQuery {
        start: 1,
        dir: Direction::Out,
        max_depth,
        target: None,
        collect_limit: 0,
    };
    let (outcome, work) = Bfs::new(q, Some(n)).run(g);
    (visited(outcome), work)
}

/// The same BFS, direction-optimizing (it stays top-down on a ring: frontiers of 3 vertices).
pub fn ring_bfs_do(g: &AdjacencyGraph, max_depth: Option<u32>) -> (u64, Work) {
    let q = BfsQuery {
        start: 1,
        dir: Direction::Out,
        max_depth,
        target: None,
        collect_limit: 0,
    };
    let (outcome, work) = DirectionOptimizingBfs::new(q, g).run(g);
    (visited(outcome), work)
}

pub fn ring_dfs(g: &AdjacencyGraph, n: u64, max_depth: Option<u32>) -> (u64, Work) {
    let q = DfsQuery {
        start: 1,
        dir: Direction::Out,
        max_depth,
        collect_limit: 0,
    };
    match Dfs::new(q, Some(n)).run(g) {
        (graph_traverse::DfsOutcome::Visited { visited, .. }, work) => (visited, work),
        (outcome, _) => panic!("{outcome:?}"),
    }
}

/// The table's pairs: 1 → 4 (one hop) and 1 → n/2 + 1 (n/6 hops, rounded up).
pub fn ring_pairs(n: u64) -> [(&'static str, u64, u64); 2] {
    [("near", 1, 4), ("far", 1, n / 2 + 1)]
}

/// Balanced bidirectional shortest path, over slots as the module's snapshot runs it; returns
/// the hops and the work.
pub fn path(g: &AdjacencyGraph, source: u64, target: u64, dir: Direction) -> (Option<u64>, Work) {
    let q = PathQuery {
        source,
        target,
        dir,
        max_depth: None,
    };
    let (outcome, work) = ShortestPath::over_slots(q).run(g);
    let hops = match outcome {
        PathOutcome::Found(p) => Some(p.len() as u64 - 1),
        _ => None,
    };
    (hops, work)
}

fn visited(outcome: graph_traverse::BfsOutcome) -> u64 {
    match outcome {
        graph_traverse::BfsOutcome::Visited { levels, .. } => levels.iter().sum(),
        other => panic!("{other:?}"),
    }
}

/// A Chung-Lu stand-in, built once, with its fixed starts and pairs.
pub struct Floor {
    pub name: &'static str,
    pub graph: AdjacencyGraph,
    /// Largest id + 1: the top-down `Bfs`'s dense visited set.
    pub id_bound: u64,
    pub starts: Vec<u64>,
    pub pairs: Vec<(u64, u64)>,
}

/// The stand-ins to measure: DBLP-sized always, LiveJournal-sized when `GRAPH_BENCH_LJ=1`
/// (about 7 s and 1 GiB to generate, 1.3 GiB held while measured).
pub fn floor_graphs() -> Vec<(&'static str, ChungLu)> {
    let mut graphs = vec![("DBLP-sized", DBLP)];
    if std::env::var("GRAPH_BENCH_LJ").is_ok_and(|v| v == "1") {
        graphs.push(("LJ-sized", LIVEJOURNAL));
    }
    graphs
}

/// Generates the graph (seed 42) and picks 8 starts and `pairs` pairs uniformly among its
/// vertices (seeded, so every run measures the same queries).
pub fn floor(name: &'static str, p: &ChungLu, pairs: usize) -> Floor {
    floor_with(name, p, pairs, |edges| AdjacencyGraph::new([], &edges))
}

/// As [`floor`], with the graph that `build` makes of the generated edges.
fn floor_with(
    name: &'static str,
    p: &ChungLu,
    pairs: usize,
    build: impl FnOnce(Vec<(u64, u64)>) -> AdjacencyGraph,
) -> Floor {
    let edges = chung_lu(p, 42);
    let id_bound = edges.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0) + 1;
    let graph = build(edges);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let n = graph.slots() as u32;
    let pick = |rng: &mut ChaCha8Rng| graph.vertex(rng.gen_range(0..n));
    let starts = (0..8).map(|_| pick(&mut rng)).collect();
    let pairs = (0..pairs)
        .map(|_| (pick(&mut rng), pick(&mut rng)))
        .collect();
    Floor {
        name,
        graph,
        id_bound,
        starts,
        pairs,
    }
}

fn full(start: u64) -> BfsQuery {
    BfsQuery {
        start,
        dir: Direction::Both,
        max_depth: None,
        target: None,
        collect_limit: 0,
    }
}

impl Floor {
    /// Full BFS, top-down through the `NeighborSource` interface (the module's index path).
    pub fn bfs_top_down(&self, start: u64) -> Work {
        Bfs::new(full(start), Some(self.id_bound))
            .run(&self.graph)
            .1
    }

    /// Full BFS, every level top-down, on slots.
    pub fn bfs_top_down_slots(&self, start: u64) -> Work {
        DirectionOptimizingBfs::new(full(start), &self.graph)
            .with_switching(Switching::TOP_DOWN)
            .run(&self.graph)
            .1
    }

    /// Full BFS, direction-optimizing.
    pub fn bfs_direction_optimizing(&self, start: u64) -> Work {
        DirectionOptimizingBfs::new(full(start), &self.graph)
            .run(&self.graph)
            .1
    }

    pub fn shortest_path(&self, (source, target): (u64, u64)) -> (Option<u64>, Work) {
        path(&self.graph, source, target, Direction::Both)
    }
}

/// Edge labels of the labelled stand-in: ids `1..=LABELS`.
pub const LABELS: u32 = 8;

/// The DBLP-sized stand-in with a random label on every edge (seeded), and the filter that
/// names every label.
pub struct Labelled {
    pub floor: Floor,
    pub every_label: ArcFilter,
}

pub fn labelled(pairs: usize) -> Labelled {
    let floor = floor_with("DBLP-sized", &DBLP, pairs, |edges| {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let arcs = edges.into_iter().map(|(s, d)| {
            let label = rng.gen_range(1..=LABELS);
            (s, d, ArcAttrs { label, weight: 1.0 })
        });
        AdjacencyGraph::with_attrs([], arcs)
    });
    Labelled {
        floor,
        every_label: ArcFilter::labels(1..=LABELS),
    }
}

impl Labelled {
    /// The graph through the filter that names every label.
    pub fn filtered(&self) -> FilteredGraph<'_> {
        FilteredGraph::new(&self.floor.graph, &self.every_label)
    }

    /// Direction-optimizing BFS from `start`, to `max_depth` levels if given, unfiltered or
    /// through the filter; returns the vertices reached.
    pub fn bfs(&self, start: u64, max_depth: Option<u32>, filtered: bool) -> u64 {
        let q = BfsQuery {
            max_depth,
            ..full(start)
        };
        let outcome = match filtered {
            false => DirectionOptimizingBfs::new(q, &self.floor.graph).run(&self.floor.graph),
            true => {
                let src = self.filtered();
                DirectionOptimizingBfs::new(q, &src).run(&src)
            }
        };
        visited(outcome.0)
    }

    /// Balanced bidirectional shortest path, unfiltered or through the filter; returns the hops.
    pub fn shortest_path(&self, (source, target): (u64, u64), filtered: bool) -> Option<u64> {
        let q = PathQuery {
            source,
            target,
            dir: Direction::Both,
            max_depth: None,
        };
        let outcome = match filtered {
            false => ShortestPath::over_slots(q).run(&self.floor.graph).0,
            true => ShortestPath::over_slots(q).run(&self.filtered()).0,
        };
        match outcome {
            PathOutcome::Found(p) => Some(p.len() as u64 - 1),
            _ => None,
        }
    }
}

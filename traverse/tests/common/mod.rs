//! Seeded random test graphs shared by the integration tests.

#![allow(dead_code)] // each test file uses its own subset

use graph_traverse::{
    AdjacencyGraph, DenseSource, Direction, ListCursor, Neighbor, NeighborSource, PathOutcome,
    PathQuery, Progress, ShortestPath,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};

/// A test graph: vertex ids (sparse, some isolated) and arcs (with self-loops and duplicates).
pub struct TestGraph {
    pub vertices: Vec<u64>,
    pub arcs: Vec<(u64, u64)>,
}

/// A random arc weight for weighted-path tests: zero one time in `one_in`, a fraction in
/// 0..10 one time in `one_in`, else an integer in `1..max_int` (so that ties are common and sums
/// exact).
pub fn random_weight(rng: &mut ChaCha8Rng, one_in: u32, max_int: u32) -> f32 {
    match rng.gen_range(0..one_in) {
        0 => 0.0,
        1 => rng.gen_range(0.0..10.0f32),
        _ => rng.gen_range(1..max_int) as f32,
    }
}

/// Generates a random graph of 1 to 59 vertices: uniform endpoints or power-law (Chung-Lu-like)
/// endpoints.
pub fn random_graph(seed: u64) -> TestGraph {
    random_graph_below(seed, 60)
}

/// [`random_graph`] with fewer than `max_vertices` vertices (at least 2), at most three arcs a
/// vertex.
pub fn random_graph_below(seed: u64, max_vertices: usize) -> TestGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.gen_range(1..max_vertices);
    let sparse = rng.gen_bool(0.5);
    let ids: Vec<u64> = (0..n as u64)
        .map(|i| if sparse { i * 7919 + 13 } else { i })
        .collect();
    let power_law = rng.gen_bool(0.5);
    let weights: Vec<f64> = (0..n).map(|i| 1.0 / (i as f64 + 1.0).powf(0.7)).collect();
    let total: f64 = weights.iter().sum();
    let pick = |rng: &mut ChaCha8Rng| -> u64 {
        if !power_law {
            return ids[rng.gen_range(0..n)];
        }
        let mut x = rng.gen_range(0.0..total);
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return ids[i];
            }
            x -= w;
        }
        ids[n - 1]
    };
    let m = rng.gen_range(0..n * 3);
    let mut arcs = Vec::with_capacity(m + 4);
    for _ in 0..m {
        let a = pick(&mut rng);
        let b = pick(&mut rng);
        arcs.push((a, b));
    }
    // Deliberate self-loops and duplicates.
    if n > 1 && !arcs.is_empty() {
        arcs.push(arcs[0]);
        arcs.push((ids[1], ids[1]));
    }
    TestGraph {
        vertices: ids,
        arcs,
    }
}

/// A source that returns every list in the reverse of the graph's order, at most `page` arcs a
/// call: a search that depends on the order or the paging of lists gives another answer here.
pub struct ReversedPages<'a> {
    pub graph: &'a AdjacencyGraph,
    pub page: usize,
}

impl NeighborSource for ReversedPages<'_> {
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<Neighbor>,
    ) -> bool {
        let mut all = Vec::new();
        self.graph.neighbors(v, dir, &mut all);
        all.reverse();
        let from = cursor.next as usize;
        let to = all.len().min(from + max.max(1).min(self.page));
        out.extend_from_slice(&all[from..to]);
        cursor.next = to as u64;
        to == all.len()
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        self.graph.degree(v, dir)
    }

    fn contains(&self, v: u64) -> bool {
        self.graph.contains(v)
    }
}

/// Reference distances from `start`, by a textbook BFS over an adjacency map.
pub fn reference_distances(g: &TestGraph, start: u64, dir: Direction) -> HashMap<u64, u32> {
    let mut adj: HashMap<u64, Vec<u64>> = HashMap::new();
    for &(s, d) in &g.arcs {
        if dir != Direction::In {
            adj.entry(s).or_default().push(d);
        }
        if dir != Direction::Out {
            adj.entry(d).or_default().push(s);
        }
    }
    let mut dist = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in adj.get(&v).into_iter().flatten() {
            if !dist.contains_key(&w) {
                dist.insert(w, dist[&v] + 1);
                queue.push_back(w);
            }
        }
    }
    dist
}

pub fn reference_levels(dist: &HashMap<u64, u32>, max_depth: Option<u32>) -> Vec<u64> {
    let mut levels = Vec::new();
    for &d in dist.values() {
        if max_depth.is_some_and(|m| d > m) {
            continue;
        }
        if levels.len() <= d as usize {
            levels.resize(d as usize + 1, 0);
        }
        levels[d as usize] += 1;
    }
    levels
}

/// Runs the shortest path search by id and by slot on `g`, in steps of `budget` units, and
/// checks that they agree on everything, the work included: they are one search, reading the
/// graph two ways. Returns the outcome.
pub fn path_by_id_and_slot<G: DenseSource + ?Sized>(
    g: &G,
    q: PathQuery,
    budget: u64,
) -> PathOutcome {
    let mut by_id = ShortestPath::new(q.clone());
    while by_id.step(g, budget) == Progress::Suspended {}
    let mut by_slot = ShortestPath::over_slots(q.clone());
    while by_slot.step(g, budget) == Progress::Suspended {}
    let (outcome, work) = by_id.into_outcome();
    assert_eq!(
        by_slot.into_outcome(),
        (outcome.clone(), work),
        "{q:?}: by slot, budget {budget}"
    );
    outcome
}

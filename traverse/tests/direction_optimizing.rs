//! The direction-optimizing BFS against a textbook BFS on seeded random graphs: exact levels,
//! and the collected vertices in non-decreasing depth, whatever the budget, the switching
//! thresholds (never, sometimes or always bottom-up), the direction and the depth bound.

use graph_traverse::{
    AdjacencyGraph, ArcFilter, Bfs, BfsOutcome, BfsQuery, DenseSource, Direction,
    DirectionOptimizingBfs, FilteredGraph, Progress, Switching,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

mod common;
use common::{TestGraph, random_graph, random_graph_below, reference_distances, reference_levels};

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

/// Bottom-up as soon as the frontier has an arc, and never back.
const ALWAYS_BOTTOM_UP: Switching = Switching {
    alpha: u64::MAX,
    beta: u64::MAX,
};
/// Bottom-up only once the frontier's arcs exceed all unexplored ones; back when it shrinks.
const EAGER_RETURN: Switching = Switching { alpha: 1, beta: 1 };

/// Runs the search in steps of `budget`, reserving before each, and checks each step's spend.
fn run<S: DenseSource + ?Sized>(
    src: &S,
    q: BfsQuery,
    switching: Switching,
    budget: u64,
) -> (BfsOutcome, u32) {
    let mut bfs = DirectionOptimizingBfs::new(q, src).with_switching(switching);
    let mut steps = 0u64;
    loop {
        bfs.reserve(budget);
        let before = bfs.work().units();
        let progress = bfs.step(src, budget);
        let spent = bfs.work().units() - before;
        assert!(
            spent <= budget.saturating_add(2),
            "a step spent {spent} > {budget} + 2"
        );
        if progress == Progress::Done {
            break;
        }
        steps += 1;
        assert!(steps < 10_000_000, "no progress");
    }
    let bottom_up = bfs.bottom_up_levels();
    (bfs.into_outcome().0, bottom_up)
}

/// Checks a BFS answer against reference distances: exact levels, and `vertices` the first
/// `limit` vertices in non-decreasing depth (all of every shallower depth before any deeper).
fn check_answer(
    outcome: &BfsOutcome,
    dist: &HashMap<u64, u32>,
    max_depth: Option<u32>,
    limit: usize,
    ctx: &str,
) {
    let BfsOutcome::Visited {
        levels,
        vertices,
        path,
    } = outcome
    else {
        panic!("{ctx}: start should exist");
    };
    let want = reference_levels(dist, max_depth);
    assert_eq!(levels, &want, "{ctx}");
    assert_eq!(path, &None);
    let visited: u64 = want.iter().sum();
    assert_eq!(vertices.len() as u64, visited.min(limit as u64), "{ctx}");
    let depths: Vec<u32> = vertices
        .iter()
        .map(|v| {
            *dist
                .get(v)
                .unwrap_or_else(|| panic!("{ctx}: {v} not reachable"))
        })
        .collect();
    assert!(depths.windows(2).all(|w| w[0] <= w[1]), "{ctx}: {depths:?}");
    let mut per_depth = vec![0u64; want.len()];
    for &d in &depths {
        per_depth[d as usize] += 1;
    }
    if let Some(&last) = depths.last() {
        assert_eq!(per_depth[..last as usize], want[..last as usize], "{ctx}");
    }
    let mut distinct = vertices.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), vertices.len(), "{ctx}: a vertex twice");
}

fn check_graph(seed: u64, tg: &TestGraph, rng: &mut ChaCha8Rng) -> (u32, u32) {
    let g = AdjacencyGraph::new(tg.vertices.iter().copied(), &tg.arcs);
    let (mut searches, mut bottom_up) = (0, 0);
    for &start in &tg.vertices {
        let dir = DIRS[rng.gen_range(0..3)];
        let max_depth = [None, None, Some(0), Some(1), Some(2), Some(4)][rng.gen_range(0..6)];
        let limit = [usize::MAX, usize::MAX, 0, 1, 7][rng.gen_range(0..5)];
        let dist = reference_distances(tg, start, dir);
        let q = BfsQuery {
            start,
            dir,
            max_depth,
            target: None,
            collect_limit: limit,
        };
        // The same answer, vertex order included, whatever the budget.
        let mut first: Option<BfsOutcome> = None;
        for switching in [Switching::default(), ALWAYS_BOTTOM_UP, EAGER_RETURN] {
            for budget in [1, 3, 50, u64::MAX] {
                let ctx = format!(
                    "seed {seed}: bfs({start}, {dir}, {max_depth:?}) {switching:?} budget {budget}"
                );
                let (outcome, levels_up) = run(&g, q.clone(), switching, budget);
                check_answer(&outcome, &dist, max_depth, limit, &ctx);
                if switching == ALWAYS_BOTTOM_UP {
                    if let Some(first) = &first {
                        assert_eq!(&outcome, first, "{ctx}: another order");
                    } else {
                        first = Some(outcome);
                    }
                }
                bottom_up += (levels_up > 0) as u32;
                searches += 1;
            }
        }
    }
    (searches, bottom_up)
}

#[test]
fn levels_match_reference_on_random_graphs() {
    let (mut searches, mut bottom_up) = (0, 0);
    for seed in 0..250 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xd0b);
        let (s, b) = check_graph(seed, &random_graph(seed), &mut rng);
        searches += s;
        bottom_up += b;
    }
    for seed in 2_000..2_040 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xd0b);
        let (s, b) = check_graph(seed, &random_graph_below(seed, 400), &mut rng);
        searches += s;
        bottom_up += b;
    }
    assert!(
        searches > 50_000 && bottom_up > searches / 4,
        "{searches} searches, {bottom_up} with bottom-up levels"
    );
}

#[test]
fn agrees_with_top_down_bfs_on_skewed_chung_lu_graphs() {
    use graph_reference::generate::{ChungLu, FACEBOOK, chung_lu};
    // ego-Facebook-sized, and a 20,000-vertex graph with DBLP's shape and sparse ids.
    let small_dblp = ChungLu {
        vertices: 20_000,
        edges: 66_000,
        exponent: 3.0,
        max_weight: 200.0,
        id_spread: 1.35,
    };
    for (p, seed) in [(FACEBOOK, 1), (small_dblp, 2)] {
        let edges = chung_lu(&p, seed);
        let g = AdjacencyGraph::new([], &edges);
        let reference = graph_reference::ReferenceGraph::new(edges.iter().copied());
        for (i, &start) in reference.sample_vertices(6, seed).iter().enumerate() {
            let dir = DIRS[i % 3];
            for max_depth in [None, Some(2)] {
                let q = BfsQuery {
                    start,
                    dir,
                    max_depth,
                    target: None,
                    collect_limit: usize::MAX,
                };
                let want = reference.bfs_levels(start, dir, max_depth).unwrap();
                let (top_down, _) = Bfs::new(q.clone(), None).run(&g);
                for budget in [977, u64::MAX] {
                    let (outcome, bottom_up) = run(&g, q.clone(), Switching::default(), budget);
                    let BfsOutcome::Visited {
                        levels, vertices, ..
                    } = &outcome
                    else {
                        panic!("{start} exists");
                    };
                    assert_eq!(levels, &want, "{start} {dir} {max_depth:?}");
                    let BfsOutcome::Visited { vertices: td, .. } = &top_down else {
                        panic!()
                    };
                    let (mut a, mut b) = (vertices.clone(), td.clone());
                    a.sort_unstable();
                    b.sort_unstable();
                    assert_eq!(a, b, "{start} {dir} {max_depth:?}: another vertex set");
                    if max_depth.is_none() && dir == Direction::Both {
                        assert!(bottom_up > 0, "a full undirected BFS goes bottom-up");
                    }
                }
            }
        }
    }
}

#[test]
fn edge_cases() {
    let q = |start, max_depth, collect_limit| BfsQuery {
        start,
        dir: Direction::Both,
        max_depth,
        target: None,
        collect_limit,
    };
    let visited = |levels: &[u64], vertices: &[u64]| BfsOutcome::Visited {
        levels: levels.to_vec(),
        vertices: vertices.to_vec(),
        path: None,
    };
    let empty = AdjacencyGraph::new([], &[]);
    for budget in [1, u64::MAX] {
        let bu = |src: &dyn DenseSource, q: BfsQuery| run(src, q, ALWAYS_BOTTOM_UP, budget).0;
        assert_eq!(bu(&empty, q(1, None, 5)), BfsOutcome::UnknownStart);
        // 1 → 2 → 3, 3 → 3, 1 → 2 twice, 4 isolated (it has a slot, with no arcs).
        let g = AdjacencyGraph::new([4], &[(1, 2), (2, 3), (3, 3), (1, 2)]);
        assert_eq!(bu(&g, q(9, None, 5)), BfsOutcome::UnknownStart);
        assert_eq!(bu(&g, q(1, Some(0), 5)), visited(&[1], &[1]));
        assert_eq!(bu(&g, q(1, None, 5)), visited(&[1, 1, 1], &[1, 2, 3]));
        assert_eq!(bu(&g, q(1, None, 2)), visited(&[1, 1, 1], &[1, 2]));
        assert_eq!(bu(&g, q(4, None, 5)), visited(&[1], &[4]));
        assert_eq!(bu(&g, q(3, Some(1), 0)), visited(&[1, 1], &[]));
        // A vertex without a slot that exists.
        // (As the module's snapshot knows vertices without arcs.)
        let all = ArcFilter::all();
        let with = FilteredGraph {
            isolated: vec![77],
            ..FilteredGraph::new(&g, &all)
        };
        assert_eq!(bu(&with, q(77, None, 5)), visited(&[1], &[77]));
        assert_eq!(bu(&with, q(77, None, 0)), visited(&[1], &[]));
        assert_eq!(bu(&with, q(78, None, 5)), BfsOutcome::UnknownStart);
    }
}

#[test]
fn a_bottom_up_level_is_split_across_steps() {
    // A hub 0 with 4,000 leaves, each leaf with one more: the level of leaves is expanded
    // bottom-up over the 8,001 slots, in steps of 100 units.
    let mut arcs: Vec<(u64, u64)> = (1..=4000).map(|i| (0, i)).collect();
    arcs.extend((1..=4000).map(|i| (i, 10_000 + i)));
    let g = AdjacencyGraph::new([], &arcs);
    let q = BfsQuery {
        start: 0,
        dir: Direction::Out,
        max_depth: None,
        target: None,
        collect_limit: 0,
    };
    let mut bfs = DirectionOptimizingBfs::new(q, &g);
    let mut steps = 0;
    while bfs.step(&g, 100) == Progress::Suspended {
        steps += 1;
    }
    assert!(bfs.bottom_up_levels() > 0);
    assert!(steps > 50, "{steps} steps");
    let (outcome, work) = bfs.into_outcome();
    assert_eq!(
        outcome,
        BfsOutcome::Visited {
            levels: vec![1, 4000, 4000],
            vertices: vec![],
            path: None
        }
    );
    // Bottom-up, each leaf reads one incoming arc at most, where top-down would read 8,000.
    assert!(work.arcs_scanned < 16_000, "{work:?}");
}

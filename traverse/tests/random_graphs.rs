//! The traversal operator against a plain reference BFS on seeded random graphs.

use graph_traverse::{
    AdjacencyGraph, Bfs, BfsOutcome, BfsQuery, Direction, ListCursor, NeighborSource, PathOutcome,
    PathQuery, Progress, Search, ShortestPath,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

mod common;
use common::{TestGraph, path_by_id_and_slot, random_graph, reference_distances, reference_levels};

fn is_path(g: &TestGraph, path: &[u64], dir: Direction) -> bool {
    let arcs: HashSet<(u64, u64)> = g.arcs.iter().copied().collect();
    path.windows(2).all(|w| match dir {
        Direction::Out => arcs.contains(&(w[0], w[1])),
        Direction::In => arcs.contains(&(w[1], w[0])),
        Direction::Both => arcs.contains(&(w[0], w[1])) || arcs.contains(&(w[1], w[0])),
    })
}

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

/// Runs a BFS either in one go or in many 1..5-unit steps (as across many transactions).
fn run_bfs(g: &AdjacencyGraph, q: BfsQuery, bound: Option<u64>, budget: u64) -> BfsOutcome {
    let mut bfs = Bfs::new(q, bound);
    while bfs.step(g, budget) == Progress::Suspended {}
    bfs.into_outcome().0
}

#[test]
fn bfs_levels_match_reference_on_random_graphs() {
    for seed in 0..250 {
        let tg = random_graph(seed);
        let g = AdjacencyGraph::new(tg.vertices.iter().copied(), &tg.arcs);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xbf5);
        let bound = tg.vertices.iter().max().map(|m| m + 1);
        for _ in 0..4 {
            let start = tg.vertices[rng.gen_range(0..tg.vertices.len())];
            let dir = DIRS[rng.gen_range(0..3)];
            let max_depth = [None, Some(0), Some(1), Some(2), Some(5)][rng.gen_range(0..5)];
            let dist = reference_distances(&tg, start, dir);
            let want = reference_levels(&dist, max_depth);
            let budget = [1, 3, u64::MAX][rng.gen_range(0..3)];
            let dense = [None, bound, Some(3)][rng.gen_range(0..3)];
            let q = BfsQuery {
                start,
                dir,
                max_depth,
                target: None,
                collect_limit: usize::MAX,
            };
            let BfsOutcome::Visited {
                levels,
                vertices,
                path,
            } = run_bfs(&g, q, dense, budget)
            else {
                panic!("seed {seed}: start {start} should exist");
            };
            assert_eq!(
                levels, want,
                "seed {seed} start {start} {dir:?} depth {max_depth:?}"
            );
            assert_eq!(path, None);
            // Every vertex exactly once, in non-decreasing distance order.
            let got: HashSet<u64> = vertices.iter().copied().collect();
            assert_eq!(got.len(), vertices.len(), "seed {seed}: duplicate vertex");
            let want_set: HashSet<u64> = dist
                .iter()
                .filter(|(_, d)| max_depth.is_none_or(|m| **d <= m))
                .map(|(v, _)| *v)
                .collect();
            assert_eq!(got, want_set, "seed {seed}");
            assert!(vertices.windows(2).all(|w| dist[&w[0]] <= dist[&w[1]]));
        }
    }
}

#[test]
fn shortest_paths_match_reference_distances_on_random_graphs() {
    let mut found = 0;
    let mut absent = 0;
    for seed in 0..300 {
        let tg = random_graph(seed);
        let g = AdjacencyGraph::new(tg.vertices.iter().copied(), &tg.arcs);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5a7);
        for _ in 0..6 {
            let source = tg.vertices[rng.gen_range(0..tg.vertices.len())];
            let target = tg.vertices[rng.gen_range(0..tg.vertices.len())];
            let dir = DIRS[rng.gen_range(0..3)];
            let max_depth = [None, None, Some(0), Some(1), Some(3)][rng.gen_range(0..5)];
            let budget = [1, 2, 7, u64::MAX][rng.gen_range(0..4)];
            let want = reference_distances(&tg, source, dir).get(&target).copied();
            let q = PathQuery {
                source,
                target,
                dir,
                max_depth,
            };
            let ctx = format!("seed {seed}: {source}->{target} {dir:?} max {max_depth:?}");
            match (path_by_id_and_slot(&g, q.clone(), budget), want) {
                (PathOutcome::Found(path), Some(d)) => {
                    assert!(max_depth.is_none_or(|m| d <= m), "{ctx}: too long");
                    assert_eq!(path.len() as u32 - 1, d, "{ctx}: {path:?} not shortest");
                    assert_eq!((path[0], *path.last().unwrap()), (source, target), "{ctx}");
                    assert!(is_path(&tg, &path, dir), "{ctx}: {path:?} is not a path");
                    found += 1;
                }
                (PathOutcome::Unreachable, None) => absent += 1,
                (PathOutcome::BeyondMaxDepth, want) => {
                    let m = max_depth.expect("only with a depth limit");
                    assert!(
                        want.is_none_or(|d| d > m),
                        "{ctx}: path within limit missed"
                    );
                    absent += 1;
                }
                (got, want) => panic!("{ctx}: got {got:?}, reference distance {want:?}"),
            }
            // The Stage-1 style unidirectional search must agree on the distance.
            let bq = BfsQuery {
                start: source,
                dir,
                max_depth,
                target: Some(target),
                collect_limit: 0,
            };
            let BfsOutcome::Visited { path, .. } = run_bfs(&g, bq, None, budget) else {
                panic!("{ctx}: source exists");
            };
            match (path, want) {
                (Some(p), Some(d)) => {
                    assert_eq!(p.len() as u32 - 1, d, "{ctx}: unidirectional");
                    assert!(is_path(&tg, &p, dir), "{ctx}: unidirectional {p:?}");
                }
                (None, want) => {
                    assert!(
                        want.is_none_or(|d| max_depth.is_some_and(|m| d > m)),
                        "{ctx}"
                    );
                }
                (Some(p), None) => panic!("{ctx}: unidirectional invented {p:?}"),
            }
        }
    }
    assert!(
        found > 300 && absent > 100,
        "too few cases exercised: {found} found, {absent} absent"
    );
}

#[test]
fn edge_cases() {
    let empty = AdjacencyGraph::new([], &[]);
    let q = BfsQuery {
        start: 1,
        dir: Direction::Both,
        max_depth: None,
        target: None,
        collect_limit: 9,
    };
    assert_eq!(Bfs::new(q, None).run(&empty).0, BfsOutcome::UnknownStart);
    let pq = |source, target| PathQuery {
        source,
        target,
        dir: Direction::Out,
        max_depth: None,
    };
    assert_eq!(
        path_by_id_and_slot(&empty, pq(1, 2), u64::MAX),
        PathOutcome::UnknownSource
    );

    // 1 → 2 → 3, 3 → 3 (self-loop), 1 → 2 twice, 4 isolated.
    let g = AdjacencyGraph::new([4], &[(1, 2), (2, 3), (3, 3), (1, 2)]);
    assert_eq!(
        path_by_id_and_slot(&g, pq(1, 9), u64::MAX),
        PathOutcome::UnknownTarget
    );
    assert_eq!(
        path_by_id_and_slot(&g, pq(3, 3), u64::MAX),
        PathOutcome::Found(vec![3])
    );
    assert_eq!(
        path_by_id_and_slot(&g, pq(1, 3), u64::MAX),
        PathOutcome::Found(vec![1, 2, 3])
    );
    assert_eq!(
        path_by_id_and_slot(&g, pq(3, 1), u64::MAX),
        PathOutcome::Unreachable
    );
    assert_eq!(
        path_by_id_and_slot(&g, pq(1, 4), u64::MAX),
        PathOutcome::Unreachable
    );
    let limited = PathQuery {
        max_depth: Some(1),
        ..pq(1, 3)
    };
    assert_eq!(
        path_by_id_and_slot(&g, limited, u64::MAX),
        PathOutcome::BeyondMaxDepth
    );
    let zero = PathQuery {
        max_depth: Some(0),
        ..pq(1, 1)
    };
    assert_eq!(
        path_by_id_and_slot(&g, zero, u64::MAX),
        PathOutcome::Found(vec![1])
    );

    let depth0 = BfsQuery {
        start: 1,
        dir: Direction::Out,
        max_depth: Some(0),
        target: None,
        collect_limit: 9,
    };
    let want = BfsOutcome::Visited {
        levels: vec![1],
        vertices: vec![1],
        path: None,
    };
    assert_eq!(Bfs::new(depth0, None).run(&g).0, want);
    let isolated = BfsQuery {
        start: 4,
        dir: Direction::Both,
        max_depth: None,
        target: None,
        collect_limit: 0,
    };
    let want = BfsOutcome::Visited {
        levels: vec![1],
        vertices: vec![],
        path: None,
    };
    assert_eq!(Bfs::new(isolated, None).run(&g).0, want);
}

#[test]
fn balanced_search_expands_the_cheap_side() {
    // A hub with 1000 leaves sits next to the target; the source is at the end of a short chain.
    // Growing the hub side first would read ~1000 arcs; the balanced search should not.
    let mut arcs: Vec<(u64, u64)> = (0..1000).map(|i| (10_000 + i, 1)).collect();
    arcs.extend([(1, 2), (3, 2), (4, 3), (5, 4)]);
    let g = AdjacencyGraph::new([], &arcs);
    let q = PathQuery {
        source: 5,
        target: 1,
        dir: Direction::Both,
        max_depth: None,
    };
    let (outcome, work) = ShortestPath::new(q.clone()).run(&g);
    assert_eq!(ShortestPath::over_slots(q).run(&g), (outcome.clone(), work));
    assert_eq!(outcome, PathOutcome::Found(vec![5, 4, 3, 2, 1]));
    assert!(work.arcs_scanned < 50, "scanned {} arcs", work.arcs_scanned);
}

#[test]
fn hub_lists_are_read_in_pages_within_the_budget() {
    // Two hubs of 5,000 leaves each, joined through vertex 1: without pages, one step would
    // read a whole hub list (and, in the bidirectional search, look up 5,000 degrees).
    let mut arcs: Vec<(u64, u64)> = (0..5000).map(|i| (0, 100 + i)).collect();
    arcs.extend((0..5000).map(|i| (20_000 + i, 2)));
    arcs.extend([(0, 1), (1, 2)]);
    let g = AdjacencyGraph::new([], &arcs);
    for dir in DIRS {
        for budget in [1u64, 7, 100] {
            let query = BfsQuery {
                start: if dir == Direction::In { 2 } else { 0 },
                dir,
                max_depth: None,
                target: None,
                collect_limit: 0,
            };
            let mut bfs = Bfs::new(query, None);
            let mut steps = 0;
            loop {
                let before = bfs.work().units();
                let progress = bfs.step(&g, budget);
                let spent = bfs.work().units() - before;
                assert!(
                    spent <= budget + 2,
                    "{dir}: a BFS step spent {spent} > {budget} + 2"
                );
                steps += 1;
                if progress == Progress::Done {
                    break;
                }
            }
            assert!(steps as u64 * (budget + 2) >= bfs.work().units());

            let (source, target) = match dir {
                Direction::In => (2, 0),
                _ => (0, 2),
            };
            let q = PathQuery {
                source,
                target,
                dir,
                max_depth: None,
            };
            let want = PathOutcome::Found(if dir == Direction::In {
                vec![2, 1, 0]
            } else {
                vec![0, 1, 2]
            });
            let by_id = steps_within_budget(ShortestPath::new(q.clone()), &g, budget);
            assert_eq!(by_id, want, "{dir}");
            let by_slot = steps_within_budget(ShortestPath::over_slots(q), &g, budget);
            assert_eq!(by_slot, want, "{dir}");
        }
    }
}

/// Steps a path search on `g` to its end, checking that no step spends more than `budget`
/// units, plus the 4 lookups of checking and weighing both endpoints and the 2 a step may
/// overshoot by.
fn steps_within_budget<S: Search<AdjacencyGraph, Outcome = PathOutcome>>(
    mut sp: S,
    g: &AdjacencyGraph,
    budget: u64,
) -> PathOutcome {
    loop {
        let before = sp.work().units();
        let progress = sp.step(g, budget);
        let spent = sp.work().units() - before;
        assert!(
            spent <= budget + 6,
            "a path step spent {spent} > {budget} + 6"
        );
        if progress == Progress::Done {
            return sp.into_outcome().0;
        }
    }
}

#[test]
fn pages_concatenate_to_the_whole_list() {
    for seed in 0..50 {
        let tg = random_graph(seed);
        let g = AdjacencyGraph::new(tg.vertices.iter().copied(), &tg.arcs);
        for &v in tg.vertices.iter().chain([&u64::MAX]) {
            for dir in DIRS {
                let mut whole = Vec::new();
                g.neighbors(v, dir, &mut whole);
                assert_eq!(whole.len() as u64, g.degree(v, dir));
                for max in [1, 2, 5] {
                    let mut paged = Vec::new();
                    let mut cursor = ListCursor::start(dir);
                    let mut calls = 0;
                    while !g.neighbors_page(v, dir, &mut cursor, max, &mut paged) {
                        calls += 1;
                        assert!(calls <= whole.len() + 2, "pages never end");
                    }
                    assert_eq!(paged, whole, "seed {seed}, vertex {v}, {dir}, max {max}");
                }
            }
        }
    }
}

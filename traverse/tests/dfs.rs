//! The DFS operator against the textbook DFS of `graph-reference` on seeded random graphs:
//! exact preorder, visited count and deepest depth, whatever the budget, the depth bound, the
//! direction and the order or paging in which the source returns lists.

use graph_reference::ReferenceGraph;
use graph_traverse::{
    AdjacencyGraph, Dfs, DfsOutcome, DfsQuery, Direction, NeighborSource, Progress,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;
use common::{ReversedPages, random_graph, random_graph_below};

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

fn run<S: NeighborSource + ?Sized>(
    src: &S,
    q: DfsQuery,
    bound: Option<u64>,
    budget: u64,
) -> DfsOutcome {
    let mut dfs = Dfs::new(q, bound);
    let mut steps = 0u64;
    loop {
        if budget < 1 << 20 {
            // (A huge budget would make every search reserve room for a million frames.)
            dfs.reserve(budget);
        }
        if dfs.step(src, budget) == Progress::Done {
            break;
        }
        steps += 1;
        assert!(steps < 10_000_000, "DFS makes no progress");
    }
    dfs.into_outcome().0
}

/// Checks every start of `tg` (and an unknown one) in every direction against the reference.
fn check_graph(seed: u64, vertices: &[u64], arcs: &[(u64, u64)], rng: &mut ChaCha8Rng) -> usize {
    let g = AdjacencyGraph::new(vertices.iter().copied(), arcs);
    // The reference graph knows only arc endpoints; isolated vertices are checked apart.
    let reference = ReferenceGraph::new(arcs.iter().copied());
    let bound = vertices.iter().max().map(|m| m + 1);
    let mut checked = 0;
    for &start in vertices {
        let dir = DIRS[rng.gen_range(0..3)];
        let max_depth = [
            None,
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            Some(6),
            Some(40),
            Some(1_000_000),
        ][rng.gen_range(0..9)];
        let budget = [1, 2, 7, 100, u64::MAX][rng.gen_range(0..5)];
        let dense = [None, bound, Some(3)][rng.gen_range(0..3)];
        let collect_limit = [usize::MAX, 0, 1, 5][rng.gen_range(0..4)];
        let (preorder, deepest) = match reference.dfs(start, dir, max_depth) {
            Some(t) => (t.preorder, t.deepest),
            None => (vec![start], 0), // isolated: exists, no arcs
        };
        let ctx = format!("seed {seed}: dfs({start}, {dir}, {max_depth:?}) budget {budget}");
        let q = DfsQuery {
            start,
            dir,
            max_depth,
            collect_limit,
        };
        let want = DfsOutcome::Visited {
            visited: preorder.len() as u64,
            vertices: preorder[..preorder.len().min(collect_limit)].to_vec(),
            deepest,
        };
        assert_eq!(run(&g, q.clone(), dense, budget), want, "{ctx}");
        // Lists in reverse order and in pages of 1 to 3 arcs: the same answer.
        let reversed = ReversedPages {
            graph: &g,
            page: rng.gen_range(1..4),
        };
        assert_eq!(
            run(&reversed, q, dense, budget),
            want,
            "{ctx}, reversed pages"
        );
        checked += 1;
    }
    let unknown = DfsQuery {
        start: u64::MAX,
        dir: Direction::Both,
        max_depth: None,
        collect_limit: 1,
    };
    assert_eq!(run(&g, unknown, bound, 1), DfsOutcome::UnknownStart);
    checked
}

#[test]
fn dfs_matches_reference_on_random_graphs() {
    let mut checked = 0;
    for seed in 0..300 {
        let tg = random_graph(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xdf5);
        checked += check_graph(seed, &tg.vertices, &tg.arcs, &mut rng);
    }
    // Larger graphs: deeper stacks, longer lists, more re-entries under a depth bound.
    for seed in 1_000..1_060 {
        let tg = random_graph_below(seed, 400);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xdf5);
        checked += check_graph(seed, &tg.vertices, &tg.arcs, &mut rng);
    }
    assert!(checked > 10_000, "only {checked} searches checked");
}

#[test]
fn dfs_edge_cases() {
    let q = |start, max_depth| DfsQuery {
        start,
        dir: Direction::Out,
        max_depth,
        collect_limit: usize::MAX,
    };
    let empty = AdjacencyGraph::new([], &[]);
    assert_eq!(
        Dfs::new(q(0, None), None).run(&empty).0,
        DfsOutcome::UnknownStart
    );
    // 1 → 2 → 3, 3 → 3 (self-loop), 1 → 2 twice, 4 isolated.
    let g = AdjacencyGraph::new([4], &[(1, 2), (2, 3), (3, 3), (1, 2)]);
    let visited = |visited, vertices: &[u64], deepest| DfsOutcome::Visited {
        visited,
        vertices: vertices.to_vec(),
        deepest,
    };
    assert_eq!(
        Dfs::new(q(1, None), None).run(&g).0,
        visited(3, &[1, 2, 3], 2)
    );
    assert_eq!(Dfs::new(q(1, Some(0)), None).run(&g).0, visited(1, &[1], 0));
    assert_eq!(
        Dfs::new(q(1, Some(1)), None).run(&g).0,
        visited(2, &[1, 2], 1)
    );
    assert_eq!(Dfs::new(q(4, None), None).run(&g).0, visited(1, &[4], 0));
    assert_eq!(Dfs::new(q(3, None), None).run(&g).0, visited(1, &[3], 0));
    // A depth-0 search reads no list.
    let (_, work) = Dfs::new(q(1, Some(0)), None).run(&g);
    assert_eq!((work.vertices_expanded, work.arcs_scanned), (0, 0));
}

#[test]
fn a_long_path_needs_no_recursion() {
    // 200,000 vertices in one path: a recursive DFS would need a frame per vertex.
    let n = 200_000u64;
    let arcs: Vec<(u64, u64)> = (0..n - 1).map(|i| (i, i + 1)).collect();
    let g = AdjacencyGraph::new([], &arcs);
    let q = DfsQuery {
        start: 0,
        dir: Direction::Both,
        max_depth: None,
        collect_limit: 3,
    };
    let DfsOutcome::Visited {
        visited,
        vertices,
        deepest,
    } = Dfs::new(q, Some(n)).run(&g).0
    else {
        panic!("0 exists");
    };
    assert_eq!(
        (visited, vertices, deepest),
        (n, vec![0, 1, 2], (n - 1) as u32)
    );
}

#[test]
fn steps_stay_within_the_budget() {
    // A hub of 5,000 leaves, each leaf linked back to the hub: the hub's list is read in pages,
    // and walking back through the leaves' lists (all seen) costs a unit per neighbor.
    let mut arcs: Vec<(u64, u64)> = (0..5000).map(|i| (0, 100 + i)).collect();
    arcs.extend((0..5000).map(|i| (100 + i, 0)));
    let g = AdjacencyGraph::new([], &arcs);
    for dir in DIRS {
        for max_depth in [None, Some(1), Some(2)] {
            for budget in [1u64, 7, 100] {
                let mut dfs = Dfs::new(
                    DfsQuery {
                        start: 0,
                        dir,
                        max_depth,
                        collect_limit: 0,
                    },
                    None,
                );
                let mut steps = 0u64;
                loop {
                    let before = dfs.work().units();
                    let progress = dfs.step(&g, budget);
                    let spent = dfs.work().units() - before;
                    assert!(
                        spent <= budget + 2,
                        "{dir}: a step spent {spent} > {budget} + 2"
                    );
                    steps += 1;
                    if progress == Progress::Done {
                        break;
                    }
                }
                // Not one big step: about a step per budget of units.
                assert!(steps * (budget + 2) >= dfs.work().units(), "{dir} {budget}");
                let DfsOutcome::Visited { visited, .. } = dfs.into_outcome().0 else {
                    panic!()
                };
                assert_eq!(visited, 5001);
            }
        }
    }
}

/// A depth bound far beyond a small-world graph's diameter: entering vertices again whenever
/// a shorter route reaches them costs about `d` times the edges. The search stops as soon as
/// it has found every vertex within the bound, which usually comes early; where it does not,
/// it gives up with `TooCostly` within its allowance instead of running for minutes.
#[test]
fn a_large_depth_bound_stops_early_or_gives_up() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xDF5);
    let n = 20_000u64;
    let arcs: Vec<(u64, u64)> = (0..100_000)
        .map(|_| (rng.gen_range(0..n), rng.gen_range(0..n)))
        .collect();
    let g = AdjacencyGraph::new(0..n, &arcs);
    let reference = ReferenceGraph::new(arcs.iter().copied());
    let query = |dir, d| DfsQuery {
        start: 1,
        dir,
        max_depth: Some(d),
        collect_limit: usize::MAX,
    };
    // Every vertex is found within a few times the graph's reading, then the search stops;
    // the answer is the reference's.
    for d in [10, 40] {
        let mut dfs = Dfs::new(query(Direction::Both, d), Some(n));
        while dfs.step(&g, 10_000) == Progress::Suspended {}
        let (outcome, work) = dfs.into_outcome();
        let want = reference.dfs(1, Direction::Both, Some(d)).unwrap();
        let DfsOutcome::Visited { vertices, .. } = &outcome else {
            panic!("depth {d}: {outcome:?}");
        };
        assert_eq!(vertices, &want.preorder, "depth {d}");
        assert!(work.units() < 3_000_000, "depth {d}: {work:?}");
    }
    // A bound beyond the depth of the unbounded DFS changes nothing: one BFS and one unbounded
    // DFS answer it.
    for dir in [Direction::Out, Direction::Both] {
        let mut dfs = Dfs::new(query(dir, 1_000_000), Some(n));
        while dfs.step(&g, 10_000) == Progress::Suspended {}
        let (outcome, work) = dfs.into_outcome();
        let unbounded = DfsQuery {
            max_depth: None,
            ..query(dir, 0)
        };
        let (want, once) = Dfs::new(unbounded, Some(n)).run(&g);
        assert_eq!(outcome, want, "{dir}");
        assert!(
            work.units() <= 2 * once.units() + 2,
            "{dir}: {work:?} against {once:?}"
        );
    }
    // A bound below that depth but beyond the diameter: the last vertices are found only after
    // many re-entries, and the search gives up, having spent its allowance (plus one step).
    let mut dfs = Dfs::new(query(Direction::Both, 5_000), Some(n));
    while dfs.step(&g, 10_000) == Progress::Suspended {}
    let (outcome, work) = dfs.into_outcome();
    let DfsOutcome::TooCostly { spent, ball } = outcome else {
        panic!("{outcome:?}");
    };
    let cap = ball * graph_traverse::REENTRY_LIMIT + graph_traverse::REENTRY_ALLOWANCE;
    assert!(spent > cap && spent <= cap + 20_000, "{spent} of {cap}");
    // (`spent` also counts the stacked neighbors tried, which `Work` does not.)
    assert!(work.units() <= spent + ball);
}

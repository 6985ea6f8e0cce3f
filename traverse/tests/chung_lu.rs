//! Every algorithm against `graph-reference` on larger, skewed Chung-Lu graphs (hubs of
//! hundreds to a thousand arcs, sparse ids): BFS and direction-optimizing BFS levels, DFS
//! preorder, shortest-path lengths, in small and unlimited budgets.

use graph_reference::ReferenceGraph;
use graph_reference::generate::{ChungLu, FACEBOOK, chung_lu};
use graph_traverse::{
    AdjacencyGraph, Bfs, BfsOutcome, BfsQuery, Dfs, DfsOutcome, DfsQuery, Direction,
    DirectionOptimizingBfs, PathOutcome, PathQuery, Progress, Search, ShortestPath,
};

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

/// ego-Facebook's size and shape; DBLP's shape (and sparse ids) at 30,000 vertices; and
/// LiveJournal's shape at 40,000 vertices.
fn graphs() -> Vec<(&'static str, Vec<(u64, u64)>)> {
    let dblp_shaped = ChungLu {
        vertices: 30_000,
        edges: 99_000,
        exponent: 3.0,
        max_weight: 250.0,
        id_spread: 1.35,
    };
    let lj_shaped = ChungLu {
        vertices: 40_000,
        edges: 347_000,
        exponent: 2.65,
        max_weight: 1_500.0,
        id_spread: 1.0,
    };
    vec![
        ("facebook", chung_lu(&FACEBOOK, 11)),
        ("dblp-shaped", chung_lu(&dblp_shaped, 12)),
        ("lj-shaped", chung_lu(&lj_shaped, 13)),
    ]
}

fn run<S: Search<AdjacencyGraph>>(mut search: S, g: &AdjacencyGraph, budget: u64) -> S::Outcome {
    loop {
        search.reserve(budget.min(1 << 16));
        if search.step(g, budget) == Progress::Done {
            return search.into_outcome().0;
        }
    }
}

#[test]
fn all_algorithms_match_the_reference_on_chung_lu_graphs() {
    let mut checks = 0;
    for (name, edges) in graphs() {
        let g = AdjacencyGraph::new([], &edges);
        let reference = ReferenceGraph::new(edges.iter().copied());
        let bound = reference.vertices().last().map(|m| m + 1);
        for (i, &start) in reference.sample_vertices(4, 5).iter().enumerate() {
            for dir in DIRS {
                for max_depth in [None, Some(2)] {
                    let ctx = format!("{name}: from {start} {dir} {max_depth:?}");
                    let budget = [1, 1_000, u64::MAX][(i + max_depth.is_some() as usize) % 3];
                    let q = BfsQuery {
                        start,
                        dir,
                        max_depth,
                        target: None,
                        collect_limit: 10,
                    };
                    let want = reference.bfs_levels(start, dir, max_depth).unwrap();
                    for outcome in [
                        run(Bfs::new(q.clone(), bound), &g, budget),
                        run(DirectionOptimizingBfs::new(q, &g), &g, budget),
                    ] {
                        let BfsOutcome::Visited { levels, .. } = outcome else {
                            panic!("{ctx}: exists");
                        };
                        assert_eq!(levels, want, "{ctx}");
                    }
                    let trace = reference.dfs(start, dir, max_depth).unwrap();
                    let dq = DfsQuery {
                        start,
                        dir,
                        max_depth,
                        collect_limit: usize::MAX,
                    };
                    assert_eq!(
                        run(Dfs::new(dq, bound), &g, budget),
                        DfsOutcome::Visited {
                            visited: trace.preorder.len() as u64,
                            vertices: trace.preorder,
                            deepest: trace.deepest,
                        },
                        "{ctx}: dfs"
                    );
                    checks += 3;
                }
            }
        }
        for dir in DIRS {
            for (j, (source, target)) in reference.sample_pairs(20, dir, 6).into_iter().enumerate()
            {
                let max_depth = [None, Some(3)][j % 2];
                let q = PathQuery {
                    source,
                    target,
                    dir,
                    max_depth,
                };
                let ctx = format!("{name}: {source} -> {target} {dir} {max_depth:?}");
                let budget = [7, u64::MAX][j % 2];
                let outcome = run(ShortestPath::new(q.clone()), &g, budget);
                assert_eq!(run(ShortestPath::over_slots(q), &g, budget), outcome);
                match (outcome, reference.distance(source, target, dir, max_depth)) {
                    (PathOutcome::Found(path), Some(Some(d))) => {
                        assert_eq!(path.len() as u32 - 1, d, "{ctx}");
                        assert!(reference.is_path(&path, dir), "{ctx}: {path:?}");
                    }
                    (PathOutcome::Unreachable | PathOutcome::BeyondMaxDepth, Some(None)) => {}
                    (PathOutcome::UnknownSource, None) => assert!(!reference.contains(source)),
                    (PathOutcome::UnknownTarget, None) => assert!(!reference.contains(target)),
                    (got, want) => panic!("{ctx}: got {got:?}, reference {want:?}"),
                }
                checks += 1;
            }
        }
    }
    assert!(checks > 250, "{checks}");
}

#[test]
fn extreme_ids() {
    // Ids at both ends of the range, and a vertex whose neighbor list ends at u64::MAX.
    let ids = [0, 1 << 40, u64::MAX - 1, u64::MAX];
    let arcs = [
        (0, u64::MAX),
        (u64::MAX, 1 << 40),
        (1 << 40, u64::MAX - 1),
        (0, 0),
    ];
    let g = AdjacencyGraph::new(ids, &arcs);
    let reference = ReferenceGraph::new(arcs.iter().copied());
    for start in ids {
        for dir in DIRS {
            let q = BfsQuery {
                start,
                dir,
                max_depth: None,
                target: None,
                collect_limit: 9,
            };
            let want = reference.bfs_levels(start, dir, None).unwrap();
            for outcome in [
                run(Bfs::new(q.clone(), None), &g, 1),
                run(DirectionOptimizingBfs::new(q, &g), &g, 1),
            ] {
                let BfsOutcome::Visited { levels, .. } = outcome else {
                    panic!()
                };
                assert_eq!(levels, want, "{start} {dir}");
            }
            let trace = reference.dfs(start, dir, None).unwrap();
            let dq = DfsQuery {
                start,
                dir,
                max_depth: None,
                collect_limit: 9,
            };
            let DfsOutcome::Visited { vertices, .. } = run(Dfs::new(dq, None), &g, 1) else {
                panic!()
            };
            assert_eq!(vertices, trace.preorder, "{start} {dir}");
        }
    }
}

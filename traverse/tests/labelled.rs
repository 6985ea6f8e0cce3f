//! Label filters and weighted shortest paths against the reference, on seeded random graphs
//! whose arcs carry random labels and weights (ties, zero weights and self-loops included):
//! every BFS (index-hop and direction-optimizing), DFS, shortest path and weighted path through a
//! [`FilteredGraph`] answers like the reference on the arcs the filter keeps (the weighted paths
//! of every other graph guided by landmarks).

use graph_reference::{Follow, LabelledGraph};
use graph_traverse::{
    AdjacencyGraph, ArcAttrs, ArcFilter, Bfs, BfsOutcome, BfsQuery, Change, Dfs, DfsOutcome,
    DfsQuery, Direction, DirectionOptimizingBfs, FilteredGraph, LandmarkBuilder, NeighborSource,
    PathOutcome, PathQuery, Progress, Search, WeightedOutcome, WeightedPath, WeightedQuery,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;
use common::{path_by_id_and_slot, random_graph, random_weight};

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

/// The arc labels of a test graph: every fourth graph's do not all fit a byte, so that its
/// compressed rows keep them only as attributes (see `ArcLabels`).
fn arc_labels(seed: u64) -> [u32; 4] {
    match seed % 4 {
        3 => [0, 1, 256, 70_000],
        _ => [0, 1, 2, 3],
    }
}

/// A random graph with random attributes: labels from [`arc_labels`]; weights mostly small
/// integers, some zero, some fractional ([`random_weight`]).
fn labelled_graph(seed: u64) -> (AdjacencyGraph, LabelledGraph) {
    let tg = random_graph(seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x1abe1);
    let arcs: Vec<(u64, u64, u32, f32)> = tg
        .arcs
        .iter()
        .map(|&(s, d)| {
            let weight = random_weight(&mut rng, 10, 5);
            (s, d, arc_labels(seed)[rng.gen_range(0..4)], weight)
        })
        .collect();
    let mut reference = LabelledGraph::new(tg.vertices.iter().copied(), arcs.iter().copied());
    // Arcs are a set keyed by their ends in the module: give the graph the reference's arcs.
    let mut graph = AdjacencyGraph::with_attrs(
        tg.vertices.iter().copied(),
        reference
            .arcs()
            .map(|(s, d, label, weight)| (s, d, ArcAttrs { label, weight })),
    );
    // Vertex labels 0..3 on some seeds, given as changes, and sometimes compacted.
    if !seed.is_multiple_of(3) {
        let vertices: Vec<u64> = reference.vertices().collect();
        for v in vertices {
            let label = rng.gen_range(0..3);
            graph.apply([Change::RelabelVertex {
                v,
                from: 0,
                to: label,
            }]);
            reference.set_vertex_label(v, label);
        }
        if seed % 3 == 2 {
            graph.compact();
        }
    }
    (graph, reference)
}

/// No filter, an empty one, or a random subset of `labels`.
fn random_filter(rng: &mut ChaCha8Rng, labels: [u32; 4]) -> Option<Vec<u32>> {
    match rng.gen_range(0..4) {
        0 => None,
        1 => Some(vec![]),
        _ => Some(labels.into_iter().filter(|_| rng.gen_bool(0.5)).collect()),
    }
}

/// Runs `search` to the end in steps of `budget`.
fn run<S: Search<Src>, Src>(mut search: S, src: &Src, budget: u64) -> S::Outcome {
    while search.step(src, budget) == Progress::Suspended {}
    search.into_outcome().0
}

fn levels(outcome: BfsOutcome) -> Option<Vec<u64>> {
    match outcome {
        BfsOutcome::Visited { levels, .. } => Some(levels),
        BfsOutcome::UnknownStart => None,
    }
}

#[test]
fn filtered_traversals_and_weighted_paths_match_the_reference() {
    let (mut weighted, mut filtered_paths) = (0, 0);
    for seed in 0..300 {
        let (mut graph, reference) = labelled_graph(seed);
        // Every other graph has landmarks: its weighted paths are goal-directed.
        if seed % 2 == 1 {
            let mut build = LandmarkBuilder::new(&graph);
            while build.step(&graph, 7) == Progress::Suspended {}
            graph.set_landmarks(build.finish().expect("exact distances"));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let vertices: Vec<u64> = reference.vertices().chain([u64::MAX]).collect();
        for _ in 0..6 {
            let labels = random_filter(&mut rng, arc_labels(seed));
            let vertex_labels = match seed % 3 {
                0 => None,
                _ => random_filter(&mut rng, [0, 1, 2, 3]),
            };
            let start = vertices[rng.gen_range(0..vertices.len())];
            let mut strict = labels
                .as_ref()
                .map_or_else(ArcFilter::all, |l| ArcFilter::labels(l.iter().copied()));
            if let Some(v) = &vertex_labels {
                strict = strict.entering(v.iter().copied());
            }
            // Traversals let their start pass; neighbor lists do not.
            let filter = strict.clone().except(start);
            let src = FilteredGraph::new(&graph, &filter);
            let target = vertices[rng.gen_range(0..vertices.len())];
            let dir = DIRS[rng.gen_range(0..3)];
            let budget = [1, 3, 50, u64::MAX][rng.gen_range(0..4)];
            let max_depth = [None, Some(0), Some(1), Some(3)][rng.gen_range(0..4)];
            let ctx = format!(
                "seed {seed}: {start} → {target} {dir} {labels:?} {vertex_labels:?} depth \
                 {max_depth:?}"
            );
            let labels = Follow {
                edges: labels.as_deref(),
                vertices: vertex_labels.as_deref(),
            };

            // BFS, both ways, and DFS reach what the reference reaches.
            let want = reference.bfs_levels(start, dir, max_depth, labels);
            let query = BfsQuery {
                start,
                dir,
                max_depth,
                target: None,
                collect_limit: 0,
            };
            assert_eq!(
                levels(run(Bfs::new(query.clone(), None), &src, budget)),
                want,
                "{ctx}"
            );
            let dobfs = DirectionOptimizingBfs::new(query, &src);
            assert_eq!(levels(run(dobfs, &src, budget)), want, "{ctx}: DO-BFS");
            let dfs = Dfs::new(
                DfsQuery {
                    start,
                    dir,
                    max_depth,
                    collect_limit: 0,
                },
                None,
            );
            let reached = match run(dfs, &src, budget) {
                DfsOutcome::Visited { visited, .. } => Some(visited),
                DfsOutcome::UnknownStart => None,
                too_costly => panic!("{ctx}: {too_costly:?}"),
            };
            assert_eq!(reached, want.map(|l| l.iter().sum()), "{ctx}: DFS");

            // Neighbor lists keep exactly the arcs with the filter's labels.
            let mut page = Vec::new();
            FilteredGraph::new(&graph, &strict).neighbors(start, dir, &mut page);
            let mut ids: Vec<u64> = page.iter().map(|n| n.id).collect();
            ids.sort_unstable();
            ids.dedup();
            let want_ids = reference.neighbors(start, dir, labels).unwrap_or_default();
            assert_eq!(ids, want_ids, "{ctx}: neighbors");
            assert!(page.iter().all(|n| filter.keeps(n.attrs.label)), "{ctx}");

            // Shortest path in hops over the kept arcs.
            let hops = PathQuery {
                source: start,
                target,
                dir,
                max_depth: None,
            };
            let filtered_ref = reference.filtered(labels, start);
            let want_hops = match (reference.contains(start), reference.contains(target)) {
                (false, _) => Err("unknown source"),
                (_, false) => Err("unknown target"),
                _ if start == target => Ok(Some(0)),
                _ => Ok(filtered_ref.distance(start, target, dir, None).flatten()),
            };
            let got_hops = match path_by_id_and_slot(&src, hops, budget) {
                PathOutcome::Found(path) => {
                    assert!(reference.path_weight(&path, dir, labels).is_some(), "{ctx}");
                    Ok(Some(path.len() as u32 - 1))
                }
                PathOutcome::Unreachable => Ok(None),
                PathOutcome::UnknownSource => Err("unknown source"),
                PathOutcome::UnknownTarget => Err("unknown target"),
                PathOutcome::BeyondMaxDepth => unreachable!("no max_depth"),
            };
            assert_eq!(got_hops, want_hops, "{ctx}: hops");
            filtered_paths += 1;

            // Weighted path: the least weight, and a real path of that weight.
            // A dense label index (ids below the bound, or some above: those use the map).
            let bound = [None, Some(200_000), Some(30)][rng.gen_range(0..3)];
            let search = WeightedPath::new(
                WeightedQuery {
                    source: start,
                    target,
                    dir,
                },
                bound,
            );
            let want = reference.dijkstra(start, target, dir, labels);
            match (run(search, &src, budget), want) {
                (WeightedOutcome::Found { path, weight }, Some(Some(best))) => {
                    assert!(
                        (weight - best).abs() <= 1e-9 * best.max(1.0),
                        "{ctx}: {weight} vs {best}"
                    );
                    assert_eq!((path[0], *path.last().unwrap()), (start, target), "{ctx}");
                    let along = reference.path_weight(&path, dir, labels);
                    let along = along.unwrap_or_else(|| panic!("{ctx}: {path:?} is not a path"));
                    assert!(
                        (along - best).abs() <= 1e-9 * best.max(1.0),
                        "{ctx}: {path:?}"
                    );
                    weighted += 1;
                }
                (WeightedOutcome::Unreachable, Some(None)) => {}
                (WeightedOutcome::UnknownSource, None) => assert!(!reference.contains(start)),
                (WeightedOutcome::UnknownTarget, None) => assert!(!reference.contains(target)),
                (got, want) => panic!("{ctx}: got {got:?}, want {want:?}"),
            }
        }
    }
    assert!(
        weighted > 250 && filtered_paths > 1000,
        "{weighted} {filtered_paths}"
    );
}

#[test]
fn dijkstra_handles_zero_weights_ties_and_self_loops() {
    // Two paths of weight 2 from 1 to 4 (ties), a zero-weight detour, and self-loops.
    let arcs = [
        (1, 2, 1.0),
        (2, 4, 1.0),
        (1, 3, 1.0),
        (3, 4, 1.0),
        (1, 5, 0.0),
        (5, 3, 0.0),
        (3, 3, 0.0),
        (4, 4, 5.0),
    ];
    let g = AdjacencyGraph::with_attrs(
        [9],
        arcs.iter()
            .map(|&(s, d, weight)| (s, d, ArcAttrs { label: 1, weight })),
    );
    let q = |source, target| WeightedQuery {
        source,
        target,
        dir: Direction::Out,
    };
    let (outcome, _) = WeightedPath::new(q(1, 4), Some(10)).run(&g);
    assert_eq!(
        outcome,
        WeightedOutcome::Found {
            path: vec![1, 5, 3, 4],
            weight: 1.0
        }
    );
    let found = |o| matches!(o, WeightedOutcome::Found { .. });
    assert!(found(WeightedPath::new(q(4, 4), Some(10)).run(&g).0));
    assert_eq!(
        WeightedPath::new(q(1, 9), Some(10)).run(&g).0,
        WeightedOutcome::Unreachable
    );
    assert_eq!(
        WeightedPath::new(q(8, 1), Some(10)).run(&g).0,
        WeightedOutcome::UnknownSource
    );
    // Under a filter without label 1 nothing is reachable, though both ends exist.
    let none = ArcFilter::labels([2]);
    let filtered = FilteredGraph::new(&g, &none);
    assert_eq!(
        WeightedPath::new(q(1, 4), Some(10)).run(&filtered).0,
        WeightedOutcome::Unreachable
    );
    // A target whose label the filter does not enter is unreachable, even over a direct arc;
    // the source passes whatever its label.
    let mut g = g;
    g.set_vertex_label(4, 7);
    g.set_vertex_label(1, 8);
    let others = ArcFilter::all().entering([0]).except(1);
    let filtered = FilteredGraph::new(&g, &others);
    assert_eq!(
        WeightedPath::new(q(1, 4), Some(10)).run(&filtered).0,
        WeightedOutcome::Unreachable
    );
    let (outcome, _) = WeightedPath::new(q(1, 3), Some(10)).run(&filtered);
    assert!(found(outcome));
}

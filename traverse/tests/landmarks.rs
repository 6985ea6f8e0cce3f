//! Landmark-guided weighted paths against the reference Dijkstra: on weighted grids (the
//! road-like case they are for) and on random graphs, in every direction, after removals (the
//! landmarks stay and their bounds still hold) and not after additions (they are dropped). A
//! guided search settles fewer vertices than an unguided one on a grid, and the build gives the
//! same table in any budget.

use graph_reference::generate::grid;
use graph_reference::{Follow, LabelledGraph};
use graph_traverse::{
    AdjacencyGraph, ArcAttrs, Change, Direction, LandmarkBuilder, Landmarks, NeighborSource,
    Progress, WeightedOutcome, WeightedPath, WeightedQuery, lower_bound,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;
use common::{random_graph, random_weight};

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

fn landmarks(graph: &AdjacencyGraph, budget: u64) -> Landmarks {
    let mut build = LandmarkBuilder::new(graph);
    while build.step(graph, budget) == Progress::Suspended {}
    build.finish().expect("exact distances")
}

fn graph_of(reference: &LabelledGraph) -> AdjacencyGraph {
    AdjacencyGraph::with_attrs(
        reference.vertices(),
        reference
            .arcs()
            .map(|(s, d, label, weight)| (s, d, ArcAttrs { label, weight })),
    )
}

/// `graph`'s weighted path from `a` to `b` equals the reference's (weight, and a real path of
/// that weight); returns the vertices the search settled.
fn agrees(
    graph: &AdjacencyGraph,
    reference: &LabelledGraph,
    a: u64,
    b: u64,
    dir: Direction,
) -> u64 {
    let query = WeightedQuery {
        source: a,
        target: b,
        dir,
    };
    let (got, work) = WeightedPath::new(query, None).run(graph);
    let ctx = format!("{a} → {b} {dir}");
    match (got, reference.dijkstra(a, b, dir, Follow::ALL)) {
        (WeightedOutcome::Found { path, weight }, Some(Some(best))) => {
            assert!(
                (weight - best).abs() <= 1e-9 * best.max(1.0),
                "{ctx}: {weight} vs {best}"
            );
            let along = reference.path_weight(&path, dir, Follow::ALL);
            let along = along.unwrap_or_else(|| panic!("{ctx}: {path:?} is not a path"));
            assert!((along - best).abs() <= 1e-9 * best.max(1.0), "{ctx}");
            assert_eq!((path[0], *path.last().unwrap()), (a, b), "{ctx}");
        }
        (WeightedOutcome::Unreachable, Some(None)) => {}
        (WeightedOutcome::UnknownSource | WeightedOutcome::UnknownTarget, None) => {}
        (got, want) => panic!("{ctx}: got {got:?}, want {want:?}"),
    }
    work.lookups
}

#[test]
fn guided_paths_on_grids_match_the_reference_and_settle_fewer_vertices() {
    for (n, seed) in [(2, 1), (5, 2), (30, 3), (60, 4)] {
        let reference = LabelledGraph::new(
            1..=n * n,
            grid(n, seed).into_iter().map(|(s, d, w)| (s, d, 0, w)),
        );
        let mut graph = graph_of(&reference);
        let plain = graph.clone();
        graph.set_landmarks(landmarks(&graph, u64::MAX));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut guided_work, mut plain_work) = (0, 0);
        for _ in 0..40 {
            let (a, b) = (rng.gen_range(1..=n * n), rng.gen_range(1..=n * n));
            let dir = DIRS[rng.gen_range(0..3)];
            guided_work += agrees(&graph, &reference, a, b, dir);
            plain_work += agrees(&plain, &reference, a, b, dir);
        }
        println!("{n} × {n}: guided {guided_work} settled, plain {plain_work}");
        if n >= 30 {
            assert!(
                guided_work * 2 < plain_work,
                "{n} × {n}: guided {guided_work} lookups, plain {plain_work}"
            );
        }
    }
}

#[test]
fn guided_paths_on_random_graphs_match_the_reference_after_removals() {
    for seed in 0..150 {
        let tg = random_graph(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x1a7d);
        let arcs: Vec<(u64, u64, u32, f32)> = tg
            .arcs
            .iter()
            .map(|&(s, d)| (s, d, 0, random_weight(&mut rng, 8, 20)))
            .collect();
        let mut reference = LabelledGraph::new(tg.vertices.iter().copied(), arcs);
        let mut graph = graph_of(&reference);
        // In one go or in steps of a few units: the same table.
        let table = landmarks(&graph, u64::MAX);
        assert_eq!(table, landmarks(&graph, 1 + seed % 5), "seed {seed}");
        graph.set_landmarks(table);
        let vertices: Vec<u64> = reference.vertices().chain([u64::MAX]).collect();
        let pick = |rng: &mut ChaCha8Rng| vertices[rng.gen_range(0..vertices.len())];
        for round in 0..3 {
            for _ in 0..8 {
                let (a, b) = (pick(&mut rng), pick(&mut rng));
                agrees(&graph, &reference, a, b, DIRS[rng.gen_range(0..3)]);
            }
            // Removing arcs only lengthens paths: the landmarks stay, and still guide exactly.
            let stored: Vec<(u64, u64, u32, f32)> = reference.arcs().collect();
            for &(s, d, label, weight) in stored.iter().filter(|_| rng.gen_bool(0.2)) {
                graph.apply([Change::RemoveArc {
                    src: s,
                    dst: d,
                    attrs: ArcAttrs { label, weight },
                }]);
                reference = LabelledGraph::new(
                    reference.vertices(),
                    reference.arcs().filter(|&(x, y, _, _)| (x, y) != (s, d)),
                );
            }
            assert!(graph.landmarks().is_some(), "seed {seed} round {round}");
        }
        for _ in 0..8 {
            let (a, b) = (pick(&mut rng), pick(&mut rng));
            agrees(&graph, &reference, a, b, DIRS[rng.gen_range(0..3)]);
        }
        // An added arc may shorten a path: the landmarks go.
        if let Some((s, d, label, weight)) = reference.arcs().next() {
            let attrs = ArcAttrs { label, weight };
            assert!(graph.remove_arc(s, d) && graph.landmarks().is_some());
            assert!(graph.insert_arc(s, d, attrs) && graph.landmarks().is_none());
        }
    }
}

#[test]
fn a_new_vertex_drops_the_landmarks_and_an_empty_graph_has_none_to_use() {
    let reference =
        LabelledGraph::new(1..=16, grid(4, 9).into_iter().map(|(s, d, w)| (s, d, 0, w)));
    let mut graph = graph_of(&reference);
    graph.set_landmarks(landmarks(&graph, 3));
    assert!(graph.landmarks().is_some());
    graph.insert_vertex(100);
    assert!(graph.landmarks().is_none());

    let empty = AdjacencyGraph::new([], &[]);
    let table = landmarks(&empty, 10);
    assert_eq!(table.slots(), 0);
}

/// A graph whose weights are far apart (2^53 beside 0.5): a landmark at the heavy arc's end
/// would hold rounded distances, one of which made a bound on 5 → 6 exceed the lightest path
/// (1.5), and the search stopped at 5 → 6 (2). The build gives no table, and the path is found.
#[test]
fn weights_too_far_apart_to_sum_exactly_give_no_landmarks() {
    let arcs = [
        (101, 9, 2f32.powi(53)),
        (9, 4, 1.5),
        (10, 4, 0.5),
        (5, 10, 0.5),
        (10, 6, 1.0),
        (5, 6, 2.0),
    ];
    let reference = LabelledGraph::new(
        [4, 5, 6, 9, 10, 101],
        arcs.iter().map(|&(s, d, w)| (s, d, 0, w)),
    );
    let graph = graph_of(&reference);
    let mut build = LandmarkBuilder::new(&graph);
    while build.step(&graph, 3) == Progress::Suspended {}
    assert!(build.finish().is_none());
    for dir in DIRS {
        agrees(&graph, &reference, 5, 6, dir);
    }
    let query = WeightedQuery {
        source: 5,
        target: 6,
        dir: Direction::Both,
    };
    let (found, _) = WeightedPath::new(query, None).run(&graph);
    assert_eq!(
        found,
        WeightedOutcome::Found {
            path: vec![5, 10, 6],
            weight: 1.5
        }
    );
}

/// Weights spread over many orders of magnitude, from a few bits to the whole `f32` range: where
/// a table is built, every bound it gives is at most the weight of the lightest path between
/// its two vertices, arcs taken both ways (the reference's); and every search agrees with the
/// reference, guided or not.
#[test]
fn every_bound_of_a_table_is_at_most_the_true_distance_whatever_the_weights() {
    let (mut kept, mut dropped) = (0, 0);
    for seed in 0..240 {
        let tg = random_graph(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb0b);
        // Exponents of two from -span to +span: 0 (integers and halves), 10, 40 or 100.
        let span = [1, 10, 40, 100][seed as usize % 4];
        let arcs: Vec<(u64, u64, u32, f32)> = tg
            .arcs
            .iter()
            .map(|&(s, d)| {
                let w = 2f32.powi(rng.gen_range(-span..=span)) * rng.gen_range(1..8) as f32;
                (s, d, 0, w)
            })
            .collect();
        let reference = LabelledGraph::new(tg.vertices.iter().copied(), arcs);
        let mut graph = graph_of(&reference);
        let mut build = LandmarkBuilder::new(&graph);
        while build.step(&graph, 1 + seed % 7) == Progress::Suspended {}
        let Some(table) = build.finish() else {
            dropped += 1;
            continue;
        };
        kept += 1;
        graph.set_landmarks(table);
        let vertices: Vec<u64> = reference.vertices().collect();
        for &a in &vertices {
            for &b in &vertices {
                let (Some(ra), Some(rb)) = (graph.landmark_row(a), graph.landmark_row(b)) else {
                    continue;
                };
                let bound = lower_bound(ra, rb);
                match reference.dijkstra(a, b, Direction::Both, Follow::ALL) {
                    Some(Some(d)) => {
                        assert!(bound <= d, "seed {seed}: {a}–{b} bound {bound} > {d}")
                    }
                    _ => assert!(bound.is_infinite() || bound == 0.0, "seed {seed}: {a}–{b}"),
                }
            }
        }
        for _ in 0..6 {
            let (a, b) = (
                vertices[rng.gen_range(0..vertices.len())],
                vertices[rng.gen_range(0..vertices.len())],
            );
            agrees(&graph, &reference, a, b, DIRS[rng.gen_range(0..3)]);
        }
    }
    assert!(kept > 60 && dropped > 30, "kept {kept}, dropped {dropped}");
}

//! Labelled, weighted graphs in the real module on the real host: neighbors, BFS, DFS and
//! shortest paths filtered by edge and vertex labels, and weighted shortest paths, checked
//! against the reference (`LabelledGraph`: filters and a textbook Dijkstra) on 100 seeded
//! random graphs, through the indexes and from the snapshot (vertex labels given before it was
//! built and after); and loads that must fail without committing anything.

use graph_client::edgelist::EdgeList;
use graph_client::graph::{
    ClientError, Direction, Follow, GraphDb, GraphError, PathStatus, TxOptions,
};
use graph_reference::{Follow as Kept, LabelledGraph};
use graph_testkit::TestHost;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];
const LABELS: [&str; 4] = ["", "follows", "blocks", "trades"];
const VERTEX_LABELS: [&str; 3] = ["", "person", "city"];

/// A random labelled graph of 1 to 39 vertices (sparse ids), one row per pair of ends, plus
/// repeated rows (same label and weight) and self-loops; weights mostly small integers (ties),
/// some 0, some fractional.
fn random_graph(seed: u64) -> (EdgeList, LabelledGraph) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.gen_range(1..40u64);
    // Odd seeds give every third vertex an id near the top of u64 (a `wide_edge` row).
    let huge = seed % 2 == 1;
    let id = |i: u64| match i % 3 {
        0 if huge => u64::MAX - i * 7_919,
        _ => i * 7_919 + 3,
    };
    let mut rows = Vec::new();
    for _ in 0..rng.gen_range(0..n * 3) {
        let (a, b) = (id(rng.gen_range(0..n)), id(rng.gen_range(0..n)));
        let label = rng.gen_range(0..LABELS.len() as u32);
        let weight = match rng.gen_range(0..8) {
            0 => 0.0,
            1 => rng.gen_range(0.0..5.0f32),
            _ => rng.gen_range(1..4) as f32,
        };
        rows.push((a, b, label, weight));
    }
    if n > 1 {
        rows.push((id(1), id(1), 1, 2.0));
    }
    let reference = LabelledGraph::new([], rows.iter().copied());
    let mut list = EdgeList::new();
    for (a, b, label, weight) in reference.arcs().chain(reference.arcs().take(3)) {
        list.push_with(a, b, LABELS[label as usize], weight);
    }
    // The reference knows labels by their index in LABELS; the module by name.
    (list, reference)
}

fn names(labels: &Option<Vec<u32>>, of: &[&'static str]) -> Vec<&'static str> {
    labels.iter().flatten().map(|&l| of[l as usize]).collect()
}

/// A random set of label indices below `n`, or none (no test); an empty list of names means
/// no test, as `None` does.
fn random_labels(rng: &mut ChaCha8Rng, n: u32) -> Option<Vec<u32>> {
    match rng.gen_range(0..3) {
        0 => None,
        _ => Some((0..n).filter(|_| rng.gen_bool(0.5)).collect()),
    }
    .filter(|l: &Vec<u32>| !l.is_empty())
}

/// Gives about half of `vertices` (and one new vertex) a random vertex label in the module and
/// the reference.
fn label_vertices(
    db: &GraphDb,
    reference: &mut LabelledGraph,
    vertices: &[u64],
    rng: &mut ChaCha8Rng,
) {
    let mut ids = vec![999_999];
    ids.extend(vertices.iter().filter(|_| rng.gen_bool(0.5)));
    let labels: Vec<u32> = ids
        .iter()
        .map(|_| rng.gen_range(0..VERTEX_LABELS.len() as u32))
        .collect();
    let names: Vec<String> = VERTEX_LABELS.iter().map(|n| n.to_string()).collect();
    db.set_vertex_labels(&ids, &names, &labels).unwrap();
    for (&id, &label) in ids.iter().zip(&labels) {
        reference.set_vertex_label(id, label);
    }
}

#[test]
fn labelled_queries_agree_with_the_reference() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("labelled"), "labelled");
    let (mut from_snapshot, mut from_indexes, mut weighted) = (0, 0, 0);
    for seed in 0..100 {
        db.clear().unwrap();
        let (list, mut reference) = random_graph(seed);
        db.load(&list.sorted(), |_| {}).unwrap();
        let info = db.info().unwrap();
        assert_eq!(info.edges, reference.arcs().count() as u64, "seed {seed}");
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xfeed);
        let graph_vertices: Vec<u64> = reference.vertices().collect();
        if seed % 4 == 1 {
            label_vertices(&db, &mut reference, &graph_vertices, &mut rng);
        }
        if seed % 2 == 0 {
            // A full BFS first: it may build a snapshot that the later queries use.
            let start = graph_vertices[0];
            let _ = db.bfs(start, Direction::Both, None, 0, TxOptions::default());
        }
        if seed % 4 == 2 {
            // After the snapshot: it must catch the labels up from the change log.
            label_vertices(&db, &mut reference, &graph_vertices, &mut rng);
        }
        let vertices: Vec<u64> = reference.vertices().chain([42]).collect();
        for _ in 0..8 {
            let labels = random_labels(&mut rng, LABELS.len() as u32);
            let vertex_labels = match seed % 4 {
                1 | 2 => random_labels(&mut rng, VERTEX_LABELS.len() as u32),
                _ => None,
            };
            let filter = Kept {
                edges: labels.as_deref(),
                vertices: vertex_labels.as_deref(),
            };
            let (named, vertex_named) = (
                names(&labels, &LABELS),
                names(&vertex_labels, &VERTEX_LABELS),
            );
            let follow = Follow {
                edges: &named,
                vertices: &vertex_named,
            };
            let dir = DIRS[rng.gen_range(0..3)];
            let a = vertices[rng.gen_range(0..vertices.len())];
            let b = vertices[rng.gen_range(0..vertices.len())];
            let depth = [None, Some(0), Some(2)][rng.gen_range(0..3)];
            let tx = TxOptions {
                tx_budget: [0, 1, 3][rng.gen_range(0..3)],
                ..TxOptions::default()
            };
            let ctx =
                format!("seed {seed}: {a} → {b} {dir} {named:?} {vertex_named:?} depth {depth:?}");
            let known = reference.contains(a);

            let n = db.neighbors_over(a, dir, follow, 0);
            let count = db.neighbor_count_over(a, dir, follow);
            match reference.neighbors(a, dir, filter) {
                Some(want) => {
                    assert_eq!(n.unwrap().value.neighbors, want, "{ctx}");
                    assert_eq!(count.unwrap().value.count, want.len() as u64, "{ctx}");
                }
                None => assert!(n.is_err() && count.is_err(), "{ctx}"),
            }

            let bfs = db.bfs_over(a, dir, follow, depth, 0, tx);
            let dfs = db.dfs_over(a, dir, follow, depth, 0, tx);
            match reference.bfs_levels(a, dir, depth, filter) {
                Some(levels) => {
                    let bfs = bfs.unwrap().value;
                    assert_eq!(bfs.levels, levels, "{ctx}: bfs");
                    let dfs = dfs.unwrap().value;
                    assert_eq!(dfs.visited, levels.iter().sum::<u64>(), "{ctx}: dfs");
                    if bfs.stats.from_snapshot {
                        from_snapshot += 1;
                    } else {
                        from_indexes += 1;
                    }
                }
                None => assert!(!known && bfs.is_err() && dfs.is_err(), "{ctx}"),
            }

            let hops = db.shortest_path_over(a, b, dir, follow, None, tx);
            let path = db.weighted_shortest_path(a, b, dir, follow, tx);
            let Some(best) = reference.dijkstra(a, b, dir, filter) else {
                let unknown =
                    |e: ClientError| matches!(e, ClientError::Graph(GraphError::UnknownVertex(_)));
                assert!(
                    unknown(hops.unwrap_err()) && unknown(path.unwrap_err()),
                    "{ctx}"
                );
                continue;
            };
            let hops = hops.unwrap().value;
            let path = path.unwrap().value;
            match best {
                None => {
                    assert_eq!(hops.status, PathStatus::Unreachable, "{ctx}");
                    assert_eq!(path.status, PathStatus::Unreachable, "{ctx}");
                }
                Some(best) => {
                    assert_eq!(hops.status, PathStatus::Found, "{ctx}");
                    assert!(
                        reference.path_weight(&hops.path, dir, filter).is_some(),
                        "{ctx}"
                    );
                    let fewest = reference
                        .filtered(filter, a)
                        .distance(a, b, dir, None)
                        .flatten();
                    let fewest = if a == b { Some(0) } else { fewest };
                    assert_eq!(Some(hops.path.len() as u32 - 1), fewest, "{ctx}: hops");
                    assert_eq!(path.status, PathStatus::Found, "{ctx}");
                    assert!(
                        (path.weight - best).abs() < 1e-9,
                        "{ctx}: {} vs {best}",
                        path.weight
                    );
                    let along = reference.path_weight(&path.path, dir, filter);
                    assert!(
                        along.is_some_and(|w| (w - best).abs() < 1e-9),
                        "{ctx}: {:?}",
                        path.path
                    );
                    assert_eq!(path.hops as usize, path.path.len() - 1, "{ctx}");
                    assert_eq!((path.path[0], *path.path.last().unwrap()), (a, b), "{ctx}");
                    weighted += 1;
                }
            }
        }
    }
    assert!(weighted > 150, "{weighted} weighted paths found");
    assert!(
        from_snapshot > 20 && from_indexes > 100,
        "{from_snapshot} {from_indexes}"
    );
}

#[test]
fn bad_labelled_loads_fail_whole_and_commit_nothing() {
    let host = TestHost::start();
    let server = host.publish_module("bad");
    // Over HTTP the arguments are JSON, which has no NaN or infinity: the host refuses those
    // calls before the module sees them. Over the WebSocket (BSATN) the module refuses them.
    for (db, transport) in [
        (GraphDb::new(server.clone(), "bad"), "http"),
        (GraphDb::websocket(server.clone(), "bad", None), "ws"),
    ] {
        db.clear().unwrap();
        check_refusals(&db, transport);
    }
    // A name stays known after `clear_graph` took every edge that had it: a filter naming it
    // matches nothing rather than being refused as a typo.
    let db = GraphDb::new(server, "bad");
    db.clear().unwrap();
    db.add_edges(&[1], &[2]).unwrap();
    let tx = TxOptions::default();
    let road = db.bfs_over(1, Direction::Out, Follow::edges(&["road"]), None, 0, tx);
    assert_eq!(road.unwrap().value.visited, 1, "only the start");
    // Every name a call gives is registered, used by its edges or not (here a call of none).
    db.add_labelled_edges(&[], &[], &["spare".into()], &[], &[])
        .unwrap();
    let spare = db.bfs_over(1, Direction::Out, Follow::edges(&["spare"]), None, 0, tx);
    assert_eq!(spare.unwrap().value.visited, 1, "only the start");
    // An unknown name is refused before an unknown start vertex.
    let e = db
        .bfs_over(99, Direction::Out, Follow::edges(&["nope"]), None, 0, tx)
        .unwrap_err();
    assert!(e.to_string().contains("unknown edge label `nope`"), "{e}");
}

fn check_refusals(db: &GraphDb, transport: &str) {
    let names = ["road".to_string()];
    db.add_labelled_edges(&[1, 2], &[2, 3], &names, &[0, 0], &[1.5, 2.0])
        .unwrap();
    let before = db.info().unwrap();
    let refused = |r: Result<(), ClientError>, why: &str| {
        let e = r.unwrap_err().to_string();
        assert!(e.contains(why), "{transport}: {e}");
        assert_eq!(
            db.info().unwrap(),
            before,
            "{transport}: nothing committed: {why}"
        );
    };
    // A negative, infinite or NaN weight anywhere in the batch: the module refuses it (over
    // HTTP the library refuses those JSON cannot carry, in the module's words, before sending).
    for bad in [-1.0, f32::INFINITY, f32::NAN] {
        let r = db.add_labelled_edges(&[5, 6], &[6, 7], &names, &[0, 0], &[1.0, bad]);
        let not_sent = matches!(&r, Err(ClientError::NotSent { .. }));
        assert_eq!(
            not_sent,
            transport == "http" && !bad.is_finite(),
            "{transport} {bad}: {r:?}"
        );
        refused(r, "edge 1 (6 → 7) has weight");
        // A call of one edge names it by its ends only.
        let r = db.add_labelled_edges(&[6], &[7], &names, &[0], &[bad]);
        refused(r, "edge 6 → 7 has weight");
    }
    // An existing edge with another weight, or another label; an unlabelled re-add of it.
    refused(
        db.add_labelled_edges(&[9, 1], &[9, 2], &names, &[0, 0], &[1.0, 9.0]),
        "exists with label `road` and weight 1.5",
    );
    refused(
        db.add_labelled_edges(&[1], &[2], &["rail".into()], &[0], &[1.5]),
        "exists with label `road`",
    );
    refused(db.add_edges(&[8, 1], &[8, 2]), "remove it first");
    // The same edge twice in one batch with different weights.
    refused(
        db.add_labelled_edges(&[4, 4], &[5, 5], &names, &[0, 0], &[1.0, 2.0]),
        "this call gives edge 4 → 5 twice",
    );
    // Lists that do not pair up, a label index out of range, a bad name.
    refused(
        db.add_labelled_edges(&[4], &[5], &names, &[0, 0], &[]),
        "labels has 2",
    );
    refused(
        db.add_labelled_edges(&[4], &[5], &names, &[3], &[]),
        "names label 3, but label_names has no entry 3 (its length is 1)",
    );
    refused(
        db.add_labelled_edges(&[4], &[5], &["a\nb".into()], &[0], &[]),
        "control",
    );
    // The same edge again as it is stored: accepted, nothing changes.
    db.add_labelled_edges(&[1], &[2], &names, &[0], &[1.5])
        .unwrap();
    assert_eq!(db.info().unwrap(), before);
    // Other writes that change nothing make no version either: stored vertices, an absent
    // edge, a vertex's own (no) label.
    db.add_vertices(&[1, 2]).unwrap();
    db.remove_edges(&[7], &[8]).unwrap();
    db.set_vertex_labels(&[1], &["".into()], &[0]).unwrap();
    assert_eq!(db.info().unwrap(), before, "{transport}");
    // Vertex labels: a vertex given two labels in one batch, an index out of range, lists
    // that do not pair up, a bad name.
    let kinds = ["person".to_string(), "city".to_string()];
    refused(
        db.set_vertex_labels(&[1, 2, 1], &kinds, &[0, 0, 1]),
        "vertex 1 is given two labels, \"person\" and \"city\"",
    );
    refused(
        db.set_vertex_labels(&[1], &kinds, &[2]),
        "names label 2, but label_names has no entry 2 (its length is 2)",
    );
    refused(
        db.set_vertex_labels(&[1, 2], &kinds, &[0]),
        "labels has 1 entries but ids has 2",
    );
    refused(
        db.set_vertex_labels(&[1], &["a\tb".into()], &[0]),
        "control",
    );
    // A name longer than a label may be is refused, quoted only as far as a label could go.
    let e = db
        .set_vertex_labels(&[1], &["é".repeat(50_000)], &[0])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("{}…\" (100000 bytes)", "é".repeat(64))) && e.len() < 400,
        "{} bytes: {}",
        e.len(),
        &e[..e.len().min(300)]
    );
    // A filter naming an unknown label is an error, not an empty answer.
    let tx = TxOptions::default();
    let e = db
        .bfs_over(1, Direction::Out, Follow::edges(&["roda"]), None, 0, tx)
        .unwrap_err();
    assert!(e.to_string().contains("unknown edge label `roda`"), "{e}");
    // A name longer than any label is quoted only as far as a label could go.
    let long = "é".repeat(50_000);
    let e = db
        .bfs_over(1, Direction::Out, Follow::edges(&[&long]), None, 0, tx)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("unknown edge label `{}…`", "é".repeat(64))) && e.len() < 400,
        "{} bytes",
        e.len()
    );
    let only = Follow {
        edges: &[],
        vertices: &["persn"],
    };
    let e = db
        .bfs_over(1, Direction::Out, only, None, 0, tx)
        .unwrap_err();
    assert!(
        e.to_string().contains("unknown vertex label `persn`"),
        "{e}"
    );
    // Labels given, changed and removed; the graph's counts follow.
    db.set_vertex_labels(&[1, 2, 7], &kinds, &[0, 1, 0])
        .unwrap();
    let after = db.info().unwrap();
    assert_eq!(
        after.vertices,
        before.vertices + 1,
        "{transport}: vertex 7 created"
    );
    let people = Follow {
        edges: &[],
        vertices: &["person"],
    };
    let reached = |db: &GraphDb| {
        let bfs = db.bfs_over(1, Direction::Out, people, None, 0, tx);
        bfs.unwrap().value.visited
    };
    // 1 → 2 → 3: 2 is a city, so only 1 itself.
    assert_eq!(reached(db), 1, "{transport}");
    db.set_vertex_labels(&[2, 3], &kinds, &[0, 0]).unwrap();
    assert_eq!(reached(db), 3, "{transport}");
    db.set_vertex_labels(&[3], &["".into()], &[0]).unwrap();
    assert_eq!(reached(db), 2, "{transport}");
    // A weight of -0.0 is stored as 0.0.
    db.add_labelled_edges(&[20], &[21], &[], &[], &[-0.0])
        .unwrap();
    let query = format!("SELECT weight FROM edge WHERE fwd = {}", 20u64 << 32 | 21);
    let rows = &db.server().sql(db.database(), &query).unwrap()[0].rows;
    let weight = rows[0][0].as_f64().unwrap();
    assert!(
        weight == 0.0 && weight.is_sign_positive(),
        "{transport}: {rows:?}"
    );
}

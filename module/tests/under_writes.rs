//! Traversals while a writer adds and removes edges: every answer must be exactly the graph at
//! the version it names (`QueryStats::version`), whether it came from the indexes (pinned) or
//! from a snapshot brought up to date from the change log.
//!
//! The writer makes only writes that take effect, one call at a time, so each call makes exactly
//! one new version and the test knows the graph at every version. A second test does the same
//! with vertex labels that change under traversals filtering by them.

use graph_client::graph::{Direction, Follow, GraphDb, PathStatus, QueryStats, TxOptions};
use graph_reference::{Follow as KeptBy, LabelledGraph, ReferenceGraph};
use graph_testkit::TestHost;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];
type Edges = BTreeSet<(u64, u64)>;

/// The graph at every version the writer made: edges, and every vertex ever created (edges
/// are removed, vertices never are, so a vertex may exist without arcs).
#[derive(Default)]
struct History {
    states: HashMap<u64, (Arc<Edges>, Arc<BTreeSet<u64>>)>,
}

/// A query and its answer, checked once the writer has stopped.
enum Asked {
    Bfs {
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        levels: Vec<u64>,
        stats: QueryStats,
    },
    Path {
        source: u64,
        target: u64,
        dir: Direction,
        status: PathStatus,
        path: Vec<u64>,
        stats: QueryStats,
    },
    Dfs {
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        preorder: Vec<u64>,
        stats: QueryStats,
    },
}

fn random_graph(rng: &mut ChaCha8Rng) -> (Edges, Vec<u64>) {
    let n = rng.gen_range(20..100u64);
    let m = rng.gen_range(0..(n * 4) as usize);
    let id = |i: u64| i * 10 + 3;
    let mut edges = Edges::new();
    for _ in 0..m {
        // Skewed: low ids are hubs.
        let a = (rng.gen_range(0.0f64..1.0).powi(2) * n as f64) as u64;
        let b = rng.gen_range(0..n);
        edges.insert((id(a), id(b)));
    }
    edges.insert((id(0), id(0)));
    (edges, (0..n).map(id).collect())
}

/// Adds or removes one edge per call until `stop`, recording the graph at each new version.
fn write_until(
    db: &GraphDb,
    seed: u64,
    mut edges: Edges,
    mut vertices: BTreeSet<u64>,
    version: u64,
    history: &Mutex<History>,
    stop: &AtomicBool,
) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids: Vec<u64> = vertices.iter().copied().collect();
    let mut version = version;
    let mut fresh = 1_000_000 + seed * 1_000;
    while !stop.load(Ordering::Relaxed) {
        let remove = !edges.is_empty() && rng.gen_bool(0.45);
        if remove {
            let i = rng.gen_range(0..edges.len());
            let (s, d) = *edges.iter().nth(i).unwrap();
            db.remove_edges(&[s], &[d]).expect("remove_edges");
            edges.remove(&(s, d));
        } else {
            let s = ids[rng.gen_range(0..ids.len())];
            let d = if rng.gen_bool(0.05) {
                fresh += 1;
                fresh
            } else {
                ids[rng.gen_range(0..ids.len())]
            };
            if edges.contains(&(s, d)) {
                continue;
            }
            db.add_edges(&[s], &[d]).expect("add_edges");
            edges.insert((s, d));
            vertices.insert(d);
        }
        version += 1;
        history.lock().unwrap().states.insert(
            version,
            (Arc::new(edges.clone()), Arc::new(vertices.clone())),
        );
        thread::sleep(Duration::from_micros(rng.gen_range(0..1_500)));
    }
    version
}

fn expected_levels(
    g: &ReferenceGraph,
    start: u64,
    dir: Direction,
    max_depth: Option<u32>,
) -> Vec<u64> {
    // A vertex without arcs is unknown to the reference but exists: it reaches only itself.
    g.bfs_levels(start, dir, max_depth).unwrap_or(vec![1])
}

fn expected_distance(g: &ReferenceGraph, s: u64, t: u64, dir: Direction) -> Option<u32> {
    match g.distance(s, t, dir, None) {
        Some(d) => d,
        None => (s == t).then_some(0),
    }
}

#[test]
fn answers_are_exact_for_the_version_they_name() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let writer_db = db.over_http();
    // Only the large BFS builds snapshots here, so that the seeds without one stay on the
    // indexes however many small traversals they run.
    db.set_snapshot_policy(2, false).unwrap();
    let (mut pinned_moving, mut caught_up, mut answers) = (0u32, 0u32, 0u32);
    for seed in 0..100u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        db.clear().unwrap();
        let (edges, ids) = random_graph(&mut rng);
        let (src, dst): (Vec<u64>, Vec<u64>) = edges.iter().copied().unzip();
        if !src.is_empty() {
            db.add_edges(&src, &dst).unwrap();
        }
        db.add_vertices(&ids).unwrap();
        let version = db.info().unwrap().version;
        let vertices: BTreeSet<u64> = ids.iter().copied().collect();
        let history = Mutex::new(History::default());
        history.lock().unwrap().states.insert(
            version,
            (Arc::new(edges.clone()), Arc::new(vertices.clone())),
        );
        // Half the seeds start with a snapshot (a full BFS on a tiny budget switches to one),
        // so that later answers catch it up; the others stay on the pinned indexes.
        let with_snapshot = seed % 2 == 0;
        let stop = AtomicBool::new(false);
        let asked = thread::scope(|scope| {
            let writer = scope.spawn(|| {
                write_until(
                    &writer_db,
                    seed,
                    edges.clone(),
                    vertices.clone(),
                    version,
                    &history,
                    &stop,
                )
            });
            let mut asked = Vec::new();
            for round in 0..9 {
                let dir = DIRS[rng.gen_range(0..3)];
                let v = ids[rng.gen_range(0..ids.len())];
                // Writers get in only while a procedure yields: yield after every transaction.
                let tx = TxOptions {
                    tx_budget: [4, 16, 64][rng.gen_range(0..3)],
                    yield_every_us: 1,
                };
                if round % 3 == 2 {
                    let t = ids[rng.gen_range(0..ids.len())];
                    let p = db.shortest_path(v, t, dir, None, tx).unwrap().value;
                    asked.push(Asked::Path {
                        source: v,
                        target: t,
                        dir,
                        status: p.status,
                        path: p.path,
                        stats: p.stats,
                    });
                } else if round % 3 == 1 {
                    let max_depth = [None, Some(1), Some(2)][rng.gen_range(0..3)];
                    let d = db.dfs(v, dir, max_depth, 100_000, tx).unwrap().value;
                    asked.push(Asked::Dfs {
                        start: v,
                        dir,
                        max_depth,
                        preorder: d.vertices,
                        stats: d.stats,
                    });
                } else {
                    // Without a snapshot, shallow searches: they stay on the indexes.
                    let max_depth = if with_snapshot && (round == 0 || rng.gen_bool(0.5)) {
                        None
                    } else {
                        Some(rng.gen_range(0..3))
                    };
                    let b = db.bfs(v, dir, max_depth, 0, tx).unwrap().value;
                    asked.push(Asked::Bfs {
                        start: v,
                        dir,
                        max_depth,
                        levels: b.levels,
                        stats: b.stats,
                    });
                }
            }
            stop.store(true, Ordering::Relaxed);
            writer.join().unwrap();
            asked
        });

        let history = history.into_inner().unwrap();
        let mut references: HashMap<u64, ReferenceGraph> = HashMap::new();
        for a in asked {
            let stats = match &a {
                Asked::Bfs { stats, .. } | Asked::Path { stats, .. } | Asked::Dfs { stats, .. } => {
                    stats.clone()
                }
            };
            assert!(
                stats.pinned,
                "seed {seed}: no reset happened, yet {stats:?}"
            );
            assert!(
                stats.version_start <= stats.version && stats.version <= stats.version_end,
                "seed {seed}: {stats:?}"
            );
            pinned_moving += (!stats.from_snapshot && stats.version_end > stats.version) as u32;
            caught_up += (stats.from_snapshot && stats.changes_applied > 0) as u32;
            answers += 1;
            let (edges, vertices) = history
                .states
                .get(&stats.version)
                .unwrap_or_else(|| panic!("seed {seed}: no version {}", stats.version));
            let g = references
                .entry(stats.version)
                .or_insert_with(|| ReferenceGraph::new(edges.iter().copied()));
            match a {
                Asked::Bfs {
                    start,
                    dir,
                    max_depth,
                    levels,
                    stats,
                } => {
                    assert!(vertices.contains(&start));
                    assert_eq!(
                        levels,
                        expected_levels(g, start, dir, max_depth),
                        "seed {seed}: bfs({start}, {dir}, {max_depth:?}) at {stats:?}"
                    );
                }
                Asked::Dfs {
                    start,
                    dir,
                    max_depth,
                    preorder,
                    stats,
                } => {
                    // A vertex without arcs is unknown to the reference: it reaches only itself.
                    let want = g
                        .dfs(start, dir, max_depth)
                        .map_or(vec![start], |t| t.preorder);
                    assert_eq!(
                        preorder, want,
                        "seed {seed}: dfs({start}, {dir}, {max_depth:?}) at {stats:?}"
                    );
                }
                Asked::Path {
                    source,
                    target,
                    dir,
                    status,
                    path,
                    stats,
                } => {
                    let want = expected_distance(g, source, target, dir);
                    let ctx = format!("seed {seed}: path({source}, {target}, {dir}) at {stats:?}");
                    match want {
                        Some(d) => {
                            assert_eq!(status, PathStatus::Found, "{ctx}");
                            assert_eq!(path.len(), d as usize + 1, "{ctx}: {path:?}");
                            assert!(source == target || g.is_path(&path, dir), "{ctx}: {path:?}");
                        }
                        None => assert_eq!(status, PathStatus::Unreachable, "{ctx}"),
                    }
                }
            }
        }
    }
    // Both ways of answering under writes were exercised, many times.
    println!("{answers} answers: {pinned_moving} on the indexes saw writes, {caught_up} caught up");
    assert!(
        pinned_moving > 50,
        "{pinned_moving} index answers saw writes"
    );
    assert!(caught_up > 100, "{caught_up} snapshot answers caught up");
    assert!(answers >= 900);
}

/// An arc that existed at the pinned version, was removed before a paged scan of its list got
/// to it and was back before the list ended, is neither read nor gone at the list's end: the
/// answer must still follow it. A hub's 400 arcs are read one page per transaction while a
/// writer removes and re-adds arcs of the list's upper half.
#[test]
fn arcs_removed_and_re_added_ahead_of_a_paged_scan_are_followed() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let writer_db = db.over_http();
    // No snapshots: every traversal reads the indexes, pinned.
    db.set_snapshot_policy(0, false).unwrap();
    let leaves: Vec<u64> = (1..=400).collect();
    db.add_edges(&vec![0; leaves.len()], &leaves).unwrap();
    // Each write makes one version: the star is whole at the even ones from here, one arc short
    // at the odd ones.
    let whole = db.info().unwrap().version;
    let tx = TxOptions {
        tx_budget: 1,
        yield_every_us: 1,
    };
    let stop = AtomicBool::new(false);
    let (answers, toggled) = thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut toggled = 0u64;
            for k in (201..=400).cycle() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                writer_db.remove_edges(&[0], &[k]).unwrap();
                writer_db.add_edges(&[0], &[k]).unwrap();
                toggled += 1;
            }
            toggled
        });
        let mut answers = Vec::new();
        for _ in 0..3 {
            let b = db.bfs(0, Direction::Out, None, 0, tx).unwrap().value;
            answers.push((b.visited, b.stats));
            let d = db.dfs(0, Direction::Out, None, 0, tx).unwrap().value;
            answers.push((d.visited, d.stats));
        }
        stop.store(true, Ordering::Relaxed);
        (answers, writer.join().unwrap())
    });
    let moved = answers
        .iter()
        .filter(|(_, s)| s.version_end > s.version_start)
        .count();
    println!(
        "{toggled} arcs toggled; {moved} of {} answers saw writes",
        answers.len()
    );
    assert!(moved > 0, "no write landed during a traversal");
    for (visited, stats) in answers {
        assert!(stats.pinned, "{stats:?}");
        let expected = if (stats.version - whole).is_multiple_of(2) {
            401
        } else {
            400
        };
        assert_eq!(visited, expected, "{stats:?}");
    }
}

/// A traversal whose pin is lost to a bulk write meets the written vertices, ids of 2^32 and
/// more, in sets sized densely for the small ids it started with: those ids must not be taken
/// for small ones (on wasm32 an id converted with `as usize` loses its high bits). The BFS must
/// still reach every vertex reachable within two hops at every version, the weighted path must
/// be made of edges that exist. Each query is retried until the write lands while it runs.
#[test]
fn vertices_written_during_a_lost_pin_are_not_taken_for_small_ones() {
    let host = TestHost::start();
    // 0 → 1 (weight 1) → 1000..1399 (1), 0 → 2 (50) → 500..520 (50), 3000..3399 → 520 (100).
    let mut arcs: Vec<(u64, u64, f32)> = vec![(0, 1, 1.0), (0, 2, 50.0)];
    arcs.extend((1000..1400).map(|v| (1, v, 1.0)));
    arcs.extend((500..521).map(|v| (2, v, 50.0)));
    arcs.extend((3000..3400).map(|v| (v, 520, 100.0)));
    let reachable: BTreeSet<u64> = [0, 1, 2]
        .into_iter()
        .chain(1000..1400)
        .chain(500..521)
        .collect();
    let tx = TxOptions {
        tx_budget: 8,
        yield_every_us: 1,
    };
    // Runs `query` on a fresh database holding `arcs` (its small ids make the sets dense) while
    // a bulk write of 10,001 arcs 1 → v, v from `base` up (more changes than the log takes: the
    // pin is lost), lands after `delay`; retried until the write lands while `query` runs.
    let lost_pin =
        |name: &str, base: u64, delay: u64, query: &(dyn Fn(&GraphDb) -> QueryStats + Sync)| {
            for attempt in 0..20 {
                let name = format!("{name}-{attempt}");
                let db = GraphDb::new(host.publish_module(&name), &name);
                db.set_snapshot_policy(0, false).unwrap();
                let src: Vec<u64> = arcs.iter().map(|a| a.0).collect();
                let dst: Vec<u64> = arcs.iter().map(|a| a.1).collect();
                let weights: Vec<f32> = arcs.iter().map(|a| a.2).collect();
                db.add_labelled_edges(&src, &dst, &[], &[], &weights)
                    .unwrap();
                let targets: Vec<u64> = (base..base + 10_001).collect();
                let stats = thread::scope(|scope| {
                    let reader = scope.spawn(|| query(&db));
                    thread::sleep(Duration::from_millis(delay));
                    db.over_http()
                        .add_edges(&vec![1; targets.len()], &targets)
                        .unwrap();
                    reader.join().unwrap()
                });
                if stats.version_end > stats.version_start && !stats.pinned {
                    return;
                }
            }
            panic!("the bulk write never landed during {name}");
        };
    lost_pin("bfs", 1 << 38, 10, &|db| {
        let b = db
            .bfs(0, Direction::Out, Some(2), 100_000, tx)
            .unwrap()
            .value;
        let seen: BTreeSet<u64> = b.vertices.iter().copied().collect();
        let missing: Vec<u64> = reachable.difference(&seen).copied().collect();
        assert!(missing.is_empty(), "missing {missing:?}; {:?}", b.stats);
        b.stats
    });
    lost_pin("weighted", 1 << 32, 10, &|db| {
        let p = db
            .weighted_shortest_path(0, 520, Direction::Out, Follow::ALL, tx)
            .unwrap()
            .value;
        // The only path there is, whatever the write added.
        assert_eq!(
            (&p.status, &p.path[..], p.weight),
            (&PathStatus::Found, &[0, 2, 520][..], 100.0),
            "{:?}",
            p.stats
        );
        p.stats
    });
}

/// A snapshot brought up to date from the log answers as one built from scratch on the same
/// graph; and a bulk load during an index traversal makes it say that it is not one version.
#[test]
fn caught_up_equals_rebuilt_and_a_reset_is_reported() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let (mut edges, ids) = random_graph(&mut rng);
    let (src, dst): (Vec<u64>, Vec<u64>) = edges.iter().copied().unzip();
    db.add_edges(&src, &dst).unwrap();
    db.add_vertices(&ids).unwrap();
    let small = TxOptions {
        tx_budget: 1,
        yield_every_us: 0,
    };
    let full = |v: u64, dir: Direction| db.bfs(v, dir, None, 0, small).unwrap().value;
    assert!(full(ids[0], Direction::Both).stats.from_snapshot);
    // Many single writes, then every answer from the caught-up snapshot.
    for _ in 0..300 {
        let (s, d) = (
            ids[rng.gen_range(0..ids.len())],
            ids[rng.gen_range(0..ids.len())],
        );
        if edges.remove(&(s, d)) {
            db.remove_edges(&[s], &[d]).unwrap();
        } else {
            edges.insert((s, d));
            db.add_edges(&[s], &[d]).unwrap();
        }
    }
    let caught_up: Vec<(u64, Direction, Vec<u64>)> = ids
        .iter()
        .flat_map(|&v| DIRS.map(|dir| (v, dir)))
        .map(|(v, dir)| {
            let b = full(v, dir);
            assert!(b.stats.from_snapshot, "{:?}", b.stats);
            (v, dir, b.levels)
        })
        .collect();
    assert!(caught_up.len() > 50);
    // The same graph, loaded afresh: the log is reset, so the next full BFS builds anew.
    db.clear().unwrap();
    let (src, dst): (Vec<u64>, Vec<u64>) = edges.iter().copied().unzip();
    db.add_edges(&src, &dst).unwrap();
    db.add_vertices(&ids).unwrap();
    let rebuilt = full(ids[0], Direction::Both);
    assert_eq!(rebuilt.stats.changes_applied, 0, "{:?}", rebuilt.stats);
    let reference = ReferenceGraph::new(edges.iter().copied());
    for (v, dir, levels) in caught_up {
        assert_eq!(full(v, dir).levels, levels, "bfs({v}, {dir})");
        assert_eq!(levels, expected_levels(&reference, v, dir, None));
    }

    // A bulk write (a log reset) while a traversal crawls the indexes: the answer says it is
    // not one version. The traversal must still be on the indexes when the write lands; retried
    // until it is.
    let other = GraphDb::new(host.publish_module("other"), "other");
    let (src, dst): (Vec<u64>, Vec<u64>) =
        graph_reference::generate::ring(3_000).into_iter().unzip();
    other.add_edges(&src, &dst).unwrap();
    let mut next = 50_000_000u64;
    for attempt in 0.. {
        assert!(
            attempt < 20,
            "the bulk write never landed during a traversal on the indexes"
        );
        let bulk: Vec<u64> = (next..next + 10_001).collect();
        next += 20_000;
        let answer = thread::scope(|scope| {
            let reader = scope.spawn(|| other.bfs(src[0], Direction::Out, None, 0, small));
            thread::sleep(Duration::from_millis(5));
            other.over_http().add_edges(&bulk, &bulk).unwrap();
            reader.join().unwrap().unwrap().value
        });
        assert_eq!(answer.visited, 3_000);
        let stats = answer.stats;
        if stats.version_end > stats.version_start && !stats.from_snapshot {
            assert!(!stats.pinned, "{stats:?}");
            assert_eq!(stats.version, stats.version_start);
            break;
        }
    }
}

/// The graph at one version, with vertex labels (indices into `VERTEX_LABELS`).
#[derive(Clone, Default)]
struct LabelledState {
    edges: Edges,
    vertices: BTreeSet<u64>,
    labels: BTreeMap<u64, u32>,
}

const VERTEX_LABELS: [&str; 3] = ["", "a", "b"];

impl LabelledState {
    fn reference(&self) -> LabelledGraph {
        let arcs = self.edges.iter().map(|&(s, d)| (s, d, 0, 1.0));
        let mut g = LabelledGraph::new(self.vertices.iter().copied(), arcs);
        for (&v, &label) in &self.labels {
            g.set_vertex_label(v, label);
        }
        g
    }
}

/// Relabels vertices, adds and removes edges, and removes labelled vertices (never one of
/// `keep`, which queries start from), one effective write per call, until `stop`.
fn relabel_until(
    db: &GraphDb,
    seed: u64,
    mut state: LabelledState,
    keep: &[u64],
    version: u64,
    history: &Mutex<HashMap<u64, LabelledState>>,
    stop: &AtomicBool,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x1abe1);
    let names: Vec<String> = VERTEX_LABELS.iter().map(|n| n.to_string()).collect();
    let mut version = version;
    let mut fresh = 2_000_000 + seed * 1_000;
    while !stop.load(Ordering::Relaxed) {
        let ids: Vec<u64> = state.vertices.iter().copied().collect();
        let v = ids[rng.gen_range(0..ids.len())];
        match rng.gen_range(0..10) {
            0..=4 => {
                let label = rng.gen_range(0..3u32);
                if state.labels.get(&v).copied().unwrap_or(0) == label {
                    continue;
                }
                db.set_vertex_labels(&[v], &names, &[label]).unwrap();
                match label {
                    0 => state.labels.remove(&v),
                    _ => state.labels.insert(v, label),
                };
            }
            5..=7 => {
                let d = match rng.gen_bool(0.2) {
                    true => {
                        fresh += 1;
                        fresh
                    }
                    false => ids[rng.gen_range(0..ids.len())],
                };
                if state.edges.remove(&(v, d)) {
                    db.remove_edges(&[v], &[d]).unwrap();
                } else {
                    db.add_edges(&[v], &[d]).unwrap();
                    state.edges.insert((v, d));
                    state.vertices.insert(d);
                }
            }
            _ => {
                if keep.contains(&v) || !state.labels.contains_key(&v) {
                    continue;
                }
                db.remove_vertex(v).unwrap();
                state.edges.retain(|&(s, d)| s != v && d != v);
                state.vertices.remove(&v);
                state.labels.remove(&v);
            }
        }
        version += 1;
        history.lock().unwrap().insert(version, state.clone());
        thread::sleep(Duration::from_micros(rng.gen_range(0..1_500)));
    }
}

/// Vertex labels change under traversals that filter by them: each answer is exactly the graph,
/// labels included, at the version it names, from the pinned indexes and from a snapshot.
#[test]
fn vertex_label_filters_answer_for_the_version_they_name() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("labels"), "labels");
    let writer_db = db.over_http();
    let names: Vec<String> = VERTEX_LABELS.iter().map(|n| n.to_string()).collect();
    let (mut answers, mut moved) = (0u32, 0u32);
    for seed in 0..30u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        db.clear().unwrap();
        let (edges, ids) = random_graph(&mut rng);
        let (src, dst): (Vec<u64>, Vec<u64>) = edges.iter().copied().unzip();
        db.add_edges(&src, &dst).unwrap();
        db.add_vertices(&ids).unwrap();
        let labels: Vec<u32> = ids.iter().map(|_| rng.gen_range(0..3)).collect();
        db.set_vertex_labels(&ids, &names, &labels).unwrap();
        let mut state = LabelledState {
            edges,
            vertices: ids.iter().copied().collect(),
            ..LabelledState::default()
        };
        for (&v, &label) in ids.iter().zip(&labels) {
            if label != 0 {
                state.labels.insert(v, label);
            }
        }
        let version = db.info().unwrap().version;
        let history = Mutex::new(HashMap::from([(version, state.clone())]));
        if seed % 2 == 0 {
            // A snapshot that the answers catch up, labels included.
            let small = TxOptions {
                tx_budget: 1,
                yield_every_us: 0,
            };
            assert!(
                db.bfs(ids[0], Direction::Both, None, 0, small)
                    .unwrap()
                    .value
                    .stats
                    .from_snapshot
            );
        }
        let stop = AtomicBool::new(false);
        let asked = thread::scope(|scope| {
            let writer = scope.spawn(|| {
                relabel_until(
                    &writer_db,
                    seed,
                    state.clone(),
                    &ids,
                    version,
                    &history,
                    &stop,
                )
            });
            let mut asked = Vec::new();
            for round in 0..10 {
                let dir = DIRS[rng.gen_range(0..3)];
                let (v, t) = (
                    ids[rng.gen_range(0..ids.len())],
                    ids[rng.gen_range(0..ids.len())],
                );
                let entered: Vec<u32> = (0..3).filter(|_| rng.gen_bool(0.6)).collect();
                let tx = TxOptions {
                    tx_budget: [4, 16][rng.gen_range(0..2)],
                    yield_every_us: 1,
                };
                let vertex_names: Vec<&str> =
                    entered.iter().map(|&l| VERTEX_LABELS[l as usize]).collect();
                let follow = Follow {
                    edges: &[],
                    vertices: &vertex_names,
                };
                let depth = if round % 2 == 0 { None } else { Some(2) };
                let bfs = db.bfs_over(v, dir, follow, depth, 0, tx).unwrap().value;
                let path = db
                    .shortest_path_over(v, t, dir, follow, None, tx)
                    .unwrap()
                    .value;
                asked.push((v, t, dir, entered, depth, bfs, path));
            }
            stop.store(true, Ordering::Relaxed);
            writer.join().unwrap();
            asked
        });
        let history = history.into_inner().unwrap();
        for (v, t, dir, entered, depth, bfs, path) in asked {
            let kept = KeptBy {
                edges: None,
                vertices: (!entered.is_empty()).then_some(&entered[..]),
            };
            for stats in [&bfs.stats, &path.stats] {
                assert!(stats.pinned, "seed {seed}: {stats:?}");
                moved += (stats.version_end > stats.version) as u32;
                answers += 1;
            }
            let ctx = |stats: &QueryStats| {
                format!("seed {seed}: {v} → {t} {dir} {entered:?} {depth:?} at {stats:?}")
            };
            let at = |stats: &QueryStats| history[&stats.version].reference();
            let g = at(&bfs.stats);
            let want = g.bfs_levels(v, dir, depth, kept);
            assert_eq!(Some(bfs.levels), want, "{}", ctx(&bfs.stats));
            let g = at(&path.stats);
            match g.dijkstra(v, t, dir, kept).expect("both ends exist") {
                Some(hops) => {
                    assert_eq!(path.status, PathStatus::Found, "{}", ctx(&path.stats));
                    assert_eq!(path.path.len() as f64 - 1.0, hops, "{}", ctx(&path.stats));
                    assert!(
                        g.path_weight(&path.path, dir, kept).is_some(),
                        "{}",
                        ctx(&path.stats)
                    );
                }
                None => assert_eq!(path.status, PathStatus::Unreachable, "{}", ctx(&path.stats)),
            }
        }
    }
    println!("{answers} answers, {moved} saw writes");
    assert!(moved > 50, "{moved} answers saw writes");
}

//! The real module, published to the real embedded host, called over HTTP, and checked against
//! the bench-client's independent reference algorithms.

use graph_client::edgelist::EdgeList;
use graph_client::graph::{
    ClientError, Direction, GraphDb, GraphError, Mode, PathStatus, QueryStats, TxOptions,
};
use graph_client::server::ServerError;
use graph_reference::ReferenceGraph;
use graph_testkit::TestHost;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

/// A seeded random graph with sparse ids, self-loops, duplicate rows and two components. In
/// graphs whose seed is 3 mod 4, a quarter of the ids are 2^32 or more, so that edges are stored in both
/// edge tables and some lists span both; one of them is 2^32 - 1, the largest narrow id.
fn random_edges(seed: u64, vertices: u64, edges: usize) -> EdgeList {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut list = EdgeList::new();
    let wide = seed % 4 == 3;
    let id = |i: u64| match i % 4 {
        _ if i == 2 && wide => u64::from(u32::MAX),
        3 if wide => (1 << 32) + i * 1_000,
        _ => i * 1_000 + 7,
    };
    for _ in 0..edges {
        // Power-law-ish endpoints: small indices are much more likely.
        let a = (rng.gen_range(0.0f64..1.0).powi(3) * vertices as f64) as u64;
        let b = rng.gen_range(0..vertices);
        // Keep the two halves apart so that some pairs are disconnected.
        let (a, b) = if (a < vertices / 2) == (b < vertices / 2) {
            (a, b)
        } else {
            (b, b)
        };
        list.push(id(a), id(b));
    }
    list.push(id(1), id(1));
    list.push(list.src[0], list.dst[0]);
    list
}

fn load_in_batches(db: &GraphDb, edges: &EdgeList, batches: usize) {
    let size = edges.len().div_ceil(batches);
    for start in (0..edges.len()).step_by(size) {
        let end = (start + size).min(edges.len());
        db.add_edges(&edges.src[start..end], &edges.dst[start..end])
            .expect("add_edges");
    }
}

fn check_stats(stats: &QueryStats, what: &str) {
    assert!(stats.transactions >= 1, "{what}: {stats:?}");
    assert!(
        stats.max_hold_us <= stats.total_hold_us,
        "{what}: {stats:?}"
    );
    assert!(stats.total_hold_us <= stats.total_us, "{what}: {stats:?}");
    assert!(
        stats.slow_transactions <= stats.transactions
            && (stats.slow_transactions > 0) == (stats.max_hold_us > 5_000),
        "{what}: {stats:?}"
    );
}

fn published(host: &TestHost, name: &str) -> GraphDb {
    GraphDb::new(host.publish_module(name), name)
}

#[test]
fn procedures_agree_with_the_reference() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let edges = random_edges(7, 400, 2_500);
    load_in_batches(&db, &edges, 7);
    let isolated = [999_999_999u64];
    db.add_vertices(&isolated).unwrap();
    let reference = ReferenceGraph::new(edges.iter());

    let info = db.info().unwrap();
    let mut distinct: Vec<(u64, u64)> = edges
        .src
        .iter()
        .copied()
        .zip(edges.dst.iter().copied())
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(info.edges, distinct.len() as u64);
    assert_eq!(info.vertices, reference.vertex_count() as u64 + 1);

    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut fresh = 5_000_000_000u64;
    let vertices = reference.sample_vertices(25, 5);
    for &v in &vertices {
        for dir in DIRS {
            let want = reference.neighbors(v, dir).unwrap();
            let got = db.neighbors(v, dir, 0).unwrap().value;
            assert_eq!(got.neighbors, want, "neighbors({v}, {dir})");
            assert!(!got.truncated);
            let count = db.neighbor_count(v, dir).unwrap().value;
            assert_eq!(count.count, want.len() as u64, "neighbor_count({v}, {dir})");
            check_stats(&count.stats, "neighbor_count");
            assert_eq!(
                db.neighbor_count_stage1(v, dir).unwrap().value.count,
                want.len() as u64
            );
            if want.len() > 1 {
                let limited = db.neighbors(v, dir, 1).unwrap().value;
                assert_eq!((limited.neighbors.len(), limited.truncated), (1, true));
            }

            let max_depth = [None, Some(0), Some(1), Some(3)][rng.gen_range(0..4)];
            let levels = reference.bfs_levels(v, dir, max_depth).unwrap();
            // A tiny budget forces many transactions; the answer must not change.
            let tx = TxOptions {
                tx_budget: [0, 7][rng.gen_range(0..2)],
                yield_every_us: 0,
            };
            let bfs = db.bfs(v, dir, max_depth, 10, tx).unwrap().value;
            assert_eq!(
                bfs.levels, levels,
                "bfs({v}, {dir}, {max_depth:?}) with {tx:?}"
            );
            assert_eq!(bfs.visited, levels.iter().sum::<u64>());
            assert_eq!(bfs.vertices.len(), bfs.visited.min(10) as usize);
            assert_eq!(bfs.vertices[0], v);
            check_stats(&bfs.stats, "bfs");
            if bfs.stats.from_snapshot {
                // This BFS switched to a snapshot (tested on its own elsewhere). A write that
                // changes no answer here makes it stale, so that the next queries read the
                // indexes again.
                fresh += 2;
                db.add_edges(&[fresh], &[fresh + 1]).unwrap();
            } else if tx.tx_budget == 7 && bfs.visited > 20 {
                assert!(bfs.stats.transactions > 1, "budget 7 should split {bfs:?}");
            }
            let stage1 = db.bfs_stage1(v, dir, max_depth).unwrap().value;
            assert_eq!(stage1.levels, levels, "bfs_stage1");
            assert_eq!(
                db.bfs_stage1_reducer(1, v, dir, max_depth).unwrap(),
                levels,
                "bfs reducer"
            );
        }
    }

    let mut found = 0;
    for dir in DIRS {
        for (source, target) in reference.sample_pairs(30, dir, 11) {
            let max_depth = [None, None, Some(2)][rng.gen_range(0..3)];
            let want = reference.distance(source, target, dir, None);
            let tx = TxOptions {
                tx_budget: [0, 5][rng.gen_range(0..2)],
                yield_every_us: 0,
            };
            let ctx = format!("{source}->{target} {dir} {max_depth:?} {tx:?}");
            for mode in [Mode::Stage2, Mode::Stage1Procedure, Mode::Stage1Reducer] {
                let got = match mode {
                    Mode::Stage2 => db
                        .shortest_path(source, target, dir, max_depth, tx)
                        .map(|a| a.value),
                    Mode::Stage1Procedure => db
                        .shortest_path_stage1(source, target, dir, max_depth)
                        .map(|a| a.value),
                    Mode::Stage1Reducer => {
                        match db.shortest_path_stage1_reducer(2, source, target, dir, max_depth) {
                            Ok(path) => {
                                let ok = match want {
                                    None | Some(None) => path.is_empty(),
                                    Some(Some(d)) if max_depth.is_some_and(|m| d > m) => {
                                        path.is_empty()
                                    }
                                    Some(Some(d)) => {
                                        path.len() == d as usize + 1
                                            && reference.is_path(&path, dir)
                                    }
                                };
                                assert!(ok, "{ctx} reducer: {path:?} vs {want:?}");
                            }
                            Err(e) => assert!(want.is_none(), "{ctx} reducer: {e}"),
                        }
                        continue;
                    }
                };
                match (got, want) {
                    (Err(ClientError::Graph(GraphError::UnknownVertex(v))), None) => {
                        assert!(!reference.contains(v), "{ctx}");
                    }
                    (Ok(p), Some(Some(d))) if max_depth.is_none_or(|m| d <= m) => {
                        assert_eq!(p.status, PathStatus::Found, "{ctx} {mode:?}");
                        assert_eq!(p.path.len(), d as usize + 1, "{ctx} {mode:?} {p:?}");
                        assert_eq!((p.path[0], *p.path.last().unwrap()), (source, target));
                        assert!(reference.is_path(&p.path, dir), "{ctx} {mode:?} {p:?}");
                        check_stats(&p.stats, "shortest_path");
                        found += 1;
                    }
                    (Ok(p), Some(Some(_))) => {
                        assert_eq!(p.status, PathStatus::BeyondMaxDepth, "{ctx}")
                    }
                    (Ok(p), Some(None)) => {
                        // With a depth limit, either answer is right: which one depends on
                        // whether the search ran out of vertices before reaching the limit.
                        let ok = p.status == PathStatus::Unreachable
                            || max_depth.is_some() && p.status == PathStatus::BeyondMaxDepth;
                        assert!(p.path.is_empty() && ok, "{ctx} {mode:?}: {p:?}");
                    }
                    (got, want) => panic!("{ctx} {mode:?}: got {got:?}, reference {want:?}"),
                }
            }
        }
    }
    assert!(found > 50, "only {found} paths were checked");

    // The isolated vertex is a vertex: BFS sees only itself, paths to it do not exist.
    let lonely = db
        .bfs(isolated[0], Direction::Both, None, 5, TxOptions::default())
        .unwrap()
        .value;
    assert_eq!((lonely.visited, lonely.levels), (1, vec![1]));
    let p = db.shortest_path(
        vertices[0],
        isolated[0],
        Direction::Both,
        None,
        TxOptions::default(),
    );
    assert_eq!(p.unwrap().value.status, PathStatus::Unreachable);
}

/// Checks a shortest-path answer against the reference distance; returns whether one was found.
fn check_path(
    reference: &ReferenceGraph,
    got: &graph_client::graph::PathResult,
    dir: Direction,
) -> bool {
    let (source, target) = (got.source, got.target);
    match reference.distance(source, target, dir, None) {
        Some(Some(d)) => {
            assert_eq!(got.status, PathStatus::Found, "{got:?}");
            assert_eq!(got.path.len(), d as usize + 1, "{got:?}");
            assert_eq!((got.path[0], *got.path.last().unwrap()), (source, target));
            assert!(reference.is_path(&got.path, dir), "{got:?}");
            true
        }
        Some(None) => {
            assert_eq!(got.status, PathStatus::Unreachable, "{got:?}");
            false
        }
        None => panic!("{got:?} for an unknown vertex"),
    }
}

/// A full BFS that reads a large share of the graph finishes on an in-memory snapshot; later
/// queries use it while the graph is unchanged, and a write makes them read the indexes again.
/// Every answer, from either side, agrees with the reference.
#[test]
fn snapshot_answers_agree_with_the_reference() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let mut edges = random_edges(11, 300, 2_000);
    load_in_batches(&db, &edges, 3);
    let lonely = 999_999_999u64;
    db.add_vertices(&[lonely]).unwrap();
    let mut reference = ReferenceGraph::new(edges.iter());
    let hub = reference.sample_vertices(1, 3)[0];
    let tx = TxOptions::default();

    let before = db
        .shortest_path(hub, lonely, Direction::Both, None, tx)
        .unwrap()
        .value;
    assert!(
        !before.stats.from_snapshot,
        "no snapshot yet: {:?}",
        before.stats
    );
    assert_eq!(before.status, PathStatus::Unreachable);

    // Small transactions, so that the BFS is still running when it has read a quarter of the
    // graph (one paced transaction would read all of this small graph).
    let small = TxOptions {
        tx_budget: 50,
        yield_every_us: 0,
    };
    let full = db.bfs(hub, Direction::Both, None, 0, small).unwrap().value;
    assert_eq!(
        full.levels,
        reference.bfs_levels(hub, Direction::Both, None).unwrap()
    );
    assert!(
        full.stats.from_snapshot,
        "a full BFS should switch: {:?}",
        full.stats
    );
    check_stats(&full.stats, "full bfs");
    // The build reads windows of about 50 edges, also with the far-off id of `lonely` in the
    // graph (a window sized by the largest id would take the whole graph in one transaction).
    assert!(
        full.stats.transactions as usize >= edges.len() / 50,
        "the build read the graph in too few transactions: {:?}",
        full.stats
    );
    let version = db.info().unwrap().version;
    // The instance that built it reports its version and its size, measured by its allocator:
    // a compressed row per direction (4 bytes an arc each) and the id index, so a few dozen
    // bytes an edge on a graph this small.
    let info = db.graph_info().unwrap();
    assert_eq!(
        (
            info.policy.max_snapshots,
            info.policy.build_for_small_traversals
        ),
        (2, true)
    );
    let holder = info
        .snapshots
        .iter()
        .find(|h| h.version == version)
        .unwrap_or_else(|| panic!("no holder of version {version}: {info:?}"));
    assert_eq!(holder.edges, info.meta.edges);
    let per_edge = holder.bytes as f64 / holder.edges as f64;
    assert!(
        (8.0..100.0).contains(&per_edge),
        "{per_edge} bytes/edge: {holder:?}"
    );
    assert!(holder.instance_memory_bytes > holder.bytes, "{holder:?}");

    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for &v in &reference.sample_vertices(15, 8) {
        for dir in DIRS {
            let max_depth = [None, Some(0), Some(1), Some(2)][rng.gen_range(0..4)];
            let bfs = db.bfs(v, dir, max_depth, 5, tx).unwrap().value;
            let ctx = format!("bfs({v}, {dir}, {max_depth:?})");
            assert_eq!(
                bfs.levels,
                reference.bfs_levels(v, dir, max_depth).unwrap(),
                "{ctx}"
            );
            assert_eq!(bfs.vertices.len(), bfs.visited.min(5) as usize, "{ctx}");
            assert!(bfs.stats.from_snapshot, "{ctx}: {:?}", bfs.stats);
            let dfs = db.dfs(v, dir, max_depth, 100_000, tx).unwrap().value;
            let want = reference.dfs(v, dir, max_depth).unwrap();
            assert_eq!(
                (dfs.vertices, dfs.deepest),
                (want.preorder, want.deepest),
                "dfs: {ctx}"
            );
            assert!(dfs.stats.from_snapshot, "{ctx}: {:?}", dfs.stats);
            assert_eq!(
                (bfs.stats.version_start, bfs.stats.version_end),
                (version, version)
            );
            check_stats(&bfs.stats, &ctx);
        }
    }
    let mut found = 0;
    for dir in DIRS {
        for (source, target) in reference.sample_pairs(15, dir, 4) {
            let Ok(p) = db.shortest_path(source, target, dir, None, tx) else {
                assert!(!reference.contains(source) || !reference.contains(target));
                continue;
            };
            let p = p.value;
            assert!(p.stats.from_snapshot, "{p:?}");
            found += check_path(&reference, &p, dir) as u32;
        }
    }
    assert!(found > 20, "only {found} paths were checked");

    // Vertices without arcs are not in the snapshot, but they exist; unknown ones do not.
    let alone = db.bfs(lonely, Direction::Both, None, 5, tx).unwrap().value;
    assert_eq!((alone.visited, alone.stats.from_snapshot), (1, true));
    let to_self = db
        .shortest_path(lonely, lonely, Direction::Out, None, tx)
        .unwrap()
        .value;
    assert_eq!(
        (to_self.status, to_self.path),
        (PathStatus::Found, vec![lonely])
    );
    let away = db
        .shortest_path(lonely, hub, Direction::Both, None, tx)
        .unwrap()
        .value;
    assert_eq!(
        (away.status, away.stats.from_snapshot),
        (PathStatus::Unreachable, true)
    );
    for err in [
        db.bfs(42, Direction::Both, None, 5, tx).map(|_| ()),
        db.shortest_path(hub, 42, Direction::Both, None, tx)
            .map(|_| ()),
    ] {
        assert!(
            matches!(err, Err(ClientError::Graph(GraphError::UnknownVertex(42)))),
            "{err:?}"
        );
    }

    // A write is applied to the snapshot from the change log: the next answers see it.
    db.add_edges(&[lonely], &[hub]).unwrap();
    edges.push(lonely, hub);
    reference = ReferenceGraph::new(edges.iter());
    let after = db
        .shortest_path(hub, lonely, Direction::Both, None, tx)
        .unwrap()
        .value;
    assert!(
        after.stats.from_snapshot && after.stats.changes_applied == 1,
        "not caught up: {:?}",
        after.stats
    );
    assert_eq!(after.stats.version, version + 1);
    assert_eq!(after.path, vec![hub, lonely]);
    let full = db
        .bfs(lonely, Direction::Out, None, 0, small)
        .unwrap()
        .value;
    assert_eq!(
        full.levels,
        reference.bfs_levels(lonely, Direction::Out, None).unwrap()
    );
    assert!(full.stats.from_snapshot, "{:?}", full.stats);
    let version = db.info().unwrap().version;
    assert_eq!(
        (full.stats.version, full.stats.version_end),
        (version, version)
    );
}

/// A build in transactions of one row each still skips the empty id range below a far-off vertex
/// (its windows widen while they come back empty): it once read that range one id per
/// transaction and ran out of the call's fuel.
#[test]
fn a_one_row_build_skips_empty_id_ranges() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let edges = random_edges(5, 60, 200);
    load_in_batches(&db, &edges, 1);
    db.add_vertices(&[999_999]).unwrap();
    let reference = ReferenceGraph::new(edges.iter());
    let start = reference.sample_vertices(1, 2)[0];
    let one = TxOptions {
        tx_budget: 1,
        yield_every_us: 0,
    };
    let full = db.bfs(start, Direction::Both, None, 0, one).unwrap().value;
    assert_eq!(
        full.levels,
        reference.bfs_levels(start, Direction::Both, None).unwrap()
    );
    assert!(full.stats.from_snapshot, "{:?}", full.stats);
    // About a transaction per edge and a few dozen to widen past the gap; a million (one per
    // id) would not fit in the call.
    assert!(
        full.stats.transactions < (4 * edges.len() + 200) as u32,
        "{:?}",
        full.stats
    );
}

/// Small traversals build a snapshot once together they have read through the indexes as many
/// arcs as the graph has edges (on the instance that builds it: the engine shares calls out over
/// a pool of instances), and answer from it afterwards; the owner's policy turns that off, or
/// every snapshot off, and the large BFS still builds one when only small traversals may not.
#[test]
fn small_traversals_pay_for_a_snapshot_and_the_owner_decides() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let edges = random_edges(5, 400, 3_000);
    load_in_batches(&db, &edges, 2);
    let mut reference = ReferenceGraph::new(edges.iter());
    let graph_edges = db.info().unwrap().edges;
    let starts = reference.sample_vertices(40, 9);
    let tx = TxOptions::default();
    // Depth-2 BFS from the sampled vertices in turn, each checked: how many arcs the answers
    // from the indexes read before the first answer from a snapshot (None: none came).
    let shallow = |reference: &ReferenceGraph, limit: u64| -> (u64, Option<usize>) {
        let mut read = 0;
        for (i, &v) in starts.iter().cycle().enumerate() {
            let dir = DIRS[i % 3];
            let b = db.bfs(v, dir, Some(2), 0, tx).unwrap().value;
            let want = reference.bfs_levels(v, dir, Some(2)).unwrap();
            assert_eq!(b.levels, want, "bfs({v}, {dir}, 2): {:?}", b.stats);
            if b.stats.from_snapshot {
                return (read, Some(i));
            }
            read += b.stats.edges_scanned;
            if read > limit {
                return (read, None);
            }
        }
        unreachable!()
    };
    // A full BFS from the first start, in small transactions (so that it reads a large share of
    // the graph through the indexes before it may switch).
    let full_bfs = || {
        let small = TxOptions {
            tx_budget: 50,
            yield_every_us: 0,
        };
        db.bfs(starts[0], Direction::Both, None, 0, small)
            .unwrap()
            .value
    };
    let (read, first) = shallow(&reference, 20 * graph_edges);
    assert!(first.is_some(), "no snapshot after {read} arcs read");
    assert!(
        read >= graph_edges,
        "built after {read} arcs, fewer than the {graph_edges} edges"
    );
    let info = db.graph_info().unwrap();
    assert!(!info.snapshots.is_empty(), "{info:?}");
    // Later answers catch it up.
    db.add_edges(&[starts[0]], &[starts[1]]).unwrap();
    reference = ReferenceGraph::new(edges.iter().chain([(starts[0], starts[1])]));
    let (_, again) = shallow(&reference, 20 * graph_edges);
    assert!(again.is_some());

    // None at all: those held are dropped by their instance's next query.
    db.set_snapshot_policy(0, true).unwrap();
    let (read, first) = shallow(&reference, 3 * graph_edges);
    assert_eq!(first, None, "a snapshot answered after policy 0");
    assert!(read > 3 * graph_edges);
    assert!(db.graph_info().unwrap().snapshots.is_empty());
    let full = full_bfs();
    assert!(!full.stats.from_snapshot, "{:?}", full.stats);

    // Snapshots, but only for a large BFS.
    db.set_snapshot_policy(2, false).unwrap();
    let (_, first) = shallow(&reference, 3 * graph_edges);
    assert_eq!(first, None, "small traversals built one");
    let full = full_bfs();
    assert!(full.stats.from_snapshot, "{:?}", full.stats);
    assert_eq!(
        full.levels,
        reference
            .bfs_levels(starts[0], Direction::Both, None)
            .unwrap()
    );
    let policy = db.graph_info().unwrap().policy;
    assert_eq!(
        (policy.max_snapshots, policy.build_for_small_traversals),
        (2, false)
    );
}

#[test]
fn errors_are_typed_and_bad_input_commits_nothing() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let edges = random_edges(3, 200, 1_000);
    load_in_batches(&db, &edges, 3);
    let before = db.info().unwrap();

    // Reloading the same batches (a retry, or loading a file twice) changes nothing at all.
    load_in_batches(&db, &edges, 5);
    assert_eq!(db.info().unwrap(), before);

    // Bad batches: an error naming the problem, and no change.
    let err = db.add_edges(&[1, 2], &[3]).unwrap_err();
    assert!(
        matches!(&err, ClientError::ReducerFailed { reducer, message }
            if reducer == "add_edges" && message.contains("pair up")),
        "{err}"
    );
    // A batch over the limit: the library does not send it, and the module, called directly,
    // refuses it.
    let many = vec![5u64; 200_001];
    let err = db.add_edges(&many, &many).unwrap_err();
    assert!(
        matches!(&err, ClientError::NotSent { .. })
            && err.to_string().contains("exceeds the limit"),
        "{err}"
    );
    let err = db
        .server()
        .call(db.database(), "add_edges", &serde_json::json!([many, many]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("exceeds the limit"), "{err}");
    let huge = vec![u64::MAX; 60_000];
    let err = db.add_edges(&huge, &huge).unwrap_err().to_string();
    assert!(err.contains("413"), "{err}");
    assert_eq!(db.info().unwrap(), before);

    let unknown = 424_242_424u64;
    let e = db.neighbors(unknown, Direction::Out, 0).unwrap_err();
    assert!(
        matches!(e, ClientError::Graph(GraphError::UnknownVertex(v)) if v == unknown),
        "{e}"
    );
    let e = db
        .bfs(unknown, Direction::Out, None, 0, TxOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Graph(GraphError::UnknownVertex(_))),
        "{e}"
    );
    let v = edges.src[0];
    let e = db
        .shortest_path(v, unknown, Direction::Both, None, TxOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Graph(GraphError::UnknownVertex(u)) if u == unknown),
        "{e}"
    );
    let e = db
        .bfs(v, Direction::Out, Some(5_000_000), 0, TxOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Graph(GraphError::InvalidArgument(_))),
        "{e}"
    );
    let e = db.server().call(
        "graph",
        "bfs",
        &serde_json::json!([v, "sideways", [], [], {"none": {}}, 0, 0, 0]),
    );
    let e = e.map(|o| o.body).unwrap();
    assert!(e.to_string().contains("sideways"), "{e}");
    let e = db
        .server()
        .call(
            "graph",
            "bfs",
            &serde_json::json!([v, "out", [], [], -3, 0, 0, 0]),
        )
        .unwrap_err();
    assert!(matches!(e, ServerError::Http { status: 400, .. }), "{e}");

    // Depth 0 and self-paths.
    let zero = db
        .bfs(v, Direction::Both, Some(0), 5, TxOptions::default())
        .unwrap()
        .value;
    assert_eq!((zero.levels, zero.vertices), (vec![1], vec![v]));
    let own = db
        .shortest_path(v, v, Direction::Out, Some(0), TxOptions::default())
        .unwrap()
        .value;
    assert_eq!((own.status, own.path), (PathStatus::Found, vec![v]));

    // Edits keep counts and degrees exact.
    db.remove_edges(&[edges.src[0]], &[edges.dst[0]]).unwrap();
    assert_eq!(db.info().unwrap().edges, before.edges - 1);
    db.remove_edges(&[edges.src[0]], &[edges.dst[0]]).unwrap();
    assert_eq!(db.info().unwrap().edges, before.edges - 1);
    let hub = edges.dst[5];
    let degree = db
        .neighbors(hub, Direction::Both, 0)
        .unwrap()
        .value
        .neighbors
        .len();
    db.remove_vertex(hub).unwrap();
    assert!(
        db.remove_vertex(hub)
            .unwrap_err()
            .to_string()
            .contains("unknown vertex")
    );
    let after = db.info().unwrap();
    assert_eq!(after.vertices, before.vertices - 1);
    assert!(after.edges + degree as u64 <= before.edges);
    for &w in edges.src.iter().take(50) {
        if w != hub {
            let n = db.neighbors(w, Direction::Both, 0).unwrap().value.neighbors;
            assert!(!n.contains(&hub));
            let c = db.neighbor_count(w, Direction::Out).unwrap().value.count;
            assert_eq!(
                c,
                db.neighbors(w, Direction::Out, 0)
                    .unwrap()
                    .value
                    .neighbors
                    .len() as u64
            );
        }
    }
    db.clear().unwrap();
    let cleared = db.info().unwrap();
    assert_eq!((cleared.vertices, cleared.edges), (0, 0));
    assert!(cleared.version > after.version);
}

/// Data survives a clean restart, which replays nothing: the host snapshots each database as it
/// stops.
#[test]
fn data_survives_a_restart() {
    let mut host = TestHost::start();
    let db = published(&host, "graph");
    let edges = random_edges(5, 100, 300);
    load_in_batches(&db, &edges, 2);
    let before = db.info().unwrap();
    host.restart();
    assert_eq!(db.info().unwrap(), before);
    // The stop snapshotted the database, so the restart restored that snapshot and had nothing
    // of the commit log to replay: the engine logs both offsets as it opens the database.
    let log = host.log();
    let last_offset = |prefix: &str| {
        log.lines()
            .rev()
            .filter_map(|l| l.split_once(prefix))
            .find_map(|(_, rest)| rest.trim_end_matches(')').parse::<u64>().ok())
    };
    let restored = last_offset("restoring snapshot of tx_offset ");
    let durable = last_offset("durable_tx_offset is Some(");
    assert!(
        restored.is_some() && restored == durable,
        "restored {restored:?}, log at {durable:?}:\n{log}"
    );
    let v = edges.src[0];
    assert!(
        db.bfs(v, Direction::Both, None, 0, TxOptions::default())
            .unwrap()
            .value
            .visited
            > 1
    );
}

/// While a long traversal runs, a writer from another client gets in — because the procedure
/// yields. With yielding effectively disabled, the same writer has to wait for the traversal.
#[test]
fn yielding_lets_writers_in_during_a_long_traversal() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let n = 600_000u64;
    let mut ring = EdgeList::new();
    for i in 0..n {
        for k in 1..=3 {
            ring.push(i, (i + k) % n);
        }
    }
    db.load(&ring, |_| {}).unwrap();
    // Another client of the owner's (only the owner and granted identities may write).
    let writer = db.reconnect();

    // Returns (traversal finished, writer finished) in elapsed time since start, and the stats.
    let race = |yield_every_us: u32| {
        let tx = TxOptions {
            tx_budget: 2_000,
            yield_every_us,
        };
        let t0 = Instant::now();
        std::thread::scope(|s| {
            let traversal = s.spawn(|| {
                let r = db.bfs(0, Direction::Out, None, 0, tx).unwrap().value;
                (t0.elapsed(), r)
            });
            std::thread::sleep(std::time::Duration::from_millis(150));
            writer.add_edges(&[n + 1], &[n + 2]).unwrap();
            let wrote = t0.elapsed();
            let (traversed, result) = traversal.join().unwrap();
            (traversed, wrote, result)
        })
    };
    let (traversed, wrote, result) = race(1_000);
    assert_eq!(result.visited, n);
    assert!(
        traversed.as_millis() > 300,
        "traversal too short ({traversed:?}) to show anything; make the graph larger"
    );
    assert!(
        result.stats.yields > 0 && result.stats.transactions > 10,
        "{:?}",
        result.stats
    );
    check_stats(&result.stats, "bfs with yields");
    assert!(
        wrote < traversed,
        "writer {wrote:?} should finish before the traversal {traversed:?}"
    );

    let (traversed, wrote, result) = race(u32::MAX);
    assert_eq!(result.stats.yields, 0);
    check_stats(&result.stats, "bfs without yields");
    // Both ends are timed by different client threads: allow them a little skew.
    let skew = std::time::Duration::from_millis(20);
    assert!(
        wrote + skew >= traversed,
        "without yields the writer ({wrote:?}) waits for the traversal ({traversed:?})"
    );
}

/// A transaction that holds longer than 5 ms is counted in the stats and logged with its work.
#[test]
fn slow_transactions_are_counted_and_logged() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::new(server.clone(), "graph");
    let n = 100_000u64;
    let mut ring = EdgeList::new();
    for i in 0..n {
        ring.push(i, (i + 1) % n);
    }
    db.load(&ring, |_| {}).unwrap();
    // The whole traversal in one transaction: 100,000 vertices take far longer than 5 ms.
    let one_tx = TxOptions {
        tx_budget: u32::MAX,
        yield_every_us: 0,
    };
    let result = db.bfs(0, Direction::Out, None, 0, one_tx).unwrap().value;
    assert_eq!(result.visited, n);
    let stats = result.stats;
    check_stats(&stats, "bfs in one transaction");
    // One transaction reads the graph's version, the other does the whole traversal.
    assert_eq!(
        (stats.transactions, stats.slow_transactions),
        (2, 1),
        "{stats:?}"
    );
    let logs = server.logs("graph", 1_000).unwrap();
    let line = logs
        .lines()
        .find(|l| l.contains("slow transaction"))
        .unwrap_or_else(|| panic!("no slow transaction in the log:\n{logs}"));
    assert!(
        line.contains(&format!("held {} µs", stats.max_hold_us)),
        "{line}"
    );

    // Every slow transaction is logged, also those of procedures that count no work units:
    // `check` reads the whole graph in one transaction.
    let report = db.check().unwrap();
    assert!(report.took_us > 5_000, "{report:?}");
    let logs = server.logs("graph", 1_000).unwrap();
    let held = format!("held {} µs, transaction", report.took_us);
    assert!(logs.contains(&held), "no `{held}` in the log:\n{logs}");

    // Paced, the same traversal is split into many transactions.
    let paced = TxOptions {
        tx_budget: 0,
        yield_every_us: 0,
    };
    let result = db.bfs(0, Direction::Out, None, 0, paced).unwrap().value;
    check_stats(&result.stats, "paced bfs");
    assert!(result.stats.transactions > 1, "{:?}", result.stats);
}

/// A batch finds the arcs it repeats whichever way the module reads them: one range scan for a
/// source with few stored arcs, each arc's insert for a few arcs of a hub or a single arc, no
/// read at all for a source without out-arcs (one that is only a target, or whose arcs were
/// removed). Either way repeats change nothing, new arcs are added once, and an arc given other
/// attributes is refused.
#[test]
fn a_batch_finds_stored_arcs_of_hubs_and_of_small_vertices() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let hub_targets: Vec<u64> = (2..=200).collect();
    db.add_edges(&vec![1; hub_targets.len()], &hub_targets)
        .unwrap();
    // Five arcs of the hub (199 stored): two repeated, three new, one of them a wide id.
    let wide = 1u64 << 33;
    db.add_edges(&[1; 5], &[2, 100, 300, 400, wide]).unwrap();
    // A small vertex, twice, the second time overlapping the first.
    db.add_edges(&[7; 6], &[1, 2, 3, 4, 5, 6]).unwrap();
    db.add_edges(&[7; 8], &[1, 2, 3, 4, 5, 6, 8, 9]).unwrap();
    // Vertex 9 is only a target so far; vertex 11's one arc is wide. Each batch twice.
    for _ in 0..2 {
        db.add_edges(&[9, 9, 11], &[7, 1, wide]).unwrap();
    }
    // Vertex 9's out-arcs removed, then one of them given again.
    db.remove_edges(&[9, 9], &[7, 1]).unwrap();
    db.add_edges(&[9], &[7]).unwrap();
    // Single stored arcs again, narrow and wide.
    db.add_edges(&[1], &[2]).unwrap();
    db.add_edges(&[1], &[wide]).unwrap();
    let info = db.info().unwrap();
    // Stored now besides the hub's and vertex 7's: 9 → 7 and 11 → wide.
    assert_eq!(info.edges, 199 + 3 + 8 + 2);
    assert_eq!(
        db.neighbors(9, Direction::Out, 10).unwrap().value.neighbors,
        [7]
    );
    assert_eq!(
        db.neighbors(11, Direction::Out, 10)
            .unwrap()
            .value
            .neighbors,
        [wide]
    );
    let mut expected: Vec<u64> = (2..=200).chain([300, 400, wide]).collect();
    expected.sort_unstable();
    let out = db.neighbors(1, Direction::Out, 1_000).unwrap().value;
    assert_eq!(out.neighbors, expected);
    let report = db.check().unwrap();
    assert_eq!(report.problems, 0, "{:?}", report.listed);
    // A stored arc of the hub with another weight, among new ones: refused, nothing written.
    let refused = db
        .add_labelled_edges(&[1; 4], &[150, 500, 501, 502], &[], &[], &[2.0; 4])
        .unwrap_err()
        .to_string();
    assert!(refused.contains("edge 1 → 150 exists with"), "{refused}");
    assert_eq!(db.info().unwrap(), info);
    // A single stored arc, narrow or wide, with another weight: refused, nothing written.
    for (src, dst) in [(9, 7), (11, wide)] {
        let refused = db
            .add_labelled_edges(&[src], &[dst], &[], &[], &[2.0])
            .unwrap_err()
            .to_string();
        assert!(refused.contains("exists with"), "{refused}");
        assert_eq!(db.info().unwrap(), info);
    }
    assert_eq!(db.check().unwrap().problems, 0);
}

/// The change log keeps the last 200,000 changes or so (its capacity, 1,000 more before a write
/// trims it), in whole versions: once a write logs past that, the oldest versions go and the
/// log's state says which versions it still covers; writes below it leave the state alone.
#[test]
fn the_change_log_trims_whole_versions_once_full() {
    const CAPACITY: u64 = 200_000;
    const BATCH: u64 = 4_000;
    let host = TestHost::start();
    let db = published(&host, "graph");
    let count = |query: &str| -> u64 {
        let rows = &db.server().sql(db.database(), query).unwrap()[0].rows;
        rows[0][0].as_u64().unwrap()
    };
    let covers_after = || count("SELECT covers_after FROM change_log_state");
    // 1,000 vertices (one logged change each), then batches of 4,000 new arcs among them.
    db.add_vertices(&(0..1_000).collect::<Vec<_>>()).unwrap();
    let first = db.info().unwrap().version;
    let mut arcs = (0..1_000u64).flat_map(|s| (0..1_000u64).map(move |d| (s, d)));
    let mut batches = 0;
    let mut logged = 1_000;
    while logged + BATCH <= CAPACITY + 1_000 {
        let (src, dst): (Vec<u64>, Vec<u64>) = arcs.by_ref().take(BATCH as usize).unzip();
        db.add_edges(&src, &dst).unwrap();
        batches += 1;
        logged += BATCH;
        assert_eq!(
            covers_after(),
            first - 1,
            "nothing trimmed at {logged} changes"
        );
    }
    assert_eq!(count("SELECT COUNT(*) AS n FROM change_log"), logged);
    // The next batch takes the log past its capacity and 1,000 more: the oldest versions go,
    // whole, until at most 200,000 changes are left.
    let (src, dst): (Vec<u64>, Vec<u64>) = arcs.by_ref().take(BATCH as usize).unzip();
    db.add_edges(&src, &dst).unwrap();
    let mut expected = logged + BATCH;
    let mut trimmed = vec![1_000];
    trimmed.extend(std::iter::repeat_n(BATCH, batches));
    let mut oldest = first;
    for size in trimmed {
        if expected <= CAPACITY {
            break;
        }
        expected -= size;
        oldest += 1;
    }
    assert_eq!(count("SELECT COUNT(*) AS n FROM change_log"), expected);
    assert_eq!(covers_after(), oldest - 1);
    let version = db.info().unwrap().version;
    let query = format!("SELECT COUNT(*) AS n FROM change_log WHERE version = {oldest}");
    assert!(count(&query) > 0, "version {oldest} is kept whole");
    assert_eq!(version, first + batches as u64 + 1);
    assert_eq!(db.check().unwrap().problems, 0);
}

/// A DFS bound far beyond the diameter of a random graph: answered without re-entering
/// anything when the bound is beyond the unbounded DFS's depth, refused with a clear error
/// (and the host serving on) when re-entries would cost too much.
#[test]
fn a_dfs_bound_too_costly_is_refused_and_a_loose_one_costs_nothing() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    let mut rng = ChaCha8Rng::seed_from_u64(0xDF5);
    let n = 20_000u64;
    let mut edges = EdgeList::new();
    for _ in 0..100_000 {
        edges.push(rng.gen_range(0..n), rng.gen_range(0..n));
    }
    load_in_batches(&db, &edges, 1);
    let tx = TxOptions::default();
    let unbounded = db.dfs(1, Direction::Both, None, 100, tx).unwrap().value;
    let loose = db
        .dfs(1, Direction::Both, Some(1_000_000), 100, tx)
        .unwrap()
        .value;
    assert_eq!(
        (loose.visited, loose.deepest, &loose.vertices),
        (unbounded.visited, unbounded.deepest, &unbounded.vertices)
    );
    let e = db
        .dfs(1, Direction::Both, Some(5_000), 100, tx)
        .unwrap_err();
    assert!(
        matches!(&e, ClientError::Graph(GraphError::InvalidArgument(why))
            if why.contains("max_depth is too large for a DFS")),
        "{e}"
    );
    assert_eq!(db.info().unwrap().edges, edges.sorted().len() as u64);
}

/// A hub's list read through the indexes in pages of a few arcs, whatever the spacing of its
/// neighbors' ids (a page after the first looks a window of ids ahead, sized by the last page):
/// sparse and dense runs, a cluster below 2^32, wide ids and the top of u64, from the hub and
/// through it, in every direction and at budgets from 1 arc up.
#[test]
fn hub_lists_read_in_pages_whatever_the_spacing_of_their_ids() {
    let host = TestHost::start();
    let db = published(&host, "graph");
    // Through the indexes only: no snapshot answers.
    db.set_snapshot_policy(0, false).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0x4B);
    let hub = 1u64 << 31;
    let top = u64::from(u32::MAX);
    let mut ids: Vec<u64> = (0..300).map(|i| i * 1_000_003).collect();
    ids.extend(400_000_000..400_001_500);
    ids.extend((0..400).map(|_| rng.gen_range(0..=top)));
    ids.extend(top - 40..=top);
    ids.extend((0..100).map(|i| (1u64 << 40) + i * (1 << 30)));
    ids.extend((0..50).map(|_| rng.r#gen::<u64>()));
    ids.extend(u64::MAX - 20..=u64::MAX);
    let mut edges = EdgeList::new();
    for (i, &n) in ids.iter().enumerate() {
        match i % 3 {
            0 => edges.push(hub, n),
            1 => edges.push(n, hub),
            _ => {
                edges.push(hub, n);
                edges.push(n, hub);
            }
        }
    }
    load_in_batches(&db, &edges, 2);
    let reference = ReferenceGraph::new(edges.iter());
    let leaf = ids[7];
    for dir in DIRS {
        for tx_budget in [1, 3, 40, 700, 0] {
            let tx = TxOptions {
                tx_budget,
                yield_every_us: 0,
            };
            let ctx = format!("{dir} budget {tx_budget}");
            let bfs = db.bfs(hub, dir, Some(1), 100_000, tx).unwrap().value;
            let mut seen = bfs.vertices.clone();
            seen.sort_unstable();
            let mut want = reference.neighbors(hub, dir).unwrap();
            want.push(hub);
            want.sort_unstable();
            want.dedup();
            assert_eq!(seen, want, "bfs from the hub, {ctx}");
            assert!(!bfs.stats.from_snapshot, "{ctx}");
            let through = db.bfs(leaf, dir, Some(2), 0, tx).unwrap().value;
            assert_eq!(
                through.levels,
                reference.bfs_levels(leaf, dir, Some(2)).unwrap(),
                "bfs through the hub, {ctx}"
            );
            let dfs = db.dfs(hub, dir, None, 100_000, tx).unwrap().value;
            let trace = reference.dfs(hub, dir, None).unwrap();
            assert_eq!(dfs.vertices, trace.preorder, "dfs from the hub, {ctx}");
            if tx_budget == 3 {
                assert!(bfs.stats.transactions > 100, "{ctx}: {:?}", bfs.stats);
            }
        }
    }
}

/// The owner's limit on snapshots holds when instances decide at once: with two procedure
/// instances and at most one snapshot, two full BFS started together never leave two holders
/// (each instance takes its place in the transaction that checks there is one), and both
/// answers stay right.
/// A restarted host's new instances cannot tell its old instances' `snapshot_holder` rows from
/// those of idle ones, so the rows keep them from building until they expire: within the
/// 2 minutes of the module's expiry (an audit saw every large BFS walk the indexes for 15
/// minutes after two restarts, when rows expired after 15 minutes).
#[test]
fn a_restarted_hosts_snapshot_rows_block_builds_two_minutes_at_most() {
    let mut host = TestHost::start();
    let db = published(&host, "graph");
    let n = 20_000u64;
    let edges: Vec<(u64, u64)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
    let (src, dst): (Vec<u64>, Vec<u64>) = edges.iter().copied().unzip();
    db.add_edges(&src, &dst).unwrap();
    db.set_snapshot_policy(1, false).unwrap();
    let full_bfs = || {
        let bfs = db
            .bfs(0, Direction::Out, None, 0, TxOptions::default())
            .unwrap()
            .value;
        assert_eq!(bfs.visited, n);
        bfs.stats.from_snapshot
    };
    assert!(full_bfs(), "a full BFS builds the snapshot");
    assert_eq!(db.graph_info().unwrap().snapshots.len(), 1);
    host.restart();
    let restarted = Instant::now();
    // The old instance's row still counts: the one place is taken.
    assert!(!full_bfs(), "built beside a row that had not expired");
    let mut built = false;
    while !built && restarted.elapsed() < Duration::from_secs(150) {
        std::thread::sleep(Duration::from_secs(10));
        built = full_bfs();
    }
    assert!(
        built,
        "no build within {:?} of the restart",
        restarted.elapsed()
    );
}

/// A host with two procedure instances and a database of 20,000 vertices, each with an arc to
/// the next one (a ring) and one to 7i + 1; with the full BFS levels from 0, both ways.
fn two_instances_and_a_ring() -> (TestHost, GraphDb, Vec<u64>) {
    let host = TestHost::start_with(&["--procedure-instances", "2"]);
    let db = published(&host, "graph");
    let n = 20_000u64;
    let mut edges = EdgeList::new();
    for i in 0..n {
        edges.push(i, (i + 1) % n);
        edges.push(i, (i * 7 + 1) % n);
    }
    load_in_batches(&db, &edges, 1);
    let reference = ReferenceGraph::new(edges.iter());
    let want = reference.bfs_levels(0, Direction::Both, None).unwrap();
    (host, db, want)
}

/// A lower limit applies to the snapshots already held: with two instances holding one each,
/// lowering the limit to one leaves one holder once both have answered a query, and the
/// answers stay right.
#[test]
fn lowering_the_snapshot_limit_drops_the_extra_snapshots() {
    let (_host, db, want) = two_instances_and_a_ring();
    db.set_snapshot_policy(2, false).unwrap();
    let full_bfs_twice = || {
        std::thread::scope(|s| {
            let calls: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let bfs = db
                            .bfs(0, Direction::Both, None, 0, TxOptions::default())
                            .unwrap()
                            .value;
                        assert_eq!(bfs.levels, want, "{:?}", bfs.stats);
                    })
                })
                .collect();
            calls.into_iter().for_each(|c| c.join().unwrap());
        })
    };
    let mut rounds = 0;
    while db.graph_info().unwrap().snapshots.len() < 2 {
        assert!(rounds < 10, "two instances never held a snapshot each");
        full_bfs_twice();
        rounds += 1;
    }
    db.set_snapshot_policy(1, false).unwrap();
    for _ in 0..3 {
        full_bfs_twice();
    }
    let holders = db.graph_info().unwrap().snapshots;
    assert_eq!(holders.len(), 1, "{holders:?}");
}

#[test]
fn builds_started_together_keep_the_snapshot_limit() {
    let (_host, db, want) = two_instances_and_a_ring();
    db.set_snapshot_policy(1, false).unwrap();
    let small = TxOptions {
        tx_budget: 50,
        yield_every_us: 0,
    };
    for round in 0..3 {
        let answers: Vec<_> = std::thread::scope(|s| {
            let calls: Vec<_> = (0..2)
                .map(|_| s.spawn(|| db.bfs(0, Direction::Both, None, 0, small).unwrap().value))
                .collect();
            calls.into_iter().map(|c| c.join().unwrap()).collect()
        });
        for bfs in &answers {
            assert_eq!(bfs.levels, want, "round {round}: {:?}", bfs.stats);
        }
        let holders = db.graph_info().unwrap().snapshots;
        assert!(holders.len() <= 1, "round {round}: {holders:?}");
        // Start the next round with no snapshot anywhere.
        // (Each instance drops its own at its next query; calls alternate between the two.)
        db.set_snapshot_policy(0, false).unwrap();
        let mut calls = 0;
        while !db.graph_info().unwrap().snapshots.is_empty() {
            assert!(calls < 20, "snapshots kept under policy 0");
            db.bfs(0, Direction::Out, Some(1), 0, small).unwrap();
            calls += 1;
        }
        db.set_snapshot_policy(1, false).unwrap();
    }
}

//! The same module answers the same over both of SpacetimeDB's client transports: every
//! procedure and reducer baseline, called over the SDK's WebSocket (its messages processed in
//! the background for half the graphs, by the waiting call for the other half) and over the HTTP
//! call route on 50 seeded random graphs (the first one empty), gives the same answer, and that
//! answer agrees with the independent reference.

use graph_client::edgelist::EdgeList;
use graph_client::graph::{
    Answer, ClientError, Direction, GraphDb, GraphError, LoadPlan, PathStatus, QueryStats,
    TransportKind, TxOptions,
};
use graph_client::ws::Drive;
use graph_reference::ReferenceGraph;
use graph_testkit::TestHost;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Debug;

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];
/// Not in any graph here.
const UNKNOWN: u64 = 987_654_321;

/// A graph of up to 60 vertices with sparse ids, self-loops and duplicate rows; seed 0 is empty.
fn random_graph(seed: u64) -> EdgeList {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut edges = EdgeList::new();
    if seed == 0 {
        return edges;
    }
    let n = rng.gen_range(1..60u64);
    for _ in 0..rng.gen_range(0..4 * n as usize) {
        let a = rng.gen_range(0..n) * 13 + 1;
        let b = if rng.gen_bool(0.05) {
            a
        } else {
            rng.gen_range(0..n) * 13 + 1
        };
        edges.push(a, b);
        if rng.gen_bool(0.05) {
            edges.push(a, b);
        }
    }
    edges
}

/// An answer with its timing stats cleared: they differ from call to call.
trait Timeless {
    fn timeless(self) -> Self;
}

fn no_stats() -> QueryStats {
    QueryStats {
        transactions: 0,
        yields: 0,
        max_hold_us: 0,
        total_hold_us: 0,
        slow_transactions: 0,
        total_us: 0,
        vertices_expanded: 0,
        edges_scanned: 0,
        lookups: 0,
        version_start: 0,
        version_end: 0,
        from_snapshot: false,
        version: 0,
        pinned: false,
        changes_applied: 0,
        catch_up_us: 0,
    }
}

macro_rules! timeless {
    ($($t:ty),*) => {$(
        impl Timeless for $t {
            fn timeless(mut self) -> Self {
                self.stats = no_stats();
                self
            }
        }
    )*};
}
timeless!(
    graph_client::graph::NeighborCount,
    graph_client::graph::Neighbors,
    graph_client::graph::BfsResult,
    graph_client::graph::DfsResult,
    graph_client::graph::PathResult
);

/// What a call came to: the module's answer or its refusal (any other failure fails the test).
fn outcome<T: Timeless>(what: &str, r: Result<Answer<T>, ClientError>) -> Result<T, GraphError> {
    match r {
        Ok(answer) => Ok(answer.value.timeless()),
        Err(ClientError::Graph(e)) => Err(e),
        Err(e) => panic!("{what}: {e}"),
    }
}

/// Calls `call` over both transports and asserts the same outcome; returns it.
fn both<T: Timeless + PartialEq + Debug>(
    ws: &GraphDb,
    http: &GraphDb,
    what: &str,
    call: impl Fn(&GraphDb) -> Result<Answer<T>, ClientError>,
) -> Result<T, GraphError> {
    let over_ws = outcome(what, call(ws));
    let over_http = outcome(what, call(http));
    assert_eq!(over_ws, over_http, "{what}: WebSocket vs HTTP");
    over_ws
}

#[test]
fn every_procedure_answers_the_same_over_websocket_and_http() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let http = GraphDb::new(server.clone(), "graph");
    let background = GraphDb::websocket(server, "graph", None);
    let caller_driven = background.clone().with_drive(Drive::Caller);
    let mut calls = 0;
    for seed in 0..50u64 {
        // Half the graphs over a connection whose calls drive it themselves.
        let ws = match seed % 4 < 2 {
            true => background.clone(),
            false => caller_driven.clone(),
        };
        let edges = random_graph(seed);
        let reference = ReferenceGraph::new(edges.iter());
        // Each graph replaces the last, written over one transport or the other.
        let writer = if seed % 2 == 0 { &ws } else { &http };
        writer.clear().unwrap();
        writer.load(&edges.sorted(), |_| {}).unwrap();
        let (info_ws, info_http) = (ws.info().unwrap(), http.info().unwrap());
        assert_eq!(info_ws, info_http, "seed {seed}");
        assert_eq!(
            info_ws.vertices,
            reference.vertex_count() as u64,
            "seed {seed}"
        );

        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xABCD);
        let mut vertices = reference.sample_vertices(4, seed);
        vertices.push(UNKNOWN);
        for &v in &vertices {
            for dir in DIRS {
                let ctx = format!("seed {seed}, vertex {v}, {dir}");
                let want = reference.neighbors(v, dir);
                let got = both(&ws, &http, &ctx, |db| db.neighbors(v, dir, 0));
                match (&got, &want) {
                    (Ok(n), Some(want)) => assert_eq!(&n.neighbors, want, "{ctx}"),
                    (Err(GraphError::UnknownVertex(u)), None) => assert_eq!(*u, v),
                    _ => panic!("{ctx}: {got:?} vs reference {want:?}"),
                }
                let limit = rng.gen_range(1..4);
                both(&ws, &http, &ctx, |db| db.neighbors(v, dir, limit)).ok();
                let count = both(&ws, &http, &ctx, |db| db.neighbor_count(v, dir));
                let stage1 = both(&ws, &http, &ctx, |db| db.neighbor_count_stage1(v, dir));
                assert_eq!(count.map(|c| c.count), stage1.map(|c| c.count), "{ctx}");

                let depth = [None, Some(0), Some(1), Some(2)][rng.gen_range(0..4)];
                let tx = TxOptions {
                    tx_budget: [0, 3][rng.gen_range(0..2)],
                    yield_every_us: 0,
                };
                // The same levels; the listed vertices may come in another order within a
                // level (an instance with a snapshot runs the direction-optimizing BFS).
                let want = reference.bfs_levels(v, dir, depth);
                for db in [&ws, &http] {
                    let bfs = outcome(&ctx, db.bfs(v, dir, depth, 8, tx));
                    assert_eq!(bfs.as_ref().ok().map(|b| &b.levels), want.as_ref(), "{ctx}");
                    if let Ok(b) = bfs {
                        assert_bfs_prefix(&reference, &b, dir, 8, &ctx);
                    }
                }
                let stage1 = both(&ws, &http, &ctx, |db| db.bfs_stage1(v, dir, depth));
                assert_eq!(stage1.ok().map(|b| b.levels), want, "{ctx}");
                // DFS: the whole preorder (limit above any graph here) and the deepest hop.
                let dfs = both(&ws, &http, &ctx, |db| db.dfs(v, dir, depth, 10_000, tx));
                let want = reference.dfs(v, dir, depth);
                assert_eq!(
                    dfs.ok().map(|d| (d.vertices, d.deepest, d.visited)),
                    want.map(|t| (t.preorder.clone(), t.deepest, t.preorder.len() as u64)),
                    "{ctx}: dfs"
                );
                calls += 6;
            }
        }
        let targets = reference.sample_vertices(4, seed + 1);
        for (&a, &b) in vertices.iter().zip(targets.iter().chain([&UNKNOWN])) {
            for dir in DIRS {
                let ctx = format!("seed {seed}, {a} -> {b}, {dir}");
                let depth = [None, None, Some(1)][rng.gen_range(0..3)];
                let tx = TxOptions {
                    tx_budget: [0, 2][rng.gen_range(0..2)],
                    yield_every_us: 0,
                };
                let path = both(&ws, &http, &ctx, |db| {
                    db.shortest_path(a, b, dir, depth, tx)
                });
                let stage1 = both(&ws, &http, &ctx, |db| {
                    db.shortest_path_stage1(a, b, dir, depth)
                });
                for got in [path, stage1] {
                    check_path(&reference, a, b, dir, depth, got, &ctx);
                }
                calls += 2;
            }
        }
        // The reducer baseline, whose answer is rows read back with SQL.
        if let Some(&v) = vertices.first().filter(|&&v| v != UNKNOWN) {
            let over_ws = ws
                .bfs_stage1_reducer(seed, v, Direction::Both, None)
                .unwrap();
            let over_http = http
                .bfs_stage1_reducer(seed, v, Direction::Both, None)
                .unwrap();
            assert_eq!(over_ws, over_http, "seed {seed}: bfs reducer");
            assert_eq!(
                Some(over_ws),
                reference.bfs_levels(v, Direction::Both, None)
            );
        }
    }
    assert!(calls > 4_000, "only {calls} calls were compared");
}

/// `bfs.vertices` is the first `limit` vertices of a BFS from `bfs.start`: distinct, in order
/// of depth, each level whole before the next, as many as there are up to `limit`.
fn assert_bfs_prefix(
    reference: &ReferenceGraph,
    bfs: &graph_client::graph::BfsResult,
    dir: Direction,
    limit: usize,
    ctx: &str,
) {
    let list = &bfs.vertices;
    assert_eq!(
        list.len(),
        (bfs.visited as usize).min(limit),
        "{ctx}: {list:?}"
    );
    assert_eq!(list.first(), Some(&bfs.start), "{ctx}: {list:?}");
    let depths: Vec<u32> = list
        .iter()
        .map(|&w| {
            reference
                .distance(bfs.start, w, dir, None)
                .flatten()
                .unwrap_or_else(|| panic!("{ctx}: {w} is not reachable"))
        })
        .collect();
    assert!(depths.is_sorted(), "{ctx}: depths {depths:?}");
    let distinct: std::collections::BTreeSet<_> = list.iter().collect();
    assert_eq!(distinct.len(), list.len(), "{ctx}: {list:?}");
    let last = depths.last().copied().unwrap_or(0);
    for (d, &size) in bfs.levels.iter().enumerate().take(last as usize) {
        let listed = depths.iter().filter(|&&x| x == d as u32).count() as u64;
        assert_eq!(listed, size, "{ctx}: level {d} of {list:?}");
    }
}

/// A shortest path (or refusal) checked against the reference distance.
fn check_path(
    reference: &ReferenceGraph,
    a: u64,
    b: u64,
    dir: Direction,
    depth: Option<u32>,
    got: Result<graph_client::graph::PathResult, GraphError>,
    ctx: &str,
) {
    match (got, reference.distance(a, b, dir, None)) {
        (Err(GraphError::UnknownVertex(u)), None) => assert!(!reference.contains(u), "{ctx}"),
        (Ok(p), Some(Some(d))) if depth.is_none_or(|m| d <= m) => {
            assert_eq!(p.status, PathStatus::Found, "{ctx}");
            assert_eq!(p.path.len(), d as usize + 1, "{ctx}: {p:?}");
            assert_eq!((p.path[0], *p.path.last().unwrap()), (a, b), "{ctx}");
            assert!(reference.is_path(&p.path, dir), "{ctx}: {p:?}");
        }
        (Ok(p), Some(Some(_))) => assert_eq!(p.status, PathStatus::BeyondMaxDepth, "{ctx}"),
        (Ok(p), Some(None)) => {
            let ok = p.status == PathStatus::Unreachable
                || depth.is_some() && p.status == PathStatus::BeyondMaxDepth;
            assert!(ok && p.path.is_empty(), "{ctx}: {p:?}");
        }
        (got, want) => panic!("{ctx}: {got:?}, reference {want:?}"),
    }
}

/// Calls sent without waiting (many in flight on one WebSocket), by both ways of sending them
/// (a handle to wait on, a callback), all land; each failure reaches its own caller and takes
/// nothing else with it; over HTTP the same API completes each call as it is sent.
#[test]
fn pipelined_writes_all_land_and_fail_alone() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    for db in [
        GraphDb::websocket(server.clone(), "graph", None),
        GraphDb::new(server.clone(), "graph"),
    ] {
        db.clear().unwrap();
        let edges: Vec<(u64, u64)> = (0..300).map(|i| (i % 17, 1_000 + i)).collect();
        let (answers, called_back) = std::sync::mpsc::channel();
        let mut sent = Vec::new();
        let mut then_calls = 0;
        for (i, &(s, d)) in edges.iter().enumerate() {
            if i % 2 == 0 {
                sent.push(db.send_add_edges(&[s], &[d]).unwrap());
            } else {
                let answers = answers.clone();
                db.add_edges_then(&[s], &[d], move |o| answers.send(o).unwrap())
                    .unwrap();
                then_calls += 1;
            }
            // Two sources, one target: the module refuses the call.
            if i % 100 == 50 {
                sent.push(db.send_add_edges(&[1, 2], &[3]).unwrap());
            } else if i % 100 == 75 {
                let answers = answers.clone();
                db.add_edges_then(&[1, 2], &[3], move |o| answers.send(o).unwrap())
                    .unwrap();
                then_calls += 1;
            }
        }
        let mut outcomes: Vec<_> = sent.into_iter().map(|call| call.wait()).collect();
        let timeout = std::time::Duration::from_secs(30);
        outcomes.extend((0..then_calls).map(|_| called_back.recv_timeout(timeout).unwrap()));
        let failed: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
        assert_eq!(failed.len(), 6, "{:?}: {failed:?}", db.transport());
        for e in failed {
            assert!(
                matches!(e, ClientError::ReducerFailed { reducer, .. } if reducer == "add_edges"),
                "{e}"
            );
        }
        let info = db.info().unwrap();
        assert_eq!(
            (info.edges, info.vertices),
            (300, 317),
            "{:?}",
            db.transport()
        );
        let reference = ReferenceGraph::new(edges.iter().copied());
        for v in [0, 16, 1_000, 1_299] {
            let want = reference.neighbors(v, Direction::Both).unwrap();
            let got = db.neighbors(v, Direction::Both, 0).unwrap().value;
            assert_eq!(got.neighbors, want, "{v}");
        }
    }
}

/// A load with two calls out at once whose fifth call the module refuses (an edge it holds with
/// another weight) stops there on both transports (over HTTP one call is out at a time): the
/// error names the edges before that call as acknowledged, those are stored, the refused call
/// stored nothing, and over the WebSocket, where the next call is already out when the refusal
/// comes, that call is stored whole; loading the rest from the acknowledged point completes the
/// graph.
#[test]
fn a_load_refused_part_way_names_what_is_stored() {
    const BATCH: usize = 100;
    let host = TestHost::start();
    let server = host.publish_module("graph");
    for db in [
        GraphDb::websocket(server.clone(), "graph", None),
        GraphDb::new(server.clone(), "graph"),
    ] {
        let transport = db.transport();
        db.clear().unwrap();
        // Edge 450 of the load is (9_500, 9_501), stored first with weight 2 (the load gives
        // every edge weight 1.5).
        db.add_labelled_edges(&[9_500], &[9_501], &[], &[], &[2.0])
            .unwrap();
        let mut edges = EdgeList::new();
        for i in 0..1_000u64 {
            edges.push_with(i * 10 + 5_000, i * 10 + 5_001, "", 1.5);
        }
        let plan = LoadPlan {
            batch: BATCH,
            in_flight: 2,
            ..LoadPlan::default()
        };
        let failure = db.load_with(&edges, plan, |_| {}).unwrap_err();
        assert_eq!(failure.durable, 4 * BATCH, "{transport:?}: {failure}");
        assert!(
            failure.to_string().contains("exists with"),
            "{transport:?}: {failure}"
        );
        let rows = server
            .sql("graph", "SELECT fwd FROM edge")
            .unwrap()
            .remove(0)
            .rows;
        let held: std::collections::HashSet<u64> =
            rows.iter().map(|row| row[0].as_u64().unwrap()).collect();
        let stored: Vec<bool> = (0..edges.len())
            .map(|i| held.contains(&(edges.src[i] << 32 | edges.dst[i])))
            .collect();
        assert!(stored[..400].iter().all(|&s| s), "{transport:?}");
        assert_eq!(
            stored[400..500].iter().filter(|&&s| s).count(),
            1,
            "{transport:?}: only the edge stored before"
        );
        // The next call was out (and ran) over the WebSocket; over HTTP it was never sent.
        let next = stored[500..600].iter().filter(|&&s| s).count();
        let out = if transport == TransportKind::Ws {
            BATCH
        } else {
            0
        };
        assert_eq!(next, out, "{transport:?}");
        assert!(stored[600..].iter().all(|&s| !s), "{transport:?}");
        let info = db.info().unwrap();
        assert_eq!(info.edges as usize, 401 + next, "{transport:?}");
        // Without the conflicting edge, loading from the acknowledged point completes it.
        db.remove_edges(&[9_500], &[9_501]).unwrap();
        let mut rest = edges.clone();
        rest.skip_first(failure.durable);
        let outcome = db.load_with(&rest, plan, |_| {}).unwrap();
        assert_eq!(outcome.already_present(), next as u64, "{transport:?}");
        assert!(!outcome.others_wrote, "{transport:?}");
        assert_eq!(outcome.graph.edges, 1_000, "{transport:?}");
        let report = db.check().unwrap();
        assert_eq!(report.problems, 0, "{transport:?}: {report:?}");
    }
}

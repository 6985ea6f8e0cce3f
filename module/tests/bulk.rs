//! Bulk loads on the real host: once `finish_bulk_load` has ended one, the graph is exactly
//! what the same writes make outside a bulk load (every vertex row with its degrees and label,
//! the counts), whatever the ids (sparse, at the top of u64), the window size, and adds that
//! arrive while it finishes. Meanwhile queries and removals are refused with a clear error.

use graph_client::edgelist::EdgeList;
use graph_client::graph::{
    ClientError, Direction, GraphDb, GraphError, LoadPlan, LoadProgress, TxOptions,
};
use graph_client::server::Server;
use graph_testkit::TestHost;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::time::Duration;

const LABELS: [&str; 3] = ["", "follows", "likes"];

/// A batch of arcs `(src, dst, label index, weight)`, the label and weight fixed by the ends
/// so that a batch sent again, or an arc given twice, never conflicts.
type Batch = Vec<(u64, u64, u32, f32)>;

fn arc(s: u64, d: u64) -> (u64, u64, u32, f32) {
    let h = s.wrapping_mul(31).wrapping_add(d);
    (s, d, (h % 3) as u32, (h % 4) as f32 * 0.5)
}

/// Random batches over sparse ids, some at the top of u64 (`wide_edge` rows), with a hub,
/// self-loops and arcs repeated within and across batches.
fn random_batches(rng: &mut ChaCha8Rng) -> Vec<Batch> {
    let n = rng.gen_range(1..80u64);
    let id = |i: u64| match i % 7 {
        6 => u64::MAX - i,
        _ => i * 7_919 % 1_000_003,
    };
    (0..rng.gen_range(1..6))
        .map(|_| {
            (0..rng.gen_range(0..n * 3 + 1))
                .map(|_| {
                    let s = if rng.gen_bool(0.2) {
                        id(1)
                    } else {
                        id(rng.gen_range(0..n))
                    };
                    let d = if rng.gen_bool(0.05) {
                        s
                    } else {
                        id(rng.gen_range(0..n))
                    };
                    arc(s, d)
                })
                .collect()
        })
        .collect()
}

fn send(db: &GraphDb, batch: &[(u64, u64, u32, f32)]) {
    if batch.is_empty() {
        return;
    }
    let names: Vec<String> = LABELS.iter().map(|l| l.to_string()).collect();
    let (src, dst): (Vec<u64>, Vec<u64>) = batch.iter().map(|a| (a.0, a.1)).unzip();
    let labels: Vec<u32> = batch.iter().map(|a| a.2).collect();
    let weights: Vec<f32> = batch.iter().map(|a| a.3).collect();
    db.add_labelled_edges(&src, &dst, &names, &labels, &weights)
        .unwrap();
}

fn label(db: &GraphDb, ids: &[u64]) {
    let names = vec!["a".to_string(), "b".to_string()];
    let labels: Vec<u32> = ids.iter().map(|&v| (v % 2) as u32).collect();
    db.set_vertex_labels(ids, &names, &labels).unwrap();
}

/// Every vertex row, as SQL reads it: id → (out-degree, in-degree, label id).
fn vertex_rows(server: &Server, database: &str) -> BTreeMap<u64, (u32, u32, u32)> {
    let rows = server
        .sql(database, "SELECT * FROM vertex")
        .unwrap()
        .remove(0)
        .rows;
    rows.into_iter()
        .map(|row| {
            let (id, out, inc, label): (u64, u32, u32, u32) = serde_json::from_value(row).unwrap();
            (id, (out, inc, label))
        })
        .collect()
}

/// The rows of the private table in which a bulk load's adds mark where their arcs end.
fn marks_left(server: &Server, database: &str) -> usize {
    let rows = server.sql(database, "SELECT * FROM bulk_mark").unwrap();
    rows[0].rows.len()
}

fn refused(result: Result<impl std::fmt::Debug, ClientError>, what: &str) {
    match result {
        Err(ClientError::Graph(GraphError::BulkLoadUnderWay(_))) => {}
        other => panic!("{what} during a bulk load: {other:?}"),
    }
}

/// Gives the first vertex row below `below` (finished, so checked) a wrong out-degree through
/// SQL, asserts that `check` names it, and puts the degree back; `false` if there is none.
fn spoil_a_finished_row(db: &GraphDb, server: &Server, below: u64) -> bool {
    let Some((&id, &(out, ..))) = vertex_rows(server, "bulk").range(..below).next() else {
        return false;
    };
    let set = |degree: u32| {
        let sql = format!("UPDATE vertex SET out_degree = {degree} WHERE id = {id}");
        server.sql("bulk", &sql).unwrap();
    };
    set(out + 1_000);
    let check = db.check().unwrap();
    assert_eq!(check.problems, 1, "{:?}", check.listed);
    assert!(
        check.listed[0].starts_with(&format!("vertex {id}:")),
        "{:?}",
        check.listed
    );
    set(out);
    true
}

#[test]
fn a_finished_bulk_load_is_the_graph_plain_writes_make() {
    let host = TestHost::start();
    let server = host.publish_module("bulk");
    let plain_server = host.publish_module("plain");
    let http = GraphDb::new(server.clone(), "bulk");
    let ws = GraphDb::websocket(server.clone(), "bulk", None);
    let plain = GraphDb::new(plain_server.clone(), "plain");
    let (mut most_calls, mut late_during_finish, mut spoiled) = (0, 0, 0);
    for seed in 0..40u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let db = if seed % 2 == 0 { &http } else { &ws };
        let batches = random_batches(&mut rng);
        let late = random_batches(&mut rng).remove(0);
        let labelled: Vec<u64> = batches
            .iter()
            .flatten()
            .map(|a| a.0)
            .chain([seed * 1_000 + 500_000])
            .take(5)
            .collect();
        for g in [db, &plain] {
            g.clear().unwrap();
        }
        db.begin_bulk_load().unwrap();
        db.begin_bulk_load().unwrap(); // Again: a resumed load does.
        for (i, batch) in batches.iter().enumerate() {
            send(db, batch);
            send(&plain, batch);
            if i == 0 {
                // Vertex labels during the load, some on vertices without arcs.
                label(db, &labelled);
                label(&plain, &labelled);
                send(db, batch); // A batch sent again changes nothing.
            }
        }
        if let Some(&(v, ..)) = batches.iter().flatten().next() {
            refused(db.neighbor_count(v, Direction::Out), "neighbor_count");
            refused(db.neighbors(v, Direction::Both, 0), "neighbors");
            let tx = TxOptions::default();
            refused(db.bfs(v, Direction::Out, None, 0, tx), "bfs");
            refused(db.shortest_path(v, v, Direction::In, None, tx), "path");
            refused(db.export_page(None, None, 0), "export_page");
            let removal = db.remove_edges(&[v], &[v]).unwrap_err().to_string();
            assert!(removal.contains("bulk load"), "{removal}");
            let info = db.graph_info().unwrap();
            assert!(info.bulk_load.is_some());
            // No row is written yet, and none is missing.
            let check = db.check().unwrap();
            assert_eq!(check.problems, 0, "seed {seed}: {:?}", check.listed);
        }
        // Small windows, and adds (at the lowest ids too) after two of them: finished as well.
        let rows = [0, 1, 3, 17][seed as usize % 4];
        let mut steps = 0;
        let calls = db
            .finish_bulk_load(rows, |below, last| {
                assert!(below <= last, "{below} > {last}");
                // The rows written so far are checked, and right; the others are not written.
                let check = db.check().unwrap();
                assert_eq!(check.problems, 0, "seed {seed}: {:?}", check.listed);
                if steps == 1 {
                    spoiled += spoil_a_finished_row(db, &server, below) as u32;
                }
                steps += 1;
                if steps == 3 {
                    send(db, &late);
                    send(db, &[arc(0, 1)]);
                }
            })
            .unwrap();
        if steps < 3 {
            // Finished before: the same adds, outside the bulk load.
            send(db, &late);
            send(db, &[arc(0, 1)]);
        } else {
            late_during_finish += 1;
        }
        most_calls = most_calls.max(calls);
        send(&plain, &late);
        send(&plain, &[arc(0, 1)]);
        assert!(db.graph_info().unwrap().bulk_load.is_none());
        assert_eq!(
            vertex_rows(&server, "bulk"),
            vertex_rows(&plain_server, "plain"),
            "seed {seed}, rows {rows}"
        );
        let (got, want) = (db.info().unwrap(), plain.info().unwrap());
        assert_eq!(
            (got.vertices, got.edges, got.max_vertex_id),
            (want.vertices, want.edges, want.max_vertex_id),
            "seed {seed}"
        );
        let check = db.check().unwrap();
        assert_eq!(check.problems, 0, "seed {seed}: {:?}", check.listed);
        // Answers again, and removals.
        for &(s, d, ..) in batches.iter().flatten().take(3) {
            assert_eq!(
                db.neighbor_count(s, Direction::Out).unwrap().value.count,
                plain.neighbor_count(s, Direction::Out).unwrap().value.count
            );
            for g in [db, &plain] {
                g.remove_edges(&[s], &[d]).unwrap();
            }
        }
    }
    // The windows were small enough for many calls, and adds came while finishing.
    assert!(most_calls >= 10, "{most_calls} calls at most");
    assert!(late_during_finish >= 5, "{late_during_finish}");
    assert!(spoiled >= 5, "{spoiled}");
}

#[test]
fn a_bulk_load_ends_with_clear_graph_and_only_writers_run_one() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::new(server.clone(), "graph");
    let stranger = GraphDb::new(host.anonymous(), "graph");
    // Nothing under way: finishing does nothing.
    assert_eq!(db.finish_bulk_load(0, |_, _| {}).unwrap(), 0);
    let e = stranger.begin_bulk_load().unwrap_err().to_string();
    assert!(e.contains("may not change this graph"), "{e}");
    db.begin_bulk_load().unwrap();
    send(&db, &[arc(1, 2), arc(2, 3)]);
    let e = stranger
        .finish_bulk_load(0, |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("may not change this graph"), "{e}");
    let e = db.remove_vertex(1).unwrap_err().to_string();
    assert!(e.contains("bulk load"), "{e}");
    // Conflicts are found as outside a bulk load, and such a call stores nothing.
    let names = vec![String::new()];
    let edges = db.info().unwrap().edges;
    let e = db
        .add_labelled_edges(&[5, 1], &[6, 2], &names, &[0, 0], &[1.0, 9.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("exists with"), "{e}");
    let e = db
        .add_labelled_edges(&[5, 5], &[6, 6], &names, &[0, 0], &[1.0, 9.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("twice"), "{e}");
    assert_eq!(db.info().unwrap().edges, edges);
    assert!(marks_left(&server, "graph") > 0);
    db.clear().unwrap();
    assert!(db.graph_info().unwrap().bulk_load.is_none());
    assert_eq!(marks_left(&server, "graph"), 0);
    send(&db, &[arc(1, 2)]);
    let info = db.info().unwrap();
    assert_eq!((info.vertices, info.edges), (2, 1));
    assert_eq!(db.neighbor_count(2, Direction::In).unwrap().value.count, 1);
    // An empty bulk load finishes in one call, with nothing to write.
    db.clear().unwrap();
    db.begin_bulk_load().unwrap();
    assert_eq!(db.finish_bulk_load(0, |_, _| {}).unwrap(), 1);
    assert_eq!(db.info().unwrap().vertices, 0);
}

/// Ids far from 0 (from 10^9 and from 2^40, in `edge` and in `wide_edge`): finishing starts at
/// the lowest end the load added, in windows sized for the span of its ids, not for ids spread
/// from 0 (which would take them all in one long call).
#[test]
fn finishing_starts_where_the_ids_do() {
    let host = TestHost::start();
    let server = host.publish_module("bulk");
    let plain_server = host.publish_module("plain");
    let db = GraphDb::new(server.clone(), "bulk");
    let plain = GraphDb::new(plain_server.clone(), "plain");
    for base in [1_000_000_000u64, 1 << 40] {
        let mut rng = ChaCha8Rng::seed_from_u64(base);
        let batch: Batch = (0..20_000)
            .map(|_| {
                arc(
                    base + rng.gen_range(0..5_000),
                    base + rng.gen_range(0..5_000),
                )
            })
            .collect();
        let lowest = batch.iter().map(|a| a.0.min(a.1)).min().unwrap();
        for g in [&db, &plain] {
            g.clear().unwrap();
        }
        db.begin_bulk_load().unwrap();
        send(&db, &batch);
        send(&plain, &batch);
        let load = db.graph_info().unwrap().bulk_load.unwrap();
        assert_eq!(load.finished_below, lowest, "base {base}");
        // About 45,000 rows (both ends of 20,000 arcs, 5,000 vertices) at 1,000 per call.
        let calls = db.finish_bulk_load(1_000, |_, _| {}).unwrap();
        assert!((20..200).contains(&calls), "base {base}: {calls} calls");
        assert_eq!(
            vertex_rows(&server, "bulk"),
            vertex_rows(&plain_server, "plain"),
            "base {base}"
        );
        assert_eq!(db.check().unwrap().problems, 0, "base {base}");
    }
}

/// Two dense runs of ids far apart (from 0, in `edge`, and from 10^12, in `wide_edge`), with
/// arcs within each and between them, sent in several calls: every finishing call reads about
/// the rows it is asked for, also the first after the gap (a window grown while crossing the
/// gap would take the whole second run at once), and the first after an add, made while the
/// window is wide in the gap, sent finishing back to the first run.
#[test]
fn finishing_calls_stay_short_across_a_gap_in_the_ids() {
    const ROWS: u32 = 1_000;
    let host = TestHost::start();
    let server = host.publish_module("bulk");
    let plain_server = host.publish_module("plain");
    let db = GraphDb::new(server.clone(), "bulk");
    let plain = GraphDb::new(plain_server.clone(), "plain");
    let far = 1_000_000_000_000u64;
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut batches: Vec<Batch> = (0..4)
        .map(|_| {
            (0..40_000)
                .map(|_| {
                    let (s, d) = (rng.gen_range(0..20_000), rng.gen_range(0..20_000));
                    match rng.gen_range(0..3) {
                        0 => arc(s, d),
                        1 => arc(far + s, far + d),
                        _ => arc(s, far + d),
                    }
                })
                .collect()
        })
        .collect();
    for b in &mut batches {
        b.sort_unstable_by_key(|a| (a.0, a.1));
        b.dedup_by_key(|a| (a.0, a.1));
    }
    db.begin_bulk_load().unwrap();
    for b in &batches {
        send(&db, b);
        send(&plain, b);
    }
    // Rows a call reads: each arc at both ends.
    let late = arc(1, 2);
    let mut arcs: std::collections::BTreeSet<(u64, u64)> =
        batches.iter().flatten().map(|a| (a.0, a.1)).collect();
    arcs.insert((late.0, late.1));
    let mut ends: Vec<u64> = arcs.iter().flat_map(|&(s, d)| [s, d]).collect();
    ends.sort_unstable();
    // Where each call starts (where finishing had come to, or 1 after the late add) and where
    // finishing had come to before it.
    let (mut starts, mut came_to) = (Vec::new(), Vec::new());
    let mut sent = false;
    let calls = db
        .finish_bulk_load(ROWS, |below, _| {
            came_to.push(below);
            if below >= far / 1_000 && !sent {
                send(&db, &[late]);
                sent = true;
                starts.push(late.0);
            } else {
                starts.push(below);
            }
        })
        .unwrap();
    send(&plain, &[late]);
    assert!(sent, "no window reached {}", far / 1_000);
    came_to.push(u64::MAX);
    let read: Vec<usize> = (0..starts.len())
        .map(|i| {
            ends.partition_point(|&e| e < came_to[i + 1]) - ends.partition_point(|&e| e < starts[i])
        })
        .collect();
    // Twice the rows asked for, and the ends of one mark per list (sources, targets) of each
    // add call past the marks the window holds: a mark per 32nd of a list, or per 1,024 ends
    // (`bulk::mark_spacing`).
    let bound = 2 * ROWS as usize
        + batches
            .iter()
            .map(|b| 2 * b.len().div_ceil(32).max(1_024))
            .sum::<usize>();
    let most = read.iter().max().copied().unwrap_or(0);
    assert!(most <= bound, "{calls} calls read {read:?} from {starts:?}");
    assert!(read.iter().sum::<usize>() > ends.len());
    assert_eq!(
        vertex_rows(&server, "bulk"),
        vertex_rows(&plain_server, "plain")
    );
    assert_eq!(db.check().unwrap().problems, 0);
    assert_eq!(marks_left(&server, "bulk"), 0);
}

/// `load_with` reports a bulk load under way once it has begun, and finished once its vertex
/// rows are written and seen written: `graph load`'s hint on an error says whether the graph
/// still refuses queries by these reports (a failure while finishing reports the load perhaps
/// under way). Here the host goes down at the report of the finish, so the load's last call
/// (the graph's counts) fails; once up again, the graph answers queries and holds every edge.
#[test]
fn a_load_reports_its_bulk_load_finished_before_its_last_call() {
    let mut host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let mut edges = EdgeList::new();
    for i in 0..2_000u64 {
        edges.push(i, (i * 7 + 1) % 2_000);
    }
    let mut reports = Vec::new();
    let plan = LoadPlan {
        batch: 500,
        ..LoadPlan::default()
    };
    let failure = db.load_with(&edges, plan, |p| {
        if !matches!(
            p,
            LoadProgress::Edges { .. } | LoadProgress::VertexRows { .. }
        ) {
            reports.push(p);
        }
        if p == LoadProgress::BulkLoadFinished {
            assert!(host.terminate(Duration::from_secs(60)));
        }
    });
    assert!(failure.is_err(), "{failure:?}");
    assert_eq!(
        reports,
        [
            LoadProgress::BulkLoad { certain: true },
            LoadProgress::BulkLoadFinished
        ]
    );
    host.relaunch();
    let db = GraphDb::new(host.anonymous(), "graph");
    assert_eq!(db.graph_info().unwrap().bulk_load, None);
    assert_eq!(db.info().unwrap().edges, 2_000);
    assert_eq!(db.neighbor_count(0, Direction::Out).unwrap().value.count, 1);
}

//! The typed client over the SDK's WebSocket: live changes through `watch`, and a connection
//! that outlives a host restart. The real host and module, the real SDK.

use graph_client::graph::{ClientError, Direction, GraphDb, GraphMeta};
use graph_client::module_bindings::{EdgeTableAccess as _, GraphMetaTableAccess as _};
use graph_client::watch::{Change, WatchedEdge, watch};
use graph_client::ws::Drive;
use graph_testkit::TestHost;
use spacetimedb_sdk::{DbContext as _, Table as _, TableWithPrimaryKey as _};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

/// An unlabelled edge of weight 1.
fn plain(src: u64, dst: u64) -> WatchedEdge {
    WatchedEdge {
        src,
        dst,
        label: None,
        weight: 1.0,
    }
}

#[test]
fn watch_sees_writes_and_deletes() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server.clone(), "graph", None);
    let writer = GraphDb::new(server, "graph");
    writer.add_edges(&[7, 7, 8], &[1, 2, 7]).unwrap();

    let mut changes = watch(&db, Some(7)).unwrap();
    let Some(Change::Subscribed { meta, edges }) = changes.next(WAIT) else {
        panic!("no initial state");
    };
    let meta = meta.expect("the graph_meta row");
    assert_eq!(edges, [plain(7, 1), plain(7, 2)]);
    assert_eq!((meta.vertices, meta.edges), (4, 3));

    // One call that adds two edges of 7 and one of 9: both of 7's rows, then one version.
    writer.add_edges(&[7, 9, 7], &[3, 7, 4]).unwrap();
    let mut rows = Vec::new();
    let mut metas: Vec<GraphMeta> = Vec::new();
    while rows.len() < 2 || metas.is_empty() {
        match changes.next(WAIT).expect("a change") {
            Change::EdgeInserted(e) => rows.push(e),
            Change::Meta(m) => metas.push(m),
            other => panic!("unexpected {other:?}"),
        }
    }
    rows.sort_unstable_by_key(|e| e.dst);
    assert_eq!(rows, [plain(7, 3), plain(7, 4)]);
    assert_eq!(metas.len(), 1);
    assert_eq!((metas[0].edges, metas[0].version), (6, meta.version + 1));

    writer.remove_edges(&[7], &[1]).unwrap();
    let mut deleted = false;
    let mut version = 0;
    while !deleted || version == 0 {
        match changes.next(WAIT).expect("a change") {
            Change::EdgeDeleted(e) if e == plain(7, 1) => deleted = true,
            Change::Meta(m) => version = m.version,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(version, meta.version + 2);
    // A call with a narrow and a wide edge of 7 (a target at or above 2^32, another table),
    // and its removal: each call's rows come before its version, whatever their table.
    let wide = 1u64 << 40;
    writer.add_edges(&[7, 7], &[5, wide]).unwrap();
    writer.remove_edges(&[7, 7], &[5, wide]).unwrap();
    let mut calls = Vec::new();
    for _ in 0..2 {
        let mut rows: Vec<Change> = (0..2).map(|_| changes.next(WAIT).unwrap()).collect();
        let Some(Change::Meta(m)) = changes.next(WAIT) else {
            panic!("no version after {rows:?}");
        };
        rows.sort_unstable_by_key(|c| format!("{c:?}"));
        calls.push((rows, m.version));
    }
    let (added, removed) = (Change::EdgeInserted, Change::EdgeDeleted);
    assert_eq!(
        calls,
        [
            (
                vec![added(plain(7, wide)), added(plain(7, 5))],
                meta.version + 3
            ),
            (
                vec![removed(plain(7, wide)), removed(plain(7, 5))],
                meta.version + 4
            ),
        ]
    );
    // A write to an unwatched vertex changes only the meta row.
    writer.add_edges(&[10], &[11]).unwrap();
    assert!(matches!(changes.next(WAIT), Some(Change::Meta(_))));
    assert_eq!(changes.next(Duration::from_millis(300)), None);
}

#[test]
fn watch_names_labels_and_weights() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server.clone(), "graph", None);
    let writer = GraphDb::new(server, "graph");
    let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    writer
        .add_labelled_edges(
            &[5, 5],
            &[1, 1 << 40],
            &names(&["road"]),
            &[0, 0],
            &[2.5, 0.0],
        )
        .unwrap();

    let mut changes = watch(&db, Some(5)).unwrap();
    let Some(Change::Subscribed { edges, .. }) = changes.next(WAIT) else {
        panic!("no initial state");
    };
    let road = |dst, weight| WatchedEdge {
        src: 5,
        dst,
        label: Some("road".into()),
        weight,
    };
    assert_eq!(edges, [road(1, 2.5), road(1 << 40, 0.0)]);

    // A label first used by this write arrives with the edge that uses it.
    writer
        .add_labelled_edges(
            &[5, 5],
            &[2, 3],
            &names(&["rail", ""]),
            &[0, 1],
            &[0.25, 7.0],
        )
        .unwrap();
    let mut rows = Vec::new();
    while rows.len() < 2 {
        match changes.next(WAIT).expect("a change") {
            Change::EdgeInserted(e) => rows.push(e),
            Change::Meta(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    rows.sort_unstable_by_key(|e| e.dst);
    let rail = WatchedEdge {
        label: Some("rail".into()),
        ..road(2, 0.25)
    };
    let unlabelled = WatchedEdge {
        label: None,
        ..road(3, 7.0)
    };
    assert_eq!(rows, [rail.clone(), unlabelled.clone()]);

    writer.remove_edges(&[5], &[2]).unwrap();
    loop {
        match changes.next(WAIT).expect("a change") {
            Change::EdgeDeleted(e) => break assert_eq!(e, rail),
            Change::Meta(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    // The owner's SQL may change a row in place (around the reducers, see the README): the
    // watch reports the old row deleted and the new one inserted.
    let fwd = 5u64 << 32 | 3;
    writer
        .server()
        .sql(
            "graph",
            &format!("UPDATE edge SET weight = 9 WHERE fwd = {fwd}"),
        )
        .unwrap();
    let after = WatchedEdge {
        weight: 9.0,
        ..unlabelled.clone()
    };
    // (The meta row of the removal above may come first: SQL changes no meta row.)
    let edge_changes: Vec<Change> = std::iter::from_fn(|| changes.next(WAIT))
        .filter(|c| !matches!(c, Change::Meta(_)))
        .take(2)
        .collect();
    assert_eq!(
        edge_changes,
        [Change::EdgeDeleted(unlabelled), Change::EdgeInserted(after)]
    );
}

#[test]
fn a_websocket_client_survives_a_host_restart() {
    let mut host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server, "graph", None);
    db.add_edges(&[1], &[2]).unwrap();
    let before = db.info().unwrap();
    let mut changes = watch(&db, None).unwrap();
    assert!(matches!(
        changes.next(WAIT),
        Some(Change::Subscribed { .. })
    ));

    host.restart();
    // The subscription ends with the connection, and says so.
    assert_eq!(changes.next(WAIT), Some(Change::Disconnected));
    // The next call reconnects, with the same identity, and finds the durable data.
    assert_eq!(db.info().unwrap(), before);
    db.add_edges(&[2], &[3]).unwrap();
    assert_eq!(db.info().unwrap().edges, 2);
}

/// Called from inside a Tokio runtime (an application's own), the client runs the SDK's
/// message thread and keeps one connection for all its calls: it used to count that connection
/// down as soon as it opened, and opened a new one for every call.
#[test]
fn calls_from_inside_a_runtime_keep_their_connection() {
    let host = TestHost::start();
    let db = GraphDb::websocket(host.publish_module("graph"), "graph", None);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        db.add_edges(&[1, 1], &[2, 3]).unwrap();
        let connection = db.ws_connection().unwrap().unwrap();
        let first = connection.try_connection_id();
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert_eq!(db.neighbor_count(1, Direction::Out).unwrap().value.count, 2);
        }
        assert!(connection.is_up());
        let now = db.ws_connection().unwrap().unwrap().try_connection_id();
        assert!(first.is_some() && now == first, "{first:?} then {now:?}");
    });
}

/// A connection driven by its callers reads nothing between calls, so the host closes it once
/// it has been silent for the idle timeout. The next call notices before it sends anything
/// and opens a new connection, so that even a write (never sent twice) goes through once;
/// callbacks, which would run only while a call waits, are refused.
#[test]
fn a_caller_driven_client_reopens_a_connection_the_host_closed() {
    let host = TestHost::start_with(&["--ws-ping-interval", "200ms", "--ws-idle-timeout", "600ms"]);
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server, "graph", None).with_drive(Drive::Caller);
    assert_eq!(db.drive(), Some(Drive::Caller));
    db.add_edges(&[1], &[2]).unwrap();
    let identity = db.identity().unwrap().unwrap();
    let connection_id = || db.ws_connection().unwrap().unwrap().try_connection_id();
    let first = connection_id();
    assert!(first.is_some());
    std::thread::sleep(Duration::from_secs(2));
    db.add_edges(&[2], &[3]).unwrap();
    assert_eq!(db.info().unwrap().edges, 2);
    assert_ne!(
        connection_id(),
        first,
        "the host closed the idle connection"
    );
    // The same identity on the new connection (its token was kept).
    assert_eq!(db.identity().unwrap().unwrap(), identity);
    let refused = db.add_edges_then(&[3], &[4], |_| {});
    assert!(
        refused.is_err_and(|e| e.to_string().contains("Drive::Background")),
        "callbacks on a caller-driven connection"
    );
    assert_eq!(db.info().unwrap().edges, 2);
}

/// Threads sharing a caller-driven connection each get their own answers: whichever waits
/// drives the connection for all of them.
#[test]
fn threads_share_a_caller_driven_connection() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server, "graph", None).with_drive(Drive::Caller);
    let n = 40u64;
    let targets: Vec<u64> = (1..=n).collect();
    db.add_edges(&vec![0; n as usize], &targets).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let db = db.clone();
            scope.spawn(move || {
                for i in 0..50u64 {
                    let v = 1 + (t * 50 + i) % n;
                    let count = db.neighbor_count(v, Direction::In).unwrap().value.count;
                    assert_eq!(count, 1, "vertex {v}");
                    assert_eq!(db.neighbor_count(0, Direction::Out).unwrap().value.count, n);
                }
            });
        }
    });
}

/// Calls that could not work are refused before anything is sent, with a reason: a
/// subscription on a connection driven by its callers (nothing would read what the server
/// pushes between calls), and a batch over the module's limit (past the server's message limit
/// the WebSocket would only close). The connection serves on.
#[test]
fn what_could_not_work_is_refused_before_it_is_sent() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let caller = GraphDb::websocket(server.clone(), "graph", None).with_drive(Drive::Caller);
    let refused = watch(&caller, Some(1)).err().expect("watch refused");
    assert!(
        refused.to_string().contains("Drive::Background"),
        "{refused}"
    );
    let db = GraphDb::websocket(server, "graph", None);
    for items in [200_001, 5_000_000] {
        let ids = vec![1u64; items];
        let err = db.add_edges(&ids, &ids).unwrap_err();
        assert!(
            matches!(&err, ClientError::NotSent { .. })
                && err.to_string().contains("exceeds the limit"),
            "{err}"
        );
        let err = db.remove_edges(&ids, &ids).unwrap_err();
        assert!(matches!(&err, ClientError::NotSent { .. }), "{err}");
    }
    caller.add_edges(&[1], &[2]).unwrap();
    assert_eq!(db.info().unwrap().edges, 1);
}

/// A fresh database has its `graph_meta` row (empty, version 0) from the start, so that an
/// application's `on_update` sees the first write as it sees every later one (the README's
/// example registers only `on_update`).
#[test]
fn a_fresh_graph_has_its_meta_row_and_the_first_write_updates_it() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server, "graph", None);
    let conn = db.ws_connection().unwrap().unwrap();
    let (updated, updates) = std::sync::mpsc::channel();
    conn.db.graph_meta().on_update(move |_, old, new| {
        let _ = updated.send((old.version, new.version, new.edges));
    });
    let mut changes = watch(&db, None).unwrap();
    let Some(Change::Subscribed { meta, .. }) = changes.next(WAIT) else {
        panic!("no initial state");
    };
    let meta = meta.expect("the graph_meta row of a fresh graph");
    assert_eq!((meta.vertices, meta.edges, meta.version), (0, 0, 0));
    db.add_edges(&[1], &[2]).unwrap();
    assert_eq!(updates.recv_timeout(WAIT), Ok((0, 1, 1)));
}

/// Dropping a `Watch` ends its subscription and takes its callbacks off the shared connection:
/// its rows leave the client cache, and a watch of another vertex sees only that vertex.
#[test]
fn a_dropped_watch_ends_its_subscription() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server, "graph", None);
    db.add_edges(&[1, 1, 2], &[2, 3, 3]).unwrap();
    let conn = db.ws_connection().unwrap().unwrap();
    let cached = || (conn.db.edge().count(), conn.db.graph_meta().count());
    let mut first = watch(&db, Some(1)).unwrap();
    assert!(matches!(first.next(WAIT), Some(Change::Subscribed { .. })));
    assert_eq!(cached(), (2, 1));
    drop(first);
    let until = std::time::Instant::now() + WAIT;
    while cached() != (0, 0) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(cached(), (0, 0), "the dropped watch's rows stay cached");

    let mut second = watch(&db, Some(2)).unwrap();
    let Some(Change::Subscribed { edges, .. }) = second.next(WAIT) else {
        panic!("no initial state");
    };
    assert_eq!(edges, [plain(2, 3)]);
    db.add_edges(&[1, 2], &[4, 4]).unwrap();
    let mut seen = Vec::new();
    while !matches!(seen.last(), Some(Change::Meta(_))) {
        seen.push(second.next(WAIT).expect("a change"));
    }
    assert_eq!(seen[0], Change::EdgeInserted(plain(2, 4)), "{seen:?}");
    assert_eq!(seen.len(), 2, "{seen:?}");
}

/// A callback runs on the thread that delivers every answer, so a call made there that waits
/// for its answer would wait for itself (until its timeout, 600 s, holding up every other
/// connection of the process): it is refused at once instead, and the connection serves on.
#[test]
fn a_call_that_waits_inside_a_callback_is_refused_at_once() {
    let host = TestHost::start();
    let db = GraphDb::websocket(host.publish_module("graph"), "graph", None);
    let (tx, rx) = std::sync::mpsc::channel();
    let inner = db.clone();
    db.add_edges_then(&[1], &[2], move |added| {
        let (info, write) = (inner.info(), inner.add_edges(&[2], &[3]));
        // Sending is fine in a callback; waiting for the answer is not.
        let sent = inner.send_add_edges(&[4], &[5]).unwrap().wait();
        let _ = tx.send((added, info, write, sent));
    })
    .unwrap();
    let (added, info, write, sent) = rx.recv_timeout(Duration::from_secs(10)).expect("no answer");
    added.unwrap();
    for refused in [info.map(|_| ()), write] {
        let err = refused.unwrap_err();
        assert!(
            matches!(&err, ClientError::NotSent { .. }) && err.to_string().contains("callback"),
            "{err}"
        );
    }
    let err = sent.unwrap_err();
    assert!(
        !matches!(&err, ClientError::NotSent { .. }) && err.to_string().contains("was sent"),
        "{err}"
    );
    assert_eq!(db.info().unwrap().edges, 2);
}

/// A stopping host takes no more calls on open WebSockets: a writer calling back to back has
/// only the call under way answered once the host has the signal, and the snapshot taken at
/// stop holds every acknowledged write, so the restart restores it and replays nothing. (The connections
/// used to take and commit calls until the process exited, the snapshot missed them, and the
/// restart replayed them from the commit log.)
#[test]
fn a_stopping_host_takes_no_more_websocket_calls() {
    let mut host = TestHost::start();
    let db = GraphDb::websocket(host.publish_module("graph"), "graph", None);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut acknowledged = Vec::new();
            for i in 0u64.. {
                if db.add_edges(&[i], &[i + 1]).is_err() {
                    return acknowledged;
                }
                acknowledged.push(std::time::Instant::now());
            }
            unreachable!()
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let signalled = std::time::Instant::now();
    assert!(
        host.terminate(Duration::from_secs(30)),
        "the host did not stop"
    );
    let acknowledged = writer.join().unwrap();
    // The calls answered between the `kill` and the host's reaction to it (1-2 here; 13-18,
    // over 20-30 ms, before): a count, not a bound, on a machine whose scheduling varies.
    let late = acknowledged.iter().filter(|&&at| at > signalled).count();
    assert!(!acknowledged.is_empty());
    let stopped_at = host.log().len();
    host.relaunch();
    assert_eq!(db.info().unwrap().edges, acknowledged.len() as u64);
    let restart = host.log()[stopped_at..].to_string();
    let offset = |marker: &str| {
        let at = restart
            .find(marker)
            .unwrap_or_else(|| panic!("{marker}: {restart}"));
        let digits = restart[at + marker.len()..].trim_start_matches("Some(");
        let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap();
        digits[..end].parse::<u64>().unwrap()
    };
    assert_eq!(
        offset("restoring snapshot of tx_offset "),
        offset("durable_tx_offset is "),
        "the restart replayed transactions ({late} calls answered after the signal)"
    );
}

/// Deleting a database, or resetting it with a `clear` publish, while a client writes to it
/// over the WebSocket leaves the host serving the others: the old replica stops once the calls
/// it took are done, and the writer's connection closes. (The engine stopped it while it
/// committed a call, panicked on its closed commit log, and the host exited: audit helper-77.)
#[test]
fn deleting_a_database_under_writes_leaves_the_host_serving() {
    let host = TestHost::start();
    let (_, owner) = host.client();
    owner
        .publish("other", graph_testkit::module_wasm(), false)
        .unwrap();
    // Each round's delete or reset may land between two commits, or in one.
    for clear in [true, false, true, false, true, false] {
        owner
            .publish("graph", graph_testkit::module_wasm(), true)
            .unwrap();
        let ws = GraphDb::websocket(owner.clone(), "graph", None);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                for call in 0u64.. {
                    let first = call * 50_000;
                    let src: Vec<u64> = (first..first + 50_000).collect();
                    let failed = ws.add_edges(&src, &src).is_err();
                    if failed || stop.load(std::sync::atomic::Ordering::SeqCst) {
                        return call;
                    }
                }
                unreachable!()
            })
        };
        std::thread::sleep(Duration::from_millis(600));
        if clear {
            owner
                .publish("graph", graph_testkit::module_wasm(), true)
                .unwrap();
        } else {
            let deleted = reqwest::blocking::Client::new()
                .delete(format!("{}/v1/database/graph", host.url()))
                .bearer_auth(owner.token().unwrap())
                .send()
                .unwrap();
            assert_eq!(deleted.status().as_u16(), 200);
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let calls = writer.join().unwrap();
        assert!(
            calls > 0,
            "the writer wrote nothing before the {clear} reset/delete"
        );
        let other = GraphDb::new(owner.clone(), "other");
        assert_eq!(other.info().unwrap().edges, 0, "{}", host.log());
    }
    assert!(!host.log().contains("panicked"), "{}", host.log());
}

/// A `_then` call's callback runs exactly once, also when no answer comes: the SDK alone calls
/// it only with an answer, so a pipelining program that counts its answers would wait for ever
/// on calls cut off by a host that stopped answering (each gets "no answer within" at the
/// timeout) or went away (each gets "closed before the answer"), also when another call's
/// callback panics.
#[test]
fn then_callbacks_hear_of_calls_left_unanswered() {
    let mut host = TestHost::start();
    let server = host.publish_module("graph");
    let db = GraphDb::websocket(server.with_timeout(Duration::from_secs(2)), "graph", None);
    db.add_edges(&[1], &[2]).unwrap();
    let signal = |name: &str| host.signal(name);
    let (tx, rx) = std::sync::mpsc::channel();
    let send = |src: u64, dst: u64| {
        let tx = tx.clone();
        let sent = std::time::Instant::now();
        db.add_edges_then(&[src], &[dst], move |outcome| {
            let _ = tx.send((sent.elapsed(), outcome.map_err(|e| e.to_string())));
        })
        .unwrap();
    };
    // A callback that panics (an `unwrap` of the error) keeps neither the other calls' nor
    // later calls' callbacks from running.
    let panics = |src: u64| {
        db.add_edges_then(&[src], &[src + 1], |outcome| {
            outcome.expect("a callback that panics on the error");
        })
        .unwrap();
    };
    signal("-STOP");
    panics(1);
    send(1, 2);
    let (took, outcome) = rx
        .recv_timeout(WAIT)
        .expect("no callback after the timeout");
    let err = outcome.unwrap_err();
    assert!(took < Duration::from_secs(10), "{took:?}: {err}");
    assert!(
        err.contains("no answer within 2s") && err.contains("may or may not"),
        "{err}"
    );
    let calls = 200;
    panics(5);
    for i in 0..calls {
        send(10 + i, 11 + i);
    }
    host.crash();
    for _ in 0..calls {
        let (_, outcome) = rx.recv_timeout(WAIT).expect("a callback never called");
        let err = outcome.unwrap_err();
        assert!(err.contains("closed before the answer arrived"), "{err}");
    }
    assert!(rx.try_recv().is_err(), "a callback called twice");
}

/// Inside a current-thread Tokio runtime (`#[tokio::test]`'s default) the SDK cannot connect
/// (it needs `block_in_place`): the client connects from another thread, and serves the
/// connection from its own, so that blocking calls work there as over HTTP.
#[test]
fn calls_from_a_current_thread_runtime_work() {
    let host = TestHost::start();
    let db = GraphDb::websocket(host.publish_module("graph"), "graph", None);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        db.add_edges(&[1, 1], &[2, 3]).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(db.neighbor_count(1, Direction::Out).unwrap().value.count, 2);
    });
    assert_eq!(db.info().unwrap().edges, 2);
}

/// `Server::with_timeout` bounds every call on both transports, and opening a WebSocket: against
/// a host that stopped answering (SIGSTOP), a call fails after about that long, saying so, not
/// after 600 s (or, for a connection, never); a query that timed out is not sent again, and
/// leaves its connection up for the other calls.
#[test]
fn calls_wait_no_longer_than_the_timeout_set() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let timeout = Duration::from_secs(2);
    let ws = GraphDb::websocket(server.clone().with_timeout(timeout), "graph", None);
    let http = GraphDb::new(server.clone().with_timeout(timeout), "graph");
    ws.add_edges(&[1], &[2]).unwrap();
    http.add_edges(&[2], &[3]).unwrap();
    let signal = |name: &str| host.signal(name);
    signal("-STOP");
    let took = |db: &GraphDb| {
        let started = std::time::Instant::now();
        let err = db.info().unwrap_err();
        (started.elapsed(), err.to_string())
    };
    let (ws_took, ws_err) = took(&ws);
    let (http_took, http_err) = took(&http);
    // A write that timed out is not sent again, whatever it is, and may still be carried out
    // (this one changes nothing: the edge is absent).
    let write = ws.remove_edges(&[9], &[9]).unwrap_err().to_string();
    // A new connection: the TCP connection opens (the kernel accepts it), the upgrade gets no
    // answer. The next call waits for the same opening rather than start another.
    let fresh = ws.reconnect();
    let (connect_took, connect_err) = took(&fresh);
    let (again_took, again_err) = took(&fresh);
    signal("-CONT");
    assert!(ws_took < Duration::from_secs(10), "{ws_took:?}: {ws_err}");
    assert!(ws_err.contains("no answer within 2s"), "{ws_err}");
    assert!(
        write.contains("may or may not have carried it out"),
        "{write}"
    );
    assert!(
        connect_took < Duration::from_secs(10),
        "{connect_took:?}: {connect_err}"
    );
    for (took, err) in [(connect_took, &connect_err), (again_took, &again_err)] {
        assert!(took < Duration::from_secs(10), "{took:?}: {err}");
        assert!(err.contains("did not answer within 2s"), "{err}");
    }
    assert!(
        http_took < Duration::from_secs(10),
        "{http_took:?}: {http_err}"
    );
    assert!(http_err.contains("no answer within 2s"), "{http_err}");
    // The connection whose call timed out is still up, and serves again once the host has
    // caught up; so does the one that was opening.
    let patient = GraphDb::websocket(server, "graph", None);
    assert_eq!(patient.info().unwrap().edges, 2);
    assert!(ws.ws_connection().unwrap().unwrap().is_up());
    assert_eq!(ws.info().unwrap().edges, 2);
    assert_eq!(fresh.info().unwrap().edges, 2);
}

/// A server's refusal to open the WebSocket is typed, as over HTTP: the status of the refused
/// upgrade (404 for an unknown database, 401 for a token it does not accept), not only text.
#[test]
fn a_refused_connection_gives_its_status() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let status = |db: GraphDb| match db.info() {
        Err(ClientError::Connection(e)) => e.status,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        status(GraphDb::websocket(server.clone(), "nope", None)),
        Some(404)
    );
    let err = GraphDb::websocket(server, "Not_A_Name", None)
        .info()
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Connection(e) if e.status == Some(400))
            && err.to_string().contains("valid database name"),
        "{err}"
    );
    let stranger = graph_client::server::Server::new(host.url()).with_token("not.a.token");
    assert_eq!(
        status(GraphDb::websocket(stranger, "graph", None)),
        Some(401)
    );
}

/// A row callback of a connection opened in a multi-threaded runtime runs on the thread that
/// processes that connection's messages, as every callback of the client's own connections
/// does: a call made there that would wait for its answer is refused at once, not left waiting
/// out the timeout for the thread it holds.
#[test]
fn a_waiting_call_in_a_row_callback_is_refused_in_a_runtime_too() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let db = GraphDb::websocket(
        server.clone().with_timeout(Duration::from_secs(5)),
        "graph",
        None,
    );
    let (applied_tx, applied) = std::sync::mpsc::channel();
    let (tx, rx) = std::sync::mpsc::channel();
    runtime.block_on(async {
        let conn = db.ws_connection().unwrap().unwrap();
        let inner = db.clone();
        conn.db.edge().on_insert(move |_, _| {
            let _ = tx.send(inner.info().map(|_| ()));
        });
        conn.subscription_builder()
            .on_applied(move |_| applied_tx.send(()).unwrap())
            .subscribe(["SELECT * FROM edge"]);
    });
    applied
        .recv_timeout(WAIT)
        .expect("the subscription applied");
    GraphDb::new(server, "graph").add_edges(&[1], &[2]).unwrap();
    let started = std::time::Instant::now();
    let err = rx
        .recv_timeout(WAIT)
        .expect("the callback ran")
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::NotSent { .. }) && err.to_string().contains("callback"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(db.info().unwrap().edges, 1);
}

/// Calls made straight from the tasks of a multi-threaded runtime, more at once than it has
/// workers, on one connection opened there: each blocks its worker only after handing the
/// worker's other tasks on, among them the connection's own, so all are answered. (They used to
/// wait out the timeout, or hang: every worker blocked, nothing read the socket.)
#[test]
fn many_calls_from_async_tasks_on_few_workers() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    GraphDb::new(server.clone(), "graph")
        .add_edges(&[1, 1], &[2, 3])
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let timeout = Duration::from_secs(30);
    let db = GraphDb::websocket(server.with_timeout(timeout), "graph", None);
    let started = std::time::Instant::now();
    let answers = runtime.block_on(async {
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let db = db.clone();
                tokio::spawn(async move { db.neighbor_count(1, Direction::Out).map(|a| a.value) })
            })
            .collect();
        let mut answers = Vec::new();
        for call in calls {
            answers.push(call.await.unwrap());
        }
        answers
    });
    for answer in answers {
        assert_eq!(answer.unwrap().count, 2);
    }
    assert!(started.elapsed() < timeout, "{:?}", started.elapsed());
}

//! The typed client over the SDK's WebSocket: live changes through `watch`, and a connection
//! that outlives a host restart. The real host and module, the real SDK.

use graph_client::graph::{GraphDb, GraphMeta};
use graph_client::watch::{Change, watch};
use graph_testkit::TestHost;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

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
    assert_eq!(edges, [(7, 1), (7, 2)]);
    assert_eq!((meta.vertices, meta.edges), (4, 3));

    // One call that adds two edges of 7 and one of 9: both of 7's rows, then one version.
    writer.add_edges(&[7, 9, 7], &[3, 7, 4]).unwrap();
    let mut rows = Vec::new();
    let mut metas: Vec<GraphMeta> = Vec::new();
    while rows.len() < 2 || metas.is_empty() {
        match changes.next(WAIT).expect("a change") {
            Change::EdgeInserted { src, dst } => rows.push((src, dst)),
            Change::Meta(m) => metas.push(m),
            other => panic!("unexpected {other:?}"),
        }
    }
    rows.sort_unstable();
    assert_eq!(rows, [(7, 3), (7, 4)]);
    assert_eq!(metas.len(), 1);
    assert_eq!((metas[0].edges, metas[0].version), (6, meta.version + 1));

    writer.remove_edges(&[7], &[1]).unwrap();
    let mut deleted = false;
    let mut version = 0;
    while !deleted || version == 0 {
        match changes.next(WAIT).expect("a change") {
            Change::EdgeDeleted { src: 7, dst: 1 } => deleted = true,
            Change::Meta(m) => version = m.version,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(version, meta.version + 2);
    // A write to an unwatched vertex changes only the meta row.
    writer.add_edges(&[10], &[11]).unwrap();
    assert!(matches!(changes.next(WAIT), Some(Change::Meta(_))));
    assert_eq!(changes.next(Duration::from_millis(300)), None);
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

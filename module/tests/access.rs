//! Who may write: the publisher (owner) writes; another identity reads, and writes only while
//! the owner grants it; a refused call changes nothing. Over HTTP and over the WebSocket.

use graph_client::graph::{ClientError, Direction, GraphDb, Identity, TransportKind, TxOptions};
use graph_client::server::Server;
use graph_testkit::TestHost;

fn refused(result: Result<(), ClientError>, reducer: &str) {
    match result {
        Err(ClientError::ReducerFailed {
            reducer: r,
            message,
        }) if r == reducer && message.contains("may not") => {
            assert!(
                message.contains("grant_writer") || message.contains("owner"),
                "{message}"
            );
        }
        other => panic!("{reducer}: expected a refusal, got {other:?}"),
    }
}

/// Every write reducer, as `db`; each must be refused.
fn all_writes_refused(db: &GraphDb) {
    let road = ["road".to_string()];
    refused(db.add_edges(&[1], &[99]), "add_edges");
    refused(
        db.add_labelled_edges(&[1], &[99], &road, &[0], &[2.0]),
        "add_labelled_edges",
    );
    refused(db.add_vertices(&[99]), "add_vertices");
    refused(db.set_vertex_labels(&[1], &road, &[0]), "set_vertex_labels");
    refused(db.remove_edges(&[1], &[2]), "remove_edges");
    refused(db.remove_vertex(1), "remove_vertex");
    refused(db.clear(), "clear_graph");
    // The Stage-1 reducers store their answers in `traversal_result`, which everyone reads.
    refused(
        db.bfs_stage1_reducer(7, 1, Direction::Out, None).map(drop),
        "bfs_full_scan_reducer",
    );
    refused(
        db.shortest_path_stage1_reducer(7, 1, 3, Direction::Out, None)
            .map(drop),
        "shortest_path_full_scan_reducer",
    );
}

#[test]
fn only_the_owner_and_granted_writers_change_the_graph() {
    let host = TestHost::start();
    let owner_server = host.publish_module("graph");
    let owner = GraphDb::open(owner_server, "graph", TransportKind::Ws);
    owner.add_edges(&[1, 2, 3], &[2, 3, 1]).unwrap();
    let before = owner.info().unwrap();

    let stranger_id = Server::new(host.url()).create_identity().unwrap();
    let stranger_server = Server::new(host.url()).with_token(stranger_id.token.clone());
    let identity = Identity::from_hex(&stranger_id.identity).unwrap();
    for kind in [TransportKind::Http, TransportKind::Ws] {
        let stranger = GraphDb::open(stranger_server.clone(), "graph", kind);
        all_writes_refused(&stranger);
        // It may not let itself in, nor shut the owner out.
        refused(stranger.grant_writer(identity), "grant_writer");
        let owner_identity = owner.identity().unwrap().unwrap();
        refused(stranger.revoke_writer(owner_identity), "revoke_writer");
        // Reading is open to everyone.
        let bfs = stranger
            .bfs(1, Direction::Out, None, 0, TxOptions::default())
            .unwrap()
            .value;
        assert_eq!(bfs.visited, 3);
        assert_eq!(
            stranger
                .neighbors(2, Direction::Both, 0)
                .unwrap()
                .value
                .neighbors,
            vec![1, 3]
        );
    }
    assert_eq!(owner.info().unwrap(), before, "a refused call wrote");

    // Granted, it writes (over both transports); revoked, it is refused again.
    owner.grant_writer(identity).unwrap();
    owner.grant_writer(identity).unwrap();
    for (i, kind) in [TransportKind::Http, TransportKind::Ws]
        .into_iter()
        .enumerate()
    {
        let stranger = GraphDb::open(stranger_server.clone(), "graph", kind);
        let v = 10 + i as u64;
        stranger.add_edges(&[v], &[v + 100]).unwrap();
        stranger.remove_edges(&[v], &[v + 100]).unwrap();
        stranger.add_vertices(&[v + 200]).unwrap();
        stranger.remove_vertex(v + 200).unwrap();
    }
    assert_eq!(owner.info().unwrap().edges, 3);
    owner.revoke_writer(identity).unwrap();
    all_writes_refused(&GraphDb::open(
        stranger_server.clone(),
        "graph",
        TransportKind::Ws,
    ));

    // The owner cannot lose its own right.
    let me = owner.identity().unwrap().unwrap();
    refused(owner.revoke_writer(me), "revoke_writer");
    owner.clear().unwrap();
    assert_eq!(owner.info().unwrap().edges, 0);

    // Writers without an owner (the owner's own SQL took its flag) make no stranger the owner
    // (an audit saw one take over by writing first); with no writer recorded at all, as in a
    // database from before the table, the first writer becomes the owner.
    let sql = |query: &str| owner.server().sql("graph", query).unwrap();
    sql("UPDATE graph_writer SET owner = false");
    let stranger = GraphDb::open(stranger_server, "graph", TransportKind::Http);
    refused(stranger.add_edges(&[7], &[8]), "add_edges");
    refused(stranger.grant_writer(identity), "grant_writer");
    assert_eq!(owner.info().unwrap().edges, 0, "a refused call wrote");
    sql("DELETE FROM graph_writer");
    stranger.add_edges(&[7], &[8]).unwrap();
    stranger.grant_writer(me).unwrap();
    let writers = &sql("SELECT * FROM graph_writer")[0].rows;
    assert_eq!(writers.len(), 2, "{writers:?}");
}

//! The FalkorDB peer against a real FalkorDB (redis-server with the FalkorDB module, from
//! `scripts/peers start falkordb`): a tiny graph checked against answers worked out by hand,
//! then seeded random graphs checked against the reference, in every direction (FalkorDB's
//! traversals are directed only: `in` and `both` walk the stored reverse arcs).
//!
//! Needs `scripts/peers install falkordb` once; without it the test fails and says so.

mod peer_checks;

use graph_bench::system::{Query, System};
use graph_bench::systems::falkordb::FalkorDb;
use graph_client::graph::Direction::Both;
use graph_testkit::PeerServer;

#[test]
fn falkordb_peer_answers_match_hand_computed_ones_and_the_reference() {
    let server = PeerServer::start("falkordb", &[]);
    let mut falkordb = FalkorDb::connect(server.address()).expect("connecting to the server");
    assert_eq!(
        (falkordb.name(), falkordb.store()),
        ("falkordb", "falkordb")
    );
    let described = falkordb.describe().unwrap();
    assert!(
        described.starts_with("FalkorDB 4.") && described.contains("no persistence"),
        "{described}"
    );

    peer_checks::hand_checked(&mut falkordb);

    // The server reports its own execution time with every answer.
    let query = Query::Bfs {
        start: 10,
        dir: Both,
        max_depth: None,
    };
    let answer = falkordb.answer(&query).unwrap();
    assert!(answer.server_us.is_some(), "{answer:?}");
    assert_eq!(answer.in_process_ns, None);

    peer_checks::random_graphs(&mut falkordb, &[1, 2, 3]);
}

#[test]
fn a_server_without_falkordb_is_an_error_naming_the_fix() {
    // Nothing listens on the discard port.
    let err = FalkorDb::connect("redis://127.0.0.1:9").err().unwrap();
    assert!(
        format!("{err:#}").contains("scripts/peers start falkordb"),
        "{err:#}"
    );
}

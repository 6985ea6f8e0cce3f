//! The Neo4j peer against a real Neo4j started by `scripts/peers`: a tiny graph with sparse ids
//! (one beyond 32 bits), a self-loop, a pair of opposite arcs, a disconnected pair and an
//! isolated vertex, checked in both modes against answers worked out by hand.
//!
//! Needs `scripts/peers install neo4j` once; without it the test fails and says so.

use graph_bench::system::{Reply, System};
use graph_bench::systems::neo4j::Neo4j;
use graph_client::graph::Direction::{self, Both, In, Out};
use graph_testkit::PeerServer;

mod peer_checks;
use peer_checks::{bfs, neighbor_count, shortest_path};

const BIG: u64 = 900_000_000_000;
const VERTICES: [u64; 8] = [10, 20, 30, 40, 1000, 5000, 7000, BIG];
/// 10 ⟲, 10 ⇄ 20 → 30 → 40, 1000 → 30, 5000 → 7000; BIG has no arcs.
const EDGES: [(u64, u64); 7] = [
    (10, 10),
    (10, 20),
    (20, 10),
    (20, 30),
    (30, 40),
    (1000, 30),
    (5000, 7000),
];
const UNKNOWN: u64 = 11;

fn load(peer: &mut Neo4j) {
    peer.clear().unwrap();
    let mut progress = Vec::new();
    peer.load(&VERTICES, &EDGES, &Default::default(), &mut |n| {
        progress.push(n)
    })
    .unwrap();
    assert_eq!(progress.last(), Some(&EDGES.len()));
    assert_eq!(peer.counts().unwrap(), (8, 7));
}

fn check_neighbors(peer: &mut Neo4j) {
    // (vertex, out, in, both)
    let expected = [
        (10, 2, 2, 2),
        (20, 2, 1, 2),
        (30, 1, 2, 3),
        (40, 0, 1, 1),
        (1000, 1, 0, 1),
        (5000, 1, 0, 1),
        (7000, 0, 1, 1),
        (BIG, 0, 0, 0),
    ];
    for (v, out, inn, both) in expected {
        for (dir, want) in [(Out, out), (In, inn), (Both, both)] {
            assert_eq!(
                neighbor_count(peer, v, dir),
                Reply::Count(want),
                "{} neighbors of {v} {dir:?}",
                peer.name()
            );
        }
    }
    for dir in [Out, In, Both] {
        assert_eq!(neighbor_count(peer, UNKNOWN, dir), Reply::UnknownVertex);
    }
}

fn check_bfs(peer: &mut Neo4j) {
    let expected: [(u64, Direction, Option<u32>, u64); 16] = [
        (10, Out, None, 4),
        (10, Out, Some(0), 1),
        (10, Out, Some(1), 2),
        (10, Out, Some(2), 3),
        (10, Out, Some(3), 4),
        (10, In, None, 2),
        (10, Both, None, 5),
        (10, Both, Some(2), 3),
        (10, Both, Some(3), 5),
        (40, In, None, 5),
        (40, In, Some(1), 2),
        (40, Out, None, 1),
        (5000, Both, None, 2),
        (7000, Out, None, 1),
        (BIG, Both, None, 1),
        (BIG, Both, Some(0), 1),
    ];
    for (start, dir, depth, want) in expected {
        assert_eq!(
            bfs(peer, start, dir, depth),
            Reply::Reached(want),
            "{} BFS from {start} {dir:?} depth {depth:?}",
            peer.name()
        );
    }
    for depth in [None, Some(0), Some(2)] {
        assert_eq!(bfs(peer, UNKNOWN, Both, depth), Reply::UnknownVertex);
    }
}

fn check_paths(peer: &mut Neo4j) {
    use Reply::{Path, UnknownVertex, Unreachable};
    let expected = [
        (10, 40, Out, Path(vec![10, 20, 30, 40])),
        (40, 10, Out, Unreachable),
        (40, 10, In, Path(vec![40, 30, 20, 10])),
        (1000, 10, Both, Path(vec![1000, 30, 20, 10])),
        (1000, 40, Out, Path(vec![1000, 30, 40])),
        (10, 10, Out, Path(vec![10])),
        (10, 10, Both, Path(vec![10])),
        (BIG, BIG, In, Path(vec![BIG])),
        (10, 5000, Both, Unreachable),
        (10, BIG, Both, Unreachable),
        (5000, 7000, In, Unreachable),
        (7000, 5000, In, Path(vec![7000, 5000])),
        (10, UNKNOWN, Out, UnknownVertex),
        (UNKNOWN, 10, Both, UnknownVertex),
        (UNKNOWN, UNKNOWN, Both, UnknownVertex),
    ];
    for (a, b, dir, want) in expected {
        assert_eq!(
            shortest_path(peer, a, b, dir),
            want,
            "{} shortest path {a} -> {b} {dir:?}",
            peer.name()
        );
    }
}

#[test]
fn neo4j_peer_answers_match_hand_computed_ones_in_both_modes() {
    // Small: the graph is tiny, and the machine also runs the build.
    let server = PeerServer::start(
        "neo4j",
        &[("NEO4J_HEAP", "512m"), ("NEO4J_PAGECACHE", "64m")],
    );

    let mut plain = Neo4j::connect(server.address(), false).unwrap();
    assert_eq!((plain.name(), plain.store()), ("neo4j", "neo4j"));
    load(&mut plain);
    let described = plain.describe().unwrap();
    assert!(
        described.starts_with("Neo4j 5.26.")
            && described.contains("heap 512.00MiB, page cache 64.00MiB"),
        "{described}"
    );

    // The tuned mode reads the store the plain mode loaded.
    let mut tuned = Neo4j::connect(server.address(), true).unwrap();
    assert_eq!((tuned.name(), tuned.store()), ("neo4j-apoc", "neo4j"));
    assert!(tuned.describe().unwrap().contains("APOC 5.26."));
    for peer in [&mut plain, &mut tuned] {
        check_neighbors(peer);
        check_bfs(peer);
        check_paths(peer);
    }

    // Clearing a loaded store, and loading again over the existing constraint.
    tuned.clear().unwrap();
    assert_eq!(tuned.counts().unwrap(), (0, 0));
    load(&mut tuned);
    check_paths(&mut tuned);

    // Labels as relationship types, weights as a property: label-filtered BFS in both modes,
    // apoc.algo.dijkstra in the tuned one, on seeded random graphs against the reference.
    let checked = peer_checks::weighted_labelled_graphs(&mut tuned, &[1, 2], true);
    assert!(checked > 300, "{checked}");
    let checked = peer_checks::weighted_labelled_graphs(&mut plain, &[3], true);
    assert!(checked > 100, "{checked}");
}

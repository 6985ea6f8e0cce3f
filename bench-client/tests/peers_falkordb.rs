//! The FalkorDB peer against a real FalkorDB (redis-server with the FalkorDB module, from
//! `scripts/peers start falkordb`): a tiny graph checked against answers worked out by hand,
//! then seeded random graphs checked against the reference, in every direction (FalkorDB's
//! traversals are directed only: `in` and `both` walk the stored reverse arcs); then labels and
//! weights: label-filtered BFS, and `algo.SPpaths`'s weighted paths on graphs small enough for
//! its enumeration of paths (see the peer's doc).
//!
//! Needs `scripts/peers install falkordb` once; without it the test fails and says so.

mod peer_checks;

use graph_bench::system::{Answer, ArcAttrs, Query, System};
use graph_bench::systems::falkordb::FalkorDb;
use graph_bench::workloads::Workload;
use graph_client::graph::Direction::Both;
use graph_testkit::PeerServer;

/// The peer, but running every workload: its weighted path query on a FalkorDB whose
/// `algo.SPpaths` enumerates paths, which the benchmark skips there (small graphs only).
struct Exhaustive<'a>(&'a mut FalkorDb);

impl System for Exhaustive<'_> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn store(&self) -> &'static str {
        self.0.store()
    }
    fn describe(&mut self) -> anyhow::Result<String> {
        self.0.describe()
    }
    fn clear(&mut self) -> anyhow::Result<()> {
        self.0.clear()
    }
    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> anyhow::Result<()> {
        self.0.load(vertices, edges, attrs, progress)
    }
    fn counts(&mut self) -> anyhow::Result<(u64, u64)> {
        self.0.counts()
    }
    fn supports(&self, _: Workload) -> bool {
        true
    }
    fn answer(&mut self, query: &Query) -> anyhow::Result<Answer> {
        self.0.answer(query)
    }
}

#[test]
fn falkordb_peer_answers_match_hand_computed_ones_and_the_reference() {
    let server = PeerServer::start("falkordb", &[]);
    let bulk_insert = server.dir().join("falkordb/bulk-insert");
    let mut falkordb =
        FalkorDb::connect(server.address(), &bulk_insert).expect("connecting to the server");
    assert_eq!(
        (falkordb.name(), falkordb.store()),
        ("falkordb", "falkordb")
    );
    let described = falkordb.describe().unwrap();
    assert!(
        described.starts_with("FalkorDB 4.") && described.contains("no persistence"),
        "{described}"
    );

    // The bulk loader needs a node file: an empty graph, and vertices without arcs, load too.
    for (vertices, counts) in [(&[][..], (0, 0)), (&[7, 8][..], (2, 0))] {
        falkordb.clear().unwrap();
        let attrs = ArcAttrs::default();
        falkordb.load(vertices, &[], &attrs, &mut |_| {}).unwrap();
        assert_eq!(falkordb.counts().unwrap(), counts);
    }

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

    // Labels as relationship types: label-filtered BFS by hand and on seeded random graphs
    // against the reference. No weighted path in the benchmark before FalkorDB 4.20.
    let has_dijkstra = falkordb.has_dijkstra();
    assert_eq!(falkordb.supports(Workload::WeightedPath), has_dijkstra);
    if !has_dijkstra {
        let why = falkordb.skip_reason(Workload::WeightedPath);
        assert!(
            why.contains("algo.SPpaths") && why.contains("4.20"),
            "{why}"
        );
    }
    assert!(falkordb.supports(Workload::BfsLabels) && falkordb.supports(Workload::BfsLabelsAll));
    let checked = peer_checks::hand_checked_weighted_labelled(&mut falkordb);
    assert!(checked >= 20, "{checked}");
    let checked = peer_checks::weighted_labelled_graphs(&mut falkordb, &[1, 2], true);
    assert!(checked > 200, "{checked}");

    // algo.SPpaths with weight property w, in every direction (zero weights included), by
    // hand and on seeded random graphs small enough for its enumeration of paths.
    let mut exhaustive = Exhaustive(&mut falkordb);
    let checked = peer_checks::hand_checked_weighted_labelled(&mut exhaustive);
    assert!(checked >= 45, "{checked}");
    let checked =
        peer_checks::weighted_labelled_graphs_of(&mut exhaustive, &[3, 4], true, (40, 60));
    assert!(checked > 200, "{checked}");

    // Released, the graph is gone from the server.
    falkordb.release().unwrap();
    let mut redis = redis::Client::open(server.address())
        .and_then(|c| c.get_connection())
        .unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut redis).unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

#[test]
fn a_server_without_falkordb_is_an_error_naming_the_fix() {
    // Nothing listens on the discard port.
    let err = FalkorDb::connect("redis://127.0.0.1:9", "falkordb-bulk-insert".as_ref())
        .err()
        .unwrap();
    assert!(
        format!("{err:#}").contains("scripts/peers start falkordb"),
        "{err:#}"
    );
}

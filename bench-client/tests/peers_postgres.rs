//! The PostgreSQL peer against a real server started by `scripts/peers`: every query of the
//! `System` trait on a tiny graph whose answers are worked out by hand below, then on a
//! Chung-Lu graph, checked against the reference as the benchmark checks it.
//!
//! Needs the PostgreSQL 15 server binaries (`scripts/peers install postgres`); without them the
//! test fails and says so.

use graph_bench::datasets::DatasetSpec;
use graph_bench::system::{Query, Reply, System};
use graph_bench::systems::postgres::Postgres;
use graph_bench::verify::verify;
use graph_client::graph::Direction::{self, Both, In, Out};
use graph_reference::ReferenceGraph;
use graph_testkit::PeerServer;

mod peer_checks;
use peer_checks::{BIG, ask, bfs, graph, neighbor_count, shortest_path};

fn path(p: &[u64]) -> Reply {
    Reply::Path(p.to_vec())
}

#[test]
fn postgres_peer_answers_every_query() {
    let server = PeerServer::start("postgres", &[("PG_SHARED_BUFFERS", "128MB")]);
    let mut pg = Postgres::connect(server.address()).expect("connecting to the started server");
    assert_eq!((pg.name(), pg.store()), ("postgres", "postgres"));
    let described = pg.describe().unwrap();
    assert!(
        described.starts_with("PostgreSQL 15")
            && described.contains("fsync=off")
            && described.contains("pgRouting 3.4"),
        "{described}"
    );

    let (vertices, edges) = graph();
    pg.clear().unwrap();
    let mut reported = Vec::new();
    pg.load(&vertices, &edges, &Default::default(), &mut |n| {
        reported.push(n)
    })
    .unwrap();
    assert_eq!(reported.last(), Some(&edges.len()), "{reported:?}");
    assert_eq!(pg.counts().unwrap(), (9, 9));
    // Queries run under a time limit, which the load lifts and sets again.
    let described = pg.describe().unwrap();
    assert!(described.contains("statement_timeout=5min"), "{described}");

    check_neighbor_counts(&mut pg);
    check_bfs(&mut pg);
    check_paths(&mut pg);

    // Clearing empties the store, and the same connection loads and answers again.
    pg.clear().unwrap();
    assert_eq!(pg.counts().unwrap(), (0, 0));
    assert_eq!(neighbor_count(&mut pg, 10, Out), Reply::UnknownVertex);
    pg.load(&vertices, &edges, &Default::default(), &mut |_| {})
        .unwrap();
    assert_eq!(pg.counts().unwrap(), (9, 9));
    assert_eq!(neighbor_count(&mut pg, 10, Both), Reply::Count(4));
    assert_eq!(
        shortest_path(&mut pg, BIG, 50, Out),
        path(&[BIG, 10, 40, 50])
    );

    // Released, the tables are gone.
    pg.release().unwrap();
    let err = pg.counts().unwrap_err();
    assert!(format!("{err:#}").contains("does not exist"), "{err:#}");
}

fn check_neighbor_counts(pg: &mut Postgres) {
    // (vertex, out, in, both): both counts a vertex linked both ways once (10 and 20) and a
    // self-loop once (50).
    let want = [
        (5, 0, 0, 0),
        (10, 2, 3, 4),
        (20, 2, 1, 2),
        (30, 1, 1, 2),
        (40, 1, 1, 2),
        (50, 1, 2, 2),
        (1000, 1, 0, 1),
        (2000, 0, 1, 1),
        (BIG, 1, 0, 1),
    ];
    for (v, out, inc, both) in want {
        for (dir, n) in [(Out, out), (In, inc), (Both, both)] {
            assert_eq!(neighbor_count(pg, v, dir), Reply::Count(n), "{v} {dir:?}");
        }
    }
    for dir in [Out, In, Both] {
        assert_eq!(neighbor_count(pg, 7, dir), Reply::UnknownVertex, "{dir:?}");
        assert_eq!(
            neighbor_count(pg, u64::MAX, dir),
            Reply::UnknownVertex,
            "{dir:?}"
        );
    }
}

fn check_bfs(pg: &mut Postgres) {
    // (start, direction, levels of the full BFS).
    let want: [(u64, Direction, &[u64]); 12] = [
        (BIG, Out, &[1, 1, 2, 2]),
        (10, Out, &[1, 2, 2]),
        (50, Out, &[1]),
        (50, In, &[1, 1, 1, 3]),
        (10, In, &[1, 3]),
        (10, Both, &[1, 4, 1]),
        (50, Both, &[1, 1, 1, 3]),
        (1000, Out, &[1, 1]),
        (1000, In, &[1]),
        (2000, Both, &[1, 1]),
        (5, Both, &[1]),
        (5, Out, &[1]),
    ];
    for (start, dir, levels) in want {
        let reached = levels.iter().sum();
        assert_eq!(
            bfs(pg, start, dir, None),
            Reply::Reached(reached),
            "{start} {dir:?}"
        );
        // Every bound from 0 to past the last level: the levels cut after the bound.
        for depth in 0..=levels.len() as u32 + 1 {
            let cut = &levels[..levels.len().min(depth as usize + 1)];
            assert_eq!(
                bfs(pg, start, dir, Some(depth)),
                Reply::Levels(cut.to_vec()),
                "{start} {dir:?} depth {depth}"
            );
        }
    }
    for dir in [Out, In, Both] {
        assert_eq!(bfs(pg, 7, dir, None), Reply::UnknownVertex, "{dir:?}");
        assert_eq!(bfs(pg, 7, dir, Some(2)), Reply::UnknownVertex, "{dir:?}");
        assert_eq!(
            bfs(pg, u64::MAX, dir, Some(0)),
            Reply::UnknownVertex,
            "{dir:?}"
        );
    }
}

fn check_paths(pg: &mut Postgres) {
    // Every expected path is the only shortest one.
    let want = [
        (BIG, 50, Out, path(&[BIG, 10, 40, 50])),
        (BIG, 30, Out, path(&[BIG, 10, 20, 30])),
        (30, 20, Out, path(&[30, 10, 20])),
        (1000, 2000, Out, path(&[1000, 2000])),
        (50, BIG, Out, Reply::Unreachable),
        (2000, 1000, Out, Reply::Unreachable),
        (50, BIG, In, path(&[50, 40, 10, BIG])),
        (20, 30, In, path(&[20, 10, 30])),
        (2000, 1000, In, path(&[2000, 1000])),
        (BIG, 10, In, Reply::Unreachable),
        (20, 30, Both, path(&[20, 30])),
        (30, 50, Both, path(&[30, 10, 40, 50])),
        (2000, 1000, Both, path(&[2000, 1000])),
        (10, 1000, Both, Reply::Unreachable),
        (5, 10, Both, Reply::Unreachable),
        (10, 5, Out, Reply::Unreachable),
        (50, 50, Out, path(&[50])),
        (5, 5, In, path(&[5])),
        (10, 7, Out, Reply::UnknownVertex),
        (7, 10, In, Reply::UnknownVertex),
        (7, 7, Both, Reply::UnknownVertex),
        (u64::MAX, 10, Both, Reply::UnknownVertex),
    ];
    for (a, b, dir, answer) in want {
        assert_eq!(shortest_path(pg, a, b, dir), answer, "{a} → {b} {dir:?}");
    }
}

/// Every query in every direction on a Chung-Lu graph (power-law degrees, hubs, a few small
/// components) against the reference answers, as the benchmark checks them: paths by length
/// and validity, since a graph this size has many shortest paths.
#[test]
fn postgres_peer_matches_the_reference() {
    let server = PeerServer::start("postgres", &[("PG_SHARED_BUFFERS", "128MB")]);
    let mut pg = Postgres::connect(server.address()).expect("connecting to the started server");
    let list = DatasetSpec::Facebook.load(7).unwrap();
    let reference = ReferenceGraph::new(list.iter());
    let mut edges: Vec<(u64, u64)> = list.iter().collect();
    edges.sort_unstable();
    edges.dedup();
    pg.clear().unwrap();
    pg.load(
        reference.vertices(),
        &edges,
        &Default::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        pg.counts().unwrap(),
        (reference.vertex_count() as u64, edges.len() as u64)
    );

    for dir in [Out, In, Both] {
        let mut queries = Vec::new();
        for v in reference.sample_vertices(20, 1) {
            queries.push(Query::NeighborCount { vertex: v, dir });
            for max_depth in [None, Some(0), Some(1), Some(3)] {
                queries.push(Query::Bfs {
                    start: v,
                    dir,
                    max_depth,
                });
            }
        }
        for (source, target) in reference.sample_pairs(30, dir, 2) {
            queries.push(Query::ShortestPath {
                source,
                target,
                dir,
            });
        }
        for query in queries {
            let reply = ask(&mut pg, query);
            if let Err(e) = verify(&reference, &query, &reply) {
                panic!("{query}: {e:#}");
            }
        }
    }

    // Labels in a column: label-filtered BFS by recursive CTE; weights in a column: pgRouting's
    // pgr_dijkstra in every direction, zero weights included; by hand, then on seeded random
    // labelled, weighted graphs against the reference.
    assert!(pg.has_pgrouting(), "{}", pg.describe().unwrap());
    assert!(pg.supports(graph_bench::workloads::Workload::WeightedPath));
    let checked = peer_checks::hand_checked_weighted_labelled(&mut pg);
    assert!(checked >= 45, "{checked}");
    let checked = peer_checks::weighted_labelled_graphs(&mut pg, &[1, 2], true);
    assert!(checked > 300, "{checked}");
}

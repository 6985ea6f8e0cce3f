//! The PostgreSQL peer against a real server started by `scripts/peers`: every query of the
//! `Peer` trait on a tiny graph whose answers are worked out by hand below, then on a
//! Chung-Lu graph against the reference answers.
//!
//! Needs the PostgreSQL 15 server binaries (`scripts/peers install postgres`); without them the
//! test fails and says so.

use graph_bench::datasets::DatasetSpec;
use graph_bench::peers::postgres::Postgres;
use graph_bench::peers::{Peer, PeerPath, Reached};
use graph_client::graph::Direction::{self, Both, In, Out};
use graph_reference::ReferenceGraph;
use graph_testkit::PeerServer;

const BIG: u64 = 9_000_000_000;

/// Sparse ids (one past u32), a 3-cycle 10 → 20 → 30 → 10 with the extra arc 20 → 10, a tail
/// 10 → 40 → 50 ending in a self-loop, a source BIG → 10, a pair 1000 → 2000 joined to
/// nothing else, and the isolated vertex 5.
fn graph() -> (Vec<u64>, Vec<(u64, u64)>) {
    let vertices = vec![5, 10, 20, 30, 40, 50, 1000, 2000, BIG];
    let edges = vec![
        (10, 20),
        (10, 40),
        (20, 10),
        (20, 30),
        (30, 10),
        (40, 50),
        (50, 50),
        (1000, 2000),
        (BIG, 10),
    ];
    (vertices, edges)
}

fn path(p: &[u64]) -> PeerPath {
    PeerPath::Path(p.to_vec())
}

#[test]
fn postgres_peer_answers_every_query() {
    let server = PeerServer::start("postgres", &[("PG_SHARED_BUFFERS", "128MB")]);
    let mut pg = Postgres::connect(server.address()).expect("connecting to the started server");
    assert_eq!(pg.system(), "postgres");
    let described = pg.describe().unwrap();
    assert!(
        described.starts_with("PostgreSQL 15") && described.contains("fsync=off"),
        "{described}"
    );

    let (vertices, edges) = graph();
    pg.clear().unwrap();
    let mut reported = Vec::new();
    pg.load(&vertices, &edges, &mut |n| reported.push(n))
        .unwrap();
    assert_eq!(reported.last(), Some(&edges.len()), "{reported:?}");
    assert_eq!(pg.counts().unwrap(), (9, 9));

    check_neighbor_counts(&mut pg);
    check_bfs(&mut pg);
    check_paths(&mut pg);

    // Clearing empties the store, and the same connection loads and answers again.
    pg.clear().unwrap();
    assert_eq!(pg.counts().unwrap(), (0, 0));
    assert_eq!(pg.neighbor_count(10, Out).unwrap(), None);
    pg.load(&vertices, &edges, &mut |_| {}).unwrap();
    assert_eq!(pg.counts().unwrap(), (9, 9));
    assert_eq!(pg.neighbor_count(10, Both).unwrap(), Some(4));
    assert_eq!(
        pg.shortest_path(BIG, 50, Out).unwrap(),
        path(&[BIG, 10, 40, 50])
    );
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
            assert_eq!(pg.neighbor_count(v, dir).unwrap(), Some(n), "{v} {dir:?}");
        }
    }
    for dir in [Out, In, Both] {
        assert_eq!(pg.neighbor_count(7, dir).unwrap(), None, "{dir:?}");
        assert_eq!(pg.neighbor_count(u64::MAX, dir).unwrap(), None, "{dir:?}");
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
            pg.bfs(start, dir, None).unwrap(),
            Some(Reached::Count(reached)),
            "{start} {dir:?}"
        );
        // Every bound from 0 to past the last level: the levels cut after the bound.
        for depth in 0..=levels.len() as u32 + 1 {
            let cut = &levels[..levels.len().min(depth as usize + 1)];
            assert_eq!(
                pg.bfs(start, dir, Some(depth)).unwrap(),
                Some(Reached::Levels(cut.to_vec())),
                "{start} {dir:?} depth {depth}"
            );
        }
    }
    for dir in [Out, In, Both] {
        assert_eq!(pg.bfs(7, dir, None).unwrap(), None, "{dir:?}");
        assert_eq!(pg.bfs(7, dir, Some(2)).unwrap(), None, "{dir:?}");
        assert_eq!(pg.bfs(u64::MAX, dir, Some(0)).unwrap(), None, "{dir:?}");
    }
}

fn check_paths(pg: &mut Postgres) {
    // Every expected path is the only shortest one.
    let want = [
        (BIG, 50, Out, path(&[BIG, 10, 40, 50])),
        (BIG, 30, Out, path(&[BIG, 10, 20, 30])),
        (30, 20, Out, path(&[30, 10, 20])),
        (1000, 2000, Out, path(&[1000, 2000])),
        (50, BIG, Out, PeerPath::Unreachable),
        (2000, 1000, Out, PeerPath::Unreachable),
        (50, BIG, In, path(&[50, 40, 10, BIG])),
        (20, 30, In, path(&[20, 10, 30])),
        (2000, 1000, In, path(&[2000, 1000])),
        (BIG, 10, In, PeerPath::Unreachable),
        (20, 30, Both, path(&[20, 30])),
        (30, 50, Both, path(&[30, 10, 40, 50])),
        (2000, 1000, Both, path(&[2000, 1000])),
        (10, 1000, Both, PeerPath::Unreachable),
        (5, 10, Both, PeerPath::Unreachable),
        (10, 5, Out, PeerPath::Unreachable),
        (50, 50, Out, path(&[50])),
        (5, 5, In, path(&[5])),
        (10, 7, Out, PeerPath::UnknownVertex),
        (7, 10, In, PeerPath::UnknownVertex),
        (7, 7, Both, PeerPath::UnknownVertex),
        (u64::MAX, 10, Both, PeerPath::UnknownVertex),
    ];
    for (a, b, dir, answer) in want {
        assert_eq!(
            pg.shortest_path(a, b, dir).unwrap(),
            answer,
            "{a} → {b} {dir:?}"
        );
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
    pg.load(reference.vertices(), &edges, &mut |_| {}).unwrap();
    assert_eq!(
        pg.counts().unwrap(),
        (reference.vertex_count() as u64, edges.len() as u64)
    );

    for dir in [Out, In, Both] {
        for v in reference.sample_vertices(20, 1) {
            assert_eq!(
                pg.neighbor_count(v, dir).unwrap(),
                reference.degree(v, dir),
                "{v} {dir:?}"
            );
            let levels = reference.bfs_levels(v, dir, None).unwrap();
            assert_eq!(
                pg.bfs(v, dir, None).unwrap(),
                Some(Reached::Count(levels.iter().sum())),
                "{v} {dir:?}"
            );
            for depth in [0, 1, 3] {
                assert_eq!(
                    pg.bfs(v, dir, Some(depth)).unwrap(),
                    reference
                        .bfs_levels(v, dir, Some(depth))
                        .map(Reached::Levels),
                    "{v} {dir:?} depth {depth}"
                );
            }
        }
        for (a, b) in reference.sample_pairs(30, dir, 2) {
            let got = pg.shortest_path(a, b, dir).unwrap();
            match (reference.distance(a, b, dir, None), &got) {
                (None, PeerPath::UnknownVertex) | (Some(None), PeerPath::Unreachable) => {}
                (Some(Some(d)), PeerPath::Path(p)) => assert!(
                    p.len() == d as usize + 1
                        && p.first() == Some(&a)
                        && p.last() == Some(&b)
                        && reference.is_path(p, dir),
                    "{a} → {b} {dir:?}: {p:?} is no shortest path ({d} hops)"
                ),
                (want, got) => panic!("{a} → {b} {dir:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}

//! Soak: concurrent writers (adding and removing edges) and readers (neighbors, depth-2 BFS,
//! shortest paths, every answer verified) against the real host for about a minute, uniform and
//! Zipf-skewed. No error, every acknowledged write accounted for (the mixed workload checks the
//! edge count and reads the edges back), and the host's memory stays flat.

use graph_bench::live::Keys;
use graph_bench::mixed::{self, MixedSpec};
use graph_bench::systems::stdb::SpacetimeDb;
use graph_client::edgelist::EdgeList;
use graph_client::graph::{Direction, GraphDb, Mode, TxOptions};
use graph_reference::ReferenceGraph;
use graph_reference::generate::{ChungLu, chung_lu};
use graph_testkit::TestHost;
use std::time::Duration;

#[test]
fn a_minute_of_concurrent_reads_and_writes() {
    let host = TestHost::start();
    let db = GraphDb::websocket(host.publish_module("graph"), "graph", None);
    let edges = chung_lu(
        &ChungLu {
            vertices: 5_000,
            edges: 40_000,
            exponent: 2.3,
            max_weight: 500.0,
            id_spread: 1.0,
        },
        7,
    );
    let mut list = EdgeList::new();
    for &(s, d) in &edges {
        list.push(s, d);
    }
    db.load(&list.sorted(), |_| {}).unwrap();
    let reference = ReferenceGraph::new(edges.iter().copied());
    let starts = reference.sample_vertices(200, 1);
    let pairs = reference.sample_pairs(100, Direction::Out, 2);
    let secs = std::env::var("GRAPH_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30.0);
    for (i, keys) in [Keys::Uniform, Keys::Zipf(1.1)].into_iter().enumerate() {
        let spec = MixedSpec {
            warmup: Duration::from_secs(2),
            duration: Duration::from_secs_f64(secs),
            writers: 3,
            readers: 3,
            write_delay: Duration::from_millis(1),
            keys,
            first_id: 1_000_000_000 * (i as u64 + 1),
            server_pid: host.pid(),
            data_dir: None,
            seed: i as u64,
        };
        let mut system = SpacetimeDb::new(db.clone(), Mode::Stage2, TxOptions::default(), "test");
        let (m, samples) = mixed::run(&mut system, &reference, &starts, &pairs, &spec)
            .unwrap_or_else(|e| panic!("{keys:?}: {e:#}"))
            .expect("SpacetimeDB takes concurrent clients");
        // One raw sample per counted operation, in the order they began, after the warm-up;
        // the procedures' with the module's account (but those that name a vertex the graph
        // lacks, which fail), the reducers' without.
        assert_eq!(samples.len(), m.ops.iter().map(|o| o.count).sum::<usize>());
        let at: Vec<f64> = samples.iter().map(|s| s.at_s.unwrap()).collect();
        assert!(
            at.windows(2).all(|w| w[0] <= w[1]) && at[0] >= 2.0,
            "{at:?}"
        );
        for sample in &samples {
            let write = sample.workload.ends_with("edge");
            assert!(sample.workload.starts_with("mixed "), "{sample:?}");
            let known = sample
                .b
                .into_iter()
                .chain(sample.a)
                .all(|v| reference.contains(v));
            assert_eq!(sample.stats.is_some(), !write && known, "{sample:?}");
            assert_eq!(
                sample.b.is_some(),
                write || sample.workload.ends_with("path")
            );
        }
        assert!(
            m.acked_writes > 1_000,
            "{keys:?}: only {} writes",
            m.acked_writes
        );
        assert_eq!(m.ops.len(), 5, "{:?}", m.ops);
        // The warm-up's writes are acknowledged and accounted for, but not timed.
        let timed_writes: usize = m
            .ops
            .iter()
            .filter(|o| o.op.ends_with("edge"))
            .map(|o| o.count)
            .sum();
        assert!(
            m.warmup_s == 2.0 && (timed_writes as u64) < m.acked_writes,
            "{keys:?}: {timed_writes} writes timed of {}",
            m.acked_writes
        );
        // memory flat: the last quarter's mean within 1.5× the first quarter's (after loading).
        let curve: Vec<f64> = m.memory_curve.iter().map(|&(_, b)| b as f64).collect();
        assert!(
            curve.len() >= 8,
            "{keys:?}: memory sampled {} times",
            curve.len()
        );
        let q = curve.len() / 4;
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let (first, last) = (mean(&curve[..q]), mean(&curve[curve.len() - q..]));
        println!(
            "{keys:?}: {} writes; memory {:.0} → {:.0} MiB",
            m.acked_writes,
            first / 1048576.0,
            last / 1048576.0
        );
        assert!(
            last <= first * 1.5,
            "{keys:?}: memory grew from {first} to {last} bytes"
        );
    }
}

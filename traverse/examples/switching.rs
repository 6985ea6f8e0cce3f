//! Measures the direction-optimizing BFS's switching thresholds (alpha, beta) against top-down
//! BFS on the Chung-Lu stand-ins: full undirected BFS from a fixed sample of starts; per
//! setting the median (over starts) of the best CPU time of a few runs, and the arcs and work
//! units read.
//!
//!     cargo run --release -p graph-traverse --example switching            # ego-Facebook, DBLP
//!     GRAPH_BENCH_LJ4=1 cargo run --release -p graph-traverse --example switching
//!
//! `GRAPH_BENCH_LJ4=1` adds a LiveJournal-shaped graph at a quarter of its size (1M vertices,
//! 8.7M edges; the full size is for the criterion bench, behind `GRAPH_BENCH_LJ=1`).

use graph_reference::generate::{ChungLu, DBLP, FACEBOOK, chung_lu};
use graph_traverse::{
    AdjacencyGraph, Bfs, BfsQuery, Direction, DirectionOptimizingBfs, Switching, Work,
};
use std::time::{Duration, Instant};

/// LiveJournal's shape (exponent, mean degree) at a quarter of its vertices.
const LJ_QUARTER: ChungLu = ChungLu {
    vertices: 1_000_000,
    edges: 8_675_000,
    exponent: 2.65,
    max_weight: 7_400.0,
    id_spread: 1.0,
};

const STARTS: usize = 8;
const RUNS: usize = 5;

fn query(start: u64) -> BfsQuery {
    BfsQuery {
        start,
        dir: Direction::Both,
        max_depth: None,
        target: None,
        collect_limit: 0,
    }
}

/// Time this thread has spent on a CPU: on a machine shared with other work, this leaves out
/// the time other processes held the cores (but not their effect on the caches). Linux's
/// `/proc/thread-self/schedstat`; wall time elsewhere.
fn cpu_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let on_cpu_ns = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok());
    match on_cpu_ns {
        Some(ns) => Duration::from_nanos(ns),
        None => START.get_or_init(Instant::now).elapsed(),
    }
}

/// Median over starts of the best of `RUNS` runs, and the mean arcs read and mean work units
/// (arcs + vertices whose rows were read) per start.
fn measure(starts: &[u64], mut run: impl FnMut(u64) -> Work) -> (Duration, f64, f64) {
    let mut times = Vec::new();
    let (mut arcs, mut units) = (0u64, 0u64);
    for &s in starts {
        let mut best = Duration::MAX;
        for _ in 0..RUNS {
            let t = cpu_time();
            let work = std::hint::black_box(run(s));
            best = best.min(cpu_time() - t);
            arcs += work.arcs_scanned;
            units += work.units();
        }
        times.push(best);
    }
    times.sort_unstable();
    let runs = (starts.len() * RUNS) as f64;
    (
        times[times.len() / 2],
        arcs as f64 / runs,
        units as f64 / runs,
    )
}

fn main() {
    let mut graphs = vec![("ego-Facebook", FACEBOOK), ("DBLP", DBLP)];
    if std::env::var_os("GRAPH_BENCH_LJ4").is_some() {
        graphs.push(("LJ/4", LJ_QUARTER));
    }
    for (name, p) in graphs {
        let edges = chung_lu(&p, 42);
        let g = AdjacencyGraph::new([], &edges);
        let max_id = edges.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0);
        drop(edges);
        // Starts: every (n/STARTS)-th slot that has arcs, a fixed and spread-out sample.
        let starts: Vec<u64> = (0..STARTS)
            .map(|i| {
                graph_traverse::DenseSource::vertex(&g, (i * g.vertex_count() / STARTS) as u32)
            })
            .collect();
        println!(
            "{name}: {} vertices, {} arcs, {STARTS} starts, best of {RUNS} runs, median over starts",
            g.vertex_count(),
            g.arc_count()
        );
        let print = |label: &str, (t, arcs, units): (Duration, f64, f64)| {
            let ms = t.as_secs_f64() * 1e3;
            println!("  {label:<26} {ms:>9.2} ms {arcs:>12.0} arcs {units:>12.0} units");
        };
        let bound = Some(max_id + 1);
        print(
            "top-down Bfs",
            measure(&starts, |s| Bfs::new(query(s), bound).run(&g).1),
        );
        let dense = |s, switching| {
            DirectionOptimizingBfs::new(query(s), &g)
                .with_switching(switching)
                .run(&g)
                .1
        };
        print(
            "dense top-down (alpha 0)",
            measure(&starts, |s| dense(s, Switching::TOP_DOWN)),
        );
        for alpha in [2, 4, 8, 15, 30] {
            for beta in [6, 18, 50] {
                let switching = Switching { alpha, beta };
                print(
                    &format!("alpha {alpha:>3} beta {beta:>3}"),
                    measure(&starts, |s| dense(s, switching)),
                );
            }
        }
    }
}

//! Prints the algorithm table: the traversal operator's algorithms measured natively, in
//! memory, in the shape of the earlier module's algorithm table (rings of successors,
//! out-degree 3; median, min and max of 5 runs after 2 warm-ups), and the native floor on the
//! Chung-Lu stand-ins (the distance to the limit).
//!
//!     cargo run --release -p graph-traverse --example algo_table
//!     GRAPH_BENCH_LJ=1 cargo run --release -p graph-traverse --example algo_table
//!
//! The workloads are those of the criterion bench (`benches/workloads/mod.rs`). Times are wall
//! time of one call each; on a shared machine, compare medians.

use std::time::{Duration, Instant};

#[path = "../benches/workloads/mod.rs"]
mod workloads;
use workloads::*;

/// A full BFS of a floor graph from a start.
type FullBfs = fn(&Floor, u64) -> graph_traverse::Work;

const WARM_UPS: usize = 2;
const RUNS: usize = 5;

/// Runs `f` `WARM_UPS` times, then `runs` times timed; returns the sorted times and the last
/// result.
fn time<T>(runs: usize, mut f: impl FnMut(usize) -> T) -> (Vec<Duration>, T) {
    for i in 0..WARM_UPS {
        std::hint::black_box(f(i));
    }
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for i in 0..runs {
        let t = Instant::now();
        let out = std::hint::black_box(f(i));
        times.push(t.elapsed());
        last = Some(out);
    }
    times.sort_unstable();
    (times, last.expect("at least one run"))
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1_000.0 {
        format!("{us:.1} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

fn stats(times: &[Duration]) -> String {
    format!(
        "{} | {} | {}",
        fmt(times[times.len() / 2]),
        fmt(times[0]),
        fmt(times[times.len() - 1])
    )
}

fn percentile<T: Copy + Ord>(sorted: &[T], p: usize) -> T {
    sorted[((sorted.len() - 1) * p).div_ceil(100)]
}

fn main() {
    println!("## Algorithms on rings of successors (out-degree 3), native");
    println!();
    println!(
        "Median, min and max of {RUNS} runs after {WARM_UPS} warm-ups; BFS and DFS from vertex 1."
    );
    println!();
    println!("| algorithm | vertices | median | min | max | visited / hops | arcs read |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let rings: Vec<_> = RING_SIZES.iter().map(|&n| (n, ring_graph(n))).collect();
    let row = |name: &str, n: u64, times: &[Duration], count: u64, arcs: u64| {
        println!("| {name} | {n} | {} | {count} | {arcs} |", stats(times));
    };
    for (n, g) in &rings {
        let (t, (visited, work)) = time(RUNS, |_| ring_bfs(g, *n, None));
        row("BFS full", *n, &t, visited, work.arcs_scanned);
    }
    for (n, g) in &rings {
        let (t, (visited, work)) = time(RUNS, |_| ring_bfs_do(g, None));
        row(
            "BFS full, direction-optimizing",
            *n,
            &t,
            visited,
            work.arcs_scanned,
        );
    }
    for (n, g) in &rings {
        let (t, (visited, work)) = time(RUNS, |_| ring_dfs(g, *n, None));
        row("DFS full", *n, &t, visited, work.arcs_scanned);
    }
    for depth in DEPTHS {
        for (n, g) in rings.iter().filter(|(n, _)| BOUNDED_SIZES.contains(n)) {
            let (t, (visited, work)) = time(RUNS, |_| ring_bfs(g, *n, Some(depth)));
            row(
                &format!("BFS depth {depth}"),
                *n,
                &t,
                visited,
                work.arcs_scanned,
            );
        }
    }
    for depth in DEPTHS {
        for (n, g) in rings.iter().filter(|(n, _)| BOUNDED_SIZES.contains(n)) {
            let (t, (visited, work)) = time(RUNS, |_| ring_dfs(g, *n, Some(depth)));
            row(
                &format!("DFS depth {depth}"),
                *n,
                &t,
                visited,
                work.arcs_scanned,
            );
        }
    }
    for which in 0..2 {
        for (n, g) in &rings {
            let (label, source, target) = ring_pairs(*n)[which];
            let (t, (hops, work)) = time(RUNS, |_| {
                path(g, source, target, graph_traverse::Direction::Out)
            });
            let name = format!("shortest path {source}→{target} ({label})");
            row(&name, *n, &t, hops.expect("connected"), work.arcs_scanned);
        }
    }

    println!();
    println!("## Native floor: Chung-Lu stand-ins, undirected, in memory, single thread");
    println!();
    println!(
        "Full BFS: one run from each of 8 fixed starts after {WARM_UPS} warm-ups (median, min, \
         max over the starts). Shortest path: balanced bidirectional search over 64 fixed \
         random pairs, per pair."
    );
    println!();
    println!("| graph | algorithm | median | min | max | arcs read (median) |");
    println!("|---|---|---:|---:|---:|---:|");
    for (name, p) in floor_graphs() {
        let built = Instant::now();
        let f = floor(name, &p, 64);
        eprintln!("{name}: generated and built in {:.1?}", built.elapsed());
        let bfs_rows: [(&str, FullBfs); 3] = [
            ("BFS full, top-down (Bfs)", Floor::bfs_top_down),
            ("BFS full, top-down on slots", Floor::bfs_top_down_slots),
            (
                "BFS full, direction-optimizing",
                Floor::bfs_direction_optimizing,
            ),
        ];
        for (label, run) in bfs_rows {
            let mut arcs = Vec::new();
            let (t, _) = time(f.starts.len(), |i| {
                let work = run(&f, f.starts[i % f.starts.len()]);
                arcs.push(work.arcs_scanned);
            });
            arcs.sort_unstable();
            println!(
                "| {name} | {label} | {} | {} |",
                stats(&t),
                percentile(&arcs, 50)
            );
        }
        // Per pair, after one warm-up pass.
        for &pair in &f.pairs {
            std::hint::black_box(f.shortest_path(pair));
        }
        let mut times = Vec::new();
        let mut arcs = Vec::new();
        let mut hops = Vec::new();
        for &pair in &f.pairs {
            let t = Instant::now();
            let (h, work) = std::hint::black_box(f.shortest_path(pair));
            times.push(t.elapsed());
            arcs.push(work.arcs_scanned);
            hops.extend(h);
        }
        times.sort_unstable();
        arcs.sort_unstable();
        hops.sort_unstable();
        println!(
            "| {name} | shortest path, {} pairs ({} connected, median {} hops) | {} | {} | {} \
             | {} (p90 {}, p99 {}) |",
            f.pairs.len(),
            hops.len(),
            hops.get(hops.len() / 2).copied().unwrap_or(0),
            fmt(percentile(&times, 50)),
            fmt(times[0]),
            fmt(times[times.len() - 1]),
            percentile(&arcs, 50),
            percentile(&arcs, 90),
            percentile(&arcs, 99),
        );
        println!(
            "| {name} | (shortest path time p90 / p99) | {} / {} | | | |",
            fmt(percentile(&times, 90)),
            fmt(percentile(&times, 99))
        );
    }
}

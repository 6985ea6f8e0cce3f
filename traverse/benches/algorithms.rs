//! Algorithm-level benchmarks (native, in memory), with criterion:
//!
//! - `ring/*`: BFS (top-down and direction-optimizing), DFS, depth-bounded BFS and DFS, and
//!   shortest paths near and far, on rings of successors of 100, 1,000 and 10,000 vertices.
//! - `floor/*`: the native floor on the DBLP-sized Chung-Lu stand-in, and the LiveJournal-sized
//!   one with `GRAPH_BENCH_LJ=1` (generated once per run: ~7 s, ~1 GiB): full undirected BFS
//!   top-down vs direction-optimizing, and balanced bidirectional shortest path over a fixed
//!   sample of pairs.
//! - `labels/*`: what a label filter costs on the DBLP-sized stand-in with 8 random labels:
//!   full and depth-3 direction-optimizing BFS and shortest paths, unfiltered and through a
//!   filter naming every label (the same visited set; the target is at most 20% more).
//!
//! `cargo bench -p graph-traverse` (short measurement times; `-- ring` or `-- floor` to pick).
//! `cargo run --release -p graph-traverse --example algo_table` prints the same workloads as
//! the module's algorithm table.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

mod workloads;
use workloads::*;

fn ring(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for n in RING_SIZES {
        let g = ring_graph(n);
        group.bench_with_input(BenchmarkId::new("bfs", n), &n, |b, &n| {
            b.iter(|| black_box(ring_bfs(&g, n, None)))
        });
        group.bench_with_input(
            BenchmarkId::new("bfs_direction_optimizing", n),
            &n,
            |b, _| b.iter(|| black_box(ring_bfs_do(&g, None))),
        );
        group.bench_with_input(BenchmarkId::new("dfs", n), &n, |b, &n| {
            b.iter(|| black_box(ring_dfs(&g, n, None)))
        });
        if BOUNDED_SIZES.contains(&n) {
            for depth in DEPTHS {
                let id = format!("{n}/depth{depth}");
                group.bench_with_input(BenchmarkId::new("bfs_bounded", &id), &n, |b, &n| {
                    b.iter(|| black_box(ring_bfs(&g, n, Some(depth))))
                });
                group.bench_with_input(BenchmarkId::new("dfs_bounded", &id), &n, |b, &n| {
                    b.iter(|| black_box(ring_dfs(&g, n, Some(depth))))
                });
            }
        }
        for (which, source, target) in ring_pairs(n) {
            let id = format!("{n}/{which}");
            group.bench_function(BenchmarkId::new("shortest_path", id), |b| {
                b.iter(|| black_box(path(&g, source, target, graph_traverse::Direction::Out)))
            });
        }
    }
    group.finish();
}

/// A full BFS of a floor graph from a start.
type FullBfs = fn(&Floor, u64) -> graph_traverse::Work;

fn floor(c: &mut Criterion) {
    for (name, p) in floor_graphs() {
        let f = workloads::floor(name, &p, 64);
        let mut group = c.benchmark_group(format!("floor/{name}"));
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .sample_size(10);
        // Each iteration is a full BFS from the next of the fixed starts.
        let bfs_runs: [(&str, FullBfs); 3] = [
            ("bfs_top_down", Floor::bfs_top_down),
            ("bfs_top_down_slots", Floor::bfs_top_down_slots),
            ("bfs_direction_optimizing", Floor::bfs_direction_optimizing),
        ];
        for (id, run) in bfs_runs {
            group.bench_function(id, |b| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % f.starts.len();
                    black_box(run(&f, f.starts[i]))
                })
            });
        }
        // Each iteration answers every pair once: the time per element is per pair.
        group.throughput(Throughput::Elements(f.pairs.len() as u64));
        group.bench_function("shortest_path_pairs", |b| {
            b.iter(|| {
                for &pair in &f.pairs {
                    black_box(f.shortest_path(pair));
                }
            })
        });
        group.finish();
    }
}

fn labels(c: &mut Criterion) {
    let l = workloads::labelled(64);
    let mut group = c.benchmark_group("labels/DBLP-sized");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    let starts = &l.floor.starts;
    for filtered in [false, true] {
        let how = if filtered {
            "every_label"
        } else {
            "unfiltered"
        };
        for (name, depth) in [("bfs_full", None), ("bfs_depth3", Some(3))] {
            group.bench_function(format!("{name}/{how}"), |b| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % starts.len();
                    black_box(l.bfs(starts[i], depth, filtered))
                })
            });
        }
        group.bench_function(format!("shortest_path_pairs/{how}"), |b| {
            b.iter(|| {
                for &pair in &l.floor.pairs {
                    black_box(l.shortest_path(pair, filtered));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, ring, floor, labels);
criterion_main!(benches);

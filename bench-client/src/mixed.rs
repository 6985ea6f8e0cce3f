//! A mixed concurrent workload in the shape of agdb's social-network benchmark: writers that add
//! and remove edges with a delay, and readers that count neighbors, run depth-2 BFS and find
//! shortest paths, all at once for a fixed time after a warm-up, each a client of its own on a
//! connection of its own, on any system that takes concurrent clients (SpacetimeDB over the
//! SDK's WebSocket, and the peers over their own protocols). The warm-up runs the same clients
//! the same way and is not reported: every system gets it, to fill its caches (and SpacetimeDB's
//! instances to build their snapshots) before the clock counts. Reported per operation: count,
//! min, mean, p50, p99, max, total and throughput, and every counted call as a raw sample (when
//! it began, and the module's account of it on SpacetimeDB); the server's memory over the run
//! when its process is known, and its data directory's size on disk at the end when that is
//! known. Also the soak check: at the end every acknowledged write is accounted for (the edge
//! count exactly, each edge left in place read back, and each writer's first 200 removed edges
//! read back as gone: reading back every removal would take longer than the run on the slower
//! peers), and the writes left in place are removed, so the
//! store holds the edges it held before (the fresh vertices the writers created stay, without
//! edges: a later `--skip-load` run on that store fails its vertex count check).
//!
//! Readers follow out-edges of the loaded graph and writers add edges *from* fresh vertices
//! *to* loaded ones (drawn uniformly or Zipf-skewed, so that hubs take most writes: the
//! contention case), so every read is checked against the reference while the writes still
//! update the loaded vertices' rows and indexes.

use crate::footprint;
use crate::live::{Keys, Zipf};
use crate::measure;
use crate::report::model::{Mixed, OpStats, Percentiles, Sample};
use crate::system::{Query, Reply, System, TxStats};
use crate::verify::Answers;
use anyhow::{Context, ensure};
use graph_client::graph::Direction;
use graph_reference::ReferenceGraph;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct MixedSpec {
    /// How long the clients run before their operations are counted.
    pub warmup: Duration,
    /// How long they run after that.
    pub duration: Duration,
    pub writers: usize,
    pub readers: usize,
    /// Pause after each write.
    pub write_delay: Duration,
    pub keys: Keys,
    /// Fresh vertex ids start here (one range per writer).
    pub first_id: u64,
    /// The server's process, to sample its memory (Linux `/proc`).
    pub server_pid: Option<u32>,
    /// The server's data directory, to measure its size on disk at the end.
    pub data_dir: Option<PathBuf>,
    pub seed: u64,
}

/// One timed operation: its name, when it began (since the workload started, warm-up
/// included), its vertices, µs, and the module's account of it (SpacetimeDB's procedures).
struct Op {
    name: &'static str,
    at: Duration,
    a: u64,
    b: Option<u64>,
    e2e_us: f64,
    stats: Option<TxStats>,
}

/// Runs the workload on `system`'s store, whose graph is `reference` (loaded, unchanged so
/// far), with clients of its own ([`System::another_client`]); readers start from `starts` and
/// ask for paths between `pairs`. Returns the summary and every counted operation as a raw
/// sample (workload `mixed <keys>: <operation>`); `None` when the system takes one client at a
/// time.
pub fn run(
    system: &mut dyn System,
    reference: &ReferenceGraph,
    starts: &[u64],
    pairs: &[(u64, u64)],
    spec: &MixedSpec,
) -> anyhow::Result<Option<(Mixed, Vec<Sample>)>> {
    ensure!(
        !starts.is_empty() && !pairs.is_empty(),
        "no vertices to read"
    );
    let name = system.name();
    // Every client connects before the clock starts.
    let mut clients = Vec::new();
    for _ in 0..spec.writers + spec.readers {
        let Some(client) = system.another_client() else {
            return Ok(None);
        };
        clients.push(client.with_context(|| format!("connecting another client to {name}"))?);
    }
    let readers = clients.split_off(spec.writers);
    let writers = clients;
    // Targets of the writes, hubs first, so that Zipf keys hit the hubs.
    let mut targets: Vec<u64> = reference.vertices().to_vec();
    targets.sort_by_key(|&v| std::cmp::Reverse(reference.degree(v, Direction::Both)));
    let zipf = match spec.keys {
        Keys::Zipf(s) => Some(Zipf::new(targets.len(), s)),
        Keys::Uniform => None,
    };
    // The readers' answers, computed before the clock starts (see `verify`).
    let mut answers = Answers::new(reference, None);
    answers.prepare(&reader_queries(starts, pairs))?;
    let answers = &answers;
    let before = system.counts()?.1;
    let stop = AtomicBool::new(false);
    let counting = AtomicBool::new(false);
    let memory = || spec.server_pid.and_then(footprint::memory_bytes);
    let memory_start = memory();
    let started = Instant::now();
    let mut counted_from = started;
    let (writes, reads, memory_curve) = std::thread::scope(|s| {
        let writers: Vec<_> = writers
            .into_iter()
            .enumerate()
            .map(|(w, mut link)| {
                let (targets, zipf, flags) = (&targets, zipf.as_ref(), (&counting, &stop));
                let first = spec.first_id + w as u64 * 10_000_000;
                let seed = spec.seed ^ (w as u64 + 1);
                s.spawn(move || {
                    write_loop(
                        link.as_mut(),
                        targets,
                        zipf,
                        first,
                        spec.write_delay,
                        seed,
                        (started, flags),
                    )
                })
            })
            .collect();
        let readers: Vec<_> = readers
            .into_iter()
            .enumerate()
            .map(|(r, mut link)| {
                let flags = (&counting, &stop);
                let seed = spec.seed ^ (0x100 + r as u64);
                s.spawn(move || {
                    read_loop(
                        link.as_mut(),
                        answers,
                        starts,
                        pairs,
                        seed,
                        (started, flags),
                    )
                })
            })
            .collect();
        let mut curve = Vec::new();
        let end = spec.warmup + spec.duration;
        while started.elapsed() < end {
            if started.elapsed() >= spec.warmup && !counting.load(Ordering::Relaxed) {
                counted_from = Instant::now();
                counting.store(true, Ordering::Relaxed);
            }
            if let Some(bytes) = memory() {
                curve.push((started.elapsed().as_secs_f64(), bytes));
            }
            // Wake at the end of the warm-up and of the run, and every 250 ms between.
            let now = started.elapsed();
            let wake = [spec.warmup, end, now + Duration::from_millis(250)]
                .into_iter()
                .filter(|&t| t > now)
                .min()
                .unwrap_or(now);
            std::thread::sleep(wake - now);
        }
        stop.store(true, Ordering::Relaxed);
        let writes: anyhow::Result<Vec<Written>> = writers
            .into_iter()
            .map(|w| w.join().expect("writer thread"))
            .collect();
        let reads: anyhow::Result<Vec<Vec<Op>>> = readers
            .into_iter()
            .map(|r| r.join().expect("reader thread"))
            .collect();
        anyhow::Ok((writes?, reads?, curve))
    })?;
    let seconds = counted_from.elapsed().as_secs_f64();
    let acked_writes = writes.iter().map(|w| w.acked).sum();
    let memory_end = memory();
    let disk_bytes = spec.data_dir.as_deref().map(footprint::disk_bytes);

    // Every acknowledged write accounted for: the count exactly, each edge left in place read
    // back, and each writer's first 200 removals read back as gone.
    let present: Vec<(u64, u64)> = writes
        .iter()
        .flat_map(|w| w.present.iter().copied())
        .collect();
    let after = system.counts()?.1;
    ensure!(
        after == before + present.len() as u64,
        "{name}: the writers' acknowledged adds and removes leave {} edges, the graph has {after}",
        before + present.len() as u64
    );
    let removed = writes.iter().flat_map(|w| w.removed.iter().take(200));
    for (&(src, dst), there) in present
        .iter()
        .map(|e| (e, true))
        .chain(removed.map(|e| (e, false)))
    {
        let reply = system
            .answer(&Query::ShortestPath {
                source: src,
                target: dst,
                dir: Direction::Out,
            })?
            .reply;
        let found = match reply {
            Reply::Path(p) => p == [src, dst],
            Reply::Unreachable | Reply::UnknownVertex => false,
            other => anyhow::bail!("{name}: path {src} → {dst}: {other:?}"),
        };
        ensure!(
            found == there,
            "{name}: the edge {src} → {dst} is {}, yet it was acknowledged {}",
            if found { "there" } else { "missing" },
            if there { "added" } else { "removed" }
        );
    }
    // What the writers left, removed: the store holds the edges it was loaded with (and the
    // writers' fresh vertices, now without edges).
    for &(src, dst) in &present {
        system.remove_edge(src, dst)?;
    }
    ensure!(
        system.counts()?.1 == before,
        "{name}: the edge count is not back to {before} once the writes are removed"
    );

    let mut all: Vec<Op> = writes
        .into_iter()
        .flat_map(|w| w.ops)
        .chain(reads.into_iter().flatten())
        .collect();
    all.sort_by_key(|op| op.at);
    let mut by_op: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut samples = Vec::with_capacity(all.len());
    for op in all {
        let times = by_op.entry(op.name).or_default();
        samples.push(Sample {
            system: name.to_string(),
            workload: format!("mixed {}: {}", spec.keys.name(), op.name),
            index: times.len(),
            a: Some(op.a),
            b: op.b,
            e2e_us: op.e2e_us,
            server_us: None,
            client_us: None,
            at_s: Some(op.at.as_secs_f64()),
            stats: op.stats,
        });
        times.push(op.e2e_us);
    }
    let ops = by_op
        .into_iter()
        .map(|(op, us)| OpStats {
            op: op.to_string(),
            count: us.len(),
            min: us.iter().copied().fold(f64::INFINITY, f64::min),
            total_s: us.iter().sum::<f64>() / 1e6,
            per_second: us.len() as f64 / seconds,
            latency: Percentiles::of(&us),
        })
        .collect();
    let mixed = Mixed {
        system: name.to_string(),
        keys: spec.keys.name(),
        warmup_s: spec.warmup.as_secs_f64(),
        seconds,
        writers: spec.writers,
        readers: spec.readers,
        write_delay_ms: spec.write_delay.as_secs_f64() * 1e3,
        ops,
        acked_writes,
        memory_start,
        memory_end,
        memory_curve,
        disk_bytes,
    };
    Ok(Some((mixed, samples)))
}

/// What one writer did: its timed operations (after the warm-up), the writes acknowledged (all),
/// the edges it added that are still there, and those it removed.
struct Written {
    ops: Vec<Op>,
    acked: u64,
    present: Vec<(u64, u64)>,
    removed: Vec<(u64, u64)>,
}

/// Adds an edge from a fresh vertex to a target drawn by `zipf` (uniform if `None`), and every
/// other time removes its oldest edge, pausing `delay` after each, until `stop`; times those
/// that start once `counting` (when, since `started`).
fn write_loop(
    link: &mut dyn System,
    targets: &[u64],
    zipf: Option<&Zipf>,
    first: u64,
    delay: Duration,
    seed: u64,
    (started, (counting, stop)): (Instant, (&AtomicBool, &AtomicBool)),
) -> anyhow::Result<Written> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut done = Written {
        ops: Vec::new(),
        acked: 0,
        present: Vec::new(),
        removed: Vec::new(),
    };
    let mut next = first;
    let mut oldest = 0;
    for i in 0u64.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let counted = counting.load(Ordering::Relaxed);
        if i % 2 == 1 && oldest < done.present.len() {
            let (s, d) = done.present[oldest];
            let t = Instant::now();
            link.remove_edge(s, d).context("writer: remove edge")?;
            if counted {
                done.ops.push(write_op("remove edge", started, t, (s, d)));
            }
            done.removed.push((s, d));
            oldest += 1;
        } else {
            let k = match zipf {
                Some(z) => z.sample(&mut rng),
                None => rng.gen_range(0..targets.len()),
            };
            let d = targets[k];
            let t = Instant::now();
            link.add_edge(next, d).context("writer: add edge")?;
            if counted {
                done.ops.push(write_op("add edge", started, t, (next, d)));
            }
            done.present.push((next, d));
            next += 1;
        }
        done.acked += 1;
        std::thread::sleep(delay);
    }
    done.present.drain(..oldest);
    Ok(done)
}

/// A write of the edge `src → dst` that began at `t`, as an [`Op`].
fn write_op(name: &'static str, started: Instant, t: Instant, (src, dst): (u64, u64)) -> Op {
    Op {
        name,
        at: t - started,
        a: src,
        b: Some(dst),
        e2e_us: measure::elapsed_us(t),
        stats: None,
    }
}

/// A reader's query on its `turn` (counted from 0): a neighbor count of `vertex`, a depth-2 BFS
/// from it, or a shortest path between `pair`, in turn, over out-edges.
fn reader_query(turn: u64, vertex: u64, (source, target): (u64, u64)) -> (&'static str, Query) {
    let dir = Direction::Out;
    match turn % 3 {
        0 => ("neighbor count", Query::NeighborCount { vertex, dir }),
        1 => (
            "BFS depth 2",
            Query::Bfs {
                start: vertex,
                dir,
                max_depth: Some(2),
            },
        ),
        _ => (
            "shortest path",
            Query::ShortestPath {
                source,
                target,
                dir,
            },
        ),
    }
}

/// Every query a reader may ask: [`reader_query`] of each start and of each pair.
fn reader_queries(starts: &[u64], pairs: &[(u64, u64)]) -> Vec<Query> {
    let from_starts = starts
        .iter()
        .flat_map(|&v| [0, 1].map(|turn| reader_query(turn, v, (v, v)).1));
    let paths = pairs.iter().map(|&pair| reader_query(2, pair.0, pair).1);
    from_starts.chain(paths).collect()
}

/// Asks [`reader_query`] in turn, from random starts and pairs, each timed by the benchmark
/// driver and checked against `answers`, until `stop`; keeps those that start once `counting`
/// (when, since `started`).
fn read_loop(
    link: &mut dyn System,
    answers: &Answers,
    starts: &[u64],
    pairs: &[(u64, u64)],
    seed: u64,
    (started, (counting, stop)): (Instant, (&AtomicBool, &AtomicBool)),
) -> anyhow::Result<Vec<Op>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ops = Vec::new();
    for turn in 0u64.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let vertex = starts[rng.gen_range(0..starts.len())];
        // A pair is drawn only on a path's turn.
        let pair = match turn % 3 {
            2 => pairs[rng.gen_range(0..pairs.len())],
            _ => (vertex, vertex),
        };
        let (name, query) = reader_query(turn, vertex, pair);
        let counted = counting.load(Ordering::Relaxed);
        let at = started.elapsed();
        // One call through the benchmark driver: timed, then checked.
        let measured = measure::measure(
            std::slice::from_ref(&query),
            measure::Pace::default(),
            |q| link.answer(q),
            |q, answer| answers.verify(q, &answer.reply),
        )
        .with_context(|| format!("{name}: {query}"))?;
        if counted {
            let (a, b) = query.input();
            ops.extend(measured.into_iter().map(|t| Op {
                name,
                at,
                a,
                b,
                e2e_us: t.e2e_us,
                stats: t.value.stats,
            }));
        }
    }
    Ok(ops)
}

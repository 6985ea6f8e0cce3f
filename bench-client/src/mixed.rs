//! A mixed concurrent workload in the shape of agdb's social-network benchmark: writers that add
//! and remove edges with a delay, and readers that list neighbors, run depth-2 BFS and shortest
//! paths, all at once for a fixed time, each on its own WebSocket connection. Reported per
//! operation: count, min, mean, p50, p99, max, total and throughput; and the server's RSS over
//! the run when its process id is known. Also the soak check: at the end every acknowledged
//! write is accounted for (the edge count exactly, and the edges read back).
//!
//! Readers follow out-edges of the loaded graph and writers add edges *from* fresh vertices
//! *to* loaded ones (drawn uniformly or Zipf-skewed, so that hubs take most writes: the
//! contention case), so every read is checked against the reference while the writes still
//! update the loaded vertices' rows and indexes.

use crate::live::{Keys, Zipf};
use crate::measure;
use crate::report::model::{Mixed, OpStats, Percentiles};
use anyhow::{Context, ensure};
use graph_client::graph::{ClientError, Direction, GraphDb, GraphError, PathStatus, TxOptions};
use graph_reference::ReferenceGraph;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct MixedSpec {
    pub duration: Duration,
    pub writers: usize,
    pub readers: usize,
    /// Pause after each write.
    pub write_delay: Duration,
    pub keys: Keys,
    /// Fresh vertex ids start here (one range per writer).
    pub first_id: u64,
    /// The server's process, to sample its RSS (Linux `/proc`).
    pub server_pid: Option<u32>,
    pub seed: u64,
}

/// One timed operation: its name and µs.
type Op = (&'static str, f64);

/// Runs the workload on `db`'s database, whose graph is `reference` (loaded, unchanged so far);
/// readers start from `starts` and ask for paths between `pairs`.
pub fn run(
    db: &GraphDb,
    reference: &ReferenceGraph,
    starts: &[u64],
    pairs: &[(u64, u64)],
    spec: &MixedSpec,
) -> anyhow::Result<Mixed> {
    ensure!(
        !starts.is_empty() && !pairs.is_empty(),
        "no vertices to read"
    );
    // Targets of the writes, hubs first, so that Zipf keys hit the hubs.
    let mut targets: Vec<u64> = reference.vertices().to_vec();
    targets.sort_by_key(|&v| std::cmp::Reverse(reference.degree(v, Direction::Both)));
    let zipf = match spec.keys {
        Keys::Zipf(s) => Some(Zipf::new(targets.len(), s)),
        Keys::Uniform => None,
    };
    let before = db.info()?.edges;
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let rss_start = spec.server_pid.and_then(rss_bytes);
    let (writes, reads, rss_curve) = std::thread::scope(|s| {
        let writers: Vec<_> = (0..spec.writers)
            .map(|w| {
                let (link, targets, zipf, stop) = (db.reconnect(), &targets, zipf.as_ref(), &stop);
                let first = spec.first_id + w as u64 * 10_000_000;
                let seed = spec.seed ^ (w as u64 + 1);
                s.spawn(move || {
                    write_loop(&link, targets, zipf, first, spec.write_delay, seed, stop)
                })
            })
            .collect();
        let readers: Vec<_> = (0..spec.readers)
            .map(|r| {
                let (link, stop) = (db.reconnect(), &stop);
                let seed = spec.seed ^ (0x100 + r as u64);
                s.spawn(move || read_loop(&link, reference, starts, pairs, seed, stop))
            })
            .collect();
        let mut curve = Vec::new();
        while started.elapsed() < spec.duration {
            if let Some(rss) = spec.server_pid.and_then(rss_bytes) {
                curve.push((started.elapsed().as_secs_f64(), rss));
            }
            std::thread::sleep(Duration::from_millis(250).min(spec.duration));
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
    let seconds = started.elapsed().as_secs_f64();

    // Every acknowledged write accounted for: the count exactly, and the edges read back.
    let present: u64 = writes.iter().map(|w| w.present.len() as u64).sum();
    let after = db.info()?.edges;
    ensure!(
        after == before + present,
        "the writers' acknowledged adds and removes leave {} edges, the graph has {after}",
        before + present
    );
    for w in &writes {
        let mut by_src: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &(s, d) in &w.present {
            by_src.entry(s).or_default().push(d);
        }
        for (&src, want) in by_src.iter().take(200) {
            let got = db.neighbors(src, Direction::Out, 0)?.value.neighbors;
            let mut want = want.clone();
            want.sort_unstable();
            ensure!(
                got == want,
                "vertex {src}: stored {got:?}, acknowledged {want:?}"
            );
        }
        for &src in w.removed_sources.iter().take(200) {
            let got = db.neighbors(src, Direction::Out, 0)?.value.neighbors;
            ensure!(
                got.is_empty(),
                "vertex {src}: its edge was removed, yet it has {got:?}"
            );
        }
    }

    let mut by_op: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (op, us) in writes
        .iter()
        .flat_map(|w| w.ops.iter())
        .chain(reads.iter().flatten())
    {
        by_op.entry(op).or_default().push(*us);
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
    Ok(Mixed {
        keys: spec.keys.name(),
        seconds,
        writers: spec.writers,
        readers: spec.readers,
        write_delay_ms: spec.write_delay.as_secs_f64() * 1e3,
        ops,
        acked_writes: writes.iter().map(|w| w.ops.len() as u64).sum(),
        rss_start,
        rss_end: spec.server_pid.and_then(rss_bytes),
        rss_curve,
    })
}

/// What one writer did: its timed operations, the edges it added that are still there, and
/// the sources of those it removed.
struct Written {
    ops: Vec<Op>,
    present: Vec<(u64, u64)>,
    removed_sources: Vec<u64>,
}

/// Adds an edge from a fresh vertex to a target drawn by `zipf` (uniform if `None`), and every
/// other time removes its oldest edge, pausing `delay` after each, until `stop`.
fn write_loop(
    link: &GraphDb,
    targets: &[u64],
    zipf: Option<&Zipf>,
    first: u64,
    delay: Duration,
    seed: u64,
    stop: &AtomicBool,
) -> anyhow::Result<Written> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut done = Written {
        ops: Vec::new(),
        present: Vec::new(),
        removed_sources: Vec::new(),
    };
    let mut next = first;
    let mut oldest = 0;
    for i in 0u64.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if i % 2 == 1 && oldest < done.present.len() {
            let (s, d) = done.present[oldest];
            let t = Instant::now();
            link.remove_edges(&[s], &[d])
                .context("writer remove_edges")?;
            done.ops
                .push(("remove edge", t.elapsed().as_nanos() as f64 / 1e3));
            done.removed_sources.push(s);
            oldest += 1;
        } else {
            let k = match zipf {
                Some(z) => z.sample(&mut rng),
                None => rng.gen_range(0..targets.len()),
            };
            let d = targets[k];
            let t = Instant::now();
            link.add_edges(&[next], &[d]).context("writer add_edges")?;
            done.ops
                .push(("add edge", t.elapsed().as_nanos() as f64 / 1e3));
            done.present.push((next, d));
            next += 1;
        }
        std::thread::sleep(delay);
    }
    done.present.drain(..oldest);
    Ok(done)
}

/// Lists neighbors, runs a depth-2 BFS and finds a shortest path in turn (out-edges), each timed
/// by the benchmark driver and checked against the reference, until `stop`.
fn read_loop(
    link: &GraphDb,
    reference: &ReferenceGraph,
    starts: &[u64],
    pairs: &[(u64, u64)],
    seed: u64,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<Op>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let tx = TxOptions::default();
    let dir = Direction::Out;
    let mut ops = Vec::new();
    for i in 0u64.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let v = starts[rng.gen_range(0..starts.len())];
        match i % 3 {
            0 => timed(
                &mut ops,
                "list neighbors",
                v,
                |&v| Ok(link.neighbors(v, dir, 0)?.value.neighbors),
                |&v, got| {
                    let want = reference.neighbors(v, dir).unwrap_or_default();
                    ensure!(
                        *got == want,
                        "neighbors of {v}: {got:?}, reference {want:?}"
                    );
                    Ok(())
                },
            )?,
            1 => timed(
                &mut ops,
                "BFS depth 2",
                v,
                |&v| Ok(link.bfs(v, dir, Some(2), 0, tx)?.value.levels),
                |&v, got| {
                    let want = reference.bfs_levels(v, dir, Some(2));
                    ensure!(
                        Some(got) == want.as_ref(),
                        "bfs from {v}: {got:?}, reference {want:?}"
                    );
                    Ok(())
                },
            )?,
            _ => timed(
                &mut ops,
                "shortest path",
                pairs[rng.gen_range(0..pairs.len())],
                // The sampled pairs include some with an unknown vertex: refused, as it must be.
                |&(a, b)| match link.shortest_path(a, b, dir, None, tx) {
                    Ok(p) => {
                        let found = p.value.status == PathStatus::Found;
                        Ok(Some(found.then(|| p.value.path.len() as u32 - 1)))
                    }
                    Err(ClientError::Graph(GraphError::UnknownVertex(_))) => Ok(None),
                    Err(e) => Err(e.into()),
                },
                |&(a, b), got| {
                    let want = reference.distance(a, b, dir, None);
                    ensure!(
                        *got == want,
                        "path {a} → {b}: {got:?} hops, reference {want:?}"
                    );
                    Ok(())
                },
            )?,
        }
    }
    Ok(ops)
}

/// One call of `call` on `input` through the benchmark driver (timed, then checked by `check`),
/// recorded in `ops` as `name`.
fn timed<I: std::fmt::Debug, T>(
    ops: &mut Vec<Op>,
    name: &'static str,
    input: I,
    call: impl FnMut(&I) -> anyhow::Result<T>,
    check: impl FnMut(&I, &T) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let measured = measure::measure(std::slice::from_ref(&input), 0, call, check)
        .with_context(|| format!("{name} {input:?}"))?;
    ops.extend(measured.into_iter().map(|t| (name, t.e2e_us)));
    Ok(())
}

/// The resident set size of process `pid`, bytes (Linux).
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

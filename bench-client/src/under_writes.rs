//! Traversals while the graph changes: a traversal runs in a loop (through the same measuring
//! driver as every benchmark, verified after the clock stops) while a writer on its own
//! connection adds and removes edges at a fixed rate. Reported: the traversals' latency, what
//! bringing the snapshot up to date cost them, and the writer's call latency, in the same run.
//!
//! The writes join fresh vertices far above the graph's ids (each tick adds edges between new
//! vertices and removes those the previous tick added), so the traversals' answers stay those of
//! the loaded graph and every one of them is checked against the reference, while the module
//! logs, and the snapshot applies, every change.

use crate::measure;
use crate::report::model::{Percentiles, Sample, UnderWrites};
use crate::system::{Query, Reply, System};
use anyhow::Context;
use graph_client::graph::GraphDb;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Most writer calls per second: a tick every 20 ms, an `add_edges` and a `remove_edges` each.
const TICKS_PER_SECOND: u32 = 50;

/// Runs `query` on `system` in a loop for `duration` while `writer` changes `rate` edges per
/// second (adds and removes together), using vertex ids from `first_id`; `check` verifies each
/// answer. The writes are then checked as applied: the graph has every fresh vertex the adds
/// made and none of their edges, all removed. Also returns every timed call, traversals and
/// writes, as a raw sample. The query comes with what the report calls it (the query and how
/// far it reaches).
pub fn run(
    system: &mut dyn System,
    (described, query): &(String, Query),
    writer: &GraphDb,
    rate: u32,
    duration: Duration,
    first_id: u64,
    check: impl Fn(&Query, &Reply) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<(UnderWrites, Vec<Sample>)> {
    let before = writer.info().context("graph_info before the writes")?;
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let (reads, writes) = std::thread::scope(|s| {
        let writes = s.spawn(|| write_at(writer, rate, first_id, &stop, started));
        let mut reads = Vec::new();
        let read = (|| {
            while started.elapsed() < duration {
                let at_s = started.elapsed().as_secs_f64();
                let timed = measure::measure(
                    std::slice::from_ref(query),
                    measure::Pace::default(),
                    |q| system.answer(q).with_context(|| format!("{q} failed")),
                    |q, a| check(q, &a.reply).with_context(|| format!("wrong answer to {q}")),
                )?;
                reads.extend(timed.into_iter().map(|t| (at_s, t)));
            }
            anyhow::Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        let writes = writes.join().expect("writer thread");
        read.map(|()| (reads, writes))
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let Written {
        calls: write_us,
        changed: changes,
        next_id,
    } = writes?;
    let after = writer.info().context("graph_info after the writes")?;
    let fresh = next_id - first_id;
    anyhow::ensure!(
        (after.edges, after.vertices) == (before.edges, before.vertices + fresh),
        "writes beside {described}: {fresh} fresh vertices given edges that were then removed, \
         but the graph went from {} edges and {} vertices to {} and {}",
        before.edges,
        before.vertices,
        after.edges,
        after.vertices
    );
    let stats: Vec<_> = reads.iter().filter_map(|(_, r)| r.value.stats).collect();
    let of = |f: fn(&crate::system::TxStats) -> u64| {
        Percentiles::of(&stats.iter().map(|s| f(s) as f64).collect::<Vec<_>>())
    };
    let (a, b) = query.input();
    let traversals = format!("under writes at {rate}/s: {described}");
    let mut samples: Vec<Sample> = reads
        .iter()
        .enumerate()
        .map(|(i, (at_s, r))| Sample {
            a: Some(a),
            b,
            stats: r.value.stats,
            ..Sample::call(traversals.clone(), i, r.e2e_us, Some(*at_s))
        })
        .collect();
    let writes = format!("under writes at {rate}/s: writer beside {described}");
    samples.extend(
        write_us
            .iter()
            .enumerate()
            .map(|(i, &(at_s, us))| Sample::call(writes.clone(), i, us, Some(at_s))),
    );
    let under_writes = UnderWrites {
        traversal: described.to_string(),
        rate,
        changes_per_second: changes as f64 / elapsed,
        latency: Percentiles::of(&reads.iter().map(|(_, r)| r.e2e_us).collect::<Vec<_>>()),
        writer: Percentiles::of(&write_us.iter().map(|w| w.1).collect::<Vec<_>>()),
        from_snapshot: stats.iter().filter(|s| s.from_snapshot).count(),
        pinned: stats.iter().filter(|s| s.pinned).count(),
        changes_applied: of(|s| s.changes_applied),
        catch_up_us: of(|s| s.catch_up_us),
    };
    Ok((under_writes, samples))
}

/// What [`write_at`] did: each call's start (s after its `started`) and latency (µs), the
/// number of edges changed, and the first id it left unused.
pub struct Written {
    pub calls: Vec<(f64, f64)>,
    pub changed: u64,
    pub next_id: u64,
}

/// Changes `rate` edges per second until `stop`: every tick, adds edges between fresh vertices
/// (ids from `first_id` on, two new vertices per edge) and removes the previous tick's.
pub fn write_at(
    writer: &GraphDb,
    rate: u32,
    first_id: u64,
    stop: &AtomicBool,
    started: Instant,
) -> anyhow::Result<Written> {
    let ticks = TICKS_PER_SECOND.min(rate.div_ceil(2)).max(1);
    let per_tick = (rate / ticks / 2).max(1) as u64;
    let period = Duration::from_secs(1) / ticks;
    let mut latencies = Vec::new();
    let mut changed = 0u64;
    let mut previous: Option<(Vec<u64>, Vec<u64>)> = None;
    let mut next_id = first_id;
    let mut due = Instant::now();
    let mut timed = |call: &dyn Fn() -> anyhow::Result<()>| -> anyhow::Result<()> {
        let (done, at_s, us) = measure::clocked(started, call);
        done?;
        latencies.push((at_s, us));
        Ok(())
    };
    while !stop.load(Ordering::Relaxed) {
        let src: Vec<u64> = (next_id..next_id + per_tick).collect();
        let dst: Vec<u64> = src.iter().map(|v| v + per_tick).collect();
        next_id += 2 * per_tick;
        timed(&|| writer.add_edges(&src, &dst).context("writer add_edges"))?;
        changed += per_tick;
        if let Some((s, d)) = previous.take() {
            timed(&|| writer.remove_edges(&s, &d).context("writer remove_edges"))?;
            changed += s.len() as u64;
        }
        previous = Some((src, dst));
        due += period;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    if let Some((s, d)) = previous {
        writer.remove_edges(&s, &d).context("writer remove_edges")?;
    }
    Ok(Written {
        calls: latencies,
        changed,
        next_id,
    })
}

//! Writers versus traversals: how long does a single-edge insert from another client take while
//! traversal procedures run in a loop, compared with an idle server?

use crate::measure::{self, Pace, clocked};
use crate::report::model::{Contention, Percentiles, Sample};
use anyhow::{Context, ensure};
use graph_client::graph::GraphDb;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Inserts `writes` single edges between fresh vertices (ids from `first_id`, so traversals of
/// the loaded graph are unaffected) and returns each call's start (s after `started`) and
/// latency (µs).
fn write_edges(
    writer: &GraphDb,
    first_id: u64,
    writes: usize,
    started: Instant,
) -> anyhow::Result<Vec<(f64, f64)>> {
    (0..writes as u64)
        .map(|i| {
            let (done, at_s, us) = clocked(started, || {
                writer.add_edges(&[first_id + 2 * i], &[first_id + 2 * i + 1])
            });
            done.context("writer insert")?;
            Ok((at_s, us))
        })
        .collect()
}

/// Measures `writes` inserts idle, then `writes` more while `traverse` runs in a loop on
/// another thread (with its own connection), each answer passed to `check` after the clock has
/// stopped (`measure::measure`). Every insert is then checked as stored: the graph has gained
/// exactly their edges and vertices. Also returns every timed call as a raw sample: the idle
/// inserts, the busy ones and the traversals.
pub fn run<T>(
    writer: &GraphDb,
    label: &str,
    first_id: u64,
    writes: usize,
    mut traverse: impl FnMut() -> anyhow::Result<T> + Send,
    check: impl Fn(&T) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<(Contention, Vec<Sample>)> {
    let before = writer.info().context("graph_info before the inserts")?;
    let idle = write_edges(writer, first_id, writes, Instant::now())?;
    let stop = AtomicBool::new(false);
    let begun = AtomicBool::new(false);
    let started = Instant::now();
    let (busy, traversals) = std::thread::scope(|s| {
        let looper = s.spawn(|| -> anyhow::Result<Vec<(f64, f64)>> {
            let mut done = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                begun.store(true, Ordering::Relaxed);
                let at_s = started.elapsed().as_secs_f64();
                let timed = measure::measure(
                    &[()],
                    Pace::default(),
                    |()| traverse(),
                    |(), answer| check(answer),
                )?;
                done.extend(timed.into_iter().map(|t| (at_s, t.e2e_us)));
            }
            Ok(done)
        });
        // Let the first traversal get going before the writer starts (on a loaded machine the
        // thread may take longer than the writes to start: it then ran none).
        while !begun.load(Ordering::Relaxed) && !looper.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let busy = write_edges(writer, first_id + 2 * writes as u64, writes, started);
        stop.store(true, Ordering::Relaxed);
        let traversals = looper.join().expect("traversal thread")?;
        anyhow::Ok((busy?, traversals))
    })?;
    // Each insert joins two fresh vertices: an insert acknowledged but not stored would show.
    let after = writer.info().context("graph_info after the inserts")?;
    let inserted = (idle.len() + busy.len()) as u64;
    ensure!(
        (after.edges, after.vertices) == (before.edges + inserted, before.vertices + 2 * inserted),
        "{label}: {inserted} inserts acknowledged, but the graph went from {} edges and {} \
         vertices to {} and {}",
        before.edges,
        before.vertices,
        after.edges,
        after.vertices
    );
    let mut samples = Vec::new();
    for (what, calls, concurrent) in [
        (format!("contention: insert, idle ({label})"), &idle, false),
        (format!("contention: insert during {label}"), &busy, true),
        (format!("contention: {label}"), &traversals, true),
    ] {
        samples.extend(
            calls.iter().enumerate().map(|(i, &(at_s, us))| {
                Sample::call(what.clone(), i, us, concurrent.then_some(at_s))
            }),
        );
    }
    let latencies = |calls: &[(f64, f64)]| calls.iter().map(|c| c.1).collect::<Vec<_>>();
    let contention = Contention {
        traversal: label.to_string(),
        idle: Percentiles::of(&latencies(&idle)),
        busy: Percentiles::of(&latencies(&busy)),
        traversals: traversals.len(),
    };
    Ok((contention, samples))
}

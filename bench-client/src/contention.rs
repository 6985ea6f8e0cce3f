//! Writers versus traversals: how long does a single-edge insert from another client take while
//! traversal procedures run in a loop, compared with an idle server?

use crate::measure::clocked;
use crate::report::model::{Contention, Percentiles, Sample};
use anyhow::Context;
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

/// Measures `writes` inserts idle, then `writes` more while `traverse` (which verifies its own
/// answer) runs in a loop on another thread (with its own connection). Also returns every
/// timed call as a raw sample: the idle inserts, the busy ones and the traversals.
pub fn run(
    writer: &GraphDb,
    label: &str,
    first_id: u64,
    writes: usize,
    mut traverse: impl FnMut() -> anyhow::Result<()> + Send,
) -> anyhow::Result<(Contention, Vec<Sample>)> {
    let idle = write_edges(writer, first_id, writes, Instant::now())?;
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let (busy, traversals) = std::thread::scope(|s| {
        let looper = s.spawn(|| -> anyhow::Result<Vec<(f64, f64)>> {
            let mut done = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let (traversed, at_s, us) = clocked(started, &mut traverse);
                traversed?;
                done.push((at_s, us));
            }
            Ok(done)
        });
        // Let the first traversal get going before the writer starts.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let busy = write_edges(writer, first_id + 2 * writes as u64, writes, started);
        stop.store(true, Ordering::Relaxed);
        let traversals = looper.join().expect("traversal thread")?;
        anyhow::Ok((busy?, traversals))
    })?;
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

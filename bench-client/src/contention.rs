//! Writers versus traversals: how long does a single-edge insert from another client take while
//! traversal procedures run in a loop, compared with an idle server?

use crate::report::model::{Contention, Percentiles};
use anyhow::Context;
use graph_client::graph::GraphDb;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// Inserts `writes` single edges between fresh vertices (ids from `first_id`, so traversals of
/// the loaded graph are unaffected) and returns each call's latency in µs.
fn write_edges(writer: &GraphDb, first_id: u64, writes: usize) -> anyhow::Result<Vec<f64>> {
    (0..writes as u64)
        .map(|i| {
            let t = Instant::now();
            writer
                .add_edges(&[first_id + 2 * i], &[first_id + 2 * i + 1])
                .context("writer insert")?;
            Ok(t.elapsed().as_secs_f64() * 1e6)
        })
        .collect()
}

/// Measures `writes` inserts idle, then `writes` more while `traverse` runs in a loop on another
/// thread (with its own connection).
pub fn run(
    writer: &GraphDb,
    label: &str,
    first_id: u64,
    writes: usize,
    mut traverse: impl FnMut() -> anyhow::Result<()> + Send,
) -> anyhow::Result<Contention> {
    let idle = write_edges(writer, first_id, writes)?;
    let stop = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let busy = std::thread::scope(|s| {
        let looper = s.spawn(|| -> anyhow::Result<()> {
            while !stop.load(Ordering::Relaxed) {
                traverse()?;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        });
        // Let the first traversal get going before the writer starts.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let busy = write_edges(writer, first_id + 2 * writes as u64, writes);
        stop.store(true, Ordering::Relaxed);
        looper.join().expect("traversal thread")?;
        busy
    })?;
    Ok(Contention {
        traversal: label.to_string(),
        idle: Percentiles::of(&idle),
        busy: Percentiles::of(&busy),
        traversals: done.into_inner(),
    })
}

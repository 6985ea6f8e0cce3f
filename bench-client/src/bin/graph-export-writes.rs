//! `graph export` while the graph changes: exports the graph that graph-bench loaded (the same
//! `--dataset` and `--seed`) once per write rate while a writer adds and removes edges at that
//! rate (the writer of graph-bench's under-writes workload: fresh vertices, so the loaded graph
//! stays as it was), and checks that every export is the loaded graph, edge for edge, plus what
//! the writer had added at the export's version. `results/export/under-writes.sh` runs it.

use anyhow::{Context, ensure};
use clap::Parser;
use graph_bench::datasets::{DatasetSpec, FRESH_SPAN, fresh_ids};
use graph_bench::report::model::Percentiles;
use graph_bench::under_writes::write_at;
use graph_client::graph::{ClientError, GraphDb, TransportKind};
use graph_client::server::Server;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    about = "Exports a graph graph-bench loaded while a writer changes it at each of \
several rates, and checks every export against the dataset."
)]
struct Args {
    #[arg(
        long,
        env = "GRAPH_SERVER",
        default_value = "http://127.0.0.1:3000",
        value_parser = graph_client::server::server_url
    )]
    server: String,
    /// Token of an identity that may write the graph (its owner's, or one granted).
    #[arg(long, env = "GRAPH_TOKEN")]
    token: String,
    #[arg(long, default_value = "graph")]
    database: String,
    /// The dataset graph-bench loaded (its --dataset and --seed).
    #[arg(long, default_value = "dblp")]
    dataset: DatasetSpec,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Edges changed per second (adds and removes) during each export: one export per rate.
    #[arg(long, value_delimiter = ',', default_value = "0,5000,10000")]
    write_rates: Vec<u32>,
    /// Edges per page (`graph export --page`).
    #[arg(long, default_value_t = 10_000)]
    page: u32,
    /// Exports started before giving up, as `graph export` does.
    #[arg(long, default_value_t = 3)]
    attempts: u32,
    /// How the export reads its pages: ws or http (the writer calls over HTTP).
    #[arg(long, default_value = "ws")]
    transport: TransportKind,
}

/// What one export under writes gave.
#[derive(Default)]
struct Export {
    pages: u64,
    starts: u32,
    /// Each page's longest transaction, µs.
    holds_us: Vec<f64>,
    /// Its edges between the dataset's vertices, and the writer's.
    loaded: Vec<(u64, u64)>,
    written: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let edges = args.dataset.load(args.seed)?;
    // The distinct edges in (src, dst) order, as the export gives them.
    let want: Vec<(u64, u64)> = edges.sorted().iter().collect();
    let mut vertices: Vec<u64> = edges.src.iter().chain(&edges.dst).copied().collect();
    drop(edges);
    vertices.sort_unstable();
    vertices.dedup();
    let fresh = fresh_ids(&vertices)?;
    drop(vertices);
    let written = |v: u64| (fresh..fresh + FRESH_SPAN).contains(&v);
    let server = Server::new(&args.server).with_token(args.token.clone());
    let reader = GraphDb::open(server.clone(), &args.database, args.transport);
    let writer = GraphDb::new(server, &args.database);
    println!(
        "# {} (seed {}, {} edges), {} pages of {} edges: write rate (edges/s) | edges the writer changed | wall s | pages | exports started | page hold p50 / p99 / max µs (the last export's, each page's longest transaction) | outcome",
        args.dataset.name(),
        args.seed,
        want.len(),
        args.transport,
        args.page
    );
    // Each rate's writer takes its ids where the last one stopped: no gap in the ids for a
    // page's window to grow over (see results/export/README.md).
    let mut first_id = fresh;
    for &rate in &args.write_rates {
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        let mut export = Export::default();
        let start = first_id;
        let (outcome, wall, changed) = std::thread::scope(|s| {
            let writes =
                (rate > 0).then(|| s.spawn(|| write_at(&writer, rate, start, &stop, started)));
            let outcome = reader.export(args.page, args.attempts, |page, first| {
                if first {
                    export = Export {
                        starts: export.starts + 1,
                        ..Export::default()
                    };
                }
                export.pages += 1;
                export.holds_us.push(page.stats.max_hold_us as f64);
                for e in &page.edges {
                    match (written(e.src), written(e.dst)) {
                        (false, false) => export.loaded.push((e.src, e.dst)),
                        _ => export.written += 1,
                    }
                }
                Ok::<(), ClientError>(())
            });
            let wall = started.elapsed().as_secs_f64();
            stop.store(true, Ordering::Relaxed);
            let changed = match writes {
                Some(w) => {
                    let written = w.join().expect("writer thread")?;
                    first_id = written.next_id;
                    written.changed
                }
                None => 0,
            };
            anyhow::Ok((outcome, wall, changed))
        })?;
        let outcome = match outcome {
            Ok(version) => {
                export.loaded.sort_unstable();
                ensure!(
                    export.loaded == want,
                    "the export at version {version} is not the loaded graph: {} edges between its vertices, {} loaded",
                    export.loaded.len(),
                    want.len()
                );
                format!(
                    "version {version}: the loaded graph exactly, and {} of the writer's edges",
                    export.written
                )
            }
            Err(e) => format!("failed: {e}"),
        };
        let holds = Percentiles::of(&export.holds_us);
        println!(
            "{rate} | {changed} | {wall:.1} | {} | {} | {:.0} / {:.0} / {:.0} | {outcome}",
            export.pages, export.starts, holds.p50, holds.p99, holds.max
        );
    }
    // The empty procedure, which modules from before `graph_info` changed have too.
    reader
        .noop(true)
        .context("the server answers after the exports")?;
    Ok(())
}

//! The ingestion matrix: graph sizes × edges per call × transport × load, each cell loaded into
//! a fresh, durable graph-host (see `graph_bench::ingest`). `scripts/bench-ingest` runs it.

use anyhow::Context;
use clap::Parser;
use graph_bench::datasets::DatasetSpec;
use graph_bench::ingest::{render_jsonl, run_matrix};
use graph_client::graph::TransportKind;
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Load {
    Bulk,
    Plain,
}

#[derive(Parser, Debug)]
#[command(
    about = "Ingestion matrix: load samples of a dataset of several sizes, in calls of \
several sizes, over each transport, as a bulk load and as one keeping the vertex rows exact \
after every call, one fresh durable graph-host per cell; edges/s, RSS, bytes \
per edge and on-disk size as JSONL, CSV, Markdown and a chart.",
    // scripts/bench-ingest passes --out; a later --out (the script's caller's) wins.
    args_override_self = true
)]
struct Args {
    /// The graph-host binary to start for each cell.
    #[arg(long, env = "HOST_BIN")]
    host_bin: PathBuf,
    /// The module wasm to publish into each host.
    #[arg(long, env = "MODULE_WASM")]
    publish: PathBuf,
    /// The graph whose seeded samples are loaded (graph-bench's --dataset).
    #[arg(long, default_value = "lj")]
    dataset: DatasetSpec,
    /// Edges per graph (samples of the dataset; its whole size at most).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "100000,1000000,10000000,34681189"
    )]
    sizes: Vec<usize>,
    /// Edges per call.
    #[arg(long, value_delimiter = ',', default_value = "20000,200000")]
    batches: Vec<usize>,
    #[arg(long, value_delimiter = ',', default_value = "ws,http")]
    transports: Vec<TransportKind>,
    /// Loads: `bulk` (the edges first, each vertex row written once at the end: what `graph
    /// load` does into an empty graph) and `plain` (every call keeps its vertices' rows exact).
    #[arg(long, value_delimiter = ',', default_value = "bulk,plain")]
    loads: Vec<Load>,
    /// Port each cell's host listens on (one at a time).
    #[arg(long, default_value_t = 3300)]
    port: u16,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[arg(long, default_value = "results/ingest")]
    out: PathBuf,
    /// Only render the cells already in OUT/ingest.jsonl (of a run cut short, for example).
    #[arg(long)]
    render_only: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.render_only {
        for path in render_jsonl(&args.out)? {
            println!("wrote {}", path.display());
        }
        return Ok(());
    }
    let arcs = args
        .dataset
        .load(args.seed)
        .with_context(|| format!("building {}", args.dataset))?;
    println!("{}: {} arcs", args.dataset, arcs.len());
    let written = run_matrix(
        &args.host_bin,
        args.port,
        &args.publish,
        &arcs,
        &args.sizes,
        &args.batches,
        &args.transports,
        &args
            .loads
            .iter()
            .map(|l| matches!(l, Load::Bulk))
            .collect::<Vec<_>>(),
        args.seed,
        &args.out,
    )?;
    for path in written {
        println!("wrote {}", path.display());
    }
    Ok(())
}

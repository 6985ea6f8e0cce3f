//! `graph-bench`: loads a graph into the SpacetimeDB graph module, runs verified workloads in
//! Stage-2 and Stage-1 modes side by side, measures writers under traversal load, and reports.

use anyhow::{Context, ensure};
use clap::Parser;
use graph_bench::contention;
use graph_bench::datasets::DatasetSpec;
use graph_bench::reference::ReferenceGraph;
use graph_bench::report::{Environment, Load, Report, fmt_us};
use graph_bench::summary::Summary;
use graph_bench::workloads::{Bench, Workload};
use graph_client::edgelist::EdgeList;
use graph_client::graph::{Direction, GraphDb, Mode, TxOptions};
use graph_client::server::Server;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// SpacetimeDB server (the embedded graph-host or an official `spacetime start`).
    #[arg(long, env = "GRAPH_SERVER", default_value = "http://127.0.0.1:3000")]
    server: String,
    /// What the server is, for the report.
    #[arg(long, default_value = "SpacetimeDB HTTP API")]
    server_kind: String,
    /// Token of the identity to use (default: a new identity from the server).
    #[arg(long, env = "GRAPH_TOKEN")]
    token: Option<String>,
    #[arg(long, default_value = "graph")]
    database: String,
    /// Publish this module wasm (clearing existing data) before loading.
    #[arg(long)]
    publish: Option<PathBuf>,
    /// fb, dblp, lj, ring:N or file:PATH (a SNAP or CSV edge list, optionally .gz).
    #[arg(long, default_value = "dblp")]
    dataset: DatasetSpec,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Direction of every query (default: both, as SNAP's undirected graphs need; out for ring).
    #[arg(long)]
    direction: Option<Direction>,
    /// Measured queries per Stage-2 benchmark.
    #[arg(long, default_value_t = 50)]
    runs: usize,
    /// Measured queries per Stage-2 full BFS benchmark (each visits the whole component).
    #[arg(long, default_value_t = 10)]
    bfs_runs: usize,
    /// Measured queries per Stage-1 benchmark (each scans every edge).
    #[arg(long, default_value_t = 5)]
    stage1_runs: usize,
    /// Unmeasured queries before each benchmark.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Depth of the depth-bounded BFS.
    #[arg(long, default_value_t = 3)]
    depth: u32,
    /// Comma-separated: neighbors, bfs, bfs-depth, path.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "neighbors,bfs,bfs-depth,path"
    )]
    workloads: Vec<Workload>,
    /// Comma-separated: stage2, stage1, stage1-reducer.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "stage2,stage1,stage1-reducer"
    )]
    modes: Vec<Mode>,
    /// Single-edge inserts per contention phase (0: skip the contention workload).
    #[arg(long, default_value_t = 200)]
    writes: usize,
    /// Single-edge inserts while Stage-1 traversals run (each may wait for a whole query).
    #[arg(long, default_value_t = 10)]
    stage1_writes: usize,
    /// Work units per transaction for Stage-2 procedures (0: the module's default).
    #[arg(long, default_value_t = 0)]
    tx_budget: u32,
    /// Longest time between yields for Stage-2 procedures, µs (0: the module's default).
    #[arg(long, default_value_t = 0)]
    yield_every_us: u32,
    /// Calls of the empty procedure and the empty reducer, to measure the round-trip floor
    /// (0: skip).
    #[arg(long, default_value_t = 1000)]
    roundtrip_calls: usize,
    /// The graph is already loaded: skip loading (counts are still verified).
    #[arg(long)]
    skip_load: bool,
    /// Directory for the Markdown and JSON reports.
    #[arg(long, default_value = "results")]
    out: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let dir = args.direction.unwrap_or(match args.dataset {
        DatasetSpec::Ring(_) => Direction::Out,
        _ => Direction::Both,
    });

    let t = Instant::now();
    let edges = args
        .dataset
        .load(args.seed)
        .context("building the dataset")?;
    let summary = edges.summary();
    println!(
        "dataset {}: {} vertices, {} edges, max degree {}, mean degree {:.2} ({:.1} s)",
        args.dataset,
        summary.vertices,
        summary.edges,
        summary.max_degree,
        summary.mean_degree,
        t.elapsed().as_secs_f64()
    );
    let reference = ReferenceGraph::new(&edges);

    let server = Server::new(&args.server);
    let server = match &args.token {
        Some(token) => server.with_token(token.clone()),
        None => {
            let identity = server.create_identity()?;
            server.with_token(identity.token)
        }
    };
    if let Some(wasm) = &args.publish {
        let bytes = std::fs::read(wasm).with_context(|| format!("reading {}", wasm.display()))?;
        server.publish(&args.database, bytes, true)?;
        println!(
            "published {} as `{}` (data cleared)",
            wasm.display(),
            args.database
        );
    }
    let db = GraphDb::new(server, &args.database);
    let load = (!args.skip_load).then(|| load(&db, &edges)).transpose()?;
    verify_counts(&db, &edges, &reference)?;

    let vertices = reference.sample_vertices(args.runs, args.seed);
    let pairs = reference.sample_pairs(args.runs, dir, args.seed);
    let tx = TxOptions {
        tx_budget: args.tx_budget,
        yield_every_us: args.yield_every_us,
    };
    let bench = Bench {
        db: &db,
        reference: &reference,
        dir,
        depth: args.depth,
        tx,
    };
    let mut results = roundtrip(&db, args.roundtrip_calls)?;
    for &workload in &args.workloads {
        for &mode in &args.modes {
            let n = match (mode, workload) {
                (Mode::Stage2, Workload::BfsFull) => args.bfs_runs,
                (Mode::Stage2, _) => args.runs,
                _ => args.stage1_runs,
            };
            let warmup = if mode == Mode::Stage2 { args.warmup } else { 0 };
            let (v, p) = (
                &vertices[..n.min(vertices.len())],
                &pairs[..n.min(pairs.len())],
            );
            let t = Instant::now();
            if let Some(samples) = bench.run(workload, mode, warmup, v, p)? {
                let s = Summary::of(workload.as_str(), mode.as_str(), &samples);
                println!(
                    "{workload:<9} {:<14} {} runs verified: p50 {}, p99 {}, longest tx {} ({:.1} s)",
                    mode.as_str(),
                    s.e2e.count,
                    fmt_us(s.e2e.p50),
                    fmt_us(s.e2e.p99),
                    fmt_us(s.worst_hold_us as f64),
                    t.elapsed().as_secs_f64()
                );
                results.push(s);
            }
        }
    }

    let mut contention = Vec::new();
    if args.writes > 0 {
        let writer = GraphDb::new(
            Server::new(&args.server).with_token(db.server().token().unwrap_or_default()),
            &args.database,
        );
        let first_id = db.info()?.max_vertex_id + 1_000_000;
        let start = vertices[0];
        let stage2 = || {
            db.bfs(start, dir, None, 0, tx)
                .map(drop)
                .map_err(Into::into)
        };
        contention.push(contention::run(
            &writer,
            "Stage-2 full BFS loop",
            first_id,
            args.writes,
            stage2,
        )?);
        if args.modes.contains(&Mode::Stage1Procedure) {
            let stage1 = || {
                db.bfs_stage1(start, dir, None)
                    .map(drop)
                    .map_err(Into::into)
            };
            let writes = args.stage1_writes;
            let first = first_id + 4 * args.writes as u64;
            contention.push(contention::run(
                &writer,
                "Stage-1 full BFS loop",
                first,
                writes,
                stage1,
            )?);
        }
    }

    let report = Report {
        environment: environment(&args, command, dir, &edges),
        load,
        results,
        contention,
    };
    println!("\n{}\n{}", report.heading(), report.table());
    for path in report.write(&args.out)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The round-trip floor: empty procedure and empty reducer calls over HTTP, one token.
fn roundtrip(db: &GraphDb, calls: usize) -> anyhow::Result<Vec<Summary>> {
    let mut out = Vec::new();
    for (name, procedure) in [("empty procedure", true), ("empty reducer", false)] {
        if calls == 0 {
            break;
        }
        let mut samples = Vec::with_capacity(calls);
        for i in 0..calls + 20 {
            let t = Instant::now();
            let server_us = db.noop(procedure)?;
            if i >= 20 {
                let e2e_us = t.elapsed().as_secs_f64() * 1e6;
                samples.push(graph_bench::workloads::Sample {
                    e2e_us,
                    server_us,
                    stats: None,
                });
            }
        }
        let s = Summary::of(name, "-", &samples);
        println!(
            "{name}: {calls} calls, p50 {}, p99 {}",
            fmt_us(s.e2e.p50),
            fmt_us(s.e2e.p99)
        );
        out.push(s);
    }
    Ok(out)
}

fn load(db: &GraphDb, edges: &EdgeList) -> anyhow::Result<Load> {
    let bar = ProgressBar::new(edges.len() as u64).with_style(
        ProgressStyle::with_template("loading {bar:40} {pos}/{len} edges ({per_sec}, eta {eta})")
            .expect("progress template"),
    );
    let t = Instant::now();
    db.load(edges, |sent| bar.set_position(sent as u64))?;
    bar.finish();
    let seconds = t.elapsed().as_secs_f64();
    let load = Load {
        edges_sent: edges.len() as u64,
        seconds,
        edges_per_second: edges.len() as f64 / seconds.max(1e-9),
    };
    println!(
        "loaded {} edges in {:.2} s: {:.0} edges/s",
        edges.len(),
        seconds,
        load.edges_per_second
    );
    Ok(load)
}

/// The server must hold exactly the file's distinct edges and vertices.
fn verify_counts(db: &GraphDb, edges: &EdgeList, reference: &ReferenceGraph) -> anyhow::Result<()> {
    let mut pairs: Vec<(u64, u64)> = edges.iter().collect();
    pairs.sort_unstable();
    pairs.dedup();
    let info = db.info()?;
    ensure!(
        info.edges == pairs.len() as u64 && info.vertices == reference.vertex_count() as u64,
        "the server holds {} vertices / {} edges, the dataset has {} / {} (load it, or drop --skip-load)",
        info.vertices,
        info.edges,
        reference.vertex_count(),
        pairs.len()
    );
    println!(
        "verified: the server holds {} vertices and {} edges",
        info.vertices, info.edges
    );
    Ok(())
}

fn environment(args: &Args, command: String, dir: Direction, edges: &EdgeList) -> Environment {
    let summary = edges.summary();
    let memory_kib: f64 = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0.0);
    Environment {
        command,
        dataset: args.dataset.name(),
        seed: args.seed,
        vertices: summary.vertices,
        edges: summary.edges,
        max_degree: summary.max_degree,
        mean_degree: summary.mean_degree,
        direction: dir.to_string(),
        server_url: args.server.clone(),
        server_kind: args.server_kind.clone(),
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_gib: memory_kib / (1024.0 * 1024.0),
        date_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    }
}

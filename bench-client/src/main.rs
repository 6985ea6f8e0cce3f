//! `graph-bench`: loads a graph into the SpacetimeDB graph module (and into peer systems), runs
//! verified workloads in Stage-2 and Stage-1 modes and on the peers side by side, measures
//! writers under traversal load, and reports.

use anyhow::{Context, ensure};
use clap::Parser;
use graph_bench::contention;
use graph_bench::datasets::DatasetSpec;
use graph_bench::peer_bench::{self, PeerRun};
use graph_bench::peers::Peer;
use graph_bench::peers::neo4j::Neo4j;
use graph_bench::peers::postgres::Postgres;
use graph_bench::report::markdown::{self, fmt_us};
use graph_bench::report::model::{self, Environment, Load, Report, Summary, SystemLoad};
use graph_bench::workloads::{Bench, Sample, Workload};
use graph_client::edgelist::EdgeList;
use graph_client::graph::{Direction, GraphDb, Mode, TxOptions};
use graph_client::server::Server;
use graph_reference::ReferenceGraph;
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
    /// Comma-separated systems: stdb (the Stage-2 procedures), stdb-stage1 (full-scan
    /// procedures), stdb-stage1-reducer (full-scan reducers), and the peers neo4j (plain
    /// Cypher), neo4j-apoc (APOC) and postgres (recursive CTEs), which `scripts/peers` starts.
    /// `--modes` is accepted as another name.
    #[arg(
        long,
        visible_alias = "modes",
        value_delimiter = ',',
        default_value = "stdb,stdb-stage1,stdb-stage1-reducer",
        value_parser = parse_system
    )]
    systems: Vec<String>,
    /// Bolt URL of the Neo4j server for neo4j and neo4j-apoc.
    #[arg(long, env = "GRAPH_NEO4J", default_value = "bolt://127.0.0.1:7687")]
    neo4j: String,
    /// libpq connection string of the PostgreSQL server for postgres.
    #[arg(
        long,
        env = "GRAPH_POSTGRES",
        default_value = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
    )]
    postgres: String,
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

fn parse_system(s: &str) -> Result<String, String> {
    model::mode_of(s).map(|_| s.to_string()).ok_or_else(|| {
        let names: Vec<&str> = model::SYSTEMS.iter().map(|(s, _)| *s).collect();
        format!("system `{s}`: expected one of {}", names.join(", "))
    })
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let command = recorded_command(std::env::args());
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
    let reference = ReferenceGraph::new(edges.iter());
    let mut arcs: Vec<(u64, u64)> = edges.iter().collect();
    arcs.sort_unstable();
    arcs.dedup();

    let vertices = reference.sample_vertices(args.runs, args.seed);
    let pairs = reference.sample_pairs(args.runs, dir, args.seed);
    let inputs = Inputs {
        reference: &reference,
        arcs: &arcs,
        dir,
        vertices: &vertices,
        pairs: &pairs,
    };
    let modes: Vec<Mode> = args
        .systems
        .iter()
        .filter(|s| !model::is_peer(s))
        .map(|s| model::mode_of(s).expect("validated").parse())
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)?;
    let mut stdb = if modes.is_empty() {
        Stdb::default()
    } else {
        run_stdb(&args, &modes, &inputs)?
    };
    let peers = run_peers(&args, &inputs, &mut stdb.results)?;

    let report = Report {
        environment: environment(&args, command, dir, &edges),
        load: stdb.load,
        peer_loads: peers.loads,
        peers: peers.descriptions,
        results: stdb.results,
        contention: stdb.contention,
    };
    println!(
        "\n{}\n{}",
        markdown::heading(&report),
        markdown::table(&report)
    );
    for path in graph_bench::report::write::write(&report, &args.out)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The graph and the queries every system is asked.
struct Inputs<'a> {
    reference: &'a ReferenceGraph,
    /// The dataset's distinct arcs, sorted: what every system must end up holding.
    arcs: &'a [(u64, u64)],
    dir: Direction,
    vertices: &'a [u64],
    pairs: &'a [(u64, u64)],
}

/// What the SpacetimeDB part of a run measured.
#[derive(Default)]
struct Stdb {
    load: Option<Load>,
    results: Vec<Summary>,
    contention: Vec<model::Contention>,
}

/// SpacetimeDB: publish, load, verify counts, the round-trip floor, every workload in every
/// selected mode, and writers against Stage-2 (and Stage-1) traversal loops.
fn run_stdb(args: &Args, modes: &[Mode], inputs: &Inputs) -> anyhow::Result<Stdb> {
    let Inputs {
        reference,
        arcs,
        dir,
        vertices,
        pairs,
    } = *inputs;
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
    // The distinct arcs, in (src, dst) order: as `graph load` sends them (`EdgeList::sorted`).
    let load = (!args.skip_load)
        .then(|| load(&db, &arcs.iter().copied().collect()))
        .transpose()?;
    verify_counts(&db, arcs.len(), reference)?;

    let tx = TxOptions {
        tx_budget: args.tx_budget,
        yield_every_us: args.yield_every_us,
    };
    let bench = Bench {
        db: &db,
        reference,
        dir,
        depth: args.depth,
        tx,
    };
    let mut results = roundtrip(&db, args.roundtrip_calls)?;
    for &workload in &args.workloads {
        for &mode in modes {
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
                results.push(summarize(workload, mode.as_str(), &samples, t));
            }
        }
    }

    let mut contention = Vec::new();
    if args.writes > 0 && !vertices.is_empty() {
        let writer = GraphDb::new(
            Server::new(&args.server).with_token(db.server().token().unwrap_or_default()),
            &args.database,
        );
        let first_id = db.info()?.max_vertex_id + 1_000_000;
        let start = vertices[0];
        if modes.contains(&Mode::Stage2) {
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
        }
        if modes.contains(&Mode::Stage1Procedure) {
            let stage1 = || {
                db.bfs_stage1(start, dir, None)
                    .map(drop)
                    .map_err(Into::into)
            };
            let first = first_id + 4 * args.writes as u64;
            contention.push(contention::run(
                &writer,
                "Stage-1 full BFS loop",
                first,
                args.stage1_writes,
                stage1,
            )?);
        }
    }
    Ok(Stdb {
        load,
        results,
        contention,
    })
}

/// What the peer part of a run measured.
struct Peers {
    loads: Vec<SystemLoad>,
    descriptions: Vec<String>,
}

/// Every selected peer: connect, load (neo4j and neo4j-apoc share one store, loaded once),
/// verify counts, and run every workload with the same inputs as Stage 2; rows are appended
/// to `results` with the system as their mode.
fn run_peers(args: &Args, inputs: &Inputs, results: &mut Vec<Summary>) -> anyhow::Result<Peers> {
    let mut out = Peers {
        loads: Vec::new(),
        descriptions: Vec::new(),
    };
    let mut neo4j_load: Option<Load> = None;
    for system in args.systems.iter().filter(|s| model::is_peer(s)) {
        let mut peer: Box<dyn Peer> = match system.as_str() {
            "postgres" => Box::new(Postgres::connect(&args.postgres)?),
            _ => Box::new(Neo4j::connect(&args.neo4j, system == "neo4j-apoc")?),
        };
        let description = peer.describe()?;
        println!("{system}: {description}");
        out.descriptions.push(format!("{system}: {description}"));
        let shared = system.starts_with("neo4j").then_some(&mut neo4j_load);
        let load = match shared {
            Some(Some(load)) => Some(load.clone()),
            _ if args.skip_load => {
                verify_peer_counts(peer.as_mut(), inputs)?;
                None
            }
            shared => {
                let load = peer_bench::load(peer.as_mut(), inputs.arcs, inputs.reference)?;
                if let Some(slot) = shared {
                    *slot = Some(load.clone());
                }
                Some(load)
            }
        };
        if let Some(load) = load {
            out.loads.push(SystemLoad {
                system: system.clone(),
                load,
            });
        }
        let run = PeerRun {
            reference: inputs.reference,
            dir: inputs.dir,
            depth: args.depth,
        };
        for &workload in &args.workloads {
            let n = if workload == Workload::BfsFull {
                args.bfs_runs
            } else {
                args.runs
            };
            let (v, p) = (
                &inputs.vertices[..n.min(inputs.vertices.len())],
                &inputs.pairs[..n.min(inputs.pairs.len())],
            );
            let t = Instant::now();
            let samples = run.run(peer.as_mut(), workload, args.warmup, v, p)?;
            results.push(summarize(workload, system, &samples, t));
        }
    }
    Ok(out)
}

/// With `--skip-load`: the peer must already hold exactly the dataset.
fn verify_peer_counts(peer: &mut dyn Peer, inputs: &Inputs) -> anyhow::Result<()> {
    let want = (
        inputs.reference.vertex_count() as u64,
        inputs.arcs.len() as u64,
    );
    let got = peer.counts()?;
    ensure!(
        got == want,
        "{} holds {} vertices / {} edges, the dataset has {} / {} (drop --skip-load)",
        peer.system(),
        got.0,
        got.1,
        want.0,
        want.1
    );
    Ok(())
}

/// The benchmark's summary row, printed as it completes.
fn summarize(workload: Workload, mode: &str, samples: &[Sample], started: Instant) -> Summary {
    let s = Summary::of(workload.as_str(), mode, samples);
    println!(
        "{workload:<9} {mode:<19} {} runs verified: p50 {}, p99 {}, longest tx {} ({:.1} s)",
        s.e2e.count,
        fmt_us(s.e2e.p50),
        fmt_us(s.e2e.p99),
        if s.max_hold.count > 0 {
            format!(
                "{}, {} of {} over 5 ms",
                fmt_us(s.worst_hold_us as f64),
                s.slow_transactions,
                s.transactions
            )
        } else {
            "–".into()
        },
        started.elapsed().as_secs_f64()
    );
    s
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
                samples.push(Sample {
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
fn verify_counts(db: &GraphDb, arcs: usize, reference: &ReferenceGraph) -> anyhow::Result<()> {
    let info = db.info()?;
    ensure!(
        info.edges == arcs as u64 && info.vertices == reference.vertex_count() as u64,
        "the server holds {} vertices / {} edges, the dataset has {} / {} (load it, or drop --skip-load)",
        info.vertices,
        info.edges,
        reference.vertex_count(),
        arcs
    );
    println!(
        "verified: the server holds {} vertices and {} edges",
        info.vertices, info.edges
    );
    Ok(())
}

fn environment(args: &Args, command: String, dir: Direction, edges: &EdgeList) -> Environment {
    let summary = edges.summary();
    let stdb_used = args.systems.iter().any(|s| !model::is_peer(s));
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
        server_url: if stdb_used {
            args.server.clone()
        } else {
            "-".into()
        },
        server_kind: if stdb_used {
            args.server_kind.clone()
        } else {
            "none (peers only)".into()
        },
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_gib: memory_kib / (1024.0 * 1024.0),
        date_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    }
}

/// The command line as the report records it: the `--token` value (a secret that would sign
/// requests as its identity) is replaced by `<token>`.
fn recorded_command(args: impl IntoIterator<Item = String>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut hide_next = false;
    for arg in args {
        if std::mem::take(&mut hide_next) {
            out.push("<token>".into());
        } else if arg.starts_with("--token=") {
            out.push("--token=<token>".into());
        } else {
            hide_next = arg == "--token";
            out.push(arg);
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::recorded_command;

    #[test]
    fn recorded_commands_hide_the_token() {
        let args = [
            "graph-bench",
            "--token",
            "secret",
            "--runs",
            "3",
            "--token=other",
        ];
        assert_eq!(
            recorded_command(args.map(String::from)),
            "graph-bench --token <token> --runs 3 --token=<token>"
        );
    }
}

//! `graph-bench`: loads a graph into the SpacetimeDB graph module (and into peer systems), runs
//! verified workloads on every selected system with the same inputs, measures writers under
//! traversal load, and reports.

use anyhow::{Context, bail};
use clap::Parser;
use graph_bench::datasets::{self, DatasetSpec, with_random_labels};
use graph_bench::live::{self, Calls, Keys};
use graph_bench::load::{self, Stores};
use graph_bench::measure;
use graph_bench::report::markdown::{self, fmt_us};
use graph_bench::report::model::{self, Contention, Environment, Report, Sample, Summary};
use graph_bench::report::write::write;
use graph_bench::system::{Answer, ArcAttrs, Query, Reply, System};
use graph_bench::systems::falkordb::{self, FalkorDb};
use graph_bench::systems::kuzu::Kuzu;
use graph_bench::systems::native::{self, Native};
use graph_bench::systems::neo4j::Neo4j;
use graph_bench::systems::postgres::Postgres;
use graph_bench::systems::raw_ws::{self, RawWs};
use graph_bench::systems::stdb::{self, SpacetimeDb};
use graph_bench::verify::Answers;
use graph_bench::workloads::Workload;
use graph_bench::{contention, mixed, under_writes};
use graph_client::edgelist::{Format, Summary as DatasetSummary};
use graph_client::graph::{Direction, GraphDb, LoadPlan, Mode, TransportKind, TxOptions};
use graph_client::server::Server;
use graph_client::ws::Drive;
use graph_reference::{LabelledGraph, ReferenceGraph};
use rand::{Rng, SeedableRng};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// SpacetimeDB server (the embedded graph-host or an official `spacetime start`).
    #[arg(
        long,
        env = "GRAPH_SERVER",
        default_value = "http://127.0.0.1:3000",
        value_parser = graph_client::server::server_url
    )]
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
    /// fb, dblp, lj, ring:N, grid:N (an N × N grid with random travel times 1..=100) or
    /// file:PATH (a SNAP or CSV edge list, optionally .gz).
    #[arg(long, default_value = "dblp")]
    dataset: DatasetSpec,
    /// Give every edge one of K labels `l0` .. `l{K-1}` (seeded; weights are kept), as the
    /// bfs-labels and bfs-labels-all workloads need: their queries name those labels. Labels a
    /// file gives are replaced.
    #[arg(long)]
    random_labels: Option<u32>,
    /// Before measuring each system, run one unmeasured full BFS: every system gets the same
    /// warm-up (caches, buffer pools). For SpacetimeDB it builds the module's in-memory
    /// snapshot in the module instance that runs it, so that the queries measured after it run
    /// on the snapshot (those of an instance the engine starts later build their own when they
    /// have paid for one; the report counts the answers from a snapshot). `--warm-snapshot`
    /// is its former name, from when only SpacetimeDB was warmed.
    #[arg(long, alias = "warm-snapshot")]
    warm_bfs: bool,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Direction of every query (default: both, as SNAP's undirected graphs need; out for ring).
    #[arg(long)]
    direction: Option<Direction>,
    /// Measured queries per Stage-2 benchmark.
    #[arg(long, default_value_t = 50, value_parser = at_least_one)]
    runs: usize,
    /// Measured queries per Stage-2 full BFS benchmark (each visits the whole component)
    /// [default: 10, or --runs if fewer]
    #[arg(long, value_parser = at_least_one)]
    bfs_runs: Option<usize>,
    /// Measured queries per Stage-1 benchmark (each scans every edge) [default: 5, or --runs if
    /// fewer]
    #[arg(long, value_parser = at_least_one)]
    stage1_runs: Option<usize>,
    /// Unmeasured queries before each benchmark.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Idle time before every query and round-trip call of every system, ms, outside the clock
    /// (0: back to back). An application that calls now and then, rather than in a loop, sees
    /// the figures measured with a pause; SpacetimeDB 2.14's WebSocket differs between the two.
    #[arg(long, default_value_t = 0.0)]
    idle_ms: f64,
    /// Depth of the depth-bounded BFS (at most 1,000,000, the module's bound).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(..=1_000_000))]
    depth: u32,
    /// Comma-separated: neighbors, bfs, bfs-depth, path, bfs-labels (the depth-bounded BFS over
    /// a random half of the labels), bfs-labels-all (naming every label), wpath (least total
    /// weight path between random pairs).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "neighbors,bfs,bfs-depth,path"
    )]
    workloads: Vec<Workload>,
    /// Comma-separated systems: stdb (the Stage-2 procedures over the SDK's WebSocket),
    /// stdb-http (the same over the HTTP call route), stdb-stage1 (full-scan procedures),
    /// stdb-stage1-reducer (full-scan reducers), and the peers neo4j (plain
    /// Cypher), neo4j-apoc (APOC), postgres (recursive CTEs), kuzu (LadybugDB, embedded, in a
    /// worker process) and falkordb (Redis protocol), which `scripts/peers` starts; and native
    /// (the native floor: the module's operator in this process, on an in-memory snapshot).
    /// `--modes` is accepted as another name.
    #[arg(
        long,
        visible_alias = "modes",
        value_delimiter = ',',
        default_value = "stdb,stdb-http,stdb-stage1,stdb-stage1-reducer",
        value_parser = parse_system
    )]
    systems: Vec<String>,
    /// Which thread processes the messages of `stdb`'s SDK connections: `caller`, the thread of
    /// each call while it waits (as PostgreSQL's synchronous client drives its socket), or
    /// `background`, the client's I/O thread, which costs two thread hand-overs per call. The
    /// throughput workload's connections are always `background`: their callbacks send the
    /// next calls.
    #[arg(long, value_enum, default_value_t = WsDrive::Caller)]
    ws_drive: WsDrive,
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
    /// The Kuzu worker command for kuzu: the path `scripts/peers start kuzu` prints.
    #[arg(long, env = "GRAPH_KUZU")]
    kuzu: Option<String>,
    /// redis:// URL of the FalkorDB server for falkordb.
    #[arg(long, env = "GRAPH_FALKORDB", default_value = "redis://127.0.0.1:6379")]
    falkordb: String,
    /// FalkorDB's bulk loader (`falkordb-bulk-insert`), which loads falkordb: the path
    /// `scripts/peers start falkordb --dir D` writes, `D/falkordb/bulk-insert`.
    #[arg(
        long,
        env = "GRAPH_FALKORDB_BULK_INSERT",
        default_value = "falkordb-bulk-insert"
    )]
    falkordb_bulk_insert: std::path::PathBuf,
    /// Edges changed per second (adds and removes) while a full BFS and a shortest path run in
    /// a loop, one phase per rate (see --under-writes-secs).
    #[arg(long, value_delimiter = ',', default_value = "100,1000,10000")]
    write_rates: Vec<u32>,
    /// Seconds each traversal runs at each of --write-rates (0: skip that workload).
    #[arg(long, default_value_t = 5.0)]
    under_writes_secs: f64,
    /// Seconds of the mixed workload (writers and readers at once), once with uniform and once
    /// with Zipf-skewed write targets, on each of --mixed-systems (0: skip it).
    #[arg(long, default_value_t = 10.0)]
    mixed_secs: f64,
    /// Seconds the mixed workload's clients run first, not counted: caches fill (and
    /// SpacetimeDB's instances build their snapshots) before the clock counts, on every system.
    #[arg(long, default_value_t = 5.0)]
    mixed_warmup_secs: f64,
    /// The systems, of those selected, that run the mixed workload (each takes concurrent
    /// clients on connections of their own; kuzu is skipped, with the reason in the report).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "stdb,neo4j,postgres,kuzu,falkordb",
        value_parser = parse_system
    )]
    mixed_systems: Vec<String>,
    /// Writer and reader connections of the mixed workload, and each writer's pause between
    /// writes, ms.
    #[arg(long, default_value_t = 2)]
    mixed_writers: usize,
    #[arg(long, default_value_t = 4)]
    mixed_readers: usize,
    #[arg(long, default_value_t = 1.0)]
    mixed_write_delay_ms: f64,
    /// The SpacetimeDB server's process id, to report its memory during the mixed workload
    /// (scripts/run passes the embedded host's).
    #[arg(long)]
    server_pid: Option<u32>,
    /// The SpacetimeDB server's data directory (graph-host's `--data-dir`), whose size the
    /// mixed workload reports; without it, that size is not measured (nothing to measure for a
    /// host run `--in-memory`).
    #[arg(long)]
    server_data_dir: Option<PathBuf>,
    /// The directory `scripts/peers start` ran the peers in: the mixed workload reports each
    /// peer's memory (from `DIR/PEER.pid`) and its data's size on disk (`DIR/PEER`).
    #[arg(long)]
    peer_dir: Option<PathBuf>,
    /// Single-edge inserts per contention phase (0: skip the contention workload).
    #[arg(long, default_value_t = 200)]
    writes: usize,
    /// Single-edge inserts while Stage-1 traversals run (each may wait for a whole query).
    #[arg(long, default_value_t = 10)]
    stage1_writes: usize,
    /// Single-edge inserts timed until a subscriber on another WebSocket sees them, with
    /// confirmed reads on and off (0: skip).
    #[arg(long, default_value_t = 200)]
    propagation_writes: usize,
    /// Single-edge inserts spread over --connections WebSocket connections, once with uniform
    /// and once with Zipf-skewed source vertices, then as many calls of the empty reducer (the
    /// ceiling those inserts have on the machine), for each --in-flight value (0: skip).
    #[arg(long, default_value_t = 20_000)]
    throughput_inserts: usize,
    /// Connections of the throughput workload.
    #[arg(long, default_value_t = 50)]
    connections: usize,
    /// Calls each connection of the throughput workload keeps in flight, comma-separated: one
    /// phase per value (1: each call waits for the previous answer).
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    in_flight: Vec<usize>,
    /// Work units per transaction for Stage-2 procedures (0: the module's default).
    #[arg(long, default_value_t = 0)]
    tx_budget: u32,
    /// Longest time between yields for Stage-2 procedures, µs (0: the module's default).
    #[arg(long, default_value_t = 0)]
    yield_every_us: u32,
    /// Calls of the empty procedure and the empty reducer, to measure the round-trip floor
    /// over each SpacetimeDB transport measured and, as `stdb-ws-raw`, over the WebSocket
    /// without the SDK (0: skip).
    #[arg(long, default_value_t = 1000)]
    roundtrip_calls: usize,
    /// The graph is already loaded: skip loading (counts are still verified).
    #[arg(long)]
    skip_load: bool,
    /// SpacetimeDB's load calls out at once over the WebSocket (calls of 200,000 edges). The
    /// load runs alone, so by default the next call is already at the server when one commits;
    /// 1 waits for each answer, as `graph load` does by default (see `LoadPlan::in_flight`).
    #[arg(long, default_value_t = 2)]
    load_in_flight: usize,
    /// Load SpacetimeDB keeping every vertex row exact after each call, as a load into a
    /// graph that is not empty does, instead of a bulk load (edges first, vertex rows at the
    /// end; see `LoadPlan::bulk`): for comparing the two.
    #[arg(long)]
    no_bulk_load: bool,
    /// Directory for the Markdown and JSON reports.
    #[arg(long, default_value = "results")]
    out: PathBuf,
}

/// The summary of one round-trip floor's `calls`, printed as it is measured.
fn floor_summary(workload: &str, system: &str, calls: &[Sample]) -> Summary {
    let mode = model::mode_of(system).unwrap_or(system);
    let s = Summary::of(workload, system, mode, calls);
    println!(
        "{workload} ({system}): {} calls, p50 {}, p99 {}",
        s.e2e.count,
        fmt_us(s.e2e.p50),
        fmt_us(s.e2e.p99)
    );
    s
}

/// A count of measured queries: a benchmark of none would report figures of nothing.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("at least 1 query is measured".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_system(s: &str) -> Result<String, String> {
    model::mode_of(s).map(|_| s.to_string()).ok_or_else(|| {
        let names: Vec<&str> = model::SYSTEMS.iter().map(|(s, _)| *s).collect();
        format!("system `{s}`: expected one of {}", names.join(", "))
    })
}

impl Args {
    /// Measured full BFS queries: as given, else 10 or `--runs` if fewer.
    fn bfs_runs(&self) -> usize {
        self.bfs_runs.unwrap_or(self.runs.min(10))
    }

    /// Measured Stage-1 queries: as given, else 5 or `--runs` if fewer.
    fn stage1_runs(&self) -> usize {
        self.stage1_runs.unwrap_or(self.runs.min(5))
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Every benchmark asks about the first of the `--runs` sampled vertices and pairs.
    let full_bfs = args.workloads.contains(&Workload::BfsFull);
    let stage1 = args.systems.iter().any(|s| s.starts_with("stdb-stage1"));
    for (flag, n, used) in [
        ("--bfs-runs", args.bfs_runs(), full_bfs),
        ("--stage1-runs", args.stage1_runs(), stage1),
    ] {
        anyhow::ensure!(
            !used || n <= args.runs,
            "{flag} {n} is more than --runs {}: the benchmarks sample --runs vertices",
            args.runs
        );
    }
    let command = recorded_command(std::env::args());
    let dir = args.direction.unwrap_or(match args.dataset {
        DatasetSpec::Ring(_) => Direction::Out,
        _ => Direction::Both,
    });

    let t = Instant::now();
    let mut edges = args
        .dataset
        .load(args.seed)
        .context("building the dataset")?;
    if let Some(k) = args.random_labels {
        anyhow::ensure!((1..=64).contains(&k), "--random-labels takes 1 to 64");
        edges = with_random_labels(&edges, k, args.seed);
    }
    if let Some(w) = args.workloads.iter().find(|w| w.needs_labels())
        && args.random_labels.is_none()
    {
        bail!(
            "the {w} workload needs --random-labels K: its queries name the labels l0 .. l{{K-1}} \
             it gives (a file's own labels are replaced)"
        );
    }
    anyhow::ensure!(
        !edges.is_empty(),
        "the dataset {} has no edges: nothing to load or to query",
        args.dataset
    );
    let reference = ReferenceGraph::new(edges.iter());
    // What every system must end up holding: the distinct arcs in (src, dst) order, as
    // `graph load` sends them (`EdgeList::sorted`), with their labels and weights; the dataset's
    // summary counts those (a repeated row is one edge). The dataset itself is dropped once
    // they are taken from it: on the LiveJournal-sized graph every copy of its 34.7M edges is
    // half a gigabyte that the peers measured after need.
    let (arcs, attrs, summary) = {
        let sorted = edges.sorted();
        drop(edges);
        // As `graph load` does: the edge and its lines named, before anything is loaded.
        if let DatasetSpec::File(path) = &args.dataset
            && let Some(conflict) = sorted.conflict_error(path, Format::from_path(path))
        {
            bail!("{conflict}");
        }
        let summary = sorted.summary();
        let arcs: Vec<(u64, u64)> = sorted.iter().collect();
        let attrs = ArcAttrs {
            label_names: sorted.label_names,
            labels: sorted.labels,
            weights: sorted.weights,
        };
        (arcs, attrs, summary)
    };
    println!(
        "dataset {}: {} vertices, {} edges, max degree {}, mean degree {:.2} ({:.1} s)",
        args.dataset,
        summary.vertices,
        summary.edges,
        summary.max_degree,
        summary.mean_degree,
        t.elapsed().as_secs_f64()
    );
    anyhow::ensure!(
        arcs.windows(2).all(|w| w[0] != w[1]),
        "the dataset gives an edge two labels or weights"
    );
    // The labelled reference (label id = index into `label_names`, so `l{i}` is `i + 1`), for
    // the workloads that filter by label or weigh paths, and only for them: it keeps every arc
    // in a B-tree (1.3 GB on the LiveJournal-sized graph).
    let labelled = args
        .workloads
        .iter()
        .any(|w| w.needs_labelled_reference())
        .then(|| {
            LabelledGraph::new(
                reference.vertices().iter().copied(),
                arcs.iter()
                    .enumerate()
                    .map(|(i, &(src, dst))| (src, dst, attrs.label_id(i), attrs.weight(i))),
            )
        });
    // The random labels some edge has (`l{n}`, label id n + 1): the ones queries may name.
    let labels_present: Vec<u32> = {
        let mut present: Vec<u32> = attrs
            .labels
            .iter()
            .filter(|&&l| l > 0)
            .map(|l| l - 1)
            .collect();
        present.sort_unstable();
        present.dedup();
        present
    };
    // Where the workloads that write put their new vertices.
    let fresh = datasets::fresh_ids(reference.vertices())?;
    let mut answers = Answers::new(&reference, labelled.as_ref());
    let vertices = reference.sample_vertices(args.runs, args.seed);
    let pairs = reference.sample_pairs(args.runs, dir, args.seed);
    let bfs_root = full_bfs_root(&reference, &vertices, dir);
    // Weighted paths join uniformly random pairs of vertices (on a grid, mostly far apart).
    let random_pairs: Vec<(u64, u64)> = {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(args.seed ^ 0x77);
        let ids = reference.vertices();
        (0..args.runs)
            .map(|_| {
                (
                    ids[rng.gen_range(0..ids.len())],
                    ids[rng.gen_range(0..ids.len())],
                )
            })
            .collect()
    };

    // Every system is reached before anything is measured: a peer that is not running fails
    // the run now rather than after SpacetimeDB's part.
    let tx = TxOptions {
        tx_budget: args.tx_budget,
        yield_every_us: args.yield_every_us,
    };
    let db = if args.systems.iter().any(|s| model::is_stdb(s)) {
        Some(connect_stdb(&args)?)
    } else {
        None
    };
    let mut systems = Vec::new();
    let mut descriptions = Vec::new();
    for name in &args.systems {
        let mut system = connect(name, &args, db.as_ref(), tx)?;
        let description = system.describe()?;
        println!("{name}: {description}");
        descriptions.push(format!("{name}: {description}"));
        systems.push(system);
    }

    let mut stores = Stores::new(reference.vertices(), &arcs, &attrs, args.skip_load);
    let mut results = Vec::new();
    let mut samples = Vec::new();
    let mut skips = Vec::new();
    let mut snapshots_after_stdb = Vec::new();
    // Peers that could not load the dataset: reported, and left out of what follows.
    let mut unloaded = Vec::new();
    for i in 0..systems.len() {
        let system = &mut systems[i];
        let first_of_store = match stores.prepare(system.as_mut()) {
            Ok(first) => first,
            Err(e) if model::is_peer(system.name()) => {
                let failed = format!("{} could not load the dataset: {e:#}", system.name());
                println!("{failed}");
                skips.push(failed);
                unloaded.push(system.name());
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(db) = &db
            && first_of_store
            && system.store() == stdb::STORE
            && args.roundtrip_calls > 0
        {
            let over_http = args.systems.iter().any(|s| s == "stdb-http");
            let transports = std::iter::once(db.clone()).chain(over_http.then(|| db.over_http()));
            let mut raw = None;
            for db in transports {
                for (workload, procedure) in stdb::FLOOR {
                    let system = stdb::floor_system(&db);
                    let calls = stdb::round_trip(
                        system,
                        workload,
                        args.roundtrip_calls,
                        idle(&args),
                        || Ok(db.noop(procedure)?),
                    )?;
                    results.push(floor_summary(workload, system, &calls));
                    samples.extend(calls);
                    // The same calls through the protocol's frames on one socket, without
                    // the SDK's threads, right after the SDK's.
                    if db.transport() == TransportKind::Ws {
                        let raw = match &mut raw {
                            Some(raw) => raw,
                            None => raw.insert(RawWs::connect(&db)?),
                        };
                        let calls = stdb::round_trip(
                            raw_ws::SYSTEM,
                            workload,
                            args.roundtrip_calls,
                            idle(&args),
                            || raw.noop(procedure).map(|()| None),
                        )?;
                        results.push(floor_summary(workload, raw_ws::SYSTEM, &calls));
                        samples.extend(calls);
                    }
                }
            }
        }
        if args.warm_bfs
            && system.supports(Workload::BfsFull)
            && let Some((start, _)) = bfs_root
        {
            let t = Instant::now();
            let query = Query::Bfs {
                start,
                dir,
                max_depth: None,
            };
            match system.answer(&query) {
                Ok(warm) => println!(
                    "{}: warm-up full BFS from {start}, unmeasured: {:.2} s{}",
                    system.name(),
                    t.elapsed().as_secs_f64(),
                    match warm.stats {
                        Some(stats) => format!(", from snapshot: {}", stats.from_snapshot),
                        None => String::new(),
                    }
                ),
                Err(e) if model::is_peer(system.name()) => {
                    println!("{}: warm-up full BFS failed: {e:#}", system.name())
                }
                Err(e) => return Err(e.context("the warm-up full BFS")),
            }
        }
        for &workload in &args.workloads {
            if !system.supports(workload) {
                let skipped = format!(
                    "{} skips {workload}: {}",
                    system.name(),
                    system.skip_reason(workload)
                );
                println!("{skipped}");
                skips.push(skipped);
                continue;
            }
            let (warmup, n) = plan(&args, system.name(), workload);
            let pace = measure::Pace {
                warmup,
                idle: idle(&args),
            };
            let pairs = if workload == Workload::WeightedPath {
                &random_pairs
            } else {
                &pairs
            };
            let queries = workload.queries(
                &vertices[..n.min(vertices.len())],
                &pairs[..n.min(pairs.len())],
                dir,
                args.depth,
                &labels_present,
                args.seed,
            );
            answers.prepare(&queries)?;
            let t = Instant::now();
            let measured = measure::benchmark(system.as_mut(), workload, &queries, pace, |q, r| {
                answers.verify(q, r)
            });
            // A peer that cannot answer (an engine error) or answers wrongly is reported, not
            // fatal: the report says which. SpacetimeDB or the native floor (the module's
            // operator) failing either way fails the run.
            let measured = measured.map_err(|e| {
                if args.skip_load && e.is::<measure::WrongAnswer>() {
                    e.context(
                        "--skip-load: this run did not load the store, whose counts match the \
                         dataset but whose edges may not (another --seed, labels or weights); \
                         drop --skip-load to load it",
                    )
                } else {
                    e
                }
            });
            let measured = match measured {
                Err(e) if model::is_peer(system.name()) && e.is::<measure::WrongAnswer>() => {
                    let failed = format!("{e:#}");
                    println!("{failed}");
                    skips.push(failed);
                    continue;
                }
                Err(e) if model::is_peer(system.name()) && e.is::<measure::NoAnswer>() => {
                    let failed = format!("{} fails {workload}: {e}", system.name());
                    println!("{failed}");
                    skips.push(failed);
                    continue;
                }
                other => other?,
            };
            results.push(summarize(system.name(), workload, &measured, t));
            samples.extend(measured);
        }
        if let (Some(db), true) = (&db, model::is_stdb(systems[i].name())) {
            // Read now as well as at the end: an instance idle for 2 minutes (while the peers
            // are measured) no longer lists its snapshot.
            snapshots_after_stdb = snapshot_memory(db)?;
        }
        if done_with_store(&args, &systems, i) {
            let system = &mut systems[i];
            system
                .release()
                .with_context(|| format!("releasing {}'s store", system.name()))?;
            println!("{}: measured; its store released", system.store());
        }
    }
    let reach = |reach: u64| format!("reaching {reach} of {} vertices", reference.vertex_count());
    let contention = match (&db, bfs_root) {
        (Some(db), Some((start, reached))) if args.writes > 0 => {
            let traversal = Query::Bfs {
                start,
                dir,
                max_depth: None,
            };
            answers.prepare(std::slice::from_ref(&traversal))?;
            let described = format!("from {start}, {}", reach(reached));
            let (contention, calls) =
                writers_vs_traversals(&args, db, tx, fresh, traversal, &described, |q, r| {
                    answers.verify(q, r)
                })?;
            samples.extend(calls);
            contention
        }
        _ => Vec::new(),
    };

    let joined = pairs.iter().find_map(|&(source, target)| {
        let hops = reference.distance(source, target, dir, None)??;
        Some((source, target, hops))
    });
    let under_writes = match (&db, bfs_root, joined) {
        (Some(db), Some((start, reached)), Some((source, target, hops)))
            if args.under_writes_secs > 0.0 =>
        {
            let bfs = Query::Bfs {
                start,
                dir,
                max_depth: None,
            };
            let path = Query::ShortestPath {
                source,
                target,
                dir,
            };
            let traversals = [
                (format!("{bfs}, {}", reach(reached)), bfs),
                (format!("{path}, {hops} hops"), path),
            ];
            answers.prepare(traversals.iter().map(|(_, q)| q))?;
            let (under_writes, calls) =
                traversals_under_writes(&args, db, tx, fresh, &traversals, |q, r| {
                    answers.verify(q, r)
                })?;
            samples.extend(calls);
            under_writes
        }
        _ => Vec::new(),
    };

    let mut mixed = Vec::new();
    if args.mixed_secs > 0.0 && !vertices.is_empty() {
        let pairs = reference.sample_pairs(args.runs.max(10), Direction::Out, args.seed);
        let first_id = fresh + 2_000_000_000;
        for system in &mut systems {
            if !args.mixed_systems.iter().any(|s| s == system.name())
                || unloaded.contains(&system.name())
            {
                continue;
            }
            let (server_pid, data_dir) = server_process(&args, system.store());
            for (i, keys) in [Keys::Uniform, Keys::Zipf(1.1)].into_iter().enumerate() {
                let spec = mixed::MixedSpec {
                    warmup: Duration::from_secs_f64(args.mixed_warmup_secs),
                    duration: Duration::from_secs_f64(args.mixed_secs),
                    writers: args.mixed_writers,
                    readers: args.mixed_readers,
                    write_delay: Duration::from_secs_f64(args.mixed_write_delay_ms / 1e3),
                    keys,
                    first_id: first_id + i as u64 * 1_000_000_000,
                    server_pid,
                    data_dir: data_dir.clone(),
                    seed: args.seed,
                };
                let outcome = mixed::run(system.as_mut(), &reference, &vertices, &pairs, &spec);
                let Some((m, calls)) = (match outcome {
                    // As in the benchmarks: a peer that fails or answers wrong is listed as
                    // such and the run goes on; SpacetimeDB's failure ends it.
                    Err(e) if model::is_peer(system.name()) => {
                        let failed = format!(
                            "{} fails the mixed workload ({} keys): {e:#}",
                            system.name(),
                            keys.name()
                        );
                        println!("{failed}");
                        skips.push(failed);
                        break;
                    }
                    other => other?,
                }) else {
                    let skipped = format!(
                        "{} skips the mixed workload: the benchmark reaches it through one \
                         client (its worker process, on one pipe)",
                        system.name()
                    );
                    println!("{skipped}");
                    skips.push(skipped);
                    break;
                };
                println!(
                    "mixed workload on {}, {} keys: {} writes acknowledged (warm-up included) and accounted for",
                    m.system, m.keys, m.acked_writes
                );
                mixed.push(m);
                samples.extend(calls);
            }
        }
    }

    let snapshots = match &db {
        Some(db) => match snapshot_memory(db)? {
            none if none.is_empty() => snapshots_after_stdb,
            held => held,
        },
        None => Vec::new(),
    };

    let (propagation, throughput) = match &db {
        Some(db) => {
            let (propagation, throughput, calls) = live_workloads(&args, db, fresh)?;
            samples.extend(calls);
            (propagation, throughput)
        }
        None => (Vec::new(), Vec::new()),
    };

    let report = Report {
        environment: environment(&args, command, dir, summary, answers.pair_mix(&pairs, dir)),
        loads: stores.into_loads(),
        systems: descriptions.into_iter().chain(skips).collect(),
        results,
        contention,
        propagation,
        throughput,
        under_writes,
        snapshots,
        mixed,
    };
    println!(
        "\n{}\n{}",
        markdown::heading(&report),
        markdown::table(&report)
    );
    for path in write(&report, &samples, &args.out)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Whether the run asks nothing more of `systems[i]`'s store once `systems[i]` is measured: no
/// later system reads it, the mixed workload does not run on it, and it is not SpacetimeDB's
/// (the contention, under-writes and live workloads at the end use that).
fn done_with_store(args: &Args, systems: &[Box<dyn System>], i: usize) -> bool {
    let store = systems[i].store();
    let mixed = args.mixed_secs > 0.0
        && systems
            .iter()
            .filter(|s| s.store() == store)
            .any(|s| args.mixed_systems.iter().any(|m| m == s.name()));
    store != stdb::STORE && !mixed && load::last_reader(systems, i)
}

/// The SpacetimeDB server's database over the WebSocket, with the token of `--token` or a new
/// identity, the module published first with `--publish` (clearing its data).
fn connect_stdb(args: &Args) -> anyhow::Result<GraphDb> {
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
        server
            .publish(&args.database, bytes, true)
            .with_context(|| {
                format!(
                    "publishing to `{}` (a database another identity owns is refused: pass its \
                     owner's --token, or choose another --database)",
                    args.database
                )
            })?;
        println!(
            "published {} as `{}` (data cleared)",
            wasm.display(),
            args.database
        );
    }
    let drive = match args.ws_drive {
        WsDrive::Caller => Drive::Caller,
        WsDrive::Background => Drive::Background,
    };
    Ok(GraphDb::websocket(server, &args.database, None).with_drive(drive))
}

/// `--ws-drive`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum WsDrive {
    Caller,
    Background,
}

/// The system `name` (one of `model::SYSTEMS`), connected; `db` is SpacetimeDB's database.
fn connect(
    name: &str,
    args: &Args,
    db: Option<&GraphDb>,
    tx: TxOptions,
) -> anyhow::Result<Box<dyn System>> {
    let plan = LoadPlan {
        in_flight: args.load_in_flight,
        bulk: !args.no_bulk_load,
        ..LoadPlan::default()
    };
    let stdb = |db: GraphDb, mode| -> anyhow::Result<Box<dyn System>> {
        Ok(Box::new(
            SpacetimeDb::new(db, mode, tx, &args.server_kind).with_load_plan(plan),
        ))
    };
    let db = || db.context("SpacetimeDB is not connected");
    match name {
        "stdb" => stdb(db()?.clone(), Mode::Stage2),
        "stdb-http" => stdb(db()?.over_http(), Mode::Stage2),
        "stdb-stage1" => stdb(db()?.clone(), Mode::Stage1Procedure),
        "stdb-stage1-reducer" => stdb(db()?.clone(), Mode::Stage1Reducer),
        "neo4j" => Ok(Box::new(Neo4j::connect(&args.neo4j, false)?)),
        "neo4j-apoc" => Ok(Box::new(Neo4j::connect(&args.neo4j, true)?)),
        "postgres" => Ok(Box::new(Postgres::connect(&args.postgres)?)),
        "kuzu" => {
            let worker = args.kuzu.as_deref().context(
                "kuzu needs --kuzu WORKER: the command `scripts/peers start kuzu --port 0 --dir D` prints",
            )?;
            Ok(Box::new(Kuzu::connect(worker)?))
        }
        "falkordb" => Ok(Box::new(FalkorDb::connect(
            &args.falkordb,
            &args.falkordb_bulk_insert,
        )?)),
        native::NAME => Ok(Box::new(Native::new())),
        _ => bail!("no system `{name}`"),
    }
}

/// The server process and data directory of `store`, where known: SpacetimeDB's process from
/// `--server-pid`; a peer's pid file and data directory in `--peer-dir`.
fn server_process(args: &Args, store: &str) -> (Option<u32>, Option<PathBuf>) {
    if store == stdb::STORE {
        return (args.server_pid, args.server_data_dir.clone());
    }
    let Some(dir) = &args.peer_dir else {
        return (None, None);
    };
    let pid = std::fs::read_to_string(dir.join(format!("{store}.pid")))
        .ok()
        .and_then(|p| p.trim().parse().ok());
    // FalkorDB runs without persistence (`scripts/peers`: no RDB, no AOF): its directory holds
    // a log and a script, not data, and the report says "in memory".
    let data = (store != falkordb::STORE).then(|| dir.join(store));
    (pid, data)
}

/// The pause before every measured call (`--idle-ms`).
fn idle(args: &Args) -> Duration {
    Duration::from_secs_f64(args.idle_ms.max(0.0) / 1e3)
}

/// Warm-up and measured calls of `workload` on `system`. The Stage-1 baselines scan every edge
/// per query: `--stage1-runs` and no warm-up. Otherwise `--warmup`, and `--runs`, or
/// `--bfs-runs` for a full BFS, which visits a whole component.
fn plan(args: &Args, system: &str, workload: Workload) -> (usize, usize) {
    match system {
        "stdb-stage1" | "stdb-stage1-reducer" => (0, args.stage1_runs()),
        _ if workload == Workload::BfsFull => (args.warmup, args.bfs_runs()),
        _ => (args.warmup, args.runs),
    }
}

/// The benchmark's summary row, printed as it completes.
fn summarize(system: &str, workload: Workload, samples: &[Sample], started: Instant) -> Summary {
    let mode = model::mode_of(system).unwrap_or(system);
    let s = Summary::of(workload.as_str(), system, mode, samples);
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

/// The vertex the full BFS of the warm-up and of the concurrent phases starts from, and how many
/// vertices it reaches: of the first eight sampled, the first that reaches half the graph, else
/// the one that reaches most. A random vertex of a graph of many small parts (or of a directed
/// one) may reach a handful, and a "full BFS" loop from it would measure next to nothing.
fn full_bfs_root(
    reference: &ReferenceGraph,
    vertices: &[u64],
    dir: Direction,
) -> Option<(u64, u64)> {
    let mut best: Option<(u64, u64)> = None;
    for &v in vertices.iter().take(8) {
        let reached: u64 = reference.bfs_levels(v, dir, None)?.iter().sum();
        if best.is_none_or(|(_, most)| reached > most) {
            best = Some((v, reached));
        }
        if 2 * reached >= reference.vertex_count() as u64 {
            break;
        }
    }
    best
}

/// Single-edge inserts from another client, idle and while `traversal` runs in a loop, in
/// Stage 2 and in Stage 1 (the full-scan procedure), for each of those modes selected. The
/// inserts join fresh vertices, so the traversals' answers do not change.
fn writers_vs_traversals(
    args: &Args,
    db: &GraphDb,
    tx: TxOptions,
    fresh: u64,
    traversal: Query,
    described: &str,
    check: impl Fn(&Query, &Reply) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<(Vec<Contention>, Vec<Sample>)> {
    // A connection of its own: the writes must not queue behind the traversals' calls.
    let writer = db.reconnect();
    let first_id = fresh + 1_000_000;
    let phases = [
        (Mode::Stage2, "Stage-2 full BFS loop", first_id, args.writes),
        (
            Mode::Stage1Procedure,
            "Stage-1 full BFS loop",
            first_id + 4 * args.writes as u64,
            args.stage1_writes,
        ),
    ];
    let (mut out, mut samples) = (Vec::new(), Vec::new());
    for (mode, loop_name, first_id, writes) in phases {
        let label = format!("{loop_name} {described}");
        let label = label.as_str();
        let mut looping = SpacetimeDb::new(db.clone(), mode, tx, &args.server_kind);
        if !args.systems.iter().any(|s| s == looping.name()) {
            continue;
        }
        let (traversal, check) = (&traversal, &check);
        let traverse = move || looping.answer(traversal);
        let checked = move |answer: &Answer| {
            check(traversal, &answer.reply).with_context(|| format!("{label}: {traversal}"))
        };
        let (contention, calls) =
            contention::run(&writer, label, first_id, writes, traverse, checked)?;
        out.push(contention);
        samples.extend(calls);
    }
    Ok((out, samples))
}

/// Each traversal in a loop while a writer changes edges at each of `--write-rates` (see
/// `under_writes`), Stage 2 over the WebSocket.
fn traversals_under_writes(
    args: &Args,
    db: &GraphDb,
    tx: TxOptions,
    fresh: u64,
    traversals: &[(String, Query)],
    check: impl Fn(&Query, &Reply) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<(Vec<model::UnderWrites>, Vec<Sample>)> {
    let writer = db.reconnect();
    let mut system = SpacetimeDb::new(db.clone(), Mode::Stage2, tx, &args.server_kind);
    let mut first_id = fresh + 500_000_000;
    let duration = Duration::from_secs_f64(args.under_writes_secs);
    let (mut out, mut samples) = (Vec::new(), Vec::new());
    for &rate in &args.write_rates {
        for traversal in traversals {
            let (w, calls) = under_writes::run(
                &mut system,
                traversal,
                &writer,
                rate,
                duration,
                first_id,
                &check,
            )?;
            first_id += 10_000_000;
            println!(
                "{} while writing {} edges/s: p50 {}, p99 {}; {} of {} caught up (p50 {} changes in {}); writer p99 {}",
                w.traversal,
                rate,
                fmt_us(w.latency.p50),
                fmt_us(w.latency.p99),
                w.from_snapshot,
                w.latency.count,
                w.changes_applied.p50,
                fmt_us(w.catch_up_us.p50),
                fmt_us(w.writer.p99)
            );
            out.push(w);
            samples.extend(calls);
        }
    }
    Ok((out, samples))
}

/// Write → subscriber latency and concurrent insert throughput over the WebSocket, on fresh
/// vertices (so that nothing measured before changes); with every call as a raw sample.
fn live_workloads(
    args: &Args,
    db: &GraphDb,
    fresh: u64,
) -> anyhow::Result<(Vec<model::Propagation>, Vec<model::Throughput>, Vec<Sample>)> {
    let base = fresh + 100_000_000;
    let mut propagation = Vec::new();
    let mut samples = Vec::new();
    if args.propagation_writes > 0 {
        for (i, confirmed) in [true, false].into_iter().enumerate() {
            let first_id = base + i as u64 * 10_000_000;
            let (p, calls) =
                live::propagation(db, confirmed, first_id, args.propagation_writes, idle(args))?;
            samples.extend(calls);
            println!(
                "write → subscriber, confirmed reads {}: p50 {}, p99 {}",
                if confirmed { "on" } else { "off" },
                fmt_us(p.latency.p50),
                fmt_us(p.latency.p99)
            );
            propagation.push(p);
        }
    }
    let mut throughput = Vec::new();
    if args.throughput_inserts > 0 {
        // Zipf s=1.3 over 10,000 sources puts ~80% of inserts on the hottest 1%: the suite's
        // high-contention setting. The empty reducer's phase is the ceiling those inserts have
        // on this machine: the same calls, with nothing for the module to do.
        let phases = args.in_flight.iter().flat_map(|&depth| {
            [
                Calls::Inserts(Keys::Uniform),
                Calls::Inserts(Keys::Zipf(1.3)),
                Calls::Empty,
            ]
            .map(|calls| (depth, calls))
        });
        for (i, (in_flight, calls)) in phases.enumerate() {
            let first_id = base + (2 + i as u64) * 10_000_000;
            let (t, made) = live::throughput(
                db,
                args.connections,
                in_flight,
                args.throughput_inserts,
                calls,
                10_000,
                first_id,
                args.seed,
            )?;
            samples.extend(made);
            match calls {
                Calls::Inserts(_) => println!(
                    "{} connections, {} in flight each, {} sources ({:.0}% on the hottest 1%): {:.0} inserts/s, {} counted",
                    t.connections,
                    t.in_flight,
                    t.keys,
                    t.hot_share * 100.0,
                    t.per_second,
                    t.inserts
                ),
                Calls::Empty => println!(
                    "{} connections, {} in flight each, the empty reducer: {:.0} calls/s",
                    t.connections, t.in_flight, t.per_second
                ),
            }
            throughput.push(t);
        }
    }
    Ok((propagation, throughput, samples))
}

fn environment(
    args: &Args,
    command: String,
    dir: Direction,
    summary: DatasetSummary,
    path_pairs: Option<model::PairMix>,
) -> Environment {
    let stdb_used = args.systems.iter().any(|s| model::is_stdb(s));
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
        idle_ms: Some(args.idle_ms),
        path_pairs,
    }
}

/// The command line as the report records it, quoted so that it pastes back into a shell: the
/// `--token` value (a secret that would sign requests as its identity) is replaced by
/// `"$GRAPH_TOKEN"`, which the shell fills in from the environment.
const TOKEN_PLACEHOLDER: &str = "\"$GRAPH_TOKEN\"";

fn recorded_command(args: impl IntoIterator<Item = String>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut hide_next = false;
    for arg in args {
        if std::mem::take(&mut hide_next) {
            out.push(TOKEN_PLACEHOLDER.into());
        } else if arg.starts_with("--token=") {
            out.push(format!("--token={TOKEN_PLACEHOLDER}"));
        } else {
            hide_next = arg == "--token";
            // Quoted as a shell needs it to read the argument back (a NUL cannot be passed).
            out.push(shlex::try_quote(&arg).map_or(arg.clone(), |q| q.into_owned()));
        }
    }
    out.join(" ")
}

/// The in-memory snapshots the module's instances report holding (instances idle for 2
/// minutes are not listed).
fn snapshot_memory(
    db: &graph_client::graph::GraphDb,
) -> anyhow::Result<Vec<model::SnapshotMemory>> {
    Ok(db
        .graph_info()?
        .snapshots
        .iter()
        .map(|h| model::SnapshotMemory {
            version: h.version,
            edges: h.edges,
            bytes: h.bytes,
            instance_memory_bytes: h.instance_memory_bytes,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{Args, recorded_command};
    use clap::Parser;

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
            r#"graph-bench --token "$GRAPH_TOKEN" --runs 3 --token="$GRAPH_TOKEN""#
        );
    }

    #[test]
    fn recorded_commands_paste_back_into_a_shell() {
        let args = [
            "graph-bench",
            "--postgres",
            "host=h port=5 user='pg'",
            "--runs",
            "3",
        ];
        let recorded = recorded_command(args.map(String::from));
        assert_eq!(
            recorded,
            r#"graph-bench --postgres "host=h port=5 user='pg'" --runs 3"#
        );
        assert_eq!(shlex::split(&recorded).unwrap(), args);
    }

    #[test]
    fn full_bfs_and_stage1_runs_follow_a_smaller_runs() {
        let parse = |args: &[&str]| Args::try_parse_from([&["graph-bench"], args].concat());
        let few = parse(&["--runs", "3"]).unwrap();
        assert_eq!((few.bfs_runs(), few.stage1_runs()), (3, 3));
        let many = parse(&[]).unwrap();
        assert_eq!((many.bfs_runs(), many.stage1_runs()), (10, 5));
        let given = parse(&["--runs", "3", "--bfs-runs", "7"]).unwrap();
        assert_eq!(given.bfs_runs(), 7, "refused later, as given");
        // A depth the module refuses is refused before anything is loaded.
        assert!(parse(&["--depth", "1000001"]).is_err());
        assert!(parse(&["--depth", "1000000"]).is_ok());
    }
}

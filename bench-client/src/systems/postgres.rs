//! PostgreSQL 15 as the relational peer, queried with recursive CTEs: the stand-in for Apache
//! AGE, which also keeps a graph in PostgreSQL tables and runs its traversals as joins.
//!
//! The graph is two tables, `vertex(id)` and `edge(src, dst, label, weight, id)`, with a B-tree
//! on `(src, dst)` for out-arcs and one on `(dst, src)` for in-arcs, so that every hop of a
//! traversal is an index-only scan. Start a server with `scripts/peers start postgres --port P
//! --dir D`.
//!
//! Weighted paths are pgRouting's `pgr_dijkstra` (`scripts/peers install postgres` installs
//! pgRouting; [`Postgres::connect`] creates the extension in the database when the server has
//! it). pgRouting reads the edges through the SQL it is given, builds its graph from them and
//! runs Boost's Dijkstra, on every call: that is how its users call it. `edge.id` is the edge
//! id pgRouting requires. The other workloads do not need pgRouting.

use crate::system::{self, Answer, Reply, System, stored_id, vertex_id};
use crate::workloads::Workload;
use anyhow::{Context, anyhow, bail, ensure};
use graph_client::graph::Direction;
use hashbrown::HashMap;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::{Client, NoTls, Statement};

/// Edges per COPY statement: `progress` is called after each, and one COPY of a few hundred
/// thousand rows costs the same per row as one of all of them.
const LOAD_CHUNK: usize = 200_000;

/// A connection to a PostgreSQL server holding (or about to hold) the graph.
pub struct Postgres {
    client: Client,
    /// How it connected, for [`System::another_client`].
    conn: String,
    /// Statements prepared on this connection, each on first use: planned once, then only
    /// executed, as a client of a real application would.
    statements: HashMap<Query, Statement>,
    /// pgRouting's version in this database, or why it is not there.
    pgrouting: Result<String, String>,
}

/// The queries the peer prepares, the traversals once per direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Query {
    /// How many of `$1` and `$2` are vertices.
    Known,
    NeighborCount(Direction),
    BfsCount(Direction),
    BfsLevels(Direction),
    /// `BfsLevels` over the edges whose label is one of `$3`.
    BfsLevelsLabelled(Direction),
    Path(Direction),
    /// pgRouting's least-weight path from `$1` to `$2`.
    WeightedPath(Direction),
    /// Adds the arc `$1 -> $2`, and the vertex `$1` if it is new.
    AddEdge,
    /// Removes the arc `$1 -> $2`.
    RemoveEdge,
}

impl Query {
    /// The statement's text. `$1` is the start vertex; `$2` the depth bound (`BfsLevels`) or
    /// the target (`Path`).
    fn sql(self) -> String {
        match self {
            Query::Known => "SELECT count(*) FROM vertex WHERE id IN ($1, $2)".to_owned(),
            Query::AddEdge => {
                "WITH v AS (INSERT INTO vertex (id) VALUES ($1) ON CONFLICT DO NOTHING) \
                               INSERT INTO edge (src, dst, weight) VALUES ($1, $2, 1)"
                    .to_owned()
            }
            Query::RemoveEdge => "DELETE FROM edge WHERE src = $1 AND dst = $2".to_owned(),
            Query::NeighborCount(dir) => format!(
                "SELECT (SELECT count(DISTINCT n.v) FROM ({}) n) FROM vertex x WHERE x.id = $1",
                neighbors(dir, "x.id")
            ),
            // `UNION` drops every row already produced, so each vertex enters the work table
            // once, in the iteration of its BFS level: the recursion is a real BFS and ends
            // when a level adds nothing new.
            Query::BfsCount(dir) => format!(
                "WITH RECURSIVE r(v) AS (
                   SELECT id FROM vertex WHERE id = $1
                   UNION
                   SELECT n.v FROM r CROSS JOIN LATERAL ({}) n)
                 SELECT count(*) FROM r",
                neighbors(dir, "r.v")
            ),
            // A row (v, d) says a walk of d hops reaches v. `UNION` cannot drop v at d when
            // it was reached at a smaller d (the rows differ), so iterations repeat vertices,
            // but each holds at most V rows: the query costs at most depth × E, and the BFS
            // level of v is its smallest d.
            Query::BfsLevels(dir) => format!(
                "WITH RECURSIVE r(v, d) AS (
                   SELECT id, 0 FROM vertex WHERE id = $1
                   UNION
                   SELECT n.v, r.d + 1 FROM r CROSS JOIN LATERAL ({}) n WHERE r.d < $2::int)
                 SELECT d, count(*) FROM (SELECT min(d) AS d FROM r GROUP BY v) l
                 GROUP BY d ORDER BY d",
                neighbors(dir, "r.v")
            ),
            // The same over the arcs labelled one of $3: the label is read from the table row
            // (the indexes hold the ends only), so unlike the unfiltered BFS this is not an
            // index-only scan.
            Query::BfsLevelsLabelled(dir) => format!(
                "WITH RECURSIVE r(v, d) AS (
                   SELECT id, 0 FROM vertex WHERE id = $1
                   UNION
                   SELECT n.v, r.d + 1 FROM r CROSS JOIN LATERAL ({}) n WHERE r.d < $2::int)
                 SELECT d, count(*) FROM (SELECT min(d) AS d FROM r GROUP BY v) l
                 GROUP BY d ORDER BY d",
                labelled_neighbors(dir, "r.v")
            ),
            // `reach` is the BFS of `BfsCount`, and PostgreSQL emits a recursive query's rows
            // in breadth-first order (iteration by iteration, as its manual says), so the row
            // numbers of `bfs` (an empty window numbers rows as it reads them) order the
            // vertices by BFS level. (A (v, d) walk as in `BfsLevels`, run until it meets $2,
            // repeats vertices: measured 5-8× slower than this at distance 7+ on DBLP.) A vertex at level L > 0 has a
            // predecessor at level L - 1 and none below, so its predecessor with the lowest
            // number is one level up: `back` walks those from $2 to $1 along a shortest path.
            // CTE rows are computed only as they are read, so the BFS stops once it reaches
            // $2 (`back` reads only rows before it); without a path, the BFS ends when it has
            // reached all it can and `back` is empty. Each step strictly lowers the number,
            // so `back` ends too. A step scans the rows before it, so the walk back costs
            // hops × (vertices ahead of $2): negligible next to the BFS on small-world graphs
            // (DBLP: ≤ 20 hops), quadratic on long rings (2,000 hops on `ring:30000`: 0.6 s).
            Query::Path(dir) => format!(
                "WITH RECURSIVE
                 reach(v) AS (
                   SELECT $1::bigint
                   UNION
                   SELECT n.v FROM reach r CROSS JOIN LATERAL ({}) n),
                 bfs(v, o) AS MATERIALIZED (SELECT v, row_number() OVER () FROM reach),
                 back(v, o) AS (
                   (SELECT v, o FROM bfs WHERE v = $2::bigint LIMIT 1)
                   UNION ALL
                   SELECT p.v, p.o FROM back b CROSS JOIN LATERAL (
                     SELECT s.v, s.o FROM (SELECT v, o FROM bfs LIMIT b.o - 1) s
                     JOIN ({}) n ON n.v = s.v
                     ORDER BY s.o LIMIT 1) p)
                 SELECT array_agg(v ORDER BY o) FROM back",
                neighbors(dir, "r.v"),
                neighbors(dir.reverse(), "b.v")
            ),
            // pgRouting's Dijkstra over every arc: `out` follows the arcs, `in` follows them
            // backwards (the same arcs with their ends swapped), `both` treats each arc as an
            // undirected edge (`directed => false`: an arc and its opposite stay two edges, of
            // their own weights). No `reverse_cost`, so a directed search never walks an arc
            // backwards. A self-loop is an edge from a vertex to itself, which Dijkstra never
            // takes. The rows are the path's vertices in order (`path_seq`), each with the
            // weight from $1 (`agg_cost`), the last one's being the total; no path (or $1 =
            // $2, or an unknown end) gives no row, so a NULL array. pgr_dijkstra rather than
            // pgr_bdDijkstra: on a directed 300 × 300 grid pgRouting 3.4.2's bidirectional
            // search returned a path of weight 14954 where the least weight is 14951 (plain
            // pgr_dijkstra's answer, and the reference's), and it was no faster.
            Query::WeightedPath(dir) => {
                let (ends, directed) = match dir {
                    Direction::Out => ("src AS source, dst AS target", true),
                    Direction::In => ("dst AS source, src AS target", true),
                    Direction::Both => ("src AS source, dst AS target", false),
                };
                format!(
                    "SELECT array_agg(node ORDER BY path_seq), max(agg_cost) FROM pgr_dijkstra(
                       'SELECT id, {ends}, weight AS cost FROM edge',
                       $1::bigint, $2::bigint, directed => {directed})"
                )
            }
        }
    }
}

/// A subquery of the vertices one arc from `of` in `dir`, as column `v`, each from an
/// index-only scan. With `Both` a vertex linked both ways (or a self-loop) comes twice; the
/// callers deduplicate.
fn neighbors(dir: Direction, of: &str) -> String {
    let out = format!("SELECT e.dst AS v FROM edge e WHERE e.src = {of}");
    let inc = format!("SELECT e.src AS v FROM edge e WHERE e.dst = {of}");
    match dir {
        Direction::Out => out,
        Direction::In => inc,
        Direction::Both => format!("{out} UNION ALL {inc}"),
    }
}

/// [`neighbors`] over the arcs whose label is one of `$3` (`text[]`).
fn labelled_neighbors(dir: Direction, of: &str) -> String {
    let out = format!("SELECT e.dst AS v FROM edge e WHERE e.src = {of} AND e.label = ANY($3)");
    let inc = format!("SELECT e.src AS v FROM edge e WHERE e.dst = {of} AND e.label = ANY($3)");
    match dir {
        Direction::Out => out,
        Direction::In => inc,
        Direction::Both => format!("{out} UNION ALL {inc}"),
    }
}

/// pgRouting's version, after `CREATE EXTENSION` if the server has it and the database does
/// not yet; or why it cannot be had.
fn pgrouting(client: &mut Client) -> anyhow::Result<Result<String, String>> {
    let available = client
        .query_opt(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'pgrouting'",
            &[],
        )?
        .is_some();
    if !available {
        return Ok(Err(
            "the server has no pgRouting (run scripts/peers install postgres, \
                       which installs postgresql-15-pgrouting)"
                .into(),
        ));
    }
    if let Err(e) = client.batch_execute("CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE") {
        return Ok(Err(format!("CREATE EXTENSION pgrouting failed: {e}")));
    }
    let version: String = client.query_one("SELECT pgr_version()", &[])?.get(0);
    Ok(Ok(version))
}

/// A `count(*)` (never negative) as a `u64`.
fn count(n: i64) -> anyhow::Result<u64> {
    u64::try_from(n).map_err(|_| anyhow!("negative count {n}"))
}

/// How long one query may run (`statement_timeout`), as FalkorDB's `TIMEOUT`: a query that
/// runs out is reported as failed and the run goes on. Without it, a full BFS of a 100,000-leaf
/// star (whose one `src` value leads the planner's generic plan to a sequential scan per
/// vertex) ran for more than 15 minutes, and the run wrote no report. The load sets none.
const QUERY_TIMEOUT: &str = "300s";

/// Puts the session's queries under [`QUERY_TIMEOUT`].
fn limit_queries(client: &mut Client) -> anyhow::Result<()> {
    client.batch_execute(&format!("SET statement_timeout = '{QUERY_TIMEOUT}'"))?;
    Ok(())
}

impl Postgres {
    /// Connects with a libpq-style string such as `host=127.0.0.1 port=5433 user=postgres
    /// dbname=postgres` (what `scripts/peers start postgres` prints), and creates pgRouting in
    /// the database if the server has it (with PostGIS, which it requires).
    pub fn connect(conn: &str) -> anyhow::Result<Postgres> {
        let mut client = Client::connect(conn, NoTls).with_context(|| {
            format!(
                "connecting to PostgreSQL at `{conn}` (start one with \
                 scripts/peers start postgres --port P --dir D)"
            )
        })?;
        let pgrouting = pgrouting(&mut client)?;
        limit_queries(&mut client)?;
        Ok(Postgres {
            client,
            conn: conn.to_string(),
            statements: HashMap::new(),
            pgrouting,
        })
    }

    /// Whether weighted paths run: pgRouting is in the database.
    pub fn has_pgrouting(&self) -> bool {
        self.pgrouting.is_ok()
    }

    /// The statement for `query`, prepared on first use (the tables must exist by then).
    fn statement(&mut self, query: Query) -> anyhow::Result<Statement> {
        if let Some(statement) = self.statements.get(&query) {
            return Ok(statement.clone());
        }
        let statement = self
            .client
            .prepare(&query.sql())
            .with_context(|| format!("preparing the {query:?} query"))?;
        self.statements.insert(query, statement.clone());
        Ok(statement)
    }
}

impl System for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn store(&self) -> &'static str {
        "postgres"
    }

    fn describe(&mut self) -> anyhow::Result<String> {
        let row = self.client.query_one(
            "SELECT version(), current_setting('fsync'), current_setting('synchronous_commit'),
                    current_setting('shared_buffers'), current_setting('work_mem'),
                    current_setting('jit'), current_setting('statement_timeout')",
            &[],
        )?;
        let pgrouting = match &self.pgrouting {
            Ok(version) => format!("pgRouting {version} (pgr_dijkstra)"),
            Err(_) => "no pgRouting".to_string(),
        };
        Ok(format!(
            "{}; fsync={}, synchronous_commit={}, shared_buffers={}, work_mem={}, jit={}, \
             statement_timeout={}; {pgrouting}",
            row.get::<_, String>(0),
            row.get::<_, String>(1),
            row.get::<_, String>(2),
            row.get::<_, String>(3),
            row.get::<_, String>(4),
            row.get::<_, String>(5),
            row.get::<_, String>(6),
        ))
    }

    /// Recreates the tables bare: `load` adds the keys and indexes after the data, as a bulk
    /// loader does, which builds each B-tree in one sorted pass instead of row by row.
    /// Autovacuum is off for them because `load` vacuums them itself, and a background pass
    /// over a write-once graph would only run during the measurements.
    fn clear(&mut self) -> anyhow::Result<()> {
        self.statements.clear();
        self.client.batch_execute(
            "DROP TABLE IF EXISTS edge, vertex;
             CREATE TABLE vertex (id bigint NOT NULL) WITH (autovacuum_enabled = false);
             CREATE TABLE edge (src bigint NOT NULL, dst bigint NOT NULL, label text,
                                weight real NOT NULL,
                                id bigint GENERATED BY DEFAULT AS IDENTITY)
               WITH (autovacuum_enabled = false);",
        )?;
        Ok(())
    }

    /// Drops the tables (their files, and their pages in the OS cache); the shared buffers
    /// stay, at their configured size.
    fn release(&mut self) -> anyhow::Result<()> {
        self.statements.clear();
        self.client
            .batch_execute("DROP TABLE IF EXISTS edge, vertex")?;
        Ok(())
    }

    /// COPYs the rows in binary, then builds the primary keys `vertex(id)` and
    /// `edge(src, dst)` and the index `edge(dst, src)`, and vacuums: VACUUM marks every page
    /// all-visible, without which an index-only scan still reads the table row by row, and
    /// gathers the planner's statistics. Expects the store cleared (see [`System::clear`]).
    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &system::ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> anyhow::Result<()> {
        let mut tx = self.client.transaction()?;
        tx.batch_execute("SET LOCAL statement_timeout = 0")?;
        let mut copy = BinaryCopyInWriter::new(
            tx.copy_in("COPY vertex (id) FROM STDIN (FORMAT binary)")?,
            &[Type::INT8],
        );
        for &v in vertices {
            copy.write(&[&stored_id(v)])?;
        }
        copy.finish().context("loading the vertices")?;
        let mut loaded = 0;
        for (c, chunk) in edges.chunks(LOAD_CHUNK).enumerate() {
            let mut copy = BinaryCopyInWriter::new(
                tx.copy_in("COPY edge (src, dst, label, weight, id) FROM STDIN (FORMAT binary)")?,
                &[Type::INT8, Type::INT8, Type::TEXT, Type::FLOAT4, Type::INT8],
            );
            for (j, &(src, dst)) in chunk.iter().enumerate() {
                // NULL when the edge has no label; weight 1 when the dataset has none. The id,
                // which pgRouting requires, is the edge's position in the load, from 1.
                let i = c * LOAD_CHUNK + j;
                let label = Some(attrs.label(i)).filter(|l| !l.is_empty());
                let id = i64::try_from(i + 1)?;
                copy.write(&[
                    &stored_id(src),
                    &stored_id(dst),
                    &label,
                    &attrs.weight(i),
                    &id,
                ])?;
            }
            copy.finish().context("loading the edges")?;
            loaded += chunk.len();
            progress(loaded);
        }
        tx.batch_execute(
            "ALTER TABLE vertex ADD PRIMARY KEY (id);
             ALTER TABLE edge ADD PRIMARY KEY (src, dst);
             CREATE INDEX edge_dst_src ON edge (dst, src);
             SELECT setval(pg_get_serial_sequence('edge', 'id'), max(id)) FROM edge;",
        )
        .context("indexing the graph (are the edges distinct and the store cleared?)")?;
        tx.commit()?;
        // VACUUM refuses to run in a transaction, so it is a statement of its own.
        self.client.batch_execute("SET statement_timeout = 0")?;
        let vacuumed = self
            .client
            .batch_execute("VACUUM (FREEZE, ANALYZE) vertex, edge");
        limit_queries(&mut self.client)?;
        vacuumed?;
        Ok(())
    }

    fn counts(&mut self) -> anyhow::Result<(u64, u64)> {
        let row = self.client.query_one(
            "SELECT (SELECT count(*) FROM vertex), (SELECT count(*) FROM edge)",
            &[],
        )?;
        Ok((count(row.get(0))?, count(row.get(1))?))
    }

    /// Label-filtered BFS by recursive CTE; weighted paths by pgRouting, if the database has it.
    fn supports(&self, workload: Workload) -> bool {
        workload != Workload::WeightedPath || self.has_pgrouting()
    }

    fn skip_reason(&self, _: Workload) -> String {
        match &self.pgrouting {
            Ok(_) => "postgres runs every workload".into(),
            Err(why) => format!(
                "weighted paths are pgRouting's pgr_dijkstra (a recursive CTE cannot run \
                 Dijkstra), and {why}"
            ),
        }
    }

    fn answer(&mut self, query: &system::Query) -> anyhow::Result<Answer> {
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
            } => self.bfs_labelled(start, dir, max_depth, &labels.names())?,
            system::Query::WeightedPath {
                source,
                target,
                dir,
            } => self.weighted_path(source, target, dir)?,
        };
        Ok(reply.into())
    }

    fn another_client(&self) -> Option<anyhow::Result<Box<dyn System + Send>>> {
        Some(Postgres::connect(&self.conn).map(|p| Box::new(p) as Box<dyn System + Send>))
    }

    /// One statement, so one transaction: the vertex (if new) and the edge commit together.
    fn add_edge(&mut self, src: u64, dst: u64) -> anyhow::Result<()> {
        let statement = self.statement(Query::AddEdge)?;
        let (src, dst) = (stored_id(src), stored_id(dst));
        let added = self.client.execute(&statement, &[&src, &dst])?;
        ensure!(
            added == 1,
            "PostgreSQL added {added} edges {src} -> {dst}, not one"
        );
        Ok(())
    }

    fn remove_edge(&mut self, src: u64, dst: u64) -> anyhow::Result<()> {
        let statement = self.statement(Query::RemoveEdge)?;
        let (src, dst) = (stored_id(src), stored_id(dst));
        let removed = self.client.execute(&statement, &[&src, &dst])?;
        ensure!(
            removed == 1,
            "PostgreSQL removed {removed} edges {src} -> {dst}, not one"
        );
        Ok(())
    }
}

/// The queries, as prepared statements.
impl Postgres {
    fn neighbor_count(&mut self, v: u64, dir: Direction) -> anyhow::Result<Reply> {
        let v = stored_id(v);
        let statement = self.statement(Query::NeighborCount(dir))?;
        match self.client.query_opt(&statement, &[&v])? {
            Some(row) => Ok(Reply::Count(count(row.get(0))?)),
            None => Ok(Reply::UnknownVertex),
        }
    }

    fn bfs(&mut self, start: u64, dir: Direction, max_depth: Option<u32>) -> anyhow::Result<Reply> {
        let start = stored_id(start);
        match max_depth {
            None => {
                let statement = self.statement(Query::BfsCount(dir))?;
                let reached = count(self.client.query_one(&statement, &[&start])?.get(0))?;
                // The start row comes from `vertex`: none means an unknown start.
                Ok(if reached > 0 {
                    Reply::Reached(reached)
                } else {
                    Reply::UnknownVertex
                })
            }
            Some(depth) => {
                let statement = self.statement(Query::BfsLevels(dir))?;
                let depth = i32::try_from(depth).unwrap_or(i32::MAX);
                let rows = self.client.query(&statement, &[&start, &depth])?;
                let mut levels = Vec::with_capacity(rows.len());
                for (i, row) in rows.iter().enumerate() {
                    // BFS levels are contiguous; a gap would mean a wrong query.
                    let d: i32 = row.get(0);
                    if usize::try_from(d) != Ok(i) {
                        bail!("BFS from {start}: level {d} where level {i} was due");
                    }
                    levels.push(count(row.get(1))?);
                }
                // The start row comes from `vertex`: none means an unknown start.
                Ok(if levels.is_empty() {
                    Reply::UnknownVertex
                } else {
                    Reply::Levels(levels)
                })
            }
        }
    }

    fn bfs_labelled(
        &mut self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        labels: &[String],
    ) -> anyhow::Result<Reply> {
        let start = stored_id(start);
        let statement = self.statement(Query::BfsLevelsLabelled(dir))?;
        let depth = max_depth.map_or(i32::MAX, |d| i32::try_from(d).unwrap_or(i32::MAX));
        let rows = self.client.query(&statement, &[&start, &depth, &labels])?;
        let mut levels = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let d: i32 = row.get(0);
            if usize::try_from(d) != Ok(i) {
                bail!("BFS from {start}: level {d} where level {i} was due");
            }
            levels.push(count(row.get(1))?);
        }
        Ok(if levels.is_empty() {
            Reply::UnknownVertex
        } else {
            Reply::Levels(levels)
        })
    }

    /// Whether `a` and `b` are both stored vertices. Asked only when a path query found no
    /// path or the one-vertex path, which is all an unknown end can give: a found path costs
    /// no extra round trip (as for Neo4j).
    fn known_ends(&mut self, a: i64, b: i64) -> anyhow::Result<bool> {
        let known = self.statement(Query::Known)?;
        let found: i64 = self.client.query_one(&known, &[&a, &b])?.get(0);
        Ok(found >= if a == b { 1 } else { 2 })
    }

    /// No path from `a` to `b`: unreachable, or an end is unknown.
    fn no_path(&mut self, a: i64, b: i64) -> anyhow::Result<Reply> {
        Ok(match self.known_ends(a, b)? {
            true => Reply::Unreachable,
            false => Reply::UnknownVertex,
        })
    }

    fn weighted_path(&mut self, a: u64, b: u64, dir: Direction) -> anyhow::Result<Reply> {
        if let Err(why) = &self.pgrouting {
            bail!("no weighted paths without pgRouting: {why}");
        }
        let (a, b) = (stored_id(a), stored_id(b));
        // pgr_dijkstra returns nothing from a vertex to itself; the path is the vertex alone.
        if a == b {
            return Ok(match self.known_ends(a, b)? {
                true => Reply::WeightedPath {
                    path: vec![vertex_id(a)],
                    weight: 0.0,
                },
                false => Reply::UnknownVertex,
            });
        }
        let statement = self.statement(Query::WeightedPath(dir))?;
        let row = self.client.query_one(&statement, &[&a, &b])?;
        let path: Option<Vec<i64>> = row.get(0);
        let weight: Option<f64> = row.get(1);
        match (path, weight) {
            (None, _) => self.no_path(a, b),
            (Some(path), Some(weight)) => Ok(Reply::WeightedPath {
                path: path.into_iter().map(vertex_id).collect(),
                weight,
            }),
            (Some(path), None) => {
                let path: Vec<u64> = path.into_iter().map(vertex_id).collect();
                let (a, b) = (vertex_id(a), vertex_id(b));
                bail!("weighted path {a} → {b}: {path:?} without a weight")
            }
        }
    }

    fn shortest_path(&mut self, a: u64, b: u64, dir: Direction) -> anyhow::Result<Reply> {
        let (a, b) = (stored_id(a), stored_id(b));
        let statement = self.statement(Query::Path(dir))?;
        let path: Option<Vec<i64>> = self.client.query_one(&statement, &[&a, &b])?.get(0);
        match path {
            // The search starts from $1 whether or not it is stored.
            None => self.no_path(a, b),
            Some(path) if path.len() == 1 && !self.known_ends(a, b)? => Ok(Reply::UnknownVertex),
            Some(path) => Ok(Reply::Path(path.into_iter().map(vertex_id).collect())),
        }
    }
}

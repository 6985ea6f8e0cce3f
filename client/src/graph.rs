//! Typed access to the graph module's reducers and procedures.
//!
//! The types mirror the module's SATS types as they travel in SpacetimeDB's HTTP API: products as
//! positional arrays (serde's derived structs read those), sums (enums, `Option`, `Result`) as
//! `[tag, payload]` with tags in declaration order. Arguments may name sum variants instead:
//! `{"some": v}` / `{"none": {}}`.

use crate::edgelist::EdgeList;
use crate::server::{Server, ServerError};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Most edges per load call: the module's own limit.
pub const MAX_BATCH_EDGES: usize = 200_000;
/// Largest call body the loader builds (SpacetimeDB refuses bodies over 2 MB).
pub const MAX_BODY_BYTES: usize = 1_900_000;

#[derive(Debug, Error)]
pub enum ClientError {
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The module refused the query; see [`GraphError`].
    #[error("{0}")]
    Graph(GraphError),
}

/// A load that stopped part-way.
#[derive(Debug, Error)]
#[error("{source}\n{acknowledged} edges of this load were acknowledged by the server")]
pub struct LoadError {
    /// Edges, from the start of the list given to [`GraphDb::load`], whose calls the server
    /// acknowledged: they are stored (a call that failed may or may not have been).
    pub acknowledged: usize,
    #[source]
    pub source: ClientError,
}

/// What a finished load did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOutcome {
    /// Edges sent.
    pub sent: u64,
    /// How many of them the graph did not hold before: the growth of its edge count.
    pub new_edges: u64,
    /// Whether other clients changed the graph during the load, which makes `new_edges` the
    /// net change of everyone's writes rather than this load's alone.
    pub others_wrote: bool,
    /// The graph's counts and version after the load.
    pub graph: GraphMeta,
}

impl LoadOutcome {
    /// Edges sent that the graph already held (or that were duplicates among those sent).
    pub fn already_present(&self) -> u64 {
        self.sent.saturating_sub(self.new_edges)
    }
}

/// Why the module refused a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    UnknownVertex(u64),
    InvalidArgument(String),
}

/// A SATS sum value on the wire: `[tag, payload]`.
#[derive(Deserialize)]
struct Sum(u8, Value);

impl Sum {
    fn payload<T: DeserializeOwned, E: serde::de::Error>(self) -> Result<T, E> {
        serde_json::from_value(self.1).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for GraphError {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let sum = Sum::deserialize(d)?;
        match sum.0 {
            0 => Ok(GraphError::UnknownVertex(sum.payload()?)),
            1 => Ok(GraphError::InvalidArgument(sum.payload()?)),
            tag => Err(D::Error::custom(format!("GraphError has no variant {tag}"))),
        }
    }
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::UnknownVertex(v) => write!(f, "unknown vertex {v}"),
            GraphError::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
        }
    }
}

/// Which arcs a query follows: the module's own type, shared so that both parse alike.
pub use graph_traverse::Direction;

/// The module's `graph_meta` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct GraphMeta {
    pub id: u8,
    pub vertices: u64,
    pub edges: u64,
    pub max_vertex_id: u64,
    pub version: u64,
}

/// How a query's work was split into transactions (see the module's `QueryStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct QueryStats {
    pub transactions: u32,
    pub yields: u32,
    pub max_hold_us: u64,
    pub total_hold_us: u64,
    /// Transactions that held longer than 5 ms.
    pub slow_transactions: u32,
    pub total_us: u64,
    pub vertices_expanded: u64,
    pub edges_scanned: u64,
    pub lookups: u64,
    pub version_start: u64,
    pub version_end: u64,
    /// Whether the answer came from the module instance's in-memory snapshot.
    pub from_snapshot: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NeighborCount {
    pub vertex: u64,
    pub count: u64,
    pub stats: QueryStats,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Neighbors {
    pub vertex: u64,
    pub neighbors: Vec<u64>,
    pub truncated: bool,
    pub stats: QueryStats,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BfsResult {
    pub start: u64,
    pub visited: u64,
    pub levels: Vec<u64>,
    pub vertices: Vec<u64>,
    pub stats: QueryStats,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStatus {
    Found,
    Unreachable,
    BeyondMaxDepth,
}

impl<'de> Deserialize<'de> for PathStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Sum::deserialize(d)?.0 {
            0 => Ok(PathStatus::Found),
            1 => Ok(PathStatus::Unreachable),
            2 => Ok(PathStatus::BeyondMaxDepth),
            tag => Err(D::Error::custom(format!("PathStatus has no variant {tag}"))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PathResult {
    pub source: u64,
    pub target: u64,
    pub status: PathStatus,
    pub path: Vec<u64>,
    pub stats: QueryStats,
}

/// A procedure's `Result` on the wire: `[0, ok]` or `[1, err]`.
enum WireResult<T> {
    Ok(T),
    Err(GraphError),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for WireResult<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let sum = Sum::deserialize(d)?;
        match sum.0 {
            0 => Ok(WireResult::Ok(sum.payload()?)),
            1 => Ok(WireResult::Err(sum.payload()?)),
            tag => Err(D::Error::custom(format!("Result has no variant {tag}"))),
        }
    }
}

/// A procedure's answer and the server's execution time for the call.
#[derive(Debug, Clone)]
pub struct Answer<T> {
    pub value: T,
    pub execution_us: Option<u64>,
}

/// SATS-JSON for an optional argument.
fn option(value: Option<u32>) -> Value {
    match value {
        Some(v) => json!({ "some": v }),
        None => json!({ "none": {} }),
    }
}

/// Tuning knobs shared by the multi-transaction procedures (0: the module's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxOptions {
    /// Work units (arcs + vertices + lookups) per transaction.
    pub tx_budget: u32,
    /// Longest run of wall time, in µs, between two yields.
    pub yield_every_us: u32,
}

/// Which implementation answers a query: Stage 2, or one of the Stage-1 baselines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Index-hop / bidirectional procedures in short transactions.
    Stage2,
    /// Full edge scan per query inside one procedure transaction.
    Stage1Procedure,
    /// Full edge scan in a reducer that writes rows, read back with SQL.
    Stage1Reducer,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Stage2 => "stage2",
            Mode::Stage1Procedure => "stage1",
            Mode::Stage1Reducer => "stage1-reducer",
        }
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stage2" => Ok(Mode::Stage2),
            "stage1" => Ok(Mode::Stage1Procedure),
            "stage1-reducer" => Ok(Mode::Stage1Reducer),
            _ => Err(format!(
                "mode `{s}`: expected stage2, stage1 or stage1-reducer"
            )),
        }
    }
}

/// The graph module published as `database` on a server.
#[derive(Debug, Clone)]
pub struct GraphDb {
    server: Server,
    database: String,
}

impl GraphDb {
    pub fn new(server: Server, database: impl Into<String>) -> Self {
        Self {
            server,
            database: database.into(),
        }
    }

    pub fn server(&self) -> &Server {
        &self.server
    }

    pub fn database(&self) -> &str {
        &self.database
    }

    fn reducer(&self, name: &str, args: Value) -> Result<(), ClientError> {
        self.server.call(&self.database, name, &args)?;
        Ok(())
    }

    /// Calls `name` and decodes its JSON answer as `T`; also returns the server's execution time.
    fn call_decoded<T: DeserializeOwned>(
        &self,
        name: &str,
        args: Value,
    ) -> Result<(T, Option<u64>), ClientError> {
        let out = self.server.call(&self.database, name, &args)?;
        let value = serde_json::from_value(out.body.clone()).map_err(|e| ServerError::Decode {
            what: format!("`{name}`'s answer"),
            message: format!("{e}: {}", out.body),
        })?;
        Ok((value, out.execution_us))
    }

    /// Calls a procedure returning `Result<T, GraphError>`.
    fn procedure<T: DeserializeOwned>(
        &self,
        name: &str,
        args: Value,
    ) -> Result<Answer<T>, ClientError> {
        match self.call_decoded::<WireResult<T>>(name, args)? {
            (WireResult::Ok(value), execution_us) => Ok(Answer {
                value,
                execution_us,
            }),
            (WireResult::Err(e), _) => Err(ClientError::Graph(e)),
        }
    }

    /// Inserts edges in one call (at most [`MAX_BATCH_EDGES`]); duplicates are ignored.
    pub fn add_edges(&self, src: &[u64], dst: &[u64]) -> Result<(), ClientError> {
        self.reducer("add_edges", json!([src, dst]))
    }

    pub fn add_vertices(&self, ids: &[u64]) -> Result<(), ClientError> {
        self.reducer("add_vertices", json!([ids]))
    }

    pub fn remove_edges(&self, src: &[u64], dst: &[u64]) -> Result<(), ClientError> {
        self.reducer("remove_edges", json!([src, dst]))
    }

    pub fn remove_vertex(&self, id: u64) -> Result<(), ClientError> {
        self.reducer("remove_vertex", json!([id]))
    }

    pub fn clear(&self) -> Result<(), ClientError> {
        self.reducer("clear_graph", json!([]))
    }

    /// Loads `edges` in calls that respect the body and batch limits, retrying a failed call
    /// once it is safe (edges are a set, so a re-sent batch changes nothing). `progress` gets the
    /// number of edges acknowledged so far. Edges go out in the order given; [`EdgeList::sorted`]
    /// is the order that keeps each vertex's arcs together in the table.
    ///
    /// On failure the error says how many edges, from the start of `edges`, the server
    /// acknowledged: those are stored, and a resumed load may skip exactly that many.
    pub fn load(
        &self,
        edges: &EdgeList,
        mut progress: impl FnMut(usize),
    ) -> Result<LoadOutcome, LoadError> {
        let failed = |acknowledged, source| LoadError {
            acknowledged,
            source,
        };
        let before = self.info().map_err(|e| failed(0, e))?;
        let mut acknowledged = 0;
        let mut calls = 0u64;
        while acknowledged < edges.len() {
            let end = batch_end(edges, acknowledged);
            let body = json!([&edges.src[acknowledged..end], &edges.dst[acknowledged..end]]);
            let mut attempt = 0;
            loop {
                match self.server.call(&self.database, "add_edges", &body) {
                    Ok(_) => break,
                    Err(e) if attempt < 3 && is_transient(&e) => {
                        attempt += 1;
                        std::thread::sleep(std::time::Duration::from_millis(200 << attempt));
                    }
                    Err(e) => return Err(failed(acknowledged, e.into())),
                }
            }
            calls += 1;
            acknowledged = end;
            progress(acknowledged);
        }
        let after = self.info().map_err(|e| failed(acknowledged, e))?;
        Ok(LoadOutcome {
            sent: edges.len() as u64,
            new_edges: after.edges.saturating_sub(before.edges),
            // Each call bumps the version at most once; more means someone else wrote too.
            others_wrote: after.version - before.version > calls,
            graph: after,
        })
    }

    /// Calls the module's empty procedure or reducer: the round-trip floor. Returns the
    /// server's execution time.
    pub fn noop(&self, procedure: bool) -> Result<Option<u64>, ClientError> {
        let name = if procedure {
            "noop_procedure"
        } else {
            "noop_reducer"
        };
        Ok(self
            .server
            .call(&self.database, name, &json!([]))?
            .execution_us)
    }

    /// The graph's counts and version.
    pub fn info(&self) -> Result<GraphMeta, ClientError> {
        Ok(self.call_decoded("graph_info", json!([]))?.0)
    }

    pub fn neighbor_count(
        &self,
        v: u64,
        dir: Direction,
    ) -> Result<Answer<NeighborCount>, ClientError> {
        self.procedure("neighbor_count", json!([v, dir.as_str()]))
    }

    pub fn neighbor_count_stage1(
        &self,
        v: u64,
        dir: Direction,
    ) -> Result<Answer<NeighborCount>, ClientError> {
        self.procedure("neighbor_count_full_scan", json!([v, dir.as_str()]))
    }

    /// Distinct neighbors, ascending, at most `limit` (0: no limit short of the module's cap).
    pub fn neighbors(
        &self,
        v: u64,
        dir: Direction,
        limit: u32,
    ) -> Result<Answer<Neighbors>, ClientError> {
        self.procedure("neighbors", json!([v, dir.as_str(), limit]))
    }

    pub fn bfs(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        vertex_limit: u32,
        tx: TxOptions,
    ) -> Result<Answer<BfsResult>, ClientError> {
        let args = json!([
            start,
            dir.as_str(),
            option(max_depth),
            vertex_limit,
            tx.tx_budget,
            tx.yield_every_us
        ]);
        self.procedure("bfs", args)
    }

    pub fn bfs_stage1(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Answer<BfsResult>, ClientError> {
        self.procedure(
            "bfs_full_scan",
            json!([start, dir.as_str(), option(max_depth)]),
        )
    }

    pub fn shortest_path(
        &self,
        source: u64,
        target: u64,
        dir: Direction,
        max_depth: Option<u32>,
        tx: TxOptions,
    ) -> Result<Answer<PathResult>, ClientError> {
        let args = json!([
            source,
            target,
            dir.as_str(),
            option(max_depth),
            tx.tx_budget,
            tx.yield_every_us
        ]);
        self.procedure("shortest_path", args)
    }

    pub fn shortest_path_stage1(
        &self,
        source: u64,
        target: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Answer<PathResult>, ClientError> {
        self.procedure(
            "shortest_path_full_scan",
            json!([source, target, dir.as_str(), option(max_depth)]),
        )
    }

    /// Reducer-style Stage-1 BFS: the reducer writes per-level counts, read back with SQL.
    pub fn bfs_stage1_reducer(
        &self,
        query_id: u64,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Vec<u64>, ClientError> {
        self.reducer(
            "bfs_full_scan_reducer",
            json!([query_id, start, dir.as_str(), option(max_depth)]),
        )?;
        self.result_rows(query_id)
    }

    /// Reducer-style Stage-1 shortest path: the path's vertices (empty: none), read with SQL.
    pub fn shortest_path_stage1_reducer(
        &self,
        query_id: u64,
        source: u64,
        target: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Vec<u64>, ClientError> {
        let args = json!([query_id, source, target, dir.as_str(), option(max_depth)]);
        self.reducer("shortest_path_full_scan_reducer", args)?;
        self.result_rows(query_id)
    }

    /// The `traversal_result` values of `query_id`, in ordinal order.
    fn result_rows(&self, query_id: u64) -> Result<Vec<u64>, ClientError> {
        let sql =
            format!("SELECT ordinal, value FROM traversal_result WHERE query_id = {query_id}");
        let results = self.server.sql(&self.database, &sql)?;
        let mut rows: Vec<(u64, u64)> = Vec::new();
        for row in results.iter().flat_map(|r| &r.rows) {
            let pair: (u64, u64) =
                serde_json::from_value(row.clone()).map_err(|e| ServerError::Decode {
                    what: "traversal_result rows".into(),
                    message: format!("{e}: {row}"),
                })?;
            rows.push(pair);
        }
        rows.sort_unstable();
        Ok(rows.into_iter().map(|(_, value)| value).collect())
    }
}

/// End of the batch starting at `start`: at most [`MAX_BATCH_EDGES`] edges and a JSON body
/// under [`MAX_BODY_BYTES`] (each id costs its digits plus a comma).
fn batch_end(edges: &EdgeList, start: usize) -> usize {
    let digits = |v: u64| v.checked_ilog10().unwrap_or(0) as usize + 2;
    let mut bytes = 16;
    let mut end = start;
    while end < edges.len() && end - start < MAX_BATCH_EDGES {
        bytes += digits(edges.src[end]) + digits(edges.dst[end]);
        if bytes > MAX_BODY_BYTES {
            break;
        }
        end += 1;
    }
    end
}

/// Failures worth retrying: the connection dropped, or the server was briefly unavailable.
fn is_transient(e: &ServerError) -> bool {
    match e {
        ServerError::Unreachable { .. } => true,
        ServerError::Http { status, .. } => *status == 0 || *status == 502 || *status == 503,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_both_limits() {
        let mut small = EdgeList::new();
        for i in 0..450_000u64 {
            small.push(i % 10, i % 7);
        }
        assert_eq!(batch_end(&small, 0), MAX_BATCH_EDGES);
        let mut big = EdgeList::new();
        for i in 0..200_000u64 {
            big.push(u64::MAX - i, u64::MAX);
        }
        let end = batch_end(&big, 0);
        let body = json!([&big.src[..end], &big.dst[..end]]).to_string();
        assert!(
            body.len() <= MAX_BODY_BYTES && end > 40_000,
            "{end} edges, {} bytes",
            body.len()
        );
        assert_eq!(batch_end(&big, big.len()), big.len());
    }

    #[test]
    fn decodes_sats_json() {
        let ok: WireResult<PathResult> = serde_json::from_value(json!([
            0,
            [
                1,
                2,
                [0, []],
                [1, 2],
                [3, 0, 6, 9, 1, 12, 1, 3, 4, 7, 7, true]
            ]
        ]))
        .unwrap();
        let WireResult::Ok(p) = ok else { panic!() };
        let s = p.stats;
        assert_eq!(
            (
                p.status,
                p.path,
                s.transactions,
                s.slow_transactions,
                s.total_us
            ),
            (PathStatus::Found, vec![1, 2], 3, 1, 12)
        );
        let err: WireResult<PathResult> = serde_json::from_value(json!([1, [0, 7]])).unwrap();
        assert!(matches!(err, WireResult::Err(GraphError::UnknownVertex(7))));
        let err: WireResult<PathResult> = serde_json::from_value(json!([1, [1, "why"]])).unwrap();
        assert!(matches!(err, WireResult::Err(GraphError::InvalidArgument(w)) if w == "why"));
        assert!(serde_json::from_value::<WireResult<PathResult>>(json!([2, 0])).is_err());
    }
}

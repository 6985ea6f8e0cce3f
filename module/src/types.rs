//! Typed arguments and results of the procedures (SATS types: JSON on HTTP, BSATN on the SDK).

use crate::schema::{BulkLoad, GraphMeta, LogHold, SnapshotHolder, SnapshotPolicy};
use graph_traverse::{Direction, Work};
use spacetimedb::SpacetimeType;

/// Why a query was refused. Returned as the `err` side of a procedure's `Result`.
#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    /// The vertex does not exist.
    UnknownVertex(u64),
    /// An argument is out of range or malformed; the text says which and why.
    InvalidArgument(String),
    /// The change log no longer covers this version (a bulk write or `clear_graph` since), so
    /// the graph as it was then cannot be read any more: start again at the current version.
    VersionGone(u64),
    /// A bulk load begun at this version is under way: until `finish_bulk_load` ends it, the
    /// vertex rows and degrees that answers read are not written yet (see `bulk`).
    BulkLoadUnderWay(u64),
}

impl std::fmt::Display for GraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphError::UnknownVertex(v) => write!(f, "unknown vertex {v}"),
            GraphError::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
            GraphError::VersionGone(v) => write!(
                f,
                "version {v} can no longer be read (the graph changed too much since): start again"
            ),
            GraphError::BulkLoadUnderWay(v) => write!(
                f,
                "a bulk load (begun at version {v}) is under way: queries are answered once \
                 finish_bulk_load has ended it ({})",
                crate::bulk::HOW_TO_FINISH
            ),
        }
    }
}

/// Parses a direction argument: `out`, `in` or `both` (any case).
pub fn parse_direction(s: &str) -> Result<Direction, GraphError> {
    s.parse().map_err(GraphError::InvalidArgument)
}

/// Deepest `max_depth` accepted; anything larger is certainly a mistake.
pub const MAX_DEPTH_LIMIT: u32 = 1_000_000;

pub fn check_depth(max_depth: Option<u32>) -> Result<Option<u32>, GraphError> {
    match max_depth {
        Some(d) if d > MAX_DEPTH_LIMIT => Err(GraphError::InvalidArgument(format!(
            "max_depth {d} exceeds {MAX_DEPTH_LIMIT}; omit it for an unbounded search"
        ))),
        other => Ok(other),
    }
}

/// How a query's work was split into transactions, and what it cost.
///
/// Times come from the engine's clock (microseconds). A transaction's hold time runs from its
/// start to the end of its commit; `max_hold_us ≤ total_hold_us ≤ total_us`.
#[derive(SpacetimeType, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryStats {
    pub transactions: u32,
    /// Times the procedure suspended so that other reducers and procedures could run.
    pub yields: u32,
    pub max_hold_us: u64,
    pub total_hold_us: u64,
    /// Transactions that held longer than 5 ms (each is also logged).
    pub slow_transactions: u32,
    /// From the procedure's start to its last transaction's end.
    pub total_us: u64,
    pub vertices_expanded: u64,
    pub edges_scanned: u64,
    /// Single-row lookups (existence checks, degrees).
    pub lookups: u64,
    /// `graph_meta.version` seen by the first and the last transaction: if they differ, writes
    /// committed while the query ran.
    pub version_start: u64,
    pub version_end: u64,
    /// Whether the answer came from this module instance's in-memory snapshot of the graph
    /// (built, or brought up to date, by this query or an earlier one) rather than from the
    /// indexes.
    pub from_snapshot: bool,
    /// The graph version the answer is for (see `pinned` and the README's consistency section).
    pub version: u64,
    /// Whether the answer is exactly that of the graph at `version`. Always, except for a
    /// traversal on the indexes that outlived the change log's record of the writes committed
    /// while it ran (a bulk load or `clear_graph` meanwhile): its answer may then mix the states
    /// between `version_start` and `version_end`.
    pub pinned: bool,
    /// Logged changes this query applied to bring the snapshot up to date, and the time that
    /// took (µs, engine clock; compaction included).
    pub changes_applied: u64,
    pub catch_up_us: u64,
}

impl QueryStats {
    pub fn add_work(&mut self, work: Work) {
        self.vertices_expanded += work.vertices_expanded;
        self.edges_scanned += work.arcs_scanned;
        self.lookups += work.lookups;
    }
}

#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct NeighborCount {
    pub vertex: u64,
    pub count: u64,
    pub stats: QueryStats,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct Neighbors {
    pub vertex: u64,
    /// Distinct neighbors, ascending, at most `limit` of them.
    pub neighbors: Vec<u64>,
    /// Whether more neighbors exist than `limit` allowed.
    pub truncated: bool,
    pub stats: QueryStats,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct BfsResult {
    pub start: u64,
    /// Vertices reached, the start included.
    pub visited: u64,
    /// `levels[d]`: vertices first reached at depth `d` (`levels[0] == 1`).
    pub levels: Vec<u64>,
    /// The first `vertex_limit` vertices reached, in BFS order.
    pub vertices: Vec<u64>,
    pub stats: QueryStats,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct DfsResult {
    pub start: u64,
    /// Vertices reached, the start included.
    pub visited: u64,
    /// The most hops from the start at which a vertex was first discovered.
    pub deepest: u32,
    /// The first `vertex_limit` vertices reached, in preorder (neighbors tried in ascending id
    /// order).
    pub vertices: Vec<u64>,
    pub stats: QueryStats,
}

#[derive(SpacetimeType, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStatus {
    Found,
    /// No path exists.
    Unreachable,
    /// No path of at most `max_depth` hops exists.
    BeyondMaxDepth,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct PathResult {
    pub source: u64,
    pub target: u64,
    pub status: PathStatus,
    /// A shortest path, source first and target last; empty unless `status` is `Found`.
    pub path: Vec<u64>,
    pub stats: QueryStats,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq)]
pub struct WeightedPathResult {
    pub source: u64,
    pub target: u64,
    /// `Found` or `Unreachable`.
    pub status: PathStatus,
    /// A path of least total weight, source first and target last; empty unless `Found`.
    pub path: Vec<u64>,
    /// The sum of the path's edge weights (0 unless `Found`).
    pub weight: f64,
    /// Edges on the path.
    pub hops: u32,
    pub stats: QueryStats,
}

/// The graph's counts and version, and the in-memory snapshots the module's instances hold.
#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct GraphInfo {
    pub meta: GraphMeta,
    /// One per instance holding a snapshot (rows not updated for 2 minutes are not listed).
    pub snapshots: Vec<SnapshotHolder>,
    /// Which instances may build a snapshot, and when (the owner's setting, or the defaults).
    pub policy: SnapshotPolicy,
    /// The bulk load under way, if any (queries are refused until it is finished).
    pub bulk_load: Option<BulkLoad>,
    /// What the change log holds, and which exports hold it.
    pub change_log: ChangeLogInfo,
}

/// The change log as its readers see it (see `changelog`).
#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct ChangeLogInfo {
    /// Changes it holds.
    pub changes: u64,
    /// It holds every change of every version above this one: a snapshot, traversal or export
    /// at an older version can no longer follow the writes.
    pub covers_after: u64,
    /// The holds in force (exports under way), oldest version first: writes keep every change
    /// after the oldest, up to 1,000,000 changes.
    pub holds: Vec<LogHold>,
}

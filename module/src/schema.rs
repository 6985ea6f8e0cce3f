//! Tables. `vertex`, `edge`, `wide_edge`, `edge_label`, `graph_meta` and `bulk_load` are public so that clients can subscribe to them and
//! read them with SQL; `traversal_result` is public because the reducer-style baseline's client
//! reads its answers from it. `change_log` and `change_log_state` are private: they let in-memory
//! snapshots and multi-transaction traversals follow the writes (see `changelog`); so is
//! `graph_writer`, who may write (see `access`), `log_hold`, which readers need the log kept
//! (see `changelog`), and `snapshot_holder`, which instances hold a
//! snapshot and how large it is; and `bulk_mark`, where a bulk load's arcs lie (see `bulk`).

use spacetimedb::table::{IndexIsRanged, TableHandleBackend};
use spacetimedb::{
    Identity, RangedIndex, ReducerContext, SpacetimeType, Table, Timestamp, UniqueColumn, table,
};

/// A vertex and its degrees, kept exact by every write so that the bidirectional search can
/// weigh a frontier (sum of degrees) with one primary-key lookup per vertex.
#[table(accessor = vertex, public)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vertex {
    #[primary_key]
    pub id: u64,
    pub out_degree: u32,
    pub in_degree: u32,
    /// A `vertex_label` id; 0: none.
    pub label: u32,
}

impl Vertex {
    /// A new vertex without arcs or label.
    pub fn new(id: u64) -> Self {
        Self {
            id,
            out_degree: 0,
            in_degree: 0,
            label: NO_LABEL,
        }
    }

    /// Its arcs in direction `dir` (both: out- plus in-arcs, a self-loop counted twice).
    pub fn degree(&self, dir: graph_traverse::Direction) -> u64 {
        use graph_traverse::Direction;
        match dir {
            Direction::Out => self.out_degree as u64,
            Direction::In => self.in_degree as u64,
            Direction::Both => self.out_degree as u64 + self.in_degree as u64,
        }
    }
}

/// A directed edge `src → dst` whose ends are both below 2^32 (every edge of a graph whose ids
/// fit in 32 bits), with a label (an `edge_label` id; 0: none) and a weight (finite,
/// non-negative; 1 unless given). Both ends are packed in one integer per direction:
/// `fwd = src << 32 | dst` is the primary key and `rev = dst << 32 | src` is unique, so edges
/// are a set keyed by their ends, a vertex's out-arcs are one range of `fwd` and its in-arcs one
/// range of `rev`, each ordered by neighbor id (a hub's list can be read in pages across
/// transactions). Two unique single-column keys cost about a third of what two (u64, u64)
/// indexes and the engine's duplicate-row map cost (`results/engine-costs/`); read the ends
/// with [`Edge::src`] and [`Edge::dst`], or in SQL as `fwd / 4294967296` and `fwd % 4294967296`.
/// Edges with a larger end live in [`WideEdge`]; [`crate::edges`] hides the split.
#[table(accessor = edge, public)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    #[primary_key]
    pub fwd: u64,
    #[unique]
    pub rev: u64,
    pub label: u32,
    pub weight: f32,
}

impl Edge {
    pub fn src(&self) -> u64 {
        self.fwd >> 32
    }

    pub fn dst(&self) -> u64 {
        self.fwd & u64::from(u32::MAX)
    }
}

/// A directed edge with an end at or above 2^32, keyed like [`Edge`] with the ends packed in
/// 128 bits (`fwd = src << 64 | dst`, `rev = dst << 64 | src`).
#[table(accessor = wide_edge, public)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WideEdge {
    #[primary_key]
    pub fwd: u128,
    #[unique]
    pub rev: u128,
    pub label: u32,
    pub weight: f32,
}

impl WideEdge {
    pub fn src(&self) -> u64 {
        (self.fwd >> 64) as u64
    }

    pub fn dst(&self) -> u64 {
        self.fwd as u64
    }
}

/// The label id of an unlabelled edge or vertex (no `edge_label` or `vertex_label` row has it).
pub const NO_LABEL: u32 = 0;

/// An edge label's name and the id edges store; ids are given from 1 up as names are first
/// used, and never reused.
#[table(accessor = edge_label, public)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeLabel {
    #[primary_key]
    pub id: u32,
    #[unique]
    pub name: String,
}

/// A vertex label's name and the id vertices store, given as for `edge_label` (vertex labels
/// and edge labels are separate name spaces, as node labels and relationship types are in
/// Cypher).
#[table(accessor = vertex_label, public)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexLabel {
    #[primary_key]
    pub id: u32,
    #[unique]
    pub name: String,
}

/// One row (id 0) of graph-wide facts: exact counts, an upper bound on vertex ids (lets traversals use
/// dense visited sets) and a version bumped by every write (lets clients and multi-transaction
/// traversals detect concurrent changes).
#[table(accessor = graph_meta, public)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GraphMeta {
    #[primary_key]
    pub id: u8,
    pub vertices: u64,
    pub edges: u64,
    pub max_vertex_id: u64,
    pub version: u64,
}

/// Present (one row, id 0) while a bulk load is under way: `add_edges` then stores edges only,
/// and `finish_bulk_load` writes the vertex rows at the end (see `bulk`). Public, so that a
/// client sees why queries are refused and how far finishing has come.
#[table(accessor = bulk_load, public)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkLoad {
    #[primary_key]
    pub id: u8,
    /// The graph version `begin_bulk_load` made.
    pub began_at: u64,
    /// Every vertex below this id has its row, with exact degrees: at first the lowest end of
    /// the arcs added in the bulk load (`u64::MAX` before the first add), then where finishing
    /// has come to.
    pub finished_below: u64,
    /// Ids the next `finish_bulk_load` call reads (0: not estimated yet).
    pub window: u64,
}

/// Where a bulk load's arcs end, coarsely: each add call leaves a few marks, each counting
/// `ends` of the call's arc ends that lie at or after `at`, up to its next mark (see
/// `bulk::mark_ends`; marks at one id add up). Finishing sizes its windows by them; its last call
/// deletes them. Private: only `bulk` reads it.
#[table(accessor = bulk_mark)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkMark {
    #[primary_key]
    pub at: u64,
    pub ends: u64,
}

/// Answers written by the reducer-style Stage-1 baseline, read back by the client with SQL.
/// A BFS writes one row per level (`ordinal` = depth, `value` = vertex count); a shortest path
/// one row per path vertex (`ordinal` = index, `value` = vertex id). (`position` would be the natural
/// name, but it is an SQL keyword.)
#[table(accessor = traversal_result, public)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraversalResult {
    #[primary_key]
    #[auto_inc]
    pub row_id: u64,
    #[index(btree)]
    pub query_id: u64,
    pub ordinal: u32,
    pub value: u64,
}

/// A range view of a unique column. The 2.14 bindings give a unique column only point
/// operations, though its index is an ordinary B-tree that the host range-scans like any other
/// (`datastore_index_scan_range_bsatn` takes any B-tree index); this reuses the column's own
/// index marker, so the scan names the same index the engine built for the constraint.
pub(crate) fn ranged<Tbl: Table, C, Idx: IndexIsRanged>(
    _column: UniqueColumn<Tbl, C, Idx>,
    backend: &TableHandleBackend,
) -> RangedIndex<Tbl, (C,), Idx> {
    RangedIndex::__new(backend.clone())
}

pub(crate) fn meta(db: &spacetimedb::Local) -> GraphMeta {
    db.graph_meta().id().find(0).unwrap_or_default()
}

/// Stores `meta` with the version bumped and logs the `changes` that made that version: every
/// committed write goes through here.
pub(crate) fn save_meta(
    ctx: &ReducerContext,
    mut meta: GraphMeta,
    changes: crate::changelog::Changes,
) {
    let previous = meta.version;
    meta.version += 1;
    // Besides `init`'s empty row at version 0, only this function stores the row, always with
    // a version above 0. A version read as 0 is the empty row, or the default of a database
    // created by a module version before `init` stored it, which has no row until this inserts
    // one.
    if previous > 0 || ctx.db.graph_meta().id().find(0).is_some() {
        crate::rows::update(&ctx.db.graph_meta().id(), &meta);
    } else {
        ctx.db.graph_meta().insert(meta);
    }
    changes.record(ctx, previous, meta.version);
}

/// What one write did to one arc or vertex (only changes that took effect are logged).
#[derive(SpacetimeType, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    InsertArc,
    RemoveArc,
    InsertVertex,
    RemoveVertex,
    RelabelVertex,
}

/// One logged change: the write that made graph version `version` did `kind` to the arc
/// `src → dst`, which has (or, removed, had) `label` and `weight`. For a vertex change, `src` is
/// the vertex; a relabelling gives it `label` in place of the label `dst` (removing a labelled
/// vertex also logs its label going to 0); the other columns are 0. The changes of one version commute, so they need no order
/// among themselves; rows are a set, and one version never holds the same change twice.
#[table(accessor = change_log, index(accessor = by_version, btree(columns = [version])))]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoggedChange {
    pub version: u64,
    pub kind: ChangeKind,
    pub src: u64,
    pub dst: u64,
    pub label: u32,
    pub weight: f32,
}

/// One row (id 0): the log holds every change of every version above `covers_after`.
#[table(accessor = change_log_state)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeLogState {
    #[primary_key]
    pub id: u8,
    pub covers_after: u64,
}

/// A reader that needs the change log to keep every change after `version`: an export in
/// progress by `holder`, which renews the hold with its pages and drops it with its last one.
/// Writes do not trim the log past the oldest hold in force, up to a limit (see `changelog`).
#[table(accessor = log_hold)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHold {
    #[primary_key]
    #[auto_inc]
    pub id: u64,
    pub version: u64,
    pub holder: Identity,
    /// When the hold lapses unless renewed (a reader that vanished holds nothing for long).
    pub expires: Timestamp,
    /// The largest vertex id the graph had at `version` (or above it): the reader need not
    /// look past it, whatever ids were created since.
    pub bound: u64,
}

/// An identity that may change the graph (see `access`): the owner, or one the owner granted.
#[table(accessor = graph_writer)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphWriter {
    #[primary_key]
    pub identity: Identity,
    pub owner: bool,
}

/// One row (id 0), set by the owner (reducer `set_snapshot_policy`): which module instances may
/// build an in-memory snapshot of the graph (see `snapshot`), and when. No row: the defaults.
#[table(accessor = snapshot_policy)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotPolicy {
    #[primary_key]
    pub id: u8,
    /// Most instances that may hold a snapshot at once (0: none; every traversal stays on the
    /// indexes).
    pub max_snapshots: u32,
    /// Whether many small traversals build one too, once together they have read through the
    /// indexes as many arcs as a build reads; otherwise only a BFS that has read a large share
    /// of the graph does.
    pub build_for_small_traversals: bool,
}

/// A module instance that holds an in-memory snapshot of the graph (see `snapshot`), as it last
/// reported: the engine runs procedures on a pool of instances, each with its own memory.
#[table(accessor = snapshot_holder)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotHolder {
    /// A random id the instance drew when it first reported.
    #[primary_key]
    pub instance: u64,
    /// The graph version the snapshot is at, and its arcs.
    pub version: u64,
    pub edges: u64,
    /// Heap bytes the snapshot holds, measured by the instance's allocator (what its build and
    /// its updates allocated and did not free).
    pub bytes: u64,
    /// The instance's whole linear memory, bytes.
    pub instance_memory_bytes: u64,
    pub updated: Timestamp,
}

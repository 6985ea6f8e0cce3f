//! An in-memory snapshot of the whole graph, for traversals that would otherwise read most of
//! it through the indexes, one neighbor list at a time.
//!
//! Reading one vertex's arcs costs an index lookup and a host call; reading the edge table in
//! index order costs a host call per page of rows. So once a BFS has read a large share of the
//! graph ([`worth_building`]), the procedure reads all of it in index order instead, in short
//! paced transactions, into an [`AdjacencyGraph`] in this module instance's memory, and finishes
//! there, yielding as it goes. Later queries use the snapshot while the graph is unchanged.
//!
//! A snapshot is exactly one version of the graph: every transaction that reads it checks that
//! `graph_meta.version` has not moved, or the build is abandoned (the query then carries on
//! through the indexes). The first write makes it stale; it is dropped when a query notices.
//! The engine runs procedures on a small pool of module instances, each with its own memory, so
//! each instance that runs a large BFS builds and holds its own snapshot.

use crate::schema::{GraphMeta, edge, meta, vertex};
use crate::tx_runner::{Budget, TxRunner};
use graph_traverse::{
    AdjacencyBuilder, AdjacencyGraph, DenseSource, Direction, ListCursor, NeighborSource, Progress,
};
use std::cell::RefCell;
use std::rc::Rc;

/// A BFS switches to a snapshot once it has read more arcs than the graph's edges divided by
/// this: reading the rest through the indexes would then cost more than reading everything in
/// order (about 1 µs per arc through the indexes on an LJ-sized graph).
const SWITCH_DIVISOR: u64 = 4;
/// Largest graph a snapshot is built for: about 12 bytes per edge while building, within the
/// 4 GiB of a wasm32 instance with room to spare.
const MAX_SNAPSHOT_EDGES: u64 = 150_000_000;

/// The whole graph at one version.
pub struct Snapshot {
    pub version: u64,
    pub graph: AdjacencyGraph,
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<Snapshot>>> = const { RefCell::new(None) };
}

/// This instance's snapshot, if it is of `version`; a stale one is dropped.
pub fn current(version: u64) -> Option<Rc<Snapshot>> {
    CURRENT.with_borrow_mut(|snapshot| {
        if snapshot.as_ref().is_some_and(|s| s.version != version) {
            *snapshot = None;
        }
        snapshot.clone()
    })
}

/// Whether a traversal that has read `arcs_scanned` arcs of the graph described by `meta`, and
/// seen no write since `meta` was read, should finish on a snapshot.
pub fn worth_building(meta: &GraphMeta, arcs_scanned: u64, version_now: u64) -> bool {
    version_now == meta.version
        && meta.edges <= MAX_SNAPSHOT_EDGES
        && arcs_scanned.saturating_mul(SWITCH_DIVISOR) > meta.edges
}

/// Reads every edge of the graph at `meta.version` in transactions of about `tx_budget` rows
/// (0: paced) and keeps the result as this instance's snapshot. `None` if a write committed
/// meanwhile, or if the scan was refused (which is logged).
pub fn build(runner: &mut TxRunner, meta: &GraphMeta, tx_budget: u32) -> Option<Rc<Snapshot>> {
    CURRENT.set(None); // Free the old one before building the next.
    let builder = RefCell::new(AdjacencyBuilder::with_capacity(
        meta.vertices as usize,
        meta.edges as usize,
    ));
    let mut budget = Budget::from_arg(tx_budget);
    // The scan reads windows of source ids, sized so that a window holds about a budget of
    // edges: a range scan hands over all its rows at once, so it must be bounded at both ends.
    let ids_per_edge = (meta.max_vertex_id as f64 + 1.0) / meta.edges.max(1) as f64;
    let mut width = ((budget.units() as f64 * ids_per_edge) as u64).max(1);
    let mut from = 0u64;
    while from <= meta.max_vertex_id {
        let units = budget.units();
        let to = from.saturating_add(width - 1);
        let read = runner.run(|tx| {
            if crate::schema::meta(&tx.db).version != meta.version {
                return None;
            }
            let mut rows = 0u64;
            let arcs = tx
                .db
                .edge()
                .by_src_dst()
                .filter(from..=to)
                .inspect(|_| rows += 1)
                .map(|e| (e.src, e.dst));
            Some(builder.borrow_mut().add_arcs(arcs).map(|()| rows))
        });
        let rows = match read? {
            Ok(rows) => rows,
            Err(error) => {
                log::warn!("snapshot abandoned: the edge scan gave {error:?}");
                return None;
            }
        };
        runner.observe(&mut budget, rows);
        if to == u64::MAX {
            break;
        }
        from = to + 1;
        width = if rows > 2 * units {
            (width / 2).max(1)
        } else if rows < units / 2 {
            width.saturating_mul(2)
        } else {
            width
        };
    }
    let mut builder = builder.into_inner();
    let mut budget = Budget::from_arg(0);
    loop {
        let (progress, took_us) = runner.compute(|| builder.finish_step(budget.units()));
        if progress == Progress::Done {
            break;
        }
        budget.observe(budget.units(), took_us);
    }
    let snapshot = Rc::new(Snapshot {
        version: meta.version,
        graph: builder.into_graph(),
    });
    CURRENT.set(Some(snapshot.clone()));
    Some(snapshot)
}

/// A snapshot as the traversal operator reads it. The snapshot holds the vertices that have
/// arcs; `existing` are the query's endpoints that exist (read at the snapshot's version), so
/// that one without arcs is found, with no neighbors.
pub struct SnapshotSource<'a> {
    pub graph: &'a AdjacencyGraph,
    pub existing: Vec<u64>,
}

impl NeighborSource for SnapshotSource<'_> {
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<u64>,
    ) -> bool {
        self.graph.neighbors_page(v, dir, cursor, max, out)
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        self.graph.degree(v, dir)
    }

    fn contains(&self, v: u64) -> bool {
        self.graph.contains(v) || self.existing.contains(&v)
    }
}

/// The snapshot's slots; a vertex in `existing` has none (it has no arcs).
impl DenseSource for SnapshotSource<'_> {
    fn slots(&self) -> usize {
        self.graph.slots()
    }

    fn slot(&self, v: u64) -> Option<u32> {
        self.graph.slot(v)
    }

    fn vertex(&self, slot: u32) -> u64 {
        self.graph.vertex(slot)
    }

    #[inline]
    fn rows(&self, slot: u32, dir: Direction) -> [&[u32]; 2] {
        self.graph.rows(slot, dir)
    }

    fn arc_total(&self, dir: Direction) -> u64 {
        self.graph.arc_total(dir)
    }
}

/// The graph's meta row and which of `vertices` exist, read in one transaction.
pub fn meta_and_existing(runner: &mut TxRunner, vertices: &[u64]) -> (GraphMeta, Vec<u64>) {
    runner.run(|tx| {
        let existing = vertices
            .iter()
            .copied()
            .filter(|&v| tx.db.vertex().id().find(v).is_some())
            .collect();
        (meta(&tx.db), existing)
    })
}

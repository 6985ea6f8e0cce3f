//! Stage-2 query procedures: thin wrappers that run the traversal operator over the table
//! indexes in short transactions (see `tx_runner`), or over the in-memory snapshot (see
//! `snapshot`), and return typed results with their stats.

// A procedure's parameters are the module's call signature (positional arguments over HTTP,
// generated methods in the SDK): they stay flat rather than grouped into a struct.
#![allow(clippy::too_many_arguments)]

use crate::bulk;
use crate::labels;
use crate::pin::Pin;
use crate::schema::{GraphMeta, meta, vertex};
use crate::snapshot::{self, Snapshot, Start};
use crate::source::IndexSource;
use crate::tx_runner::{Budget, DEFAULT_YIELD_EVERY_US, TxRunner};
use crate::types::*;
use graph_traverse::{
    ArcFilter, Bfs, BfsOutcome, BfsQuery, Dfs, DfsOutcome, DfsQuery, Direction,
    DirectionOptimizingBfs, FilteredGraph, NeighborSource, PathOutcome, PathQuery, Progress,
    Search, ShortestPath, WeightedOutcome, WeightedPath, WeightedQuery, Work,
};
use spacetimedb::{Local, ProcedureContext, procedure};
use std::cell::RefCell;

/// Most vertices a BFS may return in its vertex list (the rest are only counted).
pub const MAX_VERTEX_LIMIT: u32 = 1_000_000;
/// Most neighbors `neighbors` may return.
pub const MAX_NEIGHBOR_LIMIT: u32 = 1_000_000;

fn check_vertex_limit(vertex_limit: u32) -> Result<(), GraphError> {
    if vertex_limit > MAX_VERTEX_LIMIT {
        return Err(GraphError::InvalidArgument(format!(
            "vertex_limit {vertex_limit} exceeds {MAX_VERTEX_LIMIT}"
        )));
    }
    Ok(())
}

fn or_default(value: u32, default: u32) -> u32 {
    if value == 0 { default } else { value }
}

/// Where a traversal from `from` starts (see [`snapshot::start`]), with the filter
/// `edge_labels` and `vertex_labels` name, which lets `from` pass whatever its label. An unknown
/// label name fails the query, after giving the snapshot back.
fn begin(
    runner: &mut TxRunner,
    endpoints: &[u64],
    edge_labels: &[String],
    vertex_labels: &[String],
    from: u64,
) -> Result<(Start, ArcFilter), GraphError> {
    let read = |db: &Local| {
        bulk::ready(db)?;
        labels::filter(db, edge_labels, vertex_labels).map(|f| f.except(from))
    };
    let mut start = snapshot::start(runner, endpoints, snapshot::take(), &read);
    let filter = std::mem::replace(&mut start.filter, Ok(ArcFilter::all()));
    match filter {
        Ok(filter) => Ok((start, filter)),
        Err(e) => {
            if let Some(snap) = start.snapshot {
                snapshot::keep(runner, snap);
            }
            Err(e)
        }
    }
}

/// The visited-set bound for a graph: dense when ids are not much sparser than the vertex count.
pub(crate) fn id_bound(meta: &GraphMeta) -> Option<u64> {
    let bound = meta.max_vertex_id.checked_add(1)?;
    (bound <= meta.vertices.saturating_mul(8).saturating_add(4096)).then_some(bound)
}

/// The graph's counts and version, the snapshots the module's instances hold, and the change log.
#[procedure]
pub fn graph_info(ctx: &mut ProcedureContext) -> GraphInfo {
    TxRunner::new(ctx, DEFAULT_YIELD_EVERY_US).run(|tx| {
        let meta = meta(&tx.db);
        GraphInfo {
            meta,
            snapshots: snapshot::holders(&tx.db, tx.timestamp),
            policy: snapshot::policy(&tx.db),
            bulk_load: bulk::under_way(&tx.db),
            change_log: crate::changelog::info(&tx.db, meta.version, tx.timestamp),
        }
    })
}

/// Number of distinct neighbors of `vertex` in `direction` (`out`, `in` or `both`) over the
/// edges labelled with one of `edge_labels` (empty: every edge; `""`: unlabelled edges) that
/// are labelled with one of `vertex_labels` (empty: any; `""`: unlabelled vertices). One
/// transaction: a primary-key read for `out`/`in` without labels, index scans otherwise.
///
/// The traversals take the same two lists: they follow only those edges, and enter only those
/// vertices (the start passes whatever its label; a path's target must pass).
#[procedure]
pub fn neighbor_count(
    ctx: &mut ProcedureContext,
    vertex: u64,
    direction: String,
    edge_labels: Vec<String>,
    vertex_labels: Vec<String>,
) -> Result<NeighborCount, GraphError> {
    let dir = parse_direction(&direction)?;
    let mut runner = TxRunner::new(ctx, DEFAULT_YIELD_EVERY_US);
    // `out`/`in`: the degree kept in the vertex row. `both`, or a filter: a scan.
    let found = runner.run(|tx| {
        bulk::ready(&tx.db)?;
        let filter = labels::filter(&tx.db, &edge_labels, &vertex_labels)?;
        let src = IndexSource::new(&tx.db, None, &filter);
        let row = tx
            .db
            .vertex()
            .id()
            .find(vertex)
            .ok_or(GraphError::UnknownVertex(vertex))?;
        Ok(match dir {
            Direction::Out | Direction::In if filter.is_all() => (row.degree(dir), 0),
            // The scan reads the arcs the row counts (no pin here).
            _ => (
                distinct_neighbors(&src, vertex, dir).len() as u64,
                row.degree(dir),
            ),
        })
    });
    let (count, scanned) = found?;
    let mut stats = runner.finish();
    stats.lookups = 1;
    stats.vertices_expanded = (scanned > 0) as u64;
    stats.edges_scanned = scanned;
    Ok(NeighborCount {
        vertex,
        count,
        stats,
    })
}

/// Distinct neighbors of `vertex` in `direction` over the edges with one of `edge_labels` (as for
/// `neighbor_count`), ascending, at most `limit` (0: the maximum).
#[procedure]
pub fn neighbors(
    ctx: &mut ProcedureContext,
    vertex: u64,
    direction: String,
    edge_labels: Vec<String>,
    vertex_labels: Vec<String>,
    limit: u32,
) -> Result<Neighbors, GraphError> {
    let dir = parse_direction(&direction)?;
    if limit > MAX_NEIGHBOR_LIMIT {
        return Err(GraphError::InvalidArgument(format!(
            "limit {limit} exceeds {MAX_NEIGHBOR_LIMIT}"
        )));
    }
    let limit = or_default(limit, MAX_NEIGHBOR_LIMIT) as usize;
    let mut runner = TxRunner::new(ctx, DEFAULT_YIELD_EVERY_US);
    let found = runner.run(|tx| {
        bulk::ready(&tx.db)?;
        let filter = labels::filter(&tx.db, &edge_labels, &vertex_labels)?;
        let src = IndexSource::new(&tx.db, None, &filter);
        match src.contains(vertex) {
            true => Ok(distinct_neighbors(&src, vertex, dir)),
            false => Err(GraphError::UnknownVertex(vertex)),
        }
    });
    let mut neighbors = found?;
    let mut stats = runner.finish();
    stats.vertices_expanded = 1;
    stats.edges_scanned = neighbors.len() as u64;
    let truncated = neighbors.len() > limit;
    neighbors.truncate(limit);
    Ok(Neighbors {
        vertex,
        neighbors,
        truncated,
        stats,
    })
}

fn distinct_neighbors(src: &IndexSource, vertex: u64, dir: Direction) -> Vec<u64> {
    let mut page = Vec::new();
    src.neighbors(vertex, dir, &mut page);
    let mut out: Vec<u64> = page.iter().map(|n| n.id).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Breadth-first search from `start` over the edges with one of `edge_labels` (as for
/// `neighbor_count`): visited count, per-level counts and the first `vertex_limit` vertices in
/// BFS order. `max_depth` bounds the levels (none: full traversal).
/// `tx_budget` fixes the work units per transaction (0: paced to hold each for about 2 ms) and
/// `yield_every_us` the time between yields (0: the default).
///
/// Runs on this instance's snapshot of the graph, brought up to date, if it has one (or its
/// traversals have paid for one), as a direction-optimizing BFS; otherwise through the indexes,
/// pinned to the version it started on, switching to a new snapshot once it has read a large
/// share of the graph (see `snapshot`).
#[procedure]
pub fn bfs(
    ctx: &mut ProcedureContext,
    start: u64,
    direction: String,
    edge_labels: Vec<String>,
    vertex_labels: Vec<String>,
    max_depth: Option<u32>,
    vertex_limit: u32,
    tx_budget: u32,
    yield_every_us: u32,
) -> Result<BfsResult, GraphError> {
    let dir = parse_direction(&direction)?;
    let max_depth = check_depth(max_depth)?;
    check_vertex_limit(vertex_limit)?;
    let query = BfsQuery {
        start,
        dir,
        max_depth,
        target: None,
        collect_limit: vertex_limit as usize,
    };
    let mut runner = TxRunner::new(ctx, or_default(yield_every_us, DEFAULT_YIELD_EVERY_US));
    let (begin, filter) = begin(&mut runner, &[start], &edge_labels, &vertex_labels, start)?;
    let on_snapshot = |src: &FilteredGraph| DirectionOptimizingBfs::new(query.clone(), src);
    if let Some(snap) = begin.snapshot {
        let (outcome, work) = in_snapshot(&mut runner, &snap, begin.existing, &filter, on_snapshot);
        return bfs_result(start, outcome, snapshot_stats(runner, work, snap));
    }
    let meta = begin.meta;
    let pin = RefCell::new(Pin::new(meta.version));
    let search = RefCell::new(Bfs::new(query.clone(), id_bound(&meta)));
    let worth_a_snapshot = |bfs: &Bfs| snapshot::worth_building(&meta, bfs.work().arcs_scanned);
    let through = |runner: &mut TxRunner, stop: &dyn Fn(&Bfs) -> bool| {
        through_indexes(runner, tx_budget, &search, &pin, &filter, stop)
    };
    if !through(&mut runner, &worth_a_snapshot) {
        if let Some(built) = snapshot::build(&mut runner, &meta, tx_budget) {
            let begin =
                snapshot::start(
                    &mut runner,
                    &[start],
                    Some(built),
                    &|_| Ok(ArcFilter::all()),
                );
            if let Some(snap) = begin.snapshot {
                let mut read = search.borrow().work();
                read.arcs_scanned += meta.edges;
                let (outcome, rest) =
                    in_snapshot(&mut runner, &snap, begin.existing, &filter, on_snapshot);
                read += rest;
                return bfs_result(start, outcome, snapshot_stats(runner, read, snap));
            }
        }
        through(&mut runner, &|_| false);
    }
    let (outcome, work) = search.into_inner().into_outcome();
    bfs_result(start, outcome, index_stats(runner, work, &pin))
}

/// Runs `search` through the indexes, pinned by `pin` and filtered by `filter`, in paced
/// transactions until it is done (returns `true`), or until `stop(search)` says to stop between
/// two transactions (returns `false`).
fn through_indexes<S: for<'a> Search<IndexSource<'a>>>(
    runner: &mut TxRunner,
    tx_budget: u32,
    search: &RefCell<S>,
    pin: &RefCell<Pin>,
    filter: &ArcFilter,
    stop: &dyn Fn(&S) -> bool,
) -> bool {
    let mut budget = Budget::from_arg(tx_budget);
    loop {
        let before = search.borrow().work().units();
        // Buffers grow here, between transactions, never while one is held.
        search.borrow_mut().reserve(budget.units());
        let progress = runner.run_at(|tx, version| {
            let mut pin = pin.borrow_mut();
            pin.follow(&tx.db, version);
            let src = IndexSource::new(&tx.db, Some(&pin), filter);
            search.borrow_mut().step(&src, budget.units())
        });
        runner.observe(&mut budget, search.borrow().work().units() - before);
        if progress == Progress::Done {
            return true;
        }
        if stop(&search.borrow()) {
            return false;
        }
    }
}

/// The stats of an answer read through the indexes, whose arcs count towards a snapshot build.
fn index_stats(runner: TxRunner, work: Work, pin: &RefCell<Pin>) -> QueryStats {
    snapshot::count_index_arcs(work.arcs_scanned);
    let mut stats = runner.finish();
    stats.add_work(work);
    pin.borrow().stamp(&mut stats);
    stats
}

/// Runs the search that `new_search` sets up to the end on a snapshot seen through `filter`,
/// outside any transaction, in paced steps with yields. The snapshot holds the vertices that
/// have arcs; `existing` are the query's endpoints that exist (read at the snapshot's version),
/// so that one without arcs is found, with no neighbors.
fn in_snapshot<'s, S: Search<FilteredGraph<'s>>>(
    runner: &mut TxRunner,
    snap: &'s Snapshot,
    existing: Vec<u64>,
    filter: &'s ArcFilter,
    new_search: impl FnOnce(&FilteredGraph<'s>) -> S,
) -> (S::Outcome, Work) {
    let source = FilteredGraph {
        isolated: existing,
        ..FilteredGraph::new(&snap.graph, filter)
    };
    let mut search = new_search(&source);
    let mut budget = Budget::from_arg(0);
    loop {
        let before = search.work().units();
        let units = runner.step_units(&budget);
        search.reserve(units);
        let (progress, took_us) = runner.compute(|| search.step(&source, units));
        if progress == Progress::Done {
            return search.into_outcome();
        }
        budget.observe(search.work().units() - before, took_us);
    }
}

/// The stats of an answer from `snap`, which is kept for later queries.
fn snapshot_stats(mut runner: TxRunner, work: Work, snap: Snapshot) -> QueryStats {
    let version = snap.version;
    snapshot::keep(&mut runner, snap);
    let mut stats = runner.finish();
    stats.add_work(work);
    stats.from_snapshot = true;
    stats.version = version;
    stats.pinned = true;
    stats
}

pub(crate) fn bfs_result(
    start: u64,
    outcome: BfsOutcome,
    stats: QueryStats,
) -> Result<BfsResult, GraphError> {
    match outcome {
        BfsOutcome::UnknownStart => Err(GraphError::UnknownVertex(start)),
        BfsOutcome::Visited {
            levels, vertices, ..
        } => Ok(BfsResult {
            start,
            visited: levels.iter().sum(),
            levels,
            vertices,
            stats,
        }),
    }
}

/// Depth-first search from `start` over the edges with one of `edge_labels` (as for
/// `neighbor_count`): neighbors tried in ascending id order, each vertex entered
/// once (with `max_depth`, vertices beyond it are not entered, and a vertex reached again by a
/// shorter way is entered again so that every vertex within `max_depth` hops is found). Returns
/// the visited count, the deepest discovery and the first `vertex_limit` vertices in preorder.
/// Budget and yield arguments as for `bfs`. Runs on this instance's snapshot, brought up to
/// date, if it has one (or its traversals have paid for one, see `snapshot`), otherwise through
/// the indexes, pinned to the version it started on.
#[procedure]
pub fn dfs(
    ctx: &mut ProcedureContext,
    start: u64,
    direction: String,
    edge_labels: Vec<String>,
    vertex_labels: Vec<String>,
    max_depth: Option<u32>,
    vertex_limit: u32,
    tx_budget: u32,
    yield_every_us: u32,
) -> Result<DfsResult, GraphError> {
    let dir = parse_direction(&direction)?;
    let max_depth = check_depth(max_depth)?;
    check_vertex_limit(vertex_limit)?;
    let query = DfsQuery {
        start,
        dir,
        max_depth,
        collect_limit: vertex_limit as usize,
    };
    let mut runner = TxRunner::new(ctx, or_default(yield_every_us, DEFAULT_YIELD_EVERY_US));
    let (begin, filter) = begin(&mut runner, &[start], &edge_labels, &vertex_labels, start)?;
    let bound = id_bound(&begin.meta);
    if let Some(snap) = begin.snapshot {
        let (outcome, work) = in_snapshot(&mut runner, &snap, begin.existing, &filter, |_| {
            Dfs::new(query, bound)
        });
        return dfs_result(start, outcome, snapshot_stats(runner, work, snap));
    }
    let pin = RefCell::new(Pin::new(begin.meta.version));
    let search = RefCell::new(Dfs::new(query, bound));
    through_indexes(&mut runner, tx_budget, &search, &pin, &filter, &|_| false);
    let (outcome, work) = search.into_inner().into_outcome();
    dfs_result(start, outcome, index_stats(runner, work, &pin))
}

fn dfs_result(start: u64, outcome: DfsOutcome, stats: QueryStats) -> Result<DfsResult, GraphError> {
    match outcome {
        DfsOutcome::UnknownStart => Err(GraphError::UnknownVertex(start)),
        DfsOutcome::TooCostly { spent, ball } => Err(GraphError::InvalidArgument(format!(
            "max_depth is too large for a DFS here: finding every vertex within that many hops \
             in DFS order re-enters vertices reached again by shorter routes, up to max_depth \
             times each; this one stopped after {spent} units of work (reading those vertices \
             once took {ball}). Use bfs for the vertices within max_depth hops, dfs without \
             max_depth, or a smaller max_depth"
        ))),
        DfsOutcome::Visited {
            visited,
            vertices,
            deepest,
        } => Ok(DfsResult {
            start,
            visited,
            deepest,
            vertices,
            stats,
        }),
    }
}

/// A shortest path from `source` to `target` following `direction` over the edges with one of
/// `edge_labels` (as for `neighbor_count`), by balanced bidirectional BFS; `max_depth` bounds its
/// length in hops. Budget and yield arguments as for `bfs`. Runs on this instance's snapshot of
/// the graph, brought up to date, if it has one (or its traversals have paid for one, see
/// `snapshot`), otherwise through the indexes, pinned to the version it started on.
#[procedure]
pub fn shortest_path(
    ctx: &mut ProcedureContext,
    source: u64,
    target: u64,
    direction: String,
    edge_labels: Vec<String>,
    vertex_labels: Vec<String>,
    max_depth: Option<u32>,
    tx_budget: u32,
    yield_every_us: u32,
) -> Result<PathResult, GraphError> {
    let dir = parse_direction(&direction)?;
    let max_depth = check_depth(max_depth)?;
    let query = PathQuery {
        source,
        target,
        dir,
        max_depth,
    };
    let mut runner = TxRunner::new(ctx, or_default(yield_every_us, DEFAULT_YIELD_EVERY_US));
    let (begin, filter) = begin(
        &mut runner,
        &[source, target],
        &edge_labels,
        &vertex_labels,
        source,
    )?;
    if let Some(snap) = begin.snapshot {
        let (outcome, work) = in_snapshot(&mut runner, &snap, begin.existing, &filter, |_| {
            ShortestPath::over_slots(query)
        });
        return path_result(source, target, outcome, snapshot_stats(runner, work, snap));
    }
    let pin = RefCell::new(Pin::new(begin.meta.version));
    let search = RefCell::new(ShortestPath::new(query));
    through_indexes(&mut runner, tx_budget, &search, &pin, &filter, &|_| false);
    let (outcome, work) = search.into_inner().into_outcome();
    path_result(source, target, outcome, index_stats(runner, work, &pin))
}

/// A path of least total weight from `source` to `target` following `direction` over the
/// edges with one of `edge_labels` (as for `neighbor_count`), by bidirectional Dijkstra (edge
/// weights are never negative: loads refuse them). Budget and yield arguments as for `bfs`; runs
/// on this instance's snapshot if it has one (or its traversals have paid for one, see
/// `snapshot`), goal-directed by landmarks
/// that the first such query builds there (`snapshot::prepare_landmarks`), otherwise through
/// the indexes, pinned to the version it started on.
#[procedure]
pub fn weighted_shortest_path(
    ctx: &mut ProcedureContext,
    source: u64,
    target: u64,
    direction: String,
    edge_labels: Vec<String>,
    vertex_labels: Vec<String>,
    tx_budget: u32,
    yield_every_us: u32,
) -> Result<WeightedPathResult, GraphError> {
    let dir = parse_direction(&direction)?;
    let mut runner = TxRunner::new(ctx, or_default(yield_every_us, DEFAULT_YIELD_EVERY_US));
    let (begin, filter) = begin(
        &mut runner,
        &[source, target],
        &edge_labels,
        &vertex_labels,
        source,
    )?;
    let bound = id_bound(&begin.meta);
    let new_search = || {
        let query = WeightedQuery {
            source,
            target,
            dir,
        };
        WeightedPath::new(query, bound)
    };
    if let Some(mut snap) = begin.snapshot {
        snapshot::prepare_landmarks(&mut runner, &mut snap);
        let guided = snap.graph.landmarks().is_some();
        let (outcome, work) = in_snapshot(&mut runner, &snap, begin.existing, &filter, |_| {
            new_search()
        });
        if !guided {
            snap.unguided_arcs += work.arcs_scanned;
        }
        return weighted_result(source, target, outcome, snapshot_stats(runner, work, snap));
    }
    let pin = RefCell::new(Pin::new(begin.meta.version));
    let search = RefCell::new(new_search());
    through_indexes(&mut runner, tx_budget, &search, &pin, &filter, &|_| false);
    let (outcome, work) = search.into_inner().into_outcome();
    weighted_result(source, target, outcome, index_stats(runner, work, &pin))
}

fn weighted_result(
    source: u64,
    target: u64,
    outcome: WeightedOutcome,
    stats: QueryStats,
) -> Result<WeightedPathResult, GraphError> {
    let (status, path, weight) = match outcome {
        WeightedOutcome::Found { path, weight } => (PathStatus::Found, path, weight),
        WeightedOutcome::Unreachable => (PathStatus::Unreachable, Vec::new(), 0.0),
        WeightedOutcome::UnknownSource => return Err(GraphError::UnknownVertex(source)),
        WeightedOutcome::UnknownTarget => return Err(GraphError::UnknownVertex(target)),
    };
    Ok(WeightedPathResult {
        source,
        target,
        status,
        hops: path.len().saturating_sub(1) as u32,
        path,
        weight,
        stats,
    })
}

pub(crate) fn path_result(
    source: u64,
    target: u64,
    outcome: PathOutcome,
    stats: QueryStats,
) -> Result<PathResult, GraphError> {
    let (status, path) = match outcome {
        PathOutcome::Found(path) => (PathStatus::Found, path),
        PathOutcome::Unreachable => (PathStatus::Unreachable, Vec::new()),
        PathOutcome::BeyondMaxDepth => (PathStatus::BeyondMaxDepth, Vec::new()),
        PathOutcome::UnknownSource => return Err(GraphError::UnknownVertex(source)),
        PathOutcome::UnknownTarget => return Err(GraphError::UnknownVertex(target)),
    };
    Ok(PathResult {
        source,
        target,
        status,
        path,
        stats,
    })
}

/// Does nothing: the round-trip floor of a procedure call (measured by the benchmark).
#[procedure]
pub fn noop_procedure(_ctx: &mut ProcedureContext) {}

/// Does nothing: the round-trip floor of a reducer call (measured by the benchmark).
#[spacetimedb::reducer]
pub fn noop_reducer(_ctx: &spacetimedb::ReducerContext) {}

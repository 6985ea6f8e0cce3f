//! Stage-1 baselines, kept only to be measured side by side with Stage 2. Do not use them for
//! anything else: every query scans the whole edge table.
//!
//! - `*_full_scan` procedures: one transaction reads every edge into an in-memory adjacency map and
//!   traverses it (unidirectional BFS, also for shortest paths), as the earlier module did.
//! - `*_full_scan_reducer` reducers: the same work in a reducer, which writes its answer into
//!   `traversal_result` for the client to read back with SQL (the pre-procedure style).

use crate::edges;
use crate::procedures::{bfs_result, path_result};
use crate::schema::{TraversalResult, traversal_result, vertex};
use crate::types::*;
use graph_traverse::{AdjacencyGraph, Bfs, BfsOutcome, BfsQuery, Direction, PathOutcome};
use spacetimedb::{Local, ProcedureContext, ReducerContext, Table, procedure, reducer};

/// The whole graph, read with one table scan per table.
fn scan_graph(db: &Local) -> AdjacencyGraph {
    let mut arcs: Vec<(u64, u64)> = Vec::new();
    edges::for_each(db, |e| arcs.push((e.src, e.dst)));
    AdjacencyGraph::new(db.vertex().iter().map(|v| v.id), &arcs)
}

/// Unidirectional BFS over a scanned graph; with a target it stops there (shortest path).
fn scan_and_search(db: &Local, query: BfsQuery) -> (BfsOutcome, graph_traverse::Work) {
    let graph = scan_graph(db);
    let (outcome, mut work) = Bfs::new(query, None).run(&graph);
    work.arcs_scanned += graph.arc_count() as u64;
    (outcome, work)
}

fn bfs_query(start: u64, dir: Direction, max_depth: Option<u32>, target: Option<u64>) -> BfsQuery {
    BfsQuery {
        start,
        dir,
        max_depth,
        target,
        collect_limit: 0,
    }
}

/// Converts a target search's outcome to the shortest-path answer.
fn target_outcome(outcome: BfsOutcome, target_known: bool, max_depth: Option<u32>) -> PathOutcome {
    match outcome {
        BfsOutcome::UnknownStart => PathOutcome::UnknownSource,
        _ if !target_known => PathOutcome::UnknownTarget,
        BfsOutcome::Visited {
            path: Some(path), ..
        } => PathOutcome::Found(path),
        BfsOutcome::Visited { .. } if max_depth.is_some() => PathOutcome::BeyondMaxDepth,
        BfsOutcome::Visited { .. } => PathOutcome::Unreachable,
    }
}

/// Stage 1: neighbor count by scanning every edge.
#[procedure]
pub fn neighbor_count_full_scan(
    ctx: &mut ProcedureContext,
    vertex: u64,
    direction: String,
) -> Result<NeighborCount, GraphError> {
    let dir = parse_direction(&direction)?;
    let mut runner = crate::tx_runner::TxRunner::new(ctx, u32::MAX);
    let count = runner.run(|tx| {
        crate::bulk::ready(&tx.db)?;
        let graph = scan_graph(&tx.db);
        let mut page = Vec::new();
        graph_traverse::NeighborSource::neighbors(&graph, vertex, dir, &mut page);
        let mut neighbors: Vec<u64> = page.iter().map(|n| n.id).collect();
        neighbors.sort_unstable();
        neighbors.dedup();
        let count = graph_traverse::NeighborSource::contains(&graph, vertex)
            .then_some(neighbors.len() as u64);
        count.ok_or(GraphError::UnknownVertex(vertex))
    })?;
    Ok(NeighborCount {
        vertex,
        count,
        stats: runner.finish(),
    })
}

/// Stage 1: BFS in one transaction over a full edge scan.
#[procedure]
pub fn bfs_full_scan(
    ctx: &mut ProcedureContext,
    start: u64,
    direction: String,
    max_depth: Option<u32>,
) -> Result<BfsResult, GraphError> {
    let dir = parse_direction(&direction)?;
    let max_depth = check_depth(max_depth)?;
    let mut runner = crate::tx_runner::TxRunner::new(ctx, u32::MAX);
    let (outcome, work) = runner.run(|tx| {
        crate::bulk::ready(&tx.db)?;
        Ok(scan_and_search(
            &tx.db,
            bfs_query(start, dir, max_depth, None),
        ))
    })?;
    let mut stats = runner.finish();
    stats.add_work(work);
    bfs_result(start, outcome, stats)
}

/// Stage 1: unidirectional shortest path in one transaction over a full edge scan.
#[procedure]
pub fn shortest_path_full_scan(
    ctx: &mut ProcedureContext,
    source: u64,
    target: u64,
    direction: String,
    max_depth: Option<u32>,
) -> Result<PathResult, GraphError> {
    let dir = parse_direction(&direction)?;
    let max_depth = check_depth(max_depth)?;
    let mut runner = crate::tx_runner::TxRunner::new(ctx, u32::MAX);
    let (outcome, work) = runner.run(|tx| {
        crate::bulk::ready(&tx.db)?;
        let known = tx.db.vertex().id().find(target).is_some();
        let (outcome, work) =
            scan_and_search(&tx.db, bfs_query(source, dir, max_depth, Some(target)));
        Ok((target_outcome(outcome, known, max_depth), work))
    })?;
    let mut stats = runner.finish();
    stats.add_work(work);
    path_result(source, target, outcome, stats)
}

/// Replaces the rows of `query_id` in `traversal_result` with `values` (position = index).
fn write_result(ctx: &ReducerContext, query_id: u64, values: &[u64]) {
    ctx.db.traversal_result().query_id().delete(query_id);
    for (position, &value) in values.iter().enumerate() {
        ctx.db.traversal_result().insert(TraversalResult {
            row_id: 0,
            query_id,
            ordinal: position as u32,
            value,
        });
    }
}

/// Stage 1, reducer style: BFS over a full scan; writes one row per level (vertex counts).
#[reducer]
pub fn bfs_full_scan_reducer(
    ctx: &ReducerContext,
    query_id: u64,
    start: u64,
    direction: String,
    max_depth: Option<u32>,
) -> Result<(), String> {
    // It writes `traversal_result`, which every identity reads.
    crate::access::check_writer(ctx)?;
    let dir = parse_direction(&direction).map_err(|e| e.to_string())?;
    let max_depth = check_depth(max_depth).map_err(|e| e.to_string())?;
    crate::bulk::ready(&ctx.db).map_err(|e| e.to_string())?;
    match scan_and_search(&ctx.db, bfs_query(start, dir, max_depth, None)).0 {
        BfsOutcome::UnknownStart => Err(GraphError::UnknownVertex(start).to_string()),
        BfsOutcome::Visited { levels, .. } => {
            write_result(ctx, query_id, &levels);
            Ok(())
        }
    }
}

/// Stage 1, reducer style: unidirectional shortest path over a full scan; writes one row per
/// path vertex (no rows: no path within `max_depth`).
#[reducer]
pub fn shortest_path_full_scan_reducer(
    ctx: &ReducerContext,
    query_id: u64,
    source: u64,
    target: u64,
    direction: String,
    max_depth: Option<u32>,
) -> Result<(), String> {
    // It writes `traversal_result`, which every identity reads.
    crate::access::check_writer(ctx)?;
    let dir = parse_direction(&direction).map_err(|e| e.to_string())?;
    let max_depth = check_depth(max_depth).map_err(|e| e.to_string())?;
    crate::bulk::ready(&ctx.db).map_err(|e| e.to_string())?;
    let known = ctx.db.vertex().id().find(target).is_some();
    let query = bfs_query(source, dir, max_depth, Some(target));
    match target_outcome(scan_and_search(&ctx.db, query).0, known, max_depth) {
        PathOutcome::UnknownSource => Err(GraphError::UnknownVertex(source).to_string()),
        PathOutcome::UnknownTarget => Err(GraphError::UnknownVertex(target).to_string()),
        PathOutcome::Found(path) => {
            write_result(ctx, query_id, &path);
            Ok(())
        }
        PathOutcome::Unreachable | PathOutcome::BeyondMaxDepth => {
            write_result(ctx, query_id, &[]);
            Ok(())
        }
    }
}

//! An in-memory snapshot of the whole graph, for traversals that would otherwise read most of
//! it through the indexes, one neighbor list at a time.
//!
//! Reading one vertex's arcs costs an index lookup and a host call; reading the edge table in
//! index order costs a host call per page of rows. So once a BFS has read a large share of the
//! graph ([`worth_building`]), the procedure reads all of it in index order instead, in short
//! paced transactions, into an [`AdjacencyGraph`] in this module instance's memory, and finishes
//! there, yielding as it goes.
//!
//! Many small traversals build one too (the owner may turn this off, `set_snapshot_policy`):
//! once an instance's traversals have together read through the indexes as many arcs as a build
//! reads, the next one builds it first. Building then costs at most what reading through the
//! indexes has already cost, and every traversal after it reads from memory (the ski-rental
//! rule), so a stream of shallow queries under steady writes stops paying about 1 µs per arc.
//!
//! A snapshot follows the writes: every query first brings this instance's snapshot up to the
//! current version by applying the change log (`change_log`) in short transactions ([`start`]),
//! which costs time in proportion to the changes, and compacts it once the changes are a
//! quarter of its size. It is dropped, and rebuilt by the next large BFS, only when the log no
//! longer covers its version (a bulk load or `clear_graph` resets the log). A build reads windows
//! of the edge table at whatever versions they commit at and then replays the log from the
//! version it started on: an arc's last logged change decides it, and an arc without one was the
//! same at every version read, so the result is exactly the graph at the version caught up to.
//!
//! The engine runs procedures on a small pool of module instances, each with its own memory, so
//! each instance that runs a large BFS builds and holds its own snapshot. Each reports its
//! snapshot's version and size, measured by its allocator, in the `snapshot_holder` table (which
//! `graph_info` returns), and at most [`MAX_SNAPSHOTS`] instances (or the owner's setting) hold
//! one at a time: an instance that would be one too many keeps its traversals on the indexes.

use crate::access;
use crate::changelog;
use crate::edges;
use crate::labels;
use crate::memory;
use crate::schema::{
    GraphMeta, NO_LABEL, SnapshotHolder, SnapshotPolicy, meta, snapshot_holder, snapshot_policy,
    vertex,
};
use crate::tx_runner::{Budget, TxRunner};
use crate::types::GraphError;
use graph_traverse::{
    AdjacencyBuilder, AdjacencyGraph, ArcFilter, DenseSource, Direction, LANDMARKS,
    LandmarkBuilder, Progress,
};
use spacetimedb::{Local, ReducerContext, Table, reducer};
use std::cell::{Cell, RefCell};

/// A BFS switches to a snapshot once it has read more arcs than the graph's edges divided by
/// this: reading the rest through the indexes would then cost more than reading everything in
/// order (about 1 µs per arc through the indexes on an LJ-sized graph).
const SWITCH_DIVISOR: u64 = 4;
/// Largest graph a snapshot is built for: about 12 bytes per edge while building, within the
/// 4 GiB of a wasm32 instance with room to spare.
const MAX_SNAPSHOT_EDGES: u64 = 150_000_000;
/// A snapshot is compacted once its rewritten rows hold this share of its compressed rows.
const COMPACT_SHARE: f64 = 0.25;
/// Most instances that may hold a snapshot at once unless the owner sets otherwise: each costs a
/// copy of the graph.
pub const MAX_SNAPSHOTS: u32 = 2;
/// Largest landmark table a snapshot builds, bytes (8 per landmark and slot): 8M slots.
const MAX_LANDMARK_BYTES: u64 = 512 << 20;
/// A holder row not updated for this long is taken to be from an instance that is gone. The
/// module cannot tell an idle instance from one a restart took away: the rows of a stopped or
/// crashed host's instances stay, and until they expire they keep new instances from building
/// (an audit saw every large BFS walk the indexes for 15 minutes after two restarts, when this
/// was 15 minutes). Short, then, with the refresh below well inside it.
const HOLDER_EXPIRY_US: i64 = 2 * 60 * 1_000_000;
/// An instance whose snapshot is in use reports it again at least this often, changed or not,
/// so that its row does not expire while it still holds one (a small write every 30 s at most).
const HOLDER_REFRESH_US: i64 = 30 * 1_000_000;
/// An instance reports its snapshot's version and size at most this often, unless its size
/// moved by more than an eighth: under steady writes every query moves the version, and a
/// report per query would add a write transaction to every read.
const REPORT_EVERY_US: i64 = 5 * 1_000_000;

/// The whole graph at one version.
pub struct Snapshot {
    pub version: u64,
    pub graph: AdjacencyGraph,
    /// Heap bytes it holds, as the allocator counted them while it was built and updated.
    pub bytes: u64,
    /// Arcs that weighted searches on it have read without landmarks since they were last
    /// built, and whether they ever were (see [`prepare_landmarks`]).
    pub unguided_arcs: u64,
    pub built_landmarks: bool,
}

thread_local! {
    static CURRENT: RefCell<Option<Snapshot>> = const { RefCell::new(None) };
    /// This instance's id in `snapshot_holder` (0 until drawn), and the (version, bytes, time
    /// in µs) it last reported there (`None`: no row).
    static INSTANCE: Cell<u64> = const { Cell::new(0) };
    static REPORTED: Cell<Option<(u64, u64, i64)>> = const { Cell::new(None) };
    /// Arcs this instance's traversals have read through the indexes since it last built a
    /// snapshot or was refused one (see [`paid_for_a_build`]).
    static INDEX_ARCS: Cell<u64> = const { Cell::new(0) };
}

/// The owner's snapshot policy, or the defaults.
pub fn policy(db: &Local) -> SnapshotPolicy {
    db.snapshot_policy().id().find(0).unwrap_or(SnapshotPolicy {
        id: 0,
        max_snapshots: MAX_SNAPSHOTS,
        build_for_small_traversals: true,
    })
}

/// Sets which instances may build a snapshot (owner only): at most `max_snapshots` at once (0:
/// none), and whether many small traversals build one as a large BFS does. A lower limit also
/// applies to the snapshots held: the instances beyond it drop theirs at their next query (see
/// [`beyond_policy`]).
#[reducer]
pub fn set_snapshot_policy(
    ctx: &ReducerContext,
    max_snapshots: u32,
    build_for_small_traversals: bool,
) -> Result<(), String> {
    access::check_owner(ctx, "set the snapshot policy")?;
    let row = SnapshotPolicy {
        id: 0,
        max_snapshots,
        build_for_small_traversals,
    };
    let policies = ctx.db.snapshot_policy();
    if policies.id().find(0).is_some() {
        policies.id().update(row);
    } else {
        policies.insert(row);
    }
    Ok(())
}

/// Counts `arcs` that a traversal of this instance read through the indexes.
pub fn count_index_arcs(arcs: u64) {
    INDEX_ARCS.set(INDEX_ARCS.get().saturating_add(arcs));
}

/// Whether this instance's traversals have together read through the indexes as many arcs as a
/// build of the graph `meta` describes would read (all of them), and `policy` lets that build one.
fn paid_for_a_build(meta: &GraphMeta, policy: &SnapshotPolicy) -> bool {
    policy.build_for_small_traversals
        && policy.max_snapshots > 0
        && meta.edges <= MAX_SNAPSHOT_EDGES
        && INDEX_ARCS.get() >= meta.edges.max(1)
}

fn instance(runner: &TxRunner) -> u64 {
    if INSTANCE.get() == 0 {
        INSTANCE.set(runner.random_u64().max(1));
    }
    INSTANCE.get()
}

/// Takes this instance's snapshot, to bring it up to date and use it; [`keep`] puts it back.
pub fn take() -> Option<Snapshot> {
    CURRENT.take()
}

/// Keeps `snapshot` as this instance's snapshot for later queries, and reports it in
/// `snapshot_holder` if it has no row yet, or its version or size changed since the last report
/// and [`REPORT_EVERY_US`] have passed or the size moved by more than an eighth, or
/// [`HOLDER_REFRESH_US`] have passed. An instance whose row expired (idle for
/// [`HOLDER_EXPIRY_US`]) counts as a new holder again: it drops its snapshot if as many others
/// hold one as the owner's policy allows.
pub fn keep(runner: &mut TxRunner, snapshot: Snapshot) {
    let now_us = runner.now_us();
    if report_due(REPORTED.get(), (snapshot.version, snapshot.bytes), now_us) {
        let me = instance(runner);
        let (edges, memory) = (
            snapshot.graph.arc_count() as u64,
            memory::linear_memory_bytes(),
        );
        let kept = runner.write(|tx| {
            admit(
                &tx.db,
                SnapshotHolder {
                    instance: me,
                    version: snapshot.version,
                    edges,
                    bytes: snapshot.bytes,
                    instance_memory_bytes: memory,
                    updated: tx.timestamp,
                },
            )
        });
        if let Err(others) = kept {
            log::info!("snapshot dropped: {others} other instances hold one since this one idled");
            REPORTED.set(None);
            return;
        }
        REPORTED.set(Some((snapshot.version, snapshot.bytes, now_us)));
    }
    CURRENT.set(Some(snapshot));
}

/// Whether an instance that last reported `reported` (version, bytes, time in µs; `None`: no
/// row) should report its snapshot of (version, bytes) `now_us`: see [`keep`].
fn report_due(reported: Option<(u64, u64, i64)>, now: (u64, u64), now_us: i64) -> bool {
    let Some((was_version, was_bytes, at)) = reported else {
        return true;
    };
    let (version, bytes) = now;
    let moved = bytes.abs_diff(was_bytes) > was_bytes / 8;
    let changed = version != was_version || bytes != was_bytes;
    let refresh = now_us - at >= HOLDER_REFRESH_US;
    changed && (moved || now_us - at >= REPORT_EVERY_US) || refresh
}

/// Writes `row` as its instance's `snapshot_holder` row if that instance is counted already
/// (its row has not expired), or if fewer other instances hold a snapshot than the owner's
/// policy allows; else removes its row and returns how many others hold one. Called in the
/// transaction that decides, so that instances deciding at once cannot all pass.
fn admit(db: &Local, row: SnapshotHolder) -> Result<(), u32> {
    let table = db.snapshot_holder();
    let mine = table.instance().find(row.instance);
    if !mine
        .as_ref()
        .is_some_and(|h| reported_since(h, row.updated))
    {
        let others = holders(db, row.updated)
            .iter()
            .filter(|h| h.instance != row.instance)
            .count() as u32;
        if others >= policy(db).max_snapshots {
            table.instance().delete(row.instance);
            return Err(others);
        }
    }
    if mine.is_some() {
        table.instance().update(row);
    } else {
        table.insert(row);
    }
    Ok(())
}

/// Whether instance `me`, which holds a snapshot, must drop it: the owner's policy allows none,
/// or fewer than hold one (the limit was lowered since they were built) and `me` is not among
/// the live holders with the lowest instance numbers, which keep theirs. Every instance ranks
/// the same rows, so the holders that remain are as many as the policy allows.
fn beyond_policy(
    db: &Local,
    me: u64,
    now: spacetimedb::Timestamp,
    policy: &SnapshotPolicy,
) -> bool {
    if policy.max_snapshots == 0 {
        return true;
    }
    let mut live: Vec<u64> = holders(db, now).iter().map(|h| h.instance).collect();
    if live.len() as u64 <= u64::from(policy.max_snapshots) {
        return false;
    }
    live.sort_unstable();
    live.iter()
        .position(|&i| i == me)
        .is_some_and(|rank| rank as u64 >= u64::from(policy.max_snapshots))
}

/// Removes this instance's `snapshot_holder` row after its snapshot was dropped.
fn forget(runner: &mut TxRunner) {
    if REPORTED.take().is_some() {
        let me = instance(runner);
        runner.write(|tx| tx.db.snapshot_holder().instance().delete(me));
    }
}

/// The holders that reported within the last [`HOLDER_EXPIRY_US`].
pub fn holders(db: &Local, now: spacetimedb::Timestamp) -> Vec<SnapshotHolder> {
    db.snapshot_holder()
        .iter()
        .filter(|h| reported_since(h, now))
        .collect()
}

/// Whether `holder` reported within [`HOLDER_EXPIRY_US`] before `now`.
fn reported_since(holder: &SnapshotHolder, now: spacetimedb::Timestamp) -> bool {
    now.to_micros_since_unix_epoch() - holder.updated.to_micros_since_unix_epoch()
        < HOLDER_EXPIRY_US
}

/// Whether a traversal that has read `arcs_scanned` arcs of the graph described by `meta`
/// should finish on a snapshot (if the owner's policy lets one be built, see [`build`]).
pub fn worth_building(meta: &GraphMeta, arcs_scanned: u64) -> bool {
    meta.edges <= MAX_SNAPSHOT_EDGES && arcs_scanned.saturating_mul(SWITCH_DIVISOR) > meta.edges
}

/// Where a query starts: the graph's meta row and which of its endpoints exist, read in one
/// transaction, the query's filter read in the first one, and the snapshot brought to that
/// transaction's version if it could be.
pub struct Start {
    pub meta: GraphMeta,
    pub existing: Vec<u64>,
    pub snapshot: Option<Snapshot>,
    pub filter: Result<ArcFilter, GraphError>,
}

/// Reads the meta row, which of `endpoints` exist and the filter `read_filter` builds (label
/// names to ids: in the same transaction, so that a filtered query costs no transaction more),
/// and brings `snapshot` up to that version by applying the change log in transactions of about
/// [`changelog::CATCH_UP_ROWS`] changes (compacting it if they have grown large). The snapshot is dropped if
/// the log no longer covers its version, or if the owner's policy allows none. Without one,
/// builds one first if this instance's traversals have paid for it ([`paid_for_a_build`]).
pub fn start(
    runner: &mut TxRunner,
    endpoints: &[u64],
    mut snapshot: Option<Snapshot>,
    read_filter: &dyn Fn(&Local) -> Result<ArcFilter, GraphError>,
) -> Start {
    let me = instance(runner);
    let mut versions = changelog::FIRST_CATCH_UP_SPAN;
    let started = runner.now_us();
    let mut caught_up = false;
    let mut filter = None;
    loop {
        let behind = snapshot.as_ref().map(|s| s.version);
        let first = filter.is_none();
        let (meta, policy, beyond, existing, pending, read) = runner.run(|tx| {
            let read = first.then(|| read_filter(&tx.db));
            let meta = meta(&tx.db);
            let policy = policy(&tx.db);
            let beyond = behind.is_some() && beyond_policy(&tx.db, me, tx.timestamp, &policy);
            let existing = endpoints
                .iter()
                .copied()
                .filter(|&v| tx.db.vertex().id().find(v).is_some())
                .collect::<Vec<_>>();
            // None: nothing to catch up; Some(None): the log cannot bring it here.
            let pending = match behind {
                None => None,
                Some(v) if v == meta.version => None,
                Some(v) if v > meta.version => Some(None),
                Some(v) => {
                    let to = meta.version.min(v.saturating_add(versions));
                    Some(changelog::read(&tx.db, v + 1..=to).map(|c| (to, c)))
                }
            };
            (meta, policy, beyond, existing, pending, read)
        });
        if let Some(read) = read {
            filter = Some(read);
        }
        if beyond && snapshot.is_some() {
            log::info!(
                "snapshot dropped: the owner's policy allows {} and more instances hold one",
                policy.max_snapshots
            );
            snapshot = None;
            forget(runner);
        }
        let pending = if snapshot.is_some() { pending } else { None };
        // A query refused (an unknown label, a bulk load under way) builds nothing.
        let refused = matches!(filter, Some(Err(_)));
        if snapshot.is_none() && !refused && paid_for_a_build(&meta, &policy) {
            snapshot = build(runner, &meta, 0);
            if snapshot.is_some() {
                continue; // Bring it to the current version.
            }
        }
        let done = match pending {
            None => true,
            Some(None) => {
                log::info!(
                    "snapshot of version {} dropped: the change log no longer covers it (now {})",
                    behind.unwrap_or_default(),
                    meta.version
                );
                snapshot = None;
                forget(runner);
                false
            }
            Some(Some((to, changes))) => {
                let s = snapshot.as_mut().expect("only a snapshot is caught up");
                let rows = changes.len() as u64;
                // Measured while `changes` is still allocated: only the graph's growth counts.
                let before = memory::heap_bytes();
                // In paced steps: tens of thousands of changes can take over 10 ms.
                let mut rest = &changes[..];
                runner.compute_paced(|units| {
                    // At least one change a step; none when the versions logged none.
                    let (now, later) = rest.split_at((units as usize).max(1).min(rest.len()));
                    s.graph.apply(now.iter().copied());
                    rest = later;
                    if rest.is_empty() {
                        Progress::Done
                    } else {
                        Progress::Suspended
                    }
                });
                s.bytes = (s.bytes + memory::heap_bytes()).saturating_sub(before);
                s.version = to;
                runner.stats.changes_applied += rows;
                caught_up = true;
                versions = changelog::next_catch_up_span(versions, rows);
                // Read up to the version of that transaction: nothing is left to confirm.
                to == meta.version
            }
        };
        if done {
            if caught_up && let Some(s) = snapshot.as_mut() {
                let before = memory::heap_bytes();
                compact(runner, &mut s.graph);
                s.bytes = (s.bytes + memory::heap_bytes()).saturating_sub(before);
                runner.stats.catch_up_us += (runner.now_us() - started).max(0) as u64;
            }
            return Start {
                meta,
                existing,
                snapshot,
                filter: filter.expect("read in the first transaction"),
            };
        }
    }
}

/// Gives `snapshot` landmarks for a weighted search (see `graph_traverse::Landmarks`), built in
/// paced steps, if it has none: at once the first time, since a user asking for weighted paths
/// on a graph will ask again. A write that adds an arc or a vertex drops them; then they are
/// rebuilt only once the weighted searches since have read as many arcs as the build will
/// (the build reads every arc once per landmark and once more), so that under steady writes
/// rebuilding costs at most as much again as searching without them. Graphs whose table would
/// exceed [`MAX_LANDMARK_BYTES`] get none, nor do those whose distances a build finds cannot be
/// summed exactly (weights too far apart; retried, as a dropped table is rebuilt, only after as
/// much unguided work, since writes may have changed that).
pub fn prepare_landmarks(runner: &mut TxRunner, snapshot: &mut Snapshot) {
    let graph = &mut snapshot.graph;
    let table_bytes = (graph.slots() * LANDMARKS * 8) as u64;
    let build_arcs = (LANDMARKS as u64 + 1) * graph.arc_total(Direction::Both);
    if graph.landmarks().is_some()
        || table_bytes > MAX_LANDMARK_BYTES
        || (snapshot.built_landmarks && snapshot.unguided_arcs < build_arcs)
    {
        return;
    }
    let before = memory::heap_bytes();
    let started = runner.now_us();
    let mut builder = LandmarkBuilder::new(&*graph);
    runner.compute_paced(|units| builder.step(&*graph, units));
    let built = builder.finish();
    let outcome = match built.is_some() {
        true => "built",
        false => "not kept (its distances cannot all be summed exactly: weights too far apart)",
    };
    if let Some(table) = built {
        graph.set_landmarks(table);
    }
    snapshot.bytes = (snapshot.bytes + memory::heap_bytes()).saturating_sub(before);
    snapshot.built_landmarks = true;
    snapshot.unguided_arcs = 0;
    log::info!(
        "landmarks for weighted paths {outcome} on the snapshot of version {}: {} slots, {} ms",
        snapshot.version,
        graph.slots(),
        (runner.now_us() - started) / 1000
    );
}

/// Folds `graph`'s rewritten rows into its compressed rows, in paced steps, once they are
/// [`COMPACT_SHARE`] of them (or finishes a compaction under way).
fn compact(runner: &mut TxRunner, graph: &mut AdjacencyGraph) {
    let stats = graph.overlay_stats();
    if !stats.compacting && stats.share() < COMPACT_SHARE {
        return;
    }
    runner.compute_paced(|units| graph.compact_step(units));
}

/// Reads every edge of the graph in index order, in transactions of about `tx_budget` rows
/// (0: paced), starting at version `meta.version`; the windows may read later versions,
/// so the result must be brought up to date by [`start`] before it is used. `None` if as many
/// other instances hold one as the owner's policy allows, or if the scan was refused (both
/// logged).
pub fn build(runner: &mut TxRunner, meta: &GraphMeta, tx_budget: u32) -> Option<Snapshot> {
    CURRENT.set(None); // Free the old one before building the next.
    INDEX_ARCS.set(0); // Built or refused: the reads so far are spent either way.
    let me = instance(runner);
    // This instance's place is taken (a row with no edges yet) in the transaction that checks
    // there is one, so that builds starting together cannot all pass the check.
    let memory = memory::linear_memory_bytes();
    let admitted = runner.write(|tx| {
        let row = SnapshotHolder {
            instance: me,
            version: meta.version,
            edges: 0,
            bytes: 0,
            instance_memory_bytes: memory,
            updated: tx.timestamp,
        };
        admit(&tx.db, row)
    });
    if let Err(others) = admitted {
        log::info!("no snapshot built: {others} other instances hold one, as many as allowed");
        REPORTED.set(None);
        return None;
    }
    REPORTED.set(Some((meta.version, 0, runner.now_us())));
    let before = memory::heap_bytes();
    // Room for what writers may add during the scan (a build of the LJ-sized graph takes about
    // 20 s), so that its arrays need not grow: growing copies them, and wasm memory never
    // shrinks.
    let slack = |n: u64| (n + n / 64 + 1_024) as usize;
    let mut builder = AdjacencyBuilder::with_capacity(slack(meta.vertices), slack(meta.edges));
    let mut budget = Budget::from_arg(tx_budget);
    // The scan reads windows of source ids, sized so that a window holds about a budget of
    // edges: a range scan hands over all its rows at once, so it must be bounded at both ends.
    // The first window is sized as if the ids were dense (vertices / edges ids an edge); where
    // they are sparser, windows double from there. Sizing it by the largest id would read the
    // whole graph in one transaction once a few far-off ids exist (writers adding fresh
    // vertices did: 1M edges held for 255 ms). Vertices above `max_vertex_id` that writers add
    // meanwhile come from the log's replay.
    let ids_per_edge = meta.vertices.max(1) as f64 / meta.edges.max(1) as f64;
    let mut width = ((budget.units() as f64 * ids_per_edge) as u64).max(1);
    let mut from = 0u64;
    while from <= meta.max_vertex_id {
        let to = from.saturating_add(width - 1);
        // The transaction only reads; the arcs are added to the builder after it.
        let arcs = runner.run(|tx| edges::out_of(&tx.db, from..=to, edges::any_wide(&tx.db)));
        let rows = arcs.len() as u64;
        let first = arcs.first().map(|a| a.src);
        let added =
            builder.add_attributed_arcs(arcs.into_iter().map(|a| (a.src, a.dst, a.attrs())));
        if let Err(error) = added {
            log::warn!("snapshot abandoned: the edge scan gave {error:?}");
            forget(runner);
            return None;
        }
        runner.observe(&mut budget, rows);
        if to == u64::MAX {
            break;
        }
        from = to + 1;
        width = next_width(width, to, first, rows, budget.units());
    }
    let scanned = memory::linear_memory_bytes();
    runner.compute_paced(|units| builder.finish_step(units));
    let mut graph = builder.into_graph();
    read_vertex_labels(runner, meta, &mut graph, tx_budget);
    let bytes = memory::heap_bytes().saturating_sub(before);
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    log::info!(
        "snapshot built from version {}: {} arcs in {:.1} MiB; instance memory {:.1} MiB before, \
         {:.1} MiB after the scan, {:.1} MiB now",
        meta.version,
        graph.arc_count(),
        mib(bytes),
        mib(memory),
        mib(scanned),
        mib(memory::linear_memory_bytes()),
    );
    Some(Snapshot {
        version: meta.version,
        graph,
        bytes,
        unguided_arcs: 0,
        built_landmarks: false,
    })
}

/// The width of the build's next window of source ids, after the window that ended at `to`
/// gave `rows` arcs, the first of them out of `first`, when the next transaction may read
/// `units` arcs. Sized by the density of the ids from `first` on rather than of the whole
/// window: a window that began in a run of unused ids (ids starting at 10,000, say) and ended in
/// dense ones would otherwise size the next for the mean of the two and read several budgets at
/// once. Grows at most twofold, since the ids ahead are unknown (and empty windows must still
/// widen, or a far-off id costs a transaction per id up to it); shrinks at once to fit.
fn next_width(width: u64, to: u64, first: Option<u64>, rows: u64, units: u64) -> u64 {
    let grown = width.saturating_mul(2);
    match first {
        Some(first) if rows > 0 => {
            let span = to.saturating_sub(first).saturating_add(1);
            let fit = (span as f64 * units.max(1) as f64 / rows as f64) as u64;
            fit.clamp(1, grown)
        }
        _ => grown,
    }
}

/// Gives `graph` the labels of the labelled vertices, if any vertex label was ever given (a
/// graph without vertex labels pays nothing). Reads windows of ids by primary key, in
/// transactions of about `tx_budget` lookups, when ids are dense; otherwise scans the vertex
/// table in one transaction. The windows may read later versions, as the edge scan's do.
fn read_vertex_labels(
    runner: &mut TxRunner,
    meta: &GraphMeta,
    graph: &mut AdjacencyGraph,
    tx_budget: u32,
) {
    if !runner.run(|tx| labels::any_vertex_labels(&tx.db)) {
        return;
    }
    let graph = RefCell::new(graph);
    let Some(bound) = crate::procedures::id_bound(meta) else {
        runner.run(|tx| {
            for row in tx.db.vertex().iter().filter(|row| row.label != NO_LABEL) {
                graph.borrow_mut().set_vertex_label(row.id, row.label);
            }
        });
        return;
    };
    let mut budget = Budget::from_arg(tx_budget);
    let mut from = 0u64;
    while from < bound {
        let to = from.saturating_add(budget.units()).min(bound);
        runner.run(|tx| {
            for id in from..to {
                if let Some(row) = tx.db.vertex().id().find(id)
                    && row.label != NO_LABEL
                {
                    graph.borrow_mut().set_vertex_label(id, row.label);
                }
            }
        });
        runner.observe(&mut budget, to - from);
        from = to;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of each window the build reads, over arcs out of `sources` (ascending, one entry
    /// an arc), `units` a window, starting as `build` does.
    fn windows(sources: &[u64], ids: u64, units: u64) -> Vec<u64> {
        let max = *sources.last().unwrap();
        let mut width = ((units as f64 * ids as f64 / sources.len() as f64) as u64).max(1);
        let (mut from, mut rows_each) = (0u64, Vec::new());
        while from <= max {
            let to = from.saturating_add(width - 1);
            let lo = sources.partition_point(|&s| s < from);
            let read = &sources[lo..sources.partition_point(|&s| s <= to)];
            rows_each.push(read.len() as u64);
            from = to + 1;
            width = next_width(width, to, read.first().copied(), read.len() as u64, units);
        }
        rows_each
    }

    #[test]
    fn a_build_window_after_a_run_of_unused_ids_is_sized_for_the_ids_it_reaches() {
        let units = 2_000;
        // Ids 10,000..60,000 with 6 arcs each, none below (an audit's graph): windows double
        // through the unused ids, one reads too much as it crosses into the used ones, and the
        // next is sized for the used ids alone. Sized by the whole window's density instead,
        // and halved when too large, three windows in a row read 16, 8 and 4 budgets.
        let sources: Vec<u64> = (10_000..60_000).flat_map(|v| [v; 6]).collect();
        let rows = windows(&sources, 50_001, units);
        let over: Vec<u64> = rows.iter().copied().filter(|&r| r > 2 * units).collect();
        assert!(over.len() <= 1, "{rows:?}");
        assert_eq!(rows.iter().sum::<u64>(), sources.len() as u64);
        // Dense ids, a sparse stretch, dense ids again: the window sized for the sparse
        // stretch reads the dense ids it reaches (one window of 50 budgets), and only that one.
        let mut sources: Vec<u64> = (0..20_000).flat_map(|v| [v; 5]).collect();
        sources.extend((20_000..2_000_000).step_by(1_000));
        sources.extend((2_000_000..2_020_000).flat_map(|v| [v; 5]));
        let rows = windows(&sources, 42_000, units);
        let over = rows.iter().filter(|&&r| r > 2 * units).count();
        assert!(over <= 1, "{rows:?}");
        // Evenly spread ids need no more windows than a budget each, give or take.
        let sources: Vec<u64> = (0..100_000).flat_map(|v| [v * 3; 4]).collect();
        let rows = windows(&sources, 100_000, units);
        assert!(rows.iter().all(|&r| r <= 2 * units), "{rows:?}");
        assert!(
            rows.len() <= 2 * sources.len() / units as usize + 2,
            "{rows:?}"
        );
    }

    #[test]
    fn a_snapshot_in_use_is_reported_again_before_its_row_expires() {
        const S: i64 = 1_000_000;
        let at = 100 * S;
        let last = Some((7, 1_000, at));
        assert!(report_due(None, (7, 1_000), at));
        // Unchanged: only once the refresh is due, well before the row would expire.
        assert!(!report_due(last, (7, 1_000), at + 20 * S));
        assert!(report_due(last, (7, 1_000), at + HOLDER_REFRESH_US));
        const { assert!(HOLDER_REFRESH_US < HOLDER_EXPIRY_US / 2) };
        // A new version: after REPORT_EVERY_US, or at once if the size moved by over an eighth.
        assert!(!report_due(last, (8, 1_010), at + S));
        assert!(report_due(last, (8, 1_010), at + REPORT_EVERY_US));
        assert!(report_due(last, (8, 1_200), at + S));
    }
}

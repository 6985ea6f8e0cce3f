//! Bulk-load and edit reducers. Each call is one transaction: it either commits whole or, on
//! `Err`, commits nothing. Loads are idempotent: edges are a set keyed by their ends, so
//! re-sending a batch (a retry, or loading the same file twice) leaves the graph as it was. An
//! edge whose ends exist with another label or weight is refused, never silently dropped.

use crate::access::check_writer;
use crate::bulk;
use crate::changelog::Changes;
use crate::edges::{self, Arc, Stored};
use crate::labels;
use crate::rows;
use crate::schema::{
    BulkLoad, GraphMeta, NO_LABEL, Vertex, bulk_load, bulk_mark, meta, ranged, save_meta, vertex,
};
use hashbrown::HashMap;
use spacetimedb::{Local, ReducerContext, Table, reducer};

/// Most edges (or vertices) one call may carry. Two JSON arrays of 200K ids stay well within a
/// 2 MB HTTP body for ids up to 10^6; clients split larger inputs.
pub const MAX_BATCH: usize = 200_000;

fn check_batch(what: &str, len: usize) -> Result<(), String> {
    if len > MAX_BATCH {
        return Err(format!(
            "batch of {len} {what} exceeds the limit of {MAX_BATCH} per call; split it"
        ));
    }
    Ok(())
}

/// Checks that the list `what` has as many entries as the list `of` (`n`).
fn check_len(what: &str, len: usize, of: &str, n: usize) -> Result<(), String> {
    if len != n {
        return Err(format!(
            "{what} has {len} entries but {of} has {n}; they must pair up"
        ));
    }
    Ok(())
}

fn pairs(src: Vec<u64>, dst: Vec<u64>) -> Result<Vec<(u64, u64)>, String> {
    check_len("dst", dst.len(), "src", src.len())?;
    check_batch("edges", src.len())?;
    let mut pairs: Vec<(u64, u64)> = src.into_iter().zip(dst).collect();
    pairs.sort_unstable();
    pairs.dedup();
    Ok(pairs)
}

/// Degree changes per vertex, applied once per vertex at the end of a batch.
#[derive(Default)]
struct DegreeDeltas(HashMap<u64, (i64, i64)>);

impl DegreeDeltas {
    fn arc(&mut self, src: u64, dst: u64, sign: i64) {
        self.shift(src, (sign, 0));
        self.shift(dst, (0, sign));
    }

    /// Adds `(d_out, d_in)` to vertex `v`'s degree changes.
    fn shift(&mut self, v: u64, (d_out, d_in): (i64, i64)) {
        let delta = self.0.entry(v).or_default();
        delta.0 += d_out;
        delta.1 += d_in;
    }

    /// Applies the deltas, creating missing vertices (counted in `meta` and logged).
    ///
    /// The vertex rows are read in id order, [`READ_AHEAD`] at a time: with one range scan
    /// when the ids are dense enough that the range holds few other rows (a bulk load touches
    /// most vertices of a range), else with one lookup each.
    fn apply(self, ctx: &ReducerContext, meta: &mut GraphMeta, changes: &mut Changes) {
        let vertices = ctx.db.vertex();
        let mut deltas: Vec<(u64, (i64, i64))> = self.0.into_iter().collect();
        deltas.sort_unstable_by_key(|&(id, _)| id);
        let mut rows = Vec::with_capacity(READ_AHEAD);
        for chunk in deltas.chunks(READ_AHEAD) {
            let (first, last) = (chunk[0].0, chunk[chunk.len() - 1].0);
            rows.clear();
            if last - first < 4 * chunk.len() as u64 {
                let mut stored = ranged(vertices.id(), &vertices.__backend)
                    .filter(first..=last)
                    .peekable();
                for &(id, _) in chunk {
                    while stored.next_if(|row| row.id < id).is_some() {}
                    rows.push(stored.next_if(|row| row.id == id));
                }
            } else {
                rows.extend(chunk.iter().map(|&(id, _)| vertices.id().find(id)));
            }
            for (&(id, delta), &row) in chunk.iter().zip(&rows) {
                apply_one(ctx, id, delta, row, meta, changes);
            }
        }
    }
}

/// Vertex rows read per range scan or batch of lookups.
const READ_AHEAD: usize = 512;

/// Shifts vertex `id`'s degrees by `(d_out, d_in)`; `row`: its row, or `None` to create it.
fn apply_one(
    ctx: &ReducerContext,
    id: u64,
    (d_out, d_in): (i64, i64),
    row: Option<Vertex>,
    meta: &mut GraphMeta,
    changes: &mut Changes,
) {
    let shift = |degree: u32, delta: i64| (degree as i64 + delta).max(0) as u32;
    let vertices = ctx.db.vertex();
    match row {
        Some(row) => {
            rows::update(
                &vertices.id(),
                &Vertex {
                    out_degree: shift(row.out_degree, d_out),
                    in_degree: shift(row.in_degree, d_in),
                    ..row
                },
            );
        }
        None => {
            rows::insert(
                &vertices,
                &Vertex {
                    out_degree: shift(0, d_out),
                    in_degree: shift(0, d_in),
                    ..Vertex::new(id)
                },
            );
            meta.vertices += 1;
            meta.max_vertex_id = meta.max_vertex_id.max(id);
            changes.insert_vertex(id);
        }
    }
}

/// Inserts the edges `src[i] → dst[i]`, unlabelled and of weight 1, creating missing vertices.
/// Duplicates (within the batch or already stored) are ignored; an edge stored with a label or
/// another weight makes the call fail.
#[reducer]
pub fn add_edges(ctx: &ReducerContext, src: Vec<u64>, dst: Vec<u64>) -> Result<(), String> {
    check_writer(ctx)?;
    let edges = pairs(src, dst)?
        .into_iter()
        .map(|(s, d)| Arc::plain(s, d))
        .collect();
    insert_edges(ctx, edges)
}

/// Inserts the edges `src[i] → dst[i]` with labels and weights, creating missing vertices and
/// labels. `labels[i]` is an index into `label_names` (the name `""` means no label); `weights[i]`
/// must be finite and non-negative. Either list may be empty: no labels, or weight 1 for all.
/// Duplicates are ignored as by `add_edges`; an edge stored with another label or weight makes
/// the call fail.
#[reducer]
pub fn add_labelled_edges(
    ctx: &ReducerContext,
    src: Vec<u64>,
    dst: Vec<u64>,
    label_names: Vec<String>,
    labels: Vec<u32>,
    weights: Vec<f32>,
) -> Result<(), String> {
    check_writer(ctx)?;
    let n = src.len();
    check_len("dst", dst.len(), "src", n)?;
    check_batch("edges", n)?;
    if !labels.is_empty() {
        check_len("labels", labels.len(), "src", n)?;
    }
    if !weights.is_empty() {
        check_len("weights", weights.len(), "src", n)?;
    }
    let ids = labels::intern(ctx, labels::Of::Edges, &label_names)?;
    let mut edges = Vec::with_capacity(n);
    for i in 0..n {
        let (s, d) = (src[i], dst[i]);
        let label = match labels.get(i) {
            None => NO_LABEL,
            Some(&at) => *ids.get(at as usize).ok_or_else(|| {
                format!(
                    "{} names label {at}, but label_names has no entry {at} (its length is {})",
                    edge_at(i, n, s, d),
                    ids.len()
                )
            })?,
        };
        // One form for zero: adding 0.0 turns -0.0 (stored apart from 0.0, printed as -0)
        // into 0.0 and leaves every other weight as it is.
        let weight = weights.get(i).copied().unwrap_or(1.0) + 0.0;
        if !weight.is_finite() || weight < 0.0 {
            return Err(format!(
                "{} has weight {weight}: weights must be finite and non-negative (a stored \
                 weight is an f32: at most 3.4e38; larger numbers arrive as inf)",
                edge_at(i, n, s, d)
            ));
        }
        edges.push(Arc {
            src: s,
            dst: d,
            label,
            weight,
        });
    }
    edges.sort_unstable_by_key(|e| (e.src, e.dst));
    edges.dedup();
    insert_edges(ctx, edges)
}

/// Inserts `arcs` (sorted by ends, no identical two), skipping those stored as they are.
///
/// Which of a source vertex's arcs are stored already is found as [`find_stored`] says: not at
/// all for a vertex without out-arcs (every source of a fresh load), with one range scan, or
/// by each arc's insert. In a bulk load, as [`insert_edges_in_bulk`] says.
fn insert_edges(ctx: &ReducerContext, arcs: Vec<Arc>) -> Result<(), String> {
    let mut m = meta(&ctx.db);
    if let Some(load) = bulk::under_way(&ctx.db) {
        return insert_edges_in_bulk(ctx, arcs, load, m);
    }
    let mut deltas = DegreeDeltas::default();
    let mut changes = Changes::default();
    // Whether wide edges exist: read once, by the first range scan.
    let mut wide = None;
    let mut stored = Vec::new();
    // The arcs to insert, each with whether it may be stored already (its insert tells).
    let mut fresh = Vec::new();
    for group in arcs.chunk_by(|a, b| a.src == b.src) {
        let (src, targets) = (group[0].src, group[0].dst..=group[group.len() - 1].dst);
        stored.clear();
        let unchecked = match find_stored(&ctx.db, src, group.len()) {
            FindStored::None => false,
            FindStored::Scan => {
                let wide = *wide.get_or_insert_with(|| edges::any_wide(&ctx.db));
                edges::list(&ctx.db, src, false, targets, usize::MAX, wide, |a| {
                    stored.push(a)
                });
                false
            }
            FindStored::OnInsert => true,
        };
        let mut stored = stored.iter().peekable();
        let mut inserted = 0;
        for (i, &e) in group.iter().enumerate() {
            if i > 0 && group[i - 1].dst == e.dst {
                return Err(given_twice(ctx, &group[i - 1], &e));
            }
            while stored.next_if(|s| s.dst < e.dst).is_some() {}
            if let Some(&existing) = stored.next_if(|s| s.dst == e.dst) {
                if existing == e {
                    continue;
                }
                return Err(stored_otherwise(ctx, &existing, &e));
            }
            fresh.push((e, unchecked));
            if !unchecked {
                deltas.shift(e.dst, (0, 1));
                changes.insert_arc(e.src, e.dst, e.attrs());
                inserted += 1;
            }
        }
        if inserted > 0 {
            deltas.shift(src, (inserted, 0));
            m.edges += inserted as u64;
        }
    }
    // In (dst, src) order: the `rev` index's inserts and unique checks then walk its B-tree
    // once instead of at random, and the `fwd` index's land in the few leaves this batch's
    // sources span, which they fill better than ascending inserts do (0.50 against 0.73 µs
    // and 81.5 against 87.9 bytes per arc at 10M arcs, `results/engine-costs/rev-order/`;
    // the traversals that read the rows are no slower, `results/load-order/`).
    fresh.sort_unstable_by_key(|(e, _): &(Arc, bool)| (e.dst, e.src));
    for (e, unchecked) in fresh {
        if !unchecked {
            edges::insert(&ctx.db, e);
            continue;
        }
        match edges::insert_if_absent(&ctx.db, e) {
            Stored::New => {
                deltas.arc(e.src, e.dst, 1);
                changes.insert_arc(e.src, e.dst, e.attrs());
                m.edges += 1;
            }
            Stored::Already => {}
            Stored::Differs(existing) => return Err(stored_otherwise(ctx, &existing, &e)),
        }
    }
    if !deltas.0.is_empty() {
        deltas.apply(ctx, &mut m, &mut changes);
        save_meta(ctx, m, changes);
    }
    Ok(())
}

/// Inserts `arcs` (sorted by ends, no identical two) in a bulk load (see `bulk`): the edge rows
/// and the counts only. Each arc's insert tells whether its ends are stored with other
/// attributes (a stored identical row is left as it is: tables are sets), and the new edges are
/// counted from the tables' rows, once per call, so that no arc is looked up first.
fn insert_edges_in_bulk(
    ctx: &ReducerContext,
    mut arcs: Vec<Arc>,
    load: BulkLoad,
    mut m: GraphMeta,
) -> Result<(), String> {
    if let Some(pair) = arcs
        .windows(2)
        .find(|p| (p[0].src, p[0].dst) == (p[1].src, p[1].dst))
    {
        return Err(given_twice(ctx, &pair[0], &pair[1]));
    }
    let before = edges::count(&ctx.db);
    let sources: Vec<u64> = arcs.iter().map(|e| e.src).collect();
    // In (dst, src) order, as `insert_edges` inserts.
    arcs.sort_unstable_by_key(|e| (e.dst, e.src));
    let targets: Vec<u64> = arcs.iter().map(|e| e.dst).collect();
    let (mut lowest, mut highest) = (u64::MAX, 0);
    for e in arcs {
        if let Err(existing) = edges::insert_unless_taken(&ctx.db, e) {
            return Err(stored_otherwise(ctx, &existing, &e));
        }
        lowest = lowest.min(e.src.min(e.dst));
        highest = highest.max(e.src.max(e.dst));
    }
    let added = edges::count(&ctx.db) - before;
    if added > 0 {
        m.edges += added;
        // Arcs that were stored already count here too: harmless.
        m.max_vertex_id = m.max_vertex_id.max(highest);
        bulk::after_adds(ctx, load, lowest);
        bulk::mark_ends(&ctx.db, &sources);
        bulk::mark_ends(&ctx.db, &targets);
        // Too broad to log: readers behind it start over, as after any batch of 10,000.
        save_meta(ctx, m, Changes::reset());
    }
    Ok(())
}

/// The error for a call that gives the ends of `a` twice, as `a` and as `b`.
fn given_twice(ctx: &ReducerContext, a: &Arc, b: &Arc) -> String {
    format!(
        "this call gives edge {} → {} twice, with {} and with {}",
        a.src,
        a.dst,
        labels::describe(ctx, a),
        labels::describe(ctx, b)
    )
}

/// How an error names the `i`th of a call's `n` edges, `s → d`: by its place in the call too
/// when the call has several.
fn edge_at(i: usize, n: usize, s: u64, d: u64) -> String {
    match n {
        1 => format!("edge {s} → {d}"),
        _ => format!("edge {i} ({s} → {d})"),
    }
}

/// The error for an arc `given` whose ends are stored as `existing`, with other attributes.
fn stored_otherwise(ctx: &ReducerContext, existing: &Arc, given: &Arc) -> String {
    format!(
        "edge {} → {} exists with {}; this call gives it {}: remove it first to change it",
        given.src,
        given.dst,
        labels::describe(ctx, existing),
        labels::describe(ctx, given)
    )
}

/// How to find which arcs of a source vertex, among those a batch gives it, are stored.
enum FindStored {
    /// None can be: the vertex has no out-arcs (or does not exist).
    None,
    /// One range scan over its arcs between the batch's smallest and largest target.
    Scan,
    /// Each arc's insert tells (see [`edges::insert_if_absent`]): one walk down the indexes
    /// instead of a lookup's and then the insert's.
    OnInsert,
}

/// How to find which of the `arcs` a batch gives `src` are stored, from `src`'s out-degree,
/// which every write keeps exact and which this batch has not changed yet (degrees are shifted
/// after all arcs): a scan where it reads little beyond those arcs; each arc's insert for a
/// few arcs of a hub, where a scan between their targets could read most of its list, and for
/// a single arc, whose insert costs no more than reading the degree would.
fn find_stored(db: &Local, src: u64, arcs: usize) -> FindStored {
    if arcs == 1 {
        return FindStored::OnInsert;
    }
    match db
        .vertex()
        .id()
        .find(src)
        .map_or(0, |v| v.out_degree as usize)
    {
        0 => FindStored::None,
        degree if arcs >= 4 && degree <= 8 * arcs => FindStored::Scan,
        _ => FindStored::OnInsert,
    }
}

/// Inserts vertices (without edges); existing ones are left as they are.
#[reducer]
pub fn add_vertices(ctx: &ReducerContext, ids: Vec<u64>) -> Result<(), String> {
    check_writer(ctx)?;
    check_batch("vertices", ids.len())?;
    let vertices = ctx.db.vertex();
    let mut m = meta(&ctx.db);
    let mut changes = Changes::default();
    let before = m.vertices;
    for id in ids {
        if vertices.id().find(id).is_none() {
            vertices.insert(Vertex::new(id));
            m.vertices += 1;
            m.max_vertex_id = m.max_vertex_id.max(id);
            changes.insert_vertex(id);
        }
    }
    if m.vertices != before {
        save_meta(ctx, m, changes);
    }
    Ok(())
}

/// Gives vertex `ids[i]` the label `label_names[labels[i]]` (`""`: none), creating missing
/// vertices and labels. A vertex named twice must be given one label.
#[reducer]
pub fn set_vertex_labels(
    ctx: &ReducerContext,
    ids: Vec<u64>,
    label_names: Vec<String>,
    labels: Vec<u32>,
) -> Result<(), String> {
    check_writer(ctx)?;
    check_batch("vertices", ids.len())?;
    check_len("labels", labels.len(), "ids", ids.len())?;
    let names = labels::intern(ctx, labels::Of::Vertices, &label_names)?;
    // Each vertex's label id, and the `label_names` index it was given by.
    let mut wanted: HashMap<u64, (u32, u32)> = HashMap::with_capacity(ids.len());
    for (i, (&id, &at)) in ids.iter().zip(&labels).enumerate() {
        let label = *names.get(at as usize).ok_or_else(|| {
            format!(
                "vertex {i} ({id}) names label {at}, but label_names has no entry {at} (its \
                 length is {})",
                names.len()
            )
        })?;
        if let Some(&(other, other_at)) = wanted.get(&id)
            && other != label
        {
            return Err(format!(
                "vertex {id} is given two labels, {:?} and {:?}",
                label_names[other_at as usize], label_names[at as usize]
            ));
        }
        wanted.insert(id, (label, at));
    }
    let vertices = ctx.db.vertex();
    let mut m = meta(&ctx.db);
    let mut changes = Changes::default();
    let mut changed = false;
    for (id, (label, _)) in wanted {
        let row = match vertices.id().find(id) {
            Some(row) => row,
            None => {
                m.vertices += 1;
                m.max_vertex_id = m.max_vertex_id.max(id);
                changes.insert_vertex(id);
                changed = true;
                vertices.insert(Vertex::new(id))
            }
        };
        if row.label != label {
            vertices.id().update(Vertex { label, ..row });
            changes.relabel_vertex(id, row.label, label);
            changed = true;
        }
    }
    if changed {
        save_meta(ctx, m, changes);
    }
    Ok(())
}

/// Deletes the edges `src[i] → dst[i]`; absent edges are ignored. Vertices stay.
#[reducer]
pub fn remove_edges(ctx: &ReducerContext, src: Vec<u64>, dst: Vec<u64>) -> Result<(), String> {
    check_writer(ctx)?;
    bulk::refuse_removals(&ctx.db, "remove_edges")?;
    let pairs = pairs(src, dst)?;
    let mut m = meta(&ctx.db);
    let mut deltas = DegreeDeltas::default();
    let mut changes = Changes::default();
    for (src, dst) in pairs {
        if let Some(e) = edges::remove(&ctx.db, src, dst) {
            deltas.arc(src, dst, -1);
            changes.remove_arc(src, dst, e.attrs());
            m.edges -= 1;
        }
    }
    if !deltas.0.is_empty() {
        deltas.apply(ctx, &mut m, &mut changes);
        save_meta(ctx, m, changes);
    }
    Ok(())
}

/// Deletes a vertex and every edge that touches it.
#[reducer]
pub fn remove_vertex(ctx: &ReducerContext, id: u64) -> Result<(), String> {
    check_writer(ctx)?;
    bulk::refuse_removals(&ctx.db, "remove_vertex")?;
    let Some(row) = ctx.db.vertex().id().find(id) else {
        return Err(format!("unknown vertex {id}"));
    };
    let mut m = meta(&ctx.db);
    let mut deltas = DegreeDeltas::default();
    let mut changes = Changes::default();
    let wide = edges::any_wide(&ctx.db);
    let mut touching = Vec::new();
    for incoming in [false, true] {
        edges::list(&ctx.db, id, incoming, 0..=u64::MAX, usize::MAX, wide, |e| {
            touching.push(e)
        });
    }
    for e in touching {
        // A self-loop is in both lists.
        if edges::remove(&ctx.db, e.src, e.dst).is_some() {
            deltas.arc(e.src, e.dst, -1);
            changes.remove_arc(e.src, e.dst, e.attrs());
            m.edges -= 1;
        }
    }
    deltas.0.remove(&id);
    deltas.apply(ctx, &mut m, &mut changes);
    ctx.db.vertex().id().delete(id);
    if row.label != NO_LABEL {
        // What a traversal pinned before this write restores with the vertex.
        changes.relabel_vertex(id, row.label, NO_LABEL);
    }
    changes.remove_vertex(id);
    m.vertices -= 1;
    save_meta(ctx, m, changes);
    Ok(())
}

/// Deletes every vertex and edge, and ends a bulk load under way. The version keeps counting,
/// so caches see the change.
#[reducer]
pub fn clear_graph(ctx: &ReducerContext) -> Result<(), String> {
    check_writer(ctx)?;
    edges::clear(&ctx.db);
    ctx.db.vertex().clear();
    ctx.db.bulk_load().id().delete(0);
    ctx.db.bulk_mark().clear();
    let m = meta(&ctx.db);
    save_meta(
        ctx,
        GraphMeta {
            version: m.version,
            ..GraphMeta::default()
        },
        Changes::reset(),
    );
    Ok(())
}

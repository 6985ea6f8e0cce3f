//! `export_page`: the whole graph, one page per call, exactly as it was at one version, for
//! `graph export` (which writes files that `graph load` and `graph label-vertices` read back).
//!
//! Rows of `edge` hold packed keys, so the edges cannot be read back over SQL as pairs; this
//! procedure gives them as a client needs them. A page is one transaction: the vertices after a
//! cursor in id order, with their out-edges in (src, dst) order, until about `limit` edges or
//! vertices. The pages of one export describe the version the first one read: each later page
//! reads the tables now and undoes through the change log what was written since (see `pin`).
//! If the log no longer covers that version (a bulk write or `clear_graph` since), the page is
//! refused with [`GraphError::VersionGone`] and the export has to start again.

use crate::edges;
use crate::labels::{self, Of};
use crate::pin::Pin;
use crate::schema::{NO_LABEL, Vertex, meta, ranged, vertex};
use crate::tx_runner::{DEFAULT_YIELD_EVERY_US, TxRunner};
use crate::types::{GraphError, QueryStats};
use graph_traverse::{Direction, Neighbor};
use hashbrown::HashMap;
use spacetimedb::{Local, ProcedureContext, SpacetimeType, procedure};

/// Edges (or vertices) per page when the caller names no limit.
pub const DEFAULT_EXPORT_LIMIT: u32 = 10_000;
/// Most edges (or vertices) a caller may ask a page for (a vertex's out-edges are never split,
/// so a hub's page holds all of them).
pub const MAX_EXPORT_LIMIT: u32 = 200_000;

#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct ExportedVertex {
    pub id: u64,
    /// `""`: unlabelled.
    pub label: String,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq)]
pub struct ExportedEdge {
    pub src: u64,
    pub dst: u64,
    /// `""`: unlabelled.
    pub label: String,
    pub weight: f32,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq)]
pub struct ExportPage {
    /// The version the page describes: the next pages of the export must ask for it.
    pub version: u64,
    /// Vertices with ids after the cursor, ascending, and their out-edges, in (src, dst) order.
    pub vertices: Vec<ExportedVertex>,
    pub edges: Vec<ExportedEdge>,
    /// The cursor of the next page (`after`); `None`: this page ends the graph.
    pub next_after: Option<u64>,
    pub stats: QueryStats,
}

/// One page of the graph at `version` (`None`: the version now, which the page names): the
/// vertices with ids above `after` (`None`: all), in id order, with their labels and
/// out-edges, until the page holds `limit` vertices or edges (0: the default). Vertices without
/// edges are listed too, so that an export keeps them.
#[procedure]
pub fn export_page(
    ctx: &mut ProcedureContext,
    version: Option<u64>,
    after: Option<u64>,
    limit: u32,
) -> Result<ExportPage, GraphError> {
    if limit > MAX_EXPORT_LIMIT {
        return Err(GraphError::InvalidArgument(format!(
            "limit {limit} exceeds {MAX_EXPORT_LIMIT}"
        )));
    }
    let limit = match limit {
        0 => DEFAULT_EXPORT_LIMIT,
        n => n,
    } as usize;
    let mut runner = TxRunner::new(ctx, DEFAULT_YIELD_EVERY_US);
    let page = runner.run_at(|tx, now| {
        let version = version.unwrap_or(now);
        if version > now {
            return Err(GraphError::InvalidArgument(format!(
                "version {version} is newer than the graph's ({now})"
            )));
        }
        let mut pin = Pin::new(version);
        pin.follow(&tx.db, now);
        if pin.is_lost() {
            return Err(GraphError::VersionGone(version));
        }
        Ok(read_page(&tx.db, &pin, after, limit))
    });
    let (mut page, rows_read) = page?;
    page.stats = runner.finish();
    page.stats.version = page.version;
    page.stats.pinned = true;
    page.stats.vertices_expanded = page.vertices.len() as u64;
    page.stats.edges_scanned = rows_read;
    Ok(page)
}

/// A vertex of the page as it was at the pinned version.
struct Listed {
    id: u64,
    label: u32,
}

/// The page after `after`, and how many rows it read.
fn read_page(db: &Local, pin: &Pin, after: Option<u64>, limit: usize) -> (ExportPage, u64) {
    let (listed, next_after, mut rows_read) = list_vertices(db, pin, after, limit);
    let mut arcs = Vec::new();
    if let (Some(first), Some(last)) = (listed.first(), listed.last()) {
        let stored = edges::out_of(db, first.id..=last.id, edges::any_wide(db));
        rows_read += stored.len() as u64;
        arcs.extend(stored.into_iter().filter_map(|e| {
            let attrs = pin.pinned_attrs(e.src, e.dst, e.attrs())?;
            Some((e.src, Neighbor { id: e.dst, attrs }))
        }));
        // Arcs removed (or changed) since the pinned version, with their attributes then.
        let mut restored = Vec::new();
        for v in &listed {
            restored.clear();
            pin.restore(v.id, false, &mut restored);
            arcs.extend(restored.iter().map(|&n| (v.id, n)));
        }
        arcs.sort_unstable_by_key(|&(src, n)| (src, n.id));
        arcs.dedup_by_key(|&mut (src, n)| (src, n.id));
    }
    let mut names = Names::new(db);
    let vertices = listed
        .iter()
        .map(|v| ExportedVertex {
            id: v.id,
            label: names.get(Of::Vertices, v.label),
        })
        .collect();
    let edges = arcs
        .iter()
        .map(|&(src, n)| ExportedEdge {
            src,
            dst: n.id,
            label: names.get(Of::Edges, n.attrs.label),
            weight: n.attrs.weight,
        })
        .collect();
    let page = ExportPage {
        version: pin.version(),
        vertices,
        edges,
        next_after,
        stats: QueryStats::default(),
    };
    (page, rows_read)
}

/// The vertices of the pinned version above `after`, ascending, until `limit` of them or of
/// their out-arcs; the cursor after them (`None`: no vertex is left); the vertex rows read.
///
/// The engine reads a key range whole, so the vertex table is read in windows of ids: `limit`
/// wide at first, doubling while they come back short (sparse ids), never past the largest id
/// the graph has had.
fn list_vertices(
    db: &Local,
    pin: &Pin,
    after: Option<u64>,
    limit: usize,
) -> (Vec<Listed>, Option<u64>, u64) {
    // The largest id only grows, except through `clear_graph`, which a pin does not survive.
    let bound = meta(db).max_vertex_id;
    let removed = pin.removed_vertices();
    let table = db.vertex();
    let mut listed = Vec::new();
    let (mut arcs, mut rows_read) = (0u64, 0u64);
    let mut from = match after {
        None => 0,
        Some(a) => match a.checked_add(1) {
            Some(from) => from,
            None => return (listed, None, 0),
        },
    };
    let mut width = limit as u64;
    while from <= bound {
        let to = from.saturating_add(width - 1).min(bound);
        let mut window: Vec<(u64, Option<Vertex>)> = ranged(table.id(), &table.__backend)
            .filter(from..=to)
            .map(|row| (row.id, Some(row)))
            .collect();
        rows_read += window.len() as u64;
        let gone = removed.partition_point(|&v| v < from)..removed.partition_point(|&v| v <= to);
        if !gone.is_empty() {
            window.extend(removed[gone].iter().map(|&v| (v, None)));
            window.sort_unstable_by_key(|&(id, _)| id);
        }
        let found = window.len();
        for (id, row) in window {
            if pin.vertex_existed(id) == Some(false) {
                continue; // created since the pinned version
            }
            let (out_now, label_now) = row.map_or((0, NO_LABEL), |r| (r.out_degree, r.label));
            arcs += pin.degree(id, Direction::Out, out_now.into());
            listed.push(Listed {
                id,
                label: pin.pinned_label(id, label_now),
            });
            if listed.len() >= limit || arcs >= limit as u64 {
                return (listed, (id < bound).then_some(id), rows_read);
            }
        }
        match to.checked_add(1) {
            Some(next) => from = next,
            None => break,
        }
        if found < limit {
            width = width.saturating_mul(2);
        }
    }
    (listed, None, rows_read)
}

/// Label names by id, looked up once per page.
struct Names<'a> {
    db: &'a Local,
    known: HashMap<(bool, u32), String>,
}

impl<'a> Names<'a> {
    fn new(db: &'a Local) -> Self {
        Self {
            db,
            known: HashMap::new(),
        }
    }

    fn get(&mut self, of: Of, id: u32) -> String {
        if id == NO_LABEL {
            return String::new();
        }
        let db = self.db;
        self.known
            .entry((of == Of::Vertices, id))
            .or_insert_with(|| labels::name(db, of, id))
            .clone()
    }
}

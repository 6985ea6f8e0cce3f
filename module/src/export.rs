//! `export_page`: the whole graph, one page per call, exactly as it was at one version, for
//! `graph export` (which writes files that `graph load` and `graph label-vertices` read back).
//!
//! Rows of `edge` hold packed keys, so the edges cannot be read back over SQL as pairs; this
//! procedure gives them as a client needs them. A page is one transaction: the vertices after a
//! cursor in id order, with their out-edges in (src, dst) order, until `limit` edges or
//! vertices; a vertex with more out-edges than a page holds (a hub) has its list split over
//! pages, so that no page holds the database for long. The pages of one export describe the version the first one read: each later page
//! reads the tables now and undoes through the change log what was written since (see `pin`).
//! If the log no longer covers that version (a bulk write or `clear_graph` since), the page is
//! refused with [`GraphError::VersionGone`] and the export has to start again.
//!
//! So that the log still covers it after a long export under heavy writes, an export *holds*
//! the log from its version on (see [`changelog::hold`]): its first page takes the hold, later
//! ones renew it, the last one drops it (the cursor names the hold). And so that a page does
//! not undo everything written since the export began, each instance keeps the pins of the
//! exports it served lately and brings them forward by the changes since their last page.

use crate::changelog;
use crate::edges;
use crate::labels::{self, Of};
use crate::pin::Pin;
use crate::schema::{NO_LABEL, Vertex, meta, ranged, vertex};
use crate::tx_runner::{DEFAULT_YIELD_EVERY_US, TxRunner};
use crate::types::{GraphError, QueryStats};
use graph_traverse::{Direction, Neighbor};
use hashbrown::HashMap;
use spacetimedb::{Local, ProcedureContext, SpacetimeType, procedure};
use std::cell::{Cell, RefCell};

/// Edges (or vertices) per page when the caller names no limit.
pub const DEFAULT_EXPORT_LIMIT: u32 = 10_000;
/// Most edges (or vertices) a caller may ask a page for.
pub const MAX_EXPORT_LIMIT: u32 = 200_000;
/// Pins an instance keeps for exports to come back to: one per export running at once.
const KEPT_PINS: usize = 4;
/// A page that has read this many vertex rows per unit of its limit ends after the window it
/// is reading, full or not: rows of vertices created since the export's version are read and
/// skipped, and a writer may have created millions.
const ROWS_READ_PER_LIMIT: u64 = 4;

thread_local! {
    /// The pins of the exports this instance served lately, and when each last served a page.
    static PINS: RefCell<Vec<(Pin, i64)>> = const { RefCell::new(Vec::new()) };
}

/// The kept pin of version `version`, if this instance has one.
fn take_pin(version: u64) -> Option<Pin> {
    PINS.with_borrow_mut(|pins| {
        let at = pins.iter().position(|(p, _)| p.version() == version)?;
        Some(pins.swap_remove(at).0)
    })
}

/// Keeps `pin`, used at `now_us`, for the export's next page; drops the pins of exports that
/// asked for no page within a hold's lifetime, and the least recently used beyond
/// [`KEPT_PINS`].
fn keep_pin(pin: Pin, now_us: i64) {
    PINS.with_borrow_mut(|pins| {
        pins.retain(|&(_, used)| now_us - used < changelog::HOLD_TTL_US);
        if pins.len() == KEPT_PINS {
            let oldest = (0..pins.len()).min_by_key(|&i| pins[i].1);
            pins.swap_remove(oldest.expect("KEPT_PINS > 0"));
        }
        pins.push((pin, now_us));
    });
}

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

/// Where a page ends: after vertex id `vertex`, whose out-edges it has all given (`neighbor`
/// `None`), or those up to the one to `neighbor` (the next page goes on with the others).
/// `vertex` is the last vertex listed, or the last id read when the page stopped among ids
/// that were no vertices at the export's version. `hold` names the export's hold on the change
/// log (0: none), which the next pages renew and the last one drops: hand the cursor back as it
/// came, and a page sent twice (a call resent after a dropped connection) renews or drops that
/// hold only, never another export's.
#[derive(SpacetimeType, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportCursor {
    pub vertex: u64,
    pub neighbor: Option<u64>,
    pub hold: u64,
}

#[derive(SpacetimeType, Debug, Clone, PartialEq)]
pub struct ExportPage {
    /// The version the page describes: the next pages of the export must ask for it.
    pub version: u64,
    /// Vertices with ids after the cursor's, ascending, and out-edges in (src, dst) order: the
    /// rest of the cursor's vertex's (if the last page split them), then those of the vertices
    /// listed here (the last one's only in part if the page splits them).
    pub vertices: Vec<ExportedVertex>,
    pub edges: Vec<ExportedEdge>,
    /// The next page's `after`; `None`: this page ends the graph.
    pub next: Option<ExportCursor>,
    pub stats: QueryStats,
}

/// One page of the graph at `version` (`None`: the version now, which the page names): what
/// follows the cursor `after` (`None`: from the start), until the page holds `limit` vertices or
/// edges (0: the default). Vertices without edges are listed too, so that an export keeps them.
#[procedure]
pub fn export_page(
    ctx: &mut ProcedureContext,
    version: Option<u64>,
    after: Option<ExportCursor>,
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
    let holder = ctx.sender();
    let first = version.is_none();
    // This export's hold, if it has one (a first page takes one of its own, whatever cursor
    // it is given).
    let hold_id = after.filter(|_| !first).map_or(0, |c| c.hold);
    let mut runner = TxRunner::new(ctx, DEFAULT_YIELD_EVERY_US);
    let pin: RefCell<Option<Pin>> = RefCell::new(None);
    // Whether the pin came from this instance's kept ones (another export's, if this is the
    // first page), rather than being made for this page.
    let kept = Cell::new(false);
    // The pin follows the writes in transactions of about `changelog::CATCH_UP_ROWS` changes
    // (one of an export's first pages on this instance may have many to take in); the one
    // that reaches the graph's version reads the page.
    let versions: Cell<Option<u64>> = Cell::new(None);
    let (mut page, rows_read, hold) = loop {
        let step = runner.run_at(|tx, now| {
            crate::bulk::ready(&tx.db)?;
            let version = version.unwrap_or(now);
            if version > now {
                return Err(GraphError::InvalidArgument(format!(
                    "version {version} is newer than the graph's ({now})"
                )));
            }
            let mut slot = pin.borrow_mut();
            let pin = slot.get_or_insert_with(|| {
                let taken = take_pin(version);
                kept.set(taken.is_some());
                taken.unwrap_or_else(|| Pin::new(version))
            });
            let span =
                (versions.get()).unwrap_or_else(|| changelog::catch_up_span_estimate(&tx.db, now));
            versions.set(Some(span));
            let to = now.min(pin.seen().saturating_add(span));
            let followed = pin.follow(&tx.db, to);
            if pin.is_lost() {
                return Err(GraphError::VersionGone(version));
            }
            if to < now {
                return Ok(Step::Behind { followed });
            }
            // No vertex of the pinned version lies beyond the largest id the graph had then:
            // the hold recorded it, and the first page reads it now; else the largest id now.
            let held = changelog::held(&tx.db, hold_id, version, holder);
            let bound = held.map_or(meta(&tx.db).max_vertex_id, |h| h.bound);
            let (page, rows_read) = Page::read(&tx.db, pin, after, limit, bound);
            let hold_due = first || changelog::renewal_due(held.as_ref(), tx.timestamp);
            Ok(Step::Read(
                Box::new(page),
                rows_read,
                hold_due.then_some(bound),
            ))
        });
        let step = match step {
            Ok(step) => step,
            Err(e) => {
                // The pin may serve this export's next try, or another export of its version.
                if let Some(pin) = pin.take().filter(|p| !p.is_lost()) {
                    keep_pin(pin, runner.now_us());
                }
                return Err(e);
            }
        };
        match step {
            Step::Read(page, rows_read, hold) => break (*page, rows_read, hold),
            Step::Behind { followed } => versions
                .set((versions.get()).map(|span| changelog::next_catch_up_span(span, followed))),
        }
    };
    let pin = pin.into_inner().expect("the page's transaction had a pin");
    let version = page.version;
    let keep = match &mut page.next {
        // The last page. A one-page export never held the log, and keeps the pin it found
        // (another export's); a longer one drops its hold, and keeps the pin for the exports
        // that still hold the log at its version.
        None if first => kept.get(),
        None => {
            runner.write(|tx| changelog::release(&tx.db, hold_id, version, holder, tx.timestamp))
        }
        Some(next) => {
            next.hold = match hold {
                Some(bound) => runner.write(|tx| {
                    changelog::hold(&tx.db, hold_id, version, holder, bound, tx.timestamp)
                }),
                None => hold_id,
            };
            true
        }
    };
    if keep {
        keep_pin(pin, runner.now_us());
    }
    page.stats = runner.finish();
    page.stats.version = page.version;
    page.stats.pinned = true;
    page.stats.vertices_expanded = page.vertices.len() as u64;
    page.stats.edges_scanned = rows_read;
    Ok(page)
}

/// What one of `export_page`'s transactions did: followed `followed` changes and is still
/// behind the graph's version, or read the page (with the rows it read, and the bound to hold
/// the log with if the caller's hold is due).
enum Step {
    Behind { followed: u64 },
    Read(Box<ExportPage>, u64, Option<u64>),
}

/// A page being read, at the pinned version.
struct Page<'a> {
    db: &'a Local,
    pin: &'a Pin,
    wide: bool,
    /// An id no vertex or neighbor of the pinned version lies beyond: the largest id the graph
    /// had then, or has had since (it only grows, except through `clear_graph`, which a pin
    /// does not survive).
    bound: u64,
    limit: usize,
    /// Listed vertices and their labels at the pinned version.
    vertices: Vec<(u64, u32)>,
    arcs: Vec<(u64, Neighbor)>,
    /// Arcs the page holds, counting those of whole lists still to read.
    counted: usize,
    rows_read: u64,
}

impl<'a> Page<'a> {
    /// The page after `after`, reading no id beyond `bound`, and how many rows it read.
    fn read(
        db: &'a Local,
        pin: &'a Pin,
        after: Option<ExportCursor>,
        limit: usize,
        bound: u64,
    ) -> (ExportPage, u64) {
        let mut page = Page {
            db,
            pin,
            wide: edges::any_wide(db),
            bound,
            limit,
            vertices: Vec::new(),
            arcs: Vec::new(),
            counted: 0,
            rows_read: 0,
        };
        let next = page.fill(after);
        page.arcs.sort_unstable_by_key(|&(src, n)| (src, n.id));
        page.arcs.dedup_by_key(|&mut (src, n)| (src, n.id));
        let mut names = Names::new(db);
        let vertices = (page.vertices.iter())
            .map(|&(id, label)| ExportedVertex {
                id,
                label: names.get(Of::Vertices, label),
            })
            .collect();
        let edges = (page.arcs.iter())
            .map(|&(src, n)| ExportedEdge {
                src,
                dst: n.id,
                label: names.get(Of::Edges, n.attrs.label),
                weight: n.attrs.weight,
            })
            .collect();
        let exported = ExportPage {
            version: pin.version(),
            vertices,
            edges,
            next,
            stats: QueryStats::default(),
        };
        (exported, page.rows_read)
    }

    /// Reads what follows `after` into the page; returns the next page's cursor.
    fn fill(&mut self, after: Option<ExportCursor>) -> Option<ExportCursor> {
        let Some(at) = after else {
            return self.list_vertices(0, None);
        };
        if let Some(n) = at.neighbor {
            // The rest of a list the last page split.
            let rest = n
                .checked_add(1)
                .and_then(|from| self.read_list(at.vertex, from));
            if rest.is_some() {
                return rest;
            }
        }
        self.list_vertices(at.vertex.checked_add(1)?, Some(at.vertex))
    }

    /// Lists the vertices from id `from` on, with their out-arcs, until the page is full, and
    /// returns the next page's cursor; `done`: the vertex before `from`, whose list the page
    /// ends (if any).
    ///
    /// The engine reads a key range whole, so the vertex table is read in windows of ids:
    /// `limit` wide at first, doubling while they come back short (sparse ids); the window that
    /// grows over a gap takes in as much of a dense run behind it as it spans. A vertex whose
    /// arcs do not fit in what is left of the page ends it, and the next page starts with it,
    /// unless it has more arcs than a page holds (a hub): then this page takes the first ones.
    fn list_vertices(&mut self, mut from: u64, mut done: Option<u64>) -> Option<ExportCursor> {
        let removed = self.pin.removed_vertices();
        let table = self.db.vertex();
        let complete = |vertex| ExportCursor {
            vertex,
            neighbor: None,
            hold: 0,
        };
        // The listed vertices whose whole lists the page holds: read at the end, in one range.
        let mut whole: Option<(u64, u64)> = None;
        let mut width = self.limit as u64;
        let mut next = None;
        'windows: while from <= self.bound {
            let to = from.saturating_add(width - 1).min(self.bound);
            let mut window: Vec<(u64, Option<Vertex>)> = ranged(table.id(), &table.__backend)
                .filter(from..=to)
                .map(|row| (row.id, Some(row)))
                .collect();
            self.rows_read += window.len() as u64;
            let gone =
                removed.partition_point(|&v| v < from)..removed.partition_point(|&v| v <= to);
            if !gone.is_empty() {
                window.extend(removed[gone].iter().map(|&v| (v, None)));
                window.sort_unstable_by_key(|&(id, _)| id);
            }
            let found = window.len();
            for (id, row) in window {
                if self.pin.vertex_existed(id) == Some(false) {
                    continue; // created since the pinned version
                }
                let (out_now, label_now) = row.map_or((0, NO_LABEL), |r| (r.out_degree, r.label));
                let degree = self.pin.degree(id, Direction::Out, out_now.into()) as usize;
                let room = self.limit.saturating_sub(self.counted);
                let started = !self.vertices.is_empty() || self.counted > 0;
                if degree > room && degree <= self.limit && started {
                    next = done.map(complete);
                    break 'windows;
                }
                self.vertices
                    .push((id, self.pin.pinned_label(id, label_now)));
                if degree > room {
                    next = Some(self.read_list(id, 0).unwrap_or(complete(id)));
                    break 'windows;
                }
                whole = Some((whole.map_or(id, |(first, _)| first), id));
                self.counted += degree;
                done = Some(id);
                if self.vertices.len() >= self.limit || self.counted >= self.limit {
                    next = (id < self.bound).then_some(complete(id));
                    break 'windows;
                }
            }
            if self.rows_read >= ROWS_READ_PER_LIMIT * self.limit as u64 && to < self.bound {
                next = Some(complete(to));
                break;
            }
            match to.checked_add(1) {
                Some(after) => from = after,
                None => break,
            }
            if found < self.limit {
                width = width.saturating_mul(2);
            }
        }
        if let Some((first, last)) = whole {
            self.read_whole(first, last);
        }
        next
    }

    /// The out-arcs of the vertices `first..=last` (which the page lists, as it lists every
    /// vertex of that range that existed at the pinned version), and those since removed.
    fn read_whole(&mut self, first: u64, last: u64) {
        let stored = edges::out_of(self.db, first..=last, self.wide);
        self.rows_read += stored.len() as u64;
        let pin = self.pin;
        self.arcs.extend(stored.into_iter().filter_map(|e| {
            let attrs = pin.pinned_attrs(e.src, e.dst, e.attrs())?;
            Some((e.src, Neighbor { id: e.dst, attrs }))
        }));
        let mut restored = Vec::new();
        for &(v, _) in self
            .vertices
            .iter()
            .filter(|&&(v, _)| (first..=last).contains(&v))
        {
            restored.clear();
            pin.restore(v, false, &mut restored);
            self.arcs.extend(restored.iter().map(|&n| (v, n)));
        }
    }

    /// Adds to the page `v`'s out-arcs to neighbors from id `from` on, as many as it has room
    /// for (at least one); returns the cursor after the last one taken if more may follow.
    ///
    /// The list is read in windows of neighbor ids, as many ids wide as the page has room for
    /// at first (dense ids), doubling while they come back short (sparse ones): the engine reads
    /// a window whole, so a page costs about its arcs, except where a window that grew over a
    /// gap in the ids takes in a dense run behind it.
    fn read_list(&mut self, v: u64, from: u64) -> Option<ExportCursor> {
        let room = self.limit.saturating_sub(self.counted).max(1);
        let mut restored = Vec::new();
        self.pin.restore(v, false, &mut restored);
        let mut width = room as u64;
        let mut taken: Vec<Neighbor> = Vec::new();
        let mut lo = from;
        while lo <= self.bound {
            let hi = lo.saturating_add(width - 1).min(self.bound);
            let before = taken.len();
            let pin = self.pin;
            self.rows_read += edges::list(self.db, v, false, lo..=hi, usize::MAX, self.wide, |e| {
                if let Some(attrs) = pin.pinned_attrs(v, e.dst, e.attrs()) {
                    taken.push(Neighbor { id: e.dst, attrs });
                }
            }) as u64;
            taken.extend(restored.iter().filter(|n| (lo..=hi).contains(&n.id)));
            taken[before..].sort_unstable_by_key(|n| n.id);
            taken.dedup_by_key(|n| n.id);
            if taken.len() >= room {
                taken.truncate(room);
                break;
            }
            match hi.checked_add(1) {
                Some(next) => lo = next,
                None => break,
            }
            // Short of the room (or it would have stopped): the ids are sparser than the width.
            width = width.saturating_mul(2);
        }
        self.counted += taken.len();
        let next = match taken.len() >= room {
            true => taken.last().map(|n| ExportCursor {
                vertex: v,
                neighbor: Some(n.id),
                hold: 0,
            }),
            false => None,
        };
        self.arcs.extend(taken.into_iter().map(|n| (v, n)));
        next
    }
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

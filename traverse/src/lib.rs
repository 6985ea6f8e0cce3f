//! The Stage-2 traversal operator.
//!
//! Every algorithm here is written once, as a resumable state machine ([`Search`]) that reads
//! the graph only through a [`NeighborSource`] (or, for the direction-optimizing BFS, a
//! [`DenseSource`]). The SpacetimeDB module drives it over the table indexes inside short
//! transactions (one `step` per transaction, bounded by a work budget), or over an in-memory
//! [`AdjacencyGraph`] snapshot that it assembles with an [`AdjacencyBuilder`] and can keep
//! current by applying [`Change`]s (compacted in steps); native tests drive the very same code
//! over an [`AdjacencyGraph`].
//!
//! - [`Bfs`]: level-synchronous index-hop BFS (optionally depth-bounded, optionally stopping at a
//!   target, which makes it the unidirectional shortest path of the Stage-1 baseline).
//! - [`ShortestPath`]: balanced bidirectional BFS that always grows the side whose frontier has the
//!   smaller degree sum, and stops at the first meeting; by vertex id over any
//!   [`NeighborSource`], or by slot over a [`DenseSource`] ([`ShortestPath::over_slots`]).
//! - [`DirectionOptimizingBfs`]: BFS that switches between top-down and bottom-up levels
//!   (Beamer et al.), over a [`DenseSource`] such as the in-memory [`AdjacencyGraph`].
//! - [`Dfs`]: iterative depth-first search (neighbors in ascending id order, optionally
//!   depth-bounded), with a preorder of the visited vertices.
//! - [`WeightedPath`]: bidirectional Dijkstra over the arcs' weights, goal-directed by
//!   [`Landmarks`] when the source has them.
//!
//! Arcs carry [`ArcAttrs`] (a label and a weight). A source may follow only some labels (an
//! [`ArcFilter`]): it then hands the algorithms only the arcs that pass, so every algorithm
//! honours a filter without knowing about it.

mod adjacency;
mod bfs;
mod bidirectional;
mod dfs;
mod dijkstra;
mod direction_optimizing;
mod filter;
mod id_index;
mod landmarks;
mod overlay;
mod parents;
mod rows;
mod visited;

pub use adjacency::{AdjacencyBuilder, AdjacencyGraph, BuildError};
pub use bfs::{Bfs, BfsOutcome, BfsQuery};
pub use bidirectional::{PathOutcome, PathQuery, ShortestPath};
pub use dfs::{Dfs, DfsOutcome, DfsQuery, REENTRY_ALLOWANCE, REENTRY_CEILING, REENTRY_LIMIT};
pub use dijkstra::{WeightedOutcome, WeightedPath, WeightedQuery};
pub use direction_optimizing::{DirectionOptimizingBfs, Switching};
pub(crate) use filter::LabelColumn;
pub use filter::{ALL_ARCS, ArcAttrs, ArcFilter, ArcLabels, FilteredGraph, Neighbor};
pub use landmarks::{LANDMARKS, LandmarkBuilder, Landmarks, lower_bound};
pub use overlay::{Change, OverlayStats};
pub use visited::Visited;

/// Which arcs a traversal follows from a vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Follow `src → dst` arcs forwards.
    Out,
    /// Follow arcs backwards (`dst → src`).
    In,
    /// Treat every arc as undirected (how SNAP's undirected graphs are queried).
    Both,
}

impl Direction {
    /// The direction that walks the same arcs the other way (used by the backward search).
    pub fn reverse(self) -> Self {
        match self {
            Direction::Out => Direction::In,
            Direction::In => Direction::Out,
            Direction::Both => Direction::Both,
        }
    }

    /// The name used in procedure arguments and on command lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Out => "out",
            Direction::In => "in",
            Direction::Both => "both",
        }
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Direction {
    type Err = String;

    /// Parses `out`, `in` or `both`, in any case.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "out" => Ok(Direction::Out),
            "in" => Ok(Direction::In),
            "both" => Ok(Direction::Both),
            _ => Err(format!("direction `{s}`: expected `out`, `in` or `both`")),
        }
    }
}

/// Where reading one vertex's neighbor list continues, so that a hub's list can be read across
/// several transactions instead of holding one for its whole length.
///
/// `incoming` says which half is being read (`Both` reads the outgoing half, then the incoming
/// one); `next` is a position the source defines: an offset into an array, or the smallest
/// neighbor id not yet returned from an index ordered by neighbor id. `span` is the source's
/// to keep too: how far past `next` its next page should look (for the index, how many
/// neighbor ids the last page's arcs spanned), 0 while unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCursor {
    pub incoming: bool,
    pub next: u64,
    pub span: u64,
}

impl ListCursor {
    /// The beginning of the list of arcs followed in `dir`.
    pub fn start(dir: Direction) -> Self {
        Self {
            incoming: dir == Direction::In,
            next: 0,
            span: 0,
        }
    }

    /// Moves to the incoming half after the outgoing one; returns `false` when the list is over
    /// (the incoming half is done, or `dir` has no incoming half).
    pub fn next_half(&mut self, dir: Direction) -> bool {
        if self.incoming || dir == Direction::Out {
            return false;
        }
        *self = Self {
            incoming: true,
            next: 0,
            span: 0,
        };
        true
    }
}

/// Read access to a graph, as the traversal operator needs it.
///
/// Implementations must be cheap per call: the operator reads one page of neighbors at a time
/// and calls `degree` once per newly discovered vertex (bidirectional search only).
pub trait NeighborSource {
    /// Reads at most `max` (at least 1) further arcs of `v` in direction `dir`, starting at
    /// `cursor` and advancing it, and appends those its filter keeps (each as the neighbor at
    /// the arc's other end, with the arc's attributes); returns `true` once the whole list has
    /// been read. Pages read from [`ListCursor::start`] until `true` together give every kept
    /// arc once. With [`Direction::Both`] a vertex may appear twice (arcs in both directions);
    /// the operator tolerates duplicates. An unknown `v` has an empty list.
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<Neighbor>,
    ) -> bool;
    /// The number of arcs the pages of `v` in `dir` read (filtered out or not): what expanding
    /// `v` costs.
    fn degree(&self, v: u64, dir: Direction) -> u64;
    /// Whether `v` is a vertex of the graph.
    fn contains(&self, v: u64) -> bool;
    /// Whether the source's filter lets a traversal enter `v` (see [`ArcFilter::enters`]):
    /// the pages never hand out a neighbor it does not enter, but a search that starts from
    /// both ends must check its far end itself.
    fn enters(&self, _v: u64) -> bool {
        true
    }
    /// `v`'s distances from the source's landmarks ([`Landmarks`]), which bound the weight of
    /// paths for a goal-directed [`WeightedPath`]; `None` when the source keeps no valid ones.
    fn landmark_row(&self, _v: u64) -> Option<&[f64]> {
        None
    }

    /// Appends all kept neighbors of `v` in `dir` at once.
    fn neighbors(&self, v: u64, dir: Direction, out: &mut Vec<Neighbor>) {
        let mut cursor = ListCursor::start(dir);
        while !self.neighbors_page(v, dir, &mut cursor, usize::MAX, out) {}
    }
}

/// What a path search's endpoints settle before it searches at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ends {
    UnknownSource,
    UnknownTarget,
    /// Source and target are one vertex: the path is that vertex alone.
    Same,
    /// The filter does not let a path enter the target.
    Unreachable,
}

/// Checks a path search's `source` and `target` on `src` (two lookups); `None` when the search
/// has to run.
pub(crate) fn check_ends<S: NeighborSource + ?Sized>(
    src: &S,
    source: u64,
    target: u64,
) -> Option<Ends> {
    if !src.contains(source) {
        Some(Ends::UnknownSource)
    } else if !src.contains(target) {
        Some(Ends::UnknownTarget)
    } else if source == target {
        Some(Ends::Same)
    } else if !src.enters(target) {
        Some(Ends::Unreachable)
    } else {
        None
    }
}

/// A [`NeighborSource`] whose vertices are numbered densely, in *slots* `0..slots()`, and whose
/// lists can be read at once as slices of slots: what [`DirectionOptimizingBfs`] needs for its
/// bitmaps and its bottom-up scans, and what spares [`ShortestPath::over_slots`] an id lookup
/// per arc. The in-memory [`AdjacencyGraph`] offers it; a source that reads table indexes does
/// not.
///
/// A slot may hold no vertex (a removed one): such a slot has empty rows and is never reached.
/// A vertex without a slot may still exist (`contains`), with no arcs: the module's snapshot
/// holds only vertices that have arcs.
pub trait DenseSource: NeighborSource {
    /// Number of slots: every slot is below this.
    fn slots(&self) -> usize;
    /// The slot of vertex `v`, if it has one.
    fn slot(&self, v: u64) -> Option<u32>;
    /// The vertex id in `slot` (meaningless for a slot that holds none).
    fn vertex(&self, slot: u32) -> u64;
    /// The label of the vertex in `slot` (0: none).
    fn vertex_label(&self, _slot: u32) -> u32 {
        0
    }
    /// The arcs of `slot` followed in `dir`, as slots: for `Out` or `In` one row (and an empty
    /// one), for `Both` the outgoing row, then the incoming one. Unfiltered: together they hold
    /// what [`NeighborSource::neighbors`] returns, in slots, before the filter.
    fn rows(&self, slot: u32, dir: Direction) -> [&[u32]; 2];
    /// The attributes of the arcs in [`rows`](Self::rows), entry for entry; empty rows when
    /// every arc has the default attributes.
    fn attrs(&self, slot: u32, dir: Direction) -> [&[ArcAttrs]; 2];
    /// Their labels alone, as a label test reads them fastest.
    fn labels(&self, slot: u32, dir: Direction) -> [ArcLabels<'_>; 2];
    /// Which arcs the search follows.
    fn filter(&self) -> &ArcFilter;
    /// The total length of the rows of every slot in `dir`.
    fn arc_total(&self, dir: Direction) -> u64;
}

/// A traversal that advances in budgeted steps over a source of type `S`, so that a caller
/// drives [`Bfs`], [`Dfs`], [`ShortestPath`] (over any [`NeighborSource`]),
/// [`DirectionOptimizingBfs`] and `ShortestPath<u32>` (over a [`DenseSource`]) alike (see their
/// inherent methods of the same names).
pub trait Search<S: ?Sized> {
    type Outcome;
    /// Does about `budget` units of work; see [`Bfs::step`].
    fn step(&mut self, src: &S, budget: u64) -> Progress;
    /// Grows buffers for a step of `budget` units ahead of it.
    fn reserve(&mut self, budget: u64);
    fn work(&self) -> Work;
    fn into_outcome(self) -> (Self::Outcome, Work);
}

/// Implements [`Search`] for a search type by forwarding to its inherent methods.
macro_rules! impl_search {
    ($search:ty, $outcome:ty, $bound:path) => {
        impl<S: $bound + ?Sized> Search<S> for $search {
            type Outcome = $outcome;
            fn step(&mut self, src: &S, budget: u64) -> Progress {
                <$search>::step(self, src, budget)
            }
            fn reserve(&mut self, budget: u64) {
                <$search>::reserve(self, budget)
            }
            fn work(&self) -> Work {
                <$search>::work(self)
            }
            fn into_outcome(self) -> ($outcome, Work) {
                <$search>::into_outcome(self)
            }
        }
    };
}

impl_search!(Bfs, BfsOutcome, NeighborSource);
impl_search!(Dfs, DfsOutcome, NeighborSource);
impl_search!(ShortestPath, PathOutcome, NeighborSource);
impl_search!(ShortestPath<u32>, PathOutcome, DenseSource);
impl_search!(WeightedPath, WeightedOutcome, NeighborSource);
impl_search!(DirectionOptimizingBfs, BfsOutcome, DenseSource);

/// Work done by a traversal; the module reports it and uses it as the transaction budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Vertices whose neighbor lists were read.
    pub vertices_expanded: u64,
    /// Neighbor entries (arcs) read.
    pub arcs_scanned: u64,
    /// Single-vertex lookups (existence checks and degree reads).
    pub lookups: u64,
}

impl std::ops::AddAssign for Work {
    fn add_assign(&mut self, other: Work) {
        self.vertices_expanded += other.vertices_expanded;
        self.arcs_scanned += other.arcs_scanned;
        self.lookups += other.lookups;
    }
}

impl Work {
    /// The budget currency: one unit per arc, expanded vertex and lookup.
    pub fn units(&self) -> u64 {
        self.arcs_scanned + self.vertices_expanded + self.lookups
    }
}

/// Reads the next page (at most `max` arcs, at least 1) of `v`'s list in `dir` into `page`,
/// beginning the list, and counting `v` as expanded, when `list` is `None`; counts the arcs kept.
/// Returns whether the list is finished (then `list` is `None` again).
pub(crate) fn read_page<S: NeighborSource + ?Sized>(
    src: &S,
    v: u64,
    dir: Direction,
    list: &mut Option<ListCursor>,
    work: &mut Work,
    max: u64,
    page: &mut Vec<Neighbor>,
) -> bool {
    let cursor = list.get_or_insert_with(|| {
        work.vertices_expanded += 1;
        ListCursor::start(dir)
    });
    page.clear();
    let max = usize::try_from(max.max(1)).unwrap_or(usize::MAX);
    let done = src.neighbors_page(v, dir, cursor, max, page);
    if done {
        *list = None;
    }
    work.arcs_scanned += page.len() as u64;
    done
}

/// The most vertices one `step(_, budget)` can discover: a unit buys at most one new vertex, and
/// a step overshoots its budget by at most two units. Capped, so that a huge budget (one
/// transaction for everything) does not reserve memory it will never use.
pub(crate) fn discoveries_per_step(budget: u64) -> usize {
    usize::try_from(budget.saturating_add(2))
        .unwrap_or(usize::MAX)
        .min(1 << 20)
}

/// Whether a `step` finished the traversal or stopped because its budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// More work remains: call `step` again (typically in a new transaction).
    Suspended,
    /// The outcome is available.
    Done,
}

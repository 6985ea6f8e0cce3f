//! Peer graph systems measured beside SpacetimeDB on the same graph, seeds and queries.
//!
//! Each peer is a real server reached over its own protocol. A peer answers the same four
//! questions as the module; the bench-client checks every answer against the reference, so a
//! peer's answer shape only has to carry enough to be verified.

use graph_client::graph::Direction;

pub mod neo4j;
pub mod postgres;

/// What a BFS on a peer returns: per-level counts when the query language can give them
/// cheaply, otherwise the number of distinct vertices reached (the start included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reached {
    /// Vertices first reached at depth 0, 1, 2, ... (as `ReferenceGraph::bfs_levels`).
    Levels(Vec<u64>),
    /// Distinct vertices reached, the start included.
    Count(u64),
}

/// What a shortest-path query on a peer returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerPath {
    /// A shortest path, both endpoints included (`[a]` when `a == b`).
    Path(Vec<u64>),
    /// Only the hop count, when the query cannot cheaply return the vertices.
    Distance(u32),
    /// Both vertices exist and no path joins them.
    Unreachable,
    /// One of the two vertices is not in the graph.
    UnknownVertex,
}

/// A graph system the benchmark can load and query.
///
/// Edges are arcs `src -> dst`; `Direction::Both` treats them as undirected, as the module does.
pub trait Peer {
    /// The system's name in `--systems` and in reports, e.g. `neo4j-apoc`.
    fn system(&self) -> &'static str;
    /// Product and version, and settings that matter (heap size, fsync), for the report.
    fn describe(&mut self) -> anyhow::Result<String>;
    /// Empties the store, so that a load starts from nothing.
    fn clear(&mut self) -> anyhow::Result<()>;
    /// Loads `vertices` (distinct, sorted) and `edges` (distinct, sorted; self-loops kept),
    /// calling `progress` with the number of edges loaded so far.
    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        progress: &mut dyn FnMut(usize),
    ) -> anyhow::Result<()>;
    /// (vertices, edges) held by the store.
    fn counts(&mut self) -> anyhow::Result<(u64, u64)>;
    /// Distinct neighbors of `v` in `dir` (a self-loop counts once); `None` if `v` is unknown.
    fn neighbor_count(&mut self, v: u64, dir: Direction) -> anyhow::Result<Option<u64>>;
    /// BFS from `start` up to `max_depth` levels (all levels if `None`); `None` if unknown.
    fn bfs(
        &mut self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> anyhow::Result<Option<Reached>>;
    /// A shortest path from `a` to `b` following `dir`.
    fn shortest_path(&mut self, a: u64, b: u64, dir: Direction) -> anyhow::Result<PeerPath>;
}

//! What the benchmark asks of every system it measures, SpacetimeDB's modes and the peers alike:
//! load the graph, count it, and answer queries. Timing and verification are not the system's
//! business: `measure` times each call and checks the answer after the clock has stopped.

use crate::workloads::Workload;
use graph_client::graph::{Direction, QueryStats};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One question, the same for every system. Edges are arcs `src -> dst`; `Direction::Both`
/// treats them as undirected, as the module does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Query {
    /// How many distinct neighbors `vertex` has (a self-loop counts once).
    NeighborCount { vertex: u64, dir: Direction },
    /// BFS from `start`, every level or the first `max_depth` ones.
    Bfs {
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    },
    /// A shortest path from `source` to `target`.
    ShortestPath {
        source: u64,
        target: u64,
        dir: Direction,
    },
    /// BFS from `start` over the edges labelled with one of `labels` only.
    BfsLabels {
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        labels: LabelSet,
    },
    /// A path of least total weight from `source` to `target` (weights are non-negative).
    WeightedPath {
        source: u64,
        target: u64,
        dir: Direction,
    },
}

/// A set of the labels `l0` .. `l63` that `--random-labels` gives edges: bit `i` is `l{i}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelSet(pub u64);

impl LabelSet {
    /// The labels' names, ascending: `l0`, `l2`, ...
    pub fn names(self) -> Vec<String> {
        (0..64)
            .filter(|i| self.0 >> i & 1 == 1)
            .map(label_name)
            .collect()
    }

    /// The labels' indices `i` (of `l{i}`), ascending.
    pub fn indices(self) -> Vec<u32> {
        (0..64).filter(|i| self.0 >> i & 1 == 1).collect()
    }
}

/// A vertex id as a peer stores it. The peers' integers are signed 64-bit, so an id at or above
/// 2^63 is stored as the negative integer of the same 64 bits; every peer query compares ids
/// for equality only, so the graph and the answers stay the same.
pub fn stored_id(v: u64) -> i64 {
    v.cast_signed()
}

/// A peer's stored id back as the benchmark's (the inverse of [`stored_id`]).
pub fn vertex_id(v: i64) -> u64 {
    v.cast_unsigned()
}

/// The name `--random-labels` gives label `i`.
pub fn label_name(i: u32) -> String {
    format!("l{i}")
}

impl Query {
    /// The vertices the query names: the start, and the target of a path.
    pub fn input(&self) -> (u64, Option<u64>) {
        match *self {
            Query::NeighborCount { vertex, .. } => (vertex, None),
            Query::Bfs { start, .. } => (start, None),
            Query::ShortestPath { source, target, .. } => (source, Some(target)),
            Query::BfsLabels { start, .. } => (start, None),
            Query::WeightedPath { source, target, .. } => (source, Some(target)),
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Query::NeighborCount { vertex, dir } => write!(f, "neighbors of {vertex} ({dir})"),
            Query::Bfs {
                start,
                dir,
                max_depth: None,
            } => write!(f, "BFS from {start} ({dir})"),
            Query::Bfs {
                start,
                dir,
                max_depth: Some(depth),
            } => write!(f, "BFS from {start} ({dir}, depth {depth})"),
            Query::ShortestPath {
                source,
                target,
                dir,
            } => write!(f, "path {source} → {target} ({dir})"),
            Query::BfsLabels {
                start,
                dir,
                max_depth,
                labels,
            } => {
                write!(f, "BFS from {start} ({dir}")?;
                if let Some(depth) = max_depth {
                    write!(f, ", depth {depth}")?;
                }
                write!(f, ", labels {})", labels.names().join("|"))
            }
            Query::WeightedPath {
                source,
                target,
                dir,
            } => write!(f, "weighted path {source} → {target} ({dir})"),
        }
    }
}

/// A system's answer to a [`Query`], carrying as much as verification needs: systems whose query
/// language cannot cheaply return more may return less (a reached count instead of BFS levels,
/// a distance instead of a path).
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Distinct neighbors.
    Count(u64),
    /// BFS: how many vertices were first reached at depth 0, 1, 2, ...
    Levels(Vec<u64>),
    /// BFS: distinct vertices reached, the start included.
    Reached(u64),
    /// A shortest path, both ends included (`[a]` when `a == b`).
    Path(Vec<u64>),
    /// A path of least total weight, both ends included, and its total weight as the system
    /// reported it.
    WeightedPath { path: Vec<u64>, weight: f64 },
    /// Both vertices exist and no path joins them.
    Unreachable,
    /// A vertex the query names is not in the graph.
    UnknownVertex,
}

/// A reply and what the system measured about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub reply: Reply,
    /// Time the system measured itself, in µs: a server's execution time, or an embedded
    /// engine's in-process time. `None` when the system reports none.
    pub server_us: Option<u64>,
    /// The module's own account of the query's transactions (SpacetimeDB procedures only).
    pub stats: Option<TxStats>,
    /// The call's duration in ns, measured in the engine's own process around the query and the
    /// fetch of its result, for an embedded engine that the benchmark can only reach through a
    /// process and a pipe of its own, which an application embedding the engine does not have
    /// (Kuzu's worker). When set, `measure` records it as the call's time, and the client's
    /// clock (pipe included) beside it. `None` for every system reached as its users reach it.
    pub in_process_ns: Option<u64>,
}

/// The module's [`QueryStats`] as the reports record them (plain serde, unlike the generated
/// type, which serializes as SATS).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxStats {
    pub transactions: u32,
    pub yields: u32,
    pub max_hold_us: u64,
    pub total_hold_us: u64,
    pub slow_transactions: u32,
    pub total_us: u64,
    pub vertices_expanded: u64,
    pub edges_scanned: u64,
    pub lookups: u64,
    pub version_start: u64,
    pub version_end: u64,
    pub from_snapshot: bool,
    /// The graph version the answer is for, whether exactly, and what bringing the snapshot up
    /// to it cost (absent from reports written before the module pinned versions).
    #[serde(default)]
    pub version: u64,
    #[serde(default)]
    pub pinned: bool,
    #[serde(default)]
    pub changes_applied: u64,
    #[serde(default)]
    pub catch_up_us: u64,
}

impl From<&QueryStats> for TxStats {
    fn from(s: &QueryStats) -> Self {
        // Destructured in full, so that a field added to the module fails to compile here.
        let QueryStats {
            transactions,
            yields,
            max_hold_us,
            total_hold_us,
            slow_transactions,
            total_us,
            vertices_expanded,
            edges_scanned,
            lookups,
            version_start,
            version_end,
            from_snapshot,
            version,
            pinned,
            changes_applied,
            catch_up_us,
        } = *s;
        TxStats {
            transactions,
            yields,
            max_hold_us,
            total_hold_us,
            slow_transactions,
            total_us,
            vertices_expanded,
            edges_scanned,
            lookups,
            version_start,
            version_end,
            from_snapshot,
            version,
            pinned,
            changes_applied,
            catch_up_us,
        }
    }
}

impl From<Reply> for Answer {
    /// A bare reply, with nothing measured by the system.
    fn from(reply: Reply) -> Self {
        Answer {
            reply,
            server_us: None,
            stats: None,
            in_process_ns: None,
        }
    }
}

/// The labels and weights of a load's edges, aligned with them: empty lists when the dataset
/// has none (every edge unlabelled, of weight 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArcAttrs {
    /// Label names; `labels` index them, and index 0 is `""` (no label).
    pub label_names: Vec<String>,
    pub labels: Vec<u32>,
    pub weights: Vec<f32>,
}

impl ArcAttrs {
    /// Edge `i`'s label name (`""`: none).
    pub fn label(&self, i: usize) -> &str {
        match self.label_id(i) {
            0 => "",
            l => self.label_names[l as usize].as_str(),
        }
    }

    /// Edge `i`'s label, as an index into `label_names` (0: none).
    pub fn label_id(&self, i: usize) -> u32 {
        self.labels.get(i).copied().unwrap_or(0)
    }

    /// Edge `i`'s weight.
    pub fn weight(&self, i: usize) -> f32 {
        self.weights.get(i).copied().unwrap_or(1.0)
    }

    pub fn has_labels(&self) -> bool {
        !self.labels.is_empty()
    }

    pub fn has_weights(&self) -> bool {
        !self.weights.is_empty()
    }
}

/// A graph system the benchmark can load and query.
pub trait System {
    /// The system's name in `--systems` and in reports, e.g. `neo4j-apoc`.
    fn name(&self) -> &'static str;
    /// The store the system reads. Systems naming the same store (SpacetimeDB's modes, Neo4j's)
    /// read the same data: a run loads it once.
    fn store(&self) -> &'static str;
    /// Product and version, and settings that matter (heap size, fsync), for the report.
    fn describe(&mut self) -> anyhow::Result<String>;
    /// Empties the store, so that a load starts from nothing.
    fn clear(&mut self) -> anyhow::Result<()>;
    /// Loads `vertices` (distinct, sorted) and `edges` (distinct, sorted by `(src, dst)`;
    /// self-loops kept) with their labels and weights `attrs` (aligned with `edges`), calling
    /// `progress` with the number of edges loaded so far.
    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> anyhow::Result<()>;
    /// (vertices, edges) held by the store.
    fn counts(&mut self) -> anyhow::Result<(u64, u64)>;
    /// Whether the system can answer `workload`'s queries; the run skips the others.
    fn supports(&self, workload: Workload) -> bool;
    /// Why the system does not run `workload` (when [`System::supports`] says so), for the
    /// report.
    fn skip_reason(&self, workload: Workload) -> String {
        format!("{} does not run {workload}", self.name())
    }
    /// Answers one query. An unknown vertex is an answer ([`Reply::UnknownVertex`]), not an
    /// error; an error fails the run.
    fn answer(&mut self, query: &Query) -> anyhow::Result<Answer>;
    /// Another client of the same store, on a connection of its own, for the mixed workload's
    /// concurrent readers and writers: it answers and writes as this one does. `None` when the
    /// benchmark can reach the system through one client only (an embedded engine behind the
    /// benchmark's worker process).
    fn another_client(&self) -> Option<anyhow::Result<Box<dyn System + Send>>> {
        None
    }
    /// Gives back what the store holds, once the run asks nothing more of it: its data, and
    /// the engine's memory where the engine lets go of it, so that the systems measured after
    /// this one have the machine's memory (the LiveJournal-sized run does not fit otherwise).
    /// The default keeps everything: SpacetimeDB's store serves the workloads at the end of
    /// the run, and Neo4j's JVM keeps its heap and page cache whatever they hold.
    fn release(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Adds the arc `src -> dst`, unlabelled and of weight 1, making `src` a vertex if it is
    /// not one (`dst` is); committed when this returns.
    fn add_edge(&mut self, src: u64, dst: u64) -> anyhow::Result<()> {
        anyhow::bail!(
            "{} cannot add the edge {src} -> {dst}: it takes no writes",
            self.name()
        )
    }
    /// Removes the arc `src -> dst` (its ends stay vertices); committed when this returns.
    fn remove_edge(&mut self, src: u64, dst: u64) -> anyhow::Result<()> {
        anyhow::bail!(
            "{} cannot remove the edge {src} -> {dst}: it takes no writes",
            self.name()
        )
    }
}

/// A system for tests: it answers every query with the same reply after a set delay, and keeps
/// only the sizes of what it was loaded with, in a store other fakes may share.
#[cfg(test)]
pub mod fake {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    /// What a fake store holds, and how often it was loaded.
    #[derive(Debug, Default)]
    pub struct Store {
        pub vertices: u64,
        pub edges: u64,
        pub loads: usize,
    }

    pub struct Fake {
        pub name: &'static str,
        /// What [`System::store`] says; fakes sharing `store` should say the same.
        pub store_name: &'static str,
        pub store: Rc<RefCell<Store>>,
        pub reply: Reply,
        /// How long each answer takes.
        pub delay: Duration,
        /// Edges a load drops, to play a lossy loader.
        pub lost: u64,
        /// What the fake says it measured in its own process, ns (see [`Answer::in_process_ns`]).
        pub in_process_ns: Option<u64>,
        /// Queries answered so far.
        pub calls: usize,
        /// Fail every query, as an engine error would.
        pub fails: bool,
    }

    impl Fake {
        /// An instant, lossless fake with a store of its own.
        pub fn new(name: &'static str, reply: Reply) -> Fake {
            Fake {
                name,
                store_name: name,
                store: Rc::default(),
                reply,
                delay: Duration::ZERO,
                lost: 0,
                in_process_ns: None,
                calls: 0,
                fails: false,
            }
        }
    }

    impl System for Fake {
        fn name(&self) -> &'static str {
            self.name
        }

        fn store(&self) -> &'static str {
            self.store_name
        }

        fn describe(&mut self) -> anyhow::Result<String> {
            Ok(format!("{} (a test fake)", self.name))
        }

        fn clear(&mut self) -> anyhow::Result<()> {
            let mut store = self.store.borrow_mut();
            (store.vertices, store.edges) = (0, 0);
            Ok(())
        }

        fn load(
            &mut self,
            vertices: &[u64],
            edges: &[(u64, u64)],
            _attrs: &ArcAttrs,
            progress: &mut dyn FnMut(usize),
        ) -> anyhow::Result<()> {
            let mut store = self.store.borrow_mut();
            store.vertices += vertices.len() as u64;
            store.edges += edges.len() as u64 - self.lost;
            store.loads += 1;
            progress(edges.len());
            Ok(())
        }

        fn counts(&mut self) -> anyhow::Result<(u64, u64)> {
            let store = self.store.borrow();
            Ok((store.vertices, store.edges))
        }

        fn supports(&self, _: Workload) -> bool {
            true
        }

        fn answer(&mut self, _: &Query) -> anyhow::Result<Answer> {
            self.calls += 1;
            anyhow::ensure!(!self.fails, "the engine gave up");
            std::thread::sleep(self.delay);
            Ok(Answer {
                reply: self.reply.clone(),
                server_us: Some(1),
                stats: None,
                in_process_ns: self.in_process_ns,
            })
        }
    }
}

//! SpacetimeDB's graph module as a system, in its three modes: the Stage-2 procedures (`stdb`),
//! the full-scan procedures (`stdb-stage1`), and the full-scan reducers whose answers are read
//! back with SQL (`stdb-stage1-reducer`), each over the SDK's WebSocket, and the Stage-2
//! procedures over the HTTP call route too (`stdb-http`). This file is all the benchmark knows
//! of how the module is reached (`GraphDb`).

use crate::measure::{Pace, measure};
use crate::report::model::Sample;
use crate::system::{Answer, ArcAttrs, Query, Reply, System};
use crate::workloads::Workload;
use anyhow::bail;
use graph_client::edgelist::EdgeList;
use graph_client::graph::{
    self, BfsResult, ClientError, Follow, GraphDb, GraphError, LoadPlan, LoadProgress, Mode,
    NeighborCount, PathResult, PathStatus, TransportKind, TxOptions, WeightedPathResult,
};
use graph_client::ws::Drive;
use std::time::Duration;

/// The store every mode reads: the module's tables in one database.
pub const STORE: &str = "stdb";

/// The graph module in one mode.
pub struct SpacetimeDb {
    db: GraphDb,
    mode: Mode,
    tx: TxOptions,
    /// What the server is (`--server-kind`), for the report.
    server_kind: String,
    /// The reducer baseline keys its result rows by a query id: one per call.
    next_query_id: u64,
    /// How `load` sends the edges.
    load_plan: LoadPlan,
}

impl SpacetimeDb {
    pub fn new(db: GraphDb, mode: Mode, tx: TxOptions, server_kind: &str) -> Self {
        SpacetimeDb {
            db,
            mode,
            tx,
            server_kind: server_kind.to_string(),
            next_query_id: 0,
            load_plan: LoadPlan::default(),
        }
    }

    /// Loads with `plan` instead of one call of [`graph_client::graph::MAX_BATCH_EDGES`] at a
    /// time.
    pub fn with_load_plan(mut self, plan: LoadPlan) -> Self {
        self.load_plan = plan;
        self
    }

    /// Asks the module, in this mode, for what answers `query`.
    fn call(&mut self, query: &Query) -> Result<Response, ClientError> {
        let (db, tx) = (&self.db, self.tx);
        self.next_query_id += 1;
        let query_id = self.next_query_id;
        Ok(match (*query, self.mode) {
            (Query::NeighborCount { vertex, dir }, Mode::Stage2) => {
                Response::Count(db.neighbor_count(vertex, dir)?)
            }
            // The reducer baseline has no neighbor count: `answer` refuses to ask it.
            (Query::NeighborCount { vertex, dir }, _) => {
                Response::Count(db.neighbor_count_stage1(vertex, dir)?)
            }
            (
                Query::Bfs {
                    start,
                    dir,
                    max_depth,
                },
                mode,
            ) => match mode {
                Mode::Stage2 => Response::Bfs(db.bfs(start, dir, max_depth, 0, tx)?),
                Mode::Stage1Procedure => Response::Bfs(db.bfs_stage1(start, dir, max_depth)?),
                Mode::Stage1Reducer => {
                    Response::Levels(db.bfs_stage1_reducer(query_id, start, dir, max_depth)?)
                }
            },
            (
                Query::ShortestPath {
                    source,
                    target,
                    dir,
                },
                mode,
            ) => match mode {
                Mode::Stage2 => Response::Path(db.shortest_path(source, target, dir, None, tx)?),
                Mode::Stage1Procedure => {
                    Response::Path(db.shortest_path_stage1(source, target, dir, None)?)
                }
                Mode::Stage1Reducer => Response::PathRows(
                    db.shortest_path_stage1_reducer(query_id, source, target, dir, None)?,
                ),
            },
            // `answer` asks the other modes neither of these: they have no labels or weights.
            (
                Query::BfsLabels {
                    start,
                    dir,
                    max_depth,
                    labels,
                },
                _,
            ) => {
                let names = labels.names();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                Response::Bfs(db.bfs_over(start, dir, Follow::edges(&names), max_depth, 0, tx)?)
            }
            (
                Query::WeightedPath {
                    source,
                    target,
                    dir,
                },
                _,
            ) => Response::Weighted(db.weighted_shortest_path(
                source,
                target,
                dir,
                Follow::ALL,
                tx,
            )?),
        })
    }

    /// Whether `e` is the module refusing a vertex it does not hold: an answer, not a failure.
    /// Procedures return it typed; reducers can only fail with its text.
    fn is_unknown_vertex(&self, e: &ClientError) -> bool {
        match e {
            ClientError::Graph(GraphError::UnknownVertex(_)) => true,
            ClientError::ReducerFailed { message, .. } => {
                self.mode == Mode::Stage1Reducer && message.contains("unknown vertex")
            }
            _ => false,
        }
    }
}

/// What the module sent back, before it is read as a [`Reply`].
enum Response {
    Count(graph::Answer<NeighborCount>),
    Bfs(graph::Answer<BfsResult>),
    Path(graph::Answer<PathResult>),
    Weighted(graph::Answer<WeightedPathResult>),
    /// The reducer baseline's result rows: BFS levels.
    Levels(Vec<u64>),
    /// The reducer baseline's result rows: a path's vertices (none: no path).
    PathRows(Vec<u64>),
}

impl Response {
    fn into_answer(self) -> anyhow::Result<Answer> {
        let procedure = |reply, execution_us, stats: graph::QueryStats| Answer {
            reply,
            server_us: execution_us,
            stats: Some((&stats).into()),
            in_process_ns: None,
        };
        Ok(match self {
            Response::Count(a) => {
                procedure(Reply::Count(a.value.count), a.execution_us, a.value.stats)
            }
            Response::Bfs(a) => {
                procedure(Reply::Levels(a.value.levels), a.execution_us, a.value.stats)
            }
            Response::Path(a) => {
                let reply = match a.value.status {
                    PathStatus::Found => Reply::Path(a.value.path),
                    PathStatus::Unreachable => Reply::Unreachable,
                    // No depth bound is ever asked for.
                    PathStatus::BeyondMaxDepth => bail!("beyond max depth, though none was set"),
                };
                procedure(reply, a.execution_us, a.value.stats)
            }
            Response::Weighted(a) => {
                let reply = match a.value.status {
                    PathStatus::Found => {
                        anyhow::ensure!(
                            a.value.hops as usize + 1 == a.value.path.len(),
                            "{} hops reported for a path of {} vertices",
                            a.value.hops,
                            a.value.path.len()
                        );
                        Reply::WeightedPath {
                            path: a.value.path,
                            weight: a.value.weight,
                        }
                    }
                    PathStatus::Unreachable => Reply::Unreachable,
                    PathStatus::BeyondMaxDepth => bail!("beyond max depth from a weighted search"),
                };
                procedure(reply, a.execution_us, a.value.stats)
            }
            // Two calls (the reducer, then SQL): no single execution time, and no stats.
            Response::Levels(levels) => Reply::Levels(levels).into(),
            Response::PathRows(path) if path.is_empty() => Reply::Unreachable.into(),
            Response::PathRows(path) => Reply::Path(path).into(),
        })
    }
}

impl System for SpacetimeDb {
    fn name(&self) -> &'static str {
        match (self.mode, self.db.transport()) {
            (Mode::Stage2, TransportKind::Ws) => "stdb",
            (Mode::Stage2, TransportKind::Http) => "stdb-http",
            (Mode::Stage1Procedure, _) => "stdb-stage1",
            (Mode::Stage1Reducer, _) => "stdb-stage1-reducer",
        }
    }

    fn store(&self) -> &'static str {
        STORE
    }

    fn describe(&mut self) -> anyhow::Result<String> {
        let how = match self.mode {
            Mode::Stage2 => format!(
                "Stage-2 procedures in short transactions (tx budget: {}, yield every: {})",
                or_default(self.tx.tx_budget, ""),
                or_default(self.tx.yield_every_us, " µs")
            ),
            Mode::Stage1Procedure => "Stage-1 full-scan procedures".to_string(),
            Mode::Stage1Reducer => "Stage-1 full-scan reducers, results read with SQL".to_string(),
        };
        let transport = match self.db.transport() {
            TransportKind::Ws if self.db.drive() == Some(Drive::Caller) => {
                "the SDK's WebSocket (one connection, driven by the calling thread, confirmed reads)"
            }
            TransportKind::Ws => "the SDK's WebSocket (one connection, confirmed reads)",
            TransportKind::Http => "the HTTP call route",
        };
        Ok(format!(
            "{} at {}, database `{}`, over {transport}; {how}; loads in calls of {} edges, {} \
             out at once",
            self.server_kind,
            self.db.server().url(),
            self.db.database(),
            self.load_plan.batch,
            self.load_plan.calls_out(self.db.transport())
        ))
    }

    fn clear(&mut self) -> anyhow::Result<()> {
        Ok(self.db.clear()?)
    }

    /// Sends the edges only, with their labels and weights: the module makes a vertex of each
    /// edge's ends, and the dataset's vertices are exactly those.
    fn load(
        &mut self,
        _vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> anyhow::Result<()> {
        let mut edges: EdgeList = edges.iter().copied().collect();
        edges.label_names = attrs.label_names.clone();
        edges.labels = attrs.labels.clone();
        edges.weights = attrs.weights.clone();
        let started = std::time::Instant::now();
        let mut edges_stored = None;
        let outcome = self.db.load_with(&edges, self.load_plan, |p| match p {
            LoadProgress::BulkLoad { .. } | LoadProgress::BulkLoadFinished => {}
            LoadProgress::Edges { acknowledged, .. } => progress(acknowledged),
            LoadProgress::VertexRows { .. } => {
                edges_stored.get_or_insert_with(|| started.elapsed());
            }
        })?;
        if let Some(edges_stored) = edges_stored {
            println!(
                "{}: bulk load: edges stored in {:.2} s, then vertex rows written in {:.2} s ({} calls)",
                self.name(),
                edges_stored.as_secs_f64(),
                (started.elapsed() - edges_stored).as_secs_f64(),
                outcome.finish_calls
            );
        }
        Ok(())
    }

    fn counts(&mut self) -> anyhow::Result<(u64, u64)> {
        let info = self.db.info()?;
        Ok((info.vertices, info.edges))
    }

    /// The reducer baseline has no neighbor count; the baselines have no labels or weights.
    fn supports(&self, workload: Workload) -> bool {
        match workload {
            Workload::NeighborCount => self.mode != Mode::Stage1Reducer,
            Workload::BfsLabels | Workload::BfsLabelsAll | Workload::WeightedPath => {
                self.mode == Mode::Stage2
            }
            _ => true,
        }
    }

    fn skip_reason(&self, workload: Workload) -> String {
        match workload {
            Workload::NeighborCount => "the reducer baseline has no neighbor count".into(),
            _ => "the full-scan baselines have no labels or weights".into(),
        }
    }

    fn answer(&mut self, query: &Query) -> anyhow::Result<Answer> {
        match (query, self.mode) {
            (Query::NeighborCount { .. }, Mode::Stage1Reducer) => {
                bail!("the reducer baseline has no neighbor count")
            }
            (Query::BfsLabels { .. } | Query::WeightedPath { .. }, mode)
                if mode != Mode::Stage2 =>
            {
                bail!("the full-scan baselines have no labels or weights")
            }
            _ => {}
        }
        match self.call(query) {
            Ok(response) => response.into_answer(),
            Err(e) if self.is_unknown_vertex(&e) => Ok(Reply::UnknownVertex.into()),
            Err(e) => Err(e.into()),
        }
    }

    fn another_client(&self) -> Option<anyhow::Result<Box<dyn System + Send>>> {
        let db = self.db.reconnect();
        Some(Ok(Box::new(
            SpacetimeDb::new(db, self.mode, self.tx, &self.server_kind)
                .with_load_plan(self.load_plan),
        )))
    }

    /// The module's bulk reducers with one edge: writes are reducers in every mode.
    fn add_edge(&mut self, src: u64, dst: u64) -> anyhow::Result<()> {
        Ok(self.db.add_edges(&[src], &[dst])?)
    }

    fn remove_edge(&mut self, src: u64, dst: u64) -> anyhow::Result<()> {
        Ok(self.db.remove_edges(&[src], &[dst])?)
    }
}

/// A tuning knob's value for the report: 0 means the module's default.
fn or_default(value: u32, unit: &str) -> String {
    if value == 0 {
        "module default".to_string()
    } else {
        format!("{value}{unit}")
    }
}

/// The round-trip floor's benchmarks: the module's empty procedure, and its empty reducer.
pub const FLOOR: [(&str, bool); 2] = [("empty procedure", true), ("empty reducer", false)];

/// The system name of the round-trip floor over `db`'s transport.
pub fn floor_system(db: &GraphDb) -> &'static str {
    match db.transport() {
        TransportKind::Ws => "stdb",
        TransportKind::Http => "stdb-http",
    }
}

/// `calls` calls of the module's empty procedure (or reducer) by `call`, after 20 unmeasured
/// ones, each after `idle`, through the loop every benchmark runs: the round-trip floor. The
/// samples are under `workload`, system `system` ([`floor_system`] for a [`GraphDb`]).
pub fn round_trip(
    system: &str,
    workload: &str,
    calls: usize,
    idle: Duration,
    mut call: impl FnMut() -> anyhow::Result<Option<u64>>,
) -> anyhow::Result<Vec<Sample>> {
    let timed = measure(
        &vec![(); calls],
        Pace { warmup: 20, idle },
        |_| call(),
        // Nothing to verify: the call returns nothing.
        |_, _| Ok(()),
    )?;
    Ok(timed
        .into_iter()
        .enumerate()
        .map(|(index, t)| Sample {
            system: system.to_string(),
            workload: workload.to_string(),
            index,
            a: None,
            b: None,
            e2e_us: t.e2e_us,
            server_us: t.value,
            client_us: None,
            at_s: None,
            stats: None,
        })
        .collect())
}

//! `check`: recomputes what the writes maintain incrementally (every vertex's degrees, the
//! counts and the id bound in `graph_meta`, the change log's coverage) from the `edge` and
//! `vertex` tables, and reports every difference. Used after a crash, or whenever a user doubts
//! the bookkeeping.
//!
//! It reads both tables whole in one transaction, so that it compares one state: about 1 µs
//! per edge, during which writers wait (a second for a million edges). It is a maintenance
//! command, not a query.
//!
//! While a bulk load is under way, only the vertices below its `finished_below` have rows with
//! exact degrees (see `bulk`): the degrees of the others are not compared and their missing rows
//! are not differences. The counts are: a bulk load keeps them exact.

use crate::bulk;
use crate::changelog;
use crate::edges;
use crate::schema::{GraphMeta, change_log, meta, vertex};
use crate::tx_runner::TxRunner;
use hashbrown::HashMap;
use spacetimedb::{ProcedureContext, SpacetimeType, Table, procedure};

/// Most differences listed one by one in a report (all are counted).
const MAX_LISTED: usize = 20;

/// What `check` found.
#[derive(SpacetimeType, Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The meta row as stored, and the vertices and edges counted in the tables.
    pub meta: GraphMeta,
    pub vertices: u64,
    pub edges: u64,
    /// Differences found (0: the graph is consistent), and the first ones, described.
    pub problems: u64,
    pub listed: Vec<String>,
    /// How long the transaction held, µs.
    pub took_us: u64,
}

#[derive(Default)]
struct Findings {
    problems: u64,
    listed: Vec<String>,
}

impl Findings {
    fn add(&mut self, what: impl FnOnce() -> String) {
        self.problems += 1;
        if self.listed.len() < MAX_LISTED {
            self.listed.push(what());
        }
    }
}

/// Recomputes degrees and counts from the tables and lists where the stored ones differ.
#[procedure]
pub fn check(ctx: &mut ProcedureContext) -> CheckReport {
    let mut runner = TxRunner::new(ctx, u32::MAX);
    let mut report = runner.run(|tx| {
        let stored = meta(&tx.db);
        let unfinished_from = bulk::under_way(&tx.db).map(|b| b.finished_below);
        let finished = |id: u64| unfinished_from.is_none_or(|from| id < from);
        let mut found = Findings::default();
        let mut degrees: HashMap<u64, (u64, u64)> = HashMap::new();
        let mut arcs = 0u64;
        edges::for_each(&tx.db, |e| {
            arcs += 1;
            degrees.entry(e.src).or_default().0 += 1;
            degrees.entry(e.dst).or_default().1 += 1;
        });
        let mut vertices = 0u64;
        let mut max_id = 0u64;
        for v in tx.db.vertex().iter() {
            vertices += 1;
            max_id = max_id.max(v.id);
            let (out, inc) = degrees.remove(&v.id).unwrap_or_default();
            if finished(v.id) && (v.out_degree as u64, v.in_degree as u64) != (out, inc) {
                found.add(|| {
                    format!(
                        "vertex {}: stored degrees out {} in {}, the edge table has out {out} in {inc}",
                        v.id, v.out_degree, v.in_degree
                    )
                });
            }
        }
        // Endpoints left over have edges but no vertex row.
        for (id, (out, inc)) in degrees.into_iter().filter(|&(id, _)| finished(id)) {
            found.add(|| format!("vertex {id} has {out} out- and {inc} in-edges but no vertex row"));
        }
        if (stored.vertices, stored.edges) != (vertices, arcs) {
            found.add(|| {
                format!(
                    "graph_meta counts {} vertices and {} edges; the tables hold {vertices} and {arcs}",
                    stored.vertices, stored.edges
                )
            });
        }
        if vertices > 0 && stored.max_vertex_id < max_id {
            found.add(|| {
                format!(
                    "graph_meta.max_vertex_id is {}, below vertex {max_id}",
                    stored.max_vertex_id
                )
            });
        }
        let covers_after = changelog::covers_after(&tx.db);
        if covers_after != u64::MAX && covers_after > stored.version {
            found.add(|| {
                format!(
                    "the change log covers versions after {covers_after}, beyond version {}",
                    stored.version
                )
            });
        }
        let ahead = tx
            .db
            .change_log()
            .by_version()
            .filter(stored.version.saturating_add(1)..)
            .count();
        if ahead > 0 {
            found.add(|| format!("{ahead} logged changes are of versions after {}", stored.version));
        }
        CheckReport {
            meta: stored,
            vertices,
            edges: arcs,
            problems: found.problems,
            listed: found.listed,
            took_us: 0,
        }
    });
    report.took_us = runner.finish().max_hold_us;
    report
}

//! SpacetimeDB 2.x graph module.
//!
//! A directed graph lives in two tables, `vertex` and `edge` (with `wide_edge` for ids of 2^32 and
//! up), whose unique B-tree keys make the out- and in-neighbors of a vertex one index scan each. Bulk-insert reducers load it; procedures
//! answer neighbor, BFS and shortest-path queries with the Stage-2 operator from `graph-traverse`
//! (index-hop BFS and balanced bidirectional search) in short, measured transactions, or over an
//! in-memory snapshot once a BFS, or many small traversals together, have read a large share of
//! the graph (`snapshot`). Stage-1 baselines (full edge scan per query, and reducer-written result rows) live in `baseline` for
//! side-by-side benchmarks.

mod access;
mod baseline;
mod bulk;
mod changelog;
mod check;
mod edges;
mod export;
mod labels;
mod load;
mod memory;
mod pin;
mod procedures;
mod rows;
mod schema;
mod snapshot;
mod source;
mod tx_runner;
mod types;

pub use check::CheckReport;
pub use export::{ExportCursor, ExportPage, ExportedEdge, ExportedVertex};
pub use schema::*;
pub use types::*;

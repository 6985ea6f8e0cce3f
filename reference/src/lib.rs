//! Independent reference answers for the project's tests and benchmarks.
//!
//! [`ReferenceGraph`] answers neighbor, BFS, DFS and distance queries with textbook algorithms that
//! share no code with the traversal operator in `graph-traverse` (only its `Direction` type),
//! so that the operator, the module and every benchmarked system can be checked against it.
//! [`LabelledGraph`] adds label filters and a textbook Dijkstra for labelled, weighted arcs.
//! [`generate`] builds the seeded synthetic graphs the tests and benchmarks run on.

pub mod generate;
mod graph;
mod labelled;

pub use graph::{DfsTrace, ReferenceGraph};
pub use graph_traverse::Direction;
pub use labelled::{Follow, LabelledGraph};

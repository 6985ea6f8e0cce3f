//! The systems the benchmark measures, each behind [`crate::system::System`]: SpacetimeDB's
//! graph module in its three modes, and the peers: real servers reached over their own
//! protocols, and an embedded engine (Kuzu) run in a worker process through its Python API; and
//! the native floor, the module's own operator run natively in the benchmark's process. A
//! system's answer only has to carry enough to be verified.

pub mod falkordb;
pub mod kuzu;
pub mod native;
pub mod neo4j;
pub mod postgres;
pub mod raw_ws;
pub mod stdb;

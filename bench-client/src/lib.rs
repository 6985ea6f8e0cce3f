//! Benchmark client library: datasets, the systems measured and what they are asked, the
//! warm-up/measure loop, verification against the reference, and reports.

pub mod contention;
pub mod datasets;
pub mod footprint;
pub mod ingest;
pub mod live;
pub mod load;
pub mod measure;
pub mod mixed;
pub mod report;
pub mod system;
pub mod systems;
pub mod under_writes;
pub mod verify;
pub mod workloads;

//! Benchmark client library: datasets, reference answers, verified workloads and reports.

pub mod charts;
pub mod contention;
pub mod datasets;
pub mod peers;
pub mod reference;
pub mod report;
pub mod summary;
pub mod workloads;

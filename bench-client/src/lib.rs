//! Benchmark client library: datasets, reference answers, verified workloads and reports.

pub mod contention;
pub mod datasets;
pub mod peer_bench;
pub mod peers;
pub mod report;
pub mod workloads;

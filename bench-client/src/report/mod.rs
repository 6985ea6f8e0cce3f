//! The benchmark report: its data (`model`), rendered as Markdown (`markdown`), PNG charts
//! (`charts`) and raw samples (`samples`), and written to files (`write`). The renderers read
//! only the model; only the writer uses the renderers.

pub mod charts;
pub mod markdown;
pub mod model;
pub mod samples;
pub mod write;

//! Client for the SpacetimeDB graph module: the typed graph API (`graph`) over the SDK's
//! WebSocket (`ws`) or the raw HTTP API (`server`), the module's generated SDK bindings
//! (`module_bindings`, written by `scripts/generate`), edge-list files (`edgelist`) and
//! the files `graph export` writes (`export`).

pub mod edge_rows;
pub mod edgelist;
pub mod export;
pub mod graph;
pub mod module_bindings;
pub mod server;
pub mod token_store;
pub mod watch;
pub mod ws;

//! Client for the SpacetimeDB graph module: the raw HTTP API (`server`), edge-list files
//! (`edgelist`), the typed graph API (`graph`), and the module's generated SDK bindings
//! (`module_bindings`, written by `scripts/generate`).

pub mod edgelist;
pub mod graph;
pub mod module_bindings;
pub mod server;
pub mod token_store;

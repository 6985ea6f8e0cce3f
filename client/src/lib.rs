//! Client for the SpacetimeDB graph module: the raw HTTP API (`server`), edge-list files
//! (`edgelist`), and the typed graph API (`graph`).

pub mod edgelist;
pub mod graph;
pub mod server;
pub mod token_store;

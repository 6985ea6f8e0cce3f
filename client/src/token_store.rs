//! Remembers one identity token per server in the user's config directory, as the `spacetime`
//! CLI does, so that repeated commands act as the same identity (and as the database owner).

use crate::server::{Server, ServerError};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `$XDG_CONFIG_HOME/stdb-graph/tokens.json` (or `~/.config/…`).
pub fn path() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("stdb-graph").join("tokens.json")
}

fn load() -> BTreeMap<String, String> {
    std::fs::read_to_string(path())
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// The remembered token for `server`, or a new identity's token, which is then remembered.
pub fn token_for(server: &Server) -> Result<String, ServerError> {
    let mut tokens = load();
    if let Some(token) = tokens.get(server.url()) {
        return Ok(token.clone());
    }
    let identity = server.create_identity()?;
    tokens.insert(server.url().to_string(), identity.token.clone());
    let path = path();
    // Failing to remember is not fatal: the command still runs with the new identity.
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(text) = serde_json::to_string_pretty(&tokens) {
        let _ = std::fs::write(&path, text);
    }
    Ok(identity.token)
}

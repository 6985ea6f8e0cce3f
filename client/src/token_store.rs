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

/// Why the remembered tokens could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The file exists but is not a JSON object of server URLs to tokens. It is left as it is:
    /// rewriting it would lose the tokens of every other server, maybe a database owner's.
    #[error(
        "{path} is not a JSON object of server URLs to tokens ({error}); fix or remove it, or \
         pass --token"
    )]
    Corrupt {
        path: String,
        error: serde_json::Error,
    },
    #[error("cannot read {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error(transparent)]
    Server(#[from] ServerError),
}

fn load() -> Result<BTreeMap<String, String>, TokenError> {
    let path = path();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(error) => {
            return Err(TokenError::Read {
                path: path.display().to_string(),
                error,
            });
        }
    };
    serde_json::from_str(&text).map_err(|error| TokenError::Corrupt {
        path: path.display().to_string(),
        error,
    })
}

/// The remembered token for `server`, or a new identity's token, which is then remembered.
pub fn token_for(server: &Server) -> Result<String, TokenError> {
    let mut tokens = load()?;
    if let Some(token) = tokens.get(server.url()) {
        return Ok(token.clone());
    }
    let identity = server.create_identity()?;
    tokens.insert(server.url().to_string(), identity.token.clone());
    // Failing to remember is not fatal: the command still runs with the new identity.
    if let Err(e) = save(&tokens) {
        log::warn!(
            "could not remember the new identity's token in {}: {e}",
            path().display()
        );
    }
    Ok(identity.token)
}

/// Writes `tokens` through a temporary file and a rename, so that a crash mid-write leaves the
/// old file whole.
fn save(tokens: &BTreeMap<String, String>) -> std::io::Result<()> {
    let path = path();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, serde_json::to_string_pretty(tokens)?)?;
    std::fs::rename(&partial, &path)
}

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

/// Writes `tokens` through a temporary file (one per process) and a rename, so that a crash or
/// another `graph` saving at the same moment never leaves a half-written file. The file keeps
/// its permissions (new files: owner only, they are bearer tokens), and a symlink keeps
/// pointing at it.
fn save(tokens: &BTreeMap<String, String>) -> std::io::Result<()> {
    let path = path();
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let partial = path.with_extension(format!("json.{}.partial", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mode = std::fs::metadata(&path).map_or(0o600, |m| m.permissions().mode() & 0o777);
        options.mode(mode);
    }
    let written = options.open(&partial).and_then(|mut file| {
        use std::io::Write;
        file.write_all(serde_json::to_string_pretty(tokens)?.as_bytes())
    });
    match written.and_then(|()| std::fs::rename(&partial, &path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

//! The engine's local persistence (commit log and snapshots on disk), plus a snapshot of every
//! database when the host stops.
//!
//! The engine snapshots a database only when its commit log opens a new segment or every
//! million transactions; on restart it restores the latest snapshot and replays the commit log
//! after it. A large graph loaded in a few dozen big transactions is therefore replayed whole
//! after each restart (34 s of a 146 s restart on the LiveJournal-sized graph). A snapshot taken
//! as the host stops leaves nothing to replay after a clean stop; after a crash the engine
//! recovers as before.
//!
//! A process killed while the engine writes (or compresses) a snapshot leaves that snapshot
//! unfinished, marked by its lock file. The engine never restores such a snapshot, but the lock
//! makes its next snapshot at the same offset fail ("Failed to acquire lock"), so a later
//! crash replays the log from an older one. Each database's unfinished snapshots are therefore
//! removed as it starts, which only this host can be doing: it holds the data dir's pid file.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use spacetimedb_paths::server::ServerDataDir;

use spacetimedb::db::persistence::{
    Database, Durability, LocalPersistenceProvider, Persistence, PersistenceProvider,
};
use spacetimedb::db::snapshot::SnapshotWorker;

/// [`LocalPersistenceProvider`] that remembers each running replica's snapshot worker and
/// commit log, so that [`SnapshotOnStop::snapshot_all`] can snapshot them before they stop.
pub struct SnapshotOnStop {
    local: LocalPersistenceProvider,
    data_dir: Arc<ServerDataDir>,
    replicas: Mutex<HashMap<u64, Replica>>,
}

struct Replica {
    snapshots: SnapshotWorker,
    durability: Arc<Durability>,
}

impl SnapshotOnStop {
    /// Persistence in `data_dir`, whose pid file the caller holds.
    pub fn new(data_dir: Arc<ServerDataDir>) -> Self {
        Self {
            local: LocalPersistenceProvider::new(data_dir.clone()),
            data_dir,
            replicas: Mutex::default(),
        }
    }

    /// Snapshots every replica of `running` whose commit log has transactions after its latest
    /// snapshot, waiting up to `limit` for each. Call it before the databases stop: a snapshot
    /// captures a running database's committed state (one that failed to start has none, and
    /// its worker would never answer). Failures are logged; the commit log still holds
    /// everything.
    pub async fn snapshot_all(&self, running: &BTreeSet<u64>, limit: Duration) {
        // Replicas whose commit log has closed (deleted databases) are skipped.
        let replicas: Vec<(u64, SnapshotWorker, Option<u64>)> = self
            .replicas
            .lock()
            .unwrap()
            .iter()
            .filter(|(id, _)| running.contains(id))
            .filter_map(|(&id, r)| {
                let logged = r.durability.durable_tx_offset().get().ok()?;
                Some((id, r.snapshots.clone(), logged))
            })
            .collect();
        for (replica_id, worker, logged) in replicas {
            let mut created = worker.subscribe();
            let latest = *created.borrow_and_update();
            if logged.is_none() || latest >= logged {
                continue; // Nothing logged after the latest snapshot.
            }
            let started = Instant::now();
            worker.request_snapshot_ignore_closed(); // A stopped worker: the timeout below.
            match tokio::time::timeout(limit, created.changed()).await {
                Ok(Ok(())) => log::info!(
                    "replica {replica_id}: snapshot at tx {:?} (log at {logged:?}) in {:.1} s",
                    *created.borrow(),
                    started.elapsed().as_secs_f64()
                ),
                Ok(Err(_)) => log::warn!("replica {replica_id}: its snapshot worker has stopped"),
                Err(_) => log::warn!(
                    "replica {replica_id}: no snapshot within {limit:?}; the restart replays the log"
                ),
            }
        }
    }

    /// Forgets `replica_id` (a database deleted or reset).
    pub fn forget(&self, replica_id: u64) {
        self.replicas.lock().unwrap().remove(&replica_id);
    }
}

/// Waits, at most `limit`, until no snapshot in the repository `dir` has been locked for a
/// quarter of a second; whether that happened. The engine's snapshot worker outlives its
/// replica's host (2.14 never stops it) and may still be writing or compressing a snapshot
/// (a new database's first one takes tens of milliseconds after it was created): removing the
/// directory under it makes it panic on its vanished lock file, which takes the whole host
/// down. Once the host has exited nothing asks for another snapshot, and one already asked for
/// finds the database gone before it touches the disk.
pub async fn snapshots_settled(dir: &Path, limit: Duration) -> bool {
    const QUIET: Duration = Duration::from_millis(250);
    let until = Instant::now() + limit;
    let mut quiet_since = Instant::now();
    loop {
        if any_locked(dir) {
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= QUIET {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether the snapshot repository `dir` holds a lock file (a snapshot being written or
/// compressed).
fn any_locked(dir: &Path) -> bool {
    snapshot_locks(dir).is_ok_and(|locks| !locks.is_empty())
}

/// The lock files in the snapshot repository `dir` (`<offset>.lock`, beside the snapshot it
/// locks); a missing directory holds none.
fn snapshot_locks(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut locks = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "lock") {
            locks.push(path);
        }
    }
    Ok(locks)
}

#[async_trait::async_trait]
impl PersistenceProvider for SnapshotOnStop {
    async fn persistence(
        &self,
        database: &Database,
        replica_id: u64,
    ) -> anyhow::Result<Persistence> {
        let snapshots = self.data_dir.replica(replica_id).snapshots();
        match remove_unfinished_snapshots(&snapshots.0) {
            Ok(0) => {}
            Ok(n) => log::warn!(
                "replica {replica_id}: removed {n} unfinished snapshot(s) a stopped process left"
            ),
            Err(e) => log::warn!("replica {replica_id}: looking for unfinished snapshots: {e}"),
        }
        let persistence = self.local.persistence(database, replica_id).await?;
        if let Some(snapshots) = &persistence.snapshots {
            self.replicas.lock().unwrap().insert(
                replica_id,
                Replica {
                    snapshots: snapshots.clone(),
                    durability: persistence.durability.clone(),
                },
            );
        }
        Ok(persistence)
    }
}

/// Removes from the snapshot repository `dir` every snapshot whose lock file is still there
/// (`<offset>.lock` beside `<offset>.snapshot_dir`), with its lock; returns how many. A
/// missing `dir` holds none.
fn remove_unfinished_snapshots(dir: &Path) -> std::io::Result<usize> {
    let locks = snapshot_locks(dir)?;
    for lock in &locks {
        let snapshot = lock.with_extension("snapshot_dir");
        if snapshot.exists() {
            std::fs::remove_dir_all(&snapshot)?;
        }
        std::fs::remove_file(lock)?;
    }
    Ok(locks.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_snapshots_go_and_finished_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        for snapshot in ["00000000000000000050", "00000000000000000071"] {
            std::fs::create_dir_all(at(&format!("{snapshot}.snapshot_dir/objects"))).unwrap();
            std::fs::write(
                at(&format!(
                    "{snapshot}.snapshot_dir/{snapshot}.snapshot_bsatn"
                )),
                b"x",
            )
            .unwrap();
        }
        std::fs::write(at("00000000000000000071.lock"), b"").unwrap();
        // A lock whose snapshot directory was not created yet.
        std::fs::write(at("00000000000000000090.lock"), b"").unwrap();
        assert_eq!(remove_unfinished_snapshots(dir.path()).unwrap(), 2);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["00000000000000000050.snapshot_dir"]);
        assert_eq!(remove_unfinished_snapshots(&at("missing")).unwrap(), 0);
    }
}

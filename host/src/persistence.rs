//! The engine's local persistence (commit log and snapshots on disk), plus a snapshot of every
//! database when the host stops.
//!
//! The engine snapshots a database only when its commit log opens a new segment or every
//! million transactions; on restart it restores the latest snapshot and replays the commit log
//! after it. A large graph loaded in a few dozen big transactions is therefore replayed whole
//! after each restart (34 s of a 146 s restart on the LiveJournal-sized graph). A snapshot taken
//! as the host stops leaves nothing to replay after a clean stop; after a crash the engine
//! recovers as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use spacetimedb::db::persistence::{
    Database, Durability, LocalPersistenceProvider, Persistence, PersistenceProvider,
};
use spacetimedb::db::snapshot::SnapshotWorker;

/// [`LocalPersistenceProvider`] that remembers each running replica's snapshot worker and
/// commit log, so that [`SnapshotOnStop::snapshot_all`] can snapshot them before they stop.
pub struct SnapshotOnStop {
    local: LocalPersistenceProvider,
    replicas: Mutex<HashMap<u64, Replica>>,
}

struct Replica {
    snapshots: SnapshotWorker,
    durability: Arc<Durability>,
}

impl SnapshotOnStop {
    pub fn new(local: LocalPersistenceProvider) -> Self {
        Self {
            local,
            replicas: Mutex::default(),
        }
    }

    /// Snapshots every replica whose commit log has transactions after its latest snapshot,
    /// waiting up to `limit` for each. Call it before the databases stop: a snapshot captures a
    /// running database's committed state. Failures are logged; the commit log still holds
    /// everything.
    pub async fn snapshot_all(&self, limit: Duration) {
        // Replicas whose commit log has closed (deleted databases) are skipped.
        let replicas: Vec<(u64, SnapshotWorker, Option<u64>)> = self
            .replicas
            .lock()
            .unwrap()
            .iter()
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
}

#[async_trait::async_trait]
impl PersistenceProvider for SnapshotOnStop {
    async fn persistence(
        &self,
        database: &Database,
        replica_id: u64,
    ) -> anyhow::Result<Persistence> {
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

//! The database registry and the publish / reset / delete lifecycle.
//!
//! This is the part of the official standalone server's control database that our API subset
//! needs: name → database identity, owner, initial program, and the replica that holds its
//! data. It is a small JSON file in the data dir, rewritten atomically on every change. Program
//! bytes live in the engine's own content-addressed `DiskStorage`; the data itself lives in the
//! engine's replica directories (commit log and snapshots).
//!
//! The registry knows nothing of HTTP: it fails with [`ControlError`], which the routes map to
//! status codes in one place.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use spacetimedb::host::{
    DiskStorage, HostController, MigratePlanResult, ModuleHost, UpdateDatabaseResult,
};
use spacetimedb::messages::control_db::{Database, HostType};
use spacetimedb_client_api_messages::name::{DatabaseName, PublishOp, PublishResult};
use spacetimedb_datastore::traits::Program;
use spacetimedb_lib::{Hash, Identity};
use spacetimedb_paths::server::{ReplicaDir, ServerDataDir};
use spacetimedb_schema::auto_migrate::{MigrationPolicy, PrettyPrintStyle};

use crate::auth::random_identity;
use crate::persistence::{self, SnapshotOnStop};

/// Why the registry refused or failed a request.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// A path segment that is neither a database identity nor a valid name.
    #[error("Invalid URL: {0}")]
    InvalidName(String),
    #[error("`{0}` not found")]
    UnknownName(DatabaseName),
    #[error("No such database.")]
    UnknownIdentity,
    #[error("Clear database requires database name or identity")]
    ClearNeedsTarget,
    /// Only the owner may change a database.
    #[error("{subject} is not authorized to perform action on database {database}: {action}")]
    NotOwner {
        subject: Identity,
        database: Identity,
        action: &'static str,
    },
    /// The new module's schema cannot replace the running one's.
    #[error("Database update rejected: {0}")]
    MigrationRejected(String),
    #[error("Failed to create or update the database: {0}")]
    MigrationFailed(String),
    /// The program is not a module the engine can run (a truncated or corrupt wasm file, a
    /// module whose definition does not validate, an `init` that fails).
    #[error("invalid module: {0:#}")]
    InvalidModule(anyhow::Error),
    /// The engine failed (an I/O error, ...).
    #[error("{0:#}")]
    Engine(anyhow::Error),
}

impl ControlError {
    fn engine(e: impl Into<anyhow::Error>) -> Self {
        Self::Engine(e.into())
    }
}

type Result<T, E = ControlError> = std::result::Result<T, E>;

/// How a request names a database: by name or by its identity (64 hex digits).
#[derive(Clone, Debug)]
pub enum Target {
    Name(DatabaseName),
    Identity(Identity),
}

impl Target {
    /// Parses a path segment the way the official `NameOrIdentity` does.
    pub fn parse(s: &str) -> Result<Self> {
        if let Ok(identity) = Identity::from_hex(s) {
            return Ok(Self::Identity(identity));
        }
        s.parse()
            .map(Self::Name)
            .map_err(|e| ControlError::InvalidName(e.to_string()))
    }

    fn name(&self) -> Option<&DatabaseName> {
        match self {
            Self::Name(name) => Some(name),
            Self::Identity(_) => None,
        }
    }
}

/// One registered database.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DbRecord {
    pub id: u64,
    /// The replica whose directory holds the data; a `clear` publish moves to a fresh one.
    pub replica_id: u64,
    pub name: Option<String>,
    #[serde(with = "hex_identity")]
    pub database_identity: Identity,
    #[serde(with = "hex_identity")]
    pub owner_identity: Identity,
    #[serde(with = "hex_hash")]
    pub initial_program: Hash,
    pub bootstrap_generation: u64,
}

impl DbRecord {
    pub fn database(&self) -> Database {
        Database {
            id: self.id,
            database_identity: self.database_identity,
            owner_identity: self.owner_identity,
            host_type: HostType::Wasm,
            initial_program: self.initial_program,
            bootstrap_generation: self.bootstrap_generation,
        }
    }
}

/// The persisted registry.
#[derive(Default, Serialize, Deserialize)]
struct Registry {
    next_id: u64,
    databases: Vec<DbRecord>,
    /// Name → the identity of the database first created under it (hex), kept after that
    /// database is deleted, as the official server keeps its DNS records: publishing the name
    /// again, as any identity, creates a database with that identity.
    #[serde(default)]
    names: BTreeMap<String, String>,
}

impl Registry {
    /// A saved registry. One written before `names` existed gets the names of the databases it
    /// holds, which then keep their identities when deleted and published again.
    fn from_json(bytes: &[u8]) -> serde_json::Result<Self> {
        let mut registry: Self = serde_json::from_slice(bytes)?;
        for db in &registry.databases {
            if let Some(name) = &db.name {
                (registry.names.entry(name.clone()))
                    .or_insert_with(|| db.database_identity.to_hex().to_string());
            }
        }
        Ok(registry)
    }

    fn find(&self, target: &Target) -> Option<&DbRecord> {
        let by_identity = |identity: Identity| {
            (self.databases.iter()).find(move |db| db.database_identity == identity)
        };
        match target {
            Target::Name(name) => {
                let named = self
                    .databases
                    .iter()
                    .find(|db| db.name.as_deref() == Some(name.as_ref()));
                named.or_else(|| by_identity(self.named(name)?))
            }
            Target::Identity(identity) => by_identity(*identity),
        }
    }

    /// The identity kept for `name`, if a database was ever created under it.
    fn named(&self, name: &DatabaseName) -> Option<Identity> {
        Identity::from_hex(self.names.get(name.as_ref())?).ok()
    }

    fn alloc_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

/// How often retiring a replica says that calls or connections still use it.
const RETIRE_NOTE_EVERY: Duration = Duration::from_secs(30);

/// A use of a replica ([`Control::use_replica`]).
pub type Use = watch::Receiver<bool>;

/// Removes a retired replica's directory once no snapshot in it has been locked for a moment
/// ([`persistence::snapshots_settled`]); one still locked after ten minutes stays, and says so
/// (the next start removes it, [`Control::remove_orphans`]).
async fn remove_retired(replica_id: u64, replica: ReplicaDir) {
    const LIMIT: Duration = Duration::from_secs(600);
    if !replica.0.exists() {
        return; // In memory.
    }
    if !persistence::snapshots_settled(&replica.snapshots().0, LIMIT).await {
        log::warn!(
            "replica {replica_id}: a snapshot is still being written after {LIMIT:?}, so {} \
             stays until the next start",
            replica.0.display()
        );
        return;
    }
    if let Err(e) = std::fs::remove_dir_all(&replica.0) {
        log::warn!("could not remove {}: {e}", replica.0.display());
    }
}

/// Owns the engine's `HostController` and the registry.
pub struct Control {
    hc: HostController,
    /// The engine's program store (also its `ProgramStorage`), keyed by program hash.
    programs: Arc<DiskStorage>,
    data_dir: Arc<ServerDataDir>,
    /// Snapshots every database at stop; forgets a retired replica.
    persistence: Arc<SnapshotOnStop>,
    /// Where the registry is saved; `None` with `--in-memory`.
    registry_file: Option<PathBuf>,
    registry: Mutex<Registry>,
    /// Who uses each replica ([`Control::use_replica`]), and whether it is being retired.
    users: Mutex<HashMap<u64, watch::Sender<bool>>>,
    /// Publish, delete and shutdown take this one at a time, since they change the registry.
    /// No call waits for it: a publish compiles its module while every database serves.
    publishing: tokio::sync::Mutex<()>,
    /// One per database (by [`DbRecord::id`]): a reset or delete holds it exclusively while it
    /// changes the database's replica in the registry, and shutdown while it stops them;
    /// looking up a running module shares it, so no call can relaunch a replica that was just
    /// retired (as in the official standalone server's publication lock). Other databases'
    /// calls never wait for it.
    fences: Mutex<HashMap<u64, Arc<tokio::sync::RwLock<()>>>>,
    /// Why each replica that failed to start did, the first time. A start that fails while
    /// opening the data (a commit log corrupt in the middle) leaves the engine's lock on the
    /// replica's directory held, so every later attempt fails with "Database is already
    /// opened", which would hide the cause from every client.
    start_failures: Mutex<BTreeMap<u64, String>>,
}

impl Control {
    pub fn new(
        hc: HostController,
        programs: Arc<DiskStorage>,
        data_dir: Arc<ServerDataDir>,
        persistence: Arc<SnapshotOnStop>,
        registry_file: Option<PathBuf>,
    ) -> anyhow::Result<Self> {
        let registry = match &registry_file {
            Some(path) if path.exists() => {
                let bytes =
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
                Registry::from_json(&bytes)
                    .with_context(|| format!("parsing {}", path.display()))?
            }
            _ => Registry::default(),
        };
        Ok(Self {
            hc,
            programs,
            data_dir,
            persistence,
            registry_file,
            registry: Mutex::new(registry),
            users: Mutex::default(),
            publishing: tokio::sync::Mutex::new(()),
            fences: Mutex::default(),
            start_failures: Mutex::default(),
        })
    }

    /// Starts every registered database (replaying its commit log), so that scheduled reducers
    /// run and the first request does not pay for recovery.
    pub async fn launch_all(&self) {
        self.remove_orphans();
        let databases = self.registry.lock().unwrap().databases.clone();
        for db in databases {
            let name = db
                .name
                .clone()
                .unwrap_or_else(|| db.database_identity.to_hex().to_string());
            match self
                .hc
                .get_or_launch_module_host(db.database(), db.replica_id)
                .await
            {
                Ok(_) => log::info!("database {name} started"),
                Err(e) => {
                    let e = self.start_failed(db.replica_id, e);
                    log::error!("database {name}: {e:#}");
                }
            }
        }
    }

    /// Removes the directories of replicas no database uses: retired ones whose removal the
    /// last run did not finish (it stopped first, or a snapshot in them stayed locked).
    fn remove_orphans(&self) {
        let replicas = self.data_dir.0.join("replicas");
        let Ok(entries) = std::fs::read_dir(&replicas) else {
            return; // In memory, or nothing created yet.
        };
        let used = self.replicas();
        for entry in entries.flatten() {
            let id = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u64>().ok());
            if id.is_none_or(|id| used.contains(&id)) {
                continue;
            }
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => log::info!("removed {}, which no database uses", entry.path().display()),
                Err(e) => log::warn!("could not remove {}: {e}", entry.path().display()),
            }
        }
    }

    /// The replica of every registered database.
    fn replicas(&self) -> Vec<u64> {
        let registry = self.registry.lock().unwrap();
        registry.databases.iter().map(|d| d.replica_id).collect()
    }

    /// The fence of the database whose record id is `id` (see `fences`).
    fn fence(&self, id: u64) -> Arc<tokio::sync::RwLock<()>> {
        let mut fences = self.fences.lock().unwrap();
        fences.entry(id).or_default().clone()
    }

    /// Stops every running database, flushing its commit log.
    pub async fn shutdown(&self) {
        let _publishing = self.publishing.lock().await;
        let ids: Vec<u64> = {
            let registry = self.registry.lock().unwrap();
            registry.databases.iter().map(|d| d.id).collect()
        };
        let mut _exclusive = Vec::new();
        for id in ids {
            _exclusive.push(self.fence(id).write_owned().await);
        }
        for replica_id in self.replicas() {
            if let Err(e) = self
                .hc
                .exit_module_host(replica_id, Duration::from_secs(30))
                .await
            {
                log::warn!("replica {replica_id} did not exit cleanly: {e:#}");
            }
        }
    }

    /// The replicas whose database is running (not those that failed to start).
    pub async fn running_replicas(&self) -> BTreeSet<u64> {
        let mut running = BTreeSet::new();
        for replica_id in self.replicas() {
            if self.hc.get_module_host(replica_id).await.is_ok() {
                running.insert(replica_id);
            }
        }
        running
    }

    /// The registered database `target` names.
    pub fn resolve(&self, target: &Target) -> Result<DbRecord> {
        let registry = self.registry.lock().unwrap();
        registry.find(target).cloned().ok_or_else(|| match target {
            Target::Name(name) => ControlError::UnknownName(name.clone()),
            Target::Identity(_) => ControlError::UnknownIdentity,
        })
    }

    /// The identities of the databases `owner` owns, in the order they were created.
    pub fn owned_by(&self, owner: Identity) -> Vec<Identity> {
        let registry = self.registry.lock().unwrap();
        registry
            .databases
            .iter()
            .filter(|db| db.owner_identity == owner)
            .map(|db| db.database_identity)
            .collect()
    }

    /// A use of `db`'s replica, held by every HTTP call and SQL request while it runs and by
    /// every WebSocket connection while it is open (taken before the module is looked up):
    /// deleting or resetting the database waits until its replica has none left before the
    /// replica stops, since the engine stops it even while it is committing a transaction (and
    /// then panics, which takes the host down). It turns `true` when that begins: a WebSocket
    /// connection then takes no more calls, answers those it took, and closes.
    pub fn use_replica(&self, db: &DbRecord) -> Use {
        let mut users = self.users.lock().unwrap();
        let user = users.entry(db.replica_id);
        user.or_insert_with(|| watch::Sender::new(false))
            .subscribe()
    }

    /// `db` as the registry has it now: a lookup that resolved it just before it was deleted
    /// or reset must not launch its retired replica again.
    fn still_registered(&self, db: &DbRecord) -> Result<()> {
        let registry = self.registry.lock().unwrap();
        match registry
            .databases
            .iter()
            .any(|d| d.replica_id == db.replica_id)
        {
            true => Ok(()),
            false => Err(ControlError::UnknownIdentity),
        }
    }

    /// The running module of `db`, launching it if needed.
    pub async fn module(&self, db: &DbRecord) -> Result<ModuleHost> {
        let fence = self.fence(db.id);
        let _shared = fence.read().await;
        self.still_registered(db)?;
        match self
            .hc
            .get_or_launch_module_host(db.database(), db.replica_id)
            .await
        {
            Ok(module) => {
                // A start that failed for a passing reason is forgotten once one succeeds.
                self.start_failures.lock().unwrap().remove(&db.replica_id);
                Ok(module)
            }
            Err(e) => Err(self.start_failed(db.replica_id, e)),
        }
    }

    /// The error of a failed start of `replica_id`: the first failure's cause, which later
    /// attempts only hide (see `start_failures`).
    fn start_failed(&self, replica_id: u64, e: anyhow::Error) -> ControlError {
        let mut failures = self.start_failures.lock().unwrap();
        let first = failures
            .entry(replica_id)
            .or_insert_with(|| format!("{e:#}"));
        ControlError::Engine(anyhow::anyhow!(
            "the database failed to start: {first} (restart the host once its data is repaired)"
        ))
    }

    /// A watch on `db`'s running module, launching it if needed: what a WebSocket connection
    /// holds, so that it follows a hot-swapped module and notices when the module exits.
    pub async fn watch_module(&self, db: &DbRecord) -> Result<watch::Receiver<ModuleHost>> {
        let fence = self.fence(db.id);
        let _shared = fence.read().await;
        self.still_registered(db)?;
        self.hc
            .watch_maybe_launch_module_host(db.database(), db.replica_id)
            .await
            .map_err(|e| self.start_failed(db.replica_id, e))
    }

    /// `POST /v1/database` (`target == None`) and `PUT /v1/database/:name_or_identity`. An
    /// update is migrated under `policy`: `Compatible` refuses a change that breaks clients,
    /// `BreakClients` takes the token [`Control::migrate_plan`] gave for this very change.
    pub async fn publish(
        &self,
        publisher: Identity,
        target: Option<Target>,
        program_bytes: Box<[u8]>,
        clear: bool,
        policy: MigrationPolicy,
    ) -> Result<PublishResult> {
        let _publishing = self.publishing.lock().await;
        if clear && target.is_none() {
            return Err(ControlError::ClearNeedsTarget);
        }
        let existing = target
            .as_ref()
            .and_then(|t| self.registry.lock().unwrap().find(t).cloned());
        let domain = target.as_ref().and_then(Target::name).cloned();
        let success = |database_identity, op| PublishResult::Success {
            domain: domain.clone(),
            database_identity,
            op,
        };
        let Some(existing) = existing else {
            let identity = self.create(publisher, target, program_bytes).await?;
            return Ok(success(identity, PublishOp::Created));
        };
        if clear {
            authorize(publisher, &existing, "reset database")?;
            let old_replica = self.reset(existing.clone(), program_bytes).await?;
            self.retire_replica(old_replica);
        } else {
            authorize(publisher, &existing, "update database")?;
            self.update(&existing, program_bytes, policy).await?;
        }
        Ok(success(existing.database_identity, PublishOp::Updated))
    }

    /// Creates a database, validating the module in a throw-away in-memory instance first.
    async fn create(
        &self,
        publisher: Identity,
        target: Option<Target>,
        program_bytes: Box<[u8]>,
    ) -> Result<Identity> {
        let database_identity = match &target {
            Some(Target::Identity(identity)) => *identity,
            Some(Target::Name(name)) => {
                (self.registry.lock().unwrap().named(name)).unwrap_or_else(random_identity)
            }
            None => random_identity(),
        };
        let program = Program::from_bytes(HostType::Wasm.into(), program_bytes);
        let (id, replica_id) = {
            let mut registry = self.registry.lock().unwrap();
            (registry.alloc_id(), registry.alloc_id())
        };
        let record = DbRecord {
            id,
            replica_id,
            name: target
                .as_ref()
                .and_then(Target::name)
                .map(|n| n.to_string()),
            database_identity,
            owner_identity: publisher,
            initial_program: program.hash,
            bootstrap_generation: 0,
        };
        self.launch_replica(&record, program).await?;
        self.commit(|registry| {
            if let Some(name) = &record.name {
                registry
                    .names
                    .entry(name.clone())
                    .or_insert_with(|| database_identity.to_hex().to_string());
            }
            registry.databases.push(record.clone());
        })?;
        log::info!(
            "created database {} ({database_identity})",
            record.name.as_deref().unwrap_or("-")
        );
        Ok(database_identity)
    }

    /// What publishing `program_bytes` over `target` would do (`POST .../pre_publish`, which the
    /// official CLI asks before every update; the database's owner only): the migration plan,
    /// printed in `style`, whether it breaks clients, and the token that lets `publish` make a
    /// change that does; or why it cannot be migrated automatically.
    pub async fn migrate_plan(
        &self,
        caller: Identity,
        target: &Target,
        program_bytes: Box<[u8]>,
        style: PrettyPrintStyle,
    ) -> Result<MigratePlanResult> {
        let db = self.resolve(target)?;
        authorize(caller, &db, "update database")?;
        self.module(&db).await?; // The plan is made against the running module.
        self.hc
            .migrate_plan(
                db.database(),
                HostType::Wasm,
                db.replica_id,
                program_bytes,
                style,
            )
            .await
            .map_err(ControlError::InvalidModule)
    }

    /// Hot-swaps the module of a running database, migrating its schema as `policy` allows, and
    /// returns once the update is durable (as the official route does): a publish acknowledged
    /// is the module a restart runs.
    async fn update(
        &self,
        db: &DbRecord,
        program_bytes: Box<[u8]>,
        policy: MigrationPolicy,
    ) -> Result<()> {
        let result = self
            .hc
            .update_module_host(
                db.database(),
                HostType::Wasm,
                db.replica_id,
                program_bytes.clone(),
                policy,
                Default::default(),
            )
            .await;
        let result = match result {
            Ok(result) => result,
            // The running module stays. Whether the program is to blame (a truncated wasm file,
            // say) or the engine, a throw-away instance of it tells.
            Err(e) => {
                let program = Program::from_bytes(HostType::Wasm.into(), program_bytes);
                return Err(
                    match self.hc.check_module_validity(db.database(), program).await {
                        Err(invalid) => ControlError::InvalidModule(invalid),
                        Ok(_) => ControlError::Engine(e),
                    },
                );
            }
        };
        match result {
            UpdateDatabaseResult::AutoMigrateError(errs) => {
                Err(ControlError::MigrationRejected(errs.to_string()))
            }
            UpdateDatabaseResult::ErrorExecutingMigration(e) => {
                Err(ControlError::MigrationFailed(format!("{e:#}")))
            }
            UpdateDatabaseResult::NoUpdateNeeded => Ok(()),
            UpdateDatabaseResult::UpdatePerformed {
                tx_offset,
                durable_offset,
            }
            | UpdateDatabaseResult::UpdatePerformedWithClientDisconnect {
                tx_offset,
                durable_offset,
            } => {
                let offset = tx_offset.await.map_err(ControlError::engine)?;
                if let Some(mut durable) = durable_offset {
                    durable
                        .wait_for(offset)
                        .await
                        .map_err(ControlError::engine)?;
                }
                Ok(())
            }
        }
    }

    /// Validates `program`, stores it, and starts `db`'s replica from it; a replica that fails
    /// to start is removed again.
    async fn launch_replica(&self, db: &DbRecord, program: Program) -> Result<()> {
        self.hc
            .check_module_validity(db.database(), program.clone())
            .await
            .map_err(ControlError::InvalidModule)?;
        self.programs
            .put(&program.bytes)
            .await
            .map_err(ControlError::engine)?;
        if let Err(e) = self
            .hc
            .get_or_launch_module_host(db.database(), db.replica_id)
            .await
        {
            self.retire_replica(db.replica_id);
            return Err(ControlError::Engine(e));
        }
        Ok(())
    }

    /// `?clear=true`: wipes the data by moving the database to a fresh replica initialised from
    /// the new program, then drops the old replica.
    /// Returns the old replica, for the caller to retire.
    async fn reset(&self, mut db: DbRecord, program_bytes: Box<[u8]>) -> Result<u64> {
        let program = Program::from_bytes(HostType::Wasm.into(), program_bytes);
        let old_replica = db.replica_id;
        db.initial_program = program.hash;
        db.bootstrap_generation += 1;
        db.replica_id = self.registry.lock().unwrap().alloc_id();
        // Start the new replica before retiring the old one, so a failure leaves the data intact.
        self.launch_replica(&db, program).await?;
        let fence = self.fence(db.id);
        let _exclusive = fence.write().await;
        self.commit(|registry| {
            if let Some(slot) = registry.databases.iter_mut().find(|d| d.id == db.id) {
                *slot = db.clone();
            }
        })?;
        Ok(old_replica)
    }

    /// `DELETE /v1/database/:name_or_identity`.
    pub async fn delete(&self, caller: Identity, target: &Target) -> Result<()> {
        let _publishing = self.publishing.lock().await;
        let db = {
            let db = match self.resolve(target) {
                Ok(db) => db,
                // Like the official server: an unknown identity is already deleted; an unknown
                // name is 404.
                Err(_) if matches!(target, Target::Identity(_)) => return Ok(()),
                Err(e) => return Err(e),
            };
            authorize(caller, &db, "delete database")?;
            let fence = self.fence(db.id);
            let _exclusive = fence.write().await;
            self.commit(|registry| registry.databases.retain(|d| d.id != db.id))?;
            self.fences.lock().unwrap().remove(&db.id);
            db
        };
        self.retire_replica(db.replica_id);
        Ok(())
    }

    /// Stops a replica that the registry no longer has, in the background (the request that
    /// retires it answers at once, as the official server's delete does): once nothing uses it
    /// (see [`Control::use_replica`]), however long the calls it took still run, since the
    /// engine stopped under a call that then commits panics and takes every database down.
    /// Then removes its data directory once no snapshot of it is being written (replica ids
    /// are never reused, so nothing else touches it).
    fn retire_replica(&self, replica_id: u64) {
        let users = self.users.lock().unwrap().remove(&replica_id);
        self.persistence.forget(replica_id);
        let hc = self.hc.clone();
        let dir = self.data_dir.replica(replica_id);
        tokio::spawn(async move {
            if let Some(users) = users {
                users.send_replace(true);
                let began = Instant::now();
                while tokio::time::timeout(RETIRE_NOTE_EVERY, users.closed())
                    .await
                    .is_err()
                {
                    log::warn!(
                        "replica {replica_id}: still in use after {:?}; it stops once the calls \
                         it took have ended",
                        began.elapsed()
                    );
                }
            }
            if let Err(e) = hc
                .exit_module_host(replica_id, Duration::from_secs(30))
                .await
            {
                log::warn!("replica {replica_id} did not exit cleanly: {e:#}");
            }
            remove_retired(replica_id, dir).await;
        });
    }

    /// Applies `change` to the registry and saves it.
    fn commit(&self, change: impl FnOnce(&mut Registry)) -> Result<()> {
        let mut registry = self.registry.lock().unwrap();
        change(&mut registry);
        if let Some(path) = &self.registry_file {
            let bytes = serde_json::to_vec_pretty(&*registry).map_err(ControlError::engine)?;
            save_atomically(path, &bytes)
                .map_err(|e| ControlError::Engine(e.context("saving the database registry")))?;
        }
        Ok(())
    }
}

/// Only a database's owner may change it.
pub fn authorize(subject: Identity, db: &DbRecord, action: &'static str) -> Result<()> {
    if subject == db.owner_identity {
        return Ok(());
    }
    Err(ControlError::NotOwner {
        subject,
        database: db.database_identity,
        action,
    })
}

/// Replaces `path` with `bytes` so that a crash leaves either the old or the new file.
fn save_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Identities are stored as the usual 64-digit hex strings.
mod hex_identity {
    use serde::{Deserialize as _, Deserializer, Serializer};
    use spacetimedb_lib::Identity;

    pub fn serialize<S: Serializer>(identity: &Identity, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&identity.to_hex())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Identity, D::Error> {
        Identity::from_hex(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// Program hashes are stored as hex strings.
mod hex_hash {
    use serde::{Deserialize as _, Deserializer, Serializer};
    use spacetimedb_lib::Hash;

    pub fn serialize<S: Serializer>(hash: &Hash, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hash.to_hex())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Hash, D::Error> {
        Hash::from_hex(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A registry saved before deleted names kept their identities (its `namespaces` held each
    /// name's first publisher): its databases' names are bound to their identities, and the
    /// old field is dropped.
    #[test]
    fn an_older_registry_keeps_its_databases_names() {
        let (database, owner) = ("c200aa", "c200bb");
        let database = format!("{database}{}", "0".repeat(58));
        let owner = format!("{owner}{}", "0".repeat(58));
        let old = serde_json::json!({
            "next_id": 2,
            "databases": [{
                "id": 1, "replica_id": 2, "name": "graph",
                "database_identity": database, "owner_identity": owner,
                "initial_program": "0".repeat(64), "bootstrap_generation": 0
            }],
            "namespaces": {"graph": owner, "gone": owner}
        });
        let registry = Registry::from_json(old.to_string().as_bytes()).unwrap();
        let name = |n: &str| n.parse::<DatabaseName>().unwrap();
        assert_eq!(
            registry.named(&name("graph")),
            Some(Identity::from_hex(&database).unwrap())
        );
        assert_eq!(registry.named(&name("gone")), None);
        let saved = serde_json::to_value(&registry).unwrap();
        assert!(saved.get("namespaces").is_none(), "{saved}");
    }
}

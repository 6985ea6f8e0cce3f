//! `graph-host`: SpacetimeDB 2.14's engine (`spacetimedb-core`) embedded behind the subset of
//! the official HTTP API this project uses, so the module can be published, called and queried
//! without installing SpacetimeDB. The host adds routing only; all database semantics are the
//! engine's.

mod auth;
mod control;
mod generate;
mod persistence;
mod routes;
mod timer_pump;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::serve::ListenerExt as _;
use clap::{Parser, Subcommand};
use spacetimedb::client::ClientActorIndex;
use spacetimedb::db;
use spacetimedb::energy::NullEnergyMonitor;
use spacetimedb::host::{DiskStorage, HostController, HostRuntimeConfig, IdcConfig};
use spacetimedb::startup::RayonCores;
use spacetimedb::util::jobs::JobCores;
use spacetimedb_paths::FromPathUnchecked as _;
use spacetimedb_paths::server::ServerDataDir;

/// The official server runs on jemalloc; so does this one, to keep timings comparable.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read when it starts (`_RJEM_MALLOC_CONF` in the environment still
/// overrides them): background threads purge freed pages once they have been unused for the
/// decay time (10 s), even while the server is idle. Without them jemalloc purges only when an
/// arena allocates again, so a host that went quiet after a load kept the load's transient
/// memory: 265 MB against 188 MB of RSS 15 s after the dblp-sized load, medians of 4 alternating
/// rounds, the load as fast (`results/load-dblp/purge/`).
#[allow(unsafe_code, non_upper_case_globals)]
// SAFETY: a NUL-terminated option string that jemalloc only reads.
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static _rjem_malloc_conf: &[u8] = b"background_thread:true\0";

/// Serve SpacetimeDB's HTTP API (the subset this project uses) from an embedded engine.
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Address to listen on. Loopback by default: this server is for local use. Listening on
    /// another interface (0.0.0.0:3000) lets anyone who reaches the port create identities and
    /// publish databases, and read and query every database; only each database's owner and
    /// the writers it grants may change a graph. Expose it only on a network you trust.
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// Directory for databases, the database registry and the token-signing key pair.
    /// Default: $XDG_DATA_HOME/graph-host or ~/.local/share/graph-host.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Keep all databases in memory, with no commit log (for benchmarks); nothing but the key
    /// pair is written to the data dir, and databases are gone when the process exits.
    #[arg(long)]
    in_memory: bool,
    /// How long a WebSocket client may be silent before it is pinged, e.g. `15s`.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    ws_ping_interval: Duration,
    /// A WebSocket client from which nothing arrived for this long is disconnected.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    ws_idle_timeout: Duration,
    /// Leave tokio's timer alone: every short sleep (a procedure's yield, the send worker's
    /// 25 µs linger) then takes a whole 1 ms tick or more. See `timer_pump.rs`.
    #[arg(long)]
    no_timer_pump: bool,
    /// Module instances each database keeps for procedures (the official server's
    /// `[wasm] procedure_instance_pool_size` in `config.toml`). A procedure holds its instance
    /// while it yields, so this is how many procedures can be under way at once; more callers
    /// wait for an instance. Default: the engine's, one per CPU core.
    #[arg(long)]
    procedure_instances: Option<std::num::NonZeroUsize>,
    /// Threads of the runtime that serves HTTP and WebSocket clients and the engine's async
    /// work (each database also runs its transactions on an executor thread of its own).
    /// Default: tokio's, one per core. On this 2-core machine one thread did not make single
    /// calls faster and made 50 connections' inserts slower (`results/host-workers/`).
    #[arg(long)]
    worker_threads: Option<std::num::NonZeroUsize>,
}

#[derive(Subcommand, Debug)]
enum Command {
    Generate(generate::GenerateArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Command::Generate(args)) = cli.command {
        return generate::run(args);
    }
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();

    // Like the official server: a panic anywhere may leave the engine inconsistent, so exit.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        std::process::exit(1);
    }));

    let before_build = std::time::Instant::now();
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = cli.worker_threads {
        runtime.worker_threads(threads.get());
    }
    let runtime = runtime.enable_all().build()?;
    let timer_pump = if cli.no_timer_pump {
        timer_pump::TimerPump::off()
    } else {
        timer_pump::TimerPump::start(&runtime, before_build)?
    };
    // The engine runs some work on rayon threads that expect to be inside the tokio runtime.
    RayonCores::default().configure(runtime.handle());
    let db_cores = JobCores::without_pinned_cores();
    let result = runtime.block_on(serve(cli, db_cores.clone(), timer_pump));
    // The databases have stopped and closed their commit logs. What the runtime still holds is
    // background work on their files (compressing older snapshots, or a snapshot a second stop
    // signal did not wait for), which a restart redoes or discards (`persistence`). Dropping
    // the runtime cancels that work's queued blocking steps, and the engine panics on each
    // ("Unexpected JoinError: … cancelled"): logged now, not turned into a failed exit.
    std::panic::set_hook(Box::new(|info| {
        log::warn!("after the stop, in leftover background work: {info}");
    }));
    drop(runtime);
    // Dropped outside the async context, as the official server does.
    drop(db_cores);
    result
}

/// The engine's defaults, with `procedure_instances` if given.
fn runtime_config(procedure_instances: Option<std::num::NonZeroUsize>) -> HostRuntimeConfig {
    let mut config = HostRuntimeConfig::default();
    if let Some(size) = procedure_instances {
        config.wasm.procedure_instance_pool_size = size;
    }
    config
}

/// How long the host waits for each database's snapshot as it stops.
const SNAPSHOT_ON_STOP_LIMIT: Duration = Duration::from_secs(300);

/// How long the host lets the requests under way finish once told to stop.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);
/// How long the WebSocket connections have to close once told to close at once.
const WEBSOCKETS_CLOSE_LIMIT: Duration = Duration::from_secs(2);

async fn serve(
    cli: Cli,
    db_cores: JobCores,
    timer_pump: timer_pump::TimerPump,
) -> anyhow::Result<()> {
    let data_dir = match cli.data_dir {
        Some(dir) => dir,
        None => default_data_dir()?,
    };
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("creating {}", data_dir.display()))?;
    let data_dir = std::path::absolute(&data_dir)?;
    let auth = auth::Auth::load_or_create(&data_dir)?;

    // With --in-memory the engine still wants a directory (program store, wasmtime cache):
    // give it a temporary one, removed on exit.
    let temp_dir;
    let (engine_dir, storage, registry_file) = if cli.in_memory {
        temp_dir = tempfile::Builder::new().prefix("graph-host-").tempdir()?;
        (temp_dir.path().to_owned(), db::Storage::Memory, None)
    } else {
        (
            data_dir.clone(),
            db::Storage::Disk,
            Some(data_dir.join("databases.json")),
        )
    };
    let engine_dir = Arc::new(ServerDataDir::from_path_unchecked(engine_dir));
    // One server per data dir, as the official server enforces with the same pid-file lock.
    let _pid_file = engine_dir
        .pid_file()
        .context("another graph-host seems to use this data dir")?;

    let programs = Arc::new(DiskStorage::new(engine_dir.0.join("program-bytes")).await?);
    let persistence = Arc::new(persistence::SnapshotOnStop::new(engine_dir.clone()));
    let hc = HostController::new(
        engine_dir.clone(),
        db::Config {
            storage,
            page_pool_max_size: None,
        },
        runtime_config(cli.procedure_instances),
        programs.clone(),
        Arc::new(NullEnergyMonitor),
        Arc::new(()),
        persistence.clone(),
        db_cores,
    );
    // Inter-database calls are not served here, but the engine needs the setting to start hosts.
    hc.set_idc_config(IdcConfig {
        http_port: cli.listen.port(),
        token_signer: Arc::new(auth.signing_key()),
    })?;

    let control =
        control::Control::new(hc, programs, engine_dir, persistence.clone(), registry_file)?;
    control.launch_all().await;
    let app = Arc::new(routes::App {
        control,
        auth,
        clients: ClientActorIndex::new(),
        websocket: routes::WebSocketOptions {
            ping_interval: cli.ws_ping_interval,
            idle_timeout: cli.ws_idle_timeout,
            ..Default::default()
        },
        timer_pump,
        stopping: tokio::sync::watch::Sender::new(routes::Stop::Running),
    });

    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .with_context(|| format!("binding {}", cli.listen))?;
    log::info!(
        "graph-host listening on http://{} (data dir {}{})",
        listener.local_addr()?,
        data_dir.display(),
        if cli.in_memory { ", in memory" } else { "" }
    );
    // No Nagle delay: a WebSocket answer is often a small frame written right after another.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            log::warn!("TCP_NODELAY: {e}");
        }
    });
    let stop = StopSignals::listen()?;
    let draining = Arc::new(tokio::sync::Notify::new());
    let server = axum::serve(listener, routes::router(app.clone())).with_graceful_shutdown({
        let (signal, draining, app) = (stop.next(), draining.clone(), app.clone());
        async move {
            signal.await;
            app.stop_websockets();
            draining.notify_one();
        }
    });
    // After the first signal the server takes no new connections or calls and lets the requests
    // under way finish, and the calls WebSocket clients had sent, for at most DRAIN_LIMIT: a
    // client that never finishes its request (a `logs?follow` stream, an unread answer, half a
    // header) must not keep the host from stopping. A second signal ends the wait at once and
    // skips the snapshots below.
    let hurried = tokio::select! {
        served = async {
            server.into_future().await?;
            app.websockets_closed().await;
            anyhow::Ok(())
        } => {
            served?;
            false
        }
        hurried = async {
            draining.notified().await;
            tokio::select! {
                () = tokio::time::sleep(DRAIN_LIMIT) => false,
                () = stop.next() => true,
            }
        } => {
            log::warn!("stopping with requests still open: their connections are closed");
            app.close_websockets();
            // A call a closed WebSocket connection had taken may still commit: the restart
            // then replays it from the commit log.
            if tokio::time::timeout(WEBSOCKETS_CLOSE_LIMIT, app.websockets_closed()).await.is_err() {
                log::warn!("WebSocket connections still open after {WEBSOCKETS_CLOSE_LIMIT:?}");
            }
            hurried
        }
    };
    // Snapshot every database while it still runs (a restart then replays nothing), then stop
    // each so its commit log is flushed before the process exits. A second Ctrl-C or SIGTERM
    // stops the wait (a snapshot that cannot be written, e.g. on a full disk, never signals).
    if hurried {
        log::warn!("stopping without the snapshots: the restart replays the commit log");
    } else {
        log::info!(
            "snapshotting the databases before stopping (up to {} s each; signal again to skip)",
            SNAPSHOT_ON_STOP_LIMIT.as_secs()
        );
        let running = app.control.running_replicas().await;
        tokio::select! {
            () = persistence.snapshot_all(&running, SNAPSHOT_ON_STOP_LIMIT) => {}
            () = stop.next() => log::warn!(
                "stopping without waiting for the snapshots: the restart replays the commit log"
            ),
        }
    }
    app.control.shutdown().await;
    log::info!("stopped");
    Ok(())
}

/// Ctrl-C and SIGTERM, listened to from the start: one that comes while the host drains its
/// requests or snapshots its databases is kept for the next [`StopSignals::next`], not lost.
struct StopSignals(Arc<tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<()>>>);

impl StopSignals {
    fn listen() -> anyhow::Result<Self> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
            let mut int = signal(SignalKind::interrupt()).context("listening for Ctrl-C")?;
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        Some(()) = term.recv() => {}
                        Some(()) = int.recv() => {}
                        else => return,
                    }
                    log::info!("shutting down");
                    if tx.send(()).is_err() {
                        return;
                    }
                }
            });
        }
        #[cfg(not(unix))]
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                log::info!("shutting down");
                if tx.send(()).is_err() {
                    return;
                }
            }
        });
        Ok(Self(Arc::new(tokio::sync::Mutex::new(rx))))
    }

    /// Resolves on the next signal (one that came earlier included).
    fn next(&self) -> impl Future<Output = ()> + Send + 'static {
        let signals = self.0.clone();
        async move {
            if signals.lock().await.recv().await.is_none() {
                std::future::pending::<()>().await; // No more signals can come.
            }
        }
    }
}

/// `$XDG_DATA_HOME/graph-host`, else `~/.local/share/graph-host`.
fn default_data_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("graph-host"));
    }
    let home = std::env::home_dir().context("no home directory: pass --data-dir")?;
    Ok(home.join(".local/share/graph-host"))
}

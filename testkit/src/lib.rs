//! Integration-test harness: runs the real `graph-host` binary on a free loopback port with its
//! own data directory, publishes the real module wasm, and talks to it over HTTP with the same
//! client the tools use. The process is always stopped when the [`TestHost`] is dropped.
//!
//! Artifacts are found next to the test binary (`$CARGO_TARGET_DIR/release/graph-host` and
//! `$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/graph_module.wasm`), or through
//! `GRAPH_HOST_BIN` and `GRAPH_MODULE_WASM`. `scripts/test` builds both before the tests.

use graph_client::server::{Identity, Server};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The release output directory that holds the test binary (`…/target/release`).
fn release_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // Test binaries live in `…/release/deps/`.
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary inside a target directory")
        .to_path_buf()
}

fn artifact(env: &str, default: PathBuf, build_hint: &str) -> PathBuf {
    let path = std::env::var_os(env).map(PathBuf::from).unwrap_or(default);
    assert!(
        path.exists(),
        "{} not found: build it first with `{build_hint}` (or run scripts/test), or set {env}",
        path.display()
    );
    path
}

/// The `graph-host` binary under test.
pub fn host_binary() -> PathBuf {
    artifact(
        "GRAPH_HOST_BIN",
        release_dir().join("graph-host"),
        "cargo build --release -p graph-host",
    )
}

/// The graph module's wasm, read into memory.
pub fn module_wasm() -> Vec<u8> {
    read(&module_wasm_path())
}

/// Where the graph module's wasm is (for tools that publish it themselves).
pub fn module_wasm_path() -> PathBuf {
    wasm_path("graph_module", "GRAPH_MODULE_WASM")
}

/// The conformance module's wasm (engine semantics for the host's HTTP tests).
pub fn conformance_wasm() -> Vec<u8> {
    read(&wasm_path(
        "graph_conformance_module",
        "GRAPH_CONFORMANCE_WASM",
    ))
}

fn wasm_path(crate_name: &str, env: &str) -> PathBuf {
    let default = release_dir()
        .parent()
        .expect("target directory")
        .join(format!("wasm32-unknown-unknown/release/{crate_name}.wasm"));
    let package = crate_name.replace('_', "-");
    let hint = format!("cargo build --release -p {package} --target wasm32-unknown-unknown");
    artifact(env, default, &hint)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// A running embedded host owned by a test.
pub struct TestHost {
    child: Option<Child>,
    url: String,
    data_dir: TempDir,
    log_path: PathBuf,
    /// Extra command-line options (e.g. shorter WebSocket timeouts).
    args: Vec<String>,
}

impl TestHost {
    /// Starts a durable host with a fresh data directory.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts a host as [`TestHost::start`] does, with extra command-line options.
    pub fn start_with(args: &[&str]) -> Self {
        let data_dir = tempfile::tempdir().expect("temp data dir");
        let log_path = data_dir.path().join("host.log");
        let mut host = Self {
            child: None,
            url: format!("http://127.0.0.1:{}", free_port()),
            data_dir,
            log_path,
            args: args.iter().map(|a| a.to_string()).collect(),
        };
        host.launch();
        host
    }

    /// Starts the process on this host's address (the same one across restarts).
    fn launch(&mut self) {
        let listen = self.url.trim_start_matches("http://").to_string();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .expect("host log file");
        let child = Command::new(host_binary())
            .args(["--listen", &listen, "--data-dir"])
            .arg(self.data_dir.path().join("data"))
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .expect("spawning graph-host");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let server = Server::new(&self.url);
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last_error = None;
        while Instant::now() < deadline {
            match server.ping() {
                Ok(()) => return,
                Err(e) => last_error = Some(e),
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "graph-host exited with {status} before serving:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "graph-host did not answer /v1/ping within 60 s ({last_error:?}):\n{}",
            self.log()
        );
    }

    /// The host's combined stdout and stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The running host's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(std::process::Child::id)
    }

    /// Sends the running host a signal (`"-STOP"`, `"-CONT"`, …) with `kill`.
    pub fn signal(&self, name: &str) {
        let pid = self.pid().expect("the host is running").to_string();
        let status = Command::new("kill").args([name, &pid]).status().unwrap();
        assert!(status.success(), "kill {name} {pid}");
    }

    /// A client without a token (each call mints a new identity, as on the official server).
    pub fn anonymous(&self) -> Server {
        Server::new(&self.url)
    }

    /// A new identity and a client that uses its token.
    pub fn client(&self) -> (Identity, Server) {
        let identity = self
            .anonymous()
            .create_identity()
            .expect("POST /v1/identity");
        let server = Server::new(&self.url).with_token(identity.token.clone());
        (identity, server)
    }

    /// Publishes the module under test as `name`, as a new identity; returns that client.
    pub fn publish_module(&self, name: &str) -> Server {
        let (_, server) = self.client();
        server
            .publish(name, module_wasm(), false)
            .expect("publishing the module");
        server
    }

    /// Stops the host gracefully (see `stop`) and starts it again on the same data directory.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    /// Kills the host with SIGKILL, as a crash would, and waits for it to be gone. Start it
    /// again with [`TestHost::relaunch`].
    pub fn crash(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a stopped or crashed host again on the same address and data directory.
    pub fn relaunch(&mut self) {
        assert!(self.child.is_none(), "the host is still running");
        self.launch();
    }

    /// The directory the host keeps its databases in (commit logs and snapshots).
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.path().join("data")
    }

    /// Sends SIGTERM, as an operator stopping the host does (again: as one insisting does), and
    /// waits up to `wait` for the process to exit; returns whether it did. Once it has, the host
    /// is stopped (start it again with [`TestHost::relaunch`]).
    pub fn terminate(&mut self, wait: Duration) -> bool {
        let Some(child) = self.child.as_mut() else {
            return true;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + wait;
        loop {
            if !matches!(child.try_wait(), Ok(None)) {
                self.child = None;
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the host as an operator would: SIGTERM, on which it flushes every commit log and
    /// exits. Kills it if it has not exited within 30 s.
    fn stop(&mut self) {
        if !self.terminate(Duration::from_secs(30)) {
            self.crash();
        }
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A loopback port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("binding a loopback port")
        .port()
}

/// JSON helper for call arguments.
pub use serde_json::json;

/// The directory of the package whose tests are running, as `cargo test` says at run time.
///
/// Not `env!("CARGO_MANIFEST_DIR")`: that path is fixed when the crate is compiled, and cargo
/// reuses the compiled crate for a checkout at another path that shares the build output, so a
/// moved checkout would read (or run) files of the old one.
pub fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .expect("CARGO_MANIFEST_DIR is unset: run the tests with `cargo test`")
}

/// `scripts/peers`, which installs, starts and stops the peer systems: found above the running
/// package's directory.
pub fn peers_script() -> PathBuf {
    let dir = manifest_dir();
    dir.ancestors()
        .map(|d| d.join("scripts/peers"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no scripts/peers above {}", dir.display()))
}

/// A peer system (`postgres`, `neo4j`) started by `scripts/peers` on a free loopback port in a
/// temporary directory, and stopped when dropped, even by a panic.
pub struct PeerServer {
    dir: TempDir,
    address: String,
}

impl PeerServer {
    /// Starts `peer` with extra environment settings for the script (memory sizes, say).
    /// Panics with the script's output, and the install command, if the start fails.
    pub fn start(peer: &str, env: &[(&str, &str)]) -> PeerServer {
        let dir = tempfile::tempdir().expect("temporary directory");
        // As root the script runs PostgreSQL as the `postgres` user, which must reach the
        // directory (tempdir creates it 0700).
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("making the peer directory reachable");
        // The free port may be taken before the peer binds it (by another test's client
        // connection, whose source ports come from the same range): then try another.
        let mut attempts = 0;
        let out = loop {
            attempts += 1;
            let out = Command::new(peers_script())
                .args(["start", peer, "--port", &free_port().to_string(), "--dir"])
                .arg(dir.path())
                .envs(env.iter().copied())
                .output()
                .expect("running scripts/peers");
            let taken = String::from_utf8_lossy(&out.stderr).contains("Address already in use");
            if out.status.success() || !taken || attempts == 3 {
                break out;
            }
            let _ = Command::new(peers_script())
                .args(["stop", "--dir"])
                .arg(dir.path())
                .output();
        };
        // Built before the check so that a failed start is stopped too (a half-started server
        // may still run).
        let server = PeerServer {
            dir,
            address: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        };
        assert!(
            out.status.success(),
            "scripts/peers start {peer} failed (if it is not installed, run \
             scripts/peers install {peer}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        server
    }

    /// What `scripts/peers start` printed: a connection string or URL.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The directory the peer runs in (`--dir`), where `scripts/peers start` writes the
    /// commands that go with the server (FalkorDB's `falkordb/bulk-insert`).
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let dir = self.dir.path();
        let status = Command::new(peers_script())
            .args(["stop", "--dir"])
            .arg(dir)
            .status();
        if !matches!(status, Ok(s) if s.success()) {
            eprintln!(
                "scripts/peers stop --dir {} failed: {status:?}",
                dir.display()
            );
        }
    }
}

//! The `graph` CLI end to end: the real binary against the real embedded host and module.

use graph_testkit::TestHost;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// A small directed graph in SNAP format, with comments, tabs and spaces, and a duplicate row:
/// 1→2, 2→3, 3→4, 1→5, 5→4, 4→6, 7→8 (7 and 8 are a separate component).
const SNAP: &str =
    "# test graph\n# FromNodeId\tToNodeId\n1\t2\n2 3\n3\t4\n1\t5\n5\t4\n4\t6\n7\t8\n1\t2\n";

struct Cli {
    url: String,
    token: String,
    database: &'static str,
}

impl Cli {
    /// A fresh host with the module published as `graph`, and the CLI as its owner.
    fn on_a_new_host() -> (TestHost, Cli) {
        let host = TestHost::start();
        let server = host.publish_module("graph");
        let cli = Cli {
            url: host.url().to_string(),
            token: server.token().unwrap().to_string(),
            database: "graph",
        };
        (host, cli)
    }

    /// The CLI as the owner of another database, `name`, published on `host`.
    fn on_another_database(host: &TestHost, name: &'static str) -> Cli {
        let server = host.publish_module(name);
        Cli {
            url: host.url().to_string(),
            token: server.token().unwrap().to_string(),
            database: name,
        }
    }

    /// `graph` with `args`, as the owner of its database, not yet started.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_graph"));
        command
            .args([
                "--server",
                &self.url,
                "--token",
                &self.token,
                "--database",
                self.database,
            ])
            .args(args)
            .env(
                "XDG_CONFIG_HOME",
                std::env::temp_dir().join("graph-cli-test-config"),
            );
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("running graph")
    }

    /// Runs `args` with `input` on standard input.
    fn run_with_input(&self, args: &[&str], input: &[u8]) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running graph");
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    }

    /// Runs a command that must succeed and print JSON.
    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert!(
            out.status.success(),
            "graph {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?}"))
    }

    /// Runs a command that must fail; returns its stderr.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "graph {args:?} should fail: {out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

fn file(dir: &tempfile::TempDir, name: &str, contents: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(contents)
        .unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn load_query_and_errors() {
    let (host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    let snap = file(&dir, "g.txt", SNAP.as_bytes());

    // --resume-from counts in the order edges are sent: distinct, by (src, dst). The first five
    // are 1→2, 1→5, 2→3, 3→4, 4→6; skipping them leaves 5→4 and 7→8.
    let tail = cli.json(&["load", &snap, "--resume-from", "5"]);
    // A reader that stops early (`graph stats | head -0`) ends the command quietly, with the
    // status SIGPIPE would give.
    let mut child = cli
        .command(&["stats"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // Closed before the answer can arrive.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(141) && !err.contains("panicked"),
        "{out:?}"
    );
    assert_eq!(
        (tail["vertices"].as_u64(), tail["edges"].as_u64()),
        (Some(4), Some(2)),
        "{tail}"
    );
    assert_eq!(
        cli.json(&["neighbors", "5"])["neighbors"],
        serde_json::json!([4])
    );
    assert!(cli.fails(&["neighbors", "1"]).contains("unknown vertex 1"));
    // The file has 7 distinct edges: resuming at its end sends nothing, past it is an error.
    assert_eq!(cli.json(&["load", &snap, "--resume-from", "7"])["sent"], 0);
    let err = cli.fails(&["load", &snap, "--resume-from", "8"]);
    assert!(
        err.contains("--resume-from 8 is past the end") && err.contains("has 7 distinct edges"),
        "{err}"
    );
    assert_eq!(cli.json(&["stats"])["edges"], 2, "nothing sent");

    // Loading twice leaves the same graph (duplicates and re-sent rows are harmless); the first
    // time in calls of two edges, where the already stored 5→4 and 7→8 share calls with new ones.
    let first = cli.json(&["load", &snap, "--batch", "2"]);
    let stats = cli.json(&["stats"]);
    let version = stats["version"].as_u64().unwrap();
    // The load's calls, each a version of its own, are in the change log; no export holds it.
    let log = &stats["change_log"];
    assert!(log["covers_after"].as_u64() < Some(version), "{stats}");
    assert!(log["changes"].as_u64() >= Some(5) && log["held_from"] == serde_json::json!([]));
    let human = cli.run(&["stats"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("change log: "));
    assert_eq!(
        (first["vertices"].as_u64(), first["edges"].as_u64()),
        (Some(8), Some(7)),
        "{first}"
    );
    assert!(
        version >= 4,
        "7 edges in calls of 2 are 4 calls: version {version}"
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(SNAP.as_bytes()).unwrap();
    let gz = file(&dir, "g.txt.gz", &gz.finish().unwrap());
    let second = cli.json(&["load", &gz]);
    assert_eq!(
        (&second["vertices"], &second["edges"]),
        (&first["vertices"], &first["edges"])
    );
    let version = cli.json(&["stats"])["version"].clone();

    // Answers, checked against the graph above.
    assert_eq!(
        cli.json(&["neighbors", "1"])["neighbors"],
        serde_json::json!([2, 5])
    );
    assert_eq!(
        cli.json(&["neighbors", "4", "--dir", "in"])["neighbors"],
        serde_json::json!([3, 5])
    );
    assert_eq!(
        cli.json(&["neighbors", "4", "--dir", "both"])["neighbors"],
        serde_json::json!([3, 5, 6])
    );
    let bfs = cli.json(&["bfs", "1"]);
    assert_eq!(
        (bfs["visited"].clone(), bfs["levels"].clone()),
        (serde_json::json!(6), serde_json::json!([1, 2, 2, 1]))
    );
    assert_eq!(
        cli.json(&["bfs", "1", "--depth", "1"])["levels"],
        serde_json::json!([1, 2])
    );
    let path = cli.json(&["path", "1", "6"]);
    let hops: Vec<u64> = serde_json::from_value(path["path"].clone()).unwrap();
    assert!(hops == [1, 2, 3, 4, 6] || hops == [1, 5, 4, 6], "{path}");
    assert_eq!(hops.len(), 4, "the shortest path is 1→5→4→6: {path}");
    assert_eq!(cli.json(&["path", "6", "1"])["status"], "Unreachable");
    assert_eq!(
        cli.json(&["path", "6", "1", "--dir", "both"])["path"]
            .as_array()
            .map(Vec::len),
        Some(4)
    );
    assert!(cli.json(&["path", "1", "6", "--stats"])["stats"]["transactions"].as_u64() >= Some(1));
    let human = cli.run(&["path", "1", "6", "--stats"]);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("3 hops") && human.contains("stats:"),
        "{human}"
    );

    // Bad input: a clear error naming the line, a non-zero exit, nothing loaded.
    let bad = file(&dir, "bad.txt", b"10\t11\n12\t13\n14 x15\n16\t17\n");
    let err = cli.fails(&["load", &bad]);
    assert!(err.contains("line 3") && err.contains("x15"), "{err}");
    assert_eq!(
        cli.json(&["stats"])["version"],
        version,
        "a bad file must load nothing"
    );
    let err = cli.fails(&["neighbors", "999"]);
    assert!(err.contains("unknown vertex 999"), "{err}");
    let err = cli.fails(&["load", &dir.path().join("missing.txt").to_string_lossy()]);
    assert!(err.contains("missing.txt"), "{err}");

    // Edits; one that changes nothing says so.
    assert_eq!(cli.json(&["add-edge", "6", "7"])["unchanged"], false);
    assert_eq!(cli.json(&["add-edge", "6", "7"])["unchanged"], true);
    let text = cli.run(&["remove-edge", "60", "70"]);
    assert!(
        String::from_utf8_lossy(&text.stdout).starts_with("60 → 70 was not there: nothing changed"),
        "{text:?}"
    );
    // A change claims only what is certain with other writers about: the state after it.
    let text = cli.run(&["add-edge", "60", "70"]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.starts_with("60 → 70 is in the graph now; it has "),
        "{text}"
    );
    let text = cli.run(&["remove-edge", "60", "70"]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.starts_with("60 → 70 is not in the graph now"),
        "{text}"
    );
    assert_eq!(
        cli.json(&["snapshot-policy", "--max", "1"]),
        json!({"max_snapshots": 1, "small_traversals": true})
    );
    assert_eq!(
        cli.json(&["path", "1", "8"])["path"]
            .as_array()
            .map(Vec::len),
        Some(6)
    );
    cli.json(&["remove-edge", "6", "7"]);
    assert_eq!(cli.json(&["path", "1", "8"])["status"], "Unreachable");
    // A vertex goes with its edges; a second removal names it as unknown.
    let before = cli.json(&["stats"]);
    let degree = cli.json(&["neighbors", "5", "--dir", "both"])["neighbors"]
        .as_array()
        .unwrap()
        .len() as u64;
    let removed = cli.json(&["remove-vertex", "5"]);
    assert_eq!(
        (&removed["vertices"], &removed["edges"]),
        (
            &(before["vertices"].as_u64().unwrap() - 1).into(),
            &(before["edges"].as_u64().unwrap() - degree).into()
        ),
        "{removed}"
    );
    let err = cli.fails(&["remove-vertex", "5"]);
    assert!(err.contains("unknown vertex 5"), "{err}");
    assert!(cli.run(&["check"]).status.success());

    // Wrong database and no server: the error says what to do.
    let out = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args([
            "--server",
            host.url(),
            "--token",
            &cli.token,
            "--database",
            "nope",
            "stats",
        ])
        .output()
        .unwrap();
    // The default transport falls back to HTTP without blaming the WebSocket for it.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("spacetime publish -s {}", host.url()))
            && !err.contains("WebSocket is not available"),
        "{err}"
    );
    // A server without its scheme is refused before anything is sent.
    let bare = host.url().trim_start_matches("http://");
    let out = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["--server", bare, "stats"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("not an http:// or https:// URL"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["--server", host.url(), "--token", &cli.token])
        .args(["--database", "nope", "--transport", "ws", "stats"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no database `nope`"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["--server", "http://127.0.0.1:9", "--token", "t", "stats"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("spacetime start")
            && !err.contains("WebSocket is not available"),
        "{err}"
    );
    // A command's files are read and checked before any server is contacted: with none
    // answering and no token, the file's mistake is what is reported, and no identity is made.
    let dir = tempfile::tempdir().unwrap();
    let bad = file(&dir, "bad.txt", b"1 2\n3 x\n");
    let config = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["load", &bad], "line 2: `x` is not an unsigned integer"),
        (vec!["label-vertices", &bad], "line 1: expected a vertex id"),
        (
            vec!["export", "out.txt"],
            "name the edge file .csv or .csv.gz",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_graph"))
            .args(["--server", "http://127.0.0.1:9"])
            .args(&args)
            .env("XDG_CONFIG_HOME", config.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    }
    assert!(!config.path().join("stdb-graph").exists());
}

/// Issue #18: a load interrupted by a crash of the server names, as the point to resume from,
/// only edges the server acknowledged; resuming there ends with exactly the file's graph, and
/// the resumed load says how many of the edges it sent were already present.
#[test]
fn a_crashed_load_resumes_from_what_was_acknowledged() {
    use rand::{Rng, SeedableRng};
    let mut host = TestHost::start();
    let server = host.publish_module("graph");
    let cli = Cli {
        url: host.url().to_string(),
        token: server.token().unwrap().to_string(),
        database: "graph",
    };
    // Enough edges for several calls (a call carries at most ~135K of these), so that the host
    // can be killed while a later one is on its way.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    let mut text = String::from("# random graph\n");
    let mut distinct = std::collections::BTreeSet::new();
    for _ in 0..600_000 {
        let (a, b) = (
            rng.gen_range(0..2_000_000u64),
            rng.gen_range(0..2_000_000u64),
        );
        text.push_str(&format!("{a}\t{b}\n"));
        distinct.insert((a, b));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "big.txt", text.as_bytes());

    // Calls of 50,000 edges: a dozen, so that many remain when the second has committed (the
    // info calls that watch for it wait behind the load's calls, and with the calls of 135K of
    // the default batch a loaded machine once saw the last one answered before the crash).
    let load = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["--server", host.url(), "--token", &cli.token, "load", &path])
        .args(["--batch", "50000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Crash the host once a second call has committed: the CLI sends a call only after the
    // answer to the one before, so it holds at least the first call's acknowledgement (a fixed
    // pause after the first commit was not always enough on a busy machine).
    let db = graph_client::graph::GraphDb::new(server.clone(), "graph");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let committed = |more_than: u64| loop {
        let edges = db.info().unwrap().edges;
        if edges > more_than {
            return edges;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the load stalled at {edges}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    committed(committed(0));
    host.crash();
    let out = load.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the load should fail: {err}");
    let hint: usize = err
        .split("--resume-from ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no --resume-from hint in: {err}"));
    assert!(err.contains("`graph finish-load` ends it"), "{err}");

    host.relaunch();
    let stored = db.info().unwrap().edges as usize;
    // The crash cut a bulk load short; finishing it first leaves a graph of what was stored,
    // and the resumed load then adds the rest as plain writes.
    let finished = cli.json(&["finish-load"]);
    assert!(finished["calls"].as_u64() > Some(0), "{finished}");
    assert_eq!(finished["edges"].as_u64(), Some(stored as u64));
    assert_eq!(cli.json(&["check"])["problems"], 0);
    assert_eq!(cli.json(&["finish-load"])["calls"], 0);
    assert!(
        hint <= stored,
        "the hint {hint} names edges the server does not hold ({stored}): {err}"
    );
    assert!(
        hint > 0 && hint < distinct.len(),
        "the crash should fall mid-load: {err}"
    );

    let resumed = cli.json(&["load", &path, "--resume-from", &hint.to_string()]);
    let sent = (distinct.len() - hint) as u64;
    assert_eq!(resumed["sent"].as_u64(), Some(sent), "{resumed}");
    assert_eq!(
        resumed["already_present"].as_u64(),
        Some((stored - hint) as u64),
        "the edges of the call that was cut off may have been stored: {resumed}"
    );
    assert_eq!(resumed["edges"].as_u64(), Some(distinct.len() as u64));
    let rows = server
        .sql("graph", "SELECT fwd FROM edge")
        .unwrap()
        .remove(0)
        .rows;
    let held: std::collections::BTreeSet<(u64, u64)> = rows
        .into_iter()
        .map(|row| {
            let [fwd]: [u64; 1] = serde_json::from_value(row).unwrap();
            (fwd >> 32, fwd & 0xffff_ffff)
        })
        .collect();
    assert!(held == distinct, "the graph differs from the file's");
    assert_eq!(cli.json(&["check"])["problems"], 0);

    // A second run sends everything again and finds it all present.
    let again = cli.json(&["load", &path]);
    assert_eq!(
        (
            again["new_edges"].as_u64(),
            again["already_present"].as_u64()
        ),
        (Some(0), Some(distinct.len() as u64)),
        "{again}"
    );
}

#[test]
fn watch_prints_changes_as_they_arrive() {
    use std::io::{BufRead, BufReader};
    let (_host, cli) = Cli::on_a_new_host();
    cli.json(&["add-edge", "1", "3"]);
    let mut watch = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["--server", &cli.url, "--token", &cli.token])
        .args(["watch", "--vertex", "1", "--count", "4", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let subscribed = next();
    assert_eq!(subscribed["event"], "subscribed", "{subscribed}");
    assert_eq!(
        subscribed["edges"],
        serde_json::json!([{"src": 1, "dst": 3, "label": null, "weight": 1.0}])
    );
    let version = subscribed["graph"]["version"].as_u64().unwrap();

    // A write over the WebSocket and a delete over HTTP, each seen as its edge row and the
    // graph's new version; an edge of another vertex is not watched.
    cli.json(&["add-edge", "1", "2", "--label", "road", "--weight", "2.5"]);
    cli.json(&["add-edge", "5", "6", "--transport", "http"]);
    cli.json(&["remove-edge", "1", "2", "--transport", "http"]);
    let events: Vec<Value> = (0..4).map(|_| next()).collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    let rows: Vec<&Value> = events.iter().filter(|e| e["event"] != "meta").collect();
    assert_eq!(rows.len(), 2, "{events:?}");
    assert_eq!(
        (&rows[0]["event"], &rows[0]["edge"]["dst"]),
        (&"insert".into(), &2.into())
    );
    assert_eq!(
        (&rows[1]["event"], &rows[1]["edge"]["dst"]),
        (&"delete".into(), &2.into())
    );
    for row in rows {
        assert_eq!(
            (&row["edge"]["label"], &row["edge"]["weight"]),
            (&"road".into(), &2.5.into())
        );
    }
    let versions: Vec<u64> = events
        .iter()
        .filter_map(|e| e["graph"]["version"].as_u64())
        .collect();
    assert_eq!(versions.len(), 2, "{kinds:?}");
    assert!(
        versions[0] > version && versions[1] > versions[0],
        "{events:?}"
    );
    // The fourth change was the delete: its version line still comes, then the watch stops.
    let last = next();
    assert_eq!(last["event"], "meta", "{last}");
    assert!(
        last["graph"]["version"].as_u64() > Some(versions[1]),
        "{last}"
    );
    assert!(watch.wait().unwrap().success());

    // In text, the watched vertex's out-edges are listed when the watch starts.
    let text = cli
        .run(&["watch", "--vertex", "1", "--duration", "1s"])
        .stdout;
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("1 has 1 out-edge\n  1 → 3\n"), "{text}");
    // --count 0: the state now, and nothing after it.
    let now = cli.run(&["watch", "--vertex", "1", "--count", "0"]).stdout;
    let now = String::from_utf8(now).unwrap();
    assert!(now.ends_with("1 has 1 out-edge\n  1 → 3\n"), "{now}");

    let err = cli.fails(&["watch", "--transport", "http"]);
    assert!(err.contains("WebSocket"), "{err}");
    assert_eq!(
        cli.json(&["stats", "--transport", "http"]),
        cli.json(&["stats", "--transport", "ws"])
    );
}

#[test]
fn only_the_owner_and_granted_identities_write() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let owner = Cli {
        url: host.url().to_string(),
        token: server.token().unwrap().to_string(),
        database: "graph",
    };
    let created = graph_client::server::Server::new(host.url())
        .create_identity()
        .unwrap();
    let stranger = Cli {
        url: host.url().to_string(),
        token: created.token,
        database: "graph",
    };
    let err = stranger.fails(&["add-edge", "1", "2"]);
    assert!(err.contains("may not change this graph"), "{err}");
    // A refused load says how to get access, not to fix the file.
    let dir = tempfile::tempdir().unwrap();
    let snap = file(&dir, "g.txt", b"1 2\n2 3\n");
    let err = stranger.fails(&["load", &snap]);
    assert!(
        err.contains("graph grant") && err.contains("whoami"),
        "{err}"
    );
    assert!(!err.contains("fix what the error names"), "{err}");
    let err = stranger.fails(&["grant", &created.identity]);
    assert!(err.contains("only the database's owner"), "{err}");

    let out = stranger.run(&["whoami"]);
    assert!(out.status.success(), "{out:?}");
    let me = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(me, created.identity);
    assert!(owner.run(&["grant", &me]).status.success());
    assert!(stranger.run(&["add-edge", "1", "2"]).status.success());
    assert_eq!(owner.json(&["stats"])["edges"], 1);
    assert!(owner.run(&["revoke", &me]).status.success());
    stranger.fails(&["remove-edge", "1", "2"]);
    assert_eq!(owner.json(&["stats"])["edges"], 1);
    let err = owner.fails(&["grant", "not-hex"]);
    assert!(err.contains("is not an identity"), "{err}");
    // The snapshot policy is the owner's too, and `stats` shows it.
    let err = stranger.fails(&["snapshot-policy", "--max", "0"]);
    assert!(err.contains("only the database's owner"), "{err}");
    let stats = owner.json(&["stats"]);
    assert_eq!(
        (&stats["max_snapshots"], &stats["small_traversals_build"]),
        (&2.into(), &true.into())
    );
    let set = owner.run(&[
        "snapshot-policy",
        "--max",
        "1",
        "--small-traversals",
        "false",
    ]);
    assert!(set.status.success(), "{set:?}");
    let stats = stranger.json(&["stats"]);
    assert_eq!(
        (&stats["max_snapshots"], &stats["small_traversals_build"]),
        (&1.into(), &false.into())
    );
    // What is not given stays: --max alone once turned small traversals back on.
    assert_eq!(
        owner.json(&["snapshot-policy", "--max", "3"]),
        json!({"max_snapshots": 3, "small_traversals": false})
    );
    let err = owner.fails(&["snapshot-policy"]);
    assert!(err.contains("--max"), "{err}");
    let off = owner.run(&["snapshot-policy", "--max", "0"]);
    let off = String::from_utf8_lossy(&off.stdout).into_owned();
    assert_eq!(off.trim(), "no instance may hold a snapshot");
    owner.json(&["snapshot-policy", "--max", "1"]);
    let dfs = stranger.json(&["dfs", "1", "--dir", "both"]);
    assert_eq!(
        (&dfs["visited"], &dfs["deepest"]),
        (&2.into(), &1.into()),
        "{dfs}"
    );
    assert_eq!(dfs["vertices"], serde_json::json!([1, 2]));
    // Anyone may check the bookkeeping; it is consistent.
    let report = stranger.json(&["check"]);
    assert_eq!(
        (&report["problems"], &report["edges"]),
        (&0.into(), &1.into()),
        "{report}"
    );
}

#[test]
fn labelled_loads_resume_with_their_labels_and_vertex_labels_filter() {
    let (_host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    // Sent in (src, dst) order: 1→2 road 5, 1→3 rail 1, 2→4 road 1, 3→2 rail 1.
    let csv = file(
        &dir,
        "g.csv",
        b"src,dst,label,weight\n3,2,rail,1\n1,2,road,5\n2,4,road,1\n1,3,rail,1\n",
    );
    // Skipping the first row must skip its label and weight too: 1→3 keeps weight 1.
    cli.json(&["load", &csv, "--resume-from", "1"]);
    let light = cli.json(&["weighted-path", "1", "2"]);
    assert_eq!(
        (&light["weight"], &light["path"]),
        (&serde_json::json!(2.0), &serde_json::json!([1, 3, 2])),
        "{light}"
    );
    assert_eq!(
        cli.json(&["path", "1", "4", "--labels", "rail"])["status"],
        "Unreachable"
    );
    cli.json(&["load", &csv]);
    assert_eq!(
        cli.json(&["path", "1", "2", "--labels", "road"])["path"],
        serde_json::json!([1, 2])
    );
    // A label with a comma: --labels splits it, --edge-label takes it whole.
    let comma = file(&dir, "comma.csv", b"7,8,\"a, b\",1\n7,9,c,1\n");
    cli.json(&["load", &comma]);
    assert_eq!(
        cli.json(&["neighbors", "7", "--edge-label", "a, b"])["neighbors"],
        serde_json::json!([8])
    );
    assert_eq!(
        cli.json(&["neighbors", "7", "--edge-label", "a, b", "--labels", "c"])["neighbors"],
        serde_json::json!([8, 9])
    );
    let err = cli.fails(&["neighbors", "7", "--labels", "a, b"]);
    assert!(err.contains("unknown edge label `a`"), "{err}");
    // Spaces around a name in --labels are not part of it, as in a CSV file.
    assert_eq!(
        cli.json(&["neighbors", "7", "--labels", " c "])["neighbors"],
        serde_json::json!([9])
    );

    // An edge stored with another label is refused by the server; re-sending cannot help.
    // The error names the file's lines that give that edge.
    let clash = file(&dir, "clash.csv", b"1,2,rail,5\n");
    let err = cli.fails(&["load", &clash]);
    assert!(
        err.contains("fix what the error names")
            && err.contains(&format!("{clash}: line 1 gives it\n"))
            && err.contains("did not acknowledge the edge")
            && !err.contains("--resume-from"),
        "{err}"
    );
    let clash = file(&dir, "clash.txt", b"# comment\n5 6\n1 2\n1 2\n");
    for transport in ["ws", "http"] {
        let err = cli.fails(&["--transport", transport, "load", &clash]);
        assert!(
            err.contains("edge 1 → 2 exists with label `road`")
                && err.contains(&format!("{clash}: lines 3, 4 give it\n"))
                && err.contains("acknowledged none of the 2 edges"),
            "{transport}: {err}"
        );
    }

    // A file that gives one edge two labels (or weights) is refused whole, naming its lines.
    let before = cli.json(&["stats"]);
    let two = file(
        &dir,
        "two.csv",
        b"src,dst,label,weight\n10,11,road\n1,2,road,5\n10,11,rail\n10,11,road\n",
    );
    let err = cli.fails(&["load", &two]);
    assert!(
        err.contains("lines 2, 4, 5 give the edge 10 → 11 two ways: line 2 label `road` and weight 1, line 4 label `rail` and weight 1;")
            && err.contains("Nothing was sent")
            && !err.contains("also given two ways"),
        "{err}"
    );
    let three = file(
        &dir,
        "three.csv",
        b"10,11,a\n10,11,b\n12,13,a\n12,13,a,2\n14,15,x\n14,15,y\n",
    );
    let err = cli.fails(&["load", &three]);
    assert!(
        err.contains("(2 other edges are also given two ways)"),
        "{err}"
    );
    assert_eq!(cli.json(&["stats"]), before);

    // Vertex labels from a file; a bad line is named and nothing of the file is written.
    let bad = file(&dir, "bad.csv", b"2,hub\n3\n");
    let err = cli.fails(&["label-vertices", &bad]);
    assert!(err.contains("line 2"), "{err}");
    let err = cli.fails(&["path", "1", "2", "--vertex-labels", "hub"]);
    assert!(
        err.contains("unknown vertex label `hub`"),
        "not even the name: {err}"
    );
    let labels = file(&dir, "v.csv", b"id,label\n2,hub\n3,town\n3,town\n");
    let labelled = cli.json(&["label-vertices", &labels]);
    assert_eq!(
        (&labelled["rows"], &labelled["labelled"]),
        (&3.into(), &2.into())
    );
    assert_eq!(
        cli.json(&["path", "1", "2", "--vertex-labels", "hub"])["path"],
        serde_json::json!([1, 2])
    );
    assert_eq!(
        cli.json(&["path", "1", "4", "--vertex-labels", "hub"])["status"],
        "Unreachable",
        "4 has no label"
    );
    // An empty name: vertices without a label.
    assert_eq!(
        cli.json(&["path", "1", "4", "--vertex-labels", "hub,"])["path"],
        serde_json::json!([1, 2, 4])
    );
    let err = cli.fails(&["bfs", "1", "--vertex-labels", "hbu"]);
    assert!(err.contains("unknown vertex label `hbu`"), "{err}");
}

/// A token remembered from another server (here: the owner's, with its signature altered, as
/// a host started afresh would see it) is refused, and the error names the file it came from
/// and how to go on, on both transports.
#[test]
fn a_refused_remembered_token_names_where_it_came_from() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let mut token = server.token().unwrap().to_string();
    let signature = token.rfind('.').expect("a JWT") + 5;
    let altered = if &token[signature..=signature] == "A" {
        "B"
    } else {
        "A"
    };
    token.replace_range(signature..=signature, altered);
    let config = tempfile::tempdir().unwrap();
    let tokens = config.path().join("stdb-graph").join("tokens.json");
    std::fs::create_dir_all(tokens.parent().unwrap()).unwrap();
    std::fs::write(&tokens, json!({ host.url(): token }).to_string()).unwrap();
    for transport in ["ws", "http", "auto"] {
        let out = Command::new(env!("CARGO_BIN_EXE_graph"))
            .args(["--server", host.url(), "--transport", transport, "stats"])
            .env("XDG_CONFIG_HOME", config.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{transport}: {err}");
        assert!(
            err.contains("hint: the server refused the token remembered")
                && err.contains(&tokens.display().to_string())
                && err.contains("--token"),
            "{transport}: {err}"
        );
    }
    // A token given on the command line is the caller's own business: no hint about the file.
    let out = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["--server", host.url(), "--token", &token, "stats"])
        .env("XDG_CONFIG_HOME", config.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !err.contains("hint:"), "{err}");
    // An empty GRAPH_TOKEN is no token: the remembered one is used (and refused, as above).
    let out = Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["--server", host.url(), "stats"])
        .env("XDG_CONFIG_HOME", config.path())
        .env("GRAPH_TOKEN", "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hint: the server refused the token remembered"),
        "{err}"
    );
}

/// A vertex-label file as a spreadsheet exports it (byte-order mark, CRLF, every field quoted)
/// and too large for one HTTP call: split into calls under the body limit over HTTP, into calls
/// of at most 200,000 vertices over the WebSocket, every vertex labelled; a file that gives a
/// vertex two labels is refused, naming both lines, before any call.
#[test]
fn large_vertex_label_files_are_split_and_checked_whole() {
    let (_host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    const N: u64 = 210_000;
    let base = 1_000_000_000_000_000_000u64; // 19 digits: 4 MB of ids in JSON
    let label = |i: u64| format!("g{}", i % 997);
    let mut text = b"\xEF\xBB\xBF\"id\",\"label\"\r\n".to_vec();
    for i in 0..N {
        text.extend(format!("\"{}\",\"{}\"\r\n", base + i, label(i)).bytes());
    }
    let labels = file(&dir, "labels.csv", &text);
    for (transport, calls) in [("http", 3..=10), ("ws", 2..=2)] {
        let out = cli.json(&["label-vertices", &labels, "--transport", transport]);
        assert_eq!(
            (&out["rows"], &out["vertices"]),
            (&json!(N), &json!(N)),
            "{out}"
        );
        let made = out["calls"].as_u64().unwrap();
        assert!(calls.contains(&made), "{transport}: {made} calls");
    }
    // A path from 0 enters the target only if it has one of the labels named.
    for i in [0, 1, 996, 997, N / 2, N - 1] {
        let v = (base + i).to_string();
        cli.json(&["add-edge", "0", &v]);
        let found = cli.json(&["path", "0", &v, "--vertex-labels", &label(i)]);
        assert_eq!(found["path"], json!([0, base + i]), "{found}");
        let other = label(i + 1);
        let missed = cli.json(&["path", "0", &v, "--vertex-labels", &other]);
        assert_eq!(missed["status"], "Unreachable", "{missed}");
    }

    let before = cli.json(&["stats"]);
    let two = file(&dir, "two.csv", b"5,a\r\n6,b\r\n5,b\r\n");
    let err = cli.fails(&["label-vertices", &two]);
    assert!(
        err.contains("line 3: vertex 5 is given label `b` here and label `a` on line 1"),
        "{err}"
    );
    assert_eq!(cli.json(&["stats"])["vertices"], before["vertices"]);
}

/// A token file that cannot be read as tokens stops the command, naming the file, and is left
/// as it was (rewriting it would lose every other server's token, maybe an owner's).
#[test]
fn a_corrupt_token_file_is_named_and_kept() {
    let (host, _cli) = Cli::on_a_new_host();
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("stdb-graph/tokens.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let text = "{\n \"http://other:3000\": \"TOKEN-A\",\n}\n"; // a trailing comma
    std::fs::write(&file, text).unwrap();
    let stats = || {
        Command::new(env!("CARGO_BIN_EXE_graph"))
            .args(["--server", host.url(), "--database", "graph", "stats"])
            .env("XDG_CONFIG_HOME", config.path())
            .output()
            .unwrap()
    };
    let out = stats();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("tokens.json is not a JSON object of server URLs to tokens"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // Once fixed, the other server's token is kept beside this one's, in the same file (a
    // symlink stays one) with the same permissions.
    let real = config.path().join("dotfiles-tokens.json");
    std::fs::write(&real, "{\"http://other:3000\": \"TOKEN-A\"}").unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&real, &file).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(stats().status.success());
    assert!(std::fs::symlink_metadata(&file).unwrap().is_symlink());
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let tokens: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(tokens["http://other:3000"], "TOKEN-A");
    assert!(tokens.contains_key(host.url()), "{tokens:?}");
}

#[test]
fn watch_carries_on_after_a_host_restart() {
    use std::io::{BufRead, BufReader};
    let (mut host, cli) = Cli::on_a_new_host();
    cli.json(&["add-edge", "1", "3"]);
    let mut watch = cli
        .command(&["watch", "--vertex", "1", "--count", "2", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let first = next();
    assert_eq!(
        (&first["event"], &first["reconnected"]),
        (&"subscribed".into(), &false.into())
    );

    host.restart();
    // The watch connects again and says so, with the state as it is now.
    let again = next();
    assert_eq!(
        (&again["event"], &again["reconnected"]),
        (&"subscribed".into(), &true.into()),
        "{again}"
    );
    assert_eq!(again["edges"][0]["dst"], 3, "{again}");
    assert_eq!(again["edges"].as_array().map(Vec::len), Some(1), "{again}");
    // And goes on: a write to vertex 1 is its edge row and the graph's new version, which end
    // it (--count 2).
    cli.json(&["add-edge", "1", "4"]);
    let events = [next(), next()];
    let row = events
        .iter()
        .find(|e| e["event"] != "meta")
        .expect("the edge row");
    assert_eq!(
        (&row["event"], &row["edge"]["dst"]),
        (&"insert".into(), &4.into())
    );
    let out = watch.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("connecting again"), "{stderr}");
}

/// Runs the CLI with `args` and sends it `signal` (`INT`: Ctrl-C) once `under_way` says its
/// work has begun (a fixed delay is too short on a busy machine); its output.
fn interrupted_once(
    cli: &Cli,
    args: &[&str],
    signal: &str,
    under_way: impl Fn() -> bool,
) -> std::process::Output {
    let mut child = cli
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !under_way() {
        assert!(
            std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none(),
            "graph {args:?} ended or did not begin within a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait_with_output().unwrap()
}

/// Ctrl-C during `graph finish-load` says that the bulk load is still under way and how to
/// finish it, as the other writing commands say what they leave (it used to die of the signal
/// without a word: audit helper-85); running it again finishes it.
#[test]
fn an_interrupted_finish_load_says_how_to_finish() {
    let (host, cli) = Cli::on_a_new_host();
    let owner = host.anonymous().with_token(cli.token.clone());
    let db = graph_client::graph::GraphDb::new(owner, "graph");
    db.begin_bulk_load().unwrap();
    // 1M vertices whose rows are written in about ten calls: seconds of finishing.
    for first in (0..1_000_000u64).step_by(50_000) {
        let src: Vec<u64> = (first..first + 50_000).collect();
        let dst: Vec<u64> = src.iter().map(|v| (v + 1) % 1_000_000).collect();
        db.add_edges(&src, &dst).unwrap();
    }
    let out = interrupted_once(&cli, &["finish-load"], "INT", || {
        cli.json(&["stats"])["bulk_load"]["finished_below"].as_u64() > Some(0)
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted: the bulk load is still under way")
            && stderr.contains("run `graph finish-load` again"),
        "{stderr}"
    );
    assert!(cli.json(&["stats"])["bulk_load"].is_object());
    assert!(cli.json(&["finish-load"])["calls"].as_u64() > Some(0));
    let stats = cli.json(&["stats"]);
    assert!(stats["bulk_load"].is_null(), "{stats}");
    assert_eq!(stats["vertices"], 1_000_000);
    assert_eq!(cli.json(&["check"])["problems"], 0);
}

/// Ctrl-C during an export gives it up and leaves no file behind, complete or partial; so do
/// SIGTERM (`timeout`, a service manager) and SIGHUP (a closed terminal).
#[test]
fn an_interrupted_export_leaves_nothing() {
    let (_host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    let edges: String = (0..20_000u64).map(|i| format!("{i} {}\n", i + 1)).collect();
    cli.json(&["load", &file(&dir, "chain.txt", edges.as_bytes())]);
    let out = dir.path().join("e.csv");
    // A page per edge: 20,000 transactions, seconds of exporting.
    let partial = dir.path().join("e.csv.partial");
    for signal in ["INT", "TERM", "HUP"] {
        let done = interrupted_once(
            &cli,
            &["export", out.to_str().unwrap(), "--page", "1"],
            signal,
            || partial.exists(),
        );
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(130), "{signal}: {stderr}");
        assert!(
            stderr.contains("partial files removed"),
            "{signal}: {stderr}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["chain.txt"], "{signal}: {stderr}");
    }
}

/// A host stopped (SIGTERM) while a load over the WebSocket has calls in flight: the CLI fails
/// with the hint, never a panic (2.14's SDK panics in its connection task when it sends a call
/// on a socket that has just closed, which used to poison the connection and panic the CLI as
/// it dropped it: exit 101, no hint, about one stop in twenty), and the same command run again
/// loads exactly the file's graph. `GRAPH_STOP_CYCLES` sets how many stops (default 3).
#[test]
fn a_host_stopped_under_a_pipelined_load_leaves_the_hint() {
    use rand::{Rng, SeedableRng};
    let cycles: u64 = std::env::var("GRAPH_STOP_CYCLES").map_or(3, |n| n.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(502);
    let mut distinct = std::collections::BTreeSet::new();
    let mut text = String::new();
    while distinct.len() < 200_000 {
        let (a, b) = (rng.gen_range(0..30_000u64), rng.gen_range(0..30_000u64));
        text.push_str(&format!("{a},{b},,{}\n", 1 + a % 3));
        distinct.insert((a, b));
    }
    let path = file(&dir, "weighted.csv", text.as_bytes());
    for cycle in 0..cycles {
        let (mut host, cli) = Cli::on_a_new_host();
        let load = |host: &TestHost| {
            Command::new(env!("CARGO_BIN_EXE_graph"))
                .args([
                    "--server",
                    host.url(),
                    "--token",
                    &cli.token,
                    "--transport",
                    "ws",
                ])
                .args(["load", &path, "--batch", "500", "--in-flight", "4"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let running = load(&host);
        // Stop it once some of its 400 calls have committed, at another point each cycle.
        let db = graph_client::graph::GraphDb::new(host.anonymous(), "graph");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while db.info().map_or(0, |i| i.version) < 20 + 37 * cycle % 300 {
            assert!(std::time::Instant::now() < deadline, "the load stalled");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(host.terminate(std::time::Duration::from_secs(60)));
        let out = running.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "cycle {cycle}: {err}");
        // A load the stop let finish succeeds; any other says how to go on.
        match out.status.code() {
            Some(0) => {}
            Some(1) => assert!(
                err.contains("re-run the same command"),
                "cycle {cycle}: {err}"
            ),
            code => panic!("cycle {cycle}: exit {code:?}: {err}"),
        }
        host.relaunch();
        let out = load(&host).wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stats = cli.json(&["stats"]);
        assert_eq!(
            stats["edges"].as_u64(),
            Some(distinct.len() as u64),
            "{stats}"
        );
        assert_eq!(cli.json(&["check"])["problems"], 0);
    }
}

/// An export that big writes keep cutting off gives up after three attempts, saying so and
/// what to do, not only that a version can no longer be read.
#[test]
fn an_export_cut_off_by_big_writes_says_why_it_gave_up() {
    let (_host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    let edges: String = (0..2_000u64).map(|i| format!("{i} {}\n", i + 1)).collect();
    let snap = file(&dir, "e.txt", edges.as_bytes());
    cli.json(&["load", &snap]);
    let writer_db = graph_client::graph::GraphDb::new(
        graph_client::server::Server::new(&cli.url).with_token(cli.token.clone()),
        "graph",
    );
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // Calls of 10,001 new edges: each is a bulk write, which the change log does not
            // keep, so an export reading an older version must start again.
            let mut first = 1_000_000u64;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let src: Vec<u64> = (first..first + 10_001).collect();
                writer_db.add_edges(&src, &src).unwrap();
                first += 10_001;
            }
        })
    };
    let out = dir.path().join("out.csv");
    let err = cli.fails(&["export", out.to_str().unwrap(), "--page", "1"]);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.join().unwrap();
    assert!(
        err.contains("started 3 times") && err.contains("can no longer be read"),
        "{err}"
    );
}

/// A `--no-bulk` load that finds a bulk load under way (here another client's) joins and
/// finishes it, as every load does, and says so: its queries were refused meanwhile.
#[test]
fn a_no_bulk_load_says_it_joins_a_bulk_load_under_way() {
    let (_host, cli) = Cli::on_a_new_host();
    let other = graph_client::graph::GraphDb::new(
        graph_client::server::Server::new(&cli.url).with_token(cli.token.clone()),
        "graph",
    );
    other.begin_bulk_load().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let snap = file(&dir, "e.txt", b"1 2\n2 3\n");
    let out = cli.run(&["load", &snap, "--no-bulk"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("a bulk load is under way"), "{stderr}");
    let stats = cli.json(&["stats"]);
    assert!(stats["bulk_load"].is_null(), "{stats}");
    assert_eq!(
        (stats["vertices"].as_u64(), stats["edges"].as_u64()),
        (Some(3), Some(2))
    );
}

/// An interrupt while a load still reads its file (here a FIFO nothing is written to) ends it as
/// one later on does: exit 130, saying what it left (nothing), for SIGTERM as for Ctrl-C. (It
/// used to die of the signal, 143, without a word.)
#[test]
fn a_load_interrupted_while_reading_its_file_says_so() {
    let (_host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    for signal in ["TERM", "INT"] {
        let fifo = dir.path().join(format!("edges-{signal}.txt"));
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Opening the FIFO to write returns once the load has opened it to read (and keeps
        // it open, so that the load then waits for lines).
        let opened = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (fifo, opened) = (fifo.clone(), opened.clone());
            std::thread::spawn(move || {
                let file = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                opened.store(true, std::sync::atomic::Ordering::SeqCst);
                file
            })
        };
        let out = interrupted_once(&cli, &["load", fifo.to_str().unwrap()], signal, || {
            opened.load(std::sync::atomic::Ordering::SeqCst)
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{signal}: {stderr}");
        assert!(
            stderr.contains("interrupted: nothing was sent"),
            "{signal}: {stderr}"
        );
        drop(writer.join().unwrap());
    }
    assert_eq!(cli.json(&["stats"])["edges"], 0);
}

/// Ctrl-C during a load says how far the server got, and resuming from there loads exactly the
/// file's graph.
#[test]
fn an_interrupted_load_says_where_to_resume() {
    let (_host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    // 100,000 distinct edges in calls of 10: 10,000 calls, seconds of loading.
    let edges: String = (0..100_000u64)
        .map(|i| format!("{} {}\n", i % 5_000, (i * 7_919 + 1) % 100_003))
        .collect();
    let snap = file(&dir, "big.txt", edges.as_bytes());
    let out = interrupted_once(
        &cli,
        &["load", &snap, "--batch", "10", "--transport", "http"],
        "INT",
        // Two calls stored: the first one's answer has arrived (over HTTP the second is sent
        // only then), so the hint has a point to resume from.
        || cli.json(&["stats"])["edges"].as_u64() >= Some(20),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let at: u64 = stderr
        .split("--resume-from ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no resume point in: {stderr}"));
    // What was acknowledged is stored (a call still out may have stored more, as it says).
    assert!(
        stderr.contains("a call still out may have stored more"),
        "{stderr}"
    );
    let stored = cli.json(&["stats"])["edges"].as_u64().unwrap();
    assert!(
        at > 0 && at < 100_000 && stored >= at,
        "{at} {stored}: {stderr}"
    );
    // The load into the empty graph was a bulk load: until it is finished, queries and
    // removals are refused in words that say how to finish it, as the hint said.
    assert!(
        stderr.contains("the graph answers no queries")
            && stderr.contains("`graph finish-load` ends it"),
        "{stderr}"
    );
    assert!(cli.json(&["stats"])["bulk_load"].is_object());
    let stats = String::from_utf8_lossy(&cli.run(&["stats"]).stdout).into_owned();
    assert!(stats.contains("graph finish-load"), "{stats}");
    // `check` checks what is written (nothing yet), and says what it could not check.
    let check = cli.json(&["check"]);
    assert_eq!(check["problems"], 0, "{check}");
    assert_eq!(check["bulk_load_unchecked_from"], 0, "{check}");
    let out = cli.run(&["check"]);
    let check = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && check.contains("bulk load is under way"),
        "{check}"
    );
    for refused in [
        cli.fails(&["neighbors", "0"]),
        cli.fails(&["remove-edge", "0", "1"]),
    ] {
        assert!(
            refused.contains("bulk load") && refused.contains("graph finish-load"),
            "{refused}"
        );
    }

    let resumed = cli.json(&["load", &snap, "--resume-from", &at.to_string()]);
    assert_eq!(resumed["sent"], 100_000 - at);
    assert!(resumed["bulk_finish_calls"].as_u64() > Some(0), "{resumed}");
    assert!(cli.json(&["stats"])["bulk_load"].is_null());
    assert_eq!(cli.json(&["stats"])["edges"], 100_000);
    let check = cli.json(&["check"]);
    assert_eq!(check["problems"], 0, "{check}");
    assert!(check["bulk_load_unchecked_from"].is_null(), "{check}");
}

/// A token read from a file keeps the file's newline (the owner tokens `scripts/run` writes
/// end with one): the CLI sends it without, over every transport, and a weight the module
/// refuses is refused in its words even where JSON cannot carry it.
#[test]
fn a_token_with_a_newline_and_a_weight_json_cannot_carry() {
    let (_host, cli) = Cli::on_a_new_host();
    let with_newline = Cli {
        url: cli.url.clone(),
        token: format!("{}\r\n", cli.token),
        database: "graph",
    };
    for (i, transport) in ["ws", "http", "auto"].into_iter().enumerate() {
        let dst = (i + 2).to_string();
        let out = with_newline.run(&["--transport", transport, "add-edge", "1", &dst]);
        assert!(out.status.success(), "{transport}: {out:?}");
    }
    assert_eq!(cli.json(&["stats"])["edges"], 3);
    for transport in ["ws", "http"] {
        for weight in ["nan", "inf"] {
            let err = cli.fails(&[
                "--transport",
                transport,
                "add-edge",
                "5",
                "6",
                "--weight",
                weight,
            ]);
            assert!(
                err.contains("finite and non-negative"),
                "{transport} {weight}: {err}"
            );
        }
    }
    assert_eq!(cli.json(&["stats"])["edges"], 3);
}

#[test]
fn an_export_loads_back_as_the_same_graph() {
    let (host, cli) = Cli::on_a_new_host();
    let dir = tempfile::tempdir().unwrap();
    let edges = file(
        &dir,
        "g.csv",
        "src,dst,label,weight\n1,2,road,5\n2,1,\"a, \"\"b\"\"\",0.1\n2,3,,1\n3,3,\" x \",0\n\
         18446744073709551615,1,ünï,3.4e38\n"
            .as_bytes(),
    );
    let vertices = file(
        &dir,
        "v.csv",
        b"id,label\n1,person\n9,\"lone, vertex\"\n3,\n",
    );
    cli.json(&["load", &edges]);
    cli.json(&["label-vertices", &vertices]);
    let out = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let (e1, v1) = (out("e1.csv.gz"), out("v1.csv"));
    let exported = cli.json(&["export", &e1, "--vertices", &v1, "--page", "1"]);
    assert_eq!(
        (&exported["edges"], &exported["vertices"]),
        (&json!(5), &json!(5))
    );
    assert_eq!(exported["version"], cli.json(&["stats"])["version"]);
    // Into another database, then exported from there: the same files.
    let copy = Cli::on_another_database(&host, "copy");
    copy.json(&["load", &e1]);
    copy.json(&["label-vertices", &v1]);
    let (e2, v2) = (out("e2.csv.gz"), out("v2.csv"));
    copy.json(&["export", &e2, "--vertices", &v2]);
    let unzip = |path: &str| {
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()),
            &mut text,
        )
        .unwrap();
        text
    };
    assert_eq!(
        unzip(&e1),
        "src,dst,label,weight\n1,2,road,5\n2,1,\"a, \"\"b\"\"\",0.1\n2,3,,1\n3,3,\" x \",0\n\
         18446744073709551615,1,ünï,340000000000000000000000000000000000000\n"
    );
    assert_eq!(unzip(&e1), unzip(&e2));
    let listed = std::fs::read_to_string(&v1).unwrap();
    assert_eq!(
        listed,
        "id,label\n1,person\n2,\n3,\n9,\"lone, vertex\"\n18446744073709551615,\n"
    );
    assert_eq!(listed, std::fs::read_to_string(&v2).unwrap());
    for db in [&cli, &copy] {
        assert_eq!(db.json(&["path", "1", "3"])["path"], json!([1, 2, 3]));
    }
    // Refused before anything is read: a name `graph load` would read as SNAP text, and the
    // same file for both.
    let message = cli.fails(&["export", &out("e.txt")]);
    assert!(message.contains(".csv or .csv.gz"), "{message}");
    let message = cli.fails(&["export", &out("same.csv"), "--vertices", &out("same.csv")]);
    assert!(message.contains("the same file"), "{message}");
    assert!(!dir.path().join("same.csv").exists());
    // A file that cannot be written: an error naming it, and nothing left behind.
    let missing = out("no/such/dir/e.csv");
    assert!(
        cli.fails(&["export", &missing])
            .contains("no/such/dir/e.csv")
    );
}

/// `--timeout` bounds how long a command waits for a server that stopped answering (SIGSTOP),
/// over either transport, instead of 10 minutes; the error says so. The default transport does
/// not then try HTTP, which would wait as long again.
#[test]
fn a_server_that_stopped_answering_fails_after_the_timeout() {
    let (host, cli) = Cli::on_a_new_host();
    cli.json(&["add-edge", "1", "2"]);
    let signal = |name: &str| host.signal(name);
    signal("-STOP");
    let mut failures = Vec::new();
    for transport in ["ws", "http", "auto"] {
        let started = std::time::Instant::now();
        let out = cli.run(&["--timeout", "1s", "--transport", transport, "stats"]);
        failures.push((transport, started.elapsed(), out));
    }
    signal("-CONT");
    for (transport, took, out) in failures {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{transport}: {stderr}");
        assert!(
            took < std::time::Duration::from_secs(15),
            "{transport}: {took:?}"
        );
        assert!(stderr.contains("within 1s"), "{transport}: {stderr}");
        if transport == "auto" {
            assert!(
                stderr.contains("--transport http") && !stderr.contains("using HTTP"),
                "{stderr}"
            );
        }
    }
    assert_eq!(cli.json(&["stats"])["edges"], 1);
    let err = cli.fails(&["--timeout", "0s", "stats"]);
    assert!(err.contains("must be more than zero"), "{err}");
}

/// `-` reads standard input, as SNAP text unless `--format csv` says otherwise (gzip too); its
/// bad lines are named, and nothing of such an input is sent.
#[test]
fn standard_input_loads_in_either_layout() {
    let (_host, cli) = Cli::on_a_new_host();
    let loaded = |args: &[&str], input: &[u8]| {
        let mut all = args.to_vec();
        all.push("--json");
        let out = cli.run_with_input(&all, input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "graph {args:?}: {err}");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let snap = loaded(&["load", "-"], SNAP.as_bytes());
    assert_eq!(
        (&snap["rows"], &snap["edges"]),
        (&json!(8), &json!(7)),
        "{snap}"
    );

    // CSV by default is refused as SNAP, naming the line and the way to read it.
    let csv = b"src,dst,label,weight\n31,32,road,5\n31,33,,1\n33,32,,1\n";
    let out = cli.run_with_input(&["load", "-"], csv);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("standard input: line 1: ")
            && err.contains("--format csv"),
        "{err}"
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(csv).unwrap();
    let done = loaded(&["load", "-", "--format", "csv"], &gz.finish().unwrap());
    assert_eq!(
        (&done["rows"], &done["edges"]),
        (&json!(3), &json!(10)),
        "{done}"
    );
    let light = cli.json(&["weighted-path", "31", "32"]);
    assert_eq!(
        (&light["weight"], &light["path"]),
        (&json!(2.0), &json!([31, 33, 32])),
        "{light}"
    );

    // A bad line is named by its number, and nothing before it is sent.
    let out = cli.run_with_input(&["load", "-"], b"10 11\n12 x\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("standard input: line 2: `x` is not"),
        "{err}"
    );
    assert_eq!(cli.json(&["stats"])["edges"], json!(10));

    // Two ways for one edge: refused before anything is sent, without the lines (standard input
    // is not read again).
    let out = cli.run_with_input(&["load", "-", "--format", "csv"], b"20,21,a\n20,21,b\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("standard input: its lines give the edge 20 → 21 two ways"),
        "{err}"
    );
    assert_eq!(cli.json(&["stats"])["edges"], json!(10));

    let labels = loaded(&["label-vertices", "-"], b"id,label\n1,city\n99,town\n");
    assert_eq!(labels["labelled"], json!(2), "{labels}");
    assert_eq!(cli.json(&["stats"])["vertices"], json!(12));
}

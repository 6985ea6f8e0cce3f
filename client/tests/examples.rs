//! The examples the README points users to, run as they say: against a real host with the
//! module published, with the owner's token in `GRAPH_TOKEN`. An example that no longer
//! compiles fails the build; one that fails against a fresh database fails here.

use graph_testkit::TestHost;
use std::path::PathBuf;
use std::process::{Command, Output};

/// An example binary: cargo builds examples beside the test binaries (`target/<profile>/
/// examples/`) whenever it builds this package's tests without a target filter, as
/// `scripts/test` does.
fn example(name: &str) -> PathBuf {
    let deps = std::env::current_exe().expect("test binary path");
    let path = deps
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>")
        .join("examples")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build --release -p graph-client --examples`",
        path.display()
    );
    path
}

fn run(name: &str, host: &TestHost, token: Option<&str>) -> Output {
    let mut cmd = Command::new(example(name));
    // Where `shortest_path` remembers the identity it makes when given no token.
    let config = std::env::temp_dir().join("graph-examples-test-config");
    cmd.args([host.url(), "graph"])
        .env_remove("GRAPH_TOKEN")
        .env("XDG_CONFIG_HOME", config);
    if let Some(token) = token {
        cmd.env("GRAPH_TOKEN", token);
    }
    cmd.output().expect("running the example")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn examples_run_against_a_published_module() {
    let host = TestHost::start();
    let owner = host.publish_module("graph");
    let token = owner.token();

    let out = stdout(&run("shortest_path", &host, token));
    assert!(out.contains("graph: 1000 vertices, 1100 edges"), "{out}");
    let hops: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("0 → 555 in "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no path line in\n{out}"));
    assert_eq!(hops, ring_distance(0, 555), "{out}");

    // Run twice: each run adds an edge the subscription has not seen yet, and reports as new
    // none of the edges that were there when it subscribed (the ring's 1 → 2 among them).
    for _ in 0..2 {
        let out = stdout(&run("live_sdk", &host, token));
        assert!(out.contains("the subscription saw 1 → "), "{out}");
        assert!(!out.contains("new edge 1 → 2"), "{out}");
        assert!(out.contains("1 → 3: [1, 2, 3]"), "{out}");
    }
    // Without a token its write is refused: it says so, fails, and claims to have seen nothing.
    let out = run("live_sdk", &host, None);
    let (stdout_text, stderr_text) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "{stdout_text}");
    assert!(
        stderr_text.contains("add_edges failed") && stderr_text.contains("may not change"),
        "{stderr_text}"
    );
    assert!(
        !stdout_text.contains("the subscription saw"),
        "{stdout_text}"
    );

    // Without the owner's token (none, or an empty one) the write is refused, and the
    // example says so.
    for token in [None, Some(""), Some(" \n")] {
        let out = run("shortest_path", &host, token);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{token:?}: {stderr}");
        assert!(
            stderr.contains("may not change") && stderr.contains("owner's GRAPH_TOKEN"),
            "{token:?}: {stderr}"
        );
    }
}

/// Hops from `from` to `to` in the example's graph, by a plain BFS.
fn ring_distance(from: u64, to: u64) -> usize {
    let next = |v: u64| {
        let mut n = vec![(v + 1) % 1_000];
        if v.is_multiple_of(10) {
            n.push((v + 100) % 1_000);
        }
        n
    };
    let mut dist = vec![usize::MAX; 1_000];
    dist[from as usize] = 0;
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(v) = queue.pop_front() {
        for w in next(v) {
            if dist[w as usize] == usize::MAX {
                dist[w as usize] = dist[v as usize] + 1;
                queue.push_back(w);
            }
        }
    }
    dist[to as usize]
}

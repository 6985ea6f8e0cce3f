//! graph-bench end to end against the real embedded host: load, verified workloads in every
//! mode, contention, and the report files. The binary exits non-zero on any wrong answer.

use graph_testkit::{PeerServer, TestHost, host_binary, module_wasm_path};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs graph-bench against `host` (publishing the module, writing reports to `out`) with
/// `args` on top; asserts success and returns its standard output.
fn run_bench(host: &TestHost, out: &Path, args: &[&str]) -> String {
    let run = Command::new(env!("CARGO_BIN_EXE_graph-bench"))
        .args(["--server", host.url(), "--publish"])
        .arg(module_wasm_path())
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("running graph-bench");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "graph-bench failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    stdout
}

/// The JSON report `name` in `out`.
/// The fields of a CSV line, unquoted.
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

fn report(out: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap()
}

/// Checks that `<dataset>-samples.jsonl` and `.csv` hold one row per measured call of every
/// result row of `report`, besides those of the phases that time writes one at a time
/// (write → subscriber, inserts on an idle server before the contention phase), and returns
/// the JSONL rows.
fn check_samples(out: &Path, report: &Value) -> Vec<Value> {
    let dataset = report["environment"]["dataset"].as_str().unwrap();
    let read = |ext: &str| std::fs::read_to_string(out.join(format!("{dataset}-samples.{ext}")));
    let jsonl = read("jsonl").unwrap();
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let csv = read("csv").unwrap();
    assert_eq!(csv.lines().count(), rows.len() + 1, "{csv}");
    let results = report["results"].as_array().unwrap();
    let mut measured = 0;
    for r in results {
        let calls = r["e2e"]["count"].as_u64().unwrap() as usize;
        let mut indexes: Vec<u64> = rows
            .iter()
            .filter(|s| s["system"] == r["system"] && s["workload"] == r["workload"])
            .map(|s| s["index"].as_u64().unwrap())
            .collect();
        indexes.sort_unstable();
        assert_eq!(indexes, (0..calls as u64).collect::<Vec<_>>(), "{r}");
        measured += calls;
    }
    let phases = |s: &&Value| {
        let w = s["workload"].as_str().unwrap();
        w.starts_with("write → subscriber") || w.starts_with("contention: insert, idle")
    };
    let phase_rows = rows.iter().filter(phases).count();
    assert_eq!(
        rows.len(),
        measured + phase_rows,
        "a sample row per measured call"
    );
    for s in &rows {
        assert!(s["e2e_us"].as_f64().unwrap() > 0.0, "{s}");
        if s["workload"] == "path" {
            assert!(s["a"].is_u64() && s["b"].is_u64(), "{s}");
        }
        // Kuzu's time is its worker's, with the client's clock (pipe included) beside it;
        // every other system's is the client's clock alone.
        if s["system"] == "kuzu" {
            assert!(
                s["client_us"].as_f64().unwrap() > s["e2e_us"].as_f64().unwrap(),
                "{s}"
            );
        } else {
            assert!(s["client_us"].is_null(), "{s}");
        }
        if s["system"] == "stdb" && s["workload"] == "bfs" {
            assert!(
                s["transactions"].as_u64().unwrap() > 0,
                "stdb has stats: {s}"
            );
        }
    }
    let md = std::fs::read_to_string(out.join(format!("{dataset}.md"))).unwrap();
    assert!(
        md.contains(&format!(
            "[{dataset}-samples.jsonl]({dataset}-samples.jsonl)"
        )),
        "{md}"
    );
    rows
}

#[test]
fn small_benchmark_runs_verified_and_reports() {
    let host = TestHost::start();
    let out = tempfile::tempdir().unwrap();
    let stdout = run_bench(
        &host,
        out.path(),
        &[
            "--dataset",
            "fb",
            "--runs",
            "5",
            "--bfs-runs",
            "2",
            "--stage1-runs",
            "2",
            "--writes",
            "5",
            "--stage1-writes",
            "2",
            "--roundtrip-calls",
            "20",
            "--propagation-writes",
            "20",
            "--throughput-inserts",
            "500",
            "--connections",
            "10",
            "--in-flight",
            "1,4",
            "--write-rates",
            "100,1000",
            "--under-writes-secs",
            "1",
            "--mixed-secs",
            "1",
        ],
    );
    for system in ["stdb", "stdb-http", "stdb-stage1", "stdb-stage1-reducer"] {
        assert!(
            stdout.contains(&format!(
                "{system}: verified: holds 4039 vertices and 88234 edges"
            )),
            "{stdout}"
        );
    }

    let report = report(out.path(), "fb.json");
    let results = report["results"].as_array().unwrap();
    // 2 round-trip rows per transport and without the SDK + 4 workloads × 4 systems, minus
    // neighbor count in the reducer mode.
    assert_eq!(results.len(), 2 * 3 + 4 * 4 - 1, "{report}");
    for r in results {
        assert!(r["e2e"]["count"].as_u64().unwrap() > 0, "{r}");
        let floor = r["workload"].as_str().unwrap().starts_with("empty");
        if r["mode"].as_str().unwrap().starts_with("stage2") && !floor {
            assert!(
                r["max_hold"]["count"].as_u64().unwrap() > 0,
                "stage2 reports hold times: {r}"
            );
        }
    }
    assert_eq!(report["contention"].as_array().unwrap().len(), 2);
    // The three modes read one store, loaded once.
    let loads = report["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(loads[0]["system"], "stdb");
    assert_eq!(
        loads[0]["shared_by"],
        serde_json::json!(["stdb-http", "stdb-stage1", "stdb-stage1-reducer"])
    );
    // Write → subscriber with confirmed reads on and off; inserts from 10 connections, uniform
    // and Zipf, with 1 and then 4 calls in flight per connection, every one counted (graph-bench
    // fails the run otherwise).
    let propagation = report["propagation"].as_array().unwrap();
    assert_eq!(propagation.len(), 2, "{propagation:?}");
    for p in propagation {
        assert_eq!(p["latency"]["count"], 20, "{p}");
    }
    // Per in-flight depth: uniform inserts, Zipf inserts, then the empty reducer's ceiling.
    let throughput = report["throughput"].as_array().unwrap();
    assert_eq!(throughput.len(), 6, "{throughput:?}");
    let phases = [1, 4].into_iter().flat_map(|depth| {
        ["add_edges", "add_edges", "noop_reducer"].map(|reducer| (depth, reducer))
    });
    for (t, (in_flight, reducer)) in throughput.iter().zip(phases) {
        assert_eq!(
            (
                &t["connections"],
                &t["inserts"],
                &t["in_flight"],
                &t["reducer"]
            ),
            (&10.into(), &500.into(), &in_flight.into(), &reducer.into()),
            "{t}"
        );
        assert!(t["per_second"].as_f64().unwrap() > 0.0, "{t}");
    }
    assert!(throughput[1]["hot_share"].as_f64().unwrap() > 0.5);
    assert!(throughput[4]["hot_share"].as_f64().unwrap() > 0.5);
    assert_eq!(throughput[5]["hot_share"].as_f64(), Some(0.0));
    // A full BFS and a shortest path at each write rate, every answer verified (graph-bench
    // fails the run otherwise) and exact for one version; the writer kept up.
    let under_writes = report["under_writes"].as_array().unwrap();
    assert_eq!(under_writes.len(), 2 * 2, "{under_writes:?}");
    for w in under_writes {
        let count = w["latency"]["count"].as_u64().unwrap();
        assert!(count > 0, "{w}");
        assert_eq!(w["pinned"].as_u64(), Some(count), "{w}");
        assert!(w["writer"]["count"].as_u64().unwrap() > 10, "{w}");
        assert!(w["changes_per_second"].as_f64().unwrap() > 0.0, "{w}");
        // Named with how far it goes: a BFS reaching vertices, a path of some hops (a pair
        // that has one).
        let traversal = w["traversal"].as_str().unwrap();
        assert!(
            traversal.contains(" vertices") || traversal.ends_with(" hops"),
            "{traversal}"
        );
    }
    // The mixed workload, uniform and Zipf, every write accounted for (or the run fails).
    let mixed = report["mixed"].as_array().unwrap();
    assert_eq!(mixed.len(), 2, "{mixed:?}");
    for m in mixed {
        let ops: Vec<&str> = m["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["op"].as_str().unwrap())
            .collect();
        assert_eq!(
            ops,
            [
                "BFS depth 2",
                "add edge",
                "neighbor count",
                "remove edge",
                "shortest path"
            ],
            "{m}"
        );
        assert_eq!(m["system"], "stdb", "{m}");
        assert!(m["acked_writes"].as_u64().unwrap() > 0, "{m}");
    }
    // The snapshot the full BFS built, with its size measured by the instance's allocator.
    let snapshots = report["snapshots"].as_array().unwrap();
    assert!(!snapshots.is_empty(), "{report}");
    for m in snapshots {
        let per_edge = m["bytes"].as_f64().unwrap() / m["edges"].as_f64().unwrap();
        assert!((4.0..200.0).contains(&per_edge), "{m}");
    }
    assert!(
        under_writes[2]["from_snapshot"].as_u64().unwrap() > 0
            && under_writes[2]["changes_applied"]["max"].as_f64().unwrap() > 0.0,
        "a full BFS catches its snapshot up: {:?}",
        under_writes[2]
    );
    assert!(loads[0]["load"]["edges_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(report["environment"]["edges"], 88234);
    // The fb-sized graph is connected: all 5 pairs have a path (a pair in twenty names an
    // unknown vertex: none of 5); the heading says so.
    assert_eq!(
        report["environment"]["path_pairs"],
        serde_json::json!({"reachable": 5, "unreachable": 0, "unknown": 0})
    );
    assert!(
        stdout.contains(
            "shortest-path pairs: 5 with a path, 0 without one, 0 naming an unknown vertex\n"
        ),
        "{stdout}"
    );
    // Measured back to back: the heading says what that means over the WebSocket.
    assert_eq!(report["environment"]["idle_ms"], 0.0);
    assert!(
        stdout.contains("stdb's calls were made back to back"),
        "{stdout}"
    );
    let samples = check_samples(out.path(), &report);
    // 20 calls each of the empty procedure and the empty reducer, over each transport, and
    // over the WebSocket without the SDK.
    let floor = |s: &&Value| s["workload"].as_str().unwrap().starts_with("empty ");
    for system in ["stdb", "stdb-http", "stdb-ws-raw"] {
        for workload in ["empty procedure", "empty reducer"] {
            let calls = samples
                .iter()
                .filter(|s| s["a"].is_null() && s["system"] == system && s["workload"] == workload)
                .count();
            assert_eq!(calls, 20, "{workload} calls by {system}");
        }
    }
    assert_eq!(samples.iter().filter(floor).count(), 120);
    // Every call of the other phases is a raw sample too: one at a time in the samples files,
    // while others run in the concurrent file. Each phase's calls, by name, numbered from 0.
    let count = |rows: &[Value], prefix: &str| {
        let mut indexes: Vec<u64> = rows
            .iter()
            .filter(|s| s["workload"].as_str().unwrap().starts_with(prefix))
            .map(|s| s["index"].as_u64().unwrap())
            .collect();
        indexes.sort_unstable();
        indexes
    };
    let numbered = |n: u64| (0..n).collect::<Vec<u64>>();
    for confirmed in ["on", "off"] {
        let prefix = format!("write → subscriber, confirmed reads {confirmed}");
        assert_eq!(count(&samples, &prefix), numbered(20), "{prefix}");
    }
    // --writes 5, --stage1-writes 2; each loop's BFS starts where it reaches half the graph.
    let contention: Vec<(String, u64)> =
        [("Stage-2 full BFS loop", 5), ("Stage-1 full BFS loop", 2)]
            .into_iter()
            .map(|(loop_name, writes)| {
                let label = report["contention"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["traversal"].as_str().unwrap())
                    .find(|t| t.starts_with(loop_name))
                    .unwrap()
                    .to_string();
                let (from, reach) = label[loop_name.len()..].split_once(", reaching ").unwrap();
                let (reached, all) = reach
                    .trim_end_matches(" vertices")
                    .split_once(" of ")
                    .unwrap();
                let (reached, all): (u64, u64) = (reached.parse().unwrap(), all.parse().unwrap());
                assert!(from.starts_with(" from ") && 2 * reached >= all, "{label}");
                (label, writes)
            })
            .collect();
    for (label, writes) in &contention {
        let (label, writes) = (label.as_str(), *writes);
        let prefix = format!("contention: insert, idle ({label})");
        assert_eq!(count(&samples, &prefix), numbered(writes), "{prefix}");
    }
    let mut text = String::new();
    let gz = std::fs::File::open(out.path().join("fb-concurrent-samples.csv.gz")).unwrap();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz), &mut text).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let concurrent: Vec<Value> = lines
        .map(|line| {
            let fields = csv_fields(line);
            assert_eq!(fields.len(), header.len(), "{line}");
            let cell = |name: &str| &fields[header.iter().position(|h| *h == name).unwrap()];
            serde_json::json!({
                "workload": cell("workload"),
                "index": cell("index").parse::<u64>().unwrap(),
                "at_s": cell("at_s").parse::<f64>().unwrap(),
                "e2e_us": cell("e2e_us").parse::<f64>().unwrap(),
            })
        })
        .collect();
    assert!(
        concurrent
            .iter()
            .all(|s| s["e2e_us"].as_f64().unwrap() > 0.0)
    );
    for (label, writes) in &contention {
        let (label, writes) = (label.as_str(), *writes);
        let prefix = format!("contention: insert during {label}");
        assert_eq!(count(&concurrent, &prefix), numbered(writes), "{prefix}");
        let c = report["contention"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["traversal"] == label)
            .unwrap();
        let loops = c["traversals"].as_u64().unwrap();
        assert!(loops > 0, "{c}");
        let prefix = format!("contention: {label}");
        assert_eq!(count(&concurrent, &prefix), numbered(loops), "{prefix}");
    }
    for w in under_writes {
        let (rate, query) = (&w["rate"], w["traversal"].as_str().unwrap());
        let prefix = format!("under writes at {rate}/s: {query}");
        let reads = w["latency"]["count"].as_u64().unwrap();
        assert_eq!(count(&concurrent, &prefix), numbered(reads), "{prefix}");
        let prefix = format!("under writes at {rate}/s: writer beside {query}");
        let writes = w["writer"]["count"].as_u64().unwrap();
        assert_eq!(count(&concurrent, &prefix), numbered(writes), "{prefix}");
    }
    let throughput_calls = count(&concurrent, "throughput: ");
    assert_eq!(throughput_calls.len(), 6 * 500);
    for (i, chunk) in throughput_calls.chunks(6).enumerate() {
        assert_eq!(
            chunk, [i as u64; 6],
            "each phase numbers its 500 calls from 0"
        );
    }
    let md = std::fs::read_to_string(out.path().join("fb.md")).unwrap();
    assert!(
        md.contains("| path | stage2 |") && md.contains("graph-bench"),
        "{md}"
    );
}

#[test]
fn peers_run_side_by_side_with_verified_answers() {
    /// The report's modes of the systems both runs measure.
    const PEER_RUN_MODES: [&str; 6] = [
        "stage2",
        "neo4j",
        "neo4j-apoc",
        "postgres",
        "kuzu",
        "falkordb",
    ];
    let host = TestHost::start();
    let neo4j = PeerServer::start(
        "neo4j",
        &[("NEO4J_HEAP", "1g"), ("NEO4J_PAGECACHE", "256m")],
    );
    let postgres = PeerServer::start("postgres", &[("PG_SHARED_BUFFERS", "128MB")]);
    let falkordb = PeerServer::start("falkordb", &[]);
    let kuzu = PeerServer::start("kuzu", &[("KUZU_BUFFER_POOL", "1g")]);
    let bulk_insert = falkordb.dir().join("falkordb/bulk-insert");
    let out = tempfile::tempdir().unwrap();
    let systems = ["--systems", "stdb,neo4j,neo4j-apoc,postgres,kuzu,falkordb"];
    let peers = [
        "--neo4j",
        neo4j.address(),
        "--postgres",
        postgres.address(),
        "--kuzu",
        kuzu.address(),
        "--falkordb",
        falkordb.address(),
        "--falkordb-bulk-insert",
        bulk_insert.to_str().unwrap(),
    ];
    let small = ["--dataset", "fb", "--runs", "4", "--bfs-runs", "1"];
    // The mixed workload briefly on every system that takes concurrent clients. 3 s, not 1: a
    // peer may stall its one writer for over a second (Neo4j once did on a busy machine), and
    // every operation must have a call inside the window.
    let mixed = [
        "--mixed-secs",
        "3",
        "--mixed-writers",
        "1",
        "--mixed-readers",
        "2",
        "--mixed-systems",
        "stdb,neo4j,postgres,kuzu,falkordb",
    ];
    let quiet = [
        "--writes",
        "0",
        "--roundtrip-calls",
        "0",
        "--propagation-writes",
        "0",
        "--throughput-inserts",
        "0",
        "--under-writes-secs",
        "0",
    ];
    run_bench(
        &host,
        out.path(),
        &[&systems[..], &peers, &small, &mixed, &quiet].concat(),
    );

    let report = report(out.path(), "fb.json");
    let rows: Vec<(String, String)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["e2e"]["count"].as_u64().unwrap() > 0, "{r}");
            (
                r["workload"].as_str().unwrap().to_string(),
                r["mode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for mode in PEER_RUN_MODES {
        for workload in ["neighbors", "bfs", "bfs-depth", "path"] {
            assert!(
                rows.contains(&(workload.to_string(), mode.to_string())),
                "no {workload} row for {mode}: {rows:?}"
            );
        }
    }
    // neo4j and neo4j-apoc share one store, loaded once.
    let loads: Vec<(&str, &Value)> = report["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["system"].as_str().unwrap(), &l["shared_by"]))
        .collect();
    let none = serde_json::json!([]);
    let apoc = serde_json::json!(["neo4j-apoc"]);
    assert_eq!(
        loads,
        [
            ("stdb", &none),
            ("neo4j", &apoc),
            ("postgres", &none),
            ("kuzu", &none),
            ("falkordb", &none)
        ]
    );
    // Six systems described, and Kuzu's skip of the mixed workload.
    assert_eq!(report["systems"].as_array().unwrap().len(), 7);
    // Every system but Kuzu ran the mixed workload, uniform and Zipf, every write accounted for
    // and read back (or the run fails), each operation timed.
    let mixed: Vec<(&str, &str)> = report["mixed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            assert!(m["acked_writes"].as_u64().unwrap() > 0, "{m}");
            assert_eq!(m["ops"].as_array().unwrap().len(), 5, "{m}");
            (m["system"].as_str().unwrap(), m["keys"].as_str().unwrap())
        })
        .collect();
    let runs: Vec<(&str, &str)> = ["stdb", "neo4j", "postgres", "falkordb"]
        .into_iter()
        .flat_map(|s| [(s, "uniform"), (s, "zipf s=1.1")])
        .collect();
    assert_eq!(mixed, runs);
    check_samples(out.path(), &report);
    let md = std::fs::read_to_string(out.path().join("fb.md")).unwrap();
    assert!(
        md.contains("kuzu skips the mixed workload") && md.contains("Mixed workload side by side"),
        "{md}"
    );
    assert!(
        md.contains(
            "| metric (p50) | stdb | neo4j | neo4j-apoc | postgres | kuzu | falkordb | stdb vs best peer |"
        ),
        "{md}"
    );

    // Ids at and above 2^63, which the peers' signed integers hold as their 64 bits, and labels
    // that are no plain names (each peer quotes them): every peer loads them and answers every
    // workload it has, weighted paths included.
    let high = tempfile::tempdir().unwrap();
    let ids: Vec<u64> = (0..24u64)
        .map(|i| match i % 3 {
            0 => u64::MAX - i,
            1 => (1 << 63) + i * 1_000_003,
            _ => i64::MAX as u64 - i,
        })
        .collect();
    let labels = [
        "",
        "knows well",
        "\"a,b\"",
        "\"say \"\"hi\"\"\"",
        "café",
        "MATCH",
    ];
    let mut csv = String::from("src,dst,label,weight\n");
    for (i, pair) in ids.windows(2).enumerate() {
        let label = labels[i % labels.len()];
        csv += &format!("{},{},{label},{}\n", pair[0], pair[1], 1 + i % 4);
        if i % 5 == 0 {
            let (src, dst) = (pair[1], ids[(i * 7) % ids.len()]);
            csv += &format!("{src},{dst},{},{}\n", labels[i % 3], 2 + i % 3);
        }
    }
    let file = high.path().join("high-ids.csv");
    std::fs::write(&file, csv).unwrap();
    let dataset = format!("file:{}", file.display());
    let systems = ["--systems", "stdb,neo4j,neo4j-apoc,postgres,kuzu,falkordb"];
    let workloads = ["--workloads", "neighbors,bfs,bfs-depth,path,wpath"];
    // Another database: this run's new identity does not own the first run's.
    let small = [
        "--dataset",
        dataset.as_str(),
        "--database",
        "high-ids",
        "--runs",
        "6",
        "--bfs-runs",
        "2",
    ];
    let quiet_all = [&quiet[..], &["--mixed-secs", "0"]].concat();
    run_bench(
        &host,
        high.path(),
        &[&systems[..], &peers, &workloads, &small, &quiet_all].concat(),
    );
    let high_report = crate::report(high.path(), "high-ids.json");
    let rows: Vec<(&str, &str)> = high_report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["workload"].as_str().unwrap(), r["mode"].as_str().unwrap()))
        .collect();
    let skips_wpath = |system| {
        high_report["systems"].as_array().unwrap().iter().any(|s| {
            s.as_str()
                .unwrap()
                .starts_with(&format!("{system} skips wpath"))
        })
    };
    for mode in PEER_RUN_MODES {
        for workload in ["neighbors", "bfs", "bfs-depth", "path", "wpath"] {
            // Plain Cypher has no weighted shortest path, nor FalkorDB before 4.20: each says
            // so in the report's systems.
            if workload != "wpath" || !skips_wpath(mode) {
                assert!(
                    rows.contains(&(workload, mode)),
                    "no {workload} row for {mode}: {rows:?}\n{}",
                    high_report["systems"]
                );
            }
        }
    }
}

/// The weighted and labelled workloads on a small labelled, weighted grid: every answer is
/// verified by graph-bench (a wrong one fails the run), each workload reports its runs, and
/// after the warm-up full BFS every stdb answer comes from the snapshot (a graph this size gets
/// one; a 12 × 12 grid does not).
///
/// One procedure instance: the warm-up builds the snapshot in the instance that runs it, and
/// 2.14 may start a second one whenever a call arrives before the previous call's instance is
/// back in its pool (it sends a result first, then returns the instance; on a loaded machine a
/// quick client wins that race), after which calls alternate between the two.
#[test]
fn weighted_and_label_filtered_workloads_run_verified_on_a_labelled_grid() {
    let host = TestHost::start_with(&["--procedure-instances", "1"]);
    let out = tempfile::tempdir().unwrap();
    let runs = 6;
    let stdout = run_bench(
        &host,
        out.path(),
        &[
            "--dataset",
            "grid:40",
            "--random-labels",
            "3",
            "--warm-bfs",
            "--workloads",
            "bfs-depth,bfs-labels,bfs-labels-all,wpath",
            "--systems",
            "stdb,native,stdb-stage1",
            "--runs",
            &runs.to_string(),
            "--writes",
            "0",
            "--roundtrip-calls",
            "0",
            "--propagation-writes",
            "0",
            "--throughput-inserts",
            "0",
            "--under-writes-secs",
            "0",
            "--mixed-secs",
            "0",
        ],
    );
    for system in ["stdb", "native"] {
        let warmed = format!("{system}: warm-up full BFS");
        assert!(stdout.contains(&warmed), "{stdout}");
    }
    // The native floor's graph is dropped once it is measured; SpacetimeDB's store is kept for
    // the workloads at the end of a run.
    assert!(
        stdout.contains("native: measured; its store released")
            && !stdout.contains("stdb: measured"),
        "{stdout}"
    );
    let report = report(out.path(), "grid-40.json");
    assert_eq!(report["environment"]["edges"], 2 * 40 * 39, "{report}");
    let results = report["results"].as_array().unwrap();
    let row = |system: &str, workload: &str| {
        results
            .iter()
            .find(|r| r["system"] == system && r["workload"] == workload)
    };
    for workload in ["bfs-depth", "bfs-labels", "bfs-labels-all", "wpath"] {
        let r = row("stdb", workload).unwrap_or_else(|| panic!("no stdb {workload}: {report}"));
        assert_eq!(r["e2e"]["count"], runs, "{r}");
        assert_eq!(r["from_snapshot"], runs, "{r}");
    }
    let r = row("native", "bfs-depth").unwrap_or_else(|| panic!("no native BFS: {report}"));
    assert_eq!(r["e2e"]["count"], runs, "{r}");
    // The full-scan baseline has no labels or weights: skipped, and the report says why.
    assert!(row("stdb-stage1", "bfs-depth").is_some(), "{report}");
    for workload in ["bfs-labels", "bfs-labels-all", "wpath"] {
        assert!(row("stdb-stage1", workload).is_none(), "{report}");
    }
    let md = std::fs::read_to_string(out.path().join("grid-40.md")).unwrap();
    assert!(
        md.contains("stdb-stage1 skips wpath: the full-scan baselines have no labels or weights"),
        "{md}"
    );
    check_samples(out.path(), &report);
}

/// graph-bench run with `args` against a server that is not there: its exit status and stderr.
fn bench_without_server(args: &[&str]) -> (bool, String) {
    let run = Command::new(env!("CARGO_BIN_EXE_graph-bench"))
        .args(["--server", "http://127.0.0.1:1"])
        .args(args)
        .output()
        .expect("running graph-bench");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    (run.status.success(), stderr)
}

#[test]
fn label_workloads_without_labels_are_refused() {
    let (ok, stderr) = bench_without_server(&["--dataset", "grid:4", "--workloads", "bfs-labels"]);
    assert!(
        !ok && stderr.contains("the bfs-labels workload needs --random-labels K"),
        "{stderr}"
    );
}

/// A dataset file that gives an edge two weights is refused as `graph load` refuses it: the
/// edge, its lines and both values named, before any server is called.
#[test]
fn a_dataset_giving_an_edge_two_weights_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.csv");
    std::fs::write(&file, "src,dst,label,weight\n1,2,,1\n2,3,,1\n1,2,,2.5\n").unwrap();
    let (ok, stderr) = bench_without_server(&["--dataset", &format!("file:{}", file.display())]);
    assert!(
        !ok && stderr.contains(
            "lines 2, 4 give the edge 1 → 2 two ways: line 2 no label and weight 1, line 4 \
                 no label and weight 2.5;"
        ),
        "{stderr}"
    );
}

/// The benchmarks sample `--runs` vertices: asking for more full BFS (or Stage-1) calls than
/// that is refused rather than quietly cut to `--runs`, but only when those benchmarks run.
#[test]
fn more_full_bfs_runs_than_sampled_vertices_are_refused() {
    let bench = |args: &[&str]| bench_without_server(&[&["--dataset", "grid:4"], args].concat());
    let (ok, stderr) = bench(&["--workloads", "bfs", "--runs", "3", "--bfs-runs", "10"]);
    assert!(
        !ok && stderr.contains("--bfs-runs 10 is more than --runs 3"),
        "{stderr}"
    );
    // Without the full BFS, the default --bfs-runs does not matter: the run gets as far as
    // the (absent) server.
    let (_, stderr) = bench(&[
        "--workloads",
        "neighbors",
        "--runs",
        "1",
        "--systems",
        "stdb",
    ]);
    assert!(!stderr.contains("is more than --runs"), "{stderr}");
}

/// A dataset at the edges of what the workloads assume: ids at the top of the u64 range (the
/// workloads that write must find fresh ids elsewhere than above them), a repeated row given
/// random labels (it keeps one), more random labels than edges (queries name only those some
/// edge has), and a peer whose integers are signed (PostgreSQL's bigint), which holds such ids
/// as their 64 bits: every system runs verified.
#[test]
fn a_dataset_at_the_top_of_the_id_space_runs_verified_beside_a_peer_of_signed_ids() {
    let host = TestHost::start();
    let postgres = PeerServer::start("postgres", &[("PG_SHARED_BUFFERS", "128MB")]);
    let out = tempfile::tempdir().unwrap();
    let top = u64::MAX;
    let rows = [
        (top, 999_999),
        (999_999, top - 1),
        (top - 1, top),
        (999_999, top - 1),
        (5, 5),
        (5, 999_999),
    ];
    let file = out.path().join("top.txt");
    let text: String = rows.iter().map(|(s, d)| format!("{s} {d}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let dataset = format!("file:{}", file.display());
    let stdout = run_bench(
        &host,
        &out.path().join("report"),
        &[
            "--dataset",
            &dataset,
            "--systems",
            "stdb,native,postgres",
            "--postgres",
            postgres.address(),
            "--workloads",
            "neighbors,bfs,path,bfs-labels,bfs-labels-all",
            "--random-labels",
            "64",
            "--runs",
            "4",
            "--bfs-runs",
            "2",
            "--writes",
            "2",
            "--stage1-writes",
            "0",
            "--under-writes-secs",
            "0.3",
            "--write-rates",
            "50",
            "--propagation-writes",
            "2",
            "--throughput-inserts",
            "100",
            "--connections",
            "2",
            "--in-flight",
            "1",
            "--roundtrip-calls",
            "5",
            "--mixed-secs",
            "0",
        ],
    );
    assert!(!stdout.contains("could not load"), "{stdout}");
    let report = report(&out.path().join("report"), "top.json");
    assert_eq!(
        report["environment"]["edges"], 5,
        "the repeated row counts once"
    );
    let results = report["results"].as_array().unwrap();
    for system in ["stdb", "postgres"] {
        for workload in ["neighbors", "bfs", "path", "bfs-labels", "bfs-labels-all"] {
            assert!(
                results
                    .iter()
                    .any(|r| r["system"] == system && r["workload"] == workload),
                "{system} {workload}: {report}"
            );
        }
    }
    assert!(!report["under_writes"].as_array().unwrap().is_empty());
    assert!(!report["throughput"].as_array().unwrap().is_empty());
}

/// The ingestion matrix end to end: every cell a fresh durable host, each load's edge count
/// checked by graph-ingest; bulk cells finish with `finish_bulk_load` calls, plain ones make
/// none.
#[test]
fn the_ingestion_matrix_loads_every_cell() {
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_graph-ingest"))
        .arg("--host-bin")
        .arg(host_binary())
        .arg("--publish")
        .arg(module_wasm_path())
        .args(["--dataset", "fb", "--sizes", "300,3000", "--batches", "500"])
        .args([
            "--transports",
            "ws,http",
            "--loads",
            "bulk,plain",
            "--port",
            "3390",
        ])
        .arg("--out")
        .arg(out.path())
        .output()
        .expect("running graph-ingest");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "graph-ingest failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let jsonl = std::fs::read_to_string(out.path().join("ingest.jsonl")).unwrap();
    let cells: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(cells.len(), 8, "{jsonl}");
    for cell in &cells {
        let edges = cell["edges"].as_u64().unwrap();
        assert!(edges == 300 || edges == 3000, "{cell}");
        assert_eq!(cell["calls"].as_u64(), Some(edges.div_ceil(500)), "{cell}");
        let finishing = cell["finish_calls"].as_u64().unwrap();
        match cell["bulk"].as_bool() {
            Some(true) => assert!(finishing > 0, "{cell}"),
            _ => assert_eq!(finishing, 0, "{cell}"),
        }
    }
    let bulk = cells.iter().filter(|c| c["bulk"] == true).count();
    assert_eq!(bulk, 4);
    for file in ["ingest.csv", "ingest.md", "ingest.png"] {
        assert!(out.path().join(file).exists(), "{file}");
    }
}

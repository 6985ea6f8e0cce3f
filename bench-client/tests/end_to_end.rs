//! graph-bench end to end against the real embedded host: load, verified workloads in every
//! mode, contention, and the report files. The binary exits non-zero on any wrong answer.

use graph_testkit::{TestHost, module_wasm_path};
use serde_json::Value;
use std::process::Command;

#[test]
fn small_benchmark_runs_verified_and_reports() {
    let host = TestHost::start();
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_graph-bench"))
        .args(["--server", host.url(), "--publish"])
        .arg(module_wasm_path())
        .args([
            "--dataset",
            "fb",
            "--runs",
            "5",
            "--bfs-runs",
            "2",
            "--stage1-runs",
            "2",
        ])
        .args([
            "--writes",
            "5",
            "--stage1-writes",
            "2",
            "--roundtrip-calls",
            "20",
            "--out",
        ])
        .arg(out.path())
        .output()
        .expect("running graph-bench");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "graph-bench failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("verified: the server holds 4039 vertices and 88234 edges"),
        "{stdout}"
    );

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("fb.json")).unwrap())
            .unwrap();
    let results = report["results"].as_array().unwrap();
    // 2 round-trip rows + 4 workloads × 3 modes, minus neighbor count in the reducer mode.
    assert_eq!(results.len(), 2 + 4 * 3 - 1, "{report}");
    for r in results {
        assert!(r["e2e"]["count"].as_u64().unwrap() > 0, "{r}");
        if r["mode"] == "stage2" {
            assert!(
                r["max_hold"]["count"].as_u64().unwrap() > 0,
                "stage2 reports hold times: {r}"
            );
        }
    }
    assert_eq!(report["contention"].as_array().unwrap().len(), 2);
    assert!(report["load"]["edges_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(report["environment"]["edges"], 88234);
    let md = std::fs::read_to_string(out.path().join("fb.md")).unwrap();
    assert!(
        md.contains("| path | stage2 |") && md.contains("graph-bench"),
        "{md}"
    );
}

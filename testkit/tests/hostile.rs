//! Hostile input at every route: seeded random requests (wrong methods, paths, content types
//! and tokens; malformed, truncated, deeply nested, oversize and out-of-range bodies; unknown
//! databases and functions) and random WebSocket frames, against the real host and the graph
//! module. The host must never answer 5xx to them (a reducer that refuses a well-formed call
//! answers SpacetimeDB's 530 with the module's message, which is counted apart), never panic,
//! keep serving, and change nothing: the graph and its bookkeeping are the same afterwards.
//!
//! `GRAPH_FUZZ_REQUESTS` sets the number of HTTP requests (default 20,000 in the suite; the
//! README's figure is from a run with 100,000).

use graph_client::graph::{GraphDb, TransportKind};
use graph_testkit::TestHost;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::time::Duration;
use tungstenite::Message;
use tungstenite::client::IntoClientRequest;

const FUNCTIONS: [&str; 22] = [
    "add_edges",
    "add_labelled_edges",
    "add_vertices",
    "remove_edges",
    "remove_vertex",
    "clear_graph",
    "grant_writer",
    "revoke_writer",
    "graph_info",
    "neighbor_count",
    "neighbors",
    "bfs",
    "dfs",
    "shortest_path",
    "weighted_shortest_path",
    "check",
    "neighbor_count_full_scan",
    "bfs_full_scan",
    "noop_procedure",
    "noop_reducer",
    "init",
    "no_such_function",
];

/// A JSON value that is plausible as an argument somewhere, or hostile.
fn json_value(rng: &mut ChaCha8Rng, depth: u32) -> String {
    match rng.gen_range(0..14) {
        0 => rng.gen_range(0..1_000u64).to_string(),
        1 => "-1".into(),
        2 => "18446744073709551616".into(), // u64::MAX + 1
        3 => "1e400".into(),
        4 => "\"both\"".into(),
        5 => "\"sideways\"".into(),
        6 => "null".into(),
        7 => "{\"some\": 3}".into(),
        8 => "{\"none\": {}}".into(),
        9 => "true".into(),
        10 if depth < 3 => {
            let n = rng.gen_range(0..5);
            let items: Vec<String> = (0..n).map(|_| json_value(rng, depth + 1)).collect();
            format!("[{}]", items.join(","))
        }
        11 => "\"\\ud800\"".into(), // A lone surrogate.
        12 => format!("\"0x{}\"", "ab".repeat(rng.gen_range(0..40))),
        _ => "[]".into(),
    }
}

fn body(rng: &mut ChaCha8Rng) -> Vec<u8> {
    match rng.gen_range(0..10) {
        0 => Vec::new(),
        1 => (0..rng.gen_range(1..200)).map(|_| rng.r#gen()).collect(), // Random bytes.
        2 => format!("[{}", json_value(rng, 0)).into_bytes(),           // Truncated.
        3 => {
            let depth = rng.gen_range(100..20_000);
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()
        }
        4 => {
            // An array of ids large enough to pass 2 MiB.
            let ids = vec!["123456789012"; 200_000].join(",");
            format!("[[{ids}],[{ids}]]").into_bytes()
        }
        5 => vec![0xff, 0xfe, b'[', b']'],
        _ => {
            let n = rng.gen_range(0..8);
            let args: Vec<String> = (0..n).map(|_| json_value(rng, 0)).collect();
            format!("[{}]", args.join(",")).into_bytes()
        }
    }
}

fn path(rng: &mut ChaCha8Rng) -> String {
    let db = [
        "graph",
        "graph",
        "graph",
        "nosuchdb",
        "%ZZ",
        "c200",
        &"x".repeat(300),
    ]
    .choose(rng)
    .unwrap()
    .to_string();
    let function = FUNCTIONS.choose(rng).unwrap();
    match rng.gen_range(0..12) {
        0 => "/v1/ping".into(),
        1 => "/v1/identity".into(),
        2 => "/v1/database".into(),
        3 => format!("/v1/database/{db}"),
        4 => format!("/v1/database/{db}/sql"),
        5 => format!("/v1/database/{db}/logs?num_lines={}", json_value(rng, 3)),
        6 => format!("/v1/database/{db}/schema?version={}", rng.gen_range(0..12)),
        7 => format!("/v1/database/{db}/subscribe"),
        8 => format!("/v1/database/{db}/call/{function}/extra"),
        9 => format!("/v2/{db}"),
        _ => format!("/v1/database/{db}/call/{function}"),
    }
}

fn sql(rng: &mut ChaCha8Rng) -> Vec<u8> {
    [
        "SELECT * FROM edge WHERE fwd = 4294967298",
        "SELECT * FROM graph_writer",
        "SELECT * FROM change_log",
        "DELETE FROM edge",
        "INSERT INTO edge (fwd, rev, label, weight) VALUES (1, 2, 0, 1.0)",
        "UPDATE vertex SET out_degree = 7",
        "SELECT * FROM",
        "SELECT COUNT(*) AS n FROM edge WHERE fwd = 18446744073709551616",
        "DROP TABLE edge",
        "\u{0}\u{1}",
    ]
    .choose(rng)
    .unwrap()
    .as_bytes()
    .to_vec()
}

#[test]
fn hostile_requests_get_clear_4xx_and_change_nothing() {
    let requests: usize = std::env::var("GRAPH_FUZZ_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let host = TestHost::start();
    let owner = host.publish_module("graph");
    let db = GraphDb::open(owner.clone(), "graph", TransportKind::Http);
    db.add_edges(&[1, 2, 3, 3], &[2, 3, 1, 3]).unwrap();
    let before = db.info().unwrap();
    let (stranger, _) = host.client();
    let tokens: Vec<Option<String>> = vec![
        None,
        Some(format!("Bearer {}", stranger.token)),
        Some("Bearer not-a-jwt".into()),
        Some("Bearer eyJhbGciOiJub25lIn0.e30.".into()),
        Some(format!("Basic {}", stranger.token)),
        Some("Bearer ".into()),
    ];
    let content_types = [
        None,
        Some("application/json"),
        Some("text/plain"),
        Some("application/wasm"),
        Some("multipart/form-data; boundary=x"),
        Some("application/json; charset=latin1"),
    ];
    let methods = [
        reqwest::Method::GET,
        reqwest::Method::POST,
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
        reqwest::Method::PATCH,
    ];
    let http = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0xF00D);
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    for i in 0..requests {
        let path = path(&mut rng);
        let method = methods.choose(&mut rng).unwrap().clone();
        let mut request = http.request(method.clone(), format!("{}{path}", host.url()));
        if let Some(token) = tokens.choose(&mut rng).unwrap() {
            request = request.header("Authorization", token);
        }
        if let Some(ct) = content_types.choose(&mut rng).unwrap() {
            request = request.header("Content-Type", *ct);
        }
        let payload = if path.ends_with("/sql") && rng.gen_bool(0.7) {
            sql(&mut rng)
        } else {
            body(&mut rng)
        };
        let size = payload.len();
        let response = match request.body(payload).send() {
            Ok(response) => response,
            // The host may answer (405, 413, 404) and close before reading the whole body, or
            // close a pooled connection as the request goes out; the client then fails to send.
            // The host must still be serving; the request is counted as status 0.
            Err(e) => {
                host.anonymous().ping().unwrap_or_else(|p| {
                    panic!("request {i} ({method} {path}, {size} bytes): {e:?}; then ping: {p}")
                });
                let closed = statuses.entry(0).or_default();
                if *closed < 3 {
                    println!("request {i} ({method} {path}, {size} bytes) not sent whole: {e:?}");
                }
                *closed += 1;
                continue;
            }
        };
        let status = response.status().as_u16();
        let text = response.text().unwrap_or_default();
        *statuses.entry(status).or_default() += 1;
        // 530: a well-formed call the module refused (its own message); anything else 5xx fails.
        let refused_by_module = status == 530
            && (text.contains("may not")
                || text.contains("unknown vertex")
                || text.contains("pair up"));
        assert!(
            status < 500 || refused_by_module,
            "request {i}: {method} {path} answered {status}: {text}"
        );
    }

    // Random frames on real WebSocket connections.
    let ws_url = host.url().replacen("http://", "ws://", 1);
    let mut frames = 0;
    for i in 0..200 {
        let mut request = format!("{ws_url}/v1/database/graph/subscribe")
            .into_client_request()
            .unwrap();
        request.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            "v2.bsatn.spacetimedb".parse().unwrap(),
        );
        let Ok((mut socket, _)) = tungstenite::connect(request) else {
            panic!("WebSocket connection {i} refused");
        };
        for _ in 0..rng.gen_range(1..5) {
            let frame = match rng.gen_range(0..4) {
                0 => Message::Text(String::from_utf8_lossy(&body(&mut rng)).into_owned().into()),
                1 => Message::Binary(body(&mut rng).into()),
                // A message tag the protocol knows, with a random payload.
                2 => {
                    let mut bytes = vec![rng.gen_range(0..8u8)];
                    bytes.extend((0..rng.gen_range(0..64)).map(|_| rng.r#gen::<u8>()));
                    Message::Binary(bytes.into())
                }
                _ => Message::Binary(vec![0u8; rng.gen_range(0..4)].into()),
            };
            frames += 1;
            if socket.send(frame).is_err() {
                break;
            }
        }
        let _ = socket.close(None);
        // Drain until the server closes; it must not hang.
        while socket.read().is_ok() {}
    }

    // Still serving, nothing written, bookkeeping consistent, no panic logged.
    host.anonymous()
        .ping()
        .expect("the host still answers /v1/ping");
    assert_eq!(
        db.info().unwrap(),
        before,
        "a hostile request changed the graph"
    );
    let report = db.check().unwrap();
    assert_eq!(report.problems, 0, "{:?}", report.listed);
    let log = host.log();
    assert!(!log.contains("panicked"), "the host panicked:\n{log}");
    println!(
        "{requests} HTTP requests, statuses {statuses:?}; {frames} WebSocket frames on 200 connections"
    );
}

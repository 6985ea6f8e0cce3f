//! The graph module from a SpacetimeDB application: the generated bindings on
//! `spacetimedb-sdk`, one WebSocket, a live subscription, typed calls.
//!
//! Start a server with the module published (`scripts/run --serve`, or `spacetime start` and
//! `spacetime publish -s local -p module graph`), then, with the owner's token (`scripts/run
//! --serve` prints it; only the owner and identities it grants may change the graph):
//!
//! ```sh
//! GRAPH_TOKEN=<owner token> cargo run --release -p graph-client --example live_sdk -- \
//!     http://127.0.0.1:3000 graph
//! ```
//!
//! It subscribes to the graph's counts and to vertex 1's out-edges, adds an edge, sees the
//! change pushed back, and asks for a shortest path.

use graph_client::module_bindings::{
    DbConnection, EdgeTableAccess, GraphMetaTableAccess, PathStatus, add_edges, shortest_path,
};
use spacetimedb_sdk::{DbContext, Event, Table, TableWithPrimaryKey};
use std::sync::mpsc;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:3000".into());
    let database = args.next().unwrap_or_else(|| "graph".into());

    let conn = DbConnection::builder()
        .with_uri(url)
        .with_database_name(database)
        // Without a token the server makes a new identity, which may read but not write. (A
        // token read from a file ends with a newline, which no token holds.)
        .with_token(
            std::env::var("GRAPH_TOKEN")
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
        )
        .on_connect(|_, identity, _token| println!("connected as {identity}"))
        .build()?;
    conn.run_threaded();

    // Row callbacks run on the SDK's thread whenever the subscribed rows change.
    let (seen, edge_arrived) = mpsc::channel();
    conn.db
        .graph_meta()
        .on_update(|_, _old, new| println!("graph version {}: {} edges", new.version, new.edges));
    conn.db.edge().on_insert(move |ctx, edge| {
        // The rows the subscription starts with arrive as inserts too, marked SubscribeApplied;
        // those of a write carry its transaction's event.
        if matches!(ctx.event, Event::SubscribeApplied) {
            return;
        }
        println!("new edge {} → {}", edge.src(), edge.dst());
        let _ = seen.send(edge.dst());
    });

    let (ready, applied) = mpsc::channel();
    conn.subscription_builder()
        .on_applied(move |ctx| {
            println!(
                "subscribed: vertex 1 has {} out-edges",
                ctx.db.edge().count()
            );
            let _ = ready.send(());
        })
        .on_error(|_, e| eprintln!("subscription failed: {e}"))
        // Vertex 1's out-edges: the keys `1 << 32 | dst` (see `graph_client::edge_rows`).
        .subscribe([
            "SELECT * FROM graph_meta",
            "SELECT * FROM edge WHERE fwd >= 4294967296 AND fwd <= 8589934591",
        ]);
    applied.recv_timeout(Duration::from_secs(10))?;

    // A reducer call: 1 → 2 → 3, plus an edge from 1 to a vertex it has no edge to yet (one
    // past its largest neighbor in the client's cache, which holds vertex 1's out-edges), so
    // that each run adds one the subscription has not seen.
    let fresh = conn
        .db
        .edge()
        .iter()
        .map(|e| e.dst())
        .max()
        .unwrap_or(0)
        .max(999)
        + 1;
    let (sent, outcome) = mpsc::channel();
    conn.reducers
        .add_edges_then(vec![1, 2, 1], vec![2, 3, fresh], move |_, outcome| {
            let _ = sent.send(outcome.map_err(|e| e.to_string()).and_then(|r| r));
        })?;
    outcome
        .recv_timeout(Duration::from_secs(10))?
        .map_err(|e| format!("add_edges failed: {e}"))?;
    // The write committed: its new edge 1 → fresh is pushed to the subscription (1 → 2 only if
    // it was new).
    while edge_arrived.recv_timeout(Duration::from_secs(10))? != fresh {}
    println!("the subscription saw 1 → {fresh}");

    // A procedure call: the typed result arrives in the callback.
    let (answer, path) = mpsc::channel();
    conn.procedures.shortest_path_then(
        1,
        3,
        "out".into(),
        vec![],
        vec![],
        None,
        0,
        0,
        move |_, result| {
            let _ = answer.send(result);
        },
    );
    match path.recv_timeout(Duration::from_secs(10))?? {
        Ok(p) if p.status == PathStatus::Found => println!("1 → 3: {:?}", p.path),
        Ok(p) => println!("no path: {:?}", p.status),
        Err(e) => println!("the module refused: {e:?}"),
    }
    conn.disconnect()?;
    Ok(())
}

//! Calling the graph module from your own Rust program with typed results.
//!
//! Start a server with the module published (`scripts/run --serve`, or `spacetime start` and
//! `spacetime publish -s local -p module graph`), then, with the owner's token (`scripts/run
//! --serve` prints it; only the owner and identities it grants may change the graph):
//!
//! ```sh
//! GRAPH_TOKEN=<owner token> cargo run --release -p graph-client --example shortest_path -- \
//!     http://127.0.0.1:3000 graph
//! ```
//!
//! It loads a small graph, asks for a shortest path and a BFS, and prints the answers with the
//! module's transaction stats.

use graph_client::edgelist::EdgeList;
use graph_client::graph::{ClientError, Direction, GraphDb, PathStatus, TxOptions};
use graph_client::server::Server;
use graph_client::token_store;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:3000".into());
    let database = args.next().unwrap_or_else(|| "graph".into());

    // One identity for the whole program: every call carries its token. Without one, the
    // identity the `graph` CLI remembers for this server (a new one if it has none), which may
    // write only if it published the module or was granted the right.
    let server = Server::new(&url);
    let token = match std::env::var("GRAPH_TOKEN") {
        Ok(token) if !token.trim().is_empty() => token,
        _ => token_store::token_for(&server)?,
    };
    let db = GraphDb::new(server.with_token(token), database);

    // A ring of 1,000 vertices with chords every 10: loading is idempotent, so rerunning is fine.
    let mut edges = EdgeList::new();
    for v in 0..1_000u64 {
        edges.push(v, (v + 1) % 1_000);
        if v % 10 == 0 {
            edges.push(v, (v + 100) % 1_000);
        }
    }
    match db.load(&edges, |_| {}) {
        Err(e) if e.source.is_write_refused() => {
            eprintln!("{}\n(run it with the owner's GRAPH_TOKEN)", e.source);
            std::process::exit(1);
        }
        loaded => loaded.map_err(|e| e.source)?,
    };
    let info = db.info()?;
    println!(
        "graph: {} vertices, {} edges (version {})",
        info.vertices, info.edges, info.version
    );

    let answer = db.shortest_path(0, 555, Direction::Out, None, TxOptions::default())?;
    let path = answer.value;
    match path.status {
        PathStatus::Found => println!("0 → 555 in {} hops: {:?}", path.path.len() - 1, path.path),
        other => println!("no path: {other:?}"),
    }
    println!(
        "  {} transaction(s), longest held {} µs, {} edges scanned",
        path.stats.transactions, path.stats.max_hold_us, path.stats.edges_scanned
    );

    let bfs = db
        .bfs(0, Direction::Out, Some(3), 10, TxOptions::default())?
        .value;
    println!(
        "within 3 hops of 0: {} vertices, per level {:?}",
        bfs.visited, bfs.levels
    );

    // Typed errors: an unknown vertex is a GraphError, not a panic or a string to parse.
    match db.neighbors(u64::MAX, Direction::Out, 10) {
        Err(ClientError::Graph(e)) => println!("as expected: {e}"),
        other => println!("unexpected: {other:?}"),
    }
    Ok(())
}

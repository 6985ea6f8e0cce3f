//! Live changes to the graph, pushed by the server over the WebSocket: a subscription to the
//! `graph_meta` row and, optionally, to one vertex's out-edges (a key range of `edge` and of
//! `wide_edge`, see [`crate::edge_rows`]) with the edge labels' names, delivered as [`Change`]s
//! on a channel.

use crate::edge_rows::out_edge_queries;
use crate::graph::{ClientError, GraphDb, GraphMeta};
use crate::module_bindings::{
    EdgeLabelTableAccess, EdgeTableAccess, GraphMetaTableAccess, WideEdgeTableAccess,
};
use crate::ws::{DbConnectionRef, Drive};
use spacetimedb_sdk::{DbContext as _, Event, Table as _, TableWithPrimaryKey as _};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// An edge as a watcher sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchedEdge {
    pub src: u64,
    pub dst: u64,
    /// The label's name; `None`: unlabelled.
    pub label: Option<String>,
    pub weight: f32,
}

/// One thing that happened to the watched rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The subscription is live: the rows it covers right now. Every later change follows it.
    Subscribed {
        meta: Option<GraphMeta>,
        /// The watched vertex's out-edges, sorted by target (empty without a vertex).
        edges: Vec<WatchedEdge>,
    },
    /// The graph's counts or version changed.
    Meta(GraphMeta),
    /// An edge was added. (The reducers never change an edge in place: a new label or weight
    /// is a delete and an insert. An owner's SQL `UPDATE`, which goes around them, is reported
    /// the same way: the old row deleted, the new one inserted.)
    EdgeInserted(WatchedEdge),
    EdgeDeleted(WatchedEdge),
    /// The connection closed (a host restart, say): [`watch`] again to carry on from the
    /// state then, which a new [`Change::Subscribed`] gives.
    Disconnected,
    /// The server refused the subscription.
    Ended(String),
}

/// The queries [`watch`] subscribes to.
pub fn queries(vertex: Option<u64>) -> Vec<String> {
    let mut queries = vec!["SELECT * FROM graph_meta".to_string()];
    if let Some(v) = vertex {
        queries.extend(out_edge_queries(v));
        // Labels are few, never renamed and never reused; a new one arrives in the same update
        // as its first edge, and the SDK applies a whole update before any callback runs.
        queries.push("SELECT * FROM edge_label".to_string());
    }
    queries
}

/// The name of edge label `label` in the client cache `db` (`None`: no label; `#id` for an id
/// the cache does not hold, which the reducers never leave behind).
fn label_name(db: &crate::module_bindings::RemoteTables, label: u32) -> Option<String> {
    match label {
        0 => None,
        id => Some(
            db.edge_label()
                .id()
                .find(&id)
                .map_or_else(|| format!("#{id}"), |l| l.name),
        ),
    }
}

/// A live subscription: its changes, in the order the server sent them.
pub struct Watch {
    changes: mpsc::Receiver<Change>,
    conn: DbConnectionRef,
    ended: bool,
}

impl Watch {
    /// The next change, waiting at most `timeout` (`None`: nothing arrived in time). After the
    /// connection closes, the changes that had arrived, then one [`Change::Disconnected`], then
    /// `None`.
    pub fn next(&mut self, timeout: Duration) -> Option<Change> {
        let deadline = Instant::now() + timeout;
        loop {
            let wait = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50));
            match self.changes.recv_timeout(wait) {
                Ok(change) => {
                    self.ended |= matches!(change, Change::Ended(_) | Change::Disconnected);
                    return Some(change);
                }
                Err(_) if !self.ended && !self.conn.is_up() => {
                    self.ended = true;
                    return Some(Change::Disconnected);
                }
                Err(_) if Instant::now() >= deadline => return None,
                Err(_) => {}
            }
        }
    }
}

/// Subscribes, on `db`'s WebSocket connection, to the graph's meta row and to `vertex`'s
/// out-edges; the changes arrive through the returned [`Watch`]. Fails on an HTTP-only `db`,
/// and on a connection driven by its callers ([`Drive::Caller`]), which reads what the server
/// pushes only while a call waits.
pub fn watch(db: &GraphDb, vertex: Option<u64>) -> Result<Watch, ClientError> {
    if db.drive() == Some(Drive::Caller) {
        return Err(ClientError::Internal {
            function: "watch".into(),
            message: "a connection driven by its callers (Drive::Caller) reads the server's \
                      messages only while a call waits, so a subscription on it would see \
                      nothing: watch on a GraphDb with Drive::Background (the default)"
                .into(),
        });
    }
    let conn = db.ws_connection().ok_or_else(|| ClientError::Internal {
        function: "watch".into(),
        message: "subscriptions need the WebSocket transport".into(),
    })??;
    let (tx, rx) = mpsc::channel();
    // Rows that arrive with the subscription itself are reported once, as `Subscribed`.
    let live = |event: &Event<_>| !matches!(event, Event::SubscribeApplied);

    let sent = tx.clone();
    conn.db.graph_meta().on_insert(move |ctx, row| {
        if live(&ctx.event) {
            let _ = sent.send(Change::Meta(row.clone()));
        }
    });
    let sent = tx.clone();
    conn.db.graph_meta().on_update(move |_, _, row| {
        let _ = sent.send(Change::Meta(row.clone()));
    });
    let watched = move |src: u64| vertex == Some(src);
    // The same callbacks for both edge tables.
    macro_rules! watched_edge {
        ($db:expr, $e:expr) => {
            WatchedEdge {
                src: $e.src(),
                dst: $e.dst(),
                label: label_name($db, $e.label),
                weight: $e.weight,
            }
        };
    }
    macro_rules! on_edges {
        ($table:ident) => {
            let sent = tx.clone();
            conn.db.$table().on_insert(move |ctx, e| {
                if live(&ctx.event) && watched(e.src()) {
                    let _ = sent.send(Change::EdgeInserted(watched_edge!(&ctx.db, e)));
                }
            });
            let sent = tx.clone();
            conn.db.$table().on_delete(move |ctx, e| {
                if !matches!(ctx.event, Event::UnsubscribeApplied) && watched(e.src()) {
                    let _ = sent.send(Change::EdgeDeleted(watched_edge!(&ctx.db, e)));
                }
            });
            let sent = tx.clone();
            conn.db.$table().on_update(move |ctx, old, new| {
                if watched(old.src()) {
                    let _ = sent.send(Change::EdgeDeleted(watched_edge!(&ctx.db, old)));
                    let _ = sent.send(Change::EdgeInserted(watched_edge!(&ctx.db, new)));
                }
            });
        };
    }
    on_edges!(edge);
    on_edges!(wide_edge);

    let (applied, failed) = (tx.clone(), tx);
    conn.subscription_builder()
        .on_applied(move |ctx| {
            let meta = ctx.db.graph_meta().id().find(&0);
            let (narrow, wide) = (ctx.db.edge(), ctx.db.wide_edge());
            let narrow = narrow.iter().map(|e| watched_edge!(&ctx.db, e));
            let wide = wide.iter().map(|e| watched_edge!(&ctx.db, e));
            let mut edges: Vec<WatchedEdge> =
                narrow.chain(wide).filter(|e| watched(e.src)).collect();
            edges.sort_unstable_by_key(|e| e.dst);
            let _ = applied.send(Change::Subscribed { meta, edges });
        })
        .on_error(move |_, e| {
            let _ = failed.send(Change::Ended(format!("subscription failed: {e}")));
        })
        .subscribe(queries(vertex));
    Ok(Watch {
        changes: rx,
        conn,
        ended: false,
    })
}

//! Live changes to the graph, pushed by the server over the WebSocket: a subscription to the
//! `graph_meta` row and, optionally, to one vertex's out-edges (a key range of `edge` and of
//! `wide_edge`, see [`crate::edge_rows`]) with the edge labels' names, delivered as [`Change`]s
//! on a channel.

use crate::edge_rows::out_edge_queries;
use crate::graph::{ClientError, GraphDb, GraphMeta};
use crate::module_bindings::{
    DbConnection, Edge, EdgeLabelTableAccess, EdgeTableAccess, GraphMetaTableAccess, RemoteTables,
    SubscriptionHandle, WideEdge, WideEdgeTableAccess,
};
use crate::ws::{DbConnectionRef, Drive};
use spacetimedb_sdk::{
    DbContext as _, Event, SubscriptionHandle as _, Table as _, TableWithPrimaryKey as _,
};
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
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
fn label_name(db: &RemoteTables, label: u32) -> Option<String> {
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

/// The watched vertex's wide out-edges already reported, by target.
type WideEdges = BTreeMap<u64, WideEdge>;

/// The watched vertex's wide out-edges in the client cache `db`.
fn wide_out_edges(db: &RemoteTables, watched: impl Fn(u64) -> bool) -> WideEdges {
    let table = db.wide_edge();
    let rows = table.iter().filter(|e| watched(e.src()));
    rows.map(|e| (e.dst(), e)).collect()
}

/// Reports the wide out-edges of the watched vertex that the cache `db` holds and `known` does
/// not, or holds otherwise, as changes (deleted, then inserted), and takes them into `known`.
fn report_wide_changes(
    db: &RemoteTables,
    known: &Mutex<WideEdges>,
    sent: &mpsc::Sender<Change>,
    watched: impl Fn(u64) -> bool,
) {
    let now = wide_out_edges(db, watched);
    let mut known = known.lock().unwrap();
    for (dst, e) in known.iter() {
        if now.get(dst) != Some(e) {
            let _ = sent.send(Change::EdgeDeleted(wide_edge(db, e)));
        }
    }
    for (dst, e) in &now {
        if known.get(dst) != Some(e) {
            let _ = sent.send(Change::EdgeInserted(wide_edge(db, e)));
        }
    }
    *known = now;
}

/// Reports one wide row's change (`old` deleted, `new` inserted) unless `known` says it was
/// reported already, and takes it into `known`.
fn report_wide_row(
    db: &RemoteTables,
    known: &Mutex<WideEdges>,
    sent: &mpsc::Sender<Change>,
    old: Option<&WideEdge>,
    new: Option<&WideEdge>,
) {
    let mut known = known.lock().unwrap();
    if let Some(old) = old
        && known.get(&old.dst()) == Some(old)
    {
        known.remove(&old.dst());
        let _ = sent.send(Change::EdgeDeleted(wide_edge(db, old)));
    }
    if let Some(new) = new
        && known.get(&new.dst()) != Some(new)
    {
        known.insert(new.dst(), new.clone());
        let _ = sent.send(Change::EdgeInserted(wide_edge(db, new)));
    }
}

/// A narrow edge row as a watcher sees it, its label named from the cache `db`.
fn narrow_edge(db: &RemoteTables, e: &Edge) -> WatchedEdge {
    watched_edge(db, e.src(), e.dst(), e.label, e.weight)
}

/// A wide edge row as a watcher sees it.
fn wide_edge(db: &RemoteTables, e: &WideEdge) -> WatchedEdge {
    watched_edge(db, e.src(), e.dst(), e.label, e.weight)
}

fn watched_edge(db: &RemoteTables, src: u64, dst: u64, label: u32, weight: f32) -> WatchedEdge {
    WatchedEdge {
        src,
        dst,
        label: label_name(db, label),
        weight,
    }
}

/// Takes back one row callback that [`watch`] registered.
type Unregister = Box<dyn FnOnce(&DbConnection) + Send>;

/// A live subscription: its changes, in the order the server sent them. Dropping it ends the
/// subscription and takes its callbacks off the connection, which other calls keep using.
pub struct Watch {
    changes: mpsc::Receiver<Change>,
    conn: DbConnectionRef,
    ended: bool,
    subscription: Option<SubscriptionHandle>,
    callbacks: Vec<Unregister>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        // Fails only if the subscription has ended already (refused, or its connection closed).
        if let Some(subscription) = self.subscription.take() {
            let _ = subscription.unsubscribe();
        }
        for unregister in self.callbacks.drain(..) {
            unregister(&self.conn);
        }
    }
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

    let watched = move |src: u64| vertex == Some(src);
    // The SDK runs a transaction's row callbacks table by table in name order: `edge`, then
    // `graph_meta`, then `wide_edge`. So that the meta row (the version) comes after all of its
    // transaction's edges, the meta callbacks first report the wide edges that changed, from
    // the cache (which holds the whole update by then, and only the watched vertex's wide
    // out-edges: one pass over them per version); the wide row callbacks then find nothing new.
    let wide_known = Arc::new(Mutex::new(WideEdges::new()));
    let mut callbacks: Vec<Unregister> = Vec::new();
    let (sent, known) = (tx.clone(), wide_known.clone());
    let id = conn.db.graph_meta().on_insert(move |ctx, row| {
        if live(&ctx.event) {
            report_wide_changes(&ctx.db, &known, &sent, watched);
            let _ = sent.send(Change::Meta(row.clone()));
        }
    });
    callbacks.push(Box::new(move |c| c.db.graph_meta().remove_on_insert(id)));
    let (sent, known) = (tx.clone(), wide_known.clone());
    let id = conn.db.graph_meta().on_update(move |ctx, _, row| {
        report_wide_changes(&ctx.db, &known, &sent, watched);
        let _ = sent.send(Change::Meta(row.clone()));
    });
    callbacks.push(Box::new(move |c| c.db.graph_meta().remove_on_update(id)));
    // Narrow edges: reported as their callbacks run (before the meta row's).
    let sent = tx.clone();
    let id = conn.db.edge().on_insert(move |ctx, e| {
        if live(&ctx.event) && watched(e.src()) {
            let _ = sent.send(Change::EdgeInserted(narrow_edge(&ctx.db, e)));
        }
    });
    callbacks.push(Box::new(move |c| c.db.edge().remove_on_insert(id)));
    let sent = tx.clone();
    let id = conn.db.edge().on_delete(move |ctx, e| {
        if !matches!(ctx.event, Event::UnsubscribeApplied) && watched(e.src()) {
            let _ = sent.send(Change::EdgeDeleted(narrow_edge(&ctx.db, e)));
        }
    });
    callbacks.push(Box::new(move |c| c.db.edge().remove_on_delete(id)));
    let sent = tx.clone();
    let id = conn.db.edge().on_update(move |ctx, old, new| {
        if watched(old.src()) {
            let _ = sent.send(Change::EdgeDeleted(narrow_edge(&ctx.db, old)));
            let _ = sent.send(Change::EdgeInserted(narrow_edge(&ctx.db, new)));
        }
    });
    callbacks.push(Box::new(move |c| c.db.edge().remove_on_update(id)));
    // Wide edges: each row reported once, whether first by a meta callback or by its own.
    let (sent, known) = (tx.clone(), wide_known.clone());
    let id = conn.db.wide_edge().on_insert(move |ctx, e| {
        if live(&ctx.event) && watched(e.src()) {
            report_wide_row(&ctx.db, &known, &sent, None, Some(e));
        }
    });
    callbacks.push(Box::new(move |c| c.db.wide_edge().remove_on_insert(id)));
    let (sent, known) = (tx.clone(), wide_known.clone());
    let id = conn.db.wide_edge().on_delete(move |ctx, e| {
        if !matches!(ctx.event, Event::UnsubscribeApplied) && watched(e.src()) {
            report_wide_row(&ctx.db, &known, &sent, Some(e), None);
        }
    });
    callbacks.push(Box::new(move |c| c.db.wide_edge().remove_on_delete(id)));
    let (sent, known) = (tx.clone(), wide_known.clone());
    let id = conn.db.wide_edge().on_update(move |ctx, old, new| {
        if watched(old.src()) {
            report_wide_row(&ctx.db, &known, &sent, Some(old), Some(new));
        }
    });
    callbacks.push(Box::new(move |c| c.db.wide_edge().remove_on_update(id)));

    let (applied, failed) = (tx.clone(), tx);
    let subscription = conn
        .subscription_builder()
        .on_applied(move |ctx| {
            *wide_known.lock().unwrap() = wide_out_edges(&ctx.db, watched);
            let meta = ctx.db.graph_meta().id().find(&0);
            let (narrow, wide) = (ctx.db.edge(), ctx.db.wide_edge());
            let narrow = narrow.iter().map(|e| narrow_edge(&ctx.db, &e));
            let wide = wide.iter().map(|e| wide_edge(&ctx.db, &e));
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
        subscription: Some(subscription),
        callbacks,
    })
}

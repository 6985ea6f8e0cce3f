//! Typed access to the graph module's reducers and procedures, over either of SpacetimeDB's
//! client transports: the SDK's WebSocket (one connection, calls pipelined) or the HTTP call
//! route (SATS-JSON).
//!
//! Every argument and result type is the generated one from [`crate::module_bindings`], on both
//! transports: HTTP sends a procedure's generated argument struct as SATS-JSON and decodes its
//! answer into the generated return type, so a field added to the module cannot be decoded
//! silently wrong by a hand-written copy.

use crate::edgelist::EdgeList;
use crate::module_bindings::{self as mb, DbConnection};
use crate::server::{Server, ServerError};
use crate::ws::{Drive, Pending, Reply, WsError, WsLink};
use serde_json::Value;
use spacetimedb_sdk::__codegen::__sats;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

pub use crate::module_bindings::{
    BfsResult, BulkLoad, CheckReport, DfsResult, ExportCursor, ExportPage, ExportedEdge,
    ExportedVertex, GraphError, GraphInfo, GraphMeta, NeighborCount, Neighbors, PathResult,
    PathStatus, QueryStats, SnapshotHolder, WeightedPathResult,
};
/// Which arcs a query follows: the module's own type, shared so that both parse alike.
pub use graph_traverse::Direction;
pub use spacetimedb_sdk::Identity;

/// Most edges per load call: the module's own limit.
pub const MAX_BATCH_EDGES: usize = 200_000;
/// Largest HTTP call body the loader builds (SpacetimeDB refuses bodies over 2 MiB).
pub const MAX_BODY_BYTES: usize = 1_900_000;

#[derive(Debug, Error)]
pub enum ClientError {
    /// The HTTP transport failed, or the server answered with an HTTP error.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The WebSocket connection could not be opened, or dropped before the answer came.
    #[error(transparent)]
    Connection(#[from] WsError),
    /// The reducer ran and failed (returned `Err` or panicked): nothing was committed.
    #[error("reducer `{reducer}` failed: {message}")]
    ReducerFailed { reducer: String, message: String },
    /// The host could not run the function (unknown name, bad arguments, a procedure that
    /// panicked, ...).
    #[error("`{function}` could not run: {message}")]
    Internal { function: String, message: String },
    /// The module refused the query; see [`GraphError`].
    #[error("{0}")]
    Graph(GraphError),
    /// The call was not sent: the module would refuse it (a batch over its limit), or the
    /// transport cannot carry it (a weight that is not finite, which JSON has no number for).
    #[error("`{function}` not sent: {message}")]
    NotSent { function: String, message: String },
}

impl ClientError {
    /// Whether the module refused a write because the caller may not change the graph
    /// (`module/src/access.rs` words that refusal).
    pub fn is_write_refused(&self) -> bool {
        matches!(self, ClientError::ReducerFailed { message, .. }
            if message.contains("may not change this graph"))
    }
}

/// So that a refusal passes through `?` into `Box<dyn Error>` or `anyhow::Error`, also for
/// code that calls the generated bindings directly.
impl std::error::Error for GraphError {}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::UnknownVertex(v) => write!(f, "unknown vertex {v}"),
            GraphError::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
            GraphError::VersionGone(v) => write!(
                f,
                "version {v} can no longer be read (the graph changed too much since): start again"
            ),
            GraphError::BulkLoadUnderWay(v) => write!(
                f,
                "a bulk load (begun at version {v}) is under way: queries are answered once it \
                 has finished (`graph load` finishes it; re-run it to resume an interrupted \
                 load, or run `graph finish-load`)"
            ),
        }
    }
}

/// A load that stopped part-way.
#[derive(Debug, Error)]
#[error("{source}\n{durable} edges of this load are stored durably")]
pub struct LoadError {
    /// Edges, from the start of the list given to [`GraphDb::load`], whose calls the server
    /// acknowledged and that are known to be durable (see [`LoadProgress::Edges`]): a server
    /// that crashed and restarted still has them, so a resumed load may skip them. A call that
    /// failed may or may not have stored its edges.
    pub durable: usize,
    /// Times the failed batch was sent again after a transient failure (a dropped connection)
    /// before the load gave up; 0 when it failed for good at once.
    pub retries: u32,
    #[source]
    pub source: ClientError,
}

/// How a load sends its edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadPlan {
    /// Edges per call, at most [`MAX_BATCH_EDGES`] (over HTTP a call also stops at
    /// [`MAX_BODY_BYTES`]).
    pub batch: usize,
    /// Calls out at once over the WebSocket (over HTTP always 1). With 2 the next batch is
    /// already at the server when one commits, so it does not wait for that call's answer to
    /// travel back and the next batch to arrive: the dblp-sized load took 0.90 of its time
    /// (`results/load-dblp/pipelined/`). But while reducer calls are queued back to back, the
    /// 2.14 engine runs no procedure (its executor runs every queued reducer call before it
    /// polls a procedure), so every query of every client waits until the load ends: more than
    /// 1 suits a database nobody reads while it loads.
    pub in_flight: usize,
    /// Load an empty graph as a bulk load (the module's `bulk`): the calls store edges only,
    /// and the vertex rows are written once at the end, a window of ids per call. Queries are
    /// refused until then. A load that finds a bulk load under way (an interrupted one)
    /// continues and finishes it whatever this says.
    pub bulk: bool,
}

impl LoadPlan {
    /// The calls out at once over `transport`: over HTTP a call completes before the next is
    /// sent.
    pub fn calls_out(&self, transport: TransportKind) -> usize {
        match transport {
            TransportKind::Ws => self.in_flight.max(1),
            TransportKind::Http => 1,
        }
    }
}

impl Default for LoadPlan {
    /// Calls of [`MAX_BATCH_EDGES`], one at a time: between two calls, queries get their turn.
    fn default() -> Self {
        Self {
            batch: MAX_BATCH_EDGES,
            in_flight: 1,
            bulk: true,
        }
    }
}

/// What a finished load did.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOutcome {
    /// Edges sent.
    pub sent: u64,
    /// How many of them the graph did not hold before: the growth of its edge count.
    pub new_edges: u64,
    /// Whether other clients certainly changed the graph during the load, which makes
    /// `new_edges` the net change of everyone's writes rather than this load's alone. `false`
    /// is not a certainty: every write that changes the graph bumps its version once, so a
    /// concurrent writer shows only where the version moved more than this load's calls
    /// (those answered, and those whose answer a dropped connection lost) can account for;
    /// another load of the same edges, whose writes take the place of this one's, does not.
    pub others_wrote: bool,
    /// The graph's counts and version after the load.
    pub graph: GraphMeta,
    /// Calls that wrote the vertex rows at the end of a bulk load (0: not a bulk load).
    pub finish_calls: u64,
}

/// How far a load has come, as [`GraphDb::load_with`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadProgress {
    /// The load is a bulk load, begun or found under way (`certain`), or perhaps under way (a
    /// call that begins or finishes one lost its answer, and the load stops there): until it
    /// finishes, the graph answers no queries.
    BulkLoad { certain: bool },
    /// The bulk load is finished: the graph answers queries again.
    BulkLoadFinished,
    /// Edges acknowledged so far, and how many of those are known to be durable. They differ
    /// where an acknowledgement may come before the write is durable, and a crash of the
    /// server could still undo it: over HTTP (the official call route answers once a reducer
    /// commits) and over a WebSocket without confirmed reads. There the load confirms the
    /// durable count with a confirmed read about once a second, and at the end.
    Edges { acknowledged: usize, durable: usize },
    /// A bulk load's vertex rows are written for every id below `below`, of ids up to `last`.
    VertexRows { below: u64, last: u64 },
}

impl LoadOutcome {
    /// Edges sent that the graph already held (or that were duplicates among those sent).
    pub fn already_present(&self) -> u64 {
        self.sent.saturating_sub(self.new_edges)
    }
}

/// A procedure's answer and, over HTTP, the server's execution time for the call.
#[derive(Debug, Clone)]
pub struct Answer<T> {
    pub value: T,
    pub execution_us: Option<u64>,
}

/// Which edges and vertices a query follows: edges labelled with one of `edges`, into vertices
/// labelled with one of `vertices` (an empty list tests nothing; `""` names the unlabelled).
/// A traversal's start passes whatever its label; a path's target must pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Follow<'a> {
    pub edges: &'a [&'a str],
    pub vertices: &'a [&'a str],
}

impl<'a> Follow<'a> {
    /// Every edge, every vertex.
    pub const ALL: Follow<'static> = Follow {
        edges: &[],
        vertices: &[],
    };

    /// The edges labelled with one of `labels`, into every vertex.
    pub fn edges(labels: &'a [&'a str]) -> Self {
        Self {
            edges: labels,
            vertices: &[],
        }
    }
}

/// Tuning knobs shared by the multi-transaction procedures (0: the module's default, which
/// paces each transaction to hold about 2 ms; see the README's "Transactions, yielding and
/// consistency").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxOptions {
    /// Work units (arcs + vertices + lookups) per transaction.
    pub tx_budget: u32,
    /// Longest run of wall time, in µs, between two yields.
    pub yield_every_us: u32,
}

/// Which implementation answers a query: Stage 2, or one of the Stage-1 baselines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Index-hop / bidirectional procedures in short transactions.
    Stage2,
    /// Full edge scan per query inside one procedure transaction.
    Stage1Procedure,
    /// Full edge scan in a reducer that writes rows, read back with SQL.
    Stage1Reducer,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Stage2 => "stage2",
            Mode::Stage1Procedure => "stage1",
            Mode::Stage1Reducer => "stage1-reducer",
        }
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stage2" => Ok(Mode::Stage2),
            "stage1" => Ok(Mode::Stage1Procedure),
            "stage1-reducer" => Ok(Mode::Stage1Reducer),
            _ => Err(format!(
                "mode `{s}`: expected stage2, stage1 or stage1-reducer"
            )),
        }
    }
}

/// How a client reaches the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// The SDK's WebSocket: one connection, lifecycle reducers once, calls pipelined.
    Ws,
    /// The HTTP call route: a request (and connect/disconnect bookkeeping) per call.
    Http,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Ws => "ws",
            TransportKind::Http => "http",
        }
    }
}

impl FromStr for TransportKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ws" | "websocket" => Ok(TransportKind::Ws),
            "http" => Ok(TransportKind::Http),
            _ => Err(format!("transport `{s}`: expected ws or http")),
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone)]
enum Transport {
    Http,
    /// Shared by clones: they pipeline their calls over one connection.
    Ws(Arc<WsLink>),
}

/// The graph module published as `database` on a server.
///
/// `server` is kept on both transports: SQL, publishing and identities are HTTP-only routes.
/// Clones share the WebSocket connection; [`GraphDb::reconnect`] gives one of its own.
#[derive(Debug, Clone)]
pub struct GraphDb {
    server: Server,
    database: String,
    transport: Transport,
}

/// SATS-JSON of a value, as the HTTP API takes arguments and returns results (a struct is an
/// object keyed by field name; a sum type an object with the variant's name as its one key).
pub fn to_sats_json<T: __sats::Serialize>(value: &T) -> Value {
    serde_json::to_value(__sats::serde::SerdeWrapper::new(value))
        .expect("generated types serialize to JSON")
}

impl GraphDb {
    /// Over HTTP, with `server`'s token.
    pub fn new(server: Server, database: impl Into<String>) -> Self {
        Self {
            server,
            database: database.into(),
            transport: Transport::Http,
        }
    }

    /// Over one WebSocket connection (opened at the first call) with `server`'s URL and token;
    /// `confirmed` sets confirmed reads (`None`: the server's default, on).
    pub fn websocket(server: Server, database: impl Into<String>, confirmed: Option<bool>) -> Self {
        let database = database.into();
        let link = WsLink::new(
            server.url(),
            &database,
            server.token().map(str::to_string),
            confirmed,
        )
        .with_timeout(server.timeout());
        Self {
            server,
            database,
            transport: Transport::Ws(Arc::new(link)),
        }
    }

    /// The same database over the WebSocket, on a connection of its own whose messages are
    /// processed as `drive` says ([`Drive::Caller`]: by the thread of each call while it waits;
    /// over HTTP this changes nothing).
    pub fn with_drive(self, drive: Drive) -> Self {
        match &self.transport {
            Transport::Http => self,
            Transport::Ws(link) => Self {
                transport: Transport::Ws(Arc::new(link.fresh().with_drive(drive))),
                ..self
            },
        }
    }

    /// How the WebSocket connection's messages are processed (`None` over HTTP).
    pub fn drive(&self) -> Option<Drive> {
        match &self.transport {
            Transport::Http => None,
            Transport::Ws(link) => Some(link.drive()),
        }
    }

    /// The same database and identity over the HTTP call route.
    pub fn over_http(&self) -> Self {
        Self::new(self.server.clone(), self.database.clone())
    }

    /// The same database over the same transport, on a connection of its own (over HTTP, the
    /// same as a clone).
    pub fn reconnect(&self) -> Self {
        match &self.transport {
            Transport::Http => self.clone(),
            Transport::Ws(link) => Self {
                server: self.server.clone(),
                database: self.database.clone(),
                transport: Transport::Ws(Arc::new(link.fresh())),
            },
        }
    }

    /// Over the transport `kind`.
    pub fn open(server: Server, database: impl Into<String>, kind: TransportKind) -> Self {
        match kind {
            TransportKind::Http => Self::new(server, database),
            TransportKind::Ws => Self::websocket(server, database, None),
        }
    }

    /// Which transport the calls take.
    pub fn transport(&self) -> TransportKind {
        match self.transport {
            Transport::Http => TransportKind::Http,
            Transport::Ws(_) => TransportKind::Ws,
        }
    }

    /// The server, with the token every call carries (also for its HTTP-only routes: SQL,
    /// publishing, identities).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The database's name (or identity).
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Whether a write's answer may come before the write is durable, so that a crash of the
    /// server right after it could undo it: over HTTP (the official call route answers once a
    /// reducer commits; graph-host waits) and over a WebSocket without confirmed reads.
    fn acks_may_precede_durability(&self) -> bool {
        match &self.transport {
            Transport::Http => true,
            Transport::Ws(link) => link.confirmed() == Some(false),
        }
    }

    /// Returns once every write the server had committed when it received this call is
    /// durable: a confirmed read (SQL, which the server answers only once the state it read is
    /// durable, official or graph-host).
    pub fn wait_durable(&self) -> Result<(), ClientError> {
        self.server
            .sql_confirmed(&self.database, "SELECT version FROM graph_meta")?;
        Ok(())
    }

    /// The open WebSocket connection, for subscriptions (`None` over HTTP).
    pub fn ws_connection(&self) -> Option<Result<crate::ws::DbConnectionRef, ClientError>> {
        match &self.transport {
            Transport::Http => None,
            Transport::Ws(link) => Some(link.connection()),
        }
    }

    /// Calls a procedure: over HTTP with `args` as SATS-JSON, over the WebSocket with `ws`
    /// (the generated `_then` method with `args` unpacked). Procedures only read, so a call cut
    /// off by a dropped connection is sent again on a new one.
    fn procedure<A, R>(
        &self,
        name: &'static str,
        args: A,
        ws: impl Fn(&DbConnection, A, Reply<R>),
    ) -> Result<Answer<R>, ClientError>
    where
        A: __sats::Serialize + Clone,
        R: for<'de> __sats::Deserialize<'de> + Send + 'static,
    {
        match &self.transport {
            Transport::Http => {
                let out = self
                    .server
                    .call(&self.database, name, &to_sats_json(&args))?;
                let value =
                    __sats::serde::deserialize(&out.body).map_err(|e| ServerError::Decode {
                        what: format!("`{name}`'s answer"),
                        message: format!("{e}: {}", out.body),
                    })?;
                Ok(Answer {
                    value,
                    execution_us: out.execution_us,
                })
            }
            Transport::Ws(link) => {
                let value = link.call(name, true, &|conn, reply| {
                    ws(conn, args.clone(), reply);
                    Ok(())
                })?;
                Ok(Answer {
                    value,
                    execution_us: None,
                })
            }
        }
    }

    /// A procedure returning `Result<T, GraphError>`: the module's refusal becomes
    /// [`ClientError::Graph`].
    fn query<A, T>(
        &self,
        name: &'static str,
        args: A,
        ws: impl Fn(&DbConnection, A, Reply<Result<T, GraphError>>),
    ) -> Result<Answer<T>, ClientError>
    where
        A: __sats::Serialize + Clone,
        T: for<'de> __sats::Deserialize<'de> + Send + 'static,
    {
        let answer = self.procedure(name, args, ws)?;
        match answer.value {
            Ok(value) => Ok(Answer {
                value,
                execution_us: answer.execution_us,
            }),
            Err(e) => Err(ClientError::Graph(e)),
        }
    }

    /// Calls a reducer. `resend`: the call may be sent again after a dropped connection
    /// (idempotent writes only).
    fn reducer<A>(
        &self,
        name: &'static str,
        args: A,
        resend: bool,
        ws: impl Fn(&DbConnection, A, Reply<Result<(), String>>) -> spacetimedb_sdk::Result<()>,
    ) -> Result<(), ClientError>
    where
        A: __sats::Serialize + Clone,
    {
        match &self.transport {
            Transport::Http => self.http_reducer(name, &args),
            Transport::Ws(link) => link
                .call(name, resend, &|conn, reply| ws(conn, args.clone(), reply))?
                .map_err(|message| reducer_failed(name, message)),
        }
    }

    /// Sends a reducer call without waiting for its outcome over the WebSocket; over HTTP the
    /// call completes before this returns.
    fn send_reducer<A>(
        &self,
        name: &'static str,
        args: A,
        ws: impl Fn(&DbConnection, A, Reply<Result<(), String>>) -> spacetimedb_sdk::Result<()>,
    ) -> Result<ReducerInFlight, ClientError>
    where
        A: __sats::Serialize + Clone,
    {
        let state = match &self.transport {
            Transport::Http => InFlight::Answered(self.http_reducer(name, &args)),
            Transport::Ws(link) => InFlight::Sent(
                link.clone(),
                link.send(name, &|conn, reply| ws(conn, args.clone(), reply))?,
            ),
        };
        Ok(ReducerInFlight {
            reducer: name,
            state,
        })
    }

    /// Sends a reducer call and returns at once, its outcome going to `then` (see
    /// [`GraphDb::add_edges_then`]).
    fn reducer_then<A>(
        &self,
        name: &'static str,
        args: A,
        ws: impl Fn(&DbConnection, A, Reply<Result<(), String>>) -> spacetimedb_sdk::Result<()>,
        then: impl FnOnce(Result<(), ClientError>) + Send + 'static,
    ) -> Result<(), ClientError>
    where
        A: __sats::Serialize + Clone,
    {
        match &self.transport {
            Transport::Http => {
                then(self.http_reducer(name, &args));
                Ok(())
            }
            Transport::Ws(link) => link.send_then(
                name,
                &|conn, reply| ws(conn, args.clone(), reply),
                Box::new(move |answer| {
                    then(answer.and_then(|outcome| {
                        outcome.map_err(|message| reducer_failed(name, message))
                    }))
                }),
            ),
        }
    }

    /// `add_labelled_edges`' arguments, as `GraphDb::add_labelled_edges` takes them, unless
    /// the call cannot be sent: too many edges, or over HTTP a weight that is not finite (the
    /// module refuses those, but JSON has no number for them: the HTTP API would refuse the
    /// body without saying why).
    fn labelled_args(
        &self,
        src: &[u64],
        dst: &[u64],
        label_names: &[String],
        labels: &[u32],
        weights: &[f32],
    ) -> Result<mb::add_labelled_edges_reducer::AddLabelledEdgesArgs, ClientError> {
        check_batch("add_labelled_edges", src.len())?;
        let not_finite = weights.iter().position(|w| !w.is_finite());
        if let Some(i) = not_finite.filter(|_| self.transport() == TransportKind::Http) {
            // Named as the module names it.
            let edge = match (src.get(i), dst.get(i)) {
                (Some(s), Some(d)) if src.len() == 1 => format!("edge {s} → {d}"),
                (Some(s), Some(d)) => format!("edge {i} ({s} → {d})"),
                _ => format!("edge {i}"),
            };
            return Err(ClientError::NotSent {
                function: "add_labelled_edges".into(),
                message: format!(
                    "{edge} has weight {}: weights must be finite and non-negative",
                    weights[i]
                ),
            });
        }
        Ok(mb::add_labelled_edges_reducer::AddLabelledEdgesArgs {
            src: src.to_vec(),
            dst: dst.to_vec(),
            label_names: label_names.to_vec(),
            labels: labels.to_vec(),
            weights: weights.to_vec(),
        })
    }

    /// A reducer call over the HTTP call route, where a 530 is the reducer's own failure.
    fn http_reducer<A: __sats::Serialize>(
        &self,
        name: &'static str,
        args: &A,
    ) -> Result<(), ClientError> {
        match self.server.call(&self.database, name, &to_sats_json(args)) {
            Ok(_) => Ok(()),
            Err(ServerError::Http {
                status: 530,
                message,
                ..
            }) => Err(reducer_failed(name, message)),
            Err(e) => Err(e.into()),
        }
    }

    /// Inserts edges in one call (at most [`MAX_BATCH_EDGES`]); duplicates are ignored.
    pub fn add_edges(&self, src: &[u64], dst: &[u64]) -> Result<(), ClientError> {
        use mb::add_edges_reducer::{AddEdgesArgs, add_edges};
        check_batch("add_edges", src.len())?;
        let args = AddEdgesArgs {
            src: src.to_vec(),
            dst: dst.to_vec(),
        };
        self.reducer("add_edges", args, true, |conn, a, reply| {
            conn.reducers
                .add_edges_then(a.src, a.dst, move |_, r| reply(flatten(r)))
        })
    }

    /// [`GraphDb::add_edges`], sent without waiting for its outcome, which
    /// [`ReducerInFlight::wait`] returns: one WebSocket connection can carry many calls at once
    /// (pipelining, as SpacetimeDB's benchmark clients do), and the module runs them in the
    /// order they were sent. A call whose connection drops is not sent again. Over HTTP the
    /// call completes before this returns.
    pub fn send_add_edges(&self, src: &[u64], dst: &[u64]) -> Result<ReducerInFlight, ClientError> {
        use mb::add_edges_reducer::{AddEdgesArgs, add_edges};
        check_batch("add_edges", src.len())?;
        let args = AddEdgesArgs {
            src: src.to_vec(),
            dst: dst.to_vec(),
        };
        self.send_reducer("add_edges", args, |conn, a, reply| {
            conn.reducers
                .add_edges_then(a.src, a.dst, move |_, r| reply(flatten(r)))
        })
    }

    /// [`GraphDb::add_edges`], sent without waiting: `then` gets the outcome, the way the SDK's
    /// `_then` callbacks do. Over the WebSocket `then` runs on the thread that processes the
    /// connection's messages, so it must return quickly; it may send further calls, which is
    /// how a client keeps a connection busy without a thread waiting on each call. `then` is
    /// called exactly once (never if this returns an error): if the connection closes before
    /// the answer, or none comes within the timeout ([`Server::with_timeout`]), with a
    /// [`ClientError::Connection`] that says so (the server may or may not have carried the
    /// call out; the SDK alone would never call it). Over HTTP the call completes, and
    /// `then` runs, before this returns.
    pub fn add_edges_then(
        &self,
        src: &[u64],
        dst: &[u64],
        then: impl FnOnce(Result<(), ClientError>) + Send + 'static,
    ) -> Result<(), ClientError> {
        use mb::add_edges_reducer::{AddEdgesArgs, add_edges};
        check_batch("add_edges", src.len())?;
        let args = AddEdgesArgs {
            src: src.to_vec(),
            dst: dst.to_vec(),
        };
        self.reducer_then(
            "add_edges",
            args,
            |conn, a, reply| {
                conn.reducers
                    .add_edges_then(a.src, a.dst, move |_, r| reply(flatten(r)))
            },
            then,
        )
    }

    /// Inserts edges with labels and weights in one call (at most [`MAX_BATCH_EDGES`]):
    /// `labels[i]` indexes `label_names` (`""`: no label); either list may be empty (no labels;
    /// weight 1). Duplicates are ignored; an edge stored with another label or weight fails the
    /// call.
    pub fn add_labelled_edges(
        &self,
        src: &[u64],
        dst: &[u64],
        label_names: &[String],
        labels: &[u32],
        weights: &[f32],
    ) -> Result<(), ClientError> {
        let args = self.labelled_args(src, dst, label_names, labels, weights)?;
        self.reducer("add_labelled_edges", args, true, send_labelled)
    }

    /// Gives vertex `ids[i]` the label `label_names[labels[i]]` (`""`: none) in one call (at
    /// most [`MAX_BATCH_EDGES`] vertices), creating missing vertices; a vertex named twice must
    /// be given one label.
    pub fn set_vertex_labels(
        &self,
        ids: &[u64],
        label_names: &[String],
        labels: &[u32],
    ) -> Result<(), ClientError> {
        use mb::set_vertex_labels_reducer::{SetVertexLabelsArgs, set_vertex_labels};
        check_batch("set_vertex_labels", ids.len())?;
        let args = SetVertexLabelsArgs {
            ids: ids.to_vec(),
            label_names: label_names.to_vec(),
            labels: labels.to_vec(),
        };
        self.reducer("set_vertex_labels", args, true, |conn, a, reply| {
            conn.reducers
                .set_vertex_labels_then(a.ids, a.label_names, a.labels, move |_, r| {
                    reply(flatten(r))
                })
        })
    }

    /// Gives every vertex of `list` its label, in calls of at most [`MAX_BATCH_EDGES`]
    /// vertices (each one transaction; over HTTP a call also stops at [`MAX_BODY_BYTES`]), each
    /// carrying only the label names it uses; returns the number of calls. Labelling is
    /// idempotent: after a failure, sending the whole list again is safe.
    pub fn load_vertex_labels(
        &self,
        list: &crate::edgelist::VertexLabels,
    ) -> Result<usize, ClientError> {
        let http = self.transport() == TransportKind::Http;
        let mut calls = 0;
        let mut start = 0;
        while start < list.len() {
            let end = rows_end(
                start..list.len(),
                MAX_BATCH_EDGES,
                http,
                &list.label_names,
                |i| Some(list.labels[i]),
                |i| digits(list.ids[i]) + digits(list.labels[i].into()),
            );
            let (names, labels) = used_names(&list.label_names, &list.labels[start..end]);
            self.set_vertex_labels(&list.ids[start..end], &names, &labels)?;
            calls += 1;
            start = end;
        }
        Ok(calls)
    }

    /// Sends rows `range` of `edges` without waiting for the outcome: plain when the list has
    /// no labels or weights.
    fn send_rows(
        &self,
        edges: &EdgeList,
        range: std::ops::Range<usize>,
    ) -> Result<ReducerInFlight, ClientError> {
        let (src, dst) = (&edges.src[range.clone()], &edges.dst[range.clone()]);
        if !edges.has_attrs() {
            return self.send_add_edges(src, dst);
        }
        let labels = match edges.labels.is_empty() {
            true => &[][..],
            false => &edges.labels[range.clone()],
        };
        let (names, labels) = used_names(&edges.label_names, labels);
        let weights = match edges.weights.is_empty() {
            true => &[][..],
            false => &edges.weights[range],
        };
        let args = self.labelled_args(src, dst, &names, &labels, weights)?;
        self.send_reducer("add_labelled_edges", args, send_labelled)
    }

    /// Adds vertices without edges (ids already stored are left as they are).
    pub fn add_vertices(&self, ids: &[u64]) -> Result<(), ClientError> {
        use mb::add_vertices_reducer::{AddVerticesArgs, add_vertices};
        check_batch("add_vertices", ids.len())?;
        let args = AddVerticesArgs { ids: ids.to_vec() };
        self.reducer("add_vertices", args, true, |conn, a, reply| {
            conn.reducers
                .add_vertices_then(a.ids, move |_, r| reply(flatten(r)))
        })
    }

    /// Removes the edges `src[i] → dst[i]` (absent ones are skipped); their ends stay as
    /// vertices.
    pub fn remove_edges(&self, src: &[u64], dst: &[u64]) -> Result<(), ClientError> {
        use mb::remove_edges_reducer::{RemoveEdgesArgs, remove_edges};
        check_batch("remove_edges", src.len())?;
        let args = RemoveEdgesArgs {
            src: src.to_vec(),
            dst: dst.to_vec(),
        };
        self.reducer("remove_edges", args, true, |conn, a, reply| {
            conn.reducers
                .remove_edges_then(a.src, a.dst, move |_, r| reply(flatten(r)))
        })
    }

    /// Removes a vertex and its edges. Not sent twice: a second call would fail on the vertex
    /// the first one removed.
    pub fn remove_vertex(&self, id: u64) -> Result<(), ClientError> {
        use mb::remove_vertex_reducer::{RemoveVertexArgs, remove_vertex};
        self.reducer(
            "remove_vertex",
            RemoveVertexArgs { id },
            false,
            |conn, a, reply| {
                conn.reducers
                    .remove_vertex_then(a.id, move |_, r| reply(flatten(r)))
            },
        )
    }

    /// Removes every edge and vertex (label names stay known).
    pub fn clear(&self) -> Result<(), ClientError> {
        use mb::clear_graph_reducer::{ClearGraphArgs, clear_graph};
        self.reducer("clear_graph", ClearGraphArgs {}, true, |conn, _, reply| {
            conn.reducers
                .clear_graph_then(move |_, r| reply(flatten(r)))
        })
    }

    /// Lets `identity` change the graph (the database owner only).
    pub fn grant_writer(&self, identity: Identity) -> Result<(), ClientError> {
        use mb::grant_writer_reducer::{GrantWriterArgs, grant_writer};
        let args = GrantWriterArgs { identity };
        self.reducer("grant_writer", args, true, |conn, a, reply| {
            conn.reducers
                .grant_writer_then(a.identity, move |_, r| reply(flatten(r)))
        })
    }

    /// Sets which of the module's instances may build an in-memory snapshot of the graph (the
    /// database owner only): at most `max_snapshots` at once (0: none, and those held are
    /// dropped), and whether many small traversals build one as a large BFS does.
    pub fn set_snapshot_policy(
        &self,
        max_snapshots: u32,
        build_for_small_traversals: bool,
    ) -> Result<(), ClientError> {
        use mb::set_snapshot_policy_reducer::{SetSnapshotPolicyArgs, set_snapshot_policy};
        let args = SetSnapshotPolicyArgs {
            max_snapshots,
            build_for_small_traversals,
        };
        self.reducer("set_snapshot_policy", args, true, |conn, a, reply| {
            conn.reducers.set_snapshot_policy_then(
                a.max_snapshots,
                a.build_for_small_traversals,
                move |_, r| reply(flatten(r)),
            )
        })
    }

    /// Takes back `identity`'s right to change the graph (the database owner only).
    pub fn revoke_writer(&self, identity: Identity) -> Result<(), ClientError> {
        use mb::revoke_writer_reducer::{RevokeWriterArgs, revoke_writer};
        let args = RevokeWriterArgs { identity };
        self.reducer("revoke_writer", args, true, |conn, a, reply| {
            conn.reducers
                .revoke_writer_then(a.identity, move |_, r| reply(flatten(r)))
        })
    }

    /// The identity this client acts as, as the server assigned it to the WebSocket
    /// connection (`None` over HTTP, which does not say). Waits up to 10 s for the server's
    /// first message, which carries it.
    pub fn identity(&self) -> Option<Result<Identity, ClientError>> {
        use spacetimedb_sdk::DbContext;
        use std::time::{Duration, Instant};
        let conn = self.ws_connection()?;
        Some(conn.and_then(|conn| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while conn.try_identity().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            conn.try_identity().ok_or_else(|| ClientError::Internal {
                function: "identity".into(),
                message: "the server has not said which identity this connection has".into(),
            })
        }))
    }

    /// Loads `edges` in calls that respect the batch limit (and, over HTTP, the body limit),
    /// retrying a failed call once it is safe (edges are a set, so a re-sent batch changes
    /// nothing). `progress` gets the number of edges acknowledged so far. Edges go out in the
    /// order given; [`EdgeList::sorted`] is the order that keeps each vertex's arcs together in
    /// the table.
    ///
    /// On failure the error says how many edges, from the start of `edges`, the server
    /// acknowledged and are known durable (see [`LoadProgress::Edges`]): those are stored, and
    /// a resumed load may skip exactly that many.
    pub fn load(
        &self,
        edges: &EdgeList,
        progress: impl FnMut(LoadProgress),
    ) -> Result<LoadOutcome, LoadError> {
        self.load_with(edges, LoadPlan::default(), progress)
    }

    /// [`GraphDb::load`] as `plan` says. With several calls out at once, the module runs them
    /// in the order sent; a failed call stops the load once the calls sent after it have been
    /// answered, and a transient failure (a dropped connection) is retried from the first edge
    /// not known durable. A call sent after the one that failed may have stored its edges,
    /// which a resumed load sends again, changing nothing. A bulk load (see [`LoadPlan::bulk`])
    /// that stops part-way stays under way: loading again continues and finishes it.
    pub fn load_with(
        &self,
        edges: &EdgeList,
        plan: LoadPlan,
        mut progress: impl FnMut(LoadProgress),
    ) -> Result<LoadOutcome, LoadError> {
        let mut attempt = 0;
        let failed = |durable, retries, source| LoadError {
            durable,
            retries,
            source,
        };
        let info = self.graph_info().map_err(|e| failed(0, 0, e))?;
        let before = info.meta;
        let empty = before.edges == 0 && before.vertices == 0;
        let bulk = info.bulk_load.is_some() || (plan.bulk && empty && !edges.is_empty());
        let http = self.transport() == TransportKind::Http;
        let window = plan.calls_out(self.transport());
        // Calls out, oldest first, with the end of their batch.
        let mut in_flight = std::collections::VecDeque::new();
        let mut sent = 0;
        let mut acknowledged = 0;
        let mut succeeded = 0u64;
        if bulk && info.bulk_load.is_none() {
            self.begin_bulk_load().map_err(|e| {
                perhaps_under_way(&e, &mut progress);
                failed(0, 0, e)
            })?;
            succeeded += 1;
        }
        if bulk {
            progress(LoadProgress::BulkLoad { certain: true });
        }
        // Calls whose answer was lost: each may have committed, and bumped the version.
        let mut unknown = 0u64;
        let mut durable = DurableMark::new(self.acks_may_precede_durability());
        let confirm = || self.wait_durable();
        while acknowledged < edges.len() {
            while in_flight.len() < window && sent < edges.len() {
                let end = batch_end(edges, sent, plan.batch, http);
                in_flight.push_back((end, self.send_rows(edges, sent..end)));
                sent = end;
            }
            let (end, call) = in_flight.pop_front().expect("a call is out");
            let answered = call.and_then(ReducerInFlight::wait);
            let call_failed = answered.is_err();
            if !call_failed {
                succeeded += 1;
                acknowledged = end;
            }
            match answered.and_then(|()| durable.acknowledged(end, confirm)) {
                Ok(()) => {
                    attempt = 0;
                    progress(LoadProgress::Edges {
                        acknowledged,
                        durable: durable.at,
                    });
                }
                Err(e) => {
                    // The calls sent after it still run; their outcome changes nothing here
                    // but the count of calls that may have bumped the version.
                    for (_, call) in in_flight.drain(..) {
                        match call.and_then(ReducerInFlight::wait) {
                            Ok(()) => succeeded += 1,
                            Err(e) if is_transient(&e) => unknown += 1,
                            Err(_) => {}
                        }
                    }
                    if !is_transient(&e) {
                        // The server answers: what it acknowledged can be confirmed now.
                        let _ = durable.finished(acknowledged, confirm);
                        return Err(failed(durable.at, attempt, e));
                    }
                    if attempt == 3 {
                        return Err(failed(durable.at, attempt, e));
                    }
                    unknown += u64::from(call_failed);
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(200 << attempt));
                    // A server that restarted meanwhile may have lost what it acknowledged
                    // after the durable mark: send it again (edges are a set).
                    acknowledged = durable.at;
                    sent = acknowledged;
                }
            }
        }
        let finish_calls = match bulk {
            true => {
                let calls = self
                    .finish_bulk_load(0, |below, last| {
                        progress(LoadProgress::VertexRows { below, last })
                    })
                    .map_err(|e| {
                        perhaps_under_way(&e, &mut progress);
                        failed(durable.at, attempt, e)
                    })?;
                progress(LoadProgress::BulkLoadFinished);
                calls
            }
            false => 0,
        };
        succeeded += finish_calls;
        // What the outcome reports is durable, the bulk load's end included.
        durable
            .finished(acknowledged, confirm)
            .map_err(|e| failed(durable.at, attempt, e))?;
        let after = self.info().map_err(|e| failed(durable.at, attempt, e))?;
        Ok(LoadOutcome {
            sent: edges.len() as u64,
            new_edges: after.edges.saturating_sub(before.edges),
            // Each call bumps the version at most once; more means someone else wrote too (and
            // a version that went back, a database reset meanwhile).
            others_wrote: after
                .version
                .checked_sub(before.version)
                .is_none_or(|bumps| bumps > succeeded + unknown),
            graph: after,
            finish_calls,
        })
    }

    /// Starts a bulk load (see [`LoadPlan::bulk`]); one under way is left as it is.
    pub fn begin_bulk_load(&self) -> Result<(), ClientError> {
        use mb::begin_bulk_load_reducer::{BeginBulkLoadArgs, begin_bulk_load};
        self.reducer(
            "begin_bulk_load",
            BeginBulkLoadArgs {},
            true,
            |conn, _, reply| {
                conn.reducers
                    .begin_bulk_load_then(move |_, r| reply(flatten(r)))
            },
        )
    }

    /// Finishes the bulk load under way, if any: writes its vertex rows a window of ids per
    /// call, each reading about `rows` rows (0: the module's default), and tells `progress`
    /// below which id they are written, of ids up to which. Returns the calls made. Adds by
    /// other clients meanwhile are finished too (they move finishing back).
    pub fn finish_bulk_load(
        &self,
        rows: u32,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, ClientError> {
        use mb::finish_bulk_load_reducer::{FinishBulkLoadArgs, finish_bulk_load};
        let mut calls = 0;
        loop {
            let info = self.graph_info()?;
            let Some(load) = info.bulk_load else {
                return Ok(calls);
            };
            // Before the load's first add, every row is exact (`finished_below` is u64::MAX).
            let last = info.meta.max_vertex_id;
            progress(load.finished_below.min(last), last);
            let args = FinishBulkLoadArgs { rows };
            self.reducer("finish_bulk_load", args, true, |conn, a, reply| {
                conn.reducers
                    .finish_bulk_load_then(a.rows, move |_, r| reply(flatten(r)))
            })?;
            calls += 1;
        }
    }

    /// One page of the graph as it was at `version` (`None`: now, which the page names): what
    /// follows the cursor `after` (`None`: from the start), vertices with their labels and
    /// out-edges, up to `limit` of either (0: the module's default). See [`GraphDb::export`].
    pub fn export_page(
        &self,
        version: Option<u64>,
        after: Option<ExportCursor>,
        limit: u32,
    ) -> Result<Answer<ExportPage>, ClientError> {
        use mb::export_page_procedure::{ExportPageArgs, export_page};
        let args = ExportPageArgs {
            version,
            after,
            limit,
        };
        self.query("export_page", args, |conn, a, reply| {
            conn.procedures
                .export_page_then(a.version, a.after, a.limit, answer(reply))
        })
    }

    /// Reads the whole graph exactly as it was at one version, a page (one short transaction)
    /// at a time, handing each page to `each` with `first` set on the first page of an attempt.
    /// Writers go on meanwhile; if they change so much that the version can no longer be read
    /// (a bulk write or `clear_graph`), the export starts again at the current version, and
    /// `each` must drop what it was given before (`first` again). Gives up after `attempts`
    /// attempts. Returns the version read.
    pub fn export<E: From<ClientError>>(
        &self,
        limit: u32,
        attempts: u32,
        mut each: impl FnMut(&ExportPage, bool) -> Result<(), E>,
    ) -> Result<u64, E> {
        let mut attempt = 1;
        let (mut version, mut after) = (None, None);
        loop {
            match self.export_page(version, after, limit) {
                Ok(page) => {
                    let page = page.value;
                    each(&page, version.is_none())?;
                    match page.next {
                        None => return Ok(page.version),
                        next => (version, after) = (Some(page.version), next),
                    }
                }
                Err(ClientError::Graph(GraphError::VersionGone(_))) if attempt < attempts => {
                    attempt += 1;
                    (version, after) = (None, None);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Recomputes every vertex's degrees and the graph's counts from the tables and reports
    /// where the stored ones differ (one transaction over both tables: a maintenance command).
    pub fn check(&self) -> Result<CheckReport, ClientError> {
        use mb::check_procedure::{CheckArgs, check};
        let answer = self.procedure("check", CheckArgs {}, |conn, _, reply| {
            conn.procedures
                .check_then(move |_, r| reply(r.map_err(|e| e.to_string())))
        })?;
        Ok(answer.value)
    }

    /// Calls the module's empty procedure or reducer: the round-trip floor. Returns the
    /// server's execution time, when the transport reports it.
    pub fn noop(&self, procedure: bool) -> Result<Option<u64>, ClientError> {
        if procedure {
            use mb::noop_procedure_procedure::{NoopProcedureArgs, noop_procedure};
            let answer =
                self.procedure("noop_procedure", NoopProcedureArgs {}, |conn, _, reply| {
                    conn.procedures
                        .noop_procedure_then(move |_, r| reply(r.map_err(|e| e.to_string())))
                })?;
            Ok(answer.execution_us)
        } else {
            use mb::noop_reducer_reducer::{NoopReducerArgs, noop_reducer};
            self.reducer(
                "noop_reducer",
                NoopReducerArgs {},
                true,
                |conn, _, reply| {
                    conn.reducers
                        .noop_reducer_then(move |_, r| reply(flatten(r)))
                },
            )?;
            Ok(None)
        }
    }

    /// The empty reducer, its outcome going to `then` (as [`GraphDb::add_edges_then`]): what a
    /// reducer call costs the engine and the transport when the reducer does nothing.
    pub fn noop_reducer_then(
        &self,
        then: impl FnOnce(Result<(), ClientError>) + Send + 'static,
    ) -> Result<(), ClientError> {
        use mb::noop_reducer_reducer::{NoopReducerArgs, noop_reducer};
        self.reducer_then(
            "noop_reducer",
            NoopReducerArgs {},
            |conn, _, reply| {
                conn.reducers
                    .noop_reducer_then(move |_, r| reply(flatten(r)))
            },
            then,
        )
    }

    /// The graph's counts and version.
    pub fn info(&self) -> Result<GraphMeta, ClientError> {
        Ok(self.graph_info()?.meta)
    }

    /// The graph's counts and version, and the in-memory snapshots the module's instances hold
    /// (their versions and measured sizes).
    pub fn graph_info(&self) -> Result<GraphInfo, ClientError> {
        use mb::graph_info_procedure::{GraphInfoArgs, graph_info};
        let answer = self.procedure("graph_info", GraphInfoArgs {}, |conn, _, reply| {
            conn.procedures
                .graph_info_then(move |_, r| reply(r.map_err(|e| e.to_string())))
        })?;
        Ok(answer.value)
    }

    /// How many distinct neighbors `v` has in direction `dir`, in one transaction.
    pub fn neighbor_count(
        &self,
        v: u64,
        dir: Direction,
    ) -> Result<Answer<NeighborCount>, ClientError> {
        self.neighbor_count_over(v, dir, Follow::ALL)
    }

    /// The distinct neighbors over the edges and into the vertices `follow` names. Each
    /// `*_over` query takes a [`Follow`]; an unknown label is an error.
    pub fn neighbor_count_over(
        &self,
        v: u64,
        dir: Direction,
        follow: Follow,
    ) -> Result<Answer<NeighborCount>, ClientError> {
        use mb::neighbor_count_procedure::{NeighborCountArgs, neighbor_count};
        let args = NeighborCountArgs {
            vertex: v,
            direction: dir.as_str().into(),
            edge_labels: names(follow.edges),
            vertex_labels: names(follow.vertices),
        };
        self.query("neighbor_count", args, |conn, a, reply| {
            conn.procedures.neighbor_count_then(
                a.vertex,
                a.direction,
                a.edge_labels,
                a.vertex_labels,
                answer(reply),
            )
        })
    }

    /// [`Self::neighbor_count`] by the Stage-1 baseline: a scan of every edge.
    pub fn neighbor_count_stage1(
        &self,
        v: u64,
        dir: Direction,
    ) -> Result<Answer<NeighborCount>, ClientError> {
        use mb::neighbor_count_full_scan_procedure::{
            NeighborCountFullScanArgs, neighbor_count_full_scan,
        };
        let args = NeighborCountFullScanArgs {
            vertex: v,
            direction: dir.as_str().into(),
        };
        self.query("neighbor_count_full_scan", args, |conn, a, reply| {
            conn.procedures
                .neighbor_count_full_scan_then(a.vertex, a.direction, answer(reply))
        })
    }

    /// Distinct neighbors, ascending, at most `limit` (0: no limit short of the module's cap).
    pub fn neighbors(
        &self,
        v: u64,
        dir: Direction,
        limit: u32,
    ) -> Result<Answer<Neighbors>, ClientError> {
        self.neighbors_over(v, dir, Follow::ALL, limit)
    }

    /// [`Self::neighbors`] over the edges and into the vertices `follow` names.
    pub fn neighbors_over(
        &self,
        v: u64,
        dir: Direction,
        follow: Follow,
        limit: u32,
    ) -> Result<Answer<Neighbors>, ClientError> {
        use mb::neighbors_procedure::{NeighborsArgs, neighbors};
        let args = NeighborsArgs {
            vertex: v,
            direction: dir.as_str().into(),
            edge_labels: names(follow.edges),
            vertex_labels: names(follow.vertices),
            limit,
        };
        self.query("neighbors", args, |conn, a, reply| {
            conn.procedures.neighbors_then(
                a.vertex,
                a.direction,
                a.edge_labels,
                a.vertex_labels,
                a.limit,
                answer(reply),
            )
        })
    }

    /// Breadth-first search from `start`, at most `max_depth` levels deep (`None`: no bound):
    /// the vertices per level, how many were reached, and the first `vertex_limit` of them in
    /// BFS order. Runs in short transactions, for one version of the graph (`stats`).
    pub fn bfs(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        vertex_limit: u32,
        tx: TxOptions,
    ) -> Result<Answer<BfsResult>, ClientError> {
        self.bfs_over(start, dir, Follow::ALL, max_depth, vertex_limit, tx)
    }

    /// [`Self::bfs`] over the edges and into the vertices `follow` names.
    pub fn bfs_over(
        &self,
        start: u64,
        dir: Direction,
        follow: Follow,
        max_depth: Option<u32>,
        vertex_limit: u32,
        tx: TxOptions,
    ) -> Result<Answer<BfsResult>, ClientError> {
        use mb::bfs_procedure::{BfsArgs, bfs};
        let args = BfsArgs {
            start,
            direction: dir.as_str().into(),
            edge_labels: names(follow.edges),
            vertex_labels: names(follow.vertices),
            max_depth,
            vertex_limit,
            tx_budget: tx.tx_budget,
            yield_every_us: tx.yield_every_us,
        };
        self.query("bfs", args, |conn, a, reply| {
            conn.procedures.bfs_then(
                a.start,
                a.direction,
                a.edge_labels,
                a.vertex_labels,
                a.max_depth,
                a.vertex_limit,
                a.tx_budget,
                a.yield_every_us,
                answer(reply),
            )
        })
    }

    /// Depth-first search from `start` (neighbors in ascending id order): the visited count,
    /// the deepest discovery and the first `vertex_limit` vertices in preorder.
    pub fn dfs(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        vertex_limit: u32,
        tx: TxOptions,
    ) -> Result<Answer<DfsResult>, ClientError> {
        self.dfs_over(start, dir, Follow::ALL, max_depth, vertex_limit, tx)
    }

    /// [`Self::dfs`] over the edges and into the vertices `follow` names.
    pub fn dfs_over(
        &self,
        start: u64,
        dir: Direction,
        follow: Follow,
        max_depth: Option<u32>,
        vertex_limit: u32,
        tx: TxOptions,
    ) -> Result<Answer<DfsResult>, ClientError> {
        use mb::dfs_procedure::{DfsArgs, dfs};
        let args = DfsArgs {
            start,
            direction: dir.as_str().into(),
            edge_labels: names(follow.edges),
            vertex_labels: names(follow.vertices),
            max_depth,
            vertex_limit,
            tx_budget: tx.tx_budget,
            yield_every_us: tx.yield_every_us,
        };
        self.query("dfs", args, |conn, a, reply| {
            conn.procedures.dfs_then(
                a.start,
                a.direction,
                a.edge_labels,
                a.vertex_labels,
                a.max_depth,
                a.vertex_limit,
                a.tx_budget,
                a.yield_every_us,
                answer(reply),
            )
        })
    }

    /// [`Self::bfs`] by the Stage-1 baseline: every level scans every edge, in one transaction.
    pub fn bfs_stage1(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Answer<BfsResult>, ClientError> {
        use mb::bfs_full_scan_procedure::{BfsFullScanArgs, bfs_full_scan};
        let args = BfsFullScanArgs {
            start,
            direction: dir.as_str().into(),
            max_depth,
        };
        self.query("bfs_full_scan", args, |conn, a, reply| {
            conn.procedures
                .bfs_full_scan_then(a.start, a.direction, a.max_depth, answer(reply))
        })
    }

    /// A path of fewest hops from `source` to `target` (at most `max_depth`), by balanced
    /// bidirectional BFS in short transactions; its `status` says whether one was found, or
    /// why not.
    pub fn shortest_path(
        &self,
        source: u64,
        target: u64,
        dir: Direction,
        max_depth: Option<u32>,
        tx: TxOptions,
    ) -> Result<Answer<PathResult>, ClientError> {
        self.shortest_path_over(source, target, dir, Follow::ALL, max_depth, tx)
    }

    /// [`Self::shortest_path`] over the edges and into the vertices `follow` names.
    pub fn shortest_path_over(
        &self,
        source: u64,
        target: u64,
        dir: Direction,
        follow: Follow,
        max_depth: Option<u32>,
        tx: TxOptions,
    ) -> Result<Answer<PathResult>, ClientError> {
        use mb::shortest_path_procedure::{ShortestPathArgs, shortest_path};
        let args = ShortestPathArgs {
            source,
            target,
            direction: dir.as_str().into(),
            edge_labels: names(follow.edges),
            vertex_labels: names(follow.vertices),
            max_depth,
            tx_budget: tx.tx_budget,
            yield_every_us: tx.yield_every_us,
        };
        self.query("shortest_path", args, |conn, a, reply| {
            conn.procedures.shortest_path_then(
                a.source,
                a.target,
                a.direction,
                a.edge_labels,
                a.vertex_labels,
                a.max_depth,
                a.tx_budget,
                a.yield_every_us,
                answer(reply),
            )
        })
    }

    /// A path of least total weight from `source` to `target` over the edges and vertices
    /// `follow` names, by bidirectional Dijkstra.
    pub fn weighted_shortest_path(
        &self,
        source: u64,
        target: u64,
        dir: Direction,
        follow: Follow,
        tx: TxOptions,
    ) -> Result<Answer<WeightedPathResult>, ClientError> {
        use mb::weighted_shortest_path_procedure::{
            WeightedShortestPathArgs, weighted_shortest_path,
        };
        let args = WeightedShortestPathArgs {
            source,
            target,
            direction: dir.as_str().into(),
            edge_labels: names(follow.edges),
            vertex_labels: names(follow.vertices),
            tx_budget: tx.tx_budget,
            yield_every_us: tx.yield_every_us,
        };
        self.query("weighted_shortest_path", args, |conn, a, reply| {
            conn.procedures.weighted_shortest_path_then(
                a.source,
                a.target,
                a.direction,
                a.edge_labels,
                a.vertex_labels,
                a.tx_budget,
                a.yield_every_us,
                answer(reply),
            )
        })
    }

    /// [`Self::shortest_path`] by the Stage-1 baseline: every level scans every edge, in one
    /// transaction.
    pub fn shortest_path_stage1(
        &self,
        source: u64,
        target: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Answer<PathResult>, ClientError> {
        use mb::shortest_path_full_scan_procedure::{
            ShortestPathFullScanArgs, shortest_path_full_scan,
        };
        let args = ShortestPathFullScanArgs {
            source,
            target,
            direction: dir.as_str().into(),
            max_depth,
        };
        self.query("shortest_path_full_scan", args, |conn, a, reply| {
            conn.procedures.shortest_path_full_scan_then(
                a.source,
                a.target,
                a.direction,
                a.max_depth,
                answer(reply),
            )
        })
    }

    /// Reducer-style Stage-1 BFS: the reducer writes per-level counts, read back with SQL.
    pub fn bfs_stage1_reducer(
        &self,
        query_id: u64,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Vec<u64>, ClientError> {
        use mb::bfs_full_scan_reducer_reducer::{BfsFullScanReducerArgs, bfs_full_scan_reducer};
        let args = BfsFullScanReducerArgs {
            query_id,
            start,
            direction: dir.as_str().into(),
            max_depth,
        };
        self.reducer("bfs_full_scan_reducer", args, false, |conn, a, reply| {
            conn.reducers.bfs_full_scan_reducer_then(
                a.query_id,
                a.start,
                a.direction,
                a.max_depth,
                move |_, r| reply(flatten(r)),
            )
        })?;
        self.result_rows(query_id)
    }

    /// Reducer-style Stage-1 shortest path: the path's vertices (empty: none), read with SQL.
    pub fn shortest_path_stage1_reducer(
        &self,
        query_id: u64,
        source: u64,
        target: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Result<Vec<u64>, ClientError> {
        use mb::shortest_path_full_scan_reducer_reducer::{
            ShortestPathFullScanReducerArgs, shortest_path_full_scan_reducer,
        };
        let args = ShortestPathFullScanReducerArgs {
            query_id,
            source,
            target,
            direction: dir.as_str().into(),
            max_depth,
        };
        self.reducer(
            "shortest_path_full_scan_reducer",
            args,
            false,
            |conn, a, reply| {
                conn.reducers.shortest_path_full_scan_reducer_then(
                    a.query_id,
                    a.source,
                    a.target,
                    a.direction,
                    a.max_depth,
                    move |_, r| reply(flatten(r)),
                )
            },
        )?;
        self.result_rows(query_id)
    }

    /// The `traversal_result` values of `query_id`, in ordinal order (SQL over HTTP).
    fn result_rows(&self, query_id: u64) -> Result<Vec<u64>, ClientError> {
        let sql =
            format!("SELECT ordinal, value FROM traversal_result WHERE query_id = {query_id}");
        let results = self.server.sql(&self.database, &sql)?;
        let mut rows: Vec<(u64, u64)> = Vec::new();
        for row in results.iter().flat_map(|r| &r.rows) {
            let pair: (u64, u64) =
                serde_json::from_value(row.clone()).map_err(|e| ServerError::Decode {
                    what: "traversal_result rows".into(),
                    message: format!("{e}: {row}"),
                })?;
            rows.push(pair);
        }
        rows.sort_unstable();
        Ok(rows.into_iter().map(|(_, value)| value).collect())
    }
}

/// A reducer callback's outcome as a reply: the host's failure to run it as the error text
/// (`Err`), the reducer's own result as the value.
fn reducer_failed(reducer: &str, message: String) -> ClientError {
    ClientError::ReducerFailed {
        reducer: reducer.to_string(),
        message,
    }
}

/// A reducer call sent by [`GraphDb::send_add_edges`] whose outcome has not been taken yet.
pub struct ReducerInFlight {
    reducer: &'static str,
    state: InFlight,
}

enum InFlight {
    Answered(Result<(), ClientError>),
    Sent(Arc<WsLink>, Pending<Result<(), String>>),
}

impl ReducerInFlight {
    /// Waits for the reducer's outcome: an error if it failed (nothing it wrote is kept) or
    /// its connection dropped first.
    pub fn wait(self) -> Result<(), ClientError> {
        match self.state {
            InFlight::Answered(outcome) => outcome,
            InFlight::Sent(link, pending) => link
                .wait(self.reducer, pending)?
                .map_err(|message| reducer_failed(self.reducer, message)),
        }
    }
}

/// Refuses, before sending, a call the module would refuse for its size (see
/// [`MAX_BATCH_EDGES`]). Over the WebSocket a call past the server's message limit (a few
/// million edges) would close the connection without a word; one a little over the module's
/// limit would cross the network for nothing.
fn check_batch(function: &str, items: usize) -> Result<(), ClientError> {
    if items > MAX_BATCH_EDGES {
        return Err(ClientError::NotSent {
            function: function.into(),
            message: format!(
                "batch of {items} exceeds the limit of {MAX_BATCH_EDGES} per call; split it \
                 (GraphDb::load does)"
            ),
        });
    }
    Ok(())
}

/// Sends `add_labelled_edges` over the WebSocket, its outcome going to `reply`.
fn send_labelled(
    conn: &DbConnection,
    a: mb::add_labelled_edges_reducer::AddLabelledEdgesArgs,
    reply: Reply<Result<(), String>>,
) -> spacetimedb_sdk::Result<()> {
    use mb::add_labelled_edges_reducer::add_labelled_edges;
    conn.reducers.add_labelled_edges_then(
        a.src,
        a.dst,
        a.label_names,
        a.labels,
        a.weights,
        move |_, r| reply(flatten(r)),
    )
}

fn flatten(
    r: Result<Result<(), String>, spacetimedb_sdk::__codegen::InternalError>,
) -> Result<Result<(), String>, String> {
    r.map_err(|e| e.to_string())
}

/// A procedure callback that forwards its outcome to `reply`.
fn answer<T: Send + 'static>(
    reply: Reply<T>,
) -> impl FnOnce(&mb::ProcedureEventContext, Result<T, spacetimedb_sdk::__codegen::InternalError>)
+ Send
+ 'static {
    move |_, r| reply(r.map_err(|e| e.to_string()))
}

/// The names `labels` (indices into `names`) use, each once, and `labels` renumbered into them:
/// a call carries only the names its rows use.
fn used_names(names: &[String], labels: &[u32]) -> (Vec<String>, Vec<u32>) {
    let mut used = Vec::new();
    let mut index = std::collections::HashMap::new();
    let labels = labels
        .iter()
        .map(|&at| {
            *index.entry(at).or_insert_with(|| {
                used.push(names[at as usize].clone());
                used.len() as u32 - 1
            })
        })
        .collect();
    (used, labels)
}

/// End of the batch of edges starting at `start`: at most `batch` (≥ 1, ≤ [`MAX_BATCH_EDGES`])
/// edges, and with `body_limit` a JSON body under [`MAX_BODY_BYTES`].
fn batch_end(edges: &EdgeList, start: usize, batch: usize, body_limit: bool) -> usize {
    rows_end(
        start..edges.len(),
        batch,
        body_limit,
        &edges.label_names,
        |i| edges.labels.get(i).copied(),
        |i| {
            let label = edges.labels.get(i).map_or(0, |&at| digits(at.into()));
            let weight = if edges.weights.is_empty() { 0 } else { 16 };
            digits(edges.src[i]) + digits(edges.dst[i]) + label + weight
        },
    )
}

/// End of a batch of `rows` starting at `rows.start`: at most `batch` (≥ 1, ≤
/// [`MAX_BATCH_EDGES`]) rows, and with `body_limit` a JSON body under [`MAX_BODY_BYTES`], where
/// row `i` costs `row_bytes(i)` and its label (`label(i)`, an index into `names`) the name's
/// JSON the first time the batch uses it.
fn rows_end(
    rows: std::ops::Range<usize>,
    batch: usize,
    body_limit: bool,
    names: &[String],
    label: impl Fn(usize) -> Option<u32>,
    row_bytes: impl Fn(usize) -> usize,
) -> usize {
    let start = rows.start;
    let end = rows.end.min(start + batch.clamp(1, MAX_BATCH_EDGES));
    if !body_limit {
        return end;
    }
    // A name is at most 64 bytes, JSON-escaped at most 6 times longer.
    let mut bytes = 64;
    let mut named = std::collections::HashSet::new();
    for i in start..end {
        if let Some(at) = label(i)
            && named.insert(at)
        {
            bytes += 6 * names[at as usize].len() + 3;
        }
        bytes += row_bytes(i);
        if bytes > MAX_BODY_BYTES {
            // At least one row a call (one row never comes near the limit).
            return i.max(start + 1);
        }
    }
    end
}

/// Bytes of `v` in a JSON list: its digits and a comma.
fn digits(v: u64) -> usize {
    v.checked_ilog10().unwrap_or(0) as usize + 2
}

fn names(labels: &[&str]) -> Vec<String> {
    labels.iter().map(|&l| l.to_owned()).collect()
}

/// Reports a bulk load perhaps under way after a call that begins or finishes one (or the check
/// after the last finishing call) failed with `e`: if its answer was lost, it may have
/// committed.
fn perhaps_under_way(e: &ClientError, progress: &mut impl FnMut(LoadProgress)) {
    if is_transient(e) {
        progress(LoadProgress::BulkLoad { certain: false });
    }
}

/// Failures worth retrying: the connection dropped, or the server was briefly unavailable.
/// How many of a load's acknowledged edges are known to be durable. Where every answer comes
/// once its write is durable (a WebSocket with confirmed reads, the server's default), all of
/// them; elsewhere those a confirmed read has followed, made at most once per
/// [`DurableMark::EVERY`] and when the load ends.
struct DurableMark {
    /// Whether answers may come before durability, so that confirmed reads are needed.
    confirm: bool,
    /// Edges known durable.
    at: usize,
    /// When the last confirmed read (or the load) began.
    confirmed: Instant,
}

impl DurableMark {
    const EVERY: Duration = Duration::from_secs(1);

    fn new(confirm: bool) -> Self {
        Self {
            confirm,
            at: 0,
            confirmed: Instant::now(),
        }
    }

    /// The edges up to `end` are acknowledged: durable now, or once a confirmed read is due.
    fn acknowledged(
        &mut self,
        end: usize,
        confirm: impl FnOnce() -> Result<(), ClientError>,
    ) -> Result<(), ClientError> {
        if self.confirm && self.confirmed.elapsed() < Self::EVERY {
            return Ok(()); // Not due yet.
        }
        self.finished(end, confirm)
    }

    /// The edges up to `end` are acknowledged and nothing more will be: confirms them now.
    fn finished(
        &mut self,
        end: usize,
        confirm: impl FnOnce() -> Result<(), ClientError>,
    ) -> Result<(), ClientError> {
        if self.confirm {
            let began = Instant::now();
            confirm()?;
            self.confirmed = began;
        }
        self.at = end;
        Ok(())
    }
}

fn is_transient(e: &ClientError) -> bool {
    match e {
        ClientError::Server(ServerError::Unreachable { .. } | ServerError::NoAnswer { .. }) => true,
        // A refusal of the connection (unknown database, refused token) stays one.
        ClientError::Connection(e) => e.status.is_none(),
        ClientError::Server(ServerError::Http { status, .. }) => *status == 502 || *status == 503,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal is a `std::error::Error`, so that it passes through `?` into `Box<dyn Error>`
    /// (or `anyhow`), also from code that calls the generated bindings directly.
    /// Where answers may come before durability, the mark moves only with a confirmed read:
    /// at most once a second, always at the end, never past a read that failed.
    #[test]
    fn the_durable_mark_follows_confirmed_reads() {
        let never = || -> Result<(), ClientError> { panic!("no confirmed read is due") };
        let ok = || Ok(());
        let down = || {
            Err(ClientError::Server(ServerError::NoAnswer {
                what: "SQL on `graph`".into(),
                message: "connection reset".into(),
            }))
        };
        // Confirmed reads on the connection: every acknowledgement is durable.
        let mut mark = DurableMark::new(false);
        mark.acknowledged(10, never).unwrap();
        assert_eq!(mark.at, 10);

        let mut mark = DurableMark::new(true);
        mark.acknowledged(10, never).unwrap();
        assert_eq!(mark.at, 0, "a second has not passed");
        mark.confirmed -= DurableMark::EVERY;
        assert!(mark.acknowledged(20, down).is_err());
        assert_eq!(mark.at, 0, "the read failed");
        mark.acknowledged(30, ok).unwrap();
        assert_eq!(mark.at, 30);
        mark.acknowledged(40, never).unwrap();
        assert_eq!(mark.at, 30);
        mark.finished(50, ok).unwrap();
        assert_eq!(mark.at, 50);
    }

    #[test]
    fn a_refusal_passes_through_question_mark() {
        fn refused() -> Result<(), Box<dyn std::error::Error>> {
            Err(GraphError::UnknownVertex(7))?
        }
        assert_eq!(refused().unwrap_err().to_string(), "unknown vertex 7");
    }

    #[test]
    fn batches_respect_both_limits() {
        let mut small = EdgeList::new();
        for i in 0..450_000u64 {
            small.push(i % 10, i % 7);
        }
        assert_eq!(batch_end(&small, 0, MAX_BATCH_EDGES, true), MAX_BATCH_EDGES);
        let mut big = EdgeList::new();
        for i in 0..200_000u64 {
            big.push(u64::MAX - i, u64::MAX);
        }
        let end = batch_end(&big, 0, MAX_BATCH_EDGES, true);
        let body = serde_json::json!([&big.src[..end], &big.dst[..end]]).to_string();
        assert!(
            body.len() <= MAX_BODY_BYTES && end > 40_000,
            "{end} edges, {} bytes",
            body.len()
        );
        assert_eq!(batch_end(&big, 0, MAX_BATCH_EDGES, false), MAX_BATCH_EDGES);
        assert_eq!(batch_end(&big, big.len(), MAX_BATCH_EDGES, true), big.len());
        assert_eq!(
            batch_end(&small, 10, 1_000, false),
            1_010,
            "a smaller batch"
        );
        assert_eq!(
            batch_end(&small, 0, 0, false),
            1,
            "at least one edge per call"
        );
        assert_eq!(batch_end(&small, 0, usize::MAX, false), MAX_BATCH_EDGES);
    }

    #[test]
    fn a_call_carries_only_the_names_it_uses() {
        let names: Vec<String> = ["", "a", "b", "c"].map(String::from).to_vec();
        assert_eq!(
            used_names(&names, &[3, 1, 3, 0]),
            (["c", "a", ""].map(String::from).to_vec(), vec![0, 1, 0, 2])
        );
        assert_eq!(used_names(&names, &[]), (vec![], vec![]));
    }

    #[test]
    fn transports_parse() {
        for kind in [TransportKind::Ws, TransportKind::Http] {
            assert_eq!(kind.as_str().parse::<TransportKind>(), Ok(kind));
        }
        assert!("carrier-pigeon".parse::<TransportKind>().is_err());
    }
}

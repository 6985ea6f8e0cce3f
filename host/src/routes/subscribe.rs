//! `GET /v1/database/:name_or_identity/subscribe`: the WebSocket route the client SDKs connect
//! to, with the official server's query parameters, subprotocols, keep-alive and limits.
//!
//! The protocol itself is the engine's: `spacetimedb-core`'s `ClientConnection` runs the
//! `client_connected` / `client_disconnected` lifecycle, decodes and executes every client
//! message (reducer and procedure calls, subscriptions, one-off queries) and queues the server
//! messages, which this actor serialises with the engine's own encoders. What is left here is
//! the socket: negotiation (the handshake itself is in `websocket.rs`), the read/write loop,
//! pings, the idle timeout, and a disconnect that runs however the connection ends.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use spacetimedb::client::messages::{SerializeBuffer, serialize_v2, serialize_v3};
use spacetimedb::client::{
    ClientActorId, ClientConfig, ClientConnection, ClientConnectionReceiver, DataMessage,
    OutboundMessage, Protocol, WsVersion,
};
use spacetimedb_client_api_messages::websocket::common::Compression;
use spacetimedb_client_api_messages::websocket::{v2, v3};
use spacetimedb_lib::connection_id::ConnectionIdForUrl;
use spacetimedb_lib::identity::AuthCtx;
use spacetimedb_lib::{ConnectionId, bsatn};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::websocket::{Refusal, Socket, Upgrade, close, refusal, refuse};
use super::{App, HttpError, Result, Stop};
use crate::auth::Caller;
use crate::control::{Target, Use};
use crate::timer_pump::Busy;

/// Keep-alive and limits of WebSocket connections; the defaults are the official server's.
#[derive(Debug, Clone, Copy)]
pub struct WebSocketOptions {
    /// A client from which nothing arrived for this long is pinged (once until it answers).
    pub ping_interval: Duration,
    /// A connection from which nothing (not even a pong) arrived for this long is closed.
    pub idle_timeout: Duration,
    /// Largest message a client may send.
    pub max_message_bytes: usize,
}

impl Default for WebSocketOptions {
    fn default() -> Self {
        Self {
            ping_interval: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(30),
            max_message_bytes: 32 * 1024 * 1024,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct SubscribeQuery {
    /// Chosen by the client (hex); a random one otherwise. Zero is reserved.
    connection_id: Option<ConnectionIdForUrl>,
    #[serde(default)]
    compression: Compression,
    /// Only changes protocol v1's updates, which this host does not speak; accepted and ignored.
    #[serde(default)]
    #[allow(dead_code)]
    light: bool,
    /// Send a transaction's updates only once it is durable. Default: on, as on the official
    /// server for protocols v2 and v3 (an in-memory database has nothing to wait for).
    confirmed: Option<bool>,
}

/// The subprotocols served, in the order of preference the official server uses. Both carry
/// v2 messages; v3 batches several server messages per frame.
const PROTOCOLS: [(&str, WsVersion); 2] = [
    (v3::BIN_PROTOCOL, WsVersion::V3),
    (v2::BIN_PROTOCOL, WsVersion::V2),
];

pub(super) async fn subscribe(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
    Query(query): Query<SubscribeQuery>,
    upgrade: std::result::Result<Upgrade, Response>,
) -> Result<Response> {
    let connection_id = query
        .connection_id
        .map(ConnectionId::from)
        .unwrap_or_else(|| ConnectionId::from_le_byte_array(rand::random()));
    if connection_id == ConnectionId::ZERO {
        return Err(HttpError::bad_request(
            "Invalid connection ID: the all-zeros ConnectionId is reserved.",
        ));
    }
    let db = app.control.resolve(&Target::parse(&name_or_identity)?)?;
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(refusal) => return Ok(refusal),
    };
    let (protocol, version) = upgrade
        .choose(&PROTOCOLS)
        .ok_or_else(|| HttpError::bad_request("no valid protocol selected"))?;
    let config = ClientConfig {
        protocol: Protocol::Binary,
        version,
        compression: query.compression,
        tx_update_full: true,
        confirmed_reads: query.confirmed.unwrap_or(true),
    };
    let user = app.control.use_replica(&db);
    let module_rx = app.control.watch_module(&db).await?;
    let auth = caller.connection_auth().map_err(HttpError::internal)?;
    let client_id = ClientActorId {
        identity: caller.identity,
        connection_id,
        name: app.clients.next_client_name(),
    };
    let sql_auth = AuthCtx::new(db.owner_identity, caller.identity);
    let options = app.websocket;
    let stopping = app.stopping.subscribe();

    // The 101 goes out first; the rest runs on the upgraded socket.
    // A message is one frame from the SDK, so frames may be as large as messages (the socket
    // library's own default, 16 MiB, cut larger calls off without a word).
    let limits = WebSocketConfig::default()
        .max_message_size(Some(options.max_message_bytes))
        .max_frame_size(Some(options.max_message_bytes));
    let busy = app.timer_pump.busy();
    Ok(
        upgrade.accept(protocol, limits, move |mut socket| async move {
            let mut module_rx = module_rx;
            let connected = match ClientConnection::call_client_connected_maybe_reject(
                &mut module_rx,
                client_id,
                auth.clone(),
            )
            .await
            {
                Ok(connected) => connected,
                Err(e) => {
                    log::info!("websocket: {client_id:?} refused by client_connected: {e}");
                    let close = close(CloseCode::Policy, format!("connection refused: {e}"));
                    let _ = socket.send(close).await;
                    return;
                }
            };
            let initial = v2::ServerMessage::InitialConnection(v2::InitialConnection {
                identity: caller.identity,
                connection_id,
                token: caller.token.into(),
            });
            let stops = Stops {
                host: stopping,
                database: user,
            };
            let actor = move |client, receiver| {
                run(client, receiver, socket, options, initial, stops, busy)
            };
            ClientConnection::spawn(
                client_id,
                auth,
                sql_auth,
                config,
                db.replica_id,
                module_rx,
                actor,
                connected,
            )
            .await;
        }),
    )
}

/// Disconnects the client (running `client_disconnected` and dropping its subscriptions) when
/// dropped, unless [`Disconnect::now`] already did: the actor's task may be aborted (a kicked
/// client, a shutdown) at any await point.
struct Disconnect(Option<ClientConnection>);

impl Disconnect {
    async fn now(mut self) {
        if let Some(client) = self.0.take() {
            client.disconnect().await;
        }
    }
}

impl Drop for Disconnect {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            tokio::spawn(client.disconnect());
        }
    }
}

/// Why the read/write loop ended, and what the client is told.
enum End {
    /// The client closed, or the socket broke: nothing more can be said.
    Gone,
    /// Close the socket with this frame.
    Close(Message),
    /// The socket library refused the client's input (a message too large, a broken frame).
    Refused(Refusal),
}

/// The connection's actor: the first message, then the read/write loop, then the disconnect.
async fn run(
    client: ClientConnection,
    mut outgoing: ClientConnectionReceiver,
    mut socket: Socket,
    options: WebSocketOptions,
    initial: v2::ServerMessage,
    // Held until the connection has closed (the host's stop, and a delete, wait for that).
    stops: Stops,
    // Keeps the timer pump running while the connection is open.
    _busy: Busy,
) {
    let guard = Disconnect(Some(client.clone()));
    let end = match client.send_message(None, OutboundMessage::V2(initial)) {
        Ok(()) => serve(client, &mut outgoing, &mut socket, options, stops.clone()).await,
        Err(e) => End::Close(close(CloseCode::Error, e.to_string())),
    };
    outgoing.close();
    // The engine lets the client go first: what is left is only the socket's goodbye.
    guard.now().await;
    match end {
        End::Gone => {}
        End::Close(frame) => {
            let _ = send_within(&mut socket, frame, options.idle_timeout).await;
        }
        End::Refused(refusal) => refuse(&mut socket, refusal).await,
    }
}

/// How many client messages may wait for the one being evaluated before the socket stops
/// reading (the SDK pipelines a few calls; a client that floods is slowed, not buffered).
const QUEUED_MESSAGES: usize = 64;

/// What ends a connection from the server's side: the host stopping, and its database being
/// deleted or reset (a [`crate::control::Use`]).
#[derive(Clone)]
struct Stops {
    host: watch::Receiver<Stop>,
    database: Use,
}

/// How many requests a client message holds (v3 frames may carry several), each of which gets
/// exactly one answer (see [`is_answer`]); 0 for a frame the engine will refuse anyway.
fn requests_in(data: &DataMessage, version: WsVersion) -> usize {
    match (data, version) {
        (DataMessage::Binary(bytes), WsVersion::V3) => {
            let mut rest = &bytes[..];
            let mut n = 0;
            while !rest.is_empty() && bsatn::from_reader::<v2::ClientMessage>(&mut rest).is_ok() {
                n += 1;
            }
            n
        }
        (DataMessage::Binary(bytes), _) => usize::from(!bytes.is_empty()),
        (DataMessage::Text(_), _) => 1,
    }
}

/// Whether `message` answers a request: every v2 client message gets exactly one of these (a
/// subscription error may also come unasked, which at worst ends a stopping connection early).
fn is_answer(message: &OutboundMessage) -> bool {
    use v2::ServerMessage as M;
    matches!(
        message,
        OutboundMessage::V2(
            M::SubscribeApplied(_)
                | M::UnsubscribeApplied(_)
                | M::SubscriptionError(_)
                | M::OneOffQueryResult(_)
                | M::ReducerResult(_)
                | M::ProcedureResult(_)
                | M::SubscribeBatchApplied(_)
        )
    )
}

/// Sends `message` unless the client takes no frames for `within`: a client that stopped
/// reading would otherwise hold its connection, and the messages queued for it, for good.
async fn send_within(
    socket: &mut Socket,
    message: Message,
    within: Duration,
) -> Result<(), String> {
    match tokio::time::timeout(within, socket.send(message)).await {
        Ok(sent) => sent.map_err(|e| e.to_string()),
        Err(_) => Err(format!("the client read nothing for {within:?}")),
    }
}

/// The engine's handling of one client message, under way.
type Evaluation = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Evaluates the queued messages one at a time, in the order they came, while each finishes at
/// once (the usual case: a call is only queued in the engine); one that has to wait (for a
/// procedure instance, say) is kept in `evaluating`, which the loop polls beside the socket, so
/// it holds up the messages behind it, as on the official server, but not the socket, whose
/// pings, pongs and outgoing messages carry on. The engine's refusal of a message ends the
/// connection with its reason. Evaluated in order is not answered in order: calls queued in
/// the engine run as it schedules them, procedures on several instances at once, and the
/// client matches answers to calls by request id.
async fn evaluate_queued(
    client: &ClientConnection,
    queued: &mut VecDeque<(DataMessage, std::time::Instant)>,
    evaluating: &mut Option<Evaluation>,
) -> Result<(), String> {
    while evaluating.is_none() {
        let Some((data, received)) = queued.pop_front() else {
            return Ok(());
        };
        let client = client.clone();
        let mut evaluation: Evaluation = Box::pin(async move {
            client
                .handle_message(data, received)
                .await
                .map_err(|e| e.to_string())
        });
        // Polled once here, in this task (so a wake-up comes back to the loop).
        match std::future::poll_fn(|cx| Poll::Ready(evaluation.as_mut().poll(cx))).await {
            Poll::Ready(done) => done?,
            Poll::Pending => *evaluating = Some(evaluation),
        }
    }
    Ok(())
}

/// Reads client frames and hands them to the engine, writes the engine's messages, pings, and
/// watches for idleness and for the module going away, until one of those ends the connection.
/// Once the host is draining, or the database is being deleted or reset, it reads nothing more,
/// and closes when every request it took has been answered (the engine answers a call once it
/// has run, and, with confirmed reads, once its transaction is durable); once the host is
/// closing, at once.
async fn serve(
    client: ClientConnection,
    outgoing: &mut ClientConnectionReceiver,
    socket: &mut Socket,
    options: WebSocketOptions,
    mut stops: Stops,
) -> End {
    let mut module_watch = client.clone();
    let mut last_heard = Instant::now();
    let mut awaiting_pong = false;
    let mut messages = Vec::new();
    let mut buffer = Some(SerializeBuffer::new(client.config));
    let mut queued = VecDeque::new();
    let mut evaluating: Option<Evaluation> = None;
    let mut was_reading = true;
    // Requests taken and not answered yet.
    let mut unanswered = 0usize;
    // The host's stop as last seen (a dropped sender, the host going away, is a close).
    let mut stop = Stop::Running;
    // Whether the database is being deleted or reset (a dropped sender: it was).
    let mut retired = false;
    loop {
        stop = stop.max(*stops.host.borrow());
        retired = retired || *stops.database.borrow();
        if retired {
            stop = stop.max(Stop::Draining);
        }
        let answered_all = queued.is_empty() && evaluating.is_none() && unanswered == 0;
        if stop == Stop::Closing || (stop == Stop::Draining && answered_all) {
            let why = match retired {
                true => "the database was deleted or reset",
                false => "the server is stopping",
            };
            return End::Close(close(CloseCode::Away, why));
        }
        let reading = queued.len() < QUEUED_MESSAGES && stop == Stop::Running;
        if !reading || !was_reading {
            // Not reading is the server's choice, not the client's silence: its pongs wait
            // unread behind the calls it queued. Its idle time starts once reading resumes.
            last_heard = Instant::now();
        }
        was_reading = reading;
        let idle_deadline = last_heard + options.idle_timeout;
        let ping_due = last_heard + options.ping_interval;
        tokio::select! {
            frame = socket.next(), if reading => {
                let frame = match frame {
                    Some(Err(e)) => {
                        log::info!("websocket: closing {:?}: {e}", client.id);
                        return refusal(&e).map_or(End::Gone, End::Refused);
                    }
                    None | Some(Ok(Message::Close(_))) => return End::Gone,
                    Some(Ok(frame)) => frame,
                };
                last_heard = Instant::now();
                let data = match frame {
                    Message::Binary(bytes) => DataMessage::Binary(bytes),
                    Message::Text(text) => DataMessage::Text(text.as_str().into()),
                    Message::Pong(_) => {
                        awaiting_pong = false;
                        continue;
                    }
                    // Answered by the socket itself; raw frames are never read.
                    Message::Ping(_) | Message::Close(_) | Message::Frame(_) => continue,
                };
                // Results come back through `outgoing`.
                unanswered += requests_in(&data, client.config.version);
                queued.push_back((data, std::time::Instant::now()));
                if let Err(e) = evaluate_queued(&client, &mut queued, &mut evaluating).await {
                    log::info!("websocket: closing {:?}: {e}", client.id);
                    return End::Close(close(CloseCode::Error, e));
                }
            }
            evaluated = async {
                match evaluating.as_mut() {
                    Some(evaluation) => evaluation.await,
                    None => std::future::pending().await,
                }
            } => {
                evaluating = None;
                let evaluated = match evaluated {
                    Ok(()) => evaluate_queued(&client, &mut queued, &mut evaluating).await,
                    refused => refused,
                };
                if let Err(e) = evaluated {
                    log::info!("websocket: closing {:?}: {e}", client.id);
                    return End::Close(close(CloseCode::Error, e));
                }
            }
            n = outgoing.recv_many(&mut messages, ClientConnectionReceiver::DEFAULT_RECV_MANY_LIMIT) => {
                if n == 0 {
                    // The engine dropped the connection (kicked, or the database went away).
                    return End::Close(close(CloseCode::Away, "the server closed the connection"));
                }
                let answers = messages.iter().filter(|m| is_answer(m)).count();
                unanswered = unanswered.saturating_sub(answers);
                let sent =
                    write(&client, socket, &mut buffer, &mut messages, options.idle_timeout).await;
                if let Err(e) = sent {
                    log::info!("websocket: writing to {:?} failed: {e}", client.id);
                    return End::Gone;
                }
            }
            // Only a silent client is pinged (the official server pings every client every
            // interval). The SDK's socket keeps Nagle's algorithm on, so a call sent just after
            // its pong waits for our delayed ACK of the pong: 40 ms, which stalled a few calls
            // once per interval under the mixed workload (results/dblp-mixed).
            _ = tokio::time::sleep_until(ping_due), if reading && !awaiting_pong => {
                // One unanswered ping at a time; the idle timeout decides when it is gone.
                awaiting_pong = true;
                let ping = Message::Ping(Bytes::new());
                if send_within(socket, ping, options.idle_timeout).await.is_err() {
                    return End::Gone;
                }
            }
            _ = tokio::time::sleep_until(idle_deadline), if reading => {
                return End::Close(close(CloseCode::Away, "idle timeout"));
            }
            _ = module_watch.watch_module_host() => {
                return End::Close(close(CloseCode::Away, "module exited"));
            }
            changed = stops.host.changed() => {
                if changed.is_err() {
                    stop = Stop::Closing;
                }
            }
            changed = stops.database.changed(), if !retired => {
                retired = changed.is_err();
            }
        }
    }
}

/// Encodes `messages` with the engine's serialisers (one frame each on v2, one frame for all
/// on v3) and sends them, reusing `buffer` when the socket has let go of the last frame. The
/// frames go out in one write (the socket library writes early only past its buffer's size):
/// under load a batch holds answers to many calls.
async fn write(
    client: &ClientConnection,
    socket: &mut Socket,
    buffer: &mut Option<SerializeBuffer>,
    messages: &mut Vec<OutboundMessage>,
    within: Duration,
) -> Result<(), String> {
    let config = client.config;
    let module = client.module();
    let pool = &module.subscriptions().bsatn_rlb_pool;
    // Only v1 connections are sent v1 messages, and this route makes none.
    let mut v2_messages = messages.drain(..).filter_map(|message| match message {
        OutboundMessage::V2(message) => Some(message),
        OutboundMessage::V1(_) => None,
    });
    let frames = async {
        loop {
            let buf = buffer
                .take()
                .unwrap_or_else(|| SerializeBuffer::new(config));
            let (in_use, bytes) = match config.version {
                WsVersion::V3 => serialize_v3(pool, buf, v2_messages.by_ref(), config.compression),
                _ => match v2_messages.next() {
                    Some(message) => serialize_v2(pool, buf, message, config.compression),
                    None => break,
                },
            };
            socket.feed(Message::Binary(bytes)).await?;
            *buffer = in_use.try_reclaim();
            if matches!(config.version, WsVersion::V3) {
                break;
            }
        }
        socket.flush().await
    };
    match tokio::time::timeout(within, frames).await {
        Ok(sent) => sent.map_err(|e| e.to_string()),
        Err(_) => Err(format!("the client read nothing for {within:?}")),
    }
}

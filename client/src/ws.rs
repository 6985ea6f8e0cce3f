//! One WebSocket connection to the module through SpacetimeDB's Rust SDK and the generated
//! bindings, shared by every call of a [`crate::graph::GraphDb`], reopened when it drops.
//!
//! The SDK delivers results to callbacks on the thread that processes the connection's
//! messages (for connections opened outside a Tokio runtime, the one thread that serves every
//! such connection of the process); a call here queues its request, then waits for its
//! callback, so that callers get a plain blocking API while several threads' calls pipeline
//! over the one socket ([`WsLink::send_then`] hands the answer to a callback instead). A call
//! whose connection drops fails with
//! [`ClientError::Connection`], or, when it is safe to send again (queries, idempotent writes),
//! is sent once more on a new connection.
//!
//! A link may instead be driven by its callers ([`Drive::Caller`]): the connection's tasks then
//! run on a runtime of the link's own, on the thread of whichever call waits for an answer, as
//! PostgreSQL's synchronous client drives its socket. A call then wakes no other thread.

use crate::graph::ClientError;
use crate::module_bindings::DbConnection;
use spacetimedb_sdk::DbContext as _;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};
use std::time::{Duration, Instant};

/// How often a waiting call checks that its connection is still up.
const LIVENESS_POLL: Duration = Duration::from_millis(50);
/// Scheduler passes a caller-driven link runs before each call, so that a close that arrived
/// meanwhile has gone through the SDK's tasks (socket reader, parser, message processor).
const SETTLE_PASSES: usize = 4;
/// How long a caller-driven connection waits for the server's first message as it opens.
const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// Where a result goes: the SDK calls it from its callback.
pub type Reply<R> = Box<dyn FnOnce(Result<R, String>) + Send>;

/// Queues a request on a connection, arranging for its callback to call the reply.
pub type Request<'a, R> = &'a dyn Fn(&DbConnection, Reply<R>) -> Result<(), spacetimedb_sdk::Error>;

/// Which thread processes a connection's messages (the SDK's `run_async` task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Drive {
    /// A thread shared by the process's connections, at all times: answers, callbacks and
    /// subscription updates arrive whether or not a call waits.
    #[default]
    Background,
    /// The calling thread, while a call waits for its answer. This saves two thread hand-overs
    /// per call (the empty procedure after a pause: 1.0–1.6× what raw frames take, against
    /// 1.6–1.8×, `results/dblp-neighbors-pg/`), but between calls nothing reads the socket, so it
    /// suits blocking request-and-answer use outside a Tokio runtime: callbacks of
    /// [`WsLink::send_then`] are refused, and a connection the server closed while the link
    /// was idle (it closes one silent for 30 s) is noticed, and reopened, at the next call.
    Caller,
}

/// A current-thread runtime that the calls of a [`Drive::Caller`] link drive. It is shut down
/// without waiting when dropped, which may then happen anywhere, even in async code.
struct CallerRuntime(Option<tokio::runtime::Runtime>);

impl CallerRuntime {
    fn new() -> Self {
        Self(Some(
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a Tokio runtime for a caller-driven WebSocket"),
        ))
    }

    fn get(&self) -> &tokio::runtime::Runtime {
        self.0.as_ref().expect("present until dropped")
    }
}

impl Drop for CallerRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Marks a connection down, and the task that processes its messages ended, when dropped: when
/// that task ends, however it ends. Its unanswered `_then` calls then get the loss.
struct Down {
    up: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
    unanswered: Arc<Unanswered>,
}

impl Drop for Down {
    fn drop(&mut self) {
        self.up.store(false, Ordering::Release);
        self.ended.store(true, Ordering::Release);
        self.unanswered.close();
    }
}

/// Tells a `_then` call's reply that no answer will come, and why.
type Fail = Box<dyn FnOnce(ClientError) + Send>;

/// A `_then` call waiting for its answer.
struct Waiting {
    deadline: Instant,
    what: &'static str,
    fail: Fail,
}

/// The calls of [`WsLink::send_then`] on one connection that wait for their answer. The SDK
/// calls a callback only with its answer, so without this a call whose connection closed, or
/// whose server stopped answering, would leave its callback uncalled, and a program that counts
/// its answers waiting for ever: each gets [`Lost::Closed`] when the connection's task ends, or
/// [`Lost::TimedOut`] at its deadline, as a blocking call does.
struct Unanswered {
    /// By call number, hence by deadline; `None` once the connection is down.
    calls: Mutex<Option<BTreeMap<u64, Waiting>>>,
    next: AtomicU64,
    /// The connection's address (for the errors) and its link's timeout.
    to: WsError,
    timeout: Duration,
    /// Whether the task that fails late calls ([`expire`]) runs.
    expiring: AtomicBool,
    /// Wakes that task: a first call registered, or the connection down.
    wake: tokio::sync::Notify,
}

impl Unanswered {
    fn new(to: WsError, timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            calls: Mutex::new(Some(BTreeMap::new())),
            next: AtomicU64::new(0),
            to,
            timeout,
            expiring: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
        })
    }

    /// Registers the call `what`, `fail` to be told if its answer does not come within the
    /// timeout; its number, or `None` when the connection is already down.
    fn register(self: &Arc<Self>, what: &'static str, fail: Fail) -> Option<u64> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let deadline = Instant::now() + self.timeout;
        let mut calls = lock(&self.calls);
        let calls = calls.as_mut()?;
        let first = calls.is_empty();
        calls.insert(
            id,
            Waiting {
                deadline,
                what,
                fail,
            },
        );
        if !self.expiring.swap(true, Ordering::AcqRel) {
            io_runtime().spawn(expire(self.clone()));
        } else if first {
            self.wake.notify_one();
        }
        Some(id)
    }

    /// Forgets call `id`: answered, or not sent.
    fn forget(&self, id: u64) {
        if let Some(calls) = lock(&self.calls).as_mut() {
            calls.remove(&id);
        }
    }

    /// The connection is down: every call waiting gets [`Lost::Closed`], and none registers.
    fn close(&self) {
        let calls = lock(&self.calls).take();
        self.wake.notify_one();
        for (_, call) in calls.into_iter().flatten() {
            fail_one(call.fail, self.lost(Lost::Closed, call.what));
        }
    }

    /// The error for the call `what`, which got no answer.
    fn lost(&self, lost: Lost, what: &str) -> ClientError {
        ClientError::Connection(WsError {
            message: lost.describe(what, self.timeout, true),
            ..self.to.clone()
        })
    }
}

/// Tells one call's reply that no answer will come. A reply that panics (an `unwrap` of the
/// error) does not keep the others from hearing of theirs, nor end the task that times them.
fn fail_one(fail: Fail, lost: ClientError) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fail(lost))).is_err() {
        log::warn!("a `_then` callback panicked on hearing that its call got no answer");
    }
}

/// Fails the calls of `unanswered` whose deadline passed, until the connection is down.
async fn expire(unanswered: Arc<Unanswered>) {
    loop {
        let oldest = match lock(&unanswered.calls).as_ref() {
            None => return,
            Some(calls) => calls.first_key_value().map(|(_, call)| call.deadline),
        };
        let Some(deadline) = oldest else {
            unanswered.wake.notified().await;
            continue;
        };
        let woken = tokio::time::timeout_at(deadline.into(), unanswered.wake.notified());
        if woken.await.is_ok() {
            continue;
        }
        let now = Instant::now();
        let mut late = Vec::new();
        match lock(&unanswered.calls).as_mut() {
            None => return,
            Some(calls) => {
                while let Some(call) = calls.first_entry().filter(|c| c.get().deadline <= now) {
                    late.push(call.remove());
                }
            }
        }
        for call in late {
            fail_one(call.fail, unanswered.lost(Lost::TimedOut, call.what));
        }
    }
}

/// Processes `conn`'s messages (answers, callbacks) until the connection ends; `down` then marks
/// it down, also if the SDK's task panics, so that no call waits for it.
async fn process_messages(conn: Arc<DbConnection>, down: Down) {
    let _down = down;
    run_messages(conn).await
}

/// Processes `conn`'s messages until the connection ends.
async fn run_messages(conn: Arc<DbConnection>) {
    if let Err(e) = conn.run_async().await {
        log::warn!("WebSocket connection ended: {e}");
    }
}

/// Lets a caller-driven connection process what arrived since the last call (a ping, or a
/// close, which passes through three of the SDK's tasks before the connection counts as down):
/// each `yield_now` returns once the runtime has polled the socket and run the tasks that were
/// ready. Otherwise the SDK would take a call for a socket it has already closed, and its task
/// would panic.
fn settle(runtime: &CallerRuntime) {
    runtime.get().block_on(async {
        for _ in 0..SETTLE_PASSES {
            tokio::task::yield_now().await;
        }
    });
}

/// A connection-level failure of a WebSocket call.
#[derive(Debug, Clone, thiserror::Error)]
#[error("WebSocket to {url} (database `{database}`): {message}")]
pub struct WsError {
    pub url: String,
    pub database: String,
    pub message: String,
    /// The HTTP status with which the server refused to open the connection (404: no such
    /// database, 401: a token it does not accept), as the HTTP transport's
    /// [`crate::server::ServerError`] gives it.
    pub status: Option<u16>,
}

/// Keeps quiet the panic of 2.14's SDK when it sends a call on a socket that has just closed (a
/// server stopping while calls are out): its message task ends, the connection counts as down,
/// and the calls waiting on it fail with an error that says so, so the panic's message and
/// backtrace would only add alarm. So does the panic that follows on the lock it poisoned, if
/// this client meets it while closing that connection. Every other panic
/// is reported as before. For programs such as the `graph` CLI; a library leaves the panic hook
/// to its application.
pub fn quiet_sdk_send_panics() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = (info.payload().downcast_ref::<String>().map(String::as_str))
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.contains("WS sender loop has dropped its recv channel")
            || CATCHING_SDK_PANIC.get()
        {
            log::debug!("the SDK's connection task ended: {message}");
            return;
        }
        report(info)
    }));
}

thread_local! {
    /// Whether this thread is in [`catch_sdk_panic`].
    static CATCHING_SDK_PANIC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether this thread is running a reply of [`WsLink::send_with`]: the SDK's callback.
    static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The name of the thread of [`io_runtime`].
const IO_THREAD: &str = "graph-client-io";
/// The name of the thread that processes the messages of a connection opened in a
/// multi-threaded runtime of the caller's.
const MESSAGE_THREAD: &str = "graph-client-messages";

/// Whether this thread processes connections' messages, where a call that waits for an answer
/// may wait for itself: every thread while it runs a `_then` reply, the client's I/O thread
/// (which runs all the callbacks of connections opened outside a multi-threaded runtime), and
/// the message thread of a connection opened inside one (where a call on another connection
/// could have waited, but is refused too: the thread does not say which connection it serves).
fn on_message_thread() -> bool {
    IN_CALLBACK.get()
        || matches!(
            std::thread::current().name(),
            Some(IO_THREAD | MESSAGE_THREAD)
        )
}

/// Marks this thread as running a reply until dropped (also when the reply panics).
struct InCallback(bool);

impl InCallback {
    fn enter() -> Self {
        Self(IN_CALLBACK.replace(true))
    }
}

impl Drop for InCallback {
    fn drop(&mut self) {
        IN_CALLBACK.set(self.0);
    }
}

/// Why a callback may not open a connection.
const CALLBACK_CANNOT_OPEN: &str = "the connection is closed or still opening, and a callback \
                                    cannot open one: it needs this thread. Call from another \
                                    thread (a call there reconnects)";

/// Whether this thread is in a multi-threaded Tokio runtime, whose worker must hand its work on
/// (`block_in_place`) before it blocks.
fn in_multi_threaded_runtime() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// Runs `wait`, which blocks this thread, so that a worker of a multi-threaded runtime hands
/// its other tasks on first: a connection opened in that runtime runs its tasks there, and
/// with every worker blocked in a call, none would read the answers.
fn blocking<T>(wait: impl FnOnce() -> T) -> T {
    match in_multi_threaded_runtime() {
        true => tokio::task::block_in_place(wait),
        false => wait(),
    }
}

/// `mutex`'s guard, also after a thread panicked holding it: the values behind these locks
/// (a token, the current connection) are whole at every point a panic can leave them.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f`, a call into the SDK on a connection whose task may just have panicked holding a
/// lock, and catches the panic that poisoned lock then raises (`None`).
fn catch_sdk_panic<T>(f: impl FnOnce() -> T) -> Option<T> {
    CATCHING_SDK_PANIC.set(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CATCHING_SDK_PANIC.set(false);
    result.ok()
}

/// The runtime that runs the socket I/O and the message processing of every connection this
/// process opens outside a Tokio runtime of its own. The SDK would otherwise start a runtime
/// with a worker thread per connection, and `run_threaded` a message thread per connection:
/// with many connections (the throughput benchmark opens 50) most of the client's time went
/// to switching between those threads.
fn io_runtime() -> &'static tokio::runtime::Runtime {
    static IO: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    IO.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .thread_name(IO_THREAD)
            .build()
            .expect("a Tokio runtime for the client's WebSocket I/O")
    })
}

/// The connection settings, and the current connection if there is one.
pub struct WsLink {
    url: String,
    database: String,
    /// The token to connect with; without one the server mints an identity on the first
    /// connection, and its token is kept so that a reconnection keeps the identity.
    token: Arc<Mutex<Option<String>>>,
    /// The `confirmed` query parameter; `None` leaves the server's default (on).
    confirmed: Option<bool>,
    drive: Drive,
    /// The runtime a [`Drive::Caller`] link's calls drive.
    caller_runtime: Option<Arc<CallerRuntime>>,
    /// How long a call waits for its answer.
    timeout: Duration,
    live: Mutex<Option<Arc<Live>>>,
    /// A connection still opening after its caller gave up waiting: the next call waits for
    /// it rather than start another (used only while `live` is locked).
    opening: Mutex<Option<Opening>>,
}

/// A connection being opened by a thread of its own ([`WsLink::start_opening`]), and what its
/// callbacks report to.
struct Opening {
    built: mpsc::Receiver<Result<DbConnection, spacetimedb_sdk::Error>>,
    up: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
    unanswered: Arc<Unanswered>,
    /// Notified by the server's first message.
    connected: Arc<tokio::sync::Notify>,
    /// The caller's multi-threaded runtime, when the SDK runs the connection's tasks there
    /// (otherwise in the client's I/O runtime, or a caller-driven link's own).
    own_runtime: Option<tokio::runtime::Handle>,
}

impl Opening {
    /// Marks the connection down when the task that processes its messages ends.
    fn down(&self) -> Down {
        Down {
            up: self.up.clone(),
            ended: self.ended.clone(),
            unanswered: self.unanswered.clone(),
        }
    }
}

impl std::fmt::Debug for WsLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsLink")
            .field("url", &self.url)
            .field("database", &self.database)
            .field("confirmed", &self.confirmed)
            .field("drive", &self.drive)
            .finish()
    }
}

/// An open connection and whether the SDK still considers it up.
struct Live {
    /// Shared with the task that processes its messages ([`process_messages`]).
    conn: Arc<DbConnection>,
    up: Arc<AtomicBool>,
    /// Whether the task that processes its messages has ended.
    ended: Arc<AtomicBool>,
    unanswered: Arc<Unanswered>,
    /// The runtime that runs the connection's tasks when its callers drive it.
    caller_runtime: Option<Arc<CallerRuntime>>,
}

impl Drop for Live {
    fn drop(&mut self) {
        // Once the task has ended there is no one to close the connection, and the SDK's state
        // may be poisoned: 2.14's task panics, holding a lock, when it sends a call on a socket
        // that has just closed (a server stopping under a load with calls in flight). The catch
        // is for that panic landing between the check and the call.
        if self.ended.load(Ordering::Acquire) {
            return;
        }
        let _ = catch_sdk_panic(|| self.conn.disconnect());
        // The disconnection happens as the connection's task processes it: drive it briefly,
        // so that the server sees the socket closed now (unless this is async code).
        if let Some(runtime) = &self.caller_runtime
            && tokio::runtime::Handle::try_current().is_err()
        {
            let up = &self.up;
            runtime.get().block_on(async {
                let until = Instant::now() + Duration::from_millis(200);
                while up.load(Ordering::Acquire) && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            });
        }
    }
}

impl WsLink {
    /// Settings for `database` on the server at `url` (`http://…`; the SDK derives the
    /// WebSocket address). Nothing is connected until the first call.
    pub fn new(url: &str, database: &str, token: Option<String>, confirmed: Option<bool>) -> Self {
        Self {
            url: url.trim_end_matches('/').to_string(),
            database: database.to_string(),
            token: Arc::new(Mutex::new(token)),
            confirmed,
            drive: Drive::Background,
            caller_runtime: None,
            // As long as the HTTP client's, unless `with_timeout` says otherwise.
            timeout: crate::server::DEFAULT_TIMEOUT,
            live: Mutex::new(None),
            opening: Mutex::new(None),
        }
    }

    /// The same settings, each call waiting at most `timeout` for its answer (default 600 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The same settings, its connection's messages processed as `drive` says.
    pub fn with_drive(mut self, drive: Drive) -> Self {
        self.drive = drive;
        self.caller_runtime = (drive == Drive::Caller).then(|| Arc::new(CallerRuntime::new()));
        self
    }

    /// The same settings (and identity, once minted), not connected.
    pub fn fresh(&self) -> Self {
        Self::new(&self.url, &self.database, self.token(), self.confirmed)
            .with_drive(self.drive)
            .with_timeout(self.timeout)
    }

    pub fn drive(&self) -> Drive {
        self.drive
    }

    /// The `confirmed` query parameter the connection asks for (`None`: the server's default).
    pub fn confirmed(&self) -> Option<bool> {
        self.confirmed
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token the connection uses (minted by the server on the first connection if none
    /// was given).
    pub fn token(&self) -> Option<String> {
        lock(&self.token).clone()
    }

    fn error(&self, message: impl Into<String>) -> ClientError {
        ClientError::Connection(self.ws_error(message.into()))
    }

    fn ws_error(&self, message: String) -> WsError {
        WsError {
            url: self.url.clone(),
            database: self.database.clone(),
            message,
            status: None,
        }
    }

    /// The open connection, opening one if there is none or the last one dropped.
    pub fn connection(&self) -> Result<DbConnectionRef, ClientError> {
        Ok(DbConnectionRef(self.live()?))
    }

    fn live(&self) -> Result<Arc<Live>, ClientError> {
        let mut slot = match on_message_thread() {
            // Not a wait for a connection that another thread is opening: it may need this one.
            true => match self.live.try_lock() {
                Ok(slot) => slot,
                Err(TryLockError::Poisoned(slot)) => slot.into_inner(),
                Err(TryLockError::WouldBlock) => return Err(self.error(CALLBACK_CANNOT_OPEN)),
            },
            false => blocking(|| lock(&self.live)),
        };
        if let Some(runtime) = &self.caller_runtime {
            if tokio::runtime::Handle::try_current().is_ok() {
                return Err(self.error(
                    "a connection driven by its callers is for blocking code: call it outside \
                     async code, or use Drive::Background",
                ));
            }
            if slot.is_some() {
                settle(runtime);
            }
        }
        if let Some(live) = slot.as_ref().filter(|l| l.up.load(Ordering::Acquire)) {
            return Ok(live.clone());
        }
        *slot = None;
        if on_message_thread() {
            // The SDK would block this thread, which its connections need, to connect.
            return Err(self.error(CALLBACK_CANNOT_OPEN));
        }
        let opening = match lock(&self.opening).take() {
            Some(opening) => opening,
            None => self.start_opening()?,
        };
        let (conn, opening) = match &self.caller_runtime {
            Some(runtime) => self.open_driven(runtime.get(), opening)?,
            None => self.open_in_background(opening)?,
        };
        let live = Arc::new(Live {
            conn,
            up: opening.up,
            ended: opening.ended,
            unanswered: opening.unanswered,
            caller_runtime: self.caller_runtime.clone(),
        });
        *slot = Some(live.clone());
        Ok(live)
    }

    /// Starts opening a connection on a thread of its own, in the runtime where the SDK is to
    /// run its tasks. Outside a Tokio runtime the SDK would start one per connection; the
    /// client's I/O runtime serves them all instead. A caller inside a multi-threaded runtime
    /// keeps its own. The SDK cannot connect from inside a current-thread runtime
    /// (`block_in_place` panics there), nor could that runtime's thread, blocked in a call,
    /// run the connection's tasks: such a caller is served as one outside any runtime.
    fn start_opening(&self) -> Result<Opening, ClientError> {
        let up = Arc::new(AtomicBool::new(true));
        let connected = Arc::new(tokio::sync::Notify::new());
        let (down, keep, on_connect) = (up.clone(), self.token.clone(), connected.clone());
        let mut builder = DbConnection::builder()
            .with_uri(self.url.as_str())
            .with_database_name(self.database.as_str())
            .with_token(self.token())
            .on_connect(move |_, _, token| {
                lock(&keep).get_or_insert_with(|| token.to_string());
                on_connect.notify_one();
            })
            .on_disconnect(move |_, _| down.store(false, Ordering::Release));
        if let Some(confirmed) = self.confirmed {
            builder = builder.with_confirmed_reads(confirmed);
        }
        let own_runtime = (self.caller_runtime.is_none() && in_multi_threaded_runtime())
            .then(tokio::runtime::Handle::current);
        let handle = match (&self.caller_runtime, &own_runtime) {
            (Some(runtime), _) => runtime.get().handle().clone(),
            (None, Some(own)) => own.clone(),
            (None, None) => io_runtime().handle().clone(),
        };
        let (tx, built) = mpsc::channel();
        let connecting = move || {
            let _entered = handle.enter();
            // Nobody waits for a connection that opened after its link was dropped: closed.
            if let Err(mpsc::SendError(Ok(late))) = tx.send(builder.build()) {
                let _ = catch_sdk_panic(|| late.disconnect());
            }
        };
        std::thread::Builder::new()
            .name("graph-client-connect".into())
            .spawn(connecting)
            .map_err(|e| self.error(format!("cannot connect: no thread to connect on: {e}")))?;
        Ok(Opening {
            built,
            up,
            ended: Arc::new(AtomicBool::new(false)),
            unanswered: Unanswered::new(self.ws_error(String::new()), self.timeout),
            connected,
            own_runtime,
        })
    }

    /// Waits at most the link's timeout for `opening`'s connection: the SDK waits for the
    /// server's answer to the upgrade as long as it takes, forever from a server that stopped
    /// without closing its sockets. One given up on is kept for the next call to wait for.
    fn opened(&self, opening: Opening) -> Result<(Arc<DbConnection>, Opening), ClientError> {
        match blocking(|| opening.built.recv_timeout(self.timeout)) {
            Ok(Ok(conn)) => Ok((Arc::new(conn), opening)),
            Ok(Err(e)) => {
                let message = connect_error(&e, &self.database);
                let status = refusal_status(&message);
                Err(ClientError::Connection(WsError {
                    url: self.url.clone(),
                    database: self.database.clone(),
                    message,
                    status,
                }))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                *lock(&self.opening) = Some(opening);
                Err(self.error(format!(
                    "cannot connect: the server did not answer within {:?}",
                    self.timeout
                )))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(self.error("cannot connect: the SDK panicked while connecting"))
            }
        }
    }

    /// Opens a connection whose messages the calls process on `rt`, and waits for the server's
    /// first message, which names the identity (and mints the token).
    fn open_driven(
        &self,
        rt: &tokio::runtime::Runtime,
        opening: Opening,
    ) -> Result<(Arc<DbConnection>, Opening), ClientError> {
        // The SDK connects through `Handle::block_on`, which cannot drive a current-thread
        // runtime's I/O itself: a helper thread drives it meanwhile.
        let building = AtomicBool::new(true);
        let opened = std::thread::scope(|scope| {
            scope.spawn(|| {
                rt.block_on(async {
                    while building.load(Ordering::Acquire) {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                })
            });
            let opened = self.opened(opening);
            building.store(false, Ordering::Release);
            opened
        });
        let (conn, opening) = opened?;
        rt.spawn(process_messages(conn.clone(), opening.down()));
        let wait = CONNECT_WAIT.min(self.timeout);
        let _ =
            rt.block_on(async { tokio::time::timeout(wait, opening.connected.notified()).await });
        Ok((conn, opening))
    }

    /// Opens a connection whose messages a thread of their own processes.
    fn open_in_background(
        &self,
        opening: Opening,
    ) -> Result<(Arc<DbConnection>, Opening), ClientError> {
        let (conn, opening) = self.opened(opening)?;
        let down = opening.down();
        match opening.own_runtime.clone() {
            None => drop(io_runtime().spawn(process_messages(conn.clone(), down))),
            // A thread of its own processes the messages, as the SDK's `run_threaded` would,
            // but one this client knows, so that a call that would wait for its answer in a row
            // callback there is refused rather than wait for itself. The callbacks do not run
            // on the caller's workers, and the connection is down once that thread ends,
            // however it ends (the SDK panics on a socket that has just closed): `down`, whose
            // drop fails the unanswered `_then` calls, is dropped after any panic is caught,
            // not while it unwinds.
            Some(runtime) => {
                let conn = conn.clone();
                let messages = move || {
                    let run = || runtime.block_on(run_messages(conn));
                    let run = std::panic::AssertUnwindSafe(run);
                    let _ = std::panic::catch_unwind(run);
                    drop(down);
                };
                std::thread::Builder::new()
                    .name(MESSAGE_THREAD.into())
                    .spawn(messages)
                    .map_err(|e| self.error(format!("cannot process messages: {e}")))?;
            }
        }
        Ok((conn, opening))
    }

    /// Sends a request with `send` (which queues it on the connection and arranges for its
    /// callback to call the reply) and waits for the reply. With `resend`, a request whose
    /// connection dropped before it was answered is sent once more on a new connection.
    pub fn call<R: Send + 'static>(
        &self,
        what: &str,
        resend: bool,
        send: Request<'_, R>,
    ) -> Result<R, ClientError> {
        refuse_wait_on_message_thread(what)?;
        let mut attempts = if resend { 2 } else { 1 };
        loop {
            attempts -= 1;
            let live = self.live()?;
            let pending = match self.send_on(live, what, send) {
                Err(_) if attempts > 0 => continue,
                sent => sent?,
            };
            match self.answer(pending) {
                Ok(answer) => return answer.map_err(|message| internal(what, message)),
                // A call that timed out is not sent again: the server may be working on it.
                Err(Lost::Closed) if attempts > 0 => {}
                Err(lost) => return Err(self.error(lost.describe(what, self.timeout, !resend))),
            }
        }
    }

    /// Queues a request with `send` and returns at once: any number of requests may be in
    /// flight on the connection (the SDK matches each answer to its request). [`Self::wait`]
    /// waits for the answer.
    pub fn send<R: Send + 'static>(
        &self,
        what: &str,
        send: Request<'_, R>,
    ) -> Result<Pending<R>, ClientError> {
        self.send_on(self.live()?, what, send)
    }

    /// Queues a request with `send` and returns at once; `reply` gets the answer on the thread
    /// that processes the connection's messages, as the SDK's callbacks do (so it must return
    /// quickly; it may send further requests). It is called exactly once: with a
    /// [`ClientError::Connection`] if the connection closes first, or no answer comes within
    /// the link's timeout (the server may or may not carry the request out), and never if this
    /// returns an error.
    pub fn send_then<R: Send + 'static>(
        &self,
        what: &'static str,
        send: Request<'_, R>,
        reply: Box<dyn FnOnce(Result<R, ClientError>) + Send>,
    ) -> Result<(), ClientError> {
        if self.drive == Drive::Caller {
            return Err(self.error(format!(
                "{what}: a connection driven by its callers runs callbacks only while a call \
                 waits; use Drive::Background for callbacks"
            )));
        }
        let live = self.live()?;
        // The answer or the loss, whichever comes first, takes the reply.
        let slot = Arc::new(Mutex::new(Some(reply)));
        let failing = slot.clone();
        let fail: Fail = Box::new(move |lost| {
            let reply = lock(&failing).take();
            if let Some(reply) = reply {
                let _in_callback = InCallback::enter();
                reply(Err(lost));
            }
        });
        let unanswered = live.unanswered.clone();
        let Some(id) = unanswered.register(what, fail) else {
            return Err(self.error(format!("{what}: the connection closed")));
        };
        let answered: Reply<R> = Box::new(move |answer| {
            unanswered.forget(id);
            let reply = lock(&slot).take();
            if let Some(reply) = reply {
                reply(answer.map_err(|message| internal(what, message)));
            }
        });
        self.send_with(&live, what, send, answered)
            .inspect_err(|_| live.unanswered.forget(id))
    }

    /// [`Self::send`] on the connection `live`.
    fn send_on<R: Send + 'static>(
        &self,
        live: Arc<Live>,
        what: &str,
        send: Request<'_, R>,
    ) -> Result<Pending<R>, ClientError> {
        let (tx, rx) = mpsc::channel();
        let wake = Arc::new(tokio::sync::Notify::new());
        let waker = wake.clone();
        let reply: Reply<R> = Box::new(move |result| {
            let _ = tx.send(result);
            waker.notify_one();
        });
        self.send_with(&live, what, send, reply)?;
        Ok(Pending {
            live,
            rx,
            wake,
            deadline: Instant::now() + self.timeout,
        })
    }

    /// Queues a request with `send` on the connection `live`, its answer going to `reply`.
    fn send_with<R: Send + 'static>(
        &self,
        live: &Arc<Live>,
        what: &str,
        send: Request<'_, R>,
        reply: Reply<R>,
    ) -> Result<(), ClientError> {
        let reply: Reply<R> = Box::new(move |answer| {
            let _in_callback = InCallback::enter();
            reply(answer);
        });
        send(&live.conn, reply).map_err(|e| {
            self.drop_if_current(live);
            self.error(format!("{what}: could not send the request: {e}"))
        })
    }

    /// Waits for the answer to a request [`Self::send`] queued; it is not sent again if its
    /// connection drops.
    pub fn wait<R>(&self, what: &str, pending: Pending<R>) -> Result<R, ClientError> {
        if on_message_thread() {
            return Err(self.error(format!(
                "{what} was sent, but its answer cannot be awaited in a callback, whose thread \
                 delivers the answers; the server may or may not carry it out. Wait for it from \
                 another thread, or send it with a `_then` method"
            )));
        }
        match self.answer(pending) {
            Ok(answer) => answer.map_err(|message| internal(what, message)),
            Err(lost) => Err(self.error(lost.describe(what, self.timeout, true))),
        }
    }

    /// The answer to `pending`, or why none came (after which the connection is forgotten, so
    /// that the next call reconnects).
    fn answer<R>(&self, pending: Pending<R>) -> Result<Result<R, String>, Lost> {
        let alive = || pending.live.up.load(Ordering::Acquire) && Instant::now() < pending.deadline;
        match &pending.live.caller_runtime {
            // This thread runs the connection's tasks until the answer's callback has run.
            Some(runtime) => {
                let answer = runtime.get().block_on(async {
                    loop {
                        match pending.rx.try_recv() {
                            Ok(answer) => return Some(answer),
                            Err(mpsc::TryRecvError::Empty) if alive() => {}
                            Err(_) => return None,
                        }
                        let _ = tokio::time::timeout(LIVENESS_POLL, pending.wake.notified()).await;
                    }
                });
                if let Some(answer) = answer {
                    return Ok(answer);
                }
            }
            None => {
                let answer = blocking(|| {
                    loop {
                        match pending.rx.recv_timeout(LIVENESS_POLL) {
                            Ok(answer) => return Some(answer),
                            Err(mpsc::RecvTimeoutError::Timeout) if alive() => {}
                            Err(_) => return None,
                        }
                    }
                });
                if let Some(answer) = answer {
                    return Ok(answer);
                }
            }
        }
        // A call that timed out on a connection still up leaves it be: other calls may be
        // waiting on it, answered in time (or the server is stopped, and so is every call).
        if pending.live.up.load(Ordering::Acquire) {
            return Err(Lost::TimedOut);
        }
        self.drop_if_current(&pending.live);
        Err(Lost::Closed)
    }

    /// Forgets `live` if it is still the current connection, so the next call reconnects.
    /// Never waits for the slot: a thread that holds it is in [`Self::live`], which sees the
    /// connection down (and this may be a callback, whose thread that one may need).
    fn drop_if_current(&self, live: &Arc<Live>) {
        live.up.store(false, Ordering::Release);
        let mut slot = match self.live.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(slot)) => slot.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if slot.as_ref().is_some_and(|l| Arc::ptr_eq(l, live)) {
            *slot = None;
        }
    }

    /// Closes the connection, if one is open.
    pub fn disconnect(&self) {
        blocking(|| lock(&self.live)).take();
    }
}

/// A request queued on a connection by [`WsLink::send`], not yet answered.
pub struct Pending<R> {
    live: Arc<Live>,
    rx: mpsc::Receiver<Result<R, String>>,
    /// Notified when the answer is sent, for a caller that drives the connection.
    wake: Arc<tokio::sync::Notify>,
    deadline: Instant,
}

/// Why a request got no answer.
enum Lost {
    TimedOut,
    Closed,
}

impl Lost {
    /// Says what happened to the call `what`; `unsure`: a call that is not sent again if its
    /// connection closes, which the server may have carried out all the same.
    fn describe(&self, what: &str, timeout: Duration, unsure: bool) -> String {
        let (lost, unsure) = match self {
            // Never sent again: the server may be working on it.
            Lost::TimedOut => (format!("{what}: no answer within {timeout:?}"), true),
            Lost::Closed => (
                format!("{what}: the connection closed before the answer arrived"),
                unsure,
            ),
        };
        match unsure {
            true => format!("{lost}; the server may or may not have carried it out"),
            false => lost,
        }
    }
}

/// Refuses a call that would wait for its answer on a thread that processes connections'
/// messages (in a callback): the answer could only arrive through the thread that waits.
fn refuse_wait_on_message_thread(what: &str) -> Result<(), ClientError> {
    if !on_message_thread() {
        return Ok(());
    }
    Err(ClientError::NotSent {
        function: what.to_string(),
        message: "called from a callback, whose thread delivers the answers: waiting there \
                  would wait for itself. Send it with a `_then` method, or from another thread"
            .to_string(),
    })
}

/// A request the server answered with an error of its own (not the function's).
fn internal(what: &str, message: String) -> ClientError {
    // 2.14's whole message for a call that reached a database its server had shut down.
    let message = match message.as_str() {
        "no such module" => format!(
            "the database was shut down: its server is stopping, or replacing the module \
             ({message})"
        ),
        _ => message,
    };
    ClientError::Internal {
        function: what.to_string(),
        message,
    }
}

/// The SDK's connection errors name only their outermost layer; the cause (a refused TCP
/// connection, an HTTP 404 for an unknown database, a 401 for a bad token) is what a user needs.
fn connect_error(e: &spacetimedb_sdk::Error, database: &str) -> String {
    let mut text = format!("cannot connect: {}", crate::server::error_chain(e));
    // The upgrade's status is all the SDK reports of a refusal; say what it means here.
    if text.contains("404 Not Found") {
        text.push_str(&format!(
            " (the server has no database `{database}`, or no WebSocket route: publish the \
             module first, or check the name)"
        ));
    } else if text.contains("401 Unauthorized") {
        text.push_str(" (the server refused the token)");
    } else if text.contains("400 Bad Request") {
        // The SDK keeps only the status; the reason is in the answer's body.
        text.push_str(&format!(
            " (the server refused the request: is `{database}` a valid database name? An HTTP \
             call, `--transport http` in the CLI, shows the server's reason)"
        ));
    }
    text
}

/// The status of a refused upgrade in the SDK's error text (the WebSocket library's "HTTP
/// error: 404 Not Found"), the only place the SDK reports it.
fn refusal_status(text: &str) -> Option<u16> {
    let (_, after) = text.split_once("HTTP error: ")?;
    after.get(..3)?.parse().ok()
}

/// A handle on the open connection, for subscriptions and table callbacks (see `graph watch`).
/// Callbacks run on the thread that processes the messages of every connection this process
/// opened outside a Tokio runtime: they must return quickly and never wait for another call's
/// answer (hand the work to another thread, as `watch` does through a channel).
#[derive(Clone)]
pub struct DbConnectionRef(Arc<Live>);

impl std::ops::Deref for DbConnectionRef {
    type Target = DbConnection;
    fn deref(&self) -> &DbConnection {
        &self.0.conn
    }
}

impl DbConnectionRef {
    /// Whether the connection is still up.
    pub fn is_up(&self) -> bool {
        self.0.up.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_upgrade_gives_its_status() {
        let text = "cannot connect: Failed to initiate WebSocket connection: HTTP error: 401 \
                    Unauthorized (the server refused the token)";
        assert_eq!(refusal_status(text), Some(401));
        assert_eq!(
            refusal_status("cannot connect: Connection refused (os error 111)"),
            None
        );
    }

    /// The quiet hook keeps the SDK's send panic and a panic caught by [`catch_sdk_panic`]
    /// quiet, and hands every other panic to the hook it replaced.
    #[test]
    fn the_quiet_hook_keeps_only_the_sdks_panics_quiet() {
        static REPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let before: Arc<dyn Fn(&std::panic::PanicHookInfo) + Send + Sync> =
            Arc::from(std::panic::take_hook());
        let others = before.clone();
        std::panic::set_hook(Box::new(move |info| {
            let message = info.payload().downcast_ref::<String>().cloned();
            // Other tests of this binary may panic meanwhile, and this test's asserts: only
            // this test's panics are recorded, the others reported as ever.
            match message.filter(|m| m.starts_with("quiet-hook test")) {
                Some(m) => REPORTED.lock().unwrap().push(m),
                None => others(info),
            }
        }));
        quiet_sdk_send_panics();
        let panic = |what: &str| {
            let what = format!("quiet-hook test: {what}");
            move || -> () { panic!("{what}") }
        };
        assert_eq!(catch_sdk_panic(panic("PoisonError")), None);
        assert_eq!(catch_sdk_panic(|| 7), Some(7));
        let sdk = panic("Unable to send reducer: WS sender loop has dropped its recv channel");
        assert!(std::panic::catch_unwind(sdk).is_err());
        assert!(std::panic::catch_unwind(panic("another")).is_err());
        std::panic::set_hook(Box::new(move |info| before(info)));
        assert_eq!(*REPORTED.lock().unwrap(), ["quiet-hook test: another"]);
    }
}

//! The HTTP and WebSocket routes: the subset of SpacetimeDB 2.x's `/v1` API that this project
//! uses, with the official paths, bodies, status codes and JSON shapes (client-api
//! `routes/{identity,database,subscribe}.rs`). Handlers only translate between the wire and the
//! engine; every error becomes a status code here, in [`HttpError`]'s conversions.

mod auth;
mod database;
mod subscribe;
mod websocket;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use spacetimedb::client::ClientActorIndex;
use spacetimedb::host::module_host::ClientConnectedError;
use spacetimedb::host::{ProcedureCallError, ReducerCallError};
use tower_http::cors::{self, CorsLayer};

use crate::auth::Auth;
use crate::control::{Control, ControlError};
use crate::timer_pump::TimerPump;

pub use subscribe::WebSocketOptions;

/// Shared state of all handlers.
pub struct App {
    pub control: Control,
    pub auth: Auth,
    /// Names the WebSocket clients, as the official server's client actor index does.
    pub clients: ClientActorIndex,
    pub websocket: WebSocketOptions,
    /// Kept running while requests and WebSocket connections are open.
    pub timer_pump: TimerPump,
    /// How far the host's stop has come; every WebSocket connection holds a receiver until it
    /// closes.
    pub stopping: tokio::sync::watch::Sender<Stop>,
}

/// How far the host's stop has come, as its WebSocket connections see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stop {
    Running,
    /// Each connection reads no more requests, answers those it took, and closes.
    Draining,
    /// Each connection closes at once (the drain took too long).
    Closing,
}

impl App {
    /// Tells the WebSocket connections that the host is stopping: each reads no more requests,
    /// answers those it took, and closes. Axum's graceful shutdown does not see upgraded
    /// connections, which would otherwise take calls (and commit them) while the host
    /// snapshots its databases.
    pub fn stop_websockets(&self) {
        self.stopping.send_replace(Stop::Draining);
    }

    /// Closes the WebSocket connections at once (a drain that took too long).
    pub fn close_websockets(&self) {
        self.stopping.send_replace(Stop::Closing);
    }

    /// Resolves once every WebSocket connection has closed.
    pub async fn websockets_closed(&self) {
        self.stopping.closed().await;
    }
}

/// The `/v1` router.
pub fn router(app: Arc<App>) -> Router {
    // Publishing and `pre_publish` (both take a module) have no body limit; every other route
    // keeps axum's default 2 MiB limit and its 413, exactly as the official server is
    // configured, with a body that names the limit.
    let database = Router::new()
        .route(
            "/",
            post(database::publish_new).layer(DefaultBodyLimit::disable()),
        )
        .route(
            "/{name_or_identity}",
            axum::routing::put(database::publish_named)
                .layer(DefaultBodyLimit::disable())
                .delete(database::delete_database),
        )
        .route("/{name_or_identity}/call/{function}", post(database::call))
        .route("/{name_or_identity}/sql", post(database::sql))
        .route(
            "/{name_or_identity}/pre_publish",
            post(database::pre_publish).layer(DefaultBodyLimit::disable()),
        )
        .route("/{name_or_identity}/logs", get(database::logs))
        .route("/{name_or_identity}/schema", get(database::schema))
        .route("/{name_or_identity}/identity", get(database::identity))
        .route("/{name_or_identity}/subscribe", get(subscribe::subscribe))
        .route_layer(middleware::from_fn_with_state(
            app.clone(),
            auth::authenticate,
        ))
        .layer(middleware::map_response(name_the_body_limit));
    let v1 = Router::new()
        .route("/ping", get(auth::ping))
        .route("/identity", post(auth::create_identity))
        .route("/identity/public-key", get(auth::public_key))
        .route("/identity/websocket-token", post(auth::websocket_token))
        .route("/identity/{identity}/verify", get(auth::verify_identity))
        .route("/identity/{identity}/databases", get(auth::databases))
        .nest("/database", database)
        .layer(cors());
    Router::new()
        .nest("/v1", v1)
        .layer(middleware::from_fn_with_state(app.clone(), timers_on_time))
        .with_state(app)
}

/// axum's default request body limit, which the official server keeps for calls and queries.
const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// axum's 413 says only "length limit exceeded": say which limit, and what to do.
async fn name_the_body_limit(response: Response) -> Response {
    if response.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return response;
    }
    HttpError::text(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body exceeds {BODY_LIMIT} bytes (2 MiB), the most a call or query \
             takes (as on the official server): send less per call"
        ),
    )
    .into_response()
}

/// CORS on `/v1` as the official client-api sets it: any origin and method, and the headers a
/// browser client sends (a web page's SDK calls these routes from its own origin).
fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_headers([header::AUTHORIZATION, header::ACCEPT, header::CONTENT_TYPE])
        .allow_methods(cors::Any)
        .allow_origin(cors::Any)
}

/// Keeps the timer pump running while a request is served.
async fn timers_on_time(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let _busy = app.timer_pump.busy();
    next.run(request).await
}

/// An error response: status and text body.
#[derive(Debug)]
pub struct HttpError {
    status: StatusCode,
    body: String,
}

impl HttpError {
    pub fn text(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            body: message.into(),
        }
    }

    /// The official `log_and_500`.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        log::error!("internal error: {e:#}");
        Self::text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"))
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::text(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        (self.status, self.body).into_response()
    }
}

impl From<ControlError> for HttpError {
    fn from(e: ControlError) -> Self {
        let status = match &e {
            ControlError::InvalidName(_)
            | ControlError::ClearNeedsTarget
            | ControlError::MigrationRejected(_)
            | ControlError::MigrationFailed(_)
            | ControlError::InvalidModule(_) => StatusCode::BAD_REQUEST,
            ControlError::UnknownName(_) | ControlError::UnknownIdentity => StatusCode::NOT_FOUND,
            ControlError::NotOwner { .. } => StatusCode::FORBIDDEN,
            ControlError::Engine(_) => return Self::internal(e),
        };
        Self::text(status, e.to_string())
    }
}

impl From<ReducerCallError> for HttpError {
    fn from(e: ReducerCallError) -> Self {
        let status = match e {
            ReducerCallError::Args(_) | ReducerCallError::LifecycleReducer(_) => {
                StatusCode::BAD_REQUEST
            }
            ReducerCallError::NoSuchModule(_)
            | ReducerCallError::NoSuchReducer
            | ReducerCallError::ScheduleReducerNotFound => StatusCode::NOT_FOUND,
            ReducerCallError::WorkerError(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::text(status, format!("{:#}", anyhow::anyhow!(e)))
    }
}

impl From<ProcedureCallError> for HttpError {
    fn from(e: ProcedureCallError) -> Self {
        let status = match e {
            ProcedureCallError::Args(_) => StatusCode::BAD_REQUEST,
            ProcedureCallError::NoSuchModule(_) | ProcedureCallError::NoSuchProcedure => {
                StatusCode::NOT_FOUND
            }
            ProcedureCallError::OutOfEnergy => StatusCode::PAYMENT_REQUIRED,
            ProcedureCallError::InternalError(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::text(status, format!("{:#}", anyhow::anyhow!(e)))
    }
}

impl From<ClientConnectedError> for HttpError {
    fn from(e: ClientConnectedError) -> Self {
        match e {
            ClientConnectedError::Rejected(message) => Self::text(StatusCode::FORBIDDEN, message),
            ClientConnectedError::OutOfEnergy => {
                Self::text(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
            }
            ClientConnectedError::ReducerCall(e) => {
                Self::text(StatusCode::NOT_FOUND, format!("{:#}", anyhow::anyhow!(e)))
            }
            ClientConnectedError::DBError(_) => {
                Self::text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
            }
        }
    }
}

type Result<T, E = HttpError> = std::result::Result<T, E>;

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn to_json(value: &impl Serialize) -> Result<Response> {
    Ok(json_response(
        StatusCode::OK,
        serde_json::to_vec(value).map_err(HttpError::internal)?,
    ))
}

const EXECUTION_DURATION: HeaderName =
    HeaderName::from_static("spacetime-execution-duration-micros");

fn duration_header(d: Duration) -> (HeaderName, HeaderValue) {
    (EXECUTION_DURATION, HeaderValue::from(d.as_micros() as u64))
}

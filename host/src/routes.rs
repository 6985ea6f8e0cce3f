//! The HTTP routes: the subset of SpacetimeDB 2.x's `/v1` API that this project uses, with the
//! official paths, bodies, status codes and JSON shapes (client-api `routes/database.rs` and
//! `routes/identity.rs`). Handlers only translate between HTTP and the engine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::{Deserialize, Serialize};
use spacetimedb::host::module_host::ClientConnectedError;
use spacetimedb::host::{FunctionArgs, ProcedureCallError, ReducerCallError, ReducerOutcome};
use spacetimedb::sql::execute;
use spacetimedb_client_api_messages::http::{SqlStmtResult, SqlStmtStats};
use spacetimedb_lib::identity::AuthCtx;
use spacetimedb_lib::sats::ser::serde::SerializeWrapper;
use spacetimedb_lib::{ConnectionId, Identity, ProductTypeElement};

use crate::auth::{Auth, Caller};
use crate::control::{Control, Target};

/// Shared state of all handlers.
pub struct App {
    pub control: Control,
    pub auth: Auth,
}

type AppState = State<Arc<App>>;

/// The `/v1` router.
pub fn router(app: Arc<App>) -> Router {
    // Publishing has no body limit (modules are large); every other route keeps axum's default
    // 2 MiB limit and its 413, exactly as the official server is configured.
    let database = Router::new()
        .route("/", post(publish_new).layer(DefaultBodyLimit::disable()))
        .route(
            "/{name_or_identity}",
            axum::routing::put(publish_named)
                .layer(DefaultBodyLimit::disable())
                .delete(delete_database),
        )
        .route("/{name_or_identity}/call/{function}", post(call))
        .route("/{name_or_identity}/sql", post(sql))
        .route("/{name_or_identity}/logs", get(logs))
        .route_layer(middleware::from_fn_with_state(app.clone(), authenticate));
    let v1 = Router::new()
        .route("/ping", get(ping))
        .route("/identity", post(create_identity))
        .nest("/database", database);
    Router::new().nest("/v1", v1).with_state(app)
}

/// An error response: status and text body, or a JSON body for the few official JSON errors.
#[derive(Debug)]
pub struct HttpError {
    status: StatusCode,
    body: String,
    json: bool,
}

impl HttpError {
    pub fn text(status: StatusCode, message: impl Into<String>) -> Self {
        let body = message.into();
        Self {
            status,
            body,
            json: false,
        }
    }

    pub fn json(status: StatusCode, value: &impl Serialize) -> Self {
        let body = serde_json::to_string(value).unwrap_or_default();
        Self {
            status,
            body,
            json: true,
        }
    }

    /// The official `log_and_500`.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        log::error!("internal error: {e:#}");
        Self::text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"))
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        if self.json {
            json_response(self.status, self.body.into_bytes())
        } else {
            (self.status, self.body).into_response()
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

// ---------------------------------------------------------------------------------------------
// Authentication

/// The caller's token, from `Authorization: Bearer <token>` or else `?token=<token>`.
fn credentials(headers: &HeaderMap, uri: &Uri) -> Result<Option<String>> {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, token)| {
                scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()
            })
            .map(|(_, token)| token.trim().to_owned());
        return token.map(Some).ok_or_else(|| {
            HttpError::text(
                StatusCode::BAD_REQUEST,
                "Authorization is invalid: malformed token",
            )
        });
    }
    #[derive(Deserialize)]
    struct TokenQuery {
        token: String,
    }
    Ok(Query::<TokenQuery>::try_from_uri(uri)
        .ok()
        .map(|q| q.0.token))
}

/// Verifies the caller's token, or mints a fresh identity for an anonymous caller, like the
/// official `anon_auth_middleware`; the response carries the identity and token either way.
async fn authenticate(State(app): AppState, mut req: Request, next: Next) -> Response {
    let caller = match credentials(req.headers(), req.uri()) {
        Err(e) => return e.into_response(),
        Ok(Some(token)) => match app.auth.verify(&token).await {
            Ok(caller) => caller,
            Err(e) => return HttpError::text(StatusCode::UNAUTHORIZED, e).into_response(),
        },
        Ok(None) => match app.auth.mint() {
            Ok(caller) => caller,
            Err(e) => return HttpError::internal(e).into_response(),
        },
    };
    req.extensions_mut().insert(caller.clone());
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    if let Ok(identity) = HeaderValue::from_str(&caller.identity.to_hex()) {
        headers.insert(HeaderName::from_static("spacetime-identity"), identity);
    }
    if let Ok(token) = HeaderValue::from_str(&caller.token) {
        headers.insert(HeaderName::from_static("spacetime-identity-token"), token);
    }
    response
}

// ---------------------------------------------------------------------------------------------
// Handlers

/// `GET /v1/ping`: 200 if the server is up (a token, if sent, must be valid).
async fn ping(State(app): AppState, headers: HeaderMap, uri: Uri) -> Result<()> {
    if let Some(token) = credentials(&headers, &uri)? {
        app.auth
            .verify(&token)
            .await
            .map_err(|e| HttpError::text(StatusCode::UNAUTHORIZED, e))?;
    }
    Ok(())
}

/// `POST /v1/identity` → `{"identity": "<hex>", "token": "<jwt>"}`.
async fn create_identity(State(app): AppState) -> Result<Response> {
    #[derive(Serialize)]
    struct CreateIdentityResponse {
        identity: Identity,
        token: String,
    }
    let caller = app.auth.mint().map_err(HttpError::internal)?;
    to_json(&CreateIdentityResponse {
        identity: caller.identity,
        token: caller.token,
    })
}

#[derive(Deserialize)]
struct PublishQuery {
    #[serde(default)]
    clear: bool,
    host_type: Option<String>,
}

/// `POST /v1/database`: a new database with a generated identity and no name.
async fn publish_new(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Query(query): Query<PublishQuery>,
    body: Bytes,
) -> Result<Response> {
    publish(&app, caller, None, query, body).await
}

/// `PUT /v1/database/:name_or_identity[?clear=true]`: create, update, or wipe and republish.
async fn publish_named(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
    Query(query): Query<PublishQuery>,
    body: Bytes,
) -> Result<Response> {
    let target = Target::parse(&name_or_identity)?;
    publish(&app, caller, Some(target), query, body).await
}

async fn publish(
    app: &App,
    caller: Caller,
    target: Option<Target>,
    query: PublishQuery,
    body: Bytes,
) -> Result<Response> {
    // This build has no JavaScript runtime (V8 is replaced by abort() stubs), so anything that
    // is not a Wasm binary is refused here, before the engine could hand it to V8.
    let js_requested = query
        .host_type
        .as_deref()
        .is_some_and(|t| !t.eq_ignore_ascii_case("wasm"));
    if js_requested || !body.starts_with(b"\0asm") {
        return Err(HttpError::text(
            StatusCode::BAD_REQUEST,
            "graph-host runs WebAssembly modules only: the program is not a Wasm binary \
             (JavaScript modules are not supported by this build)",
        ));
    }
    let result = app
        .control
        .publish(caller.identity, target, body.to_vec().into(), query.clear)
        .await?;
    to_json(&result)
}

/// `DELETE /v1/database/:name_or_identity` (owner only).
async fn delete_database(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
) -> Result<()> {
    let target = Target::parse(&name_or_identity)?;
    app.control.delete(caller.identity, &target).await
}

/// `POST /v1/database/:name_or_identity/call/:function`, for reducers and procedures.
async fn call(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path((name_or_identity, function)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    // Same checks in the same order as the official handler's extractors.
    let target = Target::parse(&name_or_identity)?;
    let Some(content_type) = headers.get(header::CONTENT_TYPE) else {
        return Err(HttpError::text(
            StatusCode::BAD_REQUEST,
            "Header of type `content-type` was missing",
        ));
    };
    let body = bytestring::ByteString::try_from(body).map_err(|_| {
        HttpError::text(
            StatusCode::BAD_REQUEST,
            "Request body didn't contain valid UTF-8",
        )
    })?;
    if !content_type
        .to_str()
        .is_ok_and(|ct| ct.trim().eq_ignore_ascii_case("application/json"))
    {
        return Err(HttpError::text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Expected request with `Content-Type: application/json`",
        ));
    }
    let db = app.control.resolve(&target)?;
    let module = app.control.module(&db).await?;
    let args = FunctionArgs::Json(body);

    // HTTP callers get a fresh connection id and the connect/disconnect bookkeeping around the call.
    let connection_id = ConnectionId::from_le_byte_array(rand::random());
    let connection_auth = caller.connection_auth().map_err(HttpError::internal)?;
    module
        .call_identity_connected(connection_auth, connection_id)
        .await
        .map_err(client_connected_error)?;

    let reducer = module
        .call_reducer_with_offset(
            caller.identity,
            Some(connection_id),
            None,
            None,
            None,
            &function,
            args.clone(),
        )
        .await;
    let result = match reducer {
        Ok(call) => {
            // Answer a committed write only once it is durable, so that an acknowledged write
            // survives a crash of this process (clients resume from what was acknowledged).
            if matches!(call.result.outcome, ReducerOutcome::Committed)
                && let Some(mut durable) = module.durable_tx_offset()
                && let Ok(offset) = call.tx_offset.await
                && let Err(e) = durable.wait_for(offset).await
            {
                Err(HttpError::internal(format!("commit log: {e}")))
            } else {
                Ok(reducer_response(
                    call.result.outcome,
                    call.result.execution_duration,
                ))
            }
        }
        // Not a reducer: try a procedure of that name.
        Err(ReducerCallError::NoSuchReducer | ReducerCallError::ScheduleReducerNotFound) => module
            // The official route passes no timer, so its header reads 0 for procedures; the
            // start instant makes the header carry the procedure's real server-side duration.
            .call_procedure(
                caller.identity,
                Some(connection_id),
                Some(Instant::now()),
                &function,
                args,
                false,
            )
            .await
            .result
            .map_err(procedure_error)
            .and_then(|result| {
                let body = serde_json::to_vec(SerializeWrapper::from_ref(&result.return_val))
                    .map_err(HttpError::internal)?;
                let mut response = json_response(StatusCode::OK, body);
                let (name, value) = duration_header(result.execution_duration);
                response.headers_mut().insert(name, value);
                Ok(response)
            }),
        Err(e) => Err(reducer_error(e)),
    };

    module
        .call_identity_disconnected(caller.identity, connection_id)
        .await
        .map_err(|e| HttpError::internal(anyhow::anyhow!(e)))?;
    result
}

/// Reducer outcome → response: 200 empty, 530 with the error text, or 402 out of budget.
fn reducer_response(outcome: ReducerOutcome, duration: Duration) -> Response {
    let (status, body): (StatusCode, String) = match outcome {
        ReducerOutcome::Committed => (StatusCode::OK, String::new()),
        ReducerOutcome::Failed(message) => {
            (StatusCode::from_u16(530).unwrap(), message.to_string())
        }
        ReducerOutcome::BudgetExceeded => (
            StatusCode::PAYMENT_REQUIRED,
            "Module energy budget exhausted.".into(),
        ),
    };
    (status, [duration_header(duration)], body).into_response()
}

fn reducer_error(e: ReducerCallError) -> HttpError {
    let status = match e {
        ReducerCallError::Args(_) | ReducerCallError::LifecycleReducer(_) => {
            StatusCode::BAD_REQUEST
        }
        ReducerCallError::NoSuchModule(_)
        | ReducerCallError::NoSuchReducer
        | ReducerCallError::ScheduleReducerNotFound => StatusCode::NOT_FOUND,
        ReducerCallError::WorkerError(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    HttpError::text(status, format!("{:#}", anyhow::anyhow!(e)))
}

fn procedure_error(e: ProcedureCallError) -> HttpError {
    let status = match e {
        ProcedureCallError::Args(_) => StatusCode::BAD_REQUEST,
        ProcedureCallError::NoSuchModule(_) | ProcedureCallError::NoSuchProcedure => {
            StatusCode::NOT_FOUND
        }
        ProcedureCallError::OutOfEnergy => StatusCode::PAYMENT_REQUIRED,
        ProcedureCallError::InternalError(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    HttpError::text(status, format!("{:#}", anyhow::anyhow!(e)))
}

fn client_connected_error(e: ClientConnectedError) -> HttpError {
    match e {
        ClientConnectedError::Rejected(message) => HttpError::text(StatusCode::FORBIDDEN, message),
        ClientConnectedError::OutOfEnergy => {
            HttpError::text(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
        }
        ClientConnectedError::ReducerCall(e) => {
            HttpError::text(StatusCode::NOT_FOUND, format!("{:#}", anyhow::anyhow!(e)))
        }
        ClientConnectedError::DBError(_) => {
            HttpError::text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
        }
    }
}

/// `POST /v1/database/:name_or_identity/sql` (body: SQL text) → one result per statement.
async fn sql(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
    body: String,
) -> Result<Response> {
    let target = Target::parse(&name_or_identity)?;
    let db = app.control.resolve(&target)?;
    let module = app.control.module(&db).await?;
    // The owner may write and read private tables; anyone else reads public tables only.
    let auth = AuthCtx::new(db.owner_identity, caller.identity);

    let start = Instant::now();
    let mut head = Vec::new();
    let result = execute::run(
        module.relational_db().clone(),
        body,
        auth,
        Some(module.info.subscriptions.clone()),
        Some(module.clone()),
        &mut head,
    )
    .await
    .map_err(|e| {
        log::warn!("{e}");
        HttpError::text(StatusCode::BAD_REQUEST, e.to_string())
    })?;
    let total_duration = start.elapsed();
    let schema = head
        .into_iter()
        .map(|(name, ty)| ProductTypeElement::new(ty, Some(name)))
        .collect();
    let json = vec![SqlStmtResult {
        schema,
        rows: result.rows,
        total_duration_micros: total_duration.as_micros() as u64,
        stats: SqlStmtStats::from_metrics(&result.metrics),
    }];
    let mut response = to_json(&json)?;
    let (name, value) = duration_header(total_duration);
    response.headers_mut().insert(name, value);
    Ok(response)
}

#[derive(Deserialize)]
struct LogsQuery {
    num_lines: Option<u32>,
    #[serde(default)]
    follow: bool,
}

/// `GET /v1/database/:name_or_identity/logs?num_lines=N[&follow=true]` (owner only): the module's
/// log records as newline-delimited JSON, as the engine's database logger stores them.
async fn logs(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
    Query(LogsQuery { num_lines, follow }): Query<LogsQuery>,
) -> Result<Response> {
    let target = Target::parse(&name_or_identity)?;
    let db = app.control.resolve(&target)?;
    if caller.identity != db.owner_identity {
        return Err(HttpError::text(
            StatusCode::FORBIDDEN,
            format!(
                "{} is not authorized to perform action on database {}: view module logs",
                caller.identity, db.database_identity
            ),
        ));
    }
    let module = app.control.module(&db).await?;
    let stream = module
        .database_logger()
        .tail(num_lines, follow)
        .await
        .map_err(|e| {
            log::warn!(
                "database={} unable to tail logs: {e:#}",
                db.database_identity
            );
            HttpError::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "Logs are temporarily not available",
            )
        })?;
    Ok((
        [
            (header::CACHE_CONTROL, "no-cache"),
            (header::CONTENT_TYPE, "application/x-ndjson"),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

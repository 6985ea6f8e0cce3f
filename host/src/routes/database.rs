//! The database routes: publish, delete, call (reducers and procedures), SQL, logs and schema.

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use spacetimedb::auth::identity::ConnectionAuthCtx;
use spacetimedb::host::{
    FunctionArgs, MigratePlanResult, ModuleHost, ReducerCallError, ReducerCallResult,
    ReducerOutcome,
};
use spacetimedb::sql::execute;
use spacetimedb_client_api_messages::http::{SqlStmtResult, SqlStmtStats};
use spacetimedb_client_api_messages::name::{
    MigrationPolicy, PrePublishAutoMigrateResult, PrePublishManualMigrateResult, PrePublishResult,
    PrettyPrintStyle,
};
use spacetimedb_lib::Hash;
use spacetimedb_lib::identity::AuthCtx;
use spacetimedb_lib::sats::ser::serde::SerializeWrapper;
use spacetimedb_lib::{ConnectionId, Identity, ProductTypeElement};
use spacetimedb_schema::auto_migrate::{
    MigrationPolicy as SchemaMigrationPolicy, MigrationToken,
    PrettyPrintStyle as AutoMigratePrettyPrintStyle,
};

use super::{App, HttpError, Result, duration_header, json_response, to_json};
use crate::auth::Caller;
use crate::control::{Target, Use, authorize};

type AppState = State<Arc<App>>;

/// `GET /v1/database/{name_or_identity}/identity`: the database's identity in hex, as the
/// official CLI resolves a name before `call`, `sql`, `logs` or `delete` (an identity is
/// returned as given, as the official server does).
pub(super) async fn identity(
    State(app): AppState,
    Path(name_or_identity): Path<String>,
) -> Result<String> {
    Ok(match Target::parse(&name_or_identity)? {
        Target::Identity(identity) => identity,
        target => app.control.resolve(&target)?.database_identity,
    }
    .to_hex()
    .to_string())
}

#[derive(Deserialize)]
pub(super) struct PublishQuery {
    #[serde(default)]
    clear: bool,
    host_type: Option<String>,
    /// `BreakClients` lets an update break clients, given the `token` that `pre_publish` gave.
    #[serde(default)]
    policy: MigrationPolicy,
    token: Option<Hash>,
}

/// `POST /v1/database`: a new database with a generated identity and no name.
pub(super) async fn publish_new(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Query(query): Query<PublishQuery>,
    body: Bytes,
) -> Result<Response> {
    publish(&app, caller, None, query, body).await
}

/// `PUT /v1/database/:name_or_identity[?clear=true]`: create, update, or wipe and republish.
pub(super) async fn publish_named(
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
    wasm_only(query.host_type.as_deref(), &body)?;
    let policy = match (query.policy, query.token) {
        (MigrationPolicy::Compatible, _) => SchemaMigrationPolicy::Compatible,
        (MigrationPolicy::BreakClients, Some(token)) => SchemaMigrationPolicy::BreakClients(token),
        (MigrationPolicy::BreakClients, None) => {
            return Err(HttpError::text(
                StatusCode::BAD_REQUEST,
                "Migration policy is set to `BreakClients`, but no migration token was provided.",
            ));
        }
    };
    let result = app
        .control
        .publish(
            caller.identity,
            target,
            body.to_vec().into(),
            query.clear,
            policy,
        )
        .await?;
    to_json(&result)
}

/// Refuses a program that is not a Wasm binary, or a host type other than Wasm: this build has
/// no JavaScript runtime (V8 is replaced by abort() stubs), so it is refused here, before the
/// engine could hand it to V8.
fn wasm_only(host_type: Option<&str>, program: &[u8]) -> Result<()> {
    let js_requested = host_type.is_some_and(|t| !t.eq_ignore_ascii_case("wasm"));
    if js_requested || !program.starts_with(b"\0asm") {
        return Err(HttpError::text(
            StatusCode::BAD_REQUEST,
            "graph-host runs WebAssembly modules only: the program is not a Wasm binary \
             (JavaScript modules are not supported by this build)",
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
pub(super) struct PrePublishQuery {
    #[serde(default)]
    style: PrettyPrintStyle,
    host_type: Option<String>,
}

/// `POST /v1/database/:name_or_identity/pre_publish` (body: the new program; the owner only):
/// what publishing it would do, which the official CLI shows before an update. A plan that
/// breaks clients comes with the token that `PUT ...?policy=BreakClients&token=` needs.
pub(super) async fn pre_publish(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
    Query(query): Query<PrePublishQuery>,
    body: Bytes,
) -> Result<Response> {
    let target = Target::parse(&name_or_identity)?;
    // An unknown database is a 404 before anything else, as on the official route.
    let database_identity = app.control.resolve(&target)?.database_identity;
    wasm_only(query.host_type.as_deref(), &body)?;
    let style = match query.style {
        PrettyPrintStyle::AnsiColor => AutoMigratePrettyPrintStyle::AnsiColor,
        PrettyPrintStyle::NoColor => AutoMigratePrettyPrintStyle::NoColor,
    };
    let plan = app
        .control
        .migrate_plan(caller.identity, &target, body.to_vec().into(), style)
        .await?;
    to_json(&match plan {
        MigratePlanResult::Success {
            old_module_hash,
            new_module_hash,
            plan,
            breaks_client,
            major_version_upgrade,
        } => PrePublishResult::AutoMigrate(PrePublishAutoMigrateResult {
            migrate_plan: plan,
            break_clients: breaks_client,
            token: MigrationToken {
                database_identity,
                old_module_hash,
                new_module_hash,
            }
            .hash(),
            major_version_upgrade,
        }),
        MigratePlanResult::AutoMigrationError {
            error,
            major_version_upgrade,
        } => PrePublishResult::ManualMigrate(PrePublishManualMigrateResult {
            reason: error.to_string(),
            major_version_upgrade,
        }),
    })
}

/// `DELETE /v1/database/:name_or_identity` (owner only).
pub(super) async fn delete_database(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
) -> Result<()> {
    let target = Target::parse(&name_or_identity)?;
    Ok(app.control.delete(caller.identity, &target).await?)
}

/// `POST /v1/database/:name_or_identity/call/:function`, for reducers and procedures.
pub(super) async fn call(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path((name_or_identity, function)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    // Same checks in the same order as the official route: the database (its middleware), then
    // the handler's extractors.
    let target = Target::parse(&name_or_identity)?;
    let db = app.control.resolve(&target)?;
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
    let user = app.control.use_replica(&db);
    let module = app.control.module(&db).await?;
    let args = FunctionArgs::Json(body);
    let connection_auth = caller.connection_auth().map_err(HttpError::internal)?;
    let identity = caller.identity;
    as_new_connection(
        module,
        user,
        identity,
        connection_auth,
        move |module, connection_id| call_function(module, identity, connection_id, function, args),
    )
    .await
}

/// Runs `work` as a fresh connection of `identity`, as the official server runs every HTTP call
/// and SQL request: `client_connected` first (a module that refuses the caller ends the request
/// with its error), then `work`, then `client_disconnected` whatever `work` returned. In a task
/// of its own, so that a client that hangs up (a timeout while a call waits for a module
/// instance) cancels nothing half-way and the connection never stays behind in `st_client`.
/// `user` is held until the end (see [`crate::control::Control::use_replica`]).
async fn as_new_connection<F, Fut>(
    module: ModuleHost,
    user: Use,
    identity: Identity,
    connection_auth: ConnectionAuthCtx,
    work: F,
) -> Result<Response>
where
    F: FnOnce(ModuleHost, ConnectionId) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Response>> + Send + 'static,
{
    tokio::spawn(async move {
        let _user = user;
        let connection_id = ConnectionId::from_le_byte_array(rand::random());
        module
            .call_identity_connected(connection_auth, connection_id)
            .await?;
        let result = work(module.clone(), connection_id).await;
        module
            .call_identity_disconnected(identity, connection_id)
            .await
            .map_err(|e| HttpError::internal(anyhow::anyhow!(e)))?;
        result
    })
    .await
    .map_err(HttpError::internal)?
}

/// Calls `function` on connection `connection_id`: a reducer, else a procedure of that name.
async fn call_function(
    module: ModuleHost,
    identity: Identity,
    connection_id: ConnectionId,
    function: String,
    args: FunctionArgs,
) -> Result<Response> {
    // The official route tries a reducer first and falls back to a procedure, so the engine
    // logs every procedure call as an "attempt to call nonexistent reducer" error; a name the
    // module defines as a procedure goes straight to the fallback instead.
    let reducer = if module
        .info
        .module_def
        .procedure(function.as_str())
        .is_some()
    {
        Err(ReducerCallError::NoSuchReducer)
    } else {
        module
            .call_reducer_with_offset(
                identity,
                Some(connection_id),
                None,
                None,
                None,
                &function,
                args.clone(),
            )
            .await
    };
    match reducer {
        Ok(call) => {
            // Answer a committed write only once it is durable (clients resume from what was
            // acknowledged).
            if matches!(call.result.outcome, ReducerOutcome::Committed) {
                until_durable(&module, call.tx_offset).await?;
            }
            Ok(reducer_response(call.result))
        }
        // Not a reducer: try a procedure of that name.
        Err(ReducerCallError::NoSuchReducer | ReducerCallError::ScheduleReducerNotFound) => {
            let call = module
                // The official route passes no timer, so its header reads 0 for procedures;
                // the start instant makes the header carry the procedure's real server-side
                // duration.
                .call_procedure(
                    identity,
                    Some(connection_id),
                    Some(Instant::now()),
                    &function,
                    args,
                    // Confirmed reads, as the official route asks: a transaction the procedure
                    // commits is durable before the procedure goes on.
                    true,
                )
                .await;
            // That covers commits only. A transaction the procedure read and rolled back may
            // have seen commits not yet durable, which a crash would undo: answer once the
            // state it last read is durable, as the WebSocket's confirmed reads do.
            if let Some(offset) = call.tx_offset {
                until_durable(&module, offset).await?;
            }
            call.result.map_err(HttpError::from).and_then(|result| {
                let body = serde_json::to_vec(SerializeWrapper::from_ref(&result.return_val))
                    .map_err(HttpError::internal)?;
                let mut response = json_response(StatusCode::OK, body);
                let (name, value) = duration_header(result.execution_duration);
                response.headers_mut().insert(name, value);
                Ok(response)
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Waits until the transaction whose offset `offset` gives is durable (at once on an in-memory
/// host), so that an answer sent after it survives a crash of this process.
async fn until_durable<E>(
    module: &ModuleHost,
    offset: impl Future<Output = std::result::Result<u64, E>>,
) -> Result<()> {
    let Some(mut durable) = module.durable_tx_offset() else {
        return Ok(());
    };
    let offset = offset
        .await
        .map_err(|_| HttpError::internal("the transaction ended without an offset"))?;
    durable
        .wait_for(offset)
        .await
        .map_err(|e| HttpError::internal(format!("commit log: {e}")))?;
    Ok(())
}

/// Reducer outcome → response: 200 empty, 530 with the error text, or 402 out of budget; with
/// the energy the call used and its duration in headers, as on the official route.
fn reducer_response(call: ReducerCallResult) -> Response {
    let (status, body): (StatusCode, String) = match call.outcome {
        ReducerOutcome::Committed => (StatusCode::OK, String::new()),
        ReducerOutcome::Failed(message) => {
            (StatusCode::from_u16(530).unwrap(), message.to_string())
        }
        ReducerOutcome::BudgetExceeded => (
            StatusCode::PAYMENT_REQUIRED,
            "Module energy budget exhausted.".into(),
        ),
    };
    let energy = (
        HeaderName::from_static("spacetime-energy-used"),
        HeaderValue::from(call.execution_budget_used.get()),
    );
    (
        status,
        [energy, duration_header(call.execution_duration)],
        body,
    )
        .into_response()
}

#[derive(Deserialize)]
pub(super) struct SqlQuery {
    confirmed: Option<bool>,
}

/// `POST /v1/database/:name_or_identity/sql[?confirmed=BOOL]` (body: SQL text) → one result
/// per statement. As on the official server, the answer waits until the statement's
/// transaction is durable unless `confirmed=false`: a write it acknowledges survives a crash,
/// and rows it returns were read from a durable state. Like a call, the request is a connection
/// of its own: the module's `client_connected` may refuse it, and `client_disconnected` runs after.
pub(super) async fn sql(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
    Query(SqlQuery { confirmed }): Query<SqlQuery>,
    body: String,
) -> Result<Response> {
    let target = Target::parse(&name_or_identity)?;
    let db = app.control.resolve(&target)?;
    let user = app.control.use_replica(&db);
    let module = app.control.module(&db).await?;
    let connection_auth = caller.connection_auth().map_err(HttpError::internal)?;
    // The owner may write and read private tables; anyone else reads public tables only.
    let auth = AuthCtx::new(db.owner_identity, caller.identity);
    as_new_connection(
        module,
        user,
        caller.identity,
        connection_auth,
        move |module, _| run_sql(module, auth, body, confirmed.unwrap_or(true)),
    )
    .await
}

/// Runs the statements of `body` as `auth`; when `confirmed`, answers once their transaction is
/// durable.
async fn run_sql(
    module: ModuleHost,
    auth: AuthCtx,
    body: String,
    confirmed: bool,
) -> Result<Response> {
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
    if confirmed {
        until_durable(&module, result.tx_offset).await?;
    }
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
pub(super) struct LogsQuery {
    num_lines: Option<u32>,
    #[serde(default)]
    follow: bool,
}

/// `GET /v1/database/:name_or_identity/logs?num_lines=N[&follow=true]` (owner only): the module's
/// log records as newline-delimited JSON, as the engine's database logger stores them.
pub(super) async fn logs(
    State(app): AppState,
    Extension(caller): Extension<Caller>,
    Path(name_or_identity): Path<String>,
    Query(LogsQuery { num_lines, follow }): Query<LogsQuery>,
) -> Result<Response> {
    let target = Target::parse(&name_or_identity)?;
    let db = app.control.resolve(&target)?;
    authorize(caller.identity, &db, "view module logs")?;
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

#[derive(Deserialize)]
pub(super) struct SchemaQuery {
    version: u32,
}

/// `GET /v1/database/:name_or_identity/schema?version=9|10`: the module's definition as
/// `RawModuleDefV9` or `RawModuleDefV10` in SATS-JSON, as the official route returns it (tools
/// read tables, reducers, procedures and types from it).
pub(super) async fn schema(
    State(app): AppState,
    Path(name_or_identity): Path<String>,
    Query(SchemaQuery { version }): Query<SchemaQuery>,
) -> Result<Response> {
    use spacetimedb_lib::db::raw_def::{v9::RawModuleDefV9, v10::RawModuleDefV10};
    let target = Target::parse(&name_or_identity)?;
    let db = app.control.resolve(&target)?;
    let module = app.control.module(&db).await?;
    let def = module.info.module_def.as_ref().clone();
    let body = match version {
        9 => serde_json::to_vec(SerializeWrapper::from_ref(&RawModuleDefV9::from(def))),
        10 => serde_json::to_vec(SerializeWrapper::from_ref(&RawModuleDefV10::from(def))),
        _ => {
            return Err(HttpError::bad_request(format!(
                "unknown schema version {version}: expected 9 or 10"
            )));
        }
    };
    Ok(json_response(
        StatusCode::OK,
        body.map_err(HttpError::internal)?,
    ))
}

//! Who is calling: tokens as the official server reads them (`Authorization: Bearer`, else a
//! `token` query parameter), a fresh identity for a caller without one, `GET /v1/ping` and the
//! `/v1/identity` routes.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use spacetimedb_lib::Identity;

use super::{App, HttpError, Result, to_json};
use crate::auth::Caller;

type AppState = State<Arc<App>>;

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
pub(super) async fn authenticate(State(app): AppState, mut req: Request, next: Next) -> Response {
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

/// `GET /v1/ping`: 200 if the server is up (a token, if sent, must be valid).
pub(super) async fn ping(State(app): AppState, headers: HeaderMap, uri: Uri) -> Result<()> {
    if let Some(token) = credentials(&headers, &uri)? {
        app.auth
            .verify(&token)
            .await
            .map_err(|e| HttpError::text(StatusCode::UNAUTHORIZED, e))?;
    }
    Ok(())
}

/// `POST /v1/identity` → `{"identity": "<hex>", "token": "<jwt>"}`.
pub(super) async fn create_identity(State(app): AppState) -> Result<Response> {
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

/// The caller's verified token, which the route requires (the official
/// `SpacetimeAuthRequired`: 401 without one).
async fn required_caller(app: &App, headers: &HeaderMap, uri: &Uri) -> Result<Caller> {
    let token = credentials(headers, uri)?
        .ok_or_else(|| HttpError::text(StatusCode::UNAUTHORIZED, "Authorization required"))?;
    app.auth
        .verify(&token)
        .await
        .map_err(|e| HttpError::text(StatusCode::UNAUTHORIZED, e))
}

/// How long a token from `POST /v1/identity/websocket-token` lasts, as on the official server.
const WEBSOCKET_TOKEN_LIFE: Duration = Duration::from_secs(60);

/// `POST /v1/identity/websocket-token` → `{"token": "<jwt>"}`: the caller's identity in a token
/// that expires in 60 s. A browser cannot set headers on a WebSocket, so the SDKs built for one
/// (TypeScript, the Rust SDK's `browser` feature, C# on WebGL) fetch this token and pass it in
/// the subscribe URL's `token` parameter, where a URL that gets logged gives little away.
pub(super) async fn websocket_token(
    State(app): AppState,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response> {
    #[derive(Serialize)]
    struct WebsocketTokenResponse {
        token: String,
    }
    let caller = required_caller(&app, &headers, &uri).await?;
    let token = app
        .auth
        .short_lived(&caller, WEBSOCKET_TOKEN_LIFE)
        .map_err(HttpError::internal)?;
    to_json(&WebsocketTokenResponse { token })
}

/// An identity in a path, as 64 hex digits (a `0x` prefix allowed).
fn identity_in_path(hex: &str) -> Result<Identity> {
    Identity::from_hex(hex.trim_start_matches("0x"))
        .map_err(|_| HttpError::text(StatusCode::BAD_REQUEST, format!("invalid identity `{hex}`")))
}

/// `GET /v1/identity/{identity}/verify`: 204 if the caller's token is for `identity`, 400 if it
/// is for another.
pub(super) async fn verify_identity(
    State(app): AppState,
    Path(identity): Path<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<StatusCode> {
    let identity = identity_in_path(&identity)?;
    let caller = required_caller(&app, &headers, &uri).await?;
    match caller.identity == identity {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(HttpError::text(
            StatusCode::BAD_REQUEST,
            "the token is for another identity",
        )),
    }
}

/// `GET /v1/identity/{identity}/databases` → `{"identities": [...]}`: the databases `identity`
/// owns (what `spacetime list` shows).
pub(super) async fn databases(
    State(app): AppState,
    Path(identity): Path<String>,
) -> Result<Response> {
    #[derive(Serialize)]
    struct GetDatabasesResponse {
        identities: Vec<Identity>,
    }
    let owner = identity_in_path(&identity)?;
    to_json(&GetDatabasesResponse {
        identities: app.control.owned_by(owner),
    })
}

/// `GET /v1/identity/public-key`: the PEM key that verifies this host's tokens (what
/// `spacetime server fingerprint` reads).
pub(super) async fn public_key(State(app): AppState) -> Response {
    (
        [(header::CONTENT_TYPE, "application/pem-certificate-chain")],
        app.auth.public_key_pem().to_vec(),
    )
        .into_response()
}

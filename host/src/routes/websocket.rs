//! The WebSocket handshake on hyper's upgrade, and the socket it yields. axum's own
//! `WebSocketUpgrade` would do the handshake, but its socket hides the connection beneath it,
//! which [`refuse_oversize`] needs: a client told its message is too large must first be let
//! finish sending it.

use std::future::Future;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::SinkExt;
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

/// An upgraded connection.
pub(super) type Socket = WebSocketStream<TokioIo<Upgraded>>;

/// A request to upgrade to a WebSocket. A request that is not one is refused as the official
/// server refuses it: 426 with the headers that name the protocol when it asks for no upgrade
/// (a plain GET), else 400 (or 405) saying what is missing.
pub(super) struct Upgrade {
    key: HeaderValue,
    offered: Vec<Vec<u8>>,
    on_upgrade: OnUpgrade,
}

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        let refuse = |status: StatusCode, message: &'static str| (status, message).into_response();
        if parts.method != Method::GET {
            return Err(refuse(
                StatusCode::METHOD_NOT_ALLOWED,
                "Request method must be `GET`",
            ));
        }
        let upgrade_required = || {
            (
                StatusCode::UPGRADE_REQUIRED,
                [
                    (header::CONNECTION, "upgrade"),
                    (header::UPGRADE, "websocket"),
                ],
                "This service requires use of the websocket protocol",
            )
                .into_response()
        };
        let headers = &parts.headers;
        if !list_has(headers, header::CONNECTION, b"upgrade")
            || !list_has(headers, header::UPGRADE, b"websocket")
        {
            return Err(upgrade_required());
        }
        if !list_has(headers, header::SEC_WEBSOCKET_VERSION, b"13") {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "`Sec-WebSocket-Version` header did not include '13'",
            ));
        }
        let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY).cloned() else {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "`Sec-WebSocket-Key` header missing",
            ));
        };
        let offered = list(headers, header::SEC_WEBSOCKET_PROTOCOL)
            .map(<[u8]>::to_vec)
            .collect();
        let on_upgrade = parts
            .extensions
            .remove::<OnUpgrade>()
            .ok_or_else(upgrade_required)?;
        Ok(Self {
            key,
            offered,
            on_upgrade,
        })
    }
}

/// The comma-separated, trimmed items of every `name` header.
fn list(headers: &HeaderMap, name: HeaderName) -> impl Iterator<Item = &[u8]> {
    headers
        .get_all(name)
        .into_iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
}

fn list_has(headers: &HeaderMap, name: HeaderName, item: &[u8]) -> bool {
    list(headers, name).any(|it| it.eq_ignore_ascii_case(item))
}

impl Upgrade {
    /// The first of `ours` (in our order of preference) that the client offered.
    pub(super) fn choose<'a>(&self, ours: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        ours.into_iter()
            .find(|ours| self.offered.iter().any(|it| it == ours.as_bytes()))
    }

    /// The 101 response speaking `protocol`; `serve` then runs on the upgraded socket.
    pub(super) fn accept<F>(
        self,
        protocol: &'static str,
        config: WebSocketConfig,
        serve: impl FnOnce(Socket) -> F + Send + 'static,
    ) -> Response
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let on_upgrade = self.on_upgrade;
        let config = config.read_buffer_size(READ_BUFFER);
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => {
                    let io = TokioIo::new(upgraded);
                    serve(WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await)
                        .await
                }
                Err(e) => log::warn!("websocket: upgrade failed: {e}"),
            }
        });
        (
            StatusCode::SWITCHING_PROTOCOLS,
            [
                (header::CONNECTION, "upgrade".to_owned()),
                (header::UPGRADE, "websocket".to_owned()),
                (
                    header::SEC_WEBSOCKET_ACCEPT,
                    derive_accept_key(self.key.as_bytes()),
                ),
                (header::SEC_WEBSOCKET_PROTOCOL, protocol.to_owned()),
            ],
        )
            .into_response()
    }
}

/// A close frame; the reason is cut to what a control frame holds (125 bytes, 2 of them the
/// code).
pub(super) fn close(code: CloseCode, reason: impl Into<String>) -> Message {
    let mut reason: String = reason.into();
    if reason.len() > 123 {
        let mut cut = 120;
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        reason.truncate(cut);
        reason.push_str("...");
    }
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}

/// How much the socket library reads from the connection at a time (its default), and so at
/// most how much of a message it holds when it refuses it.
const READ_BUFFER: usize = 128 * 1024;

/// Longest a refused client may take to finish sending its message.
const DRAIN_FOR: Duration = Duration::from_secs(60);

/// How long the end of a refused message, and the client's close frame, may take to arrive
/// once the rest has (the official server waits as long for a client's close frame).
const DRAIN_QUIET: Duration = Duration::from_millis(250);

/// Tells a client that its message of `size` bytes is over `limit` (close code 1009), and
/// reads and drops what it still sends of that message. The socket library refuses a frame by
/// its header, while the client is still writing the rest: closing then, with its bytes
/// unread, makes the kernel reset the connection, and the client sees the reset instead of the
/// reason. The socket library may hold up to [`READ_BUFFER`] bytes of the message already, so
/// once all but that much has been read, the rest and the client's close frame are waited
/// for only while they keep coming ([`DRAIN_QUIET`]); [`DRAIN_FOR`] bounds it all.
pub(super) async fn refuse_oversize(socket: &mut Socket, size: usize, limit: usize) {
    let reason = format!("a message of {size} bytes is over the limit of {limit} bytes");
    let unseen = size.saturating_sub(READ_BUFFER);
    // The close frame too: a client that reads nothing could hold its send for good.
    let _ = tokio::time::timeout(DRAIN_FOR, async {
        if socket.send(close(CloseCode::Size, reason)).await.is_err() {
            return;
        }
        let io = socket.get_mut();
        let mut buffer = vec![0; 64 * 1024];
        let mut read = 0usize;
        loop {
            let next = io.read(&mut buffer);
            let n = if read < unseen {
                next.await
            } else {
                match tokio::time::timeout(DRAIN_QUIET, next).await {
                    Ok(n) => n,
                    Err(_) => return,
                }
            };
            match n {
                Ok(0) | Err(_) => return,
                Ok(n) => read = read.saturating_add(n),
            }
        }
    })
    .await;
}

//! The WebSocket handshake on hyper's upgrade, and the socket it yields. axum's own
//! `WebSocketUpgrade` would do the handshake, but its socket hides the connection beneath it,
//! which [`refuse`] needs: a client told why its input is refused (a message too large, a
//! broken frame) must first be let finish sending it.

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
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
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
        let reject = |status: StatusCode, message: &'static str| (status, message).into_response();
        if parts.method != Method::GET {
            return Err(reject(
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
        let version = headers.get(header::SEC_WEBSOCKET_VERSION);
        if version.is_none_or(|version| version.as_bytes() != b"13") {
            return Err(reject(
                StatusCode::BAD_REQUEST,
                "`Sec-WebSocket-Version` header did not include '13'",
            ));
        }
        let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY).cloned() else {
            return Err(reject(
                StatusCode::BAD_REQUEST,
                "`Sec-WebSocket-Key` header missing",
            ));
        };
        if !is_key(key.as_bytes()) {
            return Err(reject(
                StatusCode::BAD_REQUEST,
                "`Sec-WebSocket-Key` is not 16 bytes in base64",
            ));
        }
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

/// Whether `key` is 16 bytes in base64, as RFC 6455 has clients send (22 digits and `==`).
fn is_key(key: &[u8]) -> bool {
    let digit = |b: &u8| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/';
    key.len() == 24 && key.ends_with(b"==") && key[..22].iter().all(digit)
}

impl Upgrade {
    /// The first of `ours` (subprotocols by name, in our order of preference) that the client
    /// offered.
    pub(super) fn choose<T: Copy>(&self, ours: &[(&'static str, T)]) -> Option<(&'static str, T)> {
        ours.iter()
            .copied()
            .find(|(name, _)| self.offered.iter().any(|it| it == name.as_bytes()))
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
/// most how much of a frame it holds when it refuses it by its header.
const READ_BUFFER: usize = 128 * 1024;

/// Longest a refused client may take to finish sending what it had begun.
const DRAIN_FOR: Duration = Duration::from_secs(60);

/// How long a refused client may go quiet while the rest of a message it began is due.
const DRAIN_STALL: Duration = Duration::from_secs(2);

/// How long a refused client may go quiet once nothing more is known to be due: the end of a
/// message and its close frame (the official server waits as long for a client's close frame).
const DRAIN_QUIET: Duration = Duration::from_millis(250);

/// What the client is told when the socket library refuses its input, and how much more of
/// that input is on its way.
pub(super) struct Refusal {
    frame: Message,
    /// Bytes of a refused frame that are known to be still unread.
    unseen: usize,
}

/// The refusal to send for `error`, or `None` when the connection is simply gone.
pub(super) fn refusal(error: &WsError) -> Option<Refusal> {
    let (code, reason, unseen) = match error {
        // A frame is refused by its header, before its payload is read; a message sent in
        // fragments, once the fragment that takes it over the limit has been read whole.
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => (
            CloseCode::Size,
            format!("a message of at least {size} bytes is over the limit of {max_size} bytes"),
            size.saturating_sub(READ_BUFFER),
        ),
        WsError::Capacity(e) => (CloseCode::Size, e.to_string(), 0),
        WsError::Utf8(_) => (
            CloseCode::Invalid,
            "a text frame that is not UTF-8".into(),
            0,
        ),
        WsError::Protocol(e) => (CloseCode::Protocol, e.to_string(), 0),
        _ => return None,
    };
    Some(Refusal {
        frame: close(code, reason),
        unseen,
    })
}

/// Sends `refusal`'s close frame, then reads and drops what the client still sends. A client
/// that is still writing what was refused (a frame refused by its header) would otherwise see
/// the kernel reset the connection, which closing with its bytes unread does, instead of the
/// reason. Draining ends when the client closes, when it goes quiet ([`DRAIN_STALL`] while
/// part of a refused frame is known to be due, [`DRAIN_QUIET`] after), or after [`DRAIN_FOR`].
pub(super) async fn refuse(socket: &mut Socket, refusal: Refusal) {
    // The close frame too: a client that reads nothing could hold its send for good.
    let _ = tokio::time::timeout(DRAIN_FOR, async {
        if socket.send(refusal.frame).await.is_err() {
            return;
        }
        let io = socket.get_mut();
        let mut buffer = vec![0; 64 * 1024];
        let mut read = 0usize;
        loop {
            let quiet = if read < refusal.unseen {
                DRAIN_STALL
            } else {
                DRAIN_QUIET
            };
            match tokio::time::timeout(quiet, io.read(&mut buffer)).await {
                Ok(Ok(0) | Err(_)) | Err(_) => return,
                Ok(Ok(n)) => read = read.saturating_add(n),
            }
        }
    })
    .await;
}

//! The round-trip floor without the SDK: the module's empty procedure and reducer called over
//! the same WebSocket route by a client that writes the protocol's frames itself, on one
//! blocking socket in the calling thread. The SDK hands every call to its connection's thread
//! and every answer back (two thread wake-ups per call); this client has none, so the gap
//! between the two is what the SDK's threads cost and this floor is what the server costs.

use __ws::common::CallProcedureFlags;
use __ws::v2::{BIN_PROTOCOL, CallProcedure, CallReducer, ClientMessage, ServerMessage};
use anyhow::{Context, anyhow, bail};
use graph_client::graph::GraphDb;
use spacetimedb_sdk::__codegen::{__sats::bsatn, __ws};
use std::net::TcpStream;
use tungstenite::client::IntoClientRequest;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The system name of this floor in reports.
pub const SYSTEM: &str = "stdb-ws-raw";

/// One WebSocket connection to `db`'s database, with `db`'s token and the server's default
/// confirmed-reads setting (as the SDK connection graph-bench opens).
pub struct RawWs {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_request: u32,
}

impl RawWs {
    pub fn connect(db: &GraphDb) -> anyhow::Result<Self> {
        let ws = db.server().url().replacen("http", "ws", 1);
        let url = format!(
            "{ws}/v1/database/{}/subscribe?compression=None",
            db.database()
        );
        let mut request = url.as_str().into_client_request()?;
        let headers = request.headers_mut();
        headers.insert("Sec-WebSocket-Protocol", BIN_PROTOCOL.parse()?);
        if let Some(token) = db.server().token() {
            headers.insert("Authorization", format!("Bearer {token}").parse()?);
        }
        let (socket, _) =
            tungstenite::connect(request).with_context(|| format!("connecting to {url}"))?;
        if let MaybeTlsStream::Plain(tcp) = socket.get_ref() {
            // As the SDK's socket: a small frame goes out at once.
            tcp.set_nodelay(true)?;
        }
        Ok(Self {
            socket,
            next_request: 0,
        })
    }

    /// Calls `noop_procedure` (or `noop_reducer`) and waits for its result.
    pub fn noop(&mut self, procedure: bool) -> anyhow::Result<()> {
        let request_id = self.next_request;
        self.next_request += 1;
        let args = bsatn::to_vec(&())?.into();
        let message = if procedure {
            ClientMessage::CallProcedure(CallProcedure {
                request_id,
                flags: CallProcedureFlags::Default,
                procedure: "noop_procedure".into(),
                args,
            })
        } else {
            ClientMessage::CallReducer(CallReducer {
                request_id,
                flags: Default::default(),
                reducer: "noop_reducer".into(),
                args,
            })
        };
        self.socket
            .send(Message::Binary(bsatn::to_vec(&message)?.into()))?;
        loop {
            let bytes = match self.socket.read()? {
                Message::Binary(bytes) => bytes,
                Message::Close(frame) => bail!("the server closed the connection: {frame:?}"),
                _ => continue,
            };
            let (&compression, body) = bytes.split_first().ok_or(anyhow!("an empty frame"))?;
            if compression != 0 {
                bail!("a compressed frame (tag {compression}) though none was asked for");
            }
            match bsatn::from_slice(body)? {
                ServerMessage::ProcedureResult(r) if r.request_id == request_id => {
                    return match r.status {
                        __ws::v2::ProcedureStatus::Returned(_) => Ok(()),
                        __ws::v2::ProcedureStatus::InternalError(e) => Err(anyhow!("{e}")),
                    };
                }
                ServerMessage::ReducerResult(r) if r.request_id == request_id => {
                    return match r.result {
                        __ws::v2::ReducerOutcome::Ok(_) | __ws::v2::ReducerOutcome::OkEmpty => {
                            Ok(())
                        }
                        other => Err(anyhow!("{other:?}")),
                    };
                }
                _ => {}
            }
        }
    }
}

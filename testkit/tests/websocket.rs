//! graph-host speaks SpacetimeDB's WebSocket protocol: the real host and engine, the
//! conformance module, reached both by a raw client that writes the protocol's frames itself
//! (to send what no SDK would) and by `spacetimedb-sdk` 2.14 on bindings that `graph-host
//! generate` wrote for that module (`conformance_bindings/`, checked to be current).

mod conformance_bindings;

use conformance_bindings::*;
use graph_client::server::{Server, ServerError};
use graph_testkit::{TestHost, conformance_wasm, host_binary, json};
use spacetimedb_sdk::__codegen::__sats::bsatn;
use spacetimedb_sdk::__codegen::__ws::common::{CallProcedureFlags, QuerySetId};
use spacetimedb_sdk::__codegen::__ws::v2::{
    BIN_PROTOCOL, CallProcedure, ClientMessage, ProcedureStatus, ServerMessage, Subscribe,
};
use spacetimedb_sdk::{DbContext, Table};
use std::net::TcpStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tungstenite::client::IntoClientRequest;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

const DB: &str = "conf";
const WAIT: Duration = Duration::from_secs(20);

/// A host with the conformance module published as [`DB`]; its owner.
fn host_with_module(args: &[&str]) -> (TestHost, Server) {
    let host = TestHost::start_with(args);
    let (_, owner) = host.client();
    owner.publish(DB, conformance_wasm(), false).unwrap();
    (host, owner)
}

/// How many WebSocket (and in-flight HTTP) connections the engine has registered, besides the
/// SQL request that asks (a connection of its own while it runs, as on the official server).
fn connected_clients(owner: &Server) -> usize {
    owner.sql(DB, "SELECT * FROM st_client").unwrap()[0]
        .rows
        .len()
        - 1
}

/// Waits until [`connected_clients`] is `n`.
fn wait_for_clients(owner: &Server, n: usize) {
    let deadline = Instant::now() + WAIT;
    while connected_clients(owner) != n {
        assert!(
            Instant::now() < deadline,
            "{} clients registered, expected {n}",
            connected_clients(owner)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A client that writes the protocol's frames itself.
struct RawClient {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    /// Pings read by `recv` (each answered by the socket).
    pings: usize,
}

impl RawClient {
    /// Connects to `database`'s subscribe route, asking for `protocol` (none: ask for none).
    fn connect(
        url: &str,
        database: &str,
        token: Option<&str>,
        protocol: Option<&str>,
    ) -> Result<Self, Box<tungstenite::Error>> {
        Self::connect_with_query(url, database, "", token, protocol)
    }

    /// As [`Self::connect`], with `query` (`&name=value…`) appended to the URL's parameters.
    fn connect_with_query(
        url: &str,
        database: &str,
        query: &str,
        token: Option<&str>,
        protocol: Option<&str>,
    ) -> Result<Self, Box<tungstenite::Error>> {
        let ws = url.replacen("http://", "ws://", 1);
        let mut request = format!("{ws}/v1/database/{database}/subscribe?compression=None{query}")
            .into_client_request()?;
        if let Some(protocol) = protocol {
            request
                .headers_mut()
                .insert("Sec-WebSocket-Protocol", protocol.parse().unwrap());
        }
        if let Some(token) = token {
            let bearer = format!("Bearer {token}").parse().unwrap();
            request.headers_mut().insert("Authorization", bearer);
        }
        let (socket, _) = tungstenite::connect(request)?;
        if let MaybeTlsStream::Plain(tcp) = socket.get_ref() {
            tcp.set_read_timeout(Some(WAIT)).unwrap();
        }
        Ok(Self { socket, pings: 0 })
    }

    fn send(&mut self, message: &ClientMessage) {
        let bytes = bsatn::to_vec(message).unwrap();
        self.socket.send(Message::Binary(bytes.into())).unwrap();
    }

    /// The next server message: `Err` with the close frame's code when the server closes.
    fn recv(&mut self) -> Result<ServerMessage, Option<CloseCode>> {
        loop {
            match self.socket.read() {
                Ok(Message::Binary(bytes)) => {
                    assert_eq!(bytes[0], 0, "uncompressed, as asked");
                    return Ok(bsatn::from_slice(&bytes[1..]).expect("a v2 server message"));
                }
                Ok(Message::Close(frame)) => return Err(frame.map(|f| f.code)),
                Ok(Message::Ping(_)) => self.pings += 1,
                Ok(_) => {}
                Err(e) => panic!("reading from the socket: {e}"),
            }
        }
    }

    /// Sends a call of a procedure with raw BSATN arguments, without waiting for its result.
    fn send_call(&mut self, request_id: u32, name: &str, args: Vec<u8>) {
        self.send(&ClientMessage::CallProcedure(CallProcedure {
            request_id,
            flags: CallProcedureFlags::Default,
            procedure: name.into(),
            args: args.into(),
        }));
    }

    /// Calls a procedure with raw BSATN arguments; returns its status.
    fn call_procedure(&mut self, request_id: u32, name: &str, args: Vec<u8>) -> ProcedureStatus {
        self.send_call(request_id, name, args);
        loop {
            match self.recv() {
                Ok(ServerMessage::ProcedureResult(r)) if r.request_id == request_id => {
                    return r.status;
                }
                Ok(_) => {}
                Err(code) => panic!("closed ({code:?}) before the procedure's result"),
            }
        }
    }
}

/// The HTTP status of a refused upgrade.
fn refused(result: Result<RawClient, Box<tungstenite::Error>>) -> u16 {
    match result.map_err(|e| *e) {
        Err(tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("expected an HTTP refusal, got a connection"),
    }
}

fn echo_args(x: u64) -> Vec<u8> {
    bsatn::to_vec(&echo_procedure::EchoArgs { x, label: None }).unwrap()
}

#[test]
fn the_protocol_refuses_bad_input_and_keeps_serving() {
    let (host, owner) = host_with_module(&[]);
    let url = host.url();
    let token = owner.token().unwrap();
    let before = connected_clients(&owner);

    // Refused upgrades: a clear status, nothing registered.
    let status = refused(RawClient::connect(url, DB, Some(token), None));
    assert_eq!(status, 400, "no subprotocol");
    let status = refused(RawClient::connect(
        url,
        DB,
        Some("not.a.jwt"),
        Some(BIN_PROTOCOL),
    ));
    assert_eq!(status, 401, "bad token");
    let status = refused(RawClient::connect(
        url,
        "nope",
        Some(token),
        Some(BIN_PROTOCOL),
    ));
    assert_eq!(status, 404, "unknown database");
    // A request that asks for no upgrade at all: 426, naming the protocol (after the 404).
    let plain = |database: &str| {
        let url = format!("{url}/v1/database/{database}/subscribe");
        let resp = reqwest::blocking::get(url).unwrap();
        let upgrade = resp
            .headers()
            .get("upgrade")
            .map(|v| v.to_str().unwrap().to_owned());
        (resp.status().as_u16(), upgrade)
    };
    assert_eq!(plain(DB), (426, Some("websocket".to_owned())));
    assert_eq!(plain("nope").0, 404);
    // An upgrade of another WebSocket version, or without a key: 400, saying which.
    let upgrade = |version: &str, key: Option<&str>| {
        let mut request = reqwest::blocking::Client::new()
            .get(format!("{url}/v1/database/{DB}/subscribe"))
            .header("connection", "Upgrade")
            .header("upgrade", "websocket")
            .header("sec-websocket-version", version)
            .header("sec-websocket-protocol", BIN_PROTOCOL);
        if let Some(key) = key {
            request = request.header("sec-websocket-key", key);
        }
        let resp = request.send().unwrap();
        (resp.status().as_u16(), resp.text().unwrap())
    };
    let (status, text) = upgrade("8", Some("dGhlIHNhbXBsZSBub25jZQ=="));
    assert_eq!((status, text.contains("'13'")), (400, true), "{text}");
    let (status, text) = upgrade("13", Some("!!!"));
    assert_eq!((status, text.contains("base64")), (400, true), "{text}");
    let (status, text) = upgrade("13", None);
    assert_eq!(
        (status, text.contains("Sec-WebSocket-Key")),
        (400, true),
        "{text}"
    );

    // Without a token the server mints an identity and sends its token first.
    let mut anonymous = RawClient::connect(url, DB, None, Some(BIN_PROTOCOL)).unwrap();
    match anonymous.recv() {
        Ok(ServerMessage::InitialConnection(hello)) => assert!(!hello.token.is_empty()),
        other => panic!("expected InitialConnection first, got {other:?}"),
    }

    // Calls that cannot run are answered with an error, and the connection keeps working.
    let mut client = RawClient::connect(url, DB, Some(token), Some(BIN_PROTOCOL)).unwrap();
    assert!(matches!(
        client.recv(),
        Ok(ServerMessage::InitialConnection(_))
    ));
    let status = client.call_procedure(1, "echo", vec![1, 2, 3]);
    assert!(
        matches!(&status, ProcedureStatus::InternalError(e) if !e.is_empty()),
        "{status:?}"
    );
    let status = client.call_procedure(2, "no_such_procedure", echo_args(1));
    assert!(
        matches!(&status, ProcedureStatus::InternalError(e) if e.contains("No such procedure")),
        "{status:?}"
    );
    let status = client.call_procedure(3, "panic_procedure", Vec::new());
    assert!(
        matches!(&status, ProcedureStatus::InternalError(e) if e.contains("fatal error")),
        "{status:?}"
    );
    let ProcedureStatus::Returned(bytes) = client.call_procedure(4, "echo", echo_args(9)) else {
        panic!("echo failed");
    };
    let echo: Echo = bsatn::from_slice(&bytes).unwrap();
    assert_eq!((echo.x, echo.kind), (9, Kind::Count(9)));

    // A frame that is not a client message closes that connection only, with 1011.
    let mut garbage = RawClient::connect(url, DB, Some(token), Some(BIN_PROTOCOL)).unwrap();
    assert!(garbage.recv().is_ok());
    garbage
        .socket
        .send(Message::Binary(vec![0xFF; 16].into()))
        .unwrap();
    assert_eq!(garbage.recv().unwrap_err(), Some(CloseCode::Error));
    assert!(matches!(
        client.call_procedure(5, "echo", echo_args(0)),
        ProcedureStatus::Returned(_)
    ));

    // Connections that close, or vanish without a close frame, leave nothing behind.
    wait_for_clients(&owner, before + 2);
    client.socket.close(None).unwrap();
    while client.socket.read().is_ok() {}
    drop(anonymous);
    wait_for_clients(&owner, before);
}

/// Each connection's `client_connected` and `client_disconnected` rows in the conformance
/// module's `visit` table, as `(identity, connected)` in the order they ran, grouped by
/// connection in the order the connections began.
fn visits(owner: &Server) -> Vec<Vec<(String, bool)>> {
    let rows = owner.sql(DB, "SELECT * FROM visit").unwrap()[0]
        .rows
        .clone();
    let mut rows: Vec<(u64, String, String, bool)> = rows
        .iter()
        .map(|row| {
            let id = row[0].as_u64().unwrap();
            let hex = row[2][0]
                .as_str()
                .unwrap()
                .trim_start_matches("0x")
                .to_string();
            (id, row[1].to_string(), hex, row[3].as_bool().unwrap())
        })
        .collect();
    rows.sort();
    let mut connections: Vec<(String, Vec<(String, bool)>)> = Vec::new();
    for (_, connection, identity, connected) in rows {
        match connections.iter_mut().find(|(c, _)| *c == connection) {
            Some((_, events)) => events.push((identity, connected)),
            None => connections.push((connection, vec![(identity, connected)])),
        }
    }
    connections.into_iter().map(|(_, events)| events).collect()
}

/// Every HTTP call, SQL request and WebSocket is a connection, as on the official server: the
/// module's `client_connected` runs first and may refuse it (403 over HTTP, a policy close on
/// the WebSocket), and `client_disconnected` runs after, also when the request failed.
#[test]
fn each_request_is_a_connection_the_module_may_refuse() {
    let host = TestHost::start();
    let (owner_id, owner) = host.client();
    owner.publish(DB, conformance_wasm(), false).unwrap();
    let owner_id = owner_id.identity.to_lowercase();
    let (stranger_id, stranger) = host.client();
    let stranger_id = stranger_id.identity.to_lowercase();

    owner.sql(DB, "SELECT * FROM note").unwrap();
    stranger.call(DB, "add_note", &json!(["hello"])).unwrap();
    let err = stranger.sql(DB, "SELECT * FROM no_such_table").unwrap_err();
    assert!(err.to_string().contains("400"), "{err}");
    let mut socket =
        RawClient::connect(host.url(), DB, stranger.token(), Some(BIN_PROTOCOL)).unwrap();
    assert!(matches!(
        socket.recv(),
        Ok(ServerMessage::InitialConnection(_))
    ));
    socket.socket.close(None).unwrap();
    while socket.socket.read().is_ok() {}
    wait_for_clients(&owner, 0);

    let both = |id: &str| vec![(id.to_string(), true), (id.to_string(), false)];
    let open = |id: &str| vec![(id.to_string(), true)];
    let mut expected = vec![
        both(&owner_id),
        both(&stranger_id),
        both(&stranger_id),
        both(&stranger_id),
    ];
    // Every `wait_for_clients` poll was a SQL request of the owner's.
    let seen = visits(&owner);
    let polls = seen.len() - expected.len() - 1;
    expected.extend(std::iter::repeat_n(both(&owner_id), polls));
    expected.push(open(&owner_id));
    assert_eq!(seen, expected);

    // Refused: by SQL, by a call and on the WebSocket; nothing runs, nothing is left behind.
    let target = json!([[format!("0x{stranger_id}")], true]);
    owner.call(DB, "set_refused", &target).unwrap();
    let refused = |e: ServerError| {
        let text = e.to_string();
        assert!(
            text.contains("403") && text.contains("this identity is refused"),
            "{text}"
        );
    };
    refused(stranger.sql(DB, "SELECT * FROM note").unwrap_err());
    refused(
        stranger
            .call(DB, "add_note", &json!(["refused"]))
            .unwrap_err(),
    );
    let mut socket =
        RawClient::connect(host.url(), DB, stranger.token(), Some(BIN_PROTOCOL)).unwrap();
    assert_eq!(socket.recv().unwrap_err(), Some(CloseCode::Policy));
    let before = visits(&owner).len();
    assert_eq!(connected_clients(&owner), 0);
    assert_eq!(
        visits(&owner).len(),
        before + 2,
        "only the owner's two SQL requests"
    );
    let texts = owner.sql(DB, "SELECT text FROM note").unwrap()[0]
        .rows
        .clone();
    assert_eq!(texts, vec![json!(["hello"])]);

    // Accepted again.
    owner
        .call(
            DB,
            "set_refused",
            &json!([[format!("0x{stranger_id}")], false]),
        )
        .unwrap();
    stranger.sql(DB, "SELECT * FROM note").unwrap();
}

/// What a web page's SDK does (TypeScript, or the Rust SDK built for a browser): its HTTP calls
/// come from another origin, so they need CORS, and since a browser cannot set headers on a
/// WebSocket it trades its token for a short-lived one and passes that in the URL.
#[test]
fn a_browser_client_gets_a_short_lived_token_and_connects_with_it() {
    let (host, owner) = host_with_module(&[]);
    let url = host.url();
    let http = reqwest::blocking::Client::new();
    let origin = "http://localhost:5173";
    let token_url = format!("{url}/v1/identity/websocket-token");

    // The browser's preflight, answered for any origin with the headers the SDK sends.
    let preflight = http
        .request(reqwest::Method::OPTIONS, &token_url)
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "authorization")
        .send()
        .unwrap();
    assert_eq!(preflight.status(), 200);
    let header = |r: &reqwest::blocking::Response, name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_ascii_lowercase())
    };
    assert_eq!(
        header(&preflight, "access-control-allow-origin").as_deref(),
        Some("*")
    );
    let allowed = header(&preflight, "access-control-allow-headers").unwrap_or_default();
    assert!(allowed.contains("authorization"), "{allowed}");

    // A token is required, and must be valid.
    let post = |token: Option<&str>| {
        let mut request = http.post(&token_url).header("Origin", origin);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().unwrap()
    };
    assert_eq!(post(None).status(), 401);
    assert_eq!(post(Some("not.a.jwt")).status(), 401);
    let response = post(owner.token());
    assert_eq!(response.status(), 200);
    assert_eq!(
        header(&response, "access-control-allow-origin").as_deref(),
        Some("*")
    );
    let body: serde_json::Value = response.json().unwrap();
    let short = body["token"].as_str().expect("a token").to_owned();
    assert_ne!(Some(short.as_str()), owner.token());

    // It expires in 60 s (the JWT's claims, base64url JSON between the two dots).
    let claims = short.split('.').nth(1).expect("a JWT");
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, claims).unwrap(),
    )
    .unwrap();
    let (iat, exp) = (claims["iat"].as_u64(), claims["exp"].as_u64());
    assert_eq!(exp.zip(iat).map(|(e, i)| e - i), Some(60), "{claims}");

    // The subscribe URL's `token` parameter carries it: the connection is the owner's, as one
    // made with the owner's own token.
    let identity = |query: &str, token: Option<&str>| {
        let mut client =
            RawClient::connect_with_query(url, DB, query, token, Some(BIN_PROTOCOL)).unwrap();
        match client.recv() {
            Ok(ServerMessage::InitialConnection(hello)) => hello.identity.to_hex().to_string(),
            other => panic!("expected InitialConnection first, got {other:?}"),
        }
    };
    let owner_identity = identity("", owner.token());
    assert_eq!(identity(&format!("&token={short}"), None), owner_identity);

    // Whether a token is an identity's, and the databases an identity owns (`spacetime list`).
    let (me, _) = host.client();
    let get = |path: String, token: Option<&str>| {
        let mut request = http.get(format!("{url}/v1/identity/{path}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().unwrap();
        (response.status().as_u16(), response.text().unwrap())
    };
    let verify = |identity: &str, token| get(format!("{identity}/verify"), token).0;
    assert_eq!(verify(&me.identity, Some(&me.token)), 204);
    assert_eq!(verify(&owner_identity, Some(&me.token)), 400);
    assert_eq!(verify(&me.identity, None), 401);
    assert_eq!(verify("not-an-identity", Some(&me.token)), 400);
    let databases = |identity: &str| {
        let (status, body) = get(format!("{identity}/databases"), None);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<serde_json::Value>(&body).unwrap()["identities"].clone()
    };
    assert_eq!(databases(&me.identity), serde_json::json!([]));
    let owned = databases(&owner_identity);
    assert_eq!(owned.as_array().map(Vec::len), Some(1), "{owned}");
    assert_eq!(
        owned[0].as_str().map(|id| id.trim_start_matches("0x")),
        Some(database_identity(url).as_str())
    );
}

/// The identity of [`DB`], as `GET /v1/database/{name}/identity` gives it.
fn database_identity(url: &str) -> String {
    reqwest::blocking::get(format!("{url}/v1/database/{DB}/identity"))
        .unwrap()
        .text()
        .unwrap()
}

#[test]
fn silent_connections_are_pinged_and_time_out() {
    let (host, owner) =
        host_with_module(&["--ws-ping-interval", "300ms", "--ws-idle-timeout", "1500ms"]);
    let token = owner.token().unwrap();

    // A client that calls every 50 ms is never pinged: its pong, sent just before a call, would
    // hold that call back (Nagle's algorithm on the client's socket).
    let mut busy = RawClient::connect(host.url(), DB, Some(token), Some(BIN_PROTOCOL)).unwrap();
    assert!(busy.recv().is_ok());
    let until = Instant::now() + Duration::from_millis(1_500);
    let mut calls = 0;
    while Instant::now() < until {
        assert!(matches!(
            busy.call_procedure(calls, "echo", echo_args(calls.into())),
            ProcedureStatus::Returned(_)
        ));
        calls += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(busy.pings, 0, "{calls} calls in 1.5 s");
    drop(busy);
    wait_for_clients(&owner, 0);

    let mut silent = RawClient::connect(host.url(), DB, Some(token), Some(BIN_PROTOCOL)).unwrap();
    assert!(silent.recv().is_ok());
    wait_for_clients(&owner, 1);
    // Reading nothing, this client answers no ping; the server gives up on it.
    std::thread::sleep(Duration::from_millis(3_000));
    wait_for_clients(&owner, 0);
    let closed = loop {
        match silent.socket.read() {
            Ok(Message::Close(frame)) => break frame.map(|f| f.code),
            Ok(_) => {}
            Err(e) => panic!("expected a close frame, got {e}"),
        }
    };
    assert_eq!(closed, Some(CloseCode::Away));

    // A client that reads (and so answers pings) stays connected past the timeout.
    let mut awake = RawClient::connect(host.url(), DB, Some(token), Some(BIN_PROTOCOL)).unwrap();
    assert!(awake.recv().is_ok());
    if let MaybeTlsStream::Plain(tcp) = awake.socket.get_ref() {
        tcp.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
    }
    let until = Instant::now() + Duration::from_millis(3_000);
    while Instant::now() < until {
        match awake.socket.read() {
            Ok(Message::Close(frame)) => panic!("closed: {frame:?}"),
            Ok(Message::Ping(_)) => awake.pings += 1,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(connected_clients(&owner), 1);
    // Silent, it was pinged about every 300 ms.
    assert!(awake.pings >= 5, "{} pings in 3 s", awake.pings);
}

/// A connected SDK client of the conformance module.
fn sdk_connect(url: &str, token: Option<&str>) -> DbConnection {
    let conn = DbConnection::builder()
        .with_uri(url)
        .with_database_name(DB)
        .with_token(token.map(str::to_string))
        .build()
        .expect("SDK connection");
    conn.run_threaded();
    conn
}

#[test]
fn sdk_calls_reach_the_caller_with_their_errors() {
    let (host, owner) = host_with_module(&[]);
    let conn = sdk_connect(host.url(), owner.token());

    // The subscription sees exactly the committed notes.
    let (inserted, notes) = mpsc::channel();
    conn.db.note().on_insert(move |_, note| {
        let _ = inserted.send(note.text.clone());
    });
    let (applied, subscribed) = mpsc::channel();
    conn.subscription_builder()
        .on_applied(move |_| applied.send(()).unwrap())
        .subscribe(["SELECT * FROM note"]);
    subscribed.recv_timeout(WAIT).unwrap();

    // Reducers: Ok, an Err that commits nothing, and a panic.
    let reducer = |call: &dyn Fn(mpsc::Sender<String>)| {
        let (tx, rx) = mpsc::channel();
        call(tx);
        rx.recv_timeout(WAIT).expect("a reducer result, not a hang")
    };
    let outcome = |r: Result<Result<(), String>, spacetimedb_sdk::__codegen::InternalError>| match r
    {
        Ok(Ok(())) => "ok".to_string(),
        Ok(Err(e)) => format!("err: {e}"),
        Err(e) => format!("internal: {e}"),
    };
    let ok = reducer(&|tx| {
        conn.reducers
            .add_note_then("kept".into(), move |_, r| tx.send(outcome(r)).unwrap())
            .unwrap()
    });
    assert_eq!(ok, "ok");
    let failed = reducer(&|tx| {
        conn.reducers
            .add_note_then_fail_then("ghost".into(), move |_, r| tx.send(outcome(r)).unwrap())
            .unwrap()
    });
    assert_eq!(failed, "err: failed after inserting");
    let panicked = reducer(&|tx| {
        conn.reducers
            .panic_reducer_then(move |_, r| tx.send(outcome(r)).unwrap())
            .unwrap()
    });
    // The engine reports a trapped reducer without its message (as the official server does).
    assert!(panicked.starts_with("internal: "), "{panicked}");

    // Procedures: a typed return, a transaction rolled back, and a panic.
    let (tx, rx) = mpsc::channel();
    conn.procedures
        .echo_then(3, Some("three".into()), move |_, r| tx.send(r).unwrap());
    let echo = rx.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(
        echo,
        Echo {
            x: 3,
            label: Some("three".into()),
            kind: Kind::Count(3)
        }
    );
    let (tx, rx) = mpsc::channel();
    conn.procedures
        .insert_note_then_fail_then("ghost".into(), move |_, r| tx.send(r).unwrap());
    assert_eq!(
        rx.recv_timeout(WAIT).unwrap().unwrap(),
        Err("rolled back on purpose".to_string())
    );
    let (tx, rx) = mpsc::channel();
    conn.procedures
        .panic_procedure_then(move |_, r| tx.send(r).unwrap());
    let err = rx
        .recv_timeout(WAIT)
        .expect("a procedure result, not a hang")
        .unwrap_err();
    assert!(err.to_string().contains("fatal error"), "{err}");
    let (tx, rx) = mpsc::channel();
    conn.procedures
        .insert_note_then("from a procedure".into(), move |_, r| tx.send(r).unwrap());
    rx.recv_timeout(WAIT).unwrap().unwrap();

    let mut seen = vec![notes.recv_timeout(WAIT).unwrap()];
    seen.push(notes.recv_timeout(WAIT).unwrap());
    assert_eq!(seen, ["kept", "from a procedure"]);
    assert!(notes.recv_timeout(Duration::from_millis(300)).is_err());
    assert_eq!(conn.db.note().count(), 2);
    conn.disconnect().unwrap();
}

#[test]
fn fifty_concurrent_connections() {
    let (host, owner) = host_with_module(&[]);
    let watcher = sdk_connect(host.url(), owner.token());
    let (applied, subscribed) = mpsc::channel();
    watcher
        .subscription_builder()
        .on_applied(move |_| applied.send(()).unwrap())
        .subscribe(["SELECT * FROM note"]);
    subscribed.recv_timeout(WAIT).unwrap();

    // Each connection is its own identity; all run at once.
    let clients: Vec<DbConnection> = (0..50).map(|_| sdk_connect(host.url(), None)).collect();
    let (done, results) = mpsc::channel();
    for (i, conn) in clients.iter().enumerate() {
        let echoed = done.clone();
        conn.procedures.echo_then(i as u64, None, move |_, r| {
            let ok = r.is_ok_and(|e| e.x == i as u64);
            echoed.send(ok).unwrap();
        });
        let done = done.clone();
        conn.reducers
            .add_note_then(format!("note {i}"), move |_, r| {
                done.send(matches!(r, Ok(Ok(())))).unwrap()
            })
            .unwrap();
    }
    for _ in 0..100 {
        assert!(results.recv_timeout(WAIT).unwrap());
    }
    wait_for_clients(&owner, 51);
    let deadline = Instant::now() + WAIT;
    while watcher.db.note().count() < 50 {
        assert!(
            Instant::now() < deadline,
            "{} notes seen",
            watcher.db.note().count()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for conn in &clients {
        conn.disconnect().unwrap();
    }
    wait_for_clients(&owner, 1);
}

#[test]
fn conformance_bindings_are_current() {
    let fresh = tempfile::tempdir().unwrap();
    let wasm = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(wasm.path(), conformance_wasm()).unwrap();
    let output = std::process::Command::new(host_binary())
        .args(["generate", "--lang", "rust", "--bin-path"])
        .arg(wasm.path())
        .arg("--out-dir")
        .arg(fresh.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let checked_in = graph_testkit::manifest_dir().join("tests/conformance_bindings");
    let files = |dir: &Path| -> Vec<(String, String)> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                (name, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        files.sort();
        files
    };
    assert!(
        files(fresh.path()) == files(&checked_in),
        "testkit/tests/conformance_bindings is stale: run scripts/generate"
    );
}

/// BSATN arguments of `pause(millis)`.
fn pause_args(millis: u32) -> Vec<u8> {
    bsatn::to_vec(&(millis,)).unwrap()
}

/// A host with one procedure instance (pings every 300 ms, idle after 1.5 s), which another
/// caller holds for 3 s from about 0.5 s before this returns; and a client of the owner's,
/// connected, whose calls wait for that instance. The holder's thread returns its result.
fn an_instance_held_for_3_s() -> (
    TestHost,
    RawClient,
    std::thread::JoinHandle<ProcedureStatus>,
) {
    let (host, owner) = host_with_module(&[
        "--procedure-instances",
        "1",
        "--ws-ping-interval",
        "300ms",
        "--ws-idle-timeout",
        "1500ms",
    ]);
    let token = owner.token().unwrap().to_string();
    let holder = {
        let url = host.url().to_string();
        let token = token.clone();
        std::thread::spawn(move || {
            let mut c = RawClient::connect(&url, DB, Some(&token), Some(BIN_PROTOCOL)).unwrap();
            assert!(c.recv().is_ok());
            c.call_procedure(1, "pause", pause_args(3_000))
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let mut waiting = RawClient::connect(host.url(), DB, Some(&token), Some(BIN_PROTOCOL)).unwrap();
    assert!(waiting.recv().is_ok());
    (host, waiting, holder)
}

#[test]
fn a_call_waiting_for_an_instance_keeps_its_connection_alive() {
    let (_host, mut waiting, holder) = an_instance_held_for_3_s();
    let started = Instant::now();
    // While the call waits, the server keeps pinging this silent client (which answers), so
    // the idle timeout never closes it, and the answer arrives.
    let status = waiting.call_procedure(7, "echo", echo_args(7));
    assert!(matches!(status, ProcedureStatus::Returned(_)), "{status:?}");
    assert!(started.elapsed() > Duration::from_millis(1_500));
    assert!(waiting.pings >= 2, "{} pings while waiting", waiting.pings);
    assert!(matches!(
        holder.join().unwrap(),
        ProcedureStatus::Returned(_)
    ));
}

#[test]
fn calls_queued_behind_a_waiting_one_do_not_make_their_client_idle() {
    let (_host, mut waiting, holder) = an_instance_held_for_3_s();
    // More calls than the server queues behind the waiting one: it stops reading the socket,
    // and so the client's pongs, until the queue drains. That is the server's choice, not the
    // client's silence: the connection stays open and every call is answered, in order.
    let calls = 100;
    for id in 0..calls {
        waiting.send_call(id, "echo", echo_args(id.into()));
    }
    let mut answered = Vec::new();
    while answered.len() < calls as usize {
        match waiting.recv() {
            Ok(ServerMessage::ProcedureResult(r)) => {
                assert!(matches!(r.status, ProcedureStatus::Returned(_)), "{r:?}");
                answered.push(r.request_id);
            }
            Ok(_) => {}
            Err(code) => panic!("closed ({code:?}) after {} answers", answered.len()),
        }
    }
    assert_eq!(answered, (0..calls).collect::<Vec<_>>());
    assert!(matches!(
        holder.join().unwrap(),
        ProcedureStatus::Returned(_)
    ));
}

/// A stopping host answers the calls a WebSocket client had sent, however long they run (within
/// its 5 s drain), reads none sent after the signal, and then closes the connection ("going
/// away"). (Until a569b15 the connections took calls until the process exited; a569b15 closed
/// them after 300 ms without a message, dropping the answer of a call still running.)
#[test]
fn a_stopping_host_answers_the_calls_it_took_then_closes() {
    let (mut host, owner) = host_with_module(&[]);
    let mut client = RawClient::connect(host.url(), DB, owner.token(), Some(BIN_PROTOCOL)).unwrap();
    assert!(client.recv().is_ok());
    client.send_call(1, "pause", pause_args(1_500));
    std::thread::sleep(Duration::from_millis(200));
    host.signal("-TERM");
    std::thread::sleep(Duration::from_millis(200));
    client.send_call(2, "echo", echo_args(2));
    let mut answered = Vec::new();
    let closed = loop {
        match client.recv() {
            Ok(ServerMessage::ProcedureResult(r)) => {
                assert!(matches!(r.status, ProcedureStatus::Returned(_)), "{r:?}");
                answered.push(r.request_id);
            }
            Ok(_) => {}
            Err(code) => break code,
        }
    };
    assert_eq!(answered, [1], "answered before the close");
    assert_eq!(closed, Some(CloseCode::Away));
    assert!(
        host.terminate(Duration::from_secs(30)),
        "the host did not stop"
    );
}

#[test]
fn pipelined_procedure_calls_can_finish_out_of_order() {
    // With two instances, a short call sent behind a long one on the same connection runs in
    // the other instance and is answered first: clients match results by request id.
    let (host, owner) = host_with_module(&["--procedure-instances", "2"]);
    let mut client = RawClient::connect(host.url(), DB, owner.token(), Some(BIN_PROTOCOL)).unwrap();
    assert!(client.recv().is_ok());
    client.send_call(1, "pause", pause_args(1_500));
    client.send_call(2, "echo", echo_args(2));
    let mut answered = Vec::new();
    while answered.len() < 2 {
        if let ServerMessage::ProcedureResult(r) = client.recv().unwrap() {
            assert!(matches!(r.status, ProcedureStatus::Returned(_)), "{r:?}");
            answered.push(r.request_id);
        }
    }
    assert_eq!(answered, [2, 1]);
}

#[test]
fn an_abandoned_http_call_leaves_no_client_behind() {
    let (host, owner) = host_with_module(&["--procedure-instances", "1"]);
    let holder = {
        let owner = owner.clone();
        std::thread::spawn(move || owner.call(DB, "pause", &serde_json::json!([2_000])))
    };
    std::thread::sleep(Duration::from_millis(300));
    // These callers give up while their calls wait for the instance.
    let impatient = reqwest::blocking::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    for _ in 0..3 {
        let sent = impatient
            .post(format!("{}/v1/database/{DB}/call/echo", host.url()))
            .bearer_auth(owner.token().unwrap())
            .header("Content-Type", "application/json")
            .body("[1, null]")
            .send();
        assert!(sent.is_err(), "answered within 300 ms: {sent:?}");
    }
    holder.join().unwrap().unwrap();
    // Their calls ran once the instance was free, and each connection was disconnected.
    wait_for_clients(&owner, 0);
}

#[test]
fn messages_up_to_the_limit_arrive_in_one_frame() {
    let (host, owner) = host_with_module(&[]);
    let mut client = RawClient::connect(host.url(), DB, owner.token(), Some(BIN_PROTOCOL)).unwrap();
    assert!(client.recv().is_ok());
    // 20 MiB in one frame (the socket library's default frame limit is 16 MiB): read whole,
    // then refused as no client message, with a close frame that says so.
    let junk = vec![0xFF; 20 << 20];
    client.socket.send(Message::Binary(junk.into())).unwrap();
    assert_eq!(client.recv().unwrap_err(), Some(CloseCode::Error));
}

#[test]
fn a_message_over_the_limit_is_refused_by_its_size() {
    let (host, owner) = host_with_module(&[]);
    let mut client = RawClient::connect(host.url(), DB, owner.token(), Some(BIN_PROTOCOL)).unwrap();
    assert!(client.recv().is_ok());
    // One byte over 32 MiB, in one frame: the socket library refuses it by its header, and the
    // client, still writing the rest, must get the reason rather than a reset connection.
    let size = (32 << 20) + 1;
    client
        .socket
        .send(Message::Binary(vec![0xFF; size].into()))
        .expect("the server reads the whole message before it closes");
    match client.socket.read() {
        Ok(Message::Close(Some(frame))) => {
            assert_eq!(frame.code, CloseCode::Size);
            let limit = 32 << 20;
            assert_eq!(
                frame.reason.as_str(),
                format!("a message of at least {size} bytes is over the limit of {limit} bytes")
            );
        }
        other => panic!("expected a close frame for the size: {other:?}"),
    }
    // The host keeps serving, and the refused connection is gone from the engine.
    let mut next = RawClient::connect(host.url(), DB, owner.token(), Some(BIN_PROTOCOL)).unwrap();
    assert!(next.recv().is_ok());
    let ProcedureStatus::Returned(bytes) = next.call_procedure(1, "echo", echo_args(7)) else {
        panic!("echo failed");
    };
    let echo: Echo = bsatn::from_slice(&bytes).unwrap();
    assert_eq!(echo.x, 7);
    drop(next);
    wait_for_clients(&owner, 0);
}

/// Reads until the server closes the connection; how long that took.
fn until_closed(client: &mut RawClient) -> Duration {
    let start = Instant::now();
    loop {
        match client.socket.read() {
            Ok(_) => {}
            Err(tungstenite::Error::ConnectionClosed) => return start.elapsed(),
            Err(e) => panic!("not a clean close: {e}"),
        }
    }
}

#[test]
fn broken_input_is_refused_with_its_reason() {
    use tungstenite::protocol::frame::Frame;
    use tungstenite::protocol::frame::coding::{Data, OpCode};
    let (host, owner) = host_with_module(&[]);
    let connect = || {
        let mut client =
            RawClient::connect(host.url(), DB, owner.token(), Some(BIN_PROTOCOL)).unwrap();
        assert!(client.recv().is_ok());
        client
    };
    let close_frame = |client: &mut RawClient| match client.socket.read() {
        Ok(Message::Close(Some(frame))) => (frame.code, frame.reason.to_string()),
        other => panic!("expected a close frame: {other:?}"),
    };
    let frame = |opcode: Data, payload: Vec<u8>, last: bool| {
        Message::Frame(Frame::message(payload, OpCode::Data(opcode), last))
    };

    // A message that crosses 32 MiB in its third fragment: refused once that fragment is read,
    // and the connection ends as soon as the client answers the close (nothing more is due).
    let mut fragments = connect();
    let socket = &mut fragments.socket;
    socket
        .send(frame(Data::Binary, vec![0xFF; 16 << 20], false))
        .unwrap();
    socket
        .send(frame(Data::Continue, vec![0xFF; 16 << 20], false))
        .unwrap();
    socket
        .send(frame(Data::Continue, vec![0xFF], true))
        .unwrap();
    let (code, reason) = close_frame(&mut fragments);
    assert_eq!(code, CloseCode::Size);
    assert!(
        reason.contains("over the limit of 33554432 bytes"),
        "{reason}"
    );
    let took = until_closed(&mut fragments);
    assert!(took < Duration::from_secs(5), "closed after {took:?}");

    // A text frame that is not UTF-8: 1007.
    let mut text = connect();
    text.socket
        .send(frame(Data::Text, vec![0xC3, 0x28], true))
        .unwrap();
    assert_eq!(close_frame(&mut text).0, CloseCode::Invalid);

    // A frame with a reserved bit set (no extension was agreed): 1002, naming it.
    let mut reserved = connect();
    let mut bits = Frame::message(echo_args(1), OpCode::Data(Data::Binary), true);
    bits.header_mut().rsv1 = true;
    reserved.socket.send(Message::Frame(bits)).unwrap();
    let (code, reason) = close_frame(&mut reserved);
    assert_eq!(code, CloseCode::Protocol);
    assert!(reason.contains("Reserved bits"), "{reason}");

    // The host keeps serving, and neither connection is left in the engine.
    let mut next = connect();
    assert!(matches!(
        next.call_procedure(1, "echo", echo_args(7)),
        ProcedureStatus::Returned(_)
    ));
    drop((next, text, reserved));
    wait_for_clients(&owner, 0);
}

#[test]
fn a_client_that_stops_reading_is_let_go() {
    let (host, owner) = host_with_module(&["--ws-idle-timeout", "1500ms"]);
    let token = owner.token().unwrap();
    let mut stuck = RawClient::connect(host.url(), DB, Some(token), Some(BIN_PROTOCOL)).unwrap();
    assert!(stuck.recv().is_ok());
    stuck.send(&ClientMessage::Subscribe(Subscribe {
        request_id: 1,
        query_set_id: QuerySetId { id: 1 },
        query_strings: Box::new(["SELECT * FROM note".into()]),
    }));
    wait_for_clients(&owner, 1);
    // 40 MB of notes pushed to a client that reads none of them: more than the sockets hold.
    let text = "x".repeat(100_000);
    for _ in 0..400 {
        owner
            .call(DB, "add_note", &serde_json::json!([text]))
            .unwrap();
    }
    // Its sends stop making progress; after the idle timeout the server drops it.
    wait_for_clients(&owner, 0);
    drop(stuck);
}

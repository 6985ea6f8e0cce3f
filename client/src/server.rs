//! The subset of SpacetimeDB's HTTP API this project uses, spoken to any server that implements
//! it: the embedded `graph-host` or an official `spacetime start`.

use reqwest::StatusCode;
use reqwest::blocking::{Client, Response};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;
use thiserror::Error;

/// Response header carrying the server-side execution time of a call.
pub const EXECUTION_HEADER: &str = "spacetime-execution-duration-micros";

#[derive(Debug, Error)]
pub enum ServerError {
    #[error(
        "cannot reach a SpacetimeDB server at {url}: {source}\n  \
         start one with `scripts/run --serve` (embedded host) or `spacetime start`, \
         or point --server at a running one"
    )]
    Unreachable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error(
        "database `{database}` not found on {url}\n  \
         publish the module first: `spacetime publish -s {url} -p module {database}` \
         (or `scripts/run`, which publishes it to the embedded host)"
    )]
    UnknownDatabase { url: String, database: String },
    #[error("{what} failed with HTTP {status}: {message}")]
    Http {
        what: String,
        status: u16,
        message: String,
    },
    /// The request was sent (or being sent) but no answer came: it timed out, or the connection
    /// broke. The server may or may not have carried it out.
    #[error("{what}: {message}; the server may or may not have carried it out")]
    NoAnswer { what: String, message: String },
    #[error("{what}: unexpected response: {message}")]
    Decode { what: String, message: String },
}

/// `url` if it names a server as the clients need it: `http://` or `https://`, a host, nothing
/// after the port but slashes (a trailing one is dropped); otherwise what is wrong, for
/// `--server`. Without a scheme the HTTP client's own error was "builder error for url".
pub fn server_url(url: &str) -> Result<String, String> {
    let not_a_url = || {
        format!(
            "`{url}` is not an http:// or https:// URL: give the scheme and host, e.g. \
             http://127.0.0.1:3000"
        )
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| not_a_url())?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(not_a_url());
    }
    if !parsed.path().trim_matches('/').is_empty() || parsed.query().is_some() {
        return Err(format!(
            "`{url}` has a path: give the server's root, e.g. http://127.0.0.1:3000"
        ));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// `e` and its causes, each said once: reqwest's and the SDK's own messages name only the
/// outermost layer ("error sending request for url …"), not what went wrong.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(&format!(": {cause_text}"));
        }
        source = cause.source();
    }
    text
}

/// Whether a 404's `message` says that `database` does not exist (rather than, say, a function
/// in it): graph-host and the official server say "`x` not found", graph-host before 2026-11-27 "database name `x` not found"
/// for a name and "No such database." for an identity.
fn names_unknown_database(message: &str, database: &str) -> bool {
    message.to_ascii_lowercase().contains("database")
        || message.contains(&format!("`{database}` not found"))
}

/// An identity and the token that proves it, as `POST /v1/identity` returns them.
#[derive(Debug, Clone, Deserialize)]
pub struct Identity {
    pub identity: String,
    pub token: String,
}

/// A successful call: its JSON body (empty for reducers) and the server's execution time.
#[derive(Debug, Clone)]
pub struct CallOutput {
    pub body: Value,
    /// `None` when the server did not time the call.
    pub execution_us: Option<u64>,
}

/// The execution time a call's answer reports, µs. The official server does not time a
/// procedure called over HTTP and sends 0 for it (its route passes the engine no start time);
/// no call runs in 0 µs, so 0 means "not timed" (graph-host times procedures too).
fn execution_time(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    let value = headers.get(EXECUTION_HEADER)?.to_str().ok()?;
    value.parse().ok().filter(|&us| us > 0)
}

/// How long a request waits for its answer unless [`Server::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// A connection to one server, with the token that every request carries.
#[derive(Debug, Clone)]
pub struct Server {
    url: String,
    http: Client,
    token: Option<String>,
    timeout: Duration,
}

/// An HTTP client whose requests wait at most `timeout`, reusing connections.
fn http_client(timeout: Duration) -> Client {
    Client::builder()
        .timeout(timeout)
        .pool_max_idle_per_host(4)
        .tcp_nodelay(true)
        .build()
        .expect("HTTP client")
}

impl Server {
    /// A client for the server at `url` (e.g. `http://127.0.0.1:3000`), reusing connections.
    pub fn new(url: &str) -> Self {
        Self {
            url: url.trim_end_matches('/').to_string(),
            http: http_client(DEFAULT_TIMEOUT),
            token: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same server, each request (and, for a [`crate::graph::GraphDb`] over the
    /// WebSocket, each call) waiting at most `timeout` for its answer (default 600 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.http = http_client(timeout);
        self.timeout = timeout;
        self
    }

    /// How long a request waits for its answer.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Calls as the identity of `token`. Whitespace around it (the newline of a token read
    /// from a file) is dropped: no token holds any, and HTTP headers cannot carry a newline.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        let token = token.into();
        self.token = Some(token.trim().to_string());
        self
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::blocking::RequestBuilder {
        let req = self.http.request(method, format!("{}{path}", self.url));
        match &self.token {
            Some(token) => req.bearer_auth(token),
            None => req,
        }
    }

    fn send(
        &self,
        what: &str,
        req: reqwest::blocking::RequestBuilder,
    ) -> Result<Response, ServerError> {
        let resp = req.send().map_err(|source| {
            if source.is_connect() {
                ServerError::Unreachable {
                    url: self.url.clone(),
                    source,
                }
            } else {
                self.no_answer(what, &source)
            }
        })?;
        Ok(resp)
    }

    /// The answer to `what` that `source` cut off or never let come: it timed out, or the
    /// connection broke.
    fn no_answer(&self, what: &str, source: &reqwest::Error) -> ServerError {
        let message = match source.is_timeout() {
            true => format!("no answer within {:?}", self.timeout),
            false => error_chain(source),
        };
        ServerError::NoAnswer {
            what: what.to_string(),
            message,
        }
    }

    /// The body of `resp`, the answer to `what`.
    fn body(&self, what: &str, resp: Response) -> Result<String, ServerError> {
        resp.text().map_err(|e| self.no_answer(what, &e))
    }

    /// `resp`'s JSON body, the answer to `what`.
    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        resp: Response,
    ) -> Result<T, ServerError> {
        let text = self.body(what, resp)?;
        serde_json::from_str(&text).map_err(|e| ServerError::Decode {
            what: what.to_string(),
            message: format!("{e}: {text}"),
        })
    }

    /// Turns a non-success response into an error that names the call and quotes the server.
    fn check(
        &self,
        what: &str,
        database: Option<&str>,
        resp: Response,
    ) -> Result<Response, ServerError> {
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let message = self.body(what, resp)?;
        if status == StatusCode::NOT_FOUND
            && let Some(database) = database
            && names_unknown_database(&message, database)
        {
            return Err(ServerError::UnknownDatabase {
                url: self.url.clone(),
                database: database.to_string(),
            });
        }
        Err(ServerError::Http {
            what: what.to_string(),
            status: status.as_u16(),
            message,
        })
    }

    /// `GET /v1/ping`.
    pub fn ping(&self) -> Result<(), ServerError> {
        let resp = self.send("ping", self.request(reqwest::Method::GET, "/v1/ping"))?;
        self.check("ping", None, resp).map(drop)
    }

    /// `POST /v1/identity`: a new identity and its token.
    pub fn create_identity(&self) -> Result<Identity, ServerError> {
        let what = "creating an identity";
        let resp = self.send(what, self.http.post(format!("{}/v1/identity", self.url)))?;
        self.decode(what, self.check(what, None, resp)?)
    }

    /// `PUT /v1/database/:name` with the module's wasm; `clear` wipes existing data.
    pub fn publish(
        &self,
        database: &str,
        wasm: Vec<u8>,
        clear: bool,
    ) -> Result<Value, ServerError> {
        let what = format!("publishing `{database}`");
        let path = format!("/v1/database/{database}?clear={clear}");
        let req = self
            .request(reqwest::Method::PUT, &path)
            .header("Content-Type", "application/wasm")
            .body(wasm);
        let resp = self.send(&what, req)?;
        self.decode(&what, self.check(&what, None, resp)?)
    }

    /// `POST /v1/database/:db/call/:function` with JSON arguments (an array, in order).
    pub fn call(
        &self,
        database: &str,
        function: &str,
        args: &Value,
    ) -> Result<CallOutput, ServerError> {
        let what = format!("calling `{function}` on `{database}`");
        let req = self
            .request(
                reqwest::Method::POST,
                &format!("/v1/database/{database}/call/{function}"),
            )
            .header("Content-Type", "application/json")
            .body(args.to_string());
        let resp = self.check(&what, Some(database), self.send(&what, req)?)?;
        let execution_us = execution_time(resp.headers());
        let text = self.body(&what, resp)?;
        let body = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).map_err(|e| ServerError::Decode {
                what,
                message: format!("{e}: {text}"),
            })?
        };
        Ok(CallOutput { body, execution_us })
    }

    /// `POST /v1/database/:db/sql`: the rows of each statement's result.
    pub fn sql(&self, database: &str, query: &str) -> Result<Vec<SqlResult>, ServerError> {
        self.sql_at(database, query, "")
    }

    /// [`Server::sql`] with confirmed reads asked for (`?confirmed=true`, the default of 2.x
    /// servers, said explicitly): the answer comes once the state it read is durable.
    pub fn sql_confirmed(
        &self,
        database: &str,
        query: &str,
    ) -> Result<Vec<SqlResult>, ServerError> {
        self.sql_at(database, query, "?confirmed=true")
    }

    fn sql_at(
        &self,
        database: &str,
        query: &str,
        params: &str,
    ) -> Result<Vec<SqlResult>, ServerError> {
        let what = format!("SQL on `{database}`");
        let req = self
            .request(
                reqwest::Method::POST,
                &format!("/v1/database/{database}/sql{params}"),
            )
            .body(query.to_string());
        let resp = self.check(&what, Some(database), self.send(&what, req)?)?;
        self.decode(&what, resp)
    }

    /// `GET /v1/database/:db/logs?num_lines=N` (owner only).
    pub fn logs(&self, database: &str, lines: u32) -> Result<String, ServerError> {
        let what = format!("logs of `{database}`");
        let path = format!("/v1/database/{database}/logs?num_lines={lines}");
        let resp = self.check(
            &what,
            Some(database),
            self.send(&what, self.request(reqwest::Method::GET, &path))?,
        )?;
        self.body(&what, resp)
    }
}

/// One statement's result from the SQL endpoint.
#[derive(Debug, Clone, Deserialize)]
pub struct SqlResult {
    pub schema: Value,
    pub rows: Vec<Value>,
    #[serde(default)]
    pub total_duration_micros: u64,
}

#[cfg(test)]
mod tests {
    use super::{EXECUTION_HEADER, execution_time, names_unknown_database};
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn an_untimed_call_has_no_execution_time() {
        let headers = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(EXECUTION_HEADER, HeaderValue::from_static(value));
            headers
        };
        assert_eq!(execution_time(&headers("153")), Some(153));
        // The official server's answer to a procedure called over HTTP.
        assert_eq!(execution_time(&headers("0")), None);
        assert_eq!(execution_time(&headers("x")), None);
        assert_eq!(execution_time(&HeaderMap::new()), None);
    }

    #[test]
    fn an_unknown_database_is_told_from_an_unknown_function() {
        // graph-host, and the official server for a name and for an identity.
        assert!(names_unknown_database("database name `g` not found", "g"));
        assert!(names_unknown_database("`g` not found", "g"));
        assert!(names_unknown_database("No such database.", "c200ab"));
        assert!(!names_unknown_database("No such procedure", "g"));
        assert!(!names_unknown_database("`bfs` not found", "g"));
    }
}

//! LadybugDB (the maintained fork of Kuzu, an embedded columnar graph engine), driven in-process
//! from its Python API, the way its users run it: graph-bench starts `peers/kuzu_worker.py`
//! (through the command `scripts/peers start kuzu --port P --dir D` prints) and sends it one
//! Cypher query per line. The worker times each query around `Connection.execute` and the fetch
//! of every row, and that in-process time is the benchmark's time for the call
//! ([`Answer::in_process_ns`]), so that the pipe, which an application embedding the engine
//! does not have, is not charged to it.
//!
//! The graph is a node table `V(id INT64 PRIMARY KEY)` and a relationship table `E(FROM V TO
//! V)`, loaded with `COPY` from CSV files written to a temporary directory. Kuzu walks
//! relationships in either direction, or both, natively. BFS and shortest paths use its
//! `* SHORTEST` recursive patterns, which need an upper bound on the number of hops.

use crate::system::{self, Answer, Reply, System, stored_id, vertex_id};
use crate::workloads::Workload;
use anyhow::{Context, Result, anyhow, bail, ensure};
use graph_client::graph::Direction;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The upper bound of every `* SHORTEST` pattern with no depth of its own, and the setting
/// (`var_length_extend_max_depth`, default 30) that allows it. Measured on LadybugDB 0.22.0:
/// the bound is kept in 16 bits without a word, so that 65,536 finds nothing and 1,000,000
/// acts as 16,960 (1,000,000 mod 65,536); 65,535 is the largest bound that means what it says.
/// A BFS reaching it fails the run rather than answer short; a longer shortest path would be
/// reported unreachable and fail verification.
pub const MAX_HOPS: u32 = 65_535;

/// A LadybugDB database in a worker process of its own.
pub struct Kuzu {
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    stdout: BufReader<ChildStdout>,
    ready: Ready,
}

/// What the worker says once it has opened the database.
#[derive(Debug, Deserialize)]
struct Ready {
    engine: String,
    version: String,
    storage_version: u64,
    settings: Settings,
}

#[derive(Debug, Deserialize)]
struct Settings {
    threads: String,
    buffer_pool_size: u64,
}

/// One reply of the worker.
#[derive(Debug, Deserialize)]
struct Response {
    #[serde(default)]
    rows: Vec<Vec<Value>>,
    /// The query's time in the worker, ns.
    #[serde(default)]
    ns: u64,
    #[serde(default)]
    error: Option<String>,
}

impl Kuzu {
    /// Starts the worker command `worker` (what `scripts/peers start kuzu` printed) and waits
    /// until it has opened its database.
    pub fn connect(worker: &str) -> Result<Kuzu> {
        let hint = || {
            format!(
                "starting the Kuzu worker `{worker}` (write it with \
                 `scripts/peers start kuzu --port 0 --dir DIR`, after `scripts/peers install kuzu`)"
            )
        };
        let mut child = Command::new(worker)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(hint)?;
        let stdin = BufWriter::new(child.stdin.take().context("the worker's stdin")?);
        let mut stdout = BufReader::new(child.stdout.take().context("the worker's stdout")?);
        let line = read_line(&mut stdout, &mut child).with_context(hint)?;
        #[derive(Deserialize)]
        struct Hello {
            ready: Ready,
        }
        let hello: Hello = serde_json::from_str(&line)
            .with_context(|| format!("the worker's first line was not its greeting: {line}"))?;
        let mut kuzu = Kuzu {
            child,
            stdin: Some(stdin),
            stdout,
            ready: hello.ready,
        };
        kuzu.execute(
            &format!("CALL var_length_extend_max_depth={MAX_HOPS}"),
            json!({}),
        )?;
        Ok(kuzu)
    }

    /// Runs `query` with `params` in the worker: its rows and its in-process time, ns.
    fn execute(&mut self, query: &str, params: Value) -> Result<(Vec<Vec<Value>>, u64)> {
        let stdin = self.stdin.as_mut().context("the Kuzu worker is closed")?;
        serde_json::to_writer(&mut *stdin, &json!({"query": query, "params": params}))?;
        stdin.write_all(b"\n")?;
        stdin.flush().context("writing to the Kuzu worker")?;
        let line = read_line(&mut self.stdout, &mut self.child)?;
        let response: Response = serde_json::from_str(&line)
            .with_context(|| format!("an unreadable reply from the Kuzu worker: {line}"))?;
        if let Some(error) = response.error {
            bail!("Kuzu: {error} (query: {query})");
        }
        Ok((response.rows, response.ns))
    }

    /// A query whose result is one integer.
    fn count(&mut self, query: &str) -> Result<u64> {
        let (rows, _) = self.execute(query, json!({}))?;
        match rows.as_slice() {
            [row] => match row.as_slice() {
                [n] => n
                    .as_u64()
                    .with_context(|| format!("{query}: {n} is not a count")),
                other => bail!("{query}: unexpected row {other:?}"),
            },
            other => bail!("{query}: {} rows where one was due", other.len()),
        }
    }
}

/// One line from the worker; its end is an error.
fn read_line(stdout: &mut BufReader<ChildStdout>, child: &mut Child) -> Result<String> {
    let mut line = String::new();
    if stdout.read_line(&mut line)? == 0 {
        let status = child.wait()?;
        bail!("the Kuzu worker exited ({status}); its messages are above");
    }
    Ok(line)
}

impl Kuzu {
    /// Ends the worker: closing its stdin makes it close the database and exit.
    fn close(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.stdin.take();
        self.child.wait()
    }
}

impl Drop for Kuzu {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// The two halves of a relationship pattern walking `dir`: `(a){left}[...]{right}(b)`.
fn arrows(dir: Direction) -> (&'static str, &'static str) {
    match dir {
        Direction::Out => ("-", "->"),
        Direction::In => ("<-", "-"),
        Direction::Both => ("-", "-"),
    }
}

/// A non-negative integer from a result.
fn int(value: &Value) -> Result<u64> {
    value
        .as_u64()
        .ok_or_else(|| anyhow!("{value} is not a non-negative integer"))
}

/// A stored vertex id from a result, as the benchmark's.
fn id(value: &Value) -> Result<u64> {
    value
        .as_i64()
        .map(vertex_id)
        .ok_or_else(|| anyhow!("{value} is not a vertex id"))
}

/// Writes `path` into a Cypher string literal.
fn literal(path: &Path) -> Result<String> {
    let text = path
        .to_str()
        .context("a temporary path that is not UTF-8")?;
    Ok(text.replace('\\', "\\\\").replace('\'', "\\'"))
}

impl System for Kuzu {
    fn name(&self) -> &'static str {
        "kuzu"
    }

    fn store(&self) -> &'static str {
        "kuzu"
    }

    fn describe(&mut self) -> Result<String> {
        let r = &self.ready;
        // The worker falls back to the archived `kuzu` package when `ladybug` is missing.
        let what = if r.engine == "LadybugDB" {
            "embedded; Kuzu's maintained fork"
        } else {
            "embedded"
        };
        Ok(format!(
            "{} {} ({what}; storage version {}) through its Python API in a worker process, \
             each query timed in the worker around execute and fetch; threads {}, buffer pool \
             {:.2} GiB; SHORTEST patterns bounded at {MAX_HOPS} hops",
            r.engine,
            r.version,
            r.storage_version,
            r.settings.threads,
            r.settings.buffer_pool_size as f64 / (1u64 << 30) as f64
        ))
    }

    fn clear(&mut self) -> Result<()> {
        for statement in [
            "DROP TABLE IF EXISTS E",
            "DROP TABLE IF EXISTS V",
            "CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))",
            // `w`: the weight, `l`: the label (NULL when none), as properties.
            "CREATE REL TABLE E(FROM V TO V, w DOUBLE, l STRING)",
        ] {
            self.execute(statement, json!({}))?;
        }
        Ok(())
    }

    /// Drops the tables and ends the worker, which closes the database and frees its buffer
    /// pool; the system answers nothing after.
    fn release(&mut self) -> Result<()> {
        self.execute("DROP TABLE IF EXISTS E", json!({}))?;
        self.execute("DROP TABLE IF EXISTS V", json!({}))?;
        let status = self.close()?;
        anyhow::ensure!(status.success(), "the Kuzu worker exited with {status}");
        Ok(())
    }

    /// Writes the vertices and arcs to CSV files in a temporary directory and `COPY`s them in,
    /// as Kuzu's documentation loads a graph. The load's time includes writing the files.
    fn load(
        &mut self,
        vertices: &[u64],
        edges: &[(u64, u64)],
        attrs: &system::ArcAttrs,
        progress: &mut dyn FnMut(usize),
    ) -> Result<()> {
        let dir = tempfile::tempdir().context("a temporary directory for the CSV files")?;
        let v_csv = dir.path().join("v.csv");
        let mut out = BufWriter::new(std::fs::File::create(&v_csv)?);
        for &v in vertices {
            writeln!(out, "{}", stored_id(v))?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        let e_csv = dir.path().join("e.csv");
        let mut out = BufWriter::new(std::fs::File::create(&e_csv)?);
        for (i, &(s, d)) in edges.iter().enumerate() {
            // An empty field is NULL: no label; a label is quoted, its quotes doubled, so that
            // any name reads back as written. The weight's f32 value, written exactly.
            let label = match attrs.label(i) {
                "" => String::new(),
                label => format!("\"{}\"", label.replace('"', "\"\"")),
            };
            let weight = attrs.weight(i) as f64;
            writeln!(out, "{},{},{weight},{label}", stored_id(s), stored_id(d))?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        let (_, v_ns) = self.execute(
            &format!("COPY V FROM '{}' (HEADER=false)", literal(&v_csv)?),
            json!({}),
        )?;
        let (_, e_ns) = self.execute(
            &format!("COPY E FROM '{}' (HEADER=false)", literal(&e_csv)?),
            json!({}),
        )?;
        progress(edges.len());
        println!(
            "kuzu: COPY took {:.2} s for the vertices and {:.2} s for the edges, in the worker",
            v_ns as f64 / 1e9,
            e_ns as f64 / 1e9
        );
        Ok(())
    }

    fn counts(&mut self) -> Result<(u64, u64)> {
        let vertices = self.count("MATCH (n:V) RETURN count(n)")?;
        let edges = self.count("MATCH ()-[e:E]->() RETURN count(e)")?;
        Ok((vertices, edges))
    }

    fn supports(&self, _: Workload) -> bool {
        true
    }

    fn answer(&mut self, query: &system::Query) -> Result<Answer> {
        let (reply, ns) = match *query {
            system::Query::NeighborCount { vertex, dir } => self.neighbor_count(vertex, dir)?,
            system::Query::Bfs {
                start,
                dir,
                max_depth,
            } => self.bfs(start, dir, max_depth, None)?,
            system::Query::ShortestPath {
                source,
                target,
                dir,
            } => self.shortest_path(source, target, dir)?,
            system::Query::BfsLabels {
                start,
                dir,
                max_depth,
                labels,
            } => self.bfs(start, dir, max_depth, Some(labels.names()))?,
            system::Query::WeightedPath {
                source,
                target,
                dir,
            } => self.weighted_path(source, target, dir)?,
        };
        Ok(Answer {
            reply,
            server_us: None,
            stats: None,
            in_process_ns: Some(ns),
        })
    }
}

/// The queries, in Kuzu's Cypher, one worker request each; each returns the reply and the
/// worker's time.
impl Kuzu {
    fn neighbor_count(&mut self, v: u64, dir: Direction) -> Result<(Reply, u64)> {
        let id = stored_id(v);
        let (left, right) = arrows(dir);
        // Grouped by the start, so that an unknown start gives no row; DISTINCT because with
        // `both` a vertex linked both ways is matched twice.
        let (rows, ns) = self.execute(
            &format!(
                "MATCH (s:V {{id: $id}}) OPTIONAL MATCH (s){left}[:E]{right}(n:V) \
                 RETURN s.id, count(DISTINCT n)"
            ),
            json!({ "id": id }),
        )?;
        let reply = match rows.as_slice() {
            [] => Reply::UnknownVertex,
            [row] if row.len() == 2 => Reply::Count(int(&row[1])?),
            other => bail!("neighbors of {v}: unexpected rows {other:?}"),
        };
        Ok((reply, ns))
    }

    /// BFS over every arc, or with `labels` over the arcs whose `l` is one of them (a filter
    /// on the recursive pattern's relationships).
    fn bfs(
        &mut self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        labels: Option<Vec<String>>,
    ) -> Result<(Reply, u64)> {
        let id = stored_id(start);
        let (left, right) = arrows(dir);
        let hops = max_depth.unwrap_or(MAX_HOPS).min(MAX_HOPS);
        // SHORTEST needs a lower bound of 1: depth 0 is a lookup of the start.
        let (rows, ns) = match max_depth {
            Some(0) => self.execute("MATCH (s:V {id: $id}) RETURN NULL, 0", json!({ "id": id }))?,
            _ => {
                // One row per BFS level past the start: its depth and how many vertices it
                // holds (each reached vertex once, at its shortest distance). A start with no
                // neighbors gives one row (NULL, 0); an unknown start none.
                let filter = if labels.is_some() {
                    " (r, _ | WHERE r.l IN $labels)"
                } else {
                    ""
                };
                let mut params = json!({ "id": id });
                if let Some(labels) = &labels {
                    params["labels"] = json!(labels);
                }
                self.execute(
                    &format!(
                        "MATCH (s:V {{id: $id}}) \
                         OPTIONAL MATCH (s){left}[e:E* SHORTEST 1..{hops}{filter}]{right}(n:V) \
                         RETURN length(e) AS d, count(n) ORDER BY d"
                    ),
                    params,
                )?
            }
        };
        if rows.is_empty() {
            return Ok((Reply::UnknownVertex, ns));
        }
        let mut levels = vec![1];
        for row in &rows {
            let [d, n] = row.as_slice() else {
                bail!("BFS from {start}: unexpected row {row:?}");
            };
            if d.is_null() {
                ensure!(
                    int(n)? == 0 && rows.len() == 1,
                    "BFS from {start}: rows {rows:?}"
                );
                continue;
            }
            // Levels are contiguous; a gap would mean a wrong query.
            ensure!(
                int(d)? == levels.len() as u64,
                "BFS from {start}: level {d} where level {} was due",
                levels.len()
            );
            levels.push(int(n)?);
        }
        // Asked for more levels than the bound allows, and reached the bound: there may be more.
        // A BFS bounded at 65,535 hops comes back with at most 65,534 levels past the start
        // (measured: from the middle of a 100,000-vertex chain), so that is the bound reached.
        let deepest = levels.len() as u64 - 1;
        ensure!(
            deepest + 1 < u64::from(hops) || max_depth.is_some_and(|d| d <= MAX_HOPS),
            "BFS from {start} reached Kuzu's bound of {MAX_HOPS} hops: the answer may be short"
        );
        Ok((Reply::Levels(levels), ns))
    }

    fn shortest_path(&mut self, a: u64, b: u64, dir: Direction) -> Result<(Reply, u64)> {
        let (a_id, b_id) = (stored_id(a), stored_id(b));
        let (rows, ns) = if a == b {
            // SHORTEST patterns start at one hop; the path from a vertex to itself is the
            // vertex, when it exists.
            self.execute("MATCH (a:V {id: $a}) RETURN [a.id]", json!({ "a": a_id }))?
        } else {
            let (left, right) = arrows(dir);
            // The relationship variable, not a path variable: LadybugDB 0.22.0 binds an
            // unmatched OPTIONAL path `p` to the one-node path of `a` rather than NULL
            // (`p IS NULL` is false), while `e` is NULL. `nodes(e)` are the vertices between
            // the ends.
            self.execute(
                &format!(
                    "MATCH (a:V {{id: $a}}), (b:V {{id: $b}}) \
                     OPTIONAL MATCH (a){left}[e:E* SHORTEST 1..{MAX_HOPS}]{right}(b) \
                     RETURN [a.id] + properties(nodes(e), 'id') + [b.id], e IS NULL"
                ),
                json!({ "a": a_id, "b": b_id }),
            )?
        };
        let reply = match rows.as_slice() {
            [] => Reply::UnknownVertex,
            [row] => match row.as_slice() {
                [_, Value::Bool(true)] => Reply::Unreachable,
                [Value::Array(ids)] | [Value::Array(ids), Value::Bool(false)] => {
                    Reply::Path(ids.iter().map(id).collect::<Result<_>>()?)
                }
                other => bail!("path {a} → {b}: unexpected row {other:?}"),
            },
            other => bail!("path {a} → {b}: {} rows where one was due", other.len()),
        };
        Ok((reply, ns))
    }

    /// `WSHORTEST(w)`: Kuzu's weighted shortest path over the weight property.
    fn weighted_path(&mut self, a: u64, b: u64, dir: Direction) -> Result<(Reply, u64)> {
        let (a_id, b_id) = (stored_id(a), stored_id(b));
        let (rows, ns) = if a == b {
            // As for SHORTEST: recursive patterns start at one hop.
            self.execute(
                "MATCH (a:V {id: $a}) RETURN [a.id], 0.0, false",
                json!({ "a": a_id }),
            )?
        } else {
            let (left, right) = arrows(dir);
            // Not OPTIONAL: LadybugDB 0.22.0 fails an OPTIONAL WSHORTEST on some graphs
            // ("PathPropertyProbe failed to find rel property tuple"); no row is then asked
            // about separately.
            let (rows, ns) = self.execute(
                &format!(
                    "MATCH (a:V {{id: $a}}), (b:V {{id: $b}}) \
                     MATCH (a){left}[e:E* WSHORTEST(w) 1..{MAX_HOPS}]{right}(b) \
                     RETURN [a.id] + properties(nodes(e), 'id') + [b.id], cost(e), false"
                ),
                json!({ "a": a_id, "b": b_id }),
            )?;
            if rows.is_empty() {
                let (known, known_ns) = self.execute(
                    "MATCH (v:V) WHERE v.id IN [$a, $b] RETURN NULL, NULL, true",
                    json!({ "a": a_id, "b": b_id }),
                )?;
                let rows = if known.len() == 2 {
                    known[..1].to_vec()
                } else {
                    Vec::new()
                };
                (rows, ns + known_ns)
            } else {
                (rows, ns)
            }
        };
        let reply = match rows.as_slice() {
            [] => Reply::UnknownVertex,
            [row] => match row.as_slice() {
                [_, _, Value::Bool(true)] => Reply::Unreachable,
                [Value::Array(ids), weight, Value::Bool(false)] => Reply::WeightedPath {
                    path: ids.iter().map(id).collect::<Result<_>>()?,
                    weight: weight
                        .as_f64()
                        .ok_or_else(|| anyhow!("weighted path {a} → {b}: cost {weight}"))?,
                },
                other => bail!("weighted path {a} → {b}: unexpected row {other:?}"),
            },
            other => bail!(
                "weighted path {a} → {b}: {} rows where one was due",
                other.len()
            ),
        };
        Ok((reply, ns))
    }
}

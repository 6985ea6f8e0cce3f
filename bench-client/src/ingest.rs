//! The ingestion matrix (in the shape of PyGraphDB's): graph sizes × edges per call × transport
//! × load (bulk, or keeping the vertex rows exact after every call), each cell loaded into a
//! fresh, durable graph-host of its own, with edges/s, peak and final host RSS, bytes per edge
//! and on-disk size. Cells are written as they finish (JSONL, one line
//! each), then as CSV, a Markdown table and a chart of edges/s and bytes per edge against size.

use crate::report::charts;
use anyhow::{Context, bail, ensure};
use graph_client::edgelist::EdgeList;
use graph_client::graph::{GraphDb, LoadPlan, LoadProgress, TransportKind};
use graph_client::server::Server;
use plotters::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One cell of the matrix: what was loaded how, and what it cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub edges: usize,
    pub batch: usize,
    pub transport: String,
    /// A bulk load (`LoadPlan::bulk`). Cells of runs from before bulk loads lack it: plain.
    #[serde(default)]
    pub bulk: bool,
    /// `add_edges` calls.
    pub calls: u64,
    /// `finish_bulk_load` calls (a bulk load's vertex rows).
    #[serde(default)]
    pub finish_calls: u64,
    pub seconds: f64,
    pub edges_per_s: f64,
    /// The host with the module published and called once, before the load (its baseline).
    pub idle_rss_bytes: u64,
    pub peak_rss_bytes: u64,
    pub rss_bytes: u64,
    /// (RSS after the load − idle RSS) / edges.
    pub rss_bytes_per_edge: f64,
    /// The host's data directory (commit log, engine snapshots, module).
    pub disk_bytes: u64,
    pub disk_bytes_per_edge: f64,
}

/// `n` arcs drawn (seeded, without replacement) from `arcs`, in (src, dst) order: a smaller
/// graph of the same shape, as a user with a fraction of the data would load it.
pub fn sample(arcs: &EdgeList, n: usize, seed: u64) -> EdgeList {
    let mut pairs: Vec<(u64, u64)> = arcs.iter().collect();
    if n < pairs.len() {
        pairs.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        pairs.truncate(n);
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs.into_iter().collect()
}

/// A graph-host of its own, in a temporary data directory, stopped (and the directory removed)
/// when dropped.
struct Host {
    child: Child,
    dir: tempfile::TempDir,
    url: String,
}

impl Host {
    fn start(bin: &Path, port: u16) -> anyhow::Result<Host> {
        let dir = tempfile::tempdir()?;
        let listen = format!("127.0.0.1:{port}");
        let child = Command::new(bin)
            .args(["--listen", &listen, "--data-dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let host = Host {
            child,
            dir,
            url: format!("http://{listen}"),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Server::new(&host.url).ping().is_err() {
            ensure!(
                Instant::now() < deadline,
                "graph-host did not start on {listen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(host)
    }

    /// `VmRSS` and `VmHWM` (peak) from /proc, bytes.
    fn rss(&self) -> anyhow::Result<(u64, u64)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let field = |name: &str| -> anyhow::Result<u64> {
            let line = status
                .lines()
                .find(|l| l.starts_with(name))
                .with_context(|| format!("no {name} in /proc status"))?;
            let kib: u64 = line[name.len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()?;
            Ok(kib * 1024)
        };
        Ok((field("VmRSS:")?, field("VmHWM:")?))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one cell loads how: edges per call, transport, and whether as a bulk load.
#[derive(Debug, Clone, Copy)]
pub struct Way {
    pub batch: usize,
    pub transport: TransportKind,
    pub bulk: bool,
}

/// How a cell's load is named in the tables: `bulk` or `plain`.
fn load_name(bulk: bool) -> &'static str {
    if bulk { "bulk" } else { "plain" }
}

/// Loads `edges` into a fresh host (`bin`, on `port`) with `module` published, the `way` it
/// says, and measures it.
pub fn run_cell(
    bin: &Path,
    port: u16,
    module: &[u8],
    edges: &EdgeList,
    way: Way,
) -> anyhow::Result<Cell> {
    let Way {
        batch,
        transport,
        bulk,
    } = way;
    let host = Host::start(bin, port)?;
    let server = Server::new(&host.url);
    let server = server.clone().with_token(server.create_identity()?.token);
    server.publish("graph", module.to_vec(), true)?;
    let db = GraphDb::open(server, "graph", transport);
    db.info().map_err(|e| anyhow::anyhow!("{e}"))?;
    let (idle, _) = host.rss()?;
    let started = Instant::now();
    let mut calls = 0;
    let outcome = db
        .load_with(
            edges,
            LoadPlan {
                batch,
                in_flight: 1,
                bulk,
            },
            |p| calls += matches!(p, LoadProgress::Edges { .. }) as u64,
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let seconds = started.elapsed().as_secs_f64();
    ensure!(
        outcome.graph.edges == edges.len() as u64,
        "the host holds {} edges after loading {}",
        outcome.graph.edges,
        edges.len()
    );
    let (rss, peak) = host.rss()?;
    let disk = crate::footprint::disk_bytes(host.dir.path());
    let n = edges.len() as f64;
    Ok(Cell {
        edges: edges.len(),
        batch,
        transport: transport.as_str().into(),
        bulk,
        calls,
        finish_calls: outcome.finish_calls,
        seconds,
        edges_per_s: n / seconds,
        idle_rss_bytes: idle,
        peak_rss_bytes: peak,
        rss_bytes: rss,
        rss_bytes_per_edge: rss.saturating_sub(idle) as f64 / n,
        disk_bytes: disk,
        disk_bytes_per_edge: disk as f64 / n,
    })
}

/// Appends `cell` to `path` as one JSON line.
pub fn append_jsonl(path: &Path, cell: &Cell) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{}", serde_json::to_string(cell)?)?;
    Ok(())
}

/// The cells as CSV, one row each.
pub fn csv(cells: &[Cell]) -> String {
    let mut out = String::from(
        "edges,batch,transport,load,calls,finish_calls,seconds,edges_per_s,idle_rss_bytes,peak_rss_bytes,\
         rss_bytes,rss_bytes_per_edge,disk_bytes,disk_bytes_per_edge\n",
    );
    for c in cells {
        out += &format!(
            "{},{},{},{},{},{},{:.3},{:.0},{},{},{},{:.1},{},{:.1}\n",
            c.edges,
            c.batch,
            c.transport,
            c.load(),
            c.calls,
            c.finish_calls,
            c.seconds,
            c.edges_per_s,
            c.idle_rss_bytes,
            c.peak_rss_bytes,
            c.rss_bytes,
            c.rss_bytes_per_edge,
            c.disk_bytes,
            c.disk_bytes_per_edge
        );
    }
    out
}

/// The cells as a Markdown table.
pub fn markdown(cells: &[Cell]) -> String {
    let mut out = String::from(
        "| edges | edges per call | transport | load | time | edges/s | peak RSS | RSS after | \
         bytes/edge (RSS) | on disk | bytes/edge (disk) |\n|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mb = |b: u64| format!("{:.0} MB", b as f64 / 1e6);
    for c in cells {
        out += &format!(
            "| {} | {} | {} | {} | {:.2} s | {:.0} | {} | {} | {:.0} | {} | {:.0} |\n",
            c.edges,
            c.batch,
            c.transport,
            c.load(),
            c.seconds,
            c.edges_per_s,
            mb(c.peak_rss_bytes),
            mb(c.rss_bytes),
            c.rss_bytes_per_edge,
            mb(c.disk_bytes),
            c.disk_bytes_per_edge
        );
    }
    out
}

/// Two panels, edges/s and bytes per edge (RSS, and disk as a thin line) against the graph's size on
/// log axes, one line per (transport, edges per call, load): cost per edge must stay flat as the graph
/// grows, not climb.
pub fn chart(cells: &[Cell]) -> anyhow::Result<Vec<u8>> {
    charts::register_font()?;
    let (width, height) = (1400u32, 600u32);
    let mut rgb = vec![0u8; (width * height * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (left, right) = root.split_horizontally(width / 2);
        let mut series: Vec<(String, usize, &str)> = cells
            .iter()
            .map(|c| (c.transport.clone(), c.batch, c.load()))
            .collect();
        series.sort();
        series.dedup();
        let sizes = || cells.iter().map(|c| c.edges as f64);
        let (lo, hi) = (
            sizes().fold(f64::MAX, f64::min) / 1.5,
            sizes().fold(0.0, f64::max) * 1.5,
        );
        type Value = fn(&Cell) -> f64;
        let panels: [(&_, &str, Value); 2] = [
            (&left, "edges/s", |c| c.edges_per_s),
            (
                &right,
                "bytes per edge (RSS; disk: thin line, crosses)",
                |c| c.rss_bytes_per_edge,
            ),
        ];
        for (area, title, value) in panels {
            let top = cells.iter().map(value).fold(0.0, f64::max) * 1.2;
            let top = if title.starts_with("bytes") {
                top.max(
                    cells
                        .iter()
                        .map(|c| c.disk_bytes_per_edge)
                        .fold(0.0, f64::max)
                        * 1.2,
                )
            } else {
                top
            };
            let mut chart = ChartBuilder::on(area)
                .caption(title, ("sans-serif", 22))
                .margin(16)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d((lo..hi).log_scale(), 0.0..top.max(1.0))?;
            chart
                .configure_mesh()
                .x_desc("edges in the graph")
                .x_label_formatter(&|v| format!("{:.0e}", v))
                .y_label_formatter(&|v| format!("{:.0}", v))
                .draw()?;
            for (i, (transport, batch, load)) in series.iter().enumerate() {
                let colour = charts::PALETTE[i % charts::PALETTE.len()];
                let mut points: Vec<&Cell> = cells
                    .iter()
                    .filter(|c| &c.transport == transport && c.batch == *batch && c.load() == *load)
                    .collect();
                points.sort_by_key(|c| c.edges);
                let line: Vec<(f64, f64)> =
                    points.iter().map(|c| (c.edges as f64, value(c))).collect();
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        line.clone(),
                        colour.stroke_width(2),
                    )))?
                    .label(format!("{transport}, {batch} per call, {load}"))
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2))
                    });
                chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
                if title.starts_with("bytes") {
                    let disk: Vec<(f64, f64)> = points
                        .iter()
                        .map(|c| (c.edges as f64, c.disk_bytes_per_edge))
                        .collect();
                    let thin = colour.stroke_width(1);
                    chart.draw_series(std::iter::once(PathElement::new(disk.clone(), thin)))?;
                    chart.draw_series(disk.iter().map(|&p| Cross::new(p, 5, thin)))?;
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
        root.present()?;
    }
    charts::encode_png((width, height), &rgb)
}

/// Runs every cell of `sizes` × `batches` × `transports` × `loads` (bulk or not; one fresh
/// host each, in turn on `port`), appending each to `out/ingest.jsonl` as it finishes, then writes `ingest.csv`,
/// `ingest.md` and `ingest.png`. `arcs` is the full graph the sizes sample.
#[allow(clippy::too_many_arguments)]
pub fn run_matrix(
    host_bin: &Path,
    port: u16,
    module: &Path,
    arcs: &EdgeList,
    sizes: &[usize],
    batches: &[usize],
    transports: &[TransportKind],
    loads: &[bool],
    seed: u64,
    out: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out)?;
    let wasm = std::fs::read(module).with_context(|| format!("reading {}", module.display()))?;
    let jsonl = out.join("ingest.jsonl");
    if jsonl.exists() {
        std::fs::remove_file(&jsonl)?;
    }
    let mut cells = Vec::new();
    for &size in sizes {
        if size > arcs.len() {
            bail!(
                "size {size} is larger than the dataset ({} arcs)",
                arcs.len()
            );
        }
        let edges = sample(arcs, size, seed);
        for &transport in transports {
            for &batch in batches {
                for &bulk in loads {
                    let way = Way {
                        batch,
                        transport,
                        bulk,
                    };
                    let what = format!(
                        "{size} edges, {batch} per call, {}, {}",
                        transport.as_str(),
                        load_name(bulk)
                    );
                    let cell = run_cell(host_bin, port, &wasm, &edges, way)
                        .with_context(|| what.clone())?;
                    println!(
                        "{what}: {:.2} s = {:.0} edges/s, {:.0} B/edge RSS, {:.0} B/edge disk",
                        cell.seconds,
                        cell.edges_per_s,
                        cell.rss_bytes_per_edge,
                        cell.disk_bytes_per_edge
                    );
                    append_jsonl(&jsonl, &cell)?;
                    cells.push(cell);
                }
            }
        }
    }
    let mut written = vec![jsonl];
    written.extend(render(&cells, out)?);
    Ok(written)
}

/// The cells of a run (`out/ingest.jsonl`, also of one cut short), rendered as by
/// [`run_matrix`].
pub fn render_jsonl(out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let jsonl = out.join("ingest.jsonl");
    let text =
        std::fs::read_to_string(&jsonl).with_context(|| format!("reading {}", jsonl.display()))?;
    let cells = text
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<Vec<Cell>, _>>()?;
    render(&cells, out)
}

impl Cell {
    fn load(&self) -> &'static str {
        load_name(self.bulk)
    }
}

/// Writes `ingest.csv`, `ingest.md` and `ingest.png` of `cells` into `out`.
fn render(cells: &[Cell], out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let files = [
        (out.join("ingest.csv"), csv(cells).into_bytes()),
        (out.join("ingest.md"), markdown(cells).into_bytes()),
        (out.join("ingest.png"), chart(cells)?),
    ];
    let mut written = Vec::new();
    for (path, bytes) in files {
        std::fs::write(&path, bytes)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_distinct_sorted_and_sized() {
        let arcs: EdgeList = (0..1000u64).map(|i| (i % 37, i % 91)).collect();
        let distinct = arcs.sorted().len();
        let s = sample(&arcs, 100, 1);
        assert_eq!(s.len(), 100);
        let pairs: Vec<(u64, u64)> = s.iter().collect();
        assert!(pairs.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sample(&arcs, 10_000, 1).len(), distinct);
    }

    #[test]
    fn csv_and_markdown_have_a_row_per_cell() {
        let cell = Cell {
            edges: 100,
            batch: 10,
            transport: "ws".into(),
            bulk: true,
            calls: 10,
            finish_calls: 1,
            seconds: 0.5,
            edges_per_s: 200.0,
            idle_rss_bytes: 1,
            peak_rss_bytes: 3,
            rss_bytes: 2,
            rss_bytes_per_edge: 0.01,
            disk_bytes: 5,
            disk_bytes_per_edge: 0.05,
        };
        assert_eq!(csv(&[cell.clone(), cell.clone()]).lines().count(), 3);
        assert_eq!(markdown(std::slice::from_ref(&cell)).lines().count(), 3);
        assert!(
            chart(std::slice::from_ref(&cell))
                .unwrap()
                .starts_with(b"\x89PNG")
        );
        // A run's JSONL, rendered again.
        let dir = tempfile::tempdir().unwrap();
        append_jsonl(&dir.path().join("ingest.jsonl"), &cell).unwrap();
        append_jsonl(&dir.path().join("ingest.jsonl"), &cell).unwrap();
        let written = render_jsonl(dir.path()).unwrap();
        assert_eq!(written.len(), 3);
        let csv_text = std::fs::read_to_string(dir.path().join("ingest.csv")).unwrap();
        assert_eq!(csv_text.lines().count(), 3);
        assert!(
            csv_text
                .lines()
                .nth(1)
                .unwrap()
                .starts_with("100,10,ws,bulk,10,1,")
        );
    }

    /// A line of a run from before bulk loads (no `bulk`, no `finish_calls`) reads as a plain
    /// load, which is what it was.
    #[test]
    fn cells_of_earlier_runs_read_as_plain_loads() {
        let line = r#"{"edges":100,"batch":10,"transport":"ws","calls":10,"seconds":0.5,
            "edges_per_s":200.0,"idle_rss_bytes":1,"peak_rss_bytes":3,"rss_bytes":2,
            "rss_bytes_per_edge":0.01,"disk_bytes":5,"disk_bytes_per_edge":0.05}"#;
        let cell: Cell = serde_json::from_str(line).unwrap();
        assert_eq!(
            (cell.bulk, cell.finish_calls, cell.load()),
            (false, 0, "plain")
        );
    }
}

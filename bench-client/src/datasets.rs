//! Benchmark inputs: the seeded synthetic stand-ins for the SNAP graphs and the successor ring
//! of `graph_reference::generate`, or a user's file.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{Context, bail, ensure};
use graph_client::edgelist::{EdgeList, read_edge_list};
use graph_reference::generate::{DBLP, FACEBOOK, LIVEJOURNAL, chung_lu, grid, random_labels, ring};
use hashbrown::HashMap;

/// Which graph a benchmark runs on. Parses from and displays as `fb`, `dblp`, `lj`,
/// `ring:N` or `file:PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatasetSpec {
    /// ego-Facebook-like Chung-Lu graph (`graph_reference::generate::FACEBOOK`).
    Facebook,
    /// com-DBLP-like Chung-Lu graph with sparse ids (`graph_reference::generate::DBLP`).
    Dblp,
    /// com-LiveJournal-like Chung-Lu graph (`graph_reference::generate::LIVEJOURNAL`).
    LiveJournal,
    /// Successor ring of N vertices with out-degree 3 (`graph_reference::generate::ring`).
    Ring(u64),
    /// N × N road-network-like grid with random travel times (`graph_reference::generate::grid`).
    Grid(u64),
    /// An edge-list file, read with [`read_edge_list`].
    File(PathBuf),
}

impl DatasetSpec {
    /// Short label for reports and file names: `fb`, `dblp`, `lj`, `ring-N`, or the file's
    /// name without its extensions and leading dots (`.edges.txt`: `edges`).
    pub fn name(&self) -> String {
        match self {
            DatasetSpec::Facebook => "fb".into(),
            DatasetSpec::Dblp => "dblp".into(),
            DatasetSpec::LiveJournal => "lj".into(),
            DatasetSpec::Ring(n) => format!("ring-{n}"),
            DatasetSpec::Grid(n) => format!("grid-{n}"),
            DatasetSpec::File(path) => {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                let name = name.trim_start_matches('.');
                name.split('.').next().unwrap_or_default().to_owned()
            }
        }
    }

    /// Builds (or reads) the edge list. `seed` only matters for the Chung-Lu graphs.
    pub fn load(&self, seed: u64) -> anyhow::Result<EdgeList> {
        Ok(match self {
            DatasetSpec::Facebook => chung_lu(&FACEBOOK, seed).into_iter().collect(),
            DatasetSpec::Dblp => chung_lu(&DBLP, seed).into_iter().collect(),
            DatasetSpec::LiveJournal => chung_lu(&LIVEJOURNAL, seed).into_iter().collect(),
            DatasetSpec::Ring(n) => {
                ensure!(*n >= 4, "a ring needs at least 4 vertices, got {n}");
                ring(*n).into_iter().collect()
            }
            DatasetSpec::Grid(n) => {
                ensure!(*n >= 2, "a grid needs at least 2 × 2 vertices, got {n}");
                let mut edges = EdgeList::new();
                for (s, d, w) in grid(*n, seed) {
                    edges.push_with(s, d, "", w);
                }
                edges
            }
            DatasetSpec::File(path) => read_edge_list(path)?,
        })
    }
}

impl FromStr for DatasetSpec {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Self> {
        if let Some(path) = s.strip_prefix("file:") {
            ensure!(!path.is_empty(), "`file:` needs a path");
            return Ok(DatasetSpec::File(path.into()));
        }
        if let Some(n) = s.strip_prefix("ring:") {
            let n: u64 = n
                .parse()
                .with_context(|| format!("`{n}` is not a vertex count in `{s}`"))?;
            ensure!(n >= 4, "a ring needs at least 4 vertices, got {n}");
            return Ok(DatasetSpec::Ring(n));
        }
        if let Some(n) = s.strip_prefix("grid:") {
            let n: u64 = n
                .parse()
                .with_context(|| format!("`{n}` is not a side length in `{s}`"))?;
            ensure!(n >= 2, "a grid needs at least 2 × 2 vertices, got {n}");
            return Ok(DatasetSpec::Grid(n));
        }
        Ok(match s {
            "fb" | "facebook" => DatasetSpec::Facebook,
            "dblp" => DatasetSpec::Dblp,
            "lj" | "livejournal" => DatasetSpec::LiveJournal,
            _ => bail!("unknown dataset `{s}`: expected fb, dblp, lj, ring:N, grid:N or file:PATH"),
        })
    }
}

impl fmt::Display for DatasetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatasetSpec::Facebook => f.write_str("fb"),
            DatasetSpec::Dblp => f.write_str("dblp"),
            DatasetSpec::LiveJournal => f.write_str("lj"),
            DatasetSpec::Ring(n) => write!(f, "ring:{n}"),
            DatasetSpec::Grid(n) => write!(f, "grid:{n}"),
            DatasetSpec::File(path) => write!(f, "file:{}", path.display()),
        }
    }
}

/// `edges` with every row given one of the labels `l0` .. `l{k-1}` (seeded), weights kept.
pub fn with_random_labels(edges: &EdgeList, k: u32, seed: u64) -> EdgeList {
    let mut out = edges.clone();
    // A row that repeats an edge gets the label of its first row: the dataset gives each edge
    // one label (a second one would make it two edges of different labels).
    let mut first: HashMap<(u64, u64), u32> = HashMap::new();
    let labels = edges
        .iter()
        .zip(random_labels(edges.len(), k, seed))
        .map(|(edge, l)| *first.entry(edge).or_insert(l + 1))
        .collect();
    out.set_labels(
        std::iter::once(String::new())
            .chain((0..k).map(crate::system::label_name))
            .collect(),
        labels,
    );
    out
}

/// Ids the workloads that write may give new vertices: [`FRESH_SPAN`] ids from the one
/// returned, none of them a vertex of `vertices` (sorted, distinct). Below 2^63 where they fit,
/// where the peers' signed 64-bit integers hold them as themselves (`system::stored_id`): just
/// above the largest vertex there, else in the first gap between vertices wide enough; only
/// then at or above 2^63.
pub fn fresh_ids(vertices: &[u64]) -> anyhow::Result<u64> {
    [i64::MAX as u64, u64::MAX]
        .into_iter()
        .find_map(|last| free_block(vertices, last))
        .with_context(|| {
            format!("no {FRESH_SPAN} consecutive ids are free between the dataset's ids")
        })
}

/// The first id of [`FRESH_SPAN`] free ids that end at or below `last`: just above the largest
/// vertex below that block if there is room, else the first gap wide enough.
fn free_block(vertices: &[u64], last: u64) -> Option<u64> {
    let fits = |start: u64, end: u64| end - start >= FRESH_SPAN;
    let below = &vertices[..vertices.partition_point(|&v| v <= last)];
    let above = below.last().map_or(Some(0), |&top| top.checked_add(1));
    if let Some(above) = above.filter(|&a| a <= last && fits(a, last)) {
        return Some(above);
    }
    let mut start = 0;
    for &v in below {
        if fits(start, v) {
            return Some(start);
        }
        start = v.saturating_add(1);
    }
    None
}

/// How many fresh ids [`fresh_ids`] sets aside: the write workloads place theirs at offsets
/// of up to a few billion.
pub const FRESH_SPAN: u64 = 1 << 33;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_rings_build() {
        let fb = DatasetSpec::Facebook.load(7).unwrap();
        assert_eq!(fb.len() as u64, FACEBOOK.edges);
        assert_eq!(DatasetSpec::Ring(10).load(0).unwrap().len(), 30);
        assert!(DatasetSpec::Ring(3).load(0).is_err());
        let grid = DatasetSpec::Grid(3).load(5).unwrap();
        assert_eq!(grid.len(), 12);
        assert_eq!(grid.weights.len(), 12, "every grid edge has a travel time");
        assert!(grid.labels.is_empty());
        let labelled = with_random_labels(&grid, 2, 1);
        assert_eq!(labelled.weights, grid.weights);
        assert_eq!(labelled.label_names, ["", "l0", "l1"]);
        assert!(labelled.labels.iter().all(|&l| l == 1 || l == 2));
        assert_eq!(labelled.attrs(0).1, grid.attrs(0).1);
    }

    #[test]
    fn fresh_ids_avoid_every_vertex() {
        assert_eq!(fresh_ids(&[]).unwrap(), 0);
        assert_eq!(fresh_ids(&[3, 9]).unwrap(), 10);
        let (top, signed) = (u64::MAX, i64::MAX as u64);
        // No room above below 2^63: the first gap wide enough.
        assert_eq!(fresh_ids(&[999_999, top - 1, top]).unwrap(), 1_000_000);
        assert_eq!(fresh_ids(&[5, signed - 1, signed]).unwrap(), 6);
        assert_eq!(fresh_ids(&[FRESH_SPAN, top]).unwrap(), FRESH_SPAN + 1);
        let packed = [FRESH_SPAN - 1, 2 * FRESH_SPAN - 1, top];
        assert_eq!(fresh_ids(&packed).unwrap(), 2 * FRESH_SPAN);
        // Ids above 2^63 leave the ids below it free.
        assert_eq!(fresh_ids(&[signed + 7, top]).unwrap(), 0);
    }

    #[test]
    fn a_repeated_edge_gets_one_random_label() {
        let mut edges = EdgeList::new();
        for (s, d) in [(1, 2), (2, 3), (1, 2), (3, 1), (2, 3), (1, 2)] {
            edges.push(s, d);
        }
        for seed in 0..20 {
            let labelled = with_random_labels(&edges, 8, seed);
            let label = |row: usize| labelled.labels[row];
            assert_eq!((label(0), label(0)), (label(2), label(5)), "seed {seed}");
            assert_eq!(label(1), label(4), "seed {seed}");
            assert_eq!(labelled.sorted().len(), 3, "seed {seed}");
        }
    }

    #[test]
    fn spec_parses_and_displays() {
        for text in [
            "fb",
            "dblp",
            "lj",
            "ring:1000",
            "grid:1000",
            "file:/data/com-lj.ungraph.txt.gz",
        ] {
            let spec: DatasetSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
        }
        assert_eq!(
            "ring:1000".parse::<DatasetSpec>().unwrap(),
            DatasetSpec::Ring(1000)
        );
        assert_eq!(
            "file:/data/com-lj.ungraph.txt.gz"
                .parse::<DatasetSpec>()
                .unwrap()
                .name(),
            "com-lj"
        );
        let hidden = "file:/data/.edges.txt".parse::<DatasetSpec>().unwrap();
        assert_eq!(hidden.name(), "edges");
        for bad in [
            "", "ring:", "ring:x", "ring:2", "grid:1", "grid:", "file:", "orkut",
        ] {
            assert!(bad.parse::<DatasetSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn file_spec_reads_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tiny.txt");
        std::fs::write(&path, "# t\n1 2\n2 3\n").unwrap();
        let edges = DatasetSpec::File(path).load(0).unwrap();
        assert_eq!(edges.iter().collect::<Vec<_>>(), [(1, 2), (2, 3)]);
    }
}

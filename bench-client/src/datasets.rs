//! Benchmark inputs: the seeded synthetic stand-ins for the SNAP graphs and the successor ring
//! of `graph_reference::generate`, or a user's file.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{Context, bail, ensure};
use graph_client::edgelist::{EdgeList, read_edge_list};
use graph_reference::generate::{DBLP, FACEBOOK, LIVEJOURNAL, chung_lu, grid, random_labels, ring};

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
    /// name without extensions.
    pub fn name(&self) -> String {
        match self {
            DatasetSpec::Facebook => "fb".into(),
            DatasetSpec::Dblp => "dblp".into(),
            DatasetSpec::LiveJournal => "lj".into(),
            DatasetSpec::Ring(n) => format!("ring-{n}"),
            DatasetSpec::Grid(n) => format!("grid-{n}"),
            DatasetSpec::File(path) => {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
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
    out.set_labels(
        std::iter::once(String::new())
            .chain((0..k).map(crate::system::label_name))
            .collect(),
        random_labels(edges.len(), k, seed)
            .into_iter()
            .map(|l| l + 1)
            .collect(),
    );
    out
}

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

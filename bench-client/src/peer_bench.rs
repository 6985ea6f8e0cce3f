//! Loading and querying a peer system with the same inputs and the same verification as the
//! SpacetimeDB modes: a wrong answer from a peer fails the run just as one from the module does.

use crate::peers::{Peer, PeerPath, Reached};
use crate::report::model::Load;
use crate::workloads::{Sample, Workload};
use anyhow::{Context, bail, ensure};
use graph_client::graph::Direction;
use graph_reference::ReferenceGraph;
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

/// Empties `peer`, loads `arcs` (distinct, sorted) and every vertex, and checks that the peer
/// then holds exactly the reference's vertices and those arcs.
pub fn load(
    peer: &mut dyn Peer,
    arcs: &[(u64, u64)],
    reference: &ReferenceGraph,
) -> anyhow::Result<Load> {
    let name = peer.system();
    peer.clear().with_context(|| format!("clearing {name}"))?;
    let bar = ProgressBar::new(arcs.len() as u64).with_style(
        ProgressStyle::with_template(&format!(
            "{name}: loading {{bar:40}} {{pos}}/{{len}} edges ({{per_sec}}, eta {{eta}})"
        ))
        .expect("progress template"),
    );
    let t = Instant::now();
    peer.load(reference.vertices(), arcs, &mut |n| {
        bar.set_position(n as u64)
    })
    .with_context(|| format!("loading {name}"))?;
    bar.finish();
    let seconds = t.elapsed().as_secs_f64();
    let (vertices, stored) = peer.counts()?;
    ensure!(
        (vertices, stored) == (reference.vertex_count() as u64, arcs.len() as u64),
        "{name} holds {vertices} vertices / {stored} edges after loading, the dataset has {} / {}",
        reference.vertex_count(),
        arcs.len()
    );
    println!(
        "{name}: loaded and verified {} vertices, {} edges in {seconds:.2} s ({:.0} edges/s)",
        vertices,
        stored,
        stored as f64 / seconds.max(1e-9)
    );
    Ok(Load {
        edges_sent: arcs.len() as u64,
        seconds,
        edges_per_second: arcs.len() as f64 / seconds.max(1e-9),
    })
}

/// One workload on a peer: `warmup` unmeasured queries, then one verified sample per input.
pub struct PeerRun<'a> {
    pub reference: &'a ReferenceGraph,
    pub dir: Direction,
    pub depth: u32,
}

impl PeerRun<'_> {
    pub fn run(
        &self,
        peer: &mut dyn Peer,
        workload: Workload,
        warmup: usize,
        vertices: &[u64],
        pairs: &[(u64, u64)],
    ) -> anyhow::Result<Vec<Sample>> {
        let system = peer.system();
        workload.measure(vertices, pairs, warmup, system, |_, a, b| {
            let started = Instant::now();
            self.query(peer, workload, a, b)?;
            Ok(Sample {
                e2e_us: started.elapsed().as_secs_f64() * 1e6,
                server_us: None,
                stats: None,
            })
        })
    }

    /// Asks and verifies one query; the caller times it (verification is cheap next to any
    /// query, but it is kept inside the timing for every system alike).
    fn query(&self, peer: &mut dyn Peer, workload: Workload, a: u64, b: u64) -> anyhow::Result<()> {
        let (reference, dir) = (self.reference, self.dir);
        match workload {
            Workload::NeighborCount => {
                let got = peer.neighbor_count(a, dir)?;
                let want = reference.degree(a, dir);
                ensure!(got == want, "count {got:?} but the reference says {want:?}");
            }
            Workload::BfsFull | Workload::BfsDepth => {
                let depth = (workload == Workload::BfsDepth).then_some(self.depth);
                let got = peer.bfs(a, dir, depth)?;
                let want = reference.bfs_levels(a, dir, depth);
                let ok = match (&got, &want) {
                    (None, None) => true,
                    (Some(Reached::Levels(levels)), Some(want)) => levels == want,
                    (Some(Reached::Count(n)), Some(want)) => *n == want.iter().sum::<u64>(),
                    _ => false,
                };
                ensure!(ok, "BFS gave {got:?} but the reference says {want:?}");
            }
            Workload::ShortestPath => {
                verify_path(reference, dir, a, b, peer.shortest_path(a, b, dir)?)?
            }
        }
        Ok(())
    }
}

fn verify_path(
    reference: &ReferenceGraph,
    dir: Direction,
    a: u64,
    b: u64,
    got: PeerPath,
) -> anyhow::Result<()> {
    match (got, reference.distance(a, b, dir, None)) {
        (PeerPath::UnknownVertex, None) | (PeerPath::Unreachable, Some(None)) => Ok(()),
        (PeerPath::Distance(d), Some(Some(want))) => {
            ensure!(d == want, "distance {d}, the reference says {want}");
            Ok(())
        }
        (PeerPath::Path(path), Some(Some(want))) => {
            ensure!(
                path.len() == want as usize + 1
                    && path.first() == Some(&a)
                    && path.last() == Some(&b)
                    && reference.is_path(&path, dir),
                "{path:?} is not a shortest path from {a} to {b} ({want} hops)"
            );
            Ok(())
        }
        (got, want) => bail!("got {got:?}, the reference distance is {want:?}"),
    }
}

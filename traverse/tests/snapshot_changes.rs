//! A graph that follows changes answers exactly like one built from scratch: for many seeded
//! random graphs and random change sequences (arcs and vertices inserted and removed, no-ops
//! included), every neighbor list, degree, existence check, BFS (top-down and
//! direction-optimizing), DFS and shortest path of the changed graph equals that of
//! `AdjacencyGraph::new` on the resulting vertex and arc sets, before, during and after
//! compaction. Arcs carry random attributes (labels and weights), and vertices random labels,
//! which must follow too.

use graph_traverse::{
    AdjacencyBuilder, AdjacencyGraph, ArcAttrs, Bfs, BfsOutcome, BfsQuery, Change, DenseSource,
    Dfs, DfsQuery, Direction, DirectionOptimizingBfs, ListCursor, NeighborSource, PathOutcome,
    PathQuery, Progress, Switching,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

mod common;
use common::{path_by_id_and_slot, random_graph};

const DIRS: [Direction; 3] = [Direction::Out, Direction::In, Direction::Both];

/// The vertex and arc sets the changed graph should have.
#[derive(Default)]
struct Model {
    vertices: BTreeSet<u64>,
    arcs: BTreeMap<(u64, u64), ArcAttrs>,
    /// Vertex labels other than 0.
    labels: BTreeMap<u64, u32>,
    /// Whether changes may bring arc labels above 255 (which compressed rows keep only as
    /// attributes, not as bytes).
    wide_labels: bool,
    /// Ids that were vertices once, to probe after their removal.
    seen: BTreeSet<u64>,
}

impl Model {
    /// Applies `change` as a set operation; returns whether it changed anything.
    fn apply(&mut self, change: Change) -> bool {
        match change {
            Change::InsertArc { src, dst, attrs } => {
                for v in [src, dst] {
                    self.vertices.insert(v);
                    self.seen.insert(v);
                }
                let new = !self.arcs.contains_key(&(src, dst));
                self.arcs.entry((src, dst)).or_insert(attrs);
                new
            }
            Change::RemoveArc { src, dst, .. } => self.arcs.remove(&(src, dst)).is_some(),
            Change::InsertVertex(v) => {
                self.seen.insert(v);
                self.vertices.insert(v)
            }
            Change::RemoveVertex(v) => {
                self.arcs.retain(|&(s, d), _| s != v && d != v);
                self.labels.remove(&v);
                self.vertices.remove(&v)
            }
            Change::RelabelVertex { v, to, .. } => {
                if !self.vertices.contains(&v) && to == 0 {
                    return false;
                }
                self.seen.insert(v);
                let new = self.vertices.insert(v);
                let before = match to {
                    0 => self.labels.remove(&v),
                    _ => self.labels.insert(v, to),
                };
                new || before.unwrap_or(0) != to
            }
        }
    }

    fn build(&self) -> AdjacencyGraph {
        let arcs = self.arcs.iter().map(|(&(s, d), &a)| (s, d, a));
        let mut g = AdjacencyGraph::with_attrs(self.vertices.iter().copied(), arcs);
        for (&v, &label) in &self.labels {
            g.set_vertex_label(v, label);
        }
        g
    }

    fn random_vertex(&self, rng: &mut ChaCha8Rng) -> Option<u64> {
        let n = self.vertices.len();
        (n > 0).then(|| *self.vertices.iter().nth(rng.gen_range(0..n)).unwrap())
    }

    /// A random change: mostly arcs between existing vertices, some with new or removed
    /// endpoints, self-loops, removals of existing arcs, and no-ops of every kind.
    fn random_change(&self, rng: &mut ChaCha8Rng) -> Change {
        let some_id = |rng: &mut ChaCha8Rng| match rng.gen_range(0..10) {
            0..=6 => self.random_vertex(rng).unwrap_or(1),
            7 => rng.gen_range(0..200) * 7919 + 13, // new, or removed, sparse ids
            _ => rng.gen_range(0..80),
        };
        match rng.gen_range(0..20) {
            0..=7 => {
                let src = some_id(rng);
                let dst = if rng.gen_bool(0.1) { src } else { some_id(rng) };
                let attrs = random_attrs(rng, self.wide_labels);
                Change::InsertArc { src, dst, attrs }
            }
            8..=12 if !self.arcs.is_empty() => {
                let (&(src, dst), &attrs) = self
                    .arcs
                    .iter()
                    .nth(rng.gen_range(0..self.arcs.len()))
                    .unwrap();
                Change::RemoveArc { src, dst, attrs }
            }
            8..=13 => Change::RemoveArc {
                src: some_id(rng),
                dst: some_id(rng),
                attrs: ArcAttrs::DEFAULT,
            },
            14..=15 => Change::InsertVertex(some_id(rng)),
            16..=17 => Change::RelabelVertex {
                v: some_id(rng),
                from: 0,
                to: rng.gen_range(0..3),
            },
            _ => Change::RemoveVertex(some_id(rng)),
        }
    }
}

/// Mostly the default attributes (a graph becomes attributed only with its first other arc).
fn random_attrs(rng: &mut ChaCha8Rng, wide: bool) -> ArcAttrs {
    if rng.gen_bool(0.7) {
        return ArcAttrs::DEFAULT;
    }
    ArcAttrs {
        label: match wide && rng.gen_bool(0.2) {
            true => [256, 300, 70_000][rng.gen_range(0..3)],
            false => rng.gen_range(0..4),
        },
        weight: [0.0, 0.5, 1.0, 2.0, 7.25][rng.gen_range(0..5)],
    }
}

/// A neighbor list as comparable values: (neighbor, label, weight bits), sorted.
type Arcs = Vec<(u64, u32, u32)>;

fn comparable(page: &[graph_traverse::Neighbor]) -> Arcs {
    let mut out: Arcs = page
        .iter()
        .map(|n| (n.id, n.attrs.label, n.attrs.weight.to_bits()))
        .collect();
    out.sort_unstable();
    out
}

fn sorted_neighbors(g: &AdjacencyGraph, v: u64, dir: Direction) -> Arcs {
    let mut out = Vec::new();
    g.neighbors(v, dir, &mut out);
    comparable(&out)
}

/// Everything a query can observe, compared between the changed graph and a fresh one.
fn check_same(g: &AdjacencyGraph, model: &Model, rng: &mut ChaCha8Rng, ctx: &str) {
    let fresh = model.build();
    assert_eq!(g.vertex_count(), fresh.vertex_count(), "{ctx}: vertices");
    assert_eq!(g.arc_count(), fresh.arc_count(), "{ctx}: arcs");
    for dir in DIRS {
        assert_eq!(g.arc_total(dir), fresh.arc_total(dir), "{ctx}: {dir} total");
    }
    let probes = model.seen.iter().copied().chain([u64::MAX, 3]);
    for v in probes {
        assert_eq!(g.contains(v), fresh.contains(v), "{ctx}: contains({v})");
        assert_eq!(
            g.vertex_label(v),
            fresh.vertex_label(v),
            "{ctx}: label({v})"
        );
        assert_eq!(g.slot(v).is_some(), fresh.contains(v), "{ctx}: slot({v})");
        for dir in DIRS {
            let whole = sorted_neighbors(g, v, dir);
            assert_eq!(whole, sorted_neighbors(&fresh, v, dir), "{ctx}: {v} {dir}");
            assert_eq!(
                g.degree(v, dir),
                fresh.degree(v, dir),
                "{ctx}: degree {v} {dir}"
            );
            // In pages, and as rows of slots: the same list.
            let mut paged = Vec::new();
            let mut cursor = ListCursor::start(dir);
            while !g.neighbors_page(v, dir, &mut cursor, rng.gen_range(1..4), &mut paged) {}
            assert_eq!(comparable(&paged), whole, "{ctx}: pages of {v} {dir}");
            if let Some(slot) = g.slot(v) {
                assert_eq!(g.vertex(slot), v, "{ctx}");
                let targets = g.rows(slot, dir).concat();
                let attrs = g.attrs(slot, dir).concat();
                assert!(attrs.is_empty() || attrs.len() == targets.len(), "{ctx}");
                // The labels as traversals read them (bytes or attributes) are the arcs' own.
                let labels: Vec<u32> = g
                    .labels(slot, dir)
                    .into_iter()
                    .zip(g.rows(slot, dir))
                    .flat_map(|(labels, row)| (0..row.len()).map(move |i| labels.get(i)))
                    .collect();
                let mut rows: Arcs = targets
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        let a = attrs.get(i).copied().unwrap_or_default();
                        assert_eq!(labels[i], a.label, "{ctx}: label of entry {i}");
                        (g.vertex(s), labels[i], a.weight.to_bits())
                    })
                    .collect();
                rows.sort_unstable();
                assert_eq!(rows, whole, "{ctx}: rows of {v} {dir}");
            }
        }
    }
    let Some(_) = model.random_vertex(rng) else {
        return;
    };
    for _ in 0..3 {
        let start = model.random_vertex(rng).unwrap();
        let dir = DIRS[rng.gen_range(0..3)];
        let max_depth = [None, None, Some(1), Some(3)][rng.gen_range(0..4)];
        let q = BfsQuery {
            start,
            dir,
            max_depth,
            target: None,
            collect_limit: usize::MAX,
        };
        let ctx = format!("{ctx}: bfs({start}, {dir}, {max_depth:?})");
        let levels_and_set = |outcome: BfsOutcome| match outcome {
            BfsOutcome::Visited {
                levels,
                mut vertices,
                ..
            } => {
                vertices.sort_unstable();
                (levels, vertices)
            }
            BfsOutcome::UnknownStart => panic!("{ctx}: start exists"),
        };
        let want = levels_and_set(Bfs::new(q.clone(), None).run(&fresh).0);
        assert_eq!(
            levels_and_set(Bfs::new(q.clone(), None).run(g).0),
            want,
            "{ctx}"
        );
        for switching in [
            Switching::default(),
            Switching {
                alpha: u64::MAX,
                beta: u64::MAX,
            },
        ] {
            let mut bfs = DirectionOptimizingBfs::new(q.clone(), g).with_switching(switching);
            while bfs.step(g, rng.gen_range(1..20)) == Progress::Suspended {}
            assert_eq!(
                levels_and_set(bfs.into_outcome().0),
                want,
                "{ctx} {switching:?}"
            );
        }
        // DFS takes neighbors in id order: the same preorder exactly.
        let dq = DfsQuery {
            start,
            dir,
            max_depth,
            collect_limit: usize::MAX,
        };
        assert_eq!(
            Dfs::new(dq.clone(), None).run(g).0,
            Dfs::new(dq, None).run(&fresh).0,
            "{ctx}: dfs"
        );
        let target = model.random_vertex(rng).unwrap();
        let pq = PathQuery {
            source: start,
            target,
            dir,
            max_depth,
        };
        let hops = |outcome: PathOutcome| match outcome {
            PathOutcome::Found(path) => {
                for w in path.windows(2) {
                    let arc = match dir {
                        Direction::In => (w[1], w[0]),
                        _ => (w[0], w[1]),
                    };
                    let back = (arc.1, arc.0);
                    assert!(
                        model.arcs.contains_key(&arc)
                            || (dir == Direction::Both && model.arcs.contains_key(&back)),
                        "{ctx}: {path:?} is not a path"
                    );
                }
                Ok(path.len())
            }
            other => Err(other),
        };
        assert_eq!(
            hops(path_by_id_and_slot(g, pq.clone(), u64::MAX)),
            hops(path_by_id_and_slot(&fresh, pq, u64::MAX)),
            "{ctx}: shortest path to {target}"
        );
    }
}

/// The starting graph: a random graph (isolated vertices, sparse ids, self-loops; duplicates
/// dropped, since arcs are a set) built at once, or its arcs built in steps as the module does;
/// every other one with random attributes.
fn start(seed: u64, model: &mut Model, rng: &mut ChaCha8Rng) -> AdjacencyGraph {
    let tg = random_graph(seed);
    let mut arcs = tg.arcs.clone();
    arcs.sort_unstable();
    arcs.dedup();
    let arcs: Vec<(u64, u64, ArcAttrs)> = arcs
        .into_iter()
        .map(|(s, d)| match seed % 2 {
            0 => (s, d, ArcAttrs::DEFAULT),
            _ => (s, d, random_attrs(rng, false)),
        })
        .collect();
    model.arcs.extend(arcs.iter().map(|&(s, d, a)| ((s, d), a)));
    if seed.is_multiple_of(3) {
        let mut b = AdjacencyBuilder::with_capacity(0, 0);
        b.add_attributed_arcs(arcs.iter().copied()).unwrap();
        while b.finish_step(7) == Progress::Suspended {}
        model
            .vertices
            .extend(arcs.iter().flat_map(|&(s, d, _)| [s, d]));
        model.seen = model.vertices.clone();
        b.into_graph()
    } else {
        model.vertices.extend(tg.vertices.iter().copied());
        model.seen = model.vertices.clone();
        AdjacencyGraph::with_attrs(tg.vertices.iter().copied(), arcs)
    }
}

#[test]
fn changed_graph_answers_like_a_fresh_one() {
    let (mut changes, mut effective, mut compactions, mut mid_compaction) = (0, 0, 0, 0);
    for seed in 0..200 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc4a);
        let mut model = Model {
            wide_labels: seed % 4 == 1,
            ..Model::default()
        };
        let mut g = start(seed, &mut model, &mut rng);
        check_same(&g, &model, &mut rng, &format!("seed {seed}: start"));
        for batch in 0..12 {
            let ctx = format!("seed {seed} batch {batch}");
            let batch: Vec<Change> = (0..rng.gen_range(1..25))
                .map(|_| model.random_change(&mut rng))
                .collect();
            let want: usize = batch.iter().map(|&c| model.apply(c) as usize).sum();
            let got = if rng.gen_bool(0.5) {
                g.apply(batch.iter().copied())
            } else {
                batch.iter().map(|&c| g.apply([c])).sum()
            };
            assert_eq!(got, want, "{ctx}: effective changes of {batch:?}");
            changes += batch.len();
            effective += want;
            // Compaction steps between batches, so that changes also arrive mid-compaction.
            match rng.gen_range(0..10) {
                0..=2 => {
                    for _ in 0..rng.gen_range(1..4) {
                        g.compact_step(rng.gen_range(1..60));
                    }
                    mid_compaction += g.overlay_stats().compacting as u32;
                }
                3 => {
                    g.compact();
                    compactions += 1;
                    let stats = g.overlay_stats();
                    assert_eq!((stats.rows, stats.entries, stats.compacting), (0, 0, false));
                }
                _ => {}
            }
            check_same(&g, &model, &mut rng, &ctx);
        }
        g.compact();
        assert_eq!(g.overlay_stats().entries, 0);
        assert_eq!(g.overlay_stats().base_entries, 2 * model.arcs.len());
        check_same(&g, &model, &mut rng, &format!("seed {seed}: compacted"));
    }
    assert!(
        changes > 20_000 && effective > changes / 3 && compactions > 100 && mid_compaction > 100,
        "{changes} changes, {effective} effective, {compactions} compactions, \
         {mid_compaction} batches applied mid-compaction"
    );
}

#[test]
fn removing_an_arc_removes_every_copy_and_slots_are_reused() {
    // Built with a duplicate arc 1 → 2 and a self-loop on 3.
    let mut g = AdjacencyGraph::new([9], &[(1, 2), (1, 2), (2, 3), (3, 3)]);
    assert_eq!(g.arc_count(), 4);
    assert!(!g.insert_arc(1, 2, ArcAttrs::DEFAULT), "exists (twice)");
    assert!(g.remove_arc(1, 2));
    assert_eq!(
        (
            g.arc_count(),
            g.degree(1, Direction::Out),
            g.degree(2, Direction::In)
        ),
        (2, 0, 0)
    );
    assert!(!g.remove_arc(1, 2));
    assert!(!g.remove_arc(1, 77), "unknown endpoint");
    // Removing 3 removes its self-loop once and 2 → 3.
    assert!(g.remove_vertex(3));
    assert_eq!((g.arc_count(), g.vertex_count()), (0, 3));
    let slots = g.slots();
    assert!(g.insert_vertex(40), "reuses the slot of 3");
    assert_eq!(g.slots(), slots);
    assert_eq!(g.degree(40, Direction::Both), 0);
    assert!(!g.insert_vertex(40));
    assert!(g.insert_arc(40, 41, ArcAttrs::DEFAULT));
    assert_eq!(g.slots(), slots + 1);
    assert_eq!(g.overlay_stats().free_slots, 0);
    g.compact();
    assert_eq!(
        sorted_neighbors(&g, 41, Direction::In),
        [(40, 0, 1f32.to_bits())]
    );
    assert_eq!((g.vertex_count(), g.arc_count()), (5, 1));
}

#[test]
fn compaction_steps_are_bounded_and_the_graph_stays_usable() {
    // A ring of 5,000 vertices with 3 successors each; every vertex then gets a new arc.
    let n = 5_000u64;
    let arcs = graph_reference::generate::ring(n);
    let mut g = AdjacencyGraph::new([], &arcs);
    g.apply((0..n).map(|i| Change::InsertArc {
        src: i,
        dst: (i + n / 2) % n,
        attrs: ArcAttrs::DEFAULT,
    }));
    let before = g.overlay_stats();
    assert_eq!(before.rows, 2 * n as usize);
    assert!(before.share() > 1.0, "{before:?}");
    let mut steps = 0;
    while g.compact_step(500) == Progress::Suspended {
        steps += 1;
        // Mid-compaction: a change and a query.
        if steps == 10 {
            assert!(g.remove_arc(0, 1));
        }
        assert_eq!(g.degree(7, Direction::Out), 4);
    }
    // 5,000 slots and 20,000 arcs, twice (outgoing and incoming rows), in steps of ~500.
    assert!(steps > 80 && steps < 200, "{steps} steps");
    let after = g.overlay_stats();
    // The change made mid-compaction stays in the overlay (rows of 0 and 1).
    assert_eq!((after.rows, after.base_entries), (2, 2 * 20_000));
    let ids: Vec<u64> = sorted_neighbors(&g, 0, Direction::Out)
        .iter()
        .map(|a| a.0)
        .collect();
    assert_eq!(ids, [2, 3, 2_500]);
    g.compact();
    assert_eq!(g.overlay_stats().rows, 0);
    assert_eq!(g.arc_count(), 19_999);
}

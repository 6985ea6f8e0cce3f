//! The reference for labelled, weighted graphs: label-filtered BFS and neighbors, and a textbook
//! Dijkstra, over plain maps.
//!
//! A query follows the arcs whose label is in its edge-label set, into the vertices whose label
//! is in its vertex-label set ([`Follow`]); the start passes whatever its label. A path's every
//! vertex but its first must pass; a neighbor list holds only the neighbors that pass.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};

use crate::{Direction, ReferenceGraph};

/// A graph whose arcs carry a label id and a weight. Arcs are a set keyed by their ends, like
/// the module's edge table: the first of several arcs with the same ends is the one kept.
#[derive(Debug, Clone, Default)]
pub struct LabelledGraph {
    vertices: BTreeSet<u64>,
    arcs: BTreeMap<(u64, u64), (u32, f32)>,
    /// Vertex labels other than 0.
    vertex_labels: BTreeMap<u64, u32>,
}

/// What a query follows: arcs labelled with one of `edges`, into vertices labelled with one of
/// `vertices` (`None`: no test).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Follow<'a> {
    pub edges: Option<&'a [u32]>,
    pub vertices: Option<&'a [u32]>,
}

impl<'a> Follow<'a> {
    /// Every arc, every vertex.
    pub const ALL: Follow<'static> = Follow {
        edges: None,
        vertices: None,
    };

    /// The arcs labelled with one of `labels` (`None`: every arc), into every vertex.
    pub fn edges(labels: Option<&'a [u32]>) -> Self {
        Self {
            edges: labels,
            vertices: None,
        }
    }

    fn keeps(&self, label: u32) -> bool {
        self.edges.is_none_or(|set| set.contains(&label))
    }
}

impl LabelledGraph {
    /// `vertices` (isolated ones included) and arcs `(src, dst, label, weight)`; arc endpoints
    /// are vertices too.
    pub fn new(
        vertices: impl IntoIterator<Item = u64>,
        arcs: impl IntoIterator<Item = (u64, u64, u32, f32)>,
    ) -> Self {
        let mut g = Self {
            vertices: vertices.into_iter().collect(),
            ..Self::default()
        };
        for (s, d, label, weight) in arcs {
            g.vertices.extend([s, d]);
            g.arcs.entry((s, d)).or_insert((label, weight));
        }
        g
    }

    pub fn contains(&self, v: u64) -> bool {
        self.vertices.contains(&v)
    }

    /// Gives `v` label `label` (0: none), adding `v` if it is new.
    pub fn set_vertex_label(&mut self, v: u64, label: u32) {
        self.vertices.insert(v);
        match label {
            0 => self.vertex_labels.remove(&v),
            _ => self.vertex_labels.insert(v, label),
        };
    }

    /// `v`'s label (0: none).
    pub fn vertex_label(&self, v: u64) -> u32 {
        self.vertex_labels.get(&v).copied().unwrap_or(0)
    }

    /// Whether `follow` enters `v` (its vertex-label test only).
    fn enters(&self, follow: Follow, v: u64) -> bool {
        follow
            .vertices
            .is_none_or(|set| set.contains(&self.vertex_label(v)))
    }

    pub fn vertices(&self) -> impl Iterator<Item = u64> + '_ {
        self.vertices.iter().copied()
    }

    /// The arcs, as given (first of each pair of ends), in (src, dst) order.
    pub fn arcs(&self) -> impl Iterator<Item = (u64, u64, u32, f32)> + '_ {
        self.arcs.iter().map(|(&(s, d), &(l, w))| (s, d, l, w))
    }

    /// For each vertex, its (neighbor, weight) pairs in `dir` over the arcs `follow` keeps,
    /// into the vertices it enters or into `start`.
    fn adjacency(
        &self,
        dir: Direction,
        follow: Follow,
        start: Option<u64>,
    ) -> HashMap<u64, Vec<(u64, f32)>> {
        let enters = |v: u64| Some(v) == start || self.enters(follow, v);
        let mut adj: HashMap<u64, Vec<(u64, f32)>> = HashMap::new();
        for (&(s, d), &(label, w)) in &self.arcs {
            if !follow.keeps(label) {
                continue;
            }
            if dir != Direction::In && enters(d) {
                adj.entry(s).or_default().push((d, w));
            }
            if dir != Direction::Out && enters(s) {
                adj.entry(d).or_default().push((s, w));
            }
        }
        adj
    }

    /// The graph that a traversal from `start` under `follow` walks, for the unweighted
    /// reference algorithms: the kept arcs between vertices it enters or `start` (isolated
    /// vertices are not in it: a start without kept arcs reaches only itself).
    pub fn filtered(&self, follow: Follow, start: u64) -> ReferenceGraph {
        let enters = |v: u64| v == start || self.enters(follow, v);
        ReferenceGraph::new(
            self.arcs
                .iter()
                .filter(|&(&(s, d), &(label, _))| follow.keeps(label) && enters(s) && enters(d))
                .map(|(&ends, _)| ends),
        )
    }

    /// Distinct neighbors of `v` over kept arcs that `follow` enters (`v` itself only if it
    /// passes), ascending; `None` for an unknown vertex.
    pub fn neighbors(&self, v: u64, dir: Direction, follow: Follow) -> Option<Vec<u64>> {
        self.contains(v).then(|| {
            let mut out: Vec<u64> = self
                .adjacency(dir, follow, None)
                .remove(&v)
                .unwrap_or_default()
                .into_iter()
                .map(|(w, _)| w)
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        })
    }

    /// Vertices first reached at each depth by a BFS over kept arcs; `None` for an unknown
    /// start.
    pub fn bfs_levels(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
        follow: Follow,
    ) -> Option<Vec<u64>> {
        if !self.contains(start) {
            return None;
        }
        let adj = self.adjacency(dir, follow, Some(start));
        let mut depth = HashMap::from([(start, 0u32)]);
        let mut queue = VecDeque::from([start]);
        let mut levels = vec![1u64];
        while let Some(v) = queue.pop_front() {
            let d = depth[&v];
            if max_depth.is_some_and(|max| d >= max) {
                continue;
            }
            for &(w, _) in adj.get(&v).into_iter().flatten() {
                if let std::collections::hash_map::Entry::Vacant(e) = depth.entry(w) {
                    e.insert(d + 1);
                    if levels.len() <= d as usize + 1 {
                        levels.push(0);
                    }
                    levels[d as usize + 1] += 1;
                    queue.push_back(w);
                }
            }
        }
        Some(levels)
    }

    /// The least total weight of a path from `source` to `target` over kept arcs (sums in
    /// `f64`): `None` if either is unknown, `Some(None)` if no path exists.
    pub fn dijkstra(
        &self,
        source: u64,
        target: u64,
        dir: Direction,
        follow: Follow,
    ) -> Option<Option<f64>> {
        if !self.contains(source) || !self.contains(target) {
            return None;
        }
        let adj = self.adjacency(dir, follow, Some(source));
        let mut dist: HashMap<u64, f64> = HashMap::from([(source, 0.0)]);
        let mut heap = BinaryHeap::from([Reverse((0f64.to_bits(), source))]);
        while let Some(Reverse((bits, v))) = heap.pop() {
            let d = f64::from_bits(bits);
            if d > dist[&v] {
                continue;
            }
            if v == target {
                return Some(Some(d));
            }
            for &(w, weight) in adj.get(&v).into_iter().flatten() {
                let nd = d + weight as f64;
                if dist.get(&w).is_none_or(|&old| nd < old) {
                    dist.insert(w, nd);
                    heap.push(Reverse((nd.to_bits(), w)));
                }
            }
        }
        Some(None)
    }

    /// The total weight of `path` if each step follows a kept arc in `dir` (the lightest one,
    /// when `Both` offers an arc each way) into a vertex `follow` enters, else `None`.
    pub fn path_weight(&self, path: &[u64], dir: Direction, follow: Follow) -> Option<f64> {
        if path.is_empty() || !self.contains(path[0]) {
            return None;
        }
        if path[1..].iter().any(|&v| !self.enters(follow, v)) {
            return None;
        }
        let arc = |s: u64, d: u64| {
            self.arcs
                .get(&(s, d))
                .filter(|(label, _)| follow.keeps(*label))
                .map(|&(_, w)| w)
        };
        let mut total = 0.0;
        for step in path.windows(2) {
            let (a, b) = (step[0], step[1]);
            let w = match dir {
                Direction::Out => arc(a, b),
                Direction::In => arc(b, a),
                Direction::Both => match (arc(a, b), arc(b, a)) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                },
            }?;
            total += w as f64;
        }
        Some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dijkstra_and_filters_on_a_small_graph() {
        // 1 -a,5-> 2 -a,5-> 3; 1 -b,1-> 3; 4 isolated.
        let g = LabelledGraph::new([4], [(1, 2, 1, 5.0), (2, 3, 1, 5.0), (1, 3, 2, 1.0)]);
        let (all, a, b) = (
            Follow::ALL,
            Follow::edges(Some(&[1])),
            Follow::edges(Some(&[2])),
        );
        assert_eq!(g.dijkstra(1, 3, Direction::Out, all), Some(Some(1.0)));
        assert_eq!(g.dijkstra(1, 3, Direction::Out, a), Some(Some(10.0)));
        assert_eq!(g.dijkstra(3, 1, Direction::Out, all), Some(None));
        assert_eq!(g.dijkstra(3, 1, Direction::Both, a), Some(Some(10.0)));
        assert_eq!(g.dijkstra(1, 9, Direction::Out, all), None);
        assert_eq!(
            g.bfs_levels(1, Direction::Out, None, a),
            Some(vec![1, 1, 1])
        );
        assert_eq!(g.bfs_levels(4, Direction::Both, None, all), Some(vec![1]));
        assert_eq!(g.neighbors(1, Direction::Out, b), Some(vec![3]));
        assert_eq!(g.path_weight(&[1, 2, 3], Direction::Out, all), Some(10.0));
        assert_eq!(g.path_weight(&[1, 2, 3], Direction::Out, b), None);
    }

    #[test]
    fn vertex_labels_bound_what_is_entered_but_not_the_start() {
        // 1 -> 2 -> 3, 1 -> 3, 3 -> 1; vertex 2 labelled 7, vertex 3 labelled 8.
        let mut g = LabelledGraph::new(
            [],
            [
                (1, 2, 0, 1.0),
                (2, 3, 0, 1.0),
                (1, 3, 0, 5.0),
                (3, 1, 0, 1.0),
            ],
        );
        g.set_vertex_label(2, 7);
        g.set_vertex_label(3, 8);
        let only = |labels: &'static [u32]| Follow {
            edges: None,
            vertices: Some(labels),
        };
        assert_eq!(
            g.dijkstra(1, 3, Direction::Out, only(&[7, 8])),
            Some(Some(2.0))
        );
        assert_eq!(
            g.dijkstra(1, 3, Direction::Out, only(&[8])),
            Some(Some(5.0))
        );
        assert_eq!(g.dijkstra(1, 3, Direction::Out, only(&[7])), Some(None));
        // The start passes whatever its label; the end must pass.
        assert_eq!(g.dijkstra(3, 1, Direction::Out, only(&[7])), Some(None));
        assert_eq!(g.dijkstra(3, 2, Direction::Out, only(&[7])), Some(None));
        assert_eq!(
            g.dijkstra(2, 3, Direction::Out, only(&[8])),
            Some(Some(1.0))
        );
        assert_eq!(g.neighbors(1, Direction::Out, only(&[8])), Some(vec![3]));
        assert_eq!(g.neighbors(3, Direction::Out, only(&[8])), Some(vec![]));
        assert_eq!(
            g.bfs_levels(1, Direction::Out, None, only(&[7])),
            Some(vec![1, 1])
        );
        assert_eq!(
            g.filtered(only(&[7]), 1)
                .distance(1, 2, Direction::Out, None),
            Some(Some(1))
        );
        assert_eq!(g.path_weight(&[1, 2, 3], Direction::Out, only(&[7])), None);
        assert_eq!(
            g.path_weight(&[2, 3], Direction::Out, only(&[8])),
            Some(1.0)
        );
    }
}

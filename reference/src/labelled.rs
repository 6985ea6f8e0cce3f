//! The reference for labelled, weighted graphs: label-filtered BFS and neighbors, and a textbook
//! Dijkstra, over plain maps.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};

use crate::{Direction, ReferenceGraph};

/// A graph whose arcs carry a label id and a weight. Arcs are a set keyed by their ends, like
/// the module's edge table: the first of several arcs with the same ends is the one kept.
#[derive(Debug, Clone, Default)]
pub struct LabelledGraph {
    vertices: BTreeSet<u64>,
    arcs: BTreeMap<(u64, u64), (u32, f32)>,
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
            arcs: BTreeMap::new(),
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

    pub fn vertices(&self) -> impl Iterator<Item = u64> + '_ {
        self.vertices.iter().copied()
    }

    /// The arcs, as given (first of each pair of ends), in (src, dst) order.
    pub fn arcs(&self) -> impl Iterator<Item = (u64, u64, u32, f32)> + '_ {
        self.arcs.iter().map(|(&(s, d), &(l, w))| (s, d, l, w))
    }

    /// Whether an arc labelled `label` is followed: every arc when `labels` is `None`.
    fn keeps(labels: Option<&[u32]>, label: u32) -> bool {
        labels.is_none_or(|set| set.contains(&label))
    }

    /// For each vertex, its (neighbor, weight) pairs in `dir` over the kept arcs.
    fn adjacency(&self, dir: Direction, labels: Option<&[u32]>) -> HashMap<u64, Vec<(u64, f32)>> {
        let mut adj: HashMap<u64, Vec<(u64, f32)>> = HashMap::new();
        for (&(s, d), &(label, w)) in &self.arcs {
            if !Self::keeps(labels, label) {
                continue;
            }
            if dir != Direction::In {
                adj.entry(s).or_default().push((d, w));
            }
            if dir != Direction::Out {
                adj.entry(d).or_default().push((s, w));
            }
        }
        adj
    }

    /// The graph of the kept arcs, for the unweighted reference algorithms (isolated vertices
    /// are not in it: a start without kept arcs reaches only itself).
    pub fn filtered(&self, labels: Option<&[u32]>) -> ReferenceGraph {
        ReferenceGraph::new(
            self.arcs
                .iter()
                .filter(|(_, (label, _))| Self::keeps(labels, *label))
                .map(|(&ends, _)| ends),
        )
    }

    /// Distinct neighbors of `v` over kept arcs, ascending; `None` for an unknown vertex.
    pub fn neighbors(&self, v: u64, dir: Direction, labels: Option<&[u32]>) -> Option<Vec<u64>> {
        self.contains(v).then(|| {
            let mut out: Vec<u64> = self
                .adjacency(dir, labels)
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
        labels: Option<&[u32]>,
    ) -> Option<Vec<u64>> {
        if !self.contains(start) {
            return None;
        }
        let adj = self.adjacency(dir, labels);
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
        labels: Option<&[u32]>,
    ) -> Option<Option<f64>> {
        if !self.contains(source) || !self.contains(target) {
            return None;
        }
        let adj = self.adjacency(dir, labels);
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
    /// when `Both` offers an arc each way), else `None`.
    pub fn path_weight(&self, path: &[u64], dir: Direction, labels: Option<&[u32]>) -> Option<f64> {
        if path.is_empty() || !self.contains(path[0]) {
            return None;
        }
        let arc = |s: u64, d: u64| {
            self.arcs
                .get(&(s, d))
                .filter(|(label, _)| Self::keeps(labels, *label))
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
        assert_eq!(g.dijkstra(1, 3, Direction::Out, None), Some(Some(1.0)));
        assert_eq!(
            g.dijkstra(1, 3, Direction::Out, Some(&[1])),
            Some(Some(10.0))
        );
        assert_eq!(g.dijkstra(3, 1, Direction::Out, None), Some(None));
        assert_eq!(
            g.dijkstra(3, 1, Direction::Both, Some(&[1])),
            Some(Some(10.0))
        );
        assert_eq!(g.dijkstra(1, 9, Direction::Out, None), None);
        assert_eq!(
            g.bfs_levels(1, Direction::Out, None, Some(&[1])),
            Some(vec![1, 1, 1])
        );
        assert_eq!(g.bfs_levels(4, Direction::Both, None, None), Some(vec![1]));
        assert_eq!(g.neighbors(1, Direction::Out, Some(&[2])), Some(vec![3]));
        assert_eq!(g.path_weight(&[1, 2, 3], Direction::Out, None), Some(10.0));
        assert_eq!(g.path_weight(&[1, 2, 3], Direction::Out, Some(&[2])), None);
    }
}

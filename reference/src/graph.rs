//! The reference graph: plain in-memory graph algorithms, written to be obviously correct
//! rather than fast (sorted ids with a hash index, two CSRs, textbook BFS).

use std::fmt;

use hashbrown::HashMap;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Direction;

/// Compressed adjacency: the neighbors of dense vertex `v` are
/// `targets[offsets[v]..offsets[v + 1]]`, sorted, duplicates kept.
struct Csr {
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl Csr {
    fn build(vertices: usize, from: &[u32], to: &[u32]) -> Csr {
        let mut offsets = vec![0usize; vertices + 1];
        for &f in from {
            offsets[f as usize + 1] += 1;
        }
        for v in 0..vertices {
            offsets[v + 1] += offsets[v];
        }
        let mut next = offsets.clone();
        let mut targets = vec![0u32; from.len()];
        for (&f, &t) in from.iter().zip(to) {
            targets[next[f as usize]] = t;
            next[f as usize] += 1;
        }
        for v in 0..vertices {
            targets[offsets[v]..offsets[v + 1]].sort_unstable();
        }
        Csr { offsets, targets }
    }

    fn row(&self, v: u32) -> &[u32] {
        &self.targets[self.offsets[v as usize]..self.offsets[v as usize + 1]]
    }
}

/// An edge list as a directed graph, for computing expected answers.
///
/// Every row is an arc `src -> dst`; duplicate rows and self-loops stay in the adjacency (they
/// cannot change distances, and the distinct-neighbor queries below collapse them).
pub struct ReferenceGraph {
    /// Distinct vertex ids, sorted; a vertex's dense index is its position here, so dense
    /// order is id order.
    ids: Vec<u64>,
    /// The inverse of `ids` (a hash map, because binary-searching 70M endpoints of a
    /// LiveJournal-sized list takes most of a minute).
    dense: HashMap<u64, u32>,
    out: Csr,
    inc: Csr,
}

impl fmt::Debug for ReferenceGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReferenceGraph")
            .field("vertices", &self.ids.len())
            .field("rows", &self.out.targets.len())
            .finish()
    }
}

const UNREACHED: u32 = u32::MAX;

/// What [`ReferenceGraph::dfs`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DfsTrace {
    /// Every vertex reached, in the order it was first discovered; the start first.
    pub preorder: Vec<u64>,
    /// The most hops from the start at which a vertex was first discovered.
    pub deepest: u32,
}

impl ReferenceGraph {
    /// The graph of `rows` (arcs `src -> dst`, in any order, repeats and self-loops allowed).
    pub fn new(rows: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let (src, dst): (Vec<u64>, Vec<u64>) = rows.into_iter().unzip();
        let mut ids: Vec<u64> = src.iter().chain(&dst).copied().collect();
        ids.sort_unstable();
        ids.dedup();
        assert!(
            ids.len() < u32::MAX as usize,
            "too many vertices for u32 indices"
        );
        let dense: HashMap<u64, u32> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let src: Vec<u32> = src.iter().map(|id| dense[id]).collect();
        let dst: Vec<u32> = dst.iter().map(|id| dense[id]).collect();
        let out = Csr::build(ids.len(), &src, &dst);
        let inc = Csr::build(ids.len(), &dst, &src);
        Self {
            ids,
            dense,
            out,
            inc,
        }
    }

    /// Distinct vertex ids, sorted.
    pub fn vertices(&self) -> &[u64] {
        &self.ids
    }

    pub fn vertex_count(&self) -> usize {
        self.ids.len()
    }

    /// Rows of the edge list, duplicates and self-loops included.
    pub fn row_count(&self) -> usize {
        self.out.targets.len()
    }

    pub fn contains(&self, v: u64) -> bool {
        self.index(v).is_some()
    }

    /// Number of distinct neighbors (see [`ReferenceGraph::neighbors`]); `None` for an unknown
    /// vertex. Duplicate rows count once, a self-loop makes the vertex its own neighbor once,
    /// and with `Both` a vertex linked both ways counts once.
    pub fn degree(&self, v: u64, dir: Direction) -> Option<u64> {
        self.neighbors(v, dir).map(|n| n.len() as u64)
    }

    /// Distinct vertices one arc away in `dir`, sorted by id; `None` for an unknown vertex.
    pub fn neighbors(&self, v: u64, dir: Direction) -> Option<Vec<u64>> {
        let v = self.index(v)?;
        let mut found: Vec<u64> = self
            .adjacent(v, dir)
            .map(|u| self.ids[u as usize])
            .collect();
        found.sort_unstable();
        found.dedup();
        Some(found)
    }

    /// How many vertices a BFS from `start` first reaches at depth 0, 1, 2, ... (depth 0 is
    /// `[1]`), stopping after `max_depth` if given. No trailing zeros: the list ends at the
    /// last non-empty level. `None` for an unknown start.
    pub fn bfs_levels(
        &self,
        start: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Option<Vec<u64>> {
        let dist = self.bfs(self.index(start)?, dir, max_depth, None);
        let mut levels = Vec::new();
        for d in dist.into_iter().filter(|&d| d != UNREACHED) {
            if levels.len() <= d as usize {
                levels.resize(d as usize + 1, 0);
            }
            levels[d as usize] += 1;
        }
        Some(levels)
    }

    /// Depth-first search from `start` following `dir`: every vertex it reaches, in preorder
    /// (the order of first discovery), and the deepest depth at which it discovered one. `None`
    /// for an unknown start.
    ///
    /// The textbook recursive DFS, run on an explicit stack: a vertex's distinct neighbors are
    /// visited in ascending id order. Without `max_depth`, a vertex is entered once. With
    /// `max_depth = Some(d)`, vertices at depth `d` are not entered further, and a vertex
    /// reached again by a shorter way than any before (fewer hops from `start` along the
    /// current stack) is entered again from there, without being listed again, so that every
    /// vertex within `d` hops is found.
    pub fn dfs(&self, start: u64, dir: Direction, max_depth: Option<u32>) -> Option<DfsTrace> {
        let start = self.index(start)?;
        // Fewest hops along a stack that entered the vertex; UNREACHED until it is found.
        let mut entered_at = vec![UNREACHED; self.ids.len()];
        let mut trace = DfsTrace {
            preorder: vec![self.ids[start as usize]],
            deepest: 0,
        };
        entered_at[start as usize] = 0;
        // One frame per vertex being entered: its depth, its sorted distinct neighbors (dense
        // order is id order) and how many of them have been tried.
        let sorted_neighbors = |v: u32| {
            let mut next: Vec<u32> = self.adjacent(v, dir).collect();
            next.sort_unstable();
            next.dedup();
            next
        };
        let mut stack = vec![(0u32, sorted_neighbors(start), 0usize)];
        while let Some((depth, next, tried)) = stack.last_mut() {
            let depth = *depth;
            if max_depth == Some(depth) || *tried == next.len() {
                stack.pop();
                continue;
            }
            let w = next[*tried];
            *tried += 1;
            let enter = match entered_at[w as usize] {
                UNREACHED => {
                    trace.preorder.push(self.ids[w as usize]);
                    trace.deepest = trace.deepest.max(depth + 1);
                    true
                }
                before => max_depth.is_some() && depth + 1 < before,
            };
            if enter {
                entered_at[w as usize] = depth + 1;
                stack.push((depth + 1, sorted_neighbors(w), 0));
            }
        }
        Some(trace)
    }

    /// Hops on a shortest path from `a` to `b` following `dir`: outer `None` if either vertex
    /// is unknown, inner `None` if `b` is unreachable (within `max_depth` hops, if given).
    pub fn distance(
        &self,
        a: u64,
        b: u64,
        dir: Direction,
        max_depth: Option<u32>,
    ) -> Option<Option<u32>> {
        let (a, b) = (self.index(a)?, self.index(b)?);
        let d = self.bfs(a, dir, max_depth, Some(b))[b as usize];
        Some((d != UNREACHED).then_some(d))
    }

    /// Whether `path` is a walk in the graph: all vertices known and each step `x -> y` an arc
    /// `x -> y` (Out), `y -> x` (In) or either (Both). A single known vertex is a path; an
    /// empty slice is not.
    pub fn is_path(&self, path: &[u64], dir: Direction) -> bool {
        let Some(dense) = path
            .iter()
            .map(|&v| self.index(v))
            .collect::<Option<Vec<u32>>>()
        else {
            return false;
        };
        !dense.is_empty()
            && dense.windows(2).all(|step| {
                let (x, y) = (step[0], step[1]);
                let out = || self.out.row(x).binary_search(&y).is_ok();
                let inc = || self.inc.row(x).binary_search(&y).is_ok();
                match dir {
                    Direction::Out => out(),
                    Direction::In => inc(),
                    Direction::Both => out() || inc(),
                }
            })
    }

    /// Up to `n` distinct vertices, uniformly at random, deterministic in `seed`.
    pub fn sample_vertices(&self, n: usize, seed: u64) -> Vec<u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut ids = self.ids.clone();
        let (picked, _) = ids.partial_shuffle(&mut rng, n);
        picked.to_vec()
    }

    /// `n` source/target pairs for shortest-path checks, deterministic in `seed`, in random
    /// order: pairs of known vertices (95%), of which up to a tenth of `n` are unreachable (when
    /// sources miss some vertices) and the rest reachable, and pairs with one unknown vertex (the
    /// rest, at least one in twenty).
    ///
    /// The pairs come from several random sources, at most a quarter of each kind from each,
    /// and a source's reachable targets are spread evenly over its BFS levels, the deepest
    /// included (one at random from each level picked): a graph of long distances (a grid, a
    /// chain) is asked its long paths as well as its short ones, from more than one source.
    ///
    /// Each source costs one full BFS, so on a LiveJournal-sized graph ask for tens, not
    /// thousands, of pairs.
    pub fn sample_pairs(&self, n: usize, dir: Direction, seed: u64) -> Vec<(u64, u64)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let known = n - n / 20;
        let want_unreachable = n / 10;
        let per_source = known.div_ceil(4).max(1);
        let per_source_missed = want_unreachable.div_ceil(4).max(1);
        let (mut reachable, mut unreachable) = (Vec::new(), Vec::new());
        let mut sources_left = 4 * n + 16;
        // Once the reachable share is found, no more unreachable pairs are looked for, and
        // reachable ones take the place of those not found (all of it where every source
        // reaches everything), so that unknown vertices stay at one pair in twenty.
        let mut share_found = false;
        loop {
            let target = match share_found {
                false => known - want_unreachable,
                true => known - unreachable.len(),
            };
            if reachable.len() >= target {
                if share_found {
                    break;
                }
                share_found = true;
                continue;
            }
            if sources_left == 0 || self.ids.is_empty() {
                break;
            }
            sources_left -= 1;
            let s = rng.gen_range(0..self.ids.len() as u32);
            let dist = self.bfs(s, dir, None, None);
            let mut by_depth: Vec<Vec<u32>> = Vec::new();
            let mut missed = Vec::new();
            for (v, &d) in dist.iter().enumerate() {
                if d == UNREACHED {
                    missed.push(v as u32);
                } else if d > 0 {
                    if by_depth.len() < d as usize {
                        by_depth.resize(d as usize, Vec::new());
                    }
                    by_depth[d as usize - 1].push(v as u32);
                }
            }
            let take = by_depth.len().min(per_source).min(target - reachable.len());
            for i in 0..take {
                let level = &by_depth[(i + 1) * by_depth.len() / take - 1];
                reachable.push((s, level[rng.gen_range(0..level.len())]));
            }
            if !share_found {
                let room = want_unreachable - unreachable.len();
                let (picked, _) = missed.partial_shuffle(&mut rng, room.min(per_source_missed));
                unreachable.extend(picked.iter().map(|&t| (s, t)));
            }
        }
        let mut pairs: Vec<(u64, u64)> = reachable
            .into_iter()
            .chain(unreachable)
            .map(|(a, b)| (self.ids[a as usize], self.ids[b as usize]))
            .collect();
        let unknown = self.unused_id();
        while pairs.len() < n {
            let known = if self.ids.is_empty() {
                unknown
            } else {
                self.ids[rng.gen_range(0..self.ids.len())]
            };
            pairs.push(if pairs.len().is_multiple_of(2) {
                (known, unknown)
            } else {
                (unknown, known)
            });
        }
        pairs.shuffle(&mut rng);
        pairs
    }

    fn index(&self, v: u64) -> Option<u32> {
        self.dense.get(&v).copied()
    }

    /// The smallest id that is not a vertex.
    fn unused_id(&self) -> u64 {
        let mut candidate = 0;
        for &id in &self.ids {
            if id != candidate {
                break;
            }
            candidate += 1;
        }
        candidate
    }

    /// Dense neighbors of `v` in `dir`, with repeats.
    fn adjacent(&self, v: u32, dir: Direction) -> impl Iterator<Item = u32> + '_ {
        let (first, second): (&[u32], &[u32]) = match dir {
            Direction::Out => (self.out.row(v), &[]),
            Direction::In => (self.inc.row(v), &[]),
            Direction::Both => (self.out.row(v), self.inc.row(v)),
        };
        first.iter().chain(second).copied()
    }

    /// Hop distances from `start` (`UNREACHED` where not reached), exploring at most
    /// `max_depth` levels and stopping early once `target` is reached.
    fn bfs(
        &self,
        start: u32,
        dir: Direction,
        max_depth: Option<u32>,
        target: Option<u32>,
    ) -> Vec<u32> {
        let mut dist = vec![UNREACHED; self.ids.len()];
        dist[start as usize] = 0;
        let mut frontier = vec![start];
        let mut depth = 0;
        while !frontier.is_empty()
            && Some(depth) != max_depth
            && target.is_none_or(|t| dist[t as usize] == UNREACHED)
        {
            depth += 1;
            let mut next = Vec::new();
            for &u in &frontier {
                for w in self.adjacent(u, dir) {
                    if dist[w as usize] == UNREACHED {
                        dist[w as usize] = depth;
                        next.push(w);
                    }
                }
            }
            frontier = next;
        }
        dist
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{Both, In, Out};

    fn graph(rows: &[(u64, u64)]) -> ReferenceGraph {
        ReferenceGraph::new(rows.iter().copied())
    }

    /// 10 -> 20 -> 30 -> 40, 10 -> 30, a duplicate 10 -> 20, a self-loop on 20, and a
    /// separate pair 100 -> 200. Ids are sparse on purpose.
    fn sample() -> ReferenceGraph {
        graph(&[
            (10, 20),
            (20, 30),
            (30, 40),
            (10, 30),
            (10, 20),
            (20, 20),
            (100, 200),
        ])
    }

    #[test]
    fn vertices_and_rows() {
        let g = sample();
        assert_eq!(g.vertices(), [10, 20, 30, 40, 100, 200]);
        assert_eq!(g.vertex_count(), 6);
        assert_eq!(g.row_count(), 7);
        assert!(g.contains(200));
        assert!(!g.contains(0));
    }

    #[test]
    fn neighbors_and_degree() {
        let g = sample();
        assert_eq!(
            g.neighbors(10, Out),
            Some(vec![20, 30]),
            "duplicate row counted once"
        );
        assert_eq!(
            g.neighbors(20, Out),
            Some(vec![20, 30]),
            "self-loop is its own neighbor"
        );
        assert_eq!(g.neighbors(20, In), Some(vec![10, 20]));
        assert_eq!(g.neighbors(20, Both), Some(vec![10, 20, 30]));
        assert_eq!(g.neighbors(40, Out), Some(vec![]));
        assert_eq!(g.neighbors(30, In), Some(vec![10, 20]));
        assert_eq!(g.neighbors(7, Out), None);
        assert_eq!(g.degree(10, Out), Some(2));
        assert_eq!(g.degree(20, Both), Some(3));
        assert_eq!(g.degree(40, Out), Some(0));
        assert_eq!(g.degree(7, Both), None);

        let mutual = graph(&[(1, 2), (2, 1)]);
        assert_eq!(
            mutual.degree(1, Both),
            Some(1),
            "linked both ways counts once"
        );
    }

    #[test]
    fn bfs_levels() {
        let g = sample();
        assert_eq!(g.bfs_levels(10, Out, None), Some(vec![1, 2, 1]));
        assert_eq!(g.bfs_levels(10, Out, Some(0)), Some(vec![1]));
        assert_eq!(g.bfs_levels(10, Out, Some(1)), Some(vec![1, 2]));
        assert_eq!(g.bfs_levels(10, Out, Some(9)), Some(vec![1, 2, 1]));
        assert_eq!(g.bfs_levels(40, Out, None), Some(vec![1]));
        assert_eq!(g.bfs_levels(40, In, None), Some(vec![1, 1, 2]));
        assert_eq!(g.bfs_levels(40, Both, None), Some(vec![1, 1, 2]));
        assert_eq!(
            g.bfs_levels(20, Both, None),
            Some(vec![1, 2, 1]),
            "self-loop ignored"
        );
        assert_eq!(g.bfs_levels(200, Both, None), Some(vec![1, 1]));
        assert_eq!(g.bfs_levels(5, Out, None), None);
    }

    #[test]
    fn dfs_preorder() {
        // 1 -> 2 -> 4, 1 -> 3 -> 4 -> 5, 1 -> 5 and a duplicate 1 -> 3, a self-loop on 2.
        let g = graph(&[
            (1, 3),
            (1, 2),
            (2, 4),
            (3, 4),
            (4, 5),
            (1, 5),
            (1, 3),
            (2, 2),
        ]);
        let dfs = |start, dir, max| g.dfs(start, dir, max).map(|t| (t.preorder, t.deepest));
        assert_eq!(dfs(1, Out, None), Some((vec![1, 2, 4, 5, 3], 3)));
        assert_eq!(dfs(5, In, None), Some((vec![5, 1, 4, 2, 3], 2)));
        assert_eq!(dfs(3, Both, None), Some((vec![3, 1, 2, 4, 5], 4)));
        assert_eq!(dfs(1, Out, Some(0)), Some((vec![1], 0)));
        // Depth 1: 2, 3 and 5 are one hop away; 4 is not.
        assert_eq!(dfs(1, Out, Some(1)), Some((vec![1, 2, 3, 5], 1)));
        // Depth 2: 1 -> 2 -> 4 lists 4 at depth 2, which stops there; 5 is found later from 1.
        assert_eq!(dfs(1, Out, Some(2)), Some((vec![1, 2, 4, 3, 5], 2)));
        assert_eq!(dfs(9, Out, None), None);
    }

    #[test]
    fn bounded_dfs_enters_again_by_a_shorter_way() {
        // 0 -> 1 -> 2 -> 3 -> 4 and a shortcut 0 -> 3. With depth 3, the path through 1 finds
        // 3 at depth 3 and stops; the shortcut enters 3 again at depth 1, which finds 4.
        let g = graph(&[(0, 1), (1, 2), (2, 3), (3, 4), (0, 3)]);
        let t = g.dfs(0, Out, Some(3)).unwrap();
        assert_eq!((t.preorder, t.deepest), (vec![0, 1, 2, 3, 4], 3));
        // Unbounded, nothing is entered twice: 4 is found below 3 at depth 4.
        let t = g.dfs(0, Out, None).unwrap();
        assert_eq!((t.preorder, t.deepest), (vec![0, 1, 2, 3, 4], 4));
        // Depth 2: 4 is within two hops only through the shortcut.
        let t = g.dfs(0, Out, Some(2)).unwrap();
        assert_eq!((t.preorder, t.deepest), (vec![0, 1, 2, 3, 4], 2));
        let t = g.dfs(0, Out, Some(1)).unwrap();
        assert_eq!((t.preorder, t.deepest), (vec![0, 1, 3], 1));
    }

    #[test]
    fn distance() {
        let g = sample();
        assert_eq!(g.distance(10, 10, Out, None), Some(Some(0)));
        assert_eq!(g.distance(10, 10, Out, Some(0)), Some(Some(0)));
        assert_eq!(g.distance(10, 40, Out, None), Some(Some(2)));
        assert_eq!(
            g.distance(10, 40, Out, Some(1)),
            Some(None),
            "beyond max depth"
        );
        assert_eq!(g.distance(10, 40, Out, Some(2)), Some(Some(2)));
        assert_eq!(g.distance(40, 10, Out, None), Some(None), "wrong direction");
        assert_eq!(g.distance(40, 10, In, None), Some(Some(2)));
        assert_eq!(g.distance(40, 10, Both, None), Some(Some(2)));
        assert_eq!(
            g.distance(10, 200, Both, None),
            Some(None),
            "other component"
        );
        assert_eq!(g.distance(10, 7, Out, None), None);
        assert_eq!(g.distance(7, 10, Out, None), None);
    }

    #[test]
    fn is_path() {
        let g = sample();
        assert!(g.is_path(&[10, 30, 40], Out));
        assert!(g.is_path(&[10, 20, 30, 40], Out));
        assert!(!g.is_path(&[40, 30, 10], Out));
        assert!(g.is_path(&[40, 30, 10], In));
        assert!(!g.is_path(&[10, 30, 40], In));
        assert!(g.is_path(&[40, 30, 20, 10], Both));
        assert!(g.is_path(&[20, 20], Out), "self-loop step");
        assert!(!g.is_path(&[30, 30], Both));
        assert!(!g.is_path(&[10, 40], Both), "not adjacent");
        assert!(g.is_path(&[100], Out));
        assert!(!g.is_path(&[7], Out), "unknown vertex");
        assert!(!g.is_path(&[], Out));
    }

    #[test]
    fn direction_parses() {
        for d in [Out, In, Both] {
            assert_eq!(d.to_string().parse::<Direction>().unwrap(), d);
        }
        assert!("sideways".parse::<Direction>().is_err());
    }

    #[test]
    fn sample_vertices_distinct_and_deterministic() {
        let g = sample();
        let a = g.sample_vertices(4, 1);
        assert_eq!(a, g.sample_vertices(4, 1));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 4);
        assert!(a.iter().all(|&v| g.contains(v)));
        assert_eq!(g.sample_vertices(100, 1).len(), 6);
    }

    #[test]
    fn sample_pairs_cover_distances_and_misses() {
        // Two directed paths 0 -> 1 -> ... -> 9 and 100 -> ... -> 104.
        let mut rows: Vec<(u64, u64)> = (0..9).map(|i| (i, i + 1)).collect();
        rows.extend((100..104).map(|i| (i, i + 1)));
        let g = graph(&rows);
        let pairs = g.sample_pairs(60, Out, 3);
        assert_eq!(pairs.len(), 60);
        assert_eq!(pairs, g.sample_pairs(60, Out, 3));
        let mut unknown = 0;
        let mut unreachable = 0;
        let mut distances = std::collections::BTreeSet::new();
        for &(a, b) in &pairs {
            match g.distance(a, b, Out, None) {
                None => unknown += 1,
                Some(None) => unreachable += 1,
                Some(Some(d)) => {
                    distances.insert(d);
                }
            }
        }
        assert_eq!(unknown, 3, "{pairs:?}");
        assert_eq!(unreachable, 6, "{pairs:?}");
        assert!(distances.len() >= 5, "{distances:?}");
    }

    /// The hop counts of `pairs` on `g` (unknown and unreachable pairs left out), and how many
    /// pairs had an unknown vertex.
    fn distances(g: &ReferenceGraph, pairs: &[(u64, u64)], dir: Direction) -> (Vec<u32>, usize) {
        let mut found = Vec::new();
        let mut unknown = 0;
        for &(a, b) in pairs {
            match g.distance(a, b, dir, None) {
                None => unknown += 1,
                Some(d) => found.extend(d),
            }
        }
        (found, unknown)
    }

    #[test]
    fn sample_pairs_ask_long_distances_from_several_sources() {
        // A 30 × 30 grid, taken both ways: distances up to 58, no pair unreachable. The pairs
        // were once the first 47 levels of one source: distances 1..=47 from one vertex, and
        // every pair not found there went to unknown vertices.
        let mut rows = Vec::new();
        for r in 0..30u64 {
            for c in 0..30u64 {
                if c + 1 < 30 {
                    rows.push((r * 30 + c, r * 30 + c + 1));
                }
                if r + 1 < 30 {
                    rows.push((r * 30 + c, (r + 1) * 30 + c));
                }
            }
        }
        let g = graph(&rows);
        let pairs = g.sample_pairs(100, Both, 7);
        let (found, unknown) = distances(&g, &pairs, Both);
        assert_eq!(unknown, 5, "{pairs:?}");
        assert_eq!(found.len(), 95);
        let sources: std::collections::BTreeSet<u64> = pairs
            .iter()
            .filter(|(a, b)| g.contains(*a) && g.contains(*b))
            .map(|&(a, _)| a)
            .collect();
        assert!(sources.len() >= 4, "{sources:?}");
        let long = found.iter().filter(|&&d| d >= 30).count();
        assert!(long >= 20, "{found:?}");
        // A directed chain of 1,000: long distances too, and its misses give unreachable pairs.
        let rows: Vec<(u64, u64)> = (0..999).map(|i| (i, i + 1)).collect();
        let g = graph(&rows);
        let pairs = g.sample_pairs(50, Out, 1);
        let (found, unknown) = distances(&g, &pairs, Out);
        assert_eq!((found.len(), unknown), (43, 2), "{found:?}");
        assert!(found.iter().any(|&d| d >= 300), "{found:?}");
    }

    #[test]
    fn sample_pairs_on_edgeless_or_empty_graphs() {
        assert_eq!(ReferenceGraph::new([]).sample_pairs(3, Out, 0).len(), 3);
        let g = graph(&[(5, 5)]);
        let pairs = g.sample_pairs(10, Both, 0);
        assert_eq!(pairs.len(), 10);
        assert!(pairs.iter().all(|&(a, b)| !g.contains(a) || !g.contains(b)));
    }
}

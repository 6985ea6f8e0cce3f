//! Landmarks for goal-directed weighted searches (ALT: A*, landmarks and the triangle
//! inequality; Goldberg and Harrelson, 2005).
//!
//! A few *landmark* vertices are chosen, and the weighted distance from each to every vertex is
//! computed once, over the graph's arcs taken both ways. By the triangle inequality, for any
//! landmark `L`, `|d(L, a) - d(L, b)|` is a lower bound on the weight of every path between `a`
//! and `b`: undirected distances are at most directed ones, and a filter that follows fewer arcs
//! only lengthens paths. So one table serves every direction and every filter. [`WeightedPath`]
//! uses these bounds to steer both of its searches towards the other end, settling far fewer
//! vertices on road-like graphs.
//!
//! The bounds hold as long as no path has become lighter since the table was computed: removing
//! arcs keeps them valid, adding an arc or a vertex does not. [`AdjacencyGraph`] therefore drops
//! its table when it gains an arc or a slot.
//!
//! They hold for exact distances. The table's are `f64` sums, exact only while every distance is
//! a multiple of the smallest power of two in the arcs' weights that `f64` can hold: with
//! weights far apart (2^53 and 0.5, say) a rounded distance can make a bound exceed the true
//! weight, and the search then stops at a heavier path. A build whose distances grow past
//! [`exact_below`] gives no table: the searches go unguided, as exact as their own sums.
//!
//! [`WeightedPath`]: crate::WeightedPath
//! [`AdjacencyGraph`]: crate::AdjacencyGraph

use crate::{DenseSource, Direction, Progress};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Landmarks a table holds: each costs 8 bytes per slot and one Dijkstra over the graph to
/// build (the farthest-first choice costs one more).
pub const LANDMARKS: usize = 8;

/// Each slot's weighted distance from each landmark, arcs taken both ways; infinite when the
/// slot cannot be reached from the landmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Landmarks {
    /// `dist[slot * LANDMARKS + i]`: the distance of `slot` from landmark `i`. Landmarks not
    /// chosen (a graph with fewer vertices than [`LANDMARKS`]) are 0 for every slot, which bounds
    /// nothing.
    dist: Vec<f64>,
}

impl Landmarks {
    /// The distances of `slot` from the landmarks, if the table covers it.
    #[inline]
    pub fn row(&self, slot: u32) -> Option<&[f64]> {
        let at = slot as usize * LANDMARKS;
        self.dist.get(at..at + LANDMARKS)
    }

    /// Slots the table covers.
    pub fn slots(&self) -> usize {
        self.dist.len() / LANDMARKS
    }

    pub fn heap_bytes(&self) -> usize {
        8 * self.dist.capacity()
    }
}

/// The bound below which sums of weights whose lowest set bit is `2^lowest_bit` are exact in
/// `f64`, with a bit to spare for the halves of differences that searches take (see
/// `dijkstra::Guide`): every multiple of `2^lowest_bit` up to `2^(53 + lowest_bit)` is an `f64`.
fn exact_below(lowest_bit: i32) -> f64 {
    2f64.powi(52 + lowest_bit)
}

/// The exponent of the lowest set bit of a positive, finite `w`: `w` is an odd multiple of
/// `2^lowest_bit(w)`.
fn lowest_bit(w: f64) -> i32 {
    let bits = w.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    match exponent {
        // Subnormal: `fraction × 2^-1074`.
        0 => -1074 + fraction.trailing_zeros() as i32,
        _ => exponent - 1075 + (fraction | 1 << 52).trailing_zeros() as i32,
    }
}

/// A lower bound on the weight of every path between the vertices whose landmark rows are `a`
/// and `b`: infinite when a landmark reaches one and not the other (no path joins them).
#[inline]
pub fn lower_bound(a: &[f64], b: &[f64]) -> f64 {
    let mut bound = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        // Both unreachable from this landmark: `inf - inf` is NaN, which bounds nothing.
        let gap = (x - y).abs();
        if gap > bound {
            bound = gap;
        }
    }
    bound
}

/// Builds a [`Landmarks`] table in bounded steps: a Dijkstra from the vertex of highest degree
/// finds the vertex farthest from it, which becomes the first landmark; each next landmark is
/// the vertex farthest from those chosen so far (within their reach), and each landmark's
/// Dijkstra fills its column.
#[derive(Debug)]
pub struct LandmarkBuilder {
    dist: Vec<f64>,
    /// Landmarks whose column is filled.
    chosen: usize,
    /// The Dijkstra under way: its distances (this round's), its queue (distance bits, slot),
    /// and whether it is the seeding round, whose distances only choose the first landmark.
    round: Vec<f64>,
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    seeding: bool,
    done: bool,
    /// The lowest set bit of the weights read so far (`i32::MAX`: none above zero).
    lowest_bit: i32,
    /// A distance reached [`exact_below`]: the table may hold rounded sums (see the module doc).
    rounded: bool,
}

impl LandmarkBuilder {
    /// A build for `graph` as it is now (its slots and arcs); an empty graph gets an empty table.
    pub fn new<S: DenseSource + ?Sized>(graph: &S) -> Self {
        let slots = graph.slots();
        let mut builder = Self {
            dist: vec![0.0; slots * LANDMARKS],
            chosen: 0,
            round: Vec::new(),
            heap: BinaryHeap::new(),
            seeding: true,
            done: false,
            lowest_bit: i32::MAX,
            rounded: false,
        };
        let degree = |s: u32| {
            let [a, b] = graph.rows(s, Direction::Both);
            a.len() + b.len()
        };
        match (0..slots as u32)
            .max_by_key(|&s| degree(s))
            .filter(|&s| degree(s) > 0)
        {
            Some(seed) => builder.begin_round(seed, slots),
            None => builder.done = true,
        }
        builder
    }

    fn begin_round(&mut self, root: u32, slots: usize) {
        self.round.clear();
        self.round.resize(slots, f64::INFINITY);
        self.round[root as usize] = 0.0;
        self.heap.clear();
        self.heap.push(Reverse((0.0f64.to_bits(), root)));
    }

    /// Advances the build by about `budget` units (a vertex settled, an arc read); at least one
    /// per call. `graph` must be the graph the build began on, unchanged.
    pub fn step<S: DenseSource + ?Sized>(&mut self, graph: &S, budget: u64) -> Progress {
        let mut spent = 0u64;
        while !self.done {
            if spent >= budget.max(1) {
                return Progress::Suspended;
            }
            let Some(Reverse((bits, s))) = self.heap.pop() else {
                self.end_round();
                continue;
            };
            let d = f64::from_bits(bits);
            if d > self.round[s as usize] {
                continue;
            }
            spent += 1;
            let rows = graph.rows(s, Direction::Both);
            let attrs = graph.attrs(s, Direction::Both);
            for (row, attrs) in rows.into_iter().zip(attrs) {
                spent += row.len() as u64;
                for (i, &t) in row.iter().enumerate() {
                    let w = attrs.get(i).map_or(1.0, |a| f64::from(a.weight));
                    // Every round reads the same arcs (the seed's component): one is enough.
                    if self.seeding && w > 0.0 {
                        self.lowest_bit = self.lowest_bit.min(lowest_bit(w));
                    }
                    let through = d + w;
                    if through < self.round[t as usize] {
                        self.round[t as usize] = through;
                        self.heap.push(Reverse((through.to_bits(), t)));
                    }
                }
            }
        }
        Progress::Done
    }

    /// A Dijkstra has finished: its distances fill the next column (unless it was the seeding
    /// round), then the vertex farthest from every landmark so far roots the next round.
    fn end_round(&mut self) {
        let farthest = self
            .round
            .iter()
            .copied()
            .filter(|d| d.is_finite())
            .fold(0.0, f64::max);
        if self.lowest_bit != i32::MAX && farthest >= exact_below(self.lowest_bit) {
            self.rounded = true;
            self.done = true;
            return;
        }
        if !self.seeding {
            let i = self.chosen;
            for (slot, &d) in self.round.iter().enumerate() {
                self.dist[slot * LANDMARKS + i] = d;
            }
            self.chosen += 1;
        }
        self.seeding = false;
        if self.chosen == LANDMARKS {
            self.done = true;
            return;
        }
        // Farthest from the landmarks chosen (from the seed, before the first), among the
        // vertices they reach; none beyond distance 0 left: every vertex is a landmark.
        let reach = |slot: usize| match self.chosen {
            0 => self.round[slot],
            n => self.dist[slot * LANDMARKS..slot * LANDMARKS + n]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min),
        };
        let next = (0..self.round.len())
            .map(|slot| (reach(slot), slot))
            .filter(|&(d, _)| d.is_finite() && d > 0.0)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match next {
            Some((_, slot)) => self.begin_round(slot as u32, self.round.len()),
            None => self.done = true,
        }
    }

    /// The table, or `None` if the graph's distances cannot all be summed exactly (see the
    /// module doc); panics if the build has not finished.
    pub fn finish(self) -> Option<Landmarks> {
        assert!(self.done, "landmark build has not finished");
        (!self.rounded).then_some(Landmarks { dist: self.dist })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_set_bit_of_a_weight() {
        assert_eq!(lowest_bit(1.0), 0);
        assert_eq!(lowest_bit(12.0), 2);
        assert_eq!(lowest_bit(1.5), -1);
        assert_eq!(lowest_bit(2f64.powi(53)), 53);
        assert_eq!(lowest_bit(f64::from(0.1f32)), -27);
        assert_eq!(lowest_bit(f64::from(f32::from_bits(1))), -149);
        assert_eq!(lowest_bit(f64::from_bits(1)), -1074);
        // Sums of such weights stay exact below the bound: 2^52 halves and units.
        let below = exact_below(-1);
        assert_eq!(below, 2f64.powi(51));
        assert_eq!((below - 0.5) + 0.5, below);
    }
}

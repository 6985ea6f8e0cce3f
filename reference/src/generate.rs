//! Seeded synthetic graphs: stand-ins for the SNAP graphs and a successor ring.
//!
//! The stand-ins are Chung-Lu graphs with power-law expected degrees at the real graphs'
//! sizes, so that benchmarks are reproducible without downloading SNAP data: the same seed
//! always gives the same edge list (the random streams come only from `rand_chacha`, whose
//! output is stable across versions). Like SNAP's `ungraph` files, each undirected edge is
//! listed once as `(smaller id, larger id)`, with no self-loops and no duplicates.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// Successor ring: vertices `0..n`, vertex `i` has arcs to `i+1`, `i+2`, `i+3` (mod n), listed
/// in order. Every vertex has out- and in-degree 3 and distances are easy to predict, which
/// algorithm-level benchmarks and tests rely on. Needs `n >= 4` to avoid self-loops.
pub fn ring(n: u64) -> Vec<(u64, u64)> {
    assert!(n >= 4, "a ring needs at least 4 vertices, got {n}");
    (0..n)
        .flat_map(|i| (1..=3).map(move |step| (i, (i + step) % n)))
        .collect()
}

const STREAM_GRID: u64 = 4;
const STREAM_LABELS: u64 = 5;

/// A road-network-like `n` × `n` grid: vertex `r * n + c + 1` (ids from 1) is joined to its right
/// and lower neighbors by one edge each, listed once as `(smaller id, larger id)` (query it in
/// direction both), `2 n (n - 1)` edges, with a seeded travel time uniform in `1..=100` (whole
/// numbers as `f32`, so that sums are exact and ties occur). Rows come in (src, dst) order.
pub fn grid(n: u64, seed: u64) -> Vec<(u64, u64, f32)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(STREAM_GRID);
    let mut out = Vec::with_capacity((2 * n * n.saturating_sub(1)) as usize);
    for r in 0..n {
        for c in 0..n {
            let v = r * n + c + 1;
            if c + 1 < n {
                out.push((v, v + 1, (rng.next_u64() % 100 + 1) as f32));
            }
            if r + 1 < n {
                out.push((v, v + n, (rng.next_u64() % 100 + 1) as f32));
            }
        }
    }
    out
}

/// One label index in `0..k` per row, seeded (uniform, independent of the rows themselves).
pub fn random_labels(rows: usize, k: u32, seed: u64) -> Vec<u32> {
    assert!(k >= 1, "random labels need at least one label");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(STREAM_LABELS);
    (0..rows)
        .map(|_| (rng.next_u64() % k as u64) as u32)
        .collect()
}

/// Parameters of a Chung-Lu stand-in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChungLu {
    /// Vertices (ids with degree >= 1) to aim for; the presets land within 0.1%.
    pub vertices: u64,
    /// Exact number of distinct undirected edges produced.
    pub edges: u64,
    /// Power-law exponent of the expected-degree distribution.
    pub exponent: f64,
    /// Expected degrees are capped here, which bounds the maximum degree like the real graph's.
    pub max_weight: f64,
    /// Ids are drawn without repetition from `0..ceil(vertices * id_spread)` (at least as many
    /// as there are weight slots); 1.0 gives (nearly) contiguous ids.
    pub id_spread: f64,
}

/// ego-Facebook: 4,039 vertices, 88,234 edges (mean degree 43.7), max degree 1,045. The cap is
/// above that because a hub draws some partners twice and the repeats are dropped: the
/// realized maximum comes out near 1,050.
pub const FACEBOOK: ChungLu = ChungLu {
    vertices: 4_039,
    edges: 88_234,
    exponent: 2.5,
    max_weight: 1_400.0,
    id_spread: 1.0,
};

/// com-DBLP: 317,080 vertices, 1,049,866 edges (mean degree 6.6), max degree 343, ids spread
/// over a range about 1.34 times the vertex count. Realized: ~317.1K vertices, max degree
/// ~390 (the cap bounds expected, not realized, degree), max id ~428K.
pub const DBLP: ChungLu = ChungLu {
    vertices: 317_080,
    edges: 1_049_866,
    exponent: 3.0,
    max_weight: 343.0,
    id_spread: 1.35,
};

/// com-LiveJournal: 3,997,962 vertices, 34,681,189 edges (mean degree 17.35), max degree
/// 14,815. Realized: ~3.998M vertices (within 0.01%), max degree ~14.85K.
pub const LIVEJOURNAL: ChungLu = ChungLu {
    vertices: 3_997_962,
    edges: 34_681_189,
    exponent: 2.65,
    max_weight: 14_815.0,
    id_spread: 1.0,
};

/// Random streams of one seed, kept apart so each step's output does not depend on how many
/// numbers another step drew.
const STREAM_IDS: u64 = 1;
const STREAM_EDGES: u64 = 2;
const STREAM_SHUFFLE: u64 = 3;

/// Generates a Chung-Lu graph: endpoints are drawn independently with probability
/// proportional to their weight (alias table), self-loops are rejected, duplicates are removed
/// by sorting normalized pairs, and the shortfall is drawn again until exactly `p.edges`
/// distinct edges exist. Weight slots get ids through a seeded injective map and the final
/// edge order is shuffled, so neither ids nor file order reveal degree.
///
/// At LiveJournal size: about 7 s and 1 GiB peak on a busy 2-core VM, most of it drawing
/// 69M endpoints and sorting 35M pairs.
pub fn chung_lu(p: &ChungLu, seed: u64) -> Vec<(u64, u64)> {
    let weights = calibrated_weights(p);
    let slots = weights.len();
    // Not a bound on how long the top-up takes, but it would never finish without it.
    assert!(
        p.edges <= (slots as u64).saturating_mul(slots as u64 - 1) / 2,
        "more edges than vertex pairs"
    );
    let rng = |stream| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        rng
    };

    let id_range = ((p.vertices as f64 * p.id_spread).ceil() as usize).max(slots);
    assert!(id_range <= u32::MAX as usize, "ids must fit in u32");
    let mut ids: Vec<u32> = (0..id_range as u32).collect();
    partial_shuffle(&mut ids, slots, &mut rng(STREAM_IDS));
    ids.truncate(slots);

    let mut pairs = distinct_pairs(
        &AliasTable::new(&weights),
        p.edges as usize,
        &mut rng(STREAM_EDGES),
    );
    partial_shuffle(&mut pairs, p.edges as usize, &mut rng(STREAM_SHUFFLE));

    pairs
        .into_iter()
        .map(|pair| {
            let (a, b) = (ids[(pair >> 32) as usize], ids[pair as u32 as usize]);
            (u64::from(a.min(b)), u64::from(a.max(b)))
        })
        .collect()
}

/// `count` distinct undirected pairs of slots, each packed as `min << 32 | max`, in no
/// particular order. The first draw is deduplicated by sorting; the shortfall (under 0.1% at
/// LiveJournal size) is drawn again and kept only where new.
fn distinct_pairs(table: &AliasTable, count: usize, rng: &mut ChaCha8Rng) -> Vec<u64> {
    let draw = |n: usize, rng: &mut ChaCha8Rng| {
        let mut batch = Vec::with_capacity(n);
        while batch.len() < n {
            let (a, b) = (table.sample(rng), table.sample(rng));
            if a != b {
                batch.push(u64::from(a.min(b)) << 32 | u64::from(a.max(b)));
            }
        }
        batch.sort_unstable();
        batch.dedup();
        batch
    };
    let mut pairs = draw(count, rng);
    let mut extra = Vec::new();
    while pairs.len() + extra.len() < count {
        let mut batch = draw(count - pairs.len() - extra.len(), rng);
        batch.retain(|pair| pairs.binary_search(pair).is_err());
        extra = merge_distinct(&extra, &batch);
    }
    pairs.extend(extra);
    pairs
}

/// Union of two sorted, duplicate-free lists.
fn merge_distinct(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        out.push(x.min(y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Expected degrees `min(cap, c * (i+1)^(-1/(exponent-1)))` summing to `2 * edges`, over as
/// many slots as it takes for the expected number of slots with degree >= 1 (Poisson
/// approximation, `1 - e^-w`) to match `p.vertices`.
fn calibrated_weights(p: &ChungLu) -> Vec<f64> {
    let mut slots = p.vertices as usize;
    for _ in 0..10 {
        let weights = capped_weights(p, slots);
        let expected: f64 = weights.iter().map(|w| 1.0 - (-w).exp()).sum();
        let next = (slots as f64 * p.vertices as f64 / expected).round() as usize;
        if next == slots {
            return weights;
        }
        slots = next;
    }
    capped_weights(p, slots)
}

fn capped_weights(p: &ChungLu, slots: usize) -> Vec<f64> {
    let alpha = 1.0 / (p.exponent - 1.0);
    let raw: Vec<f64> = (0..slots).map(|i| ((i + 1) as f64).powf(-alpha)).collect();
    let total = 2.0 * p.edges as f64;
    assert!(
        p.max_weight * slots as f64 > total,
        "weight cap too low for the edge count"
    );
    // `raw` is decreasing, so the capped weights are a prefix; growing the prefix raises the
    // scale, which can only cap more, so this settles after a few rounds.
    let mut capped = 0;
    let mut rest: f64 = raw.iter().sum();
    let scale = loop {
        let scale = (total - p.max_weight * capped as f64) / rest;
        let before = capped;
        while capped < slots && scale * raw[capped] >= p.max_weight {
            rest -= raw[capped];
            capped += 1;
        }
        if capped == before {
            break scale;
        }
    };
    raw.iter().map(|r| (scale * r).min(p.max_weight)).collect()
}

/// Walker/Vose alias table: O(1) weighted sampling from one random u64.
struct AliasTable {
    /// Per slot: keep the slot if the draw's fraction is below the threshold (out of 2^64),
    /// else take the alias.
    entries: Vec<(u64, u32)>,
}

impl AliasTable {
    fn new(weights: &[f64]) -> Self {
        let n = weights.len();
        assert!(n > 0 && n <= u32::MAX as usize);
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) =
            (0..n as u32).partition(|&i| scaled[i as usize] < 1.0);
        let mut entries: Vec<(u64, u32)> = (0..n as u32).map(|i| (u64::MAX, i)).collect();
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            entries[s as usize] = ((scaled[s as usize] * 2f64.powi(64)) as u64, l);
            scaled[l as usize] -= 1.0 - scaled[s as usize];
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left is 1.0 up to rounding: it keeps itself (alias = itself).
        Self { entries }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> u32 {
        let wide = u128::from(rng.next_u64()) * self.entries.len() as u128;
        let (threshold, alias) = self.entries[(wide >> 64) as usize];
        if (wide as u64) < threshold {
            (wide >> 64) as u32
        } else {
            alias
        }
    }
}

/// Fisher-Yates on the first `k` positions: afterwards `v[..k]` is a uniform random
/// arrangement of `k` distinct elements of `v`. Indices come from `next_u64` by
/// multiply-shift (bias below `len / 2^64`), which keeps the output tied to the ChaCha stream
/// alone rather than to `rand`'s sampling algorithms.
fn partial_shuffle<T>(v: &mut [T], k: usize, rng: &mut ChaCha8Rng) {
    let len = v.len();
    for i in 0..k.min(len) {
        let j = i + ((u128::from(rng.next_u64()) * (len - i) as u128) >> 64) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_4_neighbour_seeded_and_weighted_1_to_100() {
        let g = grid(4, 7);
        assert_eq!(g.len(), 2 * 4 * 3);
        assert_eq!(g, grid(4, 7), "same seed, same grid");
        assert_ne!(g, grid(4, 8), "another seed, other weights");
        for &(s, d, w) in &g {
            assert!(
                s < d && (d - s == 1 || d - s == 4),
                "({s}, {d}) is not a grid step"
            );
            assert!(d - s != 1 || s % 4 != 0, "({s}, {d}) wraps a row");
            assert!((1.0..=100.0).contains(&w) && w.fract() == 0.0, "weight {w}");
        }
        let (vertices, mean, max) = shape(&g.iter().map(|&(s, d, _)| (s, d)).collect::<Vec<_>>());
        assert_eq!((vertices, max), (16, 4));
        assert!((mean - 3.0).abs() < 1e-9);
        let big = grid(100, 1);
        let mean_w = big.iter().map(|e| e.2 as f64).sum::<f64>() / big.len() as f64;
        assert!((mean_w - 50.5).abs() < 2.0, "mean weight {mean_w}");
        let labels = random_labels(10_000, 4, 3);
        assert_eq!(labels, random_labels(10_000, 4, 3));
        for k in 0..4 {
            let share = labels.iter().filter(|&&l| l == k).count();
            assert!((2_300..2_700).contains(&share), "label {k}: {share}");
        }
    }

    /// Distinct endpoints, mean and largest (row) degree.
    fn shape(edges: &[(u64, u64)]) -> (u64, f64, u64) {
        let mut degree = std::collections::HashMap::<u64, u64>::new();
        for &(a, b) in edges {
            *degree.entry(a).or_default() += 1;
            *degree.entry(b).or_default() += 1;
        }
        let vertices = degree.len() as u64;
        let mean = 2.0 * edges.len() as f64 / vertices as f64;
        (vertices, mean, degree.values().copied().max().unwrap_or(0))
    }

    /// Sizes, no self-loops, no duplicates, one orientation; returns [`shape`].
    fn check_simple(edges: &[(u64, u64)], p: &ChungLu) -> (u64, f64, u64) {
        assert_eq!(edges.len() as u64, p.edges);
        assert!(
            edges.iter().all(|(s, d)| s < d),
            "self-loop or unnormalized"
        );
        let mut pairs = edges.to_vec();
        pairs.sort_unstable();
        assert!(pairs.windows(2).all(|w| w[0] != w[1]), "duplicate edge");
        assert_ne!(pairs, edges, "edge order is not shuffled");
        let s = shape(edges);
        let off = (s.0 as f64 / p.vertices as f64 - 1.0).abs();
        assert!(off < 0.02, "{s:?} vs {} target vertices", p.vertices);
        s
    }

    #[test]
    fn facebook_shape() {
        let (_, mean, max) = check_simple(&chung_lu(&FACEBOOK, 7), &FACEBOOK);
        assert!((mean - 43.7).abs() < 1.0, "{mean}");
        assert!(max as f64 > 10.0 * mean, "{max}");
        assert!(max <= 1_100, "{max}");
    }

    #[test]
    fn dblp_shape_and_sparse_ids() {
        let edges = chung_lu(&DBLP, 7);
        let (vertices, mean, max) = check_simple(&edges, &DBLP);
        assert!((mean - 6.6).abs() < 0.3, "{mean}");
        assert!(max as f64 > 20.0 * mean, "{max}");
        let max_id = edges.iter().map(|&(a, b)| a.max(b)).max().unwrap();
        assert!(max_id > vertices + vertices / 4, "max id {max_id}");
        assert!(max_id < (vertices as f64 * 1.45) as u64, "max id {max_id}");
    }

    #[test]
    #[ignore = "LiveJournal size: several seconds and ~1 GiB; run with --ignored in release"]
    fn livejournal_shape() {
        let start = std::time::Instant::now();
        let edges = chung_lu(&LIVEJOURNAL, 7);
        let elapsed = start.elapsed();
        let (_, mean, max) = check_simple(&edges, &LIVEJOURNAL);
        eprintln!("lj: mean degree {mean}, max {max}, in {elapsed:.2?}");
        assert!((mean - 17.35).abs() < 0.5, "{mean}");
        assert!((10_000..=15_000).contains(&max), "{max}");
    }

    #[test]
    fn deterministic_per_seed() {
        let a = chung_lu(&FACEBOOK, 1);
        assert_eq!(a, chung_lu(&FACEBOOK, 1));
        let b = chung_lu(&FACEBOOK, 2);
        assert_ne!(a, b);
    }

    #[test]
    fn ring_structure() {
        let edges = ring(10);
        assert_eq!(edges.len(), 30);
        for v in 0..10 {
            let mut out: Vec<u64> = edges.iter().filter(|e| e.0 == v).map(|e| e.1).collect();
            out.sort_unstable();
            let mut expected: Vec<u64> = (1..=3).map(|k| (v + k) % 10).collect();
            expected.sort_unstable();
            assert_eq!(out, expected);
            assert_eq!(edges.iter().filter(|e| e.1 == v).count(), 3);
        }
    }

    #[test]
    fn alias_table_matches_weights() {
        let table = AliasTable::new(&[1.0, 2.0, 3.0, 0.0, 4.0]);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut counts = [0u32; 5];
        for _ in 0..100_000 {
            counts[table.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(counts[3], 0);
        for (i, w) in [1.0, 2.0, 3.0, 0.0, 4.0].into_iter().enumerate() {
            let share = f64::from(counts[i]) / 100_000.0;
            assert!((share - w / 10.0).abs() < 0.01, "slot {i}: {share}");
        }
    }

    #[test]
    fn merge_distinct_unions() {
        assert_eq!(merge_distinct(&[1, 3, 5], &[2, 3, 6]), [1, 2, 3, 5, 6]);
        assert_eq!(merge_distinct(&[], &[2]), [2]);
        assert_eq!(merge_distinct(&[4], &[]), [4]);
    }
}

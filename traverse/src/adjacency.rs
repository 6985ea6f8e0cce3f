use crate::{Direction, ListCursor, NeighborSource};
use hashbrown::HashMap;

/// An in-memory graph in compressed sparse row form, for both directions.
///
/// Used by native tests and by the Stage-1 baseline, which builds one from a full edge scan.
/// Duplicate arcs are kept as given (the module's tables never hold any).
#[derive(Debug, Clone, Default)]
pub struct AdjacencyGraph {
    index: HashMap<u64, u32>,
    out: Csr,
    inc: Csr,
}

#[derive(Debug, Clone, Default)]
struct Csr {
    offsets: Vec<u32>,
    targets: Vec<u64>,
}

impl Csr {
    fn build(n: usize, arcs: impl Iterator<Item = (u32, u64)> + Clone) -> Self {
        let mut offsets = vec![0u32; n + 1];
        for (from, _) in arcs.clone() {
            offsets[from as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u64; offsets[n] as usize];
        for (from, to) in arcs {
            targets[fill[from as usize] as usize] = to;
            fill[from as usize] += 1;
        }
        Self { offsets, targets }
    }

    fn row(&self, i: u32) -> &[u64] {
        let i = i as usize;
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

impl AdjacencyGraph {
    /// Builds the graph from vertex ids (isolated vertices included) and `(src, dst)` arcs.
    /// Endpoints of arcs are added as vertices when missing.
    pub fn new(vertices: impl IntoIterator<Item = u64>, arcs: &[(u64, u64)]) -> Self {
        let mut index: HashMap<u64, u32> = HashMap::new();
        let mut add = |v: u64| {
            let next = index.len() as u32;
            *index.entry(v).or_insert(next)
        };
        for v in vertices {
            add(v);
        }
        // Rows are indexed densely; entries hold vertex ids so `neighbors` needs no lookup.
        let dense: Vec<(u32, u32)> = arcs.iter().map(|&(s, d)| (add(s), add(d))).collect();
        let n = index.len();
        let out = Csr::build(n, dense.iter().zip(arcs).map(|(&(s, _), &(_, d))| (s, d)));
        let inc = Csr::build(n, dense.iter().zip(arcs).map(|(&(_, d), &(s, _))| (d, s)));
        Self { index, out, inc }
    }

    pub fn vertex_count(&self) -> usize {
        self.index.len()
    }

    pub fn arc_count(&self) -> usize {
        self.out.targets.len()
    }
}

impl NeighborSource for AdjacencyGraph {
    /// `cursor.next` is an offset into the vertex's row.
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<u64>,
    ) -> bool {
        let Some(&i) = self.index.get(&v) else {
            return true;
        };
        let mut room = max.max(1);
        loop {
            let csr = if cursor.incoming {
                &self.inc
            } else {
                &self.out
            };
            let rest = &csr.row(i)[cursor.next as usize..];
            let page = &rest[..rest.len().min(room)];
            out.extend_from_slice(page);
            cursor.next += page.len() as u64;
            room -= page.len();
            if page.len() < rest.len() {
                return false;
            }
            if !cursor.next_half(dir) {
                return true;
            }
            if room == 0 {
                return false;
            }
        }
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        self.index.get(&v).map_or(0, |&i| {
            let out = self.out.row(i).len() as u64;
            let inc = self.inc.row(i).len() as u64;
            match dir {
                Direction::Out => out,
                Direction::In => inc,
                Direction::Both => out + inc,
            }
        })
    }

    fn contains(&self, v: u64) -> bool {
        self.index.contains_key(&v)
    }
}

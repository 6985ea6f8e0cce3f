//! The ends of the module's edge rows. Edges are stored with their ends packed in one key per
//! direction (`edge.fwd = src << 32 | dst` when both ends are below 2^32, else `wide_edge.fwd =
//! src << 64 | dst`), so a vertex's out-edges are one key range of each table.

use crate::module_bindings::{Edge, WideEdge};

impl Edge {
    pub fn src(&self) -> u64 {
        self.fwd >> 32
    }

    pub fn dst(&self) -> u64 {
        self.fwd & u64::from(u32::MAX)
    }
}

impl WideEdge {
    pub fn src(&self) -> u64 {
        (self.fwd >> 64) as u64
    }

    pub fn dst(&self) -> u64 {
        self.fwd as u64
    }
}

/// The queries that select vertex `v`'s out-edges, one per edge table.
pub fn out_edge_queries(v: u64) -> Vec<String> {
    let mut queries = Vec::new();
    if v < 1 << 32 {
        let (lo, hi) = (v << 32, v << 32 | u64::from(u32::MAX));
        queries.push(format!(
            "SELECT * FROM edge WHERE fwd >= {lo} AND fwd <= {hi}"
        ));
    }
    let (lo, hi) = (
        u128::from(v) << 64,
        u128::from(v) << 64 | u128::from(u64::MAX),
    );
    queries.push(format!(
        "SELECT * FROM wide_edge WHERE fwd >= {lo} AND fwd <= {hi}"
    ));
    queries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_unpack() {
        let e = Edge {
            fwd: 7 << 32 | 9,
            rev: 9 << 32 | 7,
            label: 0,
            weight: 1.0,
        };
        assert_eq!((e.src(), e.dst()), (7, 9));
        let w = WideEdge {
            fwd: u128::from(u64::MAX) << 64 | 3,
            rev: 3 << 64 | u128::from(u64::MAX),
            label: 0,
            weight: 1.0,
        };
        assert_eq!((w.src(), w.dst()), (u64::MAX, 3));
        assert_eq!(
            out_edge_queries(1 << 40).len(),
            1,
            "no narrow edge leaves a wide id"
        );
    }
}

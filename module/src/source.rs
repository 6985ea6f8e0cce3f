//! The graph as the traversal operator sees it inside a transaction: index scans, never a table
//! scan.

use crate::schema::{edge, vertex};
use graph_traverse::{Direction, NeighborSource};
use spacetimedb::Local;

/// Out-neighbors through the (src, dst) index, in-neighbors through the dst index, degrees and
/// existence through the vertex primary key.
pub struct IndexSource<'a> {
    pub db: &'a Local,
}

impl NeighborSource for IndexSource<'_> {
    fn neighbors(&self, v: u64, dir: Direction, out: &mut Vec<u64>) {
        if dir != Direction::In {
            out.extend(self.db.edge().by_src_dst().filter(v).map(|e| e.dst));
        }
        if dir != Direction::Out {
            out.extend(self.db.edge().dst().filter(v).map(|e| e.src));
        }
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        self.db.vertex().id().find(v).map_or(0, |row| match dir {
            Direction::Out => row.out_degree as u64,
            Direction::In => row.in_degree as u64,
            Direction::Both => row.out_degree as u64 + row.in_degree as u64,
        })
    }

    fn contains(&self, v: u64) -> bool {
        self.db.vertex().id().find(v).is_some()
    }
}

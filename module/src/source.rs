//! The graph as the traversal operator sees it inside a transaction: index scans, never a table
//! scan.

use crate::schema::{edge, vertex};
use graph_traverse::{Direction, ListCursor, NeighborSource};
use spacetimedb::Local;

/// Out-neighbors through the (src, dst) index, in-neighbors through the (dst, src) index,
/// degrees and existence through the vertex primary key.
///
/// Both edge indexes order a vertex's arcs by neighbor id, so a page of a long list resumes at
/// the smallest neighbor id not yet read (`ListCursor::next`) with a range scan: edges are a
/// set, so no arc is read twice or skipped.
pub struct IndexSource<'a> {
    pub db: &'a Local,
}

impl NeighborSource for IndexSource<'_> {
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<u64>,
    ) -> bool {
        let mut room = max.max(1);
        loop {
            let from = cursor.next..;
            let before = out.len();
            if cursor.incoming {
                let arcs = self.db.edge().by_dst_src().filter((v, from));
                out.extend(arcs.map(|e| e.src).take(room));
            } else {
                let arcs = self.db.edge().by_src_dst().filter((v, from));
                out.extend(arcs.map(|e| e.dst).take(room));
            }
            let read = out.len() - before;
            if read == room {
                // Perhaps more: resume after the last neighbor read.
                match out.last().and_then(|last| last.checked_add(1)) {
                    Some(next) => {
                        cursor.next = next;
                        return false;
                    }
                    None if cursor.next_half(dir) => return false,
                    None => return true,
                }
            }
            if !cursor.next_half(dir) {
                return true;
            }
            room -= read;
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

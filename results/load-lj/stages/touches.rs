//! Counts the vertex rows an LJ-sized load touches: graph-bench's `lj` graph (seed 42), sorted
//! by (src, dst) and cut into calls of each size given (default 200,000) as graph-bench sends
//! it; per size, the touches (distinct vertices per call, summed), how many of them create a
//! vertex and how many update one. Run by run.sh.
use std::collections::HashSet;

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a call size")).collect();
    let sizes = if sizes.is_empty() { vec![200_000] } else { sizes };
    let mut arcs = graph_reference::generate::chung_lu(&graph_reference::generate::LIVEJOURNAL, 42);
    arcs.sort_unstable();
    arcs.dedup();
    for size in sizes {
        let (mut calls, mut as_src, mut as_dst, mut touches) = (0, 0, 0, 0);
        let mut seen = HashSet::new();
        let mut created = 0;
        for call in arcs.chunks(size) {
            let src: HashSet<u64> = call.iter().map(|a| a.0).collect();
            let dst: HashSet<u64> = call.iter().map(|a| a.1).collect();
            for &v in src.union(&dst) {
                touches += 1;
                created += seen.insert(v) as usize;
            }
            (calls, as_src, as_dst) = (calls + 1, as_src + src.len(), as_dst + dst.len());
        }
        println!(
            "{} arcs in {calls} calls of {size}: {touches} vertex touches ({as_src} as a source, \
             {as_dst} as a target), {created} create a vertex, {} update one",
            arcs.len(),
            touches - created
        );
    }
}

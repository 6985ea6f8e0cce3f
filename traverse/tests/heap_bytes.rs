//! `AdjacencyGraph::heap_bytes` against the allocator: a counting global allocator measures the
//! bytes a graph holds, which must equal what the method reports, through building, changes,
//! and a compaction (half done and finished).

// A global allocator implements the unsafe `GlobalAlloc` trait; it only forwards to `System`.
#![allow(unsafe_code)]

use graph_traverse::{AdjacencyBuilder, AdjacencyGraph, ArcAttrs, Change, Progress};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the bytes live in allocations (the sizes asked for, as `heap_bytes` counts them), per
/// thread: the test harness's own thread allocates at moments of its own, which a global count
/// would mix into the graph's (it did, in about half of the runs). The graph is built, changed
/// and dropped on the test's thread alone. A constant-initialized `Cell` needs no destructor, so
/// reaching it never allocates.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    LIVE.with(|live| live.set(live.get() + bytes));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.with(Cell::get)
}

/// The one test of this file, so that no other test allocates meanwhile.
#[test]
fn heap_bytes_is_what_the_allocator_holds() {
    let arcs = graph_reference::generate::ring(3_000);
    let changes: Vec<Change> = (0..3_000u64)
        .flat_map(|i| {
            [
                Change::InsertArc {
                    src: i,
                    dst: 10_000 + i % 700,
                    attrs: ArcAttrs::DEFAULT,
                },
                Change::RemoveArc {
                    src: i,
                    dst: (i + 2) % 3_000,
                    attrs: ArcAttrs::DEFAULT,
                },
            ]
        })
        .chain((0..300).map(|i| Change::RemoveVertex(i * 7)))
        .chain((0..100).map(|i| Change::InsertVertex(50_000 + i)))
        .collect();

    let before = live();
    let mut g = AdjacencyGraph::new([7_777], &arcs);
    let held = |_: &AdjacencyGraph| live() - before;
    assert_eq!(held(&g), g.heap_bytes() as isize, "built at once");
    let base = g.heap_bytes();
    assert!(base > 2 * 4 * arcs.len(), "{base}");

    g.apply(changes.iter().copied());
    assert_eq!(held(&g), g.heap_bytes() as isize, "with an overlay");
    assert!(g.heap_bytes() > base + 4 * g.overlay_stats().entries);

    for _ in 0..20 {
        g.compact_step(1_000);
    }
    assert!(g.overlay_stats().compacting);
    // A labelled arc: every row gets an attribute column, the compaction's fresh rows too.
    let attrs = ArcAttrs {
        label: 3,
        weight: 2.5,
    };
    g.apply([Change::InsertArc {
        src: 1,
        dst: 2_000,
        attrs,
    }]);
    assert!(g.is_attributed());
    assert_eq!(
        held(&g),
        g.heap_bytes() as isize,
        "mid-compaction, attributed"
    );

    g.compact();
    assert_eq!(held(&g), g.heap_bytes() as isize, "compacted");
    drop(g);
    assert_eq!(live(), before, "dropped");

    let mut sorted = arcs.clone();
    sorted.sort_unstable();
    let before = live();
    let mut b = AdjacencyBuilder::with_capacity(3_000, 9_000);
    b.add_arcs(sorted.iter().copied()).unwrap();
    while b.finish_step(5_000) == Progress::Suspended {}
    let g = b.into_graph();
    assert_eq!(live() - before, g.heap_bytes() as isize, "built in steps");
}

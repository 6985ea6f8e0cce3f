//! `engine-costs`: bytes per row and ns per insert of each part of an edge table (row pages,
//! pointer map, each index), for several candidate layouts, measured with SpacetimeDB 2.14's own
//! `Table`, `TableIndex` and `PointerMap` (crate `spacetimedb-table`) rather than estimated.
//!
//! Memory is jemalloc's `stats.allocated` (the allocator graph-host runs on) read after flushing
//! this thread's cache and advancing the stats epoch: live bytes in jemalloc size classes, so
//! B-tree node slack is included but allocator fragmentation and retained pages are not.
//!
//! Each layout is built in two orders:
//! - steady state: indexes exist before the rows arrive, as in a module's committed table. One
//!   table per stage (rows only, + pointer map, + each index in turn); a component's cost is the
//!   difference between consecutive stages.
//! - build order: rows (with the pointer map) first, then each index built from the rows
//!   (`Table::insert_index`), measuring each step. B-tree nodes can fill differently.
//!
//! Rows go in through `Table::insert` with a `ProductValue`, the path the commit merge takes.

use std::{hint::black_box, sync::Arc, time::Instant};

use clap::{Parser, ValueEnum};
use graph_reference::generate::{DBLP, LIVEJOURNAL, chung_lu};
use serde_json::json;
use spacetimedb_lib::db::auth::{StAccess, StTableType};
use spacetimedb_memory_usage::MemoryUsage;
use spacetimedb_primitives::{ColId, ColList, IndexId, TableId};
use spacetimedb_sats::{AlgebraicType, AlgebraicValue, ProductValue};
use spacetimedb_schema::{
    def::BTreeAlgorithm,
    identifier::Identifier,
    schema::{ColumnSchema, TableSchema},
    table_name::TableName,
};
use spacetimedb_table::{
    blob_store::NullBlobStore, indexes::SquashedOffset, page_pool::PagePool, table::Table,
};

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// An arc (src, dst).
type Pair = (u64, u64);
/// A vertex id with its out- and in-degree.
type Vertex = (u64, u32, u32);

/// The project's loader sends at most this many arcs per call (client `MAX_BATCH_EDGES`).
const BATCH: usize = 200_000;

#[derive(Parser, Debug)]
#[command(about = "Bytes per row and ns per insert of each part of candidate edge-table layouts")]
struct Args {
    /// Chung-Lu stand-in to load (graph-reference presets).
    #[arg(long, value_enum, default_value_t = Graph::Dblp)]
    graph: Graph,
    /// Keep only the first N generated pairs (the generator's order is shuffled).
    #[arg(long)]
    edges: Option<usize>,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// `one`: each undirected pair once, as generated (what `graph load` and graph-bench send);
    /// `two`: both arcs of each pair.
    #[arg(long, value_enum, default_value_t = Arcs::One)]
    arcs: Arcs,
    /// `global`: all arcs sorted by (src, dst), then cut into 200,000-arc batches (the project's
    /// order); `batch`: generator order cut into batches, each batch sorted; `global-rev`: as
    /// `global`, then each batch inserted in (dst, src) order; `global-gaps`: as `global`, then
    /// in each run of 12 arcs the 1st, 3rd, 5th, 7th, 9th, 11th and 12th first, the rest after
    /// (the leaves that ascending inserts leave 6 of 11 full are then filled: see `gaps_last`).
    #[arg(long, value_enum, default_value_t = Order::Global)]
    order: Order,
    /// Runs per layout; timings and bytes are medians.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Only these layouts (comma-separated names); default all.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also print the results as one JSON object after the Markdown.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Graph {
    Dblp,
    Lj,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Arcs {
    One,
    Two,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Order {
    Global,
    Batch,
    GlobalRev,
    GlobalGaps,
}

/// `sorted` reordered so that ascending inserts into std's `BTreeMap` (a unique index of
/// 2.14) fill its leaves: an append to a full leaf splits it 6 | 5 and no later append
/// returns to the left half, so the keys between every other one are held back. Of each run
/// of 12 keys, the 7 at even offsets and offset 11 go first: each left half is then 6 of them
/// with the 7th as its separator, and the 5 held back (odd offsets below 11) fill it to 11.
fn gaps_last<T: Copy>(sorted: &[T]) -> Vec<T> {
    let first = |i: &usize| (i % 12).is_multiple_of(2) || i % 12 == 11;
    let (mut order, rest): (Vec<usize>, Vec<usize>) = (0..sorted.len()).partition(first);
    order.extend(rest);
    order.into_iter().map(|i| sorted[i]).collect()
}

/// One candidate table: its columns, its btree indexes (in the order they are added) and how a
/// row is made from the `i`-th input item.
struct Layout<'a> {
    name: &'static str,
    columns: Vec<(&'static str, AlgebraicType)>,
    /// (label, columns, unique)
    indexes: Vec<(&'static str, Vec<u16>, bool)>,
    len: usize,
    row: Box<dyn Fn(usize) -> ProductValue + 'a>,
}

/// Medians over runs of one layout's measurements (bytes are totals, ns are per row).
#[derive(Default, Clone)]
struct Measured {
    /// Steady state: stage 0 rows only, 1 + pointer map, 2.. + each index.
    stage_bytes: Vec<f64>,
    stage_ns: Vec<f64>,
    /// Build order: change in bytes and build time of each index added to the filled table.
    build_bytes: Vec<f64>,
    build_ns: Vec<f64>,
    build_total: f64,
    /// Engine counters of the full steady-state table.
    num_rows: u64,
    bytes_used_by_rows: u64,
    bytes_used_by_index_keys: u64,
    heap_usage: u64,
}

/// Live bytes according to jemalloc, exact for this single-threaded program.
fn allocated() -> u64 {
    flush_thread_cache();
    tikv_jemalloc_ctl::epoch::advance().expect("jemalloc epoch");
    tikv_jemalloc_ctl::stats::allocated::read().expect("jemalloc stats.allocated") as u64
}

/// Returns this thread's cached free blocks to their arenas: jemalloc counts cached blocks as
/// allocated, which would otherwise blur a reading by up to a few MB.
#[allow(unsafe_code)]
fn flush_thread_cache() {
    // SAFETY: `thread.tcache.flush` takes no input and gives no output, so every pointer is null
    // and the name is NUL-terminated.
    let rc = unsafe {
        tikv_jemalloc_sys::mallctl(
            c"thread.tcache.flush".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    assert_eq!(rc, 0, "mallctl thread.tcache.flush failed");
}

/// A user table with `layout`'s columns and no indexes or constraints in its schema: indexes are
/// added to the `Table` directly, which is all the storage layer looks at.
fn schema(layout: &Layout) -> Arc<TableSchema> {
    let columns = layout
        .columns
        .iter()
        .enumerate()
        .map(|(i, (name, ty))| ColumnSchema {
            table_id: TableId::SENTINEL,
            col_pos: ColId(i as u16),
            col_name: Identifier::for_test(name),
            col_type: ty.clone(),
            alias: None,
        });
    Arc::new(TableSchema::new(
        TableId::SENTINEL,
        TableName::new(Identifier::for_test(layout.name.replace(['+', '-'], "_"))),
        None,
        columns.collect(),
        vec![],
        vec![],
        vec![],
        StTableType::User,
        StAccess::Public,
        None,
        None,
        false,
        None,
        None,
    ))
}

/// Adds index `i` of `layout` to `table`, built from the rows already there.
#[allow(unsafe_code)]
fn add_index(table: &mut Table, layout: &Layout, i: usize) {
    let (_, cols, unique) = &layout.indexes[i];
    let columns: ColList = cols.iter().map(|&c| ColId(c)).collect();
    let index = table
        .new_index(&BTreeAlgorithm { columns }.into(), *unique)
        .expect("index columns exist");
    // SAFETY: `index` was made by `table.new_index`, so it has the table's row type.
    unsafe { table.insert_index(&NullBlobStore, IndexId(i as u32), index) }
        .expect("no unique violations");
}

/// Inserts every row of `layout` in order; returns ns per row.
fn fill(table: &mut Table, pool: &PagePool, layout: &Layout) -> f64 {
    let start = Instant::now();
    for i in 0..layout.len {
        let row = (layout.row)(i);
        black_box(
            table
                .insert(pool, &mut NullBlobStore, &row)
                .expect("distinct rows"),
        );
    }
    start.elapsed().as_nanos() as f64 / layout.len as f64
}

/// One run: every steady-state stage, and the build order on the stage-1 table.
fn run(layout: &Layout) -> Measured {
    let schema = schema(layout);
    let mut m = Measured::default();
    for stage in 0..=layout.indexes.len() + 1 {
        let pool = PagePool::new(None);
        let before = allocated();
        let mut table = Table::new(schema.clone(), SquashedOffset::COMMITTED_STATE);
        if stage == 0 {
            // Measurement device only: the engine keeps a pointer map until a unique index exists.
            drop(table.take_pointer_map());
        }
        for i in 0..stage.saturating_sub(1) {
            add_index(&mut table, layout, i);
        }
        let ns = fill(&mut table, &pool, layout);
        m.stage_bytes.push((allocated() - before) as f64);
        m.stage_ns.push(ns);
        if stage == 1 {
            for i in 0..layout.indexes.len() {
                let (mem, start) = (allocated(), Instant::now());
                add_index(&mut table, layout, i);
                m.build_ns
                    .push(start.elapsed().as_nanos() as f64 / layout.len as f64);
                m.build_bytes.push(allocated() as f64 - mem as f64);
            }
            m.build_total = (allocated() - before) as f64;
        }
        if stage == layout.indexes.len() + 1 {
            m.num_rows = table.num_rows();
            m.bytes_used_by_rows = table.bytes_used_by_rows();
            m.bytes_used_by_index_keys = table.bytes_used_by_index_keys();
            m.heap_usage = table.heap_usage() as u64;
        }
        drop(table);
    }
    m
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Element-wise medians over runs.
fn medians(runs: &[Measured]) -> Measured {
    let col = |f: &dyn Fn(&Measured) -> &Vec<f64>| -> Vec<f64> {
        (0..f(&runs[0]).len())
            .map(|i| median(runs.iter().map(|r| f(r)[i]).collect()))
            .collect()
    };
    Measured {
        stage_bytes: col(&|r| &r.stage_bytes),
        stage_ns: col(&|r| &r.stage_ns),
        build_bytes: col(&|r| &r.build_bytes),
        build_ns: col(&|r| &r.build_ns),
        build_total: median(runs.iter().map(|r| r.build_total).collect()),
        ..runs[0].clone()
    }
}

/// The arcs in load order, and every vertex (first-appearance order) with its degrees.
fn input(args: &Args) -> (Vec<Pair>, Vec<Vertex>) {
    let preset = match args.graph {
        Graph::Dblp => &DBLP,
        Graph::Lj => &LIVEJOURNAL,
    };
    let mut pairs = chung_lu(preset, args.seed);
    if let Some(n) = args.edges {
        pairs.truncate(n);
    }
    if let Arcs::Two = args.arcs {
        pairs.extend(pairs.clone().into_iter().map(|(a, b)| (b, a)));
    }
    match args.order {
        Order::Global => pairs.sort_unstable(),
        Order::Batch => pairs.chunks_mut(BATCH).for_each(|b| b.sort_unstable()),
        Order::GlobalRev => {
            pairs.sort_unstable();
            pairs
                .chunks_mut(BATCH)
                .for_each(|b| b.sort_unstable_by_key(|&(s, d)| (d, s)));
        }
        Order::GlobalGaps => {
            pairs.sort_unstable();
            pairs = pairs.chunks(BATCH).flat_map(gaps_last).collect();
        }
    }
    let mut at = std::collections::HashMap::new();
    let mut vertices: Vec<Vertex> = Vec::new();
    for &(s, d) in &pairs {
        for (v, out) in [(s, 1), (d, 0)] {
            let i = *at.entry(v).or_insert_with(|| {
                vertices.push((v, 0, 0));
                vertices.len() - 1
            });
            vertices[i].1 += out;
            vertices[i].2 += 1 - out;
        }
    }
    (pairs, vertices)
}

fn layouts<'a>(arcs: &'a [Pair], vertices: &'a [Vertex]) -> Vec<Layout<'a>> {
    use AlgebraicType::{U32, U64, U128};
    let (label, weight) = ("label", AlgebraicType::F32);
    // Label and weight are constant: rows are fixed-size, so their values change no size.
    let pv = |vals: Vec<AlgebraicValue>| ProductValue::from_iter(vals);
    let tail = || [AlgebraicValue::U32(0), AlgebraicValue::F32(1.0f32.into())];
    let p64 = |(s, d): Pair| ((s << 32) | d, (d << 32) | s);
    vec![
        Layout {
            name: "current",
            columns: vec![
                ("src", U64),
                ("dst", U64),
                (label, U32),
                ("weight", weight.clone()),
            ],
            indexes: vec![
                ("btree [src,dst]", vec![0, 1], false),
                ("btree [dst,src]", vec![1, 0], false),
            ],
            len: arcs.len(),
            row: Box::new(move |i| {
                let (s, d) = arcs[i];
                let [l, w] = tail();
                pv(vec![s.into(), d.into(), l, w])
            }),
        },
        Layout {
            name: "packed64",
            columns: vec![
                ("fwd", U64),
                ("rev", U64),
                (label, U32),
                ("weight", weight.clone()),
            ],
            indexes: vec![
                ("unique fwd u64", vec![0], true),
                ("unique rev u64", vec![1], true),
            ],
            len: arcs.len(),
            row: Box::new(move |i| {
                let (f, r) = p64(arcs[i]);
                let [l, w] = tail();
                pv(vec![f.into(), r.into(), l, w])
            }),
        },
        Layout {
            name: "packed128",
            columns: vec![
                ("fwd", U128),
                ("rev", U128),
                (label, U32),
                ("weight", weight.clone()),
            ],
            indexes: vec![
                ("unique fwd u128", vec![0], true),
                ("unique rev u128", vec![1], true),
            ],
            len: arcs.len(),
            row: Box::new(move |i| {
                let (s, d) = (arcs[i].0 as u128, arcs[i].1 as u128);
                let [l, w] = tail();
                pv(vec![((s << 64) | d).into(), ((d << 64) | s).into(), l, w])
            }),
        },
        Layout {
            name: "packed64+ends",
            columns: vec![
                ("src", U32),
                ("dst", U32),
                ("fwd", U64),
                ("rev", U64),
                (label, U32),
                ("weight", weight),
            ],
            indexes: vec![
                ("unique fwd u64", vec![2], true),
                ("unique rev u64", vec![3], true),
            ],
            len: arcs.len(),
            row: Box::new(move |i| {
                let (s, d) = arcs[i];
                let (f, r) = p64(arcs[i]);
                let [l, w] = tail();
                pv(vec![
                    (s as u32).into(),
                    (d as u32).into(),
                    f.into(),
                    r.into(),
                    l,
                    w,
                ])
            }),
        },
        Layout {
            name: "vertex",
            columns: vec![
                ("id", U64),
                ("out_degree", U32),
                ("in_degree", U32),
                (label, U32),
            ],
            indexes: vec![("unique id u64 (pk)", vec![0], true)],
            len: vertices.len(),
            row: Box::new(move |i| {
                let (v, o, n) = vertices[i];
                pv(vec![v.into(), o.into(), n.into(), 0u32.into()])
            }),
        },
    ]
}

/// One layout's Markdown rows: per component, build order then steady state, per row. The
/// first unique index drops the pointer map, so its own cost is its stage's change plus the
/// pointer map's, and the pointer map is then not part of the total.
fn report(layout: &Layout, m: &Measured, out: &mut String) {
    let n = layout.len as f64;
    let b = |x: f64| format!("{:.1}", x / n);
    let t = |x: f64| format!("{x:.0}");
    let (sb, sn) = (&m.stage_bytes, &m.stage_ns);
    let mut line = |what: &str, cells: [String; 4]| {
        let [bb, bn, xb, xn] = cells;
        out.push_str(&format!(
            "| {} | {what} | {bb} | {bn} | {xb} | {xn} |\n",
            layout.name
        ));
    };
    line("rows (pages)", [b(sb[0]), t(sn[0]), b(sb[0]), t(sn[0])]);
    let (pm, pm_ns) = (sb[1] - sb[0], sn[1] - sn[0]);
    let first_unique = layout.indexes.iter().position(|(_, _, unique)| *unique);
    let pm_note = if first_unique.is_some() {
        "pointer map (dropped by the first unique index)"
    } else {
        "pointer map"
    };
    line(pm_note, [b(pm), t(pm_ns), b(pm), t(pm_ns)]);
    for (i, (label, _, _)) in layout.indexes.iter().enumerate() {
        // The stage that dropped the pointer map: add back what the drop saved.
        let (back, back_ns) = if Some(i) == first_unique {
            (pm, pm_ns)
        } else {
            (0.0, 0.0)
        };
        line(
            label,
            [
                b(m.build_bytes[i] + back),
                t(m.build_ns[i]),
                b(sb[i + 2] - sb[i + 1] + back),
                t(sn[i + 2] - sn[i + 1] + back_ns),
            ],
        );
    }
    let last = sb.len() - 1;
    let build_ns = sn[1] + m.build_ns.iter().sum::<f64>();
    line(
        "**total**",
        [
            format!("**{}**", b(m.build_total)),
            t(build_ns),
            format!("**{}**", b(sb[last])),
            t(sn[last]),
        ],
    );
}

fn main() {
    let args = Args::parse();
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let start = Instant::now();
    let (arcs, vertices) = input(&args);
    assert!(
        arcs.iter().all(|&(s, d)| s < 1 << 32 && d < 1 << 32),
        "packed64 needs ids below 2^32"
    );
    eprintln!(
        "{} arcs, {} vertices ({:.1} s)",
        arcs.len(),
        vertices.len(),
        start.elapsed().as_secs_f64()
    );
    let layouts: Vec<Layout> = layouts(&arcs, &vertices)
        .into_iter()
        .filter(|l| args.only.is_empty() || args.only.iter().any(|o| o == l.name))
        .collect();

    let mut results = Vec::new();
    for layout in &layouts {
        let runs: Vec<Measured> = (0..args.runs)
            .map(|r| {
                let t = Instant::now();
                let m = run(layout);
                eprintln!(
                    "{} run {r}: {:.1} s",
                    layout.name,
                    t.elapsed().as_secs_f64()
                );
                m
            })
            .collect();
        results.push(medians(&runs));
    }

    let mut md = format!(
        "`{command}`\n\n{:?} (seed {}), {} arcs ({:?} per pair, {:?} order, batches of {BATCH}), {} vertices; \
         median of {} runs on a shared, noisy 2-core machine.\n\n\
         Bytes: jemalloc `stats.allocated` delta (size-class rounded, no fragmentation) per row. \
         ns: per inserted row via `Table::insert(&ProductValue)` (includes building the ProductValue); \
         build-order index rows: `Table::insert_index` time per row.\n\n\
         | layout | component | build order B/row | build order ns/row | steady state B/row | steady state ns/row |\n\
         |---|---|---:|---:|---:|---:|\n",
        args.graph,
        args.seed,
        arcs.len(),
        args.arcs,
        args.order,
        vertices.len(),
        args.runs
    );
    for (layout, m) in layouts.iter().zip(&results) {
        report(layout, m, &mut md);
    }
    md.push_str(
        "\nEngine counters of the full steady-state table, per row, beside the allocator:\n\n\
         | layout | num_rows | bytes_used_by_rows | bytes_used_by_index_keys | Table::heap_usage() | allocated |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for (layout, m) in layouts.iter().zip(&results) {
        let n = m.num_rows as f64;
        md.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |\n",
            layout.name,
            m.num_rows,
            m.bytes_used_by_rows as f64 / n,
            m.bytes_used_by_index_keys as f64 / n,
            m.heap_usage as f64 / n,
            m.stage_bytes.last().unwrap() / n,
        ));
    }
    print!("{md}");

    if args.json {
        let layouts_json: Vec<_> = layouts
            .iter()
            .zip(&results)
            .map(|(l, m)| {
                let stages: Vec<String> = ["rows".to_string(), "+pointer map".to_string()]
                    .into_iter()
                    .chain(l.indexes.iter().map(|(s, _, _)| format!("+{s}")))
                    .collect();
                json!({
                    "layout": l.name,
                    "rows": l.len,
                    "stages": stages,
                    "steady_bytes": m.stage_bytes,
                    "steady_ns_per_row": m.stage_ns,
                    "build_index_bytes": m.build_bytes,
                    "build_index_ns_per_row": m.build_ns,
                    "build_total_bytes": m.build_total,
                    "num_rows": m.num_rows,
                    "bytes_used_by_rows": m.bytes_used_by_rows,
                    "bytes_used_by_index_keys": m.bytes_used_by_index_keys,
                    "heap_usage": m.heap_usage,
                })
            })
            .collect();
        let doc = json!({ "command": command, "arcs": arcs.len(), "vertices": vertices.len(),
            "runs": args.runs, "layouts": layouts_json });
        println!(
            "\n```json\n{}\n```",
            serde_json::to_string_pretty(&doc).unwrap()
        );
    }
}

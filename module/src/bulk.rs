//! Bulk loading: edges first, vertex rows once at the end.
//!
//! Outside a bulk load every `add_edges` call keeps the rows of the vertices it touches exact
//! (created if missing, degrees shifted). A vertex's in-arcs are spread over a load's calls, so on
//! the LiveJournal-sized graph that is 33M row reads and 29M row updates, half of the load
//! (`results/load-lj/stages/`). Between `begin_bulk_load` and the end of `finish_bulk_load`,
//! `add_edges` and `add_labelled_edges` store the edges and the graph-wide counts only; then
//! `finish_bulk_load` writes each vertex's row once, with its degrees counted from the edge
//! indexes, one window of vertex ids per call (one short transaction each), from the lowest end
//! the load added. The windows are sized for about the rows asked for, by the rows the last one
//! read and by marks each add leaves of where its arcs end, so that no call reads far more:
//! a window that grew over a gap in the ids would otherwise take all the rows past it at once.
//! The marks stay until the load ends, since an add below the windows finished sends
//! finishing back over them.
//!
//! Meanwhile queries are refused with [`GraphError::BulkLoadUnderWay`] (they read vertex rows
//! and degrees that are not written yet), removals are refused, and `graph_meta.vertices` counts
//! only the vertices that have rows. Adds may go on while finishing: an add below the windows
//! already finished moves finishing back to it. `clear_graph` ends a bulk load.

use crate::access::check_writer;
use crate::changelog::Changes;
use crate::edges;
use crate::rows;
use crate::schema::{
    BulkLoad, BulkMark, Vertex, bulk_load, bulk_mark, meta, ranged, save_meta, vertex,
};
use crate::types::GraphError;
use spacetimedb::{Local, ReducerContext, Table, reducer};

/// Rows (arcs counted at both ends, and vertex rows) one `finish_bulk_load` call reads unless
/// told otherwise: one transaction of about 40 ms on the 2-core machine of
/// `results/load-bulk/`.
pub const DEFAULT_FINISH_ROWS: u32 = 100_000;
/// Most rows a `finish_bulk_load` call may be asked to read.
pub const MAX_FINISH_ROWS: u32 = 2_000_000;

/// The bulk load under way, if any.
pub fn under_way(db: &Local) -> Option<BulkLoad> {
    db.bulk_load().id().find(0)
}

/// How a user ends a bulk load, for the errors that refuse what waits for its end.
pub const HOW_TO_FINISH: &str = "`graph load` ends it; re-run it to resume an interrupted load, \
     or run `graph finish-load`";

/// `Ok` unless a bulk load is under way: queries call this first.
pub fn ready(db: &Local) -> Result<(), GraphError> {
    match under_way(db) {
        Some(b) => Err(GraphError::BulkLoadUnderWay(b.began_at)),
        None => Ok(()),
    }
}

/// `Ok` unless a bulk load is under way, which takes no removals (their degree shifts would
/// apply to rows that finishing has not written yet).
pub fn refuse_removals(db: &Local, what: &str) -> Result<(), String> {
    match under_way(db) {
        Some(b) => Err(format!(
            "{what} waits: a bulk load (begun at version {}) takes only additions until \
             finish_bulk_load ends it ({HOW_TO_FINISH})",
            b.began_at
        )),
        None => Ok(()),
    }
}

/// Starts a bulk load (see the module docs); one under way already is left as it is, so that
/// a resumed load may call this again. Meant for a load into an empty or small graph:
/// finishing reads every edge of the graph twice.
#[reducer]
pub fn begin_bulk_load(ctx: &ReducerContext) -> Result<(), String> {
    check_writer(ctx)?;
    if under_way(&ctx.db).is_some() {
        return Ok(());
    }
    let m = meta(&ctx.db);
    // Every row is exact until an add changes one: the first add moves finishing back to its
    // lowest end, so that finishing starts where the load's ids do (ids offset far from 0 are
    // common, and a window sized for ids spread from 0 would take all of them at once).
    ctx.db.bulk_load().insert(BulkLoad {
        id: 0,
        began_at: m.version + 1,
        finished_below: u64::MAX,
        window: 0,
    });
    // Snapshots and pinned traversals cannot follow a bulk load row by row.
    save_meta(ctx, m, Changes::reset());
    Ok(())
}

/// Records that a bulk load's call added arcs whose smallest end is `lowest_end`: the rows
/// finishing wrote from there on may be wrong now, so finishing goes back to it.
pub fn after_adds(ctx: &ReducerContext, load: BulkLoad, lowest_end: u64) {
    if lowest_end < load.finished_below {
        rows::update(
            &ctx.db.bulk_load().id(),
            &BulkLoad {
                finished_below: lowest_end,
                ..load
            },
        );
    }
}

/// Writes the rows of the next window of vertex ids, about `rows` rows read (0: the default),
/// and ends the bulk load after the last window. Without a bulk load under way it does
/// nothing. Call it until `graph_info` shows no bulk load.
#[reducer]
pub fn finish_bulk_load(ctx: &ReducerContext, rows: u32) -> Result<(), String> {
    check_writer(ctx)?;
    if rows > MAX_FINISH_ROWS {
        return Err(format!("rows {rows} exceeds {MAX_FINISH_ROWS}"));
    }
    let Some(load) = under_way(&ctx.db) else {
        return Ok(());
    };
    let target = u64::from(if rows == 0 { DEFAULT_FINISH_ROWS } else { rows });
    let mut m = meta(&ctx.db);
    let lo = load.finished_below;
    let window = match load.window {
        0 => first_window(
            m.max_vertex_id.saturating_sub(lo),
            2 * m.edges + m.vertices,
            target,
        ),
        w => w,
    };
    let hi = lo.saturating_add(window - 1).min(m.max_vertex_id.max(lo));
    let hi = marked_end(&ctx.db, lo, hi, 2 * target);
    let (created, read) = write_rows(&ctx.db, lo, hi);
    m.vertices += created;
    if hi >= m.max_vertex_id {
        ctx.db.bulk_load().id().delete(0);
        // Kept until now: an add below the windows finished sends finishing back over them.
        ctx.db.bulk_mark().clear();
        // Every vertex has its row now.
        m.vertices = rows::count(&ctx.db.vertex());
    } else {
        rows::update(
            &ctx.db.bulk_load().id(),
            &BulkLoad {
                finished_below: hi + 1,
                window: next_window(hi - lo + 1, read, target),
                ..load
            },
        );
    }
    save_meta(ctx, m, Changes::reset());
    Ok(())
}

/// Marks [`mark_ends`] leaves at most per list: with 200,000 arcs per call, a mark per 6,250
/// sources and one per 6,250 targets.
const MARKS_PER_LIST: usize = 32;
/// Ends a mark stands for at least (but the last of a list): a load of many small calls
/// leaves a mark per thousand ends, not per few.
const MIN_MARK_ENDS: usize = 1_024;

/// Records where the `ends` (sorted: the sources, or the targets, of the arcs a bulk-load call
/// added) lie, for [`marked_end`]: the list cut in pieces of [`mark_spacing`] ends, a mark at
/// each piece's first id counting its ends (which all lie at or after that id); added to the
/// marks already there.
pub fn mark_ends(db: &Local, ends: &[u64]) {
    debug_assert!(ends.is_sorted());
    let marks = db.bulk_mark();
    for piece in ends.chunks(mark_spacing(ends.len())) {
        let (at, more) = (piece[0], piece.len() as u64);
        match marks.at().find(at) {
            Some(m) => rows::update(
                &marks.at(),
                &BulkMark {
                    ends: m.ends + more,
                    ..m
                },
            ),
            None => rows::insert(&marks, &BulkMark { at, ends: more }),
        }
    }
}

/// Ends per mark in a list of `len`: a [`MARKS_PER_LIST`]th of it, at least [`MIN_MARK_ENDS`].
fn mark_spacing(len: usize) -> usize {
    len.div_ceil(MARKS_PER_LIST).max(MIN_MARK_ENDS)
}

/// Where the window `lo..=hi` ends if it stops before the marks in it count more than `most`
/// ends: at `hi`, or before the first mark that passes `most` (a mark's ends lie at or after
/// it); a first mark at `lo` itself is cut part way to the next one, as if its ends were spread
/// evenly up to there. The ends of a mark before `lo` may lie in the window too, so a window
/// may read up to a mark's spacing more per list of each add call than its marks say; far
/// fewer than a window sized over a gap would.
fn marked_end(db: &Local, lo: u64, hi: u64, most: u64) -> u64 {
    let marks = db.bulk_mark();
    let mut marks = ranged(marks.at(), &marks.__backend)
        .filter(lo..=hi)
        .peekable();
    let mut counted = 0;
    while let Some(mark) = marks.next() {
        if counted + mark.ends <= most {
            counted += mark.ends;
            continue;
        }
        if mark.at > lo {
            return mark.at - 1;
        }
        let ids = marks.peek().map_or(hi, |next| next.at - 1) - lo + 1;
        let share = u128::from(ids) * u128::from(most) / u128::from(mark.ends);
        return lo.saturating_add(share as u64).saturating_sub(1).max(lo);
    }
    hi
}

/// Ids per window that hold about `target` rows if the `rows` are spread evenly over `span` + 1
/// ids.
fn first_window(span: u64, rows: u64, target: u64) -> u64 {
    let ids = u128::from(span) + 1;
    (ids * u128::from(target) / u128::from(rows.max(1))).clamp(1, u128::from(u64::MAX)) as u64
}

/// The window after one of `window` ids that read `read` rows: scaled towards `target` rows,
/// at most doubled (ids are rarely spread evenly; a window over a gap reads nothing).
fn next_window(window: u64, read: u64, target: u64) -> u64 {
    let scaled = match read {
        0 => u128::from(window) * 2,
        read => u128::from(window) * u128::from(target) / u128::from(read),
    };
    scaled.clamp(
        1,
        u128::from(window)
            .saturating_mul(2)
            .min(u128::from(u64::MAX)),
    ) as u64
}

/// Gives every vertex in `lo..=hi` that has arcs or a row a row with the degrees its arcs
/// make; returns the rows created and the rows read.
fn write_rows(db: &Local, lo: u64, hi: u64) -> (u64, u64) {
    let wide = edges::any_wide(db);
    let (out, read_out) = arcs_per_vertex(db, lo..=hi, false, wide);
    let (inc, read_in) = arcs_per_vertex(db, lo..=hi, true, wide);
    let mut read = read_out + read_in;
    let (mut out, mut inc) = (out.into_iter().peekable(), inc.into_iter().peekable());
    let vertices = db.vertex();
    let mut stored = ranged(vertices.id(), &vertices.__backend)
        .filter(lo..=hi)
        .peekable();
    let mut created = 0;
    loop {
        // The next vertex by id with a row or arcs; a list without it gives 0.
        let next = [
            stored.peek().map(|row| row.id),
            out.peek().map(|c| c.0),
            inc.peek().map(|c| c.0),
        ];
        let Some(v) = next.into_iter().flatten().min() else {
            break;
        };
        let out_degree = out.next_if(|c| c.0 == v).map_or(0, |c| c.1);
        let in_degree = inc.next_if(|c| c.0 == v).map_or(0, |c| c.1);
        match stored.next_if(|row| row.id == v) {
            Some(row) => {
                read += 1;
                if (row.out_degree, row.in_degree) != (out_degree, in_degree) {
                    rows::update(
                        &vertices.id(),
                        &Vertex {
                            out_degree,
                            in_degree,
                            ..row
                        },
                    );
                }
            }
            None => {
                rows::insert(
                    &vertices,
                    &Vertex {
                        out_degree,
                        in_degree,
                        ..Vertex::new(v)
                    },
                );
                created += 1;
            }
        }
    }
    (created, read)
}

/// How many arcs leave (or, with `incoming`, enter) each vertex in `ends` that has any, by
/// vertex id, and how many arcs that read.
fn arcs_per_vertex(
    db: &Local,
    ends: std::ops::RangeInclusive<u64>,
    incoming: bool,
    wide: bool,
) -> (Vec<(u64, u32)>, u64) {
    let mut counts: Vec<(u64, u32)> = Vec::new();
    let mut read = 0;
    edges::at_ends(db, ends, incoming, wide, |a| {
        read += 1;
        let v = if incoming { a.dst } else { a.src };
        match counts.last_mut() {
            Some(last) if last.0 == v => last.1 += 1,
            _ => counts.push((v, 1)),
        }
    });
    // `edge`'s arcs come in key order, then `wide_edge`'s: a vertex with arcs in both tables
    // is counted twice, out of order.
    if !counts.is_sorted_by(|a, b| a.0 < b.0) {
        counts.sort_unstable_by_key(|c| c.0);
        counts.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 += later.1;
            }
            same
        });
    }
    (counts, read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_window_spreads_the_rows_evenly() {
        assert_eq!(first_window(999, 1_000, 100), 100);
        assert_eq!(first_window(0, 0, 100), 100);
        assert_eq!(first_window(u64::MAX, 1, 100), u64::MAX);
        assert_eq!(first_window(9, 1_000_000, 100), 1);
    }

    #[test]
    fn a_mark_stands_for_a_32nd_of_its_list_or_1024_ends() {
        assert_eq!(mark_spacing(200_000), 6_250);
        assert_eq!(mark_spacing(40_000), 1_250);
        assert_eq!(mark_spacing(32_768), 1_024);
        assert_eq!(mark_spacing(1_000), 1_024);
        assert_eq!(mark_spacing(1), 1_024);
    }

    #[test]
    fn windows_scale_towards_the_target_and_at_most_double() {
        assert_eq!(next_window(100, 200, 100), 50);
        assert_eq!(next_window(100, 0, 100), 200);
        assert_eq!(next_window(100, 0, 1), 200);
        assert_eq!(next_window(100, 90, 100), 111);
        assert_eq!(next_window(100, 1, 100), 200);
        assert_eq!(next_window(1, 1_000, 100), 1);
        assert_eq!(next_window(u64::MAX, 0, 100), u64::MAX);
    }
}

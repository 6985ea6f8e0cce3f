//! The change log: what every write changed, by graph version, so that a reader that knows the
//! graph at one version can follow it to a later one in time proportional to the changes.
//!
//! Three readers use it: an instance's in-memory snapshot catches up instead of being rebuilt
//! (`snapshot`), a traversal that runs on the indexes across many transactions sees the graph
//! as it was when it started (`pin`), and so does an export across its pages (`export`). All
//! need every change since their version; the log says which versions it still covers
//! (`change_log_state.covers_after`).
//!
//! The log is bounded: it keeps about [`LOG_CAPACITY`] changes, trimming whole versions from the
//! oldest once it holds [`TRIM_STEP`] more. A write that changes more than
//! [`MAX_LOGGED_PER_WRITE`] rows at once (a bulk-load batch) is not logged row by row: it resets
//! the log instead, so a bulk load costs the log nothing, and readers behind it rebuild (a
//! snapshot) or report that they could not pin (a traversal).
//!
//! A reader that needs the log for longer than writes leave it, an export paging through a
//! large graph, *holds* it from its version on ([`hold`]): writes then keep every change after
//! the oldest hold in force, up to [`HELD_LOG_LIMIT`] changes, and shrink the log back a few
//! thousand rows per write once the holds are gone.

use crate::rows;
use crate::schema::{
    ChangeKind, ChangeLogState, LogHold, LoggedChange, change_log, change_log_state, log_hold,
};
use crate::types::ChangeLogInfo;
use graph_traverse::{ArcAttrs, Change};
use spacetimedb::{Identity, Local, ReducerContext, Table, Timestamp};
use std::ops::RangeInclusive;

/// Changes the log keeps, at least (whole versions are trimmed, oldest first, beyond it). About
/// 74 bytes each of the host's memory, the engine's pages and index included (measured:
/// `results/export/held-log-memory.txt`); time-wise, 10 s of writes at 20,000 edges/s.
pub const LOG_CAPACITY: u64 = 200_000;
/// Changes the log may hold beyond [`LOG_CAPACITY`] before a write trims it back. Trimming in
/// steps, not at every write, spares all other writes the state row's update: a table that a
/// transaction touches costs the engine a copy of its structure, a commit merge and metrics,
/// whatever the rows. The write that trims deletes about this many rows.
pub const TRIM_STEP: u64 = 1_000;
/// A write with more changes than this resets the log instead of logging them.
pub const MAX_LOGGED_PER_WRITE: usize = 10_000;
/// Changes the log may keep for readers that hold it; past this, writes trim it whatever is
/// held. Five times [`LOG_CAPACITY`]: 100 s of writes at 10,000 changes/s, time enough to
/// export a LiveJournal-sized graph, for about 71 MiB of the host's memory.
pub const HELD_LOG_LIMIT: u64 = 5 * LOG_CAPACITY;
/// Rows one write may delete from the log beyond as many as it logs, give or take the last
/// version it deletes (the log is trimmed by whole versions, each of at most
/// [`MAX_LOGGED_PER_WRITE`] rows): a log that was held past [`LOG_CAPACITY`] shrinks back over
/// many writes, none of which holds the database long.
const TRIM_PER_WRITE: u64 = 4 * TRIM_STEP;
/// How long a hold lasts from its last renewal: a reader that vanished keeps the log long for
/// no longer than this.
pub const HOLD_TTL_US: i64 = 60_000_000;
/// A hold with less than this left is renewed: about every 20 s of a reader's pages.
const RENEW_WITHIN_US: i64 = 40_000_000;

/// What a vertex change logs in the arc columns.
const NO_ATTRS: ArcAttrs = ArcAttrs {
    label: 0,
    weight: 0.0,
};

/// The changes one write makes, gathered as it makes them.
#[derive(Default)]
pub struct Changes {
    rows: Vec<(ChangeKind, u64, u64, ArcAttrs)>,
    /// A change that is not followed row by row: the log restarts after it.
    reset: bool,
}

impl Changes {
    /// A change too broad to follow (clearing the graph): readers behind it start over.
    pub fn reset() -> Self {
        Self {
            rows: Vec::new(),
            reset: true,
        }
    }

    /// Adds a change, or gives up following them row by row once there are too many to log.
    fn push(&mut self, kind: ChangeKind, a: u64, b: u64, attrs: ArcAttrs) {
        if self.reset {
            return;
        }
        if self.rows.len() == MAX_LOGGED_PER_WRITE {
            *self = Self::reset();
            return;
        }
        self.rows.push((kind, a, b, attrs));
    }

    pub fn insert_arc(&mut self, src: u64, dst: u64, attrs: ArcAttrs) {
        self.push(ChangeKind::InsertArc, src, dst, attrs);
    }

    /// `attrs`: those the removed arc had.
    pub fn remove_arc(&mut self, src: u64, dst: u64, attrs: ArcAttrs) {
        self.push(ChangeKind::RemoveArc, src, dst, attrs);
    }

    pub fn insert_vertex(&mut self, v: u64) {
        self.push(ChangeKind::InsertVertex, v, 0, NO_ATTRS);
    }

    /// Vertex `v`'s label goes from `from` to `to` (at most once per vertex and write).
    pub fn relabel_vertex(&mut self, v: u64, from: u32, to: u32) {
        let attrs = ArcAttrs {
            label: to,
            ..NO_ATTRS
        };
        self.push(ChangeKind::RelabelVertex, v, u64::from(from), attrs);
    }

    pub fn remove_vertex(&mut self, v: u64) {
        self.push(ChangeKind::RemoveVertex, v, 0, NO_ATTRS);
    }

    /// Logs these changes as those that turned version `previous` into `version`, and trims.
    pub(crate) fn record(self, ctx: &ReducerContext, previous: u64, version: u64) {
        let states = ctx.db.change_log_state();
        let log = ctx.db.change_log();
        let held = rows::count(&log);
        let mut count = held + self.rows.len() as u64;
        // Most writes neither reset nor trim, and a log with rows has its state row (the write
        // that logged them stored it): those writes leave the state as it is without reading
        // it, and the transaction touches one table fewer (a table costs the engine a copy of
        // its structure, a commit merge and metrics, whatever the rows).
        if !self.reset && held > 0 && count <= LOG_CAPACITY + TRIM_STEP {
            self.log(ctx, version);
            return;
        }
        // A database created before the log existed: the log covers what follows.
        let stored = states.id().find(0);
        let mut state = stored.unwrap_or(ChangeLogState {
            id: 0,
            covers_after: previous,
        });
        if self.reset {
            log.clear();
            state.covers_after = version;
        } else {
            let mut budget = self.rows.len() as u64 + TRIM_PER_WRITE;
            self.log(ctx, version);
            if count > LOG_CAPACITY + TRIM_STEP {
                let (target, keep) = trim_bounds(ctx, count, version, state.covers_after);
                while count > target && state.covers_after < keep && budget > 0 {
                    state.covers_after += 1;
                    let deleted = log.by_version().delete(state.covers_after);
                    count -= deleted;
                    budget = budget.saturating_sub(deleted);
                }
            }
        }
        match stored {
            Some(old) if old == state => {}
            Some(_) => {
                states.id().update(state);
            }
            None => {
                states.insert(state);
            }
        }
    }

    /// Appends these changes to the log as version `version`'s.
    fn log(self, ctx: &ReducerContext, version: u64) {
        let log = ctx.db.change_log();
        for (kind, src, dst, attrs) in self.rows {
            rows::insert(
                &log,
                &LoggedChange {
                    version,
                    kind,
                    src,
                    dst,
                    label: attrs.label,
                    weight: attrs.weight,
                },
            );
        }
    }
}

/// How far a write trims a log of `count` changes that covers the versions after `covers_after`,
/// the newest made `version`: down to how many changes, and not past which version (the log
/// keeps covering the versions after it). Down to [`LOG_CAPACITY`] but not past the oldest hold
/// in force (one on a version the log no longer covers holds nothing); past [`HELD_LOG_LIMIT`],
/// down to that limit whatever is held.
fn trim_bounds(ctx: &ReducerContext, count: u64, version: u64, covers_after: u64) -> (u64, u64) {
    if count > HELD_LOG_LIMIT + TRIM_STEP {
        return (HELD_LOG_LIMIT, version);
    }
    let held = (holds_in_force(&ctx.db, covers_after, ctx.timestamp).iter())
        .map(|h| h.version)
        .min();
    (LOG_CAPACITY, held.map_or(version, |v| v.min(version)))
}

/// The holds that keep changes in the log at `now`: those not lapsed, on versions the log
/// still covers (one on a version it no longer covers holds nothing).
fn holds_in_force(db: &Local, covers_after: u64, now: Timestamp) -> Vec<LogHold> {
    (db.log_hold().iter())
        .filter(|h| not_lapsed(h, now) && h.version >= covers_after)
        .collect()
}

fn not_lapsed(hold: &LogHold, now: Timestamp) -> bool {
    hold.expires.to_micros_since_unix_epoch() > now.to_micros_since_unix_epoch()
}

/// What the log holds at `now`, the graph being at version `version`.
pub fn info(db: &Local, version: u64, now: Timestamp) -> ChangeLogInfo {
    // A graph never written has no state row: nothing to cover yet.
    let covers_after = covers_after(db).min(version);
    let mut holds = holds_in_force(db, covers_after, now);
    holds.sort_unstable_by_key(|h| (h.version, h.id));
    ChangeLogInfo {
        changes: rows::count(&db.change_log()),
        covers_after,
        holds,
    }
}

/// Hold `id`, lapsed or not, if it is still there and is `holder`'s after `version` (a reader
/// names the hold it was given; a name that is not its own is no hold).
pub fn held(db: &Local, id: u64, version: u64, holder: Identity) -> Option<LogHold> {
    (db.log_hold().id().find(id)).filter(|h| h.version == version && h.holder == holder)
}

/// Whether the holder of `hold` should call [`hold`] at `now` to keep reading: it holds nothing
/// yet, or its hold lapses soon.
pub fn renewal_due(hold: Option<&LogHold>, now: Timestamp) -> bool {
    hold.is_none_or(|h| {
        h.expires.to_micros_since_unix_epoch() - now.to_micros_since_unix_epoch() <= RENEW_WITHIN_US
    })
}

/// Makes writes keep every change after `version` in the log for [`HOLD_TTL_US`] from `now` (up
/// to [`HELD_LOG_LIMIT`] changes), for `holder`'s reader whose hold is `id` (0: none yet), and
/// drops the holds that lapsed. Returns the reader's hold: `id` renewed if it is still there
/// (see [`held`]), else a new one recording `bound`, the largest vertex id at `version` (or
/// above it), or 0 if the log no longer covers `version`: a new hold there would hold nothing,
/// but one kept renewed still tells the export's end that others read that version (see
/// [`release`]). Each reader has a hold of its own, so that another's end cannot drop it.
pub fn hold(
    db: &Local,
    id: u64,
    version: u64,
    holder: Identity,
    bound: u64,
    now: Timestamp,
) -> u64 {
    let holds = db.log_hold();
    let expires =
        Timestamp::from_micros_since_unix_epoch(now.to_micros_since_unix_epoch() + HOLD_TTL_US);
    let own = held(db, id, version, holder);
    for h in holds
        .iter()
        .filter(|h| !not_lapsed(h, now))
        .collect::<Vec<_>>()
    {
        if Some(h.id) != own.map(|o| o.id) {
            holds.id().delete(h.id);
        }
    }
    match own {
        Some(h) => holds.id().update(LogHold { expires, ..h }).id,
        None if covers_after(db) <= version => {
            (holds.insert(LogHold {
                id: 0,
                version,
                holder,
                expires,
                bound,
            }))
            .id
        }
        None => 0,
    }
}

/// Drops `holder`'s hold `id` after `version`, if it is still there (see [`held`]): its reader
/// is done. Returns whether any hold after `version` has not lapsed at `now` (another reader's,
/// covered by the log or not: an instance's state may carry it past the log), which may then
/// want what this one kept.
pub fn release(db: &Local, id: u64, version: u64, holder: Identity, now: Timestamp) -> bool {
    let holds = db.log_hold();
    if held(db, id, version, holder).is_some() {
        holds.id().delete(id);
    }
    (holds.iter()).any(|h| h.version == version && not_lapsed(&h, now))
}

/// Logged changes a reader that catches up through the log (a snapshot, an export's pin) aims
/// to read per transaction.
pub const CATCH_UP_ROWS: u64 = 20_000;
/// Versions such a reader reads in its first transaction when it has no better guess.
pub const FIRST_CATCH_UP_SPAN: u64 = 64;

/// Versions that hold about [`CATCH_UP_ROWS`] changes on average in the log as it is in this
/// transaction, the graph being at version `now`: a first span for a reader that may be far
/// behind and whose writers may log one change a version or thousands.
pub fn catch_up_span_estimate(db: &Local, now: u64) -> u64 {
    let rows = rows::count(&db.change_log());
    let versions = now.saturating_sub(covers_after(db));
    match rows {
        0 => FIRST_CATCH_UP_SPAN,
        rows => (u128::from(CATCH_UP_ROWS) * u128::from(versions) / u128::from(rows))
            .clamp(1, u128::from(u64::MAX)) as u64,
    }
}

/// Versions a reader catching up reads in its next transaction, after the last `versions` held
/// `rows` changes: halved or doubled to stay near [`CATCH_UP_ROWS`].
pub fn next_catch_up_span(versions: u64, rows: u64) -> u64 {
    if rows > 2 * CATCH_UP_ROWS {
        (versions / 2).max(1)
    } else if rows < CATCH_UP_ROWS / 2 {
        versions.saturating_mul(2)
    } else {
        versions
    }
}

/// Every version above this one is in the log (and none at or below it is needed).
pub fn covers_after(db: &Local) -> u64 {
    db.change_log_state()
        .id()
        .find(0)
        .map_or(u64::MAX, |s| s.covers_after)
}

/// The changes that made the versions in `versions`, in version order, if the log holds them
/// all (`None` if it was trimmed or reset past their start).
pub fn read(db: &Local, versions: RangeInclusive<u64>) -> Option<Vec<Change>> {
    if covers_after(db) >= *versions.start() {
        return None;
    }
    let mut rows: Vec<LoggedChange> = db.change_log().by_version().filter(versions).collect();
    rows.sort_unstable_by_key(|row| row.version);
    Some(rows.into_iter().map(change).collect())
}

fn change(row: LoggedChange) -> Change {
    let LoggedChange {
        kind,
        src,
        dst,
        label,
        weight,
        ..
    } = row;
    let attrs = ArcAttrs { label, weight };
    match kind {
        ChangeKind::InsertArc => Change::InsertArc { src, dst, attrs },
        ChangeKind::RemoveArc => Change::RemoveArc { src, dst, attrs },
        ChangeKind::InsertVertex => Change::InsertVertex(src),
        ChangeKind::RemoveVertex => Change::RemoveVertex(src),
        ChangeKind::RelabelVertex => Change::RelabelVertex {
            v: src,
            from: dst as u32,
            to: label,
        },
    }
}

//! The change log: what every write changed, by graph version, so that a reader that knows the
//! graph at one version can follow it to a later one in time proportional to the changes.
//!
//! Two readers use it: an instance's in-memory snapshot catches up instead of being rebuilt
//! (`snapshot`), and a traversal that runs on the indexes across many transactions sees the graph
//! as it was when it started (`pin`). Both need every change since their version; the log says
//! which versions it still covers (`change_log_state.covers_after`).
//!
//! The log is bounded: it keeps about [`LOG_CAPACITY`] changes, trimming whole versions from the
//! oldest once it holds [`TRIM_STEP`] more. A write that changes more than
//! [`MAX_LOGGED_PER_WRITE`] rows at once (a bulk-load batch) is not logged row by row: it resets
//! the log instead, so a bulk load costs the log nothing, and readers behind it rebuild (a
//! snapshot) or report that they could not pin (a traversal).

use crate::rows;
use crate::schema::{ChangeKind, ChangeLogState, LoggedChange, change_log, change_log_state};
use graph_traverse::{ArcAttrs, Change};
use spacetimedb::{Local, ReducerContext, Table};
use std::ops::RangeInclusive;

/// Changes the log keeps, at least (whole versions are trimmed, oldest first, beyond it). About
/// 40 bytes each in the engine's pages and index; time-wise, 10 s of writes at 20,000 edges/s.
pub const LOG_CAPACITY: u64 = 200_000;
/// Changes the log may hold beyond [`LOG_CAPACITY`] before a write trims it back. Trimming in
/// steps, not at every write, spares all other writes the state row's update: a table that a
/// transaction touches costs the engine a copy of its structure, a commit merge and metrics,
/// whatever the rows. The write that trims deletes about this many rows.
pub const TRIM_STEP: u64 = 1_000;
/// A write with more changes than this resets the log instead of logging them.
pub const MAX_LOGGED_PER_WRITE: usize = 10_000;

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
            self.log(ctx, version);
            if count > LOG_CAPACITY + TRIM_STEP {
                while count > LOG_CAPACITY && state.covers_after < version {
                    state.covers_after += 1;
                    count -= log.by_version().delete(state.covers_after);
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

//! Runs a procedure's work as a sequence of short, measured transactions.
//!
//! All calls into one database share a single executor thread, and a procedure lets other
//! reducers run only while it is suspended. So between transactions the runner *yields*
//! (`sleep_until` a moment ahead, which suspends the procedure for up to one timer tick, ≈1 ms)
//! whenever `yield_every_us` of wall time has passed since the last yield. Short queries never
//! pay for a yield; long ones let writers in at least every `yield_every_us` plus one
//! transaction. `sleep_until` with a negative time returns the engine clock without suspending:
//! that is how transaction ends are timed.

use crate::schema::meta;
use crate::types::QueryStats;
use spacetimedb::{ProcedureContext, Timestamp, TxContext};

/// Work units (arcs + vertices + lookups) per transaction when the caller does not say: about
/// 1.5 ms of work, under 5 ms at the worst (measured: results/tuning.md).
pub const DEFAULT_BUDGET: u32 = 2_500;
/// Longest stretch of wall time a procedure runs without letting others in, by default. A
/// single-edge insert over HTTP is three executor jobs (connect, reducer, disconnect), each of
/// which may wait for a yield; 2 ms keeps its p99 near 5 ms for ~25% more full-BFS time.
pub const DEFAULT_YIELD_EVERY_US: u32 = 2_000;

pub struct TxRunner<'c> {
    ctx: &'c mut ProcedureContext,
    pub stats: QueryStats,
    started_us: i64,
    last_yield_us: i64,
    yield_every_us: i64,
}

impl<'c> TxRunner<'c> {
    pub fn new(ctx: &'c mut ProcedureContext, yield_every_us: u32) -> Self {
        let started_us = now_us(ctx);
        Self {
            ctx,
            stats: QueryStats::default(),
            started_us,
            last_yield_us: started_us,
            yield_every_us: yield_every_us as i64,
        }
    }

    /// Runs `body` in one transaction and records its hold time; afterwards yields if this
    /// procedure has kept the executor for `yield_every_us` or more.
    ///
    /// `body` is called again if the commit fails (the engine retries once). Our bodies only
    /// read, so a retry merely continues the traversal from a state built on a consistent read.
    pub fn run<T>(&mut self, body: impl Fn(&TxContext) -> T) -> T {
        let (value, tx_start, version) = self.ctx.with_tx(|tx| {
            let version = meta(&tx.db).version;
            (body(tx), tx.timestamp.to_micros_since_unix_epoch(), version)
        });
        let tx_end = now_us(self.ctx);
        let hold = (tx_end - tx_start).max(0) as u64;
        let s = &mut self.stats;
        if s.transactions == 0 {
            s.version_start = version;
        }
        s.version_end = version;
        s.transactions += 1;
        s.max_hold_us = s.max_hold_us.max(hold);
        s.total_hold_us += hold;
        s.total_us = (tx_end - self.started_us).max(0) as u64;
        if tx_end - self.last_yield_us >= self.yield_every_us {
            self.yield_now(tx_end);
        }
        value
    }

    /// Suspends the procedure briefly so queued reducers and procedures can run.
    fn yield_now(&mut self, now: i64) {
        self.ctx
            .sleep_until(Timestamp::from_micros_since_unix_epoch(now + 100));
        self.last_yield_us = self.ctx.timestamp.to_micros_since_unix_epoch();
        self.stats.yields += 1;
    }

    /// The stats with `total_us` covering everything up to now.
    pub fn finish(self) -> QueryStats {
        let mut stats = self.stats;
        stats.total_us = (now_us(self.ctx) - self.started_us).max(0) as u64;
        stats
    }
}

/// The engine's clock, read without suspending.
fn now_us(ctx: &mut ProcedureContext) -> i64 {
    ctx.sleep_until(Timestamp::from_micros_since_unix_epoch(-1));
    ctx.timestamp.to_micros_since_unix_epoch()
}

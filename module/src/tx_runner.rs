//! Runs a procedure's work as a sequence of short, measured transactions.
//!
//! All calls into one database share a single executor thread, and a procedure lets other
//! reducers run only while it is suspended. So between transactions the runner *yields*
//! (`sleep_until` a moment ahead) about every `yield_every_us` of wall time. Short queries never
//! pay for a yield; long ones let writers in at least every `yield_every_us` plus one
//! transaction. `sleep_until` with a negative time returns the engine clock without suspending:
//! that is how transaction ends are timed, and those hold times pace the work [`Budget`] of the
//! transactions that follow.
//!
//! A yield lasts until the engine's 1 ms timer tick after it ends. Where the host fires its
//! timers as ticks begin (graph-host's timer pump), a procedure resumes just after a tick
//! begins, and work paced to stop [`TICK_LEAD_US`] short of a whole number of milliseconds
//! after that makes the next yield cost about that lead instead of a whole tick. The runner
//! assumes such a host until two yields in a row took [`ALIGNED_YIELD_US`] or more (one may
//! have started at any point of a tick, or run over its stretch); elsewhere (the official
//! server parks its timer a whole tick from the moment a sleep starts) every yield costs a
//! tick wherever it falls, and from the third on, stretches keep their full length.

use crate::schema::meta;
use crate::types::QueryStats;
use graph_traverse::Progress;
use spacetimedb::{ProcedureContext, Timestamp, TxContext};

/// Hold time a transaction aims for when the caller sets no work budget. A unit's cost varies
/// with the machine and the table sizes (≈0.6 µs on a quiet dblp-sized graph, 2 µs and more on
/// a LiveJournal-sized one or a busy machine), so the budget follows measured hold times: this
/// target leaves 2.5× headroom under the 5 ms that writers may wait.
pub const TARGET_HOLD_US: u64 = 2_000;
/// The paced budget's first value and bounds, in work units (arcs + vertices + lookups).
const FIRST_BUDGET: u64 = 2_000;
const MIN_BUDGET: u64 = 200;
const MAX_BUDGET: u64 = 100_000;
/// Transactions with less work than this say more about fixed costs than about a unit's cost.
const MIN_CALIBRATION_UNITS: u64 = 200;
/// Time from one resume to the next yield plus [`TICK_LEAD_US`], by default: about how often a
/// procedure lets others in. A single-edge insert over HTTP is three executor jobs (connect,
/// reducer, disconnect), each of which may wait for a yield; 2 ms keeps its p99 near 5 ms.
pub const DEFAULT_YIELD_EVERY_US: u32 = 2_000;
/// How far ahead a yield sleeps: far enough to still be ahead when the engine reads its clock
/// (a time in the past returns without suspending), close enough to stay in the current tick.
const YIELD_AHEAD_US: i64 = 20;
/// How long before the end of a whole number of timer ticks (counted from the last resume) a
/// stretch of paced work ends and yields: the yield then waits for about this long.
const TICK_LEAD_US: i64 = 200;
/// A yield shorter than this ended as a tick began rather than a whole tick after it started:
/// the host fires timers as ticks begin, and stretches aim [`TICK_LEAD_US`] before them.
const ALIGNED_YIELD_US: i64 = 700;
/// This many yields in a row of [`ALIGNED_YIELD_US`] or more say the host does not.
const UNALIGNED_YIELDS: u32 = 2;
/// Paced steps aim to end this share of the time left in the stretch, so that one that runs
/// over its estimate still ends before the tick.
const STEP_SHARE: f64 = 0.8;
/// A stretch with less than this left yields now rather than run one more small step.
const STRETCH_SLACK_US: i64 = 100;
/// A transaction that holds longer than this is counted in `QueryStats::slow_transactions` and
/// logged: it is longer than writers should wait.
pub const SLOW_HOLD_US: u64 = 5_000;

/// Work units per transaction: fixed when the caller gives a budget, otherwise paced so that
/// a transaction holds for about [`TARGET_HOLD_US`].
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    Fixed(u64),
    Paced {
        /// Smoothed cost of a unit, µs (`None` until a transaction was big enough to tell).
        us_per_unit: Option<f64>,
    },
}

impl Budget {
    /// `tx_budget` as procedures take it: 0 for paced, otherwise a fixed number of units.
    pub fn from_arg(tx_budget: u32) -> Self {
        match tx_budget {
            0 => Budget::Paced { us_per_unit: None },
            n => Budget::Fixed(n as u64),
        }
    }

    /// Units the next transaction may spend.
    pub fn units(&self) -> u64 {
        self.units_within(TARGET_HOLD_US)
    }

    /// Units that take about `us` (paced), or the fixed number.
    fn units_within(&self, us: u64) -> u64 {
        match *self {
            Budget::Fixed(n) => n,
            Budget::Paced { us_per_unit: None } => FIRST_BUDGET,
            Budget::Paced {
                us_per_unit: Some(cost),
            } => ((us as f64 / cost) as u64).clamp(MIN_BUDGET, MAX_BUDGET),
        }
    }

    /// Learns from a transaction that spent `units` and held for `hold_us`.
    pub fn observe(&mut self, units: u64, hold_us: u64) {
        if let Budget::Paced { us_per_unit } = self
            && units >= MIN_CALIBRATION_UNITS
        {
            let cost = hold_us.max(1) as f64 / units as f64;
            // Half old, half new: follows a change within a few transactions, and one slow
            // transaction (a page fault, a busy core) moves the budget only halfway.
            *us_per_unit = Some(us_per_unit.map_or(cost, |old| (old + cost) / 2.0));
        }
    }
}

pub struct TxRunner<'c> {
    ctx: &'c mut ProcedureContext,
    pub stats: QueryStats,
    started_us: i64,
    last_yield_us: i64,
    yield_every_us: i64,
    last_hold_us: u64,
    last_tx_start_us: i64,
    /// Whether the last transaction held longer than [`SLOW_HOLD_US`] and is not logged yet
    /// (it is logged by [`observe`](Self::observe), with its work units, or else before the
    /// next transaction or when the runner is done).
    slow_unlogged: bool,
    /// Yields in a row that took a tick (see the module doc).
    long_yields: u32,
}

/// A slow last transaction that no one reported work units for is logged all the same.
impl Drop for TxRunner<'_> {
    fn drop(&mut self) {
        self.log_slow(None);
    }
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
            last_hold_us: 0,
            last_tx_start_us: started_us,
            slow_unlogged: false,
            long_yields: 0,
        }
    }

    /// Runs `body` in one transaction that only reads, and records its hold time; afterwards
    /// yields if this procedure has kept the executor for `yield_every_us` or more.
    ///
    /// The transaction is rolled back, not committed: the same reads, but a commit would hand
    /// the engine an empty transaction to publish, one more message through the database's send
    /// worker ahead of the procedure's result, and when that message had gone out before the
    /// result was ready, the worker's linger held the result until its next timer tick (up to
    /// 1 ms; `results/pace-readonly/`). A rolled-back transaction tells a caller with confirmed
    /// reads to wait for the last committed transaction, the state it read. Writes made in
    /// `body` are discarded: use [`write`](Self::write) for those.
    pub fn run<T>(&mut self, body: impl Fn(&TxContext) -> T) -> T {
        self.run_at(|tx, _| body(tx))
    }

    /// [`run`](Self::run), passing `body` the graph version the transaction reads.
    pub fn run_at<T>(&mut self, body: impl Fn(&TxContext, u64) -> T) -> T {
        self.transaction(false, body)
    }

    /// Runs `body` in one transaction that is committed, as [`run`](Self::run) runs reads.
    ///
    /// The engine calls `body` again, in a new transaction, if the commit fails (2.14 retries
    /// once; its commit fails only when refreshing a view fails, and this module has none), so
    /// the body may change nothing outside the transaction that a second run would harm.
    pub fn write<T>(&mut self, body: impl Fn(&TxContext) -> T) -> T {
        self.transaction(true, |tx, _| body(tx))
    }

    /// Runs `body` in a transaction, committed or rolled back, and keeps the stats.
    fn transaction<T>(&mut self, commit: bool, body: impl Fn(&TxContext, u64) -> T) -> T {
        self.log_slow(None);
        let run = |tx: &TxContext| {
            let version = meta(&tx.db).version;
            (
                body(tx, version),
                tx.timestamp.to_micros_since_unix_epoch(),
                version,
            )
        };
        let (value, tx_start, version) = if commit {
            self.ctx.with_tx(run)
        } else {
            // An `Err` from the body is what makes the bindings roll the transaction back.
            match self
                .ctx
                .try_with_tx(|tx| Err::<std::convert::Infallible, _>(run(tx)))
            {
                Ok(never) => match never {},
                Err(read) => read,
            }
        };
        let tx_end = now_us(self.ctx);
        let hold = (tx_end - tx_start).max(0) as u64;
        self.last_hold_us = hold;
        self.last_tx_start_us = tx_start;
        self.slow_unlogged = hold > SLOW_HOLD_US;
        let s = &mut self.stats;
        if s.transactions == 0 {
            s.version_start = version;
        }
        s.version_end = version;
        s.transactions += 1;
        s.max_hold_us = s.max_hold_us.max(hold);
        s.slow_transactions += (hold > SLOW_HOLD_US) as u32;
        s.total_hold_us += hold;
        s.total_us = (tx_end - self.started_us).max(0) as u64;
        if tx_end >= self.stretch_end() {
            self.yield_now();
        }
        value
    }

    /// When the current stretch of work should end with a yield: see the module doc.
    fn stretch_end(&self) -> i64 {
        let aligned = self.long_yields < UNALIGNED_YIELDS;
        let lead = if aligned { TICK_LEAD_US } else { 0 };
        let stretch = (self.yield_every_us - lead).max(self.yield_every_us / 2);
        self.last_yield_us + stretch - STRETCH_SLACK_US
    }

    /// Runs `body` outside any transaction (work on data already read) and returns its value
    /// and how long it took, µs; then yields if due, as after a transaction: the executor
    /// thread is just as busy.
    pub fn compute<T>(&mut self, body: impl FnOnce() -> T) -> (T, u64) {
        let start = now_us(self.ctx);
        let value = body();
        let end = now_us(self.ctx);
        self.stats.total_us = (end - self.started_us).max(0) as u64;
        if end >= self.stretch_end() {
            self.yield_now();
        }
        (value, (end - start).max(0) as u64)
    }

    /// Calls `step(units)` outside any transaction until it returns [`Progress::Done`], each
    /// call with a paced budget of work units sized to end before the current stretch does,
    /// yielding between calls as [`compute`](Self::compute) does.
    pub fn compute_paced(&mut self, mut step: impl FnMut(u64) -> Progress) {
        let mut budget = Budget::from_arg(0);
        loop {
            let units = self.step_units(&budget);
            let (progress, took_us) = self.compute(|| step(units));
            if progress == Progress::Done {
                return;
            }
            budget.observe(units, took_us);
        }
    }

    /// Units for the next paced step outside a transaction: about [`STEP_SHARE`] of the time
    /// left before the current stretch ends (see the module doc), at `budget`'s pace.
    pub fn step_units(&mut self, budget: &Budget) -> u64 {
        let left = (self.stretch_end() + STRETCH_SLACK_US - self.now_us()).max(0);
        budget.units_within((left as f64 * STEP_SHARE) as u64)
    }

    /// Suspends the procedure briefly so queued reducers and procedures can run.
    fn yield_now(&mut self) {
        let now = now_us(self.ctx);
        self.ctx
            .sleep_until(Timestamp::from_micros_since_unix_epoch(
                now + YIELD_AHEAD_US,
            ));
        self.last_yield_us = self.ctx.timestamp.to_micros_since_unix_epoch();
        if self.last_yield_us - now < ALIGNED_YIELD_US {
            self.long_yields = 0;
        } else {
            self.long_yields += 1;
        }
        self.stats.yields += 1;
    }

    /// Feeds the last transaction's hold time and the `units` of work it did to `budget`, and
    /// logs the transaction with them if it held longer than [`SLOW_HOLD_US`].
    pub fn observe(&mut self, budget: &mut Budget, units: u64) {
        self.log_slow(Some((units, budget.units())));
        budget.observe(units, self.last_hold_us);
    }

    /// Logs the last transaction if it held longer than [`SLOW_HOLD_US`] and is not logged yet,
    /// with the work it did and its budget when the caller counted them: the work and the
    /// engine-clock start let a slow transaction be told apart from a big one, and be matched
    /// against a scheduler trace of the host.
    fn log_slow(&mut self, work: Option<(u64, u64)>) {
        if !std::mem::take(&mut self.slow_unlogged) {
            return;
        }
        let work = match work {
            Some((units, budget)) => format!(" for {units} work units (budget {budget})"),
            None => String::new(),
        };
        log::warn!(
            "slow transaction: held {} µs{work}, transaction {} of this query, started at {} µs \
             since the Unix epoch",
            self.last_hold_us,
            self.stats.transactions,
            self.last_tx_start_us,
        );
    }

    /// The stats with `total_us` covering everything up to now. The answer is taken to be for
    /// the first transaction's version, and exact if no write committed since; queries that
    /// pin a version or use a snapshot say otherwise.
    pub fn finish(self) -> QueryStats {
        let mut stats = self.stats;
        stats.total_us = (now_us(self.ctx) - self.started_us).max(0) as u64;
        stats.version = stats.version_start;
        stats.pinned = stats.version_start == stats.version_end;
        stats
    }

    /// A random number from the engine's generator.
    pub fn random_u64(&self) -> u64 {
        self.ctx.random()
    }

    /// The engine's clock, µs since the Unix epoch.
    pub fn now_us(&mut self) -> i64 {
        now_us(self.ctx)
    }
}

/// The engine's clock, read without suspending.
fn now_us(ctx: &mut ProcedureContext) -> i64 {
    ctx.sleep_until(Timestamp::from_micros_since_unix_epoch(-1));
    ctx.timestamp.to_micros_since_unix_epoch()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_budget_stays_fixed() {
        let mut b = Budget::from_arg(7);
        b.observe(5_000, 50_000);
        assert_eq!(b.units(), 7);
    }

    #[test]
    fn a_paced_budget_follows_the_cost_of_a_unit() {
        let mut b = Budget::from_arg(0);
        assert_eq!(b.units(), FIRST_BUDGET);
        // 2 µs a unit: 1,000 units fill the 2 ms target.
        b.observe(2_000, 4_000);
        assert_eq!(b.units(), 1_000);
        // Too little work to say anything about a unit's cost.
        b.observe(10, 5_000);
        assert_eq!(b.units(), 1_000);
        // One transaction 5× slower moves the estimate halfway (6 µs a unit).
        b.observe(1_000, 10_000);
        assert_eq!(b.units(), 333);
        // Cheap units: the budget grows, up to its bound.
        for _ in 0..20 {
            b.observe(10_000, 10);
        }
        assert_eq!(b.units(), MAX_BUDGET);
        for _ in 0..20 {
            b.observe(1_000, 1_000_000);
        }
        assert_eq!(b.units(), MIN_BUDGET);
    }
}

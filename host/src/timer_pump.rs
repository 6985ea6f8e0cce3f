//! Makes tokio's 1 ms timer ticks end on time.
//!
//! Tokio's timer wheel counts whole milliseconds from the runtime's start, and a sleep, however
//! short, ends at the first moment the runtime's driver looks at its timers after the sleep's
//! tick has begun. A driver with nothing else to do parks for a whole tick from wherever it is
//! in the current one, so every short sleep takes a full millisecond or more. The engine sleeps
//! short when a procedure yields (`sleep_until`) to let other calls run: a long traversal
//! yields every few milliseconds, and a third of its time went to those ticks.
//!
//! The pump wakes the driver just after each tick begins, so a sleep ends when its tick does:
//! a yield then costs what is left of the current tick, and a procedure that yields shortly
//! before a tick ends (the module's runner does, `tx_runner.rs`) pays a fraction of one. It
//! wakes the driver the way any socket does, by making a byte readable on a socket the runtime
//! polls. At start it finds where the ticks begin by watching when short sleeps end, and checks
//! that sleeps then end on time (a pump that woke the driver just before ticks begin would make
//! them longer); on a busy machine that can fail, and the host then serves without the pump and
//! tries again in the background until it succeeds. It runs only while the host has open
//! connections or requests.

use std::io::Write as _;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt as _;

const TICK: Duration = Duration::from_millis(1);

/// How long after a tick begins the pump wakes the driver: the margin for finding the tick's
/// start a little late and for the thread waking a little late.
const WAKE_AFTER_TICK: Duration = Duration::from_micros(10);

/// Short sleeps watched to find where ticks begin (one per tick).
const CALIBRATION_SLEEPS: usize = 50;

/// Sleeps timed to check a calibration, started at points spread over a tick.
const CHECK_SLEEPS: u32 = 20;

/// The median checked sleep may overrun the rest of its tick by this much: more means the pump
/// wakes the driver at the wrong moment, which would make sleeps longer, not shorter. (The
/// median, because on a busy machine a few sleeps run late wherever the pump wakes.)
const CHECK_MAX_OVERRUN: Duration = Duration::from_micros(150);

/// Calibrations tried at start before the host serves without the pump.
const CALIBRATION_TRIES: usize = 3;

/// The first wait before calibrating again in the background, doubled after each failure up
/// to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(60);

/// How long the pump keeps running after the last connection or request ended.
const TAIL: Duration = Duration::from_millis(100);

/// What the pump thread does besides waking the driver as ticks begin.
const FAST: u64 = u64::MAX;
const UNCALIBRATED: u64 = u64::MAX - 1;

/// Handle to the pump: [`TimerPump::busy`] while something needs timers on time.
#[derive(Clone)]
pub struct TimerPump {
    /// `None` when the pump is off.
    shared: Option<Arc<Shared>>,
}

struct Shared {
    busy: AtomicUsize,
    /// Where ticks begin, ns after `origin` (below a tick), or [`FAST`] (wake every few µs,
    /// for calibrating) or [`UNCALIBRATED`] (wake nothing).
    phase_ns: AtomicU64,
    origin: Instant,
    thread: OnceLock<Thread>,
}

/// Keeps the pump running while held.
pub struct Busy(Option<Arc<Shared>>);

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(shared) = &self.0 {
            shared.busy.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl TimerPump {
    /// Starts the pump for `runtime`, which was built just after `built_after`. Blocks for
    /// about a hundred ticks while it finds where the runtime's ticks begin and checks that
    /// waking the driver there makes short sleeps end on time; if three tries fail (a busy
    /// machine), the host serves without the pump (and says so) while a task on `runtime`
    /// tries again, less and less often, until one succeeds.
    pub fn start(runtime: &tokio::runtime::Runtime, built_after: Instant) -> std::io::Result<Self> {
        let (mut writer, reader) = UnixStream::pair()?;
        writer.set_nonblocking(true)?;
        reader.set_nonblocking(true)?;
        let reader = {
            let _entered = runtime.enter();
            tokio::net::UnixStream::from_std(reader)?
        };
        runtime.spawn(drain(reader));
        let wake = move || {
            // A full socket means the driver has unread wake-ups already: nothing is lost.
            let _ = writer.write(&[0]);
        };
        let shared = Arc::new(Shared {
            busy: AtomicUsize::new(0),
            phase_ns: AtomicU64::new(UNCALIBRATED),
            origin: built_after,
            thread: OnceLock::new(),
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("timer-pump".into())
            .spawn({
                let shared = shared.clone();
                move || {
                    precise_sleeps();
                    let _ = ready_tx.send(());
                    pump(&shared, wake);
                }
            })?;
        let _ = shared.thread.set(thread.thread().clone());
        let _ = ready_rx.recv();
        let pump = Self {
            shared: Some(shared),
        };
        for _ in 0..CALIBRATION_TRIES {
            if runtime.block_on(pump.calibrate()) {
                return Ok(pump);
            }
        }
        log::warn!(
            "timer pump: could not time the runtime's ticks (a busy machine?); serving without \
             it, where short sleeps take a whole tick, and trying again in the background"
        );
        runtime.spawn({
            let pump = pump.clone();
            async move {
                let mut wait = RETRY_FIRST;
                loop {
                    tokio::time::sleep(wait).await;
                    if pump.calibrate().await {
                        log::info!("timer pump: running after all");
                        return;
                    }
                    wait = (wait * 2).min(RETRY_MAX);
                }
            }
        });
        Ok(pump)
    }

    /// Finds where ticks begin and checks that waking the driver there makes short sleeps end
    /// on time; if they do, the pump runs from now on, else it stays off. Takes about a
    /// hundred ticks, twenty of them spent spinning on the calling thread (a runtime worker,
    /// when retried in the background).
    async fn calibrate(&self) -> bool {
        let shared = self
            .shared
            .as_ref()
            .expect("only a started pump calibrates");
        let _busy = self.busy();
        shared.phase_ns.store(FAST, Ordering::Release);
        if let Some(thread) = shared.thread.get() {
            thread.unpark(); // It may be parked uncalibrated however busy the host is.
        }
        let phase = find_tick_phase(shared.origin).await;
        shared
            .phase_ns
            .store(phase.as_nanos() as u64, Ordering::Release);
        let overrun = median_overrun(shared.origin + phase).await;
        log::debug!(
            "timer pump: ticks begin {phase:?} after the runtime build started; \
             short sleeps end {overrun:?} after their tick (median)"
        );
        if overrun <= CHECK_MAX_OVERRUN {
            return true;
        }
        shared.phase_ns.store(UNCALIBRATED, Ordering::Release);
        false
    }

    /// A pump that never runs: every sleep keeps tokio's own timing.
    pub fn off() -> Self {
        Self { shared: None }
    }

    /// Keeps the pump running until the returned guard is dropped.
    pub fn busy(&self) -> Busy {
        if let Some(shared) = &self.shared
            && shared.busy.fetch_add(1, Ordering::AcqRel) == 0
            && let Some(thread) = shared.thread.get()
        {
            thread.unpark();
        }
        Busy(self.shared.clone())
    }
}

/// Where the runtime's ticks begin, after `origin` modulo a tick, while the pump wakes the
/// driver every few µs: a sleep never ends before its tick begins, and with the driver this
/// busy it ends within a few µs after, so the earliest end is where ticks begin.
async fn find_tick_phase(origin: Instant) -> Duration {
    let mut earliest = TICK;
    for _ in 0..CALIBRATION_SLEEPS {
        tokio::time::sleep(Duration::from_nanos(1)).await;
        let offset = origin.elapsed().as_nanos() % TICK.as_nanos();
        earliest = earliest.min(Duration::from_nanos(offset as u64));
    }
    earliest
}

/// How long short sleeps started at points spread over a tick run past the end of that tick,
/// the median of [`CHECK_SLEEPS`] (ticks begin at `first_tick` and every [`TICK`] after).
async fn median_overrun(first_tick: Instant) -> Duration {
    let mut overruns = Vec::with_capacity(CHECK_SLEEPS as usize);
    for i in 0..CHECK_SLEEPS {
        let into_tick = TICK * (i % 9 + 1) / 10;
        let start = next_tick(first_tick, Instant::now()) + into_tick;
        while Instant::now() < start {
            std::hint::spin_loop();
        }
        tokio::time::sleep(Duration::from_nanos(1)).await;
        let tick_end = start + (TICK - into_tick);
        overruns.push(Instant::now().saturating_duration_since(tick_end));
    }
    overruns.sort_unstable();
    overruns[overruns.len() / 2]
}

/// The pump thread: wakes the driver every few µs while calibrating, then just after each
/// tick begins while busy (and for [`TAIL`] after), once calibrated.
fn pump(shared: &Shared, mut wake: impl FnMut()) {
    let mut idle_since: Option<Instant> = None;
    loop {
        let phase = match shared.phase_ns.load(Ordering::Acquire) {
            UNCALIBRATED => {
                std::thread::park();
                continue;
            }
            FAST => {
                std::thread::sleep(Duration::from_micros(5));
                wake();
                continue;
            }
            phase => Duration::from_nanos(phase),
        };
        if shared.busy.load(Ordering::Acquire) == 0 {
            let since = *idle_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= TAIL {
                std::thread::park();
                continue;
            }
        } else {
            idle_since = None;
        }
        let now = Instant::now();
        let wake_at = next_tick(shared.origin + phase, now) + WAKE_AFTER_TICK;
        std::thread::sleep(wake_at.saturating_duration_since(now));
        wake();
    }
}

/// The first tick to begin after `now`, for ticks that begin at `first_tick` and every [`TICK`]
/// after.
fn next_tick(first_tick: Instant, now: Instant) -> Instant {
    let ticks = now.saturating_duration_since(first_tick).as_millis() as u64;
    first_tick + Duration::from_millis(ticks + 1)
}

/// Lets this thread's sleeps end when asked: Linux otherwise lets a sleep run up to 50 µs
/// late (the timer slack) to batch wake-ups. The project's one `unsafe`: a libc call.
#[allow(unsafe_code)]
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes a number and touches no memory of ours.
    let ret = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if ret != 0 {
        log::warn!(
            "timer pump: PR_SET_TIMERSLACK: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Reads the pump's wake-up bytes; the reading itself is the point.
async fn drain(mut reader: tokio::net::UnixStream) {
    let mut buf = [0u8; 64];
    while let Ok(n) = reader.read(&mut buf).await {
        if n == 0 {
            return;
        }
    }
}

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
//! polls. At start it finds where the ticks begin by watching when short sleeps end, and it runs
//! only while the host has open connections or requests.

use std::io::Write as _;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt as _;

const TICK: Duration = Duration::from_millis(1);

/// How long after a tick begins the pump wakes the driver: the margin for finding the tick's
/// start a little early and for the thread waking a little late.
const WAKE_AFTER_TICK: Duration = Duration::from_micros(10);

/// Short sleeps watched to find where ticks begin (one per tick).
const CALIBRATION_SLEEPS: usize = 50;

/// How long the pump keeps running after the last connection or request ended.
const TAIL: Duration = Duration::from_millis(100);

/// Handle to the pump: [`TimerPump::busy`] while something needs timers on time.
#[derive(Clone)]
pub struct TimerPump {
    /// `None` when the pump is off (`--no-timer-pump`).
    shared: Option<Arc<Shared>>,
}

struct Shared {
    busy: AtomicUsize,
    thread: Thread,
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
    /// about [`CALIBRATION_SLEEPS`] ticks while it finds where the runtime's ticks begin.
    pub fn start(runtime: &tokio::runtime::Runtime, built_after: Instant) -> std::io::Result<Self> {
        let (mut writer, reader) = UnixStream::pair()?;
        writer.set_nonblocking(true)?;
        reader.set_nonblocking(true)?;
        let reader = {
            let _entered = runtime.enter();
            tokio::net::UnixStream::from_std(reader)?
        };
        runtime.spawn(drain(reader));
        let mut wake = move || {
            // A full socket means the driver has unread wake-ups already: nothing is lost.
            let _ = writer.write(&[0]);
        };

        // Calibration: wake the driver every few µs while a task sleeps one tick at a time.
        // A sleep never ends before its tick begins, and with the driver this busy it ends
        // within a few µs after: the earliest end, modulo a tick, is where ticks begin.
        let (first_tick_tx, first_tick_rx) = std::sync::mpsc::channel::<Instant>();
        let (shared_tx, shared_rx) = std::sync::mpsc::channel::<Arc<Shared>>();
        let thread = std::thread::Builder::new()
            .name("timer-pump".into())
            .spawn(move || {
                precise_sleeps();
                let first_tick = loop {
                    match first_tick_rx.try_recv() {
                        Ok(first_tick) => break first_tick,
                        Err(std::sync::mpsc::TryRecvError::Empty) => {}
                        Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
                    }
                    std::thread::sleep(Duration::from_micros(5));
                    wake();
                };
                let Ok(shared) = shared_rx.recv() else { return };
                pump(&shared, first_tick, wake);
            })?;
        let first_tick = runtime.block_on(async move {
            let mut earliest = TICK;
            for _ in 0..CALIBRATION_SLEEPS {
                tokio::time::sleep(Duration::from_nanos(1)).await;
                let offset = built_after.elapsed().as_nanos() % TICK.as_nanos();
                earliest = earliest.min(Duration::from_nanos(offset as u64));
            }
            built_after + earliest
        });
        // The thread only waits on these two channels: neither send can fail.
        let _ = first_tick_tx.send(first_tick);
        let shared = Arc::new(Shared {
            busy: AtomicUsize::new(0),
            thread: thread.thread().clone(),
        });
        let _ = shared_tx.send(shared.clone());
        log::debug!(
            "timer pump: ticks begin {:?} after the runtime build started",
            first_tick - built_after
        );
        Ok(Self {
            shared: Some(shared),
        })
    }

    /// A pump that never runs: every sleep keeps tokio's own timing.
    pub fn off() -> Self {
        Self { shared: None }
    }

    /// Keeps the pump running until the returned guard is dropped.
    pub fn busy(&self) -> Busy {
        if let Some(shared) = &self.shared
            && shared.busy.fetch_add(1, Ordering::AcqRel) == 0
        {
            shared.thread.unpark();
        }
        Busy(self.shared.clone())
    }
}

/// Wakes the driver just after each tick begins, while busy (and for [`TAIL`] after).
fn pump(shared: &Shared, first_tick: Instant, mut wake: impl FnMut()) {
    let mut idle_since: Option<Instant> = None;
    loop {
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
        let ticks = now.saturating_duration_since(first_tick).as_millis() as u64;
        let next_tick = first_tick + Duration::from_millis(ticks + 1);
        std::thread::sleep((next_tick + WAKE_AFTER_TICK).saturating_duration_since(now));
        wake();
    }
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

//! SpacetimeDB's own workloads over the WebSocket: how soon a write reaches a subscriber on
//! another connection, and how many single-edge inserts per second many connections get in
//! (the shape of SpacetimeDB's benchmark suite: 50 connections, uniform or Zipf-skewed keys).

use crate::measure::elapsed_us;
use crate::report::model::{Percentiles, Propagation, Sample, Throughput};
use anyhow::{Context, bail, ensure};
use graph_client::graph::{ClientError, GraphDb, TransportKind};
use graph_client::watch::{Change, watch};
use graph_client::ws::Drive;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(30);

/// `writes` single-edge inserts on `writer`'s connection, each after `idle` and timed from the
/// call until a subscriber on its own connection (confirmed reads `confirmed`) sees the graph's
/// new version. The edges join fresh vertices from `first_id`, so nothing else measured changes.
/// Also returns each measured write as a raw sample.
pub fn propagation(
    writer: &GraphDb,
    confirmed: bool,
    first_id: u64,
    writes: usize,
    idle: Duration,
) -> anyhow::Result<(Propagation, Vec<Sample>)> {
    let subscriber =
        GraphDb::websocket(writer.server().clone(), writer.database(), Some(confirmed));
    let mut changes = watch(&subscriber, None)?;
    let mut version = match changes.next(WAIT) {
        Some(Change::Subscribed { meta: Some(m), .. }) => m.version,
        other => bail!("subscribing to graph_meta: {other:?}"),
    };
    let mut latencies = Vec::with_capacity(writes);
    for i in 0..writes as u64 + 5 {
        if !idle.is_zero() {
            std::thread::sleep(idle);
        }
        let t = Instant::now();
        writer.add_edges(&[first_id + 2 * i], &[first_id + 2 * i + 1])?;
        loop {
            match changes.next(WAIT) {
                Some(Change::Meta(m)) if m.version > version => {
                    version = m.version;
                    break;
                }
                Some(Change::Meta(_)) => {}
                other => bail!("waiting for the write to reach the subscriber: {other:?}"),
            }
        }
        // The first few warm up both connections.
        if i >= 5 {
            latencies.push(elapsed_us(t));
        }
    }
    let workload = format!(
        "write → subscriber, confirmed reads {}",
        if confirmed { "on" } else { "off" }
    );
    let samples = latencies
        .iter()
        .enumerate()
        .map(|(i, &us)| Sample::call(workload.clone(), i, us, None))
        .collect();
    let propagation = Propagation {
        confirmed_reads: confirmed,
        latency: Percentiles::of(&latencies),
    };
    Ok((propagation, samples))
}

/// How the inserts pick their source vertex among `hot` candidates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keys {
    Uniform,
    /// Zipf with exponent `s`: the lower ids are much more likely.
    Zipf(f64),
}

impl Keys {
    pub fn name(self) -> String {
        match self {
            Keys::Uniform => "uniform".into(),
            Keys::Zipf(s) => format!("zipf s={s}"),
        }
    }
}

/// Inverse-CDF sampling of a Zipf distribution over `0..n`.
pub struct Zipf(Vec<f64>);

impl Zipf {
    pub fn new(n: usize, s: f64) -> Self {
        let mut cdf: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
        let mut sum = 0.0;
        for w in &mut cdf {
            sum += *w;
            *w = sum;
        }
        cdf.iter_mut().for_each(|w| *w /= sum);
        Zipf(cdf)
    }

    pub fn sample(&self, rng: &mut impl Rng) -> usize {
        let u: f64 = rng.r#gen();
        self.0.partition_point(|&c| c < u).min(self.0.len() - 1)
    }
}

/// The share of draws that land on the most frequent 1% of keys (the suite's "contention").
fn hot_share(keys: Keys, candidates: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let top = (candidates / 100).max(1);
    let draws = 100_000;
    let hits = match keys {
        Keys::Uniform => (0..draws)
            .filter(|_| rng.gen_range(0..candidates) < top)
            .count(),
        Keys::Zipf(s) => {
            let zipf = Zipf::new(candidates, s);
            (0..draws).filter(|_| zipf.sample(&mut rng) < top).count()
        }
    };
    hits as f64 / draws as f64
}

/// What each call of a [`throughput`] phase does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Calls {
    /// Insert one edge (`add_edges`), its source drawn by `Keys`.
    Inserts(Keys),
    /// Call the empty reducer: the same calls with nothing for the module to do.
    Empty,
}

/// `connections` WebSocket connections (up to `in_flight` calls sent and not yet answered per
/// connection: pipelining, as the clients of SpacetimeDB's suite do) make `inserts` calls
/// between them. With [`Calls::Inserts`] each inserts a distinct single edge, its source drawn
/// by the keys from `candidates` vertices at `first_id`, to a fresh target; afterwards the
/// graph's edge count must have grown by exactly `inserts`: nothing lost. A call's latency runs
/// from its sending until the client has its answer.
///
/// Each answer's callback sends its connection's next call (see [`Pipeline`]), so no thread
/// waits on a call: the client's share of the two cores goes to its sockets and the SDK. Also
/// returns every call as a raw sample (the inserted edge, when it was sent, its latency).
#[allow(clippy::too_many_arguments)]
pub fn throughput(
    db: &GraphDb,
    connections: usize,
    in_flight: usize,
    inserts: usize,
    calls: Calls,
    candidates: usize,
    first_id: u64,
    seed: u64,
) -> anyhow::Result<(Throughput, Vec<Sample>)> {
    ensure!(
        connections > 0 && in_flight > 0 && inserts > 0,
        "nothing to insert"
    );
    // Over HTTP a callback runs inside the call that sends it, so the chain would recurse.
    ensure!(
        db.transport() == TransportKind::Ws,
        "the throughput benchmark runs over the WebSocket"
    );
    let keys = match calls {
        Calls::Inserts(keys) => Some(keys),
        Calls::Empty => None,
    };
    // Only connections with a call to make are opened.
    let opened = connections.min(inserts);
    let links: Vec<GraphDb> = (0..opened)
        .map(|_| db.clone().with_drive(Drive::Background))
        .collect();
    for link in &links {
        link.noop(true).context("opening the connections")?;
    }
    let before = db.info()?.edges;
    let zipf = match keys {
        Some(Keys::Zipf(s)) => Some(Arc::new(Zipf::new(candidates, s))),
        _ => None,
    };
    let (done, finished) = mpsc::channel();
    let answered = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    for (c, link) in links.into_iter().enumerate() {
        let pipeline = Arc::new(Pipeline {
            link,
            calls,
            zipf: zipf.clone(),
            candidates,
            first_id,
            targets: first_id + candidates as u64,
            started,
            end: inserts,
            step: connections,
            state: Mutex::new(PipelineState {
                rng: ChaCha8Rng::seed_from_u64(seed ^ c as u64),
                next: c,
                open: 0,
                calls: Vec::new(),
                error: None,
            }),
            answered: answered.clone(),
            done: done.clone(),
        });
        for _ in 0..in_flight {
            pipeline.send_next();
        }
    }
    let mut calls_made = Vec::with_capacity(inserts);
    let (mut last, mut progress) = (0, Instant::now());
    for _ in 0..opened {
        let ended = loop {
            match finished.recv_timeout(Duration::from_secs(1)) {
                Ok(ended) => break ended,
                Err(_) => {
                    let now = answered.load(Ordering::Relaxed);
                    if now != last {
                        (last, progress) = (now, Instant::now());
                    }
                    ensure!(
                        progress.elapsed() < STALL,
                        "no call answered for {STALL:?} ({now} of {inserts} answered)"
                    );
                }
            }
        };
        calls_made.extend(ended?);
    }
    calls_made.sort_by_key(|c| c.index);
    let seconds = started.elapsed().as_secs_f64();
    let grown = db.info()?.edges - before;
    let expected = if keys.is_some() { inserts as u64 } else { 0 };
    ensure!(
        grown == expected,
        "{inserts} calls acknowledged but the graph grew by {grown} edges, not {expected}"
    );
    let reducer = if keys.is_some() {
        "add_edges"
    } else {
        "noop_reducer"
    };
    let workload = format!(
        "throughput: {reducer}, {} keys, {connections} connections × {in_flight} in flight",
        keys.map_or_else(|| "no".into(), Keys::name),
    );
    let latencies: Vec<f64> = calls_made.iter().map(|c| c.e2e_us).collect();
    let samples = calls_made
        .iter()
        .map(|c| Sample {
            a: c.edge.map(|e| e.0),
            b: c.edge.map(|e| e.1),
            ..Sample::call(workload.clone(), c.index, c.e2e_us, Some(c.at_s))
        })
        .collect();
    let throughput = Throughput {
        reducer: reducer.into(),
        connections,
        in_flight,
        keys: keys.map_or_else(|| "–".into(), Keys::name),
        hot_share: keys.map_or(0.0, |keys| hot_share(keys, candidates, seed)),
        // `reconnect` keeps `db`'s setting; the benchmark opens it with the server's default.
        confirmed_reads: true,
        inserts: inserts as u64,
        seconds,
        per_second: inserts as f64 / seconds,
        latency: Percentiles::of(&latencies),
    };
    Ok((throughput, samples))
}

/// How long a throughput phase may go without an answer before it fails.
const STALL: Duration = Duration::from_secs(60);

/// One connection's share of a [`throughput`] phase: calls `next`, `next + step`, ... below
/// `end`. Every answer's callback (on the client's message thread) records the call's latency
/// and sends the next call, so the connection keeps as many calls in flight as it started with.
struct Pipeline {
    link: GraphDb,
    calls: Calls,
    zipf: Option<Arc<Zipf>>,
    candidates: usize,
    first_id: u64,
    /// Call `i` inserts an edge to the fresh vertex `targets + i`.
    targets: u64,
    /// When the phase began.
    started: Instant,
    end: usize,
    step: usize,
    state: Mutex<PipelineState>,
    /// Calls answered, over all connections (the stall check reads it).
    answered: Arc<AtomicUsize>,
    /// Gets the calls once every call sent has been answered and none is left to send, or the
    /// first error.
    done: mpsc::Sender<anyhow::Result<Vec<Call>>>,
}

/// One answered call of a [`throughput`] phase.
struct Call {
    index: usize,
    /// The edge it inserted (none for the empty reducer).
    edge: Option<(u64, u64)>,
    /// When it was sent, s after the phase began, and how long until its answer, µs.
    at_s: f64,
    e2e_us: f64,
}

struct PipelineState {
    rng: ChaCha8Rng,
    next: usize,
    /// Calls sent and not yet answered.
    open: usize,
    calls: Vec<Call>,
    /// The first failure: no call is sent after it.
    error: Option<anyhow::Error>,
}

impl Pipeline {
    /// Sends the next call, if any is left and none failed.
    fn send_next(self: &Arc<Self>) {
        let (i, src) = {
            let mut state = self.state.lock().unwrap();
            if state.next >= self.end || state.error.is_some() {
                return;
            }
            let i = state.next;
            state.next += self.step;
            state.open += 1;
            let drawn = match &self.zipf {
                Some(z) => z.sample(&mut state.rng),
                None => state.rng.gen_range(0..self.candidates),
            };
            (i, self.first_id + drawn as u64)
        };
        let me = self.clone();
        let dst = self.targets + i as u64;
        let edge = matches!(self.calls, Calls::Inserts(_)).then_some((src, dst));
        let sent_at = Instant::now();
        let then = move |outcome: Result<(), ClientError>| {
            me.answered(outcome.map(|()| Call {
                index: i,
                edge,
                at_s: (sent_at - me.started).as_secs_f64(),
                e2e_us: elapsed_us(sent_at),
            }))
        };
        let sent = match self.calls {
            Calls::Inserts(_) => self.link.add_edges_then(&[src], &[dst], then),
            Calls::Empty => self.link.noop_reducer_then(then),
        };
        if let Err(e) = sent {
            self.answered(Err(e));
        }
    }

    /// Takes one call's outcome, then sends the next call or, if this was the last open one,
    /// reports.
    fn answered(self: &Arc<Self>, outcome: Result<Call, ClientError>) {
        self.answered.fetch_add(1, Ordering::Relaxed);
        let mut state = self.state.lock().unwrap();
        state.open -= 1;
        match outcome {
            Ok(call) => state.calls.push(call),
            Err(e) => {
                state.error.get_or_insert(e.into());
            }
        }
        if state.error.is_none() && state.next < self.end {
            drop(state);
            self.send_next();
        } else if state.open == 0 {
            let report = match state.error.take() {
                Some(e) => Err(e),
                None => Ok(std::mem::take(&mut state.calls)),
            };
            let _ = self.done.send(report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_is_skewed_and_uniform_is_not() {
        let uniform = hot_share(Keys::Uniform, 10_000, 1);
        let zipf = hot_share(Keys::Zipf(1.1), 10_000, 1);
        assert!((0.005..0.015).contains(&uniform), "{uniform}");
        assert!(zipf > 0.6, "{zipf}");
        let z = Zipf::new(3, 1.0);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut counts = [0; 3];
        for _ in 0..30_000 {
            counts[z.sample(&mut rng)] += 1;
        }
        // Weights 1, 1/2, 1/3 of 11/6.
        assert!(
            (counts[0] as f64 / 30_000.0 - 6.0 / 11.0).abs() < 0.02,
            "{counts:?}"
        );
        assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
    }
}

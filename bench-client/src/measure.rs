//! The warm-up/measure loop every benchmark runs, on every system alike: the clock covers the
//! system's call and nothing else; the answer is verified after the clock has stopped.

use crate::report::model::Sample;
use crate::system::{Query, Reply, System};
use crate::workloads::Workload;
use anyhow::Context;
use std::time::{Duration, Instant};

/// What one measured call returned, and how long the call alone took.
#[derive(Debug)]
pub struct Timed<T> {
    pub e2e_us: f64,
    pub value: T,
}

/// How the loop calls: `warmup` unmeasured calls first, and `idle` of doing nothing before
/// every call (outside the clock). Back to back (`idle` zero) is a busy client's pattern; an
/// idle pause is that of an application that calls now and then, and it matters to SpacetimeDB
/// 2.14, whose send worker delays a result that follows the previous one within about a
/// millisecond (results/README.md).
#[derive(Debug, Clone, Copy, Default)]
pub struct Pace {
    pub warmup: usize,
    pub idle: Duration,
}

impl Pace {
    /// `warmup` calls, then back to back.
    pub fn warmup(warmup: usize) -> Self {
        Self {
            warmup,
            idle: Duration::ZERO,
        }
    }
}

/// µs since `t`, from whole nanoseconds, so that the samples files print µs without float
/// noise.
pub fn elapsed_us(t: Instant) -> f64 {
    t.elapsed().as_nanos() as f64 / 1e3
}

/// Calls `call`, returning its outcome, when it began (s after `started`) and how long it took
/// (µs): a call made while others run, as the phases that time writes record it.
pub fn clocked<T>(started: Instant, call: impl FnOnce() -> T) -> (T, f64, f64) {
    let t = Instant::now();
    let outcome = call();
    (outcome, (t - started).as_secs_f64(), elapsed_us(t))
}

/// Calls `call` on `pace.warmup` inputs (cycling through them), unmeasured, then once on each
/// input in order, timed, each call after `pace.idle`: the `i`-th result is `inputs[i]`'s. The
/// clock stops as `call` returns: every result, warm-up ones included, is passed to `check`
/// only after that. A failed call or check ends the loop with its error.
pub fn measure<I, T>(
    inputs: &[I],
    pace: Pace,
    mut call: impl FnMut(&I) -> anyhow::Result<T>,
    mut check: impl FnMut(&I, &T) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<Timed<T>>> {
    let mut timed_call = |input: &I| -> anyhow::Result<Timed<T>> {
        if !pace.idle.is_zero() {
            std::thread::sleep(pace.idle);
        }
        let started = Instant::now();
        let value = call(input);
        let e2e_us = elapsed_us(started);
        let value = value?;
        check(input, &value)?;
        Ok(Timed { e2e_us, value })
    };
    for input in inputs.iter().cycle().take(pace.warmup) {
        timed_call(input)?;
    }
    inputs.iter().map(timed_call).collect()
}

/// A system that failed to answer a query (an engine error, not a wrong answer): a peer's
/// failure is reported as such, and the run goes on without the rest of that workload.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoAnswer(pub String);

/// An answer that verification refused: a peer's is reported, as a wrong answer, and the run
/// goes on without the rest of that workload; SpacetimeDB's fails the run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct WrongAnswer(pub String);

/// Asks `system` each of `workload`'s `queries` (after `warmup` unmeasured ones) and returns
/// one sample per query. `check` verifies each reply (see `verify::verify`); a wrong answer
/// ends the loop with a [`WrongAnswer`] naming the system, the workload and the query, and a
/// failed call with a [`NoAnswer`].
///
/// A sample's time is the client's clock around the call, except for a system that measured
/// the call in the engine's own process ([`crate::system::Answer::in_process_ns`]: Kuzu behind
/// its worker's pipe), whose time is that one, with the client's clock kept beside it.
pub fn benchmark(
    system: &mut dyn System,
    workload: Workload,
    queries: &[Query],
    pace: Pace,
    mut check: impl FnMut(&Query, &Reply) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<Sample>> {
    let name = system.name();
    let timed = measure(
        queries,
        pace,
        |query| {
            system.answer(query).map_err(|e| {
                anyhow::Error::new(NoAnswer(format!(
                    "{name}, {workload}: {query} failed: {e:#}"
                )))
            })
        },
        |query, answer| {
            check(query, &answer.reply).with_context(|| {
                WrongAnswer(format!("{name}, {workload}: wrong answer to {query}"))
            })
        },
    )?;
    Ok(queries
        .iter()
        .zip(timed)
        .enumerate()
        .map(|(index, (query, timed))| {
            let (a, b) = query.input();
            let (e2e_us, client_us) = match timed.value.in_process_ns {
                Some(ns) => (ns as f64 / 1e3, Some(timed.e2e_us)),
                None => (timed.e2e_us, None),
            };
            Sample {
                system: name.to_string(),
                workload: workload.to_string(),
                index,
                a: Some(a),
                b,
                e2e_us,
                server_us: timed.value.server_us,
                client_us,
                at_s: None,
                stats: timed.value.stats,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::fake::Fake;
    use crate::verify::verify;
    use graph_client::graph::Direction;
    use graph_reference::ReferenceGraph;

    fn neighbor_queries(vertices: &[u64]) -> Vec<Query> {
        Workload::NeighborCount.queries(vertices, &[], Direction::Both, 0, &[], 0)
    }

    /// An engine error is a `NoAnswer`, a refused answer a `WrongAnswer` (a peer's are
    /// reported, each as what it is, and the run goes on).
    #[test]
    fn failures_are_told_apart_from_wrong_answers() {
        let queries = neighbor_queries(&[1, 2]);
        let mut failing = Fake::new("failing", Reply::Count(1));
        failing.fails = true;
        let e = benchmark(
            &mut failing,
            Workload::NeighborCount,
            &queries,
            Pace::warmup(0),
            |_, _| Ok(()),
        )
        .unwrap_err();
        assert!(
            e.is::<NoAnswer>() && e.to_string().contains("gave up"),
            "{e:#}"
        );
        let mut wrong = Fake::new("wrong", Reply::Count(1));
        let e = benchmark(
            &mut wrong,
            Workload::NeighborCount,
            &queries,
            Pace::warmup(0),
            |_, _| anyhow::bail!("not 1"),
        )
        .unwrap_err();
        assert!(!e.is::<NoAnswer>() && e.is::<WrongAnswer>(), "{e:#}");
        assert!(format!("{e:#}").ends_with("wrong answer to neighbors of 1 (both): not 1"));
    }

    /// The regression test for peers' figures that included their verification: a system that
    /// answers at once, checked by a verifier that takes 50 ms, must be measured far below it.
    #[test]
    fn the_clock_stops_before_verification() {
        let mut fast = Fake::new("fast", Reply::Count(1));
        let mut checks = 0;
        let slow_check = |_: &Query, _: &Reply| {
            checks += 1;
            std::thread::sleep(Duration::from_millis(50));
            Ok(())
        };
        let queries = neighbor_queries(&[1, 2, 3, 4]);
        let samples = benchmark(
            &mut fast,
            Workload::NeighborCount,
            &queries,
            Pace::warmup(2),
            slow_check,
        )
        .unwrap();
        assert_eq!(checks, 6, "every answer, warm-up ones too, is verified");
        assert_eq!(samples.len(), 4);
        for s in &samples {
            assert!(s.e2e_us < 25_000.0, "verification was timed: {s:?}");
        }
    }

    /// The other side: the clock does cover the system's call.
    #[test]
    fn the_clock_covers_the_call_and_warm_up_is_not_recorded() {
        let mut slow = Fake::new("slow", Reply::Count(1));
        slow.delay = Duration::from_millis(20);
        let pairs = [(1, 2), (3, 4), (5, 6)];
        let queries = Workload::ShortestPath.queries(&[], &pairs, Direction::Out, 0, &[], 0);
        let samples = benchmark(
            &mut slow,
            Workload::ShortestPath,
            &queries,
            Pace::warmup(2),
            |_, _| Ok(()),
        )
        .unwrap();
        assert_eq!(slow.calls, 5);
        let recorded: Vec<(usize, Option<u64>, Option<u64>)> =
            samples.iter().map(|s| (s.index, s.a, s.b)).collect();
        assert_eq!(
            recorded,
            [
                (0, Some(1), Some(2)),
                (1, Some(3), Some(4)),
                (2, Some(5), Some(6))
            ]
        );
        for s in &samples {
            assert!(s.e2e_us >= 20_000.0, "the call was not timed: {s:?}");
            assert_eq!((s.system.as_str(), s.workload.as_str()), ("slow", "path"));
            assert_eq!(s.server_us, Some(1));
        }
    }

    /// Measured results come in the inputs' order whatever the warm-up, so that a sample names
    /// the query it answered (warm-up once shifted them by its length).
    #[test]
    fn each_result_is_its_inputs_after_any_warm_up() {
        for warmup in [0, 1, 2, 3, 7] {
            let mut called = Vec::new();
            let timed = measure(
                &[10, 20, 30],
                Pace::warmup(warmup),
                |&x| {
                    called.push(x);
                    Ok(x)
                },
                |&x, &answer| {
                    anyhow::ensure!(x == answer);
                    Ok(())
                },
            )
            .unwrap();
            let values: Vec<i32> = timed.iter().map(|t| t.value).collect();
            assert_eq!(values, [10, 20, 30], "warm-up {warmup}");
            assert_eq!(called.len(), warmup + 3);
            assert_eq!(called[warmup..], [10, 20, 30]);
        }
    }

    /// An idle pause precedes every call, warm-up ones too, and stays outside the clock.
    #[test]
    fn the_idle_pause_precedes_each_call_and_is_not_timed() {
        let mut fast = Fake::new("fast", Reply::Count(1));
        let queries = neighbor_queries(&[1, 2, 3]);
        let pace = Pace {
            warmup: 1,
            idle: Duration::from_millis(20),
        };
        let started = Instant::now();
        let samples = benchmark(
            &mut fast,
            Workload::NeighborCount,
            &queries,
            pace,
            |_, _| Ok(()),
        )
        .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(80),
            "4 pauses of 20 ms"
        );
        assert_eq!(fast.calls, 4);
        for s in &samples {
            assert!(s.e2e_us < 10_000.0, "the pause was timed: {s:?}");
        }
    }

    /// A system that measured the call in its own process (Kuzu's worker) is recorded at that
    /// time, with the client's clock, which includes its pipe, kept beside it; and its answer
    /// is still verified after the clock has stopped.
    #[test]
    fn an_in_process_time_replaces_the_clients_and_keeps_it_beside() {
        let mut piped = Fake::new("piped", Reply::Count(1));
        piped.delay = Duration::from_millis(20);
        piped.in_process_ns = Some(1_234_500);
        let mut checks = 0;
        let queries = neighbor_queries(&[1, 2]);
        let samples = benchmark(
            &mut piped,
            Workload::NeighborCount,
            &queries,
            Pace::warmup(1),
            |_, _| {
                checks += 1;
                std::thread::sleep(Duration::from_millis(30));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(checks, 3);
        for s in &samples {
            assert_eq!(s.e2e_us, 1234.5, "{s:?}");
            let client = s.client_us.expect("the client's clock is kept");
            assert!((20_000.0..50_000.0).contains(&client), "{s:?}");
        }
        let mut plain = Fake::new("plain", Reply::Count(1));
        let samples = benchmark(
            &mut plain,
            Workload::NeighborCount,
            &queries,
            Pace::warmup(0),
            |_, _| Ok(()),
        )
        .unwrap();
        assert!(samples.iter().all(|s| s.client_us.is_none()), "{samples:?}");
    }

    #[test]
    fn a_wrong_answer_fails_naming_system_workload_and_query() {
        let reference = ReferenceGraph::new([(1, 2), (2, 3), (3, 1)]);
        let mut wrong = Fake::new("wrong", Reply::Count(5));
        let err = benchmark(
            &mut wrong,
            Workload::NeighborCount,
            &neighbor_queries(&[2]),
            Pace::warmup(0),
            |q, r| verify(&reference, q, r),
        )
        .unwrap_err();
        let message = format!("{err:#}");
        assert!(
            message.contains("wrong, neighbors: wrong answer to neighbors of 2 (both)")
                && message.contains("Count(5)"),
            "{message}"
        );
        let mut right = Fake::new("right", Reply::Count(2));
        let queries = neighbor_queries(&[1, 2, 3]);
        let samples = benchmark(
            &mut right,
            Workload::NeighborCount,
            &queries,
            Pace::warmup(1),
            |q, r| verify(&reference, q, r),
        )
        .unwrap();
        assert_eq!(samples.len(), 3);
    }
}

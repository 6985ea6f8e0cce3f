//! The report as Markdown: the heading, the results table, the cross-system comparison and the
//! writers table (Markdown also reads well in a terminal), and the document that links the
//! charts.

use super::model::{NATIVE, Report, SYSTEMS, Summary, SystemLoad, is_peer, mode_of};
use std::fmt::Write as _;

/// Human-friendly duration from µs.
pub fn fmt_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else if us >= 1.0 {
        format!("{us:.0} µs")
    } else {
        // The native floor's neighbor count takes well under a microsecond.
        format!("{us:.2} µs")
    }
}

/// The whole Markdown file: command, heading, tables, links to the raw samples files, then
/// each chart (`samples` and `charts` are file names beside the document).
pub fn document(report: &Report, samples: &[String], charts: &[String]) -> String {
    let mut text = format!(
        "# Benchmark: {}\n\n```\n{}\n{}```\n\n{}",
        report.environment.dataset,
        report.environment.command,
        heading(report),
        table(report)
    );
    if !samples.is_empty() {
        let links: Vec<String> = samples.iter().map(|f| format!("[{f}]({f})")).collect();
        let _ = write!(
            text,
            "\nRaw samples, one row per measured call (system, workload, index, inputs a and b, \
             e2e_us, server_us, for the mixed workload when the call began, and the module's query \
             stats when it sent them): {}.\n",
            links.join(", ")
        );
    }
    for name in charts {
        let alt = name.trim_end_matches(".png");
        let _ = write!(text, "\n![{alt}]({})\n", name.replace(' ', "%20"));
    }
    text
}

/// The heading lines: dataset, load rate, machine.
pub fn heading(report: &Report) -> String {
    let e = &report.environment;
    let mut h = format!(
        "dataset {} (seed {}): {} vertices, {} edges, max degree {}, mean degree {:.2}; direction {}\n",
        e.dataset, e.seed, e.vertices, e.edges, e.max_degree, e.mean_degree, e.direction
    );
    let websocket = (report.results.iter()).any(|r| Some(r.mode.as_str()) == mode_of("stdb"));
    if websocket && e.idle_ms == Some(0.0) {
        h.push_str(
            "stdb's calls were made back to back: over the 2.14 WebSocket such calls take about \
             1 ms each whatever they do (the README's \"calls back to back\"); --idle-ms 3 \
             measures calls made after a pause\n",
        );
    }
    if let Some(m) = e.path_pairs {
        let _ = writeln!(
            h,
            "shortest-path pairs: {} with a path, {} without one, {} naming an unknown vertex{}",
            m.reachable,
            m.unreachable,
            m.unknown,
            if m.unknown > m.reachable + m.unreachable {
                " (the graph gave too few of the others: these figures mostly time lookups of unknown vertices)"
            } else {
                ""
            }
        );
    }
    for l in &report.loads {
        let shared = if l.shared_by.is_empty() {
            String::new()
        } else {
            format!("; also read by {}", l.shared_by.join(", "))
        };
        let _ = writeln!(
            h,
            "load ({}{shared}): {} edges in {:.2} s = {:.0} edges/s",
            l.system, l.load.edges_sent, l.load.seconds, l.load.edges_per_second
        );
    }
    for system in &report.systems {
        let _ = writeln!(h, "system {system}");
    }
    let _ = writeln!(
        h,
        "server: {} at {}; machine: {} cores, {:.1} GiB; {}",
        e.server_kind, e.server_url, e.cores, e.memory_gib, e.date_utc
    );
    h
}

/// The results table, then the cross-system comparison (when peers ran) and the writers table
/// (when contention was measured).
pub fn table(report: &Report) -> String {
    let mut t = String::new();
    t.push_str(
        "Percentiles by nearest rank: of fewer than 100 samples, p99 is the largest (= max).\n\n",
    );
    t.push_str("| workload | mode | runs | p50 | p90 | p99 | max | server p50 | longest tx (max) | tx over 5 ms | tx p50 | yields p50 | edges scanned p50 | from snapshot |\n");
    t.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for s in &report.results {
        let procedure = s.max_hold.count > 0;
        let opt = |v: String| if procedure { v } else { "–".to_string() };
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.workload,
            s.mode,
            s.e2e.count,
            fmt_us(s.e2e.p50),
            fmt_us(s.e2e.p90),
            fmt_us(s.e2e.p99),
            fmt_us(s.e2e.max),
            if s.server.count > 0 {
                fmt_us(s.server.p50)
            } else {
                "–".into()
            },
            opt(fmt_us(s.worst_hold_us as f64)),
            opt(format!("{} of {}", s.slow_transactions, s.transactions)),
            opt(format!("{}", s.transactions_p50)),
            opt(format!("{}", s.yields_p50)),
            opt(format!("{}", s.edges_scanned_p50)),
            // Of the answers that carry the module's stats (an unknown vertex's carries none).
            opt(format!("{} of {}", s.from_snapshot, s.max_hold.count)),
        );
    }
    let systems = comparison(&report.results, &report.loads);
    if !systems.is_empty() {
        t.push('\n');
        t.push_str(&systems);
    }
    if !report.contention.is_empty() {
        t.push_str("\n| writer (single-edge insert) while | traversals done | p50 | p99 | max | idle p50 | idle p99 |\n");
        t.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
        for c in &report.contention {
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {} | {} | {} |",
                c.traversal,
                c.traversals,
                fmt_us(c.busy.p50),
                fmt_us(c.busy.p99),
                fmt_us(c.busy.max),
                fmt_us(c.idle.p50),
                fmt_us(c.idle.p99)
            );
        }
    }
    mixed(&mut t, &report.mixed);
    if !report.snapshots.is_empty() {
        t.push_str("\n| in-memory snapshot (at the end of the run, else after SpacetimeDB's workloads) | version | edges | heap bytes (allocator) | bytes per edge | instance memory |\n");
        t.push_str("|---|---:|---:|---:|---:|---:|\n");
        for (i, m) in report.snapshots.iter().enumerate() {
            let _ = writeln!(
                t,
                "| instance {} | {} | {} | {:.1} MiB | {:.1} | {:.1} MiB |",
                i + 1,
                m.version,
                m.edges,
                m.bytes as f64 / 1048576.0,
                m.bytes as f64 / m.edges.max(1) as f64,
                m.instance_memory_bytes as f64 / 1048576.0
            );
        }
    }
    if !report.under_writes.is_empty() {
        t.push_str("\n| traversal while writing | edges/s aimed (achieved) | traversals | p50 | p99 | from snapshot | one version | changes applied p50 | catch-up p50 (p99) | writer p50 | writer p99 | writer max |\n");
        t.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for w in &report.under_writes {
            let _ = writeln!(
                t,
                "| {} | {} ({:.0}) | {} | {} | {} | {} | {} | {:.0} | {} ({}) | {} | {} | {} |",
                w.traversal,
                w.rate,
                w.changes_per_second,
                w.latency.count,
                fmt_us(w.latency.p50),
                fmt_us(w.latency.p99),
                w.from_snapshot,
                w.pinned,
                w.changes_applied.p50,
                fmt_us(w.catch_up_us.p50),
                fmt_us(w.catch_up_us.p99),
                fmt_us(w.writer.p50),
                fmt_us(w.writer.p99),
                fmt_us(w.writer.max)
            );
        }
    }
    if !report.propagation.is_empty() {
        t.push_str(
            "\n| write → subscriber (WebSocket) | confirmed reads | writes | p50 | p99 | max |\n",
        );
        t.push_str("|---|---|---:|---:|---:|---:|\n");
        for p in &report.propagation {
            let _ = writeln!(
                t,
                "| single-edge add_edges until the subscriber sees graph_meta change | {} | {} | {} | {} | {} |",
                on_off(p.confirmed_reads),
                p.latency.count,
                fmt_us(p.latency.p50),
                fmt_us(p.latency.p99),
                fmt_us(p.latency.max)
            );
        }
    }
    if !report.throughput.is_empty() {
        t.push_str("\n| concurrent single-call reducers (WebSocket) | reducer | in flight per connection | keys | hottest 1% share | confirmed reads | calls (inserts all counted) | calls/s | call p50 | call p99 |\n");
        t.push_str("|---|---|---:|---|---:|---|---:|---:|---:|---:|\n");
        for x in &report.throughput {
            let _ = writeln!(
                t,
                "| {} connections | {} | {} | {} | {:.0}% | {} | {} | {:.0} | {} | {} |",
                x.connections,
                x.reducer,
                x.in_flight,
                x.keys,
                x.hot_share * 100.0,
                on_off(x.confirmed_reads),
                x.inserts,
                x.per_second,
                fmt_us(x.latency.p50),
                fmt_us(x.latency.p99)
            );
        }
    }
    t
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// The cross-system table in the reference's shape: rows are load, neighbor count, full BFS and
/// shortest path (p50), columns the systems present, then "stdb vs best peer" (the best peer's
/// p50 divided by Stage 2's: above 1× Stage 2 is faster) and, when the native floor ran, "stdb ÷
/// native floor" (Stage 2's p50 divided by the floor's: how far from its limit). Empty if
/// neither a peer nor the floor ran.
pub fn comparison(results: &[Summary], loads: &[SystemLoad]) -> String {
    let present: Vec<&str> = SYSTEMS
        .iter()
        .filter(|(s, m)| results.iter().any(|r| r.mode == *m) || loads.iter().any(|l| l.serves(s)))
        .map(|(s, _)| *s)
        .collect();
    let floor = present.contains(&NATIVE);
    let peers = present.iter().any(|s| is_peer(s));
    if !floor && !peers {
        return String::new();
    }
    let mut t = String::from("| metric (p50) |");
    for s in &present {
        let _ = write!(t, " {s} |");
    }
    t.push_str(" stdb vs best peer |");
    if floor {
        t.push_str(" stdb ÷ native floor |");
    }
    t.push_str("\n|---|");
    t.push_str(&"---:|".repeat(present.len() + 1 + usize::from(floor)));
    t.push('\n');

    let load_us = |system: &str| {
        loads
            .iter()
            .find(|l| l.serves(system))
            .map(|l| l.load.seconds * 1e6)
    };
    let mut row = |name: &str, value: &dyn Fn(&str) -> Option<f64>| {
        let _ = write!(t, "| {name} |");
        for s in &present {
            let cell = value(s).map_or_else(|| "–".to_string(), fmt_us);
            let _ = write!(t, " {cell} |");
        }
        let best_peer = present
            .iter()
            .filter(|s| is_peer(s))
            .filter_map(|s| value(s))
            .fold(None, |best: Option<f64>, v| {
                Some(best.map_or(v, |b| b.min(v)))
            });
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
            _ => "–".to_string(),
        };
        let _ = write!(t, " {} |", ratio(best_peer, value("stdb")));
        if floor {
            let _ = write!(t, " {} |", ratio(value("stdb"), value(NATIVE)));
        }
        t.push('\n');
    };
    row("load", &load_us);
    for (workload, name) in [
        ("neighbors", "neighbor count"),
        ("bfs", "BFS full"),
        ("bfs-depth", "BFS depth-bounded"),
        ("path", "shortest path"),
        ("bfs-labels", "BFS depth-bounded, half the labels"),
        ("bfs-labels-all", "BFS depth-bounded, every label named"),
        ("wpath", "weighted shortest path"),
    ] {
        // The label and weight workloads only when measured (older reports have none).
        let newer = ["bfs-labels", "bfs-labels-all", "wpath"].contains(&workload);
        if newer && !results.iter().any(|r| r.workload == workload) {
            continue;
        }
        row(name, &|system: &str| {
            let mode = mode_of(system)?;
            results
                .iter()
                .find(|r| r.workload == workload && r.mode == mode)
                .map(|r| r.e2e.p50)
        });
    }
    if peers {
        t.push_str(
            "\n\"stdb vs best peer\" is the fastest peer's p50 divided by stdb's (the SDK's \
             WebSocket): above 1×, stdb is faster.",
        );
        if present.contains(&"kuzu") {
            t.push_str(
                " Every system is timed round trip from this client, except kuzu, which is \
                 embedded: it is timed in its worker process, around the query alone (its \
                 system line says so).",
            );
        }
    }
    if floor {
        t.push_str(
            "\n\"stdb ÷ native floor\" is stdb's p50 divided by the floor's: how far stdb is \
             above its lower limit.",
        );
    }
    t.push('\n');
    t
}

/// MiB from bytes, for the memory and disk columns.
fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / 1048576.0)
}

/// ", after a N s warm-up" when the mixed workload had one.
fn warmed(warmup_s: f64) -> String {
    if warmup_s > 0.0 {
        format!(" after a {warmup_s:.0} s warm-up (not counted; the memory curve includes it)")
    } else {
        String::new()
    }
}

/// The mixed workload: each system side by side (its worst write and reads), then each run in
/// full.
fn mixed(t: &mut String, runs: &[super::model::Mixed]) {
    if runs.is_empty() {
        return;
    }
    let op = |m: &super::model::Mixed, name: &str| m.ops.iter().find(|o| o.op == name).cloned();
    let _ = writeln!(
        t,
        "\nMixed workload side by side: {} writers ({} ms apart) and {} readers for {:.0} s per \
         run{}; latency p99 (writes: max), memory at the end (PSS of the server's processes: the \
         whole server, every database it holds), data on disk at the end (–: not measured; a \
         server in memory has none)\n",
        runs[0].writers,
        runs[0].write_delay_ms,
        runs[0].readers,
        runs[0].seconds,
        warmed(runs[0].warmup_s)
    );
    t.push_str("| system | keys | writes/s | add max | remove max | reads/s | neighbor count p99 | BFS depth 2 p99 | shortest path p99 | memory | disk |\n");
    t.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for m in runs {
        let writes: f64 = ["add edge", "remove edge"]
            .iter()
            .filter_map(|n| op(m, n))
            .map(|o| o.per_second)
            .sum();
        let reads: f64 = [
            "neighbor count",
            "list neighbors",
            "BFS depth 2",
            "shortest path",
        ]
        .iter()
        .filter_map(|n| op(m, n))
        .map(|o| o.per_second)
        .sum();
        let max = |n: &str| op(m, n).map_or("–".into(), |o| fmt_us(o.latency.max));
        let p99 = |n: &str| op(m, n).map_or("–".into(), |o| fmt_us(o.latency.p99));
        let _ = writeln!(
            t,
            "| {} | {} | {writes:.0} | {} | {} | {reads:.0} | {} | {} | {} | {} | {} |",
            m.system,
            m.keys,
            max("add edge"),
            max("remove edge"),
            p99("neighbor count"),
            p99("BFS depth 2"),
            p99("shortest path"),
            m.memory_end.map_or("–".into(), mib),
            m.disk_bytes.map_or("–".into(), mib),
        );
    }
    for m in runs {
        let memory = match (m.memory_start, m.memory_end) {
            (Some(a), Some(b)) => format!("; server memory {} → {}", mib(a), mib(b)),
            _ => String::new(),
        };
        let _ = writeln!(
            t,
            "\nMixed workload on {}, {} keys: {} writers ({} ms apart) and {} readers for {:.0} s{}, {} writes acknowledged (warm-up included) and accounted for{memory}\n",
            m.system,
            m.keys,
            m.writers,
            m.write_delay_ms,
            m.readers,
            m.seconds,
            warmed(m.warmup_s),
            m.acked_writes
        );
        if !m.memory_curve.is_empty() {
            // About ten samples of the curve, evenly spaced.
            let every = m.memory_curve.len().div_ceil(10);
            let points: Vec<String> = m
                .memory_curve
                .iter()
                .step_by(every)
                .map(|&(s, b)| format!("{s:.0} s: {:.0}", b as f64 / 1048576.0))
                .collect();
            let _ = writeln!(t, "Server memory, MiB: {}\n", points.join(", "));
        }
        t.push_str("| operation | count | min | mean | p50 | p99 | max | total | per s |\n");
        t.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for o in &m.ops {
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {} | {} | {} | {:.1} s | {:.0} |",
                o.op,
                o.count,
                fmt_us(o.min),
                fmt_us(o.latency.mean),
                fmt_us(o.latency.p50),
                fmt_us(o.latency.p99),
                fmt_us(o.latency.max),
                o.total_s,
                o.per_second
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::fixtures::row;

    /// Whole microseconds (the engine's clock), but the native floor's sub-microsecond calls
    /// with two decimals rather than as 0.
    #[test]
    fn times_below_a_microsecond_keep_two_decimals() {
        assert_eq!(fmt_us(0.071), "0.07 µs");
        assert_eq!(fmt_us(0.999), "1.00 µs");
        assert_eq!(fmt_us(1.0), "1 µs");
        assert_eq!(fmt_us(9.6), "10 µs");
        assert_eq!(fmt_us(1_500.0), "1.50 ms");
    }

    /// The heading warns of the WebSocket's floor for calls back to back, and only then.
    #[test]
    fn the_heading_says_when_calls_were_back_to_back() {
        let mut report = crate::report::model::fixtures::report(
            vec![row("path", "stage2", [900.0; 4], None)],
            Vec::new(),
        );
        assert!(heading(&report).contains("calls were made back to back"));
        report.environment.idle_ms = Some(3.0);
        assert!(!heading(&report).contains("back to back"));
        report.environment.idle_ms = None;
        assert!(
            !heading(&report).contains("back to back"),
            "an older report"
        );
        report.environment.idle_ms = Some(0.0);
        report.results[0].mode = "stage2-http".into();
        assert!(!heading(&report).contains("back to back"));
    }

    /// The native floor gets a column of its own: Stage 2's p50 over the floor's. It is not a
    /// peer, so "best peer" ignores it.
    #[test]
    fn the_native_floor_is_a_limit_not_a_peer() {
        let e2e = |p50: f64| [p50, p50, p50, p50];
        let results = vec![
            row("bfs", "stage2", e2e(40_000.0), None),
            row("bfs", "native", e2e(10_000.0), None),
            row("bfs", "postgres", e2e(80_000.0), None),
            row("path", "stage2", e2e(1_000.0), None),
            row("path", "native", e2e(100.0), None),
        ];
        let t = comparison(&results, &[]);
        assert!(
            t.starts_with("| metric (p50) | stdb | postgres | native | stdb vs best peer | stdb ÷ native floor |"),
            "{t}"
        );
        let line = |name: &str| {
            t.lines()
                .find(|l| l.starts_with(&format!("| {name} |")))
                .unwrap()
        };
        assert!(line("BFS full").ends_with("| 2.00× | 4.00× |"), "{t}");
        assert!(line("shortest path").ends_with("| – | 10.00× |"), "{t}");
        // A legend says which way each ratio runs.
        assert!(
            t.contains("above 1×, stdb is faster") && t.contains("above its lower limit"),
            "{t}"
        );
        // Without the floor or a peer there is nothing to compare.
        assert_eq!(comparison(&results[..1], &[]), "");
        let floor_only = comparison(&results[..2], &[]);
        assert!(floor_only.contains("| – | 4.00× |"), "{floor_only}");
        assert!(!floor_only.contains("best peer\" is"), "{floor_only}");
    }
}

//! `export_page` on the real host: an export (pages of one transaction each) must give back
//! exactly the graph at the version it names, with labels, weights and vertices without
//! edges, at any page size and over both transports; also while a writer changes the graph
//! between its pages, and when a bulk write makes that version unreadable (refused, and the
//! client's export starts again); with exports at several versions taking turns; and through
//! more writes than the change log keeps, which an export holds it for, up to a limit.

use graph_client::graph::{ClientError, ExportCursor, ExportPage, GraphDb, GraphError};
use graph_testkit::TestHost;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

const LABELS: [&str; 5] = ["", "follows", "a, \"b\"", " x ", "ünï"];

/// The graph as the test keeps it: edges with label and weight, vertices with label.
#[derive(Debug, Clone, Default, PartialEq)]
struct Model {
    edges: BTreeMap<(u64, u64), (String, f32)>,
    vertices: BTreeMap<u64, String>,
}

impl Model {
    fn add_edge(&mut self, s: u64, d: u64, label: &str, weight: f32) {
        self.edges.insert((s, d), (label.to_string(), weight));
        for v in [s, d] {
            self.vertices.entry(v).or_default();
        }
    }

    fn remove_vertex(&mut self, v: u64) {
        self.vertices.remove(&v);
        self.edges.retain(|&(s, d), _| s != v && d != v);
    }
}

/// A random graph: sparse ids, some at the top of u64 (`wide_edge` rows), a hub, self-loops,
/// vertices without edges, labels with commas, quotes and spaces.
fn random_model(rng: &mut ChaCha8Rng) -> Model {
    let n = rng.gen_range(0..60u64);
    let id = |i: u64| match i % 5 {
        4 => u64::MAX - i,
        _ => i * 1_000_003 % 5_000_000,
    };
    let mut m = Model::default();
    for _ in 0..rng.gen_range(0..n * 4 + 1) {
        let a = if rng.gen_bool(0.3) {
            0
        } else {
            rng.gen_range(0..n)
        };
        let (s, d) = (id(a), id(rng.gen_range(0..n)));
        let label = LABELS[rng.gen_range(0..LABELS.len())];
        let weight = [0.0, 1.0, 2.5, 1e-30, 7.125][rng.gen_range(0..5)];
        m.add_edge(s, d, label, weight);
    }
    for i in 0..n {
        if rng.gen_bool(0.3) {
            m.vertices
                .insert(id(i), LABELS[rng.gen_range(0..LABELS.len())].to_string());
        }
    }
    m
}

fn load(db: &GraphDb, m: &Model) {
    db.clear().unwrap();
    let names: Vec<String> = LABELS.iter().map(|l| l.to_string()).collect();
    let index = |l: &str| LABELS.iter().position(|x| *x == l).unwrap() as u32;
    let (mut src, mut dst, mut labels, mut weights) = (vec![], vec![], vec![], vec![]);
    for (&(s, d), (label, weight)) in &m.edges {
        src.push(s);
        dst.push(d);
        labels.push(index(label));
        weights.push(*weight);
    }
    if !src.is_empty() {
        db.add_labelled_edges(&src, &dst, &names, &labels, &weights)
            .unwrap();
    }
    let ids: Vec<u64> = m.vertices.keys().copied().collect();
    let vlabels: Vec<u32> = m.vertices.values().map(|l| index(l)).collect();
    if !ids.is_empty() {
        db.set_vertex_labels(&ids, &names, &vlabels).unwrap();
    }
}

/// What the pages of one export say the graph is, after checking their order, cursors and
/// sizes (`limit` edges at most).
fn collect(pages: &[ExportPage], limit: usize) -> Model {
    let mut m = Model::default();
    let mut last_vertex = None;
    let mut last_edge = None;
    let mut cursor: Option<ExportCursor> = None;
    for (i, page) in pages.iter().enumerate() {
        assert_eq!(page.version, pages[0].version);
        assert_eq!(page.stats.version, page.version);
        // One transaction reads the page; those before it bring the export's pin forward
        // through the change log when many changes came in since the last page, and one after
        // it may hold the log from the export's version on, or let go of it (see
        // `changelog::hold`).
        assert!(page.stats.pinned && page.stats.transactions >= 1);
        assert!(page.edges.len() <= limit, "{} edges", page.edges.len());
        for v in &page.vertices {
            assert!(last_vertex < Some(v.id), "vertices out of order");
            last_vertex = Some(v.id);
            m.vertices.insert(v.id, v.label.clone());
        }
        for e in &page.edges {
            assert!(last_edge < Some((e.src, e.dst)), "edges out of order");
            last_edge = Some((e.src, e.dst));
            // An edge comes on the page of its source, or goes on with a list the last page
            // split.
            let listed = page.vertices.iter().any(|v| v.id == e.src);
            let split =
                (cursor.as_ref()).is_some_and(|c| c.neighbor.is_some() && c.vertex == e.src);
            assert!(listed || split, "{e:?} after {cursor:?}");
            m.edges.insert((e.src, e.dst), (e.label.clone(), e.weight));
        }
        assert_eq!(page.next.is_none(), i == pages.len() - 1);
        if let Some(next) = &page.next {
            // Every page moves on (one may list nothing: it read only vertices created since).
            let at = |c: &ExportCursor| (c.vertex, c.neighbor.map_or(1 << 64, u128::from));
            assert!(
                cursor.as_ref().is_none_or(|c| at(c) < at(next)),
                "{cursor:?}, {next:?}"
            );
            match next.neighbor {
                Some(n) => assert_eq!(last_edge, Some((next.vertex, n))),
                None => assert!(Some(next.vertex) >= last_vertex),
            }
        }
        cursor = page.next.clone();
    }
    m
}

/// Every page of an export at `limit`, or `None` if its version became unreadable.
fn export(db: &GraphDb, limit: u32) -> Option<Vec<ExportPage>> {
    pages_from(db, None, None, limit)
}

/// The pages of an export at `version` (`None`: now) from the cursor `after` on, or `None` if
/// its version became unreadable.
fn pages_from(
    db: &GraphDb,
    mut version: Option<u64>,
    mut after: Option<ExportCursor>,
    limit: u32,
) -> Option<Vec<ExportPage>> {
    let mut pages = Vec::new();
    loop {
        match db.export_page(version, after, limit) {
            Ok(page) => {
                let page = page.value;
                (version, after) = (Some(page.version), page.next.clone());
                let done = after.is_none();
                pages.push(page);
                if done {
                    return Some(pages);
                }
            }
            Err(ClientError::Graph(GraphError::VersionGone(v))) => {
                assert_eq!(Some(v), version);
                return None;
            }
            Err(e) => panic!("export_page: {e}"),
        }
    }
}

/// Asserts that the page after `after` at `version` is refused: the log no longer covers it.
fn assert_gone(db: &GraphDb, version: u64, after: Option<ExportCursor>, limit: u32) {
    let refused = db.export_page(Some(version), after, limit);
    assert!(
        matches!(refused, Err(ClientError::Graph(GraphError::VersionGone(v))) if v == version),
        "{refused:?}"
    );
}

#[test]
fn an_export_gives_back_the_graph_at_any_page_size() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let http = GraphDb::new(server.clone(), "graph");
    let ws = GraphDb::websocket(server, "graph", None);
    for seed in 0..40u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let model = random_model(&mut rng);
        load(&http, &model);
        let version = http.info().unwrap().version;
        let db = if seed % 2 == 0 { &http } else { &ws };
        for limit in [1, 2, 7, 0] {
            let pages = export(db, limit).expect("no writer: the version stays readable");
            assert_eq!(pages[0].version, version);
            let most = if limit == 0 { 10_000 } else { limit as usize };
            assert_eq!(collect(&pages, most), model, "seed {seed}, limit {limit}");
        }
    }
    // A hub's list split over pages: each page reads about what it gives (the neighbor ids are
    // dense), whatever ids lie far beyond them.
    let mut star = Model::default();
    for d in (100..5_100).chain([u64::MAX - 3, u64::MAX]) {
        star.add_edge(7, d, "", 1.0);
    }
    load(&http, &star);
    for db in [&http, &ws] {
        let pages = export(db, 300).unwrap();
        assert_eq!(collect(&pages, 300), star);
        assert!(pages.len() >= 5_002 / 300, "{} pages", pages.len());
        for page in &pages {
            let read = page.stats.edges_scanned;
            assert!(
                read <= 4 * 300 + 2,
                "a page of {} read {read} rows",
                page.edges.len()
            );
        }
    }
    // The cursor past the last possible id, and the refused arguments.
    for neighbor in [None, Some(u64::MAX)] {
        let end = Some(ExportCursor {
            vertex: u64::MAX,
            neighbor,
            hold: 0,
        });
        let page = http.export_page(None, end, 5).unwrap().value;
        assert!(page.vertices.is_empty() && page.edges.is_empty() && page.next.is_none());
    }
    let future = http.info().unwrap().version + 1;
    for (version, limit) in [(Some(future), 5), (None, 200_001)] {
        let refused = http.export_page(version, None, limit);
        assert!(
            matches!(
                refused,
                Err(ClientError::Graph(GraphError::InvalidArgument(_)))
            ),
            "{refused:?}"
        );
    }
}

/// One write that takes effect, on `m` and the module: an edge added (labelled, weighted) or
/// removed, a vertex relabelled or removed.
fn random_write(db: &GraphDb, rng: &mut ChaCha8Rng, m: &mut Model) {
    let names: Vec<String> = LABELS.iter().map(|l| l.to_string()).collect();
    let ids: Vec<u64> = m.vertices.keys().copied().collect();
    let pick = |rng: &mut ChaCha8Rng| match ids.is_empty() || rng.gen_bool(0.1) {
        true => rng.gen_range(0..5_000_000u64),
        false => ids[rng.gen_range(0..ids.len())],
    };
    loop {
        match rng.gen_range(0..10) {
            0..4 => {
                let (s, d) = (pick(rng), pick(rng));
                if m.edges.contains_key(&(s, d)) {
                    continue;
                }
                let label = rng.gen_range(0..LABELS.len() as u32);
                let weight = rng.gen_range(0..4) as f32 * 0.5;
                db.add_labelled_edges(&[s], &[d], &names, &[label], &[weight])
                    .unwrap();
                m.add_edge(s, d, LABELS[label as usize], weight);
            }
            4..7 if !m.edges.is_empty() => {
                let at = rng.gen_range(0..m.edges.len());
                let (s, d) = *m.edges.keys().nth(at).unwrap();
                db.remove_edges(&[s], &[d]).unwrap();
                m.edges.remove(&(s, d));
            }
            7..9 if !ids.is_empty() => {
                let v = pick(rng);
                let label = rng.gen_range(0..LABELS.len() as u32);
                if m.vertices.get(&v).map(String::as_str) == Some(LABELS[label as usize]) {
                    continue;
                }
                db.set_vertex_labels(&[v], &names, &[label]).unwrap();
                m.vertices.insert(v, LABELS[label as usize].to_string());
            }
            9 if !ids.is_empty() => {
                let v = ids[rng.gen_range(0..ids.len())];
                db.remove_vertex(v).unwrap();
                m.remove_vertex(v);
            }
            _ => continue,
        }
        return;
    }
}

#[test]
fn an_export_under_writes_is_the_graph_at_the_version_it_names() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let reader = GraphDb::websocket(server.clone(), "graph", None);
    let writer = GraphDb::new(server, "graph");
    let (mut exports, mut moved) = (0u32, 0u32);
    for seed in 0..12u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let mut model = random_model(&mut rng);
        load(&writer, &model);
        let history = Mutex::new(HashMap::from([(
            writer.info().unwrap().version,
            model.clone(),
        )]));
        let stop = AtomicBool::new(false);
        let answers = thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    random_write(&writer, &mut rng, &mut model);
                    // The only writer: the version now is the one this write made.
                    let version = writer.info().unwrap().version;
                    history.lock().unwrap().insert(version, model.clone());
                }
            });
            let answers: Vec<Vec<ExportPage>> = (0..6)
                .map(|i| export(&reader, [1, 3, 10][i % 3]).expect("single writes stay logged"))
                .collect();
            stop.store(true, Ordering::Relaxed);
            answers
        });
        let history = history.into_inner().unwrap();
        for pages in answers {
            let version = pages[0].version;
            let last = pages.last().unwrap().stats.version_end;
            moved += u32::from(last > version);
            let want = &history[&version];
            let limit = pages.iter().map(|p| p.edges.len()).max().unwrap();
            assert_eq!(
                &collect(&pages, limit),
                want,
                "seed {seed}, version {version}"
            );
            exports += 1;
        }
    }
    assert_eq!(exports, 72);
    // Most exports ran while writes committed between their pages.
    assert!(moved > 36, "only {moved} of {exports} exports saw a write");
}

#[test]
fn a_version_a_bulk_write_made_unreadable_is_refused_and_the_export_starts_again() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let n = 30_000u64;
    let src: Vec<u64> = (0..n).collect();
    let dst: Vec<u64> = (1..=n).collect();
    db.add_edges(&src, &dst).unwrap();
    let first = db.export_page(None, None, 100).unwrap().value;
    // More changes than the log follows one by one: it restarts after them.
    let more: Vec<u64> = (n + 1..n + 20_000).collect();
    db.add_edges(&more, &more.iter().map(|v| v + 1).collect::<Vec<_>>())
        .unwrap();
    assert_gone(&db, first.version, first.next, 100);
    // The client's export starts over at the version now, and the caller hears so.
    let mut starts = 0;
    let mut edges = 0;
    let mut bulk_done = false;
    let version = db
        .export(5_000, 3, |page, first| -> Result<(), ClientError> {
            if first {
                starts += 1;
                edges = 0;
            }
            edges += page.edges.len();
            if !bulk_done {
                bulk_done = true;
                let s: Vec<u64> = (n + 30_000..n + 50_000).collect();
                db.add_edges(&s, &s.iter().map(|v| v + 1).collect::<Vec<_>>())?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(starts, 2);
    assert_eq!(version, db.info().unwrap().version);
    assert_eq!(edges as u64, db.info().unwrap().edges);
}

#[test]
fn exports_at_different_versions_can_take_turns() {
    let host = TestHost::start();
    let server = host.publish_module("graph");
    let reader = GraphDb::websocket(server.clone(), "graph", None);
    let writer = GraphDb::new(server, "graph");
    for seed in 0..8u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(200 + seed);
        let mut model = random_model(&mut rng);
        load(&writer, &model);
        let mut history = HashMap::from([(writer.info().unwrap().version, model.clone())]);
        // Three exports at a time, a page each in turn, a write between any two pages: each
        // instance brings the exports' pins forward from page to page (see `export`).
        let mut running: Vec<(Option<u64>, Option<ExportCursor>, Vec<ExportPage>)> = Vec::new();
        let mut done = Vec::new();
        let mut started = 0;
        while started < 6 || !running.is_empty() {
            if running.len() < 3 && started < 6 {
                running.push((None, None, Vec::new()));
                started += 1;
            }
            for (version, after, pages) in &mut running {
                let page = reader
                    .export_page(*version, after.clone(), 2)
                    .unwrap()
                    .value;
                (*version, *after) = (Some(page.version), page.next.clone());
                pages.push(page);
                random_write(&writer, &mut rng, &mut model);
                history.insert(writer.info().unwrap().version, model.clone());
            }
            let (finished, going) = running
                .into_iter()
                .partition(|(_, after, _)| after.is_none());
            running = going;
            done.extend(finished.into_iter().map(|(_, _, pages)| pages));
        }
        let versions: std::collections::HashSet<u64> = done.iter().map(|p| p[0].version).collect();
        assert_eq!(
            versions.len(),
            6,
            "seed {seed}: each export began at its own version"
        );
        for pages in done {
            let version = pages[0].version;
            assert_eq!(
                collect(&pages, 2),
                history[&version],
                "seed {seed}, version {version}"
            );
        }
    }
}

/// Edges `i → (i + offset) % n` for every `i` below 5,000.
fn shifted(n: u64, offset: u64) -> (Vec<u64>, Vec<u64>) {
    (
        (0..5_000).collect(),
        (0..5_000).map(|i| (i + offset) % n).collect(),
    )
}

/// The graph of the log tests: the path 0 → 1 → … → 9,999.
fn path(db: &GraphDb) -> Model {
    let mut path = Model::default();
    for i in 0..9_999 {
        path.add_edge(i, i + 1, "", 1.0);
    }
    load(db, &path);
    path
}

/// Writes rounds `rounds` of 10,000 logged changes each: round k adds the 5,000 edges
/// `shifted(k + 2)` and removes those of the round before.
fn churn(db: &GraphDb, rounds: std::ops::Range<u64>) {
    for k in rounds {
        let (src, dst) = shifted(10_000, k + 2);
        db.add_edges(&src, &dst).unwrap();
        let (src, dst) = shifted(10_000, k + 1);
        db.remove_edges(&src, &dst).unwrap();
    }
}

#[test]
fn an_export_holds_the_change_log_through_heavy_writes_and_lets_go_at_its_end() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let path = path(&db);
    let first = db.export_page(None, None, 1_000).unwrap().value;
    let (version, after) = (first.version, first.next.clone());
    // 220,000 changes: more than the log keeps for no one (200,000).
    churn(&db, 0..22);
    let log = db.graph_info().unwrap().change_log;
    assert_eq!(
        log.holds.iter().map(|h| h.version).collect::<Vec<_>>(),
        [version]
    );
    assert!(
        log.changes >= 220_000 && log.covers_after <= version,
        "{log:?}"
    );
    let rest = pages_from(&db, Some(version), after.clone(), 1_000)
        .expect("the export held the change log from its version on");
    // The next page brought the export's pin over those changes in short transactions of
    // about 20,000 changes each (of 5,000 a version), not in one.
    assert!(
        rest[0].stats.transactions >= 220_000 / 40_000,
        "{:?}",
        rest[0].stats
    );
    let pages: Vec<ExportPage> = std::iter::once(first).chain(rest).collect();
    assert_eq!(collect(&pages, 1_000), path);
    // Its last page let go: a few writes more trim the log past its version.
    assert_eq!(db.graph_info().unwrap().change_log.holds, []);
    churn(&db, 22..27);
    assert_gone(&db, version, after, 1_000);
}

#[test]
fn a_held_change_log_is_trimmed_all_the_same_past_its_limit() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    path(&db);
    let first = db.export_page(None, None, 1_000).unwrap().value;
    // 1,020,000 changes: more than a hold keeps (1,000,000).
    churn(&db, 0..102);
    assert_gone(&db, first.version, first.next, 1_000);
}

#[test]
fn a_hold_on_a_version_the_log_no_longer_covers_holds_nothing() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    path(&db);
    db.export_page(None, None, 1_000).unwrap();
    // A write too large to log restarts the log: the export's hold is on a lost version.
    let many: Vec<u64> = (20_000..40_000).collect();
    db.add_edges(&many, &many.iter().map(|v| v + 1).collect::<Vec<_>>())
        .unwrap();
    let since = db.info().unwrap().version;
    assert_eq!(db.graph_info().unwrap().change_log.holds, []);
    churn(&db, 0..22);
    // Else the log would have been kept as if the hold held it.
    assert_gone(&db, since, None, 1_000);
}

#[test]
fn a_page_twenty_seconds_after_the_last_renews_the_hold() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    path(&db);
    let first = db.export_page(None, None, 1_000).unwrap().value;
    let expires = |db: &GraphDb| {
        let holds = db.graph_info().unwrap().change_log.holds;
        assert_eq!(holds.len(), 1, "{holds:?}");
        holds[0].expires.to_micros_since_unix_epoch()
    };
    let taken = expires(&db);
    thread::sleep(Duration::from_secs(21));
    db.export_page(Some(first.version), first.next, 1_000)
        .unwrap();
    // Renewed for another 60 s: pages up to a minute apart keep the log held.
    let renewed = expires(&db);
    assert!(renewed >= taken + 20_000_000, "{taken} -> {renewed}");
}

#[test]
fn exports_of_one_version_keep_their_own_holds_and_share_their_pin() {
    // One instance, so that every page meets the pins this one keeps.
    let host = TestHost::start_with(&["--procedure-instances", "1"]);
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let other = GraphDb::new(host.client().1, "graph");
    let path = path(&db);
    // Three exports at one version: two of the owner's, one of another identity's.
    let firsts = [&db, &db, &other].map(|db| db.export_page(None, None, 1_000).unwrap().value);
    let version = firsts[0].version;
    assert!(firsts.iter().all(|p| p.version == version));
    let holds = || db.graph_info().unwrap().change_log.holds;
    assert_eq!(holds().len(), 3, "{:?}", holds());
    // 60,000 changes, then the first export to its end.
    churn(&db, 0..6);
    let rest = pages_from(&db, Some(version), firsts[0].next.clone(), 1_000).unwrap();
    let pages: Vec<ExportPage> = std::iter::once(firsts[0].clone()).chain(rest).collect();
    assert_eq!(collect(&pages, 1_000), path);
    // It dropped its own hold only, and left its pin, which has followed those changes, to
    // the others: their next pages have none to take in.
    assert_eq!(holds().len(), 2, "{:?}", holds());
    for (db, first) in [(&db, &firsts[1]), (&other, &firsts[2])] {
        let next = db
            .export_page(Some(version), first.next.clone(), 1_000)
            .unwrap()
            .value;
        assert!(next.stats.transactions <= 2, "{:?}", next.stats);
    }
}

/// A page sent twice, as a call resent after a dropped connection is, renews or drops its own
/// export's hold only: a last page sent again used to drop another export's hold of the same
/// caller's, and a page that names a hold not its caller's leaves it alone.
#[test]
fn a_page_sent_twice_touches_its_own_hold_only() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let other = GraphDb::new(host.client().1, "graph");
    let path = path(&db);
    let holds = || db.graph_info().unwrap().change_log.holds;
    // Two exports of the owner's at one version, and one of another identity's.
    let firsts = [&db, &db, &other].map(|db| db.export_page(None, None, 4_000).unwrap().value);
    let version = firsts[0].version;
    let ids: Vec<u64> = firsts
        .iter()
        .map(|p| p.next.as_ref().unwrap().hold)
        .collect();
    let mut listed: Vec<u64> = holds().iter().map(|h| h.id).collect();
    listed.sort_unstable();
    assert_eq!(
        listed, ids,
        "each export has its own hold, named by its cursor"
    );
    // The first export to its end, each page sent twice.
    let mut pages = vec![firsts[0].clone()];
    while let Some(after) = pages.last().unwrap().next.clone() {
        let page =
            |db: &GraphDb| (db.export_page(Some(version), Some(after.clone()), 4_000)).unwrap();
        let (once, twice) = (page(&db).value, page(&db).value);
        assert_eq!(
            (&once.vertices, &once.edges),
            (&twice.vertices, &twice.edges)
        );
        assert_eq!(once.next, twice.next, "the same hold, renewed");
        pages.push(once);
    }
    assert_eq!(collect(&pages, 4_000), path);
    let left: Vec<u64> = holds().iter().map(|h| h.id).collect();
    assert_eq!(
        left,
        &ids[1..],
        "the second export's hold and the other identity's are left"
    );
    // The other identity's cursor sent by the owner, to the end: its hold stays.
    let last = pages[pages.len() - 2].next.clone();
    let theirs = last.map(|c| ExportCursor { hold: ids[2], ..c });
    db.export_page(Some(version), theirs, 4_000).unwrap();
    assert!(holds().iter().any(|h| h.id == ids[2]), "{:?}", holds());
    // A first page given a cursor that names a hold takes one of its own all the same.
    let named = firsts[1].next.clone();
    let first = db.export_page(None, named, 4_000).unwrap().value;
    let own = first.next.unwrap().hold;
    assert!(!ids.contains(&own), "{own} in {ids:?}");
    let mut listed: Vec<u64> = holds().iter().map(|h| h.id).collect();
    listed.sort_unstable();
    assert_eq!(listed, [ids[1], ids[2], own]);
}

#[test]
fn vertices_created_since_an_exports_version_cost_its_pages_little() {
    let host = TestHost::start();
    let db = GraphDb::new(host.publish_module("graph"), "graph");
    let mut graph = path(&db);
    db.add_edges(&[0], &[1_000_000]).unwrap();
    graph.add_edge(0, 1_000_000, "", 1.0);
    let first = db.export_page(None, None, 100).unwrap().value;
    // Created after the export's version: 60,000 vertices right after its path, below its
    // largest id (a gap before them would widen a page's window over them; see
    // `results/export/`), and 60,000 beyond it.
    for start in [10_000, 2_000_000] {
        for batch in 0..10u64 {
            let src: Vec<u64> = (0..3_000).map(|i| start + batch * 6_000 + 2 * i).collect();
            let dst: Vec<u64> = src.iter().map(|v| v + 1).collect();
            db.add_edges(&src, &dst).unwrap();
        }
    }
    let rest = pages_from(&db, Some(first.version), first.next.clone(), 100).unwrap();
    let pages: Vec<ExportPage> = std::iter::once(first).chain(rest).collect();
    assert_eq!(collect(&pages, 100), graph);
    // Each page read a few windows of 100 ids and stopped, skipped rows or not, and none read
    // past the largest id at the export's version: the rows read are the graph's 20,001, the
    // 60,000 skipped below that id, and a vertex read again where a page ended before its
    // list.
    for page in &pages {
        assert!(page.stats.edges_scanned <= 6 * 100, "{:?}", page.stats);
    }
    let read: u64 = pages.iter().map(|p| p.stats.edges_scanned).sum();
    assert!(
        read <= 20_001 + 60_000 + pages.len() as u64,
        "{read} rows read"
    );
}

//! The generated bindings in `src/module_bindings/`: up to date with the module, and usable.
//!
//! `checked_in_bindings_are_current` regenerates them from the real module wasm with the real
//! `graph-host generate` and compares every file. The other tests use the generated types
//! against the real module on the embedded host over HTTP (no WebSocket needed): each call's
//! arguments are a generated argument struct sent as SATS-JSON, and every answer and row is
//! decoded into the generated types, then round-tripped through BSATN, the SDK's encoding.
//! Queries written with the typed query builder over the generated columns run as SQL.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::Path;
use std::process::Command;

use graph_client::module_bindings::add_edges_reducer::AddEdgesArgs;
use graph_client::module_bindings::add_labelled_edges_reducer::AddLabelledEdgesArgs;
use graph_client::module_bindings::add_vertices_reducer::AddVerticesArgs;
use graph_client::module_bindings::begin_bulk_load_reducer::BeginBulkLoadArgs;
use graph_client::module_bindings::bfs_full_scan_procedure::BfsFullScanArgs;
use graph_client::module_bindings::bfs_full_scan_reducer_reducer::BfsFullScanReducerArgs;
use graph_client::module_bindings::bfs_procedure::BfsArgs;
use graph_client::module_bindings::clear_graph_reducer::ClearGraphArgs;
use graph_client::module_bindings::graph_info_procedure::GraphInfoArgs;
use graph_client::module_bindings::neighbor_count_full_scan_procedure::NeighborCountFullScanArgs;
use graph_client::module_bindings::neighbor_count_procedure::NeighborCountArgs;
use graph_client::module_bindings::neighbors_procedure::NeighborsArgs;
use graph_client::module_bindings::noop_procedure_procedure::NoopProcedureArgs;
use graph_client::module_bindings::noop_reducer_reducer::NoopReducerArgs;
use graph_client::module_bindings::remove_edges_reducer::RemoveEdgesArgs;
use graph_client::module_bindings::remove_vertex_reducer::RemoveVertexArgs;
use graph_client::module_bindings::set_vertex_labels_reducer::SetVertexLabelsArgs;
use graph_client::module_bindings::shortest_path_full_scan_procedure::ShortestPathFullScanArgs;
use graph_client::module_bindings::shortest_path_full_scan_reducer_reducer::ShortestPathFullScanReducerArgs;
use graph_client::module_bindings::shortest_path_procedure::ShortestPathArgs;
use graph_client::module_bindings::weighted_shortest_path_procedure::WeightedShortestPathArgs;
use graph_client::module_bindings::*;
use graph_client::server::Server;
use graph_testkit::{TestHost, host_binary, module_wasm_path};
use serde_json::Value;
use spacetimedb_sdk::__codegen::{self as __sdk, __sats};

const DB: &str = "graph";

#[test]
fn checked_in_bindings_are_current() {
    let fresh = tempfile::tempdir().unwrap();
    let output = Command::new(host_binary())
        .args(["generate", "--lang", "rust", "--bin-path"])
        .arg(module_wasm_path())
        .arg("--out-dir")
        .arg(fresh.path())
        .output()
        .expect("running graph-host generate");
    assert!(
        output.status.success(),
        "graph-host generate failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let generated = read_dir(fresh.path());
    let checked_in = read_dir(&graph_testkit::manifest_dir().join("src/module_bindings"));
    let missing: Vec<&String> = generated
        .keys()
        .filter(|f| !checked_in.contains_key(*f))
        .collect();
    let extra: Vec<&String> = checked_in
        .keys()
        .filter(|f| !generated.contains_key(*f))
        .collect();
    let different: Vec<&String> = generated
        .iter()
        .filter(|(f, text)| checked_in.get(*f).is_some_and(|old| old != *text))
        .map(|(f, _)| f)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty() && different.is_empty(),
        "client/src/module_bindings/ is not what the module generates; run scripts/generate.\n\
         missing: {missing:?}\nnot generated any more: {extra:?}\ndifferent: {different:?}"
    );
    assert!(generated.len() > 1 && generated.contains_key("mod.rs"));
}

fn read_dir(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}

/// A value in SATS-JSON, as the HTTP API takes arguments.
fn to_json<T: __sats::Serialize>(value: &T) -> Value {
    serde_json::to_value(__sats::serde::SerdeWrapper::new(value)).unwrap()
}

/// Decodes SATS-JSON (the HTTP API's answers and rows: products as arrays, sums as
/// `[tag, payload]`) into a generated type, and checks that the value survives BSATN.
fn decode<T>(json: &Value) -> T
where
    T: for<'de> __sats::Deserialize<'de> + __sats::Serialize + PartialEq + Debug,
{
    let value: T = __sats::serde::deserialize(json)
        .unwrap_or_else(|e| panic!("decoding {json} as {}: {e}", std::any::type_name::<T>()));
    let bsatn = __sats::bsatn::to_vec(&value).unwrap();
    assert_eq!(__sats::bsatn::from_slice::<T>(&bsatn).unwrap(), value);
    value
}

/// Calls a procedure with its generated argument struct; its answer as the generated type.
fn call<A: __sats::Serialize, R>(server: &Server, procedure: &str, args: &A) -> R
where
    R: for<'de> __sats::Deserialize<'de> + __sats::Serialize + PartialEq + Debug,
{
    let out = server
        .call(DB, procedure, &to_json(args))
        .unwrap_or_else(|e| panic!("calling {procedure}: {e}"));
    decode(&out.body)
}

/// Calls a reducer given as the generated `Reducer` enum: its name and BSATN arguments come from
/// the enum (what the SDK sends), the HTTP request carries the same arguments as SATS-JSON.
fn reduce<A>(server: &Server, args: A)
where
    A: __sats::Serialize + for<'de> __sats::Deserialize<'de> + Clone + PartialEq + Debug,
    Reducer: From<A>,
{
    let reducer = Reducer::from(args.clone());
    let bsatn = __sdk::Reducer::args_bsatn(&reducer).unwrap();
    assert_eq!(__sats::bsatn::from_slice::<A>(&bsatn).unwrap(), args);
    let name = __sdk::Reducer::reducer_name(&reducer);
    server
        .call(DB, name, &to_json(&args))
        .unwrap_or_else(|e| panic!("calling {name}: {e}"));
}

fn sql(server: &Server, query: &str) -> (Value, Vec<Value>) {
    let mut results = server.sql(DB, query).unwrap();
    assert_eq!(results.len(), 1, "{query}");
    let result = results.remove(0);
    (result.schema, result.rows)
}

/// `1 → 2`, `2 → 3`, `2 → 4`.
fn load(server: &Server) {
    reduce(
        server,
        AddEdgesArgs {
            src: vec![1, 2, 2],
            dst: vec![2, 3, 4],
        },
    );
}

#[test]
fn procedures_take_and_return_the_generated_types() {
    let host = TestHost::start();
    let server = host.publish_module(DB);
    load(&server);

    let info: GraphInfo = call(&server, "graph_info", &GraphInfoArgs {});
    assert_eq!((info.snapshots.len(), info.policy.max_snapshots), (0, 2));
    let meta = info.meta;
    assert_eq!((meta.id, meta.vertices, meta.edges), (0, 4, 3));
    assert!(meta.max_vertex_id >= 4);

    let n: Result<Neighbors, GraphError> = call(
        &server,
        "neighbors",
        &NeighborsArgs {
            vertex: 2,
            direction: "out".into(),
            edge_labels: vec![],
            vertex_labels: vec![],
            limit: 0,
        },
    );
    let n = n.unwrap();
    assert_eq!((n.vertex, n.neighbors, n.truncated), (2, vec![3, 4], false));
    assert_eq!(n.stats.version_start, meta.version);

    for procedure in ["neighbor_count", "neighbor_count_full_scan"] {
        let args = NeighborCountArgs {
            vertex: 2,
            direction: "both".into(),
            edge_labels: vec![],
            vertex_labels: vec![],
        };
        let c: Result<NeighborCount, GraphError> = match procedure {
            "neighbor_count" => call(&server, procedure, &args),
            _ => call(
                &server,
                procedure,
                &NeighborCountFullScanArgs {
                    vertex: 2,
                    direction: "both".into(),
                },
            ),
        };
        assert_eq!(c.unwrap().count, 3, "{procedure}");
    }

    let bfs = BfsArgs {
        start: 1,
        direction: "out".into(),
        edge_labels: vec![],
        vertex_labels: vec![],
        max_depth: None,
        vertex_limit: 10,
        tx_budget: 0,
        yield_every_us: 0,
    };
    let b: Result<BfsResult, GraphError> = call(&server, "bfs", &bfs);
    let b = b.unwrap();
    assert_eq!((b.start, b.visited, &b.levels[..]), (1, 4, &[1, 1, 2][..]));
    assert_eq!(b.vertices[..2], [1, 2]);
    assert!(b.stats.transactions >= 1 && !b.stats.from_snapshot);
    let scan = BfsFullScanArgs {
        start: 1,
        direction: "out".into(),
        max_depth: Some(1),
    };
    let s: Result<BfsResult, GraphError> = call(&server, "bfs_full_scan", &scan);
    assert_eq!(s.unwrap().levels, [1, 1]);

    let path = |source, target, max_depth| ShortestPathArgs {
        source,
        target,
        direction: "out".into(),
        edge_labels: vec![],
        vertex_labels: vec![],
        max_depth,
        tx_budget: 0,
        yield_every_us: 0,
    };
    let p: Result<PathResult, GraphError> = call(&server, "shortest_path", &path(1, 4, None));
    let p = p.unwrap();
    assert_eq!((p.status, &p.path[..]), (PathStatus::Found, &[1, 2, 4][..]));
    let p: Result<PathResult, GraphError> = call(&server, "shortest_path", &path(4, 1, None));
    assert_eq!(p.unwrap().status, PathStatus::Unreachable);
    let p: Result<PathResult, GraphError> = call(&server, "shortest_path", &path(1, 4, Some(1)));
    assert_eq!(p.unwrap().status, PathStatus::BeyondMaxDepth);
    let scan = ShortestPathFullScanArgs {
        source: 1,
        target: 3,
        direction: "out".into(),
        max_depth: None,
    };
    let p: Result<PathResult, GraphError> = call(&server, "shortest_path_full_scan", &scan);
    assert_eq!(p.unwrap().path, [1, 2, 3]);
    let weighted = WeightedShortestPathArgs {
        source: 1,
        target: 4,
        direction: "out".into(),
        edge_labels: vec![],
        vertex_labels: vec![],
        tx_budget: 0,
        yield_every_us: 0,
    };
    let w: Result<WeightedPathResult, GraphError> =
        call(&server, "weighted_shortest_path", &weighted);
    let w = w.unwrap();
    assert_eq!(
        (w.status, &w.path[..], w.weight, w.hops),
        (PathStatus::Found, &[1, 2, 4][..], 2.0, 2)
    );
    let unknown_label = WeightedShortestPathArgs {
        edge_labels: vec!["nope".into()],
        ..weighted
    };
    let e: Result<WeightedPathResult, GraphError> =
        call(&server, "weighted_shortest_path", &unknown_label);
    assert!(matches!(e, Err(GraphError::InvalidArgument(why)) if why.contains("nope")));

    // The module's errors arrive as the generated `GraphError`.
    let unknown = BfsArgs {
        start: 99,
        ..bfs.clone()
    };
    let e: Result<BfsResult, GraphError> = call(&server, "bfs", &unknown);
    assert_eq!(e, Err(GraphError::UnknownVertex(99)));
    let sideways = BfsArgs {
        direction: "sideways".into(),
        ..bfs
    };
    let e: Result<BfsResult, GraphError> = call(&server, "bfs", &sideways);
    assert!(matches!(e, Err(GraphError::InvalidArgument(why)) if why.contains("sideways")));

    let () = call(&server, "noop_procedure", &NoopProcedureArgs {});
}

#[test]
fn reducers_and_table_rows_use_the_generated_types() {
    let host = TestHost::start();
    let server = host.publish_module(DB);
    load(&server);
    reduce(&server, AddVerticesArgs { ids: vec![7] });
    reduce(
        &server,
        RemoveEdgesArgs {
            src: vec![2],
            dst: vec![3],
        },
    );
    reduce(&server, RemoveVertexArgs { id: 4 });
    reduce(&server, NoopReducerArgs {});

    let (_, rows) = sql(&server, "SELECT * FROM vertex");
    let mut vertices: Vec<Vertex> = rows.iter().map(decode).collect();
    vertices.sort_by_key(|v| v.id);
    let degrees: Vec<(u64, u32, u32)> = vertices
        .iter()
        .map(|v| (v.id, v.out_degree, v.in_degree))
        .collect();
    assert_eq!(degrees, [(1, 1, 0), (2, 0, 1), (3, 0, 0), (7, 0, 0)]);
    let (_, rows) = sql(&server, "SELECT * FROM edge");
    let edges: Vec<Edge> = rows.iter().map(decode).collect();
    assert_eq!(
        edges,
        [Edge {
            fwd: 1 << 32 | 2,
            rev: 2 << 32 | 1,
            label: 0,
            weight: 1.0
        }]
    );
    assert_eq!((edges[0].src(), edges[0].dst()), (1, 2));
    reduce(
        &server,
        AddLabelledEdgesArgs {
            src: vec![3, 7],
            dst: vec![7, 1],
            label_names: vec!["road".into(), "rail".into()],
            labels: vec![1, 0],
            weights: vec![2.5, 0.0],
        },
    );
    let (_, rows) = sql(&server, "SELECT * FROM edge_label");
    let mut labels: Vec<EdgeLabel> = rows.iter().map(decode).collect();
    labels.sort_by_key(|l| l.id);
    let names: Vec<(u32, &str)> = labels.iter().map(|l| (l.id, l.name.as_str())).collect();
    assert_eq!(names, [(1, "road"), (2, "rail")]);
    // Vertex 3's out-edges: one key range.
    let (_, rows) = sql(
        &server,
        "SELECT * FROM edge WHERE fwd >= 12884901888 AND fwd <= 17179869183",
    );
    let edges: Vec<Edge> = rows.iter().map(decode).collect();
    assert_eq!(
        edges,
        [Edge {
            fwd: 3 << 32 | 7,
            rev: 7 << 32 | 3,
            label: 2,
            weight: 2.5
        }]
    );
    // An end of 2^32 or more: the edge is a `wide_edge` row, with 128-bit keys.
    let big = 1u64 << 40;
    reduce(
        &server,
        AddEdgesArgs {
            src: vec![3],
            dst: vec![big],
        },
    );
    // (JSON numbers past u64 lose digits in serde_json's `Value`, so the keys are checked in
    // SQL, exactly, and the row type through BSATN.)
    let (fwd, rev) = (3u128 << 64 | u128::from(big), u128::from(big) << 64 | 3);
    let query = format!("SELECT label, weight FROM wide_edge WHERE fwd = {fwd} AND rev = {rev}");
    let (_, rows) = sql(&server, &query);
    assert_eq!(rows.len(), 1, "{query}");
    let row = WideEdge {
        fwd,
        rev,
        label: 0,
        weight: 1.0,
    };
    assert_eq!((row.src(), row.dst()), (3, big));
    let bsatn = __sats::bsatn::to_vec(&row).unwrap();
    assert_eq!(__sats::bsatn::from_slice::<WideEdge>(&bsatn).unwrap(), row);
    reduce(
        &server,
        RemoveEdgesArgs {
            src: vec![3],
            dst: vec![big],
        },
    );
    reduce(&server, RemoveVertexArgs { id: big });
    reduce(
        &server,
        RemoveEdgesArgs {
            src: vec![3, 7],
            dst: vec![7, 1],
        },
    );
    let (_, rows) = sql(&server, "SELECT * FROM graph_meta");
    let meta: Vec<GraphMeta> = rows.iter().map(decode).collect();
    assert_eq!((meta[0].vertices, meta[0].edges), (4, 1));

    // The reducer-style baseline writes one row per BFS level.
    reduce(
        &server,
        BfsFullScanReducerArgs {
            query_id: 5,
            start: 1,
            direction: "out".into(),
            max_depth: None,
        },
    );
    reduce(
        &server,
        ShortestPathFullScanReducerArgs {
            query_id: 6,
            source: 1,
            target: 2,
            direction: "out".into(),
            max_depth: Some(3),
        },
    );
    let (_, rows) = sql(&server, "SELECT * FROM traversal_result");
    let mut results: Vec<TraversalResult> = rows.iter().map(decode).collect();
    results.sort_by_key(|r| (r.query_id, r.ordinal));
    let results: Vec<(u64, u32, u64)> = results
        .iter()
        .map(|r| (r.query_id, r.ordinal, r.value))
        .collect();
    assert_eq!(results, [(5, 0, 1), (5, 1, 1), (6, 0, 1), (6, 1, 2)]);

    reduce(&server, ClearGraphArgs {});
    let (_, rows) = sql(&server, "SELECT * FROM edge");
    assert!(rows.is_empty());
}

/// The generated tables are the module's public tables, and each row type has the table's
/// columns: names from the SQL answer's schema, compared with the generated struct's fields.
#[test]
fn tables_and_columns_match_the_module() {
    let host = TestHost::start();
    let server = host.publish_module(DB);
    load(&server);
    reduce(
        &server,
        BfsFullScanReducerArgs {
            query_id: 1,
            start: 1,
            direction: "out".into(),
            max_depth: None,
        },
    );

    reduce(
        &server,
        AddLabelledEdgesArgs {
            src: vec![5],
            dst: vec![6],
            label_names: vec!["road".into()],
            labels: vec![0],
            weights: vec![],
        },
    );

    reduce(
        &server,
        SetVertexLabelsArgs {
            ids: vec![5, 9],
            label_names: vec!["town".into()],
            labels: vec![0, 0],
        },
    );

    reduce(
        &server,
        AddEdgesArgs {
            src: vec![5],
            dst: vec![1 << 40],
        },
    );
    // Its row is there while a bulk load is under way.
    reduce(&server, BeginBulkLoadArgs {});

    let tables = <RemoteModule as __sdk::SpacetimeModule>::ALL_TABLE_NAMES;
    assert_eq!(
        tables,
        [
            "bulk_load",
            "edge",
            "edge_label",
            "graph_meta",
            "traversal_result",
            "vertex",
            "vertex_label",
            "wide_edge"
        ]
    );
    for table in tables {
        let (schema, rows) = sql(&server, &format!("SELECT * FROM {table}"));
        let columns: Vec<String> = schema["elements"]
            .as_array()
            .unwrap_or_else(|| panic!("{table}'s schema: {schema}"))
            .iter()
            .map(|e| e["name"]["some"].as_str().unwrap().to_string())
            .collect();
        let row = rows.first().unwrap_or_else(|| panic!("{table} has rows"));
        let fields = match *table {
            "bulk_load" => field_names(&decode::<BulkLoad>(row)),
            "edge" => field_names(&decode::<Edge>(row)),
            "edge_label" => field_names(&decode::<EdgeLabel>(row)),
            "graph_meta" => field_names(&decode::<GraphMeta>(row)),
            "traversal_result" => field_names(&decode::<TraversalResult>(row)),
            "vertex" => field_names(&decode::<Vertex>(row)),
            "vertex_label" => field_names(&decode::<VertexLabel>(row)),
            // Its u128 keys do not survive serde_json's `Value`: the names come from a row.
            "wide_edge" => field_names(&WideEdge {
                fwd: 0,
                rev: 0,
                label: 0,
                weight: 1.0,
            }),
            other => panic!("no generated row type for {other}"),
        };
        let mut sorted_columns = columns.clone();
        sorted_columns.sort_unstable();
        assert_eq!(fields, sorted_columns, "{table}: {columns:?}");
    }
}

/// A generated struct's field names, as its SATS-JSON object's keys (sorted).
fn field_names<T: __sats::Serialize>(value: &T) -> Vec<String> {
    let Value::Object(object) = to_json(value) else {
        panic!("a struct serialises to an object")
    };
    object.keys().cloned().collect()
}

/// The typed query builder over the generated column accessors (`Cols`, `IxCols`) writes the SQL
/// a subscription sends; the module's host answers it with the expected rows.
#[test]
fn typed_queries_select_the_expected_rows() {
    let host = TestHost::start();
    let server = host.publish_module(DB);
    load(&server);
    for (query_id, start) in [(2, 1), (3, 4)] {
        reduce(
            &server,
            BfsFullScanReducerArgs {
                query_id,
                start,
                direction: "out".into(),
                max_depth: None,
            },
        );
    }
    let from = || __sdk::QueryBuilder::default().from;

    let levels = from()
        .traversal_result()
        .r#where(|r| r.query_id.eq(2u64))
        .r#where(|r| r.ordinal.gt(0u32))
        .build();
    let (_, rows) = sql(&server, levels.sql());
    let mut rows: Vec<TraversalResult> = rows.iter().map(decode).collect();
    rows.sort_by_key(|r| r.ordinal);
    let values: Vec<(u32, u64)> = rows.iter().map(|r| (r.ordinal, r.value)).collect();
    assert_eq!(values, [(1, 1), (2, 2)], "{}", levels.sql());

    // Vertices whose id is one of the query ids written (2 and 3): a join on indexed columns.
    let joined = from()
        .vertex()
        .left_semijoin(from().traversal_result(), |v, r| v.id.eq(r.query_id))
        .build();
    let (_, rows) = sql(&server, joined.sql());
    let mut ids: Vec<u64> = rows.iter().map(decode::<Vertex>).map(|v| v.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids, [2, 3], "{}", joined.sql());
}

//! How module names become Rust names and file names. The case conversion is `convert_case`'s,
//! as in the official generator, so that both name things alike (`graph_meta` → `GraphMeta`,
//! `graph_meta_table.rs`).

use convert_case::{Case, Casing};
use spacetimedb_lib::sats::AlgebraicTypeRef;
use spacetimedb_schema::def::{ModuleDef, ProcedureDef, ReducerDef, ScopedTypeName, TableDef};

pub fn pascal(name: &str) -> String {
    name.to_case(Case::Pascal)
}

pub fn snake(name: &str) -> String {
    name.to_case(Case::Snake)
}

/// A named type's Rust name: its scope and name segments in PascalCase, joined.
pub fn type_name(name: &ScopedTypeName) -> String {
    name.name_segments().map(|s| pascal(s)).collect()
}

/// The module (file stem) that defines a named type.
pub fn type_module(name: &ScopedTypeName) -> String {
    let segments: Vec<String> = name.name_segments().map(|s| snake(s)).collect();
    format!("{}_type", segments.join("_"))
}

/// The Rust name of the type `r` refers to. Every ref in a validated `ModuleDef`'s
/// `typespace_for_generate` names a type definition.
pub fn ref_name(module: &ModuleDef, r: AlgebraicTypeRef) -> String {
    type_name(ref_scoped_name(module, r))
}

pub fn ref_module(module: &ModuleDef, r: AlgebraicTypeRef) -> String {
    type_module(ref_scoped_name(module, r))
}

fn ref_scoped_name(module: &ModuleDef, r: AlgebraicTypeRef) -> &ScopedTypeName {
    &module
        .type_def_from_ref(r)
        .unwrap_or_else(|| panic!("type ref {r:?} has no type definition"))
        .1
        .accessor_name
}

/// Names derived from a table's accessor name (`graph_meta`).
pub struct TableNames {
    /// `GraphMeta`: the prefix of the handle, accessor and callback-id types.
    pub pascal: String,
    /// `graph_meta`: the method on `RemoteTables` and on the query builder.
    pub method: String,
    /// `graph_meta_table`.
    pub module: String,
}

impl TableNames {
    pub fn of(table: &TableDef) -> Self {
        let accessor: &str = &table.accessor_name;
        Self {
            pascal: pascal(accessor),
            method: snake(accessor),
            module: format!("{}_table", snake(accessor)),
        }
    }
}

/// Names derived from a reducer's or procedure's accessor name (`add_edges`).
pub struct FunctionNames {
    /// `add_edges`: the extension trait and its method (`add_edges_then` with a callback).
    pub method: String,
    /// `AddEdgesArgs`: the argument struct.
    pub args: String,
    /// `AddEdges`: the reducer's variant of `Reducer`.
    pub variant: String,
    /// `add_edges_reducer` or `add_edges_procedure`.
    pub module: String,
}

impl FunctionNames {
    pub fn reducer(reducer: &ReducerDef) -> Self {
        Self::new(&reducer.accessor_name, "reducer")
    }

    pub fn procedure(procedure: &ProcedureDef) -> Self {
        Self::new(&procedure.accessor_name, "procedure")
    }

    fn new(accessor: &str, kind: &str) -> Self {
        Self {
            method: snake(accessor),
            args: format!("{}Args", pascal(accessor)),
            variant: pascal(accessor),
            module: format!("{}_{kind}", snake(accessor)),
        }
    }
}

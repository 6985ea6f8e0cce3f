//! Rust client bindings for a SpacetimeDB 2.x module, written from its definition
//! (`spacetimedb_schema::def::ModuleDef`, 2.14) in the shape `spacetime generate --lang rust`
//! gives them: a `module_bindings/` directory that compiles against `spacetimedb-sdk` 2.14.
//!
//! [`generate`] returns the files (name → contents), [`rustfmt`] formats them as the official
//! CLI does, and [`write_dir`] puts them in a directory, replacing the files an earlier run
//! generated there. What is generated and what is refused: this crate's `README.md`.

mod check;
mod functions;
mod items;
mod mod_rs;
mod names;
mod output;
mod rust;
mod tables;
mod types;

use std::collections::BTreeMap;
use std::fmt;

use spacetimedb_schema::def::ModuleDef;

pub use output::{FormatError, Written, rustfmt, write_dir};
pub use rust::GENERATED_MARKER;

/// Generated files: file name (`mod.rs`, `vertex_table.rs`, …) → contents.
pub type Files = BTreeMap<String, String>;

/// The module uses features this generator does not write bindings for; one line per problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub Vec<String>);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cannot generate Rust bindings for this module:")?;
        for problem in &self.0 {
            writeln!(f, "  - {problem}")?;
        }
        write!(
            f,
            "(graph-codegen supports what codegen/README.md lists; `spacetime generate` from an \
             official SpacetimeDB install covers the rest)"
        )
    }
}

impl std::error::Error for Unsupported {}

/// The bindings for `module`, unformatted (see [`rustfmt`]): one file per public table, named
/// type, client-callable reducer and procedure, plus `mod.rs`.
pub fn generate(module: &ModuleDef) -> Result<Files, Unsupported> {
    let items = items::Items::of(module);
    check::supported(module, &items)?;
    let mut files = Files::new();
    for typ in &items.types {
        let row_of = items.tables_of_row(typ).first().copied();
        let name = names::type_module(&typ.accessor_name);
        files.insert(format!("{name}.rs"), types::type_file(module, typ, row_of));
    }
    for table in &items.tables {
        let name = names::TableNames::of(table).module;
        files.insert(format!("{name}.rs"), tables::table_file(module, table));
    }
    for reducer in &items.reducers {
        let name = names::FunctionNames::reducer(reducer).module;
        files.insert(
            format!("{name}.rs"),
            functions::reducer_file(module, reducer),
        );
    }
    for procedure in &items.procedures {
        let name = names::FunctionNames::procedure(procedure).module;
        files.insert(
            format!("{name}.rs"),
            functions::procedure_file(module, procedure),
        );
    }
    let modules: Vec<String> = files
        .keys()
        .map(|f| f.trim_end_matches(".rs").into())
        .collect();
    files.insert("mod.rs".into(), mod_rs::mod_file(module, &items, &modules));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetimedb_lib::AlgebraicType;
    use spacetimedb_lib::db::raw_def::v9::{Lifecycle, RawIndexAlgorithm, TableAccess};
    use spacetimedb_lib::db::raw_def::v10::RawModuleDefV10Builder;

    fn module(build: impl FnOnce(&mut RawModuleDefV10Builder)) -> ModuleDef {
        let mut builder = RawModuleDefV10Builder::new();
        build(&mut builder);
        ModuleDef::try_from(builder.finish()).expect("a valid module definition")
    }

    #[test]
    fn only_what_clients_can_reach() {
        let module = module(|m| {
            m.build_table_with_new_type("graph_meta", [("id", AlgebraicType::U8)], true)
                .with_unique_constraint(0)
                .with_index(
                    RawIndexAlgorithm::BTree { columns: 0.into() },
                    "graph_meta_id",
                    "id",
                )
                .with_primary_key(0)
                .finish();
            m.build_table_with_new_type("secret", [("key", AlgebraicType::String)], true)
                .with_access(TableAccess::Private)
                .finish();
            m.add_reducer(
                "add_edges",
                [("src", AlgebraicType::array(AlgebraicType::U64))].into(),
            );
            m.add_lifecycle_reducer(Lifecycle::Init, "init", [AlgebraicType::U8; 0].into());
            m.add_procedure(
                "graph_info",
                [AlgebraicType::U8; 0].into(),
                AlgebraicType::U64,
            );
        });
        let files = generate(&module).unwrap();
        let names: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "add_edges_reducer.rs",
                "graph_info_procedure.rs",
                "graph_meta_table.rs",
                // Every named type, as the official generator writes them.
                "graph_meta_type.rs",
                "mod.rs",
                "secret_type.rs",
            ]
        );
        for (name, contents) in &files {
            assert!(contents.starts_with(GENERATED_MARKER), "{name}");
        }
        let mod_rs = &files["mod.rs"];
        assert!(
            mod_rs.contains(r#"const ALL_TABLE_NAMES: &'static [&'static str] = &["graph_meta"];"#)
        );
        assert!(mod_rs.contains(".with_updates_by_pk(|row| &row.id)"));
        assert!(
            !mod_rs.contains("Init"),
            "lifecycle reducers are not callable"
        );
        assert!(files["graph_meta_table.rs"].contains("pub struct GraphMetaIdUnique<'ctx>"));
    }

    #[test]
    fn refuses_what_it_cannot_generate() {
        let module = module(|m| {
            m.build_table_with_new_type("ping", [("at", AlgebraicType::U64)], true)
                .with_event(true)
                .finish();
            m.build_table_with_new_type("thing", [("type", AlgebraicType::U32)], true)
                .finish();
            m.add_reducer("call", [("callback", AlgebraicType::String)].into());
            m.build_table_with_new_type("reducer", [("id", AlgebraicType::U32)], true)
                .finish();
        });
        let Unsupported(problems) = generate(&module).unwrap_err();
        assert_eq!(
            problems,
            [
                "event table `ping`: bindings for event tables are not generated",
                "type `Reducer` and the bindings' own `Reducer` both become `Reducer`",
                "field `type` of type `Thing` becomes `type`, a Rust keyword",
                "argument `callback` of reducer `call` and the callback parameter both become \
                 `callback`",
            ]
        );
    }
}

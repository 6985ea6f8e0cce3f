//! Module features the generator does not write bindings for. Each is refused with a reason
//! rather than generated wrongly; all problems are reported at once.

use std::collections::BTreeMap;

use spacetimedb_lib::db::raw_def::v10::{
    reducer_default_err_return_type, reducer_default_ok_return_type,
};
use spacetimedb_schema::def::ModuleDef;
use spacetimedb_schema::type_for_generate::{AlgebraicTypeDef, ProductTypeDef};

use crate::Unsupported;
use crate::items::Items;
use crate::names::{self, FunctionNames, TableNames};

/// Names `mod.rs` defines itself; a module type of the same name would collide with them.
const MOD_RS_NAMES: &[&str] = &[
    "AppliedDiff",
    "DbConnection",
    "DbUpdate",
    "ErrorContext",
    "EventContext",
    "ProcedureEventContext",
    "Reducer",
    "ReducerEventContext",
    "RemoteDbContext",
    "RemoteModule",
    "RemoteProcedures",
    "RemoteReducers",
    "RemoteTables",
    "SubscriptionEventContext",
    "SubscriptionHandle",
];

/// Rust's keywords (2024 edition, strict and reserved): not usable as plain identifiers.
const KEYWORDS: &[&str] = &[
    "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
    "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
    "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

pub fn supported(module: &ModuleDef, items: &Items) -> Result<(), Unsupported> {
    let mut problems = Problems::default();
    features(module, items, &mut problems);
    identifiers(module, items, &mut problems);
    if problems.0.is_empty() {
        Ok(())
    } else {
        Err(Unsupported(problems.0))
    }
}

#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, problem: String) {
        self.0.push(problem);
    }

    /// Reports `name` (what `what` generates to) if it is a keyword or was already used in the
    /// same namespace `seen`.
    fn ident(&mut self, seen: &mut BTreeMap<String, String>, name: String, what: String) {
        if KEYWORDS.contains(&name.as_str()) {
            self.add(format!("{what} becomes `{name}`, a Rust keyword"));
        } else if let Some(first) = seen.get(&name) {
            self.add(format!("{what} and {first} both become `{name}`"));
        } else {
            seen.insert(name, what);
        }
    }
}

fn features(module: &ModuleDef, items: &Items, problems: &mut Problems) {
    for name in module.submodules().keys() {
        problems.add(format!(
            "submodule `{name}`: bindings for mounted submodules are not generated"
        ));
    }
    for view in module.views() {
        problems.add(format!(
            "view `{}`: bindings for views are not generated",
            view.name
        ));
    }
    for table in &items.tables {
        if table.is_event {
            problems.add(format!(
                "event table `{}`: bindings for event tables are not generated",
                table.name
            ));
        }
    }
    for reducer in &items.reducers {
        if reducer.ok_return_type != reducer_default_ok_return_type()
            || reducer.err_return_type != reducer_default_err_return_type()
        {
            problems.add(format!(
                "reducer `{}` returns a value or an error other than `String`, which the 2.14 SDK \
                 cannot decode",
                &*reducer.name
            ));
        }
    }
    for typ in &items.types {
        let name = names::type_name(&typ.accessor_name);
        if module.typespace_for_generate()[typ.ty].is_recursive() {
            problems.add(format!(
                "type `{name}` is recursive, which needs indirection the generator does not add"
            ));
        }
        let tables = items.tables_of_row(typ);
        if tables.len() > 1 {
            let tables: Vec<String> = tables.iter().map(|t| format!("`{}`", t.name)).collect();
            problems.add(format!(
                "type `{name}` is the row type of several public tables ({}); its query-builder \
                 columns would be ambiguous",
                tables.join(", ")
            ));
        }
    }
}

/// Every name the generated code declares must be a usable Rust identifier and unique where
/// it is declared.
fn identifiers(module: &ModuleDef, items: &Items, problems: &mut Problems) {
    // Names `mod.rs` declares or re-exports: types, and the reducer and procedure traits.
    let mut top: BTreeMap<String, String> = MOD_RS_NAMES
        .iter()
        .map(|n| (n.to_string(), format!("the bindings' own `{n}`")))
        .collect();
    let mut files = BTreeMap::new();
    for typ in &items.types {
        let name = names::type_name(&typ.accessor_name);
        let what = format!("type `{name}`");
        problems.ident(&mut top, name.clone(), what.clone());
        problems.ident(
            &mut files,
            names::type_module(&typ.accessor_name),
            what.clone(),
        );
        match &module.typespace_for_generate()[typ.ty] {
            AlgebraicTypeDef::Product(product) => fields(problems, &what, product),
            AlgebraicTypeDef::Sum(sum) => {
                let mut variants = BTreeMap::new();
                for (variant, _) in sum.variants.iter() {
                    let v = format!("variant `{variant}` of {what}");
                    problems.ident(&mut variants, names::pascal(variant), v);
                }
            }
            AlgebraicTypeDef::PlainEnum(plain) => {
                let mut variants = BTreeMap::new();
                for variant in plain.variants.iter() {
                    let v = format!("variant `{variant}` of {what}");
                    problems.ident(&mut variants, names::pascal(variant), v);
                }
            }
        }
    }
    let mut table_methods = BTreeMap::new();
    for table in &items.tables {
        let names = TableNames::of(table);
        let what = format!("table `{}`", table.name);
        problems.ident(&mut table_methods, names.method, what.clone());
        problems.ident(&mut files, names.module, what);
    }
    let mut variants = BTreeMap::new();
    for reducer in &items.reducers {
        let names = FunctionNames::reducer(reducer);
        let what = format!("reducer `{}`", &*reducer.name);
        problems.ident(&mut top, names.method, what.clone());
        problems.ident(&mut files, names.module, what.clone());
        problems.ident(&mut variants, names.variant, what.clone());
        arguments(problems, &what, &reducer.params_for_generate, "callback");
    }
    for procedure in &items.procedures {
        let names = FunctionNames::procedure(procedure);
        let what = format!("procedure `{}`", procedure.name);
        problems.ident(&mut top, names.method, what.clone());
        problems.ident(&mut files, names.module, what.clone());
        arguments(
            problems,
            &what,
            &procedure.params_for_generate,
            "__callback",
        );
    }
}

fn fields(problems: &mut Problems, owner: &str, product: &ProductTypeDef) {
    let mut seen = BTreeMap::new();
    for (field, _) in product.elements.iter() {
        let what = format!("field `{field}` of {owner}");
        problems.ident(&mut seen, names::snake(field), what);
    }
}

/// A function's arguments become method parameters next to its callback parameter.
fn arguments(problems: &mut Problems, owner: &str, params: &ProductTypeDef, callback: &str) {
    let mut seen = BTreeMap::new();
    seen.insert(callback.to_string(), "the callback parameter".to_string());
    for (arg, _) in params.elements.iter() {
        let what = format!("argument `{arg}` of {owner}");
        problems.ident(&mut seen, names::snake(arg), what);
    }
}

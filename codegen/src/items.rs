//! Which parts of a module get bindings: the rules of the official generator.

use spacetimedb_lib::db::raw_def::v9::TableAccess;
use spacetimedb_schema::def::{ModuleDef, ProcedureDef, ReducerDef, TableDef, TypeDef};

/// The module's client-visible items, each list sorted by name so that the output does not
/// depend on declaration order.
pub struct Items<'a> {
    /// Public tables (private ones are invisible to clients).
    pub tables: Vec<&'a TableDef>,
    /// Every named type (the official generator writes them all, including row types).
    pub types: Vec<&'a TypeDef>,
    /// Reducers a client may call: not lifecycle reducers (`init`, `client_connected`,
    /// `client_disconnected`), not private ones.
    pub reducers: Vec<&'a ReducerDef>,
    /// Procedures a client may call (not private ones).
    pub procedures: Vec<&'a ProcedureDef>,
}

impl<'a> Items<'a> {
    pub fn of(module: &'a ModuleDef) -> Self {
        let mut tables: Vec<_> = module
            .tables()
            .filter(|t| t.table_access == TableAccess::Public)
            .collect();
        tables.sort_by(|a, b| a.accessor_name.cmp(&b.accessor_name));
        let mut types: Vec<_> = module.types().collect();
        types.sort_by(|a, b| a.accessor_name.cmp(&b.accessor_name));
        let mut reducers: Vec<_> = module
            .reducers()
            .filter(|r| r.lifecycle.is_none() && !r.visibility.is_private())
            .collect();
        reducers.sort_by(|a, b| a.accessor_name.cmp(&b.accessor_name));
        let mut procedures: Vec<_> = module
            .procedures()
            .filter(|p| !p.visibility.is_private())
            .collect();
        procedures.sort_by(|a, b| a.accessor_name.cmp(&b.accessor_name));
        Self {
            tables,
            types,
            reducers,
            procedures,
        }
    }

    /// The public tables whose rows are of type `typ`.
    pub fn tables_of_row(&self, typ: &TypeDef) -> Vec<&'a TableDef> {
        self.tables
            .iter()
            .copied()
            .filter(|t| t.product_type_ref == typ.ty)
            .collect()
    }
}

//! `<table>_table.rs`: the typed handle on a public table's client-cache rows, its row
//! callbacks, its unique-column lookups and its query-builder entry point.

use std::fmt::Write as _;

use spacetimedb_lib::sats::layout::PrimitiveType;
use spacetimedb_schema::def::{ModuleDef, TableDef};
use spacetimedb_schema::type_for_generate::AlgebraicTypeUse;

use crate::names::{self, TableNames};
use crate::rust;

pub fn table_file(module: &ModuleDef, table: &TableDef) -> String {
    let TableNames {
        pascal: p,
        method,
        module: _,
    } = TableNames::of(table);
    let name = &*table.name;
    let row = names::ref_name(module, table.product_type_ref);
    let row_module = names::ref_module(module, table.product_type_ref);
    let product = module.typespace_for_generate()[table.product_type_ref]
        .as_product()
        .expect("a table's row type is a product");

    let mut out = String::new();
    rust::header(&mut out);
    writeln!(out, "use super::{row_module}::{row};").unwrap();
    let field_types = product.elements.iter().map(|(_, ty)| ty);
    out.push_str(&rust::imports(module, field_types, None));

    writeln!(
        out,
        r#"
/// The client cache's rows of the table `{name}`, reached as `ctx.db.{method}()`.
pub struct {p}TableHandle<'ctx> {{
    imp: __sdk::TableHandle<{row}>,
    ctx: std::marker::PhantomData<&'ctx super::RemoteTables>,
}}

/// Names the table `{name}` in code generic over tables.
pub struct {p}TableAccessor;

impl __sdk::TableAccessor<super::RemoteTables> for {p}TableAccessor {{
    type Row = {row};
    type Handle<'db> = {p}TableHandle<'db>;

    fn get<'db>(db: &'db super::RemoteTables) -> Self::Handle<'db> {{
        db.{method}()
    }}
}}

/// Adds `{method}()` to [`super::RemoteTables`].
#[allow(non_camel_case_types)]
pub trait {p}TableAccess {{
    /// The handle on the table `{name}`.
    #[allow(non_snake_case)]
    fn {method}(&self) -> {p}TableHandle<'_>;
}}

impl {p}TableAccess for super::RemoteTables {{
    fn {method}(&self) -> {p}TableHandle<'_> {{
        {p}TableHandle {{
            imp: self.imp.get_table::<{row}>({name:?}),
            ctx: std::marker::PhantomData,
        }}
    }}
}}

pub struct {p}InsertCallbackId(__sdk::CallbackId);
pub struct {p}DeleteCallbackId(__sdk::CallbackId);

impl<'ctx> __sdk::TableLike for {p}TableHandle<'ctx> {{
    type Row = {row};
    type EventContext = super::EventContext;

    fn count(&self) -> u64 {{
        self.imp.count()
    }}
    fn iter(&self) -> impl Iterator<Item = {row}> + '_ {{
        self.imp.iter()
    }}
}}

impl<'ctx> __sdk::Table for {p}TableHandle<'ctx> {{
    type Row = {row};
    type EventContext = super::EventContext;

    fn count(&self) -> u64 {{
        self.imp.count()
    }}
    fn iter(&self) -> impl Iterator<Item = {row}> + '_ {{
        self.imp.iter()
    }}

    type InsertCallbackId = {p}InsertCallbackId;

    fn on_insert(
        &self,
        callback: impl FnMut(&Self::EventContext, &Self::Row) + Send + 'static,
    ) -> {p}InsertCallbackId {{
        {p}InsertCallbackId(self.imp.on_insert(Box::new(callback)))
    }}

    fn remove_on_insert(&self, callback: {p}InsertCallbackId) {{
        self.imp.remove_on_insert(callback.0)
    }}

    type DeleteCallbackId = {p}DeleteCallbackId;

    fn on_delete(
        &self,
        callback: impl FnMut(&Self::EventContext, &Self::Row) + Send + 'static,
    ) -> {p}DeleteCallbackId {{
        {p}DeleteCallbackId(self.imp.on_delete(Box::new(callback)))
    }}

    fn remove_on_delete(&self, callback: {p}DeleteCallbackId) {{
        self.imp.remove_on_delete(callback.0)
    }}
}}

impl<'ctx> __sdk::WithInsert for {p}TableHandle<'ctx> {{
    type InsertCallbackId = {p}InsertCallbackId;

    fn on_insert(
        &self,
        callback: impl FnMut(&Self::EventContext, &Self::Row) + Send + 'static,
    ) -> {p}InsertCallbackId {{
        {p}InsertCallbackId(self.imp.on_insert(Box::new(callback)))
    }}

    fn remove_on_insert(&self, callback: {p}InsertCallbackId) {{
        self.imp.remove_on_insert(callback.0)
    }}
}}

impl<'ctx> __sdk::WithDelete for {p}TableHandle<'ctx> {{
    type DeleteCallbackId = {p}DeleteCallbackId;

    fn on_delete(
        &self,
        callback: impl FnMut(&Self::EventContext, &Self::Row) + Send + 'static,
    ) -> {p}DeleteCallbackId {{
        {p}DeleteCallbackId(self.imp.on_delete(Box::new(callback)))
    }}

    fn remove_on_delete(&self, callback: {p}DeleteCallbackId) {{
        self.imp.remove_on_delete(callback.0)
    }}
}}"#
    )
    .unwrap();

    if table.primary_key.is_some() {
        writeln!(
            out,
            r#"
pub struct {p}UpdateCallbackId(__sdk::CallbackId);

impl<'ctx> __sdk::TableWithPrimaryKey for {p}TableHandle<'ctx> {{
    type UpdateCallbackId = {p}UpdateCallbackId;

    fn on_update(
        &self,
        callback: impl FnMut(&Self::EventContext, &Self::Row, &Self::Row) + Send + 'static,
    ) -> {p}UpdateCallbackId {{
        {p}UpdateCallbackId(self.imp.on_update(Box::new(callback)))
    }}

    fn remove_on_update(&self, callback: {p}UpdateCallbackId) {{
        self.imp.remove_on_update(callback.0)
    }}
}}

impl<'ctx> __sdk::WithUpdate for {p}TableHandle<'ctx> {{
    type UpdateCallbackId = {p}UpdateCallbackId;

    fn on_update(
        &self,
        callback: impl FnMut(&Self::EventContext, &Self::Row, &Self::Row) + Send + 'static,
    ) -> {p}UpdateCallbackId {{
        {p}UpdateCallbackId(self.imp.on_update(Box::new(callback)))
    }}

    fn remove_on_update(&self, callback: {p}UpdateCallbackId) {{
        self.imp.remove_on_update(callback.0)
    }}
}}"#
        )
        .unwrap();
    }

    let unique = unique_columns(module, table);
    for (field, ty) in &unique {
        let unique_type = format!("{p}{}Unique", names::pascal(field));
        writeln!(
            out,
            r#"
/// The unique column `{field}` of the table `{name}`:
/// `ctx.db.{method}().{field}().find(&value)`.
pub struct {unique_type}<'ctx> {{
    imp: __sdk::UniqueConstraintHandle<{row}, {ty}>,
    phantom: std::marker::PhantomData<&'ctx super::RemoteTables>,
}}

impl<'ctx> {p}TableHandle<'ctx> {{
    /// Lookups by the unique column `{field}`.
    pub fn {field}(&self) -> {unique_type}<'ctx> {{
        {unique_type} {{
            imp: self.imp.get_unique_constraint::<{ty}>({field:?}),
            phantom: std::marker::PhantomData,
        }}
    }}
}}

impl<'ctx> {unique_type}<'ctx> {{
    /// The cached row whose `{field}` equals `col_val`, if the subscriptions hold it.
    pub fn find(&self, col_val: &{ty}) -> Option<{row}> {{
        self.imp.find(col_val)
    }}
}}"#
        )
        .unwrap();
    }

    writeln!(
        out,
        "
#[doc(hidden)]
pub(super) fn register_table(client_cache: &mut __sdk::ClientCache<super::RemoteModule>) {{
    let _table = client_cache.get_or_make_table::<{row}>({name:?});"
    )
    .unwrap();
    for (field, ty) in &unique {
        writeln!(
            out,
            "    _table.add_unique_constraint::<{ty}>({field:?}, |row| &row.{field});"
        )
        .unwrap();
    }
    writeln!(
        out,
        r#"}}

#[doc(hidden)]
pub(super) fn parse_table_update(
    raw_updates: __ws::v2::TableUpdate,
) -> __sdk::Result<__sdk::TableUpdate<{row}>> {{
    __sdk::TableUpdate::parse_table_update(raw_updates).map_err(|e| {{
        __sdk::InternalError::failed_parse("TableUpdate<{row}>", "TableUpdate")
            .with_cause(e)
            .into()
    }})
}}

/// Adds `{method}()` to the query builder's `from` ([`__sdk::QueryTableAccessor`]).
#[allow(non_camel_case_types)]
pub trait {method}QueryTableAccess {{
    /// The table `{name}` for typed subscription queries.
    #[allow(non_snake_case)]
    fn {method}(&self) -> __sdk::__query_builder::Table<{row}>;
}}

impl {method}QueryTableAccess for __sdk::QueryTableAccessor {{
    fn {method}(&self) -> __sdk::__query_builder::Table<{row}> {{
        __sdk::__query_builder::Table::new({name:?})
    }}
}}"#
    )
    .unwrap();
    out
}

/// The columns with a single-column unique constraint (the primary key among them), in column
/// order, as (field name, Rust type). Like the official generator, only columns of types the
/// SDK can look up by (integers, bool, strings, identities, plain enums) get an accessor.
fn unique_columns(module: &ModuleDef, table: &TableDef) -> Vec<(String, String)> {
    let product = module.typespace_for_generate()[table.product_type_ref]
        .as_product()
        .expect("a table's row type is a product");
    let unique = |col: usize| {
        table.constraints.values().any(|c| {
            c.data
                .unique_columns()
                .and_then(|cols| cols.as_singleton())
                .is_some_and(|c| c.idx() == col)
        })
    };
    product
        .elements
        .iter()
        .enumerate()
        .filter(|(col, (_, ty))| unique(*col) && lookup_key(module, ty))
        .map(|(_, (field, ty))| (names::snake(field), rust::ty(module, ty)))
        .collect()
}

fn lookup_key(module: &ModuleDef, ty: &AlgebraicTypeUse) -> bool {
    match ty {
        AlgebraicTypeUse::Primitive(p) => !matches!(p, PrimitiveType::F32 | PrimitiveType::F64),
        AlgebraicTypeUse::String | AlgebraicTypeUse::Identity | AlgebraicTypeUse::ConnectionId => {
            true
        }
        AlgebraicTypeUse::Ref(r) => module.typespace_for_generate()[*r].is_plain_enum(),
        _ => false,
    }
}

/// The field of the primary key, for `mod.rs`'s `with_updates_by_pk`.
pub fn primary_key_field(module: &ModuleDef, table: &TableDef) -> Option<String> {
    let product = module.typespace_for_generate()[table.product_type_ref]
        .as_product()
        .expect("a table's row type is a product");
    table
        .primary_key
        .map(|col| names::snake(&product.elements[col.idx()].0))
}

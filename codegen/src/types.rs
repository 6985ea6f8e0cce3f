//! `<type>_type.rs`: a named type as a Rust struct or enum; for a table's row type also the
//! query builder's column accessors.

use std::fmt::Write as _;

use spacetimedb_schema::def::{ModuleDef, TableDef, TypeDef};
use spacetimedb_schema::type_for_generate::{AlgebraicTypeDef, AlgebraicTypeUse};

use crate::{names, rust};

/// The file defining `typ`; `row_of` is the public table whose rows it describes, if any.
pub fn type_file(module: &ModuleDef, typ: &TypeDef, row_of: Option<&TableDef>) -> String {
    let name = names::type_name(&typ.accessor_name);
    let mut out = String::new();
    rust::header(&mut out);
    match &module.typespace_for_generate()[typ.ty] {
        AlgebraicTypeDef::Product(product) => {
            let uses = product.elements.iter().map(|(_, ty)| ty);
            out.push_str(&rust::imports(module, uses, Some(typ.ty)));
            out.push('\n');
            rust::define_struct(module, &mut out, "pub", &name, &product.elements);
        }
        AlgebraicTypeDef::Sum(sum) => {
            let uses = sum.variants.iter().map(|(_, ty)| ty);
            out.push_str(&rust::imports(module, uses, Some(typ.ty)));
            out.push('\n');
            rust::define_enum(module, &mut out, &name, &sum.variants);
        }
        AlgebraicTypeDef::PlainEnum(plain) => {
            let variants: Vec<_> = plain
                .variants
                .iter()
                .map(|v| (v.clone(), AlgebraicTypeUse::Unit))
                .collect();
            out.push('\n');
            rust::define_enum(module, &mut out, &name, &variants);
        }
    }
    rust::in_module(&mut out, &name);
    if let Some(table) = row_of {
        query_columns(module, &mut out, &name, table);
    }
    out
}

/// `HasCols` (every column, for filters) and `HasIxCols` (single-column indexes, for semijoins)
/// on a row type, and `CanBeLookupTable`: what `subscription_builder().add_query(..)` needs.
fn query_columns(module: &ModuleDef, out: &mut String, row: &str, table: &TableDef) {
    let product = module.typespace_for_generate()[table.product_type_ref]
        .as_product()
        .expect("a table's row type is a product");
    // Field names as in the row struct; SQL names are the columns' names in the database.
    let columns: Vec<(String, &str, String)> = product
        .elements
        .iter()
        .zip(&table.columns)
        .map(|((field, ty), column)| (names::snake(field), &*column.name, rust::ty(module, ty)))
        .collect();

    writeln!(
        out,
        "
/// The columns of the table `{table}` for the query builder's filters.
pub struct {row}Cols {{",
        table = table.name
    )
    .unwrap();
    for (field, _, ty) in &columns {
        writeln!(
            out,
            "    pub {field}: __sdk::__query_builder::Col<{row}, {ty}>,"
        )
        .unwrap();
    }
    writeln!(
        out,
        "}}

impl __sdk::__query_builder::HasCols for {row} {{
    type Cols = {row}Cols;
    fn cols(table_name: &'static str) -> Self::Cols {{
        {row}Cols {{"
    )
    .unwrap();
    for (field, sql, _) in &columns {
        writeln!(
            out,
            "            {field}: __sdk::__query_builder::Col::new(table_name, {sql:?}),"
        )
        .unwrap();
    }
    out.push_str("        }\n    }\n}\n");

    // One entry per indexed column, in index-name order (the official generator's order).
    let mut indexes: Vec<_> = table.indexes.values().collect();
    indexes.sort_by(|a, b| a.name.cmp(&b.name));
    let mut indexed: Vec<&(String, &str, String)> = Vec::new();
    for index in indexes {
        if let Some(col) = index.algorithm.columns().as_singleton() {
            let column = &columns[col.idx()];
            if !indexed.contains(&column) {
                indexed.push(column);
            }
        }
    }
    writeln!(
        out,
        "
/// The indexed columns of the table `{table}`, which the query builder can join on.
pub struct {row}IxCols {{",
        table = table.name
    )
    .unwrap();
    for (field, _, ty) in &indexed {
        writeln!(
            out,
            "    pub {field}: __sdk::__query_builder::IxCol<{row}, {ty}>,"
        )
        .unwrap();
    }
    writeln!(
        out,
        "}}

impl __sdk::__query_builder::HasIxCols for {row} {{
    type IxCols = {row}IxCols;
    fn ix_cols(table_name: &'static str) -> Self::IxCols {{
        {row}IxCols {{"
    )
    .unwrap();
    for (field, sql, _) in &indexed {
        writeln!(
            out,
            "            {field}: __sdk::__query_builder::IxCol::new(table_name, {sql:?}),"
        )
        .unwrap();
    }
    writeln!(
        out,
        "        }}
    }}
}}

impl __sdk::__query_builder::CanBeLookupTable for {row} {{}}"
    )
    .unwrap();
}

//! Row inserts, updates and counts for the write paths, which make them per arc or vertex.
//!
//! The 2.14 bindings' `Table::insert`, `Table::count` and `UniqueColumn::update` ask the engine
//! for the table's id by name on every call: a host call plus a name lookup in the engine's
//! system table, 4.4% of the executor thread's time in a bulk load (`results/load-dblp/`). The
//! id never changes while the module runs, and the generated `TableInternal::table_id` already
//! caches it; these functions use that cache and otherwise do what the bindings do (encode the
//! row as BSATN, one host call, panic on a constraint violation, which fails the transaction).
//! They suit tables without auto-increment columns only: no generated value is read back.

use spacetimedb::sats::bsatn;
use spacetimedb::table::{Column, Index, PrimaryKey, UniqueColumn};
use spacetimedb::{Table, sys};
use std::cell::RefCell;

thread_local! {
    /// The encoding buffer, reused so that a row costs no allocation.
    static BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

fn with_encoded<T: Table>(row: &T::Row, write: impl FnOnce(&mut [u8]) -> Result<(), sys::Errno>) {
    if let Err(e) = try_with_encoded::<T>(row, write) {
        panic!("writing a row of {}: {e}", T::TABLE_NAME);
    }
}

fn try_with_encoded<T: Table>(
    row: &T::Row,
    write: impl FnOnce(&mut [u8]) -> Result<(), sys::Errno>,
) -> Result<(), sys::Errno> {
    BUF.with_borrow_mut(|buf| {
        buf.clear();
        bsatn::to_writer(buf, row).expect("a row always encodes");
        write(buf)
    })
}

/// Inserts `row` into `T` (as `Table::insert`).
pub fn insert<T: Table>(_table: &T, row: &T::Row) {
    with_encoded::<T>(row, |buf| {
        sys::datastore_insert_bsatn(T::table_id(), buf).map(drop)
    });
}

/// What [`insert_if_absent`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// The row is new.
    New,
    /// The same row was stored already (tables are sets): nothing changed.
    Already,
    /// Another row holds one of its unique keys: nothing changed.
    KeyTaken,
}

/// Inserts `row` into `T` unless it or a row with one of its unique keys is there. One insert
/// answers what a lookup would, without the lookup's walk down the index: the engine keeps a
/// table's rows a set (an identical row is not inserted again, and the call succeeds) and
/// refuses a row whose unique key another row holds, leaving the transaction as it was.
pub fn insert_if_absent<T: Table>(table: &T, row: &T::Row) -> Inserted {
    let before = count(table);
    match insert_unless_key_taken(table, row) {
        true if count(table) > before => Inserted::New,
        true => Inserted::Already,
        false => Inserted::KeyTaken,
    }
}

/// Inserts `row` into `T` unless another row holds one of its unique keys (`false`: nothing
/// changed). The same row stored already is left as it is, which only counting rows tells
/// apart from an insert (see [`insert_if_absent`]).
pub fn insert_unless_key_taken<T: Table>(_table: &T, row: &T::Row) -> bool {
    match try_with_encoded::<T>(row, |buf| {
        sys::datastore_insert_bsatn(T::table_id(), buf).map(drop)
    }) {
        Ok(()) => true,
        Err(sys::Errno::UNIQUE_ALREADY_EXISTS) => false,
        Err(e) => panic!("writing a row of {}: {e}", T::TABLE_NAME),
    }
}

/// Replaces the row whose primary key `row` has with `row` (as `UniqueColumn::update`).
pub fn update<T, C>(_key: &UniqueColumn<T, C::ColType, C>, row: &T::Row)
where
    T: Table,
    C: Index + Column<Table = T> + PrimaryKey,
{
    with_encoded::<T>(row, |buf| {
        sys::datastore_update_bsatn(T::table_id(), C::index_id(), buf).map(drop)
    });
}

/// The rows `T` holds, this transaction's writes included (as `Table::count`).
pub fn count<T: Table>(_table: &T) -> u64 {
    sys::datastore_table_row_count(T::table_id())
        .unwrap_or_else(|e| panic!("counting the rows of {}: {e}", T::TABLE_NAME))
}

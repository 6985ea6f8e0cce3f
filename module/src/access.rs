//! Who may change the graph: the database's owner, and the identities the owner has granted.
//!
//! `init` runs once, when the database is created by a publish, with the publisher (the owner)
//! as sender, and records it (and stores the empty graph's `graph_meta` row). Every reducer that writes (`add_edges`, `add_vertices`,
//! `remove_edges`, `remove_vertex`, `clear_graph`, …, and the Stage-1 reducers that store their
//! answers in `traversal_result`) first checks its caller; procedures are open to every
//! identity. A database created by a module version without this
//! table has no owner recorded: the first identity that writes to it becomes its owner (so
//! publish such a database again with its data cleared, or write to it once yourself).

use crate::schema::{GraphMeta, GraphWriter, graph_meta, graph_writer};
use spacetimedb::{Identity, ReducerContext, Table, reducer};

#[reducer(init)]
pub fn init(ctx: &ReducerContext) {
    ctx.db.graph_writer().insert(GraphWriter {
        identity: ctx.sender(),
        owner: true,
    });
    // The graph's one meta row exists from the start (version 0, empty), so that a subscriber's
    // `on_update` sees the first write too, as it sees every later one.
    ctx.db.graph_meta().insert(GraphMeta::default());
}

/// `Ok` if the caller may change the graph; otherwise an error that says how to get access.
pub fn check_writer(ctx: &ReducerContext) -> Result<(), String> {
    let writers = ctx.db.graph_writer();
    if writers.identity().find(ctx.sender()).is_some() {
        return Ok(());
    }
    if writers.count() == 0 {
        // A database from before this table (see the module docs): the first writer becomes
        // its owner. Only then: rows without an owner (the owner's own SQL can leave them) make
        // no stranger the owner.
        writers.insert(GraphWriter {
            identity: ctx.sender(),
            owner: true,
        });
        return Ok(());
    }
    Err(format!(
        "identity {} may not change this graph: only its owner and the writers the owner \
         grants (reducer grant_writer) may",
        ctx.sender()
    ))
}

pub(crate) fn check_owner(ctx: &ReducerContext, what: &str) -> Result<(), String> {
    match ctx.db.graph_writer().identity().find(ctx.sender()) {
        Some(w) if w.owner => Ok(()),
        _ => Err(format!(
            "identity {} may not {what}: only the database's owner may",
            ctx.sender()
        )),
    }
}

/// Lets `identity` change the graph (owner only). Granting a writer again changes nothing.
#[reducer]
pub fn grant_writer(ctx: &ReducerContext, identity: Identity) -> Result<(), String> {
    check_owner(ctx, "grant writers")?;
    if ctx.db.graph_writer().identity().find(identity).is_none() {
        ctx.db.graph_writer().insert(GraphWriter {
            identity,
            owner: false,
        });
    }
    Ok(())
}

/// Takes back `identity`'s right to change the graph (owner only; the owner's own cannot be).
#[reducer]
pub fn revoke_writer(ctx: &ReducerContext, identity: Identity) -> Result<(), String> {
    check_owner(ctx, "revoke writers")?;
    match ctx.db.graph_writer().identity().find(identity) {
        Some(w) if w.owner => Err("the owner's right to write may not be revoked".to_string()),
        Some(_) => {
            ctx.db.graph_writer().identity().delete(identity);
            Ok(())
        }
        None => Ok(()),
    }
}

//! Exercises what graph-host must pass through unchanged from the engine: reducer commit and
//! rollback, procedure transactions that commit or roll back, panics, typed return values, a
//! procedure that holds its instance for a while, and the connection lifecycle (every HTTP
//! request, SQL statement and WebSocket is a connection, which `client_connected` may refuse).
//! Used by the testkit's HTTP and WebSocket tests (`testkit/tests/`).

use spacetimedb::{
    ConnectionId, Identity, ProcedureContext, ReducerContext, SpacetimeType, Table, procedure,
    reducer, table,
};

#[table(accessor = note, public)]
pub struct Note {
    #[primary_key]
    #[auto_inc]
    pub id: u64,
    pub text: String,
}

/// Private: only the owner may read it with SQL.
#[table(accessor = secret)]
pub struct Secret {
    pub text: String,
}

/// Each connection's arrival (`connected`) and departure, as the lifecycle reducers saw them.
#[table(accessor = visit, public)]
pub struct Visit {
    #[primary_key]
    #[auto_inc]
    pub id: u64,
    pub connection_id: ConnectionId,
    pub identity: Identity,
    pub connected: bool,
}

/// Identities that `client_connected` turns away, as a module's ban list would.
#[table(accessor = refused)]
pub struct Refused {
    #[primary_key]
    pub identity: Identity,
}

#[reducer(client_connected)]
pub fn connected(ctx: &ReducerContext) -> Result<(), String> {
    if ctx.db.refused().identity().find(ctx.sender()).is_some() {
        return Err("this identity is refused".into());
    }
    record_visit(ctx, true);
    Ok(())
}

#[reducer(client_disconnected)]
pub fn disconnected(ctx: &ReducerContext) {
    record_visit(ctx, false);
}

fn record_visit(ctx: &ReducerContext, connected: bool) {
    ctx.db.visit().insert(Visit {
        id: 0,
        connection_id: ctx.connection_id().unwrap_or(ConnectionId::ZERO),
        identity: ctx.sender(),
        connected,
    });
}

/// Makes `client_connected` refuse `identity` (or accept it again).
#[reducer]
pub fn set_refused(ctx: &ReducerContext, identity: Identity, refused: bool) {
    ctx.db.refused().identity().delete(identity);
    if refused {
        ctx.db.refused().insert(Refused { identity });
    }
}

#[reducer]
pub fn add_note(ctx: &ReducerContext, text: String) -> Result<(), String> {
    if text.is_empty() {
        return Err("text must not be empty".into());
    }
    ctx.db.note().insert(Note {
        id: 0,
        text: text.clone(),
    });
    ctx.db.secret().insert(Secret { text });
    Ok(())
}

/// Inserts, then fails: the insert must be rolled back.
#[reducer]
pub fn add_note_then_fail(ctx: &ReducerContext, text: String) -> Result<(), String> {
    ctx.db.note().insert(Note { id: 0, text });
    Err("failed after inserting".into())
}

#[reducer]
pub fn panic_reducer(_ctx: &ReducerContext) {
    panic!("reducer panicked on purpose");
}

/// Inserts in a procedure transaction that commits; returns the new row's id.
#[procedure]
pub fn insert_note(ctx: &mut ProcedureContext, text: String) -> u64 {
    insert_committed(ctx, text)
}

fn insert_committed(ctx: &mut ProcedureContext, text: String) -> u64 {
    ctx.with_tx(|tx| {
        tx.db
            .note()
            .insert(Note {
                id: 0,
                text: text.clone(),
            })
            .id
    })
}

/// Inserts in a procedure transaction that returns `Err`: the insert must be rolled back.
#[procedure]
pub fn insert_note_then_fail(ctx: &mut ProcedureContext, text: String) -> Result<u64, String> {
    ctx.try_with_tx(|tx| {
        tx.db.note().insert(Note {
            id: 0,
            text: text.clone(),
        });
        Err::<u64, String>("rolled back on purpose".into())
    })
}

#[procedure]
pub fn panic_procedure(_ctx: &mut ProcedureContext) -> u32 {
    panic!("procedure panicked on purpose");
}

/// Holds its module instance for `millis` ms without working (suspended, as a procedure that
/// yields is), then returns `millis`: how long calls wait for an instance, made to measure.
#[procedure]
pub fn pause(ctx: &mut ProcedureContext, millis: u32) -> u32 {
    sleep_for(ctx, millis);
    millis
}

fn sleep_for(ctx: &mut ProcedureContext, millis: u32) {
    let until = ctx.timestamp + std::time::Duration::from_millis(millis.into());
    ctx.sleep_until(until);
}

/// Pauses as `pause` does, then inserts a note in a transaction that commits: a call that can
/// outlive a delete of its database and then write.
#[procedure]
pub fn pause_then_insert_note(ctx: &mut ProcedureContext, millis: u32, text: String) -> u64 {
    sleep_for(ctx, millis);
    insert_committed(ctx, text)
}

#[derive(SpacetimeType)]
pub enum Kind {
    Nothing,
    Count(u64),
}

#[derive(SpacetimeType)]
pub struct Echo {
    pub x: u64,
    pub label: Option<String>,
    pub kind: Kind,
}

/// A typed return value with a struct, an `Option` and an enum.
#[procedure]
pub fn echo(_ctx: &mut ProcedureContext, x: u64, label: Option<String>) -> Echo {
    let kind = if x == 0 {
        Kind::Nothing
    } else {
        Kind::Count(x)
    };
    Echo { x, label, kind }
}

//! `mod.rs`: the module's declarations and re-exports, the `Reducer` enum, the typed
//! `DbUpdate`/`AppliedDiff` the SDK applies to its client cache, the connection and context
//! types, and the `SpacetimeModule` impl that ties them together for `spacetimedb-sdk` 2.14.

use std::fmt::Write as _;

use spacetimedb_schema::def::ModuleDef;

use crate::items::Items;
use crate::names::{self, FunctionNames, TableNames};
use crate::{rust, tables};

/// `modules`: the stems of the other generated files.
pub fn mod_file(module: &ModuleDef, items: &Items, modules: &[String]) -> String {
    let mut out = String::new();
    rust::header(&mut out);
    out.push('\n');
    for m in modules {
        writeln!(out, "pub mod {m};").unwrap();
    }
    out.push('\n');
    reexports(&mut out, items);
    reducer_enum(module, &mut out, items);
    db_update(module, &mut out, items);
    applied_diff(module, &mut out, items);
    out.push_str(FIXED_TYPES);
    db_context_impl(&mut out, "DbConnection");
    for (context, event, doc) in CONTEXTS {
        event_context(&mut out, context, *event, doc);
    }
    spacetime_module(&mut out, items);
    out
}

/// Types by name, each table file's handle, accessor traits and callback ids (glob), and the
/// reducer and procedure extension traits by name.
fn reexports(out: &mut String, items: &Items) {
    for typ in &items.types {
        let module = names::type_module(&typ.accessor_name);
        let name = names::type_name(&typ.accessor_name);
        writeln!(out, "pub use {module}::{name};").unwrap();
    }
    for table in &items.tables {
        writeln!(out, "pub use {}::*;", TableNames::of(table).module).unwrap();
    }
    for reducer in &items.reducers {
        let n = FunctionNames::reducer(reducer);
        writeln!(out, "pub use {}::{};", n.module, n.method).unwrap();
    }
    for procedure in &items.procedures {
        let n = FunctionNames::procedure(procedure);
        writeln!(out, "pub use {}::{};", n.module, n.method).unwrap();
    }
}

fn reducer_enum(module: &ModuleDef, out: &mut String, items: &Items) {
    out.push_str(
        "
/// A call of one of the module's reducers, with its arguments: the SDK reports it in
/// [`__sdk::ReducerEvent`]s.
#[derive(Clone, PartialEq, Debug)]
pub enum Reducer {
",
    );
    for reducer in &items.reducers {
        let variant = FunctionNames::reducer(reducer).variant;
        let params = &reducer.params_for_generate.elements;
        if params.is_empty() {
            writeln!(out, "    {variant},").unwrap();
        } else {
            writeln!(out, "    {variant} {{").unwrap();
            for (param, ty) in params.iter() {
                writeln!(
                    out,
                    "        {}: {},",
                    names::snake(param),
                    rust::ty(module, ty)
                )
                .unwrap();
            }
            out.push_str("    },\n");
        }
    }
    out.push_str(
        "}

impl __sdk::InModule for Reducer {
    type Module = RemoteModule;
}

impl __sdk::Reducer for Reducer {
    fn reducer_name(&self) -> &'static str {
        match self {
",
    );
    for reducer in &items.reducers {
        let variant = FunctionNames::reducer(reducer).variant;
        let fields = if reducer.params_for_generate.elements.is_empty() {
            ""
        } else {
            " { .. }"
        };
        writeln!(
            out,
            "            Reducer::{variant}{fields} => {:?},",
            &*reducer.name
        )
        .unwrap();
    }
    if items.reducers.is_empty() {
        out.push_str("            _ => unreachable!(),\n");
    }
    out.push_str(
        "        }
    }

    #[allow(clippy::clone_on_copy)]
    fn args_bsatn(&self) -> Result<Vec<u8>, __sats::bsatn::EncodeError> {
        match self {
",
    );
    for reducer in &items.reducers {
        let n = FunctionNames::reducer(reducer);
        let params: Vec<String> = reducer
            .params_for_generate
            .elements
            .iter()
            .map(|(p, _)| names::snake(p))
            .collect();
        let pattern = if params.is_empty() {
            String::new()
        } else {
            format!(" {{ {} }}", params.join(", "))
        };
        let clones: Vec<String> = params.iter().map(|p| format!("{p}: {p}.clone()")).collect();
        writeln!(
            out,
            "            Reducer::{variant}{pattern} => __sats::bsatn::to_vec(&{module}::{args} {{ {clones} }}),",
            variant = n.variant,
            module = n.module,
            args = n.args,
            clones = clones.join(", "),
        )
        .unwrap();
    }
    if items.reducers.is_empty() {
        out.push_str("            _ => unreachable!(),\n");
    }
    out.push_str("        }\n    }\n}\n");
}

/// The rows a transaction or subscription changed, parsed per table.
fn db_update(module: &ModuleDef, out: &mut String, items: &Items) {
    out.push_str(
        "
#[derive(Default, Debug)]
#[allow(non_snake_case)]
#[doc(hidden)]
pub struct DbUpdate {
",
    );
    for table in &items.tables {
        let row = names::ref_name(module, table.product_type_ref);
        writeln!(
            out,
            "    {}: __sdk::TableUpdate<{row}>,",
            TableNames::of(table).method
        )
        .unwrap();
    }
    out.push_str(
        "}

impl TryFrom<__ws::v2::TransactionUpdate> for DbUpdate {
    type Error = __sdk::Error;
    fn try_from(raw: __ws::v2::TransactionUpdate) -> Result<Self, Self::Error> {
        let mut db_update = DbUpdate::default();
        for table_update in __sdk::transaction_update_iter_table_updates(raw) {
            match &table_update.table_name[..] {
",
    );
    for table in &items.tables {
        let n = TableNames::of(table);
        writeln!(
            out,
            "                {:?} => db_update.{}.append({}::parse_table_update(table_update)?),",
            &*table.name, n.method, n.module
        )
        .unwrap();
    }
    out.push_str(
        r#"                unknown => {
                    return Err(
                        __sdk::InternalError::unknown_name("table", unknown, "DatabaseUpdate").into(),
                    );
                }
            }
        }
        Ok(db_update)
    }
}

impl __sdk::InModule for DbUpdate {
    type Module = RemoteModule;
}

impl __sdk::DbUpdate for DbUpdate {
    fn apply_to_client_cache(&self, cache: &mut __sdk::ClientCache<RemoteModule>) -> AppliedDiff<'_> {
        let mut diff = AppliedDiff::default();
"#,
    );
    for table in &items.tables {
        let method = TableNames::of(table).method;
        let row = names::ref_name(module, table.product_type_ref);
        let updates = match tables::primary_key_field(module, table) {
            Some(pk) => format!(".with_updates_by_pk(|row| &row.{pk})"),
            None => String::new(),
        };
        writeln!(
            out,
            "        diff.{method} = cache.apply_diff_to_table::<{row}>({:?}, &self.{method}){updates};",
            &*table.name
        )
        .unwrap();
    }
    out.push_str("        diff\n    }\n");
    for (function, parse, what) in [
        ("parse_initial_rows", "parse_row_list_as_inserts", "inserts"),
        (
            "parse_unsubscribe_rows",
            "parse_row_list_as_deletes",
            "deletes",
        ),
    ] {
        writeln!(
            out,
            "
    /// Every row in `raw` as {what}.
    fn {function}(raw: __ws::v2::QueryRows) -> __sdk::Result<Self> {{
        let mut db_update = DbUpdate::default();
        for table_rows in raw.tables {{
            match &table_rows.table[..] {{"
        )
        .unwrap();
        for table in &items.tables {
            writeln!(
                out,
                "                {:?} => db_update.{}.append(__sdk::{parse}(table_rows.rows)?),",
                &*table.name,
                TableNames::of(table).method
            )
            .unwrap();
        }
        out.push_str(
            r#"                unknown => {
                    return Err(__sdk::InternalError::unknown_name("table", unknown, "QueryRows").into());
                }
            }
        }
        Ok(db_update)
    }
"#,
        );
    }
    out.push_str("}\n");
}

/// What applying a `DbUpdate` changed in the client cache: the rows whose callbacks run.
fn applied_diff(module: &ModuleDef, out: &mut String, items: &Items) {
    out.push_str(
        "
#[derive(Default)]
#[allow(non_snake_case)]
#[doc(hidden)]
pub struct AppliedDiff<'r> {
",
    );
    for table in &items.tables {
        let row = names::ref_name(module, table.product_type_ref);
        writeln!(
            out,
            "    {}: __sdk::TableAppliedDiff<'r, {row}>,",
            TableNames::of(table).method
        )
        .unwrap();
    }
    out.push_str(
        "    // Uses `'r` even when the module has no tables.
    __unused: std::marker::PhantomData<&'r ()>,
}

impl __sdk::InModule for AppliedDiff<'_> {
    type Module = RemoteModule;
}

impl<'r> __sdk::AppliedDiff<'r> for AppliedDiff<'r> {
    fn invoke_row_callbacks(&self, event: &EventContext, callbacks: &mut __sdk::DbCallbacks<RemoteModule>) {
",
    );
    for table in &items.tables {
        let row = names::ref_name(module, table.product_type_ref);
        writeln!(
            out,
            "        callbacks.invoke_table_row_callbacks::<{row}>({:?}, &self.{}, event);",
            &*table.name,
            TableNames::of(table).method
        )
        .unwrap();
    }
    out.push_str("    }\n}\n");
}

fn spacetime_module(out: &mut String, items: &Items) {
    out.push_str(
        "
impl __sdk::SpacetimeModule for RemoteModule {
    type DbConnection = DbConnection;
    type EventContext = EventContext;
    type ReducerEventContext = ReducerEventContext;
    type ProcedureEventContext = ProcedureEventContext;
    type SubscriptionEventContext = SubscriptionEventContext;
    type ErrorContext = ErrorContext;
    type Reducer = Reducer;
    type DbView = RemoteTables;
    type Reducers = RemoteReducers;
    type Procedures = RemoteProcedures;
    type DbUpdate = DbUpdate;
    type AppliedDiff<'r> = AppliedDiff<'r>;
    type SubscriptionHandle = SubscriptionHandle;
    type QueryBuilder = __sdk::QueryBuilder;

    fn register_tables(client_cache: &mut __sdk::ClientCache<Self>) {
",
    );
    for table in &items.tables {
        writeln!(
            out,
            "        {}::register_table(client_cache);",
            TableNames::of(table).module
        )
        .unwrap();
    }
    let names: Vec<String> = items
        .tables
        .iter()
        .map(|t| format!("{:?}", &*t.name))
        .collect();
    writeln!(
        out,
        "    }}

    const ALL_TABLE_NAMES: &'static [&'static str] = &[{}];
}}",
        names.join(", ")
    )
    .unwrap();
}

/// The same for every module: the module marker, the `db`/`reducers`/`procedures` views, the
/// connection and the subscription handle.
const FIXED_TYPES: &str = r#"
#[doc(hidden)]
#[derive(Debug)]
pub struct RemoteModule;

impl __sdk::InModule for RemoteModule {
    type Module = Self;
}

/// The `reducers` field of [`DbConnection`] and the contexts: each reducer is a method added by
/// its extension trait.
pub struct RemoteReducers {
    imp: __sdk::DbContextImpl<RemoteModule>,
}

impl __sdk::InModule for RemoteReducers {
    type Module = RemoteModule;
}

/// The `procedures` field of [`DbConnection`] and the contexts: each procedure is a method
/// added by its extension trait.
pub struct RemoteProcedures {
    imp: __sdk::DbContextImpl<RemoteModule>,
}

impl __sdk::InModule for RemoteProcedures {
    type Module = RemoteModule;
}

/// The `db` field of [`DbConnection`] and the contexts: each public table is a method added by
/// its extension trait.
pub struct RemoteTables {
    imp: __sdk::DbContextImpl<RemoteModule>,
}

impl __sdk::InModule for RemoteTables {
    type Module = RemoteModule;
}

/// A connection to the module: the subscribed rows in a client cache, and calls of its reducers
/// and procedures. Build one with [`DbConnection::builder`]. Nothing happens until one of
/// `frame_tick`, `run_threaded`, `run_async` or the `advance_one_message*` methods drives it.
pub struct DbConnection {
    /// The tables, through the extension traits implemented for [`RemoteTables`].
    pub db: RemoteTables,
    /// The reducers, through the extension traits implemented for [`RemoteReducers`].
    pub reducers: RemoteReducers,
    /// The procedures, through the extension traits implemented for [`RemoteProcedures`].
    pub procedures: RemoteProcedures,

    imp: __sdk::DbContextImpl<RemoteModule>,
}

impl __sdk::InModule for DbConnection {
    type Module = RemoteModule;
}

impl DbConnection {
    /// Starts configuring a connection ([`__sdk::DbConnectionBuilder`]).
    pub fn builder() -> __sdk::DbConnectionBuilder<RemoteModule> {
        __sdk::DbConnectionBuilder::new()
    }

    /// Processes one waiting message, if any: `Ok(false)` when none was waiting; an error once
    /// disconnected.
    pub fn advance_one_message(&self) -> __sdk::Result<bool> {
        self.imp.advance_one_message()
    }

    /// Processes one message, blocking this thread until one arrives.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn advance_one_message_blocking(&self) -> __sdk::Result<()> {
        self.imp.advance_one_message_blocking()
    }

    /// Processes one message, awaiting its arrival.
    pub async fn advance_one_message_async(&self) -> __sdk::Result<()> {
        self.imp.advance_one_message_async().await
    }

    /// Processes every waiting message without blocking.
    pub fn frame_tick(&self) -> __sdk::Result<()> {
        self.imp.frame_tick()
    }

    /// Processes messages on a new thread until disconnected.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_threaded(&self) -> std::thread::JoinHandle<()> {
        self.imp.run_threaded()
    }

    /// Processes messages in a background task until disconnected.
    #[cfg(target_arch = "wasm32")]
    pub fn run_background_task(&self) {
        self.imp.run_background_task()
    }

    /// Processes messages until disconnected.
    pub async fn run_async(&self) -> __sdk::Result<()> {
        self.imp.run_async().await
    }
}

impl __sdk::DbConnection for DbConnection {
    fn new(imp: __sdk::DbContextImpl<RemoteModule>) -> Self {
        Self {
            db: RemoteTables { imp: imp.clone() },
            reducers: RemoteReducers { imp: imp.clone() },
            procedures: RemoteProcedures { imp: imp.clone() },
            imp,
        }
    }
}

/// A subscription's handle: whether it is active, and how to end it.
#[derive(Clone)]
pub struct SubscriptionHandle {
    imp: __sdk::SubscriptionHandleImpl<RemoteModule>,
}

impl __sdk::InModule for SubscriptionHandle {
    type Module = RemoteModule;
}

impl __sdk::SubscriptionHandle for SubscriptionHandle {
    fn new(imp: __sdk::SubscriptionHandleImpl<RemoteModule>) -> Self {
        Self { imp }
    }

    fn is_ended(&self) -> bool {
        self.imp.is_ended()
    }

    fn is_active(&self) -> bool {
        self.imp.is_active()
    }

    fn unsubscribe_then(self, on_end: __sdk::OnEndedCallback<RemoteModule>) -> __sdk::Result<()> {
        self.imp.unsubscribe_then(Some(on_end))
    }

    fn unsubscribe(self) -> __sdk::Result<()> {
        self.imp.unsubscribe_then(None)
    }
}

/// Any [`__sdk::DbContext`] of this module: [`DbConnection`] or one of the contexts passed to
/// callbacks, for code that accepts either.
pub trait RemoteDbContext:
    __sdk::DbContext<
        DbView = RemoteTables,
        Reducers = RemoteReducers,
        SubscriptionBuilder = __sdk::SubscriptionBuilder<RemoteModule>,
    >
{
}

impl<
    Ctx: __sdk::DbContext<
            DbView = RemoteTables,
            Reducers = RemoteReducers,
            SubscriptionBuilder = __sdk::SubscriptionBuilder<RemoteModule>,
        >,
> RemoteDbContext for Ctx
{
}
"#;

/// The contexts the SDK passes to callbacks: name, the event they carry, and what gets them.
const CONTEXTS: &[(&str, Option<&str>, &str)] = &[
    (
        "EventContext",
        Some("__sdk::Event<Reducer>"),
        "row callbacks (`on_insert`, `on_delete`, `on_update`), with the event that changed the rows",
    ),
    (
        "ReducerEventContext",
        Some("__sdk::ReducerEvent<Reducer>"),
        "reducer callbacks (`<reducer>_then`), with the reducer's outcome",
    ),
    (
        "ProcedureEventContext",
        None,
        "procedure callbacks (`<procedure>_then`)",
    ),
    (
        "SubscriptionEventContext",
        None,
        "subscription callbacks (`on_applied`, `unsubscribe_then`)",
    ),
    (
        "ErrorContext",
        Some("Option<__sdk::Error>"),
        "error callbacks (`on_connect_error`, `on_disconnect`, a subscription's `on_error`), with the error",
    ),
];

fn event_context(out: &mut String, name: &str, event: Option<&str>, passed_to: &str) {
    writeln!(
        out,
        "
/// The [`__sdk::DbContext`] passed to {passed_to}.
pub struct {name} {{
    /// The tables, through the extension traits implemented for [`RemoteTables`].
    pub db: RemoteTables,
    /// The reducers, through the extension traits implemented for [`RemoteReducers`].
    pub reducers: RemoteReducers,
    /// The procedures, through the extension traits implemented for [`RemoteProcedures`].
    pub procedures: RemoteProcedures,"
    )
    .unwrap();
    match event {
        Some(event) => writeln!(
            out,
            "    /// What happened.
    pub event: {event},
    imp: __sdk::DbContextImpl<RemoteModule>,
}}

impl __sdk::AbstractEventContext for {name} {{
    type Event = {event};
    fn event(&self) -> &Self::Event {{
        &self.event
    }}
    fn new(imp: __sdk::DbContextImpl<RemoteModule>, event: Self::Event) -> Self {{
        Self {{
            db: RemoteTables {{ imp: imp.clone() }},
            reducers: RemoteReducers {{ imp: imp.clone() }},
            procedures: RemoteProcedures {{ imp: imp.clone() }},
            event,
            imp,
        }}
    }}
}}"
        ),
        None => writeln!(
            out,
            "    imp: __sdk::DbContextImpl<RemoteModule>,
}}

impl __sdk::AbstractEventContext for {name} {{
    type Event = ();
    fn event(&self) -> &Self::Event {{
        &()
    }}
    fn new(imp: __sdk::DbContextImpl<RemoteModule>, _event: Self::Event) -> Self {{
        Self {{
            db: RemoteTables {{ imp: imp.clone() }},
            reducers: RemoteReducers {{ imp: imp.clone() }},
            procedures: RemoteProcedures {{ imp: imp.clone() }},
            imp,
        }}
    }}
}}"
        ),
    }
    .unwrap();
    writeln!(
        out,
        "
impl __sdk::InModule for {name} {{
    type Module = RemoteModule;
}}"
    )
    .unwrap();
    db_context_impl(out, name);
    writeln!(out, "\nimpl __sdk::{name} for {name} {{}}").unwrap();
}

/// `__sdk::DbContext` for the connection or a context: all of them hold the same three views
/// and the connection's `imp`.
fn db_context_impl(out: &mut String, name: &str) {
    writeln!(
        out,
        "
impl __sdk::DbContext for {name} {{
    type DbView = RemoteTables;
    type Reducers = RemoteReducers;
    type Procedures = RemoteProcedures;

    fn db(&self) -> &Self::DbView {{
        &self.db
    }}
    fn reducers(&self) -> &Self::Reducers {{
        &self.reducers
    }}
    fn procedures(&self) -> &Self::Procedures {{
        &self.procedures
    }}

    fn is_active(&self) -> bool {{
        self.imp.is_active()
    }}

    fn disconnect(&self) -> __sdk::Result<()> {{
        self.imp.disconnect()
    }}

    type SubscriptionBuilder = __sdk::SubscriptionBuilder<RemoteModule>;

    fn subscription_builder(&self) -> Self::SubscriptionBuilder {{
        __sdk::SubscriptionBuilder::new(&self.imp)
    }}

    fn try_identity(&self) -> Option<__sdk::Identity> {{
        self.imp.try_identity()
    }}
    fn connection_id(&self) -> __sdk::ConnectionId {{
        self.imp.connection_id()
    }}
    fn try_connection_id(&self) -> Option<__sdk::ConnectionId> {{
        self.imp.try_connection_id()
    }}
}}"
    )
    .unwrap();
}

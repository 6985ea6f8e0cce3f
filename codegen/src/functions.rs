//! `<reducer>_reducer.rs` and `<procedure>_procedure.rs`: an argument struct and an extension
//! trait on `RemoteReducers` / `RemoteProcedures` with `name(args)` and
//! `name_then(args, callback)`.
//!
//! One deviation from the official output: the argument structs are `pub` (officially
//! `pub(super)` for reducers and private for procedures), so that a client can encode a call's
//! arguments itself (BSATN, or SATS-JSON for the HTTP API) with the same types.

use std::fmt::Write as _;

use spacetimedb_schema::def::{ModuleDef, ProcedureDef, ReducerDef};
use spacetimedb_schema::identifier::Identifier;
use spacetimedb_schema::type_for_generate::AlgebraicTypeUse;

use crate::names::{self, FunctionNames};
use crate::rust;

pub fn reducer_file(module: &ModuleDef, reducer: &ReducerDef) -> String {
    let FunctionNames {
        method,
        args,
        variant,
        module: _,
    } = FunctionNames::reducer(reducer);
    let name = &*reducer.name;
    let params = &reducer.params_for_generate.elements;
    let Params {
        declarations,
        names: arg_names,
    } = Params::of(module, params);

    let mut out = String::new();
    rust::header(&mut out);
    out.push_str(&rust::imports(
        module,
        params.iter().map(|(_, ty)| ty),
        None,
    ));
    out.push('\n');
    rust::define_struct(module, &mut out, "pub", &args, params);
    let variant_value = if params.is_empty() {
        format!("Self::{variant}")
    } else {
        let fields: Vec<String> = params
            .iter()
            .map(|(p, _)| format!("{0}: args.{0}", names::snake(p)))
            .collect();
        format!("Self::{variant} {{ {} }}", fields.join(", "))
    };
    writeln!(
        out,
        "
impl From<{args}> for super::Reducer {{
    fn from(args: {args}) -> Self {{
        {variant_value}
    }}
}}"
    )
    .unwrap();
    rust::in_module(&mut out, &args);
    writeln!(
        out,
        "
/// Calls the reducer `{name}`: implemented for [`super::RemoteReducers`].
#[allow(non_camel_case_types)]
pub trait {method} {{
    /// Asks the module to run the reducer `{name}`. Returns once the request is queued; an
    /// error means it could not be sent. Use [`{method}::{method}_then`] to learn the outcome.
    fn {method}(&self, {declarations}) -> __sdk::Result<()> {{
        self.{method}_then({arg_names} |_, _| {{}})
    }}

    /// Like [`{method}::{method}`], then runs `callback` with the outcome: `Ok(Ok(()))` if the
    /// reducer committed, `Ok(Err(message))` if it failed, `Err` if the host could not run it.
    fn {method}_then(
        &self,
        {declarations}
        callback: impl FnOnce(&super::ReducerEventContext, Result<Result<(), String>, __sdk::InternalError>)
            + Send
            + 'static,
    ) -> __sdk::Result<()>;
}}

impl {method} for super::RemoteReducers {{
    fn {method}_then(
        &self,
        {declarations}
        callback: impl FnOnce(&super::ReducerEventContext, Result<Result<(), String>, __sdk::InternalError>)
            + Send
            + 'static,
    ) -> __sdk::Result<()> {{
        self.imp.invoke_reducer_with_callback({args} {{ {arg_names} }}, callback)
    }}
}}"
    )
    .unwrap();
    out
}

pub fn procedure_file(module: &ModuleDef, procedure: &ProcedureDef) -> String {
    let FunctionNames { method, args, .. } = FunctionNames::procedure(procedure);
    let name = &*procedure.name;
    let params = &procedure.params_for_generate.elements;
    let Params {
        declarations,
        names: arg_names,
    } = Params::of(module, params);
    let returns = rust::ty(module, &procedure.return_type_for_generate);

    let mut out = String::new();
    rust::header(&mut out);
    let uses = params
        .iter()
        .map(|(_, ty)| ty)
        .chain([&procedure.return_type_for_generate]);
    out.push_str(&rust::imports(module, uses, None));
    out.push('\n');
    rust::define_struct(module, &mut out, "pub", &args, params);
    rust::in_module(&mut out, &args);
    writeln!(
        out,
        "
/// Calls the procedure `{name}`: implemented for [`super::RemoteProcedures`].
#[allow(non_camel_case_types)]
pub trait {method} {{
    /// Asks the module to run the procedure `{name}`, ignoring its result.
    fn {method}(&self, {declarations}) {{
        self.{method}_then({arg_names} |_, _| {{}});
    }}

    /// Asks the module to run the procedure `{name}`, then runs `__callback` with what it
    /// returned, or `Err` if the host could not run it.
    fn {method}_then(
        &self,
        {declarations}
        __callback: impl FnOnce(&super::ProcedureEventContext, Result<{returns}, __sdk::InternalError>)
            + Send
            + 'static,
    );
}}

impl {method} for super::RemoteProcedures {{
    fn {method}_then(
        &self,
        {declarations}
        __callback: impl FnOnce(&super::ProcedureEventContext, Result<{returns}, __sdk::InternalError>)
            + Send
            + 'static,
    ) {{
        self.imp.invoke_procedure_with_callback::<_, {returns}>(
            {name:?},
            {args} {{ {arg_names} }},
            __callback,
        );
    }}
}}"
    )
    .unwrap();
    out
}

/// A function's parameters as `a: A, b: B,` (declarations) and `a, b,` (names), each with a
/// trailing comma unless empty, so that further parameters can follow.
struct Params {
    declarations: String,
    names: String,
}

impl Params {
    fn of(module: &ModuleDef, params: &[(Identifier, AlgebraicTypeUse)]) -> Self {
        let mut declarations = String::new();
        let mut names = String::new();
        for (param, ty) in params {
            let param = names::snake(param);
            write!(declarations, "{param}: {}, ", rust::ty(module, ty)).unwrap();
            write!(names, "{param}, ").unwrap();
        }
        Self {
            declarations,
            names,
        }
    }
}

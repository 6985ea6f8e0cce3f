//! Edge label names ↔ the ids edges store (`edge_label`), and the label filters of queries.

use crate::schema::{Edge, EdgeLabel, NO_LABEL, edge_label};
use crate::types::GraphError;
use graph_traverse::ArcFilter;
use spacetimedb::{Local, ReducerContext, Table};

/// Longest label name accepted.
pub const MAX_LABEL_NAME: usize = 64;

/// The ids of `names`, giving new names the next free ids; `""` is [`NO_LABEL`].
pub fn intern(ctx: &ReducerContext, names: &[String]) -> Result<Vec<u32>, String> {
    let table = ctx.db.edge_label();
    let mut next = None;
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        if name.is_empty() {
            ids.push(NO_LABEL);
            continue;
        }
        if name.len() > MAX_LABEL_NAME || name.chars().any(char::is_control) {
            return Err(format!(
                "label name {name:?}: names are at most {MAX_LABEL_NAME} bytes, without control \
                 characters"
            ));
        }
        if let Some(row) = table.name().find(name) {
            ids.push(row.id);
            continue;
        }
        let id =
            *next.get_or_insert_with(|| table.iter().map(|l| l.id).max().unwrap_or(NO_LABEL) + 1);
        table.insert(EdgeLabel {
            id,
            name: name.clone(),
        });
        next = Some(id + 1);
        ids.push(id);
    }
    Ok(ids)
}

/// "label `follows` and weight 2.5", for error messages.
pub fn describe(ctx: &ReducerContext, e: &Edge) -> String {
    let label = match e.label {
        NO_LABEL => "no label".to_string(),
        id => match ctx.db.edge_label().id().find(id) {
            Some(row) => format!("label `{}`", row.name),
            None => format!("label id {id}"),
        },
    };
    format!("{label} and weight {}", e.weight)
}

/// The filter that follows the edges labelled with one of `names` (`""`: unlabelled edges);
/// every edge when `names` is empty. An unknown name is an error, so that a typo does not
/// quietly match nothing.
pub fn filter(db: &Local, names: &[String]) -> Result<ArcFilter, GraphError> {
    if names.is_empty() {
        return Ok(ArcFilter::all());
    }
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        if name.is_empty() {
            ids.push(NO_LABEL);
            continue;
        }
        match db.edge_label().name().find(name) {
            Some(row) => ids.push(row.id),
            None => {
                return Err(GraphError::InvalidArgument(format!(
                    "unknown edge label `{name}`"
                )));
            }
        }
    }
    Ok(ArcFilter::labels(ids))
}

//! Label names ↔ the ids edges and vertices store (`edge_label`, `vertex_label`), and the label
//! filters of queries.

use crate::edges::Arc;
use crate::schema::{EdgeLabel, NO_LABEL, VertexLabel, edge_label, vertex, vertex_label};
use crate::types::GraphError;
use graph_traverse::ArcFilter;
use hashbrown::HashMap;
use spacetimedb::{Local, ReducerContext, Table};
use std::cell::RefCell;

/// Longest label name accepted.
pub const MAX_LABEL_NAME: usize = 64;

/// Which name space a label belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    Edges,
    Vertices,
}

impl Of {
    fn find(self, db: &Local, name: &String) -> Option<u32> {
        match self {
            Of::Edges => db.edge_label().name().find(name).map(|row| row.id),
            Of::Vertices => db.vertex_label().name().find(name).map(|row| row.id),
        }
    }

    fn name(self, db: &Local, id: u32) -> Option<String> {
        match self {
            Of::Edges => db.edge_label().id().find(id).map(|row| row.name),
            Of::Vertices => db.vertex_label().id().find(id).map(|row| row.name),
        }
    }

    fn max_id(self, db: &Local) -> u32 {
        let max = match self {
            Of::Edges => db.edge_label().iter().map(|l| l.id).max(),
            Of::Vertices => db.vertex_label().iter().map(|l| l.id).max(),
        };
        max.unwrap_or(NO_LABEL)
    }

    fn insert(self, db: &Local, id: u32, name: String) {
        match self {
            Of::Edges => {
                db.edge_label().insert(EdgeLabel { id, name });
            }
            Of::Vertices => {
                db.vertex_label().insert(VertexLabel { id, name });
            }
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Of::Edges => "edge",
            Of::Vertices => "vertex",
        }
    }
}

/// The ids of `names`, giving new names the next free ids; `""` is [`NO_LABEL`].
pub fn intern(ctx: &ReducerContext, of: Of, names: &[String]) -> Result<Vec<u32>, String> {
    let mut next = None;
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        if name.is_empty() {
            ids.push(NO_LABEL);
            continue;
        }
        if name.len() > MAX_LABEL_NAME || name.chars().any(char::is_control) {
            return Err(format!(
                "label name {:?} ({} bytes): names are at most {MAX_LABEL_NAME} bytes, without \
                 control characters",
                clipped(name),
                name.len()
            ));
        }
        if let Some(id) = of.find(&ctx.db, name) {
            ids.push(id);
            continue;
        }
        let id = *next.get_or_insert_with(|| of.max_id(&ctx.db) + 1);
        of.insert(&ctx.db, id, name.clone());
        next = Some(id + 1);
        ids.push(id);
    }
    Ok(ids)
}

/// `name` for an error message: a name can be as long as the call, so no more than a label
/// can hold is quoted.
fn clipped(name: &str) -> std::borrow::Cow<'_, str> {
    match name.char_indices().nth(MAX_LABEL_NAME) {
        Some((cut, _)) => format!("{}…", &name[..cut]).into(),
        None => name.into(),
    }
}

/// "label `follows` and weight 2.5", for error messages.
pub fn describe(ctx: &ReducerContext, e: &Arc) -> String {
    let label = match e.label {
        NO_LABEL => "no label".to_string(),
        id => match Of::Edges.name(&ctx.db, id) {
            Some(name) => format!("label `{name}`"),
            None => format!("label id {id}"),
        },
    };
    format!("{label} and weight {}", e.weight)
}

thread_local! {
    /// Label ids this instance has read, by name space and name. A name keeps its id for the
    /// database's life (labels are never removed, and ids never reused), so a hit needs no
    /// lookup; an unknown name is looked up every time, since a write may add it.
    static KNOWN: RefCell<HashMap<(bool, String), u32>> = RefCell::new(HashMap::new());
}

/// The ids of `names` (`""`: unlabelled); an unknown name is an error, so that a typo does not
/// quietly match nothing.
fn ids(db: &Local, of: Of, names: &[String]) -> Result<Vec<u32>, GraphError> {
    KNOWN.with_borrow_mut(|known| {
        names
            .iter()
            .map(|name| {
                if name.is_empty() {
                    return Ok(NO_LABEL);
                }
                let key = (of == Of::Vertices, name.clone());
                if let Some(&id) = known.get(&key) {
                    return Ok(id);
                }
                let id = of.find(db, name).ok_or_else(|| {
                    GraphError::InvalidArgument(format!(
                        "unknown {} label `{}`",
                        of.noun(),
                        clipped(name)
                    ))
                })?;
                known.insert(key, id);
                Ok(id)
            })
            .collect()
    })
}

/// The filter that follows the edges labelled with one of `edge_labels` into the vertices
/// labelled with one of `vertex_labels` (`""`: unlabelled ones; an empty list: no test).
pub fn filter(
    db: &Local,
    edge_labels: &[String],
    vertex_labels: &[String],
) -> Result<ArcFilter, GraphError> {
    let mut filter = match edge_labels.is_empty() {
        true => ArcFilter::all(),
        false => ArcFilter::labels(ids(db, Of::Edges, edge_labels)?),
    };
    if !vertex_labels.is_empty() {
        filter = filter.entering(ids(db, Of::Vertices, vertex_labels)?);
    }
    Ok(filter)
}

/// The name of label `id` (labels are never removed, so every stored id has one).
pub fn name(db: &Local, of: Of, id: u32) -> String {
    of.name(db, id)
        .unwrap_or_else(|| panic!("{} label id {id} has no name", of.noun()))
}

/// Vertex `v`'s label now (0: none or no such vertex).
pub fn vertex_label(db: &Local, v: u64) -> u32 {
    db.vertex().id().find(v).map_or(NO_LABEL, |row| row.label)
}

/// Whether any vertex label was ever given (so that a snapshot needs to read them).
pub fn any_vertex_labels(db: &Local) -> bool {
    crate::rows::count(&db.vertex_label()) > 0
}

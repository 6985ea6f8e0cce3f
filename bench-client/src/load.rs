//! The one load path for every system: each store is emptied, loaded with the dataset and
//! counted, once per run; every system then counts it through its own connection before it is
//! measured.

use crate::report::model::{Load, SystemLoad};
use crate::system::{ArcAttrs, System};
use anyhow::{Context, ensure};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

/// The stores of a run, each loaded (or, with `skip_load`, only checked) by the first system
/// that reads it.
pub struct Stores<'a> {
    /// The dataset's vertices (distinct, sorted) and arcs (distinct, sorted).
    vertices: &'a [u64],
    arcs: &'a [(u64, u64)],
    attrs: &'a ArcAttrs,
    skip_load: bool,
    /// Each store ready so far, with the index of its load in `loads` (none when skipped).
    ready: Vec<(&'static str, Option<usize>)>,
    loads: Vec<SystemLoad>,
}

impl<'a> Stores<'a> {
    pub fn new(
        vertices: &'a [u64],
        arcs: &'a [(u64, u64)],
        attrs: &'a ArcAttrs,
        skip_load: bool,
    ) -> Self {
        Stores {
            vertices,
            arcs,
            attrs,
            skip_load,
            ready: Vec::new(),
            loads: Vec::new(),
        }
    }

    /// Makes sure `system`'s store holds the dataset: the first system of a store loads it
    /// (with `skip_load`, leaves it as it is), later ones share that load. Then checks, through
    /// `system`, that the store holds exactly the dataset. Returns whether `system` was the
    /// first of its store.
    pub fn prepare(&mut self, system: &mut dyn System) -> anyhow::Result<bool> {
        let (name, store) = (system.name(), system.store());
        let first = match self.ready.iter().find(|(s, _)| *s == store) {
            Some(&(_, loaded)) => {
                if let Some(i) = loaded {
                    self.loads[i].shared_by.push(name.to_string());
                }
                false
            }
            None => {
                let loaded = if self.skip_load {
                    None
                } else {
                    let load = load(system, self.vertices, self.arcs, self.attrs)?;
                    self.loads.push(SystemLoad {
                        system: name.to_string(),
                        load,
                        shared_by: Vec::new(),
                    });
                    Some(self.loads.len() - 1)
                };
                self.ready.push((store, loaded));
                true
            }
        };
        let counted = check_counts(system, self.vertices.len(), self.arcs.len());
        if self.skip_load {
            counted.context("--skip-load: drop it to load the dataset")?;
        } else {
            counted?;
        }
        Ok(first)
    }

    /// The loads made, one per store, in the order they were made.
    pub fn into_loads(self) -> Vec<SystemLoad> {
        self.loads
    }
}

/// Whether `systems[i]` is the last of `systems` to read its store (see [`System::store`]).
pub fn last_reader(systems: &[Box<dyn System>], i: usize) -> bool {
    let store = systems[i].store();
    !systems[i + 1..].iter().any(|s| s.store() == store)
}

/// Empties `system`'s store and loads `vertices` and `arcs`, with a progress bar. The clock
/// covers the load alone, not the clearing.
fn load(
    system: &mut dyn System,
    vertices: &[u64],
    arcs: &[(u64, u64)],
    attrs: &ArcAttrs,
) -> anyhow::Result<Load> {
    let name = system.name();
    system.clear().with_context(|| format!("clearing {name}"))?;
    let bar = ProgressBar::new(arcs.len() as u64).with_style(
        ProgressStyle::with_template(&format!(
            "{name}: loading {{bar:40}} {{pos}}/{{len}} edges ({{per_sec}}, eta {{eta}})"
        ))
        .expect("progress template"),
    );
    let started = Instant::now();
    system
        .load(vertices, arcs, attrs, &mut |n| bar.set_position(n as u64))
        .with_context(|| format!("loading {name}"))?;
    let seconds = started.elapsed().as_secs_f64();
    bar.finish();
    let load = Load {
        edges_sent: arcs.len() as u64,
        seconds,
        edges_per_second: arcs.len() as f64 / seconds.max(1e-9),
    };
    println!(
        "{name}: loaded {} edges in {seconds:.2} s ({:.0} edges/s)",
        arcs.len(),
        load.edges_per_second
    );
    Ok(load)
}

/// Checks that `system` holds exactly `vertices` vertices and `arcs` edges.
fn check_counts(system: &mut dyn System, vertices: usize, arcs: usize) -> anyhow::Result<()> {
    let name = system.name();
    let (held_vertices, held_arcs) = system
        .counts()
        .with_context(|| format!("counting {name}"))?;
    ensure!(
        (held_vertices, held_arcs) == (vertices as u64, arcs as u64),
        "{name} holds {held_vertices} vertices / {held_arcs} edges, the dataset has {vertices} / {arcs}"
    );
    println!("{name}: verified: holds {held_vertices} vertices and {held_arcs} edges");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::Reply;
    use crate::system::fake::Fake;

    const VERTICES: [u64; 3] = [1, 2, 3];
    const ARCS: [(u64, u64); 2] = [(1, 2), (2, 3)];
    static NO_ATTRS: ArcAttrs = ArcAttrs {
        label_names: Vec::new(),
        labels: Vec::new(),
        weights: Vec::new(),
    };

    #[test]
    fn the_first_system_of_a_store_loads_it_for_the_others() {
        let mut plain = Fake::new("plain", Reply::Count(0));
        let mut tuned = Fake::new("tuned", Reply::Count(0));
        (tuned.store_name, tuned.store) = (plain.store_name, plain.store.clone());
        let mut other = Fake::new("other", Reply::Count(0));
        let mut stores = Stores::new(&VERTICES, &ARCS, &NO_ATTRS, false);
        assert!(stores.prepare(&mut plain).unwrap());
        assert!(stores.prepare(&mut other).unwrap());
        assert!(!stores.prepare(&mut tuned).unwrap());
        assert_eq!(plain.store.borrow().loads, 1);
        assert_eq!(other.store.borrow().loads, 1);
        let loads = stores.into_loads();
        let summary: Vec<(&str, &[String])> = loads
            .iter()
            .map(|l| (l.system.as_str(), l.shared_by.as_slice()))
            .collect();
        assert_eq!(
            summary,
            [("plain", &["tuned".to_string()][..]), ("other", &[][..])]
        );
        assert!(loads[0].serves("tuned") && !loads[0].serves("other"));
        assert_eq!(loads[0].load.edges_sent, 2);
    }

    #[test]
    fn the_last_reader_of_each_store_is_the_last_in_run_order() {
        let shared = Fake::new("plain", Reply::Count(0));
        let mut tuned = Fake::new("tuned", Reply::Count(0));
        (tuned.store_name, tuned.store) = (shared.store_name, shared.store.clone());
        let systems: Vec<Box<dyn System>> = vec![
            Box::new(shared),
            Box::new(Fake::new("other", Reply::Count(0))),
            Box::new(tuned),
        ];
        let last: Vec<bool> = (0..systems.len())
            .map(|i| last_reader(&systems, i))
            .collect();
        assert_eq!(last, [false, true, true]);
    }

    #[test]
    fn a_store_that_lost_an_edge_fails_the_count_check() {
        let mut lossy = Fake::new("lossy", Reply::Count(0));
        lossy.lost = 1;
        let err = Stores::new(&VERTICES, &ARCS, &NO_ATTRS, false)
            .prepare(&mut lossy)
            .unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "lossy holds 3 vertices / 1 edges, the dataset has 3 / 2"
        );
    }

    #[test]
    fn skipping_the_load_still_checks_the_counts() {
        let mut empty = Fake::new("empty", Reply::Count(0));
        let err = Stores::new(&VERTICES, &ARCS, &NO_ATTRS, true)
            .prepare(&mut empty)
            .unwrap_err();
        assert!(format!("{err:#}").contains("--skip-load"), "{err:#}");
        assert_eq!(empty.store.borrow().loads, 0);

        let mut loaded = Fake::new("loaded", Reply::Count(0));
        loaded
            .load(&VERTICES, &ARCS, &NO_ATTRS, &mut |_| {})
            .unwrap();
        let mut stores = Stores::new(&VERTICES, &ARCS, &NO_ATTRS, true);
        assert!(stores.prepare(&mut loaded).unwrap());
        assert!(stores.into_loads().is_empty());
    }
}

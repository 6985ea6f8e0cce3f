//! What an arc carries besides its ends (a label and a weight), which arcs a traversal follows,
//! and a filtered view of an in-memory graph.

use crate::{AdjacencyGraph, DenseSource, Direction, ListCursor, NeighborSource};
use std::ops::Range;

/// An arc's label and weight. Label 0 means "no label"; the module interns label names as ids
/// from 1. Weights are finite and non-negative (the module refuses others when they are written).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct ArcAttrs {
    pub label: u32,
    pub weight: f32,
}

impl ArcAttrs {
    /// An unlabelled arc of weight 1: what every arc of a graph loaded without attributes has.
    pub const DEFAULT: ArcAttrs = ArcAttrs {
        label: 0,
        weight: 1.0,
    };

    pub fn is_default(&self) -> bool {
        *self == Self::DEFAULT
    }
}

impl Default for ArcAttrs {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The labels of a row's arcs, entry for entry, as a traversal's hot loop reads them: a byte per
/// arc while every label of the compressed rows fits one (a label test then reads an eighth of
/// the bytes of the attributes: on a DBLP-sized graph that is what keeps a filtered BFS within
/// 20% of an unfiltered one), else from the attributes. Entries past the end (all of them, in a
/// graph without attributes) have label 0.
#[derive(Debug, Clone, Copy)]
pub enum ArcLabels<'a> {
    Narrow(&'a [u8]),
    Wide(&'a [ArcAttrs]),
}

impl<'a> ArcLabels<'a> {
    /// No labels: every arc has label 0.
    pub const NONE: ArcLabels<'static> = ArcLabels::Narrow(&[]);

    /// The label of entry `i`. A hot loop matches the variant once and indexes the column
    /// through [`LabelColumn`] instead.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        match self {
            ArcLabels::Narrow(labels) => labels.label(i),
            ArcLabels::Wide(attrs) => attrs.label(i),
        }
    }

    /// Entries `range` (clamped to the entries there are).
    #[inline]
    pub fn slice(&self, range: Range<usize>) -> ArcLabels<'a> {
        fn cut<T>(s: &[T], range: Range<usize>) -> &[T] {
            &s[range.start.min(s.len())..range.end.min(s.len())]
        }
        match *self {
            ArcLabels::Narrow(labels) => ArcLabels::Narrow(cut(labels, range)),
            ArcLabels::Wide(attrs) => ArcLabels::Wide(cut(attrs, range)),
        }
    }
}

/// A column of arc labels, entry for entry with a row (entries past its end have label 0).
pub(crate) trait LabelColumn {
    fn label(&self, i: usize) -> u32;
    /// Whether `filter` keeps entry `i`'s arc (by its label alone).
    fn kept(&self, i: usize, filter: &ArcFilter) -> bool;
}

impl LabelColumn for [u8] {
    #[inline]
    fn label(&self, i: usize) -> u32 {
        self.get(i).map_or(0, |&l| u32::from(l))
    }

    #[inline]
    fn kept(&self, i: usize, filter: &ArcFilter) -> bool {
        filter.keeps_byte(self.get(i).copied().unwrap_or(0))
    }
}

impl LabelColumn for [ArcAttrs] {
    #[inline]
    fn label(&self, i: usize) -> u32 {
        self.get(i).map_or(0, |a| a.label)
    }

    #[inline]
    fn kept(&self, i: usize, filter: &ArcFilter) -> bool {
        filter.keeps(self.label(i))
    }
}

/// One entry of a neighbor list: the vertex at the arc's other end, and the arc's attributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbor {
    pub id: u64,
    pub attrs: ArcAttrs,
}

impl Neighbor {
    /// A neighbor over an arc with the default attributes.
    pub fn plain(id: u64) -> Self {
        Self {
            id,
            attrs: ArcAttrs::DEFAULT,
        }
    }
}

/// A set of label ids, as a bitmap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct LabelSet(Vec<u64>);

impl LabelSet {
    fn new(labels: impl IntoIterator<Item = u32>) -> Self {
        let mut bits = Vec::new();
        for label in labels {
            let word = label as usize / 64;
            if bits.len() <= word {
                bits.resize(word + 1, 0u64);
            }
            bits[word] |= 1 << (label % 64);
        }
        Self(bits)
    }

    #[inline]
    fn contains(&self, label: u32) -> bool {
        self.0
            .get(label as usize / 64)
            .is_some_and(|word| word & (1 << (label % 64)) != 0)
    }
}

/// Which arcs a traversal follows: all of them, or those whose label is in a set, and
/// optionally only into vertices whose label is in a set. The vertex set applies to the vertex
/// an arc leads to in the traversal's direction (the neighbor); `except` names one vertex that
/// passes whatever its label (a traversal's start, which it never enters through an arc, but
/// which a backward search must be able to reach).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArcFilter {
    /// `None` follows every arc.
    labels: Option<LabelSet>,
    /// The labels below 256 that it keeps, as a bitmap of fixed size: the test of a byte
    /// label ([`ArcLabels::Narrow`]) without a branch or a bounds check.
    bytes: [u64; 4],
    /// `None` enters every vertex.
    vertex_labels: Option<LabelSet>,
    except: Option<u64>,
}

/// The filter that follows every arc.
pub static ALL_ARCS: ArcFilter = ArcFilter {
    labels: None,
    bytes: [u64::MAX; 4],
    vertex_labels: None,
    except: None,
};

impl Default for ArcFilter {
    fn default() -> Self {
        ALL_ARCS.clone()
    }
}

impl ArcFilter {
    /// Follows every arc.
    pub fn all() -> Self {
        Self::default()
    }

    /// Follows the arcs whose label is one of `labels` (none at all if it is empty).
    pub fn labels(labels: impl IntoIterator<Item = u32>) -> Self {
        let set = LabelSet::new(labels);
        let mut bytes = [0; 4];
        for (word, &bits) in bytes.iter_mut().zip(&set.0) {
            *word = bits;
        }
        Self {
            labels: Some(set),
            bytes,
            ..Self::default()
        }
    }

    /// This filter, entering only vertices whose label is one of `labels` (vertex label 0: a
    /// vertex without a label).
    pub fn entering(self, labels: impl IntoIterator<Item = u32>) -> Self {
        Self {
            vertex_labels: Some(LabelSet::new(labels)),
            ..self
        }
    }

    /// This filter, letting `v` pass whatever its label.
    pub fn except(self, v: u64) -> Self {
        Self {
            except: Some(v),
            ..self
        }
    }

    /// Whether every arc passes.
    #[inline]
    pub fn is_all(&self) -> bool {
        self.labels.is_none() && self.vertex_labels.is_none()
    }

    /// Whether an arc labelled `label` passes its label test.
    #[inline]
    pub fn keeps(&self, label: u32) -> bool {
        self.labels.as_ref().is_none_or(|set| set.contains(label))
    }

    /// [`keeps`](Self::keeps) for a label that fits a byte.
    #[inline]
    pub fn keeps_byte(&self, label: u8) -> bool {
        self.bytes[usize::from(label >> 6)] & (1 << (label & 63)) != 0
    }

    /// Whether the filter tests the vertices arcs lead to.
    #[inline]
    pub fn checks_vertices(&self) -> bool {
        self.vertex_labels.is_some()
    }

    /// Whether a traversal may enter vertex `v`, whose label is `label`.
    #[inline]
    pub fn enters(&self, v: u64, label: u32) -> bool {
        match &self.vertex_labels {
            None => true,
            Some(set) => set.contains(label) || self.except == Some(v),
        }
    }
}

/// An [`AdjacencyGraph`] seen through an [`ArcFilter`]: its arcs that the filter keeps, and all
/// its vertices, plus `isolated`: vertices that exist without being in the graph (the module's
/// snapshot holds only vertices with arcs), which have no slot and no arcs. Degrees stay those
/// of the whole graph (what reading a list costs).
#[derive(Debug, Clone)]
pub struct FilteredGraph<'a> {
    pub graph: &'a AdjacencyGraph,
    pub filter: &'a ArcFilter,
    pub isolated: Vec<u64>,
}

impl<'a> FilteredGraph<'a> {
    /// `graph` through `filter`, with no other vertices.
    pub fn new(graph: &'a AdjacencyGraph, filter: &'a ArcFilter) -> Self {
        Self {
            graph,
            filter,
            isolated: Vec::new(),
        }
    }
}

impl NeighborSource for FilteredGraph<'_> {
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<Neighbor>,
    ) -> bool {
        self.graph.arcs_page(v, dir, cursor, max, self.filter, out)
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        self.graph.degree(v, dir)
    }

    fn contains(&self, v: u64) -> bool {
        self.graph.contains(v) || self.isolated.contains(&v)
    }

    fn enters(&self, v: u64) -> bool {
        self.filter.enters(v, self.graph.vertex_label(v))
    }

    /// The whole graph's landmarks: a filter only lengthens paths, so their bounds still hold.
    fn landmark_row(&self, v: u64) -> Option<&[f64]> {
        self.graph.landmark_row(v)
    }
}

impl DenseSource for FilteredGraph<'_> {
    fn slots(&self) -> usize {
        self.graph.slots()
    }

    fn slot(&self, v: u64) -> Option<u32> {
        self.graph.slot(v)
    }

    fn vertex(&self, slot: u32) -> u64 {
        self.graph.vertex(slot)
    }

    #[inline]
    fn vertex_label(&self, slot: u32) -> u32 {
        self.graph.slot_label(slot)
    }

    #[inline(always)]
    fn rows(&self, slot: u32, dir: Direction) -> [&[u32]; 2] {
        self.graph.rows(slot, dir)
    }

    #[inline]
    fn attrs(&self, slot: u32, dir: Direction) -> [&[ArcAttrs]; 2] {
        self.graph.attrs(slot, dir)
    }

    #[inline]
    fn labels(&self, slot: u32, dir: Direction) -> [ArcLabels<'_>; 2] {
        self.graph.labels(slot, dir)
    }

    fn filter(&self) -> &ArcFilter {
        self.filter
    }

    fn arc_total(&self, dir: Direction) -> u64 {
        self.graph.arc_total(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_keeps_exactly_its_labels() {
        let f = ArcFilter::labels([0, 3, 64, 200]);
        for label in 0..300 {
            assert_eq!(f.keeps(label), [0, 3, 64, 200].contains(&label), "{label}");
        }
        assert!(!ArcFilter::labels([]).keeps(0));
        assert!(ArcFilter::all().keeps(u32::MAX) && ALL_ARCS.is_all());
        for label in 0..=u8::MAX {
            assert_eq!(f.keeps_byte(label), f.keeps(label.into()), "{label}");
            assert!(ArcFilter::all().keeps_byte(label));
        }
    }
}

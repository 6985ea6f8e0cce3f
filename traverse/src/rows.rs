//! Reading a slot's arcs in parts: a [`DenseSource`] hands out a vertex's arcs as two rows
//! (outgoing, then incoming for [`crate::Direction::Both`]), which the searches over slots read
//! as one list, a part at a time, so that a step stays within its budget on a hub.

use crate::{ArcFilter, ArcLabels, DenseSource};
use std::ops::Range;

/// Whether `filter` lets the search enter the vertex in `slot`.
#[inline]
pub(crate) fn enters<S: DenseSource + ?Sized>(src: &S, filter: &ArcFilter, slot: u32) -> bool {
    !filter.checks_vertices() || filter.enters(src.vertex(slot), src.vertex_label(slot))
}

/// The ranges of two rows of lengths `lens` that cover the part `from..` of their
/// concatenation, at most `room` long, and where that part ends.
#[inline]
fn cuts(lens: [usize; 2], from: usize, room: usize) -> ([Range<usize>; 2], usize) {
    let end = (lens[0] + lens[1]).min(from.saturating_add(room));
    let cut = |len: usize, offset: usize| {
        from.saturating_sub(offset).min(len)..end.saturating_sub(offset).min(len)
    };
    ([cut(lens[0], 0), cut(lens[1], lens[0])], end)
}

/// The part `from..` of the concatenated `rows`, at most `room` long, as two slices, and where
/// it ends.
#[inline]
pub(crate) fn span<T>(rows: [&[T]; 2], from: usize, room: usize) -> ([&[T]; 2], usize) {
    let ([a, b], end) = cuts([rows[0].len(), rows[1].len()], from, room);
    ([&rows[0][a], &rows[1][b]], end)
}

/// The labels of the arcs [`span`] cuts from `rows`.
#[inline]
pub(crate) fn span_labels<'a>(
    labels: [ArcLabels<'a>; 2],
    rows: [&[u32]; 2],
    from: usize,
    room: usize,
) -> [ArcLabels<'a>; 2] {
    let ([a, b], _) = cuts([rows[0].len(), rows[1].len()], from, room);
    [labels[0].slice(a), labels[1].slice(b)]
}

/// The length of two rows together.
#[inline]
pub(crate) fn row_len(rows: [&[u32]; 2]) -> u64 {
    (rows[0].len() + rows[1].len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_cuts_across_both_rows() {
        let (a, b) = ([1, 2, 3], [4, 5]);
        let rows: [&[u32]; 2] = [&a, &b];
        let flat = |(parts, end): ([&[u32]; 2], usize)| (parts.concat(), end);
        assert_eq!(flat(span(rows, 0, 10)), (vec![1, 2, 3, 4, 5], 5));
        assert_eq!(flat(span(rows, 1, 2)), (vec![2, 3], 3));
        assert_eq!(flat(span(rows, 2, 2)), (vec![3, 4], 4));
        assert_eq!(flat(span(rows, 3, 1)), (vec![4], 4));
        assert_eq!(flat(span(rows, 4, usize::MAX)), (vec![5], 5));
        assert_eq!(flat(span(rows, 5, 3)), (vec![], 5));
    }
}

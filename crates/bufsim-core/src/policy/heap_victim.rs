//! Victim choice from a priority heap when some frames are pinned (I/O in flight, or read ahead
//! together with the incoming block). Shared by the heap-ordered policies (LRU-K,
//! LRFU).

use super::{Frame, Pins};
use crate::heap::IndexedHeap;

/// The frame with the smallest key that is not pinned. Pinned tops are popped into `scratch`
/// with their keys and put back, so the cost is O(p log n) for p pinned frames above the
/// answer (a read-ahead group: a few dozen at most), not a scan of the heap.
#[inline]
pub(crate) fn min_unpinned<K: Ord + Copy + Default>(
    heap: &mut IndexedHeap<K>,
    pins: &Pins,
    scratch: &mut Vec<(Frame, K)>,
) -> Option<Frame> {
    let top = heap.peek()?;
    if !pins.pinned(top) {
        return Some(top);
    }
    scratch.clear();
    let mut found = None;
    while let Some(f) = heap.peek() {
        scratch.push((f, heap.key(f)));
        heap.pop();
        if !pins.pinned(f) {
            found = Some(f);
            break;
        }
    }
    for &(f, k) in scratch.iter() {
        heap.set(f, k);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_pinned_tops_and_restores_them() {
        let mut h: IndexedHeap<u64> = IndexedHeap::with_nodes(5);
        for f in 0..5u32 {
            h.set(f, 10 - f as u64);
        }
        let mut flags = vec![0u8; 5];
        flags[4] = super::super::PINNED;
        flags[3] = super::super::PINNED;
        let mut scratch = Vec::new();
        assert_eq!(min_unpinned(&mut h, &Pins::new(&flags), &mut scratch), Some(2));
        assert_eq!(h.len(), 5);
        h.check().unwrap();
        assert_eq!(h.peek(), Some(4));
        let all = vec![super::super::PINNED; 5];
        assert_eq!(min_unpinned(&mut h, &Pins::new(&all), &mut scratch), None);
        assert_eq!(h.len(), 5);
    }
}

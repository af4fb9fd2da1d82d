//! Per-frame state that takes memory only for the frames a run uses.
//!
//! A cache of `n` frames fills them in order 0, 1, 2, ... (the free list hands out the lowest
//! first), so a trace that touches few blocks uses only the first few frames however large the
//! cache. [`FrameVec`] reads as a vector of `n` elements that all start as one fill value, but
//! stores only a prefix: an element past the prefix reads as the fill value, and writing one
//! extends the prefix (doubling, so growth is amortised and a run at its working size allocates
//! nothing per request). A 1 TiB cache of 4 KiB blocks on a small trace then holds state for
//! the blocks it saw, not for 268 million frames.
//!
//! Reads and writes behave exactly as on a vector of `n` fill values, so a policy built on this
//! decides exactly as one built on a preallocated vector.
//!
//! Some arenas put a second kind of node after the frames (CLOCK-Pro's non-resident pages at
//! `m..`): [`FrameVec::split`] stores those from their own start, so both kinds grow with use.

use std::ops::{Index, IndexMut};

/// Elements stored at the first write (so tiny caches do not double five times).
const FIRST: usize = 64;

#[derive(Clone, Debug)]
pub struct FrameVec<T> {
    /// Elements `0..stored.len()`.
    stored: Vec<T>,
    fill: T,
    len: usize,
    /// Elements `split..split + upper.len()`; `split == len` when there is no second region.
    split: usize,
    upper: Vec<T>,
}

impl<T: Clone> FrameVec<T> {
    /// `len` elements, all `fill`; nothing stored yet.
    pub fn filled(fill: T, len: usize) -> Self {
        Self::split(fill, len, len)
    }

    /// [`FrameVec::filled`], with indices from `split` on stored apart from those below it.
    pub fn split(fill: T, len: usize, split: usize) -> Self {
        FrameVec { stored: Vec::new(), fill, len, split: split.min(len), upper: Vec::new() }
    }

    /// Logical length (what a preallocated vector would have).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Starts loading element `i` into the CPU cache when it is stored (a memory hint,
    /// [`crate::memory_hint`]).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if let Some(x) = self.stored.get(i) {
            crate::memory_hint::prefetch(x);
        }
    }

    /// Elements actually stored (memory accounting and tests).
    pub fn stored(&self) -> usize {
        self.stored.len() + self.upper.len()
    }

    /// Appends one element at the end of the logical vector.
    pub fn push(&mut self, x: T) {
        let i = self.len;
        if self.split == self.len {
            self.split += 1;
        }
        self.len += 1;
        self[i] = x;
    }

    /// Stores enough to hold index `i` (amortised doubling, never past `len` or the split).
    #[cold]
    #[inline(never)]
    fn extend_to(&mut self, i: usize) {
        assert!(i < self.len, "frame index {i} out of range for {} frames", self.len);
        let (region, start, end) =
            if i < self.split { (&mut self.stored, 0, self.split) } else { (&mut self.upper, self.split, self.len) };
        let want = (i - start + 1).max(region.len() * 2).max(FIRST).min(end - start);
        region.resize(want, self.fill.clone());
    }

    #[cold]
    #[inline(never)]
    fn read_beyond(&self, i: usize) -> &T {
        assert!(i < self.len, "frame index {i} out of range for {} frames", self.len);
        if i >= self.split {
            if let Some(x) = self.upper.get(i - self.split) {
                return x;
            }
        }
        &self.fill
    }

    /// Element `i`, which has been written: [`IndexMut`] without the growth that a first write
    /// may need, for callers that know (a list node's neighbours were linked before).
    #[inline]
    pub fn written_mut(&mut self, i: usize) -> &mut T {
        if i < self.stored.len() {
            &mut self.stored[i]
        } else {
            self.written_beyond(i)
        }
    }

    /// The second region's element `i` (never written: out of range, a caller's bug).
    #[cold]
    #[inline(never)]
    fn written_beyond(&mut self, i: usize) -> &mut T {
        assert!(i >= self.split && i < self.len, "frame {i} was never written");
        &mut self.upper[i - self.split]
    }

    /// The stored elements, mutably (those never written still equal the fill).
    pub fn stored_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.stored.iter_mut().chain(self.upper.iter_mut())
    }

    /// Every element in index order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self[i])
    }
}

impl<T: Clone> Index<usize> for FrameVec<T> {
    type Output = T;

    #[inline]
    fn index(&self, i: usize) -> &T {
        match self.stored.get(i) {
            Some(x) => x,
            None => self.read_beyond(i),
        }
    }
}

impl<T: Clone> IndexMut<usize> for FrameVec<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        if i < self.stored.len() {
            return &mut self.stored[i];
        }
        self.extend_to(i);
        if i < self.split {
            &mut self.stored[i]
        } else {
            &mut self.upper[i - self.split]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_as_a_filled_vector_and_stores_only_what_was_written() {
        let mut v = FrameVec::filled(7u32, 1 << 40);
        assert_eq!(v[12345], 7);
        v[3] = 1;
        assert_eq!((v[3], v[2], v[4000]), (1, 7, 7));
        assert_eq!(v.stored(), FIRST);
        v[100] = 2;
        assert_eq!(v.stored(), 128, "doubling");
        v[1000] = 3;
        assert_eq!(v.stored(), 1001);
        assert_eq!(v.len(), 1 << 40);
    }

    #[test]
    fn never_stores_past_its_length() {
        let mut v = FrameVec::filled(0u8, 10);
        v[9] = 1;
        assert_eq!(v.stored(), 10);
        assert_eq!(v.iter().copied().collect::<Vec<_>>(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        v.push(5);
        assert_eq!((v.len(), v[10]), (11, 5));
    }

    #[test]
    fn a_split_stores_both_regions_from_their_starts() {
        let mut v = FrameVec::split(0u32, 1 << 30, 1 << 29);
        v[2] = 1;
        v[(1 << 29) + 3] = 2;
        assert_eq!((v[2], v[(1 << 29) + 3], v[(1 << 29) + 2], v[5]), (1, 2, 0, 0));
        assert_eq!(v.stored(), 2 * FIRST);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn reading_past_the_end_is_a_bug() {
        let v = FrameVec::filled(0u8, 10);
        let _ = v[10];
    }
}

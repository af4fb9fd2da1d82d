//! The resident frames in one dense array, for policies that draw their victims at random
//! (RANDOM, Hyperbolic, LHD): a draw is one index, and a removal swaps the last frame into the
//! hole, so both are O(1) and nothing is allocated after construction.

use crate::frames::FrameVec;
use crate::policy::Frame;

pub struct SampleSet {
    dense: Vec<Frame>,
    /// Index of each frame in `dense`, or `u32::MAX` when the frame is not in the set.
    pos: FrameVec<u32>,
}

impl SampleSet {
    pub fn with_capacity(frames: usize) -> Self {
        SampleSet { dense: Vec::new(), pos: FrameVec::filled(u32::MAX, frames) }
    }

    /// Adds `frame`, which must not be in the set.
    #[inline]
    pub fn insert(&mut self, frame: Frame) {
        self.pos[frame as usize] = self.dense.len() as u32;
        self.dense.push(frame);
    }

    /// Removes `frame`, which must be in the set.
    #[inline]
    pub fn remove(&mut self, frame: Frame) {
        let p = self.pos[frame as usize] as usize;
        let last = *self.dense.last().expect("remove from an empty sample set");
        self.dense.swap_remove(p);
        if last != frame {
            self.pos[last as usize] = p as u32;
        }
        self.pos[frame as usize] = u32::MAX;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.dense.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.dense.is_empty()
    }

    /// The frames in set order (the order draws index into).
    #[inline]
    pub fn frames(&self) -> &[Frame] {
        &self.dense
    }

    /// Checks the set against the cache's resident count and its own index; `who` names the
    /// policy in the message.
    pub fn check(&self, who: &str, resident: usize) -> Result<(), String> {
        if self.dense.len() != resident {
            return Err(format!("{who} holds {} frames, cache {resident}", self.dense.len()));
        }
        for (i, &f) in self.dense.iter().enumerate() {
            if self.pos[f as usize] as usize != i {
                return Err(format!("{who}: frame {f} misindexed"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_moves_the_last_frame_into_the_hole() {
        let mut s = SampleSet::with_capacity(4);
        for f in [3, 1, 2] {
            s.insert(f);
        }
        s.remove(3);
        assert_eq!(s.frames(), &[2, 1]);
        s.check("test", 2).unwrap();
        s.remove(1);
        s.remove(2);
        assert!(s.is_empty());
        assert!(s.check("test", 1).is_err());
    }
}

//! The resident frames in one dense array, for policies that draw their victims at random
//! (RANDOM, Hyperbolic, LHD): a draw is one index, and a removal swaps the last frame into the
//! hole, so both are O(1) and nothing is allocated after construction.
//!
//! Each entry carries the policy's per-block state (`P`) beside its frame, so a sample is one
//! load from one array rather than a frame followed by loads from per-frame arrays; a hit
//! reaches its block's state through the frame's position.

use crate::frames::FrameVec;
use crate::policy::Frame;

/// One resident block: its frame and the policy's state for it.
#[derive(Clone, Copy, Debug)]
pub struct Sample<P> {
    pub frame: Frame,
    pub data: P,
}

pub struct SampleSet<P = ()> {
    dense: Vec<Sample<P>>,
    /// Index of each frame in `dense`, or `u32::MAX` when the frame is not in the set.
    pos: FrameVec<u32>,
}

impl<P: Copy> SampleSet<P> {
    pub fn with_capacity(frames: usize) -> Self {
        SampleSet { dense: Vec::new(), pos: FrameVec::filled(u32::MAX, frames) }
    }

    /// Adds `frame`, which must not be in the set, with its state.
    #[inline]
    pub fn insert(&mut self, frame: Frame, data: P) {
        self.pos[frame as usize] = self.dense.len() as u32;
        self.dense.push(Sample { frame, data });
    }

    /// Removes `frame`, which must be in the set, and returns its state.
    #[inline]
    pub fn remove(&mut self, frame: Frame) -> P {
        let p = self.pos[frame as usize] as usize;
        let last = self.dense.last().expect("remove from an empty sample set").frame;
        let gone = self.dense.swap_remove(p);
        if last != frame {
            self.pos[last as usize] = p as u32;
        }
        self.pos[frame as usize] = u32::MAX;
        gone.data
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.dense.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.dense.is_empty()
    }

    /// The entries in set order (the order draws index into).
    #[inline]
    pub fn samples(&self) -> &[Sample<P>] {
        &self.dense
    }

    /// The state of `frame`, which must be in the set.
    #[inline]
    pub fn data(&self, frame: Frame) -> &P {
        &self.dense[self.pos[frame as usize] as usize].data
    }

    /// The state of `frame`, which must be in the set, mutably.
    #[inline]
    pub fn data_mut(&mut self, frame: Frame) -> &mut P {
        let p = self.pos[frame as usize] as usize;
        &mut self.dense[p].data
    }

    /// Checks the set against the cache's resident count and its own index; `who` names the
    /// policy in the message.
    pub fn check(&self, who: &str, resident: usize) -> Result<(), String> {
        if self.dense.len() != resident {
            return Err(format!("{who} holds {} frames, cache {resident}", self.dense.len()));
        }
        for (i, s) in self.dense.iter().enumerate() {
            if self.pos[s.frame as usize] as usize != i {
                return Err(format!("{who}: frame {} misindexed", s.frame));
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
            s.insert(f, f * 10);
        }
        assert_eq!(s.remove(3), 30);
        let frames: Vec<Frame> = s.samples().iter().map(|e| e.frame).collect();
        assert_eq!(frames, [2, 1]);
        // The moved entry keeps its state and is still reached through its frame.
        assert_eq!(*s.data(2), 20);
        *s.data_mut(2) += 1;
        assert_eq!(s.samples()[0].data, 21);
        s.check("test", 2).unwrap();
        s.remove(1);
        s.remove(2);
        assert!(s.is_empty());
        assert!(s.check("test", 1).is_err());
    }
}

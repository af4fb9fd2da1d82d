//! Disk access sequences (DULO §4.1.2, Figures 3 and 4): "the number of sequential block
//! accesses (or sequence size)" the disk sees. A sequence is a run of device requests, in the
//! order the device serves them, each starting at the block where the one before it ended;
//! the first request that does not continue the run (a seek) starts the next. A request's own
//! size is one run of clustering or read-ahead; consecutive read-ahead windows served back to
//! back (Linux 2.6 reads at most 32 blocks per window) form one sequence, which is how the
//! paper's sequential workload reaches sequences past 120 blocks. The distribution is kept
//! per block, as the paper draws it: the share of requested blocks in sequences of each size.

use crate::cluster::SizeHistogram;

/// Blocks by the size of the sequence they were served in (`add(size, size)`), exact up to
/// eight times DULO's longest formed sequence (§3.3 rule 4), well past the 120 blocks the paper
/// discusses.
pub type SequenceSizes = SizeHistogram<1025>;

/// The sequence a device is in the middle of.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenSequence {
    /// The block after the last one served.
    end: u64,
    blocks: u64,
}

impl OpenSequence {
    /// The device starts serving `blocks` blocks from `start`: they continue the open
    /// sequence or, after a seek, close it into `sizes` and open a new one.
    #[inline]
    pub fn serve(&mut self, start: u64, blocks: u64, sizes: &mut SequenceSizes) {
        if self.blocks > 0 && start == self.end {
            self.blocks += blocks;
        } else {
            self.close(sizes);
            self.blocks = blocks;
        }
        self.end = start + blocks;
    }

    /// The run is over: the open sequence counts as finished.
    #[inline]
    pub fn close(&mut self, sizes: &mut SequenceSizes) {
        if self.blocks > 0 {
            sizes.add(self.blocks, self.blocks);
        }
        self.blocks = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_served_back_to_back_form_one_sequence() {
        let mut sizes = SequenceSizes::default();
        let mut open = OpenSequence::default();
        // Three 32-block read-ahead windows in a row, a seek, two single blocks apart, then a
        // 2-block request continuing the last.
        open.serve(100, 32, &mut sizes);
        open.serve(132, 32, &mut sizes);
        open.serve(164, 32, &mut sizes);
        open.serve(5000, 1, &mut sizes);
        open.serve(7, 1, &mut sizes);
        open.serve(8, 2, &mut sizes);
        open.close(&mut sizes);
        assert_eq!(sizes.iter().collect::<Vec<_>>(), vec![(1, 1), (3, 3), (96, 96)]);
        // Past MAX a sequence counts in the last size with all its blocks.
        open.serve(0, 2000, &mut sizes);
        open.close(&mut sizes);
        assert_eq!(sizes.iter().last(), Some((SequenceSizes::MAX, 2000)));
    }
}

//! Fraction of consecutive references: prefetching paper (Butt, Gniady, Hu, IEEE TC 2007) §6.1.
//! "A reference is consecutive if it is to a block that is either the same or immediately next
//! (in the same file) to the block that was accessed in the preceding reference"; the fraction
//! is over all references of the trace. References are block accesses (Table 4 counts them in
//! 4-KByte blocks), so a request of n blocks contributes n - 1 consecutive references by itself.

use serde::Serialize;

#[derive(Default)]
pub struct Consecutive {
    previous: Option<(u32, u64)>,
    references: u64,
    consecutive: u64,
}

impl Consecutive {
    /// One reference to block `block` of file `file` (device, for block traces).
    #[inline]
    pub fn add(&mut self, file: u32, block: u64) {
        self.references += 1;
        if let Some((f, b)) = self.previous {
            if f == file && (block == b || Some(block) == b.checked_add(1)) {
                self.consecutive += 1;
            }
        }
        self.previous = Some((file, block));
    }

    pub fn report(&self) -> ConsecutiveReport {
        ConsecutiveReport {
            references: self.references,
            consecutive: self.consecutive,
            fraction: if self.references == 0 { 0.0 } else { self.consecutive as f64 / self.references as f64 },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConsecutiveReport {
    pub references: u64,
    pub consecutive: u64,
    pub fraction: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fraction(blocks: &[u64]) -> f64 {
        let mut c = Consecutive::default();
        blocks.iter().for_each(|&b| c.add(0, b));
        c.report().fraction
    }

    #[test]
    fn the_papers_examples() {
        // §6.1: 75, 75, 62.5 and 75 percent.
        assert_eq!(fraction(&[5, 6, 7, 8]), 0.75);
        assert_eq!(fraction(&[1, 2, 3, 4, 100, 101, 102, 103]), 0.75);
        assert_eq!(fraction(&[1, 100, 2, 3, 4, 5, 6, 7]), 0.625);
        assert_eq!(fraction(&[1, 2, 3, 100, 101, 102, 103, 104]), 0.75);
    }

    #[test]
    fn same_block_counts_and_other_files_break_runs() {
        assert_eq!(fraction(&[7, 7, 7, 6]), 0.5);
        let mut c = Consecutive::default();
        for (f, b) in [(0, 1), (1, 2), (1, 3), (0, 4)] {
            c.add(f, b);
        }
        assert_eq!(c.report().consecutive, 1);
        assert_eq!(fraction(&[]), 0.0);
        assert_eq!(fraction(&[u64::MAX, 0]), 0.0);
    }
}

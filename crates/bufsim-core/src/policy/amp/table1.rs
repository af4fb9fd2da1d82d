//! AMP's Table 1 (UCB/CSD-05-1379, §4.1): the three detectors on the seven synthetic streams of
//! Figure 5, beside the paper's R̄ and classifications. `bufsim reproduce amp-table1` prints it.

use bufsim_trace::synth::amp::table1_stream;

use super::dear::DearDetector;
use super::detect::{Detector, Pattern, Sampling};
use super::pcc::PccDetector;
use super::recency::{RecencyConfig, RecencyDetector};

/// One stream of Table 1 as the paper reports it.
#[derive(Clone, Copy, Debug)]
pub struct PaperRow {
    pub stream: char,
    pub description: &'static str,
    /// The right answer (italic in the paper): what MRU and LRU hit rates call for.
    pub correct: Pattern,
    pub r_bar: f64,
    pub amp: Pattern,
    pub dear: Pattern,
    pub pcc: Pattern,
}

const L: Pattern = Pattern::Looping;
const O: Pattern = Pattern::Other;

/// Table 1 of the paper.
pub const PAPER: [PaperRow; 7] = [
    PaperRow {
        stream: 'a',
        description: "temporally clustered accesses moving through the file",
        correct: O,
        r_bar: 0.755,
        amp: O,
        dear: O,
        pcc: L,
    },
    PaperRow { stream: 'b', description: "pure loops", correct: L, r_bar: 0.001, amp: L, dear: L, pcc: L },
    PaperRow {
        stream: 'c',
        description: "loops with each block moved around randomly",
        correct: L,
        r_bar: 0.347,
        amp: L,
        dear: O,
        pcc: L,
    },
    PaperRow {
        stream: 'd',
        description: "temporally clustered accesses with localized small loops",
        correct: O,
        r_bar: 0.617,
        amp: O,
        dear: O,
        pcc: L,
    },
    PaperRow {
        stream: 'e',
        description: "loops in which a block is accessed again with prob. 0.6",
        correct: L,
        r_bar: 0.008,
        amp: L,
        dear: L,
        pcc: L,
    },
    PaperRow {
        stream: 'f',
        description: "same as (e) except probability is 0.5",
        correct: L,
        r_bar: 0.010,
        amp: L,
        dear: O,
        pcc: O,
    },
    PaperRow { stream: 'g', description: "uniformly random", correct: O, r_bar: 0.513, amp: O, dear: O, pcc: L },
];

/// Our detectors on our stream.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub paper: PaperRow,
    pub r_bar: f64,
    pub amp: Pattern,
    pub dear: Pattern,
    pub pcc: Pattern,
}

/// Stream length used unless told otherwise.
pub const LENGTH: usize = 2000;

/// Runs the three detectors over each stream, as §4.1 did: one detection over the whole stream
/// (AMP, PCC), and DEAR with group size 10 and a detection interval of half the stream, "so that
/// DEAR does a single detection over the whole stream". `sampling` is AMP's block sampling
/// fraction (1: every block).
pub fn table1(seed: u64, length: usize, sampling: f64) -> Vec<Row> {
    PAPER
        .iter()
        .map(|&paper| {
            let blocks = table1_stream(paper.stream, length, seed);
            let cfg = RecencyConfig { sampling: Sampling::fraction(sampling), min_refs: 1, ..RecencyConfig::default() };
            let mut amp = RecencyDetector::new(cfg);
            let mut pcc = PccDetector::new(100);
            let mut dear = DearDetector::new(10, (length as u64 / 2).max(1));
            for (t, &b) in blocks.iter().enumerate() {
                amp.access(1, b, t as u64);
                pcc.access(1, b, t as u64);
                dear.access(1, b, t as u64);
            }
            amp.detect(length as u64);
            pcc.detect(length as u64);
            dear.detect(length as u64);
            let a = amp.report(1).expect("the stream has accesses");
            Row {
                paper,
                r_bar: a.r_bar.unwrap_or(f64::NAN),
                amp: a.pattern,
                dear: dear.report(1).expect("the stream has accesses").pattern,
                pcc: pcc.report(1).expect("the stream has accesses").pattern,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AMP §4.1: "Table 1 shows that AMP detects the correct pattern each time", on every seed.
    #[test]
    fn amp_is_always_right() {
        for seed in 1..=10 {
            for r in table1(seed, LENGTH, 1.0) {
                assert_eq!(r.amp, r.paper.correct, "stream {} seed {seed}: R̄ = {}", r.paper.stream, r.r_bar);
            }
        }
    }

    /// AMP §4.1: PCC "detects the highly temporally clustered stream (a) as looping", and also
    /// (d) and (g): "misclassifying 3 non-loop streams as loops".
    #[test]
    fn pcc_calls_a_d_and_g_loops() {
        for seed in 1..=10 {
            let rows = table1(seed, LENGTH, 1.0);
            let wrong: Vec<char> = rows.iter().filter(|r| r.pcc != r.paper.correct).map(|r| r.paper.stream).collect();
            assert_eq!(wrong, vec!['a', 'd', 'g'], "seed {seed}");
            for r in rows.iter().filter(|r| wrong.contains(&r.paper.stream)) {
                assert_eq!(r.pcc, Pattern::Looping);
            }
        }
    }

    /// AMP §3.1: sampling "will have little effect on the detection result": at 1/4, AMP's
    /// classification of every stream is the unsampled one.
    #[test]
    fn sampling_a_quarter_detects_the_same() {
        for seed in 1..=10 {
            let full = table1(seed, LENGTH, 1.0);
            let quarter = table1(seed, LENGTH, 0.25);
            for (f, q) in full.iter().zip(&quarter) {
                assert_eq!(
                    f.amp, q.amp,
                    "stream {} seed {seed}: R̄ {} unsampled, {} at 1/4",
                    f.paper.stream, f.r_bar, q.r_bar
                );
            }
        }
    }
}

//! The weighted coin of expert-choosing policies (LeCaR): which expert names the victim.
//!
//! bufsim's own draws come from the run's seeded xoshiro generator. `variant=libcachesim` draws
//! as the libCacheSim build behind its Python binding (0.3.x) does instead: Lemire's Lehmer64
//! generator (a 128-bit state multiplied by 0xda942042e4dd58b5, the high 64 bits returned), one
//! thread-wide state whose initial value is 0xdeadbeef in a fresh process, an expert pick being
//! `(next % 100) / 100 < w`. (libCacheSim's 2024 sources use Knuth's MMIX LCG from 0 instead;
//! the binding is the oracle.) Reproducing the stream is what makes exact miss counts against
//! libCacheSim possible for randomized policies.

use crate::rng::Rng;

const LEHMER64_MULTIPLIER: u128 = 0xda94_2042_e4dd_58b5;

/// The state of a fresh libCacheSim process (read from the binding's thread-local data).
pub(crate) const LIBCACHESIM_INITIAL_STATE: u128 = 0xdead_beef;

pub(crate) enum Coin {
    Own(Rng),
    /// libCacheSim's generator state.
    Lehmer(u128),
}

impl Coin {
    pub fn own(seed: u64) -> Self {
        Coin::Own(Rng::new(seed))
    }

    pub fn libcachesim(state: u128) -> Self {
        Coin::Lehmer(state)
    }

    /// The next raw draw of libCacheSim's generator.
    #[inline]
    fn lehmer_next(state: &mut u128) -> u64 {
        *state = state.wrapping_mul(LEHMER64_MULTIPLIER);
        (*state >> 64) as u64
    }

    /// True with probability `w` (libCacheSim: in steps of 1/100).
    #[inline]
    pub fn below(&mut self, w: f64) -> bool {
        match self {
            Coin::Own(r) => r.unit() < w,
            Coin::Lehmer(s) => ((Self::lehmer_next(s) % 100) as f64 / 100.0) < w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libcachesim_stream_from_a_fresh_process() {
        // The first draw is the high half of the 96-bit product 0xdeadbeef · m...
        let mut s = LIBCACHESIM_INITIAL_STATE;
        let first = Coin::lehmer_next(&mut s);
        assert_eq!(first, 0xbe20_cd19);
        // ...and the picks of a fresh libCacheSim LeCaR at w = 0.5 (its `to_evict` called
        // twelve times on a cache whose LRU and LFU candidates differ) were
        // LFU LFU LRU LRU LFU LFU LRU LFU LRU LRU LRU LFU.
        let mut c = Coin::libcachesim(LIBCACHESIM_INITIAL_STATE);
        let picks: String = (0..12).map(|_| if c.below(0.5) { 'R' } else { 'F' }).collect();
        assert_eq!(picks, "FFRRFFRFRRRF");
    }
}

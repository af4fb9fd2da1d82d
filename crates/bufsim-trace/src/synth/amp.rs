//! The synthetic streams of AMP's Table 1 (Zhou, von Behren, Brewer, UCB/CSD-05-1379, §4.1,
//! Figure 5: blocks 1 to 100) and a mixed workload of looping and temporally clustered contexts.
//! Figure 5 itself is not in the text: each stream follows Table 1's one-line description, with
//! the constants (lag, displacement, probabilities) written below; `docs/policies/amp.md` gives
//! the R̄ each stream has beside the paper's.

use bufsim_config::{Rng, SpecError};

use super::{Synthetic, MAX_BLOCKS};
use crate::progress::Meter;
use bufsim_config::registry::{Args, Capabilities, Info, Param, Range};

const LENGTH: Param =
    Param { name: "length", default: "2000", doc: "accesses in the stream", range: Range::Whole(1, 100_000_000) };

pub const GENERATORS: &[Info] = &[
    Info {
        name: "amp-a",
        paper: "AMP Table 1 (a)",
        summary: "temporally clustered accesses moving through the file: a front advances 1/4 block per access, each access lags it by an exponential number of blocks (mean 3)",
        params: &[LENGTH],
        aliases: &[],
        preset_of: None,
        caps: Capabilities::NONE,
    },
    Info { name: "amp-b", paper: "AMP Table 1 (b)", summary: "pure loops over blocks 1..100", params: &[LENGTH], aliases: &[], preset_of: None, caps: Capabilities::NONE },
    Info {
        name: "amp-c",
        paper: "AMP Table 1 (c)",
        summary: "loops with each block moved around randomly: every access of a loop pass displaced by up to 80 positions either way",
        params: &[LENGTH],
        aliases: &[],
        preset_of: None,
        caps: Capabilities::NONE,
    },
    Info {
        name: "amp-d",
        paper: "AMP Table 1 (d)",
        summary: "temporally clustered accesses with localized small loops: as (a), but 30% of steps loop 2-3 times over the next 3-6 blocks",
        params: &[LENGTH],
        aliases: &[],
        preset_of: None,
        caps: Capabilities::NONE,
    },
    Info {
        name: "amp-e",
        paper: "AMP Table 1 (e)",
        summary: "loops in which a block is accessed again with probability 0.6: each pass over 1..100 keeps each block with probability 0.6",
        params: &[LENGTH],
        aliases: &[],
        preset_of: None,
        caps: Capabilities::NONE,
    },
    Info { name: "amp-f", paper: "AMP Table 1 (f)", summary: "as (e) with probability 0.5", params: &[LENGTH], aliases: &[], preset_of: None, caps: Capabilities::NONE },
    Info { name: "amp-g", paper: "AMP Table 1 (g)", summary: "uniformly random over blocks 1..100", params: &[LENGTH], aliases: &[], preset_of: None, caps: Capabilities::NONE },
    Info {
        name: "amp-mix",
        paper: "AMP §4 (looping scans larger than the cache beside temporally clustered accesses)",
        summary: "context 1 loops over file loop1, context 2 over file loop2, context 3 makes temporally clustered accesses to file hot; each access picks a context by its share",
        params: &[
            Param { name: "accesses", default: "200000", doc: "accesses in the trace", range: Range::Whole(1, 100_000_000) },
            Param { name: "loop1", default: "1500", doc: "blocks of context 1's loop", range: Range::Whole(0, MAX_BLOCKS) },
            Param { name: "loop1-share", default: "0.5", doc: "fraction of accesses made by context 1", range: Range::Number(0.0, 1.0) },
            Param { name: "loop2", default: "0", doc: "blocks of context 2's loop (0: no second loop)", range: Range::Whole(0, MAX_BLOCKS) },
            Param { name: "loop2-share", default: "0", doc: "fraction of accesses made by context 2", range: Range::Number(0.0, 1.0) },
            Param { name: "hot", default: "20000", doc: "blocks of the file context 3 moves through", range: Range::Whole(0, MAX_BLOCKS) },
            Param { name: "lag", default: "40", doc: "mean blocks an access of context 3 lags its moving front", range: Range::Whole(0, u64::MAX) },
            Param { name: "drift", default: "0.05", doc: "blocks context 3's front advances per access", range: Range::Number(0.0, 1.0) },
        ],
        aliases: &[],
        preset_of: None,
        caps: Capabilities::NONE,
    },
];

/// An exponential number of blocks with the given mean.
fn exp_lag(rng: &mut Rng, mean: f64) -> u64 {
    (-(1.0 - rng.unit()).ln() * mean) as u64
}

/// A front moving through `1..=n` with accesses lagging behind it (streams (a) and (d), and the
/// clustered context of `amp-mix`).
struct MovingFront {
    front: f64,
    n: u64,
}

impl MovingFront {
    fn access(&mut self, rng: &mut Rng, mean_lag: f64, drift: f64) -> u64 {
        let b = (self.front as u64).saturating_sub(exp_lag(rng, mean_lag)).clamp(1, self.n);
        self.advance(drift);
        b
    }

    fn advance(&mut self, by: f64) {
        self.front += by;
        if self.front >= (self.n + 1) as f64 {
            self.front = 1.0;
        }
    }
}

/// The blocks of Table 1's stream `which` ('a'..='g').
pub fn table1_stream(which: char, length: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    let mut out: Vec<u64> = Vec::with_capacity(length + 100);
    let r = &mut rng;
    match which {
        'a' => {
            let mut f = MovingFront { front: 1.0, n: 100 };
            while out.len() < length {
                out.push(f.access(r, 3.0, 0.25));
            }
        }
        'b' => out.extend((0..length as u64).map(|i| i % 100 + 1)),
        'c' => {
            // Pass p puts block i at p*100 + i + U(-80, 80); the stream is every pass's
            // accesses in that order.
            let passes = length.div_ceil(100) + 2;
            let mut at: Vec<(f64, u64)> = (0..passes as u64)
                .flat_map(|p| (1..=100u64).map(move |i| (p, i)))
                .map(|(p, i)| ((p * 100 + i) as f64 + (r.unit() * 2.0 - 1.0) * 80.0, i))
                .collect();
            at.sort_by(|x, y| x.0.total_cmp(&y.0));
            out.extend(at.into_iter().map(|(_, i)| i));
        }
        'd' => {
            let mut f = MovingFront { front: 1.0, n: 100 };
            while out.len() < length {
                if r.unit() < 0.3 {
                    let k = 3 + r.below(4);
                    let times = 2 + r.below(2);
                    let start = f.front as u64;
                    for _ in 0..times {
                        out.extend((0..k).map(|j| (start + j).clamp(1, 100)));
                    }
                    f.advance(k as f64);
                } else {
                    let b = (f.front as u64).saturating_sub(exp_lag(r, 3.0)).clamp(1, 100);
                    out.push(b);
                    if r.unit() < 0.3 {
                        f.advance(1.0);
                    }
                }
            }
        }
        'e' | 'f' => {
            let keep = if which == 'e' { 0.6 } else { 0.5 };
            while out.len() < length {
                out.extend((1..=100u64).filter(|_| r.unit() < keep));
            }
        }
        'g' => out.extend((0..length).map(|_| 1 + r.below(100))),
        _ => panic!("Table 1 has streams a to g, not {which}"),
    }
    out.truncate(length);
    out
}

pub(crate) fn generate(info: &Info, args: &Args, seed: u64, meter: &Meter) -> Result<Synthetic, SpecError> {
    if let Some(which) = info.name.strip_prefix("amp-").filter(|s| s.len() == 1).and_then(|s| s.chars().next()) {
        let length = args.u64("length")? as usize;
        let blocks = table1_stream(which, length, seed);
        return Ok(Synthetic::from_blocks(vec![info.name.to_string()], blocks.into_iter().map(|b| (0, b, 1)), meter));
    }
    debug_assert_eq!(info.name, "amp-mix");
    let n = args.u64("accesses")?;
    let (l1, s1) = (args.u64("loop1")?, args.f64("loop1-share")?);
    let (l2, s2) = (args.u64("loop2")?, args.f64("loop2-share")?);
    let hot = args.u64("hot")?;
    let lag: f64 = args.u64("lag")? as f64;
    let drift = args.f64("drift")?;
    if s1 + s2 > 1.0 {
        return Err(SpecError(format!("generator `amp-mix`: loop1-share + loop2-share = {} is over 1", s1 + s2)));
    }
    if (s1 > 0.0 && l1 == 0) || (s2 > 0.0 && l2 == 0) || (s1 + s2 < 1.0 && hot == 0) {
        return Err(SpecError("generator `amp-mix`: a context with a share needs at least one block".into()));
    }
    let mut rng = Rng::new(seed);
    let mut next = [0u64; 2];
    let mut front = MovingFront { front: 1.0, n: hot.max(1) };
    // Drawn as the requests are built, not collected first: no second copy of a long trace.
    let accesses = (0..n).map(|_| {
        let x = rng.unit();
        if x < s1 {
            let b = next[0];
            next[0] = (b + 1) % l1;
            (0, b, 1)
        } else if x < s1 + s2 {
            let b = next[1];
            next[1] = (b + 1) % l2;
            (1, b, 2)
        } else {
            (2, front.access(&mut rng, lag, drift) - 1, 3)
        }
    });
    Ok(Synthetic::from_blocks(vec!["loop1".into(), "loop2".into(), "hot".into()], accesses, meter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_stay_in_blocks_1_to_100() {
        for w in 'a'..='g' {
            let s = table1_stream(w, 2000, 3);
            assert_eq!(s.len(), 2000, "{w}");
            assert!(s.iter().all(|b| (1..=100).contains(b)), "{w}");
            if w != 'b' {
                assert_ne!(s, table1_stream(w, 2000, 4), "{w} ignores its seed");
            }
        }
    }

    #[test]
    fn pure_loops_and_probabilistic_loops() {
        let b = table1_stream('b', 250, 1);
        assert_eq!(&b[..3], &[1, 2, 3]);
        assert_eq!(b[100], 1);
        let e = table1_stream('e', 20_000, 1);
        // Every pass keeps about 60 of the 100 blocks, in loop order.
        let passes = e.windows(2).filter(|w| w[1] <= w[0]).count() + 1;
        let per_pass = e.len() as f64 / passes as f64;
        assert!((57.0..63.0).contains(&per_pass), "{per_pass}");
    }

    #[test]
    fn mix_shares_are_respected() {
        let s = super::super::generate("amp-mix(accesses=10000,loop1=100,loop1-share=0.3,loop2=50,loop2-share=0.2)", 1)
            .unwrap();
        let count = |c: u64| s.requests.iter().filter(|r| r.ctx == c).count();
        assert!((2_700..3_300).contains(&count(1)));
        assert!((1_700..2_300).contains(&count(2)));
        assert!((4_500..5_500).contains(&count(3)));
        // Context 1 loops over its 100 blocks in order.
        let l1: Vec<u64> = s.requests.iter().filter(|r| r.ctx == 1).map(|r| r.offset / 4096).collect();
        assert!(l1.iter().enumerate().all(|(i, &b)| b == i as u64 % 100));
    }
}

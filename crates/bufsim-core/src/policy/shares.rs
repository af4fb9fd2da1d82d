//! Parameters given as a share of the cache (`25%`, `2x`) or a size (`100blocks`), rounded
//! down to whole blocks: the convention of 2Q's and LIRS's reference code (Kin, Kout, Lhirs are
//! truncated there), which the general spec rule (round to nearest) would miss by one block.

use super::{Args, BuildEnv};
use crate::spec::{Relative, Size, SpecError};

/// A share of the cache or a size, as every policy parameter in blocks reads it: a bare whole
/// number counts blocks (`history=0`, `hir-min=32`); a bare number with a decimal point is a
/// share (`hir=0.01` is 1%, as in the papers and libCacheSim's ratios); otherwise `25%`, `2x`,
/// `100blocks`, `8MiB`.
pub(crate) fn parse_share(args: &Args, policy: &str, name: &str) -> Result<Relative, SpecError> {
    let text = args.text(name).trim();
    if let Ok(n) = text.parse::<u64>() {
        return Ok(Relative::Absolute(Size::Blocks(n)));
    }
    if text.contains('.') {
        if let Ok(f) = text.parse::<f64>() {
            if !(f.is_finite() && f >= 0.0) {
                return Err(SpecError(format!(
                    "policy `{policy}`: parameter {name}=`{text}` must be a share of zero or more"
                )));
            }
            return Ok(Relative::Fraction(f));
        }
    }
    Relative::parse(text).map_err(|e| SpecError(format!("policy `{policy}`: parameter {name}: {e}")))
}

/// Blocks for parameter `name` of `policy`, a share of the cache rounded down ([`parse_share`]).
pub(crate) fn blocks_floor(args: &Args, policy: &str, name: &str, env: &BuildEnv) -> Result<usize, SpecError> {
    Ok(floor(parse_share(args, policy, name)?, env))
}

fn floor(r: Relative, env: &BuildEnv) -> usize {
    match r {
        Relative::Fraction(f) => (f * env.capacity as f64).floor() as usize,
        Relative::Absolute(s) => s.to_blocks(env.block_size) as usize,
    }
}

/// Where a parameter in blocks must lie relative to the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheLimit {
    /// Less than the cache: some frames must stay for the rest of the policy.
    Below,
    /// At most the cache.
    AtMost,
    /// At least the cache.
    AtLeast,
}

/// [`blocks_floor`], refusing a value the user gave outside `limit` (a share such as `200%` at
/// every cache size; a size or block count at the cache size being built). Defaults are the
/// papers' and are fitted to tiny caches by the policy itself.
pub(crate) fn blocks_floor_within(
    args: &Args,
    policy: &str,
    name: &str,
    env: &BuildEnv,
    limit: CacheLimit,
    why: &str,
) -> Result<usize, SpecError> {
    let r = parse_share(args, policy, name)?;
    let n = floor(r, env);
    if !args.is_given(name) {
        return Ok(n);
    }
    let cap = env.capacity;
    let ok = match (limit, r) {
        (CacheLimit::Below, Relative::Fraction(f)) => f < 1.0,
        (CacheLimit::Below, Relative::Absolute(_)) => n < cap || cap < 2,
        (CacheLimit::AtMost, Relative::Fraction(f)) => f <= 1.0,
        (CacheLimit::AtMost, Relative::Absolute(_)) => n <= cap,
        (CacheLimit::AtLeast, Relative::Fraction(f)) => f >= 1.0,
        (CacheLimit::AtLeast, Relative::Absolute(_)) => n >= cap,
    };
    if ok {
        return Ok(n);
    }
    let must = match limit {
        CacheLimit::Below => "less than the cache",
        CacheLimit::AtMost => "at most the cache",
        CacheLimit::AtLeast => "at least the cache",
    };
    let shown = match r {
        Relative::Fraction(f) => format!("{}% of the cache", f * 100.0),
        Relative::Absolute(_) => format!("{n} blocks, with a cache of {cap} blocks"),
    };
    Err(SpecError(format!(
        "policy `{policy}`: parameter {name}=`{}` is {shown}; it must be {must} ({why})",
        args.text(name).trim()
    )))
}

#[cfg(test)]
mod tests {
    use super::super::registry::build;
    use super::*;

    #[test]
    fn counts_shares_and_sizes() {
        let env = BuildEnv { capacity: 1000, block_size: 4096, seed: 0 };
        let info = super::super::registry::lookup("2q").unwrap();
        let given = |v: &str| vec![("kin".to_string(), v.to_string())];
        for (text, blocks) in [("25%", 250), ("0.25", 250), ("0.0125", 12), ("7", 7), ("8KiB", 2), ("2x", 2000)] {
            let g = given(text);
            let a = Args::new(info, &g).unwrap();
            assert_eq!(blocks_floor(&a, "2q", "kin", &env).unwrap(), blocks, "{text}");
        }
        assert!(build("lirs(hir=-0.5)", &env).is_err());
        assert!(build("lirs(hir=0.01)", &env).is_ok());
    }

    #[test]
    fn parameters_outside_their_range_are_refused_with_the_rule() {
        let env = BuildEnv { capacity: 100, block_size: 4096, seed: 0 };
        let err = |spec: &str| build(spec, &env).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err("lirs(hir=200%)").contains("hir=`200%` is 200% of the cache; it must be less than the cache"),
            "{}",
            err("lirs(hir=200%)")
        );
        assert!(err("lirs(hir-min=1000)")
            .contains("hir-min=`1000` is 1000 blocks, with a cache of 100 blocks; it must be less than the cache"));
        assert!(err("lirs(hir=100blocks)").contains("must be less than the cache"));
        assert!(err("lirs(stack=0)")
            .contains("stack=`0` is 0 blocks, with a cache of 100 blocks; it must be at least the cache"));
        assert!(err("lirs(stack=50%)").contains("must be at least the cache"));
        assert!(err("2q(kin=200%)").contains("kin=`200%` is 200% of the cache; it must be at most the cache"));
        assert!(err("2q(kin=101blocks)").contains("must be at most the cache"));
        for ok in [
            "lirs(hir=99blocks)",
            "lirs(hir-min=99)",
            "lirs(stack=1x)",
            "2q(kin=100%)",
            "lirs(hir=2)",
            "mq(history=0)",
            "mq(history=2)",
        ] {
            assert!(build(ok, &env).is_ok(), "{ok}: {}", err(ok));
        }
        // Defaults fit themselves to tiny caches; only what the user gives is checked.
        let tiny = BuildEnv { capacity: 2, block_size: 4096, seed: 0 };
        assert!(build("lirs", &tiny).is_ok() && build("lirs-accusim", &tiny).is_ok());
    }
}

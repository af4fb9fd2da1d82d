//! Parameters given as a share of the cache (`25%`, `2x`) or a size (`100blocks`), rounded
//! down to whole blocks: the convention of 2Q's and LIRS's reference code (Kin, Kout, Lhirs are
//! truncated there), which the general spec rule (round to nearest) would miss by one block.

use super::{Args, BuildEnv};
use crate::spec::{Relative, SpecError};
use bufsim_config::registry::Range;

/// A share of the cache or a size ([`bufsim_config::registry::parse_share`]).
pub(crate) fn parse_share(args: &Args, _policy: &str, name: &str) -> Result<Relative, SpecError> {
    args.share(name)
}

/// Blocks for parameter `name` of `policy`, a share of the cache rounded down ([`parse_share`]).
pub(crate) fn blocks_floor(args: &Args, policy: &str, name: &str, env: &BuildEnv) -> Result<usize, SpecError> {
    let r = parse_share(args, policy, name)?;
    let n = floor(r, env);
    args.check_absolute_share(name, r, n as u64, env)?;
    Ok(n)
}

fn floor(r: Relative, env: &BuildEnv) -> usize {
    match r {
        Relative::Fraction(f) => (f * env.capacity as f64).floor() as usize,
        Relative::Absolute(s) => s.to_blocks(env.block_size) as usize,
    }
}

/// [`blocks_floor`] for a parameter declared as [`Range::Cache`]: the registry checked a share
/// against its limit; an absolute amount the user gave is checked here, against the cache being
/// built. Defaults and presets are the papers' and are fitted to tiny caches by the policy.
pub(crate) fn blocks_floor_within(
    args: &Args,
    policy: &str,
    name: &str,
    env: &BuildEnv,
    why: &str,
) -> Result<usize, SpecError> {
    let r = parse_share(args, policy, name)?;
    let n = floor(r, env);
    let Some(Range::Cache(limit)) = args.range(name) else {
        panic!("policy {policy} reads {name} as an amount of cache but declares another range")
    };
    if !args.is_given(name) || limit.holds_blocks(n as u64, env.capacity as u64) {
        return Ok(n);
    }
    let cap = env.capacity;
    Err(SpecError(format!(
        "policy `{policy}`: parameter {name}=`{}` is {n} blocks, with a cache of {cap} blocks; it must be {} ({why})",
        args.text(name),
        limit.words()
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
        let given = |v: &str| vec![("kout".to_string(), v.to_string())];
        for (text, blocks) in [("25%", 250), ("0.25", 250), ("0.0125", 12), ("7", 7), ("8KiB", 2), ("2x", 2000)] {
            let g = given(text);
            let a = Args::new(super::super::registry::Kind::Policy, info, &g).unwrap();
            assert_eq!(blocks_floor(&a, "2q", "kout", &env).unwrap(), blocks, "{text}");
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

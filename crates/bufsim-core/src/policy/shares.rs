//! Parameters given as a share of the cache (`25%`, `2x`) or a size (`100blocks`), rounded
//! down to whole blocks: the convention of 2Q's and LIRS's reference code (Kin, Kout, Lhirs are
//! truncated there), which the general spec rule (round to nearest) would miss by one block.

use super::{Args, BuildEnv};
use crate::spec::{Relative, SpecError};

/// Blocks for parameter `name` of `policy`, a share of the cache rounded down. A bare whole
/// number counts blocks (`history=0`, `hir-min=32`); a bare number with a decimal point is a
/// share (`hir=0.01` is 1%, as in the papers and libCacheSim's ratios).
pub(crate) fn blocks_floor(args: &Args, policy: &str, name: &str, env: &BuildEnv) -> Result<usize, SpecError> {
    let text = args.text(name).trim();
    if let Ok(n) = text.parse::<u64>() {
        return Ok(n as usize);
    }
    if text.contains('.') {
        if let Ok(f) = text.parse::<f64>() {
            if !(f.is_finite() && f >= 0.0) {
                return Err(SpecError(format!("policy `{policy}`: parameter {name}=`{text}` must be a share of zero or more")));
            }
            return Ok((f * env.capacity as f64).floor() as usize);
        }
    }
    let r = Relative::parse(args.text(name)).map_err(|e| SpecError(format!("policy `{policy}`: parameter {name}: {e}")))?;
    Ok(match r {
        Relative::Fraction(f) => (f * env.capacity as f64).floor() as usize,
        Relative::Absolute(s) => s.to_blocks(env.block_size) as usize,
    })
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
}

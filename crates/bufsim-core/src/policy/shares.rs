//! Parameters given as a share of the cache (`25%`, `2x`) or a size (`100blocks`), rounded
//! down to whole blocks: the convention of 2Q's and LIRS's reference code (Kin, Kout, Lhirs are
//! truncated there), which the general spec rule (round to nearest) would miss by one block.

use super::{Args, BuildEnv};
use crate::spec::{Relative, SpecError};

/// Blocks for parameter `name` of `policy`, a share of the cache rounded down. A bare whole
/// number counts blocks (`history=0`, `hir-min=32`).
pub(crate) fn blocks_floor(args: &Args, policy: &str, name: &str, env: &BuildEnv) -> Result<usize, SpecError> {
    if let Ok(n) = args.text(name).trim().parse::<u64>() {
        return Ok(n as usize);
    }
    let r = Relative::parse(args.text(name)).map_err(|e| SpecError(format!("policy `{policy}`: parameter {name}: {e}")))?;
    Ok(match r {
        Relative::Fraction(f) => (f * env.capacity as f64).floor() as usize,
        Relative::Absolute(s) => s.to_blocks(env.block_size) as usize,
    })
}

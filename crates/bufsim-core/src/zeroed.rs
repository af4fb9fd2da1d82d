//! Zeroed tables whose size the cache sets (W-TinyLFU's sketch and filters), allocated so that
//! a size the machine cannot give is an error, not an abort of the process (and of the Python
//! session around it). The allocator hands out zeroed memory whose pages are taken only as
//! they are written, so a large table a small trace touches sparsely costs little.

use crate::spec::SpecError;

/// Element types whose all-zero bit pattern is the value 0.
pub trait ZeroBits: Copy {}
impl ZeroBits for u32 {}
impl ZeroBits for u64 {}

/// `n` zeros, or an error naming `what` when the allocation fails.
pub fn zeroed<T: ZeroBits>(n: usize, what: &str) -> Result<Vec<T>, SpecError> {
    let too_large = || {
        SpecError(format!(
            "{what} needs {} bytes, more than this machine can allocate; give a smaller cache",
            (n as u128) * std::mem::size_of::<T>() as u128
        ))
    };
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| too_large())?;
    // SAFETY: `layout` has a non-zero size (n > 0 and T is u32 or u64).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if ptr.is_null() {
        return Err(too_large());
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `n` values of T, every
    // one of them zero, which is a valid T (`ZeroBits`); length and capacity are both `n`.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_tables_are_zero_and_impossible_ones_are_errors() {
        let v: Vec<u64> = zeroed(1000, "a table").unwrap();
        assert!(v.len() == 1000 && v.iter().all(|&x| x == 0));
        let e = zeroed::<u64>(usize::MAX / 4, "the sketch").unwrap_err();
        assert!(e.0.contains("the sketch needs") && e.0.contains("give a smaller cache"), "{}", e.0);
    }
}

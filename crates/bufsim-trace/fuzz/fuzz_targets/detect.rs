#![no_main]
//! Arbitrary bytes through format detection, then through the reader of whatever was detected.

use bufsim_trace::detect_bytes;
use bufsim_trace::fuzz::read_arbitrary;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for len in [Some(data.len() as u64), None] {
        if let Some(format) = detect_bytes(data, len) {
            read_arbitrary(data, format);
        }
    }
});

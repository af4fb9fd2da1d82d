#![no_main]
//! Arbitrary bytes through format detection, then through the reader of whatever was detected;
//! and through detection and reading in one pass, as a pipe is read.

use bufsim_trace::detect_bytes;
use bufsim_trace::fuzz::{detect_and_read_stream, read_arbitrary};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for len in [Some(data.len() as u64), None] {
        if let Some(format) = detect_bytes(data, len) {
            read_arbitrary(data, format);
        }
    }
    detect_and_read_stream(data);
});

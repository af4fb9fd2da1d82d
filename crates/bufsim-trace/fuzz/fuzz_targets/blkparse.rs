#![no_main]
//! Arbitrary bytes through the blkparse reader (see `bufsim_trace::fuzz::read_arbitrary`).

use bufsim_trace::fuzz::read_arbitrary;
use bufsim_trace::{BlkEvent, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for event in [BlkEvent::Queue, BlkEvent::Dispatch, BlkEvent::Complete] {
        read_arbitrary(data, Format::Blkparse(event));
    }
});

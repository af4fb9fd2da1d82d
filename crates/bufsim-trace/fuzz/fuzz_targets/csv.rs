#![no_main]
//! Arbitrary bytes through the csv reader (see `bufsim_trace::fuzz::read_arbitrary`).

use bufsim_trace::fuzz::read_arbitrary;
use bufsim_trace::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    read_arbitrary(data, Format::Csv);
});

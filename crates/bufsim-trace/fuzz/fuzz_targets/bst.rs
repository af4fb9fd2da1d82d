#![no_main]
//! Arbitrary bytes through the bst reader (see `bufsim_trace::fuzz::read_arbitrary`).

use bufsim_trace::fuzz::read_arbitrary;
use bufsim_trace::{AddressKind, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    read_arbitrary(data, Format::Bst(AddressKind::Device));
});

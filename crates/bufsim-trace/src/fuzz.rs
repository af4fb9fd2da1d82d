//! The harness the fuzz targets (`crates/bufsim-trace/fuzz/`) and the property tests share:
//! arbitrary bytes through a reader, checking what must hold for any input.

use std::io::{BufRead, Cursor};

use crate::blkparse::BlkEvent;
use crate::devices::MAX_DEVICES;
use crate::error::{Location, TraceErrorKind};
use crate::format::Format;
use crate::reader::{ReadOptions, TraceReader};
use crate::request::AddressKind;

/// Every reader (blkparse with each event; `bst` both streamed and decoded in place).
pub const ALL_FORMATS: [Format; 15] = [
    Format::Csv,
    Format::BlockCsv,
    Format::CloudPhysics,
    Format::Oracle,
    Format::Msr,
    Format::Blkparse(BlkEvent::Queue),
    Format::Blkparse(BlkEvent::Dispatch),
    Format::Blkparse(BlkEvent::Complete),
    Format::Spc,
    Format::Fiu,
    Format::LcsCsv,
    Format::LcsTxt,
    Format::Lirs,
    Format::Arc,
    Format::Bst(AddressKind::Device),
];

/// Decompressed input can be far larger than the bytes given; stop looking after this many.
const COMPRESSED_LIMIT: u64 = 1 << 20;

/// Reads `bytes` as `format` four ways (stopping at the first bad record or skipping bad ones;
/// as given, or through the decompressing and in-memory paths) and panics if a reader breaks
/// a promise: more requests (or skipped records) than the input could hold, which would mean a
/// reader that does not advance, a request whose byte range wraps around, a device number the
/// engine cannot hold, or an error that is neither located nor a whole-file problem.
pub fn read_arbitrary(bytes: &[u8], format: Format) {
    // Each request or skipped record consumes at least one line (one byte) or one 16-byte record.
    let bound = bytes.len() as u64 + 1;
    for skip_bad in [false, true] {
        let opts = ReadOptions { skip_bad, ..Default::default() };
        let plain: Box<dyn BufRead + Send> = Box::new(Cursor::new(bytes.to_vec()));
        if let Ok(r) = TraceReader::from_input_with(plain, "fuzz", format, &opts) {
            drain(r, Some(bound));
        }
        if let Ok(r) = TraceReader::from_bytes(bytes.to_vec(), "fuzz", format, &opts) {
            drain(r, None);
        }
    }
}

/// Reads `bytes` the way a pipe is read: detected from a buffered head (passing over leading
/// comments), then read on from the same stream; with the same promises as [`read_arbitrary`].
pub fn detect_and_read_stream(bytes: &[u8]) {
    let bound = bytes.len() as u64 + 1;
    for skip_bad in [false, true] {
        let opts = ReadOptions { skip_bad, ..Default::default() };
        let input: Box<dyn std::io::Read + Send> = Box::new(Cursor::new(bytes.to_vec()));
        if let Ok(r) = TraceReader::detect_read(input, "fuzz", &opts) {
            drain(r, Some(bound));
        }
    }
}

fn drain(mut r: TraceReader, bound: Option<u64>) {
    let mut n = 0u64;
    loop {
        match r.next_request() {
            Ok(Some(req)) => {
                n += 1;
                // No range wraps (a block range may end at 2^64 - 1, so its last block is
                // addressable), and no request is too large to split into accesses.
                assert!(req.offset.checked_add(req.size).is_some(), "range wraps: {req:?}");
                assert!(req.size <= crate::MAX_REQUEST_SIZE, "request too large: {req:?}");
                if r.address_kind() == AddressKind::Device {
                    assert!((req.file as usize) < MAX_DEVICES, "device {} cannot be numbered", req.file);
                }
            }
            Ok(None) => break,
            Err(e) => {
                // Every error names the file and says something; a skipping reader only stops
                // at what it cannot skip.
                assert!(e.to_string().starts_with("fuzz:") && !e.message.is_empty(), "{e}");
                if r.skips_bad() && e.kind == TraceErrorKind::Malformed {
                    let located = matches!(e.location, Location::Line(_) | Location::Byte(_));
                    assert!(!located, "a skipping reader returned a record error: {e}");
                }
                break;
            }
        }
        match bound {
            Some(b) => {
                assert!(n + r.skipped().count <= b, "{} requests and {} skipped from {b} bytes", n, r.skipped().count)
            }
            None if n + r.skipped().count >= COMPRESSED_LIMIT => break,
            None => {}
        }
    }
}

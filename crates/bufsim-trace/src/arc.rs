//! The traces of the ARC paper (Megiddo and Modha, FAST 2003; OLTP, P1-P14, DS1, S1-S3, ...):
//! lines `start nblocks ignore seq`, each a request for the `nblocks` blocks from `start`.
//!
//! A line is one request of `nblocks` whole blocks on device 0 (so the ARC paper's "requests",
//! which count blocks, are bufsim's block accesses). The third field is unused by the paper and
//! the fourth is a request sequence number; both are checked to be integers and not kept.

use crate::error::TraceError;
use crate::lines::{parse_u64, split_ws, LineReader};
use crate::request::Request;

pub struct ArcReader {
    lines: LineReader,
    fields: Vec<(usize, usize)>,
}

impl ArcReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader) -> Self {
        ArcReader { lines, fields: Vec::with_capacity(4) }
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if !self.lines.advance_content()? {
            return Ok(None);
        }
        let lines = &self.lines;
        split_ws(&lines.buf, &mut self.fields);
        if self.fields.len() != 4 {
            return Err(lines
                .error_quoting(&format!("expected 4 fields (start nblocks ignore seq), found {}", self.fields.len())));
        }
        let mut v = [0u64; 4];
        for (i, &(a, b)) in self.fields.iter().enumerate() {
            v[i] = parse_u64(&lines.buf[a..b]).ok_or_else(|| {
                lines.error_quoting("fields must be non-negative integers (start nblocks ignore seq)")
            })?;
        }
        let [start, nblocks, _, _seq] = v;
        if start.checked_add(nblocks).is_none() {
            return Err(lines.error_quoting("start + nblocks is past the largest block number"));
        }
        Ok(Some(Request::read_blocks(0, start, nblocks)))
    }
}

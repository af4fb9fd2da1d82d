//! The block-reference traces of the LIRS and CLOCK-Pro papers (Jiang and Zhang, SIGMETRICS
//! 2002; USENIX 2005): one block number per line. Lines holding `*` (separators in some of the
//! files, such as cs) and blank lines are not references and are skipped; anything else that is
//! not a block number is an error. Each reference is one access to one whole block on device 0.

use crate::error::TraceError;
use crate::lines::{parse_u64, trim, LineReader};
use crate::request::Request;

pub struct LirsReader {
    lines: LineReader,
}

impl LirsReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader) -> Self {
        LirsReader { lines }
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let t = trim(&self.lines.buf);
            if t.is_empty() || t == b"*" {
                continue;
            }
            let block = parse_u64(t).ok_or_else(|| {
                self.lines.error_quoting("expected one block number per line (or `*`); for libCacheSim's text traces with named objects use --format lcs-txt")
            })?;
            return Ok(Some(Request::read_blocks(0, block, 1)));
        }
    }
}

//! The CloudPhysics VSCSI CSV that libCacheSim ships as test data:
//! `version,time,op,size,lbn` with `time` in microseconds, `op` a SCSI opcode in hex,
//! `size` in bytes and `lbn` in 512-byte sectors. One virtual disk: device 0.

use crate::error::TraceError;
use crate::lines::{parse_hex, parse_u64, split_commas, trim, LineReader};
use crate::request::{Op, Request};

pub const HEADER: &str = "version,time,op,size,lbn";
const SECTOR: u64 = 512;

pub struct CloudPhysicsReader {
    lines: LineReader,
    fields: Vec<(usize, usize)>,
}

/// SCSI READ(6/10/12/16) and WRITE(6/10/12/16) opcodes.
fn scsi_op(code: u64) -> Option<Op> {
    match code {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        _ => None,
    }
}

impl CloudPhysicsReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader) -> Self {
        CloudPhysicsReader { lines, fields: Vec::with_capacity(5) }
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let t = trim(&self.lines.buf);
            if t.is_empty() || t[0] == b'#' {
                continue;
            }
            // The header is optional and may only stand on the first line.
            if self.lines.line_no == 1 && t.eq_ignore_ascii_case(HEADER.as_bytes()) {
                continue;
            }
            break;
        }
        let lines = &mut self.lines;
        split_commas(&mut lines.buf, &mut self.fields).map_err(|m| lines.error_quoting(m))?;
        if self.fields.len() != 5 {
            return Err(self
                .lines
                .error_quoting(&format!("expected 5 columns ({HEADER}), found {}", self.fields.len())));
        }
        let f = |i: usize| {
            let (a, b) = self.fields[i];
            trim(&self.lines.buf[a..b])
        };
        let time_us = parse_u64(f(1))
            .ok_or_else(|| self.lines.error_quoting("time must be a non-negative integer (microseconds)"))?;
        let code = parse_hex(f(2))
            .ok_or_else(|| self.lines.error_quoting("op must be a SCSI opcode in hex (28 read, 2a write)"))?;
        let op = scsi_op(code).ok_or_else(|| {
            self.lines.error_quoting(&format!(
                "SCSI opcode {code:02x} is neither a read nor a write (28/08/a8/88 read, 2a/0a/aa/8a write)"
            ))
        })?;
        let size = parse_u64(f(3))
            .ok_or_else(|| self.lines.error_quoting("size must be a non-negative integer number of bytes"))?;
        let lbn = parse_u64(f(4))
            .ok_or_else(|| self.lines.error_quoting("lbn must be a non-negative integer (512-byte sectors)"))?;
        let offset = lbn
            .checked_mul(SECTOR)
            .filter(|o| o.checked_add(size).is_some())
            .ok_or_else(|| self.lines.error_quoting("lbn * 512 + size is past the largest byte address"))?;
        Ok(Some(Request { time_ns: time_us.saturating_mul(1000), op, ..Request::read(0, offset, size) }))
    }
}

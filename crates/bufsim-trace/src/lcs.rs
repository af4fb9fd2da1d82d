//! libCacheSim's text traces: `txt` (one object id per line) and `csv` with a header naming its
//! columns (`obj_id` required; `time`, `obj_size`, `op` optional; others ignored; comma or tab
//! separated).
//!
//! As with its oracleGeneral binary, each record is one access to one whole block, the object
//! id (bufsim caches fixed-size blocks, as libCacheSim does with object size 1; `obj_size` is
//! checked but not used). Numeric ids are the block number; other ids are hashed to 64 bits with
//! FNV-1a, as libCacheSim hashes string ids. `time` is in seconds (a fraction is kept).
//! In the csv, `get`/`read` ops are reads, `set`/`write`/`add`/`replace`/`cas`/`append`/
//! `prepend`/`update` writes, and `delete` records are passed over (they access nothing).

use crate::error::TraceError;
use crate::lines::{other_separator, parse_fixed, parse_u64, split_commas, trim, LineReader};
use crate::request::{Op, Request};

/// The block number of an object id: the number itself, or the FNV-1a hash of the text (a hash
/// of 2^64-1, the one block number with no block after it, is taken as 2^64-2).
pub fn object_block(id: &[u8]) -> u64 {
    if let Some(n) = parse_u64(id) {
        return n;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in id {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.min(u64::MAX - 1)
}

fn access(block: u64, op: Op, time_ns: u64) -> Request {
    Request { time_ns, op, ..Request::read_blocks(0, block, 1) }
}

/// libCacheSim's plain text trace: one object id per line; blank lines are skipped.
pub struct LcsTxtReader {
    lines: LineReader,
}

impl LcsTxtReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader) -> Self {
        LcsTxtReader { lines }
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let id = trim(&self.lines.buf);
            if !id.is_empty() {
                return Ok(Some(access(object_block(id), Op::Read, 0)));
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Columns {
    obj_id: usize,
    time: Option<usize>,
    obj_size: Option<usize>,
    op: Option<usize>,
}

/// libCacheSim's csv trace with a header line.
pub struct LcsCsvReader {
    lines: LineReader,
    tab: bool,
    cols: Columns,
    count: usize,
    fields: Vec<(usize, usize)>,
}

/// Splits on tabs (no quoting: libCacheSim's tab-separated traces have none).
fn split_tabs(line: &[u8], fields: &mut Vec<(usize, usize)>) {
    fields.clear();
    let mut start = 0;
    for i in memchr::memchr_iter(b'\t', line) {
        fields.push((start, i));
        start = i + 1;
    }
    fields.push((start, line.len()));
}

impl LcsCsvReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(mut lines: LineReader) -> Result<Self, TraceError> {
        if !lines.advance_content()? {
            return Err(lines.error(
                "empty trace: expected a header line naming the columns (obj_id, and time, obj_size, op if present)",
            ));
        }
        let tab = memchr::memchr(b'\t', &lines.buf).is_some() && memchr::memchr(b',', &lines.buf).is_none();
        let mut fields = Vec::new();
        if tab {
            split_tabs(&lines.buf, &mut fields);
        } else {
            split_commas(&mut lines.buf, &mut fields).map_err(|m| lines.error_quoting(m))?;
        }
        let mut found: [Option<usize>; 4] = [None; 4];
        for (i, &(a, b)) in fields.iter().enumerate() {
            let name = String::from_utf8_lossy(trim(&lines.buf[a..b])).to_ascii_lowercase();
            let k = match name.as_str() {
                "obj_id" | "obj-id" | "objid" => 0,
                "time" | "timestamp" | "clock_time" => 1,
                "obj_size" | "obj-size" | "objsize" => 2,
                "op" => 3,
                _ => continue,
            };
            if found[k].is_some() {
                return Err(lines.error_quoting(&format!("column `{name}` appears twice in the header")));
            }
            found[k] = Some(i);
        }
        let Some(obj_id) = found[0] else {
            if let Some((_, sep)) = other_separator(&lines.buf).filter(|_| !tab) {
                return Err(lines.error_quoting(&format!(
                    "header lacks the obj_id column: its columns are separated by {sep}; separate them with commas (or tabs)"
                )));
            }
            return Err(lines.error_quoting(
                "header lacks the obj_id column; a libCacheSim csv names obj_id (time, obj_size, op optional)",
            ));
        };
        let cols = Columns { obj_id, time: found[1], obj_size: found[2], op: found[3] };
        Ok(LcsCsvReader { lines, tab, cols, count: fields.len(), fields })
    }

    pub fn has_time(&self) -> bool {
        self.cols.time.is_some()
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.lines.advance_content()? {
                return Ok(None);
            }
            let lines = &mut self.lines;
            if self.tab {
                split_tabs(&lines.buf, &mut self.fields);
            } else {
                split_commas(&mut lines.buf, &mut self.fields).map_err(|m| lines.error_quoting(m))?;
            }
            let lines = &self.lines;
            if self.fields.len() != self.count {
                return Err(lines.error_quoting(&format!(
                    "expected {} columns as in the header, found {}",
                    self.count,
                    self.fields.len()
                )));
            }
            let f = |i: usize| {
                let (a, b) = self.fields[i];
                trim(&lines.buf[a..b])
            };
            let id = f(self.cols.obj_id);
            if id.is_empty() {
                return Err(lines.error_quoting("obj_id is empty"));
            }
            let time_ns = match self.cols.time {
                Some(c) if !f(c).is_empty() => {
                    parse_fixed(f(c), 9).ok_or_else(|| lines.error_quoting("time must be non-negative seconds"))?
                }
                _ => 0,
            };
            if let Some(c) = self.cols.obj_size {
                if !f(c).is_empty() && parse_u64(f(c)).is_none() {
                    return Err(lines.error_quoting("obj_size must be a non-negative integer"));
                }
            }
            let op = match self.cols.op.map(f) {
                None | Some(b"") => Op::Read,
                Some(o) => match o.to_ascii_lowercase().as_slice() {
                    b"get" | b"gets" | b"read" | b"r" => Op::Read,
                    b"set" | b"write" | b"w" | b"add" | b"replace" | b"cas" | b"append" | b"prepend" | b"update" => {
                        Op::Write
                    }
                    b"delete" | b"del" => continue,
                    _ => return Err(lines.error_quoting("op must be get, set, read, write (or delete, passed over)")),
                },
            };
            return Ok(Some(access(object_block(id), op, time_ns)));
        }
    }
}

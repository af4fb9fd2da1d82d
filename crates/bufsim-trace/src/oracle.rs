//! libCacheSim's oracleGeneral binary: 24-byte little-endian records
//! `u32 time, u64 obj_id, u32 size, i64 next_access`.
//!
//! Each record is one access to one whole block, `obj_id` (the object size is not used:
//! bufsim caches fixed-size blocks, as libCacheSim does with object size 1). `time` is in
//! seconds. `next_access` is ignored; OPT computes its own from the trace.

use std::io::{BufRead, Read};

use crate::error::{Location, TraceError};
use crate::request::{Op, Request};

pub const RECORD: usize = 24;

pub struct OracleReader {
    inner: Box<dyn BufRead + Send>,
    path: String,
    offset: u64,
}

impl OracleReader {
    pub(crate) fn new(inner: Box<dyn BufRead + Send>, path: &str) -> Self {
        OracleReader {
            inner,
            path: path.to_string(),
            offset: 0,
        }
    }

    #[inline]
    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        let mut rec = [0u8; RECORD];
        let mut got = 0;
        while got < RECORD {
            match self.inner.read(&mut rec[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&self.path, &e)),
            }
        }
        if got == 0 {
            return Ok(None);
        }
        if got < RECORD {
            return Err(TraceError::malformed(
                &self.path,
                Location::Byte(self.offset),
                format!(
                    "truncated record: {got} of {RECORD} bytes; an oracleGeneral file is a whole number of 24-byte records"
                ),
            ));
        }
        self.offset += RECORD as u64;
        let time = u32::from_le_bytes(rec[0..4].try_into().unwrap());
        let obj = u64::from_le_bytes(rec[4..12].try_into().unwrap());
        Ok(Some(Request {
            time_ns: time as u64 * 1_000_000_000,
            dur_ns: 0,
            pid: 0,
            ctx: 0,
            op: Op::Read,
            file: 0,
            offset: obj,
            size: 1,
            in_blocks: true,
        }))
    }
}

/// Encodes one oracleGeneral record (used by generators, benchmarks and tests).
pub fn encode_record(time: u32, obj_id: u64, size: u32, next_access: i64) -> [u8; RECORD] {
    let mut rec = [0u8; RECORD];
    rec[0..4].copy_from_slice(&time.to_le_bytes());
    rec[4..12].copy_from_slice(&obj_id.to_le_bytes());
    rec[12..16].copy_from_slice(&size.to_le_bytes());
    rec[16..24].copy_from_slice(&next_access.to_le_bytes());
    rec
}

//! Writes requests as bufsim's interchange CSV, so a stream bufsim derives (the second level of a
//! hierarchy) is a trace every reader and every other tool can take.

use std::io::Write;

use crate::error::{Location, TraceError};
use crate::request::Request;

/// The device-addressed interchange CSV (`block-csv`): `op,device,offset,size,time_us,pid,ctx`.
pub struct BlockCsvWriter<W: Write> {
    out: W,
    path: String,
    block_size: u64,
    written: u64,
}

impl<W: Write> BlockCsvWriter<W> {
    /// A writer to `out` (named `path` in errors); block-addressed requests are written as
    /// byte ranges of `block_size`-byte blocks.
    pub fn new(mut out: W, path: &str, block_size: u64) -> Result<Self, TraceError> {
        let path = path.to_string();
        writeln!(out, "op,device,offset,size,time_us,pid,ctx").map_err(|e| TraceError::io(&path, &e))?;
        Ok(BlockCsvWriter { out, path, block_size, written: 0 })
    }

    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        let (offset, size) = if r.in_blocks {
            match (r.offset.checked_mul(self.block_size), r.size.checked_mul(self.block_size)) {
                (Some(o), Some(s)) if o.checked_add(s).is_some() => (o, s),
                _ => {
                    return Err(TraceError::malformed(
                        &self.path,
                        Location::File,
                        format!(
                            "cannot write block {}: at {} bytes per block its byte address is past 2^64, the most a CSV trace holds (a trace of named objects hashes each name to a 64-bit id); give a trace with numeric block or object ids",
                            r.offset, self.block_size
                        ),
                    ))
                }
            }
        } else {
            (r.offset, r.size)
        };
        let op = r.op.letter();
        // Times keep their nanoseconds as a microsecond fraction, so nothing is lost.
        let (us, ns) = (r.time_ns / 1000, r.time_ns % 1000);
        let res = if ns == 0 {
            writeln!(self.out, "{op},{},{offset},{size},{us},{},{}", r.file, r.pid, r.ctx)
        } else {
            writeln!(self.out, "{op},{},{offset},{size},{us}.{ns:03},{},{}", r.file, r.pid, r.ctx)
        };
        res.map_err(|e| TraceError::io(&self.path, &e))?;
        self.written += 1;
        Ok(())
    }

    /// Flushes and returns the output and the number of requests written.
    pub fn finish(mut self) -> Result<(W, u64), TraceError> {
        self.out.flush().map_err(|e| TraceError::io(&self.path, &e))?;
        Ok((self.out, self.written))
    }
}

/// libCacheSim's oracleGeneral binary (24-byte little-endian records `u32 time, u64 obj_id,
/// u32 obj_size, i64 next_access`), one record per block access. `next_access` is the 1-based
/// number of the record that next accesses the same object, -1 if none: the convention
/// libCacheSim's own trace converter writes and its Belady reads.
pub struct OracleWriter<W: Write> {
    out: W,
    path: String,
    written: u64,
}

impl<W: Write> OracleWriter<W> {
    pub fn new(out: W, path: &str) -> Self {
        OracleWriter { out, path: path.to_string(), written: 0 }
    }

    pub fn write(&mut self, time_s: u32, obj_id: u64, size: u32, next_access: i64) -> Result<(), TraceError> {
        let rec = crate::oracle::encode_record(time_s, obj_id, size, next_access);
        self.out.write_all(&rec).map_err(|e| TraceError::io(&self.path, &e))?;
        self.written += 1;
        Ok(())
    }

    /// Flushes and returns the writer's output and the number of records written.
    pub fn finish(mut self) -> Result<(W, u64), TraceError> {
        self.out.flush().map_err(|e| TraceError::io(&self.path, &e))?;
        Ok((self.out, self.written))
    }
}

/// libCacheSim's csv with a header (`time,obj_id,obj_size,op`), one line per block access;
/// `op` is `read` or `write`, time whole seconds (libCacheSim keeps integer seconds).
pub struct LcsCsvWriter<W: Write> {
    out: W,
    path: String,
    written: u64,
}

impl<W: Write> LcsCsvWriter<W> {
    pub fn new(mut out: W, path: &str) -> Result<Self, TraceError> {
        writeln!(out, "time,obj_id,obj_size,op").map_err(|e| TraceError::io(path, &e))?;
        Ok(LcsCsvWriter { out, path: path.to_string(), written: 0 })
    }

    pub fn write(&mut self, time_s: u64, obj_id: u64, size: u32, write: bool) -> Result<(), TraceError> {
        let op = if write { "write" } else { "read" };
        writeln!(self.out, "{time_s},{obj_id},{size},{op}").map_err(|e| TraceError::io(&self.path, &e))?;
        self.written += 1;
        Ok(())
    }

    /// Flushes and returns the writer's output and the number of records written.
    pub fn finish(mut self) -> Result<(W, u64), TraceError> {
        self.out.flush().map_err(|e| TraceError::io(&self.path, &e))?;
        Ok((self.out, self.written))
    }
}

//! libCacheSim's oracleGeneral binary: 24-byte little-endian records
//! `u32 time, u64 obj_id, u32 size, i64 next_access`.
//!
//! Each record is one access to one whole block, `obj_id` (the object size is not used:
//! bufsim caches fixed-size blocks, as libCacheSim does with object size 1). `time` is in
//! seconds. `next_access` is ignored; OPT computes its own from the trace.

use std::io::BufRead;

use crate::error::{Location, TraceError};
use crate::request::Request;

pub const RECORD: usize = 24;

pub struct OracleReader {
    inner: Box<dyn BufRead + Send>,
    path: String,
    /// Records are decoded straight out of this buffer, refilled in large reads.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Byte offset in the file of `buf[pos]`.
    offset: u64,
}

/// Larger than the read buffer under it (`input::READ_BUFFER`), so that reads into it bypass
/// that buffer instead of being copied through it; small for the same reason as that one.
const BUFFER: usize = RECORD * (1 << 12);

impl OracleReader {
    /// The byte offset after the last record read.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    pub(crate) fn new(inner: Box<dyn BufRead + Send>, path: &str) -> Self {
        OracleReader { inner, path: path.to_string(), buf: vec![0; BUFFER], pos: 0, end: 0, offset: 0 }
    }

    /// Moves the unread tail to the front and reads until the buffer is full or input ends.
    fn refill(&mut self) -> Result<(), TraceError> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < self.buf.len() {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => break,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&self.path, &e)),
            }
        }
        Ok(())
    }

    /// Decodes whole records into `out` until it holds `max` more or a record needs
    /// [`OracleReader::next_request`]'s care: the end of the input, a truncated record, an
    /// object id whose block range overflows. Returns how many it appended.
    pub(crate) fn decode_into(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        self.decode_records(out, max, block_access)
    }

    /// [`OracleReader::decode_into`] giving only each record's object id, the block it reads.
    pub(crate) fn decode_blocks(&mut self, out: &mut Vec<u64>, max: usize) -> Result<usize, TraceError> {
        self.decode_records(out, max, |_, obj| obj)
    }

    /// Appends `make(time, object id)` of each whole record to `out`, at most `max`, stopping
    /// where [`OracleReader::decode_into`] stops. Each buffer's worth is written into `out`'s
    /// spare room in one loop with no capacity check per record.
    #[inline(always)]
    fn decode_records<T>(
        &mut self,
        out: &mut Vec<T>,
        max: usize,
        make: impl Fn(u32, u64) -> T,
    ) -> Result<usize, TraceError> {
        let mut n = 0;
        while n < max {
            if self.end - self.pos < RECORD {
                self.refill()?;
                if self.end - self.pos < RECORD {
                    break;
                }
            }
            // Whole records in the buffer, at most what is still wanted.
            let take = ((self.end - self.pos) / RECORD).min(max - n);
            out.reserve(take);
            let records = self.buf[self.pos..self.pos + take * RECORD].chunks_exact(RECORD);
            let mut done = 0;
            for (slot, rec) in out.spare_capacity_mut()[..take].iter_mut().zip(records) {
                let obj = u64::from_le_bytes(rec[4..12].try_into().unwrap());
                if obj == u64::MAX {
                    break; // one past the last block: the reader's range check reports it
                }
                slot.write(make(u32::from_le_bytes(rec[0..4].try_into().unwrap()), obj));
                done += 1;
            }
            // SAFETY: the loop initialized the `done` elements after the old length.
            unsafe { out.set_len(out.len() + done) };
            self.pos += done * RECORD;
            self.offset += (done * RECORD) as u64;
            n += done;
            if done < take {
                break;
            }
        }
        Ok(n)
    }

    #[inline]
    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if self.end - self.pos < RECORD {
            self.refill()?;
            let got = self.end - self.pos;
            if got == 0 {
                return Ok(None);
            }
            if got < RECORD {
                // The partial record is consumed, so a reader that skips bad records ends here.
                self.pos = self.end;
                let at = self.offset;
                self.offset += got as u64;
                return Err(TraceError::malformed(
                    &self.path,
                    Location::Byte(at),
                    format!(
                        "truncated record: {got} of {RECORD} bytes; an oracleGeneral file is a whole number of 24-byte records"
                    ),
                ));
            }
        }
        let rec = &self.buf[self.pos..self.pos + RECORD];
        self.pos += RECORD;
        self.offset += RECORD as u64;
        let time = u32::from_le_bytes(rec[0..4].try_into().unwrap());
        let obj = u64::from_le_bytes(rec[4..12].try_into().unwrap());
        Ok(Some(block_access(time, obj)))
    }
}

/// One record's request: a read of block `obj` at `time` seconds.
#[inline]
fn block_access(time: u32, obj: u64) -> Request {
    Request { time_ns: time as u64 * 1_000_000_000, ..Request::read_blocks(0, obj, 1) }
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

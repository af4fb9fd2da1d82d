//! What the trace asks for: request and block-access counts, the read/write mix and the request
//! size distribution (power-of-two bins, rounded up as the MQ paper bins distances).

use rustc_hash::FxHashSet;
use serde::Serialize;

use bufsim_core::trace::Request;

use crate::temporal::bin;

pub struct RequestStats {
    block_size: u64,
    requests: u64,
    reads: u64,
    writes: u64,
    /// Drop requests (truncated or deleted files): not requests of data, counted apart.
    drops: u64,
    hints: u64,
    zero_length: u64,
    read_bytes: u64,
    write_bytes: u64,
    min_bytes: Option<u64>,
    max_bytes: u64,
    /// Requests by size bin (2^k bytes, rounded up; zero-length requests apart).
    size_bins: [u64; 65],
    files: FxHashSet<u32>,
    pids: FxHashSet<u32>,
    first_ns: Option<u64>,
    last_ns: u64,
    read_accesses: u64,
    write_accesses: u64,
}

impl RequestStats {
    pub fn new(block_size: u64) -> Self {
        RequestStats {
            block_size,
            requests: 0,
            reads: 0,
            writes: 0,
            drops: 0,
            hints: 0,
            zero_length: 0,
            read_bytes: 0,
            write_bytes: 0,
            min_bytes: None,
            max_bytes: 0,
            size_bins: [0; 65],
            files: FxHashSet::default(),
            pids: FxHashSet::default(),
            first_ns: None,
            last_ns: 0,
            read_accesses: 0,
            write_accesses: 0,
        }
    }

    /// Bytes a request asks for (block-addressed traces: whole blocks).
    fn bytes(&self, r: &Request) -> u64 {
        if r.in_blocks {
            r.size.saturating_mul(self.block_size)
        } else {
            r.size
        }
    }

    #[inline]
    pub fn request(&mut self, r: &Request) {
        let bytes = self.bytes(r);
        self.requests += 1;
        if r.op.is_write() {
            self.writes += 1;
            self.write_bytes = self.write_bytes.saturating_add(bytes);
        } else {
            self.reads += 1;
            self.read_bytes = self.read_bytes.saturating_add(bytes);
        }
        if bytes == 0 {
            self.zero_length += 1;
        } else {
            self.size_bins[bin(bytes)] += 1;
        }
        self.min_bytes = Some(self.min_bytes.map_or(bytes, |m| m.min(bytes)));
        self.max_bytes = self.max_bytes.max(bytes);
        self.files.insert(r.file);
        self.pids.insert(r.pid);
        self.first_ns.get_or_insert(r.time_ns);
        self.last_ns = r.time_ns;
    }

    /// Counts a drop request (not a request: it reads and writes nothing).
    #[inline]
    pub fn drop_request(&mut self) {
        self.drops += 1;
    }

    /// Counts a hint request (not a request: the program reads nothing yet).
    #[inline]
    pub fn hint_request(&mut self) {
        self.hints += 1;
    }

    #[inline]
    pub fn access(&mut self, write: bool) {
        if write {
            self.write_accesses += 1;
        } else {
            self.read_accesses += 1;
        }
    }

    pub fn report(&self) -> (RequestReport, AccessReport) {
        let total = self.read_bytes.saturating_add(self.write_bytes);
        let size_histogram = self
            .size_bins
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(k, &n)| SizeBin { bytes: 1u64.checked_shl(k as u32).unwrap_or(u64::MAX), requests: n })
            .collect();
        let requests = RequestReport {
            total: self.requests,
            reads: self.reads,
            writes: self.writes,
            drops: self.drops,
            hints: self.hints,
            write_share: share(self.writes, self.requests),
            zero_length: self.zero_length,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            files: self.files.len() as u64,
            pids: self.pids.len() as u64,
            duration_s: self.first_ns.map_or(0.0, |f| self.last_ns.saturating_sub(f) as f64 / 1e9),
            size: SizeReport {
                min_bytes: self.min_bytes.unwrap_or(0),
                mean_bytes: if self.requests == 0 { 0.0 } else { total as f64 / self.requests as f64 },
                max_bytes: self.max_bytes,
                histogram: size_histogram,
            },
        };
        let all = self.read_accesses + self.write_accesses;
        let accesses = AccessReport {
            total: all,
            reads: self.read_accesses,
            writes: self.write_accesses,
            write_share: share(self.write_accesses, all),
        };
        (requests, accesses)
    }
}

fn share(part: u64, all: u64) -> f64 {
    if all == 0 {
        0.0
    } else {
        part as f64 / all as f64
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeBin {
    /// Upper end of the bin: sizes in (bytes / 2, bytes].
    pub bytes: u64,
    pub requests: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeReport {
    pub min_bytes: u64,
    pub mean_bytes: f64,
    pub max_bytes: u64,
    /// Non-empty power-of-two bins; zero-length requests are counted apart.
    pub histogram: Vec<SizeBin>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestReport {
    pub total: u64,
    pub reads: u64,
    pub writes: u64,
    /// Drop requests (truncated or deleted files), not counted in `total`.
    pub drops: u64,
    /// Hint requests (fadvise(WILLNEED), readahead(2)), not counted in `total`.
    pub hints: u64,
    pub write_share: f64,
    pub zero_length: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Distinct files (file traces) or devices (block traces).
    pub files: u64,
    /// Distinct process ids.
    pub pids: u64,
    /// From the first request's time to the last one's (0 without times).
    pub duration_s: f64,
    pub size: SizeReport,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AccessReport {
    /// Block accesses (the references every other analysis counts).
    pub total: u64,
    pub reads: u64,
    pub writes: u64,
    pub write_share: f64,
}

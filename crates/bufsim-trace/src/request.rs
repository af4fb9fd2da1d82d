//! What an application asked for: one read or write of a byte range of a file or device, the
//! end of a range's data (a file truncated, deleted or punched), or a hint that a range will be
//! read soon.

/// Read, write, drop, or hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// The range's data is gone: size 0 says the file was truncated at `offset` (deleted: offset
    /// 0) and ends there until written again; a size above 0 drops that range (a punched hole,
    /// fadvise(DONTNEED)) and leaves the file's size alone. Its cached blocks leave the
    /// cache without being written back, as Linux's truncate_inode_pages_range drops whole pages
    /// (mm/truncate.c; a partial page at either end stays, its tail zeroed). Not an access: it
    /// counts neither as a request nor as a hit or miss.
    Drop,
    /// The program asked for the range to be read ahead: posix_fadvise(WILLNEED) or
    /// readahead(2), which Linux carries out with force_page_cache_ra (mm/readahead.c: the blocks
    /// not cached are read at once, none is marked accessed). Size 0 runs to the end of the file.
    /// Not an access: it counts neither as a request nor as a hit or miss; the blocks it brings
    /// in count as read ahead.
    Hint,
}

impl Op {
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, Op::Write)
    }

    #[inline]
    pub fn is_drop(self) -> bool {
        matches!(self, Op::Drop)
    }

    #[inline]
    pub fn is_hint(self) -> bool {
        matches!(self, Op::Hint)
    }

    /// A read or a write: what a cache counts, hits or misses (drops and hints are not).
    #[inline]
    pub fn is_access(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }

    /// The letter the interchange CSV writes for it.
    pub fn letter(self) -> char {
        match self {
            Op::Read => 'R',
            Op::Write => 'W',
            Op::Drop => 'D',
            Op::Hint => 'H',
        }
    }
}

/// How a trace names the data it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressKind {
    /// `file` is a device number and addresses are device addresses (block traces).
    /// The layout is the identity.
    Device,
    /// `file` is a file id interned by the reader; device addresses come from a layout
    /// (first-touch sequential, as AccuSim places files).
    File,
}

/// One request of a trace.
///
/// Times are integer nanoseconds so that event ordering is exact and reproducible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Issue time, ns since the trace's own origin (0 when the trace has no times).
    pub time_ns: u64,
    /// How long the request took when traced (the system call's duration), ns; 0 if unknown.
    pub dur_ns: u64,
    /// Process or stream id.
    pub pid: u32,
    /// Program context (AMP): an id of the call site that issued the request; 0 if unknown.
    pub ctx: u64,
    pub op: Op,
    /// Interned file id (file traces) or device number (block traces).
    pub file: u32,
    /// Start of the range. Bytes, unless `in_blocks` is set.
    pub offset: u64,
    /// Length of the range. Bytes, unless `in_blocks` is set.
    pub size: u64,
    /// The trace names whole blocks (libCacheSim's oracleGeneral object ids), so `offset` is a
    /// block number and `size` a block count, whatever the block size.
    pub in_blocks: bool,
    /// Bytes a read asked for beyond `size`: the end of the file cut it short (saturated at
    /// u32::MAX). 0 when the read got all it asked for, or the trace does not say. Linux sizes a
    /// file's read-ahead window from what a read asked for (mm/filemap.c, filemap_get_pages),
    /// not from what came back.
    pub unfilled: u32,
    /// The first read through an open file description: the file was opened since this
    /// process last read it, and Linux starts the new open's read-ahead state afresh
    /// (file_ra_state_init). False when the trace does not say (only the kernel and strace
    /// tracers' CSV does). Kept in the struct's padding: requests stay 56 bytes.
    pub opened: bool,
}

impl Request {
    /// An untimed read of `size` bytes at byte `offset` of file (or device) `file`, the
    /// request generators and hand-made test traces build.
    #[inline]
    pub fn read(file: u32, offset: u64, size: u64) -> Self {
        Request {
            time_ns: 0,
            dur_ns: 0,
            pid: 0,
            ctx: 0,
            op: Op::Read,
            file,
            offset,
            size,
            in_blocks: false,
            unfilled: 0,
            opened: false,
        }
    }

    /// An untimed read of `count` whole blocks from block `first` of file `file`, as the
    /// block-addressed traces give them.
    #[inline]
    pub fn read_blocks(file: u32, first: u64, count: u64) -> Self {
        Request { offset: first, size: count, in_blocks: true, ..Request::read(file, 0, 0) }
    }

    /// The blocks `[first, first + count)` the request touches for a given block size.
    /// A zero-length byte request touches no block.
    #[inline]
    pub fn block_range(&self, block_size: u64) -> (u64, u64) {
        if self.in_blocks {
            return (self.offset, self.size);
        }
        if self.size == 0 {
            return (self.offset / block_size, 0);
        }
        let first = self.offset / block_size;
        // `offset + size - 1` cannot overflow: readers reject ranges that end past u64::MAX.
        let last = (self.offset + (self.size - 1)) / block_size;
        (first, last - first + 1)
    }

    /// The whole blocks `[first, end)` a drop request removes, for a file (or device) of
    /// `file_blocks` blocks: those entirely inside its byte range, and for a size of 0 every
    /// block from the first whole one at `offset` to the end of the file. A block the range
    /// covers only in part keeps its data and stays cached.
    #[inline]
    pub fn dropped_blocks(&self, block_size: u64, file_blocks: u64) -> (u64, u64) {
        let (first, end) = if self.in_blocks {
            (self.offset, if self.size == 0 { file_blocks } else { self.offset.saturating_add(self.size) })
        } else {
            let first = self.offset.div_ceil(block_size);
            (first, if self.size == 0 { file_blocks } else { (self.offset + self.size) / block_size })
        };
        let end = end.min(file_blocks);
        (first.min(end), end)
    }

    /// The blocks `[first, end)` a hint request asks to be read, for a file (or device) of
    /// `file_blocks` blocks: every block its byte range touches (fadvise rounds a partial block
    /// at either end outwards), and for a size of 0 every block from `offset` to the end of
    /// the file.
    #[inline]
    pub fn hinted_blocks(&self, block_size: u64, file_blocks: u64) -> (u64, u64) {
        let (first, end) = if self.size == 0 {
            (if self.in_blocks { self.offset } else { self.offset / block_size }, file_blocks)
        } else {
            let (first, n) = self.block_range(block_size);
            (first, first.saturating_add(n))
        };
        let end = end.min(file_blocks);
        (first.min(end), end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(offset: u64, size: u64) -> Request {
        Request::read(0, offset, size)
    }

    #[test]
    fn hints_take_every_block_they_touch_and_a_zero_size_runs_to_the_end() {
        let hint = |offset, size| Request { op: Op::Hint, ..req(offset, size) };
        // PostgreSQL's hint of one 8 KiB page: two blocks; a range with partial blocks at both ends.
        assert_eq!(hint(8192, 8192).hinted_blocks(4096, 10), (2, 4));
        assert_eq!(hint(1000, 4000).hinted_blocks(4096, 10), (0, 2));
        assert_eq!(hint(5000, 0).hinted_blocks(4096, 10), (1, 10));
        // Past the end of the file: nothing; a range across it stops there.
        assert_eq!(hint(1 << 40, 4096).hinted_blocks(4096, 10), (10, 10));
        assert_eq!(hint(32768, 1 << 20).hinted_blocks(4096, 10), (8, 10));
        let mut b = hint(3, 2);
        b.in_blocks = true;
        assert_eq!(b.hinted_blocks(4096, 10), (3, 5));
        assert!(!Op::Hint.is_access() && !Op::Drop.is_access() && Op::Read.is_access() && Op::Write.is_access());
    }

    #[test]
    fn block_ranges_cover_partial_blocks() {
        assert_eq!(req(0, 4096).block_range(4096), (0, 1));
        assert_eq!(req(0, 4097).block_range(4096), (0, 2));
        assert_eq!(req(4095, 2).block_range(4096), (0, 2));
        assert_eq!(req(8192, 512).block_range(4096), (2, 1));
        assert_eq!(req(8192, 0).block_range(4096).1, 0);
    }

    #[test]
    fn drops_take_whole_blocks_and_a_zero_size_runs_to_the_end() {
        let drop = |offset, size| Request { op: Op::Drop, ..req(offset, size) };
        // Truncation to 5000 bytes keeps block 1 (bytes 4096-8191 hold 904 of them).
        assert_eq!(drop(5000, 0).dropped_blocks(4096, 10), (2, 10));
        assert_eq!(drop(0, 0).dropped_blocks(4096, 10), (0, 10));
        assert_eq!(drop(8192, 0).dropped_blocks(4096, 10), (2, 10));
        // A hole from 1000 to 13288 covers blocks 1 and 2 whole; blocks 0 and 3 in part.
        assert_eq!(drop(1000, 12288).dropped_blocks(4096, 10), (1, 3));
        // A hole inside one block drops nothing; a range past the end stops at it.
        assert_eq!(drop(100, 200).dropped_blocks(4096, 10), (0, 0));
        assert_eq!(drop(4096, 1 << 40).dropped_blocks(4096, 10), (1, 10));
        assert_eq!(drop(1 << 40, 0).dropped_blocks(4096, 10), (10, 10));
        let mut b = drop(3, 2);
        b.in_blocks = true;
        assert_eq!(b.dropped_blocks(4096, 10), (3, 5));
    }

    #[test]
    fn block_addressed_requests_ignore_block_size() {
        let mut r = req(123_456_789_012, 1);
        r.in_blocks = true;
        assert_eq!(r.block_range(4096), (123_456_789_012, 1));
    }
}

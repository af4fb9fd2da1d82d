//! Linux 6.x on-demand read-ahead, following mm/readahead.c and the read path of mm/filemap.c
//! as of Linux 6.18 (page_cache_sync_ra, page_cache_async_ra, page_cache_ra_order,
//! page_cache_ra_unbounded, get_init_ra_size, get_next_ra_size). Facts from the kernel sources;
//! sizes in pages (blocks).
//! Deviations: mmap read-around (faults are not trace requests), FMODE_RANDOM and the device's
//! io_pages (`req > max`, and a hint's bound below) are left out; folios are tracked only where they decide the
//! read-ahead marker, not for eviction; the window state belongs to a file and a process, where
//! the kernel's belongs to an open file description (the trace names no opens: two opens of a
//! file in one process share a state here, and a descriptor shared across fork has two); a
//! page that left the cache and comes back through a write keeps the mark its earlier copy had
//! until a read-ahead window covers it or the marks are pruned (writes do not reach read-ahead).
//!
//! State per file and process (`struct file_ra_state`, which lives in the open file): `start`,
//! `size`, `async_size`, `order`, and `prev_index`, the page holding the byte after the previous
//! read request (prev_pos). The PG_readahead marks live in the pages: per file, seen by every
//! reader (a process that finds another's mark starts from the hole after it, below).
//! - A demand miss at `index` with `req` pages left in the request (page_cache_sync_ra):
//!   - at page 0, or `index - prev_index` is 0 or 1 (sequential or unaligned): a new window
//!     `start = index`, `size = get_init_ra_size(req)`, `async_size = size - req` (or `size / 2`
//!     when the window is no larger than the request);
//!   - otherwise the page cache is asked how many pages before `index` are cached
//!     (page_cache_prev_miss, at most `max` pages back): if no more than `req`, it is a random
//!     read: the request alone is read, the state untouched; else (context read-ahead, e.g.
//!     interleaved streams) `size = min(contig + req, max)` (contig doubled when the file is
//!     cached from page 0) and `async_size = 1`.
//! - A read reaching a page marked PG_readahead (page_cache_async_ra; the mark is cleared):
//!   if it is the folio at `start + size - async_size`, the window moves past itself and ramps
//!   up (get_next_ra_size); otherwise the state is rebuilt from the next hole after it
//!   (page_cache_next_miss). Either way `order += 2` and the window's end is rounded down to
//!   `1 << min(order, log2 max)` pages; all of it is asynchronous.
//! - The new window's pages that are not cached are read; the page (the folio, with large
//!   folios) at `start + size - async_size` gets PG_readahead if this read inserts it.
//!
//! - A hint (fadvise(WILLNEED), readahead(2): force_page_cache_ra) reads at most the file's
//!   `max` pages from its first page, in chunks of 2 MiB (512 pages), each logged as
//!   page_cache_ra_unbounded receives it (no lookahead: no mark); no window state changes.
//!
//! With large folios (`folios=1`, ext4 and XFS on 6.x) page_cache_ra_order allocates the window
//! in folios of order `min(order, log2 size)`, aligned, shrunk at the window's end; a page
//! already cached ends the folio walk and the rest is read page by page. The marker lands on the
//! folio containing the mark page, and a later read of any page of that folio triggers the
//! asynchronous read-ahead with the folio's first page as `index`.

use std::collections::BTreeMap;

use super::{state, BlockEvent, Plan, ReadAhead};

/// The largest page-cache folio order (MAX_PAGECACHE_ORDER on x86-64: a PMD).
const MAX_FOLIO_ORDER: u32 = 9;
/// Pages of one chunk of a hint's read (force_page_cache_ra: 2 MiB of 4 KiB pages).
const HINT_CHUNK_PAGES: u64 = 512;
/// Marked folios a file may hold before the ones whose page has left the cache are pruned (the
/// kernel's marks live in the pages and go with them; here they are kept apart and checked
/// against the cache when they pile up, so their number stays within twice the marked pages
/// still cached).
const PRUNE_MARKERS_ABOVE: usize = 64;

/// A read-ahead decision as page_cache_ra_order (or page_cache_ra_unbounded for a random read)
/// receives it: what the kernel's tracepoints show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub file: u32,
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
}

/// One reader's `file_ra_state`.
#[derive(Clone, Debug, Default)]
struct Window {
    start: u64,
    size: u64,
    async_size: u64,
    order: u32,
    /// prev_pos >> PAGE_SHIFT of the previous request; `None` before the first (prev_pos = -1).
    prev_index: Option<u64>,
    /// The current request: its first page and the page holding its end byte.
    cur_first: u64,
    cur_end: Option<u64>,
}

#[derive(Clone, Debug, Default)]
struct State {
    /// PG_readahead folios: first page -> pages. Every mark stays until its page is read, leaves
    /// the cache or is inserted afresh: a random reader that lands on a mark left long ago by a
    /// context read-ahead starts an asynchronous window there, as in the kernel.
    markers: BTreeMap<u64, u64>,
    /// Markers held after the last pruning; the next one comes at twice as many.
    prune_at: usize,
    /// Each reading process's window, by pid, in order of first read.
    windows: Vec<(u32, Window)>,
}

impl State {
    fn window(&mut self, pid: u32) -> &mut Window {
        let i = match self.windows.iter().position(|(p, _)| *p == pid) {
            Some(i) => i,
            None => {
                self.windows.push((pid, Window::default()));
                self.windows.len() - 1
            }
        };
        &mut self.windows[i].1
    }
}

pub struct Linux6 {
    max: u64,
    /// Per-file maxima where a file's differs (0: `max`): fadvise(SEQUENTIAL) doubles a file's
    /// ra_pages, as `cat` asks.
    file_max: Vec<u64>,
    folios: bool,
    files: Vec<State>,
    log: Option<Vec<Decision>>,
}

impl Linux6 {
    pub fn new(max: u64, folios: bool) -> Self {
        Linux6 { max, file_max: Vec::new(), folios, files: Vec::new(), log: None }
    }

    /// Keeps every decision, for comparing with the kernel's tracepoints (`bufsim validate`).
    pub fn with_log(mut self) -> Self {
        self.log = Some(Vec::new());
        self
    }

    /// Gives files their own largest window (indexed by file id; 0 keeps `max`).
    pub fn with_file_max(mut self, file_max: Vec<u64>) -> Self {
        self.file_max = file_max;
        self
    }

    fn max_of(&self, file: u32) -> u64 {
        match self.file_max.get(file as usize) {
            Some(&m) if m > 0 => m,
            _ => self.max,
        }
    }

    pub fn decisions(&self) -> &[Decision] {
        self.log.as_deref().unwrap_or(&[])
    }

    /// get_init_ra_size: the request rounded up to a power of two, x4 if at most max/32, x2 if
    /// at most max/4, else max.
    pub fn init_size(req: u64, max: u64) -> u64 {
        let n = req.max(1).next_power_of_two();
        if n <= max / 32 {
            n * 4
        } else if n <= max / 4 {
            n * 2
        } else {
            max
        }
    }

    /// get_next_ra_size: x4 below max/16, x2 up to max/2, else max.
    pub fn next_size(cur: u64, max: u64) -> u64 {
        if cur < max / 16 {
            4 * cur
        } else if cur <= max / 2 {
            2 * cur
        } else {
            max
        }
    }

    fn record(&mut self, d: Decision) {
        if let Some(log) = &mut self.log {
            log.push(d);
        }
    }

    /// Where page_cache_ra_order puts PG_readahead for the window from `start` (its pages up to
    /// `limit` exist): the folio containing `mark`, as (first page, pages); `None` if that page
    /// is already cached or past the end.
    fn marker_folio(
        &self,
        start: u64,
        mark: u64,
        order: u32,
        limit: u64,
        cached: &dyn Fn(u64) -> bool,
    ) -> Option<(u64, u64)> {
        let page_by_page = |from: u64| (mark >= from && mark <= limit && !cached(mark)).then_some((mark, 1));
        if !self.folios {
            return page_by_page(start);
        }
        let mut idx = start;
        while idx <= limit {
            let mut o = order;
            if idx & ((1u64 << o) - 1) != 0 {
                o = idx.trailing_zeros();
            }
            while o > 0 && idx + (1u64 << o) - 1 > limit {
                o -= 1;
            }
            let n = 1u64 << o;
            // filemap_add_folio fails on a cached page: the rest goes page by page.
            if (idx..idx + n).any(cached) {
                return page_by_page(idx);
            }
            if (idx..idx + n).contains(&mark) {
                return Some((idx, n));
            }
            idx += n;
        }
        None
    }

    /// Reads the window of `ev`'s reader (the `readit:` step): logs it, places the marker, and
    /// returns the plan for the pages after `demanded`.
    fn readit(&mut self, ev: &BlockEvent, demanded: u64, sync: bool, cached: &dyn Fn(u64) -> bool) -> Option<Plan> {
        let (file, eof) = (ev.file, ev.file_blocks);
        let w = self.files[file as usize].window(ev.pid);
        let (start, size, async_size, order) = (w.start, w.size, w.async_size, w.order);
        self.record(Decision { file, start, size, async_size });
        if eof == 0 || start >= eof {
            return None;
        }
        let limit = (eof - 1).min(start + size - 1);
        let order = if self.folios { order.min(MAX_FOLIO_ORDER).min(63 - size.max(1).leading_zeros()) } else { 0 };
        let mark = start + size - async_size;
        let marker = if async_size > 0 { self.marker_folio(start, mark, order, limit, cached) } else { None };
        let s = &mut self.files[file as usize];
        s.window(ev.pid).order = order;
        // The window's pages not cached are inserted afresh, without the marks their earlier
        // copies had.
        let mut at = start.saturating_sub((1 << MAX_FOLIO_ORDER) - 1);
        while at <= limit {
            let Some((&f, &n)) = s.markers.range(at..=limit).next() else { break };
            at = f + 1;
            if f + n > start && !cached(f) {
                s.markers.remove(&f);
            }
        }
        if let Some((f, n)) = marker {
            s.markers.insert(f, n);
            if s.markers.len() > s.prune_at.max(PRUNE_MARKERS_ABOVE) {
                s.markers.retain(|&f, _| cached(f));
                s.prune_at = 2 * s.markers.len();
            }
        }
        let from = start.max(demanded + 1);
        Plan::clipped(from, (start + size).saturating_sub(from), eof, sync)
    }

    /// force_page_cache_ra for a hint of `n` pages from `first` (inside the file): reads at most
    /// the file's `max` pages (max(io_pages, ra_pages) with io_pages left out), in 2 MiB
    /// chunks, each a page_cache_ra_unbounded without lookahead. Pages it inserts lose the marks
    /// their earlier copies had. Returns how many pages to read.
    pub fn on_hint(&mut self, file: u32, first: u64, n: u64, cached: &dyn Fn(u64) -> bool) -> u64 {
        let n = n.min(self.max_of(file));
        let mut at = first;
        while at < first + n {
            let chunk = (first + n - at).min(HINT_CHUNK_PAGES);
            self.record(Decision { file, start: at, size: chunk, async_size: 0 });
            at += chunk;
        }
        if n > 0 {
            let s = state(&mut self.files, file);
            let mut at = first.saturating_sub((1 << MAX_FOLIO_ORDER) - 1);
            while let Some((&f, &pages)) = s.markers.range(at..first + n).next() {
                at = f + 1;
                if f + pages > first && !cached(f) {
                    s.markers.remove(&f);
                }
            }
        }
        n
    }

    /// page_cache_sync_ra at `index` (a miss) with `req` pages left in the request.
    fn sync_ra(&mut self, ev: &BlockEvent, req: u64, cached: &dyn Fn(u64) -> bool) -> Option<Plan> {
        let max = self.max_of(ev.file);
        let index = ev.block;
        let s = state(&mut self.files, ev.file).window(ev.pid);
        let sequential = s.prev_index.is_some_and(|p| index >= p && index - p <= 1);
        if index == 0 || req > max || sequential {
            s.start = index;
            s.size = Self::init_size(req, max);
            s.async_size = if s.size > req { s.size - req } else { s.size >> 1 };
            s.order = 0;
            return self.readit(ev, index, true, cached);
        }
        // page_cache_prev_miss(index - 1, max): the demanded page itself was just inserted.
        let mut miss = None;
        for back in 1..=max {
            let Some(j) = index.checked_sub(back) else { break };
            if !cached(j) {
                miss = Some(j);
                break;
            }
            if back == max {
                miss = Some(j - 1);
            }
        }
        let mut contig = match miss {
            Some(m) => index - m - 1,
            None => index,
        };
        if contig <= req {
            // A standalone random read: the request as is, no read-ahead state.
            let n = req.min(ev.file_blocks.saturating_sub(index));
            self.record(Decision { file: ev.file, start: index, size: n, async_size: 0 });
            return Plan::clipped(index + 1, n.saturating_sub(1), ev.file_blocks, true);
        }
        if miss.is_none() {
            // Cached from the start of the file: a long stream.
            contig *= 2;
        }
        let s = state(&mut self.files, ev.file).window(ev.pid);
        s.start = index;
        s.size = (contig + req).min(max);
        s.async_size = 1;
        s.order = 0;
        self.readit(ev, index, true, cached)
    }

    /// page_cache_async_ra for the marked folio `(first, pages)`, `req` pages left from `first`.
    fn async_ra(&mut self, ev: &BlockEvent, folio: (u64, u64), req: u64, cached: &dyn Fn(u64) -> bool) -> Option<Plan> {
        let max = self.max_of(ev.file);
        let index = folio.0;
        let s = state(&mut self.files, ev.file).window(ev.pid);
        let expected = (s.start + s.size - s.async_size) / folio.1 * folio.1;
        if s.size > 0 && index == expected {
            s.start += s.size;
            s.size = s.size.max(Self::next_size(s.size, max));
        } else {
            // A marked folio without a matching state (interleaved reads): the hole after it
            // tells how far the previous window went.
            let mut start = index + 1 + max;
            for j in index + 1..index + 1 + max {
                if !cached(j) {
                    start = j;
                    break;
                }
            }
            if start == 0 || start - index > max {
                return None;
            }
            s.start = start;
            s.size = Self::next_size(start - index + req, max);
        }
        s.order += 2;
        let align = 1u64 << s.order.min(max.trailing_zeros());
        let end = s.start + s.size;
        let aligned_end = end / align * align;
        if aligned_end > s.start {
            s.size -= end - aligned_end;
        }
        s.async_size = s.size;
        self.readit(ev, ev.block, false, cached)
    }
}

impl ReadAhead for Linux6 {
    fn on_access(&mut self, ev: &BlockEvent) -> Option<Plan> {
        // Without a view of the cache every neighbour looks absent: no context read-ahead.
        self.on_access_cached(ev, &|_| false)
    }

    fn on_access_cached(&mut self, ev: &BlockEvent, cached: &dyn Fn(u64) -> bool) -> Option<Plan> {
        let b = ev.block;
        let s = state(&mut self.files, ev.file).window(ev.pid);
        if ev.opened {
            // A new open file: file_ra_state_init (no window, prev_pos -1).
            *s = Window::default();
        }
        // prev_pos moves when a read request ends: a new request takes the previous one's end.
        if b == ev.request_first && (ev.request_first != s.cur_first || s.cur_end != Some(ev.request_end)) {
            s.prev_index = s.cur_end;
            s.cur_first = ev.request_first;
            s.cur_end = Some(ev.request_end);
        } else if b == ev.request_first {
            // The same range read again: a new request all the same.
            s.prev_index = s.cur_end;
        }
        // What the read asked for, not what came back: a short read at the end of a file still
        // sizes the window from its count (filemap_get_pages' last_index).
        let last = ev.request_first + ev.request_asked_blocks;
        let s = &mut self.files[ev.file as usize];
        if ev.miss {
            // A freshly inserted page carries no mark.
            if let Some((f, _)) = marked_folio(&s.markers, b) {
                s.markers.remove(&f);
            }
            return self.sync_ra(ev, last.saturating_sub(b).max(1), &|j| j != b && cached(j));
        }
        let folio = marked_folio(&s.markers, b)?;
        s.markers.remove(&folio.0);
        self.async_ra(ev, folio, last.saturating_sub(folio.0).max(1), cached)
    }
}

/// The marked folio holding page `b`, if any.
fn marked_folio(markers: &BTreeMap<u64, u64>, b: u64) -> Option<(u64, u64)> {
    let (&f, &n) = markers.range(..=b).next_back()?;
    (b < f + n).then_some((f, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block `block` of a read of `n` pages from `first` of a file of `file_blocks` pages by
    /// process 0, found or not.
    fn event(file_blocks: u64, block: u64, first: u64, n: u64, miss: bool) -> BlockEvent {
        BlockEvent {
            file: 0,
            pid: 0,
            opened: false,
            block,
            file_blocks,
            miss,
            in_flight: false,
            by_prefetch: false,
            request_first: first,
            request_blocks: n,
            request_asked_blocks: n,
            request_end: first + n,
            request_bytes: n * 4096,
            block_size: 4096,
        }
    }

    /// A read of `n` pages from `first` of a 100000-page file, as block events.
    fn read(ra: &mut Linux6, cache: &mut [bool], first: u64, n: u64) -> Vec<Plan> {
        let mut plans = Vec::new();
        for b in first..first + n {
            let miss = !cache[b as usize];
            cache[b as usize] = true;
            let ev = event(100_000, b, first, n, miss);
            let snapshot = cache.to_vec();
            if let Some(p) = ra.on_access_cached(&ev, &|j| snapshot.get(j as usize).copied().unwrap_or(false)) {
                for x in p.start..p.start + p.len {
                    cache[x as usize] = true;
                }
                plans.push(p);
            }
        }
        plans
    }

    #[test]
    fn a_short_read_sizes_the_window_from_what_it_asked() {
        // `cat` of a 5000-byte file: one read of 128 KiB comes back with 2 pages. The kernel's
        // window comes from the 32 pages asked (filemap_get_pages): 0..128, async 96, as this
        // machine's tracepoints show for every small file cat reads (max 4096 pages with
        // fadvise(SEQUENTIAL)); from the 2 pages read it would be 0..4, async 3.
        let mut ra = Linux6::new(4096, true).with_log();
        let ev = |asked| BlockEvent {
            request_asked_blocks: asked,
            request_end: 1,
            request_bytes: 5000,
            ..event(2, 0, 0, 2, true)
        };
        let p = ra.on_access_cached(&ev(32), &|_| false).unwrap();
        assert_eq!(last(&ra), (0, 128, 96));
        // Only the file's second page is left to read: the window stops at the end of the file.
        assert_eq!((p.start, p.len), (1, 1));
        let mut ra = Linux6::new(4096, true).with_log();
        ra.on_access_cached(&ev(2), &|_| false);
        assert_eq!(last(&ra), (0, 8, 6));
    }

    #[test]
    fn another_process_that_finds_the_mark_starts_from_the_hole_after_it() {
        // A 4-page source file: one process reads 2 pages (window 0..8, async 6: the mark on
        // page 2, pages 0-3 exist). A second process reads the whole file: its fresh state does
        // not expect the mark, so the window starts at the hole after it (page 4): size
        // next(2 + 2) = 16, what this machine's tracepoints show for glimpse reading a file its
        // indexer read before, and what the indexer itself gets when it opens the file again.
        // The same process reading on through the same open moves its window: 8..40.
        let ev = |pid, opened, block, first, n, miss| BlockEvent { pid, opened, ..event(4, block, first, n, miss) };
        let cached = |j: u64| j < 4;
        for (pid, opened, want) in [(2, false, (4, 16, 16)), (1, true, (4, 16, 16)), (1, false, (8, 32, 32))] {
            let mut ra = Linux6::new(2048, false).with_log();
            ra.on_access_cached(&ev(1, true, 0, 0, 2, true), &|j| j == 1);
            assert_eq!(last(&ra), (0, 8, 6));
            for b in 0..4 {
                ra.on_access_cached(&ev(pid, opened && b == 0, b, 0, 4, false), &cached);
            }
            assert_eq!(last(&ra), want, "pid {pid}, opened {opened}");
        }
    }

    /// Twenty context read-aheads far apart: window (100k, 4, 1) for k = 1..=20, each marking
    /// its last page. Returns the cache after them.
    fn twenty_marked_windows(ra: &mut Linux6) -> Vec<bool> {
        let mut cache = vec![false; 3000];
        for k in 1..=20 {
            let at = 100 * k;
            for c in &mut cache[at - 3..at] {
                *c = true;
            }
            read(ra, &mut cache, at as u64, 1);
            assert_eq!(last(ra), (at as u64, 4, 1));
        }
        cache
    }

    #[test]
    fn a_mark_stays_while_its_page_is_cached() {
        // A random reader lands on the mark the first window left on page 103, nineteen windows
        // later: the kernel's mark is in the page, so the read starts an asynchronous window
        // from the hole after it (104, sized from 104 - 103 + 1 = 2 -> 4, all asynchronous).
        let mut ra = Linux6::new(32, false).with_log();
        let mut cache = twenty_marked_windows(&mut ra);
        read(&mut ra, &mut cache, 103, 1);
        assert_eq!(last(&ra), (104, 4, 4));
    }

    #[test]
    fn a_page_read_again_into_the_cache_comes_without_its_mark() {
        // Pages 102 and 103 leave the cache and come back in another window: no mark on 103,
        // so reading it starts nothing.
        let mut ra = Linux6::new(32, false).with_log();
        let mut cache = twenty_marked_windows(&mut ra);
        cache[102] = false;
        cache[103] = false;
        // A miss at 102 with 97..=101 cached: context window 102..108, its mark on 107.
        read(&mut ra, &mut cache, 102, 1);
        assert_eq!(last(&ra), (102, 6, 1));
        let decisions = ra.decisions().len();
        read(&mut ra, &mut cache, 103, 1);
        assert_eq!(ra.decisions().len(), decisions);
    }

    fn last(ra: &Linux6) -> (u64, u64, u64) {
        let d = ra.decisions().last().unwrap();
        (d.start, d.size, d.async_size)
    }

    #[test]
    fn window_sizes_follow_the_kernel() {
        // max 32 pages (128 KiB): 1-2 -> 4 (16k), 3-4 -> 8, 5-8 -> 16, more -> 32.
        let got: Vec<u64> = [1, 2, 3, 4, 5, 8, 9, 32].iter().map(|&r| Linux6::init_size(r, 32)).collect();
        assert_eq!(got, vec![4, 4, 8, 8, 16, 16, 32, 32]);
        // 8 MiB (2048 pages): one page -> 4, 16 pages (<= 2048/32) -> 64.
        assert_eq!(Linux6::init_size(1, 2048), 4);
        assert_eq!(Linux6::init_size(16, 2048), 64);
        // x4 below max/16, x2 up to max/2, then max.
        assert_eq!(Linux6::next_size(1, 32), 4);
        assert_eq!(Linux6::next_size(4, 32), 8);
        assert_eq!(Linux6::next_size(16, 32), 32);
        assert_eq!(Linux6::next_size(20, 32), 32);
    }

    #[test]
    fn sequential_one_page_reads_ramp_up_with_folio_alignment() {
        let mut ra = Linux6::new(32, true).with_log();
        let mut cache = vec![false; 1000];
        // Page 0: window 0..4, async 3, marker on page 1.
        read(&mut ra, &mut cache, 0, 1);
        assert_eq!(last(&ra), (0, 4, 3));
        // Page 1 carries the marker: the window moves to 4 and doubles (4 >= 32/16): 4..12,
        // order 2 aligns its end to 4 pages (12 already is).
        read(&mut ra, &mut cache, 1, 1);
        assert_eq!(last(&ra), (4, 8, 8));
        // Its marker is on page 4 (the whole window is asynchronous); pages 2, 3 do nothing.
        read(&mut ra, &mut cache, 2, 1);
        read(&mut ra, &mut cache, 3, 1);
        assert_eq!(ra.decisions().len(), 2);
        read(&mut ra, &mut cache, 4, 1);
        // 12..28, order 4: end 28 rounds down to 16 pages: 12..16 is kept only if 16 > 12.
        assert_eq!(last(&ra), (12, 4, 4));
    }

    #[test]
    fn random_reads_read_only_the_request() {
        let mut ra = Linux6::new(32, false).with_log();
        let mut cache = vec![false; 1000];
        read(&mut ra, &mut cache, 0, 1);
        // Page 500 after page 0: not sequential, nothing cached before it: 2 pages as asked.
        let plans = read(&mut ra, &mut cache, 500, 2);
        assert_eq!(last(&ra), (500, 2, 0));
        assert_eq!((plans[0].start, plans[0].len), (501, 1));
        // The next request right after it is sequential again: a new window of 4.
        read(&mut ra, &mut cache, 502, 1);
        assert_eq!(last(&ra), (502, 4, 3));
    }

    #[test]
    fn cached_history_before_a_miss_is_context_readahead() {
        let mut ra = Linux6::new(32, false).with_log();
        let mut cache = vec![false; 1000];
        for c in cache.iter_mut().take(210).skip(200) {
            *c = true;
        }
        read(&mut ra, &mut cache, 0, 1);
        // A miss at 210 after a read at page 0: 10 pages cached before it, more than the
        // 1-page request: size 10 + 1, one asynchronous page.
        read(&mut ra, &mut cache, 210, 1);
        assert_eq!(last(&ra), (210, 11, 1));
    }

    #[test]
    fn a_marker_without_matching_state_rebuilds_from_the_next_hole() {
        let mut ra = Linux6::new(32, false).with_log();
        let mut cache = vec![false; 1000];
        // Two interleaved streams on one file, 0.. and 300..: one read-ahead state.
        read(&mut ra, &mut cache, 0, 1); // 0..4, marker on page 1
        read(&mut ra, &mut cache, 300, 1); // far from page 1, nothing cached before: random
        assert_eq!(last(&ra), (300, 1, 0));
        read(&mut ra, &mut cache, 301, 1); // right after 300: a new window 301..305
        assert_eq!(last(&ra), (301, 4, 3));
        // Stream one reaches its marker on page 1, but the state expects 302: the hole after
        // page 1 is at 4, so the old window had 4 - 1 pages left; with the 1-page request
        // next_size(4) = 8 pages from 4, order 0 + 2 keeps the end (12) aligned to 4.
        read(&mut ra, &mut cache, 1, 1);
        assert_eq!(last(&ra), (4, 8, 8));
        assert_eq!(ra.decisions().len(), 4);
    }
}

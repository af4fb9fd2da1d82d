//! Streams: the processes of a trace, each alternating think time and I/O.
//!
//! A stream is a pid (or, with `--single-stream`, the whole trace, as AccuSim ran
//! multi-process applications, prefetching paper §5.1). The engine reads the trace once, in
//! order, and hands each request to its stream; a stream's requests wait in its own queue until
//! the stream gets to them, so the trace is read in constant memory when the streams keep
//! pace with each other and never more than once.

use std::collections::VecDeque;

use bufsim_trace::Request;
use rustc_hash::FxHashMap;

/// How long a stream computes between two of its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Think {
    /// From the trace, as AccuSim derives it: the issue time of a request minus the completion
    /// time of the previous request of the same stream as traced,
    /// `time - (prev.time + prev.dur)`, never below 0.
    Trace,
    /// The same fixed time before every request but a stream's first.
    Fixed(u64),
}

impl Think {
    /// `trace`, or a time with a unit (`0.1ms`, `50us`, `0`).
    pub fn parse(text: &str) -> Result<Think, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("trace") {
            return Ok(Think::Trace);
        }
        bufsim_device::params::parse_time_ns(t)
            .map(|ns| Think::Fixed(ns.round() as u64))
            .map_err(|want| format!("think time `{t}` must be `trace` or {want}"))
    }
}

/// Which streams a trace has and when each starts, from a pass over the trace.
#[derive(Clone, Debug, Default)]
pub struct StreamPlan {
    /// `(pid, start)` in order of first appearance; start is ns after the earliest first request
    /// of any stream (the trace's first request, when the trace is in time order).
    pub starts: Vec<(u32, u64)>,
    /// All requests form one stream.
    pub single: bool,
    /// A closed workload (storage-aware caching §4.1): `starts.len()` streams all start at 0
    /// and share the trace, each taking its next request in trace order as soon as its last
    /// one completes; think time from the trace counts as 0.
    pub closed: bool,
}

/// Builds a [`StreamPlan`] from the requests the run will simulate, in trace order.
#[derive(Default)]
pub struct StreamPlanner {
    plan: StreamPlan,
    seen: FxHashMap<u32, ()>,
    /// The earliest time of a stream's first request: its start is 0.
    origin: u64,
    /// Requests seen (closed workloads need no more streams than the trace has requests).
    requests: u64,
}

impl StreamPlanner {
    pub fn new(single: bool) -> Self {
        StreamPlanner { plan: StreamPlan { starts: Vec::new(), single, closed: false }, ..Default::default() }
    }

    /// A closed workload of `outstanding` streams (whatever the trace's pids).
    pub fn closed(outstanding: u32) -> Self {
        let starts = (0..outstanding).map(|i| (i, 0)).collect();
        StreamPlanner { plan: StreamPlan { starts, single: false, closed: true }, ..Default::default() }
    }

    pub fn request(&mut self, r: &Request) {
        if self.plan.closed {
            self.requests += 1;
            return;
        }
        if self.plan.single {
            if self.plan.starts.is_empty() {
                self.plan.starts.push((0, 0));
            }
        } else if self.seen.insert(r.pid, ()).is_none() {
            // Absolute for now: a later stream may have started earlier (a trace whose times
            // go back), and the starts count from the earliest.
            self.origin = if self.plan.starts.is_empty() { r.time_ns } else { self.origin.min(r.time_ns) };
            self.plan.starts.push((r.pid, r.time_ns));
        }
    }

    pub fn finish(mut self) -> StreamPlan {
        if !self.plan.closed && !self.plan.single {
            for (_, start) in &mut self.plan.starts {
                *start -= self.origin;
            }
        }
        // A stream beyond the trace's requests would never get one: leave it out, so a closed
        // workload of a million outstanding requests over a small trace costs what the trace
        // does (same results, since idle streams issue nothing).
        if self.plan.closed && self.requests > 0 && self.requests < self.plan.starts.len() as u64 {
            self.plan.starts.truncate(self.requests as usize);
        }
        self.plan
    }
}

struct Stream {
    queue: VecDeque<Request>,
    /// `time + dur` of the previous request as traced; `None` before the first.
    prev_end: Option<u64>,
}

/// The streams of a run and the requests read for them but not yet issued.
pub struct Streams {
    streams: Vec<Stream>,
    by_pid: FxHashMap<u32, u32>,
    single: bool,
    /// Closed workload: every stream takes from the first stream's queue.
    closed: bool,
    think: Think,
    exhausted: bool,
    /// Requests read and not yet handed out, over all streams.
    buffered: usize,
}

/// How many requests [`Streams::next`] keeps read ahead of the ones it hands out, so the
/// engine can start loading their cache index slots early (as count mode's
/// [`crate::access::LOOKAHEAD`] does).
pub const READ_AHEAD: usize = crate::access::LOOKAHEAD;

impl Streams {
    pub fn new(plan: &StreamPlan, think: Think) -> Self {
        let mut by_pid = FxHashMap::default();
        let streams = plan
            .starts
            .iter()
            .enumerate()
            .map(|(i, &(pid, _))| {
                by_pid.insert(pid, i as u32);
                Stream { queue: VecDeque::new(), prev_end: None }
            })
            .collect();
        Streams { streams, by_pid, single: plan.single, closed: plan.closed, think, exhausted: false, buffered: 0 }
    }

    pub fn len(&self) -> usize {
        self.streams.len()
    }

    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    #[inline]
    fn stream_of(&self, r: &Request) -> usize {
        if self.single || self.closed {
            return 0;
        }
        match self.by_pid.get(&r.pid) {
            Some(&s) => s as usize,
            None => panic!("pid {} is not in the stream plan: the plan was made from another trace", r.pid),
        }
    }

    /// Reads one request from the trace into its stream's queue; `false` at the end.
    #[inline]
    fn read_one<E>(
        &mut self,
        source: &mut impl FnMut() -> Result<Option<Request>, E>,
        hint: &mut impl FnMut(&Request),
    ) -> Result<bool, E> {
        if self.exhausted {
            return Ok(false);
        }
        match source()? {
            Some(r) => {
                hint(&r);
                let owner = self.stream_of(&r);
                self.streams[owner].queue.push_back(r);
                self.buffered += 1;
                Ok(true)
            }
            None => {
                self.exhausted = true;
                Ok(false)
            }
        }
    }

    /// The next request of stream `s` and the think time before it, reading the trace as far
    /// as needed and [`READ_AHEAD`] requests beyond; `None` when the stream has no more
    /// requests. `hint` sees every request as it is read.
    #[inline]
    pub fn next<E>(
        &mut self,
        s: usize,
        source: &mut impl FnMut() -> Result<Option<Request>, E>,
        hint: &mut impl FnMut(&Request),
    ) -> Result<Option<(Request, u64)>, E> {
        while self.buffered < READ_AHEAD && self.read_one(source, hint)? {}
        let q = if self.closed { 0 } else { s };
        loop {
            if let Some(r) = self.streams[q].queue.pop_front() {
                self.buffered -= 1;
                let st = &mut self.streams[s];
                let think = match (self.think, st.prev_end) {
                    (_, None) => 0,
                    (Think::Fixed(t), Some(_)) => t,
                    (Think::Trace, Some(_)) if self.closed => 0,
                    (Think::Trace, Some(end)) => r.time_ns.saturating_sub(end),
                };
                st.prev_end = Some(r.time_ns.saturating_add(r.dur_ns));
                return Ok(Some((r, think)));
            }
            if !self.read_one(source, hint)? {
                return Ok(None);
            }
        }
    }

    /// Reads the trace to its end when there is no stream to ask for it (a trace with no
    /// request: every stream comes from a request).
    pub fn end_without_streams<E>(&mut self, source: &mut impl FnMut() -> Result<Option<Request>, E>) -> Result<(), E> {
        debug_assert!(self.streams.is_empty());
        while self.read_one(source, &mut |_| {})? {}
        Ok(())
    }

    /// Whether every request read has been handed out and the trace is at its end.
    pub fn drained(&self) -> bool {
        self.exhausted && self.streams.iter().all(|s| s.queue.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bufsim_trace::Op;

    fn req(pid: u32, time_us: u64, dur_us: u64) -> Request {
        Request {
            time_ns: time_us * 1000,
            dur_ns: dur_us * 1000,
            pid,
            ctx: 0,
            op: Op::Read,
            file: 0,
            offset: 0,
            size: 1,
            in_blocks: false,
            unfilled: 0,
            opened: false,
        }
    }

    #[test]
    fn think_time_is_the_gap_after_the_previous_request_of_the_same_stream() {
        // pid 1: issues at 100 us for 30 us, then at 200 us (think 70 us); pid 2 in between
        // does not count. A request issued before its predecessor ended thinks 0.
        let trace = [req(1, 100, 30), req(2, 150, 500), req(1, 200, 50), req(1, 240, 0)];
        let mut planner = StreamPlanner::new(false);
        trace.iter().for_each(|r| planner.request(r));
        let plan = planner.finish();
        assert_eq!(plan.starts, [(1, 0), (2, 50_000)]);
        let mut streams = Streams::new(&plan, Think::Trace);
        let mut it = trace.iter().copied();
        let mut src = || Ok::<_, ()>(it.next());
        let thinks: Vec<u64> =
            std::iter::from_fn(|| streams.next(0, &mut src, &mut |_| ()).unwrap().map(|(_, t)| t)).collect();
        assert_eq!(thinks, [0, 70_000, 0]);
        assert_eq!(streams.next(1, &mut src, &mut |_| ()).unwrap().map(|(r, t)| (r.pid, t)), Some((2, 0)));
        assert!(streams.next(1, &mut src, &mut |_| ()).unwrap().is_none());
        assert!(streams.drained());
    }

    #[test]
    fn single_stream_merges_pids_and_fixed_think_ignores_the_trace() {
        let trace = [req(1, 100, 30), req(2, 150, 500), req(1, 200, 50)];
        let mut planner = StreamPlanner::new(true);
        trace.iter().for_each(|r| planner.request(r));
        let plan = planner.finish();
        assert_eq!(plan.starts, [(0, 0)]);
        let mut merged = Streams::new(&plan, Think::Trace);
        let mut it = trace.iter().copied();
        let mut src = || Ok::<_, ()>(it.next());
        let thinks: Vec<u64> =
            std::iter::from_fn(|| merged.next(0, &mut src, &mut |_| ()).unwrap().map(|(_, t)| t)).collect();
        // 150 - 130 = 20 us; 200 - 650 < 0 gives 0.
        assert_eq!(thinks, [0, 20_000, 0]);
        let mut fixed = Streams::new(&plan, Think::Fixed(5));
        let mut it = trace.iter().copied();
        let mut src = || Ok::<_, ()>(it.next());
        let thinks: Vec<u64> =
            std::iter::from_fn(|| fixed.next(0, &mut src, &mut |_| ()).unwrap().map(|(_, t)| t)).collect();
        assert_eq!(thinks, [0, 5, 5]);
    }

    #[test]
    fn a_closed_workload_needs_no_more_streams_than_requests() {
        let trace = [req(1, 100, 30), req(2, 150, 500)];
        let mut planner = StreamPlanner::closed(1_000_000);
        trace.iter().for_each(|r| planner.request(r));
        assert_eq!(planner.finish().starts, [(0, 0), (1, 0)]);
        let mut planner = StreamPlanner::closed(1);
        trace.iter().for_each(|r| planner.request(r));
        assert_eq!(planner.finish().starts, [(0, 0)]);
    }

    #[test]
    fn closed_streams_share_the_trace_in_order_without_think_time() {
        let trace = [req(1, 100, 30), req(2, 150, 500), req(1, 900, 50), req(3, 1000, 0)];
        let plan = StreamPlanner::closed(2).finish();
        assert_eq!(plan.starts, [(0, 0), (1, 0)]);
        let mut streams = Streams::new(&plan, Think::Trace);
        let mut it = trace.iter().copied();
        let mut src = || Ok::<_, ()>(it.next());
        let mut next = |s| streams.next(s, &mut src, &mut |_| ()).unwrap().map(|(r, t)| (r.time_ns / 1000, t));
        // Whichever stream asks gets the next request of the trace; no think time.
        assert_eq!(next(1), Some((100, 0)));
        assert_eq!(next(1), Some((150, 0)));
        assert_eq!(next(0), Some((900, 0)));
        assert_eq!(next(1), Some((1000, 0)));
        assert_eq!(next(0), None);
    }

    #[test]
    fn think_specs_parse() {
        assert_eq!(Think::parse("trace"), Ok(Think::Trace));
        assert_eq!(Think::parse("0.1ms"), Ok(Think::Fixed(100_000)));
        assert_eq!(Think::parse("0"), Ok(Think::Fixed(0)));
        for bad in ["5", "-1ms", "fast", "3 parsecs"] {
            let e = Think::parse(bad).unwrap_err();
            assert!(e.contains("think time") && e.contains("trace"), "{bad}: {e}");
        }
    }
}

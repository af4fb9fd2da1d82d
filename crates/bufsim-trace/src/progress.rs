//! How far a long piece of work has come, for a progress bar drawn elsewhere (the Python
//! package draws it with tqdm). The work publishes counters; the bar polls them from another
//! thread. Nothing here runs per request: readers add the bytes of each large read of the trace
//! file, loops over requests add their count in batches of [`BATCH`].
//!
//! The same counters carry a cancel flag: whoever holds the [`Progress`] (the Python binding,
//! on Ctrl-C) sets it, and the work stops at its next read of the trace or its next batch of
//! requests, with an error of kind [`TraceErrorKind::Interrupted`].

use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Cancelled, TraceError};

/// Requests a loop processes between two updates of the shared counter.
pub const BATCH: u64 = 1 << 16;

/// What a cancelled loop over decoded requests names as its trace.
pub const IN_MEMORY: &str = "the trace in memory";

/// The stage under way (what it does, in which unit, out of how many) and how much of it is done.
#[derive(Default)]
pub struct Progress {
    stage: Mutex<Stage>,
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
}

#[derive(Clone, Default)]
struct Stage {
    serial: u64,
    what: String,
    unit: &'static str,
}

/// What a poller sees: the stage's serial number (it changes when a new stage starts), its
/// description and unit, and done out of total (total 0: not known).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub serial: u64,
    pub what: String,
    pub unit: &'static str,
    pub done: u64,
    pub total: u64,
}

impl Progress {
    /// Starts a new stage with nothing done; `total` 0 when unknown.
    pub fn stage(&self, what: &str, unit: &'static str, total: u64) {
        let mut s = self.stage.lock().unwrap_or_else(|p| p.into_inner());
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        s.serial += 1;
        s.what = what.to_string();
        s.unit = unit;
    }

    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// Asks the work to stop: it ends at its next check with an `Interrupted` error.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    pub fn snapshot(&self) -> Snapshot {
        let s = self.stage.lock().unwrap_or_else(|p| p.into_inner()).clone();
        Snapshot {
            serial: s.serial,
            what: s.what,
            unit: s.unit,
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
        }
    }
}

/// An optional handle on a [`Progress`], carried in options: cloning shares the counters; two
/// meters are equal when they report to the same place. A quiet meter ([`Meter::quiet`]) counts
/// nothing but still stops its work when the progress is cancelled.
#[derive(Clone)]
pub struct Meter {
    progress: Option<Arc<Progress>>,
    counts: bool,
}

impl Default for Meter {
    fn default() -> Self {
        Meter { progress: None, counts: true }
    }
}

impl Meter {
    pub fn new(p: Arc<Progress>) -> Meter {
        Meter { progress: Some(p), counts: true }
    }

    /// The same cancel flag without the counting: for passes that draw no progress of their own
    /// (the working-set search's OPT runs inside an analysis's pass).
    pub fn quiet(&self) -> Meter {
        Meter { progress: self.progress.clone(), counts: false }
    }

    pub fn is_on(&self) -> bool {
        self.counting().is_some()
    }

    fn counting(&self) -> Option<&Arc<Progress>> {
        self.progress.as_ref().filter(|_| self.counts)
    }

    pub fn stage(&self, what: &str, unit: &'static str, total: u64) {
        if let Some(p) = self.counting() {
            p.stage(what, unit, total);
        }
    }

    #[inline]
    pub fn add(&self, n: u64) {
        if let Some(p) = self.counting() {
            p.add(n);
        }
    }

    /// Whether the work was cancelled.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.progress.as_ref().is_some_and(|p| p.is_cancelled())
    }

    /// Err once the work was cancelled; loops over requests ask between batches.
    #[inline]
    pub fn go_on(&self, path: &str) -> Result<(), TraceError> {
        match &self.progress {
            Some(p) if p.is_cancelled() => Err(TraceError::interrupted(path)),
            _ => Ok(()),
        }
    }

    /// Wraps a reader of the trace file so every read adds its bytes and stops the work once
    /// it was cancelled (reads are buffered in large blocks, so this costs one atomic add and
    /// one load per block).
    pub(crate) fn counted<R: Read + Send + 'static>(&self, inner: R) -> Box<dyn Read + Send> {
        match &self.progress {
            Some(p) => Box::new(Counted { inner, progress: p.clone(), counts: self.counts }),
            None => Box::new(inner),
        }
    }
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match (&self.progress, self.counts) {
            (None, _) => "Meter(off)",
            (Some(_), true) => "Meter(on)",
            (Some(_), false) => "Meter(quiet)",
        })
    }
}

impl PartialEq for Meter {
    fn eq(&self, other: &Meter) -> bool {
        self.counts == other.counts
            && match (&self.progress, &other.progress) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

impl Eq for Meter {}

struct Counted<R> {
    inner: R,
    progress: Arc<Progress>,
    counts: bool,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.progress.is_cancelled() {
            // Not `ErrorKind::Interrupted`, which readers retry.
            return Err(std::io::Error::other(Cancelled));
        }
        let n = self.inner.read(buf)?;
        if self.counts {
            self.progress.add(n as u64);
        }
        Ok(n)
    }
}

/// Counts loop iterations locally and publishes them to a meter every [`BATCH`], when it also
/// asks whether the work was cancelled.
pub struct Ticker<'a> {
    meter: &'a Meter,
    pending: u64,
    /// The trace the loop goes over, for the error.
    path: &'a str,
}

impl<'a> Ticker<'a> {
    pub fn new(meter: &'a Meter, path: &'a str) -> Self {
        Ticker { meter, pending: 0, path }
    }

    #[inline]
    pub fn tick(&mut self) -> Result<(), TraceError> {
        self.pending += 1;
        if self.pending == BATCH {
            self.meter.add(BATCH);
            self.pending = 0;
            return self.meter.go_on(self.path);
        }
        Ok(())
    }
}

impl Drop for Ticker<'_> {
    fn drop(&mut self) {
        self.meter.add(self.pending);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_reads_and_batched_ticks_add_up() {
        let p = Arc::new(Progress::default());
        let m = Meter::new(p.clone());
        m.stage("reading", "B", 10);
        let mut r = m.counted(std::io::Cursor::new(vec![7u8; 10]));
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        let s = p.snapshot();
        assert_eq!((s.serial, s.what.as_str(), s.unit, s.done, s.total), (1, "reading", "B", 10, 10));
        m.stage("simulating", "request", 3 * BATCH);
        {
            let mut t = Ticker::new(&m, IN_MEMORY);
            for _ in 0..BATCH + 5 {
                t.tick().unwrap();
            }
            assert_eq!(p.snapshot().done, BATCH);
        }
        let s = p.snapshot();
        assert_eq!((s.serial, s.done, s.total), (2, BATCH + 5, 3 * BATCH));
        assert_eq!(m, m.clone());
        assert_ne!(m, Meter::default());
    }

    #[test]
    fn a_cancelled_meter_stops_reads_and_loops() {
        let p = Arc::new(Progress::default());
        let m = Meter::new(p.clone());
        let mut r = m.counted(std::io::Cursor::new(vec![7u8; 10]));
        let mut t = Ticker::new(&m, IN_MEMORY);
        assert!(m.go_on("t").is_ok());
        p.cancel();
        let e = r.read(&mut [0u8; 4]).unwrap_err();
        let e = TraceError::io("t.csv", &e);
        assert_eq!((e.kind, e.to_string().as_str()), (crate::TraceErrorKind::Interrupted, "t.csv: interrupted"));
        assert_eq!(m.go_on("t").unwrap_err().kind, crate::TraceErrorKind::Interrupted);
        // A loop learns it at the end of its batch, not on every request.
        for _ in 1..BATCH {
            t.tick().unwrap();
        }
        assert_eq!(t.tick().unwrap_err().to_string(), "the trace in memory: interrupted");
        // A quiet meter counts nothing and stops all the same.
        let q = Meter::new(Arc::new(Progress::default()));
        let quiet = q.quiet();
        quiet.add(5);
        assert_eq!(q.progress.as_ref().unwrap().snapshot().done, 0);
        q.progress.as_ref().unwrap().cancel();
        assert!(quiet.go_on("t").is_err());
        // Without counters nothing can cancel.
        assert!(Meter::default().go_on("t").is_ok());
    }
}

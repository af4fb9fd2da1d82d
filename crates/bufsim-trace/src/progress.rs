//! How far a long piece of work has come, for a progress bar drawn elsewhere (the Python
//! package draws it with tqdm). The work publishes counters; the bar polls them from another
//! thread. Nothing here runs per request: readers add the bytes of each large read of the trace
//! file, loops over requests add their count in batches of [`BATCH`].

use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Requests a loop processes between two updates of the shared counter.
pub const BATCH: u64 = 1 << 16;

/// The stage under way (what it does, in which unit, out of how many) and how much of it is done.
#[derive(Default)]
pub struct Progress {
    stage: Mutex<Stage>,
    done: AtomicU64,
    total: AtomicU64,
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
/// meters are equal when they report to the same place.
#[derive(Clone, Default)]
pub struct Meter(Option<Arc<Progress>>);

impl Meter {
    pub fn new(p: Arc<Progress>) -> Meter {
        Meter(Some(p))
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    pub fn stage(&self, what: &str, unit: &'static str, total: u64) {
        if let Some(p) = &self.0 {
            p.stage(what, unit, total);
        }
    }

    #[inline]
    pub fn add(&self, n: u64) {
        if let Some(p) = &self.0 {
            p.add(n);
        }
    }

    /// Wraps a reader of the trace file so every read adds its bytes (reads are buffered in
    /// large blocks, so this costs one atomic add per block).
    pub(crate) fn counted<R: Read + Send + 'static>(&self, inner: R) -> Box<dyn Read + Send> {
        match &self.0 {
            Some(p) => Box::new(Counted { inner, progress: p.clone() }),
            None => Box::new(inner),
        }
    }
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Meter(on)" } else { "Meter(off)" })
    }
}

impl PartialEq for Meter {
    fn eq(&self, other: &Meter) -> bool {
        match (&self.0, &other.0) {
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
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.add(n as u64);
        Ok(n)
    }
}

/// Counts loop iterations locally and publishes them to a meter every [`BATCH`].
pub struct Ticker<'a> {
    meter: &'a Meter,
    pending: u64,
}

impl<'a> Ticker<'a> {
    pub fn new(meter: &'a Meter) -> Self {
        Ticker { meter, pending: 0 }
    }

    #[inline]
    pub fn tick(&mut self) {
        self.pending += 1;
        if self.pending == BATCH {
            self.meter.add(BATCH);
            self.pending = 0;
        }
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
            let mut t = Ticker::new(&m);
            for _ in 0..BATCH + 5 {
                t.tick();
            }
            assert_eq!(p.snapshot().done, BATCH);
        }
        let s = p.snapshot();
        assert_eq!((s.serial, s.done, s.total), (2, BATCH + 5, 3 * BATCH));
        assert_eq!(m, m.clone());
        assert_ne!(m, Meter::default());
    }
}

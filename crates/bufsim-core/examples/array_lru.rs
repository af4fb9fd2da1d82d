//! The yardstick for count mode's fixed cost per request: the smallest LRU one would write in
//! plain Rust for a one-device block trace already decoded in memory. A hash map from block to
//! slot, a doubly linked recency list threaded through two arrays, hits and misses counted;
//! nothing else (no read-ahead, no clustering, no policy interface, no statistics).
//!
//! It reads the trace the way `count_cost` does (format detected, or given as a fourth argument) and, like it, repeats the run `REPEAT` times, so
//! callgrind's instructions of two repeat counts differ by one run alone:
//!
//! ```text
//! cargo build --release -p bufsim-core --example array_lru
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/array_lru TRACE 16384blocks 1
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/array_lru TRACE 16384blocks 2
//! ```
//! It prints the same `requests accesses hits misses` line as `count_cost TRACE lru ...`, so the
//! two can be checked against each other.

use bufsim_core::run::LoadedTrace;
use bufsim_trace::{Format, Request};
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;

struct ArrayLru {
    slot_of: FxHashMap<u64, u32>,
    key: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently used slot, and least.
    head: u32,
    tail: u32,
    capacity: usize,
}

impl ArrayLru {
    fn new(capacity: usize) -> Self {
        let mut slot_of = FxHashMap::default();
        slot_of.reserve(capacity);
        ArrayLru {
            slot_of,
            key: Vec::with_capacity(capacity),
            prev: Vec::with_capacity(capacity),
            next: Vec::with_capacity(capacity),
            head: NONE,
            tail: NONE,
            capacity,
        }
    }

    #[inline]
    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head == NONE {
            self.tail = s;
        } else {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
    }

    /// Whether `k` was cached; afterwards it is, as the most recently used block.
    #[inline]
    fn access(&mut self, k: u64) -> bool {
        if let Some(&s) = self.slot_of.get(&k) {
            if s != self.head {
                self.unlink(s);
                self.push_front(s);
            }
            return true;
        }
        let s = if self.key.len() < self.capacity {
            self.key.push(k);
            self.prev.push(NONE);
            self.next.push(NONE);
            (self.key.len() - 1) as u32
        } else {
            let s = self.tail;
            self.unlink(s);
            self.slot_of.remove(&self.key[s as usize]);
            self.key[s as usize] = k;
            s
        };
        self.slot_of.insert(k, s);
        self.push_front(s);
        false
    }
}

#[inline(never)]
fn simulate(requests: &[Request], capacity: usize, block_size: u64) -> (u64, u64, u64) {
    let mut lru = ArrayLru::new(capacity);
    let (mut accesses, mut hits) = (0u64, 0u64);
    for r in requests {
        let (first, n) = r.block_range(block_size);
        for b in first..first + n {
            accesses += 1;
            hits += lru.access(b) as u64;
        }
    }
    (requests.len() as u64, accesses, hits)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 && args.len() != 5 {
        eprintln!("usage: array_lru TRACE CACHE REPEAT [FORMAT] (e.g. trace.csv 16384blocks 2)");
        std::process::exit(2);
    }
    let block_size = 4096u64;
    let capacity = match bufsim_config::spec::parse_cache_blocks(&args[2], block_size) {
        Ok(c) => c as usize,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let repeat: usize = match args[3].parse() {
        Ok(n) => n,
        Err(_) => {
            eprintln!("REPEAT `{}` must be a whole number", args[3]);
            std::process::exit(2);
        }
    };
    let format = match args.get(4).map(|f| Format::parse(f)).transpose() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let trace = match LoadedTrace::load(&args[1], format) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if trace.requests.iter().any(|r| r.file != 0) {
        eprintln!("{}: array_lru simulates one-device block traces only", args[1]);
        std::process::exit(2);
    }
    let mut last = (0, 0, 0);
    for _ in 0..repeat {
        last = simulate(&trace.requests, capacity, block_size);
    }
    let (requests, accesses, hits) = last;
    println!("requests {requests} accesses {accesses} hits {hits} misses {}", accesses - hits);
}

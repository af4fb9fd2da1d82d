//! The event queue of timed mode: events ordered by (time in integer nanoseconds, sequence
//! number), so two events at the same instant run in the order they were scheduled and a run
//! is reproducible to the nanosecond. A binary heap that keeps its storage between events:
//! nothing is allocated once it has grown to the most events ever pending.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A stream's think time is over: it issues its current request.
    Wake { stream: u32 },
    /// A device finished one request: part of the I/O in slot `io`.
    Done { device: u16, io: u32 },
    /// The request of the I/O in slot `io` crossed the network and reaches `device`.
    Arrive { device: u16, io: u32 },
    /// The reply of `device` for the I/O in slot `io` crossed the network back to the cache.
    Delivered { device: u16, io: u32 },
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time_ns: u64,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time_ns, self.seq) == (other.time_ns, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    // Sequence numbers are unique, so the event itself never decides the order.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.time_ns, self.seq).cmp(&(other.time_ns, other.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time_ns: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse(Entry { time_ns, seq: self.seq, event }));
    }

    /// The earliest event and its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse(e)| (e.time_ns, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.push(50, Event::Wake { stream: 1 });
        q.push(10, Event::Done { device: 0, io: 7 });
        q.push(50, Event::Wake { stream: 0 });
        q.push(10, Event::Wake { stream: 2 });
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (10, Event::Done { device: 0, io: 7 }),
                (10, Event::Wake { stream: 2 }),
                (50, Event::Wake { stream: 1 }),
                (50, Event::Wake { stream: 0 }),
            ]
        );
        assert!(q.is_empty());
    }
}

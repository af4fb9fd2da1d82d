//! C-SCAN: serve requests in ascending block order from the head; past the highest, wrap to
//! the lowest (one-way elevator, fair to both ends of the disk).

use super::SortedQueue;
use crate::params::Capabilities;
use crate::params::Info;
use crate::{IoRequest, Scheduler};

pub const INFO: Info = Info {
    name: "cscan",
    aliases: &["c-scan"],
    paper: "circular SCAN (Seltzer, Chen & Ousterhout 1990)",
    summary: "ascending from the head, wrapping to the lowest block; ties by id",
    params: &[],
    preset_of: None,
    caps: Capabilities::NONE,
};

#[derive(Default)]
pub struct CScan {
    queue: SortedQueue,
}

impl Scheduler for CScan {
    fn push(&mut self, req: IoRequest, _now_ns: u64) {
        self.queue.insert(req);
    }

    fn pop(&mut self, _now_ns: u64, head: u64) -> Option<IoRequest> {
        if self.queue.is_empty() {
            return None;
        }
        let at = self.queue.first_at_or_after(head);
        let pick = if at < self.queue.len() { at } else { 0 };
        Some(self.queue.remove(pick))
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::req;

    #[test]
    fn ascends_from_the_head_then_wraps() {
        let mut s = CScan::default();
        for (id, b) in [(1, 10), (2, 45), (3, 58), (4, 90), (5, 95)] {
            s.push(req(id, b), 0);
        }
        let mut head = 60;
        let mut order = Vec::new();
        while let Some(r) = s.pop(0, head) {
            order.push(r.block);
            head = r.end_block();
        }
        // 90, 95 above the head; then wrap to 10 and carry on upwards.
        assert_eq!(order, [90, 95, 10, 45, 58]);
    }
}

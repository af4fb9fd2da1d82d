//! noop: first come, first served (Linux's noop elevator without merging; AccuSim's DiskSim
//! driver runs FCFS).

use crate::params::Capabilities;
use std::collections::VecDeque;

use crate::params::Info;
use crate::{IoRequest, Scheduler};

pub const INFO: Info = Info {
    name: "noop",
    aliases: &["fifo", "fcfs"],
    paper: "Linux noop elevator; FCFS as in AccuSim's DiskSim driver (REFERENCES.md)",
    summary: "first come, first served",
    params: &[],
    preset_of: None,
    caps: Capabilities::NONE,
};

#[derive(Default)]
pub struct Noop {
    queue: VecDeque<IoRequest>,
}

impl Scheduler for Noop {
    fn push(&mut self, req: IoRequest, _now_ns: u64) {
        self.queue.push_back(req);
    }
    fn pop(&mut self, _now_ns: u64, _head_block: u64) -> Option<IoRequest> {
        self.queue.pop_front()
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
    fn serves_in_arrival_order() {
        let mut s = Noop::default();
        for (id, b) in [(1, 90), (2, 10), (3, 50)] {
            s.push(req(id, b), 0);
        }
        let order: Vec<u64> = std::iter::from_fn(|| s.pop(0, 0).map(|r| r.block)).collect();
        assert_eq!(order, [90, 10, 50]);
    }
}

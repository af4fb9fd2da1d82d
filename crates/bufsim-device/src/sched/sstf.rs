//! SSTF: serve the queued request nearest to the head (shortest seek first, in blocks).
//! Equal distances on both sides go to the lower id; so do several requests at one block.

use super::SortedQueue;
use crate::params::Capabilities;
use crate::params::Info;
use crate::{IoRequest, Scheduler};

pub const INFO: Info = Info {
    name: "sstf",
    aliases: &[],
    paper: "shortest seek time first (Denning 1967), by block distance",
    summary: "nearest request to the head first; ties by id",
    params: &[],
    preset_of: None,
    caps: Capabilities::NONE,
};

#[derive(Default)]
pub struct Sstf {
    queue: SortedQueue,
}

impl Scheduler for Sstf {
    fn push(&mut self, req: IoRequest, _now_ns: u64) {
        self.queue.insert(req);
    }

    fn pop(&mut self, _now_ns: u64, head: u64) -> Option<IoRequest> {
        let q = &self.queue;
        let right = q.first_at_or_after(head);
        // The nearest block below the head; the lowest id at that block sorts first.
        let left = if right > 0 {
            let below = q.get(right - 1)?.block;
            Some(q.first_at_or_after(below))
        } else {
            None
        };
        let pick = match (left, q.get(right)) {
            (None, None) => return None,
            (Some(l), None) => l,
            (None, Some(_)) => right,
            (Some(l), Some(r)) => {
                let lq = q.get(l)?;
                let dl = (head - lq.block, lq.id);
                let dr = (r.block - head, r.id);
                if dl < dr {
                    l
                } else {
                    right
                }
            }
        };
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
    fn picks_the_nearest_then_breaks_ties_by_id() {
        let mut s = Sstf::default();
        for (id, b) in [(1, 10), (2, 45), (3, 58), (4, 90)] {
            s.push(req(id, b), 0);
        }
        // head 50: 45 is 5 away, 58 is 8 away.
        assert_eq!(s.pop(0, 50).unwrap().block, 45);
        // head 46: 58 (12) beats 10 (36).
        assert_eq!(s.pop(0, 46).unwrap().block, 58);
        assert_eq!(s.pop(0, 59).unwrap().block, 90);
        assert_eq!(s.pop(0, 91).unwrap().block, 10);
        assert!(s.pop(0, 0).is_none());

        // Equal distance both sides goes to the lower id: at 55 ids 2, 3, 9; at 45 id 7.
        for (id, b) in [(7, 45), (3, 55), (9, 55), (2, 55)] {
            s.push(req(id, b), 0);
        }
        let ids: Vec<u64> = (0..4).map(|_| s.pop(0, 50).unwrap().id).collect();
        assert_eq!(ids, [2, 3, 7, 9]);
    }
}

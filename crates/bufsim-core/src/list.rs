//! Intrusive doubly linked lists over integer node ids: the recency queues of most policies.
//!
//! One [`Links`] arena holds the prev/next links of every node; any number of [`List`] heads
//! thread through it, each node in at most one list at a time. The arena stores links only for
//! the nodes written so far (growing by doubling), so the hot loop allocates nothing once a run
//! reaches its working size.

use crate::frames::FrameVec;

pub const NIL: u32 = u32::MAX;

/// The links of all nodes. Node ids are `0..len()`. A node's prev and next sit side by side,
/// so relinking a node touches one cache line for it rather than two.
#[derive(Clone, Debug)]
pub struct Links {
    /// Grows with the nodes in use ([`FrameVec`]), so a huge arena costs nothing until used.
    link: FrameVec<[u32; 2]>,
}

impl Default for Links {
    fn default() -> Self {
        Links::with_nodes(0)
    }
}

const P: usize = 0;
const N: usize = 1;

/// The head of one list: its front (most recent) and back (least recent) and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    front: u32,
    back: u32,
    len: usize,
}

impl Default for List {
    fn default() -> Self {
        List::new()
    }
}

impl List {
    pub const fn new() -> Self {
        List { front: NIL, back: NIL, len: 0 }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn front(&self) -> Option<u32> {
        (self.front != NIL).then_some(self.front)
    }
    #[inline]
    pub fn back(&self) -> Option<u32> {
        (self.back != NIL).then_some(self.back)
    }
}

impl Links {
    pub fn with_nodes(n: usize) -> Self {
        Links { link: FrameVec::filled([NIL, NIL], n) }
    }

    /// Links for node ids `0..n` whose ids from `split` on are a second kind of node, stored
    /// apart so that both kinds take memory only as they are used ([`FrameVec::split`]).
    pub fn with_split(n: usize, split: usize) -> Self {
        Links { link: FrameVec::split([NIL, NIL], n, split) }
    }

    pub fn len(&self) -> usize {
        self.link.len()
    }

    pub fn is_empty(&self) -> bool {
        self.link.is_empty()
    }

    /// Adds a node id (for policies whose node count grows, such as ghost histories).
    pub fn push_node(&mut self) -> u32 {
        self.link.push([NIL, NIL]);
        (self.link.len() - 1) as u32
    }

    #[inline]
    pub fn push_front(&mut self, list: &mut List, n: u32) {
        self.link[n as usize] = [NIL, list.front];
        if list.front != NIL {
            self.link.written_mut(list.front as usize)[P] = n;
        } else {
            list.back = n;
        }
        list.front = n;
        list.len += 1;
    }

    #[inline]
    pub fn push_back(&mut self, list: &mut List, n: u32) {
        self.link[n as usize] = [list.back, NIL];
        if list.back != NIL {
            self.link.written_mut(list.back as usize)[N] = n;
        } else {
            list.front = n;
        }
        list.back = n;
        list.len += 1;
    }

    /// Inserts `n` just before `at` (towards the front). `at` must be in `list`.
    #[inline]
    pub fn insert_before(&mut self, list: &mut List, at: u32, n: u32) {
        // `at` and its predecessor are linked, so written: only `n` may grow the arena.
        let p = self.link.written_mut(at as usize)[P];
        self.link[n as usize] = [p, at];
        self.link.written_mut(at as usize)[P] = n;
        if p != NIL {
            self.link.written_mut(p as usize)[N] = n;
        } else {
            list.front = n;
        }
        list.len += 1;
    }

    /// Unlinks `n`, which must be in `list`.
    #[inline]
    pub fn remove(&mut self, list: &mut List, n: u32) {
        self.unlink(list, n);
        *self.link.written_mut(n as usize) = [NIL, NIL];
    }

    /// [`Links::remove`] leaving `n`'s own links stale, for a caller that relinks it at once.
    /// Nodes in a list were written when linked, so none of these accesses grows the arena.
    #[inline]
    fn unlink(&mut self, list: &mut List, n: u32) {
        let [p, nx] = *self.link.written_mut(n as usize);
        if p != NIL {
            self.link.written_mut(p as usize)[N] = nx;
        } else {
            list.front = nx;
        }
        if nx != NIL {
            self.link.written_mut(nx as usize)[P] = p;
        } else {
            list.back = p;
        }
        list.len -= 1;
    }

    #[inline]
    pub fn pop_back(&mut self, list: &mut List) -> Option<u32> {
        let b = list.back()?;
        self.remove(list, b);
        Some(b)
    }

    #[inline]
    pub fn pop_front(&mut self, list: &mut List) -> Option<u32> {
        let f = list.front()?;
        self.remove(list, f);
        Some(f)
    }

    #[inline]
    pub fn move_to_front(&mut self, list: &mut List, n: u32) {
        if list.front != n {
            self.unlink(list, n);
            self.push_front(list, n);
        }
    }

    #[inline]
    pub fn move_to_back(&mut self, list: &mut List, n: u32) {
        if list.back != n {
            self.unlink(list, n);
            self.push_back(list, n);
        }
    }

    /// Starts loading node `n`'s links (a memory hint, [`crate::memory_hint`]).
    #[inline]
    pub fn warm(&self, n: u32) {
        self.link.prefetch(n as usize);
    }

    /// The node after `n` (towards the back), if any.
    #[inline]
    pub fn next(&self, n: u32) -> Option<u32> {
        let x = self.link[n as usize][N];
        (x != NIL).then_some(x)
    }

    /// The node before `n` (towards the front), if any.
    #[inline]
    pub fn prev(&self, n: u32) -> Option<u32> {
        let x = self.link[n as usize][P];
        (x != NIL).then_some(x)
    }

    /// Iterates a list from front to back (for tests, dumps and invariant checks).
    pub fn iter<'a>(&'a self, list: &List) -> impl Iterator<Item = u32> + 'a {
        let mut cur = list.front;
        std::iter::from_fn(move || {
            if cur == NIL {
                None
            } else {
                let n = cur;
                cur = self.link[n as usize][N];
                Some(n)
            }
        })
    }

    /// Checks that `list` is well linked and as long as it says (invariant checks).
    pub fn check(&self, list: &List) -> Result<(), String> {
        let mut count = 0usize;
        let mut prev = NIL;
        let mut cur = list.front;
        while cur != NIL {
            if self.link[cur as usize][P] != prev {
                return Err(format!("node {cur}: prev link is {} not {prev}", self.link[cur as usize][P]));
            }
            count += 1;
            if count > self.link.len() {
                return Err("list has a cycle".into());
            }
            prev = cur;
            cur = self.link[cur as usize][N];
        }
        if prev != list.back {
            return Err(format!("back is {} but the last node is {prev}", list.back));
        }
        if count != list.len {
            return Err(format!("list says {} nodes but links {count}", list.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_share_one_arena() {
        let mut links = Links::with_nodes(6);
        let (mut a, mut b) = (List::new(), List::new());
        for n in 0..3 {
            links.push_front(&mut a, n);
        }
        links.push_back(&mut b, 3);
        links.push_back(&mut b, 4);
        links.insert_before(&mut b, 4, 5);
        assert_eq!(links.iter(&a).collect::<Vec<_>>(), vec![2, 1, 0]);
        assert_eq!(links.iter(&b).collect::<Vec<_>>(), vec![3, 5, 4]);
        links.move_to_front(&mut a, 0);
        assert_eq!(links.iter(&a).collect::<Vec<_>>(), vec![0, 2, 1]);
        assert_eq!(links.pop_back(&mut a), Some(1));
        links.move_to_back(&mut b, 3);
        assert_eq!(links.iter(&b).collect::<Vec<_>>(), vec![5, 4, 3]);
        links.check(&a).unwrap();
        links.check(&b).unwrap();
        assert_eq!(a.len() + b.len(), 5);
        let n = links.push_node();
        links.push_front(&mut a, n);
        assert_eq!(a.front(), Some(6));
    }
}

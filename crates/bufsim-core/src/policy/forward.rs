//! One way to make a policy out of another: [`forward_policy!`] writes every method of
//! [`super::Policy`] once, so a wrapper cannot forget one (a dropped `ghost_hit` would quietly
//! turn off AMP's ghost-driven steals; a dropped `metrics` hides what the policy reports).

/// Implements [`super::Policy`] for `$ty` by forwarding every method to the policy it holds:
///
/// - `forward_policy!(impl[] Wrapper, |w| w.inner)`: a wrapper that reaches its policy as a
///   place expression from `w` (a field, or `*w.0` through a box);
/// - `forward_policy!(enum Any { A, B })`: an enum with one variant per policy type.
///
/// Adding a method to the trait means adding it to the list below, and nowhere else.
macro_rules! forward_policy {
    (impl[$($gen:tt)*] $ty:ty, |$s:ident| $inner:expr) => {
        impl<$($gen)*> $crate::policy::Policy for $ty {
            $crate::policy::forward::forward_policy!(@methods [place $s $inner]);
        }
    };
    (enum $ty:ident { $($variant:ident),* $(,)? }) => {
        impl $crate::policy::Policy for $ty {
            $crate::policy::forward::forward_policy!(@methods [enum $ty $($variant)*]);
        }
    };
    // Reaching the held policy as `$p`, by reference (`ref`) or mutably (`mut`).
    (@to [place $s:ident $inner:expr] ref $this:ident, $p:ident => $call:expr) => {{
        let $s = $this;
        let $p = &$inner;
        $call
    }};
    (@to [place $s:ident $inner:expr] mut $this:ident, $p:ident => $call:expr) => {{
        let $s = $this;
        let $p = &mut $inner;
        $call
    }};
    (@to [enum $ty:ident $($variant:ident)*] $_how:ident $this:ident, $p:ident => $call:expr) => {
        match $this {
            $($ty::$variant($p) => $call),*
        }
    };
    // Every method of the trait, in its order.
    (@methods $how:tt) => {
        #[inline]
        fn prepare_insert(&mut self, a: &$crate::policy::Access, o: $crate::policy::Origin) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.prepare_insert(a, o))
        }
        #[inline]
        fn insert(&mut self, f: $crate::policy::Frame, a: &$crate::policy::Access, o: $crate::policy::Origin) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.insert(f, a, o))
        }
        fn insert_cold(&mut self, f: $crate::policy::Frame, a: &$crate::policy::Access, o: $crate::policy::Origin) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.insert_cold(f, a, o))
        }
        #[inline]
        fn hit(&mut self, f: $crate::policy::Frame, a: &$crate::policy::Access) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.hit(f, a))
        }
        #[inline]
        fn first_demand(&mut self, f: $crate::policy::Frame, a: &$crate::policy::Access) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.first_demand(f, a))
        }
        #[inline]
        fn victim(&mut self, pins: &$crate::policy::Pins, a: &$crate::policy::Access) -> Option<$crate::policy::Frame> {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.victim(pins, a))
        }
        #[inline]
        fn remove(&mut self, f: $crate::policy::Frame, key: u64, why: $crate::policy::Removal) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.remove(f, key, why))
        }
        #[inline(always)]
        fn surplus(&mut self, pins: &$crate::policy::Pins) -> Option<$crate::policy::Frame> {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.surplus(pins))
        }
        #[inline(always)]
        fn reallocate(&mut self, pins: &$crate::policy::Pins) -> Option<$crate::policy::Frame> {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.reallocate(pins))
        }
        #[inline]
        fn forget(&mut self, key: u64) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.forget(key))
        }
        fn check(&self, resident: usize) -> Result<(), String> {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.check(resident))
        }
        fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.metrics(out))
        }
        #[inline]
        fn keeps_ghosts(&self) -> bool {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.keeps_ghosts())
        }
        #[inline]
        fn ghost_hit(&self, key: u64) -> bool {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.ghost_hit(key))
        }
        #[inline]
        fn ghost_len(&self) -> usize {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.ghost_len())
        }
        fn shares_index(&self) -> bool {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.shares_index())
        }
        fn share_index(&mut self) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.share_index())
        }
        #[inline]
        fn prepare_insert_ghost(&mut self, a: &$crate::policy::Access, o: $crate::policy::Origin, node: u32) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.prepare_insert_ghost(a, o, node))
        }
        #[inline]
        fn take_forgotten(&mut self) -> Option<u64> {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.take_forgotten())
        }
        #[inline]
        fn take_ghost(&mut self) -> Option<u32> {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.take_ghost())
        }
        fn shared_ghosts(&self) -> usize {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.shared_ghosts())
        }
        fn partition_timeline(&self) -> Option<&$crate::policy::partition::Timeline> {
            $crate::policy::forward::forward_policy!(@to $how ref self, p => p.partition_timeline())
        }
        fn storage(&mut self, view: &$crate::policy::storage::StorageView) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.storage(view))
        }
        #[inline]
        fn device_done(&mut self, device: u16, wait_ns: u64, now: u64) {
            $crate::policy::forward::forward_policy!(@to $how mut self, p => p.device_done(device, wait_ns, now))
        }
    };
}
pub(crate) use forward_policy;

// A boxed policy of any type is a policy: one engine then serves every policy through the
// vtable (the page log's replay, see crate::page_log).
forward_policy!(impl[] Box<dyn super::Policy>, |b| **b);

#[cfg(test)]
mod tests {
    use crate::cache::Cache;
    use crate::policy::amp::DefaultPolicy;
    use crate::policy::partition::Timeline;
    use crate::policy::storage::test_support::{on, view};
    use crate::policy::{build, Access, AnyPolicy, BuildEnv, Origin, Pins, Policy, PolicyVisitor, Removal};

    const CAPACITY: usize = 8;

    /// Everything a caller can learn from a policy after the same script of calls.
    #[derive(Debug, PartialEq)]
    struct Answers {
        resident: Vec<u64>,
        keeps_ghosts: bool,
        ghost_len: usize,
        ghost_hits: Vec<u64>,
        metrics: Vec<(&'static str, f64)>,
        timeline: Option<Timeline>,
        check: Result<(), String>,
    }

    /// Storage view, demand misses and hits on two devices, evictions, device waits: every
    /// method of the trait but `first_demand` is called (read-ahead is the cache tests' part).
    fn answers<P: Policy>(policy: P) -> Answers {
        let mut cache = Cache::new(policy, CAPACITY);
        cache.policy.storage(&view(&[1.0, 4.0]));
        for i in 0..200u64 {
            // A scan over 46 blocks of two devices, interleaved with three hot blocks whose
            // hits keep part of the cache (ARC's T2), so scanned blocks leave ghosts.
            let (device, block) = if i % 2 == 0 { (0, 100 + (i / 2) % 3) } else { ((i % 3 == 0) as u16, (i * 7) % 23) };
            let mut a = on(device, block);
            a.time = i;
            a.key = crate::layout::block_key(device, a.block);
            cache.demand(&a);
            if i % 5 == 0 {
                cache.policy.device_done(device, 1_000_000 * (1 + device as u64), i * 1000);
            }
        }
        let ghost_hits = (0..2u16)
            .flat_map(|d| (0..23u64).map(move |b| crate::layout::block_key(d, b)))
            .filter(|&k| !cache.contains(k) && cache.policy.ghost_hit(k))
            .collect();
        let mut metrics = Vec::new();
        cache.policy.metrics(&mut metrics);
        Answers {
            resident: cache.resident_keys(),
            keeps_ghosts: cache.policy.keeps_ghosts(),
            ghost_len: cache.policy.ghost_len(),
            ghost_hits,
            metrics,
            timeline: cache.policy.partition_timeline().cloned(),
            check: cache.check(),
        }
    }

    struct Concrete;
    impl PolicyVisitor for Concrete {
        type Output = Answers;
        fn visit<P: Policy + 'static>(self, policy: P) -> Answers {
            answers(policy)
        }
    }

    fn any(spec: &str) -> AnyPolicy {
        build(spec, &BuildEnv { capacity: CAPACITY, block_size: 4096, seed: 7 }).unwrap()
    }

    /// The policy itself, through the registry's enum, and as AMP's default partition give the
    /// same answers to every question.
    fn same_through_wrappers(spec: &str) -> Answers {
        let bare = any(spec).visit(Concrete);
        assert_eq!(answers(any(spec)), bare, "{spec} through AnyPolicy");
        assert_eq!(answers(DefaultPolicy::new(any(spec))), bare, "{spec} as AMP's default partition");
        assert_eq!(answers(Box::new(any(spec)) as Box<dyn Policy>), bare, "{spec} boxed");
        bare
    }

    #[test]
    fn ghosts_pass_through_wrappers() {
        // A cache shares its index with ARC's ghosts: the ghosts are the cache's to find, and the
        // wrappers must pass the sharing through (the answers, ghost count included, agree).
        let a = same_through_wrappers("arc");
        assert!(!a.keeps_ghosts && a.ghost_len > 0 && a.ghost_hits.is_empty(), "{a:?}");
    }

    /// Outside a cache (AMP's default partition) ARC indexes its own ghosts, and the wrappers
    /// pass the questions about them through.
    #[test]
    fn ghost_questions_pass_through_wrappers_outside_a_cache() {
        fn after_an_eviction<P: Policy>(mut p: P) -> (bool, bool, bool, usize) {
            let a = |key: u64| Access { key, time: key, ..Access::default() };
            let flags = [0u8; CAPACITY];
            for key in 0..=CAPACITY as u64 {
                if key == CAPACITY as u64 {
                    // Block 0 seen twice (T2), so the next miss sends T1's oldest, 1, to B1.
                    p.hit(0, &a(0));
                }
                p.prepare_insert(&a(key), Origin::Demand);
                let frame = if key < CAPACITY as u64 {
                    key as u32
                } else {
                    let v = p.victim(&Pins::new(&flags), &a(key)).expect("a victim");
                    p.remove(v, v as u64, Removal::Evicted);
                    v
                };
                p.insert(frame, &a(key), Origin::Demand);
            }
            // Frame f held key f: block 1 is now a ghost, the newest block is not.
            (p.keeps_ghosts(), p.ghost_hit(1), p.ghost_hit(CAPACITY as u64), p.ghost_len())
        }
        let bare = after_an_eviction(any("arc"));
        assert_eq!(bare, (true, true, false, 1));
        assert_eq!(after_an_eviction(DefaultPolicy::new(any("arc"))), bare);
    }

    #[test]
    fn metrics_pass_through_wrappers() {
        let a = same_through_wrappers("dulo");
        assert!(a.metrics.iter().any(|&(name, _)| name == "block_table_bytes"), "{a:?}");
    }

    #[test]
    fn storage_waits_and_timelines_pass_through_wrappers() {
        let a = same_through_wrappers("lazy-lru(window=4)");
        let t = a.timeline.as_ref().expect("a storage-aware policy keeps a timeline");
        assert_eq!(t.names.len(), 2, "one partition per device of the view: {t:?}");
        assert!(!a.metrics.is_empty());
    }
}

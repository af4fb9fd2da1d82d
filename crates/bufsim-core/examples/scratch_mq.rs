use bufsim_core::cache::Cache;
use bufsim_core::policy::{Access, Lifetime, Mq};
fn main() {
    let data = std::fs::read("/tmp/polb/l2.oracleGeneral").unwrap();
    let ids: Vec<u64> = data.chunks(24).map(|c| u64::from_le_bytes(c[4..12].try_into().unwrap())).collect();
    for &(cap, hist) in &[(16384usize, 4usize), (65536, 4), (16384, 1), (65536, 1)] {
        let mut c = Cache::new(Mq::new(cap, 8, hist * cap, Lifetime::Adaptive), cap);
        let mut lts = vec![];
        let mut miss = 0;
        for (t, &k) in ids.iter().enumerate() {
            let a = Access { key: k, block: k, time: t as u64, ..Access::default() };
            if !matches!(c.demand(&a), bufsim_core::cache::Demand::Hit) { miss += 1; }
            if t % 100000 == 0 { lts.push(c.policy.lifetime()); }
        }
        println!("cap {cap} hist {hist}x misses {miss} lifetimes {:?}", lts);
    }
}

//! Performance-fault injection (storage-aware caching §4.3 and §5.5): from a given simulated
//! time on, a device serves every request it starts `slowdown` times slower. "This could
//! represent a disk stuttering before absolute failure, unexpected network traffic between the
//! client and the drive, or a sudden workload imbalance" (§4.3).

use bufsim_device::params::parse_time_ns;

use crate::spec::{Spec, SpecError};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub device: u16,
    /// Simulated time the fault starts, ns.
    pub at_ns: u64,
    /// Factor on the service time of every request the device starts from then on (2: twice as
    /// slow; 1 ends an earlier fault).
    pub slowdown: f64,
}

impl Fault {
    /// `device=6,at=500s,slowdown=2` (also in parentheses: `fault(device=6,...)`), read as
    /// every spec is read ([`Spec::parse`]: a key given twice, an empty parameter or one with
    /// no value is refused as it is everywhere else) and then typed here.
    pub fn parse(text: &str) -> Result<Fault, SpecError> {
        let t = text.trim();
        let how = "write it as device=6,at=500s,slowdown=2";
        let spec = if t.to_ascii_lowercase().starts_with("fault(") { t.to_string() } else { format!("fault({t})") };
        let spec = Spec::parse(&spec).map_err(|e| SpecError(format!("{e}; {how}")))?;
        if spec.name != "fault" {
            return Err(SpecError(format!("fault `{t}`: {how}")));
        }
        let bad = |why: String| SpecError(format!("fault `{t}`: {why}; {how}"));
        let (mut device, mut at, mut slowdown) = (None, None, None);
        for (k, v) in &spec.args {
            match k.as_str() {
                "device" => {
                    device = Some(v.parse::<u16>().map_err(|_| bad(format!("device `{v}` is not a device id")))?)
                }
                "at" => {
                    at = Some(parse_time_ns(v).map_err(|want| bad(format!("at=`{v}` must be {want}")))?.round() as u64)
                }
                "slowdown" => {
                    let x: f64 = v.parse().map_err(|_| bad(format!("slowdown `{v}` is not a number")))?;
                    if !(x.is_finite() && x > 0.0) {
                        return Err(bad(format!("slowdown `{v}` must be above 0")));
                    }
                    slowdown = Some(x);
                }
                other => return Err(bad(format!("unknown key `{other}`"))),
            }
        }
        Ok(Fault {
            device: device.ok_or_else(|| bad("no device".into()))?,
            at_ns: at.ok_or_else(|| bad("no at= time".into()))?,
            slowdown: slowdown.ok_or_else(|| bad("no slowdown".into()))?,
        })
    }
}

/// The faults of one device, in time order, and the slowdown in force.
#[derive(Clone, Debug, Default)]
pub(crate) struct FaultSchedule {
    /// `(at_ns, slowdown)`, sorted by time (stable: of two faults at one instant the later
    /// given wins).
    pending: Vec<(u64, f64)>,
    next: usize,
    slowdown: f64,
}

impl FaultSchedule {
    pub(crate) fn new(mut faults: Vec<(u64, f64)>) -> Self {
        faults.sort_by_key(|f| f.0);
        FaultSchedule { pending: faults, next: 0, slowdown: 1.0 }
    }

    /// The factor on a service time starting at `now` (times never go backwards).
    #[inline]
    pub(crate) fn factor(&mut self, now: u64) -> f64 {
        while let Some(&(at, s)) = self.pending.get(self.next) {
            if at > now {
                break;
            }
            self.slowdown = s;
            self.next += 1;
        }
        self.slowdown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse_and_take_effect_in_time_order() {
        assert_eq!(
            Fault::parse("device=6,at=500s,slowdown=2").unwrap(),
            Fault { device: 6, at_ns: 500_000_000_000, slowdown: 2.0 }
        );
        assert_eq!(Fault::parse("fault(device=1, at=2ms, slowdown=0.5)").unwrap().at_ns, 2_000_000);
        for (bad, word) in [
            ("device=6,at=5s", "no slowdown"),
            ("device=x,at=1s,slowdown=2", "not a device id"),
            ("device=1,at=1,slowdown=2", "at="),
            ("device=1,at=1s,slowdown=0", "above 0"),
            ("device=1,when=1s", "unknown key"),
            ("device=0,at=0s,slowdown=50,at=1000s", "parameter `at` is given twice"),
            ("device=0,,at=0s,slowdown=2", "empty parameter"),
            ("device=0,at,slowdown=2", "needs a value"),
        ] {
            let e = Fault::parse(bad).unwrap_err().to_string();
            assert!(e.contains(word), "{bad}: {e}");
        }
        let mut s = FaultSchedule::new(vec![(100, 3.0), (50, 2.0)]);
        assert_eq!(s.factor(10), 1.0);
        assert_eq!(s.factor(50), 2.0);
        assert_eq!(s.factor(99), 2.0);
        assert_eq!(s.factor(1000), 3.0);
    }
}

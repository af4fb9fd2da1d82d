//! The network between the cache (the client) and network-attached devices: LogGP (Alexandrov
//! et al., SPAA '95) with endpoint contention, as storage-aware caching §4.1 and §4.4 configure
//! it (10 Gb/s, L = 1 us, o = 0.4 us, g = 76 ns). Reading of the paper: how contention is
//! charged and the request message size are ours (docs/storage-aware.md).
//!
//! A message of `k` bytes from endpoint A to endpoint B:
//! - A starts sending when its link is free; it spends `o + (k-1)G` putting the message on the
//!   wire and may start its next message `max(g, o + (k-1)G)` after this one started;
//! - the first byte reaches B `o + L` after the send started; B's link takes the bytes one
//!   message at a time (`(k-1)G` each, then its receive overhead `o`), so messages that arrive
//!   together at B wait for each other (endpoint contention);
//! - without contention the message is delivered `o + (k-1)G + L + o` after it was sent, the
//!   LogGP cost of a long message.
//!
//! A read sends a request message of `header` bytes to the device and gets the data (plus a
//! header) back; a write sends its data and gets a header back.

use bufsim_device::params::parse_time_ns;

use crate::spec::{Size, Spec, SpecError};

/// The paper's network (§4.4): "we set the bandwidth (i.e., 1/G) to 10 Gb/s, L to 1 us, o to
/// 0.4 us, and g to 76 ns".
pub const LOGGP_DEFAULTS: &[(&str, &str, &str)] = &[
    ("latency", "1us", "L: time for a byte to cross the network"),
    ("overhead", "0.4us", "o: time an endpoint spends sending or receiving a message"),
    ("gap", "76ns", "g: least time between two message sends (or receives) of one endpoint"),
    ("bandwidth", "10Gb/s", "1/G: bytes per second through an endpoint's link (Gb/s are bits, GB/s bytes)"),
    ("header", "64B", "bytes of a request message (and of the header on every reply)"),
];

/// LogGP's parameters, in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogGp {
    pub latency_ns: f64,
    pub overhead_ns: f64,
    pub gap_ns: f64,
    pub ns_per_byte: f64,
    pub header: u64,
}

impl LogGp {
    /// `none` (no network: `None`), `loggp` or `loggp(latency=2us,bandwidth=1Gb/s)`.
    pub fn parse(text: &str) -> Result<Option<LogGp>, SpecError> {
        let spec = Spec::parse(text)?;
        match spec.name.to_ascii_lowercase().as_str() {
            "none" if spec.args.is_empty() => return Ok(None),
            "loggp" => {}
            _ => return Err(SpecError(format!("unknown network `{}`; use none or loggp(latency=1us,overhead=0.4us,gap=76ns,bandwidth=10Gb/s,header=64B)", spec.name))),
        }
        for (k, _) in &spec.args {
            if !LOGGP_DEFAULTS.iter().any(|(n, _, _)| n == k) {
                let known: Vec<&str> = LOGGP_DEFAULTS.iter().map(|p| p.0).collect();
                return Err(SpecError(format!("network loggp has no parameter `{k}`; it takes {}", known.join(", "))));
            }
        }
        let text = |name: &str| -> String {
            spec.args
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| LOGGP_DEFAULTS.iter().find(|p| p.0 == name).expect("declared").1.to_string())
        };
        let time = |name: &str| {
            parse_time_ns(&text(name))
                .map_err(|want| SpecError(format!("network loggp: {name}=`{}` must be {want}", text(name))))
        };
        let bytes_per_ns = parse_bandwidth(&text("bandwidth"))
            .map_err(|want| SpecError(format!("network loggp: bandwidth=`{}` must be {want}", text("bandwidth"))))?;
        let header = match Size::parse(&text("header")) {
            Ok(Size::Bytes(b)) => b,
            _ => {
                return Err(SpecError(format!(
                    "network loggp: header=`{}` must be a size in bytes such as 64B",
                    text("header")
                )))
            }
        };
        Ok(Some(LogGp {
            latency_ns: time("latency")?,
            overhead_ns: time("overhead")?,
            gap_ns: time("gap")?,
            ns_per_byte: 1.0 / bytes_per_ns,
            header,
        }))
    }
}

/// A rate in bytes per ns: `10Gb/s` and `10Gbit/s` are bits, `1.25GB/s` bytes (as devices take
/// rates).
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let want = || "a rate such as 10Gb/s (bits) or 1.25GB/s (bytes)".to_string();
    let per = t.strip_suffix("/s").ok_or_else(want)?.trim();
    let bits =
        [("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3), ("bit", 1.0), ("Gb", 1e9), ("Mb", 1e6), ("kb", 1e3), ("Kb", 1e3)];
    for (unit, mult) in bits {
        if let Some(num) = per.strip_suffix(unit) {
            let v: f64 = num.trim().parse().map_err(|_| want())?;
            let r = v * mult / 8.0 / 1e9;
            return if r.is_finite() && r > 0.0 { Ok(r) } else { Err(want()) };
        }
    }
    bufsim_device::params::parse_rate(t).map_err(|_| want())
}

/// When an endpoint's link is next free to send and to receive, ns.
#[derive(Clone, Copy, Debug, Default)]
struct Endpoint {
    send_free: u64,
    recv_free: u64,
}

/// The client and one endpoint per device.
#[derive(Clone, Debug)]
pub struct Network {
    model: LogGp,
    client: Endpoint,
    devices: Vec<Endpoint>,
}

#[inline]
fn ns(x: f64) -> u64 {
    if x <= 0.0 {
        0
    } else {
        x.round() as u64
    }
}

impl Network {
    pub fn new(model: LogGp, devices: usize) -> Self {
        Network { model, client: Endpoint::default(), devices: vec![Endpoint::default(); devices] }
    }

    pub fn model(&self) -> &LogGp {
        &self.model
    }

    /// A message of `bytes` bytes sent at `now`; returns when it is delivered.
    fn send(m: &LogGp, from: &mut Endpoint, to: &mut Endpoint, bytes: u64, now: u64) -> u64 {
        let stream = ns(bytes.max(1).saturating_sub(1) as f64 * m.ns_per_byte);
        let (o, g, l) = (ns(m.overhead_ns), ns(m.gap_ns), ns(m.latency_ns));
        // Saturating: times near the end of the clock stay there (the run reports it) rather
        // than wrap to the past.
        let start = now.max(from.send_free);
        from.send_free = start.saturating_add(g.max(o.saturating_add(stream)));
        let first_byte = start.saturating_add(o).saturating_add(l);
        let rx = first_byte.max(to.recv_free);
        let done = rx.saturating_add(stream).saturating_add(o);
        to.recv_free = rx.saturating_add(g.max(stream.saturating_add(o)));
        done
    }

    /// The request for an I/O of `data` bytes to `device` leaves the client at `now`; returns
    /// when the device has it. A write carries its data.
    #[inline]
    pub fn to_device(&mut self, device: u16, data: u64, write: bool, now: u64) -> u64 {
        let bytes = self.model.header + if write { data } else { 0 };
        let m = self.model;
        Network::send(&m, &mut self.client, &mut self.devices[device as usize], bytes, now)
    }

    /// The reply of an I/O of `data` bytes leaves `device` at `now`; returns when the client
    /// has it. A read's reply carries its data.
    #[inline]
    pub fn to_client(&mut self, device: u16, data: u64, write: bool, now: u64) -> u64 {
        let bytes = self.model.header + if write { 0 } else { data };
        let m = self.model;
        Network::send(&m, &mut self.devices[device as usize], &mut self.client, bytes, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_network_parses_from_its_defaults() {
        let m = LogGp::parse("loggp").unwrap().unwrap();
        assert_eq!((m.latency_ns, m.overhead_ns, m.gap_ns, m.header), (1000.0, 400.0, 76.0, 64));
        // 10 Gb/s = 1.25 bytes per ns.
        assert!((m.ns_per_byte - 0.8).abs() < 1e-12);
        assert_eq!(LogGp::parse("none").unwrap(), None);
        assert!((parse_bandwidth("1.25GB/s").unwrap() - 1.25).abs() < 1e-12);
        for (bad, word) in [
            ("ethernet", "unknown network"),
            ("loggp(lat=1us)", "no parameter `lat`"),
            ("loggp(latency=3)", "latency"),
            ("loggp(bandwidth=fast)", "10Gb/s"),
        ] {
            let e = LogGp::parse(bad).unwrap_err().to_string();
            assert!(e.contains(word), "{bad}: {e}");
        }
    }

    #[test]
    fn an_idle_network_charges_loggp_and_busy_endpoints_queue() {
        let m = LogGp::parse("loggp").unwrap().unwrap();
        let mut net = Network::new(m, 2);
        // A 64-byte request: o + 63 G + L + o = 400 + 50 + 1000 + 400 (63 x 0.8 = 50.4).
        assert_eq!(net.to_device(0, 8192, false, 0), 1850);
        // An 8 KiB reply (+ 64 B header): o + 8255 G + L + o = 400 + 6604 + 1000 + 400.
        assert_eq!(net.to_client(0, 8192, false, 10_000), 10_000 + 8404);
        // Two replies from two devices at once: the client's link takes one after the other.
        let a = net.to_client(0, 8192, false, 100_000);
        let b = net.to_client(1, 8192, false, 100_000);
        assert_eq!(a, 100_000 + 8404);
        assert_eq!(b, a + 6604 + 400);
        // The client sends requests at most every max(g, o + (k-1)G) = 450 ns.
        let x = net.to_device(0, 0, false, 200_000);
        let y = net.to_device(1, 0, false, 200_000);
        assert_eq!(y - x, 450);
    }
}

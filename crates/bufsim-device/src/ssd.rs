//! A flash SSD: each request occupies one of `channels` flash channels for its access latency,
//! then crosses the shared host link at `bandwidth`. Defaults are the Intel SSD DC S4500's
//! datasheet figures (random 4 KB latency 110/52 µs, 500 MB/s sequential read).
//! Not modelled: garbage collection, write amplification, page-level striping.

use bufsim_config::SpecError;

use crate::params::{Args, Capabilities, Info, Param, Range};
use crate::{round_ns, DeviceModel, IoRequest};

pub const INFO: Info = Info {
    name: "ssd",
    aliases: &["flash"],
    paper: "Intel SSD DC S4500 product specification: random 4 KB latency (typ.) 110 µs read, \
             52 µs write; sustained sequential read 500 MB/s; 72,000 random 4 KB read IOPS at \
             queue depth 32",
    summary: "flash device: per-request read/write latency on one of N parallel channels, then \
              transfer over a shared link at a fixed bandwidth",
    params: &[
        Param { name: "read", default: "110us", doc: "access latency of a read", range: Range::Time(0.0, 1e12) },
        Param {
            name: "write",
            default: "52us",
            doc: "access latency of a write (the datasheet's, with the device's write cache)",
            range: Range::Time(0.0, 1e12),
        },
        Param {
            name: "channels",
            default: "8",
            doc: "requests served at once (flash channels)",
            range: Range::Whole(1, 4096),
        },
        Param {
            name: "bandwidth",
            default: "500MB/s",
            doc: "host link rate shared by all channels",
            range: Range::Rate(1.0, 1e15),
        },
        Param {
            name: "capacity",
            default: "480GB",
            doc: "device size",
            range: Range::Bytes(1, crate::MAX_CAPACITY_BYTES),
        },
    ],
    preset_of: None,
    caps: Capabilities::NONE,
};

pub struct Ssd {
    read_ns: f64,
    write_ns: f64,
    /// Bytes per nanosecond.
    bandwidth: f64,
    capacity_bytes: u64,
    /// When each channel becomes free; sized once at construction.
    channel_free: Vec<u64>,
    link_free: u64,
    next_block: u64,
}

impl Ssd {
    pub fn build(p: &Args) -> Result<Ssd, SpecError> {
        let channels = p.u64("channels")? as usize;
        Ok(Ssd {
            read_ns: p.time_ns("read")?,
            write_ns: p.time_ns("write")?,
            bandwidth: p.rate("bandwidth")?,
            capacity_bytes: p.bytes("capacity")?,
            channel_free: vec![0; channels],
            link_free: 0,
            next_block: 0,
        })
    }
}

impl DeviceModel for Ssd {
    fn service_ns(&mut self, req: &IoRequest, start_ns: u64) -> u64 {
        // The channel that frees first (lowest index on ties) takes the request.
        let (ch, free) = self.channel_free.iter().copied().enumerate().min_by_key(|&(i, f)| (f, i)).unwrap_or((0, 0));
        let begin = start_ns.max(free);
        let latency = if req.write { self.write_ns } else { self.read_ns };
        let accessed = begin + round_ns(latency);
        let done = accessed.max(self.link_free) + round_ns(req.bytes() as f64 / self.bandwidth);
        self.link_free = done;
        if let Some(slot) = self.channel_free.get_mut(ch) {
            *slot = done;
        }
        self.next_block = req.end_block();
        done - start_ns
    }

    fn capacity_blocks(&self, block_size: u32) -> u64 {
        self.capacity_bytes / block_size.max(1) as u64
    }

    fn describe(&self) -> String {
        format!(
            "ssd: read {:.0} us, write {:.0} us, {} channels, {:.0} MB/s, {:.0} GB",
            self.read_ns / 1e3,
            self.write_ns / 1e3,
            self.channel_free.len(),
            self.bandwidth * 1e3,
            self.capacity_bytes as f64 / 1e9
        )
    }

    fn head_block(&self) -> u64 {
        self.next_block
    }

    fn queue_depth(&self) -> u32 {
        self.channel_free.len() as u32
    }

    /// Read latency, then the host link.
    fn expected_service(&self) -> crate::ExpectedService {
        crate::ExpectedService { positioning_ns: self.read_ns, ns_per_block: 0.0, ns_per_byte: 1.0 / self.bandwidth }
    }
}

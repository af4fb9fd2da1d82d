//! The average-cost disk of DULO §2.1 (Table 1): every request pays the average seek and the
//! average rotation (6.5 ms + 3.0 ms, the Ultrastar 18ZX's figures), and transfer is ignored.
//! Option beyond the paper: `contiguous=free` lets a request that starts where the last one
//! ended skip positioning.

use bufsim_config::SpecError;

use crate::params::{parse_rate, Args, Capabilities, Info, Param, Range};
use crate::{round_ns, DeviceModel, IoRequest};

pub const INFO: Info = Info {
    name: "avg",
    aliases: &["average"],
    paper: "DULO §2.1 and Table 1 (6.5 ms average seek + 3.0 ms average rotation of the \
             Ultrastar 18ZX; each disk request costs 9.5 ms)",
    summary: "fixed positioning cost per request (average seek + average rotation) plus an \
              optional transfer time",
    params: &[
        Param { name: "seek", default: "6.5ms", doc: "positioning cost per request: average seek", range: Range::Time(0.0, 1e12) },
        Param { name: "rotation", default: "3.0ms", doc: "average rotational delay (half a turn)", range: Range::Time(0.0, 1e12) },
        Param { name: "transfer", default: "0ms", doc: "time per block (such as 0.2ms) or a rate (such as 20MB/s); DULO ignores it", range: Range::Text("a time per block such as 0.2ms or a rate such as 20MB/s") },
        Param { name: "contiguous", default: "pay", doc: "pay: a request continuing the last one still pays seek + rotation (DULO Table 1); free: it pays transfer only", range: Range::Choice(&["pay", "free"]) },
        Param { name: "capacity", default: "18.2GB", doc: "device size", range: Range::Bytes(1, crate::MAX_CAPACITY_BYTES) },
    ],
    preset_of: None,
    caps: Capabilities::NONE,
};

enum Transfer {
    PerBlock(f64),
    /// Bytes per nanosecond.
    Rate(f64),
}

pub struct AverageDisk {
    positioning_ns: f64,
    transfer: Transfer,
    contiguous_free: bool,
    capacity_bytes: u64,
    next_block: Option<u64>,
    busy_until: u64,
}

impl AverageDisk {
    pub fn build(p: &Args) -> Result<AverageDisk, SpecError> {
        let text = p.text("transfer").trim();
        let transfer = if text.ends_with("/s") {
            Transfer::Rate(parse_rate(text).map_err(|why| p.bad("transfer", &why))?)
        } else {
            Transfer::PerBlock(
                p.time_ns("transfer")
                    .map_err(|_| p.bad("transfer", "a time per block such as 0.2ms or a rate such as 20MB/s"))?,
            )
        };
        Ok(AverageDisk {
            positioning_ns: p.time_ns("seek")? + p.time_ns("rotation")?,
            transfer,
            contiguous_free: p.choice("contiguous", &["pay", "free"])? == "free",
            capacity_bytes: p.bytes("capacity")?,
            next_block: None,
            busy_until: 0,
        })
    }
}

impl DeviceModel for AverageDisk {
    fn service_ns(&mut self, req: &IoRequest, start_ns: u64) -> u64 {
        let start = start_ns.max(self.busy_until);
        let continues = self.contiguous_free && self.next_block == Some(req.block);
        let mut t = if continues { 0.0 } else { self.positioning_ns };
        t += match self.transfer {
            Transfer::PerBlock(ns) => ns * req.blocks as f64,
            Transfer::Rate(r) => req.bytes() as f64 / r,
        };
        self.next_block = Some(req.end_block());
        self.busy_until = start + round_ns(t);
        self.busy_until - start_ns
    }

    fn capacity_blocks(&self, block_size: u32) -> u64 {
        self.capacity_bytes / block_size.max(1) as u64
    }

    fn describe(&self) -> String {
        format!(
            "avg: {:.3} ms positioning per request{}, {:.2} GB",
            self.positioning_ns / 1e6,
            if self.contiguous_free { " (free when contiguous)" } else { "" },
            self.capacity_bytes as f64 / 1e9
        )
    }

    fn head_block(&self) -> u64 {
        self.next_block.unwrap_or(0)
    }

    /// Positioning always (as `contiguous=pay` charges it), then the transfer.
    fn expected_service(&self) -> crate::ExpectedService {
        let (ns_per_block, ns_per_byte) = match self.transfer {
            Transfer::PerBlock(ns) => (ns, 0.0),
            Transfer::Rate(r) => (0.0, 1.0 / r),
        };
        crate::ExpectedService { positioning_ns: self.positioning_ns, ns_per_block, ns_per_byte }
    }
}

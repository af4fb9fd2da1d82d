//! A zoned disk: Ruemmler & Wilkes's model (IEEE Computer 1994) as DiskSim applies it to the
//! ST39102LW that DULO §4 and the prefetching paper §5 (Table 3) simulate. Deviations: no on-board
//! cache (a request that continues the previous one pays no positioning instead), no bus.

use bufsim_config::{Rng, SpecError};

use crate::params::{Args, Capabilities, Info, Param, Range};
use crate::seek::SeekCurve;
use crate::zones::{Geometry, Location};
use crate::{round_ns, DeviceModel, IoRequest};

/// The ST39102LW's zones (DiskSim's validated cheetah9LP.diskspecs, REFERENCES.md). The
/// reference gives 97 sectors of track skew and 88 "in the inner zones"; we take the four
/// innermost zones as the inner ones.
const CHEETAH_ZONES: &str = "0-846:254;848-1643:245;1645-2392:238;2394-3096:227;3098-3757:217;\
3759-4379:209;4381-4964:201;4966-5515:189:88;5516-6031:181:88;6032-6517:174:88;6518-6961:167:88";

pub const INFO: Info = Info {
    name: "disk",
    aliases: &[],
    paper: "Ruemmler & Wilkes 1994 (seek curve, zones, rotation); defaults are DiskSim's \
             validated Seagate ST39102LW (prefetching paper §5 Table 3, DULO §4)",
    summary: "zoned disk: seek curve through 1-cylinder/average/full-stroke times, rotational \
              position from absolute time, head switch, transfer at the zone's media rate",
    params: &[
        Param { name: "preset", default: "none", doc: "start from a preset (st39102lw, ultrastar-18zx, ibm-9lzx); other parameters override it", range: Range::Text("none or a disk preset (st39102lw, ultrastar-18zx, ibm-9lzx)") },
        Param { name: "rpm", default: "10045", doc: "spindle speed, revolutions per minute", range: Range::Number(1.0, 1e6) },
        Param { name: "cylinders", default: "6962", doc: "cylinders, including spares between zones", range: Range::Whole(4, u32::MAX as u64) },
        Param { name: "surfaces", default: "12", doc: "recording surfaces (heads)", range: Range::Whole(1, 1 << 16) },
        Param { name: "zones", default: CHEETAH_ZONES, doc: "first-last:sectors-per-track[:skew] per zone, separated by `;`", range: Range::Text("first-last:sectors-per-track[:skew] per zone, separated by `;`, covering every cylinder") },
        Param { name: "sector", default: "512B", doc: "bytes per sector", range: Range::Bytes(1, 1 << 20) },
        Param { name: "track-skew", default: "97", doc: "sectors each track's sector 0 trails the previous track's, for zones without their own", range: Range::Whole(0, u32::MAX as u64) },
        Param { name: "seek-single", default: "0.831ms", doc: "seek over one cylinder", range: Range::Time(1.0, 1e12) },
        Param { name: "seek-avg", default: "5.47ms", doc: "mean seek over uniformly random pairs of distinct cylinders", range: Range::Time(1.0, 1e12) },
        Param { name: "seek-full", default: "10.627ms", doc: "full-stroke seek", range: Range::Time(1.0, 1e12) },
        Param { name: "seek-knee", default: "1200", doc: "distance (cylinders, or N% of them) where the seek curve turns from sqrt to linear", range: Range::Text("a cylinder count of at least 2 such as 1200, or a share strictly between 0% and 100% such as 17%") },
        Param { name: "head-switch", default: "0.030ms", doc: "time to switch surfaces within a cylinder", range: Range::Time(0.0, 1e12) },
        Param { name: "write-settle", default: "0.461ms", doc: "extra settling before a write after positioning", range: Range::Time(0.0, 1e12) },
        Param { name: "rotation", default: "position", doc: "position: rotational wait from the platter's angle at that instant; random: uniform in one turn, seeded (storage-aware paper §4.1)", range: Range::Choice(&["position", "random"]) },
        Param { name: "bandwidth", default: "media", doc: "media: transfer at the zone's rate with track switches; or a fixed rate such as 20MB/s (storage-aware paper)", range: Range::Or(&["media"], &Range::Rate(1.0, 1e15)) },
        Param { name: "sequential", default: "contiguous", doc: "contiguous: a request starting where the last ended pays no positioning; cylinder: any request on the head's cylinder pays none (storage-aware paper §4.1)", range: Range::Choice(&["contiguous", "cylinder"]) },
        Param { name: "age", default: "0", doc: "years of backward aging (storage-aware paper §4.3): seek and rotation times / 0.9^age, bandwidth / 1.4^age; needs a fixed bandwidth", range: Range::Number(0.0, 1000.0) },
        Param { name: "seed", default: "run", doc: "seed for rotation=random: the run's (device d draws from seed + d), or a number, which every device of this spec shares (the same draws on each)", range: Range::Seed },
    ],
    preset_of: None,
    caps: Capabilities::NONE,
};

/// Table 2 of the storage-aware paper: each year of age divides seek and rotation speed by
/// this factor...
pub const AGE_SLOWDOWN_MECHANICAL: f64 = 0.9;
/// ...and bandwidth by this one.
pub const AGE_SLOWDOWN_BANDWIDTH: f64 = 1.4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rotation {
    Position,
    Random,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sequential {
    Contiguous,
    Cylinder,
}

/// The figures a disk was built from, after aging: what tests and `describe` report.
#[derive(Clone, Debug)]
pub struct DiskFigures {
    pub rpm: f64,
    pub revolution_ns: f64,
    pub cylinders: u32,
    pub seek_single_ns: f64,
    pub seek_avg_ns: f64,
    pub seek_full_ns: f64,
    pub head_switch_ns: f64,
    pub write_settle_ns: f64,
    pub sector_bytes: u32,
    /// Bytes per nanosecond when the disk has a fixed bandwidth.
    pub bandwidth: Option<f64>,
    pub age: f64,
}

pub struct Disk {
    fig: DiskFigures,
    geo: Geometry,
    seek: SeekCurve,
    /// One revolution in picoseconds, so the platter's angle at an integer-nanosecond instant
    /// is exact however long the run.
    revolution_ps: u64,
    rotation: Rotation,
    sequential: Sequential,
    rng: Rng,
    cylinder: u32,
    surface: u32,
    /// Sector after the last one served; `None` before the first request.
    next_lbn: Option<u64>,
    busy_until: u64,
    /// Block size of the last request, to report the head position in blocks.
    block_size: u32,
    preset: &'static str,
}

impl Disk {
    pub fn build(p: &Args, run_seed: u64, preset: &'static str) -> Result<Disk, SpecError> {
        let age = p.f64("age")?;
        let mech = AGE_SLOWDOWN_MECHANICAL.powf(age);
        let rpm = p.f64("rpm")? * mech;
        let cylinders = p.u64("cylinders")? as u32;
        let surfaces = p.u64("surfaces")? as u32;
        let sector_bytes = p.bytes("sector")?;
        let skew = p.u64("track-skew")? as u32;
        let geo =
            Geometry::parse(p.text("zones"), cylinders, surfaces, skew).map_err(|why| p.invalid("zones", &why))?;
        if geo.sectors() as u128 * sector_bytes as u128 > crate::MAX_CAPACITY_BYTES as u128 {
            return Err(p.invalid(
                "zones",
                &format!(
                    "the zones hold {} sectors of {sector_bytes} B, more than a device's {} B (1 EiB); give fewer \
                     cylinders, surfaces or sectors per track",
                    geo.sectors(),
                    crate::MAX_CAPACITY_BYTES
                ),
            ));
        }
        let seek_single = p.time_ns("seek-single")? / mech;
        let seek_avg = p.time_ns("seek-avg")? / mech;
        let seek_full = p.time_ns("seek-full")? / mech;
        let knee_text = p.text("seek-knee").trim();
        let knee = if let Some(pct) = knee_text.strip_suffix('%') {
            let v: f64 = pct
                .trim()
                .parse()
                .map_err(|_| p.bad("seek-knee", "a cylinder count such as 1200 or a share such as 17%"))?;
            if !(v > 0.0 && v < 100.0) {
                return Err(p.bad("seek-knee", "a share strictly between 0% and 100%"));
            }
            (v / 100.0 * cylinders as f64).round() as u32
        } else {
            p.u64("seek-knee").ok().filter(|&k| k >= 2).ok_or_else(|| {
                p.bad("seek-knee", "a cylinder count of at least 2 such as 1200, or a share such as 17%")
            })? as u32
        };
        let seek = SeekCurve::fit(cylinders, seek_single, seek_avg, seek_full, knee).map_err(|why| {
            // A knee outside the cylinders is seek-knee's fault; a curve that cannot pass
            // through the three times, seek-avg's.
            let knee_fits = (2..=cylinders.saturating_sub(2)).contains(&knee);
            p.invalid(if knee_fits { "seek-avg" } else { "seek-knee" }, &why)
        })?;
        let rotation = match p.choice("rotation", &["position", "random"])? {
            "random" => Rotation::Random,
            _ => Rotation::Position,
        };
        let sequential = match p.choice("sequential", &["contiguous", "cylinder"])? {
            "cylinder" => Sequential::Cylinder,
            _ => Sequential::Contiguous,
        };
        let bandwidth = match p.text("bandwidth").trim() {
            "media" => None,
            _ => Some(
                p.rate("bandwidth").map_err(|_| p.bad("bandwidth", "media or a rate such as 20MB/s"))?
                    / AGE_SLOWDOWN_BANDWIDTH.powf(age),
            ),
        };
        if age > 0.0 && bandwidth.is_none() {
            return Err(p.bad(
                "age",
                "0 unless bandwidth is a fixed rate such as 20MB/s: a zoned disk's media rate \
                 follows its rotation, so it cannot age by 40% a year while rotation ages by 10%",
            ));
        }
        let revolution_ns = 60e9 / rpm;
        let fig = DiskFigures {
            rpm,
            revolution_ns,
            cylinders,
            seek_single_ns: seek_single,
            seek_avg_ns: seek_avg,
            seek_full_ns: seek_full,
            head_switch_ns: p.time_ns("head-switch")? / mech,
            write_settle_ns: p.time_ns("write-settle")? / mech,
            sector_bytes: sector_bytes as u32,
            bandwidth,
            age,
        };
        Ok(Disk {
            revolution_ps: (revolution_ns * 1000.0).round() as u64,
            fig,
            geo,
            seek,
            rotation,
            sequential,
            rng: Rng::new(p.seed(run_seed)?),
            cylinder: 0,
            surface: 0,
            next_lbn: None,
            busy_until: 0,
            block_size: 4096,
            preset,
        })
    }

    pub fn figures(&self) -> &DiskFigures {
        &self.fig
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn seek_curve(&self) -> &SeekCurve {
        &self.seek
    }

    /// Time for the head to pass one sector in a zone.
    #[inline]
    fn sector_ns(&self, spt: u32) -> f64 {
        self.fig.revolution_ns / spt as f64
    }

    /// Wait at a track boundary inside a sequential transfer: the next track's first sector
    /// comes round `skew` sectors later; if switching takes longer, whole turns more.
    #[inline]
    fn crossing_ns(&self, loc: &Location, switch_ns: f64) -> f64 {
        let z = &self.geo.zones()[loc.zone];
        let skew_ns = z.skew as f64 * self.sector_ns(z.sectors_per_track);
        if switch_ns <= skew_ns {
            skew_ns
        } else {
            let turns = ((switch_ns - skew_ns) / self.fig.revolution_ns).ceil();
            skew_ns + turns * self.fig.revolution_ns
        }
    }

    /// Rotational wait from the instant `start + elapsed_ns` until `loc` reaches the head.
    #[inline]
    fn rotational_wait_ns(&mut self, start: u64, elapsed_ns: f64, loc: &Location) -> f64 {
        let rev = self.fig.revolution_ns;
        match self.rotation {
            Rotation::Random => self.rng.unit() * rev,
            Rotation::Position => {
                let phase_ps = (start as u128 * 1000 % self.revolution_ps as u128) as f64;
                let now = phase_ps / self.revolution_ps as f64 + elapsed_ns / rev;
                let wait = (self.geo.angle(loc) - now).rem_euclid(1.0);
                // Rounding must not turn "already there" into a whole turn.
                if wait > 1.0 - 1e-9 {
                    0.0
                } else {
                    wait * rev
                }
            }
        }
    }

    /// Switch time from the head's track to `to` when the transfer runs on to it.
    #[inline]
    fn switch_ns(&self, from_cyl: u32, to: &Location) -> f64 {
        if to.cylinder == from_cyl {
            self.fig.head_switch_ns
        } else {
            self.seek.time_ns(to.cylinder.abs_diff(from_cyl))
        }
    }

    /// Transfer `sectors` sectors starting at `lbn`, with the head already on its first
    /// sector. Returns the time and leaves the head on the last sector's track.
    fn transfer_ns(&mut self, mut lbn: u64, sectors: u64, first: Location) -> f64 {
        let total = self.geo.sectors();
        if let Some(bw) = self.fig.bandwidth {
            let last = self.geo.locate((lbn + sectors - 1) % total);
            self.cylinder = last.cylinder;
            self.surface = last.surface;
            return (sectors * self.fig.sector_bytes as u64) as f64 / bw;
        }
        let mut t = 0.0;
        let mut loc = first;
        let mut left = sectors;
        loop {
            let spt = self.geo.spt(&loc);
            let chunk = left.min((spt - loc.sector) as u64);
            t += chunk as f64 * self.sector_ns(spt);
            left -= chunk;
            lbn += chunk;
            self.cylinder = loc.cylinder;
            self.surface = loc.surface;
            if left == 0 {
                return t;
            }
            if lbn >= total {
                // Running off the last sector wraps to sector 0: a real seek and half a turn.
                lbn = 0;
                let next = self.geo.locate(0);
                t += self.seek.time_ns(loc.cylinder.abs_diff(next.cylinder)) + self.fig.revolution_ns / 2.0;
                loc = next;
                continue;
            }
            let next = self.geo.locate(lbn);
            t += self.crossing_ns(&next, self.switch_ns(loc.cylinder, &next));
            loc = next;
        }
    }
}

impl DeviceModel for Disk {
    fn service_ns(&mut self, req: &IoRequest, start_ns: u64) -> u64 {
        let start = start_ns.max(self.busy_until);
        let total = self.geo.sectors();
        let sector = self.fig.sector_bytes as u64;
        let first_byte = req.block as u128 * req.block_size as u128;
        let lbn = ((first_byte / sector as u128) % total as u128) as u64;
        let sectors = req.bytes().div_ceil(sector).max(1);
        let loc = self.geo.locate(lbn);
        self.block_size = req.block_size.max(1);

        let mut t = 0.0;
        let continues = match self.sequential {
            Sequential::Contiguous => self.next_lbn == Some(lbn),
            Sequential::Cylinder => self.next_lbn.is_some() && loc.cylinder == self.cylinder,
        };
        if continues {
            // No positioning; a stream that reaches a new track still pays the switch.
            let new_track = loc.cylinder != self.cylinder || loc.surface != self.surface;
            if new_track && self.sequential == Sequential::Contiguous && self.fig.bandwidth.is_none() {
                t += self.crossing_ns(&loc, self.switch_ns(self.cylinder, &loc));
            }
        } else {
            let distance = loc.cylinder.abs_diff(self.cylinder);
            t += if distance > 0 {
                self.seek.time_ns(distance)
            } else if loc.surface != self.surface {
                self.fig.head_switch_ns
            } else {
                0.0
            };
            if req.write {
                t += self.fig.write_settle_ns;
            }
            t += self.rotational_wait_ns(start, t, &loc);
        }
        t += self.transfer_ns(lbn, sectors, loc);
        self.next_lbn = Some((lbn + sectors) % total);
        self.busy_until = start + round_ns(t);
        self.busy_until - start_ns
    }

    fn capacity_blocks(&self, block_size: u32) -> u64 {
        self.geo.sectors() * self.fig.sector_bytes as u64 / block_size.max(1) as u64
    }

    fn describe(&self) -> String {
        let f = &self.fig;
        let bw = match f.bandwidth {
            Some(b) => format!("{:.2} MB/s", b * 1e3),
            None => format!("{} zones", self.geo.zones().len()),
        };
        format!(
            "{}: {:.0} rpm, {} cylinders x {} surfaces, seek {:.3}/{:.3}/{:.3} ms, {}, {:.2} GB{}",
            if self.preset == "disk" { "disk".to_string() } else { format!("disk {}", self.preset) },
            f.rpm,
            f.cylinders,
            self.geo.surfaces(),
            f.seek_single_ns / 1e6,
            f.seek_avg_ns / 1e6,
            f.seek_full_ns / 1e6,
            bw,
            (self.geo.sectors() * f.sector_bytes as u64) as f64 / 1e9,
            if f.age > 0.0 { format!(", aged {} years", f.age) } else { String::new() }
        )
    }

    fn head_block(&self) -> u64 {
        self.next_lbn.unwrap_or(0) * self.fig.sector_bytes as u64 / self.block_size as u64
    }

    /// Average seek plus half a turn, then the fixed bandwidth, or without one the media rate
    /// averaged over all tracks (each track passes under the head once per turn).
    fn expected_service(&self) -> crate::ExpectedService {
        let f = &self.fig;
        let ns_per_byte = match f.bandwidth {
            Some(bw) => 1.0 / bw,
            None => {
                let tracks: u64 = self
                    .geo
                    .zones()
                    .iter()
                    .map(|z| (z.last_cyl - z.first_cyl + 1) as u64 * self.geo.surfaces() as u64)
                    .sum();
                f.revolution_ns * tracks as f64 / (self.geo.sectors() as f64 * f.sector_bytes as f64)
            }
        };
        crate::ExpectedService { positioning_ns: f.seek_avg_ns + f.revolution_ns / 2.0, ns_per_block: 0.0, ns_per_byte }
    }
}

//! The one list of devices, device presets and schedulers, with parameters and defaults.
//! `bufsim devices` prints it; adding a model means one entry here and one file.

use bufsim_config::{Spec, SpecError};

use crate::disk::Disk;
use crate::params::{Args, Capabilities, Info, Kind};
use crate::sched::{CScan, Deadline, Noop, Sstf};
use crate::{avg, disk, sched, ssd, DeviceModel, Scheduler};
use bufsim_config::registry::{find, resolve_preset, unknown};

/// Device models, then presets (named configurations of `disk`).
pub const DEVICES: &[Info] = &[avg::INFO, disk::INFO, ssd::INFO, ST39102LW, ULTRASTAR_18ZX, IBM_9LZX];

pub const SCHEDULERS: &[Info] = &[sched::noop::INFO, sched::sstf::INFO, sched::cscan::INFO, sched::deadline::INFO];

/// The disk DULO §4 and the prefetching paper §5 simulate with DiskSim; `disk`'s defaults are
/// this drive, so the preset is the bare model.
pub const ST39102LW: Info = Info {
    name: "st39102lw",
    aliases: &["cheetah9lp", "cheetah-9lp"],
    paper: "DiskSim's validated Seagate Cheetah 9LP parameters (REFERENCES.md); prefetching \
             paper §5 Table 3; DULO §4",
    summary: "Seagate Cheetah 9LP, 9.1 GB, 10,045 rpm, 6962 cylinders, 12 surfaces, 11 zones",
    params: &[],
    preset_of: Some("disk"),
    caps: Capabilities::NONE,
};

/// The drive behind DULO §2.1's 6.5 ms / 3.0 ms. Only its speed and average seek are
/// published in the sources we reached; the geometry is derived (see docs/devices.md).
pub const ULTRASTAR_18ZX: Info = Info {
    name: "ultrastar-18zx",
    aliases: &["18zx"],
    paper: "DULO §2.1 (10,000 rpm, 6.5 ms average seek); geometry derived from its 18.2 GB \
             capacity with the Cheetah 9LP's zone profile and seek shape (docs/devices.md)",
    summary: "IBM Ultrastar 18ZX, 18.2 GB, 10,000 rpm, 6.5 ms average seek (approximate geometry)",
    params: &[],
    preset_of: Some(
        "disk(rpm=10000,cylinders=8241,surfaces=20,\
         zones=0-748:260:99;749-1497:251:96;1498-2246:242:92;2247-2995:233:89;2996-3744:225:86;\
         3745-4493:216:82;4494-5242:207:79;5243-5991:198:76;5992-6740:189:72;6741-7489:181:69;\
         7490-8240:172:66,\
         seek-single=0.99ms,seek-avg=6.5ms,seek-full=12.6ms,seek-knee=17%,write-settle=0ms)",
    ),
    caps: Capabilities::NONE,
};

/// The storage-aware paper's base disk (§4.3, Table 2), aged with `age=N` years.
pub const IBM_9LZX: Info = Info {
    name: "ibm-9lzx",
    aliases: &["9lzx"],
    paper: "storage-aware caching §4.1 (disk model) and §4.3 Table 2 (age 0: 20.0 MB/s, seek \
             5.30 ms, rotation 3.00 ms; bandwidth / 1.4 and seek, rotation / 0.9 per year)",
    summary: "IBM Ultrastar 9LZX as the storage-aware paper models it: fixed bandwidth, random \
              rotational delay, same-cylinder requests free; age=N years",
    params: &[],
    preset_of: Some(
        "disk(rpm=10000,cylinders=15110,surfaces=3,zones=0-15109:392,track-skew=0,\
         seek-single=0.805ms,seek-avg=5.30ms,seek-full=10.30ms,seek-knee=17%,head-switch=0ms,\
         write-settle=0ms,rotation=random,bandwidth=20MB/s,sequential=cylinder)",
    ),
    caps: Capabilities::NONE,
};

pub fn all_devices() -> impl Iterator<Item = &'static Info> {
    DEVICES.iter()
}

pub fn all_schedulers() -> impl Iterator<Item = &'static Info> {
    SCHEDULERS.iter()
}

pub fn lookup_device(name: &str) -> Option<&'static Info> {
    find(DEVICES, name)
}

pub fn lookup_scheduler(name: &str) -> Option<&'static Info> {
    find(SCHEDULERS, name)
}

/// Builds a device model from its checked arguments, the run's seed and the name to show.
type DeviceBuilder = fn(&Args, u64, &'static str) -> Result<Box<dyn DeviceModel>, SpecError>;

/// Each device model beside its builder (presets build through the model they stand for).
const DEVICE_BUILDERS: &[(&Info, DeviceBuilder)] = &[
    (&avg::INFO, |p, _, _| Ok(Box::new(avg::AverageDisk::build(p)?))),
    (&ssd::INFO, |p, _, _| Ok(Box::new(ssd::Ssd::build(p)?))),
    (&disk::INFO, |p, seed, shown| Ok(Box::new(Disk::build(p, seed, shown)?))),
];

/// Builds a scheduler from its checked arguments.
type SchedulerBuilder = fn(&Args) -> Result<Box<dyn Scheduler>, SpecError>;

const SCHEDULER_BUILDERS: &[(&Info, SchedulerBuilder)] = &[
    (&sched::noop::INFO, |_| Ok(Box::new(Noop::default()))),
    (&sched::sstf::INFO, |_| Ok(Box::new(Sstf::default()))),
    (&sched::cscan::INFO, |_| Ok(Box::new(CScan::default()))),
    (&sched::deadline::INFO, |p| Ok(Box::new(Deadline::build(p)?))),
];

/// A device spec resolved through presets (`ibm-9lzx(age=5)`, `disk(preset=st39102lw,rpm=7200)`):
/// the model, the preset's values, the user's arguments and the name messages show.
struct Resolved {
    model: &'static Info,
    preset: Vec<(String, String)>,
    given: Vec<(String, String)>,
    shown: &'static str,
}

fn resolve_device(spec: &Spec) -> Result<Resolved, SpecError> {
    let info = lookup_device(&spec.name).ok_or_else(|| unknown(Kind::Device, &spec.name, DEVICES, "devices"))?;
    // `disk(preset=NAME)` is the preset NAME with the other arguments on top.
    let (named, given) = match spec.args.iter().find(|(k, _)| k == "preset").filter(|_| info.name == "disk") {
        Some((_, p)) if p != "none" => {
            let presets = || DEVICES.iter().filter(|m| m.preset_of.is_some());
            let named = presets().find(|m| m.is_named(p)).ok_or_else(|| {
                let names: Vec<&str> = presets().map(|m| m.name).collect();
                SpecError(format!("device `disk`: parameter preset=`{p}` must be none or one of {}", names.join(", ")))
            })?;
            (named, spec.args.iter().filter(|(k, _)| k != "preset").cloned().collect())
        }
        _ => (info, spec.args.clone()),
    };
    let (model, preset) = resolve_preset(named, &lookup_device)?;
    Ok(Resolved { model, preset, given, shown: named.name })
}

impl Resolved {
    fn args(&self) -> Result<Args<'_>, SpecError> {
        // Messages name what the user wrote (`ibm-9lzx`), parameters come from the model.
        let shown = Info { name: self.shown, ..*self.model };
        Args::with_preset(Kind::Device, &shown, &self.given, &self.preset)
    }
}

/// Builds a disk from a spec naming `disk` or a disk preset, for callers that need the
/// concrete type (tests, the timing report).
pub fn build_disk(spec: &str, seed: u64) -> Result<Disk, SpecError> {
    let r = resolve_device(&Spec::parse(spec)?)?;
    if r.model.name != "disk" {
        return Err(SpecError(format!("`{spec}` is a {} device, not a disk", r.model.name)));
    }
    Disk::build(&r.args()?, seed, r.shown)
}

/// Builds a device from a spec such as `disk(preset=st39102lw)`, `ibm-9lzx(age=5)`, `ssd` or
/// `avg(seek=6.5ms)`. `seed` is the run's; models that draw random numbers start from it.
pub fn build_device(spec: &str, seed: u64) -> Result<Box<dyn DeviceModel>, SpecError> {
    let r = resolve_device(&Spec::parse(spec)?)?;
    let (_, build) = DEVICE_BUILDERS
        .iter()
        .find(|(i, _)| i.name == r.model.name)
        .expect("every device model is listed with its builder (tested)");
    build(&r.args()?, seed, r.shown)
}

/// Builds a scheduler from a spec such as `noop`, `cscan` or `deadline(fifo-batch=8)`.
pub fn build_scheduler(spec: &str) -> Result<Box<dyn Scheduler>, SpecError> {
    let s = Spec::parse(spec)?;
    let model = lookup_scheduler(&s.name).ok_or_else(|| unknown(Kind::Scheduler, &s.name, SCHEDULERS, "devices"))?;
    let (_, build) = SCHEDULER_BUILDERS
        .iter()
        .find(|(i, _)| i.name == model.name)
        .expect("every scheduler is listed with its builder (tested)");
    build(&Args::new(Kind::Scheduler, model, &s.args)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_device_and_scheduler_builds_with_its_defaults() {
        for m in all_devices() {
            let d = build_device(m.name, 1).unwrap_or_else(|e| panic!("{}: {e}", m.name));
            assert!(d.capacity_blocks(4096) > 0, "{}", m.name);
            assert!(!d.describe().is_empty());
        }
        for m in all_schedulers() {
            build_scheduler(m.name).unwrap_or_else(|e| panic!("{}: {e}", m.name));
        }
    }

    #[test]
    fn every_scheduler_serves_each_request_exactly_once() {
        use crate::IoRequest;
        use bufsim_config::Rng;
        for m in all_schedulers() {
            let mut s = build_scheduler(m.name).unwrap();
            let mut rng = Rng::new(9);
            let (mut pushed, mut out) = (0u64, Vec::new());
            let mut now = 0;
            for step in 0..5000 {
                now += rng.below(2_000_000);
                if rng.below(3) > 0 && step < 4000 {
                    let r = IoRequest {
                        id: pushed,
                        device: 0,
                        block: rng.below(1000),
                        blocks: 1 + rng.below(4) as u32,
                        block_size: 4096,
                        write: rng.below(3) == 0,
                        sync: true,
                        issue_ns: now,
                    };
                    s.push(r, now);
                    pushed += 1;
                } else if let Some(r) = s.pop(now, rng.below(1000)) {
                    out.push(r.id);
                }
                assert_eq!(s.len() as u64, pushed - out.len() as u64, "{}", m.name);
            }
            while let Some(r) = s.pop(now, 0) {
                out.push(r.id);
            }
            out.sort_unstable();
            assert_eq!(out, (0..pushed).collect::<Vec<_>>(), "{}", m.name);
        }
    }

    #[test]
    fn names_are_unique() {
        for list in [DEVICES, SCHEDULERS] {
            let mut names: Vec<&str> =
                list.iter().flat_map(|m| std::iter::once(m.name).chain(m.aliases.iter().copied())).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(n, names.len());
        }
    }

    #[test]
    fn presets_expand_through_the_preset_parameter_and_their_own_name() {
        let a = build_disk("disk(preset=ibm-9lzx,age=5)", 1).unwrap();
        let b = build_disk("ibm-9lzx(age=5)", 1).unwrap();
        assert_eq!(a.describe(), b.describe());
        assert!(a.describe().contains("ibm-9lzx"), "{}", a.describe());
        let cheetah = build_disk("cheetah9lp", 1).unwrap().describe();
        let plain = build_disk("disk", 1).unwrap().describe();
        assert!(cheetah.starts_with("disk st39102lw:"), "{cheetah}");
        assert_eq!(cheetah.split_once(':').unwrap().1, plain.split_once(':').unwrap().1);
        let e = build_disk("ssd", 1).err().unwrap().to_string();
        assert!(e.contains("not a disk"), "{e}");
    }
}

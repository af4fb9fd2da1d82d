//! The one list of devices, device presets and schedulers, with parameters and defaults.
//! `bufsim devices` prints it; adding a model means one entry here and one file.

use bufsim_config::{Spec, SpecError};

use crate::disk::Disk;
use crate::params::{ModelInfo, Params};
use crate::sched::{CScan, Deadline, Noop, Sstf};
use crate::{avg, disk, sched, ssd, DeviceModel, Scheduler};

/// Device models, then presets (named configurations of `disk`).
pub const DEVICES: &[ModelInfo] = &[avg::INFO, disk::INFO, ssd::INFO, ST39102LW, ULTRASTAR_18ZX, IBM_9LZX];

pub const SCHEDULERS: &[ModelInfo] = &[sched::noop::INFO, sched::sstf::INFO, sched::cscan::INFO, sched::deadline::INFO];

/// The disk DULO §4 and the prefetching paper §5 simulate with DiskSim; `disk`'s defaults are
/// this drive, so the preset is the bare model.
pub const ST39102LW: ModelInfo = ModelInfo {
    name: "st39102lw",
    aliases: &["cheetah9lp", "cheetah-9lp"],
    source: "DiskSim's validated Seagate Cheetah 9LP parameters (REFERENCES.md); prefetching \
             paper §5 Table 3; DULO §4",
    summary: "Seagate Cheetah 9LP, 9.1 GB, 10,045 rpm, 6962 cylinders, 12 surfaces, 11 zones",
    params: &[],
    preset_of: Some("disk"),
};

/// The drive behind DULO §2.1's 6.5 ms / 3.0 ms. Only its speed and average seek are
/// published in the sources we reached; the geometry is derived (see docs/devices.md).
pub const ULTRASTAR_18ZX: ModelInfo = ModelInfo {
    name: "ultrastar-18zx",
    aliases: &["18zx"],
    source: "DULO §2.1 (10,000 rpm, 6.5 ms average seek); geometry derived from its 18.2 GB \
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
};

/// The storage-aware paper's base disk (§4.3, Table 2), aged with `age=N` years.
pub const IBM_9LZX: ModelInfo = ModelInfo {
    name: "ibm-9lzx",
    aliases: &["9lzx"],
    source: "storage-aware caching §4.1 (disk model) and §4.3 Table 2 (age 0: 20.0 MB/s, seek \
             5.30 ms, rotation 3.00 ms; bandwidth / 1.4 and seek, rotation / 0.9 per year)",
    summary: "IBM Ultrastar 9LZX as the storage-aware paper models it: fixed bandwidth, random \
              rotational delay, same-cylinder requests free; age=N years",
    params: &[],
    preset_of: Some(
        "disk(rpm=10000,cylinders=15110,surfaces=3,zones=0-15109:392,track-skew=0,\
         seek-single=0.805ms,seek-avg=5.30ms,seek-full=10.30ms,seek-knee=17%,head-switch=0ms,\
         write-settle=0ms,rotation=random,bandwidth=20MB/s,sequential=cylinder)",
    ),
};

pub fn all_devices() -> impl Iterator<Item = &'static ModelInfo> {
    DEVICES.iter()
}

pub fn all_schedulers() -> impl Iterator<Item = &'static ModelInfo> {
    SCHEDULERS.iter()
}

fn find(list: &'static [ModelInfo], name: &str) -> Option<&'static ModelInfo> {
    let n = name.to_ascii_lowercase();
    list.iter().find(|m| m.name == n || m.aliases.contains(&n.as_str()))
}

pub fn lookup_device(name: &str) -> Option<&'static ModelInfo> {
    find(DEVICES, name)
}

pub fn lookup_scheduler(name: &str) -> Option<&'static ModelInfo> {
    find(SCHEDULERS, name)
}

fn unknown(kind: &str, name: &str, list: &[ModelInfo], command: &str) -> SpecError {
    let names: Vec<&str> = list.iter().map(|m| m.name).collect();
    SpecError(format!("unknown {kind} `{name}`; known {kind}s: {} (see `bufsim {command}`)", names.join(", ")))
}

/// Puts `over`'s arguments on top of `base`'s.
fn overlay(base: &mut Spec, over: &[(String, String)]) {
    for (k, v) in over {
        match base.args.iter_mut().find(|(bk, _)| bk == k) {
            Some(slot) => slot.1 = v.clone(),
            None => base.args.push((k.clone(), v.clone())),
        }
    }
}

/// Expands device presets (`ibm-9lzx(age=5)`, `disk(preset=st39102lw,rpm=7200)`) to the spec
/// of a model, the user's arguments applied last. Returns the spec and the preset's name.
fn expand_device(spec: &Spec) -> Result<(Spec, &'static ModelInfo, &'static str), SpecError> {
    let info = lookup_device(&spec.name).ok_or_else(|| unknown("device", &spec.name, DEVICES, "devices"))?;
    if let Some(base) = info.preset_of {
        let mut expanded = Spec::parse(base)?;
        overlay(&mut expanded, &spec.args);
        let (s, model, _) = expand_device(&expanded)?;
        return Ok((s, model, info.name));
    }
    if info.name == "disk" {
        if let Some((_, preset)) = spec.args.iter().find(|(k, _)| k == "preset") {
            if preset != "none" {
                let p = lookup_device(preset).filter(|p| p.preset_of.is_some()).ok_or_else(|| {
                    let presets: Vec<&str> = DEVICES.iter().filter(|m| m.preset_of.is_some()).map(|m| m.name).collect();
                    SpecError(format!(
                        "device `disk`: parameter preset=`{preset}` must be none or one of {}",
                        presets.join(", ")
                    ))
                })?;
                let rest: Vec<(String, String)> = spec.args.iter().filter(|(k, _)| k != "preset").cloned().collect();
                let mut base = Spec::parse(p.preset_of.unwrap_or("disk"))?;
                overlay(&mut base, &rest);
                let (s, model, _) = expand_device(&base)?;
                return Ok((s, model, p.name));
            }
        }
    }
    Ok((spec.clone(), info, info.name))
}

/// Builds a disk from a spec naming `disk` or a disk preset, for callers that need the
/// concrete type (tests, the timing report).
pub fn build_disk(spec: &str, seed: u64) -> Result<Disk, SpecError> {
    let (s, model, preset) = expand_device(&Spec::parse(spec)?)?;
    if model.name != "disk" {
        return Err(SpecError(format!("`{spec}` is a {} device, not a disk", model.name)));
    }
    let shown = ModelInfo { name: preset, ..*model };
    Disk::build(&Params::new("device", &shown, &s.args)?, seed, preset)
}

/// Builds a device from a spec such as `disk(preset=st39102lw)`, `ibm-9lzx(age=5)`, `ssd` or
/// `avg(seek=6.5ms)`. `seed` is the run's; models that draw random numbers start from it.
pub fn build_device(spec: &str, seed: u64) -> Result<Box<dyn DeviceModel>, SpecError> {
    let (s, model, preset) = expand_device(&Spec::parse(spec)?)?;
    // Messages name what the user wrote (`ibm-9lzx`), parameters come from the model.
    let shown = ModelInfo { name: preset, ..*model };
    let p = Params::new("device", &shown, &s.args)?;
    Ok(match model.name {
        "avg" => Box::new(avg::AverageDisk::build(&p)?),
        "ssd" => Box::new(ssd::Ssd::build(&p)?),
        "disk" => Box::new(Disk::build(&p, seed, preset)?),
        other => unreachable!("device {other} is registered but has no builder"),
    })
}

/// Builds a scheduler from a spec such as `noop`, `cscan` or `deadline(fifo-batch=8)`.
pub fn build_scheduler(spec: &str) -> Result<Box<dyn Scheduler>, SpecError> {
    let s = Spec::parse(spec)?;
    let model = lookup_scheduler(&s.name).ok_or_else(|| unknown("scheduler", &s.name, SCHEDULERS, "devices"))?;
    let p = Params::new("scheduler", model, &s.args)?;
    Ok(match model.name {
        "noop" => Box::new(Noop::default()),
        "sstf" => Box::new(Sstf::default()),
        "cscan" => Box::new(CScan::default()),
        "deadline" => Box::new(Deadline::build(&p)?),
        other => unreachable!("scheduler {other} is registered but has no builder"),
    })
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

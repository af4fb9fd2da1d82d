//! The one shape of every registry: policies, read-ahead algorithms, devices, I/O schedulers
//! and trace generators are each a list of [`Info`] entries (name, aliases, paper, parameters
//! with defaults, docs and ranges, presets, capability flags). Arguments are read through
//! [`Args`], which refuses unknown parameters and values outside their declared [`Range`], so a
//! range is written once, beside its default, and checked in one place.

use std::fmt;

use crate::spec::{Relative, Size, Spec, SpecError};

/// What kind of thing a registry lists; its noun names it in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Policy,
    Prefetch,
    Device,
    Scheduler,
    Generator,
}

impl Kind {
    pub const ALL: [Kind; 5] = [Kind::Policy, Kind::Prefetch, Kind::Device, Kind::Scheduler, Kind::Generator];

    pub fn noun(self) -> &'static str {
        match self {
            Kind::Policy => "policy",
            Kind::Prefetch => "prefetch",
            Kind::Device => "device",
            Kind::Scheduler => "scheduler",
            Kind::Generator => "generator",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Kind::Policy => "policies",
            Kind::Prefetch => "prefetchers",
            Kind::Device => "devices",
            Kind::Scheduler => "schedulers",
            Kind::Generator => "generators",
        }
    }

    pub fn from_noun(noun: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.noun() == noun)
    }
}

/// Where an amount of cache must lie relative to the cache it is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Less than the cache: some frames must stay for the rest of the policy.
    Below,
    /// At most the cache.
    AtMost,
    /// At least the cache.
    AtLeast,
}

impl Limit {
    pub fn holds(self, fraction: f64) -> bool {
        match self {
            Limit::Below => fraction < 1.0,
            Limit::AtMost => fraction <= 1.0,
            Limit::AtLeast => fraction >= 1.0,
        }
    }

    pub fn holds_blocks(self, blocks: u64, capacity: u64) -> bool {
        match self {
            // A cache of one block has no room to spare; the policy fits itself to it.
            Limit::Below => blocks < capacity || capacity < 2,
            Limit::AtMost => blocks <= capacity,
            Limit::AtLeast => blocks >= capacity,
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Limit::Below => "less than the cache",
            Limit::AtMost => "at most the cache",
            Limit::AtLeast => "at least the cache",
        }
    }
}

/// The values a parameter accepts. Bounds are inclusive.
#[derive(Clone, Copy, Debug)]
pub enum Range {
    /// A whole number from `min` to `max`.
    Whole(u64, u64),
    /// A finite number from `min` to `max`.
    Number(f64, f64),
    /// A number above zero and at most `max`.
    Positive(f64),
    /// A share of the cache from `min` to `max` (`25%`, `2x`, a bare decimal such as `0.25`),
    /// or an absolute amount (`100blocks`, `8MiB`, a bare whole number of blocks).
    Share(f64, f64),
    /// A share of the cache above zero and at most `max`, or an absolute amount of at least
    /// one block: for what must hold something (DULO's sequencing bank).
    PositiveShare(f64),
    /// An amount of cache within a [`Limit`] of it: a share is checked here, an absolute
    /// amount when the component is built for a cache (see `blocks_within` in bufsim-core).
    Cache(Limit),
    /// A time (`6.5ms`, `500us`, `0`), from `min` to `max` nanoseconds.
    Time(f64, f64),
    /// A transfer rate (`20MB/s`), from `min` to `max` bytes per second.
    Rate(f64, f64),
    /// A size with a unit (`4KiB`, `18.2GB`), from `min` to `max` bytes.
    Bytes(u64, u64),
    /// One of these words.
    Choice(&'static [&'static str]),
    /// true or false (also yes/no, on/off, 1/0).
    Flag,
    /// `run` (the run's seed) or a whole number.
    Seed,
    /// A spec of another policy, checked when it is built.
    Spec,
    /// Text with its own grammar, described here and checked by the component's parser (a
    /// disk's zone table, SLRU's segment sizes).
    Text(&'static str),
    /// One of these words, or a value in the inner range (`auto`, `adaptive`, `media`).
    Or(&'static [&'static str], &'static Range),
}

/// Shortest text of a bound: `0.5`, `1`, `1e-9`.
fn num(v: f64) -> String {
    format!("{v}")
}

impl fmt::Display for Range {
    /// What a value must be, as an error message completes "must be ...".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Range::Whole(lo, hi) if hi == u64::MAX => write!(f, "at least {lo} (a whole number)"),
            Range::Whole(0, hi) => write!(f, "a whole number, at most {hi}"),
            Range::Whole(lo, hi) => write!(f, "a whole number from {lo} to {hi} (between {lo} and {hi} inclusive)"),
            Range::Number(lo, hi) if hi == f64::MAX => write!(f, "a number, at least {}", num(lo)),
            Range::Number(lo, hi) => write!(f, "a number between {} and {}", num(lo), num(hi)),
            Range::Positive(hi) if hi == f64::MAX => f.write_str("a number above 0"),
            Range::Positive(hi) => write!(f, "a number above 0 and at most {}", num(hi)),
            Range::Share(lo, hi) if hi == f64::MAX => write!(f, "a share of the cache of at least {}x", num(lo)),
            Range::Share(lo, hi) => {
                write!(f, "a share of the cache between {}% and {}%", num(lo * 100.0), num(hi * 100.0))
            }
            Range::PositiveShare(hi) => {
                write!(f, "a share of the cache above 0% and at most {}%, or at least 1 block", num(hi * 100.0))
            }
            Range::Cache(limit) => write!(f, "a share of the cache or a size, {}", limit.words()),
            Range::Time(lo, hi) => write!(f, "a time from {}ns to {}ns, such as 6.5ms", num(lo), num(hi)),
            Range::Rate(lo, hi) => write!(f, "a rate from {}B/s to {}B/s, such as 20MB/s", num(lo), num(hi)),
            Range::Bytes(lo, hi) => write!(f, "a size from {lo}B to {hi}B, such as 4KiB"),
            Range::Choice(words) => write!(f, "one of {}", words.join(", ")),
            Range::Flag => f.write_str("true or false"),
            Range::Seed => f.write_str("run or a whole number"),
            Range::Spec => f.write_str("a policy spec such as arc or lirs(hir=1%)"),
            Range::Text(what) => f.write_str(what),
            Range::Or(words, inner) => write!(f, "{} or {inner}", words.join(", ")),
        }
    }
}

impl Range {
    /// Whether `text` is in the range. Values whose grammar belongs to a component
    /// ([`Range::Spec`], [`Range::Text`]) and absolute amounts of cache are checked by it.
    pub fn admits(&self, text: &str) -> bool {
        let t = text.trim();
        match *self {
            Range::Whole(lo, hi) => t.parse::<u64>().is_ok_and(|v| (lo..=hi).contains(&v)),
            Range::Number(lo, hi) => t.parse::<f64>().is_ok_and(|v| v.is_finite() && v >= lo && v <= hi),
            Range::Positive(hi) => t.parse::<f64>().is_ok_and(|v| v.is_finite() && v > 0.0 && v <= hi),
            Range::Share(lo, hi) => match parse_share(t) {
                Ok(Relative::Fraction(v)) => v >= lo && v <= hi,
                Ok(Relative::Absolute(_)) => true,
                Err(_) => false,
            },
            Range::PositiveShare(hi) => match parse_share(t) {
                Ok(Relative::Fraction(v)) => v > 0.0 && v <= hi,
                Ok(Relative::Absolute(_)) => true,
                Err(_) => false,
            },
            Range::Cache(limit) => match parse_share(t) {
                Ok(Relative::Fraction(v)) => limit.holds(v),
                Ok(Relative::Absolute(_)) => true,
                Err(_) => false,
            },
            Range::Time(lo, hi) => parse_time_ns(t).is_ok_and(|v| v >= lo && v <= hi),
            Range::Rate(lo, hi) => parse_rate(t).is_ok_and(|v| v * 1e9 >= lo && v * 1e9 <= hi),
            Range::Bytes(lo, hi) => matches!(Size::parse(t), Ok(Size::Bytes(b)) if (lo..=hi).contains(&b)),
            Range::Choice(words) => words.iter().any(|w| w.eq_ignore_ascii_case(t)),
            Range::Flag => parse_flag(t).is_some(),
            Range::Seed => t == "run" || t.parse::<u64>().is_ok(),
            Range::Spec | Range::Text(_) => true,
            Range::Or(words, inner) => words.iter().any(|w| w.eq_ignore_ascii_case(t)) || inner.admits(t),
        }
    }

    /// Why parameter `name`'s `text` is not in the range.
    fn refusal(&self, name: &str, text: &str) -> String {
        let t = text.trim();
        match (*self, parse_share(t)) {
            (Range::Cache(limit), Ok(Relative::Fraction(f))) => {
                format!("parameter {name}=`{t}` is {}% of the cache; it must be {}", num(f * 100.0), limit.words())
            }
            _ => format!("{name} must be {self}, not `{t}`"),
        }
    }
}

/// One parameter. `default` is parsed by the same code as a user's value, so the default is
/// written once, here; `range` is what a user's value must be.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
    pub range: Range,
}

/// What a component needs from the run or gives it beyond its kind's interface: callers read
/// these flags, never a name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Needs every block's next use in advance (OPT): the run computes it in a pre-pass, and
    /// it cannot sit where the future is unknown (a first-level cache, several timed streams,
    /// runs over prefixes of a trace).
    pub needs_future: bool,
    /// Splits the cache by program context with an access-pattern detector (AMP's manager);
    /// records a partition timeline.
    pub context_partitioned: bool,
    /// Splits the cache by device (storage-aware caching); records a partition timeline.
    pub device_partitioned: bool,
    /// Its state does not depend on the cache size it was built for, so the cache may shrink
    /// and grow during a run (the `cache_steps` option): a smaller cache gives up blocks in the
    /// policy's own victim order.
    pub resizable: bool,
}

impl Capabilities {
    pub const NONE: Capabilities =
        Capabilities { needs_future: false, context_partitioned: false, device_partitioned: false, resizable: false };
    /// [`Capabilities::NONE`] but resizable.
    pub const RESIZABLE: Capabilities = Capabilities { resizable: true, ..Capabilities::NONE };

    pub fn partitioned(self) -> bool {
        self.context_partitioned || self.device_partitioned
    }
}

/// One entry of a registry.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// The paper and section (or kernel source, datasheet) the entry follows.
    pub paper: &'static str,
    pub summary: &'static str,
    pub params: &'static [Param],
    /// For presets: the spec this name stands for; arguments given to the preset override it.
    pub preset_of: Option<&'static str>,
    pub caps: Capabilities,
}

impl Info {
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }

    pub fn is_named(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// Finds an entry by name or alias.
pub fn find<'a>(list: impl IntoIterator<Item = &'a Info>, name: &str) -> Option<&'a Info> {
    let n = name.trim();
    list.into_iter().find(|i| i.is_named(n))
}

/// `unknown policy `lur`; known policies: ...`.
pub fn unknown<'a>(kind: Kind, name: &str, list: impl IntoIterator<Item = &'a Info>, see: &str) -> SpecError {
    let names: Vec<&str> = list.into_iter().map(|i| i.name).collect();
    SpecError(format!(
        "unknown {} `{name}`; known {}: {} (see `bufsim {see}`)",
        kind.noun(),
        kind.plural(),
        names.join(", ")
    ))
}

/// The entry a preset stands for and the values it sets: the one rule of preset expansion
/// (`ibm-9lzx(age=5)`, `lirs-accusim(hir=20%)`, presets of presets). The user's arguments go on
/// top of these values through [`Args::with_preset`]. An entry that is no preset stands for
/// itself with no values.
/// An entry and the values a preset sets for it.
pub type Resolved<'l> = (&'l Info, Vec<(String, String)>);

pub fn resolve_preset<'l>(
    info: &'l Info,
    lookup: &impl Fn(&str) -> Option<&'l Info>,
) -> Result<Resolved<'l>, SpecError> {
    let Some(base) = info.preset_of else { return Ok((info, Vec::new())) };
    let spec = Spec::parse(base)?;
    let base_info = lookup(&spec.name)
        .ok_or_else(|| SpecError(format!("preset `{}` stands for unknown `{}`", info.name, spec.name)))?;
    let (root, mut values) = resolve_preset(base_info, lookup)?;
    for (k, v) in spec.args {
        match values.iter_mut().find(|(bk, _)| *bk == k) {
            Some(slot) => slot.1 = v,
            None => values.push((k, v)),
        }
    }
    Ok((root, values))
}

/// What a component is built for.
#[derive(Clone, Copy, Debug)]
pub struct BuildEnv {
    /// Cache frames (blocks).
    pub capacity: usize,
    pub block_size: u64,
    /// The run's seed; components that draw random numbers seed from it unless given `seed=`.
    pub seed: u64,
}

/// An entry's arguments, checked against its parameters (names and ranges); missing ones take
/// defaults.
pub struct Args<'a> {
    kind: Kind,
    name: &'static str,
    params: &'static [Param],
    given: &'a [(String, String)],
    /// Values a preset sets: used like the user's (and range-checked like them).
    preset: &'a [(String, String)],
}

impl<'a> Args<'a> {
    /// Refuses a parameter `info` does not declare and a value outside its range.
    pub fn new(kind: Kind, info: &Info, given: &'a [(String, String)]) -> Result<Self, SpecError> {
        for (k, v) in given {
            let Some(p) = info.param(k) else {
                let known: Vec<&str> = info.params.iter().map(|p| p.name).collect();
                return Err(SpecError(if known.is_empty() {
                    format!("{} `{}` takes no parameters (got `{k}`)", kind.noun(), info.name)
                } else {
                    format!("{} `{}` has no parameter `{k}`; it takes {}", kind.noun(), info.name, known.join(", "))
                }));
            };
            if !p.range.admits(v) {
                let spec = Spec { name: info.name.to_string(), args: given.to_vec() };
                return Err(SpecError(format!(
                    "{} `{}`: {} (in `{spec}`)",
                    kind.noun(),
                    info.name,
                    p.range.refusal(k, v)
                )));
            }
        }
        Ok(Args { kind, name: info.name, params: info.params, given, preset: &[] })
    }

    /// [`Args::new`] under a preset's own values.
    pub fn with_preset(
        kind: Kind,
        info: &Info,
        given: &'a [(String, String)],
        preset: &'a [(String, String)],
    ) -> Result<Self, SpecError> {
        Args::new(kind, info, preset)?;
        Ok(Args { preset, ..Args::new(kind, info, given)? })
    }

    /// The text of a parameter: the user's, the preset's, or the default.
    pub fn text(&self, name: &str) -> &str {
        if let Some((_, v)) = self.given.iter().chain(self.preset).find(|(k, _)| k == name) {
            return v.trim();
        }
        match self.params.iter().find(|p| p.name == name) {
            Some(p) => p.default,
            // Reading an undeclared parameter is a bug in the component, caught by the tests
            // that build every entry with its defaults.
            None => panic!("{} {} reads undeclared parameter {name}", self.kind.noun(), self.name),
        }
    }

    /// The declared range of a parameter.
    pub fn range(&self, name: &str) -> Option<Range> {
        self.params.iter().find(|p| p.name == name).map(|p| p.range)
    }

    pub fn is_given(&self, name: &str) -> bool {
        self.given.iter().any(|(k, _)| k == name)
    }

    /// `parameter {name}: {why}`, for errors that explain themselves.
    pub fn invalid(&self, name: &str, why: &str) -> SpecError {
        SpecError(format!("{} `{}`: parameter {name}: {why}", self.kind.noun(), self.name))
    }

    pub fn bad(&self, name: &str, want: &str) -> SpecError {
        SpecError(format!(
            "{} `{}`: parameter {name}=`{}` must be {want}",
            self.kind.noun(),
            self.name,
            self.text(name)
        ))
    }

    pub fn u64(&self, name: &str) -> Result<u64, SpecError> {
        self.text(name).parse().map_err(|_| self.bad(name, "a whole number ≥ 0"))
    }

    pub fn f64(&self, name: &str) -> Result<f64, SpecError> {
        match self.text(name).parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.bad(name, "a finite number")),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, SpecError> {
        parse_flag(self.text(name)).ok_or_else(|| self.bad(name, "true or false"))
    }

    /// One of a fixed set of words.
    pub fn choice(&self, name: &str, choices: &[&'static str]) -> Result<&'static str, SpecError> {
        let t = self.text(name).to_ascii_lowercase();
        choices
            .iter()
            .find(|c| **c == t)
            .copied()
            .ok_or_else(|| self.bad(name, &format!("one of {}", choices.join(", "))))
    }

    /// `seed=run` (the default) takes the run's seed; `seed=N` fixes it.
    pub fn seed(&self, run_seed: u64) -> Result<u64, SpecError> {
        if self.text("seed") == "run" {
            Ok(run_seed)
        } else {
            self.u64("seed")
        }
    }

    /// A share of the cache or an absolute amount ([`parse_share`]).
    pub fn share(&self, name: &str) -> Result<Relative, SpecError> {
        parse_share(self.text(name)).map_err(|e| self.invalid(name, &e))
    }

    /// [`Args::share`] in blocks of a cache, rounded to the nearest.
    pub fn blocks(&self, name: &str, env: &BuildEnv) -> Result<u64, SpecError> {
        let relative = self.share(name)?;
        let blocks = relative.blocks(env.capacity as u64, env.block_size);
        self.check_absolute_share(name, relative, blocks, env)?;
        Ok(blocks)
    }

    /// Holds an absolute amount the user gave (a block count or a size, `blocks` of them) to
    /// the share of the cache parameter `name` declares ([`Range::Share`]), as the registry
    /// holds a share: policies size their state by such amounts.
    pub fn check_absolute_share(
        &self,
        name: &str,
        given: Relative,
        blocks: u64,
        env: &BuildEnv,
    ) -> Result<(), SpecError> {
        let (range, lo, hi) = match (given, self.range(name)) {
            (Relative::Absolute(_), Some(r @ Range::Share(lo, hi))) => (r, lo, hi),
            (Relative::Absolute(_), Some(r @ Range::PositiveShare(hi))) => (r, 0.0, hi),
            _ => return Ok(()),
        };
        if !self.is_given(name) {
            return Ok(());
        }
        let capacity = env.capacity as f64;
        // A positive share holds at least one block.
        let least = if matches!(range, Range::PositiveShare(_)) { 1.0 } else { lo * capacity };
        let most = hi * capacity;
        let (wrong, bound) = if blocks as f64 > most {
            ("many", format!("at most {}", most.floor() as u64))
        } else if (blocks as f64) < least {
            ("few", format!("at least {}", least.ceil() as u64))
        } else {
            return Ok(());
        };
        Err(self.invalid(
            name,
            &format!(
                "{blocks} blocks is too {wrong}: it takes {range} and this cache holds {} blocks; give {bound} blocks, or a share",
                env.capacity
            ),
        ))
    }

    /// A time such as `6.5ms`, `500us`, `2s`, `0`, in nanoseconds (fractional allowed).
    pub fn time_ns(&self, name: &str) -> Result<f64, SpecError> {
        parse_time_ns(self.text(name)).map_err(|why| self.bad(name, &why))
    }

    /// A transfer rate such as `20MB/s` or `500MiB/s`, in bytes per nanosecond.
    pub fn rate(&self, name: &str) -> Result<f64, SpecError> {
        parse_rate(self.text(name)).map_err(|why| self.bad(name, &why))
    }

    /// A size with a unit (`18.2GB`, `4KiB`), in bytes, above zero.
    pub fn bytes(&self, name: &str) -> Result<u64, SpecError> {
        match Size::parse(self.text(name)) {
            Ok(Size::Bytes(b)) if b > 0 => Ok(b),
            Ok(_) => Err(self.bad(name, "a size in bytes above zero, such as 4KiB or 18.2GB")),
            Err(e) => Err(self.bad(name, &format!("a size such as 4KiB or 18.2GB ({e})"))),
        }
    }
}

fn parse_flag(t: &str) -> Option<bool> {
    match t.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// A share of the cache or a size, as every parameter in blocks reads it: a bare whole number
/// counts blocks (`history=0`, `hir-min=32`); a bare number with a decimal point is a share
/// (`hir=0.01` is 1%, as in the papers and libCacheSim's ratios); otherwise `25%`, `2x`,
/// `100blocks`, `8MiB`.
pub fn parse_share(text: &str) -> Result<Relative, String> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(Relative::Absolute(Size::Blocks(n)));
    }
    if t.contains('.') {
        if let Ok(f) = t.parse::<f64>() {
            if !(f.is_finite() && f >= 0.0) {
                return Err(format!("`{t}` must be a share of zero or more"));
            }
            return Ok(Relative::Fraction(f));
        }
    }
    Relative::parse(t).map_err(|e| e.to_string())
}

/// Splits `6.5ms` into its number and unit.
fn number_and_unit(t: &str) -> (&str, &str) {
    let split =
        t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e')).unwrap_or(t.len());
    // No unit starts with `e`, so exponents such as 1e3ns stay part of the number.
    (&t[..split], t[split..].trim())
}

/// Parses a time into nanoseconds. A bare number other than 0 is refused as ambiguous.
pub fn parse_time_ns(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, unit) = number_and_unit(t);
    let v: f64 = num.parse().map_err(|_| "a time such as 6.5ms, 500us or 2s".to_string())?;
    if !v.is_finite() {
        return Err("a finite time such as 6.5ms".into());
    }
    if v < 0.0 {
        return Err("a time that is not negative, such as 6.5ms".into());
    }
    let mult = match unit.to_ascii_lowercase().as_str() {
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" if v == 0.0 => 1.0,
        "" => return Err(format!("a time with a unit, such as {num}ms or {num}us")),
        _ => return Err("a time in ns, us, ms or s, such as 6.5ms".into()),
    };
    Ok(v * mult)
}

/// Parses `20MB/s`, `500MiB/s`, `3.2GB/s` into bytes per nanosecond (above zero).
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let want = || "a rate such as 20MB/s or 500MiB/s".to_string();
    let Some(per) = t.strip_suffix("/s") else { return Err(want()) };
    let (num, unit) = number_and_unit(per.trim());
    let v: f64 = num.parse().map_err(|_| want())?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(want()),
    };
    let r = v * mult / 1e9;
    if !(r.is_finite() && r > 0.0) {
        return Err("a rate above zero, such as 20MB/s".into());
    }
    Ok(r)
}

/// Values just outside a range and at its bounds, for tests that check every declared bound
/// is enforced: `(text, admitted)`. Ranges without numeric bounds give none.
pub fn boundary_values(range: &Range) -> Vec<(String, bool)> {
    fn below(v: f64) -> f64 {
        if v == 0.0 {
            -f64::MIN_POSITIVE
        } else {
            v - v.abs() * 1e-6
        }
    }
    fn above(v: f64) -> f64 {
        if v == 0.0 {
            f64::MIN_POSITIVE
        } else {
            v + v.abs() * 1e-6
        }
    }
    let mut out = Vec::new();
    match *range {
        Range::Whole(lo, hi) => {
            out.push((lo.to_string(), true));
            out.push((hi.to_string(), true));
            if lo > 0 {
                out.push(((lo - 1).to_string(), false));
            }
            if hi < u64::MAX {
                out.push(((hi + 1).to_string(), false));
            }
        }
        Range::Number(lo, hi) => {
            out.push((num(lo), true));
            out.push((num(below(lo)), false));
            if hi < f64::MAX {
                out.push((num(hi), true));
                out.push((num(above(hi)), false));
            }
        }
        Range::Positive(hi) => {
            out.push((num(f64::MIN_POSITIVE), true));
            out.push(("0".into(), false));
            if hi < f64::MAX {
                out.push((num(hi), true));
                out.push((num(above(hi)), false));
            }
        }
        Range::Cache(limit) => {
            let (ok, bad) = match limit {
                Limit::Below => (0.999999, 1.0),
                Limit::AtMost => (1.0, 1.000001),
                Limit::AtLeast => (1.0, 0.999999),
            };
            out.push((format!("{ok}x"), true));
            out.push((format!("{bad}x"), false));
        }
        Range::PositiveShare(hi) => {
            out.push((format!("{}x", num(f64::MIN_POSITIVE)), true));
            out.push(("0x".into(), false));
            out.push((format!("{}x", num(hi)), true));
            out.push((format!("{}x", num(above(hi))), false));
        }
        Range::Share(lo, hi) => {
            out.push((format!("{}x", num(lo)), true));
            if lo > 0.0 {
                out.push((format!("{}x", num(below(lo))), false));
            }
            if hi < f64::MAX {
                out.push((format!("{}x", num(hi)), true));
                out.push((format!("{}x", num(above(hi))), false));
            }
        }
        Range::Time(lo, hi) => {
            out.push((format!("{}ns", num(lo)), true));
            if lo > 0.0 {
                out.push((format!("{}ns", num(below(lo))), false));
            }
            if hi < f64::MAX {
                out.push((format!("{}ns", num(hi)), true));
                out.push((format!("{}ns", num(above(hi))), false));
            }
        }
        Range::Rate(lo, hi) => {
            for (v, ok) in [(lo, true), (below(lo), false), (hi, true), (above(hi), false)] {
                if v > 0.0 {
                    out.push((format!("{}B/s", num(v)), ok));
                }
            }
        }
        Range::Bytes(lo, hi) => {
            out.push((format!("{lo}B"), true));
            out.push((format!("{hi}B"), true));
            if lo > 0 {
                out.push((format!("{}B", lo - 1), false));
            }
            if hi < u64::MAX {
                out.push((format!("{}B", hi + 1), false));
            }
        }
        Range::Or(words, inner) => {
            out.extend(words.iter().map(|w| (w.to_string(), true)));
            out.extend(boundary_values(inner));
        }
        Range::Choice(words) => {
            out.extend(words.iter().map(|w| (w.to_string(), true)));
            out.push(("no-such-choice".into(), false));
        }
        Range::Flag => {
            out.extend([("true".into(), true), ("false".into(), true), ("maybe".into(), false)]);
        }
        Range::Seed => {
            out.extend([("run".into(), true), ("0".into(), true), (u64::MAX.to_string(), true), ("-1".into(), false)]);
        }
        Range::Spec | Range::Text(_) => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_admit_their_bounds_and_refuse_beyond() {
        for r in [
            Range::Whole(1, 8),
            Range::Number(0.0, 1.0),
            Range::Number(1e-9, 1.0),
            Range::Share(0.0, 1.0),
            Range::Share(1.0, f64::MAX),
            Range::PositiveShare(1.0),
            Range::Positive(1.0),
            Range::Cache(Limit::Below),
            Range::Cache(Limit::AtLeast),
            Range::Time(0.0, 1e12),
            Range::Rate(1.0, 1e15),
            Range::Bytes(1, 1 << 20),
            Range::Choice(&["a", "b"]),
            Range::Or(&["auto"], &Range::Whole(1, 5)),
        ] {
            let values = boundary_values(&r);
            assert!(values.iter().any(|(_, ok)| !ok), "{r:?}");
            for (v, ok) in values {
                assert_eq!(r.admits(&v), ok, "{r:?} {v}");
            }
        }
    }

    #[test]
    fn out_of_range_values_name_the_parameter_the_range_and_the_spec() {
        const P: &[Param] = &[Param { name: "k", default: "2", doc: "", range: Range::Whole(1, 8) }];
        let info = Info {
            name: "lru-k",
            aliases: &[],
            paper: "",
            summary: "",
            params: P,
            preset_of: None,
            caps: Capabilities::NONE,
        };
        let given = vec![("k".to_string(), "0".to_string())];
        let e = Args::new(Kind::Policy, &info, &given).err().unwrap().to_string();
        assert_eq!(
            e,
            "policy `lru-k`: k must be a whole number from 1 to 8 (between 1 and 8 inclusive), not `0` (in `lru-k(k=0)`)"
        );
    }

    #[test]
    fn presets_resolve_through_presets_to_an_entry_and_its_values() {
        const fn entry(name: &'static str, preset_of: Option<&'static str>) -> Info {
            Info { name, aliases: &[], paper: "", summary: "", params: &[], preset_of, caps: Capabilities::NONE }
        }
        const LIST: &[Info] = &[entry("base", None), entry("p", Some("base(a=1,b=2)")), entry("q", Some("p(b=3,c=4)"))];
        let lookup = |n: &str| find(LIST, n);
        let (root, values) = resolve_preset(&LIST[2], &lookup).unwrap();
        assert_eq!(root.name, "base");
        assert_eq!(Spec { name: "base".into(), args: values }.to_string(), "base(a=1,b=3,c=4)");
        assert!(resolve_preset(&LIST[0], &lookup).unwrap().1.is_empty());
    }

    #[test]
    fn times_and_rates_parse_with_units() {
        assert_eq!(parse_time_ns("6.5ms").unwrap(), 6.5e6);
        assert_eq!(parse_time_ns("500µs").unwrap(), 500e3);
        assert_eq!(parse_time_ns("0").unwrap(), 0.0);
        for bad in ["", "5", "-1ms", "ms", "5 furlongs", "inf ms", "NaNms"] {
            assert!(parse_time_ns(bad).is_err(), "{bad}");
        }
        assert!((parse_rate("20MB/s").unwrap() - 0.02).abs() < 1e-12);
        for bad in ["20MB", "0MB/s", "-3MB/s", "fastMB/s", "20 parsecs/s"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}

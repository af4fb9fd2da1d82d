//! The one list of policies: names, parameters with their defaults, papers. The CLI
//! (`bufsim policies`), Python and the docs all read it; adding a policy means one line in
//! `policies!` below and one file.

use super::forward::forward_policy;
use super::Policy;
use crate::spec::{Spec, SpecError};

pub use bufsim_config::registry::{
    Args, BuildEnv, Capabilities, Info as PolicyInfo, Kind, Limit, Param as ParamInfo, Range,
};

/// A policy that can be named in a spec string.
pub trait PolicyDef: Policy + Sized {
    /// The policy's entry; its `caps` say what it needs beyond the `Policy` events.
    const INFO: PolicyInfo;
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError>;
}

/// Runs generic code on the concrete policy type, so the hot loop is statically dispatched.
pub trait PolicyVisitor {
    type Output;
    fn visit<P: Policy + 'static>(self, policy: P) -> Self::Output;
}

macro_rules! policies {
    ($($variant:ident => $ty:ty),* $(,)?) => {
        /// Every policy, for callers that hold one without knowing its type.
        pub enum AnyPolicy { $($variant($ty)),* }

        /// The registry, in the order `bufsim policies` lists it.
        pub const POLICIES: &[PolicyInfo] = &[$(<$ty as PolicyDef>::INFO),*];

        impl AnyPolicy {
            fn build_named(info_name: &str, args: &[(String, String)], preset: &[(String, String)], env: &BuildEnv) -> Result<AnyPolicy, SpecError> {
                $(
                    if <$ty as PolicyDef>::INFO.name == info_name {
                        let a = Args::with_preset(Kind::Policy, &<$ty as PolicyDef>::INFO, args, preset)?;
                        return Ok(AnyPolicy::$variant(<$ty as PolicyDef>::build(&a, env)?));
                    }
                )*
                unreachable!("registry lookup returned unknown name {info_name}")
            }

            /// Hands the concrete policy to `v`.
            pub fn visit<V: PolicyVisitor>(self, v: V) -> V::Output {
                match self { $(AnyPolicy::$variant(p) => v.visit(p)),* }
            }
        }

        forward_policy!(enum AnyPolicy { $($variant),* });
    };
}

policies! {
    Lru => super::Lru,
    Fifo => super::Fifo,
    Clock => super::Clock,
    Mru => super::Mru,
    Random => super::Random,
    Lfu => super::Lfu,
    Opt => super::Opt,
    Arc => super::Arc,
    Mq => super::Mq,
    ClockPro => super::ClockPro,
    Car => super::Car,
    Linux2List => super::Linux2List,
    Linux => super::Linux,
    Gds => super::Gds,
    // History beyond recency.
    LruK => super::LruK,
    TwoQ => super::TwoQ,
    Lirs => super::Lirs,
    Lrfu => super::Lrfu,
    Fbr => super::Fbr,
    Dulo => super::Dulo,
    Amp => super::Amp,
    Pcc => super::Pcc,
    Dear => super::Dear,
    StaticSplit => super::StaticSplit,
    EagerLru => super::EagerLru,
    LazyLru => super::LazyLru,
    LazyClock => super::LazyClock,
    Landlord => super::Landlord,
    Sieve => super::Sieve,
    S3Fifo => super::S3Fifo,
    Slru => super::Slru,
    Clock2QPlus => super::Clock2QPlus,
    Lecar => super::Lecar,
    Cart => super::Cart,
    Gdsf => super::Gdsf,
    WTinyLfu => super::WTinyLfu,
    Hyperbolic => super::Hyperbolic,
    Lhd => super::Lhd,
    Mglru => super::Mglru,
    Cacheus => super::Cacheus,
}

/// Named configurations of registered policies, such as AccuSim's defaults (`2q-accusim`).
/// Each entry has `preset_of` set to the spec it stands for and no parameters of its own
/// (arguments given to a preset override the preset's).
pub const PRESETS: &[PolicyInfo] = &[
    PolicyInfo {
        name: "mq-accusim",
        aliases: &[],
        paper: "AccuSim's MQ (prefetching paper Table 2: 4 queues, ghost cache = cache size; its mq.cc's rules)",
        summary: "MQ as AccuSim ran it: 4 queues, lifetime = history = cache size, counts raised by prefetches only (LRU without read-ahead)",
        params: &[],
        preset_of: Some("mq(queues=4,history=1x,lifetime=1x,variant=accusim)"),
        caps: Capabilities::NONE,
    },
    // AccuSim's settings (prefetching paper Table 2 and its public sources).
    PolicyInfo {
        name: "lirs-accusim",
        aliases: &[],
        paper: "prefetching paper §5.1 and Table 2: AccuSim's LIRS (10% HIR, at least 32 blocks, stack 2x the cache; its lirs.c's rules)",
        summary: "LIRS as the prefetching paper ran it",
        params: &[],
        preset_of: Some("lirs(hir=10%,hir-min=32,stack=2x,variant=accusim)"),
        caps: Capabilities::NONE,
    },
    PolicyInfo {
        name: "2q-accusim",
        aliases: &[],
        paper: "prefetching paper Table 2: AccuSim's 2Q (A1in 25%, ghost cache = cache size)",
        summary: "2Q with Kout equal to the cache, as the prefetching paper ran it",
        params: &[],
        preset_of: Some("2q(kin=25%,kout=100%)"),
        caps: Capabilities::NONE,
    },
    PolicyInfo {
        name: "arc-accusim",
        aliases: &[],
        paper: "AccuSim's arc.cc and prefetch.cc: ARC with p from c/2, integer adaptation, REPLACE by |T1| >= max(1, p), prefetched ghosts deleted unadapted",
        summary: "ARC as AccuSim ran it for the prefetching paper",
        params: &[],
        preset_of: Some("arc(adapt=integer,variant=accusim)"),
        caps: Capabilities::NONE,
    },
    PolicyInfo {
        name: "lru2-accusim",
        aliases: &[],
        paper: "prefetching paper Table 2 and AccuSim's lru2.cc: LRU-2 (CRP 20 references, history = cache size, AccuSim's prefetch rules)",
        summary: "LRU-2 with a 20-reference CRP and history for as many blocks as the cache holds",
        params: &[],
        preset_of: Some("lru-k(k=2,crp=20,history=100%,variant=accusim)"),
        caps: Capabilities::NONE,
    },
    PolicyInfo {
        name: "qd-lp",
        aliases: &["qdlp", "qd-lp-fifo"],
        paper: "QD-LP-FIFO (Yang et al., HotOS 2023, \"FIFO can be better than LRU\" §4): S3-FIFO's queues, one hit leaves probation",
        summary: "quick demotion (10% probationary FIFO + ghost) and lazy promotion (2-bit CLOCK main)",
        params: &[],
        preset_of: Some("s3-fifo(threshold=1)"),
        caps: Capabilities::NONE,
    },
    PolicyInfo {
        name: "lfu-da",
        aliases: &["lfuda"],
        paper: "Arlitt, Cherkasova, Dilley, Friedrich & Jin, ACM PER 2000, §3: LFU with dynamic aging, K = F + L (GDSF with unit costs)",
        summary: "LFU-DA: evicts the least K = accesses + L, L set to each victim's K",
        params: &[],
        preset_of: Some("lfu(aging=dynamic)"),
        caps: Capabilities::NONE,
    },
    PolicyInfo {
        name: "lrfu-accusim",
        aliases: &[],
        paper: "AccuSim's source sets lambda = 0.5 (the prefetching paper's Table 2 says 0.001)",
        summary: "LRFU with lambda 0.5, as AccuSim's code runs it",
        params: &[],
        preset_of: Some("lrfu(lambda=0.5)"),
        caps: Capabilities::NONE,
    },
];

/// Every name `bufsim policies` lists: the policies, then the presets.
pub fn all() -> impl Iterator<Item = &'static PolicyInfo> {
    POLICIES.iter().chain(PRESETS.iter())
}

/// Finds a policy or preset by name or alias.
pub fn lookup(name: &str) -> Option<&'static PolicyInfo> {
    bufsim_config::registry::find(all(), name)
}

/// The one spelling of a policy spec, used wherever two spellings must be seen as one run (the
/// keys of a sweep): the registered name (aliases resolved, lower case), the parameters given
/// in the order the registry declares them, those equal to their default (or the preset's
/// value) dropped, and nested policy specs in their own canonical form. `LRU`, ` lru`, `lru()`
/// are `lru`; `lirs(hir=1%)` is `lirs`; `lru(,)` is an error.
pub fn canonical(spec: &str) -> Result<String, SpecError> {
    let parsed = Spec::parse(spec)?;
    let info = lookup(&parsed.name).ok_or_else(|| unknown_policy(&parsed.name))?;
    let (params, preset) = resolve(info)?;
    Args::new(Kind::Policy, params, &parsed.args)?;
    let default = |p: &ParamInfo| preset.iter().find(|(k, _)| k == p.name).map_or(p.default, |(_, d)| d.as_str());
    Ok(spelled(info.name, params.params, &parsed.args, default))
}

/// `name(args)` in one spelling: the arguments `given` in the order `params` declares them,
/// each value canonical ([`canonical_value`]), those equal to their `default` dropped. The
/// canonical form of policy and read-ahead specs ([`crate::prefetch::canonical`]).
pub(crate) fn spelled<'a>(
    name: &str,
    params: &'a [ParamInfo],
    given: &[(String, String)],
    default: impl Fn(&'a ParamInfo) -> &'a str,
) -> String {
    let mut args = Vec::new();
    for p in params {
        let Some((_, v)) = given.iter().find(|(k, _)| k == p.name) else { continue };
        let v = canonical_value(v);
        if v != canonical_value(default(p)) {
            args.push((p.name.to_string(), v));
        }
    }
    Spec { name: name.to_string(), args }.to_string()
}

/// A parameter's value in one spelling: trimmed, a decimal number in its shortest form (`1.0%`
/// is `1%`, `0.50` is `0.5`; whole numbers are left as written, so seeds keep every digit), and
/// canonical if it is itself a policy spec.
fn canonical_value(v: &str) -> String {
    let t = v.trim();
    if let Some(n) = shortest_decimal(t) {
        return n;
    }
    match Spec::parse(t) {
        Ok(s) if lookup(&s.name).is_some() => canonical(t).unwrap_or_else(|_| t.to_string()),
        _ => t.to_string(),
    }
}

/// `1.50x` as `1.5x`: a number with a decimal point and an optional `%` or `x`.
fn shortest_decimal(t: &str) -> Option<String> {
    let (num, unit) = match t.strip_suffix('%') {
        Some(n) => (n, "%"),
        None => t.strip_suffix(['x', 'X']).map_or((t, ""), |n| (n, "x")),
    };
    if !num.contains('.') || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    Some(format!("{v}{unit}"))
}

fn unknown_policy(name: &str) -> SpecError {
    bufsim_config::registry::unknown(Kind::Policy, name, all(), "policies")
}

/// Builds a policy from a spec string such as `lru` or `lfu(aging=dynamic)`.
pub fn build(spec: &str, env: &BuildEnv) -> Result<AnyPolicy, SpecError> {
    let parsed = Spec::parse(spec)?;
    build_spec(&parsed, env)
}

/// Builds a policy from a parsed spec; presets expand to their own spec with the user's
/// arguments applied on top.
pub fn build_spec(spec: &Spec, env: &BuildEnv) -> Result<AnyPolicy, SpecError> {
    let info = lookup(&spec.name).ok_or_else(|| unknown_policy(&spec.name))?;
    if env.capacity == 0 {
        return Err(SpecError("cache of 0 blocks; give at least 1block".into()));
    }
    let (base, preset) = resolve(info)?;
    AnyPolicy::build_named(base.name, &spec.args, &preset, env)
}

/// The policy a name stands for (itself, or what a preset expands to) and the values its
/// preset sets.
fn resolve(info: &'static PolicyInfo) -> Result<bufsim_config::registry::Resolved<'static>, SpecError> {
    bufsim_config::registry::resolve_preset(info, &lookup)
}

/// The capabilities of the policy a name (or alias, or preset) stands for; none for unknown names.
pub fn capabilities(name: &str) -> Capabilities {
    lookup(name).and_then(|info| resolve(info).ok()).map_or(Capabilities::NONE, |(base, _)| base.caps)
}

/// Whether a spec names a policy that needs the future (the run then computes next-use
/// times in a pre-pass).
pub fn needs_future(spec: &str) -> bool {
    Spec::parse(spec).map(|s| capabilities(&s.name).needs_future).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_spellings_share_one_canonical_form() {
        assert_eq!(canonical("lirs(hir=1.0%)").unwrap(), "lirs");
        assert_eq!(canonical("lirs(hir=2.50%)").unwrap(), canonical("lirs(hir=2.5%)").unwrap());
        assert_eq!(canonical("mq(history=4.0x)").unwrap(), "mq");
        assert_eq!(canonical("lrfu(lambda=0.0010)").unwrap(), "lrfu");
        assert_eq!(canonical("random(seed=18446744073709551615)").unwrap(), "random(seed=18446744073709551615)");
    }

    #[test]
    fn capabilities_come_from_the_policies_flags_and_presets_inherit_them() {
        assert!(capabilities("opt").needs_future && needs_future("opt"));
        assert!(!needs_future("lru") && !needs_future("nosuch(") && !needs_future("nosuch"));
        assert!(capabilities("pcc").context_partitioned && capabilities("eager-lru").device_partitioned);
        assert!(capabilities("lazy-clock").partitioned() && !capabilities("arc").partitioned());
        // A preset has the capabilities of the policy it expands to.
        assert_eq!(capabilities("lru2-accusim"), capabilities("lru-k"));
        // Every listed name answers, none panics.
        for p in all() {
            let _ = capabilities(p.name);
        }
    }

    fn env() -> BuildEnv {
        BuildEnv { capacity: 100, block_size: 4096, seed: 1 }
    }

    #[test]
    fn every_spelling_of_a_spec_has_one_canonical_form() {
        let c = |s: &str| canonical(s).map_err(|e| e.to_string());
        for s in ["lru", "LRU", " lru", "lru()", " Lru ( ) "] {
            assert_eq!(c(s).unwrap(), "lru", "{s:?}");
        }
        assert!(c("lru(,)").unwrap_err().contains("empty parameter"));
        assert_eq!(c("lirs(hir=1%)").unwrap(), "lirs");
        assert_eq!(c("lirs(stack=2x, HIR = 5%)").unwrap(), "lirs(hir=5%,stack=2x)");
        assert_eq!(c("second-chance").unwrap(), "clock");
        assert_eq!(c("lirs-accusim(hir=10%)").unwrap(), "lirs-accusim");
        assert_eq!(c("lirs-accusim(hir=20%)").unwrap(), "lirs-accusim(hir=20%)");
        assert!(c("amp(default=LRU)").unwrap().starts_with("amp(default=lru"), "{}", c("amp(default=LRU)").unwrap());
        assert!(c("lur").unwrap_err().contains("unknown policy `lur`"));
        assert!(c("lru(k=2)").unwrap_err().contains("takes no parameters"));
        // Canonical forms build what the spellings build.
        for s in ["LRU", "lirs(hir=1%)", "lirs(stack=2x, HIR = 5%)"] {
            assert!(build(&canonical(s).unwrap(), &env()).is_ok(), "{s}");
        }
    }

    #[test]
    fn unknown_names_and_parameters_are_explained() {
        let e = build("lur", &env()).err().unwrap().to_string();
        assert!(e.contains("unknown policy `lur`") && e.contains("lru"), "{e}");
        let e = build("lru(k=2)", &env()).err().unwrap().to_string();
        assert!(e.contains("takes no parameters"), "{e}");
        let e = build("random(sed=3)", &env()).err().unwrap().to_string();
        assert!(e.contains("no parameter `sed`") && e.contains("seed"), "{e}");
    }

    #[test]
    fn every_default_parses() {
        for info in all() {
            build(info.name, &env()).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> =
            all().flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied())).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len());
    }
}

//! `bufsim run`'s command line as the native entry point reads it. It takes only what it can
//! run exactly as the Python command line would and declines everything else (`None`): help,
//! progress bars, a first level, argparse's abbreviations, a value it cannot read as the
//! Python parser would, anything that prints a note or a warning. Declined command lines go to
//! the Python command line, which owns every message.

use bufsim_core::options::{OptionField, Options, Section};
use serde_json::{Map, Value};

/// The option sections `bufsim run` has flags for.
pub const RUN_SECTIONS: &[Section] =
    &[Section::Trace, Section::Run, Section::Timing, Section::Layout, Section::Storage, Section::Execution];

/// Options a sweep repeats (its grid) and a run takes once.
pub const GRID_OPTIONS: &[&str] = &["device", "io_scheduler"];

/// How an option of the core's table is spelled on the command line: `--io-scheduler`, a short
/// flag for a few, and `--no-final-flush` for a boolean that is on by default (the flag turns
/// it off).
pub struct Flag {
    pub long: String,
    pub short: Option<&'static str>,
    /// A boolean on by default: the flag sets it to false.
    pub negated: bool,
}

pub fn flag(f: &OptionField) -> Flag {
    let dashed = f.name.replace('_', "-");
    let negated = f.sql == "BOOLEAN" && f.default == Value::Bool(true);
    let long = if negated { format!("--no-{dashed}") } else { format!("--{dashed}") };
    let short = match f.name {
        "jobs" => Some("-j"),
        _ => None,
    };
    Flag { long, short, negated }
}

/// A `bufsim run` the native entry point can carry out.
#[derive(Debug, Default, PartialEq)]
pub struct RunArgs {
    pub trace: String,
    pub policies: Vec<String>,
    pub caches: Vec<String>,
    pub prefetches: Vec<String>,
    /// The options set, as the JSON object the core resolves.
    pub options: Map<String, Value>,
    pub json: bool,
}

/// A cache size written in decimal units (`64MB`): the Python command line says what it
/// became, so such a run is declined.
fn decimal_size(size: &str) -> bool {
    let s = size.trim();
    let Some(rest) = s.strip_suffix('B') else { return false };
    let unit = rest.chars().last();
    matches!(unit, Some('k' | 'K' | 'M' | 'G' | 'T'))
        && rest[..rest.len() - 1].trim().chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// A value as the Python parser reads it for this option, or `None` where it might read it
/// otherwise (or reject it).
fn value_of(f: &OptionField, text: &str) -> Option<Value> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match f.sql {
        // Whole numbers (seeds): Python also takes 0x.., 0o.. and underscores; declined here.
        "UBIGINT" => text.parse::<u64>().ok().filter(|_| digits).map(Value::from),
        // Numbers that also take units (block sizes): digits are a number, the rest text.
        "BIGINT" if digits => text.parse::<i64>().ok().map(Value::from),
        "BIGINT" => text.is_ascii().then(|| Value::from(text)),
        _ => Some(Value::from(text)),
    }
}

/// Reads `run ARGS...`; `None` when the native entry point should not run it.
pub fn parse(words: &[String]) -> Option<RunArgs> {
    let (command, rest) = words.split_first()?;
    if command != "run" {
        return None;
    }
    let fields: Vec<OptionField> =
        Options::fields().into_iter().filter(|f| RUN_SECTIONS.contains(&f.section)).collect();
    let flags: Vec<Flag> = fields.iter().map(flag).collect();
    let mut args = RunArgs::default();
    let mut trace = None;
    let mut i = 0;
    let mut only_positional = false;
    while i < rest.len() {
        let word = &rest[i];
        i += 1;
        if only_positional || word == "-" || !word.starts_with('-') {
            if trace.replace(word.clone()).is_some() {
                return None; // a second positional: argparse's error
            }
            continue;
        }
        if word == "--" {
            only_positional = true;
            continue;
        }
        if word == "--json" {
            args.json = true;
            continue;
        }
        // A flag and its value (the next word; `--flag=value` and `-pVALUE` are declined).
        let mut take = || {
            let v = rest.get(i).filter(|v| !v.starts_with('-') || v.as_str() == "-")?.clone();
            i += 1;
            Some(v)
        };
        match word.as_str() {
            "--policy" | "-p" => args.policies.push(take()?),
            "--cache" | "-c" => args.caches.push(take()?),
            "--prefetch" => args.prefetches.push(take()?),
            _ => {
                let k = flags.iter().position(|fl| &fl.long == word || fl.short == Some(word.as_str()))?;
                let (f, fl) = (&fields[k], &flags[k]);
                if f.sql == "BOOLEAN" {
                    args.options.insert(f.name.into(), Value::Bool(!fl.negated));
                } else {
                    let v = value_of(f, &take()?)?;
                    if f.many && !GRID_OPTIONS.contains(&f.name) {
                        let list = args.options.entry(f.name).or_insert_with(|| Value::Array(vec![]));
                        let list = list.as_array_mut()?;
                        if f.keyed.is_some() && !list.is_empty() {
                            // Keyed entries given more than once: the Python side checks that
                            // no entry repeats an earlier one's keys.
                            return None;
                        }
                        list.push(v);
                    } else if args.options.insert(f.name.into(), v).is_some() {
                        return None; // given twice: the Python side's error
                    }
                }
            }
        }
    }
    args.trace = trace?;
    // What the Python command line follows with a note or a warning on standard error.
    if args.caches.iter().any(|c| decimal_size(c)) || args.options.get("skip_bad") == Some(&Value::Bool(true)) {
        return None;
    }
    if args.policies.is_empty() {
        args.policies.push("lru".into());
    }
    if args.caches.is_empty() {
        args.caches.push("64MiB".into());
    }
    if args.prefetches.is_empty() {
        args.prefetches.push("none".into());
    }
    Some(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_plain_run_with_options() {
        let a = parse(&words("run t.csv -p lru -p arc -c 16MiB --prefetch linux --seed 7 --block-size 8192 --json"))
            .unwrap();
        assert_eq!(a.trace, "t.csv");
        assert_eq!(a.policies, ["lru", "arc"]);
        assert_eq!((a.caches.as_slice(), a.prefetches.as_slice()), (&["16MiB".to_string()][..], &["linux".into()][..]));
        assert_eq!(a.options.get("seed"), Some(&Value::from(7u64)));
        assert_eq!(a.options.get("block_size"), Some(&Value::from(8192i64)));
        assert!(a.json);
        let d = parse(&words("run t.csv")).unwrap();
        assert_eq!(
            (d.policies, d.caches, d.prefetches),
            (vec!["lru".into()], vec!["64MiB".into()], vec!["none".into()])
        );
    }

    #[test]
    fn what_the_python_command_line_must_say_is_declined() {
        for line in [
            "run",
            "run a b",
            "run t.csv --help",
            "run t.csv --progress",
            "run t.csv --pol lru",
            "run t.csv --policy=lru",
            "run t.csv -c 64MB",
            "run t.csv --seed 0x10",
            "run t.csv --seed",
            "run t.csv --skip-bad",
            "run t.csv --first-level lru",
            "run t.csv --device ssd --device st39102lw",
            "run t.csv --think 0 --think trace",
            "run t.csv --block-size 4KiB --block-size 8KiB",
            "run t.csv --timing --device-for 0=ssd --device-for 0=st39102lw",
            "sweep t.csv",
        ] {
            assert_eq!(parse(&words(line)), None, "{line}");
        }
    }

    #[test]
    fn booleans_on_by_default_are_turned_off_by_their_no_flag() {
        let f = Options::fields().into_iter().find(|f| f.default == Value::Bool(true) && f.sql == "BOOLEAN");
        if let Some(f) = f {
            let a = parse(&words(&format!("run t.csv {}", flag(&f).long))).unwrap();
            assert_eq!(a.options.get(f.name), Some(&Value::Bool(false)));
        }
    }
}

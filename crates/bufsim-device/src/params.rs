//! Parameters of devices and schedulers: their declared defaults and typed readers for times
//! (`6.5ms`), rates (`20MB/s`), sizes (`18.2GB`), counts and choices. A default is parsed by
//! the same code as a user's value, so it is written once, in the model's `INFO`.

use bufsim_config::{Size, SpecError};

#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

/// A device model, device preset or scheduler as `bufsim devices` lists it.
#[derive(Clone, Copy, Debug)]
pub struct ModelInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// Where the model and its default figures come from (paper section, datasheet).
    pub source: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamInfo],
    /// For presets: the spec this name stands for; arguments given to the preset override it.
    pub preset_of: Option<&'static str>,
}

/// A model's arguments, checked against its declared parameters; missing ones take defaults.
pub struct Params<'a> {
    kind: &'static str,
    model: &'static str,
    infos: &'static [ParamInfo],
    given: &'a [(String, String)],
}

impl<'a> Params<'a> {
    /// `kind` is "device" or "scheduler", used in messages.
    pub fn new(kind: &'static str, info: &ModelInfo, given: &'a [(String, String)]) -> Result<Self, SpecError> {
        for (k, _) in given {
            if !info.params.iter().any(|p| p.name == k) {
                let known: Vec<&str> = info.params.iter().map(|p| p.name).collect();
                return Err(SpecError(if known.is_empty() {
                    format!("{kind} `{}` takes no parameters (got `{k}`)", info.name)
                } else {
                    format!("{kind} `{}` has no parameter `{k}`; it takes {}", info.name, known.join(", "))
                }));
            }
        }
        Ok(Params { kind, model: info.name, infos: info.params, given })
    }

    /// The user's text for a parameter, or its default.
    pub fn text(&self, name: &str) -> &str {
        if let Some((_, v)) = self.given.iter().find(|(k, _)| k == name) {
            return v;
        }
        match self.infos.iter().find(|p| p.name == name) {
            Some(p) => p.default,
            // A model reading a parameter it did not declare is a bug in this crate, caught by
            // the registry test that builds every model with its defaults.
            None => panic!("{} {} reads undeclared parameter {name}", self.kind, self.model),
        }
    }

    /// `parameter {name}: {why}`, for errors that explain themselves.
    pub fn invalid(&self, name: &str, why: &str) -> SpecError {
        SpecError(format!("{} `{}`: parameter {name}: {why}", self.kind, self.model))
    }

    pub fn bad(&self, name: &str, want: &str) -> SpecError {
        SpecError(format!("{} `{}`: parameter {name}=`{}` must be {want}", self.kind, self.model, self.text(name)))
    }

    pub fn u64(&self, name: &str) -> Result<u64, SpecError> {
        self.text(name).trim().parse().map_err(|_| self.bad(name, "a whole number ≥ 0"))
    }

    /// A whole number in `[lo, hi]`.
    pub fn u64_in(&self, name: &str, lo: u64, hi: u64) -> Result<u64, SpecError> {
        let v = self.u64(name)?;
        if v < lo || v > hi {
            return Err(self.bad(name, &format!("a whole number from {lo} to {hi}")));
        }
        Ok(v)
    }

    /// A finite number ≥ `lo`.
    pub fn f64_min(&self, name: &str, lo: f64) -> Result<f64, SpecError> {
        let v: f64 = self.text(name).trim().parse().map_err(|_| self.bad(name, &format!("a number ≥ {lo}")))?;
        if !v.is_finite() || v < lo {
            return Err(self.bad(name, &format!("a number ≥ {lo}")));
        }
        Ok(v)
    }

    /// A time such as `6.5ms`, `500us`, `2s`, `0`, in nanoseconds (fractional allowed).
    pub fn time_ns(&self, name: &str) -> Result<f64, SpecError> {
        parse_time_ns(self.text(name)).map_err(|why| self.bad(name, &why))
    }

    /// A time that must be above zero.
    pub fn positive_time_ns(&self, name: &str) -> Result<f64, SpecError> {
        let v = self.time_ns(name)?;
        if v <= 0.0 {
            return Err(self.bad(name, "a time above zero, such as 5ms"));
        }
        Ok(v)
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

    /// One of a fixed set of words.
    pub fn choice(&self, name: &str, choices: &[&'static str]) -> Result<&'static str, SpecError> {
        let t = self.text(name).trim().to_ascii_lowercase();
        choices
            .iter()
            .find(|c| **c == t)
            .copied()
            .ok_or_else(|| self.bad(name, &format!("one of {}", choices.join(", "))))
    }

    /// `seed=run` (the default) takes the run's seed; `seed=N` fixes it.
    pub fn seed(&self, run_seed: u64) -> Result<u64, SpecError> {
        if self.text("seed").trim() == "run" {
            Ok(run_seed)
        } else {
            self.u64("seed")
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_with_units() {
        assert_eq!(parse_time_ns("6.5ms").unwrap(), 6.5e6);
        assert_eq!(parse_time_ns("500us").unwrap(), 500e3);
        assert_eq!(parse_time_ns("500µs").unwrap(), 500e3);
        assert_eq!(parse_time_ns("5s").unwrap(), 5e9);
        assert_eq!(parse_time_ns("0").unwrap(), 0.0);
        assert_eq!(parse_time_ns("30ns").unwrap(), 30.0);
        for bad in ["", "5", "-1ms", "ms", "5 furlongs", "inf ms", "NaNms"] {
            assert!(parse_time_ns(bad).is_err(), "{bad}");
        }
        assert!(parse_time_ns("-1ms").unwrap_err().contains("not negative"));
    }

    #[test]
    fn rates_parse_with_units() {
        assert!((parse_rate("20MB/s").unwrap() - 0.02).abs() < 1e-12);
        assert!((parse_rate("1GiB/s").unwrap() - 1.073741824).abs() < 1e-12);
        for bad in ["20MB", "0MB/s", "-3MB/s", "fastMB/s", "20 parsecs/s"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}

//! Spec strings (`lru`, `lirs(hir=1%)`, `amp(default=arc(p=0),threshold=0.4)`) and sizes
//! (`64MiB`, `4KiB`, `2000blocks`, `25%`, `4x`): one parser shared by the CLI, Python and
//! config files.

use std::fmt;

/// A spec string or size that could not be understood. The message says what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

fn err<T>(msg: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(msg.into()))
}

/// `name(key=value,...)` split into its parts. Values are kept as text (they may be nested
/// specs) and typed by the component that owns them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub name: String,
    pub args: Vec<(String, String)>,
}

impl Spec {
    pub fn parse(text: &str) -> Result<Spec, SpecError> {
        let t = text.trim();
        if t.is_empty() {
            return err("empty spec; write a name such as `lru` or `lirs(hir=1%)`");
        }
        let (name, body) = match t.find('(') {
            None => (t, None),
            Some(open) => {
                if !t.ends_with(')') {
                    return err(format!("`{t}`: missing closing parenthesis"));
                }
                (&t[..open], Some(&t[open + 1..t.len() - 1]))
            }
        };
        let name = name.trim().to_ascii_lowercase();
        if name.contains(',') {
            // `-p lru,arc`: a list where one spec goes.
            return err(format!(
                "`{t}`: one spec at a time (a comma separates parameters only inside parentheses); for several, repeat the option, as in -p lru -p arc"
            ));
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '+') {
            return err(format!(
                "`{t}`: a spec starts with a name of letters, digits, dashes and `+`, like `lru`, `lru-k(k=2)` or `clock2q+`"
            ));
        }
        let mut args: Vec<(String, String)> = Vec::new();
        // `lru()` has no parameters; `lru(,)` or `lru(k=2,)` has an empty one, a slip worth naming.
        if let Some(body) = body.filter(|b| !b.trim().is_empty()) {
            for part in split_top_level(body).map_err(|m| SpecError(format!("`{t}`: {m}")))? {
                let part = part.trim();
                if part.is_empty() {
                    return err(format!(
                        "`{t}`: empty parameter between commas; write key=value pairs separated by single commas"
                    ));
                }
                let Some(eq) = part.find('=') else {
                    return err(format!("`{t}`: parameter `{part}` needs a value, as in key=value"));
                };
                let key = part[..eq].trim().to_ascii_lowercase().replace('_', "-");
                let value = part[eq + 1..].trim().to_string();
                if key.is_empty() || value.is_empty() {
                    return err(format!("`{t}`: parameter `{part}` needs a key and a value"));
                }
                if args.iter().any(|(k, _)| *k == key) {
                    return err(format!("`{t}`: parameter `{key}` is given twice"));
                }
                args.push((key, value));
            }
        }
        Ok(Spec { name, args })
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.args.is_empty() {
            f.write_str("(")?;
            for (i, (k, v)) in self.args.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{k}={v}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(body: &str) -> Result<Vec<&str>, &'static str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced parentheses");
                }
            }
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses");
    }
    parts.push(&body[start..]);
    Ok(parts)
}

/// An amount of storage: bytes, or a count of blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    Blocks(u64),
}

impl Size {
    /// Parses `4KiB`, `64MiB`, `1GiB`, `512B`, `2000blocks`; decimal `KB`/`MB`/`GB` are powers of
    /// 1000. A bare number is refused because it is ambiguous, but for `0`, which is `0B` in any
    /// unit (as a bare `0` is a time).
    pub fn parse(text: &str) -> Result<Size, SpecError> {
        let t = text.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = (&t[..split], t[split..].trim());
        if t.starts_with('-') {
            return err(format!("size `{t}` is negative; give a positive size such as 64MiB or 2000blocks"));
        }
        if num.is_empty() {
            return err(format!("size `{t}` has no number; write e.g. 64MiB, 4KiB or 2000blocks"));
        }
        let mult: u64 = match unit.to_ascii_lowercase().as_str() {
            "blocks" | "block" | "blk" | "blks" => {
                let n: u64 = num.parse().map_err(|_| {
                    if num.bytes().all(|b| b.is_ascii_digit()) {
                        SpecError(format!("size `{t}`: a block count must be below 2^64"))
                    } else {
                        SpecError(format!("size `{t}`: a block count must be a whole number"))
                    }
                })?;
                return Ok(Size::Blocks(n));
            }
            "" if num.bytes().all(|b| b == b'0') => return Ok(Size::Bytes(0)),
            "" => {
                return err(format!(
                    "size `{t}` has no unit; write {num}blocks for a block count or add a unit such as KiB, MiB, GiB"
                ))
            }
            "b" => 1,
            "kib" | "k" => 1 << 10,
            "mib" | "m" => 1 << 20,
            "gib" | "g" => 1 << 30,
            "tib" | "t" => 1 << 40,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            "tb" => 1_000_000_000_000,
            other => {
                return err(format!(
                    "size `{t}`: unknown unit `{other}`; use B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB in powers of 1000) or blocks"
                ))
            }
        };
        let bytes = if num.contains('.') {
            let v: f64 = num.parse().map_err(|_| SpecError(format!("size `{t}`: `{num}` is not a number")))?;
            let b = v * mult as f64;
            if !(b.is_finite() && b < u64::MAX as f64) || b.fract() != 0.0 {
                return err(format!("size `{t}` is not a whole number of bytes"));
            }
            b as u64
        } else {
            let v: u64 = num.parse().map_err(|_| SpecError(format!("size `{t}`: `{num}` is not a whole number")))?;
            v.checked_mul(mult).ok_or_else(|| SpecError(format!("size `{t}` is too large")))?
        };
        Ok(Size::Bytes(bytes))
    }

    /// Whole blocks of `block_size` bytes (a partial block is dropped).
    pub fn to_blocks(self, block_size: u64) -> u64 {
        match self {
            Size::Blocks(n) => n,
            Size::Bytes(b) => b / block_size,
        }
    }
}

/// Parses a cache size into a number of blocks, refusing zero.
pub fn parse_cache_blocks(text: &str, block_size: u64) -> Result<u64, SpecError> {
    let blocks = Size::parse(text)?.to_blocks(block_size);
    if blocks == 0 {
        return err(format!(
            "cache size `{}` holds no whole {block_size}-byte block; give at least 1block",
            text.trim()
        ));
    }
    Ok(blocks)
}

/// A size given relative to the cache (`25%`, `4x`) or absolutely (`1000blocks`, `8MiB`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Relative {
    Fraction(f64),
    Absolute(Size),
}

impl Relative {
    pub fn parse(text: &str) -> Result<Relative, SpecError> {
        let t = text.trim();
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| SpecError(format!("`{t}` is not a percentage like 25%")))?;
            if !(v.is_finite() && v >= 0.0) {
                return err(format!("`{t}`: a percentage must be zero or more"));
            }
            return Ok(Relative::Fraction(v / 100.0));
        }
        if let Some(x) = t.strip_suffix(['x', 'X']) {
            let v: f64 = x.trim().parse().map_err(|_| SpecError(format!("`{t}` is not a multiple like 4x")))?;
            if !(v.is_finite() && v >= 0.0) {
                return err(format!("`{t}`: a multiple must be zero or more"));
            }
            return Ok(Relative::Fraction(v));
        }
        Ok(Relative::Absolute(
            Size::parse(t).map_err(|e| SpecError(format!("{e} (or give a share of the cache such as 25% or 4x)")))?,
        ))
    }

    /// Blocks for a cache of `capacity` blocks. Fractions round to the nearest block.
    pub fn blocks(self, capacity: u64, block_size: u64) -> u64 {
        match self {
            Relative::Fraction(f) => (f * capacity as f64).round() as u64,
            Relative::Absolute(s) => s.to_blocks(block_size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_specs_is_refused_with_the_way_to_give_several() {
        let e = Spec::parse("lru,arc").unwrap_err().to_string();
        assert!(e.contains("one spec at a time") && e.contains("-p lru -p arc"), "{e}");
        assert_eq!(Spec::parse("lru-k(k=2,history=4x)").unwrap().args.len(), 2);
    }

    #[test]
    fn parses_specs_with_nested_values() {
        let s = Spec::parse("AMP(default=lirs(hir=1%), threshold=0.4)").unwrap();
        assert_eq!(s.name, "amp");
        assert_eq!(
            s.args,
            vec![("default".to_string(), "lirs(hir=1%)".to_string()), ("threshold".to_string(), "0.4".to_string())]
        );
        assert_eq!(s.to_string(), "amp(default=lirs(hir=1%),threshold=0.4)");
        assert_eq!(Spec::parse("lru").unwrap().args.len(), 0);
        assert_eq!(Spec::parse("lru()").unwrap().args.len(), 0);
    }

    #[test]
    fn rejects_malformed_specs() {
        for bad in
            ["", "lru(", "lru(k)", "lru(k=1,k=2)", "l ru", "lru(a=(1)", "(x=1)", "lru(,)", "lru(k=1,)", "lru(,k=1)"]
        {
            assert!(Spec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_sizes_with_units() {
        assert_eq!(Size::parse("4KiB").unwrap(), Size::Bytes(4096));
        assert_eq!(Size::parse("64MiB").unwrap().to_blocks(4096), 16384);
        assert_eq!(Size::parse("1GiB").unwrap(), Size::Bytes(1 << 30));
        assert_eq!(Size::parse("2000blocks").unwrap(), Size::Blocks(2000));
        assert_eq!(Size::parse("1.5KiB").unwrap(), Size::Bytes(1536));
        assert_eq!(Size::parse("1MB").unwrap(), Size::Bytes(1_000_000));
        assert_eq!(Size::parse("0").unwrap(), Size::Bytes(0));
        for bad in ["", "12", "0.5", "10", "-4KiB", "4 furlongs", "KiB", "1.5blocks", "99999999999999999999GiB"] {
            assert!(Size::parse(bad).is_err(), "{bad}");
        }
        assert!(parse_cache_blocks("2KiB", 4096).is_err());
        assert!(parse_cache_blocks("0blocks", 4096).is_err());
        assert_eq!(parse_cache_blocks("6KiB", 4096).unwrap(), 1);
    }

    #[test]
    fn parses_relative_sizes() {
        assert_eq!(Relative::parse("25%").unwrap().blocks(1000, 4096), 250);
        assert_eq!(Relative::parse("4x").unwrap().blocks(1000, 4096), 4000);
        assert_eq!(Relative::parse("8KiB").unwrap().blocks(1000, 4096), 2);
        assert!(Relative::parse("-5%").is_err());
        assert!(Relative::parse("lots").is_err());
    }
}

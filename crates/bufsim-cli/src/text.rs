//! What `bufsim run` prints: the run table and one JSON object per run. Written once, here:
//! the native entry point prints with it, and the Python command line calls it through
//! `bufsim._core`, so both print the same bytes.

use std::fmt::Write as _;

use bufsim_core::row::RESULT_FIELDS;
use serde_json::{Map, Value};

/// An aligned text table: cells marked `right` right-aligned, the others left-aligned; a rule
/// of dashes under the headers; no trailing spaces.
pub fn format_table(headers: &[String], rows: &[Vec<String>], right: &[bool]) -> String {
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, (cell, &w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let pad = " ".repeat(w.saturating_sub(width(cell)));
            if right.get(i).copied().unwrap_or(false) {
                out.push_str(&pad);
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&pad);
            }
        }
        out.trim_end().to_string()
    };
    let mut lines = vec![line(headers)];
    lines.push(widths.iter().map(|&w| "-".repeat(w)).collect::<Vec<_>>().join("  "));
    lines.extend(rows.iter().map(|r| line(r)));
    lines.join("\n")
}

/// A byte count as the table shows it: whole binary units when exact (`64MiB`), else one
/// decimal (`1.5KiB`), bytes below a KiB.
pub fn human_bytes(n: u64) -> String {
    for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= scale && n.is_multiple_of(scale) {
            return format!("{}{unit}", n / scale);
        }
        if n >= scale {
            return format!("{:.1}{unit}", n as f64 / scale as f64);
        }
    }
    format!("{n}B")
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn fixed(row: &Map<String, Value>, name: &str, digits: usize) -> String {
    row.get(name).and_then(Value::as_f64).map_or_else(String::new, |x| format!("{x:.digits$}"))
}

/// A timed run's row: its execution time is filled (`null` in count mode).
fn is_timed(row: &Map<String, Value>) -> bool {
    row.get("exec_time_s").is_some_and(|v| !v.is_null())
}

/// The run table of result rows (the core's result fields by name): read-ahead columns when
/// some run prefetches, timing columns when some run is timed, a device column when timed runs
/// use more than one device.
pub fn results_table(rows: &[Map<String, Value>]) -> String {
    let get = |r: &Map<String, Value>, name: &str| r.get(name).map(text).unwrap_or_default();
    let prefetching = rows.iter().any(|r| get(r, "prefetch") != "none");
    let timed = rows.iter().any(is_timed);
    let mut devices: Vec<String> = if timed { rows.iter().map(|r| get(r, "device")).collect() } else { vec![] };
    devices.retain(|d| !d.is_empty());
    devices.sort();
    devices.dedup();
    let by_device = devices.len() > 1;
    let mut headers = vec!["policy"];
    if prefetching {
        headers.push("prefetch");
    }
    if by_device {
        headers.push("device");
    }
    headers.extend(["cache", "blocks", "requests", "accesses", "hits", "misses", "hit ratio", "disk reqs"]);
    if prefetching {
        headers.extend(["sync", "async", "blocks read", "prefetched", "unused"]);
    }
    if timed {
        headers.extend(["exec s", "MB/s", "io s", "stall s", "sync ms", "async ms", "p99 ms", "util"]);
    }
    let mut table = Vec::with_capacity(rows.len());
    for r in rows {
        let mut row = vec![get(r, "policy")];
        if prefetching {
            row.push(get(r, "prefetch"));
        }
        if by_device {
            row.push(get(r, "device"));
        }
        let count = |name: &str| r.get(name).and_then(Value::as_u64).unwrap_or(0);
        row.push(human_bytes(count("cache_blocks") * count("block_size")));
        for name in ["cache_blocks", "requests", "accesses", "hits", "misses"] {
            row.push(get(r, name));
        }
        row.push(fixed(r, "hit_ratio", 4));
        row.push(get(r, "disk_requests"));
        if prefetching {
            for name in ["sync_requests", "async_requests", "blocks_read", "prefetched", "prefetched_unused"] {
                row.push(get(r, name));
            }
        }
        if timed {
            if is_timed(r) {
                let util = r
                    .get("devices")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d.get("utilization").and_then(Value::as_f64))
                    .fold(0.0, f64::max);
                row.push(fixed(r, "exec_time_s", 3));
                row.push(fixed(r, "throughput_mb_s", 2));
                row.push(fixed(r, "io_time_s", 3));
                row.push(fixed(r, "stall_time_s", 3));
                row.push(fixed(r, "sync_time_ms", 2));
                row.push(fixed(r, "async_time_ms", 2));
                row.push(fixed(r, "response_p99_ms", 2));
                row.push(format!("{util:.2}"));
            } else {
                row.resize(row.len() + 8, String::new());
            }
        }
        table.push(row);
    }
    let left = 1 + prefetching as usize + by_device as usize;
    let right: Vec<bool> = (0..headers.len()).map(|i| i >= left).collect();
    let headers: Vec<String> = headers.into_iter().map(String::from).collect();
    format_table(&headers, &table, &right)
}

/// One run as a JSON object on one line, its fields in the result table's order, written as
/// Python's `json.dumps` writes it (`", "` and `": "` separators, ASCII only, floats in their
/// shortest round-trip form). Count-mode runs leave out the fields only timed runs fill.
pub fn json_line(row: &Map<String, Value>) -> String {
    let timed = is_timed(row);
    let mut out = String::from("{");
    let mut first = true;
    for f in RESULT_FIELDS.iter().filter(|f| timed || !f.timed) {
        if !first {
            out.push_str(", ");
        }
        first = false;
        write_string(&mut out, f.name);
        out.push_str(": ");
        write_value(&mut out, row.get(f.name).unwrap_or(&Value::Null));
    }
    out.push('}');
    out
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) if !n.is_f64() => write!(out, "{u}").unwrap(),
            (_, Some(i), _) if !n.is_f64() => write!(out, "{i}").unwrap(),
            (_, _, Some(x)) => out.push_str(&python_float(x)),
            _ => out.push_str("null"),
        },
        Value::String(s) => write_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, k);
                out.push_str(": ");
                write_value(out, x);
            }
            out.push('}');
        }
    }
}

/// A string as `json.dumps` writes it: ASCII only, everything else as `\uXXXX` (UTF-16).
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(out, "\\u{u:04x}").unwrap();
                }
            }
        }
    }
    out.push('"');
}

/// A float as Python's `repr` writes it: the shortest digits that read back to the same value,
/// positional from 1e-4 up to 1e16 (with `.0` when whole), scientific outside (`1e-05`,
/// `1.5e+16`).
pub fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.2345e-5".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exp) {
        let (head, tail) = digits.split_at(1);
        let dot = if tail.is_empty() { String::new() } else { format!(".{tail}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{head}{dot}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let whole = exp as usize + 1;
    if digits.len() <= whole {
        format!("{sign}{digits}{}.0", "0".repeat(whole - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..whole], &digits[whole..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_python_writes_them() {
        for (x, repr) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.5, "0.5"),
            (0.1, "0.1"),
            (0.8741234, "0.8741234"),
            (1e-4, "0.0001"),
            (1e-5, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (123456.789, "123456.789"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (2.5e300, "2.5e+300"),
            (-3.0e-300, "-3e-300"),
            (1.0 / 3.0, "0.3333333333333333"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(python_float(x), repr, "{x}");
        }
    }

    #[test]
    fn strings_are_ascii_with_escapes() {
        let mut out = String::new();
        write_string(&mut out, "a\"b\\c\nd\u{1}é😀");
        assert_eq!(out, r#""a\"b\\c\nd\u0001\u00e9\ud83d\ude00""#);
    }

    #[test]
    fn tables_align_numbers_right_and_names_left() {
        let t = format_table(
            &["policy".into(), "hits".into()],
            &[vec!["lru".into(), "12".into()], vec!["arc".into(), "1234".into()]],
            &[false, true],
        );
        assert_eq!(t, "policy  hits\n------  ----\nlru       12\narc     1234");
    }

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(human_bytes(64 << 20), "64MiB");
        assert_eq!(human_bytes(1536), "1.5KiB");
        assert_eq!(human_bytes(100), "100B");
        assert_eq!(human_bytes(3 << 30), "3GiB");
    }
}

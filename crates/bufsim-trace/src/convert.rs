//! `bufsim convert`: any trace into bufsim's binary format, streaming.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::bst::BstWriter;
use crate::error::{Location, TraceError};
use crate::format::Format;
use crate::reader::{ReadOptions, SkipReport, TraceReader};

/// What a conversion read and wrote.
#[derive(Clone, Debug)]
pub struct ConvertSummary {
    /// The input's format (detected or given).
    pub format: Format,
    pub requests: u64,
    /// File or device names in the output's name table.
    pub names: usize,
    /// Size of the output in bytes.
    pub bytes: u64,
    pub skipped: SkipReport,
}

/// Converts the trace at `input` (in `format`, or detected; `-` is standard input) into a
/// `.bst` file at `output`, reading the input once. The output appears only when the whole
/// input was read: it is written to a fresh file of its own in the output's directory (created
/// exclusively, so no planted file or symlink is followed and two conversions never share one)
/// and renamed into place at the end, so a failed conversion leaves nothing behind and
/// concurrent conversions each leave a whole file.
pub fn convert(
    input: &str,
    format: Option<Format>,
    output: &str,
    opts: &ReadOptions,
) -> Result<ConvertSummary, TraceError> {
    if output == crate::STDIN {
        return Err(TraceError::unknown_format(
            output,
            "a .bst is written to a file, not standard output; give a file name with -o",
        ));
    }
    if input != crate::STDIN {
        if let (Ok(a), Ok(b)) = (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
            if a == b {
                return Err(TraceError::unknown_format(
                    output,
                    "is the input trace; write the converted trace to another file",
                ));
            }
        }
    }
    let mut reader = TraceReader::open_with(input, format, opts)?;
    let format = reader.format();
    let (file, tmp) = create_fresh(output)?;
    let result = (|| {
        let mut w = BstWriter::new(file, output, reader.address_kind(), reader.in_blocks(), reader.columns())?;
        while let Some(r) = reader.next_request()? {
            w.write(&r).map_err(|e| {
                TraceError::malformed(input, Location::File, format!("request {}: {}", w.records() + 1, e.message))
            })?;
        }
        let requests = w.records();
        let names = reader.file_names().to_vec();
        let file = w.finish(&names)?;
        file.sync_all().map_err(|e| TraceError::io(output, &e))?;
        let bytes = file.metadata().map_err(|e| TraceError::io(output, &e))?.len();
        Ok((requests, names.len(), bytes))
    })();
    match result {
        Ok((requests, names, bytes)) => {
            std::fs::rename(&tmp, output).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                TraceError::io(output, &e)
            })?;
            Ok(ConvertSummary { format, requests, names, bytes, skipped: reader.skipped().clone() })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Writes `output` the way [`convert`] does: `write` fills a fresh file beside it, which is
/// synced and renamed into place only when `write` succeeds (nothing is left behind otherwise).
/// Returns what `write` returned and the output's size in bytes.
pub fn write_atomically<T>(
    output: &str,
    write: impl FnOnce(File) -> Result<(File, T), TraceError>,
) -> Result<(T, u64), TraceError> {
    if output == crate::STDIN {
        return Err(TraceError::unknown_format(
            output,
            "the trace is written to a file, not standard output; give a file name with -o",
        ));
    }
    let (file, tmp) = create_fresh(output)?;
    let result = write(file).and_then(|(file, t)| {
        file.sync_all().map_err(|e| TraceError::io(output, &e))?;
        let bytes = file.metadata().map_err(|e| TraceError::io(output, &e))?.len();
        Ok((t, bytes))
    });
    match result {
        Ok(r) => {
            std::fs::rename(&tmp, output).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                TraceError::io(output, &e)
            })?;
            Ok(r)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Refuses to write over the input trace itself.
pub fn check_not_input(input: &str, output: &str) -> Result<(), TraceError> {
    if input != crate::STDIN {
        if let (Ok(a), Ok(b)) = (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
            if a == b {
                return Err(TraceError::unknown_format(
                    output,
                    "is the input trace; write the converted trace to another file",
                ));
            }
        }
    }
    Ok(())
}

/// A new, empty file beside `output` (`.NAME.PID-N.partial`), created exclusively: it fails
/// rather than open anything already there, a symlink included.
fn create_fresh(output: &str) -> Result<(File, PathBuf), TraceError> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let out = Path::new(output);
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Some(name) = out.file_name() else {
        return Err(TraceError::unknown_format(output, "names a directory; give the output file's name"));
    };
    let mut last = None;
    for _ in 0..100 {
        let n = SERIAL.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let tmp = dir.join(format!(".{}.{}-{n}-{nanos:x}.partial", name.to_string_lossy(), std::process::id()));
        match OpenOptions::new().write(true).read(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(TraceError::io(output, &e)),
        }
    }
    Err(TraceError::io(output, &last.expect("tried at least once")))
}

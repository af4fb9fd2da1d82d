//! `bufsim convert`: any trace into bufsim's binary format, streaming.

use std::fs::File;

use crate::bst::BstWriter;
use crate::error::{Location, TraceError};
use crate::format::Format;
use crate::reader::{resolve, ReadOptions, SkipReport, TraceReader};

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

/// Converts the trace at `input` (in `format`, or detected) into a `.bst` file at `output`.
/// The output appears only when the whole input was read: it is written beside it under a
/// temporary name and renamed at the end, so a failed conversion leaves nothing behind.
pub fn convert(input: &str, format: Option<Format>, output: &str, opts: &ReadOptions) -> Result<ConvertSummary, TraceError> {
    let format = resolve(input, format)?;
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
        if a == b {
            return Err(TraceError::unknown_format(output, "is the input trace; write the converted trace to another file"));
        }
    }
    let mut reader = TraceReader::open_with(input, Some(format), opts)?;
    let tmp = format!("{output}.partial");
    let result = (|| {
        let file = File::create(&tmp).map_err(|e| TraceError::io(output, &e))?;
        let mut w = BstWriter::new(file, output, reader.address_kind(), reader.in_blocks(), reader.columns())?;
        while let Some(r) = reader.next_request()? {
            w.write(&r).map_err(|e| {
                TraceError::malformed(input, Location::File, format!("request {}: {}", w.records() + 1, e.message))
            })?;
        }
        let requests = w.records();
        let names = reader.file_names().to_vec();
        let file = w.finish(&names)?;
        let bytes = file.metadata().map_err(|e| TraceError::io(output, &e))?.len();
        Ok((requests, names.len(), bytes))
    })();
    match result {
        Ok((requests, names, bytes)) => {
            std::fs::rename(&tmp, output).map_err(|e| TraceError::io(output, &e))?;
            Ok(ConvertSummary { format: reader.format(), requests, names, bytes, skipped: reader.skipped().clone() })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

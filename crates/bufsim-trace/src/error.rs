//! Reader errors that say which file, where in it, and what to do.

use std::fmt;

/// Where in a trace an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of a text trace.
    Line(u64),
    /// Byte offset of the record in a binary trace.
    Byte(u64),
    /// The whole file (it is missing, or its format cannot be told).
    File,
}

/// Kind of a trace error, so bindings can map it to a specific exception.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceErrorKind {
    NotFound,
    Io,
    UnknownFormat,
    Malformed,
    /// The work was cancelled while it read the trace (`Progress::cancel`).
    Interrupted,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub path: String,
    pub location: Location,
    pub kind: TraceErrorKind,
    pub message: String,
}

impl TraceError {
    pub fn malformed(path: &str, location: Location, message: impl Into<String>) -> Self {
        TraceError { path: path.to_string(), location, kind: TraceErrorKind::Malformed, message: message.into() }
    }

    pub fn io(path: &str, err: &std::io::Error) -> Self {
        if err.get_ref().is_some_and(|e| e.is::<Cancelled>()) {
            return TraceError::interrupted(path);
        }
        let (kind, message) = match err.kind() {
            std::io::ErrorKind::NotFound => (TraceErrorKind::NotFound, "no such file; check the path".to_string()),
            std::io::ErrorKind::PermissionDenied => {
                (TraceErrorKind::Io, "permission denied; check the file's permissions".to_string())
            }
            // What decompressors report for a corrupt or cut-off gzip or zstd stream.
            // zstd's own names for a corrupt frame ("Dictionary mismatch", "Corrupted block
            // detected") come as other kinds.
            kind if is_corrupt_frame(err)
                || matches!(
                    kind,
                    std::io::ErrorKind::InvalidData
                        | std::io::ErrorKind::InvalidInput
                        | std::io::ErrorKind::UnexpectedEof
                ) =>
            {
                (TraceErrorKind::Malformed, format!("cannot decompress: {err}; the file is corrupt or cut short"))
            }
            _ => (TraceErrorKind::Io, format!("cannot read: {err}")),
        };
        TraceError { path: path.to_string(), location: Location::File, kind, message }
    }

    pub fn interrupted(path: &str) -> Self {
        TraceError {
            path: path.to_string(),
            location: Location::File,
            kind: TraceErrorKind::Interrupted,
            message: "interrupted".to_string(),
        }
    }

    pub fn unknown_format(path: &str, message: impl Into<String>) -> Self {
        TraceError {
            path: path.to_string(),
            location: Location::File,
            kind: TraceErrorKind::UnknownFormat,
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Location::Line(n) => write!(f, "{}:{}: {}", self.path, n, self.message),
            Location::Byte(b) => write!(f, "{}: byte {}: {}", self.path, b, self.message),
            Location::File => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for TraceError {}

/// What a read of a cancelled work fails with (`Progress::cancel`); [`TraceError::io`] tells
/// it by this payload.
#[derive(Debug)]
pub struct Cancelled;

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Cancelled {}

/// Shows the offending text of a line, shortened so an error stays one line.
pub(crate) fn excerpt(text: &[u8]) -> String {
    const MAX: usize = 80;
    let s = String::from_utf8_lossy(text);
    let s = s.trim_end_matches(['\r', '\n']);
    if s.chars().count() > MAX {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}...")
    } else {
        s.to_string()
    }
}

/// Whether `err` is a decompressor's report of damaged data rather than a failure to read.
fn is_corrupt_frame(err: &std::io::Error) -> bool {
    let text = err.to_string().to_ascii_lowercase();
    ["dictionary mismatch", "corrupt", "checksum", "unknown frame descriptor", "frame parameter"]
        .iter()
        .any(|w| text.contains(w))
}

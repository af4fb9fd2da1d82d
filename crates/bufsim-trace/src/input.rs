//! Opening a trace: the file, and a streaming decompressor when its first bytes are the magic
//! of gzip (`1f 8b`) or zstd (`28 b5 2f fd`), whatever the file is called.

use std::fs::File;
use std::io::{BufRead, BufReader};

use crate::error::TraceError;

pub(crate) const READ_BUFFER: usize = 1 << 20;

/// How a trace file is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// Tells the compression from a file's first bytes.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

pub(crate) fn open_file(path: &str) -> Result<File, TraceError> {
    let f = File::open(path).map_err(|e| TraceError::io(path, &e))?;
    let meta = f.metadata().map_err(|e| TraceError::io(path, &e))?;
    if meta.is_dir() {
        return Err(TraceError::unknown_format(path, "is a directory; give a trace file"));
    }
    Ok(f)
}

/// Wraps `inner` in a decompressor if its first bytes ask for one.
pub fn decompressed(mut inner: Box<dyn BufRead + Send>, path: &str) -> Result<(Box<dyn BufRead + Send>, Compression), TraceError> {
    let head = loop {
        match inner.fill_buf() {
            Ok(h) => break h,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io(path, &e)),
        }
    };
    let c = Compression::sniff(head);
    let out: Box<dyn BufRead + Send> = match c {
        Compression::None => inner,
        // Multi-member: `cat a.gz b.gz` and parallel gzip tools write several members.
        Compression::Gzip => Box::new(BufReader::with_capacity(READ_BUFFER, flate2::bufread::MultiGzDecoder::new(inner))),
        Compression::Zstd => {
            let d = zstd::stream::read::Decoder::with_buffer(inner).map_err(|e| TraceError::io(path, &e))?;
            Box::new(BufReader::with_capacity(READ_BUFFER, d))
        }
    };
    Ok((out, c))
}

/// Opens `path` for reading, decompressing as it goes.
pub(crate) fn open_input(path: &str) -> Result<(Box<dyn BufRead + Send>, Compression), TraceError> {
    let file = open_file(path)?;
    decompressed(Box::new(BufReader::with_capacity(READ_BUFFER, file)), path)
}

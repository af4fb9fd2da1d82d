//! Opening a trace: the file (or standard input, `-`), and a streaming decompressor when its
//! first bytes are the magic of gzip (`1f 8b`) or zstd (`28 b5 2f fd`), whatever it is called.
//!
//! Every trace is opened once. What format detection looks at is read into a buffer that the
//! reader then consumes first, so a pipe, a FIFO or standard input loses nothing to detection.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use crate::error::TraceError;
use crate::progress::Meter;

/// Bytes read from a file at a time. Small beside a core's second-level cache (1 MiB on this
/// machine's cores): every read writes its whole buffer, and a buffer as large as the cache
/// would push the simulation's tables out of it on every refill. With 1 MiB reads (and a
/// 1.5 MiB decode buffer above them) ARC on a 5M-request Zipf trace at 1% took 3% more CPU
/// time than with these (benches/compare_speed.py).
pub(crate) const READ_BUFFER: usize = 1 << 16;

/// The name that stands for standard input.
pub const STDIN: &str = "-";

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

/// Whether the trace at `path` can be read more than once: a regular file can, standard input,
/// a pipe (`<(zcat t.gz)`, `/dev/stdin`) or a FIFO cannot. Looks without opening, since opening
/// a FIFO waits for its writer.
pub fn rewindable(path: &str) -> bool {
    path != STDIN && std::fs::metadata(path).map(|m| m.is_file()).unwrap_or(true)
}

/// What a pre-pass on an input that cannot be read twice is told.
pub fn not_rewindable(path: &str, what: &str) -> TraceError {
    let kind = std::fs::metadata(path).map(|m| m.file_type()).ok();
    if kind.is_some_and(|t| t.is_dir()) {
        return TraceError::unknown_format(path, "is a directory; give a trace file");
    }
    let name = match kind {
        _ if path == STDIN => "standard input",
        Some(t) if t.is_char_device() || t.is_block_device() => "this input is a device and",
        _ => "this input is a pipe or FIFO and",
    };
    TraceError::unknown_format(
        path,
        format!("{what} reads the trace twice, but {name} cannot be read again; save the trace to a file first (`bufsim convert {path} -o t.bst`)"),
    )
}

/// How long opening a FIFO waits for its writer before saying that it waits: a writer started
/// beside bufsim (`bufsim run f & producer > f`) connects unremarked, and someone left looking
/// at a silent terminal learns why soon.
pub(crate) const WRITER_PATIENCE_MS: libc::c_int = 1000;

/// How often a wait for a FIFO's writer (or reader) asks whether its call was cancelled.
pub(crate) const CANCEL_POLL_MS: libc::c_int = 100;

/// An opened trace file.
pub(crate) struct TraceFile {
    pub(crate) file: File,
    /// A byte already read from a FIFO while finding out whether it had a writer; it comes
    /// before the rest of `file`.
    pub(crate) early: Option<u8>,
}

impl TraceFile {
    /// The whole content, `early` first, with the file's reads counted on `meter`.
    fn into_read(self, meter: &Meter) -> Box<dyn Read + Send> {
        let file = meter.counted(self.file);
        match self.early {
            Some(b) => Box::new(std::io::Cursor::new([b]).chain(file)),
            None => file,
        }
    }
}

pub(crate) fn open_file(path: &str, meter: &Meter) -> Result<TraceFile, TraceError> {
    if path == STDIN {
        return Ok(TraceFile { file: stdin_file(path)?, early: None });
    }
    // Opened without blocking: opening a FIFO for reading otherwise waits, silently and for
    // ever, until some program opens it for writing.
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| TraceError::io(path, &e))?;
    let meta = f.metadata().map_err(|e| TraceError::io(path, &e))?;
    if meta.is_dir() {
        return Err(TraceError::unknown_format(path, "is a directory; give a trace file"));
    }
    let early = if meta.file_type().is_fifo() { wait_for_writer(&f, path, meter)? } else { None };
    set_blocking(&f).map_err(|e| TraceError::io(path, &e))?;
    Ok(TraceFile { file: f, early })
}

/// Waits until the FIFO `f` (open without blocking) has a writer, saying so once on standard
/// error when none has come within [`WRITER_PATIENCE_MS`]; returns the byte it read, if any.
///
/// It must wait before any read: with no writer, a read of an empty FIFO ends at once, as an
/// empty trace would. poll() wakes when data comes or a writer has come and gone (POLLHUP);
/// when it times out, a read tells a writer that has not written yet (the read would block)
/// from no writer at all (the read ends). After the message it waits in steps of
/// [`CANCEL_POLL_MS`], so a cancelled call (Ctrl-C in Python) stops waiting.
fn wait_for_writer(f: &File, path: &str, meter: &Meter) -> Result<Option<u8>, TraceError> {
    if ready(f, WRITER_PATIENCE_MS, path)? {
        return Ok(None);
    }
    let (mut file, mut byte) = (f, [0u8; 1]);
    match file.read(&mut byte) {
        Ok(1) => return Ok(Some(byte[0])),
        Ok(_) => {}
        // A writer is there: the blocking reads that follow wait for its data.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
        Err(e) => return Err(TraceError::io(path, &e)),
    }
    eprintln!("bufsim: waiting for a writer on FIFO {path} (Ctrl-C to stop)");
    while !ready(f, CANCEL_POLL_MS, path)? {
        meter.go_on(path)?;
    }
    Ok(None)
}

/// Whether `f` became readable (data, or its writer gone) within `timeout_ms`.
fn ready(f: &File, timeout_ms: libc::c_int, path: &str) -> Result<bool, TraceError> {
    let mut fd = libc::pollfd { fd: f.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    loop {
        // SAFETY: one valid pollfd, for a descriptor `f` keeps open.
        match unsafe { libc::poll(&mut fd, 1, timeout_ms) } {
            0 => return Ok(false),
            n if n > 0 => return Ok(true),
            _ => {
                let e = std::io::Error::last_os_error();
                // A signal with a handler (Python's SIGINT handler) landed on this thread: the
                // handler has noted it, and the caller learns of it through the meter.
                if e.kind() != std::io::ErrorKind::Interrupted {
                    let message = format!("cannot wait for a writer on this FIFO: {e}");
                    return Err(TraceError { message, ..TraceError::io(path, &e) });
                }
            }
        }
    }
}

/// Clears the O_NONBLOCK that [`open_file`] opened with: the readers expect reads that wait
/// (and the writers of a FIFO, writes that wait).
pub(crate) fn set_blocking(f: &File) -> std::io::Result<()> {
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor `f` keeps open, with flags it returned.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Standard input as a file of its own (a duplicate descriptor), read without Rust's stdin lock
/// and line buffer.
fn stdin_file(path: &str) -> Result<File, TraceError> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().map_err(|e| TraceError::io(path, &e))?;
    Ok(File::from(fd))
}

/// Wraps `inner` in a decompressor if its first bytes ask for one.
pub fn decompressed(
    mut inner: Box<dyn BufRead + Send>,
    path: &str,
) -> Result<(Box<dyn BufRead + Send>, Compression), TraceError> {
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
        Compression::Gzip => {
            Box::new(BufReader::with_capacity(READ_BUFFER, flate2::bufread::MultiGzDecoder::new(inner)))
        }
        Compression::Zstd => {
            let d = zstd::stream::read::Decoder::with_buffer(inner).map_err(|e| TraceError::io(path, &e))?;
            Box::new(BufReader::with_capacity(READ_BUFFER, d))
        }
    };
    Ok((out, c))
}

/// An opened trace: its decompressed content, with the first bytes already read (for format
/// detection) held in front of the rest.
pub(crate) struct Opened {
    /// The (decompressed) length when known: a whole plain file, or content shorter than the head.
    pub(crate) len: Option<u64>,
    pub(crate) head: Vec<u8>,
    rest: Box<dyn BufRead + Send>,
    /// The file itself, for readers that read it at positions (an uncompressed `.bst`).
    pub(crate) file: Option<File>,
}

impl Opened {
    /// Opens `path` and reads up to `head` bytes of its decompressed content.
    pub(crate) fn open(path: &str, head: usize) -> Result<Opened, TraceError> {
        Self::open_metered(path, head, &Meter::default())
    }

    /// [`Opened::open`], starting a "reading" stage on `meter` (the file's length when known)
    /// that counts the bytes read from the file (compressed bytes for a compressed file).
    pub(crate) fn open_metered(path: &str, head: usize, meter: &Meter) -> Result<Opened, TraceError> {
        let opened = open_file(path, meter)?;
        let meta = opened.file.metadata().map_err(|e| TraceError::io(path, &e))?;
        let regular = meta.is_file() && path != STDIN;
        let keep = if regular { opened.file.try_clone().ok() } else { None };
        let name = if path == STDIN { "standard input" } else { path };
        meter.stage(&format!("reading {name}"), "B", if regular { meta.len() } else { 0 });
        Self::from_read(opened.into_read(meter), path, head, regular.then_some(meta.len()), keep)
    }

    /// Reads up to `head` bytes of any input's decompressed content; `plain_len` is its length
    /// when known, `file` the file for positional reads (both only for a regular file).
    pub(crate) fn from_read(
        input: Box<dyn Read + Send>,
        path: &str,
        head: usize,
        plain_len: Option<u64>,
        keep: Option<File>,
    ) -> Result<Opened, TraceError> {
        let (mut rest, compression) = decompressed(Box::new(BufReader::with_capacity(READ_BUFFER, input)), path)?;
        let mut buf = Vec::with_capacity(head);
        (&mut rest).take(head as u64).read_to_end(&mut buf).map_err(|e| TraceError::io(path, &e))?;
        let len = if buf.len() < head {
            Some(buf.len() as u64)
        } else if compression == Compression::None {
            plain_len
        } else {
            None
        };
        let file = if compression == Compression::None { keep } else { None };
        Ok(Opened { len, head: buf, rest, file })
    }

    /// Passes over `n` bytes of the head (text detection found only comments there).
    pub(crate) fn drop_head(&mut self, n: usize) {
        self.head.drain(..n);
    }

    /// Reads more content into the head, up to `more` bytes; returns how many came.
    pub(crate) fn extend_head(&mut self, more: usize, path: &str) -> Result<usize, TraceError> {
        let before = self.head.len();
        (&mut self.rest).take(more as u64).read_to_end(&mut self.head).map_err(|e| TraceError::io(path, &e))?;
        Ok(self.head.len() - before)
    }

    /// Consumes the rest of the current line (it was not in the head); returns false at the end.
    pub(crate) fn skip_line(&mut self, path: &str) -> Result<bool, TraceError> {
        crate::lines::pass_line_end(self.rest.as_mut(), path)
    }

    /// The whole content: the head, then the rest.
    pub(crate) fn into_input(self) -> Box<dyn BufRead + Send> {
        if self.head.is_empty() {
            return self.rest;
        }
        Box::new(std::io::Cursor::new(self.head).chain(self.rest))
    }
}

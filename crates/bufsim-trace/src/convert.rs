//! `bufsim convert`: any trace into bufsim's binary format, streaming.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::bst::BstWriter;
use crate::error::{Location, TraceError};
use crate::format::Format;
use crate::progress::Meter;
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
/// concurrent conversions each leave a whole file. An output that is a symlink stays one: the
/// file it points at is replaced. A character device or FIFO is never replaced: the whole
/// output is copied into it at the end.
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
    check_not_input(input, output)?;
    let mut reader = TraceReader::open_with(input, format, opts)?;
    let format = reader.format();
    let target = Target::of(output)?;
    let ((requests, names), bytes) = target.write(output, &opts.meter, |file| {
        let mut w = BstWriter::new(file, output, reader.address_kind(), reader.in_blocks(), reader.columns())?;
        while let Some(r) = reader.next_request()? {
            w.write(&r).map_err(|e| {
                TraceError::malformed(input, Location::File, format!("request {}: {}", w.records() + 1, e.message))
            })?;
        }
        let requests = w.records();
        let names = reader.file_names().to_vec();
        Ok((w.finish(&names)?, (requests, names.len())))
    })?;
    Ok(ConvertSummary { format, requests, names, bytes, skipped: reader.skipped().clone() })
}

/// Writes `output` the way [`convert`] does: `write` fills a fresh file beside it, which is
/// synced and renamed into place only when `write` succeeds (nothing is left behind otherwise).
/// Returns what `write` returned and the output's size in bytes. A FIFO output waits for its
/// reader until `meter`'s work is cancelled.
pub fn write_atomically<T>(
    output: &str,
    meter: &Meter,
    write: impl FnOnce(File) -> Result<(File, T), TraceError>,
) -> Result<(T, u64), TraceError> {
    if output == crate::STDIN {
        return Err(TraceError::unknown_format(
            output,
            "the trace is written to a file, not standard output; give a file name with -o",
        ));
    }
    Target::of(output)?.write(output, meter, write)
}

/// Refuses to write over the input trace itself: the same file (device and inode), whatever
/// path, symlink or hard link names it.
pub fn check_not_input(input: &str, output: &str) -> Result<(), TraceError> {
    use std::os::unix::fs::MetadataExt;
    if input != crate::STDIN {
        if let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(output)) {
            if a.dev() == b.dev() && a.ino() == b.ino() && !is_stream(&b) {
                return Err(TraceError::unknown_format(
                    output,
                    "is the input trace; write the converted trace to another file",
                ));
            }
        }
    }
    Ok(())
}

/// Character devices and FIFOs: written into in order, never replaced.
fn is_stream(m: &std::fs::Metadata) -> bool {
    let t = m.file_type();
    t.is_char_device() || t.is_fifo()
}

/// Where an output is written, decided before writing it.
enum Target {
    /// A regular file or no file yet: a fresh file beside this path (the symlink's target
    /// when the output is a symlink, so the link stays and points at the new file) is renamed
    /// onto it.
    Replace(PathBuf),
    /// A character device (`/dev/null`, a terminal) or a FIFO: renaming over it would replace
    /// the device node or pipe with a regular file (as root, `-o /dev/null` broke the
    /// system's `/dev/null`), so the output is copied into it once whole.
    Stream(PathBuf),
}

/// Symlinks followed before giving up, as the kernel's `ELOOP` limit.
const MAX_LINKS: usize = 40;

impl Target {
    fn of(output: &str) -> Result<Target, TraceError> {
        if output.is_empty() {
            return Err(TraceError::unknown_format("output \"\"", "an empty path; give the output file's name"));
        }
        if Path::new(output).file_name().is_none() {
            return Err(TraceError::unknown_format(output, "names a directory; give the output file's name"));
        }
        // The kernel follows every symlink here, /proc's too (`/dev/stdout` is a link to
        // `/proc/self/fd/1`, whose "target" may be `pipe:[1234]`, no path at all): a device or
        // FIFO is then opened by the name given.
        let meta = match std::fs::metadata(output) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(symlink_loop(output)),
            Err(e) => return Err(TraceError::io(output, &e)),
        };
        let Some(meta) = meta.filter(|m| !m.is_file()) else {
            // A regular file or nothing yet: replaced (or made) where the symlinks lead.
            return Ok(Target::Replace(resolve_links(output)?));
        };
        let t = meta.file_type();
        if is_stream(&meta) {
            Ok(Target::Stream(PathBuf::from(output)))
        } else if t.is_dir() {
            Err(TraceError::unknown_format(output, "is a directory; give the output file's name"))
        } else if t.is_block_device() {
            // A trace written over a disk destroys what is on it: never what a user means.
            Err(TraceError::unknown_format(
                output,
                "is a block device; write the trace to a file (or a FIFO or character device)",
            ))
        } else {
            Err(TraceError::unknown_format(
                output,
                "is a socket; write the trace to a file (or a FIFO or character device)",
            ))
        }
    }

    /// Runs `write` on a fresh file, syncs it and puts it in place only when `write` succeeds
    /// (nothing is left behind otherwise). Returns what `write` returned and the bytes written.
    fn write<T>(
        self,
        output: &str,
        meter: &Meter,
        write: impl FnOnce(File) -> Result<(File, T), TraceError>,
    ) -> Result<(T, u64), TraceError> {
        match self {
            Target::Replace(path) => {
                let (file, tmp) = create_fresh(output, &path)?;
                let result = write(file).and_then(|(file, t)| {
                    file.sync_all().map_err(|e| TraceError::io(output, &e))?;
                    let bytes = file.metadata().map_err(|e| TraceError::io(output, &e))?.len();
                    Ok((t, bytes))
                });
                match result {
                    Ok(r) => {
                        std::fs::rename(&tmp, &path).map_err(|e| {
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
            Target::Stream(path) => {
                // Written first to an unlinked file in the temporary directory: a `.bst` seeks
                // back to its header, which a pipe cannot, and the reader of a pipe gets a whole
                // trace or nothing, as a file gets.
                let dir = std::env::temp_dir();
                let (file, tmp) =
                    create_fresh(output, &dir.join(path.file_name().unwrap_or_default())).map_err(|e| {
                        TraceError::unknown_format(
                            output,
                            format!(
                                "cannot make a temporary file in {} ({}); set TMPDIR to a writable directory",
                                dir.display(),
                                e.message
                            ),
                        )
                    })?;
                let _ = std::fs::remove_file(&tmp);
                let (mut file, t) = write(file)?;
                file.seek(SeekFrom::Start(0)).map_err(|e| TraceError::io(output, &e))?;
                let mut out = open_stream(output, &path, meter)?;
                let meta = out.metadata().map_err(|e| TraceError::io(output, &e))?;
                if !is_stream(&meta) {
                    // Replaced by something else while the trace was converted: write nothing.
                    return Err(TraceError::unknown_format(
                        output,
                        "changed from a device or FIFO while the trace was converted; run the conversion again",
                    ));
                }
                let bytes = std::io::copy(&mut file, &mut out)
                    .map_err(|e| TraceError::unknown_format(output, format!("cannot write: {e}")))?;
                Ok((t, bytes))
            }
        }
    }
}

/// Opens the character device or FIFO `path` for writing. A plain open of a FIFO that no
/// program reads waits, silently and for ever; so it is opened without blocking, which fails at
/// once while there is no reader, and tried again every [`CANCEL_POLL_MS`] (a cancelled call,
/// Ctrl-C in Python, stops waiting), saying once on standard error that it waits when no reader
/// has come within [`WRITER_PATIENCE_MS`], as a FIFO input waits for its writer.
fn open_stream(output: &str, path: &Path, meter: &Meter) -> Result<File, TraceError> {
    use crate::input::{set_blocking, CANCEL_POLL_MS, WRITER_PATIENCE_MS};
    let started = std::time::Instant::now();
    let mut said = false;
    loop {
        match OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(path) {
            Ok(f) => {
                set_blocking(&f).map_err(|e| TraceError::io(output, &e))?;
                return Ok(f);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if !said && started.elapsed().as_millis() >= WRITER_PATIENCE_MS as u128 {
                    eprintln!("bufsim: waiting for a reader on FIFO {output} (Ctrl-C to stop)");
                    said = true;
                }
                meter.go_on(output)?;
                std::thread::sleep(std::time::Duration::from_millis(CANCEL_POLL_MS as u64));
            }
            Err(e) => return Err(TraceError::io(output, &e)),
        }
    }
}

/// `output` with symlinks in its last component followed (a link that points nowhere yet
/// gives the path it points at, which the output then creates).
fn resolve_links(output: &str) -> Result<PathBuf, TraceError> {
    let mut path = PathBuf::from(output);
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&path).map_err(|e| TraceError::io(output, &e))?;
                path = match path.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(TraceError::io(output, &e)),
        }
    }
    Err(symlink_loop(output))
}

fn symlink_loop(output: &str) -> TraceError {
    TraceError::unknown_format(output, "is a loop of symlinks; give the output file's name")
}

/// A new, empty file beside `path` (`.NAME.PID-N.partial`), created exclusively: it fails
/// rather than open anything already there, a symlink included. Errors name `output`.
fn create_fresh(output: &str, path: &Path) -> Result<(File, PathBuf), TraceError> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Some(name) = path.file_name() else {
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
            // A directory that takes no new files (/proc) says "not found" too.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir.is_dir() => {
                return Err(TraceError::unknown_format(
                    output,
                    format!("no file can be created in {}; give a path in a writable directory", dir.display()),
                ))
            }
            // The file is created here, so what is missing is its directory.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TraceError::unknown_format(
                    output,
                    format!("its directory {} does not exist; create it first or give another path", dir.display()),
                ))
            }
            Err(e) => return Err(TraceError::io(output, &e)),
        }
    }
    Err(TraceError::io(output, &last.expect("tried at least once")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::FileTypeExt;

    fn dir(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("bufsim-convert-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn text(p: &Path) -> String {
        p.to_string_lossy().into_owned()
    }

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(text(path)).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    fn write_hello(out: &str) -> Result<((), u64), TraceError> {
        write_atomically(out, &Meter::default(), |mut f| {
            f.write_all(b"hello\n").unwrap();
            Ok((f, ()))
        })
    }

    #[test]
    fn a_fifo_gets_the_output_and_stays_a_fifo() {
        let d = dir("fifo");
        let fifo = d.join("out");
        mkfifo(&fifo);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut got = String::new();
                File::open(fifo).unwrap().read_to_string(&mut got).unwrap();
                got
            })
        };
        assert_eq!(write_hello(&text(&fifo)).unwrap().1, 6);
        assert_eq!(reader.join().unwrap(), "hello\n");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        // A .bst seeks back to its header: it still reaches a pipe whole.
        let src = d.join("t.csv");
        std::fs::write(&src, "op,file,offset,size\nR,a,0,4096\n").unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                File::open(fifo).unwrap().read_to_end(&mut got).unwrap();
                got
            })
        };
        let s = convert(&text(&src), None, &text(&fifo), &ReadOptions::default()).unwrap();
        let got = reader.join().unwrap();
        assert_eq!(s.bytes, got.len() as u64);
        assert!(got.starts_with(&crate::bst::MAGIC));
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2, "a temporary file was left behind");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_fifo_output_waits_for_its_reader_until_cancelled() {
        use crate::progress::Progress;
        use std::sync::Arc;
        let d = dir("fifo-wait");
        let fifo = d.join("out");
        mkfifo(&fifo);
        // No reader ever: the call ends once cancelled, writing nothing and leaving no file.
        let progress = Arc::new(Progress::default());
        let meter = Meter::new(Arc::clone(&progress));
        let canceller = {
            let p = Arc::clone(&progress);
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                p.cancel();
            })
        };
        let err = write_atomically(&text(&fifo), &meter, |mut f| {
            f.write_all(b"hello\n").unwrap();
            Ok((f, ()))
        })
        .unwrap_err();
        canceller.join().unwrap();
        assert_eq!(err.kind, crate::error::TraceErrorKind::Interrupted, "{err}");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "a temporary file was left behind");
        // A reader that comes late still gets the whole output.
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(350));
                let mut got = String::new();
                File::open(fifo).unwrap().read_to_string(&mut got).unwrap();
                got
            })
        };
        assert_eq!(write_hello(&text(&fifo)).unwrap().1, 6);
        assert_eq!(reader.join().unwrap(), "hello\n");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_link_to_a_pipe_as_dev_stdout_is_written_into() {
        // `/dev/stdout` -> `/proc/self/fd/1` -> `pipe:[N]`: no path to put a file beside.
        let d = dir("stdout");
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (r, w): (File, File) = unsafe {
            use std::os::fd::FromRawFd;
            (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))
        };
        let link = d.join("stdout");
        std::os::unix::fs::symlink(format!("/proc/self/fd/{}", fds[1]), &link).unwrap();
        write_hello(&text(&link)).unwrap();
        drop(w);
        let mut got = String::new();
        { r }.read_to_string(&mut got).unwrap();
        assert_eq!(got, "hello\n");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_character_device_is_written_into_not_replaced() {
        let d = dir("chr");
        let null = d.join("null");
        let c = std::ffi::CString::new(text(&null)).unwrap();
        // Making a device node needs root (or CAP_MKNOD): elsewhere there is nothing to test.
        if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) } == 0 {
            assert_eq!(write_hello(&text(&null)).unwrap().1, 6);
            assert!(std::fs::symlink_metadata(&null).unwrap().file_type().is_char_device());
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_symlink_stays_and_its_target_gets_the_output() {
        let d = dir("link");
        let target = d.join("real.txt");
        std::fs::write(&target, "old").unwrap();
        let link = d.join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        write_hello(&text(&link)).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
        // A link to nothing yet makes the file it names.
        let dangling = d.join("dangling.txt");
        std::os::unix::fs::symlink("new.txt", &dangling).unwrap();
        write_hello(&text(&dangling)).unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(d.join("new.txt")).unwrap(), "hello\n");
        // A loop of links is refused.
        std::os::unix::fs::symlink("b", d.join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("b")).unwrap();
        let e = write_hello(&text(&d.join("a"))).unwrap_err().to_string();
        assert!(e.contains("loop of symlinks"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_directory_is_refused_and_the_input_is_found_by_any_name() {
        let d = dir("dir");
        let e = write_hello(&text(&d)).unwrap_err().to_string();
        assert!(e.ends_with("is a directory; give the output file's name"), "{e}");
        let src = d.join("t.csv");
        std::fs::write(&src, "op,file,offset,size\nR,a,0,4096\n").unwrap();
        let hard = d.join("hard.csv");
        std::fs::hard_link(&src, &hard).unwrap();
        let e = check_not_input(&text(&src), &text(&hard)).unwrap_err().to_string();
        assert!(e.contains("is the input trace"), "{e}");
        assert_eq!(std::fs::read_to_string(&src).unwrap(), "op,file,offset,size\nR,a,0,4096\n");
        let _ = std::fs::remove_dir_all(&d);
    }
}

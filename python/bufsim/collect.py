"""``bufsim collect``: record a real program's file I/O with stock ``strace`` and write bufsim's
interchange CSV, with AMP-style program contexts (docs/collect.md has the user's view).

strace runs the command with ``-f -k -y -ttt -T -s 0`` and writes into a FIFO that this module
reads while the command runs: memory stays bounded, strace waits when the parser falls behind, and
the files a program opens are looked at (``/proc/TID/fd/N``, else the path) within moments of the
open. :class:`~bufsim.syscalls.TraceBuilder` replays the calls; :class:`TraceWriter` writes the
records ordered by start time, whole lines at a time, so a killed run leaves a valid truncated trace.
"""

from __future__ import annotations

import errno
import heapq
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import BinaryIO, Optional, Sequence

from bufsim._core import BufsimError
from bufsim.collect_paths import NO_LIBS_PATTERNS  # --no-libs; docs/collect.md prints it
from bufsim.strace import U64_MAX, DamagedLine
from bufsim.syscalls import HANDLED_SYSCALLS, PathFilter, Record, Stats, TraceBuilder, csv_field

# ---------------------------------------------------------------------------------------------
# What is traced

#: System calls strace is asked to trace: every call the replay handles. A leading "?" lets strace
#: skip names this architecture lacks (``_llseek`` and friends exist only on 32-bit ones).
ARCH_SPECIFIC = frozenset({"_llseek", "fcntl64", "sendfile64"})
TRACED_SYSCALLS = tuple(("?" + n) if n in ARCH_SPECIFIC else n for n in HANDLED_SYSCALLS)

#: Records held back for time order are written anyway past this many (bounds memory when a file
#: read blocks for a very long time).
REORDER_LIMIT = 1_000_000

EXIT_NOT_EXECUTABLE = 126
EXIT_NOT_FOUND = 127
EXIT_OWN_ERROR = 2
CSV_HEADER = "time_us,dur_us,pid,ctx,op,file,offset,size"

#: How long opening a named pipe waits for its writer before saying that it waits (as the trace
#: readers do): a writer started beside bufsim connects unremarked.
WRITER_PATIENCE_MS = 1000


class CollectError(BufsimError):
    """A problem of ``bufsim collect`` itself (not of the traced command); ``exit_status`` says
    how the command line should exit. A :class:`bufsim.BufsimError`, as every error of the
    package is."""

    def __init__(self, message: str, exit_status: int = EXIT_OWN_ERROR):
        super().__init__(message)
        self.exit_status = exit_status


# ---------------------------------------------------------------------------------------------
# Output


class TraceWriter:
    """Writes records as interchange CSV lines, ordered by start time. A record waits while a call
    that started earlier is still unfinished (``hold``/``release``); lines are written whole with
    ``os.write``, so whatever stops the run, the file holds only complete lines."""

    def __init__(self, out_fd: int, comments: Sequence[str] = (), limit: int = REORDER_LIMIT):
        self.fd = out_fd
        self.heap: list[tuple[int, int, str]] = []
        self.seq = 0
        self.held: dict[int, int] = {}
        self.buf: list[str] = []
        self.buf_len = 0
        self.limit = limit
        self.t0: Optional[int] = None
        self._write("".join(f"# {_one_line(c)}\n" for c in comments) + CSV_HEADER + "\n")

    def _write(self, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        while data:
            n = os.write(self.fd, data)
            data = data[n:]

    def add(self, r: Record) -> None:
        t = r.time_us - (self.t0 or 0)
        _check_record(r, t)
        line = (
            f"{t},{r.dur_us},{r.pid},{'0' if r.ctx == 0 else f'0x{r.ctx:016x}'},{r.op},"
            f"{csv_field(r.file.name)},{r.offset},{r.size}\n"
        )
        heapq.heappush(self.heap, (r.time_us, self.seq, line))
        self.seq += 1
        self._drain()

    def hold(self, key: int, time_us: int) -> None:
        self.held[key] = time_us

    def release(self, key: int) -> None:
        if self.held.pop(key, None) is not None:
            self._drain()

    def _drain(self) -> None:
        bound = min(self.held.values()) if self.held else None
        heap = self.heap
        while heap and (bound is None or heap[0][0] < bound or len(heap) > self.limit):
            line = heapq.heappop(heap)[2]
            self.buf.append(line)
            self.buf_len += len(line)
        if self.buf_len >= 1 << 16:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self._write("".join(self.buf))
            self.buf.clear()
            self.buf_len = 0

    def close(self, comments: Sequence[str] = ()) -> None:
        self.held.clear()
        self._drain()
        self.flush()
        if comments:
            self._write("".join(f"# {_one_line(c)}\n" for c in comments))


class DamagedRecord(DamagedLine):
    """A record with a number bufsim's trace readers refuse; it comes from the call on the last
    line before the one being read that is not a -k frame."""


def _check_record(r: Record, t: int) -> None:
    """Refuses what the interchange CSV reader would refuse in the record, before it is written:
    a trace that ``bufsim run`` rejects must not pass for a recorded one."""
    what = {"R": "read", "W": "write", "D": "drop", "H": "hint"}.get(r.op, r.op)
    if r.offset < 0 or r.size < 0:
        raise DamagedRecord(f"a {what} of {r.size} bytes at offset {r.offset}: a negative number")
    if r.offset + r.size > U64_MAX:
        raise DamagedRecord(f"a {what} of {r.size} bytes at offset {r.offset} ends past byte 2^64-1")
    if not 0 <= r.pid <= 0xFFFF_FFFF:
        raise DamagedRecord(f"process id {r.pid} does not fit in 32 bits")
    # The readers keep times in nanoseconds, in 64 bits.
    if max(t, r.dur_us) * 1000 > U64_MAX:
        raise DamagedRecord(f"a time of {max(t, r.dur_us)} microseconds is past 2^64 nanoseconds")


# ---------------------------------------------------------------------------------------------
# Running strace


@dataclass
class CollectResult:
    output: str
    exit_status: int  # what `bufsim collect` exits with: the command's status, 128+N for signal N
    outcome: str  # "exited with status 0", "killed by SIGKILL", ...
    stats: Stats
    unknown_files: int = 0

    def summary(self) -> str:
        s = self.stats
        text = (
            f"bufsim collect: {s.records} records ({s.reads} reads, {s.writes} writes"
            + (f", {s.drops} drops" if s.drops else "")
            + (f", {s.hints} hints" if s.hints else "")
            + ") on "
            f"{len(s.files)} files from {len(s.pids)} processes and {len(s.contexts)} program "
            f"contexts -> {self.output}; the command {self.outcome}"
        )
        if s.direct:
            text += f"; {s.direct} direct-I/O calls (O_DIRECT) left out: they bypass the page cache"
        if self.unknown_files:
            text += f"; {self.unknown_files} files were gone before they could be looked at (named ?:?N:PATH)"
        if s.unparsed:
            text += f"; {s.unparsed} strace lines not understood (skipped)"
        return text


def find_strace() -> str:
    path = shutil.which("strace")
    if path is None:
        raise CollectError(
            "strace is not installed; install it (Debian/Ubuntu: `apt-get install strace`) and run bufsim collect again"
        )
    return path


def strace_version(strace: str) -> tuple[int, int]:
    try:
        out = subprocess.run([strace, "-V"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (0, 0)
    m = re.search(r"version (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def strace_command(
    strace: str, output: str, command: Sequence[str], stacks: bool = True, version: tuple[int, int] = (0, 0)
) -> list[str]:
    args = [strace, "-f", "-q", "-y", "-ttt", "-T", "-s", "0", "-e", "trace=" + ",".join(TRACED_SYSCALLS), "-o", output]
    if stacks:
        args.append("-k")
    if version >= (5, 3):
        args.append("--seccomp-bpf")  # stop only at traced calls: several times faster
    return args + ["--", *command]


def _one_line(comment: str) -> str:
    """A comment kept on its line: a command's argument may hold line breaks."""
    return comment.replace("\r", "\\r").replace("\n", "\\n")


def check_trace_output(path: str, option: str = "-o", inputs: Sequence[tuple[Optional[str], str]] = ()) -> None:
    """Refuses, before the command runs, a trace path no trace can be written to: a directory, a
    name in a missing directory, a place this process may not write, a named pipe nobody reads
    (opening it would wait for a reader forever), or a file ``inputs`` names ((path, what it is)
    pairs: the log a conversion reads, the raw log kept beside)."""
    from bufsim.errors import check_not_input, check_output

    try:
        check_output(path, option)
        for other, what in inputs:
            check_not_input(path, other, what, option)
    except BufsimError as e:
        raise CollectError(str(e)) from None
    parent = os.path.dirname(path) or "."
    if os.path.exists(path):
        if stat.S_ISFIFO(os.stat(path).st_mode):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError as e:
                if e.errno == errno.ENXIO:
                    raise CollectError(
                        f"{path}: is a named pipe that no program is reading; start its reader first, "
                        f"or give {option} a file name"
                    ) from None
                raise
        elif not os.access(path, os.W_OK):
            raise CollectError(f"{path}: cannot write this file (permission denied); give {option} another path")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise CollectError(f"{parent}: cannot create files in this directory; give {option} another path")


def _open_output(path: str, option: str = "-o") -> int:
    # Non-blocking while opening: a named pipe without a reader fails at once instead of waiting.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o644)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise CollectError(f"{path}: is a named pipe that no program is reading; start its reader first") from None
        raise CollectError(f"{path}: cannot write it ({e.strerror or e}); give {option} another path") from None
    os.set_blocking(fd, True)
    return fd


def _comments(command: Sequence[str], stack_depth: int, stacks: bool, options: str) -> list[str]:
    depth = "none (no -k)" if not stacks else ("whole stack" if stack_depth == 0 else str(stack_depth))
    return [
        "bufsim collect trace (docs/collect.md); times in microseconds from the first traced call",
        f"command: {' '.join(command)}",
        f"program contexts: stack depth {depth}; options: {options or 'none'}",
    ]


class _LineSplitter:
    """Turns chunks of bytes into lines for the builder, and a damaged line into a CollectError
    naming ``source`` and the line's number (``advice``: what to do about it)."""

    def __init__(self, builder: TraceBuilder, source: str, advice: str, keep: Optional[int] = None):
        self.builder = builder
        self.rest = b""
        self.keep = keep
        self.source = source
        self.advice = advice
        self.lineno = 0
        # The last line that is not a -k frame: the call whose records the next such line sends.
        self.call_line = 0

    def push(self, data: bytes) -> None:
        if self.keep is not None:
            os.write(self.keep, data)
        data = self.rest + data
        lines = data.split(b"\n")
        self.rest = lines.pop()
        for raw in lines:
            self._feed(raw.decode("utf-8", "surrogateescape"))

    def _feed(self, text: str) -> None:
        self.lineno += 1
        before = self.call_line
        if not text.startswith(" > "):
            self.call_line = self.lineno
        try:
            self.builder.feed(text)
        except DamagedRecord as e:
            raise self._damaged(before, e) from None
        except DamagedLine as e:
            raise self._damaged(self.lineno, e) from None

    def finish(self) -> None:
        """End of input: the last line, and the records of the last call."""
        if self.rest:
            self._feed(self.rest.decode("utf-8", "surrogateescape"))
            self.rest = b""
        try:
            self.builder.finish()
        except DamagedLine as e:
            raise self._damaged(self.call_line, e) from None

    def _damaged(self, line: int, e: DamagedLine) -> CollectError:
        return CollectError(f"{self.source}:{line}: {e}; {self.advice}")


def _check_stack_depth(stack_depth: int) -> None:
    if stack_depth < 0:
        raise CollectError(f"--stack-depth must be 0 (whole stack) or a positive number of frames, not {stack_depth}")


def open_input(path: str) -> tuple[BinaryIO, bytes]:
    """Opens ``path`` to read; returns the file and the bytes that come before what it reads (a
    byte read while finding out whether a named pipe has a writer, or none). Opening a named pipe
    waits, until some program opens it for writing: after :data:`WRITER_PATIENCE_MS` without
    one, standard error says so, as the trace readers do."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        early = _wait_for_writer(fd, path) if stat.S_ISFIFO(os.fstat(fd).st_mode) else b""
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), early
    except BaseException:
        os.close(fd)
        raise


def _wait_for_writer(fd: int, path: str) -> bytes:
    # With no writer yet, a read of an empty named pipe ends at once, as an empty file would, and
    # poll() says nothing until a writer has come: a read after a quiet poll tells a writer that
    # has not written yet (the read would block) from none at all (the read ends).
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if poller.poll(WRITER_PATIENCE_MS):
        return b""
    try:
        early = os.read(fd, 1)
    except BlockingIOError:
        return b""  # a writer is there: the blocking reads that follow wait for its data
    if early:
        return early
    from bufsim.errors import printable

    print(f"bufsim: waiting for a writer on FIFO {printable(path)} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    while not poller.poll():
        pass
    return b""


def _build(
    output: str,
    command: Sequence[str],
    *,
    stack_depth: int,
    stacks: bool,
    reads_only: bool,
    include: Sequence[str],
    exclude: Sequence[str],
    no_libs: bool,
    live: bool,
) -> tuple[TraceBuilder, TraceWriter, int]:
    excl = list(exclude) + (list(NO_LIBS_PATTERNS) if no_libs else [])
    options = " ".join(
        [
            *(["--reads-only"] if reads_only else []),
            *(f"--include {p}" for p in include),
            *(f"--exclude {p}" for p in exclude),
            *(["--no-libs"] if no_libs else []),
        ]
    )
    out_fd = _open_output(output)
    writer = TraceWriter(out_fd, _comments(command, stack_depth, stacks, options))

    def first_time(t: int) -> None:
        writer.t0 = t

    builder = TraceBuilder(
        writer.add,
        stack_depth=stack_depth,
        reads_only=reads_only,
        path_filter=PathFilter(include, excl),
        live=live,
        cwd=os.fsencode(os.getcwd()),
        hold=writer.hold,
        release=writer.release,
        on_first_time=first_time,
    )
    return builder, writer, out_fd


def collect_from_log(
    log: str,
    output: str,
    *,
    stack_depth: int = 0,
    reads_only: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    no_libs: bool = False,
) -> CollectResult:
    """Converts a saved ``strace -f [-k] -y -ttt -T`` log. Files are identified by ``stat`` of the
    paths now, so files changed or deleted since the run get ``?:?N:PATH`` names."""
    _check_stack_depth(stack_depth)
    if not os.path.exists(log):
        raise FileNotFoundError(f"{log}: no such strace log")
    # Opened for writing, the log itself would be emptied before it is read (and then removed).
    check_trace_output(output, inputs=[(log, "the strace log to convert")])
    # Opened before the output: a named pipe may keep it waiting for its writer, and a wait cut
    # short (Ctrl-C) leaves the output as it was.
    f, early = open_input(log)
    try:
        builder, writer, out_fd = _build(
            output,
            [f"(strace log {log})"],
            stack_depth=stack_depth,
            stacks=True,
            reads_only=reads_only,
            include=include,
            exclude=exclude,
            no_libs=no_libs,
            live=False,
        )
    except BaseException:
        f.close()
        raise
    try:
        from bufsim.progress import bar

        advice = "the strace log is damaged (cut, edited or corrupted): record it again, or fix or delete that line"
        splitter = _LineSplitter(builder, log, advice)
        try:
            with f, bar(total=os.fstat(f.fileno()).st_size, desc=f"replaying {log}", unit="B") as shown:
                shown.unit_scale, shown.unit_divisor = True, 1024
                splitter.push(early)
                while True:
                    chunk = f.read(1 << 20)
                    if not chunk:
                        break
                    splitter.push(chunk)
                    shown.update(len(chunk))
            splitter.finish()
        except CollectError:
            # A trace cut at the damage would pass for the whole run: none is left.
            _discard(output)
            raise
        if builder.root is None:
            # Not one line was an strace line: an empty trace would hide that, so none is left.
            _discard(output)
            raise CollectError(
                f"{log}: no strace output found ({builder.stats.unparsed} lines not understood); "
                "give a log written by `strace -f -y -ttt -T [-k] -o LOG COMMAND`"
            )
        outcome = builder.root_exit or "ended without an exit line (log truncated?)"
        writer.close([f"end: converted from {log}; the command {outcome}"])
    finally:
        os.close(out_fd)
    status = builder.root_status if builder.root_status is not None else 0
    return CollectResult(output, status, outcome, builder.stats, builder.unknown_files)


def _discard(output: str) -> None:
    if output != "-":
        os.unlink(output)


def collect(
    command: Sequence[str],
    output: str,
    *,
    stack_depth: int = 0,
    stacks: bool = True,
    reads_only: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    no_libs: bool = False,
    keep_strace: Optional[str] = None,
) -> CollectResult:
    """Runs ``command`` under strace and writes its file I/O to ``output`` as interchange CSV.

    Returns when the command (and every process it started) has ended. SIGTERM and SIGHUP sent to
    this process are passed to the command; a second one kills it. Whatever ends the command, the
    trace written so far stays a valid CSV, and the result carries the command's exit status."""
    if not command:
        raise CollectError("give the command to trace after --, e.g. bufsim collect -o t.csv -- grep -r x src")
    _check_stack_depth(stack_depth)
    strace = find_strace()
    exe = command[0]
    resolved = shutil.which(exe) if "/" not in exe else (exe if os.path.exists(exe) else None)
    if resolved is None:
        raise CollectError(f"{exe}: command not found", EXIT_NOT_FOUND)
    if os.path.isdir(resolved) or not os.access(resolved, os.X_OK):
        raise CollectError(f"{exe}: not an executable file", EXIT_NOT_EXECUTABLE)
    check_trace_output(output, inputs=[(keep_strace, "the --keep-strace file")])
    if keep_strace:
        check_trace_output(keep_strace, "--keep-strace")
    version = strace_version(strace)

    keep_fd = _open_output(keep_strace, "--keep-strace") if keep_strace else None
    tmp = tempfile.mkdtemp(prefix="bufsim-collect-")
    fifo = os.path.join(tmp, "strace.fifo")
    os.mkfifo(fifo, 0o600)
    builder, writer, out_fd = _build(
        output,
        command,
        stack_depth=stack_depth,
        stacks=stacks,
        reads_only=reads_only,
        include=include,
        exclude=exclude,
        no_libs=no_libs,
        live=True,
    )
    read_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    proc: Optional[subprocess.Popen] = None
    signals_seen = 0
    previous: dict[int, object] = {}

    def on_signal(signum, frame) -> None:
        nonlocal signals_seen
        signals_seen += 1
        target = builder.root
        try:
            if signals_seen == 1 and target is not None:
                os.kill(target, signum)
            elif target is not None:
                os.kill(target, signal.SIGKILL)
            elif proc is not None:
                proc.send_signal(signum if signals_seen == 1 else signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                previous[sig] = signal.signal(sig, on_signal)
            except ValueError:  # not the main thread: leave signals alone
                pass
        proc = subprocess.Popen(strace_command(strace, fifo, command, stacks, version))
        # strace writes what the kernel did: a damaged line there is a fault of strace or bufsim.
        advice = "strace wrote a line bufsim cannot use; report it with that line (--keep-strace FILE saves them)"
        splitter = _LineSplitter(builder, keep_strace or "strace's output", advice, keep_fd)
        poller = select.poll()
        poller.register(read_fd, select.POLLIN)
        got_data = False
        while True:
            try:
                events = poller.poll(200)
            except InterruptedError:
                continue
            if not events:
                writer.flush()  # the command is quiet: let the file show everything so far
                if proc.poll() is not None:
                    _drain_fd(read_fd, splitter)
                    break
                continue
            try:
                chunk = os.read(read_fd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                got_data = True
                splitter.push(chunk)
            elif got_data or proc.poll() is not None:
                break  # strace closed its end: it has finished
            else:
                poller.poll(50)
        splitter.finish()
        returncode = proc.wait()
        status = returncode if returncode >= 0 else 128 - returncode
        if not builder.root_executed and builder.root_exec_errno in ("ENOEXEC", "EACCES"):
            # The command never ran: not an executable the kernel can start (as `env` reports).
            status = EXIT_NOT_EXECUTABLE
            outcome = f"could not be executed ({builder.root_exec_errno}: not a program the kernel can run)"
        elif builder.root_exit is not None:
            outcome = builder.root_exit
        elif returncode < 0:
            outcome = f"was killed by {signal.Signals(-returncode).name}"
        else:
            outcome = f"exited with status {returncode}"
        if not got_data:
            raise CollectError(f"strace produced no output (exit status {returncode}); see its message above")
        writer.close([f"end: the command {outcome}"])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(read_fd)
        os.close(out_fd)
        if keep_fd is not None:
            os.close(keep_fd)
        shutil.rmtree(tmp, ignore_errors=True)
    return CollectResult(output, status, outcome, builder.stats, builder.unknown_files)


def _drain_fd(fd: int, splitter: _LineSplitter) -> None:
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            return
        splitter.push(chunk)

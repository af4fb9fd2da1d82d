"""``bufsim collect``: record a real program's file I/O with stock ``strace`` and write bufsim's
interchange CSV, with AMP-style program contexts (AMP report §2 and §3.3: the program context is a
hash of the user stack's return addresses).

How it works (docs/collect.md has the user's view):
- strace runs the command with ``-f -k -y -ttt -T -s 0`` and writes to a FIFO that this module reads
  while the command runs, so memory stays bounded and ``stat`` at open time sees the file the
  program opened (through ``/proc/TID/fd/N`` while it is still open).
- :class:`TraceBuilder` replays the system calls: per-process fd tables (threads share one; fork
  copies it, ``CLONE_FILES`` shares it), open file descriptions shared by dup'ed fds and across
  fork (so offsets move together, as in the kernel), ``O_APPEND``, close-on-exec, file identity by
  device and inode with a new generation when a file is unlinked or replaced.
- :class:`TraceWriter` orders records by start time (a read that blocked is written when every
  earlier-started call has finished) and writes whole lines only, so a killed run leaves a valid,
  truncated trace.
"""

from __future__ import annotations

import fnmatch
import heapq
import os
import re
import select
import shutil
import signal
import stat as stat_mod
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Callable, Iterable, Optional, Sequence, TextIO

from bufsim import strace as st

# ---------------------------------------------------------------------------------------------
# What is traced

#: System calls strace is asked to trace. A leading "?" lets strace skip names this architecture
#: lacks (``_llseek`` and friends exist only on 32-bit ones).
TRACED_SYSCALLS = (
    "open", "openat", "openat2", "creat",
    "read", "pread64", "readv", "preadv", "preadv2",
    "write", "pwrite64", "writev", "pwritev", "pwritev2",
    "lseek", "?_llseek", "dup", "dup2", "dup3", "fcntl", "?fcntl64", "close", "close_range",
    "clone", "clone3", "fork", "vfork", "execve", "execveat", "unshare", "chdir", "fchdir",
    "unlink", "unlinkat", "rename", "renameat", "renameat2", "truncate", "ftruncate",
    "sendfile", "?sendfile64", "copy_file_range", "splice",
)

#: Calls that move data; a blocked one holds back later records so the output stays time-ordered.
DATA_CALLS = frozenset({
    "read", "pread64", "readv", "preadv", "preadv2", "write", "pwrite64", "writev", "pwritev",
    "pwritev2", "sendfile", "sendfile64", "copy_file_range", "splice",
})

#: ``--no-libs``: the program loader's and libraries' reads and pseudo-files. Globs match the whole
#: path; other entries are directory prefixes. docs/collect.md prints this list.
NO_LIBS_PATTERNS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "*.so", "*.so.*", "/etc/ld.so.cache",
                    "/proc", "/sys", "/dev")

#: Stack frames in these modules are skipped when hashing the program context: the C library, the
#: dynamic loader and the vDSO sit between every call site and the kernel, so they carry no
#: information about the call site (AMP report §2 hashes the program's own return addresses).
RUNTIME_MODULE_PREFIXES = ("libc.so", "libc-", "libc.musl", "ld-linux", "ld64.so", "ld-musl", "ld-",
                           "libpthread", "linux-vdso", "linux-gate", "[vdso]")

#: Records held back for time order are written anyway past this many (bounds memory when a file
#: read blocks for a very long time).
REORDER_LIMIT = 1_000_000

EXIT_NOT_EXECUTABLE = 126
EXIT_NOT_FOUND = 127
EXIT_OWN_ERROR = 2
CSV_HEADER = "time_us,dur_us,pid,ctx,op,file,offset,size"


class CollectError(Exception):
    """A problem of ``bufsim collect`` itself (not of the traced command); ``exit_status`` says
    how the command line should exit."""

    def __init__(self, message: str, exit_status: int = EXIT_OWN_ERROR):
        super().__init__(message)
        self.exit_status = exit_status


# ---------------------------------------------------------------------------------------------
# Program contexts

def is_runtime_module(module: str) -> bool:
    return os.path.basename(module).startswith(RUNTIME_MODULE_PREFIXES)


def context_id(frames: Iterable[st.Frame], depth: int = 0) -> int:
    """The program context of a system call: a 64-bit hash of the user stack's return addresses,
    innermost first, skipping C library, loader and vDSO frames, up to ``depth`` frames (0: the
    whole stack, as AMP hashes it; strace itself stops at 256 frames). Each address is the module's
    file name plus the offset inside it, so address-space randomisation and the directory a binary
    was built in do not change the id. 0 means no frame was left (the loader mapping libraries)."""
    h = blake2b(digest_size=8)
    n = 0
    for f in frames:
        if f.truncated:
            break
        if f.module is None:
            h.update(b"?;")  # an unknown module's absolute address would change from run to run
        elif is_runtime_module(f.module):
            continue
        else:
            h.update(f"{os.path.basename(f.module)}+{f.offset:x};".encode("utf-8", "surrogateescape"))
        n += 1
        if depth and n >= depth:
            break
    if n == 0:
        return 0
    return int.from_bytes(h.digest(), "little") or 1


# ---------------------------------------------------------------------------------------------
# Files, open file descriptions, fd tables, tasks

def display_path(path: bytes) -> str:
    """A path as one printable line: UTF-8 kept, other bytes and control characters as \\xNN."""
    text = path.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text)


def csv_field(s: str) -> str:
    if "," in s or '"' in s:
        return '"' + s.replace('"', '""') + '"'
    return s


@dataclass(eq=False)
class FileIdentity:
    """One file as bufsim sees it: device, inode and generation (a new generation when the inode
    number is reused after the file was unlinked or replaced). ``name`` is the trace's file column:
    ``DEV:INO:PATH`` (as ``stat -c %D:%i`` prints them) or ``DEV:INO.GEN:PATH`` for a later
    generation; ``?:?N:PATH`` when the file was gone before it could be looked at."""

    name: str
    path: bytes
    size: int
    nlink: int
    key: Optional[tuple[int, int]] = None
    gen: int = 1
    retired: bool = False


@dataclass(eq=False)
class OpenFile:
    """An open file description: shared by dup'ed descriptors and across fork, so they share the
    offset. ``file`` is None for what is not a regular file or block device (pipes, sockets, ttys)."""

    file: Optional[FileIdentity]
    offset: int = 0
    append: bool = False


class FdTable:
    """A process's descriptor table (threads and CLONE_FILES children share one object)."""

    __slots__ = ("fds", "cloexec")

    def __init__(self) -> None:
        self.fds: dict[int, OpenFile] = {}
        self.cloexec: set[int] = set()

    def copy(self) -> "FdTable":
        t = FdTable()
        t.fds = dict(self.fds)  # the descriptions themselves stay shared, as fork shares them
        t.cloexec = set(self.cloexec)
        return t

    def install(self, fd: int, of: OpenFile, cloexec: bool) -> None:
        self.fds[fd] = of
        if cloexec:
            self.cloexec.add(fd)
        else:
            self.cloexec.discard(fd)

    def close(self, fd: int) -> None:
        self.fds.pop(fd, None)
        self.cloexec.discard(fd)

    def exec(self) -> None:
        for fd in self.cloexec:
            self.fds.pop(fd, None)
        self.cloexec.clear()


class Cwd:
    """A working directory; shared between tasks that share CLONE_FS."""

    __slots__ = ("path",)

    def __init__(self, path: Optional[bytes]):
        self.path = path


@dataclass(eq=False)
class Task:
    tid: int
    tgid: int
    table: FdTable
    cwd: Cwd


@dataclass(eq=False)
class PendingCall:
    """An unfinished call waiting for its ``<... resumed>`` line."""

    time_us: int
    name: str
    text: str
    child: Optional[int] = None  # for clone-like calls: a child already seen before the return


@dataclass(frozen=True)
class Record:
    time_us: int
    dur_us: int
    pid: int
    ctx: int
    op: str
    file: FileIdentity
    offset: int
    size: int


# ---------------------------------------------------------------------------------------------
# Filters

class PathFilter:
    """Keeps files under any ``include`` directory (all when none) and not matching ``exclude``
    (directory prefixes, or globs over the whole path when they contain ``* ? [``)."""

    def __init__(self, include: Sequence[str] = (), exclude: Sequence[str] = ()):
        self.include = [self._prefix(os.path.realpath(p)) for p in include]
        self.exclude_prefixes = [self._prefix(p) for p in exclude if not _is_glob(p)]
        self.exclude_globs = [p for p in exclude if _is_glob(p)]
        self._cache: dict[bytes, bool] = {}

    @staticmethod
    def _prefix(p: str) -> str:
        return p.rstrip("/") if p != "/" else ""

    def keeps(self, path: bytes) -> bool:
        hit = self._cache.get(path)
        if hit is not None:
            return hit
        text = os.fsdecode(path)
        keep = (not self.include or any(_under(text, p) for p in self.include)) and not (
            any(_under(text, p) for p in self.exclude_prefixes)
            or any(fnmatch.fnmatchcase(text, g) for g in self.exclude_globs))
        if len(self._cache) < 1_000_000:
            self._cache[path] = keep
        return keep


def _is_glob(p: str) -> bool:
    return any(c in p for c in "*?[")


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/") or prefix == ""


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
        self._write("".join(f"# {c}\n" for c in comments) + CSV_HEADER + "\n")

    def _write(self, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        while data:
            n = os.write(self.fd, data)
            data = data[n:]

    def add(self, r: Record) -> None:
        t = r.time_us - (self.t0 or 0)
        line = (f"{t},{r.dur_us},{r.pid},{'0' if r.ctx == 0 else f'0x{r.ctx:016x}'},{r.op},"
                f"{csv_field(r.file.name)},{r.offset},{r.size}\n")
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
            self._write("".join(f"# {c}\n" for c in comments))


# ---------------------------------------------------------------------------------------------
# Replaying strace's view of the system calls

@dataclass
class Stats:
    reads: int = 0
    writes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    unparsed: int = 0
    files: set = field(default_factory=set)
    pids: set = field(default_factory=set)
    contexts: set = field(default_factory=set)

    @property
    def records(self) -> int:
        return self.reads + self.writes


class TraceBuilder:
    """Consumes strace lines (:meth:`feed`) and emits :class:`Record` objects to ``emit``.

    ``live`` means the traced processes are running now, so ``/proc/TID/fd/N`` tells which file a
    descriptor refers to; parsing a saved log (``live=False``) can only ``stat`` the path shown."""

    def __init__(self, emit: Callable[[Record], None], *, stack_depth: int = 0, reads_only: bool = False,
                 path_filter: Optional[PathFilter] = None, live: bool = False,
                 cwd: Optional[bytes] = None, hold: Optional[Callable[[int, int], None]] = None,
                 release: Optional[Callable[[int], None]] = None,
                 on_first_time: Optional[Callable[[int], None]] = None):
        self.emit = emit
        self.stack_depth = stack_depth
        self.reads_only = reads_only
        self.filter = path_filter or PathFilter()
        self.live = live
        self.initial_cwd = cwd
        self.hold = hold or (lambda key, t: None)
        self.release = release or (lambda key: None)
        self.on_first_time = on_first_time
        self.tasks: dict[int, Task] = {}
        self.unfinished: dict[int, PendingCall] = {}
        self.by_key: dict[tuple[int, int], FileIdentity] = {}
        self.by_path: dict[bytes, FileIdentity] = {}
        self.unknown_files = 0
        self.root: Optional[int] = None
        self.root_exit: Optional[str] = None
        self.root_status: Optional[int] = None
        self.first_time: Optional[int] = None
        self.stats = Stats()
        # The call whose -k frames are being read: (tid, time_us, call); frames follow their line.
        self._last: Optional[tuple[int, int, st.Syscall]] = None
        self._frames: list[st.Frame] = []

    # -- lines ---------------------------------------------------------------------------------

    def feed(self, raw: str) -> None:
        line = st.parse_line(raw)
        if line.kind == "frame":
            if self._last is not None:
                self._frames.append(line.frame)
            return
        self._finish_last()
        if line.kind == "other":
            if line.text.strip():
                self.stats.unparsed += 1
            return
        pid = line.pid if line.pid is not None else 0
        if self.first_time is None:
            self.first_time = line.time_us
            if self.on_first_time:
                self.on_first_time(line.time_us)
        if self.root is None:
            self.root = pid
        task = self.task(pid)  # a new child is adopted here, from its parent's unfinished clone
        if line.kind == "call":
            call = st.parse_call(line.name, line.text)
            if call is None:
                self.stats.unparsed += 1
                return
            self._last = (pid, line.time_us, call)
        elif line.kind == "unfinished":
            self.unfinished[pid] = PendingCall(line.time_us, line.name, line.text)
            if line.name in DATA_CALLS and self._may_record(task, line.name, line.text):
                self.hold(pid, line.time_us)
        elif line.kind == "resumed":
            pending = self.unfinished.pop(pid, None)
            self.release(pid)
            if pending is None or pending.name != line.name:
                self.stats.unparsed += 1
                return
            call = st.parse_call(pending.name, pending.text + line.text)
            if call is None:
                self.stats.unparsed += 1
                return
            self._last = (pid, pending.time_us, call)
        elif line.kind == "exit":
            self._exit(pid, line)

    def finish(self) -> None:
        """End of input: the last call gets its frames; calls never resumed are dropped."""
        self._finish_last()
        for tid in list(self.unfinished):
            self.release(tid)
        self.unfinished.clear()

    def _finish_last(self) -> None:
        if self._last is None:
            return
        tid, time_us, call = self._last
        frames = self._frames
        self._last = None
        self._frames = []
        if call.failed and call.name not in ("close",):
            return
        handler = _HANDLERS.get(call.name)
        if handler is not None:
            handler(self, self.task(tid), time_us, call, frames)

    def _may_record(self, task: Task, name: str, text: str) -> bool:
        """Whether an unfinished data call is on a file we record (a blocked read of a terminal,
        pipe or socket must not hold back the records after it)."""
        args, _ = st.split_args(text, len(name) + 1)
        fds = [args[0]] if args else []
        if name in ("sendfile", "sendfile64", "copy_file_range", "splice") and len(args) > 2:
            fds.append(args[1] if name.startswith("sendfile") else args[2])
        for arg in fds:
            fd, annotated = st.fd_arg(arg)
            if fd in task.table.fds:
                if task.table.fds[fd].file is not None:
                    return True
            elif annotated and annotated.startswith("/") and not annotated.startswith("/dev/"):
                return True
        return False

    def _exit(self, pid: int, line: st.Line) -> None:
        pending = self.unfinished.pop(pid, None)
        if pending is not None:
            self.release(pid)
        if pid == self.root and line.text and "superseded" not in line.text:
            self.root_status = line.status
            self.root_exit = (f"exited with status {line.status}" if line.status is not None
                              else f"killed by {line.signal}")
        self.tasks.pop(pid, None)

    # -- tasks ---------------------------------------------------------------------------------

    def task(self, tid: int) -> Task:
        t = self.tasks.get(tid)
        if t is not None:
            return t
        # A child's first line can come before its parent's clone returns: adopt it into the
        # unfinished clone-like call that has no child yet.
        for ptid, pending in self.unfinished.items():
            parent = self.tasks.get(ptid)
            if pending.name in ("clone", "clone3", "fork", "vfork") and pending.child is None and parent:
                pending.child = tid
                flags = _clone_flags(pending.name, pending.text)
                t = self._spawn(parent, tid, flags)
                return t
        t = Task(tid, tid, FdTable(), Cwd(self.initial_cwd))
        self.tasks[tid] = t
        return t

    def _spawn(self, parent: Task, tid: int, flags: set[str]) -> Task:
        table = parent.table if "CLONE_FILES" in flags else parent.table.copy()
        cwd = parent.cwd if "CLONE_FS" in flags else Cwd(parent.cwd.path)
        tgid = parent.tgid if "CLONE_THREAD" in flags else tid
        t = Task(tid, tgid, table, cwd)
        self.tasks[tid] = t
        return t

    # -- files ---------------------------------------------------------------------------------

    def identify(self, tid: int, fd: Optional[int], annotated: Optional[str]) -> Optional[FileIdentity]:
        """The file a new descriptor refers to, from strace's -y path, looked at now."""
        if not annotated or not annotated.startswith("/"):
            return None
        path = st.unescape(annotated)
        if path.endswith(b" (deleted)"):
            path = path[: -len(b" (deleted)")]
        s = None
        if self.live and fd is not None:
            proc = f"/proc/{tid}/fd/{fd}"
            try:
                link = os.fsencode(os.readlink(proc))
                if link == path or link == path + b" (deleted)":
                    s = os.stat(proc)
            except OSError:
                s = None
        if s is None:
            try:
                s = os.stat(path)
            except OSError:
                s = None
        if s is None:
            known = self.by_path.get(path)
            if known is not None and not known.retired:
                return known
            self.unknown_files += 1
            fid = FileIdentity(f"?:?{self.unknown_files}:{display_path(path)}", path, 0, 1)
            self.by_path[path] = fid
            return fid
        if not (stat_mod.S_ISREG(s.st_mode) or stat_mod.S_ISBLK(s.st_mode)):
            return None
        key = (s.st_dev, s.st_ino)
        fid = self.by_key.get(key)
        if fid is None or fid.retired:
            gen = fid.gen + 1 if fid is not None else 1
            ino = f"{s.st_ino}" if gen == 1 else f"{s.st_ino}.{gen}"
            fid = FileIdentity(f"{s.st_dev:x}:{ino}:{display_path(path)}", path, s.st_size, s.st_nlink, key, gen)
            self.by_key[key] = fid
        self.by_path[path] = fid
        return fid

    def fd_file(self, task: Task, arg: str) -> tuple[Optional[int], Optional[OpenFile]]:
        """The descriptor of an argument and its open file; a descriptor never seen opened (inherited
        from outside the trace) is adopted from its -y path, at offset 0."""
        fd, annotated = st.fd_arg(arg)
        if fd is None:
            return None, None
        of = task.table.fds.get(fd)
        if of is None and fd not in task.table.fds:
            of = OpenFile(self.identify(task.tid, fd, annotated))
            task.table.install(fd, of, False)
        return fd, of

    def resolve(self, task: Task, dir_arg: Optional[str], path_arg: str) -> Optional[bytes]:
        path = st.string_arg(path_arg)
        if path is None:
            return None
        if path.startswith(b"/"):
            return os.path.normpath(path)
        base: Optional[bytes] = None
        if dir_arg is not None:
            fd, annotated = st.fd_arg(dir_arg)
            if annotated and annotated.startswith("/"):
                base = st.unescape(annotated)
        if base is None:
            base = task.cwd.path
        return os.path.normpath(os.path.join(base, path)) if base is not None else None

    def forget_path(self, path: Optional[bytes]) -> None:
        """The name ``path`` no longer leads to its file (unlinked, or renamed over): a file with no
        other link is gone, and its inode number may come back as a different file."""
        if path is None:
            return
        fid = self.by_path.pop(path, None)
        if fid is not None and fid.nlink <= 1:
            fid.retired = True

    # -- records -------------------------------------------------------------------------------

    def record(self, task: Task, time_us: int, call: st.Syscall, frames: list[st.Frame], op: str,
               file: Optional[FileIdentity], offset: int, size: int) -> None:
        if file is None or size <= 0:
            return  # pipes and sockets; zero-byte transfers (end of file) touch no block
        if op == "W" and self.reads_only:
            return
        if not self.filter.keeps(file.path):
            return
        ctx = context_id(frames, self.stack_depth)
        s = self.stats
        if op == "R":
            s.reads += 1
            s.read_bytes += size
        else:
            s.writes += 1
            s.write_bytes += size
        s.files.add(file.name)
        s.pids.add(task.tgid)
        s.contexts.add(ctx)
        self.emit(Record(time_us, call.dur_us, task.tgid, ctx, op, file, offset, size))

    def transfer_read(self, task, time_us, call, frames, of: Optional[OpenFile], size: int,
                      at: Optional[int]) -> None:
        """A read of ``size`` bytes at ``at`` (None: the descriptor's offset, which moves)."""
        if of is None:
            return
        if at is None:
            at = of.offset
            of.offset += size
        self.record(task, time_us, call, frames, "R", of.file, at, size)

    def transfer_write(self, task, time_us, call, frames, of: Optional[OpenFile], size: int,
                       at: Optional[int], append: bool = False) -> None:
        """A write; with O_APPEND (or RWF_APPEND) the kernel writes at the end of the file, even
        for pwrite (a documented Linux quirk, pwrite(2) BUGS)."""
        if of is None:
            return
        f = of.file
        if (of.append or append) and f is not None:
            at = f.size
            of.offset = at + size
        elif at is None:
            at = of.offset
            of.offset += size
        if f is not None:
            f.size = max(f.size, at + size)
        self.record(task, time_us, call, frames, "W", f, at, size)


def _clone_flags(name: str, text: str) -> set[str]:
    if name in ("fork", "vfork"):
        return set()
    m = re.search(r"flags=([A-Z0-9_|]+)", text)
    return set(m.group(1).split("|")) if m else set()


# ---------------------------------------------------------------------------------------------
# One handler per system call (name -> function); each gets a successful call (close: any).

Handler = Callable[[TraceBuilder, Task, int, st.Syscall, list], None]
_HANDLERS: dict[str, Handler] = {}


def _handles(*names: str):
    def deco(fn: Handler) -> Handler:
        for n in names:
            _HANDLERS[n] = fn
        return fn
    return deco


@_handles("open", "openat", "openat2", "creat")
def _open(b: TraceBuilder, task: Task, t: int, call: st.Syscall, frames) -> None:
    fd = call.ret_int()
    if fd is None:
        return
    a = call.args
    if call.name == "creat":
        flags = {"O_CREAT", "O_WRONLY", "O_TRUNC"}
        path_i, dir_arg = 0, None
    elif call.name == "open":
        flags = st.flag_words(a[1]) if len(a) > 1 else set()
        path_i, dir_arg = 0, None
    else:
        flags = st.flag_words(a[2]) if len(a) > 2 else set()
        path_i, dir_arg = 1, a[0] if a else None
    annotated = call.ret_path
    if annotated is None and len(a) > path_i:  # strace could not name the new fd: use the argument
        p = b.resolve(task, dir_arg, a[path_i])
        annotated = os.fsdecode(p) if p is not None else None
    fid = b.identify(task.tid, fd, annotated)
    if fid is not None and "O_TRUNC" in flags and ("O_WRONLY" in flags or "O_RDWR" in flags):
        fid.size = 0
    task.table.install(fd, OpenFile(fid, 0, "O_APPEND" in flags), "O_CLOEXEC" in flags)


@_handles("read", "readv")
def _read(b, task, t, call, frames) -> None:
    n = call.ret_int() or 0
    _, of = b.fd_file(task, call.args[0])
    b.transfer_read(task, t, call, frames, of, n, None)


@_handles("write", "writev")
def _write(b, task, t, call, frames) -> None:
    n = call.ret_int() or 0
    _, of = b.fd_file(task, call.args[0])
    b.transfer_write(task, t, call, frames, of, n, None)


@_handles("pread64", "preadv", "preadv2")
def _pread(b, task, t, call, frames) -> None:
    n = call.ret_int() or 0
    _, of = b.fd_file(task, call.args[0])
    at = st.parse_int(call.args[3]) if len(call.args) > 3 else None
    b.transfer_read(task, t, call, frames, of, n, None if at is None or at < 0 else at)


@_handles("pwrite64", "pwritev", "pwritev2")
def _pwrite(b, task, t, call, frames) -> None:
    n = call.ret_int() or 0
    _, of = b.fd_file(task, call.args[0])
    at = st.parse_int(call.args[3]) if len(call.args) > 3 else None
    append = len(call.args) > 4 and "RWF_APPEND" in st.flag_words(call.args[4])
    b.transfer_write(task, t, call, frames, of, n, None if at is None or at < 0 else at, append)


@_handles("lseek", "_llseek")
def _lseek(b, task, t, call, frames) -> None:
    _, of = b.fd_file(task, call.args[0])
    if of is None:
        return
    pos = call.ret_int() if call.name == "lseek" else (st.bracket_result(call.args[3]) if len(call.args) > 3 else None)
    if pos is not None and pos >= 0:
        of.offset = pos


@_handles("dup", "dup2", "dup3")
def _dup(b, task, t, call, frames) -> None:
    new = call.ret_int()
    if new is None:
        return
    _, of = b.fd_file(task, call.args[0])
    cloexec = call.name == "dup3" and len(call.args) > 2 and "O_CLOEXEC" in st.flag_words(call.args[2])
    task.table.close(new)
    if of is not None:
        task.table.install(new, of, cloexec)


@_handles("fcntl", "fcntl64")
def _fcntl(b, task, t, call, frames) -> None:
    if len(call.args) < 2:
        return
    cmd = call.args[1]
    fd, of = b.fd_file(task, call.args[0])
    if cmd in ("F_DUPFD", "F_DUPFD_CLOEXEC"):
        new = call.ret_int()
        if new is not None and of is not None:
            task.table.install(new, of, cmd == "F_DUPFD_CLOEXEC")
    elif cmd == "F_SETFD" and fd is not None and len(call.args) > 2:
        if "FD_CLOEXEC" in st.flag_words(call.args[2]) or (st.parse_int(call.args[2]) or 0) & 1:
            task.table.cloexec.add(fd)
        else:
            task.table.cloexec.discard(fd)
    elif cmd == "F_SETFL" and of is not None and len(call.args) > 2:
        of.append = "O_APPEND" in st.flag_words(call.args[2])


@_handles("close")
def _close(b, task, t, call, frames) -> None:
    if call.errno == "EBADF":
        return
    fd, _ = st.fd_arg(call.args[0]) if call.args else (None, None)
    if fd is not None:
        task.table.close(fd)  # Linux frees the descriptor even when close reports EINTR or EIO


@_handles("close_range")
def _close_range(b, task, t, call, frames) -> None:
    if len(call.args) < 2:
        return
    first = st.parse_int(call.args[0])
    last = st.parse_int(call.args[1])
    flags = st.flag_words(call.args[2]) if len(call.args) > 2 else set()
    if first is None or last is None:
        return
    if "CLOSE_RANGE_UNSHARE" in flags:
        task.table = task.table.copy()
    fds = [fd for fd in task.table.fds if first <= fd <= last]
    for fd in fds:
        if "CLOSE_RANGE_CLOEXEC" in flags:
            task.table.cloexec.add(fd)
        else:
            task.table.close(fd)


@_handles("clone", "clone3", "fork", "vfork")
def _clone(b, task, t, call, frames) -> None:
    child = call.ret_int()
    if child is None or child <= 0 or child in b.tasks:
        return  # already adopted when its first line came before this return
    text = ",".join(call.args)
    b._spawn(task, child, _clone_flags(call.name, text))


@_handles("execve", "execveat")
def _execve(b, task, t, call, frames) -> None:
    # A successful exec gives the process a private table and closes close-on-exec descriptors.
    shared = any(o is not task and o.table is task.table and o.tgid != task.tgid for o in b.tasks.values())
    if shared:
        task.table = task.table.copy()
    task.table.exec()
    for tid in [o.tid for o in b.tasks.values() if o.tgid == task.tgid and o is not task]:
        del b.tasks[tid]  # exec ends every other thread of the process


@_handles("unshare")
def _unshare(b, task, t, call, frames) -> None:
    flags = st.flag_words(call.args[0]) if call.args else set()
    if "CLONE_FILES" in flags:
        task.table = task.table.copy()
    if "CLONE_FS" in flags:
        task.cwd = Cwd(task.cwd.path)


@_handles("chdir")
def _chdir(b, task, t, call, frames) -> None:
    task.cwd.path = b.resolve(task, None, call.args[0]) if call.args else None


@_handles("fchdir")
def _fchdir(b, task, t, call, frames) -> None:
    _, annotated = st.fd_arg(call.args[0]) if call.args else (None, None)
    task.cwd.path = st.unescape(annotated) if annotated and annotated.startswith("/") else None


@_handles("unlink")
def _unlink(b, task, t, call, frames) -> None:
    if call.args:
        b.forget_path(b.resolve(task, None, call.args[0]))


@_handles("unlinkat")
def _unlinkat(b, task, t, call, frames) -> None:
    if len(call.args) >= 2:
        b.forget_path(b.resolve(task, call.args[0], call.args[1]))


@_handles("rename", "renameat", "renameat2")
def _rename(b, task, t, call, frames) -> None:
    a = call.args
    if call.name == "rename" and len(a) >= 2:
        old, new = b.resolve(task, None, a[0]), b.resolve(task, None, a[1])
    elif len(a) >= 4:
        old, new = b.resolve(task, a[0], a[1]), b.resolve(task, a[2], a[3])
    else:
        return
    if old is None or new is None or old == new:
        return
    moved = b.by_path.pop(old, None)
    b.forget_path(new)  # a file renamed over is replaced
    if moved is not None:
        b.by_path[new] = moved


@_handles("ftruncate")
def _ftruncate(b, task, t, call, frames) -> None:
    _, of = b.fd_file(task, call.args[0])
    n = st.parse_int(call.args[1]) if len(call.args) > 1 else None
    if of is not None and of.file is not None and n is not None:
        of.file.size = n


@_handles("truncate")
def _truncate(b, task, t, call, frames) -> None:
    path = b.resolve(task, None, call.args[0]) if call.args else None
    fid = b.by_path.get(path) if path is not None else None
    n = st.parse_int(call.args[1]) if len(call.args) > 1 else None
    if fid is not None and n is not None:
        fid.size = n


@_handles("sendfile", "sendfile64")
def _sendfile(b, task, t, call, frames) -> None:
    # sendfile(out_fd, in_fd, offset_ptr, count): a NULL offset reads at in_fd's offset and moves it.
    n = call.ret_int() or 0
    if len(call.args) < 3:
        return
    _, out = b.fd_file(task, call.args[0])
    _, src = b.fd_file(task, call.args[1])
    b.transfer_read(task, t, call, frames, src, n, st.bracket_int(call.args[2]))
    b.transfer_write(task, t, call, frames, out, n, None)


@_handles("copy_file_range", "splice")
def _copy(b, task, t, call, frames) -> None:
    # (fd_in, off_in, fd_out, off_out, len, flags): a NULL offset uses and moves the fd's offset.
    n = call.ret_int() or 0
    if len(call.args) < 4:
        return
    _, src = b.fd_file(task, call.args[0])
    _, dst = b.fd_file(task, call.args[2])
    b.transfer_read(task, t, call, frames, src, n, st.bracket_int(call.args[1]))
    b.transfer_write(task, t, call, frames, dst, n, st.bracket_int(call.args[3]))


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
        return (f"bufsim collect: {s.records} records ({s.reads} reads, {s.writes} writes) on "
                f"{len(s.files)} files from {len(s.pids)} processes and {len(s.contexts)} program "
                f"contexts -> {self.output}; the command {self.outcome}")


def find_strace() -> str:
    path = shutil.which("strace")
    if path is None:
        raise CollectError("strace is not installed; install it (Debian/Ubuntu: `apt-get install strace`) "
                           "and run bufsim collect again")
    return path


def strace_version(strace: str) -> tuple[int, int]:
    try:
        out = subprocess.run([strace, "-V"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (0, 0)
    m = re.search(r"version (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def strace_command(strace: str, output: str, command: Sequence[str], stacks: bool = True,
                   version: tuple[int, int] = (0, 0)) -> list[str]:
    args = [strace, "-f", "-q", "-y", "-ttt", "-T", "-s", "0", "-e", "trace=" + ",".join(TRACED_SYSCALLS),
            "-o", output]
    if stacks:
        args.append("-k")
    if version >= (5, 3):
        args.append("--seccomp-bpf")  # stop only at traced calls: several times faster
    return args + ["--", *command]


def _open_output(path: str) -> int:
    if path == "-":
        return os.dup(sys.stdout.fileno())
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)


def _comments(command: Sequence[str], stack_depth: int, stacks: bool, options: str) -> list[str]:
    depth = "none (no -k)" if not stacks else ("whole stack" if stack_depth == 0 else str(stack_depth))
    return [
        "bufsim collect trace (docs/collect.md); times in microseconds from the first traced call",
        f"command: {' '.join(command)}",
        f"program contexts: stack depth {depth}; options: {options or 'none'}",
    ]


class _LineSplitter:
    """Turns chunks of bytes into lines for the builder."""

    def __init__(self, builder: TraceBuilder, keep: Optional[int] = None):
        self.builder = builder
        self.rest = b""
        self.keep = keep

    def push(self, data: bytes) -> None:
        if self.keep is not None:
            os.write(self.keep, data)
        data = self.rest + data
        lines = data.split(b"\n")
        self.rest = lines.pop()
        feed = self.builder.feed
        for raw in lines:
            feed(raw.decode("utf-8", "surrogateescape"))

    def close(self) -> None:
        if self.rest:
            self.builder.feed(self.rest.decode("utf-8", "surrogateescape"))
            self.rest = b""


def _build(output: str, command: Sequence[str], *, stack_depth: int, stacks: bool, reads_only: bool,
           include: Sequence[str], exclude: Sequence[str], no_libs: bool, live: bool
           ) -> tuple[TraceBuilder, TraceWriter, int]:
    excl = list(exclude) + (list(NO_LIBS_PATTERNS) if no_libs else [])
    options = " ".join([*(["--reads-only"] if reads_only else []), *(f"--include {p}" for p in include),
                        *(f"--exclude {p}" for p in exclude), *(["--no-libs"] if no_libs else [])])
    out_fd = _open_output(output)
    writer = TraceWriter(out_fd, _comments(command, stack_depth, stacks, options))

    def first_time(t: int) -> None:
        writer.t0 = t

    builder = TraceBuilder(writer.add, stack_depth=stack_depth, reads_only=reads_only,
                           path_filter=PathFilter(include, excl), live=live,
                           cwd=os.fsencode(os.getcwd()), hold=writer.hold, release=writer.release,
                           on_first_time=first_time)
    return builder, writer, out_fd


def collect_from_log(log: str, output: str, *, stack_depth: int = 0, reads_only: bool = False,
                     include: Sequence[str] = (), exclude: Sequence[str] = (), no_libs: bool = False
                     ) -> CollectResult:
    """Converts a saved ``strace -f [-k] -y -ttt -T`` log. Files are identified by ``stat`` of the
    paths now, so files changed or deleted since the run get ``?:?N:PATH`` names."""
    if not os.path.exists(log):
        raise FileNotFoundError(f"{log}: no such strace log")
    builder, writer, out_fd = _build(output, [f"(strace log {log})"], stack_depth=stack_depth, stacks=True,
                                     reads_only=reads_only, include=include, exclude=exclude,
                                     no_libs=no_libs, live=False)
    try:
        splitter = _LineSplitter(builder)
        with open(log, "rb") as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                splitter.push(chunk)
        splitter.close()
        builder.finish()
        outcome = builder.root_exit or "ended without an exit line (log truncated?)"
        writer.close([f"end: converted from {log}; the command {outcome}"])
    finally:
        os.close(out_fd)
    status = builder.root_status if builder.root_status is not None else 0
    return CollectResult(output, status, outcome, builder.stats, builder.unknown_files)


def collect(command: Sequence[str], output: str, *, stack_depth: int = 0, stacks: bool = True,
            reads_only: bool = False, include: Sequence[str] = (), exclude: Sequence[str] = (),
            no_libs: bool = False, keep_strace: Optional[str] = None) -> CollectResult:
    """Runs ``command`` under strace and writes its file I/O to ``output`` as interchange CSV.

    Returns when the command (and every process it started) has ended. SIGTERM and SIGHUP sent to
    this process are passed to the command; a second one kills it. Whatever ends the command, the
    trace written so far stays a valid CSV, and the result carries the command's exit status."""
    if not command:
        raise CollectError("give the command to trace after --, e.g. bufsim collect -o t.csv -- grep -r x src")
    if stack_depth < 0:
        raise CollectError(f"--stack-depth must be 0 (whole stack) or a positive number of frames, not {stack_depth}")
    strace = find_strace()
    exe = command[0]
    resolved = shutil.which(exe) if "/" not in exe else (exe if os.path.exists(exe) else None)
    if resolved is None:
        raise CollectError(f"{exe}: command not found", EXIT_NOT_FOUND)
    if os.path.isdir(resolved) or not os.access(resolved, os.X_OK):
        raise CollectError(f"{exe}: not an executable file", EXIT_NOT_EXECUTABLE)
    version = strace_version(strace)

    tmp = tempfile.mkdtemp(prefix="bufsim-collect-")
    fifo = os.path.join(tmp, "strace.fifo")
    os.mkfifo(fifo, 0o600)
    keep_fd = os.open(keep_strace, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if keep_strace else None
    builder, writer, out_fd = _build(output, command, stack_depth=stack_depth, stacks=stacks,
                                     reads_only=reads_only, include=include, exclude=exclude,
                                     no_libs=no_libs, live=True)
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
        splitter = _LineSplitter(builder, keep_fd)
        poller = select.poll()
        poller.register(read_fd, select.POLLIN)
        got_data = False
        while True:
            try:
                events = poller.poll(200)
            except InterruptedError:
                continue
            if not events:
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
        splitter.close()
        returncode = proc.wait()
        builder.finish()
        status = returncode if returncode >= 0 else 128 - returncode
        if builder.root_exit is not None:
            outcome = builder.root_exit
        elif returncode < 0:
            outcome = f"killed by {signal.Signals(-returncode).name}"
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

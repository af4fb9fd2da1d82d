"""Replaying a program's system calls as strace showed them: processes and threads, descriptor
tables, open file descriptions and their offsets, file identity, and the program context of each
call (AMP report §2 and §3.3: a hash of the user stack's return addresses).

The kernel rules followed: threads share one descriptor table; fork copies it and clone with
CLONE_FILES shares it; dup'ed descriptors and a forked child share the open file description, so
they share the offset; pread/pwrite leave the offset alone; O_APPEND writes go to the end of the
file (even pwrite, pwrite(2) BUGS); exec closes close-on-exec descriptors. A file is its device and
inode; an inode number reused after its file was unlinked or replaced is a new generation.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat as stat_mod
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Callable, Iterable, Optional, Sequence

from bufsim import strace as st


#: Stack frames in these modules are skipped when hashing the program context: the C library, the
#: dynamic loader and the vDSO sit between every call site and the kernel, so they carry no
#: information about the call site (AMP report §2 hashes the program's own return addresses).
RUNTIME_MODULE_PREFIXES = (
    "libc.so",
    "libc-",
    "libc.musl",
    "ld-linux",
    "ld64.so",
    "ld-musl",
    "ld-",
    "libpthread",
    "linux-vdso",
    "linux-gate",
    "[vdso]",
)


#: Calls that move data; a blocked one holds back later records so the output stays time-ordered.
DATA_CALLS = frozenset(
    {
        "read",
        "pread64",
        "readv",
        "preadv",
        "preadv2",
        "write",
        "pwrite64",
        "writev",
        "pwritev",
        "pwritev2",
        "sendfile",
        "sendfile64",
        "copy_file_range",
        "splice",
    }
)


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


DELETED_MARK = b" (deleted)"


def fd_link_path(link: bytes, nlink: int) -> bytes:
    """The path behind a ``/proc/PID/fd/N`` link: the kernel appends `` (deleted)`` to the name
    of a file whose last name is gone (no link left), which is no part of its name."""
    return link[: -len(DELETED_MARK)] if nlink == 0 and link.endswith(DELETED_MARK) else link


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
    #: Its last name is gone while descriptors still hold it: its data is dropped when the last
    #: one closes (the kernel frees a deleted file's pages with its last reference).
    drop_pending: bool = False


@dataclass(eq=False)
class OpenFile:
    """An open file description: shared by dup'ed descriptors and across fork, so they share the
    offset. ``file`` is None for what is not a regular file or block device (pipes, sockets, ttys)."""

    file: Optional[FileIdentity]
    offset: int = 0
    append: bool = False
    #: O_DIRECT: its reads and writes bypass the page cache (see :attr:`Stats.direct`).
    direct: bool = False


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
            or any(fnmatch.fnmatchcase(text, g) for g in self.exclude_globs)
        )
        if len(self._cache) < 1_000_000:
            self._cache[path] = keep
        return keep


def _is_glob(p: str) -> bool:
    return any(c in p for c in "*?[")


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/") or prefix == ""


# ---------------------------------------------------------------------------------------------
# Replaying strace's view of the system calls


@dataclass
class Stats:
    reads: int = 0
    writes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    #: Drop requests: truncated, punched or deleted files (the kernel tracer writes them).
    drops: int = 0
    #: Hint requests: fadvise(WILLNEED) and readahead(2).
    hints: int = 0
    #: Reads and writes through O_DIRECT descriptors (InnoDB's data and log files, say): they go
    #: between the program's memory and the disk without the page cache, which a buffer cache
    #: simulator replays, so they are counted and left out of the trace.
    direct: int = 0
    unparsed: int = 0
    files: set = field(default_factory=set)
    pids: set = field(default_factory=set)
    contexts: set = field(default_factory=set)

    @property
    def records(self) -> int:
        return self.reads + self.writes + self.drops + self.hints


class TraceBuilder:
    """Consumes strace lines (:meth:`feed`) and emits :class:`Record` objects to ``emit``.

    ``live`` means the traced processes are running now, so ``/proc/TID/fd/N`` tells which file a
    descriptor refers to; parsing a saved log (``live=False``) can only ``stat`` the path shown."""

    def __init__(
        self,
        emit: Callable[[Record], None],
        *,
        stack_depth: int = 0,
        reads_only: bool = False,
        path_filter: Optional[PathFilter] = None,
        live: bool = False,
        cwd: Optional[bytes] = None,
        hold: Optional[Callable[[int, int], None]] = None,
        release: Optional[Callable[[int], None]] = None,
        on_first_time: Optional[Callable[[int], None]] = None,
    ):
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
        #: Deleted files some descriptor still held when their last name went.
        self.pending_drops: list[FileIdentity] = []
        self.unknown_files = 0
        self.root: Optional[int] = None
        self.root_exit: Optional[str] = None
        self.root_status: Optional[int] = None
        # Whether the traced command itself started: a root whose execve only failed (ENOEXEC,
        # EACCES) never ran, and exits as `env` does (126).
        self.root_executed = False
        self.root_exec_errno: Optional[str] = None
        self.first_time: Optional[int] = None
        self.stats = Stats()
        # The call whose -k frames are being read: (tid, time_us, call); frames follow their line.
        self._last: Optional[tuple[int, int, st.Syscall]] = None
        self._frames: list[str] = []
        self._release_after: Optional[int] = None
        self._contexts: dict[str, int] = {}

    # -- lines ---------------------------------------------------------------------------------

    def feed(self, raw: str) -> None:
        if raw.startswith(" > "):
            # A -k frame of the call above; parsed only if that call makes a record.
            if self._last is not None:
                self._frames.append(raw)
            return
        line = st.parse_line(raw)
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
            call = None
            if pending is not None and pending.name == line.name:
                call = st.parse_call(pending.name, pending.text + line.text)
            if call is None:
                self.stats.unparsed += 1
                self.release(pid)
                return
            # Later records wait until this one, which started earlier, is out (_finish_last).
            self._last = (pid, pending.time_us, call)
            self._release_after = pid
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
        if call.name in ("execve", "execveat") and tid == self.root and not self.root_executed:
            self.root_executed = not call.failed
            self.root_exec_errno = None if self.root_executed else call.errno
        if not call.failed or call.name == "close":
            handler = _HANDLERS.get(call.name)
            if handler is not None:
                handler(self, self.task(tid), time_us, call, frames)
        if self._release_after is not None:
            self.release(self._release_after)
            self._release_after = None

    def context(self, frame_lines: list[str]) -> int:
        """The program context of a call from its raw -k lines (cached: a program has few stacks)."""
        key = "\n".join(frame_lines)
        ctx = self._contexts.get(key)
        if ctx is None:
            ctx = context_id((st.parse_frame(l) for l in frame_lines), self.stack_depth)
            if len(self._contexts) < 100_000:
                self._contexts[key] = ctx
        return ctx

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
            self.root_exit = (
                f"exited with status {line.status}" if line.status is not None else f"was killed by {line.signal}"
            )
        task = self.tasks.pop(pid, None)
        if task is not None:
            # Its descriptors close with it: a deleted file it held may be gone now.
            self.settle_drops(task, line.time_us)

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
        if path.endswith(DELETED_MARK):
            path = path[: -len(DELETED_MARK)]
        s = None
        if self.live and fd is not None:
            proc = f"/proc/{tid}/fd/{fd}"
            try:
                link = os.fsencode(os.readlink(proc))
                if link == path or link == path + DELETED_MARK:
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

    def forget_path(self, path: Optional[bytes], task: Optional[Task] = None, time_us: int = 0) -> None:
        """The name ``path`` no longer leads to its file (unlinked, or renamed over): a file with no
        other link is gone, and its inode number may come back as a different file. Its data is
        dropped now, or when the last descriptor that holds it closes."""
        if path is None:
            return
        fid = self.by_path.pop(path, None)
        if fid is not None and fid.nlink <= 1:
            fid.retired = True
            if task is not None:
                fid.drop_pending = True
                self.pending_drops.append(fid)
                self.settle_drops(task, time_us)

    def settle_drops(self, task: Task, time_us: int) -> None:
        """Writes the drop of each deleted file that no descriptor holds any more (the last one
        closed, by ``close``, an exit, or a new open given its number)."""
        if not self.pending_drops:
            return
        tables = {id(t.table): t.table for t in self.tasks.values()}.values()
        held = {id(of.file) for table in tables for of in table.fds.values()}
        still = []
        for f in self.pending_drops:
            if id(f) in held:
                still.append(f)
            else:
                f.drop_pending = False
                self.drop(task, time_us, 0, f, 0, 0)
        self.pending_drops = still

    def drop(self, task: Task, time_us: int, dur_us: int, file: Optional[FileIdentity], offset: int, size: int) -> None:
        """A drop request: ``file``'s bytes from ``offset`` are gone (``size`` 0: to the end)."""
        self._special("D", task, time_us, dur_us, file, offset, size)

    def hint(self, task: Task, time_us: int, dur_us: int, file: Optional[FileIdentity], offset: int, size: int) -> None:
        """A hint request: ``file``'s bytes from ``offset`` are wanted soon (``size`` 0: to the end)."""
        self._special("H", task, time_us, dur_us, file, offset, size)

    def _special(
        self, op: str, task: Task, time_us: int, dur_us: int, file: Optional[FileIdentity], offset: int, size: int
    ) -> None:
        """Emits a request that is not an access (``D`` or ``H``) of a file the filter keeps."""
        if file is None or not self.filter.keeps(file.path):
            return
        if op == "D":
            self.stats.drops += 1
        else:
            self.stats.hints += 1
        self.stats.files.add(file.name)
        self.emit(Record(time_us, dur_us, task.tgid, 0, op, file, offset, size))

    # -- records -------------------------------------------------------------------------------

    def record(
        self,
        task: Task,
        time_us: int,
        call: st.Syscall,
        frames: list[str],
        op: str,
        file: Optional[FileIdentity],
        offset: int,
        size: int,
    ) -> None:
        if file is None or size <= 0:
            return  # pipes and sockets; zero-byte transfers (end of file) touch no block
        if op == "W" and self.reads_only:
            return
        if not self.filter.keeps(file.path):
            return
        ctx = self.context(frames)
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

    def transfer_read(self, task, time_us, call, frames, of: Optional[OpenFile], size: int, at: Optional[int]) -> None:
        """A read of ``size`` bytes at ``at`` (None: the descriptor's offset, which moves)."""
        if of is None:
            return
        if at is None:
            at = of.offset
            of.offset += size
        if of.direct and of.file is not None:
            self.stats.direct += 1
            return
        self.record(task, time_us, call, frames, "R", of.file, at, size)

    def transfer_write(
        self, task, time_us, call, frames, of: Optional[OpenFile], size: int, at: Optional[int], append: bool = False
    ) -> None:
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
            if of.direct:
                self.stats.direct += 1
                return
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
        b.drop(task, t, call.dur_us, fid, 0, 0)
    task.table.install(fd, OpenFile(fid, 0, "O_APPEND" in flags, "O_DIRECT" in flags), "O_CLOEXEC" in flags)


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
        # A seek from the end tells the file's size now (stdio and Python do this when opening for
        # append): later O_APPEND writes start there, whatever the size was when we looked at it.
        whence = call.args[-1]
        off = st.parse_int(call.args[1]) if call.name == "lseek" and len(call.args) > 2 else None
        if whence == "SEEK_END" and off is not None and of.file is not None:
            of.file.size = pos - off


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
        words = st.flag_words(call.args[2])
        of.append, of.direct = "O_APPEND" in words, "O_DIRECT" in words


@_handles("close")
def _close(b, task, t, call, frames) -> None:
    if call.errno == "EBADF":
        return
    fd, _ = st.fd_arg(call.args[0]) if call.args else (None, None)
    if fd is not None:
        of = task.table.fds.get(fd)
        task.table.close(fd)  # Linux frees the descriptor even when close reports EINTR or EIO
        if of is not None and of.file is not None and of.file.drop_pending:
            b.settle_drops(task, t)


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
        b.forget_path(b.resolve(task, None, call.args[0]), task, t)


@_handles("unlinkat")
def _unlinkat(b, task, t, call, frames) -> None:
    if len(call.args) >= 2:
        b.forget_path(b.resolve(task, call.args[0], call.args[1]), task, t)


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
    b.forget_path(new, task, t)  # a file renamed over is replaced
    if moved is not None:
        b.by_path[new] = moved


@_handles("ftruncate")
def _ftruncate(b, task, t, call, frames) -> None:
    _, of = b.fd_file(task, call.args[0])
    n = st.parse_int(call.args[1]) if len(call.args) > 1 else None
    if of is not None and of.file is not None and n is not None:
        of.file.size = n
        b.drop(task, t, call.dur_us, of.file, n, 0)


@_handles("truncate")
def _truncate(b, task, t, call, frames) -> None:
    path = b.resolve(task, None, call.args[0]) if call.args else None
    fid = b.by_path.get(path) if path is not None else None
    n = st.parse_int(call.args[1]) if len(call.args) > 1 else None
    if fid is not None and n is not None:
        fid.size = n
        b.drop(task, t, call.dur_us, fid, n, 0)


@_handles("fallocate")
def _fallocate(b, task, t, call, frames) -> None:
    # fallocate(fd, mode, offset, len): a punched hole or zeroed range drops its pages; collapsing
    # or inserting a range moves the data after it.
    if len(call.args) < 4:
        return
    _, of = b.fd_file(task, call.args[0])
    mode = st.flag_words(call.args[1])
    offset, n = st.parse_int(call.args[2]), st.parse_int(call.args[3])
    if of is None or offset is None or n is None:
        return
    if mode & {"FALLOC_FL_COLLAPSE_RANGE", "FALLOC_FL_INSERT_RANGE"}:
        if of.file is not None and of.file.size > offset:
            b.drop(task, t, call.dur_us, of.file, offset, of.file.size - offset)
    elif mode & {"FALLOC_FL_PUNCH_HOLE", "FALLOC_FL_ZERO_RANGE"}:
        b.drop(task, t, call.dur_us, of.file, offset, n)


@_handles("fadvise64")
def _fadvise(b, task, t, call, frames) -> None:
    # fadvise64(fd, offset, len, advice): DONTNEED drops the clean pages of the range (len 0: to
    # the end, written as the bytes up to the end: the file keeps its size, where a drop of size
    # 0 says it was truncated); dirty pages stay until written, which the model does not tell
    # apart. WILLNEED asks for the range to be read ahead: a hint (len 0: to the end).
    if len(call.args) < 4 or call.args[3].strip() not in ("POSIX_FADV_DONTNEED", "POSIX_FADV_WILLNEED"):
        return
    _, of = b.fd_file(task, call.args[0])
    offset, n = st.parse_int(call.args[1]), st.parse_int(call.args[2])
    if of is None or of.file is None or offset is None or n is None:
        return
    if call.args[3].strip() == "POSIX_FADV_WILLNEED":
        b.hint(task, t, call.dur_us, of.file, offset, n)
        return
    if n == 0:
        n = of.file.size - offset
    if n > 0:
        b.drop(task, t, call.dur_us, of.file, offset, n)


@_handles("readahead")
def _readahead(b, task, t, call, frames) -> None:
    # readahead(fd, offset, count): fadvise(WILLNEED) by another name (count 0: to the end).
    if len(call.args) < 3:
        return
    _, of = b.fd_file(task, call.args[0])
    offset, n = st.parse_int(call.args[1]), st.parse_int(call.args[2])
    if of is None or of.file is None or offset is None or n is None:
        return
    b.hint(task, t, call.dur_us, of.file, offset, n)


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


#: Every system call the replay understands (strace traces exactly these).
HANDLED_SYSCALLS = tuple(_HANDLERS)

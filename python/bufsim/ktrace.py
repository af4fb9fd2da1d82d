"""``bufsim collect --tracer kernel``: record a program's file I/O from the kernel's own tracepoints
(tracefs), with true timing, plus the page cache's ground truth for the same run.

The prefetching paper's traces came from a modified strace (§6.1); here the same request records
(time, duration, pid, ctx, op, file, offset, size) come from ``syscalls:sys_enter_*/sys_exit_*``
without stopping the program, and the kernel's page-cache decisions (``filemap``, ``readahead``,
``block`` tracepoints) go to a companion file, ``TRACE.pagecache.csv`` (docs/collect.md).

Two private tracefs instances are used: one follows the traced process tree (``set_event_pid`` with
``options/event-fork``) and carries the syscalls, page-cache lookups, insertions, faults and
read-ahead decisions, which all happen in the reading task; the other is system-wide for what
happens in other contexts (evictions by reclaim, disk requests and their completions in interrupts)
and is filtered afterwards to the traced files and tasks. Reader threads copy both pipes to
temporary files while the command runs, and look at each newly opened descriptor through
``/proc/TID/fd/N`` within moments of the open (the kernel tracepoints carry no path strings on this
kernel: event probes are not built in); a file the program closed before that look is named from
fanotify's record of its open (:mod:`bufsim.opened_files`). The replay that turns events into records runs after the
command ends, so a command that fails, is killed or times out still leaves a whole trace.
"""

from __future__ import annotations

import bisect
import errno
import heapq
import itertools
import math
import os
import re
import shutil
import signal
import stat as stat_mod
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional, Sequence

from bufsim.collect import (
    EXIT_NOT_EXECUTABLE,
    EXIT_NOT_FOUND,
    CSV_HEADER,
    CollectError,
    CollectResult,
    check_trace_output,
)
from bufsim.collect_paths import NO_LIBS_PATTERNS
from bufsim.fd_thread import DrainThread
from bufsim.opened_files import OpenedFiles
from bufsim import strace as st
from bufsim.syscalls import PathFilter, Stats, context_id, csv_field, display_path, fd_link_path

TRACEFS = "/sys/kernel/tracing"
PAGE = 4096

#: Syscalls whose entry and exit are traced: every call that moves file data or changes which file
#: a descriptor names or where its offset is.
DATA_READS = ("read", "pread64", "readv", "preadv", "preadv2")
DATA_WRITES = ("write", "pwrite64", "writev", "pwritev", "pwritev2")
FD_CALLS = (
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "lseek",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit_group",
    "sendfile64",
    "copy_file_range",
    "splice",
)
#: Calls that drop a file's data (truncation, hole punching, fadvise(DONTNEED)), and those
#: whose deletions of page-cache pages drop a whole file (removal of a name, the last close,
#: an exit): followed to write drop requests (op D) into the trace.
DROP_CALLS = (
    "truncate",
    "ftruncate",
    "fallocate",
    "fadvise64",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
)
#: Calls that ask for a range to be read ahead (fadvise(WILLNEED) is among the drop calls above):
#: written as hint requests (op H).
HINT_CALLS = ("readahead",)
TRACED_CALLS = DATA_READS + DATA_WRITES + FD_CALLS + DROP_CALLS + HINT_CALLS
#: Calls that move data through a pipe inside the kernel, reading a few pages at a time.
SPLICED = frozenset({"sendfile64", "copy_file_range", "splice"})
OPEN_CALLS = frozenset({"open", "openat", "openat2", "creat"})

#: Events of the traced tasks (instance filtered by set_event_pid + event-fork).
TASK_EVENTS = (
    "filemap/mm_filemap_get_pages",
    "filemap/mm_filemap_add_to_page_cache",
    "filemap/mm_filemap_fault",
    "readahead/page_cache_sync_ra",
    "readahead/page_cache_async_ra",
    "readahead/page_cache_ra_unbounded",
    "readahead/page_cache_ra_order",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
)
#: Events that happen outside the traced tasks' context (reclaim, interrupts): system-wide. The
#: reclaim brackets tell a page deleted by reclaim from one deleted by truncation or removal in
#: the same task: memcg and direct reclaim run in the task that charges the memory.
RECLAIM_BEGIN = (
    "mm_vmscan_memcg_reclaim_begin",
    "mm_vmscan_direct_reclaim_begin",
    "mm_vmscan_memcg_softlimit_reclaim_begin",
    "mm_vmscan_node_reclaim_begin",
)
RECLAIM_END = tuple(name.replace("_begin", "_end") for name in RECLAIM_BEGIN)
SYSTEM_EVENTS = (
    "filemap/mm_filemap_delete_from_page_cache",
    "block/block_rq_issue",
    "block/block_rq_complete",
    *(f"vmscan/{name}" for name in RECLAIM_BEGIN + RECLAIM_END),
)

PAGECACHE_HEADER = "time_us,pid,event,dev,ino,index,count,hits,detail"

O_APPEND = 0o2000
O_TRUNC = 0o1000
O_DIRECT = 0o40000
O_CLOEXEC = 0o2000000
POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED = 3, 4
FALLOC_FL_PUNCH_HOLE, FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_ZERO_RANGE, FALLOC_FL_INSERT_RANGE = 0x02, 0x08, 0x10, 0x20
O_ACCMODE = 3
F_DUPFD, F_SETFD, F_SETFL, F_DUPFD_CLOEXEC = 0, 2, 4, 1030
CLONE_FILES, CLONE_THREAD = 0x400, 0x10000
SEEK_END = 2


@dataclass
class KernelCollectResult(CollectResult):
    """What :func:`collect_kernel` returns: :class:`~bufsim.collect.CollectResult` plus the page
    cache's totals for the traced tasks and the events the kernel's buffer dropped."""

    pagecache: str = ""
    pagecache_rows: int = 0
    looked_up: int = 0  # pages the traced reads looked up
    hits: int = 0  # of those, pages already cached
    inserted: int = 0
    evicted: int = 0
    dropped: int = 0  # pages deleted by truncation or removal, not by reclaim
    disk_requests: int = 0
    lost_events: int = 0
    #: CLOCK_MONOTONIC in microseconds at the trace's time 0 (its first traced event), so that
    #: what was measured beside the run (``bufsim validate``'s memory samples) can be placed on
    #: the trace's clock; None when tracefs could not be set to the monotonic clock.
    t0_us: Optional[int] = None

    def summary(self) -> str:
        text = super().summary()
        text += (
            f"; page cache: {self.looked_up} pages looked up, {self.hits} hits, {self.inserted} inserted, "
            f"{self.evicted} evicted, {self.dropped} dropped, {self.disk_requests} disk requests -> {self.pagecache}"
        )
        if self.lost_events:
            text += f"; the kernel's trace buffer dropped {self.lost_events} events (records may be missing)"
        return text


def to_end(file_size: int, offset: int) -> Optional[int]:
    """The bytes from ``offset`` to the end of a file of ``file_size`` bytes, as a drop's size (a
    size of 0 would say the file was truncated); None when nothing is there."""
    return file_size - offset if file_size > offset else None


def pagecache_path(trace: str) -> str:
    """The companion file of a trace written with ``--tracer kernel``."""
    return trace + ".pagecache.csv"


# ---------------------------------------------------------------------------------------------
# tracefs


def find_tracefs() -> str:
    """The tracefs mount point, mounting it when needed; a one-line CollectError (exit 2) naming what
    is missing otherwise."""
    if os.geteuid() != 0:
        raise CollectError(
            "--tracer kernel needs root (tracefs instances and set_event_pid); run as root, or use --tracer strace"
        )
    for path in (TRACEFS, "/sys/kernel/debug/tracing"):
        if os.path.exists(os.path.join(path, "instances")):
            return path
    try:
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        pass
    if os.path.exists(os.path.join(TRACEFS, "instances")):
        return TRACEFS
    raise CollectError(
        f"--tracer kernel needs tracefs, which is not mounted at {TRACEFS} and could not be "
        f"mounted (mount -t tracefs nodev {TRACEFS}); mount it, or use --tracer strace"
    )


class Instance:
    """A private tracefs instance; :meth:`remove` disables everything and removes it."""

    def __init__(self, root: str, name: str):
        self.path = os.path.join(root, "instances", name)
        os.mkdir(self.path)
        self.events: list[str] = []

    def write(self, rel: str, value: str) -> None:
        with open(os.path.join(self.path, rel), "w") as f:
            f.write(value)

    def try_write(self, rel: str, value: str) -> bool:
        try:
            self.write(rel, value)
            return True
        except OSError:
            return False

    def enable(self, event: str) -> None:
        try:
            self.write(f"events/{event}/enable", "1")
            self.events.append(event)
        except OSError as e:
            if e.errno not in (errno.ENOENT,):
                raise

    def lost_events(self) -> int:
        lost = 0
        base = os.path.join(self.path, "per_cpu")
        try:
            cpus = os.listdir(base)
        except OSError:
            return 0
        for cpu in cpus:
            try:
                with open(os.path.join(base, cpu, "stats")) as f:
                    for line in f:
                        k, _, v = line.partition(":")
                        if k.strip() in ("overrun", "dropped events"):
                            lost += int(v.split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return lost

    def remove(self) -> None:
        self.try_write("tracing_on", "0")
        for ev in self.events:
            self.try_write(f"events/{ev}/enable", "0")
        self.try_write("set_event_pid", "")
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)  # a reader still has trace_pipe open


def remove_stale_instances(root: str) -> list[str]:
    """Removes instances left by a ``bufsim collect`` that was itself killed with SIGKILL (the one
    case its cleanup cannot run): ``bufsim-PID-...`` whose PID no longer exists."""
    removed = []
    base = os.path.join(root, "instances")
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        parts = name.split("-")
        if len(parts) < 3 or parts[0] != "bufsim" or not parts[1].isdigit():
            continue
        if os.path.exists(f"/proc/{parts[1]}"):
            continue
        inst = Instance.__new__(Instance)
        inst.path = os.path.join(base, name)
        inst.events = []
        inst.try_write("events/enable", "0")
        inst.remove()
        removed.append(name)
        # Its event dump too (the instance is named after it), which can be tens of GB.
        shutil.rmtree(os.path.join(tempfile.gettempdir(), TMP_PREFIX + parts[2]), ignore_errors=True)
    return removed


#: The event dumps' directory is named TMP_PREFIX + 8 characters, which the instances' names carry.
TMP_PREFIX = "bufsim-ktrace-"

#: Free space the event dumps leave on their disk: the command is stopped before the disk fills
#: (a kernel build's events passed 40 GB and filled this machine's disk, which stopped every
#: program on it).
DISK_FLOOR = 1 << 30

#: Bytes a copier writes between two looks at the free space.
DISK_CHECK_BYTES = 64 << 20


class PipeCopier(DrainThread):
    """Copies an instance's trace_pipe to a file as it fills; ``on_chunk`` sees the text first."""

    def __init__(self, pipe: str, out_path: str, on_chunk=None):
        super().__init__()
        self.fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
        self.out = open(out_path, "wb")
        self.dir = os.path.dirname(out_path)
        self.on_chunk = on_chunk
        self.rest = b""
        self.written = 0
        self.unchecked = 0
        #: Set when the disk is (nearly) full: nothing more is written, and the run stops.
        self.disk_full = False

    def drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                return
            if not self.write(chunk):
                continue  # the disk is full: the pipe keeps flowing until the run stops
            if self.on_chunk is not None:
                data = self.rest + chunk
                cut = data.rfind(b"\n") + 1
                self.rest = data[cut:]
                if cut:
                    self.on_chunk(data[:cut])

    def write(self, chunk: bytes) -> bool:
        """Writes ``chunk`` unless the disk is (nearly) full; whether it was written."""
        self.unchecked += len(chunk)
        if self.unchecked >= DISK_CHECK_BYTES:
            self.unchecked = 0
            v = os.statvfs(self.dir)
            self.disk_full = self.disk_full or v.f_bavail * v.f_frsize < DISK_FLOOR
        if self.disk_full:
            return False
        try:
            self.out.write(chunk)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            self.disk_full = True
            return False
        self.written += len(chunk)
        return True

    def finish(self) -> None:
        super().finish()
        self.out.close()


# ---------------------------------------------------------------------------------------------
# Looking at descriptors while the command runs

# An open, or a dup that gives a descriptor a new number: a shell's redirection opens a file,
# dup2s it onto standard output and closes the first number at once, before the reader can look
# at it; the dup's new number stays for the command.
_OPEN_EXIT = re.compile(
    rb"-(\d+)\s+\(\s*([\d-]+)\)\s+\[\d+\]\s+\S+\s+(\d+)\.(\d+): sys_(?:openat2?|open|creat|dup[23]?) -> 0x([0-9a-f]+)\n"
)


@dataclass
class FdLook:
    dev: int
    ino: int
    mode: int
    size: int
    path: bytes
    #: The open file's access mode as /proc/TID/fdinfo/N showed it (None: not read). A look taken
    #: after the program closed the descriptor and opened another file under its number sees
    #: that file: an access mode other than the call's gives the stale look away.
    accmode: Optional[int] = None
    #: Whether that open file has O_APPEND (None: not read). Gives a stale look away when the
    #: access modes agree: a shell's `> out` then `>> log` under one number, both write-only.
    append: Optional[bool] = None
    #: When the look ended, in microseconds of CLOCK_MONOTONIC (the trace's clock when it is
    #: "mono"): a look ending after the process opened another file under the same number may
    #: be of that file (:meth:`FdWatcher.fresh_looks`).
    taken: Optional[int] = None


class FdWatcher:
    """Looks at ``/proc/TID/fd/N`` for every successful open and dup as soon as the reader sees it.
    Keyed by (tid, fd, event time), so the replay finds the look for exactly that call."""

    def __init__(self) -> None:
        self.looks: dict[tuple[int, int, int], Optional[FdLook]] = {}
        #: Per (process, descriptor number), the times of the opens and dups that returned it.
        self.numbered: dict[tuple[int, int], list[int]] = {}
        self.process: dict[int, int] = {}

    def on_chunk(self, data: bytes) -> None:
        for m in _OPEN_EXIT.finditer(data):
            ret = int(m.group(5), 16)
            if ret >= 1 << 31:
                continue  # an error
            tid = int(m.group(1))
            # Threads share a descriptor table: a number is reused process-wide.
            tgid = int(m.group(2)) if m.group(2).strip(b"-") else tid
            self.process[tid] = tgid
            t = int(m.group(3)) * 1_000_000 + int(m.group(4))
            self.numbered.setdefault((tgid, ret), []).append(t)
            look = look_fd(tid, ret)
            if look is not None:
                look.taken = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            self.looks[(tid, ret, t)] = look

    def fresh_looks(self) -> dict[tuple[int, int, int], Optional[FdLook]]:
        """The looks, without those that may be of a later open: on a loaded machine the look at
        a shell's `> /dev/null` can come after the shell closed it and opened the next
        command's `> out` under the same number, write-only both, and would make the first
        command's writes (and its O_TRUNC) those of `out`. Only for a trace on the monotonic
        clock, which the looks' times are on."""
        for times in self.numbered.values():
            times.sort()
        fresh: dict[tuple[int, int, int], Optional[FdLook]] = {}
        for (tid, fd, t), look in self.looks.items():
            if look is not None and look.taken is not None:
                times = self.numbered.get((self.process.get(tid, tid), fd), [])
                later = bisect.bisect_right(times, t)
                if later < len(times) and times[later] <= look.taken:
                    look = None
            fresh[(tid, fd, t)] = look
        return fresh


def look_fd(tid: int, fd: int) -> Optional[FdLook]:
    """What descriptor ``fd`` of ``tid`` names now. The file is held open (``O_PATH``) while its
    identity and name are read, so both are of one file even if the program closes the number and
    opens another file under it meanwhile (stat then readlink of the link could pair one file's
    inode with the next one's path); fdinfo, read last, must show the same inode, or the number
    changed during the look and nothing of it is kept."""
    link = f"/proc/{tid}/fd/{fd}"
    try:
        held = os.open(link, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        s = os.fstat(held)
        path = os.readlink(b"/proc/self/fd/%d" % held)
    except OSError:
        return None
    finally:
        os.close(held)
    accmode = append = None
    try:
        with open(f"/proc/{tid}/fdinfo/{fd}", "rb") as info:
            for line in info:
                if line.startswith(b"flags:"):
                    flags = int(line.split()[1], 8)
                    accmode, append = flags & O_ACCMODE, bool(flags & O_APPEND)
                elif line.startswith(b"ino:") and int(line.split()[1]) != s.st_ino:
                    return None
    except (OSError, ValueError, IndexError):
        pass
    return FdLook(s.st_dev, s.st_ino, s.st_mode, s.st_size, fd_link_path(path, s.st_nlink), accmode, append)


# ---------------------------------------------------------------------------------------------
# Parsing the trace text

_LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\(\s*([\d-]+)\)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): (.*)$")
_ENTER = re.compile(r"^sys_(\w+)\((.*)\)$")
_EXIT = re.compile(r"^sys_(\w+) -> 0x([0-9a-f]+)$")
_DEV_INO = re.compile(r"dev[= ](\d+):(\d+) ino[= ]([0-9a-f]+)")
_KV = re.compile(r"(\w+)=(-?\d+)")
_OFS_RANGE = re.compile(r"ofs=(\d+)-(\d+)")
_FRAME = re.compile(r"^ => (?:(\S.*?)\[\+0x([0-9a-f]+)\]|\s*<([0-9a-f]+)>)\s*$")
_BLOCK = re.compile(r"^(\d+),(\d+) (\S+) (?:\d+ )?\(.*?\) (\d+) \+ (\d+)")


@dataclass
class Event:
    tid: int
    tgid: int
    t: int  # microseconds (trace clock)
    name: str  # "enter", "exit", or the tracepoint's name
    call: str = ""
    body: str = ""
    frames: list = field(default_factory=list)


def parse_events(path: str) -> Iterator[Event]:
    """The events of a saved trace_pipe text, with the user stack that follows each one."""
    last: Optional[Event] = None
    with open(path, "r", encoding="utf-8", errors="surrogateescape") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if raw.startswith(" => "):
                if last is not None:
                    m = _FRAME.match(raw)
                    if m is not None:
                        if m.group(1) is not None:
                            last.frames.append(st.Frame(m.group(1), "", int(m.group(2), 16)))
                        else:
                            last.frames.append(st.Frame(None, "", int(m.group(3), 16)))
                continue
            m = _LINE.match(raw)
            if m is None:
                continue
            body = m.group(7)
            if body.startswith("<user stack trace>"):
                continue
            tid = int(m.group(2))
            tgid_s = m.group(3)
            tgid = int(tgid_s) if tgid_s.isdigit() else tid
            t = int(m.group(5)) * 1_000_000 + int(m.group(6))
            if last is not None:
                yield last
            e = _ENTER.match(body)
            if e is not None:
                last = Event(tid, tgid, t, "enter", e.group(1), e.group(2))
                continue
            x = _EXIT.match(body)
            if x is not None:
                last = Event(tid, tgid, t, "exit", x.group(1), x.group(2))
                continue
            name, _, rest = body.partition(": ")
            last = Event(tid, tgid, t, name, "", rest)
    if last is not None:
        yield last


def enter_args(body: str) -> dict[str, int]:
    out = {}
    for part in body.split(", "):
        k, _, v = part.partition(": ")
        try:
            out[k] = int(v, 16)
        except ValueError:
            pass
    return out


def signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def dev_number(major: int, minor: int) -> int:
    return os.makedev(major, minor)


# ---------------------------------------------------------------------------------------------
# Replay: tasks, descriptor tables, open file descriptions


@dataclass(eq=False)
class KFile:
    dev: int
    ino: int
    path: Optional[bytes]
    size: int = 0
    regular: bool = True


@dataclass(eq=False)
class KOpen:
    file: Optional[KFile]
    offset: int = 0
    append: bool = False
    #: Opened with O_TRUNC before its file was known: (task, open call, its exit), so that the
    #: drop is written when a dup, a read or a write names the file (:meth:`Replay.file_known`).
    truncated_by: Optional[tuple] = None
    #: Read through already: the first read's record says the open is new (`opened`).
    read_yet: bool = False
    #: The open's access mode (O_RDONLY, O_WRONLY, O_RDWR); None when opened before the trace.
    accmode: Optional[int] = None
    #: O_DIRECT (at open or by fcntl(F_SETFL)): its transfers bypass the page cache.
    direct: bool = False
    #: Drop and hint calls (task, call, exit, arguments) made through this open before its file
    #: was known (the open not looked at in time): written when a read or write names the file.
    held: list = field(default_factory=list)


@dataclass(eq=False)
class KTable:
    fds: dict = field(default_factory=dict)
    cloexec: set = field(default_factory=set)

    def copy(self) -> "KTable":
        return KTable(dict(self.fds), set(self.cloexec))


@dataclass(eq=False)
class KTask:
    tid: int
    tgid: int
    table: KTable
    parent: Optional["KTask"] = None
    settled: bool = False  # thread or process decided (from clone flags or the first event's tgid)
    call: Optional[Event] = None  # the syscall in progress
    pages: list = field(default_factory=list)  # (dev, ino, first, last, hits) lookups of that call
    inserted: set = field(default_factory=set)  # (dev, ino, index) inserted during that call
    clone_flags: Optional[int] = None


class RowSpool:
    """The traced tasks' page-cache rows, written to a file as they come instead of held (a long
    run makes tens of millions): ``append`` as a list's, then one pass in order of appending.
    Remembers the files the rows name and whether their times never went backwards."""

    def __init__(self, path: str):
        self.path = path
        self._out = open(path, "w", encoding="utf-8", errors="surrogateescape")
        self.touched: set[tuple[int, int]] = set()
        self.in_order = True
        self._last = -1

    def append(self, row: tuple) -> None:
        t, _, _, dev, ino = row[:5]
        if t < self._last:
            self.in_order = False
        self._last = max(self._last, t)
        self.touched.add((dev, ino))
        self._out.write("\t".join(map(str, row)) + "\n")

    def __iter__(self) -> Iterator[tuple]:
        self._out.flush()
        with open(self.path, "r", encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                t, pid, kind, dev, ino, index, count, hits, detail = line.rstrip("\n").split("\t", 8)
                yield (
                    int(t),
                    int(pid),
                    kind,
                    int(dev),
                    int(ino) if ino else "",
                    int(index),
                    int(count),
                    int(hits) if hits else "",
                    detail,
                )

    def close(self) -> None:
        self._out.close()


class Replay:
    """Turns the traced tasks' events into request records and page-cache rows."""

    def __init__(
        self,
        looks: dict,
        path_filter: PathFilter,
        reads_only: bool,
        stack_depth: int,
        stacks: bool,
        opened: Optional[dict] = None,
        spool: Optional[str] = None,
        tracer_pid: Optional[int] = None,
    ):
        self.looks = looks
        #: The tracer's own process: fanotify's events and the descriptor looks hold the files
        #: they name, so a file the command removed can lose its pages when the tracer lets go.
        self.tracer_pid = tracer_pid
        self.opened = opened or {}
        self.filter = path_filter
        self.reads_only = reads_only
        self.stack_depth = stack_depth
        self.stacks = stacks
        self.tasks: dict[int, KTask] = {}
        self.files: dict[tuple[int, int], KFile] = {}
        self.records: list[tuple[int, int, int, int, str, KFile, int, int, int, bool]] = []
        #: The page-cache rows: a list, or a :class:`RowSpool` when given a file (``spool``).
        self.pagecache: "list[tuple] | RowSpool" = RowSpool(spool) if spool else []
        self.stats = Stats()
        self.root: Optional[int] = None
        self.root_exit: Optional[int] = None
        self.t_first: Optional[int] = None
        self.pids: set[int] = set()
        #: Per task, the calls that dropped data themselves, in time order: (enter, exit,
        #: call, offset): their page deletions are written already (truncate(PATH) names its
        #: file only through them: call "truncate", the file None).
        self.covering: dict[int, list[tuple[int, int, str, int]]] = {}

    # -- files

    def file_for(self, dev: int, ino: int, path: Optional[bytes] = None, size: int = 0, regular: bool = True) -> KFile:
        f = self.files.get((dev, ino))
        if (dev, ino) in self.opened:
            # fanotify's name is of the opened file itself; a look at /proc is of whatever the
            # number names by then.
            known, known_size = self.opened[(dev, ino)]
            if path is None:
                size = known_size
            path = known
        if f is None:
            f = KFile(dev, ino, path, size, regular)
            self.files[(dev, ino)] = f
        elif f.path is None and path is not None:
            f.path = path
        return f

    def name(self, f: KFile) -> str:
        dev = f"{f.dev:x}"
        path = display_path(f.path) if f.path is not None else "?"
        return f"{dev}:{f.ino}:{path}"

    # -- tasks

    def task(self, e: Event) -> KTask:
        t = self.tasks.get(e.tid)
        if t is None:
            t = KTask(e.tid, e.tgid, KTable(), settled=True)
            self.tasks[e.tid] = t
            if self.root is None:
                self.root = e.tgid
        elif not t.settled:
            t.settled = True
            t.tgid = e.tgid
            if t.parent is not None and t.parent.tgid == e.tgid:
                t.table = t.parent.table  # a thread shares its process's descriptor table
        self.pids.add(t.tgid)
        return t

    def fork(self, e: Event) -> None:
        kv = dict(_KV.findall(e.body))
        parent = self.task(e)
        child_tid = int(kv.get("child_pid", "0"))
        if not child_tid:
            return
        flags = parent.clone_flags
        if flags is not None and flags & (CLONE_FILES | CLONE_THREAD):
            table = parent.table
        else:
            table = parent.table.copy()
        child = KTask(
            child_tid,
            parent.tgid if flags is not None and flags & CLONE_THREAD else child_tid,
            table,
            parent,
            settled=flags is not None,
        )
        self.tasks[child_tid] = child

    # -- the event loop

    def feed(self, e: Event) -> None:
        if self.t_first is None:
            self.t_first = e.t
        if e.name == "enter":
            task = self.task(e)
            task.call = e
            task.pages = []
            task.inserted = set()
            if e.call in ("clone",):
                task.clone_flags = enter_args(e.body).get("clone_flags")
            elif e.call in ("fork", "vfork", "clone3"):
                task.clone_flags = None
            return
        if e.name == "exit":
            task = self.task(e)
            call = task.call
            task.call = None
            if call is None or call.call != e.call:
                return
            self.on_call(task, call, e)
            return
        if e.name == "sched_process_fork":
            self.fork(e)
            return
        if e.name == "sched_process_exit":
            return
        self.on_pagecache(e)

    def on_pagecache(self, e: Event) -> None:
        m = _DEV_INO.search(e.body)
        if m is None:
            return
        dev = dev_number(int(m.group(1)), int(m.group(2)))
        ino = int(m.group(3), 16)
        task = self.tasks.get(e.tid)
        kv = dict(_KV.findall(e.body))
        name = e.name
        if name == "mm_filemap_get_pages":
            r = _OFS_RANGE.search(e.body)
            if r is None:
                return
            first, last = int(r.group(1)) // PAGE, int(r.group(2)) // PAGE
            count = last - first + 1
            hits = count
            if task is not None and task.call is not None:
                hits = sum(1 for i in range(first, last + 1) if (dev, ino, i) not in task.inserted)
                task.pages.append((dev, ino, first, last))
            self.pagecache.append((e.t, e.tgid, "lookup", dev, ino, first, count, hits, ""))
        elif name == "mm_filemap_add_to_page_cache":
            index = int(kv.get("ofs", "0")) // PAGE
            count = 1 << int(kv.get("order", "0"))
            if task is not None and task.call is not None:
                task.inserted.update((dev, ino, index + i) for i in range(count))
            self.pagecache.append((e.t, e.tgid, "insert", dev, ino, index, count, "", ""))
        elif name == "mm_filemap_delete_from_page_cache":
            index = int(kv.get("ofs", "0")) // PAGE
            count = 1 << int(kv.get("order", "0"))
            self.pagecache.append((e.t, e.tgid, "evict", dev, ino, index, count, "", ""))
        elif name == "mm_filemap_fault":
            self.pagecache.append((e.t, e.tgid, "fault", dev, ino, int(kv.get("ofs", "0")) // PAGE, 1, "", ""))
        elif name in ("page_cache_sync_ra", "page_cache_async_ra"):
            detail = ";".join(
                f"{k}={kv[k]}" for k in ("order", "size", "async_size", "ra_pages", "mmap_miss", "prev_pos") if k in kv
            )
            kind = "ra_sync" if name == "page_cache_sync_ra" else "ra_async"
            self.pagecache.append(
                (e.t, e.tgid, kind, dev, ino, int(kv.get("index", "0")), int(kv.get("req_count", "0")), "", detail)
            )
        elif name == "page_cache_ra_order":
            # The window page_cache_ra_order reads: start, size and async size after the decision.
            self.pagecache.append(
                (
                    e.t,
                    e.tgid,
                    "ra_order",
                    dev,
                    ino,
                    int(kv.get("index", "0")),
                    int(kv.get("size", "0")),
                    "",
                    f"async_size={kv.get('async_size', '0')};order={kv.get('order', '0')}",
                )
            )
        elif name == "page_cache_ra_unbounded":
            self.pagecache.append(
                (
                    e.t,
                    e.tgid,
                    "ra_unbounded",
                    dev,
                    ino,
                    int(kv.get("index", "0")),
                    int(kv.get("nr_to_read", "0")),
                    "",
                    f"lookahead_size={kv.get('lookahead_size', '0')}",
                )
            )

    # -- system calls

    def on_call(self, task: KTask, call: Event, ex: Event) -> None:
        ret = signed(int(ex.body, 16))
        name = call.call
        if ret < 0:
            return
        a = enter_args(call.body)
        table = task.table
        if name in OPEN_CALLS:
            flags = a.get("flags", 0o1101 if name == "creat" else 0)
            look = self.looks.get((ex.tid, ret, ex.t))
            if look is not None and (
                (look.accmode is not None and look.accmode != flags & O_ACCMODE)
                or (look.append is not None and look.append != bool(flags & O_APPEND))
            ):
                look = None  # the number named another open file by the time it was looked at
            f = None
            if look is not None:
                regular = stat_mod.S_ISREG(look.mode) or stat_mod.S_ISBLK(look.mode)
                f = self.file_for(look.dev, look.ino, look.path, look.size, regular) if regular else None
            else:
                # Not looked at in time: identified by its reads, named by fanotify's record of it.
                f = KFile(0, 0, None, 0, True)
            table.fds[ret] = KOpen(
                f, 0, bool(flags & O_APPEND), accmode=flags & O_ACCMODE, direct=bool(flags & O_DIRECT)
            )
            (table.cloexec.add if flags & O_CLOEXEC else table.cloexec.discard)(ret)
            if flags & O_TRUNC and flags & O_ACCMODE and f is not None:
                f.size = 0
                if f.ino:
                    self.drop(task, call, ex, f, 0, 0)
                else:
                    table.fds[ret].truncated_by = (task, call, ex)
            return
        if name in DROP_CALLS or name in HINT_CALLS:
            self.on_drop_call(task, call, ex, a)
            return
        if name == "close":
            table.fds.pop(a.get("fd", -1), None)
            table.cloexec.discard(a.get("fd", -1))
            return
        if name == "close_range":
            first, last = a.get("fd", 0), a.get("max_fd", 0)
            cloexec_only = a.get("flags", 0) & 4
            for fd in [fd for fd in table.fds if first <= fd <= last]:
                if cloexec_only:
                    table.cloexec.add(fd)
                else:
                    table.fds.pop(fd, None)
                    table.cloexec.discard(fd)
            return
        if name in ("dup", "dup2", "dup3"):
            of = table.fds.get(a.get("fildes", a.get("oldfd", -1)))
            if of is not None and (of.file is None or not of.file.ino):
                # The open was not looked at in time (closed at once after this dup, as a
                # shell's redirection does): the new number names the same open file.
                look = self.looks.get((ex.tid, ret, ex.t))
                stale = look is not None and look.accmode is not None and look.accmode != of.accmode
                if look is not None and not stale and (stat_mod.S_ISREG(look.mode) or stat_mod.S_ISBLK(look.mode)):
                    of.file = self.file_for(look.dev, look.ino, look.path, look.size, True)
                    self.file_known(of)
            if of is not None:
                table.fds[ret] = of
            else:
                table.fds.pop(ret, None)
            (table.cloexec.add if name == "dup3" and a.get("flags", 0) & O_CLOEXEC else table.cloexec.discard)(ret)
            return
        if name == "fcntl":
            cmd, arg, fd = a.get("cmd", -1), a.get("arg", 0), a.get("fd", -1)
            if cmd in (F_DUPFD, F_DUPFD_CLOEXEC) and fd in table.fds:
                table.fds[ret] = table.fds[fd]
                (table.cloexec.add if cmd == F_DUPFD_CLOEXEC else table.cloexec.discard)(ret)
            elif cmd == F_SETFD:
                (table.cloexec.add if arg & 1 else table.cloexec.discard)(fd)
            elif cmd == F_SETFL and fd in table.fds:
                table.fds[fd].append = bool(arg & O_APPEND)
                table.fds[fd].direct = bool(arg & O_DIRECT)
            return
        if name == "lseek":
            of = table.fds.get(a.get("fd", -1))
            if of is not None:
                of.offset = ret
                if a.get("whence") == SEEK_END and of.file is not None:
                    of.file.size = max(0, ret - signed(a.get("offset", 0)))
            return
        if name in ("execve", "execveat"):
            if task.table is not None:
                task.table = KTable({fd: of for fd, of in table.fds.items() if fd not in table.cloexec}, set())
            return
        if name in ("clone", "clone3", "fork", "vfork"):
            return
        if ret == 0:
            return
        if name in DATA_READS:
            of = table.fds.get(a.get("fd", -1))
            self.transfer(task, call, ex, "R", of, ret, a)
        elif name in DATA_WRITES:
            if self.reads_only:
                return
            of = table.fds.get(a.get("fd", -1))
            self.transfer(task, call, ex, "W", of, ret, a)
        elif name == "sendfile64":
            # "at": the offset pointer (0: NULL, the descriptor's own offset).
            src = table.fds.get(a.get("in_fd", -1))
            self.transfer(task, call, ex, "R", src, ret, {"fd": a.get("in_fd", -1), "at": a.get("offset", 0)})
            if not self.reads_only:
                self.transfer(task, call, ex, "W", table.fds.get(a.get("out_fd", -1)), ret, {})
        elif name in ("copy_file_range", "splice"):
            # splice has copy_file_range's arguments; its pipe end is no file and records nothing.
            self.transfer(task, call, ex, "R", table.fds.get(a.get("fd_in", -1)), ret, {"at": a.get("off_in", 0)})
            if not self.reads_only:
                dst = table.fds.get(a.get("fd_out", -1))
                self.transfer(task, call, ex, "W", dst, ret, {"at": a.get("off_out", 0)})

    def on_drop_call(self, task: KTask, call: Event, ex: Event, a: dict) -> None:
        """A call that may drop data: truncation and hole punching of an open file and
        fadvise(DONTNEED) are written as drops of their ranges now; truncate(PATH) names its
        file only through the pages it deletes (:meth:`classify_deletions`). fadvise(WILLNEED)
        and readahead(2) are written as hints of their ranges (length 0: to the end of the
        file, as the kernel reads it)."""
        name = call.call
        if name == "truncate":
            self.covering.setdefault(task.tid, []).append((call.t, ex.t, name, a.get("length", 0)))
            return
        of = task.table.fds.get(a.get("fd", -1))
        f = of.file if of is not None else None
        if of is not None and f is not None and f.regular and not f.ino:
            # The open was not looked at in time (a loaded machine): the call waits for the
            # file's first read or write, which name it; its time stays the call's.
            of.held.append((task, call, ex, a))
            return
        self.drop_call(task, call, ex, a, of)

    def drop_call(self, task: KTask, call: Event, ex: Event, a: dict, of: Optional[KOpen]) -> None:
        """:meth:`on_drop_call` on the open file ``of``."""
        name = call.call
        f = of.file if of is not None else None
        if f is None or not f.regular or not f.ino:
            return  # unlink and rename: their deletions say which file went
        if name == "ftruncate":
            length = a.get("length", 0)
            f.size = length
            self.drop(task, call, ex, f, length, 0)
        elif name == "fallocate":
            mode, offset, length = a.get("mode", 0), a.get("offset", 0), a.get("len", 0)
            if mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE):
                self.drop(task, call, ex, f, offset, to_end(f.size, offset))  # the data after offset moves
            elif mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE):
                self.drop(task, call, ex, f, offset, length)
        elif name == "fadvise64" and a.get("advice") == POSIX_FADV_WILLNEED:
            self.special_record("H", call.t, ex.t - call.t, task.tgid, f, a.get("offset", 0), a.get("len", 0))
        elif name == "readahead":
            self.special_record("H", call.t, ex.t - call.t, task.tgid, f, a.get("offset", 0), a.get("count", 0))
        elif name == "fadvise64" and a.get("advice") == POSIX_FADV_DONTNEED:
            # Clean, unmapped pages go; dirty ones stay until written (not modelled). The file
            # keeps its size: a length of 0 (to the end) is written as the bytes up to its end.
            offset, length = a.get("offset", 0), a.get("len", 0)
            self.drop(task, call, ex, f, offset, length or to_end(f.size, offset))

    def file_known(self, of: KOpen) -> None:
        """``of``'s file was just identified: what waited for it is written now, at its own
        time (the truncation of an O_TRUNC open, then the drop and hint calls it held)."""
        if of.truncated_by is not None:
            self.drop(*of.truncated_by, of.file, 0, 0)
            of.truncated_by = None
        held, of.held = of.held, []
        for task, call, ex, a in held:
            self.drop_call(task, call, ex, a, of)

    def drop(self, task: KTask, call: Event, ex: Event, f: KFile, offset: int, size: Optional[int]) -> None:
        """Writes a drop request of ``f``'s bytes from ``offset`` (``size`` 0: a truncation there;
        None: nothing to drop) at ``call``'s time; the pages ``call`` deletes are then not read as
        drops of their own."""
        self.covering.setdefault(task.tid, []).append((call.t, ex.t, call.call, offset))
        if size is not None:
            self.special_record("D", call.t, ex.t - call.t, task.tgid, f, offset, size)

    def special_record(self, op: str, t: int, dur: int, tgid: int, f: KFile, offset: int, size: int) -> None:
        """Writes a request that is not an access: a drop (``D``) or a hint (``H``)."""
        if f.path is not None and not self.filter.keeps(f.path):
            return
        if f.path is None and self.filter.include:
            return
        self.records.append((t, dur, tgid, 0, op, f, offset, size, 0, False))
        if op == "D":
            self.stats.drops += 1
        else:
            self.stats.hints += 1

    def classify_deletions(self, system_events: Iterable[Event]) -> set[int]:
        """Which page deletions of ``system_events`` (indices) dropped data rather than
        reclaimed it: those in a traced task outside its reclaim brackets (truncation, removal
        of the last name, the last close of a deleted file, an exit). Each run of such deletions
        of one file by one task outside the calls that wrote their drops already becomes a drop
        of the whole file (of its tail after truncate(PATH)) at the run's first deletion."""
        reclaiming: dict[int, int] = {}
        dropped: set[int] = set()
        run: Optional[tuple] = None
        truncated: set[tuple] = set()
        for i, e in enumerate(system_events):
            if e.name in RECLAIM_BEGIN:
                reclaiming[e.tid] = reclaiming.get(e.tid, 0) + 1
                continue
            if e.name in RECLAIM_END:
                reclaiming[e.tid] = max(0, reclaiming.get(e.tid, 0) - 1)
                continue
            # The tracer's own deletions outside reclaim are a removed file's pages: on a busy
            # machine fanotify's listener can close its reference to the file after the command
            # removed it, and the kernel drops the pages then, in the tracer, not at the removal.
            own = self.tracer_pid is not None and e.tgid == self.tracer_pid
            if (
                e.name != "mm_filemap_delete_from_page_cache"
                or (e.tid not in self.tasks and not own)
                or reclaiming.get(e.tid)
            ):
                continue
            m = _DEV_INO.search(e.body)
            if m is None:
                continue
            dropped.add(i)
            dev = dev_number(int(m.group(1)), int(m.group(2)))
            ino = int(m.group(3), 16)
            f = self.files.get((dev, ino))
            if f is None:
                continue  # a file the trace never read or wrote
            cover = self._covering(e.tid, e.t)  # never one of the tracer's: it makes no calls here
            if cover is not None:
                start, end, name, offset = cover
                if name == "truncate" and (start, dev, ino) not in truncated:
                    truncated.add((start, dev, ino))
                    self.special_record("D", start, end - start, e.tgid, f, offset, 0)
                continue
            if run != (e.tid, dev, ino):
                run = (e.tid, dev, ino)
                # The tracer's drop goes to the command's process: bufsim is not in the trace.
                tgid = self.root if own and self.root is not None else e.tgid
                self.special_record("D", e.t, 0, tgid, f, 0, 0)
        return dropped

    def _covering(self, tid: int, t: int) -> Optional[tuple[int, int, str, int]]:
        calls = self.covering.get(tid)
        if not calls:
            return None
        i = bisect.bisect_right(calls, (t, float("inf"))) - 1
        if i >= 0 and calls[i][0] <= t <= calls[i][1]:
            return calls[i]
        return None

    @staticmethod
    def _spliced(task: KTask, f: KFile, offset: int, size: int) -> list[tuple[int, int]]:
        """The reads a splicing call (copy_file_range, sendfile) made of ``f``'s bytes ``offset``
        to ``offset + size``: the kernel reads them through a pipe a few pages at a time (16 pages
        of the default pipe), each piece a page-cache lookup that sizes read-ahead as a read of
        that length would; one read of the whole range would ask for far more."""
        pieces: list[tuple[int, int]] = []
        cursor, end = offset, offset + size
        for dev, ino, first, last in task.pages:
            if (dev, ino) != (f.dev, f.ino):
                continue
            lo, hi = max(cursor, first * PAGE), min(end, (last + 1) * PAGE)
            if lo == cursor and hi > lo:
                pieces.append((lo, hi - lo))
                cursor = hi
        if cursor < end or not pieces:
            pieces.append((cursor, end - cursor))
        return pieces

    @staticmethod
    def _pointed_offset(task: KTask, f: KFile, op: str, size: int, fallback: int) -> int:
        """Where a splicing call with an offset pointer transferred ``size`` bytes of ``f``: a
        read starts in the first page it looked up, as far in as reaching the last one needs; a
        write at the first page it put in the cache. ``fallback`` when the pages do not tell."""
        if op == "R":
            pages = [(first, last) for dev, ino, first, last in task.pages if (dev, ino) == (f.dev, f.ino)]
            if pages:
                first, last = pages[0][0], max(p[1] for p in pages)
                return max(first * PAGE, min(first * PAGE + PAGE - 1, last * PAGE - size + 1))
        else:
            written = [i for dev, ino, i in task.inserted if (dev, ino) == (f.dev, f.ino)]
            if written:
                return min(written) * PAGE
        return fallback

    def transfer(self, task: KTask, call: Event, ex: Event, op: str, of: Optional[KOpen], size: int, a: dict) -> None:
        name = call.call
        if of is None:
            # A descriptor opened before tracing (inherited): adopted at offset 0, named by its reads.
            of = KOpen(KFile(0, 0, None, 0, True))
            if "fd" in a:
                task.table.fds[a["fd"]] = of
        f = of.file
        if op == "R" and task.pages:
            dev, ino = task.pages[0][:2]  # the kernel's own identity of the file this read looked up
            if f is None or (f.dev, f.ino) != (dev, ino):
                f = self.file_for(dev, ino)
                of.file = f
                self.file_known(of)
        elif op == "W" and f is not None and f.ino == 0:
            # An open not looked at in time (a redirection whose program ended at once): the
            # pages this write put in the cache name its file, unless they name several (the
            # call also read another file: copy_file_range and sendfile's source is left out).
            read_files = {p[:2] for p in task.pages}
            written = {(dev, ino) for dev, ino, _ in task.inserted} - read_files
            if len(written) == 1:
                f = self.file_for(*written.pop())
                of.file = f
                self.file_known(of)
        if f is None or not f.regular or f.ino == 0:
            return
        positional = name in ("pread64", "pwrite64", "preadv", "preadv2", "pwritev", "pwritev2")
        pos = a.get("pos", a.get("pos_l", -1)) if positional else -1
        if name in ("preadv2", "pwritev2") and signed(pos) == -1:
            positional = False
        # sendfile and copy_file_range given an offset pointer move that offset, not the
        # descriptor's; its value lies in user memory, which the tracepoint does not show.
        pointed = name in SPLICED and bool(a.get("at"))
        if op == "W" and (of.append or (positional and a.get("flags", 0) & 0x10)):
            offset = f.size
        elif positional:
            offset = pos
        elif pointed:
            offset = self._pointed_offset(task, f, op, size, of.offset)
        else:
            offset = of.offset
        if not (positional or pointed) or (op == "W" and of.append):
            of.offset = offset + size
        if op == "W":
            f.size = max(f.size, offset + size)
        if of.direct:
            # Between the program's memory and the disk, not through the page cache.
            self.stats.direct += 1
            return
        if f.path is not None and not self.filter.keeps(f.path):
            return
        if f.path is None and self.filter.include:
            return
        # Frames the kernel could not name (the task had exited before they were printed) carry
        # absolute, randomised addresses: left out, so a context never depends on timing.
        ctx = context_id([fr for fr in call.frames if fr.module is not None], self.stack_depth) if self.stacks else 0
        # What a read asked for: Linux sizes read-ahead from it, and a read the end of the file
        # cut short asked for more than it got (readv's total is not in the arguments: unknown).
        asked = a.get("count", 0) if op == "R" and name in ("read", "pread64") else 0
        pieces = [(offset, size)]
        if op == "R" and name in SPLICED:
            pieces = self._spliced(task, f, offset, size)
        # The first read through this open file description: Linux's read-ahead state for it
        # starts afresh (file_ra_state_init at open).
        opened = op == "R" and not of.read_yet
        if op == "R":
            of.read_yet = True
        for i, (o, n) in enumerate(pieces):
            last = i == len(pieces) - 1
            self.records.append(
                (call.t, ex.t - call.t if last else 0, task.tgid, ctx, op, f, o, n, asked, opened and i == 0)
            )
        s = self.stats
        if op == "R":
            s.reads += len(pieces)
            s.read_bytes += size
        else:
            s.writes += 1
            s.write_bytes += size
        s.files.add((f.dev, f.ino))
        s.pids.add(task.tgid)
        if ctx:
            s.contexts.add(ctx)


# ---------------------------------------------------------------------------------------------
# Writing


def _write_trace(replay: Replay, output: str, comments: Sequence[str], end: str) -> None:
    t0 = replay.t_first or 0
    recs = sorted(replay.records, key=lambda r: r[0])
    with open(output, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write("".join(f"# {c}\n" for c in comments) + CSV_HEADER + ",asked,opened\n")
        buf = []
        for t, dur, pid, ctx, op, f, offset, size, asked, opened in recs:
            # `asked` only where a read came back short; empty where it got what it asked for.
            # `opened` 1 on a new open's first read, empty otherwise.
            buf.append(
                f"{t - t0},{dur},{pid},{'0' if ctx == 0 else f'0x{ctx:016x}'},{op},"
                f"{csv_field(replay.name(f))},{offset},{size},{asked if asked > size else ''},{1 if opened else ''}\n"
            )
            if len(buf) >= 10000:
                out.write("".join(buf))
                buf.clear()
        out.write("".join(buf))
        out.write(f"# {end}\n")


def _write_pagecache(
    replay: Replay,
    system_events: Iterable[Event],
    dropped: set[int],
    path: str,
    comments: Sequence[str],
    system_in_order: bool = False,
) -> dict:
    """Writes the page-cache companion file: the traced tasks' rows, plus the deletions of pages of
    files the traced tasks touched (``evict`` by reclaim, ``drop`` for the indices in ``dropped``:
    truncation and removal, :meth:`Replay.classify_deletions`) and disk requests they issued (with
    those requests' completions), in time order. When both kinds of rows come in time order
    (``system_in_order``, and the replay's spool saw no time go back) they are merged as they
    are read; otherwise they are gathered and sorted."""
    t0 = replay.t_first or 0
    own = replay.pagecache
    if isinstance(own, RowSpool):
        touched, own_in_order = own.touched, own.in_order
    else:
        touched, own_in_order = {(r[3], r[4]) for r in own}, False
    system_rows = _system_rows(replay, system_events, dropped, touched)
    if own_in_order and system_in_order:
        # Stable as the sort below: at equal times the tasks' rows come first.
        rows: Iterable[tuple] = heapq.merge(own, system_rows, key=lambda r: r[0])
    else:
        rows = sorted(itertools.chain(own, system_rows), key=lambda r: r[0])
    totals = {
        "rows": 0,
        "looked_up": 0,
        "hits": 0,
        "inserted": 0,
        "evicted": 0,
        "dropped": 0,
        "disk_requests": 0,
    }
    with open(path, "w") as out:
        out.write("".join(f"# {c}\n" for c in comments) + PAGECACHE_HEADER + "\n")
        buf = []
        for t, pid, kind, dev, ino, index, count, hits, detail in rows:
            totals["rows"] += 1
            if kind == "lookup":
                totals["looked_up"] += count
                totals["hits"] += hits
            elif kind == "insert":
                totals["inserted"] += count
            elif kind == "evict":
                totals["evicted"] += count
            elif kind == "drop":
                totals["dropped"] += count
            elif kind == "disk_issue":
                totals["disk_requests"] += 1
            buf.append(f"{t - t0},{pid},{kind},{dev:x},{ino},{index},{count},{hits},{detail}\n")
            if len(buf) >= 10000:
                out.write("".join(buf))
                buf.clear()
        out.write("".join(buf))
    return totals


class _InOrder:
    """Passes events on and notes whether their times ever went back (``in_order``)."""

    def __init__(self, events: Iterable[Event]):
        self.events = events
        self.in_order = True

    def __iter__(self) -> Iterator[Event]:
        last = -1
        for e in self.events:
            if e.t < last:
                self.in_order = False
            last = max(last, e.t)
            yield e


def _system_rows(
    replay: Replay, system_events: Iterable[Event], dropped: set[int], touched: set[tuple[int, int]]
) -> Iterator[tuple]:
    """The page-cache rows the system-wide events give, in their order (see _write_pagecache)."""
    issued: set[tuple[int, int]] = set()
    for i, e in enumerate(system_events):
        if e.name == "mm_filemap_delete_from_page_cache":
            m = _DEV_INO.search(e.body)
            if m is None:
                continue
            dev = dev_number(int(m.group(1)), int(m.group(2)))
            ino = int(m.group(3), 16)
            if (dev, ino) not in touched:
                continue
            kv = dict(_KV.findall(e.body))
            yield (
                e.t,
                e.tgid,
                "drop" if i in dropped else "evict",
                dev,
                ino,
                int(kv.get("ofs", "0")) // PAGE,
                1 << int(kv.get("order", "0")),
                "",
                "",
            )
        elif e.name in ("block_rq_issue", "block_rq_complete"):
            b = _BLOCK.match(e.body)
            if b is None:
                continue
            dev = dev_number(int(b.group(1)), int(b.group(2)))
            sector, count = int(b.group(4)), int(b.group(5))
            if e.name == "block_rq_issue":
                if e.tgid not in replay.pids:
                    continue
                issued.add((dev, sector))
                kind = "disk_issue"
            else:
                if (dev, sector) not in issued:
                    continue
                issued.discard((dev, sector))
                kind = "disk_complete"
            yield (e.t, e.tgid, kind, dev, "", sector, count, "", b.group(3))


# ---------------------------------------------------------------------------------------------
# Reading the companion file


@dataclass(frozen=True)
class PageCacheEvent:
    """One row of ``TRACE.pagecache.csv``; see docs/collect.md for each event's fields."""

    time_us: int
    pid: int
    event: str
    dev: int
    ino: Optional[int]
    index: int
    count: int
    hits: Optional[int]
    detail: str


def _open_text(path: str):
    """A text stream of a plain, gzip or zstd (through the ``zstd`` program) file."""
    import gzip
    import io

    with open(path, "rb") as f:
        magic = f.read(4)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8")
    if magic == b"\x28\xb5\x2f\xfd":
        zstd = shutil.which("zstd")
        if zstd is None:
            raise CollectError(
                f"{path} is zstd-compressed and the zstd program is not installed; "
                "install zstd or decompress the file first"
            )
        data = subprocess.run([zstd, "-dc", path], capture_output=True, check=True).stdout
        return io.StringIO(data.decode("utf-8"))
    return open(path, "r", encoding="utf-8")


def read_pagecache(path: str, limit: Optional[int] = None) -> list[PageCacheEvent]:
    """Reads a page-cache companion file (``bufsim collect --tracer kernel`` writes it next to the
    trace as ``TRACE.pagecache.csv``; gzip and zstd compressed files are read too), the first
    ``limit`` events when given. Raises ``bufsim.TraceFormatError`` naming file:line on a bad row."""
    return list(itertools.islice(iter_pagecache(path), limit))


def iter_pagecache(path: str) -> Iterator[PageCacheEvent]:
    """:func:`read_pagecache`'s events one at a time: a long run's file need not fit in memory."""
    from bufsim._core import TraceFormatError

    with _open_text(path) as f:
        header_seen = False
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            if not header_seen:
                if line.strip() != PAGECACHE_HEADER:
                    raise TraceFormatError(f"{path}:{n}: expected the header {PAGECACHE_HEADER}")
                header_seen = True
                continue
            parts = line.rstrip("\n").split(",", 8)
            try:
                t, pid, ev, dev, ino, index, count, hits, detail = parts
                e = PageCacheEvent(
                    int(t),
                    int(pid),
                    ev,
                    int(dev, 16),
                    int(ino) if ino else None,
                    int(index),
                    int(count),
                    int(hits) if hits else None,
                    detail,
                )
            except ValueError:
                raise TraceFormatError(f"{path}:{n}: not a page-cache row ({PAGECACHE_HEADER})") from None
            yield e


# ---------------------------------------------------------------------------------------------
# Running


def resolve_command(command: Sequence[str]) -> str:
    """The program ``command`` runs; a CollectError (127: not found, 126: not executable) otherwise."""
    exe = command[0]
    resolved = shutil.which(exe) if "/" not in exe else (exe if os.path.exists(exe) else None)
    if resolved is None:
        raise CollectError(f"{exe}: command not found", EXIT_NOT_FOUND)
    if os.path.isdir(resolved) or not os.access(resolved, os.X_OK):
        raise CollectError(f"{exe}: not an executable file", EXIT_NOT_EXECUTABLE)
    return resolved


class _Child:
    """The traced command, forked here so that it waits (on a pipe) until the tracer has put its pid
    in set_event_pid and enabled the events, then execs: its very first system call is traced."""

    def __init__(self, command: list[str], go_r: int, go_w: int, new_group: bool = False):
        self.returncode: Optional[int] = None
        self.group = new_group
        pid = os.fork()
        if pid == 0:  # the child: no Python cleanup may run here
            try:
                if new_group:
                    os.setpgid(0, 0)  # so that a timeout can kill everything the command started
                for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)
                os.close(go_w)
                go = os.read(go_r, 1)
                os.close(go_r)
                if go != b"g":
                    os._exit(127)  # the tracer gave up before starting it: run nothing untraced
                os.execvp(command[0], command)
            except BaseException:
                pass
            os._exit(127)
        self.pid = pid

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        try:
            if self.group:
                os.killpg(self.pid, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


#: Memory the read-back takes per byte of the traced tasks' and the system-wide event text, with
#: room to spare: the four-program mix at a quarter of its footprint recorded 5.3 GB and 5.5 GB
#: and its read-back peaked at 0.39 GB (the trace's requests, held for their sort; the page-cache
#: rows go through a file).
READBACK_PER_TASK_BYTE = 0.1
READBACK_PER_SYSTEM_BYTE = 0.05


def mem_available() -> Optional[int]:
    """MemAvailable of /proc/meminfo in bytes; None where the file does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_readback_memory(tasks: str, system: str) -> None:
    """Stops with a clear error, rather than the kernel's OOM killer later, when reading back the
    recorded events would take more memory than the machine has available."""
    size = {p: os.path.getsize(p) if os.path.exists(p) else 0 for p in (tasks, system)}
    need = int(READBACK_PER_TASK_BYTE * size[tasks] + READBACK_PER_SYSTEM_BYTE * size[system])
    avail = mem_available()
    if avail is not None and need > avail:
        gb = 1 << 30
        raise CollectError(
            f"the kernel tracer recorded {(size[tasks] + size[system]) / gb:.1f} GiB of events, and reading them "
            f"back needs about {need / gb:.1f} GiB of memory, more than the {avail / gb:.1f} GiB available: "
            "trace a shorter run (a smaller part of the workload, or --timeout)",
        )


def collect_kernel(
    command: Sequence[str],
    output: str,
    *,
    stack_depth: int = 0,
    stacks: bool = True,
    reads_only: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    no_libs: bool = False,
    timeout: Optional[float] = None,
    buffer_kb: int = 65536,
    keep_raw: Optional[str] = None,
    on_start: Optional[Callable[[int], None]] = None,
) -> KernelCollectResult:
    """Runs ``command`` with the kernel tracer; writes ``output`` (interchange CSV, as
    :func:`bufsim.collect.collect`) and ``output + ".pagecache.csv"``. SIGTERM, SIGHUP and SIGINT
    go to the command (a second one kills it); ``timeout`` seconds kill it. The instances are
    removed whatever happens. ``on_start(pid)`` is called once the command's process exists and
    before it runs anything (``bufsim validate`` moves it into a cgroup there)."""
    if not command:
        raise CollectError(
            "give the command to trace after --, e.g. bufsim collect --tracer kernel -o t.csv -- grep -r x src"
        )
    if stack_depth < 0:
        raise CollectError(f"--stack-depth must be 0 (whole stack) or a positive number of frames, not {stack_depth}")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not (math.isfinite(timeout) and timeout > 0)
    ):
        # A deadline already past would kill the command at once; NaN would never.
        raise CollectError(f"--timeout {timeout} is not a time to wait; give a positive number of seconds")
    root = find_tracefs()
    resolve_command(command)
    # The trace is written after the command ends: a path it cannot go to is said before it runs.
    check_trace_output(output, inputs=[(keep_raw, "the raw event file kept beside")])
    check_trace_output(pagecache_path(output), "-o (its page-cache file)")
    remove_stale_instances(root)
    excl = list(exclude) + (list(NO_LIBS_PATTERNS) if no_libs else [])
    options = " ".join(
        [
            "--tracer kernel",
            *(["--reads-only"] if reads_only else []),
            *(f"--include {p}" for p in include),
            *(f"--exclude {p}" for p in exclude),
            *(["--no-libs"] if no_libs else []),
            *(["--no-stacks"] if not stacks else []),
        ]
    )
    tmp = tempfile.mkdtemp(prefix=TMP_PREFIX)
    token = f"bufsim-{os.getpid()}-{os.path.basename(tmp)[-8:]}"
    instances: list[Instance] = []
    copiers: list[PipeCopier] = []
    proc: Optional[_Child] = None
    watcher = FdWatcher()
    opened = OpenedFiles()
    signals_seen = 0
    previous: dict[int, object] = {}
    timed_out = False
    go_r, go_w = os.pipe()

    def on_signal(signum, frame) -> None:
        nonlocal signals_seen
        signals_seen += 1
        if proc is not None and proc.poll() is None:
            try:
                os.kill(proc.pid, signum if signals_seen == 1 else signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif proc is None or signals_seen > 1 or proc.returncode not in (-signum, 128 + signum):
            # No command to pass it to (not started yet, or done: the trace is being read back),
            # and not the one that ended the command (Ctrl-C reaches the command too): stop here,
            # as the `finally` clauses clean up, rather than swallow it.
            raise KeyboardInterrupt

    try:
        try:
            tasks = Instance(root, token + "-tasks")
            instances.append(tasks)
            system = Instance(root, token + "-system")
            instances.append(system)
        except OSError as e:
            raise CollectError(
                f"cannot create a tracefs instance under {root}/instances ({e.strerror}); use --tracer strace"
            ) from None
        mono = True
        for inst in instances:
            inst.write("tracing_on", "0")
            mono = inst.try_write("trace_clock", "mono") and mono
            inst.try_write("buffer_size_kb", str(buffer_kb))
        tasks.write("options/record-tgid", "1")
        system.try_write("options/record-tgid", "1")
        tasks.write("options/event-fork", "1")
        if stacks:
            tasks.try_write("options/userstacktrace", "1")
            tasks.try_write("options/sym-userobj", "1")
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            try:
                previous[sig] = signal.signal(sig, on_signal)
            except ValueError:
                pass

        proc = _Child(list(command), go_r, go_w, new_group=timeout is not None)
        if on_start is not None:
            on_start(proc.pid)
        tasks.write("set_event_pid", str(proc.pid))
        for name in TRACED_CALLS:
            tasks.enable(f"syscalls/sys_enter_{name}")
            tasks.enable(f"syscalls/sys_exit_{name}")
        if "syscalls/sys_enter_read" not in tasks.events:
            raise CollectError(
                "this kernel has no system-call tracepoints (tracefs events/syscalls, "
                "CONFIG_FTRACE_SYSCALLS); use --tracer strace"
            )
        for ev in TASK_EVENTS:
            tasks.enable(ev)
        for ev in SYSTEM_EVENTS:
            system.enable(ev)
        copiers.append(
            PipeCopier(os.path.join(tasks.path, "trace_pipe"), os.path.join(tmp, "tasks.txt"), watcher.on_chunk)
        )
        copiers.append(PipeCopier(os.path.join(system.path, "trace_pipe"), os.path.join(tmp, "system.txt")))
        for c in copiers:
            c.start()
        opened.start()
        for inst in instances:
            inst.write("tracing_on", "1")
        os.close(go_r)
        go_r = -1
        os.write(go_w, b"g")
        os.close(go_w)
        go_w = -1
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            returncode = proc.poll()
            if returncode is not None:
                break
            time.sleep(0.05)
            if deadline is not None and time.monotonic() > deadline and not timed_out:
                timed_out = True
                proc.kill()
            if any(c.disk_full for c in copiers):
                proc.kill()
                proc.wait()
                written = sum(c.written for c in copiers)
                raise CollectError(
                    f"the kernel tracer's events ({written / 1e9:.1f} GB in {tmp}) filled the disk to its last "
                    f"{DISK_FLOOR >> 30} GiB: the command was stopped; free space there, point TMPDIR at a larger "
                    "disk, or trace a shorter command"
                )
        time.sleep(0.1)  # let the last events reach the pipes
        for inst in instances:
            inst.try_write("tracing_on", "0")
        lost = sum(inst.lost_events() for inst in instances)
        for c in copiers:
            c.finish()
        copiers.clear()
        opened.finish()
        for inst in instances:
            inst.remove()
        instances.clear()

        status = returncode if returncode >= 0 else 128 - returncode
        if timed_out:
            outcome = f"was killed by SIGKILL after the {timeout:g} s timeout"
        elif returncode < 0:
            outcome = f"was killed by {signal.Signals(-returncode).name}"
        else:
            outcome = f"exited with status {returncode}"

        if keep_raw:
            shutil.copyfile(os.path.join(tmp, "tasks.txt"), keep_raw)
        check_readback_memory(os.path.join(tmp, "tasks.txt"), os.path.join(tmp, "system.txt"))
        replay = Replay(
            watcher.fresh_looks() if mono else watcher.looks,
            PathFilter(include, excl),
            reads_only,
            stack_depth,
            stacks,
            opened.names,
            spool=os.path.join(tmp, "pagecache.rows"),
            tracer_pid=os.getpid(),
        )
        for e in parse_events(os.path.join(tmp, "tasks.txt")):
            replay.feed(e)
        # The system-wide events are read twice as a stream, never held: on a long run under
        # memory pressure they are mostly reclaim's deletions, tens of millions of them.
        system_txt = os.path.join(tmp, "system.txt")
        system_pass = _InOrder(parse_events(system_txt))
        dropped = replay.classify_deletions(system_pass)
        depth = "none (--no-stacks)" if not stacks else ("whole stack" if stack_depth == 0 else str(stack_depth))
        comments = [
            "bufsim collect trace (docs/collect.md); times in microseconds from the first traced event",
            f"command: {' '.join(command)}",
            f"program contexts: stack depth {depth}; options: {options}",
        ]
        if lost:
            comments.append(f"warning: the kernel's trace buffer dropped {lost} events: records may be missing")
        _write_trace(replay, output, comments, f"end: the command {outcome}")
        totals = _write_pagecache(
            replay,
            parse_events(system_txt),
            dropped,
            pagecache_path(output),
            [
                "bufsim page-cache ground truth (docs/collect.md) for the trace " + os.path.basename(output),
                f"command: {' '.join(command)}",
            ],
            system_in_order=system_pass.in_order,
        )
        replay.pagecache.close()
        result = KernelCollectResult(
            output,
            status,
            outcome,
            replay.stats,
            0,
            pagecache=pagecache_path(output),
            pagecache_rows=totals["rows"],
            lost_events=lost,
            t0_us=replay.t_first if mono else None,
        )
        result.looked_up, result.hits = totals["looked_up"], totals["hits"]
        result.inserted, result.evicted = totals["inserted"], totals["evicted"]
        result.dropped = totals["dropped"]
        result.disk_requests = totals["disk_requests"]
        return result
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if go_w >= 0:
            os.close(go_w)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if go_r >= 0:
            os.close(go_r)
        for c in copiers:
            c.finish()
        opened.finish()
        for inst in instances:
            inst.remove()
        shutil.rmtree(tmp, ignore_errors=True)

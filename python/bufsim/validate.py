"""``bufsim validate``: the model against the live kernel (docs/validation.md).

For each memory size the page cache is dropped, the command runs in a memory-limited cgroup under
the kernel tracer (:func:`bufsim.ktrace.collect_kernel`), and the same read and write requests are
replayed through the model (``linux`` policy, ``linux-6`` read-ahead with the device's
``read_ahead_kb``) with the memory the command's page cache actually had. The two are set side by
side: pages brought into the page cache, read-ahead decisions, evicted pages, disk requests.

Memory accounting: the cgroup's limit is the memory size given. Everything the cgroup charges
besides the traced files' pages shares it: the command's anonymous and shared memory, kernel
memory charged to the cgroup (dentries, inodes, page tables) and the page cache of files outside
the comparison (programs, libraries, files deleted before the end). Both are followed over time:
the non-file charge from memory.stat sampled every 20 ms (timestamped on the monotonic clock the
tracer uses, kept beside the trace as ``TRACE.memory.csv``) and, exactly, at every eviction by a
traced task's reclaim (:func:`_reclaim_samples`); the untraced files' pages from the page-cache
events. At each request the model's cache is the limit less the non-file charge (the larger of
the known values just before and just after the request) less the untraced files' resident
pages, never less than one page;
the run's cache follows that as steps (the ``cache_steps`` run option), a step wherever it moves
by :data:`STEP_SHARE` of the limit (at least :data:`MIN_STEP_PAGES` pages). ``compare(...,
cache="peak")`` gives the earlier constant model (the limit less both peaks) for comparison.
"""

from __future__ import annotations

import array
import bisect
import errno
import json
import math
import os
import signal
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from bufsim import _core
from bufsim.collect import CollectError

PAGE = 4096
#: The least cgroup limit a process can start in (--memory).
MIN_MEMORY = 16 * PAGE
CGROUP_V1 = "/sys/fs/cgroup/memory"
CGROUP_V2_CANDIDATES = ("/sys/fs/cgroup/unified", "/sys/fs/cgroup")
DROP_CACHES = "/proc/sys/vm/drop_caches"
#: What the tracer leaves out, as `make workloads` does: the loader's reads and pseudo-files.
EXCLUDE = ["*.so", "*.so.*", "/etc/ld.so.cache", "/proc", "/sys", "/dev"]
#: The kernel tracer's buffer per CPU (KiB). A program that makes a read call per record (MariaDB's
#: MyISAM tables: about a million calls a second with the database cached) fills the tracer's
#: 64 MiB default within a second, faster than the events are copied out, and a comparison with
#: lost events compares a different run; 1 GiB held all of tpch-mysql's. A kernel that cannot
#: allocate it keeps the size it has.
TRACE_BUFFER_KB = 1 << 20
SAMPLE_S = 0.02
#: How far the cgroup's usage may move while one sample reads it and memory.stat (64 pages: what
#: the per-CPU charge stocks alone can move it by).
SAMPLE_SLACK = 64 * PAGE
#: Reads of one sample before it is skipped.
SAMPLE_TRIES = 5
#: The model's cache changes only when what the limit leaves moves by this share of the limit...
STEP_SHARE = 1 / 200
#: ... or by this many pages, whichever is more: steps stay few, and runs fast.
MIN_STEP_PAGES = 16
MEMORY_HEADER = "time_us,non_file_bytes,anon_bytes,active_file_bytes,inactive_file_bytes"


class ValidateError(CollectError):
    """A one-line problem of ``bufsim validate`` itself (exit status 2)."""

    def __init__(self, message: str):
        super().__init__(message, 2)


@dataclass
class Comparison:
    """One memory size: the kernel's page cache beside the model's."""

    memory_bytes: int
    model_blocks: int  # the model's cache at the first request, in pages
    command_status: int
    outcome: str
    files: int
    kernel_pages_read: int
    model_pages_read: int
    pages_read_diff: float  # (model - kernel) / kernel
    kernel_readahead: int
    model_readahead: int
    readahead_match: float  # kernel decisions the model made identically (start, size, async size)
    kernel_evicted: int
    model_evicted: int
    evicted_overlap: float  # evictions of the same page in both, over either (multisets: min / max counts)
    # Cached pages whose data the command dropped (truncated or deleted files): the kernel's
    # deletions outside reclaim, the model's drops of cached blocks.
    kernel_dropped: int
    model_dropped: int
    kernel_disk_requests: int
    model_disk_requests: int
    read_ahead_kb: int
    peak_non_file_bytes: int
    peak_untraced_pages: int
    lost_events: int
    # The model's cache over the run: "varying" (steps) or "peak" (the earlier constant model).
    cache_model: str = "varying"
    model_blocks_min: int = 0
    model_blocks_max: int = 0
    cache_steps: int = 0  # changes of the model's cache after the first request
    # Evictions in the traced tasks' reclaim, each a moment the cgroup was at its limit: the
    # non-file charge is known exactly there (validate._reclaim_samples). Those kept: the first
    # and last of each task's between two requests (validate._ReclaimMoments).
    reclaim_samples: int = 0
    trace: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# Environment


def check_environment() -> "CgroupKind":
    """The cgroup hierarchy to use; a one-line ValidateError naming what is missing otherwise."""
    if os.geteuid() != 0:
        raise ValidateError(
            "bufsim validate needs root (it drops the page cache, creates a memory cgroup and uses tracefs); run it as root"
        )
    from bufsim import ktrace

    try:
        ktrace.find_tracefs()
    except CollectError:
        raise ValidateError(
            f"bufsim validate needs tracefs, which is not mounted at {ktrace.TRACEFS} and could not be mounted; "
            f"mount it (mount -t tracefs nodev {ktrace.TRACEFS})"
        ) from None
    kind = find_memory_cgroup()
    if kind is None:
        raise ValidateError(
            f"bufsim validate needs the cgroup memory controller: neither {CGROUP_V1} (v1) nor a cgroup v2 "
            f"hierarchy with `memory` in cgroup.controllers is there; mount one "
            f"(mount -t cgroup -o memory none {CGROUP_V1})"
        )
    return kind


@dataclass
class CgroupKind:
    version: int
    root: str


def find_memory_cgroup() -> Optional[CgroupKind]:
    """Prefers cgroup v2 when its memory controller is enabled, else v1's memory hierarchy."""
    for root in CGROUP_V2_CANDIDATES:
        try:
            with open(os.path.join(root, "cgroup.controllers")) as f:
                if "memory" in f.read().split():
                    return CgroupKind(2, root)
        except OSError:
            continue
    if os.path.exists(os.path.join(CGROUP_V1, "memory.limit_in_bytes")):
        return CgroupKind(1, CGROUP_V1)
    return None


#: Each validation's cgroup is named CGROUP_PREFIX + "PID-N": the PID tells whether its owner lives.
CGROUP_PREFIX = "bufsim-validate-"


def _validation_cgroups(kind: CgroupKind) -> list[tuple[str, int]]:
    """The validations' cgroups under the hierarchy's root, each with its owner's PID."""
    try:
        names = os.listdir(kind.root)
    except OSError:
        return []
    found = []
    for name in names:
        parts = name.split("-")
        if name.startswith(CGROUP_PREFIX) and len(parts) == 4 and parts[2].isdigit():
            found.append((name, int(parts[2])))
    return found


def remove_orphans(kind: CgroupKind) -> list[str]:
    """Removes the cgroups of earlier validations whose process is gone: one killed outright
    (SIGKILL, the OOM killer) cannot remove its own. Their processes, if any, are killed as
    :meth:`MemoryCgroup.remove` would have. Returns the names removed."""
    removed = []
    for name, owner in _validation_cgroups(kind):
        if owner == os.getpid() or os.path.exists(f"/proc/{owner}"):
            continue
        try:
            remove_cgroup(os.path.join(kind.root, name))
            removed.append(name)
        except (OSError, ValidateError):
            pass
    return removed


def other_validation(kind: CgroupKind) -> Optional[int]:
    """The process of another validation whose command is running now (its cgroup holds
    processes and its owner lives), if any. Each validation drops the page cache before its
    command: run beside another, it would empty that one's cache mid-run and the kernel would
    read everything again, which its model never sees (a whole-footprint run of multi2 read
    three times the pages it reads alone, because another validation started)."""
    for name, owner in _validation_cgroups(kind):
        if owner != os.getpid() and os.path.exists(f"/proc/{owner}") and cgroup_procs(os.path.join(kind.root, name)):
            return owner
    return None


def cgroup_procs(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def remove_cgroup(path: str) -> None:
    """Kills what is left in the cgroup at ``path`` (daemons a command started go with it) and
    removes it."""
    for _ in range(100):
        for pid in cgroup_procs(path):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno not in (errno.EBUSY, errno.ENOTEMPTY):
                raise
        time.sleep(0.05)
    raise ValidateError(f"could not remove the cgroup {path}: it still holds processes; remove it by hand")


class MemoryCgroup:
    """A private memory cgroup with a limit; :meth:`remove` kills what is left in it and removes
    it (called from ``finally``)."""

    def __init__(self, kind: CgroupKind, limit: int):
        self.kind = kind
        remove_orphans(kind)
        self.path = os.path.join(kind.root, f"{CGROUP_PREFIX}{os.getpid()}-{time.monotonic_ns() % 10**9}")
        if kind.version == 2:
            try:
                with open(os.path.join(kind.root, "cgroup.subtree_control"), "w") as f:
                    f.write("+memory")
            except OSError:
                pass
        os.mkdir(self.path)
        try:
            if kind.version == 1:
                self._write("memory.limit_in_bytes", str(limit))
            else:
                self._write("memory.max", str(limit))
                self._write("memory.swap.max", "0", missing_ok=True)
        except OSError:
            self.remove()
            raise
        #: (CLOCK_MONOTONIC microseconds, bytes of non-file charges, of them anonymous, bytes on
        #: the active and the inactive file list), on the tracer's clock.
        self.samples: list[tuple[int, int, int, int, int]] = []
        #: Processes the OOM killer killed in the cgroup, read when it is removed.
        self.killed_by_limit = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def _write(self, name: str, value: str, missing_ok: bool = False) -> None:
        try:
            with open(os.path.join(self.path, name), "w") as f:
                f.write(value)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def add(self, pid: int) -> None:
        self._write("cgroup.procs", str(pid))
        self._sampler.start()

    def _read(self, name: str) -> str:
        with open(os.path.join(self.path, name)) as f:
            return f.read()

    def non_file_bytes(self) -> Optional[tuple[int, int, int, int]]:
        """Charged memory that is not the page cache of files (anonymous, shared and kernel
        memory), of it the anonymous memory, and the kernel's active and inactive file lists (the
        lists the model's own follow; kept for comparison): the usage less the page cache of
        memory.stat. Those are two reads, and a read-ahead window of megabytes charged between
        them would count as non-file memory (on a busy machine the sampler can be preempted
        between them): the usage is read on both
        sides of memory.stat, and a sample whose two usages differ by more than
        :data:`SAMPLE_SLACK` is taken again, up to :data:`SAMPLE_TRIES` times, else skipped."""
        usage_file = "memory.usage_in_bytes" if self.kind.version == 1 else "memory.current"
        for _ in range(SAMPLE_TRIES):
            try:
                before = int(self._read(usage_file))
                stat = {}
                for line in self._read("memory.stat").splitlines():
                    k, _, v = line.partition(" ")
                    stat[k] = int(v)
                after = int(self._read(usage_file))
            except (OSError, ValueError):
                return None
            if abs(after - before) > SAMPLE_SLACK:
                continue
            cache = stat.get("cache", 0) if self.kind.version == 1 else stat.get("file", 0)
            # Shared memory (tmpfs, SysV and POSIX segments: PostgreSQL's buffer pool) is counted
            # in the cache of memory.stat, but it is no file's page cache the tracer sees: it takes
            # the compared files' room as anonymous memory does.
            cache -= min(cache, stat.get("shmem", 0))
            anon = stat.get("rss", 0) if self.kind.version == 1 else stat.get("anon", 0)
            non_file = max(0, min(before, after) - cache)
            return non_file, min(anon, non_file), stat.get("active_file", 0), stat.get("inactive_file", 0)
        return None

    def _sample(self) -> None:
        while not self._stop.is_set():
            v = self.non_file_bytes()
            if v is not None:
                self.samples.append((time.monotonic_ns() // 1000, *v))
            self._stop.wait(SAMPLE_S)

    @property
    def peak_non_file(self) -> int:
        return max((s[1] for s in self.samples), default=0)

    def oom_kills(self) -> int:
        """Processes the cgroup's OOM killer killed (``oom_kill`` of memory.events, or of
        memory.oom_control in v1); 0 where the kernel does not count them."""
        name = "memory.oom_control" if self.kind.version == 1 else "memory.events"
        try:
            for line in self._read(name).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        self._stop.set()
        if self._sampler.is_alive():
            self._sampler.join(1)
        self.killed_by_limit = self.oom_kills()
        remove_cgroup(self.path)


def drop_caches() -> None:
    os.sync()
    with open(DROP_CACHES, "w") as f:
        f.write("3\n")


def read_ahead_kb(dev: int) -> int:
    """The device's read_ahead_kb (the whole disk's, for a partition); 128 if unknown."""
    major, minor = os.major(dev), os.minor(dev)
    base = f"/sys/dev/block/{major}:{minor}"
    for q in (os.path.join(base, "queue", "read_ahead_kb"), os.path.join(base, "..", "queue", "read_ahead_kb")):
        try:
            with open(q) as f:
                return int(f.read())
        except (OSError, ValueError):
            continue
    return 128


# ---------------------------------------------------------------------------------------------
# Comparison


class _PageCacheRows:
    """A run's page-cache events, read from its file again on each pass over them (a long run's
    events need not fit in memory; the comparison makes four passes)."""

    def __init__(self, path: str):
        self.path = path

    def __iter__(self):
        from bufsim.ktrace import iter_pagecache

        return iter_pagecache(self.path)


def _kernel_decisions(rows, traced: dict[tuple[int, int], int]) -> list[tuple[int, int, int, int]]:
    """Read-ahead windows the kernel read, per traced file: every page_cache_ra_order, and every
    page_cache_ra_unbounded that no ra_order of the same task and file just announced (a random
    read: the request alone, no lookahead). Windows read on a page fault (mmap read-around of a
    program or library the command maps) are left out: the trace has read calls, not mapped
    accesses, so the model never sees the fault that asked for them."""
    out = []
    last_order: dict[tuple[int, int, int], int] = {}
    faulting: set[tuple[int, int, int]] = set()
    for e in rows:
        task = (e.pid, e.dev, e.ino)
        if e.event == "fault":
            faulting.add(task)
        elif e.event == "lookup":
            faulting.discard(task)
        if e.event not in ("ra_order", "ra_unbounded") or task in faulting:
            continue
        key = (e.dev, e.ino)
        f = traced.get(key)
        if e.event == "ra_order":
            last_order[task] = e.time_us
            if f is not None:
                detail = dict(kv.split("=", 1) for kv in e.detail.split(";") if "=" in kv)
                out.append((f, e.index, e.count, int(detail.get("async_size", "0"))))
        else:
            follows = task in last_order and e.time_us - last_order.pop(task) < 1_000_000
            la = int(e.detail.partition("=")[2] or 0)
            if f is not None and not follows and la == 0:
                out.append((f, e.index, e.count, 0))
    return out


def _warm_files(rows, traced: dict[tuple[int, int], int]) -> set[int]:
    """Traced files whose first lookup by the run found pages it had not inserted itself."""
    first_seen: set[int] = set()
    warm: set[int] = set()
    for e in rows:
        f = traced.get((e.dev, e.ino))
        if f is None or f in first_seen or e.event not in ("lookup", "insert"):
            continue
        first_seen.add(f)
        if e.event == "lookup" and (e.hits or 0) > 0:
            warm.add(f)
    return warm


def memory_path(trace: str) -> str:
    """The companion file of a validation run's trace: the cgroup's non-file charges over time."""
    return trace + ".memory.csv"


def write_memory(trace: str, samples: Sequence[tuple[int, ...]], t0_us: int) -> str:
    """Writes ``samples`` (monotonic microseconds, non-file bytes, of them anonymous, active and
    inactive file bytes) on the trace's clock (microseconds from its first traced event, as the
    trace and its page-cache file count them)."""
    path = memory_path(trace)
    with open(path, "w") as f:
        f.write(
            "# bufsim validate: the cgroup's charges that are not page cache (usage - file + shmem), of them anon, "
            "and the cgroup's active and inactive file lists\n"
        )
        f.write(MEMORY_HEADER + "\n")
        f.write("".join(f"{t - t0_us}," + ",".join(map(str, rest)) + "\n" for t, *rest in samples))
    return path


def read_memory(path: str, column: str = "non_file_bytes") -> list[tuple[int, int]]:
    """(time, bytes) of one column of a ``TRACE.memory.csv``."""
    from bufsim._core import TraceFormatError

    out = []
    with open(path) as f:
        head: list[str] = []
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            if not head:
                head = line.strip().split(",")
                if head[0] != "time_us" or column not in head:
                    raise TraceFormatError(f"{path}:{n}: expected {MEMORY_HEADER}, not {line.strip()!r}")
                col = head.index(column)
                continue
            try:
                fields = line.split(",")
                out.append((int(fields[0]), int(fields[col])))
            except (ValueError, IndexError):
                raise TraceFormatError(f"{path}:{n}: expected {MEMORY_HEADER}, not {line.strip()!r}") from None
    return out


def _request_times(trace: str) -> list[int]:
    """The time (microseconds, first column) of every request of a collected trace, in order."""
    times = []
    with open(trace, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            if line.startswith("#") or line.startswith("time_us"):
                continue
            head = line[: line.find(",")]
            if head.strip():
                times.append(int(head))
    return times


def cache_schedule(
    times: Sequence[int],
    memory_bytes: int,
    non_file: Sequence[tuple[int, int]],
    untraced: Sequence[tuple[int, int]],
) -> list[tuple[int, int]]:
    """The model's cache at each request, as (request index, pages) steps, the first at request
    0: the limit less the non-file charge at the request's time (the larger of the samples just
    before and just after it) less the untraced pages resident then (``untraced``: (time, pages
    after the event), in time order), never less than one page. A step is taken only when the
    cache moves by :data:`STEP_SHARE` of the limit or :data:`MIN_STEP_PAGES`, whichever is more."""
    limit = memory_bytes // PAGE
    threshold = max(MIN_STEP_PAGES, int(limit * STEP_SHARE))
    samples = sorted(non_file)
    steps: list[tuple[int, int]] = []
    s = u = 0
    resident = 0
    current = None
    for i, t in enumerate(times):
        while s < len(samples) and samples[s][0] <= t:
            s += 1
        # samples[s - 1] is the last at or before t, samples[s] the first after it.
        near = [samples[j][1] for j in (s - 1, s) if 0 <= j < len(samples)]
        charge = max(near, default=0)
        while u < len(untraced) and untraced[u][0] <= t:
            resident = untraced[u][1]
            u += 1
        want = max(1, (memory_bytes - charge) // PAGE - resident)
        if current is None or abs(want - current) >= threshold:
            steps.append((i, want))
            current = want
    return steps or [(0, max(1, limit))]


def compare(
    trace: str,
    memory_bytes: int,
    *,
    policy: str = "linux",
    prefetch: Optional[str] = None,
    non_file: Optional[Sequence[tuple[int, int]]] = None,
    cache: str = "varying",
    sizes: Optional[dict[str, int]] = None,
    command_status: int = 0,
    outcome: str = "",
    lost_events: int = 0,
    reads_only: bool = False,
) -> tuple[Comparison, dict]:
    """Sets the page cache recorded in ``trace + ".pagecache.csv"`` beside the model's replay of
    ``trace`` at ``memory_bytes``, less the non-file charges ``non_file`` ((microseconds on the
    trace's clock, bytes); by default read from ``TRACE.memory.csv`` when it is there) and the
    untraced files' pages: over time (``cache="varying"``, :func:`cache_schedule`) or their
    peaks for the whole run (``cache="peak"``, the earlier model). Files are matched by path to
    the (device, inode) the kernel names, so they must still exist, unless ``sizes`` gives their
    sizes in bytes by trace name."""
    from bufsim.ktrace import pagecache_path

    if cache not in ("varying", "peak"):
        raise ValueError(f"cache must be 'varying' or 'peak', not {cache!r}")
    if non_file is None:
        non_file = read_memory(memory_path(trace)) if os.path.exists(memory_path(trace)) else []
    peak_non_file = max((v for _, v in non_file), default=0)
    rows = _PageCacheRows(pagecache_path(trace))
    names = _trace_file_names(trace)
    traced: dict[tuple[int, int], int] = {}
    file_sizes: list[tuple[str, int]] = []
    notes: list[str] = []
    for i, name in enumerate(names):
        # The kernel tracer names files DEV:INODE:PATH (device in hex).
        dev, ino, path = _split_name(name)
        if dev is None:
            continue
        traced[(dev, ino)] = i
        if sizes is not None:
            if name in sizes:
                file_sizes.append((name, sizes[name]))
            continue
        try:
            st = os.stat(path)
            if st.st_ino == ino:
                file_sizes.append((name, st.st_size))
        except OSError:
            pass
    if len(traced) < len(names):
        notes.append(f"{len(names) - len(traced)} files without a device and inode in their name: left out")
    # Pages the rows show cached, by file (the compared files' and the others'); of them, those of
    # files outside the comparison over time; and the reclaim moments that anchor the non-file
    # charge (see _reclaim_samples).
    cached: Counter = Counter()
    untraced_now = untraced_peak = 0
    untraced: list[tuple[int, int]] = []
    cached_now = 0
    times = _request_times(trace) if cache != "peak" else []
    intervals = _Intervals(times)
    reclaims = _ReclaimMoments(intervals)
    untraced_at = -1  # interval of untraced[-1]
    task_pids: set[int] = set()
    k_read = k_evicted_n = k_dropped = 0
    # The kernel's evicted pages as page keys (see page_log), one per eviction.
    k_evicted = array.array("Q")
    shift = PAGE_KEY_SHIFT
    disk = 0
    for e in rows:
        if e.event in ("insert", "evict", "drop"):
            f = traced.get((e.dev, e.ino))
            sign = 1 if e.event == "insert" else -1
            key = (e.dev, e.ino)
            if e.event == "insert":
                task_pids.add(e.pid)
            elif e.event == "evict":
                reclaims.add(e.time_us, e.pid, cached_now)
            before = cached[key]
            cached[key] = max(0, before + sign * e.count)
            cached_now += cached[key] - before
            if f is None:
                untraced_now += cached[key] - before
                untraced_peak = max(untraced_peak, untraced_now)
                # cache_schedule reads the last count at or before each request (the rows are
                # in time order): of the counts between two requests' times only the last.
                at = intervals.of(e.time_us)
                if at == untraced_at:
                    untraced[-1] = (e.time_us, untraced_now)
                else:
                    untraced.append((e.time_us, untraced_now))
                    untraced_at = at
            elif e.event == "insert":
                k_read += e.count
            elif e.event == "drop":
                k_dropped += e.count
            else:
                k_evicted_n += e.count
                base = (f << shift) | e.index
                k_evicted.extend(range(base, base + e.count))
        elif e.event == "disk_issue":
            disk += 1
    ra_kb = read_ahead_kb(next(iter(traced))[0] if traced else os.stat(trace).st_dev)
    if prefetch is None:
        prefetch = f"linux-6(max={max(1, ra_kb // 4)})"
    anchors: list[tuple[int, int]] = []
    if cache == "peak":
        steps = [(0, max(1, (memory_bytes - peak_non_file) // PAGE - untraced_peak))]
    else:
        anchors = _reclaim_samples(reclaims.kept(), task_pids, memory_bytes)
        # The largest charge of all the moments, those not kept included.
        least = [c for pid, c in reclaims.least_cached.items() if pid in task_pids]
        peak_non_file = max([peak_non_file, *(max(0, memory_bytes - c * PAGE) for c in least)])
        steps = cache_schedule(times, memory_bytes, sorted([*non_file, *anchors]), untraced)
    # A file's own ra_pages (fadvise(SEQUENTIAL) doubles it) is an input of the run, as the
    # device's read_ahead_kb is: taken from the first read-ahead event of each file.
    file_max: dict[int, int] = {}
    for e in rows:
        if e.event in ("ra_sync", "ra_async"):
            f = traced.get((e.dev, e.ino))
            if f is not None and f not in file_max:
                detail = dict(kv.split("=", 1) for kv in e.detail.split(";") if "=" in kv)
                file_max[f] = int(detail.get("ra_pages", "0"))
    maxima = [(names[f], m) for f, m in file_max.items() if m]
    log = page_log(trace, policy, steps[0][1], prefetch, file_sizes, maxima, reads_only, steps[1:])
    keep = np.fromiter(sorted(set(traced.values())), dtype=np.uint64)
    m_inserted = int(np.isin(log["inserted"] >> shift, keep).sum())
    m_evicted = log["evicted"][np.isin(log["evicted"] >> shift, keep)]
    # A file the run found partly cached (pages that outlive drop_caches, such as those of a
    # library other processes map) starts warm in the kernel and cold in the model: its
    # read-ahead windows depend on pages the trace never shows, so they are not compared.
    warm = _warm_files(rows, traced)
    if warm:
        notes.append(f"{len(warm)} files partly cached before the run: their read-ahead decisions left out")
    m_decisions = [d for d in log["decisions"] if d[0] in keep and d[0] not in warm]
    k_decisions = [d for d in _kernel_decisions(rows, traced) if d[0] not in warm]
    evicted_both = _common_count(np.frombuffer(k_evicted, dtype=np.uint64), m_evicted)
    c = Comparison(
        memory_bytes=memory_bytes,
        model_blocks=steps[0][1],
        command_status=command_status,
        outcome=outcome,
        files=len(traced),
        kernel_pages_read=k_read,
        model_pages_read=m_inserted,
        pages_read_diff=(m_inserted - k_read) / k_read if k_read else 0.0,
        kernel_readahead=len(k_decisions),
        model_readahead=len(m_decisions),
        readahead_match=readahead_match(Counter(k_decisions), Counter(m_decisions)),
        kernel_evicted=k_evicted_n,
        model_evicted=len(log["evicted"]),
        evicted_overlap=evicted_overlap(evicted_both, len(k_evicted), len(m_evicted)),
        kernel_dropped=k_dropped,
        model_dropped=int(np.isin(log["dropped"] >> shift, keep).sum()),
        kernel_disk_requests=disk,
        model_disk_requests=log["disk_requests"],
        read_ahead_kb=ra_kb,
        peak_non_file_bytes=peak_non_file,
        peak_untraced_pages=untraced_peak,
        lost_events=lost_events,
        cache_model=cache,
        model_blocks_min=min(b for _, b in steps),
        model_blocks_max=max(b for _, b in steps),
        cache_steps=len(steps) - 1,
        reclaim_samples=len(anchors),
        trace=trace,
        notes=notes,
    )
    return c, {"kernel_decisions": k_decisions, "model_decisions": m_decisions, "steps": steps, "page_log": log}


#: Bits of a page key below its file: ``(file << PAGE_KEY_SHIFT) | block`` (the core's page log).
PAGE_KEY_SHIFT: int = _core.PAGE_KEY_SHIFT


def page_log(trace: str, policy: str, cache_blocks: int, prefetch: str, *args: Any) -> dict:
    """The model's page-level log of ``trace`` (``_core.page_log``, same arguments) with its pages
    as numpy arrays: ``inserted``, ``evicted`` and ``dropped`` hold page keys
    (``(file << PAGE_KEY_SHIFT) | block``, uint64), ``inserted_prefetch`` whether read-ahead
    brought each inserted page. A long run logs tens of millions of pages; as tuples they took
    gigabytes."""
    log = dict(_core.page_log(trace, policy, cache_blocks, prefetch, *args))
    for k in ("inserted", "evicted", "dropped"):
        log[k] = np.frombuffer(log[k], dtype="<u8").astype(np.uint64, copy=False)
    log["inserted_prefetch"] = np.frombuffer(log["inserted_prefetch"], dtype=np.uint8).astype(bool)
    return log


def readahead_match(reference: Counter, other: Counter) -> float:
    """The share of ``reference``'s read-ahead decisions (a multiset of decisions) that ``other``
    made too; 1.0 when ``reference`` made none."""
    total = sum(reference.values())
    return sum((reference & other).values()) / total if total else 1.0


def evicted_overlap(both: int, a: int, b: int) -> float:
    """Evicted pages in common (``both``, counted with repetition) over those evicted by either of
    two runs that evicted ``a`` and ``b``; 1.0 when neither evicted any."""
    union = a + b - both
    return both / union if union else 1.0


def _common_count(a: "np.ndarray", b: "np.ndarray") -> int:
    """How many of the page keys ``a`` and ``b`` hold in common, counted with repetition (a page
    evicted twice in both counts twice): the size of the multiset intersection."""
    ua, ca = np.unique(a, return_counts=True)
    ub, cb = np.unique(b, return_counts=True)
    _, ia, ib = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
    return int(np.minimum(ca[ia], cb[ib]).sum())


class _Intervals:
    """Which interval between the requests' times a moment falls in: interval k holds the
    times after the (k-1)-th distinct request time up to the k-th. For rows in time order a
    pointer moves forward; a time that goes back is looked up again."""

    def __init__(self, times: Sequence[int]):
        self.times = sorted(set(times))
        self.at = 0
        self.last_time = -1

    def of(self, time_us: int) -> int:
        if time_us < self.last_time:
            self.at = bisect.bisect_left(self.times, time_us)
        while self.at < len(self.times) and self.times[self.at] < time_us:
            self.at += 1
        self.last_time = time_us
        return self.at


class _ReclaimMoments:
    """The reclaim moments :func:`_reclaim_samples` needs, kept in memory bounded by the requests
    rather than by the evictions (a recording of a quarter of multi3's footprint has 35 million
    evictions). :func:`cache_schedule` reads, for each request, only the last sample at or
    before its time and the first after it, so of the moments between two request times only
    the first and the last (ordered as the samples are sorted) can ever be read: per task, those
    two are kept and the rest dropped, which changes no step of the schedule."""

    def __init__(self, intervals: _Intervals):
        self.intervals = intervals
        self.out: list[tuple[int, int, int]] = []
        # pid -> [interval, first, last, first's key, last's key] of the moments still open.
        self.open: dict[int, list] = {}
        self.least_cached: dict[int, int] = {}  # pid -> fewest cached pages at any of its moments

    def add(self, time_us: int, pid: int, cached: int) -> None:
        at = self.intervals.of(time_us)
        if cached < self.least_cached.get(pid, cached + 1):
            self.least_cached[pid] = cached
        # Samples sort by (time, charge); the charge falls as the cached pages rise.
        m = (time_us, pid, cached)
        key = (time_us, -cached)
        cur = self.open.get(pid)
        if cur is None or cur[0] != at:
            if cur is not None:
                self._flush(cur)
            self.open[pid] = [at, m, m, key, key]
        else:
            if key < cur[3]:
                cur[1], cur[3] = m, key
            if key > cur[4]:
                cur[2], cur[4] = m, key

    def _flush(self, cur: list) -> None:
        self.out.append(cur[1])
        if cur[2] is not cur[1]:
            self.out.append(cur[2])

    def kept(self) -> list[tuple[int, int, int]]:
        for cur in self.open.values():
            self._flush(cur)
        self.open.clear()
        return self.out


def _reclaim_samples(
    reclaims: Sequence[tuple[int, int, int]], task_pids: set[int], memory_bytes: int
) -> list[tuple[int, int]]:
    """Non-file charges the kernel's own reclaim gives exactly, as (time, bytes) samples.

    memory.stat is sampled every :data:`SAMPLE_S`, and a compiler's anonymous memory comes and
    goes within that: the larger of two samples took a whole interval's requests as if the peak
    held all through it (gcc at 248 MiB read 44% more pages in the model than in the kernel), the
    smaller the other way (17% fewer). A page evicted in a traced task's own context (reclaim runs
    in the task that charges the memory: ``reclaims`` holds (time, pid, pages cached just before)
    at each eviction) says the cgroup was at its limit then, so everything charged but the cached
    pages the rows show is the non-file charge at that moment. Evictions in other tasks (kswapd's
    global reclaim, DAMON) say nothing about the limit and are left out."""
    out = []
    for t, pid, cached in reclaims:
        if pid in task_pids:
            out.append((t, max(0, memory_bytes - cached * PAGE)))
    return out


def _split_name(name: str) -> tuple[Optional[int], int, str]:
    dev, _, rest = name.partition(":")
    ino, _, path = rest.partition(":")
    try:
        return int(dev, 16), int(ino), path
    except ValueError:
        return None, 0, name


def _trace_file_names(trace: str) -> list[str]:
    """File names in the order the trace reader interns them (first appearance)."""
    return list(_core.trace_file_names(trace))


# ---------------------------------------------------------------------------------------------
# Running


#: The largest --memory: the model's cache holds fewer than 2^31 pages.
MAX_MEMORY = (1 << 31) * PAGE - PAGE


def memory_bytes(size: "int | str") -> int:
    """A --memory size in bytes: an int is bytes, a string a size such as ``64MiB`` (whole
    pages of it); refused unless a process can start in it and the model can hold it."""
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise ValidateError(f"--memory must be a size such as 64MiB (or a number of bytes), not {size!r:.60}")
    if isinstance(size, int):
        mem, shown = size, f"{size} bytes"
    else:
        mem, shown = _core.size_to_blocks(size, PAGE) * PAGE, size
    if mem < MIN_MEMORY:
        raise ValidateError(
            f"--memory {shown} is too small for a process to start (below 64KiB; most programs need a few MiB)"
            "; give a larger size"
        )
    if mem > MAX_MEMORY:
        raise ValidateError(f"--memory {shown} is more than the model's cache can hold; give less than 8TiB")
    return mem


def validate(
    command: Sequence[str],
    memories: Sequence[int],
    *,
    out_dir: Optional[str] = None,
    policy: str = "linux",
    prefetch: Optional[str] = None,
    timeout: Optional[float] = None,
) -> list[Comparison]:
    """Runs ``command`` once per memory size (bytes) in a fresh memory cgroup after dropping the
    page cache, and compares each run with the model. Traces go to ``out_dir`` (a temporary
    directory, removed afterwards, when not given)."""
    from bufsim.damon import PageoutExclusion
    from bufsim.ktrace import collect_kernel

    if isinstance(command, (str, bytes, os.PathLike)) or not all(
        isinstance(w, (str, os.PathLike)) for w in command or []
    ):
        raise ValidateError(
            f"the command must be a list of words (the program, then its arguments), not {command!r:.60}"
        )
    command = [os.fspath(w) for w in command or []]
    if not command:
        raise ValidateError("give the command to run after --, e.g. bufsim validate --memory 64MiB -- cat big.file")
    if isinstance(memories, (str, int)) or not memories:
        raise ValidateError("give at least one --memory SIZE (the cgroup's limit, e.g. --memory 64MiB)")
    memories = [memory_bytes(m) for m in memories]
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not (math.isfinite(timeout) and timeout > 0)
    ):
        raise ValidateError(f"--timeout {timeout} is not a time to wait; give a positive number of seconds")
    for option, spec in (("--policy", policy), ("--prefetch", prefetch)):
        if not isinstance(spec, str) and (spec is not None or option == "--policy"):
            raise ValidateError(f"{option} must be a spec such as `linux`, not {spec!r:.60}")
    # The model's specs are checked before anything runs: found after the command, a typo costs its run.
    # Its cache follows the memory the page cache had (cache steps), which not every policy can do.
    from bufsim._core import SpecError
    from bufsim.options import Options

    model = ([policy], [f"{max(1, min(memories) // PAGE)}blocks"], [prefetch or "none"])
    Options().resolved(*model)
    try:
        Options(cache_steps=["1=1blocks"]).resolved(*model)
    except SpecError as e:
        raise SpecError(
            f"--policy {policy}: the model's cache follows the memory the command's page cache had, so it "
            f"changes during the run, and {str(e).replace(' (cache_steps)', '')}"
        ) from None
    # A command that is not there is said before the machine's whole page cache is dropped for it.
    from bufsim.ktrace import resolve_command

    resolve_command(command)
    if out_dir is not None and not out_dir.strip():
        raise ValidateError(
            f"--out-dir {out_dir!r}: an empty path; give a directory for the traces, or leave --out-dir out "
            "to keep them in a temporary one"
        )
    if out_dir is not None and (os.path.exists(out_dir) and not os.path.isdir(out_dir)):
        raise ValidateError(f"{out_dir}: is not a directory; give --out-dir a directory for the traces")
    kind = check_environment()
    busy = other_validation(kind)
    if busy is not None:
        raise ValidateError(
            f"another bufsim validate (process {busy}) is running a command: this one would drop the page "
            "cache under it and spoil both comparisons; wait for it to finish"
        )

    def interrupted(signum, frame):
        # Outside the traced run (which forwards signals to the command): unwind, so that every
        # `finally` removes what it made.
        raise KeyboardInterrupt

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, interrupted)
        except ValueError:
            pass  # not the main thread: the caller handles signals
    tmp = None
    if out_dir is None:
        tmp = tempfile.mkdtemp(prefix="bufsim-validate-")
        out_dir = tmp
    else:
        try:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ValidateError(
                f"{out_dir}: cannot create the directory for --out-dir ({e.strerror or e}); give another"
            ) from None
    results = []
    try:
        for mem in memories:
            trace = os.path.join(out_dir, f"validate-{mem}.csv")
            drop_caches()
            cg = MemoryCgroup(kind, mem)
            # DAMON's proactive reclaim, where it runs, would evict the cgroup's pages beside its
            # limit: no page cache decision the model could follow (bufsim.damon).
            damon = PageoutExclusion("/" + os.path.relpath(cg.path, kind.root), CGROUP_PREFIX)
            try:
                damon.start()
                r = collect_kernel(
                    list(command),
                    trace,
                    stacks=False,
                    exclude=EXCLUDE,
                    timeout=timeout,
                    on_start=cg.add,
                    buffer_kb=TRACE_BUFFER_KB,
                )
            finally:
                kept_off = len(damon.schemes)
                try:
                    damon.stop()
                finally:
                    cg.remove()
            non_file = None
            if r.t0_us is not None:
                write_memory(trace, cg.samples, r.t0_us)
                non_file = read_memory(memory_path(trace))
            else:
                # The tracer's clock is not the monotonic one: the samples cannot be placed on
                # the trace, only their peak can be subtracted (as if at every request).
                non_file = [(0, cg.peak_non_file)]
            c, _ = compare(
                trace,
                mem,
                policy=policy,
                prefetch=prefetch,
                non_file=non_file,
                command_status=r.exit_status,
                outcome=r.outcome,
                lost_events=r.lost_events,
            )
            if kept_off:
                c.notes.append(f"DAMON pageout kept off the cgroup ({kept_off} scheme{'s' if kept_off > 1 else ''})")
            if damon.failure:
                c.notes.append(f"{damon.failure}: it may evict the cgroup's pages beside the limit")
            if cg.killed_by_limit:
                c.notes.append(
                    f"the memory limit ran out: the kernel's OOM killer killed {cg.killed_by_limit} of the "
                    "command's processes; give a larger --memory"
                )
            results.append(c)
            if r.outcome in ("was killed by SIGTERM", "was killed by SIGINT", "was killed by SIGHUP"):
                break  # interrupted: the partial comparison, and no further sizes
        return results
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if tmp is not None:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Output


def format_table(results: Sequence[Comparison]) -> str:
    head = (
        "memory",
        "model",
        "pages read k/m",
        "diff",
        "read-ahead k/m",
        "same",
        "evicted k/m",
        "overlap",
        "dropped k/m",
        "disk reqs k/m",
    )
    rows = [head]
    for c in results:
        rows.append(
            (
                f"{c.memory_bytes / (1 << 20):.1f}MiB",
                f"{c.model_blocks_min}-{c.model_blocks_max}blk"
                if c.model_blocks_min != c.model_blocks_max
                else f"{c.model_blocks}blk",
                f"{c.kernel_pages_read}/{c.model_pages_read}",
                f"{c.pages_read_diff:+.3f}",
                f"{c.kernel_readahead}/{c.model_readahead}",
                f"{c.readahead_match:.3f}",
                f"{c.kernel_evicted}/{c.model_evicted}",
                f"{c.evicted_overlap:.3f}",
                f"{c.kernel_dropped}/{c.model_dropped}",
                f"{c.kernel_disk_requests}/{c.model_disk_requests}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for c in results:
        if c.cache_model == "peak":
            cache = (
                f"model cache = limit - {c.peak_non_file_bytes / (1 << 20):.1f} MiB anonymous and kernel memory "
                f"- {c.peak_untraced_pages} pages of untraced files (their peaks)"
            )
        else:
            cache = (
                f"model cache = limit - anonymous and kernel memory - pages of untraced files at each request: "
                f"{c.model_blocks_min} to {c.model_blocks_max} pages in {c.cache_steps + 1} steps (peaks "
                f"{c.peak_non_file_bytes / (1 << 20):.1f} MiB and {c.peak_untraced_pages} pages; the non-file "
                f"charge known exactly at {c.reclaim_samples} reclaim moments)"
            )
        extra = (
            f"{c.memory_bytes / (1 << 20):.1f}MiB: the command {c.outcome}; {c.files} files compared; "
            f"{cache}; read_ahead_kb {c.read_ahead_kb}"
        )
        if c.lost_events:
            extra += f"; the trace buffer dropped {c.lost_events} events"
        lines.append(extra)
        lines.extend(f"  note: {n}" for n in c.notes)
    return "\n".join(lines)


def plot(results: Sequence[Comparison], out: str) -> Path:
    """Pages read (kernel and model) and the share of identical read-ahead decisions, by memory
    size, in the style of :mod:`bufsim.plots`."""
    import matplotlib

    from bufsim import plots

    with matplotlib.rc_context(plots._style()):
        fig, axes = plots._figure(1, 2)
        labels = [f"{c.memory_bytes / (1 << 20):.0f} MiB" for c in results]
        x = list(range(len(results)))
        ax = axes[0][0]
        w = 0.38
        ax.bar(
            [i - w / 2 for i in x], [c.kernel_pages_read for c in results], w, label="kernel", color=plots.PALETTE[0]
        )
        ax.bar(
            [i + w / 2 for i in x],
            [c.model_pages_read for c in results],
            w,
            label="model",
            color=plots.PALETTE[1],
            hatch="//",
        )
        ax.set_xticks(x, labels)
        ax.set_ylabel("pages brought into the cache")
        ax.set_xlabel("memory limit")
        ax.legend(loc="lower right")
        ax = axes[0][1]
        ax.plot(x, [c.readahead_match for c in results], marker="o", color=plots.PALETTE[2], label="read-ahead")
        ax.plot(x, [c.evicted_overlap for c in results], marker="s", color=plots.PALETTE[3], label="evictions")
        ax.set_xticks(x, labels)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("share the same")
        ax.set_xlabel("memory limit")
        ax.legend(loc="lower right")
        fig.suptitle("Model vs kernel page cache")
        return plots._save(fig, out)


def to_json(results: Sequence[Comparison]) -> str:
    return "\n".join(json.dumps(c.to_dict()) for c in results)

"""bufsim collect --tracer kernel on a real program: a C program doing known preads of a file
dropped from the page cache gives exactly those requests; the page-cache companion file shows the
kernel inserting their pages (misses) and the repeated reads as hits; killed and timed-out commands
leave valid traces; the tracefs instances are always removed. Needs root (CI runs as root); mounts
tracefs when it is absent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bufsim import ktrace
from bufsim._core import Trace
from bufsim.ktrace import TRACEFS, collect_kernel, pagecache_path, read_pagecache
from conftest import bufsim_cli

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the kernel tracer needs root (CI runs as root)")

PREADS = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[16384];
/* Three first reads of pages not in the cache, then the first two again (now cached). */
static const off_t OFF[5] = {0, 65536, 204800, 0, 65536};
static const size_t LEN[5] = {4096, 100, 8192, 4096, 100};

int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 8;
    /* Drop this file's pages, and turn read-ahead off so that each miss inserts only its pages. */
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    for (int i = 0; i < 5; i++)
        if (pread(fd, buf, LEN[i], OFF[i]) != (ssize_t)LEN[i]) return 9;
    close(fd);
    if (argc > 2 && strcmp(argv[2], "kill") == 0) raise(SIGKILL);
    if (argc > 2 && strcmp(argv[2], "sleep") == 0) sleep(60);
    return argc > 2 ? atoi(argv[2]) : 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("ktrace")
    src = d / "preads.c"
    src.write_text(PREADS)
    exe = d / "preads"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(src)], check=True)
    data = d / "data.bin"
    data.write_bytes(os.urandom(1 << 20))
    return exe, data


def our_instances() -> set[str]:
    base = Path(TRACEFS) / "instances"
    return {p.name for p in base.iterdir() if p.name.startswith("bufsim-")} if base.exists() else set()


def data_rows(trace: Path, data: Path, ops: tuple[str, ...] = ("R", "W")) -> list[list[str]]:
    """The trace's rows of ``data`` with one of ``ops`` (the program's fadvise(DONTNEED) is a drop)."""
    rows = [line.split(",") for line in trace.read_text().splitlines() if not line.startswith(("#", "time_us"))]
    return [r for r in rows if r[5].endswith(":" + str(data)) and r[4] in ops]


def test_known_preads_and_the_kernels_page_cache(program, tmp_path):
    exe, data = program
    before = our_instances()
    out = tmp_path / "t.csv"
    r = collect_kernel([str(exe), str(data)], str(out))
    assert r.exit_status == 0
    assert our_instances() == before  # nothing left behind
    st = os.stat(data)
    ident = f"{st.st_dev:x}:{st.st_ino}:{data}"
    rows = data_rows(out, data, ("R", "D"))
    # The program's fadvise(DONTNEED) of the whole file is a drop of its bytes, then the reads.
    assert [(r[4], r[5], int(r[6]), int(r[7])) for r in rows] == [
        ("D", ident, 0, 1 << 20),
        ("R", ident, 0, 4096),
        ("R", ident, 65536, 100),
        ("R", ident, 204800, 8192),
        ("R", ident, 0, 4096),
        ("R", ident, 65536, 100),
    ]
    # Each read got what it asked for: no `asked` value (only a short read has one).
    assert out.read_text().splitlines()[3] == "time_us,dur_us,pid,ctx,op,file,offset,size,asked,opened"
    assert all(r[8] == "" for r in rows)
    times = [int(r[0]) for r in rows]
    assert times == sorted(times) and all(int(r[1]) >= 0 for r in rows)
    assert len({r[2] for r in rows}) == 1
    assert len(Trace(str(out))) == len(
        [x for x in out.read_text().splitlines() if x and not x.startswith(("#", "time_us"))]
    )

    events = [e for e in read_pagecache(pagecache_path(str(out))) if e.ino == st.st_ino]
    inserted = set()
    for e in events:
        if e.event == "insert":
            inserted.update(range(e.index, e.index + e.count))
    # The kernel inserted the pages of the three first reads (read-ahead is off: POSIX_FADV_RANDOM)
    assert {0, 16, 50, 51} <= inserted
    assert inserted <= {0, 16, 50, 51}
    lookups = [(e.index, e.count, e.hits) for e in events if e.event == "lookup"]
    # Each first read misses all its pages; each repeated read hits.
    assert lookups == [(0, 1, 0), (16, 1, 0), (50, 2, 0), (0, 1, 1), (16, 1, 1)]


def test_a_file_closed_before_the_reader_looked_keeps_its_path(program, tmp_path, monkeypatch):
    """A short-lived program can open, read and close a file before the trace reader looks at
    /proc/TID/fd/N; fanotify's record of the open still names it. Here the looks never happen."""
    exe, data = program
    monkeypatch.setattr(ktrace.FdWatcher, "on_chunk", lambda self, chunk: None)
    out = tmp_path / "unlooked.csv"
    r = collect_kernel([str(exe), str(data)], str(out))
    assert r.exit_status == 0
    st = os.stat(data)
    rows = data_rows(out, data)
    assert [(r[5], int(r[6])) for r in rows] == [
        (f"{st.st_dev:x}:{st.st_ino}:{data}", o) for o in (0, 65536, 204800, 0, 65536)
    ]


def test_failing_and_killed_commands_leave_valid_traces(program, tmp_path):
    exe, data = program
    before = our_instances()
    out = tmp_path / "fail.csv"
    r = collect_kernel([str(exe), str(data), "3"], str(out))
    assert r.exit_status == 3
    assert out.read_text().splitlines()[-1] == "# end: the command exited with status 3"
    assert len(data_rows(out, data)) == 5

    out = tmp_path / "killed.csv"
    r = collect_kernel([str(exe), str(data), "kill"], str(out))
    assert r.exit_status == 128 + signal.SIGKILL
    assert "killed by SIGKILL" in out.read_text().splitlines()[-1]
    assert len(Trace(str(out))) >= 5

    out = tmp_path / "slow.csv"
    r = collect_kernel([str(exe), str(data), "sleep"], str(out), timeout=1.0)
    assert r.exit_status == 128 + signal.SIGKILL
    assert "timeout" in out.read_text().splitlines()[-1]
    assert len(data_rows(out, data)) == 5
    assert our_instances() == before


def test_sigterm_to_the_collector_reaches_the_command_and_cleans_up(program, tmp_path):
    exe, data = program
    before = our_instances()
    out = tmp_path / "term.csv"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bufsim",
            "collect",
            "--tracer",
            "kernel",
            "-o",
            str(out),
            "--",
            str(exe),
            str(data),
            "sleep",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    for _ in range(200):  # wait until the command has done its reads (its trace instance exists)
        if our_instances() - before:
            break
        time.sleep(0.05)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    err = p.communicate(timeout=60)[1]
    assert p.returncode == 128 + signal.SIGTERM, err
    assert "killed by SIGTERM" in out.read_text().splitlines()[-1]
    assert len(data_rows(out, data)) == 5
    assert our_instances() == before


def test_cli_errors_are_one_line(tmp_path):
    r = bufsim_cli("collect", "--tracer", "kernel", "-o", tmp_path / "x.csv", "--", "no-such-command-xyz")
    assert r.returncode == 127
    assert r.stderr.strip().count("\n") == 0 and "command not found" in r.stderr
    r = bufsim_cli(
        "collect", "--tracer", "kernel", "--keep-strace", tmp_path / "s", "-o", tmp_path / "x.csv", "--", "true"
    )
    assert r.returncode == 2 and "--keep-strace" in r.stderr and r.stderr.strip().count("\n") == 0


def test_not_root_is_a_one_line_error_naming_the_fallback(tmp_path):
    # Run as an unprivileged user: the tracer must refuse in one line and suggest --tracer strace.
    code = (
        "import sys\nfrom bufsim.cli import main\nsys.exit(main(['collect', '--tracer', 'kernel', "
        f"'-o', '{tmp_path}/x.csv', '--', 'true']))"
    )
    r = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert "root" in r.stderr and "--tracer strace" in r.stderr


def test_pagecache_reader_names_bad_rows(tmp_path):
    from bufsim import TraceFormatError

    bad = tmp_path / "bad.pagecache.csv"
    bad.write_text("time_us,pid,event,dev,ino,index,count,hits,detail\n1,2,lookup,fe00,5,zero,1,1,\n")
    with pytest.raises(TraceFormatError, match=r"bad.pagecache.csv:2"):
        read_pagecache(str(bad))


# ---------------------------------------------------------------------------------------------
# The replay on hand-written trace_pipe text (no kernel needed): descriptor tables, shared offsets,
# fork and threads, and the kernel's own file identity for reads.


def _line(comm: str, tid: int, tgid: int, t_us: int, body: str) -> str:
    return f"{comm:>16}-{tid:<7} ({tgid:>7}) [000] ..... {t_us // 1_000_000:5d}.{t_us % 1_000_000:06d}: {body}\n"


def _replay(tmp_path, lines: list[str], looks: dict, opened: dict | None = None, tracer_pid: int | None = None):
    """The traced tasks' events ``lines`` (see :func:`_line`) fed through a Replay that has the
    descriptor looks ``looks`` (and fanotify's records of opened files ``opened``)."""
    from bufsim.ktrace import Replay, parse_events
    from bufsim.syscalls import PathFilter

    raw = tmp_path / "tasks.txt"
    raw.write_text("".join(lines))
    rp = Replay(
        looks, PathFilter(), reads_only=False, stack_depth=0, stacks=False, opened=opened, tracer_pid=tracer_pid
    )
    for e in parse_events(str(raw)):
        rp.feed(e)
    return rp


def test_a_look_pairs_one_files_inode_with_its_own_path(tmp_path, monkeypatch):
    """A look at a descriptor reads the inode and the name of one open file; when fdinfo, read
    last, shows another inode, the number was closed and reused during the look: none is kept.
    (Reading the link's inode, then its name, once paired the loader's libc with the program's
    own data file when it reused the number in between.)"""
    import builtins

    from bufsim.ktrace import look_fd

    f = tmp_path / "f"
    f.write_bytes(b"x" * 100)
    fd = os.open(f, os.O_RDONLY)
    try:
        look = look_fd(os.getpid(), fd)
        st = os.stat(f)
        assert (look.dev, look.ino, look.size, look.path, look.accmode) == (
            st.st_dev,
            st.st_ino,
            100,
            os.fsencode(f),
            os.O_RDONLY,
        )
        real_open = builtins.open

        def reused(path, *args, **kwargs):
            if str(path) == f"/proc/{os.getpid()}/fdinfo/{fd}":
                return real_open(tmp_path / "fdinfo", *args, **kwargs)
            return real_open(path, *args, **kwargs)

        (tmp_path / "fdinfo").write_text(f"pos:\t0\nflags:\t0100000\nmnt_id:\t24\nino:\t{st.st_ino + 1}\n")
        monkeypatch.setattr(builtins, "open", reused)
        assert look_fd(os.getpid(), fd) is None
    finally:
        os.close(fd)
    assert look_fd(os.getpid(), fd) is None  # closed


def test_replay_follows_offsets_dup_fork_and_threads(tmp_path):
    from bufsim.ktrace import FdLook

    dev = os.makedev(254, 0)
    look = FdLook(dev, 77, 0o100644, 100_000, b"/data/f")
    other = FdLook(dev, 88, 0o100644, 10, b"/data/log")
    L = []
    t = 1_000_000
    # process 10 opens /data/f as fd 3, reads 4096 twice (offsets 0 and 4096), dups it to 4
    L.append(_line("p", 10, 10, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x80000, mode: 0)"))
    L.append(_line("p", 10, 10, t + 5, "sys_openat -> 0x3"))
    for i in range(2):
        L.append(_line("p", 10, 10, t + 10 + i * 10, "sys_read(fd: 0x3, buf: 0x1, count: 0x1000)"))
        L.append(
            _line(
                "p", 10, 10, t + 11 + i * 10, f"mm_filemap_get_pages: dev=254:0 ino=4d ofs={i * 4096}-{i * 4096 + 4095}"
            )
        )
        L.append(_line("p", 10, 10, t + 12 + i * 10, "sys_read -> 0x1000"))
    L.append(_line("p", 10, 10, t + 40, "sys_dup(fildes: 0x3)"))
    L.append(_line("p", 10, 10, t + 41, "sys_dup -> 0x4"))
    # fork: child 11 (a process) shares the open file description, so its read continues at 8192
    L.append(_line("p", 10, 10, t + 50, "sched_process_fork: comm=p pid=10 child_comm=p child_pid=11"))
    L.append(_line("p", 11, 11, t + 60, "sys_read(fd: 0x4, buf: 0x1, count: 0x2000)"))
    L.append(_line("p", 11, 11, t + 61, "sys_read -> 0x2000"))
    # the parent then reads at 16384 (offset shared with the child), after the child closed its fd 3
    L.append(_line("p", 11, 11, t + 62, "sys_close(fd: 0x3)"))
    L.append(_line("p", 11, 11, t + 63, "sys_close -> 0x0"))
    # (a short read: 4096 bytes asked, 256 left before the end of the file)
    L.append(_line("p", 10, 10, t + 70, "sys_read(fd: 0x3, buf: 0x1, count: 0x1000)"))
    L.append(_line("p", 10, 10, t + 72, "sys_read -> 0x100"))
    # a thread 12 of process 10 shares the table: pread at 500, then lseek + write on an O_APPEND file
    L.append(_line("p", 10, 10, t + 80, "sched_process_fork: comm=p pid=10 child_comm=p child_pid=12"))
    L.append(_line("p", 12, 10, t + 90, "sys_pread64(fd: 0x3, buf: 0x1, count: 0x10, pos: 0x1f4)"))
    L.append(_line("p", 12, 10, t + 91, "sys_pread64 -> 0x10"))
    L.append(_line("p", 12, 10, t + 100, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x441, mode: 0x1a4)"))
    L.append(_line("p", 12, 10, t + 101, "sys_openat -> 0x5"))
    L.append(_line("p", 12, 10, t + 110, "sys_write(fd: 0x5, buf: 0x1, count: 0x5)"))
    L.append(_line("p", 12, 10, t + 112, "sys_write -> 0x5"))
    # a failed read leaves no record
    L.append(_line("p", 10, 10, t + 120, "sys_read(fd: 0x3, buf: 0x1, count: 0x10)"))
    L.append(_line("p", 10, 10, t + 121, "sys_read -> 0xfffffffffffffff7"))
    looks = {(10, 3, t + 5): look, (12, 5, t + 101): other}
    rp = _replay(tmp_path, L, looks)
    got = [
        (tm - t, dur, pid, op, rp.name(f), off, size, ask, new)
        for tm, dur, pid, _, op, f, off, size, ask, new in rp.records
    ]
    fname, lname = f"{dev:x}:77:/data/f", f"{dev:x}:88:/data/log"
    # Only the first read through the open file description says it is new: the forked child
    # and the thread share it.
    assert got == [
        (10, 2, 10, "R", fname, 0, 4096, 4096, True),
        (20, 2, 10, "R", fname, 4096, 4096, 4096, False),
        (60, 1, 11, "R", fname, 8192, 8192, 8192, False),
        (70, 2, 10, "R", fname, 16384, 256, 4096, False),
        (90, 1, 10, "R", fname, 500, 16, 16, False),
        (110, 2, 10, "W", lname, 10, 5, 0, False),
    ]
    lookups = [r for r in rp.pagecache if r[2] == "lookup"]
    assert [(r[4], r[5], r[6], r[7]) for r in lookups] == [(77, 0, 1, 1), (77, 1, 1, 1)]


def test_a_drop_before_the_open_is_known_waits_for_the_first_read(tmp_path):
    """On a loaded machine the look at a new descriptor can come too late; the file is then named
    by its first read. fadvise(DONTNEED) of the whole file before that read is still a drop of
    its bytes at the call's time (its size from fanotify's record of the open), not left to the
    page deletions, which would read as a drop of the whole file with no size."""
    dev = os.makedev(254, 0)
    t = 2_000_000
    L = [
        _line("p", 40, 40, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x0, mode: 0)"),
        _line("p", 40, 40, t + 1, "sys_openat -> 0x3"),
        _line("p", 40, 40, t + 10, "sys_fadvise64(fd: 0x3, offset: 0x0, len: 0x0, advice: 0x4)"),
        _line("p", 40, 40, t + 11, "sys_fadvise64 -> 0x0"),
        _line("p", 40, 40, t + 20, "sys_pread64(fd: 0x3, buf: 0x1, count: 0x1000, pos: 0x0)"),
        _line("p", 40, 40, t + 21, "mm_filemap_get_pages: dev=254:0 ino=4d ofs=0-4095"),
        _line("p", 40, 40, t + 22, "sys_pread64 -> 0x1000"),
    ]
    rp = _replay(tmp_path, L, {}, opened={(dev, 0x4D): (b"/d/f", 1 << 20)})
    got = [
        (tm - t, op, rp.name(f), off, size)
        for tm, _, _, _, op, f, off, size, _, _ in sorted(rp.records, key=lambda r: r[0])
    ]
    name = f"{dev:x}:77:/d/f"
    assert got == [(10, "D", name, 0, 1 << 20), (20, "R", name, 0, 4096)]


def test_direct_io_bypasses_the_page_cache_and_is_left_out(tmp_path):
    """Reads and writes through an O_DIRECT descriptor (InnoDB's data and log files) go between
    the program and the disk without the page cache: counted, not written into the trace. The
    descriptor's offset still moves, and fcntl(F_SETFL) turns O_DIRECT off and on."""
    from bufsim.ktrace import FdLook

    dev = os.makedev(254, 0)
    looks = {(30, 3, 1_000_005): FdLook(dev, 77, 0o100644, 100_000, b"/data/ibdata1")}
    t = 1_000_000
    L = [
        _line("p", 30, 30, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x4002, mode: 0)"),
        _line("p", 30, 30, t + 5, "sys_openat -> 0x3"),
        _line("p", 30, 30, t + 10, "sys_read(fd: 0x3, buf: 0x1, count: 0x1000)"),
        _line("p", 30, 30, t + 11, "sys_read -> 0x1000"),
        _line("p", 30, 30, t + 20, "sys_pwrite64(fd: 0x3, buf: 0x1, count: 0x1000, pos: 0x2000)"),
        _line("p", 30, 30, t + 21, "sys_pwrite64 -> 0x1000"),
        # O_DIRECT off (flags: O_RDWR only): the next read goes through the cache, at offset 4096
        _line("p", 30, 30, t + 30, "sys_fcntl(fd: 0x3, cmd: 0x4, arg: 0x2)"),
        _line("p", 30, 30, t + 31, "sys_fcntl -> 0x0"),
        _line("p", 30, 30, t + 40, "sys_read(fd: 0x3, buf: 0x1, count: 0x1000)"),
        _line("p", 30, 30, t + 42, "sys_read -> 0x1000"),
        # and on again
        _line("p", 30, 30, t + 50, "sys_fcntl(fd: 0x3, cmd: 0x4, arg: 0x4002)"),
        _line("p", 30, 30, t + 51, "sys_fcntl -> 0x0"),
        _line("p", 30, 30, t + 60, "sys_read(fd: 0x3, buf: 0x1, count: 0x1000)"),
        _line("p", 30, 30, t + 61, "sys_read -> 0x1000"),
    ]
    rp = _replay(tmp_path, L, looks)
    assert [(op, off, size) for _, _, _, _, op, _, off, size, _, _ in rp.records] == [("R", 4096, 4096)]
    assert rp.stats.direct == 3 and rp.stats.reads == 1 and rp.stats.writes == 0


def test_replay_names_a_read_by_the_kernels_inode_when_the_open_was_missed(tmp_path):

    t = 5_000_000
    L = [
        _line("p", 20, 20, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x0, mode: 0)"),
        _line("p", 20, 20, t + 1, "sys_openat -> 0x3"),
        _line("p", 20, 20, t + 2, "sys_read(fd: 0x3, buf: 0x1, count: 0x200)"),
        _line("p", 20, 20, t + 3, "mm_filemap_add_to_page_cache: dev 254:0 ino 2a pfn=0x1 ofs=0 order=0"),
        _line("p", 20, 20, t + 4, "mm_filemap_get_pages: dev=254:0 ino=2a ofs=0-4095"),
        _line("p", 20, 20, t + 5, "sys_read -> 0x200"),
    ]
    rp = _replay(tmp_path, L, {})
    assert [(rp.name(r[5]), r[6], r[7]) for r in rp.records] == [(f"{os.makedev(254, 0):x}:42:?", 0, 512)]
    # the page was inserted during this read: the lookup is a miss
    assert [(r[2], r[7]) for r in rp.pagecache] == [("insert", ""), ("lookup", 0)]


def test_instances_of_a_killed_collector_are_removed_by_the_next_run(program, tmp_path):
    from bufsim.ktrace import find_tracefs

    root = find_tracefs()
    dead = 4_000_000  # above pid_max's default: no such process
    stale = Path(root) / "instances" / f"bufsim-{dead}-test-tasks"
    stale.mkdir()
    try:
        (stale / "events" / "sched" / "sched_process_fork" / "enable").write_text("1")
        exe, data = program
        collect_kernel([str(exe), str(data)], str(tmp_path / "t.csv"))
        assert not stale.exists()
    finally:
        if stale.exists():
            stale.rmdir()


def test_replay_writes_drops_for_truncation_and_removal(tmp_path):
    """O_TRUNC, ftruncate, a punched hole and fadvise(DONTNEED) become drop rows of their ranges at
    once; a removal names its file only through the pages it deletes: deletions outside reclaim
    become one whole-file drop per run, deletions inside a reclaim bracket stay evictions."""
    from bufsim.ktrace import FdLook, parse_events

    dev = os.makedev(254, 0)
    f = FdLook(dev, 77, 0o100644, 100_000, b"/data/f")
    g = FdLook(dev, 88, 0o100644, 8192, b"/data/g")
    t = 1_000_000
    L = [
        # open /data/f with O_WRONLY|O_TRUNC (0x201): a whole-file drop at the open
        _line("p", 10, 10, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x201, mode: 0)"),
        _line("p", 10, 10, t + 5, "sys_openat -> 0x3"),
        _line("p", 10, 10, t + 10, "sys_write(fd: 0x3, buf: 0x1, count: 0x3000)"),
        _line("p", 10, 10, t + 12, "sys_write -> 0x3000"),
        # ftruncate(3, 5000); a hole 8192..16383; fadvise(DONTNEED) of all; fallocate without a hole
        _line("p", 10, 10, t + 20, "sys_ftruncate(fd: 0x3, length: 0x1388)"),
        _line("p", 10, 10, t + 23, "sys_ftruncate -> 0x0"),
        _line("p", 10, 10, t + 30, "sys_fallocate(fd: 0x3, mode: 0x3, offset: 0x2000, len: 0x2000)"),
        _line("p", 10, 10, t + 31, "sys_fallocate -> 0x0"),
        _line("p", 10, 10, t + 40, "sys_fadvise64(fd: 0x3, offset: 0x0, len: 0x0, advice: 0x4)"),
        _line("p", 10, 10, t + 41, "sys_fadvise64 -> 0x0"),
        _line("p", 10, 10, t + 45, "sys_fallocate(fd: 0x3, mode: 0x0, offset: 0x0, len: 0x1000)"),
        _line("p", 10, 10, t + 46, "sys_fallocate -> 0x0"),
        # /data/g read, then unlinked (its pages go inside unlinkat), then truncate(PATH, 4096) of f
        _line("p", 10, 10, t + 50, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x0, mode: 0)"),
        _line("p", 10, 10, t + 51, "sys_openat -> 0x4"),
        _line("p", 10, 10, t + 52, "sys_read(fd: 0x4, buf: 0x1, count: 0x2000)"),
        _line("p", 10, 10, t + 53, "sys_read -> 0x2000"),
        _line("p", 10, 10, t + 54, "sys_close(fd: 0x4)"),
        _line("p", 10, 10, t + 55, "sys_close -> 0x0"),
        _line("p", 10, 10, t + 60, "sys_unlinkat(dfd: 0xffffff9c, pathname: 0x1, flag: 0x0)"),
        _line("p", 10, 10, t + 63, "sys_unlinkat -> 0x0"),
        _line("p", 10, 10, t + 70, "sys_truncate(path: 0x1, length: 0x1000)"),
        _line("p", 10, 10, t + 73, "sys_truncate -> 0x0"),
    ]
    looks = {(10, 3, t + 5): f, (10, 4, t + 51): g}
    rp = _replay(tmp_path, L, looks)

    def delete(tid: int, at: int, ino: int, index: int) -> str:
        return _line(
            "p",
            tid,
            tid,
            at,
            f"mm_filemap_delete_from_page_cache: dev 254:0 ino {ino:x} pfn=0x1 ofs={index * 4096} order=0",
        )

    S = [
        delete(10, t + 22, 77, 2),  # inside ftruncate: its drop is written already
        delete(10, t + 61, 88, 0),  # inside unlinkat: g's pages, one run
        delete(10, t + 61, 88, 1),
        _line("p", 10, 10, t + 62, "mm_vmscan_memcg_reclaim_begin: order=0 gfp_flags=GFP_KERNEL"),
        delete(10, t + 62, 77, 0),  # reclaim
        _line("p", 10, 10, t + 62, "mm_vmscan_memcg_reclaim_end: nr_reclaimed=1"),
        delete(10, t + 71, 77, 1),  # inside truncate(PATH): a drop from its length
        delete(99, t + 80, 77, 5),  # another task (kswapd): reclaim
    ]
    sysraw = tmp_path / "system.txt"
    sysraw.write_text("".join(S))
    system = list(parse_events(str(sysraw)))
    dropped = rp.classify_deletions(system)
    assert dropped == {0, 1, 2, 6}
    fname, gname = f"{dev:x}:77:/data/f", f"{dev:x}:88:/data/g"
    got = sorted((tm - t, op, rp.name(x), off, size) for tm, _, _, _, op, x, off, size, _, _ in rp.records)
    assert got == [
        (0, "D", fname, 0, 0),
        (10, "W", fname, 0, 12288),
        (20, "D", fname, 5000, 0),
        (30, "D", fname, 8192, 8192),
        (40, "D", fname, 0, 5000),
        (52, "R", gname, 0, 8192),
        (61, "D", gname, 0, 0),
        (70, "D", fname, 4096, 0),
    ]
    assert rp.stats.drops == 6


def test_willneed_and_readahead_calls_become_hints(tmp_path):
    """PostgreSQL asks for each heap page it will read with fadvise(WILLNEED): a hint row of the
    range (length 0: to the end of the file); readahead(2) is the same request by another name."""
    from bufsim.ktrace import FdLook

    dev = os.makedev(254, 0)
    f = FdLook(dev, 77, 0o100644, 100_000, b"/data/f")
    t = 1_000_000
    L = [
        _line("p", 10, 10, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x0, mode: 0)"),
        _line("p", 10, 10, t + 5, "sys_openat -> 0x3"),
        _line("p", 10, 10, t + 10, "sys_fadvise64(fd: 0x3, offset: 0x2000, len: 0x2000, advice: 0x3)"),
        _line("p", 10, 10, t + 11, "sys_fadvise64 -> 0x0"),
        _line("p", 10, 10, t + 20, "sys_fadvise64(fd: 0x3, offset: 0x0, len: 0x0, advice: 0x1)"),
        _line("p", 10, 10, t + 21, "sys_fadvise64 -> 0x0"),
        _line("p", 10, 10, t + 30, "sys_readahead(fd: 0x3, offset: 0x1000, count: 0x0)"),
        _line("p", 10, 10, t + 31, "sys_readahead -> 0x0"),
    ]
    rp = _replay(tmp_path, L, {(10, 3, t + 5): f})
    got = sorted((tm - t, op, off, size) for tm, _, _, _, op, _, off, size, _, _ in rp.records)
    assert got == [(10, "H", 8192, 8192), (30, "H", 4096, 0)]
    assert rp.stats.hints == 2 and rp.stats.drops == 0


def test_a_stale_look_at_an_appending_open_truncates_nothing(tmp_path):
    """A recipe's shell sends one command to a file with `>` (O_TRUNC), closes it, then appends
    to a 16 KiB file with `>>` under the same number (kbuild's `>> .o.cmd`). Both are write-only;
    a look taken after the second open sees the appended file, and only its O_APPEND gives it
    away: the appended file must not be truncated, and the append goes to its end."""
    from bufsim.ktrace import FdLook

    dev = os.makedev(254, 0)
    log = FdLook(dev, 77, 0o100644, 16384, b"/data/x.cmd", accmode=1, append=True)
    t = 1_000_000
    L = [
        _line("sh", 10, 10, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x241, mode: 0x1b6)"),
        _line("sh", 10, 10, t + 1, "sys_openat -> 0x3"),
        _line("sh", 10, 10, t + 4, "sys_close(fd: 3)"),
        _line("sh", 10, 10, t + 5, "sys_close -> 0x0"),
        _line("sh", 10, 10, t + 10, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x441, mode: 0x1b6)"),
        _line("sh", 10, 10, t + 11, "sys_openat -> 0x3"),
        _line("sh", 10, 10, t + 20, "sys_write(fd: 3, buf: 0x1, count: 0x33)"),
        _line("sh", 10, 10, t + 21, "sys_write -> 0x33"),
    ]
    looks = {(10, 3, t + 1): log, (10, 3, t + 11): log}
    rp = _replay(tmp_path, L, looks)
    got = [(tm - t, op, f.ino, off, size) for tm, _, _, _, op, f, off, size, _, _ in rp.records]
    assert got == [(20, "W", 77, 16384, 51)]


def test_a_stale_look_is_not_taken_and_a_write_is_named_by_its_pages(tmp_path):
    """A shell's redirection opens its target with O_TRUNC, dup2s it onto standard output and
    closes it; the command then opens another file read-only under the freed number. A look
    taken that late sees the other file (its access mode gives it away): it must not be
    truncated. The write through standard output is named by the pages it puts in the cache."""
    from bufsim.ktrace import FdLook

    dev = os.makedev(254, 0)
    src = FdLook(dev, 77, 0o100644, 8192, b"/data/src", accmode=0)
    t = 1_000_000
    L = [
        _line("sh", 10, 10, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x241, mode: 0x1b6)"),
        _line("sh", 10, 10, t + 1, "sys_openat -> 0x3"),
        _line("sh", 10, 10, t + 2, "sys_dup2(oldfd: 3, newfd: 1)"),
        _line("sh", 10, 10, t + 3, "sys_dup2 -> 0x1"),
        _line("sh", 10, 10, t + 4, "sys_close(fd: 3)"),
        _line("sh", 10, 10, t + 5, "sys_close -> 0x0"),
        _line("cat", 10, 10, t + 10, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x0, mode: 0)"),
        _line("cat", 10, 10, t + 11, "sys_openat -> 0x3"),
        _line("cat", 10, 10, t + 20, "sys_read(fd: 3, buf: 0x1, count: 0x2000)"),
        _line("cat", 10, 10, t + 21, "mm_filemap_get_pages: dev=254:0 ino=4d ofs=0-8191"),
        _line("cat", 10, 10, t + 22, "sys_read -> 0x2000"),
        _line("cat", 10, 10, t + 30, "sys_write(fd: 1, buf: 0x1, count: 0x2000)"),
        _line("cat", 10, 10, t + 31, "mm_filemap_add_to_page_cache: dev 254:0 ino 58 pfn=0x1 ofs=0 order=0"),
        _line("cat", 10, 10, t + 32, "mm_filemap_add_to_page_cache: dev 254:0 ino 58 pfn=0x2 ofs=4096 order=0"),
        _line("cat", 10, 10, t + 33, "sys_write -> 0x2000"),
    ]
    # The look at the redirection's number came after cat had reopened it: it shows the source.
    looks = {(10, 3, t + 1): src, (10, 3, t + 11): src}
    rp = _replay(tmp_path, L, looks)
    got = [(tm - t, op, f.ino, off, size) for tm, _, _, _, op, f, off, size, _, _ in rp.records]
    # The target (inode 0x58) is truncated at its open and written; the source only read.
    assert sorted(got) == [(0, "D", 88, 0, 0), (20, "R", 77, 0, 8192), (30, "W", 88, 0, 8192)]


def test_a_removed_files_pages_the_tracer_lets_go_of_are_a_drop(tmp_path):
    """fanotify's event holds the file it names until the tracer reads it: on a busy machine `rm`
    removes a file while the tracer still holds it, no page goes at the removal, and the kernel
    deletes them when the tracer closes its reference, in the tracer's process. Those deletions
    are the removal's drop (else the model keeps the pages, and drops them at the next O_TRUNC of
    a new file that ext4 gave the same inode); another untraced task's (kswapd's) stay evictions."""
    from bufsim.ktrace import FdLook, parse_events

    dev = os.makedev(254, 0)
    g = FdLook(dev, 88, 0o100644, 8192, b"/data/g")
    t = 1_000_000
    L = [
        _line("cat", 10, 10, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x0, mode: 0)"),
        _line("cat", 10, 10, t + 1, "sys_openat -> 0x3"),
        _line("cat", 10, 10, t + 2, "sys_read(fd: 0x3, buf: 0x1, count: 0x2000)"),
        _line("cat", 10, 10, t + 3, "sys_read -> 0x2000"),
        _line("rm", 11, 11, t + 10, "sys_unlinkat(dfd: 0xffffff9c, pathname: 0x1, flag: 0x0)"),
        _line("rm", 11, 11, t + 11, "sys_unlinkat -> 0x0"),
    ]
    tracer = 4242
    rp = _replay(tmp_path, L, {(10, 3, t + 1): g}, tracer_pid=tracer)

    def delete(comm: str, tid: int, tgid: int, at: int, index: int) -> str:
        body = f"mm_filemap_delete_from_page_cache: dev 254:0 ino 58 pfn=0x1 ofs={index * 4096} order=0"
        return _line(comm, tid, tgid, at, body)

    S = [
        delete("kswapd0", 99, 99, t + 12, 1),  # reclaim by another task: an eviction
        delete("python3", tracer + 1, tracer, t + 20, 0),  # the tracer's thread lets go: a drop
        delete("python3", tracer + 1, tracer, t + 20, 1),
    ]
    sysraw = tmp_path / "system.txt"
    sysraw.write_text("".join(S))
    assert rp.classify_deletions(list(parse_events(str(sysraw)))) == {1, 2}
    got = sorted((tm - t, pid, op, x.ino) for tm, _, pid, _, op, x, _, _, _, _ in rp.records)
    assert got == [(2, 10, "R", 88), (20, 10, "D", 88)]


def test_a_look_taken_after_the_number_was_reopened_write_only_is_not_taken(tmp_path, monkeypatch):
    """A shell runs `cat a > /dev/null` with the redirection in the shell itself: it opens
    /dev/null write-only with O_TRUNC, dup2s it onto standard output, forks cat and opens the next
    command's `> out` under the same number, write-only with O_TRUNC as well. On a loaded machine
    the look at the first open came after the second (its access mode and O_APPEND agree), so
    cat's writes to /dev/null went to `out`, and /dev/null's O_TRUNC dropped `out`'s pages. A
    look that ends after another open returned the number in that process is not taken."""
    from bufsim import ktrace
    from bufsim.ktrace import FdLook, FdWatcher

    dev = os.makedev(254, 0)
    out = FdLook(dev, 88, 0o100644, 0, b"/data/out", accmode=1, append=False)
    t = 1_000_000
    shell = [
        _line("sh", 10, 10, t, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x241, mode: 0x1b6)"),
        _line("sh", 10, 10, t + 1, "sys_openat -> 0x3"),
        _line("sh", 10, 10, t + 2, "sys_fcntl(fd: 0x1, cmd: 0x0, arg: 0xa)"),
        _line("sh", 10, 10, t + 3, "sys_fcntl -> 0xa"),
        _line("sh", 10, 10, t + 4, "sys_dup2(oldfd: 3, newfd: 1)"),
        _line("sh", 10, 10, t + 5, "sys_dup2 -> 0x1"),
        _line("sh", 10, 10, t + 6, "sys_close(fd: 3)"),
        _line("sh", 10, 10, t + 7, "sys_close -> 0x0"),
    ]
    child = [
        _line("sh", 10, 10, t + 8, "sched_process_fork: comm=sh pid=10 child_comm=sh child_pid=11"),
        _line("sh", 10, 10, t + 9, "sys_dup2(oldfd: 10, newfd: 1)"),
        _line("sh", 10, 10, t + 10, "sys_dup2 -> 0x1"),
        _line("cat", 11, 11, t + 20, "sys_write(fd: 1, buf: 0x1, count: 0x2000)"),
        _line("cat", 11, 11, t + 21, "sys_write -> 0x2000"),
        _line("sh", 10, 10, t + 30, "sys_openat(dfd: 0xffffff9c, filename: 0x1, flags: 0x241, mode: 0x1b6)"),
        _line("sh", 10, 10, t + 31, "sys_openat -> 0x3"),
    ]
    # Every look sees `out`, and ends 50 us after the first open: after the second one.
    monkeypatch.setattr(ktrace, "look_fd", lambda tid, fd: FdLook(**vars(out)))
    monkeypatch.setattr(ktrace.time, "clock_gettime_ns", lambda clock: (t + 50) * 1000)
    watcher = FdWatcher()
    watcher.on_chunk("".join(shell + child).encode())
    looks = watcher.fresh_looks()
    # The shell restored its standard output (dup2 onto 1) before the look at the redirection.
    assert looks[(10, 3, t + 1)] is None and looks[(10, 1, t + 5)] is None
    assert looks[(10, 3, t + 31)] is not None  # no open after it: taken
    rp = _replay(tmp_path, shell + child, looks)
    got = [(tm - t, op, f.ino) for tm, _, _, _, op, f, _, _, _, _ in rp.records]
    assert got == [(30, "D", 88)]  # only `out`'s own O_TRUNC; nothing of cat's writes
    # The looks as they were taken make the mistake this guards against.
    stale = _replay(tmp_path, shell + child, watcher.looks)
    assert sorted((tm - t, op) for tm, _, _, _, op, _, _, _, _, _ in stale.records) == [(0, "D"), (20, "W"), (30, "D")]


def test_a_read_back_larger_than_the_memory_stops_with_an_error(tmp_path, monkeypatch):
    # The four-program mix at a quarter of its footprint recorded 5 GB of each event text, and
    # reading them back once went past the machine's memory: the kernel's OOM killer ended it.
    # The size is now checked first, and the error says what to do.
    from bufsim import ktrace
    from bufsim.collect import CollectError

    tasks, system = tmp_path / "tasks.txt", tmp_path / "system.txt"
    tasks.write_bytes(b"x" * 1000)
    system.write_bytes(b"y" * 1000)
    need = ktrace.READBACK_PER_TASK_BYTE * 1000 + ktrace.READBACK_PER_SYSTEM_BYTE * 1000
    monkeypatch.setattr(ktrace, "mem_available", lambda: int(need) + 1)
    ktrace.check_readback_memory(str(tasks), str(system))
    monkeypatch.setattr(ktrace, "mem_available", lambda: int(need) - 1)
    with pytest.raises(CollectError) as e:
        ktrace.check_readback_memory(str(tasks), str(system))
    msg = str(e.value)
    assert e.value.exit_status == 2 and "--timeout" in msg and "available" in msg and "\n" not in msg


def test_a_dump_that_would_fill_the_disk_stops_the_command(tmp_path, monkeypatch):
    # Free space below the floor at the first look: the command is stopped at once, one error
    # says why, and nothing is left behind (dump, instances).
    monkeypatch.setattr(ktrace, "DISK_FLOOR", 1 << 62)
    monkeypatch.setattr(ktrace, "DISK_CHECK_BYTES", 1)
    monkeypatch.setattr(ktrace.tempfile, "tempdir", str(tmp_path))
    before = our_instances()
    started = time.monotonic()
    with pytest.raises(ktrace.CollectError, match="filled the disk to its last") as e:
        collect_kernel(["sh", "-c", "while :; do cat /etc/passwd > /dev/null; done"], str(tmp_path / "t.csv"))
    assert "TMPDIR" in str(e.value) and len(str(e.value).splitlines()) == 1
    assert time.monotonic() - started < 30
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(ktrace.TMP_PREFIX)]
    assert our_instances() <= before


def test_a_killed_collections_dump_goes_with_its_instances(tmp_path, monkeypatch):
    # A collection killed outright leaves its instances and its event dump; the next one removes both.
    ktrace.find_tracefs()  # mounted if absent
    monkeypatch.setattr(ktrace.tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    dump = tmp_path / (ktrace.TMP_PREFIX + "abcd1234")
    dump.mkdir()
    (dump / "tasks.txt").write_text("x")
    name = f"bufsim-{dead.pid}-abcd1234-tasks"
    os.mkdir(os.path.join(TRACEFS, "instances", name))
    assert name in ktrace.remove_stale_instances(TRACEFS)
    assert not dump.exists()

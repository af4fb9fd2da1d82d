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


def data_rows(trace: Path, data: Path) -> list[list[str]]:
    rows = [line.split(",") for line in trace.read_text().splitlines() if not line.startswith(("#", "time_us"))]
    return [r for r in rows if r[5].endswith(":" + str(data))]


def test_known_preads_and_the_kernels_page_cache(program, tmp_path):
    exe, data = program
    before = our_instances()
    out = tmp_path / "t.csv"
    r = collect_kernel([str(exe), str(data)], str(out))
    assert r.exit_status == 0
    assert our_instances() == before  # nothing left behind
    st = os.stat(data)
    ident = f"{st.st_dev:x}:{st.st_ino}:{data}"
    rows = data_rows(out, data)
    assert [(r[4], r[5], int(r[6]), int(r[7])) for r in rows] == [
        ("R", ident, 0, 4096), ("R", ident, 65536, 100), ("R", ident, 204800, 8192),
        ("R", ident, 0, 4096), ("R", ident, 65536, 100)]
    times = [int(r[0]) for r in rows]
    assert times == sorted(times) and all(int(r[1]) >= 0 for r in rows)
    assert len({r[2] for r in rows}) == 1
    assert len(Trace(str(out))) == len([x for x in out.read_text().splitlines()
                                         if x and not x.startswith(("#", "time_us"))])

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
    p = subprocess.Popen([sys.executable, "-m", "bufsim", "collect", "--tracer", "kernel", "-o", str(out),
                          "--", str(exe), str(data), "sleep"], stderr=subprocess.PIPE, text=True)
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
    r = bufsim_cli("collect", "--tracer", "kernel", "--keep-strace", tmp_path / "s", "-o", tmp_path / "x.csv",
                   "--", "true")
    assert r.returncode == 2 and "--keep-strace" in r.stderr and r.stderr.strip().count("\n") == 0


def test_not_root_is_a_one_line_error_naming_the_fallback(tmp_path):
    # Run as an unprivileged user: the tracer must refuse in one line and suggest --tracer strace.
    code = ("import sys\nfrom bufsim.cli import main\nsys.exit(main(['collect', '--tracer', 'kernel', "
            f"'-o', '{tmp_path}/x.csv', '--', 'true']))")
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert "root" in r.stderr and "--tracer strace" in r.stderr


def test_pagecache_reader_names_bad_rows(tmp_path):
    from bufsim import TraceFormatError

    bad = tmp_path / "bad.pagecache.csv"
    bad.write_text("time_us,pid,event,dev,ino,index,count,hits,detail\n1,2,lookup,fe00,5,zero,1,1,\n")
    with pytest.raises(TraceFormatError, match=r"bad.pagecache.csv:2"):
        read_pagecache(str(bad))

"""bufsim collect on real programs under strace: a C program with known I/O gives exactly the
expected records with two stable program contexts; failing and killed commands leave a valid trace
and their exit status. Tests that run strace skip only when strace is absent (`make test` installs
it)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bufsim._core import Trace
from bufsim.collect import collect
from conftest import bufsim_cli

needs_strace = pytest.mark.skipif(
    shutil.which("strace") is None, reason="strace is not installed (make test installs it: apt-get install strace)"
)

KNOWN_IO = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[16384];

/* Two call sites, each reached twice from the same loop (-O0: not unrolled): two contexts. */
__attribute__((noinline)) static void site_a(int fd, off_t off, size_t n) {
    if (pread(fd, buf, n, off) < 0) _exit(9);
}
__attribute__((noinline)) static void site_b(int fd, off_t off, size_t n) {
    lseek(fd, off, SEEK_SET);
    if (read(fd, buf, n) < 0) _exit(9);
}

static const off_t A_OFF[2] = {8192, 40000};
static const size_t A_LEN[2] = {4096, 8192};
static const off_t B_OFF[2] = {100, 60000};
static const size_t B_LEN[2] = {50, 10000};  /* the second stops at the end of the file: 5536 */

int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 8;
    for (int i = 0; i < 2; i++) {
        site_a(fd, A_OFF[i], A_LEN[i]);
        site_b(fd, B_OFF[i], B_LEN[i]);
    }
    close(fd);
    if (argc > 2 && strcmp(argv[2], "kill") == 0) raise(SIGKILL);
    if (argc > 2 && strcmp(argv[2], "sleep") == 0) sleep(60);
    return argc > 2 ? atoi(argv[2]) : 0;
}
"""

EXPECTED = [("R", 8192, 4096, "a"), ("R", 100, 50, "b"), ("R", 40000, 8192, "a"), ("R", 60000, 5536, "b")]


@pytest.fixture(scope="module")
def known_io(tmp_path_factory):
    d = tmp_path_factory.mktemp("known_io")
    (d / "known_io.c").write_text(KNOWN_IO)
    subprocess.run(["gcc", "-O0", "-o", str(d / "known_io"), str(d / "known_io.c")], check=True)
    data = d / "data.bin"
    data.write_bytes(bytes(range(256)) * 256)  # 65536 bytes
    return d / "known_io", data


def body(path: Path) -> list[list[str]]:
    lines = [l for l in path.read_text().splitlines() if not l.startswith("#")]
    assert lines[0] == "time_us,dur_us,pid,ctx,op,file,offset,size"
    return [l.split(",") for l in lines[1:]]


@needs_strace
def test_known_io_gives_exactly_the_expected_records_with_two_stable_contexts(known_io, tmp_path):
    prog, data = known_io
    contexts = []
    for run in range(2):
        out = tmp_path / f"run{run}.csv"
        res = collect([str(prog), str(data)], str(out), include=[str(data.parent)])
        assert res.exit_status == 0 and res.outcome == "exited with status 0"
        rows = body(out)
        s = os.stat(data)
        assert [r[5] for r in rows] == [f"{s.st_dev:x}:{s.st_ino}:{data}"] * 4
        assert [(r[4], int(r[6]), int(r[7])) for r in rows] == [e[:3] for e in EXPECTED]
        ctx = {site: row[3] for (*_, site), row in zip(EXPECTED, rows)}
        assert [r[3] for r in rows] == [ctx[e[3]] for e in EXPECTED]
        assert ctx["a"] != ctx["b"] and "0" not in ctx.values()
        assert len({r[2] for r in rows}) == 1
        times = [int(r[0]) for r in rows]
        assert times == sorted(times)
        contexts.append(ctx)
        assert len(Trace(str(out))) == 4
    assert contexts[0] == contexts[1]


@needs_strace
def test_stack_depth_and_no_stacks(known_io, tmp_path):
    prog, data = known_io
    out = tmp_path / "t.csv"
    collect([str(prog), str(data)], str(out), include=[str(data.parent)], stacks=False)
    assert {r[3] for r in body(out)} == {"0"}
    # One frame: the innermost program frames differ (site_a, site_b) so two contexts remain.
    collect([str(prog), str(data)], str(out), include=[str(data.parent)], stack_depth=1)
    assert len({r[3] for r in body(out)}) == 2


@needs_strace
def test_a_failing_command_gives_its_status_and_a_valid_trace(known_io, tmp_path):
    prog, data = known_io
    out = tmp_path / "t.csv"
    p = bufsim_cli("collect", "-o", out, "--include", data.parent, "--", prog, data, "3")
    assert p.returncode == 3, p.stderr
    assert "the command exited with status 3" in p.stderr
    assert len(Trace(str(out))) == 4
    assert out.read_text().splitlines()[-1] == "# end: the command exited with status 3"


@needs_strace
def test_a_killed_command_leaves_a_valid_truncated_trace(known_io, tmp_path):
    prog, data = known_io
    out = tmp_path / "t.csv"
    p = bufsim_cli("collect", "-o", out, "--no-libs", "--", prog, data, "kill")
    assert p.returncode == 128 + signal.SIGKILL, p.stderr
    assert "was killed by SIGKILL" in p.stderr
    assert len(Trace(str(out))) == 4


@needs_strace
def test_sigterm_to_collect_reaches_the_command_and_the_trace_stays_valid(known_io, tmp_path):
    prog, data = known_io
    out = tmp_path / "t.csv"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bufsim",
            "collect",
            "-o",
            str(out),
            "--no-stacks",
            "--include",
            str(data.parent),
            "--",
            str(prog),
            str(data),
            "sleep",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    # Wait (bounded) until the four reads are in: then the program sleeps.
    for _ in range(600):
        if out.exists() and out.read_text().count("\n") >= 8:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert "was killed by SIGTERM" in err
    assert len(Trace(str(out))) == 4


def test_missing_strace_says_how_to_install_it(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # a PATH with no strace on it
    p = subprocess.run(
        [sys.executable, "-m", "bufsim", "collect", "-o", str(tmp_path / "t.csv"), "--", "/bin/true"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "bufsim: error: strace is not installed; install it (Debian/Ubuntu: "
        "`apt-get install strace`) and run bufsim collect again"
    )


@needs_strace
def test_command_not_found_and_not_executable(tmp_path):
    p = bufsim_cli("collect", "-o", tmp_path / "t.csv", "--", "no-such-command-here")
    assert (p.returncode, p.stderr.strip()) == (127, "bufsim: error: no-such-command-here: command not found")
    f = tmp_path / "plain.txt"
    f.write_text("x")
    p = bufsim_cli("collect", "-o", tmp_path / "t.csv", "--", f)
    assert p.returncode == 126 and "not an executable file" in p.stderr
    p = bufsim_cli("collect", "-o", tmp_path / "t.csv")
    assert p.returncode == 2 and "give the command to trace after --" in p.stderr


@needs_strace
def test_a_kept_strace_log_converts_to_the_same_records(known_io, tmp_path):
    prog, data = known_io
    live, log, again = tmp_path / "live.csv", tmp_path / "strace.log", tmp_path / "again.csv"
    p = bufsim_cli("collect", "-o", live, "--include", data.parent, "--keep-strace", log, "--", prog, data)
    assert p.returncode == 0, p.stderr
    assert " > " in log.read_text()  # the -k frames are in the raw log
    p = bufsim_cli("collect", "-o", again, "--include", data.parent, "--from-strace", log)
    assert p.returncode == 0, p.stderr
    assert body(again) == body(live)

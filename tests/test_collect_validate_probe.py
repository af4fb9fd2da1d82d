"""`bufsim collect` with inputs the other tests do not try: trace paths that cannot be written
(refused on one line before the command runs, never a hang, never an input destroyed), timeouts
that are no time, and the kernel tracer on programs that move file data with sendfile, splice
and copy_file_range given offset pointers. The kernel tracer's tests need root; they mount
tracefs when it is absent (as the tracer does) and check that no instance is left behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli import check_error

needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the kernel tracer needs root (CI runs as root)")


def _collect(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    """`bufsim collect ARGS`, failing the test instead of hanging."""
    return subprocess.run(
        [sys.executable, "-m", "bufsim", "collect", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


@needs_strace
@pytest.mark.parametrize("tracer", ["strace", "kernel"])
def test_a_trace_path_that_cannot_be_written_is_refused_before_the_command_runs(tmp_path, tracer):
    marker = tmp_path / "ran"
    run = ["--", "touch", marker]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for out, fragment in [
        (tmp_path / "missing" / "t.csv", "no such directory for -o"),
        (tmp_path, "is a directory"),
        # Nobody reads the pipe: opening it for writing would wait forever.
        (fifo, "is a named pipe that no program is reading"),
    ]:
        check_error(
            _collect("--tracer", tracer, "-o", out, *run), str(out.parent if "missing" in str(out) else out), fragment
        )
        assert not marker.exists(), out


@needs_strace
def test_converting_a_log_never_writes_over_the_log(tmp_path):
    log = tmp_path / "s.log"
    log.write_text(
        '123 1700000000.000001 openat(AT_FDCWD</>, "/etc/hostname", O_RDONLY) = 3</etc/hostname> <0.000010>\n'
    )
    before = log.read_bytes()
    check_error(_collect("--from-strace", log, "-o", log), "is the strace log to convert")
    assert log.read_bytes() == before
    link = tmp_path / "t.csv"
    link.symlink_to(log)
    check_error(_collect("--from-strace", log, "-o", link), "is the strace log to convert")
    assert log.read_bytes() == before


@needs_strace
def test_the_kept_strace_log_and_the_trace_cannot_be_one_file(tmp_path):
    marker = tmp_path / "ran"
    out = tmp_path / "t.csv"
    check_error(_collect("-o", out, "--keep-strace", out, "--", "touch", marker), "is the --keep-strace file")
    check_error(
        _collect("-o", out, "--keep-strace", tmp_path / "no" / "s.log", "--", "touch", marker),
        "no such directory for --keep-strace",
    )
    assert not marker.exists()
    assert not list(Path("/tmp").glob(f"bufsim-collect-*/{os.getpid()}"))


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf"])
def test_a_timeout_that_is_no_time_is_refused(tmp_path, timeout):
    marker = tmp_path / "ran"
    p = _collect("--tracer", "kernel", f"--timeout={timeout}", "-o", tmp_path / "t.csv", "--", "touch", marker)
    check_error(p, f"--timeout {float(timeout)} is not a time to wait")
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------
# The kernel tracer and splicing calls

SPLICING = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

static char buf[8192];

int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int p[2];
    if (fd < 0 || out < 0 || pipe(p) < 0) return 8;
    if (strcmp(argv[3], "unlink") == 0) {
        if (unlink(argv[1]) < 0) return 9;  /* read below through the open descriptor */
    } else if (strcmp(argv[3], "sendfile") == 0) {
        off_t off = 40960;  /* a pointer: the descriptor's own offset stays at 0 */
        if (sendfile(out, fd, &off, 8192) != 8192) return 9;
    } else if (strcmp(argv[3], "copy") == 0) {
        loff_t off = 40960;
        if (copy_file_range(fd, &off, out, NULL, 8192, 0) != 8192) return 9;
    } else {
        loff_t off = 40960;
        if (splice(fd, &off, p[1], NULL, 8192, 0) != 8192) return 9;
    }
    if (read(fd, buf, 4096) != 4096) return 10;  /* at the descriptor's offset: 0 */
    return 0;
}
"""


@pytest.fixture(scope="module")
def splicing(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("splicing")
    (d / "splicing.c").write_text(SPLICING)
    subprocess.run(["gcc", "-O1", "-o", str(d / "splicing"), str(d / "splicing.c")], check=True)
    data = d / "data.bin"
    data.write_bytes(os.urandom(1 << 17))
    return d / "splicing", data


def _instances() -> set[str]:
    base = Path("/sys/kernel/tracing/instances")
    return {p.name for p in base.iterdir() if p.name.startswith("bufsim-")} if base.exists() else set()


@needs_root
# "unlink" (a file deleted right after its open, then read) is left out: whether the tracer's look
# at the descriptor comes before the unlink is a race, and a clean CI run lost it once (no read
# was named after the file). The naming rule itself is `syscalls.fd_link_path`.
@pytest.mark.parametrize("how", ["sendfile", "copy", "splice"])
def test_the_kernel_tracer_reads_a_splicing_call_at_its_offset_pointer(splicing, tmp_path, how):
    """(and names a file deleted while open by its path, without the kernel's " (deleted)")"""
    exe, source = splicing
    data = tmp_path / "data.bin"
    shutil.copyfile(source, data)
    before = _instances()
    trace = tmp_path / "t.csv"
    p = _collect("--tracer", "kernel", "--no-stacks", "-o", trace, "--", exe, data, tmp_path / "copy.bin", how)
    assert p.returncode == 0, p.stderr
    assert _instances() == before
    rows = [l.split(",") for l in trace.read_text().splitlines() if not l.startswith(("#", "time_us"))]
    reads = [(int(r[6]), int(r[7])) for r in rows if r[4] == "R" and r[5].endswith(":" + str(data))]
    # The spliced bytes 40960..49151 (in pieces or whole), then the read at the untouched offset 0.
    assert reads[-1] == (0, 4096), reads
    spliced = reads[:-1]
    assert spliced and spliced[0][0] == 40960 and sum(n for _, n in spliced) == 8192, reads


def test_validate_names_a_missing_command_before_dropping_the_page_cache(monkeypatch):
    from bufsim import validate as v
    from bufsim.collect import CollectError

    dropped = []
    monkeypatch.setattr(v, "drop_caches", lambda: dropped.append(1))
    monkeypatch.setattr(v, "check_environment", lambda: pytest.fail("looked at root, tracefs and cgroups first"))
    with pytest.raises(CollectError, match="bufsim-no-such-command: command not found"):
        v.validate(["bufsim-no-such-command"], [64 << 20])
    assert not dropped

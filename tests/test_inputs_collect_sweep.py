"""Bad input to `collect --from-strace`, `sweep --config`, `workloads` and `generate`: a damaged
strace log, a named pipe nobody writes to yet, a wrong value in an experiment file, a manifest
naming a trace that is gone. Each is refused on one line (exit status 2) naming the file, or said
on one line, and nothing waits without a word."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import threading

import pytest
from conftest import GREP, ROOT, block_trace, bufsim_cli
from test_cli import check_error

from bufsim.collect import CollectError, collect_from_log


def _log(path, *lines: str):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _read(fd_path, size: int, ret: str, offset: str | None = None) -> str:
    """One strace line of a read (a pread64 with ``offset``) of the file ``fd_path`` as fd 3."""
    if offset is None:
        return f'1234 1700000000.000000 read(3<{fd_path}>, "abc", {size}) = {ret} <0.000010>'
    return f'1234 1700000000.000000 pread64(3<{fd_path}>, "abc", {size}, {offset}) = {ret} <0.000010>'


FRAME = " > /usr/lib/libc.so.6(read+0x12) [0x1234]"


@pytest.mark.parametrize(
    "lines, where, fragment",
    [
        (lambda f: [_read(f, 4096, "99999999999999999999999")], 1, "read returned 99999999999999999999999"),
        (lambda f: [_read(f, 4096, "3", "-1")], 1, "pread64 at offset -1 succeeded"),
        (lambda f: [_read(f, 4096, "3", "99999999999999999999999")], 1, "more than 2^64-1"),
        # offset + size past 2^64-1: found when the record is written, named by the call's line.
        (
            lambda f: [_read(f, 10, "3", "0"), FRAME, _read(f, 100, "100", "18446744073709551610"), FRAME, FRAME],
            3,
            "ends past byte 2^64-1",
        ),
        (lambda f: [_read(f, 4096, "3", "0").replace("1234", "99999999999", 1)], 1, "does not fit in 32 bits"),
    ],
)
def test_collect_refuses_a_damaged_strace_log(tmp_path, lines, where, fragment):
    data = tmp_path / "data"
    data.write_text("abc")
    log = _log(tmp_path / "st.log", *lines(data))
    out = tmp_path / "c.csv"
    p = bufsim_cli("collect", "--from-strace", log, "-o", out)
    check_error(p, f"st.log:{where}: ", fragment, "the strace log is damaged")
    assert not out.exists()  # no trace cut at the damage


def test_collect_keeps_what_the_kernel_allows(tmp_path):
    # preadv2 and pwritev2 take -1 for the descriptor's offset.
    data = tmp_path / "data"
    data.write_text("abc")
    log = _log(
        tmp_path / "st.log",
        f'1234 1700000000.000000 preadv2(3<{data}>, [{{iov_base="abc", iov_len=3}}], 1, -1, 0) = 3 <0.000010>',
        _read(data, 3, "3", "18446744073709551612"),
    )
    out = tmp_path / "c.csv"
    p = bufsim_cli("collect", "--from-strace", log, "-o", out)
    assert p.returncode == 0, p.stderr
    rows = [line.split(",")[-2:] for line in out.read_text().splitlines() if line[:1].isdigit()]
    assert rows == [["0", "3"], ["18446744073709551612", "3"]]
    assert bufsim_cli("run", out, "-c", "4blocks").returncode == 0


@pytest.mark.parametrize("depth", ["-1", "x"])
def test_collect_refuses_a_negative_stack_depth(tmp_path, depth):
    log = _log(tmp_path / "st.log", _read(tmp_path, 3, "3"))
    p = bufsim_cli("collect", "--from-strace", log, f"--stack-depth={depth}", "-o", tmp_path / "c.csv")
    check_error(p, "--stack-depth", "0 (the whole stack) or a positive number of frames")
    with pytest.raises(CollectError, match="--stack-depth"):
        collect_from_log(str(log), str(tmp_path / "c.csv"), stack_depth=-1)
    assert not (tmp_path / "c.csv").exists()


def _wait_then_write(argv, fifo, content: bytes) -> tuple[subprocess.CompletedProcess, str]:
    """Runs bufsim on ``argv``, reads its first line of standard error (a writer comes only once it
    is there), then writes ``content`` into ``fifo``; returns the run and that line."""
    p = subprocess.Popen(
        [sys.executable, "-m", "bufsim", *map(str, argv)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        sel = selectors.DefaultSelector()
        sel.register(p.stderr, selectors.EVENT_READ)
        assert sel.select(timeout=20), "bufsim said nothing while waiting for the FIFO's writer"
        first = p.stderr.readline().decode()
        writer = threading.Thread(target=lambda: open(fifo, "wb").write(content))
        writer.start()
        out, err = p.communicate(timeout=30)
        writer.join(timeout=5)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return subprocess.CompletedProcess(p.args, p.returncode, out.decode(), first + err.decode()), first


def test_sweep_config_from_a_fifo_says_it_waits(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    config = f'traces=["{trace}"]\npolicies=["lru"]\ncaches=["2blocks"]\n'.encode()
    p, first = _wait_then_write(["sweep", "-q", "--config", fifo, "-o", tmp_path / "s.duckdb"], fifo, config)
    assert first == f"bufsim: waiting for a writer on FIFO {fifo} (Ctrl-C to stop)\n"
    assert p.returncode == 0, p.stderr
    assert "1 runs in" in p.stdout


def test_collect_from_a_fifo_says_it_waits(tmp_path):
    data = tmp_path / "data"
    data.write_text("abc")
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    out = tmp_path / "c.csv"
    log = (_read(data, 4096, "3") + "\n").encode()
    p, first = _wait_then_write(["collect", "--from-strace", fifo, "-o", out], fifo, log)
    assert first == f"bufsim: waiting for a writer on FIFO {fifo} (Ctrl-C to stop)\n"
    assert p.returncode == 0, p.stderr
    assert ",R," in out.read_text()


@pytest.mark.parametrize(
    "line, fragment",
    [
        ('policies=["nope"]\ncaches=["10blocks"]', "t.toml: policies: unknown policy `nope`"),
        ('policies=["lru(k=3)"]\ncaches=["10blocks"]', "t.toml: policies: policy `lru` takes no parameters"),
        ('policies=["lru"]\ncaches=["-5"]', "t.toml: caches: size `-5` is negative"),
        ('policies=["lru"]\ncaches=["0blocks"]', "t.toml: caches:"),
        ('policies=["lru"]\ncaches=["10blocks"]\ndevices=["nope"]', "t.toml: devices: unknown device `nope`"),
        ('policies=["lru"]\ncaches=["10blocks"]\nio_schedulers=["nope"]', "t.toml: io_schedulers: unknown scheduler"),
        ('policies=["lru"]\ncaches=["10blocks"]\nprefetches=["nope"]', "t.toml: prefetches: unknown prefetch"),
    ],
)
def test_sweep_config_errors_name_the_file_and_the_key(tmp_path, line, fragment):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    config = tmp_path / "t.toml"
    config.write_text(f'traces=["{trace.name}"]\n{line}\n')
    check_error(bufsim_cli("sweep", "-q", "--config", config, "-o", tmp_path / "s.duckdb"), fragment)
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.parametrize(
    "argv, start",
    [
        (["-p", "nope"], "bufsim: error: unknown policy `nope`"),
        (["-c=-5"], "bufsim: error: size `-5` is negative"),
    ],
)
def test_sweep_command_line_errors_keep_their_messages(tmp_path, argv, start):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    config = tmp_path / "t.toml"
    config.write_text(f'traces=["{trace.name}"]\npolicies=["lru"]\ncaches=["10blocks"]\n')
    for given in (["--config", config], [trace]):
        p = bufsim_cli("sweep", "-q", *given, *argv, "-o", tmp_path / "s.duckdb")
        check_error(p)
        assert p.stderr.startswith(start), p.stderr


def test_workloads_shows_a_missing_trace_as_missing(tmp_path):
    d = tmp_path / "wl1"
    d.mkdir()
    recorded = {"requests": 1, "block_accesses": 1, "footprint_blocks": 1}
    manifest = [{"name": "cscope", "path": "x.bst", **recorded}, {"name": "gcc", "path": "gcc.bst", **recorded}]
    (d / "workloads.json").write_text(json.dumps(manifest))
    (d / "gcc.bst").write_bytes(b"")
    p = subprocess.run(
        [sys.executable, "-m", "bufsim", "workloads", "--dir", "wl1"], capture_output=True, text=True, cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    rows = {line.split()[0]: line for line in p.stdout.splitlines()[2:]}
    assert rows["cscope"].endswith("missing: wl1/x.bst")
    assert rows["gcc"].endswith(" wl1/gcc.bst") and "missing" not in rows["gcc"]
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bufsim: warning: "), p.stderr
    assert "cscope (wl1/x.bst)" in err[0] and "record_workloads.py --only cscope" in err[0]
    assert "gcc" not in err[0]


@pytest.mark.parametrize("argv", [["amp-a", "--list"], ["--list", "-o", "g.csv"], ["amp-a", "--list", "-o", "g.csv"]])
def test_generate_list_takes_no_spec_or_output(tmp_path, argv):
    p = subprocess.run(
        [sys.executable, "-m", "bufsim", "generate", *argv], capture_output=True, text=True, cwd=tmp_path
    )
    check_error(p, "--list", "spec")
    assert not (tmp_path / "g.csv").exists()


def test_traces_readme_says_compressed_traces_are_read():
    text = " ".join((ROOT / "traces" / "README.md").read_text().split())
    assert "do not read gzip" not in text
    assert "decompress gzip and zstd traces" in text
    p = bufsim_cli("run", GREP, "-c", "100blocks")
    assert p.returncode == 0, p.stderr

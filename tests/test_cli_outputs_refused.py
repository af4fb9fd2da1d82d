"""Where a command's results would go, or what it reads them from, is checked before the work:
an empty results database name, a figure under a file, a directory given as a strace log and a
Dask address where something other than a scheduler answers each get one line and exit status
2, and figures of names the font lacks draw without matplotlib's per-glyph warnings."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest
from conftest import block_trace, bufsim_cli, write_csv
from test_cli import check_error

from bufsim.sweeps import CONNECT_WAIT_S


def bufsim_in(cwd, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`bufsim ARGS` run in ``cwd``, failed by the timeout rather than left hanging."""
    return subprocess.run(
        [sys.executable, "-m", "bufsim", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


# --- Dask addresses where no scheduler answers -------------------------------------------------


class _Listener:
    """A local TCP server that is not a Dask scheduler: ``http`` answers every connection as
    an HTTP server answers bytes it cannot parse, ``silent`` accepts and never says anything."""

    def __init__(self, kind: str):
        self.kind = kind
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.open: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed by the test
            if self.kind == "http":
                conn.settimeout(2)
                try:
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                except OSError:
                    pass
                conn.close()
            else:
                self.open.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.open:
            conn.close()


@pytest.mark.parametrize("kind", ["http", "silent"])
def test_a_dask_address_where_something_else_answers_is_refused(tmp_path, kind):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    server = _Listener(kind)
    try:
        # Dask's client alone reads the HTTP reply as a message of exabytes (a traceback) and
        # waits forever on the silent server; the timeout turns a hang into a failure.
        p = bufsim_in(
            tmp_path,
            "sweep",
            trace,
            "--out",
            tmp_path / "d.duckdb",
            "--dask",
            f"tcp://127.0.0.1:{server.port}",
            "-q",
            timeout=4 * CONNECT_WAIT_S + 10,
        )
    finally:
        server.close()
    check_error(p, f"--dask tcp://127.0.0.1:{server.port}: no Dask scheduler answers there", "`dask scheduler` prints")
    assert not (tmp_path / "d.duckdb").exists(), "a refused sweep left a results file"


# --- Results databases that would keep nothing -------------------------------------------------


@pytest.mark.parametrize("out", ["", "   ", ":memory:"])
def test_a_sweep_into_a_database_that_keeps_nothing_is_refused(tmp_path, out):
    trace = write_csv(tmp_path / "good.csv", [("R", "f", 0, 4096), ("R", "f", 0, 4096)])
    p = bufsim_in(tmp_path, "sweep", trace, "--out", out, "-c", "7blocks")
    check_error(p, f"-o {out!r}", "give the results database's file name")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["good.csv"]


# --- Figures ---------------------------------------------------------------------------------


def test_figures_of_names_the_font_lacks_draw_without_glyph_warnings(tmp_path):
    trace = block_trace(tmp_path / "ünï cödé 名前.csv", [0, 1, 2, 0, 1, 3, 0, 2] * 4)
    p = bufsim_in(tmp_path, "heatmap", trace, "-c", "10blocks", "--windows", "2", "-o", "h.png")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert (tmp_path / "h.png").stat().st_size > 0
    db = tmp_path / "r.duckdb"
    assert bufsim_in(tmp_path, "sweep", trace, "-o", db, "-c", "4blocks:16blocks:x2", "-q").returncode == 0
    for out in ("m.png", "m.svg", "m.pdf"):
        p = bufsim_in(tmp_path, "plot", "mrc", db, "-o", out)
        assert p.returncode == 0, p.stderr
        assert p.stderr == "", out


def test_a_figure_under_a_file_is_refused_before_drawing(tmp_path):
    trace = block_trace(tmp_path / "good.csv", [0, 1, 0])
    db = tmp_path / "r.duckdb"
    assert bufsim_cli("sweep", trace, "-o", db, "-c", "4blocks", "-q").returncode == 0
    for under in (trace / "x.png", trace / "sub" / "x.png"):
        check_error(
            bufsim_cli("plot", "mrc", db, "-o", under),
            f"{under}: {trace} is a file, not a directory",
            "give an output path in a directory",
        )
        check_error(bufsim_cli("heatmap", trace, "-c", "4blocks", "-o", under), f"{trace} is a file, not a directory")
    assert trace.is_file()


# --- collect --from-strace ---------------------------------------------------------------------


def test_collect_from_a_directory_is_refused(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    p = bufsim_cli("collect", "-o", tmp_path / "c.csv", "--from-strace", logs)
    check_error(p, f"{logs}: is a directory", "--from-strace takes a strace output file")
    assert not (tmp_path / "c.csv").exists(), "the refused collect started its output"


def test_outputs_under_a_file_are_refused_by_name(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    for args in (
        ("sweep", t, "-c", "4blocks", "--out", tmp_path / "t.csv" / "r.duckdb", "-q"),
        ("report", tmp_path / "none.duckdb", "-o", tmp_path / "t.csv" / "r.html"),
    ):
        p = bufsim_cli(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert "t.csv is a file, not a directory" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


# --- outputs a command cannot write as named -------------------------------------------------


def test_generate_refuses_an_empty_name_and_another_formats_name(tmp_path):
    check_error(bufsim_in(tmp_path, "generate", "amp-a", "-o", ""), "an empty path")
    for name in ["a.bst", "a.csv.gz", "a.csv.zst"]:
        check_error(bufsim_in(tmp_path, "generate", "amp-a", "-o", name), "writes interchange CSV", "bufsim convert")
        assert not (tmp_path / name).exists()


def test_an_output_in_a_directory_that_takes_no_files_is_named_so(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    check_error(bufsim_in(tmp_path, "convert", t, "-o", "/proc/x.bst"), "no file can be created in /proc")
    check_error(
        bufsim_in(tmp_path, "filter-trace", t, "-o", tmp_path / "nodir" / "x.csv", "--first-level", "lru"),
        "its directory",
        "does not exist",
    )


@pytest.mark.parametrize(
    "command",
    [
        ["convert", "T", "-o", "FIFO"],
        ["convert", "T", "-o", "FIFO", "--to", "lcs-csv"],
        ["filter-trace", "T", "-o", "FIFO", "--first-level", "lru"],
        ["generate", "amp-a", "-o", "FIFO"],
    ],
)
def test_a_fifo_output_waits_for_its_reader_and_says_so(tmp_path, command):
    import os

    t = write_csv(tmp_path / "t.csv", [("R", "f", i * 4096, 4096) for i in range(50)])
    fifo = tmp_path / ("out.csv" if command[0] == "filter-trace" else "out.fifo")
    os.mkfifo(fifo)
    args = [str(t) if a == "T" else str(fifo) if a == "FIFO" else a for a in command]
    proc = subprocess.Popen([sys.executable, "-m", "bufsim", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # Not a silent hang: the message comes within the patience (1 s) while no one reads.
        line = proc.stderr.readline().decode()
        assert line.strip() == f"bufsim: waiting for a reader on FIFO {fifo} (Ctrl-C to stop)", line
        with open(fifo, "rb") as f:
            got = f.read()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
    assert got, "the reader got nothing"

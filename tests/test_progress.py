"""Progress bars: on standard error, with the time left, when it is a terminal (a pseudo-terminal
here) or when asked; nothing otherwise."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios

import pytest

import bufsim
from conftest import block_trace, bufsim_cli

# A tqdm bar: percentage, bar, done/total, then [elapsed<time left.
BAR = re.compile(r"\d+%\|[^|]*\| *[\d.]+[kMG]?i?B?/[\d.]+[kMG]?i?B? \[\d\d:\d\d<\d\d:\d\d")


def on_a_terminal(*args: str) -> tuple[int, str, str]:
    """Runs `bufsim ARGS` with standard error on a pseudo-terminal; returns the exit code,
    standard output and everything written to the terminal."""
    master, slave = pty.openpty()
    # A terminal 120 columns wide (a fresh pseudo-terminal has 0, too narrow for any bar).
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "BUFSIM_PROGRESS"}
    p = subprocess.Popen(
        [sys.executable, "-m", "bufsim", *args], stdout=subprocess.PIPE, stderr=slave, env=env, text=True
    )
    os.close(slave)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, "no output for a minute"
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other side closed: the command ended
                break
            if not chunk:
                break
            seen += chunk
        out = p.stdout.read()
        code = p.wait(timeout=60)
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
    return code, out, seen.decode("utf-8", "replace")


RUN = ["-p", "lru", "-p", "arc", "-c", "1024blocks", "-c", "4096blocks"]


@pytest.mark.parametrize(
    "command",
    [
        ["run", "{trace}", *RUN],
        ["mrc", "{trace}"],
        ["analyze", "{trace}", "--no-working-set"],
        ["convert", "{trace}", "-o", "{tmp}/t.bst"],
        ["heatmap", "{small}", "-p", "lru", "-c", "64blocks", "--windows", "4", "-o", "{tmp}/h.png"],
    ],
    ids=["run", "mrc", "analyze", "convert", "heatmap"],
)
def test_a_bar_with_the_time_left_on_a_terminal_and_none_off_it(command, cloudphysics, tmp_path):
    # The heatmap costs about windows/2 runs and matplotlib: a small trace keeps it short.
    small = block_trace(tmp_path / "small.csv", [i % 300 for i in range(20000)])
    args = [a.format(trace=cloudphysics, tmp=tmp_path, small=small) for a in command]
    code, out, term = on_a_terminal(*args)
    assert code == 0, term
    assert BAR.search(term), term
    assert "%|" not in out  # results alone on standard output
    os.remove(tmp_path / "t.bst") if (tmp_path / "t.bst").exists() else None
    piped = bufsim_cli(*args)
    assert piped.returncode == 0 and "%|" not in piped.stderr, piped.stderr
    asked = bufsim_cli(*args, "--progress")
    assert asked.returncode == 0 and BAR.search(asked.stderr), asked.stderr


def test_no_progress_silences_a_terminal(cloudphysics):
    code, _, term = on_a_terminal("run", str(cloudphysics), *RUN, "--no-progress")
    assert code == 0 and "%|" not in term, term


def test_python_calls_take_progress(cloudphysics, capfd):
    bufsim.run(cloudphysics, ["lru"], ["1024blocks"], progress=True)
    assert BAR.search(capfd.readouterr().err)
    bufsim.run(cloudphysics, ["lru"], ["1024blocks"])  # stderr is no terminal here
    assert "%|" not in capfd.readouterr().err

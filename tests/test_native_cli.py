"""The native entry point (crates/bufsim-cli), installed as the `bufsim` command by `make build`
and `make build-ci`: `bufsim run` prints byte for byte what the Python command line prints, and
everything it does not take (other commands, help, errors, notes) reaches the Python command
line with the same arguments and the same outcome."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NATIVE = Path(sys.executable).parent / "bufsim"
TRACES = ROOT / "traces"


def _is_native(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


pytestmark = pytest.mark.skipif(
    not _is_native(NATIVE), reason=f"{NATIVE} is not the native entry point: run `make build-ci`"
)


def native(*args: str, env: dict | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(NATIVE), *args], capture_output=True, env=env, input=stdin)


def python(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bufsim", *args], capture_output=True, input=stdin)


def without_python() -> dict:
    """An environment in which handing over to Python fails: what still works ran natively."""
    return {**os.environ, "BUFSIM_PYTHON": "/nonexistent/python3"}


CLOUDPHYSICS = str(ROOT.parent / "shared" / "traces" / "cloudphysics_vscsi.csv")
GREP = str(TRACES / "grep.csv.gz")

# Command lines the native entry point runs itself (checked below by taking Python away).
NATIVE_RUNS = [
    ["run", GREP],
    ["run", GREP, "-p", "lru", "-p", "arc", "-p", "lirs(hir=1%)", "-c", "200blocks", "-c", "1MiB"],
    ["run", GREP, "-p", "lru", "-c", "1MiB", "--prefetch", "linux", "--prefetch", "none", "--json"],
    ["run", GREP, "-p", "lru", "-p", "opt", "-c", "300blocks", "--timing", "--single-stream", "--json"],
    ["run", GREP, "-p", "clock", "-c", "300blocks", "--prefetch", "linux", "--device", "ssd", "--io-scheduler",
     "deadline"],
    ["run", GREP, "-p", "amp", "-c", "400blocks", "--json", "--seed", "7", "--block-size", "8192"],
    ["run", GREP, "-p", "lru", "-c", "100blocks", "--max-requests", "50", "-j", "1", "--reads-only"],
    ["run", GREP, "-p", "lru", "-p", "linux", "-c", "400blocks", "--cache-steps", "1000=100blocks", "--cache-steps",
     "3000=300blocks", "--json"],
    ["run", CLOUDPHYSICS, "-p", "lru", "-p", "fifo", "-c", "4MiB", "-c", "16MiB", "--json"],
]  # fmt: skip


@pytest.mark.parametrize("args", NATIVE_RUNS, ids=lambda a: " ".join(Path(w).name for w in a[1:]))
def test_native_runs_print_what_python_prints(args):
    n, p = native(*args, env=without_python()), python(*args)
    assert p.returncode == 0, p.stderr.decode()
    assert (n.returncode, n.stdout, n.stderr) == (0, p.stdout, p.stderr)


def test_standard_input_goes_to_python_which_words_every_outcome():
    # Input read once is not read here at all: whatever this side read would be gone for Python
    # when it has to take over. It once was: a file trace on standard input ended in "the trace
    # is empty", and so did a block trace whose bad line --skip-bad passed over.
    text = Path(CLOUDPHYSICS).read_bytes()
    args = ["run", "-", "-p", "lru", "-c", "200blocks", "--json"]
    n, p = native(*args, stdin=text), python(*args, stdin=text)
    assert (n.returncode, n.stdout) == (0, p.stdout)
    assert native(*args, env=without_python(), stdin=text).returncode == 2
    grep = gzip.decompress(Path(GREP).read_bytes())
    n = native("run", "-", "-c", "200blocks", stdin=grep)
    assert n.returncode == 2 and n.stderr.decode().count("\n") == 1, n.stderr
    assert "standard input cannot be read again; save the trace to a file first" in n.stderr.decode()
    lines = text.splitlines(keepends=True)
    bad = b"".join(lines[:50] + [b"not,a,record\n"] + lines[50:100])
    args = ["run", "-", "--skip-bad", "-c", "200blocks", "--json"]
    n, p = native(*args, stdin=bad), python(*args, stdin=bad)
    assert n.returncode == 0 and (n.stdout, n.stderr) == (p.stdout, p.stderr)
    assert json.loads(n.stdout)["requests"] > 0


def test_a_directory_as_standard_input_is_one_line_or_ignored(tmp_path):
    # Python cannot start with a directory on its standard input (a "Fatal Python error" and a
    # dump): a command that reads it gets one line; one that does not, /dev/null instead.
    d = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        read = subprocess.run([str(NATIVE), "run", "-", "-c", "200blocks"], stdin=d, capture_output=True)
        listing = subprocess.run([str(NATIVE), "policies"], stdin=d, capture_output=True)
    finally:
        os.close(d)
    err = read.stderr.decode()
    assert read.returncode == 2 and err.count("\n") == 1 and "standard input is a directory" in err, err
    assert listing.returncode == 0 and b"lru" in listing.stdout and not listing.stderr


# Command lines it hands to Python: the outcome is Python's, exit status included.
HANDED_OVER = [
    ["--version"],
    ["policies"],
    ["run", "--help"],
    ["run", GREP, "--pol", "arc", "-c", "200blocks"],  # argparse's abbreviation
    ["run", GREP, "--policy=arc", "-c", "200blocks"],
    ["run", GREP, "-c", "1MB"],  # a note on decimal units
    ["run", GREP, "-p", "nosuchpolicy"],  # an error: one line, status 2
    ["run", str(TRACES / "missing.csv")],
    ["run", GREP, "--seed", "0x10", "-c", "200blocks"],
    ["run", GREP, "-c", "200blocks", "--progress"],
    ["run"],
]


@pytest.mark.parametrize("args", HANDED_OVER, ids=lambda a: " ".join(Path(w).name for w in a))
def test_what_it_does_not_take_goes_to_python(args):
    n, p = native(*args), python(*args)
    assert (n.returncode, n.stdout) == (p.returncode, p.stdout)
    if "--progress" not in args:  # progress bars show rates that vary
        assert n.stderr == p.stderr
    # And it really went there: without Python it cannot be done.
    gone = native(*args, env=without_python())
    assert gone.returncode == 2
    assert gone.stderr.decode().count("\n") == 1
    assert "cannot start Python" in gone.stderr.decode() and "BUFSIM_PYTHON" in gone.stderr.decode()


def test_an_empty_trace_gets_pythons_warning(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("op,file,offset,size\n")
    n, p = native("run", str(empty)), python("run", str(empty))
    assert (n.returncode, n.stdout, n.stderr) == (p.returncode, p.stdout, p.stderr)
    assert b"holds no requests" in n.stderr


def test_a_closed_pipe_is_not_an_error():
    p = subprocess.run(
        f"'{NATIVE}' run '{GREP}' -p lru -c 200blocks -c 300blocks -c 400blocks --json | head -c 10",
        shell=True,
        capture_output=True,
    )
    assert p.returncode == 0 and p.stderr == b""

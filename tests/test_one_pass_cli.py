"""The command line on inputs read once (stdin, pipes, FIFOs), outputs written whole, traces cut
short, out-of-range records, and every failure that used to end in a traceback: each test
reproduces a way bufsim once lost data, misread it silently, hung or printed a traceback."""

from __future__ import annotations

import gzip
import json
import os
import select
import subprocess
import sys
import threading
import time

import pytest


CLI = [sys.executable, "-m", "bufsim"]


def run(args, stdin=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + list(args), input=stdin, capture_output=True, timeout=timeout)


def counts(p: subprocess.CompletedProcess) -> tuple[int, int, int]:
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    d = json.loads(p.stdout.decode().splitlines()[0])
    return d["requests"], d["accesses"], d["hits"]


def one_line_error(p: subprocess.CompletedProcess, *fragments: str) -> str:
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2, (p.returncode, err)
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("bufsim"), err
    for f in fragments:
        assert f in last, (f, last)
    return last


@pytest.fixture(scope="module")
def big_trace(cloudphysics) -> bytes:
    return cloudphysics.read_bytes()


# --- 1. standard input, pipes and FIFOs are read whole, in one pass ---------------------------


def test_stdin_pipe_and_process_substitution_count_what_the_file_counts(cloudphysics, big_trace):
    args = ["-c", "100blocks", "--json"]
    want = counts(run(["run", cloudphysics, *args]))
    assert want[0] == 113872
    # Detection once read 64 KiB of the pipe and then opened it again: 119,055 of 133,996.
    assert counts(run(["run", "-", *args], stdin=big_trace)) == want
    assert counts(run(["run", "/dev/stdin", *args], stdin=gzip.compress(big_trace))) == want
    two = run(["run", "-", "-c", "100blocks", "-p", "lru", "-p", "opt", "--json"], stdin=big_trace)
    assert two.returncode == 0, two.stderr
    assert [json.loads(x)["requests"] for x in two.stdout.decode().splitlines()] == [113872, 113872]


def fifo_and_head(tmp_path, cloudphysics) -> tuple:
    """A FIFO in `tmp_path` and what its writers write: the header and first 39 requests of the
    CloudPhysics trace."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    return fifo, b"".join(cloudphysics.read_bytes().splitlines(keepends=True)[:40])


def run_fed_fifo(fifo, head: bytes, silent_s: float = 0.0):
    """`bufsim run` on `fifo` while a writer opens it at once and, `silent_s` later, writes `head`."""

    def feed():
        with open(fifo, "wb") as f:
            time.sleep(silent_s)
            f.write(head)

    t = threading.Thread(target=feed)
    t.start()
    p = run(["run", fifo, "-c", "10blocks", "--json"], timeout=60)
    t.join()
    return p


def test_a_short_fifo_does_not_hang_and_a_pre_pass_on_a_pipe_is_refused(tmp_path, cloudphysics):
    p = run_fed_fifo(*fifo_and_head(tmp_path, cloudphysics))
    assert counts(p)[0] == 39
    # The writer was there at once: nothing to say.
    assert b"waiting for a writer" not in p.stderr, p.stderr
    # OPT reads the trace twice (its future): on a pipe that once gave 0 requests, exit 0.
    p = run(["run", "-", "--format", "lirs", "-p", "opt", "-c", "10blocks"], stdin=b"1\n2\n1\n")
    one_line_error(p, "policy opt (its future) reads the trace twice", "standard input cannot be read again")


@pytest.mark.parametrize("option", [["-p", "opt"], ["--prefetch", "linux"], ["--device", "ssd"]])
def test_one_run_a_fifo_cannot_serve_is_refused_before_waiting_for_its_writer(tmp_path, cloudphysics, option):
    fifo, _ = fifo_and_head(tmp_path, cloudphysics)
    # No writer ever comes: the refusal does not wait for one.
    p = run(["run", fifo, "-c", "10blocks", *option], timeout=30)
    one_line_error(p, "reads the trace twice", "cannot be read again")


@pytest.mark.parametrize("command", ["run", "convert"])
def test_a_fifo_without_a_writer_says_it_waits_and_reads_the_writer_that_comes(tmp_path, cloudphysics, command):
    # Opening a FIFO for reading waits for a writer: bufsim once waited there for ever, silent.
    fifo, head = fifo_and_head(tmp_path, cloudphysics)
    out = tmp_path / "t.bst"
    args = ["run", fifo, "-c", "10blocks", "--json"] if command == "run" else ["convert", fifo, "-o", out]
    proc = subprocess.Popen(CLI + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # The writer comes once bufsim has said that it waits (after about a second).
        assert select.select([proc.stderr], [], [], 30)[0], "bufsim waits for a writer without a word"
        said = proc.stderr.readline()
        assert said.decode().strip() == f"bufsim: waiting for a writer on FIFO {fifo} (Ctrl-C to stop)", said
        with open(fifo, "wb") as f:
            f.write(head)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and b"waiting for a writer" not in stderr, stderr
    if command == "convert":
        stdout = run(["run", out, "-c", "10blocks", "--json"]).stdout
    assert json.loads(stdout.decode().splitlines()[0])["requests"] == 39


def test_a_fifo_whose_writer_is_slow_to_write_is_read_without_a_word(tmp_path, cloudphysics):
    # Connected, but silent past the second bufsim gives a writer to come.
    p = run_fed_fifo(*fifo_and_head(tmp_path, cloudphysics), silent_s=1.5)
    assert counts(p)[0] == 39
    assert b"waiting for a writer" not in p.stderr, p.stderr


def test_convert_from_stdin_writes_every_request(tmp_path, big_trace):
    out = tmp_path / "t.bst"
    p = run(["convert", "-", "-o", out], stdin=big_trace)
    assert p.returncode == 0, p.stderr
    assert counts(run(["run", out, "-c", "100blocks", "--json"]))[0] == 113872


# --- 2. convert writes a fresh file and renames it into place ---------------------------------


def test_convert_does_not_follow_a_planted_symlink(tmp_path, cloudphysics):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "t.bst.partial").symlink_to(victim)
    p = run(["convert", cloudphysics, "-o", tmp_path / "t.bst"])
    assert p.returncode == 0, p.stderr
    assert victim.read_text() == "keep"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t.bst", "t.bst.partial", "victim"]


# --- 3. a trace cut short ---------------------------------------------------------------------


def test_a_bst_cut_short_is_an_error_and_a_text_trace_cut_inside_a_line_a_warning(tmp_path, cloudphysics):
    bst = tmp_path / "t.bst"
    assert run(["convert", cloudphysics, "-o", bst]).returncode == 0
    data = bst.read_bytes()
    bst.write_bytes(data[: len(data) // 2])
    one_line_error(run(["run", bst, "-c", "10blocks"]), "truncated: the header promises 113872 records")
    cut = tmp_path / "cut.csv"
    lines = cloudphysics.read_bytes().splitlines(keepends=True)
    # Cut inside the last field: the shortened record still parses, so only the warning tells.
    cut.write_bytes(b"".join(lines[:100]) + lines[100][:-3])
    p = run(["run", cut, "-c", "10blocks"])
    assert p.returncode == 0
    assert "the trace ends inside this line (no line end): was it cut short?" in p.stderr.decode(), p.stderr
    # Named once: the note is located (cut.csv:101) and needs no second name in front.
    assert p.stderr.decode().count(str(cut)) == 1, p.stderr


# --- 4. one line and exit 2 instead of a traceback --------------------------------------------


def test_failures_that_printed_tracebacks_give_one_line(tmp_path, cloudphysics):
    bad = os.fsencode(tmp_path) + b"/bad\xff.csv"
    with open(bad, "wb") as f:
        f.write(cloudphysics.read_bytes()[:2000])
    for cmd in (
        ["run", bad],
        ["convert", bad, "-o", tmp_path / "o.bst"],
        ["sweep", bad, "-o", tmp_path / "s.duckdb"],
        ["analyze", bad],
        ["mrc", bad],
    ):
        one_line_error(run(cmd), "bad\\xff.csv: the name is not valid UTF-8")
    one_line_error(run(["run", cloudphysics, "--seed", "18446744073709551616"]), "--seed", "out of range")
    empty = tmp_path / "empty.duckdb"
    empty.write_bytes(b"")
    one_line_error(run(["sweep", cloudphysics, "-o", empty, "--resume"]), "results database", "not a valid DuckDB")
    corrupt = tmp_path / "corrupt.duckdb"
    corrupt.write_bytes(b"garbage" * 1000)
    one_line_error(run(["results", "show", corrupt]), "results database", "not a valid DuckDB")
    one_line_error(
        run(["sweep", cloudphysics, "-o", tmp_path / "d.duckdb", "--dask", "notaurl"]), "not a Dask scheduler address"
    )
    toml = tmp_path / "s.toml"
    toml.write_text(f'traces = ["{cloudphysics}"]\npolicies = ["lru"]\ncaches = ["1MiB"]\nseed = "x"\n')
    one_line_error(
        run(["sweep", "--config", toml, "-o", tmp_path / "t.duckdb"]),
        "s.toml: seed must be a whole number (zero or more)",
    )
    toml.write_text('traces = 5\npolicies = ["lru"]\ncaches = ["1MiB"]\n')
    one_line_error(run(["sweep", "--config", toml, "-o", tmp_path / "t.duckdb"]), "`traces` must be a list of strings")


def test_a_locked_results_database_is_named(tmp_path, cloudphysics):
    import duckdb

    db = tmp_path / "locked.duckdb"
    run(["sweep", cloudphysics, "-o", db, "-c", "1MiB", "--quiet"])
    # Another process holds the database (a second sweep into it, say).
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb,sys,time; c=duckdb.connect({str(db)!r}); print('ok', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline().strip() == b"ok"
        one_line_error(run(["results", "show", db]), "results database", "another bufsim (or program) has it open")
        one_line_error(run(["sweep", cloudphysics, "-o", db, "-c", "2MiB", "--resume", "--quiet"]), "lock")
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert duckdb  # the data extra is installed here; missing packages are tested below


@pytest.mark.parametrize(
    "module,argv",
    [
        ("pandas", ["sweep", "{trace}", "-o", "{tmp}/m.duckdb", "-c", "1MiB", "--quiet"]),
        ("duckdb", ["sweep", "{trace}", "-o", "{tmp}/m.duckdb", "-c", "1MiB", "--quiet"]),
        ("matplotlib", ["plot", "hit-ratio", "{tmp}/m.duckdb", "-o", "{tmp}/x.png"]),
    ],
)
def test_a_missing_optional_package_names_the_extra(tmp_path, cloudphysics, module, argv):
    small = tmp_path / "small.csv"
    small.write_bytes(b"".join(cloudphysics.read_bytes().splitlines(keepends=True)[:50]))
    assert run(["sweep", small, "-o", tmp_path / "m.duckdb", "-c", "1MiB", "--quiet"]).returncode == 0
    argv = [a.format(trace=small, tmp=tmp_path) for a in argv]
    code = f"import sys; sys.modules[{module!r}] = None\nfrom bufsim.cli import main\nsys.exit(main({argv!r}))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    one_line_error(p, f"needs the Python package {module}", f"pip install {module}")


@pytest.mark.parametrize(
    "setup,expected",
    [
        # pandas re-raises its dependency's failure as a plain ImportError without a module name.
        ("sys.modules['numpy'] = None; sys.modules.pop('pandas', None)", "numpy does not import"),
        # A broken install: the package is there but fails inside its own import (a shared
        # library it loads is gone).
        ("sys.path.insert(0, {broken!r})", "libfreetype.so.6: cannot open shared object file"),
    ],
)
def test_a_package_that_does_not_import_is_one_line(tmp_path, cloudphysics, setup, expected):
    broken = tmp_path / "broken" / "matplotlib"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('libfreetype.so.6: cannot open shared object file')\n")
    setup = setup.format(broken=str(broken.parent))
    small = tmp_path / "small.csv"
    small.write_bytes(b"".join(cloudphysics.read_bytes().splitlines(keepends=True)[:50]))
    argv = ["heatmap", str(small), "-o", str(tmp_path / "m.png")]
    code = f"import sys; {setup}\nfrom bufsim.cli import main\nsys.exit(main({argv!r}))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    one_line_error(p, expected, "reinstall bufsim")


# --- 5. records no request can be -------------------------------------------------------------


@pytest.mark.parametrize(
    "fmt,text,where",
    [
        ("lirs", "1\n18446744073709551615\n", ":2: block 18446744073709551615"),
        ("lcs-txt", "1\n18446744073709551615\n", ":2: block 18446744073709551615"),
        ("lcs-csv", "obj_id\n1\n18446744073709551615\n", ":3: block 18446744073709551615"),
        ("arc", "0 18446744073709551615 0 1\n", ":1: a request of 18446744073709551615 blocks"),
        ("csv", "op,file,offset,size\nR,a,0,18446744073709551615\n", ":2: a request of 18446744073709551615 bytes"),
    ],
)
def test_block_2_64_minus_1_and_endless_requests_are_refused_at_their_line(tmp_path, fmt, text, where):
    t = tmp_path / "t.txt"
    t.write_text(text)
    # These once counted a request with 0 accesses, or split one request for ever.
    one_line_error(run(["run", t, "--format", fmt, "-c", "10blocks"], timeout=60), f"t.txt{where}")


# --- 6. collector output of any size is readable ----------------------------------------------


def test_a_comment_over_a_mebibyte_and_comment_blocks_over_64_kib_are_read(tmp_path):
    t = tmp_path / "t.csv"
    notes = "".join(f"# note {i}\n" for i in range(10_000))
    t.write_text(f"# command: {'x' * 1_500_000}\n{notes}op,file,offset,size\nR,a,0,4096\nR,a,0,4096\n")
    r, a, h = counts(run(["run", t, "-c", "10blocks", "--json"]))
    assert (r, a, h) == (2, 2, 1)


# --- collect: garbage logs, commands that cannot run, comments that hold line breaks ------------


def test_collect_from_a_log_it_cannot_understand_exits_2_and_leaves_no_trace(tmp_path):
    log = tmp_path / "g.log"
    log.write_text("garbage line\nmore garbage\n")
    out = tmp_path / "g.csv"
    # Once exit 0 with a header-only trace.
    one_line_error(run(["collect", "--from-strace", log, "-o", out]), "no strace output found (2 lines not understood)")
    assert not out.exists()


def test_collect_of_a_file_the_kernel_cannot_execute_exits_126(tmp_path):
    import shutil

    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    prog = tmp_path / "notexec"
    prog.write_bytes(b"\x7fELF\x02\x01garbage")
    prog.chmod(0o755)
    p = run(["collect", "-o", tmp_path / "n.csv", "--", prog])
    assert p.returncode == 126, p.stderr  # once 1, strace's own status
    assert "could not be executed (ENOEXEC" in p.stderr.decode()


def test_a_collected_command_line_with_line_breaks_stays_one_comment(tmp_path):
    import shutil

    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    data = tmp_path / "d"
    data.write_bytes(b"x" * 10000)
    out = tmp_path / "t.csv"
    p = run(["collect", "-o", out, "--", "sh", "-c", f"cat {data} > /dev/null\ntrue"])
    assert p.returncode == 0, p.stderr
    r = run(["run", out, "-c", "10blocks", "--json"])
    assert counts(r)[0] > 0


def test_a_sweep_of_standard_input_says_to_save_it_first(cloudphysics, big_trace, tmp_path):
    p = run(["sweep", "-", "-o", "/nonexistent/x.duckdb", "-c", "1MiB"], stdin=big_trace)
    one_line_error(p, "a sweep reads its traces by path", "bufsim convert - -o t.bst")
    # A directory is not a pipe: said as `run` says it.
    p = run(["sweep", cloudphysics, tmp_path, "-o", tmp_path / "x.duckdb", "-c", "1MiB"])
    one_line_error(p, f"{tmp_path}: is a directory", "give a trace file")


def test_mrc_and_analyze_of_standard_input_equal_the_file(cloudphysics, big_trace):
    for cmd in (["mrc"], ["analyze"]):
        from_file = run([*cmd, cloudphysics, "--json"])
        from_stdin = run([*cmd, "-", "--json"], stdin=big_trace)
        assert from_file.returncode == from_stdin.returncode == 0, from_stdin.stderr
        a, b = json.loads(from_file.stdout), json.loads(from_stdin.stdout)
        a.pop("trace", None), b.pop("trace", None)
        assert a == b, cmd

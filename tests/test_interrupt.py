"""Ctrl-C during a long computation of the native core stops it: the command line ends with 130,
a Python session gets its KeyboardInterrupt and goes on."""

import os
import signal
import subprocess
import sys
import time

from conftest import SHARED

P3 = SHARED / "traces" / "arc" / "P3.lis.zst"


def sigint_as_at_a_terminal() -> None:
    # A command started in the background of a script (as CI may run the tests) inherits SIGINT
    # ignored, and then keeps ignoring it, as it should; these tests need a foreground's default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted(args: list[str]) -> tuple[int, bytes, bytes]:
    """Runs `python args` with a progress bar, sends SIGINT once the bar shows that the native
    call reads its trace, and returns the exit status, standard output and standard error."""
    env = {**os.environ, "BUFSIM_PROGRESS": "1"}
    p = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=sigint_as_at_a_terminal,
    )
    try:
        seen = b""
        while b"reading" not in seen:
            chunk = p.stderr.read1(4096)
            assert chunk, f"ended before its computation started: {seen[-300:]!r}"
            seen += chunk
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=600)
        return p.returncode, out, err
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_ctrl_c_in_a_native_computation_ends_the_command_at_once():
    # Python's handler runs only between bytecodes, so SIGINT once waited for the whole native
    # call (tens of seconds here); the call now stops its computation and the command says so.
    status, _, err = interrupted(["-m", "bufsim", "analyze", str(P3)])
    assert status == 130
    assert b"bufsim: interrupted" in err


def test_ctrl_c_stops_a_native_computation_in_a_python_session(tmp_path):
    # The call reads a pipe that never ends, so only cancelling the computation can end it;
    # the session then gets its KeyboardInterrupt and goes on.
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    small = tmp_path / "small.csv"
    small.write_text("op,file,offset,size\nR,a,0,4096\nR,a,0,4096\n")
    code = (
        "import sys, threading, bufsim\n"
        "fifo, small = sys.argv[1], sys.argv[2]\n"
        "def feed():\n"
        "    try:\n"
        "        with open(fifo, 'w') as f:\n"
        "            f.write('op,file,offset,size\\n')\n"
        "            line = ''.join(f'R,a,{b * 4096},4096\\n' for b in range(1000))\n"
        "            while True:\n"
        "                f.write(line)\n"
        "    except OSError:\n"
        "        pass\n"
        "threading.Thread(target=feed, daemon=True).start()\n"
        "try:\n"
        "    bufsim.run(fifo, ['lru', 'arc'], ['100blocks'], progress=True)\n"
        "    print('ended')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "print(bufsim.simulate(small, 'lru', '10blocks').hits)\n"
    )
    status, out, err = interrupted(["-c", code, str(fifo), str(small)])
    assert status == 0, err[-500:]
    assert out.decode().split() == ["interrupted", "1"]


def test_ctrl_c_stops_generating_a_trace_and_leaves_no_file(tmp_path):
    # A 100M-access trace takes tens of seconds to generate and write; the output is written to
    # a temporary file renamed into place only when whole, so no file at the end means the
    # interrupt stopped the work before it finished.
    out = tmp_path / "big.csv"
    code = (
        "import sys, bufsim.amp\n"
        "print('start', flush=True)\n"
        "try:\n"
        "    bufsim.amp.generate('amp-mix(accesses=100000000)', out=sys.argv[1])\n"
        "    print('ended')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "print(bufsim.amp.generate('amp-b(length=5)', out=sys.argv[2]).read_text().count('R,'))\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code, str(out), str(tmp_path / "small.csv")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_as_at_a_terminal,
    )
    try:
        assert p.stdout.readline() == b"start\n"
        # Past the call's start (the import is done); well before 100M accesses are drawn.
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        # Read through the buffered reader that took the first line (communicate would bypass it).
        rest, err = p.stdout.read(), p.stderr.read()
        p.wait(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err[-500:]
    assert rest.decode().split() == ["interrupted", "5"]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["small.csv"]

"""Ctrl-C during a long computation of the native core ends the command line at once."""

import os
import signal
import subprocess
import sys

from conftest import SHARED

P3 = SHARED / "traces" / "arc" / "P3.lis.zst"


def sigint_as_at_a_terminal() -> None:
    # A command started in the background of a script (as CI may run the tests) inherits SIGINT
    # ignored, and then keeps ignoring it, as it should; these tests need a foreground's default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_in_a_native_computation_ends_the_command_at_once():
    # Python's handler runs only between bytecodes, so SIGINT once waited for the whole native
    # call and the command then exited with 130 as if it had stopped at once.
    env = {**os.environ, "BUFSIM_PROGRESS": "1"}
    p = subprocess.Popen(
        [sys.executable, "-m", "bufsim", "analyze", str(P3)],  # tens of seconds of native work
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=sigint_as_at_a_terminal,
    )
    try:
        seen = b""
        while b"reading" not in seen:  # the progress bar: the native call has started
            chunk = p.stderr.read1(4096)
            assert chunk, f"ended before its computation started: {seen[-300:]!r}"
            seen += chunk
        p.send_signal(signal.SIGINT)
        # The signal's default action: the process ends by it (the shell reports 130).
        assert p.wait(timeout=600) == -signal.SIGINT
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_a_python_session_keeps_its_keyboard_interrupt():
    # Only the command line lets SIGINT end the process; a notebook's kernel must survive it.
    code = (
        "import signal, bufsim.progress as pr\n"
        "with pr.native_computation():\n"
        "    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        "pr.interrupt_ends_process()\n"
        "with pr.native_computation():\n"
        "    assert signal.getsignal(signal.SIGINT) is signal.SIG_DFL\n"
        "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        # Started with SIGINT ignored (nohup, a script's background): it stays ignored.
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "with pr.native_computation():\n"
        "    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, preexec_fn=sigint_as_at_a_terminal)

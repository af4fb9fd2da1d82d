"""A thread that drains a non-blocking descriptor while a traced command runs: it wakes when the
descriptor is readable (or every 50 ms), and :meth:`DrainThread.finish` drains what is left once
the command has ended, then closes the descriptor. The kernel tracer's pipe copiers and its
fanotify listener both work this way."""

from __future__ import annotations

import os
import select
import threading


class DrainThread(threading.Thread):
    """Subclasses set ``self.fd`` and implement :meth:`drain` (read until the descriptor would
    block)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.fd = -1
        self._done = threading.Event()
        # Set when run() returns: a join interrupted by Ctrl-C makes is_alive() False while the
        # thread still reads (CPython before 3.13), so finish() waits for this instead.
        self._exited = threading.Event()

    def drain(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            poller = select.poll()
            poller.register(self.fd, select.POLLIN)
            while not self._done.is_set():
                poller.poll(50)
                self.drain()
        finally:
            self._exited.set()

    def finish(self) -> None:
        """Stops the thread, drains what is still there and closes the descriptor."""
        if self.fd < 0:
            return
        self._done.set()
        if self.ident is not None:  # started: the descriptor is closed only once it has stopped
            self._exited.wait()
        self.drain()
        os.close(self.fd)
        self.fd = -1

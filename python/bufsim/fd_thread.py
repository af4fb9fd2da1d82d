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

    def drain(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self._done.is_set():
            poller.poll(50)
            self.drain()

    def finish(self) -> None:
        """Stops the thread, drains what is still there and closes the descriptor."""
        if self.fd < 0:
            return
        self._done.set()
        if self.is_alive():
            self.join()
        self.drain()
        os.close(self.fd)
        self.fd = -1

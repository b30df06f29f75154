"""Ctrl-C and SIGTERM during a run: raised as exceptions, but never inside a step that must be whole.

While ``train`` runs, both signals go to ``Interrupts.handler``: Ctrl-C raises ``KeyboardInterrupt``
and SIGTERM (``kill``, a cluster scheduler's stop) raises ``Terminated``, so the trainer can write
a checkpoint and close its workers. A step that must not be cut in two (a message crossing a
worker's pipe with the note of what is owed, a checkpoint being counted and written) runs inside
``INTERRUPTS.held()``; a signal that arrives then is raised as soon as the step is over.
Without the hold, a signal between reading a worker's reply and noting it read left the trainer
waiting for a reply that had already come.
"""

from __future__ import annotations

import contextlib
import signal
import threading


class Terminated(KeyboardInterrupt):
    """SIGTERM reached the training process: stop as on Ctrl-C (checkpoint, close the workers)."""


def _raise(signum: int) -> None:
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


class Interrupts:
    """The hold on Ctrl-C and SIGTERM; one per process (``INTERRUPTS``)."""

    def __init__(self):
        self.depth = 0  # nested held() blocks now running
        self.pending: int | None = None  # the first signal that arrived while held

    def handler(self, signum: int, frame) -> None:
        if self.depth:
            self.pending = self.pending or signum
            return
        _raise(signum)

    @contextlib.contextmanager
    def held(self):
        """Run the block whole; a signal that arrives meanwhile is raised when it ends."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if not self.depth and self.pending is not None:
                signum, self.pending = self.pending, None
                _raise(signum)

    @contextlib.contextmanager
    def installed(self):
        """Route Ctrl-C and SIGTERM to ``handler`` for the block (main thread only), then put the
        previous handlers back."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {}
        try:
            for signum in (signal.SIGINT, signal.SIGTERM):
                previous[signum] = signal.signal(signum, self.handler)
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self.pending = None


INTERRUPTS = Interrupts()

"""Progress lines on stderr for long work: one line every few seconds, also when stderr
is not a terminal (a CI log, a pipe), so a long run is never silent; ``--quiet`` turns
them off."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import TextIO

TERMINAL_INTERVAL = 2.0
"""Seconds between progress lines on a terminal."""
PIPE_INTERVAL = 5.0
"""Seconds between progress lines when stderr is a file or a pipe."""


class Progress:
    """A rate-limited printer: ``progress(message)`` prints at most one line per interval
    (the first message at once)."""

    def __init__(self, stream: TextIO | None = None, interval: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if interval is None:
            interval = TERMINAL_INTERVAL if _isatty(self.stream) else PIPE_INTERVAL
        self.interval = interval
        self._last = -float("inf")

    def __call__(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        with contextlib.suppress(OSError, ValueError):  # a closed stderr must not end the run
            print(f"groupcheck: {message}", file=self.stream, flush=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_for(quiet: bool) -> Progress | None:
    """The progress printer a command uses (None with ``--quiet``)."""
    return None if quiet else Progress()

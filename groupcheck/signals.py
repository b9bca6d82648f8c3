"""SIGTERM as an exception (standard library only, so that it is importable first).

``groupcheck.cli.main`` — and ``python -m groupcheck`` before it imports anything else —
installs :func:`on_sigterm`, which raises :class:`Terminated` in the main thread, so that
every ``finally`` and cleanup handler runs before the process exits with 143 (issue 42:
a SIGTERM while the subcommands' modules were imported ended in a traceback, and one
that landed in a weakref callback or a finaliser was swallowed there — "Exception
ignored" — and the command ran on to its end).

A Python signal handler runs between any two bytecodes of the main thread, also inside
a finaliser, where an exception is printed and dropped. So the handler does not raise in
a frame known to be one (it sends the signal again a moment later), and after raising it
arms a fallback: unless :func:`caught` is called within :data:`RESEND_SECONDS`, the
signal is sent again."""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

RESEND_SECONDS = 1.0
"""How long a raised :class:`Terminated` may take to reach ``main`` before the signal is
sent again (it was swallowed on the way)."""

_state = {"caught": False}


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` and cleanup handler
    runs (a run's temporary output is removed) before the process exits with 143."""


def install() -> Any:
    """Install :func:`on_sigterm` for SIGTERM (main thread only); returns the handler it
    replaced."""
    _state["caught"] = False
    return signal.signal(signal.SIGTERM, on_sigterm)


def on_sigterm(signum: int, frame: FrameType | None) -> None:
    if _state["caught"]:
        return  # already on the way out
    if _in_finaliser(frame):
        _resend(0.02)
        return
    _resend(RESEND_SECONDS)
    raise Terminated()


def caught() -> None:
    """``main`` has the :class:`Terminated`: no fallback is needed, and further SIGTERMs
    do not interrupt the way out."""
    _state["caught"] = True


def _resend(after: float) -> None:
    def again() -> None:
        if not _state["caught"]:
            os.kill(os.getpid(), signal.SIGTERM)

    timer = threading.Timer(after, again)
    timer.daemon = True
    timer.start()


_FINALISERS = {"__del__", "cb", "remove", "_remove", "_remove_dead_weakref", "callback"}
"""Names of functions that run as finalisers or weakref callbacks (importlib's module
lock ``cb``, ``weakref``'s and ``_weakrefset``'s ``remove``): an exception raised in them
is dropped."""


def _in_finaliser(frame: FrameType | None) -> bool:
    return frame is not None and frame.f_code.co_name in _FINALISERS


def forget_interrupt() -> None:
    """Clear CPython's record of a KeyboardInterrupt that left an ``exec`` of source text
    (``dataclasses`` builds methods so, while a command's modules are imported): left set,
    ``python -m`` ends by killing itself with SIGINT instead of the status ``main``
    returned. Running any source text clears it."""
    exec("None")

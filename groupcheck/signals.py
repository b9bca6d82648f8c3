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

import contextlib
import os
import signal
import socket
import sys
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
    quiet_finalisers()
    raise Terminated()


def quiet_finalisers() -> None:
    """The command is being stopped by a signal: an exception that a finaliser meets on
    the way out (a Z3 object whose constructor the signal interrupted, deleted half made)
    is not printed — the way out is one line. The process exits afterwards, so the hook is
    not restored."""
    sys.unraisablehook = _ignore_unraisable


def _ignore_unraisable(unraisable: Any) -> None:
    return None


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


_INTERRUPTING = (signal.SIGTERM, signal.SIGINT)


class Z3Interrupter:
    """Interrupt a running Z3 query when SIGTERM or SIGINT arrives (issue 42).

    A Z3 query holds the main thread in C, where no Python signal handler runs until the
    query returns (``explore --engine bmc``, ``prove``: seconds, or never). CPython writes
    the number of every signal it receives to the file given to ``signal.set_wakeup_fd``;
    a thread reads it and, on SIGTERM or SIGINT, interrupts every Z3 query of the main
    context (``z3.main_ctx().interrupt()``, as the budget's watchdog does), so that the
    query returns at once and the main thread raises :class:`Terminated` (or
    ``KeyboardInterrupt``) on its way out — status 143 or 130 within a fraction of a
    second. Z3 is not imported here: the thread only interrupts it when it is loaded.
    A forked child does not share the wake-up file (it is reset in the child)."""

    def __init__(self) -> None:
        _active[0] = True
        self._read, self._write = socket.socketpair()
        self._write.setblocking(False)
        self._previous = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._watch, name="z3-interrupter", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            try:
                data = self._read.recv(64)
            except OSError:
                return
            if not data:
                return  # closed: the command is over
            if any(number in _INTERRUPTING for number in data):
                quiet_finalisers()
                interrupt_z3()

    def close(self) -> None:
        """Give the wake-up file back to whoever had it and stop the thread."""
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(self._previous)
        _active[0] = False
        with contextlib.suppress(OSError):
            self._write.close()
        with contextlib.suppress(OSError):
            self._read.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=1.0)
        self._read.close()


def interrupt_z3() -> None:
    """Interrupt the running queries of Z3's main context and of the proof obligations'
    own contexts (when Z3 is loaded)."""
    z3 = sys.modules.get("z3")
    if z3 is None:
        return
    with contextlib.suppress(Exception):
        z3.main_ctx().interrupt()
    # A proof obligation runs in a Z3 context of its own (invariants.z3.proof.obligations).
    runner = sys.modules.get("invariants.z3.proof.obligations")
    if runner is not None:
        with contextlib.suppress(Exception):
            runner.interrupt()


_active = [False]


def _reset_in_child() -> None:
    if not _active[0]:
        return
    _active[0] = False
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)


def surfaced(error: BaseException) -> BaseException | None:
    """The signal's exception behind ``error``: a :class:`Terminated` or
    ``KeyboardInterrupt`` that it was raised from, or that a ctypes call into Z3 turned
    into an ``ArgumentError`` (the handler ran while ctypes converted an argument: the
    original is gone, only its name is in the message)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, Terminated | KeyboardInterrupt):
            return seen
        seen = seen.__cause__ or seen.__context__
    if type(error).__name__ == "ArgumentError":
        text = str(error)
        if ": Terminated:" in text:
            return Terminated()
        if ": KeyboardInterrupt:" in text:
            return KeyboardInterrupt()
    return None

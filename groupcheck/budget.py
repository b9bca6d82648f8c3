"""A command's whole ``--budget``: a deadline every stage reads, and a watchdog behind it.

The engines stop themselves at their share of the budget (they check the clock between
states and walks), and the stages after a search — minimising a counterexample, measuring
the shortest one, shrinking the config, the reference rules' rebalance time — ask
:func:`remaining` how long they may take. Code that does not look at the clock (a user's
rule that never returns, a rules file that loops while it loads, a Z3 query) is stopped by
:func:`watchdog`: when the budget and its grace are spent, ``SIGALRM`` raises
:class:`BudgetExpired` in the main thread (and a running Z3 query is interrupted), naming
the stage that overran (:func:`stage`). The command then reports the run as inconclusive
(issue 42: ``explore --engine bmc --depth 1000 --budget 5`` ran until killed; issue 38:
``--budget 20`` took 38 s).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any

RESERVE = 0.1
"""The fraction of the budget kept for what follows the work (writing the run, printing,
the interpreter's exit): the stages share the rest (:func:`remaining`)."""
GRACE = 0.05
"""The watchdog fires this fraction of the budget after the stages' share ran out: the
engines' own checks come first, and the whole command stays within 10 % of
``--budget`` (issue 38: 20 s took 38 s)."""

_state: dict[str, Any] = {"deadline": None, "stage": "the search", "budget": None}


class BudgetExpired(BaseException):
    """The command's ``--budget`` ran out while ``stage`` was running (raised by the
    watchdog; a ``BaseException`` so that a user's ``except Exception`` does not keep it)."""

    def __init__(self, budget: float, stage: str) -> None:
        super().__init__(budget, stage)
        self.budget = budget
        self.stage = stage

    def __str__(self) -> str:
        return f"the time budget ({self.budget:g} s) ran out during {self.stage}"


def remaining() -> float | None:
    """Seconds left of the command's budget (None: no budget is running; never below 0)."""
    deadline = _state["deadline"]
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def share(budget: float | None) -> float | None:
    """``budget`` capped by what is left of the command's budget."""
    left = remaining()
    if left is None:
        return budget
    return left if budget is None else min(budget, left)


def expired() -> bool:
    """Whether the command's budget is spent."""
    left = remaining()
    return left is not None and left <= 0


def process_started() -> float:
    """When this process started, on the ``time.monotonic()`` clock (Linux: from
    ``/proc/self/stat``; elsewhere: now), so that a budget counts the interpreter's own
    start-up too."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22, starttime: clock ticks after boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0 <= age < 60 else now


def current_stage() -> str:
    return str(_state["stage"])


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Name what runs (``minimising the counterexample``, ``your rule X``): the watchdog
    says which stage overran."""
    previous = _state["stage"]
    _state["stage"] = name
    try:
        yield
    finally:
        _state["stage"] = previous


@contextmanager
def watchdog(budget: float | None, *, started: float | None = None) -> Iterator[None]:
    """Run the body under a budget of ``budget`` seconds (counted from ``started``, a
    ``time.monotonic()`` reading, default now): :func:`remaining` reads it, and past the
    budget and its grace :class:`BudgetExpired` is raised in the main thread. Without a
    budget, or off the main thread (no signal can be delivered there), only
    :func:`remaining` is set."""
    if budget is None:
        yield
        return
    begin = time.monotonic() if started is None else started
    saved = dict(_state)
    _fired[0] = None
    deadline = begin + budget * (1 - RESERVE)
    _state.update(deadline=deadline, budget=budget, stage="preparing the run")
    armed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous: Any = None
    timer: threading.Timer | None = None
    if armed:
        fire_in = max(0.001, deadline + GRACE * budget - time.monotonic())
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, fire_in)
        # A Z3 query holds the main thread in C, where no Python signal handler runs:
        # interrupt it from a thread at the same moment.
        timer = threading.Timer(fire_in, _interrupt_z3)
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if timer is not None:
                timer.cancel()
        _state.update(saved)


_FINALISERS = {"__del__", "cb", "remove", "_remove", "_remove_dead_weakref", "callback"}


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if frame is not None and frame.f_code.co_name in _FINALISERS:
        # An exception raised in a finaliser is dropped: try again a moment later.
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        return
    error = BudgetExpired(float(_state["budget"] or 0.0), current_stage())
    _fired[0] = error
    raise error


_fired: list[BudgetExpired | None] = [None]


def fired(error: BaseException) -> BudgetExpired | None:
    """The :class:`BudgetExpired` behind ``error``: itself, one it was raised from, or —
    when the watchdog's exception surfaced as another (a ctypes call into Z3 turns an
    exception raised during it into an ``ArgumentError``) — the last the watchdog raised."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, BudgetExpired):
            return seen
        seen = seen.__cause__ or seen.__context__
    return _fired[0]


def _interrupt_z3() -> None:
    z3 = sys.modules.get("z3")
    if z3 is None:
        return
    with suppress(Exception):
        z3.main_ctx().interrupt()
    # A proof obligation runs in a Z3 context of its own (invariants.z3.proof.obligations).
    runner = sys.modules.get("invariants.z3.proof.obligations")
    if runner is not None:
        with suppress(Exception):
            runner.interrupt()

"""Exit statuses of every ``groupcheck`` command (README "Exit status")."""

from __future__ import annotations

from invariants.verdict import Result

OK = 0
"""The check is complete and nothing is violated (or the command did its work)."""
VIOLATION = 1
"""A property is violated (a counterexample, a finding in a trace)."""
BAD_INPUT = 2
"""Bad input or usage: one line on stderr naming where and what; nothing was written."""
INCONCLUSIVE = 3
"""Nothing violated, but the check is incomplete (budget, missed witnesses, unknown)."""
INTERNAL_ERROR = 4
"""An unexpected failure of groupcheck itself (the traceback is saved to a file)."""
SETUP_MISSING = 5
"""``groupcheck kafka``: Java or the Kafka artifacts are missing (the line names the command
that installs them)."""
PORT_IN_USE = 6
"""``groupcheck kafka``: a port the broker or the proxy needs is taken."""
BROKER_NOT_READY = 7
"""``groupcheck kafka``: the broker exited or did not log that it started within its
timeout (the line quotes the last lines of its log)."""
USER_CODE_ERROR = 8
"""A user's code failed: a rules or mutants file (``--rules``, ``mutants --from``) raised,
exited or ran out of memory while it loaded, or one of its rules did so, kept taking
memory past ``--user-memory`` or returned a value of the wrong type (the lines name the
rule, the file, the step and the path, and the traceback of the user's own frames;
``groupcheck.usercode``)."""
INTERRUPTED = 130
"""Ctrl-C (143 for SIGTERM): the run's partial output was removed."""


def exit_code(result: Result | str) -> int:
    """The exit status of a check's result."""
    value = Result(result)
    if value is Result.VIOLATION:
        return VIOLATION
    return INCONCLUSIVE if value is Result.INCONCLUSIVE else OK


def worst(*codes: int) -> int:
    """The status of several checks: a violation first, then an internal error, then a
    user's code failing, then bad input, then inconclusive, then ok."""
    for code in (VIOLATION, INTERNAL_ERROR, USER_CODE_ERROR, BAD_INPUT, INCONCLUSIVE):
        if code in codes:
            return code
    return OK

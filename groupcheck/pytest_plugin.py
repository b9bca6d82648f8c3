"""A pytest plugin for a user's own test suite (docs/json.md, "From Python and pytest").

Load it from your ``conftest.py``::

    pytest_plugins = ["groupcheck.pytest_plugin"]

It gives the fixture ``groupcheck``, whose ``assert_passes(preset, rules=...)`` checks a
config under your rules (``groupcheck.api.check``) and fails the test with the verdict
explained — the violated property, the counterexample's path code for ``groupcheck
replay`` and the comparison with the reference rules — unless it is ``ok``; and
``assert_valid(trace)`` does so for a trace (``groupcheck.api.validate``). Both hold no
state between tests, so ``pytest -n auto`` runs them in parallel. An inconclusive
verdict (a bound or the budget cut the search, a witness was missed) fails
``assert_passes`` too; ``allow_inconclusive=True`` accepts it when a violation is all
the test rules out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groupcheck import api


class GroupcheckFixture:
    """The ``groupcheck`` fixture: assertions over ``groupcheck.api``'s verdicts."""

    check = staticmethod(api.check)
    validate = staticmethod(api.validate)
    config = staticmethod(api.config)
    mutants = staticmethod(api.mutants)
    prove = staticmethod(api.prove)

    def assert_passes(
        self, preset: str | Any = None, *, allow_inconclusive: bool = False, **options: Any
    ) -> api.Verdict:
        """Check (``api.check`` with ``options``) and fail the test unless the verdict is
        ``ok`` — or, with ``allow_inconclusive``, at least not a violation."""
        verdict = api.check(preset, **options)
        accepted = ("ok", "inconclusive") if allow_inconclusive else ("ok",)
        if verdict.result not in accepted:
            pytest.fail(verdict.explain(), pytrace=False)
        return verdict

    def assert_valid(
        self, trace: str | Path, mode: str = "safety", **options: Any
    ) -> api.TraceVerdict:
        """Validate (``api.validate``) and fail the test unless the trace is ``ok``."""
        verdict = api.validate(trace, mode, **options)
        if not verdict.ok:
            pytest.fail(verdict.explain(), pytrace=False)
        return verdict


@pytest.fixture
def groupcheck() -> GroupcheckFixture:
    """Check configs under your rules and validate your traces (``GroupcheckFixture``)."""
    return GroupcheckFixture()

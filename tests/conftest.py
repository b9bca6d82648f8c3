"""Hypothesis profiles for the test suite: the engine's one table
(``groupcheck.explore.hypothesis_engine.PROFILES``) registered as Hypothesis settings.
``ci`` is the suite's default (derandomized, so a run is repeatable); ``dev`` and
``deep`` on request (``HYPOTHESIS_PROFILE=dev``), with the example database in
``.hypothesis/``. Tests take the loaded profile as it is: none sets its own example count.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import z3
from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase

from groupcheck.explore.hypothesis_engine import PROFILES, hypothesis_settings
from tests.slowlist import SLOW_TESTS, listed, read_entries

_DB = DirectoryBasedExampleDatabase(".hypothesis/examples")

for _name in PROFILES:
    if _name == "ci":
        settings.register_profile(
            _name,
            hypothesis_settings(_name, derandomize=True, print_blob=True, database=None),
        )
    else:
        settings.register_profile(_name, hypothesis_settings(_name, database=_DB))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The suite already runs one test per core (``-n auto``): an ``explore`` a test starts
# without ``--workers`` runs on one process rather than forking a worker per core from a
# test worker. The tests of the parallel engine and of the default pass or unset it.
os.environ.setdefault("GROUPCHECK_WORKERS", "1")


SOLVER_TIMEOUT_FACTOR = 10
"""Z3's ``timeout`` is wall-clock time: on a loaded machine a query the suite needs
answered (a BMC depth, an obligation) can pass it, and the test then fails on ``unknown``.
The suite asks the same questions with ten times the time each solver is given, so only a
query that never ends is cut (its ``unknown`` still fails the test; no test turns green by
a cut). Tests that check the unknown verdict monkeypatch ``check`` instead."""


def _patient(original: Any) -> Any:
    def set_option(self: Any, *args: Any, **keys: Any) -> Any:
        if len(args) == 2 and args[0] == "timeout" and isinstance(args[1], int):
            args = ("timeout", args[1] * SOLVER_TIMEOUT_FACTOR)
        if isinstance(keys.get("timeout"), int):
            keys["timeout"] *= SOLVER_TIMEOUT_FACTOR
        return original(self, *args, **keys)

    return set_option


for _solver in (z3.Solver, z3.Optimize):
    _solver.set = _patient(_solver.set)  # type: ignore[method-assign]


def pytest_xdist_auto_num_workers(config: object) -> int:
    """``-n auto``: the cores this process may use, capped by a container's CPU quota
    (xdist itself counts the host's CPUs there)."""
    from groupcheck.cores import usable_cores

    return usable_cores()


SPARK_MODULES = (
    "tests/groupcheck/pipeline/test_pipeline_bfs.py",
    "tests/groupcheck/pipeline/test_pipeline_spark.py",
)
"""The modules of the tests that start or use a JVM (mark ``spark``): under ``--dist
loadgroup`` they are one work unit, so one xdist worker and one JVM run them, first (the
largest unit), while the other workers run the rest. (xdist's own ``xdist_group`` mark
renames the tests' node ids, which pytest 9.2 no longer lets it do; the scheduler below
groups by module instead.)"""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test ``tests/slow_tests.txt`` lists is marked ``slow`` (``make check`` leaves
    them out; ``tests/slowlist.py``). Every ``spark`` test lives in ``SPARK_MODULES``, or
    the grouping would miss it."""
    slow = frozenset(read_entries(SLOW_TESTS.read_text(encoding="utf-8")))
    for item in items:
        if listed(item.nodeid, slow):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("spark") and item.nodeid.split("::")[0] not in SPARK_MODULES:
            raise pytest.UsageError(f"{item.nodeid}: a spark test outside SPARK_MODULES")
        if item.get_closest_marker("kafka") and not item.nodeid.startswith(KAFKA_DIR):
            raise pytest.UsageError(f"{item.nodeid}: a kafka test outside {KAFKA_DIR}")


KAFKA_DIR = "tests/groupcheck/kafka/"
"""The tests that start or use a real Kafka broker (mark ``kafka``): one work unit too, so
one xdist worker runs them all and they share one broker
(``tests/groupcheck/kafka/conftest.py``)."""


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: xdist's group scheduling with the ``SPARK_MODULES`` as one group
    and the tests under ``KAFKA_DIR`` as another."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class SparkGroup(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", maxsplit=1)[0]
            if module in SPARK_MODULES:
                return "spark"
            if module.startswith(KAFKA_DIR):
                return "kafka"
            return str(super()._split_scope(nodeid))

    return SparkGroup(config, log)

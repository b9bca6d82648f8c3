"""Hypothesis profiles for the test suite: the engine's one table
(``groupcheck.explore.hypothesis_engine.PROFILES``) registered as Hypothesis settings.
``ci`` is the suite's default (derandomized, so a run is repeatable); ``dev`` and
``deep`` on request (``HYPOTHESIS_PROFILE=dev``), with the example database in
``.hypothesis/``. Tests take the loaded profile as it is: none sets its own example count.
"""

from __future__ import annotations

import os

from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase

from groupcheck.explore.hypothesis_engine import PROFILES, hypothesis_settings

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


def pytest_xdist_auto_num_workers(config: object) -> int:
    """``-n auto``: the cores this process may use, capped by a container's CPU quota
    (xdist itself counts the host's CPUs there)."""
    from groupcheck.cores import usable_cores

    return usable_cores()

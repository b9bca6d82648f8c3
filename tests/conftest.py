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

"""Hypothesis profiles: ``ci`` is the default under CI=true, ``dev`` otherwise,
``deep`` on request (HYPOTHESIS_PROFILE=deep). The example database lives in .hypothesis/."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

_DB = DirectoryBasedExampleDatabase(".hypothesis/examples")

settings.register_profile(
    "ci",
    max_examples=50,
    deadline=None,
    derandomize=True,
    print_blob=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=200, deadline=None, database=_DB)
settings.register_profile("deep", max_examples=2000, deadline=None, database=_DB)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev")
)

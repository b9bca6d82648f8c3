"""The import contracts of pyproject.toml (``[tool.importlinter]``): the layers
groupcheck > reports > invariants > model, the standard library only in ``model``, z3,
pyspark and kio each confined to its room. ``make lint`` runs the same check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept() -> None:
    linter = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
    assert "0 broken" in done.stdout

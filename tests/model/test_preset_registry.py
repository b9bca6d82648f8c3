"""The preset registry (``model/preset_registry.py``, issue 39): each preset registers
itself where it is declared, beside its family; ``model.presets`` collects them. A second
preset of a registered name is refused, and ``PRESETS`` keeps its order whichever
family's module is imported first."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from model import preset_registry
from model.classic import presets as classic_presets
from model.migration import presets as migration_presets
from model.preset_registry import register
from model.presets import (
    BENCHMARK_PRESETS,
    DELETION_PRESETS,
    EXAMPLES,
    MUT2,
    OFFSET_PRESETS,
    PRESETS,
    SCENARIOS,
    TINY,
    preset,
)


def test_a_second_preset_of_a_registered_name_is_refused() -> None:
    """Declaring a preset under a name already registered is one clear error naming the
    preset and both kinds, in whichever family module it is declared — a benchmark's name
    included — and registers nothing."""
    before = (dict(PRESETS), dict(BENCHMARK_PRESETS))
    with pytest.raises(ValueError, match=r"preset 'TINY' is declared twice \(of kind 'example'"):
        register(replace(TINY, max_perturbations=1), kind="example")
    with pytest.raises(
        ValueError, match=r"'CLASSIC_EAGER' .* kind 'classic', then of kind 'migration'"
    ):
        register(classic_presets.CLASSIC_EAGER, kind="migration")
    with pytest.raises(ValueError, match=r"'MUT2_LOSS4' is declared twice \(of kind 'benchmark'"):
        register(replace(MUT2, name="MUT2_LOSS4"), kind="scenario")
    assert (dict(PRESETS), dict(BENCHMARK_PRESETS)) == before
    assert preset("tiny") is TINY


def test_a_name_preset_cannot_find_is_refused() -> None:
    """``preset`` looks a name up in upper case, so a lower-case name is refused; so is an
    unknown kind."""
    with pytest.raises(ValueError, match="not upper-case"):
        register(replace(TINY, name="Tiny2"), kind="example")
    with pytest.raises(ValueError, match="unknown kind 'classics'"):
        register(replace(TINY, name="TINY2"), kind="classics")  # type: ignore[arg-type]
    assert "TINY2" not in PRESETS


def test_presets_is_read_only() -> None:
    """``PRESETS`` and ``BENCHMARK_PRESETS`` are views of the registry: only ``register``
    adds to them."""
    with pytest.raises(TypeError):
        PRESETS["TINY"] = TINY  # type: ignore[index]
    with pytest.raises(TypeError):
        BENCHMARK_PRESETS["MUT2"] = MUT2  # type: ignore[index]


def test_presets_are_the_kinds_in_order() -> None:
    """``PRESETS`` lists the kinds in ``LISTED_KINDS``'s order, each in the order of
    declaration, and leaves the benchmarks out; every preset is declared in the module of
    its family."""
    kinds = (
        EXAMPLES,
        SCENARIOS,
        classic_presets.CLASSIC,
        classic_presets.CLASSIC_SCENARIOS,
        OFFSET_PRESETS,
        DELETION_PRESETS,
        migration_presets.MIGRATION_PRESETS,
    )
    assert kinds == tuple(preset_registry.of_kind(k) for k in preset_registry.LISTED_KINDS)
    assert list(PRESETS) == [c.name for kind in kinds for c in kind]
    assert list(BENCHMARK_PRESETS) == ["MUT2_LOSS2", "MUT2_LOSS4", "MUT3_LOSS2"]
    assert not set(PRESETS) & set(BENCHMARK_PRESETS)
    assert {c.protocol for c in classic_presets.CLASSIC + classic_presets.CLASSIC_SCENARIOS} == {
        "classic"
    }
    assert {c.protocol for c in migration_presets.MIGRATION_PRESETS} == {"mixed"}


def test_the_order_does_not_depend_on_which_module_is_imported_first() -> None:
    """Importing a family's presets module before ``model.presets`` (which imports the
    families' modules before declaring its own presets) gives the same ``PRESETS``."""
    code = (
        "import model.migration.presets, model.classic.presets\n"
        "from model.presets import PRESETS\n"
        "print(' '.join(PRESETS))\n"
    )
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root, env=env
    )
    out = run.stdout
    assert out.split() == list(PRESETS)

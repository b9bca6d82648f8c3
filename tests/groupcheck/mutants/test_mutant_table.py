"""The mutant catalogue's table in docs/bugs.md is rendered from the entries
(groupcheck/mutants/table.py), and each entry's kill agrees with its docs/bugs.md entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from groupcheck.mutants import MUTANTS
from groupcheck.mutants.table import BEGIN, END, render_markdown
from invariants.check import all_properties
from invariants.liveness import WITNESSES

ROOT = Path(__file__).resolve().parents[3]
BUGS = (ROOT / "docs" / "bugs.md").read_text(encoding="utf-8")


def test_the_docs_table_is_current() -> None:
    assert BUGS.count(BEGIN) == 1
    assert BUGS.count(END) == 1
    between = BUGS.split(BEGIN)[1].split(END)[0]
    assert between == "\n" + render_markdown(), (
        "run: python -m groupcheck.mutants.table --into docs/bugs.md"
    )


def test_the_table_has_a_row_per_mutant() -> None:
    rows = [line for line in render_markdown().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(MUTANTS)


def _entries() -> dict[str, str]:
    parts = re.split(r"^### `([\w-]+)`\n", BUGS, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_entry_kill_is_the_docs_kill(name: str) -> None:
    """``Mutant.killed_by`` is what docs/bugs.md's entry says kills the mutant: a property,
    or a witness of the scenario's whose loss kills it; a known survivor names none."""
    mutant = MUTANTS[name]
    entry = _entries()[name]
    if mutant.survivor:
        assert mutant.killed_by == ""
        assert "**Killed by:** none — a known survivor" in entry
        return
    found = re.search(r"\*\*Killed by:\*\* (witness lost, )?`([\w.]+)`", entry)
    assert found is not None, name
    assert found.group(2) == mutant.killed_by
    witnesses = {w.prop.name for w in WITNESSES}
    if found.group(1):
        assert mutant.killed_by in witnesses
        assert mutant.killed_by in (mutant.config.required_witnesses or ())
    else:
        assert mutant.killed_by in {p.name for p in all_properties()}

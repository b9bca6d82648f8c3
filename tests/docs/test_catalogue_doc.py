"""docs/invariants.md lists every property of the catalogue."""

from __future__ import annotations

from pathlib import Path

from invariants.check import all_properties

DOC = Path(__file__).resolve().parents[2] / "docs" / "invariants.md"


def test_every_property_is_in_the_catalogue_table() -> None:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    missing = []
    for prop in all_properties():
        row = next(
            (r for r in rows if r.startswith(f"| `{prop.name}` | {prop.kind.value} |")), None
        )
        if row is None:
            missing.append(f"{prop.name} ({prop.kind.value})")
    assert not missing, f"docs/invariants.md does not list: {', '.join(missing)}"


def test_every_expression_has_a_formula() -> None:
    text = DOC.read_text(encoding="utf-8")
    for prop in all_properties():
        if prop.expr is not None:
            assert text.count(f"| `{prop.name}` |") >= 2, f"no formula row for {prop.name}"

"""The catalogue table of docs/invariants.md, generated from the property registry
(``invariants.properties.PROPERTIES``: every property and witness, registered where it is
declared, in declaration order).

``python -m reports.catalogue [--into docs/invariants.md]`` prints the table, or writes it
between the markers of the doc (``tests/docs/test_invariants_tables.py`` checks the doc
is current).
"""

from __future__ import annotations

import re

import invariants.liveness  # noqa: F401  (declares Convergence and the witnesses)
from invariants.properties import PROPERTIES, Property
from model.config import FAMILIES
from reports.publish import table_command

BEGIN, END = "<!-- invariants-catalogue:begin -->", "<!-- invariants-catalogue:end -->"
"""The markers of the generated table in docs/invariants.md."""

HEADER = ("| Property | Kind | Families | Description | Reference |", "|---|---|---|---|---|")


def _families(prop: Property) -> str:
    """The families a property reads, in ``model.family``'s order; ``all`` for every one."""
    if prop.families >= frozenset(FAMILIES):
        return "all"
    return ", ".join(f for f in FAMILIES if f in prop.families)


def _cell(text: str) -> str:
    """``text`` in a markdown table cell: the name of a registered property in code
    quotes, ``|`` escaped."""
    names = sorted((n for n in PROPERTIES.names() if n in text), key=len, reverse=True)
    if names:
        pattern = "|".join(re.escape(n) for n in names)
        text = re.sub(rf"(?<![\w.`])({pattern})(?![\w`])", r"`\1`", text)
    return text.replace("|", "\\|")


def _row(prop: Property) -> str:
    description = prop.description + (" " + prop.note if prop.note else "")
    return (
        f"| `{prop.name}` | {prop.kind.value} | {_families(prop)} | {_cell(description)} "
        f"| {_cell(prop.reference)} |"
    )


def render_markdown() -> str:
    """Every registered property, in declaration order: its name, kind, families,
    description (with the doc's note) and reference."""
    return "\n".join([*HEADER, *(_row(p) for p in PROPERTIES)]) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m reports.catalogue [--into docs/invariants.md]``: print the table, or
    write it between the markers of a doc."""
    return table_command(
        argv,
        prog="python -m reports.catalogue",
        description="print the catalogue of properties and witnesses (markdown)",
        begin=BEGIN,
        end=END,
        render=render_markdown,
    )


if __name__ == "__main__":
    raise SystemExit(main())

"""The catalogue's table in docs/bugs.md, rendered from the mutants' entries
(``groupcheck.mutants.MUTANTS``): per mutant its scenario, Rules field, the property (or
witness) that kills it and the depth at which BMC finds its symbolic variant.

``python -m groupcheck.mutants.table --into docs/bugs.md`` rewrites the table between the
markers; tests/groupcheck/mutants/test_mutant_table.py checks the doc holds what this renders.
"""

from __future__ import annotations

from groupcheck.mutants import MUTANTS, Mutant
from invariants.liveness import WITNESSES
from reports.publish import table_command

BEGIN, END = "<!-- mutants-table:begin -->", "<!-- mutants-table:end -->"
"""The markers of the rendered table in docs/bugs.md."""


def _killed_by(mutant: Mutant, witnesses: frozenset[str]) -> str:
    if mutant.survivor:
        return "none (a known survivor)"
    if mutant.killed_by in witnesses:
        return f"witness lost, `{mutant.killed_by}`"
    return f"`{mutant.killed_by}`"


def _bmc(mutant: Mutant) -> str:
    if mutant.bmc_depth is not None:
        return str(mutant.bmc_depth)
    if mutant.lasso_depth is not None:
        return f"{mutant.lasso_depth} (lasso)"
    if mutant.outside:
        return "outside the relations"
    return "—"


def render_markdown() -> str:
    """The table, one row a catalogue mutant in the catalogue's order. BMC depth: the
    entry's ``bmc_depth`` (``explore --engine bmc --mutant M``'s default depth for a safety
    variant) or ``lasso_depth`` (its shortest lasso's, for a kill by Convergence only); "—"
    where the entry has neither: the classic client layer's search runs to
    ``classic_client_bmc.DEFAULT_DEPTH``, a lost witness or a survivor has no path
    (docs/invariants.md, "Bounded model checking")."""
    witnesses = frozenset(w.prop.name for w in WITNESSES)
    lines = [
        "| Mutant | Scenario | Rules field | Killed by | BMC depth |",
        "|---|---|---|---|---|",
    ]
    for m in MUTANTS.values():
        fields = ", ".join(f"`{f}`" for f in m.fields)
        lines.append(
            f"| `{m.name}` | `{m.config.name}` | {fields} | {_killed_by(m, witnesses)} "
            f"| {_bmc(m)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m groupcheck.mutants.table [--into docs/bugs.md]``: print the table, or
    write it between the markers of a doc."""
    return table_command(
        argv,
        prog="python -m groupcheck.mutants.table",
        description="print the mutant catalogue's table (markdown)",
        begin=BEGIN,
        end=END,
        render=render_markdown,
    )


if __name__ == "__main__":
    raise SystemExit(main())

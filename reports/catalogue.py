"""The catalogue table of docs/invariants.md, generated from the property registry
(``invariants.properties.PROPERTIES``: every property and witness, registered where it is
declared, in declaration order).

``python -m reports.catalogue [--into docs/invariants.md]`` prints the table, or writes it
between the markers of the doc (``tests/docs/test_invariants_tables.py`` checks the doc
is current).
"""

from __future__ import annotations

import re
import sys

import invariants.liveness  # noqa: F401  (declares Convergence and the witnesses)
from invariants.expr import (
    And,
    Cmp,
    Const,
    Exists,
    Expr,
    Fn,
    ForAll,
    Implies,
    Not,
    Or,
    Rel,
    Same,
    Var,
)
from invariants.properties import FRESH_TARGET, PROPERTIES, Property
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


# --------------------------------------------------------------------------- formulas

FORMULAS_BEGIN = "<!-- invariants-formulas:begin -->"
FORMULAS_END = "<!-- invariants-formulas:end -->"
"""The markers of the generated formula table in docs/invariants.md."""

_CMP = {"==": "=", "!=": "≠", "<=": "≤", "<": "<", ">=": "≥", ">": ">"}
_WHEN = {"now": "", "pre": "′", "post": "″"}
_ATOM, _NOT, _AND, _OR, _IMPLIES, _QUANTIFIER = range(6)


def _args(args: tuple[Var, ...]) -> str:
    return "(" + ",".join(v.name for v in args) + ")"


def _term(term: Fn | Const) -> str:
    if isinstance(term, Const):
        return f"−{-term.value}" if term.value < 0 else str(term.value)
    return term.name + _WHEN[term.when] + _args(term.args)


def _class(e: Expr) -> int:
    if isinstance(e, Not):
        return _NOT
    if isinstance(e, And):
        return _AND
    if isinstance(e, Or):
        return _OR  # an iff too: parenthesised among conjuncts
    if isinstance(e, Implies):
        return _IMPLIES
    if isinstance(e, ForAll | Exists):
        return _QUANTIFIER
    return _ATOM


def _operand(e: Expr, bare: frozenset[int], tail: bool) -> str:
    """``e`` as an operand: in parentheses unless its class is in ``bare`` — a quantifier,
    whose body reaches to the end, only at the ``tail`` of the whole formula."""
    k = _class(e)
    if k in bare or (k == _QUANTIFIER and tail):
        return formula(e, tail=tail)
    return f"({formula(e)})"


def _iff(e: Expr) -> tuple[Expr, Expr] | None:
    """``(a, b)`` when ``e`` is ``(a ∧ b) ∨ (¬a ∧ ¬b)``, printed ``a ↔ b``."""
    if not isinstance(e, Or) or len(e.parts) != 2:
        return None
    both, neither = e.parts
    if isinstance(both, And) and len(both.parts) == 2:
        a, b = both.parts
        if neither == And((Not(a), Not(b))):
            return a, b
    return None


_ASCENDING = frozenset({"<=", "<"})


def _chains(parts: tuple[Expr, ...]) -> list[tuple[int, list[Expr]]]:
    """The conjuncts ``parts``, consecutive ascending comparisons that share a term
    (``x ≤ y``, ``y < z``) grouped into one chain, each with the index of its last."""
    out: list[tuple[int, list[Expr]]] = []
    for i, part in enumerate(parts):
        if out and isinstance(part, Cmp) and part.op in _ASCENDING:
            before = out[-1][1][-1]
            if isinstance(before, Cmp) and before.op in _ASCENDING and before.right == part.left:
                out[-1] = (i, [*out[-1][1], part])
                continue
        out.append((i, [part]))
    return out


def _chain(chain: list[Expr]) -> str:
    """``x ≤ y < z`` for the comparisons ``x ≤ y`` and ``y < z``."""
    cmps = [c for c in chain if isinstance(c, Cmp)]
    return _term(cmps[0].left) + "".join(f" {_CMP[c.op]} {_term(c.right)}" for c in cmps)


def formula(e: Expr, *, tail: bool = True) -> str:
    """``e`` in the notation of docs/invariants.md: ``′`` marks a symbol of the state
    before a step, ``″`` after; ``fresh`` abbreviates ``FRESH_TARGET``; ``¬`` binds
    tightest, then ``∧``, ``∨`` (and ``↔``) and ``→`` (to the right); ``∧`` and ``∨``
    mixed are parenthesised; a quantifier's body reaches to the end; ascending comparisons
    that share a term are chained (``0 ≤ x ≤ y``)."""
    if e == FRESH_TARGET:
        return "fresh"
    if isinstance(e, Rel):
        return e.name + _WHEN[e.when] + _args(e.args)
    if isinstance(e, Cmp):
        return f"{_term(e.left)} {_CMP[e.op]} {_term(e.right)}"
    if isinstance(e, Same):
        return f"{e.left.name} = {e.right.name}"
    if isinstance(e, Not):
        return "¬" + _operand(e.body, frozenset({_ATOM, _NOT}), tail)
    iff = _iff(e)
    if iff is not None:
        bare = frozenset({_ATOM, _NOT})
        return f"{_operand(iff[0], bare, False)} ↔ {_operand(iff[1], bare, tail)}"
    if isinstance(e, And):
        bare = frozenset({_ATOM, _NOT, _AND})
        last = len(e.parts) - 1
        return " ∧ ".join(
            _chain(chain) if len(chain) > 1 else _operand(chain[0], bare, tail and i == last)
            for i, chain in _chains(e.parts)
        )
    if isinstance(e, Or):
        bare = frozenset({_ATOM, _NOT, _OR})
        last = len(e.parts) - 1
        return " ∨ ".join(
            _operand(part, bare, tail and i == last) for i, part in enumerate(e.parts)
        )
    if isinstance(e, Implies):
        premise = _operand(e.premise, frozenset({_ATOM, _NOT, _AND, _OR}), False)
        conclusion = _operand(e.conclusion, frozenset({_ATOM, _NOT, _AND, _OR, _IMPLIES}), tail)
        return f"{premise} → {conclusion}"
    symbol = "∀" if isinstance(e, ForAll) else "∃"
    return f"{symbol}{','.join(v.name for v in e.vars)}. {formula(e.body)}"


def render_formulas() -> str:
    """The formula of every state and step property, in declaration order."""
    rows = [
        f"| `{p.name}` | {formula(p.expr).replace('|', chr(92) + '|')} |"
        for p in PROPERTIES
        if p.expr is not None
    ]
    return "\n".join(["| Property | Formula |", "|---|---|", *rows]) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m reports.catalogue [--formulas] [--into docs/invariants.md]``: print a
    table, or write it between its markers in a doc."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--formulas" in args:
        args.remove("--formulas")
        return table_command(
            args,
            prog="python -m reports.catalogue --formulas",
            description="print the formula of every state and step property (markdown)",
            begin=FORMULAS_BEGIN,
            end=FORMULAS_END,
            render=render_formulas,
        )
    return table_command(
        args,
        prog="python -m reports.catalogue",
        description="print the catalogue of properties and witnesses (markdown); "
        "--formulas: the formulas of the state and step properties",
        begin=BEGIN,
        end=END,
        render=render_markdown,
    )


if __name__ == "__main__":
    raise SystemExit(main())

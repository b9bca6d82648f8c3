"""Unrolled transition relations asserted once per step rather than once per family: the
conjuncts the families of a step share (their frame conditions above all: what most families
leave as it was) stated once, each with the selectors of the families that have it — or, when
most have it, those of the families that do not (explanatory frame axioms, as in SAT-based
bounded model checking: Biere, Cimatti, Clarke, Zhu, "Symbolic Model Checking without BDDs",
TACAS 1999, and the frame axioms of Reiter's situation calculus) — for a step that takes
exactly one family (:func:`one_of`).

Each family's formula ``Implies(sel, And(c1, ..., cn))`` is otherwise asserted whole: a
family repeats the frame conditions of every variable it leaves alone (the group, every
other client and connection in ``classic_client_bmc``), so a step of ``F`` families asserts
about ``F`` times the state's frame, and the solver propagates each copy.
"""

from __future__ import annotations

from typing import Any

import z3

BoolRef = Any


def conjuncts(formula: BoolRef) -> list[BoolRef]:
    """The conjuncts of ``formula`` below its nested conjunctions (each once)."""
    out: dict[int, BoolRef] = {}
    todo = [formula]
    seen: set[int] = set()
    while todo:
        e = todo.pop()
        i = e.get_id()
        if i in seen:
            continue
        seen.add(i)
        if z3.is_and(e):
            todo.extend(e.children())
        elif not z3.is_true(e):
            out[i] = e
    return list(out.values())


def one_of(selectors: list[Any], formulas: list[BoolRef]) -> list[BoolRef]:
    """A step that takes exactly one of the families (``selectors[i]`` chooses
    ``formulas[i]``), stated by the conjuncts of the formulas (:func:`conjuncts`): a
    conjunct every family has is asserted as it is; one most families have is
    ``Or(c, *the selectors of the families without it)`` (a change of its variables is
    explained by the families that may make it); any other goes into ``Implies(sel,
    And(...))`` of each family that has it. With exactly one selector true, these say
    ``formulas[i]`` of the one chosen, as ``Implies(selectors[i], formulas[i])`` for
    every i does: the same steps."""
    owners: dict[int, list[int]] = {}
    terms: dict[int, BoolRef] = {}
    for i, f in enumerate(formulas):
        for c in conjuncts(f):
            owners.setdefault(c.get_id(), []).append(i)
            terms[c.get_id()] = c
    n = len(selectors)
    own: list[list[BoolRef]] = [[] for _ in selectors]
    out: list[BoolRef] = [z3.Or(*selectors), z3.AtMost(*selectors, 1)]
    for key, fams in owners.items():
        c = terms[key]
        if len(fams) == n:
            out.append(c)
        elif 2 * len(fams) > n:
            others = sorted(set(range(n)) - set(fams))
            out.append(z3.Or(c, *[selectors[j] for j in others]))
        else:
            for i in fams:
                own[i].append(c)
    out += [z3.Implies(sel, z3.And(*cs)) for sel, cs in zip(selectors, own, strict=True) if cs]
    return out

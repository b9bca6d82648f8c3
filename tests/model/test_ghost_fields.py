"""Ghost fields are kept apart from the protocol's at the record (issue 39): each record's
``GHOST`` names exactly the fields documented as ghost bookkeeping, and they come last."""

from __future__ import annotations

import ast
import inspect
import itertools
from dataclasses import fields

import pytest

from model.records import Client, Group, Record


def _docstrings(cls: type) -> dict[str, str]:
    body = ast.parse(inspect.getsource(cls)).body[0].body  # type: ignore[attr-defined]
    return {
        node.target.id: after.value.value
        for node, after in itertools.pairwise(body)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }


@pytest.mark.parametrize("cls", [Group, Client])
def test_ghost_names_the_fields_documented_as_ghosts(cls: type[Record]) -> None:
    ghost: frozenset[str] = cls.GHOST  # type: ignore[attr-defined]
    documented = {
        name for name, doc in _docstrings(cls).items() if doc.startswith("Ghost bookkeeping")
    }
    assert ghost == documented
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    assert set(names[len(names) - len(ghost) :]) == ghost, "ghost fields come last"
    assert "GHOST" not in names

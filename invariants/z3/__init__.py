"""The Z3 reading of the property language (``invariants.expr``).

A property is defined once, as an ``Expr``; ``invariants.expr.compile_expr`` reads it in
Python and this package reads it in Z3: :func:`encode` unrolls it over the finite domains
of a :class:`SymbolicStructure`, :func:`assert_snapshot` pins the structure to a concrete
snapshot, :func:`decode` turns a Z3 model back into a snapshot so every Z3 answer can be
re-checked with the Python predicate (``invariants.z3.check``).

This is the only package allowed to import ``z3`` (import-linter contract).
"""

from invariants.z3.encode import (
    Domains,
    SymbolicStructure,
    assert_snapshot,
    decode,
    encode,
    signature,
)

__all__ = [
    "Domains",
    "SymbolicStructure",
    "assert_snapshot",
    "decode",
    "encode",
    "signature",
]

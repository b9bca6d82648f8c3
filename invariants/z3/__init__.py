"""The Z3 reading of the property language (``invariants.expr``).

A property is defined once, as an ``Expr``; ``invariants.expr.compile_expr`` reads it in
Python and this package reads it in Z3: :func:`encode` unrolls it over the finite domains
of a :class:`SymbolicStructure`, :func:`assert_snapshot` pins the structure to a concrete
snapshot, :func:`decode` turns a Z3 model back into a snapshot so every Z3 answer can be
re-checked with the Python predicate (``invariants.z3.check``).

This is the only package allowed to import ``z3`` (import-linter contract).
"""

import z3 as _z3

from invariants.z3.encode import (
    Domains,
    SymbolicStructure,
    assert_snapshot,
    decode,
    encode,
    signature,
)

# Z3 catches Ctrl-C during a query itself (its ``ctrl_c`` parameter) and answers
# "unknown", so the interrupt never reaches Python: the command would carry on and report
# the query as inconclusive. Off, a SIGINT reaches Python's handler, and a running query
# is interrupted by ``groupcheck.signals.Z3Interrupter`` (status 130, issue 42).
_z3.set_param("ctrl_c", False)

__all__ = [
    "Domains",
    "SymbolicStructure",
    "assert_snapshot",
    "decode",
    "encode",
    "signature",
]

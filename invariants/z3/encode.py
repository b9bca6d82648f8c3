"""Encode an ``invariants.expr`` expression into Z3 over a finite symbolic structure.

The Python reading (``compile_expr``) evaluates an expression on one concrete snapshot. The
Z3 reading keeps the domains concrete — the same tuples of clients, members and
partitions a snapshot has — and makes the *contents* symbolic:

* one ``Bool`` per relation instance: relation name × argument tuple × ``when``;
* one ``Int`` per function instance: function name × argument tuple × ``when``;
* quantifiers are unrolled over the finite domains (``ForAll`` → conjunction, ``Exists`` →
  disjunction), so the encoding is quantifier-free;
* ``Same`` compares the two bound elements statically (Python equality, exactly as the
  Python reading does), so it becomes ``True`` or ``False``.

:func:`assert_snapshot` fixes every variable to a concrete snapshot (a function tuple the
snapshot does not list takes ``FUNCTION_DEFAULT``, as in the Python reading);
:func:`decode` turns a Z3 model back into a concrete ``Snapshot`` / ``StepSnapshot`` so
every answer can be re-checked with the Python predicate.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import z3

from invariants.expr import (
    FUNCTION_DEFAULT,
    And,
    Cmp,
    Const,
    Exists,
    Expr,
    ForAll,
    Implies,
    IntTerm,
    Not,
    Or,
    Rel,
    Same,
    Snapshot,
    Sort,
    StepSnapshot,
    Structure,
    When,
    atoms,
    side,
)

SORTS: tuple[Sort, ...] = ("client", "member", "partition")
SymbolKind = Literal["rel", "fn"]
SymbolKey = tuple[SymbolKind, str, When]
"""A symbol as ``invariants.expr.symbols`` names it: ``(kind, name, when)``."""
Signature = dict[SymbolKey, tuple[Sort, ...]]
"""Argument sorts of every symbol an expression uses."""
Element = object
Args = tuple[Element, ...]
Binding = Mapping[str, Element]

BoolRef = Any  # z3.BoolRef: z3 ships no type stubs
ArithRef = Any  # z3.ArithRef
ModelRef = Any  # z3.ModelRef


class HasDomains(Protocol):
    """Anything with finite domains per sort: ``Snapshot``, ``StepSnapshot``, ``Domains``."""

    def domain(self, sort: Sort) -> tuple[object, ...]: ...


@dataclass(frozen=True, slots=True)
class Domains:
    """The finite domains a symbolic structure ranges over, shaped like a ``Snapshot``'s."""

    clients: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    partitions: tuple[tuple[str, int], ...] = ()

    def domain(self, sort: Sort) -> tuple[object, ...]:
        if sort == "client":
            return self.clients
        if sort == "member":
            return self.members
        return self.partitions

    @staticmethod
    def of(structure: HasDomains) -> Domains:
        """The domains of a snapshot (for a step snapshot: the union of pre and post, as
        the Python reading quantifies over)."""
        if isinstance(structure, Domains):
            return structure
        return Domains(
            clients=tuple(structure.domain("client")),  # type: ignore[arg-type]
            members=tuple(structure.domain("member")),  # type: ignore[arg-type]
            partitions=tuple(structure.domain("partition")),  # type: ignore[arg-type]
        )

    def same_elements(self, other: Domains) -> bool:
        return all(set(self.domain(s)) == set(other.domain(s)) for s in SORTS)


# --------------------------------------------------------------------------- signature


def signature(*exprs: Expr) -> Signature:
    """The argument sorts of every relation and function symbol the expressions use.

    ``invariants.expr.symbols`` names the symbols but not their arity; the sorts are read
    off the variables each symbol is applied to. A symbol applied to different sorts in
    different places is an error (the structure could not have one table for it).
    """
    out: Signature = {}

    def note(key: SymbolKey, sorts: tuple[Sort, ...]) -> None:
        seen = out.setdefault(key, sorts)
        if seen != sorts:
            raise ValueError(
                f"{key[0]} {key[1]!r} ({key[2]}) is applied to sorts {seen} and {sorts}"
            )

    for expr in exprs:
        for atom in atoms(expr):
            kind: SymbolKind = "rel" if isinstance(atom, Rel) else "fn"
            note((kind, atom.name, atom.when), tuple(v.sort for v in atom.args))
    return out


def _is_step(sig: Signature, step: bool | None) -> bool:
    whens = {when for (_, _, when) in sig}
    if "now" in whens and whens & {"pre", "post"}:
        raise ValueError("an expression mixes 'now' symbols with 'pre'/'post' symbols")
    inferred = bool(whens & {"pre", "post"}) if whens else None
    if step is None:
        return bool(inferred)
    if inferred is not None and inferred != step:
        kind = "step" if inferred else "state"
        raise ValueError(
            f"a {kind} expression cannot be read over a {'step' if step else 'state'} structure"
        )
    return step


# --------------------------------------------------------------------------- structure


def _show(element: Element) -> str:
    if isinstance(element, tuple) and len(element) == 2:
        return f"{element[0]}-{element[1]}"
    return str(element)


@dataclass
class SymbolicStructure:
    """Z3 variables for every relation and function instance over finite domains.

    ``relations[(name, when)][args]`` is a ``Bool``; ``functions[(name, when)][args]`` an
    ``Int``. A state structure uses ``when="now"`` only; a step structure (``step=True``)
    has ``pre`` and ``post`` copies of the symbols it uses, over one set of domains (a
    ``StepSnapshot`` quantifies over the union of its two snapshots' domains).
    """

    domains: Domains
    step: bool
    signature: Signature
    relations: dict[tuple[str, When], dict[Args, BoolRef]] = field(default_factory=dict)
    functions: dict[tuple[str, When], dict[Args, ArithRef]] = field(default_factory=dict)

    @staticmethod
    def build(domains: HasDomains, *exprs: Expr, step: bool | None = None) -> SymbolicStructure:
        """A structure for the symbols ``exprs`` use over ``domains``. ``step`` defaults to
        whether the expressions use ``pre``/``post`` symbols."""
        doms = Domains.of(domains)
        sig = signature(*exprs)
        sym = SymbolicStructure(doms, _is_step(sig, step), sig)
        for (kind, name, when), sorts in sorted(sig.items()):
            table: dict[Args, Any] = {}
            for args in itertools.product(*(doms.domain(s) for s in sorts)):
                label = f"{when}.{name}({','.join(_show(a) for a in args)})"
                if kind == "rel":
                    table[args] = z3.Bool(label)
                else:
                    table[args] = z3.Int(label)
            (sym.relations if kind == "rel" else sym.functions)[(name, when)] = table
        return sym

    @staticmethod
    def for_structure(structure: Structure, *exprs: Expr) -> SymbolicStructure:
        """A structure with the domains and the kind (state or step) of ``structure``."""
        return SymbolicStructure.build(structure, *exprs, step=isinstance(structure, StepSnapshot))

    # -- access

    def rel(self, name: str, args: Args, when: When = "now") -> BoolRef:
        """The ``Bool`` for ``name(args)`` at ``when``."""
        self._check_when(when)
        try:
            return self.relations[(name, when)][args]
        except KeyError:
            raise KeyError(
                f"no relation instance {when}.{name}{args!r} in this structure"
            ) from None

    def fn(self, name: str, args: Args = (), when: When = "now") -> ArithRef:
        """The ``Int`` for ``name(args)`` at ``when``."""
        self._check_when(when)
        try:
            return self.functions[(name, when)][args]
        except KeyError:
            raise KeyError(
                f"no function instance {when}.{name}{args!r} in this structure"
            ) from None

    def variables(self) -> Iterator[Any]:
        for rel_table in self.relations.values():
            yield from rel_table.values()
        for fn_table in self.functions.values():
            yield from fn_table.values()

    def sides(self) -> tuple[When, ...]:
        return ("pre", "post") if self.step else ("now",)

    def _check_when(self, when: When) -> None:
        if self.step and when == "now":
            raise ValueError("a step structure needs every symbol qualified with pre or post")
        if not self.step and when != "now":
            raise ValueError(f"a '{when}' symbol needs a step structure")


# --------------------------------------------------------------------------- encode


_CMP: dict[str, Any] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
}


def _conj(parts: list[BoolRef]) -> BoolRef:
    if not parts:
        return z3.BoolVal(True)
    return parts[0] if len(parts) == 1 else z3.And(*parts)


def _disj(parts: list[BoolRef]) -> BoolRef:
    if not parts:
        return z3.BoolVal(False)
    return parts[0] if len(parts) == 1 else z3.Or(*parts)


def _lookup(env: Binding, name: str) -> Element:
    try:
        return env[name]
    except KeyError:
        raise ValueError(f"variable {name!r} is not bound by a quantifier") from None


def _int(term: IntTerm, sym: SymbolicStructure, env: Binding) -> ArithRef:
    if isinstance(term, Const):
        return z3.IntVal(term.value)
    return sym.fn(term.name, tuple(_lookup(env, v.name) for v in term.args), term.when)


def encode(expr: Expr, sym: SymbolicStructure, env: Binding | None = None) -> BoolRef:
    """The quantifier-free Z3 formula for ``expr`` over ``sym``.

    Quantifiers are unrolled over ``sym``'s domains; bindings are lexically scoped (an inner
    quantifier re-using a variable name shadows the outer binding only inside its body).
    """
    return _encode(expr, sym, dict(env or {}))


def _encode(expr: Expr, sym: SymbolicStructure, env: dict[str, Element]) -> BoolRef:
    if isinstance(expr, Rel):
        return sym.rel(expr.name, tuple(_lookup(env, v.name) for v in expr.args), expr.when)
    if isinstance(expr, Cmp):
        return _CMP[expr.op](_int(expr.left, sym, env), _int(expr.right, sym, env))
    if isinstance(expr, Same):
        return z3.BoolVal(_lookup(env, expr.left.name) == _lookup(env, expr.right.name))
    if isinstance(expr, Not):
        return z3.Not(_encode(expr.body, sym, env))
    if isinstance(expr, And):
        return _conj([_encode(p, sym, env) for p in expr.parts])
    if isinstance(expr, Or):
        return _disj([_encode(p, sym, env) for p in expr.parts])
    if isinstance(expr, Implies):
        return z3.Implies(_encode(expr.premise, sym, env), _encode(expr.conclusion, sym, env))
    if isinstance(expr, ForAll | Exists):
        names = [v.name for v in expr.vars]
        instances = []
        for elements in itertools.product(*(sym.domains.domain(v.sort) for v in expr.vars)):
            inner = dict(env)
            inner.update(zip(names, elements, strict=True))
            instances.append(_encode(expr.body, sym, inner))
        return _conj(instances) if isinstance(expr, ForAll) else _disj(instances)
    raise TypeError(f"not an expression: {expr!r}")


# --------------------------------------------------------------------------- snapshots


def assert_snapshot(sym: SymbolicStructure, structure: Structure) -> list[BoolRef]:
    """Constraints fixing every variable of ``sym`` to its value in ``structure``.

    A function tuple the snapshot does not list takes ``FUNCTION_DEFAULT``; a relation tuple
    it does not list is false — both exactly as the Python reading.
    """
    if isinstance(structure, StepSnapshot) != sym.step:
        kind = "step" if sym.step else "state"
        raise ValueError(f"a {kind} structure cannot be fixed to a {type(structure).__name__}")
    if not sym.domains.same_elements(Domains.of(structure)):
        raise ValueError("the snapshot's domains differ from the symbolic structure's")
    out: list[BoolRef] = []
    for (name, when), rel_table in sym.relations.items():
        holding = side(structure, when).relations.get(name, frozenset())
        out.extend(var if args in holding else z3.Not(var) for args, var in rel_table.items())
    for (name, when), fn_table in sym.functions.items():
        values = side(structure, when).functions.get(name, {})
        out.extend(
            var == z3.IntVal(values.get(args, FUNCTION_DEFAULT)) for args, var in fn_table.items()
        )
    return out


def _snapshot(model: ModelRef, sym: SymbolicStructure, when: When) -> Snapshot:
    relations: dict[str, frozenset[Args]] = {}
    functions: dict[str, dict[Args, int]] = {}
    for (name, w), rel_table in sym.relations.items():
        if w == when:
            relations[name] = frozenset(
                args
                for args, var in rel_table.items()
                if z3.is_true(model.eval(var, model_completion=True))
            )
    for (name, w), fn_table in sym.functions.items():
        if w == when:
            functions[name] = {
                args: model.eval(var, model_completion=True).as_long()
                for args, var in fn_table.items()
            }
    d = sym.domains
    return Snapshot(d.clients, d.members, d.partitions, relations, functions)


def decode(model: ModelRef, sym: SymbolicStructure) -> Snapshot | StepSnapshot:
    """The concrete structure a Z3 model describes: relations hold at the tuples whose
    ``Bool`` is true, every function tuple gets its ``Int`` (variables the model leaves
    open are completed). Symbols ``sym`` does not have are absent (empty / default)."""
    if sym.step:
        return StepSnapshot(_snapshot(model, sym, "pre"), _snapshot(model, sym, "post"))
    return _snapshot(model, sym, "now")


def restrict(structure: Structure, sym: SymbolicStructure) -> Structure:
    """``structure`` cut down to ``sym``'s symbols and domains, with every function tuple
    explicit — what ``decode`` returns for a model of ``assert_snapshot(sym, structure)``."""

    def cut(snap: Snapshot, when: When) -> Snapshot:
        relations = {
            name: frozenset(a for a in table if a in snap.relations.get(name, frozenset()))
            for (name, w), table in sym.relations.items()
            if w == when
        }
        functions = {
            name: {a: snap.functions.get(name, {}).get(a, FUNCTION_DEFAULT) for a in table}
            for (name, w), table in sym.functions.items()
            if w == when
        }
        d = sym.domains
        return Snapshot(d.clients, d.members, d.partitions, relations, functions)

    if isinstance(structure, StepSnapshot):
        return StepSnapshot(cut(structure.pre, "pre"), cut(structure.post, "post"))
    return cut(structure, "now")

"""A small first-order language for properties: one definition, two readings.

A property is written once as an expression over a *snapshot* vocabulary (relations such as
``client_owns(c, p)``, functions such as ``member_epoch(m)``) with quantifiers over the
finite domains of a snapshot (clients, members, partitions). The same expression is
compiled to a Python predicate here and encoded into Z3 by ``invariants.z3``.

Step properties read two snapshots: a symbol is qualified ``pre`` or ``post``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

Sort = Literal["client", "member", "partition"]
When = Literal["now", "pre", "post"]
CmpOp = Literal["==", "!=", "<=", "<", ">=", ">"]


@dataclass(frozen=True, slots=True)
class Var:
    """A variable ranging over one finite domain of the snapshot."""

    name: str
    sort: Sort


@dataclass(frozen=True, slots=True)
class Rel:
    """A relation of the snapshot applied to variables: true or false."""

    name: str
    args: tuple[Var, ...]
    when: When = "now"


@dataclass(frozen=True, slots=True)
class Fn:
    """An integer function of the snapshot applied to variables."""

    name: str
    args: tuple[Var, ...] = ()
    when: When = "now"


@dataclass(frozen=True, slots=True)
class Const:
    """An integer constant."""

    value: int


IntTerm = Fn | Const


@dataclass(frozen=True, slots=True)
class Cmp:
    """Comparison of two integer terms."""

    op: CmpOp
    left: IntTerm
    right: IntTerm


@dataclass(frozen=True, slots=True)
class Same:
    """Two variables of one sort denote the same element."""

    left: Var
    right: Var


@dataclass(frozen=True, slots=True)
class Not:
    body: Expr


@dataclass(frozen=True, slots=True)
class And:
    parts: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or:
    parts: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Implies:
    premise: Expr
    conclusion: Expr


@dataclass(frozen=True, slots=True)
class ForAll:
    vars: tuple[Var, ...]
    body: Expr


@dataclass(frozen=True, slots=True)
class Exists:
    vars: tuple[Var, ...]
    body: Expr


Expr = Rel | Cmp | Same | Not | And | Or | Implies | ForAll | Exists


# --------------------------------------------------------------------------- builders


def forall(*vs: Var) -> Callable[[Expr], ForAll]:
    """``forall(m, p)(body)``."""
    return lambda body: ForAll(vs, body)


def exists(*vs: Var) -> Callable[[Expr], Exists]:
    """``exists(m)(body)``."""
    return lambda body: Exists(vs, body)


def all_of(*parts: Expr) -> And:
    return And(parts)


def any_of(*parts: Expr) -> Or:
    return Or(parts)


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The finite structure a property is evaluated on.

    ``relations`` maps a relation name to the set of argument tuples for which it holds;
    ``functions`` maps a function name to its values (a missing tuple means ``default``).
    Elements are strings for clients and members, ``(topic_id, index)`` for partitions.
    """

    clients: tuple[str, ...]
    members: tuple[str, ...]
    partitions: tuple[tuple[str, int], ...]
    relations: Mapping[str, frozenset[tuple[object, ...]]]
    functions: Mapping[str, Mapping[tuple[object, ...], int]]
    family: str = "consumer"
    """The protocol family of the state it projects: ``consumer`` or ``classic``."""

    def domain(self, sort: Sort) -> tuple[object, ...]:
        if sort == "client":
            return self.clients
        if sort == "member":
            return self.members
        return self.partitions


FUNCTION_DEFAULT = -100
"""Value of a function at a tuple the snapshot does not list (e.g. the epoch of a member
id that is not in the group)."""


@dataclass(frozen=True, slots=True)
class StepSnapshot:
    """Two snapshots over the union of their domains, for step properties."""

    pre: Snapshot
    post: Snapshot

    def domain(self, sort: Sort) -> tuple[object, ...]:
        a, b = self.pre.domain(sort), self.post.domain(sort)
        seen = dict.fromkeys(a)
        seen.update(dict.fromkeys(b))
        return tuple(seen)


Structure = Snapshot | StepSnapshot
Env = dict[str, object]
Compiled = Callable[[Structure, Env], bool]


def side(structure: Structure, when: When) -> Snapshot:
    """The snapshot a ``now``/``pre``/``post`` symbol is read from."""
    if isinstance(structure, Snapshot):
        if when != "now":
            raise ValueError(f"a '{when}' symbol needs a step snapshot")
        return structure
    if when == "now":
        raise ValueError("a step property must qualify every symbol with pre or post")
    return structure.pre if when == "pre" else structure.post


def _int(term: IntTerm) -> Callable[[Structure, Env], int]:
    if isinstance(term, Const):
        value = term.value
        return lambda s, env: value
    name, names, when = term.name, tuple(v.name for v in term.args), term.when

    def f(s: Structure, env: Env) -> int:
        table = side(s, when).functions.get(name, {})
        return table.get(tuple(env[n] for n in names), FUNCTION_DEFAULT)

    return f


_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
}


def compile_expr(expr: Expr) -> Compiled:
    """Compile an expression into a Python predicate over a snapshot and an environment."""
    if isinstance(expr, Rel):
        name, names, when = expr.name, tuple(v.name for v in expr.args), expr.when
        return lambda s, env: (
            tuple(env[n] for n in names) in side(s, when).relations.get(name, frozenset())
        )
    if isinstance(expr, Cmp):
        op, left, right = _OPS[expr.op], _int(expr.left), _int(expr.right)
        return lambda s, env: op(left(s, env), right(s, env))
    if isinstance(expr, Same):
        a, b = expr.left.name, expr.right.name
        return lambda s, env: env[a] == env[b]
    if isinstance(expr, Not):
        inner = compile_expr(expr.body)
        return lambda s, env: not inner(s, env)
    if isinstance(expr, And):
        parts = [compile_expr(p) for p in expr.parts]
        return lambda s, env: all(p(s, env) for p in parts)
    if isinstance(expr, Or):
        parts = [compile_expr(p) for p in expr.parts]
        return lambda s, env: any(p(s, env) for p in parts)
    if isinstance(expr, Implies):
        premise, conclusion = compile_expr(expr.premise), compile_expr(expr.conclusion)
        return lambda s, env: (not premise(s, env)) or conclusion(s, env)
    if isinstance(expr, ForAll | Exists):
        guarded = _compile_guarded(expr)
        if guarded is not None:
            return guarded
        body = compile_expr(expr.body)
        vs = expr.vars
        universal = isinstance(expr, ForAll)

        def loop(s: Structure, env: Env, i: int) -> bool:
            if i == len(vs):
                return body(s, env)
            v = vs[i]
            for element in s.domain(v.sort):
                env[v.name] = element
                if loop(s, env, i + 1) != universal:
                    return not universal
            return universal

        def quantified(s: Structure, env: Env) -> bool:
            # Restore outer bindings of the same names afterwards (lexical scoping).
            saved = {v.name: env.get(v.name, _MISSING) for v in vs}
            try:
                return loop(s, env, 0)
            finally:
                for n, value in saved.items():
                    if value is _MISSING:
                        env.pop(n, None)
                    else:
                        env[n] = value

        return quantified
    raise TypeError(f"not an expression: {expr!r}")


def _guard(expr: ForAll | Exists) -> Rel | None:
    """A relation atom that must hold for the body to matter: the premise (or a conjunct of
    it) of ``∀x. R(x…) ∧ … → φ``, or a conjunct of ``∃x. R(x…) ∧ …``. It must mention
    every quantified variable at most once so its tuples can bind them directly."""
    if isinstance(expr, ForAll):
        if not isinstance(expr.body, Implies):
            return None
        premise: Expr = expr.body.premise
    else:
        premise = expr.body
    atoms = (
        [premise]
        if isinstance(premise, Rel)
        else (list(premise.parts) if isinstance(premise, And) else [])
    )
    names = {v.name for v in expr.vars}
    for atom in atoms:
        if isinstance(atom, Rel):
            arg_names = [a.name for a in atom.args]
            if names & set(arg_names) and len(arg_names) == len(set(arg_names)):
                return atom
    return None


def _compile_guarded(expr: ForAll | Exists) -> Compiled | None:
    """Quantify by enumerating the guard relation's tuples instead of the domains: exact,
    because the body is trivially true (∀) or false (∃) where the guard is false."""
    guard = _guard(expr)
    if guard is None:
        return None
    body = compile_expr(expr.body)
    universal = isinstance(expr, ForAll)
    quantified = {v.name for v in expr.vars}
    guard_names = [a.name for a in guard.args]
    guard_sorts = {a.name: a.sort for a in guard.args}
    rest = [v for v in expr.vars if v.name not in set(guard_names)]
    name, when = guard.name, guard.when

    def evaluate(s: Structure, env: Env) -> bool:
        tuples = side(s, when).relations.get(name, frozenset())
        saved = {n: env.get(n, _MISSING) for n in quantified}
        domains = {n: set(s.domain(guard_sorts[n])) for n in guard_names if n in quantified}
        try:
            for t in tuples:
                ok = True
                for arg, value in zip(guard_names, t, strict=True):
                    if arg in quantified:
                        if value not in domains[arg]:  # quantifiers range over the domain
                            ok = False
                            break
                        env[arg] = value
                    elif env.get(arg, _MISSING) != value:
                        ok = False
                        break
                if not ok:
                    continue
                if _loop(rest, 0, s, env) != universal:
                    return not universal
            return universal
        finally:
            for n, v in saved.items():
                if v is _MISSING:
                    env.pop(n, None)
                else:
                    env[n] = v

    def _loop(vs: list[Var], i: int, s: Structure, env: Env) -> bool:
        if i == len(vs):
            return body(s, env)
        for element in s.domain(vs[i].sort):
            env[vs[i].name] = element
            if _loop(vs, i + 1, s, env) != universal:
                return not universal
        return universal

    return evaluate


_MISSING = object()


def witness(expr: Expr, structure: Structure) -> Env | None:
    """For a false expression, a variable binding that shows why: it descends through
    implications (premise true, conclusion false), conjunctions (the false part) and
    universal quantifiers (an element falsifying the body). ``None`` if it holds."""
    env: Env = {}
    return env if _falsify(expr, structure, env) else None


def _falsify(expr: Expr, s: Structure, env: Env) -> bool:
    """Extend ``env`` with a binding under which ``expr`` is false; return whether found."""
    if compile_expr(expr)(s, dict(env)):
        return False
    if isinstance(expr, Implies):
        _falsify(expr.conclusion, s, env)
        return True
    if isinstance(expr, And):
        for part in expr.parts:
            if _falsify(part, s, env):
                return True
        return True
    if isinstance(expr, ForAll):
        body = compile_expr(expr.body)
        vs = expr.vars

        def search(i: int) -> bool:
            if i == len(vs):
                return not body(s, env)
            for element in s.domain(vs[i].sort):
                env[vs[i].name] = element
                if search(i + 1):
                    return True
            env.pop(vs[i].name, None)
            return False

        if search(0):
            _falsify(expr.body, s, env)
        return True
    return True


def atoms(expr: Expr) -> Iterator[Rel | Fn]:
    """Every relation and function application in ``expr``, in order of appearance."""
    if isinstance(expr, Rel):
        yield expr
    elif isinstance(expr, Cmp):
        for term in (expr.left, expr.right):
            if isinstance(term, Fn):
                yield term
    elif isinstance(expr, Not):
        yield from atoms(expr.body)
    elif isinstance(expr, And | Or):
        for part in expr.parts:
            yield from atoms(part)
    elif isinstance(expr, Implies):
        yield from atoms(expr.premise)
        yield from atoms(expr.conclusion)
    elif isinstance(expr, ForAll | Exists):
        yield from atoms(expr.body)
    elif not isinstance(expr, Same):
        raise TypeError(f"not an expression: {expr!r}")


def symbols(expr: Expr) -> set[tuple[str, str, When]]:
    """Every relation and function symbol used: ``(kind, name, when)``."""
    return {("rel" if isinstance(a, Rel) else "fn", a.name, a.when) for a in atoms(expr)}

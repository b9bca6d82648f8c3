"""TLC's printed values, read into canonical Python values.

TLC prints the states it dumps (``-dump``) and its counterexamples in TLA+ syntax. This
reader covers the values the specification uses: integers, strings, booleans, model values
(read as strings), sets (``frozenset``), sequences (``Seq``), and records and functions
(``Fn``: sorted key/value pairs). A function whose domain is empty prints as ``<<>>`` in
TLC, so the empty function *is* the empty sequence here as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple


class Seq(NamedTuple):
    """A TLA+ sequence (tuple)."""

    items: tuple[Any, ...]


class Fn(NamedTuple):
    """A TLA+ function or record: its (key, value) pairs sorted by key."""

    items: tuple[tuple[Any, Any], ...]


EMPTY = Seq(())


def fn(pairs: dict[Any, Any]) -> Seq | Fn:
    """The canonical value of a function given as a dict (empty: ``<<>>``, as TLC prints)."""
    if not pairs:
        return EMPTY
    return Fn(tuple(sorted(pairs.items(), key=lambda kv: _sort_key(kv[0]))))


def _sort_key(k: Any) -> tuple[int, Any]:
    return (0, k) if isinstance(k, int) else (1, str(k))


class ValueError_(ValueError):
    """TLC printed something this reader does not understand."""


_TOKEN = re.compile(
    r'\s*(?:(?P<num>-?\d+)|(?P<str>"(?:[^"\\]|\\.)*")|(?P<op>\|->|:>|@@|<<|>>|[{}\[\](),])'
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_]*))"
)


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip() == "":
                return
            raise ValueError_(f"unexpected text at {pos}: {text[pos : pos + 30]!r}")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        yield kind, m.group(kind)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = list(_tokens(text))
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise ValueError_(f"expected {value or 'a value'}, got {tok}")
        self.i += 1
        return tok

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "num":
            return int(text)
        if kind == "str":
            return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        if kind == "id":
            if text == "TRUE":
                return True
            if text == "FALSE":
                return False
            return text  # a model value
        if text == "{":
            items = self._list("}")
            return frozenset(items)
        if text == "<<":
            return Seq(tuple(self._list(">>")))
        if text == "[":
            pairs: dict[Any, Any] = {}
            while True:
                _, name = self.take()
                self.take("|->")
                pairs[name] = self.value()
                if self.take()[1] == "]":
                    break
            return fn(pairs)
        if text == "(":
            pairs = {}
            while True:
                key = self.value()
                self.take(":>")
                pairs[key] = self.value()
                sep = self.take()[1]
                if sep == ")":
                    break
                if sep != "@@":
                    raise ValueError_(f"expected @@ or ), got {sep!r}")
            return fn(pairs)
        raise ValueError_(f"unexpected {text!r}")

    def _list(self, close: str) -> list[Any]:
        items: list[Any] = []
        tok = self.peek()
        if tok is not None and tok[1] == close:
            self.i += 1
            return items
        while True:
            items.append(self.value())
            sep = self.take()[1]
            if sep == close:
                return items
            if sep != ",":
                raise ValueError_(f"expected , or {close}, got {sep!r}")


def parse_value(text: str) -> Any:
    """One TLA+ value printed by TLC."""
    p = _Parser(text)
    v = p.value()
    if p.peek() is not None:
        raise ValueError_(f"trailing text after a value: {p.peek()}")
    return v


State = tuple[tuple[str, Any], ...]
"""A state: (variable, value) pairs sorted by variable name."""


_CONJUNCT = re.compile(r"^/\\ ", re.M)


def parse_state(block: str, cache: dict[str, Any] | None = None) -> State:
    """A state printed as ``/\\ var = value`` conjuncts. ``cache`` maps a value's text to
    its parsed value: the states of one dump share most of their variables' values."""
    out: dict[str, Any] = {}
    for raw in _CONJUNCT.split(block.strip()):
        part = raw.strip()
        if not part:
            continue
        name, eq, rest = part.partition(" = ")
        if not eq:
            raise ValueError_(f"not a variable assignment: {part[:40]!r}")
        if cache is None:
            out[name.strip()] = parse_value(rest)
            continue
        value = cache.get(rest)
        if value is None:
            value = cache[rest] = parse_value(rest)
        out[name.strip()] = value
    return tuple(sorted(out.items()))


def read_dump(path: str) -> Iterator[State]:
    """The states of a TLC ``-dump`` file."""
    block: list[str] = []
    cache: dict[str, Any] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("State ") and line.rstrip().endswith(":"):
                if block:
                    yield parse_state("".join(block), cache)
                block = []
            else:
                block.append(line)
    if "".join(block).strip():
        yield parse_state("".join(block), cache)

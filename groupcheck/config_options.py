"""The table of ``Config``'s options in docs/config.md, generated from the fields'
declarations (``model.config.option``: each field's category and families) and their
docstrings.

``python -m groupcheck.config_options [--into docs/config.md]`` prints the table, or writes
it between the markers of the doc (``tests/groupcheck/test_config_options.py`` checks the doc is
current).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from dataclasses import MISSING

from model.config import (
    CATEGORIES,
    FAMILIES,
    Config,
    option_families,
    options_of,
)
from model.versions import VERSION_OPTIONS
from reports.publish import table_command

BEGIN, END = "<!-- config-options:begin -->", "<!-- config-options:end -->"
"""The markers of the generated table in docs/config.md."""

_HEADINGS = {
    "setting": "Protocol settings",
    "switch": "Rule switches (Kafka versions and the model's variants)",
    "bound": "Exploration bounds",
    "expectation": "Checking expectations",
    "rules": "Injected rules",
}


def field_docstrings() -> dict[str, str]:
    """Each ``Config`` field's docstring (the string literal below its declaration)."""
    tree = ast.parse(inspect.getsource(Config))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = after.value.value
    return docs


def _first_sentence(text: str) -> str:
    """The first sentence of a docstring, on one line, in markdown."""
    text = " ".join(text.split())
    match = re.search(r"(?<!e\.g)(?<!i\.e)\.(\s|$)", text)
    if match:
        text = text[: match.start() + 1]
    return text.replace("``", "`").replace("|", "\\|")


def _default(name: str) -> str:
    f = Config.__dataclass_fields__[name]
    if f.default is MISSING:
        return "required"
    if name in VERSION_OPTIONS:
        return "from `kafka_version`"
    if name == "rules":
        return "`DEFAULT_RULES`"
    value = f.default
    if isinstance(value, frozenset):
        value = sorted(value)
    return f"`{value!r}`".replace("|", "\\|")


def _families(name: str) -> str:
    families = option_families(name)
    if families == frozenset(FAMILIES):
        return "all"
    return ", ".join(f for f in FAMILIES if f in families)


def _row(name: str, doc: str) -> str:
    return f"| `{name}` | {_families(name)} | {_default(name)} | {_first_sentence(doc)} |"


def render_markdown() -> str:
    """The options of ``Config`` by category: one table per category, in declaration
    order, each row the option, the families that may set it, its default and the first
    sentence of its docstring."""
    docs = field_docstrings()
    out: list[str] = []
    for category, what in CATEGORIES.items():
        names = options_of(category)
        out += [
            "",
            f"### {_HEADINGS[category]} ({len(names)})",
            "",
            _first_sentence(what[0].upper() + what[1:]) + ".",
            "",
            "| option | families | default | what it is |",
            "|---|---|---|---|",
        ]
        out += [
            f"| `{n}` | {_families(n)} | {_default(n)} | {_first_sentence(docs[n])} |"
            for n in names
        ]
    return "\n".join(out[1:]) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m groupcheck.config_options [--into docs/config.md]``: print the table,
    or write it between the markers of a doc."""
    return table_command(
        argv,
        prog="python -m groupcheck.config_options",
        description="print the table of Config's options by category and family (markdown)",
        begin=BEGIN,
        end=END,
        render=render_markdown,
    )


if __name__ == "__main__":
    raise SystemExit(main())

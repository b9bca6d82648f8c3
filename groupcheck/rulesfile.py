"""Protocol changes from a file: ``--rules FILE.py:NAME`` and ``groupcheck mutants --from FILE``.

A rules file is a Python module (it may import ``model``, ``invariants`` and
``groupcheck``) that defines, under ``NAME``, either a ``model.rules.Rules`` value or a
mapping of ``Rules`` field names to functions. Each function replaces the field of that
name and must be callable the way the model calls the default (``model/rules.py`` lists
every field and the Kafka rule it mirrors): the file is refused with one line naming the
field and what does not fit. A mutants file defines ``MUTANTS``, a list of mutants
(``groupcheck.mutants.Mutant`` values, or mappings with ``name``, ``field``,
``function``, ``scenario`` — a preset name or a ``Config`` — and optionally ``expected``,
``summary`` and ``bug``).

The file's path and SHA-256 travel with every counterexample found under it
(``counterexample.json``; the run directory keeps a copy of the file, which its
reproducers import).
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from groupcheck import budget
from groupcheck.mutants import Mutant
from groupcheck.usercode import load_module, running_user_code, wrap_rule
from invariants.check import all_properties
from model.config import Config
from model.presets import PRESETS
from model.rules import DEFAULT_RULES, Rules
from model.status import ConfigError

RULE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Rules))


@dataclass(frozen=True)
class RulesSource:
    """Where a rules change came from: the file, the name in it, the file's SHA-256 and
    the ``Rules`` fields it replaces."""

    path: str
    name: str
    sha256: str
    fields: tuple[str, ...]

    @property
    def label(self) -> str:
        """A short name for run directories and config names: ``rules-NAME``."""
        return f"rules-{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "name": self.name,
            "sha256": self.sha256,
            "fields": list(self.fields),
        }


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def import_file(path: str) -> ModuleType:
    """Import a Python file as a module of its own (named after its content's hash, so the
    same file imports once and two files never clash); one-line ``ConfigError``s."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{path}: no such file")
    try:
        digest = file_sha256(file)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror})") from None
    module_name = f"groupcheck_user_{digest[:16]}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    loader = spec.loader
    try:
        # The user's code: exits and prints cannot end or corrupt the command, a failure
        # is the user's (exit 8), and --budget's watchdog covers a file that never loads.
        with budget.stage(f"loading your file {path}"):
            load_module(module, lambda: loader.exec_module(module), file)
    except SyntaxError as e:
        del sys.modules[module_name]
        raise ConfigError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _parameters(fn: Callable[..., Any]) -> tuple[int, tuple[str, ...]]:
    """How the model calls a rule: its positional arity and its keyword-only names."""
    sig = inspect.signature(fn)
    positional = sum(
        1
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    )
    keywords = tuple(
        p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY and p.default is p.empty
    )
    return positional, keywords


def check_rule(field: str, fn: object, where: str) -> Callable[..., Any]:
    """``fn`` if it can replace the ``Rules`` field ``field``; else a one-line error."""
    if field not in RULE_FIELDS:
        raise ConfigError(
            f"{where}: {field!r} is not a Rules field; fields: {', '.join(RULE_FIELDS)}"
        )
    if not callable(fn):
        raise ConfigError(f"{where}: {field}: expected a function, got {type(fn).__name__}")
    default = getattr(DEFAULT_RULES, field)
    positional, keywords = _parameters(default)
    expected = f"{field}{inspect.signature(default)}"
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn  # a builtin or C callable: nothing to check
    try:
        sig.bind(*([None] * positional), **dict.fromkeys(keywords))
    except TypeError as e:
        name = getattr(fn, "__name__", type(fn).__name__)
        raise ConfigError(
            f"{where}: {name}{sig} cannot replace {expected.split('(', maxsplit=1)[0]}: {e} "
            f"(the model calls it as {_call_shape(positional, keywords)})"
        ) from None
    return fn


def _call_shape(positional: int, keywords: tuple[str, ...]) -> str:
    args = [f"arg{i + 1}" for i in range(positional)] + [f"{k}=…" for k in keywords]
    return "f(" + ", ".join(args) + ")"


def rules_from_value(value: object, where: str, file: str) -> tuple[Rules, tuple[str, ...]]:
    """A ``Rules`` value, or a mapping field → function applied to the default rules; with
    the fields that differ from the default, each run as the user's code from ``file``
    (``groupcheck.usercode.wrap_rule``)."""
    if isinstance(value, Rules):
        changed = tuple(
            f for f in RULE_FIELDS if getattr(value, f) is not getattr(DEFAULT_RULES, f)
        )
        wrapped = {f: wrap_rule(f, check_rule(f, getattr(value, f), where), file) for f in changed}
        return replace(value, **wrapped), changed
    if isinstance(value, Mapping):
        checked = {
            str(k): wrap_rule(str(k), check_rule(str(k), fn, where), file)
            for k, fn in value.items()
        }
        if not checked:
            raise ConfigError(f"{where}: the mapping replaces no Rules field")
        return replace(DEFAULT_RULES, **checked), tuple(checked)
    raise ConfigError(
        f"{where}: expected a Rules value or a mapping of Rules fields to functions, "
        f"got {type(value).__name__}"
    )


def load_rules(spec: str) -> tuple[Rules, RulesSource]:
    """``FILE.py:NAME`` → the rules it names and where they came from."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name.isidentifier():
        raise ConfigError(f"--rules {spec!r}: expected FILE.py:NAME (NAME a Python identifier)")
    module = import_file(path)
    if not hasattr(module, name):
        known = sorted(
            k
            for k, v in vars(module).items()
            if not k.startswith("_") and isinstance(v, Rules | Mapping) and v is not DEFAULT_RULES
        )
        hint = f"; it defines: {', '.join(known)}" if known else ""
        raise ConfigError(f"{path}: no name {name!r}{hint}")
    resolved = str(Path(path).resolve())
    rules, changed = rules_from_value(getattr(module, name), f"{path}:{name}", resolved)
    source = RulesSource(resolved, name, file_sha256(path), changed)
    return rules, source


SYMBOLIC_FIELDS: dict[str, str] = {
    "reconcile": "model.consumer.reconcile.kernel_rule",
    "validate_offset_commit": "model.consumer.coordinator.commit_kernel_rule",
}
"""The ``Rules`` fields a rules file may replace for ``prove`` and ``explore --engine bmc``,
each given as a kernel written against ``model/sets.py`` (made a rule by the function
named), which the KIP-848 relation runs with the Z3 backend: ``reconcile`` (the heartbeat)
and ``validate_offset_commit`` (the OffsetCommit)."""


def symbolic_refusal(rules: Rules, source: RulesSource) -> str | None:
    """Why the symbolic engines cannot read a rules file (None: they can): it replaces a
    field outside :data:`SYMBOLIC_FIELDS`, one of them by a plain function rather than a
    kernel, or by a kernel Z3 cannot read (``invariants.z3.proof.z3sets.unreadable``). A
    file replacing none of them is read as a replacement of ``reconcile``."""
    other = [f for f in source.fields if f not in SYMBOLIC_FIELDS]
    if other:
        return f"it replaces {', '.join(other)}"
    from invariants.z3.proof.z3sets import unreadable  # noqa: PLC0415  z3 off the CLI's startup

    for field in [f for f in SYMBOLIC_FIELDS if f in source.fields] or ["reconcile"]:
        kernel = getattr(getattr(rules, field), "kernel", None)
        if kernel is None:
            return f"its {field} is a plain function, not a kernel ({SYMBOLIC_FIELDS[field]})"
        with running_user_code():
            why = unreadable(kernel, field)
        if why is not None:
            return why
    return None


def with_rules(config: Config, rules: Rules, source: RulesSource) -> Config:
    """``config`` running ``rules`` (its name says so: ``CONFIG+rules-NAME``)."""
    return replace(config, rules=rules, name=f"{config.name}+{source.label}")


MUTANT_KEYS = ("name", "field", "function", "scenario", "expected", "summary", "bug", "also")
"""Keys of a mutant given as a mapping; ``also`` maps further Rules fields to functions
replaced together with ``field`` (a bug needing more than one wrong rule)."""


def load_mutants(path: str, known: Mapping[str, Any]) -> list[Any]:
    """The mutants a ``--from`` file defines (``MUTANTS``), checked: unique names (also
    against ``known``), real fields, callable as the model calls the field, a scenario
    that is a preset name or a ``Config``, an expected property that exists."""
    module = import_file(path)
    items = getattr(module, "MUTANTS", None)
    if not isinstance(items, list | tuple):
        raise ConfigError(f"{path}: define MUTANTS, a list of mutants")
    properties = {p.name for p in all_properties()}
    out: list[Mutant] = []
    names = set(known)
    for i, item in enumerate(items):
        where = f"{path}: MUTANTS[{i}]"
        if isinstance(item, Mutant):
            mutant = item
        elif isinstance(item, Mapping):
            unknown = sorted(set(item) - set(MUTANT_KEYS))
            if unknown:
                raise ConfigError(
                    f"{where}: unknown key {unknown[0]!r}; known: {', '.join(MUTANT_KEYS)}"
                )
            for key in ("name", "field", "function", "scenario"):
                if key not in item:
                    raise ConfigError(f"{where}: missing key {key!r}")
            also = item.get("also", {})
            if not isinstance(also, Mapping):
                raise ConfigError(f"{where}: also: expected a mapping of Rules fields to functions")
            mutant = Mutant(
                name=str(item["name"]),
                summary=str(item.get("summary", "")),
                bug=str(item.get("bug", "")),
                field=str(item["field"]),
                config=_scenario(item["scenario"], where),
                function=item["function"],
                expected=item.get("expected"),
                also=tuple((str(k), v) for k, v in also.items()),
            )
        else:
            raise ConfigError(f"{where}: expected a Mutant or a mapping, got {type(item).__name__}")
        where = f"{path}: mutant {mutant.name!r}"
        if not mutant.name or mutant.name in names:
            raise ConfigError(f"{where}: the name is empty or taken")
        names.add(mutant.name)
        check_rule(mutant.field, mutant.function, where)
        if len(set(mutant.fields)) != len(mutant.fields):
            raise ConfigError(f"{where}: a Rules field is replaced twice: {list(mutant.fields)}")
        for field, function in mutant.also:
            check_rule(field, function, where)
        if mutant.expected is not None and mutant.expected not in properties:
            raise ConfigError(f"{where}: expected property {mutant.expected!r} does not exist")
        resolved = str(Path(path).resolve())
        out.append(
            replace(
                mutant,
                function=wrap_rule(mutant.field, mutant.function, resolved),
                also=tuple((f, wrap_rule(f, fn, resolved)) for f, fn in mutant.also),
                source=resolved,
            )
        )
    return out


def _scenario(value: object, where: str) -> Config:
    if isinstance(value, Config):
        return value
    if isinstance(value, str) and value.upper() in PRESETS:
        return PRESETS[value.upper()]
    raise ConfigError(
        f"{where}: scenario must be a preset name or a Config; known presets: {', '.join(PRESETS)}"
    )

"""The grid of an exploration sweep and the plan made from it.

A grid file (JSON or TOML, by its suffix) names presets (``model/presets.py``), optional
mutants (``groupcheck mutants``), ``Config`` options (``model/config.py``) each with a list
of values, engines (``walk``, ``hypothesis``) and seeds. Every combination of preset ×
mutant × options × engine is a *cell*; every cell runs once per seed. Example
(docs/pipeline.md has the reference)::

    presets = ["TINY", "SMALL"]
    engines = ["walk", "hypothesis"]
    seed = 0                       # run k of a cell uses seed 0 + k (--runs N runs)

    [options]
    report_pending_additions = [false, true]

    [walk]
    max_steps = 60

    [hypothesis]
    examples = 10
    steps = 30

The plan is pure data (picklable, JSON-able): the cells, the seeds, the engine parameters.
Run ``i`` of the plan is cell ``i // len(seeds)`` with seed ``seeds[i % len(seeds)]``, so a
run's result depends only on its cell and seed, never on how the runs are split up.

A grid is refused before any cell is built when it is larger than the limits below
(docs/pipeline.md, "Limits"): the grid file's size, its cells, the plan's runs, the seeds and
the engine parameters.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from groupcheck.mutants import MUTANTS
from groupcheck.pipeline.errors import PipelineError
from groupcheck.rulesfile import load_rules
from model.config import INT32_MAX, KAFKA_INT_FIELDS, MODEL_BOUNDS, PERTURBATIONS, Config
from model.presets import PRESETS
from model.rules import Rules
from model.settings import OPTION_KINDS
from model.status import ConfigError
from model.trace.strict_json import MAX_INT_DIGITS, JsonTextError
from model.trace.strict_json import loads as strict_loads

ENGINES = ("walk", "hypothesis")
"""The engines a sweep fans out (BFS is exhaustive, not seeded: use ``groupcheck explore``)."""

GRID_KEYS = (
    "presets",
    "mutants",
    "rules",
    "options",
    "engines",
    "seed",
    "seeds",
    "walk",
    "hypothesis",
)

WALK_DEFAULTS = {"max_steps": 60}
HYPOTHESIS_DEFAULTS = {"examples": 10, "steps": 30}

MAX_GRID_BYTES = 1024 * 1024
"""The largest grid file read (1 MiB)."""
MAX_CELLS = 100_000
"""The most cells a grid may have (presets × mutants × option values × engines)."""
MAX_RUNS = 10_000_000
"""The most runs a plan may have (cells × seeds), and so the largest ``--runs``."""
MAX_SEED = 2**63 - 1
"""The largest seed (the ``seed`` column is an int64)."""
PARAM_LIMITS = {"max_steps": 100_000, "examples": 100_000, "steps": 10_000}
"""The largest value of each engine parameter (``walk.max_steps``, ``hypothesis.*``)."""


@dataclass(frozen=True)
class Cell:
    """One point of the grid: a preset, an optional mutant, option values, an engine."""

    index: int
    preset: str
    mutant: str | None
    options: tuple[tuple[str, Any], ...]
    engine: str
    rules: RulesRef | None = None

    @property
    def change(self) -> str | None:
        """The rules change of the cell: the mutant's name, ``rules-NAME``, or None."""
        return self.mutant or (self.rules.label if self.rules is not None else None)

    @property
    def label(self) -> str:
        """A readable, unique name: ``SMALL+mutant walk reorder=true``."""
        head = self.preset + (f"+{self.change}" if self.change else "")
        opts = " ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in self.options)
        return " ".join(part for part in (head, self.engine, opts) if part)

    @property
    def options_json(self) -> str:
        return json.dumps(dict(self.options), sort_keys=True, separators=(",", ":"))

    def config(self) -> Config:
        """The model config of this cell (cached per process)."""
        return _build_config(self.preset, self.mutant, self.rules, self.options)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "preset": self.preset,
            "mutant": self.mutant,
            "rules": self.rules.to_json() if self.rules is not None else None,
            "options": dict(self.options),
            "engine": self.engine,
            "label": self.label,
        }


@dataclass(frozen=True)
class RulesRef:
    """Rules from a file in a grid (``rules = ["file.py:NAME"]``): the file's text travels
    with the plan, so an executor on another machine imports the very file the driver read
    (``groupcheck.rulesfile``); its SHA-256 is part of the plan's fingerprint."""

    file: str
    name: str
    sha256: str
    source: str

    @property
    def label(self) -> str:
        return f"rules-{self.name}"

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "name": self.name, "sha256": self.sha256}

    def load(self) -> Rules:
        """The rules, imported from a copy of the file's text (one per process)."""
        copy = Path(tempfile.gettempdir()) / f"groupcheck-rules-{self.sha256[:16]}.py"
        if not copy.is_file():
            tmp = copy.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(self.source, encoding="utf-8")
            os.replace(tmp, copy)
        rules, source = load_rules(f"{copy}:{self.name}")
        if source.sha256 != self.sha256:
            raise PipelineError(f"{copy}: does not hold the rules file {self.file} any more")
        return rules


def read_rules_ref(spec: str, where: str, base: Path) -> RulesRef:
    """A grid's ``rules`` entry ``FILE.py:NAME`` (FILE relative to the grid file's
    directory), checked and read."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path:
        raise PipelineError(f"{where}: rules: expected FILE.py:NAME, got {spec!r:.60}")
    file = Path(path) if Path(path).is_absolute() else base / path
    try:
        _, source = load_rules(f"{file}:{name}")
    except ConfigError as e:
        raise PipelineError(f"{where}: rules: {e}") from None
    return RulesRef(str(file.resolve()), name, source.sha256, file.read_text(encoding="utf-8"))


@lru_cache(maxsize=256)
def _build_config(
    preset: str,
    mutant: str | None,
    rules: RulesRef | None,
    options: tuple[tuple[str, Any], ...],
) -> Config:
    config = PRESETS[preset]
    changes: dict[str, Any] = {}
    for name, value in options:
        if name == "perturbations":
            changes[name] = frozenset(value)
        else:
            changes[name] = tuple(value) if OPTION_KINDS[name] == "strings" else value
    if mutant is not None:
        changes["rules"] = MUTANTS[mutant].rules
    elif rules is not None:
        changes["rules"] = rules.load()
    change = mutant or (rules.label if rules is not None else None)
    name = config.name + (f"+{change}" if change else "")
    return replace(config, name=name, **changes)


@dataclass(frozen=True)
class ExplorePlan:
    """Everything that fixes a sweep's results: cells, seeds, engine parameters."""

    cells: tuple[Cell, ...]
    seeds: Sequence[int]  # a range for ``seed`` + ``--runs``, a tuple for a ``seeds`` list
    walk_max_steps: int
    hypothesis_examples: int
    hypothesis_steps: int

    @property
    def total(self) -> int:
        return len(self.cells) * len(self.seeds)

    def run(self, i: int) -> tuple[Cell, int]:
        """Cell and seed of run ``i``."""
        return self.cells[i // len(self.seeds)], self.seeds[i % len(self.seeds)]

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": [c.to_json() for c in self.cells],
            "seeds": _seeds_json(self.seeds),
            "walk": {"max_steps": self.walk_max_steps},
            "hypothesis": {"examples": self.hypothesis_examples, "steps": self.hypothesis_steps},
        }

    def fingerprint(self) -> str:
        """A digest of the plan: a rerun into the same directory must have the same one."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _seeds_json(seeds: Sequence[int]) -> Any:
    if isinstance(seeds, range) or (
        seeds and all(b == a + 1 for a, b in itertools.pairwise(seeds))
    ):
        return {"first": seeds[0], "count": len(seeds)}
    return list(seeds)


# --------------------------------------------------------------------------- parsing


def load_grid(path: str | Path, runs: int | None) -> ExplorePlan:
    """Read and check a grid file; ``runs`` is ``--runs`` (runs per cell)."""
    return parse_grid(read_grid_doc(path), runs, str(path))


def read_grid_doc(path: str | Path) -> object:
    """The document of a grid file (TOML or JSON, by its suffix), read within the limits."""
    p = Path(path)
    where = str(path)
    try:
        with p.open("rb") as f:
            data = f.read(MAX_GRID_BYTES + 1)
    except FileNotFoundError:
        raise PipelineError(f"{where}: no such grid file") from None
    except IsADirectoryError:
        raise PipelineError(f"{where}: is a directory, not a grid file") from None
    except OSError as e:
        raise PipelineError(f"{where}: cannot read the grid file ({e.strerror})") from None
    if len(data) > MAX_GRID_BYTES:
        raise PipelineError(
            f"{where}: a grid file is at most {MAX_GRID_BYTES} bytes; this one is larger"
        )
    suffix = p.suffix.lower()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PipelineError(f"{where}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if suffix == ".json":
        try:
            doc = strict_loads(text)
        except JsonTextError as e:
            raise PipelineError(
                f"{where}:{e.line}:{e.column}: malformed JSON grid: {e.reason}"
            ) from None
    elif suffix == ".toml":
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            reason = " ".join(str(e).split())
            raise PipelineError(f"{where}: malformed TOML grid: {reason}") from None
        except RecursionError:
            raise PipelineError(f"{where}: malformed TOML grid: nested too deeply") from None
        except ValueError:  # an integer longer than int() converts
            raise PipelineError(
                f"{where}: malformed TOML grid: an integer with more than {MAX_INT_DIGITS} digits"
            ) from None
    else:
        raise PipelineError(f"{where}: unknown grid format; name the file *.json or *.toml")
    return doc


def parse_grid(doc: object, runs: int | None, where: str = "grid") -> ExplorePlan:
    """Check a grid document (already parsed JSON/TOML) and make its plan."""
    if not isinstance(doc, dict):
        raise PipelineError(f"{where}: a grid is a table/object of keys, got {_kind(doc)}")
    unknown = sorted(set(doc) - set(GRID_KEYS))
    if "timed" in unknown:
        raise PipelineError(f"{where}: a timed grid; run it with 'groupcheck pipeline timed'")
    if unknown:
        raise PipelineError(
            f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(GRID_KEYS)}"
        )
    presets = _names(doc, "presets", where, required=True)
    for name in presets:
        if name.upper() not in PRESETS:
            raise PipelineError(
                f"{where}: presets: unknown preset {name!r}; known: {', '.join(PRESETS)}"
            )
    presets = [n.upper() for n in presets]
    engines = _names(doc, "engines", where, required=False) or ["walk"]
    for engine in engines:
        if engine not in ENGINES:
            raise PipelineError(
                f"{where}: engines: {engine!r} is not a pipeline engine; use {' or '.join(ENGINES)}"
            )
    mutants: list[str | None] = [None]
    if "mutants" in doc:
        mutants = []
        for name in _names(doc, "mutants", where, required=True, allow_none=True):
            if name in (None, "none"):
                mutants.append(None)
            elif name not in MUTANTS:
                raise PipelineError(
                    f"{where}: mutants: unknown mutant {name!r}; known: none, {', '.join(MUTANTS)}"
                )
            else:
                mutants.append(name)
    changes: list[tuple[str | None, RulesRef | None]] = [(m, None) for m in mutants]
    if "rules" in doc:
        base = Path(where).parent if where != "grid" else Path()
        for spec in _names(doc, "rules", where, required=True):
            changes.append((None, read_rules_ref(spec, where, base)))
    options = _options(doc.get("options", {}), where)
    seeds = _seeds(doc, runs, where)
    walk = _params(doc, "walk", WALK_DEFAULTS, where)
    hyp = _params(doc, "hypothesis", HYPOTHESIS_DEFAULTS, where)

    names = sorted(options)
    count = math.prod(len(options[n]) for n in names) * len(presets) * len(changes) * len(engines)
    if count > MAX_CELLS:
        raise PipelineError(
            f"{where}: the grid has {count:,} cells (presets × mutants × option values × "
            f"engines); at most {MAX_CELLS:,}: split it into several grids"
        )
    if count * len(seeds) > MAX_RUNS:
        raise PipelineError(
            f"{where}: {count:,} cells × {len(seeds):,} seeds are {count * len(seeds):,} runs; "
            f"a plan has at most {MAX_RUNS:,}: use fewer seeds or a smaller grid"
        )
    cells: list[Cell] = []
    for preset, (mutant, rules_ref) in itertools.product(presets, changes):
        for values in itertools.product(*(options[n] for n in names)):
            opts = tuple(zip(names, values, strict=True))
            for engine in engines:
                cell = Cell(len(cells), preset, mutant, opts, engine, rules_ref)
                try:
                    cell.config()
                except ConfigError as e:
                    raise PipelineError(
                        f"{where}: cell {cell.label!r} is not a valid config: {e}"
                    ) from None
                cells.append(cell)
    return ExplorePlan(
        cells=tuple(cells),
        seeds=seeds,
        walk_max_steps=walk["max_steps"],
        hypothesis_examples=hyp["examples"],
        hypothesis_steps=hyp["steps"],
    )


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, int) and not -(10**20) < value < 10**20:
        return "a number beyond 10**20 in size"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value!r:.60})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _names(
    doc: dict[str, Any], key: str, where: str, *, required: bool, allow_none: bool = False
) -> list[Any]:
    if key not in doc:
        if required:
            raise PipelineError(f"{where}: missing key {key!r} (a list of names)")
        return []
    value = doc[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise PipelineError(
            f"{where}: {key}: expected a non-empty list of names, got {_kind(value)}"
        )
    for item in value:
        if not isinstance(item, str) and not (allow_none and item is None):
            raise PipelineError(f"{where}: {key}: expected names (strings), got {_kind(item)}")
    return list(value)


def _options(raw: object, where: str) -> dict[str, list[Any]]:
    if not isinstance(raw, dict):
        raise PipelineError(
            f"{where}: options: expected a table of Config options, got {_kind(raw)}"
        )
    out: dict[str, list[Any]] = {}
    for name, value in raw.items():
        kind = OPTION_KINDS.get(name)
        if kind is None:
            raise PipelineError(
                f"{where}: options.{name}: not a Config option; known: "
                f"{', '.join(sorted(OPTION_KINDS))}"
            )
        # A list of values sweeps them; a single value fixes the option. A "strings" option
        # (perturbations, server_assignors) takes a list of names per value.
        if kind == "strings":
            values = value if value and all(isinstance(v, list) for v in value) else [value]
        else:
            values = value if isinstance(value, list) else [value]
        if not isinstance(values, list) or not values:
            raise PipelineError(f"{where}: options.{name}: expected a non-empty list of values")
        checked: list[Any] = []
        for v in values:
            checked.append(_option_value(name, kind, v, where))
        out[name] = checked
    return out


def _option_value(name: str, kind: str, value: object, where: str) -> Any:
    at = f"{where}: options.{name}"
    if kind == "bool":
        if not isinstance(value, bool):
            raise PipelineError(f"{at}: expected true or false, got {_kind(value)}")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise PipelineError(f"{at}: expected an integer, got {_kind(value)}")
        # The ranges Config checks (model/config.py), named here by the option.
        low, high = (1, INT32_MAX) if name in KAFKA_INT_FIELDS else (0, MODEL_BOUNDS.get(name))
        if value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f">= {low}"
            raise PipelineError(f"{at}: expected an integer in {span}, got {_kind(value)}")
        return value
    if kind == "str":
        if not isinstance(value, str):
            raise PipelineError(f"{at}: expected a string, got {_kind(value)}")
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PipelineError(f"{at}: expected a list of names, got {_kind(value)}")
    if name == "perturbations":
        bad = sorted(set(value) - PERTURBATIONS)
        if bad:
            raise PipelineError(
                f"{at}: unknown perturbation {bad[0]!r}; known: {', '.join(sorted(PERTURBATIONS))}"
            )
        return tuple(sorted(set(value)))
    return tuple(value)


def _seeds(doc: dict[str, Any], runs: int | None, where: str) -> Sequence[int]:
    if runs is not None and runs < 1:
        raise PipelineError(f"--runs must be at least 1, got {runs}")
    if runs is not None and runs > MAX_RUNS:
        raise PipelineError(f"--runs: at most {MAX_RUNS:,} runs per cell, got {runs:,}")
    if "seeds" in doc:
        if "seed" in doc:
            raise PipelineError(
                f"{where}: give either 'seed' (the first seed) or 'seeds', not both"
            )
        seeds = doc["seeds"]
        if (
            not isinstance(seeds, list)
            or not seeds
            or not all(
                isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= MAX_SEED for s in seeds
            )
        ):
            raise PipelineError(
                f"{where}: seeds: expected a non-empty list of integers in 0..{MAX_SEED}"
            )
        if len(set(seeds)) != len(seeds):
            raise PipelineError(f"{where}: seeds: a seed is listed twice")
        if runs is not None:
            if runs > len(seeds):
                raise PipelineError(
                    f"{where}: --runs {runs} but the grid lists only {len(seeds)} seeds"
                )
            seeds = seeds[:runs]
        return tuple(seeds)
    first = doc.get("seed", 0)
    if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first <= MAX_SEED:
        raise PipelineError(
            f"{where}: seed: expected an integer in 0..{MAX_SEED}, got {_kind(first)}"
        )
    if runs is None:
        raise PipelineError(
            f"{where}: no 'seeds' list in the grid; give --runs N (runs per grid cell)"
        )
    if first + runs - 1 > MAX_SEED:
        raise PipelineError(
            f"{where}: seed: seeds {first} … {first} + {runs - 1} go beyond {MAX_SEED}"
        )
    return range(first, first + runs)


def _params(doc: dict[str, Any], key: str, defaults: dict[str, int], where: str) -> dict[str, int]:
    raw = doc.get(key, {})
    if not isinstance(raw, dict):
        raise PipelineError(f"{where}: {key}: expected a table, got {_kind(raw)}")
    out = dict(defaults)
    for name, value in raw.items():
        if name not in defaults:
            raise PipelineError(
                f"{where}: {key}.{name}: unknown parameter; known: {', '.join(defaults)}"
            )
        limit = PARAM_LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
            raise PipelineError(
                f"{where}: {key}.{name}: expected an integer in 1..{limit:,}, got {_kind(value)}"
            )
        out[name] = value
    return out

"""A run's artifacts under ``reports/out/<run>/`` (git-ignored), written atomically.

A counterexample is data (README.md, Conventions): the config, the path of actions with its compact
code, the states along it, the violated property. It is written as a trace file
(``trace.ndjson``, docs/trace-format.md), as ``counterexample.json`` (the states in the
KIP's layout) and as ``reproduce.sh`` and ``reproduce.py``; a directory that exists is
complete (it is built under a temporary name and renamed into place).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

import networkx as nx

from invariants.itf import to_itf
from invariants.snapshot import project
from model.path import Path
from model.trace import path_lines
from reports.casestudy import describe_action, group_view
from reports.render.html import write_index
from reports.render.report import path_report

DEFAULT_OUT = FsPath("reports/out")


@dataclass(frozen=True)
class Counterexample:
    """Everything needed to understand and replay a violation."""

    path: Path
    property: str
    message: str
    preset: str | None
    mutant: str | None
    engine: str
    shortest: int | None = None
    original_length: int | None = None
    named_config: bool = True
    seed: int | None = None

    def cli(self) -> str:
        """The command that replays this counterexample (the Python reproducer when the
        config is not a named preset or mutant scenario)."""
        if not self.named_config:
            return "python reproduce.py  # the config was shrunk; see counterexample.json"
        parts = ["groupcheck", "replay"]
        if self.preset is not None:
            parts += ["--preset", self.preset]
        if self.mutant is not None:
            parts += ["--mutant", self.mutant]
        parts += ["--path", self.path.encode()]
        return " ".join(parts)

    def python(self) -> str:
        """A Python reproducer that rebuilds the config and replays the path."""
        lines = [
            "from dataclasses import replace",
            "from model.config import ClientSpec, Config",
            "from model.path import Path",
            "from invariants.check import Checker",
            "",
            f"config = {self.path.config!r}",
        ]
        if self.mutant is not None:
            lines += [
                "from groupcheck.mutants import get_mutant",
                f"config = replace(config, rules=get_mutant({self.mutant!r}).rules)",
            ]
        lines += [
            f"path = Path.decode(config, {self.path.encode()!r})",
            "checker = Checker()",
            "states = list(path.states())",
            "for pre, action, post in zip(states, path.actions, states[1:]):",
            "    found = checker.check_step(pre, action, post) + checker.check_state(post)",
            "    if found:",
            "        print(action, found)",
            "        break",
        ]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        states = list(self.path.states())
        steps = [
            {"step": i, "action": describe_action(a), "kind": a.kind, "group": group_view(s)}
            for i, (a, s) in enumerate(zip(self.path.actions, states[1:], strict=True), 1)
        ]
        return {
            "format": "groupcheck-counterexample",
            "version": 1,
            "property": self.property,
            "message": self.message,
            "engine": self.engine,
            "seed": self.seed,
            "preset": self.preset,
            "mutant": self.mutant,
            "config": repr(self.path.config),
            "length": len(self.path.actions),
            "shortest": self.shortest,
            "original_length": self.original_length,
            "code": self.path.encode(),
            "reproduce": self.cli(),
            "initial": group_view(states[0]),
            "steps": steps,
        }


def run_name(label: str) -> str:
    """A file-system-safe run name from a label."""
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", label).strip("-") or "run"


def default_run_label(ce: Counterexample) -> str:
    """``<scenario>-<mutant or default>-<engine>[-seed<N>]``: a rerun of the same command
    replaces its own directory, and runs that differ in scenario, mutant, engine or seed
    never replace each other's."""
    scenario = ce.preset or ce.path.config.name.split("+")[0]
    label = f"{scenario}-{ce.mutant or 'default'}-{ce.engine}"
    return label if ce.seed is None else f"{label}-seed{ce.seed}"


def write_counterexample(
    ce: Counterexample,
    out: FsPath = DEFAULT_OUT,
    name: str | None = None,
    graph: nx.DiGraph | None = None,
    graph_path: Sequence[Hashable] = (),
) -> FsPath:
    """Write the counterexample's directory with its HTML report (``index.html``, the
    pictures, ``explanation.txt``) and refresh ``out/index.html``; returns the directory.
    Never leaves a partial directory. ``graph`` is the explored state graph (small BFS
    runs) with ``graph_path`` its node keys along the counterexample."""
    out.mkdir(parents=True, exist_ok=True)
    final = out / run_name(name or default_run_label(ce))
    tmp = FsPath(tempfile.mkdtemp(dir=out, prefix=".partial-"))
    try:
        (tmp / "counterexample.json").write_text(json.dumps(ce.to_json(), indent=1) + "\n")
        (tmp / "trace.ndjson").write_text("\n".join(path_lines(ce.path)) + "\n")
        itf = to_itf([project(s) for s in ce.path.states()], ce.path.config.name)
        (tmp / "trace.itf.json").write_text(json.dumps(itf) + "\n")
        if ce.named_config:
            (tmp / "reproduce.sh").write_text("#!/bin/sh\n" + ce.cli() + "\n")
            os.chmod(tmp / "reproduce.sh", 0o755)
        (tmp / "reproduce.py").write_text(ce.python())
        states = list(ce.path.states())
        path_report(
            tmp,
            states,
            ce.path.actions,
            ce.property,
            ce.message,
            title=f"{final.name}: {ce.property}",
            config_text=repr(ce.path.config),
            reproduce=ce.cli() + "\n\n" + ce.python(),
            graph=graph,
            graph_path=graph_path,
        )
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    write_index(out)
    return final

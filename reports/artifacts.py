"""A run's artifacts under ``reports/out/<run>/`` (git-ignored), written atomically.

A counterexample is data (README.md, Conventions): the config, the path of actions with its compact
code, the states along it, the violated property. It is written as a trace file
(``trace.ndjson``, docs/trace-format.md), as ``counterexample.json`` (the states in the
KIP's layout), with its config as ``config.toml`` (the ``--config`` format), and as
``reproduce.sh`` and ``reproduce.py``; a directory that exists is complete
(``reports.publish``: built under a temporary name and moved into place). Every artifact
is a function of the run alone: the same seeded run gives the same bytes in any process.
"""

from __future__ import annotations

import json
import os
import pprint
import re
import shlex
import shutil
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

import networkx as nx

from invariants.itf import to_itf
from invariants.snapshot import project
from model.path import Path
from model.settings import config_to_mapping, config_to_toml
from model.trace import path_lines
from reports.casestudy import describe_action, group_view
from reports.publish import publishing
from reports.render.html import write_index
from reports.render.report import path_report

DEFAULT_OUT = FsPath("reports/out")
CONFIG_FILE = "config.toml"
RULES_FILE = "rules.py"
"""A run under rules from a file keeps a copy of that file (its reproducers import it)."""
"""Every run directory holds its config in the ``--config`` file format."""
REPRODUCE_SH = (
    '#!/bin/sh\n# Replays the counterexample from its run directory.\ncd "$(dirname "$0")"\n'
)


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
    rules: Mapping[str, Any] | None = None
    """Rules from a file (``--rules FILE.py:NAME``): ``file``, ``name``, ``sha256``,
    ``fields``; the run directory keeps a copy of the file as ``rules.py``."""

    def cli(self, rules_file: str | None = None) -> str:
        """The command that replays this counterexample: on a named preset (or mutant
        scenario), or — for a shrunk config or one from a file — on the run directory's
        ``config.toml``. The rules are the run directory's copy, or ``rules_file`` (the
        command printed after a run names the user's own file, so that it works from where
        it is printed and the file's own imports resolve)."""
        parts = ["groupcheck", "replay"]
        if not self.named_config:
            parts += ["--config", CONFIG_FILE]
        elif self.preset is not None:
            parts += ["--preset", self.preset]
        if self.mutant is not None:
            parts += ["--mutant", self.mutant]
        if self.rules is not None:
            parts += ["--rules", f"{shlex.quote(rules_file or RULES_FILE)}:{self.rules['name']}"]
        parts += ["--path", self.path.encode()]
        return " ".join(parts)

    def python(self) -> str:
        """A Python reproducer that rebuilds the config and replays the path, checking
        every property (Convergence included) as ``groupcheck replay`` does."""
        mapping = pprint.pformat(config_to_mapping(self.path.config), sort_dicts=False, width=88)
        lines = [
            "from dataclasses import replace",
            "",
            "from groupcheck.explore.run import replay_undecided",
            "from model.path import Path",
            "from model.presets import PRESETS",
            "from model.settings import config_from_mapping",
            "",
            f"config = config_from_mapping({mapping}, 'reproduce.py', PRESETS)",
        ]
        if self.mutant is not None:
            lines += [
                "from groupcheck.mutants import get_mutant",
                "",
                f"config = replace(config, rules=get_mutant({self.mutant!r}).rules)",
            ]
        if self.rules is not None:
            lines += [
                "import os",
                "",
                "from groupcheck.rulesfile import file_sha256, load_rules",
                "",
                "os.chdir(os.path.dirname(os.path.abspath(__file__)))",
                f"if file_sha256({RULES_FILE!r}) != {self.rules['sha256']!r}:",
                f'    print("note: {RULES_FILE} differs from the file the counterexample was '
                'found with")',
                f"rules, _ = load_rules({RULES_FILE + ':' + str(self.rules['name'])!r})",
                "config = replace(config, rules=rules)",
            ]
        lines += [
            f"path = Path.decode(config, {self.path.encode()!r})",
            "found, undecided = replay_undecided(path)",
            "if found is None and undecided is not None:",
            '    print(f"inconclusive: Convergence: {undecided.describe()}")',
            "elif found is None:",
            '    print("no property violated")',
            "else:",
            "    violations, step = found",
            "    for v in violations:",
            '        print(f"step {step}: {v.property}: {v.message}")',
            "    if any(v.property == 'Convergence' for v in violations):",
            "        from invariants.liveness import fair_loop",
            "        from reports.render.lasso import lasso_lines",
            "",
            "        lasso = fair_loop(list(path.states())[step], config)",
            "        if lasso is not None:",
            '            print("\\n".join(lasso_lines(lasso, step + 1)))',
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
            "rules": dict(self.rules) if self.rules is not None else None,
            "config": config_to_mapping(self.path.config),
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


def run_label(scenario: str, mutant: str | None, engine: str, seed: int | None) -> str:
    """``<scenario>-<mutant or default>-<engine>[-seed<N>]``: a rerun of the same command
    replaces its own directory, and runs that differ in scenario, mutant, engine or seed
    never replace each other's."""
    label = f"{scenario}-{mutant or 'default'}-{engine}"
    return label if seed is None else f"{label}-seed{seed}"


def default_run_label(ce: Counterexample) -> str:
    """The run label of a counterexample (``run_label``)."""
    scenario = ce.preset or ce.path.config.name.split("+")[0]
    change = ce.mutant or (f"rules-{ce.rules['name']}" if ce.rules is not None else None)
    return run_label(scenario, change, ce.engine, ce.seed)


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
    final = out / run_name(name or default_run_label(ce))
    with publishing(final, command="explore", property=ce.property) as tmp:
        (tmp / "counterexample.json").write_text(json.dumps(ce.to_json(), indent=1) + "\n")
        lines = path_lines(ce.path, mutant=ce.mutant, rules=ce.rules)
        (tmp / "trace.ndjson").write_text("\n".join(lines) + "\n")
        itf = to_itf([project(s) for s in ce.path.states()], ce.path.config.name)
        (tmp / "trace.itf.json").write_text(json.dumps(itf) + "\n")
        (tmp / CONFIG_FILE).write_text(config_to_toml(ce.path.config))
        if ce.rules is not None:
            shutil.copyfile(str(ce.rules["file"]), tmp / RULES_FILE)
        script = (
            '#!/bin/sh\n# Replays the counterexample from this directory.\ncd "$(dirname "$0")"\n'
        )
        (tmp / "reproduce.sh").write_text(script + ce.cli() + "\n")
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
            config_text=config_to_toml(ce.path.config),
            reproduce=ce.cli() + "\n\n" + ce.python(),
            graph=graph,
            graph_path=graph_path,
            config=ce.path.config,
        )
    write_index(out)
    return final

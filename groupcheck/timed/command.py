"""``groupcheck simulate --timed``: a preset's group forming in simulated time."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from groupcheck import exitcodes
from groupcheck.timed.engine import TimedRun, Timing
from model import system
from model.config import Config
from model.path import Path as ModelPath
from model.status import ConfigError
from model.trace.codec import path_lines
from reports.casestudy import describe_action, group_view, render_group
from reports.publish import check_new_file as check


def simulate_timed(config: Config, args: argparse.Namespace) -> int:
    """Take up to ``--steps`` actions of a timed run and print them with their times."""
    target = Path(args.trace) if args.trace is not None else None
    if target is not None:
        check_new_file(target)
    run = TimedRun(config, Timing(), args.seed)
    for _ in range(args.steps):
        nxt = run.next_action()
        if nxt is None:
            break
        run.take(*nxt, checked=True)
    if target is not None:
        write_trace(run, target)
    if args.json:
        steps: list[dict[str, Any]] = [
            {"step": i, "ts_ms": round(t, 3), "kind": a.kind, "action": describe_action(a)}
            for i, (t, a) in enumerate(zip(run.times, run.actions, strict=True), 1)
        ]
        doc = {
            "preset": config.name,
            "seed": args.seed,
            "timed": True,
            "steps": steps,
            "group": group_view(run.state),
            "converged_at_ms": [round(t, 3) for t in run.measures.converged_at_ms],
        }
        print(json.dumps(doc, indent=1))
        return exitcodes.OK
    print(f"# groupcheck simulate --timed --preset {config.name} --seed {args.seed}")
    print(render_group(system.initial(config)))
    for i, (t, a) in enumerate(zip(run.times, run.actions, strict=True), 1):
        print(f"{t:10.3f} ms  step {i}: {describe_action(a)}")
    print()
    print(render_group(run.state))
    if run.measures.converged_at_ms:
        print(f"\nconverged at {run.measures.converged_at_ms[0]:.3f} ms")
    if len(run.actions) < args.steps:
        print(f"\nno action ready after step {len(run.actions)}: the run ends here")
    return exitcodes.OK


def check_new_file(target: Path) -> None:
    """Refuse an existing file, a missing or an unwritable directory (nothing is replaced;
    checked before the run, ``reports.publish.check_new_file``)."""
    check(target, "--trace")


def write_trace(run: Any, target: Path) -> None:
    """The run as a trace with ``ts`` in whole milliseconds, published atomically: written
    under a temporary name, then linked into place only if the name is still free."""
    path = ModelPath(run.config, tuple(run.actions))
    lines = path_lines(path, timestamps=[round(t) for t in run.times])
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise ConfigError(f"--trace {target}: appeared meanwhile; nothing written") from None
    finally:
        os.unlink(tmp)

"""Rendering a long trace: a 10,000-step seeded random walk on SMALL drawn into the full
HTML report — the view, the "let / then" explanation, the sequence chart and the ownership
timeline laid out by graphviz into SVG, and the page — as ``groupcheck render`` writes it.
Long traces are summarised — quiet stretches collapse into one row — never cut: the
benchmark counts the steps in the written sequence chart (drawn arrows and notes plus the
steps of every collapsed stretch) and fails unless that is every step. Goal: under 60 s."""

from __future__ import annotations

import random
import re
import tempfile
import time
from pathlib import Path

from model import system
from model.actions import Action
from model.presets import preset
from model.records import State
from reports.render.explain import explain
from reports.render.report import write_report
from reports.render.view import collapse, view_of_path

STEPS = 10_000


EPISODE = 200
"""Steps per episode: the walk starts over every EPISODE steps, so rebalances keep coming
(one long quiet tail would make the benchmark trivially cheap)."""


def _walk(seed: int, steps: int) -> tuple[list[State], list[Action]]:
    config = preset("SMALL")
    rng = random.Random(seed)
    state = system.initial(config)
    states: list[State] = [state]
    actions: list[Action] = []
    episode = 0
    while len(actions) < steps:
        enabled = system.enabled(state, config)
        if not enabled or episode == EPISODE:
            state = system.initial(config)
            episode = 0
            continue
        episode += 1
        action = rng.choice(enabled)
        state = system.step(state, action, config)
        actions.append(action)
        states.append(state)
    return states, actions


STEP_LABEL = re.compile(r'label="(\d+)\. ')
COLLAPSED_LABEL = re.compile(r'label="… (\d+) quiet steps …"')


def steps_in_sequence(dot_text: str) -> tuple[list[int], int]:
    """The step numbers drawn in a sequence chart's DOT text and the number of steps its
    collapsed stretches hold."""
    drawn = [int(n) for n in STEP_LABEL.findall(dot_text)]
    collapsed = sum(int(n) for n in COLLAPSED_LABEL.findall(dot_text))
    return drawn, collapsed


def run(steps: int = STEPS) -> dict[str, object]:
    """Time the report of a ``steps``-step walk (``bench/run.py render`` uses 10,000)."""
    states, actions = _walk(7, steps)
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        directory = Path(tmp)
        start = time.perf_counter()
        view = view_of_path(states, actions)
        text = explain(states, actions, "no property", "nothing is violated")
        page = write_report(
            directory,
            title="render benchmark",
            view=view,
            explanation=text,
            config_text="SMALL",
            reproduce="python bench/run.py render",
        )
        seconds = time.perf_counter() - start
        drawn_steps, collapsed_steps = steps_in_sequence(
            (directory / "sequence.dot").read_text(encoding="utf-8")
        )
        svg_bytes = sum((directory / f"{n}.svg").stat().st_size for n in ("sequence", "ownership"))
        html_bytes = page.stat().st_size
    stretches = sum(1 for item in collapse(view.rows) if isinstance(item, int))
    accounted = len(drawn_steps) + collapsed_steps
    no_step_lost = accounted == steps and len(set(drawn_steps)) == len(drawn_steps)
    return {
        "name": f"render-{steps}-steps",
        "steps": steps,
        "rows_drawn": len(drawn_steps),
        "collapsed_stretches": stretches,
        "steps_collapsed": collapsed_steps,
        "steps_accounted": accounted,
        "no_step_lost": no_step_lost,
        "svg_bytes": svg_bytes,
        "html_bytes": html_bytes,
        "seconds": round(seconds, 2),
        "measures": "view, explanation, both charts laid out by dot, HTML page written",
        "goal": "< 60 s, rows drawn + steps collapsed == steps",
        "meets_goal": seconds < 60 and no_step_lost,
    }

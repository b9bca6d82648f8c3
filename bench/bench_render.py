"""Rendering a long trace: a 10,000-step seeded random walk on SMALL drawn as a sequence
chart and an ownership timeline (DOT built and laid out by graphviz into SVG). Long traces
are summarised — quiet stretches collapse into one row — never cut. Goal: under 60 s."""

from __future__ import annotations

import random
import time

from model import system
from model.presets import preset
from reports.render.dot import run_dot, sequence_dot, timeline_dot
from reports.render.view import collapse, view_of_path

STEPS = 10_000


EPISODE = 200
"""Steps per episode: the walk starts over every EPISODE steps, so rebalances keep coming
(one long quiet tail would make the benchmark trivially cheap)."""


def _walk(seed: int) -> tuple[list[object], list[object]]:
    config = preset("SMALL")
    rng = random.Random(seed)
    state = system.initial(config)
    states, actions = [state], []
    episode = 0
    while len(actions) < STEPS:
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


def run() -> dict[str, object]:
    states, actions = _walk(7)
    start = time.perf_counter()
    view = view_of_path(states, actions)  # type: ignore[arg-type]
    drawn = collapse(view.rows)
    seq = run_dot(sequence_dot(view))
    own = run_dot(timeline_dot(view))
    seconds = time.perf_counter() - start
    collapsed = sum(x for x in drawn if isinstance(x, int))
    return {
        "name": "render-10000-steps",
        "steps": STEPS,
        "rows_drawn": len(drawn),
        "steps_collapsed": collapsed,
        "svg_bytes": len(seq) + len(own),
        "seconds": round(seconds, 2),
        "goal": "< 60 s",
        "meets_goal": seconds < 60,
    }

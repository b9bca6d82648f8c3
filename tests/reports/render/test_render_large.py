"""``render`` of a long trace in bounded memory (issue 42): the trace is read twice, a line
at a time, and at most ``DRAWN_EVENTS`` events are drawn — the stretch around the first
violation, else the first ones — and the report says which."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from groupcheck.render import build
from model.actions import SendHeartbeat
from model.presets import preset
from model.trace import path_lines
from reports.render.view import COORDINATOR, Row, Window
from tests.tracelines import progress_walk


def _external(tmp_path: Path, steps: int) -> Path:
    """A progress walk on SMALL written without its config: drawn as an external trace."""
    lines = list(path_lines(progress_walk(preset("SMALL"), 7, steps)))
    head = json.loads(lines[0])
    head.pop("config", None)
    head.pop("settings", None)
    path = tmp_path / f"external-{steps}.ndjson"
    path.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n", encoding="utf-8")
    return path


def test_a_long_external_trace_draws_only_its_window(tmp_path: Path) -> None:
    path = _external(tmp_path, 400)
    view, text, _ = build(str(path), limit=50)
    assert len(view.rows) == 50
    assert [r.index for r in view.rows] == list(range(1, 51))
    note = "Drawn: events 1–50 of 400 (the first ones; at most 50 are drawn)"
    assert any(n.startswith(note) for n in view.notes)
    assert note in text
    assert "log 400 events" in text


def test_a_long_model_trace_draws_its_first_steps(tmp_path: Path) -> None:
    path = tmp_path / "model.ndjson"
    path.write_text("\n".join(path_lines(progress_walk(preset("SMALL"), 3, 120))) + "\n")
    view, text, config = build(str(path), limit=30)
    assert config.startswith("Config(")
    assert [r.index for r in view.rows] == list(range(1, 31))
    assert "Drawn: steps 1–30 of 120" in text


def _row(index: int) -> Row:
    return Row(
        index,
        index + 1,
        "SendHeartbeat",
        COORDINATOR,
        COORDINATOR,
        "",
        False,
        {},
        frozenset(),
        {},
        quiet=True,
    )


def test_the_window_keeps_half_before_the_violation_and_the_rest_after() -> None:
    window = Window(4, focus=11)  # the event on line 11 is event 10
    action = SendHeartbeat(client="A")
    for i in range(1, 30):
        if window.full:
            break
        window.offer(_row(i), (i + 1, action))
    assert [row.index for row, _ in window.kept()] == [8, 9, 10, 11]
    assert window.seen == 11  # full after event 11: nothing later is read
    with pytest.raises(ValueError, match="at least one"):
        Window(0)


def _peak(path: Path) -> int:
    tracemalloc.start()
    try:
        build(str(path), limit=50)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_trace(tmp_path: Path) -> None:
    """Four times the events, about the same peak: nothing the size of the trace is held."""
    small, large = _external(tmp_path, 500), _external(tmp_path, 2000)
    build(str(small), limit=50)  # imports and caches first
    assert _peak(large) < 1.3 * _peak(small)

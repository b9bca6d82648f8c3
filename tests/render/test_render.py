"""Pictures and reports: golden DOT for a known counterexample, hostile names rendered
safely, malformed input refused, long traces collapsed, and a browser looking at a report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.explore.run import explore
from groupcheck.mutants import get_mutant
from model.actions import DeliverMessage
from model.records import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, Message
from model.status import ErrorCode
from model.trace.codec import encode_action
from reports.render.dot import run_dot, sequence_dot, timeline_dot
from reports.render.view import Row, collapse, view_of_path

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "render"


def _counterexample_view():  # type: ignore[no-untyped-def]
    m = get_mutant("revoke-without-waiting")
    outcome = explore(m.mutated_config(), engine="bfs", shortest=False)
    assert outcome.path is not None
    assert outcome.property is not None
    states = list(outcome.path.states())
    return view_of_path(
        states,
        outcome.path.actions,
        outcome.property,
        outcome.message,
        violation_step=len(outcome.path.actions),
    )


@pytest.mark.parametrize(
    ("name", "render"), [("sequence", sequence_dot), ("ownership", timeline_dot)]
)
def test_golden_dot_of_a_known_counterexample(name: str, render) -> None:  # type: ignore[no-untyped-def]
    text = render(_counterexample_view())
    golden = GOLDEN / f"revoke-without-waiting.{name}.dot"
    if os.environ.get("GROUPCHECK_UPDATE_GOLDEN") == "1":
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")
    assert run_dot(text).startswith(b"<?xml")


def test_golden_sequence_marks_the_violation() -> None:
    text = (GOLDEN / "revoke-without-waiting.sequence.dot").read_text(encoding="utf-8")
    red = [line for line in text.splitlines() if "color=red" in line]
    assert len(red) == 1
    assert "VIOLATES OwnedPartitionsAreHeld" in red[0]


HOSTILE = [
    'evil"]; x -> y [label="pwned',
    "<script>alert(1)</script>",
    'a\\"b -> c; }',
    "L" * 300,
]


def _hostile_trace(path: Path) -> None:
    header = {
        "format": "groupcheck-trace",
        "version": 1,
        "protocol": "consumer",
        "topics": {'t<b>"': 2},
        "config": None,
    }
    lines = [json.dumps(header)]
    seq = 0
    for name in HOSTILE:
        for conn_msg in (
            Message(
                name,
                0,
                0,
                True,
                ConsumerGroupHeartbeatRequest(
                    member_id=name,
                    member_epoch=0,
                    rebalance_timeout_ms=1000,
                    subscribed_topic_names=frozenset({'t<b>"'}),
                    topic_partitions=frozenset(),
                ),
            ),
            Message(
                name,
                0,
                0,
                False,
                ConsumerGroupHeartbeatResponse(
                    ErrorCode.NONE, name, 1, 100, frozenset({('t<b>"', HOSTILE.index(name) % 2)})
                ),
            ),
        ):
            seq += 1
            source, payload = encode_action(DeliverMessage(conn_msg))
            lines.append(
                json.dumps(
                    {
                        "seq": seq,
                        "ts": None,
                        "source": source,
                        "kind": "DeliverMessage",
                        "payload": payload,
                    }
                )
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_hostile_names_render_safely(tmp_path: Path) -> None:
    trace = tmp_path / "hostile.ndjson"
    _hostile_trace(trace)
    out = tmp_path / "out"
    assert main(["render", str(trace), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    seq = (out / "sequence.dot").read_text(encoding="utf-8")
    # dot parsed it, and the injected edge x -> y exists nowhere as a statement.
    canon = run_dot(seq, "canon").decode("utf-8")
    assert not re.search(r"^\s*x -> y", canon, flags=re.M)
    assert '"pwned' not in canon.replace('\\"pwned', "")
    # Long names are shortened in labels and kept whole in tooltips.
    assert "L" * 300 not in re.sub(r'tooltip="[^"]*"', "", seq)
    assert "L" * 300 in seq
    assert (out / "ownership.svg").is_file()


def test_malformed_trace_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "bad.ndjson"
    trace.write_text(
        '{"format": "groupcheck-trace", "version": 1, "protocol": "consumer", '
        '"topics": {"foo": 1}}\n{"seq": 1, "kind": "Nope"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main(["render", str(trace), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"groupcheck: error: {trace}:2:")
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".partial-")]


def test_png_and_svg_formats(tmp_path: Path) -> None:
    m = get_mutant("revoke-without-waiting")
    outcome = explore(m.mutated_config(), engine="bfs", shortest=False)
    assert outcome.path is not None
    from model.trace import path_lines

    trace = tmp_path / "ce.ndjson"
    trace.write_text("\n".join(path_lines(outcome.path)) + "\n", encoding="utf-8")
    assert main(["render", str(trace), "--format", "png", "--out", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / "sequence.png").read_bytes().startswith(b"\x89PNG")
    assert main(["render", str(trace), "--format", "html", "--out", str(tmp_path / "h")]) == 0
    text = (tmp_path / "h" / "explanation.txt").read_text(encoding="utf-8")
    assert "Now OwnedPartitionsAreHeld is violated" in text


def _row(i: int, quiet: bool, owner: str = "A") -> Row:
    return Row(
        i,
        None,
        "DeliverMessage",
        "A",
        "coordinator",
        "HB",
        False,
        {("foo", 0): (owner,)},
        frozenset(),
        {"A": 1},
        quiet,
    )


def test_long_quiet_stretches_are_collapsed_not_dropped() -> None:
    rows = [_row(1, False)] + [_row(i, True) for i in range(2, 102)] + [_row(102, False, "B")]
    drawn = collapse(rows)
    assert drawn[0] == rows[0]
    assert drawn[1] == 100  # the quiet stretch, counted
    assert drawn[-1] == rows[-1]
    assert sum(x if isinstance(x, int) else 1 for x in drawn) == len(rows)


def test_explore_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    code = main(
        [
            "explore",
            "--mutant",
            "revoke-without-waiting",
            "--engine",
            "bfs",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    report = Path(doc["report"])
    page = report.read_text(encoding="utf-8")
    assert "Violated: OwnedPartitionsAreHeld" in page
    assert page.count("<svg") == 3  # sequence, ownership, state graph
    assert (out / "index.html").read_text(encoding="utf-8").count(report.parent.name) >= 1


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make setup installs it)")
def test_report_in_a_headless_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    main(
        [
            "explore",
            "--mutant",
            "revoke-without-waiting",
            "--engine",
            "bfs",
            "--out",
            str(out),
            "--json",
        ]
    )
    report = Path(json.loads(capsys.readouterr().out)["report"])
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    url = report.resolve().as_uri()
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert dom.count("<svg") == 3
    for text in ("OwnedPartitionsAreHeld", "coordinator", "HB epoch=1", ">A<", ">B<"):
        assert text in dom, text
    shot = tmp_path / "report.png"
    subprocess.run(
        [CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1400,2400", url],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes().startswith(b"\x89PNG")
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
    keep = os.environ.get("GROUPCHECK_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")

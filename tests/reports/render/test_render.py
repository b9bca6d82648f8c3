"""Pictures and reports: golden DOT for a known counterexample, hostile names rendered
safely, malformed input refused, long traces collapsed, and a browser looking at a report."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest

from groupcheck.cli import main
from groupcheck.explore.run import explore
from groupcheck.mutants import get_mutant
from model import system
from model.actions import DeliverMessage, Subscribe
from model.ids import Assignment
from model.path import Path as ModelPath
from model.presets import TINY
from model.records import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, Message
from model.scenario import Script
from model.status import ErrorCode
from model.trace import path_lines
from model.trace.codec import encode_action
from reports.artifacts import Counterexample, default_run_label
from reports.render.dot import run_dot, sequence_dot, timeline_dot
from reports.render.view import Row, TraceView, collapse, view_of_path

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "render"
REPO = Path(__file__).resolve().parents[3]


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


def _revocation_script() -> Script:
    """TINY in the KIP-848 revocation story: A owns foo-0 and foo-1; B joins and waits for
    foo-1 (unreleased); A is revoked foo-1, commits, reports foo-0; B then gets foo-1."""
    s = Script(TINY)
    s.heartbeat("A")
    s.reconcile("A")
    s.do(Subscribe("B"))
    s.heartbeat("B")
    s.heartbeat("A")
    s.reconcile("A")
    s.heartbeat("A")
    s.heartbeat("B")
    s.reconcile("B")
    return s


def _revocation_view() -> TraceView:
    s = _revocation_script()
    states = [system.initial(TINY)]
    for a in s.actions:
        states.append(system.step(states[-1], a, TINY))
    return view_of_path(states, s.actions)


VIEWS = {"revoke-without-waiting": _counterexample_view, "revocation": _revocation_view}


@pytest.mark.parametrize("case", sorted(VIEWS))
@pytest.mark.parametrize(
    ("name", "render"), [("sequence", sequence_dot), ("ownership", timeline_dot)]
)
def test_golden_dot_of_a_known_counterexample(case: str, name: str, render) -> None:  # type: ignore[no-untyped-def]
    text = render(VIEWS[case]())
    golden = GOLDEN / f"{case}.{name}.dot"
    if os.environ.get("GROUPCHECK_UPDATE_GOLDEN") == "1":
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")
    assert run_dot(text).startswith(b"<?xml")


def test_response_arrows_name_revoked_and_pending_partitions() -> None:
    labels = {r.index: r.label for r in _revocation_view().rows}
    # B joins while A still owns foo-1: B's response withholds it (UNRELEASED_PARTITIONS).
    assert labels[8] == "HB epoch=2 assigned=[]\npending=[foo-1]"
    # A's next response no longer contains foo-1: A is revoked it.
    assert labels[11] == "HB epoch=1 assigned=[foo-0]\nrevoked=[foo-1]"
    # Once A reported foo-0 only, B is given foo-1: nothing pending or revoked any more.
    assert labels[20] == "HB epoch=2 assigned=[foo-1]"
    text = (GOLDEN / "revocation.sequence.dot").read_text(encoding="utf-8")
    assert 'label="8. HB epoch=2 assigned=[]\\npending=[foo-1]"' in text
    assert 'label="11. HB epoch=1 assigned=[foo-0]\\nrevoked=[foo-1]"' in text


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
            "--no-baseline",
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


def _message_trace(path: Path, messages: list[Message], topics: dict[str, int]) -> None:
    """An external trace (no config in the header) of delivered messages."""
    header = {
        "format": "groupcheck-trace",
        "version": 1,
        "protocol": "consumer",
        "topics": topics,
        "config": None,
    }
    lines = [json.dumps(header)]
    for seq, message in enumerate(messages, 1):
        source, payload = encode_action(DeliverMessage(message))
        event = {"seq": seq, "ts": None, "source": source, "kind": "DeliverMessage"}
        lines.append(json.dumps({**event, "payload": payload}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _request(name: str, epoch: int, owned: Assignment | None) -> Message:
    body = ConsumerGroupHeartbeatRequest(
        member_id=name,
        member_epoch=epoch,
        rebalance_timeout_ms=1000,
        subscribed_topic_names=frozenset({"foo"}) if owned is not None else None,
        topic_partitions=owned,
    )
    return Message(name, 0, 0, True, body)


def _response(name: str, epoch: int, assignment: Assignment | None) -> Message:
    body = ConsumerGroupHeartbeatResponse(ErrorCode.NONE, name, epoch, 100, assignment)
    return Message(name, 0, 0, False, body)


FOO0, FOO1 = ("foo", 0), ("foo", 1)

DOUBLE_OWNERSHIP = [
    _request("A", 0, frozenset()),
    _response("A", 1, frozenset({FOO0, FOO1})),
    _request("A", 1, frozenset({FOO0, FOO1})),
    _request("B", 0, frozenset()),
    # foo-1 is given to B before A reported releasing it: A and B both own it (steps 5, 6).
    _response("B", 2, frozenset({FOO1})),
    _response("A", 2, frozenset({FOO0})),
    _request("A", 2, frozenset({FOO0})),
]
"""An external trace whose coordinator hands foo-1 to B while A still holds it."""


RED_CELL = "#ff6b6b"


def _timeline_cells(dot_text: str) -> list[list[tuple[str, str]]]:
    """(bgcolor, text) of every cell of the ownership table, row by row."""
    table = []
    for tr in re.findall(r"<tr>(.*?)</tr>", dot_text):
        cells = re.findall(r'<td(?: bgcolor="([^"]*)")?>(.*?)</td>', tr)
        table.append([(colour, re.sub(r"<[^>]+>", "", text)) for colour, text in cells])
    return table


def test_double_ownership_cells_are_red_and_only_there(tmp_path: Path) -> None:
    trace = tmp_path / "double.ndjson"
    _message_trace(trace, DOUBLE_OWNERSHIP, {"foo": 2})
    out = tmp_path / "out"
    assert main(["render", str(trace), "--out", str(out)]) == 0
    table = _timeline_cells((out / "ownership.dot").read_text(encoding="utf-8"))
    steps = [text for _, text in table[0][1:]]
    # Steps are numbered by the trace's lines (the header is line 1): the numbers
    # `groupcheck validate` cites.
    assert steps == [str(i) for i in range(2, len(DOUBLE_OWNERSHIP) + 2)]
    red = {
        (row[0][1], steps[j])
        for row in table[1:]
        for j, (colour, _) in enumerate(row[1:])
        if colour == RED_CELL
    }
    assert red == {("foo-1", "6"), ("foo-1", "7")}
    by_step = dict(zip(steps, table[2][1:], strict=True))  # the foo-1 row
    assert by_step["6"] == (RED_CELL, "A, B")
    assert by_step["8"] == ("#d9d9d9", "B")  # given to B, not yet reported: pending (grey)
    # In the SVG, the red fills are the two cells holding "A, B".
    svg = (out / "ownership.svg").read_text(encoding="utf-8")
    fills = re.findall(rf'<polygon fill="{RED_CELL}".*?<text[^>]*>([^<]*)</text>', svg, re.S)
    assert fills == ["A, B", "A, B"]
    # The explanation says who owns foo-1 twice and where the validator reported it.
    text = (out / "explanation.txt").read_text(encoding="utf-8")
    assert "partitions are owned twice: foo-1 by A, B" in text


def test_external_trace_is_explained_in_kip_terms(tmp_path: Path) -> None:
    trace = tmp_path / "double.ndjson"
    _message_trace(trace, DOUBLE_OWNERSHIP, {"foo": 2})
    out = tmp_path / "out"
    assert main(["render", str(trace), "--out", str(out)]) == 0
    lines = (out / "explanation.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("Let an external implementation (consumer protocol) log 7 events")
    assert lines[1] == (
        "then (line 2) A joins with a heartbeat at member epoch 0, reporting it owns []."
    )
    assert lines[5].startswith(
        "then (line 6) the coordinator answers B: member epoch 2, assigning [foo-1]: "
        "B is given [foo-1] while A still holds them"
    )
    assert lines[6].startswith("  here Observed.NoDoubleOwnership is violated")
    assert lines[7].startswith(
        "then (line 7) the coordinator answers A: member epoch 2, assigning [foo-0]: "
        "A is revoked [foo-1]"
    )
    now = [line for line in lines if line.startswith("Now ")]
    assert now == [line for line in lines if "(line 6):" in line]
    assert any(
        line.startswith("Observed.NoDoubleOwnership: ") and "KIP-848" in line for line in lines
    )
    # The same words label the arrows.
    seq = (out / "sequence.dot").read_text(encoding="utf-8")
    assert 'label="6. HB epoch=2 assigned=[foo-1]\\npending=[foo-1]\\nVIOLATES' in seq
    assert 'label="7. HB epoch=2 assigned=[foo-0]\\nrevoked=[foo-1]"' in seq


def test_long_trace_through_render_loses_no_step(tmp_path: Path) -> None:
    quiet_rounds = 40  # 80 routine heartbeat events: far above the 60-step threshold
    messages = [_request("A", 0, frozenset()), _response("A", 1, frozenset({FOO0, FOO1}))]
    messages.append(_request("A", 1, frozenset({FOO0, FOO1})))
    for _ in range(quiet_rounds):
        messages += [_request("A", 1, None), _response("A", 1, None)]
    messages += [_request("B", 0, frozenset()), _response("B", 2, frozenset({FOO1}))]
    trace = tmp_path / "long.ndjson"
    _message_trace(trace, messages, {"foo": 2})
    out = tmp_path / "out"
    assert main(["render", str(trace), "--format", "html", "--out", str(out)]) == 0
    seq = (out / "sequence.dot").read_text(encoding="utf-8")
    drawn = [int(n) for n in re.findall(r'label="(\d+)\. ', seq)]
    collapsed = [int(n) for n in re.findall(r'label="… (\d+) quiet steps …"', seq)]
    assert collapsed
    assert max(collapsed) >= 2 * quiet_rounds - 2
    assert len(drawn) == len(set(drawn))
    assert len(drawn) + sum(collapsed) == len(messages)
    # Steps are numbered by trace line (the header is line 1): the last, the join of B, is drawn.
    assert drawn[-1] == len(messages) + 1
    page = (out / "index.html").read_text(encoding="utf-8")
    assert f"{sum(collapsed)} quiet steps are collapsed." in page
    own = (out / "ownership.dot").read_text(encoding="utf-8")
    for n in collapsed:
        assert f"…{n}…" in own
    text = (out / "explanation.txt").read_text(encoding="utf-8")
    assert re.search(r"\((\d+) events that change no epoch or ownership\)", text)


def test_runs_of_other_seeds_do_not_replace_each_other() -> None:
    m = get_mutant("revoke-without-waiting")
    path = ModelPath(m.mutated_config(), ())
    labels = {
        default_run_label(Counterexample(path, "P", "", "MUT2", m.name, "walk", seed=seed))
        for seed in (1, 2)
    }
    assert labels == {
        "MUT2-revoke-without-waiting-walk-seed1",
        "MUT2-revoke-without-waiting-walk-seed2",
    }


def test_render_refreshes_the_index_of_runs(tmp_path: Path) -> None:
    from reports.render.html import write_index

    runs = tmp_path / "runs"
    runs.mkdir()
    write_index(runs)
    trace = tmp_path / "double.ndjson"
    _message_trace(trace, DOUBLE_OWNERSHIP, {"foo": 2})
    assert main(["render", str(trace), "--out", str(runs / "render-double")]) == 0
    assert 'href="render-double/index.html"' in (runs / "index.html").read_text(encoding="utf-8")
    # An index.html that groupcheck did not write is never replaced.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "index.html").write_text("my page", encoding="utf-8")
    assert main(["render", str(trace), "--out", str(mine / "r")]) == 0
    assert (mine / "index.html").read_text(encoding="utf-8") == "my page"
    # A directory that keeps no index gets none.
    assert main(["render", str(trace), "--out", str(tmp_path / "elsewhere" / "r")]) == 0
    assert not (tmp_path / "elsewhere" / "index.html").exists()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _artifacts_dir() -> Path:
    """Where test artifacts are kept: ``GROUPCHECK_ARTIFACTS`` or the git-ignored
    ``.test-artifacts`` of the checkout (not under ``reports/out``, whose
    runs directory holds only what groupcheck publishes)."""
    return Path(os.environ.get("GROUPCHECK_ARTIFACTS") or REPO / ".test-artifacts")


def _keep(artifact: Path, name: str) -> Path:
    """Copy ``artifact`` to the artifacts folder under ``name`` (atomically, so parallel
    runs never see a half-written file)."""
    folder = _artifacts_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".partial-", suffix=artifact.suffix)
    os.close(fd)
    shutil.copyfile(artifact, tmp)
    os.chmod(tmp, 0o644)
    target = folder / name
    os.replace(tmp, target)
    return target


def _png_pixels(data: bytes) -> Counter[bytes]:
    """How many pixels of each RGB colour an 8-bit, non-interlaced RGB(A) PNG has (the
    format Chromium's screenshots use; PNG specification §9 filters undone by hand)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, bytearray()
    width = height = bpp = 0
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + size]
        pos += 12 + size
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, interlace) == (8, 0), (depth, interlace)
            assert colour in (2, 6), colour
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    previous = bytearray(stride)
    counts: Counter[bytes] = Counter()
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, previous, strict=True))
        elif kind in (3, 4):
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = previous[i]
                c = previous[i - bpp] if i >= bpp else 0
                if kind == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    line[i] = (line[i] + pred) & 255
        counts.update(bytes(line[x : x + 3]) for x in range(0, stride, bpp))
        previous = line
    return counts


def test_report_in_a_headless_browser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    if CHROMIUM is None:
        message = "chromium is not installed (make setup installs Debian's chromium package)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    out = tmp_path / "runs"
    code = main(
        [
            "explore",
            "--mutant",
            "revoke-without-waiting",
            "--no-baseline",
            "--engine",
            "bfs",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 1  # a violation was found and its report written
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
        "--hide-scrollbars",
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
    kept = _keep(shot, f"{request.node.name}.png")
    pixels = _png_pixels(shot.read_bytes())
    assert sum(pixels.values()) == 1400 * 2400
    # Colours only the SVGs paint, so the pictures were drawn, not just present in the DOM:
    # the red violating arrow and path, the blue initial state of the state graph, and the
    # pink header of the violating step in the ownership timeline.
    drawn = {
        "red (violation)": pixels[bytes((255, 0, 0))],
        "blue (initial state)": pixels[bytes((0x4A, 0x7B, 0xD0))],
        "pink (violating step)": pixels[bytes((0xFF, 0xD6, 0xD6))],
    }
    assert all(n >= 50 for n in drawn.values()), (drawn, kept)
    background = pixels[b"\xff\xff\xff"] + pixels[bytes((0xF6, 0xF8, 0xFA))]
    assert sum(pixels.values()) - background > 20_000, kept  # not a blank page


# --------------------------------------------------------------------------- safe outputs


def test_render_never_destroys_a_users_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "double.ndjson"
    _message_trace(trace, DOUBLE_OWNERSHIP, {"foo": 2})
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work", encoding="utf-8")
    assert main(["render", str(trace), "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "not written by groupcheck" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]
    # '--out .' in a working directory with files in it: refused, nothing removed.
    monkeypatch.chdir(mine)
    assert main(["render", str(trace), "--out", "."]) == 2
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]
    # A file as --out: refused.
    assert main(["render", str(trace), "--out", str(mine / "thesis.tex")]) == 2
    assert (mine / "thesis.tex").read_text(encoding="utf-8") == "years of work"
    # A directory render wrote before is replaced whole.
    out = tmp_path / "r"
    assert main(["render", str(trace), "--out", str(out)]) == 0
    assert main(["render", str(trace), "--format", "svg", "--out", str(out)]) == 0
    assert not (out / "index.html").exists()
    assert (out / "sequence.svg").is_file()


def test_render_into_an_unwritable_place_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "double.ndjson"
    _message_trace(trace, DOUBLE_OWNERSHIP, {"foo": 2})
    # Under a regular file: no user can create a directory there.
    assert main(["render", str(trace), "--out", str(trace / "r")]) == 2
    err = capsys.readouterr().err
    assert "cannot create the directory" in err
    assert len(err.strip().splitlines()) == 1
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who may write anywhere")
        assert main(["render", str(trace), "--out", str(locked / "r")]) == 2
        err = capsys.readouterr().err
        assert "not writable" in err
        assert len(err.strip().splitlines()) == 1
    finally:
        locked.chmod(0o700)


def test_default_render_output_is_named_after_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    traces = []
    for run in ("TINY-default-bfs-seed0", "MUT2-revoke-without-waiting-bfs-seed0"):
        directory = tmp_path / "reports" / "out" / run
        directory.mkdir(parents=True)
        trace = directory / "trace.ndjson"
        _message_trace(trace, DOUBLE_OWNERSHIP, {"foo": 2})
        traces.append(trace)
    for trace in traces:
        assert main(["render", str(trace)]) == 0
    names = sorted(p.name for p in (tmp_path / "reports" / "out").iterdir())
    assert "render-TINY-default-bfs-seed0" in names
    assert "render-MUT2-revoke-without-waiting-bfs-seed0" in names
    # Two different files with the same name and run name: neither replaces the other.
    other = tmp_path / "elsewhere" / "TINY-default-bfs-seed0" / "trace.ndjson"
    other.parent.mkdir(parents=True)
    _message_trace(other, DOUBLE_OWNERSHIP, {"foo": 2})
    assert main(["render", str(other)]) == 0
    out = capsys.readouterr().out
    renders = [
        p for p in (tmp_path / "reports" / "out").iterdir() if p.name.startswith("render-TINY")
    ]
    assert len(renders) == 2
    assert "render-TINY-default-bfs-seed0-" in out


def _takeover(a: str, b: str, member_a: str, member_b: str, topic: str) -> list[Message]:
    """Client ``a`` (member ``member_a``) gets both partitions of ``topic``; then ``b`` is
    given one of them before ``a`` released it (an Observed.NoDoubleOwnership finding)."""
    both = frozenset({(topic, 0), (topic, 1)})

    def request(client: str, member: str, epoch: int, owned: Assignment) -> Message:
        body = ConsumerGroupHeartbeatRequest(
            member_id=member,
            member_epoch=epoch,
            rebalance_timeout_ms=1000,
            subscribed_topic_names=frozenset({topic}),
            topic_partitions=owned,
        )
        return Message(client, 0, 0, True, body)

    def response(client: str, member: str, epoch: int, given: Assignment) -> Message:
        body = ConsumerGroupHeartbeatResponse(ErrorCode.NONE, member, epoch, 100, given)
        return Message(client, 0, 0, False, body)

    return [
        request(a, member_a, 0, frozenset()),
        response(a, member_a, 1, both),
        request(a, member_a, 1, both),
        request(b, member_b, 0, frozenset()),
        response(b, member_b, 2, frozenset({(topic, 1)})),
    ]


SPOOFING = "\x1b[2J\x1b]0;title\x07\u202e\u200b\u2028\x85\ufeff"
"""Characters a terminal obeys, or that hide or turn text around (Cc, Cf, Zl)."""


def test_control_and_format_characters_never_reach_output_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ids with ESC sequences, a right-to-left override, zero-width and line-separator
    characters: the SVGs are well-formed XML, and no such character reaches a page, a
    picture, the explanation, stdout or stderr — they are shown as escapes."""
    trace = tmp_path / "spoof.ndjson"
    names = [f"A{SPOOFING}", f"B{SPOOFING}", f"mA{SPOOFING}", f"mB{SPOOFING}", f"t{SPOOFING}"]
    _message_trace(trace, _takeover(*names), {names[-1]: 2})
    out = tmp_path / "out"
    assert main(["render", str(trace), "--out", str(out)]) == 0
    assert main(["validate", str(trace)]) == 1
    assert main(["validate", "--mode", "conformance", str(trace)]) == 2
    printed = capsys.readouterr()
    for name in ("sequence.svg", "ownership.svg"):
        ElementTree.parse(out / name)  # raises on a control character
    texts = [printed.out, printed.err] + [p.read_text(encoding="utf-8") for p in out.iterdir()]
    hidden = {ch for ch in SPOOFING if not ch.isprintable()}
    for text in texts:
        assert not hidden & set(text)
    assert "A\\x1b[2J\\x1b]0;title\\x07\\u202e\\u200b\\u2028\\x85\\ufeff" in printed.out
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Observed.NoDoubleOwnership" in page
    assert "\\u202e" in (out / "explanation.txt").read_text(encoding="utf-8")


def test_a_huge_id_keeps_the_report_small(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 10 MB client id and a 10 MB member id are cut to 64 characters in labels and text
    (4096 in a tooltip): the report stays small and has its pictures."""
    client, member = "C" * 10_000_000, "M" * 10_000_000
    trace = tmp_path / "huge.ndjson"
    _message_trace(trace, _takeover(client, "B", "A", member, "foo"), {"foo": 2})
    out = tmp_path / "out"
    assert main(["render", str(trace), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert len(page) < 2_000_000
    assert page.count("<svg") == 2
    assert "C" * 63 + "…" in page
    assert "C" * 4096 not in page
    assert "M" * 65 not in page
    assert (out / "explanation.txt").stat().st_size < 20_000
    capsys.readouterr()
    assert main(["validate", str(trace)]) == 1
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) < 500


def test_unreadable_traces_are_one_line_and_leave_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An endless line (``/dev/zero``) is refused after 16 MiB; a 5,001-digit integer and a
    key given twice are errors at their line and column (the integer was a traceback)."""
    out = tmp_path / "out"
    assert main(["render", "/dev/zero", "--out", str(out)]) == 2
    (message,) = capsys.readouterr().err.splitlines()
    assert message == "groupcheck: error: /dev/zero:1: line longer than 16 MiB"
    trace = tmp_path / "digits.ndjson"
    _message_trace(trace, DOUBLE_OWNERSHIP, {"foo": 2})
    lines = trace.read_text(encoding="utf-8").splitlines()
    for name, old, new, column in [
        ("digits", '"seq": 2', '"seq": 2' + "9" * 5000, lines[2].index('"seq": 2') + 8),
        ("twice", '"seq": 2,', '"seq": 2, "seq": 2,', lines[2].index('"seq": 2') + 11),
    ]:
        bad = tmp_path / f"{name}.ndjson"
        bad.write_text("\n".join([*lines[:2], lines[2].replace(old, new), *lines[3:]]) + "\n")
        assert main(["render", str(bad), "--out", str(out)]) == 2
        (message,) = capsys.readouterr().err.splitlines()
        assert message.startswith(f"groupcheck: error: {bad}:3:{column}: "), message
    assert not out.exists()

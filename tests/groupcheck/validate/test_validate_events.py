"""``groupcheck.validate.events.EventReader``: its memo never changes what a line decodes
to, nor the error a malformed line raises (``parse_event`` and ``decode_action``'s)."""

from __future__ import annotations

import json

import pytest

from groupcheck.validate.events import EventReader
from model.trace import TraceError, decode_action, parse_event, parse_header
from tests.tracelines import header


def _body(epoch: int) -> dict[str, object]:
    return {"MemberId": "A", "MemberEpoch": epoch, "RebalanceTimeoutMs": 300000}


def _line(
    seq: object, ts: object, epoch: int = 1, *, sort_keys: bool = False, **extra: object
) -> str:
    event = {
        "seq": seq,
        "ts": ts,
        "source": "network",
        "kind": "DeliverMessage",
        "payload": {
            "client": "A",
            "incarnation": 0,
            "connection": 0,
            "direction": "request",
            "api": "ConsumerGroupHeartbeat",
            "body": _body(epoch),
        },
        **extra,
    }
    return json.dumps(event, sort_keys=sort_keys)


def _codec(line: str, n: int) -> tuple[int | None, str, object]:
    h = parse_header(header())
    event = parse_event(line, n)
    return event.ts, event.kind, decode_action(event, line, n, h)


def _error(decode: object, line: str, n: int) -> str:
    with pytest.raises(TraceError) as e:
        decode(line, n)  # type: ignore[operator]
    return str(e.value)


@pytest.mark.parametrize("sort_keys", [False, True])
def test_memo_decodes_as_the_codec(sort_keys: bool) -> None:
    reader = EventReader(parse_header(header()))
    lines = [
        _line(seq, ts, epoch, sort_keys=sort_keys)
        for seq, ts, epoch in [(1, None, 1), (2, 10, 1), (3, -5, 2), (4, None, 1), (5, 0, 2)]
    ]
    for n, line in enumerate(lines * 2, 2):
        assert reader.decode(line, n) == _codec(line, n)
    # Lines of one key share one action; another epoch is another key.
    assert reader.decode(lines[0], 2)[2] is reader.decode(lines[3], 5)[2]
    assert reader.decode(lines[0], 2)[2] != reader.decode(lines[2], 4)[2]


@pytest.mark.parametrize("sort_keys", [False, True])
@pytest.mark.parametrize(
    ("seq", "ts", "extra"),
    [
        (2**63, None, {}),  # seq out of int64: 19 digits, never taken from the memo
        (1, -(2**63) - 1, {}),  # ts out of int64
        (True, None, {}),  # seq not an int
        (1, "7", {}),  # ts not an int
        (1, 1.5, {}),
        (1, None, {"extra": 1}),  # an unknown field
    ],
)
def test_malformed_line_raises_the_codec_error_after_a_memoized_twin(
    sort_keys: bool, seq: object, ts: object, extra: dict[str, object]
) -> None:
    reader = EventReader(parse_header(header()))
    good = _line(1, 5, sort_keys=sort_keys)
    reader.decode(good, 2)
    bad = _line(seq, ts, sort_keys=sort_keys, **extra)
    assert _error(reader.decode, bad, 3) == _error(_codec, bad, 3)


def test_duplicate_seq_after_a_memoized_twin() -> None:
    reader = EventReader(parse_header(header()))
    good = _line(1, None)
    reader.decode(good, 2)
    bad = good.replace('"ts": null, ', '"ts": null, "seq": 4, ', 1)
    assert _error(reader.decode, bad, 3) == _error(_codec, bad, 3)
    assert "given twice" in _error(_codec, bad, 3)


def test_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from groupcheck.validate import events

    monkeypatch.setattr(events, "MEMO_CHARS", 10_000)
    reader = EventReader(parse_header(header()))
    for epoch in range(500):  # 500 keys of some 250 characters each
        line = _line(epoch, None, epoch)
        assert reader.decode(line, epoch + 2) == _codec(line, epoch + 2)
        assert reader._chars <= 10_000
        assert len(reader._memo) <= 10_000 // 200


@pytest.mark.parametrize("memo", [2, 8192])
def test_conformance_memo_reports_what_a_plain_replay_finds(
    monkeypatch: pytest.MonkeyPatch, memo: int
) -> None:
    """A mutant's trace, replayed with the step memo (tiny: emptied again and again; or
    large), gives the findings a replay asking the model and the checker at every step
    gives: the same properties at the same lines, with the same messages."""
    from groupcheck.mutants import get_mutant
    from groupcheck.validate import conformance
    from invariants.check import Checker
    from model import system
    from model.trace import path_lines
    from tests.tracelines import progress_walk

    monkeypatch.setattr(conformance, "MEMO_STEPS", memo)
    name = "install-without-epoch"
    config = get_mutant(name).mutated_config()
    path = progress_walk(config, 1, 300, perturb=True)
    expected: list[tuple[int, str, str]] = []
    checker, state = Checker(), system.initial(config)
    for n, action in enumerate(path.actions, 2):
        new = system.step(state, action, config)
        bad = checker.check_step(state, action, new) + checker.check_state(new)
        expected += [(n, v.property, v.message) for v in bad]
        state = new
    assert expected  # the mutant breaks a property on this walk
    replayed: list[object] = []
    report = conformance.validate_conformance(
        "t", path_lines(path, mutant=name), on_step=replayed.append
    )
    assert [(f.line, f.property, f.message) for f in report.violations] == expected
    assert tuple(replayed) == path.actions
    assert report.events == len(path.actions)


def _outcome(decode: object, line: str, n: int) -> object:
    try:
        return decode(line, n)  # type: ignore[operator]
    except TraceError as e:
        return str(e)


@pytest.mark.parametrize("sort_keys", [False, True])
def test_any_one_character_changed_decodes_as_the_codec(sort_keys: bool) -> None:
    """Every line one character away from a memoized one (each position: deleted, or a
    few characters put in its place or before it) decodes, or fails, exactly as the codec has it."""
    good = _line(12, 345, sort_keys=sort_keys)
    reader = EventReader(parse_header(header()))
    reader.decode(good, 2)
    for i in range(len(good)):
        changed = [good[:i] + good[i + 1 :]]  # deleted
        changed += [good[:i] + ch + good[i + 1 :] for ch in '"01- }x\\']  # replaced
        changed += [good[:i] + ch + good[i:] for ch in '"01- ,\\']  # inserted
        for bad in changed:
            assert _outcome(reader.decode, bad, 3) == _outcome(_codec, bad, 3), bad

"""Safety mode with timing: hand-overs of unreleased partitions classified as premature,
after expiry with the owner known dead, or a zombie window (docs/trace-format.md,
"Hand-overs of unreleased partitions"); convergence per quiet window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.validate import validate_safety
from groupcheck.validate.timing import TimingOptions
from model.trace import FORMAT

SESSION_MS = 4000
T0 = 1_700_000_000_000


def header(**timing: int) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "version": 2,
            "protocol": "consumer",
            "topics": {"orders": 2},
            **timing,
        }
    )


def hb(client: str, body: dict[str, object], request: bool, ms: int | None) -> str:
    return json.dumps(
        {
            "seq": 0,
            "ts": None if ms is None else T0 + ms,
            "source": "network",
            "kind": "DeliverMessage",
            "payload": {
                "client": client,
                "incarnation": 0,
                "connection": 0,
                "direction": "request" if request else "response",
                "api": "ConsumerGroupHeartbeat",
                "body": body,
            },
        }
    )


def crash(client: str, ms: int) -> str:
    return json.dumps(
        {
            "seq": 0,
            "ts": T0 + ms,
            "source": f"client:{client}",
            "kind": "Crash",
            "payload": {"client": client},
        }
    )


def parts(*ps: int) -> list[dict[str, object]]:
    return [{"TopicId": "orders", "Partitions": list(ps)}]


def req(member: str, epoch: int, owned: list[dict[str, object]] | None) -> dict[str, object]:
    body: dict[str, object] = {
        "MemberId": member,
        "MemberEpoch": epoch,
        "RebalanceTimeoutMs": 30000,
    }
    if owned is not None:
        body["TopicPartitions"] = owned
    return body


def resp(member: str, epoch: int, given: list[dict[str, object]] | None) -> dict[str, object]:
    body: dict[str, object] = {
        "ErrorCode": 0,
        "MemberId": member,
        "MemberEpoch": epoch,
        "HeartbeatIntervalMs": 250,
    }
    if given is not None:
        body["Assignment"] = {"TopicPartitions": given}
    return body


def a_owns_both(last_heartbeat_ms: int) -> list[str]:
    """A joins and acknowledges orders-0 and orders-1; its last heartbeat is at
    ``last_heartbeat_ms``."""
    return [
        hb("A", req("A", 0, []), True, 0),
        hb("A", resp("A", 1, parts(0, 1)), False, 5),
        hb("A", req("A", 1, parts(0, 1)), True, last_heartbeat_ms),
        hb("A", resp("A", 1, None), False, last_heartbeat_ms + 5),
    ]


def b_takes_both(at_ms: int) -> list[str]:
    """B joins just before ``at_ms`` and is given A's partitions at ``at_ms``."""
    return [
        hb("B", req("B", 0, []), True, at_ms - 10),
        hb("B", resp("B", 2, parts(0, 1)), False, at_ms),  # the hand-over
    ]


def killed(h: str) -> list[str]:
    """A is SIGKILLed 0.2 s after its last heartbeat at 1 s; B gets its partitions 5.5 s
    in, after A's session (4 s) expired."""
    return [h, *a_owns_both(1000), crash("A", 1200), *b_takes_both(5500)]


def cut_off(h: str) -> list[str]:
    """A is alive behind a network partition from 1 s: its heartbeats stop reaching the
    coordinator; B gets its partitions 5.5 s in."""
    return [h, *a_owns_both(1000), *b_takes_both(5500)]


def premature(h: str, after_ms: int = 400) -> list[str]:
    """A's partitions go to B ``after_ms`` after A's last heartbeat (session 4 s)."""
    return [h, *a_owns_both(1000), *b_takes_both(1000 + after_ms)]


def classes(lines: list[str], **options: int | bool) -> list[str]:
    report = validate_safety("t", lines, settle=10**6, timing=TimingOptions(**options))  # type: ignore[arg-type]
    return [h["classification"] for h in report.handovers]


def test_a_killed_consumers_partitions_handed_on_after_its_session_expired_are_valid() -> None:
    report = validate_safety("t", killed(header(session_timeout_ms=SESSION_MS)), settle=10**6)
    assert report.violations == []
    assert report.zombie_windows == []
    assert [h["classification"] for h in report.handovers] == ["after-expiry-owner-dead"] * 2
    h = report.handovers[0]
    assert (h["line"], h["from"], h["to"], h["partition"]) == (8, "A", "B", "orders-0")
    assert h["owner_last_heartbeat_line"] == 4
    assert h["after_deadline_ms"] == 5500 - (1000 + SESSION_MS)


def test_a_live_consumer_cut_off_past_its_session_is_a_zombie_window() -> None:
    lines = cut_off(header(session_timeout_ms=SESSION_MS))
    report = validate_safety("t", lines, settle=10**6)
    assert report.violations == []  # not a violation by default
    (finding,) = report.zombie_windows
    assert (finding.line, finding.property) == (7, "Observed.ZombieWindow")
    assert (
        "orders-0, orders-1 are given to B 0.50 s after the session of A expired" in finding.message
    )
    assert "until the trace ends" in finding.message
    assert [h["classification"] for h in report.handovers] == ["zombie-window"] * 2
    strict = validate_safety("t", lines, settle=10**6, timing=TimingOptions(fail_on_zombie=True))
    assert [(v.line, v.property) for v in strict.violations] == [(7, "Observed.ZombieWindow")]
    # The zombie's window closes when it next heartbeats and is fenced.
    fenced = {"ErrorCode": 110, "MemberId": "A", "MemberEpoch": 0, "HeartbeatIntervalMs": 0}
    healed = [*lines, hb("A", req("A", 1, parts(0, 1)), True, 7000), hb("A", fenced, False, 7005)]
    (finding,) = validate_safety("t", healed, settle=10**6).zombie_windows
    assert "until it was fenced at line 9 (1.50 s)" in finding.message


@pytest.mark.parametrize("after_ms", [300, 400, 500])
def test_partitions_handed_on_a_fraction_of_a_second_after_the_last_heartbeat_are_premature(
    after_ms: int,
) -> None:
    for h in (header(session_timeout_ms=SESSION_MS), header()):
        options = {} if "session" in h else {"session_timeout_ms": SESSION_MS}
        report = validate_safety(
            "t",
            premature(h, after_ms),
            settle=10**6,
            timing=TimingOptions(**options),  # type: ignore[arg-type]
        )
        (finding,) = report.violations
        assert (finding.line, finding.property) == (7, "Observed.NoHandOverBeforeExpiry")
        # A live owner whose session had not expired: a double assignment, not a
        # hand-over (no session expiry is involved).
        assert finding.message.startswith(
            "double assignment: orders-0, orders-1 are given to B while A, alive, has not "
            "released them and may still be consuming them; no session expiry is involved: "
            f"its last heartbeat (line 4) was {after_ms / 1000:.2f} s earlier and the "
            "session timeout is 4.00 s"
        )
        assert {x["classification"] for x in report.handovers} == {"premature"}
    # A crashed owner does not make a premature hand-over valid: the coordinator could not
    # know.
    dead = [*premature(header(session_timeout_ms=SESSION_MS), 400)]
    dead.insert(5, crash("A", 1100))
    (finding,) = validate_safety("t", dead, settle=10**6).violations
    assert finding.property == "Observed.NoHandOverBeforeExpiry"
    assert finding.message.startswith("premature hand-over: ")
    assert "(its process had died, which the coordinator cannot know)" in finding.message


def test_the_clock_tolerance_decides_a_hand_over_right_at_the_deadline() -> None:
    lines = premature(header(session_timeout_ms=SESSION_MS), SESSION_MS - 50)
    assert classes(lines) == ["zombie-window"] * 2  # within the default 100 ms
    assert classes(lines, tolerance_ms=0) == ["premature"] * 2


def test_without_timing_the_old_check_stands_and_says_timing_is_unknown() -> None:
    for lines in (cut_off(header()), premature(header())):
        report = validate_safety("t", lines, settle=10**6)
        assert [(v.line, v.property) for v in report.violations] == [
            (7, "Observed.NoDoubleOwnership")
        ]
        assert any("the timing is unknown" in note for note in report.notes)
        assert {h["classification"] for h in report.handovers} == {"unclassified"}
    report = validate_safety("t", killed(header()), settle=10**6)
    assert report.violations == []
    # Timestamps missing on the hand-over: not classified either.
    untimed = [json.dumps({**json.loads(x), "ts": None}) for x in cut_off(header())[1:]]
    report = validate_safety("t", [header(session_timeout_ms=SESSION_MS), *untimed], settle=10**6)
    assert [v.property for v in report.violations] == ["Observed.NoDoubleOwnership"]
    assert any("a timestamp (ts) is missing" in note for note in report.notes), report.notes


def test_cli_timing_options_json_and_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cut.ndjson"
    acked = [
        hb("B", req("B", 2, parts(0, 1)), True, 5600),
        hb("B", resp("B", 2, None), False, 5605),
    ]
    path.write_text("\n".join([*cut_off(header()), *acked]) + "\n", encoding="utf-8")
    assert main(["validate", "--settle", "2", str(path)]) == 1  # unknown timing
    out = capsys.readouterr().out
    assert "Observed.NoDoubleOwnership" in out
    assert "timing is unknown" in out
    assert f"timing: {path}: unknown — the events have timestamps but no session timeout" in out
    argv = ["validate", "--settle", "2", "--session-timeout-ms", str(SESSION_MS)]
    assert main([*argv, str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        f"zombie-window: {path}:7: Observed.ZombieWindow: orders-0, orders-1 are given to B" in out
    )
    assert "session timeout 4000 ms (option)" in out
    assert main([*argv, "--fail-on-zombie", str(path)]) == 1
    capsys.readouterr()
    assert main([*argv, "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    (file,) = doc["files"]
    assert file["timing"]["session_timeout_ms"] == SESSION_MS
    assert [h["classification"] for h in file["handovers"]] == ["zombie-window"] * 2
    assert doc["zombie_windows"][0]["property"] == "Observed.ZombieWindow"
    # A premature hand-over: a violation (exit 1); the header's timing, overridden.
    early = tmp_path / "early.ndjson"
    early.write_text("\n".join(premature(header(session_timeout_ms=100))) + "\n")
    assert main(["validate", "--settle", "1000", str(early)]) == 3  # 100 ms: long expired
    assert "2 zombie-window" in capsys.readouterr().out
    assert main(["validate", "--settle", "1000", "--session-timeout-ms", "4000", str(early)]) == 1
    assert "Observed.NoHandOverBeforeExpiry" in capsys.readouterr().out
    # Bad options and bad header timing: one line, exit 2.
    assert main(["validate", "--session-timeout-ms", "0", str(path)]) == 2
    assert capsys.readouterr().err == (
        "groupcheck validate: argument --session-timeout-ms: expected an integer >= 1, got 0 "
        "(see 'groupcheck --help')\n"
    )
    bad = tmp_path / "bad.ndjson"
    bad.write_text(header(session_timeout_ms=-5) + "\n")
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"groupcheck: error: {bad}:1:")
    assert "session_timeout_ms must be > 0" in err


def test_convergence_is_checked_in_every_quiet_window_with_its_length_in_time() -> None:
    """A member that never acknowledges its assignment in a quiet window between two joins
    is reported at the window's end, with the window's length; a window that converged is
    listed as such."""
    stuck = [
        header(session_timeout_ms=SESSION_MS),
        hb("A", req("A", 0, []), True, 0),
        hb("A", resp("A", 1, parts(0, 1)), False, 5),
        # A keeps heartbeating without acknowledging orders-0 and orders-1
        *[hb("A", req("A", 1, None), True, 250 * k) for k in range(1, 4)],
        hb("B", req("B", 0, []), True, 1000),  # line 7: the next perturbation
        hb("B", resp("B", 2, []), False, 1005),
    ]
    report = validate_safety("t", stuck, settle=3)
    (finding,) = [v for v in report.violations if v.property == "Observed.Convergence"]
    assert finding.line == 6  # the window's last event
    assert finding.message == (
        "at the end of the quiet window (lines 3-6, 4 events, 0.74 s) A has not acknowledged "
        "its assignment"
    )
    assert report.windows[0] == {
        "first_line": 3,
        "last_line": 6,
        "events": 4,
        "ms": 745,
        "converged": False,
        "why_not": "A has not acknowledged its assignment",
    }
    settled = [*stuck[:3], hb("A", req("A", 1, parts(0, 1)), True, 250), *stuck[4:]]
    report = validate_safety("t", settled, settle=3)
    assert [v.property for v in report.violations] == []
    assert report.windows[0]["converged"] is True
    # A window shorter than --settle is not checked.
    assert validate_safety("t", stuck, settle=5).windows == []


def classic_msg(client: str, api: str, body: dict[str, object], request: bool, ms: int) -> str:
    return json.dumps(
        {
            "seq": 0,
            "ts": T0 + ms,
            "source": "network",
            "kind": "DeliverMessage",
            "payload": {
                "client": client,
                "incarnation": 0,
                "connection": 0,
                "direction": "request" if request else "response",
                "api": api,
                "body": body,
            },
        }
    )


def classic_join(client: str, member: str, generation: int, given: list[int], at: int) -> list[str]:
    """``client`` joins generation ``generation`` as ``member`` and is given ``given`` at
    ``at`` ms (its SyncGroup response)."""
    join = {
        "MemberId": "",
        "ProtocolType": "consumer",
        "Protocols": [{"Name": "range", "Metadata": {"Topics": ["orders"]}}],
        "RebalanceTimeoutMs": 30000,
        "SessionTimeoutMs": SESSION_MS,
    }
    joined = {
        "ErrorCode": 0,
        "GenerationId": generation,
        "ProtocolName": "range",
        "Leader": member,
        "MemberId": member,
        "Members": [],
    }
    sync = {"MemberId": member, "GenerationId": generation, "Assignments": []}
    synced = {"ErrorCode": 0, "Assignment": [{"TopicId": "orders", "Partitions": given}]}
    return [
        classic_msg(client, "JoinGroup", join, True, at - 20),
        classic_msg(client, "JoinGroup", joined, False, at - 15),
        classic_msg(client, "SyncGroup", sync, True, at - 10),
        classic_msg(client, "SyncGroup", synced, False, at),
    ]


def classic_trace(hand_over_ms: int, crash_ms: int | None = None) -> list[str]:
    """c1 joins generation 1 and gets orders-0 and orders-1; its last heartbeat is at 1 s;
    c2 joins generation 2 alone and is given both at ``hand_over_ms``."""
    beat = {"MemberId": "m1", "GenerationId": 1}
    lines = [
        json.dumps(
            {"format": FORMAT, "version": 2, "protocol": "classic", "topics": {"orders": 2}}
        ),
        *classic_join("c1", "m1", 1, [0, 1], 100),
        classic_msg("c1", "Heartbeat", beat, True, 1000),
        classic_msg("c1", "Heartbeat", {"ErrorCode": 0}, False, 1005),
    ]
    if crash_ms is not None:
        lines.append(crash("c1", crash_ms))
    return [*lines, *classic_join("c2", "m2", 2, [0, 1], hand_over_ms)]


def test_classic_hand_overs_are_classified_from_the_join_group_session_timeout() -> None:
    """The classic protocol: the session timeout comes from the owner's JoinGroup
    (SessionTimeoutMs), its last heartbeat is its last Heartbeat, JoinGroup or SyncGroup
    request; a member of an older generation is the one the coordinator removed."""
    early = validate_safety("t", classic_trace(1400), settle=10**6)
    (finding,) = early.violations
    assert (finding.line, finding.property) == (11, "Observed.NoHandOverBeforeExpiry")
    assert finding.message.startswith(
        "double assignment: orders-0, orders-1 are given to m2 while m1, alive, has not "
        "released them and may still be consuming them; no session expiry is involved: its "
        "last heartbeat (line 6) was 0.40 s earlier"
    )
    late = validate_safety("t", classic_trace(5500), settle=10**6)
    assert late.violations == []
    (zombie,) = late.zombie_windows
    assert zombie.property == "Observed.ZombieWindow"
    assert "0.50 s after the session of m1 expired" in zombie.message
    dead = validate_safety("t", classic_trace(5500, crash_ms=1200), settle=10**6)
    assert (dead.violations, dead.zombie_windows) == ([], [])
    assert {h["classification"] for h in dead.handovers} == {"after-expiry-owner-dead"}
    # Without the session timeout in the trace (the old way): the old check stands.
    trace = classic_trace(5500)
    untimed = [trace[0], *(json.dumps({**json.loads(x), "ts": None}) for x in trace[1:])]
    (finding,) = validate_safety("t", untimed, settle=10**6).violations
    assert finding.property == "Observed.NoDoubleOwnership"


def test_header_names_and_timing_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad header fields are one line naming the line and column, exit 2."""
    for extra, why in (
        ({"topic_names": {"abc": 3}}, "topic_names: 'abc' needs a string"),
        ({"clients": []}, "field 'clients' must be dict"),
        ({"heartbeat_interval_ms": "soon"}, "field 'heartbeat_interval_ms' must be int"),
        ({"rebalance_timeout_ms": 2**31}, "out of the int32 range"),
    ):
        path = tmp_path / "bad.ndjson"
        head = {"format": FORMAT, "version": 2, "protocol": "consumer", "topics": {}, **extra}
        path.write_text(json.dumps(head) + "\n")
        assert main(["validate", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"groupcheck: error: {path}:1:"), err
        assert why in err, err
        assert err.count("\n") == 1


def test_a_capture_header_gets_the_wire_timing_and_says_where_options_differ(
    tmp_path: Path,
) -> None:
    from groupcheck.capture.proxy import TraceWriter

    said: list[str] = []
    trace = TraceWriter(
        tmp_path / "c.ndjson",
        options={"session_timeout_ms": 4000, "heartbeat_interval_ms": 999},
        log=said.append,
    )
    trace.open()
    trace.start("consumer")
    trace.event("m1", 1, "request", "ConsumerGroupHeartbeat", {"MemberId": "m1"}, T0)
    for value in (300000, 60000):
        trace.saw("rebalance_timeout_ms", value)
    trace.saw("heartbeat_interval_ms", 250)
    trace.saw("heartbeat_interval_ms", -1)  # not a value: ignored
    trace.topics["orders"] = 4
    trace.topic_names["id-1"] = "orders"
    trace.clients["m1"] = "consumer-1"
    trace.close()
    lines = (tmp_path / "c.ndjson").read_text().splitlines()
    header = json.loads(lines[0])
    assert header["session_timeout_ms"] == 4000  # not on the wire: the option's
    assert header["rebalance_timeout_ms"] == 60000  # members differ: the smallest
    assert header["heartbeat_interval_ms"] == 250  # the wire's, not the option's 999
    assert header["topics"] == {"orders": 4}
    assert header["topic_names"] == {"id-1": "orders"}
    assert header["clients"] == {"m1": "consumer-1"}
    assert len(lines) == 2
    assert json.loads(lines[1])["payload"]["client"] == "m1"
    assert any("rebalance_timeout_ms: the wire shows [60000, 300000]" in x for x in said)
    assert any("heartbeat_interval_ms: the wire shows 250, not the option's 999" in x for x in said)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.ndjson"]


def test_a_mixed_capture_header_keeps_each_protocols_session_timeout(tmp_path: Path) -> None:
    """In a mixed capture the option is the consumer group's session timeout (not on the
    wire) and the classic members' JoinGroup shows theirs: the header keeps both."""
    from groupcheck.capture.proxy import TraceWriter

    said: list[str] = []
    trace = TraceWriter(
        tmp_path / "m.ndjson", options={"session_timeout_ms": 4000}, log=said.append
    )
    trace.open()
    trace.start("mixed")
    trace.event("m1", 1, "request", "ConsumerGroupHeartbeat", {"MemberId": "m1"}, T0)
    trace.saw("session_timeout_ms", 6000)  # a classic member's JoinGroup
    trace.close()
    header = json.loads((tmp_path / "m.ndjson").read_text().splitlines()[0])
    assert header["consumer_session_timeout_ms"] == 4000
    assert header["session_timeout_ms"] == 6000
    assert not any("not the option's" in x for x in said)  # two timeouts, no conflict

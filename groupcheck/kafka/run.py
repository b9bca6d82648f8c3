"""``groupcheck kafka run``: one scenario against a real broker.

The broker is started with the scenario's settings (or an existing one is used), the
capture proxy (``groupcheck capture --control``, a child process) sits between every client
and the broker, the clients are driven step by step, then everything is stopped and the
run directory gets: ``capture.ndjson`` (the trace, with the broker's version and commit id
in its header and each crash the clients reported merged in as a ``Crash`` event),
``clients/`` (each driver's events and log), ``timeline.txt`` (wire and callbacks merged by
time), ``broker.log``, ``scenario.toml``, ``verdicts.json`` and ``summary.txt``."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupcheck.families import CAPTURE
from groupcheck.kafka import shield
from groupcheck.kafka.artifacts import artifacts
from groupcheck.kafka.broker import Broker
from groupcheck.kafka.clients import Driver
from groupcheck.kafka.scenario import (
    CLIENT_ACTIONS,
    ClientSpec,
    Explained,
    Scenario,
    Step,
    explained_by,
)
from groupcheck.validate.client_events import insert_events, merge_client_events
from model.family import family_named, load_families

Log = Callable[[str], None]


class ScenarioError(Exception):
    """A step could not be carried out (a wait timed out, a driver died): one line."""


@dataclass
class Capture:
    """``groupcheck capture`` in a child process, with ``--control`` on its stdin."""

    upstream: str
    out: Path
    protocol: str
    session_timeout_ms: int | None
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    port: int = 0

    def start(self) -> None:
        command = [
            sys.executable,
            "-m",
            "groupcheck",
            "capture",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            self.upstream,
            "--out",
            str(self.out),
            "--control",
        ]
        if self.session_timeout_ms is not None:
            command += ["--session-timeout-ms", str(self.session_timeout_ms)]
        command += CAPTURE.named(self.protocol).options  # the family's trace (``--mixed``)
        with open(self.log_path, "wb") as err:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(r"listening on [^ ]*:(\d+) ", self.log_path.read_text("utf-8"))
            if found:
                self.port = int(found.group(1))
                return
            if self.process.poll() is not None:
                raise ScenarioError(f"the capture proxy exited: {self._tail()}")
            time.sleep(0.05)
        raise ScenarioError("the capture proxy did not start listening within 30 s")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def control(self, line: str) -> None:
        assert self.process is not None
        assert self.process.stdin is not None
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def stop(self) -> None:
        shield()
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()

    def _tail(self) -> str:
        lines = self.log_path.read_text("utf-8", "replace").strip().splitlines()
        return " | ".join(lines[-3:])


@dataclass
class Run:
    """The state of one scenario run."""

    scenario: Scenario
    work: Path
    broker: Broker
    kafka_version: str
    log: Log
    drivers: dict[str, Any] = field(default_factory=dict)
    """process name → Driver (the latest process of that name)."""
    retired: list[Any] = field(default_factory=list)
    """Drivers whose process ended and was started again under the same name (a client
    restarted after a close or a crash): their events still count."""
    started: set[str] = field(default_factory=set)
    closed: set[str] = field(default_factory=set)
    subscribed: dict[str, list[str] | str] = field(default_factory=dict)
    topics: dict[str, int] = field(default_factory=dict)
    capture: Capture | None = None
    step_times: list[dict[str, Any]] = field(default_factory=list)
    """Per step: its index, Unix ms when it started, what it did, and for a ``wait =
    "stable"`` the milliseconds until the group reached the state it settled in
    (``settled_ms``: the last change of an assignment or member epoch)."""
    _admin: Any = None
    admin_events: list[dict[str, Any]] = field(default_factory=list)
    """The administrator's changes as trace events (``CreateTopic``, one ``AddPartitions``
    per partition added), stamped when the broker confirmed them."""
    prefix: str = ""
    """Put before every topic name and the group id: runs sharing one broker (the tests)
    stay apart."""

    def topic(self, name: str) -> str:
        return self.prefix + name

    @property
    def group(self) -> str:
        return self.prefix + self.scenario.group

    # ---------------------------------------------------------------- clients

    def spec(self, name: str) -> ClientSpec:
        return self.scenario.clients[name]

    def driver(self, name: str) -> Any:
        return self.drivers[self.spec(name).process]

    def _launch(self, name: str) -> None:
        spec = self.spec(name)
        if spec.process in self.drivers:
            if self.drivers[spec.process].alive():
                return
            self.retired.append(self.drivers.pop(spec.process))
        logs = self.work / "clients"
        logs.mkdir(exist_ok=True)
        if spec.driver == "java":
            driver = Driver.java(
                classpath=artifacts(self.kafka_version).driver_classpath,
                name=spec.process,
                log_dir=logs,
                jvm_opts=("-Xms32m", "-Xmx192m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"),
            )
        else:
            driver = Driver.rdkafka(name=spec.process, log_dir=logs)
        self.drivers[spec.process] = driver

    def client_command(self, name: str, cmd: dict[str, Any]) -> None:
        self.driver(name).send({**cmd, "client": name})

    def start(self, name: str) -> None:
        spec = self.spec(name)
        self._launch(name)
        assert self.capture is not None
        self.client_command(
            name,
            {
                "cmd": "create",
                "bootstrap": self.capture.bootstrap,
                "group": self.prefix + (spec.group or self.scenario.group),
                "protocol": spec.protocol,
                "assignor": spec.assignor,
                "instance_id": spec.instance_id,
                "max_poll_interval_ms": spec.max_poll_interval_ms,
                "session_timeout_ms": spec.session_timeout_ms,
                "heartbeat_interval_ms": spec.heartbeat_interval_ms,
                "props": dict(spec.props),
            },
        )
        self.started.add(name)
        self.closed.discard(name)
        self.subscribed.pop(name, None)

    def events(self, name: str) -> list[dict[str, Any]]:
        """Every event of client ``name``, from each driver process it ran in, in order."""
        process = self.spec(name).process
        drivers = [d for d in self.retired if d.name == process] + [self.driver(name)]
        return [e for d in drivers for e in d.events() if e.get("client") == name]

    def live(self) -> list[str]:
        """Started, not closed or crashed, subscribed clients."""
        return [
            n
            for n in sorted(self.started - self.closed)
            if n in self.subscribed and self.driver(n).alive()
        ]

    # ---------------------------------------------------------------- waits

    def owned(self, name: str) -> set[str]:
        """The client's assignment as it last reported it."""
        last: list[str] = []
        for e in self.events(name):
            if e.get("event") == "assignment":
                last = list(e.get("partitions", []))
        return set(last)

    def expected_partitions(self) -> set[str]:
        """Every partition of a topic some live client subscribes to."""
        wanted: set[str] = set()
        for name in self.live():
            sub = self.subscribed[name]
            topics = (
                [t for t in self.topics if re.fullmatch(sub, t)] if isinstance(sub, str) else sub
            )
            for t in topics:
                wanted |= {f"{t}-{p}" for p in range(self.topics.get(t, 0))}
        return wanted

    def wait_stable(self, step: Step) -> None:
        """Until the live clients' assignments are disjoint, cover every subscribed
        partition, and nothing changed for ``quiet_ms``."""
        timeout = float(step.params.get("timeout_s", 60))
        # The coordinator may defer a new target by the assignment interval (KAFKA-20291):
        # a group is quiet once nothing changed for that long and three heartbeats more.
        default_quiet = self.assignment_interval_ms() + 3 * self.heartbeat_ms()
        quiet_ms = int(step.params.get("quiet_ms", default_quiet))
        deadline = time.monotonic() + timeout
        last_change = time.monotonic()
        previous: Any = None
        while True:
            live = self.live()
            owned = {n: self.owned(n) for n in live}
            epochs = {n: self.last_member(n) for n in live}
            now = (owned, epochs)
            if now != previous:
                previous, last_change = now, time.monotonic()
            together = [p for ps in owned.values() for p in ps]
            good = len(together) == len(set(together)) and set(together) == (
                self.expected_partitions()
            )
            if good and (time.monotonic() - last_change) * 1000 >= quiet_ms:
                self.step_times[-1]["settled_ms"] = self._settled_ms(live)
                return
            if time.monotonic() > deadline:
                view = "; ".join(f"{n}: {sorted(ps)}" for n, ps in owned.items()) or "none live"
                raise ScenarioError(
                    f"step {step.index}: the group did not settle within {timeout:g} s ({view})"
                )
            time.sleep(0.1)

    def _settled_ms(self, live: list[str]) -> int | None:
        """Milliseconds from the current step's start to the last change of a live
        client's assignment or member epoch (the clients' own timestamps); None when
        nothing changed."""
        start = int(self.step_times[-1]["ts"])
        changes = [
            int(e["ts"])
            for n in live
            for e in self.events(n)
            if e.get("event") in ("assignment", "member") and int(e.get("ts", 0)) >= start
        ]
        return max(changes) - start if changes else None

    def last_member(self, name: str) -> tuple[Any, Any]:
        last: tuple[Any, Any] = (None, None)
        for e in self.events(name):
            if e.get("event") == "member":
                last = (e.get("member_id"), e.get("epoch"))
        return last

    def wait_event(self, step: Step, start_ms: int) -> None:
        timeout = float(step.params.get("timeout_s", 60))
        names = self.scenario.targets(step.params["client"], step)
        want = str(step.params["event"])
        count = int(step.params.get("count", 1))
        deadline = time.monotonic() + timeout
        while True:
            hits = [
                e
                for n in names
                for e in self.events(n)
                if e.get("event") == want
                and e.get("ts", 0) >= start_ms
                and (want not in ("assigned", "assignment") or e.get("partitions"))
            ]
            if len(hits) >= count:
                return
            if time.monotonic() > deadline:
                raise ScenarioError(
                    f"step {step.index}: no {want!r} event from {', '.join(names)} "
                    f"within {timeout:g} s"
                )
            time.sleep(0.05)

    def group_setting(self, name: str, default: int) -> int:
        """A consumer group's setting: the group's own (``consumer.NAME``), else the
        broker's (``group.consumer.NAME``), else Kafka's default."""
        settings = {**self.broker.settings(), **self.scenario.group_config}
        value = settings.get(f"consumer.{name}") or settings.get(f"group.consumer.{name}")
        return int(value) if value is not None else default

    def assignment_interval_ms(self) -> int:
        """KIP-1263 batching (KAFKA-20291, Kafka 4.3 and later; 0 before: a target is
        computed at once)."""
        major, minor = (int(x) for x in self.kafka_version.split(".")[:2])
        if (major, minor) < (4, 3):
            return 0
        return self.group_setting("assignment.interval.ms", 1000)

    def heartbeat_ms(self) -> int:
        return self.group_setting("heartbeat.interval.ms", 5000)

    def session_ms(self) -> int:
        return self.group_setting("session.timeout.ms", 45000)

    # ---------------------------------------------------------------- steps

    def do(self, step: Step) -> None:
        start_ms = int(time.time() * 1000)
        self.step_times.append({"step": step.index, "ts": start_ms, "what": step.describe()})
        if "label" in step.params:
            self.step_times[-1]["label"] = str(step.params["label"])
        self.log(f"step {step.index}: {step.describe()}")
        a, target, params = step.action, step.target, step.params
        names = self.scenario.targets(target, step) if a in CLIENT_ACTIONS else []
        if a == "start":
            for n in names:
                self.start(n)
        elif a == "subscribe":
            for n in names:
                if "topics" in params:
                    topics = [self.topic(t) for t in params["topics"]]
                    self.client_command(n, {"cmd": "subscribe", "topics": topics})
                    self.subscribed[n] = topics
                else:
                    pattern = re.escape(self.prefix) + str(params["pattern"])
                    self.client_command(n, {"cmd": "subscribe_pattern", "pattern": pattern})
                    self.subscribed[n] = pattern
        elif a == "unsubscribe":
            for n in names:
                self.client_command(n, {"cmd": "unsubscribe"})
                self.subscribed.pop(n, None)
        elif a == "commit":
            for n in names:
                self.client_command(n, {"cmd": "commit"})
        elif a == "stall":
            for n in names:
                self.client_command(n, {"cmd": "stall", "ms": int(params["ms"])})
        elif a == "slow_callback":
            for n in names:
                self.client_command(
                    n,
                    {"cmd": "slow_callback", "callback": params["callback"], "ms": params["ms"]},
                )
        elif a == "close":
            for n in names:
                self.client_command(n, {"cmd": "close", "leave": params.get("leave", "default")})
            for n in names:
                self._wait_closed(n, step)
                self.closed.add(n)
        elif a == "crash":
            for n in names:
                self.client_command(n, {"cmd": "crash"})
                self.closed.add(n)
            for n in names:
                _wait(_exited(self.driver(n)), 15, f"step {step.index}: {n} exit")
        elif a in ("cut", "heal", "sever"):
            assert self.capture is not None
            for n in names:
                self.capture.control(f"{a} {n}")
        elif a == "create_topic":
            self.admin_create(self.topic(str(target)), int(params["partitions"]))
        elif a == "add_partitions":
            self.admin_add_partitions(self.topic(str(target)), int(params["total"]))
        elif a == "restart_broker":
            self.broker.restart()
        elif a == "sleep_ms":
            time.sleep(int(target) / 1000)
        elif a == "wait":
            if target == "stable":
                self.wait_stable(step)
            else:
                self.wait_event(step, start_ms)

    def _wait_closed(self, name: str, step: Step) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if any(e.get("event") == "closed" for e in self.events(name)):
                return
            if not self.driver(name).alive():
                return
            time.sleep(0.05)
        raise ScenarioError(f"step {step.index}: {name} did not close within 30 s")

    # ---------------------------------------------------------------- admin

    def admin(self) -> Any:
        """One admin client for the run, straight to the broker (not through the proxy);
        kept, since its futures fail once the client is gone."""
        from confluent_kafka.admin import AdminClient  # noqa: PLC0415  the Kafka client only with a broker

        if self._admin is None:
            self._admin = AdminClient({"bootstrap.servers": self.broker.bootstrap, "log_level": 0})
        return self._admin

    def admin_create(self, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import NewTopic  # type: ignore[attr-defined]  # noqa: PLC0415  the Kafka client only with a broker

        futures = self.admin().create_topics(
            [NewTopic(topic, num_partitions=partitions, replication_factor=1)],
            operation_timeout=30,
        )
        for f in futures.values():
            f.result(timeout=60)
        if self.capture is not None:  # not a topic of the start: the group sees it appear
            self.admin_events.append(_admin_event("CreateTopic", topic, partitions=partitions))
        self.topics[topic] = partitions
        _wait(lambda: self._metadata_has(topic, partitions), 30, f"topic {topic} metadata")

    def admin_add_partitions(self, topic: str, total: int) -> None:
        from confluent_kafka.admin import NewPartitions  # type: ignore[attr-defined]  # noqa: PLC0415  the Kafka client only with a broker

        for f in self.admin().create_partitions([NewPartitions(topic, total)]).values():
            f.result(timeout=60)
        added = total - self.topics.get(topic, total)
        self.admin_events.extend(_admin_event("AddPartitions", topic) for _ in range(added))
        self.topics[topic] = total
        _wait(lambda: self._metadata_has(topic, total), 30, f"topic {topic} metadata")

    def _metadata_has(self, topic: str, partitions: int) -> bool:
        meta = self.admin().list_topics(topic=topic, timeout=10)
        t = meta.topics.get(topic)
        return t is not None and t.error is None and len(t.partitions) == partitions

    def alter_group_config(self) -> None:
        """The scenario's group-level settings (``group_config``: a GROUP resource's
        ``consumer.session.timeout.ms`` …, Admin ``incrementalAlterConfigs``)."""
        if not self.scenario.group_config:
            return
        from confluent_kafka.admin import (  # type: ignore[attr-defined]  # noqa: PLC0415  the Kafka client only with a broker
            AlterConfigOpType,
            ConfigEntry,
            ConfigResource,
            ResourceType,
        )

        resource = ConfigResource(
            ResourceType.GROUP,
            self.group,
            incremental_configs=[
                ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
                for k, v in self.scenario.group_config.items()
            ],
        )
        for f in self.admin().incremental_alter_configs([resource]).values():
            f.result(timeout=60)

    # ---------------------------------------------------------------- teardown

    def stop_clients(self) -> None:
        shield()
        for driver in [*self.retired, *self.drivers.values()]:
            with contextlib.suppress(Exception):
                driver.stop()


def _wait(done: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise ScenarioError(f"timed out waiting for {what} ({timeout_s:g} s)")
        time.sleep(0.05)


def _admin_event(kind: str, topic: str, *, partitions: int | None = None) -> dict[str, Any]:
    """An administrator's change as a trace event, stamped now; a created topic carries
    the partition count it was created with (docs/trace-format.md, "Administrator
    events")."""
    payload: dict[str, Any] = {"topic": topic}
    if partitions is not None:
        payload["partitions"] = partitions
    return {
        "seq": 0,
        "ts": int(time.time() * 1000),
        "source": "admin",
        "kind": kind,
        "payload": payload,
    }


def _exited(driver: Any) -> Callable[[], bool]:
    return lambda: not driver.alive()


@dataclass(frozen=True)
class Outcome:
    """What a run produced."""

    directory: Path
    verdicts: dict[str, Any]
    expected: dict[str, str]
    error: str | None

    @property
    def as_expected(self) -> bool:
        return self.error is None and all(
            self.verdicts.get(mode, {}).get("result") == want
            for mode, want in self.expected.items()
        )


def run_scenario(
    scenario: Scenario,
    work: Path,
    *,
    kafka_version: str,
    broker: Broker | None = None,
    prefix: str = "",
    log: Log = lambda m: None,
) -> tuple[dict[str, Any], str | None]:
    """Run ``scenario`` with ``work`` (an empty directory) as its run directory; returns
    the verdicts and the error that stopped the scenario, if one did. Every process it
    started is stopped before it returns (or raises)."""
    began = time.monotonic()
    (work / "scenario.toml").write_text(scenario.text, encoding="utf-8")
    own = broker is None
    if broker is None:
        broker = Broker(version=kafka_version, properties=scenario.broker, log=log)
        broker.start()
    run = Run(scenario, work, broker, kafka_version, log, prefix=prefix)
    error: str | None = None
    raw = work / ".capture.ndjson"
    try:
        run.alter_group_config()
        for topic, partitions in scenario.topics.items():
            run.admin_create(run.topic(topic), partitions)
        # The broker's session timeout is the consumer-protocol members' (a classic member
        # sends its own in JoinGroup).
        consumers = family_named(scenario.protocol).consumer_members
        run.capture = Capture(
            upstream=broker.bootstrap,
            out=raw,
            protocol=scenario.protocol,
            session_timeout_ms=run.session_ms() if consumers else None,
            log_path=work / "capture.log",
        )
        run.capture.start()
        for step in scenario.steps:
            run.do(step)
    except ScenarioError as e:
        error = str(e)
        log(f"error: {error}")
    finally:
        run.stop_clients()
        if run.capture is not None:
            run.capture.stop()
        broker.copy_log(work / "broker.log")
        if own:
            broker.stop()
    info = {
        "name": "Apache Kafka",
        "version": broker.kafka_version or kafka_version,
        "commit": broker.commit_id or "unknown",
        "clients": ", ".join(sorted({d.library for d in run.drivers.values()})),
    }
    if raw.exists():
        _write_capture(raw, work / "capture.ndjson", run, info)
        raw.unlink()
    _write_timeline(run, work / "timeline.txt")
    verdicts = validate_all(work / "capture.ndjson", scenario, run) if not error else {}
    meta = {
        "scenario": scenario.name,
        "kafka": info,
        "broker_settings": {**broker.settings(), **scenario.broker},
        "group_config": dict(scenario.group_config),
        "broker_startup_s": broker.startup_s,
        "scenario_s": round(time.monotonic() - began, 1),
        "steps": run.step_times,
        "error": error,
        "verdicts": verdicts,
        "expected": dict(scenario.expect),
    }
    (work / "verdicts.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta, error


def _write_capture(raw: Path, final: Path, run: Run, info: dict[str, str]) -> None:
    """The capture as the proxy wrote it, completed with what the proxy cannot see: in the
    header the broker (``implementation``), the group's assignment interval (not on the
    wire) and the topics as they were at the start; the administrator's changes
    (``CreateTopic``, ``AddPartitions``) and each client's own events (its callbacks,
    subscriptions, closes, a crash: ``groupcheck.validate.client_events``) merged in by
    time."""
    lines = [x for x in raw.read_text(encoding="utf-8").splitlines() if x.strip()]
    header = json.loads(lines[0])
    header["implementation"] = info
    header["assignment_interval_ms"] = run.assignment_interval_ms()
    header["topics"] = {run.topic(t): n for t, n in run.scenario.topics.items()}
    lines = [json.dumps(header), *lines[1:]]
    lines = insert_events(lines, run.admin_events)
    lines = merge_client_events(lines, {n: run.events(n) for n in sorted(run.started)})
    final.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_timeline(run: Run, path: Path) -> None:
    """Steps, driver events and wire exchanges in one time-ordered text file."""
    rows: list[tuple[int, str]] = []
    for s in run.step_times:
        rows.append((s["ts"], f"step {s['step']}: {s['what']}"))
    for name in sorted(run.started):
        for e in run.events(name):
            rest = {k: v for k, v in e.items() if k not in ("ts", "client", "event")}
            rows.append((int(e.get("ts", 0)), f"{name}: {e.get('event')} {json.dumps(rest)}"))
    capture = run.work / "capture.ndjson"
    if capture.exists():
        lines = capture.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines[1:], start=2):
            e = json.loads(line)
            p = e.get("payload", {})
            if e.get("kind") == "DeliverMessage":
                body = json.dumps(p.get("body"), sort_keys=True)
                text = f"wire:{n} {p.get('direction')} {p.get('api')} {body}"
            else:
                text = f"wire:{n} {e.get('kind')} {json.dumps(p)}"
            rows.append((int(e.get("ts") or 0), text))
    rows.sort(key=lambda r: r[0])
    t0 = rows[0][0] if rows else 0
    path.write_text(
        "".join(f"{(ts - t0) / 1000:9.3f}  {text}\n" for ts, text in rows), encoding="utf-8"
    )


VALIDATE = (sys.executable, "-m", "groupcheck", "validate")


def validate_all(capture: Path, scenario: Scenario, run: Run) -> dict[str, Any]:
    """``groupcheck validate`` on the capture (:func:`validate_capture`) with the run's
    group settings."""
    return validate_capture(
        capture,
        settle=scenario.settle,
        settle_ms=scenario.settle_ms,
        assignment_interval_ms=run.assignment_interval_ms(),
        heartbeat_ms=run.heartbeat_ms(),
        explained=scenario.explained,
    )


def validate_capture(
    capture: Path,
    *,
    settle: int,
    settle_ms: int,
    assignment_interval_ms: int,
    heartbeat_ms: int,
    explained: Sequence[Explained] = (),
) -> dict[str, Any]:
    """``groupcheck validate`` on the capture in safety mode (with the capture's own
    timing; a quiet window must outlast the assignment interval and two heartbeats before
    it may demand convergence, since the coordinator may defer a target that long,
    KAFKA-20291), coordinator mode and client mode; each result with its findings, and
    ``explained`` (the ids) when the scenario's ``[[explained]]`` declarations cover
    every finding of a violation (:func:`groupcheck.kafka.scenario.explained_by`)."""
    verdicts: dict[str, Any] = {}
    if not capture.exists():
        return verdicts
    settle_ms = max(settle_ms, assignment_interval_ms + 2 * heartbeat_ms)
    options = ["--settle", str(settle), "--settle-ms", str(settle_ms)]
    protocol = _protocol(capture)
    family = load_families().get(protocol) if protocol is not None else None
    for mode, extra in (("safety", options), ("coordinator", []), ("client", [])):
        if mode == "client" and family is not None and not family.consumer_members:
            # Client mode replays consumer-protocol members; a classic capture has none.
            verdicts[mode] = {
                "result": "n/a",
                "exit": None,
                "violations": [],
                "reasons": [
                    "client mode replays the consumer protocol's members; this capture's "
                    "are all classic"
                ],
                "zombie_windows": 0,
                "handovers": {},
                "notes": [],
                "errors": [],
            }
            continue
        done = subprocess.run(
            [*VALIDATE, "--mode", mode, "--json", *extra, capture.name],
            cwd=capture.parent,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        try:
            doc = json.loads(done.stdout)
        except ValueError:
            doc = {"result": "error", "errors": [done.stderr.strip()[-500:]]}
        verdicts[mode] = {
            "result": doc.get("result"),
            "exit": done.returncode,
            "violations": [
                f"{v.get('line')}: {v.get('property')}: {v.get('message')}"
                for v in doc.get("violations", [])
            ][:20],
            "reasons": doc.get("reasons", [])[:20],
            "zombie_windows": len(doc.get("zombie_windows", [])),
            "handovers": _handover_classes(doc),
            "notes": doc.get("notes", [])[:20],
            "errors": doc.get("errors", []),
        }
        findings = [
            (str(v.get("property")), str(v.get("message"))) for v in doc.get("violations", [])
        ]
        ids = explained_by(explained, mode, doc.get("result"), findings)
        if ids is not None:
            verdicts[mode]["explained"] = ids
    return verdicts


def _protocol(capture: Path) -> str | None:
    """The ``protocol`` of the capture's header (None when it cannot be read)."""
    try:
        with capture.open(encoding="utf-8") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError):
        return None
    return header.get("protocol") if isinstance(header, dict) else None


def _handover_classes(doc: dict[str, Any]) -> dict[str, int]:
    """How many hand-overs of unreleased partitions safety mode put in each class."""
    counts: dict[str, int] = {}
    for f in doc.get("files", []):
        for h in f.get("handovers") or []:
            key = str(h.get("classification"))
            counts[key] = counts.get(key, 0) + 1
    return counts

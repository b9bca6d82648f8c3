"""Scenario files: what ``groupcheck kafka run`` does against a real broker, as TOML a
user can read, run and edit (``groupcheck/kafka/scenarios/*.toml``; ``docs/kafka.md``).

A scenario names the broker's group settings, the topics, the clients (which driver —
the Java consumer or librdkafka — which protocol, assignor, instance id …), the steps,
and the verdicts its truth calls for. Reading is strict: an unknown key, a step naming
no declared client, a bad value is one line naming the file and the step."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.status import ConfigError

SCENARIO_DIR = Path(__file__).with_name("scenarios")
"""The scenarios groupcheck ships."""

DRIVERS = ("java", "rdkafka")
PROTOCOLS = ("consumer", "classic")
CAPTURE_PROTOCOLS = ("consumer", "classic", "mixed")
VERDICTS = ("ok", "violation", "inconclusive")

_CLIENT_KEYS = {
    "driver",
    "protocol",
    "assignor",
    "instance_id",
    "max_poll_interval_ms",
    "session_timeout_ms",
    "heartbeat_interval_ms",
    "props",
    "process",
    "count",
    "group",
}
_TOP_KEYS = {
    "description",
    "protocol",
    "group",
    "broker",
    "group_config",
    "topics",
    "clients",
    "steps",
    "expect",
    "explained",
    "settle",
    "settle_ms",
}

ACTIONS: dict[str, set[str]] = {
    # action key → the other keys it takes
    "start": set(),
    "subscribe": {"topics", "pattern"},
    "unsubscribe": set(),
    "commit": set(),
    "stall": {"ms"},
    "slow_callback": {"callback", "ms"},
    "close": {"leave"},
    "crash": set(),
    "cut": set(),
    "heal": set(),
    "sever": set(),
    "create_topic": {"partitions"},
    "add_partitions": {"total"},
    "restart_broker": set(),
    "sleep_ms": set(),
    "wait": {"client", "event", "timeout_s", "quiet_ms", "count", "label"},
}
"""Every step kind and the parameters it takes (``docs/kafka.md``, "Scenario files")."""

WAITS = ("stable", "event")
CLIENT_ACTIONS = {
    "start",
    "subscribe",
    "unsubscribe",
    "commit",
    "stall",
    "slow_callback",
    "close",
    "crash",
    "cut",
    "heal",
    "sever",
}


@dataclass(frozen=True)
class ClientSpec:
    """One consumer: its driver process and its consumer settings."""

    name: str
    driver: str = "java"
    protocol: str = "consumer"
    assignor: str | None = None
    instance_id: str | None = None
    max_poll_interval_ms: int | None = None
    session_timeout_ms: int | None = None
    heartbeat_interval_ms: int | None = None
    props: Mapping[str, str] = field(default_factory=dict)
    process: str = ""
    """librdkafka: clients with one process name share a driver process."""
    group: str | None = None
    """Another group id than the scenario's (a second group on the broker)."""


@dataclass(frozen=True)
class Explained:
    """An expected, explained divergence of one validator (``[[explained]]``,
    docs/kafka.md "Explained divergences"): the validator's verdict is shown as
    ``explained (ID)`` only when it is a violation and every finding it reports has the
    declared ``property``, names the declared ``member`` (when given) and matches the
    ``match`` regular expression; any other finding keeps the verdict a violation."""

    validator: str
    id: str
    """The explanation: a row of docs/fidelity.md or a report of docs/findings.md."""
    doc: str
    property: str
    match: str
    member: str | None = None

    def covers(self, prop: str, message: str) -> bool:
        """Whether one finding (its property and message) is the declared divergence."""
        if prop != self.property or not re.search(self.match, message):
            return False
        return self.member is None or f"({self.member})" in message


def explained_by(
    decls: Sequence[Explained],
    validator: str,
    result: str | None,
    findings: Sequence[tuple[str, str]],
) -> str | None:
    """The labels of the declarations that explain a validator's verdict (``"findings
    K1"``: the doc's name and the id), or
    None: the verdict is a violation, it has findings, and each finding is covered by
    one of the declarations for that validator."""
    mine = [d for d in decls if d.validator == validator]
    if result != "violation" or not mine or not findings:
        return None
    used: list[str] = []
    for prop, message in findings:
        hit = next((d for d in mine if d.covers(prop, message)), None)
        if hit is None:
            return None
        label = f"{Path(hit.doc).stem} {hit.id}"  # "findings K1", "fidelity RK6"
        if label not in used:
            used.append(label)
    return ", ".join(used)


@dataclass(frozen=True)
class Step:
    """One step: ``action`` (a key of :data:`ACTIONS`), its target (a client name or
    pattern, a topic, a number) and its parameters."""

    index: int
    action: str
    target: Any
    params: Mapping[str, Any]

    def describe(self) -> str:
        extra = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.action} {self.target}" + (f" {extra}" if extra else "")


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario file."""

    name: str
    path: Path
    description: str
    protocol: str
    group: str
    broker: Mapping[str, str]
    group_config: Mapping[str, str]
    topics: Mapping[str, int]
    clients: Mapping[str, ClientSpec]
    steps: Sequence[Step]
    expect: Mapping[str, str]
    settle: int
    settle_ms: int
    text: str
    explained: Sequence[Explained] = ()
    """Expected, explained divergences (:class:`Explained`)."""

    def targets(self, pattern: Any, step: Step | None = None) -> list[str]:
        """The clients a step's target names (``m*`` names every client from m)."""
        names = [pattern] if isinstance(pattern, str) else list(pattern)
        out: list[str] = []
        for name in names:
            hits = [c for c in self.clients if fnmatch.fnmatchcase(c, name)]
            if not hits:
                where = f"step {step.index}" if step else "a step"
                raise ConfigError(f"{self.path}: {where}: no client matches {name!r}")
            out.extend(h for h in hits if h not in out)
        return out


def scenario_files() -> dict[str, Path]:
    """Every shipped scenario: name → file."""
    return {p.stem: p for p in sorted(SCENARIO_DIR.glob("*.toml"))}


def find(name: str) -> Path:
    """A shipped scenario by name, or a scenario file by path."""
    shipped = scenario_files()
    if name in shipped:
        return shipped[name]
    path = Path(name)
    if path.suffix == ".toml" and path.is_file():
        return path
    raise ConfigError(
        f"no scenario {name!r}: one of {', '.join(shipped)}, or a .toml file "
        "('groupcheck kafka scenarios' lists them)"
    )


def load(path: Path) -> Scenario:
    """Read and check one scenario file (ConfigError: one line, file and place)."""
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    where = str(path)
    _keys(data, _TOP_KEYS, where)
    protocol = _choice(data.get("protocol", "consumer"), CAPTURE_PROTOCOLS, f"{where}: protocol")
    topics = _mapping(data.get("topics", {}), f"{where}: topics")
    for topic, count in topics.items():
        _int(count, f"{where}: topics.{topic}", low=1, high=10_000)
    clients: dict[str, ClientSpec] = {}
    for name, spec in _mapping(data.get("clients", {}), f"{where}: clients").items():
        for client in _client_specs(name, spec, f"{where}: clients.{name}"):
            clients[client.name] = client
    expect = _mapping(data.get("expect", {}), f"{where}: expect")
    for mode, verdict in expect.items():
        _choice(mode, ("safety", "coordinator", "client"), f"{where}: expect")
        _choice(verdict, VERDICTS, f"{where}: expect.{mode}")
    explained = _explained(data.get("explained", []), f"{where}: explained")
    scenario = Scenario(
        explained=explained,
        name=path.stem,
        path=path,
        description=str(data.get("description", "")).strip(),
        protocol=protocol,
        group=str(data.get("group", "groupcheck")),
        broker={k: _prop(v) for k, v in _mapping(data.get("broker", {}), where).items()},
        group_config={
            k: _prop(v) for k, v in _mapping(data.get("group_config", {}), where).items()
        },
        topics={k: int(v) for k, v in topics.items()},
        clients=clients,
        steps=(),
        expect={k: str(v) for k, v in expect.items()},
        settle=_int(data.get("settle", 20), f"{where}: settle", low=1, high=1_000_000),
        settle_ms=_int(data.get("settle_ms", 1000), f"{where}: settle_ms", low=0, high=10**7),
        text=text,
    )
    steps = data.get("steps", [])
    if not isinstance(steps, list) or not steps:
        raise ConfigError(f"{where}: steps: a list of at least one step is needed")
    parsed = tuple(_step(scenario, i + 1, raw) for i, raw in enumerate(steps))
    return Scenario(**{**scenario.__dict__, "steps": parsed})


_EXPLAINED_KEYS = {"validator", "id", "doc", "property", "match", "member"}


def _explained(raw: Any, where: str) -> tuple[Explained, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected an array of tables ([[explained]])")
    out = []
    for n, item in enumerate(raw, start=1):
        at = f"{where}[{n}]"
        entry = _mapping(item, at)
        _keys(entry, _EXPLAINED_KEYS, at)
        missing = sorted({"validator", "id", "doc", "property", "match"} - set(entry))
        if missing:
            raise ConfigError(f"{at}: missing key {missing[0]!r}")
        validator = _choice(entry["validator"], ("safety", "coordinator", "client"), at)
        texts = {k: entry[k] for k in _EXPLAINED_KEYS if k in entry}
        for key, value in texts.items():
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{at}: {key}: expected a non-empty string")
        if not re.fullmatch(r"docs/[A-Za-z0-9_.-]+\.md", texts["doc"]):
            raise ConfigError(f"{at}: doc: expected a file docs/NAME.md, not {texts['doc']!r}")
        try:
            re.compile(texts["match"])
        except re.error as e:
            raise ConfigError(f"{at}: match: not a regular expression ({e})") from None
        out.append(
            Explained(
                validator=validator,
                id=texts["id"],
                doc=texts["doc"],
                property=texts["property"],
                match=texts["match"],
                member=texts.get("member"),
            )
        )
    return tuple(out)


def _client_specs(name: str, spec: Any, where: str) -> list[ClientSpec]:
    spec = _mapping(spec, where)
    _keys(spec, _CLIENT_KEYS, where)
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]{0,40}", name):
        raise ConfigError(f"{where}: a client name is a letter then letters, digits, _ . -")
    driver = _choice(spec.get("driver", "java"), DRIVERS, f"{where}: driver")
    protocol = _choice(spec.get("protocol", "consumer"), PROTOCOLS, f"{where}: protocol")
    props = {str(k): _prop(v) for k, v in _mapping(spec.get("props", {}), where).items()}
    count = _int(spec.get("count", 1), f"{where}: count", low=1, high=200)
    if count > 1 and driver != "rdkafka" and count > 10:
        raise ConfigError(f"{where}: count: more than 10 Java consumers (a JVM each); use rdkafka")
    timing = {
        key: _int(spec[key], f"{where}: {key}", low=1, high=10**7)
        for key in ("max_poll_interval_ms", "session_timeout_ms", "heartbeat_interval_ms")
        if key in spec
    }
    if protocol == "consumer" and {"session_timeout_ms", "heartbeat_interval_ms"} & set(timing):
        raise ConfigError(
            f"{where}: session_timeout_ms and heartbeat_interval_ms are the broker's for the "
            "consumer protocol (group_config consumer.session.timeout.ms …)"
        )
    names = [name] if count == 1 else [f"{name}{i}" for i in range(1, count + 1)]
    return [
        ClientSpec(
            name=n,
            driver=driver,
            protocol=protocol,
            assignor=spec.get("assignor"),
            instance_id=(
                None
                if spec.get("instance_id") is None
                else str(spec["instance_id"]) + ("" if count == 1 else f"-{i}")
            ),
            props=props,
            process=str(spec.get("process", n)),
            group=spec.get("group"),
            **timing,
        )
        for i, n in enumerate(names, start=1)
    ]


def _step(scenario: Scenario, index: int, raw: Any) -> Step:
    where = f"{scenario.path}: step {index}"
    raw = _mapping(raw, where)
    actions = [k for k in raw if k in ACTIONS]
    if len(actions) != 1:
        raise ConfigError(
            f"{where}: a step has exactly one of {', '.join(ACTIONS)} (has {sorted(raw)})"
        )
    action = actions[0]
    params = {k: v for k, v in raw.items() if k != action}
    _keys(params, ACTIONS[action], f"{where} ({action})")
    step = Step(index, action, raw[action], params)
    if action in CLIENT_ACTIONS:
        scenario.targets(raw[action], step)
    if action == "subscribe" and ("topics" in params) == ("pattern" in params):
        raise ConfigError(f"{where}: subscribe needs topics or pattern (one of them)")
    if action in ("stall", "slow_callback"):
        _int(params.get("ms"), f"{where}: ms", low=0, high=10**7)
    if action == "slow_callback":
        _choice(params.get("callback"), ("assigned", "revoked"), f"{where}: callback")
    if action == "close":
        _choice(params.get("leave", "default"), ("default", "leave", "remain"), f"{where}: leave")
    if action == "sleep_ms":
        _int(raw[action], f"{where}: sleep_ms", low=0, high=10**7)
    if action == "create_topic":
        _int(params.get("partitions"), f"{where}: partitions", low=1, high=10_000)
    if action == "add_partitions":
        if raw[action] not in scenario.topics:
            raise ConfigError(f"{where}: add_partitions: unknown topic {raw[action]!r}")
        _int(params.get("total"), f"{where}: total", low=1, high=10_000)
    if action == "wait":
        _choice(raw[action], WAITS, f"{where}: wait")
        if raw[action] == "event":
            if "client" not in params or "event" not in params:
                raise ConfigError(f"{where}: wait = 'event' needs client and event")
            scenario.targets(params["client"], step)
    return step


def _keys(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        allowed_text = ", ".join(sorted(allowed)) or "none"
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (allowed: {allowed_text})")


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table")
    return value


def _choice(value: Any, allowed: Sequence[str], where: str) -> str:
    if value not in allowed:
        raise ConfigError(f"{where}: expected one of {', '.join(allowed)}, not {value!r}")
    return str(value)


def _int(value: Any, where: str, *, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ConfigError(f"{where}: expected a whole number from {low} to {high}, not {value!r}")
    return value


def _prop(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

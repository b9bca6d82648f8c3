"""Strict reader of vector files (``docs/vectors.md``, ``docs/vectors.schema.json``).

A file that is not valid JSON, or whose shape is not the schema's, raises
``VectorFileError`` with one line naming the file and the JSON path of the fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupcheck.vectors.client import ACTIONS, CLIENT_KEYS
from groupcheck.vectors.mixed import CONFIG_KEYS, REQUESTS, STEP_KEYS, TIMERS
from model.status import ConfigError
from model.trace.strict_json import JsonTextError, loads

SCHEMA = "groupcheck-vectors"
VERSION = 1
KINDS = (
    "reconcile",
    "target-assignment",
    "server-assignor",
    "client-assignor",
    "consumer-heartbeat",
    "consumer-membership",
    "classic-group",
)
PROPERTIES = (
    "valid",
    "balanced",
    "fully-balanced",
    "cooperative-follow-ups",
    "stable-reassignment",
    "order-independent",
    "same-as-first",
)
"""Properties a vector may ask for instead of (or besides) an exact answer."""

_TOP_KEYS = {"schema", "version", "kafka_version", "source", "vectors"}
_VECTOR_KEYS = {"id", "method", "kind", "input", "expected", "expressible", "reason"}
_REQUIRED_INPUT: dict[str, tuple[str, ...]] = {
    "reconcile": (
        "topics",
        "member",
        "target_epoch",
        "target_assignment",
        "current_partition_epochs",
        "owned_topic_partitions",
        "has_subscription_changed",
        "resolved_regular_expressions",
    ),
    "target-assignment": ("topics", "members", "target_assignment", "group_epoch"),
    "server-assignor": ("assignor", "subscription_type", "topics", "members"),
    "client-assignor": ("assignor", "topics", "subscriptions"),
    "consumer-heartbeat": ("topics", "steps"),
    "consumer-membership": ("client", "steps"),
    "classic-group": ("steps",),
}
_EXPECTED_KEYS = {
    "member",
    "assignment",
    "error",
    "properties",
    "then",
    "settled",
    "bounds",
    "rounds",
    "spec",
    "records",
    "responses",
    "group",
    "steps",
}


class VectorFileError(ConfigError):
    """A vector file that cannot be read: one line, file and JSON path (exit status 2)."""


@dataclass(frozen=True, slots=True)
class Vector:
    """One Kafka test case (or parameter row, or assertion of a test)."""

    id: str
    method: str
    kind: str
    input: dict[str, Any]
    expected: dict[str, Any]
    expressible: bool
    reason: str | None


@dataclass(frozen=True, slots=True)
class VectorFile:
    """One Kafka test class's vectors."""

    path: Path
    name: str
    kafka_version: str
    source_class: str
    artifact: str
    vectors: tuple[Vector, ...]


def _fail(path: Path, where: str, what: str) -> VectorFileError:
    return VectorFileError(f"{path}: {where}: {what}")


def _require(
    path: Path, obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str
) -> Any:
    if key not in obj:
        raise _fail(path, where, f"missing key {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _fail(path, f"{where}.{key}", f"must be {_type_name(kind)}")
    return value


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {dict: "an object", list: "an array", str: "a string", int: "an integer"}
    names[bool] = "true or false"
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _unknown_keys(path: Path, obj: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise _fail(path, where, f"unknown key {extra[0]!r}")


HEARTBEAT_CONFIG = (
    "server_assignors",
    "max_group_size",
    "heartbeat_interval_ms",
    "assignment_interval_ms",
)
"""The settings a ``consumer-heartbeat`` vector may give (``groupcheck.vectors.coordinator``)."""
_STEP_KEYS = {
    "request",
    "session_timeout",
    "rebalance_timeout",
    "resolve_regexes",
    "sleep_ms",
    "assignor_result",
}
_STEP_ACTIONS = {"request", "session_timeout", "rebalance_timeout", "resolve_regexes"}


def _check_heartbeat_input(path: Path, inp: dict[str, Any], where: str) -> None:
    """The shape of a ``consumer-heartbeat`` input the runner reads: its settings, and each
    step one request or one timer (or neither: the group as loaded)."""
    config = inp.get("config", {})
    if not isinstance(config, dict):
        raise _fail(path, f"{where}.config", "must be an object")
    for key in config:
        if key not in HEARTBEAT_CONFIG:
            raise _fail(path, f"{where}.config", f"unknown setting {key!r}")
    group = inp.get("group")
    if group is not None and not isinstance(group, dict):
        raise _fail(path, f"{where}.group", "must be an object or null")
    if isinstance(group, dict) and not group.get("absent"):
        _require(path, group, "group_epoch", int, f"{where}.group")
    steps = _require(path, inp, "steps", list, where)
    for i, step in enumerate(steps):
        at = f"{where}.steps[{i}]"
        if not isinstance(step, dict):
            raise _fail(path, at, "must be an object")
        _unknown_keys(path, step, _STEP_KEYS, at)
        if len(step.keys() & _STEP_ACTIONS) > 1:
            raise _fail(path, at, "one request or one timer per step (a resolution counts as one)")
        if "resolve_regexes" in step and step["resolve_regexes"] is not True:
            raise _fail(path, f"{at}.resolve_regexes", "must be true")
        if "request" in step:
            request = _require(path, step, "request", dict, at)
            _require(path, request, "member_epoch", int, f"{at}.request")


def _check_classic_input(path: Path, inp: dict[str, Any], where: str) -> None:
    """The shape of a ``classic-group`` input: its settings, the loaded group, and each
    step one request (with the ``client`` sending it) or one timer."""
    config = inp.get("config", {})
    if not isinstance(config, dict):
        raise _fail(path, f"{where}.config", "must be an object")
    for key in config:
        if key not in CONFIG_KEYS:
            raise _fail(path, f"{where}.config", f"unknown setting {key!r}")
    group = inp.get("group")
    if group is not None and not isinstance(group, dict):
        raise _fail(path, f"{where}.group", "must be an object or null")
    steps = _require(path, inp, "steps", list, where)
    for i, step in enumerate(steps):
        at = f"{where}.steps[{i}]"
        if not isinstance(step, dict):
            raise _fail(path, at, "must be an object")
        _unknown_keys(path, step, STEP_KEYS, at)
        actions = step.keys() & {*REQUESTS, *TIMERS}
        if len(actions) != 1:
            raise _fail(path, at, "one request or one timer per step")
        if actions & set(REQUESTS):
            _require(path, step, "client", str, at)


def _check_membership_input(path: Path, inp: dict[str, Any], where: str) -> None:
    """The shape of a ``consumer-membership`` input: the consumer's settings, and each step
    one action of ``groupcheck.vectors.client.ACTIONS``."""
    client = _require(path, inp, "client", dict, where)
    for key in client:
        if key not in CLIENT_KEYS:
            raise _fail(path, f"{where}.client", f"unknown setting {key!r}")
    steps = _require(path, inp, "steps", list, where)
    for i, step in enumerate(steps):
        at = f"{where}.steps[{i}]"
        if not isinstance(step, dict) or len(step) != 1 or next(iter(step)) not in ACTIONS:
            raise _fail(path, at, f"must be one action of {', '.join(ACTIONS)}")
        if "response" in step:
            _require(path, step, "response", dict, at)


def _vector(path: Path, raw: Any, where: str) -> Vector:
    if not isinstance(raw, dict):
        raise _fail(path, where, "must be an object")
    _unknown_keys(path, raw, _VECTOR_KEYS, where)
    vid = _require(path, raw, "id", str, where)
    method = _require(path, raw, "method", str, where)
    kind = _require(path, raw, "kind", str, where)
    if kind not in KINDS:
        raise _fail(path, f"{where}.kind", f"must be one of {', '.join(KINDS)}")
    inp = _require(path, raw, "input", dict, where)
    for key in _REQUIRED_INPUT[kind]:
        if key not in inp:
            raise _fail(path, f"{where}.input", f"missing key {key!r} (kind {kind})")
    if kind == "consumer-heartbeat":
        _check_heartbeat_input(path, inp, f"{where}.input")
    if kind == "consumer-membership":
        _check_membership_input(path, inp, f"{where}.input")
    if kind == "classic-group":
        _check_classic_input(path, inp, f"{where}.input")
    expected = _require(path, raw, "expected", dict, where)
    _unknown_keys(path, expected, _EXPECTED_KEYS, f"{where}.expected")
    rounds = (inp.get("rounds", []), expected.get("rounds", []))
    if not all(isinstance(r, list) for r in rounds) or len(rounds[0]) != len(rounds[1]):
        raise _fail(path, f"{where}.expected.rounds", "needs one entry per input.rounds entry")
    for prop in expected.get("properties", []):
        if prop not in PROPERTIES:
            raise _fail(path, f"{where}.expected.properties", f"unknown property {prop!r}")
    expressible = raw.get("expressible", True)
    if not isinstance(expressible, bool):
        raise _fail(path, f"{where}.expressible", "must be true or false")
    reason = raw.get("reason")
    if expressible and not expected.keys() & {
        "member",
        "assignment",
        "error",
        "properties",
        "responses",
        "steps",
    }:
        raise _fail(
            path,
            f"{where}.expected",
            "needs member, assignment, error, properties, responses or steps",
        )
    if not expressible and not isinstance(reason, str):
        raise _fail(path, where, "a vector with expressible false needs a reason (a string)")
    return Vector(vid, method, kind, inp, expected, expressible, reason)


def load_file(path: Path) -> VectorFile:
    """Read and check one vector file."""
    try:
        doc = loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise VectorFileError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise VectorFileError(f"{path}: not UTF-8 text") from None
    except JsonTextError as e:
        raise VectorFileError(f"{path}:{e.line}:{e.column}: {e.reason}") from None
    if not isinstance(doc, dict):
        raise _fail(path, "$", "must be an object")
    _unknown_keys(path, doc, _TOP_KEYS | {"answers"}, "$")
    if _require(path, doc, "schema", str, "$") != SCHEMA:
        raise _fail(path, "$.schema", f"must be {SCHEMA!r}")
    if _require(path, doc, "version", int, "$") != VERSION:
        raise _fail(path, "$.version", f"must be {VERSION}")
    kafka_version = _require(path, doc, "kafka_version", str, "$")
    source = _require(path, doc, "source", dict, "$")
    source_class = _require(path, source, "class", str, "$.source")
    artifact = _require(path, source, "artifact", str, "$.source")
    raw_vectors = _require(path, doc, "vectors", list, "$")
    vectors = tuple(_vector(path, v, f"$.vectors[{i}]") for i, v in enumerate(raw_vectors))
    seen: set[str] = set()
    for i, v in enumerate(vectors):
        if v.id in seen:
            raise _fail(path, f"$.vectors[{i}].id", f"id {v.id!r} given twice")
        seen.add(v.id)
    return VectorFile(path, path.stem, kafka_version, source_class, artifact, vectors)


def load_dir(directory: Path, only: str | None = None) -> list[VectorFile]:
    """Every ``*.json`` vector file of ``directory`` (``explained.json`` excepted), by name;
    ``only`` keeps the files whose stem or class's simple name is ``only``."""
    if not directory.is_dir():
        raise VectorFileError(f"{directory}: not a directory")
    files = [load_file(p) for p in sorted(directory.glob("*.json")) if p.name != EXPLAINED]
    if only is not None:
        files = [f for f in files if only in (f.name, f.source_class.rsplit(".", 1)[-1])]
        if not files:
            raise VectorFileError(f"{directory}: no vector file for class {only!r}")
    return files


EXPLAINED = "explained.json"


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why the model's answer differs from a Kafka test's, and the fidelity row saying so."""

    reason: str
    fidelity: str


def load_explained(directory: Path) -> dict[str, Explanation]:
    """``explained.json``: vector id → explanation (an empty mapping when absent)."""
    path = directory / EXPLAINED
    if not path.exists():
        return {}
    try:
        doc = loads(path.read_text(encoding="utf-8"))
    except JsonTextError as e:
        raise VectorFileError(f"{path}:{e.line}:{e.column}: {e.reason}") from None
    if not isinstance(doc, dict):
        raise _fail(path, "$", "must be an object")
    result: dict[str, Explanation] = {}
    for vid, entry in doc.items():
        where = f"$[{vid!r}]"
        if not isinstance(entry, dict):
            raise _fail(path, where, "must be an object")
        _unknown_keys(path, entry, {"reason", "fidelity"}, where)
        result[vid] = Explanation(
            _require(path, entry, "reason", str, where),
            _require(path, entry, "fidelity", str, where),
        )
    return result

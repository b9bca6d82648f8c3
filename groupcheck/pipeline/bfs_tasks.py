"""The Python side of the Spark BFS (``groupcheck.pipeline.bfs``): what a task does to a
batch of frontier states or of new states. No pyspark here: the functions map Arrow
record batches to Arrow record batches (``mapInArrow``).

States cross processes, and a Spark job may be killed and resumed by other processes, so a
state's fingerprint must not depend on the process: ``stable_fingerprint`` hashes a
canonical encoding of the value (sets and maps in sorted order) with BLAKE2b, unlike
Python's ``hash`` (randomised strings, ``hash(None)`` by address in Python 3.11).

Order: every row carries its state's discovery key, the byte string of the action
indices (two bytes each, plus one) on the path that discovered it first; byte order is
the serial engine's discovery order (``groupcheck.explore.pbfs``, "The same search as the
serial engine"). A violation is a row whose ``order`` places it among the serial engine's
events: ``key + 0000 + 00`` the convergence check of a state, ``key + a + 00`` the step
check of its ``a``-th transition, ``key + a + 01`` the state checks of the successor it
discovered.
"""

from __future__ import annotations

import enum
import glob
import hashlib
import os
import pickle
import struct
import uuid
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from groupcheck.explore.bfs import _step_may_matter
from groupcheck.explore.channels import channel_normal_form
from groupcheck.explore.minimise import convergence_violation
from groupcheck.explore.symmetry import canonicaliser
from invariants.check import Checker, Violation
from invariants.liveness import DEFAULT_BOUND, FairMemo, fair_schedule
from invariants.snapshot import snapshot_key
from model import system
from model.config import Config
from model.family import family_of
from model.ids import FrozenMap
from model.system import AnyState

SCHEMA = pa.schema(
    [
        ("fp", pa.int64()),
        ("key", pa.binary()),
        ("parent", pa.int64()),
        ("action", pa.int32()),
        ("state", pa.binary()),
        ("property", pa.string()),
        ("message", pa.string()),
        ("order", pa.binary()),
    ]
)
"""Successor, frontier and event rows: an event has ``property`` set (``#steps``: the
transitions a task took, in ``action``)."""

DDL = (
    "fp long, key binary, parent long, action int, state binary, property string, "
    "message string, `order` binary"
)
STEPS = "#steps"
UNDECIDED = "#undecided"
"""A task's row counting (in ``action``) the states whose fair schedule the bound (in
``message``) cut without showing non-convergence."""
STATES = "#states"
"""A ``check`` task's row counting the new states it passed through (in ``action``)."""
WITNESSES = "#witnesses"
"""A task's row naming the SOMETIMES witnesses its checker has seen (comma-separated)."""


def _encode_slow(value: Any, out: list[bytes]) -> None:
    """The canonical encoding, written plainly: what ``_encode`` computes (a test compares
    the two)."""
    if value is None:
        out.append(b"N")
    elif isinstance(value, bool):
        out.append(b"T" if value else b"F")
    elif isinstance(value, int):
        out.append(b"i%d;" % value)
    elif isinstance(value, str):
        data = value.encode()
        out.append(b"s%d:" % len(data) + data)
    elif isinstance(value, enum.Enum):
        out.append(f"e{type(value).__name__}.{value.name};".encode())
    elif isinstance(value, tuple):
        out.append(b"(")
        for v in value:
            _encode_slow(v, out)
        out.append(b")")
    elif isinstance(value, frozenset | set):
        items = []
        for v in value:
            part: list[bytes] = []
            _encode_slow(v, part)
            items.append(b"".join(part))
        out.append(b"{" + b"".join(sorted(items)) + b"}")
    elif isinstance(value, FrozenMap):
        pairs = []
        for k, v in value.items():
            part = []
            _encode_slow(k, part)
            _encode_slow(v, part)
            pairs.append(b"".join(part))
        out.append(b"[" + b"".join(sorted(pairs)) + b"]")
    elif is_dataclass(value) and not isinstance(value, type):
        out.append(f"d{type(value).__name__}<".encode())
        for f in fields(value):
            _encode_slow(getattr(value, f.name), out)
        out.append(b">")
    elif isinstance(value, float):
        out.append(b"f" + repr(value).encode() + b";")
    else:
        raise TypeError(f"no stable encoding for a {type(value).__name__}")


_NONE, _BOOL, _INT, _STR, _ENUM, _TUPLE, _SET, _MAP, _DATA, _FLOAT = range(10)
_KINDS: dict[type, int] = {}
_DATA_FIELDS: dict[type, tuple[bytes, tuple[str, ...]]] = {}
_ATOMS: dict[Any, bytes] = {}
"""Encodings of strings and enum members seen (few distinct ones in a search)."""
_MEMO: dict[int, tuple[Any, bytes]] = {}
"""Encodings of the composite values met lately, by ``id``: the entry holds the value, so
its ``id`` names it while the entry lives (states share most of their parts)."""
_MEMO_LIMIT = 50_000


def _kind(value: Any) -> int:
    t = type(value)
    kind = _KINDS.get(t)
    if kind is None:
        if value is None:
            kind = _NONE
        elif isinstance(value, bool):
            kind = _BOOL
        elif isinstance(value, int):
            kind = _INT
        elif isinstance(value, str):
            kind = _STR
        elif isinstance(value, enum.Enum):
            kind = _ENUM
        elif isinstance(value, tuple):
            kind = _TUPLE
        elif isinstance(value, frozenset | set):
            kind = _SET
        elif isinstance(value, FrozenMap):
            kind = _MAP
        elif is_dataclass(value) and not isinstance(value, type):
            kind = _DATA
            _DATA_FIELDS[t] = (
                f"d{t.__name__}<".encode(),
                tuple(f.name for f in fields(value)),
            )
        elif isinstance(value, float):
            kind = _FLOAT
        else:
            raise TypeError(f"no stable encoding for a {t.__name__}")
        _KINDS[t] = kind
    return kind


def _encode(value: Any) -> bytes:
    """The canonical encoding of ``value`` (``_encode_slow``'s bytes), by type, with the
    encodings of strings, enum members and recently met composite values remembered."""
    kind = _kind(value)
    if kind == _INT:
        return b"i%d;" % value
    if kind == _NONE:
        return b"N"
    if kind == _BOOL:
        return b"T" if value else b"F"
    if kind in (_STR, _ENUM):
        atom = _ATOMS.get(value) if kind == _STR else _ATOMS.get((type(value), value.name))
        if atom is None:
            if kind == _STR:
                data = value.encode()
                atom = _ATOMS[value] = b"s%d:" % len(data) + data
            else:
                atom = f"e{type(value).__name__}.{value.name};".encode()
                _ATOMS[(type(value), value.name)] = atom
        return atom
    if kind == _FLOAT:
        return b"f" + repr(value).encode() + b";"
    hit = _MEMO.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    if kind == _DATA:
        head, names = _DATA_FIELDS[type(value)]
        data = head + b"".join([_encode(getattr(value, n)) for n in names]) + b">"
    elif kind == _TUPLE:
        data = b"(" + b"".join([_encode(v) for v in value]) + b")"
    elif kind == _SET:
        data = b"{" + b"".join(sorted([_encode(v) for v in value])) + b"}"
    else:
        pairs = sorted([_encode(k) + _encode(v) for k, v in value.items()])
        data = b"[" + b"".join(pairs) + b"]"
    if type(value) is not set:  # a mutable set may change under its id
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[id(value)] = (value, data)
    return data


def stable_fingerprint(value: Any) -> int:
    """A 64-bit fingerprint of a model value that every process computes alike (a signed
    int, as Spark's long)."""
    digest = hashlib.blake2b(_encode(value), digest_size=8).digest()
    fp: int = struct.unpack("<q", digest)[0]
    return fp


@dataclass
class _Context:
    """What a Python worker keeps between batches of one search."""

    config: Config
    canonical: Callable[[AnyState], Hashable]
    checker: Checker
    check_convergence: bool
    views: dict[Hashable, list[Violation]]
    steps: dict[tuple[Hashable, Hashable], list[Violation]]
    epoch: Callable[[Any], int]
    """The config's family's ``ProtocolFamily.client_epoch``."""


_CONTEXTS: dict[bytes, _Context] = {}


def context(blob: bytes, check_convergence: bool) -> _Context:
    """The search context for a pickled config (built once per Python worker)."""
    key = hashlib.sha256(blob + bytes([check_convergence])).digest()
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        config: Config = pickle.loads(blob)
        normal = channel_normal_form(config)
        by_symmetry = canonicaliser(config)

        def canonical(s: AnyState) -> Hashable:
            return normal(by_symmetry(normal(s)))  # type: ignore[arg-type]

        epoch = family_of(config).client_epoch
        ctx = _CONTEXTS[key] = _Context(
            config, canonical, Checker(), check_convergence, {}, {}, epoch
        )
    return ctx


def _rows(rows: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=SCHEMA)


def _event(order: bytes, fp: int, v: Violation, action: int = -1) -> dict[str, Any]:
    return {
        "fp": fp,
        "key": None,
        "parent": None,
        "action": action,
        "state": None,
        "property": v.property,
        "message": v.message,
        "order": order,
    }


def _check_state(ctx: _Context, state: AnyState) -> list[Violation]:
    view = snapshot_key(state)
    verdict = ctx.views.get(view)
    if verdict is None:
        verdict = ctx.views[view] = ctx.checker.check_state(state)
    return verdict


def _check_step(ctx: _Context, pre: AnyState, action: Any, post: AnyState) -> list[Violation]:
    if not _step_may_matter(pre, post, ctx.epoch):
        ctx.checker.note_witnesses(pre, action, post)
        return []
    pair = (snapshot_key(pre), snapshot_key(post))
    verdict = ctx.steps.get(pair)
    if verdict is None:
        verdict = ctx.steps[pair] = ctx.checker.check_step(pre, action, post)
    else:
        ctx.checker.note_witnesses(pre, action, post)
    return verdict


def _witnesses(ctx: _Context) -> dict[str, Any]:
    return _event(b"", 0, Violation(WITNESSES, ",".join(sorted(ctx.checker.seen)), ""))


def initial(
    blob: bytes, check_convergence: bool, _: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The initial state as a new-state row (for ``check``)."""
    ctx = context(blob, check_convergence)
    init = system.initial(ctx.config)
    row = {
        "fp": stable_fingerprint(ctx.canonical(init)),
        "key": b"",
        "parent": 0,
        "action": -1,
        "state": pickle.dumps(init, protocol=pickle.HIGHEST_PROTOCOL),
        "property": None,
        "message": None,
        "order": None,
    }
    yield _rows([row])


def check(
    blob: bytes, check_convergence: bool, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """State properties of new states: the rows pass through, with an event row for the
    first violating state of the batch (in key order), a ``#states`` row counting the
    batch's states and a ``#witnesses`` row."""
    ctx = context(blob, check_convergence)
    for batch in batches:
        rows = batch.to_pylist()
        rows.sort(key=lambda r: r["key"])
        states = len(rows)
        for row in rows:
            bad = _check_state(ctx, pickle.loads(row["state"]))
            if bad:
                rows.append(_event(row["key"] + b"\x01", row["fp"], bad[0]))
                break
        rows.append(_event(b"", 0, Violation(STATES, "", ""), action=states))
        rows.append(_witnesses(ctx))
        yield _rows(rows)


def expand(
    blob: bytes,
    check_convergence: bool,
    deeper: bool,
    batches: Iterator[pa.RecordBatch],
    *,
    bound: int = DEFAULT_BOUND,
) -> Iterator[pa.RecordBatch]:
    """Check convergence on frontier states and expand them: successor rows (the least
    key per fingerprint in this task), event rows for violations, one ``#steps`` row and,
    when the fair schedule's ``bound`` cut some state's schedule without showing a fair
    loop or a stuck state (Convergence claimed only when shown, as the serial engine), one
    ``#undecided`` row (those states in ``action``, the bound in force in ``message``)."""
    ctx = context(blob, check_convergence)
    config = ctx.config
    steps = 0
    events: list[dict[str, Any]] = []
    best: dict[int, dict[str, Any]] = {}
    converged: set[Hashable] = set()
    fair_memo = FairMemo()
    undecided: list[int] = []
    for batch in batches:
        rows = batch.to_pylist()
        rows.sort(key=lambda r: r["key"])
        for row in rows:
            state: AnyState = pickle.loads(row["state"])
            fp, key = row["fp"], row["key"]
            if ctx.check_convergence and state.perturbations >= config.max_perturbations:
                canon = ctx.canonical(state)
                if canon not in converged:
                    reached: list[AnyState] = []
                    _, _, ok = fair_schedule(state, config, bound, states=reached, memo=fair_memo)
                    if not ok:
                        verdict = convergence_violation(state, config, bound, memo=fair_memo)
                        if isinstance(verdict, Violation):
                            events.append(_event(key + b"\x00\x00\x00", fp, verdict))
                            continue
                        if verdict is not None:
                            undecided.append(verdict.bound)  # the bound cut it: expanded on
                    else:
                        converged.add(canon)
                        for s in reached:
                            converged.add(ctx.canonical(s))
            if not deeper:
                continue
            for a, action in enumerate(system.enabled(state, config)):
                new = system.step(state, action, config)
                steps += 1
                child_key = key + (a + 1).to_bytes(2, "big")
                bad = _check_step(ctx, state, action, new)
                if bad:
                    events.append(_event(child_key + b"\x00", fp, bad[0], action=a))
                if new is state:
                    continue
                new_fp = stable_fingerprint(ctx.canonical(new))
                if new_fp == fp:
                    continue
                old = best.get(new_fp)
                if old is None or child_key < old["key"]:
                    best[new_fp] = {
                        "fp": new_fp,
                        "key": child_key,
                        "parent": fp,
                        "action": a,
                        "state": pickle.dumps(new, protocol=pickle.HIGHEST_PROTOCOL),
                        "property": None,
                        "message": None,
                        "order": None,
                    }
    steps_row = _event(b"", 0, Violation(STEPS, "", ""), action=steps)
    cut = (
        [_event(b"", 0, Violation(UNDECIDED, str(max(undecided)), ""), action=len(undecided))]
        if undecided
        else []
    )
    yield _rows([*best.values(), *events, steps_row, *cut, _witnesses(ctx)])


_M32 = 0xFFFFFFFF


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & _M32
    return (_rotl32(k1, 15) * 0x1B873593) & _M32


def _mix_h1(h1: int, k1: int) -> int:
    h1 = _rotl32(h1 ^ k1, 13)
    return (h1 * 5 + 0xE6546B64) & _M32


def spark_hash_long(value: int, seed: int = 42) -> int:
    """Spark's ``hash(value)`` of a ``long`` (Murmur3 x86 32-bit, seed 42: Spark's
    ``Murmur3Hash`` expression and its hash partitioning), as a signed 32-bit int."""
    u = value & 0xFFFFFFFFFFFFFFFF
    h1 = _mix_h1(seed & _M32, _mix_k1(u & _M32))
    h1 = _mix_h1(h1, _mix_k1(u >> 32))
    h1 ^= 8
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _M32
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _M32
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def bucket_of(fp: int, buckets: int) -> int:
    """The bucket of fingerprint ``fp`` among ``buckets``: ``pmod(hash(fp), buckets)``."""
    return spark_hash_long(fp) % buckets


# ---------------------------------------------------------------- one job a level (RDD)

FRONTIER_COLUMNS = ["fp", "key", "state"]
VISITED_COLUMNS = ["fp", "parent", "action"]
SIDE_KEYS = ("fp", "action", "property", "message", "order")

Slice = tuple[str, int, int]
"""A piece of a frontier for one expanding task: a Parquet file, the first row, the row
after the last."""


def frontier_slices(files: list[tuple[str, int]], tasks: int) -> list[list[Slice]]:
    """Cut a frontier (its files with their row counts, in a fixed order) into ``tasks``
    runs of consecutive rows, as even as rows allow (a task may get none)."""
    total = sum(n for _, n in files)
    plans: list[list[Slice]] = []
    for i in range(tasks):
        lo, hi = i * total // tasks, (i + 1) * total // tasks
        plan: list[Slice] = []
        start = 0
        for name, n in files:
            a, b = max(lo, start), min(hi, start + n)
            if a < b:
                plan.append((name, a - start, b - start))
            start += n
        plans.append(plan)
    return plans


def _read_slices(plan: list[Slice]) -> Iterator[pa.RecordBatch]:
    for name, a, b in plan:
        yield from pq.read_table(name, columns=FRONTIER_COLUMNS).slice(a, b - a).to_batches()


def expand_slices(
    blob: bytes,
    check_convergence: bool,
    deeper: bool,
    buckets: int,
    index: int,
    plans: Iterator[list[Slice] | None],
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The map side of a level (an RDD partition holding one plan): expand the plan's
    frontier rows (``None``: the initial state, level 0) and key each successor by its
    bucket (``bucket_of``), so the shuffle brings every candidate of bucket k to task k;
    the side rows (events, counts, witnesses) go to bucket ``index mod buckets``, whose
    task passes them on. A recomputed map task replaces its shuffle output, so each
    count arrives once."""
    for plan in plans:
        if plan is None:
            out = initial(blob, check_convergence, iter(()))
        else:
            out = expand(blob, check_convergence, deeper, _read_slices(plan))
        for batch in out:
            for row in batch.to_pylist():
                if row["property"] is None:
                    yield bucket_of(row["fp"], buckets), row
                else:
                    yield index % buckets, {k: row[k] for k in SIDE_KEYS}


def partition_of(bucket: int) -> int:
    """The shuffle's partitioner: the key is already the bucket."""
    return bucket


_VISITED: dict[tuple[str, int], tuple[set[str], set[int]]] = {}
"""Per Python worker: the fingerprints of committed levels' bucket files it has read, by
(run, bucket). Committed levels never change, so this is only a cache of the files."""


def _visited(run: str, dirs: list[str], bucket: int) -> set[int]:
    loaded, fps = _VISITED.setdefault((run, bucket), (set(), set()))
    for d in dirs:
        if d in loaded:
            continue
        for name in sorted(glob.glob(os.path.join(d, f"part-*_{bucket:05d}.c000.snappy.parquet"))):
            fps.update(pq.read_table(name, columns=["fp"])["fp"].to_pylist())
        loaded.add(d)
    return fps


def _publish(table: pa.Table, path: str) -> None:
    """Write ``table`` to ``path`` through a hidden temporary name and a rename: a task
    run twice (a retry, a lost executor) replaces the file with the same rows."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{uuid.uuid4().hex}")
    pq.write_table(table, tmp, compression="snappy")
    os.replace(tmp, path)


def new_states(
    blob: bytes,
    check_convergence: bool,
    run: str,
    visited_dirs: list[str],
    tmp: str,
    job: str,
    bucket: int,
    rows: Iterator[tuple[int, dict[str, Any]]],
) -> Iterator[dict[str, Any]]:
    """The reduce side of a level, task ``bucket``: keep each candidate fingerprint's least
    key, drop the fingerprints of every committed level's bucket file (``visited_dirs``),
    check the new states' state properties, write them as the level's ``frontier`` file
    and ``visited`` bucket file of this bucket (Spark's bucketed file names), and return
    the side rows only (the driver collects those)."""
    side: list[dict[str, Any]] = []
    best: dict[int, dict[str, Any]] = {}
    for _, row in rows:
        if row["property"] is not None:
            side.append(row)
            continue
        old = best.get(row["fp"])
        if old is None or row["key"] < old["key"]:
            best[row["fp"]] = row
    known = _visited(run, visited_dirs, bucket)
    fresh = [r for r in best.values() if r["fp"] not in known]
    states: list[dict[str, Any]] = []
    for batch in check(blob, check_convergence, iter([_rows(fresh)])):
        for row in batch.to_pylist():
            if row["property"] is None:
                states.append(row)
            else:
                side.append({k: row[k] for k in SIDE_KEYS})
    table = pa.Table.from_pylist(states, schema=SCHEMA)
    _publish(
        table.select(FRONTIER_COLUMNS),
        os.path.join(tmp, "frontier", f"part-{bucket:05d}-{job}-c000.snappy.parquet"),
    )
    if states:
        _publish(
            table.select(VISITED_COLUMNS),
            os.path.join(
                tmp, "visited", f"part-{bucket:05d}-{job}_{bucket:05d}.c000.snappy.parquet"
            ),
        )
    yield from side

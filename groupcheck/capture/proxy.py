"""The capture proxy: loopback listeners that forward Kafka protocol traffic to the
upstream brokers, keep clients on the proxy by rewriting broker addresses in Metadata and
FindCoordinator responses, and record each group exchange (request, then response) as
trace events: ConsumerGroupHeartbeat (the consumer protocol, KIP-848), JoinGroup,
SyncGroup, Heartbeat and LeaveGroup (the classic protocol), and OffsetCommit (both).

Exchanges are written in the order the coordinator handled them, as far as the proxy can
tell. The coordinator answers ConsumerGroupHeartbeat, OffsetCommit, Heartbeat and
LeaveGroup as soon as it has handled them, but a response may wait for the group's
records to be written, so two responses can come back in the other order than their
requests went out (a leave, then a heartbeat that was given the partitions the leave
released: both answered after the same write). These exchanges are therefore written in
the order their requests were forwarded, each once every request forwarded before it
was answered or its connection closed. JoinGroup and SyncGroup may be held by the
coordinator until a rebalance completes, which is when they take effect: they are
written when their response arrives.

A trace holds one protocol (its header's ``protocol``): the first group API the proxy
records settles it — ConsumerGroupHeartbeat ``consumer``, a classic API ``classic`` — and
exchanges of the other protocol are then skipped, with a note on stderr. OffsetCommit
belongs to both, so the commits recorded before that are held back until it is settled.
With ``mixed`` (``capture --mixed``) the trace is a ``mixed`` one (trace format version 3)
and every exchange is recorded in its sender's protocol: a group whose members speak both
(KIP-848 "Online Migration").
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import json
import os
import shutil
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from groupcheck.capture import decode as d
from groupcheck.families import CAPTURE, CaptureFacet
from model.trace.codec import version_for

MAX_FRAME = 100 * 1024 * 1024

RECORDED: dict[int, tuple[str, str | None]] = {
    d.CONSUMER_GROUP_HEARTBEAT: ("ConsumerGroupHeartbeat", "consumer"),
    d.JOIN_GROUP: ("JoinGroup", "classic"),
    d.SYNC_GROUP: ("SyncGroup", "classic"),
    d.HEARTBEAT: ("Heartbeat", "classic"),
    d.LEAVE_GROUP: ("LeaveGroup", "classic"),
    d.OFFSET_COMMIT: ("OffsetCommit", None),
}
"""API key → (trace api name, the protocol it belongs to: None for both) of the exchanges
recorded."""

_CLASSIC_BODIES: dict[
    int, tuple[Callable[[Any], dict[str, Any]], Callable[[Any], dict[str, Any]]]
] = {
    d.JOIN_GROUP: (d.join_request_body, d.join_response_body),
    d.SYNC_GROUP: (d.sync_request_body, d.sync_response_body),
    d.HEARTBEAT: (d.classic_heartbeat_request_body, d.error_only_body),
    d.LEAVE_GROUP: (d.leave_request_body, d.leave_response_body),
}
"""Classic API key → (request body, response body) in the trace format's field names."""

IN_REQUEST_ORDER = frozenset(
    {d.CONSUMER_GROUP_HEARTBEAT, d.OFFSET_COMMIT, d.HEARTBEAT, d.LEAVE_GROUP}
)
"""The APIs the coordinator answers as soon as it has handled the request: their
exchanges are written in the order the proxy forwarded the requests, which is the order
the coordinator received them; JoinGroup and SyncGroup, which the coordinator may hold
until a rebalance completes, are written when their response arrives (module docstring)."""

DEFAULT_PROTOCOL = "consumer"
"""The header's protocol of a capture that saw no group API (offset commits at most)."""


class CaptureError(Exception):
    """Bad capture options (reported on one line, exit status 2)."""


def loopback(host: str) -> str:
    """``host`` if it is a loopback address, else CaptureError."""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise CaptureError(f"--listen must be a loopback address (127.0.0.1, ::1), not {host!r}")
    return host


def host_port(text: str, what: str) -> tuple[str, int]:
    """Split ``HOST:PORT``."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise CaptureError(f"{what} must be HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


TIMING = ("session_timeout_ms", "rebalance_timeout_ms", "heartbeat_interval_ms")
"""The header's timing fields (``docs/trace-format.md``)."""


@dataclass
class TraceWriter:
    """Writes the trace under a temporary name and renames it into place on ``close``;
    every event is flushed as it is written. The header (trace format version 2) is
    written by ``start`` once the capture's protocol is known, else by ``close``; ``close``
    writes the final header — with what the capture learnt meanwhile: the timing, the
    topics and the clients' names — in front of the events."""

    path: Path
    _file: IO[str] | None = None
    _tmp: Path | None = None
    seq: int = 0
    notes: list[str] = field(default_factory=list)
    protocol: str | None = None
    """The header's ``protocol``, once written."""
    options: dict[str, int] = field(default_factory=dict)
    """Timing given as options (``capture --session-timeout-ms`` …)."""
    wire: dict[str, set[int]] = field(default_factory=dict)
    """Timing the wire showed: field → the values seen."""
    topics: dict[str, int] = field(default_factory=dict)
    """Topic name → partition count (Metadata responses)."""
    topic_names: dict[str, str] = field(default_factory=dict)
    """Topic id → topic name (Metadata responses)."""
    clients: dict[str, str] = field(default_factory=dict)
    """A trace's ``client`` → the ``client.id`` its requests carry."""
    log: Callable[[str], None] = lambda message: None

    def open(self) -> None:
        self._tmp = self.path.with_name(f".{self.path.name}.partial")
        self._file = open(self._tmp, "w", encoding="utf-8")  # noqa: SIM115 (kept open for the run)

    def saw(self, key: str, value: int) -> None:
        """The wire shows ``value`` for the timing field ``key``."""
        if value > 0:
            self.wire.setdefault(key, set()).add(value)

    def header(self, protocol: str, final: bool) -> dict[str, Any]:
        """The header line's object; ``final``: with what the capture learnt."""
        header: dict[str, Any] = {
            "format": "groupcheck-trace",
            "version": version_for(protocol),
            "protocol": protocol,
            "topics": dict(sorted(self.topics.items())) if final else {},
            "config": None,
        }
        options = dict(self.options)
        key = CAPTURE.named(protocol).session_timeout_key
        if key != "session_timeout_ms" and "session_timeout_ms" in options:
            # A mixed trace: the option is the consumer group's session timeout (not on the
            # wire), for its consumer-protocol members; session_timeout_ms is the classic
            # members' own (their JoinGroup's SessionTimeoutMs), which the wire shows.
            header[key] = options.pop("session_timeout_ms")
        for key in TIMING:
            seen = self.wire.get(key) if final else None
            if seen:
                # Members may differ: the shortest, which classifies no hand-over as
                # premature that a longer one would not.
                header[key] = min(seen)
                option = options.get(key)
                if len(seen) > 1:
                    self._say(f"{key}: the wire shows {sorted(seen)}; the header has {min(seen)}")
                if option is not None and option != min(seen):
                    self._say(f"{key}: the wire shows {min(seen)}, not the option's {option}")
            elif key in options:
                header[key] = options[key]
        if final and self.topic_names:
            header["topic_names"] = dict(sorted(self.topic_names.items()))
        if final and self.clients:
            header["clients"] = dict(sorted(self.clients.items()))
        return header

    def _say(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)
            self.log(note)

    def start(self, protocol: str) -> None:
        """Write the header line: ``protocol`` is ``consumer``, ``classic`` or ``mixed``."""
        assert self._file is not None
        assert self.protocol is None
        self.protocol = protocol
        self._file.write(json.dumps(self.header(protocol, False)) + "\n")
        self._file.flush()

    def event(
        self,
        client: str,
        connection: int,
        direction: str,
        api: str,
        body: dict[str, Any],
        ts: int | None = None,
    ) -> None:
        """Write one delivered message; ``ts`` is when the proxy forwarded it (Unix ms)."""
        assert self._file is not None
        assert self.protocol is not None
        self.seq += 1
        payload = {
            "client": client,
            "incarnation": 0,
            "connection": connection,
            "direction": direction,
            "api": api,
            "body": body,
        }
        event = {
            "seq": self.seq,
            "ts": ts,
            "source": "network",
            "kind": "DeliverMessage",
            "payload": payload,
        }
        self._file.write(json.dumps(event, sort_keys=True) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Put the trace in place: the final header, then the events (whatever was
        recorded), written under a temporary name and renamed."""
        if self._file is not None and self._tmp is not None:
            if self.protocol is None:
                self.start(DEFAULT_PROTOCOL)
            assert self.protocol is not None
            self._file.close()
            self._file = None
            final = self.path.with_name(f".{self.path.name}.final")
            with (
                open(self._tmp, encoding="utf-8") as src,
                open(final, "w", encoding="utf-8") as dst,
            ):
                src.readline()  # the first header
                dst.write(json.dumps(self.header(self.protocol, True)) + "\n")
                shutil.copyfileobj(src, dst)
            # Linked, never renamed over: a file that appeared under the name meanwhile is
            # kept, and the trace takes the first free name ``NAME-1.ndjson``, … (logged).
            wanted = self.path
            for n in itertools.count(1):
                try:
                    os.link(final, self.path)
                    break
                except FileExistsError:
                    self.path = wanted.with_name(f"{wanted.stem}-{n}{wanted.suffix}")
            if self.path != wanted:
                self._say(f"{wanted} appeared during the capture: the trace is {self.path}")
            final.unlink()
            self._tmp.unlink()


_CLOCK_BASE = (time.time_ns(), time.monotonic_ns())
"""The wall clock and the monotonic clock read once: ``now_ms`` is the wall-clock time of
the start plus the monotonic time since, so that a clock step during a capture never
makes its ``ts`` run backwards (docs/trace-format.md, "Timestamps")."""


def now_ms() -> int:
    """The wall-clock time in Unix milliseconds (a trace event's ``ts``), never going
    backwards within a process."""
    wall, mono = _CLOCK_BASE
    return (wall + time.monotonic_ns() - mono) // 1_000_000


@dataclass(frozen=True)
class _Exchange:
    """A decoded request and its response, on proxy connection ``conn``; ``times`` are
    when the proxy forwarded each (Unix ms)."""

    conn: int
    api_key: int
    request: Any
    response: Any
    times: tuple[int, int]


def _request_member(ex: _Exchange) -> str:
    """The member id a request names (``""``: none yet)."""
    if ex.api_key == d.LEAVE_GROUP:
        return d.leave_member(ex.request)
    return str(ex.request.member_id)


def _member_ids(ex: _Exchange) -> list[str]:
    """The non-empty member ids an exchange names: the request's, then the one a JoinGroup
    response gives."""
    ids = [_request_member(ex)]
    if ex.api_key == d.JOIN_GROUP:
        ids.append(str(ex.response.member_id))
    return [m for m in dict.fromkeys(ids) if m]


@dataclass
class Proxy:
    """One listener per upstream broker; the first one is the bootstrap."""

    listen_host: str
    trace: TraceWriter
    log: Callable[[str], None] = lambda message: None
    listeners: dict[tuple[str, int], int] = field(default_factory=dict)
    servers: list[asyncio.Server] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    connections: int = 0
    exchanges: int = 0
    serving: set[asyncio.Task[None]] = field(default_factory=set)
    """The tasks serving client connections (``close`` ends them)."""
    closing: bool = False
    mixed: bool = False
    """Record both protocols' exchanges in one ``mixed`` trace (``capture --mixed``): a
    group whose members speak both (KIP-848 "Online Migration")."""
    group: str | None = None
    """The group id of the first group exchange: the one the capture records."""
    held: list[_Exchange] = field(default_factory=list)
    """OffsetCommit exchanges recorded before the protocol was settled."""
    foreign: set[str] = field(default_factory=set)
    """Member ids seen in the skipped exchanges of the other protocol."""
    conn_clients: dict[int, str] = field(default_factory=dict)
    """Connection → the client process it belongs to (classic traces)."""
    member_clients: dict[str, str] = field(default_factory=dict)
    """Member id → the client process that used it last (classic traces)."""
    client_names: set[str] = field(default_factory=set)
    """The client names given so far (classic traces)."""
    conn_client_ids: dict[int, str] = field(default_factory=dict)
    """Connection → the ``client.id`` its request headers carry."""
    cut: set[str] = field(default_factory=set)
    """Client ids whose traffic is dropped (``control``: a network partition)."""
    writers: dict[int, tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = field(
        default_factory=dict
    )
    """Connection → its (client, broker) writers, while it is open."""
    forwarded: int = 0
    """How many recorded requests were forwarded (the order key of the next one)."""
    outstanding: set[int] = field(default_factory=set)
    """Order keys of forwarded requests answered at once (ConsumerGroupHeartbeat,
    OffsetCommit, Heartbeat, LeaveGroup) whose response has not come back yet."""
    completed: dict[int, _Exchange] = field(default_factory=dict)
    """Exchanges that came back, by order key, waiting for the earlier ones."""
    parked: dict[int, int] = field(default_factory=dict)
    """Connection → its recorded requests in flight that take their place when answered
    (a JoinGroup or SyncGroup, and what was sent behind one)."""

    def held_by(self, conn: int) -> bool:
        """Whether a request forwarded on ``conn`` now is handled after a parked one."""
        return self.parked.get(conn, 0) > 0

    async def listen(self, upstream: tuple[str, int], port: int = 0) -> int:
        """Open (or reuse) the listener that forwards to ``upstream``; its local port."""
        if upstream in self.listeners:
            return self.listeners[upstream]

        def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            # A plain callback that starts the proxy's own task: asyncio's stream machinery
            # then keeps no task of its own, whose cancellation at shutdown it would report
            # as an error with a traceback (Python 3.11 asks a cancelled task for its
            # exception).
            task = asyncio.get_running_loop().create_task(self._serve(reader, writer, upstream))
            self.serving.add(task)
            task.add_done_callback(self.serving.discard)

        server = await asyncio.start_server(handle, self.listen_host, port)
        local = int(server.sockets[0].getsockname()[1])
        self.listeners[upstream] = local
        self.servers.append(server)
        self.log(f"listening on {self.listen_host}:{local} for {upstream[0]}:{upstream[1]}")
        return local

    async def _serve(
        self,
        client_r: asyncio.StreamReader,
        client_w: asyncio.StreamWriter,
        upstream: tuple[str, int],
    ) -> None:
        if self.closing:  # accepted just as the proxy stopped
            client_w.close()
            return
        try:
            await self._connection(client_r, client_w, upstream)
        except asyncio.CancelledError:
            client_w.close()  # the proxy is stopping: the connection ends with it

    async def _connection(
        self,
        client_r: asyncio.StreamReader,
        client_w: asyncio.StreamWriter,
        upstream: tuple[str, int],
    ) -> None:
        self.connections += 1
        conn = self.connections
        try:
            up_r, up_w = await asyncio.open_connection(*upstream)
        except OSError as e:
            self.log(f"cannot reach {upstream[0]}:{upstream[1]}: {e.strerror or e}")
            client_w.close()
            return
        pending: dict[int, tuple[int, int, Any, int, int]] = {}
        self.writers[conn] = (client_w, up_w)
        # Each direction ends when its side closes; the connection ends with the first.
        # A broker that closes its side (EOF upstream) closes the client's too, as a
        # direct connection would: the client sees the close and reconnects, rather than
        # sending its next request into a connection nobody answers.
        directions = [
            asyncio.ensure_future(self._requests(client_r, up_w, pending, conn)),
            asyncio.ensure_future(self._responses(up_r, client_w, pending, conn)),
        ]
        try:
            await asyncio.wait(directions, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in (client_w, up_w):
                w.close()
            for task in directions:
                task.cancel()
            await asyncio.gather(*directions, return_exceptions=True)
            self.writers.pop(conn, None)
            self.parked.pop(conn, None)
            self._abandon(pending)

    async def _requests(
        self,
        r: asyncio.StreamReader,
        w: asyncio.StreamWriter,
        pending: dict[int, tuple[int, int, Any, int, int]],
        conn: int,
    ) -> None:
        try:
            while True:
                frame = await _read_frame(r)
                if frame is None:
                    break
                api_key, version, corr = d.request_key(frame)
                client_id = d.request_client_id(frame)
                if client_id is not None:
                    self.conn_client_ids[conn] = client_id
                if self.conn_client_ids.get(conn) in self.cut:
                    continue  # a network partition: the request never reaches the broker
                body = None
                if api_key in RECORDED:
                    try:
                        _, body = d.read_request(frame)
                    except Exception as e:  # an unknown version is forwarded untouched
                        self.log(f"not decoded: api {api_key} v{version} request ({e})")
                key = -1
                if body is not None and api_key in IN_REQUEST_ORDER and not self.held_by(conn):
                    key = self._order_key()
                    self.outstanding.add(key)
                elif body is not None and api_key in RECORDED:
                    # A JoinGroup or SyncGroup, or a request behind one on the same
                    # connection (Kafka answers a connection's requests in order): it takes
                    # its place when its response arrives.
                    self.parked[conn] = self.parked.get(conn, 0) + 1
                pending[corr] = (api_key, version, body, now_ms(), key)
                w.write(struct.pack(">i", len(frame)) + frame)
                await w.drain()
        finally:
            w.close()

    async def _responses(
        self,
        r: asyncio.StreamReader,
        w: asyncio.StreamWriter,
        pending: dict[int, tuple[int, int, Any, int, int]],
        conn: int,
    ) -> None:
        while True:
            frame = await _read_frame(r)
            if frame is None:
                break
            (corr,) = struct.unpack_from(">i", frame, 0)
            api_key, version, request, sent, key = pending.pop(corr, (-1, -1, None, 0, -1))
            if key < 0 and request is not None and api_key in RECORDED:
                self.parked[conn] = self.parked.get(conn, 1) - 1
            try:
                frame = await self._on_response(api_key, version, frame, request, conn, sent, key)
            except Exception as e:  # never let one odd frame stop the proxy
                self.log(f"not decoded: api {api_key} v{version} response ({e})")
            if self.conn_client_ids.get(conn) in self.cut:
                continue  # a network partition: the client never reads it
            w.write(struct.pack(">i", len(frame)) + frame)
            await w.drain()

    def control(self, command: str) -> str:
        """Apply one control command (``--control``), and say what was done:
        ``cut CLIENT_ID`` drops every frame, both ways, of the connections of the client
        that sends ``CLIENT_ID`` in its request headers (a network partition: the
        connections stay open, nothing arrives), ``heal CLIENT_ID`` ends that, and
        ``sever CLIENT_ID`` closes its connections (both sides, as a broker restart or a
        reset would)."""
        words = command.split()
        if len(words) != 2 or words[0] not in ("cut", "heal", "sever"):
            return f"control: unknown command {command.strip()!r} (cut|heal|sever CLIENT_ID)"
        verb, client = words
        conns = sorted(c for c, name in self.conn_client_ids.items() if name == client)
        if verb == "cut":
            self.cut.add(client)
        elif verb == "heal":
            self.cut.discard(client)
        else:
            for c in conns:
                for writer in self.writers.get(c, ()):
                    writer.close()
        return f"control: {verb} {client} ({len(conns)} connection(s))"

    async def _on_response(
        self,
        api_key: int,
        version: int,
        frame: bytes,
        request: Any,
        conn: int,
        sent: int,
        key: int,
    ) -> bytes:
        if api_key in (d.METADATA, d.FIND_COORDINATOR):
            body = d.read_response(api_key, version, frame)
            if api_key == d.METADATA:
                self.names.update(d.topic_ids(body))
                for topic, count in d.partition_counts(body).items():
                    # The header's topics are the counts at the start: the first seen.
                    self.trace.topics.setdefault(topic, count)
            wanted: set[tuple[str, int]] = set()

            def note(host: str, port: int) -> tuple[str, int]:
                wanted.add((host, port))
                return host, port

            d.rewrite_addresses(api_key, body, note)
            for up in wanted:
                await self.listen(up)
            body = d.rewrite_addresses(
                api_key, body, lambda h, p: (self.listen_host, self.listeners[(h, p)])
            )
            return d.write_response(api_key, version, frame, body)
        if request is not None and api_key in RECORDED:
            if self.closing:  # the trace is being closed: nothing more is recorded
                self._completed(key, None)
                return frame
            resp = d.read_response(api_key, version, frame)
            ex = _Exchange(conn, api_key, request, resp, (sent, now_ms()))
            self._completed(key if key >= 0 else self._order_key(), ex)
        return frame

    def _order_key(self) -> int:
        self.forwarded += 1
        return self.forwarded

    def _completed(self, key: int, ex: _Exchange | None) -> None:
        """An exchange came back (``ex``) or never will (None: its connection closed):
        record every exchange no earlier forwarded request is still waiting for, in the
        order the proxy forwarded their requests (module docstring)."""
        self.outstanding.discard(key)
        if ex is not None:
            self.completed[key] = ex
        while self.completed:
            first = min(self.completed)
            if self.outstanding and min(self.outstanding) < first:
                return
            self._exchange(self.completed.pop(first))

    def _abandon(self, pending: dict[int, tuple[int, int, Any, int, int]]) -> None:
        """A connection ended: its unanswered requests will never be answered."""
        for *_, key in pending.values():
            if key >= 0:
                self._completed(key, None)
        pending.clear()

    def _note(self, note: str) -> None:
        """Say ``note`` on stderr, once per capture."""
        if note not in self.trace.notes:
            self.trace.notes.append(note)
            self.log(note)

    def _exchange(self, ex: _Exchange) -> None:
        """Record an exchange of a group API, or hold or skip it (module docstring)."""
        api, protocol = RECORDED[ex.api_key]
        group = str(ex.request.group_id)
        if self.group is None:
            self.group = group
        elif group != self.group:
            self._note(f"skipped {api} of group {group!r}: the capture records {self.group!r}")
            return
        if self.mixed:
            if self.trace.protocol is None:
                self.trace.start("mixed")
            self._write(ex)
            return
        if protocol is None:  # OffsetCommit: of the member's protocol
            if ex.request.member_id in self.foreign:
                self._note(
                    "skipped OffsetCommit of a member of the other protocol than "
                    f"{self.trace.protocol!r}"
                )
                return
            if self.trace.protocol is None:
                self.held.append(ex)
                return
        elif self.trace.protocol is None:
            self.trace.start(protocol)
            held, self.held = self.held, []
            for h in held:
                self._write(h)
        elif protocol != self.trace.protocol:
            self.foreign.update(_member_ids(ex))
            self._note(
                f"skipped {api}: this capture's protocol is {self.trace.protocol!r} (set by "
                "the first group API it recorded); a trace holds one protocol"
            )
            return
        self._write(ex)

    def _write(self, ex: _Exchange) -> None:
        """Write an exchange as two events in the trace's protocol."""
        api, protocol = RECORDED[ex.api_key]
        # An exchange in its own protocol (a one-protocol trace holds no other), an
        # OffsetCommit as the trace's family writes it (``groupcheck.families.CAPTURE``).
        assert self.trace.protocol is not None
        classic = protocol == "classic" or (
            protocol is None and CAPTURE.named(self.trace.protocol).classic_commit(self, ex)
        )
        if ex.api_key in _CLASSIC_BODIES:
            request_body, response_body = _CLASSIC_BODIES[ex.api_key]
            req, resp = request_body(ex.request), response_body(ex.response)
        else:
            # Partitions by topic id in a consumer trace, by topic name in a classic one.
            names = {i: n for n, i in self.names.items()} if classic else self.names
            if ex.api_key == d.CONSUMER_GROUP_HEARTBEAT:
                req = d.heartbeat_request_body(ex.request, names)
                resp = d.heartbeat_response_body(ex.response, names)
            else:
                req = d.commit_request_body(ex.request, names)
                resp = d.commit_response_body(ex.response, names)
        if resp["ErrorCode"] not in d.KNOWN_ERRORS:
            # A coordinator error outside the protocol's state machine (NOT_COORDINATOR,
            # COORDINATOR_LOAD_IN_PROGRESS …): the group did not process the request.
            self._note(f"skipped an exchange answered with error {resp['ErrorCode']}")
            return
        client = self._classic_client(ex) if classic else str(ex.request.member_id)
        client_id = self.conn_client_ids.get(ex.conn)
        if client_id:
            self.trace.clients[client] = client_id
        self._timing(ex, req, resp)
        self.exchanges += 1
        self.trace.event(client, ex.conn, "request", api, req, ex.times[0])
        self.trace.event(client, ex.conn, "response", api, resp, ex.times[1])

    def _timing(self, ex: _Exchange, req: dict[str, Any], resp: dict[str, Any]) -> None:
        """Note the timing the exchange shows: RebalanceTimeoutMs of ConsumerGroupHeartbeat
        and JoinGroup requests, SessionTimeoutMs of JoinGroup requests, the
        HeartbeatIntervalMs of successful ConsumerGroupHeartbeat responses."""
        if ex.api_key in (d.CONSUMER_GROUP_HEARTBEAT, d.JOIN_GROUP):
            self.trace.saw("rebalance_timeout_ms", int(req.get("RebalanceTimeoutMs", -1)))
        if ex.api_key == d.JOIN_GROUP:
            self.trace.saw("session_timeout_ms", int(req["SessionTimeoutMs"]))
        if ex.api_key == d.CONSUMER_GROUP_HEARTBEAT and resp["ErrorCode"] == 0:
            self.trace.saw("heartbeat_interval_ms", int(resp["HeartbeatIntervalMs"]))
        for tid in (t["TopicId"] for b in (req, resp) for t in _topics_of(b)):
            name = self.names_by_id().get(tid)
            if name is not None:
                self.trace.topic_names[tid] = name

    def names_by_id(self) -> dict[str, str]:
        return {i: n for n, i in self.names.items()}

    def _classic_client(self, ex: _Exchange) -> str:
        """The trace's ``client`` of a classic exchange: the client process behind it.

        The coordinator gives a classic member its id (a first JoinGroup sends ``""``, and
        so does a member that lost its id), so the id does not name the process. A
        connection is one process's: its client is named by the first member id seen on
        it (in the request, else in the JoinGroup response that gave it; made unique with
        ``#2``, ``#3`` … if an earlier client had that name), and a request naming a
        member id an earlier connection used is of that connection's client."""
        ids = _member_ids(ex)
        name = self.conn_clients.get(ex.conn)
        sent = _request_member(ex)
        if name is None and sent:
            name = self.member_clients.get(sent)
        if name is None:
            base = ids[0] if ids else f"connection-{ex.conn}"
            name, k = base, 1
            while name in self.client_names:
                k += 1
                name = f"{base}#{k}"
            self.client_names.add(name)
        self.conn_clients[ex.conn] = name
        for m in ids:
            self.member_clients[m] = name  # the latest user of a member id holds it
        return name

    async def close(self) -> None:
        """Stop accepting, end every connection (an exchange whose response has not come
        back is not recorded) and wait until they are all closed."""
        self.closing = True
        for s in self.servers:
            s.close()
        serving = list(self.serving)
        for task in serving:
            task.cancel()
        await asyncio.gather(*serving, return_exceptions=True)
        for s in self.servers:
            await s.wait_closed()
        self.outstanding.clear()  # every connection is closed: nothing is answered now
        self._completed(-1, None)
        if self.held and self.trace.protocol is None:  # offset commits, and no group API
            self.trace.start(DEFAULT_PROTOCOL)
            for ex in self.held:
                self._write(ex)
        self.held = []


def _topics_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The partitions entries a consumer-protocol body names (by topic id)."""
    out = list(body.get("TopicPartitions") or []) + list(body.get("Topics") or [])
    assignment = body.get("Assignment")
    if isinstance(assignment, dict):
        out += assignment.get("TopicPartitions") or []
    return [t for t in out if isinstance(t, dict)]


async def _read_frame(r: asyncio.StreamReader) -> bytes | None:
    try:
        head = await r.readexactly(4)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    (size,) = struct.unpack(">i", head)
    if size < 0 or size > MAX_FRAME:
        return None
    try:
        return await r.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def _commit_of_member(proxy: Proxy, ex: _Exchange) -> bool:
    """A mixed trace's OffsetCommit: in the protocol of the member id's last group API
    (classic when a classic client holds it)."""
    return _request_member(ex) in proxy.member_clients


CAPTURE.register(
    "consumer",
    CaptureFacet(
        options=(),
        classic_commit=lambda proxy, ex: False,
        session_timeout_key="session_timeout_ms",
    ),
)
CAPTURE.register(
    "classic",
    CaptureFacet(
        options=(),
        classic_commit=lambda proxy, ex: True,
        session_timeout_key="session_timeout_ms",
    ),
)
CAPTURE.register(
    "mixed",
    CaptureFacet(
        options=("--mixed",),
        classic_commit=_commit_of_member,
        session_timeout_key="consumer_session_timeout_ms",
    ),
)

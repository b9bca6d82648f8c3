"""The capture proxy: loopback listeners that forward Kafka protocol traffic to the
upstream brokers, keep clients on the proxy by rewriting broker addresses in Metadata and
FindCoordinator responses, and record each ConsumerGroupHeartbeat and OffsetCommit
exchange (request, then response, when the response arrives) as trace events.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from groupcheck.capture import decode as d

MAX_FRAME = 100 * 1024 * 1024

RECORDED: dict[int, tuple[str, Callable[..., dict[str, Any]], Callable[..., dict[str, Any]]]] = {
    d.CONSUMER_GROUP_HEARTBEAT: (
        "ConsumerGroupHeartbeat",
        d.heartbeat_request_body,
        d.heartbeat_response_body,
    ),
    d.OFFSET_COMMIT: ("OffsetCommit", d.commit_request_body, d.commit_response_body),
}
"""API key → (trace api name, request body, response body) of the exchanges recorded."""


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


@dataclass
class TraceWriter:
    """Writes the trace under a temporary name and renames it into place on ``close``;
    every event is flushed as it is written."""

    path: Path
    _file: IO[str] | None = None
    _tmp: Path | None = None
    seq: int = 0
    notes: list[str] = field(default_factory=list)

    def open(self) -> None:
        self._tmp = self.path.with_name(f".{self.path.name}.partial")
        self._file = open(self._tmp, "w", encoding="utf-8")  # noqa: SIM115 (kept open for the run)
        header = {
            "format": "groupcheck-trace",
            "version": 1,
            "protocol": "consumer",
            "topics": {},
            "config": None,
        }
        self._file.write(json.dumps(header) + "\n")
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
        if self._file is not None and self._tmp is not None:
            self._file.close()
            os.replace(self._tmp, self.path)
            self._file = None


def now_ms() -> int:
    """The wall-clock time in Unix milliseconds (a trace event's ``ts``)."""
    return time.time_ns() // 1_000_000


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
        pending: dict[int, tuple[int, int, Any, int]] = {}
        try:
            await asyncio.gather(
                self._requests(client_r, up_w, pending),
                self._responses(up_r, client_w, pending, conn),
                return_exceptions=True,
            )
        finally:
            for w in (client_w, up_w):
                w.close()

    async def _requests(
        self,
        r: asyncio.StreamReader,
        w: asyncio.StreamWriter,
        pending: dict[int, tuple[int, int, Any, int]],
    ) -> None:
        try:
            while True:
                frame = await _read_frame(r)
                if frame is None:
                    break
                api_key, version, corr = d.request_key(frame)
                body = None
                if api_key in (d.CONSUMER_GROUP_HEARTBEAT, d.OFFSET_COMMIT):
                    try:
                        _, body = d.read_request(frame)
                    except Exception as e:  # an unknown version is forwarded untouched
                        self.log(f"not decoded: api {api_key} v{version} request ({e})")
                pending[corr] = (api_key, version, body, now_ms())
                w.write(struct.pack(">i", len(frame)) + frame)
                await w.drain()
        finally:
            w.close()

    async def _responses(
        self,
        r: asyncio.StreamReader,
        w: asyncio.StreamWriter,
        pending: dict[int, tuple[int, int, Any, int]],
        conn: int,
    ) -> None:
        while True:
            frame = await _read_frame(r)
            if frame is None:
                break
            (corr,) = struct.unpack_from(">i", frame, 0)
            api_key, version, request, sent = pending.pop(corr, (-1, -1, None, 0))
            try:
                frame = await self._on_response(api_key, version, frame, request, conn, sent)
            except Exception as e:  # never let one odd frame stop the proxy
                self.log(f"not decoded: api {api_key} v{version} response ({e})")
            w.write(struct.pack(">i", len(frame)) + frame)
            await w.drain()

    async def _on_response(
        self, api_key: int, version: int, frame: bytes, request: Any, conn: int, sent: int
    ) -> bytes:
        if api_key in (d.METADATA, d.FIND_COORDINATOR):
            body = d.read_response(api_key, version, frame)
            if api_key == d.METADATA:
                self.names.update(d.topic_ids(body))
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
        bodies = RECORDED.get(api_key)
        if request is not None and bodies is not None:
            api, request_body, response_body = bodies
            resp = d.read_response(api_key, version, frame)
            self._record(
                conn,
                api,
                request_body(request, self.names),
                response_body(resp, self.names),
                request.member_id,
                (sent, now_ms()),
            )
        return frame

    def _record(
        self,
        conn: int,
        api: str,
        req: dict[str, Any],
        resp: dict[str, Any],
        member: str,
        times: tuple[int, int],
    ) -> None:
        if self.closing:  # the trace is being closed: nothing more is recorded
            return
        if resp["ErrorCode"] not in d.KNOWN_ERRORS:
            # A coordinator error outside the protocol's state machine (NOT_COORDINATOR,
            # COORDINATOR_LOAD_IN_PROGRESS …): the group did not process the request.
            note = f"skipped an exchange answered with error {resp['ErrorCode']}"
            if note not in self.trace.notes:
                self.trace.notes.append(note)
                self.log(note)
            return
        self.exchanges += 1
        self.trace.event(member, conn, "request", api, req, times[0])
        self.trace.event(member, conn, "response", api, resp, times[1])

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

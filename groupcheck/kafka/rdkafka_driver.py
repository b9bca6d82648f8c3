"""The librdkafka client driver: consumers of ``confluent_kafka`` driven by JSON-line
commands on stdin, reporting JSON-line events on stdout (the wire is documented in
``groupcheck.kafka.clients``). Run as ``python -m groupcheck.kafka.rdkafka_driver``.

One process may hold many consumers, keyed by ``client``; each lives in its own thread,
which creates it, polls it and runs its commands (a consumer is used from one thread only).
The main thread reads stdin and hands each command to its consumer's queue. EOF on stdin,
or ``{"cmd": "exit"}``, closes every consumer and exits 0.

Deviations from the Java driver, forced by the client:

* ``member`` events carry ``"epoch": null``: librdkafka exposes the member id, not the
  member epoch or generation.
* ``close`` with ``"leave": "remain"`` is refused with an ``error`` event (librdkafka's
  ``close()`` always leaves, unless the member is static); the consumer stays open.
* ``crash`` ends the whole process (``os._exit(137)``), every consumer in it with it: a
  crash scenario puts its victim alone in a driver process.
* The classic assignor ``sticky`` (eager sticky) does not exist in librdkafka: ``create``
  with it is refused.

Client logs (librdkafka's own) go to stderr; stdout carries events only (anything else a
library would print to ``sys.stdout`` or file descriptor 1 is sent to stderr).
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from typing import IO, Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition, libversion

POLL_S = 0.05
CLASSIC_ASSIGNORS = {
    "range": "range",
    "roundrobin": "roundrobin",
    "cooperative-sticky": "cooperative-sticky",
}

_channel: dict[str, IO[str]] = {"out": sys.stdout}
"""The event channel (``main`` replaces it with a private copy of stdout)."""
_out_lock = threading.Lock()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def emit(event: str, client: str | None = None, ts: int | None = None, **fields: Any) -> None:
    """Write one event line on the event channel (flushed), stamped now or at ``ts``."""
    record: dict[str, Any] = {"ts": _now_ms() if ts is None else ts}
    if client is not None:
        record["client"] = client
    record["event"] = event
    record.update(fields)
    line = json.dumps(record, separators=(",", ":"))
    with _out_lock:
        _channel["out"].write(line + "\n")
        _channel["out"].flush()


def _names(partitions: list[TopicPartition]) -> list[str]:
    return sorted(f"{tp.topic}-{tp.partition}" for tp in partitions)


def _error_text(exc: BaseException) -> tuple[str, str]:
    """The error's name (a KafkaError's code name, else the exception class) and message."""
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        err = exc.args[0]
        return err.name(), err.str()
    return type(exc).__name__, str(exc)


class ClientThread(threading.Thread):
    """One consumer: created, polled and commanded on this thread only."""

    def __init__(self, name: str, create: dict[str, Any]) -> None:
        super().__init__(name=f"client-{name}", daemon=True)
        self.client = name
        self.commands: queue.Queue[dict[str, Any]] = queue.Queue()
        self._create = create
        self._consumer: Consumer | None = None
        self._subscribed = False
        self._stalled_until: float | None = None
        self._slow: dict[str, int] = {}
        self._member: tuple[str | None] | None = None
        self._assignment: list[str] | None = None
        self._last_error: tuple[str, float] | None = None

    # -- events ------------------------------------------------------------------------

    def _emit(self, event: str, ts: int | None = None, **fields: Any) -> None:
        emit(event, self.client, ts, **fields)

    def _error(self, message: str, *, dedupe: bool = False, **fields: Any) -> None:
        if dedupe:
            now = time.monotonic()
            if (
                self._last_error is not None
                and self._last_error[0] == message
                and now - self._last_error[1] < 5.0
            ):
                return
            self._last_error = (message, now)
        self._emit("error", message=message, **fields)

    def _observe(self) -> None:
        self._check_member()
        if self._consumer is None:
            return
        try:
            now = _names(self._consumer.assignment())
        except (KafkaException, RuntimeError) as exc:
            self._error("assignment: {}: {}".format(*_error_text(exc)))
            return
        if now != self._assignment:
            self._assignment = now
            self._emit("assignment", partitions=now)

    def _check_member(self) -> None:
        if self._consumer is None:
            return
        try:
            member_id = self._consumer.memberid()
        except (KafkaException, RuntimeError):
            return
        if (member_id,) != self._member:
            self._member = (member_id,)
            self._emit("member", member_id=member_id or "", epoch=None)

    # -- callbacks (run inside poll, on this thread) -------------------------------------

    def _callback(self, name: str, partitions: list[TopicPartition]) -> None:
        names = _names(partitions)
        self._emit(name, partitions=names)
        ms = self._slow.pop(name, None) if names else None
        if ms is not None:
            time.sleep(ms / 1000)
            self._emit("callback_end", callback=name, partitions=names)
        self._check_member()

    def _on_assign(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        # confluent_kafka assigns (incrementally, for cooperative protocols) on return.
        self._callback("assigned", partitions)

    def _on_revoke(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._callback("revoked", partitions)

    def _on_lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._callback("lost", partitions)

    def _on_error(self, err: KafkaError) -> None:
        self._error(f"client: {err.name()}: {err.str()}", dedupe=True)

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> None:
        if not self._open(self._create):
            return
        while True:
            polling = self._subscribed and self._stalled_until is None
            try:
                cmd = self.commands.get_nowait() if polling else self.commands.get(timeout=POLL_S)
            except queue.Empty:
                cmd = None
            if cmd is not None:
                if not self._execute(cmd):
                    return
                continue
            if self._stalled_until is not None and time.monotonic() >= self._stalled_until:
                self._stalled_until = None
                self._emit("resumed")
            if self._subscribed and self._stalled_until is None:
                self._poll()

    def _poll(self) -> None:
        assert self._consumer is not None
        try:
            msg = self._consumer.poll(POLL_S)
            err = msg.error() if msg is not None else None
            if err is not None:
                self._error(f"poll: {err.name()}: {err.str()}", dedupe=True)
        except Exception as exc:  # a poll error must not end the driver
            self._error("poll: {}: {}".format(*_error_text(exc)), dedupe=True)
        self._observe()

    def _open(self, cmd: dict[str, Any]) -> bool:
        protocol = cmd.get("protocol") or "consumer"
        if protocol not in ("consumer", "classic"):
            self._error("bad command create: protocol must be consumer or classic")
            return False
        conf: dict[str, Any] = {
            "bootstrap.servers": str(cmd.get("bootstrap", "")),
            "group.id": str(cmd.get("group", "")),
            "client.id": self.client,
            "group.protocol": protocol,
            "enable.auto.commit": "false",
            "auto.offset.reset": "earliest",
            "error_cb": self._on_error,
        }
        assignor = cmd.get("assignor")
        if assignor is not None:
            if protocol == "consumer":
                conf["group.remote.assignor"] = str(assignor)
            elif assignor == "sticky":
                self._error("bad command create: assignor sticky (eager) is not in librdkafka")
                return False
            else:
                conf["partition.assignment.strategy"] = CLASSIC_ASSIGNORS.get(assignor, assignor)
        if cmd.get("instance_id") is not None:
            conf["group.instance.id"] = str(cmd["instance_id"])
        if cmd.get("max_poll_interval_ms") is not None:
            conf["max.poll.interval.ms"] = int(cmd["max_poll_interval_ms"])
        session, heartbeat = cmd.get("session_timeout_ms"), cmd.get("heartbeat_interval_ms")
        if protocol == "consumer" and (session is not None or heartbeat is not None):
            self._error(
                "bad command create: session_timeout_ms and heartbeat_interval_ms apply to the"
                " classic protocol only (group.protocol=consumer takes them from the broker)"
            )
            return False
        if session is not None:
            conf["session.timeout.ms"] = int(session)
        if heartbeat is not None:
            conf["heartbeat.interval.ms"] = int(heartbeat)
        props = cmd.get("props") or {}
        if not isinstance(props, dict):
            self._error("bad command create: props must be an object")
            return False
        conf.update({str(k): str(v) for k, v in props.items()})
        try:
            self._consumer = Consumer(conf)
        except Exception as exc:
            self._error("create: {}: {}".format(*_error_text(exc)))
            return False
        self._emit("created", protocol=protocol)
        self._observe()
        return True

    def _execute(self, cmd: dict[str, Any]) -> bool:
        """Runs one command; False when the consumer is closed (the thread then ends)."""
        name = cmd["cmd"]
        consumer = self._consumer
        assert consumer is not None
        try:
            if name == "subscribe":
                topics = cmd.get("topics")
                if not isinstance(topics, list):
                    self._error('bad command subscribe: "topics" must be a list')
                    return True
                at = _now_ms()  # before the call: the background thread joins at once
                self._subscribe([str(t) for t in topics])
                self._emit("subscribed", at, topics=[str(t) for t in topics])
            elif name == "subscribe_pattern":
                pattern = cmd.get("pattern")
                if not isinstance(pattern, str):
                    self._error('bad command subscribe_pattern: no "pattern"')
                    return True
                at = _now_ms()
                self._subscribe([pattern if pattern.startswith("^") else "^" + pattern])
                self._emit("subscribed", at, pattern=pattern)
            elif name == "unsubscribe":
                at = _now_ms()
                consumer.unsubscribe()
                self._subscribed = False
                self._emit("unsubscribed", at)
            elif name == "commit":
                self._commit()
            elif name == "stall":
                ms = cmd.get("ms")
                if not isinstance(ms, int) or ms < 0:
                    self._error('bad command stall: "ms" must be a non-negative integer')
                    return True
                self._stalled_until = time.monotonic() + ms / 1000
                self._emit("stalled", ms=ms)
            elif name == "slow_callback":
                callback, ms = cmd.get("callback"), cmd.get("ms")
                if callback not in ("assigned", "revoked", "lost") or not isinstance(ms, int):
                    self._error(
                        'bad command slow_callback: needs "callback" assigned|revoked|lost'
                        ' and "ms" >= 0'
                    )
                    return True
                self._slow[callback] = ms
            elif name == "close":
                leave = cmd.get("leave", "default")
                if leave == "remain":
                    self._error("close with leave=remain is not supported by librdkafka")
                    return True
                if leave not in ("default", "leave"):
                    self._error('bad command close: "leave" must be default, leave or remain')
                    return True
                self.close(str(leave))
                return False
            elif name == "crash":
                self._emit("crash")
                os._exit(137)
            else:
                self._error(f"bad command {name}: unknown")
                return True
        except Exception as exc:
            self._error("{}: {}: {}".format(name, *_error_text(exc)))
        self._observe()
        return True

    def _subscribe(self, topics: list[str]) -> None:
        assert self._consumer is not None
        self._consumer.subscribe(
            topics, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
        )
        self._subscribed = True

    def _commit(self) -> None:
        assert self._consumer is not None
        assigned = self._consumer.assignment()
        positions = self._consumer.position(assigned) if assigned else []
        offsets = [
            TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0)
            for tp in positions
        ]
        shown = {f"{tp.topic}-{tp.partition}": tp.offset for tp in offsets}
        shown = dict(sorted(shown.items()))
        if not offsets:
            self._emit("committed", offsets=shown)
            return
        try:
            result = self._consumer.commit(offsets=offsets, asynchronous=False) or []
        except KafkaException as exc:
            error, message = _error_text(exc)
            self._emit("commit_failed", error=error, message=message, offsets=shown)
            return
        failed = [(tp, tp.error) for tp in result if tp.error is not None]
        if failed:
            self._emit(
                "commit_failed",
                error=failed[0][1].name(),
                message="; ".join(f"{tp.topic}-{tp.partition}: {err.str()}" for tp, err in failed),
                offsets=shown,
            )
        else:
            self._emit("committed", offsets=shown)

    def close(self, leave: str = "default") -> None:
        """Closes the consumer (on this thread): writes ``closing`` as ``close()`` is called
        and ``closed`` when it returned."""
        if self._consumer is None:
            return
        self._emit("closing", leave=leave)
        try:
            self._consumer.close()
        except Exception as exc:
            self._error("close: {}: {}".format(*_error_text(exc)))
        self._consumer = None
        self._subscribed = False
        self._emit("closed", leave=leave)


def _redirect_stdout() -> IO[str]:
    """The event channel: a private copy of file descriptor 1; fd 1 and ``sys.stdout``
    then point at stderr, so nothing else reaches the channel."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


def main() -> int:
    _channel["out"] = _redirect_stdout()
    clients: dict[str, ClientThread] = {}
    emit("ready", library=f"librdkafka {libversion()[0]}", pid=os.getpid())
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
        except ValueError:
            emit("error", message=f"bad command (not JSON): {line.strip()}")
            continue
        if not isinstance(cmd, dict) or not isinstance(cmd.get("cmd"), str):
            emit("error", message=f'bad command (no "cmd"): {line.strip()}')
            continue
        if cmd["cmd"] == "exit":
            break
        client = cmd.get("client")
        if not isinstance(client, str):
            emit("error", message=f'bad command {cmd["cmd"]}: no "client"')
            continue
        thread = clients.get(client)
        if cmd["cmd"] == "create":
            if thread is not None and thread.is_alive():
                emit("error", client, message=f"bad command create: {client} exists")
                continue
            clients[client] = thread = ClientThread(client, cmd)
            thread.start()
        elif thread is None or not thread.is_alive():
            emit("error", client, message=f"bad command {cmd['cmd']}: no consumer {client}")
        else:
            thread.commands.put(cmd)
    for thread in clients.values():
        if thread.is_alive():
            thread.commands.put({"cmd": "close", "client": thread.client, "leave": "default"})
    deadline = time.monotonic() + 60
    for thread in clients.values():
        thread.join(max(0.0, deadline - time.monotonic()))
    _channel["out"].flush()
    # A consumer thread stuck in close must not keep the process alive.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())

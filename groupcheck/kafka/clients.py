"""Client drivers for Kafka in the loop: processes that run real consumers, driven by
JSON-line commands on their stdin and reporting JSON-line events on their stdout.

Two drivers speak the same wire:

* the Java driver (``kafka/driver/GroupcheckDriver.java``, compiled with plain ``javac``
  against the Kafka jars) holds exactly one ``KafkaConsumer``;
* the librdkafka driver (``python -m groupcheck.kafka.rdkafka_driver``) may hold many
  ``confluent_kafka`` consumers, each on its own thread, keyed by ``client``.

Commands (each has ``"cmd"`` and, except ``exit``, ``"client"``, the consumer's name and
``client.id``)::

    create            bootstrap, group, protocol ("consumer"|"classic"), assignor, instance_id,
                      max_poll_interval_ms, session_timeout_ms, heartbeat_interval_ms (the last
                      two classic only: refused with group.protocol=consumer), props (verbatim,
                      they win). enable.auto.commit=false, auto.offset.reset=earliest.
    subscribe         topics
    subscribe_pattern pattern (Java: SubscriptionPattern, broker-side RE2J, with protocol
                      consumer; java.util.regex.Pattern with classic. librdkafka: "^" topic)
    unsubscribe
    commit            commitSync of every assigned partition's position (0 when unknown)
    stall             ms: no poll for that long (events stalled, resumed)
    slow_callback     callback ("assigned"|"revoked"|"lost"), ms: the next such callback with
                      a non-empty partition set sleeps that long inside the callback
    close             leave ("default"|"leave"|"remain"); the Java driver then exits 0;
                      librdkafka refuses "remain" with an error event
    crash             write crash, then halt the process with exit code 137 (librdkafka: the
                      whole process, every consumer in it: put a crash victim alone in one)
    exit              close everything (default) and exit 0; EOF on stdin does the same

Events (each has ``"ts"``, wall-clock Unix milliseconds, ``"event"`` and, except the
driver-level ``ready`` and errors about commands without a client, ``"client"``)::

    ready             library ("kafka-clients 4.4.0", "librdkafka 2.16.0"), pid
    created           protocol
    subscribed        topics or pattern
    unsubscribed
    assigned, revoked, lost
                      partitions (sorted "topic-N"), written when the rebalance callback
                      starts, empty sets included; callback_end (callback, partitions) when a
                      slowed callback returns
    member            member_id, epoch (Java: groupMetadata().generationId(), -1 before
                      joining; librdkafka: null), whenever either changes (after every poll,
                      callback and command)
    assignment        partitions, whenever consumer.assignment() changes (same checks)
    committed         offsets {"topic-N": offset}
    commit_failed     error, message, offsets
    stalled (ms), resumed, closing (leave; as close() is called), closed (leave), crash
    error             message (a bad command, or an exception out of poll, create, close, ...:
                      the driver carries on; a repeated poll error at most every 5 s)

``Driver`` starts one driver process and collects its events: a daemon thread reads them,
keeps them in arrival order and appends each line to ``<log_dir>/<name>.events.ndjson``;
the driver's stderr (the client's own logs) goes to ``<log_dir>/<name>.stderr.log``. The
process stays in the caller's process group (a Ctrl-C reaches it too); when the Python
process dies, the driver sees EOF on stdin and exits (a process forked from this one after
the start holds the pipe open until it exits too).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

READY_TIMEOUT_S = 60.0
"""How long a start waits for the driver's ``ready`` event (a JVM on a loaded machine)."""

JAVA_MAIN_CLASS = "GroupcheckDriver"
BASE_JVM_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k")
"""A driver is small and short-lived: a light collector and the quick JIT tier start it
faster; the caller's ``jvm_opts`` come after these, so they win."""

STDERR_TAIL_LINES = 5


class DriverError(Exception):
    """A driver did not start, exited, or did not report what was waited for."""


class Driver:
    """One driver process: send it commands, read its events."""

    name: str
    pid: int
    library: str

    def __init__(self, argv: Sequence[str], *, name: str, log_dir: Path) -> None:
        self.name = name
        self._log_dir = Path(log_dir)
        self._log_dir.mkdir(parents=True, exist_ok=True)
        self._stderr_path = self._log_dir / f"{name}.stderr.log"
        self._events_path = self._log_dir / f"{name}.events.ndjson"
        self._events: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._eof = False
        self._send_lock = threading.Lock()
        self._returncode: int | None = None
        with self._stderr_path.open("ab") as stderr:
            try:
                self._proc = subprocess.Popen(
                    list(argv),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    close_fds=True,
                )
            except OSError as exc:
                raise DriverError(f"driver {name}: cannot start {argv[0]}: {exc}") from None
        self.pid = self._proc.pid
        self._reader = threading.Thread(
            target=self._read, name=f"driver-{name}-events", daemon=True
        )
        self._reader.start()
        try:
            ready = self.wait_for(lambda e: e.get("event") == "ready", timeout_s=READY_TIMEOUT_S)
        except DriverError as exc:
            self.stop(timeout_s=5.0)
            raise DriverError(
                f"driver {name} did not report ready ({exc}); stderr: {self._stderr_tail()}"
            ) from None
        self.library = str(ready.get("library", ""))
        self.pid = int(ready.get("pid", self._proc.pid))

    # -- starting ------------------------------------------------------------------------

    @classmethod
    def java(
        cls, *, classpath: str, name: str, log_dir: Path, jvm_opts: Sequence[str] = ()
    ) -> Driver:
        """The Java driver on ``classpath`` (the Kafka jars and the compiled driver)."""
        argv = ["java", *BASE_JVM_OPTS, *jvm_opts, "-cp", classpath, JAVA_MAIN_CLASS]
        return cls(argv, name=name, log_dir=log_dir)

    @classmethod
    def rdkafka(cls, *, name: str, log_dir: Path) -> Driver:
        """The librdkafka driver, on this Python."""
        argv = [sys.executable, "-m", "groupcheck.kafka.rdkafka_driver"]
        return cls(argv, name=name, log_dir=log_dir)

    def __enter__(self) -> Driver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- the event channel ---------------------------------------------------------------

    def _read(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        with self._events_path.open("a", encoding="utf-8") as log:
            for raw in stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if not line.strip():
                    continue
                log.write(line + "\n")
                log.flush()
                try:
                    event = json.loads(line)
                except ValueError:
                    event = None
                if not isinstance(event, dict):
                    event = {"ts": time.time_ns() // 1_000_000, "event": "garbage", "line": line}
                with self._cond:
                    self._events.append(event)
                    self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def send(self, cmd: dict[str, Any]) -> None:
        """Writes one command line; DriverError when the driver no longer reads them."""
        stdin = self._proc.stdin
        line = json.dumps(cmd, separators=(",", ":")) + "\n"
        with self._send_lock:
            if stdin is None or stdin.closed:
                raise DriverError(f"driver {self.name}: its stdin is closed")
            try:
                stdin.write(line.encode())
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise DriverError(
                    f"driver {self.name}: cannot send {cmd.get('cmd')!r} ({exc})"
                ) from None

    def close_input(self) -> None:
        """Closes the driver's stdin (EOF: it closes its consumers and exits)."""
        with self._send_lock:
            stdin = self._proc.stdin
            if stdin is not None and not stdin.closed:
                with contextlib.suppress(OSError):
                    stdin.close()

    def events(self) -> list[dict[str, Any]]:
        """A copy of every event so far, in arrival order."""
        with self._cond:
            return list(self._events)

    def wait_for(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        *,
        timeout_s: float,
        start: int = 0,
    ) -> dict[str, Any]:
        """The first event at index ``start`` or later that matches; DriverError on timeout
        or when the driver's event channel ends first."""
        deadline = time.monotonic() + timeout_s
        index = start
        with self._cond:
            while True:
                while index < len(self._events):
                    event = self._events[index]
                    index += 1
                    if predicate(event):
                        return event
                if self._eof:
                    code = self._proc.poll()
                    if code is None:
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            code = self._proc.wait(timeout=1.0)
                    raise DriverError(
                        f"driver {self.name} exited (code {code}) before the event waited for"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise DriverError(
                        f"driver {self.name}: no matching event within {timeout_s:g} s"
                    )
                self._cond.wait(remaining)

    # -- the process ---------------------------------------------------------------------

    def alive(self) -> bool:
        return self._proc.poll() is None

    def stop(self, *, timeout_s: float = 15.0) -> int | None:
        """Sends ``exit`` and closes stdin, waits up to ``timeout_s``; then SIGTERM, then
        SIGKILL. Returns the exit code (negative: the signal that ended it). Idempotent."""
        if self._proc.poll() is None:
            with contextlib.suppress(DriverError):
                self.send({"cmd": "exit"})
            self.close_input()
            try:
                self._proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(self._proc.pid, sig)
                    try:
                        self._proc.wait(timeout=wait_s)
                        break
                    except subprocess.TimeoutExpired:
                        continue
        else:
            self.close_input()
        self._reader.join(timeout=5.0)
        if self._proc.stdout is not None:
            with contextlib.suppress(OSError):
                self._proc.stdout.close()
        self._returncode = self._proc.poll()
        return self._returncode

    def _stderr_tail(self) -> str:
        try:
            lines = self._stderr_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no stderr log)"
        tail = [line.strip() for line in lines[-STDERR_TAIL_LINES:] if line.strip()]
        return " | ".join(tail) if tail else "(empty)"

"""A single-node Apache Kafka broker in KRaft mode (combined broker and controller) that
groupcheck starts itself: on 127.0.0.1 only, in a fresh temporary directory, on free ports,
ready when the broker logs that it started (``KafkaRaftServer``: "Kafka Server started",
after the broker is unfenced; an open port is not enough), and stopped — the JVM and the
directory — when the ``Broker`` is stopped, its ``with`` block ends, or the process that
started it dies (the JVM is started with a parent-death signal)."""

from __future__ import annotations

import base64
import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from groupcheck.kafka import shield
from groupcheck.kafka.artifacts import DEFAULT_VERSION, Artifacts, artifacts, java

READY_LINE = "Kafka Server started"
"""What ``KafkaRaftServer.startup`` logs once the broker serves requests."""

BASE_PROPERTIES: dict[str, str] = {
    # One node, every internal topic with one replica and one partition.
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "auto.create.topics.enable": "false",
    "group.initial.rebalance.delay.ms": "0",
    # A small machine: the log cleaner's dedupe buffer is 128 MiB of heap per thread by
    # default (CleanerConfig); fewer threads on 2 cores.
    "log.cleaner.dedupe.buffer.size": "2097152",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
}
"""Properties of every broker groupcheck starts (listeners and directories are added)."""

GROUP_DEFAULTS: dict[str, str] = {
    # Short timeouts so scenarios take seconds. A value outside its min..max stops the
    # broker at start-up (GroupCoordinatorConfig), so the bounds are lowered with it.
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.min.session.timeout.ms": "1000",
}
"""The group coordinator's settings unless a scenario says otherwise."""

_LOG4J = """\
rootLogger.level=INFO
rootLogger.appenderRef.out.ref=OUT
appender.out.type=Console
appender.out.name=OUT
appender.out.layout.type=PatternLayout
appender.out.layout.pattern=[%d{ISO8601}] %p %m (%c)%n
logger.coordinator.name=org.apache.kafka.coordinator.group
logger.coordinator.level=INFO
"""


class BrokerError(Exception):
    """The broker could not be started or did not become ready; ``kind`` is ``port``
    (an address in use) or ``not-ready`` (it exited or timed out)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _check_free(port: int) -> None:
    """BrokerError (``port``) when something listens on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError as e:
            raise BrokerError(
                f"127.0.0.1:{port} is in use ({e.strerror}); choose another --port or 0",
                "port",
            ) from None


def cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, base64url without padding, without ``-``
    (Kafka's ``Uuid.randomUuid`` draws again while its string has one)."""
    while True:
        text = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if "-" not in text:
            return text


def _libc() -> object | None:
    """The C library, loaded in the parent (the child between fork and exec only calls
    into it)."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC: Any = _libc()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when the process that started it dies
    (Linux ``prctl(PR_SET_PDEATHSIG)``), so no JVM outlives groupcheck."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def java_command(
    *, classpath: str, main: str, args: list[str], heap_mb: int, log4j: Path | None
) -> list[str]:
    """A JVM command line for one of Kafka's main classes."""
    opts = [
        java(),
        f"-Xms{min(heap_mb, 256)}m",
        f"-Xmx{heap_mb}m",
        "-XX:+UseG1GC",
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
        "-Djava.awt.headless=true",
    ]
    if log4j is not None:
        opts.append(f"-Dlog4j2.configurationFile={log4j}")
    return [*opts, "-cp", classpath, main, *args]


@dataclass
class Broker:
    """One broker. ``start`` formats a fresh data directory and starts it; ``stop`` ends
    it (SIGTERM: a controlled shutdown; SIGKILL after ``stop_timeout_s``) and removes the
    directory it created. ``restart`` stops and starts it again on the same ports and
    data (the coordinator then reloads its groups from ``__consumer_offsets``)."""

    version: str = DEFAULT_VERSION
    properties: Mapping[str, str] = field(default_factory=dict)
    """Group settings and other broker properties over ``GROUP_DEFAULTS``."""
    ready_timeout_s: float = 90.0
    stop_timeout_s: float = 30.0
    heap_mb: int = 512
    log: Callable[[str], None] = lambda message: None
    port: int = 0
    """The client port (0: a free one is chosen)."""

    workdir: Path | None = None
    kafka_version: str | None = None
    """What the broker logged as ``Kafka version``."""
    commit_id: str | None = None
    """What the broker logged as ``Kafka commitId``."""
    startup_s: float | None = None
    """Seconds from launching the JVM to its ready line (the last start)."""
    _process: subprocess.Popen[bytes] | None = None
    _controller_port: int = 0
    _artifacts: Artifacts | None = None
    _log_offset: int = 0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "broker.log"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def settings(self) -> dict[str, str]:
        """The group settings in force (defaults and this broker's)."""
        return {**GROUP_DEFAULTS, **{k: str(v) for k, v in self.properties.items()}}

    def start(self) -> None:
        """Format and start; returns once the broker is ready. BrokerError otherwise (the
        JVM is stopped and the directory removed before it is raised)."""
        self._artifacts = artifacts(self.version)
        java()
        if self.workdir is None:
            if self.port:
                _check_free(self.port)
            else:
                self.port = free_port()
            self.workdir = Path(tempfile.mkdtemp(prefix="groupcheck-kafka-"))
            self._controller_port = free_port()
            self._write_config()
            self._format()
        try:
            self._launch()
        except BaseException:
            self.stop()
            raise

    def _write_config(self) -> None:
        assert self.workdir is not None
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self._controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listeners": (
                f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self._controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.workdir / "data"),
            **BASE_PROPERTIES,
            **self.settings(),
        }
        text = "".join(f"{k}={v}\n" for k, v in props.items())
        (self.workdir / "server.properties").write_text(text, encoding="utf-8")
        (self.workdir / "log4j2.properties").write_text(_LOG4J, encoding="utf-8")

    def _format(self) -> None:
        assert self.workdir is not None
        assert self._artifacts is not None
        command = java_command(
            classpath=self._artifacts.classpath,
            main="kafka.tools.StorageTool",
            args=[
                "format",
                "-t",
                cluster_id(),
                "-c",
                str(self.workdir / "server.properties"),
                "--standalone",
            ],
            heap_mb=256,
            log4j=self.workdir / "log4j2.properties",
        )
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=120,
            check=False,
            preexec_fn=_die_with_parent,
        )
        if done.returncode != 0:
            tail = _tail((done.stdout + done.stderr).decode("utf-8", "replace"))
            raise BrokerError(f"formatting the broker's storage failed: {tail}", "not-ready")

    def _launch(self) -> None:
        assert self.workdir is not None
        assert self._artifacts is not None
        command = java_command(
            classpath=self._artifacts.classpath,
            main="kafka.Kafka",
            args=[str(self.workdir / "server.properties")],
            heap_mb=self.heap_mb,
            log4j=self.workdir / "log4j2.properties",
        )
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        started = time.monotonic()
        with open(self.log_path, "ab") as out:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 (only prctl)
            )
        self.log(f"broker: starting Apache Kafka {self.version} on {self.bootstrap}")
        deadline = started + self.ready_timeout_s
        while True:
            text = self._new_log()
            if READY_LINE in text:
                break
            if self._process.poll() is not None:
                raise self._failure(text, f"exited with status {self._process.returncode}")
            if time.monotonic() > deadline:
                raise self._failure(text, f"did not start within {self.ready_timeout_s:g} s")
            time.sleep(0.1)
        self.startup_s = time.monotonic() - started
        version = re.search(r"Kafka version: (\S+)", text)
        commit = re.search(r"Kafka commitId: (\S+)", text)
        self.kafka_version = version.group(1) if version else None
        self.commit_id = commit.group(1) if commit else None
        self.log(
            f"broker: Apache Kafka {self.kafka_version} ({self.commit_id}) ready on "
            f"{self.bootstrap} in {self.startup_s:.1f} s"
        )

    def _new_log(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _failure(self, text: str, what: str) -> BrokerError:
        if "Address already in use" in text or "BindException" in text:
            return BrokerError(
                f"the broker could not listen on 127.0.0.1:{self.port} or "
                f"127.0.0.1:{self._controller_port}: address already in use",
                "port",
            )
        return BrokerError(f"the broker {what}; its log ends: {_tail(text)}", "not-ready")

    def stop(self, *, keep: bool = False) -> None:
        """Stop the JVM (if running) and, unless ``keep``, remove the directory."""
        shield()
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            self.log("broker: stopped")
        if not keep and self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def restart(self) -> None:
        """Stop the JVM and start it again on the same ports and data."""
        self.stop(keep=True)
        self._launch()

    def copy_log(self, dest: Path) -> None:
        """Copy the broker's log (every start) to ``dest``."""
        with contextlib.suppress(OSError):
            shutil.copyfile(self.log_path, dest)

    def __enter__(self) -> Broker:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _tail(text: str, lines: int = 3) -> str:
    """The last non-empty lines of a log, joined on one line."""
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[-600:] or "(empty)"

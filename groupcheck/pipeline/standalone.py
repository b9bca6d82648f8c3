"""A standalone Spark master and worker on loopback, from the pip-installed pyspark.

The pip package has no ``start-master.sh``, but it has ``bin/spark-class``, which runs
``org.apache.spark.deploy.master.Master`` and ``…worker.Worker`` like a full Spark
distribution does. ``StandaloneCluster`` starts both on 127.0.0.1 on free ports, waits
until the worker has registered (the master's ``/json`` status page), and stops both by
process id. The tests and ``docs/pipeline.md`` use it to run a job through a real
``spark://`` master; it is also a quick way to try cluster mode on one machine::

    with StandaloneCluster(tmp_dir) as cluster:
        ... groupcheck pipeline explore --master cluster.url ...
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from groupcheck.pipeline.errors import PipelineError

HOST = "127.0.0.1"


def log4j2_properties(level: str) -> str:
    """A Log4j 2 configuration for Spark's JVMs: ``level`` and above, one line each on
    stderr."""
    return (
        f"rootLogger.level = {level}\n"
        "rootLogger.appenderRef.stderr.ref = console\n"
        "appender.console.type = Console\n"
        "appender.console.name = console\n"
        "appender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex\n"
    )


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def spark_home() -> Path:
    """The installed pyspark package (it carries ``bin/spark-class`` and the jars)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise PipelineError("pyspark is not installed; run 'make setup'")
    return Path(spec.origin).parent


class StandaloneCluster:
    """A master and (after ``start_worker``, once per worker) workers, on loopback."""

    def __init__(self, directory: Path, cores: int = 2, memory: str = "1g") -> None:
        self.dir = Path(directory)
        self.cores = cores
        self.memory = memory
        self.port = free_port()
        self.webui = free_port()
        self.url = f"spark://{HOST}:{self.port}"
        self._procs: list[subprocess.Popen[bytes]] = []
        self.work_dirs: list[Path] = []
        """Each started worker's work directory (its executors' directories, by app)."""
        conf = self.dir / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "log4j2.properties").write_text(log4j2_properties("warn"), encoding="utf-8")
        home = spark_home()
        self._spark_class = str(home / "bin" / "spark-class")
        self._env = {
            **os.environ,
            "SPARK_HOME": str(home),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_CONF_DIR": str(conf),
            "SPARK_NO_DAEMONIZE": "1",
        }

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.dir / f"{name}.log", "wb")  # noqa: SIM115 - lives as long as the process
        try:
            proc = subprocess.Popen(
                [self._spark_class, *args],
                env=self._env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own group: executors die with it on stop
            )
        finally:
            log.close()
        self._procs.append(proc)
        return proc

    def start_master(self, timeout: float = 60.0) -> None:
        proc = self._spawn(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                HOST,
                "--port",
                str(self.port),
                "--webui-port",
                str(self.webui),
            ],
        )
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise PipelineError(f"the Spark master exited ({self.dir / 'master.log'})")
            try:
                with socket.create_connection((HOST, self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise PipelineError("the Spark master did not start listening") from None
                time.sleep(0.2)

    def start_worker(self, timeout: float = 60.0, cores: int | None = None) -> None:
        """Start one more worker (``cores``: default the cluster's) and wait until the
        master lists it."""
        n = len(self.work_dirs)
        name = "worker" if n == 0 else f"worker-{n}"
        work = self.dir / ("work" if n == 0 else f"work-{n}")
        work.mkdir(exist_ok=True)
        self.work_dirs.append(work)
        alive = self.alive_workers()
        proc = self._spawn(
            name,
            [
                "org.apache.spark.deploy.worker.Worker",
                self.url,
                "--host",
                HOST,
                "--port",
                str(free_port()),
                "--webui-port",
                str(free_port()),
                "--cores",
                str(self.cores if cores is None else cores),
                "--memory",
                self.memory,
                "--work-dir",
                str(work),
            ],
        )
        deadline = time.monotonic() + timeout
        while self.alive_workers() < alive + 1:
            if proc.poll() is not None:
                raise PipelineError(f"the Spark worker exited ({self.dir / f'{name}.log'})")
            if time.monotonic() > deadline:
                raise PipelineError("the Spark worker did not register with the master")
            time.sleep(0.2)

    def alive_workers(self) -> int:
        """Workers the master lists as ALIVE (its web UI's JSON status)."""
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.webui}/json/", timeout=2) as r:
                status = json.load(r)
        except (OSError, ValueError):
            return 0
        return sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")

    def stop(self) -> None:
        """Stop the worker (and its executors), then the master: SIGTERM, then SIGKILL."""
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            # anything left in the process group we started (an executor JVM)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        self._procs.clear()

    def __enter__(self) -> StandaloneCluster:
        self.start_master()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

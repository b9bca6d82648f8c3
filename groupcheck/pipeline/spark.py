"""The Spark side: the session (local by default, a cluster with ``--master``) and the job
that fans a plan's parts out to tasks. The only module of the project that imports pyspark.

Local mode (no ``--master``, or ``local[N]``) runs tasks in Python workers forked on this
machine. Any other master (``spark://HOST:PORT``, ``local-cluster[…]``, ``yarn``,
``k8s://…``) gets the project shipped as a zip of ``model/ invariants/ reports/
groupcheck/`` (``addPyFile``: executors put it first on ``sys.path``), and the session
waits a bounded time for an executor to register before any job starts. A
``spark://`` master is probed first, so an unreachable one fails at once.

A session this module starts is warmed up before it is handed out: one small task per
core starts Spark's Python workers and imports the project's task code in them
(``work.warm_up``). Spark reuses those workers for the job, so the job's time is
steady-state throughput (what ``bench/bench_pipeline.py`` measures once the session is up),
and an executor that cannot import the project (the wrong ``PYSPARK_PYTHON``, a missing
dependency) fails here, with one line, before any part is computed.

Under Spark Connect (``SPARK_REMOTE``, or a session a notebook already runs) the client has
no ``SparkContext``: the code then reads the master and the parallelism from the session's
configuration, ships the project with ``addArtifacts`` and does not count executors.

Quiet by design: no UI, no console progress bars, a log4j2 configuration at ``error``
(the JVM still prints one ``Using incubator modules`` line). ``SPARK_LOCAL_IP`` defaults
to 127.0.0.1 when the master is on this machine, so no Spark port listens elsewhere.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pyspark import SparkContext
from pyspark.sql import SparkSession

from groupcheck.cores import usable_cores
from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.masters import master_kind, on_this_machine, probe
from groupcheck.pipeline.standalone import log4j2_properties
from groupcheck.pipeline.store import done_parts
from groupcheck.pipeline.work import (
    MARK,
    SUMMARY_DDL,
    TASK_MODULES,
    WARM_UP_DDL,
    Job,
    PartSummary,
    map_parts,
    warm_up,
)

LOG4J2 = log4j2_properties("error") + (
    "logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer\n"
    "logger.gateway.level = error\n"
)
"""The driver's logging: errors only (groupcheck reports progress itself)."""

PACKAGES = ("model", "invariants", "reports", "groupcheck")
"""The project's top-level packages, shipped to a cluster's executors."""

Progress = Callable[[str], None]

PROGRESS_EVERY = 5.0
"""Seconds between two progress lines of a running job."""


def project_zip(directory: Path) -> Path:
    """A zip of the project's packages (``.py`` files only), for ``addPyFile``."""
    target = directory / "groupcheck-project.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for name in PACKAGES:
            root = Path(importlib.import_module(name).__file__ or "").parent
            for path in sorted(root.rglob("*.py")):
                z.write(path, f"{name}/{path.relative_to(root).as_posix()}")
    return target


def _context(spark: SparkSession) -> SparkContext | None:
    """The session's ``SparkContext``; None under Spark Connect, where the client has none
    (``spark.sparkContext`` raises ``JVM_ATTRIBUTE_NOT_SUPPORTED`` there)."""
    try:
        return spark.sparkContext
    except Exception:
        return None


def _conf(spark: SparkSession, key: str) -> str | None:
    """A setting of the session, None when it is unset or cannot be read."""
    try:
        value = spark.conf.get(key, None)
    except Exception:
        return None
    return None if value is None else str(value)


def running_master(spark: SparkSession) -> str | None:
    """The master URL a session runs on (None when a Connect server does not say)."""
    context = _context(spark)
    return context.master if context is not None else _conf(spark, "spark.master")


def task_slots(spark: SparkSession) -> int:
    """How many tasks the session runs at once: Spark's default parallelism, else the
    ``spark.default.parallelism`` setting, else the cores this process may use."""
    context = _context(spark)
    if context is not None:
        return max(int(context.defaultParallelism), 1)
    configured = _conf(spark, "spark.default.parallelism")
    if configured is not None and configured.strip().isdigit():
        return max(int(configured), 1)
    return usable_cores()


def _executors(context: SparkContext) -> int:
    """Executors registered with the driver (the driver itself not counted)."""
    jsc = context._jsc
    return int(jsc.sc().getExecutorMemoryStatus().size()) - 1


@contextmanager
def session(
    master: str | None = None,
    *,
    connect_timeout: float = 60.0,
    conf: Sequence[tuple[str, str]] = (),
    fast_start: bool = False,
    progress: Progress | None = None,
) -> Iterator[SparkSession]:
    """A Spark session for the pipeline, stopped on exit. ``master`` None lets Spark pick
    (``local[*]``, or what ``spark-submit --master`` said). ``fast_start`` trades the
    driver JVM's peak JIT speed for a faster start (C1 only). Local mode always does: the
    work is Python in the worker processes, and on a small machine the JVM's C2 compiler
    threads take CPU from them (a 10,000-run job ran about 7 % faster on 2 cores;
    docs/pipeline.md, "Benchmark")."""
    kind = master_kind(master)
    active = SparkSession.getActiveSession()
    if active is not None:
        # A session already runs in this process (a notebook, a managed cluster, a test):
        # use it and leave it running.
        running = running_master(active)
        if master is not None and master != running:
            raise PipelineError(
                f"--master {master}: this process already runs a Spark session on "
                f"{running or 'a Spark Connect server'}; leave out --master to use it"
            )
        yield active
        return
    if master is not None and master.startswith("spark://"):
        probe(master, min(connect_timeout, 5.0))
    if on_this_machine(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Executors run this interpreter (the venv with the project's dependencies) unless the
    # user says otherwise; without it they would run whatever python3 is first on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    tmp = Path(tempfile.mkdtemp(prefix="groupcheck-spark-"))
    (tmp / "log4j2.properties").write_text(LOG4J2, encoding="utf-8")
    java_opts = f"-Dlog4j2.configurationFile=file:{tmp / 'log4j2.properties'}"
    if fast_start or kind == "local":
        java_opts += " -XX:TieredStopAtLevel=1"
    builder = SparkSession.builder.appName("groupcheck-pipeline")
    if master is not None:
        builder = builder.master(master)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "false",
        "spark.local.dir": str(tmp / "local"),
        "spark.sql.warehouse.dir": str(tmp / "warehouse"),
        "spark.driver.extraJavaOptions": java_opts,
    }
    settings.update(dict(conf))
    for key, value in settings.items():
        builder = builder.config(key, value)
    if progress:
        progress(f"starting Spark ({master or 'local[*]'})")
    spark: SparkSession | None = None
    try:
        try:
            spark = builder.getOrCreate()
        except Exception as e:
            raise PipelineError(
                f"cannot start Spark with master {master or 'local[*]'}: {_first_line(e)}"
            ) from None
        if kind == "cluster":
            _ship_project(spark, tmp)
            context = _context(spark)
            deadline = time.monotonic() + connect_timeout
            while context is not None and _executors(context) < 1:
                if time.monotonic() > deadline:
                    raise PipelineError(
                        f"no executor registered with the Spark master {master} within "
                        f"{connect_timeout:g} s; is a worker running with free cores and memory?"
                    )
                time.sleep(0.2)
        if progress:
            progress("starting Spark's Python workers")
        warm_up_workers(spark)
        yield spark
    finally:
        if spark is not None:
            spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _ship_project(spark: SparkSession, tmp: Path) -> None:
    """Send the project's zip to the executors (``addPyFile``; under Connect, a Python
    artifact of the session)."""
    archive = str(project_zip(tmp))
    context = _context(spark)
    try:
        if context is not None:
            context.addPyFile(archive)
        else:
            spark.addArtifacts(archive, pyfile=True)
    except Exception as e:
        raise PipelineError(
            f"cannot ship the project's code to the executors: {_first_line(e)}"
        ) from None


def warm_up_workers(spark: SparkSession, modules: Sequence[str] = TASK_MODULES) -> list[str]:
    """Start the session's Python workers and import ``modules`` in them, one small task
    per core; where the tasks found ``groupcheck``. An executor that cannot import them is
    a ``PipelineError`` with the worker's own error line."""
    try:
        slots = task_slots(spark)
        frame = spark.range(0, slots, 1, numPartitions=slots)
        rows = frame.mapInArrow(functools.partial(warm_up, tuple(modules)), WARM_UP_DDL).collect()
    except Exception as e:
        raise PipelineError(
            f"Spark's Python workers cannot run the project's code: {job_error(e)}; "
            "do the executors run the project's Python (PYSPARK_PYTHON) with its dependencies?"
        ) from None
    return sorted({r.code for r in rows})


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:400]


def job_error(e: BaseException) -> str:
    """The one line worth showing from a failed Spark job: a task's own message, else the
    last Python exception line, else the first line."""
    text = str(e)
    for line in text.splitlines():
        if MARK in line:
            return line[line.index(MARK) + len(MARK) :].strip()
    pattern = re.compile(r"^\s*(\w+(?:\.\w+)*(?:Error|Exception)): (.+)$")
    found = [m for m in map(pattern.match, text.splitlines()) if m]
    if found:
        return f"{found[-1].group(1)}: {found[-1].group(2)}"[:400]
    return _first_line(e)


def run_job(
    spark: SparkSession,
    job: Job,
    pending: Sequence[int],
    progress: Progress | None = None,
    every: float | None = None,
) -> list[PartSummary]:
    """Compute the ``pending`` parts of ``job``, one Spark task per part; ``progress`` is
    told the committed parts every ``every`` seconds (default ``PROGRESS_EVERY``)."""
    if not pending:
        return []
    every = PROGRESS_EVERY if every is None else every
    fn = functools.partial(map_parts, job, tuple(pending))
    frame = spark.range(0, len(pending), 1, numPartitions=len(pending))
    stop = threading.Event()
    watcher = None
    if progress is not None:
        watcher = threading.Thread(
            target=_watch, args=(job, len(pending), stop, progress, every), daemon=True
        )
        watcher.start()
    try:
        rows = frame.mapInArrow(fn, SUMMARY_DDL).collect()
    except Exception as e:
        raise PipelineError(
            f"the Spark job failed: {job_error(e)} (committed parts are kept; rerun to resume)"
        ) from None
    finally:
        stop.set()
        if watcher is not None:
            watcher.join()
    return [
        PartSummary(r.part, r.rows, r.findings, r.computed, r.seconds, r.host, r.code) for r in rows
    ]


def _watch(job: Job, pending: int, stop: threading.Event, progress: Progress, every: float) -> None:
    """Report committed parts every ``every`` seconds while the job runs."""
    out = Path(job.out)
    total = len(job.parts)
    before = len(done_parts(out, total))
    start = time.monotonic()
    while not stop.wait(every):
        done = len(done_parts(out, total)) - before
        elapsed = time.monotonic() - start
        eta = f", about {elapsed / done * (pending - done):.0f} s left" if done else ""
        progress(f"{done}/{pending} parts done in {elapsed:.0f} s{eta}")

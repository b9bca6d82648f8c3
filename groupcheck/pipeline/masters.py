"""Spark master URLs: which forms are accepted, which run on this machine, and a fast
reachability probe for standalone masters (no pyspark needed, so bad input fails before
a JVM starts)."""

from __future__ import annotations

import re
import socket

from groupcheck.pipeline.errors import PipelineError

_LOCAL = re.compile(r"^local(\[(\*|\d+)(,\d+)?\])?$")
_LOCAL_CLUSTER = re.compile(r"^local-cluster\[\d+,\d+,\d+\]$")
_STANDALONE = re.compile(r"^spark://(?P<hosts>[^/]+)$")
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def master_kind(master: str | None) -> str:
    """``local`` (tasks forked here) or ``cluster`` (executors in other JVMs); an error
    for a URL that is none of the forms Spark takes."""
    if master is None or _LOCAL.match(master):
        return "local"
    if (
        _LOCAL_CLUSTER.match(master)
        or _STANDALONE.match(master)
        or master == "yarn"
        or (master.startswith("k8s://") and len(master) > 6)
    ):
        if master.startswith("spark://"):
            standalone_endpoints(master)
        return "cluster"
    raise PipelineError(
        f"--master {master!r}: not a Spark master URL; use local[*], local[N], "
        "spark://HOST:PORT, yarn or k8s://https://HOST:PORT"
    )


def standalone_endpoints(master: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a ``spark://`` URL (several for a standby setup)."""
    m = _STANDALONE.match(master)
    if m is None:
        return []
    out: list[tuple[str, int]] = []
    for hostport in m.group("hosts").split(","):
        host, sep, port = hostport.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise PipelineError(f"--master {master!r}: expected spark://HOST:PORT[,HOST:PORT…]")
        out.append((host.strip("[]"), int(port)))
    return out


def on_this_machine(master: str | None) -> bool:
    """Whether every Spark process of this master runs on this machine (then Spark is
    kept on loopback)."""
    if master is None or _LOCAL.match(master) or _LOCAL_CLUSTER.match(master):
        return True
    endpoints = standalone_endpoints(master)
    return bool(endpoints) and all(h in _LOOPBACK or h.startswith("127.") for h, _ in endpoints)


def probe(master: str, timeout: float) -> None:
    """Fail fast when no standalone master listens where ``master`` says (any one of the
    listed endpoints answering is enough)."""
    errors: list[str] = []
    for host, port in standalone_endpoints(master):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as e:
            reason = e.strerror or str(e) or type(e).__name__
            errors.append(f"{host}:{port} ({reason})")
    if errors:
        raise PipelineError(
            f"cannot reach the Spark master {master}: {'; '.join(errors)}; "
            "is the master running and the address right?"
        )

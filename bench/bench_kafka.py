"""A real Kafka broker (``groupcheck kafka``): its start-up time and the latency the capture
proxy adds per request.

- **Start-up**: ``Broker.start`` three times (format a fresh directory, launch the JVM, wait
  for the broker's "Kafka Server started" line): each time, its seconds from launch to that
  line, and the whole call (format included). Goal: the median whole start ≤ 15 s on the
  2-core machine.
- **Proxy latency**: one TCP connection sends N requests one after another and times each
  round trip, straight to the broker and through ``groupcheck capture`` (a child process, as
  ``kafka run`` starts it): ApiVersions v0 (forwarded byte for byte) and Metadata v1 for all
  topics (decoded and rewritten by the proxy, which replaces the broker's address). The
  median and 99th percentile of each, and the difference of the medians: what the proxy
  adds. Goal: ≤ 2 ms added at the median."""

from __future__ import annotations

import socket
import statistics
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

from groupcheck.kafka.broker import Broker
from groupcheck.kafka.run import Capture

GOAL_STARTUP_S = 15.0
GOAL_ADDED_MS = 2.0
REQUESTS = 400


def _request(api_key: int, version: int, correlation: int, body: bytes) -> bytes:
    client = b"bench"
    header = struct.pack(">hhih", api_key, version, correlation, len(client)) + client
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _round_trips(host: str, port: int, api_key: int, version: int, body: bytes) -> list[float]:
    """Milliseconds per round trip of ``REQUESTS`` requests on one connection."""
    out = []
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(REQUESTS + 20):
            frame = _request(api_key, version, i, body)
            start = time.perf_counter()
            sock.sendall(frame)
            (size,) = struct.unpack(">i", _read(sock, 4))
            _read(sock, size)
            if i >= 20:  # warm-up: connections, JIT
                out.append((time.perf_counter() - start) * 1000)
    return out


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[int(len(ordered) * 0.99) - 1], 3),
    }


def run() -> dict[str, Any]:
    starts = []
    for _ in range(3):
        began = time.perf_counter()
        broker = Broker()
        broker.start()
        whole = time.perf_counter() - began
        starts.append({"ready_s": round(broker.startup_s or 0, 2), "whole_s": round(whole, 2)})
        broker.stop()
    median_start = statistics.median(s["whole_s"] for s in starts)

    latency: dict[str, Any] = {}
    with Broker() as broker, tempfile.TemporaryDirectory() as tmp:
        proxy = Capture(
            upstream=broker.bootstrap,
            out=Path(tmp) / "c.ndjson",
            protocol="consumer",
            session_timeout_ms=None,
            log_path=Path(tmp) / "capture.log",
        )
        proxy.start()  # as 'kafka run' starts it: a child process, with --control
        try:
            for name, key, version, body in (
                ("ApiVersions", 18, 0, b""),
                ("Metadata", 3, 1, struct.pack(">i", -1)),
            ):
                direct = _round_trips("127.0.0.1", broker.port, key, version, body)
                proxied = _round_trips("127.0.0.1", proxy.port, key, version, body)
                d, p = _stats(direct), _stats(proxied)
                latency[name] = {
                    "direct": d,
                    "proxy": p,
                    "added_median_ms": round(p["median_ms"] - d["median_ms"], 3),
                }
        finally:
            proxy.stop()
    added = max(v["added_median_ms"] for v in latency.values())
    return {
        "startup": starts,
        "startup_median_whole_s": median_start,
        "latency": latency,
        "requests": REQUESTS,
        "goal": f"start ≤ {GOAL_STARTUP_S} s, proxy adds ≤ {GOAL_ADDED_MS} ms (median)",
        "meets_goal": median_start <= GOAL_STARTUP_S and added <= GOAL_ADDED_MS,
    }

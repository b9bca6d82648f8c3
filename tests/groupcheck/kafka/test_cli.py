"""``groupcheck kafka`` on the command line: a broker that ``kafka up`` starts is stopped,
with its JVM and directory, by SIGTERM and by ``kafka down``; missing artifacts, a port in
use and a bad scenario file are one line each with their own exit status."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from groupcheck.kafka.artifacts import Artifacts

pytestmark = pytest.mark.kafka

GROUPCHECK = [sys.executable, "-m", "groupcheck"]


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            child = int(entry.name)
            out += [child, *_children(child)]
    return out


def _up(tmp_path: Path) -> tuple[subprocess.Popen[str], dict[str, object], list[int]]:
    proc = subprocess.Popen(
        [*GROUPCHECK, "kafka", "up", "--duration", "120"],
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "up.err", "w"),  # noqa: SIM115 (closed with the process)
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, (tmp_path / "up.err").read_text()
    info = json.loads(line)
    return proc, info, _children(proc.pid)


def _gone(pids: list[int], timeout_s: float = 40) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(os.path.exists(f"/proc/{p}") for p in pids):
            return True
        time.sleep(0.2)
    return False


def test_up_then_sigterm_leaves_no_jvm(tmp_path: Path, kafka_artifacts: Artifacts) -> None:
    proc, info, children = _up(tmp_path)
    assert str(info["bootstrap"]).startswith("127.0.0.1:")
    assert info["version"] == "4.4.0"
    assert children, "kafka up started no JVM"
    host, port = str(info["bootstrap"]).split(":")
    with socket.create_connection((host, int(port)), timeout=5):
        pass
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    assert _gone(children), "a JVM outlived 'kafka up'"


def test_kafka_down_stops_kafka_up(tmp_path: Path, kafka_artifacts: Artifacts) -> None:
    proc, _, children = _up(tmp_path)
    done = subprocess.run(
        [*GROUPCHECK, "kafka", "down"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0
    assert f"process {proc.pid}" in done.stderr
    assert proc.wait(timeout=60) == 143
    assert _gone(children)


def test_sigkill_of_groupcheck_takes_the_broker(tmp_path: Path, kafka_artifacts: Artifacts) -> None:
    proc, _, children = _up(tmp_path)
    proc.kill()  # no handler runs: the parent-death signal stops the JVM
    proc.wait(timeout=10)
    assert _gone(children), "the JVM outlived a killed groupcheck"


def test_missing_artifacts_exit_5(tmp_path: Path) -> None:
    env = {**os.environ, "GROUPCHECK_KAFKA_CACHE": str(tmp_path / "empty")}
    done = subprocess.run(
        [*GROUPCHECK, "kafka", "up"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 5
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "make setup KAFKA_VERSIONS=4.4.0" in lines[0]
    assert "Traceback" not in done.stderr


def test_port_in_use_exit_6(kafka_artifacts: Artifacts) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        done = subprocess.run(
            [*GROUPCHECK, "kafka", "up", "--port", str(port)],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 6
    assert done.stderr.strip().count("\n") == 0
    assert "in use" in done.stderr


def test_bad_scenario_file_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('protocol = "consumer"\nsteps = [{ start = "nobody" }]\n')
    done = subprocess.run(
        [*GROUPCHECK, "kafka", "run", str(bad), "--out", str(tmp_path / "out")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "step 1" in done.stderr
    assert "nobody" in done.stderr
    assert not (tmp_path / "out").exists()


def test_scenarios_lists_every_shipped_file() -> None:
    from groupcheck.kafka.scenario import scenario_files

    done = subprocess.run(
        [*GROUPCHECK, "kafka", "scenarios"], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    listed = [line.split()[0] for line in done.stdout.splitlines()]
    assert listed == list(scenario_files())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_run_stops_everything(
    tmp_path: Path, kafka_artifacts: Artifacts, sig: signal.Signals
) -> None:
    """SIGTERM or Ctrl-C while a scenario runs: the broker, the proxy and every driver
    stop, nothing is published under --out and nothing is left in its directory."""
    out = tmp_path / "runs" / "crash"
    err = tmp_path / "run.err"
    with open(err, "w") as stderr:
        proc = subprocess.Popen(
            [*GROUPCHECK, "kafka", "run", "consumer-crash", "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    deadline = time.monotonic() + 120
    while "step 3" not in err.read_text() and time.monotonic() < deadline:
        assert proc.poll() is None, err.read_text()
        time.sleep(0.2)
    children = _children(proc.pid)
    assert len(children) >= 4, "expected a broker, the proxy and three drivers"
    proc.send_signal(sig)
    assert proc.wait(timeout=90) == 128 + sig
    assert _gone(children), "a process of the run outlived it"
    assert not out.exists()
    assert list((tmp_path / "runs").iterdir()) == []
    assert err.read_text().strip().splitlines()[-1] in (
        "groupcheck: terminated",
        "groupcheck: interrupted",
    )

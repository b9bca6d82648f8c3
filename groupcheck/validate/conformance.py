"""Conformance mode: replay a trace against the model.

Every event must be an action the model has enabled at that point — a delivered response
must be exactly the response the model's coordinator produced — and every state and step
property of the model (``invariants.properties``, under their own names) must hold after
it. The first divergent event is reported (property ``Conformance``) with the actions the
model had enabled there, and the replay stops. Needs a complete model trace whose header
names its configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from groupcheck.validate.report import Finding, Report
from invariants.check import Checker
from model import system
from model.actions import Action
from model.config import Config
from model.presets import PRESETS
from model.trace import TraceError, decode_action, parse_event, parse_header
from reports.casestudy import describe_action
from reports.render.escape import cut

CONFORMANCE = "Conformance"
"""The finding of an event the model does not take at that point."""


def _config_for(header_config: str | None, topics: dict[str, int]) -> Config:
    """The reference config a trace names: a preset, or a mutant scenario (``SCENARIO`` or
    ``SCENARIO+mutant``) with the *default* rules — so replaying a mutant's trace shows
    where that implementation departs from the reference."""
    from groupcheck.mutants import MUTANTS

    name = (header_config or "").split("+")[0]
    candidates = [PRESETS.get(name.upper())]
    candidates += [m.config for m in MUTANTS.values() if m.config.name == name]
    for config in candidates:
        if config is not None and dict(config.topics) == topics:
            return config
    raise TraceError(
        1,
        1,
        f"conformance needs the model config: the header names {header_config!r:.80}, "
        f"which is no preset or mutant scenario with topics {cut(repr(topics), 200)}",
    )


def validate_conformance(
    file: str,
    lines: Iterable[str],
    config: Config | None = None,
    on_step: Callable[[Action], None] | None = None,
) -> Report:
    """Replay ``lines`` against the model (see the module docstring). ``on_step`` is called
    with every action the replay took, in order — the path the trace describes — without
    the validator keeping them."""
    report = Report(file, "conformance")
    it = iter(lines)
    try:
        first = next(it, None)
        if first is None:
            raise TraceError(1, 1, "empty trace: no header line")
        header = parse_header(first)
        config = config or _config_for(header.config, dict(header.topics))
        checker = Checker()
        state = system.initial(config)
        for n, line in enumerate(it, 2):
            if not line.strip():
                continue
            event = parse_event(line, n)
            action = decode_action(event, line, n)
            report.events += 1
            enabled = system.enabled(state, config)
            if action not in enabled:
                shown = "; ".join(describe_action(a) for a in enabled[:8])
                more = f" (+{len(enabled) - 8} more)" if len(enabled) > 8 else ""
                report.violations.append(
                    Finding(
                        file,
                        n,
                        CONFORMANCE,
                        f"{describe_action(action)} is not what the model does here; "
                        f"enabled: {shown}{more}",
                    )
                )
                return report
            new = system.step(state, action, config)
            if on_step is not None:
                on_step(action)
            for v in checker.check_step(state, action, new) + checker.check_state(new):
                report.violations.append(Finding(file, n, v.property, v.message))
            state = new
    except TraceError as e:
        report.error = f"{file}:{e}"
    return report

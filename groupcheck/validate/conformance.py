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
from dataclasses import replace

from groupcheck.validate.events import EventReader
from groupcheck.validate.report import Finding, Report
from invariants.check import Checker, Violation
from model import system
from model.actions import Action
from model.config import Config
from model.presets import PRESETS
from model.rules import DEFAULT_RULES
from model.settings import config_from_mapping
from model.status import ConfigError
from model.system import AnyState
from model.trace import TraceError, parse_header
from model.trace.codec import CLIENT_EVENT_KINDS, TraceHeader
from reports.casestudy import describe_action
from reports.escape import cut

CONFORMANCE = "Conformance"
"""The finding of an event the model does not take at that point."""
MEMO_STEPS = 8192
"""The most steps (state, action → next state and the properties it violates) and states
(→ the state properties they violate) the replay remembers; each memo is emptied when full.
The model is deterministic and its properties are functions of the states (and step) they
read, so a step taken again from an equal state is enabled and ends the same way: a steady
group's trace, which returns to the same few states again and again, is replayed without
asking the model and the properties again, in bounded memory."""


def config_of_header(header: TraceHeader, *, reference: bool = False) -> Config:
    """The model config a trace was made under, with the rules it ran: the header's
    ``settings`` (the whole config, as model runs write it) or else the preset or mutant
    scenario its ``config`` names; then the header's ``mutant`` or ``rules`` file, so a
    counterexample replays under the very rules that produced it. ``reference`` replays
    under the reference rules instead — to see where a rule change departs from them."""
    from groupcheck.mutants import MUTANTS  # noqa: PLC0415  kept off `groupcheck --help`'s startup

    topics = dict(header.topics)
    if header.settings is not None:
        try:
            config = config_from_mapping(header.settings, "header settings", PRESETS)
        except ConfigError as e:
            raise TraceError(1, 1, cut(str(e), 300)) from None
        if dict(config.topics) != topics:
            raise TraceError(1, 1, "header settings and topics disagree")
    else:
        config = _named_config(header.config, topics)
    if reference:
        return replace(config, rules=DEFAULT_RULES)
    # A model run names its mutant in the header; an older trace only in its config name
    # (``SCENARIO+mutant``).
    named = (header.config or "").partition("+")[2]
    mutant_name = header.mutant or (named if named in MUTANTS else None)
    if mutant_name is not None:
        mutant = MUTANTS.get(mutant_name)
        if mutant is None:
            raise TraceError(1, 1, f"the header names an unknown mutant {mutant_name!r:.60}")
        return replace(config, rules=mutant.rules)
    if header.rules is not None:
        from groupcheck.rulesfile import file_sha256, load_rules  # noqa: PLC0415  kept off `groupcheck --help`'s startup

        file, name = header.rules["file"], header.rules["name"]
        try:
            changed = file_sha256(file) != header.rules["sha256"]
        except OSError:
            raise TraceError(
                1,
                1,
                f"the header's rules file {file!r:.200} cannot be read; replay with "
                "--reference to check the trace against the reference rules",
            ) from None
        if changed:
            raise TraceError(
                1,
                1,
                f"the rules file {file!r:.200} changed since the trace was written "
                "(its SHA-256 differs from the header's)",
            )
        rules, _ = load_rules(f"{file}:{name}")
        return replace(config, rules=rules)
    return config


def _named_config(header_config: str | None, topics: dict[str, int]) -> Config:
    """A preset or mutant scenario named by ``SCENARIO`` or ``SCENARIO+change`` (traces
    written before headers carried their settings)."""
    name = (header_config or "").split("+")[0]
    config = PRESETS.get(name.upper())
    if config is not None and dict(config.topics) == topics:
        return config
    raise TraceError(
        1,
        1,
        f"conformance needs the model config: the header has no settings and names "
        f"{header_config!r:.80}, which is no preset with topics {cut(repr(topics), 200)}",
    )


def validate_conformance(
    file: str,
    lines: Iterable[str],
    config: Config | None = None,
    on_step: Callable[[Action], None] | None = None,
    *,
    reference: bool = False,
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
        config = config or config_of_header(header, reference=reference)
        if header.protocol != config.protocol:
            raise TraceError(
                1,
                1,
                f"the header's protocol {header.protocol!r} is not its config's "
                f"({config.protocol!r})",
            )
        checker = Checker()
        state = system.initial(config)
        decode = EventReader(header).decode
        steps: dict[tuple[AnyState, Action], tuple[AnyState, list[Violation]]] = {}
        states: dict[AnyState, list[Violation]] = {}
        for n, line in enumerate(it, 2):
            if not line.strip():
                continue
            _, kind, action = decode(line, n)
            report.events += 1
            if kind in CLIENT_EVENT_KINDS:
                continue  # an application's observation, not a model step (client mode)
            taken = steps.get((state, action))
            if taken is not None:  # taken before from an equal state: enabled, same result
                new, found = taken
                if on_step is not None:
                    on_step(action)
                for v in found:
                    report.violations.append(Finding(file, n, v.property, v.message))
                state = new
                continue
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
            state_found = states.get(new)
            if state_found is None:
                state_found = checker.check_state(new)
                if len(states) >= MEMO_STEPS:
                    states.clear()
                states[new] = state_found
            found = checker.check_step(state, action, new) + state_found
            for v in found:
                report.violations.append(Finding(file, n, v.property, v.message))
            if len(steps) >= MEMO_STEPS:
                steps.clear()
            steps[state, action] = (new, found)
            state = new
    except TraceError as e:
        report.error = f"{file}:{e}"
    return report

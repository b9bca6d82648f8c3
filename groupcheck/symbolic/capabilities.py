"""What ``prove`` and ``explore --engine bmc`` check, as data: one table of refusals.

The symbolic relations do not cover every configuration or every mutant of the model
(docs/invariants.md, "Not covered yet"). Which combinations of a protocol family, a
search kind and an option they refuse, and with which one-line message, is
:data:`REFUSALS`; a combination no row refuses is supported. The commands ask
:func:`check` at the point where their search kind is decided, with the facts of the
request (:func:`prove_facts`, :func:`bmc_facts`): the first row, in table order, whose
``when`` facts all hold and whose ``unless`` facts all fail refuses it (``ConfigError``:
one line, exit 2). docs/cli.md's capability section is rendered from this table
(:func:`render_markdown`; tests/groupcheck/symbolic/test_symbolic_capabilities.py keeps it in step).

Checks that are input validation rather than capability (a goal ``--only`` does not
know, a mutant the catalogue does not have) stay where the command reads its input.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from groupcheck.mutants import outside, unstated_harms
from groupcheck.rulesfile import symbolic_refusal
from model.status import ConfigError
from reports.publish import table_command

PROVE = "prove"
BMC = "explore --engine bmc"

FAMILIES = ("consumer", "classic", "mixed")
"""The protocol families (``Config.protocol``); a row's ``family`` is one of them or
``any``."""

COORDINATOR = "safety or lasso"
"""The stage of the classic coordinator's relation, before its safety goals or a lasso."""

SEARCHES: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {
    **{
        (PROVE, f): {"proof": ("proof options", "proof"), "agreement": ("agreement",)}
        for f in FAMILIES
    },
    (BMC, "consumer"): {"safety": ("any", "safety"), "lasso": ("any", "lasso")},
    (BMC, "classic"): {
        "safety": ("any", COORDINATOR),
        "lasso": ("any", COORDINATOR, "lasso"),
        "client layer": ("any", "client layer"),
    },
    (BMC, "mixed"): {"safety": ("any",)},
}
"""Per command and family, its search kinds and the stages asked on the way to each, in
order. A row's ``stage`` is one of them: ``prove`` asks its ``proof options`` rows (the
options of ``--agreement`` alone) before it reads the config; ``explore --engine bmc`` asks
its ``any`` rows before it chooses the search (the safety goals, a Convergence lasso, the
classic client layer), the classic ``safety or lasso`` rows (:data:`COORDINATOR`) once it
chose the classic coordinator's relation."""

# --------------------------------------------------------------------------- facts
# The facts a row reads: the options of the request, its config's options and what its
# variant (prove --variant, explore --mutant) is a rule of. prove_facts and bmc_facts
# compute them from the command's arguments.

ARG_CLIENTS = "--clients"
ARG_REACH = "--reach"
ARG_RULES = "--rules FILE.py:NAME replacing more than the kernels"
ARG_KERNEL = "--rules FILE.py:NAME replacing kernels only"
_RULES_UNREAD = (
    "{command}: --rules {rules}: {rules_why}; the symbolic engines read a replacement of the "
    "reconciliation kernel (model.consumer.reconcile.kernel_rule) or of the offset-commit check "
    "(model.consumer.coordinator.commit_kernel_rule) only: explore this file instead"
)
_KERNEL_ELSEWHERE = (
    "{command}: --rules {rules}: the kernels are read by the KIP-848 relation "
    "only; this config is {family}: explore it instead"
)
ARG_ONLY_NOT_CONVERGENCE = "--only a goal other than Convergence"
AGREEMENT_ONLY = (
    "--all-variants",
    "--all-presets",
    "--walks",
    "--length",
    "--seed",
    "--bfs",
    "--seek",
)
"""The options of ``prove --agreement`` alone, in the order the refusal names the first
one given."""

STATIC = "static members"
EPOCHS = "KIP-1251 assignment epochs"
REGEX = "regular-expression subscriptions"
CALLBACKS = "rebalance callbacks as steps"
AUTO_COMMIT = "auto-commit"
EXPIRY = "KIP-211 offset expiry"
DELETION = "group deletion"
OFFLOAD = "KIP-1263 assignor offload"
BATCHING = "KIP-1263 assignment batching"
CLASSIC_LINK = "a config outside the classic client link (classic_client_bmc.supported)"
MIXED_SCOPE = "a config outside the mixed relation (mixed_transition.unsupported)"

CONFIG_OPTIONS = (
    STATIC,
    EPOCHS,
    REGEX,
    CALLBACKS,
    AUTO_COMMIT,
    EXPIRY,
    DELETION,
    OFFLOAD,
    BATCHING,
)
"""The config options a row may read, in the order docs/cli.md's matrix lists them."""

V_EPOCHS = "variant: a KIP-1251 assignment-epoch rule (transition.EPOCH_VARIANTS, HISTORY_VARIANTS)"
V_OUTSIDE = "variant: outside the symbolic relations (Mutant.outside)"
V_CLASSIC = "variant: a classic coordinator rule (classic_transition.VARIANTS)"
V_MIXED = "variant: a mixed group rule (mixed_transition.VARIANTS)"
V_CLASSIC_CLIENT = "variant: a classic client rule (classic_clients.CLIENT_VARIANTS)"
V_NO_CONSUMER = "variant: none of the KIP-848 relation (transition.VARIANTS)"
V_NO_CLASSIC = "variant: none of the classic relation (classic_transition.VARIANTS)"
V_NO_MIXED = "variant: none of the mixed relation (mixed_transition.VARIANTS)"
V_CLIENT = "variant: a KIP-848 client rule (bmc_clients.CLIENT_VARIANTS)"
V_CALLBACK = "variant: a rebalance-callback rule (bmc_clients.CALLBACK_VARIANTS)"
V_POLL = "variant: a poll-timer rule (bmc_clients.POLL_VARIANTS)"
V_STATIC = "variant: a static-member rule (transition.STATIC_VARIANTS)"
V_EXPIRY = "variant: an offset-expiry rule (transition.EXPIRY_VARIANTS)"
V_DELETION = "variant: a group-deletion rule (transition.DELETION_VARIANTS)"
V_UNSTATED = "variant: a rule whose harm no obligation states (UNSTATED_HARM)"
V_OFFLOAD = "variant: an offload rule (transition.OFFLOAD_VARIANTS but install-run-after-deletion)"
V_OFFLOAD_DELETION = "variant: install-run-after-deletion (offload on a deleted group)"
V_ASSIGNOR = (
    "variant: a leader-assignor rule the config states no assignor for "
    "(classic_transition.assignor_variant_refusal)"
)


@dataclass(frozen=True)
class Refusal:
    """One refused combination: ``command`` on a ``family`` config, at ``stage`` (a search
    kind, or the stage before it is chosen: :data:`SEARCHES`), refuses a request whose
    facts include every one of ``when`` and none of ``unless``, with ``message`` (a
    ``str.format`` template over the facts' parameters)."""

    command: str
    family: str
    stage: str
    when: frozenset[str]
    message: str
    unless: frozenset[str] = frozenset()

    def matches(self, facts: frozenset[str]) -> bool:
        return self.when <= facts and not (self.unless & facts)


def _r(
    command: str,
    family: str,
    stage: str,
    when: Iterable[str],
    message: str,
    unless: Iterable[str] = (),
) -> Refusal:
    return Refusal(command, family, stage, frozenset(when), message, frozenset(unless))


_CLASSIC_LINK = "--engine bmc (classic clients): config {name!r}: {link}"
_CLIENT_LAYER_CALLBACKS = (
    "--engine bmc's client layer has no rebalance callbacks as steps (but for {callbacks}), "
    "no auto-commit and no regular-expression subscriptions; explore this config instead"
)
_LASSO_LAYER = (
    "--engine bmc's client layer has no rebalance callbacks as steps, no auto-commit and no "
    "regular-expression subscriptions; explore this config instead"
)
_EXPIRY_VARIANT = (
    "--variant {variant!r} is a rule on KIP-211 offset expiry or group deletion: prove it on "
    "a config that has it (--preset {example}), or find it with explore --engine bmc "
    "--mutant {variant}"
)
_OFFLOAD_VARIANT = (
    "--variant {variant!r} is a rule of KIP-1263 assignor offload: prove it on a config that "
    "has offload and {needs} (--preset {example}), or find it with explore --engine bmc "
    "--mutant {variant}"
)
_NOT_READ = (
    "--variant {variant!r} is a variant of {relation}, which prove does not read (explore "
    "--engine bmc --mutant {variant} checks it; prove --agreement --variant {variant} checks "
    "it against the model)"
)

REFUSALS: tuple[Refusal, ...] = (
    # ------------------------------------------------------------------ prove
    _r(PROVE, "any", "proof", [ARG_RULES], _RULES_UNREAD),
    *(_r(PROVE, "any", "proof options", [o], f"{o} needs --agreement") for o in AGREEMENT_ONLY),
    _r(
        PROVE,
        "any",
        "agreement",
        [ARG_REACH],
        "--reach is for proofs; --agreement checks the relation",
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_EPOCHS],
        "--variant {variant!r} is a rule on KIP-1251 assignment epochs: prove it on a config "
        "that records them (--preset MUT2_EPOCH_HISTORY), or find it with explore --mutant "
        "{variant}",
        unless=[EPOCHS],
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_OUTSIDE],
        "--variant {variant!r} is outside the symbolic core: {outside}",
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_CLASSIC],
        _NOT_READ.replace("{relation}", "the classic coordinator's relation"),
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_MIXED],
        _NOT_READ.replace("{relation}", "a mixed group's relation"),
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_CLASSIC_CLIENT],
        "--variant {variant!r} is a rule of the classic protocol's clients, a variant of the "
        "linked client layer (classic_client_bmc), which prove does not read; find it with "
        "explore --engine bmc --mutant {variant}",
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_NO_CONSUMER],
        "no symbolic variant of mutant {variant!r}; known: {known}",
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_CLIENT],
        "--variant {variant!r} is a rule of the client layer, which the proof's core does not "
        "have; find it with explore --engine bmc --mutant {variant}",
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_STATIC],
        "--variant {variant!r} is a rule on static members: prove it on a config with instance "
        "ids (--preset MUT2_STATIC), or find it with explore --engine bmc --mutant {variant}",
        unless=[STATIC],
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_EXPIRY],
        _EXPIRY_VARIANT.replace("{example}", "OFFSETS_EXPIRY"),
        unless=[EXPIRY],
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_DELETION],
        _EXPIRY_VARIANT.replace("{example}", "GROUP_DELETION"),
        unless=[DELETION],
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_UNSTATED],
        "--variant {variant!r} {harm}; find it with explore --engine bmc --mutant {variant}",
    ),
    _r(
        PROVE,
        "any",
        "proof",
        [V_OFFLOAD],
        _OFFLOAD_VARIANT.replace("{needs}", "it").replace("{example}", "MUT2_OFFLOAD"),
        unless=[OFFLOAD],
    ),
    *(
        _r(
            PROVE,
            "any",
            "proof",
            [V_OFFLOAD_DELETION],
            _OFFLOAD_VARIANT.replace("{needs}", "group deletion").replace(
                "{example}", "OFFLOAD_DELETION"
            ),
            unless=[missing],
        )
        for missing in (OFFLOAD, DELETION)
    ),
    *(
        _r(
            PROVE,
            family,
            "proof",
            [],
            f"prove covers the KIP-848 consumer protocol; this config is {family}",
        )
        for family in ("classic", "mixed")
    ),
    _r(
        PROVE,
        "consumer",
        "proof",
        [STATIC, EPOCHS],
        "prove's relation has static members or KIP-1251 assignment epochs, not both; this "
        "config has both",
    ),
    _r(
        PROVE,
        "consumer",
        "proof",
        [ARG_CLIENTS, STATIC],
        "--clients: the client layer has dynamic members only; this config has static members",
    ),
    *(
        _r(
            PROVE,
            "consumer",
            "proof",
            [ARG_CLIENTS, option],
            "--clients: the client layer has no KIP-211 expiry or group deletion; this config "
            "has them",
        )
        for option in (EXPIRY, DELETION)
    ),
    _r(
        PROVE,
        "consumer",
        "proof",
        [ARG_CLIENTS, OFFLOAD],
        "--clients: the client layer has no KIP-1263 assignor runs; this config offloads the "
        "assignor",
    ),
    _r(
        PROVE,
        "consumer",
        "proof",
        [ARG_CLIENTS, BATCHING],
        "--clients: the client layer has no KIP-1263 assignment interval; this config batches "
        "assignments",
    ),
    # ------------------------------------------------------------------ explore --engine bmc
    _r(BMC, "any", "any", [ARG_RULES], _RULES_UNREAD),
    *(_r(BMC, family, "any", [ARG_KERNEL], _KERNEL_ELSEWHERE) for family in ("classic", "mixed")),
    *(
        _r(
            BMC,
            family,
            COORDINATOR if family == "classic" else "any",
            [V_OUTSIDE],
            "--engine bmc: mutant {variant!r} is outside the symbolic core: {outside}",
        )
        for family in FAMILIES
    ),
    *(
        _r(
            BMC,
            family,
            COORDINATOR if family == "classic" else "any",
            [unknown],
            f"--engine bmc has no {relation}symbolic variant of mutant {{variant!r}}; known: "
            "{known}",
        )
        for family, unknown, relation in (
            ("consumer", V_NO_CONSUMER, ""),
            ("classic", V_NO_CLASSIC, "classic "),
            ("mixed", V_NO_MIXED, "mixed-group "),
        )
    ),
    _r(
        BMC,
        "consumer",
        "any",
        [STATIC, REGEX],
        "--engine bmc's static members subscribe by topic name only; this config has instance "
        "ids and regular-expression subscriptions (explore it instead)",
    ),
    _r(
        BMC,
        "consumer",
        "any",
        [STATIC, EPOCHS],
        "--engine bmc encodes static members or KIP-1251 assignment epochs, not both; explore "
        "this config instead",
    ),
    _r(
        BMC,
        "consumer",
        "any",
        [STATIC, V_CLIENT],
        "--engine bmc's client layer has dynamic members only (no instance ids); explore this "
        "config instead",
    ),
    _r(
        BMC,
        "consumer",
        "any",
        [EPOCHS, V_CLIENT],
        "--engine bmc's client layer has no KIP-1251 assignment epochs; explore this config "
        "instead",
    ),
    _r(
        BMC,
        "consumer",
        "any",
        [BATCHING, V_CLIENT],
        "--engine bmc's client layer has no KIP-1263 assignment interval; explore this config "
        "instead",
    ),
    _r(
        BMC,
        "consumer",
        "safety",
        [V_CLIENT, CALLBACKS],
        _CLIENT_LAYER_CALLBACKS,
        unless=[V_CALLBACK],
    ),
    _r(BMC, "consumer", "safety", [V_CLIENT, AUTO_COMMIT], _CLIENT_LAYER_CALLBACKS),
    _r(BMC, "consumer", "safety", [V_CLIENT, REGEX], _CLIENT_LAYER_CALLBACKS),
    _r(
        BMC,
        "consumer",
        "lasso",
        [ARG_ONLY_NOT_CONVERGENCE],
        "--only: --engine bmc searches Convergence alone (a lasso of the client layer)",
    ),
    *(
        _r(BMC, "consumer", "lasso", [option], _LASSO_LAYER)
        for option in (CALLBACKS, AUTO_COMMIT, REGEX)
    ),
    _r(
        BMC,
        "consumer",
        "lasso",
        [EPOCHS],
        "--engine bmc's client layer has no KIP-1251 assignment epochs; explore this config "
        "instead",
    ),
    _r(
        BMC,
        "consumer",
        "lasso",
        [STATIC],
        "--engine bmc's client layer has dynamic members only (no instance ids): no Convergence "
        "lassos here; explore this config instead",
    ),
    _r(
        BMC,
        "consumer",
        "lasso",
        [V_POLL],
        "--engine bmc's Convergence lassos have no poll timers (the layer's fairness does not "
        "name their steps); explore mutant {variant} instead",
    ),
    _r(BMC, "classic", COORDINATOR, [V_ASSIGNOR], "--engine bmc: {why}"),
    _r(
        BMC,
        "classic",
        "lasso",
        [ARG_ONLY_NOT_CONVERGENCE],
        "--only: --engine bmc searches Convergence alone here (a lasso of the classic relation)",
    ),
    # The classic client layer's link and a mixed group's relation read their own scope
    # (classic_client_bmc.supported, mixed_transition.unsupported: the message gives their
    # reason). The rows naming a config option are the options that scope never covers
    # (tests/groupcheck/symbolic/test_symbolic_capabilities.py checks them against it); the last row
    # of each is the rest of it.
    *(
        _r(BMC, "classic", "client layer", [option], _CLASSIC_LINK)
        for option in (STATIC, AUTO_COMMIT, CLASSIC_LINK)
    ),
    *(
        _r(BMC, "mixed", "any", [option], "--engine bmc: {why}; explore it instead")
        for option in (OFFLOAD, BATCHING, REGEX, MIXED_SCOPE)
    ),
)
"""Every combination ``prove`` and ``explore --engine bmc`` refuse, in the order they are
asked: a request matching two rows is refused with the first one's message."""


@dataclass(frozen=True)
class Facts:
    """What a request asks for (``facts``: option, config and variant names of the rows)
    and the parameters of the messages (the variant, the reason a relation gives …)."""

    facts: frozenset[str]
    params: Mapping[str, Any] = field(default_factory=dict)


def rows(command: str, family: str, stage: str) -> list[Refusal]:
    """The rows asked of ``command`` at ``stage`` on a ``family`` config, in order."""
    return [
        r
        for r in REFUSALS
        if r.command == command and r.family in (family, "any") and r.stage == stage
    ]


def refusal(command: str, family: str, stage: str, facts: Facts) -> str | None:
    """The message of the first row of (command, family, stage) that refuses ``facts``
    (None: the combination is supported)."""
    for row in rows(command, family, stage):
        if row.matches(facts.facts):
            return row.message.format(**facts.params)
    return None


def check(command: str, family: str, stage: str, facts: Facts) -> None:
    """Refuse (``ConfigError``: one line, exit 2) what :func:`refusal` refuses."""
    why = refusal(command, family, stage, facts)
    if why is not None:
        raise ConfigError(why)


# --------------------------------------------------------------------------- reading a request


def config_facts(config: Any) -> set[str]:
    """The config options of :data:`CONFIG_OPTIONS` that ``config`` has."""
    if config is None:
        return set()
    on = {
        STATIC: any(c.instance_id is not None for c in config.clients),
        EPOCHS: bool(config.assignment_epochs),
        REGEX: any(c.regex for c in config.clients),
        CALLBACKS: bool(config.callback_steps),
        AUTO_COMMIT: bool(config.auto_commit),
        EXPIRY: config.allows("ExpireOffsets"),
        DELETION: config.allows("DeleteGroup") or bool(config.delete_expired_groups),
        OFFLOAD: bool(config.assignor_offload),
        BATCHING: config.effective_assignment_interval_ms() > 0,
    }
    return {name for name, holds in on.items() if holds}


UNSTATED_HARM = unstated_harms()
"""The variants whose harm no obligation of ``prove`` states, and why (each catalogue
entry's ``Mutant.unstated_harm``): ``prove --variant`` refuses them rather than report them
proved (docs/invariants.md)."""


def prove_facts(args: argparse.Namespace, config: Any) -> Facts:
    """The facts of a ``prove`` request: its options, ``config`` (None: the defaults of
    ``Config``) and ``--variant``."""
    from invariants.z3.proof.bmc_clients import CLIENT_VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.classic_clients import CLIENT_VARIANTS as CLASSIC_CLIENT_VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.classic_transition import VARIANTS as CLASSIC_VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.mixed_transition import VARIANTS as MIXED_VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.transition import (  # noqa: PLC0415  z3 only when a symbolic check runs
        DELETION_VARIANTS,
        EPOCH_VARIANTS,
        EXPIRY_VARIANTS,
        HISTORY_VARIANTS,
        OFFLOAD_VARIANTS,
        STATIC_VARIANTS,
        VARIANTS,
    )

    facts = config_facts(config)
    rules_facts, rules_params = _rules_facts(
        PROVE, getattr(args, "loaded_rules", None), family=family_of_config(config)
    )
    facts |= rules_facts
    given = [o for o in AGREEMENT_ONLY if _given(args, o)]
    facts |= set(given)
    if getattr(args, "reach", None) is not None:
        facts.add(ARG_REACH)
    if getattr(args, "clients", False):
        facts.add(ARG_CLIENTS)
    v = getattr(args, "variant", None)
    params: dict[str, Any] = {"variant": v, "known": ", ".join(VARIANTS), **rules_params}
    if v is not None:
        if v in HISTORY_VARIANTS or v in EPOCH_VARIANTS:
            # A rule on the assignment epochs is read by the obligations (and the history)
            # on a config that records them: no other variant row is asked.
            facts.add(V_EPOCHS)
        else:
            member = {
                V_OUTSIDE: bool(outside(v)),
                V_CLASSIC: v in CLASSIC_VARIANTS,
                V_MIXED: v in MIXED_VARIANTS,
                V_CLASSIC_CLIENT: v in CLASSIC_CLIENT_VARIANTS,
                V_NO_CONSUMER: v not in VARIANTS,
                V_CLIENT: v in CLIENT_VARIANTS,
                V_STATIC: v in STATIC_VARIANTS,
                V_EXPIRY: v in EXPIRY_VARIANTS,
                V_DELETION: v in DELETION_VARIANTS and v not in EXPIRY_VARIANTS,
                V_UNSTATED: v in UNSTATED_HARM,
                V_OFFLOAD: v in OFFLOAD_VARIANTS and v != "install-run-after-deletion",
                V_OFFLOAD_DELETION: v == "install-run-after-deletion",
            }
            facts |= {name for name, holds in member.items() if holds}
        params.update(outside=outside(v), harm=UNSTATED_HARM.get(v, ""))
    return Facts(frozenset(facts), params)


def family_of_config(config: Any) -> str:
    """The protocol family of ``config`` (None: the defaults of ``Config``, KIP-848)."""
    return "consumer" if config is None else str(config.protocol)


def _rules_facts(command: str, loaded: Any, *, family: str) -> tuple[set[str], dict[str, Any]]:
    """The facts of a ``--rules`` file (``loaded``: its ``Rules`` and ``RulesSource``, or
    None): :data:`ARG_KERNEL` when it replaces only kernels (the reconciliation, the
    offset-commit check), which the KIP-848 relation reads, else :data:`ARG_RULES`."""
    if loaded is None:
        return set(), {}
    rules, source = loaded
    why = symbolic_refusal(rules, source)
    params = {
        "command": command,
        "rules": f"{source.path}:{source.name}",
        "rules_why": why or "",
        "family": family,
    }
    return {ARG_RULES if why is not None else ARG_KERNEL}, params


def _given(args: argparse.Namespace, option: str) -> bool:
    """Whether ``option`` (one of :data:`AGREEMENT_ONLY`) was given."""
    value = getattr(args, option[2:].replace("-", "_"), None)
    return bool(value) if isinstance(value, bool) else value is not None


def bmc_facts(args: argparse.Namespace, chosen: Any) -> Facts:
    """The facts of an ``explore --engine bmc`` request: ``--rules``, ``--only``, the
    config and the mutant (its variant of the family's relation)."""
    from invariants.z3.proof.bmc_clients import CALLBACK_VARIANTS, CLIENT_VARIANTS, POLL_VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.bmc_lasso import CONVERGENCE  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.classic_client_bmc import supported  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.classic_transition import VARIANTS as CLASSIC_VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.classic_transition import assignor_variant_refusal  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.mixed_transition import VARIANTS as MIXED_VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.mixed_transition import unsupported  # noqa: PLC0415  z3 only when a symbolic check runs
    from invariants.z3.proof.transition import VARIANTS  # noqa: PLC0415  z3 only when a symbolic check runs

    config = chosen.config
    v = chosen.mutant.name if chosen.mutant is not None else None
    facts = config_facts(config)
    loaded = (config.rules, chosen.rules) if chosen.rules is not None else None
    rules_facts, rules_params = _rules_facts(BMC, loaded, family=config.protocol)
    facts |= rules_facts
    if args.only and set(args.only) != {CONVERGENCE}:
        facts.add(ARG_ONLY_NOT_CONVERGENCE)
    family = config.protocol
    known = {"consumer": VARIANTS, "classic": CLASSIC_VARIANTS, "mixed": MIXED_VARIANTS}
    params: dict[str, Any] = {
        "variant": v,
        "known": ", ".join(known.get(family, ())),
        "callbacks": ", ".join(sorted(CALLBACK_VARIANTS)),
        "name": config.name,
        "why": "",
        "link": "",
        **rules_params,
    }
    if v is not None:
        member = {
            V_OUTSIDE: bool(outside(v)),
            V_NO_CONSUMER: v not in VARIANTS,
            V_NO_CLASSIC: v not in CLASSIC_VARIANTS,
            V_NO_MIXED: v not in MIXED_VARIANTS,
            V_CLIENT: v in CLIENT_VARIANTS,
            V_CALLBACK: v in CALLBACK_VARIANTS,
            V_POLL: v in POLL_VARIANTS,
        }
        facts |= {name for name, holds in member.items() if holds}
        params["outside"] = outside(v)
    # The reasons the relations give for a config they do not cover (the relation's own
    # reading of its scope: classic_transition, classic_client_bmc, mixed_transition).
    if family == "classic":
        why = assignor_variant_refusal(config, v)
        if why is not None:
            facts.add(V_ASSIGNOR)
            params["why"] = why
        link = supported(config)
        if link is not None:
            facts.add(CLASSIC_LINK)
            params["link"] = link
    if family == "mixed":
        why = unsupported(config)
        if why is not None:
            facts.add(MIXED_SCOPE)
            params["why"] = why
    return Facts(frozenset(facts), params)


# --------------------------------------------------------------------------- docs


def render_markdown() -> str:
    """docs/cli.md's capability section (between its markers): a matrix of the config
    options each command's search supports on each family (``yes``, or ``no`` with the
    number of the row that refuses it), then every refusal in the order it is asked, with
    its message."""
    # prove --agreement's own scope is groupcheck/symbolic/agreement.py's: only its --reach
    # row is here.
    cells = [
        (command, family, search)
        for (command, family), kinds in SEARCHES.items()
        for search in kinds
        if search != "agreement"
    ]
    numbers = {row: i for i, row in enumerate(REFUSALS, 1)}
    head = [f"{'prove' if c == PROVE else 'bmc'} {s} ({f})" for c, f, s in cells]
    lines = ["| option | " + " | ".join(head) + " |", "|---|" + "---|" * len(cells)]
    for option in ("(none)", *CONFIG_OPTIONS, ARG_CLIENTS):
        asked = frozenset() if option == "(none)" else frozenset({option})
        entries = []
        for command, family, search in cells:
            if option == ARG_CLIENTS and command != PROVE:
                entries.append("—")
                continue
            row = first_refusal(command, family, search, asked)
            entries.append("yes" if row is None else f"no ({numbers[row]})")
        lines.append(f"| {option} | " + " | ".join(entries) + " |")
    lines += [
        "",
        "| # | command | family | stage | refused when | unless | message |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, row in enumerate(REFUSALS, 1):
        when = " + ".join(sorted(row.when)) or "always"
        unless = " or ".join(sorted(row.unless))
        message = row.message.replace("|", "\\|")
        lines.append(
            f"| {i} | `{row.command}` | {row.family} | {row.stage} | {when} | {unless} | "
            f"{message} |"
        )
    return "\n".join(lines) + "\n"


def first_refusal(command: str, family: str, search: str, facts: frozenset[str]) -> Refusal | None:
    """The first row a request of exactly ``facts`` meets on its way to ``command``'s
    ``search`` on a ``family`` config, through every stage of it (None: supported)."""
    for stage in SEARCHES[(command, family)][search]:
        for row in rows(command, family, stage):
            if row.matches(facts):
                return row
    return None


BEGIN, END = "<!-- capabilities-table:begin -->", "<!-- capabilities-table:end -->"
"""The markers of the rendered table in docs/cli.md."""


def main(argv: list[str] | None = None) -> int:
    """``python -m groupcheck.symbolic.capabilities [--into docs/cli.md]``: print the
    rendered table, or write it between the markers of a doc."""
    return table_command(
        argv,
        prog="python -m groupcheck.symbolic.capabilities",
        description="print the capability table of prove and explore --engine bmc (markdown)",
        begin=BEGIN,
        end=END,
        render=render_markdown,
    )


if __name__ == "__main__":
    raise SystemExit(main())

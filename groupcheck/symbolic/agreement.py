"""``groupcheck prove --agreement``: the symbolic relation against the Python model on the
steps of seeded walks (``invariants.z3.proof.crosscheck``), for one config or every preset
in the relation's scope (docs/invariants.md, "The relation against the model").

A classic config is checked against the classic coordinator's relation
(``invariants.z3.proof.classic_agreement.walk_check``: the same walks, side steps, search
and verdict rules, the same output), a mixed one (``protocol = "mixed"``) against a mixed
group's (``invariants.z3.proof.mixed_agreement.walk_check``, the same again), a KIP-848
one against the consumer protocol's.

With ``--variant M`` the walks run the catalogue mutant M's rules (on M's scenario, or on
the ``--preset``/``--config`` given) and each step is checked against the relation's
variant of M (``Options.variant``, ``ClassicOptions.variant`` for a classic mutant,
``MixedOptions.variant`` for a mixed one); ``--all-variants`` does that for every variant
of the three relations. The verdict is ``ok`` only if a step the mutated rules decided was
checked that the reference relation refuses, or to which it allows another successor
(``cross_check``'s ``reference``). The client layer's variants
(``bmc_clients.CLIENT_VARIANTS``) are not in the relation (BMC replays them through the
Python clients): refused, or skipped by ``--all-variants``.

Exit 0 when every step checked agreed and every family each config can take was checked;
1 on a disagreement (its pre-state, action and family are printed); 3 when none disagreed
but a family was not reached or Z3 answered unknown; 2 on bad input (a config outside the
relation's scope included).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from groupcheck.families import AGREEMENT, AgreementFacet

DEFAULT_WALKS = 3
DEFAULT_LENGTH = 30
DEFAULT_SEED = 0
DEFAULT_BFS = 50_000
"""With one KIP-848 config (``--preset``, ``--config`` or ``--variant``) and no ``--bfs``:
every step out of the first 50,000 states in BFS order is checked, each distinct
coordinator step once (``crosscheck.coordinator_side``) — every step of every reachable
state of TINY (45,525 states, 831 distinct coordinator steps). ``--all-presets`` and
``--all-variants`` keep 0 (the walks), and a classic or mixed config too."""
DEFAULT_SEEK = 300_000
"""States a search for a family the walks missed may visit (``cross_check``'s
``seek_states``)."""


def cmd_agreement(args: argparse.Namespace) -> int:
    from groupcheck import exitcodes
    from groupcheck.progress import progress_for
    from model.status import ConfigError

    others = [
        flag
        for flag, given in (
            ("--clients", args.clients),
            ("--natural-lemmas", args.natural_lemmas),
            ("--only", bool(args.only)),
        )
        if given
    ]
    if others:
        raise ConfigError(f"--agreement checks the relation; {others[0]} is for proofs")
    walks = args.walks if args.walks is not None else DEFAULT_WALKS
    length = args.length if args.length is not None else DEFAULT_LENGTH
    seed = args.seed if args.seed is not None else DEFAULT_SEED
    many = args.all_presets or args.all_variants
    bfs = args.bfs if args.bfs is not None else (0 if many else DEFAULT_BFS)
    seek = args.seek if args.seek is not None else DEFAULT_SEEK
    configs, skipped = _chosen(args)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    rows = []
    for config, variant, reference in configs:
        if progress is not None:
            progress(f"agreement: {config.name} ({walks} walks x {length} steps, seed {seed})")
        facet = AGREEMENT.of_config(config)
        budget: dict[str, Any] = {
            "walks": walks,
            "length": length,
            "seed": seed,
            # The default BFS is the consumer relation's (its steps are checked once each).
            "bfs_states": bfs if args.bfs is not None or facet.bfs_by_default else 0,
            "seek_states": seek,
            "timeout_ms": int(args.timeout * 1000),
            "progress": progress,
            "reference": reference,
        }
        outcome = facet.check(config, variant, budget)
        rows.append(_row(config.name, outcome, variant))
    results = [r["result"] for r in rows]
    result = "ok"
    if "violation" in results:
        result = "violation"
    elif "inconclusive" in results:
        result = "inconclusive"
    steps = sum(r["steps"] for r in rows)
    doc = {
        "result": result,
        "checked": f"{steps} steps of {len(rows)} config(s) checked against the relation "
        f"({walks} walks of up to {length} steps each)",
        "walks": walks,
        "length": length,
        "seed": seed,
        "bfs_states": bfs,
        "seek_states": seek,
        "timeout": args.timeout,
        "seconds": round(time.monotonic() - start, 3),
        "configs": rows,
        "skipped": skipped,
    }
    if args.json:
        from groupcheck.jsonout import emit

        emit("prove", doc)
    else:
        _print(doc)
    return exitcodes.exit_code(result)


Chosen = tuple[Any, "str | None", Any]
"""A config to check, the relation's variant to check it against (None: the reference)
and, with a variant, the config with the reference rules (``cross_check``'s
``reference``)."""


def outside(config: Any) -> str | None:
    """Why ``--agreement`` cannot check ``config`` (None: it can): a classic config is in
    the classic relation's scope (every classic action has a family:
    ``classic_transition.family_of``); a mixed one in a mixed group's as
    ``mixed_transition.unsupported`` says; any other in the consumer relation's scope as
    ``symbolic.scope.outside_scope`` (with the KIP-1251 assignment epochs) says
    (``AgreementFacet.outside`` of its family)."""
    reason: str | None = AGREEMENT.of_config(config).outside(config)
    return reason


def _consumer_check(config: Any, variant: str | None, budget: dict[str, Any]) -> Any:
    from invariants.z3.proof.crosscheck import cross_check
    from invariants.z3.proof.transition import Options

    return cross_check(config, options=Options.of(config, variant), **budget)


def _classic_check(config: Any, variant: str | None, budget: dict[str, Any]) -> Any:
    from invariants.z3.proof.classic_agreement import walk_check
    from invariants.z3.proof.classic_transition import ClassicOptions

    return walk_check(config, options=ClassicOptions.of(config, variant), **budget)


def _mixed_check(config: Any, variant: str | None, budget: dict[str, Any]) -> Any:
    from invariants.z3.proof.mixed_agreement import walk_check

    return walk_check(config, variant=variant, **budget)


def _consumer_outside(config: Any) -> str | None:
    from groupcheck.symbolic.scope import outside_scope

    return outside_scope(config, epochs=True)


def _classic_outside(config: Any) -> str | None:
    return None


def _mixed_outside(config: Any) -> str | None:
    from invariants.z3.proof.mixed_transition import unsupported

    reason: str | None = unsupported(config)
    return reason


AGREEMENT.register(
    "consumer",
    AgreementFacet(check=_consumer_check, outside=_consumer_outside, bfs_by_default=True),
)
AGREEMENT.register(
    "classic",
    AgreementFacet(check=_classic_check, outside=_classic_outside, bfs_by_default=False),
)
AGREEMENT.register(
    "mixed", AgreementFacet(check=_mixed_check, outside=_mixed_outside, bfs_by_default=False)
)


def _chosen(args: argparse.Namespace) -> tuple[list[Chosen], list[dict[str, str]]]:
    """The configs to check and the presets or variants skipped, with the reason."""
    from groupcheck.symbolic.scope import chosen_config
    from model.presets import PRESETS
    from model.status import ConfigError

    configs: list[Chosen] = []
    skipped: list[dict[str, str]] = []
    if args.all_variants:
        from groupcheck.mutants import MUTANTS
        from invariants.z3.proof.classic_transition import VARIANTS as CLASSIC_VARIANTS
        from invariants.z3.proof.mixed_transition import VARIANTS as MIXED_VARIANTS
        from invariants.z3.proof.transition import VARIANTS

        if args.variant is not None:
            raise ConfigError("--all-variants checks every variant; --variant names one")
        for name in (*VARIANTS, *CLASSIC_VARIANTS, *MIXED_VARIANTS):
            config = MUTANTS[name].mutated_config()
            reason = _client_rule(name) or outside(config)
            if reason is None:
                configs.append((config, name, MUTANTS[name].config))
            else:
                skipped.append({"variant": name, "reason": reason})
        return configs, skipped
    if args.all_presets:
        if args.variant is not None:
            raise ConfigError(
                "--all-presets checks the reference relation; --variant runs on its "
                "mutant's scenario (or on --preset/--config)"
            )
        for name, config in PRESETS.items():
            reason = outside(config)
            if reason is None:
                configs.append((config, None, None))
            else:
                skipped.append({"preset": name, "reason": reason})
        return configs, skipped
    config = reference = chosen_config(args)
    if args.variant is not None:
        config, reference = _with_variant(config, args.variant)
    if config is None:
        raise ConfigError(
            "--agreement needs --preset NAME, --config FILE, --variant MUTANT, "
            "--all-presets or --all-variants"
        )
    reason = outside(config)
    if reason is not None:
        raise ConfigError(reason)
    configs.append((config, args.variant, reference if args.variant else None))
    return configs, skipped


def _with_variant(config: Any, variant: str) -> tuple[Any, Any]:
    """``config`` (None: the mutant's scenario) with the rules of the catalogue mutant
    ``variant`` installed, and as it was; the variant must be one the relation has."""
    from dataclasses import replace

    from groupcheck.mutants import MUTANTS, outside
    from invariants.z3.proof.classic_clients import CLIENT_VARIANTS as CLASSIC_CLIENT_VARIANTS
    from invariants.z3.proof.classic_transition import VARIANTS as CLASSIC_VARIANTS
    from invariants.z3.proof.mixed_transition import VARIANTS as MIXED_VARIANTS
    from invariants.z3.proof.transition import VARIANTS
    from model.status import ConfigError

    if outside(variant):
        raise ConfigError(f"--variant {variant!r} is outside the symbolic core: {outside(variant)}")
    if variant in CLASSIC_CLIENT_VARIANTS:
        from groupcheck.symbolic.scope import classic_client_refusal

        raise ConfigError(classic_client_refusal(variant, "prove --agreement"))
    if variant not in (*VARIANTS, *CLASSIC_VARIANTS, *MIXED_VARIANTS):
        raise ConfigError(
            f"no symbolic variant of mutant {variant!r}; known: "
            f"{', '.join((*VARIANTS, *CLASSIC_VARIANTS, *MIXED_VARIANTS))}"
        )
    protocol = (
        "classic"
        if variant in CLASSIC_VARIANTS
        else "mixed"
        if variant in MIXED_VARIANTS
        else "consumer"
    )
    if config is not None and config.protocol != protocol:
        relation = {
            "classic": "the classic coordinator's",
            "mixed": "a mixed group's",
            "consumer": "the KIP-848 consumer protocol's",
        }[protocol]
        raise ConfigError(
            f"--variant {variant!r} is a variant of {relation} relation; this config is "
            f"{config.protocol}"
        )
    client = _client_rule(variant)
    if client is not None:
        raise ConfigError(f"--variant {variant!r}: {client}")
    mutant = MUTANTS[variant]
    if config is not None:
        from invariants.z3.proof.classic_transition import assignor_variant_refusal

        why = assignor_variant_refusal(config, variant)
        if why is not None:
            raise ConfigError(f"--variant {variant!r}: {why}")
    if config is None:
        return mutant.mutated_config(), mutant.config
    return replace(config, rules=mutant.rules, name=f"{config.name}+{variant}"), config


def _client_rule(variant: str) -> str | None:
    """Why the relation has no variant of a client-layer mutant to check (None: it has)."""
    from invariants.z3.proof.bmc_clients import CLIENT_VARIANTS

    if variant not in CLIENT_VARIANTS:
        return None
    return (
        "a rule of the clients, which the relation does not have (explore --engine bmc "
        f"--mutant {variant} checks its client layer by replaying it through the Python clients)"
    )


def _assignor_rule(variant: str) -> str | None:
    """Why the walks cannot tell a classic assignor variant apart (None: no such variant)."""
    from groupcheck.mutants import MUTANTS
    from invariants.z3.proof.classic_assignor import VARIANTS as ASSIGNOR_VARIANTS

    if variant not in ASSIGNOR_VARIANTS or variant not in MUTANTS:
        return None
    return (
        f"its rule (Rules.{MUTANTS[variant].field}, the leader's assignor) runs in the "
        "leader's client step, which the relation sees as Unchanged; the SyncGroup delivery "
        "carrying the leader's assignment tells it apart "
        "(tests/invariants/z3/proof/test_classic_relation.py, "
        "test_the_leader_assignment_is_one_its_assignor_allows)"
    )


def _row(name: str, outcome: Any, variant: str | None = None) -> dict[str, Any]:
    from reports.casestudy import describe_action, group_view, render_group

    reasons = []
    if outcome.missing:
        reasons.append("families the config can take, not reached: " + ", ".join(outcome.missing))
    if outcome.unreachable:
        reasons.append(
            "families the config's switches allow that no reachable state enables (a search "
            "expanded every state): " + ", ".join(outcome.unreachable)
        )
    unknown = [f for f in outcome.families if f.unknown]
    for f in unknown:
        why = "; ".join(f.reasons)
        reasons.append(f"Z3 answered unknown on {f.unknown} {f.family} steps: {why}")
    if variant is not None and not outcome.distinguished:
        reasons.append(
            f"no step checked was one decided by {variant}'s rules that the reference relation "
            f"refuses ({outcome.mutated} decided by them): "
            + (_assignor_rule(variant) or "the variant was not told apart")
        )
    row: dict[str, Any] = {
        "config": name,
        "variant": variant,
        "result": outcome.verdict,
        "reasons": reasons,
        "steps": outcome.steps,
        "side_steps": outcome.side_steps,
        "bfs_steps": outcome.bfs_steps,
        "bfs_exhausted": getattr(outcome, "bfs_exhausted", False),
        "repeated_steps": getattr(outcome, "repeated", 0),
        "seek_steps": outcome.seek_steps,
        "possible": list(outcome.possible),
        "missing": list(outcome.missing),
        "unreachable": list(outcome.unreachable),
        "mutated_steps": outcome.mutated,
        "distinguished_steps": outcome.distinguished,
        "families": [
            {
                "family": f.family,
                "steps": f.steps,
                "allowed": f.allowed,
                "deterministic": f.deterministic,
                "unique": f.unique,
                "unknown": f.unknown,
                "reasons": f.reasons,
            }
            for f in outcome.families
            if f.steps or f.family in outcome.possible
        ],
        "disagreement": None,
    }
    for d in outcome.disagreements():
        row["disagreement"] = {
            "family": d.family,
            "what": d.what(),
            "action": describe_action(d.action),
            "origin": d.origin,
            "walk": d.walk,
            "index": d.index,
            "allowed": d.check.allowed if d.check else None,
            "unique": d.check.unique if d.check else None,
            "pre": group_view(d.pre),
            "post": group_view(d.post),
            "pre_text": render_group(d.pre),
            "post_text": render_group(d.post),
        }
    return row


def _print(doc: dict[str, Any]) -> None:
    from reports.escape import visible

    head = {"ok": "ok", "violation": "DISAGREEMENT", "inconclusive": "INCONCLUSIVE"}
    rows = doc["configs"]
    print(
        f"{head[doc['result']]}: the relation against the model on {len(rows)} "
        f"config{'s' if len(rows) != 1 else ''} ({doc['walks']} walks x {doc['length']} "
        f"steps, seed {doc['seed']}"
        + (f", the first {doc['bfs_states']} BFS states" if doc["bfs_states"] else "")
        + f"; {doc['seconds']} s)"
    )
    for r in rows:
        print(
            f"  {r['result']:12} {r['config']}: {r['steps']} steps ({r['side_steps']} side "
            f"steps{', ' + str(r['bfs_steps']) + ' BFS steps' if r['bfs_steps'] else ''}"
            f"{', ' + str(r['seek_steps']) + ' found by search' if r['seek_steps'] else ''}"
            + ("; every step of every reachable state" if r.get("bfs_exhausted") else "")
            + (
                f"; {r['repeated_steps']} repeating a checked coordinator step"
                if r.get("repeated_steps")
                else ""
            )
            + (
                f"; {r['mutated_steps']} decided by the mutated rules, "
                f"{r['distinguished_steps']} of them refused by the reference relation"
                if r["variant"]
                else ""
            )
            + ")"
        )
        for f in r["families"]:
            unique = (
                f"; {f['unique']}/{f['deterministic']} the only successor"
                if f["deterministic"]
                else ""
            )
            unknown = f"; {f['unknown']} unknown" if f["unknown"] else ""
            print(
                f"      {f['family']:30} {f['steps']:5} steps, {f['allowed']} allowed"
                f"{unique}{unknown}"
            )
        for reason in r["reasons"]:
            print(f"      - {visible(reason)}")
    for s in doc["skipped"]:
        what = s.get("preset") or f"variant {s['variant']}"
        print(f"  skipped      {what}: {visible(s['reason'])}")
    for r in rows:
        d = r["disagreement"]
        if d is None:
            continue
        where = f"walk {d['walk'] + 1}, step {d['index'] + 1}" if d["walk"] is not None else "BFS"
        side = " (a side step)" if d["origin"] == "side" else ""
        print(f"\nDISAGREEMENT in {r['config']} ({where}{side}): {visible(d['what'])}")
        print(f"  family: {d['family']} (allowed {d['allowed']}, unique {d['unique']})")
        print(f"  action: {visible(d['action'])}")
        print("  pre-state:")
        for line in d["pre_text"].splitlines():
            print(f"    {visible(line)}")
        print("  post-state (the model's):")
        for line in d["post_text"].splitlines():
            print(f"    {visible(line)}")

"""``groupcheck prove``: inductive proofs of the KIP-848 coordinator core for groups of any
size (``invariants.z3.proof``; docs/invariants.md, "Proofs for groups of any size").

Every obligation (initiation, consecution per invariant conjunct and action family, step
properties per family, and the convergence ranking's: ``invariants.z3.proof.ranking``) is
one Z3 query with a timeout: proved (unsat), failed (a
counterexample to induction, decoded and re-checked with the Python reading) or unknown
(Z3's reason). Exit 0 only when every obligation is proved, 1 when one failed, 3 when none
failed but one is unknown.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from groupcheck.argtypes import non_negative, positive, positive_float
from groupcheck.bmc_lifted import bmc_variant, chosen_goals, mutant_bound


def register(sub: Any) -> None:
    """Add the ``prove`` command."""
    p = sub.add_parser(
        "prove",
        help="prove the coordinator core's safety properties inductive with Z3 (any group size)",
        description=(
            "Prove with Z3 that NoDoubleMemberAssignment, ValidTargetAssignment.Unique and "
            ".OnlySubscribed, EpochOrder.*, NoServerError, GroupStatusConsistent.* (with "
            "strengthening lemmas) are inductive for the "
            "KIP-848 coordinator core, and that MemberEpochMonotone, HandOutOnlyReleased and "
            "OffsetCommitAtValidEpoch hold on every step (with KIP-1263 assignor offload also "
            "AssignorRunsInFlight.AtMostOne, ValidTargetAssignment.OnlyMembers and "
            "TargetEpochAdvances, over the run in flight), for groups of any size, any valid "
            "target assignment and any request the model's clients can send; and that a "
            "convergence ranking decreases after the last perturbation "
            "(docs/invariants.md). Exit 0 when "
            "every obligation is proved; 1 when one fails (its counterexample to induction "
            "is printed); 3 when none fails but Z3 answered unknown for one (the reason is "
            "printed); 2 on bad input."
        ),
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--preset",
        help="read the protocol switches (compute_target_in_heartbeat, "
        "reconcile_while_assigning, rejoin_with_epoch_zero, realign_empty_group) from this "
        "preset (default: the defaults of Config)",
    )
    group.add_argument("--config", metavar="FILE", help="... or from this config file")
    p.add_argument(
        "--variant",
        metavar="MUTANT",
        help="prove against the symbolic variant of this catalogue mutant (expected to fail: "
        "the counterexample to induction shows the broken rule); with --agreement: walk the "
        "mutant's rules (on its scenario, or the --preset/--config given) and check each step "
        "against this variant (a classic mutant's against the classic coordinator's relation, "
        "a mixed-group mutant's against a mixed group's)",
    )
    p.add_argument(
        "--clients",
        action="store_true",
        help="also the client layer: is OwnedPartitionsAreHeld inductive once clients and their "
        "heartbeats are added (a diagnosis model: reliable network, no restarts); the "
        "config's report_pending_additions decides whether heartbeats report the target "
        "still to apply (docs/findings.md, F1)",
    )
    p.add_argument(
        "--natural-lemmas",
        action="store_true",
        help="client layer: leave out the lemma that a heartbeat reports every partition its "
        "client consumes or is about to apply, so the counterexample lands on the "
        "coordinator's heartbeat (F1's hand-out) instead of the client's send",
    )
    p.add_argument(
        "--only",
        action="append",
        metavar="GOAL",
        help="only the obligations of this property or lemma (repeatable)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=30.0,
        metavar="SECONDS",
        help="per-query Z3 timeout (default 30); a query that needs longer is unknown",
    )
    group.add_argument(
        "--all-presets",
        action="store_true",
        help="--agreement: every preset in the relations' scope, the classic and the mixed "
        "ones included (the others are listed as skipped, with the reason)",
    )
    group.add_argument(
        "--all-variants",
        action="store_true",
        help="--agreement: every mutant the consumer, the classic or the mixed-group "
        "relation has a variant of, on its scenario, against that variant",
    )
    agree = p.add_argument_group(
        "agreement",
        "--agreement cross-checks the relation against the Python model instead of proving: "
        "every step of seeded walks of the config must be allowed by its action family, and "
        "be its only successor where the family is deterministic given the step (a classic "
        "config's against the classic coordinator's relation, "
        "invariants/z3/proof/classic_transition.py; a mixed config's against a mixed "
        "group's, invariants/z3/proof/mixed_transition.py, where a step that leaves the "
        "group's projection as it was is Unchanged). Exit 0 "
        "when every step agreed and every family the config can take was checked; 1 on a "
        "disagreement (the step is printed); 3 when a family was not reached or Z3 "
        "answered unknown; 2 on bad input.",
    )
    agree.add_argument(
        "--agreement",
        action="store_true",
        help="cross-check the relation against the model (needs --preset, --config, "
        "--all-presets, --all-variants or --variant: the mutant's rules against the "
        "relation's variant of them, on its scenario or the config given)",
    )
    agree.add_argument("--walks", type=positive, metavar="N", help="walks per config (default 3)")
    agree.add_argument("--length", type=positive, metavar="L", help="steps per walk (default 30)")
    agree.add_argument("--seed", type=non_negative, metavar="S", help="walk seed (default 0)")
    agree.add_argument(
        "--bfs",
        type=non_negative,
        metavar="K",
        help="also every step out of the first K states in BFS order, each distinct "
        "coordinator step once (default 50000 for one KIP-848 config — every reachable "
        "state of TINY —, 0 with --all-presets, --all-variants or a classic or mixed config)",
    )
    agree.add_argument(
        "--seek",
        type=non_negative,
        metavar="K",
        help="for each family the config can take that the walks missed, search up to K "
        "states of the model alone for a state where it is enabled and check that step "
        "(default 300000; 0: no search)",
    )
    p.add_argument(
        "--reach",
        type=non_negative,
        metavar="K",
        help="for each goal with a counterexample to induction, search with BMC for a path "
        f"of at most K steps that violates it (default {DEFAULT_REACH}; 0: no search), on "
        "the --preset/--config given or the variant's mutant scenario: reachable at depth "
        "k (with the path), or not reachable within bound K",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (docs/json/prove.schema.json; docs/json.md)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(handler=cmd_prove)


DEFAULT_REACH = 4
"""``prove --reach``'s default bound: the longest shortest path of the core's safety
variants (``bmc.VARIANT_DEPTHS``) is 4 steps."""


def _config(args: argparse.Namespace) -> Any:
    if args.config is not None:
        from groupcheck.configfile import load_config_file

        return load_config_file(args.config)
    if args.preset is not None:
        from model.presets import preset

        return preset(args.preset)
    return None


def classic_client_refusal(variant: str, command: str) -> str:
    """Why ``command`` does not read ``variant``, a rule of the classic protocol's clients
    (``classic_clients.CLIENT_VARIANTS``), and where it is found."""
    return (
        f"--variant {variant!r} is a rule of the classic protocol's clients, a variant of "
        f"the linked client layer (classic_client_bmc), which {command} does not read; "
        f"find it with explore --engine bmc --mutant {variant}"
    )


def _options(args: argparse.Namespace) -> Any:
    from invariants.z3.proof.bmc_clients import CLIENT_VARIANTS
    from invariants.z3.proof.classic_clients import CLIENT_VARIANTS as CLASSIC_CLIENT_VARIANTS
    from invariants.z3.proof.classic_transition import VARIANTS as CLASSIC_VARIANTS
    from invariants.z3.proof.mixed_transition import VARIANTS as MIXED_VARIANTS
    from invariants.z3.proof.transition import (
        DELETION_VARIANTS,
        EPOCH_VARIANTS,
        EXPIRY_VARIANTS,
        HISTORY_VARIANTS,
        OFFLOAD_VARIANTS,
        OUTSIDE,
        STATIC_VARIANTS,
        VARIANTS,
        Options,
    )
    from model.status import ConfigError

    config = _config(args)
    if args.variant in HISTORY_VARIANTS or args.variant in EPOCH_VARIANTS:
        # Rules on the KIP-1251 assignment epochs: the obligations read them (and the
        # history) on a config that records them.
        if config is None or not config.assignment_epochs:
            raise ConfigError(
                f"--variant {args.variant!r} is a rule on KIP-1251 assignment epochs: prove it "
                f"on a config that records them (--preset MUT2_EPOCH_HISTORY), or find it with "
                f"explore --mutant {args.variant}"
            )
        refused = outside_scope(config)
        if refused is not None:
            raise ConfigError(refused)
        return Options.of(config, args.variant)
    if args.variant is not None and args.variant in OUTSIDE:
        raise ConfigError(
            f"--variant {args.variant!r} is outside the symbolic core: {OUTSIDE[args.variant]}"
        )
    if args.variant is not None and args.variant in CLASSIC_VARIANTS:
        raise ConfigError(
            f"--variant {args.variant!r} is a variant of the classic coordinator's relation, "
            f"which prove does not read (explore --engine bmc --mutant {args.variant} checks it; "
            f"prove --agreement --variant {args.variant} checks it against the model)"
        )
    if args.variant is not None and args.variant in MIXED_VARIANTS:
        raise ConfigError(
            f"--variant {args.variant!r} is a variant of a mixed group's relation, which "
            f"prove does not read (explore --engine bmc --mutant {args.variant} checks it; "
            f"prove --agreement --variant {args.variant} checks it against the model)"
        )
    if args.variant is not None and args.variant in CLASSIC_CLIENT_VARIANTS:
        raise ConfigError(classic_client_refusal(args.variant, "prove"))
    if args.variant is not None and args.variant not in VARIANTS:
        raise ConfigError(
            f"no symbolic variant of mutant {args.variant!r}; known: {', '.join(VARIANTS)}"
        )
    if args.variant in CLIENT_VARIANTS:
        raise ConfigError(
            f"--variant {args.variant!r} is a rule of the client layer, which the proof's "
            f"core does not have; find it with explore --engine bmc --mutant {args.variant}"
        )
    static = config is not None and any(c.instance_id is not None for c in config.clients)
    if args.variant in STATIC_VARIANTS and not static:
        raise ConfigError(
            f"--variant {args.variant!r} is a rule on static members: prove it on a config "
            f"with instance ids (--preset MUT2_STATIC), or find it with explore --engine bmc "
            f"--mutant {args.variant}"
        )
    if args.variant in EXPIRY_VARIANTS | DELETION_VARIANTS and not (
        config is not None and _has_expiry_or_deletion(config, args.variant)
    ):
        raise ConfigError(
            f"--variant {args.variant!r} is a rule on KIP-211 offset expiry or group "
            f"deletion: prove it on a config that has it (--preset "
            f"{'OFFSETS_EXPIRY' if args.variant in EXPIRY_VARIANTS else 'GROUP_DELETION'}), "
            f"or find it with explore --engine bmc --mutant {args.variant}"
        )
    if args.variant in UNSTATED_HARM:
        raise ConfigError(
            f"--variant {args.variant!r} {UNSTATED_HARM[args.variant]}; find it with explore "
            f"--engine bmc --mutant {args.variant}"
        )
    if args.variant in OFFLOAD_VARIANTS and not (
        config is not None
        and Options.of(config).assignor_offload
        and (args.variant != "install-run-after-deletion" or Options.of(config).group_deletion)
    ):
        needs = "group deletion" if args.variant == "install-run-after-deletion" else "it"
        example = (
            "OFFLOAD_DELETION" if args.variant == "install-run-after-deletion" else "MUT2_OFFLOAD"
        )
        raise ConfigError(
            f"--variant {args.variant!r} is a rule of KIP-1263 assignor offload: prove it on a "
            f"config that has offload and {needs} (--preset {example}), or find it with "
            f"explore --engine bmc --mutant {args.variant}"
        )
    if config is None:
        return Options(variant=args.variant)
    refused = outside_scope(config)
    if refused is not None:
        raise ConfigError(refused)
    return Options.of(config, args.variant)


UNSTATED_HARM = {
    "install-before-static-replacement": "breaks only ValidTargetAssignment.Covers (the "
    "replaced static member's entry is dropped, so the current target covers nothing), "
    "which prove does not state (its relation takes any assignor, covering or not): "
    "under this variant every obligation of MUT2_OFFLOAD_STATIC is still proved",
    "reject-epoch-zero-rejoin": "breaks only Convergence, once a lost heartbeat response "
    "leaves a client rejoining at epoch 0 while its member is at a newer epoch; the "
    "ranking's fairness is on honest heartbeats (each member at the epoch the coordinator "
    "gave it), so it never reads that rejoin: under this variant every obligation is still "
    "proved",
}
"""The variants whose harm no obligation of ``prove`` states, and why: ``prove --variant``
refuses them rather than report them proved (docs/invariants.md)."""


def _has_expiry_or_deletion(config: Any, variant: str) -> bool:
    """Whether ``config``'s relation has the family ``variant`` mutates."""
    from invariants.z3.proof.transition import EXPIRY_VARIANTS, Options

    options = Options.of(config)
    return options.offset_expiry if variant in EXPIRY_VARIANTS else options.group_deletion


def outside_scope(config: Any, *, epochs: bool = False) -> str | None:
    """Why the symbolic relation does not cover ``config`` (None: it does): the reason
    ``prove`` and ``prove --agreement`` refuse it with (``epochs``: kept for callers; the
    KIP-1251 assignment epochs and their history are in the relation)."""
    if config.protocol != "consumer":
        return f"prove covers the KIP-848 consumer protocol; this config is {config.protocol}"
    has_static = any(c.instance_id is not None for c in config.clients)
    if config.assignment_epochs and has_static:
        return (
            "prove's relation has static members or KIP-1251 assignment epochs, not both; "
            "this config has both"
        )
    # KIP-211 offset expiry, group deletion and KIP-1263 assignor offload and batching are
    # in the relation, also together: Options.offset_expiry, group_deletion,
    # assignor_offload, batching.
    return None


def cmd_prove(args: argparse.Namespace) -> int:
    from groupcheck import exitcodes
    from model.status import ConfigError

    if args.agreement:
        from groupcheck.agreement import cmd_agreement

        if args.reach is not None:
            raise ConfigError("--reach is for proofs; --agreement checks the relation")
        return cmd_agreement(args)
    doc = prove_document(args)
    if args.json:
        from groupcheck.jsonout import emit

        emit("prove", doc)
    else:
        _print(doc)
    return exitcodes.exit_code(doc["result"])


def prove_document(args: argparse.Namespace) -> dict[str, Any]:
    """Run the proof ``args`` asks for (``prove``'s options, without ``--agreement``) and
    return its report: what ``prove --json`` prints, without ``schema`` and ``version``
    (docs/json/prove.schema.json). Used by ``cmd_prove`` and ``groupcheck.api.prove``."""
    from groupcheck.progress import progress_for
    from invariants.z3.proof import ranking, vacuity
    from invariants.z3.proof.clients import diagnose, layer_conjuncts
    from invariants.z3.proof.induction import Prover, invariant_for, steps_for, summary
    from model.status import ConfigError

    given = [
        f"--{n}" for n in ("walks", "length", "seed", "bfs", "seek") if getattr(args, n) is not None
    ]
    if args.all_presets:
        given.insert(0, "--all-presets")
    if args.all_variants:
        given.insert(0, "--all-variants")
    if given:
        raise ConfigError(f"{given[0]} needs --agreement")
    options = _options(args)
    invariant = invariant_for(options)
    if options.static_members and args.clients:
        raise ConfigError(
            "--clients: the client layer has dynamic members only; this config has static members"
        )
    steps = steps_for(options)
    if (options.offset_expiry or options.group_deletion) and args.clients:
        raise ConfigError(
            "--clients: the client layer has no KIP-211 expiry or group deletion; this "
            "config has them"
        )
    if options.assignor_offload and args.clients:
        raise ConfigError(
            "--clients: the client layer has no KIP-1263 assignor runs; this config offloads "
            "the assignor"
        )
    if options.batching and args.clients:
        raise ConfigError(
            "--clients: the client layer has no KIP-1263 assignment interval; this config "
            "batches assignments"
        )
    prover = Prover(options, timeout_ms=int(args.timeout * 1000), invariant=invariant, steps=steps)
    goals = [c.name for c in invariant] + [s.name for s in steps]
    request_lemma = not args.natural_lemmas
    layer_goals = [c.name for c in layer_conjuncts(request_lemma)] if args.clients else []
    goals += layer_goals
    # The convergence ranking is for dynamic members: a member at -2 stays there until a new
    # process of its instance replaces it. (Expiry and deletion are quiet steps of it, and
    # with KIP-1263 assignor offload it counts the run in flight: ranking.OFFLOAD_RANKING.)
    with_ranking = not options.static_members
    expiry = options.offset_expiry or options.group_deletion
    if with_ranking:
        goals += list(ranking.GOALS)
    if args.only:
        unknown = [g for g in args.only if g not in goals]
        if unknown:
            raise ConfigError(f"--only {unknown[0]!r} is no goal; known: {', '.join(goals)}")
    start = time.monotonic()
    progress = progress_for(args.quiet)
    # Non-vacuity first: the premises every obligation assumes must be satisfiable
    # (invariants.z3.proof.vacuity), whatever --only picks.
    premises = vacuity.check(
        options,
        invariant,
        with_ranking=not options.static_members,
        timeout_ms=int(args.timeout * 1000),
        progress=progress,
    )
    results = prover.run(progress=progress, only=args.only)
    layer: list[Any] = []
    fix = False
    if args.clients:
        config = _config(args)
        fix = bool(config is not None and config.report_pending_additions)
        if progress is not None:
            progress("prove: the client layer")
        wanted = tuple(args.only) if args.only else None
        layer = diagnose(
            fix=fix,
            request_lemma=request_lemma,
            options=options,
            timeout_ms=int(args.timeout * 1000),
            only=wanted,
        )
    ranked = (
        ranking.run(options, timeout_ms=int(args.timeout * 1000), progress=progress, only=args.only)
        if with_ranking
        else []
    )
    reached = _reach_ctis(args, results, invariant, steps, progress)
    seconds = time.monotonic() - start
    counts = summary(results)
    for d in layer:
        counts[d.status] += 1
    for r in ranked:
        counts[r.status] += 1
    result = "ok"
    reasons: list[str] = []
    checked = {r.obligation.goal for r in results + ranked} | {d.goal for d in layer}
    assumed = [c.name for c in invariant] + layer_goals
    if ranked:
        assumed += list(ranking.RANKING_LEMMAS)
    unchecked = [g for g in assumed if g not in checked]
    premise_verdict = vacuity.verdict(premises)
    vacuous = [p.name for p in premises if p.status == "vacuous"]
    if counts["failed"] or vacuous:
        result = "violation"
    elif counts["unknown"] or premise_verdict == "unknown":
        result = "inconclusive"
    if vacuous:
        reasons.append(
            "VACUOUS: unsatisfiable premise(s) "
            + ", ".join(vacuous)
            + ": the obligations that assume them are proved vacuously, so nothing is proved"
        )
    if counts["unknown"]:
        reasons.append("Z3 answered unknown for some obligation (its reason is listed)")
    if premise_verdict == "unknown":
        reasons.append(
            "Z3 answered unknown for a non-vacuity premise: the proof may be vacuous "
            "(its reason is listed)"
        )
    if unchecked and result == "ok":
        # The checked obligations assume the whole invariant in the pre-state: with
        # conjuncts left unchecked, nothing is proved inductive yet.
        result = "inconclusive"
    if unchecked:
        reasons.append("assumed in the pre-state but not checked (--only): " + ", ".join(unchecked))
    per_goal: dict[str, dict[str, Any]] = {}
    rows = [(r.obligation.goal, r.status, r.seconds, "core") for r in results]
    rows += [(d.goal, d.status, d.seconds, "client layer") for d in layer]
    rows += [(r.obligation.goal, r.status, r.seconds, "ranking") for r in ranked]
    for goal, status, secs, where in rows:
        key = f"{where}:{goal}"
        g = per_goal.setdefault(
            key,
            {"goal": goal, "layer": where, "status": "proved", "obligations": 0, "seconds": 0.0},
        )
        g["obligations"] += 1
        g["seconds"] = round(g["seconds"] + secs, 3)
        if status == "failed" or (status == "unknown" and g["status"] == "proved"):
            g["status"] = status
    if not with_ranking and options.static_members:
        reasons.append(
            "static members: the invariant with STATIC_LEMMAS; the convergence ranking is "
            "for dynamic members and was not checked"
        )
    if expiry:
        quiet = [
            name
            for name, on in (
                ("ExpireOffsets", options.offset_expiry),
                ("DeleteGroup", options.group_deletion),
            )
            if on
        ]
        are = "is a quiet step" if len(quiet) == 1 else "are quiet steps"
        reasons.append(
            "KIP-211 expiry / group deletion: the invariant with EXPIRY_LEMMAS, their step "
            "properties"
            + (
                f"; {' and '.join(quiet)} {are} of the convergence ranking (Ranking.NonIncreasing)"
                if with_ranking
                else ""
            )
        )
    if options.assignor_offload:
        reasons.append(
            "KIP-1263 assignor offload: the invariant with OFFLOAD_TARGETS and OFFLOAD_LEMMAS "
            "(the run in flight), TargetEpochAdvances on every step"
            + (
                "; the convergence ranking counts the run in flight (S, W) and assumes weak "
                "fairness on CompleteAssignorRun"
                if with_ranking
                else ""
            )
        )
    if options.batching:
        reasons.append(
            "KIP-1263 assignment batching: the invariant as without it (the interval only "
            "delays a computation)"
            + (
                "; the convergence ranking counts the pending interval (P) and assumes weak "
                "fairness on AssignmentIntervalElapses"
                if with_ranking
                else ""
            )
        )
    lemmas = {c.name for c in invariant if c.lemma} | {
        c.name for c in layer_conjuncts(True) if c.lemma
    }
    lemmas |= set(ranking.RANKING_LEMMAS)
    for g in per_goal.values():
        g["lemma"] = g["goal"] in lemmas
    done = sum(counts.values())
    return {
        "result": result,
        "checked": f"{done} obligations of {len(per_goal)} goals",
        "variant": options.variant,
        "options": {
            "compute_target_in_heartbeat": options.compute_target_in_heartbeat,
            "reconcile_while_assigning": options.reconcile_while_assigning,
            "rejoin_with_epoch_zero": options.rejoin_with_epoch_zero,
            "realign_empty_group": options.realign_empty_group,
            "static_members": options.static_members,
            "offset_expiry": options.offset_expiry,
            "group_deletion": options.group_deletion,
            "assignor_offload": options.assignor_offload,
            "batching": options.batching,
        },
        "summary": counts,
        "reasons": reasons,
        "non_vacuity": {
            "result": premise_verdict,
            "premises": [p.to_json() for p in premises],
        },
        "seconds": round(seconds, 3),
        "goals": list(per_goal.values()),
        "obligations": [_with_reach(r.to_json(), reached) for r in results],
        "reachability": {g: r.to_json() for g, r in reached.items()},
        "ranking": {
            "components": [
                {"name": c.name, "meaning": c.meaning} for c in ranking.components(options)
            ]
            if with_ranking
            else [],
            "obligations": [r.to_json() for r in ranked],
        },
        "client_layer": None
        if not args.clients
        else {
            "report_pending_additions": fix,
            "obligations": [d.to_json() for d in layer],
        },
    }


def _print(doc: dict[str, Any]) -> None:
    from groupcheck.cli import printable

    head = {"ok": "PROVED", "violation": "NOT PROVED", "inconclusive": "INCONCLUSIVE"}
    c = doc["summary"]
    variant = f" (variant {doc['variant']})" if doc["variant"] else ""
    verdict = head[doc["result"]]
    if doc["non_vacuity"]["result"] == "vacuous":
        verdict = "VACUOUS, NOT PROVED"
    print(
        f"{verdict}{variant}: {c['proved']} proved, {c['failed']} failed, "
        f"{c['unknown']} unknown obligations ({doc['seconds']} s)"
    )
    for reason in doc["reasons"]:
        print(f"  - {reason}")
    _print_premises(doc["non_vacuity"])
    layer = doc["client_layer"]
    obligations = list(doc["obligations"]) + (list(layer["obligations"]) if layer else [])
    obligations += list(doc["ranking"]["obligations"])
    for g in doc["goals"]:
        kind = "lemma" if g["lemma"] else "property"
        where = "" if g["layer"] == "core" else f", {g['layer']}"
        print(
            f"  {g['status']:8} {g['goal']} ({kind}{where}; {g['obligations']} obligations, "
            f"{g['seconds']} s)"
        )
        own = [ob for ob in obligations if ob["goal"] == g["goal"]]  # names do not overlap
        print(
            "      "
            + "; ".join(
                f"{ob['family'] or ('initiation' if g['lemma'] else 'any state')} "
                f"{ob['status']} {ob['seconds']} s"
                for ob in own
            )
        )
    if layer is not None:
        fix = "reports" if layer["report_pending_additions"] else "does not report"
        print(
            "  client layer: a diagnosis model (reliable network, no restarts; "
            f"a heartbeat {fix} the target still to apply)"
        )
    if doc["ranking"]["obligations"]:
        print(
            "  ranking (lexicographic, most significant first): "
            + "; ".join(f"{c['name']} = {c['meaning']}" for c in doc["ranking"]["components"])
        )
    for ob in obligations:
        if ob["status"] == "proved" and ob.get("reason"):
            print(f"  note: {ob['obligation']} {printable(ob['reason'])}")
        if ob["status"] == "unknown":
            print(f"\nUNKNOWN {ob['obligation']}: {printable(ob.get('reason', ''))}")
        if ob["status"] == "failed":
            print(f"\nCOUNTEREXAMPLE TO INDUCTION for {ob['obligation']}:")
            for line in ob["cti"]:
                print(f"  {printable(line)}")
            reach = ob.get("reach")
            if reach is not None:
                print(f"  {printable(reach['summary'])}")
                for line in reach.get("path", []):
                    print(f"    {printable(line)}")


def _reach_ctis(
    args: argparse.Namespace,
    results: list[Any],
    invariant: tuple[Any, ...],
    steps: tuple[Any, ...],
    progress: Any,
) -> dict[str, Any]:
    """For each goal of the core with a counterexample to induction, whether a violation
    of it is reachable within ``--reach`` steps (``invariants.z3.proof.cti_reach``), on
    the config given or the variant's mutant scenario; a goal no search can be run for
    gets a row saying why (``status`` "not searched")."""
    from invariants.z3.proof.cti_reach import reach

    bound = DEFAULT_REACH if args.reach is None else args.reach
    goals = list(dict.fromkeys(r.obligation.goal for r in results if r.status == "failed"))
    if not goals or bound == 0:
        return {}
    config = _config(args)
    variant = args.variant
    rules: Any = None
    after: Any = None
    if variant is not None:
        from groupcheck.mutants import MUTANTS
        from groupcheck.mutants.catalogue import after_assignor

        mutant = MUTANTS[variant]
        config = config if config is not None else mutant.config
        rules = mutant.rules
        after = after_assignor(rules)
    out: dict[str, Any] = {}
    if config is None:
        for goal in goals:
            out[goal] = _NotSearched(goal, "no configuration to search on: give --preset")
        return out
    rules = rules if rules is not None else config.rules
    conjuncts = {c.name: c.expr for c in invariant}
    props = {s.name: s for s in steps}
    for goal in goals:
        if progress is not None:
            progress(f"prove: is a violation of {goal} reachable within {bound} steps?")
        try:
            out[goal] = reach(
                goal,
                state=conjuncts.get(goal),
                step=props.get(goal),
                config=config,
                variant=variant,
                bound=bound,
                timeout_ms=int(args.timeout * 1000),
                rules=rules,
                after_assignor=after,
            )
        except (ValueError, KeyError) as e:
            out[goal] = _NotSearched(goal, f"BMC cannot search {config.name}: {e}")
    return out


class _NotSearched:
    """A goal the reachability search was not run for, and why."""

    def __init__(self, goal: str, why: str) -> None:
        self.goal, self.why = goal, why

    def to_json(self) -> dict[str, Any]:
        return {"goal": self.goal, "status": "not searched", "summary": f"not searched: {self.why}"}


def _with_reach(doc: dict[str, Any], reached: dict[str, Any]) -> dict[str, Any]:
    """An obligation's JSON with its goal's reachability, when it failed."""
    if doc["status"] == "failed" and doc["goal"] in reached:
        doc["reach"] = reached[doc["goal"]].to_json()
    return doc


def _print_premises(doc: dict[str, Any]) -> None:
    """The non-vacuity premises: one summary line, then each premise that is not
    satisfiable (``invariants.z3.proof.vacuity``)."""
    from groupcheck.cli import printable

    premises = doc["premises"]
    sat = sum(p["status"] == "satisfiable" for p in premises)
    seconds = round(sum(p["seconds"] for p in premises), 3)
    head = {"satisfiable": "non-vacuous", "vacuous": "VACUOUS", "unknown": "NOT SHOWN"}
    print(
        f"  {head[doc['result']]}: {sat} of {len(premises)} premises satisfiable — initial "
        f"states, a non-idle step of every family from the invariant, the ranking's "
        f"premises ({seconds} s)"
    )
    for p in premises:
        if p["status"] == "vacuous":
            print(f"  VACUOUS {p['premise']}: no {p['what']} (unsatisfiable)")
        elif p["status"] == "unknown":
            print(f"  unknown premise {p['premise']}: {printable(p.get('reason', ''))}")


def _initial_group_epoch(config: Any) -> int:
    from model.system import consumer_initial

    return int(consumer_initial(config).group.group_epoch)


def cmd_bmc(args: argparse.Namespace, chosen: Any) -> int:
    """``groupcheck explore --engine bmc``: bounded model checking over the symbolic core,
    every counterexample replayed through the Python coordinator (invariants.z3.proof.bmc),
    then lifted to a model trace (``groupcheck.explore.lift``, bounded by ``--max-states``
    per level) and, when lifted, written as a run directory like the other engines'."""
    from pathlib import Path

    from groupcheck import exitcodes
    from groupcheck.explore.lift import DEFAULT_LIFT_STATES
    from groupcheck.mutants.catalogue import after_assignor
    from groupcheck.progress import progress_for
    from invariants.z3.proof.bmc import (
        EPOCH_GOALS,
        GOALS,
        OFFLOAD_GOALS,
        OFFLOAD_STEP_GOALS,
        VARIANT_DEPTHS,
        ReplayDiverged,
        confirmed,
        replay,
        search_all,
        universe_of,
    )
    from invariants.z3.proof.bmc_clients import (
        CALLBACK_VARIANTS,
        CLIENT_GOALS,
        CLIENT_STEP_GOALS,
        CLIENT_VARIANTS,
        LEAVE_VARIANTS,
        POLL_GOALS,
        POLL_VARIANTS,
        Layer,
        confirmed_clients,
        replay_clients,
    )
    from invariants.z3.proof.state import render
    from invariants.z3.proof.transition import VARIANTS, Options
    from model.status import ConfigError
    from reports.artifacts import run_label, run_name
    from reports.publish import check_target

    config = chosen.config
    variant = chosen.mutant.name if chosen.mutant is not None else None
    if chosen.rules is not None:
        raise ConfigError("--engine bmc reads the symbolic rules; --rules has none")
    if config.protocol == "classic":
        return _cmd_bmc_classic(args, chosen, variant)
    if config.protocol == "mixed":
        from groupcheck.mixed_bmc import cmd_bmc_mixed

        return cmd_bmc_mixed(args, chosen, variant)
    bmc_variant(variant, VARIANTS, "")
    if config.protocol != "consumer":
        raise ConfigError(
            f"--engine bmc covers the KIP-848 consumer protocol; this config is "
            f"{config.protocol} (explore it instead)"
        )
    if any(c.instance_id is not None for c in config.clients):
        if any(c.regex is not None for c in config.clients):
            raise ConfigError(
                "--engine bmc's static members subscribe by topic name only; this config "
                "has instance ids and regular-expression subscriptions (explore it instead)"
            )
        if config.assignment_epochs:
            raise ConfigError(
                "--engine bmc encodes static members or KIP-1251 assignment epochs, not "
                "both; explore this config instead"
            )
        if variant in CLIENT_VARIANTS:
            raise ConfigError(
                "--engine bmc's client layer has dynamic members only (no instance ids); "
                "explore this config instead"
            )
    if config.assignment_epochs and variant in CLIENT_VARIANTS:
        raise ConfigError(
            "--engine bmc's client layer has no KIP-1251 assignment epochs; explore this "
            "config instead"
        )
    if config.effective_assignment_interval_ms() > 0 and variant in CLIENT_VARIANTS:
        raise ConfigError(
            "--engine bmc's client layer has no KIP-1263 assignment interval; explore this "
            "config instead"
        )
    from invariants.z3.proof.bmc_lasso import CONVERGENCE, LASSO_VARIANTS

    if variant in LASSO_VARIANTS or (args.only and CONVERGENCE in args.only):
        # Convergence: a lasso search over the client layer (invariants.z3.proof.bmc_lasso).
        return _cmd_lasso(args, chosen, variant)
    goals = list(GOALS)
    if config.assignment_epochs:
        # The states keep the KIP-1251 fields: HolderCommitsAccepted is read too.
        goals += [c.name for c in EPOCH_GOALS]
    goals += _expiry_goals(config)
    if config.assignor_offload:
        # The states keep the KIP-1263 assignor runs: their properties are read too.
        goals += [c.name for c in OFFLOAD_GOALS] + [s.name for s in OFFLOAD_STEP_GOALS]
    # The client layer only for a client-side variant: its properties read the clients.
    layer = None
    if variant in CLIENT_VARIANTS:
        callbacks = config.callback_steps and variant not in CALLBACK_VARIANTS
        if callbacks or config.auto_commit or any(c.regex for c in config.clients):
            raise ConfigError(
                "--engine bmc's client layer has no rebalance callbacks as steps (but for "
                f"{', '.join(sorted(CALLBACK_VARIANTS))}), no auto-commit and no "
                "regular-expression subscriptions; explore this config instead"
            )
        goals += [c.name for c in CLIENT_GOALS]
        if variant in POLL_VARIANTS:
            # A client rejoins only after its poll timer expired: asked where the layer
            # has its poll timers.
            goals += [c.name for c in POLL_GOALS]
        if variant in LEAVE_VARIANTS:
            # A client's epoch goes down only when it leaves: asked where the layer has
            # its leaves.
            goals += [c.name for c in CLIENT_STEP_GOALS]
    goals = chosen_goals(args.only, goals)
    # Without --depth: the depth of the variant's shortest path, where one is known.
    depth = args.depth or VARIANT_DEPTHS.get(variant or "", 3)
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)  # refuse an output location before searching, not after
    options = Options.of(config, variant)
    # The configuration's finite domains: quantifier-free unrollings.
    universe = universe_of(config)
    if variant in CLIENT_VARIANTS:
        layer = Layer.of(config, universe, variant)
    group_epoch = _initial_group_epoch(config)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    rows: list[dict[str, Any]] = []
    if progress is not None:
        progress(f"bmc: {', '.join(goals)} up to depth {depth}")
    outcomes = search_all(
        goals,
        depth,
        options,
        timeout_ms=int(args.budget * 1000),
        universe=universe,
        group_epoch=group_epoch,
        layer=layer,
    )
    client_goals = {c.name for c in (*CLIENT_GOALS, *CLIENT_STEP_GOALS, *POLL_GOALS)}
    for goal, out in outcomes.items():
        row: dict[str, Any] = {
            "property": goal,
            "status": out.status,
            "depth": out.depth,
            "seconds": round(out.seconds, 3),
        }
        if out.reason:
            row["reason"] = out.reason
        if out.path is not None:
            lines = ["initial:"] + ["  " + x for x in render(out.path.states[0])]
            lines += ["  " + c.render() for c in (out.path.clients[:1] or [()])[0]]
            for i, ((family, params), state) in enumerate(
                zip(out.path.steps, out.path.states[1:], strict=True), 1
            ):
                shown = ", ".join(f"{k}={v}" for k, v in params.items())
                lines.append(f"{family}({shown}):")
                lines += ["  " + x for x in render(state)]
                if out.path.clients:
                    lines += ["  " + c.render() for c in out.path.clients[i]]
            row["path"] = lines
            try:
                if layer is not None:
                    # Clients and coordinator replayed together; a client property read
                    # on the Python snapshot of the last state (every heartbeat of the
                    # layer is accepted: no UNKNOWN_SERVER_ERROR).
                    states, snaps = replay_clients(
                        out.path,
                        config.rules,
                        config,
                        after_assignor=after_assignor(config.rules),
                    )
                    row["replayed"] = (
                        confirmed_clients(goal, snaps)
                        if goal in client_goals
                        else confirmed(out.path, states, False)
                    )
                else:
                    states, server_error = replay(
                        out.path,
                        config.rules,
                        config,
                        after_assignor=after_assignor(config.rules),
                    )
                    row["replayed"] = confirmed(out.path, states, server_error)
            except ReplayDiverged as e:
                row["replayed"] = False
                row["replay_error"] = str(e)
        rows.append(row)
    written = _lift_and_write(
        args, chosen, outcomes, rows, universe, lift_states, out_dir, run_dir, progress
    )
    seconds = time.monotonic() - start
    violated = [r for r in rows if r["status"] == "violation"]
    result = "ok"
    if violated:
        result = "violation"
    elif any(r["status"] == "unknown" for r in rows):
        result = "inconclusive"
    result, bound = mutant_bound(
        result,
        variant,
        depth,
        given=args.depth is not None,
        known=VARIANT_DEPTHS.get(variant or ""),
    )
    doc = _bmc_doc(result, config.name, variant, depth, seconds, rows, lift_states, written, bound)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        from groupcheck.cli import printable

        head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}[result]
        print(f"{head} (bmc over the symbolic core, depth {depth}; {round(seconds, 3)} s)")
        for r in rows:
            extra = f" ({r['reason']})" if r.get("reason") else ""
            print(f"  {r['status']:9} {r['property']} (depth {r['depth']}){extra}")
        if bound:
            print(f"  {bound}")
        for r in violated:
            replayed = "confirmed" if r["replayed"] else "NOT confirmed"
            print(f"\nVIOLATION of {r['property']} in {r['depth']} steps; Python replay {replayed}")
            for line in r["path"]:
                print(f"  {printable(line)}")
            if r.get("replay_error"):
                print(f"  replay: {printable(r['replay_error'])}")
            if r.get("lift"):
                print(f"  lift: {printable(r['lift']['summary'])}")
        if doc["run_dir"] is not None:
            print(
                f"\nMODEL COUNTEREXAMPLE of {doc['property']} (lifted from the bmc path of "
                f"{doc['lifted_from']}): {doc['length']} steps"
            )
            print(f"  {printable(doc['message'] or '')}")
            for i, step in enumerate(doc["steps_taken"], 1):
                print(f"    {i:3}. {printable(step)}")
            print(f"  Z3 re-check: {doc['z3']}")
            print(f"  written to {doc['trace']}")
            print(f"  report: {doc['report']}")
            print(f"  reproduce: {doc['reproduce']}")
        elif violated:
            print("\nno run directory written: no counterexample was lifted to a model trace")
    if violated:
        # A violation the Python coordinator does not reproduce is a bug of the encoding.
        if not all(r["replayed"] for r in violated):
            return exitcodes.INTERNAL_ERROR
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK


def _cmd_bmc_classic(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` on a classic configuration: bounded model checking over the
    classic coordinator's relation (``invariants.z3.proof.classic_bmc``), every path lifted
    to a trace of the Python classic model (``groupcheck.explore.classic_lift``) before it
    counts as a violation; the first lifted trace is written as a run directory."""
    from groupcheck.bmc_lifted import Relation, run_goals
    from groupcheck.explore.classic_lift import lift, next_states
    from invariants.z3.proof.classic_bmc import (
        DEFAULT_ATTEMPTS,
        DEFAULT_LIFT_STATES,
        GOALS,
        VARIANT_ATTEMPTS,
        VARIANT_DEPTHS,
        VARIANT_GOALS,
        VARIANT_UNREACHED,
        render_path,
        search,
    )
    from invariants.z3.proof.classic_clients import CLIENT_GOALS, CLIENT_VARIANTS
    from invariants.z3.proof.classic_lasso import CONVERGENCE, LASSO_VARIANTS
    from invariants.z3.proof.classic_transition import (
        VARIANTS,
        ClassicOptions,
        assignor_variant_refusal,
    )
    from invariants.z3.proof.transition import OUTSIDE
    from model.status import ConfigError

    config = chosen.config
    # Every goal a classic config has, whichever search reads it.
    chosen_goals(args.only, [*GOALS, CONVERGENCE, *CLIENT_GOALS])
    client_variant = variant in CLIENT_VARIANTS and variant not in OUTSIDE
    if client_variant or (variant is None and args.only and set(args.only) <= set(CLIENT_GOALS)):
        # A client rule or a goal that reads the clients: the client layer linked to the
        # coordinator's relation (classic_client_bmc).
        return _cmd_bmc_classic_clients(args, chosen, variant)
    bmc_variant(variant, VARIANTS, "classic ")
    why = assignor_variant_refusal(config, variant)
    if why is not None:
        raise ConfigError(f"--engine bmc: {why}")
    if variant in LASSO_VARIANTS or (args.only and CONVERGENCE in args.only):
        # Convergence: a lasso search over the classic relation (classic_lasso).
        return _cmd_classic_lasso(args, chosen, variant)
    goals = chosen_goals(args.only, list(GOALS))
    if not args.only and variant in VARIANT_GOALS:
        # An assignor rule: the property it breaks (the others read other rules).
        goals = [VARIANT_GOALS[variant]]
    depth = args.depth or VARIANT_DEPTHS.get(variant or "", 3)
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    options = ClassicOptions.of(config, variant)
    return run_goals(
        args,
        chosen,
        variant=variant,
        goals=goals,
        depth=depth,
        lift_states=lift_states,
        relation=Relation("the classic coordinator", "classic", "coordinator steps", render_path),
        search=lambda goal, _progress: search(
            goal,
            depth,
            config,
            options,
            lifter=lift,
            lift_states=lift_states,
            attempts=VARIANT_ATTEMPTS.get(variant or "", DEFAULT_ATTEMPTS),
            successors=next_states,
        ),
        known=VARIANT_DEPTHS.get(variant or ""),
        unreached=VARIANT_UNREACHED.get(variant or ""),
    )


def _cmd_bmc_classic_clients(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` for a classic client mutant (``classic_clients.CLIENT_VARIANTS``)
    or the goals that read the clients (``CLIENT_GOALS``, with ``--only``): bounded model
    checking over the client layer linked to the classic coordinator's relation
    (``invariants.z3.proof.classic_client_bmc``), every path lifted to a trace of the Python
    classic model (``classic_lift.lift_clients``) before it counts as a violation."""
    from groupcheck.bmc_lifted import Relation, run_goals
    from groupcheck.explore.classic_lift import lift_clients
    from invariants.z3.proof.classic_bmc import DEFAULT_LIFT_STATES
    from invariants.z3.proof.classic_client_bmc import (
        DEFAULT_DEPTH,
        VARIANT_GOALS,
        render_client_path,
        search,
        supported,
    )
    from invariants.z3.proof.classic_clients import CLIENT_GOALS
    from model.status import ConfigError

    config = chosen.config
    why = supported(config)
    if why is not None:
        raise ConfigError(f"--engine bmc (classic clients): config {config.name!r}: {why}")
    # The link drops the requests in flight on the connection a request timeout closes,
    # where the model still delivers them: with message loss (the only way a classic
    # client's request times out) "no path" speaks of fewer behaviours than the model's.
    restricted = (
        "which drops a timed-out client's requests in flight where the model delivers them "
        "(this config loses messages): not a bound for the model"
        if config.max_perturbations > 0 and "LoseMessage" in config.perturbations
        else None
    )
    goals = chosen_goals(args.only, list(CLIENT_GOALS))
    if not args.only and chosen.mutant is not None and chosen.mutant.expected in goals:
        goals = [chosen.mutant.expected]
    if not args.only and variant in VARIANT_GOALS:
        goals = [VARIANT_GOALS[variant]]
    depth = args.depth or DEFAULT_DEPTH
    # A client variant without --depth: one query at its counterexample's depth (the
    # depths below it are not asked: no path is then inconclusive, never ok).
    start_depth = depth if args.depth is None and variant in VARIANT_GOALS else 1
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    return run_goals(
        args,
        chosen,
        variant=variant,
        goals=goals,
        depth=depth,
        lift_states=lift_states,
        relation=Relation(
            "the classic coordinator and its clients",
            "classic clients",
            "steps",
            render_client_path,
            restricted,
        ),
        search=lambda goal, progress: search(
            goal,
            depth,
            config,
            variant=variant,
            lifter=lift_clients,
            lift_states=lift_states,
            progress=progress,
            start_depth=start_depth,
        ),
        # The default depth holds each client variant's shortest counterexample.
        known=DEFAULT_DEPTH,
    )


def _cmd_classic_lasso(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` for Convergence on a classic configuration: the shortest
    fair non-converging lasso of the classic coordinator's relation
    (``invariants.z3.proof.classic_lasso``) up to ``--depth`` whose prefix lifts to a model
    trace from which the model's fair schedule does not converge
    (``groupcheck.explore.classic_lift.lift_lasso``); that trace is written as a run
    directory like the BFS engine's Convergence counterexamples."""
    from pathlib import Path

    from groupcheck import exitcodes
    from groupcheck.explore.classic_lift import lift_lasso
    from groupcheck.progress import progress_for
    from invariants.z3.proof.classic_bmc import DEFAULT_LIFT_STATES, render_path
    from invariants.z3.proof.classic_lasso import (
        CONVERGENCE,
        DEFAULT_DEPTH,
        LASSO_DEPTHS,
        SHIFTED_VARIANTS,
        search_lasso,
    )
    from invariants.z3.proof.classic_transition import ClassicOptions
    from model.status import ConfigError
    from reports.artifacts import run_label, run_name
    from reports.casestudy import describe_action
    from reports.publish import check_target

    config = chosen.config
    if args.only and set(args.only) != {CONVERGENCE}:
        raise ConfigError(
            f"--only: --engine bmc searches {CONVERGENCE} alone here (a lasso of the classic "
            "relation)"
        )
    depth = args.depth or DEFAULT_DEPTH
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    shifts = variant in SHIFTED_VARIANTS
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    if progress is not None:
        kind = "up to a generation shift" if shifts else "fair non-converging lassos"
        progress(f"bmc (classic): {CONVERGENCE} ({kind}) up to depth {depth}")
    out = search_lasso(
        depth,
        config,
        ClassicOptions.of(config, variant),
        confirmer=lift_lasso,
        lift_states=lift_states,
        shifts=shifts,
    )
    row: dict[str, Any] = {
        "property": CONVERGENCE,
        "status": {"inconclusive": "unknown"}.get(out.status, out.status),
        "depth": out.depth,
        "seconds": round(out.seconds, 3),
        "lassos_tried": out.tried,
        "replayed": out.trace is not None,
    }
    if out.status == "ok":
        row["checked"] = (
            f"no fair non-converging lasso of at most {depth} steps of the classic relation"
            + (" (up to a generation shift)" if shifts else "")
        )
    if out.status == "inconclusive":
        row["reason"] = (
            f"Z3 gave no answer at depth {out.depth}"
            if out.unanswered and not out.tried
            else f"{out.tried} lasso(s), none confirmed: no model trace through the prefix, "
            "or the model's fair schedule converges from its end"
            + (f"; Z3 gave no answer at depth {out.depth}" if out.unanswered else "")
        )
    if out.lasso is not None:
        row["loop"] = {
            "entry": out.lasso.loop,
            "steps": out.lasso.loop_steps(),
            "generation_shift": out.lasso.shift,
        }
        row["path"] = render_path(out.lasso.path)
    written: dict[str, Any] = {
        "run_dir": None,
        "trace": None,
        "report": None,
        "reproduce": None,
        "property": None,
        "length": None,
        "steps_taken": [],
    }
    if out.trace is not None and out.lasso is not None:
        loop = row["loop"]
        message = (
            f"{CONVERGENCE}: from the end of this trace the model's fair schedule does not "
            f"converge. The bmc lasso of {out.depth} steps loops from its state "
            f"{loop['entry']} through {', '.join(loop['steps'])}"
            + (
                f", back to that state with every generation {out.lasso.shift} larger."
                if out.lasso.shift
                else "."
            )
        )
        written.update(
            **_write_lifted(chosen, out.trace, CONVERGENCE, message, out_dir, run_dir),
            property=CONVERGENCE,
            length=len(out.trace.actions),
            steps_taken=[describe_action(a) for a in out.trace.actions],
        )
        row["lift"] = {
            "status": "lifted",
            "length": len(out.trace.actions),
            "property": CONVERGENCE,
            "summary": f"the prefix lifted to a {len(out.trace.actions)}-step model trace "
            "from whose end the model's fair schedule does not converge",
        }
    seconds = time.monotonic() - start
    result = {"violation": "violation", "ok": "ok"}.get(out.status, "inconclusive")
    result, bound = _lasso_bound(result, variant, depth, args, LASSO_DEPTHS)
    doc = _bmc_doc(result, config.name, variant, depth, seconds, [row], lift_states, written, bound)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        from groupcheck.cli import printable

        head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}[result]
        print(f"{head} (bmc over the classic coordinator, depth {depth}; {round(seconds, 3)} s)")
        extra = f" ({row['reason']})" if row.get("reason") else ""
        print(f"  {row['status']:9} {CONVERGENCE} (depth {row['depth']}){extra}")
        if row.get("checked"):
            print(f"  checked: {row['checked']}")
        if bound:
            print(f"  {bound}")
        if "loop" in row:
            loop = row["loop"]
            confirmed = "confirmed" if out.trace is not None else "NOT confirmed"
            print(
                f"\nLASSO of {row['depth']} steps, the loop from state {loop['entry']}: "
                f"{', '.join(loop['steps'])}"
                + (
                    f" (back with every generation {loop['generation_shift']} larger)"
                    if loop["generation_shift"]
                    else ""
                )
                + f"; {confirmed} by the model's fair schedule"
            )
            for line in row["path"]:
                print(f"  {printable(line)}")
        if written["run_dir"] is not None:
            print(
                f"\nMODEL COUNTEREXAMPLE of {CONVERGENCE} (the lasso's prefix lifted to a model "
                f"trace): {written['length']} steps"
            )
            for i, step in enumerate(written["steps_taken"], 1):
                print(f"    {i:3}. {printable(step)}")
            print("    …then, with no more perturbations, a fair schedule never converges")
            print(f"  written to {written['trace']}")
            print(f"  report: {written['report']}")
            print(f"  reproduce: {written['reproduce']}")
    if result == "violation":
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK


def _lasso_bound(
    result: str, variant: str | None, depth: int, args: argparse.Namespace, known: dict[str, int]
) -> tuple[str, str | None]:
    """``mutant_bound`` for a Convergence search: a liveness-only variant's shortest lasso
    is known (``known``); any other mutant is here only by ``--only Convergence``, which
    asks for a lasso its kill is not."""
    if variant is None or variant in known:
        return mutant_bound(
            result, variant, depth, given=args.depth is not None, known=known.get(variant or "")
        )
    return mutant_bound(
        result,
        variant,
        depth,
        given=True,
        known=None,
        unreached="its kill is a safety property, not a lasso",
    )


def _expiry_goals(config: Any) -> list[str]:
    """The step properties BMC reads besides ``GOALS`` where the states keep which
    partitions exist (KIP-211 expiry) or the deletion fields (group deletion)."""
    from invariants.z3.proof.bmc import DELETION_GOALS, EXPIRY_GOALS
    from invariants.z3.proof.transition import Options

    options = Options.of(config)
    goals = [s.name for s in EXPIRY_GOALS] if options.offset_expiry else []
    return goals + ([s.name for s in DELETION_GOALS] if options.group_deletion else [])


def _lift_and_write(
    args: argparse.Namespace,
    chosen: Any,
    outcomes: dict[str, Any],
    rows: list[dict[str, Any]],
    universe: Any,
    lift_states: int,
    out_dir: Any,
    run_dir: Any,
    progress: Any,
) -> dict[str, Any]:
    """Lift the confirmed counterexamples, in the order of ``rows``, to model traces until
    one lifts (``groupcheck.explore.lift``; each row gains ``lift``), and write that one's
    run directory as the other engines do. Returns the document's run-directory fields
    (all None when nothing was lifted: no directory is written)."""
    from groupcheck.explore.lift import lift
    from groupcheck.explore.run import z3_recheck
    from reports.casestudy import describe_action

    fields: dict[str, Any] = {
        "run_dir": None,
        "trace": None,
        "report": None,
        "reproduce": None,
        "lifted_from": None,
        "property": None,
        "message": None,
        "length": None,
        "z3": None,
        "steps_taken": [],
    }
    config = chosen.config
    for row in rows:
        if row["status"] != "violation" or not row.get("replayed"):
            continue
        if fields["run_dir"] is not None:
            row["lift"] = {
                "status": "not attempted",
                "summary": f"not attempted: {run_dir} holds the counterexample of "
                f"{fields['lifted_from']}",
            }
            continue
        if progress is not None:
            progress(f"bmc: lifting the path of {row['property']} to a model trace")
        lifted = lift(outcomes[row["property"]].path, config, universe, max_states=lift_states)
        row["lift"] = lifted.to_json()
        if lifted.path is None or lifted.property is None:
            continue
        written = _write_lifted(
            chosen, lifted.path, lifted.property, lifted.message or "", out_dir, run_dir
        )
        fields.update(
            **written,
            lifted_from=row["property"],
            property=lifted.property,
            message=lifted.message,
            length=len(lifted.path.actions),
            z3=z3_recheck(lifted.path, lifted.property),
            steps_taken=[describe_action(a) for a in lifted.path.actions],
        )
    return fields


def _write_lifted(
    chosen: Any, path: Any, prop: str, message: str, out_dir: Any, run_dir: Any
) -> dict[str, str]:
    """Publish a lifted BMC counterexample as a run directory (``write_counterexample``)
    and say where: its directory, trace, report and the command that reproduces it."""
    from groupcheck.cli import _small_state_graph
    from reports.artifacts import Counterexample, write_counterexample

    ce = Counterexample(
        path=path,
        property=prop,
        message=message,
        preset=chosen.preset,
        mutant=chosen.mutant.name if chosen.mutant else None,
        named_config=chosen.config_file is None,
        engine="bmc",
        original_length=len(path.actions),
    )
    graph, graph_path = _small_state_graph(path)
    done = write_counterexample(
        ce, out=out_dir, name=run_dir.name, graph=graph, graph_path=graph_path
    )
    return {
        "run_dir": str(done),
        "trace": str(done / "trace.ndjson"),
        "report": str(done / "index.html"),
        "reproduce": ce.cli() if ce.named_config else f"sh {done / 'reproduce.sh'}",
    }


def _bmc_doc(
    result: str,
    config_name: str,
    variant: str | None,
    depth: int,
    seconds: float,
    rows: list[dict[str, Any]],
    lift_states: int,
    written: dict[str, Any],
    bound: str | None = None,
) -> dict[str, Any]:
    """``explore --engine bmc``'s JSON document (safety goals and Convergence lassos);
    ``bound``: what the depth says of the mutant, when a mutant run found no violation
    (``groupcheck.bmc_lifted.mutant_bound``). ``schema`` and ``version`` are those of
    ``explore``'s documents (``groupcheck.jsonout``, docs/json.md)."""
    from groupcheck.jsonout import document

    what = "property" if len(rows) == 1 else "properties"
    checked = f"{len(rows)} {what} on every path of at most {depth} steps of the symbolic relation"
    return document(
        "explore",
        {
            "result": result,
            "checked": checked,
            "engine": "bmc",
            "config": config_name,
            "variant": variant,
            "depth": depth,
            "bound": bound,
            "seconds": round(seconds, 3),
            "properties": rows,
            "lift_states": lift_states,
            **written,
        },
    )


def _path_lines(path: Any) -> list[str]:
    """A BMC path as text: each state (and the layer's clients) after the step taken."""
    from invariants.z3.proof.state import render

    lines = ["initial:"] + ["  " + x for x in render(path.states[0])]
    lines += ["  " + c.render() for c in (path.clients[:1] or [()])[0]]
    for i, ((family, params), state) in enumerate(zip(path.steps, path.states[1:], strict=True), 1):
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        lines.append(f"{family}({shown}):")
        lines += ["  " + x for x in render(state)]
        if path.clients:
            lines += ["  " + c.render() for c in path.clients[i]]
    return lines


def lasso_row(
    lasso: Any, config: Any, universe: Any, *, lift_states: int, bound: int | None = None
) -> tuple[dict[str, Any], Any]:
    """Confirm a lasso in Python (``bmc_lasso.replay_lasso``, then
    ``groupcheck.explore.lift.lift_lasso``: a model trace to the loop's entry from which the
    fair schedule does not converge). Returns the report's row (``status`` "violation"
    only when both hold; "inconclusive" when the model's fair schedule converges from every
    state matching the loop's entry it reached; "violation" with ``replayed`` False when the
    Python clients and coordinator do not walk the path: an encoding bug) and the lift."""
    from groupcheck.explore.lift import lift_lasso
    from groupcheck.mutants.catalogue import after_assignor
    from invariants.z3.proof.bmc import ReplayDiverged
    from invariants.z3.proof.bmc_lasso import CONVERGENCE, replay_lasso

    path = lasso.path
    row: dict[str, Any] = {
        "property": CONVERGENCE,
        "status": "violation",
        "depth": len(path.steps),
        "loop": {"entry": lasso.loop, "steps": lasso.loop_steps()},
        "path": _path_lines(path),
    }
    try:
        closes = replay_lasso(
            lasso, config.rules, config, after_assignor=after_assignor(config.rules)
        )
    except ReplayDiverged as e:
        row.update(replayed=False, replay_error=str(e))
        return row, None
    if not closes:
        row.update(replayed=False, replay_error="the Python loop does not close")
        return row, None
    row["replayed"] = True
    lifted = lift_lasso(lasso, config, universe, max_states=lift_states, bound=bound)
    row["lift"] = lifted.to_json()
    if lifted.path is None:
        matching = sum(a.get("matching", 0) for a in lifted.attempts)
        row["status"] = "inconclusive"
        row["reason"] = (
            f"the lasso is not fair in the model's sense: the model's fair schedule converges "
            f"from each of the {matching} states matching the loop's entry it reached"
            if matching
            else f"no model state matching the loop's entry within {lift_states} states per level"
        )
    return row, lifted


def _cmd_lasso(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """``explore --engine bmc`` for Convergence: the shortest fair non-converging lasso of
    the client layer (``invariants.z3.proof.bmc_lasso``) up to ``--depth``, confirmed by
    :func:`lasso_row` and written as a run directory like the BFS engine's Convergence
    counterexamples (the trace to the loop's entry)."""
    from pathlib import Path

    from groupcheck import exitcodes
    from groupcheck.explore.lift import DEFAULT_LIFT_STATES
    from groupcheck.progress import progress_for
    from invariants.z3.proof.bmc import universe_of
    from invariants.z3.proof.bmc_clients import POLL_VARIANTS, Layer
    from invariants.z3.proof.bmc_lasso import CONVERGENCE, LASSO_DEPTHS, search_lasso
    from invariants.z3.proof.transition import Options
    from model.status import ConfigError
    from reports.artifacts import run_label, run_name
    from reports.publish import check_target

    config = chosen.config
    if args.only and set(args.only) != {CONVERGENCE}:
        raise ConfigError(
            f"--only: --engine bmc searches {CONVERGENCE} alone (a lasso of the client layer)"
        )
    if config.callback_steps or config.auto_commit or any(c.regex for c in config.clients):
        raise ConfigError(
            "--engine bmc's client layer has no rebalance callbacks as steps, no auto-commit "
            "and no regular-expression subscriptions; explore this config instead"
        )
    if config.assignment_epochs:
        raise ConfigError(
            "--engine bmc's client layer has no KIP-1251 assignment epochs; explore this "
            "config instead"
        )
    if any(c.instance_id is not None for c in config.clients):
        raise ConfigError(
            "--engine bmc's client layer has dynamic members only (no instance ids): no "
            f"{CONVERGENCE} lassos here; explore this config instead"
        )
    if variant in POLL_VARIANTS:
        raise ConfigError(
            f"--engine bmc's {CONVERGENCE} lassos have no poll timers (the layer's fairness "
            f"does not name their steps); explore mutant {variant} instead"
        )
    # Without --depth: the length of the variant's shortest lasso, where one is known.
    depth = args.depth or LASSO_DEPTHS.get(variant or "", 3)
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    out_dir = Path(args.out)
    scenario = chosen.preset or config.name.split("+")[0]
    run_dir = out_dir / run_name(run_label(scenario, chosen.change, "bmc", None))
    check_target(run_dir)
    universe = universe_of(config)
    # Lossy where the configuration loses messages: a fenced client and its rejoin.
    layer = Layer.of(config, universe, variant, lossy=True)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    if progress is not None:
        progress(f"bmc: {CONVERGENCE} (fair non-converging lassos) up to depth {depth}")
    out = search_lasso(
        depth,
        Options.of(config, variant),
        universe=universe,
        layer=layer,
        group_epoch=_initial_group_epoch(config),
        timeout_ms=int(args.budget * 1000),
    )
    row: dict[str, Any] = {
        "property": CONVERGENCE,
        "status": out.status,
        "depth": out.depth,
        "seconds": round(out.seconds, 3),
    }
    if out.reason:
        row["reason"] = out.reason
    if out.status == "ok":
        row["checked"] = (
            f"no fair non-converging lasso of at most {depth} steps over the client layer"
        )
    lifted = None
    if out.lasso is not None:
        if progress is not None:
            progress("bmc: replaying the lasso and running the model's fair schedule")
        found, lifted = lasso_row(out.lasso, config, universe, lift_states=lift_states)
        row.update({k: v for k, v in found.items() if k != "depth"})
    written: dict[str, Any] = {"run_dir": None, "trace": None, "report": None, "reproduce": None}
    if lifted is not None and lifted.path is not None:
        loop = row["loop"]
        message = (
            f"{lifted.message or ''} The bmc lasso of {row['depth']} steps loops from its "
            f"state {loop['entry']} through {', '.join(loop['steps'])}."
        ).strip()
        written = _write_lifted(chosen, lifted.path, CONVERGENCE, message, out_dir, run_dir)
    seconds = time.monotonic() - start
    result = {"violation": "violation", "ok": "ok"}.get(row["status"], "inconclusive")
    result, bound = _lasso_bound(result, variant, depth, args, LASSO_DEPTHS)
    doc = _bmc_doc(result, config.name, variant, depth, seconds, [row], lift_states, written, bound)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        from groupcheck.cli import printable

        head = {"ok": "ok", "violation": "VIOLATION", "inconclusive": "INCONCLUSIVE"}[result]
        print(f"{head} (bmc over the client layer, depth {depth}; {round(seconds, 3)} s)")
        extra = f" ({row['reason']})" if row.get("reason") else ""
        print(f"  {row['status']:9} {CONVERGENCE} (depth {row['depth']}){extra}")
        if row.get("checked"):
            print(f"  checked: {row['checked']}")
        if bound:
            print(f"  {bound}")
        if "loop" in row:
            loop = row["loop"]
            replayed = "confirmed" if row.get("replayed") else "NOT confirmed"
            print(
                f"\nLASSO of {row['depth']} steps, the loop from state {loop['entry']}: "
                f"{', '.join(loop['steps'])}; Python replay {replayed}"
            )
            for line in row["path"]:
                print(f"  {printable(line)}")
            if row.get("replay_error"):
                print(f"  replay: {printable(row['replay_error'])}")
            if row.get("lift"):
                print(f"  lift: {printable(row['lift']['summary'])}")
        if lifted is not None and lifted.path is not None:
            print(
                f"\nMODEL COUNTEREXAMPLE of {CONVERGENCE} (the lasso's prefix lifted to a model "
                f"trace): {len(lifted.path.actions)} steps"
            )
            from reports.casestudy import describe_action

            for i, action in enumerate(lifted.path.actions, 1):
                print(f"    {i:3}. {printable(describe_action(action))}")
            print("    …then, with no more perturbations, a fair schedule never converges")
            print(f"  written to {written['trace']}")
            print(f"  report: {written['report']}")
            print(f"  reproduce: {written['reproduce']}")
    if result == "violation":
        if not row.get("replayed"):
            return exitcodes.INTERNAL_ERROR
        return exitcodes.VIOLATION
    return exitcodes.INCONCLUSIVE if result == "inconclusive" else exitcodes.OK

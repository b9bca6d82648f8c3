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
import time
from collections.abc import Callable
from typing import Any

from groupcheck import exitcodes
from groupcheck.argtypes import non_negative, positive, positive_float
from model.status import ConfigError
from reports.escape import visible


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
    from groupcheck.argtypes import add_rules_option

    add_rules_option(
        p,
        help="prove your own reconciliation kernel: NAME in FILE.py replaces Rules.reconcile "
        "with model.consumer.reconcile.kernel_rule(KERNEL), a kernel written against "
        "model/sets.py (docs/tutorial.md, 'Proving a change of the reconciliation kernel'), or "
        "Rules.validate_offset_commit with model.consumer.coordinator.commit_kernel_rule(KERNEL); "
        "a file that replaces any other rule is refused (exit 2)",
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
"""``prove --reach``'s default bound: the longest shortest path of the core's coordinator
safety variants (their catalogue entries' ``Mutant.bmc_depth``; the client variants' paths
unroll the client layer too) is 4 steps."""


def _config(args: argparse.Namespace) -> Any:
    """The config given (``scope.chosen_config``; None: the defaults of ``Config``), with
    the ``--rules`` file's rules installed."""
    from groupcheck.rulesfile import with_rules
    from groupcheck.symbolic.scope import chosen_config

    config = chosen_config(args)
    loaded = _rules(args)
    if loaded is not None and config is not None:
        config = with_rules(config, *loaded)
    return config


def _rules(args: argparse.Namespace) -> Any:
    """``--rules FILE.py:NAME`` loaded once (``args.loaded_rules``: its ``Rules`` and
    ``RulesSource``), or None. The symbolic engines read a replacement of the
    reconciliation kernel or of the offset-commit check
    (``groupcheck.rulesfile.symbolic_refusal``)."""
    spec = getattr(args, "rules", None)
    if spec is None:
        return None
    if getattr(args, "loaded_rules", None) is None:
        from groupcheck.rulesfile import load_rules
        from model.status import ConfigError

        if getattr(args, "variant", None) is not None:
            raise ConfigError("--variant and --rules both replace rules; give one of them")
        args.loaded_rules = load_rules(spec)
    return args.loaded_rules


def _options(args: argparse.Namespace) -> Any:
    """The relation's options for the config and ``--variant`` given, once the capability
    table (``symbolic.capabilities``) has not refused them; ``--clients`` included."""
    from groupcheck.mutants import variant_commit_kernel, variant_kernel
    from groupcheck.symbolic.capabilities import PROVE, check, prove_facts
    from groupcheck.symbolic.scope import family_of
    from invariants.z3.proof.transition import Options

    config = _config(args)
    check(PROVE, family_of(config), "proof", prove_facts(args, config))
    # A variant of the reconciliation is its mutant's kernel (transition.KERNEL_VARIANTS).
    kernel = variant_kernel(args.variant)
    # A variant of the offset-commit check too (transition.COMMIT_KERNEL_VARIANTS).
    commit_kernel = variant_commit_kernel(args.variant)
    if config is None:
        loaded = _rules(args)
        if loaded is not None:
            kernel = getattr(loaded[0].reconcile, "kernel", None)
            commit_kernel = getattr(loaded[0].validate_offset_commit, "kernel", None)
        return Options(variant=args.variant, kernel=kernel, commit_kernel=commit_kernel)
    return Options.of(config, args.variant, kernel=kernel, commit_kernel=commit_kernel)


def cmd_prove(args: argparse.Namespace) -> int:
    from groupcheck.symbolic.capabilities import PROVE, check, prove_facts

    if args.agreement:
        from groupcheck.symbolic.agreement import cmd_agreement
        from model.status import ConfigError

        if getattr(args, "rules", None) is not None:
            raise ConfigError("--rules is for proofs; --agreement checks the relation")

        check(PROVE, "any", "agreement", prove_facts(args, None))
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
    from groupcheck.symbolic.capabilities import PROVE, check, prove_facts
    from invariants.z3.proof import clients, obligations, ranking, vacuity
    from invariants.z3.proof.clients import diagnose, layer_conjuncts
    from invariants.z3.proof.induction import Prover, invariant_for, steps_for

    # The options of --agreement alone, before the config is read.
    check(PROVE, "any", "proof options", prove_facts(args, None))
    options = _options(args)
    invariant = invariant_for(options)
    steps = steps_for(options)
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
    policy = obligations.Policy(int(args.timeout * 1000))

    def told(what: str) -> Callable[[int, int, obligations.Obligation], None] | None:
        if progress is None:
            return None
        say = progress
        return lambda i, n, ob: say(f"prove: {what.format(i=i, n=n)}, now {ob.name}")

    results = obligations.run(
        prover.obligations(args.only), prover.query, policy, progress=told("{i}/{n} obligations")
    )
    layer: list[obligations.Result] = []
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
        obligations.run(
            ranking.obligations(options, args.only),
            lambda ob: ranking.query(ob, options),
            policy,
            progress=told("ranking {i}/{n}"),
        )
        if with_ranking
        else []
    )
    reached = _reach_ctis(args, results, invariant, steps, progress)
    seconds = time.monotonic() - start
    counts = obligations.summary(results + layer + ranked)
    result = "ok"
    reasons: list[str] = []
    checked = {r.obligation.goal for r in results + ranked + layer}
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
    rows += [(d.obligation.goal, d.status, d.seconds, "client layer") for d in layer]
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
            "obligations": [clients.to_json(d) for d in layer],
        },
    }


def _print(doc: dict[str, Any]) -> None:
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
            print(f"  note: {ob['obligation']} {visible(ob['reason'])}")
        if ob["status"] == "unknown":
            print(f"\nUNKNOWN {ob['obligation']}: {visible(ob.get('reason', ''))}")
        if ob["status"] == "failed":
            print(f"\nCOUNTEREXAMPLE TO INDUCTION for {ob['obligation']}:")
            for line in ob["cti"]:
                print(f"  {visible(line)}")
            reach = ob.get("reach")
            if reach is not None:
                print(f"  {visible(reach['summary'])}")
                for line in reach.get("path", []):
                    print(f"    {visible(line)}")


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
            print(f"  unknown premise {p['premise']}: {visible(p.get('reason', ''))}")

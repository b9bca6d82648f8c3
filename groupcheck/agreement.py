"""``groupcheck prove --agreement``: the symbolic relation against the Python model on the
steps of seeded walks (``invariants.z3.proof.crosscheck``), for one config or every preset
in the relation's scope (docs/invariants.md, "The relation against the model").

Exit 0 when every step checked agreed and every family each config can take was checked;
1 on a disagreement (its pre-state, action and family are printed); 3 when none disagreed
but a family was not reached or Z3 answered unknown; 2 on bad input (a config outside the
relation's scope included).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

DEFAULT_WALKS = 3
DEFAULT_LENGTH = 30
DEFAULT_SEED = 0
DEFAULT_SEEK = 300_000
"""States a search for a family the walks missed may visit (``cross_check``'s
``seek_states``)."""


def cmd_agreement(args: argparse.Namespace) -> int:
    from groupcheck import exitcodes
    from groupcheck.progress import progress_for
    from groupcheck.prove import _config, outside_scope
    from invariants.z3.proof.crosscheck import cross_check
    from model.presets import PRESETS
    from model.status import ConfigError

    others = [
        flag
        for flag, given in (
            ("--variant", args.variant is not None),
            ("--clients", args.clients),
            ("--natural-lemmas", args.natural_lemmas),
            ("--only", bool(args.only)),
        )
        if given
    ]
    if others:
        raise ConfigError(f"--agreement checks the reference relation; {others[0]} is for proofs")
    walks = args.walks if args.walks is not None else DEFAULT_WALKS
    length = args.length if args.length is not None else DEFAULT_LENGTH
    seed = args.seed if args.seed is not None else DEFAULT_SEED
    bfs = args.bfs or 0
    seek = args.seek if args.seek is not None else DEFAULT_SEEK
    configs: list[Any] = []
    skipped: list[dict[str, str]] = []
    if args.all_presets:
        for name, config in PRESETS.items():
            reason = outside_scope(config)
            if reason is None:
                configs.append(config)
            else:
                skipped.append({"preset": name, "reason": reason})
    else:
        config = _config(args)
        if config is None:
            raise ConfigError("--agreement needs --preset NAME, --config FILE or --all-presets")
        reason = outside_scope(config)
        if reason is not None:
            raise ConfigError(reason)
        configs.append(config)
    progress = progress_for(args.quiet)
    start = time.monotonic()
    rows = []
    for config in configs:
        if progress is not None:
            progress(f"agreement: {config.name} ({walks} walks x {length} steps, seed {seed})")
        outcome = cross_check(
            config,
            walks=walks,
            length=length,
            seed=seed,
            bfs_states=bfs,
            seek_states=seek,
            timeout_ms=int(args.timeout * 1000),
            progress=progress,
        )
        rows.append(_row(config.name, outcome))
    results = [r["result"] for r in rows]
    result = "ok"
    if "violation" in results:
        result = "violation"
    elif "inconclusive" in results:
        result = "inconclusive"
    doc = {
        "result": result,
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
        print(json.dumps(doc, indent=1))
    else:
        _print(doc)
    return exitcodes.exit_code(result)


def _row(name: str, outcome: Any) -> dict[str, Any]:
    from reports.casestudy import describe_action, group_view, render_group

    reasons = []
    if outcome.missing:
        reasons.append("families the config can take, not reached: " + ", ".join(outcome.missing))
    unknown = [f for f in outcome.families if f.unknown]
    for f in unknown:
        why = "; ".join(f.reasons)
        reasons.append(f"Z3 answered unknown on {f.unknown} {f.family} steps: {why}")
    row: dict[str, Any] = {
        "config": name,
        "result": outcome.verdict,
        "reasons": reasons,
        "steps": outcome.steps,
        "side_steps": outcome.side_steps,
        "bfs_steps": outcome.bfs_steps,
        "seek_steps": outcome.seek_steps,
        "possible": list(outcome.possible),
        "missing": list(outcome.missing),
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
    from groupcheck.cli import printable

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
            f"{', ' + str(r['seek_steps']) + ' found by search' if r['seek_steps'] else ''})"
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
            print(f"      - {printable(reason)}")
    for s in doc["skipped"]:
        print(f"  skipped      {s['preset']}: {printable(s['reason'])}")
    for r in rows:
        d = r["disagreement"]
        if d is None:
            continue
        where = f"walk {d['walk'] + 1}, step {d['index'] + 1}" if d["walk"] is not None else "BFS"
        side = " (a side step)" if d["origin"] == "side" else ""
        print(f"\nDISAGREEMENT in {r['config']} ({where}{side}): {printable(d['what'])}")
        print(f"  family: {d['family']} (allowed {d['allowed']}, unique {d['unique']})")
        print(f"  action: {printable(d['action'])}")
        print("  pre-state:")
        for line in d["pre_text"].splitlines():
            print(f"    {printable(line)}")
        print("  post-state (the model's):")
        for line in d["post_text"].splitlines():
            print(f"    {printable(line)}")

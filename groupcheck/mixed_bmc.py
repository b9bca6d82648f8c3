"""``groupcheck explore --engine bmc`` on a mixed configuration (``protocol = "mixed"``):
bounded model checking over a mixed group's relation (``invariants.z3.proof.mixed_bmc``),
every path lifted to a trace of the Python migration model
(``groupcheck.explore.mixed_lift``) before it counts as a violation; the first lifted
trace is written as a run directory, as ``groupcheck.prove`` does for the other
relations."""

from __future__ import annotations

import argparse
from typing import Any

from groupcheck.bmc_lifted import bmc_variant, chosen_goals


def cmd_bmc_mixed(args: argparse.Namespace, chosen: Any, variant: str | None) -> int:
    """Run the mixed BMC (module docstring); exit 1 for a lifted violation, 3 when a
    symbolic path did not lift, 0 when no path of the relation violates a goal."""
    from groupcheck.bmc_lifted import Relation, run_goals
    from groupcheck.explore.mixed_lift import lift
    from invariants.z3.proof.mixed_bmc import DEFAULT_LIFT_STATES, GOALS, render_path, search
    from invariants.z3.proof.mixed_transition import VARIANTS, MixedOptions, unsupported
    from model.status import ConfigError

    config = chosen.config
    bmc_variant(variant, VARIANTS, "mixed-group ")
    why = unsupported(config)
    if why is not None:
        raise ConfigError(f"--engine bmc: {why}; explore it instead")
    goals = list(GOALS)
    goals = chosen_goals(args.only, goals)
    depth = args.depth or 3
    lift_states = args.max_states or DEFAULT_LIFT_STATES
    options = MixedOptions.of(config, variant)
    return run_goals(
        args,
        chosen,
        variant=variant,
        goals=goals,
        depth=depth,
        lift_states=lift_states,
        relation=Relation(
            "the mixed group's coordinator", "mixed group", "coordinator steps", render_path
        ),
        search=lambda goal, _progress: search(
            goal, depth, config, options, lifter=lift, lift_states=lift_states
        ),
    )

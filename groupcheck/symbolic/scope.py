"""What ``prove`` and ``prove --agreement`` (``groupcheck.symbolic.prove_cmd``,
``groupcheck.symbolic.agreement``) share: the config the command line names, its protocol
family, and why the symbolic relation does not cover a config or a client variant."""

from __future__ import annotations

import argparse
from typing import Any

from groupcheck.configfile import load_config_file
from groupcheck.symbolic.capabilities import PROVE, Facts, config_facts, refusal
from model.presets import preset


def chosen_config(args: argparse.Namespace) -> Any:
    """The config ``--config`` or ``--preset`` names (None: neither, the defaults of
    ``Config``)."""
    if args.config is not None:
        return load_config_file(args.config)
    if args.preset is not None:
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


def family_of(config: Any) -> str:
    """The protocol family of ``config`` (None: the defaults of ``Config``, KIP-848)."""
    return "consumer" if config is None else str(config.protocol)


def outside_scope(config: Any, *, epochs: bool = False) -> str | None:
    """Why the symbolic relation does not cover ``config`` (None: it does): the reason
    ``prove`` and ``prove --agreement`` refuse it with (``epochs``: kept for callers; the
    KIP-1251 assignment epochs and their history are in the relation). The rows of the
    capability table that read the config alone (``symbolic.capabilities``)."""
    return refusal(PROVE, family_of(config), "proof", Facts(frozenset(config_facts(config))))

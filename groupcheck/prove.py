"""``groupcheck prove`` and ``explore --engine bmc`` live in ``groupcheck.symbolic``
(``prove_cmd``, ``bmc_cmd``, ``classic_cmd``, ``lasso_cmd``, ``runs``; what they refuse is
the one table of ``symbolic.capabilities``). The names this module held before the split are
re-exported here for the code and tests that import them."""

from __future__ import annotations

from groupcheck.symbolic.bmc_cmd import cmd_bmc
from groupcheck.symbolic.capabilities import UNSTATED_HARM
from groupcheck.symbolic.lasso_cmd import lasso_row
from groupcheck.symbolic.prove_cmd import (
    DEFAULT_REACH,
    cmd_prove,
    prove_document,
    register,
)
from groupcheck.symbolic.runs import bmc_doc as _bmc_doc
from groupcheck.symbolic.runs import initial_group_epoch as _initial_group_epoch
from groupcheck.symbolic.runs import write_lifted as _write_lifted
from groupcheck.symbolic.scope import classic_client_refusal, outside_scope

__all__ = [
    "DEFAULT_REACH",
    "UNSTATED_HARM",
    "_bmc_doc",
    "_initial_group_epoch",
    "_write_lifted",
    "classic_client_refusal",
    "cmd_bmc",
    "cmd_prove",
    "lasso_row",
    "outside_scope",
    "prove_document",
    "register",
]

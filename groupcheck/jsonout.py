"""The ``--json`` documents of ``explore``, ``validate``, ``prove`` and ``mutants``: a
contract for CI (docs/json.md; the JSON Schemas in ``docs/json/``).

Every document is one JSON object on stdout with ``"schema"`` (which document it is:
``groupcheck-explore``, ``groupcheck-validate``, ``groupcheck-prove``,
``groupcheck-mutants``, or ``groupcheck-error``) and ``"version"`` (:data:`VERSION`,
raised when a field is removed or changes meaning; added fields keep it). When a command
stops without its report — bad input, a user's code failing, the budget's watchdog, an
internal error — it prints an error document, one shape for every command
(:func:`error_document`), and still says the one line on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

VERSION = 1
"""The version of every document's schema (docs/json.md, "Versions")."""

COMMANDS = ("explore", "validate", "prove", "mutants")
"""The commands whose ``--json`` output follows a schema of docs/json/."""

ERROR_SCHEMA = "groupcheck-error"

ERROR_RESULTS = ("malformed", "user code error", "inconclusive", "internal-error")
"""An error document's ``result``: bad input or usage (exit 2), the user's code failed
(8), the budget's watchdog stopped the work (3), groupcheck failed (4)."""


def schema_name(command: str) -> str:
    """The ``"schema"`` of ``command``'s report."""
    return f"groupcheck-{command}"


def document(command: str, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as ``command``'s report: ``schema`` and ``version`` first."""
    return {"schema": schema_name(command), "version": VERSION, **doc}


def emit(command: str, doc: dict[str, Any]) -> None:
    """Print ``command``'s report ``doc`` on stdout."""
    print(json.dumps(document(command, doc), indent=1))


def error_document(
    command: str | None, result: str, error: str, status: int, **extra: Any
) -> dict[str, Any]:
    """The one shape of a command that stopped without its report: ``result`` (one of
    :data:`ERROR_RESULTS`), ``error`` (the line said on stderr, without the program's
    name), ``exit`` (the exit status), and ``extra`` fields (a user's code failing: the
    rule, file, step and path)."""
    if result not in ERROR_RESULTS:
        raise ValueError(f"unknown error result {result!r}")
    return {
        "schema": ERROR_SCHEMA,
        "version": VERSION,
        "command": command,
        "result": result,
        "error": error,
        "exit": status,
        **extra,
    }


def emit_error(command: str | None, result: str, error: str, status: int, **extra: Any) -> None:
    """Print :func:`error_document` on stdout."""
    print(json.dumps(error_document(command, result, error, status, **extra), indent=1))


def requested(argv: Sequence[str]) -> str | None:
    """When the command line could not be parsed: the command (of :data:`COMMANDS`) if
    the line asks for ``--json`` (or an abbreviation argparse would accept), else None."""
    command = None
    wants = False
    for token in argv:
        if token == "--":
            break
        if command is None and not token.startswith("-"):
            command = token
            continue
        name = token.split("=", 1)[0]
        if len(name) >= 3 and "--json".startswith(name):
            wants = True
    return command if wants and command in COMMANDS else None

"""Unexpected exceptions: one line for the user, the traceback in a file.

No command ends in a traceback on the terminal: ``groupcheck.cli.main`` catches what no
handler expected, saves the traceback with :func:`save_traceback` and prints one line
naming the exception and the file (exit status 4, ``INTERNAL_ERROR``), so an internal
error is never mistaken for a finding (1) or for bad input (2).
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

CRASH_DIR_ENV = "GROUPCHECK_CRASH_DIR"
"""Where saved tracebacks go (default: ``<temp dir>/groupcheck-crashes``)."""


def crash_dir() -> Path:
    """The directory that receives saved tracebacks."""
    configured = os.environ.get(CRASH_DIR_ENV)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "groupcheck-crashes"


def save_traceback(error: BaseException, command: str = "") -> Path | None:
    """Write ``error``'s traceback (with the command line) to a new file; its path, or
    None when no file could be written."""
    try:
        directory = crash_dir()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        fd, name = tempfile.mkstemp(
            dir=directory, prefix=f"traceback-{stamp}-{os.getpid()}-", suffix=".txt"
        )
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            if command:
                f.write(f"command: {command}\n\n")
            f.write("".join(traceback.format_exception(error)))
        return Path(name)
    except OSError:
        return None


def one_line(error: BaseException) -> str:
    """``Type: message`` on one line, at most 300 characters, printable."""
    text = " ".join(str(error).split()) or "(no message)"
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(error).__name__}: {text}"

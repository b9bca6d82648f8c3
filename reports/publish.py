"""Publishing output directories atomically, without destroying what groupcheck did not write.

Every command that writes a directory of results (``explore`` run directories, ``render``,
``pipeline report``) builds it under a temporary name next to its final place and moves
it into place in one step, so a directory under its final name is always complete:

- a new name, or an empty directory, is taken by a rename;
- a directory that groupcheck published before (it holds the :data:`MARKER` file) is
  exchanged atomically with the new one (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere
  the old one is renamed aside first, so the final name is briefly absent but never
  partial), then the old one is deleted;
- anything else — a file, or a directory with content groupcheck did not write — is
  refused with :class:`OutputError` before any work starts.

Temporary directories are named ``.partial-<pid>-…``: an interrupted run (Ctrl-C, SIGTERM,
which ``groupcheck.cli`` turns into an exception) removes its own on the way out, and
:func:`sweep_partials` removes those of processes that no longer run (SIGKILL).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from model.status import ConfigError

MARKER = ".groupcheck"
"""The file in every directory groupcheck publishes: what wrote it (JSON)."""

PARTIAL = ".partial-"


class OutputError(ConfigError):
    """An output location groupcheck may not write (exit status 2, one line)."""


def check_target(final: Path) -> None:
    """Refuse ``final`` unless it is absent, an empty directory or a directory groupcheck
    published; refuse a parent that is not a writable directory."""
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise OutputError(f"{final}: exists and is not a directory; choose another output path")
    if final.is_dir() and not owned(final) and _has_entries(final):
        raise OutputError(
            f"{final}: exists, is not empty and was not written by groupcheck; "
            "choose a new or empty directory"
        )
    parent = final.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{parent}: cannot create the directory ({e.strerror})") from None
    if not parent.is_dir():
        raise OutputError(f"{parent}: not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{parent}: not writable")


def owned(directory: Path) -> bool:
    """Whether ``directory`` was published by groupcheck (holds :data:`MARKER`)."""
    return (directory / MARKER).is_file()


def marker_info(directory: Path) -> dict[str, object]:
    """What the marker of a published directory says (empty when unreadable)."""
    try:
        doc = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _has_entries(directory: Path) -> bool:
    with os.scandir(directory) as it:
        return any(True for _ in it)


@contextlib.contextmanager
def publishing(final: Path, **info: object) -> Iterator[Path]:
    """Yield an empty temporary directory; when the block ends normally, publish it as
    ``final`` (with a marker holding ``info``). On any exception — Ctrl-C and SIGTERM
    included — the temporary directory is removed and ``final`` is untouched."""
    check_target(final)
    sweep_partials(final.parent)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f"{PARTIAL}{os.getpid()}-"))
    try:
        yield tmp
        (tmp / MARKER).write_text(json.dumps(info, sort_keys=True) + "\n", encoding="utf-8")
        tmp.chmod(0o777 & ~_umask())
        _move_into_place(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _move_into_place(tmp: Path, final: Path) -> None:
    check_target(final)  # nothing appeared under the final name meanwhile
    if not final.exists():
        os.rename(tmp, final)
        return
    if not owned(final):  # an empty directory: rename(2) replaces it
        os.rename(tmp, final)
        return
    if _exchange(tmp, final):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old directory
        return
    aside = Path(tempfile.mkdtemp(dir=final.parent, prefix=f"{PARTIAL}{os.getpid()}-old-"))
    os.rename(final, aside / "old")
    os.rename(tmp, final)
    shutil.rmtree(aside, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where that is unavailable."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_partials(directory: Path) -> list[Path]:
    """Remove the temporary directories that processes which no longer run left in
    ``directory`` (only names groupcheck makes: ``.partial-<pid>-…``); returns them."""
    removed: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not name.startswith(PARTIAL) or not entry.is_dir() or entry.is_symlink():
            continue
        pid_text = name[len(PARTIAL) :].split("-", 1)[0]
        if not pid_text.isdigit() or _running(int(pid_text)):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def write_file_atomic(path: Path, text: str) -> None:
    """Replace the file ``path`` with ``text`` in one step (a temporary file renamed)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

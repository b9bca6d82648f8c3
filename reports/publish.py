"""Publishing output directories atomically, without destroying what groupcheck did not write.

Every command that writes a directory of results (``explore`` run directories, ``render``,
``pipeline report``) builds it under a temporary name next to its final place and moves
it into place in one step, so a directory under its final name is always complete:

- a new name, or an empty directory, is taken by a rename;
- a directory that groupcheck published before (it holds the :data:`MARKER` file) is
  exchanged atomically with the new one (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere
  the old one is renamed aside first, so the final name is briefly absent but never
  partial), then the old one is deleted. The marker lists what the run wrote (its
  ``files``, the manifest): anything else found in the old directory — a file the user
  added — is hard-linked into the new one before the exchange, so it is never deleted; a
  name the new run also wrote, or a file system without hard links, is refused instead.
  Replacing an earlier run is never silent: one note on stderr names the directory, the
  command that published it and when (``groupcheck: note: replaced DIR, the output
  'explore' published at …``), so a user who wanted to keep it learns it is gone —
  a rerun of the same command into the same place is how a user refreshes a result, and
  a run that must be kept goes to another ``--out``;
- anything else — a file, or a directory with content groupcheck did not write — is
  refused with :class:`OutputError` before any work starts.

Temporary directories are named ``.partial-<pid>-…``: an interrupted run (Ctrl-C, SIGTERM,
which ``groupcheck.cli`` turns into an exception) removes its own on the way out, and
:func:`sweep_partials` removes those of processes that no longer run (SIGKILL).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ctypes.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from model.status import ConfigError

GENERATOR = '<meta name="generator" content="groupcheck">'
"""Marks the pages groupcheck writes (``reports.render.html``), so an index it did not
write is never replaced."""
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


def check_new_file(path: Path, option: str) -> None:
    """Refuse ``path`` as a new output file — before any work — when anything is there
    (a file, a directory, a dangling symlink: nothing is replaced) or its directory is
    missing or cannot be written (tried with a probe file, which also finds read-only
    file systems and ACLs that ``os.access`` does not)."""
    if path.exists() or path.is_symlink():
        raise OutputError(f"{option} {path}: exists; give a new file name")
    parent = path.parent
    if not parent.is_dir():
        raise OutputError(f"{option} {path}: directory {str(parent)!r} does not exist")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".groupcheck-probe-{os.getpid()}-")
    except OSError as e:
        raise OutputError(
            f"{option} {path}: directory {str(parent)!r} is not writable ({e.strerror or e})"
        ) from None
    os.close(fd)
    os.unlink(probe)


def check_runs_dir(out: Path, option: str = "--out") -> None:
    """Refuse a directory of run directories (``explore --out``) that holds anything but
    what groupcheck keeps there — directories it published (with :data:`MARKER`), its
    own temporary directories and the ``index.html`` it writes — before any work: a
    user's files are never mixed with runs. A file is refused too; a missing directory is
    fine (it is created)."""
    if out.is_symlink() and not out.is_dir():
        raise OutputError(f"{option} {out}: a dangling symlink; choose another directory")
    if not out.exists():
        return
    if not out.is_dir():
        raise OutputError(f"{option} {out}: exists and is not a directory")
    foreign = []
    with os.scandir(out) as entries:
        for entry in entries:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False) and (
                entry.name.startswith(PARTIAL) or owned(path)
            ):
                continue
            if entry.name == "index.html" and entry.is_file(follow_symlinks=False):
                try:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        if GENERATOR in f.read(4096):
                            continue
                except OSError:
                    pass
            foreign.append(entry.name)
    if foreign:
        shown = ", ".join(repr(name) for name in sorted(foreign)[:3])
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise OutputError(
            f"{option} {out}: holds {shown}{more}, which groupcheck did not write; choose "
            "a new directory or one holding only groupcheck's runs"
        )


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
        doc = {**info, "files": manifest(tmp)}
        (tmp / MARKER).write_text(json.dumps(doc, sort_keys=True) + "\n", encoding="utf-8")
        tmp.chmod(0o777 & ~_umask())
        replaced = _move_into_place(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if replaced is not None:
        # Replacing groupcheck's own earlier output is never silent (issue 38).
        print(f"groupcheck: note: {replaced}", file=sys.stderr)


def replaced_note(final: Path) -> str | None:
    """What publishing into ``final`` would replace, in words — the earlier run's
    command and when its output was published — or None when nothing of an earlier run
    is there (a new name or an empty directory)."""
    if not final.is_dir() or not owned(final):
        return None
    info = marker_info(final)
    command = info.get("command")
    try:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime((final / MARKER).stat().st_mtime))
    except OSError:
        when = "an unknown time"
    what = f"'{command}'" if isinstance(command, str) and command else "an earlier run"
    return f"replaced {final}, the output {what} published at {when}"


def manifest(directory: Path) -> list[str]:
    """Every path under ``directory`` (relative, ``/``-separated, sorted; directories
    too): what a run wrote, recorded in its marker."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        rel = Path(root).relative_to(directory)
        found.extend((rel / name).as_posix() for name in (*dirs, *files))
    return sorted(found)


def unlisted(directory: Path) -> list[str]:
    """The entries of a published ``directory`` that its marker's manifest does not list
    (what someone else put there), top-most only: a directory of them stands for its
    content. A marker without a manifest (written before markers had one) lists all."""
    listed = marker_info(directory).get("files")
    if not isinstance(listed, list):
        return []
    known = set(listed) | {MARKER}
    extra = []
    for root, dirs, files in os.walk(directory):
        rel = Path(root).relative_to(directory)
        for name in sorted(files):
            if (rel / name).as_posix() not in known:
                extra.append((rel / name).as_posix())
        for name in sorted(dirs):
            if (rel / name).as_posix() not in known:
                extra.append((rel / name).as_posix())
        dirs[:] = [d for d in dirs if (rel / d).as_posix() in known]
    return sorted(extra)


def _keep(extra: list[str], old: Path, new: Path) -> None:
    """Hard-link what someone else put in ``old`` into ``new`` (same place), so that
    replacing ``old`` deletes none of it; refuse a name ``new`` also has."""
    for rel in extra:
        src, dst = old / rel, new / rel
        if dst.exists() or dst.is_symlink():
            raise OutputError(
                f"{old}: {rel} was not written by groupcheck, and this run writes that "
                "name too; move it away and run again"
            )
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir() and not src.is_symlink():
                shutil.copytree(src, dst, symlinks=True, copy_function=_link)
            else:
                os.link(src, dst, follow_symlinks=False)
        except OSError as e:
            raise OutputError(
                f"{old}: cannot keep {rel}, which groupcheck did not write, in the new "
                f"output ({e.strerror or e}); move it away and run again"
            ) from None


def _link(src: str, dst: str) -> None:
    os.link(src, dst, follow_symlinks=False)


def _move_into_place(tmp: Path, final: Path) -> str | None:
    """Move ``tmp`` to ``final``; returns what it replaced (:func:`replaced_note`), with
    how many files someone else had added that were kept."""
    check_target(final)  # nothing appeared under the final name meanwhile
    if not final.exists():
        os.rename(tmp, final)
        return None
    if not owned(final):  # an empty directory: rename(2) replaces it
        os.rename(tmp, final)
        return None
    note = replaced_note(final)
    extra = unlisted(final)
    _keep(extra, final, tmp)
    if extra:
        entries = "entry" if len(extra) == 1 else "entries"
        note = f"{note}; kept {len(extra)} {entries} groupcheck did not write"
    if _exchange(tmp, final):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old directory
        return note
    aside = Path(tempfile.mkdtemp(dir=final.parent, prefix=f"{PARTIAL}{os.getpid()}-old-"))
    os.rename(final, aside / "old")
    os.rename(tmp, final)
    shutil.rmtree(aside, ignore_errors=True)
    return note


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


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (one of another user counts; a zombie, which has
    exited and only waits for its parent to collect its status, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # no /proc here: existence is all we can tell
    # The state follows the command name, which is in parentheses and may hold any byte.
    return stat[stat.rfind(")") + 2 : stat.rfind(")") + 3] != "Z"


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
        if not pid_text.isdigit() or running(int(pid_text)):
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


def write_between_markers(target: Path | str, begin: str, end: str, text: str) -> None:
    """Replace what stands between the ``begin`` and ``end`` lines of ``target`` (a doc
    with a generated table) with ``text``, atomically; a file without exactly one of each,
    in that order, is bad input."""
    target = Path(target)
    try:
        doc = target.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"--into {target}: cannot read ({e.strerror})") from None
    if doc.count(begin) != 1 or doc.count(end) != 1 or doc.index(begin) > doc.index(end):
        raise ConfigError(f"--into {target}: needs one {begin} line and one {end} line after it")
    head, rest = doc.split(begin)
    _, tail = rest.split(end)
    write_file_atomic(target, f"{head}{begin}\n{text}{end}{tail}")


def table_command(
    argv: list[str] | None,
    *,
    prog: str,
    description: str,
    begin: str,
    end: str,
    render: Callable[[], str],
) -> int:
    """``python -m <module> [--into FILE]`` of a module whose table a doc carries: print
    ``render()``, or write it between the ``begin`` and ``end`` lines of FILE; bad input is
    one line and status 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "--into", metavar="FILE", help=f"write it between the lines {begin} and {end} of FILE"
    )
    args = parser.parse_args(argv)
    text = render()
    if args.into is None:
        print(text, end="")
        return 0
    try:
        write_between_markers(args.into, begin, end, text)
    except ConfigError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    return 0

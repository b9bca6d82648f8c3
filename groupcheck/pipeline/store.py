"""The output directory of a pipeline job: manifest, parts, completion marker.

::

    DIR/manifest.json         what the job is (kind, plan, fingerprint, the parts' ranges)
    DIR/parts/part-00012.parquet   the rows of part 12, written whole or not at all
    DIR/_SUCCESS.json         written last, when every part is there (with a summary)
    DIR/report/               written by ``groupcheck pipeline report DIR``

Every file is written under a hidden temporary name in its final directory and renamed
into place (``os.replace`` is atomic on POSIX), so a reader sees a part whole or not at
all, and a killed job never leaves a file that looks complete. A rerun with the same plan
skips the parts already there; a rerun with another plan is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from contextlib import suppress
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groupcheck.crash import one_line
from groupcheck.pipeline.errors import PipelineError

if TYPE_CHECKING:
    import pyarrow as pa

MANIFEST = "manifest.json"
SUCCESS = "_SUCCESS.json"
PARTS = "parts"
FORMAT = "groupcheck-pipeline"
VERSION = 1


def part_path(out: Path, index: int) -> Path:
    return out / PARTS / f"part-{index:05d}.parquet"


@lru_cache(maxsize=1)
def _file_mode() -> int:
    """The mode an ordinary new file gets (mkstemp makes 0600 files)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _atomic(path: Path, write: Callable[[str], None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, doc: object) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())

    _atomic(path, write)


def write_parquet_atomic(path: Path, table: pa.Table) -> None:
    import pyarrow.parquet as pq  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    _atomic(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def read_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise PipelineError(f"{path}: missing") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PipelineError(f"{path}: unreadable ({e})") from None
    if not isinstance(doc, dict):
        raise PipelineError(f"{path}: not a JSON object")
    return doc


def prepare(
    out: Path, kind: str, plan: dict[str, Any], fingerprint: str, parts: list[tuple[int, int]]
) -> dict[str, Any]:
    """Create ``out`` with its manifest, or check that an existing ``out`` holds the same
    job (then its finished parts are reused). Returns the manifest in force."""
    manifest_path = out / MANIFEST
    if manifest_path.exists():
        manifest = read_json(manifest_path)
        if manifest.get("format") != FORMAT:
            raise PipelineError(f"{manifest_path}: not a groupcheck pipeline manifest")
        if manifest.get("kind") != kind or manifest.get("fingerprint") != fingerprint:
            raise PipelineError(
                f"{out}: holds the results of 'pipeline {manifest.get('kind')}' with another plan "
                f"(fingerprint {manifest.get('fingerprint')}, this one is {fingerprint}); "
                "use a new --out directory, or the same arguments to resume"
            )
        for tmp in (out / PARTS).glob(".part-*.tmp"):  # left behind by a killed job
            with suppress(OSError):
                tmp.unlink()
        return manifest
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PipelineError(
            f"{out}: exists and is not a pipeline output directory; choose a new --out"
        )
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "fingerprint": fingerprint,
        "plan": plan,
        "parts": [list(p) for p in parts],
    }
    try:
        (out / PARTS).mkdir(parents=True, exist_ok=True)
        write_json_atomic(manifest_path, manifest)
    except OSError as e:
        raise PipelineError(f"{out}: cannot create the output directory ({e.strerror})") from None
    return manifest


def done_parts(out: Path, count: int) -> set[int]:
    """Indices of the parts already committed."""
    done: set[int] = set()
    try:
        names = os.listdir(out / PARTS)
    except FileNotFoundError:
        return done
    for name in names:
        if name.startswith("part-") and name.endswith(".parquet"):
            try:
                i = int(name[5:-8])
            except ValueError:
                continue
            if 0 <= i < count:
                done.add(i)
    return done


def load_complete(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The manifest and success marker of a finished job (an error naming what is missing
    otherwise)."""
    if not out.is_dir():
        raise PipelineError(f"{out}: no such output directory")
    manifest = read_json(out / MANIFEST) if (out / MANIFEST).exists() else None
    if manifest is None or manifest.get("format") != FORMAT:
        raise PipelineError(f"{out}: not a pipeline output directory (no {MANIFEST})")
    if not (out / SUCCESS).exists():
        parts = manifest.get("parts", [])
        done = len(done_parts(out, len(parts)))
        raise PipelineError(
            f"{out}: the {manifest.get('kind')} job is incomplete ({done} of {len(parts)} "
            "parts); rerun it with the same arguments to finish"
        )
    return manifest, read_json(out / SUCCESS)


def read_parts(out: Path, count: int, columns: list[str] | None = None) -> pa.Table:
    """All committed parts, in part order, as one table."""
    import pyarrow as pa  # noqa: PLC0415  pyarrow (the spark extra) only in a task
    import pyarrow.parquet as pq  # noqa: PLC0415  pyarrow (the spark extra) only in a task

    tables = []
    for i in sorted(done_parts(out, count)):
        path = part_path(out, i)
        try:
            tables.append(pq.read_table(path, columns=columns))
        except (OSError, pa.ArrowException) as e:
            # A damaged or truncated part is bad input, named (issue 42), not a crash.
            raise PipelineError(f"{path}: not a readable result part: {one_line(e)}") from None
    if not tables:
        raise PipelineError(f"{out}: no result parts")
    try:
        return pa.concat_tables(tables)
    except pa.ArrowException as e:
        raise PipelineError(f"{out}: result parts of different shapes: {one_line(e)}") from None

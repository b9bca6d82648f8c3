"""Publishing output directories: never destroy what groupcheck did not write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reports.publish import MARKER, OutputError, owned, publishing, sweep_partials


def test_new_directory_is_published_with_a_marker(tmp_path: Path) -> None:
    final = tmp_path / "run"
    with publishing(final, command="test") as tmp:
        (tmp / "a.txt").write_text("1")
        assert not final.exists()
    assert (final / "a.txt").read_text() == "1"
    assert owned(final)


def test_own_directory_is_replaced_whole(tmp_path: Path) -> None:
    final = tmp_path / "run"
    with publishing(final) as tmp:
        (tmp / "old.txt").write_text("old")
    with publishing(final) as tmp:
        (tmp / "new.txt").write_text("new")
    assert sorted(p.name for p in final.iterdir()) == sorted([MARKER, "new.txt"])
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_a_users_directory_is_refused_and_kept(tmp_path: Path) -> None:
    final = tmp_path / "mine"
    final.mkdir()
    (final / "precious.txt").write_text("keep me")
    with pytest.raises(OutputError, match="not written by groupcheck"), publishing(final):
        pytest.fail("the block must not run")
    assert (final / "precious.txt").read_text() == "keep me"


def test_an_empty_directory_is_taken(tmp_path: Path) -> None:
    final = tmp_path / "empty"
    final.mkdir()
    with publishing(final) as tmp:
        (tmp / "x").write_text("x")
    assert (final / "x").is_file()


def test_a_file_is_refused(tmp_path: Path) -> None:
    final = tmp_path / "file"
    final.write_text("data")
    with pytest.raises(OutputError, match="not a directory"), publishing(final):
        pass
    assert final.read_text() == "data"


def test_interrupted_block_leaves_nothing(tmp_path: Path) -> None:
    final = tmp_path / "run"
    with publishing(final) as tmp:
        (tmp / "a").write_text("a")

    def interrupted() -> None:
        with publishing(final) as tmp:
            (tmp / "b").write_text("b")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert (final / "a").is_file()
    assert not (final / "b").exists()


def test_partials_of_dead_processes_are_swept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".partial-{dead.stdout.strip()}-abc"
    stale.mkdir()
    mine = tmp_path / f".partial-{os.getpid()}-xyz"
    mine.mkdir()
    user = tmp_path / ".partial-notes"
    user.mkdir()
    assert sweep_partials(tmp_path) == [stale]
    assert mine.exists()
    assert user.exists()
    assert not stale.exists()

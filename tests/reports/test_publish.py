"""Publishing output directories: never destroy what groupcheck did not write."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reports.publish import (
    MARKER,
    PARTIAL,
    OutputError,
    check_new_file,
    check_runs_dir,
    marker_info,
    owned,
    publishing,
    running,
    sweep_partials,
    unlisted,
)


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


def test_replacing_an_earlier_run_is_never_silent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: a rerun into its own earlier output says which run it replaced (and how
    many of the user's entries it kept); a first run says nothing."""
    final = tmp_path / "run"
    with publishing(final, command="explore") as tmp:
        (tmp / "a.txt").write_text("1")
    assert capsys.readouterr().err == ""
    (final / "mine.txt").write_text("mine")
    with publishing(final, command="render") as tmp:
        (tmp / "a.txt").write_text("2")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    earlier = f"groupcheck: note: replaced {final}, the output 'explore' published at "
    assert err[0].startswith(earlier)
    assert err[0].endswith("; kept 1 entry groupcheck did not write")
    with publishing(final, command="render") as tmp:
        pass
    assert "the output 'render' published at" in capsys.readouterr().err


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


# --------------------------------------------------------------------------- issue 42


def _unwritable_dir(tmp_path: Path) -> Path:
    """A directory this process cannot create files in: a read-only one, or as root
    (whom permissions do not stop) sysfs."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        return ro
    return Path("/sys")


def test_a_rerun_keeps_what_the_user_added_to_its_output(tmp_path: Path) -> None:
    final = tmp_path / "run"
    with publishing(final, command="test") as tmp:
        (tmp / "report.txt").write_text("1")
        (tmp / "pictures").mkdir()
        (tmp / "pictures" / "a.svg").write_text("a")
    assert marker_info(final)["files"] == ["pictures", "pictures/a.svg", "report.txt"]
    (final / "notes.txt").write_text("mine")
    (final / "pictures" / "b.svg").write_text("mine too")
    (final / "drafts").mkdir()
    (final / "drafts" / "d.txt").write_text("draft")
    assert unlisted(final) == ["drafts", "notes.txt", "pictures/b.svg"]
    with publishing(final, command="test") as tmp:
        (tmp / "report.txt").write_text("2")
    assert (final / "report.txt").read_text() == "2"
    assert not (final / "pictures" / "a.svg").exists()  # the old run's own file is gone
    assert (final / "notes.txt").read_text() == "mine"
    assert (final / "pictures" / "b.svg").read_text() == "mine too"
    assert (final / "drafts" / "d.txt").read_text() == "draft"
    assert marker_info(final)["files"] == ["report.txt"]  # the user's files stay unlisted
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_a_rerun_writing_a_name_the_user_took_is_refused(tmp_path: Path) -> None:
    final = tmp_path / "run"
    with publishing(final) as tmp:
        (tmp / "report.txt").write_text("1")
    (final / "extra.txt").write_text("mine")
    with (
        pytest.raises(OutputError, match=r"extra\.txt was not written by groupcheck"),
        publishing(final) as tmp,
    ):
        (tmp / "extra.txt").write_text("the run's")
    assert (final / "extra.txt").read_text() == "mine"
    assert (final / "report.txt").read_text() == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_a_new_file_is_never_an_existing_one_and_its_directory_is_writable(
    tmp_path: Path,
) -> None:
    existing = tmp_path / "t.ndjson"
    existing.write_text('{"format": "groupcheck-trace"}\n')
    with pytest.raises(OutputError, match="exists; give a new file name"):
        check_new_file(existing, "--out")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputError, match="exists"):
        check_new_file(tmp_path / "dangling", "--out")
    with pytest.raises(OutputError, match="does not exist"):
        check_new_file(tmp_path / "no" / "t.ndjson", "--out")
    with pytest.raises(OutputError, match="is not writable"):
        check_new_file(_unwritable_dir(tmp_path) / "t.ndjson", "--out")
    check_new_file(tmp_path / "new.ndjson", "--out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "t.ndjson"]


def test_a_directory_of_runs_holding_a_users_files_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    check_runs_dir(out)  # absent: fine
    out.mkdir()
    with publishing(out / "a-run") as tmp:
        (tmp / "x").write_text("x")
    (out / f"{PARTIAL}1-x").mkdir()
    check_runs_dir(out)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match=r"holds 'notes\.txt', which groupcheck did not write"):
        check_runs_dir(out)
    with pytest.raises(OutputError, match="not a directory"):
        check_runs_dir(out / "notes.txt")


def test_simulate_trace_into_an_unwritable_directory_is_bad_input_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from groupcheck.cli import main

    target = _unwritable_dir(tmp_path) / "t.ndjson"
    argv = ["simulate", "--timed", "--preset", "TINY", "--seed", "1", "--trace", str(target)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"groupcheck: error: --trace {target}: directory {str(target.parent)!r} is not "
        "writable (Permission denied)\n"
    )


def test_a_zombie_is_not_running() -> None:
    """`kafka down` waits until the process it signalled stops running; an exited child
    its parent has not collected yet (a zombie) has stopped."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert running(child.pid)
        child.terminate()
        for _ in range(200):  # wait for the exit without collecting it
            stat = Path(f"/proc/{child.pid}/stat").read_text()
            if stat[stat.rfind(")") + 2] == "Z":
                break
            time.sleep(0.02)
        assert not running(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not running(child.pid)

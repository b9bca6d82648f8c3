"""What the CLI promises a user: configs from files, progress on long work, internal errors
as one line (exit 4), SIGTERM cleans up, outputs never destroy what groupcheck did not
write, and a seeded run's artifacts are the same bytes in every process."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groupcheck import cli
from groupcheck.cli import main
from model.presets import PRESETS

ROOT = Path(__file__).resolve().parents[3]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- --config FILE


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_config_show_round_trips_every_preset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    from groupcheck.configfile import load_config_file

    code, out, _ = run(capsys, "config", "show", name)
    assert code == 0
    (tmp_path / "c.toml").write_text(out)
    assert load_config_file(str(tmp_path / "c.toml")) == PRESETS[name]
    code, out, _ = run(capsys, "config", "show", name, "--json")
    (tmp_path / "c.json").write_text(out)
    assert load_config_file(str(tmp_path / "c.json")) == PRESETS[name]


def test_the_benchmark_configs_are_presets_left_out_of_presets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--preset`` (``config show``, a config file's ``preset``) names the benchmarks'
    configs, the TLA+ configs of the same names (but MUT3_LOSS2); ``PRESETS``, which tests and
    ``--all-presets`` iterate over, leaves them out (an exhaustive search of MUT2_LOSS4
    visits over two million states)."""
    from groupcheck.tla.configs import CONFIGS, SPEC_PERTURBATIONS
    from model.presets import BENCHMARK_PRESETS, preset

    assert set(BENCHMARK_PRESETS) == {"MUT2_LOSS2", "MUT2_LOSS4", "MUT3_LOSS2"}
    assert not set(BENCHMARK_PRESETS) & set(PRESETS)
    for name, config in BENCHMARK_PRESETS.items():
        assert preset(name.lower()) is config
        assert config.perturbations == SPEC_PERTURBATIONS
    # The memory benchmark's MUT3_LOSS2 (10,898,588 states) is not given to TLC.
    for name in ("MUT2_LOSS2", "MUT2_LOSS4"):
        assert CONFIGS[name] is BENCHMARK_PRESETS[name]
    assert "MUT3_LOSS2" not in CONFIGS
    code, out, _ = run(capsys, "config", "show", "MUT2_LOSS4")
    assert code == 0
    assert 'name = "MUT2_LOSS4"' in out
    assert "max_perturbations = 4" in out
    from groupcheck.configfile import load_config_file

    (tmp_path / "loss3.toml").write_text('preset = "MUT2_LOSS4"\nmax_perturbations = 3\n')
    loss3 = load_config_file(str(tmp_path / "loss3.toml"))
    assert (loss3.perturbations, loss3.max_perturbations) == (SPEC_PERTURBATIONS, 3)
    code, _, err = run(capsys, "explore", "--preset", "MUT2_LOSS5")
    assert code == 2
    assert "benchmark presets: MUT2_LOSS2, MUT2_LOSS4, MUT3_LOSS2" in err
    out = _explore_help()
    assert "benchmark presets: MUT2_LOSS2, MUT2_LOSS4, MUT3_LOSS2" in " ".join(out.split())


def _explore_help() -> str:
    """``groupcheck explore --help``'s text."""
    parser = cli.build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return str(sub.choices["explore"].format_help())


def test_config_show_knows_mutant_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "config", "show", "MUT2_CRASH")
    assert code == 0
    assert 'name = "MUT2_CRASH"' in out


def test_a_config_file_drives_simulate_explore_and_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "two.toml"
    config.write_text(
        textwrap.dedent(
            """\
            preset = "TINY"
            name = "TWO"
            max_perturbations = 1
            """
        )
    )
    code, out, _ = run(capsys, "simulate", "--config", str(config), "--seed", "1", "--steps", "5")
    assert code == 0
    assert "--config" in out.splitlines()[0]
    code, out, _ = run(
        capsys,
        "explore",
        "--config",
        str(config),
        "--mutant",
        "assignor-assigns-twice",
        "--no-baseline",
        "--out",
        str(tmp_path / "runs"),
        "--json",
    )
    assert code == 1
    doc = json.loads(out)
    run_dir = Path(doc["trace"]).parent
    assert run_dir.name.startswith("TWO-assignor-assigns-twice-bfs")
    # The run directory carries its config; its reproducer replays it from there.
    replay = subprocess.run(
        ["sh", str(run_dir / "reproduce.sh")],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
        check=False,
    )
    assert replay.returncode == 1, replay.stderr
    assert f"VIOLATION of {doc['property']}" in replay.stdout


@pytest.mark.parametrize(
    ("text", "suffix", "needle"),
    [
        ('preset = "NOPE"\n', ".toml", "preset: unknown preset 'NOPE'"),
        (
            'preset = "TINY"\nheartbeat_interval_ms = "5"\n',
            ".toml",
            "heartbeat_interval_ms: expected an integer",
        ),
        ('preset = "TINY"\ncolour = 1\n', ".toml", "unknown key 'colour'"),
        (
            '[topics]\nfoo = 1\n[[clients]]\nname = "A"\nsubscription = ["bar"]\n',
            ".toml",
            "unknown topic 'bar'",
        ),
        (
            '[topics]\nfoo = 1\n[[clients]]\nname = "A"\n',
            ".toml",
            "clients[0].subscription: expected a list",
        ),
        ('{"preset": "TINY", "preset": "SMALL"}', ".json", ":1:20: key 'preset' given twice"),
        ("preset = ", ".toml", "malformed TOML"),
        ("{}", ".yaml", "name the file *.toml or *.json"),
        ("[topics]\nfoo = 1\n", ".toml", "missing key 'clients'"),
    ],
)
def test_bad_config_file_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, suffix: str, needle: str
) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(text)
    code, out, err = run(capsys, "explore", "--config", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert out == ""
    assert needle in err, err
    assert str(path) in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_preset_and_config_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "explore", "--preset", "TINY", "--config", "x.toml")
    assert code == 2
    assert "not allowed with" in err


# --------------------------------------------------------------------------- progress


def test_progress_lines_also_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["explore", "--preset", "MIGRATION_UPGRADE", "--budget", "3600", "--out", str(tmp_path)]
    code, _, err = run(capsys, *argv)
    assert code == 0
    # The first line at once, whichever engine (--workers: every core by default).
    assert re.search(
        r"^groupcheck: bfs: \d+ states, depth \d+, frontier \d+, \d+ states/s$", err, re.M
    )
    code, _, err = run(capsys, *argv, "--quiet")
    assert code == 0
    assert err == ""


# --------------------------------------------------------------------------- internal errors


def test_an_unexpected_exception_is_one_line_exit_4_with_a_saved_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("model crashed\nwith a second line")

    monkeypatch.setitem(cli.COMMANDS, "simulate", broken)
    monkeypatch.setenv("GROUPCHECK_CRASH_DIR", str(tmp_path))
    code, out, err = run(capsys, "simulate", "--preset", "TINY", "--seed", "1")
    assert code == 4
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("groupcheck: internal error: RuntimeError: model crashed with")
    saved = list(tmp_path.glob("traceback-*.txt"))
    assert len(saved) == 1
    assert str(saved[0]) in lines[0]
    text = saved[0].read_text()
    assert "Traceback" in text
    assert "groupcheck simulate --preset TINY --seed 1" in text


def test_sigterm_while_writing_leaves_no_partial_directory(tmp_path: Path) -> None:
    # The process sends itself SIGTERM while its run directory is being written.
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        import reports.artifacts as artifacts
        from groupcheck.cli import main

        real = artifacts.path_report
        def path_report(*args, **kwargs):
            real(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGTERM)
        artifacts.path_report = path_report
        sys.exit(main(["explore", "--mutant", "assignor-assigns-twice", "--no-baseline", "--quiet",
                       "--out", {str(tmp_path)!r}]))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "terminated" in proc.stderr
    assert "Traceback" not in proc.stderr
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".partial")]
    assert leftovers == []
    assert not any(p.is_dir() for p in tmp_path.iterdir())  # nothing that looks complete


@pytest.mark.parametrize(
    ("signum", "delays"),
    [
        (signal.SIGTERM, (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.6)),
        (signal.SIGINT, (0.2, 0.35, 0.5)),
    ],
)
def test_a_signal_at_any_moment_is_one_line_and_its_status(
    tmp_path: Path, signum: int, delays: tuple[float, ...]
) -> None:
    """Issue 42: a SIGTERM while the parser imports the subcommands (the first ~0.4 s)
    printed a traceback and exited 1. At any delay the process ends with one line and
    128 + the signal's number — or, when the signal comes before the interpreter ran any
    of groupcheck, killed by it with nothing said (the shell's status is the same)."""
    import time

    argv = [sys.executable, "-m", "groupcheck", "explore", "--preset", "SMALL", "--quiet"]
    for i, delay in enumerate(delays):
        proc = subprocess.Popen(
            [*argv, "--out", str(tmp_path / f"out{i}")],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            # pytest-xdist's workers may ignore SIGINT, which a child would inherit
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
        )
        time.sleep(delay)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        what = "terminated" if signum == signal.SIGTERM else "interrupted"
        assert (proc.returncode, err) in {
            (128 + signum, f"groupcheck: {what}\n"),
            (-signum, ""),
        }, (delay, proc.returncode, err)


# --------------------------------------------------------------------------- outputs


def test_explore_out_naming_a_file_is_refused_before_exploring(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "file"
    target.write_text("keep")
    code, out, err = run(
        capsys, "explore", "--mutant", "assignor-assigns-twice", "--out", str(target)
    )
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert target.read_text() == "keep"


def test_explore_never_replaces_a_users_directory_or_index(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "runs"
    users = out / "MUT2-assignor-assigns-twice-bfs-seed0"
    users.mkdir(parents=True)
    (users / "notes.txt").write_text("mine")
    (out / "index.html").write_text("my index")
    code, _, err = run(capsys, "explore", "--mutant", "assignor-assigns-twice", "--out", str(out))
    assert code == 2
    assert "which groupcheck did not write" in err
    assert (users / "notes.txt").read_text() == "mine"
    (users / "notes.txt").unlink()
    users.rmdir()
    # A directory of runs holding a user's file is refused too (README, issue 42).
    code, out_text, err = run(
        capsys, "explore", "--mutant", "assignor-assigns-twice", "--out", str(out)
    )
    assert (code, out_text) == (2, "")
    assert err == (
        f"groupcheck: error: --out {out}: holds 'index.html', which groupcheck did not "
        "write; choose a new directory or one holding only groupcheck's runs\n"
    )
    assert (out / "index.html").read_text() == "my index"
    (out / "index.html").unlink()
    code, _, _ = run(
        capsys, "explore", "--mutant", "assignor-assigns-twice", "--no-baseline", "--out", str(out)
    )
    assert code == 1
    run_dir = out / "MUT2-assignor-assigns-twice-bfs-seed0"
    # A rerun into its own earlier output keeps what the user added there.
    (run_dir / "notes.txt").write_text("mine")
    code, _, _ = run(
        capsys, "explore", "--mutant", "assignor-assigns-twice", "--no-baseline", "--out", str(out)
    )
    assert code == 1
    assert (run_dir / "notes.txt").read_text() == "mine"
    assert (run_dir / "trace.ndjson").is_file()


# --------------------------------------------------------------------------- determinism


def _artifacts(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.iterdir()) if p.is_file()}


def test_a_seeded_run_gives_byte_identical_artifacts_in_any_process(tmp_path: Path) -> None:
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"h{hash_seed}"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "groupcheck",
                "explore",
                "--mutant",
                "revoke-without-waiting",
                "--engine",
                "walk",
                "--seed",
                "3",
                # The reference rules' run (tests/groupcheck/explore/test_baseline.py) is not what
                # this test is about, and no wall-clock budget may cut the minimisation short
                # at a different point in each process.
                "--no-baseline",
                "--budget",
                "3600",
                "--quiet",
                "--json",
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        doc = json.loads(proc.stdout)
        outs.append((doc, _artifacts(Path(doc["trace"]).parent)))
    (doc1, files1), (doc2, files2) = outs
    assert doc1["shortest"] == doc2["shortest"]
    assert files1.keys() == files2.keys()
    assert {"counterexample.json", "index.html", "reproduce.py", "config.toml"} <= files1.keys()
    for name in files1:
        assert files1[name] == files2[name], f"{name} differs between processes"

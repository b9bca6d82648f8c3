"""The capability table of ``prove`` and ``explore --engine bmc``
(groupcheck/symbolic/capabilities.py): every refusal it lists is what the command line says
for a request that meets it (one line, exit 2), every combination it supports gets past
every check to the solver, the rows that stand for a relation's own scope agree with it,
and docs/cli.md renders the table. No Z3 query is answered: ``Solver.check`` raises."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import z3

from groupcheck.cli import main
from groupcheck.mutants import MUTANTS
from groupcheck.symbolic import capabilities as cap
from model.presets import PRESETS

ROOT = Path(__file__).resolve().parents[3]
RULES = str(ROOT / "docs" / "example-project" / "my_rules.py") + ":LATE_ACK"
KERNEL = str(ROOT / "tests" / "data" / "kernel_rules.py") + ":SAME"


class Solving(BaseException):
    """Raised by ``Solver.check``: the request got past every capability check. A
    ``BaseException``, so that ``main`` does not report it as an internal error."""


@pytest.fixture
def no_solving(monkeypatch: pytest.MonkeyPatch) -> None:
    def reached(self: z3.Solver, *args: object) -> z3.CheckSatResult:
        raise Solving

    monkeypatch.setattr(z3.Solver, "check", reached)


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    """Config files no preset is: static members with a regular expression, static members
    with assignment epochs, assignment epochs without auto-commit, a classic config with
    auto-commit."""
    (tmp_path / "static_regex.toml").write_text(
        'preset = "MUT2_REGEX"\n[[clients]]\nname = "A"\nsubscription = []\n'
        'subscribed = true\ninstance_id = "ia"\nregex = "f.*"\n'
    )
    (tmp_path / "epochs_static.toml").write_text(
        'preset = "MUT2_STATIC"\nassignment_epochs = true\n'
    )
    (tmp_path / "epochs.toml").write_text('preset = "MUT2_COMMIT_EPOCHS"\nauto_commit = false\n')
    (tmp_path / "classic_commit.toml").write_text(
        'preset = "MUTC_COOPERATIVE"\nauto_commit = true\n'
    )
    return tmp_path


P = ["prove", "--quiet"]
B = ["explore", "--engine", "bmc", "--quiet"]
Key = tuple[str, str, str, frozenset[str], frozenset[str]]


def key(row: cap.Refusal) -> Key:
    return (row.command, row.family, row.stage, row.when, row.unless)


def k(command: str, family: str, stage: str, *when: str, unless: tuple[str, ...] = ()) -> Key:
    return (command, family, stage, frozenset(when), frozenset(unless))


COORD = cap.COORDINATOR
EXAMPLES: list[tuple[list[str], Key]] = [
    *(
        (
            P + [o] + ([] if o.startswith("--all") else ["1"]),
            k(cap.PROVE, "any", "proof options", o),
        )
        for o in cap.AGREEMENT_ONLY
    ),
    ([*P, "--agreement", "--reach", "2"], k(cap.PROVE, "any", "agreement", cap.ARG_REACH)),
    (
        [*P, "--variant", "strict-commit-epoch"],
        k(cap.PROVE, "any", "proof", cap.V_EPOCHS, unless=(cap.EPOCHS,)),
    ),
    ([*P, "--variant", "sticky-without-generation"], k(cap.PROVE, "any", "proof", cap.V_CLASSIC)),
    ([*P, "--variant", "mixed-admits-when-disabled"], k(cap.PROVE, "any", "proof", cap.V_MIXED)),
    (
        [*P, "--variant", "late-sync-resets-generation"],
        k(cap.PROVE, "any", "proof", cap.V_CLASSIC_CLIENT),
    ),
    ([*P, "--variant", "no-such-mutant"], k(cap.PROVE, "any", "proof", cap.V_NO_CONSUMER)),
    ([*P, "--variant", "client-acks-before-revoking"], k(cap.PROVE, "any", "proof", cap.V_CLIENT)),
    (
        [*P, "--variant", "static-replacement-keeps-both"],
        k(cap.PROVE, "any", "proof", cap.V_STATIC, unless=(cap.STATIC,)),
    ),
    (
        [*P, "--variant", "expire-by-commit-time"],
        k(cap.PROVE, "any", "proof", cap.V_EXPIRY, unless=(cap.EXPIRY,)),
    ),
    (
        [*P, "--variant", "delete-non-empty-group"],
        k(cap.PROVE, "any", "proof", cap.V_DELETION, unless=(cap.DELETION,)),
    ),
    ([*P, "--variant", "reject-epoch-zero-rejoin"], k(cap.PROVE, "any", "proof", cap.V_UNSTATED)),
    (
        [*P, "--variant", "two-runs-in-flight"],
        k(cap.PROVE, "any", "proof", cap.V_OFFLOAD, unless=(cap.OFFLOAD,)),
    ),
    (
        [*P, "--preset", "GROUP_DELETION", "--variant", "install-run-after-deletion"],
        k(cap.PROVE, "any", "proof", cap.V_OFFLOAD_DELETION, unless=(cap.OFFLOAD,)),
    ),
    (
        [*P, "--preset", "MUT2_OFFLOAD", "--variant", "install-run-after-deletion"],
        k(cap.PROVE, "any", "proof", cap.V_OFFLOAD_DELETION, unless=(cap.DELETION,)),
    ),
    ([*P, "--preset", "CLASSIC_EAGER"], k(cap.PROVE, "classic", "proof")),
    ([*P, "--preset", "MIGRATION_UPGRADE"], k(cap.PROVE, "mixed", "proof")),
    (
        [*P, "--config", "{tmp}/epochs_static.toml"],
        k(cap.PROVE, "consumer", "proof", cap.STATIC, cap.EPOCHS),
    ),
    (
        [*P, "--preset", "STATIC", "--clients"],
        k(cap.PROVE, "consumer", "proof", cap.ARG_CLIENTS, cap.STATIC),
    ),
    (
        [*P, "--preset", "OFFSETS_EXPIRY", "--clients"],
        k(cap.PROVE, "consumer", "proof", cap.ARG_CLIENTS, cap.EXPIRY),
    ),
    (
        [*P, "--preset", "ZOMBIE_DELETION", "--clients"],
        k(cap.PROVE, "consumer", "proof", cap.ARG_CLIENTS, cap.DELETION),
    ),
    (
        [*P, "--preset", "OFFLOAD", "--clients"],
        k(cap.PROVE, "consumer", "proof", cap.ARG_CLIENTS, cap.OFFLOAD),
    ),
    (
        [*P, "--preset", "BATCHING", "--clients"],
        k(cap.PROVE, "consumer", "proof", cap.ARG_CLIENTS, cap.BATCHING),
    ),
    ([*B, "--preset", "MUT2", "--rules", RULES], k(cap.BMC, "any", "any", cap.ARG_RULES)),
    ([*P, "--rules", RULES], k(cap.PROVE, "any", "proof", cap.ARG_RULES)),
    (
        [*B, "--preset", "CLASSIC_EAGER", "--rules", KERNEL],
        k(cap.BMC, "classic", "any", cap.ARG_KERNEL),
    ),
    (
        [*B, "--preset", "MIGRATION_UPGRADE", "--rules", KERNEL],
        k(cap.BMC, "mixed", "any", cap.ARG_KERNEL),
    ),
    ([*B, "--mutant", "stamp-request-epoch"], k(cap.BMC, "consumer", "any", cap.V_OUTSIDE)),
    (
        [*B, "--preset", "MUT2", "--mutant", "sticky-without-generation"],
        k(cap.BMC, "consumer", "any", cap.V_NO_CONSUMER),
    ),
    (
        [*B, "--config", "{tmp}/static_regex.toml"],
        k(cap.BMC, "consumer", "any", cap.STATIC, cap.REGEX),
    ),
    (
        [*B, "--config", "{tmp}/epochs_static.toml"],
        k(cap.BMC, "consumer", "any", cap.STATIC, cap.EPOCHS),
    ),
    (
        [*B, "--preset", "STATIC", "--mutant", "client-acks-before-revoking"],
        k(cap.BMC, "consumer", "any", cap.STATIC, cap.V_CLIENT),
    ),
    (
        [*B, "--preset", "MUT2_COMMIT_EPOCHS", "--mutant", "client-acks-before-revoking"],
        k(cap.BMC, "consumer", "any", cap.EPOCHS, cap.V_CLIENT),
    ),
    (
        [*B, "--preset", "BATCHING", "--mutant", "client-acks-before-revoking"],
        k(cap.BMC, "consumer", "any", cap.BATCHING, cap.V_CLIENT),
    ),
    (
        [*B, "--preset", "MUT2_CALLBACKS", "--mutant", "client-acks-before-revoking"],
        k(cap.BMC, "consumer", "safety", cap.V_CLIENT, cap.CALLBACKS, unless=(cap.V_CALLBACK,)),
    ),
    (
        [*B, "--preset", "SMALL", "--mutant", "client-acks-before-revoking"],
        k(cap.BMC, "consumer", "safety", cap.V_CLIENT, cap.AUTO_COMMIT),
    ),
    (
        [*B, "--preset", "MUT2_REGEX", "--mutant", "client-acks-before-revoking"],
        k(cap.BMC, "consumer", "safety", cap.V_CLIENT, cap.REGEX),
    ),
    (
        [*B, "--mutant", "ack-ignored", "--only", "NoServerError"],
        k(cap.BMC, "consumer", "lasso", cap.ARG_ONLY_NOT_CONVERGENCE),
    ),
    (
        [*B, "--preset", "MUT2_CALLBACKS", "--only", "Convergence"],
        k(cap.BMC, "consumer", "lasso", cap.CALLBACKS),
    ),
    (
        [*B, "--preset", "SMALL", "--only", "Convergence"],
        k(cap.BMC, "consumer", "lasso", cap.AUTO_COMMIT),
    ),
    (
        [*B, "--preset", "MUT2_REGEX", "--only", "Convergence"],
        k(cap.BMC, "consumer", "lasso", cap.REGEX),
    ),
    (
        [*B, "--config", "{tmp}/epochs.toml", "--only", "Convergence"],
        k(cap.BMC, "consumer", "lasso", cap.EPOCHS),
    ),
    (
        [*B, "--preset", "STATIC", "--only", "Convergence"],
        k(cap.BMC, "consumer", "lasso", cap.STATIC),
    ),
    (
        [*B, "--mutant", "poll-timeout-keeps-partitions", "--only", "Convergence"],
        k(cap.BMC, "consumer", "lasso", cap.V_POLL),
    ),
    (
        [*B, "--preset", "CLASSIC_EAGER", "--mutant", "stamp-request-epoch"],
        k(cap.BMC, "classic", COORD, cap.V_OUTSIDE),
    ),
    (
        [*B, "--preset", "CLASSIC_EAGER", "--mutant", "ack-ignored"],
        k(cap.BMC, "classic", COORD, cap.V_NO_CLASSIC),
    ),
    (
        [*B, "--preset", "CLASSIC_EAGER", "--mutant", "sticky-without-generation"],
        k(cap.BMC, "classic", COORD, cap.V_ASSIGNOR),
    ),
    (
        [*B, "--mutant", "no-pending-sync-timer", "--only", "NoDoubleMemberAssignment"],
        k(cap.BMC, "classic", "lasso", cap.ARG_ONLY_NOT_CONVERGENCE),
    ),
    (
        [*B, "--preset", "CLASSIC_STATIC", "--mutant", "lost-partitions-kept"],
        k(cap.BMC, "classic", "client layer", cap.STATIC),
    ),
    (
        [*B, "--config", "{tmp}/classic_commit.toml", "--mutant", "lost-partitions-kept"],
        k(cap.BMC, "classic", "client layer", cap.AUTO_COMMIT),
    ),
    (
        [*B, "--preset", "CLASSIC_EAGER", "--mutant", "lost-partitions-kept"],
        k(cap.BMC, "classic", "client layer", cap.CLASSIC_LINK),
    ),
    (
        [*B, "--preset", "MIGRATION_UPGRADE", "--mutant", "stamp-request-epoch"],
        k(cap.BMC, "mixed", "any", cap.V_OUTSIDE),
    ),
    (
        [*B, "--preset", "MIGRATION_UPGRADE", "--mutant", "ack-ignored"],
        k(cap.BMC, "mixed", "any", cap.V_NO_MIXED),
    ),
    ([*B, "--preset", "MIGRATION_OFFLOAD"], k(cap.BMC, "mixed", "any", cap.OFFLOAD)),
    ([*B, "--preset", "MIGRATION_BATCHING"], k(cap.BMC, "mixed", "any", cap.BATCHING)),
]
"""Per row of the table, a command line that meets it."""

UNREACHABLE: dict[Key, str] = {
    k(cap.PROVE, "any", "proof", cap.V_OUTSIDE): "every mutant of transition.OUTSIDE is a "
    "KIP-1251 history rule (transition.HISTORY_VARIANTS), refused by the assignment-epoch "
    "row before",
    k(cap.BMC, "mixed", "any", cap.REGEX): "a mixed config with regular-expression "
    "subscriptions is bad input to the config loader (model/settings.py)",
    k(cap.BMC, "mixed", "any", cap.MIXED_SCOPE): "the other reasons of "
    "mixed_transition.unsupported (a consumer option or perturbation a mixed config lacks) "
    "are bad input to the config loader",
}
"""The rows no command line of this test meets, and why (each still checked below)."""


def pattern(template: str) -> re.Pattern[str]:
    """The lines a row's message template renders to: each field any text."""
    parts = re.split(r"\{[a-z_]+(?:![rs])?\}", template)
    return re.compile("groupcheck: error: " + ".+".join(re.escape(p) for p in parts) + "\n")


def literal(template: str) -> int:
    """How much fixed text a message template has."""
    return len(re.sub(r"\{[a-z_]+(?:![rs])?\}", "", template))


def test_every_row_has_an_example_or_a_reason() -> None:
    keys = [key(row) for row in cap.REFUSALS]
    assert len(keys) == len(set(keys)), "two rows with the same key"
    examples = [ex for _, ex in EXAMPLES]
    assert len(examples) == len(set(examples))
    assert set(examples).isdisjoint(UNREACHABLE)
    assert set(examples) | set(UNREACHABLE) == set(keys)


@pytest.mark.parametrize(
    ("argv", "row_key"), EXAMPLES, ids=lambda x: " ".join(x) if isinstance(x, list) else ""
)
def test_the_cli_refuses_each_row_with_its_message(
    argv: list[str],
    row_key: Key,
    configs: Path,
    tmp_path: Path,
    no_solving: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    row = next(r for r in cap.REFUSALS if key(r) == row_key)
    argv = [a.replace("{tmp}", str(configs)) for a in argv]
    if argv[0] == "explore":
        argv += ["--out", str(tmp_path / "runs")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert pattern(row.message).fullmatch(err), (err, row.message)
    # No other message as specific (as much fixed text) renders to this line: the line is
    # this row's (the rows sharing a message aside).
    others = {r.message for r in cap.REFUSALS if r.message != row.message}
    assert not [
        m for m in others if literal(m) >= literal(row.message) and pattern(m).fullmatch(err)
    ]


def _facts_for(row: cap.Refusal) -> cap.Facts:
    """A request of exactly ``row``'s facts, every message parameter filled."""
    params = dict.fromkeys(
        (
            *("variant", "outside", "known", "harm", "why", "link", "name"),
            *("command", "rules", "rules_why", "family"),
        ),
        "x",
    )
    return cap.Facts(row.when, {**params, "callbacks": "x"})


@pytest.mark.parametrize("row_key", list(UNREACHABLE), ids=str)
def test_a_row_no_command_line_meets_is_still_asked_in_its_place(row_key: Key) -> None:
    row = next(r for r in cap.REFUSALS if key(r) == row_key)
    facts = _facts_for(row)
    assert cap.refusal(row.command, row.family, row.stage, facts) == row.message.format(
        **facts.params
    )


def _chosen(config: object, mutant: object = None) -> object:
    from types import SimpleNamespace

    return SimpleNamespace(config=config, mutant=mutant, rules=None)


def _all_configs() -> Iterator[object]:
    yield from PRESETS.values()
    for mutant in MUTANTS.values():
        yield mutant.mutated_config()


def test_delegated_rows_agree_with_the_relations() -> None:
    """The rows that stand for classic_client_bmc.supported and
    mixed_transition.unsupported refuse exactly the configs those refuse, with their
    reason, on every preset and every mutant's scenario."""
    import argparse

    from invariants.z3.proof.classic_client_bmc import supported
    from invariants.z3.proof.mixed_transition import unsupported

    args = argparse.Namespace(only=None)
    seen = {"classic": 0, "mixed": 0}
    for config in _all_configs():
        facts = cap.bmc_facts(args, _chosen(config))
        if config.protocol == "classic":
            why = supported(config)
            said = cap.refusal(cap.BMC, "classic", "client layer", facts)
            assert said == (
                None
                if why is None
                else f"--engine bmc (classic clients): config {config.name!r}: {why}"
            )
        elif config.protocol == "mixed":
            why = unsupported(config)
            said = cap.refusal(cap.BMC, "mixed", "any", facts)
            assert said == (None if why is None else f"--engine bmc: {why}; explore it instead")
        else:
            continue
        seen[config.protocol] += why is not None
    assert seen["classic"] > 0
    assert seen["mixed"] > 0


CELLS = [
    (command, family, search)
    for (command, family), kinds in cap.SEARCHES.items()
    for search in kinds
    if search != "agreement"
]


def _argv(cell: tuple[str, str, str], preset: str, option: str) -> list[str]:
    from invariants.z3.proof.classic_clients import CLIENT_GOALS

    command, _, search = cell
    if command == cap.PROVE:
        return [*P, "--preset", preset, *(["--clients"] if option == cap.ARG_CLIENTS else [])]
    only = {
        "lasso": ["--only", "Convergence"],
        "client layer": ["--only", next(iter(CLIENT_GOALS))],
    }.get(search, [])
    return [*B, "--preset", preset, *only]


def _request(cell: tuple[str, str, str], config: object, option: str) -> cap.Facts:
    import argparse

    command, _, search = cell
    if command == cap.PROVE:
        args = argparse.Namespace(
            variant=None,
            clients=option == cap.ARG_CLIENTS,
            reach=None,
            all_variants=False,
            all_presets=False,
            walks=None,
            length=None,
            seed=None,
            bfs=None,
            seek=None,
        )
        return cap.prove_facts(args, config)
    only = ["Convergence"] if search == "lasso" else None
    return cap.bmc_facts(argparse.Namespace(only=only), _chosen(config))


def _supported() -> list[tuple[tuple[str, str, str], str, str]]:
    """Per cell and option of the rendered matrix the table supports, the preset of that
    family with that option and the fewest others that the table supports whole."""
    out = []
    for cell in CELLS:
        command, family, search = cell
        for option in ("(none)", *cap.CONFIG_OPTIONS, cap.ARG_CLIENTS):
            if option == cap.ARG_CLIENTS and command != cap.PROVE:
                continue
            asked = frozenset() if option == "(none)" else frozenset({option})
            if cap.first_refusal(command, family, search, asked) is not None:
                continue
            fits = []
            for name, config in PRESETS.items():
                facts = _request(cell, config, option)
                if config.protocol != family or not asked <= facts.facts | {cap.ARG_CLIENTS}:
                    continue
                if cap.first_refusal(command, family, search, facts.facts) is None:
                    fits.append((len(facts.facts), name))
            if fits:
                out.append((cell, option, min(fits)[1]))
    return out


SUPPORTED = _supported()


def test_the_supported_combinations_are_many() -> None:
    """Every cell of the matrix the table supports in part has a preset to show it."""
    assert {cell for cell, _, _ in SUPPORTED} == {
        cell for cell in CELLS if cap.first_refusal(*cell, frozenset()) is None
    }
    assert len(SUPPORTED) >= 25


class Past(BaseException):  # not an error: the run got past every capability check
    """Raised by the first step each search takes after its last capability check."""


FIRST_STEPS = (
    "invariants.z3.proof.induction.invariant_for",  # prove
    "groupcheck.symbolic.bmc_cmd.chosen_goals",  # the KIP-848 safety goals
    "invariants.z3.proof.bmc.universe_of",  # a KIP-848 Convergence lasso
    "groupcheck.symbolic.classic_cmd.run_goals",  # the classic relation and its client layer
    "groupcheck.symbolic.mixed_bmc.run_goals",  # mixed groups
    "invariants.z3.proof.classic_lasso.search_lasso",  # a classic Convergence lasso
)


@pytest.fixture
def stages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stages of the capability table a run asks, in order; the run stops with
    :class:`Past` at the first step after the checks (nothing is unrolled or solved)."""
    from groupcheck.symbolic import bmc_cmd, classic_cmd, lasso_cmd

    asked: list[str] = []
    real = cap.check

    def recording(command: str, family: str, stage: str, facts: cap.Facts) -> None:
        asked.append(stage)
        real(command, family, stage, facts)

    for module in (cap, bmc_cmd, classic_cmd, lasso_cmd):
        monkeypatch.setattr(module, "check", recording)

    def past(*args: object, **kwargs: object) -> None:
        raise Past

    for target in FIRST_STEPS:
        monkeypatch.setattr(target, past)
    return asked


@pytest.mark.parametrize(("cell", "option", "preset"), SUPPORTED, ids=str)
def test_a_supported_combination_gets_past_every_check(
    cell: tuple[str, str, str],
    option: str,
    preset: str,
    tmp_path: Path,
    no_solving: None,
    stages: list[str],
) -> None:
    """A preset with the option, run on the cell's search: every stage on the way to that
    search is asked, none refuses, and the search's first step is reached."""
    command, family, search = cell
    argv = _argv(cell, preset, option)
    if argv[0] == "explore":
        argv += ["--out", str(tmp_path / "runs")]
    with pytest.raises(Past):
        main(argv)
    assert stages == list(cap.SEARCHES[(command, family)][search])


def test_docs_render_the_table() -> None:
    """docs/cli.md holds the table as rendered from the code
    (``python -m groupcheck.symbolic.capabilities --into docs/cli.md`` writes it)."""
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert doc.count(cap.BEGIN) == 1
    assert doc.count(cap.END) == 1
    between = doc.split(cap.BEGIN)[1].split(cap.END)[0]
    assert between == "\n" + cap.render_markdown()

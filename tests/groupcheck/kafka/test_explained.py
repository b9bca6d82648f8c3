"""Explained divergences (``[[explained]]`` in a scenario file; docs/kafka.md "Explained
divergences") on stored captures of the real broker: a validator's violation is shown as
explained only when every finding is the declared divergence. No broker is started."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from groupcheck.kafka.cli import _shown
from groupcheck.kafka.scenario import Explained, explained_by, find, load, scenario_files
from groupcheck.validate.client_mode import validate_client
from model.status import ConfigError

pytestmark = pytest.mark.kafka

CAPTURES = Path(__file__).parent / "captures"
ROOT = Path(__file__).parents[3]


def _findings(report: object) -> list[tuple[str, str]]:
    return [(f.property, f.message) for f in report.violations]  # type: ignore[attr-defined]


def _close_remain(lines: list[str] | None = None) -> tuple[str | None, list[tuple[str, str]]]:
    path = CAPTURES / "explained" / "consumer-close-remain.ndjson"
    lines = lines or path.read_text(encoding="utf-8").splitlines()
    report = validate_client("consumer-close-remain.ndjson", lines)
    findings = _findings(report)
    decls = load(find("consumer-close-remain")).explained
    return explained_by(decls, "client", report.result if findings else "ok", findings), findings


def test_k1_is_explained_on_its_capture() -> None:
    """consumer-close-remain: kafka-clients 4.4.0 leaves on close(REMAIN_IN_GROUP)
    (docs/findings.md K1); the one client-mode finding is the declared one."""
    label, findings = _close_remain()
    assert len(findings) == 1
    assert label == "findings K1"


def test_the_same_divergence_at_another_member_is_not_covered() -> None:
    path = CAPTURES / "explained" / "consumer-close-remain.ndjson"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["clients"] = {k: ("c9" if v == "c2" else v) for k, v in header["clients"].items()}
    label, findings = _close_remain([json.dumps(header), *lines[1:]])
    assert len(findings) == 1
    assert "(c9)" in findings[0][1]
    assert label is None


def test_only_a_violation_whose_every_finding_is_declared_is_explained() -> None:
    decl = Explained("client", "K1", "docs/findings.md", "Client.Divergence", "runs onX", "c2")
    one = ("Client.Divergence", "m (c2): the client runs onX([a])")
    other = ("Client.Divergence", "m (c2): heartbeat request #3: MemberEpoch differs")
    assert explained_by([decl], "client", "violation", [one]) == "findings K1"
    assert explained_by([decl], "client", "violation", [one, other]) is None
    assert explained_by([decl], "client", "ok", []) is None
    assert explained_by([decl], "coordinator", "violation", [one]) is None
    assert explained_by([decl], "client", "violation", [("Safety.X", one[1])]) is None


def test_the_table_shows_explained_only_for_a_covered_violation() -> None:
    assert (
        _shown({"result": "violation", "explained": "findings K1"}, "") == "explained (findings K1)"
    )
    assert _shown({"result": "violation"}, "") == "violation"
    assert _shown({"result": "ok", "explained": "findings K1"}, "") == "ok"


def test_every_shipped_declaration_names_a_row_of_its_doc() -> None:
    for name, path in scenario_files().items():
        for decl in load(path).explained:
            text = (ROOT / decl.doc).read_text(encoding="utf-8")
            row = rf"(^## {re.escape(decl.id)} )|(^\| {re.escape(decl.id)} \|)"
            assert re.search(row, text, re.MULTILINE), (name, decl)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ('validator = "client"\nid = "K1"\ndoc = "docs/findings.md"\nproperty = "P"', "match"),
        ('validator = "x"\nid = "K1"\ndoc = "docs/f.md"\nproperty = "P"\nmatch = "a"', "one of"),
        ('validator = "client"\nid = "K1"\ndoc = "/tmp/f.md"\nproperty = "P"\nmatch = "a"', "doc"),
        (
            'validator = "client"\nid = "K1"\ndoc = "docs/f.md"\nproperty = "P"\nmatch = "("',
            "match",
        ),
        (
            'validator = "client"\nid = "K1"\ndoc = "docs/f.md"\nproperty = "P"\n'
            'match = "a"\nx = 1',
            "x",
        ),
    ],
)
def test_a_bad_declaration_is_refused_in_one_line(tmp_path: Path, entry: str, says: str) -> None:
    text = find("consumer-close-remain").read_text(encoding="utf-8").split("[[explained]]")[0]
    path = tmp_path / "s.toml"
    path.write_text(text + "[[explained]]\n" + entry + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load(path)
    assert "\n" not in str(e.value)
    assert says in str(e.value)
    assert "explained[1]" in str(e.value)


def test_librdkafka_leave_before_release_is_declared_for_batching_0() -> None:
    """batching-0's stored capture: its client-mode findings (m24, m36: the leave before
    the release callback, docs/fidelity.md RK6) are what the scenario declares."""
    with gzip.open(CAPTURES / "librdkafka" / "batching-0.ndjson.gz", "rt") as f:
        lines = f.read().splitlines()
    report = validate_client("batching-0.ndjson", lines)
    decls = load(find("batching-0")).explained
    assert explained_by(decls, "client", "violation", _findings(report)) == "fidelity RK6"


def test_batching_0_loaded_run_2_shows_only_the_declared_leave_before_release() -> None:
    """batching-0, loaded run 2: once m38's callback is judged after the response of its
    millisecond (docs/fidelity.md CC7), its one finding is RK6 at its close, which the
    scenario declares; the same finding at line 1160 in the old order would not be."""
    with gzip.open(CAPTURES / "librdkafka" / "batching-0-loaded-2.ndjson.gz", "rt") as f:
        lines = f.read().splitlines()
    report = validate_client("batching-0-loaded-2.ndjson", lines)
    decls = load(find("batching-0")).explained
    findings = _findings(report)
    assert len(findings) == 1
    assert explained_by(decls, "client", "violation", findings) == "fidelity RK6"
    callback = (
        "Client.Divergence",
        "aP33akMpQ2WqPg/qZ0dByQ (m38): the client runs onPartitionsRevoked([foo-79]) where "
        "the model's client runs no callback (it is STABLE); ...",
    )
    assert explained_by(decls, "client", "violation", [callback]) is None

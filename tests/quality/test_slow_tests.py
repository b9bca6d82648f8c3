"""``tests/slow_tests.txt``, the tests ``make check`` leaves out: every entry names a test
that exists, and the list's reader and refresher (``tests/slowlist.py``) do what they say."""

from __future__ import annotations

import re
from pathlib import Path

from tests.slowlist import SLOW_TESTS, durations, listed, read_entries, refreshed

ROOT = Path(__file__).resolve().parents[2]


def test_every_entry_names_a_test_that_exists() -> None:
    entries = read_entries(SLOW_TESTS.read_text(encoding="utf-8"))
    assert entries, "tests/slow_tests.txt lists nothing"
    stale = []
    for entry in entries:
        module, *names = entry.split("[", 1)[0].split("::")
        path = ROOT / module
        if not (module.startswith("tests/") and path.is_file()):
            stale.append(entry)
            continue
        source = path.read_text(encoding="utf-8")
        for name in names:
            if not re.search(rf"^\s*(?:async )?(?:def|class) {re.escape(name)}\b", source, re.M):
                stale.append(entry)
    assert not stale, f"tests/slow_tests.txt names tests that do not exist: {stale}"
    assert len(set(entries)) == len(entries), "an entry is listed twice"


def test_an_entry_selects_its_module_its_test_or_one_case() -> None:
    case = "tests/invariants/z3/proof/test_proof.py::test_the_invariant_is_proved[defaults]"
    assert listed(case, {"tests/invariants/z3/proof/test_proof.py"})
    assert listed(case, {"tests/invariants/z3/proof/test_proof.py::test_the_invariant_is_proved"})
    assert listed(case, {case})
    assert not listed(
        case, {"tests/invariants/z3/proof/test_proof.py::test_the_invariant_is_proved[other]"}
    )
    assert not listed(case, {"tests/invariants/z3/proof/test_proof.py::test_the_invariant"})
    assert not listed(case, {"tests/invariants/z3/test_pro"})
    assert listed("tests/a.py::TestX::test_y", {"tests/a.py::TestX"})


REPORT = """\
============================= slowest 4 durations =============================
3.00s call     tests/unit/test_a.py::test_slow[x]
1.00s setup    tests/unit/test_a.py::test_setup_heavy
1.00s call     tests/unit/test_a.py::test_setup_heavy
0.50s call     tests/unit/test_a.py::test_fast
1 passed in 5.00s
"""


def test_durations_add_up_setup_call_and_teardown() -> None:
    assert durations(REPORT) == {
        "tests/unit/test_a.py::test_slow[x]": 3.0,
        "tests/unit/test_a.py::test_setup_heavy": 2.0,
        "tests/unit/test_a.py::test_fast": 0.5,
    }


def test_refreshing_adds_the_slow_tests_and_keeps_the_header_and_the_entries() -> None:
    current = "# header\n# more\n\ntests/unit/test_b.py\n"
    text = refreshed(current, REPORT, min_seconds=1.5)
    assert text == (
        "# header\n# more\n\n"
        "tests/unit/test_a.py::test_setup_heavy\n"
        "tests/unit/test_a.py::test_slow[x]\n"
        "tests/unit/test_b.py\n"
    )
    # A test already selected by an entry (its module) is not added again.
    assert refreshed("tests/unit/test_a.py\n", REPORT, 1.5) == "tests/unit/test_a.py\n"

"""docs/invariants.md's generated tables are current: regenerate them with
``python -m reports.catalogue --into docs/invariants.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports import catalogue

DOC = Path(__file__).resolve().parents[2] / "docs" / "invariants.md"


def _between(text: str, begin: str, end: str) -> str:
    assert text.count(begin) == 1, f"one {begin} line"
    assert text.count(end) == 1, f"one {end} line"
    return text.split(begin, 1)[1].split(end, 1)[0].removeprefix("\n")


def test_the_catalogue_table_is_generated_from_the_registry() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert _between(doc, catalogue.BEGIN, catalogue.END) == catalogue.render_markdown(), (
        "docs/invariants.md's catalogue drifted from the registry: run "
        "`python -m reports.catalogue --into docs/invariants.md`"
    )


def test_the_command_writes_the_table_between_the_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "invariants.md"
    target.write_text(f"head\n{catalogue.BEGIN}\nstale\n{catalogue.END}\ntail\n", encoding="utf-8")
    assert catalogue.main(["--into", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == (
        f"head\n{catalogue.BEGIN}\n{catalogue.render_markdown()}{catalogue.END}\ntail\n"
    )
    assert catalogue.main([]) == 0
    assert capsys.readouterr().out == catalogue.render_markdown()
    target.write_text("no markers\n", encoding="utf-8")
    assert catalogue.main(["--into", str(target)]) == 2


def test_the_formula_table_is_printed_from_the_expressions() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert _between(doc, catalogue.FORMULAS_BEGIN, catalogue.FORMULAS_END) == (
        catalogue.render_formulas()
    ), (
        "docs/invariants.md's formulas drifted from the expressions: run "
        "`python -m reports.catalogue --formulas --into docs/invariants.md`"
    )


def test_the_formulas_command_writes_its_own_markers(tmp_path: Path) -> None:
    target = tmp_path / "invariants.md"
    target.write_text(
        f"{catalogue.BEGIN}\nkept\n{catalogue.END}\n"
        f"{catalogue.FORMULAS_BEGIN}\nstale\n{catalogue.FORMULAS_END}\n",
        encoding="utf-8",
    )
    assert catalogue.main(["--formulas", "--into", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == (
        f"{catalogue.BEGIN}\nkept\n{catalogue.END}\n"
        f"{catalogue.FORMULAS_BEGIN}\n{catalogue.render_formulas()}{catalogue.FORMULAS_END}\n"
    )

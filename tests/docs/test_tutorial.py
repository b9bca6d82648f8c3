"""docs/tutorial.md stays true: its Python blocks run, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"


def test_tutorial_code_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 4
    namespace: dict[str, object] = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{DOC}:block{i}", "exec"), namespace)
    assert capsys.readouterr().out.strip() == "GroupStatus.STABLE"


def test_tutorial_config_files_load() -> None:
    import tomllib

    from model.presets import PRESETS
    from model.settings import config_from_mapping

    blocks = re.findall(r"```toml\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 2
    config = config_from_mapping(tomllib.loads(blocks[0]), "tutorial", PRESETS)
    assert config.name == "SMALL_LOSSY"
    extra = tomllib.loads(blocks[1])
    assert config_from_mapping({**tomllib.loads(blocks[0]), **extra}, "tutorial", PRESETS)

"""Config's options by category and family (issue 39): every field declares both at the
field (``model.config.option``), the views split a config by category, a family refuses the
options outside it, and docs/config.md carries the generated table."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest

from groupcheck.config_options import BEGIN, END, field_docstrings, render_markdown
from model.classic.presets import CLASSIC_EAGER
from model.config import (
    CATEGORIES,
    CONSUMER_ONLY_OPTIONS,
    FAMILIES,
    MIXED_CONSUMER_OPTIONS,
    Config,
    Family,
    option_category,
    option_families,
    options_of,
    options_outside,
)
from model.migration.presets import MIGRATION_UPGRADE
from model.presets import TINY
from model.status import ConfigError

ROOT = Path(__file__).resolve().parents[2]
NAMES = [f.name for f in fields(Config)]


@pytest.mark.parametrize("name", NAMES)
def test_every_field_declares_a_category_families_and_a_docstring(name: str) -> None:
    assert option_category(name) in CATEGORIES
    families = option_families(name)
    assert families
    assert families <= frozenset(FAMILIES)
    assert field_docstrings().get(name, "").strip(), f"Config.{name} has no docstring"


def test_the_categories_partition_the_fields() -> None:
    by_category = [n for c in CATEGORIES for n in options_of(c)]
    assert sorted(by_category) == sorted(NAMES)
    assert len(set(by_category)) == len(NAMES)
    assert options_of("rules") == ("rules",)


def test_the_views_split_a_config_by_category_read_only() -> None:
    config = TINY
    views = (config.settings, config.switches, config.bounds, config.expectations)
    keys = [k for view in views for k in view]
    assert sorted(keys) == sorted(n for n in NAMES if n != "rules")
    for view in views:
        for key, value in view.items():
            assert value == getattr(config, key)
    assert config.settings["topics"] == config.topics
    assert config.bounds["max_perturbations"] == config.max_perturbations
    with pytest.raises(TypeError):
        config.bounds["max_perturbations"] = 99  # type: ignore[index]


def test_the_derived_family_lists_keep_the_hand_written_ones() -> None:
    # The lists check_config used before the families were declared at the fields.
    assert set(CONSUMER_ONLY_OPTIONS) >= {
        "compute_target_in_heartbeat",
        "reconcile_while_assigning",
        "rejoin_with_epoch_zero",
        "realign_empty_group",
        "static_rejoin_same_member_id",
        "report_pending_additions",
        "callback_steps",
        "assignment_epochs",
        "assignment_interval_ms",
        "group_assignment_interval_ms",
        "assignor_offload",
        "offload_stale_run",
    }
    assert set(MIXED_CONSUMER_OPTIONS) >= {
        "report_pending_additions",
        "assignment_interval_ms",
        "group_assignment_interval_ms",
        "assignor_offload",
        "offload_stale_run",
    }
    assert set(options_outside("mixed")) >= {
        *(set(CONSUMER_ONLY_OPTIONS) - set(MIXED_CONSUMER_OPTIONS)),
        "live_timers",
        "slow_clients",
        "reorder",
        "auto_commit",
        "warm_start",
    }


NON_DEFAULT: dict[str, object] = {
    "epoch_layout": "kafka-4.3",
    "assignment_interval_ms": 1000,
    "min_assignment_interval_ms": 1,
    "max_assignment_interval_ms": 14000,
    "group_assignment_interval_ms": 0,
    "offload_stale_run": "discard",
    "migration_policy": "upgrade",
}
BASE: dict[Family, Config] = {
    "consumer": TINY,
    "classic": CLASSIC_EAGER,
    "mixed": MIGRATION_UPGRADE,
}


@pytest.mark.parametrize(
    ("family", "name"), [(fam, n) for fam in FAMILIES for n in options_outside(fam)]
)
def test_a_family_refuses_an_option_outside_it(family: Family, name: str) -> None:
    config = BASE[family]
    value = NON_DEFAULT.get(name, not getattr(config, name))
    assert value != getattr(config, name)
    with pytest.raises(ConfigError, match=name):
        replace(config, **{name: value})  # type: ignore[arg-type]


def test_the_docs_table_is_current() -> None:
    doc = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert doc.count(BEGIN) == 1
    assert doc.count(END) == 1
    between = doc.split(BEGIN)[1].split(END)[0]
    assert between == "\n" + render_markdown(), (
        "run: python -m groupcheck.config_options --into docs/config.md"
    )


def test_the_table_has_a_row_per_field() -> None:
    rows = [line for line in render_markdown().splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == [n for c in CATEGORIES for n in options_of(c)]

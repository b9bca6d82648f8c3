"""The session helpers without a JVM: what they read from a Spark Connect session, whose
client has no ``SparkContext``."""

from __future__ import annotations

import os
from typing import Any, cast

import pytest
from pyspark.errors import PySparkNotImplementedError
from pyspark.sql import SparkSession

from groupcheck.pipeline.errors import PipelineError
from groupcheck.pipeline.spark import running_master, session, task_slots


class ConnectConf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)


class ConnectLike:
    """What the pipeline sees of a Spark Connect session: ``sparkContext`` raises."""

    def __init__(self, values: dict[str, str]) -> None:
        self.conf = ConnectConf(values)

    @property
    def sparkContext(self) -> Any:
        raise PySparkNotImplementedError(
            errorClass="JVM_ATTRIBUTE_NOT_SUPPORTED", messageParameters={"attr_name": "x"}
        )


def connect(values: dict[str, str]) -> SparkSession:
    return cast(SparkSession, ConnectLike(values))


def test_connect_session_parallelism_and_master_come_from_its_conf() -> None:
    spark = connect({"spark.master": "local[3]", "spark.default.parallelism": "6"})
    assert task_slots(spark) == 6
    assert running_master(spark) == "local[3]"
    bare = connect({})
    assert task_slots(bare) == max(os.cpu_count() or 1, 1)
    assert running_master(bare) is None
    assert task_slots(connect({"spark.default.parallelism": "lots"})) == max(os.cpu_count() or 1, 1)


def test_a_running_connect_session_is_used_without_a_master(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spark = connect({})
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: spark))
    with session() as got:
        assert got is spark
    with pytest.raises(PipelineError) as caught, session("spark://h:7077"):
        pass
    assert str(caught.value) == (
        "--master spark://h:7077: this process already runs a Spark session on "
        "a Spark Connect server; leave out --master to use it"
    )

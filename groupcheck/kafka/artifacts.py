"""Where ``make setup`` put Apache Kafka's artifacts (``scripts/kafka-setup.sh``): one
directory per version under ``.cache/kafka/`` of the checkout, or under
``$GROUPCHECK_KAFKA_CACHE``, holding ``lib/`` (every jar of the broker and the Java
client) and ``classes/`` (the project's consumer driver, ``kafka/driver/``)."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

DEFAULT_VERSION = "4.4.0"
"""The Kafka version groupcheck follows and ``make setup`` fetches by default."""

_VERSION = re.compile(r"^\d+\.\d+\.\d+$")


class KafkaSetupError(Exception):
    """Something ``make setup`` provides is missing (one line, naming the command that
    installs it)."""


def cache_root() -> Path:
    """The directory holding one directory per fetched Kafka version."""
    env = os.environ.get("GROUPCHECK_KAFKA_CACHE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".cache" / "kafka"


@dataclass(frozen=True)
class Artifacts:
    """One fetched Kafka version."""

    version: str
    home: Path

    @property
    def lib(self) -> Path:
        return self.home / "lib"

    @property
    def classpath(self) -> str:
        """The broker's and the storage tool's classpath (every jar)."""
        return f"{self.lib}/*"

    @property
    def driver_classpath(self) -> str:
        """The Java consumer driver's classpath: the jars and the driver's classes."""
        return f"{self.lib}/*{os.pathsep}{self.home / 'classes'}"


def java() -> str:
    """The ``java`` executable, or KafkaSetupError."""
    found = shutil.which("java")
    if found is None:
        raise KafkaSetupError(
            "java not found: a Kafka broker needs Java 17 or newer (make setup installs it "
            "with apt-get)"
        )
    return found


def artifacts(version: str = DEFAULT_VERSION) -> Artifacts:
    """The fetched artifacts of ``version``, or KafkaSetupError naming the command that
    fetches them."""
    if not _VERSION.match(version):
        raise KafkaSetupError(f"--kafka-version: expected a version such as 4.4.0, not {version!r}")
    home = cache_root() / version
    if not (home / "READY").is_file():
        fetched = sorted(p.name for p in cache_root().glob("*") if (p / "READY").is_file())
        have = f" (fetched: {', '.join(fetched)})" if fetched else ""
        raise KafkaSetupError(
            f"Apache Kafka {version} is not set up in {home}{have}: run "
            f"'make setup KAFKA_VERSIONS={version}'"
        )
    return Artifacts(version, home)


def fetched_versions() -> list[str]:
    """Every version with complete artifacts in the cache."""
    root = cache_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "READY").is_file())

"""``--config FILE``: a config file (TOML or JSON) read into a ``Config``.

The keys are those of ``model.settings`` (the pipeline grid's options plus ``topics``,
``clients`` and ``subscription_choices``, optionally on top of a ``preset``);
``groupcheck config show PRESET`` prints a preset in this format. Every error is one line
naming the file, the key and what is wrong.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from model.config import Config
from model.presets import BENCHMARK_PRESETS, PRESETS
from model.settings import config_from_mapping
from model.status import ConfigError
from model.trace.strict_json import JsonTextError, loads

MAX_CONFIG_BYTES = 1 << 20
"""A config file is at most 1 MiB."""


def read_text_file(path: str, what: str, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of a small input file; ``ConfigError`` (one line) otherwise."""
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a {what}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} ({e.strerror})") from None
    if len(data) > max_bytes:
        raise ConfigError(f"{path}: larger than {max_bytes} bytes; not a {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 ({e.reason})") from None
    return text.removeprefix("\ufeff")


def parse_document(path: str, text: str, what: str) -> object:
    """A TOML or JSON document, by the file's suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        try:
            return loads(text)
        except JsonTextError as e:
            raise ConfigError(f"{path}:{e.line}:{e.column}: {e.reason}") from None
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: malformed TOML: {e}") from None
    raise ConfigError(f"{path}: unknown {what} format; name the file *.toml or *.json")


def load_config_file(path: str) -> Config:
    """The config a TOML or JSON config file describes."""
    text = read_text_file(path, "config file")
    doc = parse_document(path, text, "config file")
    # A file may build on any preset ``--preset`` names, the benchmark presets included.
    presets = {**PRESETS, **BENCHMARK_PRESETS}
    return config_from_mapping(doc, path, presets, default_name=Path(path).stem.upper())

"""Configs as plain data: the mapping behind ``--config FILE`` and ``groupcheck config show``.

A config file (TOML or JSON) holds the keys of :class:`model.config.Config` — ``topics``
(name → partition count), ``absent_topics`` (likewise: topics ``CreateTopic`` may create),
``clients`` (a list of ``{name, subscription, instance_id, server_assignor, subscribed,
regex, rack}``), ``subscription_choices`` and every option a pipeline grid
may set (:data:`OPTION_KINDS`) — and optionally ``preset``, a preset whose values the other
keys override. ``kafka_version`` with a preset takes that version's rules
(``model.config.with_kafka_version``) wherever the file does not set the option. Every
value is checked; an error names the key (``clients[1].subscription``) and what is wrong.
Pure: the caller reads the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from model.config import ClientSpec, Config, with_kafka_version
from model.status import ConfigError
from model.versions import OFF

_NOT_OPTIONS = frozenset(
    {"name", "topics", "absent_topics", "clients", "subscription_choices", "rules"}
)
CLIENT_KEYS = (
    "name",
    "subscription",
    "instance_id",
    "server_assignor",
    "subscribed",
    "regex",
    "rack",
    "assignors",
    "kip429",
    "bounces",
    "group_protocol",
    "alt_instance_id",
)


def _option_kinds() -> dict[str, str]:
    kinds: dict[str, str] = {}
    for f in fields(Config):
        if f.name in _NOT_OPTIONS:
            continue
        default = OFF.get(f.name, f.default)  # a version-dependent option: its kind
        if isinstance(default, bool):
            kinds[f.name] = "bool"
        elif isinstance(default, int):
            kinds[f.name] = "int"
        elif isinstance(default, str):
            kinds[f.name] = "str"
        elif isinstance(default, frozenset | tuple) or f.name == "required_witnesses":
            kinds[f.name] = "strings"
        elif f.name == "max_rebalance_steps":
            kinds[f.name] = "int"
    return kinds


OPTION_KINDS: dict[str, str] = _option_kinds()
"""Option name → ``bool`` | ``int`` | ``str`` | ``strings`` (a list of names): the
``Config`` fields a config file or a pipeline grid may set besides topics and clients."""

CONFIG_KEYS = (
    "name",
    "preset",
    "topics",
    "absent_topics",
    "clients",
    "subscription_choices",
    *OPTION_KINDS,
)


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def option_value(name: str, value: object, where: str) -> Any:
    """``value`` checked against the kind of option ``name``, as ``Config`` stores it."""
    kind = OPTION_KINDS[name]
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {_kind(value)}")
        return value
    if kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{where}: expected an integer, got {_kind(value)}")
        return value
    if kind == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {_kind(value)}")
        return value
    names = _strings(value, where)
    return frozenset(names) if name == "perturbations" else tuple(names)


def _strings(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of names, got {_kind(value)}")
    return list(value)


def _table(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table of keys, got {_kind(value)}")
    return value


def _topics(value: object, where: str) -> tuple[tuple[str, int], ...]:
    table = _table(value, where)
    out: list[tuple[str, int]] = []
    for topic, count in table.items():
        if not isinstance(count, int) or isinstance(count, bool):
            raise ConfigError(f"{where}.{topic}: expected a partition count, got {_kind(count)}")
        out.append((topic, count))
    return tuple(out)


def _client(value: object, where: str) -> ClientSpec:
    table = _table(value, where)
    unknown = sorted(set(table) - set(CLIENT_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(CLIENT_KEYS)}")
    name = table.get("name")
    if not isinstance(name, str):
        raise ConfigError(f"{where}.name: expected a string, got {_kind(name)}")
    subscription = _strings(table.get("subscription"), f"{where}.subscription")
    optional: dict[str, str | None] = {}
    for key in (
        "instance_id",
        "server_assignor",
        "regex",
        "rack",
        "group_protocol",
        "alt_instance_id",
    ):
        item = table.get(key)
        if item is not None and not isinstance(item, str):
            raise ConfigError(f"{where}.{key}: expected a string, got {_kind(item)}")
        optional[key] = item
    flags: dict[str, bool] = {}
    for key, default in (("subscribed", True), ("kip429", True)):
        flag = table.get(key, default)
        if not isinstance(flag, bool):
            raise ConfigError(f"{where}.{key}: expected true or false, got {_kind(flag)}")
        flags[key] = flag
    classic: dict[str, Any] = {}
    if "assignors" in table:
        classic["assignors"] = tuple(_strings(table["assignors"], f"{where}.assignors"))
    if "bounces" in table:
        bounces = table["bounces"]
        if not isinstance(bounces, list):
            raise ConfigError(f"{where}.bounces: expected a list of assignor lists")
        classic["bounces"] = tuple(
            tuple(_strings(b, f"{where}.bounces[{i}]")) for i, b in enumerate(bounces)
        )
    return ClientSpec(
        name=name,
        subscription=tuple(subscription),
        instance_id=optional["instance_id"],
        server_assignor=optional["server_assignor"],
        subscribed=flags["subscribed"],
        regex=optional["regex"],
        rack=optional["rack"],
        kip429=flags["kip429"],
        group_protocol=optional["group_protocol"],  # type: ignore[arg-type]  # checked by Config
        alt_instance_id=optional["alt_instance_id"],
        **classic,
    )


def config_from_mapping(
    doc: object, where: str, presets: Mapping[str, Config], default_name: str = "CUSTOM"
) -> Config:
    """The ``Config`` a config document describes (see the module docstring); ``presets``
    are the names ``preset`` may take. Raises ``ConfigError`` naming ``where`` and the key."""
    table = _table(doc, where)
    unknown = sorted(set(table) - set(CONFIG_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(CONFIG_KEYS)}"
        )
    changes: dict[str, Any] = {}
    base_name = table.get("preset")
    if base_name is not None:
        if not isinstance(base_name, str) or base_name.upper() not in presets:
            raise ConfigError(
                f"{where}: preset: unknown preset {base_name!r}; known: {', '.join(presets)}"
            )
        base: Config | None = presets[base_name.upper()]
    else:
        base = None
        missing = [k for k in ("topics", "clients") if k not in table]
        if missing:
            raise ConfigError(f"{where}: missing key {missing[0]!r} (or name a 'preset')")
    name = table.get("name", base.name + "-custom" if base is not None else default_name)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: name: expected a non-empty string")
    changes["name"] = name
    if "topics" in table:
        changes["topics"] = _topics(table["topics"], f"{where}: topics")
    if "absent_topics" in table:
        changes["absent_topics"] = _topics(table["absent_topics"], f"{where}: absent_topics")
    if "clients" in table:
        clients = table["clients"]
        if not isinstance(clients, list):
            raise ConfigError(f"{where}: clients: expected a list of tables, got {_kind(clients)}")
        changes["clients"] = tuple(
            _client(c, f"{where}: clients[{i}]") for i, c in enumerate(clients)
        )
    if "subscription_choices" in table:
        choices = table["subscription_choices"]
        if not isinstance(choices, list):
            raise ConfigError(f"{where}: subscription_choices: expected a list of lists")
        changes["subscription_choices"] = tuple(
            tuple(_strings(c, f"{where}: subscription_choices[{i}]")) for i, c in enumerate(choices)
        )
    for key in OPTION_KINDS:
        if key in table:
            changes[key] = option_value(key, table[key], f"{where}: {key}")
    try:
        if base is not None and "kafka_version" in changes:
            # Another version: its rules, but for the options the file sets.
            version = changes.pop("kafka_version")
            return with_kafka_version(base, version, **changes)
        if base is not None:
            return replace(base, **changes)
        return Config(**changes)
    except ConfigError as e:
        raise ConfigError(f"{where}: {_without_prefix(str(e))}") from None


def _without_prefix(message: str) -> str:
    """``check_config``'s message without its ``config 'NAME': `` prefix."""
    if message.startswith("config ") and ": " in message:
        return message.split(": ", 1)[1]
    return message


def config_to_mapping(config: Config) -> dict[str, Any]:
    """Every setting of ``config`` (except its rules) as plain data, in field order; sets
    become sorted lists, so the same config always gives the same text."""
    out: dict[str, Any] = {"name": config.name, "topics": dict(config.topics)}
    if config.absent_topics:
        out["absent_topics"] = dict(config.absent_topics)
    clients = []
    for c in config.clients:
        client: dict[str, Any] = {"name": c.name, "subscription": list(c.subscription)}
        if c.instance_id is not None:
            client["instance_id"] = c.instance_id
        if c.server_assignor is not None:
            client["server_assignor"] = c.server_assignor
        client["subscribed"] = c.subscribed
        if c.regex is not None:
            client["regex"] = c.regex
        if c.rack is not None:
            client["rack"] = c.rack
        if c.group_protocol is not None:
            client["group_protocol"] = c.group_protocol
        if c.alt_instance_id is not None:
            client["alt_instance_id"] = c.alt_instance_id
        if config.protocol == "classic" or c.group_protocol == "classic":
            client["assignors"] = list(c.assignors)
            client["kip429"] = c.kip429
            if c.bounces:
                client["bounces"] = [list(b) for b in c.bounces]
        clients.append(client)
    out["clients"] = clients
    out["subscription_choices"] = [list(c) for c in config.subscription_choices]
    for key, kind in OPTION_KINDS.items():
        value = getattr(config, key)
        if value is None:
            continue  # required_witnesses: every witness
        if key == "migration_policy" and config.protocol != "mixed":
            continue  # read only by a mixed config
        if kind == "strings":
            value = sorted(value) if isinstance(value, frozenset) else list(value)
        out[key] = value
    return out


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        escaped = "".join(ch if ch.isprintable() else _toml_escape(ch) for ch in escaped)
        return f'"{escaped}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _toml_key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else _toml_value(key)


def config_to_toml(config: Config) -> str:
    """``config`` as a TOML config file (``groupcheck config show``)."""
    data = config_to_mapping(config)
    lines = [f"# groupcheck config: {config.name}", f"name = {_toml_value(data['name'])}"]
    for key, value in data.items():
        if key not in ("name", "topics", "absent_topics", "clients"):
            lines.append(f"{key} = {_toml_value(value)}")
    for table in ("topics", "absent_topics"):
        if table in data:
            lines += ["", f"[{table}]"]
            lines += [f"{_toml_key(t)} = {n}" for t, n in data[table].items()]
    for client in data["clients"]:
        lines += ["", "[[clients]]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in client.items()]
    return "\n".join(lines) + "\n"

"""Hand-written trace lines for validator tests, independent of the model's encoder."""

from __future__ import annotations

import json
import random

from model import system
from model.config import Config
from model.path import Path
from model.trace import FORMAT


def header(topics: dict[str, int] | None = None) -> str:
    """A consumer-protocol trace header (default: topic ``foo`` with 2 partitions)."""
    return json.dumps(
        {"format": FORMAT, "version": 1, "protocol": "consumer", "topics": topics or {"foo": 2}}
    )


def event(kind: str, source: str, payload: dict[str, object]) -> str:
    """One event of another kind (``Crash``, ``SessionTimeout`` …)."""
    return json.dumps({"seq": 0, "ts": None, "source": source, "kind": kind, "payload": payload})


def heartbeat(
    client: str, body: dict[str, object], request: bool, incarnation: int = 0, connection: int = 0
) -> str:
    """One delivered ConsumerGroupHeartbeat request or response of ``client``."""
    return json.dumps(
        {
            "seq": 0,
            "ts": None,
            "source": "network",
            "kind": "DeliverMessage",
            "payload": {
                "client": client,
                "incarnation": incarnation,
                "connection": connection,
                "direction": "request" if request else "response",
                "api": "ConsumerGroupHeartbeat",
                "body": body,
            },
        }
    )


def progress_walk(
    config: Config, seed: int, steps: int = 80, perturb: bool = False, idle: str = "perturb"
) -> Path:
    """A seeded random walk of the model: progress actions only unless ``perturb``; when
    none is enabled, ``idle="perturb"`` takes a perturbation and ``idle="stop"`` ends."""
    rng, state, actions = random.Random(seed), system.initial(config), []
    for _ in range(steps):
        enabled = [a for a in system.enabled(state, config) if perturb or not a.PERTURBATION]
        if not enabled and idle == "perturb":
            enabled = list(system.enabled(state, config))
        if not enabled:
            break
        action = enabled[rng.randrange(len(enabled))]
        actions.append(action)
        state = system.step(state, action, config)
    return Path(config, tuple(actions))

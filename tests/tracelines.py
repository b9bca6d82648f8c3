"""Hand-written trace lines for validator tests, independent of the model's encoder."""

from __future__ import annotations

import json

from model.trace import FORMAT


def header(topics: dict[str, int] | None = None) -> str:
    """A consumer-protocol trace header (default: topic ``foo`` with 2 partitions)."""
    return json.dumps(
        {"format": FORMAT, "version": 1, "protocol": "consumer", "topics": topics or {"foo": 2}}
    )


def heartbeat(client: str, body: dict[str, object], request: bool) -> str:
    """One delivered ConsumerGroupHeartbeat request or response of ``client``."""
    return json.dumps(
        {
            "seq": 0,
            "ts": None,
            "source": "network",
            "kind": "DeliverMessage",
            "payload": {
                "client": client,
                "incarnation": 0,
                "connection": 0,
                "direction": "request" if request else "response",
                "api": "ConsumerGroupHeartbeat",
                "body": body,
            },
        }
    )

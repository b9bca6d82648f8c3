"""A KIP-848 consumer (librdkafka, ``group.protocol=consumer``) in a process of its own.

    python consumer.py BOOTSTRAP NAME SECONDS

Polls for SECONDS, prints its assignment, then closes (a clean leave). Prints
``assigned`` as soon as it has partitions, so a test can kill it at a known point.
"""

from __future__ import annotations

import sys
import time

from confluent_kafka import Consumer


def main() -> None:
    bootstrap, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "groupcheck",
            "group.protocol": "consumer",
            "client.id": name,
            "log_level": 0,
        }
    )
    consumer.subscribe(["foo"])
    said = False
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        consumer.poll(0.05)
        if not said and consumer.assignment():
            print("assigned", flush=True)
            said = True
    print("final", sorted(p.partition for p in consumer.assignment()), flush=True)
    consumer.close()


if __name__ == "__main__":
    main()

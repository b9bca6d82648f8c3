"""A librdkafka consumer in a process of its own: KIP-848 (``group.protocol=consumer``) by
default, or the classic protocol with a client-side assignor.

    python consumer.py BOOTSTRAP NAME SECONDS [classic STRATEGY | slow-assign DELAY | on-cue]

Polls for SECONDS (or until SIGTERM), prints its assignment, then closes (a clean leave).
Prints ``assigned`` as soon as it has partitions, so a test can kill it at a known point,
and ``owns [0, 1]`` each time its assignment changes after that. With
``classic STRATEGY`` it joins with JoinGroup/SyncGroup (``group.protocol=classic``,
``partition.assignment.strategy=STRATEGY``), commits offset 0 of what it owns each time
its assignment changes (an OffsetCommit at its generation), and has a 3 s session
timeout (the mock holds a first JoinGroup 3 s, and expires a member whose session ends
first) and a 250 ms heartbeat interval. With ``slow-assign DELAY`` its rebalance callback
takes DELAY seconds over the first assignment that gives it partitions (``applying
[2, 3]`` when it starts; librdkafka applies the assignment when the callback returns), as
an application that prepares state for its new partitions would. With ``on-cue`` it
prints ``ready`` once created and subscribes (joins) only when a line arrives on its
standard input, so a test can time the join without waiting for a process to start.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition


def main() -> None:
    bootstrap, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    config: dict[str, str | int] = {
        "bootstrap.servers": bootstrap,
        "group.id": "groupcheck",
        "group.protocol": "consumer",
        "client.id": name,
        "log_level": 0,
    }
    classic = len(sys.argv) > 4 and sys.argv[4] == "classic"
    if classic:
        config.update(
            {
                "group.protocol": "classic",
                "partition.assignment.strategy": sys.argv[5],
                "session.timeout.ms": 3000,
                "heartbeat.interval.ms": 250,
            }
        )
    consumer = Consumer(config)
    slow = [float(sys.argv[5])] if len(sys.argv) > 5 and sys.argv[4] == "slow-assign" else []

    def on_assign(_consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if partitions and slow:
            print("applying", sorted(p.partition for p in partitions), flush=True)
            time.sleep(slow.pop())

    if sys.argv[4:] == ["on-cue"]:
        print("ready", flush=True)
        sys.stdin.readline()
    consumer.subscribe(["foo"], on_assign=on_assign)
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
    said = False
    owns: list[int] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop:
        consumer.poll(0.05)
        if not said and consumer.assignment():
            print("assigned", flush=True)
            said = True
        now = sorted(p.partition for p in consumer.assignment())
        if said and now != owns:
            owns = now
            print("owns", owns, flush=True)
            if classic and owns:
                offsets = [TopicPartition("foo", p, 0) for p in owns]
                # A commit the coordinator refuses (a rebalance started) raises.
                with contextlib.suppress(KafkaException):
                    consumer.commit(offsets=offsets, asynchronous=False)
    print("final", sorted(p.partition for p in consumer.assignment()), flush=True)
    consumer.close()


if __name__ == "__main__":
    main()

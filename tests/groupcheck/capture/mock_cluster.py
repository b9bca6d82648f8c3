"""A librdkafka mock cluster (KIP-848 coordinator) in a process of its own, through the
``rd_kafka_mock_*`` C API of the library bundled with confluent-kafka. Prints the
bootstrap address, then serves until killed.

    python mock_cluster.py TOPIC PARTITIONS SESSION_TIMEOUT_MS HEARTBEAT_INTERVAL_MS
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import time

import confluent_kafka


def library() -> ctypes.CDLL:
    base = os.path.dirname(confluent_kafka.__file__)
    found = sorted(glob.glob(os.path.join(base, "..", "confluent_kafka.libs", "librdkafka*.so*")))
    found += sorted(glob.glob(os.path.join(base, "librdkafka*.so*")))
    if not found:
        raise SystemExit("librdkafka shared library not found next to confluent_kafka")
    lib = ctypes.CDLL(found[0])
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_int,
    ]
    for name in (
        "rd_kafka_mock_set_group_consumer_session_timeout_ms",
        "rd_kafka_mock_set_group_consumer_heartbeat_interval_ms",
    ):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def main() -> None:
    topic, partitions, session_ms, interval_ms = sys.argv[1], *map(int, sys.argv[2:5])
    lib = library()
    conf = lib.rd_kafka_conf_new()
    err = ctypes.create_string_buffer(512)
    # A handle of its own with a dummy bootstrap, only to own the mock cluster.
    lib.rd_kafka_conf_set(conf, b"bootstrap.servers", b"127.0.0.1:1", err, 512)
    lib.rd_kafka_conf_set(conf, b"log_level", b"0", err, 512)
    rk = lib.rd_kafka_new(0, conf, err, 512)
    if not rk:
        raise SystemExit(f"rd_kafka_new failed: {err.value.decode()}")
    cluster = lib.rd_kafka_mock_cluster_new(rk, 1)
    lib.rd_kafka_mock_topic_create(cluster, topic.encode(), partitions, 1)
    lib.rd_kafka_mock_set_group_consumer_session_timeout_ms(cluster, session_ms)
    lib.rd_kafka_mock_set_group_consumer_heartbeat_interval_ms(cluster, interval_ms)
    print(lib.rd_kafka_mock_cluster_bootstraps(cluster).decode(), flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()

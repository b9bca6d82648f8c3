"""Wire capture: a loopback Kafka proxy that records ConsumerGroupHeartbeat and
OffsetCommit exchanges as a groupcheck trace. Sockets and ``kio`` are used only here."""

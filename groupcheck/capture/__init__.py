"""Wire capture: a loopback Kafka proxy that records a consumer group's exchanges —
ConsumerGroupHeartbeat (KIP-848) or JoinGroup, SyncGroup, Heartbeat and LeaveGroup
(classic), and OffsetCommit — as a groupcheck trace. Sockets and ``kio`` are used only
here."""

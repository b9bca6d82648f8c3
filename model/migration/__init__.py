"""Mixed groups: classic and consumer-protocol members in one group, and the conversions
between a classic and a consumer group (KIP-848 "Online Migration")."""

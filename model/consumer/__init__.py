"""The consumer group protocol (KIP-848 "Consumer Group Protocol"): the
ConsumerGroupHeartbeat coordinator (``model.consumer.coordinator``, Kafka's
``GroupMetadataManager``), the server-side target assignment (``model.consumer.target``),
reconciliation (``model.consumer.reconcile``, ``CurrentAssignmentBuilder``) and the Java
consumer's membership state machine (``model.consumer.client``,
``AbstractMembershipManager``); ``model.consumer.family`` declares the family.

Its records (``Group``, ``Member``, ``Client``, the heartbeat bodies, ``State``) are still in
``model.records``, beside the records every family shares (``Message``, the offset commit
bodies, ``TopicMetadata``); its ``consumer_initial``/``consumer_enabled``/``consumer_step``
are in ``model.consumer.system``, which ``model.system`` dispatches to.
"""

"""groupcheck's reference model of Kafka consumer-group rebalance protocols.

The model is pure: frozen records, pure step functions, no I/O, no randomness and no
clock reads. Everything that explores, replays or renders goes through
``model.system.enabled`` and ``model.system.step``.
"""

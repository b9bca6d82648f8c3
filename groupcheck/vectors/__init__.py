"""Kafka's own unit tests as conformance vectors (issue 41).

``vectors/`` at the repository root holds one JSON file per Kafka test class: each test
case's inputs and expected values, translated as data (``docs/vectors.md``).
``load`` reads and checks those files, ``run`` executes each vector against the model,
``cli`` adds ``groupcheck vectors run`` and ``groupcheck vectors export``.
"""

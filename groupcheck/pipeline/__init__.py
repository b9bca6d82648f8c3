"""The data pipeline: sweeps, large-scale exploration and trace-corpus validation on Spark.

Only this package imports pyspark, and within it only ``groupcheck.pipeline.spark`` does
(import-linter contract in pyproject.toml). Everything a Spark task runs is plain Python
(``grid``, ``runs``, ``corpus``, ``work``, ``store``), so the same functions run in a
plain loop, a process pool or a Spark executor, and are tested without a JVM.

- ``grid``: the grid file (JSON or TOML) and the plan of an exploration sweep.
- ``runs``: one seeded run (a random walk or a Hypothesis run) and its metrics.
- ``corpus``: the plan of a trace-corpus validation and one trace's verdict.
- ``work``: the unit of work of a Spark task: one part of a plan, committed atomically.
- ``store``: the output directory (manifest, parts, completion marker).
- ``spark``: the session factory (local by default, a cluster with ``--master``) and the
  job that fans the parts out.
- ``report``: Parquet tables and an HTML summary with SVG plots.
- ``standalone``: a standalone Spark master and worker on loopback from the pip package.
"""

"""The mutants' scenarios and the depth each is checked clean to.

The scenarios are presets (model/presets.py, "Mutant scenarios"), so any command can name
them; every one runs with the client-side fix for finding F1 (docs/findings.md), so its
baseline — the default rules — violates nothing and a kill means the mutant's rule. The
short names below are the ones the catalogue's first mutants were written against
(groupcheck/mutants/consumer.py); later mutants name their preset directly.
"""

from __future__ import annotations

from model.presets import (
    MUT2,
    MUT2_COMMIT,
    MUT2_COMMIT_EPOCHS,
    MUT2_CRASH,
    MUT2_EPOCH_HISTORY,
    MUT2_FAILOVER,
    MUT2_LOSSY,
    MUT2_REGEX,
    MUT2_REJOIN,
    MUT2_STATIC,
    MUT2_TOPICS,
    MUT3,
)

TWO_ON_TWO = MUT2
THREE_ON_TWO = MUT3
CRASH_TWO = MUT2_CRASH
LOSSY_TWO = MUT2_LOSSY
COMMITTING = MUT2_COMMIT
COMMIT_EPOCHS = MUT2_COMMIT_EPOCHS
EPOCH_HISTORY = MUT2_EPOCH_HISTORY
FAILOVER = MUT2_FAILOVER
REGEX = MUT2_REGEX
STATIC_TWO = MUT2_STATIC
TOPICS_TWO = MUT2_TOPICS
REJOIN = MUT2_REJOIN

BASELINE_DEPTH: dict[str, int] = {
    "MUT2": 19,
    "MUT2_CALLBACKS": 10,
    "MUT2_COMMIT": 13,
    "MUT2_COMMIT_EPOCHS": 13,
    "MUT2_EPOCH_HISTORY": 12,
    "MUT2_CRASH": 15,
    "MUT2_FAILOVER": 11,
    "MUT2_LOSSY": 12,
    "MUT2_OFFLOAD": 12,
    "MUT2_OFFLOAD_STATIC": 13,
    "MUT2_POLL": 8,
    "MUT2_REGEX": 8,
    "MUT2_REJOIN": 12,
    "MUT2_STATIC": 11,
    "MUT2_TOPICS": 8,
    "MUTC_COOPERATIVE": 27,
    "MUTC_LATE_SYNC": 27,
    "MUTC_LEAVE": 15,
    "MUTC_MISSED_ROUND": 37,
    "MUTC_STALL": 15,
    "MUTC_STATIC": 8,
    "MUTC_STICKY": 31,
    "OFFSETS_EXPIRY": 12,
    "CLASSIC_OFFSETS_EXPIRY": 10,
    "MUTC_TWO_PROCESSES": 9,
    "GROUP_DELETION": 8,
    "CLASSIC_GROUP_DELETION": 6,
    "OFFLOAD_DELETION": 12,
    "MIGRATION_DISABLED": 7,
    "MIXED_STATIC": 12,
    "MIXED_STATIC_RESUBSCRIBE": 12,
    "MIXED_STATIC_ASSIGNOR": 9,
    "MIXED_INSTANCE_RENAME": 14,
}
"""Per scenario, the depth to which the default rules are checked clean
(``Mutant.baseline_depth``): at least the length of every kill in that scenario, so each
kill is within the depth where the reference rules violate nothing
(tests/quality/test_mutants.py checks both)."""

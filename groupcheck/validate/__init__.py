"""Validate traces of other implementations (or of the model) against the reference.

Three modes, one module each; the NDJSON modes stream (one pass, memory independent of the
trace's length):

* **conformance** (``conformance``) replays a model trace against the model: every event
  must be an action the model has enabled, every model property must hold;
* **safety** (``safety``) reads what a partial trace observes — heartbeat requests and
  responses — and checks the ``Observed.*`` checks: no partition owned twice, member
  epochs monotone, fencing respected, convergence after a quiet tail; a classic trace
  (``safety_classic``) from its JoinGroup, SyncGroup, LeaveGroup and OffsetCommit
  messages: no partition owned twice, generations monotone, offset commits fenced;
* **itf** (``itf``) checks an ITF state sequence against every model property.

``files`` reads a file (or standard input) with bounded memory and validates it as
``groupcheck validate`` does; ``report`` holds the per-file outcome and its result (ok,
violation, inconclusive, malformed); ``command`` is the ``groupcheck validate`` command.
"""

from groupcheck.validate.conformance import validate_conformance
from groupcheck.validate.files import validate_file, validate_path
from groupcheck.validate.itf import validate_itf
from groupcheck.validate.report import Finding, Report
from groupcheck.validate.safety import OBSERVED_CHECKS, validate_safety
from groupcheck.validate.safety_classic import CLASSIC_OBSERVED_CHECKS

MODES = ("conformance", "safety", "coordinator", "client")

__all__ = [
    "CLASSIC_OBSERVED_CHECKS",
    "MODES",
    "OBSERVED_CHECKS",
    "Finding",
    "Report",
    "validate_conformance",
    "validate_file",
    "validate_itf",
    "validate_path",
    "validate_safety",
]

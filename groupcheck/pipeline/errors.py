"""The pipeline's one error family: bad input or an environment it cannot use.

It is a ``ConfigError``, so the CLI prints it on one line (``groupcheck: error: …``) and
exits with status 2.
"""

from __future__ import annotations

from model.status import ConfigError


class PipelineError(ConfigError):
    """Bad pipeline input (a grid, a corpus, an output directory) or an unusable cluster."""

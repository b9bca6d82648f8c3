"""TLC runner and the cross-check of the Python model against ``tla/KIP848.tla``."""

"""``python -m groupcheck`` runs the command line."""

import sys

from groupcheck.cli import main

sys.exit(main())

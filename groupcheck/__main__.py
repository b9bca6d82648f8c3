"""``python -m groupcheck`` runs the command line."""

import signal
import sys

from groupcheck.signals import Terminated, caught, forget_interrupt, install

# Before the command line's modules are imported: a signal at any moment is one line
# and 143 (SIGTERM) or 130 (Ctrl-C); ``main`` keeps the same handler (issue 42).
install()
try:
    from groupcheck.cli import main

    status = main()
except KeyboardInterrupt:
    forget_interrupt()
    print("groupcheck: interrupted", file=sys.stderr)
    status = 130
except Terminated:
    caught()
    print("groupcheck: terminated", file=sys.stderr)
    status = 128 + signal.SIGTERM
sys.exit(status)

"""Kafka in the loop: a real Apache Kafka broker the project starts (``broker``), the real
Java consumer and librdkafka driven as child processes (``clients``), scenarios run through
the capture proxy and checked (``scenario``, ``run``), and the ``groupcheck kafka`` command
(``cli``). Nothing here is imported by the model."""

from __future__ import annotations

import signal
import sys

from groupcheck.signals import Terminated, caught


def shield() -> None:
    """First thing in code that stops processes (a broker, drivers, the proxy): when Ctrl-C
    or SIGTERM is ending the command, further signals are ignored and the SIGTERM handler's
    fallback (``groupcheck.signals``) is told the signal arrived, so the stopping runs to its
    end before the exit status 130/143. A no-op otherwise."""
    if isinstance(sys.exc_info()[1], Terminated | KeyboardInterrupt):
        caught()
        signal.signal(signal.SIGINT, signal.SIG_IGN)

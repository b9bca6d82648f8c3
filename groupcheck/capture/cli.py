"""``groupcheck capture``: record a Kafka client's group traffic as a trace."""

from __future__ import annotations

import argparse
import math
import signal
import sys
from pathlib import Path
from typing import Any

from groupcheck.argtypes import milliseconds


def register(sub: Any) -> None:
    """Add the ``capture`` command."""
    p = sub.add_parser(
        "capture",
        help="record a consumer group's traffic (either protocol) through a loopback proxy",
        description=(
            "A loopback proxy between Kafka clients and a broker (or librdkafka's mock "
            "cluster). Clients bootstrap from --listen; broker addresses in Metadata and "
            "FindCoordinator responses are rewritten to further proxy ports. Every "
            "ConsumerGroupHeartbeat (KIP-848) or JoinGroup, SyncGroup, Heartbeat and "
            "LeaveGroup (classic) exchange, and every OffsetCommit, is written to --out as "
            "trace events; the first group API seen sets the trace's protocol and the other "
            "protocol's exchanges are skipped with a note (docs/capture.md), unless --mixed "
            "records both. Stop with "
            "Ctrl-C or SIGTERM, or let --duration end it: the connections are closed, the "
            "file gets its final name (it is complete once it has it) and the exit status "
            "is 0. Exit 2 on bad options, or an --out that exists (nothing is replaced) "
            "or cannot be written: checked before anything listens."
        ),
    )
    p.add_argument("--listen", required=True, help="loopback HOST:PORT to accept clients on")
    p.add_argument("--upstream", required=True, help="bootstrap broker HOST:PORT")
    p.add_argument("--out", required=True, help="trace file to write (NDJSON; a new file)")
    p.add_argument(
        "--duration",
        type=duration,
        metavar="SECONDS",
        help="stop after this many seconds (a finite number > 0)",
    )
    for name, what in (
        (
            "session-timeout-ms",
            "the session timeout the coordinator applies (KIP-848: the "
            "group's group.consumer.session.timeout.ms, which is not on the wire; with "
            "--mixed the header's consumer_session_timeout_ms, the classic members' own "
            "coming from their JoinGroup requests)",
        ),
        ("rebalance-timeout-ms", "the members' rebalance timeout, if no request shows it"),
        (
            "heartbeat-interval-ms",
            "the heartbeat interval, if no response shows it "
            "(classic: the clients' heartbeat.interval.ms)",
        ),
    ):
        p.add_argument(
            f"--{name}",
            type=milliseconds,
            metavar="MS",
            help=f"{what}: written to the trace header; what the wire shows wins",
        )
    p.add_argument(
        "--mixed",
        action="store_true",
        help="record both protocols' exchanges in one 'mixed' trace (a group whose members "
        "speak both, KIP-848 online migration; trace format version 3)",
    )
    p.add_argument(
        "--control",
        action="store_true",
        help="read commands from standard input, one a line: 'cut CLIENT_ID' drops all "
        "traffic of the client with that client.id both ways (a network partition), "
        "'heal CLIENT_ID' ends it, 'sever CLIENT_ID' closes its connections",
    )
    p.set_defaults(handler=cmd_capture)


def duration(text: str) -> float:
    """A number of seconds: finite and > 0 (not ``nan``, ``inf`` or negative)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text}")
    return value


def cmd_capture(args: argparse.Namespace) -> int:
    import asyncio

    from groupcheck.capture.proxy import CaptureError, Proxy, TraceWriter, host_port, loopback
    from reports.publish import OutputError, check_new_file

    try:
        host, port = host_port(args.listen, "--listen")
        loopback(host)
        upstream = host_port(args.upstream, "--upstream")
        out = Path(args.out)
        # Before anything listens: a capture never replaces a file (not even an earlier
        # capture), and an unwritable directory is found now, not after clients connected.
        check_new_file(out, "--out")
    except (CaptureError, OutputError) as e:
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2

    def log(message: str) -> None:
        print(f"capture: {message}", file=sys.stderr, flush=True)

    async def run() -> int:
        # Ctrl-C and SIGTERM stop the capture from the start: set before anything listens.
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        options = {
            key: value
            for key in ("session_timeout_ms", "rebalance_timeout_ms", "heartbeat_interval_ms")
            if (value := getattr(args, key)) is not None
        }
        trace = TraceWriter(out, options=options, log=log)
        proxy = Proxy(host, trace, log, mixed=args.mixed)
        try:
            await proxy.listen(upstream, port)
        except OSError as e:
            print(
                f"groupcheck: error: cannot listen on {host}:{port}: {e.strerror or e}",
                file=sys.stderr,
            )
            await proxy.close()
            return 2
        trace.open()
        if args.duration is not None:
            loop.call_later(args.duration, stop.set)
        if args.control:
            controls = loop.create_task(_controls(proxy, log))
        await stop.wait()
        if args.control:
            controls.cancel()
            await asyncio.gather(controls, return_exceptions=True)
        await proxy.close()  # every connection is closed: nothing writes to the trace now
        trace.close()
        log(f"{proxy.exchanges} exchanges written to {trace.path}")
        return 0

    return asyncio.run(run())


async def _controls(proxy: Any, log: Any) -> None:
    """Apply the control commands read from standard input (``--control``) until it ends."""
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except (OSError, ValueError) as e:  # a regular file, a closed stream: no commands
        log(f"control: standard input cannot be read as a stream of commands ({e})")
        return
    while True:
        line = await reader.readline()
        if not line:
            return
        if line.strip():
            log(proxy.control(line.decode("utf-8", "replace")))

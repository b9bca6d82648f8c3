"""The capture command's options and how it stops, with a plain TCP server upstream (no
Kafka needed): bad ``--duration`` values are one-line errors, and Ctrl-C while a client is
connected ends the capture cleanly — the trace complete under its final name, one line on
stderr, exit status 0 (docs/capture.md)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from groupcheck.cli import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("-5", "expected a finite number of seconds > 0, got -5"),
        ("0", "expected a finite number of seconds > 0, got 0"),
        ("nan", "expected a finite number of seconds > 0, got nan"),
        ("inf", "expected a finite number of seconds > 0, got inf"),
        ("-inf", "expected a finite number of seconds > 0, got -inf"),
        ("soon", "expected a number of seconds, got 'soon'"),
    ],
)
def test_bad_duration_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, why: str
) -> None:
    out = tmp_path / "c.ndjson"
    argv = ["capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9", "--out", str(out)]
    assert main([*argv, f"--duration={value}"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"groupcheck capture: argument --duration: {why} (see 'groupcheck --help')\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_with_a_client_connected_stops_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "c.ndjson"
    with socket.socket() as upstream:
        upstream.bind(("127.0.0.1", 0))
        upstream.listen()
        upstream.settimeout(30)
        port = upstream.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        argv = ["capture", "--listen", "127.0.0.1:0", "--upstream", f"127.0.0.1:{port}"]
        proxy = subprocess.Popen(
            [sys.executable, "-m", "groupcheck", *argv, "--out", str(out)],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert proxy.stderr is not None
            first = proxy.stderr.readline()
            match = re.fullmatch(
                rf"capture: listening on 127\.0\.0\.1:(\d+) for 127\.0\.0\.1:{port}\n", first
            )
            assert match, first
            with socket.create_connection(("127.0.0.1", int(match.group(1))), timeout=30) as client:
                # An ApiVersions v0 request: the proxy forwards it, so by the time the
                # upstream reads it the connection is being served.
                request = struct.pack(">hhih", 18, 0, 7, -1)
                client.sendall(struct.pack(">i", len(request)) + request)
                served, _ = upstream.accept()
                with served:
                    served.settimeout(30)
                    got = b""
                    while len(got) < 4 + len(request):
                        chunk = served.recv(64)
                        assert chunk
                        got += chunk
                    assert got == struct.pack(">i", len(request)) + request
                    proxy.send_signal(signal.SIGINT)
                    assert proxy.wait(timeout=30) == 0
                    # The proxy closed the client's connection on its way out.
                    client.settimeout(30)
                    assert client.recv(64) == b""
            rest = proxy.stderr.read()
        finally:
            if proxy.poll() is None:
                proxy.kill()
                proxy.wait()
    assert rest == f"capture: 0 exchanges written to {out}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.ndjson"]  # no .partial left
    (header,) = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(header)["format"] == "groupcheck-trace"


def _start_proxy(out: Path, port: int, *extra: str) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["capture", "--listen", "127.0.0.1:0", "--upstream", f"127.0.0.1:{port}", *extra]
    proxy = subprocess.Popen(
        [sys.executable, "-m", "groupcheck", *argv, "--out", str(out)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proxy.stderr is not None
    match = re.search(r"listening on 127\.0\.0\.1:(\d+)", proxy.stderr.readline())
    assert match
    return proxy, int(match.group(1))


def _forwarded(served: socket.socket, request: bytes) -> None:
    served.settimeout(30)
    got = b""
    while len(got) < 4 + len(request):
        chunk = served.recv(64)
        assert chunk
        got += chunk
    assert got == struct.pack(">i", len(request)) + request


def test_a_broker_closing_its_side_closes_the_clients(tmp_path: Path) -> None:
    """When the broker closes a connection, the proxy closes the client's side: the client
    sees the close at once (and reconnects) instead of sending its next request into a
    connection no broker reads."""
    out = tmp_path / "c.ndjson"
    with socket.socket() as upstream:
        upstream.bind(("127.0.0.1", 0))
        upstream.listen()
        upstream.settimeout(30)
        proxy, listen = _start_proxy(out, upstream.getsockname()[1])
        try:
            with socket.create_connection(("127.0.0.1", listen), timeout=30) as client:
                request = struct.pack(">hhih", 18, 0, 7, -1)
                client.sendall(struct.pack(">i", len(request)) + request)
                served, _ = upstream.accept()
                _forwarded(served, request)
                served.close()  # the broker closes the connection
                client.settimeout(30)
                assert client.recv(64) == b""  # the client's side is closed too
            proxy.send_signal(signal.SIGINT)
            assert proxy.wait(timeout=30) == 0
        finally:
            if proxy.poll() is None:
                proxy.kill()
                proxy.wait()


def test_control_cut_drops_a_clients_traffic_and_heal_restores_it(tmp_path: Path) -> None:
    """``--control``: ``cut ID`` drops the requests of the client with that client.id
    (they never reach the broker, the connection stays open); ``heal ID`` lets the next
    ones through; ``sever ID`` closes its connections."""
    out = tmp_path / "c.ndjson"
    with socket.socket() as upstream:
        upstream.bind(("127.0.0.1", 0))
        upstream.listen()
        upstream.settimeout(30)
        proxy, listen = _start_proxy(out, upstream.getsockname()[1], "--control")
        assert proxy.stdin is not None
        assert proxy.stderr is not None
        try:
            with socket.create_connection(("127.0.0.1", listen), timeout=30) as client:

                def send(corr: int) -> bytes:
                    # ApiVersions v0 with client id "c9"
                    request = struct.pack(">hhih", 18, 0, corr, 2) + b"c9"
                    client.sendall(struct.pack(">i", len(request)) + request)
                    return request

                first = send(1)
                served, _ = upstream.accept()
                _forwarded(served, first)
                proxy.stdin.write("cut c9\n")
                proxy.stdin.flush()
                assert "control: cut c9 (1 connection(s))" in proxy.stderr.readline()
                send(2)  # dropped
                proxy.stdin.write("heal c9\n")
                proxy.stdin.flush()
                assert "control: heal c9" in proxy.stderr.readline()
                third = send(3)
                _forwarded(served, third)  # the next bytes upstream are request 3's
                proxy.stdin.write("sever c9\n")
                proxy.stdin.flush()
                assert "control: sever c9" in proxy.stderr.readline()
                client.settimeout(30)
                assert client.recv(64) == b""
                served.close()
            proxy.send_signal(signal.SIGINT)
            assert proxy.wait(timeout=30) == 0
        finally:
            if proxy.poll() is None:
                proxy.kill()
                proxy.wait()


def test_out_never_replaces_any_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a user's notes, nor a trace — an earlier capture, a counterexample, a trace the
    user's implementation wrote (issue 42): exit 2, one line, before anything listens."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    trace = tmp_path / "earlier.ndjson"
    header = '{"format": "groupcheck-trace", "version": 2, "protocol": "consumer"}\n'
    trace.write_text(header + '{"seq": 1}\n')
    argv = ["capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9"]
    for existing in (notes, trace, tmp_path):
        assert main([*argv, "--out", str(existing), "--duration", "1"]) == 2
        assert capsys.readouterr().err == (
            f"groupcheck: error: --out {existing}: exists; give a new file name\n"
        )
    assert notes.read_text() == "my notes\n"
    assert trace.read_text() == header + '{"seq": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier.ndjson", "notes.txt"]


def test_an_unwritable_out_is_refused_before_listening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from groupcheck.capture import proxy

    if os.geteuid() != 0:
        directory = tmp_path / "ro"
        directory.mkdir()
        directory.chmod(0o555)
    else:
        directory = Path("/sys")  # root is not stopped by permissions; sysfs refuses files

    async def must_not_listen(*args: object) -> None:
        raise AssertionError("listened before checking --out")

    monkeypatch.setattr(proxy.Proxy, "listen", must_not_listen)
    out = directory / "c.ndjson"
    argv = ["capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9"]
    assert main([*argv, "--out", str(out), "--duration", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"groupcheck: error: --out {out}: directory {str(directory)!r} is not writable "
        "(Permission denied)\n"
    )


def test_a_file_appearing_under_the_name_during_a_capture_is_kept(tmp_path: Path) -> None:
    from groupcheck.capture.proxy import TraceWriter

    out = tmp_path / "c.ndjson"
    notes: list[str] = []
    writer = TraceWriter(out, log=notes.append)
    writer.open()
    out.write_text("appeared\n")
    writer.close()
    assert out.read_text() == "appeared\n"
    assert json.loads((tmp_path / "c-1.ndjson").read_text().splitlines()[0])["format"] == (
        "groupcheck-trace"
    )
    assert writer.path == tmp_path / "c-1.ndjson"
    assert notes == [f"{out} appeared during the capture: the trace is {tmp_path / 'c-1.ndjson'}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c-1.ndjson", "c.ndjson"]

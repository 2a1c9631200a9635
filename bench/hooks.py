"""The hook round trip: the real hook command, run as a runtime runs it, against the server.

Each of ``EVENTS`` runs spawns ``python -I -S agent_hooks/hook.py`` (the interpreter the
installer names) with one documented payload on stdin, which posts it to
``/api/hooks/claude`` of the project's server (Daphne on ``config.asgi``, as ``make run``
serves it, on this benchmark's scratch database) and prints the answer: the time is the whole
process, spawn to exit, as the runtime waits for it. Beside it, ``BARE`` runs of a bare
``python -I -S -c pass`` give the interpreter's own start, measured in the same run, so the
ratio says what the command adds. Target: p95 < 100 ms (docs/benchmarks.md, "Hook round trip").

When the server has no hook route yet (its ``POST /api/hooks/claude`` answers 404) the
command is timed against a stub route on loopback instead (``http.server`` answering
``{"output": null, "ack": false}``), and the table says so: the real figure needs the route.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import cycle
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "agent_hooks" / "hook.py"
FIXTURES = ROOT / "tests" / "agent_hooks" / "fixtures" / "claude"
PAYLOADS = ("stop", "user_prompt_submit", "pre_compact", "post_compact", "subagent_start")
"""The documented payloads sent in turn (events whose deadline is the 1 s one)."""
EVENTS = 500
BARE = 100
TARGET_P95 = 0.100
"""Seconds: the hook round trip's p95 target."""


def free_port() -> int:
    """Return a loopback port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def project_server() -> Iterator[str]:
    """Serve the project with Daphne on a free loopback port; yield its URL once it listens."""
    port = free_port()
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    with served([*command, "config.asgi:application"], port, "daphne") as url:
        yield url


@contextlib.contextmanager
def stub_route() -> Iterator[str]:
    """Serve a stand-in hook route (``serve_stub``) in a process of its own, as the real server
    is; yield its URL once it listens."""
    port = free_port()
    command = [sys.executable, "-m", "bench.hooks", "stub", str(port)]
    with served(command, port, "the stub route") as url:
        yield url


@contextlib.contextmanager
def served(command: list[str], port: int, name: str) -> Iterator[str]:
    """Run the server ``command`` listening on ``port``; yield its URL once it listens, stop it
    after. Its output goes to a scratch file (a pipe nobody reads could fill and stall it).

    Raises ``RuntimeError`` (with that output) when it exits or does not listen within 30 s.
    """
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
        try:
            if not listening(port, server):
                log.seek(0)
                raise RuntimeError(f"{name} did not listen: {log.read().decode()[-2000:]}")
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait(timeout=10)


def listening(port: int, server: subprocess.Popen[bytes]) -> bool:
    """Wait until ``port`` accepts connections; False when the server exits or 30 s pass."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return True
        time.sleep(0.1)
    return False


def serve_stub(port: int) -> None:
    """Answer every POST on ``port`` with ``{"output": null, "ack": false}``, until killed."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = b'{"output": null, "ack": false}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def bench_token() -> str:
    """Return a new bearer token of the benchmark's user (created when missing)."""
    from django.contrib.auth.models import User

    from host.auth import issue_token

    user, _ = User.objects.get_or_create(username="hook-bench")
    return issue_token(user)


def route_status(url: str, token: str) -> int:
    """Return the status the server answers a hook POST with (404: no hook route)."""
    request = urllib.request.Request(
        f"{url}/api/hooks/claude",
        data=(FIXTURES / "stop.json").read_bytes(),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "X-Hook-Delivery": str(uuid.uuid4()),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def timed(command: list[str], stdin: bytes) -> tuple[float, bytes]:
    """Run ``command`` with ``stdin``; return (seconds spawn to exit, its stderr)."""
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, check=False)
    return time.perf_counter() - started, done.stderr


def percentiles(samples: list[float]) -> tuple[float, float]:
    """Return (p50, p95) of ``samples`` in milliseconds."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49] * 1e3, cuts[94] * 1e3


def measure(url: str, token_file: Path) -> tuple[list[float], list[float], int]:
    """Time ``BARE`` bare starts and ``EVENTS`` hook runs, interleaved; return both samples and
    how many hook runs printed a skip (a failed delivery)."""
    python = os.path.realpath(sys.executable)
    hook = [python, "-I", "-S", str(HOOK), "--runtime", "claude", "--server", url]
    hook += ["--token-file", str(token_file)]
    bare_command = [python, "-I", "-S", "-c", "pass"]
    payloads = cycle([(FIXTURES / f"{name}.json").read_bytes() for name in PAYLOADS])
    bare, runs, skipped = [], [], 0
    for index in range(EVENTS):
        seconds, stderr = timed(hook, next(payloads))
        runs.append(seconds)
        skipped += b"skipped" in stderr
        if index % (EVENTS // BARE) == 0:
            bare.append(timed(bare_command, b"")[0])
    return bare, runs, skipped


def report(where: str, bare: list[float], runs: list[float], skipped: int) -> None:
    """Print the table of one measurement."""
    bare50, bare95 = percentiles(bare)
    hook50, hook95 = percentiles(runs)
    verdict = "met" if hook95 < TARGET_P95 * 1e3 else "missed"
    print(f"hook round trip ({where}), {len(runs)} events; bare start {len(bare)} runs")
    print(f"{'':24} {'p50 ms':>8} {'p95 ms':>8}")
    print(f"{'python -I -S -c pass':24} {bare50:>8.1f} {bare95:>8.1f}")
    print(f"{'hook command':24} {hook50:>8.1f} {hook95:>8.1f}")
    print(f"hook/bare p50 {hook50 / bare50:.1f}×; target p95 < 100 ms: {verdict}")
    if skipped:
        print(f"!! {skipped} of {len(runs)} runs delivered nothing (the command said 'skipped')")


def run() -> None:
    """Time the round trip against the project's server, or the stub route without one."""
    token = bench_token()
    with tempfile.TemporaryDirectory(prefix="hook-bench-") as scratch:
        token_file = Path(scratch) / "token"
        token_file.write_text(token)
        token_file.chmod(0o600)
        with project_server() as url:
            status = route_status(url, token)
            if status != 404:
                report(f"project server, route answered {status}", *measure(url, token_file))
                return
        with stub_route() as url:
            report("STUB route: the project has no /api/hooks yet", *measure(url, token_file))
    print("(the real figure needs the merged hook route: run again once it is in)")


if __name__ == "__main__" and sys.argv[1:2] == ["stub"]:
    serve_stub(int(sys.argv[2]))

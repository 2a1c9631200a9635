"""A scripted stand-in for the hook route, and a runner for the real hook command.

``ScriptedRoute`` answers each path with a scripted (status, body, delay) and records every
request; when the hook command acknowledges a delivery it also records what the command's
stdout file held at that moment, so a test can tell whether the answer was printed first.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HOOK = Path(__file__).resolve().parents[2] / "agent_hooks" / "hook.py"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture(runtime: str, name: str) -> bytes:
    """Return the bytes of a documented payload fixture (``fixtures/<runtime>/<name>.json``)."""
    return (FIXTURES / runtime / f"{name}.json").read_bytes()


@dataclass
class Scripted:
    """One path's scripted answer: HTTP ``status``, raw ``body``, and ``delay`` in seconds."""

    status: int = 200
    body: bytes = b'{"output": null, "ack": false}'
    delay: float = 0.0


@dataclass
class Recorded:
    """One request the route received."""

    path: str
    headers: dict[str, str]
    body: bytes
    stdout_then: bytes | None = None


@dataclass
class ScriptedRoute:
    """The scripted answers by path, what was received, and the hook's stdout file."""

    answers: dict[str, Scripted] = field(default_factory=dict)
    received: list[Recorded] = field(default_factory=list)
    stdout_file: Path | None = None
    url: str = ""

    def answer(self, path: str, output: Any = None, ack: bool = False, **kw: Any) -> None:
        """Script ``path`` to answer the contract's ``{"output", "ack"}`` (or ``body=``)."""
        body = kw.pop("body", json.dumps({"output": output, "ack": ack}).encode())
        self.answers[path] = Scripted(body=body, **kw)

    def paths(self) -> list[str]:
        """Return the paths received, in order."""
        return [request.path for request in self.received]


@contextmanager
def scripted_route() -> Iterator[ScriptedRoute]:
    """Serve a ``ScriptedRoute`` on a loopback port for the duration of the block."""
    route = ScriptedRoute()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            stdout_then = None
            if self.path.endswith("/ack") and route.stdout_file is not None:
                stdout_then = route.stdout_file.read_bytes()
            route.received.append(Recorded(self.path, dict(self.headers), body, stdout_then))
            scripted = route.answers.get(self.path, Scripted(status=404, body=b"{}"))
            time.sleep(scripted.delay)
            self.send_response(scripted.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(scripted.body)))
            self.end_headers()
            self.wfile.write(scripted.body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    route.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield route
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_server() -> Iterator[str]:
    """A loopback port that accepts connections (in the kernel's backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


def closed_port() -> str:
    """Return the URL of a loopback port nothing listens on."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}"


@dataclass
class Run:
    """One run of the hook command: exit status, stdout, stderr, and seconds it took."""

    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float


def run_hook(
    server: str,
    token_file: Path,
    payload: bytes,
    stdout_file: Path,
    *extra: str,
    runtime: str = "claude",
) -> Run:
    """Run the real hook command as the runtime does (``python -I -S hook.py …``), its stdout
    going to ``stdout_file``."""
    command = [sys.executable, "-I", "-S", str(HOOK), "--runtime", runtime]
    command += ["--server", server, "--token-file", str(token_file), *extra]
    started = time.monotonic()
    with stdout_file.open("wb") as out:
        done = subprocess.run(
            command, input=payload, stdout=out, stderr=subprocess.PIPE, timeout=60
        )
    return Run(done.returncode, stdout_file.read_bytes(), done.stderr, time.monotonic() - started)

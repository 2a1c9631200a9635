"""Private Redis and PostgreSQL servers to cut, pause and restore (for tests and the soak).

Outages are made on servers started here, on loopback ports of the caller's choosing, with
their data under a temporary folder: never on the shared servers. ``PrivateRedis`` keeps no
data on disk, so a restart comes back empty (every channel-layer group forgotten), as a Redis
without persistence does. ``PrivatePostgres`` is a cluster made with ``initdb`` (run as the
``postgres`` user when the caller is root, as PostgreSQL insists); its data survives a restart.
Both stop their server on ``close`` (also when paused).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def listening(port: int) -> bool:
    """Return whether something accepts connections on 127.0.0.1:``port`` now."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def wait_listening(port: int, timeout: float = 30.0) -> None:
    """Return once 127.0.0.1:``port`` accepts a connection; ``RuntimeError`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if listening(port):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class PrivateRedis:
    """A ``redis-server`` of our own on 127.0.0.1:``port`` without persistence."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        """Start the server (empty) and return once it listens.

        Raises ``RuntimeError`` when another server holds the port (it is not ours to cut).
        """
        if listening(self.port):
            raise RuntimeError(f"127.0.0.1:{self.port} is taken: not starting a private Redis")
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", tempfile.gettempdir()]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        wait_listening(self.port)

    def stop(self) -> None:
        """Stop the server (its data is gone)."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        """Stop the server and start it again, empty."""
        self.stop()
        self.start()

    def pause(self) -> None:
        """Stop the server's process (SIGSTOP): connections stay open, nothing is answered."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused server go on (SIGCONT)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def close(self) -> None:
        """Stop the server for good."""
        self.stop()


def _postgres_bin(name: str) -> str:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (/usr/lib/postgresql/*/bin)")
    return str(found[-1])


class PrivatePostgres:
    """A PostgreSQL cluster of our own on 127.0.0.1:``port`` (user postgres, trust)."""

    def __init__(self, port: int, prefix: str) -> None:
        self.port = port
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self.data = self.root / "data"
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_postgres:
            shutil.chown(self.root, "postgres")
        self._run(_postgres_bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")
        self.start()

    def url(self, name: str) -> str:
        """The DATABASE_URL of database ``name`` on this cluster."""
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def _run(self, *command: str) -> None:
        subprocess.run([*self.as_postgres, *command], check=True, capture_output=True)

    def _ctl(self, action: str, *options: str) -> None:
        self._run(_postgres_bin("pg_ctl"), action, "-D", str(self.data), "-w", *options)

    def start(self) -> None:
        """Start the cluster and return once it accepts connections."""
        settings = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        log = str(self.root / "server.log")
        self._ctl("start", "-o", settings, "-l", log)

    def stop(self) -> None:
        """Stop the cluster at once (``-m immediate``: every connection is cut)."""
        self._ctl("stop", "-m", "immediate")

    def create_database(self, name: str) -> None:
        """Create the empty database ``name``."""
        self._run(_postgres_bin("createdb"), "-h", "127.0.0.1", "-p", str(self.port), name)

    def close(self) -> None:
        """Stop the cluster (if running) and delete its files."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

"""Two ways to cut a task worker's database in the middle of a test, never the shared server.

- ``ProxyCut`` (PostgreSQL): the worker reaches the test database through a TCP proxy on
  127.0.0.1 that ``cut()`` breaks — every open connection is reset and new ones are dropped at
  once — until ``restore()``: what a server restart or a network cut does to a client.
- ``InjectedCut`` (any database, the SQLite variant): the worker runs through this file
  (``python tests/host/database_cut.py task_worker OPTIONS…``), which puts Django's
  ``execute_wrapper`` hook in front of every connection of the process; while the file named by
  ``CUT_FILE`` exists, each query fails with the ``OperationalError`` a database that went away
  raises.

Each gives ``command`` (how to start ``task_worker``) and ``env`` (what the worker's environment
needs), ``cut()``, ``restore()`` and ``close()``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class InjectedCut:
    """Queries of the worker fail while ``flag`` exists (see the module)."""

    def __init__(self, flag: Path) -> None:
        self.flag = flag
        self.command = [sys.executable, str(Path(__file__).resolve())]
        self.env = {"CUT_FILE": str(flag)}

    def cut(self) -> None:
        self.flag.touch()

    def restore(self) -> None:
        self.flag.unlink(missing_ok=True)

    def close(self) -> None:
        self.restore()


class ProxyCut:
    """A TCP proxy from a free 127.0.0.1 port to ``host:port`` that can be cut (see the module).

    ``env`` points ``DATABASE_URL`` (``url`` with the proxy's port) at it.
    """

    def __init__(self, url: str, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.command = [sys.executable, str(ROOT / "manage.py")]
        self.env = {"DATABASE_URL": url.replace(f"{host}:{port}", f"127.0.0.1:{self.port}")}
        self._open = threading.Event()
        self._open.set()
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Reset every connection through the proxy and drop new ones until ``restore``."""
        self._open.clear()
        with self._lock:
            for sock in self._sockets:
                _reset(sock)
            self._sockets.clear()

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.cut()
        self.listener.close()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # the listener closed
            while True:
                client, _ = self.listener.accept()
                if not self._open.is_set():
                    _reset(client)
                    continue
                try:
                    upstream = socket.create_connection(self.target)
                except OSError:
                    _reset(client)
                    continue
                with self._lock:
                    self._sockets.update((client, upstream))
                for source, sink in ((client, upstream), (upstream, client)):
                    threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` until either side ends; then shut both down and close them.

    Shut down, not only closed: the other direction's pump is blocked reading one of them, and
    a close alone neither wakes it nor tells the far end (PostgreSQL would keep the session of
    a client that disconnected, and a test database with a session left cannot be dropped).
    """
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    for sock in (source, sink):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()


def _reset(sock: socket.socket) -> None:
    """Break ``sock`` as a vanished server does: wake its readers, close it with a reset."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def cut(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
    """``execute_wrapper``: fail the query while the cut file exists; run it otherwise."""
    from django.db import OperationalError

    if Path(os.environ["CUT_FILE"]).exists():
        raise OperationalError("server closed the connection unexpectedly (cut by the test)")
    return execute(sql, params, many, context)


def wrap(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver: put ``cut`` in front of the new connection's queries."""
    if cut not in connection.execute_wrappers:
        connection.execute_wrappers.append(cut)


def main() -> None:
    """Run the ``manage.py`` command given (``task_worker …``) with its database cuttable."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line
    from django.db.backends.signals import connection_created

    connection_created.connect(wrap)
    execute_from_command_line(["manage.py", *sys.argv[1:]])


if __name__ == "__main__":
    main()

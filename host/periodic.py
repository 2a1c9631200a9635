"""Work repeated in a thread of a long-running process, kept going through database outages.

``Repeating`` runs one function every few seconds beside the process's own work: the heartbeat
of a running turn (``host.turn_lease``) and the task worker's sweep of lost turns
(``host.worker``). ``drop_connections`` is what a thread does after the database went away.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from types import TracebackType

from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)


def drop_connections() -> None:
    """Close every database connection of this thread; a broken one may fail to close."""
    for connection in connections.all(initialized_only=True):
        with contextlib.suppress(DatabaseError):
            connection.close()


class Repeating:
    """Call ``work()`` every ``interval`` seconds in a daemon thread while the block runs.

    ``with Repeating(work, interval, name):`` starts the thread (the first call comes after one
    interval); leaving the block stops it, waiting for a call under way, and the thread closes
    its database connections. A database error in ``work`` is logged and the thread's
    connections dropped; the next call comes at the next interval, so an outage only skips
    calls. Any other error ends the thread and is logged.
    """

    def __init__(self, work: Callable[[], object], interval: float, name: str) -> None:
        self.work = work
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def __enter__(self) -> Repeating:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    self.work()
                except DatabaseError as exc:
                    logger.warning("%s: database unavailable (%s)", self._thread.name, exc)
                    drop_connections()
        except Exception:
            logger.exception("%s stopped", self._thread.name)
        finally:
            drop_connections()

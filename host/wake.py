"""Wake the task worker when a task is queued, instead of letting it sleep its poll interval.

django-tasks-db's worker looks for queued tasks, and sleeps its ``--interval`` when there is
none: a ``/handoff`` would wait for that sleep (0.25 s on average at 0.5 s) before its
attempt started. A queued task now wakes it:

- PostgreSQL: the enqueueing transaction sends ``NOTIFY handoff_tasks`` (delivered when it
  commits: the worker never wakes for a task it cannot see yet); the worker waits on its own
  ``LISTEN`` connection, which costs no query while nothing comes.
- SQLite: once the enqueueing transaction commits, the file ``<database>.wake`` is touched; the
  worker looks at its modification time every ``TICK`` seconds (a ``stat``, not a query).

Either way the worker still looks at the queue once per interval, as before (a notification
lost to a dropped connection costs at most that), and an idle worker runs no more queries than
it did. ``task_queued`` is connected to django-tasks' ``task_enqueued`` signal (``host.apps``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django_tasks_db.backend import DatabaseBackend

logger = logging.getLogger(__name__)

CHANNEL = "handoff_tasks"
"""The PostgreSQL notification channel of queued tasks."""

TICK = 0.005
"""Seconds between looks at the SQLite wake file."""


def task_queued(sender: Any, **kwargs: Any) -> None:
    """``task_enqueued`` receiver: a new task row wakes the workers once the row is committed.
    One ``NOTIFY`` statement on PostgreSQL; nothing but a file's time on SQLite. Sent in the
    enqueuer's transaction: rolled back with it. Tasks of other backends wake nothing."""
    if not (isinstance(sender, type) and issubclass(sender, DatabaseBackend)):
        return
    using = DEFAULT_DB_ALIAS
    database = connections[using]
    if database.vendor == "postgresql":
        with database.cursor() as cursor:
            cursor.execute(f"NOTIFY {CHANNEL}")
        return
    path = wake_file(database)
    if path is not None:
        transaction.on_commit(lambda: _touch(path), using=using)


def wake_file(database: BaseDatabaseWrapper) -> Path | None:
    """Return the SQLite database's wake file, or None for an in-memory database."""
    name = str(database.settings_dict["NAME"])
    if database.vendor != "sqlite" or not name or name == ":memory:" or "mode=memory" in name:
        return None
    return Path(name + ".wake")


def _touch(path: Path) -> None:
    try:
        path.touch()
    except OSError:
        logger.warning("could not touch %s: the task worker finds the task at its next look", path)


def _stamp(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


class Waiter:
    """The worker's wait for a queued task (one per worker thread; see the module).

    ``wait(seconds)`` returns when a task may have been queued since the last wait, or after
    ``seconds``. A failure of the ``LISTEN`` connection (the database restarting) is logged and
    the wait becomes a plain sleep until a later wait connects again.
    """

    def __init__(self, alias: str = DEFAULT_DB_ALIAS) -> None:
        self.database = connections[alias]
        self.listener: psycopg.Connection[Any] | None = None
        path = wake_file(self.database)
        self.path = path
        self.seen = _stamp(path) if path is not None else 0

    def start(self) -> None:
        """Listen now, before the worker's first look at the queue: a task queued between that
        look and the first wait then still wakes it (PostgreSQL keeps the notification for the
        listening connection). A failure is logged; the first wait tries again."""
        if self.database.vendor != "postgresql":
            return
        try:
            self._listener()
        except psycopg.Error as exc:
            logger.warning("task wake-ups unavailable (%s); polling meanwhile", exc)
            self.close()

    def wait(self, seconds: float) -> None:
        """Block until woken or ``seconds`` passed."""
        if self.database.vendor == "postgresql":
            self._listen(seconds)
        elif self.path is not None:
            self._watch(self.path, seconds)
        else:
            time.sleep(seconds)

    def _watch(self, path: Path, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            stamp = _stamp(path)
            if stamp != self.seen:
                self.seen = stamp
                return
            time.sleep(TICK)

    def _listen(self, seconds: float) -> None:
        try:
            listener = self._listener()
            for _ in listener.notifies(timeout=seconds, stop_after=1):
                break
        except psycopg.Error as exc:
            logger.warning("task wake-ups unavailable (%s); polling meanwhile", exc)
            self.close()
            time.sleep(seconds)

    def _listener(self) -> psycopg.Connection[Any]:
        if self.listener is None or self.listener.closed:
            settings = self.database.settings_dict
            self.listener = psycopg.connect(
                dbname=settings["NAME"],
                user=settings["USER"] or None,
                password=settings["PASSWORD"] or None,
                host=settings["HOST"] or None,
                port=settings["PORT"] or None,
                autocommit=True,
            )
            self.listener.execute(f"LISTEN {CHANNEL}")
        return self.listener

    def close(self) -> None:
        """Close the ``LISTEN`` connection, if any."""
        if self.listener is not None:
            with contextlib.suppress(psycopg.Error):
                self.listener.close()
            self.listener = None

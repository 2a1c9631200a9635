"""The loop of ``manage.py follow_sessions``: which logs to read, and when.

Three ways to notice a log that changed, all feeding ``host.importers.live.follow_step``:

- file events from ``watchfiles`` (inotify, FSEvents, ReadDirectoryChangesW) for the folders;
- a ``stat`` of each log active in the last ``ACTIVE_FOR`` seconds every ``POLL`` seconds: an
  append through a descriptor held open (Codex) is seen where file events miss it;
- a full reconcile (every ``*.jsonl`` under the folders) at start and every ``RECONCILE``
  seconds.

A log unchanged for ``QUIET`` seconds is settled once (its open response closed and counted),
as soon as it is due: the loop wakes for it.
Main logs are read before subagent logs, so a subagent finds its main's session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections

from host.folders import followed_folders
from host.importers.live import Step, follow_step, main_log_of

# Seconds between stat polls of the active logs (at most half a second: docs/api.md,
# follow_sessions).
POLL = 0.5
# A log changed within this many seconds is polled.
ACTIVE_FOR = 300.0
# Seconds between full reconciles of the folders.
RECONCILE = 300.0
# Seconds between reads of the folders users switched on (``SwitchedFollower``).
SWITCHES = 5.0
# A log unchanged this many seconds is settled (when it is due, not at the next poll).
QUIET = 2.0
# Milliseconds ``watchfiles`` waits for more changes before it reports some: a file event is
# read 1 to 2 of these after the write.
WATCH_STEP = 10


@dataclass
class Seen:
    """What the follower last saw of a log: identity, size, and when it last changed."""

    device: int = 0
    inode: int = 0
    size: int = -1
    changed: float = 0.0
    settled: bool = True


@dataclass
class Follower:
    """Follows ``folders`` (and single logs) for ``owner``; ``report`` receives each step.

    ``quiet`` is ``QUIET`` (seconds) unless given. ``owner`` is None only for a
    ``SwitchedFollower``, whose folders each have their own.
    """

    folders: list[Path]
    owner: User | None
    report: Callable[[Step], None] = lambda step: None
    quiet: float = QUIET
    seen: dict[Path, Seen] = field(default_factory=dict)

    def logs(self) -> list[Path]:
        """Return every log under the folders, main logs first (``*.jsonl``, recursively)."""
        found: set[Path] = set()
        for folder in self.folders:
            if folder.is_file():
                found.add(folder.absolute())
            elif folder.is_dir():
                found.update(path.absolute() for path in folder.rglob("*.jsonl"))
        return sorted(found, key=lambda path: (main_log_of(path) is not None, str(path)))

    def owner_of(self, path: Path) -> User:
        """Return the user whose sessions the log at ``path`` feeds.

        Raises ``LookupError`` when no user does (no ``owner``)."""
        if self.owner is None:
            raise LookupError(f"No user follows {path}.")
        return self.owner

    def reconcile(self) -> None:
        """Look at every log under the folders; read those that changed, settle quiet ones."""
        self.look(self.logs())

    def poll(self) -> None:
        """Look at the logs that changed in the last ``ACTIVE_FOR`` seconds."""
        now = time.monotonic()
        active = [p for p, seen in self.seen.items() if now - seen.changed < ACTIVE_FOR]
        self.look(sorted(active, key=lambda path: main_log_of(path) is not None))

    def look(self, paths: Iterable[Path]) -> None:
        """Stat each of ``paths``; step those that changed and settle those gone quiet."""
        now = time.monotonic()
        for path in paths:
            try:
                stat = path.stat()
            except FileNotFoundError:
                self.seen.pop(path, None)
                continue
            # First sight: active as long ago as the log was last written.
            since = max(0.0, time.time() - stat.st_mtime)
            seen = self.seen.setdefault(path, Seen(changed=now - since))
            identity = (stat.st_dev, stat.st_ino, stat.st_size)
            if identity != (seen.device, seen.inode, seen.size):
                if seen.size >= 0:  # not the first sight
                    seen.changed = now
                seen.device, seen.inode, seen.size = identity
                step = self.step(path, settle=False)
                seen.settled = step.settled  # a log settled before (a restart) needs no more
                if step.waiting:
                    seen.size = -1  # its main log has no session yet: look again next time
            elif not seen.settled and now - seen.changed >= self.quiet:
                seen.settled = True
                self.step(path, settle=True)

    def next_settle(self) -> float:
        """Return when (``time.monotonic()``) the first log not settled yet will have been
        quiet for ``quiet`` seconds; infinity when every log is settled."""
        due = [seen.changed + self.quiet for seen in self.seen.values() if not seen.settled]
        return min(due, default=math.inf)

    def settle_due(self) -> None:
        """Look at the logs not settled yet that have been quiet for ``quiet`` seconds (each is
        settled, unless it changed meanwhile)."""
        now = time.monotonic()
        due = [
            p
            for p, seen in self.seen.items()
            if not seen.settled and now - seen.changed >= self.quiet
        ]
        self.look(sorted(due, key=lambda path: main_log_of(path) is not None))

    def step(self, path: Path, *, settle: bool) -> Step:
        """Read ``path`` until nothing waits (``Step.more``), reporting each step; return the
        last."""
        while True:
            step = follow_step(path, self.owner_of(path), settle=settle)
            if step.lines or step.failed or step.notes:
                self.report(step)
            if not step.more:
                return step

    def once(self) -> None:
        """Import everything there and settle it: ``--once``."""
        for path in self.logs():
            self.step(path, settle=True)

    async def run(self, *, reconcile_every: float = RECONCILE) -> None:
        """Follow until cancelled: file events, stat polls and reconciles (module docstring)."""
        from watchfiles import awatch

        # Its "N changes detected" line per batch of events says nothing a person needs.
        logging.getLogger("watchfiles.main").setLevel(logging.WARNING)

        await sync_to_async(self.reconcile)()
        last_reconcile = time.monotonic()
        changed: set[Path] = set()
        woken = asyncio.Event()
        last_poll = time.monotonic()

        async def watch(folders: list[Path]) -> None:
            if not folders:
                return
            async for events in awatch(*folders, step=WATCH_STEP, rust_timeout=1000):
                changed.update(Path(path) for _, path in events if path.endswith(".jsonl"))
                woken.set()

        watched = [folder for folder in self.folders if folder.exists()]
        watcher = asyncio.ensure_future(watch(watched))
        try:
            while True:
                # A file event is read at once; without one, the next poll or settle is due.
                wake = min(last_poll + POLL, self.next_settle())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), max(0.0, wake - time.monotonic()))
                woken.clear()
                fresh = sorted(changed, key=lambda path: (main_log_of(path) is not None, path))
                changed.clear()
                await sync_to_async(self.look)(fresh)
                if time.monotonic() - last_poll >= POLL:
                    await sync_to_async(self.poll)()
                    last_poll = time.monotonic()
                elif self.next_settle() <= time.monotonic():
                    await sync_to_async(self.settle_due)()
                if time.monotonic() - last_reconcile >= reconcile_every:
                    await sync_to_async(self.reconcile)()
                    last_reconcile = time.monotonic()
                # A folder that appeared, or one switched on or off: watch what is there now.
                folders = [folder for folder in self.folders if folder.exists()]
                if folders != watched:
                    watcher.cancel()
                    watched = folders
                    watcher = asyncio.ensure_future(watch(watched))
        finally:
            watcher.cancel()
            # The thread that ran the steps keeps its connection otherwise.
            await sync_to_async(connections.close_all)()


@dataclass
class SwitchedFollower(Follower):
    """Follows the folders users switched on in Settings, each for the user who did
    (``host.folders.followed_folders``): ``follow_sessions`` without folders.

    The switches are read again every ``SWITCHES`` seconds (at a poll) and at each reconcile; a
    folder switched on is then reconciled at once, and one switched off is no longer read.
    ``folders`` are the followed ones now; ``owner`` is None (each folder has its own).
    """

    owners: dict[Path, User] = field(default_factory=dict)
    switches_read: float = -SWITCHES

    def read_switches(self) -> bool:
        """Read the switches now; return whether the followed folders changed."""
        self.switches_read = time.monotonic()
        owners = followed_folders()
        if owners == self.owners:
            return False
        self.owners = owners
        self.folders = list(owners)
        self.seen = {path: seen for path, seen in self.seen.items() if self.folder_of(path)}
        return True

    def folder_of(self, path: Path) -> Path | None:
        """Return the followed folder ``path`` is in (None: in none)."""
        return next((folder for folder in self.owners if path.is_relative_to(folder)), None)

    def owner_of(self, path: Path) -> User:
        """Return the user who switched on the folder ``path`` is in (``look`` reads no
        other)."""
        return self.owners[self.folder_of(path) or path]

    def look(self, paths: Iterable[Path]) -> None:
        """``Follower.look`` at those of ``paths`` that are in a followed folder now."""
        super().look(path for path in paths if self.folder_of(path) is not None)

    def reconcile(self) -> None:
        """Read the switches, then look at every log under the followed folders."""
        self.read_switches()
        super().reconcile()

    def once(self) -> None:
        """Read the switches, then import everything there and settle it: ``--once``."""
        self.read_switches()
        super().once()

    def poll(self) -> None:
        """Look at the active logs; every ``SWITCHES`` seconds read the switches first, and
        reconcile when they changed."""
        if time.monotonic() - self.switches_read >= SWITCHES and self.read_switches():
            super().reconcile()
        super().poll()

"""The loop of ``manage.py follow_sessions``: which logs to read, and when.

Three ways to notice a log that changed, all feeding ``host.importers.live.follow_step``:

- file events from ``watchfiles`` (inotify, FSEvents, ReadDirectoryChangesW) for the folders;
- a ``stat`` of each log active in the last ``ACTIVE_FOR`` seconds every ``POLL`` seconds: an
  append through a descriptor held open (Codex) is seen where file events miss it;
- a full reconcile (every ``*.jsonl`` under the folders) at start and every ``RECONCILE``
  seconds.

A log unchanged for ``QUIET`` seconds is settled once (its open response closed and counted).
Main logs are read before subagent logs, so a subagent finds its main's session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connections

from host.importers.live import Step, follow_step, main_log_of

# Seconds between stat polls of the active logs (at most half a second: README).
POLL = 0.5
# A log changed within this many seconds is polled.
ACTIVE_FOR = 300.0
# Seconds between full reconciles of the folders.
RECONCILE = 300.0
# A log unchanged this many seconds is settled.
QUIET = 2.0


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

    ``quiet`` is ``QUIET`` (seconds) unless given.
    """

    folders: list[Path]
    owner: User
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

    def step(self, path: Path, *, settle: bool) -> Step:
        """Read ``path`` until nothing waits (``Step.more``), reporting each step; return the
        last."""
        while True:
            step = follow_step(path, self.owner, settle=settle)
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
        folders = [folder for folder in self.folders if folder.exists()]
        changed: set[Path] = set()
        woken = asyncio.Event()
        last_poll = time.monotonic()

        async def watch() -> None:
            if not folders:
                return
            async for events in awatch(*folders, step=50, rust_timeout=1000):
                changed.update(Path(path) for _, path in events if path.endswith(".jsonl"))
                woken.set()

        watcher = asyncio.ensure_future(watch())
        try:
            while True:
                # A file event is read at once; without one, the next poll is due.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), POLL)
                woken.clear()
                fresh = sorted(changed, key=lambda path: (main_log_of(path) is not None, path))
                changed.clear()
                await sync_to_async(self.look)(fresh)
                if time.monotonic() - last_poll >= POLL:
                    await sync_to_async(self.poll)()
                    last_poll = time.monotonic()
                if time.monotonic() - last_reconcile >= reconcile_every:
                    await sync_to_async(self.reconcile)()
                    last_reconcile = time.monotonic()
        finally:
            watcher.cancel()
            # The thread that ran the steps keeps its connection otherwise.
            await sync_to_async(connections.close_all)()

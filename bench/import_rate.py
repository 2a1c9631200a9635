"""Import rate and memory beside a read-only parse of the same files, in the same run.

Writes synthetic logs of realistic shape (``bench/synthetic_logs.py``: Claude Code 2.x logs and
Codex rollouts, ``MESSAGES`` imported messages or more) into a temporary folder, then measures
on them, one after the other: reading every record (``host.importers.lines.read_lines``, the
parse an import starts with, writing nothing), ``import_transcript`` of each file for a fresh
user (each file one transaction, committed), and the first scan of ``follow_sessions --once``
over the folder for another user (``Follower.once``: each batch committed with its offset),
each in a process forked for it. Each prints
its time (and CPU time: the machine may be shared), its rate and how far its resident memory
peaked above where it started (Linux: ``/proc/self/clear_refs`` resets the peak), beside the
size of the largest file. Then the statements one import of
``samples/claude-code-2.x-epic.jsonl`` issues.
"""

from __future__ import annotations

import multiprocessing
import tempfile
import time
import uuid
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from bench.synthetic_logs import write_logs
from host.importers import import_transcript
from host.importers.following import Follower
from host.importers.lines import read_lines
from host.models import Message

MESSAGES = 20_000
SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "claude-code-2.x-epic.jsonl"
MIB = 1024 * 1024


def _rss(field: str) -> int:
    """Return ``VmRSS`` or ``VmHWM`` (the peak) of this process in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise LookupError(field)


def measured(
    fn: Callable[[], int], before: Callable[[], object] | None = None
) -> tuple[int, float, float, int | None]:
    """Run ``fn`` in a forked process of its own (so each starts from the same memory, with a
    database connection open); return ``(what it counted, seconds, CPU seconds, peak RSS growth
    in bytes)``; ``before`` runs in that process first, outside the measure. The growth is None
    where the peak cannot be reset (no ``/proc``)."""
    connections.close_all()  # the child opens its own
    receiver, sender = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_child, args=(fn, before, sender))
    child.start()
    result = receiver.recv()
    child.join()
    return result


def _child(fn: Callable[[], int], before: Callable[[], object] | None, sender: Connection) -> None:
    connection.ensure_connection()  # its fixed cost is not the import's
    if before is not None:
        before()
    try:
        Path("/proc/self/clear_refs").write_text("5")
        start: int | None = _rss("VmRSS")
    except OSError:
        start = None
    began, cpu = time.perf_counter(), time.process_time()
    counted = fn()
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    sender.send((counted, seconds, cpu, None if start is None else _rss("VmHWM") - start))
    connections.close_all()


def parse(paths: list[Path]) -> int:
    """Read every record of ``paths`` (``read_lines``, writing nothing); return how many."""
    return sum(1 for path in paths for _ in read_lines(path))


def _import(paths: list[Path], owner: User) -> int:
    for path in paths:
        import_transcript(path, owner)
    return Message.objects.filter(session__owner=owner).count()


def first_scan(folder: Path, owner: User) -> int:
    """Import every log under ``folder`` for ``owner`` as ``follow_sessions --once`` does;
    return how many messages the owner has."""
    Follower([folder], owner).once()
    return Message.objects.filter(session__owner=owner).count()


def mib(value: int | None) -> str:
    """Bytes as MiB with one decimal ("n/a" for None)."""
    return "n/a" if value is None else f"{value / MIB:.1f}"


def warm_up() -> None:
    """Import the sample once for a throwaway owner: what any first import of a process loads
    (modules, templates, the channel layer's client) is then loaded before the measure."""
    owner = get_user_model().objects.create_user(f"bench-warm-{uuid.uuid4().hex[:8]}")
    import_transcript(SAMPLE, owner)
    owner.delete()


def run() -> None:
    """Print the parse, import and first-scan rows and their ratios, then the sample's
    statement count."""
    with tempfile.TemporaryDirectory(prefix="handoff-import-") as folder:
        paths = write_logs(Path(folder), MESSAGES)
        sizes = [path.stat().st_size for path in paths]
        print(
            f"import rate: {len(paths)} synthetic logs, {sum(sizes) / MIB:.1f} MiB "
            f"(largest {max(sizes) / MIB:.1f} MiB), {connection.vendor}"
        )
        owner = get_user_model().objects.create_user(f"bench-import-{uuid.uuid4().hex[:8]}")
        follower = get_user_model().objects.create_user(f"bench-follow-{uuid.uuid4().hex[:8]}")
        records, parse_s, parse_cpu, parse_rss = measured(lambda: parse(paths))
        messages, import_s, import_cpu, import_rss = measured(
            lambda: _import(paths, owner), before=warm_up
        )
        scanned, scan_s, scan_cpu, scan_rss = measured(
            lambda: first_scan(Path(folder), follower), before=warm_up
        )
    print(f"{'':>18} {'seconds (CPU)':>14} {'per second':>17} {'RSS peak +MiB':>14}")
    for name, seconds, cpu, count, unit, rss in (
        ("read-only parse", parse_s, parse_cpu, records, "records", parse_rss),
        ("import_transcript", import_s, import_cpu, messages, "messages", import_rss),
        ("first scan", scan_s, scan_cpu, scanned, "messages", scan_rss),
    ):
        print(
            f"{name:>18} {seconds:>6.2f} ({cpu:>5.2f}) {count / seconds:>8.0f} {unit:<8}"
            f" {mib(rss):>14}"
        )
    print(
        f"  {messages} messages from {records} records; import/parse time "
        f"{import_s / parse_s:.1f}x, first scan/parse time {scan_s / parse_s:.1f}x"
    )
    owner.delete()
    follower.delete()
    sample_owner = get_user_model().objects.create_user(f"bench-sample-{uuid.uuid4().hex[:8]}")
    with CaptureQueriesContext(connection) as queries:
        import_transcript(SAMPLE, sample_owner)
    print(f"  statements to import {SAMPLE.name}: {len(queries)}")
    sample_owner.delete()

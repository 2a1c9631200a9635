"""``python -m bench follow``: following live logs (``manage.py follow_sessions``).

Three figures, each from a short run:

- **append → event**: a Codex rollout is appended one call (a few lines) at a time, 200 times,
  while a ``Follower`` runs its loop (file events, 0.5 s stat polls) in a thread; each time is
  from the append to the commit of the follower event that carries it (``event_committed``:
  what every open tab of the conversation is then sent). p50 / p95 in milliseconds.
- **idle CPU**: 1 000 small logs under the folder, last written an hour ago, imported once, then
  the loop left to run for ``IDLE_SECONDS`` with nothing appended: the process's CPU time over
  the wall time (% of a core).
- **first scan**: 20 000 messages of synthetic logs (``bench/synthetic_logs.py``) imported by
  ``Follower.once`` (``follow_sessions --once``: messages/s, CPU seconds, peak RSS growth)
  beside a read-only parse of the same files (``read_lines``: records/s), each in a process of
  its own (``bench/import_rate.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connections

from bench import import_rate
from bench.synthetic_logs import write_logs
from follower.events import event_committed
from host.importers.following import Follower

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
APPENDS = 200
IDLE_FILES = 1000
IDLE_SECONDS = 10.0


def _loop(follower: Follower, stop: threading.Event) -> None:
    """Run ``follower.run()`` in this thread until ``stop`` is set."""

    async def main() -> None:
        task = asyncio.ensure_future(follower.run())
        while not stop.is_set():
            await asyncio.sleep(0.05)
        task.cancel()

    try:
        asyncio.run(main())
    finally:
        connections.close_all()


def append_latency(owner: object) -> list[float]:
    """Return the append → event times (seconds) of ``APPENDS`` appends."""
    folder = Path(tempfile.mkdtemp(prefix="follow-bench-"))
    lines = (SAMPLES / "codex-fork.jsonl").read_bytes().splitlines(keepends=True)
    log = folder / "live.jsonl"
    log.write_bytes(b"".join(lines[:20]))
    committed = threading.Event()
    event_committed.connect(lambda **kwargs: committed.set(), weak=False, dispatch_uid="bench")
    follower = Follower([folder], owner, quiet=0.2)  # type: ignore[arg-type]
    stop = threading.Event()
    thread = threading.Thread(target=_loop, args=(follower, stop))
    thread.start()
    time.sleep(2)
    tail = lines[20:]
    times = []
    with log.open("ab", buffering=0) as out:  # one descriptor held open, as Codex does
        for index in range(APPENDS):
            call = tail[(index * 3) % len(tail) : (index * 3) % len(tail) + 3]
            committed.clear()
            started = time.perf_counter()
            out.write(b"".join(_renamed(line, index) for line in call))
            if committed.wait(5):
                times.append(time.perf_counter() - started)
            time.sleep(0.3)  # past the quiet time: the settle's event is not the next append's
    stop.set()
    thread.join()
    event_committed.disconnect(dispatch_uid="bench")
    return times


def _renamed(line: bytes, index: int) -> bytes:
    """A rollout line made new: its call ids and token totals moved on, so it is not a copy."""
    record = json.loads(line)
    payload = record.get("payload", {})
    if "call_id" in payload:
        payload["call_id"] = f"{payload['call_id']}-{index}"
    info = payload.get("info") if isinstance(payload.get("info"), dict) else None
    if info and isinstance(info.get("total_token_usage"), dict):
        total, step = info["total_token_usage"], 1_000_000 * (index + 1)
        # Every bucket grows (uncached input = input − cached too): the totals never go down.
        for key, times in (("input_tokens", 2), ("cached_input_tokens", 1), ("output_tokens", 1)):
            total[key] = total.get(key, 0) + times * step
    return (json.dumps(record) + "\n").encode()


def idle_cpu(owner: object) -> float:
    """Return the loop's CPU share (% of a core) over ``IDLE_SECONDS`` with 1 000 quiet logs."""
    folder = Path(tempfile.mkdtemp(prefix="follow-idle-"))
    record = (SAMPLES / "codex-fork.jsonl").read_text().splitlines()[0]
    for index in range(IDLE_FILES):
        sub = folder / f"{index % 20:02d}"
        sub.mkdir(exist_ok=True)
        path = sub / f"{index}.jsonl"
        path.write_text(record.replace("019ab3e2", f"{index:08x}") + "\n")
        os.utime(path, (time.time() - 3600, time.time() - 3600))  # quiet for an hour
    Follower([folder], owner).once()  # type: ignore[arg-type]
    follower = Follower([folder], owner)  # type: ignore[arg-type]
    follower.reconcile()  # the loop's own first look, outside the measure
    stop = threading.Event()
    thread = threading.Thread(target=_loop, args=(follower, stop))
    thread.start()
    time.sleep(2)
    cpu, wall = time.process_time(), time.perf_counter()
    time.sleep(IDLE_SECONDS)
    share = (time.process_time() - cpu) / (time.perf_counter() - wall) * 100
    stop.set()
    thread.join()
    return share


def first_scan() -> str:
    """Return the first scan's line: ``import_rate.MESSAGES`` messages of synthetic logs
    imported by ``Follower.once`` for a fresh user beside a read-only parse of the same files,
    each in a process forked for it (``bench.import_rate.measured``: seconds, CPU seconds,
    peak RSS growth)."""
    with tempfile.TemporaryDirectory(prefix="follow-scan-") as folder:
        paths = write_logs(Path(folder), import_rate.MESSAGES)
        largest = max(path.stat().st_size for path in paths) / 2**20
        owner = get_user_model().objects.create_user(f"bench-scan-{uuid.uuid4().hex[:8]}")
        records, parse_s, _, _ = import_rate.measured(lambda: import_rate.parse(paths))
        messages, seconds, cpu, rss = import_rate.measured(
            lambda: import_rate.first_scan(Path(folder), owner), before=import_rate.warm_up
        )
    owner.delete()
    return (
        f"  first scan: {messages} messages at {messages / seconds:.0f} messages/s "
        f"({seconds:.1f} s, {cpu:.1f} s CPU; read-only parse: {records / parse_s:.0f} records/s, "
        f"{seconds / parse_s:.0f}x its time), RSS peak +{import_rate.mib(rss)} MiB "
        f"(largest log {largest:.1f} MiB)"
    )


def load() -> str:
    """The load average over 1, 5 and 15 minutes ("" without ``/proc/loadavg``): the machine
    may be shared, so each figure is printed with it."""
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else ""


def run() -> None:
    """Print the three figures (module docstring), each with the load average after it."""
    # A user of its own: the logs' session ids are the samples', which a run before on the same
    # database (PostgreSQL) imported for its user already.
    owner = get_user_model().objects.create_user(f"bench-follow-{uuid.uuid4().hex[:8]}")
    print(f"follow_sessions (load average {load()})", flush=True)
    print(f"{first_scan()} [load {load()}]", flush=True)
    times = sorted(append_latency(owner))
    if times:
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        print(
            f"  append -> event: {len(times)}/{APPENDS} appends, "
            f"p50 {statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms "
            f"[load {load()}]",
            flush=True,
        )
    share = idle_cpu(owner)
    print(f"  idle, {IDLE_FILES} logs watched: {share:.1f} % of a core [load {load()}]")

"""Transcript import streams: its peak memory vs holding the parsed file, side by side.

For each shared transcript (``../shared/transcripts``; skipped with a notice when absent) this
prints the file size, the peak Python memory of ``import_transcript`` (which reads line by line
and writes through the ORM) and the peak of merely loading every line's JSON at once, the way a
non-streaming importer would, with their ratio. The import runs inside a rolled-back transaction.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

from django.db import transaction

from host.demo import demo_user
from host.importers import import_transcript

TRANSCRIPTS = Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"


def _peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _import_and_roll_back(path: Path) -> None:
    with transaction.atomic():
        import_transcript(path, demo_user())
        transaction.set_rollback(True)


def _load_whole(path: Path) -> list[object]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def run() -> None:
    """Print one row per transcript: size, streaming peak, whole-file peak, ratio (MiB)."""
    print("transcript import: streaming peak memory vs loading the whole file")
    if not TRANSCRIPTS.is_dir():
        print(f"  skipped: {TRANSCRIPTS} is absent")
        return
    print(f"{'file':>36} {'size MiB':>9} {'import MiB':>11} {'whole MiB':>10} {'whole/import':>13}")
    mib = 1024 * 1024
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        streaming = _peak(partial(_import_and_roll_back, path))
        whole = _peak(partial(_load_whole, path))
        print(
            f"{path.stem:>36} {path.stat().st_size / mib:>9.2f} {streaming / mib:>11.2f}"
            f" {whole / mib:>10.2f} {whole / streaming:>13.2f}"
        )

"""Where the tests find the project, its own sample logs and the shared real inputs
(``../shared``).

``SAMPLES`` is the project's ``samples/`` (always there: written for the project, with their
right values in ``samples/README.md``). ``SHARED`` is ``../shared`` beside the checkout; tests
that read it skip with a reason when it is absent. Nothing from it is copied into the project.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SHARED = ROOT.parent / "shared"
TRANSCRIPTS = SHARED / "transcripts"
CASES = SHARED / "cases"

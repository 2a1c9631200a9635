"""Where the tests find the project and the shared real inputs (DESIGN.md, Real input).

``SHARED`` is ``../shared`` beside the checkout; tests that read it skip with a reason when it is
absent. Nothing from it is copied into the project.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TRANSCRIPTS = SHARED / "transcripts"
CASES = SHARED / "cases"

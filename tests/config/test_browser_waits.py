"""Browser tests wait for what they assert, not for a fixed time.

A fixed wait in ``tests/browser`` (``page.wait_for_timeout(ms)``, ``time.sleep(s)``,
``asyncio.sleep(s)``) of more than ``LIMIT_MS`` is allowed only where the test asserts that
nothing happens, marked ``# nothing-happens: <what would have happened by then>`` on its line
or in the comment right above it. Anything else waits for the thing it asserts (Playwright's
``expect``, ``wait_for``, ``wait_for_function``, ``tests/browser/page_waits.py``). A wait whose
length is not a literal counts as too long.
"""

from __future__ import annotations

import ast

from shared_files import ROOT

BROWSER = ROOT / "tests" / "browser"
LIMIT_MS = 200
MARKER = "# nothing-happens:"
WAITS = {"wait_for_timeout": 1, "sleep": 1000}
"""The waiting calls by name, and what their argument is in ms per unit."""


def _marked(lines: list[str], number: int) -> bool:
    """Whether line ``number`` (1-based) or the comment block right above it has ``MARKER``."""
    if MARKER in lines[number - 1]:
        return True
    above = number - 2
    while above >= 0 and lines[above].strip().startswith("#"):
        if MARKER in lines[above]:
            return True
        above -= 1
    return False


def unmarked_waits(source: str) -> list[tuple[int, str]]:
    """Return ``(line, call)`` for each fixed wait over ``LIMIT_MS`` in ``source`` (Python)
    without ``MARKER``; a wait whose length is no literal number counts as over."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        scale = WAITS.get(node.func.attr)
        if scale is None or not node.args:
            continue
        try:
            milliseconds = float(ast.literal_eval(node.args[0])) * scale
        except ValueError:
            milliseconds = float("inf")
        if milliseconds > LIMIT_MS and not _marked(lines, node.lineno):
            found.append((node.lineno, ast.get_source_segment(source, node) or ""))
    return found


def test_browser_tests_wait_for_what_they_assert():
    paths = sorted(BROWSER.rglob("*.py"))
    assert paths, f"no browser tests in {BROWSER}"
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for path in paths
        for line, call in unmarked_waits(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], (
        f"fixed waits over {LIMIT_MS} ms: wait for what the test asserts instead, or mark a "
        f"wait that shows nothing happens with '{MARKER} …'\n" + "\n".join(offenders)
    )


def test_a_long_fixed_wait_counts_unless_marked():
    source = """
page.wait_for_timeout(200)
page.wait_for_timeout(300)
time.sleep(0.1)
time.sleep(0.5)
page.wait_for_timeout(delay)
# nothing-happens: a second save would have landed by now,
# the first took 10 ms.
page.wait_for_timeout(300)
page.wait_for_timeout(300)  # nothing-happens: no navigation
"""
    assert [line for line, _ in unmarked_waits(source)] == [3, 5, 6]

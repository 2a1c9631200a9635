"""What the browser tests wait for instead of a fixed time: a page's own requests answered.

A test that asserts what a click or a key left behind (the stored value, the switch, the
panel) waits for the requests it sent to be answered and their answers swapped in, then
asserts. A fixed wait is only for asserting that nothing happens (marked ``# nothing-happens:``;
``tests/config/test_browser_waits.py`` keeps the others out).
"""

from __future__ import annotations

from typing import Any

HTMX_IDLE = """() => {
  const c = window.htmx && window.htmx.config;
  if (!c) return false;
  const busy = [c.requestClass, c.swappingClass, c.settlingClass];
  return !document.querySelector(busy.map((name) => `.${name}`).join(", "));
}"""
"""True while none of the page's htmx requests is in flight or being swapped in: htmx marks the
element of a request with its request class from the moment it is sent until its answer was
handled, and what it swaps with its swapping and settling classes until the swap settled. It
starts the request queued behind another (``hx-sync`` "queue last") in the task that ends that
one, so no check falls between the two."""


def htmx_settled(page: Any) -> None:
    """Wait until every htmx request ``page`` sent so far was answered and its answer settled.

    Call it after the action that sends them (a click, a key): htmx sends in the handler of the
    action's own event, so the request is out once Playwright's action returned. Raises
    Playwright's ``TimeoutError`` after the page's default timeout.
    """
    page.wait_for_function(HTMX_IDLE)
